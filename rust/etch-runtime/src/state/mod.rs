//! The method state: the only RAM `Method::load` takes besides the planned
//! buffers, laid out in the caller's byte buffer.
//!
//! ```text
//! [u16; instructions]      kernel index + 1 per instruction (0: not a kernel call)
//! [(u32, u32); delegates]  per delegate: its handle, and its backend's index
//!                          in `backends` + 1 (0: not initialised)
//! [(u32, u64, u8); overrides]  values written at run time: value index,
//!                          payload (scalar bits, or the source value of a
//!                          tensor alias) and kind (0: as declared, else the
//!                          `ValueKind` tag its writer gave it: ExecuTorch's
//!                          kernels assign whole EValues, so an Int-declared
//!                          value may hold a Double)
//! [u8; dims]               run-time sizes of bounded dynamic tensors
//!                          (`dims`: value index, rank, sizes per tensor)
//! [u8; ceil(inputs / 8)]   which inputs were set (the last byte's bits past
//!                          the inputs start set: all set = every byte 0xFF)
//! [u8; 4 * calls + 3]      the kernel calls decoded at load (`calls`): per
//!                          instruction where its table starts, then each
//!                          call's argument entries, 4-byte aligned inside
//! [u8; scratch + 7]        kernel scratch: the largest `Kernel::scratch` of
//!                          the kernels the method calls, 8-byte aligned inside
//! ```
//! Everything else a method needs (values, tensor metadata, argument lists,
//! constants) is read in place from the program; the call tables hold
//! positions in it and the scalars of the calls' arguments. All fields but
//! the call tables and the scratch are stored little-endian as bytes, so the
//! buffer needs no alignment.

use etch_pte::schema::ExecutionPlan;
use etch_pte::{InstructionArgs, Value};

use crate::registry::{self, Kernel};
use crate::{Error, ErrorCode, Result};

use crate::overrides::{self, sort_slots, Overrides, OverridesMut, OVERRIDE_BYTES, UNSET};

const KERNEL_BYTES: usize = 2;
const DELEGATE_BYTES: usize = 8;
/// No operator, no value.
const NONE: usize = usize::MAX;
/// Past the last instruction.
pub(crate) const END: usize = usize::MAX - 1;

/// How many of each state item a plan needs, and what else the walk that
/// counts them finds.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub(crate) struct Layout {
    pub instructions: usize,
    pub delegates: usize,
    pub overrides: usize,
    /// Bytes of run-time sizes of bounded dynamic tensors (`dims`); only
    /// with the `dynamic` feature (a seventh word made every copy of a
    /// `Layout` a `memcpy` call on Armv6-M).
    #[cfg(feature = "dynamic")]
    pub dims: usize,
    pub inputs: usize,
    /// Bytes of kernel scratch (`MethodMeta::kernel_scratch_bytes`).
    pub scratch: usize,
    /// Words of the decoded call tables (`calls`): one per instruction,
    /// then each kernel call's entries and extra words. Only with
    /// `decoded-calls` (as `dims`: a seventh word made copies of a
    /// `Layout` `memcpy` calls on Armv6-M).
    #[cfg(feature = "decoded-calls")]
    pub calls: usize,
    /// Distinct operators the method calls that the kernels lack.
    pub missing: usize,
}

/// Whether kernel calls to `name` make their output an alias of their input.
pub(crate) fn is_view_op(name: &[u8]) -> bool {
    etch_pte::flatbuffer::same_bytes(name, b"executorch_prim::et_view")
}

/// What one instruction asks of the state.
pub(crate) struct Facts<'a> {
    /// The operator a kernel call calls ([`NONE`] for other instructions;
    /// a real index is below the operator table's length, so never [`NONE`]
    /// or [`END`]).
    pub op: usize,
    /// The index of its kernel in `kernels` ([`NONE`] if missing).
    kernel: usize,
    /// The instruction (a `FreeCall` past the last one).
    pub instr: InstructionArgs<'a>,
    /// The value it writes at run time outside tensors' data: a Move
    /// target, a view's output, a kernel's scalar result ([`NONE`] if none),
    /// and that value's initial payload (the serialized scalar, or `UNSET`
    /// for a tensor alias).
    target: usize,
    payload: u64,
}

