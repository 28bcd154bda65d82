"""MLPerf Tiny keyword-spotting MFCC features in numpy (no TensorFlow needed).

Reproduces the test-time feature pipeline of mlcommons/tiny
`benchmark/training/keyword_spotting/get_dataset.py`
(`get_preprocess_audio_func(..., is_training=False)`, feature_type "mfcc") with the
default settings of `kws_util.py` / `keras_model.prepare_model_settings`:
16 kHz, 1000 ms clips, window 30 ms (480 samples), stride 20 ms (320 samples),
dct_coefficient_count 10. Output: 49 frames x 10 coefficients, float32.

Each step names the line it reproduces ("gd:" = get_dataset.py, "tf:" = the
TensorFlow function it calls, python/ops/signal/*.py):

  gd: wav_decoder = tf.cast(next_element['audio'], tf.float32)
      The tfds speech_commands audio is the raw int16 sample values (int64 dtype),
      so the float signal is the integer value itself, not divided by 32768.
  gd: wav_decoder = wav_decoder/tf.reduce_max(wav_decoder)
      reduce_max, NOT max(abs): a clip whose largest sample is negative is divided
      by a negative number (the MFCCs use |STFT| so the sign cancels).  A clip
      whose maximum is 0 (e.g. all-zero digital silence) divides by zero: 0/0 is
      NaN, x/0 is +-inf, and every feature becomes NaN (inf - inf in the FFT/DCT).
      We do the same division with numpy and therefore return the same NaNs.
      The maximum is taken over the samples as read, BEFORE padding.
  gd: tf.pad(wav_decoder, [[0, desired_samples - len]])     zero-pad to 16000.
      A clip longer than 16000 samples makes this tf.pad fail (negative padding);
      we trim it to its first 16000 samples instead (after taking the max over
      all samples read, like TF would if it could pad).
  gd: foreground_volume 1 (multiply by 1.0: no-op)
  gd: time_shift_padding [[2,2]], time_shift_offset [2]: pad 2 zeros each side,
      slice 16000 from offset 2: an exact no-op at test time.
  gd: tf.signal.stft(frame_length=480, frame_step=320, fft_length=None,
                     window_fn=tf.signal.hann_window)
      tf: fft_length = _enclosing_power_of_two(480) = 512; pad_end=False so
          frames = 1 + (16000 - 480) // 320 = 49; framed * window (float32);
          rfft(frames, [512]) zero-pads each 480-sample frame to 512 -> 257 bins.
      tf: hann_window(480, periodic=True): _raised_cosine_window with a = b = 0.5:
          n = window_length + periodic * even - 1 = 480;
          count = range(480) (float32); cos_arg = float32(2*pi) * count / n;
          w = 0.5 - 0.5 * cos(cos_arg), all float32.
  gd: spectrograms = tf.abs(stfts)                            magnitude
  gd: linear_to_mel_weight_matrix(40, 257, 16000, 20.0, 4000.0)
      tf (mel_ops.py), all float32:
          _hertz_to_mel(f) = 1127.0 * log(1.0 + f / 700.0)    (HTK mel)
          bands_to_zero = 1  ("HTK excludes the spectrogram DC bin")
          nyquist = sample_rate / 2.0
          linear_frequencies = linspace(0, nyquist, 257)[1:]
          band_edges_mel = frame(linspace(mel(20), mel(4000), 40 + 2), 3, 1)
          lower_slopes = (bins_mel - lower_edge_mel) / (center_mel - lower_edge_mel)
          upper_slopes = (upper_edge_mel - bins_mel) / (upper_edge_mel - center_mel)
          weights = maximum(0, minimum(lower_slopes, upper_slopes))
          pad([[1, 0], [0, 0]])   -> row 0 (DC) is all zero.
      tf.linspace (linspace_nd): delta = (stop - start) / (num - 1);
          start, start + i * delta (i = 1..num-2), stop.
  gd: mel = tf.tensordot(spectrograms, weights, 1)            (49,257)x(257,40)
  gd: log_mel = tf.math.log(mel + 1e-6)
  gd: tf.signal.mfccs_from_log_mel_spectrograms(log_mel)[..., :10]
      tf: dct(log_mel, type=2) * rsqrt(num_mel_bins * 2.0), where the
          unnormalised DCT-II is y[k] = 2 * sum_n x[n] cos(pi * k * (2n + 1) / (2N)),
          N = 40 (TF computes it with a length-2N rfft; same value).

Precision: the window and mel matrix are computed in float32 with the same
operation order as TensorFlow; the FFT, magnitude, mel product, log and DCT run
in float64 and are rounded to float32 once at the end, so this is the exact value
of TF's formula up to TF's own float32 rounding (validate_tf.py measures the
difference against real TensorFlow).

quantize() reproduces ExecuTorch's quantize_per_tensor
(kernels/quantized/cpu/op_quantize.cpp, quantize_val):
    inv_scale = 1.0f / (float)scale
    q = zero_point + nearbyint((float)(inv_scale * value))   # float32, half-even
    q = clamp(q, -128, 127)
NaN is undefined behaviour in that C++ cast; on x86-64 (where ExecuTorch's host
runtime runs) it yields INT64_MIN, i.e. -128 after the clamp; we define NaN -> -128.

usage: python mfcc_ref.py CLIP.wav [--scale S --zp Z] [--npy OUT.npy]
"""

