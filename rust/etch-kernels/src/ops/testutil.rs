//! Tensors over test buffers, for the kernels' host tests.

use etch_runtime::{ScalarType, Shape, TensorView, TensorViewMut};

/// A contiguous input tensor of `dtype` and `sizes` over `data`.
pub(crate) fn t<'a>(dtype: ScalarType, sizes: &'a [u32], data: &'a [u8]) -> TensorView<'a> {
    TensorView {
        dtype,
        shape: Shape::contiguous(sizes).unwrap(),
        data,
    }
}

/// A contiguous output tensor of `dtype` and `sizes` over `data`.
pub(crate) fn o<'a>(dtype: ScalarType, sizes: &'a [u32], data: &'a mut [u8]) -> TensorViewMut<'a> {
    TensorViewMut {
        dtype,
        shape: Shape::contiguous(sizes).unwrap(),
        data,
    }
}
