"""Exports the program-features zoo (tests/programs): programs that use ExecuTorch's
*program* features (mutable buffers carried across executions, torch.cond,
several methods), with references from ExecuTorch's own runtime executing ONE
loaded method several times in order.

usage: python programs.py OUT_DIR [--only SUBSTRING]

Per program `<name>` (= `<model>_<path>`) it writes
  <name>.pte
  <name>.<method>.steps/<k>.input<i>.npy, <k>.output<j>.npy   (k = 0, 1, ...)
  <name>.json        dtype, path, rule (exact / ulp N), how it was made
and programs.json (every program and every failed export with the exporter's
error). Paths:
  f32   float32, no quantization, no delegate; reference: executorch.runtime
  int8  portable int8: PT2E q/dq, XNNPACKQuantizer per-tensor, no delegate;
        reference: executorch.runtime
  cm    backends/cortex_m flow (CortexMQuantizer + CortexMPassManager, cpu
        M33, float I/O); reference: the final edge graph run eagerly (its
        cortex_m reference ops) as one module whose buffers carry the state
        (the pip runtime has no cortex_m kernels)
Mutable buffers are exported with their initial values
(InitializedMutableBufferPass): without it ExecuTorch serializes only their
shape and dtype and their first state is whatever the planned memory holds.
"""

import argparse
import json
import os
import shutil
import sys
import traceback

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(__file__))
import export_fixtures as ef  # noqa: E402
import pte_facts  # noqa: E402

WEIGHT_SEED = 1234
STEP_SEED = 7
STEPS = 4
PATHS = ("f32", "int8", "cm")


# ---------------------------------------------------------------- models


class RunningSum(nn.Module):
    """acc += x every call; returns acc * 0.5 (acc starts at 0, 1, 2, ...)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("acc", torch.arange(8, dtype=torch.float32).reshape(1, 8))

    def forward(self, x):
        self.acc.add_(x)
        return self.acc * 0.5


class GruStream(nn.Module):
    """A GRU cell, one frame per call, hidden state in a buffer."""

    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(8, 16)
        self.register_buffer("h", torch.full((1, 16), 0.25))

    def forward(self, x):
        h = self.cell(x, self.h)
        self.h.copy_(h)
        return h


class LstmStream(nn.Module):
    """An LSTM cell, one frame per call, (h, c) in buffers; a linear head."""

    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(8, 16)
        self.head = nn.Linear(16, 4)
        self.register_buffer("h", torch.full((1, 16), -0.125))
        self.register_buffer("c", torch.full((1, 16), 0.5))

    def forward(self, x):
        h, c = self.cell(x, (self.h, self.c))
        self.h.copy_(h)
        self.c.copy_(c)
        return self.head(h)


class ConvStream(nn.Module):
    """A streaming 1-D convolution (kernel 3) over 4-frame hops: the last
    2 frames of each hop are cached in a buffer, so the output of every hop
    equals the offline convolution's over the concatenated stream."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 8, 3)
        self.register_buffer("cache", torch.zeros(1, 4, 2))

    def forward(self, x):
        full = torch.cat([self.cache, x], dim=2)
        self.cache.copy_(full[:, :, -2:])
        return torch.relu(self.conv(full))


class KvAttention(nn.Module):
    """A single-head attention step over a rolling key/value cache of 6 slots
    (buffers): the new token's key and value enter at the end, the oldest
    leave."""

    def __init__(self):
        super().__init__()
        self.q, self.k, self.v, self.o = (nn.Linear(8, 8) for _ in range(4))
        self.register_buffer("k_cache", torch.zeros(1, 6, 8))
        self.register_buffer("v_cache", torch.zeros(1, 6, 8))

    def forward(self, x):  # x: [1, 1, 8]
        k = torch.cat([self.k_cache[:, 1:], self.k(x)], dim=1)
        v = torch.cat([self.v_cache[:, 1:], self.v(x)], dim=1)
        self.k_cache.copy_(k)
        self.v_cache.copy_(v)
        att = torch.softmax(torch.bmm(self.q(x), k.transpose(1, 2)) * (8 ** -0.5), dim=-1)
        return self.o(torch.bmm(att, v))


