//! The C functions called from Rust the way C calls them (raw pointers into
//! caller-owned memory), on a real fixture. The C harness (tests/c-api) is
//! the main test; these exist so that Miri can check the handles' unsafe code
//! (the method's borrow of its own handle, copied handles):
//!
//! ```sh
//! cd rust/etch-ffi
//! FEATURES=op-cortex_m-quantized_linear-out,dtype-i8,dtype-i32,verify
//! cargo +nightly miri test --no-default-features --features $FEATURES tiny_through
//! MIRIFLAGS=-Zmiri-tree-borrows cargo +nightly miri test --no-default-features --features $FEATURES
//! ```
#![allow(clippy::undocumented_unsafe_blocks)]

use core::ffi::c_void;
use core::mem::MaybeUninit;
use core::ptr::{addr_of, addr_of_mut, null, null_mut};

use crate::*;

#[repr(C, align(16))]
struct Aligned<const N: usize>([u8; N]);

static TINY: &Aligned<5408> = &Aligned(*include_bytes!(
    "../../../tests/fixtures/tiny_cm_m33_int8io.pte"
));
const INPUT_NPY: &[u8] = include_bytes!("../../../tests/fixtures/tiny_cm_m33_int8io.input0.npy");
const OUTPUT_NPY: &[u8] = include_bytes!("../../../tests/fixtures/tiny_cm_m33_int8io.output0.npy");

/// The payload of a version-1 .npy file.
fn npy(raw: &[u8]) -> &[u8] {
    assert_eq!(&raw[..6], b"\x93NUMPY");
    let header = u16::from_le_bytes([raw[8], raw[9]]) as usize;
    &raw[10 + header..]
}

#[cfg(feature = "log")]
#[no_mangle]
extern "C" fn etch_log_write(
    _level: core::ffi::c_int,
    _msg: *const core::ffi::c_char,
    _len: usize,
) {
}

fn zeroed<T>() -> T {
    // SAFETY: the handle and info structs are plain integers/arrays.
    unsafe { MaybeUninit::zeroed().assume_init() }
}

#[test]
fn tiny_through_the_c_api() {
    run::<false>()
}

/// Needs `MIRIFLAGS=-Zmiri-tree-borrows` under Miri (see `run`).
#[test]
fn copied_handle_is_refused() {
    run::<true>()
}

