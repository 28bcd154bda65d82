//! ExecuTorch's ETDump, written by etch: per-operator profiling events timed
//! with the caller's clock and, when asked, every instruction's output
//! tensor, so ExecuTorch's devtools `Inspector` can read an etch run.
//!
//! `#![no_std]`, no alloc: the ETDump flatbuffer (schema
//! `devtools/etdump/etdump_schema_flatcc.fbs`, file identifier `ED00`,
//! size-prefixed as ExecuTorch's `ETDumpGen` writes it) is built in one
//! caller buffer, and intermediate tensors go into a second one (the
//! Inspector's `debug_buffer_path`). A buffer that is too small gives
//! `MemoryAllocationFailed` (0x21), never a panic.
//!
//! ```ignore
//! let mut dump = EtDumpObserver::new(&mut etdump_buf, &meta, || cycles());
//! dump.execute(&mut method)?;             // one RunData block named "Execute"
//! let (etdp, debug) = dump.finish()?;     // bytes to store or send
//! ```
//!
//! Events follow ExecuTorch's runtime: one `ProfileEvent` per kernel call
//! named `native_call_<operator>.<overload>` (as its generated kernel
//! wrappers name them) or `DELEGATE_CALL`, with `instruction_id` and
//! `chain_index`, and `Method::execute` around the whole run. Intermediate
//! outputs are `DebugEvent`s with the kernel's return value (its last
//! argument); tensors are written in logical (C) order with contiguous
//! strides, which is how the Inspector reads them.

#![no_std]
#![forbid(unsafe_code)]

mod flatbuf;

use etch_runtime::{
    Error, ErrorCode, ExecutionObserver, InstructionValues, Method, MethodMeta, Output, Result,
    TensorView,
};
use flatbuf::{Builder, Off};

pub use flatbuf::too_small;

/// File identifier of ETDump flatbuffers.
pub const FILE_IDENTIFIER: &[u8; 4] = b"ED00";

// Field slots, in schema declaration order.
mod slot {
    pub const ETDUMP_RUN_DATA: u16 = 1;
    pub const RUN_NAME: u16 = 0;
    pub const RUN_EVENTS: u16 = 3;
    pub const EVENT_PROFILE: u16 = 0;
    pub const EVENT_DEBUG: u16 = 2;
    pub const PROFILE_NAME: u16 = 0;
    pub const PROFILE_CHAIN: u16 = 1;
    pub const PROFILE_INSTRUCTION: u16 = 2;
    pub const PROFILE_START: u16 = 6;
    pub const PROFILE_END: u16 = 7;
    pub const DEBUG_CHAIN: u16 = 0;
    pub const DEBUG_INSTRUCTION: u16 = 1;
    pub const DEBUG_ENTRY: u16 = 2;
    pub const VALUE_VAL: u16 = 0;
    pub const VALUE_TENSOR: u16 = 1;
    pub const VALUE_TENSOR_LIST: u16 = 2;
    pub const VALUE_OUTPUT: u16 = 7;
    pub const TENSOR_SCALAR_TYPE: u16 = 0;
    pub const TENSOR_SIZES: u16 = 1;
    pub const TENSOR_STRIDES: u16 = 2;
    pub const TENSOR_OFFSET: u16 = 3;
    pub const TENSOR_LIST_TENSORS: u16 = 0;
    pub const BOOL_VAL: u16 = 0;
}

// `ValueType` of the schema.
const VALUE_TENSOR: u8 = 5;
const VALUE_TENSOR_LIST: u8 = 6;

/// A string already in the ETDump (names are shared between events).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Name(Off);

/// One profiling event.
#[derive(Clone, Copy, Debug)]
pub struct ProfileEvent {
    pub name: Name,
    pub chain_index: i32,
    /// The instruction, or -1 for events that are not one (`Method::execute`).
    pub instruction_id: i32,
    pub start_time: u64,
    pub end_time: u64,
}

/// A tensor stored in the debug buffer.
#[derive(Clone, Copy, Debug)]
pub struct DebugTensor<'s> {
    pub dtype: etch_runtime::ScalarType,
    /// Logical sizes; the data is contiguous in this order.
    pub sizes: etch_runtime::Sizes<'s>,
    /// Byte offset of the data in the debug buffer.
    pub offset: u64,
}

