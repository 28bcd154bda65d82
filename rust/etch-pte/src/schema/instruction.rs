//! What a plan runs: [`Operator`]s, [`Chain`]s of [`Instruction`]s (their
//! [`InstructionArgs`]) and [`FrameList`]s of stack [`Frame`]s.

use super::*;

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
