//! Keyword-spotting audio front-end: MLPerf Tiny's MFCC features for
//! microcontrollers.
//!
//! 16 kHz mono `i16` PCM, one second, becomes 49 frames x 10 MFCCs, the input
//! of the MLPerf Tiny DS-CNN keyword spotter, as float or as int8 quantized with
//! the model's own input scale and zero point. The pipeline is the one the model
//! was trained on (mlcommons/tiny `keyword_spotting/get_dataset.py`, test time;
//! reproduced in numpy by `tools/frontend/mfcc_ref.py`, which names the source of
//! every formula):
//!
//! 1. divide by the clip's maximum sample (`reduce_max`, not max |x|);
//! 2. 480-sample frames every 320 samples, periodic Hann window, 512-point FFT,
//!    magnitude;
//! 3. 40 HTK-mel triangles over 20..4000 Hz (TensorFlow's
//!    `linear_to_mel_weight_matrix`), `ln(mel + 1e-6)`;
//! 4. DCT-II scaled by `1/sqrt(80)`, first 10 coefficients.
//!
//! Everything is `f32` on the caller's memory: [`Frontend`] is the only scratch
//! (2 KiB, [`Frontend::BYTES`]), the tables are `static` (flash). Because step 1
//! is a single scale factor, the per-frame work (steps 2-3, up to the mel
//! energies) does not need the maximum: [`Stream`] computes each frame as its
//! samples arrive and only the final log/DCT waits for the window's maximum.
//!
//! A clip whose maximum is 0 (digital silence) has no defined normalisation:
//! TensorFlow divides 0 by 0 and every feature is NaN. We return the same NaNs
//! (and -128 for int8, what ExecuTorch's quantize gives for NaN on x86-64), and
//! report the clip's peak so the caller can see it.
//!
//! ```
//! use etch_frontend::{Frontend, Quant, Stream, FEATURES, FRAME_STEP};
//!
//! // One second of audio (here a 1 kHz tone) and the model's input qparams
//! // (a program's `input0_scale` / `input0_zp` methods).
//! let pcm: [i16; 16000] = core::array::from_fn(|n| ((n % 16) as i16 - 8) * 1000);
//! let q = Quant::new(0.584_702_9, 83).unwrap();
//!
//! // Whole clip.
//! let mut fe = Frontend::new(); // 2 KiB scratch, e.g. a `static mut`
//! let mut features = [0i8; FEATURES];
//! let peak = fe.mfcc_int8(&pcm, q, &mut features).unwrap();
//! assert_eq!(peak, 7000);
//!
//! // Streaming: 20 ms at a time, features of the last second on demand.
//! let mut st = Stream::new();
//! for hop in pcm.chunks_exact(FRAME_STEP) {
//!     st.push(&mut fe, hop.try_into().unwrap());
//! }
//! let mut streamed = [0i8; FEATURES];
//! st.features_int8(q, &mut streamed).unwrap();
//! assert_eq!(streamed, features);
//! ```
#![no_std]

pub mod wav;

mod tables {
    include!(concat!(env!("OUT_DIR"), "/tables.rs"));
}
use tables::{
    DCT, MEL_BINS, MEL_FIRST_BIN, MEL_IDX, MEL_WA, MEL_WB, SPLIT, TW16, TW4, TW64, WINDOW,
};

/// Samples per second of the input audio.
pub const SAMPLE_RATE: u32 = 16_000;
/// Samples in one clip (1 s).
pub const CLIP_SAMPLES: usize = 16_000;
/// Samples per analysis frame (30 ms).
pub const FRAME_LENGTH: usize = 480;
/// Samples between frame starts (20 ms): also the [`Stream`] hop size.
pub const FRAME_STEP: usize = 320;
/// FFT length (the power of two enclosing [`FRAME_LENGTH`]).
pub const FFT_LENGTH: usize = 512;
/// Frames per clip: `1 + (16000 - 480) / 320`.
pub const FRAMES: usize = 1 + (CLIP_SAMPLES - FRAME_LENGTH) / FRAME_STEP;
/// Mel bands.
pub const MEL_BANDS: usize = 40;
/// MFCCs kept per frame.
pub const COEFFS: usize = 10;
/// Features per clip, frame-major (`[frame][coeff]`): the model's 1x1x49x10 input.
pub const FEATURES: usize = FRAMES * COEFFS;
/// Hops of [`FRAME_STEP`] samples in one clip.
pub const HOPS: usize = CLIP_SAMPLES / FRAME_STEP;

