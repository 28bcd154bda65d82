//! What `Method::load` checks before a method may run: each tensor's
//! place and extent, initial data of mutable buffers, each call's
//! arguments against its kernel's schema.

use etch_pte::schema::{AllocationDetails, EValue};
use etch_pte::types::TensorDataLocation;
use etch_pte::{ShapeDynamism, Value, ValueKind, Vector};

use crate::meta::MethodMeta;
use crate::{Error, ErrorCode, Result};

/// A tensor with a zero dimension has no bytes whatever its other sizes are,
/// so nothing else bounds them; but kernels loop over sizes (an output of
/// `[1, 8, 2147483647, 0]` ran a convolution's row loop 2^31 times). Its
/// extent (the product of its sizes with zeros counted as 1), in bytes,
/// must fit the largest memory the program has, as a non-empty tensor's
/// bytes must: then every loop over its sizes is bounded by real memory.
// Inlined into `check_tensor` (its one caller): out of line it was 8 B
// more since `check_tensor` is itself inlined into `load`.
pub(super) fn check_empty_extent(
    t: &etch_pte::schema::Tensor<'_>,
    largest: usize,
    i: usize,
) -> Result<()> {
    let implausible = Error::new(
        ErrorCode::InvalidProgram,
        "empty tensor with implausible sizes",
        i as u32,
    );
    // Every factor is at least 1, so the product only grows: it may stop at
    // the first prefix above `largest` (and never needs more than `usize`).
    let mut extent = t.scalar_type()?.element_size().unwrap_or(1);
    for s in t.sizes_bytes()?.as_chunks::<4>().0 {
        extent = match extent.checked_mul(i32::from_le_bytes(*s).max(1) as usize) {
            Some(e) if e <= largest => e,
            _ => return Err(implausible),
        };
    }
    if extent > largest {
        return Err(implausible);
    }
    Ok(())
}

/// What `Method::load` checks of tensor value `i`: what etch cannot run
/// (`NotSupported`), and that its bytes lie in its planned buffer or the
/// program's constants (repeats verification's check for files loaded with
/// `Verification::Minimal`).
pub(super) fn check_tensor(
    t: &etch_pte::schema::Tensor<'_>,
    meta: &MethodMeta<'_>,
    planned: &[&mut [u8]],
    largest: usize,
    i: usize,
) -> Result<()> {
    if t.shape_dynamism()? == ShapeDynamism::DynamicUnbound {
        return Err(Error::new(
            ErrorCode::NotSupported,
            "dynamic unbound tensor",
            i as u32,
        ));
    }
    if t.storage_offset()? != 0 {
        return Err(Error::new(
            ErrorCode::NotSupported,
            "tensor with storage_offset",
            i as u32,
        ));
    }
    if let Some(info) = t.extra_tensor_info()? {
        if info.location()? == TensorDataLocation::External {
            return Err(Error::new(
                ErrorCode::NotSupported,
                "tensor with external data",
                i as u32,
            ));
        }
    }
    let nbytes = etch_pte::tensor::nbytes(t)?;
    if nbytes == 0 {
        check_empty_extent(t, largest, i)?;
    }
    match tensor_data(planned, meta, t, nbytes, i as u32) {
        // No data (neither planned nor constant) is not an error at load;
        // nothing else gives InvalidState (etch-pte never does).
        Err(e) if e.code == ErrorCode::InvalidState => Ok(()),
        r => r.map(|_| ()),
    }
}

/// The first `nbytes` of tensor `t`'s data (for an output that is a view,
/// `t` is the tensor it aliases): its planned bytes or its constant data.
/// `InvalidState` when it has neither (not an error at load, where
/// `check_tensor` calls it for every tensor value), `InvalidProgram` for planned bytes
/// outside their buffer; errors carry `i`. One copy for load's check and
/// for reading outputs.
#[inline(never)]
pub(super) fn tensor_data<'p>(
    planned: &'p [&mut [u8]],
    meta: &MethodMeta<'p>,
    t: &etch_pte::schema::Tensor<'_>,
    nbytes: usize,
    i: u32,
) -> Result<&'p [u8]> {
    match t.allocation_info()? {
        Some(a) => {
            let Some(bytes) = planned_bytes(planned, &a, nbytes) else {
                return Err(Error::new(
                    ErrorCode::InvalidProgram,
                    "planned tensor outside its buffer",
                    i,
                ));
            };
            // A mutable buffer's initial value (`data_buffer_idx` > 0) was
            // copied into these bytes at load (`Method::reset_state`).
            Ok(bytes)
        }
        None => match t.data_buffer_idx()? {
            0 => Err(Error::new(ErrorCode::InvalidState, "tensor has no data", i)),
            idx => meta.constant_data(idx, nbytes),
        },
    }
}

