"""Exports the test fixtures with upstream ExecuTorch (pinned in requirements.txt).

usage: python export_fixtures.py OUT_DIR [--only NAME_SUBSTRING]

For each model (tiny, dscnn):
  (a) portable int8: PT2E + XNNPACKQuantizer (per-channel `_pc`, per-tensor `_pt`),
      no delegate; reference output from ExecuTorch's own runtime.
  (b) backends/cortex_m flow for M55 (MVE encoding), M33 (DSP), M0 (scalar),
      float I/O and int8 I/O (`_int8io`); reference output from ExecuTorch's
      reference op implementations (backends/cortex_m/ops/operators.py) run
      eagerly over the final graph.
Writes <name>.pte, <name>.input0.npy, <name>.output0.npy, <name>.expected.json
(+ <name>.intermediates.npz for cortex_m files).
"""

import argparse
import json
import os
import re
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(__file__))
import models  # noqa: E402
import pte_facts  # noqa: E402


def portable_int8_program(model, x, calib, per_channel):
    """Portable int8 program: PT2E with XNNPACKQuantizer calibrated on `calib`,
    no delegate. Returns the .pte bytes."""
    import executorch.kernels.quantized  # noqa: F401  registers quantized_decomposed out variants
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )
    from executorch.exir import ExecutorchBackendConfig, to_edge
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    gm = torch.export.export(model, (x,), strict=True).module(check_guards=False)
    q = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=per_channel))
    prepared = prepare_pt2e(gm, q)
    for s in calib:
        prepared(s)
    converted = convert_pt2e(prepared)
    et = to_edge(torch.export.export(converted, (x,), strict=True)).to_executorch(ExecutorchBackendConfig())
    return et.buffer


def float_program(model, x):
    """Plain float program (no quantization, no delegate). Returns the .pte bytes."""
    from executorch.exir import ExecutorchBackendConfig, to_edge

    return to_edge(torch.export.export(model, (x,), strict=True)).to_executorch(ExecutorchBackendConfig()).buffer


def runtime_output(buf, x):
    """Output 0 of `forward` run by ExecuTorch's own runtime (executorch.runtime)."""
    import executorch.kernels.quantized  # noqa: F401  registers the quantized_decomposed kernels
    from executorch.runtime import Runtime

    return Runtime.get().load_program(buf).load_method("forward").execute([x])[0]


def export_portable(name, per_channel):
    model, shape = models.make(name)
    x = models.fixed_input(shape)
    buf = portable_int8_program(model, x, models.calibration(shape), per_channel)
    return buf, x.numpy(), runtime_output(buf, x).numpy(), None, None


def export_float(name):
    """Plain float program; reference output from ExecuTorch's runtime."""
    model, shape = models.make(name)
    x = models.fixed_input(shape)
    buf = float_program(model, x)
    return buf, x.numpy(), runtime_output(buf, x).numpy(), None, None


def export_xnnpack_delegate(name):
    """A delegated program (XnnpackBackend, inline blob, weights in named_data):
    exercises DelegateCall, backend lookup and named data. Reference output from
    ExecuTorch's runtime, which has the XNNPACK backend."""
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import ExecutorchBackendConfig, to_edge_transform_and_lower
    from executorch.runtime import Runtime

    model, shape = models.make(name)
    x = models.fixed_input(shape)
    ep = torch.export.export(model, (x,), strict=True)
    et = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()]).to_executorch(
        ExecutorchBackendConfig(extract_delegate_segments=False)
    )
    buf = et.buffer
    out = Runtime.get().load_program(buf).load_method("forward").execute([x])[0]
    return buf, x.numpy(), out.numpy(), None, None


