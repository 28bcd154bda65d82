//! Kernel calls decoded once, at `Method::load`: each call's arguments as
//! words of the method state, so that a kernel's argument reads and tensor
//! views do not walk the program's tables again on every `execute`.
//!
//! ```text
//! [u32; instructions]   per instruction: the word where its call's table
//!                       starts (0: none, every argument read from the file)
//! per kernel call:      a header (argument count | operator index << 8),
//!                       the position of its argument vector in the program,
//!                       one entry per argument, then the entries' extra words
//! ```
//!
//! With the header, `execute` runs a decoded call without decoding the
//! instruction from the program again.
//!
//! An entry is a tag (low 4 bits) and a payload:
//!
//! | tag | argument | payload / extra words |
//! |---|---|---|
//! | `SLOW` (0) | anything else | read from the program as before |
//! | `NULL` | None | |
//! | `INT` | Int in 28 bits | the value, signed |
//! | `WIDE` | Int | offset of two words (low, high) |
//! | `DOUBLE` | Double | offset of two words (the bits) |
//! | `BOOL` | Bool | 0 or 1 |
//! | `PAIR` | `int[]` of at most 2 Ints in 13 bits | length (2 bits), the items (13 bits each, signed) |
//! | `LIST` | `int[]` of at most 16 Ints | offset of `[len, item entries..]` |
//! | `TENSOR` | static tensor | dtype (5 bits), rank (5), dim order (2), offset (16) of `[sizes, data, bytes, (dim order)]` |
//!
//! Offsets count words from the call's header. A tensor's words are the
//! file position of its sizes (checked at load with
//! `Shape::from_serialized`), where its bytes are (memory index + 1, 0 for
//! a constant, in the low 4 bits; the byte offset in the planned buffer,
//! or of the constant data in the file, above), its byte size (sizes times
//! element size, multiplied once here rather than on every call) and, for a
//! dim order other than contiguous (0) or channels-last (1), the file
//! position of the dim order (2).
//!
//! What is not fixed at load stays `SLOW`: values written at run time
//! (scalars with a run-time slot, views), bounded dynamic tensors, lists
//! with a run-time item, positions that do not fit. How many words a call
//! takes depends only on its arguments' kinds, list lengths and Int
//! magnitudes ([`encode`] counts and fills with the same code), so
//! `MethodMeta::method_state_bytes` states it exactly before load. A call
//! with more than 255 arguments, an operator index of 2^24 or more, or an
//! argument vector past 4 GiB has no table (0 words): `execute` decodes it
//! from the program as before.
//!
//! Every read at run time stays bounds-checked (`get`): the table lives in
//! caller-owned memory, so a corrupted one gives wrong values or errors,
//! never an out-of-bounds access.

// Without `decoded-calls` only `Call::NONE` and its (constant) reads are used.
#![cfg_attr(not(feature = "decoded-calls"), allow(dead_code))]

use etch_pte::schema::EValue;
use etch_pte::tensor::MAX_RANK;
use etch_pte::{PteFile, Value, Vector};

use crate::overrides::{Overrides, UNSET};
use crate::tensor::Shape;
use crate::values::{bad_arg, place, Loc};
use crate::{Result, ScalarType};

pub(crate) const SLOW: u32 = 0;
pub(crate) const NULL: u32 = 1;
pub(crate) const INT: u32 = 2;
pub(crate) const WIDE: u32 = 3;
pub(crate) const DOUBLE: u32 = 4;
pub(crate) const BOOL: u32 = 5;
pub(crate) const LIST: u32 = 6;
pub(crate) const TENSOR: u32 = 7;
pub(crate) const PAIR: u32 = 8;

/// Largest offset a `TENSOR` entry holds (16 bits).
const TENSOR_OFFSET_MAX: usize = (1 << 16) - 1;
/// Dim order `[0, 2, 3, 1]`: a rank-4 tensor stored channels-last.
const CHANNELS_LAST: [u8; 4] = [0, 2, 3, 1];
/// Largest value a 28-bit payload holds.
const PAYLOAD_MAX: usize = (1 << 28) - 1;

