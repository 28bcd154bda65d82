//! Tests of the schema parser, `arg!` and `op!`.

use super::*;
use crate::{Kernel, KernelContext, Result};
use ArgKind as A;

fn nothing(_: &mut KernelContext<'_, '_>) -> Result<()> {
    Ok(())
}

#[test]
fn add_out() {
    const K: Kernel = op!(
        "aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
        nothing
    );
    assert_eq!(K.name, "aten::add.out");
    assert_eq!(
        K.args,
        &[A::Tensor, A::Tensor, A::Scalar, A::Tensor, A::Tensor]
    );
}

#[test]
fn lists_optionals_and_tuple_returns() {
    const K: Kernel = op!(
        "aten::max_pool2d_with_indices.out(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False, *, Tensor(a!) out, Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))",
        nothing
    );
    assert_eq!(K.name, "aten::max_pool2d_with_indices.out");
    assert_eq!(
        K.args,
        &[
            A::Tensor,
            A::IntList,
            A::IntList,
            A::IntList,
            A::IntList,
            A::Bool,
            A::Tensor,
            A::Tensor,
            A::TensorList
        ]
    );
    const S: Kernel = op!(
        "aten::split_with_sizes_copy.out(Tensor self, SymInt[] split_sizes, int dim=0, *, Tensor(a!)[] out) -> ()",
        nothing
    );
    // The emitter passes the out list again as the call's result.
    assert_eq!(
        S.args,
        &[A::Tensor, A::IntList, A::Int, A::TensorList, A::TensorList]
    );
    const U: Kernel = op!(
        "aten::upsample_nearest2d.vec_out(Tensor input, SymInt[]? output_size, float[]? scale_factors, *, Tensor(a!) out) -> Tensor(a!)",
        nothing
    );
    assert_eq!(
        U.args,
        &[
            A::Tensor,
            A::OptIntList,
            A::OptDoubleList,
            A::Tensor,
            A::Tensor
        ]
    );
    const C: Kernel = op!(
        "aten::cat.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)",
        nothing
    );
    assert_eq!(C.args, &[A::TensorList, A::Int, A::Tensor, A::Tensor]);
    const W: Kernel = op!(
        "aten::index.Tensor_out(Tensor self, Tensor?[] indices, *, Tensor(a!) out) -> Tensor(a!)",
        nothing
    );
    assert_eq!(W.args, &[A::Tensor, A::OptTensorList, A::Tensor, A::Tensor]);
    const D: Kernel = op!(
        "dim_order_ops::_to_dim_order_copy.out(Tensor self, *, bool non_blocking=False, int[]? dim_order=None, Tensor(a!) out) -> Tensor(a!)",
        nothing
    );
    assert_eq!(
        D.args,
        &[A::Tensor, A::Bool, A::OptIntList, A::Tensor, A::Tensor]
    );
    const G: Kernel = op!(
        "aten::gelu.out(Tensor self, *, str approximate='none', Tensor(a!) out) -> Tensor(a!)",
        nothing
    );
    assert_eq!(G.args, &[A::Tensor, A::String, A::Tensor, A::Tensor]);
}

#[test]
fn parses_at_run_time_like_op() {
    let mut kinds = [A::Tensor; 8];
    let p = parse(
        "etch_demo::scaled_softsign.out(Tensor x, float s, *, Tensor(a!) out) -> Tensor(a!)",
        &mut kinds,
    )
    .unwrap();
    assert_eq!(p.name, "etch_demo::scaled_softsign.out");
    assert_eq!(
        &kinds[..p.args],
        &[A::Tensor, A::Double, A::Tensor, A::Tensor]
    );
    let bad = |schema: &str, room: usize| {
        let mut kinds = [A::Tensor; 8];
        parse(schema, &mut kinds[..room])
            .map(|p| p.args)
            .map_err(|e| e.code)
    };
    let invalid = Err(crate::ErrorCode::InvalidArgument);
    assert_eq!(
        bad("x::y(Tensor a, Tensor(a!) out) -> Tensor(a!)", 2),
        invalid
    );
    assert_eq!(bad("x::y(Tensor a) -> Tensor", 2), Ok(2));
    assert_eq!(bad("x::y(Widget a) -> ()", 8), invalid);
    assert_eq!(bad("x::y(Tensor a -> ()", 8), invalid);
    assert_eq!(bad("x::y(Tensor a)", 8), invalid);
    assert_eq!(bad("y(Tensor a) -> ()", 8), invalid);
    assert_eq!(bad("", 8), invalid);
    assert_eq!(bad("x::y(Tensor(a!", 8), invalid);
}