fn run<const COPY: bool>() {
    unsafe {
        let mut prog: etch_program_t = zeroed();
        let p = addr_of_mut!(prog);
        let data = TINY.0.as_ptr().cast::<c_void>();
        assert_eq!(etch_program_load(p, data, TINY.0.len(), true), ETCH_OK);

        let mut meta: etch_method_meta_t = zeroed();
        assert_eq!(etch_method_meta(p, c"forward".as_ptr(), &mut meta), ETCH_OK);
        assert_eq!(
            (meta.num_inputs, meta.num_outputs, meta.num_instructions),
            (1, 1, 2)
        );
        assert_eq!(meta.num_planned_buffers, 1);
        let mut size = 0usize;
        assert_eq!(
            etch_method_planned_buffer_size(p, c"forward".as_ptr(), 0, &mut size),
            ETCH_OK
        );
        assert_eq!(size, 48); // ExecuTorch's plan (expected.json)

        let mut arena = Aligned([0u8; 48]);
        let mut state = [0u8; 256]; // 232 B with the decoded kernel calls
        let planned = [arena.0.as_mut_ptr().cast::<c_void>()];
        let lens = [size];
        let mut m: etch_method_t = zeroed();
        let mp = addr_of_mut!(m);
        let st = state.as_mut_ptr().cast::<c_void>();
        // One byte short, then exact.
        let short = meta.method_state_bytes - 1;
        let r = etch_method_load(
            mp,
            p,
            c"forward".as_ptr(),
            st,
            short,
            planned.as_ptr(),
            lens.as_ptr(),
            1,
        );
        assert_eq!(r, ETCH_MEMORY_ALLOCATION_FAILED);
        let mut err: etch_error_t = zeroed();
        assert_eq!(etch_method_error(mp, &mut err), ETCH_OK);
        assert_eq!((err.status, err.at), (ETCH_MEMORY_ALLOCATION_FAILED, 1));
        let exact = meta.method_state_bytes;
        let r = etch_method_load(
            mp,
            p,
            c"forward".as_ptr(),
            st,
            exact,
            planned.as_ptr(),
            lens.as_ptr(),
            1,
        );
        assert_eq!(r, ETCH_OK);

        let input = npy(INPUT_NPY);
        let expected = npy(OUTPUT_NPY);
        for round in 0..2 {
            assert_eq!(
                etch_method_set_input(mp, 0, input.as_ptr().cast(), input.len()),
                ETCH_OK
            );
            let r = if round == 0 {
                etch_method_execute(mp)
            } else {
                // One counter per test thread: the tests run in parallel,
                // and a shared counter made each other's ticks visible.
                extern "C" fn ticks() -> u32 {
                    thread_local!(static T: core::cell::Cell<u32> = const { core::cell::Cell::new(0) });
                    T.with(|t| {
                        let now = t.get();
                        t.set(now.wrapping_add(1));
                        now
                    })
                }
                let mut prof = [0u32; 2];
                let r = etch_method_execute_profiled(mp, Some(ticks), prof.as_mut_ptr(), 2);
                assert_eq!(prof, [1, 1]);
                r
            };
            assert_eq!(r, ETCH_OK);
            let (mut out, mut n) = (null::<c_void>(), 0usize);
            assert_eq!(etch_method_output(mp, 0, &mut out, &mut n), ETCH_OK);
            assert_eq!(core::slice::from_raw_parts(out.cast::<u8>(), n), expected);
        }
        let (mut name, mut len) = (null(), 0usize);
        assert_eq!(
            etch_method_instruction_operator(mp, 1, &mut name, &mut len),
            ETCH_OK
        );
        assert_eq!(
            core::slice::from_raw_parts(name.cast::<u8>(), len),
            b"cortex_m::quantized_linear.out"
        );

        if COPY {
            // A bitwise copy is refused; the original still runs. (The copy
            // reads the handle while the method borrows part of it: Tree
            // Borrows accepts that, Stacked Borrows does not; C's memcpy is
            // invisible to the compiled Rust either way.)
            let mut copy: etch_method_t = zeroed();
            core::ptr::copy_nonoverlapping(addr_of!(m), addr_of_mut!(copy), 1);
            assert_eq!(etch_method_execute(addr_of_mut!(copy)), ETCH_INVALID_STATE);
            assert_eq!(
                etch_method_set_input(mp, 0, input.as_ptr().cast(), input.len()),
                ETCH_OK
            );
            assert_eq!(etch_method_execute(mp), ETCH_OK);
        }

        // Misuse gives codes.
        assert_eq!(etch_method_execute(null_mut()), ETCH_INVALID_ARGUMENT);
        assert_eq!(
            etch_method_set_input(mp, 0, arena.0.as_ptr().cast(), input.len()),
            ETCH_INVALID_ARGUMENT
        );
        let mut zero: etch_method_t = zeroed();
        assert_eq!(etch_method_execute(&mut zero), ETCH_INVALID_STATE);

        // The typed input call: int8 bytes as int8 pass; the same length
        // claimed as float is refused with the input's dtype in `at`.
        assert_eq!(
            etch_method_set_input_typed(mp, 0, ETCH_DTYPE_CHAR, input.as_ptr().cast(), input.len()),
            ETCH_OK
        );
        let r = etch_method_set_input_typed(
            mp,
            0,
            ETCH_DTYPE_FLOAT,
            input.as_ptr().cast(),
            input.len(),
        );
        assert_eq!(r, ETCH_INVALID_TYPE);
        assert_eq!(etch_method_error(mp, &mut err), ETCH_OK);
        assert_eq!(
            (err.status, err.at),
            (ETCH_INVALID_TYPE, ETCH_DTYPE_CHAR as u32)
        );
        assert_eq!(
            etch_method_set_input_typed(mp, 1, ETCH_DTYPE_CHAR, input.as_ptr().cast(), input.len()),
            ETCH_INVALID_ARGUMENT
        );

        // Unloaded: the handle's bytes stay as they were (as a dead handle's
        // stack slot would), yet every call is refused.
        assert_eq!(etch_method_unload(mp), ETCH_OK);
        assert_eq!(etch_method_execute(mp), ETCH_INVALID_STATE);
        assert_eq!(
            etch_method_set_input(mp, 0, input.as_ptr().cast(), input.len()),
            ETCH_INVALID_STATE
        );
        assert_eq!(etch_method_unload(null_mut()), ETCH_INVALID_ARGUMENT);
    }
}