/// What filling needs besides the program: the file (positions are into
/// its bytes) and the run-time value slots (such values stay `SLOW`).
pub(crate) struct Env<'e, 'a> {
    pub file: PteFile<'a>,
    pub overrides: Overrides<'e>,
}

/// Writes entries and extra words of one call into `out` (nothing when
/// counting: `out` empty), counting the words.
struct Sink<'o> {
    out: &'o mut [u32],
    len: usize,
}

impl Sink<'_> {
    fn set(&mut self, at: usize, word: u32) {
        if let Some(w) = self.out.get_mut(at) {
            *w = word;
        }
    }
    /// Reserves `n` extra words; their offset.
    fn reserve(&mut self, n: usize) -> usize {
        let at = self.len;
        self.len = self.len.saturating_add(n);
        at
    }
}

/// Words before a call's entries: its header and argument vector position.
pub(crate) const HEAD: usize = 2;

/// The call table of a kernel call of operator `op_index` with arguments
/// `args` into `out` (from its first word; `out` empty: count only);
/// returns its words (0: no table). `env` is `None` when counting: the
/// words do not depend on it.
pub(crate) fn encode(
    values: &Vector<'_, EValue<'_>>,
    op_index: u32,
    args: Vector<'_, i32>,
    env: Option<&Env<'_, '_>>,
    out: &mut [u32],
) -> usize {
    let n = args.len();
    let Ok(args_at) = u32::try_from(args.position().wrapping_sub(4)) else {
        return 0;
    };
    if n == 0 || n > 255 || op_index >= 1 << 24 || args.position() < 4 {
        return 0;
    }
    let mut sink = Sink { out, len: HEAD + n };
    sink.set(0, n as u32 | op_index << 8);
    sink.set(1, args_at);
    // The last argument (the return value) is usually the `out` argument
    // again: the same value shares its entry and words.
    let last = args.get(n - 1).ok();
    let mut same = None;
    for (k, a) in args.iter().enumerate() {
        let a = a.ok();
        if k == n - 1 {
            if let Some(e) = same {
                sink.set(HEAD + k, e);
                break;
            }
        }
        let entry = match a.and_then(|v| usize::try_from(v).ok()) {
            Some(v) => encode_value(values, v, env, &mut sink),
            None => SLOW,
        };
        if a.is_some() && a == last && same.is_none() && k + 1 < n {
            same = Some(entry);
        }
        sink.set(HEAD + k, entry);
    }
    sink.len
}

/// Whether value `v` is written at run time (then it stays `SLOW`); when
/// counting, `false` (the words do not depend on it).
fn written(env: Option<&Env<'_, '_>>, v: usize) -> bool {
    env.is_some_and(|e| e.overrides.get(v).is_some())
}