const HALF: usize = FFT_LENGTH / 2;
const LOG_OFFSET: f32 = 1e-6;

/// Front-end errors; [`Error::code`] gives ExecuTorch's numeric error code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// No samples.
    EmptyInput,
    /// Scale not finite and positive, or zero point outside int8.
    InvalidQuantParams,
    /// [`Stream`] has seen fewer than [`HOPS`] hops.
    NotReady,
}

impl Error {
    /// ExecuTorch `Error` value: `InvalidArgument` (0x12) or `InvalidState` (0x2).
    pub const fn code(self) -> u32 {
        match self {
            Error::EmptyInput | Error::InvalidQuantParams => 0x12,
            Error::NotReady => 0x02,
        }
    }
}

/// Per-tensor int8 quantization as ExecuTorch's `quantize_per_tensor`:
/// `q = clamp(zp + nearbyint((1/scale) * x), -128, 127)` in `f32`, ties to even.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quant {
    inv_scale: f32,
    zero_point: f32,
}

impl Quant {
    /// `scale` as ExecuTorch uses it (`static_cast<float>` of the program's
    /// double), `zero_point` in -128..=127.
    pub fn new(scale: f32, zero_point: i32) -> Result<Self, Error> {
        if !(scale > 0.0 && scale.is_finite() && (-128..=127).contains(&zero_point)) {
            return Err(Error::InvalidQuantParams);
        }
        Ok(Quant {
            inv_scale: 1.0 / scale,
            zero_point: zero_point as f32,
        })
    }

    /// One value. NaN becomes -128 (ExecuTorch's float-to-int64 cast of NaN on
    /// x86-64 gives INT64_MIN, clamped to the minimum).
    #[inline]
    pub fn quantize(self, x: f32) -> i8 {
        let q = self.zero_point + round_half_even(self.inv_scale * x);
        if q.is_nan() || q <= -128.0 {
            -128
        } else if q >= 127.0 {
            127
        } else {
            q as i8
        }
    }
}

/// `nearbyint` in the default rounding mode (ties to even), without libm.
#[inline]
fn round_half_even(x: f32) -> f32 {
    const TWO23: f32 = 8_388_608.0;
    if x.is_nan() || x.abs() >= TWO23 {
        return x;
    }
    if x >= 0.0 {
        (x + TWO23) - TWO23
    } else {
        (x - TWO23) + TWO23
    }
}

#[inline(always)]
fn sqrt(x: f32) -> f32 {
    #[cfg(all(target_arch = "arm", target_abi = "eabihf"))]
    {
        let r: u32;
        // SAFETY: VSQRT.F32 on s15, which the asm saves and restores itself
        // (stable Rust cannot name FPU registers on this target: the `sreg`
        // class needs the unstable `vfp2` feature); touches nothing else but
        // the stack slot of the push. Every eabihf Cortex-M target has the
        // single-precision FPU. libm has no Arm implementation: its software
        // sqrtf makes a clip 1.92M instead of 1.47M instructions on
        // Cortex-M4 (bench/frontend.sh).
        unsafe {
            core::arch::asm!(
                "vpush {{s15}}",
                "vmov s15, {x}",
                "vsqrt.f32 s15, s15",
                "vmov {r}, s15",
                "vpop {{s15}}",
                x = in(reg) x.to_bits(),
                r = lateout(reg) r,
                options(pure, nomem, preserves_flags),
            );
        }
        f32::from_bits(r)
    }
    #[cfg(not(all(target_arch = "arm", target_abi = "eabihf")))]
    {
        libm::sqrtf(x)
    }
}

/// Scratch for one frame's FFT (the only working memory the front-end needs).
pub struct Frontend {
    /// 256 complex values (re, im).
    z: [[f32; 2]; HALF],
}

impl Default for Frontend {
    fn default() -> Self {
        Self::new()
    }
}

impl Frontend {
    /// Size of the scratch in bytes.
    pub const BYTES: usize = core::mem::size_of::<Frontend>();

