//! Where program bytes come from.

use crate::{Error, ErrorCode, Result};

/// What a load is for, as in ExecuTorch's `DataLoader::SegmentInfo`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SegmentInfo {
    Program,
    Constant,
    Backend,
    Mutable,
}

/// A source of program bytes that can hand out zero-copy slices.
///
/// etch keeps the program and its constants where they are (typically
/// memory-mapped flash), so a loader returns slices that live as long as the
/// program. Storage that is not memory-mapped can implement this by loading
/// into a caller-owned RAM buffer first.
pub trait DataLoader<'a> {
    /// Total size of the data.
    fn size(&self) -> usize;
    /// `size` bytes at `offset`, valid for `'a`.
    fn load(&self, offset: usize, size: usize, info: SegmentInfo) -> Result<&'a [u8]>;
}

/// A loader over bytes already in memory (flash or RAM): ExecuTorch's
/// `BufferDataLoader`.
#[derive(Clone, Copy, Debug)]
pub struct BufferDataLoader<'a> {
    data: &'a [u8],
}

impl<'a> BufferDataLoader<'a> {
    pub const fn new(data: &'a [u8]) -> Self {
        BufferDataLoader { data }
    }
}

impl<'a> DataLoader<'a> for BufferDataLoader<'a> {
    fn size(&self) -> usize {
        self.data.len()
    }

    fn load(&self, offset: usize, size: usize, _info: SegmentInfo) -> Result<&'a [u8]> {
        offset
            .checked_add(size)
            .and_then(|end| self.data.get(offset..end))
            .ok_or(Error::new(
                ErrorCode::InvalidArgument,
                "load outside the data",
                offset as u32,
            ))
    }
}
