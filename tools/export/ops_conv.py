"""Convolution family cases for ops.py: aten::convolution.out, 1-D and 2-D,
plain and transposed, grouped, depthwise, strided, padded, dilated, with and
without bias, contiguous and channels-last, float and the portable int8 path
(q/dq around a float convolution)."""

import torch

from ops import case

torch.manual_seed(11)


class Conv(torch.nn.Module):
    """One torch.nn conv layer; `channels_last` runs it on an NHWC input."""

    def __init__(self, layer, channels_last=False):
        super().__init__()
        self.layer = layer
        self.channels_last = channels_last
        # Edge values in the weights too: an exact zero and a negative zero.
        with torch.no_grad():
            w = self.layer.weight.view(-1)
            w[0] = 0.0
            w[-1] = -0.0

    def forward(self, x):
        if self.channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        return self.layer(x)


def x(*shape):
    t = torch.randn(*shape)
    flat = t.view(-1)
    # ±0 and a large value (rounding of the running sum matters).
    flat[0], flat[1], flat[-1] = 0.0, -0.0, 1.0e4
    return t


nn = torch.nn
CASES = [
    # 1-D
    case("conv1d_f32", Conv(nn.Conv1d(3, 5, 3)), (x(2, 3, 11),)),
    case("conv1d_pad_stride_dil_f32", Conv(nn.Conv1d(4, 6, 3, stride=2, padding=2, dilation=2)), (x(1, 4, 17),)),
    case("conv1d_groups_nobias_f32", Conv(nn.Conv1d(6, 4, 5, padding=2, groups=2, bias=False)), (x(1, 6, 12),)),
    case("conv1d_depthwise_f32", Conv(nn.Conv1d(5, 10, 3, padding=1, groups=5)), (x(1, 5, 9),)),
    # 2-D
    case("conv2d_f32", Conv(nn.Conv2d(3, 4, 3)), (x(2, 3, 7, 6),)),
    case("conv2d_pad_stride_dil_f32", Conv(nn.Conv2d(2, 3, (3, 2), stride=(2, 1), padding=(1, 2), dilation=(2, 3))), (x(1, 2, 9, 8),)),
    case("conv2d_groups_f32", Conv(nn.Conv2d(4, 6, 3, padding=1, groups=2)), (x(1, 4, 5, 5),)),
    case("conv2d_depthwise_f32", Conv(nn.Conv2d(3, 3, 3, padding=1, groups=3, bias=False)), (x(1, 3, 6, 5),)),
    case("conv2d_channels_last_f32", Conv(nn.Conv2d(3, 5, 3, padding=1), channels_last=True), (x(1, 3, 6, 6),)),
    # transposed
    case("conv_transpose1d_f32", Conv(nn.ConvTranspose1d(3, 4, 3, stride=2, padding=1, output_padding=1)), (x(1, 3, 7),)),
    case("conv_transpose1d_groups_dil_f32", Conv(nn.ConvTranspose1d(4, 6, 3, stride=3, dilation=2, groups=2, bias=False)), (x(2, 4, 5),)),
    case("conv_transpose2d_f32", Conv(nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1)), (x(1, 3, 4, 5),)),
    case("conv_transpose2d_groups_dil_f32", Conv(nn.ConvTranspose2d(4, 4, (2, 3), stride=(1, 2), padding=(0, 1), dilation=(2, 1), groups=4)), (x(1, 4, 3, 4),)),
    case("conv_transpose2d_channels_last_f32", Conv(nn.ConvTranspose2d(2, 3, 3, stride=2), channels_last=True), (x(1, 2, 4, 4),)),
    # portable int8: dequantize -> float convolution -> quantize
    case("conv1d_int8", Conv(nn.Conv1d(4, 6, 3, padding=1)), (torch.randn(1, 4, 16),), quant="int8"),
    case("conv2d_int8", Conv(nn.Conv2d(3, 4, 3, padding=1)), (torch.randn(1, 3, 8, 8),), quant="int8"),
    # cortex_m flow: CortexMQuantizer + CortexMPassManager leave a Conv1d as a
    # float aten::convolution between cortex_m::dequantize/quantize_per_tensor
    # (no cortex_m::quantized_conv2d on an unsqueezed tensor). The reference's
    # float convolution is PyTorch's eager one (its summation order may differ
    # from portable's; the requantized int8 outputs here agree exactly). With a
    # ReLU after it the flow emits aten::clamp.out on the int8 tensor.
    case("conv1d_cortex_m", Conv(nn.Conv1d(4, 6, 3, padding=1)), (torch.randn(1, 4, 16),), quant="cortex_m"),
]