/// Builds an ETDump in a caller buffer: runs (`RunData` blocks) of events.
pub struct EtDumpWriter<'b> {
    b: Builder<'b>,
    /// Stack index where the open run's events start, and its name.
    run: Option<(usize, Off)>,
    error: Option<Error>,
}

impl<'b> EtDumpWriter<'b> {
    pub fn new(buf: &'b mut [u8]) -> Self {
        EtDumpWriter {
            b: Builder::new(buf),
            run: None,
            error: None,
        }
    }

    /// Remembers the first error: a writer that failed stays failed.
    fn sticky<T>(&mut self, r: Result<T>) -> Result<T> {
        if let Some(e) = self.error {
            return Err(e);
        }
        if let Err(e) = &r {
            self.error = Some(*e);
        }
        r
    }

    /// Bytes in use so far.
    pub fn used(&self) -> usize {
        self.b.used()
    }

    /// A name made of `parts` (concatenated), for events and runs.
    pub fn name(&mut self, parts: &[&str]) -> Result<Name> {
        let r = self.b.string(parts).map(Name);
        self.sticky(r)
    }

    /// Starts a run (a `RunData` block: ExecuTorch names each execution's
    /// block `Execute`), ending the one before.
    pub fn begin_run(&mut self, name: Name) -> Result<()> {
        self.end_run()?;
        let start = self.b.stack_len();
        self.run = Some((start, name.0));
        Ok(())
    }

    /// Ends the open run, if any.
    pub fn end_run(&mut self) -> Result<()> {
        let Some((start, name)) = self.run.take() else {
            return Ok(());
        };
        let r = (|| {
            let events = self.b.stack_vec(start)?;
            self.b.start_table();
            self.b.add_offset(slot::RUN_EVENTS, events)?;
            self.b.add_offset(slot::RUN_NAME, name)?;
            let run = self.b.end_table()?;
            self.b.stack_push(run).map(|_| ())
        })();
        self.sticky(r)
    }

    fn no_run() -> Error {
        Error::new(ErrorCode::InvalidState, "ETDump event outside a run", 0)
    }

    fn push_event(&mut self, slot: u16, inner: Off) -> Result<()> {
        self.b.start_table();
        self.b.add_offset(slot, inner)?;
        let event = self.b.end_table()?;
        self.b.stack_push(event).map(|_| ())
    }

    /// Adds a profiling event to the open run.
    pub fn profile_event(&mut self, e: &ProfileEvent) -> Result<()> {
        if self.run.is_none() {
            return Err(Self::no_run());
        }
        let r = (|| {
            self.b.start_table();
            self.b.add_u64(slot::PROFILE_END, e.end_time)?;
            self.b.add_u64(slot::PROFILE_START, e.start_time)?;
            self.b.add_offset(slot::PROFILE_NAME, e.name.0)?;
            self.b
                .add_i32(slot::PROFILE_INSTRUCTION, e.instruction_id)?;
            self.b.add_i32(slot::PROFILE_CHAIN, e.chain_index)?;
            let pe = self.b.end_table()?;
            self.push_event(slot::EVENT_PROFILE, pe)
        })();
        self.sticky(r)
    }

    fn tensor(&mut self, t: &DebugTensor<'_>) -> Result<Off> {
        let rank = t.sizes.len();
        let sizes = self.b.i64_vec(t.sizes.iter().map(|s| s as i64))?;
        // Contiguous strides of the logical sizes.
        let stride = |d: usize| -> i64 { t.sizes.iter().skip(d + 1).map(|s| s as i64).product() };
        let strides = self.b.i64_vec((0..rank).map(stride))?;
        self.b.start_table();
        self.b.add_i64(slot::TENSOR_OFFSET, t.offset as i64)?;
        self.b.add_offset(slot::TENSOR_STRIDES, strides)?;
        self.b.add_offset(slot::TENSOR_SIZES, sizes)?;
        self.b.add_u8(slot::TENSOR_SCALAR_TYPE, t.dtype.0 as u8)?;
        self.b.end_table()
    }

    fn debug_event(&mut self, chain: u64, instruction: i32, value: Off) -> Result<()> {
        self.b.start_table();
        self.b.add_u64(slot::DEBUG_CHAIN, chain)?;
        self.b.add_offset(slot::DEBUG_ENTRY, value)?;
        self.b.add_i32(slot::DEBUG_INSTRUCTION, instruction)?;
        let de = self.b.end_table()?;
        self.push_event(slot::EVENT_DEBUG, de)
    }

