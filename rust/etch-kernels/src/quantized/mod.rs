//! quantized kernels.
