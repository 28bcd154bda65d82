//! Entry points that pull the reader and the runtime into a static library
//! the way a firmware would, so their linked code can be inspected.
#![no_std]

/// Verifies a `.pte` in place; returns ExecuTorch's error code (0 = Ok).
#[no_mangle]
pub extern "C" fn probe_verify(data: *const u8, len: usize) -> u32 {
    let Some(bytes) = bytes(data, len) else { return 0x12 };
    match etch_pte::PteFile::new_checked(bytes) {
        Ok(_) => 0,
        Err(e) => e.code.as_u32(),
    }
}

/// Loads method "forward" with no kernels into the given buffers and returns
/// the state bytes it needs (or the error code with the top bit set).
#[cfg(feature = "runtime")]
#[no_mangle]
pub extern "C" fn probe_state_bytes(data: *const u8, len: usize) -> u32 {
    use etch_runtime::{Program, Verification};
    let Some(bytes) = bytes(data, len) else { return 0x8000_0012 };
    let r = Program::from_bytes(bytes, Verification::InternalConsistency)
        .and_then(|p| p.method_meta("forward"))
        .and_then(|m| m.method_state_bytes(&[]));
    match r {
        Ok(n) => n as u32,
        Err(e) => 0x8000_0000 | e.code.as_u32(),
    }
}

/// The whole core runtime without kernels: loads "forward" with the kernels
/// the caller passes (opaque to the optimiser, so the executor's kernel and
/// delegate paths stay linked), sets input 0, executes and reads output 0.
/// Returns the first output byte or the error code with the top bit set. This
/// is what the core-flash budget is measured on (`check-embedded.sh`).
#[cfg(feature = "runtime")]
#[no_mangle]
pub extern "C" fn probe_core(
    data: *const u8,
    len: usize,
    input: *const u8,
    input_len: usize,
    state: *mut u8,
    state_len: usize,
    arena: *mut u8,
    arena_len: usize,
) -> u32 {
    use etch_runtime::{Backend, Kernel, Method, Output, Program, Verification};
    let (Some(bytes), Some(input)) = (bytes(data, len), bytes(input, input_len)) else {
        return 0x8000_0012;
    };
    let (Some(state), Some(arena)) = (bytes_mut(state, state_len), bytes_mut(arena, arena_len))
    else {
        return 0x8000_0012;
    };
    let kernels: &[Kernel] = core::hint::black_box(&[]);
    let backends: &[&dyn Backend] = core::hint::black_box(&[]);
    let mut planned = [arena];
    let r = Program::from_bytes(bytes, Verification::InternalConsistency)
        .and_then(|p| p.method_meta("forward"))
        .and_then(|meta| {
            let mut m = Method::load(&meta, state, &mut planned, kernels, backends)?;
            m.set_input_bytes(0, input)?;
            m.execute()?;
            match m.output(0)? {
                Output::Tensor(t) => Ok(t.data.first().copied().unwrap_or(0) as u32),
                _ => Ok(0),
            }
        });
    r.unwrap_or_else(|e| 0x8000_0000 | e.code.as_u32())
}

/// Loads "forward" with the selected kernels (the DS-CNN ones with
/// `kernels`) into static memory, runs it on the input bytes given, and
/// returns the first output byte (or the error code with the top bit set):
/// the whole path a firmware takes.
#[cfg(feature = "select")]
#[no_mangle]
pub extern "C" fn probe_run(data: *const u8, len: usize, input: *const u8, input_len: usize) -> u32 {
    use etch_runtime::{Method, Output, Program, Verification};
    #[repr(C, align(16))]
    struct Arena([u8; 20480]);
    static mut ARENA: Arena = Arena([0; 20480]);
    static mut STATE: [u8; 4096] = [0; 4096];
    let (Some(bytes), Some(input)) = (bytes(data, len), bytes(input, input_len)) else {
        return 0x8000_0012;
    };
    // SAFETY: the probe is single-threaded and not reentrant; these statics
    // are only touched here (a firmware would own them the same way).
    let (arena, state): (&mut [u8], &mut [u8]) = unsafe {
        (
            &mut (*core::ptr::addr_of_mut!(ARENA)).0,
            &mut *core::ptr::addr_of_mut!(STATE),
        )
    };
    let mut planned = [arena];
    let r = Program::from_bytes(bytes, Verification::InternalConsistency)
        .and_then(|p| p.method_meta("forward"))
        .and_then(|meta| {
            let mut m = Method::load(&meta, state, &mut planned, etch_kernels::KERNELS, &[])?;
            m.set_input_bytes(0, input)?;
            m.execute()?;
            match m.output(0)? {
                Output::Tensor(t) => Ok(t.data.first().copied().unwrap_or(0) as u32),
                _ => Ok(0),
            }
        });
    r.unwrap_or_else(|e| 0x8000_0000 | e.code.as_u32())
}

/// Indexes without a check the compiler can prove: links the panic path.
#[cfg(feature = "canary")]
#[no_mangle]
pub extern "C" fn probe_verify_canary(i: usize) -> u8 {
    static TABLE: [u8; 4] = [1, 2, 3, 4];
    TABLE[i]
}

fn bytes<'a>(data: *const u8, len: usize) -> Option<&'a [u8]> {
    if data.is_null() {
        return None;
    }
    // SAFETY: the caller passes a readable buffer of `len` bytes that outlives
    // the call; this is the C boundary, as in etch-ffi.
    Some(unsafe { core::slice::from_raw_parts(data, len) })
}

#[cfg(feature = "runtime")]
fn bytes_mut<'a>(data: *mut u8, len: usize) -> Option<&'a mut [u8]> {
    if data.is_null() {
        return None;
    }
    // SAFETY: the caller passes a writable buffer of `len` bytes that outlives
    // the call and is not otherwise accessed during it.
    Some(unsafe { core::slice::from_raw_parts_mut(data, len) })
}

#[cfg(not(test))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    loop {}
}
