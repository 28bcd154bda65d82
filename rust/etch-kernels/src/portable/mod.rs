//! portable kernels.