/// The run-time parser (`etch_register_kernel`) against a table of
/// schemas: ExecuTorch's grammar for the types etch supports is
/// accepted with the positions' kinds, anything else is
/// `InvalidArgument` (the first six were once accepted).
#[test]
fn schema_table() {
    let invalid = [
        "::(Tensor x) -> Tensor",
        "x::y(Tensor a) ->",
        "x::y(Tensor a) -> Tensor out junk",
        "x::y(Tensor a) -> Tensor; x",
        "x::y(Tensor a) -> Tensor)",
        "x::y((Tensor a) -> Tensor",
        "x::y(Tensor a, Tensor a) -> ()",
        "x::y(Tensor a, *, Tensor(a!) a) -> Tensor(a!)",
        "x::(Tensor x) -> Tensor",
        "::y(Tensor x) -> Tensor",
        "y(Tensor a) -> ()",
        "x:y(Tensor a) -> ()",
        "x::y.(Tensor a) -> ()",
        "x:: y(Tensor a) -> ()",
        "x::y (Tensor a) -> ()",
        " x::y(Tensor a) -> ()",
        "x::y(Tensor a)",
        "x::y(Tensor a) - > Tensor",
        "x::y(Tensor a) -> Tensor, Tensor",
        "x::y(Tensor a) -> (Tensor a",
        "x::y(Tensor a) -> (Tensor,)",
        "x::y(Tensor a) -> ()()",
        "x::y(Tensor a -> ()",
        "x::y(Tensor(a!",
        "x::y(Widget a) -> ()",
        "x::y(Tensor a) -> Widget",
        "x::y(Tensor) -> ()",
        "x::y(Tensor a,) -> ()",
        "x::y(, Tensor a) -> ()",
        "x::y(Tensor a b) -> ()",
        "x::y(Tensor a, *, *, Tensor b) -> ()",
        "x::y(Tensor a, *) -> ()",
        "x::y(int(a!) a) -> ()",
        "x::y(Tensor() a) -> ()",
        "x::y(Tensor(a!!) a) -> ()",
        "x::y(Tensor a=) -> ()",
        "x::y(str s='none) -> ()",
        "x::y(int[] a=[1, 2) -> ()",
        "x::y(int[2 a) -> ()",
        "x::y(int[x] a) -> ()",
        "x::y(int?? a) -> ()",
        "x::y(int?[] a) -> ()",
        "x::y(bool[]? a) -> ()",
        "x::y(Tensor a 1) -> ()",
        "x::y(Tensor 1a) -> ()",
        "",
        "x::y",
        "x::y() -> () ;",
    ];
    for schema in invalid {
        let mut kinds = [A::Tensor; 16];
        assert_eq!(
            parse(schema, &mut kinds).map_err(|e| e.code),
            Err(crate::ErrorCode::InvalidArgument),
            "{schema:?} was accepted"
        );
    }
    let valid: &[(&str, &str, &[ArgKind])] = &[
        (
            "etch_demo::scaled_softsign.out(Tensor x, float s, *, Tensor(a!) out) -> Tensor(a!)",
            "etch_demo::scaled_softsign.out",
            &[A::Tensor, A::Double, A::Tensor, A::Tensor],
        ),
        ("x::y() -> ()", "x::y", &[]),
        ("x::y(Tensor a) -> Tensor", "x::y", &[A::Tensor, A::Tensor]),
        ("x::y(Tensor a) -> SymInt", "x::y", &[A::Tensor, A::Int]),
        ("x::y(Tensor a)  ->  Tensor  ", "x::y", &[A::Tensor, A::Tensor]),
        (
            "x::y.o_2(Tensor self, int[2] k=[1, 1], int d=-1, float e=0.01, bool f=False, *, Tensor(a!) out) -> Tensor(a!) out",
            "x::y.o_2",
            &[A::Tensor, A::IntList, A::Int, A::Double, A::Bool, A::Tensor, A::Tensor],
        ),
        (
            "x::y(Tensor self, *, str approximate='none, or (not)', Tensor(a!) out) -> Tensor(a!)",
            "x::y",
            &[A::Tensor, A::String, A::Tensor, A::Tensor],
        ),
        (
            "x::y(Tensor?[] i, Tensor? w=None, SymInt[]? s=None, float[]? f=None, ScalarType? d=None, MemoryFormat? m=None, Scalar? c=None, str? t=None) -> Tensor",
            "x::y",
            &[
                A::OptTensorList,
                A::OptTensor,
                A::OptIntList,
                A::OptDoubleList,
                A::OptScalarType,
                A::OptInt,
                A::OptScalar,
                A::OptString,
                A::Tensor,
            ],
        ),
        (
            "x::y(Tensor self, *, Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)",
            "x::y",
            &[A::Tensor, A::Tensor, A::Tensor, A::TensorList],
        ),
        (
            "x::y(Tensor self, *, Tensor(a!) out) -> (Tensor(a!))",
            "x::y",
            &[A::Tensor, A::Tensor, A::Tensor],
        ),
        (
            "x::y(Tensor self, *, Tensor(a!)[] out) -> ()",
            "x::y",
            &[A::Tensor, A::TensorList, A::TensorList],
        ),
        (
            "x::y(Tensor[] t, bool[] b, float[3] f, int i) -> ()",
            "x::y",
            &[A::TensorList, A::BoolList, A::DoubleList, A::Int],
        ),
    ];
    for (schema, name, want) in valid {
        let mut kinds = [A::Tensor; 16];
        let p = parse(schema, &mut kinds).unwrap_or_else(|e| panic!("{schema:?}: {e:?}"));
        assert_eq!((p.name, &kinds[..p.args]), (*name, *want), "{schema:?}");
    }
}

