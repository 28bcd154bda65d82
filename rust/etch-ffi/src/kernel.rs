//! Kernels written in C: `etch_register_kernel` adds one to the registry's
//! free slots (`ETCH_KERNEL_REGISTRY_SIZE` minus the selected kernels), and
//! the `etch_kernel_*` calls let it read its arguments while it runs.
//!
//! The schema string is parsed with the runtime's own schema parser (the one
//! `op!` runs at compile time), so a registered kernel's argument kinds are
//! checked against every call when a method loads, as the built-in ones are.

use core::ffi::{c_char, c_void};

use etch_runtime::context::required;
use etch_runtime::{Error, ErrorCode, KernelContext, Result};

use crate::program::etch_tensor_info_t;
use crate::ptr::{disjoint, name, put, Held, Region, Span};
use crate::registry;
use crate::status::{code, etch_status_t, invalid_argument, ETCH_OK};

/// Opaque (C sees an incomplete type): the running kernel's view of its
/// call, valid only during the call it was passed to.
pub struct etch_kernel_context_t {
    _private: [u8; 0],
}

/// A kernel written in C: reads its arguments and writes its outputs through
/// `ctx`, returns `ETCH_OK` or an error status (which `etch_method_execute`
/// then returns, with the instruction's index).
pub type etch_kernel_fn =
    Option<unsafe extern "C" fn(ctx: *mut etch_kernel_context_t) -> etch_status_t>;

/// Registers a kernel written in C for the operator `schema` declares, e.g.
/// `"etch_demo::scaled_softsign.out(Tensor x, float s, *, Tensor(a!) out) -> Tensor(a!)"`
/// (ExecuTorch's schema line, namespace first, NUL-terminated, at most
/// `ETCH_MAX_NAME_LEN` bytes). The string must stay valid and unchanged for
/// as long as the library is used (a string literal): the registry keeps a
/// pointer to it. Registered kernels take the registry's free slots
/// (`etch_kernel_registry_capacity() - etch_kernel_count()`, set at build
/// time by `ETCH_KERNEL_REGISTRY_SIZE` / `CONFIG_ETCH_KERNEL_REGISTRY_SIZE`)
/// and are searched after the built-in ones when a method loads.
///
/// While the kernel runs, its method is busy: any `etch_method_*` call on
/// that method from the kernel returns `ETCH_INVALID_STATE` and changes
/// nothing. The `etch_kernel_*` accessors refuse out-pointers that overlap
/// each other, the context or the tensor they describe
/// (`ETCH_INVALID_ARGUMENT`).
///
/// Returns, as ExecuTorch's `register_kernels`:
/// `ETCH_REGISTRATION_EXCEEDING_MAX_KERNELS` when no slot is free,
/// `ETCH_REGISTRATION_ALREADY_REGISTERED` when the operator has a kernel
/// (built in or registered); `ETCH_INVALID_ARGUMENT` for a NULL `run` or
/// `schema`, or a schema the parser rejects (unknown type, no `->`, more
/// than `ETCH_MAX_KERNEL_ARGS` positions). The registry is unchanged on error.
///
/// # Safety
/// Register before loading the methods that use the kernel, from one thread
/// at a time and not during any other etch call (the registry is the
/// library's only global state; like ExecuTorch's `register_kernels` it is
/// not thread-safe). `schema` as above.
#[no_mangle]
pub unsafe extern "C" fn etch_register_kernel(
    schema: *const c_char,
    run: etch_kernel_fn,
) -> etch_status_t {
    let Some(run) = run else {
        return invalid_argument("null kernel function", 1).code.as_u32();
    };
    // SAFETY: `schema` is NULL or a terminated string valid for the
    // library's lifetime (the contract above), so `'static` is honest.
    let schema: &'static str = match unsafe { name(schema, 0) } {
        Ok(s) => s,
        Err(e) => return e.code.as_u32(),
    };
    // SAFETY: one registration at a time, as the contract above requires.
    code(&unsafe { registry::register_c(schema, run) })
}

/// Most positions (arguments and returns) a C kernel's schema may have.
pub const ETCH_MAX_KERNEL_ARGS: usize = 16;

/// The run function of every C kernel: finds the registered C function by
/// the registry slot being run and calls it.
pub(crate) fn run_c_kernel(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    let f = ctx
        .kernel_index()
        .and_then(registry::c_function)
        .ok_or(Error::new(
            ErrorCode::OperatorMissing,
            "no C function for this kernel",
            0,
        ))?;
    let p = (ctx as *mut KernelContext<'_, '_>).cast::<etch_kernel_context_t>();
    // SAFETY: `f` was registered as a C kernel function; `p` points to the
    // live context for the duration of the call, which is all the accessors
    // below use it for.
    let status = unsafe { f(p) };
    match status {
        ETCH_OK => Ok(()),
        s => Err(Error::new(
            ErrorCode::from_u32(s).unwrap_or(ErrorCode::Internal),
            "C kernel failed",
            s,
        )),
    }
}

