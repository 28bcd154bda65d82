//! Shape and data-movement kernels (`split`, `select`, `stack`, `transpose`,
//! `repeat`, `flip`, `roll`, `pixel_shuffle`, ...): pure copies, so every
//! dtype works and the work dispatches on element size, not dtype. Each is
//! one strided walk (`copy/walk.rs`) from the input's real strides to the
//! output's, so any dim order is handled. Argument checks follow
//! ExecuTorch's `kernels/portable/cpu/util/copy_ops_util.cpp`; input and
//! output dtypes must be equal (upstream's split/unbind/stack may convert
//! between dtypes; `to_edge` never emits that, and etch rejects it).
//!
//! - [`view`]: `view_copy`, `permute_copy`, `squeeze_copy`, `unsqueeze_copy`,
//!   `expand_copy`, `transpose_copy`, `t_copy`;
//! - [`slice`]: `slice_copy`, `select_copy`, `narrow_copy`, `split_copy`,
//!   `split_with_sizes_copy`, `unbind_copy`;
//! - [`join`]: `cat`, `stack`;
//! - [`tile`]: `repeat`, `flip`, `roll`, `pixel_shuffle`, `pixel_unshuffle`;
//! - [`pad`]: `constant_pad_nd` (a pad with a constant value).

use etch_runtime::Kernel;

pub mod join;
pub mod pad;
pub mod slice;
#[cfg(test)]
mod tests;
pub mod tile;
pub mod view;

/// The kernels of this family the build selected (`op-*` features, all
/// of them with `shape-ops`).
pub const KERNELS: &[Kernel] = &[
    #[cfg(feature = "op-aten-permute_copy-out")]
    view::PERMUTE_COPY_OUT,
    #[cfg(feature = "op-aten-view_copy-out")]
    view::VIEW_COPY_OUT,
    #[cfg(feature = "op-aten-slice_copy-Tensor_out")]
    slice::SLICE_COPY_TENSOR_OUT,
    #[cfg(feature = "op-aten-unsqueeze_copy-out")]
    view::UNSQUEEZE_COPY_OUT,
    #[cfg(feature = "op-aten-squeeze_copy-dims_out")]
    view::SQUEEZE_COPY_DIMS_OUT,
    #[cfg(feature = "op-aten-expand_copy-out")]
    view::EXPAND_COPY_OUT,
    #[cfg(feature = "op-aten-cat-out")]
    join::CAT_OUT,
    #[cfg(feature = "op-aten-select_copy-int_out")]
    slice::SELECT_COPY_INT_OUT,
    #[cfg(feature = "op-aten-narrow_copy-out")]
    slice::NARROW_COPY_OUT,
    #[cfg(feature = "op-aten-split_with_sizes_copy-out")]
    slice::SPLIT_WITH_SIZES_COPY_OUT,
    #[cfg(feature = "op-aten-split_copy-Tensor_out")]
    slice::SPLIT_COPY_TENSOR_OUT,
    #[cfg(feature = "op-aten-unbind_copy-int_out")]
    slice::UNBIND_COPY_INT_OUT,
    #[cfg(feature = "op-aten-stack-out")]
    join::STACK_OUT,
    #[cfg(feature = "op-aten-transpose_copy-int_out")]
    view::TRANSPOSE_COPY_INT_OUT,
    #[cfg(feature = "op-aten-t_copy-out")]
    view::T_COPY_OUT,
    #[cfg(feature = "op-aten-repeat-out")]
    tile::REPEAT_OUT,
    #[cfg(feature = "op-aten-flip-out")]
    tile::FLIP_OUT,
    #[cfg(feature = "op-aten-roll-out")]
    tile::ROLL_OUT,
    #[cfg(feature = "op-aten-pixel_shuffle-out")]
    tile::PIXEL_SHUFFLE_OUT,
    #[cfg(feature = "op-aten-pixel_unshuffle-out")]
    tile::PIXEL_UNSHUFFLE_OUT,
    #[cfg(feature = "op-aten-constant_pad_nd-out")]
    pad::CONSTANT_PAD_ND_OUT,
];
