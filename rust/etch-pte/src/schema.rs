//! Typed views over the tables of ExecuTorch's `schema/program.fbs`.
//!
//! One view type per table. Field ids ("slots") are listed as named constants in
//! `mod slot`, one module per table, in schema declaration order (a union takes
//! two ids: its type tag, then its value). Accessors are one line each: optional
//! fields return `Option`/schema defaults, required ones return an
//! `InvalidProgram` error naming the field when absent.
//!
//! Every accessor is bounds-checked and returns `Result`, so a file that was not
//! verified (see [`crate::PteFile::new_unchecked`]) can still be read safely;
//! after [`crate::PteFile::new_checked`] none of them fails.

use crate::error::{Error, Result};
use crate::flatbuffer::{key, Follow, Str, Table, Vector};
use crate::types::{
    DataLocation, InstructionKind, ScalarType, ShapeDynamism, TensorDataLocation, ValueKind,
};

/// Field ids of each table (`schema/program.fbs`, declaration order).
pub mod slot {
    pub mod program {
        pub const VERSION: u16 = 0;
        pub const EXECUTION_PLAN: u16 = 1;
        pub const CONSTANT_BUFFER: u16 = 2;
        pub const BACKEND_DELEGATE_DATA: u16 = 3;
        pub const SEGMENTS: u16 = 4;
        pub const CONSTANT_SEGMENT: u16 = 5;
        pub const MUTABLE_DATA_SEGMENTS: u16 = 6;
        pub const NAMED_DATA: u16 = 7;
    }
    pub mod execution_plan {
        pub const NAME: u16 = 0;
        pub const CONTAINER_META_TYPE: u16 = 1;
        pub const VALUES: u16 = 2;
        pub const INPUTS: u16 = 3;
        pub const OUTPUTS: u16 = 4;
        pub const CHAINS: u16 = 5;
        pub const OPERATORS: u16 = 6;
        pub const DELEGATES: u16 = 7;
        pub const NON_CONST_BUFFER_SIZES: u16 = 8;
        pub const NON_CONST_BUFFER_DEVICE: u16 = 9;
    }
    pub mod container_metadata {
        pub const ENCODED_INP_STR: u16 = 0;
        pub const ENCODED_OUT_STR: u16 = 1;
    }
    pub mod evalue {
        pub const VAL_TYPE: u16 = 0;
        pub const VAL: u16 = 1;
    }
    /// `Int`, `Bool`, `Double`, `String` and the list tables all hold one field.
    pub mod single {
        pub const VALUE: u16 = 0;
    }
    pub mod tensor {
        pub const SCALAR_TYPE: u16 = 0;
        pub const STORAGE_OFFSET: u16 = 1;
        pub const SIZES: u16 = 2;
        pub const DIM_ORDER: u16 = 3;
        pub const REQUIRES_GRAD: u16 = 4;
        pub const DATA_BUFFER_IDX: u16 = 5;
        pub const ALLOCATION_INFO: u16 = 6;
        pub const LAYOUT: u16 = 7;
        pub const SHAPE_DYNAMISM: u16 = 8;
        pub const EXTRA_TENSOR_INFO: u16 = 9;
    }
    pub mod allocation_details {
        pub const MEMORY_ID: u16 = 0;
        pub const MEMORY_OFFSET_LOW: u16 = 1;
        pub const MEMORY_OFFSET_HIGH: u16 = 2;
    }
    pub mod extra_tensor_info {
        pub const MUTABLE_DATA_SEGMENTS_IDX: u16 = 0;
        pub const FULLY_QUALIFIED_NAME: u16 = 1;
        pub const LOCATION: u16 = 2;
        pub const DEVICE_TYPE: u16 = 3;
        pub const DEVICE_INDEX: u16 = 4;
    }
    pub mod operator {
        pub const NAME: u16 = 0;
        pub const OVERLOAD: u16 = 1;
    }
    pub mod chain {
        pub const INPUTS: u16 = 0;
        pub const OUTPUTS: u16 = 1;
        pub const INSTRUCTIONS: u16 = 2;
        pub const STACKTRACE: u16 = 3;
    }
    pub mod instruction {
        pub const INSTR_ARGS_TYPE: u16 = 0;
        pub const INSTR_ARGS: u16 = 1;
    }
    pub mod kernel_call {
        pub const OP_INDEX: u16 = 0;
        pub const ARGS: u16 = 1;
    }
    pub mod delegate_call {
        pub const DELEGATE_INDEX: u16 = 0;
        pub const ARGS: u16 = 1;
    }
    pub mod move_call {
        pub const MOVE_FROM: u16 = 0;
        pub const MOVE_TO: u16 = 1;
    }
    pub mod jump_false_call {
        pub const COND_VALUE_INDEX: u16 = 0;
        pub const DESTINATION_INSTRUCTION: u16 = 1;
    }
    pub mod free_call {
        pub const VALUE_INDEX: u16 = 0;
    }
    pub mod frame {
        pub const FILENAME: u16 = 0;
        pub const LINENO: u16 = 1;
        pub const NAME: u16 = 2;
        pub const CONTEXT: u16 = 3;
    }
    pub mod backend_delegate {
        pub const ID: u16 = 0;
        pub const PROCESSED: u16 = 1;
        pub const COMPILE_SPECS: u16 = 2;
    }
    pub mod backend_delegate_data_reference {
        pub const LOCATION: u16 = 0;
        pub const INDEX: u16 = 1;
    }
    pub mod compile_spec {
        pub const KEY: u16 = 0;
        pub const VALUE: u16 = 1;
    }
    pub mod non_const_buffer_device {
        pub const BUFFER_IDX: u16 = 0;
        pub const DEVICE_TYPE: u16 = 1;
        pub const DEVICE_INDEX: u16 = 2;
    }
    pub mod data_segment {
        pub const OFFSET: u16 = 0;
        pub const SIZE: u16 = 1;
    }
    pub mod subsegment_offsets {
        pub const SEGMENT_INDEX: u16 = 0;
        pub const OFFSETS: u16 = 1;
    }
    pub mod named_data {
        pub const KEY: u16 = 0;
        pub const SEGMENT_INDEX: u16 = 1;
    }
}

