//! The whole `.pte` file: flatbuffer header, optional `eh00` extended header,
//! program flatbuffer and segments.
//!
//! Layout (`exir/_serialize/_program.py`, `schema/extended_header.h`):
//! ```text
//! 0   u32 root table offset
//! 4   "ET12" file identifier
//! 8   optional extended header: "eh00", u32 length (>= 24), u64 program_size,
//!     u64 segment_base_offset, u64 segment_data_size (only when length >= 32)
//! ... flatbuffer body, up to program_size
//! segment_base_offset: segment data (DataSegment offsets are relative to it)
//! ```

use crate::error::{Error, ErrorCode, Result};
use crate::flatbuffer::{offset_in, read_u32, same_bytes, Table, Vector};
use crate::schema::{
    slot, BackendDelegateDataReference, ExecutionPlan, Program, SubsegmentOffsets, Tensor,
};
use crate::types::DataLocation;

/// The flatbuffer file identifier of every program etch reads.
pub const FILE_IDENTIFIER: [u8; 4] = *b"ET12";
/// Magic of the extended header.
pub const EXTENDED_HEADER_MAGIC: [u8; 4] = *b"eh00";

mod field {
    use core::ops::Range;
    pub const ROOT_OFFSET: usize = 0;
    pub const IDENTIFIER: Range<usize> = 4..8;
    pub const HEADER_MAGIC: Range<usize> = 8..12;
    pub const HEADER_LENGTH: usize = 12;
    pub const PROGRAM_SIZE: usize = 16;
    pub const SEGMENT_BASE_OFFSET: usize = 24;
    pub const SEGMENT_DATA_SIZE: usize = 32;
    /// Shortest header length the runtime accepts.
    pub const MIN_HEADER_LENGTH: u32 = 24;
    /// Header length from which `segment_data_size` is present.
    pub const HEADER_LENGTH_WITH_DATA_SIZE: u32 = 32;
}

/// The `eh00` extended header.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ExtendedHeader {
    /// Length of the header in bytes (magic and length included).
    pub length: u32,
    /// Size of the flatbuffer part, headers included.
    pub program_size: u64,
    /// File offset of the first segment; 0 when there are none.
    pub segment_base_offset: u64,
    /// Bytes from `segment_base_offset` to the end of the last segment (0 in
    /// pre-1.0 files whose header is shorter than 32 bytes).
    pub segment_data_size: u64,
}

impl ExtendedHeader {
    /// Parses the header at byte 8, `Ok(None)` if the magic is not there.
    pub fn parse(data: &[u8]) -> Result<Option<ExtendedHeader>> {
        if read_u32(data, field::HEADER_MAGIC.start).ok()
            != Some(u32::from_le_bytes(EXTENDED_HEADER_MAGIC))
        {
            return Ok(None);
        }
        let length = read_u32(data, field::HEADER_LENGTH)?;
        if length < field::MIN_HEADER_LENGTH {
            return Err(Error::invalid(
                "extended header shorter than 24 bytes",
                field::HEADER_LENGTH,
            ));
        }
        // Two inlined word reads each, not the out-of-line `read_u64`
        // whose `Result<u64>` comes back through memory.
        let u64_at = |pos: usize| -> Result<u64> {
            Ok(read_u32(data, pos)? as u64 | (read_u32(data, pos + 4)? as u64) << 32)
        };
        let segment_data_size = if length >= field::HEADER_LENGTH_WITH_DATA_SIZE {
            u64_at(field::SEGMENT_DATA_SIZE)?
        } else {
            0
        };
        Ok(Some(ExtendedHeader {
            length,
            program_size: u64_at(field::PROGRAM_SIZE)?,
            segment_base_offset: u64_at(field::SEGMENT_BASE_OFFSET)?,
            segment_data_size,
        }))
    }
}

/// Declares a data reader (`segment`, `constant_data`, `delegate_data`)
/// over its `_at` form, every error of which is `InvalidProgram`. With `at`
/// it is the `_at` form. Without `at` (an `Error` is its code alone) the
/// `_at` form runs out of line returning an `Option`, which comes back in
/// registers on Cortex-M where a `Result` of a slice comes back through
/// memory, and `None` becomes the code here.
macro_rules! data_reader {
    ($(#[$m:meta])* $name:ident => $at:ident($($arg:ident: $ty:ty),*)) => {
        $(#[$m])*
        #[inline(always)]
        pub fn $name(&self, $($arg: $ty),*) -> Result<&'a [u8]> {
            #[cfg(not(feature = "at"))]
            {
                #[inline(never)]
                fn or_none<'a>(file: &PteFile<'a>, $($arg: $ty),*) -> Option<&'a [u8]> {
                    file.$at($($arg),*).ok()
                }
                return or_none(self, $($arg),*).ok_or(Error::invalid("", 0));
            }
            #[cfg(feature = "at")]
            self.$at($($arg),*)
        }
    };
}

