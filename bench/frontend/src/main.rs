//! Bare-metal benchmark of keyword spotting: one 1 s clip to int8 MFCCs,
//! whole-clip and streaming (50 hops of 20 ms, then the features), quantized
//! with the qparams the program itself reports (`input0_scale`/`input0_zp`),
//! then the DS-CNN on them; features and scores checked bit for bit against
//! the host build. Instruction counts per
//! stage come from the QEMU plugin (bench/qemu-plugin): the firmware stores to
//! `ETCH_BENCH_MARKERS[k]` to charge what follows to bucket k.
//! Formatting (`hprintln`) lives only in this harness.
#![no_std]
#![no_main]

use core::ptr::addr_of_mut;

use cortex_m_rt::entry;
use cortex_m_semihosting::{debug, hprintln};
use etch_frontend::{Error, Frontend, Quant, Stream, CLIP_SAMPLES, FEATURES, FRAME_STEP};
use etch_runtime::{Method, Output, Program, Verification};

#[repr(C, align(16))]
struct Aligned<T: ?Sized>(T);
static PCM_BYTES: &Aligned<[u8]> = &Aligned(*include_bytes!(concat!(env!("OUT_DIR"), "/pcm.bin")));
static EXPECTED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/expected.bin"));
static EXPECTED_SCORES: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/expected_scores.bin"));
static MODEL: &Aligned<[u8]> = &Aligned(*include_bytes!(concat!(env!("OUT_DIR"), "/model.pte")));
const MODEL_NAME: &str = include_str!(concat!(env!("OUT_DIR"), "/model_name.txt"));

const ARENA_BYTES: usize = 32 * 1024;
const STATE_BYTES: usize = 4096;
static mut ARENA: Aligned<[u8; ARENA_BYTES]> = Aligned([0; ARENA_BYTES]);
static mut STATE: [u8; STATE_BYTES] = [0; STATE_BYTES];

const MAX_MARKERS: usize = 8;
/// Buckets: 0 harness, 1 whole clip, 2 stream hops, 3 stream features,
/// 4 inference.
#[no_mangle]
static mut ETCH_BENCH_MARKERS: [u32; MAX_MARKERS] = [0; MAX_MARKERS];

static mut FRONTEND: Frontend = Frontend::new();
static mut STREAM: Stream = Stream::new();
static mut PCM: [i16; CLIP_SAMPLES] = [0; CLIP_SAMPLES];

#[inline(always)]
fn mark(bucket: usize) {
    // SAFETY: a volatile store into a static array the plugin observes; the
    // index is bounded, and nothing else runs concurrently.
    unsafe {
        let p = addr_of_mut!(ETCH_BENCH_MARKERS) as *mut u32;
        core::ptr::write_volatile(p.add(bucket.min(MAX_MARKERS - 1)), 1);
    }
}

extern "C" {
    static mut _stack_start: u32;
    static mut __ebss: u32;
}
const PAINT: u32 = 0xC0DE_5A5A;

fn paint_stack() {
    // SAFETY: writes only between the end of .bss and 256 bytes below the
    // current stack pointer, memory no one uses yet.
    unsafe {
        let bottom = addr_of_mut!(__ebss) as usize;
        let sp = cortex_m::register::msp::read() as usize - 256;
        let mut p = (bottom + 3) & !3;
        while p < sp {
            core::ptr::write_volatile(p as *mut u32, PAINT);
            p += 4;
        }
    }
}

fn stack_high_water() -> usize {
    // SAFETY: reads the painted region set up by `paint_stack`.
    unsafe {
        let bottom = (addr_of_mut!(__ebss) as usize + 3) & !3;
        let top = addr_of_mut!(_stack_start) as usize;
        let mut p = bottom;
        while p < top && core::ptr::read_volatile(p as *const u32) == PAINT {
            p += 4;
        }
        top - p
    }
}

