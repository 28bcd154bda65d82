//! `Method`: a loaded, runnable method.

use etch_pte::flatbuffer::same_bytes;
use etch_pte::schema::EValue;
use etch_pte::{InstructionArgs, Value, ValueKind, Vector};

use crate::backend::Backend;
use crate::context::{Arenas, KernelContext};
use crate::meta::{MethodMeta, TensorInfo};
use crate::overrides::{AS_DECLARED, UNSET};
use crate::registry::Kernel;
use crate::state::{instruction, Cursor, Layout, State, END};
use crate::tensor::TensorView;
use crate::values::value_of;
mod checks;
mod observer;

use checks::*;
pub use observer::{ExecutionObserver, InstructionValues, NoObserver};

use crate::{
    Error, ErrorCode, Result, DEFAULT_INSTRUCTION_LIMIT, MAX_MEMORY_IDS, PLANNED_BUFFER_ALIGNMENT,
};

/// An output value.
#[derive(Clone, Copy, Debug)]
pub enum Output<'d> {
    Tensor(TensorView<'d>),
    Int(i64),
    Double(f64),
    Bool(bool),
    None,
}

/// A method loaded into caller-owned memory, ready to execute.
pub struct Method<'a, 'm> {
    // The plan view, the file's bytes and segment base: the caller's
    // `MethodMeta` (six words, copied at the end of `load` without `memcpy`).
    meta: MethodMeta<'a>,
    values: Vector<'a, EValue<'a>>,
    kernels: &'m [Kernel],
    backends: &'m [&'m dyn Backend],
    state: State<'m>,
    planned: &'m mut [&'m mut [u8]],
    instruction_limit: u32,
}

