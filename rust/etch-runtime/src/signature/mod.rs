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
//!
//! The same parser checks schemas registered at run time
//! (`etch_register_kernel`), so it accepts exactly ExecuTorch's grammar for
//! the types etch supports: `namespace::name[.overload]` up to the `(`,
//! arguments `Type name[=default]` with distinct names and at most one `*`,
//! ` -> ` and one return type or a parenthesised list (names optional),
//! nothing after. Anything else (unbalanced parentheses, a missing return,
//! trailing text, a duplicate name) is a compile error for `op!` and
//! `InvalidArgument` at run time.

use etch_pte::schema::EValue;
use etch_pte::{Value, ValueKind, Vector};

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

/// Whether `c` may start an identifier (`[A-Za-z_]`).
const fn ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

/// End of the identifier (`[A-Za-z_][A-Za-z0-9_]*`) at `i`; `i` if none.
const fn ident_end(s: &[u8], mut i: usize) -> usize {
    if !ident_start(at(s, i)) {
        return i;
    }
    while i < s.len() && (at(s, i).is_ascii_alphanumeric() || at(s, i) == b'_') {
        i += 1;
    }
    i
}

/// First index at or after `i` that is not a space.
const fn skip_spaces(s: &[u8], mut i: usize) -> usize {
    while at(s, i) == b' ' {
        i += 1;
    }
    i
}

/// Whether `s[from..to]` is `word`.
const fn is_word(s: &[u8], from: usize, to: usize, word: &[u8]) -> bool {
    if to < from || to - from != word.len() {
        return false;
    }
    let mut k = 0;
    while k < word.len() {
        if at(s, from + k) != at(word, k) {
            return false;
        }
        k += 1;
    }
    true
}

/// Whether `s[a..a + len]` and `s[b..b + len]` are equal.
const fn same(s: &[u8], a: usize, b: usize, len: usize) -> bool {
    let mut k = 0;
    while k < len {
        if at(s, a + k) != at(s, b + k) {
            return false;
        }
        k += 1;
    }
    true
}

/// The kind of each schema type etch takes, by base type name, in its four
/// forms: plain, optional (`?`), list (`[]`) and optional list (`[]?`);
/// `None` where etch takes no such form.
const KINDS: [(&[u8], [Option<ArgKind>; 4]); 11] = {
    use ArgKind as A;
    [
        (
            b"Tensor",
            [
                Some(A::Tensor),
                Some(A::OptTensor),
                Some(A::TensorList),
                None,
            ],
        ),
        (
            b"int",
            [
                Some(A::Int),
                Some(A::OptInt),
                Some(A::IntList),
                Some(A::OptIntList),
            ],
        ),
        (
            b"SymInt",
            [
                Some(A::Int),
                Some(A::OptInt),
                Some(A::IntList),
                Some(A::OptIntList),
            ],
        ),
        (
            b"float",
            [
                Some(A::Double),
                Some(A::OptDouble),
                Some(A::DoubleList),
                Some(A::OptDoubleList),
            ],
        ),
        (
            b"bool",
            [Some(A::Bool), Some(A::OptBool), Some(A::BoolList), None],
        ),
        (b"Scalar", [Some(A::Scalar), Some(A::OptScalar), None, None]),
        (
            b"ScalarType",
            [Some(A::ScalarType), Some(A::OptScalarType), None, None],
        ),
        (b"str", [Some(A::String), Some(A::OptString), None, None]),
        // Optional only, serialized as an Int code or None.
        (b"Layout", [None, Some(A::OptInt), None, None]),
        (b"Device", [None, Some(A::OptInt), None, None]),
        (b"MemoryFormat", [None, Some(A::OptInt), None, None]),
    ]
};