import argparse
import sys
import wave

import numpy as np

SAMPLE_RATE = 16000
DESIRED_SAMPLES = 16000
FRAME_LENGTH = 480
FRAME_STEP = 320
FFT_LENGTH = 512
NUM_SPECTROGRAM_BINS = FFT_LENGTH // 2 + 1  # 257
NUM_FRAMES = 1 + (DESIRED_SAMPLES - FRAME_LENGTH) // FRAME_STEP  # 49
NUM_MEL_BINS = 40
LOWER_EDGE_HERTZ = 20.0
UPPER_EDGE_HERTZ = 4000.0
NUM_MFCC = 10
LOG_OFFSET = 1e-6

f32 = np.float32


def hann_window(length=FRAME_LENGTH):
    """tf.signal.hann_window(length, periodic=True, dtype=float32)."""
    even = 1 - length % 2
    n = f32(length + 1 * even - 1)
    count = np.arange(length, dtype=f32)
    cos_arg = f32(2 * np.pi) * count / n
    return (f32(0.5) - f32(0.5) * np.cos(cos_arg)).astype(f32)


def _linspace_f32(start, stop, num):
    """tf.linspace (linspace_nd) in float32."""
    start, stop = f32(start), f32(stop)
    delta = (stop - start) / f32(num - 1)
    mid = start + np.arange(1, num - 1, dtype=f32) * delta
    return np.concatenate([[start], mid, [stop]]).astype(f32)


def _hertz_to_mel(hz):
    hz = np.asarray(hz, dtype=f32)
    return (f32(1127.0) * np.log(f32(1.0) + hz / f32(700.0))).astype(f32)


def linear_to_mel_weight_matrix(
    num_mel_bins=NUM_MEL_BINS,
    num_spectrogram_bins=NUM_SPECTROGRAM_BINS,
    sample_rate=SAMPLE_RATE,
    lower_edge_hertz=LOWER_EDGE_HERTZ,
    upper_edge_hertz=UPPER_EDGE_HERTZ,
):
    """tf.signal.linear_to_mel_weight_matrix, float32, shape (bins, mel)."""
    nyquist = f32(sample_rate) / f32(2.0)
    linear_frequencies = _linspace_f32(0.0, nyquist, num_spectrogram_bins)[1:]
    bins_mel = _hertz_to_mel(linear_frequencies)[:, None]
    edges = _linspace_f32(
        _hertz_to_mel(lower_edge_hertz), _hertz_to_mel(upper_edge_hertz), num_mel_bins + 2
    )
    lower = edges[None, :-2]
    center = edges[None, 1:-1]
    upper = edges[None, 2:]
    lower_slopes = (bins_mel - lower) / (center - lower)
    upper_slopes = (upper - bins_mel) / (upper - center)
    w = np.maximum(f32(0.0), np.minimum(lower_slopes, upper_slopes)).astype(f32)
    return np.pad(w, [[1, 0], [0, 0]]).astype(f32)


