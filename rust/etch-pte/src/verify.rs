//! Whole-file verification: the one pass [`PteFile::new_checked`] runs.
//!
//! It visits every table reachable from the root and checks what the runtime
//! relies on: offsets and vector lengths in bounds (done by the readers),
//! union tags valid, every value / operator / delegate / segment / instruction
//! index in range, list items of the right kind, tensor shapes sane
//! (rank ≤ 16, sizes ≥ 0, `dim_order` a permutation, `numel × element size`
//! without overflow), constant and planned data ranges inside their segment or
//! buffer, and deprecated inline constants not mixed with a constant segment.
//!
//! Shared sub-objects are legal in FlatBuffers, so a small malicious file could
//! make a naive walk revisit the same large vector many times. The walk
//! therefore has a work budget proportional to the file size, far above what
//! any exporter-written file needs; exceeding it is `InvalidProgram`.

use crate::error::{Error, Result};
use crate::file::PteFile;
use crate::flatbuffer::Vector;
use crate::schema::{check_utf8, ExecutionPlan, InstructionArgs, Tensor, Value};
use crate::tensor;
use crate::types::{TensorDataLocation, ValueKind};

struct Budget(usize);

impl Budget {
    fn spend(&mut self, n: usize, at: usize) -> Result<()> {
        self.0 = self
            .0
            .checked_sub(n)
            .ok_or(Error::invalid("file too complex to verify", at))?;
        Ok(())
    }
}

/// Verifies the whole file. See the module docs for what is checked.
#[inline(never)]
pub fn verify(file: &PteFile<'_>) -> Result<()> {
    let mut budget = Budget(file.data().len().saturating_mul(64).saturating_add(4096));
    let program = file.program();
    program.version()?;

    let segments = program.segments()?;
    for i in 0..segments.len() {
        budget.spend(1, segments.position())?;
        file.segment(i)?;
    }

    let constant_buffer = program.constant_buffer()?;
    match file.constant_segment()? {
        Some((cs, offsets)) => {
            if !constant_buffer.is_empty() {
                return Err(Error::invalid(
                    "both constant_segment and constant_buffer are used",
                    cs.position(),
                ));
            }
            let segment = file.segment(cs.segment_index()? as usize)?;
            for off in offsets.iter() {
                budget.spend(1, offsets.position())?;
                if off? > segment.len() as u64 {
                    return Err(Error::invalid(
                        "constant offset outside its segment",
                        offsets.position(),
                    ));
                }
            }
        }
        None => {
            if let Some(cs) = program.constant_segment()? {
                cs.segment_index()?;
                cs.offsets()?;
            }
        }
    }
    for b in constant_buffer.iter() {
        budget.spend(1, constant_buffer.position())?;
        b?.storage()?;
    }
    let delegate_data = program.backend_delegate_data()?;
    for d in delegate_data.iter() {
        budget.spend(1, delegate_data.position())?;
        d?.data()?;
    }
    let mutable = program.mutable_data_segments()?;
    for m in mutable.iter() {
        let m = m?;
        let offsets = m.offsets()?;
        if !offsets.is_empty() {
            let segment = file.segment(m.segment_index()? as usize)?;
            for off in offsets.iter() {
                budget.spend(1, offsets.position())?;
                if off? > segment.len() as u64 {
                    return Err(Error::invalid(
                        "mutable data offset outside its segment",
                        offsets.position(),
                    ));
                }
            }
        }
    }
    let named = program.named_data()?;
    for n in named.iter() {
        let n = n?;
        budget.spend(1, n.position())?;
        n.key()?;
        if n.segment_index()? as usize >= segments.len() {
            return Err(Error::invalid(
                "named data segment out of range",
                n.position(),
            ));
        }
    }

    let plans = program.execution_plan()?;
    for plan in plans.iter() {
        verify_plan(file, plan?, &mut budget)?;
    }
    Ok(())
}

fn check_index(index: i64, len: usize, what: &'static str, at: usize) -> Result<usize> {
    if index < 0 || index as u64 >= len as u64 {
        return Err(Error::invalid(what, at));
    }
    Ok(index as usize)
}

