//! C-ABI entry points that keep the front-end's public functions alive
//! through `--gc-sections`, so the linked image is what a firmware using them
//! contains.
#![no_std]

use etch_frontend::{Frontend, Quant, Stream, CLIP_SAMPLES, FEATURES, FRAME_STEP};

/// Whole clip to int8 features; returns the clip's peak or -(error code).
#[no_mangle]
pub extern "C" fn probe_mfcc_int8(
    fe: &mut Frontend,
    pcm: &[i16; CLIP_SAMPLES],
    scale: f32,
    zp: i32,
    out: &mut [i8; FEATURES],
) -> i32 {
    match Quant::new(scale, zp).and_then(|q| fe.mfcc_int8(pcm, q, out)) {
        Ok(p) => p as i32,
        Err(e) => -(e.code() as i32),
    }
}

/// One streaming hop.
#[no_mangle]
pub extern "C" fn probe_stream_push(st: &mut Stream, fe: &mut Frontend, hop: &[i16; FRAME_STEP]) {
    st.push(fe, hop);
}

/// Streaming features of the last second.
#[no_mangle]
pub extern "C" fn probe_stream_int8(
    st: &Stream,
    scale: f32,
    zp: i32,
    out: &mut [i8; FEATURES],
) -> i32 {
    match Quant::new(scale, zp).and_then(|q| st.features_int8(q, out)) {
        Ok(p) => p as i32,
        Err(e) => -(e.code() as i32),
    }
}

#[cfg(feature = "canary")]
#[no_mangle]
pub extern "C" fn probe_canary(xs: &[u8; 4], i: usize) -> u8 {
    xs[i]
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    loop {}
}