/// Where [`facts`] last found an instruction: the chain's index and the
/// number of instructions in the chains before it. A call for an
/// instruction at or after it starts there, so a walk in order reads each
/// chain once: from the first chain every time, a file of many short
/// chains made the walk quadratic in its size.
#[derive(Clone, Copy, Default)]
pub(crate) struct Cursor {
    chain: usize,
    /// Global index of the chain's first instruction.
    pub base: usize,
    /// Its number of instructions.
    pub len: usize,
}

/// The facts of instruction `i` (numbered across chains), its kernel looked
/// up in `kernels`; `op` is [`END`] past the last instruction. The walk at
/// load (`Layout::of`) calls it for every instruction of the plan, in order.
#[inline(always)]
pub(crate) fn facts<'a>(
    plan: &ExecutionPlan<'a>,
    kernels: &[Kernel],
    i: usize,
    at: &mut Cursor,
) -> Result<Facts<'a>> {
    decode(plan, Some(kernels), i, at)
}

/// [`facts`] without the kernel: `op` and the written value, `kernel`
/// [`NONE`] (the look back for duplicates, [`earlier`]).
#[inline(always)]
fn facts_without_kernel<'a>(
    plan: &ExecutionPlan<'a>,
    i: usize,
    at: &mut Cursor,
) -> Result<Facts<'a>> {
    decode(plan, Some(&[]), i, at)
}

/// Only instruction `i` itself (`instr`, and its chain in `at`), for
/// `Method::execute`: no operator, kernel or written value is looked up.
/// Every read it makes, the walk at load made for the same instruction, so
/// for a loaded method it cannot fail.
#[inline(always)]
pub(crate) fn instruction<'a>(
    plan: &ExecutionPlan<'a>,
    i: usize,
    at: &mut Cursor,
) -> Result<Facts<'a>> {
    decode(plan, None, i, at)
}

/// The work of [`facts`] (`Some(kernels)`), [`facts_without_kernel`]
/// (`Some(&[])`) and [`instruction`] (`None`). Out of line: the walk calls
/// it once per instruction and again when looking back for duplicates, and
/// `Method::execute` once per instruction it runs.
#[inline(never)]
fn decode<'a>(
    plan: &ExecutionPlan<'a>,
    kernels: Option<&[Kernel]>,
    i: usize,
    at: &mut Cursor,
) -> Result<Facts<'a>> {
    let mut f = Facts {
        op: END,
        kernel: NONE,
        instr: InstructionArgs::FreeCall { value_index: 0 },
        target: NONE,
        payload: UNSET,
    };
    let chains = plan.chains()?;
    if i < at.base {
        *at = Cursor::default();
    }
    while at.chain < chains.len() {
        let instructions = chains.get(at.chain)?.instructions()?;
        let k = i - at.base;
        if k >= instructions.len() {
            at.base += instructions.len();
            at.chain += 1;
            continue;
        }
        f.op = NONE;
        at.len = instructions.len();
        f.instr = instructions.get(k)?.args()?;
        let Some(kernels) = kernels else {
            break;
        };
        let mut view = true;
        match f.instr {
            InstructionArgs::MoveCall { move_to, .. } => f.target = move_to as usize,
            InstructionArgs::KernelCall { op_index, args } => {
                let op = plan.operators()?.get(op_index as usize)?;
                f.op = op_index as usize;
                let name = op.name_bytes()?;
                let overload = op.overload_bytes()?;
                f.kernel = registry::find_bytes(kernels, name, overload).unwrap_or(NONE);
                view = is_view_op(name);
                if !args.is_empty() {
                    f.target = args.get(args.len() - 1)? as usize;
                }
            }
            _ => {}
        }
        if f.target != NONE {
            // Through `value_of`, the executor's one out-of-line lookup (inlined
            // here, the element read was 52 B more).
            match crate::values::value_of(&plan.values()?, f.target)? {
                Value::Int(i) => f.payload = i as u64,
                Value::Double(d) => f.payload = d.to_bits(),
                Value::Bool(b) => f.payload = b as u64,
                // Not a scalar: written at run time only by a Move or a view.
                _ if !view => f.target = NONE,
                _ => {}
            }
        }
        break;
    }
    Ok(f)
}