/// The program bytes in writable memory, so a call can be handed a buffer
/// inside them (firmware may keep them in RAM).
#[repr(C, align(16))]
struct Program([u8; 5408]);

thread_local! {
    static RUNNING: core::cell::Cell<*mut etch_method_t> = const { core::cell::Cell::new(null_mut()) };
    static SEEN: core::cell::RefCell<Vec<etch_status_t>> = const { core::cell::RefCell::new(Vec::new()) };
}

/// A cycle counter that calls back into the method it times: every call
/// must be refused as busy.
extern "C" fn reentrant_cycles() -> u32 {
    let m = RUNNING.with(|r| r.get());
    let input = npy(INPUT_NPY);
    let mut err: etch_error_t = zeroed();
    let (mut out, mut n) = (null::<c_void>(), 0usize);
    let mut prof = [0u32; 2];
    let got = unsafe {
        [
            etch_method_execute(m),
            etch_method_set_input(m, 0, input.as_ptr().cast(), input.len()),
            etch_method_output(m, 0, &mut out, &mut n),
            etch_method_error(m, &mut err),
            etch_method_set_instruction_limit(m, 1),
            etch_method_execute_profiled(m, Some(reentrant_cycles), prof.as_mut_ptr(), 2),
            etch_method_unload(m),
        ]
    };
    SEEN.with(|s| s.borrow_mut().extend_from_slice(&got));
    0
}

#[test]
fn overlapping_buffers_and_reentry_are_refused() {
    unsafe {
        let mut bytes = Box::new(Program([0; 5408]));
        bytes.0.copy_from_slice(&TINY.0);
        let data = bytes.0.as_mut_ptr();
        let mut prog: etch_program_t = zeroed();
        let p = addr_of_mut!(prog);
        assert_eq!(etch_program_load(p, data.cast(), 5408, true), ETCH_OK);
        // The handle over the bytes it reads: refused, nothing written.
        let inside = data.add(64).cast::<etch_program_t>();
        assert_eq!(
            etch_program_load(inside, data.cast(), 5408, true),
            ETCH_INVALID_ARGUMENT
        );
        assert_eq!(bytes.0[..], TINY.0[..]);
        let mut n = 0usize;
        assert_eq!(etch_program_num_methods(p, &mut n), ETCH_OK);
        // forward and the int8-I/O config methods
        assert_eq!(n, 11);
        // Out-pointers into the program bytes or the handle.
        assert_eq!(
            etch_program_num_methods(p, data.add(16).cast()),
            ETCH_INVALID_ARGUMENT
        );
        assert_eq!(
            etch_program_num_methods(p, p.cast::<usize>().add(1)),
            ETCH_INVALID_ARGUMENT
        );
        let mut meta: etch_method_meta_t = zeroed();
        assert_eq!(
            etch_method_meta(p, c"forward".as_ptr(), data.add(32).cast()),
            ETCH_INVALID_ARGUMENT
        );
        assert_eq!(bytes.0[..], TINY.0[..]);
        assert_eq!(etch_method_meta(p, c"forward".as_ptr(), &mut meta), ETCH_OK);

        let mut arena = Aligned([0u8; 48]);
        let mut state = [0u8; 256]; // 232 B with the decoded kernel calls
        let planned = [arena.0.as_mut_ptr().cast::<c_void>()];
        let lens = [48usize];
        let mut m: etch_method_t = zeroed();
        let mp = addr_of_mut!(m);
        let st = state.as_mut_ptr().cast::<c_void>();
        let load = |m: *mut etch_method_t, p: *const etch_program_t| {
            etch_method_load(
                m,
                p,
                c"forward".as_ptr(),
                st,
                meta.method_state_bytes,
                planned.as_ptr(),
                lens.as_ptr(),
                1,
            )
        };
        // A method handle over the program handle (the program handle
        // inside the method handle's storage): refused before either is
        // written, so the program handle still works. (Not compared
        // bytewise: its padding bytes are uninitialised.)
        let mut big: etch_method_t = zeroed();
        let inside = addr_of_mut!(big).cast::<etch_program_t>();
        core::ptr::copy_nonoverlapping(addr_of!(prog), inside, 1);
        assert_eq!(load(addr_of_mut!(big), inside), ETCH_INVALID_ARGUMENT);
        let mut n = 0usize;
        assert_eq!(etch_program_num_methods(inside, &mut n), ETCH_OK);
        assert_eq!(n, 11);
        assert_eq!(load(mp, p), ETCH_OK);

        // The profile table over the handle, the program bytes, the state
        // or a planned buffer: refused with at = 2, nothing runs.
        extern "C" fn zero() -> u32 {
            0
        }
        for table in [
            mp.cast::<u32>().add(4),
            data.add(256).cast::<u32>(),
            st.cast::<u32>(),
            planned[0].cast::<u32>().add(2),
        ] {
            let program_bytes = bytes.0;
            assert_eq!(
                etch_method_execute_profiled(mp, Some(zero), table, 2),
                ETCH_INVALID_ARGUMENT
            );
            let mut err: etch_error_t = zeroed();
            assert_eq!(etch_method_error(mp, &mut err), ETCH_OK);
            assert_eq!((err.status, err.at), (ETCH_INVALID_ARGUMENT, 2));
            assert_eq!(bytes.0, program_bytes);
        }
        // Output and error out-pointers into the handle or planned memory.
        let mut out = null::<c_void>();
        let mut len = 0usize;
        assert_eq!(
            etch_method_output(mp, 0, mp.cast::<*const c_void>().add(2), &mut len),
            ETCH_INVALID_ARGUMENT
        );
        assert_eq!(
            etch_method_output(mp, 0, &mut out, planned[0].cast()),
            ETCH_INVALID_ARGUMENT
        );
        assert_eq!(
            etch_method_output(mp, 0, &mut out, addr_of_mut!(out).cast()),
            ETCH_INVALID_ARGUMENT
        );
        assert_eq!(
            etch_method_error(mp, mp.cast::<etch_error_t>()),
            ETCH_INVALID_ARGUMENT
        );
        // An input from the program bytes is fine (both only read).
        let input = npy(INPUT_NPY);
        assert_eq!(
            etch_method_set_input(mp, 0, data.add(1024).cast(), input.len()),
            ETCH_OK
        );

        // Re-entry from the cycle callback: every call refused as busy,
        // the run completes, the method is still loaded and right.
        RUNNING.with(|r| r.set(mp));
        SEEN.with(|s| s.borrow_mut().clear());
        assert_eq!(
            etch_method_set_input(mp, 0, input.as_ptr().cast(), input.len()),
            ETCH_OK
        );
        let mut prof = [0u32; 2];
        assert_eq!(
            etch_method_execute_profiled(mp, Some(reentrant_cycles), prof.as_mut_ptr(), 2),
            ETCH_OK
        );
        let seen = SEEN.with(|s| s.borrow().clone());
        assert_eq!(seen.len(), 4 * 7); // two reads per instruction
        assert!(seen.iter().all(|&s| s == ETCH_INVALID_STATE), "{seen:?}");
        assert_eq!(etch_method_output(mp, 0, &mut out, &mut len), ETCH_OK);
        assert_eq!(
            core::slice::from_raw_parts(out.cast::<u8>(), len),
            npy(OUTPUT_NPY)
        );
        // A load into the running handle is refused as well.
        assert_eq!(etch_method_unload(mp), ETCH_OK);
    }
}

