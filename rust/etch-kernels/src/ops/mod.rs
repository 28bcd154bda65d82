//! Adapters: one `Kernel` per operator, reading the instruction's arguments
//! from the runtime and calling the compute functions.
//!
//! `KERNELS` lists every kernel this build selected (cargo features
//! `op-<namespace>-<name>-<overload>`): a `const` slice in flash, exactly as
//! long as the selection. Pass it to `Method::load`.
#![allow(dead_code)] // kernels not selected by features are unused

use etch_runtime::Kernel;

pub(crate) mod arith;
mod aten;
mod binary;
pub(crate) mod bytes;
mod conv;
mod convert;
pub(crate) mod copy;
mod cortex_m;
mod dim_order;
pub(crate) mod dtype;
mod elementwise;
pub(crate) mod expf;
pub(crate) mod fdlibmf;
#[cfg(test)]
mod glibc_check;
mod index;
pub(crate) mod logf;
mod norm;
pub(crate) mod num;
mod portable_extra;
pub(crate) mod powf;
mod prim;
mod quantized_decomposed;
pub(crate) mod reduce;
mod shape;
pub(crate) mod tanhf;
mod unary;
mod upsample;
pub(crate) mod walk;

/// Kernel taps `[lo, hi)` of output `o` along one axis whose input position
/// `o·stride + k·dil − pad` lies in `[0, size)`, for `k` in `[0, kernel)`.
/// `dil` must be positive (positions then increase with `k`, so the valid
/// taps are contiguous). The loops over a window run over exactly these
/// taps, so their work is bounded by the input extent, never by a kernel
/// size, stride or padding read from the file; `None` when the arithmetic
/// overflows `i64` (no real model comes near) or `dil` is 0.
#[inline]
pub(crate) fn tap_range(
    o: usize,
    kernel: i64,
    stride: i64,
    dil: i64,
    pad: i64,
    size: usize,
) -> Option<(i64, i64)> {
    let base = i64::try_from(o)
        .ok()?
        .checked_mul(stride)?
        .checked_sub(pad)?;
    let size = i64::try_from(size).ok()?;
    let lo = if base >= 0 {
        0
    } else {
        (base.checked_neg()? - 1).checked_div(dil)? + 1
    };
    let hi = if base >= size {
        0
    } else {
        (size.checked_sub(base)? - 1).checked_div(dil)? + 1
    };
    let hi = hi.min(kernel.max(0));
    Some((lo.min(hi), hi))
}

