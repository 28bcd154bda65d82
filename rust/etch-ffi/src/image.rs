//! Model images (`etch-image`): a `.pte` behind a checked 64-byte header
//! (magic, version, length, generation, SHA-256), as a flash slot holds it,
//! and what an update must pass before it is activated: its image checked,
//! its program verified, every operator it calls present in this firmware.

use core::ffi::{c_char, c_void};

use crate::program::program_for;
use crate::ptr::{self, disjoint, Held, Region};
use crate::registry::kernels;
use crate::status::{code, etch_status_t};
use crate::{ETCH_INVALID_ARGUMENT, ETCH_INVALID_PROGRAM, ETCH_OK};
use etch_image::{Fault, Image, ImageHeader, Repr, Slot, HEADER_LEN};

/// Bytes of an image header; the `.pte` follows at this offset.
pub const ETCH_IMAGE_HEADER_LEN: usize = 64;
/// Layout version of the header this library reads and writes.
pub const ETCH_IMAGE_VERSION: u32 = 1;

/// Why `etch_image_check` refused an image (`*fault`; 0 = none).
pub type etch_image_fault_t = u32;
pub const ETCH_IMAGE_FAULT_NONE: etch_image_fault_t = 0;
/// Fewer bytes than the header, or than the header says the image has.
pub const ETCH_IMAGE_FAULT_TRUNCATED: etch_image_fault_t = 1;
/// Not an image (an erased or foreign slot).
pub const ETCH_IMAGE_FAULT_BAD_MAGIC: etch_image_fault_t = 2;
/// A header layout this firmware does not know.
pub const ETCH_IMAGE_FAULT_BAD_VERSION: etch_image_fault_t = 3;
/// Header inconsistent (length, reserved bytes, a header written in part).
pub const ETCH_IMAGE_FAULT_BAD_HEADER: etch_image_fault_t = 4;
/// Header + `.pte` longer than the slot (`capacity`) or the address space.
pub const ETCH_IMAGE_FAULT_LENGTH_OVERFLOW: etch_image_fault_t = 5;
/// The `.pte`'s SHA-256 is not the header's.
pub const ETCH_IMAGE_FAULT_HASH_MISMATCH: etch_image_fault_t = 6;

// Literals for cbindgen; the numbers are etch-image's.
const _: () = {
    assert!(ETCH_IMAGE_HEADER_LEN == HEADER_LEN);
    assert!(ETCH_IMAGE_VERSION == etch_image::VERSION as u32);
    assert!(ETCH_IMAGE_FAULT_TRUNCATED == Fault::Truncated as u32);
    assert!(ETCH_IMAGE_FAULT_BAD_MAGIC == Fault::BadMagic as u32);
    assert!(ETCH_IMAGE_FAULT_BAD_VERSION == Fault::BadVersion as u32);
    assert!(ETCH_IMAGE_FAULT_BAD_HEADER == Fault::BadHeader as u32);
    assert!(ETCH_IMAGE_FAULT_LENGTH_OVERFLOW == Fault::LengthOverflow as u32);
    assert!(ETCH_IMAGE_FAULT_HASH_MISMATCH == Fault::HashMismatch as u32);
};

/// A checked image.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct etch_image_info_t {
    /// The `.pte` inside the checked bytes (at offset `ETCH_IMAGE_HEADER_LEN`),
    /// ready for `etch_program_load`.
    pub pte: *const u8,
    pub pte_len: usize,
    /// Generation: of two valid images the newer wins (`etch_image_newer`).
    pub sequence: u32,
    /// SHA-256 of the `.pte`.
    pub sha256: [u8; 32],
}

