"""The model zoo's architectures: small vision, audio and sequence
models with seeded random weights. `ARCHS` maps a name to (factory, input
shape, one-line description); `make(name)` builds one in eval mode.

Inputs and calibration data come from models.fixed_input / models.calibration
(the fixtures' conventions)."""

import torch
from torch import nn
from torch.nn import functional as F

from models import WEIGHT_SEED


def randomize_batch_norm(model):
    """Random BN statistics and affine parameters (seeded by the caller), so
    that BN is not an identity and folding gives non-trivial biases."""
    for m in model.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 1.5)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.5, 0.5)
    return model


class CnnBn(nn.Module):
    """Conv-BN-ReLU ×2 with max pooling, global average pool, linear."""

    def __init__(self):
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8)
        self.c2, self.b2 = nn.Conv2d(8, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.b1(self.c1(x))), 2)
        x = F.relu(self.b2(self.c2(x)))
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


class LeNet(nn.Module):
    """LeNet-5: conv, tanh, average pooling, fully connected."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(1, 6, 5, padding=2)
        self.c2 = nn.Conv2d(6, 16, 5)
        self.f1, self.f2, self.f3 = nn.Linear(16 * 5 * 5, 120), nn.Linear(120, 84), nn.Linear(84, 10)

    def forward(self, x):
        x = F.avg_pool2d(torch.tanh(self.c1(x)), 2)
        x = F.avg_pool2d(torch.tanh(self.c2(x)), 2)
        x = torch.tanh(self.f1(x.flatten(1)))
        return self.f3(torch.tanh(self.f2(x)))


def conv_bn(cin, cout, k, stride=1, groups=1):
    return nn.Sequential(nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout))


class InvertedResidual(nn.Module):
    """MobileNetV2 block: 1×1 expand, 3×3 depthwise, 1×1 project (ReLU6),
    residual add when the shape allows."""

    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hid = cin * expand
        self.expand = conv_bn(cin, hid, 1)
        self.dw = conv_bn(hid, hid, 3, stride, groups=hid)
        self.project = conv_bn(hid, cout, 1)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.project(F.relu6(self.dw(F.relu6(self.expand(x)))))
        return x + y if self.residual else y


class MobileNetV2(nn.Module):
    """A small MobileNetV2: stem, four inverted residual blocks, head."""

    def __init__(self):
        super().__init__()
        self.stem = conv_bn(3, 8, 3, 2)
        self.blocks = nn.Sequential(
            InvertedResidual(8, 8, 1, 2),
            InvertedResidual(8, 16, 2, 4),
            InvertedResidual(16, 16, 1, 4),
            InvertedResidual(16, 24, 2, 4),
        )
        self.fc = nn.Linear(24, 10)

    def forward(self, x):
        x = self.blocks(F.relu6(self.stem(x)))
        return self.fc(x.mean(dim=(2, 3)))


class SqueezeExcite(nn.Module):
    """MobileNetV3 squeeze-and-excite: global mean, 1×1 conv, ReLU, 1×1 conv,
    hard sigmoid written as relu6(x + 3) / 6 (as torchvision's _make_divisible
    era code and many ports do), channel scale."""

    def __init__(self, c, r=4):
        super().__init__()
        self.fc1, self.fc2 = nn.Conv2d(c, c // r, 1), nn.Conv2d(c // r, c, 1)

    def forward(self, x):
        s = F.relu(self.fc1(x.mean(dim=(2, 3), keepdim=True)))
        return x * (F.relu6(self.fc2(s) + 3.0) / 6.0)


class V3Block(nn.Module):
    def __init__(self, cin, cout, stride, hid, se):
        super().__init__()
        self.expand = conv_bn(cin, hid, 1)
        self.dw = conv_bn(hid, hid, 3, stride, groups=hid)
        self.se = SqueezeExcite(hid) if se else nn.Identity()
        self.project = conv_bn(hid, cout, 1)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = F.hardswish(self.dw(F.hardswish(self.expand(x))))
        y = self.project(self.se(y))
        return x + y if self.residual else y


class MobileNetV3(nn.Module):
    """A small MobileNetV3: hardswish, squeeze-and-excite with hard sigmoid."""

    def __init__(self):
        super().__init__()
        self.stem = conv_bn(3, 8, 3, 2)
        self.blocks = nn.Sequential(V3Block(8, 8, 1, 16, True), V3Block(8, 16, 2, 32, True), V3Block(16, 16, 1, 48, True))
        self.fc1, self.fc2 = nn.Linear(16, 32), nn.Linear(32, 10)

    def forward(self, x):  # torchvision's head: pool, linear, hardswish, linear
        x = self.blocks(F.hardswish(self.stem(x)))
        return self.fc2(F.hardswish(self.fc1(x.mean(dim=(2, 3)))))


class UNet(nn.Module):
    """A two-level U-Net: max-pool down, transposed-conv and nearest-neighbour
    upsampling up, skip connections by concatenation, sigmoid mask."""

    def __init__(self):
        super().__init__()
        self.e1 = nn.Conv2d(3, 8, 3, padding=1)
        self.e2 = nn.Conv2d(8, 16, 3, padding=1)
        self.mid = nn.Conv2d(16, 16, 3, padding=1)
        self.up2 = nn.ConvTranspose2d(16, 16, 2, stride=2)
        self.d2 = nn.Conv2d(32, 8, 3, padding=1)
        self.d1 = nn.Conv2d(16, 8, 3, padding=1)
        self.out = nn.Conv2d(8, 1, 1)

    def forward(self, x):
        a = F.relu(self.e1(x))
        b = F.relu(self.e2(F.max_pool2d(a, 2)))
        m = F.relu(self.mid(F.max_pool2d(b, 2)))
        u2 = F.relu(self.d2(torch.cat([self.up2(m), b], dim=1)))
        u1 = F.relu(self.d1(torch.cat([F.interpolate(u2, scale_factor=2.0, mode="nearest"), a], dim=1)))
        return torch.sigmoid(self.out(u1))


class EncoderBlock(nn.Module):
    """Pre-norm transformer encoder block written out: LayerNorm, fused QKV
    projection split with torch.split, 2-head scaled dot-product attention
    (matmul, softmax), output projection, GELU feed-forward, residuals."""

    def __init__(self, d=32, heads=2, ff=64):
        super().__init__()
        self.d, self.h = d, heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ff1, self.ff2 = nn.Linear(d, ff), nn.Linear(ff, d)

    def forward(self, x):  # [B, T, d]
        b, t, d = x.shape
        q, k, v = torch.split(self.qkv(self.ln1(x)), [d, d, d], dim=-1)
        q, k, v = (z.reshape(b, t, self.h, d // self.h).transpose(1, 2) for z in (q, k, v))
        a = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) * (1.0 / (d // self.h) ** 0.5), dim=-1)
        a = torch.matmul(a, v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(a)
        return x + self.ff2(F.gelu(self.ff1(self.ln2(x))))


class Transformer(nn.Module):
    """Token classifier: input projection, one encoder block, mean over time, head."""

    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(16, 32)
        self.block = EncoderBlock()
        self.head = nn.Linear(32, 4)

    def forward(self, x):  # [1, 8, 16]
        return self.head(self.block(self.inp(x)).mean(dim=1))


class TinyViT(nn.Module):
    """Vision transformer with PyTorch's own nn.TransformerEncoderLayer: 4×4
    patch embedding, learned position embedding, one pre-norm layer."""

    def __init__(self):
        super().__init__()
        self.patch = nn.Conv2d(1, 16, 4, stride=4)
        self.pos = nn.Parameter(torch.randn(1, 16, 16) * 0.1)
        self.layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True, norm_first=True)
        self.head = nn.Linear(16, 10)

    def forward(self, x):  # [1, 1, 16, 16]
        t = self.patch(x).flatten(2).transpose(1, 2) + self.pos
        return self.head(self.layer(t).mean(dim=1))


class Gru(nn.Module):
    """nn.GRU over 8 steps, linear head on the last step."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(10, 16, batch_first=True)
        self.head = nn.Linear(16, 4)

    def forward(self, x):  # [1, 8, 10]
        y, _ = self.rnn(x)
        return self.head(y[:, -1])