fn encode_value(
    values: &Vector<'_, EValue<'_>>,
    v: usize,
    env: Option<&Env<'_, '_>>,
    sink: &mut Sink<'_>,
) -> u32 {
    let Ok(value) = crate::values::value_of(values, v) else {
        return SLOW;
    };
    match value {
        Value::Null => NULL,
        Value::Int(x) => {
            let e = encode_int(x, sink);
            if written(env, v) {
                SLOW
            } else {
                e
            }
        }
        Value::Double(x) => {
            let at = sink.reserve(2);
            let bits = x.to_bits();
            sink.set(at, bits as u32);
            sink.set(at + 1, (bits >> 32) as u32);
            if written(env, v) || at > PAYLOAD_MAX {
                SLOW
            } else {
                DOUBLE | (at as u32) << 4
            }
        }
        Value::Bool(b) if !written(env, v) => BOOL | (b as u32) << 4,
        Value::IntList(items) if items.len() <= 2 && small_items(values, items).is_some() => {
            let Some((a, b)) = small_items(values, items) else {
                return SLOW;
            };
            let item_written = items.iter().any(|i| {
                let i = i.ok().and_then(|i| usize::try_from(i).ok());
                i.is_none_or(|i| written(env, i))
            });
            if item_written {
                SLOW
            } else {
                PAIR | (items.len() as u32) << 4 | (a as u32 & 0x1fff) << 6 | (b as u32) << 19
            }
        }
        Value::IntList(items) if items.len() <= MAX_RANK => {
            let at = sink.reserve(1 + items.len());
            sink.set(at, items.len() as u32);
            let mut fast = at <= PAYLOAD_MAX;
            for (k, item) in items.iter().enumerate() {
                let item = item.ok().and_then(|i| usize::try_from(i).ok());
                let e = match item.map(|i| (i, crate::values::value_of(values, i))) {
                    Some((i, Ok(Value::Int(x)))) if !written(env, i) => encode_int(x, sink),
                    Some((_, Ok(Value::Int(x)))) => {
                        encode_int(x, sink);
                        SLOW
                    }
                    _ => SLOW,
                };
                fast &= e != SLOW;
                sink.set(at + 1 + k, e);
            }
            if fast {
                LIST | (at as u32) << 4
            } else {
                SLOW
            }
        }
        Value::Tensor(t) => {
            // Three words, four with a dim order of its own: what the file
            // says, so counting and filling agree.
            let order = dim_order_class(&t);
            let at = sink.reserve(if order == 2 { 4 } else { 3 });
            let Some(env) = env else {
                return SLOW;
            };
            match tensor_words(values, &t, v, env) {
                Some((head, words)) if at <= TENSOR_OFFSET_MAX => {
                    for (k, w) in words
                        .into_iter()
                        .take(3 + (order == 2) as usize)
                        .enumerate()
                    {
                        sink.set(at + k, w);
                    }
                    TENSOR | head | order << 14 | (at as u32) << 16
                }
                _ => SLOW,
            }
        }
        _ => SLOW,
    }
}

/// The items of an `int[]` of at most two Ints that fit 13 bits (signed),
/// the second 0 when absent.
fn small_items(values: &Vector<'_, EValue<'_>>, items: Vector<'_, i64>) -> Option<(i64, i64)> {
    let mut out = [0i64; 2];
    for (slot, item) in out.iter_mut().zip(items.iter()) {
        let i = usize::try_from(item.ok()?).ok()?;
        match crate::values::value_of(values, i).ok()? {
            Value::Int(x) if (-(1 << 12)..(1 << 12)).contains(&x) => *slot = x,
            _ => return None,
        }
    }
    Some((out[0], out[1]))
}

/// A tensor's dim order: 0 contiguous, 1 channels-last (rank 4), 2 any
/// other (a word of its own); 2 when unreadable too.
fn dim_order_class(t: &etch_pte::schema::Tensor<'_>) -> u32 {
    match t.dim_order_bytes() {
        Ok(d) if crate::tensor::CONTIGUOUS.get(..d.len()) == Some(d) => 0,
        Ok(d) if d == CHANNELS_LAST => 1,
        _ => 2,
    }
}

/// An Int entry: inline in 28 bits, else in two extra words.
fn encode_int(x: i64, sink: &mut Sink<'_>) -> u32 {
    if (-(1 << 27)..(1 << 27)).contains(&x) {
        return INT | (x as u32) << 4;
    }
    let at = sink.reserve(2);
    sink.set(at, x as u32);
    sink.set(at + 1, (x as u64 >> 32) as u32);
    if at > PAYLOAD_MAX {
        SLOW
    } else {
        WIDE | (at as u32) << 4
    }
}

/// Position of `part` in `data`, if it is a part of it.
fn position(data: &[u8], part: &[u8]) -> Option<u32> {
    let p = (part.as_ptr() as usize).wrapping_sub(data.as_ptr() as usize);
    let same = data.get(p..p.checked_add(part.len())?)?.as_ptr() == part.as_ptr();
    same.then_some(u32::try_from(p).ok()?)
}

