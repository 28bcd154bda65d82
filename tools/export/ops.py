"""Single-operator programs for the portable kernels, exported by the pinned
ExecuTorch (requirements.txt) with references from its own runtime.

usage: python ops.py OUT_DIR [--only NAME_SUBSTRING]

Cases live in one module per kernel family, `ops_<family>.py` beside this
file, each defining `CASES`, a list of `case(...)` (below). For each case this
writes OUT_DIR/<name>.pte, <name>.input<i>.npy, <name>.output<i>.npy, and
merges an entry into OUT_DIR/ops.json:

    {"<name>": {"family": ..., "ops": ["aten::tanh.out", ...], "inputs": n,
                "outputs": n, "rule": "exact" | {"ulp": N} | {"int_diff": N},
                "why": "...", "made_by": ...}}

`rule` is what the Rust test (rust/etch-cli/tests/zoo.rs) holds etch's output
to: "exact" (bytes equal) unless the case says otherwise and `why` says why
(a libm transcendental, or an operator the pip runtime takes from
kernels/optimized: see shared/reference/executorch-portable-kernels.md §0).
Exports are deterministic (seeded inputs, fixed zip timestamps).
"""

import argparse
import importlib
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(__file__))
import pte_facts  # noqa: E402

FAMILIES = ("elementwise", "reduction", "shape", "conv", "cortex_m")