#[inline(never)]
fn verify_plan(file: &PteFile<'_>, plan: ExecutionPlan<'_>, budget: &mut Budget) -> Result<()> {
    check_utf8(
        plan.name_bytes()?,
        "ExecutionPlan.name is not UTF-8",
        plan.position(),
    )?;
    if let Some(meta) = plan.container_meta_type()? {
        meta.encoded_inp_str()?;
        meta.encoded_out_str()?;
    }
    let values = plan.values()?;
    let n = values.len();
    let buffer_sizes = plan.non_const_buffer_sizes()?;
    for size in buffer_sizes.iter() {
        if size? < 0 {
            return Err(Error::invalid(
                "negative planned buffer size",
                buffer_sizes.position(),
            ));
        }
    }
    let kind_of = |i: usize| -> Result<ValueKind> { values.get(i)?.kind() };

    for v in values.iter() {
        let v = v?;
        budget.spend(1, v.position())?;
        match v.value()? {
            Value::Null | Value::Int(_) | Value::Bool(_) | Value::Double(_) => {}
            Value::String(_) | Value::DoubleList(_) | Value::BoolList(_) => {}
            Value::IntList(items) => {
                budget.spend(items.len(), items.position())?;
                for item in items.iter() {
                    let i = check_index(item?, n, "IntList item out of range", items.position())?;
                    if kind_of(i)? != ValueKind::Int {
                        return Err(Error::invalid(
                            "IntList item is not an Int",
                            items.position(),
                        ));
                    }
                }
            }
            Value::TensorList(items) | Value::OptionalTensorList(items) => {
                let optional = v.kind()? == ValueKind::OptionalTensorList;
                budget.spend(items.len(), items.position())?;
                for item in items.iter() {
                    let item = item?;
                    if optional && item == -1 {
                        continue;
                    }
                    let i = check_index(
                        item as i64,
                        n,
                        "TensorList item out of range",
                        items.position(),
                    )?;
                    if kind_of(i)? != ValueKind::Tensor {
                        return Err(Error::invalid(
                            "TensorList item is not a Tensor",
                            items.position(),
                        ));
                    }
                }
            }
            Value::Tensor(t) => verify_tensor(file, &t, &buffer_sizes)?,
        }
    }

    for list in [plan.inputs()?, plan.outputs()?] {
        budget.spend(list.len(), list.position())?;
        for i in list.iter() {
            check_index(
                i? as i64,
                n,
                "input/output value out of range",
                list.position(),
            )?;
        }
    }

    let operators = plan.operators()?;
    for op in operators.iter() {
        let op = op?;
        budget.spend(1, op.position())?;
        check_utf8(
            op.name_bytes()?,
            "Operator.name is not UTF-8",
            op.position(),
        )?;
        check_utf8(
            op.overload_bytes()?,
            "Operator.overload is not UTF-8",
            op.position(),
        )?;
    }
    let delegates = plan.delegates()?;
    for d in delegates.iter() {
        let d = d?;
        budget.spend(1, d.position())?;
        check_utf8(
            d.id_bytes()?,
            "BackendDelegate.id is not UTF-8",
            d.position(),
        )?;
        file.delegate_data(d.processed()?)?;
        let specs = d.compile_specs()?;
        for s in specs.iter() {
            let s = s?;
            budget.spend(1, s.position())?;
            s.key()?;
            s.value()?;
        }
    }

    let chains = plan.chains()?;
    for chain in chains.iter() {
        let chain = chain?;
        chain.inputs()?;
        chain.outputs()?;
        let instructions = chain.instructions()?;
        for instr in instructions.iter() {
            let instr = instr?;
            budget.spend(1, instr.position())?;
            let at = instr.position();
            match instr.args()? {
                InstructionArgs::KernelCall { op_index, args } => {
                    check_index(
                        op_index as i64,
                        operators.len(),
                        "op_index out of range",
                        at,
                    )?;
                    check_args(args, n, budget)?;
                }
                InstructionArgs::DelegateCall {
                    delegate_index,
                    args,
                } => {
                    check_index(
                        delegate_index as i64,
                        delegates.len(),
                        "delegate_index out of range",
                        at,
                    )?;
                    check_args(args, n, budget)?;
                }
                InstructionArgs::MoveCall { move_from, move_to } => {
                    check_index(move_from as i64, n, "MoveCall value out of range", at)?;
                    check_index(move_to as i64, n, "MoveCall value out of range", at)?;
                }
                InstructionArgs::JumpFalseCall {
                    cond_value_index,
                    destination_instruction,
                } => {
                    check_index(
                        cond_value_index as i64,
                        n,
                        "JumpFalse value out of range",
                        at,
                    )?;
                    check_index(
                        destination_instruction as i64,
                        instructions.len(),
                        "JumpFalse destination out of range",
                        at,
                    )?;
                }
                InstructionArgs::FreeCall { value_index } => {
                    check_index(value_index as i64, n, "FreeCall value out of range", at)?;
                }
            }
        }
        let frames = chain.stacktrace()?;
        for list in frames.iter() {
            let items = list?.items()?;
            budget.spend(items.len() + 1, items.position())?;
            for f in items.iter() {
                let f = f?;
                f.filename()?;
                f.lineno()?;
                f.name()?;
                f.context()?;
            }
        }
    }

    let devices = plan.non_const_buffer_device()?;
    for d in devices.iter() {
        let d = d?;
        budget.spend(1, d.position())?;
        check_index(
            d.buffer_idx()? as i64,
            buffer_sizes.len(),
            "buffer device index out of range",
            d.position(),
        )?;
        d.device_type()?;
        d.device_index()?;
    }
    Ok(())
}

