"""A program with an operator etch does not ship, for the custom-kernel tests:
`etch_demo::scaled_softsign(Tensor x, float s) -> Tensor`, defined with
torch.library together with its out variant, so to_executorch emits
`etch_demo::scaled_softsign.out`. ExecuTorch's pip runtime cannot run it (no
kernel), so the reference is the operator's own Python definition below,
whose f32 steps (abs, +1, divide, multiply: each correctly rounded) a Rust or
C kernel reproduces bit for bit.

usage: python custom_op.py OUT_DIR
writes OUT_DIR/custom_softsign.{pte,input0.npy,output0.npy}
"""

import os
import sys

import numpy as np
import torch
from torch.library import Library, impl

SCHEMA = "scaled_softsign(Tensor x, float s) -> Tensor"
OUT_SCHEMA = "scaled_softsign.out(Tensor x, float s, *, Tensor(a!) out) -> Tensor(a!)"

lib = Library("etch_demo", "DEF")
lib.define(SCHEMA)
lib.define(OUT_SCHEMA)


def reference(x, s):
    """The operator's definition, in f32: (x / (1 + |x|)) * s."""
    return (x / (1.0 + x.abs())) * s


@impl(lib, "scaled_softsign", "CompositeExplicitAutograd")
def scaled_softsign(x, s):
    return reference(x, s)


@impl(lib, "scaled_softsign", "Meta")
def scaled_softsign_meta(x, s):
    return torch.empty_like(x)


@impl(lib, "scaled_softsign.out", "CompositeExplicitAutograd")
def scaled_softsign_out(x, s, *, out):
    out.copy_(reference(x, s))
    return out


@impl(lib, "scaled_softsign.out", "Meta")
def scaled_softsign_out_meta(x, s, *, out):
    return out


class M(torch.nn.Module):
    def forward(self, x):
        return torch.ops.etch_demo.scaled_softsign(x, 0.75)


def main():
    from executorch.exir import ExecutorchBackendConfig, to_edge, EdgeCompileConfig

    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(5)
    x = torch.randn(2, 3, 5) * 4
    flat = x.view(-1)
    flat[0], flat[1], flat[2], flat[3] = 0.0, -0.0, float("inf"), float("-inf")
    ep = torch.export.export(M(), (x,), strict=True)
    edge = to_edge(ep, compile_config=EdgeCompileConfig(_check_ir_validity=False))
    buf = edge.to_executorch(ExecutorchBackendConfig()).buffer
    base = os.path.join(out_dir, "custom_softsign")
    open(base + ".pte", "wb").write(buf)
    np.save(base + ".input0.npy", x.numpy())
    np.save(base + ".output0.npy", reference(x, 0.75).numpy())
    print(f"custom_softsign: {len(buf)} B")


if __name__ == "__main__":
    main()