class Cond(nn.Module):
    """torch.cond on a data-dependent predicate (the input's sum)."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)

    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda x: torch.relu(self.a(x)), lambda x: self.b(x) * 2.0, (x,))


class CondState(nn.Module):
    """torch.cond on the state itself: s += |x| while sum(s) < 10, then s
    restarts from x (s is a buffer)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("s", torch.zeros(1, 4))

    def forward(self, x):
        s = torch.cond(self.s.sum() < 10.0, lambda s, x: s + x.abs(), lambda s, x: x * 1.0, (self.s, x))
        self.s.copy_(s)
        return s * 1.0


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        return torch.tanh(self.fc(x))


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 16)

    def forward(self, z):
        return torch.sigmoid(self.fc(z))


class WhileLoop(nn.Module):
    """torch while_loop: doubles x three times (the exporter refuses it)."""

    def forward(self, x):
        from torch._higher_order_ops.while_loop import while_loop

        return while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * 2.0), (torch.tensor(0), x))[1]


class Map(nn.Module):
    """torch map over the first dimension (the exporter may refuse it)."""

    def forward(self, x):
        from torch._higher_order_ops.map import map as hop_map

        return hop_map(lambda r: r * 2.0 + 1.0, x)


class Scan(nn.Module):
    """torch scan: a cumulative sum over the first dimension."""

    def forward(self, x):
        from torch._higher_order_ops.scan import scan

        def combine(c, r):
            n = c + r
            return n, n.clone()

        return scan(combine, torch.zeros(x.shape[1:]), x)[1]


# name: (factory, {method: (module attribute or None, input shapes)}, buffers, description)
MODELS = {
    "running_sum": (RunningSum, {"forward": [(1, 8)]}, ["acc"], "acc.add_(x); return acc * 0.5"),
    "gru": (GruStream, {"forward": [(1, 8)]}, ["h"], "GRUCell(8, 16), hidden state in a buffer"),
    "lstm": (LstmStream, {"forward": [(1, 8)]}, ["h", "c"], "LSTMCell(8, 16) + Linear(16, 4), (h, c) in buffers"),
    "conv_stream": (ConvStream, {"forward": [(1, 4, 4)]}, ["cache"],
                    "Conv1d(4, 8, 3) over 4-frame hops, last 2 frames cached in a buffer"),
    "kv_attention": (KvAttention, {"forward": [(1, 1, 8)]}, ["k_cache", "v_cache"],
                     "single-head attention over a rolling 6-slot key/value cache in buffers"),
    "cond": (Cond, {"forward": [(1, 8)]}, [], "torch.cond(x.sum() > 0, relu(a(x)), b(x) * 2)"),
    "cond_state": (CondState, {"forward": [(1, 4)]}, ["s"], "torch.cond on a buffer-held state"),
    "two_methods": (None, {"encode": [(1, 16)], "decode": [(1, 4)]}, [],
                    "encode: tanh(Linear(16, 4)); decode: sigmoid(Linear(4, 16)); one program"),
    "while_loop": (WhileLoop, {"forward": [(1, 4)]}, [], "torch while_loop"),
    "map": (Map, {"forward": [(3, 4)]}, [], "torch map over dim 0"),
    "scan": (Scan, {"forward": [(3, 4)]}, [], "torch scan (cumulative sum)"),
}
# Programs that only make sense in float (control-flow probes).
FLOAT_ONLY = {"while_loop", "map", "scan"}


def make(name):
    torch.manual_seed(WEIGHT_SEED)
    if name == "two_methods":
        return {"encode": Encoder().eval(), "decode": Decoder().eval()}
    factory = MODELS[name][0]
    return {"forward": factory().eval()}


def step_inputs(name, method, k):
    """Inputs of step k: seeded normal noise of the method's input shapes."""
    g = torch.Generator().manual_seed(STEP_SEED * 1000 + k * 10 + sorted(MODELS[name][1]).index(method))
    shapes = MODELS[name][1][method]
    xs = [torch.randn(s, generator=g) for s in shapes]
    if name == "cond":  # both branches: the predicate alternates
        xs = [x.abs() * (1 if k % 2 == 0 else -1) for x in xs]
    return tuple(xs)