def cortex_m_program(model, x, calib, cpu, int8_io, explicit_layout=False):
    """backends/cortex_m flow (aot_arm_compiler's _to_edge_cortex_m): PT2E with
    CortexMQuantizer calibrated on `calib`, edge lowering, optional int8 I/O,
    CortexMPassManager for `cpu`. Returns (edge, ep, io, to_input): the final
    edge program `ep` (before to_executorch), the int8-I/O quantization
    parameters `io` (config methods, or None), and `to_input(x)`, mapping a float
    input to what the program takes (layout, and quantization with int8 I/O)."""
    from executorch.backends.cortex_m.edge_compile_config import cortex_m_edge_compile_config
    from executorch.backends.cortex_m.passes.cortex_m_pass_manager import CortexMPassManager
    from executorch.backends.cortex_m.quantizer.quantizer import CortexMQuantizer
    from executorch.backends.cortex_m.target_config import CortexM, CortexMTargetConfig
    from executorch.exir import to_edge_transform_and_lower
    from executorch.exir.passes.quantize_io_pass import QuantizeInputs, QuantizeOutputs
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    # The default flow runs channels-last; the explicit-layout flow keeps NCHW
    # and inserts its own transposes (aot_arm_compiler.py does the same).
    channels_last = x.dim() == 4 and not explicit_layout
    cl = (lambda t: t.to(memory_format=torch.channels_last)) if channels_last else (lambda t: t)
    model = model.to(memory_format=torch.channels_last) if channels_last else model
    x_cl = cl(x)
    gm = torch.export.export(model, (x_cl,), strict=True).module(check_guards=False)
    prepared = prepare_pt2e(gm, CortexMQuantizer(use_explicit_layout=explicit_layout))
    for s in calib:
        prepared(cl(s))
    converted = convert_pt2e(prepared)
    edge = to_edge_transform_and_lower(
        torch.export.export(converted, (x_cl,), strict=True),
        compile_config=cortex_m_edge_compile_config(),
    )
    if int8_io:
        edge = edge.transform([QuantizeInputs(edge, [0]), QuantizeOutputs(edge, [0])])
    ep = CortexMPassManager(
        edge.exported_program(),
        target_config=CortexMTargetConfig(cpu=getattr(CortexM, cpu)),
        use_explicit_layout=explicit_layout,
    ).transform()

    io = None
    if int8_io:
        cfg = dict(edge._config_methods or {})
        io = {k: (float(v) if isinstance(v, float) else int(v)) for k, v in cfg.items()}

    def to_input(t):
        t = cl(t)
        if not int8_io:
            return t
        s, zp = io["input0_scale"], io["input0_zp"]
        # The same rule as the quantize kernels: f32 reciprocal, ties to even.
        inv = np.float32(1.0) / np.float32(s)
        q = np.rint(t.numpy().astype(np.float32) * inv) + zp
        q = torch.from_numpy(np.clip(q, -128, 127).astype(np.int8))
        return q.contiguous().to(memory_format=torch.channels_last) if channels_last else q

    return edge, ep, io, to_input


