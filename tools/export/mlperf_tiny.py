"""Exports the MLPerf Tiny programs of the benchmark (bench/run.sh) that are
not the zoo's: the zoo's visual wake words, image classification and anomaly
detection cortex_m programs (tools/export/zoo.py: same architectures from
executorch.examples.models.mlperf_tiny, same seeded weights, input and
calibration) exported
  - for cpu M55 with float I/O (<model>_cm_m55: CMSIS-NN's MVE encodings),
  - with int8 input and output, as users deploy them and as the DS-CNN fixture
    is (QuantizeInputs/QuantizeOutputs, the program's edge q/dq removed), for
    cpu M33 (<model>_cm_m33_int8io: every core but the M55) and cpu M55
    (<model>_cm_m55_int8io).
Keyword spotting is the DS-CNN fixture tests/fixtures/dscnn_cm_*_int8io
(export_fixtures.py).

usage: python mlperf_tiny.py OUT_DIR [NAME-FILTER]   (tools/export/mlperf_tiny.sh writes bench/models)
Writes <name>.{pte,input0.npy,output0.npy,expected.json} (the int8-I/O programs
carry their input's and output's scale and zero point as config methods).
"""

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import pte_facts  # noqa: E402
import zoo  # noqa: E402

MODELS = ("mobilenet_v1_025", "resnet8", "autoencoder")
# (cpu, int8 I/O, name suffix)
VARIANTS = (("M55", False, "_cm_m55"), ("M33", True, "_cm_m33_int8io"), ("M55", True, "_cm_m55_int8io"))


def main():
    out = sys.argv[1]
    only = sys.argv[2] if len(sys.argv) > 2 else ""
    os.makedirs(out, exist_ok=True)
    for arch in MODELS:
        for cpu, int8_io, suffix in VARIANTS:
            if only not in arch + suffix:
                continue
            buf, x, y, _ = zoo.export(arch, "cm", cm_cpu=cpu, int8_io=int8_io)
            base = os.path.join(out, arch + suffix)
            open(base + ".pte", "wb").write(buf)
            np.save(base + ".input0.npy", x)
            np.save(base + ".output0.npy", y)
            facts = pte_facts.facts(bytes(buf))
            how = zoo.HOW["cm"].replace(f"cpu {zoo.CM_CPU} (DSP)", f"cpu {cpu} ({'MVE' if cpu == 'M55' else 'DSP'})")
            facts["made_by"] = how.replace("float I/O", "int8 I/O") if int8_io else how
            facts["reference"] = zoo.REFERENCE["cm"]
            with open(base + ".expected.json", "w") as f:
                json.dump(facts, f, indent=1, sort_keys=True)
            print(f"{base}.pte: {len(buf)} B", flush=True)


if __name__ == "__main__":
    main()
