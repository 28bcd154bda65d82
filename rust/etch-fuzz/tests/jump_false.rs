//! JumpFalse conditions (ff88df3): a condition is read as an
//! output is, so a constant bool tensor is accepted and every one of its
//! bytes decides. The fixtures have no control flow, so the kernel call before
//! the final dequantize (a `quantized_linear`, which takes a constant int8
//! weight) is rewritten in place into a `JumpFalseCall` whose destination is
//! itself: a true condition falls through (the dequantize runs, the run ends
//! `Ok`), a false one jumps back until the instruction limit stops it.

use std::path::Path;

use etch_fuzz::{load_execute, Outcome, Stage};
use etch_pte::schema::slot;
use etch_pte::{InstructionArgs, PteFile, ScalarType, Value};
use etch_runtime::{ErrorCode, Verification};

fn fixture(name: &str) -> Vec<u8> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    std::fs::read(dir.join(format!("{name}.pte"))).unwrap()
}

fn both(bytes: &[u8]) -> [Outcome; 2] {
    [Verification::Minimal, Verification::InternalConsistency].map(|v| load_execute(bytes, v))
}

/// Byte positions in the file for the rewrite.
struct Site {
    /// The instruction before: its union type byte and its KernelCall's
    /// two fields (they become a MoveCall's `move_from` and `move_to`), and
    /// its last argument (the value it wrote, a planned tensor) with that
    /// tensor's `scalar_type` byte and byte count.
    prev_kind: usize,
    prev_fields: [usize; 2],
    prev_out: usize,
    prev_out_type: usize,
    prev_out_nbytes: usize,
    /// The rewritten instruction's union type byte, and its index in the
    /// chain (the one before the last).
    kind: usize,
    index: usize,
    /// The KernelCall's `op_index` and `args` fields (4 bytes each), which
    /// become the JumpFalseCall's `cond_value_index` and
    /// `destination_instruction`.
    op_index: usize,
    args: usize,
    /// A constant one-byte tensor the call took: its value index, its
    /// `scalar_type` byte and its data.
    value: usize,
    scalar_type: usize,
    data: std::ops::Range<usize>,
}

fn site(bytes: &[u8]) -> Site {
    let file = PteFile::new_checked(bytes).unwrap();
    let plan = file.plan("forward").unwrap();
    let chains = plan.chains().unwrap();
    assert_eq!(chains.len(), 1);
    let instructions = chains.get(0).unwrap().instructions().unwrap();
    let index = instructions.len() - 2;
    let instr = instructions.get(index).unwrap();
    let InstructionArgs::KernelCall { args, .. } = instr.args().unwrap() else {
        panic!("the instruction before the last is not a kernel call");
    };
    let call = instr
        .0
        .table(slot::instruction::INSTR_ARGS)
        .unwrap()
        .unwrap();
    let values = plan.values().unwrap();
    let prev = instructions.get(index - 1).unwrap();
    let InstructionArgs::KernelCall {
        args: prev_args, ..
    } = prev.args().unwrap()
    else {
        panic!("the instruction before that is not a kernel call");
    };
    let prev_call = prev
        .0
        .table(slot::instruction::INSTR_ARGS)
        .unwrap()
        .unwrap();
    let prev_out = prev_args.get(prev_args.len() - 1).unwrap() as usize;
    let Value::Tensor(out) = values.get(prev_out).unwrap().value().unwrap() else {
        panic!("the instruction before returns no tensor");
    };
    assert!(out.allocation_info().unwrap().is_some());
    assert_eq!(out.scalar_type().unwrap().element_size(), Some(1));
    let (value, t) = args
        .iter()
        .map(|a| a.unwrap() as usize)
        .find_map(|v| match values.get(v).unwrap().value().unwrap() {
            Value::Tensor(t)
                if t.allocation_info().unwrap().is_none()
                    && t.data_buffer_idx().unwrap() != 0
                    && t.scalar_type().unwrap().element_size() == Some(1)
                    && t.0.field(slot::tensor::SCALAR_TYPE, 1).unwrap().is_some() =>
            {
                Some((v, t))
            }
            _ => None,
        })
        .expect("the call takes a constant one-byte tensor");
    let nbytes = etch_pte::tensor::nbytes(&t).unwrap();
    let data = file
        .constant_data(t.data_buffer_idx().unwrap(), nbytes)
        .unwrap();
    let start = data.as_ptr() as usize - bytes.as_ptr() as usize;
    Site {
        prev_kind: prev
            .0
            .field(slot::instruction::INSTR_ARGS_TYPE, 1)
            .unwrap()
            .unwrap(),
        prev_fields: [slot::kernel_call::OP_INDEX, slot::kernel_call::ARGS]
            .map(|f| prev_call.field(f, 4).unwrap().unwrap()),
        prev_out,
        prev_out_type: out.0.field(slot::tensor::SCALAR_TYPE, 1).unwrap().unwrap(),
        prev_out_nbytes: etch_pte::tensor::nbytes(&out).unwrap(),
        kind: instr
            .0
            .field(slot::instruction::INSTR_ARGS_TYPE, 1)
            .unwrap()
            .unwrap(),
        index,
        op_index: call.field(slot::kernel_call::OP_INDEX, 4).unwrap().unwrap(),
        args: call.field(slot::kernel_call::ARGS, 4).unwrap().unwrap(),
        value,
        scalar_type: t.0.field(slot::tensor::SCALAR_TYPE, 1).unwrap().unwrap(),
        data: start..start + nbytes,
    }
}

