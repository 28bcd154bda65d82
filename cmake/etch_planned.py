#!/usr/bin/env python3
"""The planned buffers of one method of a .pte, as static C arrays, for the
etch Zephyr module (cmake/etch.cmake, CONFIG_ETCH_PLANNED_MEMORY).

Reads ExecutionPlan.non_const_buffer_sizes of the method from the program's
flatbuffer (every offset checked against the file; a malformed file is an
error, never a wrong size) and writes

  etch_planned.h   ETCH_PLANNED_METHOD, ETCH_PLANNED_NUM_BUFFERS,
                   ETCH_PLANNED_BUFFER_<k>_SIZE, ETCH_PLANNED_BYTES and the
                   tables' declarations
  etch_planned.c   one array per planned buffer (memory id k + 1), exactly
                   its size, ETCH_PLANNED_BUFFER_ALIGNMENT-aligned, in the
                   memory region Kconfig (--regions, k-th entry) or the
                   devicetree ("etch,planned-memory" node, k-th phandle of
                   memory-regions, a "zephyr,memory-region" node) names;
                   otherwise ordinary RAM (.bss)

Runs at configure time (the sizes are macros when sources compile).
"""
import argparse
import os
import re
import struct
import sys

MAX_BUFFERS = 8  # ETCH_MAX_PLANNED_BUFFERS


class Bad(Exception):
    pass


class Flat:
    """A checked reader of the few flatbuffer tables needed."""

    def __init__(self, data):
        self.d = data

    def u(self, fmt, at):
        n = struct.calcsize(fmt)
        if at < 0 or at + n > len(self.d):
            raise Bad(f"offset {at} + {n} outside the file ({len(self.d)} B)")
        return struct.unpack_from("<" + fmt, self.d, at)[0]

    def field(self, table, slot):
        """Absolute position of field `slot` of the table at `table`, or None."""
        vtable = table - self.u("i", table)
        vt_len = self.u("H", vtable)
        if vt_len < 4 or vt_len % 2:
            raise Bad(f"vtable at {vtable}: length {vt_len}")
        if 4 + 2 * slot + 2 > vt_len:
            return None
        off = self.u("H", vtable + 4 + 2 * slot)
        if off == 0:
            return None
        if off >= self.u("H", vtable + 2):
            raise Bad(f"table at {table}: field {slot} outside the table")
        return table + off

    def ref(self, at):
        return at + self.u("I", at)

    def vector(self, table, slot, what):
        at = self.field(table, slot)
        if at is None:
            raise Bad(f"{what} missing")
        v = self.ref(at)
        n = self.u("I", v)
        return v + 4, n

    def string(self, table, slot, what):
        start, n = self.vector(table, slot, what)
        if start + n > len(self.d):
            raise Bad(f"{what} outside the file")
        return self.d[start:start + n].decode("utf-8", "replace")


def planned_sizes(data, method):
    f = Flat(data)
    if len(data) < 8 or data[4:6] != b"ET":
        raise Bad("not an ExecuTorch program (no ET.. file identifier)")
    program = f.ref(0)
    plans, n = f.vector(program, 1, "Program.execution_plan")
    names = []
    for i in range(n):
        plan = f.ref(plans + 4 * i)
        name = f.string(plan, 0, "ExecutionPlan.name")
        names.append(name)
        if name != method:
            continue
        start, count = f.vector(plan, 8, "ExecutionPlan.non_const_buffer_sizes")
        sizes = [f.u("q", start + 8 * k) for k in range(count)]
        # Entry 0 is ExecuTorch's reserved (constant) memory id.
        sizes = sizes[1:]
        for k, s in enumerate(sizes):
            if s < 0 or s > 0xFFFFFFFF:
                raise Bad(f"method {method}: planned buffer {k}: size {s}")
        return sizes
    raise Bad(f"no method '{method}' (methods: {', '.join(names) or 'none'})")