/// Words of a kernel call's decoded table: none when its argument count
/// is not its kernel's schema's (load rejects it), else [`crate::calls::encode`]'s
/// count, which depends only on the file.
#[cfg(feature = "decoded-calls")]
fn call_words(
    values: &etch_pte::Vector<'_, etch_pte::schema::EValue<'_>>,
    op_index: i32,
    args: etch_pte::Vector<'_, i32>,
    kernel: &Kernel,
) -> usize {
    if args.len() != kernel.args.len() {
        return 0;
    }
    let Ok(op_index) = u32::try_from(op_index) else {
        return 0;
    };
    crate::calls::encode(values, op_index, args, None, &mut [])
}

/// What [`earlier`] found before an instruction: whether one calls the
/// operator ([`Seen::op`]) and whether one writes the value at run time
/// ([`Seen::target`]). One word, as the walk keeps it in a register.
#[derive(Clone, Copy)]
struct Seen(usize);

impl Seen {
    const NOTHING: Seen = Seen(0);
    const OP: usize = 1;
    const TARGET: usize = 2;

    /// An earlier instruction calls the operator.
    fn op(self) -> bool {
        self.0 & Seen::OP != 0
    }

    /// An earlier instruction writes the value at run time.
    fn target(self) -> bool {
        self.0 & Seen::TARGET != 0
    }
}

/// Whether an instruction before `i` calls operator `op` and whether one
/// writes value `target` at run time; [`END`] for either: not looked for
/// (no instruction has it). One walk for both keys: each look-back reads
/// the instructions before `i` again.
fn earlier(plan: &ExecutionPlan<'_>, i: usize, op: usize, target: usize) -> Result<Seen> {
    let mut at = Cursor::default();
    let mut seen = 0;
    for j in 0..i {
        let f = facts_without_kernel(plan, j, &mut at)?;
        seen |= ((f.op == op) as usize * Seen::OP) | ((f.target == target) as usize * Seen::TARGET);
    }
    Ok(Seen(seen))
}

