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
//! (a tuple of several comes back as one `TensorList`; `-> ()` adds nothing),
//! which is how ExecuTorch's emitter lays out a `KernelCall`. Only the name
//! reaches flash; the schema text itself is kept (in [`Kernel::schema`]) only
//! with the `schema-text` feature, for host tools. A type the parser does not
//! know is a compile error, so a schema is never silently mis-declared.

use crate::ArgKind;

/// The kind of one schema type (`Tensor(a!)`, `int[2]`, `Scalar?`, ...).
const fn kind_of(ty: &[u8]) -> ArgKind {
    // Drop the alias annotation: `Tensor(a!)` → `Tensor`, `Tensor(a!)[]` → `Tensor[]`.
    let mut base = [0u8; 32];
    let mut len = 0;
    let mut i = 0;
    let mut depth = 0;
    while i < ty.len() {
        let c = ty[i];
        if c == b'(' {
            depth += 1;
        } else if c == b')' {
            depth -= 1;
        } else if depth == 0 {
            if len == base.len() {
                panic!("schema type too long");
            }
            base[len] = c;
            len += 1;
        }
        i += 1;
    }
    let optional = len > 0 && base[len - 1] == b'?';
    if optional {
        len -= 1;
    }
    // `int[2]`, `SymInt[]`: a list; the length is not checked (PyTorch lets
    // one value stand for all).
    let mut list = false;
    let mut elem = len;
    let mut k = 0;
    while k < len {
        if base[k] == b'[' {
            list = true;
            elem = k;
            break;
        }
        k += 1;
    }
    let (b, n) = (&base, elem);
    use ArgKind as A;
    match (list, optional) {
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
                panic!("unknown schema type")
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
                panic!("unknown optional schema type")
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
                panic!("unknown list schema type")
            }
        }
        (true, true) => {
            if eq(b, n, b"int") || eq(b, n, b"SymInt") {
                A::OptIntList
            } else if eq(b, n, b"float") {
                A::OptDoubleList
            } else {
                panic!("unknown optional list schema type")
            }
        }
    }
}

const fn eq(buf: &[u8; 32], len: usize, word: &[u8]) -> bool {
    if len != word.len() {
        return false;
    }
    let mut i = 0;
    while i < len {
        if buf[i] != word[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Index of the `(` that opens the argument list.
const fn open_paren(s: &[u8]) -> usize {
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'(' {
            return i;
        }
        i += 1;
    }
    panic!("schema has no argument list")
}

/// Index of the `)` matching the `(` at `open`.
const fn close_paren(s: &[u8], open: usize) -> usize {
    let mut depth = 0;
    let mut i = open;
    while i < s.len() {
        if s[i] == b'(' {
            depth += 1;
        } else if s[i] == b')' {
            depth -= 1;
            if depth == 0 {
                return i;
            }
        }
        i += 1;
    }
    panic!("unbalanced schema parentheses")
}

/// Walks the types of a comma-separated list `s[from..to]` (each item
/// `Type name=default` or just `Type`; `*` is skipped), calling back with
/// each type's byte range. Written as a const "iterator": returns the
/// number of types and fills `out` with their kinds while there is room.
const fn list_kinds(s: &[u8], from: usize, to: usize, out: &mut [ArgKind], mut n: usize) -> usize {
    let mut i = from;
    while i < to {
        while i < to && (s[i] == b' ' || s[i] == b',') {
            i += 1;
        }
        if i >= to {
            break;
        }
        // The type runs to the first space at parenthesis depth 0.
        let start = i;
        let mut depth = 0;
        while i < to && !(depth == 0 && (s[i] == b' ' || s[i] == b',')) {
            if s[i] == b'(' {
                depth += 1;
            } else if s[i] == b')' {
                depth -= 1;
            }
            i += 1;
        }
        let ty = s.split_at(i).0.split_at(start).1;
        if !(ty.len() == 1 && ty[0] == b'*') {
            if n < out.len() {
                out[n] = kind_of(ty);
            }
            n += 1;
        }
        // Skip the name and default value up to the next comma at depth 0.
        let mut depth = 0;
        while i < to && !(depth == 0 && s[i] == b',') {
            if s[i] == b'(' || s[i] == b'[' {
                depth += 1;
            } else if s[i] == b')' || s[i] == b']' {
                depth -= 1;
            }
            i += 1;
        }
    }
    n
}

/// Kinds of the whole argument list (arguments, then returns) into `out`;
/// returns how many there are.
const fn all_kinds(schema: &str, out: &mut [ArgKind]) -> usize {
    let s = schema.as_bytes();
    let open = open_paren(s);
    let close = close_paren(s, open);
    let n = list_kinds(s, open + 1, close, out, 0);
    // Returns: `-> ()`, `-> Tensor(a!)`, `-> (Tensor(a!) a, Tensor(b!) b)`.
    let mut i = close + 1;
    while i + 1 < s.len() && !(s[i] == b'-' && s[i + 1] == b'>') {
        i += 1;
    }
    if i + 1 >= s.len() {
        panic!("schema has no `->` return")
    }
    i += 2;
    while i < s.len() && s[i] == b' ' {
        i += 1;
    }
    if i < s.len() && s[i] == b'(' {
        // A tuple of values comes back as one list value: the emitter writes
        // `(out, indices)` as a TensorList after the arguments.
        let close = close_paren(s, i);
        let mut scratch: [ArgKind; 0] = [];
        match list_kinds(s, i + 1, close, &mut scratch, 0) {
            0 => n,
            1 => list_kinds(s, i + 1, close, out, n),
            _ => {
                if n < out.len() {
                    out[n] = ArgKind::TensorList;
                }
                n + 1
            }
        }
    } else {
        list_kinds(s, i, s.len(), out, n)
    }
}

/// Number of positions in a kernel call of `schema` (arguments and returns).
pub const fn arg_count(schema: &str) -> usize {
    let mut scratch: [ArgKind; 0] = [];
    all_kinds(schema, &mut scratch)
}

/// The kinds of a kernel call of `schema`; `N` must be [`arg_count`].
pub const fn arg_kinds<const N: usize>(schema: &str) -> [ArgKind; N] {
    let mut out = [ArgKind::Tensor; N];
    if all_kinds(schema, &mut out) != N {
        panic!("arg_kinds: N is not arg_count(schema)");
    }
    out
}

/// Length of the operator name (`namespace::name.overload`).
pub const fn name_len(schema: &str) -> usize {
    open_paren(schema.as_bytes())
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
    ($schema:literal, $run:expr $(,)?) => {{
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
        assert_eq!(S.args, &[A::Tensor, A::IntList, A::Int, A::TensorList]);
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
    fn schema_text_only_with_the_feature() {
        const K: Kernel = op!("x::y(Tensor a) -> ()", nothing);
        assert_eq!(K.name, "x::y");
        assert_eq!(K.args, &[A::Tensor]);
        assert_eq!(K.schema.is_empty(), !cfg!(feature = "schema-text"));
    }
}
