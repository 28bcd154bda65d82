//! Bad arguments to the reduction, softmax and normalization kernels: each
//! test takes a real single-operator program from `tests/ops/`, checks that
//! it runs, rewrites one `int` argument of its kernel call in the file (a
//! dim out of range, a repeated dim, a group that does not divide C, ...)
//! and asserts the exact outcome: `InvalidArgument` from `execute`, as
//! ExecuTorch's `ET_KERNEL_CHECK`s give, never a panic.

use etch_pte::schema::{InstructionArgs, Value};
use etch_pte::PteFile;
use etch_runtime::ErrorCode;

mod support;
use support::{program, run_on_zeros as run};

/// File offset of the i64 payload of the `Int` value at `value` index.
fn int_payload(file: &[u8], value: usize) -> usize {
    let pte = PteFile::new_unchecked(file).unwrap();
    let ev = pte
        .plan("forward")
        .unwrap()
        .values()
        .unwrap()
        .get(value)
        .unwrap();
    assert!(matches!(ev.value().unwrap(), Value::Int(_)));
    // EValue.val (slot 1) is the Int table; its field 0 is the i64.
    let t = ev.0.required_table(1, "val").unwrap();
    t.field(0, 8)
        .unwrap()
        .expect("a non-zero Int is stored in the file")
}

/// Value index of argument `arg` of the first kernel call.
fn arg_value(file: &[u8], arg: usize) -> usize {
    let pte = PteFile::new_unchecked(file).unwrap();
    let plan = pte.plan("forward").unwrap();
    for chain in plan.chains().unwrap().iter() {
        for instr in chain.unwrap().instructions().unwrap().iter() {
            if let InstructionArgs::KernelCall { args, .. } = instr.unwrap().args().unwrap() {
                return args.get(arg).unwrap() as usize;
            }
        }
    }
    panic!("no kernel call")
}

/// `name` with `int` argument `arg` (or item `item` of its `int[]`) set to `v`.
fn with_int(name: &str, arg: usize, item: Option<usize>, v: i64) -> Vec<u8> {
    let mut file = program(name);
    assert_eq!(run(&file), Ok(()), "{name} runs unmodified");
    let mut value = arg_value(&file, arg);
    if let Some(k) = item {
        let pte = PteFile::new_unchecked(&file).unwrap();
        let ev = pte
            .plan("forward")
            .unwrap()
            .values()
            .unwrap()
            .get(value)
            .unwrap();
        let Value::IntList(items) = ev.value().unwrap() else {
            panic!("{name}: argument {arg} is not an int list")
        };
        value = items.get(k).unwrap() as usize;
    }
    let pos = int_payload(&file, value);
    file[pos..pos + 8].copy_from_slice(&v.to_le_bytes());
    file
}

fn invalid(file: &[u8], what: &str) {
    assert_eq!(
        run(file),
        Err(("execute", ErrorCode::InvalidArgument)),
        "{what}"
    );
}

#[test]
fn reduction_dims_out_of_range_or_repeated() {
    // argmax(x [4,5], dim=-1): dim 2 and -3 are out of range.
    invalid(
        &with_int("argmax_f32_dim_keepdim", 1, None, 2),
        "argmax dim 2",
    );
    invalid(
        &with_int("argmax_f32_dim_keepdim", 1, None, -3),
        "argmax dim -3",
    );
    // amax(x [2,3,4,5], dims [1, 3]): [1, 1] repeats a dim; [1, 4] is out of range.
    invalid(
        &with_int("amax_f32_dims", 1, Some(1), 1),
        "amax dims [1, 1]",
    );
    invalid(
        &with_int("amax_f32_dims", 1, Some(1), 4),
        "amax dims [1, 4]",
    );
    // sum(x, dims [0, 2], keepdim): [0, -2] is [0, 2] again: runs; [0, -4] repeats 0.
    assert_eq!(
        run(&with_int("sum_f32_dims_keepdim", 1, Some(1), -2)),
        Ok(())
    );
    invalid(
        &with_int("sum_f32_dims_keepdim", 1, Some(1), -4),
        "sum dims [0, -4]",
    );
    // mean(x, dim [1]): dim 2 reduces a dim of another size: output shape mismatch.
    invalid(
        &with_int("mean_f32_dim1", 1, Some(0), 2),
        "mean dim 2 vs its output",
    );
    invalid(&with_int("mean_f32_dim1", 1, Some(0), 9), "mean dim 9");
    // max.dim(x [3,5,2], 1): dim 3.
    invalid(&with_int("max_dim_f32", 1, None, 3), "max.dim dim 3");
    invalid(&with_int("var_f32_dim", 1, Some(0), -5), "var dim -5");
}

#[test]
fn slice_ops_dim_out_of_range() {
    invalid(&with_int("softmax_f32_dim1", 1, None, 4), "softmax dim 4");
    invalid(
        &with_int("log_softmax_f32_dim1", 1, None, -5),
        "log_softmax dim -5",
    );
    invalid(&with_int("cumsum_f32_dim1", 1, None, 7), "cumsum dim 7");
    // A valid other dim runs (same shape in and out).
    assert_eq!(run(&with_int("softmax_f32_dim1", 1, None, -1)), Ok(()));
}

#[test]
fn normalization_arguments() {
    // group_norm(x [2,6,3,4], N=2, C=6, HxW=12, group=2).
    invalid(
        &with_int("group_norm_f32", 6, None, 4),
        "group 4 does not divide C=6",
    );
    invalid(&with_int("group_norm_f32", 6, None, -2), "group -2");
    invalid(
        &with_int("group_norm_f32", 3, None, 3),
        "N=3 differs from the input",
    );
    invalid(&with_int("group_norm_f32", 5, None, 13), "HxW=13");
    // layer_norm(x [3,5,8], normalized_shape [8]): [7] differs from the input.
    invalid(
        &with_int("layer_norm_f32", 1, Some(0), 7),
        "normalized_shape [7]",
    );
    invalid(
        &with_int("layer_norm_f32_2d_shape", 1, Some(0), 6),
        "normalized_shape [6, 6]",
    );
}
