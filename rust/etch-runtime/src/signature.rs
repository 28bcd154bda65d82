//! Operator schemas written once, as ExecuTorch writes them.
//!
//! A kernel declares its operator with the schema line of ExecuTorch's
//! `functions.yaml` (`func:`), namespace first:
//!
//! ```
//! use etch_runtime::{op, ArgKind, Kernel};
//! const ADD_OUT: Kernel = op!(
//!     "aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
//!     |_ctx| Ok(())
//! );
//! assert_eq!(ADD_OUT.name, "aten::add.out");
//! assert_eq!(ADD_OUT.args, &[ArgKind::Tensor, ArgKind::Tensor, ArgKind::Scalar,
//!                            ArgKind::Tensor, ArgKind::Tensor]);
//! ```
//!
//! [`op!`](crate::op) parses the line at compile time into the kernel's name
//! and the [`ArgKind`] of every position of the instruction's argument list:
//! the schema arguments in order (`out` included), then the returned value
//! (a tuple of several comes back as one `TensorList`; `-> ()` adds nothing
//! unless an argument is a `Tensor(a!)[]` out list, which comes back again),
//! which is how ExecuTorch's emitter lays out a `KernelCall`. Only the name
//! reaches flash; the schema text itself is kept (in [`Kernel::schema`]) only
//! with the `schema-text` feature, for host tools. A type the parser does not
//! know is a compile error, so a schema is never silently mis-declared.

use crate::{ArgKind, Error, ErrorCode, Result};

/// `?` for `Option` in a `const fn`.
macro_rules! tri {
    ($e:expr) => {
        match $e {
            Some(v) => v,
            None => return None,
        }
    };
}

/// Byte `i` of `s`, 0 past the end: indexing that cannot panic, usable in
/// `const fn` (the parser also runs at run time, on schemas registered
/// through the C API).
const fn at(s: &[u8], i: usize) -> u8 {
    if i < s.len() {
        s[i]
    } else {
        0
    }
}

/// The kind of one schema type (`Tensor(a!)`, `int[2]`, `Scalar?`, ...);
/// `None` for a type etch does not know.
const fn kind_of(ty: &[u8]) -> Option<ArgKind> {
    // Drop the alias annotation: `Tensor(a!)` → `Tensor`, `Tensor(a!)[]` → `Tensor[]`.
    let mut base = [0u8; 32];
    let mut len = 0;
    let mut i = 0;
    let mut depth = 0;
    while i < ty.len() {
        let c = at(ty, i);
        if c == b'(' {
            depth += 1;
        } else if c == b')' {
            depth -= 1;
        } else if depth == 0 {
            if len >= base.len() {
                return None; // schema type too long
            }
            base[len] = c;
            len += 1;
        }
        i += 1;
    }
    let optional = len > 0 && at(&base, len - 1) == b'?';
    if optional {
        len -= 1;
    }
    // `int[2]`, `SymInt[]`: a list; the length is not checked (PyTorch lets
    // one value stand for all).
    let mut list = false;
    let mut elem = len;
    let mut k = 0;
    while k < len {
        if at(&base, k) == b'[' {
            list = true;
            elem = k;
            break;
        }
        k += 1;
    }
    let (b, n) = (&base, elem);
    use ArgKind as A;
    Some(match (list, optional) {
        (false, false) => {
            if eq(b, n, b"Tensor") {
                A::Tensor
            } else if eq(b, n, b"int") || eq(b, n, b"SymInt") {
                A::Int
            } else if eq(b, n, b"float") {
                A::Double
            } else if eq(b, n, b"bool") {
                A::Bool
            } else if eq(b, n, b"Scalar") {
                A::Scalar
            } else if eq(b, n, b"ScalarType") {
                A::ScalarType
            } else if eq(b, n, b"str") {
                A::String
            } else {
                return None;
            }
        }
        (false, true) => {
            if eq(b, n, b"Tensor") {
                A::OptTensor
            } else if eq(b, n, b"int") || eq(b, n, b"SymInt") {
                A::OptInt
            } else if eq(b, n, b"float") {
                A::OptDouble
            } else if eq(b, n, b"bool") {
                A::OptBool
            } else if eq(b, n, b"Scalar") {
                A::OptScalar
            } else if eq(b, n, b"ScalarType") {
                A::OptScalarType
            } else if eq(b, n, b"str") {
                A::OptString
            } else if eq(b, n, b"Layout") || eq(b, n, b"Device") || eq(b, n, b"MemoryFormat") {
                // Serialized as an Int code, or None.
                A::OptInt
            } else {
                return None;
            }
        }
        (true, false) => {
            if eq(b, n, b"Tensor") {
                A::TensorList
            } else if eq(b, n, b"Tensor?") {
                A::OptTensorList
            } else if eq(b, n, b"int") || eq(b, n, b"SymInt") {
                A::IntList
            } else if eq(b, n, b"float") {
                A::DoubleList
            } else if eq(b, n, b"bool") {
                A::BoolList
            } else {
                return None;
            }
        }
        (true, true) => {
            if eq(b, n, b"int") || eq(b, n, b"SymInt") {
                A::OptIntList
            } else if eq(b, n, b"float") {
                A::OptDoubleList
            } else {
                return None;
            }
        }
    })
}

