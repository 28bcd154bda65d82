//! Adapters: one `Kernel` per operator, reading the instruction's arguments
//! from the runtime and calling the compute functions.
//!
//! One folder per operator family, named for what its operators do; each
//! has its own `KERNELS` list and its own cargo feature family
//! (`<folder>-ops`, e.g. `binary-ops`), and each operator its own feature
//! `op-<namespace>-<name>-<overload>`:
//!
//! | folder | operators |
//! |---|---|
//! | [`unary`] | one tensor in, element by element: `abs`, `exp`, `log*`, `sqrt`, `sin`, `tanh`, `floor`, `round`, `relu`, `sigmoid`, `hardtanh`, `clamp`, `gelu`, `elu`, `leaky_relu`, `logical_not`, `isnan`, ... |
//! | [`binary`] | two operands broadcast: `add`, `sub`, `rsub`, `mul`, `div`, `pow`, `remainder`, `fmod`, `minimum`, `maximum`, `where`, comparisons (`eq`, `lt`, ...), `logical_and/or/xor` |
//! | [`reduce`] | `sum`, `mean`, `amax`, `amin`, `argmax`, `argmin`, `max.dim`, `min.dim`, `var`, `cumsum`, `any` |
//! | [`norm`] | `_softmax`, `_log_softmax`, `_native_batch_norm_legit_no_training`, `native_layer_norm`, `native_group_norm` |
//! | [`matmul`] | `mm`, `bmm`, `addmm`, `linear` |
//! | [`conv`] | `convolution` |
//! | [`pool`] | `avg_pool2d`, `max_pool2d_with_indices`, `_adaptive_avg_pool2d` |
//! | [`shape`] | `view_copy`, `permute_copy`, `(un)squeeze_copy`, `expand_copy`, `transpose_copy`, `t_copy`, `slice_copy`, `select_copy`, `narrow_copy`, `split*_copy`, `unbind_copy`, `cat`, `stack`, `repeat`, `flip`, `roll`, `pixel_(un)shuffle`, `constant_pad_nd` |
//! | [`copy`] | `clone`, `alias_copy`, `copy_`, `dim_order_ops::_clone_dim_order`, `dim_order_ops::_to_dim_order_copy`, and the copy engines |
//! | [`fill`] | `full`, `full_like`, `scalar_tensor`, `arange`, `masked_fill` |
//! | [`index`] | `index_select`, `gather`, `embedding`, `index.Tensor` |
//! | [`upsample`] | `upsample_nearest2d`, `upsample_bilinear2d` |
//! | [`prim`] | `executorch_prim::et_view`, `aten::sym_size.int`, `aten::sym_numel`, the `executorch_prim` scalar ops |
//! | [`quantized_decomposed`] | `quantized_decomposed::quantize_per_tensor`, `dequantize_per_tensor`, `dequantize_per_channel` |
//! | [`cortex_m`] | every `cortex_m::*` operator (CMSIS-NN int8), calling [`crate::cortex_m`] |
//!
//! [`KERNELS`] lists every kernel this build selected: the families' lists
//! one after another, a `const` slice in flash exactly as long as the
//! selection. Pass it to `Method::load`. [`dtype`] is the one element-type
//! engine (promotion, casts, the x86-64 float → int rules), [`elementwise`]
//! the broadcasting walk the unary and binary kernels run on.

use etch_runtime::{Error, ErrorCode, Kernel, KernelContext, Result};

pub mod binary;
pub mod conv;
pub mod copy;
pub mod cortex_m;
pub(crate) mod dtype;
pub(crate) mod dynamic;
pub(crate) mod elementwise;
pub mod fill;
pub mod index;
pub mod matmul;
pub mod norm;
pub mod pool;
pub mod prim;
pub mod quantized_decomposed;
pub mod reduce;
pub mod shape;
#[cfg(test)]
mod testutil;
pub mod unary;
pub mod upsample;

/// `InvalidArgument` with a description (the `messages` feature keeps it):
/// what every kernel returns for arguments that do not fit the operator.
pub(crate) fn bad(what: &'static str) -> Error {
    Error::new(ErrorCode::InvalidArgument, what, 0)
}

/// The families' lists, in the order [`KERNELS`] holds them.
const FAMILIES: [&[Kernel]; 15] = [
    unary::KERNELS,
    binary::KERNELS,
    reduce::KERNELS,
    norm::KERNELS,
    matmul::KERNELS,
    conv::KERNELS,
    pool::KERNELS,
    shape::KERNELS,
    copy::KERNELS,
    fill::KERNELS,
    index::KERNELS,
    upsample::KERNELS,
    prim::KERNELS,
    quantized_decomposed::KERNELS,
    cortex_m::KERNELS,
];

/// Number of selected kernels: the registry's exact capacity.
pub const KERNEL_COUNT: usize = {
    let mut n = 0;
    let mut f = 0;
    while f < FAMILIES.len() {
        n += FAMILIES[f].len();
        f += 1;
    }
    n
};

/// Every selected kernel.
pub const KERNELS: &[Kernel] = &concat(FAMILIES);

/// Fills [`concat`]'s array before the families' kernels overwrite every
/// slot; never in the result.
const NONE: Kernel = Kernel {
    name: "",
    args: &[],
    run: none,
    schema: "",
    scratch: 0,
};

fn none(_: &mut KernelContext<'_, '_>) -> Result<()> {
    Err(Error::new(ErrorCode::OperatorMissing, "no kernel", 0))
}

/// The families' lists one after another, at compile time.
const fn concat(families: [&[Kernel]; 15]) -> [Kernel; KERNEL_COUNT] {
    let mut out = [NONE; KERNEL_COUNT];
    let (mut f, mut k) = (0, 0);
    while f < families.len() {
        let mut i = 0;
        while i < families[f].len() {
            out[k] = families[f][i];
            k += 1;
            i += 1;
        }
        f += 1;
    }
    out
}