/// Declares a view type over a table and lets it be a vector element.
macro_rules! table_view {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug)]
        pub struct $name<'a>(pub Table<'a>);

        impl<'a> Follow<'a> for $name<'a> {
            const INLINE_SIZE: usize = 4;
            #[inline]
            fn follow(buf: &'a [u8], pos: usize) -> Result<Self> {
                Table::follow(buf, pos).map($name)
            }
        }

        impl<'a> $name<'a> {
            /// Byte offset of the table in the file.
            pub fn position(&self) -> usize {
                self.0.position()
            }
        }
    };
}

#[inline(never)]
fn utf8<'a>(bytes: &'a [u8], what: &'static str, table: &Table<'_>) -> Result<&'a str> {
    core::str::from_utf8(bytes).map_err(|_| Error::invalid(what, table.position()))
}

/// Whether `bytes` is UTF-8, accepting exactly what `core::str::from_utf8`
/// accepts (shortest forms only, no surrogates, nothing above U+10FFFF).
/// The verifier checks names with this: core's validator is fast but about
/// 370 bytes on Cortex-M, and names are a few bytes long.
#[inline(never)]
pub fn is_utf8(bytes: &[u8]) -> bool {
    let mut rest = bytes;
    while let Some((&lead, tail)) = rest.split_first() {
        let lead = lead as u32;
        // Continuation bytes and the smallest code point of each length.
        let (n, min) = match lead {
            0x00..=0x7f => (0, 0),
            0xc0..=0xdf => (1, 0x80),
            0xe0..=0xef => (2, 0x800),
            0xf0..=0xf7 => (3, 0x1_0000),
            _ => return false,
        };
        let Some((cont, tail)) = tail.split_at_checked(n) else {
            return false;
        };
        let mut cp = lead & (0xff >> (n + 2));
        for &b in cont {
            if b & 0xc0 != 0x80 {
                return false;
            }
            cp = (cp << 6) | (b & 0x3f) as u32;
        }
        if cp < min || cp > 0x10_ffff || (0xd800..=0xdfff).contains(&cp) {
            return false;
        }
        rest = tail;
    }
    true
}

table_view!(
    /// The root table.
    Program
);
impl<'a> Program<'a> {
    #[inline(always)]
    pub fn version(&self) -> Result<u32> {
        self.0.scalar(slot::program::VERSION, 0)
    }
    #[inline(always)]
    pub fn execution_plan(&self) -> Result<Vector<'a, ExecutionPlan<'a>>> {
        self.0.required_vector(
            slot::program::EXECUTION_PLAN,
            "Program.execution_plan missing",
        )
    }
    /// Deprecated inline constants (pre-0.7 files).
    #[inline(always)]
    pub fn constant_buffer(&self) -> Result<Vector<'a, Buffer<'a>>> {
        self.0.vector_or_empty(slot::program::CONSTANT_BUFFER)
    }
    #[inline(always)]
    pub fn backend_delegate_data(&self) -> Result<Vector<'a, BackendDelegateInlineData<'a>>> {
        self.0.vector_or_empty(slot::program::BACKEND_DELEGATE_DATA)
    }
    #[inline(always)]
    pub fn segments(&self) -> Result<Vector<'a, DataSegment<'a>>> {
        self.0.vector_or_empty(slot::program::SEGMENTS)
    }
    #[inline(always)]
    pub fn constant_segment(&self) -> Result<Option<SubsegmentOffsets<'a>>> {
        Ok(self
            .0
            .table(slot::program::CONSTANT_SEGMENT)?
            .map(SubsegmentOffsets))
    }
    #[inline(always)]
    pub fn mutable_data_segments(&self) -> Result<Vector<'a, SubsegmentOffsets<'a>>> {
        self.0.vector_or_empty(slot::program::MUTABLE_DATA_SEGMENTS)
    }
    #[inline(always)]
    pub fn named_data(&self) -> Result<Vector<'a, NamedData<'a>>> {
        self.0.vector_or_empty(slot::program::NAMED_DATA)
    }
}

