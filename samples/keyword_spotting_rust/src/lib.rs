//! etch live keyword spotting in Rust on Zephyr: the same listener as
//! `samples/keyword_spotting_live`, written against the etch crates directly.
//!
//! - audio: Zephyr's DMIC API (`dmic_configure` / `dmic_trigger` /
//!   `dmic_read`) through bindings bindgen generates from Zephyr's own header
//!   (build.rs); blocks go into a fixed-capacity `heapless::Deque` audio
//!   ring, from which 20 ms hops are taken whatever the driver's block size;
//! - features: etch-frontend's streaming MFCC (`Stream`), every hop;
//! - inference: etch-runtime + the DS-CNN's kernels (etch-kernels with
//!   exactly the model's selection), every 500 ms on the last second;
//! - detections: etch-kws's recognizer (posterior averaging over 1 s,
//!   threshold 200/255, 1.5 s refractory period), logged through the `log`
//!   crate into Zephyr's LOG, and kept in a `heapless::Vec` for the summary.
#![no_std]

// Zephyr's Rust support: the panic handler and the kernel bindings.
extern crate zephyr;

use core::ffi::c_void;
use core::fmt::Write as _;

use etch_frontend::{Frontend, Quant, Stream, FEATURES, FRAME_STEP, HOPS};
use etch_kws::{Config, Detection, Recognizer};
use etch_runtime::{Method, Output, Program, Verification};
use heapless::{Deque, String, Vec};
use log::{error, info, warn};

/// Generated from <zephyr/audio/dmic.h> by bindgen (build.rs): not linted.
#[allow(warnings, clippy::all, clippy::undocumented_unsafe_blocks)]
mod dmic {
    include!(concat!(env!("OUT_DIR"), "/dmic.rs"));
}

const LABELS: [&str; 12] = [
    "down", "go", "left", "no", "off", "on", "right", "stop", "up", "yes", "silence", "unknown",
];
const RATE: u32 = 16_000;
const HOP_MS: u32 = 20;
const EVERY_HOPS: usize = 25; // 500 ms
const BLOCK_BYTES: u32 = (FRAME_STEP * 2) as u32;
const READ_TIMEOUT_MS: i32 = 2000;
const ENODATA: i32 = 61;
const CONFIG: Config = Config {
    window_ms: 1000,
    min_count: 2,
    threshold: 200,
    refractory_ms: 1500,
    keywords: 10,
};

#[repr(C, align(16))]
struct Aligned<T: ?Sized>(T);

static MODEL: &Aligned<[u8]> =
    &Aligned(*include_bytes!("../../../models/kws/dscnn_kws_int8io.pte"));

extern "C" {
    fn kws_mic() -> *const dmic::device;
    fn kws_mic_ready() -> bool;
    fn kws_audio_slab() -> *mut c_void;
    fn kws_audio_free(block: *mut c_void);
    fn kws_log(level: u32, msg: *const u8, len: usize);
    fn kws_stack_report();
    fn kws_exit(code: i32);
}

/// The `log` crate into Zephyr's LOG: each record formatted into a
/// fixed-size buffer (no heap), then one LOG_ERR/WRN/INF/DBG call.
struct ZephyrLog;

impl log::Log for ZephyrLog {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }
    fn log(&self, record: &log::Record<'_>) {
        let mut msg: String<200> = String::new();
        // A message longer than the buffer is cut, never an error.
        let _ = write!(msg, "{}", record.args());
        // SAFETY: msg is a valid buffer of msg.len() bytes for the call.
        unsafe { kws_log(record.level() as u32, msg.as_ptr(), msg.len()) };
    }
    fn flush(&self) {}
}

static LOGGER: ZephyrLog = ZephyrLog;

