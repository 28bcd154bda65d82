//! Primitive ops the exporter emits for views and symbolic sizes
//! (ExecuTorch's `kernels/prim_ops/register_prim_ops.cpp`, `et_view.cpp`).
//! Their scalar arguments and results are Int, Double or Bool values the
//! method writes at run time (sizes read by `sym_size` flow through them
//! into `et_view` and the `SymInt[]` arguments of other kernels).

use etch_runtime::{arg, op, Error, ErrorCode, Kernel, KernelContext, Result, ValueKind};

use super::dynamic;

/// The kernels of this family the build selected (`op-*` features, all
/// of them with `prim-ops`).
pub const KERNELS: &[Kernel] = &[
    #[cfg(feature = "op-executorch_prim-et_view-default")]
    ET_VIEW,
    #[cfg(feature = "op-aten-sym_size-int")]
    SYM_SIZE_INT,
    #[cfg(feature = "op-aten-sym_numel-default")]
    SYM_NUMEL,
    #[cfg(feature = "op-executorch_prim-et_copy_index-tensor")]
    ET_COPY_INDEX,
    #[cfg(feature = "op-executorch_prim-add-Scalar")]
    ADD_SCALAR,
    #[cfg(feature = "op-executorch_prim-sub-Scalar")]
    SUB_SCALAR,
    #[cfg(feature = "op-executorch_prim-mul-Scalar")]
    MUL_SCALAR,
    #[cfg(feature = "op-executorch_prim-floordiv-Scalar")]
    FLOORDIV_SCALAR,
    #[cfg(feature = "op-executorch_prim-truediv-Scalar")]
    TRUEDIV_SCALAR,
    #[cfg(feature = "op-executorch_prim-mod-Scalar")]
    MOD_SCALAR,
    #[cfg(feature = "op-executorch_prim-neg-Scalar")]
    NEG_SCALAR,
    #[cfg(feature = "op-executorch_prim-sym_float-Scalar")]
    SYM_FLOAT_SCALAR,
    #[cfg(feature = "op-executorch_prim-sym_not-Scalar")]
    SYM_NOT_SCALAR,
    #[cfg(feature = "op-executorch_prim-sym_max-Scalar")]
    SYM_MAX_SCALAR,
    #[cfg(feature = "op-executorch_prim-sym_min-Scalar")]
    SYM_MIN_SCALAR,
    #[cfg(feature = "op-executorch_prim-ceil-Scalar")]
    CEIL_SCALAR,
    #[cfg(feature = "op-executorch_prim-round-Scalar")]
    ROUND_SCALAR,
    #[cfg(feature = "op-executorch_prim-trunc-Scalar")]
    TRUNC_SCALAR,
    #[cfg(feature = "op-executorch_prim-eq-Scalar")]
    EQ_SCALAR,
    #[cfg(feature = "op-executorch_prim-gt-Scalar")]
    GT_SCALAR,
    #[cfg(feature = "op-executorch_prim-lt-Scalar")]
    LT_SCALAR,
    #[cfg(feature = "op-executorch_prim-ge-Scalar")]
    GE_SCALAR,
    #[cfg(feature = "op-executorch_prim-le-Scalar")]
    LE_SCALAR,
];

fn bad(what: &'static str, i: usize) -> Error {
    Error::new(ErrorCode::InvalidArgument, what, i as u32)
}

/// A scalar of a kind the op does not take: `InvalidType`, as upstream's
/// `ET_KERNEL_CHECK_MSG(..., InvalidType, ...)`.
fn bad_type(i: usize) -> Error {
    Error::new(
        ErrorCode::InvalidType,
        "prim op argument of another kind",
        i as u32,
    )
}

/// `executorch_prim::et_view.default(Tensor self, int[] size) -> Tensor`:
/// emitted with exactly 3 arguments `[self, size, out]`; the output shares
/// the input's data, its sizes the list's current values (one `-1`
/// inferred), resized as a bounded dynamic tensor when the method has them.
#[allow(dead_code)]
pub const ET_VIEW: Kernel = op!(ET_VIEW_SCHEMA, et_view);

const ET_VIEW_SCHEMA: &str = "executorch_prim::et_view.default(Tensor self, int[] size) -> Tensor";

