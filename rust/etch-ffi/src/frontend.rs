//! The keyword-spotting audio front-end (`etch-frontend`) in the C API:
//! 16 kHz mono PCM to the 49 x 10 MFCCs the MLPerf Tiny DS-CNN takes,
//! quantized with the model's own input parameters. Built with the `frontend`
//! feature (Zephyr: `CONFIG_ETCH_FRONTEND`).
//!
//! Memory is the caller's: `etch_frontend_t` is the 2 KiB FFT scratch
//! (contents on entry do not matter), `etch_frontend_stream_t` the state of
//! the streaming front-end (the last second's mel energies, 8.6 KB). The
//! tables are in flash.

use core::mem::{align_of, size_of};

use etch_frontend::{Frontend, Quant, Stream, FEATURES, FRAME_STEP};

use crate::ptr::{disjoint, Held, Region};
use crate::status::etch_status_t;
use crate::{ETCH_INVALID_ARGUMENT, ETCH_INVALID_STATE, ETCH_OK};

/// Sample rate the front-end expects (mono, 16-bit).
pub const ETCH_FRONTEND_SAMPLE_RATE: u32 = 16_000;
/// Samples of one clip (1 s): longer input is cut, shorter zero-padded.
pub const ETCH_FRONTEND_CLIP_SAMPLES: usize = 16_000;
/// Samples per `etch_frontend_stream_push` (20 ms).
pub const ETCH_FRONTEND_HOP_SAMPLES: usize = 320;
/// Frames x coefficients of one clip's features (`[frame][coeff]`).
pub const ETCH_FRONTEND_FRAMES: usize = 49;
pub const ETCH_FRONTEND_COEFFS: usize = 10;
/// Features per clip: the model's `[1, 1, 49, 10]` input.
pub const ETCH_FRONTEND_FEATURES: usize = 490;
/// Size of `etch_frontend_t` in 8-byte words.
pub const ETCH_FRONTEND_WORDS: usize = 256;
/// Size of `etch_frontend_stream_t` in 8-byte words (per pointer width).
#[cfg(target_pointer_width = "32")]
pub const ETCH_FRONTEND_STREAM_WORDS: usize = 1074;
#[cfg(target_pointer_width = "64")]
pub const ETCH_FRONTEND_STREAM_WORDS: usize = 1075;

const _: () = assert!(ETCH_FRONTEND_FEATURES == FEATURES);
const _: () = assert!(ETCH_FRONTEND_FRAMES * ETCH_FRONTEND_COEFFS == FEATURES);
const _: () = assert!(ETCH_FRONTEND_HOP_SAMPLES == FRAME_STEP);
const _: () = assert!(ETCH_FRONTEND_CLIP_SAMPLES == etch_frontend::CLIP_SAMPLES);
const _: () = assert!(ETCH_FRONTEND_SAMPLE_RATE == etch_frontend::SAMPLE_RATE);

/// Scratch of the front-end (one frame's FFT). Caller-allocated (static or
/// stack); its contents on entry do not matter and may be reused for
/// anything between calls.
#[repr(C)]
pub struct etch_frontend_t {
    pub _opaque: [u64; ETCH_FRONTEND_WORDS],
}

/// State of the streaming front-end: the mel energies of the last second.
/// Caller-allocated; set up with `etch_frontend_stream_init`. Plain data: it
/// may be moved or copied (a copy is an independent stream).
#[repr(C)]
pub struct etch_frontend_stream_t {
    pub _opaque: [u64; ETCH_FRONTEND_STREAM_WORDS],
}

const _: () = assert!(size_of::<Frontend>() == size_of::<etch_frontend_t>());
const _: () = assert!(align_of::<Frontend>() <= align_of::<etch_frontend_t>());

const STREAM: u32 = 0x6574_4653; // "etFS"

#[repr(C)]
struct StreamInner {
    magic: u32,
    stream: Stream,
}

const _: () = assert!(size_of::<StreamInner>() <= size_of::<etch_frontend_stream_t>());
const _: () = assert!(size_of::<StreamInner>() + 8 > size_of::<etch_frontend_stream_t>());
const _: () = assert!(align_of::<StreamInner>() <= align_of::<etch_frontend_stream_t>());

