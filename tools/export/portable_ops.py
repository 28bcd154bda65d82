"""Writes tools/export/portable_ops.txt: the operators ExecuTorch's portable
kernel library registers, one `namespace::name.overload` a line, sorted,
taken from the pinned wheel's kernels/portable/functions.yaml (`- op:`
entries are aten operators; `- func:` entries carry their own namespace).
docs/operators.md (`etch ops --markdown`) lists the ones etch lacks.

usage: python portable_ops.py [OUT]   (default: portable_ops.txt beside this file)
"""

import importlib.metadata
import importlib.util
import os
import re
import sys


def names(yaml_text):
    out = set()
    for line in yaml_text.splitlines():
        m = re.match(r"- op: (\S+)", line)
        if m:
            out.add("aten::" + m.group(1))
            continue
        m = re.match(r"- func: ([^(]+)\(", line)
        if m:
            name = m.group(1)
            out.add(name if "::" in name else "aten::" + name)
    return sorted(out)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "portable_ops.txt")
    root = os.path.dirname(importlib.util.find_spec("executorch").submodule_search_locations[0] + "/")
    yaml = os.path.join(root, "kernels", "portable", "functions.yaml")
    ops = names(open(yaml).read())
    with open(out, "w") as f:
        version = importlib.metadata.version("executorch")
        f.write(f"# ExecuTorch {version} kernels/portable/functions.yaml"
                " (tools/export/portable_ops.py)\n")
        f.write("\n".join(ops) + "\n")
    print(f"{len(ops)} portable operators -> {out}")


if __name__ == "__main__":
    main()
