//! cortex_m kernels.