#[entry]
fn main() -> ! {
    // SAFETY: main runs once; these statics are only borrowed here.
    let (fe, st, pcm) = unsafe {
        (
            &mut *addr_of_mut!(FRONTEND),
            &mut *addr_of_mut!(STREAM),
            &mut *addr_of_mut!(PCM),
        )
    };
    for (s, b) in pcm.iter_mut().zip(PCM_BYTES.0.chunks_exact(2)) {
        *s = i16::from_le_bytes([b[0], b[1]]);
    }
    let Ok(program) = Program::from_bytes(&MODEL.0, Verification::InternalConsistency) else {
        hprintln!("model load failed");
        debug::exit(debug::EXIT_FAILURE);
        halt()
    };
    let (Some(scale), Some(zp)) = (
        config(&program, "input0_scale"),
        config(&program, "input0_zp"),
    ) else {
        hprintln!("no input0_scale/input0_zp");
        debug::exit(debug::EXIT_FAILURE);
        halt()
    };
    let Ok(q) = Quant::new(scale as f32, zp as i32) else {
        debug::exit(debug::EXIT_FAILURE);
        halt()
    };
    let mut out = [0i8; FEATURES];

    // Stack used by the harness alone (subtracted from the figures below).
    paint_stack();
    let baseline = stack_high_water();

    paint_stack();
    mark(1);
    let r = whole(fe, pcm, q, &mut out);
    mark(0);
    let whole_stack = stack_high_water();
    let whole_ok = r.is_ok() && out.iter().zip(EXPECTED).all(|(&a, &b)| a as u8 == b);

    out = [0; FEATURES];
    paint_stack();
    let r = stream(st, fe, pcm, q, &mut out);
    mark(0);
    let stream_stack = stack_high_water();
    let stream_ok = r.is_ok() && out.iter().zip(EXPECTED).all(|(&a, &b)| a as u8 == b);

    // The model on the features.
    // SAFETY: main runs once; these statics are only borrowed here.
    let (arena, state): (&mut [u8], &mut [u8]) =
        unsafe { (&mut (*addr_of_mut!(ARENA)).0, &mut *addr_of_mut!(STATE)) };
    let scores_ok = infer(&program, arena, state, &out);

    hprintln!("model {}", MODEL_NAME);
    hprintln!("input_qparams {} {}", scale, zp);
    hprintln!("scores bit_exact {}", scores_ok);
    hprintln!(
        "whole_clip bit_exact {} stack_bytes {}",
        whole_ok,
        whole_stack.saturating_sub(baseline)
    );
    hprintln!(
        "stream bit_exact {} stack_bytes {}",
        stream_ok,
        stream_stack.saturating_sub(baseline)
    );
    hprintln!(
        "frontend_bytes {} stream_bytes {}",
        Frontend::BYTES,
        Stream::BYTES
    );
    debug::exit(if whole_ok && stream_ok && scores_ok {
        debug::EXIT_SUCCESS
    } else {
        debug::EXIT_FAILURE
    });
    halt()
}

fn halt() -> ! {
    loop {
        cortex_m::asm::wfi();
    }
}

/// The value of a 0-instruction config method (`input0_scale`, ...).
fn config(program: &Program<'_>, name: &str) -> Option<f64> {
    let meta = program.method_meta(name).ok()?;
    let mut state = [0u8; 16];
    let mut planned: [&mut [u8]; 0] = [];
    let mut m = Method::load(&meta, &mut state, &mut planned, etch_kernels::KERNELS, &[]).ok()?;
    m.execute().ok()?;
    match m.output(0).ok()? {
        Output::Double(v) => Some(v),
        Output::Int(v) => Some(v as f64),
        _ => None,
    }
}

/// Runs forward on `features` (marker bucket 4); true if the scores equal the host's.
fn infer(
    program: &Program<'_>,
    arena: &mut [u8],
    state: &mut [u8],
    features: &[i8; FEATURES],
) -> bool {
    let Ok(meta) = program.method_meta("forward") else {
        return false;
    };
    let mut planned = [arena];
    let Ok(mut method) = Method::load(&meta, state, &mut planned, etch_kernels::KERNELS, &[])
    else {
        return false;
    };
    let mut bytes = [0u8; FEATURES];
    for (b, &f) in bytes.iter_mut().zip(features.iter()) {
        *b = f as u8;
    }
    if method.set_input_bytes(0, &bytes).is_err() {
        return false;
    }
    mark(4);
    let r = method.execute();
    mark(0);
    r.is_ok() && matches!(method.output(0), Ok(Output::Tensor(t)) if t.data == EXPECTED_SCORES)
}

// Out of line, so their stack frames are measured (not merged into main's).
#[inline(never)]
fn whole(
    fe: &mut Frontend,
    pcm: &[i16; CLIP_SAMPLES],
    q: Quant,
    out: &mut [i8; FEATURES],
) -> Result<i16, Error> {
    fe.mfcc_int8(pcm, q, out)
}

#[inline(never)]
fn stream(
    st: &mut Stream,
    fe: &mut Frontend,
    pcm: &[i16; CLIP_SAMPLES],
    q: Quant,
    out: &mut [i8; FEATURES],
) -> Result<i16, Error> {
    mark(2);
    for hop in pcm.chunks_exact(FRAME_STEP) {
        if let Ok(h) = hop.try_into() {
            st.push(fe, h);
        }
    }
    mark(3);
    st.features_int8(q, out)
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    debug::exit(debug::EXIT_FAILURE);
    halt()
}