def calibration(name, method, n=12):
    return [step_inputs(name, method, 100 + i) for i in range(n)]


# ---------------------------------------------------------------- export


def init_pass(buffers):
    from executorch.exir.passes.init_mutable_pass import InitializedMutableBufferPass

    return [InitializedMutableBufferPass(buffers)] if buffers else []


def to_pte(edge, buffers):
    from executorch.exir import ExecutorchBackendConfig

    return edge.to_executorch(ExecutorchBackendConfig(passes=init_pass(buffers))).buffer


def export_f32(name, modules, buffers):
    from executorch.exir import to_edge

    eps = {m: torch.export.export(mod, step_inputs(name, m, 0), strict=True) for m, mod in modules.items()}
    return to_pte(to_edge(eps), buffers)


def quantize(mod, example, calib):
    """PT2E with XNNPACKQuantizer (per-tensor), calibrated on `calib` run in
    order on a copy (the model's buffers are reset after calibration)."""
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    state = {k: v.clone() for k, v in mod.state_dict().items()}
    gm = torch.export.export(mod, example, strict=True).module(check_guards=False)
    prepared = prepare_pt2e(gm, XNNPACKQuantizer().set_global(get_symmetric_quantization_config()))
    for s in calib:
        prepared(*s)
    converted = convert_pt2e(prepared)
    # Calibration ran the stateful graph: give the buffers back their initial values.
    for k, v in converted.named_buffers():
        if k in state:
            v.copy_(state[k])
    mod.load_state_dict(state)
    return converted


def export_int8(name, modules, buffers):
    import executorch.kernels.quantized  # noqa: F401
    from executorch.exir import to_edge

    eps = {}
    for m, mod in modules.items():
        ex = step_inputs(name, m, 0)
        eps[m] = torch.export.export(quantize(mod, ex, calibration(name, m)), ex, strict=True)
    buf = to_pte(to_edge(eps), buffers)
    import pte_facts

    ops = {o["name"] for p in pte_facts.facts(bytes(buf))["methods"] for o in p["operators"]}
    if not any(o.startswith("quantized_decomposed::") for o in ops):
        raise RuntimeError("XNNPACKQuantizer annotated nothing: the program has no q/dq (float ops only)")
    return buf


def export_cm(name, modules, buffers):
    """The cortex_m flow (export_fixtures.cortex_m_program's steps, several
    inputs and methods). Returns (pte, {method: final edge graph module})."""
    from executorch.backends.cortex_m.edge_compile_config import cortex_m_edge_compile_config
    from executorch.backends.cortex_m.passes.cortex_m_pass_manager import CortexMPassManager
    from executorch.backends.cortex_m.quantizer.quantizer import CortexMQuantizer
    from executorch.backends.cortex_m.target_config import CortexM, CortexMTargetConfig
    from executorch.exir import ExecutorchBackendConfig, to_edge_transform_and_lower
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    def quantized(m, mod, ex, state, fold):
        mod.load_state_dict(state)
        gm = torch.export.export(mod, ex, strict=True).module(check_guards=False)
        # Which storage is which buffer: prepare_pt2e may turn a buffer into
        # tensor constants (_tensor_constant0, _deduplicated_get_attr_...)
        # that share its storage.
        storage = {v.untyped_storage().data_ptr(): k for k, v in gm.named_buffers() if k in buffers}
        prepared = prepare_pt2e(gm, CortexMQuantizer())
        for s in calibration(name, m):
            prepared(*s)
        converted = convert_pt2e(prepared, fold_quantize=fold)
        rebuffer(converted, storage, buffers)
        return converted

    eps = {}
    for m, mod in modules.items():
        ex = step_inputs(name, m, 0)
        state = {k: v.clone() for k, v in mod.state_dict().items()}
        try:
            converted = quantized(m, mod, ex, state, fold=True)
        except StateFolded:
            # convert_pt2e folded quantize(buffer) into a constant: again
            # without folding quantize ops (the buffer is then quantized at
            # run time, as the model reads it).
            converted = quantized(m, mod, ex, state, fold=False)
        # named_buffers() would name a storage once, maybe by a constant's name.
        for k, v in converted.named_buffers(remove_duplicate=False):
            if k in state:
                v.copy_(state[k])
        eps[m] = torch.export.export(converted, ex, strict=True)
    edge = to_edge_transform_and_lower(eps, compile_config=cortex_m_edge_compile_config())
    finals = {}
    for m in modules:
        ep = CortexMPassManager(
            edge.exported_program(m), target_config=CortexMTargetConfig(cpu=CortexM.M33)
        ).transform()
        edge._edge_programs[m] = ep
        finals[m] = ep
    # The eager reference, made before to_executorch rewrites the graphs.
    # The module's buffers may share storage with the program's, whose
    # initial values to_executorch serializes: they are put back after.
    saved = {m: {k: v.detach().clone() for k, v in ep.state_dict.items()} for m, ep in finals.items()}
    refs_out = {m: run_steps_eager(name, m, ep.module()) for m, ep in finals.items()}
    with torch.no_grad():
        for m, ep in finals.items():
            for k, v in saved[m].items():
                ep.state_dict[k].copy_(v)
    buf = edge.to_executorch(
        ExecutorchBackendConfig(extract_delegate_segments=False, passes=init_pass(buffers))
    ).buffer
    return buf, refs_out


