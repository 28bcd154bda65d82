//! `etch image`: model images for devices that keep their model in a flash
//! slot (the Zephyr module's CONFIG_ETCH_MODEL_SLOTS): a 64-byte header
//! (magic, version, length, generation, SHA-256) before the `.pte`
//! (`etch-image`).
//!
//! ```text
//! etch image wrap MODEL.pte -o MODEL.etim [--sequence N]
//! etch image check MODEL.etim [--slot-size BYTES]
//! etch image shell MODEL.etim [--chunk BYTES]   # lines for the Zephyr shell
//! ```

use clap::{Args as ClapArgs, Subcommand};
use etch_image::{Fault, Image, ImageHeader, Repr, HEADER_LEN};

use crate::host::{load_program, Aligned};

#[derive(ClapArgs, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Put a .pte (verified first) behind an image header.
    Wrap {
        pte: String,
        /// Output file (header + .pte).
        #[arg(short, long)]
        output: String,
        /// Generation (the device writes its own on an update: active + 1).
        #[arg(long, default_value_t = 1)]
        sequence: u32,
    },
    /// Check an image (header, lengths, SHA-256, program) and describe it.
    Check {
        image: String,
        /// The slot's size: an image longer than this is refused.
        #[arg(long)]
        slot_size: Option<usize>,
    },
    /// The Zephyr shell lines that send an image (checked first):
    /// `etch model begin N`, `etch model data <base64>`..., `etch model finish`.
    Shell {
        image: String,
        /// Image bytes per `data` line (the shell's line buffer, 256 by
        /// default, holds 177).
        #[arg(long, default_value_t = 96)]
        chunk: usize,
    },
}

/// Standard base64 (RFC 4648, with padding), as Zephyr's base64_decode reads it.
fn base64(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for c in data.chunks(3) {
        let b = [c[0], *c.get(1).unwrap_or(&0), *c.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (k, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if k <= c.len() {
                out.push(A[(n >> shift) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

pub fn fault_text(f: Fault) -> &'static str {
    match f {
        Fault::Truncated => "truncated: fewer bytes than the header says",
        Fault::BadMagic => "not an etch model image (bad magic)",
        Fault::BadVersion => "unknown image header version",
        Fault::BadHeader => "inconsistent header",
        Fault::LengthOverflow => "longer than the slot",
        Fault::HashMismatch => "the .pte's SHA-256 differs from the header's",
    }
}

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn main(a: Args) -> Result<(), String> {
    match a.command {
        Cmd::Shell { image, chunk } => {
            if chunk == 0 || chunk > 177 {
                return Err(format!("--chunk {chunk}: 1 to 177 bytes per line"));
            }
            let bytes = std::fs::read(&image).map_err(|e| format!("{image}: {e}"))?;
            Image::new_checked(&bytes, usize::MAX)
                .map_err(|f| format!("{image}: {}", fault_text(f)))?;
            outln!("etch model begin {}", bytes.len());
            for c in bytes.chunks(chunk) {
                outln!("etch model data {}", base64(c));
            }
            outln!("etch model finish");
            Ok(())
        }
        Cmd::Wrap {
            pte,
            output,
            sequence,
        } => {
            let bytes = std::fs::read(&pte).map_err(|e| format!("{pte}: {e}"))?;
            let aligned = Aligned::from_bytes(&bytes);
            load_program(&pte, &aligned)?;
            let repr =
                Repr::of(&bytes, sequence).map_err(|f| format!("{pte}: {}", fault_text(f)))?;
            let mut out = repr.emit().to_vec();
            out.extend_from_slice(&bytes);
            std::fs::write(&output, &out).map_err(|e| format!("{output}: {e}"))?;
            outln!(
                "{output}: image of {pte}, {} B (.pte {} B at offset {HEADER_LEN}), generation {sequence}, sha256 {}",
                out.len(),
                bytes.len(),
                hex(&repr.sha256)
            );
            Ok(())
        }
        Cmd::Check { image, slot_size } => {
            let bytes = std::fs::read(&image).map_err(|e| format!("{image}: {e}"))?;
            // In a 16-byte aligned buffer, as in a slot: the .pte at 64.
            let aligned = Aligned::from_bytes(&bytes);
            let img = Image::new_checked(aligned.bytes(), slot_size.unwrap_or(usize::MAX))
                .map_err(|f| {
                    let h = ImageHeader::new_unchecked(aligned.bytes());
                    match f {
                        Fault::Truncated | Fault::LengthOverflow if bytes.len() >= HEADER_LEN => {
                            format!(
                                "{image}: {} (header: {} B of .pte, file: {} B, slot: {})",
                                fault_text(f),
                                h.pte_len(),
                                bytes.len(),
                                slot_size.map_or("-".into(), |s| format!("{s} B"))
                            )
                        }
                        _ => format!("{image}: {}", fault_text(f)),
                    }
                })?;
            let pte = Aligned::from_bytes(img.pte);
            load_program(&image, &pte)?;
            outln!(
                "{image}: ok: generation {}, .pte {} B, sha256 {}, program verified",
                img.repr.sequence,
                img.pte.len(),
                hex(&img.repr.sha256)
            );
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    // RFC 4648, section 10.
    #[test]
    fn base64_vectors() {
        let v = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (i, o) in v {
            assert_eq!(super::base64(i.as_bytes()), o);
        }
    }
}