impl<'a, 'm> Method<'a, 'm> {
    /// Loads the method described by `meta`.
    ///
    /// - `state`: at least `meta.method_state_bytes(kernels)` bytes;
    /// - `planned`: one buffer per memory id, each at least
    ///   `meta.memory_planned_buffer_size(i)` bytes and 16-byte aligned;
    /// - `kernels`: the selected kernels; every operator the method calls must
    ///   be there (all missing ones are logged, then `OperatorMissing`, with
    ///   `at` = how many; `MethodMeta::for_each_missing_operator` lists them);
    /// - `backends`: for delegate calls, looked up by id.
    ///
    /// Short buffers fail with `MemoryAllocationFailed` and `at` = the
    /// shortfall in bytes, before anything is written.
    pub fn load(
        meta: &MethodMeta<'a>,
        state: &'m mut [u8],
        planned: &'m mut [&'m mut [u8]],
        kernels: &'m [Kernel],
        backends: &'m [&'m dyn Backend],
    ) -> Result<Self> {
        let file = meta.file();
        let plan = meta.plan;
        let values = plan.values()?;
        let layout = Layout::of(&plan, kernels, None)?;

        // Memory first: nothing is written unless everything fits.
        let needed_buffers = meta.num_memory_planned_buffers()?;
        if needed_buffers > MAX_MEMORY_IDS {
            return Err(Error::new(
                ErrorCode::NotSupported,
                "too many memory ids",
                needed_buffers as u32,
            ));
        }
        if planned.len() < needed_buffers {
            return Err(Error::new(
                ErrorCode::MemoryAllocationFailed,
                "fewer planned buffers than memory ids (at = missing count)",
                (needed_buffers - planned.len()) as u32,
            ));
        }
        // The largest byte count any tensor of this program can really
        // occupy: the program data or its largest planned buffer.
        let mut largest = file.data().len();
        for (i, buf) in planned.iter().take(needed_buffers).enumerate() {
            let need = meta.memory_planned_buffer_size(i)?;
            largest = largest.max(need);
            if buf.len() < need {
                etch_log!(
                    error,
                    "planned buffer {} needs {} B, got {} B",
                    i,
                    need,
                    buf.len()
                );
                return Err(alloc_failed(
                    "planned buffer too small (at = shortfall in bytes)",
                    need - buf.len(),
                ));
            }
            if !(buf.as_ptr() as usize).is_multiple_of(PLANNED_BUFFER_ALIGNMENT) {
                return Err(Error::new(
                    ErrorCode::InvalidArgument,
                    "planned buffer not 16-byte aligned",
                    i as u32,
                ));
            }
        }

        // Values: reject what etch cannot run, and check every planned
        // tensor fits its buffer (repeats verification's check for files
        // loaded with Verification::Minimal).
        for i in 0..values.len() {
            let Value::Tensor(t) = value_of(&values, i)? else {
                continue;
            };
            check_tensor(&t, meta, planned, largest, i)?;
        }

        let mut state = State::new(&layout, state)?;

        // Operators (each call resolved, its schema checked) and the values
        // written at run time, in one walk; then every missing operator.
        Layout::of(&plan, kernels, Some(state.fill()))?;
        if layout.missing > 0 {
            // Name every missing operator once (with `log`); `at` is the
            // walk's count of distinct ones.
            #[cfg(feature = "log")]
            meta.for_each_missing_operator(kernels, |_name, _overload| {
                etch_log!(error, "missing operator: {}.{}", _name, _overload);
            })?;
            return Err(Error::new(
                ErrorCode::OperatorMissing,
                "operators missing from the registry (at = how many)",
                layout.missing as u32,
            ));
        }

        // Each kernel call's arguments, decoded once (`calls`).
        state.fill_calls(&meta.plan, meta.file(), kernels)?;

        // Delegates.
        for (i, d) in plan.delegates()?.iter().enumerate() {
            let d = d?;
            let id = d.id_bytes()?;
            // The backend is found by id here only: its index is kept in
            // the state, so `execute` reads neither the delegate nor its id.
            let found =
                (backends.iter().enumerate()).find(|(_, b)| same_bytes(b.id().as_bytes(), id));
            let Some((b, backend)) = found else {
                etch_log!(
                    error,
                    "backend not found: {}",
                    core::str::from_utf8(id).unwrap_or("(not UTF-8)")
                );
                return Err(Error::new(
                    ErrorCode::NotFound,
                    "backend not registered",
                    i as u32,
                ));
            };
            let handle = backend.init(file.delegate_data(d.processed()?)?, d.compile_specs()?)?;
            state.set_delegate(i, handle, b);
        }

        // The mutable buffers' initial values, before the method is made
        // (made in place as the result: moved after a call, `Method` was a
        // `memcpy`).
        // The file, not `meta`: a reference to `meta` kept it in memory,
        // and on Armv6-M its 24 bytes were copied there with `memcpy`.
        init_mutable(planned, &file, &values)?;
        Ok(Method {
            meta: *meta,
            values,
            kernels,
            backends,
            state,
            planned,
            instruction_limit: DEFAULT_INSTRUCTION_LIMIT,
        })
    }

    /// Sets every mutable buffer (a planned tensor with an initial value,
    /// what the exporter makes of a `register_buffer` the model updates in
    /// place) back to the program's initial value, as loading the method
    /// again would, without touching anything else: what a stream starts
    /// over with. `load` calls it once; afterwards the buffers are the
    /// method's state, carried from one `execute` to the next in the
    /// caller's planned memory. Mutable buffers the exporter gave no
    /// initial value (without `InitializedMutableBufferPass`, ExecuTorch
    /// serializes only their shape: `data_buffer_idx` 0) are ordinary
    /// planned memory and keep what they hold.
    ///
    /// `InvalidProgram` when an initial value lies outside the program's
    /// mutable data segment (a hostile file; verification rejects it at
    /// load).
    pub fn reset_state(&mut self) -> Result<()> {
        init_mutable(self.planned, &self.meta.file(), &self.values)
    }

    /// The metadata the method was loaded from (operator names per
    /// instruction, I/O facts), without keeping a separate copy of it.
    pub fn meta(&self) -> MethodMeta<'a> {
        self.meta
    }

    /// Planned buffer `i` (memory id `i + 1`) as the method sees it: the
    /// caller's memory, borrowed for the method's life. The mutable state
    /// (`etch inspect` lists where) lives here and nowhere else.
    pub fn planned_buffer(&self, i: usize) -> Option<&[u8]> {
        self.planned.get(i).map(|b| &**b)
    }

    /// Caps instructions per `execute` (against malformed jump loops).
    pub fn set_instruction_limit(&mut self, limit: u32) {
        self.instruction_limit = limit;
    }

    pub fn num_inputs(&self) -> Result<usize> {
        Ok(self.meta.plan.inputs()?.len())
    }

    pub fn num_outputs(&self) -> Result<usize> {
        Ok(self.meta.plan.outputs()?.len())
    }

    fn input_tensor(&self, i: usize) -> Result<etch_pte::schema::Tensor<'a>> {
        let v = self.meta.plan.inputs()?.get(i)?;
        match value_of(&self.values, v as usize)? {
            Value::Tensor(t) => Ok(t),
            _ => Err(Error::new(
                ErrorCode::NotSupported,
                "non-tensor input",
                i as u32,
            )),
        }
    }

    pub fn input_meta(&self, i: usize) -> Result<TensorInfo<'a>> {
        TensorInfo::of(&self.input_tensor(i)?)
    }

    /// Copies `bytes` (the input's exact size at its current sizes, in its
    /// dim order and dtype) into input `i`'s planned memory.
    pub fn set_input_bytes(&mut self, i: usize, bytes: &[u8]) -> Result<()> {
        let t = self.input_tensor(i)?;
        let nbytes = if cfg!(feature = "dynamic") {
            let v = self.meta.plan.inputs()?.get(i)? as usize;
            crate::dims::current(&t, self.state.dims(), v)?.1
        } else {
            etch_pte::tensor::nbytes(&t)?
        };
        if bytes.len() != nbytes {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "input has the wrong size (at = expected bytes)",
                nbytes as u32,
            ));
        }
        let Some(a) = t.allocation_info()? else {
            return Err(Error::new(
                ErrorCode::NotSupported,
                "input is not memory-planned",
                i as u32,
            ));
        };
        let dst = planned_mut(self.planned, &a, bytes.len()).ok_or(Error::new(
            ErrorCode::InvalidProgram,
            "input outside its buffer",
            i as u32,
        ))?;
        crate::memory::copy_slice(dst, bytes);
        self.state.set_input_set(i);
        Ok(())
    }

    /// Like [`Method::set_input_bytes`], checking dtype and shape first.
    /// As ExecuTorch's `set_input`, the method's input is first resized to
    /// `input`'s sizes: a bounded dynamic input (`DYNAMIC_BOUND`) takes any
    /// sizes of its rank with at most its planned number of elements, a
    /// static one only its own sizes (anything else is `InvalidArgument`,
    /// and the input keeps its sizes).
    pub fn set_input(&mut self, i: usize, input: TensorView<'_>) -> Result<()> {
        let info = self.input_meta(i)?;
        if input.dtype != info.dtype {
            return Err(Error::new(
                ErrorCode::InvalidType,
                "input dtype differs",
                i as u32,
            ));
        }
        if !input.shape.memory_order_matches(info.shape.dim_order())
            || (!cfg!(feature = "dynamic") && input.shape.sizes() != info.shape.sizes())
        {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "input shape differs",
                i as u32,
            ));
        }
        if cfg!(feature = "dynamic") {
            self.resize_input(i, input.shape.sizes())?;
        }
        self.set_input_bytes(i, input.data)
    }

    /// Resizes input `i` to `sizes` (see [`Method::set_input`]); a static
    /// input accepts only its own sizes. Input `i`'s byte size is then
    /// `sizes`' element count times its element size.
    pub fn resize_input(&mut self, i: usize, sizes: crate::Sizes<'_>) -> Result<()> {
        let t = self.input_tensor(i)?;
        let v = self.meta.plan.inputs()?.get(i)? as usize;
        let mut new = [0i64; etch_pte::tensor::MAX_RANK];
        if sizes.len() > new.len() {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "input shape differs",
                i as u32,
            ));
        }
        for (slot, s) in new.iter_mut().zip(sizes.iter()) {
            *slot = s as i64;
        }
        let new = new.get(..sizes.len()).unwrap_or(&[]);
        crate::dims::resize(self.state.dims_mut(), v, &t, new).map_err(|e| e.with_at(i as u32))
    }

    /// Output `i`: a view into planned memory (valid until the next `execute`)
    /// or a scalar.
    pub fn output(&self, i: usize) -> Result<Output<'_>> {
        let v = self.meta.plan.outputs()?.get(i)? as usize;
        self.value_output(v, i as u32)
    }

    /// Value `v` of the method's value table as an [`Output`]; errors carry `i`.
    fn value_output(&self, v: usize, i: u32) -> Result<Output<'_>> {
        let value = value_of(&self.values, v)?;
        let slot = self.state.overrides().slot(v);
        let payload = slot.map(|(_, p)| p);
        // A scalar: of the kind and payload its last writer gave it.
        let declared = match value {
            Value::Int(x) => Some((ValueKind::Int, x as u64)),
            Value::Double(x) => Some((ValueKind::Double, x.to_bits())),
            Value::Bool(x) => Some((ValueKind::Bool, x as u64)),
            _ => None,
        };
        if let Some((kind, bits)) = declared {
            let (kind, p) = match slot {
                Some((AS_DECLARED, p)) => (kind as u8, p),
                Some(s) => s,
                None => (kind as u8, bits),
            };
            return Ok(match kind {
                k if k == ValueKind::Int as u8 => Output::Int(p as i64),
                k if k == ValueKind::Double as u8 => Output::Double(f64::from_bits(p)),
                _ => Output::Bool(p != 0),
            });
        }
        Ok(match value {
            Value::Null => Output::None,
            Value::Tensor(t) => {
                let source = match payload {
                    Some(UNSET) => {
                        return Err(Error::new(
                            ErrorCode::InvalidState,
                            "output view not set",
                            i,
                        ))
                    }
                    Some(p) => match value_of(&self.values, p as usize)? {
                        Value::Tensor(s) => s,
                        _ => {
                            return Err(Error::new(
                                ErrorCode::InvalidProgram,
                                "view source is not a Tensor",
                                i,
                            ))
                        }
                    },
                    None => t,
                };
                // Its current sizes (a bounded dynamic output's run-time
                // ones); without `dynamic`, the serialized ones read as
                // before (one (Shape, usize) pair was a memcpy on Armv6-M).
                let dims = self.state.dims();
                let nbytes = if cfg!(feature = "dynamic") {
                    crate::dims::current(&t, dims, v)?.1
                } else {
                    etch_pte::tensor::nbytes(&t)?
                };
                let data = tensor_data(self.planned, &self.meta, &source, nbytes, i)?;
                Output::Tensor(TensorView {
                    dtype: t.scalar_type()?,
                    shape: if cfg!(feature = "dynamic") {
                        crate::dims::current(&t, dims, v)?.0
                    } else {
                        crate::tensor::Shape::from_serialized(&t)?
                    },
                    data,
                })
            }
            _ => return Err(Error::new(ErrorCode::NotSupported, "list output", i)),
        })
    }

    /// Runs the method once.
    pub fn execute(&mut self) -> Result<()> {
        self.execute_observed(&mut NoObserver)
    }

    /// Runs the method once, calling `observer` around each instruction.
    /// Errors carry the failing instruction's index in `at`.
    pub fn execute_observed<O: ExecutionObserver>(&mut self, observer: &mut O) -> Result<()> {
        if let Some(i) = self.state.first_unset_input() {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "input not set",
                i as u32,
            ));
        }
        let mut executed: u32 = 0;
        let mut at = Cursor::default();
        let mut index = 0usize; // numbered across chains
                                // Past the last instruction (of the last chain): what decoding
                                // instruction `n` would say (`END`), from the count load's walk made.
        let end = self.state.instructions();
        while index < end {
            let at_index = |e: Error| e.with_at(index as u32);
            // A kernel call decoded at load (`calls`): its operator and
            // argument vector from its table, not from the program.
            // Anything else is decoded by the walk's own reader: `load` ran
            // it over every instruction of the plan (`Layout::of`), so for
            // a loaded method this read cannot fail (the file is immutable).
            let start = self.state.call_start(index);
            let instr = match self.state.call_from(start).head() {
                Some((op_index, args_at)) => {
                    let program = self.meta.plan.0.buffer();
                    let args = Vector::<i32>::at(program, args_at).map_err(at_index)?;
                    InstructionArgs::KernelCall {
                        op_index: op_index as i32,
                        args,
                    }
                }
                None => {
                    let f = instruction(&self.meta.plan, index, &mut at)?;
                    if f.op == END {
                        break;
                    }
                    f.instr
                }
            };
            executed += 1;
            if executed > self.instruction_limit {
                return Err(Error::new(
                    ErrorCode::InvalidState,
                    "instruction limit reached",
                    index as u32,
                ));
            }
            let mut next = index + 1;
            match instr {
                InstructionArgs::KernelCall { op_index, args } => {
                    let k = self.state.kernel(index);
                    let kernel = self.kernels.get(k).ok_or(Error::new(
                        ErrorCode::OperatorMissing,
                        "kernel not resolved",
                        index as u32,
                    ))?;
                    observer.before(index as u32, Some(op_index as u32));
                    let mut ctx = self.context(args, k, start);
                    (kernel.run)(&mut ctx).map_err(at_index)?;
                    observer.after(index as u32);
                    observer.after_values(index as u32, &InstructionValues { method: self, args });
                }
                InstructionArgs::DelegateCall {
                    delegate_index,
                    args,
                } => {
                    // Load initialised every delegate of the plan and
                    // kept its backend's index + 1: 0 is an index past
                    // the plan's delegates (as the delegate vector's
                    // read said before, InvalidProgram).
                    let (handle, b) = self.state.delegate(delegate_index as usize);
                    let backend =
                        (self.backends.get((b as usize).wrapping_sub(1))).ok_or(Error::new(
                            ErrorCode::InvalidProgram,
                            "delegate index out of range",
                            index as u32,
                        ))?;
                    observer.before(index as u32, None);
                    let mut ctx = self.context(args, usize::MAX, 0);
                    backend.execute(handle, &mut ctx).map_err(at_index)?;
                    observer.after(index as u32);
                    observer.after_values(index as u32, &InstructionValues { method: self, args });
                }
                InstructionArgs::MoveCall { move_from, move_to } => {
                    self.move_value(move_from as usize, move_to as usize)
                        .map_err(at_index)?;
                }
                InstructionArgs::JumpFalseCall {
                    cond_value_index,
                    destination_instruction,
                } => {
                    // A destination equal to the chain's instruction count
                    // ends the chain (the next chain's first instruction);
                    // past it or negative is InvalidProgram (verification
                    // rejects it at load).
                    if !self
                        .condition(cond_value_index as usize)
                        .map_err(at_index)?
                    {
                        let d = destination_instruction as u32 as usize;
                        if d > at.len {
                            return Err(Error::new(
                                ErrorCode::InvalidProgram,
                                "JumpFalse destination out of range",
                                index as u32,
                            ));
                        }
                        next = at.base + d;
                    }
                }
                InstructionArgs::FreeCall { .. } => {
                    // Data of dynamic-unbound tensors only; etch rejects those at load.
                }
            }
            index = next;
        }
        Ok(())
    }

    // Out of line: one copy for kernel and delegate calls.
    #[inline(never)]
    fn context(
        &mut self,
        args: Vector<'a, i32>,
        kernel: usize,
        start: usize,
    ) -> KernelContext<'_, 'a> {
        // `start`: where the call's decoded table starts (`execute` found
        // it for the instruction; 0: none).
        let (overrides, dims, scratch, call) = self.state.call_parts(start);
        KernelContext {
            meta: &self.meta,
            values: self.values,
            args,
            call,
            memory: &mut self.planned as &mut dyn Arenas,
            overrides,
            dims,
            scratch,
            kernel,
        }
    }

    // Out of line: its locals stay out of `execute`'s frame, which is on
    // the stack under every kernel call.
    #[inline(never)]
    fn move_value(&mut self, from: usize, to: usize) -> Result<()> {
        // The serialized payload, then the run-time one if any (a
        // tensor's is the value it aliases, unless not yet set).
        // Kind and payload move together (ExecuTorch copies the EValue).
        let value = value_of(&self.values, from)?;
        let bits = match value {
            Value::Int(x) => x as u64,
            Value::Double(x) => x.to_bits(),
            Value::Bool(x) => x as u64,
            Value::Tensor(_) => from as u64,
            _ => {
                return Err(Error::new(
                    ErrorCode::NotSupported,
                    "MoveCall of a list",
                    from as u32,
                ))
            }
        };
        let (kind, payload) = match self.state.overrides().slot(from) {
            Some((k, p)) if p != UNSET || !matches!(value, Value::Tensor(_)) => (k, p),
            _ => (AS_DECLARED, bits),
        };
        // The target decoded by the same out-of-line lookup (not an
        // inlined `kind()` read): its variant is its kind.
        let target = value_of(&self.values, to)?;
        if core::mem::discriminant(&target) != core::mem::discriminant(&value) {
            return Err(Error::new(
                ErrorCode::InvalidProgram,
                "MoveCall between kinds",
                to as u32,
            ));
        }
        // A moved tensor takes its source's current sizes too (ExecuTorch
        // copies the EValue: the target is the source's TensorImpl): a
        // `torch.cond` branch's result of run-time sizes.
        #[cfg(feature = "dynamic")]
        if let (Value::Tensor(src), Value::Tensor(dst)) = (value, target) {
            let mut sizes = [0i64; etch_pte::tensor::MAX_RANK];
            let (shape, _) = crate::dims::current(&src, self.state.dims(), from)?;
            let rank = shape.rank();
            for (slot, s) in sizes.iter_mut().zip(shape.sizes().iter()) {
                *slot = s as i64;
            }
            let sizes = sizes.get(..rank).unwrap_or(&[]);
            crate::dims::resize(self.state.dims_mut(), to, &dst, sizes)?;
        }
        // Load's walk gave every Move target a slot (`facts`: the target
        // of a MoveCall is kept whatever its kind), so this cannot miss.
        self.state.overrides_mut().put(to, kind, payload);
        Ok(())
    }

    /// A JumpFalse condition: a Bool, or every byte of a bool tensor (read
    /// as an output is, so an alias reads its source's bytes).
    fn condition(&self, v: usize) -> Result<bool> {
        match self.value_output(v, v as u32)? {
            Output::Bool(b) => Ok(b),
            Output::Tensor(t) if t.dtype == crate::ScalarType::BOOL => {
                Ok(t.data.iter().all(|&b| b != 0))
            }
            _ => Err(Error::new(
                ErrorCode::InvalidProgram,
                "JumpFalse condition not Bool",
                v as u32,
            )),
        }
    }
}