def avg_pool2d_cmsis(x, kernel_size, stride, padding, ceil_mode):
    """cortex_m::quantized_avg_pool2d as the device computes it (CMSIS-NN
    arm_avgpool_s8): integer sum of the in-bounds window, divided by its size
    rounding half away from zero, clamped to int8. ExecuTorch's eager reference
    dequantizes, averages in float and requantizes ties to even: it differs
    at exact .5 ties, and the device is right."""
    import torch.nn.functional as F

    args = dict(stride=list(stride), padding=list(padding), ceil_mode=bool(ceil_mode), divisor_override=1)
    sums = F.avg_pool2d(x.to(torch.float64), list(kernel_size), **args).round().to(torch.int64)
    counts = F.avg_pool2d(torch.ones_like(x, dtype=torch.float64), list(kernel_size), **args).round().to(torch.int64)
    half = counts // 2
    q = torch.where(sums > 0, (sums + half) // counts, -((half - sums) // counts))
    return q.clamp(-128, 127).to(torch.int8)


def aliased_view(n, base):
    """What the runtime reads through `view_copy` node `n` of `base` (its eager
    value). to_executorch's ReplaceViewCopyWithViewPass turns every view_copy
    whose users are not the graph output into a view sharing its base's
    storage (a contiguous spec of the new shape at the base's offset), so the
    runtime reinterprets the base's memory, laid out in the base's dim order.
    For a contiguous base that is the eager view; for a channels-last base
    (the cortex_m flow's convolution outputs) it is the memory order, not the
    logical one."""
    if not all(u.op != "output" for u in n.users):
        return None
    meta = n.args[0].meta.get("val") if isinstance(n.args[0], torch.fx.Node) else None
    if meta is None:
        return None
    order = list(meta.dim_order())
    if order == sorted(order):
        return None  # contiguous: the eager view is what memory holds
    return base.permute(order).contiguous().reshape(n.meta["val"].shape)


def reference_run(ep, x_in, record_intermediates=True, gm_final=None):
    """Runs the final edge graph eagerly through ExecuTorch's cortex_m reference
    ops (backends/cortex_m/ops/operators.py), with quantized_avg_pool2d replaced
    by the device's arithmetic (avg_pool2d_cmsis) and a view of a
    non-contiguous base read from memory as the runtime does (aliased_view).
    Returns (output, intermediates): every call_function node's tensor output,
    keyed "NNN_<target>". `gm_final`: ep.module(), made once by callers that
    run many inputs."""
    gm_final = ep.module() if gm_final is None else gm_final
    record = {}
    order = []
    interp = torch.fx.Interpreter(gm_final)
    orig_run_node = interp.run_node

    def run_node(n):
        if n.op == "call_function" and "cortex_m.quantized_avg_pool2d.default" in str(n.target):
            args, _ = interp.fetch_args_kwargs_from_env(n)
            r = avg_pool2d_cmsis(*args[:5])
        elif n.op == "call_function" and "aten.view_copy.default" in str(n.target):
            args, _ = interp.fetch_args_kwargs_from_env(n)
            r = aliased_view(n, args[0])
            r = orig_run_node(n) if r is None else r
        else:
            r = orig_run_node(n)
        if record_intermediates and n.op == "call_function" and isinstance(r, torch.Tensor):
            # Without the " at 0x..." of function targets (memory.alloc): stable keys.
            target = re.sub(r" at 0x[0-9a-f]+", "", str(n.target))
            key = "%03d_%s" % (len(order), target.replace(".", "_"))
            order.append(key)
            record[key] = r.detach().contiguous().numpy()
        return r

    interp.run_node = run_node
    out = interp.run(x_in)
    out = out[0] if isinstance(out, (tuple, list)) else out
    return out, record


def to_pte(edge, ep):
    """to_executorch of the final graph. Run reference_run first: to_executorch
    rewrites the graph into out-variants in place."""
    from executorch.exir import ExecutorchBackendConfig

    edge._edge_programs["forward"] = ep
    return edge.to_executorch(ExecutorchBackendConfig(extract_delegate_segments=False)).buffer


def export_cortex_m(name, cpu, int8_io, explicit_layout=False):
    model, shape = models.make(name)
    x = models.fixed_input(shape)
    edge, ep, io, to_input = cortex_m_program(model, x, models.calibration(shape), cpu, int8_io, explicit_layout)
    x_in = to_input(x)
    out, record = reference_run(ep, x_in)
    buf = to_pte(edge, ep)
    return buf, x_in.contiguous().numpy(), out.contiguous().numpy(), record, io


def save_npz_deterministic(path, arrays):
    """np.savez_compressed, but with fixed zip timestamps so re-exports are
    byte-identical."""
    import io
    import zipfile

    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for key, arr in arrays.items():
            buf = io.BytesIO()
            np.save(buf, arr)
            info = zipfile.ZipInfo(key + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, buf.getvalue())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    jobs = []
    for m in ("tiny", "dscnn"):
        jobs.append((f"{m}_portable_pt", lambda m=m: export_portable(m, False), "portable int8, XNNPACKQuantizer per-tensor"))
        jobs.append((f"{m}_portable_pc", lambda m=m: export_portable(m, True), "portable int8, XNNPACKQuantizer per-channel"))
        for cpu in ("M55", "M33", "M0"):
            for io in (False, True):
                n = f"{m}_cm_{cpu.lower()}" + ("_int8io" if io else "")
                how = f"cortex_m flow, CortexMQuantizer, cpu {cpu}, {'int8' if io else 'float'} I/O"
                jobs.append((n, lambda m=m, cpu=cpu, io=io: export_cortex_m(m, cpu, io), how))
    for m in ("zoo", "attn"):
        for cpu in ("M55", "M33"):
            jobs.append((f"{m}_cm_{cpu.lower()}", lambda m=m, cpu=cpu: export_cortex_m(m, cpu, False),
                         f"cortex_m flow, CortexMQuantizer, cpu {cpu}, float I/O"))
    jobs.append(("fzoo_portable_f32", lambda: export_float("fzoo"), "float, no quantization: remaining portable operators"))
    jobs.append(("dscnn_cm_m33_nhwc", lambda: export_cortex_m("dscnn", "M33", False, explicit_layout=True),
                 "cortex_m flow, experimental explicit NHWC layout (`_nhwc` ops + transpose), cpu M33, float I/O"))
    jobs.append(("tiny_xnnpack_delegate", lambda: export_xnnpack_delegate("tiny"), "float, XnnpackPartitioner: one XnnpackBackend delegate (inline blob, weights in named_data)"))
    for name, fn, how in jobs:
        if args.only not in name:
            continue
        buf, x, y, inter, io = fn()
        base = os.path.join(args.out, name)
        open(base + ".pte", "wb").write(buf)
        np.save(base + ".input0.npy", x)
        np.save(base + ".output0.npy", y)
        if inter is not None:
            save_npz_deterministic(base + ".intermediates.npz", inter)
        facts = pte_facts.facts(bytes(buf))
        facts["made_by"] = how
        facts["reference"] = (
            "cortex_m reference ops (operators.py) over the final graph" if "_cm_" in name
            else "executorch.runtime (portable kernels, XNNPACK backend)"
        )
        if io:
            facts["io_qparams"] = io
        with open(base + ".expected.json", "w") as f:
            json.dump(facts, f, indent=1, sort_keys=True)
        print(f"{name}: {len(buf)} B, arena {facts['methods'][0]['planned_buffers']}, "
              f"{facts['methods'][0]['instructions']} instructions", flush=True)


if __name__ == "__main__":
    main()
