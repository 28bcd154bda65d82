#!/usr/bin/env python3
"""Opens an etch ETDump with ExecuTorch's own devtools Inspector (the pinned
executorch 1.5.1) and prints its per-operator table.

    venv/bin/python tools/etdump/inspector.py OUT.etdp [--debug-buffer OUT.bin]
        [--time-scale ns] [--tsv OUT.tsv]

`etch run model.pte --input x.npy --etdump OUT.etdp [--etdump-debug OUT.bin]`
writes the files (times in ns on the host; firmware states its clock's unit:
--time-scale cycles). Without an ETRecord the Inspector names operator rows
by their runtime event (`native_call_<op>.<overload>`), as it does for
ExecuTorch's own runtime.
"""

import argparse
import sys
import warnings


def load(etdump, debug_buffer=None, time_scale="ns"):
    from executorch.devtools import Inspector
    from executorch.devtools.inspector import TimeScale

    source = TimeScale(time_scale)
    target = TimeScale.CYCLES if source == TimeScale.CYCLES else TimeScale.US
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Inspector(
            etdump_path=etdump,
            debug_buffer_path=debug_buffer,
            source_time_scale=source,
            target_time_scale=target,
        )


def table(inspector):
    """The Inspector's per-operator table (its own dataframe), the columns
    that fit a terminal, plus the shape of each event's debug data."""
    df = inspector.to_dataframe(include_units=True)
    unit = [c for c in df.columns if c.startswith("avg")][0].split(" ", 1)[1]
    cols = ["event_block_name", "event_name"] + [
        f"{k} {unit}" for k in ("p50", "avg", "min", "max")
    ]
    out = df[cols].copy()
    out.insert(2, "runs", [len(r) for r in df["raw"]])
    out["debug_data"] = [
        ", ".join(
            "x".join(str(s) for s in t.shape) + " " + str(t.dtype).replace("torch.", "")
            for t in d
            if hasattr(t, "shape")
        )
        for d in df["debug_data"]
    ]
    return out.to_string()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("etdump")
    p.add_argument("--debug-buffer")
    p.add_argument("--time-scale", default="ns", choices=["ns", "us", "ms", "s", "cycles"])
    p.add_argument("--tsv")
    a = p.parse_args(argv)
    inspector = load(a.etdump, a.debug_buffer, a.time_scale)
    print(table(inspector))
    if a.tsv:
        inspector.save_data_to_tsv(a.tsv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