def dct_matrix(num_mel_bins=NUM_MEL_BINS, num_mfcc=NUM_MFCC):
    """(mel, mfcc) float64 matrix of DCT-II * rsqrt(2 * num_mel_bins)."""
    n = np.arange(num_mel_bins)[:, None]
    k = np.arange(num_mfcc)[None, :]
    return 2.0 * np.cos(np.pi * k * (2 * n + 1) / (2.0 * num_mel_bins)) / np.sqrt(
        2.0 * num_mel_bins
    )


def normalise(pcm_int16):
    """Steps up to the STFT input: float32, / reduce_max, pad or trim to 16000."""
    x = np.asarray(pcm_int16).astype(f32)
    if x.ndim != 1:
        raise ValueError("pcm must be one-dimensional (mono)")
    if x.size == 0:
        raise ValueError("empty clip")
    with np.errstate(divide="ignore", invalid="ignore"):
        x = (x / np.max(x)).astype(f32)
    x = x[:DESIRED_SAMPLES]
    return np.pad(x, [0, DESIRED_SAMPLES - x.size]).astype(f32)


def magnitude_spectrogram(signal):
    """tf.abs(tf.signal.stft(signal, 480, 320)) as float64, shape (49, 257)."""
    idx = np.arange(NUM_FRAMES)[:, None] * FRAME_STEP + np.arange(FRAME_LENGTH)[None, :]
    frames = (signal[idx] * hann_window()).astype(f32)
    with np.errstate(invalid="ignore"):
        return np.abs(np.fft.rfft(frames.astype(np.float64), n=FFT_LENGTH, axis=-1))


def log_mel(pcm_int16):
    """log(mel + 1e-6) as float64, shape (49, 40)."""
    spec = magnitude_spectrogram(normalise(pcm_int16))
    w = linear_to_mel_weight_matrix().astype(np.float64)
    with np.errstate(invalid="ignore"):
        return np.log(spec @ w + LOG_OFFSET)


def mfcc(pcm_int16):
    """MLPerf Tiny KWS MFCC features: (49, 10) float32."""
    with np.errstate(invalid="ignore"):
        return (log_mel(pcm_int16) @ dct_matrix()).astype(f32)


def quantize(features, scale, zero_point, qmin=-128, qmax=127):
    """ExecuTorch quantize_per_tensor to int8 (see module docstring)."""
    v = np.asarray(features, dtype=f32)
    inv_scale = f32(1.0) / f32(scale)
    with np.errstate(invalid="ignore"):
        r = np.rint((inv_scale * v).astype(f32))  # rint: round half to even
        q = f32(zero_point) + r
        q = np.where(np.isnan(q), f32(qmin), q)
        return np.clip(q, qmin, qmax).astype(np.int8)


def read_wav(path):
    """16 kHz mono 16-bit PCM WAV -> int16 array (raises ValueError otherwise)."""
    with wave.open(str(path), "rb") as w:
        if w.getnchannels() != 1 or w.getsampwidth() != 2 or w.getframerate() != SAMPLE_RATE:
            raise ValueError(
                f"{path}: need 16000 Hz mono 16-bit PCM, got {w.getframerate()} Hz, "
                f"{w.getnchannels()} channel(s), {8 * w.getsampwidth()}-bit"
            )
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.int16)


def write_wav(path, pcm_int16):
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SAMPLE_RATE)
        w.writeframes(np.asarray(pcm_int16, dtype="<i2").tobytes())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("wav")
    ap.add_argument("--scale", type=float, help="quantize with this input scale")
    ap.add_argument("--zp", type=int, default=0, help="and this zero point")
    ap.add_argument("--npy", help="write the (49, 10) array (float32, or int8 with --scale)")
    args = ap.parse_args(argv)
    feats = mfcc(read_wav(args.wav))
    out = feats if args.scale is None else quantize(feats, args.scale, args.zp)
    if args.npy:
        np.save(args.npy, out)
    np.set_printoptions(precision=4, suppress=True, linewidth=120, threshold=sys.maxsize)
    print(out)


if __name__ == "__main__":
    main()