impl Layout {
    /// One walk over the plan's instructions: the counts, the largest
    /// `Kernel::scratch` (rounded up to 8 bytes) of the kernels called and
    /// how many called operators `kernels` lacks. With `fill` (at load),
    /// the same walk resolves each kernel call (its schema checked) and
    /// fills the run-time value slots: each value once, in order of first
    /// write, with its initial payload (the serialized scalar, or `UNSET`
    /// for tensor aliases).
    #[inline(never)]
    pub(crate) fn of(
        plan: &ExecutionPlan<'_>,
        kernels: &[Kernel],
        mut fill: Option<Fill<'_>>,
    ) -> Result<Layout> {
        // The state stores a kernel index + 1 in 16 bits: with more kernels
        // a call could resolve to the wrong one (index 65,536 stored as 1).
        if kernels.len() > u16::MAX as usize {
            return Err(Error::new(
                ErrorCode::RegistrationExceedingMaxKernels,
                "more kernels than the method state indexes (at = how many)",
                kernels.len() as u32,
            ));
        }
        let values = plan.values()?;
        let mut layout = Layout {
            delegates: plan.delegates()?.len(),
            inputs: plan.inputs()?.len(),
            ..Layout::default()
        };
        let mut at = Cursor::default();
        // A file stores a 4-byte offset per instruction besides its other
        // words, so as many instructions as program words come from chains
        // sharing one instruction vector (`InvalidProgram`, `at` = the
        // number of words, with or without verification; checked before
        // reading the next instruction: 12 B less); the look-backs for
        // duplicates share a budget of one instruction read (or chain
        // passed) per program byte. Both keep the walk linear in the
        // program's size.
        let words = plan.0.buffer().len() / 4;
        let mut budget = plan.0.buffer().len();
        loop {
            let i = layout.instructions;
            if i >= words {
                return Err(Error::new(
                    ErrorCode::InvalidProgram,
                    "as many instructions as program words",
                    i as u32,
                ));
            }
            let f = facts(plan, kernels, i, &mut at)?;
            if f.op == END {
                break;
            }
            layout.instructions += 1;
            let kernel = kernels.get(f.kernel);
            if let Some(kernel) = kernel {
                let bytes = (kernel.scratch as usize).next_multiple_of(8);
                layout.scratch = layout.scratch.max(bytes);
                if let InstructionArgs::KernelCall { op_index, args } = f.instr {
                    if let Some(fill) = fill.as_mut() {
                        crate::signature::check_schema(&values, args, kernel.args, i)?;
                        fill.set_kernel(i, f.kernel as u16);
                    }
                    #[cfg(feature = "decoded-calls")]
                    {
                        let words = call_words(&values, op_index, args, kernel);
                        layout.calls = layout.calls.saturating_add(words);
                    }
                    let _ = op_index;
                }
            }
            // The keys to look back for: a called operator the kernels
            // lack, a value written at run time.
            let op = if kernel.is_none() && f.op != NONE {
                f.op
            } else {
                END
            };
            let target = if f.target != NONE { f.target } else { END };
            // A look-back runs if the budget has the most it can cost left,
            // and spends it: reading `i` instructions and passing the chains
            // before this one (empty ones included). Else nothing seen: the
            // walk counts the value or operator as new (a spare state slot,
            // never read: `slot_of` finds the first; or one missing operator
            // counted twice) rather than take time quadratic in the file. The
            // counting walk and the filling walk spend it the same way, so
            // they agree on every count.
            let seen = if op != END || target != END {
                match budget.checked_sub(i + at.chain) {
                    Some(left) => {
                        budget = left;
                        earlier(plan, i, op, target)?
                    }
                    None => Seen::NOTHING,
                }
            } else {
                Seen::NOTHING
            };
            if op != END && !seen.op() {
                layout.missing += 1;
            }
            if target != END && !seen.target() {
                if let Some(fill) = fill.as_mut() {
                    OverridesMut(fill.overrides).write(
                        layout.overrides * OVERRIDE_BYTES,
                        f.target as u32,
                        overrides::AS_DECLARED,
                        f.payload,
                    );
                }
                layout.overrides += 1;
            }
        }
        // Bounded dynamic tensors: an entry each for their run-time sizes,
        // which start at the serialized ones (the bounds).
        #[cfg(feature = "dynamic")]
        for v in 0..values.len() {
            if let Value::Tensor(t) = crate::values::value_of(&values, v)? {
                let n = crate::dims::entry_bytes(&t, v)?;
                if n > 0 {
                    if let Some(buf) = fill.as_mut().and_then(|f| f.dims.get_mut(layout.dims..)) {
                        crate::dims::write_entry(buf, v, &t)?;
                    }
                    layout.dims = layout.dims.saturating_add(n);
                }
            }
        }
        if let Some(fill) = fill {
            sort_slots(fill.overrides);
        }
        #[cfg(feature = "decoded-calls")]
        if layout.calls > 0 {
            layout.calls = layout.calls.saturating_add(layout.instructions);
        }
        Ok(layout)
    }

    /// Bytes of run-time sizes (0 without the `dynamic` feature).
    pub(crate) fn dims(&self) -> usize {
        #[cfg(feature = "dynamic")]
        return self.dims;
        #[cfg(not(feature = "dynamic"))]
        0
    }

    /// Bytes of the call tables, 4-byte aligned inside (0 without any).
    pub(crate) fn call_bytes(&self) -> usize {
        match self.calls() {
            0 => 0,
            words => words.saturating_mul(4).saturating_add(3),
        }
    }

    /// Words of the call tables (0 without `decoded-calls`).
    pub(crate) fn calls(&self) -> usize {
        #[cfg(feature = "decoded-calls")]
        return self.calls;
        #[cfg(not(feature = "decoded-calls"))]
        0
    }