    fn output_flag(&mut self) -> Result<Off> {
        self.b.start_table();
        self.b.add_u8(slot::BOOL_VAL, 1)?;
        self.b.end_table()
    }

    /// Adds a debug event holding one tensor (an intermediate output, or a
    /// program output when `output`).
    pub fn debug_tensor(
        &mut self,
        chain: u64,
        instruction: i32,
        t: &DebugTensor<'_>,
        output: bool,
    ) -> Result<()> {
        if self.run.is_none() {
            return Err(Self::no_run());
        }
        let r = (|| {
            let tensor = self.tensor(t)?;
            let flag = if output {
                Some(self.output_flag()?)
            } else {
                None
            };
            self.b.start_table();
            if let Some(flag) = flag {
                self.b.add_offset(slot::VALUE_OUTPUT, flag)?;
            }
            self.b.add_offset(slot::VALUE_TENSOR, tensor)?;
            self.b.add_u8(slot::VALUE_VAL, VALUE_TENSOR)?;
            let value = self.b.end_table()?;
            self.debug_event(chain, instruction, value)
        })();
        self.sticky(r)
    }

    /// Adds a debug event holding a tensor list.
    pub fn debug_tensor_list<'s>(
        &mut self,
        chain: u64,
        instruction: i32,
        tensors: impl Iterator<Item = DebugTensor<'s>>,
    ) -> Result<()> {
        if self.run.is_none() {
            return Err(Self::no_run());
        }
        let r = (|| {
            let start = self.b.stack_len();
            for t in tensors {
                let t = self.tensor(&t)?;
                self.b.stack_push(t)?;
            }
            let vec = self.b.stack_vec(start)?;
            self.b.start_table();
            self.b.add_offset(slot::TENSOR_LIST_TENSORS, vec)?;
            let list = self.b.end_table()?;
            self.b.start_table();
            self.b.add_offset(slot::VALUE_TENSOR_LIST, list)?;
            self.b.add_u8(slot::VALUE_VAL, VALUE_TENSOR_LIST)?;
            let value = self.b.end_table()?;
            self.debug_event(chain, instruction, value)
        })();
        self.sticky(r)
    }

    /// Ends the open run and writes the root; returns the ETDump file
    /// (`.etdp`) bytes, at the start of the caller's buffer.
    pub fn finish(mut self) -> Result<&'b [u8]> {
        self.end_run()?;
        let r = (|| {
            let runs = self.b.stack_vec(0)?;
            self.b.start_table();
            self.b.add_offset(slot::ETDUMP_RUN_DATA, runs)?;
            let root = self.b.end_table()?;
            self.b.finish(root, FILE_IDENTIFIER)
        })();
        let n = self.sticky(r)?;
        Ok(self.b.into_bytes(n))
    }
}

/// The debug buffer: intermediate tensors, contiguous in logical order,
/// each at a 16-byte aligned offset that the ETDump refers to.
pub struct DebugBuffer<'d> {
    buf: &'d mut [u8],
    len: usize,
}

impl<'d> DebugBuffer<'d> {
    pub fn new(buf: &'d mut [u8]) -> Self {
        DebugBuffer { buf, len: 0 }
    }

    /// Copies `t` in logical order; returns its offset.
    pub fn push(&mut self, t: &TensorView<'_>) -> Result<u64> {
        let elem = t.dtype.element_size().unwrap_or(1);
        let start = self.len.next_multiple_of(16);
        let n = t.shape.numel().saturating_mul(elem);
        let end = start.saturating_add(n);
        if end > self.buf.len() {
            return Err(too_small(end - self.buf.len()));
        }
        let sizes = t.shape.sizes();
        let strides = t.shape.strides();
        let mut idx = strides.map(|_| 0u32);
        let mut out = start;
        for _ in 0..t.shape.numel() {
            let p: usize = idx
                .iter()
                .zip(&strides)
                .map(|(&i, &s)| i as usize * s)
                .sum();
            let src = t
                .data
                .get(p * elem..)
                .filter(|s| s.len() >= elem)
                .ok_or(Error::new(
                    ErrorCode::InvalidArgument,
                    "tensor data shorter than its shape",
                    0,
                ))?;
            if let Some(dst) = self.buf.get_mut(out..) {
                flatbuf::copy(dst.get_mut(..elem).unwrap_or(&mut []), src);
            }
            out += elem;
            // The next index, last dimension fastest. By position, not
            // `zip(sizes).rev()`: a reversed zip of iterators of different
            // lengths links the panic machinery on Cortex-M.
            for d in (0..sizes.len()).rev() {
                let (Some(i), Some(size)) = (idx.get_mut(d), sizes.get(d)) else {
                    break;
                };
                *i += 1;
                if *i < size {
                    break;
                }
                *i = 0;
            }
        }
        self.len = end;
        Ok(start as u64)
    }