/// One schema type at `i`, in ExecuTorch's grammar for the types etch
/// supports: `Base`, `Tensor(a)` / `Tensor(a!)` (alias annotation, tensors
/// only), then `[]` or `[N]` (a list; the length is not checked: PyTorch
/// lets one value stand for all) and `?` (optional), or `Tensor?[]`.
/// Returns its kind, where it ends, and whether it is a mutable tensor
/// list (`Tensor(a!)[]`); `None` for anything else.
const fn parse_type(s: &[u8], i: usize) -> Option<(ArgKind, usize, bool)> {
    let base_end = ident_end(s, i);
    if base_end == i {
        return None; // no type name
    }
    let tensor = is_word(s, i, base_end, b"Tensor");
    let mut j = base_end;
    let mut mutable = false;
    if at(s, j) == b'(' {
        // Alias annotation: `(a)` or `(a!)`, on tensors only.
        let set_end = ident_end(s, j + 1);
        if !tensor || set_end == j + 1 {
            return None;
        }
        j = set_end;
        if at(s, j) == b'!' {
            mutable = true;
            j += 1;
        }
        if at(s, j) != b')' {
            return None;
        }
        j += 1;
    }
    let mut opt_elem = false;
    if at(s, j) == b'?' && at(s, j + 1) == b'[' {
        opt_elem = true; // `Tensor?[]`
        j += 1;
    }
    let mut list = false;
    if at(s, j) == b'[' {
        list = true;
        j += 1;
        while at(s, j).is_ascii_digit() {
            j += 1;
        }
        if at(s, j) != b']' {
            return None;
        }
        j += 1;
    }
    let optional = at(s, j) == b'?';
    if optional {
        j += 1;
    }
    let form = list as usize * 2 + optional as usize;
    let mut t = 0;
    let kind = loop {
        if t == KINDS.len() {
            return None;
        }
        let (word, forms) = KINDS[t];
        if is_word(s, i, base_end, word) {
            match forms[form] {
                Some(kind) => break kind,
                None => return None,
            }
        }
        t += 1;
    };
    // `Tensor?[]`: a list of optional tensors, the one list whose items
    // may be None.
    let kind = match (opt_elem, kind) {
        (false, kind) => kind,
        (true, ArgKind::TensorList) => ArgKind::OptTensorList,
        (true, _) => return None,
    };
    Some((kind, j, mutable && list))
}

