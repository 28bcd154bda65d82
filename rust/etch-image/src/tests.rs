//! Every refusal of `ImageHeader::check` / `Image::new_checked`, on literal
//! header bytes and on a real fixture.

use super::*;

const PTE: &[u8] = include_bytes!("../../../tests/fixtures/tiny_cm_m33_int8io.pte");
/// `sha256sum tests/fixtures/tiny_cm_m33_int8io.pte`.
const PTE_SHA256: &str = "1603e325e3eea134f9ac214a0c1619329e411823db2ecbfc052294384a787154";

fn unhex(s: &str) -> [u8; 32] {
    let mut d = [0u8; 32];
    for (i, b) in d.iter_mut().enumerate() {
        *b = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap();
    }
    d
}

/// An image of `pte` as generation `seq`, in a slot of `slot` bytes (the
/// rest erased, 0xFF, as flash is).
fn slot_with(pte: &[u8], seq: u32, slot: usize) -> std::vec::Vec<u8> {
    let mut v = std::vec![0xFFu8; slot];
    v[..HEADER_LEN].copy_from_slice(&Repr::of(pte, seq).unwrap().emit());
    v[HEADER_LEN..HEADER_LEN + pte.len()].copy_from_slice(pte);
    v
}

extern crate std;

// The header of a 5-byte `.pte` "hello", generation 7, byte for byte.
const HELLO_HEADER: [u8; 64] = [
    b'E', b'T', b'I', b'M', // magic
    1, 0, // version
    64, 0, // header_len
    5, 0, 0, 0, // pte_len
    7, 0, 0, 0, // sequence
    0xF8, 0xFF, 0xFF, 0xFF, // !7
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // reserved
    // sha256("hello")
    0x2c, 0xf2, 0x4d, 0xba, 0x5f, 0xb0, 0xa3, 0x0e, 0x26, 0xe8, 0x3b, 0x2a, 0xc5, 0xb9, 0xe2, 0x9e,
    0x1b, 0x16, 0x1e, 0x5c, 0x1f, 0xa7, 0x42, 0x5e, 0x73, 0x04, 0x33, 0x62, 0x93, 0x8b, 0x98, 0x24,
];

#[test]
fn construct() {
    assert_eq!(Repr::of(b"hello", 7).unwrap().emit(), HELLO_HEADER);
}

#[test]
fn deconstruct() {
    let h = ImageHeader::new_checked(&HELLO_HEADER[..]).unwrap();
    assert_eq!(h.version(), 1);
    assert_eq!(h.header_len(), 64);
    assert_eq!(h.pte_len(), 5);
    assert_eq!(h.sequence(), 7);
    assert_eq!(h.image_len(), Some(69));
    let mut img = HELLO_HEADER.to_vec();
    img.extend_from_slice(b"hello");
    let i = Image::new_checked(&img, img.len()).unwrap();
    assert_eq!(i.pte, b"hello");
    assert_eq!(i.repr, Repr::parse(&h).unwrap());
}

#[test]
fn real_fixture() {
    let repr = Repr::of(PTE, 3).unwrap();
    assert_eq!(repr.sha256, unhex(PTE_SHA256));
    let slot = slot_with(PTE, 3, 8192);
    let img = Image::new_checked(&slot, slot.len()).unwrap();
    assert_eq!(img.pte, PTE);
    assert_eq!(img.repr.sequence, 3);
    assert_eq!(
        img.pte.as_ptr() as usize - slot.as_ptr() as usize,
        HEADER_LEN
    );
}

#[test]
fn truncated() {
    let slot = slot_with(PTE, 1, 8192);
    // Shorter than a header.
    for n in [0, 1, 4, 63] {
        assert_eq!(
            ImageHeader::new_checked(&slot[..n]).unwrap_err(),
            Fault::Truncated
        );
        assert_eq!(
            Image::new_checked(&slot[..n], 8192).unwrap_err(),
            Fault::Truncated
        );
    }
    // A whole header, the .pte cut anywhere (an update that stopped early).
    for n in [64, 65, 64 + PTE.len() / 2, 64 + PTE.len() - 1] {
        assert_eq!(
            Image::new_checked(&slot[..n], 8192).unwrap_err(),
            Fault::Truncated
        );
    }
    assert!(Image::new_checked(&slot[..64 + PTE.len()], 8192).is_ok());
}

#[test]
fn bad_magic() {
    // An erased slot, a zeroed one, a .pte itself, one bit flipped.
    assert_eq!(
        Image::new_checked(&[0xFF; 128], 128).unwrap_err(),
        Fault::BadMagic
    );
    assert_eq!(
        Image::new_checked(&[0; 128], 128).unwrap_err(),
        Fault::BadMagic
    );
    assert_eq!(
        Image::new_checked(PTE, PTE.len()).unwrap_err(),
        Fault::BadMagic
    );
    for byte in 0..4 {
        let mut h = HELLO_HEADER;
        h[byte] ^= 0x01;
        assert_eq!(
            ImageHeader::new_checked(&h[..]).unwrap_err(),
            Fault::BadMagic
        );
    }
}

#[test]
fn bad_version() {
    for v in [0u16, 2, 0x100, 0xFFFF] {
        let mut h = HELLO_HEADER;
        h[4..6].copy_from_slice(&v.to_le_bytes());
        assert_eq!(
            ImageHeader::new_checked(&h[..]).unwrap_err(),
            Fault::BadVersion
        );
    }
}