    /// The bytes written so far.
    pub fn bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or(&[])
    }

    pub fn into_bytes(self) -> &'d [u8] {
        let buf: &'d [u8] = self.buf;
        buf.get(..self.len).unwrap_or(&[])
    }
}

/// An [`ExecutionObserver`] that records an ETDump: a `ProfileEvent` per
/// kernel or delegate call timed with `clock` (any monotonic tick count:
/// cycles, ns; the Inspector is told the unit) and, with
/// [`EtDumpObserver::with_intermediate_outputs`], a `DebugEvent` with every
/// kernel call's output tensor.
///
/// `OPS` is how many operator names are cached (each name is written once
/// and shared); operators past it get their own copy per event.
pub struct EtDumpObserver<'a, 'b, 'd, C: FnMut() -> u64, const OPS: usize = 32> {
    writer: EtDumpWriter<'b>,
    debug: Option<DebugBuffer<'d>>,
    meta: MethodMeta<'a>,
    clock: C,
    names: [Option<Name>; OPS],
    delegate: Option<Name>,
    op: Option<u32>,
    start: u64,
    run_start: u64,
    error: Option<Error>,
}

impl<'a, 'b, 'd, C: FnMut() -> u64, const OPS: usize> EtDumpObserver<'a, 'b, 'd, C, OPS> {
    /// Records into `etdump`; `meta` is the method's (operator names).
    pub fn new(etdump: &'b mut [u8], meta: &MethodMeta<'a>, clock: C) -> Self {
        EtDumpObserver {
            writer: EtDumpWriter::new(etdump),
            debug: None,
            meta: *meta,
            clock,
            names: [None; OPS],
            delegate: None,
            op: None,
            start: 0,
            run_start: 0,
            error: None,
        }
    }

    /// Also records every kernel call's output tensor into `debug`
    /// (ExecuTorch's debug mode; the Inspector's debug buffer).
    pub fn with_intermediate_outputs(mut self, debug: &'d mut [u8]) -> Self {
        self.debug = Some(DebugBuffer::new(debug));
        self
    }

    fn fail(&mut self, e: Error) {
        if self.error.is_none() {
            self.error = Some(e);
        }
    }

    /// `native_call_<name>.<overload>` of operator `op`, written once.
    fn op_name(&mut self, op: u32) -> Result<Name> {
        if let Some(Some(n)) = self.names.get(op as usize) {
            return Ok(*n);
        }
        let o = self.meta.plan().operators()?.get(op as usize)?;
        let (full, overload) = (o.name()?, o.overload()?);
        // The name after the namespace (`cortex_m::quantized_conv2d` ->
        // `quantized_conv2d`), found without str splitting, whose
        // char-boundary checks link panic machinery into firmware.
        let base = full
            .as_bytes()
            .windows(2)
            .rposition(|w| w == b"::")
            .and_then(|p| full.get(p + 2..))
            .unwrap_or(full);
        let name = if overload.is_empty() {
            self.writer.name(&["native_call_", base])?
        } else {
            self.writer.name(&["native_call_", base, ".", overload])?
        };
        if let Some(slot) = self.names.get_mut(op as usize) {
            *slot = Some(name);
        }
        Ok(name)
    }

    fn delegate_name(&mut self) -> Result<Name> {
        match self.delegate {
            Some(n) => Ok(n),
            None => {
                let n = self.writer.name(&["DELEGATE_CALL"])?;
                self.delegate = Some(n);
                Ok(n)
            }
        }
    }

    /// Runs `method` once as one `Execute` block: the per-instruction
    /// events and `Method::execute` around them; with intermediate outputs,
    /// also the program outputs (marked as outputs, as ExecuTorch logs them).
    pub fn execute(&mut self, method: &mut Method<'_, '_>) -> Result<()> {
        self.begin_run()?;
        method.execute_observed(self)?;
        self.end_run(method)
    }