    pub const fn new() -> Self {
        Frontend {
            z: [[0.0; 2]; HALF],
        }
    }

    /// Mel energies of one frame of raw samples, before normalisation:
    /// `sum_k |FFT(w * x)[k]| * mel[k][band]`. Frames shorter than 480
    /// samples are zero-padded, longer ones cut.
    pub fn frame_mel(&mut self, frame: &[i16], mel: &mut [f32; MEL_BANDS]) {
        match frame
            .get(..FRAME_LENGTH)
            .and_then(|f| <&[i16; FRAME_LENGTH]>::try_from(f).ok())
        {
            Some(full) => self.frame_mel_480(full, mel),
            None => {
                let mut padded = [0i16; FRAME_LENGTH];
                for (p, &x) in padded.iter_mut().zip(frame.iter()) {
                    *p = x;
                }
                self.frame_mel_480(&padded, mel);
            }
        }
    }

    fn frame_mel_480(&mut self, frame: &[i16; FRAME_LENGTH], mel: &mut [f32; MEL_BANDS]) {
        self.load(frame);
        self.fft();
        // Band b accumulates in acc[b + 1]; acc[0] and acc[41] catch the
        // zero weights of the lowest and highest bins.
        let mut acc = [0.0f32; MEL_BANDS + 2];
        let bins = MEL_IDX.iter().zip(MEL_WA.iter()).zip(MEL_WB.iter());
        for (i, ((&j, &wa), &wb)) in bins.enumerate().take(MEL_BINS) {
            let mag = self.bin_magnitude2(MEL_FIRST_BIN + i);
            let j = (j as usize).min(MEL_BANDS);
            acc[j] += mag * wa;
            acc[j + 1] += mag * wb;
        }
        for (m, a) in mel.iter_mut().zip(acc.iter().skip(1)) {
            *m = *a;
        }
    }

    /// Windows the frame into 256 complex values z[n] = x[2n] + i x[2n+1]
    /// and does the FFT's first two (radix-2, decimation-in-time) stages on
    /// the way: with bit-reversed order, output group g (positions 4g..4g+3)
    /// combines z[q], z[q+128], z[q+64], z[q+192] for q = rev6(g), with
    /// twiddles 1 and -i only.
    fn load(&mut self, frame: &[i16; FRAME_LENGTH]) {
        let x = |m: usize| match (frame.get(m), WINDOW.get(m)) {
            (Some(&s), Some(&w)) => s as f32 * w,
            _ => 0.0,
        };
        for (g, o) in self.z.chunks_exact_mut(4).enumerate() {
            let q = ((g as u32).reverse_bits() >> 26) as usize;
            let z = |n: usize| (x(2 * n), x(2 * n + 1));
            let (p0, p1, p2, p3) = (z(q), z(q + 128), z(q + 64), z(q + 192));
            let a0 = (p0.0 + p1.0, p0.1 + p1.1);
            let a1 = (p0.0 - p1.0, p0.1 - p1.1);
            let a2 = (p2.0 + p3.0, p2.1 + p3.1);
            let a3 = (p2.0 - p3.0, p2.1 - p3.1);
            // -i * a3 = (a3.im, -a3.re)
            if let [[r0, i0], [r1, i1], [r2, i2], [r3, i3]] = o {
                *r0 = a0.0 + a2.0;
                *i0 = a0.1 + a2.1;
                *r2 = a0.0 - a2.0;
                *i2 = a0.1 - a2.1;
                *r1 = a1.0 + a3.1;
                *i1 = a1.1 - a3.0;
                *r3 = a1.0 - a3.1;
                *i3 = a1.1 + a3.0;
            }
        }
    }

    /// The remaining radix-2 stages (half sizes 4..128) of the in-place
    /// 256-point complex FFT, two at a time: stages h and 2h on the four
    /// points j, j+h, j+2h, j+3h of a 4h group at once (the arithmetic of
    /// two radix-2 passes, half the loads and stores).
    fn fft(&mut self) {
        stage_pair(&mut self.z, &TW4);
        stage_pair(&mut self.z, &TW16);
        stage_pair(&mut self.z, &TW64);
    }

