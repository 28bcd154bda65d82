"""Per-instruction reference trace of a zoo program from ExecuTorch's own
runtime (ETDump with a debug buffer), in `etch run --trace` layout, to find the
first operator where etch and the reference part.

usage: python zoo_trace.py PROGRAM.pte INPUT.npy OUT_DIR
       etch run PROGRAM.pte --input INPUT.npy --trace-compare OUT_DIR

Writes OUT_DIR/NNN_<ns>.<op>.<overload>.npy: the output of instruction NNN as
ExecuTorch's runtime logged it (the pip wheel: portable kernels, plus the
optimized ones listed in zoo.json's reference_optimized_ops). For cortex_m
programs (which that runtime cannot run) use `zoo.py --intermediates` instead.
"""

import os
import sys
import warnings

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../etdump"))
import inspector  # noqa: E402  tools/etdump/inspector.py


def kernel_calls(data):
    """`ns::name.overload` of every KernelCall instruction, in order."""
    from executorch.exir._serialize._program import _flatbuffer_to_program, _get_extended_header
    from executorch.exir.schema import KernelCall

    eh = _get_extended_header(data)
    program = _flatbuffer_to_program(data[: eh.program_size] if eh and eh.is_valid() else data)
    plan = next(p for p in program.execution_plan if p.name == "forward")
    calls = []
    for i, ins in enumerate(plan.chains[0].instructions):
        if isinstance(ins.instr_args, KernelCall):
            op = plan.operators[ins.instr_args.op_index]
            calls.append((i, f"{op.name}.{op.overload}" if op.overload else op.name))
    return calls


def main(pte, inp, out):
    import executorch.kernels.quantized  # noqa: F401  registers the quantized_decomposed kernels
    from executorch.runtime import Runtime

    data = open(pte, "rb").read()
    os.makedirs(out, exist_ok=True)
    program = Runtime.get().load_program(data, enable_etdump=True, debug_buffer_size=64 << 20)
    program.load_method("forward").execute([torch.from_numpy(np.load(inp))])
    etdp, dbg = os.path.join(out, "run.etdp"), os.path.join(out, "run.bin")
    program.write_etdump_result_to_file(etdp, dbg)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        events = [e for b in inspector.load(etdp, dbg).event_blocks for e in b.events
                  if e.name.startswith("native_call_")]
    calls = kernel_calls(data)
    assert len(events) == len(calls), f"{len(events)} logged calls for {len(calls)} kernel instructions"
    for (index, op), event in zip(calls, events):
        assert event.name == "native_call_" + op.split("::")[-1], (event.name, op)
        tensors = [t for t in (event.debug_data or []) if isinstance(t, torch.Tensor)]
        for k, t in enumerate(tensors):
            suffix = f".{k}" if len(tensors) > 1 else ""
            np.save(os.path.join(out, f"{index:03d}_{op.replace('::', '.')}{suffix}.npy"), t.contiguous().numpy())
    os.remove(etdp)
    os.remove(dbg)
    print(f"{len(calls)} instructions traced into {out}")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