/// tests/programs/running_sum_f32.pte (ExecuTorch 1.5.1: `acc.add_(x);
/// return acc * 0.5`, `acc` a buffer starting at arange(8)) and its steps.
const RUNNING_SUM_LEN: usize = include_bytes!("../../../tests/programs/running_sum_f32.pte").len();
static RUNNING_SUM: &Aligned<RUNNING_SUM_LEN> = &Aligned(*include_bytes!(
    "../../../tests/programs/running_sum_f32.pte"
));
const STEPS: [(&[u8], &[u8]); 4] = [
    (
        include_bytes!("../../../tests/programs/running_sum_f32.forward.steps/0.input0.npy"),
        include_bytes!("../../../tests/programs/running_sum_f32.forward.steps/0.output0.npy"),
    ),
    (
        include_bytes!("../../../tests/programs/running_sum_f32.forward.steps/1.input0.npy"),
        include_bytes!("../../../tests/programs/running_sum_f32.forward.steps/1.output0.npy"),
    ),
    (
        include_bytes!("../../../tests/programs/running_sum_f32.forward.steps/2.input0.npy"),
        include_bytes!("../../../tests/programs/running_sum_f32.forward.steps/2.output0.npy"),
    ),
    (
        include_bytes!("../../../tests/programs/running_sum_f32.forward.steps/3.input0.npy"),
        include_bytes!("../../../tests/programs/running_sum_f32.forward.steps/3.output0.npy"),
    ),
];

