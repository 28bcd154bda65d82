//! Model images: a `.pte` behind a small checked header, as a flash slot
//! holds it, so a device can take a new model without reflashing and never
//! runs one that arrived damaged.
//!
//! ```text
//! offset size  field
//!      0    4  magic          b"ETIM"
//!      4    2  version        1 (little-endian, as every number here)
//!      6    2  header_len     64
//!      8    4  pte_len        bytes of the .pte after the header
//!     12    4  sequence       generation: the newer of two valid images wins
//!     16    4  sequence_check !sequence (a torn header write fails it)
//!     20   12  reserved       zero
//!     32   32  sha256         SHA-256 of the .pte's pte_len bytes
//!     64    -  the .pte       (16-byte aligned when the slot is)
//! ```
//!
//! [`ImageHeader`] is a typed view over the header bytes in the style of
//! smoltcp's wire types (`new_unchecked`, `check`, `new_checked`; after the
//! check the accessors cannot fail); [`Image::new_checked`] checks a whole
//! image (header, lengths, digest) in place and gives the `.pte` bytes.
//! [`boot_order`] is the A/B rule: newest valid image first, the other one
//! as the fallback.
#![no_std]
#![forbid(unsafe_code)]

pub mod sha256;

pub use sha256::Sha256;

/// The first four bytes of every image.
pub const MAGIC: [u8; 4] = *b"ETIM";
/// The header layout this crate reads and writes.
pub const VERSION: u16 = 1;
/// Bytes of the header; the `.pte` follows.
pub const HEADER_LEN: usize = 64;

mod field {
    use core::ops::Range;
    pub const MAGIC: Range<usize> = 0..4;
    pub const VERSION: Range<usize> = 4..6;
    pub const HEADER_LEN: Range<usize> = 6..8;
    pub const PTE_LEN: Range<usize> = 8..12;
    pub const SEQUENCE: Range<usize> = 12..16;
    pub const SEQUENCE_CHECK: Range<usize> = 16..20;
    pub const RESERVED: Range<usize> = 20..32;
    pub const SHA256: Range<usize> = 32..64;
}

/// Why an image was refused. The numbers are the C API's
/// `ETCH_IMAGE_FAULT_*`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Fault {
    /// Fewer bytes than the header, or than the header says the image has.
    Truncated = 1,
    /// Not `b"ETIM"`: an erased or foreign slot.
    BadMagic = 2,
    /// A header layout this firmware does not know.
    BadVersion = 3,
    /// `header_len` not 64, reserved bytes not zero, or `sequence_check`
    /// not `!sequence` (a header written only in part).
    BadHeader = 4,
    /// The image would not fit where it is (header + `pte_len` beyond the
    /// slot's capacity or the address space), or a `.pte` too long for the
    /// 32-bit length field.
    LengthOverflow = 5,
    /// The `.pte`'s SHA-256 differs from the header's.
    HashMismatch = 6,
}

// Field access without a panic path (no `copy_from_slice`, whose length
// check links core::fmt into firmware): short buffers read as zeros.
fn array_at<const N: usize>(b: &[u8], r: core::ops::Range<usize>) -> [u8; N] {
    b.get(r)
        .and_then(|s| <[u8; N]>::try_from(s).ok())
        .unwrap_or([0; N])
}

fn u16_at(b: &[u8], r: core::ops::Range<usize>) -> u16 {
    u16::from_le_bytes(array_at(b, r))
}

fn u32_at(b: &[u8], r: core::ops::Range<usize>) -> u32 {
    u32::from_le_bytes(array_at(b, r))
}

fn put(b: &mut [u8], r: core::ops::Range<usize>, v: &[u8]) {
    for (d, s) in b.iter_mut().skip(r.start).take(r.len()).zip(v) {
        *d = *s;
    }
}

/// A view of an image header over any bytes.
#[derive(Clone, Copy, Debug)]
pub struct ImageHeader<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> ImageHeader<T> {
    /// The view without any check (accessors of a short buffer read zeros).
    pub const fn new_unchecked(buffer: T) -> Self {
        ImageHeader { buffer }
    }

    /// The view, after [`check`](Self::check).
    pub fn new_checked(buffer: T) -> Result<Self, Fault> {
        let h = Self::new_unchecked(buffer);
        h.check()?;
        Ok(h)
    }

    /// Everything the header alone can tell: length, magic, version, the
    /// header's own consistency. Not the lengths against a slot, nor the
    /// digest: see [`Image::new_checked`].
    pub fn check(&self) -> Result<(), Fault> {
        let b = self.buffer.as_ref();
        if b.len() < HEADER_LEN {
            return Err(Fault::Truncated);
        }
        if b.get(field::MAGIC) != Some(&MAGIC[..]) {
            return Err(Fault::BadMagic);
        }
        if self.version() != VERSION {
            return Err(Fault::BadVersion);
        }
        let reserved_zero = b
            .get(field::RESERVED)
            .is_some_and(|r| r.iter().all(|&x| x == 0));
        if usize::from(self.header_len()) != HEADER_LEN
            || !reserved_zero
            || u32_at(b, field::SEQUENCE_CHECK) != !self.sequence()
        {
            return Err(Fault::BadHeader);
        }
        Ok(())
    }

    pub fn version(&self) -> u16 {
        u16_at(self.buffer.as_ref(), field::VERSION)
    }

    pub fn header_len(&self) -> u16 {
        u16_at(self.buffer.as_ref(), field::HEADER_LEN)
    }