const fn eq(buf: &[u8; 32], len: usize, word: &[u8]) -> bool {
    if len != word.len() {
        return false;
    }
    let mut i = 0;
    while i < len {
        if at(buf, i) != at(word, i) {
            return false;
        }
        i += 1;
    }
    true
}

/// Index of the `(` that opens the argument list.
const fn open_paren(s: &[u8]) -> Option<usize> {
    let mut i = 0;
    while i < s.len() {
        if at(s, i) == b'(' {
            return Some(i);
        }
        i += 1;
    }
    None // no argument list
}

/// Index of the `)` matching the `(` at `open`.
const fn close_paren(s: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0;
    let mut i = open;
    while i < s.len() {
        if at(s, i) == b'(' {
            depth += 1;
        } else if at(s, i) == b')' {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
        i += 1;
    }
    None // unbalanced parentheses
}

/// Walks the types of a comma-separated list `s[from..to]` (each item
/// `Type name=default` or just `Type`; `*` is skipped), calling back with
/// each type's byte range. Written as a const "iterator": returns the
/// number of types and fills `out` with their kinds while there is room;
/// `None` if a type is unknown.
const fn list_kinds(
    s: &[u8],
    from: usize,
    to: usize,
    out: &mut [ArgKind],
    mut n: usize,
) -> Option<usize> {
    let mut i = from;
    while i < to {
        while i < to && (at(s, i) == b' ' || at(s, i) == b',') {
            i += 1;
        }
        if i >= to {
            break;
        }
        // The type runs to the first space at parenthesis depth 0.
        let start = i;
        let mut depth = 0;
        while i < to && !(depth == 0 && (at(s, i) == b' ' || at(s, i) == b',')) {
            if at(s, i) == b'(' {
                depth += 1;
            } else if at(s, i) == b')' {
                depth -= 1;
            }
            i += 1;
        }
        let ty = match s.split_at_checked(i) {
            Some((head, _)) => match head.split_at_checked(start) {
                Some((_, ty)) => ty,
                None => return None,
            },
            None => return None,
        };
        if !(ty.len() == 1 && at(ty, 0) == b'*') {
            let kind = tri!(kind_of(ty));
            if n < out.len() {
                out[n] = kind;
            }
            n += 1;
        }
        // Skip the name and default value up to the next comma at depth 0.
        let mut depth = 0;
        while i < to && !(depth == 0 && at(s, i) == b',') {
            if at(s, i) == b'(' || at(s, i) == b'[' {
                depth += 1;
            } else if at(s, i) == b')' || at(s, i) == b']' {
                depth -= 1;
            }
            i += 1;
        }
    }
    Some(n)
}

/// Whether `s[from..to]` declares a mutable tensor list (`Tensor(a!)[]`).
const fn has_out_list(s: &[u8], from: usize, to: usize) -> bool {
    let pat = b"!)[]";
    let mut i = from;
    while i + pat.len() <= to {
        let mut k = 0;
        while k < pat.len() && at(s, i + k) == at(pat, k) {
            k += 1;
        }
        if k == pat.len() {
            return true;
        }
        i += 1;
    }
    false
}

/// Kinds of the whole argument list (arguments, then returns) into `out`;
/// returns how many there are, `None` if the schema is malformed or names a
/// type etch does not know.
const fn all_kinds(schema: &str, out: &mut [ArgKind]) -> Option<usize> {
    let s = schema.as_bytes();
    let open = tri!(open_paren(s));
    let close = tri!(close_paren(s, open));
    let n = tri!(list_kinds(s, open + 1, close, out, 0));
    // Returns: `-> ()`, `-> Tensor(a!)`, `-> (Tensor(a!) a, Tensor(b!) b)`.
    let mut i = close + 1;
    while i + 1 < s.len() && !(at(s, i) == b'-' && at(s, i + 1) == b'>') {
        i += 1;
    }
    if i + 1 >= s.len() {
        return None; // no `->` return
    }
    i += 2;
    while i < s.len() && at(s, i) == b' ' {
        i += 1;
    }
    if i < s.len() && at(s, i) == b'(' {
        // A tuple of values comes back as one list value: the emitter writes
        // `(out, indices)` as a TensorList after the arguments.
        let close = tri!(close_paren(s, i));
        let mut scratch: [ArgKind; 0] = [];
        match tri!(list_kinds(s, i + 1, close, &mut scratch, 0)) {
            // `-> ()` with a `Tensor(a!)[] out` argument (split_copy,
            // split_with_sizes_copy, unbind_copy): the emitter writes the
            // functional op's `Tensor[]` result, the out list again, after
            // the arguments (checked against ExecuTorch 1.5.1 exports).
            0 if has_out_list(s, open, close) => {
                if n < out.len() {
                    out[n] = ArgKind::TensorList;
                }
                Some(n + 1)
            }
            0 => Some(n),
            1 => list_kinds(s, i + 1, close, out, n),
            _ => {
                if n < out.len() {
                    out[n] = ArgKind::TensorList;
                }
                Some(n + 1)
            }
        }
    } else {
        list_kinds(s, i, s.len(), out, n)
    }
}

/// Number of positions in a kernel call of `schema` (arguments and returns).
/// For `op!`: a malformed schema is a compile error.
pub const fn arg_count(schema: &str) -> usize {
    let mut scratch: [ArgKind; 0] = [];
    match all_kinds(schema, &mut scratch) {
        Some(n) => n,
        None => panic!("malformed schema or unknown schema type"),
    }
}

/// The kinds of a kernel call of `schema`; `N` must be [`arg_count`].
pub const fn arg_kinds<const N: usize>(schema: &str) -> [ArgKind; N] {
    let mut out = [ArgKind::Tensor; N];
    match all_kinds(schema, &mut out) {
        Some(n) if n == N => out,
        _ => panic!("arg_kinds: N is not arg_count(schema)"),
    }
}

/// A schema parsed at run time (kernels registered through the C API): the
/// same parser `op!` runs at compile time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parsed<'s> {
    /// `namespace::name.overload`, as [`Kernel::name`](crate::Kernel::name).
    pub name: &'s str,
    /// Number of argument kinds written to the caller's buffer.
    pub args: usize,
}

