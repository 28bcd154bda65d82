"""Turns the benchmark logs into bench/results.json and docs/benchmarks.md.

usage: report.py BUILD_DIR REPO_ROOT NAME:TRIPLE:MODEL...
"""

import json
import os
import re
import subprocess
import sys

RUNTIME_BUCKET, LOAD_BUCKET, INFER_BUCKET, IDLE_BUCKET = 0, 254, 253, 255


def parse(build, name):
    log = open(os.path.join(build, f"{name}.log")).read()
    facts = dict(re.findall(r"^(method_state_bytes|arena_bytes|stack_bytes|runs) (\d+)$", log, re.M))
    ops = dict((int(i), op) for i, op in re.findall(r"^instruction (\d+) (\S+)$", log, re.M))
    exact = re.findall(r"^run \d+ bit_exact (\w+)$", log, re.M)
    counts = {}
    for line in open(os.path.join(build, f"{name}.counts")):
        parts = line.split()
        if parts[0] == "bucket":
            counts[int(parts[1])] = int(parts[2])
    runs = int(facts["runs"])
    by_op = {}
    for i, op in ops.items():
        by_op[op] = by_op.get(op, 0) + counts.get(i + 1, 0) // runs
    runtime = (counts.get(RUNTIME_BUCKET, 0) + counts.get(INFER_BUCKET, 0)) // runs
    by_op["(runtime between ops)"] = runtime
    return facts, ops, by_op, exact and all(e == "true" for e in exact), counts


def sizes(build, name):
    core = kernels = model = other = 0
    for line in open(os.path.join(build, f"{name}.nm")):
        parts = line.split(None, 3)
        if len(parts) < 4 or parts[2].lower() not in "tr":
            continue
        size, sym = int(parts[1], 16), parts[3]
        # etch_bench::rt::* are the firmware's #[inline(never)] wrappers of
        # every etch call: LTO inlines Method::load/execute/output into them,
        # so their bodies are runtime code (plus one call/return each).
        if sym.startswith(("etch_pte::", "etch_runtime::", "<etch_pte", "<etch_runtime", "etch_bench::rt::")):
            core += size
        elif sym.startswith(("etch_kernels::", "<etch_kernels")):
            kernels += size
        elif "MODEL" in sym:
            model += size
        else:
            other += size
    return core, kernels, model


