"""Exports the MLPerf Tiny programs the benchmark runs on Cortex-M55
(bench/run.sh, mps3-an547): the zoo's visual wake words, image classification
and anomaly detection cortex_m programs (tools/export/zoo.py: same
architectures from executorch.examples.models.mlperf_tiny, same seeded weights,
input and calibration, float I/O) exported for cpu M55, whose programs carry
CMSIS-NN's MVE encodings. Keyword spotting on M55 is the DS-CNN fixture
tests/fixtures/dscnn_cm_m55_int8io (export_fixtures.py).

usage: python mlperf_tiny.py OUT_DIR    (tools/export/mlperf_tiny.sh writes bench/models)
Writes <model>_cm_m55.{pte,input0.npy,output0.npy,expected.json}.
"""

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import pte_facts  # noqa: E402
import zoo  # noqa: E402

CPU = "M55"
MODELS = ("mobilenet_v1_025", "resnet8", "autoencoder")


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for arch in MODELS:
        buf, x, y, _ = zoo.export(arch, "cm", cm_cpu=CPU)
        base = os.path.join(out, f"{arch}_cm_{CPU.lower()}")
        open(base + ".pte", "wb").write(buf)
        np.save(base + ".input0.npy", x)
        np.save(base + ".output0.npy", y)
        facts = pte_facts.facts(bytes(buf))
        facts["made_by"] = zoo.HOW["cm"].replace(f"cpu {zoo.CM_CPU} (DSP)", f"cpu {CPU} (MVE)")
        facts["reference"] = zoo.REFERENCE["cm"]
        with open(base + ".expected.json", "w") as f:
            json.dump(facts, f, indent=1, sort_keys=True)
        print(f"{base}.pte: {len(buf)} B", flush=True)


if __name__ == "__main__":
    main()