/// The scratch behind `fe`, zeroed: any bytes would do for the FFT (it
/// writes every value before reading it), but a Rust reference must not
/// cover memory C may have left uninitialised.
///
/// # Safety
/// `fe` NULL or a writable `etch_frontend_t` nothing else uses during the
/// returned borrow.
unsafe fn scratch<'a>(fe: *mut etch_frontend_t) -> Option<&'a mut Frontend> {
    let p = fe.cast::<Frontend>();
    if p.is_null() || !p.is_aligned() {
        return None;
    }
    // SAFETY: non-null, aligned, writable for one handle (caller), which is
    // exactly size_of::<Frontend>() bytes. Zero bytes are a valid Frontend
    // (an array of f32 0.0), so the reference covers a valid value.
    unsafe {
        p.write_bytes(0, 1);
        Some(&mut *p)
    }
}

/// `n` samples at `pcm`, null/misaligned/wrapping checked (n == 0 refused).
///
/// # Safety
/// `pcm` NULL or `n` readable `int16_t` that stay unchanged during the borrow.
unsafe fn samples<'a>(pcm: *const i16, n: usize) -> Option<&'a [i16]> {
    if pcm.is_null() || !pcm.is_aligned() || n == 0 || n > isize::MAX as usize / 2 {
        return None;
    }
    (pcm as usize).checked_add(n.checked_mul(2)?)?;
    // SAFETY: non-null, aligned, the range does not wrap; readable for n
    // samples is the caller's contract.
    Some(unsafe { core::slice::from_raw_parts(pcm, n) })
}

/// `ETCH_FRONTEND_FEATURES` writable `T` at `out` (`out_len` at least that).
///
/// # Safety
/// `out` NULL or `out_len` writable `T` nothing else uses during the borrow.
unsafe fn features_out<'a, T>(out: *mut T, out_len: usize) -> Option<&'a mut [T; FEATURES]> {
    if out.is_null() || !out.is_aligned() || out_len < FEATURES {
        return None;
    }
    (out as usize).checked_add(size_of::<[T; FEATURES]>())?;
    // SAFETY: non-null, aligned, FEATURES <= out_len elements writable
    // (caller), the range does not wrap.
    Some(unsafe { &mut *out.cast::<[T; FEATURES]>() })
}

/// The front end's calls hold no handle memory: only their arguments, which
/// must not overlap where one is written (`ptr::disjoint`).
fn overlap(call: &[Region]) -> bool {
    disjoint(Held::NONE, call).is_err()
}

fn status(r: Result<i16, etch_frontend::Error>, peak: *mut i16) -> etch_status_t {
    match r {
        Ok(p) => {
            if !peak.is_null() && peak.is_aligned() {
                // SAFETY: non-null and aligned; writable is the caller's
                // contract for `peak`.
                unsafe { peak.write(p) };
            }
            ETCH_OK
        }
        Err(e) => e.code(),
    }
}

/// MFCCs of one clip, quantized to int8 as the model takes them:
/// `q = clamp(zero_point + nearbyint(x / scale), -128, 127)`, ExecuTorch's
/// `quantize_per_tensor`. `scale`, `zero_point` are the program's
/// `input0_scale` (as float) and `input0_zp` methods. `pcm` holds
/// `n_samples` 16 kHz mono samples: normalised by their maximum, then cut or
/// zero-padded to 1 s. `out` gets `ETCH_FRONTEND_FEATURES` values, frame
/// major (`out_len` at least that). `*peak` (if `peak` is not NULL) gets
/// the maximum sample: 0 means digital silence, for which the features are
/// undefined (all -128).
///
/// Needs the library built with the `frontend` feature (Zephyr:
/// `CONFIG_ETCH_FRONTEND`, `ETCH_FEATURE_FRONTEND` in
/// `etch_build_features()`), as do all `etch_frontend_*` functions.
///
/// `ETCH_INVALID_ARGUMENT` for NULL or misaligned pointers, `n_samples` 0,
/// a short `out`, overlapping buffers, a scale that is not finite and
/// positive or a zero point outside int8.
///
/// # Safety
/// `fe` NULL or a writable `etch_frontend_t`; `pcm` NULL or `n_samples`
/// readable samples; `out` NULL or `out_len` writable bytes; `peak` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn etch_frontend_mfcc_int8(
    fe: *mut etch_frontend_t,
    pcm: *const i16,
    n_samples: usize,
    scale: f32,
    zero_point: i32,
    out: *mut i8,
    out_len: usize,
    peak: *mut i16,
) -> etch_status_t {
    let Ok(q) = Quant::new(scale, zero_point) else {
        return ETCH_INVALID_ARGUMENT;
    };
    // SAFETY: the caller's contract, passed on.
    let Some((fe, pcm, out)) = (unsafe { clip_args(fe, pcm, n_samples, out, out_len, peak) })
    else {
        return ETCH_INVALID_ARGUMENT;
    };
    status(fe.mfcc_int8(pcm, q, out), peak)
}