def frontend_section(root):
    """The front end's figures, as bench/frontend.sh last wrote them."""
    path = os.path.join(root, "bench", "frontend", "results.txt")
    if not os.path.exists(path):
        return []
    notes, facts = [], {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("#"):
                notes.append(line.lstrip("# "))
            elif line:
                key, value = line.split()
                facts[key] = int(value)
    rows = [
        ("whole 1 s clip → 490 int8 features", "whole_clip_instructions", "instructions"),
        ("streaming: one 20 ms hop", "stream_push_instructions_per_hop", "instructions"),
        ("streaming: features of the last second", "stream_features_instructions", "instructions"),
        ("DS-CNN inference (trained model, `dsp`)", "inference_instructions", "instructions"),
        ("PCM → scores (front end + inference)", "clip_to_scores_instructions", "instructions"),
        ("flash, whole-clip API (.text + .rodata)", None, "bytes"),
        ("flash, streaming API (.text + .rodata)", None, "bytes"),
        ("RAM: front-end scratch", "frontend_scratch_bytes", "bytes"),
        ("RAM: streaming state", "stream_state_bytes", "bytes"),
        ("stack, whole clip / streaming", None, "bytes"),
    ]
    md = ["", "## Audio front end (Cortex-M4F)", ""]
    md += [f"{n}." if not n.endswith(".") else n for n in notes]
    md += ["", "| what | value |", "|---|---:|"]
    for label, key, unit in rows:
        if key is not None:
            value = f"{facts.get(key, 0):,} {unit}"
        elif label.startswith("flash, whole"):
            value = f"{facts.get('whole_clip_flash_text_bytes', 0):,} + {facts.get('whole_clip_flash_rodata_bytes', 0):,} bytes"
        elif label.startswith("flash, stream"):
            value = f"{facts.get('stream_flash_text_bytes', 0):,} + {facts.get('stream_flash_rodata_bytes', 0):,} bytes"
        else:
            value = f"{facts.get('whole_clip_stack_bytes', 0):,} / {facts.get('stream_stack_bytes', 0):,} bytes"
        md.append(f"| {label} | {value} |")
    md += ["", "Command: `bench/frontend.sh` (writes `bench/frontend/results.txt`; this table is copied",
           "from it when `bench/run.sh` writes this file). Per-board figures of the Zephyr",
           "keyword-spotting sample: `samples/keyword_spotting/README.md`.", ""]
    return md


def main():
    build, root = sys.argv[1], sys.argv[2]
    results = []
    rows = []
    for spec in sys.argv[3:]:
        name, triple, model, features = (spec.split(":") + ["-"])[:4]
        facts, ops, by_op, exact, counts = parse(build, name)
        core, kernels, model_bytes = sizes(build, name)
        per_inference = sum(by_op.values())
        results.append({
            "target": name,
            "model": model + ".pte",
            "instructions_per_inference": per_inference,
            "instructions_by_op": by_op,
            "flash_core_bytes": core,
            "flash_kernels_bytes": kernels,
            "method_state_bytes": int(facts["method_state_bytes"]),
            "arena_bytes": int(facts["arena_bytes"]),
            "stack_bytes": int(facts["stack_bytes"]),
            "bit_exact": bool(exact),
        })
        rows.append((name, triple, features, per_inference, by_op, core, kernels, facts, exact))
    with open(os.path.join(root, "bench", "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    md = [
        "# Benchmarks",
        "",
        "Produced by `bench/run.sh` (this file and `bench/results.json` are its output;",
        "regenerate rather than edit). Each target runs the bare-metal firmware",
        "`bench/firmware` under `qemu-system-arm` (Debian's QEMU 7.2): it loads the model",
        "with `Verification::InternalConsistency` into static buffers, runs it 3 times on the",
        "fixture input and compares the output bit for bit with ExecuTorch's reference.",
        "",
        "- **Instructions** are guest instructions counted by our TCG plugin",
        "  (`bench/qemu-plugin/etch_count.c`), one callback per executed instruction, so they",
        "  are exact and deterministic (the same ELF gives the same counts every run). They",
        "  are instructions, not cycles. Per op: the firmware stores to a marker array before",
        "  and after each instruction; the plugin charges instructions to the last marker.",
        "- **Flash** is the summed size of linked `.text`/`.rodata` symbols by crate",
        "  (`arm-none-eabi-nm -S`, types `t`/`r`): core = symbols of `etch_pte` and `etch_runtime`",
        "  plus `etch_bench::rt::*`, the firmware's `#[inline(never)]` wrappers around every etch",
        "  call (`Program::from_bytes`, `method_meta`, the `MethodMeta` queries, `Method::load`,",
        "  `set_input_bytes`, `execute_observed`, `output`): LTO inlines those into their callers,",
        "  so before the wrappers about 9 KB of runtime code was charged to the harness's `main`",
        "  (the core column read about 22.6 KB). The wrappers add one call and return each.",
        "  Kernels = `etch_kernels` symbols (the DS-CNN selection only). Compiler intrinsics",
        "  (`memcpy`), the harness and the semihosting formatting are excluded. Cross-check: the",
        "  `size ... core runtime (probe_core ...)` lines of `tools/ci/check-embedded.sh` link the",
        "  runtime alone (load + execute, no kernels, no harness).",
        "- **Builds**: `bench/firmware` has its own release profile (`opt-level = \"s\"`, `lto = true`,",
        "  `codegen-units = 1`, `panic = \"abort\"`, debug info kept for symbol sizes only). Cortex-M3",
        "  runs the scalar kernels (`thumbv7m-none-eabi`: Thumb-2 `ldrsb`/`mla` loops); Cortex-M4, M7",
        "  and M33 are built with `--features dsp` (`SXTB16`/`SMLAD`/`SMLAxy` loops through stable",
        "  `asm!`). M4 and M7 run the same `thumbv7em-none-eabihf` ELF (no `target-cpu`), so their",
        "  instruction counts agree; M33 uses `thumbv8m.main-none-eabihf` with",
        "  `-C target-cpu=cortex-m33` (bench/firmware/.cargo/config.toml) and the AN505 secure memory",
        "  map (`memory-an505.x`). QEMU machines: mps2-an385 (M3), mps2-an386 (M4), mps2-an500 (M7),",
        "  mps2-an505 (M33).",
        "- **Method state** is `MethodMeta::method_state_bytes()`; **arena** the planned buffer;",
        "  **stack** the painted-stack high-water mark of the whole firmware (harness included).",
        "- **Profiles**: `ETCH_BENCH_PCPROF=1 bench/run.sh` also writes per-instruction-address",
        "  counts (`bench/build/<target>.pcprof`, plugin option `pcprof=`) to find hot loops.",
        "",
        "| target | model | instructions / inference | core flash | kernels flash | method state | arena | stack | bit-exact |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for name, triple, features, per, by_op, core, kernels, facts, exact in rows:
        feat = "" if features == "-" else f", `--features {features}`"
        md.append(
            f"| {name} (`{triple}`{feat}) | {results[0]['model']} | {per:,} | {core:,} B | {kernels:,} B | "
            f"{facts['method_state_bytes']} B | {facts['arena_bytes']} B | {facts['stack_bytes']} B | {'yes' if exact else 'NO'} |"
        )
    for name, triple, features, per, by_op, *_ in rows:
        md += ["", f"## Per-operator instructions, {name}", "", "| operator | instructions / inference | share |", "|---|---:|---:|"]
        for op, n in sorted(by_op.items(), key=lambda kv: -kv[1]):
            md.append(f"| `{op}` | {n:,} | {100.0 * n / max(per, 1):.1f} % |")
    md += ["", "Command: `bench/run.sh` (about a minute after the first build).", ""]
    md += frontend_section(root)
    with open(os.path.join(root, "docs", "benchmarks.md"), "w") as f:
        f.write("\n".join(md))
    print("\n".join(md[md.index("| target | model | instructions / inference | core flash | kernels flash | method state | arena | stack | bit-exact |"):][:2 + len(rows)]))
    if not all(r["bit_exact"] for r in results):
        sys.exit(1)


if __name__ == "__main__":
    main()
