//! A small deterministic mutator for stable Rust: the same seed gives the
//! same inputs on every machine, so a campaign's figures and any failure it
//! finds are reproducible from the command line alone.
//!
//! Mutations are the ones that broke etch before: single bits and bytes,
//! 32- and 64-bit little-endian words set to boundary values (sizes,
//! offsets, strides and list entries in a .pte are such words), chunks
//! copied within the file, and truncation.

/// xorshift64*: enough randomness for mutation, no dependency.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform-ish in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}

/// 32-bit values that sizes, offsets, indices and list entries meet at
/// their edges.
pub const WORDS: [u32; 14] = [
    0,
    1,
    2,
    0xFF,
    0x100,
    0xFFFF,
    0x1_0000,
    0x7FFF_FFFF,
    0x8000_0000,
    0xFFFF_FFFF,
    0xFFFF_FFFE,
    0x4000_0000,
    16,
    64,
];

/// 64-bit values (int arguments, segment offsets and sizes are 64-bit).
pub const WIDE: [u64; 7] = [
    0,
    1,
    u64::MAX,
    i64::MAX as u64,
    (1 << 62) + 1,
    1 << 32,
    i64::MIN as u64,
];

/// Applies one to four mutations to `data` in place.
pub fn mutate(data: &mut Vec<u8>, rng: &mut Rng) {
    let n = 1 + rng.below(4);
    for _ in 0..n {
        mutate_once(data, rng);
    }
}

fn mutate_once(data: &mut Vec<u8>, rng: &mut Rng) {
    if data.is_empty() {
        data.push(rng.next_u64() as u8);
        return;
    }
    let len = data.len();
    match rng.below(10) {
        0 | 1 => {
            let i = rng.below(len);
            data[i] ^= 1 << rng.below(8);
        }
        2 => {
            let i = rng.below(len);
            data[i] = [0, 1, 0x7F, 0x80, 0xFF][rng.below(5)];
        }
        3 | 4 => {
            // A boundary word at a 4-byte aligned position (flatbuffer
            // scalars and vector elements are aligned).
            let i = rng.below(len) & !3;
            let v = if rng.below(4) == 0 {
                (rng.next_u64() as u32) % 4096
            } else {
                WORDS[rng.below(WORDS.len())]
            };
            put(data, i, &v.to_le_bytes());
        }
        5 => {
            let i = rng.below(len) & !7;
            put(data, i, &WIDE[rng.below(WIDE.len())].to_le_bytes());
        }
        6 => {
            // Add or subtract a little from a word (off-by-one offsets).
            let i = rng.below(len) & !3;
            if let Some(w) = data.get(i..i + 4) {
                let v = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
                let d = 1 + rng.below(16) as u32;
                let v = if rng.below(2) == 0 {
                    v.wrapping_add(d)
                } else {
                    v.wrapping_sub(d)
                };
                put(data, i, &v.to_le_bytes());
            }
        }
        7 => {
            // Copy a chunk elsewhere (duplicated tables, shifted vectors).
            let n = 1 + rng.below(64.min(len));
            let from = rng.below(len - n + 1);
            let to = rng.below(len - n + 1);
            data.copy_within(from..from + n, to);
        }
        8 => {
            let i = rng.below(len);
            data[i] = rng.next_u64() as u8;
        }
        _ => {
            // Truncate (rarely: most of a file's interesting bytes are early).
            if rng.below(8) == 0 {
                let keep = rng.below(len);
                data.truncate(keep);
            } else {
                let i = rng.below(len);
                data[i] = data[i].wrapping_add(1);
            }
        }
    }
}

fn put(data: &mut [u8], at: usize, bytes: &[u8]) {
    for (d, &b) in data.iter_mut().skip(at).zip(bytes) {
        *d = b;
    }
}