/// Value `v` of the method's value table, decoded: one copy of the lookup
/// for outputs, inputs, moves, conditions and the state walk.
#[inline(never)]
pub(crate) fn value_of<'a>(values: &Vector<'a, EValue<'a>>, v: usize) -> Result<Value<'a>> {
    values.get(v)?.value()
}

/// The `nbytes` a planned tensor placed at `a` occupies (memory id `n` is
/// planned buffer `n - 1`); `None` when they do not lie inside one, or `a`
/// cannot be read (both are `InvalidProgram` to every caller). Inlined
/// into `tensor_data`, its one caller (out of line: 36 B more).
pub(super) fn planned_bytes<'p>(
    planned: &'p [&mut [u8]],
    a: &AllocationDetails<'_>,
    nbytes: usize,
) -> Option<&'p [u8]> {
    let buf = planned.get((a.memory_id().ok()? as usize).checked_sub(1)?)?;
    let off = a.memory_offset_usize().ok()?;
    buf.get(off..off.checked_add(nbytes)?)
}

/// `planned_bytes`'s reads, on the mutable buffers (an unreadable
/// allocation is InvalidProgram to every caller).
pub(super) fn planned_mut<'p>(
    planned: &'p mut [&mut [u8]],
    a: &AllocationDetails<'_>,
    n: usize,
) -> Option<&'p mut [u8]> {
    let buf = planned.get_mut((a.memory_id().ok()? as usize).checked_sub(1)?)?;
    let off = a.memory_offset_usize().ok()?;
    buf.get_mut(off..)?.get_mut(..n)
}

/// Copies every mutable buffer's initial value from the program into its
/// planned bytes ([`Method::reset_state`]); `InvalidProgram` (at = the
/// value) for one outside the mutable data segment or its buffer.
#[inline(never)]
pub(super) fn init_mutable(
    planned: &mut [&mut [u8]],
    file: &etch_pte::PteFile<'_>,
    values: &Vector<'_, EValue<'_>>,
) -> Result<()> {
    for i in 0..values.len() {
        let Value::Tensor(t) = value_of(values, i)? else {
            continue;
        };
        let idx = t.data_buffer_idx()?;
        let Some(a) = t.allocation_info()? else {
            continue;
        };
        if idx == 0 {
            continue;
        }
        let nbytes = etch_pte::tensor::nbytes(&t)?;
        let src = file
            .mutable_data(idx, nbytes)
            .map_err(|e| e.with_at(i as u32))?;
        let dst = planned_mut(planned, &a, nbytes).ok_or(Error::new(
            ErrorCode::InvalidProgram,
            "planned tensor outside its buffer",
            i as u32,
        ))?;
        // Byte by byte through `black_box`: a copy loop LLVM turns into a
        // `memcpy` call links compiler_builtins' memcpy (730 B) into the
        // core, for a copy made once per load or reset.
        for (d, s) in dst.iter_mut().zip(src) {
            *d = core::hint::black_box(*s);
        }
    }
    Ok(())
}

pub(super) fn alloc_failed(what: &'static str, shortfall: usize) -> Error {
    Error::new(ErrorCode::MemoryAllocationFailed, what, shortfall as u32)
}

/// Checks a kernel call's argument count and kinds against the kernel's schema.
pub(crate) fn check_schema(
    values: &Vector<'_, EValue<'_>>,
    args: Vector<'_, i32>,
    schema: &[crate::ArgKind],
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
        let actual = match value_of(values, v)? {
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