    /// Exact bytes of state.
    pub(crate) fn bytes(&self) -> usize {
        self.instructions * KERNEL_BYTES
            + self.delegates * DELEGATE_BYTES
            + self.overrides * OVERRIDE_BYTES
            + self.dims()
            + self.inputs.div_ceil(8)
            + self.call_bytes()
            + if self.scratch > 0 {
                self.scratch + 7
            } else {
                0
            }
    }
}

/// What the walk at load writes: the kernel index of each instruction and
/// the run-time value slots. Two slices rather than `&mut State`: a `State`
/// whose address is taken is built on the stack and copied into `Method`
/// with `memcpy`.
pub(crate) struct Fill<'s> {
    kernels: &'s mut [u8],
    overrides: &'s mut [u8],
    #[cfg_attr(not(feature = "dynamic"), allow(dead_code))]
    dims: &'s mut [u8],
}

impl Fill<'_> {
    /// `kernel` is below `u16::MAX` (`Layout::of` rejects longer kernel
    /// slices).
    fn set_kernel(&mut self, instruction: usize, kernel: u16) {
        let b = self.kernels.get_mut(instruction * KERNEL_BYTES..);
        if let Some(b) = b.and_then(|b| b.first_chunk_mut::<KERNEL_BYTES>()) {
            *b = kernel.wrapping_add(1).to_le_bytes();
        }
    }
}

/// The state buffer, split into its parts.
pub(crate) struct State<'m> {
    kernels: &'m mut [u8],
    delegates: &'m mut [u8],
    overrides: &'m mut [u8],
    dims: &'m mut [u8],
    inputs_set: &'m mut [u8],
    /// The decoded call tables ([`Layout::calls`] words).
    #[cfg(feature = "decoded-calls")]
    calls: &'m mut [u32],
    /// [`Layout::scratch`] bytes as 8-byte words.
    scratch: &'m mut [u64],
}

fn split<'m>(buf: &mut &'m mut [u8], n: usize) -> &'m mut [u8] {
    let n = n.min(buf.len());
    let (head, tail) = core::mem::take(buf)
        .split_at_mut_checked(n)
        .unwrap_or((&mut [], &mut []));
    *buf = tail;
    head
}

impl<'m> State<'m> {
    /// Carves the parts out of `buf`; fails with the shortfall when too small.
    pub(crate) fn new(layout: &Layout, buf: &'m mut [u8]) -> Result<Self> {
        let need = layout.bytes();
        if buf.len() < need {
            etch_log!(error, "method state needs {} B, got {} B", need, buf.len());
            return Err(Error::new(
                ErrorCode::MemoryAllocationFailed,
                "method state buffer too small (at = shortfall in bytes)",
                (need - buf.len()) as u32,
            ));
        }
        // Everything before the scratch starts zero, written a byte at a
        // time through `black_box`: LLVM made each plain fill a call to
        // `__aeabi_memclr` (208 B), which nothing else in the core links.
        // A few hundred bytes, once per load.
        let zeroed = layout.instructions * KERNEL_BYTES
            + layout.delegates * DELEGATE_BYTES
            + layout.overrides * OVERRIDE_BYTES
            + layout.dims()
            + layout.inputs.div_ceil(8)
            + layout.call_bytes();
        for b in buf.iter_mut().take(zeroed) {
            *core::hint::black_box(b) = 0;
        }
        let mut rest = buf;
        let kernels = split(&mut rest, layout.instructions * KERNEL_BYTES);
        let delegates = split(&mut rest, layout.delegates * DELEGATE_BYTES);
        let overrides = split(&mut rest, layout.overrides * OVERRIDE_BYTES);
        let dims = split(&mut rest, layout.dims());
        let inputs_set = split(&mut rest, layout.inputs.div_ceil(8));
        #[cfg(feature = "decoded-calls")]
        let calls = {
            let calls = split(&mut rest, layout.call_bytes());
            let (_, calls, _) = bytemuck::pod_align_to_mut::<u8, u32>(calls);
            calls.get_mut(..layout.calls).unwrap_or(&mut [])
        };
        // The bits past the last input count as set, so "every input set"
        // is "every byte 0xFF" (`first_unset_input`): `execute` need not
        // read the number of inputs from the plan.
        if let Some(last) = inputs_set.last_mut() {
            *last = (0xff00u32 >> (layout.inputs.wrapping_neg() % 8)) as u8;
        }
        // The caller's buffer has any alignment: skip to the next word.
        let (_, words, _) = bytemuck::pod_align_to_mut::<u8, u64>(rest);
        let scratch = words.get_mut(..layout.scratch / 8).unwrap_or(&mut []);
        Ok(State {
            kernels,
            delegates,
            overrides,
            dims,
            inputs_set,
            #[cfg(feature = "decoded-calls")]
            calls,
            scratch,
        })
    }