/// End of a default value at `i` (`1`, `-1`, `0.01`, `None`, `False`,
/// `[]`, `[1, 2]`, `'none'`): up to the `,` or `)` that ends the argument,
/// brackets and quotes balanced. `None` if it is empty or unbalanced.
const fn default_end(s: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    let mut depth = 0usize;
    while i < s.len() {
        let c = at(s, i);
        if c == b'\'' || c == b'"' {
            i += 1;
            while i < s.len() && at(s, i) != c {
                i += 1;
            }
            if i >= s.len() {
                return None; // unterminated string
            }
        } else if c == b'[' || c == b'(' {
            depth += 1;
        } else if c == b']' || c == b')' {
            if depth == 0 {
                if c == b')' {
                    break;
                }
                return None;
            }
            depth -= 1;
        } else if c == b',' && depth == 0 {
            break;
        }
        i += 1;
    }
    // Trailing spaces are not part of the value.
    let mut end = i;
    while end > from && at(s, end - 1) == b' ' {
        end -= 1;
    }
    if depth != 0 || end == from {
        None
    } else {
        Some(end)
    }
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

/// Most arguments whose names are compared for duplicates.
const MAX_NAMED: usize = 32;

/// Kinds of the whole argument list (arguments, then returns) into `out`;
/// returns how many there are, `None` unless `schema` is, exactly,
/// ExecuTorch's schema grammar for the types etch supports:
/// `ns::name[.overload](Type name[=default], ..., *, ...) -> Returns` with
/// `Returns` one type (optionally named) or a parenthesised list of them,
/// argument names distinct, nothing after the returns.
const fn all_kinds(schema: &str, out: &mut [ArgKind]) -> Option<usize> {
    let s = schema.as_bytes();
    // `namespace::name[.overload]`, then the argument list at once.
    let ns_end = ident_end(s, 0);
    if ns_end == 0 || at(s, ns_end) != b':' || at(s, ns_end + 1) != b':' {
        return None;
    }
    let name_end = ident_end(s, ns_end + 2);
    if name_end == ns_end + 2 {
        return None;
    }
    let mut i = name_end;
    if at(s, i) == b'.' {
        let overload_end = ident_end(s, i + 1);
        if overload_end == i + 1 {
            return None;
        }
        i = overload_end;
    }
    if at(s, i) != b'(' {
        return None;
    }
    i = skip_spaces(s, i + 1);

    // Arguments.
    let mut n = 0;
    let mut out_list = false;
    let mut star = false;
    let mut names = [(0usize, 0usize); MAX_NAMED];
    let mut named = 0;
    if at(s, i) == b')' {
        i += 1;
    } else {
        loop {
            if at(s, i) == b'*' {
                if star {
                    return None; // a second `*`
                }
                star = true;
                i += 1;
            } else {
                let (kind, end, mutable_list) = tri!(parse_type(s, i));
                if n < out.len() {
                    out[n] = kind;
                }
                n += 1;
                out_list |= mutable_list;
                // A space, then the name.
                if at(s, end) != b' ' {
                    return None;
                }
                let from = skip_spaces(s, end);
                let to = ident_end(s, from);
                if to == from {
                    return None; // no argument name
                }
                let mut k = 0;
                while k < named {
                    let (a, len) = names[k];
                    if len == to - from && same(s, a, from, len) {
                        return None; // duplicate argument name
                    }
                    k += 1;
                }
                if named == MAX_NAMED {
                    return None;
                }
                names[named] = (from, to - from);
                named += 1;
                i = skip_spaces(s, to);
                if at(s, i) == b'=' {
                    i = tri!(default_end(s, skip_spaces(s, i + 1)));
                }
            }
            i = skip_spaces(s, i);
            if at(s, i) == b',' {
                i = skip_spaces(s, i + 1);
                if at(s, i) == b')' {
                    return None; // trailing comma
                }
            } else if at(s, i) == b')' {
                i += 1;
                break;
            } else {
                return None;
            }
        }
    }
    if star && at(s, i - 2) == b'*' {
        return None; // `*` with nothing after it
    }

    // ` -> ` and the returns.
    i = skip_spaces(s, i);
    if at(s, i) != b'-' || at(s, i + 1) != b'>' {
        return None;
    }
    i = skip_spaces(s, i + 2);
    if at(s, i) == b'(' {
        // A tuple of values comes back as one list value: the emitter
        // writes `(out, indices)` as a TensorList after the arguments.
        i = skip_spaces(s, i + 1);
        let mut returns = 0;
        let mut first = ArgKind::Tensor;
        if at(s, i) == b')' {
            i += 1;
        } else {
            loop {
                let (kind, end, _) = tri!(parse_type(s, i));
                if returns == 0 {
                    first = kind;
                }
                returns += 1;
                i = skip_spaces(s, end);
                // An optional return name.
                if ident_start(at(s, i)) {
                    if end == i {
                        return None;
                    }
                    i = skip_spaces(s, ident_end(s, i));
                }
                if at(s, i) == b',' {
                    i = skip_spaces(s, i + 1);
                } else if at(s, i) == b')' {
                    i += 1;
                    break;
                } else {
                    return None;
                }
            }
        }
        match returns {
            // `-> ()` with a `Tensor(a!)[] out` argument (split_copy,
            // split_with_sizes_copy, unbind_copy): the emitter writes the
            // functional op's `Tensor[]` result, the out list again, after
            // the arguments (checked against ExecuTorch 1.5.1 exports).
            0 if out_list => {
                if n < out.len() {
                    out[n] = ArgKind::TensorList;
                }
                n += 1;
            }
            0 => {}
            1 => {
                if n < out.len() {
                    out[n] = first;
                }
                n += 1;
            }
            _ => {
                if n < out.len() {
                    out[n] = ArgKind::TensorList;
                }
                n += 1;
            }
        }
    } else {
        let (kind, end, _) = tri!(parse_type(s, i));
        if n < out.len() {
            out[n] = kind;
        }
        n += 1;
        i = skip_spaces(s, end);
        if ident_start(at(s, i)) {
            if end == i {
                return None;
            }
            i = ident_end(s, i);
        }
    }
    // Nothing after the returns.
    if skip_spaces(s, i) != s.len() {
        return None;
    }
    Some(n)
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
    let args = all_kinds(schema, kinds).ok_or(bad("malformed schema or unknown schema type"))?;
    if args > kinds.len() {
        return Err(bad("schema has too many arguments"));
    }
    // `all_kinds` checked `namespace::name[.overload]` runs up to the `(`.
    let open = open_paren(schema.as_bytes()).ok_or(bad("schema has no argument list"))?;
    let name = schema
        .get(..open)
        .ok_or(bad("schema has no argument list"))?;
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

/// Position of the argument called `name` in a kernel call of `schema`
/// (the schema's arguments in order, `out` included, as [`arg_kinds`]
/// counts them). For [`arg!`](crate::arg), which evaluates it at compile
/// time: an argument the schema does not name is a compile error.
pub const fn arg_index(schema: &str, name: &str) -> usize {
    match walk_args(schema.as_bytes(), name.as_bytes()) {
        Some((i, true)) => i,
        _ => panic!("the operator's schema has no argument of this name"),
    }
}

/// Position of the returned value in a kernel call of `schema` (after the
/// arguments: where `executorch_prim` scalar operators write their result).
/// For `arg!(SCHEMA, return)`: a schema returning nothing is a compile error.
pub const fn return_index(schema: &str) -> usize {
    match walk_args(schema.as_bytes(), b"") {
        Some((n, false)) if arg_count(schema) == n + 1 => n,
        _ => panic!("the operator's schema returns no value"),
    }
}

/// Walks the argument list: `(position, true)` of the argument called
/// `name`, or `(number of arguments, false)` if none is; `None` if the
/// schema is malformed.
const fn walk_args(s: &[u8], name: &[u8]) -> Option<(usize, bool)> {
    let mut i = skip_spaces(s, tri!(open_paren(s)) + 1);
    let mut n = 0;
    while at(s, i) != b')' {
        if at(s, i) == b'*' {
            i += 1;
        } else {
            let (_, end, _) = tri!(parse_type(s, i));
            let from = skip_spaces(s, end);
            let to = ident_end(s, from);
            if to == from {
                return None;
            }
            if is_word(s, from, to, name) {
                return Some((n, true));
            }
            n += 1;
            i = skip_spaces(s, to);
            if at(s, i) == b'=' {
                i = tri!(default_end(s, skip_spaces(s, i + 1)));
            }
        }
        i = skip_spaces(s, i);
        if at(s, i) == b',' {
            i = skip_spaces(s, i + 1);
        } else if at(s, i) != b')' {
            return None;
        }
    }
    Some((n, false))
}

/// The position of a kernel's argument, by its name in the operator's
/// schema, computed at compile time (no code, no flash): `arg!(SCHEMA, eps)`
/// is `6` for `_native_batch_norm_legit_no_training.out`, and a name the
/// schema does not have is a compile error. `arg!(SCHEMA, [input, out])`
/// gives several at once, in the order written (for
/// [`KernelContext::io`](crate::KernelContext::io)); `arg!(SCHEMA, return)`
/// is the position of the returned value.
///
/// Inside [`op!`](crate::op)'s run expression the kernel's own schema is
/// `SCHEMA`; a function called by several kernels is given their positions,
/// or names the schema line as a `const` of its own.
///
/// ```
/// use etch_runtime::{arg, op, Kernel};
/// const LAYER_NORM: &str = "aten::native_layer_norm.out(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2) -> (Tensor(a!), Tensor(b!), Tensor(c!))";
/// assert_eq!(arg!(LAYER_NORM, eps), 4);
/// assert_eq!(arg!(LAYER_NORM, [input, weight, out0]), [0, 2, 5]);
/// assert_eq!(arg!("aten::sym_size.int(Tensor self, int dim) -> SymInt", return), 2);
/// const K: Kernel = op!(
///     "aten::tanh.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
///     |ctx| {
///         let ([_x], [_out]) = ctx.io(arg!(SCHEMA, [self]), arg!(SCHEMA, [out]))?;
///         Ok(())
///     }
/// );
/// ```
///
/// ```compile_fail
/// const S: &str = "aten::tanh.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)";
/// let _ = etch_runtime::arg!(S, input); // no argument `input`
/// ```
#[macro_export]
macro_rules! arg {
    ($schema:expr, return) => {
        const { $crate::signature::return_index($schema) }
    };
    ($schema:expr, [$($name:ident),* $(,)?]) => {
        [$($crate::arg!($schema, $name)),*]
    };
    ($schema:expr, $name:ident) => {
        const { $crate::signature::arg_index($schema, ::core::stringify!($name)) }
    };
}

/// Declares a [`Kernel`](crate::Kernel) from its ExecuTorch schema line and
/// its run function: see the [module documentation](crate::signature).
#[macro_export]
macro_rules! op {
    ($schema:expr, $run:expr $(,)?) => {
        $crate::op!($schema, $run, scratch = 0)
    };
    ($schema:expr, $run:expr, scratch = $scratch:expr $(,)?) => {{
        // The schema line, for `arg!(SCHEMA, name)` in `$run`.
        #[allow(dead_code)]
        const SCHEMA: &str = $schema;
        const NAME: [u8; $crate::signature::name_len(SCHEMA)] =
            $crate::signature::name_bytes(SCHEMA);
        const ARGS: [$crate::ArgKind; $crate::signature::arg_count(SCHEMA)] =
            $crate::signature::arg_kinds(SCHEMA);
        $crate::Kernel {
            name: match ::core::str::from_utf8(&NAME) {
                Ok(name) => name,
                Err(_) => panic!("operator name is not UTF-8"),
            },
            args: &ARGS,
            run: $run,
            schema: $crate::signature::text(SCHEMA),
            scratch: $scratch,
        }
    }};
}

/// Checks a kernel call's argument count and kinds against the kernel's schema.
pub(crate) fn check_schema(
    values: &Vector<'_, EValue<'_>>,
    args: Vector<'_, i32>,
    schema: &[ArgKind],
    index: usize,
) -> Result<()> {
    let mismatch = Error::new(
        ErrorCode::InvalidProgram,
        "kernel call does not match the operator schema (at = instruction)",
        index as u32,
    );
    if args.len() != schema.len() {
        etch_log!(
            error,
            "instruction {}: {} arguments, schema has {}",
            index,
            args.len(),
            schema.len()
        );
        return Err(mismatch);
    }
    for (a, kind) in args.iter().zip(schema) {
        let v = usize::try_from(a?).map_err(|_| mismatch)?;
        // Decoded by the out-of-line `value_of` (load decoded every value
        // before this walk, so it fails as the tag read would: only for an
        // index out of range); its variant is its kind.
        let actual = match crate::values::value_of(values, v)? {
            Value::Null => ValueKind::Null,
            Value::Int(_) => ValueKind::Int,
            Value::Bool(_) => ValueKind::Bool,
            Value::Double(_) => ValueKind::Double,
            Value::Tensor(_) => ValueKind::Tensor,
            Value::String(_) => ValueKind::String,
            Value::IntList(_) => ValueKind::IntList,
            Value::DoubleList(_) => ValueKind::DoubleList,
            Value::BoolList(_) => ValueKind::BoolList,
            Value::TensorList(_) => ValueKind::TensorList,
            Value::OptionalTensorList(_) => ValueKind::OptionalTensorList,
        };
        if !kind.accepts(actual) {
            etch_log!(
                error,
                "instruction {}: argument of kind {} where {:?} expected",
                index,
                actual.name(),
                kind
            );
            return Err(mismatch);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
