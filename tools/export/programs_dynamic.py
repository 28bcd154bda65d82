"""Exports the dynamic-shape and dim-order programs of the program-features
zoo (tests/programs) with upstream ExecuTorch (pinned in requirements.txt).

usage: python programs_dynamic.py OUT_DIR [--only SUBSTRING]

Programs (tests/programs convention: <name>.pte, <name>.<method>.steps/ with
<k>.input<i>.npy and reference <k>.output<j>.npy for executions k = 0, 1, ...
of ONE loaded method, and <name>.json):
  seq_dyn_f32   a sequence model exported with a bounded dynamic length
                (Dim("T", min=1, max=32)): conv1d over T, two linears, a
                ones(1, T, 1) * (T - 1) term (aten::full of run-time sizes,
                executorch_prim::sub.Scalar), a flatten to T * 4
                (executorch_prim::mul.Scalar, et_view) and a mean over T; run
                at T = 32, 5, 17, 1. aten::sym_size feeds them all.
  seq_dyn_int8  the same through PT2E q/dq (XNNPACKQuantizer), if it exports.
  seq_ops_dyn_f32  an attention read-out over the same dynamic T: cat of a
                learned token, layer_norm, slices, softmax over T (kernels
                that resize their outputs), sizes from T // 2, T % 3 and
                -(T // 2) (executorch_prim floordiv, mod, neg).
  seq_prim_dyn_f32  the executorch_prim scalar ops the exporter emits for
                Python arithmetic and comparisons on the dynamic T: T / 4
                as a fill value (truediv: a Double in a value the emitter
                declares an Int), round(T / 2), math.ceil(T / 4),
                int(T / 3) + 1 as sizes (round, ceil, trunc; round(1 / 2) = 0
                makes an empty output at T = 1) and torch.cond on T > 8,
                T < 3, T >= 17, T <= 5 (gt, lt, ge, le).
  seq_symops_dyn_f32  the other scalar ops on T, which the pinned exporter
                emits only with the Edge verifier off
                (EdgeCompileConfig(_check_ir_validity=False): by default
                to_edge refuses torch.sym_float, torch.sym_max, sym_min,
                sym_not and builtin max on sizes, which stay Python
                functions in the graph: AssertionError in
                exir/verification/verifier.py, `assert op.__name__ in
                ("alloc",)`): sym_float(T) * 0.5 as a fill value,
                sym_max(T, 8) and sym_min(T, 8) as sizes, torch.cond on
                sym_not(T > 8).
  linear_dyn_f32  aten::linear kept whole (EdgeCompileConfig(preserve_ops=
                [aten.linear.default]); by default the portable flow
                decomposes it into permute_copy + addmm) over the dynamic T:
                its output resized to [1, T, 4].
  dimorder_f32  a small channels-last convolution net (portable, float)
                whose input [1, 1, 32, 32] has dim order [0, 2, 1, 3] and
                whose first aten::convolution writes a channels-last output:
                the dim-order wall (size-one dims made dim orders differ).
  dimorder_int8 the same through PT2E q/dq (XNNPACKQuantizer): the portable
                int8 pattern (dequantize, aten::convolution, quantize).
  dimorder_cm   the same net through the cortex_m flow (its convolutions
                lower to cortex_m ops; the input keeps [0, 2, 1, 3]).
References: ExecuTorch's runtime (executorch.runtime), one loaded method
executed step after step, for programs with portable ops only; the eager
graph (cortex_m reference ops) for the cortex_m flow. ExecuTorch's portable
convolution refuses the [0, 2, 1, 3] input (it compares dim-order lists:
`tensor_is_default_or_channels_last_dim_order`), so the dimorder_f32/int8
references come from the runtime running the same program with every
[0, 2, 1, 3] dim order rewritten as [0, 2, 3, 1], which describes the same
memory for those tensors (their dimension 1 has size 1; checked).
"""

import json
import os
import sys

import numpy as np
import torch
from torch.export import Dim

sys.path.insert(0, os.path.dirname(__file__))
import pte_facts  # noqa: E402

LENGTHS = (32, 5, 17, 1)
SEED = 23


class SeqModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv1d(8, 8, 3, padding=1)
        self.l1 = torch.nn.Linear(8, 16)
        self.l2 = torch.nn.Linear(16, 4)

    def forward(self, x):  # x [1, T, 8]
        y = self.conv(x.transpose(1, 2)).transpose(1, 2)
        h = torch.relu(self.l1(y + x))
        o = self.l2(h)
        t = o.shape[1]
        # aten::full of run-time sizes, executorch_prim::sub.Scalar on T.
        o = o + torch.ones(1, t, 1) * (t - 1) * 0.125
        flat = o.reshape(1, t * 4)  # executorch_prim::mul.Scalar, et_view
        return flat * 2.0, o.mean(dim=1)


class SeqOps(torch.nn.Module):
    """An attention read-out over a dynamic length: a learned token
    concatenated in front (aten::cat), layer_norm, slices, linears, softmax
    over T, and outputs whose sizes and values come from T // 2, T % 3 and
    -(T // 2) (executorch_prim::floordiv, mod, neg.Scalar)."""

    def __init__(self):
        super().__init__()
        self.tok = torch.nn.Parameter(torch.randn(1, 1, 8))
        self.norm = torch.nn.LayerNorm(8)
        self.q = torch.nn.Linear(8, 8)
        self.k = torch.nn.Linear(8, 8)

    def forward(self, x):  # x [1, T, 8]
        t = x.shape[1]
        h = self.norm(torch.cat([self.tok, x], dim=1))  # [1, T + 1, 8]
        q = self.q(h[:, :1])  # [1, 1, 8]
        k = self.k(h[:, 1:])  # [1, T, 8]
        a = torch.softmax(torch.bmm(q, k.transpose(1, 2)) * 0.35, dim=-1)  # [1, 1, T]
        ctx = torch.bmm(a, h[:, 1:])  # [1, 1, 8]
        sizes = torch.full((1, t // 2 + 1), 1.0) * (t % 3 - t)
        neg = torch.full((1, 2), -(t // 2))
        return ctx, sizes, neg


class SeqPrim(torch.nn.Module):
    """Sizes and values from the executorch_prim scalar ops on T: truediv
    (a Double fill value), round/ceil/trunc (sizes), gt/lt/ge/le
    (torch.cond predicates)."""

    def forward(self, x):  # x [1, T, 8]
        import math

        t = x.shape[1]
        quarter = torch.full((1, 2), t / 4)
        half = torch.full((1, round(t / 2)), 0.5)
        ceil = torch.full((1, math.ceil(t / 4)), 1.5)
        trunc = torch.full((1, int(t / 3) + 1), 2.0)
        gt = torch.cond(t > 8, lambda x: x * 2.0, lambda x: x - 1.0, (x,))
        lt = torch.cond(t < 3, lambda x: x + 0.5, lambda x: x * 0.25, (x,))
        ge = torch.cond(t >= 17, lambda x: x - 2.0, lambda x: x * 3.0, (x,))
        le = torch.cond(t <= 5, lambda x: x * -1.0, lambda x: x + 4.0, (x,))
        return quarter, half, ceil, trunc, gt, lt, ge, le


def seq_prim_f32():
    from executorch.exir import ExecutorchBackendConfig, to_edge

    m = SeqPrim().eval()
    ep = torch.export.export(m, step_inputs(0), dynamic_shapes=dynamic_shapes(), strict=True)
    buf = to_edge(ep).to_executorch(ExecutorchBackendConfig()).buffer
    inputs = [step_inputs(k) for k in range(len(LENGTHS))]
    return buf, inputs, runtime_steps(buf, inputs)


class SeqSymOps(torch.nn.Module):
    """sym_float, sym_max, sym_min and sym_not on T."""

    def forward(self, x):  # x [1, T, 8]
        t = x.shape[1]
        half = torch.full((1, 2), torch.sym_float(t) * 0.5)
        most = torch.full((1, torch.sym_max(t, 8)), 1.0)
        least = torch.full((1, torch.sym_min(t, 8)), 2.0)
        y = torch.cond(torch.sym_not(t > 8), lambda x: x * 2.0, lambda x: x - 1.0, (x,))
        return half, most, least, y


def seq_symops_f32():
    from executorch.exir import EdgeCompileConfig, ExecutorchBackendConfig, to_edge

    m = SeqSymOps().eval()
    ep = torch.export.export(m, step_inputs(0), dynamic_shapes=dynamic_shapes(), strict=True)
    edge = to_edge(ep, compile_config=EdgeCompileConfig(_check_ir_validity=False))
    buf = edge.to_executorch(ExecutorchBackendConfig()).buffer
    inputs = [step_inputs(k) for k in range(len(LENGTHS))]
    return buf, inputs, runtime_steps(buf, inputs)


class SeqLinear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l = torch.nn.Linear(8, 4)

    def forward(self, x):  # x [1, T, 8]
        return torch.relu(self.l(x))


def linear_f32():
    from executorch.exir import EdgeCompileConfig, ExecutorchBackendConfig, to_edge

    torch.manual_seed(SEED)
    m = SeqLinear().eval()
    ep = torch.export.export(m, step_inputs(0), dynamic_shapes=dynamic_shapes(), strict=True)
    edge = to_edge(ep, compile_config=EdgeCompileConfig(preserve_ops=[torch.ops.aten.linear.default]))
    buf = edge.to_executorch(ExecutorchBackendConfig()).buffer
    inputs = [step_inputs(k) for k in range(len(LENGTHS))]
    return buf, inputs, runtime_steps(buf, inputs)


def seq_ops_f32():
    from executorch.exir import ExecutorchBackendConfig, to_edge

    torch.manual_seed(SEED)
    m = SeqOps().eval()
    ep = torch.export.export(m, step_inputs(0), dynamic_shapes=dynamic_shapes(), strict=True)
    buf = to_edge(ep).to_executorch(ExecutorchBackendConfig()).buffer
    inputs = [step_inputs(k) for k in range(len(LENGTHS))]
    return buf, inputs, runtime_steps(buf, inputs)


def step_inputs(k):
    g = torch.Generator().manual_seed(SEED * 100 + k)
    return (torch.randn(1, LENGTHS[k], 8, generator=g),)


def dynamic_shapes():
    return ({1: Dim("T", min=1, max=32)},)


def runtime_steps(buf, inputs):
    import executorch.kernels.quantized  # noqa: F401
    from executorch.runtime import Runtime

    method = Runtime.get().load_program(buf).load_method("forward")
    out = []
    for xs in inputs:
        ys = method.execute(list(xs))
        out.append([np.array(y.detach().numpy(), copy=True) for y in ys])
    return out


def seq_f32():
    from executorch.exir import ExecutorchBackendConfig, to_edge

    torch.manual_seed(SEED)
    m = SeqModel().eval()
    ep = torch.export.export(m, step_inputs(0), dynamic_shapes=dynamic_shapes(), strict=True)
    buf = to_edge(ep).to_executorch(ExecutorchBackendConfig()).buffer
    inputs = [step_inputs(k) for k in range(len(LENGTHS))]
    return buf, inputs, runtime_steps(buf, inputs)


def seq_int8():
    import executorch.kernels.quantized  # noqa: F401
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )
    from executorch.exir import ExecutorchBackendConfig, to_edge
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    torch.manual_seed(SEED)
    m = SeqModel().eval()
    gm = torch.export.export(m, step_inputs(0), dynamic_shapes=dynamic_shapes(), strict=True).module(
        check_guards=False)
    prepared = prepare_pt2e(gm, XNNPACKQuantizer().set_global(get_symmetric_quantization_config()))
    for k in range(12):
        g = torch.Generator().manual_seed(SEED * 1000 + k)
        prepared(torch.randn(1, 1 + (k * 7) % 32, 8, generator=g))
    converted = convert_pt2e(prepared)
    ep = torch.export.export(converted, step_inputs(0), dynamic_shapes=dynamic_shapes(), strict=True)
    buf = to_edge(ep).to_executorch(ExecutorchBackendConfig()).buffer
    inputs = [step_inputs(k) for k in range(len(LENGTHS))]
    return buf, inputs, runtime_steps(buf, inputs)


class SmallConv(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(1, 8, 3, padding=1)
        self.c2 = torch.nn.Conv2d(8, 4, 3, padding=1)

    def forward(self, x):  # x [1, 1, 32, 32]
        return self.c2(torch.relu(self.c1(x)))


def dimorder_cm():
    import export_fixtures as ef

    torch.manual_seed(SEED)
    m = SmallConv().eval()
    g = torch.Generator().manual_seed(SEED)
    x = torch.randn(1, 1, 32, 32, generator=g)
    calib = [torch.randn(1, 1, 32, 32, generator=g) for _ in range(8)]
    edge, ep, _, to_input = ef.cortex_m_program(m, x, calib, "M33", int8_io=False)
    x_in = to_input(x)
    out, _ = ef.reference_run(ep, x_in, record_intermediates=False)
    buf = ef.to_pte(edge, ep)
    return buf, [(x_in,)], [[out.contiguous().numpy()]]


def same_memory_dim_orders(buf):
    """`buf` with every dim order [0, 2, 1, 3] written as [0, 2, 3, 1]: the
    same memory when dimension 1 (or 3) has size 1, which is checked for
    every such tensor."""
    from executorch.exir._serialize._program import _flatbuffer_to_program, _get_extended_header
    from executorch.exir.schema import Tensor

    eh = _get_extended_header(buf)
    program = _flatbuffer_to_program(buf[: eh.program_size if eh and eh.is_valid() else len(buf)])
    n = 0
    for plan in program.execution_plan:
        for v in plan.values:
            t = v.val
            if isinstance(t, Tensor) and list(t.dim_order) == [0, 2, 1, 3]:
                assert t.sizes[1] == 1 or t.sizes[3] == 1, t.sizes
                n += 1
    pattern = b"\x04\x00\x00\x00\x00\x02\x01\x03"
    assert buf.count(pattern) == n, (buf.count(pattern), n)
    return buf.replace(pattern, b"\x04\x00\x00\x00\x00\x02\x03\x01"), n


def dimorder_input():
    g = torch.Generator().manual_seed(SEED)
    x = torch.randn(1, 1, 32, 32, generator=g)
    calib = [torch.randn(1, 1, 32, 32, generator=g) for _ in range(8)]
    return x, calib


def dimorder_portable(quantized):
    from executorch.exir import ExecutorchBackendConfig, to_edge

    torch.manual_seed(SEED)
    cl = lambda t: t.to(memory_format=torch.channels_last)  # noqa: E731
    m = SmallConv().eval().to(memory_format=torch.channels_last)
    x, calib = dimorder_input()
    if quantized:
        import executorch.kernels.quantized  # noqa: F401
        from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
            XNNPACKQuantizer,
            get_symmetric_quantization_config,
        )
        from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

        gm = torch.export.export(m, (cl(x),), strict=True).module(check_guards=False)
        prepared = prepare_pt2e(gm, XNNPACKQuantizer().set_global(get_symmetric_quantization_config()))
        for s in calib:
            prepared(cl(s))
        m = convert_pt2e(prepared)
    buf = bytes(to_edge(torch.export.export(m, (cl(x),), strict=True)).to_executorch(
        ExecutorchBackendConfig()).buffer)
    ref_buf, n = same_memory_dim_orders(buf)
    assert n > 0, "no [0, 2, 1, 3] dim order: the program does not show the wall"
    x_in = cl(x)
    return buf, [(x_in,)], runtime_steps(ref_buf, [(x_in,)])


PROGRAMS = {
    "seq_dyn_f32": (seq_f32, "float32", "portable", "float32, no quantization, no delegate; "
                    "torch.export with dynamic_shapes Dim('T', min=1, max=32)"),
    "seq_dyn_int8": (seq_int8, "int8 (q/dq), float I/O", "portable",
                     "portable int8: PT2E q/dq, XNNPACKQuantizer per-tensor, no delegate; "
                     "torch.export with dynamic_shapes Dim('T', min=1, max=32)"),
    "seq_ops_dyn_f32": (seq_ops_f32, "float32", "portable", "float32, no quantization, no delegate; "
                        "torch.export with dynamic_shapes Dim('T', min=1, max=32)"),
    "seq_prim_dyn_f32": (seq_prim_f32, "float32", "portable", "float32, no quantization, no delegate; "
                         "torch.export with dynamic_shapes Dim('T', min=1, max=32)"),
    "seq_symops_dyn_f32": (seq_symops_f32, "float32", "portable",
                           "float32, no quantization, no delegate; torch.export with dynamic_shapes "
                           "Dim('T', min=1, max=32); to_edge with EdgeCompileConfig(_check_ir_validity=False)"),
    "linear_dyn_f32": (linear_f32, "float32", "portable",
                       "float32, no quantization, no delegate; torch.export with dynamic_shapes "
                       "Dim('T', min=1, max=32); to_edge with EdgeCompileConfig(preserve_ops=[aten.linear.default])"),
    "dimorder_f32": (lambda: dimorder_portable(False), "float32", "portable",
                     "float32, channels-last model and input [1, 1, 32, 32] (dim order [0, 2, 1, 3]), "
                     "no quantization, no delegate"),
    "dimorder_int8": (lambda: dimorder_portable(True), "int8 (q/dq), float I/O", "portable",
                      "portable int8: PT2E q/dq, XNNPACKQuantizer per-tensor, no delegate; channels-last "
                      "model and input [1, 1, 32, 32] (dim order [0, 2, 1, 3])"),
    "dimorder_cm": (dimorder_cm, "int8 (cortex_m), float I/O", "cortex_m",
                    "cortex_m flow: CortexMQuantizer + CortexMPassManager, cpu M33 (DSP), float I/O; "
                    "input [1, 1, 32, 32] channels-last, i.e. dim order [0, 2, 1, 3]"),
}


REFERENCE = {
    "dimorder_cm": "the final edge graph run eagerly (cortex_m reference ops)",
    "dimorder_f32": "executorch.runtime (pip wheel) on the same program with its [0, 2, 1, 3] dim orders "
                    "written as [0, 2, 3, 1] (same memory: their dimension 1 has size 1); ExecuTorch's "
                    "portable convolution refuses [0, 2, 1, 3]",
}
REFERENCE["dimorder_int8"] = REFERENCE["dimorder_f32"]
RULES = {
    # The pip wheel runs add, mul, bmm and addmm through kernels/optimized
    # (executorch-portable-kernels.md §0), whose summation order differs.
    "seq_dyn_f32": ({"ulp": 16}, "the reference runtime (pip wheel) takes aten::add/mul/bmm/addmm from "
                    "kernels/optimized; etch runs the portable arithmetic"),
    "dimorder_f32": ("exact", ""),
    # No portable aten::linear upstream: the wheel's comes from
    # kernels/optimized (a gemm, another summation order than etch's
    # addmm order).
    # Measured: at most 32 ulp, 1.2e-7 absolute (an output of 0.0075 after
    # cancellation).
    "linear_dyn_f32": ({"ulp": 32}, "the reference runtime (pip wheel) takes aten::linear from "
                       "kernels/optimized (a gemm: another summation order); ExecuTorch has no portable "
                       "linear, etch sums in addmm's order"),
}


def main():
    out_dir = sys.argv[1]
    only = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--only" else ""
    os.makedirs(out_dir, exist_ok=True)
    for name, (fn, dtype, path, how) in PROGRAMS.items():
        if only not in name:
            continue
        try:
            buf, inputs, refs = fn()
        except Exception as e:  # noqa: BLE001  the exporter's error is reported
            print(f"{name}: not exported: {type(e).__name__}: {(str(e).strip().splitlines() or [''])[0][:300]}")
            continue
        buf = bytes(buf)
        with open(os.path.join(out_dir, name + ".pte"), "wb") as f:
            f.write(buf)
        steps = os.path.join(out_dir, name + ".forward.steps")
        os.makedirs(steps, exist_ok=True)
        for k, (xs, ys) in enumerate(zip(inputs, refs)):
            for i, x in enumerate(xs):
                np.save(os.path.join(steps, f"{k}.input{i}.npy"), x.contiguous().numpy())
            for j, y in enumerate(ys):
                np.save(os.path.join(steps, f"{k}.output{j}.npy"), y)
        facts = pte_facts.facts(buf)
        meth = facts["methods"][0]
        entry = {
            "name": name,
            "dtype": dtype,
            "path": path,
            "made_by": how,
            "reference": REFERENCE.get(name, "executorch.runtime (pip wheel), one loaded method executed "
                                             "step after step"),
            "bytes": len(buf),
            "methods": [{
                "name": "forward",
                "steps": len(inputs),
                "instructions": meth["instructions"],
                "ops": [o["name"] + ("." + o["overload"] if o["overload"] else "") for o in meth["operators"]],
                "inputs": meth["inputs"],
                "planned_buffers": meth["planned_buffers"],
            }],
            "rule": RULES.get(name, ("exact", ""))[0],
            "why": RULES.get(name, ("exact", ""))[1],
        }
        with open(os.path.join(out_dir, name + ".json"), "w") as f:
            json.dump(entry, f, indent=1)
        print(f"{name}: {len(buf)} B, {len(inputs)} steps, ops {entry['methods'][0]['ops']}")


if __name__ == "__main__":
    main()
