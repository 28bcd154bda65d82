//! Values: the [`EValue`] union ([`Value`]), [`Tensor`] and where a tensor
//! lives ([`AllocationDetails`], [`ExtraTensorInfo`]).

use super::*;

table_view!(
    /// A tagged value (`KernelTypes` union).
    EValue
);

/// The payload of an [`EValue`], decoded by its union tag.
// Discriminants are the union tags (`ValueKind`): `EValue::value` stores
// the tag it read rather than one constant per kind.
#[derive(Clone, Copy, Debug)]
#[repr(u8)]
pub enum Value<'a> {
    Null = 1,
    Int(i64) = 2,
    Bool(bool) = 3,
    Double(f64) = 4,
    Tensor(Tensor<'a>) = 5,
    String(&'a [u8]) = 6,
    /// Items are indices into the method's value table (each an `Int`).
    IntList(Vector<'a, i64>) = 7,
    DoubleList(Vector<'a, f64>) = 8,
    BoolList(Vector<'a, bool>) = 9,
    /// Items are value indices of tensors.
    TensorList(Vector<'a, i32>) = 10,
    /// Items are value indices of tensors, `-1` for None.
    OptionalTensorList(Vector<'a, i32>) = 11,
}

impl<'a> EValue<'a> {
    /// The union tag, checked.
    // Inlined: out of line, its `Result<ValueKind>` came back
    // through memory; inlined into `value` and the runtime's argument
    // check: -52 B of the core without verification.
    #[inline(always)]
    pub fn kind(&self) -> Result<ValueKind> {
        let tag: u8 = self.0.scalar(slot::evalue::VAL_TYPE, 0)?;
        ValueKind::from_tag(tag).ok_or(Error::invalid(
            "EValue has an unknown type tag",
            self.position(),
        ))
    }

    /// The decoded payload.
    pub fn value(&self) -> Result<Value<'a>> {
        let kind = self.kind()?;
        if kind == ValueKind::Null {
            return Ok(Value::Null);
        }
        let t = self
            .0
            .required_table(slot::evalue::VAL, "EValue.val missing")?;
        let single = slot::single::VALUE;
        // One read per shape of payload (scalar, list), not one inlined
        // generic read per kind.
        Ok(match kind {
            ValueKind::Tensor => Value::Tensor(Tensor(t)),
            ValueKind::String => Value::String(t.string_or_empty(single)?),
            ValueKind::Null | ValueKind::Int | ValueKind::Bool | ValueKind::Double => {
                let size = if kind == ValueKind::Bool { 1 } else { 8 };
                let bits = t.scalar_bits(single, size, 0)?;
                match kind {
                    ValueKind::Int => Value::Int(bits as i64),
                    ValueKind::Bool => Value::Bool(bits != 0),
                    ValueKind::Double => Value::Double(f64::from_bits(bits)),
                    _ => Value::Null,
                }
            }
            _ => {
                let elem = match kind {
                    ValueKind::BoolList => 1,
                    ValueKind::TensorList | ValueKind::OptionalTensorList => 4,
                    _ => 8,
                };
                let raw = t.raw_vector_or_empty(single, elem)?;
                match kind {
                    ValueKind::IntList => Value::IntList(Vector::from_raw(raw)),
                    ValueKind::DoubleList => Value::DoubleList(Vector::from_raw(raw)),
                    ValueKind::BoolList => Value::BoolList(Vector::from_raw(raw)),
                    ValueKind::TensorList => Value::TensorList(Vector::from_raw(raw)),
                    _ => Value::OptionalTensorList(Vector::from_raw(raw)),
                }
            }
        })
    }
}

table_view!(
    /// Tensor metadata: dtype, shape, dim order and where the data is.
    Tensor
);
impl<'a> Tensor<'a> {
    #[inline(always)]
    pub fn scalar_type(&self) -> Result<ScalarType> {
        self.0
            .scalar(slot::tensor::SCALAR_TYPE, 0i8)
            .map(ScalarType)
    }
    #[inline(always)]
    pub fn storage_offset(&self) -> Result<i32> {
        self.0.scalar(slot::tensor::STORAGE_OFFSET, 0)
    }
    #[inline(always)]
    pub fn sizes(&self) -> Result<Vector<'a, i32>> {
        self.0
            .required_vector(slot::tensor::SIZES, "Tensor.sizes missing")
    }
    /// The sizes' bytes (`4 * rank`, little-endian `i32`s), read in place:
    /// `sizes()?.bytes()` as one slice.
    #[inline(always)]
    pub fn sizes_bytes(&self) -> Result<&'a [u8]> {
        self.0
            .required_bytes(slot::tensor::SIZES, 4, "Tensor.sizes missing")
    }
    /// The dim order's bytes: `dim_order()?.bytes()` as one slice.
    #[inline(always)]
    pub fn dim_order_bytes(&self) -> Result<&'a [u8]> {
        self.0
            .required_bytes(slot::tensor::DIM_ORDER, 1, "Tensor.dim_order missing")
    }
    #[inline(always)]
    pub fn dim_order(&self) -> Result<Vector<'a, u8>> {
        self.0
            .required_vector(slot::tensor::DIM_ORDER, "Tensor.dim_order missing")
    }
    #[inline(always)]
    pub fn requires_grad(&self) -> Result<bool> {
        self.0.scalar(slot::tensor::REQUIRES_GRAD, false)
    }
    /// Index into the constant segment's offsets (0 = not a constant).
    #[inline(always)]
    pub fn data_buffer_idx(&self) -> Result<u32> {
        self.0.scalar(slot::tensor::DATA_BUFFER_IDX, 0)
    }
    #[inline(always)]
    pub fn allocation_info(&self) -> Result<Option<AllocationDetails<'a>>> {
        Ok(self
            .0
            .table(slot::tensor::ALLOCATION_INFO)?
            .map(AllocationDetails))
    }
    #[inline(always)]
    pub fn layout(&self) -> Result<i8> {
        self.0.scalar(slot::tensor::LAYOUT, 0)
    }
    // Inlined into the loader's tensor check (-8 B of the core).
    #[inline(always)]
    pub fn shape_dynamism(&self) -> Result<ShapeDynamism> {
        let raw: i8 = self.0.scalar(slot::tensor::SHAPE_DYNAMISM, 0)?;
        ShapeDynamism::from_raw(raw).ok_or(Error::invalid(
            "Tensor.shape_dynamism out of range",
            self.position(),
        ))
    }
    #[inline(always)]
    pub fn extra_tensor_info(&self) -> Result<Option<ExtraTensorInfo<'a>>> {
        Ok(self
            .0
            .table(slot::tensor::EXTRA_TENSOR_INFO)?
            .map(ExtraTensorInfo))
    }
}