/// Parses `schema` into its operator name and the kinds of its kernel call's
/// positions, written to `kinds`. `InvalidArgument` if the schema is
/// malformed, names a type etch does not know, has no operator name, or has
/// more positions than `kinds` holds.
pub fn parse<'s>(schema: &'s str, kinds: &mut [ArgKind]) -> Result<Parsed<'s>> {
    let bad = |what| Error::new(ErrorCode::InvalidArgument, what, 0);
    let open = open_paren(schema.as_bytes()).ok_or(bad("schema has no argument list"))?;
    let name = schema.get(..open).unwrap_or("").trim();
    // Byte tests, not `str::contains`: its substring search can panic-link.
    let b = name.as_bytes();
    if !b.windows(2).any(|w| w == b"::") || b.contains(&b' ') {
        return Err(bad("schema has no namespace::name"));
    }
    let args = all_kinds(schema, kinds).ok_or(bad("malformed schema or unknown schema type"))?;
    if args > kinds.len() {
        return Err(bad("schema has too many arguments"));
    }
    Ok(Parsed { name, args })
}

/// Length of the operator name (`namespace::name.overload`).
pub const fn name_len(schema: &str) -> usize {
    match open_paren(schema.as_bytes()) {
        Some(n) => n,
        None => panic!("schema has no argument list"),
    }
}

/// The operator name's bytes; `N` must be [`name_len`].
pub const fn name_bytes<const N: usize>(schema: &str) -> [u8; N] {
    let s = schema.as_bytes();
    let mut out = [0u8; N];
    let mut i = 0;
    while i < N {
        out[i] = s[i];
        i += 1;
    }
    out
}

/// The schema text where host tools want it (`schema-text`), else empty so
/// firmware keeps no strings but names.
pub const fn text(schema: &'static str) -> &'static str {
    if cfg!(feature = "schema-text") {
        schema
    } else {
        ""
    }
}

/// Declares a [`Kernel`](crate::Kernel) from its ExecuTorch schema line and
/// its run function: see the [module documentation](crate::signature).
#[macro_export]
macro_rules! op {
    ($schema:literal, $run:expr $(,)?) => {
        $crate::op!($schema, $run, scratch = 0)
    };
    ($schema:literal, $run:expr, scratch = $scratch:expr $(,)?) => {{
        const NAME: [u8; $crate::signature::name_len($schema)] =
            $crate::signature::name_bytes($schema);
        const ARGS: [$crate::ArgKind; $crate::signature::arg_count($schema)] =
            $crate::signature::arg_kinds($schema);
        $crate::Kernel {
            name: match ::core::str::from_utf8(&NAME) {
                Ok(name) => name,
                Err(_) => panic!("operator name is not UTF-8"),
            },
            args: &ARGS,
            run: $run,
            schema: $crate::signature::text($schema),
            scratch: $scratch,
        }
    }};
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn schema_text_only_with_the_feature() {
        const K: Kernel = op!("x::y(Tensor a) -> ()", nothing);
        assert_eq!(K.name, "x::y");
        assert_eq!(K.args, &[A::Tensor]);
        assert_eq!(K.schema.is_empty(), !cfg!(feature = "schema-text"));
    }
}
