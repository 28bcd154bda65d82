//! The `executorch_prim` scalar ops one at a time, on programs built here
//! (etch-pte's test builder): the kinds each takes and the kind of its
//! result, as upstream's `kernels/prim_ops/register_prim_ops.cpp` (an op
//! assigns a new EValue: `truediv` of two Ints is a Double, a comparison a
//! Bool, whatever kind the program declares its result); another kind is
//! `InvalidType` (0x13) there and here; where upstream's arithmetic is
//! undefined (Int overflow, Int division by zero, a Double out of the Int
//! range into `ceil`), etch returns `InvalidArgument` (0x12). The exported
//! programs that call them end to end are seq_prim_dyn_f32 and
//! seq_symops_dyn_f32 (tests/programs).

use etch_pte::builder::{Builder, Field};
use etch_runtime::{ErrorCode, Method, Output, Program, Verification};

/// A scalar of a test program's value table.
#[derive(Clone, Copy, Debug)]
enum S {
    I(i64),
    D(f64),
    B(bool),
}

/// What one call gives: its result, or an error code.
#[derive(Debug, PartialEq)]
enum R {
    Int(i64),
    Double(f64),
    Bool(bool),
    Err(ErrorCode),
}

/// Runs `executorch_prim::<op>.Scalar` (or `aten::<op>` when `op` has
/// `::`) on `args`, its result written into a value the program declares
/// as `declared`.
fn call(op: &str, args: &[S], declared: S) -> R {
    let mut fb = Builder::default();
    let mut values = Vec::new();
    for &a in args.iter().chain([&declared]) {
        values.push(match a {
            S::I(x) => fb.int(x),
            S::B(b) => fb.bool(b),
            S::D(d) => {
                let t = fb.table(&[(0, Field::Bytes(d.to_le_bytes().to_vec()))]);
                fb.table(&[(0, Field::Bytes(vec![4])), (1, Field::Ref(t))])
            }
        });
    }
    let values = fb.refs(&values);
    let out = args.len() as i32;
    let arg_list = fb.i32s(&(0..=out).collect::<Vec<_>>());
    let i0 = fb.kernel_call(0, arg_list);
    let io = fb.scalars(&[]);
    let instructions = fb.refs(&[i0]);
    let chain = fb.chain(io, instructions);
    let chains = fb.refs(&[chain]);
    let (name, overload) = match op.split_once('.') {
        Some((n, o)) => (n.to_string(), o.to_string()),
        None => (format!("executorch_prim::{op}"), "Scalar".to_string()),
    };
    let (n, o) = (fb.string(&name), fb.string(&overload));
    let operator = fb.table(&[(0, Field::Ref(n)), (1, Field::Ref(o))]);
    let operators = fb.refs(&[operator]);
    let bytes = fb.method_file(values, chains, operators, &[out]);
    let mut words = vec![0u128; bytes.len().div_ceil(16)];
    bytemuck::cast_slice_mut::<u128, u8>(&mut words)[..bytes.len()].copy_from_slice(&bytes);
    let bytes = &bytemuck::cast_slice::<u128, u8>(&words)[..bytes.len()];

    let program = Program::from_bytes(bytes, Verification::InternalConsistency).unwrap();
    let meta = program.method_meta("forward").unwrap();
    let mut state = vec![0u8; meta.method_state_bytes(etch_kernels::KERNELS).unwrap()];
    let mut planned: [&mut [u8]; 0] = [];
    let mut method = match Method::load(&meta, &mut state, &mut planned, etch_kernels::KERNELS, &[])
    {
        Ok(m) => m,
        Err(e) => return R::Err(e.code),
    };
    if let Err(e) = method.execute() {
        return R::Err(e.code);
    }
    match method.output(0).unwrap() {
        Output::Int(x) => R::Int(x),
        Output::Double(x) => R::Double(x),
        Output::Bool(x) => R::Bool(x),
        o => panic!("{op}: {o:?}"),
    }
}

use R::{Bool, Double, Int};
use S::{B, D, I};
const TYPE: R = R::Err(ErrorCode::InvalidType);
const ARG: R = R::Err(ErrorCode::InvalidArgument);

#[test]
fn truediv_is_a_double_whatever_its_output_is_declared() {
    assert_eq!(call("truediv", &[I(7), I(2)], I(0)), Double(3.5));
    assert_eq!(call("truediv", &[I(7), D(0.5)], I(0)), Double(14.0));
    assert_eq!(call("truediv", &[D(1.0), I(4)], D(0.0)), Double(0.25));
    assert_eq!(call("truediv", &[I(1), I(0)], I(0)), Double(f64::INFINITY));
    assert_eq!(call("truediv", &[I(7), B(true)], I(0)), TYPE);
}