table_view!(
    /// Placement of a memory-planned tensor.
    AllocationDetails
);
impl<'a> AllocationDetails<'a> {
    /// 1-based memory id (buffer index = id - 1).
    #[inline(always)]
    pub fn memory_id(&self) -> Result<u32> {
        self.0.scalar(slot::allocation_details::MEMORY_ID, 0)
    }
    /// [`AllocationDetails::memory_offset`] as a `usize`, `usize::MAX` when
    /// it does not fit: no buffer reaches that far, so every range check
    /// made with it fails as an offset past the buffer's end would. A word
    /// `Result`, in registers on Cortex-M (a `Result<u64>` is not).
    #[inline(never)]
    pub fn memory_offset_usize(&self) -> Result<usize> {
        let low = self.0.scalar_word(
            key(slot::allocation_details::MEMORY_OFFSET_LOW, 4, false),
            0,
        )?;
        let high = self.0.scalar_word(
            key(slot::allocation_details::MEMORY_OFFSET_HIGH, 4, false),
            0,
        )?;
        Ok(usize::try_from((high as u64) << 32 | low as u64).unwrap_or(usize::MAX))
    }
    /// The 64-bit offset recombined from its low and high halves.
    pub fn memory_offset(&self) -> Result<u64> {
        let low: u32 = self
            .0
            .scalar(slot::allocation_details::MEMORY_OFFSET_LOW, 0)?;
        let high: u32 = self
            .0
            .scalar(slot::allocation_details::MEMORY_OFFSET_HIGH, 0)?;
        Ok(((high as u64) << 32) | low as u64)
    }
}

table_view!(
    /// Extra tensor facts: external data, mutable segments.
    ExtraTensorInfo
);
impl<'a> ExtraTensorInfo<'a> {
    #[inline(always)]
    pub fn mutable_data_segments_idx(&self) -> Result<u64> {
        self.0
            .scalar(slot::extra_tensor_info::MUTABLE_DATA_SEGMENTS_IDX, 0)
    }
    #[inline(always)]
    pub fn fully_qualified_name(&self) -> Result<Option<&'a [u8]>> {
        self.0.string(slot::extra_tensor_info::FULLY_QUALIFIED_NAME)
    }
    // Inlined into the loader's tensor check, its one caller in the core
    // (-52 B of the core).
    #[inline(always)]
    pub fn location(&self) -> Result<TensorDataLocation> {
        let raw: i8 = self.0.scalar(slot::extra_tensor_info::LOCATION, 0)?;
        match raw {
            0 => Ok(TensorDataLocation::Segment),
            1 => Ok(TensorDataLocation::External),
            _ => Err(Error::invalid(
                "ExtraTensorInfo.location out of range",
                self.position(),
            )),
        }
    }
    #[inline(always)]
    pub fn device_type(&self) -> Result<i8> {
        self.0.scalar(slot::extra_tensor_info::DEVICE_TYPE, 0)
    }
    #[inline(always)]
    pub fn device_index(&self) -> Result<i8> {
        self.0.scalar(slot::extra_tensor_info::DEVICE_INDEX, 0)
    }
}

#[cfg(test)]
mod allocation_tests {
    use super::*;

    /// `memory_offset_usize` is `memory_offset` as a `usize`, or
    /// `usize::MAX` when it does not fit, for offsets around the 32-bit
    /// edge (an absent half reads as 0).
    #[test]
    fn memory_offset_usize_is_memory_offset_or_max() {
        for (low, high) in [(0u32, 0u32), (5, 0), (u32::MAX, 0), (0, 1), (7, u32::MAX)] {
            // vtable at 0: three slots (memory id, low, high); table at 12.
            let mut buf = [0u8; 28];
            for (pos, v) in [(0, 10u16), (2, 16), (4, 4), (6, 8), (8, 12)] {
                buf[pos..pos + 2].copy_from_slice(&v.to_le_bytes());
            }
            for (pos, v) in [(12, 12u32), (16, 1), (20, low), (24, high)] {
                buf[pos..pos + 4].copy_from_slice(&v.to_le_bytes());
            }
            let a = AllocationDetails(Table::at(&buf, 12).unwrap());
            let wide = a.memory_offset().unwrap();
            assert_eq!(wide, (high as u64) << 32 | low as u64);
            let expected = usize::try_from(wide).unwrap_or(usize::MAX);
            assert_eq!(a.memory_offset_usize().unwrap(), expected);
        }
    }
}
