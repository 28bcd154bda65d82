"""Exports programs whose planned memory is split over several memory ids
(tests/memory), with references from ExecuTorch's own runtime executing ONE
loaded method step after step.

usage: python memory_ids.py OUT_DIR

ExecuTorch's MemoryPlanningPass puts every planned tensor in memory id 1
unless a tensor's spec already names another id: its planning algorithms
(greedy, in MemoryPlanningAlgorithmSuite) then plan each id as its own
buffer (`non_const_buffer_sizes[id]`). `PlaceByRole` below is such an
algorithm: it gives each tensor an id by its role, then runs ExecuTorch's
own suite. A runtime gets one planned buffer per id and may put each in a
different memory (tightly coupled RAM for the activations, the RAM a DMA
engine or the application fills for the inputs and outputs, retained or
external RAM for the state).

Per program `<name>` it writes
  <name>.pte
  <name>.forward.steps/<k>.input<i>.npy, <k>.output<j>.npy   (k = 0, 1, ...)
  <name>.json     the roles, each memory id's size, how it was made
Programs:
  lstm_placed_f32   LSTMCell(8, 16) + Linear(16, 4), (h, c) in buffers, float32:
                    id 1 activations, id 2 the graph's input and output,
                    id 3 the state (h, c)
  mlp_placed_f32    Linear(16, 32) -> ReLU -> Linear(32, 32) -> ReLU ->
                    Linear(32, 4), float32: id 1 activations, id 2 input
                    and output (no state: two ids)
"""

import argparse
import json
import os
import shutil
import sys

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(__file__))
import pte_facts  # noqa: E402

WEIGHT_SEED = 4321
STEP_SEED = 11
STEPS = 4


class LstmPlaced(nn.Module):
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


class MlpPlaced(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(16, 32)
        self.b = nn.Linear(32, 32)
        self.c = nn.Linear(32, 4)

    def forward(self, x):
        return self.c(torch.relu(self.b(torch.relu(self.a(x)))))


# name: (factory, input shape, buffers, {role: memory id}, description)
PROGRAMS = {
    "lstm_placed_f32": (LstmPlaced, (1, 8), ["h", "c"], {"activations": 1, "io": 2, "state": 3},
                        "LSTMCell(8, 16) + Linear(16, 4), (h, c) in buffers"),
    "mlp_placed_f32": (MlpPlaced, (1, 16), [], {"activations": 1, "io": 2},
                       "Linear(16, 32) -> ReLU -> Linear(32, 32) -> ReLU -> Linear(32, 4)"),
}


class PlaceByRole:
    """A memory_planning_algo for MemoryPlanningPass: sets each planned
    tensor's memory id by its role (graph input/output, mutable state, every
    other tensor an activation), then plans each id with ExecuTorch's own
    MemoryPlanningAlgorithmSuite (greedy)."""

    def __init__(self, ids):
        from executorch.exir.memory_planning import MemoryPlanningAlgorithmSuite

        self.ids = ids
        self.suite = MemoryPlanningAlgorithmSuite()
        self.roles = {}

    def __call__(self, alignment, specs, graph_module, graph_signature, extra_padding):
        io, state = set(), set()
        sig = graph_signature
        mutated = set(sig.buffers_to_mutate.values()) if sig is not None else set()
        for node in graph_module.graph.nodes:
            spec = node.meta.get("spec")
            if node.op == "placeholder" and sig is not None:
                if node.name in sig.user_inputs:
                    io.add(id(spec))
                elif sig.inputs_to_buffers.get(node.name) in mutated:
                    state.add(id(spec))
            if node.op == "output":
                outs = node.args[0]
                user = outs[len(outs) - len(sig.user_outputs):] if sig is not None else outs
                for o in user:
                    if isinstance(o, torch.fx.Node) and o.meta.get("spec") is not None:
                        io.add(id(o.meta["spec"]))
        self.roles = {"activations": 0, "io": 0, "state": 0}
        for spec in specs:
            role = "state" if id(spec) in state else "io" if id(spec) in io else "activations"
            spec.mem_id = self.ids.get(role, 1)
            self.roles[role] += 1
        return self.suite(alignment, specs, graph_module, graph_signature, extra_padding)


def step_inputs(name, k):
    g = torch.Generator().manual_seed(STEP_SEED * 1000 + k)
    return (torch.randn(PROGRAMS[name][1], generator=g),)


def export(name):
    from executorch.exir import ExecutorchBackendConfig, to_edge
    from executorch.exir.passes import MemoryPlanningPass
    from executorch.exir.passes.init_mutable_pass import InitializedMutableBufferPass

    factory, _, buffers, ids, _ = PROGRAMS[name]
    torch.manual_seed(WEIGHT_SEED)
    mod = factory().eval()
    ep = torch.export.export(mod, step_inputs(name, 0), strict=True)
    algo = PlaceByRole(ids)
    config = ExecutorchBackendConfig(
        passes=[InitializedMutableBufferPass(buffers)] if buffers else [],
        memory_planning_pass=MemoryPlanningPass(memory_planning_algo=algo),
    )
    buf = to_edge(ep).to_executorch(config).buffer
    return buf, algo.roles


def run_steps_runtime(buf, name):
    """ExecuTorch's runtime: the method loaded ONCE, its steps in order."""
    from executorch.runtime import Runtime

    method = Runtime.get().load_program(buf).load_method("forward")
    steps = []
    for k in range(STEPS):
        ys = method.execute(list(step_inputs(name, k)))
        steps.append([np.array(y.detach().numpy(), copy=True) for y in ys])
    return steps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name, (_, _, buffers, ids, description) in PROGRAMS.items():
        buf, roles = export(name)
        steps = run_steps_runtime(buf, name)
        base = os.path.join(args.out, name)
        open(base + ".pte", "wb").write(buf)
        d = base + ".forward.steps"
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        for k, ys in enumerate(steps):
            for i, x in enumerate(step_inputs(name, k)):
                np.save(os.path.join(d, f"{k}.input{i}.npy"), x.numpy())
            for j, y in enumerate(ys):
                np.save(os.path.join(d, f"{k}.output{j}.npy"), y)
        plan = pte_facts.facts(bytes(buf))["methods"][0]
        ops = [f"{o['name']}.{o['overload']}" if o["overload"] else o["name"] for o in plan["operators"]]
        entry = {
            "name": name,
            "dtype": "float32",
            "description": description,
            "made_by": "float32, no quantization, no delegate; MemoryPlanningPass("
                       "memory_planning_algo=PlaceByRole) of tools/export/memory_ids.py",
            "reference": "executorch.runtime (pip wheel), one loaded method executed step after step",
            "buffers": buffers,
            "memory_ids": {role: i for role, i in ids.items()},
            "tensors_per_role": roles,
            "bytes": len(buf),
            "methods": [{"name": "forward", "steps": len(steps), "instructions": plan["instructions"],
                         "ops": ops, "planned_buffers": plan["planned_buffers"]}],
            "rule": "exact",
            "why": "",
        }
        with open(base + ".json", "w") as f:
            json.dump(entry, f, indent=1)
            f.write("\n")
        print(f"{name}: {len(buf)} B, planned buffers {plan['planned_buffers']} ({roles})", flush=True)


if __name__ == "__main__":
    main()
