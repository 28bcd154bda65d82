//! Test support for the ports of glibc's float functions (tanhf.rs,
//! fdlibmf.rs, logf.rs): each is compared with the host's glibc bit for bit.

/// Calls `ours` and glibc's `theirs` on every `step`th bit pattern (all
/// exponents, both signs) and on `specials`, and fails unless both give the
/// same bits (or both a NaN). Returns how many inputs it checked.
pub(crate) fn matches_glibc(
    name: &str,
    ours: fn(f32) -> f32,
    theirs: unsafe extern "C" fn(f32) -> f32,
    step: u32,
    specials: &[f32],
) -> u32 {
    let mut bits = 0u32;
    let patterns = core::iter::from_fn(|| {
        let b = bits;
        bits = bits.checked_add(step)?;
        Some(f32::from_bits(b))
    });
    let mut checked = 0u32;
    for x in patterns.chain(specials.iter().copied()) {
        // SAFETY: calling the C library's pure function with a plain f32.
        let want = unsafe { theirs(x) };
        let got = ours(x);
        assert!(
            got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
            "{name}({x:e} = {:#010x}) = {got:e}, glibc {want:e}",
            x.to_bits()
        );
        checked += 1;
    }
    checked
}
