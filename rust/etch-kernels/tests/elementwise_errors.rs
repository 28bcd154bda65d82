//! Element-wise kernels given arguments ExecuTorch's portable kernels reject:
//! the single-operator programs of tests/ops (exported by the pinned
//! upstream) with one argument changed, each ending in the error code the
//! upstream kernel gives, never a panic.

use etch_runtime::{ErrorCode, Method, Output, Program, Verification};

mod support;
use support::{program, Aligned};

/// `file` with the one occurrence of `from` replaced by `to`.
fn patched(mut file: Vec<u8>, from: &[u8], to: &[u8]) -> Vec<u8> {
    assert_eq!(from.len(), to.len());
    let at: Vec<usize> = file
        .windows(from.len())
        .enumerate()
        .filter(|(_, w)| *w == from)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(at.len(), 1, "exactly one {from:?} in the program");
    file[at[0]..at[0] + from.len()].copy_from_slice(to);
    file
}

/// Runs "forward" with `inputs` (raw little-endian bytes); the first output's
/// bytes, or the error code of load or execute.
fn run(file: &[u8], inputs: &[Vec<u8>]) -> Result<Vec<u8>, ErrorCode> {
    let mut a = Aligned::new(file.len());
    a.bytes_mut().copy_from_slice(file);
    let program =
        Program::from_bytes(a.bytes(), Verification::InternalConsistency).map_err(|e| e.code)?;
    let meta = program.method_meta("forward").map_err(|e| e.code)?;
    let mut arena = Aligned::new(16 * 1024);
    let mut state = vec![0u8; 4096];
    let mut planned: Vec<&mut [u8]> = vec![arena.bytes_mut()];
    let mut method = Method::load(&meta, &mut state, &mut planned, etch_kernels::KERNELS, &[])
        .map_err(|e| e.code)?;
    for (i, x) in inputs.iter().enumerate() {
        method.set_input_bytes(i, x).map_err(|e| e.code)?;
    }
    method.execute().map_err(|e| e.code)?;
    match method.output(0).map_err(|e| e.code)? {
        Output::Tensor(t) => Ok(t.data.to_vec()),
        _ => panic!("tensor output"),
    }
}

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
fn i32s(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
fn i64s(v: &[i64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn gelu_rejects_an_unknown_approximation() {
    let x = f32s(&[0.5; 32]);
    assert!(run(&program("gelu_f32"), std::slice::from_ref(&x)).is_ok());
    let bad = patched(program("gelu_f32"), b"none", b"nope");
    assert_eq!(run(&bad, &[x]), Err(ErrorCode::InvalidArgument));
}

#[test]
fn div_rejects_an_unknown_rounding_mode() {
    let (a, b) = (f32s(&[1.0; 12]), f32s(&[3.0; 12]));
    assert!(run(&program("div_floor_f32"), &[a.clone(), b.clone()]).is_ok());
    let bad = patched(program("div_floor_f32"), b"floor", b"round");
    assert_eq!(run(&bad, &[a, b]), Err(ErrorCode::InvalidArgument));
}

#[test]
fn integer_division_by_a_zero_element_fails_after_the_loop() {
    // div_floor_i32: [3, 4] // [4]; remainder_i32: [3, 4] % [4].
    let a = i32s(&[7; 12]);
    let ok = run(
        &program("div_floor_i32"),
        &[a.clone(), i32s(&[2, -2, 3, -3])],
    )
    .unwrap();
    assert_eq!(ok, i32s(&[3, -4, 2, -3].repeat(3)));
    assert_eq!(
        run(
            &program("div_floor_i32"),
            &[a.clone(), i32s(&[2, 0, 3, -3])]
        ),
        Err(ErrorCode::InvalidArgument)
    );
    assert_eq!(
        run(
            &program("remainder_i32"),
            &[a.clone(), i32s(&[3, -3, 5, -7])]
        ),
        Ok(i32s(&[1, 1, 2, 0].repeat(3))),
        "7 % [3, -3, 5, -7] as C's %"
    );
    assert_eq!(
        run(&program("remainder_i32"), &[a, i32s(&[3, 0, 5, -7])]),
        Err(ErrorCode::InvalidArgument)
    );
    let trunc = run(
        &program("div_trunc_i64"),
        &[i64s(&[-7; 12]), i64s(&[2, 1, 3, 0])],
    );
    assert_eq!(trunc, Err(ErrorCode::InvalidArgument));
}

#[test]
fn integer_scalar_division_by_zero_fails_before_any_work() {
    // div_scalar_floor_i32 divides by the Int scalar -3.
    let a = i32s(&[-7, 7, 0, 5, -5, 1, 2, 3, 4, 5, 6, 8]);
    let ok = run(&program("div_scalar_floor_i32"), std::slice::from_ref(&a)).unwrap();
    assert_eq!(ok, i32s(&[2, -3, 0, -2, 1, -1, -1, -1, -2, -2, -2, -3]));
    let zero = patched(
        program("div_scalar_floor_i32"),
        &(-3i64).to_le_bytes(),
        &0i64.to_le_bytes(),
    );
    assert_eq!(run(&zero, &[a]), Err(ErrorCode::InvalidArgument));
}

#[test]
fn hardtanh_bounds_must_fit_the_dtype() {
    // hardtanh_i64 clamps to [-3, 4]; a bound beyond i64 is impossible as an
    // Int, so check the in-range path and the NaN-free integer clamp.
    let x = i64s(&[-9, -3, 0, 4, 9, 1, 2, 3, -1, -2, 5, 6, 7, 8, -4]);
    let out = run(&program("hardtanh_i64"), &[x]).unwrap();
    assert_eq!(
        out,
        i64s(&[-3, -3, 0, 4, 4, 1, 2, 3, -1, -2, 4, 4, 4, 4, -3])
    );
}