/// A static tensor's entry bits (dtype, rank) and words (sizes, data,
/// bytes, dim order), or `None` (it
/// stays `SLOW`): a view or bounded dynamic tensor, or one whose shape,
/// size or data `execute` would reject (it reports that as before).
/// Resolved as `execute` resolves it (`resolve_tensor`: the shape checked
/// by `Shape::from_serialized`, the byte size, the data's place), once.
fn tensor_words(
    values: &Vector<'_, EValue<'_>>,
    t: &etch_pte::schema::Tensor<'_>,
    v: usize,
    env: &Env<'_, '_>,
) -> Option<(u32, [u32; 4])> {
    if env.overrides.get(v).is_some() || t.shape_dynamism().ok()? != etch_pte::ShapeDynamism::Static
    {
        return None;
    }
    let r = resolve_tensor(&env.file, *values, env.overrides, &[], v).ok()?;
    r.dtype.element_size()?;
    if !(0..32).contains(&r.dtype.0) {
        return None;
    }
    let data = env.file.data();
    let loc = match r.loc {
        Loc::Planned { memory, offset } if memory < 15 && offset <= PAYLOAD_MAX => {
            (offset as u32) << 4 | (memory as u32 + 1)
        }
        Loc::Constant(bytes) => match position(data, bytes)? {
            p if p as usize <= PAYLOAD_MAX => p << 4,
            _ => return None,
        },
        _ => return None,
    };
    let sizes = r.shape.sizes_bytes();
    let sizes = position(data, sizes.as_flattened())?;
    let dim_order = position(data, r.shape.dim_order())?;
    let nbytes = u32::try_from(r.nbytes).ok()?;
    let head = (r.dtype.0 as u32) << 4 | (r.shape.rank() as u32) << 9;
    Some((head, [sizes, loc, nbytes, dim_order]))
}

/// A decoded call table: the entries and extra words of one kernel call.
#[derive(Clone, Copy)]
pub(crate) struct Call<'c> {
    /// From the call's header to the end of the method's table.
    pub words: &'c [u32],
    /// Number of arguments (entries).
    pub args: usize,
}

