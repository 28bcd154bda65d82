//! Streaming keyword recognition (`etch-kws`) in the C API: the model's
//! scores every few hundred milliseconds in, keyword events out (posterior
//! averaging over a window, a threshold, a refractory period). Built with
//! the `frontend` feature, beside the front end (Zephyr: `CONFIG_ETCH_FRONTEND`).
//!
//! `etch_kws_t` is caller memory holding the recognizer: plain integers, so
//! whatever bytes it holds, a call reads and writes only inside it.

use core::mem::{align_of, size_of};

use etch_kws::{Config, Recognizer};

use crate::ptr::{disjoint, Held, Region};
use crate::status::etch_status_t;
use crate::{ETCH_INVALID_ARGUMENT, ETCH_INVALID_STATE, ETCH_OK};

/// Most labels a model may have (scores per `etch_kws_push_int8`).
pub const ETCH_KWS_MAX_LABELS: usize = 16;
/// Most results the averaging window holds.
pub const ETCH_KWS_HISTORY: usize = 16;
/// Size of `etch_kws_t` in 8-byte words.
pub const ETCH_KWS_WORDS: usize = 48;

type Inner = Recognizer<ETCH_KWS_MAX_LABELS, ETCH_KWS_HISTORY>;

const MAGIC: u32 = 0x6574_4b57; // "etKW"

#[repr(C)]
struct KwsInner {
    magic: u32,
    labels: u32,
    recognizer: Inner,
}

/// The recognizer's state. Caller-allocated; set up by `etch_kws_init`.
#[repr(C)]
pub struct etch_kws_t {
    pub _opaque: [u64; ETCH_KWS_WORDS],
}

const _: () = assert!(size_of::<KwsInner>() <= size_of::<etch_kws_t>());
const _: () = assert!(align_of::<KwsInner>() <= align_of::<etch_kws_t>());

/// Recognition settings (times in milliseconds of audio).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct etch_kws_config_t {
    /// Labels the model outputs (at most `ETCH_KWS_MAX_LABELS`).
    pub labels: u32,
    /// Labels `0..keywords` are keywords; the others (silence, unknown) never fire.
    pub keywords: u32,
    /// Results averaged: those of the last `window_ms`.
    pub window_ms: u32,
    /// Fewest results in the window before a detection (1..=`ETCH_KWS_HISTORY`).
    pub min_count: u32,
    /// Average probability (0..=255) a keyword needs.
    pub threshold: u32,
    /// Quiet time after a detection.
    pub refractory_ms: u32,
}

/// A keyword heard.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct etch_kws_detection_t {
    pub label: u32,
    /// Averaged probability, 0..=255.
    pub score: u32,
    pub time_ms: u32,
}

fn inner_ptr(k: *const etch_kws_t) -> Option<*mut KwsInner> {
    let p = k.cast::<KwsInner>().cast_mut();
    (!p.is_null() && p.is_aligned()).then_some(p)
}

/// Sets up `k` with `config` (checked: `ETCH_INVALID_ARGUMENT` for labels
/// above `ETCH_KWS_MAX_LABELS`, keywords above labels, `min_count` 0 or
/// above `ETCH_KWS_HISTORY`, `window_ms` 0, `threshold` above 255).
///
/// # Safety
/// `k` NULL or a writable `etch_kws_t`; `config` NULL or readable.
#[no_mangle]
pub unsafe extern "C" fn etch_kws_init(
    k: *mut etch_kws_t,
    config: *const etch_kws_config_t,
) -> etch_status_t {
    let (Some(p), false) = (inner_ptr(k), config.is_null() || !config.is_aligned()) else {
        return ETCH_INVALID_ARGUMENT;
    };
    if disjoint(
        Held::NONE,
        &[Region::writes(k, 1, 0), Region::reads(config, 1, 1)],
    )
    .is_err()
    {
        return ETCH_INVALID_ARGUMENT;
    }
    // SAFETY: non-null, aligned, readable (caller).
    let c = unsafe { *config };
    let labels = c.labels as usize;
    let cfg = Config {
        window_ms: c.window_ms,
        min_count: c.min_count as usize,
        threshold: match u8::try_from(c.threshold) {
            Ok(t) => t,
            Err(_) => return ETCH_INVALID_ARGUMENT,
        },
        refractory_ms: c.refractory_ms,
        keywords: c.keywords as usize,
    };
    if labels == 0 || labels > ETCH_KWS_MAX_LABELS || cfg.keywords > labels {
        return ETCH_INVALID_ARGUMENT;
    }
    let Ok(recognizer) = Inner::new(cfg) else {
        return ETCH_INVALID_ARGUMENT;
    };
    // SAFETY: writable, large and aligned enough (caller; const asserts);
    // a whole valid value is written.
    unsafe {
        p.write(KwsInner {
            magic: MAGIC,
            labels: c.labels,
            recognizer,
        })
    };
    ETCH_OK
}