    /// Decodes every kernel call of the plan into its table (`calls`),
    /// after the walk that resolved the kernels and filled the run-time
    /// value slots (values written at run time stay `SLOW`). The tables'
    /// sizes are [`call_words`], as [`Layout::of`] counted them.
    #[cfg(not(feature = "decoded-calls"))]
    pub(crate) fn fill_calls(
        &mut self,
        _plan: &ExecutionPlan<'_>,
        _file: etch_pte::PteFile<'_>,
        _kernels: &[Kernel],
    ) -> Result<()> {
        Ok(())
    }

    /// Decodes every kernel call of the plan into its table (see above).
    #[cfg(feature = "decoded-calls")]
    pub(crate) fn fill_calls(
        &mut self,
        plan: &ExecutionPlan<'_>,
        file: etch_pte::PteFile<'_>,
        kernels: &[Kernel],
    ) -> Result<()> {
        if self.calls.is_empty() {
            return Ok(());
        }
        let values = plan.values()?;
        let n = self.kernels.len() / KERNEL_BYTES;
        let env = crate::calls::Env {
            file,
            overrides: Overrides(self.overrides),
        };
        let mut next = n;
        let mut at = Cursor::default();
        for i in 0..n {
            let f = instruction(plan, i, &mut at)?;
            let InstructionArgs::KernelCall { op_index, args } = f.instr else {
                continue;
            };
            let k = self
                .kernels
                .get(i * KERNEL_BYTES..)
                .and_then(|b| b.first_chunk::<2>());
            let k = k
                .map_or(0, |b| u16::from_le_bytes(*b) as usize)
                .wrapping_sub(1);
            let Some(kernel) = kernels.get(k) else {
                continue;
            };
            if call_words(&values, op_index, args, kernel) == 0 {
                continue;
            }
            let out = self.calls.get_mut(next..).unwrap_or(&mut []);
            let words = crate::calls::encode(&values, op_index as u32, args, Some(&env), out);
            if let Some(start) = self.calls.get_mut(i) {
                *start = next as u32;
            }
            next += words;
        }
        Ok(())
    }

    /// The kernel index of `instruction`, `usize::MAX` (no kernel's) when
    /// none was set (stored as index + 1, so a zeroed state means "no
    /// kernel").
    pub(crate) fn kernel(&self, instruction: usize) -> usize {
        let i = instruction * KERNEL_BYTES;
        self.kernels
            .get(i..i + KERNEL_BYTES)
            .and_then(|b| b.try_into().ok())
            .map_or(0, |b| u16::from_le_bytes(b) as usize)
            .wrapping_sub(1)
    }