/// The value of a 0-instruction config method (`input0_scale`, ...).
fn config_value(program: &Program<'_>, name: &str) -> Option<f64> {
    let meta = program.method_meta(name).ok()?;
    let mut state = [0u8; 64];
    let state = state.get_mut(..meta.method_state_bytes(etch_kernels::KERNELS).ok()?)?;
    let mut m = Method::load(&meta, state, &mut [], etch_kernels::KERNELS, &[]).ok()?;
    m.execute().ok()?;
    match m.output(0).ok()? {
        Output::Double(v) => Some(v),
        Output::Int(v) => Some(v as f64),
        _ => None,
    }
}

fn start_microphone(mic: *const dmic::device) -> Result<(), i32> {
    let mut pcm = dmic::pcm_stream_cfg {
        pcm_rate: RATE,
        pcm_width: 16,
        block_size: BLOCK_BYTES as u16,
        // SAFETY: a static slab defined in glue.c.
        mem_slab: unsafe { kws_audio_slab() }.cast(),
    };
    let mut cfg = dmic::dmic_cfg::default();
    cfg.io.min_pdm_clk_freq = 1_000_000;
    cfg.io.max_pdm_clk_freq = 3_500_000;
    cfg.io.min_pdm_clk_dc = 40;
    cfg.io.max_pdm_clk_dc = 60;
    cfg.streams = &mut pcm;
    cfg.channel.req_num_streams = 1;
    cfg.channel.req_num_chan = 1;
    // SAFETY: plain computation in a static inline function.
    cfg.channel.req_chan_map_lo =
        unsafe { dmic::dmic_build_channel_map(0, 0, dmic::pdm_lr_PDM_CHAN_LEFT) };
    // SAFETY: `mic` is the devicetree's ready DMIC device; cfg and pcm live
    // for the call (the driver copies what it keeps).
    let ret = unsafe { dmic::dmic_configure(mic, &mut cfg) };
    if ret < 0 {
        error!("microphone configuration failed: {}", ret);
        return Err(ret);
    }
    // SAFETY: as above.
    let ret = unsafe { dmic::dmic_trigger(mic, dmic::dmic_trigger_DMIC_TRIGGER_START) };
    if ret < 0 {
        error!("microphone start failed: {}", ret);
        return Err(ret);
    }
    Ok(())
}

#[no_mangle]
extern "C" fn rust_main() {
    // SAFETY: called once, before anything logs, from the only thread.
    unsafe {
        let _ = log::set_logger_racy(&LOGGER);
        log::set_max_level_racy(log::LevelFilter::Info);
    }
    if let Err(what) = listen() {
        error!("stopped: {}", what);
    }
    // The log line is the status, as in the C sample: twister reads it (a
    // non-zero exit code would fail the bad-input scenario that expects it).
    let code = 0;
    // SAFETY: plain C calls without arguments: the stack high-water mark
    // (stack painting), then the end of the native_sim process (a no-op on
    // boards).
    unsafe {
        kws_stack_report();
        kws_exit(code);
    }
}