/// Float MFCCs of one clip (for float-input programs); otherwise as
/// `etch_frontend_mfcc_int8`. Digital silence gives NaN features.
///
/// # Safety
/// As `etch_frontend_mfcc_int8`; `out` NULL or `out_len` writable floats.
#[no_mangle]
pub unsafe extern "C" fn etch_frontend_mfcc(
    fe: *mut etch_frontend_t,
    pcm: *const i16,
    n_samples: usize,
    out: *mut f32,
    out_len: usize,
    peak: *mut i16,
) -> etch_status_t {
    // SAFETY: the caller's contract, passed on.
    let Some((fe, pcm, out)) = (unsafe { clip_args(fe, pcm, n_samples, out, out_len, peak) })
    else {
        return ETCH_INVALID_ARGUMENT;
    };
    status(fe.mfcc(pcm, out), peak)
}

/// The arguments of a whole-clip call as references: `None` (the caller
/// returns `ETCH_INVALID_ARGUMENT`) when a pointer is null or misaligned, a
/// length is short, or the scratch, samples, features and `peak` overlap.
///
/// # Safety
/// As `etch_frontend_mfcc_int8`: each non-null pointer valid for its length.
unsafe fn clip_args<'a, T>(
    fe: *mut etch_frontend_t,
    pcm: *const i16,
    n_samples: usize,
    out: *mut T,
    out_len: usize,
    peak: *mut i16,
) -> Option<(&'a mut Frontend, &'a [i16], &'a mut [T; FEATURES])> {
    if overlap(&[
        Region::writes(fe, 1, 0),
        Region::reads(pcm, n_samples, 1),
        Region::writes(out, FEATURES, 2),
        Region::writes(peak, 1, 3),
    ]) {
        return None;
    }
    // SAFETY: the caller's contracts; the three ranges are disjoint.
    let pcm = unsafe { samples(pcm, n_samples) }?;
    // SAFETY: as above.
    let out = unsafe { features_out(out, out_len) }?;
    // SAFETY: as above.
    let fe = unsafe { scratch(fe) }?;
    Some((fe, pcm, out))
}

/// `s` as `StreamInner`, null and alignment checked.
fn stream_ptr(s: *const etch_frontend_stream_t) -> Option<*mut StreamInner> {
    let p = s.cast::<StreamInner>().cast_mut();
    (!p.is_null() && p.is_aligned()).then_some(p)
}

/// Sets up (or resets) a stream: no audio yet.
///
/// # Safety
/// `s` NULL or a writable `etch_frontend_stream_t`.
#[no_mangle]
pub unsafe extern "C" fn etch_frontend_stream_init(
    s: *mut etch_frontend_stream_t,
) -> etch_status_t {
    let Some(p) = stream_ptr(s) else {
        return ETCH_INVALID_ARGUMENT;
    };
    // SAFETY: writable handle (caller), large and aligned enough (const
    // asserts). All-zero bytes are a valid StreamInner: every field is an
    // integer or f32 array, and a zero hop count is `Stream::new()`'s state.
    // Writing bytes in place avoids building the 8.6 KB value on the stack.
    unsafe {
        p.write_bytes(0, 1);
        (*p).magic = STREAM;
    }
    ETCH_OK
}

/// The initialised stream behind `s`.
///
/// # Safety
/// `s` NULL or a writable `etch_frontend_stream_t` nothing else uses during
/// the borrow.
unsafe fn stream_mut<'a>(s: *mut etch_frontend_stream_t) -> Result<&'a mut Stream, etch_status_t> {
    let p = stream_ptr(s).ok_or(ETCH_INVALID_ARGUMENT)?;
    // SAFETY: readable handle (caller); `magic` is a u32, any bits valid.
    if unsafe { (*p).magic } != STREAM {
        return Err(ETCH_INVALID_STATE);
    }
    // SAFETY: initialised by etch_frontend_stream_init (magic); a Stream
    // of any bits is valid (integers and floats). Exclusive for the borrow
    // (caller).
    Ok(unsafe { &mut (*p).stream })
}

