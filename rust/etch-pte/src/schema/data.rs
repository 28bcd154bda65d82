//! Data: constant [`Buffer`]s, [`DataSegment`]s and [`SubsegmentOffsets`],
//! [`NamedData`], [`NonConstBufferDevice`].

use super::*;

table_view!(
    /// The device of a planned buffer.
    NonConstBufferDevice
);
impl<'a> NonConstBufferDevice<'a> {
    #[inline(always)]
    pub fn buffer_idx(&self) -> Result<i32> {
        self.0.scalar(slot::non_const_buffer_device::BUFFER_IDX, 0)
    }
    #[inline(always)]
    pub fn device_type(&self) -> Result<i8> {
        self.0.scalar(slot::non_const_buffer_device::DEVICE_TYPE, 0)
    }
    #[inline(always)]
    pub fn device_index(&self) -> Result<i8> {
        self.0
            .scalar(slot::non_const_buffer_device::DEVICE_INDEX, 0)
    }
}

table_view!(
    /// A deprecated inline constant buffer.
    Buffer
);
impl<'a> Buffer<'a> {
    #[inline(always)]
    pub fn storage(&self) -> Result<&'a [u8]> {
        // A `[ubyte]` vector has a string's layout (u32 length, bytes):
        // the string reader returns its bytes as one view (no separate byte-vector reader).
        self.0.string_or_empty(slot::single::VALUE)
    }
}

table_view!(
    /// A segment: offset relative to `segment_base_offset`, and size.
    DataSegment
);
impl<'a> DataSegment<'a> {
    #[inline(always)]
    pub fn offset(&self) -> Result<u64> {
        self.0.scalar(slot::data_segment::OFFSET, 0)
    }
    #[inline(always)]
    pub fn size(&self) -> Result<u64> {
        self.0.scalar(slot::data_segment::SIZE, 0)
    }
}

table_view!(
    /// Offsets of sub-buffers inside one segment (entry 0 is a placeholder).
    SubsegmentOffsets
);
impl<'a> SubsegmentOffsets<'a> {
    #[inline(always)]
    pub fn segment_index(&self) -> Result<u32> {
        self.0.scalar(slot::subsegment_offsets::SEGMENT_INDEX, 0)
    }
    #[inline(always)]
    pub fn offsets(&self) -> Result<Vector<'a, u64>> {
        self.0.vector_or_empty(slot::subsegment_offsets::OFFSETS)
    }
}

table_view!(
    /// A named blob in a segment (for backends and external data).
    NamedData
);
impl<'a> NamedData<'a> {
    #[inline(always)]
    pub fn key(&self) -> Result<&'a [u8]> {
        self.0
            .required_string(slot::named_data::KEY, "NamedData.key missing")
    }
    #[inline(always)]
    pub fn segment_index(&self) -> Result<u32> {
        self.0.scalar(slot::named_data::SEGMENT_INDEX, 0)
    }
}

/// Strings in vectors (not used by program.fbs today, kept for completeness).
pub type StrVector<'a> = Vector<'a, Str<'a>>;
