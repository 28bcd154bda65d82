//! Bare-metal benchmark: loads the embedded `.pte` with static, caller-owned
//! buffers, runs it `RUNS` times, checks the output bit for bit against the
//! reference and reports through semihosting.
//!
//! Per-op instruction counts: before each instruction the firmware stores to
//! `ETCH_BENCH_MARKERS[1 + index]`, after it to `ETCH_BENCH_MARKERS[0]`
//! ("runtime"). The QEMU plugin (`bench/qemu-plugin`) watches stores into that
//! array and charges executed instructions to the bucket last written.
//! Formatting (`hprintln`) lives only in this harness, never in etch.
#![no_std]
#![no_main]

use core::ptr::addr_of_mut;
use core::sync::atomic::{AtomicUsize, Ordering};

use cortex_m_rt::entry;
use cortex_m_semihosting::{debug, hprintln};
use etch_runtime::ExecutionObserver;

const RUNS: u32 = 3;
const MAX_MARKERS: usize = 256;

#[repr(C, align(16))]
struct Aligned<T: ?Sized>(T);

static MODEL: &Aligned<[u8]> = &Aligned(*include_bytes!(concat!(env!("OUT_DIR"), "/model.pte")));
static INPUT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/input.bin"));
static EXPECTED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/expected.bin"));
const MODEL_NAME: &str = include_str!(concat!(env!("OUT_DIR"), "/model_name.txt"));

// ARENA_BYTES: the program's planned buffer (build.rs).
include!(concat!(env!("OUT_DIR"), "/arena.rs"));
// Method state: the DS-CNN's is 4,331 B (2,688 B of it the kernels'
// scratch, 1,607 B its decoded kernel calls), MobileNetV1's 6,465 B.
const STATE_BYTES: usize = 8192;
static mut ARENA: Aligned<[u8; ARENA_BYTES]> = Aligned([0; ARENA_BYTES]);
static mut STATE: [u8; STATE_BYTES] = [0; STATE_BYTES];

/// Written, never read: the plugin attributes instructions by the address stored to.
#[no_mangle]
static mut ETCH_BENCH_MARKERS: [u32; MAX_MARKERS] = [0; MAX_MARKERS];

#[inline(always)]
fn mark(bucket: usize) {
    // SAFETY: a volatile store into a static array the plugin observes; the
    // index is bounded, and nothing else runs concurrently.
    unsafe {
        let p = addr_of_mut!(ETCH_BENCH_MARKERS) as *mut u32;
        core::ptr::write_volatile(p.add(bucket.min(MAX_MARKERS - 1)), 1);
    }
}

struct Markers;
impl ExecutionObserver for Markers {
    fn before(&mut self, index: u32, _op: Option<u32>) {
        mark(1 + index as usize);
    }
    fn after(&mut self, _index: u32) {
        mark(0);
    }
}

extern "C" {
    static mut _stack_start: u32;
    static mut __ebss: u32;
}

const PAINT: u32 = 0xC0DE_5A5A;
/// Whole-firmware high-water mark before the per-inference repaint.
static PEAK_BEFORE_REPAINT: AtomicUsize = AtomicUsize::new(0);

/// Fills the unused stack below the current frame with a pattern.
#[inline(never)]
fn paint_stack() {
    // SAFETY: writes only between the end of .bss and 32 bytes below this
    // function's stack pointer, memory no one uses yet (no interrupts run).
    unsafe {
        let bottom = addr_of_mut!(__ebss) as usize;
        let sp = cortex_m::register::msp::read() as usize - 32;
        let mut p = (bottom + 3) & !3;
        while p < sp {
            core::ptr::write_volatile(p as *mut u32, PAINT);
            p += 4;
        }
    }
}

/// Bytes of stack ever used: from the top down to the lowest overwritten word.
fn stack_high_water() -> usize {
    stack_used_below(addr_of_mut!(_stack_start) as usize)
}