    /// |2 X[k]| of the 512-point real FFT from the 256-point complex one:
    /// 2X[k] = (Z[k] + Z*[256-k]) - i W_512^k (Z[k] - Z*[256-k]).
    /// (The mel weights are halved to match.)
    #[inline(always)]
    fn bin_magnitude2(&self, k: usize) -> f32 {
        let k = k.min(HALF / 2);
        let kc = (HALF - k) & (HALF - 1);
        let [a, b] = self.z[k];
        let [c, d] = self.z[kc];
        let (er, ei) = (a + c, b - d);
        let (or, oi) = (b + d, c - a);
        let [cs, sn] = SPLIT[k];
        let xr = er + (cs * or + sn * oi);
        let xi = ei + (cs * oi - sn * or);
        sqrt(xr * xr + xi * xi)
    }

    /// Whole clip to float MFCCs. `pcm` is the clip as read: its maximum is
    /// taken over all of it, then it is cut or zero-padded to 16000 samples.
    /// Returns the maximum sample (0: the features are NaN, see the crate doc).
    pub fn mfcc(&mut self, pcm: &[i16], out: &mut [f32; FEATURES]) -> Result<i16, Error> {
        let mut frames = out.chunks_exact_mut(COEFFS);
        self.clip(pcm, |c| {
            if let Some(o) = frames.next() {
                o.copy_from_slice(c);
            }
        })
    }

    /// Whole clip to int8 features, quantized with the model's input
    /// parameters; otherwise as [`Frontend::mfcc`].
    pub fn mfcc_int8(
        &mut self,
        pcm: &[i16],
        q: Quant,
        out: &mut [i8; FEATURES],
    ) -> Result<i16, Error> {
        let mut frames = out.chunks_exact_mut(COEFFS);
        self.clip(pcm, |c| {
            if let Some(o) = frames.next() {
                for (o, &x) in o.iter_mut().zip(c.iter()) {
                    *o = q.quantize(x);
                }
            }
        })
    }

    fn clip(&mut self, pcm: &[i16], mut sink: impl FnMut(&[f32; COEFFS])) -> Result<i16, Error> {
        let peak = pcm.iter().copied().max().ok_or(Error::EmptyInput)?;
        let pcm = pcm.get(..CLIP_SAMPLES).unwrap_or(pcm);
        let mut mel = [0.0f32; MEL_BANDS];
        let mut c = [0.0f32; COEFFS];
        for f in 0..FRAMES {
            let frame = pcm.get(f * FRAME_STEP..).unwrap_or(&[]);
            self.frame_mel(frame, &mut mel);
            cepstrum(&mel, peak, &mut c);
            sink(&c);
        }
        Ok(peak)
    }
}

/// Radix-2 stages H and 2H of the in-place 256-point FFT, fused: the points j, j+H, j+2H, j+3H of every 4H group at
/// once, with the stage's twiddles `tw[j]` (the arithmetic of two radix-2
/// passes, half the loads and stores). `H` is a constant, so the chunking
/// cannot fail.
fn stage_pair<const H: usize>(z: &mut [[f32; 2]; HALF], tw: &[[f32; 4]; H]) {
    for group in z.chunks_exact_mut(4 * H) {
        // Quarters of H points: j, j+H, j+2H, j+3H.
        let Some((a, rest)) = group.split_at_mut_checked(H) else {
            continue;
        };
        let Some((b, rest)) = rest.split_at_mut_checked(H) else {
            continue;
        };
        let Some((c, d)) = rest.split_at_mut_checked(H) else {
            continue;
        };
        let points = a
            .iter_mut()
            .zip(b.iter_mut())
            .zip(c.iter_mut().zip(d.iter_mut()));
        for ((([p0r, p0i], [p1r, p1i]), ([p2r, p2i], [p3r, p3i])), w) in points.zip(tw.iter()) {
            let [c1, n1, c2, n2] = *w;
            // Stage H: (p0, p1) and (p2, p3), b * (c1 - i n1).
            let (tr, ti) = (*p1r * c1 + *p1i * n1, *p1i * c1 - *p1r * n1);
            let (q0r, q0i, q1r, q1i) = (*p0r + tr, *p0i + ti, *p0r - tr, *p0i - ti);
            let (tr, ti) = (*p3r * c1 + *p3i * n1, *p3i * c1 - *p3r * n1);
            let (q2r, q2i, q3r, q3i) = (*p2r + tr, *p2i + ti, *p2r - tr, *p2i - ti);
            // Stage 2H: (q0, q2) with W2, (q1, q3) with -i W2.
            let (tr, ti) = (q2r * c2 + q2i * n2, q2i * c2 - q2r * n2);
            *p0r = q0r + tr;
            *p0i = q0i + ti;
            *p2r = q0r - tr;
            *p2i = q0i - ti;
            // -i W2 = (-n2) - i c2: b * (-n2 - i c2)
            let (tr, ti) = (q3r * -n2 + q3i * c2, q3i * -n2 - q3r * c2);
            *p1r = q1r + tr;
            *p1i = q1i + ti;
            *p3r = q1r - tr;
            *p3i = q1i - ti;
        }
    }
}