/// Checks the image at the start of `image` (`len` bytes: a slot's
/// contents, or what an update received) that may be at most `capacity`
/// bytes long (the slot's size): magic, version, header consistency, the
/// header and `.pte` within `capacity` and within `len`, and the `.pte`'s
/// SHA-256.
/// `ETCH_OK` fills `*info`; a refused image gives `ETCH_INVALID_PROGRAM`
/// with the reason in `*fault` (`ETCH_IMAGE_FAULT_*`; `fault` may be NULL).
/// `info` and `fault` must not overlap the image or each other
/// (`ETCH_INVALID_ARGUMENT`).
///
/// # Safety
/// `image` NULL or `len` readable bytes; `info` NULL or writable; `fault`
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn etch_image_check(
    image: *const c_void,
    len: usize,
    capacity: usize,
    info: *mut etch_image_info_t,
    fault: *mut etch_image_fault_t,
) -> etch_status_t {
    // (A NULL `fault` is an empty region.)
    let call = [
        Region::reads(image.cast::<u8>(), len, 0),
        Region::writes(info, 1, 3),
        Region::writes(fault, 1, 4),
    ];
    if disjoint(Held::NONE, &call).is_err() {
        return ETCH_INVALID_ARGUMENT;
    }
    // SAFETY: the caller's contract for `image`/`len`.
    let bytes = match unsafe { ptr::bytes(image, len, 0) } {
        Ok(b) => b,
        Err(_) => return ETCH_INVALID_ARGUMENT,
    };
    if info.is_null() || !info.is_aligned() || !fault.is_aligned() {
        return ETCH_INVALID_ARGUMENT;
    }
    let (status, why) = match Image::new_checked(bytes, capacity) {
        Ok(img) => {
            let value = etch_image_info_t {
                pte: img.pte.as_ptr(),
                pte_len: img.pte.len(),
                sequence: img.repr.sequence,
                sha256: img.repr.sha256,
            };
            // SAFETY: `info` non-null, aligned, writable (caller), disjoint
            // from the image (checked above).
            unsafe { info.write(value) };
            (ETCH_OK, ETCH_IMAGE_FAULT_NONE)
        }
        Err(f) => (ETCH_INVALID_PROGRAM, f as u32),
    };
    if !fault.is_null() {
        // SAFETY: non-null, aligned, writable (caller), disjoint (checked).
        unsafe { fault.write(why) };
    }
    status
}

/// Checks only the header at `header` (`len` >= `ETCH_IMAGE_HEADER_LEN`
/// bytes; the `.pte` may be elsewhere, e.g. an update whose header is in
/// RAM and whose `.pte` is already in flash): magic, version, header
/// consistency. `ETCH_OK` fills `*info` with `pte` = NULL and the length,
/// generation and digest the header promises; a refused header gives
/// `ETCH_INVALID_PROGRAM` and the reason in `*fault` (may be NULL).
/// Compare the digest with `etch_image_header()`'s over the `.pte`.
///
/// # Safety
/// As `etch_image_check`.
#[no_mangle]
pub unsafe extern "C" fn etch_image_check_header(
    header: *const c_void,
    len: usize,
    info: *mut etch_image_info_t,
    fault: *mut etch_image_fault_t,
) -> etch_status_t {
    let call = [
        Region::reads(header.cast::<u8>(), len, 0),
        Region::writes(info, 1, 2),
        Region::writes(fault, 1, 3),
    ];
    if disjoint(Held::NONE, &call).is_err()
        || info.is_null()
        || !info.is_aligned()
        || !fault.is_aligned()
    {
        return ETCH_INVALID_ARGUMENT;
    }
    // SAFETY: the caller's contract for `header`/`len`.
    let bytes = match unsafe { ptr::bytes(header, len, 0) } {
        Ok(b) => b,
        Err(_) => return ETCH_INVALID_ARGUMENT,
    };
    let (status, why) = match Repr::parse(&ImageHeader::new_unchecked(bytes)) {
        Ok(r) => {
            let value = etch_image_info_t {
                pte: core::ptr::null(),
                pte_len: usize::try_from(r.pte_len).unwrap_or(usize::MAX),
                sequence: r.sequence,
                sha256: r.sha256,
            };
            // SAFETY: non-null, aligned, writable (caller), disjoint (checked).
            unsafe { info.write(value) };
            (ETCH_OK, ETCH_IMAGE_FAULT_NONE)
        }
        Err(f) => (ETCH_INVALID_PROGRAM, f as u32),
    };
    if !fault.is_null() {
        // SAFETY: non-null, aligned, writable (caller), disjoint (checked).
        unsafe { fault.write(why) };
    }
    status
}

