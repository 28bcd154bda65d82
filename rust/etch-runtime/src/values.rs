//! The method's value table as load, execute and the kernels read it: one
//! out-of-line lookup of a value (`value_of`) and one answer to where a
//! tensor's bytes are (`place`), shared by the load checks (`method`), the
//! state walk (`state`), the program's metadata (`meta`), the decoded
//! calls (`calls`) and the kernels' context (`context`). It calls none of
//! them: only `etch-pte`.

use etch_pte::schema::{AllocationDetails, EValue, Tensor};
use etch_pte::{PteFile, Value, Vector};

use crate::{Error, ErrorCode, Result};

pub(crate) fn bad_arg(what: &'static str, i: usize) -> Error {
    Error::new(ErrorCode::InvalidArgument, what, i as u32)
}

/// Value `v` of the method's value table, decoded: one copy of the lookup
/// for outputs, inputs, moves, conditions and the state walk.
#[inline(never)]
pub(crate) fn value_of<'a>(values: &Vector<'a, EValue<'a>>, v: usize) -> Result<Value<'a>> {
    values.get(v)?.value()
}

/// Where a tensor's bytes are.
#[derive(Clone, Copy)]
pub(crate) enum Loc<'a> {
    Constant(&'a [u8]),
    Planned { memory: usize, offset: usize },
}

/// Where tensor `t`'s `nbytes` of data are: planned (memory id `n` is
/// planned buffer `n - 1`, at `memory_offset`) or constant data in the
/// program `file`. `InvalidState` (at `i`) when it has neither. A planned
/// place no buffer can have (memory id 0, an unreadable allocation) is
/// buffer `usize::MAX`, which every reader of a [`Loc`] refuses (load's
/// check: `InvalidProgram`). The one reading of a tensor's place: load's
/// check, the outputs, the kernels' views and the decoded calls go
/// through it. Inlined into its two callers, as the code it replaced was
/// (out of line, its frame sat under every kernel's constant reads).
#[inline(always)]
pub(crate) fn place<'a>(
    file: &PteFile<'a>,
    t: &Tensor<'_>,
    nbytes: usize,
    i: u32,
) -> Result<Loc<'a>> {
    match t.allocation_info()? {
        Some(a) => {
            let (memory, offset) = planned_at(&a).unwrap_or((usize::MAX, 0));
            Ok(Loc::Planned { memory, offset })
        }
        None => match t.data_buffer_idx()? {
            0 => Err(Error::new(ErrorCode::InvalidState, "tensor has no data", i)),
            idx => file.constant_data(idx, nbytes).map(Loc::Constant),
        },
    }
}

/// The planned buffer index and offset of an allocation (memory id `n`
/// is buffer `n - 1`); `None` for memory id 0 or an unreadable one.
#[inline(always)]
pub(crate) fn planned_at(a: &AllocationDetails<'_>) -> Option<(usize, usize)> {
    let memory = (a.memory_id().ok()? as usize).checked_sub(1)?;
    Some((memory, a.memory_offset_usize().ok()?))
}
