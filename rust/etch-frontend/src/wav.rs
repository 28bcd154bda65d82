//! Minimal RIFF/WAVE reader: zero-copy view of a PCM `.wav` held in memory
//! (a file, or bytes in flash). Never trusts the file: every chunk size is
//! bounds-checked, bad input is an error.

/// Why a byte string is not a usable WAV file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WavError {
    /// Not `RIFF....WAVE`.
    NotRiffWave,
    /// A chunk header or size runs past the end of the file.
    Truncated,
    /// No `fmt ` chunk before `data`, or a `fmt ` chunk under 16 bytes.
    MissingFormat,
    /// No `data` chunk.
    MissingData,
    /// Not integer PCM (format tag 1, or extensible with the PCM subformat).
    NotPcm(u16),
}

/// A parsed WAV file: its format and its sample bytes (little-endian).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wav<'a> {
    pub sample_rate: u32,
    pub channels: u16,
    pub bits_per_sample: u16,
    /// The `data` chunk (cut to the bytes present if its size overstates them).
    pub data: &'a [u8],
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    let s = b.get(at..at.checked_add(2)?)?;
    Some(u16::from_le_bytes([s[0], s[1]]))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

impl<'a> Wav<'a> {
    pub fn parse(bytes: &'a [u8]) -> Result<Self, WavError> {
        if bytes.get(0..4) != Some(b"RIFF") || bytes.get(8..12) != Some(b"WAVE") {
            return Err(WavError::NotRiffWave);
        }
        let mut at = 12usize;
        let mut fmt: Option<(u16, u16, u32, u16)> = None;
        while at < bytes.len() {
            let id = bytes.get(at..at + 4).ok_or(WavError::Truncated)?;
            let size = u32_at(bytes, at + 4).ok_or(WavError::Truncated)? as usize;
            let body = at + 8;
            if id == b"data" {
                let (tag, channels, rate, bits) = fmt.ok_or(WavError::MissingFormat)?;
                if tag != 1 {
                    return Err(WavError::NotPcm(tag));
                }
                // Writers that stream (sox to a pipe) leave 0 or 0xFFFFFFFF
                // here: take what is present.
                let end = body.saturating_add(size).min(bytes.len());
                let data = bytes.get(body..end).ok_or(WavError::Truncated)?;
                return Ok(Wav {
                    sample_rate: rate,
                    channels,
                    bits_per_sample: bits,
                    data,
                });
            }
            if id == b"fmt " {
                if size < 16 {
                    return Err(WavError::MissingFormat);
                }
                let mut tag = u16_at(bytes, body).ok_or(WavError::Truncated)?;
                let channels = u16_at(bytes, body + 2).ok_or(WavError::Truncated)?;
                let rate = u32_at(bytes, body + 4).ok_or(WavError::Truncated)?;
                let bits = u16_at(bytes, body + 14).ok_or(WavError::Truncated)?;
                if tag == 0xFFFE && size >= 40 {
                    // WAVE_FORMAT_EXTENSIBLE: the subformat GUID starts with the tag.
                    tag = u16_at(bytes, body + 24).ok_or(WavError::Truncated)?;
                }
                fmt = Some((tag, channels, rate, bits));
            }
            // Chunks are padded to an even size.
            at = body
                .checked_add(size)
                .and_then(|e| e.checked_add(size & 1))
                .ok_or(WavError::Truncated)?;
            if at > bytes.len() {
                return Err(WavError::Truncated);
            }
        }
        Err(WavError::MissingData)
    }

    /// Whether this is the front-end's input format: 16 kHz mono 16-bit.
    pub fn is_kws_format(&self) -> bool {
        self.sample_rate == crate::SAMPLE_RATE && self.channels == 1 && self.bits_per_sample == 16
    }

