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
    raise ValueError(name)


def fixed_input(shape):
    torch.manual_seed(INPUT_SEED)
    return torch.randn(shape)


def calibration(shape, n=15):
    g = torch.Generator().manual_seed(CALIB_SEED)
    return [fixed_input(shape)] + [torch.randn(shape, generator=g) for _ in range(n)]
