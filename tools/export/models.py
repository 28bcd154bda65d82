"""Models, fixed inputs and calibration data for the fixtures."""

import torch
from torch import nn

WEIGHT_SEED = 1234
INPUT_SEED = 0
CALIB_SEED = 4321


class Tiny(nn.Module):
    """Linear(16,32) -> ReLU -> Linear(32,8) on a 1x16 input."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(32, 8)

    def forward(self, x):
        return self.fc2(self.relu(self.fc1(x)))


class Zoo(nn.Module):
    """Exercises the cortex_m elementwise, activation, pooling, transposed-conv,
    pad and softmax operators (and the float ops the flow leaves behind)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 8, 1)
        self.tconv = nn.ConvTranspose2d(8, 4, 2, stride=2)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        a = torch.relu(self.conv(x))
        b = self.conv2(a)
        c = a + b
        d = c * torch.sigmoid(b) + c / (torch.sigmoid(a) + 1.0)
        e = torch.nn.functional.max_pool2d(d, 2)
        f = torch.maximum(e, torch.minimum(e, e * 0.5))
        g = self.tconv(f)
        h = torch.nn.functional.pad(g, (1, 1, 1, 1))
        i = torch.nn.functional.avg_pool2d(h, 2)
        j = i.flatten(1)[:, :32]
        return torch.softmax(self.fc(j), dim=-1)


class Attn(nn.Module):
    """Attention-style scores: batch matmul of two activations, softmax, transpose."""

    def __init__(self):
        super().__init__()
        self.q = nn.Linear(16, 16)
        self.k = nn.Linear(16, 16)

    def forward(self, x):
        scores = torch.matmul(self.q(x), self.k(x).transpose(1, 2))
        return torch.softmax(scores, dim=-1).permute(0, 2, 1)


class FloatZoo(nn.Module):
    """Float model over the remaining portable operators: hardtanh, clamp,
    sigmoid, max_pool2d_with_indices, mean, softmax, cat, squeeze, unsqueeze,
    expand, full. (No mm/bmm: ExecuTorch's Python runtime runs its optimized
    kernels for those, whose summation order differs from the portable ones
    etch reproduces; they are tested against plain loops instead.)"""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 6)

    def forward(self, x):  # [2, 4, 6, 8]
        f = torch.nn.functional
        a = f.hardtanh(x, -0.5, 0.7)
        b = torch.clamp(x, min=-0.3, max=0.4)
        c = torch.sigmoid(a + b)
        d = f.max_pool2d(c, 2)
        e = torch.mean(d, dim=[2, 3], keepdim=True)
        g = self.fc(torch.softmax(x, dim=-1))
        i = g.reshape(48, 6)[:, :3]
        j = torch.cat([i, i * 2.0], dim=1)
        k = j.unsqueeze(0).squeeze(0)
        l = e.expand(2, 4, 3, 4).reshape(48, 2)
        return torch.cat([k, l, torch.full((48, 1), 0.25)], dim=1)


def make(name: str):
    """Returns (model in eval mode with deterministic weights, input shape)."""
    torch.manual_seed(WEIGHT_SEED)
    if name == "tiny":
        return Tiny().eval(), (1, 16)
    if name == "dscnn":
        from executorch.examples.models.mlperf_tiny.ds_cnn import DSCNNKWS

        model = DSCNNKWS()
        # Random BN statistics so that folding gives non-trivial biases.
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.data.uniform_(0.5, 1.5)
                m.bias.data.uniform_(-0.5, 0.5)
        return model.eval(), (1, 1, 49, 10)
    if name == "fzoo":
        return FloatZoo().eval(), (2, 4, 6, 8)
    if name == "zoo":
        return Zoo().eval(), (1, 4, 8, 8)
    if name == "attn":
        return Attn().eval(), (1, 8, 16)
    raise ValueError(name)


def fixed_input(shape):
    torch.manual_seed(INPUT_SEED)
    return torch.randn(shape)


def calibration(shape, n=15):
    g = torch.Generator().manual_seed(CALIB_SEED)
    return [fixed_input(shape)] + [torch.randn(shape, generator=g) for _ in range(n)]
