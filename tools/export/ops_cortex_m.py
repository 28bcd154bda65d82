"""Cortex-M operators no other family's case reaches, for ops.py: the int8
maximum, and the *_nhwc operators of the cortex_m flow with explicit layout
(between cortex_m::transpose calls). A separate module so that its seeded
tensors do not move the random state of the other families' cases.
"""

import torch

from ops import case

torch.manual_seed(11)
nn = torch.nn


class MaximumConst(torch.nn.Module):
    """torch.maximum against a constant: the cortex_m flow turns the int8
    aten.maximum into cortex_m::maximum."""

    def __init__(self, shape):
        super().__init__()
        self.register_buffer("c", torch.randn(*shape) * 0.5)

    def forward(self, x):
        return torch.maximum(x, self.c)


CASES = [
    case("maximum_cortex_m", MaximumConst((1, 3, 4, 4)), (torch.randn(1, 3, 4, 4),), quant="cortex_m"),
]

# cortex_m flow with explicit layout (a transposed convolution with output_padding fails
# the flow's ValidateCortexMExplicitLayoutPass in 1.5.1, so none here).
CASES += [
    case("max_pool2d_cortex_m_nhwc", nn.MaxPool2d(3, 2, 1), (torch.randn(1, 4, 6, 6),), quant="cortex_m_nhwc"),
    case("conv_transpose2d_cortex_m_nhwc", nn.ConvTranspose2d(4, 3, 3, stride=2), (torch.randn(1, 4, 4, 4),), quant="cortex_m_nhwc"),
]