def write_if_changed(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        with open(path) as fh:
            if fh.read() == text:
                return
    except OSError:
        pass
    with open(path, "w") as fh:
        fh.write(text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--input", required=True)
    ap.add_argument("--method", required=True)
    ap.add_argument("--regions", default="", help="CONFIG_ETCH_PLANNED_REGIONS")
    ap.add_argument("--header", required=True)
    ap.add_argument("--output", required=True)
    a = ap.parse_args()
    try:
        with open(a.input, "rb") as fh:
            data = fh.read()
        sizes = planned_sizes(data, a.method)
    except (OSError, Bad) as e:
        sys.exit(f"etch: CONFIG_ETCH_PLANNED_MEMORY: {a.input}: {e}")
    if len(sizes) > MAX_BUFFERS:
        sys.exit(f"etch: CONFIG_ETCH_PLANNED_MEMORY: method {a.method} has {len(sizes)} "
                 f"planned buffers, etch takes at most {MAX_BUFFERS}")
    regions = [r.strip() for r in a.regions.split(",")] if a.regions.strip() else []
    for r in regions:
        if r and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", r):
            sys.exit(f"etch: CONFIG_ETCH_PLANNED_REGIONS: '{r}' is not a memory region "
                     "name (the zephyr,memory-region string of a devicetree node)")
    if len(regions) > len(sizes):
        sys.exit(f"etch: CONFIG_ETCH_PLANNED_REGIONS names {len(regions)} regions, method "
                 f"{a.method} of {a.input} has {len(sizes)} planned buffer(s)")
    n = len(sizes)
    rows = max(n, 1)
    src = os.path.basename(a.input)
    h = [f"/* Generated by etch (cmake/etch_planned.py) from {src}, method \"{a.method}\". */",
         "#ifndef ETCH_PLANNED_H", "#define ETCH_PLANNED_H", "#include <stddef.h>",
         "#include <stdint.h>", "",
         f"#define ETCH_PLANNED_METHOD \"{a.method}\"",
         "/* Planned buffers (memory ids 1..n of the program). */",
         f"#define ETCH_PLANNED_NUM_BUFFERS {n}"]
    for k, s in enumerate(sizes):
        h.append(f"#define ETCH_PLANNED_BUFFER_{k}_SIZE {s}")
    h += [f"/* The sum of the buffers' sizes. */",
          f"#define ETCH_PLANNED_BYTES {sum(sizes)}", "",
          "/* The buffers, their sizes and their memory regions (\"\" = ordinary RAM). */",
          f"extern void *const etch_planned_buffers[{rows}];",
          f"extern const size_t etch_planned_sizes[{rows}];",
          f"extern const char *const etch_planned_regions[{rows}];",
          "#endif", ""]
    c = [f"/* Generated by etch (cmake/etch_planned.py) from {src}, method \"{a.method}\". */",
         "#include <zephyr/devicetree.h>",
         "#include <zephyr/linker/devicetree_regions.h>",
         "#include <zephyr/sys/util.h>",
         "#include <zephyr/toolchain.h>",
         "#include <etch.h>",
         "#include <etch_planned.h>",
         "",
         "/* The devicetree's choice: the k-th phandle of memory-regions of the",
         " * etch,planned-memory node, if it is a zephyr,memory-region node. */",
         "#if DT_HAS_COMPAT_STATUS_OKAY(etch_planned_memory)",
         "#define ETCH_PM_NODE DT_COMPAT_GET_ANY_STATUS_OKAY(etch_planned_memory)",
         "#define ETCH_PM_REGION(k) DT_PHANDLE_BY_IDX(ETCH_PM_NODE, memory_regions, k)",
         "#define ETCH_PM_HAS(k) UTIL_AND(DT_PROP_HAS_IDX(ETCH_PM_NODE, memory_regions, k), \\",
         "\t\t\t\tDT_NODE_HAS_PROP(ETCH_PM_REGION(k), zephyr_memory_region))",
         "#else",
         "#define ETCH_PM_HAS(k) 0",
         "#endif",
         ""]
    for k, s in enumerate(sizes):
        decl = f"static uint8_t etch_planned_{k}[{max(s, 1)}] __aligned(ETCH_PLANNED_BUFFER_ALIGNMENT)"
        kc = regions[k] if k < len(regions) else ""
        c.append(f"/* Planned buffer {k} (memory id {k + 1}): {s} B. */")
        if kc:
            c += [f"{decl} __attribute__((section(\"{kc}\"), used));",
                  f"#define ETCH_PM_NAME_{k} \"{kc}\""]
        else:
            c += [f"#if ETCH_PM_HAS({k})",
                  f"{decl} __attribute__((section(LINKER_DT_NODE_REGION_NAME(ETCH_PM_REGION({k}))), used));",
                  f"#define ETCH_PM_NAME_{k} LINKER_DT_NODE_REGION_NAME(ETCH_PM_REGION({k}))",
                  "#else",
                  f"{decl};",
                  f"#define ETCH_PM_NAME_{k} \"\"",
                  "#endif"]
        c.append("")
    if n == 0:
        c += ["void *const etch_planned_buffers[1] = {NULL};",
              "const size_t etch_planned_sizes[1] = {0};",
              "const char *const etch_planned_regions[1] = {\"\"};"]
    else:
        c += ["void *const etch_planned_buffers[] = {",
              *[f"\tetch_planned_{k}," for k in range(n)], "};",
              "const size_t etch_planned_sizes[] = {",
              *[f"\t{s}," for s in sizes], "};",
              "const char *const etch_planned_regions[] = {",
              *[f"\tETCH_PM_NAME_{k}," for k in range(n)], "};"]
    write_if_changed(a.header, "\n".join(h))
    write_if_changed(a.output, "\n".join(c) + "\n")


if __name__ == "__main__":
    main()
