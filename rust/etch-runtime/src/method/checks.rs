//! What `Method::load` checks before a method may run: each tensor's
//! place and extent, initial data of mutable buffers (each call's
//! arguments against its kernel's schema: `signature::check_schema`).

use etch_pte::schema::{AllocationDetails, EValue};
use etch_pte::types::TensorDataLocation;
use etch_pte::{ShapeDynamism, Value, Vector};

use crate::meta::MethodMeta;
use crate::values::{place, planned_at, value_of, Loc};
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
/// `t` is the tensor it aliases): its planned bytes or its constant data
/// (where [`place`] says). `InvalidState` when it has neither (not an error
/// at load, where `check_tensor` calls it for every tensor value),
/// `InvalidProgram` for planned bytes outside their buffer; errors carry
/// `i`. One copy for load's check and for reading outputs.
#[inline(never)]
pub(super) fn tensor_data<'p>(
    planned: &'p [&mut [u8]],
    meta: &MethodMeta<'p>,
    t: &etch_pte::schema::Tensor<'_>,
    nbytes: usize,
    i: u32,
) -> Result<&'p [u8]> {
    match place(&meta.file(), t, nbytes, i)? {
        // A mutable buffer's initial value (`data_buffer_idx` > 0) was
        // copied into these bytes at load (`Method::reset_state`).
        Loc::Planned { memory, offset } => planned
            .get(memory)
            .and_then(|buf| buf.get(offset..offset.checked_add(nbytes)?))
            .ok_or(Error::new(
                ErrorCode::InvalidProgram,
                "planned tensor outside its buffer",
                i,
            )),
        Loc::Constant(d) => Ok(d),
    }
}

/// The `n` bytes a planned tensor placed at `a` occupies, writable (an
/// unreadable allocation is InvalidProgram to every caller).
pub(super) fn planned_mut<'p>(
    planned: &'p mut [&mut [u8]],
    a: &AllocationDetails<'_>,
    n: usize,
) -> Option<&'p mut [u8]> {
    let (memory, off) = planned_at(a)?;
    planned.get_mut(memory)?.get_mut(off..)?.get_mut(..n)
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
