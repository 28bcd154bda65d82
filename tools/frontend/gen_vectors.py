"""Writes the front-end test vectors (numpy reference, mfcc_ref.py).

usage: python gen_vectors.py            (needs numpy only)
       python gen_vectors.py --check    recompute everything in memory and compare with
                                        the committed vectors (tools/ci/check-frontend-vectors.sh)

1. Synthetic 16 kHz mono int16 clips -> tools/frontend/vectors/<name>.wav
   (deterministic: fixed seeds), covering the edge cases of the pipeline.
   plus a copy of one committed keyword clip per label (`git show HEAD:
   tools/clips/wav/<label>_0.wav` -> vectors/kw_<label>.wav), so the vectors
   stay valid when tools/clips is regenerated.
2. For every clip in tools/frontend/vectors/*.wav:
   vectors/<name>.mfcc.f32   49x10 float32 little-endian, row-major (frame, coeff)
   vectors/<name>.<q>.i8     the same quantized with each qparam set q below
   and vectors/manifest.txt: one line per clip "name wav_path_relative_to_repo".
"""

import glob
import os
import subprocess
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import mfcc_ref  # noqa: E402

repo = os.path.dirname(os.path.dirname(here))
out = os.path.join(here, "vectors")

LABELS = ["down", "go", "left", "no", "off", "on", "right", "stop", "up", "yes", "silence", "unknown"]

# (tag, scale, zero_point)
QPARAMS = [
    # MLPerf Tiny's reference kws_ref_model.tflite input (shared/models/mlperf-tiny-kws)
    ("mlperf", 0.5847029089927673, 83),
    # tests/fixtures/dscnn_cm_m33_int8io.pte input0_scale / input0_zp (calibrated on randn)
    ("fixture", 0.030727779492735863, -6),
]


def synthetic():
    sr = 16000
    t = np.arange(sr) / sr
    rng = np.random.default_rng(7)
    clips = {}
    # linear chirp 50 Hz -> 7900 Hz, half scale
    f0, f1 = 50.0, 7900.0
    clips["sweep"] = 16000 * np.sin(2 * np.pi * (f0 * t + (f1 - f0) / 2 * t * t))
    clips["noise"] = rng.normal(0, 3000, sr)
    # very quiet tone: max normalisation blows tiny integers up to full scale
    clips["tone_quiet"] = np.round(20 * np.sin(2 * np.pi * 440 * t))
    # digital silence: reduce_max is 0 -> 0/0 -> NaN features (TF does the same)
    clips["silence"] = np.zeros(sr)
    # 1 kHz at 3x full scale, hard clipped to the int16 range
    clips["clipped"] = np.clip(3 * 32767 * np.sin(2 * np.pi * 1000 * t), -32768, 32767)
    # short clip: 0.5 s of a harmonic burst, zero-padded to 1 s by the pipeline
    h = sum(np.sin(2 * np.pi * 180 * k * t[:8000]) / k for k in range(1, 12))
    clips["short"] = 9000 * h * np.hanning(8000)
    # long clip: 17000 samples, trimmed to the first 16000
    clips["long"] = rng.normal(0, 800, 17000) + 5000 * np.sin(2 * np.pi * 300 * np.arange(17000) / sr)
    # every sample negative: reduce_max is negative, features equal those of |max|
    clips["negative"] = -2000 + np.clip(rng.normal(0, 300, sr), -1500, 1500)
    # speech-like: vowel-ish formants with syllable envelope, plus a little noise
    env = np.clip(np.sin(2 * np.pi * 2.5 * t), 0, None) ** 2
    pitch = 120 + 30 * np.sin(2 * np.pi * 1.3 * t)
    phase = 2 * np.cumsum(np.pi * pitch / sr)
    voiced = sum(
        np.sin(k * phase) * (1.0 / k) * (1 + 3 * np.exp(-(((k * 125 - 700) / 200) ** 2)))
        for k in range(1, 30)
    )
    clips["speechlike"] = 4000 * env * voiced + rng.normal(0, 60, sr)
    # single full-scale impulse in silence (max = 32767, one spike)
    imp = np.zeros(sr)
    imp[8000] = 32767
    clips["impulse"] = imp
    # one positive LSB among zeros: max = 1
    lsb = np.zeros(sr)
    lsb[1234] = 1
    clips["one_lsb"] = lsb
    return {k: np.clip(np.round(v), -32768, 32767).astype(np.int16) for k, v in clips.items()}