/// Streaming through the C API: one loaded method fed one chunk per call
/// keeps its state (ExecuTorch's outputs of the same sequence), and
/// `etch_method_reset` starts the stream over without reloading.
#[cfg(all(
    feature = "op-aten-add-out",
    feature = "op-aten-mul-out",
    feature = "op-aten-copy_-",
    feature = "dtype-f32"
))]
#[test]
fn stream_keeps_state_and_resets() {
    unsafe {
        let mut prog: etch_program_t = zeroed();
        let p = addr_of_mut!(prog);
        let data = RUNNING_SUM.0.as_ptr().cast::<c_void>();
        assert_eq!(
            etch_program_load(p, data, RUNNING_SUM.0.len(), true),
            ETCH_OK
        );
        let mut meta: etch_method_meta_t = zeroed();
        assert_eq!(etch_method_meta(p, c"forward".as_ptr(), &mut meta), ETCH_OK);
        let mut size = 0usize;
        assert_eq!(
            etch_method_planned_buffer_size(p, c"forward".as_ptr(), 0, &mut size),
            ETCH_OK
        );
        let mut arena = Aligned([0xa5u8; 256]);
        assert!(size <= arena.0.len());
        let mut state = [0u8; 256];
        assert!(meta.method_state_bytes <= state.len());
        let planned = [arena.0.as_mut_ptr().cast::<c_void>()];
        let lens = [size];
        let mut m: etch_method_t = zeroed();
        let mp = addr_of_mut!(m);
        let r = etch_method_load(
            mp,
            p,
            c"forward".as_ptr(),
            state.as_mut_ptr().cast(),
            meta.method_state_bytes,
            planned.as_ptr(),
            lens.as_ptr(),
            1,
        );
        assert_eq!(r, ETCH_OK);
        // Odd steps go through the sized setter (the input's own sizes).
        let step = |k: usize| {
            let input = npy(STEPS[k].0);
            let (data, len) = (input.as_ptr().cast(), input.len());
            let r = if k % 2 == 1 {
                etch_method_set_input_sized(mp, 0, [1, 8].as_ptr(), 2, data, len)
            } else {
                etch_method_set_input(mp, 0, data, len)
            };
            assert_eq!(r, ETCH_OK);
            assert_eq!(etch_method_execute(mp), ETCH_OK);
            let (mut out, mut n) = (null::<c_void>(), 0usize);
            assert_eq!(etch_method_output(mp, 0, &mut out, &mut n), ETCH_OK);
            let (mut sizes, mut dim) = ([0i32; 4], 0usize);
            let sp = sizes.as_mut_ptr();
            assert_eq!(etch_method_output_sizes(mp, 0, sp, 4, &mut dim), ETCH_OK);
            assert_eq!((dim, sizes), (2, [1, 8, 0, 0]));
            core::slice::from_raw_parts(out.cast::<u8>(), n).to_vec()
        };
        // A static input takes only its own sizes; a refusal says why.
        let input = npy(STEPS[0].0);
        let r = etch_method_set_input_sized(mp, 0, [1, 7].as_ptr(), 2, input.as_ptr().cast(), 28);
        assert_eq!(r, ETCH_INVALID_ARGUMENT);
        let mut e: etch_error_t = zeroed();
        assert_eq!(etch_method_error(mp, &mut e), ETCH_OK);
        assert_eq!((e.status, e.at), (ETCH_INVALID_ARGUMENT, 0));
        let mut dim = 0usize;
        let r = etch_method_output_sizes(mp, 0, null_mut(), 0, &mut dim);
        assert_eq!((r, dim), (ETCH_INVALID_ARGUMENT, 0));
        for (k, s) in STEPS.iter().enumerate() {
            assert_eq!(step(k), npy(s.1), "step {k}");
        }
        // Step 0 again without a reset: the state carried on, so it differs.
        assert_ne!(step(0), npy(STEPS[0].1));
        assert_eq!(etch_method_reset(mp), ETCH_OK);
        for (k, s) in STEPS.iter().enumerate() {
            assert_eq!(step(k), npy(s.1), "step {k} after the reset");
        }
        assert_eq!(etch_method_reset(null_mut()), ETCH_INVALID_ARGUMENT);
        let mut zero: etch_method_t = zeroed();
        assert_eq!(etch_method_reset(&mut zero), ETCH_INVALID_STATE);
    }
}
