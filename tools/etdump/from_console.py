#!/usr/bin/env python3
"""Turns a captured console log back into ETDump files.

  from_console.py LOG [-o OUT.etdp]      (LOG '-' = stdin)

Firmware built with CONFIG_ETCH_ETDUMP prints a recording with
etch_zephyr_etdump_print() (zephyr/src/etch_etdump_console.c):

  etch-etdump: begin bytes=1056 crc32=0x1c291ca3 ticks_per_s=12000000
  etch-etdump: FAAAAAAAAABFRDAw...
  etch-etdump: end

Anything before the "etch-etdump: " tag on a line (timestamps, log
prefixes) and any line without it is ignored. Each block's length and CRC-32
are checked. One block: written to OUT (default etdump.etdp); several:
OUT with -1, -2, ... before the suffix. Prints one line per file with the
clock's ticks per second (the Inspector wants the time unit: cycles at that
rate). Exit 1 when no complete, intact block was found. Standard library
only.
"""
import argparse
import base64
import binascii
import pathlib
import re
import sys
import zlib

TAG = "etch-etdump: "
BEGIN = re.compile(r"^begin bytes=(\d+) crc32=0x([0-9a-fA-F]{8}) ticks_per_s=(\d+)$")


class Block:
    def __init__(self, size, crc, ticks_per_s, line):
        self.size, self.crc, self.ticks_per_s, self.line = size, crc, ticks_per_s, line
        self.text = []


def parse(lines):
    """(blocks, errors): complete, checked blocks as (bytes, ticks_per_s)."""
    blocks, errors, cur = [], [], None
    for n, raw in enumerate(lines, 1):
        at = raw.find(TAG)
        if at < 0:
            continue
        body = raw[at + len(TAG):].strip()
        m = BEGIN.match(body)
        if m:
            if cur is not None:
                errors.append(f"line {cur.line}: block without end (new begin at line {n})")
            cur = Block(int(m.group(1)), int(m.group(2), 16), int(m.group(3)), n)
        elif body == "end":
            if cur is None:
                errors.append(f"line {n}: end without begin")
                continue
            try:
                data = base64.b64decode("".join(cur.text), validate=True)
            except (binascii.Error, ValueError) as e:
                errors.append(f"line {cur.line}: bad base64: {e}")
                cur = None
                continue
            if len(data) != cur.size:
                errors.append(f"line {cur.line}: {len(data)} bytes, the marker says {cur.size}")
            elif zlib.crc32(data) != cur.crc:
                errors.append(f"line {cur.line}: CRC-32 {zlib.crc32(data):#010x}, the marker says {cur.crc:#010x}")
            else:
                blocks.append((data, cur.ticks_per_s))
            cur = None
        elif cur is not None:
            cur.text.append(body)
    if cur is not None:
        errors.append(f"line {cur.line}: block without end")
    return blocks, errors


def out_paths(out, n):
    if n == 1:
        return [out]
    return [out.with_name(f"{out.stem}-{i}{out.suffix}") for i in range(1, n + 1)]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log", help="captured console output ('-' for stdin)")
    ap.add_argument("-o", "--out", default="etdump.etdp", help="output file (default etdump.etdp)")
    args = ap.parse_args(argv)
    if args.log == "-":
        text = sys.stdin.read()
    else:
        text = pathlib.Path(args.log).read_text(errors="replace")
    blocks, errors = parse(text.splitlines())
    for e in errors:
        print(f"from_console: {e}", file=sys.stderr)
    if not blocks:
        print("from_console: no complete ETDump block in the log", file=sys.stderr)
        return 1
    for path, (data, tps) in zip(out_paths(pathlib.Path(args.out), len(blocks)), blocks):
        path.write_bytes(data)
        print(f"{path}: {len(data)} bytes, clock {tps} ticks/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