table_view!(
    /// One method: its values, instructions, operators and memory plan.
    ExecutionPlan
);
impl<'a> ExecutionPlan<'a> {
    pub fn name(&self) -> Result<&'a str> {
        utf8(
            self.name_bytes()?,
            "ExecutionPlan.name is not UTF-8",
            &self.0,
        )
    }
    /// The name's bytes, not checked for UTF-8.
    #[inline(always)]
    pub fn name_bytes(&self) -> Result<&'a [u8]> {
        self.0
            .required_string(slot::execution_plan::NAME, "ExecutionPlan.name missing")
    }
    #[inline(always)]
    pub fn container_meta_type(&self) -> Result<Option<ContainerMetadata<'a>>> {
        Ok(self
            .0
            .table(slot::execution_plan::CONTAINER_META_TYPE)?
            .map(ContainerMetadata))
    }
    #[inline(always)]
    pub fn values(&self) -> Result<Vector<'a, EValue<'a>>> {
        self.0
            .required_vector(slot::execution_plan::VALUES, "ExecutionPlan.values missing")
    }
    #[inline(always)]
    pub fn inputs(&self) -> Result<Vector<'a, i32>> {
        self.0
            .required_vector(slot::execution_plan::INPUTS, "ExecutionPlan.inputs missing")
    }
    #[inline(always)]
    pub fn outputs(&self) -> Result<Vector<'a, i32>> {
        self.0.required_vector(
            slot::execution_plan::OUTPUTS,
            "ExecutionPlan.outputs missing",
        )
    }
    #[inline(always)]
    pub fn chains(&self) -> Result<Vector<'a, Chain<'a>>> {
        self.0
            .required_vector(slot::execution_plan::CHAINS, "ExecutionPlan.chains missing")
    }
    #[inline(always)]
    pub fn operators(&self) -> Result<Vector<'a, Operator<'a>>> {
        self.0.vector_or_empty(slot::execution_plan::OPERATORS)
    }
    #[inline(always)]
    pub fn delegates(&self) -> Result<Vector<'a, BackendDelegate<'a>>> {
        self.0.vector_or_empty(slot::execution_plan::DELEGATES)
    }
    /// Planned buffer sizes per memory id; entry 0 is reserved.
    #[inline(always)]
    pub fn non_const_buffer_sizes(&self) -> Result<Vector<'a, i64>> {
        self.0.required_vector(
            slot::execution_plan::NON_CONST_BUFFER_SIZES,
            "ExecutionPlan.non_const_buffer_sizes missing",
        )
    }
    #[inline(always)]
    pub fn non_const_buffer_device(&self) -> Result<Vector<'a, NonConstBufferDevice<'a>>> {
        self.0
            .vector_or_empty(slot::execution_plan::NON_CONST_BUFFER_DEVICE)
    }
}

table_view!(
    /// Pytree specs of the method's inputs and outputs (JSON text).
    ContainerMetadata
);
impl<'a> ContainerMetadata<'a> {
    #[inline(always)]
    pub fn encoded_inp_str(&self) -> Result<Option<&'a [u8]>> {
        self.0.string(slot::container_metadata::ENCODED_INP_STR)
    }
    #[inline(always)]
    pub fn encoded_out_str(&self) -> Result<Option<&'a [u8]>> {
        self.0.string(slot::container_metadata::ENCODED_OUT_STR)
    }
}

table_view!(
    /// A tagged value (`KernelTypes` union).
    EValue
);

