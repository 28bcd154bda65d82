#!/usr/bin/env python3
"""Static arithmetic audit of the crates that compute with caller- or
file-supplied numbers: Clippy's `arithmetic_side_effects` (+, -, *, /, %,
<<, >>, negation that may overflow, divide by zero or wrap) counted per file
and held to tools/ci/arith-audit.txt, which lists, per file, how many such
sites were triaged (each one a loop counter or index bounded by a checked
length, or a size under the loader's extent rule (docs/robustness.md),
unless its line carries a comment saying otherwise). A new site in any file
makes this fail: use checked/saturating/wrapping arithmetic (file numbers),
or triage it and raise the file's count in the same commit, saying why in
the commit message. A count that went down is reported so the list is
lowered (the ratchet only tightens).

etch-ffi is not listed: it denies the lint crate-wide (rust/etch-ffi/src/lib.rs).
Not enforced this session: etch-kernels/src/cortex_m/** and
src/ops/cortex_m/** (the DSP/Helium kernels, counted and printed only).

usage: tools/ci/arith-audit.py [--update]
"""

import collections
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIST = os.path.join(ROOT, "tools/ci/arith-audit.txt")
CRATES = ["etch-kernels", "etch-frontend", "etch-kws"]
PREFIXES = tuple(f"rust/{c}/src/" for c in CRATES)
NOT_ENFORCED = ("rust/etch-kernels/src/cortex_m/", "rust/etch-kernels/src/ops/cortex_m/")


def count():
    cmd = ["cargo", "clippy", "--lib", "--message-format=json"]
    for c in CRATES:
        cmd += ["-p", c]
    cmd += ["--", "-W", "clippy::arithmetic_side_effects"]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        sys.exit("clippy failed")
    sites = collections.defaultdict(set)
    for line in out.stdout.splitlines():
        try:
            m = json.loads(line)
        except ValueError:
            continue
        msg = m.get("message") or {}
        if m.get("reason") != "compiler-message" or (msg.get("code") or {}).get("code") != "clippy::arithmetic_side_effects":
            continue
        for s in msg["spans"]:
            if s["is_primary"] and s["file_name"].startswith(PREFIXES):
                sites[s["file_name"]].add((s["line_start"], s["column_start"]))
    return {f: len(v) for f, v in sites.items()}


def main():
    now = count()
    if "--update" in sys.argv:
        with open(LIST, "w") as f:
            f.write("# tools/ci/arith-audit.py: triaged arithmetic_side_effects sites per file\n")
            for name in sorted(now):
                f.write(f"{now[name]:5} {name}\n")
        print(f"{sum(now.values())} sites in {len(now)} files -> {LIST}")
        return
    allowed = {}
    for line in open(LIST):
        if line.startswith("#") or not line.strip():
            continue
        n, name = line.split()
        allowed[name] = int(n)
    grown, shrunk = [], []
    for name in sorted(set(now) | set(allowed)):
        have, may = now.get(name, 0), allowed.get(name, 0)
        if have > may:
            (grown if not name.startswith(NOT_ENFORCED) else shrunk).append(f"{name}: {have} sites, {may} triaged")
        elif have < may:
            shrunk.append(f"{name}: {have} sites, list says {may}")
    enforced = sum(v for k, v in now.items() if not k.startswith(NOT_ENFORCED))
    print(f"arithmetic_side_effects: {sum(now.values())} sites, {enforced} enforced")
    for s in shrunk:
        print("  differs (lower or not enforced; --update):", s)
    if grown:
        print("new unchecked arithmetic (use checked/saturating/wrapping, or triage and --update):")
        for g in grown:
            print("  ", g)
        sys.exit(1)


if __name__ == "__main__":
    main()
