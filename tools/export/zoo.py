"""Exports the model zoo (tests/zoo) with upstream ExecuTorch (pinned in
requirements.txt).

usage: python zoo.py OUT_DIR [--only SUBSTRING] [--intermediates]

Every architecture of zoo_models.ARCHS goes through three paths:
  f32   plain float program; reference from ExecuTorch's runtime;
  int8  portable int8: PT2E q/dq with XNNPACKQuantizer (per-channel), no
        delegate; reference from ExecuTorch's runtime;
  cm    backends/cortex_m flow, cpu M33 (DSP encoding), float I/O: cortex_m ops
        where the flow lowers, portable q/dq fall-backs elsewhere; reference
        from ExecuTorch's cortex_m reference ops run eagerly over the final
        graph (the fall-backs run as torch eager ops there).
The export functions are export_fixtures.py's. Writes <model>_<path>.{pte,
input0.npy,output0.npy,expected.json} (+ .intermediates.npz for cm with
--intermediates) and zoo.json (the programs, their operators and comparison
rules; rules already in OUT_DIR/zoo.json are kept), and lists the programs that
failed to export in zoo.json's "failed".
"""

import argparse
import json
import os
import sys
import traceback

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import export_fixtures as ef  # noqa: E402
import models  # noqa: E402
import pte_facts  # noqa: E402
import zoo_models  # noqa: E402

PATHS = ("f32", "int8", "cm")
CM_CPU = "M33"

# Operators the pip wheel's runtime takes from kernels/optimized instead of the
# portable kernels (executorch-portable-kernels.md §0): a reference output that
# went through one of them is not portable arithmetic.
OPTIMIZED_IN_PIP_RUNTIME = {
    "aten::" + n
    for n in ("add", "sub", "mul", "div", "exp", "gelu", "elu", "le", "where", "sum",
              "native_layer_norm", "_log_softmax", "mm", "bmm", "linear")
}

HOW = {
    "f32": "float32, no quantization, no delegate",
    "int8": "portable int8: PT2E q/dq, XNNPACKQuantizer per-channel, no delegate",
    "cm": f"cortex_m flow: CortexMQuantizer + CortexMPassManager, cpu {CM_CPU} (DSP), float I/O",
}
REFERENCE = {
    "f32": "executorch.runtime (pip wheel: portable kernels + the optimized ones listed)",
    "int8": "executorch.runtime (pip wheel: portable + quantized kernels + the optimized ones listed)",
    "cm": "cortex_m reference ops (backends/cortex_m/ops/operators.py) run eagerly over the final graph; "
          "non-cortex_m nodes run as torch eager ops",
}


def export(arch, path, cm_cpu=CM_CPU, int8_io=False):
    """(pte bytes, input, reference output, intermediates or None); `cm_cpu`:
    the cortex_m flow's target CPU (tools/export/mlperf_tiny.py: M55);
    `int8_io` (cm only): int8 input and output as the DS-CNN fixture
    (QuantizeInputs/QuantizeOutputs; the input quantized as the kernels do)."""
    model, shape = zoo_models.make(arch)
    x = models.fixed_input(shape)
    if path == "f32":
        buf = ef.float_program(model, x)
        return buf, x.numpy(), ef.runtime_output(buf, x).numpy(), None
    if path == "int8":
        buf = ef.portable_int8_program(model, x, models.calibration(shape), per_channel=True)
        return buf, x.numpy(), ef.runtime_output(buf, x).numpy(), None
    edge, ep, _, to_input = ef.cortex_m_program(model, x, models.calibration(shape), cm_cpu, int8_io=int8_io)
    x_in = to_input(x)
    out, record = ef.reference_run(ep, x_in)
    buf = ef.to_pte(edge, ep)
    return buf, x_in.contiguous().numpy(), out.contiguous().numpy(), record


def op_names(facts):
    return [f"{o['name']}.{o['overload']}" if o["overload"] else o["name"]
            for o in facts["methods"][0]["operators"]]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--only", default="")
    ap.add_argument("--intermediates", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    index_path = os.path.join(args.out, "zoo.json")
    old, old_failed = {}, []
    if os.path.exists(index_path):
        prev = json.load(open(index_path))
        old = {p["name"]: p for p in prev["programs"]}
        old_failed = prev.get("failed", [])
    programs, failed = [], []
    for arch, (_, _, what) in zoo_models.ARCHS.items():
        for path in PATHS:
            name = f"{arch}_{path}"
            if args.only not in name:
                continue
            try:
                buf, x, y, inter = export(arch, path)
            except Exception as e:  # an architecture the flow cannot export: recorded, not fatal
                msg = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
                failed.append({"name": name, "model": arch, "path": path, "error": msg[:300]})
                print(f"{name}: FAILED {msg[:200]}", flush=True)
                traceback.print_exc(limit=3, file=sys.stderr)
                continue
            base = os.path.join(args.out, name)
            open(base + ".pte", "wb").write(buf)
            np.save(base + ".input0.npy", x)
            np.save(base + ".output0.npy", y)
            if inter is not None and args.intermediates:
                ef.save_npz_deterministic(base + ".intermediates.npz", inter)
            facts = pte_facts.facts(bytes(buf))
            ops = op_names(facts)
            optimized = sorted({o for o in ops if o.split(".")[0] in OPTIMIZED_IN_PIP_RUNTIME}) if path != "cm" else []
            facts["made_by"] = HOW[path]
            facts["reference"] = REFERENCE[path]
            facts["reference_optimized_ops"] = optimized
            with open(base + ".expected.json", "w") as f:
                json.dump(facts, f, indent=1, sort_keys=True)
            prev = old.get(name, {})
            programs.append({
                "name": name,
                "model": arch,
                "path": path,
                "description": what,
                "made_by": HOW[path],
                "reference": REFERENCE[path],
                "bytes": len(buf),
                "arena_bytes": sum(facts["methods"][0]["planned_buffers"]),
                "input": {"dtype": str(x.dtype), "shape": list(x.shape)},
                "output": {"dtype": str(y.dtype), "shape": list(y.shape)},
                "ops": ops,
                "reference_optimized_ops": optimized,
                "rule": prev.get("rule", "exact"),
                "why": prev.get("why", ""),
            })
            print(f"{name}: {len(buf)} B, {len(ops)} ops: {' '.join(ops)}", flush=True)
    if args.only:  # a partial run updates its programs and keeps the others
        keep = {p["name"]: p for p in old.values() if args.only not in p["name"]}
        programs = sorted(list(keep.values()) + programs, key=lambda p: order(p["name"]))
        failed = sorted([f for f in old_failed if args.only not in f["name"]] + failed, key=lambda f: order(f["name"]))
    with open(index_path, "w") as f:
        json.dump({"programs": programs, "failed": failed}, f, indent=1)
        f.write("\n")


def order(name):
    keys = [f"{a}_{p}" for a in zoo_models.ARCHS for p in PATHS]
    return keys.index(name) if name in keys else len(keys)


if __name__ == "__main__":
    main()