/// The payload of an [`EValue`], decoded by its union tag.
// Discriminants are the union tags (`ValueKind`): `EValue::value` stores
// the tag it read rather than one constant per kind.
#[derive(Clone, Copy, Debug)]
#[repr(u8)]
pub enum Value<'a> {
    Null = 1,
    Int(i64) = 2,
    Bool(bool) = 3,
    Double(f64) = 4,
    Tensor(Tensor<'a>) = 5,
    String(&'a [u8]) = 6,
    /// Items are indices into the method's value table (each an `Int`).
    IntList(Vector<'a, i64>) = 7,
    DoubleList(Vector<'a, f64>) = 8,
    BoolList(Vector<'a, bool>) = 9,
    /// Items are value indices of tensors.
    TensorList(Vector<'a, i32>) = 10,
    /// Items are value indices of tensors, `-1` for None.
    OptionalTensorList(Vector<'a, i32>) = 11,
}

impl<'a> EValue<'a> {
    /// The union tag, checked.
    // Inlined: out of line, its `Result<ValueKind>` came back
    // through memory; inlined into `value` and the runtime's argument
    // check: -52 B of the core without verification.
    #[inline(always)]
    pub fn kind(&self) -> Result<ValueKind> {
        let tag: u8 = self.0.scalar(slot::evalue::VAL_TYPE, 0)?;
        ValueKind::from_tag(tag).ok_or(Error::invalid(
            "EValue has an unknown type tag",
            self.position(),
        ))
    }

    /// The decoded payload.
    pub fn value(&self) -> Result<Value<'a>> {
        let kind = self.kind()?;
        if kind == ValueKind::Null {
            return Ok(Value::Null);
        }
        let t = self
            .0
            .required_table(slot::evalue::VAL, "EValue.val missing")?;
        let single = slot::single::VALUE;
        // One read per shape of payload (scalar, list), not one inlined
        // generic read per kind.
        Ok(match kind {
            ValueKind::Tensor => Value::Tensor(Tensor(t)),
            ValueKind::String => Value::String(t.string_or_empty(single)?),
            ValueKind::Null | ValueKind::Int | ValueKind::Bool | ValueKind::Double => {
                let size = if kind == ValueKind::Bool { 1 } else { 8 };
                let bits = t.scalar_bits(single, size, 0)?;
                match kind {
                    ValueKind::Int => Value::Int(bits as i64),
                    ValueKind::Bool => Value::Bool(bits != 0),
                    ValueKind::Double => Value::Double(f64::from_bits(bits)),
                    _ => Value::Null,
                }
            }
            _ => {
                let elem = match kind {
                    ValueKind::BoolList => 1,
                    ValueKind::TensorList | ValueKind::OptionalTensorList => 4,
                    _ => 8,
                };
                let raw = t.raw_vector_or_empty(single, elem)?;
                match kind {
                    ValueKind::IntList => Value::IntList(Vector::from_raw(raw)),
                    ValueKind::DoubleList => Value::DoubleList(Vector::from_raw(raw)),
                    ValueKind::BoolList => Value::BoolList(Vector::from_raw(raw)),
                    ValueKind::TensorList => Value::TensorList(Vector::from_raw(raw)),
                    _ => Value::OptionalTensorList(Vector::from_raw(raw)),
                }
            }
        })
    }
}

table_view!(
    /// Tensor metadata: dtype, shape, dim order and where the data is.
    Tensor
);
impl<'a> Tensor<'a> {
    #[inline(always)]
    pub fn scalar_type(&self) -> Result<ScalarType> {
        self.0
            .scalar(slot::tensor::SCALAR_TYPE, 0i8)
            .map(ScalarType)
    }
    #[inline(always)]
    pub fn storage_offset(&self) -> Result<i32> {
        self.0.scalar(slot::tensor::STORAGE_OFFSET, 0)
    }
    #[inline(always)]
    pub fn sizes(&self) -> Result<Vector<'a, i32>> {
        self.0
            .required_vector(slot::tensor::SIZES, "Tensor.sizes missing")
    }
    /// The sizes' bytes (`4 * rank`, little-endian `i32`s), read in place:
    /// `sizes()?.bytes()` as one slice.
    #[inline(always)]
    pub fn sizes_bytes(&self) -> Result<&'a [u8]> {
        self.0
            .required_bytes(slot::tensor::SIZES, 4, "Tensor.sizes missing")
    }
    /// The dim order's bytes: `dim_order()?.bytes()` as one slice.
    #[inline(always)]
    pub fn dim_order_bytes(&self) -> Result<&'a [u8]> {
        self.0
            .required_bytes(slot::tensor::DIM_ORDER, 1, "Tensor.dim_order missing")
    }
    #[inline(always)]
    pub fn dim_order(&self) -> Result<Vector<'a, u8>> {
        self.0
            .required_vector(slot::tensor::DIM_ORDER, "Tensor.dim_order missing")
    }
    #[inline(always)]
    pub fn requires_grad(&self) -> Result<bool> {
        self.0.scalar(slot::tensor::REQUIRES_GRAD, false)
    }
    /// Index into the constant segment's offsets (0 = not a constant).
    #[inline(always)]
    pub fn data_buffer_idx(&self) -> Result<u32> {
        self.0.scalar(slot::tensor::DATA_BUFFER_IDX, 0)
    }
    #[inline(always)]
    pub fn allocation_info(&self) -> Result<Option<AllocationDetails<'a>>> {
        Ok(self
            .0
            .table(slot::tensor::ALLOCATION_INFO)?
            .map(AllocationDetails))
    }
    #[inline(always)]
    pub fn layout(&self) -> Result<i8> {
        self.0.scalar(slot::tensor::LAYOUT, 0)
    }
    // Inlined into the loader's tensor check (-8 B of the core).
    #[inline(always)]
    pub fn shape_dynamism(&self) -> Result<ShapeDynamism> {
        let raw: i8 = self.0.scalar(slot::tensor::SHAPE_DYNAMISM, 0)?;
        ShapeDynamism::from_raw(raw).ok_or(Error::invalid(
            "Tensor.shape_dynamism out of range",
            self.position(),
        ))
    }
    #[inline(always)]
    pub fn extra_tensor_info(&self) -> Result<Option<ExtraTensorInfo<'a>>> {
        Ok(self
            .0
            .table(slot::tensor::EXTRA_TENSOR_INFO)?
            .map(ExtraTensorInfo))
    }
}

