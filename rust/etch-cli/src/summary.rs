//! What `etch inspect` reports about a program, computed once from the file
//! and rendered as text or JSON.

use etch_pte::schema::{ExecutionPlan, Tensor};
use etch_pte::{InstructionArgs, PteFile, Result, Value, ValueKind};

pub struct FileSummary {
    pub file_size: usize,
    pub program_size: usize,
    pub segment_base_offset: usize,
    pub segments: Vec<(u64, u64)>,
    pub constant_buffers: usize,
    pub constant_bytes: usize,
    pub unused_constant_bytes: usize,
    pub unused_constant_buffers: Vec<u32>,
    pub methods: Vec<MethodSummary>,
}

pub struct OperatorUse {
    pub name: String,
    pub overload: String,
    pub count: usize,
}

pub enum IoSummary {
    Tensor(TensorSummary),
    Scalar { kind: &'static str, value: String },
}

pub struct TensorSummary {
    pub index: usize,
    pub dtype: &'static str,
    pub sizes: Vec<i32>,
    pub dim_order: Vec<u8>,
    pub nbytes: usize,
    /// (memory id, offset) when memory-planned.
    pub placement: Option<(u32, u64)>,
    pub constant: Option<u32>,
    /// A mutable buffer's initial value (its `data_buffer_idx` into the
    /// program's mutable data segment): a planned tensor holding state that
    /// `Method::load` and `Method::reset_state` initialise.
    pub mutable: Option<u32>,
}

pub struct MethodSummary {
    pub name: String,
    pub values: usize,
    pub value_kinds: Vec<(&'static str, usize)>,
    pub chains: usize,
    pub instructions: usize,
    pub operators: Vec<OperatorUse>,
    pub delegates: Vec<String>,
    pub inputs: Vec<IoSummary>,
    pub outputs: Vec<IoSummary>,
    /// Bytes per memory id, without the reserved entry 0.
    pub planned_buffers: Vec<i64>,
    /// Every planned tensor: (value index, summary), sorted by (memory id, offset).
    pub planned_tensors: Vec<TensorSummary>,
    /// Exact bytes of method state `Method::load` takes (with etch's kernels).
    pub method_state_bytes: usize,
    /// The kernels' scratch inside it (the largest `Kernel::scratch`).
    pub kernel_scratch_bytes: usize,
    /// The kernel calls decoded at load inside it.
    pub decoded_call_bytes: usize,
}

pub fn tensor_summary(index: usize, t: &Tensor<'_>) -> Result<TensorSummary> {
    let sizes = t.sizes()?.iter().collect::<Result<Vec<_>>>()?;
    let dim_order = t.dim_order()?.bytes().to_vec();
    let placement = match t.allocation_info()? {
        Some(a) => Some((a.memory_id()?, a.memory_offset()?)),
        None => None,
    };
    let idx = t.data_buffer_idx()?;
    Ok(TensorSummary {
        index,
        dtype: t.scalar_type()?.name(),
        sizes,
        dim_order,
        nbytes: etch_pte::tensor::nbytes(t)?,
        placement,
        constant: (idx > 0 && placement.is_none()).then_some(idx),
        mutable: (idx > 0 && placement.is_some()).then_some(idx),
    })
}

fn io_summary(plan: &ExecutionPlan<'_>, index: usize) -> Result<IoSummary> {
    let v = plan.values()?.get(index)?;
    Ok(match v.value()? {
        Value::Tensor(t) => IoSummary::Tensor(tensor_summary(index, &t)?),
        Value::Int(i) => IoSummary::Scalar {
            kind: "Int",
            value: i.to_string(),
        },
        Value::Double(d) => IoSummary::Scalar {
            kind: "Double",
            value: format!("{d:?}"),
        },
        Value::Bool(b) => IoSummary::Scalar {
            kind: "Bool",
            value: b.to_string(),
        },
        _ => IoSummary::Scalar {
            kind: v.kind()?.name(),
            value: String::new(),
        },
    })
}

/// Value indices an instruction reads or writes, lists expanded.
fn mark_used(plan: &ExecutionPlan<'_>, used: &mut [bool]) -> Result<()> {
    let values = plan.values()?;
    let mark = |i: usize, used: &mut [bool]| -> Result<()> {
        if let Some(u) = used.get_mut(i) {
            *u = true;
        }
        match values.get(i)?.value()? {
            Value::TensorList(items) | Value::OptionalTensorList(items) => {
                for it in items.iter() {
                    if let Some(u) = usize::try_from(it?).ok().and_then(|j| used.get_mut(j)) {
                        *u = true;
                    }
                }
            }
            _ => {}
        }
        Ok(())
    };
    for io in plan.inputs()?.iter().chain(plan.outputs()?.iter()) {
        mark(io? as usize, used)?;
    }
    for chain in plan.chains()?.iter() {
        for instr in chain?.instructions()?.iter() {
            match instr?.args()? {
                InstructionArgs::KernelCall { args, .. }
                | InstructionArgs::DelegateCall { args, .. } => {
                    for a in args.iter() {
                        mark(a? as usize, used)?;
                    }
                }
                InstructionArgs::MoveCall { move_from, move_to } => {
                    mark(move_from as usize, used)?;
                    mark(move_to as usize, used)?;
                }
                InstructionArgs::JumpFalseCall {
                    cond_value_index, ..
                } => mark(cond_value_index as usize, used)?,
                InstructionArgs::FreeCall { value_index } => mark(value_index as usize, used)?,
            }
        }
    }
    Ok(())
}

pub fn summarize(file: &PteFile<'_>) -> Result<FileSummary> {
    let program = file.program();
    let mut segments = Vec::new();
    for s in program.segments()?.iter() {
        let s = s?;
        segments.push((s.offset()?, s.size()?));
    }
    let (constant_buffers, constant_bytes) = match file.constant_segment()? {
        Some((cs, offsets)) => (
            offsets.len() - 1,
            file.segment(cs.segment_index()? as usize)?.len(),
        ),
        None => {
            let cb = program.constant_buffer()?;
            let mut bytes = 0;
            for b in cb.iter() {
                bytes += b?.storage()?.len();
            }
            (cb.len().saturating_sub(1), bytes)
        }
    };

    // Constant buffers: largest tensor using each, and whether any used value refers to it.
    let mut buffer_size = vec![0usize; constant_buffers + 1];
    let mut buffer_used = vec![false; constant_buffers + 1];
    let mut methods = Vec::new();
    for plan in program.execution_plan()?.iter() {
        let plan = plan?;
        let values = plan.values()?;
        let mut used = vec![false; values.len()];
        mark_used(&plan, &mut used)?;
        let mut kinds: Vec<(&'static str, usize)> =
            ValueKind::ALL.iter().map(|k| (k.name(), 0)).collect();
        let mut planned_tensors = Vec::new();
        for (i, v) in values.iter().enumerate() {
            let v = v?;
            let kind = v.kind()?;
            if let Some(k) = kinds.iter_mut().find(|(n, _)| *n == kind.name()) {
                k.1 += 1;
            }
            if let Value::Tensor(t) = v.value()? {
                let ts = tensor_summary(i, &t)?;
                if let Some(idx) = ts.constant {
                    let idx = idx as usize;
                    if idx < buffer_size.len() {
                        buffer_size[idx] = buffer_size[idx].max(ts.nbytes);
                        buffer_used[idx] |= used[i];
                    }
                }
                if ts.placement.is_some() {
                    planned_tensors.push(ts);
                }
            }
        }
        kinds.retain(|(_, n)| *n > 0);
        planned_tensors.sort_by_key(|t| (t.placement, t.index));

        let operators_table = plan.operators()?;
        let mut operators = Vec::new();
        for op in operators_table.iter() {
            let op = op?;
            operators.push(OperatorUse {
                name: op.name()?.to_string(),
                overload: op.overload()?.to_string(),
                count: 0,
            });
        }
        let mut instructions = 0;
        let chains = plan.chains()?;
        for chain in chains.iter() {
            for instr in chain?.instructions()?.iter() {
                instructions += 1;
                if let InstructionArgs::KernelCall { op_index, .. } = instr?.args()? {
                    if let Some(op) = operators.get_mut(op_index as usize) {
                        op.count += 1;
                    }
                }
            }
        }
        let mut delegates = Vec::new();
        for d in plan.delegates()?.iter() {
            delegates.push(d?.id()?.to_string());
        }
        let mut inputs = Vec::new();
        for i in plan.inputs()?.iter() {
            inputs.push(io_summary(&plan, i? as usize)?);
        }
        let mut outputs = Vec::new();
        for i in plan.outputs()?.iter() {
            outputs.push(io_summary(&plan, i? as usize)?);
        }
        let planned_buffers = plan
            .non_const_buffer_sizes()?
            .iter()
            .skip(1)
            .collect::<Result<Vec<_>>>()?;
        let meta = etch_runtime::Program::from_file(*file).method_meta(plan.name()?)?;
        methods.push(MethodSummary {
            method_state_bytes: meta.method_state_bytes(etch_kernels::KERNELS)?,
            kernel_scratch_bytes: meta.kernel_scratch_bytes(etch_kernels::KERNELS)?,
            decoded_call_bytes: meta.decoded_call_bytes(etch_kernels::KERNELS)?,
            name: plan.name()?.to_string(),
            values: values.len(),
            value_kinds: kinds,
            chains: chains.len(),
            instructions,
            operators,
            delegates,
            inputs,
            outputs,
            planned_buffers,
            planned_tensors,
        });
    }
    let unused_constant_buffers: Vec<u32> = (1..buffer_used.len())
        .filter(|&i| !buffer_used[i])
        .map(|i| i as u32)
        .collect();
    let unused_constant_bytes = unused_constant_buffers
        .iter()
        .map(|&i| buffer_size[i as usize])
        .sum();
    Ok(FileSummary {
        file_size: file.data().len(),
        program_size: file.program_size(),
        segment_base_offset: file.segment_base_offset(),
        segments,
        constant_buffers,
        constant_bytes,
        unused_constant_bytes,
        unused_constant_buffers,
        methods,
    })
}