    /// The samples as `i16` (for 16-bit files; a trailing odd byte is ignored).
    pub fn samples_i16(&self) -> impl Iterator<Item = i16> + 'a {
        self.data
            .chunks_exact(2)
            .map(|p| i16::from_le_bytes([p[0], p[1]]))
    }

    /// Copies up to `out.len()` 16-bit samples into `out`; returns how many.
    pub fn read_i16(&self, out: &mut [i16]) -> usize {
        let mut n = 0;
        for (o, s) in out.iter_mut().zip(self.samples_i16()) {
            *o = s;
            n += 1;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wav(
        fmt_tag: u16,
        rate: u32,
        channels: u16,
        bits: u16,
        extra: &[u8],
        data: &[u8],
    ) -> [u8; 128] {
        let mut b = [0u8; 128];
        b[0..4].copy_from_slice(b"RIFF");
        b[8..12].copy_from_slice(b"WAVE");
        b[12..16].copy_from_slice(b"fmt ");
        b[16..20].copy_from_slice(&16u32.to_le_bytes());
        b[20..22].copy_from_slice(&fmt_tag.to_le_bytes());
        b[22..24].copy_from_slice(&channels.to_le_bytes());
        b[24..28].copy_from_slice(&rate.to_le_bytes());
        b[34..36].copy_from_slice(&bits.to_le_bytes());
        let mut at = 36;
        b[at..at + extra.len()].copy_from_slice(extra);
        at += extra.len();
        b[at..at + 4].copy_from_slice(b"data");
        b[at + 4..at + 8].copy_from_slice(&(data.len() as u32).to_le_bytes());
        b[at + 8..at + 8 + data.len()].copy_from_slice(data);
        b
    }

    #[test]
    fn parses_pcm_and_skips_chunks() {
        let list = *b"LIST\x03\x00\x00\x00abc\x00"; // odd size, padded
        let b = wav(1, 16000, 1, 16, &list, &[1, 0, 0xff, 0xff, 0x00, 0x80]);
        let w = Wav::parse(&b).unwrap();
        assert!(w.is_kws_format());
        let mut s = [0i16; 4];
        assert_eq!(w.read_i16(&mut s), 3);
        assert_eq!(s, [1, -1, -32768, 0]);
    }

    #[test]
    fn rejects_bad_files() {
        assert_eq!(Wav::parse(b"RIFX\0\0\0\0WAVE"), Err(WavError::NotRiffWave));
        assert_eq!(Wav::parse(b""), Err(WavError::NotRiffWave));
        assert_eq!(Wav::parse(b"RIFF\0\0\0\0WAVE"), Err(WavError::MissingData));
        let b = wav(3, 16000, 1, 32, &[], &[0; 8]);
        assert_eq!(Wav::parse(&b), Err(WavError::NotPcm(3)));
        let w = wav(1, 44100, 2, 16, &[], &[0; 8]);
        assert!(!Wav::parse(&w).unwrap().is_kws_format());
        // Every truncation of a valid file is an error or a shorter data chunk, never a panic.
        let b = wav(1, 16000, 1, 16, b"junk\xff\xff\xff\x7f", &[0; 8]);
        assert_eq!(Wav::parse(&b), Err(WavError::Truncated));
        let good = wav(1, 16000, 1, 16, &[], &[0; 8]);
        for n in 0..52 {
            let r = Wav::parse(&good[..n]);
            assert!(n >= 44 || r.is_err(), "{n}: {r:?}");
        }
        // Any single corrupted byte of the header: an error or a view
        // inside the buffer, never a panic.
        let good = wav(0xFFFE, 16000, 1, 16, &[0; 24], &[0; 8]);
        for at in 0..68 {
            for v in [0u8, 1, 0x7f, 0x80, 0xfe, 0xff] {
                let mut b = good;
                b[at] = v;
                if let Ok(w) = Wav::parse(&b) {
                    let base = b.as_ptr() as usize;
                    let d = w.data.as_ptr() as usize;
                    assert!(d >= base && d + w.data.len() <= base + b.len());
                }
            }
        }
        // data before fmt
        let mut d = [0u8; 20];
        d[0..4].copy_from_slice(b"RIFF");
        d[8..12].copy_from_slice(b"WAVE");
        d[12..16].copy_from_slice(b"data");
        assert_eq!(Wav::parse(&d), Err(WavError::MissingFormat));
    }
}