table_view!(
    /// Placement of a memory-planned tensor.
    AllocationDetails
);
impl<'a> AllocationDetails<'a> {
    /// 1-based memory id (buffer index = id - 1).
    #[inline(always)]
    pub fn memory_id(&self) -> Result<u32> {
        self.0.scalar(slot::allocation_details::MEMORY_ID, 0)
    }
    /// [`AllocationDetails::memory_offset`] as a `usize`, `usize::MAX` when
    /// it does not fit: no buffer reaches that far, so every range check
    /// made with it fails as an offset past the buffer's end would. A word
    /// `Result`, in registers on Cortex-M (a `Result<u64>` is not).
    #[inline(never)]
    pub fn memory_offset_usize(&self) -> Result<usize> {
        let low = self.0.scalar_word(
            key(slot::allocation_details::MEMORY_OFFSET_LOW, 4, false),
            0,
        )?;
        let high = self.0.scalar_word(
            key(slot::allocation_details::MEMORY_OFFSET_HIGH, 4, false),
            0,
        )?;
        Ok(usize::try_from((high as u64) << 32 | low as u64).unwrap_or(usize::MAX))
    }
    /// The 64-bit offset recombined from its low and high halves.
    pub fn memory_offset(&self) -> Result<u64> {
        let low: u32 = self
            .0
            .scalar(slot::allocation_details::MEMORY_OFFSET_LOW, 0)?;
        let high: u32 = self
            .0
            .scalar(slot::allocation_details::MEMORY_OFFSET_HIGH, 0)?;
        Ok(((high as u64) << 32) | low as u64)
    }
}

table_view!(
    /// Extra tensor facts: external data, mutable segments.
    ExtraTensorInfo
);
impl<'a> ExtraTensorInfo<'a> {
    #[inline(always)]
    pub fn mutable_data_segments_idx(&self) -> Result<u64> {
        self.0
            .scalar(slot::extra_tensor_info::MUTABLE_DATA_SEGMENTS_IDX, 0)
    }
    #[inline(always)]
    pub fn fully_qualified_name(&self) -> Result<Option<&'a [u8]>> {
        self.0.string(slot::extra_tensor_info::FULLY_QUALIFIED_NAME)
    }
    // Inlined into the loader's tensor check, its one caller in the core
    // (-52 B of the core).
    #[inline(always)]
    pub fn location(&self) -> Result<TensorDataLocation> {
        let raw: i8 = self.0.scalar(slot::extra_tensor_info::LOCATION, 0)?;
        match raw {
            0 => Ok(TensorDataLocation::Segment),
            1 => Ok(TensorDataLocation::External),
            _ => Err(Error::invalid(
                "ExtraTensorInfo.location out of range",
                self.position(),
            )),
        }
    }
    #[inline(always)]
    pub fn device_type(&self) -> Result<i8> {
        self.0.scalar(slot::extra_tensor_info::DEVICE_TYPE, 0)
    }
    #[inline(always)]
    pub fn device_index(&self) -> Result<i8> {
        self.0.scalar(slot::extra_tensor_info::DEVICE_INDEX, 0)
    }
}