/// Bytes of stack used below `top` since the last `paint_stack`: from `top`
/// down to the lowest overwritten word (at most 32 B plus `paint_stack`'s
/// frame more than the callee really used: that part is never painted).
fn stack_used_below(top: usize) -> usize {
    // SAFETY: reads the painted region set up by `paint_stack`.
    unsafe {
        let bottom = (addr_of_mut!(__ebss) as usize + 3) & !3;
        let mut p = bottom;
        while p < top && core::ptr::read_volatile(p as *const u32) == PAINT {
            p += 4;
        }
        top - p
    }
}

/// With `unaligned-trap`: an unaligned access faulted (the firmware fails).
/// Trapping is switched off first: the formatting below is core's, built
/// without strict alignment.
#[cfg(feature = "unaligned-trap")]
#[cortex_m_rt::exception]
unsafe fn HardFault(frame: &cortex_m_rt::ExceptionFrame) -> ! {
    trap(false);
    // CFSR (0xE000ED28): bit 24 = UNALIGNED (UsageFault status).
    // SAFETY: a read of a System Control Block register.
    let cfsr = unsafe { core::ptr::read_volatile(0xE000_ED28 as *const u32) };
    hprintln!(
        "fault: CFSR 0x{:08x} (UNALIGNED {}) pc 0x{:08x}",
        cfsr,
        (cfsr >> 24) & 1,
        frame.pc()
    );
    debug::exit(debug::EXIT_FAILURE);
    loop {}
}

/// CCR.UNALIGN_TRP (bit 3 of 0xE000ED14) on or off: with `unaligned-trap`
/// it is on exactly while etch's code runs (load, input, execute, output).
#[inline(always)]
fn trap(on: bool) {
    #[cfg(feature = "unaligned-trap")]
    // SAFETY: a read-modify-write of a System Control Block register.
    unsafe {
        let ccr = 0xE000_ED14 as *mut u32;
        let v = core::ptr::read_volatile(ccr);
        core::ptr::write_volatile(ccr, if on { v | 1 << 3 } else { v & !(1 << 3) });
        cortex_m::asm::dsb();
        cortex_m::asm::isb();
    }
    let _ = on;
}

#[entry]
fn main() -> ! {
    #[cfg(feature = "unaligned-trap")]
    hprintln!("unaligned_trap on around etch's calls");
    paint_stack();
    // SAFETY: main runs once; these statics are only borrowed here.
    let (arena, state): (&mut [u8], &mut [u8]) =
        unsafe { (&mut (*addr_of_mut!(ARENA)).0, &mut *addr_of_mut!(STATE)) };
    mark(MAX_MARKERS - 2); // load
    let ok = run(arena, state);
    mark(MAX_MARKERS - 1);
    let peak = stack_high_water().max(PEAK_BEFORE_REPAINT.load(Ordering::Relaxed));
    hprintln!("stack_bytes {}", peak);
    debug::exit(if ok { debug::EXIT_SUCCESS } else { debug::EXIT_FAILURE });
    loop {}
}

/// Every call into etch, each behind `#[inline(never)]`. Without these, LTO
/// inlines `Method::load`, `execute` and `output` into `run` and their code
/// is charged to the harness; as named `etch_bench::rt::*` symbols it is
/// counted as core runtime flash by `bench/report.py` (the wrappers add only
/// a call and a return each; formatting stays in `run`).
mod rt {
    use etch_runtime::{Error, Method, MethodMeta, Program, Verification};

    use crate::Markers;

