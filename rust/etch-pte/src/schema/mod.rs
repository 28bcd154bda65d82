//! Typed views over the tables of ExecuTorch's `schema/program.fbs`.
//!
//! One view type per table. Field ids ("slots") are listed as named constants in
//! `mod slot`, one module per table, in schema declaration order (a union takes
//! two ids: its type tag, then its value). Accessors are one line each: optional
//! fields return `Option`/schema defaults, required ones return an
//! `InvalidProgram` error naming the field when absent.
//!
//! Every accessor is bounds-checked and returns `Result`, so a file that was not
//! verified (see [`crate::PteFile::new_unchecked`]) can still be read safely;
//! after [`crate::PteFile::new_checked`] none of them fails.

use crate::error::{Error, Result};
use crate::flatbuffer::{key, Follow, Str, Table, Vector};
use crate::types::{
    DataLocation, InstructionKind, ScalarType, ShapeDynamism, TensorDataLocation, ValueKind,
};

/// Declares a view type over a table and lets it be a vector element.
macro_rules! table_view {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug)]
        pub struct $name<'a>(pub Table<'a>);

        impl<'a> Follow<'a> for $name<'a> {
            const INLINE_SIZE: usize = 4;
            #[inline]
            fn follow(buf: &'a [u8], pos: usize) -> Result<Self> {
                Table::follow(buf, pos).map($name)
            }
        }

        impl<'a> $name<'a> {
            /// Byte offset of the table in the file.
            pub fn position(&self) -> usize {
                self.0.position()
            }
        }
    };
}

mod data;
mod delegate;
mod instruction;
mod program;
pub mod slot;
mod value;

pub use data::{
    Buffer, DataSegment, NamedData, NonConstBufferDevice, StrVector, SubsegmentOffsets,
};
pub use delegate::{
    BackendDelegate, BackendDelegateDataReference, BackendDelegateInlineData, CompileSpec,
};
pub use instruction::{Chain, Frame, FrameList, Instruction, InstructionArgs, Operator};
pub use program::{ContainerMetadata, ExecutionPlan, Program};
pub use value::{AllocationDetails, EValue, ExtraTensorInfo, Tensor, Value};

#[inline(never)]
fn utf8<'a>(bytes: &'a [u8], what: &'static str, table: &Table<'_>) -> Result<&'a str> {
    core::str::from_utf8(bytes).map_err(|_| Error::invalid(what, table.position()))
}

/// Whether `bytes` is UTF-8, accepting exactly what `core::str::from_utf8`
/// accepts (shortest forms only, no surrogates, nothing above U+10FFFF).
/// The verifier checks names with this: core's validator is fast but about
/// 370 bytes on Cortex-M, and names are a few bytes long.
#[inline(never)]
pub fn is_utf8(bytes: &[u8]) -> bool {
    let mut rest = bytes;
    while let Some((&lead, tail)) = rest.split_first() {
        let lead = lead as u32;
        // Continuation bytes and the smallest code point of each length.
        let (n, min) = match lead {
            0x00..=0x7f => (0, 0),
            0xc0..=0xdf => (1, 0x80),
            0xe0..=0xef => (2, 0x800),
            0xf0..=0xf7 => (3, 0x1_0000),
            _ => return false,
        };
        let Some((cont, tail)) = tail.split_at_checked(n) else {
            return false;
        };
        let mut cp = lead & (0xff >> (n + 2));
        for &b in cont {
            if b & 0xc0 != 0x80 {
                return false;
            }
            cp = (cp << 6) | (b & 0x3f) as u32;
        }
        if cp < min || cp > 0x10_ffff || (0xd800..=0xdfff).contains(&cp) {
            return false;
        }
        rest = tail;
    }
    true
}

#[cfg(test)]
mod utf8_tests {
    use super::is_utf8;

    fn agrees(b: &[u8]) {
        assert_eq!(is_utf8(b), core::str::from_utf8(b).is_ok(), "{b:02x?}");
    }

    #[test]
    fn is_utf8_agrees_with_core_on_every_short_sequence() {
        for a in 0..=255u8 {
            agrees(&[a]);
            for b in 0..=255u8 {
                agrees(&[a, b]);
                for c in 0..=255u8 {
                    agrees(&[a, b, c]);
                }
            }
        }
        // Four-byte sequences: every lead and second byte with the others
        // at and around each boundary of the continuation ranges.
        let edges = [0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xff];
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                for &c in &edges {
                    for &d in &edges {
                        agrees(&[a, b, c, d]);
                        agrees(&[b'x', a, b, c, d, b'y']);
                    }
                }
            }
        }
        for s in ["", "forward", "aten::add", "é", "€", "𝄞", "\u{10ffff}"] {
            agrees(s.as_bytes());
        }
    }
}