    /// The parts the walk at load fills.
    pub(crate) fn fill(&mut self) -> Fill<'_> {
        Fill {
            kernels: self.kernels,
            overrides: self.overrides,
            dims: self.dims,
        }
    }

    /// Delegate `index`'s handle and its backend's index in the load's
    /// `backends` + 1; `(0, 0)` for an index `Method::load` did not
    /// initialise (past the plan's delegates).
    pub(crate) fn delegate(&self, index: usize) -> (u32, u32) {
        // By chunk, not `index * DELEGATE_BYTES`: the index comes from an
        // instruction and may be anything.
        match self.delegates.as_chunks::<DELEGATE_BYTES>().0.get(index) {
            Some(&[a0, a1, a2, a3, b0, b1, b2, b3]) => (
                u32::from_le_bytes([a0, a1, a2, a3]),
                u32::from_le_bytes([b0, b1, b2, b3]),
            ),
            None => (0, 0),
        }
    }

    /// Records delegate `index`'s handle and its backend (index in
    /// `backends`).
    pub(crate) fn set_delegate(&mut self, index: usize, handle: u32, backend: usize) {
        if let Some(b) = self
            .delegates
            .as_chunks_mut::<DELEGATE_BYTES>()
            .0
            .get_mut(index)
        {
            let [a0, a1, a2, a3] = handle.to_le_bytes();
            let [b0, b1, b2, b3] = (backend as u32).wrapping_add(1).to_le_bytes();
            *b = [a0, a1, a2, a3, b0, b1, b2, b3];
        }
    }

    pub(crate) fn overrides(&self) -> Overrides<'_> {
        Overrides(self.overrides)
    }

    pub(crate) fn overrides_mut(&mut self) -> OverridesMut<'_> {
        OverridesMut(self.overrides)
    }

    /// Run-time sizes of bounded dynamic tensors (see `dims`).
    pub(crate) fn dims(&self) -> &[u8] {
        self.dims
    }

    pub(crate) fn dims_mut(&mut self) -> &mut [u8] {
        self.dims
    }

    /// What a kernel call borrows: the run-time values, the run-time
    /// sizes and the scratch.
    /// `start`: [`State::call_start`] of the instruction.
    pub(crate) fn call_parts(
        &mut self,
        start: usize,
    ) -> (
        OverridesMut<'_>,
        &mut [u8],
        &mut [u64],
        crate::calls::Call<'_>,
    ) {
        #[cfg(feature = "decoded-calls")]
        let words: &[u32] = self.calls;
        #[cfg(not(feature = "decoded-calls"))]
        let words: &[u32] = &[];
        let call = call_from(words, start);
        (OverridesMut(self.overrides), self.dims, self.scratch, call)
    }

    /// Where instruction `instruction`'s decoded call table starts in the
    /// tables (0: none, read its arguments from the program): found once
    /// per instruction, for [`State::call_from`] and [`State::call_parts`].
    #[inline]
    pub(crate) fn call_start(&self, instruction: usize) -> usize {
        let n = self.kernels.len() / KERNEL_BYTES;
        if !cfg!(feature = "decoded-calls") || instruction >= n {
            return 0;
        }
        self.call_words()
            .get(instruction)
            .map_or(0, |&s| s as usize)
    }

    /// The decoded call table at `start` ([`State::call_start`];
    /// `Call::NONE` for 0).
    #[inline]
    pub(crate) fn call_from(&self, start: usize) -> crate::calls::Call<'_> {
        call_from(self.call_words(), start)
    }

    /// The call tables (empty without `decoded-calls`).
    #[inline(always)]
    fn call_words(&self) -> &[u32] {
        #[cfg(feature = "decoded-calls")]
        return self.calls;
        #[cfg(not(feature = "decoded-calls"))]
        &[]
    }

    /// Number of instructions of the plan (across chains), as load's walk
    /// counted them: `execute` ends at this index without decoding the
    /// program again.
    #[inline]
    pub(crate) fn instructions(&self) -> usize {
        self.kernels.len() / KERNEL_BYTES
    }

    /// The first input not set yet, if any.
    pub(crate) fn first_unset_input(&self) -> Option<usize> {
        let (k, b) = (self.inputs_set.iter().enumerate()).find(|(_, &b)| b != u8::MAX)?;
        Some(k * 8 + b.trailing_ones() as usize)
    }

    pub(crate) fn set_input_set(&mut self, i: usize) {
        if let Some(b) = self.inputs_set.get_mut(i / 8) {
            *b |= 1 << (i % 8);
        }
    }
}

/// The table starting at word `start` of `calls` (`Call::NONE` for 0: no
/// table).
#[inline]
fn call_from(calls: &[u32], start: usize) -> crate::calls::Call<'_> {
    if !cfg!(feature = "decoded-calls") || start == 0 {
        return crate::calls::Call::NONE;
    }
    crate::calls::Call::at(calls.get(start..).unwrap_or(&[]))
}

#[cfg(test)]
mod tests;