/// The context behind a C kernel's `ctx`, after checking `call` (the
/// accessor's out-pointers) against the context and each other.
///
/// # Safety
/// `ctx` must be NULL or the pointer passed to the running kernel.
unsafe fn context<'p>(
    ctx: *mut etch_kernel_context_t,
    call: &[Region],
) -> Result<&'p mut KernelContext<'p, 'p>> {
    if ctx.is_null() {
        return Err(invalid_argument("null kernel context", 0));
    }
    let this = [Span::of_raw(
        ctx.cast::<KernelContext<'_, '_>>().cast_const(),
        1,
    )];
    disjoint(
        Held {
            reads: &[],
            writes: &this,
        },
        call,
    )?;
    // SAFETY: `run_c_kernel` made `ctx` from a live `&mut KernelContext`
    // that outlives the kernel call; the lifetimes shrink to this access.
    Ok(unsafe { &mut *ctx.cast::<KernelContext<'p, 'p>>() })
}

/// Number of positions in the kernel's call (arguments, then returns), as
/// the schema lists them.
///
/// # Safety
/// `ctx` as passed to the kernel; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn etch_kernel_num_args(
    ctx: *mut etch_kernel_context_t,
    out: *mut usize,
) -> etch_status_t {
    // SAFETY: the caller's contract above.
    code(
        &unsafe { context(ctx, &[Region::writes(out, 1, 1)]) }
            .and_then(|c| unsafe { put(out, c.num_args(), 1) }),
    )
}

/// Argument `i` as an integer (`int`, `SymInt`, `ScalarType`).
///
/// # Safety
/// `ctx` as passed to the kernel; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn etch_kernel_arg_int(
    ctx: *mut etch_kernel_context_t,
    i: usize,
    out: *mut i64,
) -> etch_status_t {
    // SAFETY: the caller's contract above.
    code(
        &unsafe { context(ctx, &[Region::writes(out, 1, 2)]) }
            .and_then(|c| unsafe { put(out, c.int(i)?, 2) }),
    )
}

/// Argument `i` as a double: a `float`, or a `Scalar` (int and bool
/// converted).
///
/// # Safety
/// `ctx` as passed to the kernel; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn etch_kernel_arg_double(
    ctx: *mut etch_kernel_context_t,
    i: usize,
    out: *mut f64,
) -> etch_status_t {
    // SAFETY: the caller's contract above.
    code(
        &unsafe { context(ctx, &[Region::writes(out, 1, 2)]) }
            .and_then(|c| unsafe { put(out, c.scalar_f64(i)?, 2) }),
    )
}

/// Argument `i` as a bool.
///
/// # Safety
/// `ctx` as passed to the kernel; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn etch_kernel_arg_bool(
    ctx: *mut etch_kernel_context_t,
    i: usize,
    out: *mut bool,
) -> etch_status_t {
    // SAFETY: the caller's contract above.
    code(
        &unsafe { context(ctx, &[Region::writes(out, 1, 2)]) }
            .and_then(|c| unsafe { put(out, c.bool(i)?, 2) }),
    )
}

/// Tensor argument `i`, read-only: its data (constant data may sit in
/// flash: never write through it) and its dtype, sizes, dim order and
/// byte count. `ETCH_INVALID_ARGUMENT` if the argument is not a tensor or
/// is None.
///
/// # Safety
/// `ctx` as passed to the kernel; `data` and `info` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn etch_kernel_input(
    ctx: *mut etch_kernel_context_t,
    i: usize,
    data: *mut *const c_void,
    info: *mut etch_tensor_info_t,
) -> etch_status_t {
    let call = [Region::writes(data, 1, 2), Region::writes(info, 1, 3)];
    // SAFETY: the caller's contract above.
    let r = unsafe { context(ctx, &call) }.and_then(|c| {
        let ([t], []) = c.io([i], [])?;
        let t = required(t, i)?;
        // Neither out-pointer may be the tensor's data (constant data may
        // be flash).
        let d = [Span::of(t.data)];
        disjoint(
            Held {
                reads: &d,
                writes: &[],
            },
            &call,
        )?;
        let i = etch_tensor_info_t::of_view(t.dtype, &t.shape, t.data.len());
        // SAFETY: the caller's contract above.
        unsafe {
            put(data, t.data.as_ptr().cast::<c_void>(), 2)?;
            put(info, i, 3)
        }
    });
    code(&r)
}

/// Tensor argument `i` for writing (the `out` argument): its planned
/// memory and its dtype, sizes, dim order and byte count.
/// `ETCH_INVALID_ARGUMENT` if the argument is not a tensor or is constant.
///
/// # Safety
/// `ctx` as passed to the kernel; `data` and `info` NULL or writable. The
/// data pointer is valid during this kernel call only.
#[no_mangle]
pub unsafe extern "C" fn etch_kernel_output(
    ctx: *mut etch_kernel_context_t,
    i: usize,
    data: *mut *mut c_void,
    info: *mut etch_tensor_info_t,
) -> etch_status_t {
    let call = [Region::writes(data, 1, 2), Region::writes(info, 1, 3)];
    // SAFETY: the caller's contract above.
    let r = unsafe { context(ctx, &call) }.and_then(|c| {
        let ([], [t]) = c.io([], [i])?;
        // Neither out-pointer may be the tensor's data the kernel writes.
        let d = [Span::of(t.data)];
        disjoint(
            Held {
                reads: &[],
                writes: &d,
            },
            &call,
        )?;
        let i = etch_tensor_info_t::of_view(t.dtype, &t.shape, t.data.len());
        // SAFETY: the caller's contract above.
        unsafe {
            put(data, t.data.as_mut_ptr().cast::<c_void>(), 2)?;
            put(info, i, 3)
        }
    });
    code(&r)
}
