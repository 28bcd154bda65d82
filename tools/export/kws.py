"""The MLPerf Tiny keyword-spotting DS-CNN, trained weights, as ExecuTorch programs.

usage: python kws.py [--ref-tflite PATH] [--clips DIR] [--eval DIR] [--out DIR] [--twice]

1. Reads the float weights of mlcommons/tiny's `kws_ref_model_float32.tflite`
   (flatbuffer parsed with the `tflite` package) into a PyTorch DS-CNN
   (`KwsDSCNN`: TFLite OHWI / 1HWO weights -> PyTorch OIHW, TF "same" padding
   reproduced exactly, 25x5 average pool, FC 64->12, softmax).
2. Checks that the PyTorch float model reproduces the .tflite run by LiteRT
   (ai-edge-litert) on the MFCCs of the committed clips (tools/clips/wav).
3. Quantizes with upstream ExecuTorch's Cortex-M flow (the same code as the
   fixtures: export_fixtures.cortex_m_program), calibrated on the MFCCs of the
   committed clips, and writes models/kws/*.pte with reference outputs for every
   committed clip (ExecuTorch's reference cortex_m ops over the final graph).
4. With --eval DIR (a larger generated clip set, tools/clips/make_clips.py):
   float top-1 accuracy and the agreement of each .pte's top-1 with the float
   model's, written to models/kws/accuracy.json.

MFCCs come from tools/frontend/mfcc_ref.py (the one numpy reference of the
MLPerf front end).
"""

import argparse
import glob
import json
import os
import sys

import numpy as np
import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tools", "frontend"))
import mfcc_ref  # noqa: E402

LABELS = ["down", "go", "left", "no", "off", "on", "right", "stop", "up", "yes", "silence", "unknown"]
DEFAULT_TFLITE = "/work/shared/models/mlperf-tiny-kws/kws_ref_model_float32.tflite"


# --------------------------------------------------------------------------- tflite weights

def read_tflite(path):
    """Returns the DS-CNN's layers from the .tflite, in graph order:
    [(kind, weight float32 array in TFLite layout, bias, options dict)]."""
    import tflite

    buf = open(path, "rb").read()
    m = tflite.Model.GetRootAsModel(buf, 0)
    sg = m.Subgraphs(0)
    names = {v: k for k, v in tflite.BuiltinOperator.__dict__.items() if not k.startswith("_")}

    def tensor(i):
        t = sg.Tensors(i)
        data = m.Buffers(t.Buffer()).DataAsNumpy()
        shape = t.ShapeAsNumpy().tolist()
        dt = {tflite.TensorType.FLOAT32: np.float32, tflite.TensorType.INT8: np.int8,
              tflite.TensorType.INT32: np.int32}[t.Type()]
        a = np.frombuffer(data.tobytes(), dtype=dt).reshape(shape)
        if t.Type() == tflite.TensorType.INT8:
            # The "float32" reference stores the 1x1/first conv weights as int8
            # with one per-tensor scale (weight-only quantization); dequantize.
            q = t.Quantization()
            assert q.ScaleLength() == 1 and int(q.ZeroPointAsNumpy()[0]) == 0
            a = (a.astype(np.float32) * np.float32(q.ScaleAsNumpy()[0])).astype(np.float32)
        return a

    def opts(op, cls):
        o = getattr(tflite, cls)()
        b = op.BuiltinOptions()
        o.Init(b.Bytes, b.Pos)
        return o

    layers = []
    for i in range(sg.OperatorsLength()):
        op = sg.Operators(i)
        code = m.OperatorCodes(op.OpcodeIndex())
        kind = names[max(code.BuiltinCode(), code.DeprecatedBuiltinCode())]
        ins = op.InputsAsNumpy().tolist()
        if kind in ("CONV_2D", "DEPTHWISE_CONV_2D"):
            o = opts(op, "Conv2DOptions" if kind == "CONV_2D" else "DepthwiseConv2DOptions")
            layers.append((kind, tensor(ins[1]), tensor(ins[2]), {
                "stride": (o.StrideH(), o.StrideW()), "same": o.Padding() == tflite.Padding.SAME,
                "relu": o.FusedActivationFunction() == tflite.ActivationFunctionType.RELU}))
        elif kind == "AVERAGE_POOL_2D":
            o = opts(op, "Pool2DOptions")
            layers.append((kind, None, None, {"kernel": (o.FilterHeight(), o.FilterWidth()),
                                              "stride": (o.StrideH(), o.StrideW())}))
        elif kind == "FULLY_CONNECTED":
            layers.append((kind, tensor(ins[1]), tensor(ins[2]), {}))
        else:
            layers.append((kind, None, None, {}))
    return layers