table_view!(
    /// An operator name (`aten::add`) and overload (`out`, may be empty).
    Operator
);
impl<'a> Operator<'a> {
    pub fn name(&self) -> Result<&'a str> {
        utf8(self.name_bytes()?, "Operator.name is not UTF-8", &self.0)
    }
    pub fn overload(&self) -> Result<&'a str> {
        utf8(
            self.overload_bytes()?,
            "Operator.overload is not UTF-8",
            &self.0,
        )
    }
    /// The name's bytes, not checked for UTF-8: what the runtime compares
    /// with kernel names (no UTF-8 validator in firmware).
    #[inline(always)]
    pub fn name_bytes(&self) -> Result<&'a [u8]> {
        self.0
            .required_string(slot::operator::NAME, "Operator.name missing")
    }
    /// The overload's bytes (empty when absent), not checked for UTF-8.
    #[inline(always)]
    pub fn overload_bytes(&self) -> Result<&'a [u8]> {
        self.0.string_or_empty(slot::operator::OVERLOAD)
    }
}

table_view!(
    /// A list of instructions run in order.
    Chain
);
impl<'a> Chain<'a> {
    #[inline(always)]
    pub fn inputs(&self) -> Result<Vector<'a, i32>> {
        self.0.vector_or_empty(slot::chain::INPUTS)
    }
    #[inline(always)]
    pub fn outputs(&self) -> Result<Vector<'a, i32>> {
        self.0.vector_or_empty(slot::chain::OUTPUTS)
    }
    #[inline(always)]
    pub fn instructions(&self) -> Result<Vector<'a, Instruction<'a>>> {
        self.0
            .required_vector(slot::chain::INSTRUCTIONS, "Chain.instructions missing")
    }
    #[inline(always)]
    pub fn stacktrace(&self) -> Result<Vector<'a, FrameList<'a>>> {
        self.0.vector_or_empty(slot::chain::STACKTRACE)
    }
}

table_view!(
    /// One instruction (`InstructionArguments` union).
    Instruction
);

/// The decoded arguments of an [`Instruction`].
// Discriminants are the union tags (`InstructionKind`), as for `Value`.
// A word-wide tag: with `repr(u8)` a copy of the enum moved its three
// padding bytes too, which LLVM did with an unaligned `ldrh` (a UsageFault
// under CCR.UNALIGN_TRP, tools/ci/unaligned-trap.sh).
#[derive(Clone, Copy, Debug)]
#[repr(u32)]
pub enum InstructionArgs<'a> {
    KernelCall {
        op_index: i32,
        args: Vector<'a, i32>,
    } = 1,
    DelegateCall {
        delegate_index: i32,
        args: Vector<'a, i32>,
    } = 2,
    MoveCall {
        move_from: i32,
        move_to: i32,
    } = 3,
    JumpFalseCall {
        cond_value_index: i32,
        destination_instruction: i32,
    } = 4,
    FreeCall {
        value_index: i32,
    } = 5,
}

impl<'a> Instruction<'a> {
    pub fn kind(&self) -> Result<InstructionKind> {
        let tag: u8 = self.0.scalar(slot::instruction::INSTR_ARGS_TYPE, 0)?;
        InstructionKind::from_tag(tag).ok_or(Error::invalid(
            "Instruction has an unknown argument type",
            self.position(),
        ))
    }

    pub fn args(&self) -> Result<InstructionArgs<'a>> {
        let kind = self.kind()?;
        let t = self.0.required_table(
            slot::instruction::INSTR_ARGS,
            "Instruction.instr_args missing",
        )?;
        // Every argument table has an i32 in slot 0; read it once, in the
        // same order as field by field (the slot constants below say so).
        const _: () = assert!(
            slot::kernel_call::OP_INDEX == 0
                && slot::delegate_call::DELEGATE_INDEX == 0
                && slot::move_call::MOVE_FROM == 0
                && slot::jump_false_call::COND_VALUE_INDEX == 0
                && slot::free_call::VALUE_INDEX == 0
        );
        let first: i32 = t.scalar(0, 0)?;
        Ok(match kind {
            InstructionKind::KernelCall => InstructionArgs::KernelCall {
                op_index: first,
                args: t.required_vector(slot::kernel_call::ARGS, "KernelCall.args missing")?,
            },
            InstructionKind::DelegateCall => InstructionArgs::DelegateCall {
                delegate_index: first,
                args: t.required_vector(slot::delegate_call::ARGS, "DelegateCall.args missing")?,
            },
            InstructionKind::MoveCall => InstructionArgs::MoveCall {
                move_from: first,
                move_to: t.scalar(slot::move_call::MOVE_TO, 0)?,
            },
            InstructionKind::JumpFalseCall => InstructionArgs::JumpFalseCall {
                cond_value_index: first,
                destination_instruction: t
                    .scalar(slot::jump_false_call::DESTINATION_INSTRUCTION, 0)?,
            },
            InstructionKind::FreeCall => InstructionArgs::FreeCall { value_index: first },
        })
    }
}