fn to_usize(v: u64, what: &'static str, at: usize) -> Result<usize> {
    usize::try_from(v).map_err(|_| Error::invalid(what, at))
}

/// A `.pte` file in memory (typically flash), read in place.
///
/// Two constructors, as in smoltcp's wire views:
/// - [`PteFile::new_checked`] verifies the whole file once (every offset, index
///   and length; see [`crate::verify`]); afterwards no accessor fails;
/// - [`PteFile::new_unchecked`] checks only the headers and the root table, for
///   firmware whose model was verified at build time. Accessors stay
///   bounds-checked, so a bad file gives errors, never out-of-bounds reads.
#[derive(Clone, Copy, Debug)]
pub struct PteFile<'a> {
    data: &'a [u8],
    // The extended header is parsed again when asked for, not stored: a
    // 40-byte u64-aligned field made every copy of the view (Program,
    // MethodMeta, Method) larger.
    segment_base: usize,
    /// Its buffer is the flatbuffer part, `[0, program_size)`.
    root: Program<'a>,
}

impl<'a> PteFile<'a> {
    /// Checks the headers and opens the root table.
    pub fn new_unchecked(data: &'a [u8]) -> Result<Self> {
        if data.len() < 8 {
            return Err(Error::invalid("file shorter than 8 bytes", 0));
        }
        // One word compare, not a slice compare (no `PartialEq` for slices
        // linked into firmware).
        if read_u32(data, field::IDENTIFIER.start)? != u32::from_le_bytes(FILE_IDENTIFIER) {
            return Err(Error::invalid("file identifier is not ET12", 4));
        }
        let (mut program_size, mut segment_base) = (data.len(), 0);
        if let Some(h) = ExtendedHeader::parse(data)? {
            program_size = to_usize(h.program_size, "program_size too large", 16)?;
            segment_base = to_usize(h.segment_base_offset, "segment_base_offset too large", 24)?;
            // Same rule as ExecuTorch's Program::load, in `usize`: a size
            // that does not fit cannot lie in the file either.
            let data_size = usize::try_from(h.segment_data_size).unwrap_or(usize::MAX);
            let truncated = if segment_base == 0 {
                program_size > data.len()
            } else {
                data_size > 0 && segment_base.saturating_add(data_size) > data.len()
            };
            if truncated {
                return Err(Error::invalid("file is truncated", data.len()));
            }
            if program_size > data.len() || program_size < 8 {
                return Err(Error::invalid("program_size outside the file", 16));
            }
            if segment_base != 0 && segment_base < program_size {
                return Err(Error::invalid("segment_base_offset inside the program", 24));
            }
        }
        // The flatbuffer is only [0, program_size): no table may reach into segments.
        let program = data.get(..program_size).unwrap_or(&[]);
        let root = read_u32(program, field::ROOT_OFFSET)? as usize;
        if root < 8 || root.saturating_add(4) > program_size {
            return Err(Error::invalid("root offset outside the program", 0));
        }
        let root = Program(Table::at(program, root)?);
        Ok(PteFile {
            data,
            segment_base,
            root,
        })
    }

    /// Checks the headers, then verifies the whole program (see [`crate::verify`]).
    pub fn new_checked(data: &'a [u8]) -> Result<Self> {
        let file = Self::new_unchecked(data)?;
        crate::verify::verify(&file)?;
        Ok(file)
    }

    /// The view again from its parts, without checking them again: the
    /// whole file, [`PteFile::segment_base_offset`] and the root table (in
    /// the file's first [`PteFile::program_size`] bytes). Lets a runtime
    /// view keep fewer words than this one's six (less code moving views). Parts of
    /// another file give a view whose reads fail or read absent fields,
    /// never out of bounds.
    #[inline(always)]
    pub fn from_parts(data: &'a [u8], segment_base: usize, root: Program<'a>) -> Self {
        PteFile {
            data,
            segment_base,
            root,
        }
    }