def check():
    """The committed vectors are what this script and mfcc_ref.py compute."""
    bad = 0
    synth = synthetic()
    lines = [l.split() for l in open(os.path.join(out, "manifest.txt")) if not l.startswith("#")]
    for name, rel in lines:
        path = os.path.join(repo, rel)
        pcm = mfcc_ref.read_wav(path)
        if name in synth and not np.array_equal(synth[name], pcm):
            print(f"{name}: synthetic clip differs from {rel}")
            bad += 1
        feats = mfcc_ref.mfcc(pcm)
        want = np.fromfile(os.path.join(out, f"{name}.mfcc.f32"), dtype="<f4").reshape(feats.shape)
        nan_ok = np.array_equal(np.isnan(feats), np.isnan(want))
        d = np.nanmax(np.abs(feats - want)) if not np.all(np.isnan(want)) else 0.0
        if not nan_ok or d > 1e-5:
            print(f"{name}: mfcc differs (max {d}, NaN pattern equal: {nan_ok})")
            bad += 1
        for tag, scale, zp in QPARAMS:
            q = mfcc_ref.quantize(feats, scale, zp)
            wq = np.fromfile(os.path.join(out, f"{name}.{tag}.i8"), dtype=np.int8).reshape(q.shape)
            diff = np.abs(q.astype(int) - wq.astype(int))
            if diff.max() > 1 or (diff > 0).sum() > 1:
                print(f"{name}.{tag}: int8 differs ({(diff > 0).sum()} elements, max {diff.max()})")
                bad += 1
    missing = set(synth) - {n for n, _ in lines}
    if missing:
        print(f"synthetic clips missing from the manifest: {sorted(missing)}")
        bad += 1
    print(f"{len(lines)} clips checked, {bad} problems (numpy {np.__version__})")
    return bad == 0


def main():
    if sys.argv[1:] == ["--check"]:
        sys.exit(0 if check() else 1)
    os.makedirs(out, exist_ok=True)
    for name, pcm in synthetic().items():
        mfcc_ref.write_wav(os.path.join(out, f"{name}.wav"), pcm)
    for label in LABELS:
        try:
            wav = subprocess.run(
                ["git", "-C", repo, "show", f"HEAD:tools/clips/wav/{label}_0.wav"],
                check=True, capture_output=True,
            ).stdout
        except subprocess.CalledProcessError:
            print(f"no committed tools/clips/wav/{label}_0.wav: keeping what vectors/ has")
            continue
        with open(os.path.join(out, f"kw_{label}.wav"), "wb") as f:
            f.write(wav)
    wavs = sorted(glob.glob(os.path.join(out, "*.wav")))
    for stale in glob.glob(os.path.join(out, "clip_*")):
        os.remove(stale)
    lines = []
    for path in wavs:
        rel = os.path.relpath(path, repo)
        name = os.path.splitext(os.path.basename(path))[0]
        feats = mfcc_ref.mfcc(mfcc_ref.read_wav(path))
        feats.astype("<f4").tofile(os.path.join(out, f"{name}.mfcc.f32"))
        for tag, scale, zp in QPARAMS:
            mfcc_ref.quantize(feats, scale, zp).tofile(os.path.join(out, f"{name}.{tag}.i8"))
        lines.append(f"{name} {rel}")
    with open(os.path.join(out, "manifest.txt"), "w") as f:
        f.write("# name wav (relative to the repo root); written by tools/frontend/gen_vectors.py\n")
        f.write("# qparams: " + " ".join(f"{t}={s!r},{z}" for t, s, z in QPARAMS) + "\n")
        f.write("\n".join(lines) + "\n")
    print(f"{len(lines)} clips -> {out}")


if __name__ == "__main__":
    main()