class Fn(torch.nn.Module):
    """A module whose forward is `fn(*inputs)`: one operator as a program."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)


def case(name, module, inputs, rule="exact", why="", quant=None, reference=None, preserve=(), skip_dim_order=False):
    """One single-operator program.

    name:   file stem, e.g. "tanh_f32"
    module: a torch.nn.Module whose forward calls the operator under test
    inputs: tuple of example tensors (seed them: torch.manual_seed in the module file)
    rule:   "exact", {"ulp": N} or {"int_diff": N}
    why:    required unless rule == "exact"
    quant:  None (float program), "int8" (PT2E q/dq with XNNPACKQuantizer, not
            delegated) or "cortex_m" (export_fixtures.cortex_m_program for a
            Cortex-M4, float I/O; the pip runtime has no cortex_m kernels, so
            the reference is ExecuTorch's cortex_m reference ops run eagerly
            over the final graph, as for tests/fixtures/*_cm_*)
    reference: None (the outputs come from the runtime), or (fn, why) with
            fn(*input_arrays) -> [output arrays] a Python model of the portable
            kernel's arithmetic, for the operators the pip runtime takes from
            kernels/optimized (shared/reference/executorch-portable-kernels.md
            §0); why says how the optimized kernel differs
    preserve: operators `to_edge` keeps instead of decomposing them
            (EdgeCompileConfig.preserve_ops: torch.stack, transpose, roll,
            pixel_shuffle, masked_fill, rsub, ...), so the program calls the
            portable kernel of that name
    skip_dim_order: EdgeCompileConfig(_skip_dim_order=True): `clone` stays
            aten::clone instead of dim_order_ops::_clone_dim_order
    quant "cortex_m_nhwc": the cortex_m flow with use_explicit_layout (the
            *_nhwc operators between cortex_m::transpose calls)
    """
    assert rule == "exact" or why, f"{name}: a non-exact rule needs a reason"
    return dict(name=name, module=module, inputs=inputs, rule=rule, why=why, quant=quant, reference=reference,
                preserve=tuple(preserve), skip_dim_order=skip_dim_order)


def export(c):
    from executorch.exir import EdgeCompileConfig, ExecutorchBackendConfig, to_edge
    from executorch.runtime import Runtime

    module = c["module"].eval()
    inputs = tuple(c["inputs"])
    if c["quant"] in ("cortex_m", "cortex_m_nhwc"):
        from export_fixtures import cortex_m_program, reference_run, to_pte

        (x,) = inputs
        # Calibration from its own generator: the same file whether the run
        # exports every case or only this one (--only).
        g = torch.Generator().manual_seed(11)
        calib = [x] + [torch.randn(x.shape, generator=g) for _ in range(3)]
        explicit = c["quant"] == "cortex_m_nhwc"
        edge, ep, _, to_input = cortex_m_program(module, x, calib, "M4", False, explicit)
        x_in = to_input(x)
        out, _ = reference_run(ep, x_in, record_intermediates=False)
        return to_pte(edge, ep), [x_in.contiguous().numpy()], [out.contiguous().numpy()]
    ep = torch.export.export(module, inputs, strict=True)
    if c["quant"] == "int8":
        import executorch.kernels.quantized  # noqa: F401  registers quantized_decomposed out variants
        from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
            XNNPACKQuantizer,
            get_symmetric_quantization_config,
        )
        from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

        gm = ep.module(check_guards=False)
        prepared = prepare_pt2e(gm, XNNPACKQuantizer().set_global(get_symmetric_quantization_config()))
        prepared(*inputs)
        ep = torch.export.export(convert_pt2e(prepared), inputs, strict=True)
    config = EdgeCompileConfig(preserve_ops=list(c["preserve"]), _skip_dim_order=c["skip_dim_order"])
    buf = to_edge(ep, compile_config=config).to_executorch(ExecutorchBackendConfig()).buffer
    outs = Runtime.get().load_program(buf).load_method("forward").execute(list(inputs))
    return buf, [t.numpy() for t in inputs], [o.numpy() for o in outs]


MADE_BY = {
    None: "float program",
    "int8": "portable int8 (PT2E q/dq, XNNPACKQuantizer, not delegated)",
    "cortex_m": "cortex_m flow (CortexMQuantizer, CortexMPassManager, M4), reference: cortex_m reference ops over the final graph",
    "cortex_m_nhwc": "cortex_m flow with explicit layout (CortexMQuantizer(use_explicit_layout=True), CortexMPassManager, M4), reference: cortex_m reference ops over the final graph",
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    manifest_path = os.path.join(args.out, "ops.json")
    manifest = json.load(open(manifest_path)) if os.path.exists(manifest_path) else {}
    for family in FAMILIES:
        try:
            mod = importlib.import_module(f"ops_{family}")
        except ModuleNotFoundError:
            continue
        for c in mod.CASES:
            if args.only not in c["name"]:
                continue
            buf, xs, ys = export(c)
            if c.get("reference") is not None:
                fn, ref_why = c["reference"]
                model = [np.asarray(y) for y in fn(*xs)]
                differ = sum(int((~((m == y) | (np.isnan(m) & np.isnan(y)))).sum()) for m, y in zip(model, ys))
                print(f"{c['name']}: reference from the Python model ({differ} elements differ from the pip runtime)")
                ys = model
            base = os.path.join(args.out, c["name"])
            open(base + ".pte", "wb").write(buf)
            for i, x in enumerate(xs):
                np.save(f"{base}.input{i}.npy", x)
            for i, y in enumerate(ys):
                np.save(f"{base}.output{i}.npy", y)
            facts = pte_facts.facts(bytes(buf))
            ops = sorted(
                o["name"] + ("." + o["overload"] if o["overload"] else "")
                for o in facts["methods"][0]["operators"]
            )
            manifest[c["name"]] = {
                "family": family,
                "ops": ops,
                "inputs": len(xs),
                "outputs": len(ys),
                "rule": c["rule"],
                "why": c["why"],
                "reference": "ExecuTorch runtime" if c.get("reference") is None else "Python model of the portable kernel: " + c["reference"][1],
                "made_by": MADE_BY[c["quant"]]
                + ("; to_edge preserve_ops " + ", ".join(str(o) for o in c["preserve"]) if c["preserve"] else "")
                + ("; to_edge _skip_dim_order" if c["skip_dim_order"] else ""),
            }
            print(f"{c['name']}: {len(buf)} B, ops {ops}", flush=True)
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