    /// Starts an `Execute` block, for callers that run
    /// `Method::execute_observed` themselves (with this observer inside
    /// their own); [`EtDumpObserver::end_run`] closes it.
    pub fn begin_run(&mut self) -> Result<()> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let block = self.writer.name(&["Execute"])?;
        self.writer.begin_run(block)?;
        self.run_start = (self.clock)();
        Ok(())
    }

    /// Ends the `Execute` block begun by [`EtDumpObserver::begin_run`].
    pub fn end_run(&mut self, method: &Method<'_, '_>) -> Result<()> {
        let end = (self.clock)();
        if let Some(e) = self.error {
            return Err(e);
        }
        let name = self.writer.name(&["Method::execute"])?;
        self.writer.profile_event(&ProfileEvent {
            name,
            chain_index: 0,
            instruction_id: -1,
            start_time: self.run_start,
            end_time: end,
        })?;
        if self.debug.is_some() {
            for i in 0..method.num_outputs()? {
                if let Output::Tensor(t) = method.output(i)? {
                    self.log_tensor(0, -1, &t, true)?;
                }
            }
        }
        self.writer.end_run()
    }

    fn log_tensor(
        &mut self,
        chain: u64,
        instr: i32,
        t: &TensorView<'_>,
        output: bool,
    ) -> Result<()> {
        let Some(debug) = self.debug.as_mut() else {
            return Ok(());
        };
        let offset = debug.push(t)?;
        self.writer.debug_tensor(
            chain,
            instr,
            &DebugTensor {
                dtype: t.dtype,
                sizes: t.shape.sizes(),
                offset,
            },
            output,
        )
    }

    fn log_values(&mut self, index: u32, values: &InstructionValues<'_, '_, '_>) -> Result<()> {
        let Some(last) = values.len().checked_sub(1) else {
            return Ok(());
        };
        match values.list_len(last)? {
            None => match values.get(last)? {
                Output::Tensor(t) => self.log_tensor(0, index as i32, &t, false),
                _ => Ok(()),
            },
            Some(n) => {
                // Each tensor into the debug buffer first, then one list event
                // (up to 8 tensors: max_pool2d_with_indices has 2).
                let Some(debug) = self.debug.as_mut() else {
                    return Ok(());
                };
                let mut items: [Option<(TensorView<'_>, u64)>; 8] = [None; 8];
                for (j, item) in items.iter_mut().enumerate().take(n) {
                    if let Output::Tensor(t) = values.list_item(last, j)? {
                        *item = Some((t, debug.push(&t)?));
                    }
                }
                let list = items.iter().flatten().map(|(t, offset)| DebugTensor {
                    dtype: t.dtype,
                    sizes: t.shape.sizes(),
                    offset: *offset,
                });
                self.writer.debug_tensor_list(0, index as i32, list)
            }
        }
    }

    /// The first error recorded during a run (buffer too small, ...).
    pub fn error(&self) -> Option<Error> {
        self.error
    }

    /// Bytes of the ETDump buffer in use so far.
    pub fn used(&self) -> usize {
        self.writer.used()
    }

    /// Finishes the ETDump: (the `.etdp` bytes, the debug buffer bytes).
    pub fn finish(self) -> Result<(&'b [u8], &'d [u8])> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let debug = match self.debug {
            Some(d) => d.into_bytes(),
            None => &[],
        };
        Ok((self.writer.finish()?, debug))
    }
}

impl<C: FnMut() -> u64, const OPS: usize> ExecutionObserver for EtDumpObserver<'_, '_, '_, C, OPS> {
    fn before(&mut self, _index: u32, op: Option<u32>) {
        self.op = op;
        self.start = (self.clock)();
    }

    fn after(&mut self, index: u32) {
        let end = (self.clock)();
        if self.error.is_some() {
            return;
        }
        let r = (|| {
            let name = match self.op {
                Some(op) => self.op_name(op)?,
                None => self.delegate_name()?,
            };
            self.writer.profile_event(&ProfileEvent {
                name,
                chain_index: 0,
                instruction_id: index as i32,
                start_time: self.start,
                end_time: end,
            })
        })();
        if let Err(e) = r {
            self.fail(e);
        }
    }

    fn after_values(&mut self, index: u32, values: &InstructionValues<'_, '_, '_>) {
        if self.debug.is_none() || self.error.is_some() || self.op.is_none() {
            return;
        }
        if let Err(e) = self.log_values(index, values) {
            self.fail(e);
        }
    }
}