def tf_same_padding(size, kernel, stride):
    """TF 'SAME': out = ceil(size/stride); the extra pad goes after (bottom/right)."""
    out = -(-size // stride)
    total = max((out - 1) * stride + kernel - size, 0)
    return total // 2, total - total // 2


class KwsDSCNN(nn.Module):
    """MLPerf Tiny KWS DS-CNN exactly as the .tflite computes it (BN already
    folded into the conv biases by the TFLite converter).

    The first conv (10x4, stride 2, TF 'same') pads 4 rows on top, 5 below and
    1 column each side: PyTorch's conv padding is symmetric, so the model pads
    the one extra bottom row explicitly (one cortex_m::pad, int8, pad value =
    the input zero point = float 0) and lets the conv pad (4, 1).
    Output: softmax probabilities over LABELS, like the .tflite."""

    def __init__(self, in_hw=(49, 10)):
        super().__init__()
        h, w = in_hw
        top, bottom = tf_same_padding(h, 10, 2)
        left, right = tf_same_padding(w, 4, 2)
        assert left == right and bottom - top in (0, 1), (top, bottom, left, right)
        self.extra_bottom = bottom - top
        self.conv1 = nn.Conv2d(1, 64, (10, 4), stride=2, padding=(top, left))
        self.blocks = nn.ModuleList()
        for _ in range(4):
            self.blocks.append(nn.Conv2d(64, 64, 3, padding=1, groups=64))
            self.blocks.append(nn.Conv2d(64, 64, 1))
        # Global average over the 25x5 map. count_include_pad=False: there is no
        # padding, and with True the Cortex-M pass would insert a no-op pad copy.
        self.pool = nn.AvgPool2d((25, 5), count_include_pad=False)
        self.fc = nn.Linear(64, 12)

    def forward(self, x):  # [N, 1, 49, 10] MFCC
        if self.extra_bottom:
            x = nn.functional.pad(x, (0, 0, 0, self.extra_bottom))
        x = torch.relu(self.conv1(x))
        for conv in self.blocks:
            x = torch.relu(conv(x))
        x = self.pool(x).flatten(1)
        return torch.softmax(self.fc(x), dim=-1)


def load_model(tflite_path):
    layers = read_tflite(tflite_path)
    kinds = [k for k, *_ in layers]
    expect = ["CONV_2D"] + ["DEPTHWISE_CONV_2D", "CONV_2D"] * 4 + ["AVERAGE_POOL_2D", "RESHAPE",
                                                                   "FULLY_CONNECTED", "SOFTMAX"]
    assert kinds == expect, kinds
    model = KwsDSCNN()
    convs = [model.conv1] + list(model.blocks)
    with torch.no_grad():
        for (kind, w, b, o), conv in zip(layers[:9], convs):
            assert o["same"] and o["relu"], o
            assert tuple(conv.stride) == o["stride"], (conv.stride, o)
            if kind == "CONV_2D":  # OHWI -> OIHW
                conv.weight.copy_(torch.from_numpy(w.transpose(0, 3, 1, 2).copy()))
            else:  # depthwise 1HWO (depth multiplier 1) -> [O, 1, H, W]
                conv.weight.copy_(torch.from_numpy(w.transpose(3, 0, 1, 2).copy()))
            conv.bias.copy_(torch.from_numpy(b.copy()))
        pool = layers[9][3]
        assert pool["kernel"] == (25, 5) and pool["stride"] == (25, 5), pool
        _, w, b, _ = layers[11]
        model.fc.weight.copy_(torch.from_numpy(w.copy()))  # [out, in] in both
        model.fc.bias.copy_(torch.from_numpy(b.copy()))
    return model.eval()


# --------------------------------------------------------------------------- data

def clip_label(path):
    return os.path.basename(path)[:-4].rsplit("_", 1)[0]


def clips(d):
    paths = sorted(glob.glob(os.path.join(d, "*.wav")))
    assert paths, f"no clips in {d}"
    return paths


def features(paths):
    """[N, 1, 49, 10] float32 MFCCs (NCHW; the .tflite's NHWC has the same bytes)."""
    return np.stack([mfcc_ref.mfcc(mfcc_ref.read_wav(p))[None] for p in paths]).astype(np.float32)


def dequantized_tflite(path):
    """The same .tflite with its int8 weight-only tensors replaced by their
    float32 values (w * scale), so that LiteRT runs float kernels throughout.

    The MLPerf "float32" file keeps the weights of the five standard convs in
    int8 (one per-tensor scale). LiteRT runs such convs as *hybrid* kernels: it
    quantizes the float activations to int8 on the fly (symmetric, per tensor),
    which is not float arithmetic (measured: up to 0.06 on the softmax output).
    Everything else in the file is float32 and kept byte for byte."""
    import flatbuffers
    from ai_edge_litert import schema_py_generated as schema

    m = schema.ModelT.InitFromPackedBuf(bytearray(open(path, "rb").read()), 0)
    for t in m.subgraphs[0].tensors:
        if t.type != schema.TensorType.INT8:
            continue
        q = t.quantization
        assert len(q.scale) == 1 and list(q.zeroPoint) == [0]
        b = m.buffers[t.buffer]
        w = np.frombuffer(bytes(bytearray(b.data)), dtype=np.int8)
        b.data = np.frombuffer((w.astype(np.float32) * np.float32(q.scale[0])).astype("<f4").tobytes(), np.uint8)
        t.type = schema.TensorType.FLOAT32
        t.quantization = None
    fb = flatbuffers.Builder(1 << 16)
    fb.Finish(m.Pack(fb), file_identifier=b"TFL3")
    return bytes(fb.Output())


def tflite_outputs(path, x, dequantize=False):
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    # The builtin reference kernels, no XNNPACK delegate.
    kw = {"model_content": dequantized_tflite(path)} if dequantize else {"model_path": path}
    it = Interpreter(experimental_op_resolver_type=OpResolverType.BUILTIN_REF, **kw)
    it.allocate_tensors()
    i, o = it.get_input_details()[0], it.get_output_details()[0]
    out = []
    for s in x:
        it.set_tensor(i["index"], s.reshape(i["shape"]))
        it.invoke()
        out.append(it.get_tensor(o["index"])[0].copy())
    return np.stack(out)


def float_outputs(model, x):
    with torch.no_grad():
        return model(torch.from_numpy(x)).numpy()


def main_check(args):
    model = load_model(args.ref_tflite)
    paths = clips(args.clips)
    x = features(paths)
    y_pt = float_outputs(model, x)
    check = {"clips": len(paths)}
    for key, deq in (("tflite_dequantized_weights", True), ("tflite_as_is_hybrid", False)):
        y_tfl = tflite_outputs(args.ref_tflite, x, dequantize=deq)
        diff = float(np.abs(y_pt - y_tfl).max())
        agree = int((y_pt.argmax(1) == y_tfl.argmax(1)).sum())
        check[key] = {"max_abs_diff": diff, "top1_agree": agree}
        print(f"float PyTorch vs LiteRT ({key}) on {len(paths)} clips: max |diff| {diff:.3g}, "
              f"top-1 agree {agree}/{len(paths)}", flush=True)
    assert check["tflite_dequantized_weights"]["max_abs_diff"] <= 1e-4, check
    return model, paths, x, y_pt, check


# --------------------------------------------------------------------------- export

# (name, cpu, int8 I/O, description). M4 = CMSIS-NN DSP encoding, the one for
# M4/M7/M33 (and what scalar M0/M3 kernels read too: linear carries `bias`);
# M55 = MVE encoding (linear carries `kernel_sum`, larger scratch).
VARIANTS = [
    ("dscnn_kws_int8io", "M4", True, "cortex_m flow, cpu M4 (DSP encoding), int8 MFCC in, int8 scores out (+10 config methods)"),
    ("dscnn_kws_float_io", "M4", False, "cortex_m flow, cpu M4 (DSP encoding), float MFCC in, float scores out"),
    ("dscnn_kws_m55_int8io", "M55", True, "cortex_m flow, cpu M55 (MVE encoding), int8 MFCC in, int8 scores out (+10 config methods)"),
]


def export_variant(model, calib, cpu, int8_io, ref_inputs, eval_inputs):
    """Returns (pte bytes, io qparams, [(input, output)] for ref_inputs,
    top-1 for eval_inputs)."""
    import export_fixtures as ef

    edge, ep, io, to_input = ef.cortex_m_program(model, calib[0], calib, cpu, int8_io)
    gm = ep.module()
    refs = []
    for x in ref_inputs:
        x_in = to_input(x)
        out, _ = ef.reference_run(ep, x_in, record_intermediates=False, gm_final=gm)
        refs.append((x_in.contiguous().numpy(), out.contiguous().numpy()))
    top1 = []
    for x in eval_inputs:
        out, _ = ef.reference_run(ep, to_input(x), record_intermediates=False, gm_final=gm)
        top1.append(int(out.numpy().reshape(-1).argmax()))
    return bytes(ef.to_pte(edge, ep)), io, refs, np.array(top1, dtype=np.int64)


def dequantize(q, io):
    return ((q.astype(np.float32) - np.float32(io["output0_zp"])) * np.float32(io["output0_scale"])).astype(np.float32)


def tflite_int8_top1(path, x):
    """Top-1 of MLPerf's own int8 model (kws_ref_model.tflite) for comparison."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    it = Interpreter(model_path=path, experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    it.allocate_tensors()
    i, o = it.get_input_details()[0], it.get_output_details()[0]
    s, zp = i["quantization"]
    top1 = []
    for f in x:
        q = np.clip(np.rint(f.reshape(i["shape"]) / s) + zp, -128, 127).astype(np.int8)
        it.set_tensor(i["index"], q)
        it.invoke()
        top1.append(int(it.get_tensor(o["index"]).argmax()))
    return np.array(top1, dtype=np.int64)


README_HEAD = """# Keyword spotting: MLPerf Tiny DS-CNN, trained, as ExecuTorch programs

The MLPerf Tiny keyword-spotting reference model (DS-CNN trained on Google Speech Commands by
mlcommons/tiny, `benchmark/training/keyword_spotting/trained_models/kws_ref_model_float32.tflite`,
Apache License 2.0: `LICENSE-mlcommons-tiny.md`), converted to PyTorch and exported with upstream
ExecuTorch **1.5.1**'s Cortex-M flow (CortexMQuantizer, int8, CMSIS-NN semantics) by
`tools/export/kws.py`. Nothing here is hand-made.

```sh
python3 -m venv venv && venv/bin/pip install -r tools/export/requirements.txt ai-edge-litert   # ~5 GB, never in CI
apt-get install espeak-ng sox
tools/export/kws.sh venv/bin/python [--twice]    # writes models/kws/ (this README included)
```
(`kws.sh` generates the evaluation clips with `tools/clips/make_clips.py OUT --first 3 --count 40`
in a temporary folder and runs `kws.py --eval OUT`; `--twice` exports a second time and compares.)

- Input: `[1, 1, 49, 10]` MFCC (49 frames × 10 coefficients of 1 s of 16 kHz audio), exactly
  MLPerf's training front end: `tools/frontend/mfcc_ref.py` (numpy) / `rust/etch-frontend`.
  The int8 programs take it quantized with their `input0_scale`/`input0_zp` (config methods in the
  `.pte`: `etch run FILE.pte --method input0_scale`), `q = clamp(zp + rint(x * (1/scale)), -128, 127)`.
- Output: `[1, 12]` **softmax probabilities** in the order of `labels.txt`
  (down, go, left, no, off, on, right, stop, up, yes, silence, unknown), as in the `.tflite`.
  int8 programs: probability = `(q - output0_zp) * output0_scale`; top-1 = argmax of the int8 values.
  (The quantizer fixes the softmax output at scale 1/256, zp −128 as CMSIS-NN needs, then observes the
  graph output separately: the last two operators requantize 12 values from 1/256 to the observed
  scale. The map is strictly increasing, so the argmax is unchanged.)
- `dscnn_kws_float_io.pte` contains the same quantized model as `dscnn_kws_int8io.pte` between a
  `quantize_per_tensor` and a `dequantize_per_tensor`: on every committed clip its float scores are
  exactly the dequantized int8 scores (checked by `kws.py`).
- Encodings: `cpu M4` = CMSIS-NN DSP encoding (Cortex-M4/M7/M33; `quantized_linear` carries `bias`,
  which the scalar M0/M3 kernels read too); `cpu M55` = MVE encoding (`kernel_sum`, larger scratch).

Model (`kws.KwsDSCNN`, weights read from the `.tflite` flatbuffer): Conv 64×(10×4) stride 2 with TF
"same" padding (4 rows above, 5 below, 1 column each side: an explicit 1-row bottom pad + conv padding
(4, 1)) + ReLU; 4 × [depthwise 3×3 + ReLU, pointwise 1×1 64 + ReLU]; average pool 25×5; FC 64→12;
softmax. TFLite OHWI / 1HWO weights are transposed to PyTorch OIHW; batch norm is already folded into
the conv biases in the `.tflite`. Calibration: the MFCCs of the 34 committed clips (`tools/clips/wav`).

| file | how it was made | bytes | operators (KernelCalls) | instr. | arena bytes | input scale, zp | output scale, zp |
|---|---|---:|---|---:|---:|---|---|
"""


def write_readme(out):
    acc = json.load(open(os.path.join(out, "accuracy.json")))
    rows = []
    exp = {}
    for name, _, int8_io, _ in VARIANTS:
        e = exp[name] = json.load(open(os.path.join(out, name + ".expected.json")))
        fwd = e["methods"][0]
        ops = ", ".join(f"`{o['name'].split('::')[-1]}`×{o['count']}" for o in fwd["operators"] if o["count"])
        io = e.get("io_qparams")
        qi = f"{io['input0_scale']:.6g}, {io['input0_zp']}" if io else "float"
        qo = f"{io['output0_scale']:.6g}, {io['output0_zp']}" if io else "float"
        rows.append(f"| `{name}.pte` | {e['made_by']} | {e['file_size']} | {ops} | {fwd['instructions']} | "
                    f"{', '.join(map(str, fwd['planned_buffers']))} | {qi} | {qo} |")
    c = acc["float_vs_tflite"]
    t = [f"""
## Float PyTorch model vs the `.tflite`

On the MFCCs of the {c['clips']} committed clips, LiteRT (`ai-edge-litert`, builtin reference kernels):

| reference | max abs diff of the 12 probabilities | top-1 agreement |
|---|---:|---:|
| the `.tflite` with its int8 weights dequantized to float32 (`kws.dequantized_tflite`) | {c['tflite_dequantized_weights']['max_abs_diff']:.3g} | {c['tflite_dequantized_weights']['top1_agree']}/{c['clips']} |
| the `.tflite` as shipped | {c['tflite_as_is_hybrid']['max_abs_diff']:.3g} | {c['tflite_as_is_hybrid']['top1_agree']}/{c['clips']} |

The MLPerf "float32" file is not all float: the weights of its five standard convolutions are int8
with one per-tensor scale (weight-only quantization), and LiteRT runs those as *hybrid* kernels that
quantize each float activation to int8 on the fly. The PyTorch model uses the dequantized weights in
float throughout, which is the network the file describes; replacing the int8 weights by their float
values (the only change) makes LiteRT agree with it to float rounding. `kws.py` fails unless that
difference is ≤ 1e-4.
"""]
    if acc.get("eval_clips"):
        n = acc["eval_clips"]
        t.append(f"""
## Accuracy (synthetic speech: a regression number, not a claim)

{n} generated clips, disjoint from the committed ones (`make_clips.py OUT --first 3 --count 40`:
40 per keyword, 40 noise-only `silence`, 40 other words as `unknown`). espeak-ng is not human speech;
MLPerf reports 90.1 % top-1 for its int8 model on real Speech Commands.

| model | top-1 accuracy | top-1 agreement with the float model |
|---|---:|---:|
| float PyTorch model | {100 * acc['float_top1_accuracy']:.1f} % | – |
""")
        for name, v in acc["variants"].items():
            t.append(f"| `{name}.pte` (reference cortex_m ops) | {100 * v['eval_top1_accuracy']:.1f} % | "
                     f"{100 * v['eval_agree_with_float_top1']:.1f} % |\n")
        if "mlperf_int8_tflite" in acc:
            m = acc["mlperf_int8_tflite"]
            t.append(f"| MLPerf's own `kws_ref_model.tflite` (int8, LiteRT) | {100 * m['top1_accuracy']:.1f} % | "
                     f"{100 * m['agree_with_float_top1']:.1f} % |\n")
        t.append("\nFloat model per label: " + ", ".join(
            f"{l} {100 * v:.0f} %" for l, v in acc["float_top1_per_label"].items()) + ".\n")
    e = exp["dscnn_kws_int8io"]
    miss = [cl for cl in e["clips"] if cl["top1"] != cl["label"]]
    t.append(f"""
## Committed clips and reference outputs

`ref/<program>/<clip>.input0.npy` (the clip's MFCC as the program takes it: int8 or float32,
`[1, 1, 49, 10]`) and `ref/<program>/<clip>.output0.npy` (`[1, 12]`): ExecuTorch's reference
implementations of the `cortex_m` operators (`backends/cortex_m/ops/operators.py`) run over the final
graph, as for `tests/fixtures`. `<program>.expected.json`: ExecuTorch's deserializer's facts about the
file plus, per clip, its label and the program's top-1. `rust/etch-cli/tests/kws_model.rs` runs every
reference with `etch run ... --compare` (bit-exact) and checks the top-1.

`dscnn_kws_int8io.pte` gets {len(e['clips']) - len(miss)} of the {len(e['clips'])} committed clips right; it misses: """
             + (", ".join(f"`{cl['clip']}` (→ {cl['top1']})" for cl in miss) or "none") + ".\n")
    t.append("""
Determinism: fixed clips, no random state in the flow; two exports give byte-identical `.pte`,
`.npy` and `.expected.json` files (`tools/export/kws.sh PYTHON --twice` checks the `.pte` and `.npy`).
""")
    with open(os.path.join(out, "README.md"), "w") as f:
        f.write(README_HEAD + "\n".join(rows) + "\n" + "".join(t))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ref-tflite", default=DEFAULT_TFLITE)
    ap.add_argument("--clips", default=os.path.join(ROOT, "tools", "clips", "wav"),
                    help="committed clips: calibration and per-clip references")
    ap.add_argument("--eval", default=None, help="larger generated clip set for accuracy")
    ap.add_argument("--out", default=os.path.join(ROOT, "models", "kws"))
    ap.add_argument("--readme-only", action="store_true", help="rewrite README.md from the .json files")
    args = ap.parse_args()
    if args.readme_only:
        return write_readme(args.out)
    import pte_facts

    model, paths, x, y_float, check = main_check(args)
    names = [os.path.basename(p)[:-4] for p in paths]
    calib = [torch.from_numpy(f[None]) for f in x]
    if args.eval:
        eval_paths = clips(args.eval)
        ex = features(eval_paths)
        elabels = np.array([LABELS.index(clip_label(p)) for p in eval_paths])
        efloat = float_outputs(model, ex).argmax(1)
    else:
        eval_paths, ex, elabels, efloat = [], np.zeros((0, 1, 49, 10), np.float32), None, None
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "labels.txt"), "w") as f:
        f.write("\n".join(LABELS) + "\n")

    acc = {"float_vs_tflite": check, "eval_clips": len(eval_paths), "variants": {}}
    if args.eval:
        acc["float_top1_accuracy"] = float((efloat == elabels).mean())
        acc["float_top1_per_label"] = {l: float((efloat[elabels == i] == i).mean()) for i, l in enumerate(LABELS)}
        int8_ref = os.path.join(os.path.dirname(args.ref_tflite), "kws_ref_model.tflite")
        if os.path.exists(int8_ref):
            t8 = tflite_int8_top1(int8_ref, ex)
            acc["mlperf_int8_tflite"] = {"top1_accuracy": float((t8 == elabels).mean()),
                                         "agree_with_float_top1": float((t8 == efloat).mean())}
    outputs = {}
    for name, cpu, int8_io, how in VARIANTS:
        buf, io, refs, etop1 = export_variant(model, calib, cpu, int8_io, [c for c in calib], [torch.from_numpy(f[None]) for f in ex])
        open(os.path.join(args.out, name + ".pte"), "wb").write(buf)
        rdir = os.path.join(args.out, "ref", name)
        os.makedirs(rdir, exist_ok=True)
        per_clip = []
        outs = []
        for clip, (xi, yo) in zip(names, refs):
            np.save(os.path.join(rdir, clip + ".input0.npy"), xi)
            np.save(os.path.join(rdir, clip + ".output0.npy"), yo)
            scores = dequantize(yo, io) if int8_io else yo
            outs.append(scores.reshape(-1))
            per_clip.append({"clip": clip, "label": clip_label(clip + ".wav"),
                             "top1": LABELS[int(yo.reshape(-1).argmax())],
                             "float_model_top1": LABELS[int(y_float[names.index(clip)].argmax())]})
        outputs[name] = np.stack(outs)
        facts = pte_facts.facts(buf)
        facts["made_by"] = how
        facts["reference"] = "cortex_m reference ops (operators.py) over the final graph"
        facts["labels"] = LABELS
        facts["clips"] = per_clip
        if io:
            facts["io_qparams"] = io
        with open(os.path.join(args.out, name + ".expected.json"), "w") as f:
            json.dump(facts, f, indent=1, sort_keys=True)
        v = {"cpu": cpu, "int8_io": int8_io, "bytes": len(buf), "arena": facts["methods"][0]["planned_buffers"],
             "committed_clips_top1_correct": sum(c["top1"] == c["label"] for c in per_clip),
             "committed_clips_agree_with_float": sum(c["top1"] == c["float_model_top1"] for c in per_clip)}
        if args.eval:
            v["eval_top1_accuracy"] = float((etop1 == elabels).mean())
            v["eval_agree_with_float_top1"] = float((etop1 == efloat).mean())
        acc["variants"][name] = v
        print(name, json.dumps(v), flush=True)
    # The float-I/O program and the int8-I/O program hold the same quantized
    # model: the float scores are exactly the dequantized int8 scores.
    same = np.array_equal(outputs["dscnn_kws_float_io"], outputs["dscnn_kws_int8io"])
    acc["float_io_equals_dequantized_int8io"] = bool(same)
    print("float-I/O scores == dequantized int8-I/O scores:", same)
    with open(os.path.join(args.out, "accuracy.json"), "w") as f:
        json.dump(acc, f, indent=1, sort_keys=True)
    import shutil

    lic = os.path.join(os.path.dirname(args.ref_tflite), "LICENSE.md")
    if os.path.exists(lic):
        shutil.copyfile(lic, os.path.join(args.out, "LICENSE-mlcommons-tiny.md"))
    write_readme(args.out)


if __name__ == "__main__":
    main()