/// Writes the `ETCH_IMAGE_HEADER_LEN`-byte header of an image of the `.pte`
/// at `pte` (`pte_len` bytes) as generation `sequence` into `header`
/// (`header_len` >= `ETCH_IMAGE_HEADER_LEN`, else `ETCH_INVALID_ARGUMENT`;
/// a `.pte` over 4 GiB: `ETCH_INVALID_PROGRAM`). The image is the header
/// followed by the `.pte`. `header` must not overlap the `.pte`.
///
/// # Safety
/// `header` NULL or `header_len` writable bytes; `pte` NULL or `pte_len`
/// readable bytes.
#[no_mangle]
pub unsafe extern "C" fn etch_image_header(
    header: *mut c_void,
    header_len: usize,
    pte: *const c_void,
    pte_len: usize,
    sequence: u32,
) -> etch_status_t {
    let call = [
        Region::writes(header.cast::<u8>(), header_len, 0),
        Region::reads(pte.cast::<u8>(), pte_len, 2),
    ];
    if header_len < HEADER_LEN || disjoint(Held::NONE, &call).is_err() {
        return ETCH_INVALID_ARGUMENT;
    }
    // SAFETY: the caller's contracts; the two ranges are disjoint (checked).
    let (out, pte) = match unsafe {
        (
            ptr::bytes_mut(header, header_len, 0),
            ptr::bytes(pte, pte_len, 2),
        )
    } {
        (Ok(o), Ok(p)) => (o, p),
        _ => return ETCH_INVALID_ARGUMENT,
    };
    match Repr::of(pte, sequence) {
        Ok(r) => {
            // (A loop, not copy_from_slice: no length-check panic path.)
            for (d, b) in out.iter_mut().zip(r.emit()) {
                *d = b;
            }
            ETCH_OK
        }
        Err(_) => ETCH_INVALID_PROGRAM,
    }
}

/// Whether generation `a` is newer than `b` (serial-number arithmetic: the
/// counter may wrap).
#[no_mangle]
pub extern "C" fn etch_image_newer(a: u32, b: u32) -> bool {
    etch_image::newer(a, b)
}

/// The order to try two slots at boot: `order[0]` the slot (0 = A, 1 = B)
/// of the newer valid image (A on a tie), `order[1]` the other valid one as
/// the fallback, -1 where there is none. `a_valid`/`b_valid` say whether
/// each slot's image passed `etch_image_check`; `a_seq`/`b_seq` are their
/// generations (ignored when invalid).
///
/// # Safety
/// `order` NULL or two writable bytes.
#[no_mangle]
pub unsafe extern "C" fn etch_image_boot_order(
    a_valid: bool,
    a_seq: u32,
    b_valid: bool,
    b_seq: u32,
    order: *mut i8,
) -> etch_status_t {
    // SAFETY: the caller's contract.
    let out = match unsafe { ptr::bytes_mut(order.cast(), 2, 4) } {
        Ok(o) => o,
        Err(_) => return ETCH_INVALID_ARGUMENT,
    };
    let order = etch_image::boot_order(a_valid.then_some(a_seq), b_valid.then_some(b_seq));
    for (o, s) in out.iter_mut().zip(order) {
        *o = match s {
            Some(Slot::A) => 0,
            Some(Slot::B) => 1,
            None => 0xFF, // -1
        };
    }
    ETCH_OK
}

/// Called by `etch_program_missing_operators` for each operator a method
/// calls that this firmware has no kernel for. The strings are inside the
/// program bytes and not NUL-terminated: use the lengths (`%.*s`).
pub type etch_missing_operator_fn = Option<
    unsafe extern "C" fn(
        ctx: *mut c_void,
        method: *const c_char,
        method_len: usize,
        name: *const c_char,
        name_len: usize,
        overload: *const c_char,
        overload_len: usize,
    ),
>;

