"""Compares mfcc_ref.mfcc with real TensorFlow on WAV files or test signals.

Needs tensorflow (e.g. `python3 -m venv /work/venv-tf && /work/venv-tf/bin/pip
install tensorflow-cpu numpy`; never in CI). The TF side below is the MLPerf Tiny
get_dataset.py test-time "mfcc" graph, step by step, with its default settings.

usage: python validate_tf.py [CLIP.wav ...]     (default: tools/frontend/vectors/*.wav)
"""

import glob
import os
import sys

import numpy as np
import tensorflow as tf

sys.path.insert(0, os.path.dirname(__file__))
import mfcc_ref  # noqa: E402


def tf_mfcc(pcm_int16):
    """The MLPerf Tiny graph (get_preprocess_audio_func, is_training=False, mfcc)."""
    desired_samples = 16000
    wav = tf.cast(tf.constant(pcm_int16.astype(np.int64)), tf.float32)
    wav = wav / tf.reduce_max(wav)
    wav = tf.pad(wav, [[0, desired_samples - tf.shape(wav)[-1]]])
    wav = tf.multiply(wav, tf.constant(1, dtype=tf.float32))
    padded = tf.pad(wav, tf.constant([[2, 2]], tf.int32), mode="CONSTANT")
    sliced = tf.slice(padded, tf.constant([2], tf.int32), [desired_samples])
    stfts = tf.signal.stft(
        sliced, frame_length=480, frame_step=320, fft_length=None, window_fn=tf.signal.hann_window
    )
    spectrograms = tf.abs(stfts)
    num_spectrogram_bins = stfts.shape[-1]
    w = tf.signal.linear_to_mel_weight_matrix(40, num_spectrogram_bins, 16000, 20.0, 4000.0)
    mel = tf.tensordot(spectrograms, w, 1)
    log_mel = tf.math.log(mel + 1e-6)
    mfccs = tf.signal.mfccs_from_log_mel_spectrograms(log_mel)[..., :10]
    return tf.reshape(mfccs, [49, 10]).numpy(), w.numpy(), tf.signal.hann_window(480).numpy()


def main():
    paths = sys.argv[1:] or sorted(
        glob.glob(os.path.join(os.path.dirname(__file__), "vectors", "*.wav"))
    )
    _, w_tf, hann_tf = tf_mfcc(np.ones(16000, np.int16))
    w_np, hann_np = mfcc_ref.linear_to_mel_weight_matrix(), mfcc_ref.hann_window()
    print(f"tensorflow {tf.__version__}")
    print(f"hann window: max |diff| {np.max(np.abs(hann_tf - hann_np)):.3g}")
    print(f"mel matrix:  max |diff| {np.max(np.abs(w_tf - w_np)):.3g}")
    worst = 0.0
    for p in paths:
        pcm = mfcc_ref.read_wav(p)
        a = tf_mfcc(pcm)[0] if pcm.size <= 16000 else tf_mfcc(pcm[:16000])[0]
        b = mfcc_ref.mfcc(pcm)
        both_nan = np.isnan(a) & np.isnan(b)
        if np.any(np.isnan(a) != np.isnan(b)):
            print(f"{os.path.basename(p)}: NaN pattern differs")
            worst = np.inf
            continue
        d = np.abs(a - b)[~both_nan]
        m = float(d.max()) if d.size else 0.0
        rel = float((d / np.maximum(np.abs(a[~both_nan]), 1.0)).max()) if d.size else 0.0
        worst = max(worst, m)
        print(
            f"{os.path.basename(p)}: max |tf - numpy| {m:.3g} (relative {rel:.3g}), "
            f"NaN {int(both_nan.sum())}/490 in both, range [{np.nanmin(a):.2f}, {np.nanmax(a):.2f}]"
        )
    print(f"worst max |diff| over {len(paths)} clips: {worst:.3g}")


if __name__ == "__main__":
    main()