table_view!(
    /// A stack frame of the debug stacktrace.
    Frame
);
impl<'a> Frame<'a> {
    #[inline(always)]
    pub fn filename(&self) -> Result<Option<&'a [u8]>> {
        self.0.string(slot::frame::FILENAME)
    }
    #[inline(always)]
    pub fn lineno(&self) -> Result<i32> {
        self.0.scalar(slot::frame::LINENO, 0)
    }
    #[inline(always)]
    pub fn name(&self) -> Result<Option<&'a [u8]>> {
        self.0.string(slot::frame::NAME)
    }
    #[inline(always)]
    pub fn context(&self) -> Result<Option<&'a [u8]>> {
        self.0.string(slot::frame::CONTEXT)
    }
}

table_view!(
    /// The frames of one instruction.
    FrameList
);
impl<'a> FrameList<'a> {
    #[inline(always)]
    pub fn items(&self) -> Result<Vector<'a, Frame<'a>>> {
        self.0.vector_or_empty(slot::single::VALUE)
    }
}

table_view!(
    /// A delegate: backend id, processed blob reference, compile specs.
    BackendDelegate
);
impl<'a> BackendDelegate<'a> {
    pub fn id(&self) -> Result<&'a str> {
        utf8(self.id_bytes()?, "BackendDelegate.id is not UTF-8", &self.0)
    }
    /// The id's bytes, not checked for UTF-8.
    #[inline(always)]
    pub fn id_bytes(&self) -> Result<&'a [u8]> {
        self.0
            .required_string(slot::backend_delegate::ID, "BackendDelegate.id missing")
    }
    #[inline(always)]
    pub fn processed(&self) -> Result<BackendDelegateDataReference<'a>> {
        self.0
            .required_table(
                slot::backend_delegate::PROCESSED,
                "BackendDelegate.processed missing",
            )
            .map(BackendDelegateDataReference)
    }
    #[inline(always)]
    pub fn compile_specs(&self) -> Result<Vector<'a, CompileSpec<'a>>> {
        self.0
            .vector_or_empty(slot::backend_delegate::COMPILE_SPECS)
    }
}

table_view!(
    /// Where a delegate's processed blob is.
    BackendDelegateDataReference
);
impl<'a> BackendDelegateDataReference<'a> {
    pub fn location(&self) -> Result<DataLocation> {
        let raw: i8 = self
            .0
            .scalar(slot::backend_delegate_data_reference::LOCATION, 0)?;
        match raw {
            0 => Ok(DataLocation::Inline),
            1 => Ok(DataLocation::Segment),
            _ => Err(Error::invalid(
                "BackendDelegateDataReference.location out of range",
                self.position(),
            )),
        }
    }
    #[inline(always)]
    pub fn index(&self) -> Result<u32> {
        self.0
            .scalar(slot::backend_delegate_data_reference::INDEX, 0)
    }
}

table_view!(
    /// A backend compile option: key and opaque bytes.
    CompileSpec
);
impl<'a> CompileSpec<'a> {
    #[inline(always)]
    pub fn key(&self) -> Result<&'a [u8]> {
        self.0.string_or_empty(slot::compile_spec::KEY)
    }
    #[inline(always)]
    pub fn value(&self) -> Result<&'a [u8]> {
        // A `[ubyte]` vector has a string's layout (u32 length, bytes):
        // the string reader returns its bytes as one view (no separate byte-vector reader).
        self.0.string_or_empty(slot::compile_spec::VALUE)
    }
}

table_view!(
    /// The device of a planned buffer.
    NonConstBufferDevice
);
impl<'a> NonConstBufferDevice<'a> {
    #[inline(always)]
    pub fn buffer_idx(&self) -> Result<i32> {
        self.0.scalar(slot::non_const_buffer_device::BUFFER_IDX, 0)
    }
    #[inline(always)]
    pub fn device_type(&self) -> Result<i8> {
        self.0.scalar(slot::non_const_buffer_device::DEVICE_TYPE, 0)
    }
    #[inline(always)]
    pub fn device_index(&self) -> Result<i8> {
        self.0
            .scalar(slot::non_const_buffer_device::DEVICE_INDEX, 0)
    }
}

table_view!(
    /// A deprecated inline constant buffer.
    Buffer
);
impl<'a> Buffer<'a> {
    #[inline(always)]
    pub fn storage(&self) -> Result<&'a [u8]> {
        // A `[ubyte]` vector has a string's layout (u32 length, bytes):
        // the string reader returns its bytes as one view (no separate byte-vector reader).
        self.0.string_or_empty(slot::single::VALUE)
    }
}