#[test]
fn arithmetic_keeps_ints_and_refuses_bools() {
    assert_eq!(call("add", &[I(7), I(2)], I(0)), Int(9));
    assert_eq!(call("add", &[I(7), D(2.5)], I(0)), Double(9.5));
    assert_eq!(call("sub", &[D(7.0), I(2)], D(0.0)), Double(5.0));
    assert_eq!(call("mul", &[I(3), I(-4)], I(0)), Int(-12));
    assert_eq!(call("add", &[B(true), I(1)], I(0)), TYPE);
    assert_eq!(call("mul", &[I(i64::MAX), I(2)], I(0)), ARG);
    assert_eq!(call("neg", &[I(7)], I(0)), Int(-7));
    assert_eq!(call("neg", &[D(2.5)], I(0)), Double(-2.5));
    assert_eq!(call("neg", &[B(true)], I(0)), TYPE);
}

#[test]
fn floordiv_and_mod_as_upstream() {
    assert_eq!(call("floordiv", &[I(-7), I(2)], I(0)), Int(-4));
    assert_eq!(call("floordiv", &[I(7), I(0)], I(0)), ARG);
    // Doubles: (a - fmod(a, b)) / b, one less when the remainder's sign
    // is not b's; by zero an infinity of a's sign.
    assert_eq!(call("floordiv", &[D(-7.5), I(2)], I(0)), Double(-4.0));
    assert_eq!(call("floordiv", &[D(7.5), D(-2.0)], I(0)), Double(-4.0));
    assert_eq!(
        call("floordiv", &[D(7.0), D(0.0)], I(0)),
        Double(f64::INFINITY)
    );
    assert_eq!(
        call("floordiv", &[D(-7.0), I(0)], I(0)),
        Double(f64::NEG_INFINITY)
    );
    assert_eq!(call("mod", &[I(-7), I(2)], I(0)), Int(-1));
    // `mod.Scalar(SymInt a, SymInt b)`: a Double argument does not match
    // the schema, refused at load (upstream: InvalidType at execute).
    assert_eq!(
        call("mod", &[I(7), D(2.5)], I(0)),
        R::Err(ErrorCode::InvalidProgram)
    );
}

#[test]
fn rounding_takes_a_double_only() {
    assert_eq!(call("ceil", &[D(2.25)], I(0)), Int(3));
    assert_eq!(call("trunc", &[D(-2.75)], I(0)), Int(-2));
    // Halves to even, as Python's round.
    for (x, r) in [(0.5, 0), (1.5, 2), (2.5, 2), (-2.5, -2), (3.5, 4), (2.6, 3)] {
        assert_eq!(call("round", &[D(x)], I(0)), Int(r), "round({x})");
    }
    assert_eq!(call("ceil", &[I(7)], I(0)), TYPE);
    assert_eq!(call("round", &[B(true)], I(0)), TYPE);
    assert_eq!(call("trunc", &[D(1e300)], I(0)), ARG);
}

#[test]
fn sym_ops_take_their_kinds() {
    assert_eq!(call("sym_max", &[I(7), I(9)], I(0)), Int(9));
    assert_eq!(call("sym_min", &[I(7), I(9)], I(0)), Int(7));
    assert_eq!(call("sym_max", &[I(7), D(9.0)], I(0)), TYPE);
    assert_eq!(call("sym_min", &[D(7.0), I(9)], I(0)), TYPE);
    assert_eq!(call("sym_float", &[I(7)], I(0)), Double(7.0));
    assert_eq!(call("sym_float", &[B(true)], I(0)), Double(1.0));
    assert_eq!(call("sym_not", &[B(true)], I(0)), Bool(false));
    assert_eq!(call("sym_not", &[I(0)], I(0)), TYPE);
}

#[test]
fn comparisons_are_bools_whatever_their_output_is_declared() {
    // The emitter declares a comparison on sizes an Int (`t > 8`).
    assert_eq!(call("gt", &[I(9), I(8)], I(0)), Bool(true));
    assert_eq!(call("lt", &[I(9), D(8.5)], I(0)), Bool(false));
    assert_eq!(call("ge", &[D(8.0), I(8)], B(false)), Bool(true));
    assert_eq!(call("le", &[I(9), I(8)], I(0)), Bool(false));
    assert_eq!(call("eq", &[B(true), B(true)], I(0)), Bool(true));
    assert_eq!(call("eq", &[B(true), I(1)], I(0)), TYPE);
}