class StateFolded(RuntimeError):
    """A buffer the graph writes but no longer reads (see rebuffer)."""


def rebuffer(gm, storage, buffers):
    """Gives a converted graph its mutable buffers back. prepare_pt2e (the
    cortex_m quantizer's re-trace) can turn a buffer the model updates in
    place into plain tensor constants sharing its storage: the copy_ then
    writes a constant, calibration's updates of it are not undone with the
    buffers' (the reference would start from the calibrated state), and
    InitializedMutableBufferPass, which matches buffer names, finds nothing
    (the program gets no initial value). Every get_attr of such a storage
    is pointed back at a buffer of the original name. A buffer the graph
    writes but no longer reads (convert_pt2e folded quantize(buffer) into a
    constant) cannot be given back: StateFolded, and export_cm converts
    again without folding quantize ops."""
    names = dict(gm.named_buffers())
    for n in gm.graph.nodes:
        if n.op != "get_attr":
            continue
        t = getattr(gm, n.target, None)
        if not isinstance(t, torch.Tensor):
            continue
        b = storage.get(t.untyped_storage().data_ptr())
        if b is None or n.target == b:
            continue
        if b not in names:
            gm.register_buffer(b, t)
            names[b] = t
        n.target = b
    gm.recompile()
    for b in buffers:
        readers = [u for n in gm.graph.nodes if n.op == "get_attr" and n.target == b for u in n.users
                   if not ("copy_" in str(u.target) and u.args[0] is n)]
        if not readers:
            raise StateFolded(
                f"the cortex_m flow keeps no state: buffer '{b}' is written but never read "
                "(convert_pt2e folded quantize(buffer) into a constant)")


def run_steps_eager(name, method, gm):
    outs = []
    for k in range(STEPS):
        y = gm(*step_inputs(name, method, k))
        y = y if isinstance(y, (tuple, list)) else (y,)
        outs.append([t.detach().clone().contiguous().numpy() for t in y])
    return outs


def run_steps_runtime(buf, name, methods):
    """ExecuTorch's runtime: each method loaded ONCE, its steps executed in
    order (state carried in the method's planned memory)."""
    import executorch.kernels.quantized  # noqa: F401
    from executorch.runtime import Runtime

    program = Runtime.get().load_program(buf)
    out = {}
    for m in methods:
        method = program.load_method(m)
        steps = []
        for k in range(STEPS):
            ys = method.execute(list(step_inputs(name, m, k)))
            # Copies now: the runtime's outputs may alias its planned memory.
            steps.append([np.array(y.detach().numpy(), copy=True) for y in ys])
        out[m] = steps
    return out


HOW = {
    "f32": "float32, no quantization, no delegate",
    "int8": "portable int8: PT2E q/dq, XNNPACKQuantizer per-tensor, no delegate",
    "cm": "cortex_m flow: CortexMQuantizer + CortexMPassManager, cpu M33 (DSP), float I/O",
}
REFERENCE = {
    "f32": "executorch.runtime (pip wheel), one loaded method executed step after step",
    "int8": "executorch.runtime (pip wheel), one loaded method executed step after step",
    "cm": "the final edge graph run eagerly (cortex_m reference ops) as one module, step after step",
}