/// Shared view of the initialised stream behind `s`.
///
/// # Safety
/// `s` NULL or an `etch_frontend_stream_t` nobody writes during the borrow.
unsafe fn stream_ref<'a>(s: *const etch_frontend_stream_t) -> Result<&'a Stream, etch_status_t> {
    let p = stream_ptr(s).ok_or(ETCH_INVALID_ARGUMENT)?;
    // SAFETY: readable handle (caller); `magic` is a u32, any bits valid.
    if unsafe { (*p).magic } != STREAM {
        return Err(ETCH_INVALID_STATE);
    }
    // SAFETY: as in `stream_mut`, read-only.
    Ok(unsafe { &(*p).stream })
}

/// Adds `n` = `ETCH_FRONTEND_HOP_SAMPLES` new samples (20 ms) and computes
/// the frame they complete, with `fe` as scratch. `ETCH_INVALID_STATE` if
/// `s` was never initialised, `ETCH_INVALID_ARGUMENT` for another `n`.
///
/// # Safety
/// `s` NULL or a writable `etch_frontend_stream_t`; `fe` NULL or a writable
/// `etch_frontend_t`; `hop` NULL or `n` readable samples.
#[no_mangle]
pub unsafe extern "C" fn etch_frontend_stream_push(
    s: *mut etch_frontend_stream_t,
    fe: *mut etch_frontend_t,
    hop: *const i16,
    n: usize,
) -> etch_status_t {
    if n != FRAME_STEP
        || overlap(&[
            Region::writes(s, 1, 0),
            Region::writes(fe, 1, 1),
            Region::reads(hop, n, 2),
        ])
    {
        return ETCH_INVALID_ARGUMENT;
    }
    // SAFETY: the caller's contracts; the ranges are disjoint.
    let st = match unsafe { stream_mut(s) } {
        Ok(st) => st,
        Err(e) => return e,
    };
    // SAFETY: as above.
    let Some(hop) =
        (unsafe { samples(hop, n) }).and_then(|h| <&[i16; FRAME_STEP]>::try_from(h).ok())
    else {
        return ETCH_INVALID_ARGUMENT;
    };
    // SAFETY: as above.
    let Some(fe) = (unsafe { scratch(fe) }) else {
        return ETCH_INVALID_ARGUMENT;
    };
    st.push(fe, hop);
    ETCH_OK
}

/// Hops pushed since init (kept bounded, never below 50, once ready); features are
/// ready from `ETCH_FRONTEND_CLIP_SAMPLES / ETCH_FRONTEND_HOP_SAMPLES` (50).
///
/// # Safety
/// `s` NULL or an `etch_frontend_stream_t`; `hops` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn etch_frontend_stream_hops(
    s: *const etch_frontend_stream_t,
    hops: *mut usize,
) -> etch_status_t {
    if overlap(&[Region::reads(s, 1, 0), Region::writes(hops, 1, 1)]) {
        return ETCH_INVALID_ARGUMENT;
    }
    // SAFETY: caller's contract; the borrow ends in this statement.
    let n = match unsafe { stream_ref(s) } {
        Ok(st) => st.hops(),
        Err(e) => return e,
    };
    if hops.is_null() || !hops.is_aligned() {
        return ETCH_INVALID_ARGUMENT;
    }
    // SAFETY: non-null, aligned, writable (caller).
    unsafe { hops.write(n) };
    ETCH_OK
}

/// Int8 features of the last second pushed, bit for bit what
/// `etch_frontend_mfcc_int8` gives for those 16000 samples.
/// `ETCH_INVALID_STATE` before a full second has been pushed; arguments as
/// `etch_frontend_mfcc_int8`.
///
/// # Safety
/// `s` NULL or an `etch_frontend_stream_t`; `out` NULL or `out_len`
/// writable bytes; `peak` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn etch_frontend_stream_features_int8(
    s: *const etch_frontend_stream_t,
    scale: f32,
    zero_point: i32,
    out: *mut i8,
    out_len: usize,
    peak: *mut i16,
) -> etch_status_t {
    let Ok(q) = Quant::new(scale, zero_point) else {
        return ETCH_INVALID_ARGUMENT;
    };
    if overlap(&[
        Region::reads(s, 1, 0),
        Region::writes(out, FEATURES, 3),
        Region::writes(peak, 1, 5),
    ]) {
        return ETCH_INVALID_ARGUMENT;
    }
    // SAFETY: the caller's contracts; the ranges are disjoint.
    let st = match unsafe { stream_ref(s) } {
        Ok(st) => st,
        Err(e) => return e,
    };
    // SAFETY: as above.
    let Some(out) = (unsafe { features_out(out, out_len) }) else {
        return ETCH_INVALID_ARGUMENT;
    };
    status(st.features_int8(q, out), peak)
}