    /// The whole file.
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// The extended header, if the file has one.
    pub fn extended_header(&self) -> Option<ExtendedHeader> {
        // Parsed successfully in `new_unchecked`, so this cannot fail.
        ExtendedHeader::parse(self.data).ok().flatten()
    }

    /// Bytes of the flatbuffer part (headers included).
    pub fn program_size(&self) -> usize {
        self.root.0.buffer().len()
    }

    /// File offset of the first segment (0 when there is no extended header).
    pub fn segment_base_offset(&self) -> usize {
        self.segment_base
    }

    /// The root `Program` table.
    pub fn program(&self) -> Program<'a> {
        self.root
    }

    /// Number of methods (execution plans).
    pub fn num_methods(&self) -> Result<usize> {
        Ok(self.root.execution_plan()?.len())
    }

    /// The execution plan called `name`, or `NotFound`.
    pub fn plan(&self, name: &str) -> Result<ExecutionPlan<'a>> {
        for plan in self.root.execution_plan()?.iter() {
            let plan = plan?;
            // Bytes, not `name()`: no UTF-8 validator in firmware.
            if same_bytes(plan.name_bytes()?, name.as_bytes()) {
                return Ok(plan);
            }
        }
        Err(Error::new(
            ErrorCode::NotFound,
            "no method with that name",
            0,
        ))
    }

    data_reader!(
        /// The bytes of segment `index`.
        segment => segment_at(index: usize)
    );

    /// [`PteFile::segment`], each error with its `at`.
    #[cfg_attr(not(feature = "at"), inline(always))]
    fn segment_at(&self, index: usize) -> Result<&'a [u8]> {
        let seg = self.root.segments()?.get(index)?;
        let what = "segment outside the file";
        // In `usize`: an offset or size that does not fit cannot lie in the
        // file either (same error, no 64-bit arithmetic on the device).
        let offset = to_usize(seg.offset()?, what, seg.position())?;
        let size = to_usize(seg.size()?, what, seg.position())?;
        let start = self
            .segment_base
            .checked_add(offset)
            .ok_or(Error::invalid(what, seg.position()))?;
        let end = start
            .checked_add(size)
            .ok_or(Error::invalid(what, seg.position()))?;
        if start < self.program_size() && end > start {
            return Err(Error::invalid(
                "segment overlaps the program",
                seg.position(),
            ));
        }
        self.data
            .get(start..end)
            .ok_or(Error::invalid(what, seg.position()))
    }

    /// The constant segment table, if the file uses one (more than the
    /// placeholder offset).
    pub fn constant_segment(&self) -> Result<Option<(SubsegmentOffsets<'a>, Vector<'a, u64>)>> {
        match self.root.constant_segment()? {
            Some(cs) => {
                let offsets = cs.offsets()?;
                Ok(if offsets.len() > 1 {
                    Some((cs, offsets))
                } else {
                    None
                })
            }
            None => Ok(None),
        }
    }

    data_reader!(
        /// `nbytes` of constant data for a tensor with `data_buffer_idx` (> 0),
        /// from the constant segment or, in old files, the inline
        /// `constant_buffer`.
        constant_data => constant_data_at(data_buffer_idx: u32, nbytes: usize)
    );

    /// [`PteFile::constant_data`], each error with its `at`.
    #[cfg_attr(not(feature = "at"), inline(always))]
    fn constant_data_at(&self, data_buffer_idx: u32, nbytes: usize) -> Result<&'a [u8]> {
        let idx = data_buffer_idx as usize;
        let what = "constant data outside its segment";
        // `constant_segment`, read here without returning its views.
        if let Some(cs) = self.root.constant_segment()? {
            // The offsets, 8 bytes each, read in place.
            let bytes = cs.0.bytes_or_empty(slot::subsegment_offsets::OFFSETS, 8)?;
            let at = offset_in(self.root.0.buffer(), bytes);
            let (offsets, _) = bytes.as_chunks::<8>();
            if offsets.len() > 1 {
                let segment = self.segment(cs.segment_index()? as usize)?;
                let Some(offset) = offsets.get(idx) else {
                    return Err(Error::invalid("vector index out of range", at));
                };
                let start = to_usize(u64::from_le_bytes(*offset), what, at)?;
                return start
                    .checked_add(nbytes)
                    .and_then(|end| segment.get(start..end))
                    .ok_or(Error::invalid(what, at));
            }
        }
        let buffers = self.root.constant_buffer()?;
        if buffers.is_empty() {
            return Err(Error::invalid("constant tensor but no constants", 0));
        }
        let storage = buffers.get(idx)?.storage()?;
        storage
            .get(..nbytes)
            .ok_or(Error::invalid(what, buffers.position()))
    }

    /// The initial value (`nbytes`) of a mutable planned tensor with
    /// `data_buffer_idx` (> 0): as ExecuTorch's `getTensorDataPtr`, from the
    /// program's first `mutable_data_segments` entry, whose offsets table
    /// `data_buffer_idx` indexes. `InvalidProgram` when there is no such
    /// entry or offset, its segment is out of range, or the bytes run past
    /// the segment's end.
    #[inline(never)]
    pub fn mutable_data(&self, data_buffer_idx: u32, nbytes: usize) -> Result<&'a [u8]> {
        let what = "mutable data outside its segment";
        let first = self.root.mutable_data_segments()?.get(0)?;
        let start = first.offsets()?.get(data_buffer_idx as usize)?;
        let segment = self.segment(first.segment_index()? as usize)?;
        let start = to_usize(start, what, first.position())?;
        start
            .checked_add(nbytes)
            .and_then(|end| segment.get(start..end))
            .ok_or(Error::invalid(what, first.position()))
    }

    data_reader!(
        /// The processed blob a delegate refers to (inline data or a segment).
        delegate_data => delegate_data_at(processed: BackendDelegateDataReference<'a>)
    );

    /// [`PteFile::delegate_data`], each error with its `at`.
    #[cfg_attr(not(feature = "at"), inline(always))]
    fn delegate_data_at(&self, processed: BackendDelegateDataReference<'a>) -> Result<&'a [u8]> {
        let index = processed.index()? as usize;
        match processed.location()? {
            DataLocation::Inline => self.root.backend_delegate_data()?.get(index)?.data(),
            DataLocation::Segment => self.segment(index),
        }
    }

    /// Size in bytes of a tensor's data (numel × element size), checked.
    pub fn tensor_nbytes(tensor: &Tensor<'_>) -> Result<usize> {
        crate::tensor::nbytes(tensor)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::format;

    /// Every error of the data readers is `InvalidProgram` (all an `Error`
    /// without `at` holds), and the public form (without `at`, the
    /// firmware's out-of-line `Option` one) agrees with the `_at` one: on
    /// small fixtures with constants and a delegate, every byte of the
    /// program set to 0x00 and to 0xff.
    #[test]
    fn data_readers_fail_only_with_invalid_program() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/");
        for name in [
            "tiny_cm_m33.pte",
            "tiny_portable_pc.pte",
            "tiny_xnnpack_delegate.pte",
        ] {
            let good = std::fs::read(format!("{dir}{name}")).unwrap();
            let file = PteFile::new_unchecked(&good).unwrap();
            let size = file.program_size();
            // The good files read: constant 1 (the two without a delegate).
            if !name.contains("delegate") {
                assert!(file.constant_data_at(1, 1).is_ok(), "{name}");
                assert!(file.constant_data(1, 1).is_ok(), "{name}");
            }
            let mut checked = 0;
            for pos in 0..size {
                for b in [0x00, 0xff] {
                    let mut bytes = good.clone();
                    bytes[pos] = b;
                    let Ok(file) = PteFile::new_unchecked(&bytes) else {
                        continue;
                    };
                    let agree = |r: Result<&[u8]>, o: Result<&[u8]>| {
                        if let Err(e) = r {
                            assert_eq!(e.code, ErrorCode::InvalidProgram, "{name} {pos} {b}");
                        }
                        assert_eq!(r.ok(), o.ok(), "{name} {pos} {b}");
                    };
                    for i in 0..3 {
                        agree(file.segment_at(i), file.segment(i));
                    }
                    for (idx, n) in [(1, 1), (1, 16), (2, 4), (3, 0), (40, 4)] {
                        agree(file.constant_data_at(idx, n), file.constant_data(idx, n));
                    }
                    let plans = file.program().execution_plan();
                    let Ok(Ok(plan)) = plans.map(|p| p.get(0)) else {
                        continue;
                    };
                    for d in plan.delegates().into_iter().flat_map(|d| d.iter()) {
                        if let Ok(p) = d.and_then(|d| d.processed()) {
                            agree(file.delegate_data_at(p), file.delegate_data(p));
                            checked += 1;
                        }
                    }
                }
            }
            if name.contains("delegate") {
                assert!(checked > 0, "{name}: no delegate read");
            }
        }
    }
}
