#!/usr/bin/env python3
"""Prints who reaches the panic machinery in a linked ELF: for each function
matching REGEX, the chains of direct callers back to an exported etch_*
function (from `arm-none-eabi-objdump -d -C ELF`). Used by tools/ci/c-api.sh
when the symbol check fails, so the failure names the code to fix."""
import re
import subprocess
import sys

elf, pattern = sys.argv[1], re.compile(sys.argv[2])
dump = subprocess.run(["arm-none-eabi-objdump", "-d", "-C", elf], capture_output=True, text=True).stdout
name_at, callers, current = {}, {}, None
for line in dump.splitlines():
    m = re.match(r"^([0-9a-f]+) <(.*)>:$", line)
    if m:
        current = m.group(2)
        name_at[int(m.group(1), 16)] = current
        continue
    m = re.search(r"\t(?:bl|b\.w|b|blx)(?:\.n|\.w)?\t([0-9a-f]+) <", line)
    if m and current:
        callers.setdefault(int(m.group(1), 16), set()).add(current)
    # Calls through a literal-pool address (Thumb: odd).
    m = re.search(r"\t\.word\t0x([0-9a-f]+)", line)
    if m and current:
        callers.setdefault(int(m.group(1), 16) & ~1, set()).add(current)
by_name = {}
for addr, name in name_at.items():
    by_name.setdefault(name, set()).update(callers.get(addr, ()))
bad = [n for n in by_name if pattern.search(n)]
seen = set()
for b in bad:
    frontier = [[b]]
    for _ in range(6):
        nxt = []
        for chain in frontier:
            for c in sorted(by_name.get(chain[-1], ())):
                if c in chain or pattern.search(c):
                    continue
                if (c, chain[-1]) in seen:
                    continue
                seen.add((c, chain[-1]))
                nxt.append(chain + [c])
        if not nxt:
            break
        frontier = nxt
    for chain in frontier[:4]:
        if len(chain) > 1:
            print("       " + " <- ".join(chain))
