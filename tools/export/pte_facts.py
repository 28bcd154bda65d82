"""What ExecuTorch's own deserializer says about a .pte (for expected.json)."""

from collections import Counter

from executorch.exir._serialize._program import _flatbuffer_to_program, _get_extended_header
from executorch.exir.schema import KernelCall, Tensor
from executorch.exir.scalar_type import ScalarType


def _io(plan, idx):
    v = plan.values[idx].val
    if isinstance(v, Tensor):
        return {"dtype": ScalarType(v.scalar_type).name, "sizes": list(v.sizes), "dim_order": list(v.dim_order)}
    kind = type(v).__name__
    val = getattr(v, "int_val", getattr(v, "double_val", getattr(v, "bool_val", None)))
    return {"kind": kind, "value": val}


def facts(data: bytes) -> dict:
    eh = _get_extended_header(data)
    program_size = eh.program_size if eh and eh.is_valid() else len(data)
    program = _flatbuffer_to_program(data[:program_size])
    methods = []
    for plan in program.execution_plan:
        counts = Counter()
        n_instr = 0
        for chain in plan.chains:
            for ins in chain.instructions:
                n_instr += 1
                if isinstance(ins.instr_args, KernelCall):
                    counts[ins.instr_args.op_index] += 1
        kinds = Counter(type(v.val).__name__ for v in plan.values)
        methods.append({
            "name": plan.name,
            "instructions": n_instr,
            "values": len(plan.values),
            "value_kinds": dict(kinds),
            "operators": [{"name": op.name, "overload": op.overload, "count": counts[i]} for i, op in enumerate(plan.operators)],
            "planned_buffers": list(plan.non_const_buffer_sizes[1:]),
            "inputs": [_io(plan, i) for i in plan.inputs],
            "delegates": [
                {"id": d.id, "location": int(d.processed.location), "index": d.processed.index,
                 "compile_specs": [s.key for s in d.compile_specs]}
                for d in plan.delegates
            ],
            "outputs": [_io(plan, i) for i in plan.outputs],
        })
    return {
        "file_size": len(data),
        "program_size": program_size,
        "segments": [{"offset": s.offset, "size": s.size} for s in program.segments],
        "constant_segment_offsets": list(program.constant_segment.offsets),
        "backend_delegate_data_sizes": [len(d.data) for d in (program.backend_delegate_data or [])],
        "named_data": [{"key": n.key, "segment_index": n.segment_index} for n in (program.named_data or [])],
        "methods": methods,
    }