/// Adds one inference's int8 softmax scores (`n` = the configured labels;
/// probability = (q − `zero_point`) / 256, the MLPerf Tiny DS-CNN's output
/// quantization with `zero_point` −128) at `time_ms` of audio. Sets
/// `*detected` to 1 and fills `*out` when this result completes a
/// detection, else sets `*detected` to 0.
///
/// `ETCH_INVALID_STATE` if `k` was not set up by `etch_kws_init`;
/// `ETCH_INVALID_ARGUMENT` for NULL pointers, a wrong `n`, a time before
/// the previous result's, or `*k`, `scores`, `*out` and `*detected`
/// overlapping where one is written. Any int32 `zero_point` is taken:
/// `q - zero_point` is computed without wrapping, then clamped to 0..=255.
///
/// # Safety
/// `k` NULL or an `etch_kws_t` nothing else uses during the call; `scores`
/// NULL or `n` readable bytes; `out` and `detected` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn etch_kws_push_int8(
    k: *mut etch_kws_t,
    time_ms: u32,
    scores: *const i8,
    n: usize,
    zero_point: i32,
    out: *mut etch_kws_detection_t,
    detected: *mut u8,
) -> etch_status_t {
    let Some(p) = inner_ptr(k) else {
        return ETCH_INVALID_ARGUMENT;
    };
    if scores.is_null() || out.is_null() || !out.is_aligned() || detected.is_null() {
        return ETCH_INVALID_ARGUMENT;
    }
    let call = [
        Region::writes(k, 1, 0),
        Region::reads(scores, n, 2),
        Region::writes(out, 1, 5),
        Region::writes(detected, 1, 6),
    ];
    if disjoint(Held::NONE, &call).is_err() {
        return ETCH_INVALID_ARGUMENT;
    }
    // SAFETY: aligned, readable handle (caller); every field is plain
    // integers, so any bytes are a valid KwsInner.
    let inner = unsafe { &mut *p };
    if inner.magic != MAGIC {
        return ETCH_INVALID_STATE;
    }
    if n != inner.labels as usize || n > ETCH_KWS_MAX_LABELS {
        return ETCH_INVALID_ARGUMENT;
    }
    // SAFETY: n readable bytes (caller), n <= 16 so the range cannot wrap
    // past what the caller owns.
    let q = unsafe { core::slice::from_raw_parts(scores, n) };
    let mut probs = [0u8; ETCH_KWS_MAX_LABELS];
    for (o, &v) in probs.iter_mut().zip(q) {
        // In i64: `zero_point` is any int32 the caller passes.
        *o = i64::from(v)
            .saturating_sub(i64::from(zero_point))
            .clamp(0, 255) as u8;
    }
    let event = match inner.recognizer.push(time_ms, &probs) {
        Ok(e) => e,
        Err(_) => return ETCH_INVALID_ARGUMENT,
    };
    // SAFETY: writable (caller).
    unsafe {
        *detected = event.is_some() as u8;
        if let Some(d) = event {
            *out = etch_kws_detection_t {
                label: u32::try_from(d.label).unwrap_or(u32::MAX),
                score: d.score as u32,
                time_ms: d.time_ms,
            };
        }
    }
    ETCH_OK
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> etch_kws_config_t {
        etch_kws_config_t {
            labels: 3,
            keywords: 2,
            window_ms: 1000,
            min_count: 2,
            threshold: 200,
            refractory_ms: 1500,
        }
    }

    #[test]
    fn detects_once_and_checks_arguments() {
        let mut k = etch_kws_t {
            _opaque: [0; ETCH_KWS_WORDS],
        };
        let mut d = etch_kws_detection_t::default();
        let mut hit = 7u8;
        let loud: [i8; 3] = [110, -128, -128]; // label 0 at 238/255
                                               // SAFETY: every pointer is a live local of the right type and length
                                               // (or NULL where the test wants the refusal).
        unsafe {
            // Not set up yet.
            assert_eq!(
                etch_kws_push_int8(&mut k, 0, loud.as_ptr(), 3, -128, &mut d, &mut hit),
                ETCH_INVALID_STATE
            );
            assert_eq!(etch_kws_init(&mut k, &config()), ETCH_OK);
            assert_eq!(
                etch_kws_push_int8(&mut k, 0, loud.as_ptr(), 3, -128, &mut d, &mut hit),
                ETCH_OK
            );
            assert_eq!(hit, 0);
            assert_eq!(
                etch_kws_push_int8(&mut k, 500, loud.as_ptr(), 3, -128, &mut d, &mut hit),
                ETCH_OK
            );
            assert_eq!((hit, d.label, d.score, d.time_ms), (1, 0, 238, 500));
            // Wrong label count, time going backwards, NULLs.
            assert_eq!(
                etch_kws_push_int8(&mut k, 900, loud.as_ptr(), 2, -128, &mut d, &mut hit),
                ETCH_INVALID_ARGUMENT
            );
            assert_eq!(
                etch_kws_push_int8(&mut k, 100, loud.as_ptr(), 3, -128, &mut d, &mut hit),
                ETCH_INVALID_ARGUMENT
            );
            assert_eq!(
                etch_kws_push_int8(&mut k, 900, core::ptr::null(), 3, -128, &mut d, &mut hit),
                ETCH_INVALID_ARGUMENT
            );
            // Any int32 zero point (INT32_MAX with silence once wrapped to a
            // detection with score 255 in release, and aborted in dev).
            let silence = [-128i8; 3];
            let cfg = etch_kws_config_t {
                min_count: 1,
                ..config()
            };
            assert_eq!(etch_kws_init(&mut k, &cfg), ETCH_OK);
            assert_eq!(
                etch_kws_push_int8(&mut k, 0, silence.as_ptr(), 3, i32::MAX, &mut d, &mut hit),
                ETCH_OK
            );
            assert_eq!(hit, 0);
            assert_eq!(etch_kws_init(&mut k, &cfg), ETCH_OK);
            assert_eq!(
                etch_kws_push_int8(&mut k, 0, silence.as_ptr(), 3, i32::MIN, &mut d, &mut hit),
                ETCH_OK
            );
            assert_eq!((hit, d.label, d.score), (1, 0, 255));
            // Out-pointers into the recognizer or the scores.
            let kp: *mut etch_kws_t = &mut k;
            assert_eq!(
                etch_kws_push_int8(kp, 5000, loud.as_ptr(), 3, -128, kp.cast(), &mut hit),
                ETCH_INVALID_ARGUMENT
            );
            assert_eq!(
                etch_kws_push_int8(
                    kp,
                    5000,
                    loud.as_ptr(),
                    3,
                    -128,
                    &mut d,
                    loud.as_ptr().cast_mut().cast()
                ),
                ETCH_INVALID_ARGUMENT
            );
            let bad = etch_kws_config_t {
                labels: 17,
                ..config()
            };
            assert_eq!(etch_kws_init(&mut k, &bad), ETCH_INVALID_ARGUMENT);
            let bad = etch_kws_config_t {
                threshold: 256,
                ..config()
            };
            assert_eq!(etch_kws_init(&mut k, &bad), ETCH_INVALID_ARGUMENT);
        }
    }
}