fn et_view(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    const S: &str = ET_VIEW_SCHEMA;
    let (in_dtype, in_shape) = ctx.tensor_info(arg!(S, self))?;
    let (contiguous, numel) = (in_shape.is_contiguous(), in_shape.numel());
    if ctx.has_dynamic_shapes() {
        let sizes = dynamic::view_sizes(ctx, arg!(S, size), numel)?;
        dynamic::resize(ctx, arg!(S, return), &sizes)?;
    }
    let (out_dtype, out_shape) = ctx.tensor_info(arg!(S, return))?;
    if in_dtype != out_dtype || numel != out_shape.numel() || !contiguous {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            "et_view shapes differ",
            0,
        ));
    }
    ctx.alias(arg!(S, return), arg!(S, self))
}

/// `aten::sym_size.int(Tensor self, int dim) -> SymInt`: the current size.
#[allow(dead_code)]
pub const SYM_SIZE_INT: Kernel = op!(SYM_SIZE, sym_size_int);

const SYM_SIZE: &str = "aten::sym_size.int(Tensor self, int dim) -> SymInt";

fn sym_size_int(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    const S: &str = SYM_SIZE;
    let (_, shape) = ctx.tensor_info(arg!(S, self))?;
    let dim = ctx.int(arg!(S, dim))?;
    let rank = shape.rank() as i64;
    let d = if dim < 0 { dim + rank } else { dim };
    if !(0..rank).contains(&d) {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            "sym_size dim out of range",
            1,
        ));
    }
    let size = shape.size(d as isize) as i64;
    ctx.set_int(arg!(S, return), size)
}

/// `aten::sym_numel(Tensor self) -> SymInt`: the current element count.
#[allow(dead_code)]
pub const SYM_NUMEL: Kernel = op!("aten::sym_numel.default(Tensor self) -> SymInt", |ctx| {
    let n = ctx.tensor_info(arg!(SCHEMA, self))?.1.numel() as i64;
    ctx.set_int(arg!(SCHEMA, return), n)
});

/// `executorch_prim::et_copy_index.tensor(self, src, index)`: the loop body
/// of `torch.map` / `scan` writes its iteration's result `src` into slice
/// `index` of the stacked output `self` (the emitter's loop counter is
/// `index`). As upstream's `et_copy_index`: `self` has one dimension more
/// than `src`; past slice 0 its other sizes must be `src`'s; a `self` with
/// fewer than `index + 1` slices is resized to `[index + 1, src sizes...]`
/// (a bounded dynamic one); then `src`'s bytes go to byte offset
/// `index * src bytes`. Where upstream aborts (`ET_CHECK`) or would write
/// out of bounds (a negative index, a static `self` too short), etch
/// returns `InvalidArgument` and writes nothing.
#[allow(dead_code)]
pub const ET_COPY_INDEX: Kernel = op!(ET_COPY_INDEX_SCHEMA, et_copy_index);

const ET_COPY_INDEX_SCHEMA: &str =
    "executorch_prim::et_copy_index.tensor(Tensor(a!) self, Tensor src, int index) -> ()";

fn et_copy_index(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    const S: &str = ET_COPY_INDEX_SCHEMA;
    let [to_arg, src_arg, index_arg] = arg!(S, [self, src, index]);
    let index = ctx.int(index_arg)?;
    let index =
        usize::try_from(index).map_err(|_| bad("et_copy_index: negative index", index_arg))?;
    let (to_dtype, to_shape) = ctx.tensor_info(to_arg)?;
    let (from_dtype, from_shape) = ctx.tensor_info(src_arg)?;
    if to_shape.rank() != from_shape.rank() + 1 || to_dtype != from_dtype {
        return Err(bad(
            "et_copy_index: self must be src with one more dim",
            to_arg,
        ));
    }
    let mut sizes = dynamic::Sizes::new();
    sizes.push((index as i64).saturating_add(1))?;
    let to_sizes = to_shape.sizes();
    for (d, s) in from_shape.sizes().iter().enumerate() {
        if index > 0 && to_sizes.get(d + 1) != Some(s) {
            return Err(bad("et_copy_index: shapes differ", to_arg));
        }
        sizes.push(s as i64)?;
    }
    if to_sizes.first().unwrap_or(0) as usize <= index {
        dynamic::resize(ctx, to_arg, &sizes)?;
    }
    let ([src], [out]) = ctx.io([src_arg], [to_arg])?;
    let src = src.ok_or(bad("et_copy_index: no src", src_arg))?;
    let n = src.data.len();
    let dst = index
        .checked_mul(n)
        .and_then(|at| out.data.get_mut(at..at.checked_add(n)?))
        .ok_or(bad("et_copy_index: index past self's slices", index_arg))?;
    if !etch_runtime::memory::copy_slice(dst, src.data) {
        return Err(bad("et_copy_index: lengths differ", src_arg));
    }
    Ok(())
}