#[inline(never)]
fn check_args(args: Vector<'_, i32>, n: usize, budget: &mut Budget) -> Result<()> {
    budget.spend(args.len(), args.position())?;
    for a in args.iter() {
        check_index(
            a? as i64,
            n,
            "instruction argument out of range",
            args.position(),
        )?;
    }
    Ok(())
}

#[inline(never)]
fn verify_tensor(file: &PteFile<'_>, t: &Tensor<'_>, buffer_sizes: &Vector<'_, i64>) -> Result<()> {
    let at = t.position();
    tensor::check_dim_order(t)?;
    let nbytes = tensor::nbytes(t)?;
    t.storage_offset()?;
    t.shape_dynamism()?;
    t.requires_grad()?;
    t.layout()?;
    let external = match t.extra_tensor_info()? {
        Some(info) => {
            info.mutable_data_segments_idx()?;
            info.fully_qualified_name()?;
            info.device_type()?;
            info.device_index()?;
            info.location()? == TensorDataLocation::External
        }
        None => false,
    };
    let data_buffer_idx = t.data_buffer_idx()?;
    match t.allocation_info()? {
        Some(alloc) => {
            let id = alloc.memory_id()? as usize;
            if id == 0 || id >= buffer_sizes.len() {
                return Err(Error::invalid("memory_id out of range", alloc.position()));
            }
            let size = buffer_sizes.get(id)? as u64;
            let end = alloc
                .memory_offset()?
                .checked_add(nbytes as u64)
                .ok_or(Error::invalid("planned offset overflows", alloc.position()))?;
            if end > size {
                return Err(Error::invalid(
                    "planned tensor outside its buffer",
                    alloc.position(),
                ));
            }
            if data_buffer_idx > 0 && !external {
                // Initial value of a mutable planned tensor.
                let mutable = file.program().mutable_data_segments()?;
                let first = mutable.get(0)?;
                let offsets = first.offsets()?;
                let start = offsets.get(data_buffer_idx as usize)?;
                let segment = file.segment(first.segment_index()? as usize)?;
                let fits = start
                    .checked_add(nbytes as u64)
                    .is_some_and(|e| e <= segment.len() as u64);
                if !fits {
                    return Err(Error::invalid("mutable data outside its segment", at));
                }
            }
        }
        None => {
            if data_buffer_idx > 0 && !external {
                file.constant_data(data_buffer_idx, nbytes)?;
            }
        }
    }
    Ok(())
}