impl<'c> Call<'c> {
    pub(crate) const NONE: Call<'static> = Call {
        words: &[],
        args: 0,
    };

    /// The table starting at `words` (its header first).
    #[inline]
    pub(crate) fn at(words: &'c [u32]) -> Call<'c> {
        let args = words.first().map_or(0, |h| (h & 255) as usize);
        Call { words, args }
    }

    /// The operator index and the position of the argument vector.
    #[inline]
    pub(crate) fn head(&self) -> Option<(u32, usize)> {
        if !cfg!(feature = "decoded-calls") {
            return None;
        }
        self.words
            .first_chunk::<2>()
            .map(|&[h, at]| (h >> 8, at as usize))
    }

    /// Argument `i`'s entry (`SLOW` past the arguments or without a table).
    #[inline(always)]
    pub(crate) fn entry(&self, i: usize) -> u32 {
        if !cfg!(feature = "decoded-calls") || i >= self.args {
            return SLOW;
        }
        self.words.get(HEAD + i).copied().unwrap_or(SLOW)
    }

    /// The two extra words at `at` as 64 bits.
    #[inline]
    pub(crate) fn wide(&self, at: usize) -> Option<u64> {
        self.words
            .get(at..)?
            .first_chunk::<2>()
            .map(|&[lo, hi]| (hi as u64) << 32 | lo as u64)
    }

    /// An Int entry's value (`INT` or `WIDE`).
    #[inline]
    pub(crate) fn int(&self, e: u32) -> Option<i64> {
        match e & 15 {
            INT => Some(((e as i32) >> 4) as i64),
            WIDE => self.wide((e >> 4) as usize).map(|x| x as i64),
            _ => None,
        }
    }

    /// A `LIST` entry's item entries.
    #[inline]
    fn list_words(&self, e: u32) -> Option<&'c [u32]> {
        if e & 15 != LIST {
            return None;
        }
        let at = (e >> 4) as usize;
        let len = *self.words.get(at)? as usize;
        self.words.get(at + 1..)?.get(..len)
    }

    /// The length of a `PAIR` or `LIST` entry's list (`None`: another entry).
    #[inline]
    pub(crate) fn list_len(&self, e: u32) -> Option<usize> {
        if e & 15 == PAIR {
            return Some(((e >> 4) & 3) as usize);
        }
        self.list_words(e).map(|w| w.len())
    }

    /// Item `k` of a `PAIR` or `LIST` entry's list (`None` past its end, or
    /// for another entry). Out of line: one copy for the list readers.
    #[inline(never)]
    pub(crate) fn list_item(&self, e: u32, k: usize) -> Option<i64> {
        if e & 15 == PAIR {
            if k >= ((e >> 4) & 3) as usize {
                return None;
            }
            // Sign-extended from 13 bits: item 0 at bit 6, item 1 at bit 19.
            let shift = if k == 0 { 13 } else { 0 };
            return Some((((e << shift) as i32) >> 19) as i64);
        }
        self.int(*self.list_words(e)?.get(k)?)
    }

    /// Where a `TENSOR` entry's bytes are without decoding it: 0 for a
    /// constant, the planned buffer's index + 1 (`None`: another entry, or
    /// a table that does not read back).
    #[inline]
    pub(crate) fn tensor_memory(&self, e: u32) -> Option<u32> {
        if e & 15 != TENSOR {
            return None;
        }
        self.words.get((e >> 16) as usize + 1).map(|loc| loc & 15)
    }

    /// A `TENSOR` entry: dtype, shape and where its bytes are (`None` for
    /// any other entry, or words that do not read back: a corrupted table).
    #[inline]
    pub(crate) fn tensor<'a: 'c>(&self, e: u32, data: &'a [u8]) -> Option<Resolved<'c>> {
        if e & 15 != TENSOR {
            return None;
        }
        let dtype = ScalarType(((e >> 4) & 31) as i8);
        let rank = ((e >> 9) & 31) as usize;
        let at = (e >> 16) as usize;
        let &[sizes, loc, nbytes] = self.words.get(at..)?.first_chunk::<3>()?;
        let sizes = data
            .get(sizes as usize..)?
            .get(..rank * 4)?
            .as_chunks::<4>()
            .0;
        let dim_order = match (e >> 14) & 3 {
            0 => crate::tensor::CONTIGUOUS.get(..rank)?,
            1 => &CHANNELS_LAST,
            _ => {
                let p = *self.words.get(at + 3)? as usize;
                data.get(p..)?.get(..rank)?
            }
        };
        let shape = Shape::loaded(sizes, dim_order)?;
        // As load multiplied it (a table scribbled over may give a byte size
        // other than the shape's: wrong values or a kernel's length error,
        // never an out-of-bounds read: the bytes are bounds-checked below
        // and by `io`).
        let nbytes = nbytes as usize;
        let offset = (loc >> 4) as usize;
        let loc = match loc & 15 {
            0 => Loc::Constant(data.get(offset..)?.get(..nbytes)?),
            m => Loc::Planned {
                memory: m as usize - 1,
                offset,
            },
        };
        Some(Resolved {
            dtype,
            shape,
            nbytes,
            loc,
        })
    }
}

/// A tensor argument as [`resolve_tensor`] finds it.
#[derive(Clone, Copy)]
pub(crate) struct Resolved<'a> {
    pub dtype: ScalarType,
    pub shape: Shape<'a>,
    pub nbytes: usize,
    pub loc: Loc<'a>,
}

/// Where tensor value `v` is and what it looks like. A free function over
/// the context's fields, so `io` can resolve while it holds the planned
/// buffers (`context`), and load decodes calls with it.
pub(crate) fn resolve_tensor<'a: 's, 's>(
    file: &PteFile<'a>,
    values: Vector<'a, EValue<'a>>,
    overrides: Overrides<'_>,
    dims: &'s [u8],
    v: usize,
) -> Result<Resolved<'s>> {
    let i = v;
    let Value::Tensor(t) = values.get(v)?.value()? else {
        return Err(bad_arg("value is not a Tensor", i));
    };
    let dtype = t.scalar_type()?;
    let (shape, nbytes) = if cfg!(feature = "dynamic") {
        crate::dims::current(&t, dims, v)?
    } else {
        (Shape::from_serialized(&t)?, etch_pte::tensor::nbytes(&t)?)
    };
    // A view's bytes are its source's.
    let source = match overrides.get(v) {
        Some(UNSET) => return Err(bad_arg("view read before it was set", i)),
        Some(p) => match values.get(p as usize)?.value()? {
            Value::Tensor(src) => src,
            _ => return Err(bad_arg("view source is not a Tensor", i)),
        },
        None => t,
    };
    let loc = place(file, &source, nbytes, i as u32)?;
    Ok(Resolved {
        dtype,
        shape,
        nbytes,
        loc,
    })
}