/// Normalised log-mel and DCT of one frame: `dct(ln(mel / |peak| + 1e-6))`.
fn cepstrum(mel: &[f32; MEL_BANDS], peak: i16, out: &mut [f32; COEFFS]) {
    if peak == 0 {
        *out = [f32::NAN; COEFFS];
        return;
    }
    let inv = 1.0 / (peak as i32).unsigned_abs() as f32;
    let mut log_mel = [0.0f32; MEL_BANDS];
    for (l, &m) in log_mel.iter_mut().zip(mel.iter()) {
        *l = libm::logf(m * inv + LOG_OFFSET);
    }
    // DCT rows are even (c even) or odd (c odd) about the middle band:
    // fold the log-mels once, then 20 products per coefficient.
    let (lo, hi) = log_mel.split_at(MEL_BANDS / 2);
    let mut even = [0.0f32; MEL_BANDS / 2];
    let mut odd = [0.0f32; MEL_BANDS / 2];
    for (((e, o), &a), &b) in even
        .iter_mut()
        .zip(odd.iter_mut())
        .zip(lo.iter())
        .zip(hi.iter().rev())
    {
        *e = a + b;
        *o = a - b;
    }
    for (c, (o, row)) in out
        .iter_mut()
        .zip(DCT.chunks_exact(MEL_BANDS / 2))
        .enumerate()
    {
        let folded = if c % 2 == 0 { &even } else { &odd };
        *o = row.iter().zip(folded.iter()).map(|(&d, &l)| d * l).sum();
    }
}

/// Streaming front-end: push audio 320 samples (20 ms) at a time; after 50
/// hops the features of the last second are ready at any hop, for the cost of
/// the log and DCT (the frames' FFTs were done as the hops arrived). The
/// features of the last 16000 samples equal [`Frontend::mfcc`] of those
/// samples, bit for bit.
pub struct Stream {
    prev: [i16; FRAME_STEP],
    mel: [[f32; MEL_BANDS]; FRAMES],
    hop_max: [i16; HOPS],
    hops: usize,
}

impl Default for Stream {
    fn default() -> Self {
        Self::new()
    }
}

impl Stream {
    /// Size of the state in bytes.
    pub const BYTES: usize = core::mem::size_of::<Stream>();

    pub const fn new() -> Self {
        Stream {
            prev: [0; FRAME_STEP],
            mel: [[0.0; MEL_BANDS]; FRAMES],
            hop_max: [0; HOPS],
            hops: 0,
        }
    }

    /// Forgets all audio.
    pub fn reset(&mut self) {
        self.hops = 0;
    }

    /// Hops pushed since `new`/`reset` (saturates).
    pub fn hops(&self) -> usize {
        self.hops
    }

    /// Whether a full second has been pushed.
    pub fn ready(&self) -> bool {
        self.hops >= HOPS
    }

    /// Adds 320 new samples. Completes the frame that started one hop ago.
    pub fn push(&mut self, fe: &mut Frontend, hop: &[i16; FRAME_STEP]) {
        if self.hops > 0 {
            // The frame starting at hop (hops - 1): the previous hop and the
            // first 160 samples of this one.
            let slot = (self.hops - 1) % FRAMES;
            let mut frame = [0i16; FRAME_LENGTH];
            let (head, tail) = frame.split_at_mut(FRAME_STEP);
            head.copy_from_slice(&self.prev);
            for (t, &x) in tail.iter_mut().zip(hop.iter()) {
                *t = x;
            }
            if let Some(mel) = self.mel.get_mut(slot) {
                fe.frame_mel_480(&frame, mel);
            }
        }
        if let Some(m) = self.hop_max.get_mut(self.hops % HOPS) {
            *m = hop.iter().copied().max().unwrap_or(0);
        }
        self.prev = *hop;
        // Keeps slot arithmetic valid forever: any multiple of both 49 and 50.
        self.hops = if self.hops >= 2 * HOPS * FRAMES {
            self.hops - HOPS * FRAMES + 1
        } else {
            self.hops + 1
        };
    }