/// Every selected kernel.
pub const KERNELS: &[Kernel] = &[
    #[cfg(feature = "op-executorch_prim-et_view-default")]
    prim::ET_VIEW,
    #[cfg(feature = "op-aten-sym_size-int")]
    prim::SYM_SIZE_INT,
    #[cfg(feature = "op-aten-permute_copy-out")]
    aten::PERMUTE_COPY_OUT,
    #[cfg(feature = "op-aten-view_copy-out")]
    aten::VIEW_COPY_OUT,
    #[cfg(feature = "op-aten-clone-out")]
    aten::CLONE_OUT,
    #[cfg(feature = "op-aten-relu-out")]
    unary::RELU_OUT,
    #[cfg(feature = "op-aten-addmm-out")]
    aten::ADDMM_OUT,
    #[cfg(feature = "op-aten-add-out")]
    binary::ADD_OUT,
    #[cfg(feature = "op-aten-mul-out")]
    binary::MUL_OUT,
    #[cfg(feature = "op-aten-minimum-out")]
    binary::MINIMUM_OUT,
    #[cfg(feature = "op-aten-maximum-out")]
    binary::MAXIMUM_OUT,
    #[cfg(feature = "op-aten-slice_copy-Tensor_out")]
    aten::SLICE_COPY_TENSOR_OUT,
    #[cfg(feature = "op-aten-hardtanh-out")]
    unary::HARDTANH_OUT,
    #[cfg(feature = "op-aten-clamp-out")]
    unary::CLAMP_OUT,
    #[cfg(feature = "op-aten-sigmoid-out")]
    unary::SIGMOID_OUT,
    #[cfg(feature = "op-aten-_softmax-out")]
    reduce::SOFTMAX_OUT,
    #[cfg(feature = "op-aten-mm-out")]
    portable_extra::MM_OUT,
    #[cfg(feature = "op-aten-bmm-out")]
    portable_extra::BMM_OUT,
    #[cfg(feature = "op-aten-mean-out")]
    reduce::MEAN_OUT,
    #[cfg(feature = "op-aten-max_pool2d_with_indices-out")]
    portable_extra::MAX_POOL2D_WITH_INDICES_OUT,
    #[cfg(feature = "op-aten-full-out")]
    portable_extra::FULL_OUT,
    #[cfg(feature = "op-aten-unsqueeze_copy-out")]
    portable_extra::UNSQUEEZE_COPY_OUT,
    #[cfg(feature = "op-aten-squeeze_copy-dims_out")]
    portable_extra::SQUEEZE_COPY_DIMS_OUT,
    #[cfg(feature = "op-aten-expand_copy-out")]
    portable_extra::EXPAND_COPY_OUT,
    #[cfg(feature = "op-aten-linear-out")]
    portable_extra::LINEAR_OUT,
    #[cfg(feature = "op-aten-cat-out")]
    portable_extra::CAT_OUT,
    #[cfg(feature = "op-aten-avg_pool2d-out")]
    aten::AVG_POOL2D_OUT,
    #[cfg(feature = "op-dim_order_ops-_clone_dim_order-out")]
    dim_order::CLONE_DIM_ORDER_OUT,
    #[cfg(feature = "op-dim_order_ops-_to_dim_order_copy-out")]
    dim_order::TO_DIM_ORDER_COPY_OUT,
    // --- portable: element-wise (unary, binary, comparisons, where) ---
    #[cfg(feature = "op-aten-tanh-out")]
    unary::TANH_OUT,
    #[cfg(feature = "op-aten-exp-out")]
    unary::EXP_OUT,
    #[cfg(feature = "op-aten-expm1-out")]
    unary::EXPM1_OUT,
    #[cfg(feature = "op-aten-log-out")]
    unary::LOG_OUT,
    #[cfg(feature = "op-aten-log1p-out")]
    unary::LOG1P_OUT,
    #[cfg(feature = "op-aten-log2-out")]
    unary::LOG2_OUT,
    #[cfg(feature = "op-aten-sqrt-out")]
    unary::SQRT_OUT,
    #[cfg(feature = "op-aten-rsqrt-out")]
    unary::RSQRT_OUT,
    #[cfg(feature = "op-aten-reciprocal-out")]
    unary::RECIPROCAL_OUT,
    #[cfg(feature = "op-aten-erf-out")]
    unary::ERF_OUT,
    #[cfg(feature = "op-aten-sin-out")]
    unary::SIN_OUT,
    #[cfg(feature = "op-aten-cos-out")]
    unary::COS_OUT,
    #[cfg(feature = "op-aten-floor-out")]
    unary::FLOOR_OUT,
    #[cfg(feature = "op-aten-ceil-out")]
    unary::CEIL_OUT,
    #[cfg(feature = "op-aten-trunc-out")]
    unary::TRUNC_OUT,
    #[cfg(feature = "op-aten-round-out")]
    unary::ROUND_OUT,
    #[cfg(feature = "op-aten-sign-out")]
    unary::SIGN_OUT,
    #[cfg(feature = "op-aten-abs-out")]
    unary::ABS_OUT,
    #[cfg(feature = "op-aten-neg-out")]
    unary::NEG_OUT,
    #[cfg(feature = "op-aten-logical_not-out")]
    unary::LOGICAL_NOT_OUT,
    #[cfg(feature = "op-aten-isnan-out")]
    unary::ISNAN_OUT,
    #[cfg(feature = "op-aten-isinf-out")]
    unary::ISINF_OUT,
    #[cfg(feature = "op-aten-leaky_relu-out")]
    unary::LEAKY_RELU_OUT,
    #[cfg(feature = "op-aten-elu-out")]
    unary::ELU_OUT,
    #[cfg(feature = "op-aten-gelu-out")]
    unary::GELU_OUT,
    #[cfg(feature = "op-aten-add-Scalar_out")]
    binary::ADD_SCALAR_OUT,
    #[cfg(feature = "op-aten-sub-out")]
    binary::SUB_OUT,
    #[cfg(feature = "op-aten-sub-Scalar_out")]
    binary::SUB_SCALAR_OUT,
    #[cfg(feature = "op-aten-rsub-Scalar_out")]
    binary::RSUB_SCALAR_OUT,
    #[cfg(feature = "op-aten-mul-Scalar_out")]
    binary::MUL_SCALAR_OUT,
    #[cfg(feature = "op-aten-div-out")]
    binary::DIV_OUT,
    #[cfg(feature = "op-aten-div-out_mode")]
    binary::DIV_OUT_MODE,
    #[cfg(feature = "op-aten-div-Scalar_out")]
    binary::DIV_SCALAR_OUT,
    #[cfg(feature = "op-aten-div-Scalar_mode_out")]
    binary::DIV_SCALAR_MODE_OUT,
    #[cfg(feature = "op-aten-pow-Tensor_Tensor_out")]
    binary::POW_TENSOR_TENSOR_OUT,
    #[cfg(feature = "op-aten-pow-Tensor_Scalar_out")]
    binary::POW_TENSOR_SCALAR_OUT,
    #[cfg(feature = "op-aten-pow-Scalar_out")]
    binary::POW_SCALAR_OUT,
    #[cfg(feature = "op-aten-where-self_out")]
    binary::WHERE_SELF_OUT,
    #[cfg(feature = "op-aten-logical_and-out")]
    binary::LOGICAL_AND_OUT,
    #[cfg(feature = "op-aten-logical_or-out")]
    binary::LOGICAL_OR_OUT,
    #[cfg(feature = "op-aten-logical_xor-out")]
    binary::LOGICAL_XOR_OUT,
    #[cfg(feature = "op-aten-remainder-Tensor_out")]
    binary::REMAINDER_TENSOR_OUT,
    #[cfg(feature = "op-aten-remainder-Scalar_out")]
    binary::REMAINDER_SCALAR_OUT,
    #[cfg(feature = "op-aten-fmod-Tensor_out")]
    binary::FMOD_TENSOR_OUT,
    #[cfg(feature = "op-aten-fmod-Scalar_out")]
    binary::FMOD_SCALAR_OUT,
    #[cfg(feature = "op-aten-eq-Tensor_out")]
    binary::EQ_TENSOR_OUT,
    #[cfg(feature = "op-aten-eq-Scalar_out")]
    binary::EQ_SCALAR_OUT,
    #[cfg(feature = "op-aten-ne-Tensor_out")]
    binary::NE_TENSOR_OUT,
    #[cfg(feature = "op-aten-ne-Scalar_out")]
    binary::NE_SCALAR_OUT,
    #[cfg(feature = "op-aten-lt-Tensor_out")]
    binary::LT_TENSOR_OUT,
    #[cfg(feature = "op-aten-lt-Scalar_out")]
    binary::LT_SCALAR_OUT,
    #[cfg(feature = "op-aten-le-Tensor_out")]
    binary::LE_TENSOR_OUT,
    #[cfg(feature = "op-aten-le-Scalar_out")]
    binary::LE_SCALAR_OUT,
    #[cfg(feature = "op-aten-gt-Tensor_out")]
    binary::GT_TENSOR_OUT,
    #[cfg(feature = "op-aten-gt-Scalar_out")]
    binary::GT_SCALAR_OUT,
    #[cfg(feature = "op-aten-ge-Tensor_out")]
    binary::GE_TENSOR_OUT,
    #[cfg(feature = "op-aten-ge-Scalar_out")]
    binary::GE_SCALAR_OUT,
    // --- portable: reductions and normalization ---
    #[cfg(feature = "op-aten-mean-dtype_out")]
    reduce::MEAN_DTYPE_OUT,
    #[cfg(feature = "op-aten-sum-IntList_out")]
    reduce::SUM_INTLIST_OUT,
    #[cfg(feature = "op-aten-amax-out")]
    reduce::AMAX_OUT,
    #[cfg(feature = "op-aten-amin-out")]
    reduce::AMIN_OUT,
    #[cfg(feature = "op-aten-argmax-out")]
    reduce::ARGMAX_OUT,
    #[cfg(feature = "op-aten-argmin-out")]
    reduce::ARGMIN_OUT,
    #[cfg(feature = "op-aten-max-dim_max")]
    reduce::MAX_DIM_MAX,
    #[cfg(feature = "op-aten-min-dim_min")]
    reduce::MIN_DIM_MIN,
    #[cfg(feature = "op-aten-var-correction_out")]
    reduce::VAR_CORRECTION_OUT,
    #[cfg(feature = "op-aten-cumsum-out")]
    reduce::CUMSUM_OUT,
    #[cfg(feature = "op-aten-_log_softmax-out")]
    reduce::LOG_SOFTMAX_OUT,
    #[cfg(feature = "op-aten-_native_batch_norm_legit_no_training-out")]
    norm::NATIVE_BATCH_NORM_LEGIT_NO_TRAINING_OUT,
    #[cfg(feature = "op-aten-native_layer_norm-out")]
    norm::NATIVE_LAYER_NORM_OUT,
    #[cfg(feature = "op-aten-native_group_norm-out")]
    norm::NATIVE_GROUP_NORM_OUT,
    #[cfg(feature = "op-aten-any-out")]
    reduce::ANY_OUT,
    #[cfg(feature = "op-aten-any-dims_out")]
    reduce::ANY_DIMS_OUT,
    #[cfg(feature = "op-aten-any-all_out")]
    reduce::ANY_ALL_OUT,
    #[cfg(feature = "op-aten-_adaptive_avg_pool2d-out")]
    reduce::ADAPTIVE_AVG_POOL2D_OUT,
    // --- portable: shape and data movement ---
    #[cfg(feature = "op-aten-select_copy-int_out")]
    shape::SELECT_COPY_INT_OUT,
    #[cfg(feature = "op-aten-narrow_copy-out")]
    shape::NARROW_COPY_OUT,
    #[cfg(feature = "op-aten-split_with_sizes_copy-out")]
    shape::SPLIT_WITH_SIZES_COPY_OUT,
    #[cfg(feature = "op-aten-split_copy-Tensor_out")]
    shape::SPLIT_COPY_TENSOR_OUT,
    #[cfg(feature = "op-aten-unbind_copy-int_out")]
    shape::UNBIND_COPY_INT_OUT,
    #[cfg(feature = "op-aten-stack-out")]
    shape::STACK_OUT,
    #[cfg(feature = "op-aten-transpose_copy-int_out")]
    shape::TRANSPOSE_COPY_INT_OUT,
    #[cfg(feature = "op-aten-t_copy-out")]
    shape::T_COPY_OUT,
    #[cfg(feature = "op-aten-alias_copy-out")]
    shape::ALIAS_COPY_OUT,
    #[cfg(feature = "op-aten-repeat-out")]
    shape::REPEAT_OUT,
    #[cfg(feature = "op-aten-flip-out")]
    shape::FLIP_OUT,
    #[cfg(feature = "op-aten-roll-out")]
    shape::ROLL_OUT,
    #[cfg(feature = "op-aten-pixel_shuffle-out")]
    shape::PIXEL_SHUFFLE_OUT,
    #[cfg(feature = "op-aten-pixel_unshuffle-out")]
    shape::PIXEL_UNSHUFFLE_OUT,
    #[cfg(feature = "op-aten-constant_pad_nd-out")]
    shape::CONSTANT_PAD_ND_OUT,
    #[cfg(feature = "op-aten-index_select-out")]
    index::INDEX_SELECT_OUT,
    #[cfg(feature = "op-aten-gather-out")]
    index::GATHER_OUT,
    #[cfg(feature = "op-aten-embedding-out")]
    index::EMBEDDING_OUT,
    #[cfg(feature = "op-aten-index-Tensor_out")]
    index::INDEX_TENSOR_OUT,
    #[cfg(feature = "op-aten-masked_fill-Scalar_out")]
    index::MASKED_FILL_SCALAR_OUT,
    #[cfg(feature = "op-aten-scalar_tensor-out")]
    index::SCALAR_TENSOR_OUT,
    #[cfg(feature = "op-aten-full_like-out")]
    index::FULL_LIKE_OUT,
    #[cfg(feature = "op-aten-arange-start_out")]
    index::ARANGE_START_OUT,
    #[cfg(feature = "op-aten-upsample_nearest2d-vec_out")]
    upsample::UPSAMPLE_NEAREST2D_VEC_OUT,
    #[cfg(feature = "op-aten-upsample_bilinear2d-vec_out")]
    upsample::UPSAMPLE_BILINEAR2D_VEC_OUT,
    // --- portable: convolution family ---
    #[cfg(feature = "op-aten-convolution-out")]
    conv::CONVOLUTION_OUT,
    // --- quantized_decomposed ---
    #[cfg(feature = "op-quantized_decomposed-quantize_per_tensor-out")]
    quantized_decomposed::QUANTIZE_PER_TENSOR_OUT,
    #[cfg(feature = "op-quantized_decomposed-dequantize_per_tensor-out")]
    quantized_decomposed::DEQUANTIZE_PER_TENSOR_OUT,
    #[cfg(feature = "op-quantized_decomposed-dequantize_per_channel-out")]
    quantized_decomposed::DEQUANTIZE_PER_CHANNEL_OUT,
    // --- cortex_m ---
    #[cfg(feature = "op-cortex_m-quantize_per_tensor-out")]
    cortex_m::QUANTIZE_PER_TENSOR_OUT,
    #[cfg(feature = "op-cortex_m-dequantize_per_tensor-out")]
    cortex_m::DEQUANTIZE_PER_TENSOR_OUT,
    #[cfg(feature = "op-cortex_m-quantized_linear-out")]
    cortex_m::QUANTIZED_LINEAR_OUT,
    #[cfg(feature = "op-cortex_m-quantized_conv2d-out")]
    cortex_m::QUANTIZED_CONV2D_OUT,
    #[cfg(feature = "op-cortex_m-quantized_depthwise_conv2d-out")]
    cortex_m::QUANTIZED_DEPTHWISE_CONV2D_OUT,
    #[cfg(feature = "op-cortex_m-pad-out")]
    cortex_m::PAD_OUT,
    #[cfg(feature = "op-cortex_m-quantized_avg_pool2d-out")]
    cortex_m::QUANTIZED_AVG_POOL2D_OUT,
    #[cfg(feature = "op-cortex_m-quantized_add-out")]
    cortex_m::QUANTIZED_ADD_OUT,
    #[cfg(feature = "op-cortex_m-quantized_mul-out")]
    cortex_m::QUANTIZED_MUL_OUT,
    #[cfg(feature = "op-cortex_m-quantized_activation-out")]
    cortex_m::QUANTIZED_ACTIVATION_OUT,
    #[cfg(feature = "op-cortex_m-quantized_max_pool2d-out")]
    cortex_m::QUANTIZED_MAX_POOL2D_OUT,
    #[cfg(feature = "op-cortex_m-quantized_transpose_conv2d-out")]
    cortex_m::QUANTIZED_TRANSPOSE_CONV2D_OUT,
    #[cfg(feature = "op-cortex_m-softmax-out")]
    cortex_m::SOFTMAX_OUT,
    #[cfg(feature = "op-cortex_m-transpose-out")]
    cortex_m::TRANSPOSE_OUT,
    #[cfg(feature = "op-cortex_m-quantized_batch_matmul-out")]
    cortex_m::QUANTIZED_BATCH_MATMUL_OUT,
    #[cfg(feature = "op-cortex_m-quantized_div-out")]
    cortex_m::QUANTIZED_DIV_OUT,
    #[cfg(feature = "op-cortex_m-minimum-out")]
    cortex_m::MINIMUM_OUT,
    #[cfg(feature = "op-cortex_m-maximum-out")]
    cortex_m::MAXIMUM_OUT,
    #[cfg(feature = "op-cortex_m-quantized_conv2d_nhwc-out")]
    cortex_m::QUANTIZED_CONV2D_NHWC_OUT,
    #[cfg(feature = "op-cortex_m-quantized_depthwise_conv2d_nhwc-out")]
    cortex_m::QUANTIZED_DEPTHWISE_CONV2D_NHWC_OUT,
    #[cfg(feature = "op-cortex_m-quantized_transpose_conv2d_nhwc-out")]
    cortex_m::QUANTIZED_TRANSPOSE_CONV2D_NHWC_OUT,
    #[cfg(feature = "op-cortex_m-quantized_avg_pool2d_nhwc-out")]
    cortex_m::QUANTIZED_AVG_POOL2D_NHWC_OUT,
    #[cfg(feature = "op-cortex_m-quantized_max_pool2d_nhwc-out")]
    cortex_m::QUANTIZED_MAX_POOL2D_NHWC_OUT,
];

/// Number of selected kernels: the registry's exact capacity.
pub const KERNEL_COUNT: usize = KERNELS.len();