#[test]
fn bad_header() {
    let mut h = HELLO_HEADER;
    h[6] = 32; // header_len
    assert_eq!(
        ImageHeader::new_checked(&h[..]).unwrap_err(),
        Fault::BadHeader
    );
    for byte in 20..32 {
        let mut h = HELLO_HEADER;
        h[byte] = 1; // reserved
        assert_eq!(
            ImageHeader::new_checked(&h[..]).unwrap_err(),
            Fault::BadHeader
        );
    }
    // A torn write: the sequence programmed, its check not (still erased),
    // or any bit of either wrong.
    let mut h = HELLO_HEADER;
    h[16..20].copy_from_slice(&[0xFF; 4]);
    assert_eq!(
        ImageHeader::new_checked(&h[..]).unwrap_err(),
        Fault::BadHeader
    );
    for bit in 0..64 {
        let mut h = HELLO_HEADER;
        h[12 + bit / 8] ^= 1 << (bit % 8);
        assert_eq!(
            ImageHeader::new_checked(&h[..]).unwrap_err(),
            Fault::BadHeader,
            "bit {bit}"
        );
    }
}

#[test]
fn length_overflow() {
    // More than the slot holds.
    let slot = slot_with(PTE, 1, 8192);
    let end = 64 + PTE.len();
    assert_eq!(
        Image::new_checked(&slot, end - 1).unwrap_err(),
        Fault::LengthOverflow
    );
    assert!(Image::new_checked(&slot, end).is_ok());
    // pte_len = u32::MAX: beyond any slot (and, on 32-bit, the address space).
    let mut h = HELLO_HEADER;
    h[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
    let mut img = h.to_vec();
    img.extend_from_slice(b"hello");
    assert_eq!(
        Image::new_checked(&img, usize::MAX).unwrap_err(),
        if usize::BITS == 32 {
            Fault::LengthOverflow
        } else {
            Fault::Truncated
        }
    );
    assert_eq!(
        Image::new_checked(&img, img.len()).unwrap_err(),
        Fault::LengthOverflow
    );
}

#[test]
fn hash_mismatch() {
    // Every byte of the .pte flipped in turn, and the digest itself.
    let slot = slot_with(PTE, 1, 8192);
    for i in (64..64 + PTE.len())
        .step_by(97)
        .chain([64, 64 + PTE.len() - 1])
    {
        let mut s = slot.clone();
        s[i] ^= 0x80;
        assert_eq!(
            Image::new_checked(&s, s.len()).unwrap_err(),
            Fault::HashMismatch,
            "byte {i}"
        );
    }
    let mut s = slot.clone();
    s[32] ^= 1;
    assert_eq!(
        Image::new_checked(&s, s.len()).unwrap_err(),
        Fault::HashMismatch
    );
    // The same header before another .pte of the same length.
    let mut s = slot.clone();
    s[64..64 + PTE.len()].fill(0);
    assert_eq!(
        Image::new_checked(&s, s.len()).unwrap_err(),
        Fault::HashMismatch
    );
}

// No bytes make the check panic: every prefix and every single-byte change
// of a header gives Ok or a fault.
#[test]
fn no_panic_on_any_header_byte() {
    let slot = slot_with(b"0123456789abcdef", 9, 256);
    for i in 0..80 {
        for v in [0u8, 1, 0x7F, 0x80, 0xFF] {
            let mut s = slot.clone();
            s[i] = v;
            let _ = Image::new_checked(&s, s.len());
            let _ = Image::new_checked(&s[..i], s.len());
        }
    }
}

#[test]
fn newer_wraps() {
    assert!(newer(2, 1));
    assert!(!newer(1, 2));
    assert!(!newer(5, 5));
    assert!(newer(0, u32::MAX));
    assert!(!newer(u32::MAX, 0));
    assert!(newer(0x7FFF_FFFF, 0));
}

#[test]
fn boot_order_rule() {
    use Slot::*;
    assert_eq!(boot_order(Some(1), Some(2)), [Some(B), Some(A)]);
    assert_eq!(boot_order(Some(2), Some(1)), [Some(A), Some(B)]);
    assert_eq!(boot_order(Some(4), Some(4)), [Some(A), Some(B)]);
    assert_eq!(boot_order(Some(0), Some(u32::MAX)), [Some(A), Some(B)]);
    assert_eq!(boot_order(None, Some(1)), [Some(B), None]);
    assert_eq!(boot_order(Some(1), None), [Some(A), None]);
    assert_eq!(boot_order(None, None), [None, None]);
    assert_eq!(A.other(), B);
    assert_eq!(B.other(), A);
}

#[test]
fn repr_length_limits() {
    // The largest .pte a header describes: u32::MAX bytes (not built here);
    // Repr::of refuses longer ones without reading them. A zero-length .pte
    // is a valid image (etch_program_load refuses it later).
    let r = Repr::of(b"", 0).unwrap();
    assert_eq!(r.pte_len, 0);
    let mut img = r.emit().to_vec();
    assert!(Image::new_checked(&img, 64).is_ok());
    img.push(0);
    assert!(Image::new_checked(&img, 65).is_ok());
}