    /// Float features of the last second. Returns its maximum sample.
    pub fn features(&self, out: &mut [f32; FEATURES]) -> Result<i16, Error> {
        let mut frames = out.chunks_exact_mut(COEFFS);
        self.finish(|c| {
            if let Some(o) = frames.next() {
                o.copy_from_slice(c);
            }
        })
    }

    /// Int8 features of the last second. Returns its maximum sample.
    pub fn features_int8(&self, q: Quant, out: &mut [i8; FEATURES]) -> Result<i16, Error> {
        let mut frames = out.chunks_exact_mut(COEFFS);
        self.finish(|c| {
            if let Some(o) = frames.next() {
                for (o, &x) in o.iter_mut().zip(c.iter()) {
                    *o = q.quantize(x);
                }
            }
        })
    }

    fn finish(&self, mut sink: impl FnMut(&[f32; COEFFS])) -> Result<i16, Error> {
        if !self.ready() {
            return Err(Error::NotReady);
        }
        let peak = self.hop_max.iter().copied().max().unwrap_or(0);
        // The window's first frame started at hop (hops - 50).
        let first = self.hops - HOPS;
        let mut c = [0.0f32; COEFFS];
        for f in 0..FRAMES {
            if let Some(mel) = self.mel.get((first + f) % FRAMES) {
                cepstrum(mel, peak, &mut c);
                sink(&c);
            }
        }
        Ok(peak)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(FRAMES, 49);
        assert_eq!(FEATURES, 490);
        assert_eq!(Frontend::BYTES, 2048);
        assert_eq!(MEL_FIRST_BIN, 1);
        assert_eq!(MEL_BINS, 127);
    }

    #[test]
    fn sparse_mel_equals_dense() {
        let mut dense = [[0.0f32; MEL_BANDS]; 257];
        for (i, ((&j, &wa), &wb)) in MEL_IDX
            .iter()
            .zip(MEL_WA.iter())
            .zip(MEL_WB.iter())
            .enumerate()
        {
            let k = MEL_FIRST_BIN + i;
            let j = j as usize;
            if j > 0 {
                dense[k][j - 1] += 2.0 * wa;
            } else {
                assert_eq!(wa, 0.0);
            }
            if j < MEL_BANDS {
                dense[k][j] += 2.0 * wb;
            } else {
                assert_eq!(wb, 0.0);
            }
        }
        for (k, row) in dense.iter().enumerate() {
            for (m, &w) in row.iter().enumerate() {
                assert_eq!(w, tables::MEL_DENSE[k * MEL_BANDS + m], "bin {k} band {m}");
            }
        }
    }

    #[test]
    fn fft_matches_direct_dft() {
        // A frame of arbitrary samples: |2X[k]| against a direct f64 DFT.
        let x: [i16; FRAME_LENGTH] =
            core::array::from_fn(|n| ((n as i32 * 7919 + 13) % 20011 - 10005) as i16);
        let mut fe = Frontend::new();
        fe.load(&x);
        fe.fft();
        for k in 0..=128usize {
            let (mut re, mut im) = (0.0f64, 0.0f64);
            for (n, (&s, &w)) in x.iter().zip(WINDOW.iter()).enumerate() {
                let v = (s as f32 * w) as f64;
                let a = -2.0 * core::f64::consts::PI * (k * n) as f64 / 512.0;
                re += v * libm::cos(a);
                im += v * libm::sin(a);
            }
            let want = 2.0 * libm::sqrt(re * re + im * im);
            let got = fe.bin_magnitude2(k) as f64;
            assert!(
                (got - want).abs() <= 1e-5 * want.max(1e3),
                "bin {k}: {got} vs {want}"
            );
        }
    }