#[cfg(test)]
// The read-back test needs the tables (`decoded-calls`); the garbage test
// runs either way.
#[cfg_attr(not(feature = "decoded-calls"), allow(unused_imports, dead_code))]
mod tests {
    extern crate std;
    use super::*;
    use crate::meta::MethodMeta;
    use crate::state::{instruction, Cursor};
    use crate::Program;
    use etch_pte::{InstructionArgs, PteFile};
    use std::path::Path;
    use std::vec;
    use std::vec::Vec;

    /// Every kernel call of every committed program (fixtures, operator
    /// tests, zoo, programs, the benchmark's MLPerf Tiny models) decodes
    /// back to exactly what the program says: each Int, Double, Bool and
    /// None, each list item, each static tensor's dtype, shape, byte size
    /// and place; the header names the call's operator and argument vector;
    /// counting and filling agree on the words. What stays `SLOW` is only
    /// what the table leaves to the program (other kinds, bounded dynamic
    /// tensors, tensors without data).
    #[test]
    #[cfg(feature = "decoded-calls")]
    fn decoded_calls_read_back_as_the_program() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let (mut calls, mut fast, mut tensors) = (0, 0, 0);
        for dir in [
            "tests/fixtures",
            "tests/ops",
            "tests/zoo",
            "tests/programs",
            "bench/models",
        ] {
            for e in std::fs::read_dir(root.join(dir)).unwrap() {
                let p = e.unwrap().path();
                if p.extension().is_none_or(|x| x != "pte") {
                    continue;
                }
                let bytes = std::fs::read(&p).unwrap();
                // 16-byte aligned, as a program in flash is.
                let mut words = vec![0u128; bytes.len().div_ceil(16)];
                bytemuck::cast_slice_mut::<u128, u8>(&mut words)[..bytes.len()]
                    .copy_from_slice(&bytes);
                let bytes = &bytemuck::cast_slice::<u128, u8>(&words)[..bytes.len()];
                let file = PteFile::new_checked(bytes).unwrap();
                let program = Program::from_file(file);
                for m in 0..program.num_methods().unwrap() {
                    let meta = program
                        .method_meta(program.method_name(m).unwrap())
                        .unwrap();
                    let (c, f, t) = check_method(&meta);
                    calls += c;
                    fast += f;
                    tensors += t;
                }
            }
        }
        std::eprintln!("{calls} calls, {fast} decoded arguments, {tensors} tensors");
        assert!(
            calls > 1000 && tensors > 2000,
            "{calls} calls, {tensors} tensors"
        );
    }

    /// (calls, decoded arguments, decoded tensors) of one method.
    #[cfg(feature = "decoded-calls")]
    fn check_method(meta: &MethodMeta<'_>) -> (usize, usize, usize) {
        let plan = meta.plan;
        let values = plan.values().unwrap();
        let env = Env {
            file: meta.file(),
            overrides: Overrides::none(),
        };
        let (mut calls, mut fast, mut tensors) = (0, 0, 0);
        let n = meta.num_instructions().unwrap();
        let mut at = Cursor::default();
        for i in 0..n {
            let f = instruction(&plan, i, &mut at).unwrap();
            let InstructionArgs::KernelCall { op_index, args } = f.instr else {
                continue;
            };
            let words = encode(&values, op_index as u32, args, None, &mut []);
            let mut table = vec![0u32; words];
            assert_eq!(
                encode(&values, op_index as u32, args, Some(&env), &mut table),
                words
            );
            if words == 0 {
                continue;
            }
            calls += 1;
            let call = Call::at(&table);
            assert_eq!(call.args, args.len());
            assert_eq!(call.head(), Some((op_index as u32, args.position() - 4)));
            for k in 0..args.len() {
                let e = call.entry(k);
                let v = args.get(k).unwrap() as usize;
                let value = crate::values::value_of(&values, v).unwrap();
                fast += (e != SLOW) as usize;
                match (e & 15, value) {
                    (NULL, Value::Null) => {}
                    (INT | WIDE, Value::Int(x)) => assert_eq!(call.int(e), Some(x)),
                    (DOUBLE, Value::Double(x)) => {
                        assert_eq!(call.wide((e >> 4) as usize), Some(x.to_bits()))
                    }
                    (BOOL, Value::Bool(b)) => assert_eq!(e >> 4, b as u32),
                    (LIST | PAIR, Value::IntList(items)) => {
                        assert_eq!(call.list_len(e), Some(items.len()));
                        for (k, item) in items.iter().enumerate() {
                            let item = item.unwrap() as usize;
                            let Ok(Value::Int(x)) = crate::values::value_of(&values, item) else {
                                panic!("list item {item} is not an Int");
                            };
                            assert_eq!(call.list_item(e, k), Some(x));
                        }
                        assert_eq!(call.list_item(e, items.len()), None);
                    }
                    (TENSOR, Value::Tensor(t)) => {
                        tensors += 1;
                        let r = call.tensor(e, meta.data).unwrap();
                        assert_eq!(r.dtype, t.scalar_type().unwrap());
                        assert!(r.shape == Shape::from_serialized(&t).unwrap());
                        let nbytes = etch_pte::tensor::nbytes(&t).unwrap();
                        assert_eq!(r.nbytes, nbytes);
                        match (r.loc, t.allocation_info().unwrap()) {
                            (Loc::Planned { memory, offset }, Some(a)) => {
                                assert_eq!(memory + 1, a.memory_id().unwrap() as usize);
                                assert_eq!(offset, a.memory_offset_usize().unwrap());
                            }
                            (Loc::Constant(d), None) => {
                                let idx = t.data_buffer_idx().unwrap();
                                let want = meta.file().constant_data(idx, nbytes).unwrap();
                                assert_eq!((d.as_ptr(), d.len()), (want.as_ptr(), want.len()));
                            }
                            _ => panic!("tensor v{v}: wrong place"),
                        }
                    }
                    (SLOW, Value::Tensor(t)) => {
                        let dynamic =
                            t.shape_dynamism().unwrap() != etch_pte::ShapeDynamism::Static;
                        let no_data = t.allocation_info().unwrap().is_none()
                            && t.data_buffer_idx().unwrap() == 0;
                        assert!(dynamic || no_data, "static tensor v{v} not decoded");
                    }
                    (SLOW, Value::Int(_) | Value::Bool(_) | Value::Double(_) | Value::Null) => {
                        panic!("scalar v{v} not decoded")
                    }
                    (SLOW, Value::IntList(items)) => assert!(items.len() > MAX_RANK),
                    (SLOW, _) => {}
                    (tag, value) => panic!("v{v}: tag {tag} for {value:?}"),
                }
            }
        }
        (calls, fast, tensors)
    }

    /// A table of arbitrary words (a caller that scribbled over its method
    /// state) reads as wrong values or `None`, never out of bounds: every
    /// read is checked.
    #[test]
    fn arbitrary_tables_read_without_panicking() {
        let data: Vec<u8> = (0..300u32).map(|i| (i * 7) as u8).collect();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for len in [0usize, 1, 2, 3, 5, 17, 64, 300] {
            for _ in 0..200 {
                let words: Vec<u32> = (0..len)
                    .map(|k| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        // Small words too, so that tags meet in-range offsets.
                        if k % 3 == 0 {
                            (x as u32) & 0x0003_ffff
                        } else {
                            x as u32
                        }
                    })
                    .collect();
                let call = Call::at(&words);
                let _ = call.head();
                for i in 0..260 {
                    let e = call.entry(i);
                    let _ = call.int(e);
                    let _ = call.wide((e >> 4) as usize);
                    if let Some(len) = call.list_len(e) {
                        assert!(len <= words.len().max(2));
                        for k in 0..=len {
                            let _ = call.list_item(e, k);
                        }
                    }
                    if let Some(r) = call.tensor(e, &data) {
                        assert!(r.shape.rank() <= MAX_RANK);
                        if let Loc::Constant(d) = r.loc {
                            assert_eq!(d.len(), r.nbytes);
                        }
                    }
                }
            }
        }
    }
}