#[cfg(test)]
#[allow(clippy::undocumented_unsafe_blocks)]
mod tests {
    use super::*;
    use core::ptr::{null, null_mut};

    fn clip() -> Vec<i16> {
        (0..20_000)
            .map(|n: i32| ((n * 7919 % 4001) - 2000 + 3000 * ((n / 40) % 2)) as i16)
            .collect()
    }

    #[test]
    fn clip_and_stream_match_the_crate() {
        let pcm = clip();
        let mut fe = Box::new(etch_frontend_t {
            _opaque: [7; ETCH_FRONTEND_WORDS],
        });
        let mut out = [0i8; FEATURES];
        let mut peak = 0i16;
        let st = unsafe {
            etch_frontend_mfcc_int8(
                &mut *fe,
                pcm.as_ptr(),
                16_000,
                0.179_497_18,
                30,
                out.as_mut_ptr(),
                FEATURES,
                &mut peak,
            )
        };
        assert_eq!(st, ETCH_OK);
        let mut want = [0i8; FEATURES];
        let q = Quant::new(0.179_497_18, 30).unwrap();
        let want_peak = Frontend::new()
            .mfcc_int8(&pcm[..16_000], q, &mut want)
            .unwrap();
        assert_eq!((out, peak), (want, want_peak));

        let mut s = Box::new(etch_frontend_stream_t {
            _opaque: [0xff; ETCH_FRONTEND_STREAM_WORDS],
        });
        let mut hops = 0usize;
        assert_eq!(
            unsafe { etch_frontend_stream_hops(&*s, &mut hops) },
            ETCH_INVALID_STATE
        );
        assert_eq!(unsafe { etch_frontend_stream_init(&mut *s) }, ETCH_OK);
        let mut streamed = [0i8; FEATURES];
        for (h, hop) in pcm.chunks_exact(FRAME_STEP).take(50).enumerate() {
            assert_eq!(
                unsafe {
                    etch_frontend_stream_features_int8(
                        &*s,
                        0.179_497_18,
                        30,
                        streamed.as_mut_ptr(),
                        FEATURES,
                        null_mut(),
                    )
                },
                ETCH_INVALID_STATE
            );
            assert_eq!(
                unsafe { etch_frontend_stream_hops(&*s, &mut hops) },
                ETCH_OK
            );
            assert_eq!(hops, h);
            assert_eq!(
                unsafe { etch_frontend_stream_push(&mut *s, &mut *fe, hop.as_ptr(), FRAME_STEP) },
                ETCH_OK
            );
        }
        assert_eq!(
            unsafe {
                etch_frontend_stream_features_int8(
                    &*s,
                    0.179_497_18,
                    30,
                    streamed.as_mut_ptr(),
                    FEATURES,
                    &mut peak,
                )
            },
            ETCH_OK
        );
        assert_eq!((streamed, peak), (want, want_peak));
    }

