#!/usr/bin/env python3
"""Runtime overhead of one operator call in a bench firmware, in guest
instructions per inference (QEMU, bench/qemu-plugin).

usage: tools/op-overhead.py ELF INSTRUCTION [--machine M] [--cpu C]
                            [--compute REGEX] [--plugin SO]

ELF is a firmware bench/run.sh built (bench/firmware/target/<target>/<triple>/
release/etch-bench, the program embedded in it); INSTRUCTION the index of the
op in the program (the firmware log's `instruction N op` lines). The firmware
is run three times under qemu-system-arm with the counting plugin's
per-address profile restricted to one bucket (`pcbucket=`): the op's own
bucket, the runtime between ops (bucket 0) and the inference start
(bucket 253). Each executed address is charged to the function symbol
holding it (arm-none-eabi-nm).

  op          = instructions charged to the op's bucket (from the observer's
                `before` to its `after`: kernel context, argument decoding,
                tensor views, the kernel)
  compute     = the part of `op` in functions matching --compute (the
                kernel's MAC/requantization routine)
  between     = (runtime between ops + inference start) / kernel calls
  overhead    = op - compute + between

Prints each function's share of the op, then the four numbers.
"""

import argparse
import bisect
import os
import re
import subprocess
import sys
import tempfile

INFER_BUCKET = 253
# The kernel: the compute library's functions (`etch_kernels::cortex_m`, what
# a CMSIS-NN call would run: its own argument checks, MAC loops and
# requantization); the adapter that decodes the op's arguments
# (`etch_kernels::ops`), the runtime and the compiler's memcpy/memset are
# overhead.
KERNEL = r"^<?etch_kernels::cortex_m::"


def symbols(elf):
    out = subprocess.run(["arm-none-eabi-nm", "-n", "-S", "-C", "--defined-only", elf],
                         capture_output=True, text=True, check=True).stdout
    syms = []
    for line in out.splitlines():
        p = line.split(None, 3)
        if len(p) == 4 and p[2] in "tTwW":
            syms.append((int(p[0], 16) & ~1, int(p[1], 16), p[3]))
    syms.sort()
    return syms


def profile(elf, machine, cpu, plugin, bucket, tmp):
    markers = None
    for line in subprocess.run(["arm-none-eabi-nm", elf], capture_output=True, text=True).stdout.splitlines():
        if line.endswith(" ETCH_BENCH_MARKERS"):
            markers = "0x" + line.split()[0]
    if markers is None:
        sys.exit(f"{elf}: no ETCH_BENCH_MARKERS")
    prof = os.path.join(tmp, f"pc{bucket}")
    counts = os.path.join(tmp, f"counts{bucket}")
    log = subprocess.run(
        ["qemu-system-arm", "-M", machine, "-cpu", cpu, "-nographic",
         "-semihosting-config", "enable=on,target=native",
         "-plugin", f"{plugin},markers={markers},n=256,out={counts},pcprof={prof},pcbucket={bucket}",
         "-kernel", elf], capture_output=True, text=True, timeout=900).stdout
    runs = int(re.search(r"^runs (\d+)$", log, re.M).group(1))
    if re.search(r"bit_exact false", log) or not re.search(r"bit_exact true", log):
        sys.exit(f"{elf}: not bit-exact:\n{log}")
    ops = re.findall(r"^instruction (\d+) (\S+)$", log, re.M)
    pcs = {}
    if os.path.exists(prof):
        for line in open(prof):
            a, c = line.split()
            pcs[int(a, 16)] = int(c)
    return runs, dict((int(i), op) for i, op in ops), pcs


def by_symbol(syms, pcs):
    starts = [a for a, _, _ in syms]
    out = {}
    for a, c in pcs.items():
        i = bisect.bisect_right(starts, a) - 1
        name = syms[i][2] if i >= 0 and a < syms[i][0] + max(syms[i][1], 2) else f"?{a:#x}"
        out[name] = out.get(name, 0) + c
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("elf")
    ap.add_argument("instruction", type=int)
    ap.add_argument("--machine", default="mps2-an386")
    ap.add_argument("--cpu", default="cortex-m4")
    ap.add_argument("--compute", default=KERNEL)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--plugin", default=os.path.join(here, "..", "bench", "build", "libetch_count.so"))
    a = ap.parse_args()
    syms = symbols(a.elf)
    compute_re = re.compile(a.compute)
    with tempfile.TemporaryDirectory() as tmp:
        runs, ops, pcs = profile(a.elf, a.machine, a.cpu, a.plugin, 1 + a.instruction, tmp)
        _, _, between0 = profile(a.elf, a.machine, a.cpu, a.plugin, 0, tmp)
        _, _, start = profile(a.elf, a.machine, a.cpu, a.plugin, INFER_BUCKET, tmp)
    op = by_symbol(syms, pcs)
    print(f"instruction {a.instruction} {ops.get(a.instruction, '?')}, per inference ({runs} runs):")
    for name, c in sorted(op.items(), key=lambda x: -x[1]):
        tag = "compute " if compute_re.search(name) else "overhead"
        print(f"  {c / runs:10,.0f}  {tag}  {name}")
    total = sum(op.values()) / runs
    compute = sum(c for n, c in op.items() if compute_re.search(n)) / runs
    between = (sum(between0.values()) + sum(start.values())) / runs
    calls = max(len(ops), 1)
    print(f"op {total:,.0f}  compute {compute:,.0f}  between ops {between:,.0f} / {calls} calls"
          f" = {between / calls:,.0f}")
    print(f"overhead {total - compute + between / calls:,.0f} instructions per call")


if __name__ == "__main__":
    main()