/// Counts the distinct operators the program's methods call that this
/// firmware's kernel registry lacks (what `etch_method_load` would refuse
/// with `ETCH_OPERATOR_MISSING`), calling `f` (may be NULL) once for each,
/// with the first method (in program order) that calls it. `ETCH_OK` with
/// `*count` = 0 means every method can load as far as kernels go: check a
/// program received in an update this way before activating it. `count`
/// must not overlap the handle or the program bytes. An operator missing
/// in a later method is compared with the earlier methods' missing ones
/// (methods x earlier methods walks, no memory).
///
/// # Safety
/// `p` NULL or an `etch_program_t`; `count` NULL or writable; `f` NULL or a
/// function that may be called with `ctx`.
#[no_mangle]
pub unsafe extern "C" fn etch_program_missing_operators(
    p: *const crate::etch_program_t,
    f: etch_missing_operator_fn,
    ctx: *mut c_void,
    count: *mut usize,
) -> etch_status_t {
    // SAFETY: pointer contracts as documented above.
    code(
        &unsafe { program_for(p, &[Region::writes(count, 1, 3)]) }.and_then(|program| {
            let mut total = 0usize;
            for i in 0..program.num_methods()? {
                let method = program.method_name(i)?;
                let meta = program.method_meta(method)?;
                let mut earlier = Ok(());
                meta.for_each_missing_operator(kernels(), |name, overload| {
                    // Missing depends on the registry, not on the method:
                    // one an earlier method calls was named there.
                    match missing_before(&program, i, name, overload) {
                        Ok(false) => {}
                        Ok(true) => return,
                        Err(e) => {
                            earlier = Err(e);
                            return;
                        }
                    }
                    total = total.saturating_add(1);
                    if let Some(f) = f {
                        // SAFETY: `f` is the caller's callback; the strings
                        // point into the program bytes, valid for the call.
                        unsafe {
                            f(
                                ctx,
                                method.as_ptr().cast(),
                                method.len(),
                                name.as_ptr().cast(),
                                name.len(),
                                overload.as_ptr().cast(),
                                overload.len(),
                            )
                        };
                    }
                })?;
                earlier?;
            }
            // SAFETY: checked against the handle and program bytes above.
            unsafe { ptr::put(count, total, 3) }
        }),
    )
}