#[test]
fn arguments_by_name() {
    // Defaults with commas and quotes, `*`, optional lists, a tuple return.
    const S: &str = "aten::avg_pool2d.out(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None, *, Tensor(a!) out) -> Tensor(a!)";
    assert_eq!(arg!(S, self), 0);
    assert_eq!(
        arg!(S, [stride, padding, divisor_override, out]),
        [2, 3, 6, 7]
    );
    assert_eq!(arg!(S, return), 8);
    assert_eq!(arg!(S, return), arg_count(S) - 1);
    const G: &str =
        "aten::gelu.out(Tensor self, *, str approximate='none, x', Tensor(a!) out) -> Tensor(a!)";
    assert_eq!(arg!(G, [approximate, out]), [1, 2]);
    const U: &str = "aten::unbind_copy.int_out(Tensor self, int dim=0, *, Tensor(a!)[] out) -> ()";
    assert_eq!(arg!(U, out), 2);
    // Not found (a prefix of a name is not the name): the argument count,
    // a compile error in `arg!`; a malformed schema: `None`.
    assert_eq!(walk_args(S.as_bytes(), b"kernel"), Some((8, false)));
    assert_eq!(walk_args(S.as_bytes(), b"outs"), Some((8, false)));
    assert_eq!(walk_args(b"aten::x(Tensor", b"x"), None);
}

#[test]
fn schema_text_only_with_the_feature() {
    const K: Kernel = op!("x::y(Tensor a) -> ()", nothing);
    assert_eq!(K.name, "x::y");
    assert_eq!(K.args, &[A::Tensor]);
    assert_eq!(K.schema.is_empty(), !cfg!(feature = "schema-text"));
}