table_view!(
    /// An inline delegate blob.
    BackendDelegateInlineData
);
impl<'a> BackendDelegateInlineData<'a> {
    #[inline(always)]
    pub fn data(&self) -> Result<&'a [u8]> {
        // A `[ubyte]` vector has a string's layout (u32 length, bytes):
        // the string reader returns its bytes as one view (no separate byte-vector reader).
        self.0.string_or_empty(slot::single::VALUE)
    }
}

table_view!(
    /// A segment: offset relative to `segment_base_offset`, and size.
    DataSegment
);
impl<'a> DataSegment<'a> {
    #[inline(always)]
    pub fn offset(&self) -> Result<u64> {
        self.0.scalar(slot::data_segment::OFFSET, 0)
    }
    #[inline(always)]
    pub fn size(&self) -> Result<u64> {
        self.0.scalar(slot::data_segment::SIZE, 0)
    }
}

table_view!(
    /// Offsets of sub-buffers inside one segment (entry 0 is a placeholder).
    SubsegmentOffsets
);
impl<'a> SubsegmentOffsets<'a> {
    #[inline(always)]
    pub fn segment_index(&self) -> Result<u32> {
        self.0.scalar(slot::subsegment_offsets::SEGMENT_INDEX, 0)
    }
    #[inline(always)]
    pub fn offsets(&self) -> Result<Vector<'a, u64>> {
        self.0.vector_or_empty(slot::subsegment_offsets::OFFSETS)
    }
}

table_view!(
    /// A named blob in a segment (for backends and external data).
    NamedData
);
impl<'a> NamedData<'a> {
    #[inline(always)]
    pub fn key(&self) -> Result<&'a [u8]> {
        self.0
            .required_string(slot::named_data::KEY, "NamedData.key missing")
    }
    #[inline(always)]
    pub fn segment_index(&self) -> Result<u32> {
        self.0.scalar(slot::named_data::SEGMENT_INDEX, 0)
    }
}

/// Strings in vectors (not used by program.fbs today, kept for completeness).
pub type StrVector<'a> = Vector<'a, Str<'a>>;

#[cfg(test)]
mod allocation_tests {
    use super::*;

    /// `memory_offset_usize` is `memory_offset` as a `usize`, or
    /// `usize::MAX` when it does not fit, for offsets around the 32-bit
    /// edge (an absent half reads as 0).
    #[test]
    fn memory_offset_usize_is_memory_offset_or_max() {
        for (low, high) in [(0u32, 0u32), (5, 0), (u32::MAX, 0), (0, 1), (7, u32::MAX)] {
            // vtable at 0: three slots (memory id, low, high); table at 12.
            let mut buf = [0u8; 28];
            for (pos, v) in [(0, 10u16), (2, 16), (4, 4), (6, 8), (8, 12)] {
                buf[pos..pos + 2].copy_from_slice(&v.to_le_bytes());
            }
            for (pos, v) in [(12, 12u32), (16, 1), (20, low), (24, high)] {
                buf[pos..pos + 4].copy_from_slice(&v.to_le_bytes());
            }
            let a = AllocationDetails(Table::at(&buf, 12).unwrap());
            let wide = a.memory_offset().unwrap();
            assert_eq!(wide, (high as u64) << 32 | low as u64);
            let expected = usize::try_from(wide).unwrap_or(usize::MAX);
            assert_eq!(a.memory_offset_usize().unwrap(), expected);
        }
    }
}

#[cfg(test)]
mod utf8_tests {
    use super::is_utf8;

    fn agrees(b: &[u8]) {
        assert_eq!(is_utf8(b), core::str::from_utf8(b).is_ok(), "{b:02x?}");
    }

    #[test]
    fn is_utf8_agrees_with_core_on_every_short_sequence() {
        for a in 0..=255u8 {
            agrees(&[a]);
            for b in 0..=255u8 {
                agrees(&[a, b]);
                for c in 0..=255u8 {
                    agrees(&[a, b, c]);
                }
            }
        }
        // Four-byte sequences: every lead and second byte with the others
        // at and around each boundary of the continuation ranges.
        let edges = [0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xff];
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                for &c in &edges {
                    for &d in &edges {
                        agrees(&[a, b, c, d]);
                        agrees(&[b'x', a, b, c, d, b'y']);
                    }
                }
            }
        }
        for s in ["", "forward", "aten::add", "é", "€", "𝄞", "\u{10ffff}"] {
            agrees(s.as_bytes());
        }
    }
}
