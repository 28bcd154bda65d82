#!/usr/bin/env python3
"""ExecuTorch's Inspector reads etch's ETDump (outside CI, like the fixture
exports: needs the pinned executorch 1.5.1 venv).

    venv/bin/python tools/etdump/test_inspector.py [FIXTURE...]   # default: DS-CNN + fzoo

For each fixture: `etch run --etdump --etdump-debug --profile --trace
--repeat 5`, then the Inspector must
  - name one event per instruction, in order, `native_call_<op>.<overload>`
    as etch's profile lists them, then `Method::execute`;
  - give, per instruction, the same mean time as etch's own profile (us, to
    the 3 decimals etch prints) and 5 raw samples;
  - give, as each instruction's debug data, exactly the tensor `--trace`
    wrote for it, and as the run output exactly the fixture's reference.
"""

import glob
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import inspector as etch_inspector  # noqa: E402

RUNS = 5


def etch(*args):
    cmd = ["cargo", "run", "-q", "--release", "-p", "etch-cli", "--", *args]
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env={**os.environ, "CARGO_BUILD_JOBS": "2"})
    if r.returncode != 0:
        raise AssertionError(f"{' '.join(args)}: {r.stdout}{r.stderr}")
    return r.stdout


def check(name):
    fx = os.path.join(ROOT, "tests", "fixtures", name)
    with tempfile.TemporaryDirectory() as d:
        etdp, dbg, trace = (os.path.join(d, x) for x in ("run.etdp", "run.bin", "trace"))
        out = etch("run", fx + ".pte", "--input", fx + ".input0.npy", "--etdump", etdp,
                   "--etdump-debug", dbg, "--profile", "--trace", trace, "--repeat", str(RUNS))
        profile = re.findall(r"^\s+(\d+)\s+(\S+)\s+([\d.]+)$", out, re.M)
        assert profile, out
        insp = etch_inspector.load(etdp, dbg, "ns")
        [block] = insp.event_blocks
        assert block.name == "Execute"
        events = block.events
        assert len(events) == len(profile) + 1, (len(events), len(profile))
        for (index, op, mean_us), e in zip(profile, events):
            base, overload = op.split("::")[-1].split(".", 1)
            assert e.name == f"native_call_{base}.{overload}", (e.name, op)
            assert e._instruction_id == int(index)
            assert len(e.perf_data.raw) == RUNS
            assert f"{e.perf_data.avg:.3f}" == mean_us, (op, e.perf_data.avg, mean_us)
            files = sorted(glob.glob(os.path.join(trace, f"{int(index):03d}_*.npy")))
            want = [np.load(f) for f in files]
            got = [t.numpy() for t in e.debug_data[0]] if isinstance(e.debug_data[0], list) else [e.debug_data[0].numpy()]
            assert len(got) == len(want), (op, len(got), len(want))
            for g, w in zip(got, want):
                assert g.dtype == w.dtype and g.shape == w.shape and np.array_equal(g, w), op
        assert events[-1].name == "Method::execute"
        ref = np.load(fx + ".output0.npy")
        assert np.array_equal(block.run_output[0].numpy(), ref)
        print(f"{name}: {len(profile)} operators, Inspector = etch profile and trace")


def main(argv):
    names = argv or ["dscnn_cm_m33", "fzoo_portable_f32"]
    passed = failed = 0
    for n in names:
        try:
            check(n)
            passed += 1
        except AssertionError as e:
            print(f"{n}: FAILED {e}")
            failed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