fn listen() -> Result<(), &'static str> {
    let program = Program::from_bytes(&MODEL.0, Verification::InternalConsistency)
        .map_err(|_| "model load")?;
    let meta = program.method_meta("forward").map_err(|_| "method_meta")?;
    let mut arena = Aligned([0u8; 20_480]);
    let planned_bytes = meta
        .memory_planned_buffer_size(0)
        .map_err(|_| "plan size")?;
    let state_bytes = meta.method_state_bytes(etch_kernels::KERNELS).map_err(|_| "state size")?;
    let (planned, rest) = arena
        .0
        .split_at_mut_checked(planned_bytes)
        .ok_or("arena too small for the planned buffer")?;
    let state = rest
        .get_mut(..state_bytes)
        .ok_or("arena too small for the state")?;
    let mut planned = [planned];
    let mut method = Method::load(&meta, state, &mut planned, etch_kernels::KERNELS, &[])
        .map_err(|_| "method load")?;
    let scale = config_value(&program, "input0_scale").ok_or("input0_scale")?;
    let zp = config_value(&program, "input0_zp").ok_or("input0_zp")?;
    let out_zp = config_value(&program, "output0_zp").ok_or("output0_zp")? as i32;
    let q = Quant::new(scale as f32, zp as i32).map_err(|_| "input quantization")?;
    let mut recognizer = Recognizer::<12, 16>::new(CONFIG).map_err(|_| "recognizer")?;
    info!(
        "model {} bytes, {} kernels, arena {} bytes, inference every {} ms",
        MODEL.0.len(),
        etch_kernels::KERNELS.len(),
        planned_bytes + state_bytes,
        EVERY_HOPS as u32 * HOP_MS
    );

    // SAFETY: a devicetree device pointer from glue.c.
    let mic = unsafe { kws_mic() };
    // SAFETY: as above.
    if !unsafe { kws_mic_ready() } {
        return Err("microphone not ready");
    }
    start_microphone(mic).map_err(|_| "microphone")?;
    info!("listening");

    let mut fe = Frontend::new();
    let mut stream = Stream::new();
    // Audio ring: driver blocks in, 20 ms hops out (any block size works).
    let mut ring: Deque<i16, { 4 * FRAME_STEP }> = Deque::new();
    let mut heard: Vec<Detection, 32> = Vec::new();
    let (mut hops, mut inferences) = (0usize, 0u32);
    let mut features = [0i8; FEATURES];
    loop {
        let mut block: *mut c_void = core::ptr::null_mut();
        let mut size: usize = 0;
        // SAFETY: the started DMIC device; block and size are written by the driver.
        let ret = unsafe { dmic::dmic_read(mic, 0, &mut block, &mut size, READ_TIMEOUT_MS) };
        if ret == -ENODATA {
            break;
        }
        if ret < 0 {
            error!("microphone read failed: {}", ret);
            break;
        }
        {
            // SAFETY: the driver hands over `size` bytes of 16-bit PCM in a
            // 4-aligned slab block, ours until freed below.
            let pcm = unsafe { core::slice::from_raw_parts(block as *const i16, size / 2) };
            for &s in pcm {
                if ring.push_back(s).is_err() {
                    warn!("audio ring full: samples dropped");
                    break;
                }
            }
        }
        // SAFETY: the block came from the slab and is no longer used.
        unsafe { kws_audio_free(block) };
        while ring.len() >= FRAME_STEP {
            let mut hop = [0i16; FRAME_STEP];
            for h in hop.iter_mut() {
                *h = ring.pop_front().unwrap_or(0);
            }
            stream.push(&mut fe, &hop);
            hops += 1;
            if hops < HOPS || !(hops - HOPS).is_multiple_of(EVERY_HOPS) {
                continue;
            }
            stream
                .features_int8(q, &mut features)
                .map_err(|_| "features")?;
            let bytes: [u8; FEATURES] = features.map(|x| x as u8);
            method.set_input_bytes(0, &bytes).map_err(|_| "set_input")?;
            method.execute().map_err(|_| "execute")?;
            let Ok(Output::Tensor(out)) = method.output(0) else {
                return Err("output");
            };
            let mut probs = [0u8; 12];
            for (p, &b) in probs.iter_mut().zip(out.data.iter()) {
                *p = (b as i8 as i32 - out_zp).clamp(0, 255) as u8;
            }
            inferences += 1;
            let time_ms = hops as u32 * HOP_MS;
            if let Some(d) = recognizer.push(time_ms, &probs).map_err(|_| "recognizer")? {
                info!(
                    "detected \"{}\" at {} ms (score {}/255)",
                    LABELS.get(d.label).copied().unwrap_or("?"),
                    d.time_ms,
                    d.score
                );
                let _ = heard.push(d);
            }
        }
    }
    // SAFETY: as above.
    unsafe { dmic::dmic_trigger(mic, dmic::dmic_trigger_DMIC_TRIGGER_STOP) };
    info!(
        "done: {} ms of audio, {} inferences, {} detections",
        hops as u32 * HOP_MS,
        inferences,
        heard.len()
    );
    Ok(())
}