/// A scalar argument of a prim op.
#[derive(Clone, Copy)]
enum S {
    I(i64),
    D(f64),
    B(bool),
}

fn get(ctx: &KernelContext<'_, '_>, i: usize) -> Result<S> {
    Ok(match ctx.kind(i)? {
        ValueKind::Int => S::I(ctx.int(i)?),
        ValueKind::Double => S::D(ctx.double(i)?),
        ValueKind::Bool => S::B(ctx.bool(i)?),
        _ => return Err(bad("prim op argument is not a scalar", i)),
    })
}

impl S {
    /// A number (Int or Double) as f64; a Bool is `InvalidType` (argument
    /// `i`), as in upstream's arithmetic.
    fn f(self, i: usize) -> Result<f64> {
        match self {
            S::I(v) => Ok(v as f64),
            S::D(v) => Ok(v),
            S::B(_) => Err(bad_type(i)),
        }
    }
}

/// Writes result `r` into output value `i` with `r`'s kind, whatever kind
/// the program declared it: ExecuTorch's prim ops assign a new `EValue`
/// (`truediv` on two Ints gives a Double, which the emitter declares as an
/// Int), and the method's value slots keep the kind.
fn put(ctx: &mut KernelContext<'_, '_>, i: usize, r: S) -> Result<()> {
    match r {
        S::I(v) => ctx.set_int(i, v),
        S::D(v) => ctx.set_double(i, v),
        S::B(v) => ctx.set_bool(i, v),
    }
}

/// Integer arithmetic that overflows is `InvalidArgument` (upstream's
/// `int64_t` arithmetic would be undefined there).
fn int(r: Option<i64>) -> Result<S> {
    r.map(S::I)
        .ok_or(bad("prim op integer overflow or division by zero", 0))
}

/// Python's floor division and C's `%` on Ints, as upstream computes them.
fn floordiv(a: i64, b: i64) -> Option<i64> {
    let q = a.checked_div(b)?;
    if a.checked_rem(b)? != 0 && ((a < 0) != (b < 0)) {
        q.checked_sub(1)
    } else {
        Some(q)
    }
}

/// `Scalar a, Scalar b -> Scalar`: Int op Int is an Int, an Int or Double
/// with a Double a Double (`ALGEBRA_ET_PRIM_OP`), a Bool `InvalidType`.
/// `args`: the positions of `a`, `b` and the result.
fn binary(
    ctx: &mut KernelContext<'_, '_>,
    args: [usize; 3],
    fi: fn(i64, i64) -> Option<i64>,
    fd: fn(f64, f64) -> f64,
) -> Result<()> {
    let [a, b, result] = args;
    let r = match (get(ctx, a)?, get(ctx, b)?) {
        (S::I(x), S::I(y)) => int(fi(x, y))?,
        (x, y) => S::D(fd(x.f(a)?, y.f(b)?)),
    };
    put(ctx, result, r)
}

/// `Int a, Int b -> Int` (`sym_max`, `sym_min`, `mod`): anything but two
/// Ints is `InvalidType`, as upstream.
fn int_binary(
    ctx: &mut KernelContext<'_, '_>,
    args: [usize; 3],
    fi: fn(i64, i64) -> Option<i64>,
) -> Result<()> {
    let [a, b, result] = args;
    let r = match (get(ctx, a)?, get(ctx, b)?) {
        (S::I(x), S::I(y)) => int(fi(x, y))?,
        (S::I(_), _) => return Err(bad_type(b)),
        _ => return Err(bad_type(a)),
    };
    put(ctx, result, r)
}