/// Whether a method before method `i` calls the missing operator
/// `name.overload`.
fn missing_before(
    program: &etch_runtime::Program<'_>,
    i: usize,
    name: &str,
    overload: &str,
) -> etch_runtime::Result<bool> {
    let mut found = false;
    for j in 0..i {
        let meta = program.method_meta(program.method_name(j)?)?;
        meta.for_each_missing_operator(kernels(), |n, o| found |= n == name && o == overload)?;
        if found {
            break;
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    //! The image entry points called as C calls them, on a real fixture.
    #![allow(clippy::undocumented_unsafe_blocks)]

    extern crate std;
    use core::ffi::{c_char, c_void};
    use core::mem::MaybeUninit;
    use core::ptr::{null, null_mut};
    use std::vec::Vec;

    use crate::*;

    const PTE: &[u8] = include_bytes!("../../../tests/fixtures/tiny_cm_m33_int8io.pte");

    /// A 16-byte aligned slot of `n` bytes, erased (0xFF).
    fn slot(n: usize) -> Vec<u128> {
        std::vec![u128::MAX; n.div_ceil(16)]
    }

    fn bytes_of(s: &mut [u128]) -> &mut [u8] {
        unsafe { core::slice::from_raw_parts_mut(s.as_mut_ptr().cast(), s.len() * 16) }
    }

    fn image(pte: &[u8], seq: u32, n: usize) -> Vec<u128> {
        let mut s = slot(n);
        let b = bytes_of(&mut s);
        b[ETCH_IMAGE_HEADER_LEN..ETCH_IMAGE_HEADER_LEN + pte.len()].copy_from_slice(pte);
        let (h, rest) = b.split_at_mut(ETCH_IMAGE_HEADER_LEN);
        let st = unsafe {
            etch_image_header(
                h.as_mut_ptr().cast(),
                h.len(),
                rest.as_ptr().cast(),
                pte.len(),
                seq,
            )
        };
        assert_eq!(st, ETCH_OK);
        s
    }

    fn check(b: &[u8], capacity: usize) -> (etch_status_t, etch_image_fault_t, etch_image_info_t) {
        let mut info: etch_image_info_t = unsafe { MaybeUninit::zeroed().assume_init() };
        let mut fault = 99;
        let st = unsafe {
            etch_image_check(b.as_ptr().cast(), b.len(), capacity, &mut info, &mut fault)
        };
        (st, fault, info)
    }

    #[test]
    fn good_image_loads() {
        let mut s = image(PTE, 41, 8192);
        let b = bytes_of(&mut s);
        let (st, fault, info) = check(b, b.len());
        assert_eq!((st, fault), (ETCH_OK, ETCH_IMAGE_FAULT_NONE));
        assert_eq!(info.sequence, 41);
        assert_eq!(info.pte_len, PTE.len());
        assert_eq!(info.pte, b[64..].as_ptr());
        // The .pte in the slot is a program, 16-byte aligned, in place.
        let mut p: etch_program_t = unsafe { MaybeUninit::zeroed().assume_init() };
        assert_eq!(
            unsafe { etch_program_load(&mut p, info.pte.cast(), info.pte_len, true) },
            ETCH_OK
        );
        let mut n = 99;
        assert_eq!(
            unsafe { etch_program_missing_operators(&p, None, null_mut(), &mut n) },
            ETCH_OK
        );
        assert_eq!(n, 0);
    }

    #[test]
    fn every_fault_has_its_code() {
        let mut s = image(PTE, 1, 8192);
        let b = bytes_of(&mut s).to_vec();
        let end = 64 + PTE.len();
        assert_eq!(check(&b[..63], 8192).1, ETCH_IMAGE_FAULT_TRUNCATED);
        assert_eq!(check(&b[..end - 1], 8192).1, ETCH_IMAGE_FAULT_TRUNCATED);
        assert_eq!(check(&b, end - 1).1, ETCH_IMAGE_FAULT_LENGTH_OVERFLOW);
        let mut c = b.clone();
        c[0] = b'X';
        assert_eq!(check(&c, 8192).1, ETCH_IMAGE_FAULT_BAD_MAGIC);
        let mut c = b.clone();
        c[4] = 2;
        assert_eq!(check(&c, 8192).1, ETCH_IMAGE_FAULT_BAD_VERSION);
        let mut c = b.clone();
        c[16] ^= 1;
        assert_eq!(check(&c, 8192).1, ETCH_IMAGE_FAULT_BAD_HEADER);
        let mut c = b.clone();
        c[100] ^= 1;
        let (st, fault, _) = check(&c, 8192);
        assert_eq!(
            (st, fault),
            (ETCH_INVALID_PROGRAM, ETCH_IMAGE_FAULT_HASH_MISMATCH)
        );
        assert_eq!(check(&[0xFF; 64], 64).0, ETCH_INVALID_PROGRAM);
        // The header alone: what it promises, or why not.
        let mut info: etch_image_info_t = unsafe { MaybeUninit::zeroed().assume_init() };
        let mut fault = 99;
        let hdr = |b: &[u8], info: &mut etch_image_info_t, fault: &mut u32| unsafe {
            etch_image_check_header(b.as_ptr().cast(), b.len(), info, fault)
        };
        assert_eq!(hdr(&b[..64], &mut info, &mut fault), ETCH_OK);
        assert_eq!(
            (info.pte, info.pte_len, info.sequence, fault),
            (null(), PTE.len(), 1, 0)
        );
        assert_eq!(hdr(&b[..63], &mut info, &mut fault), ETCH_INVALID_PROGRAM);
        assert_eq!(fault, ETCH_IMAGE_FAULT_TRUNCATED);
        let mut c = b.clone();
        c[17] ^= 4;
        assert_eq!(hdr(&c[..64], &mut info, &mut fault), ETCH_INVALID_PROGRAM);
        assert_eq!(fault, ETCH_IMAGE_FAULT_BAD_HEADER);
        // The numbers are etch-image's.
        assert_eq!(
            [
                ETCH_IMAGE_FAULT_TRUNCATED,
                ETCH_IMAGE_FAULT_BAD_MAGIC,
                ETCH_IMAGE_FAULT_BAD_VERSION,
                ETCH_IMAGE_FAULT_BAD_HEADER,
                ETCH_IMAGE_FAULT_LENGTH_OVERFLOW,
                ETCH_IMAGE_FAULT_HASH_MISMATCH
            ],
            [1, 2, 3, 4, 5, 6]
        );
    }

    #[test]
    fn bad_pointers_are_refused() {
        let mut s = image(PTE, 1, 8192);
        let b = bytes_of(&mut s);
        let mut info: etch_image_info_t = unsafe { MaybeUninit::zeroed().assume_init() };
        let mut fault = 0u32;
        unsafe {
            // NULL image, NULL info; a NULL fault is allowed.
            assert_eq!(
                etch_image_check(null(), 64, 64, &mut info, &mut fault),
                ETCH_INVALID_ARGUMENT
            );
            assert_eq!(
                etch_image_check(b.as_ptr().cast(), b.len(), b.len(), null_mut(), &mut fault),
                ETCH_INVALID_ARGUMENT
            );
            assert_eq!(
                etch_image_check(b.as_ptr().cast(), b.len(), b.len(), &mut info, null_mut()),
                ETCH_OK
            );
            // Out-pointers inside the image, or on each other.
            let inside = b.as_mut_ptr().add(128);
            assert_eq!(
                etch_image_check(
                    b.as_ptr().cast(),
                    b.len(),
                    b.len(),
                    inside.cast(),
                    &mut fault
                ),
                ETCH_INVALID_ARGUMENT
            );
            assert_eq!(
                etch_image_check(
                    b.as_ptr().cast(),
                    b.len(),
                    b.len(),
                    &mut info,
                    inside.cast()
                ),
                ETCH_INVALID_ARGUMENT
            );
            let info_p: *mut etch_image_info_t = &mut info;
            assert_eq!(
                etch_image_check(b.as_ptr().cast(), b.len(), b.len(), info_p, info_p.cast()),
                ETCH_INVALID_ARGUMENT
            );
            // A header over its own .pte; a short header buffer.
            assert_eq!(
                etch_image_header(b.as_mut_ptr().cast(), 64, b.as_ptr().add(32).cast(), 100, 1),
                ETCH_INVALID_ARGUMENT
            );
            let mut h = [0u8; 64];
            assert_eq!(
                etch_image_header(h.as_mut_ptr().cast(), 63, PTE.as_ptr().cast(), PTE.len(), 1),
                ETCH_INVALID_ARGUMENT
            );
            assert_eq!(
                etch_image_header(h.as_mut_ptr().cast(), 64, null(), 1, 1),
                ETCH_INVALID_ARGUMENT
            );
            assert_eq!(
                etch_image_header(h.as_mut_ptr().cast(), 64, PTE.as_ptr().cast(), PTE.len(), 1),
                ETCH_OK
            );
            assert_eq!(&h[..], &b[..64]);
            assert_eq!(
                etch_image_boot_order(true, 1, true, 2, null_mut()),
                ETCH_INVALID_ARGUMENT
            );
        }
    }

    #[test]
    fn boot_order_and_newer() {
        let mut o = [7i8; 2];
        let run = |a: Option<u32>, b: Option<u32>, o: &mut [i8; 2]| unsafe {
            etch_image_boot_order(
                a.is_some(),
                a.unwrap_or(0),
                b.is_some(),
                b.unwrap_or(0),
                o.as_mut_ptr(),
            )
        };
        assert_eq!(run(Some(1), Some(2), &mut o), ETCH_OK);
        assert_eq!(o, [1, 0]);
        run(Some(3), Some(2), &mut o);
        assert_eq!(o, [0, 1]);
        run(None, Some(2), &mut o);
        assert_eq!(o, [1, -1]);
        run(None, None, &mut o);
        assert_eq!(o, [-1, -1]);
        assert!(etch_image_newer(0, u32::MAX));
        assert!(!etch_image_newer(3, 3));
    }

    struct Seen(Vec<std::string::String>);

    unsafe extern "C" fn record(
        ctx: *mut c_void,
        method: *const c_char,
        method_len: usize,
        name: *const c_char,
        name_len: usize,
        overload: *const c_char,
        overload_len: usize,
    ) {
        let s = |p: *const c_char, n: usize| {
            std::string::String::from_utf8(
                unsafe { core::slice::from_raw_parts(p.cast::<u8>(), n) }.to_vec(),
            )
            .unwrap()
        };
        let seen = unsafe { &mut *ctx.cast::<Seen>() };
        seen.0.push(std::format!(
            "{}: {}.{}",
            s(method, method_len),
            s(name, name_len),
            s(overload, overload_len)
        ));
    }

    // A program calling an operator no firmware has (the fixture with one
    // letter of its operator's name changed) is named before any load.
    #[test]
    fn missing_operators_are_named() {
        let at = PTE
            .windows(16)
            .position(|w| w == b"quantized_linear")
            .unwrap();
        let mut s = slot(PTE.len());
        let b = &mut bytes_of(&mut s)[..PTE.len()];
        b.copy_from_slice(PTE);
        b[at + 10] = b'X'; // quantized_Xinear
        let mut p: etch_program_t = unsafe { MaybeUninit::zeroed().assume_init() };
        assert_eq!(
            unsafe { etch_program_load(&mut p, b.as_ptr().cast(), b.len(), true) },
            ETCH_OK
        );
        let mut seen = Seen(Vec::new());
        let mut n = 0;
        let st = unsafe {
            etch_program_missing_operators(
                &p,
                Some(record),
                (&mut seen as *mut Seen).cast(),
                &mut n,
            )
        };
        assert_eq!(st, ETCH_OK);
        assert_eq!(n, 1);
        assert_eq!(seen.0, ["forward: cortex_m::quantized_Xinear.out"]);
        // count must not overlap the handle.
        let inside = (&mut p as *mut etch_program_t).cast::<usize>();
        assert_eq!(
            unsafe { etch_program_missing_operators(&p, None, null_mut(), inside) },
            ETCH_INVALID_ARGUMENT
        );
        let unloaded: etch_program_t = unsafe { MaybeUninit::zeroed().assume_init() };
        assert_eq!(
            unsafe { etch_program_missing_operators(&unloaded, None, null_mut(), &mut n) },
            ETCH_INVALID_STATE
        );
    }

    // An operator two methods call is named once, with the first method
    // that calls it; one only the second calls is named with it.
    #[test]
    fn missing_operators_are_named_once() {
        const TWO: &[u8] = include_bytes!("../../../tests/programs/two_methods_f32.pte");
        let mut s = slot(TWO.len());
        let b = &mut bytes_of(&mut s)[..TWO.len()];
        b.copy_from_slice(TWO);
        let mut renamed = 0;
        for (from, to) in [
            (&b"aten::addmm"[..], &b"aten::addXm"[..]),
            (b"aten::sigmoid", b"aten::sigXoid"),
        ] {
            while let Some(at) = b.windows(from.len()).position(|w| w == from) {
                b[at..at + to.len()].copy_from_slice(to);
                renamed += 1;
            }
        }
        assert_eq!(renamed, 3, "addmm in both methods, sigmoid in decode");
        let mut p: etch_program_t = unsafe { MaybeUninit::zeroed().assume_init() };
        assert_eq!(
            unsafe { etch_program_load(&mut p, b.as_ptr().cast(), b.len(), true) },
            ETCH_OK
        );
        let mut seen = Seen(Vec::new());
        let mut n = 0;
        let st = unsafe {
            etch_program_missing_operators(
                &p,
                Some(record),
                (&mut seen as *mut Seen).cast(),
                &mut n,
            )
        };
        assert_eq!(st, ETCH_OK);
        // With every kernel linked only the two renamed operators are
        // missing; a reduced build (tools/ci/c-api.sh's) lacks others too,
        // each named once as well.
        assert_eq!(n, seen.0.len());
        let mut once = seen.0.clone();
        once.sort();
        once.dedup();
        assert_eq!(once.len(), seen.0.len(), "named once: {:?}", seen.0);
        let mut names: Vec<_> = seen.0.iter().filter(|n| n.contains('X')).cloned().collect();
        names.sort();
        let first = if names[0].starts_with("decode") {
            "decode"
        } else {
            "encode"
        };
        assert_eq!(
            names,
            [
                std::format!("{first}: aten::addXm.out"),
                "decode: aten::sigXoid.out".into()
            ]
        );
    }
}