    /// Bytes of the `.pte` after the header.
    pub fn pte_len(&self) -> u32 {
        u32_at(self.buffer.as_ref(), field::PTE_LEN)
    }

    /// The image's generation: of two valid images the higher wins
    /// (compared with wrap-around, see [`newer`]).
    pub fn sequence(&self) -> u32 {
        u32_at(self.buffer.as_ref(), field::SEQUENCE)
    }

    /// The SHA-256 of the `.pte` the header promises.
    pub fn sha256(&self) -> [u8; 32] {
        array_at(self.buffer.as_ref(), field::SHA256)
    }

    /// Header plus `.pte` bytes, `None` if that overflows `usize`.
    pub fn image_len(&self) -> Option<usize> {
        usize::try_from(self.pte_len())
            .ok()
            .and_then(|n| n.checked_add(HEADER_LEN))
    }
}

/// What a header says, to be written with [`Repr::emit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repr {
    pub pte_len: u32,
    pub sequence: u32,
    pub sha256: [u8; 32],
}

impl Repr {
    /// The header of `pte` as generation `sequence` (computes the digest).
    pub fn of(pte: &[u8], sequence: u32) -> Result<Repr, Fault> {
        let pte_len = u32::try_from(pte.len()).map_err(|_| Fault::LengthOverflow)?;
        if usize::try_from(pte_len)
            .ok()
            .and_then(|n| n.checked_add(HEADER_LEN))
            .is_none()
        {
            return Err(Fault::LengthOverflow);
        }
        Ok(Repr {
            pte_len,
            sequence,
            sha256: Sha256::digest(pte),
        })
    }

    /// Parses a checked header.
    pub fn parse<T: AsRef<[u8]>>(header: &ImageHeader<T>) -> Result<Repr, Fault> {
        header.check()?;
        Ok(Repr {
            pte_len: header.pte_len(),
            sequence: header.sequence(),
            sha256: header.sha256(),
        })
    }

    /// The 64 header bytes.
    pub fn emit(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        put(&mut b, field::MAGIC, &MAGIC);
        put(&mut b, field::VERSION, &VERSION.to_le_bytes());
        put(
            &mut b,
            field::HEADER_LEN,
            &(HEADER_LEN as u16).to_le_bytes(),
        );
        put(&mut b, field::PTE_LEN, &self.pte_len.to_le_bytes());
        put(&mut b, field::SEQUENCE, &self.sequence.to_le_bytes());
        put(
            &mut b,
            field::SEQUENCE_CHECK,
            &(!self.sequence).to_le_bytes(),
        );
        put(&mut b, field::SHA256, &self.sha256);
        b
    }
}

/// A whole image checked in place.
#[derive(Clone, Copy, Debug)]
pub struct Image<'a> {
    pub repr: Repr,
    /// The `.pte`, inside the bytes given to [`Image::new_checked`].
    pub pte: &'a [u8],
}

impl<'a> Image<'a> {
    /// Checks the image at the start of `bytes` (a slot's contents, or the
    /// bytes of an update received so far) that may be at most `capacity`
    /// bytes long (the slot's size): the header ([`ImageHeader::check`]),
    /// header + `pte_len` within `capacity` (else
    /// [`Fault::LengthOverflow`]: no slot can hold what it claims), within
    /// `bytes` (else [`Fault::Truncated`]), and the `.pte`'s SHA-256.
    /// Bytes after the image are ignored (the rest of the slot).
    pub fn new_checked(bytes: &'a [u8], capacity: usize) -> Result<Image<'a>, Fault> {
        let header = ImageHeader::new_checked(bytes)?;
        let repr = Repr::parse(&header)?;
        let end = header.image_len().ok_or(Fault::LengthOverflow)?;
        if end > capacity {
            return Err(Fault::LengthOverflow);
        }
        let pte = bytes.get(HEADER_LEN..end).ok_or(Fault::Truncated)?;
        if Sha256::digest(pte) != repr.sha256 {
            return Err(Fault::HashMismatch);
        }
        Ok(Image { repr, pte })
    }
}

/// Whether generation `a` is newer than `b`, in serial-number arithmetic
/// (RFC 1982): `a` is newer when it is ahead by less than 2^31, so the
/// counter may wrap.
pub fn newer(a: u32, b: u32) -> bool {
    a != b && a.wrapping_sub(b) < 0x8000_0000
}

/// One of the two slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Slot {
    A = 0,
    B = 1,
}

impl Slot {
    pub fn other(self) -> Slot {
        match self {
            Slot::A => Slot::B,
            Slot::B => Slot::A,
        }
    }
}

/// The order to try the slots at boot, given each slot's generation if its
/// image passed [`Image::new_checked`]: the newer valid image first (A on a
/// tie), the other valid one as the fallback (when the newer one then fails
/// to load), nothing for an invalid slot.
pub fn boot_order(a: Option<u32>, b: Option<u32>) -> [Option<Slot>; 2] {
    match (a, b) {
        (Some(a), Some(b)) if newer(b, a) => [Some(Slot::B), Some(Slot::A)],
        (Some(_), Some(_)) => [Some(Slot::A), Some(Slot::B)],
        (Some(_), None) => [Some(Slot::A), None],
        (None, Some(_)) => [Some(Slot::B), None],
        (None, None) => [None, None],
    }
}

#[cfg(test)]
mod tests;