/// `Scalar a, Scalar b -> bool` (`BOOLEAN_ET_PRIM_OP`): Ints and Doubles
/// in any mix, or two Bools; a Bool with a number is `InvalidType`.
/// `args`: the positions of `a`, `b` and the result.
fn compare(
    ctx: &mut KernelContext<'_, '_>,
    args: [usize; 3],
    fi: fn(&i64, &i64) -> bool,
    fd: fn(&f64, &f64) -> bool,
) -> Result<()> {
    let [a, b, result] = args;
    let r = match (get(ctx, a)?, get(ctx, b)?) {
        (S::I(x), S::I(y)) => fi(&x, &y),
        (S::B(x), S::B(y)) => fi(&(x as i64), &(y as i64)),
        (x, y) => fd(&x.f(a)?, &y.f(b)?),
    };
    put(ctx, result, S::B(r))
}

/// `Scalar a -> Scalar` rounding a Double to an Int (`ceil`, `round`,
/// `trunc`); as upstream, anything but a Double is `InvalidType`. Out of
/// the Int range (upstream's cast is undefined there): `InvalidArgument`.
/// `args`: the positions of `a` and the result.
fn to_int(ctx: &mut KernelContext<'_, '_>, args: [usize; 2], f: fn(f64) -> f64) -> Result<()> {
    let [a, result] = args;
    let S::D(d) = get(ctx, a)? else {
        return Err(bad_type(a));
    };
    let v = f(d);
    if !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&v) {
        return Err(bad("prim op result out of the Int range", a));
    }
    put(ctx, result, S::I(v as i64))
}