class Lstm(nn.Module):
    """Two-layer nn.LSTM over 8 steps, linear head on the last step."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(10, 16, num_layers=2, batch_first=True)
        self.head = nn.Linear(16, 4)

    def forward(self, x):  # [1, 8, 10]
        y, _ = self.rnn(x)
        return self.head(y[:, -1])


class Audio1d(nn.Module):
    """1-D conv audio net on a raw waveform: strided Conv1d-BN-ReLU ×3, max
    pool, global average, linear."""

    def __init__(self):
        super().__init__()
        self.c1, self.b1 = nn.Conv1d(1, 8, 9, stride=2, padding=4), nn.BatchNorm1d(8)
        self.c2, self.b2 = nn.Conv1d(8, 16, 5, stride=2, padding=2), nn.BatchNorm1d(16)
        self.c3, self.b3 = nn.Conv1d(16, 16, 3, padding=1), nn.BatchNorm1d(16)
        self.fc = nn.Linear(16, 6)

    def forward(self, x):  # [1, 1, 256]
        x = F.relu(self.b1(self.c1(x)))
        x = F.max_pool1d(F.relu(self.b2(self.c2(x))), 2)
        x = F.relu(self.b3(self.c3(x)))
        return self.fc(x.mean(dim=-1))


class Tcn(nn.Module):
    """Temporal convolution network: causal (left-padded) dilated Conv1d
    residual blocks over a [1, 8, 32] feature sequence."""

    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList(nn.Conv1d(8, 8, 3, dilation=d) for d in (1, 2, 4))
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        for conv, d in zip(self.convs, (1, 2, 4)):
            x = x + F.relu(conv(F.pad(x, (2 * d, 0))))
        return self.fc(x[:, :, -1])


class MlpTanh(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1, self.l2, self.l3 = nn.Linear(20, 32), nn.Linear(32, 32), nn.Linear(32, 5)

    def forward(self, x):
        return self.l3(torch.tanh(self.l2(torch.tanh(self.l1(x)))))


class MlpAct(nn.Module):
    """MLP with ELU, leaky ReLU and SiLU activations."""

    def __init__(self):
        super().__init__()
        self.l1, self.l2, self.l3, self.l4 = nn.Linear(20, 32), nn.Linear(32, 32), nn.Linear(32, 32), nn.Linear(32, 5)

    def forward(self, x):
        x = F.elu(self.l1(x))
        x = F.leaky_relu(self.l2(x), 0.1)
        return self.l4(F.silu(self.l3(x)))


class MlpMath(nn.Module):
    """MLP whose features go through elementwise math: exp, abs, neg, sub,
    div, sum."""

    def __init__(self):
        super().__init__()
        self.l1, self.l2 = nn.Linear(20, 32), nn.Linear(32, 8)

    def forward(self, x):  # [2, 20]
        y = self.l1(x)
        z = torch.exp(-torch.abs(y))
        w = (y - z) / (torch.abs(y) + 1.0)
        o = self.l2(w)
        return o - o.sum(dim=-1, keepdim=True) / 8.0


def _mlperf(cls_name):
    def make():
        from executorch.examples.models import mlperf_tiny

        return getattr(mlperf_tiny, cls_name)()

    return make


ARCHS = {
    # name: (factory, input shape, description)
    "cnn_bn": (CnnBn, (1, 3, 16, 16), "CNN: Conv-BN-ReLU ×2, max pool, global average pool, linear"),
    "lenet": (LeNet, (1, 1, 28, 28), "LeNet-5: conv, tanh, average pool, linear"),
    "mobilenet_v2": (MobileNetV2, (1, 3, 32, 32), "MobileNetV2: inverted residual blocks (1×1, depthwise 3×3, ReLU6, residual add)"),
    "mobilenet_v3": (MobileNetV3, (1, 3, 32, 32), "MobileNetV3: hardswish, squeeze-excite with relu6(x+3)/6, residual add"),
    "unet": (UNet, (1, 3, 16, 16), "U-Net: max pool down, transposed conv + nearest upsample up, concat skips, sigmoid"),
    "transformer": (Transformer, (1, 8, 16), "Transformer encoder block: LayerNorm, QKV split, 2-head attention, GELU MLP"),
    "vit": (TinyViT, (1, 1, 16, 16), "ViT: 4×4 patch conv, position embedding, nn.TransformerEncoderLayer (norm first)"),
    "gru": (Gru, (1, 8, 10), "nn.GRU (hidden 16, 8 steps), linear head"),
    "lstm": (Lstm, (1, 8, 10), "nn.LSTM (2 layers, hidden 16, 8 steps), linear head"),
    "audio1d": (Audio1d, (1, 1, 256), "1-D conv audio net: Conv1d-BN-ReLU ×3 (strided), max pool, mean, linear"),
    "tcn": (Tcn, (1, 8, 32), "TCN: causal dilated Conv1d (1, 2, 4) residual blocks, linear"),
    "mlp_tanh": (MlpTanh, (1, 20), "MLP: Linear-tanh ×2, linear"),
    "mlp_act": (MlpAct, (4, 20), "MLP: ELU, leaky ReLU, SiLU"),
    "mlp_math": (MlpMath, (2, 20), "MLP: exp, abs, neg, sub, div, sum"),
    "resnet8": (_mlperf("ResNet8"), (1, 3, 32, 32), "MLPerf Tiny image classification ResNet-8 (executorch.examples.models.mlperf_tiny)"),
    "mobilenet_v1_025": (_mlperf("MobileNetV1025"), (1, 3, 96, 96), "MLPerf Tiny visual wake words MobileNetV1 0.25 (executorch.examples.models.mlperf_tiny)"),
    "ds_cnn": (_mlperf("DSCNNKWS"), (1, 1, 49, 10), "MLPerf Tiny keyword spotting DS-CNN (executorch.examples.models.mlperf_tiny)"),
    "autoencoder": (_mlperf("DeepAutoEncoder"), (1, 640), "MLPerf Tiny anomaly detection deep autoencoder (executorch.examples.models.mlperf_tiny)"),
}


def make(name):
    """(model in eval mode with weights from WEIGHT_SEED, input shape)."""
    factory, shape, _ = ARCHS[name]
    torch.manual_seed(WEIGHT_SEED)
    return randomize_batch_norm(factory()).eval(), shape
