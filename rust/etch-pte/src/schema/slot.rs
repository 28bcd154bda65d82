//! Field ids of each table (`schema/program.fbs`, declaration order): one
//! module per table; a union takes two ids, its type tag then its value.

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
