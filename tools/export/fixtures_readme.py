"""Writes tests/fixtures/README.md from the <name>.expected.json files."""

import glob
import json
import os
import sys

HEADER = """# Fixtures

Every `.pte` here was exported by upstream ExecuTorch **1.5.1** (torch 2.13.0,
tosa-tools 2026.5.0) with `tools/export/export_fixtures.py`; nothing here is
hand-made. Regenerate (needs the pinned wheels, about 5 GB; never in CI):

```sh
python3 -m venv venv && venv/bin/pip install -r tools/export/requirements.txt
tools/export/export_fixtures.sh venv/bin/python      # writes tests/fixtures/, then this README
```

Exports are deterministic: two runs give byte-identical `.pte` files
(`export_fixtures.sh` checks this when run with `--twice`).

Per file:
- `<name>.pte`: the program;
- `<name>.input0.npy`: the fixed input (`torch.manual_seed(0); torch.randn`), logical (NCHW) order,
  in the method's input dtype (int8-I/O files: quantized with the program's own input qparams);
- `<name>.output0.npy`: the reference output. Portable files: **ExecuTorch's own runtime**
  (`executorch.runtime`, portable + quantized kernels). Cortex-M files: **ExecuTorch's reference
  implementations of the `cortex_m` ops** (`backends/cortex_m/ops/operators.py`) run eagerly over the
  final graph (the stock runtime has no `cortex_m` kernels);
- `<name>.expected.json`: what ExecuTorch's deserializer says about the file (operators with
  KernelCall counts, planned buffer sizes, I/O dtypes and shapes, instruction and value counts);
  `etch inspect --json` is tested against it;
- `<name>.intermediates.npz` (Cortex-M files): every graph node's output, for debugging kernels.

Models: **tiny** = Linear(16,32) → ReLU → Linear(32,8), input 1×16; **dscnn** = MLPerf Tiny DS-CNN
(`executorch.examples.models.mlperf_tiny.ds_cnn.DSCNNKWS`, input 1×1×49×10) with deterministic
random weights and BN statistics (seed 1234); **zoo** (1×4×8×8) and **attn** (1×8×16) exercise the
remaining cortex_m operators (add, mul, activation LUT, max/avg pool, transposed conv, pad, softmax,
batch matmul, transpose) and the float ops the flow leaves behind (`tools/export/models.py`).
Calibration: the fixed input + 15 `randn` samples (seed 4321).

| file | how it was made | bytes | operators (KernelCalls) | instr. | arena bytes |
|---|---|---:|---|---:|---:|
"""


def main(fixture_dir):
    rows = []
    for path in sorted(glob.glob(os.path.join(fixture_dir, "*.expected.json"))):
        name = os.path.basename(path)[: -len(".expected.json")]
        e = json.load(open(path))
        fwd = e["methods"][0]
        ops = ", ".join(
            f"`{o['name'].split('::')[-1]}`×{o['count']}" for o in fwd["operators"] if o["count"]
        )
        extra = f" (+{len(e['methods']) - 1} config methods)" if len(e["methods"]) > 1 else ""
        rows.append(
            f"| `{name}.pte` | {e['made_by']}{extra} | {e['file_size']} | {ops} | "
            f"{fwd['instructions']} | {', '.join(map(str, fwd['planned_buffers']))} |"
        )
    with open(os.path.join(fixture_dir, "README.md"), "w") as f:
        f.write(HEADER + "\n".join(rows) + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../../tests/fixtures"))