def export(name, path):
    modules = make(name)
    buffers = MODELS[name][2]
    if path == "f32":
        buf = export_f32(name, modules, buffers)
        return buf, run_steps_runtime(buf, name, modules)
    if path == "int8":
        buf = export_int8(name, modules, buffers)
        return buf, run_steps_runtime(buf, name, modules)
    return export_cm(name, modules, buffers)


def first_line(e):
    """The error's first line, and its cause's (the pass managers wrap the
    real error)."""
    def one(e):
        for line in str(e).strip().splitlines():
            if line.strip():
                return f"{type(e).__name__}: {line.strip()}"
        return type(e).__name__

    text = one(e)
    cause = e.__cause__ or e.__context__
    if cause is not None:
        text += f" (caused by {one(cause)})"
    return text[:400]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    index_path = os.path.join(args.out, "programs.json")
    old = {"programs": [], "failed": []}
    if os.path.exists(index_path):
        old = json.load(open(index_path))
    old_rules = {p["name"]: p for p in old["programs"]}
    programs, failed = [], []
    for model in MODELS:
        for path in PATHS:
            name = f"{model}_{path}"
            if args.only not in name:
                continue
            if model in FLOAT_ONLY and path != "f32":
                continue
            try:
                buf, refs = export(model, path)
            except Exception as e:  # recorded with the exporter's error, not fatal
                failed.append({"name": name, "model": model, "path": path, "error": first_line(e)})
                print(f"{name}: FAILED {first_line(e)}", flush=True)
                traceback.print_exc(limit=4, file=sys.stderr)
                continue
            base = os.path.join(args.out, name)
            open(base + ".pte", "wb").write(buf)
            facts = pte_facts.facts(bytes(buf))
            methods = []
            for m, steps in refs.items():
                d = f"{base}.{m}.steps"
                shutil.rmtree(d, ignore_errors=True)
                os.makedirs(d)
                for k, ys in enumerate(steps):
                    for i, x in enumerate(step_inputs(model, m, k)):
                        np.save(os.path.join(d, f"{k}.input{i}.npy"), x.numpy())
                    for j, y in enumerate(ys):
                        np.save(os.path.join(d, f"{k}.output{j}.npy"), y)
                plan = next(p for p in facts["methods"] if p["name"] == m)
                ops = [f"{o['name']}.{o['overload']}" if o["overload"] else o["name"] for o in plan["operators"]]
                methods.append({"name": m, "steps": len(steps), "instructions": plan["instructions"],
                                "ops": ops, "planned_buffers": plan["planned_buffers"]})
            prev = old_rules.get(name, {})
            entry = {
                "name": name,
                "model": model,
                "path": path,
                "dtype": "float32" if path == "f32" else "int8",
                "description": MODELS[model][3],
                "made_by": HOW[path],
                "reference": REFERENCE[path],
                "buffers": MODELS[model][2],
                "bytes": len(buf),
                "methods": methods,
                "rule": prev.get("rule", "exact"),
                "why": prev.get("why", ""),
            }
            with open(base + ".json", "w") as f:
                json.dump(entry, f, indent=1)
                f.write("\n")
            programs.append(entry)
            print(f"{name}: {len(buf)} B, " + "; ".join(f"{m['name']}: {' '.join(m['ops'])}" for m in methods),
                  flush=True)
    if args.only:
        keep_p = [p for p in old["programs"] if args.only not in p["name"]]
        keep_f = [f for f in old["failed"] if args.only not in f["name"]]
        programs, failed = keep_p + programs, keep_f + failed
    keys = [f"{m}_{p}" for m in MODELS for p in PATHS]
    programs.sort(key=lambda p: keys.index(p["name"]) if p["name"] in keys else len(keys))
    failed.sort(key=lambda p: keys.index(p["name"]) if p["name"] in keys else len(keys))
    with open(index_path, "w") as f:
        json.dump({"programs": programs, "failed": failed}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
