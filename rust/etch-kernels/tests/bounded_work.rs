//! Corrupted pooling parameters must not buy unbounded kernel work: each of
//! these single-byte corruptions of a real fixture turns a pooling window,
//! stride or padding into a huge value that the verifier cannot judge (they
//! are operator arguments, not offsets). Before the kernels clipped windows
//! to the input extent (as CMSIS-NN's `arm_avgpool_s8` and the portable
//! kernels' `tap` ranges do) each of these ran for minutes; now each ends
//! quickly, with the exact outcome asserted below. The default test harness
//! has no timeout, so a regression shows as a hang, not a wrong answer.

use std::path::Path;

use etch_runtime::{ErrorCode, Method, Program, Verification};

struct Aligned(Vec<u128>, usize);
impl Aligned {
    fn new(len: usize) -> Self {
        Aligned(vec![0; len.div_ceil(16) + 1], len)
    }
    fn bytes(&self) -> &[u8] {
        &bytemuck::cast_slice(&self.0)[..self.1]
    }
    fn bytes_mut(&mut self) -> &mut [u8] {
        &mut bytemuck::cast_slice_mut(&mut self.0)[..self.1]
    }
}

/// Where the run stopped: `Err((stage, code))` or `Ok(())` after execute.
fn run(file: &[u8], verification: Verification) -> Result<(), (&'static str, ErrorCode)> {
    let mut a = Aligned::new(file.len());
    a.bytes_mut().copy_from_slice(file);
    let program = Program::from_bytes(a.bytes(), verification).map_err(|e| ("program", e.code))?;
    let meta = program
        .method_meta("forward")
        .map_err(|e| ("meta", e.code))?;
    let mut arena = Aligned::new(256 * 1024);
    let mut state = vec![0u8; 16 * 1024];
    let mut planned: Vec<&mut [u8]> = vec![arena.bytes_mut()];
    let mut method = Method::load(&meta, &mut state, &mut planned, etch_kernels::KERNELS, &[])
        .map_err(|e| ("load", e.code))?;
    let input = vec![0x11u8; method.input_meta(0).map(|i| i.nbytes).unwrap_or(0)];
    method
        .set_input_bytes(0, &input)
        .map_err(|e| ("input", e.code))?;
    method.execute().map_err(|e| ("execute", e.code))?;
    method.output(0).map_err(|e| ("output", e.code))?;
    Ok(())
}

fn corrupted(name: &str, pos: usize, flip: u8) -> Vec<u8> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let mut bytes = std::fs::read(dir.join(format!("{name}.pte"))).unwrap();
    // The unmodified program runs: the corruption is what is being tested.
    assert_eq!(run(&bytes, Verification::Minimal), Ok(()), "{name} runs");
    bytes[pos] ^= flip;
    bytes
}

fn check(name: &str, pos: usize, flip: u8, want: Result<(), (&'static str, ErrorCode)>) {
    let bytes = corrupted(name, pos, flip);
    for v in [Verification::Minimal, Verification::InternalConsistency] {
        assert_eq!(run(&bytes, v), want, "{name} byte {pos} ^ {flip:#x}, {v:?}");
    }
}

/// `aten::max_pool2d_with_indices.out` with a corrupted kernel/stride list.
#[test]
fn portable_max_pool_window_is_clipped() {
    check("fzoo_portable_f32", 4803, 0xff, Ok(()));
}

/// `cortex_m::quantized_avg_pool2d.out` (Armv8-M Mainline build).
#[test]
fn cortex_m_avg_pool_window_is_clipped_m33() {
    check("zoo_cm_m33", 6338, 0xff, Ok(()));
}

/// `cortex_m::quantized_avg_pool2d.out` (Armv6-M build, int8 I/O).
#[test]
fn cortex_m_avg_pool_window_is_clipped_m0() {
    check("dscnn_cm_m0_int8io", 6594, 0x80, Ok(()));
}

// The same bound at the kernel level: windows far larger than the input,
// padded far beyond it. The loops used to walk every tap of such a window
// (2^40 of them here); clipped to the input they visit its 4 pixels.

use etch_kernels::cortex_m::{avg_pool_s8, max_pool_s8, Nhwc, Window};
use etch_kernels::KernelError;

const HUGE: usize = 1 << 40;

fn window(kernel: usize, padding: usize, dilation: usize) -> Window {
    Window {
        input: Nhwc {
            n: 1,
            h: 2,
            w: 2,
            c: 1,
        },
        output: Nhwc {
            n: 1,
            h: 1,
            w: 1,
            c: 1,
        },
        kernel: (kernel, kernel),
        stride: (1, 1),
        padding: (padding, padding),
        dilation: (dilation, dilation),
    }
}

#[test]
fn cortex_m_avg_pool_huge_window_averages_the_input() {
    let input = [10i8, 21, -3, 4];
    let mut out = [0i8];
    // Tap k sits at k − 2^40: the last two taps of each axis are inside.
    avg_pool_s8(&window(HUGE + 2, HUGE, 1), (-128, 127), &input, &mut out).unwrap();
    // (10 + 21 − 3 + 4 + 2) / 4 = 8 (half away from zero).
    assert_eq!(out, [8]);
    // Only the last tap inside: the top-left pixel alone.
    avg_pool_s8(&window(HUGE + 1, HUGE, 1), (-128, 127), &input, &mut out).unwrap();
    assert_eq!(out, [10]);
    // Every tap in the padding: CMSIS-NN would divide by zero.
    assert_eq!(
        avg_pool_s8(&window(HUGE, HUGE, 1), (-128, 127), &input, &mut out),
        Err(KernelError::InvalidArgument)
    );
}

#[test]
fn cortex_m_max_pool_huge_window_takes_the_input_max() {
    let input = [10i8, 21, -3, 4];
    let mut out = [0i8];
    max_pool_s8(&window(HUGE, 0, 1), (-128, 127), &input, &mut out).unwrap();
    assert_eq!(out, [21]);
    max_pool_s8(&window(HUGE, 1, 1), (-128, 5), &input, &mut out).unwrap();
    assert_eq!(out, [5]);
    // Dilation 2 from tap 0 at −1: taps at 1 only (row 1, column 1).
    max_pool_s8(&window(HUGE, 1, 2), (-128, 127), &input, &mut out).unwrap();
    assert_eq!(out, [4]);
    // Dilation 0 would repeat one tap 2^40 times.
    assert_eq!(
        max_pool_s8(&window(HUGE, 0, 0), (-128, 127), &input, &mut out),
        Err(KernelError::InvalidArgument)
    );
}