/// Python's floor division of Doubles, as upstream's `floor_div_double`:
/// `(a - fmod(a, b)) / b`, one less when the remainder's sign is not
/// `b`'s; by zero, an infinity of `a`'s sign.
fn floordiv_f64(a: f64, b: f64) -> f64 {
    if b == 0.0 {
        return if a.is_sign_negative() {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    // `%` on f64 is C's `fmod` (libm's links a division-by-zero panic).
    let m = a % b;
    let div = (a - m) / b;
    if m != 0.0 && b.is_sign_negative() != m.is_sign_negative() {
        div - 1.0
    } else {
        div
    }
}

macro_rules! prim_binary {
    ($name:ident, $schema:literal, $fi:expr, $fd:expr) => {
        #[allow(dead_code)]
        pub const $name: Kernel = op!($schema, |ctx| {
            binary(ctx, arg!(SCHEMA, [a, b, return]), $fi, $fd)
        });
    };
}

prim_binary!(
    ADD_SCALAR,
    "executorch_prim::add.Scalar(Scalar a, Scalar b) -> Scalar",
    i64::checked_add,
    |a, b| a + b
);
prim_binary!(
    SUB_SCALAR,
    "executorch_prim::sub.Scalar(Scalar a, Scalar b) -> Scalar",
    i64::checked_sub,
    |a, b| a - b
);
prim_binary!(
    MUL_SCALAR,
    "executorch_prim::mul.Scalar(Scalar a, Scalar b) -> Scalar",
    i64::checked_mul,
    |a, b| a * b
);
prim_binary!(
    FLOORDIV_SCALAR,
    "executorch_prim::floordiv.Scalar(Scalar a, Scalar b) -> Scalar",
    floordiv,
    floordiv_f64
);

macro_rules! prim_int_binary {
    ($name:ident, $schema:literal, $fi:expr) => {
        #[allow(dead_code)]
        pub const $name: Kernel = op!($schema, |ctx| {
            int_binary(ctx, arg!(SCHEMA, [a, b, return]), $fi)
        });
    };
}

prim_int_binary!(
    SYM_MAX_SCALAR,
    "executorch_prim::sym_max.Scalar(Scalar a, Scalar b) -> Scalar",
    |a, b| Some(a.max(b))
);
prim_int_binary!(
    SYM_MIN_SCALAR,
    "executorch_prim::sym_min.Scalar(Scalar a, Scalar b) -> Scalar",
    |a, b| Some(a.min(b))
);
// `mod.Scalar(SymInt a, SymInt b) -> SymInt`: C's `%` (the sign of `a`).
prim_int_binary!(
    MOD_SCALAR,
    "executorch_prim::mod.Scalar(SymInt a, SymInt b) -> SymInt",
    i64::checked_rem
);

/// `truediv.Scalar`: always a Double (two Ints divided as Doubles), also
/// when the program declares its result an Int.
#[allow(dead_code)]
pub const TRUEDIV_SCALAR: Kernel = op!(
    "executorch_prim::truediv.Scalar(Scalar a, Scalar b) -> Scalar",
    |ctx| {
        let [a, b] = arg!(SCHEMA, [a, b]);
        let (x, y) = (get(ctx, a)?.f(a)?, get(ctx, b)?.f(b)?);
        put(ctx, arg!(SCHEMA, return), S::D(x / y))
    }
);

/// `neg.Scalar`: an Int or a Double.
#[allow(dead_code)]
pub const NEG_SCALAR: Kernel = op!("executorch_prim::neg.Scalar(Scalar a) -> Scalar", |ctx| {
    let a = arg!(SCHEMA, a);
    let r = match get(ctx, a)? {
        S::I(x) => int(x.checked_neg())?,
        x => S::D(-x.f(a)?),
    };
    put(ctx, arg!(SCHEMA, return), r)
});

/// `sym_float.Scalar`: a Double (of an Int, Double or Bool).
#[allow(dead_code)]
pub const SYM_FLOAT_SCALAR: Kernel = op!(
    "executorch_prim::sym_float.Scalar(Scalar a) -> Scalar",
    |ctx| {
        let r = match get(ctx, arg!(SCHEMA, a))? {
            S::I(v) => v as f64,
            S::D(v) => v,
            S::B(v) => v as u8 as f64,
        };
        put(ctx, arg!(SCHEMA, return), S::D(r))
    }
);

/// `sym_not.Scalar(Scalar a) -> bool`: of a Bool only, as upstream (its
/// schema here `-> Scalar`, as the comparisons' below).
#[allow(dead_code)]
pub const SYM_NOT_SCALAR: Kernel = op!(
    "executorch_prim::sym_not.Scalar(Scalar a) -> Scalar",
    |ctx| {
        let a = arg!(SCHEMA, a);
        let S::B(x) = get(ctx, a)? else {
            return Err(bad_type(a));
        };
        put(ctx, arg!(SCHEMA, return), S::B(!x))
    }
);

#[allow(dead_code)]
pub const CEIL_SCALAR: Kernel = op!("executorch_prim::ceil.Scalar(Scalar a) -> Scalar", |ctx| {
    to_int(ctx, arg!(SCHEMA, [a, return]), libm::ceil)
});
/// `round.Scalar`: halves to even, as Python's `round`.
#[allow(dead_code)]
pub const ROUND_SCALAR: Kernel = op!("executorch_prim::round.Scalar(Scalar a) -> Scalar", |ctx| {
    to_int(ctx, arg!(SCHEMA, [a, return]), libm::rint)
});
#[allow(dead_code)]
pub const TRUNC_SCALAR: Kernel = op!("executorch_prim::trunc.Scalar(Scalar a) -> Scalar", |ctx| {
    to_int(ctx, arg!(SCHEMA, [a, return]), libm::trunc)
});

// The comparisons and `sym_not` write a Bool, but their schemas here say
// `-> Scalar` where upstream's say `-> bool`: the pinned emitter declares
// the result of a comparison on sizes as an Int value (`t > 8` as a
// `torch.cond` predicate: tests/programs/seq_prim_dyn_f32), ExecuTorch does
// not check kinds at load, and its kernel assigns a Bool EValue over it.
// A `-> bool` schema made etch's load refuse the exported program.
macro_rules! prim_compare {
    ($name:ident, $schema:literal, $f:ident) => {
        #[allow(dead_code)]
        pub const $name: Kernel = op!($schema, |ctx| {
            compare(ctx, arg!(SCHEMA, [a, b, return]), i64::$f, f64::$f)
        });
    };
}
prim_compare!(
    EQ_SCALAR,
    "executorch_prim::eq.Scalar(Scalar a, Scalar b) -> Scalar",
    eq
);
prim_compare!(
    GT_SCALAR,
    "executorch_prim::gt.Scalar(Scalar a, Scalar b) -> Scalar",
    gt
);
prim_compare!(
    LT_SCALAR,
    "executorch_prim::lt.Scalar(Scalar a, Scalar b) -> Scalar",
    lt
);
prim_compare!(
    GE_SCALAR,
    "executorch_prim::ge.Scalar(Scalar a, Scalar b) -> Scalar",
    ge
);
prim_compare!(
    LE_SCALAR,
    "executorch_prim::le.Scalar(Scalar a, Scalar b) -> Scalar",
    le
);