/// The program with its kernel call before the last replaced by `JumpFalse(constant,
/// itself)`, the constant retyped `bool` and its bytes set to `byte`, with
/// byte `zero` (if any) set to 0.
fn jump_on_constant(base: &[u8], s: &Site, byte: u8, zero: Option<usize>) -> Vec<u8> {
    let mut bytes = base.to_vec();
    bytes[s.kind] = 4; // InstructionArguments::JumpFalseCall
    bytes[s.op_index..s.op_index + 4].copy_from_slice(&(s.value as i32).to_le_bytes());
    bytes[s.args..s.args + 4].copy_from_slice(&(s.index as i32).to_le_bytes());
    bytes[s.scalar_type] = ScalarType::BOOL.0 as u8;
    bytes[s.data.clone()].fill(byte);
    if let Some(z) = zero {
        bytes[s.data.start + z] = 0;
    }
    bytes
}

#[test]
fn a_constant_bool_tensor_is_a_condition_of_all_its_bytes() {
    for name in ["tiny_cm_m33", "dscnn_cm_m33"] {
        let base = fixture(name);
        assert_eq!(both(&base), [Ok(()), Ok(())], "{name} runs unmodified");
        let s = site(&base);
        assert!(s.data.len() > 1, "{name}: {} bytes", s.data.len());
        // Every byte true: no jump, the run ends after the condition.
        let all_true = jump_on_constant(&base, &s, 0x01, None);
        assert_eq!(both(&all_true), [Ok(()), Ok(())], "{name} all true");
        // Any non-zero byte is true.
        let other_true = jump_on_constant(&base, &s, 0xa5, None);
        assert_eq!(both(&other_true), [Ok(()), Ok(())], "{name} 0xa5");
        // One zero byte (first or last) makes it false: the jump to itself
        // repeats until the instruction limit.
        let limit = Err((Stage::Execute, ErrorCode::InvalidState));
        for z in [0, s.data.len() - 1] {
            let one_false = jump_on_constant(&base, &s, 0x01, Some(z));
            assert_eq!(both(&one_false), [limit, limit], "{name} zero at {z}");
        }
    }
}

/// [`jump_on_constant`], the condition read through an alias: the
/// instruction before becomes `MoveCall(constant -> its output)`, the output
/// retyped `bool`, and the JumpFalse reads that output: the constant's bytes
/// decide, whatever the output's own planned bytes hold.
fn jump_on_alias(base: &[u8], s: &Site, byte: u8, zero: Option<usize>) -> Vec<u8> {
    let mut bytes = jump_on_constant(base, s, byte, zero);
    bytes[s.prev_kind] = 3; // InstructionArguments::MoveCall
    let [from, to] = s.prev_fields;
    bytes[from..from + 4].copy_from_slice(&(s.value as i32).to_le_bytes());
    bytes[to..to + 4].copy_from_slice(&(s.prev_out as i32).to_le_bytes());
    bytes[s.prev_out_type] = ScalarType::BOOL.0 as u8;
    bytes[s.op_index..s.op_index + 4].copy_from_slice(&(s.prev_out as i32).to_le_bytes());
    bytes
}

#[test]
fn an_alias_condition_reads_its_source_bytes() {
    for name in ["tiny_cm_m33", "dscnn_cm_m33"] {
        let base = fixture(name);
        let s = site(&base);
        // The output's byte count: that many of the constant's bytes are read.
        let n = s.prev_out_nbytes;
        assert!(
            n > 1 && n <= s.data.len(),
            "{name}: {n} of {}",
            s.data.len()
        );
        let all_true = jump_on_alias(&base, &s, 0x01, None);
        if n < s.data.len() {
            // The move gives its target the source's sizes (as ExecuTorch
            // copies the EValue): a constant larger than the target's
            // planned bytes does not fit, whatever its bytes hold.
            let refused = Err((Stage::Execute, ErrorCode::InvalidArgument));
            assert_eq!(both(&all_true), [refused, refused], "{name} all true");
            let one_false = jump_on_alias(&base, &s, 0x01, Some(0));
            assert_eq!(both(&one_false), [refused, refused], "{name} zero at 0");
            continue;
        }
        assert_eq!(both(&all_true), [Ok(()), Ok(())], "{name} all true");
        let limit = Err((Stage::Execute, ErrorCode::InvalidState));
        for z in [0, n - 1] {
            let one_false = jump_on_alias(&base, &s, 0x01, Some(z));
            assert_eq!(both(&one_false), [limit, limit], "{name} zero at {z}");
        }
    }
}