    #[test]
    fn quantize_matches_executorch() {
        let q = Quant::new(0.5, 3).unwrap();
        assert_eq!(q.quantize(0.25), 3); // 0.5 ties to even: 0
        assert_eq!(q.quantize(0.75), 5); // 1.5 -> 2
        assert_eq!(q.quantize(-0.25), 3);
        assert_eq!(q.quantize(-0.75), 1); // -1.5 -> -2
        assert_eq!(q.quantize(1000.0), 127);
        assert_eq!(q.quantize(-1000.0), -128);
        assert_eq!(q.quantize(f32::NAN), -128);
        assert_eq!(q.quantize(f32::INFINITY), 127);
        assert_eq!(Quant::new(0.0, 0), Err(Error::InvalidQuantParams));
        assert_eq!(Quant::new(f32::NAN, 0), Err(Error::InvalidQuantParams));
        assert_eq!(Quant::new(1.0, 128), Err(Error::InvalidQuantParams));
        assert_eq!(Error::InvalidQuantParams.code(), 0x12);
    }

    #[test]
    fn empty_and_silent_clips() {
        let mut fe = Frontend::new();
        let mut out = [0.0f32; FEATURES];
        assert_eq!(fe.mfcc(&[], &mut out), Err(Error::EmptyInput));
        assert_eq!(fe.mfcc(&[0; 100], &mut out), Ok(0));
        assert!(out.iter().all(|x| x.is_nan()));
        let mut q = [0i8; FEATURES];
        assert_eq!(
            fe.mfcc_int8(&[0; CLIP_SAMPLES], Quant::new(0.5, 83).unwrap(), &mut q),
            Ok(0)
        );
        assert!(q.iter().all(|&x| x == -128));
    }

    #[test]
    fn stream_equals_clip() {
        // 3.5 s of a deterministic signal; compare every full window.
        let sig: [i16; 56_000] = core::array::from_fn(|n| {
            let t = n as f32 / 16000.0;
            (8000.0 * libm::sinf(core::f32::consts::TAU * (300.0 + 400.0 * t) * t)
                + ((n * 2654435761) % 997) as f32) as i16
        });
        let mut fe = Frontend::new();
        let mut st = Stream::new();
        let mut a = [0.0f32; FEATURES];
        let mut b = [0.0f32; FEATURES];
        let mut compared = 0;
        for (h, hop) in sig.chunks_exact(FRAME_STEP).enumerate() {
            if h < HOPS {
                assert_eq!(st.features(&mut a), Err(Error::NotReady));
            }
            st.push(&mut fe, hop.try_into().unwrap());
            if st.ready() {
                let start = (h + 1 - HOPS) * FRAME_STEP;
                let pa = st.features(&mut a).unwrap();
                let pb = fe.mfcc(&sig[start..start + CLIP_SAMPLES], &mut b).unwrap();
                assert_eq!(pa, pb);
                assert_eq!(
                    a.map(f32::to_bits),
                    b.map(f32::to_bits),
                    "window at hop {h}"
                );
                compared += 1;
            }
        }
        assert_eq!(compared, 56_000 / FRAME_STEP - HOPS + 1);
    }

    #[test]
    fn stream_survives_its_counter_wrap() {
        // The hop counter folds back by 49 * 50 after 4900 hops (98 s):
        // windows just before and after still equal the whole-clip result.
        let sample = |n: usize| ((n * 2654435761) % 20011) as i16 - 10005;
        let mut fe = Frontend::new();
        let mut st = Stream::new();
        let (mut a, mut b) = ([0.0f32; FEATURES], [0.0f32; FEATURES]);
        for h in 0..5000usize {
            let hop: [i16; FRAME_STEP] = core::array::from_fn(|i| sample(h * FRAME_STEP + i));
            st.push(&mut fe, &hop);
            if h == 4898 || h == 4899 || h == 4999 {
                let start = (h + 1 - HOPS) * FRAME_STEP;
                let clip: [i16; CLIP_SAMPLES] = core::array::from_fn(|i| sample(start + i));
                assert_eq!(st.features(&mut a), fe.mfcc(&clip, &mut b));
                assert_eq!(a.map(f32::to_bits), b.map(f32::to_bits), "hop {h}");
            }
        }
        assert!(st.hops() < 2 * HOPS * FRAMES);
    }
}