    #[test]
    fn bad_arguments() {
        let pcm = clip();
        let mut fe = Box::new(etch_frontend_t {
            _opaque: [0; ETCH_FRONTEND_WORDS],
        });
        let mut out = [0i8; FEATURES];
        let mut f = [0f32; FEATURES];
        let o = out.as_mut_ptr();
        let call = |fe: *mut etch_frontend_t,
                    p: *const i16,
                    n: usize,
                    s: f32,
                    z: i32,
                    o: *mut i8,
                    l: usize| unsafe {
            etch_frontend_mfcc_int8(fe, p, n, s, z, o, l, null_mut())
        };
        let fe_p: *mut etch_frontend_t = &mut *fe;
        assert_eq!(
            call(fe_p, pcm.as_ptr(), 16_000, 0.5, 3, o, FEATURES),
            ETCH_OK
        );
        assert_eq!(
            call(null_mut(), pcm.as_ptr(), 16_000, 0.5, 3, o, FEATURES),
            ETCH_INVALID_ARGUMENT
        );
        assert_eq!(
            call(fe_p, null(), 16_000, 0.5, 3, o, FEATURES),
            ETCH_INVALID_ARGUMENT
        );
        assert_eq!(
            call(fe_p, pcm.as_ptr(), 0, 0.5, 3, o, FEATURES),
            ETCH_INVALID_ARGUMENT
        );
        assert_eq!(
            call(fe_p, pcm.as_ptr(), 16_000, 0.5, 3, o, FEATURES - 1),
            ETCH_INVALID_ARGUMENT
        );
        assert_eq!(
            call(fe_p, pcm.as_ptr(), 16_000, 0.5, 3, null_mut(), FEATURES),
            ETCH_INVALID_ARGUMENT
        );
        assert_eq!(
            call(fe_p, pcm.as_ptr(), 16_000, 0.0, 3, o, FEATURES),
            ETCH_INVALID_ARGUMENT
        );
        assert_eq!(
            call(fe_p, pcm.as_ptr(), 16_000, f32::NAN, 3, o, FEATURES),
            ETCH_INVALID_ARGUMENT
        );
        assert_eq!(
            call(fe_p, pcm.as_ptr(), 16_000, 0.5, 128, o, FEATURES),
            ETCH_INVALID_ARGUMENT
        );
        // Misaligned samples; output overlapping the samples or the scratch.
        let misaligned = unsafe { pcm.as_ptr().cast::<u8>().add(1).cast::<i16>() };
        assert_eq!(
            call(fe_p, misaligned, 100, 0.5, 3, o, FEATURES),
            ETCH_INVALID_ARGUMENT
        );
        let mut pcm2 = pcm.clone();
        let inside = pcm2.as_mut_ptr().cast::<i8>();
        assert_eq!(
            call(fe_p, pcm2.as_ptr(), 16_000, 0.5, 3, inside, FEATURES),
            ETCH_INVALID_ARGUMENT
        );
        assert_eq!(
            call(
                fe_p,
                pcm.as_ptr(),
                16_000,
                0.5,
                3,
                fe_p.cast::<i8>(),
                FEATURES
            ),
            ETCH_INVALID_ARGUMENT
        );
        // Silence: peak 0, all -128 (ExecuTorch's quantize of NaN).
        let mut peak = 1i16;
        let silent = [0i16; 16_000];
        assert_eq!(
            unsafe {
                etch_frontend_mfcc_int8(
                    fe_p,
                    silent.as_ptr(),
                    16_000,
                    0.5,
                    3,
                    o,
                    FEATURES,
                    &mut peak,
                )
            },
            ETCH_OK
        );
        assert_eq!(peak, 0);
        assert!(out.iter().all(|&x| x == -128));
        // Float features equal the crate's, bits and all.
        assert_eq!(
            unsafe {
                etch_frontend_mfcc(
                    fe_p,
                    pcm.as_ptr(),
                    16_000,
                    f.as_mut_ptr(),
                    FEATURES,
                    null_mut(),
                )
            },
            ETCH_OK
        );
        let mut want = [0f32; FEATURES];
        Frontend::new().mfcc(&pcm[..16_000], &mut want).unwrap();
        assert_eq!(f.map(f32::to_bits), want.map(f32::to_bits));
        // Streams: wrong hop length, unset handle.
        let mut s = Box::new(etch_frontend_stream_t {
            _opaque: [0; ETCH_FRONTEND_STREAM_WORDS],
        });
        assert_eq!(
            unsafe { etch_frontend_stream_push(&mut *s, fe_p, pcm.as_ptr(), FRAME_STEP) },
            ETCH_INVALID_STATE
        );
        assert_eq!(unsafe { etch_frontend_stream_init(&mut *s) }, ETCH_OK);
        assert_eq!(
            unsafe { etch_frontend_stream_push(&mut *s, fe_p, pcm.as_ptr(), FRAME_STEP - 1) },
            ETCH_INVALID_ARGUMENT
        );
        assert_eq!(
            unsafe { etch_frontend_stream_init(null_mut()) },
            ETCH_INVALID_ARGUMENT
        );
    }
}