    #[inline(never)]
    pub fn program(bytes: &[u8]) -> Result<Program<'_>, Error> {
        crate::trap(true);
        let r = Program::from_bytes(bytes, Verification::InternalConsistency);
        crate::trap(false);
        r
    }

    #[inline(never)]
    pub fn meta<'a>(program: &Program<'a>) -> Result<MethodMeta<'a>, Error> {
        program.method_meta("forward")
    }

    /// (method state bytes, arena bytes, instructions).
    #[inline(never)]
    pub fn needs(meta: &MethodMeta<'_>) -> (usize, usize, usize) {
        (
            meta.method_state_bytes(etch_kernels::KERNELS).unwrap_or(usize::MAX),
            meta.memory_planned_buffer_size(0).unwrap_or(usize::MAX),
            meta.num_instructions().unwrap_or(0),
        )
    }

    #[inline(never)]
    pub fn operator<'a>(meta: &MethodMeta<'a>, i: usize) -> Option<(&'a str, &'a str)> {
        meta.operator_of_instruction(i).ok()
    }

    #[inline(never)]
    pub fn load<'a, 'm>(
        meta: &MethodMeta<'a>,
        state: &'m mut [u8],
        planned: &'m mut [&'m mut [u8]],
    ) -> Result<Method<'a, 'm>, Error> {
        crate::trap(true);
        let r = Method::load(meta, state, planned, etch_kernels::KERNELS, &[]);
        crate::trap(false);
        r
    }

    #[inline(never)]
    pub fn set_input(method: &mut Method<'_, '_>, bytes: &[u8]) -> Result<(), Error> {
        crate::trap(true);
        let r = method.set_input_bytes(0, bytes);
        crate::trap(false);
        r
    }

    #[inline(never)]
    pub fn execute(method: &mut Method<'_, '_>) -> Result<(), Error> {
        crate::trap(true);
        let r = method.execute_observed(&mut Markers);
        crate::trap(false);
        r
    }

    /// Whether output 0 is a tensor holding exactly `expected`.
    #[inline(never)]
    pub fn output_is(method: &Method<'_, '_>, expected: &[u8]) -> bool {
        matches!(method.output(0), Ok(etch_runtime::Output::Tensor(t)) if t.data == expected)
    }
}

fn run(arena: &mut [u8], state: &mut [u8]) -> bool {
    let program = match rt::program(&MODEL.0) {
        Ok(p) => p,
        Err(e) => {
            hprintln!("load error 0x{:x}", e.code.as_u32());
            return false;
        }
    };
    let Ok(meta) = rt::meta(&program) else {
        return false;
    };
    let (need, arena_need, instructions) = rt::needs(&meta);
    hprintln!("model {}", MODEL_NAME);
    hprintln!("method_state_bytes {}", need);
    hprintln!("arena_bytes {}", arena_need);
    for i in 0..instructions {
        if let Some((n, o)) = rt::operator(&meta, i) {
            hprintln!("instruction {} {}.{}", i, n, o);
        }
    }
    let mut planned = [arena];
    let mut method = match rt::load(&meta, state, &mut planned) {
        Ok(m) => m,
        Err(e) => {
            hprintln!("method load error 0x{:x} at {}", e.code.as_u32(), e.at());
            return false;
        }
    };
    let mut exact = true;
    for run in 0..RUNS {
        if rt::set_input(&mut method, INPUT).is_err() {
            return false;
        }
        // Stack of one inference, by painting: everything below this frame.
        let top = cortex_m::register::msp::read() as usize;
        // Repainting forgets what was used so far: keep it (load and store:
        // Armv6-M has no atomic read-modify-write; nothing else runs).
        let peak = PEAK_BEFORE_REPAINT.load(Ordering::Relaxed);
        PEAK_BEFORE_REPAINT.store(peak.max(stack_high_water()), Ordering::Relaxed);
        paint_stack();
        mark(MAX_MARKERS - 3); // inference start (outside ops: runtime)
        let r = rt::execute(&mut method);
        mark(MAX_MARKERS - 1);
        let inference_stack = stack_used_below(top);
        if run == 0 {
            hprintln!("inference_stack_bytes {}", inference_stack);
        }
        if let Err(e) = r {
            hprintln!("execute error 0x{:x} at {}", e.code.as_u32(), e.at());
            return false;
        }
        let same = rt::output_is(&method, EXPECTED);
        hprintln!("run {} bit_exact {}", run, same);
        exact &= same;
    }
    hprintln!("runs {}", RUNS);
    exact
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    debug::exit(debug::EXIT_FAILURE);
    loop {}
}
