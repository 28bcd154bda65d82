//! The root [`Program`], its [`ExecutionPlan`]s and [`ContainerMetadata`].

use super::*;

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
