#!/usr/bin/env python3
"""Synthetic keyword-spotting clips: 1 s, 16 kHz, mono, 16-bit PCM WAV.

Speech comes from Debian's espeak-ng (several English voices and voice
variants, speeds, pitches), background noise from sox (white/pink/brown noise
with sox's repeatable seed, `-R`), mixed with sox at deterministic levels.
Python (standard library only) picks the parameters, trims espeak's leading
and trailing silence and places the word in a 16000-sample window.

Every clip is a pure function of (label, index): the same script with the
same espeak-ng/sox (Debian 12: espeak-ng 1.51, sox 14.4.2) gives the same
bytes. `--check DIR` regenerates DIR's clips and compares them byte for byte.

Labels (the MLPerf Tiny KWS order): the 10 keywords, `silence` (noise only)
and `unknown` (other Speech Commands words). Files are named
`<label>_<index>.wav` so a test can read the expected label from the name.

usage:
  make_clips.py OUT_DIR [--first K0] [--count N] [--extra M]
      writes <kw>_<k>.wav for every keyword and k in K0..K0+N-1, plus
      silence_<k>.wav and unknown_<k>.wav for k in K0..K0+M-1 (M defaults to N),
      and manifest.tsv (one line per clip: file and its parameters)
  make_clips.py --check DIR   regenerate every clip listed in DIR/manifest.tsv
                              into a temporary folder; exit 1 on any difference

The committed set is `make_clips.py tools/clips/wav --count 3 --extra 2`;
the evaluation set is `make_clips.py OUT --first 3 --count 40` (disjoint).
"""

import argparse
import array
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import wave

RATE = 16000
SAMPLES = 16000
KEYWORDS = ["down", "go", "left", "no", "off", "on", "right", "stop", "up", "yes"]
LABELS = KEYWORDS + ["silence", "unknown"]
# Speech Commands words outside the 10 keywords (the "unknown" class).
UNKNOWN_WORDS = ["bed", "bird", "cat", "dog", "eight", "five", "four", "happy", "house", "marvin",
                 "nine", "one", "seven", "sheila", "six", "three", "tree", "two", "wow", "zero",
                 "backward", "forward", "follow", "learn", "visual"]
# espeak-ng's own English voices (no mbrola) and voice variants.
VOICES = ["en-us", "en", "en-gb-x-rp", "en-gb-scotland", "en-gb-x-gbclan", "en-gb-x-gbcwmd",
          "en-029", "en-us-nyc"]
# (No whisper/croak/klatt: far from the read speech of Speech Commands.)
VARIANTS = ["", "m1", "m2", "m3", "m4", "m5", "m6", "m7", "f1", "f2", "f3", "f4", "f5",
            "klatt2", "klatt3"]
NOISES = ["white", "pink", "brown"]
NOISE_SECONDS = 30
SOX = ["sox", "-R", "-D", "-V1"]  # repeatable seed, no dither, errors only


def params(label, k):
    """The clip's parameters: a deterministic function of (label, k)."""
    rng = random.Random(LABELS.index(label) * 100003 + k)
    p = {
        "label": label,
        "k": k,
        "noise": NOISES[rng.randrange(len(NOISES))],
        "noise_offset": rng.randrange(0, (NOISE_SECONDS - 1) * RATE),
    }
    if label == "silence":
        p["noise_dbfs"] = rng.choice([-55, -45, -35, -25])
        return p
    word = label if label in KEYWORDS else UNKNOWN_WORDS[rng.randrange(len(UNKNOWN_WORDS))]
    variant = VARIANTS[rng.randrange(len(VARIANTS))]
    voice = VOICES[rng.randrange(len(VOICES))] + ("+" + variant if variant else "")
    p.update({
        "word": word,
        "voice": voice,
        # words per minute: Speech Commands words are short (about 0.5 s)
        "speed": rng.choice([150, 170, 190, 210, 230]),
        "pitch": rng.choice([20, 35, 50, 65, 80]),
        "peak": rng.choice([0.25, 0.4, 0.55, 0.7]),
        "shift": rng.randrange(-1600, 1601),
        # Noise RMS below the speech peak, in dB.
        "snr_db": rng.choice([25, 30, 35, 40, 45, 50]),
    })
    return p


def read_wav(path):
    with wave.open(path, "rb") as w:
        assert w.getnchannels() == 1 and w.getsampwidth() == 2, path
        a = array.array("h", w.readframes(w.getnframes()))
    if sys.byteorder != "little":
        a.byteswap()
    return a


def write_wav(path, samples):
    a = array.array("h", samples)
    if sys.byteorder != "little":
        a.byteswap()
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(a.tobytes())


def rms(a):
    return math.sqrt(sum(x * x for x in a) / max(len(a), 1))


def run(cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def noise_file(tmp, colour):
    path = os.path.join(tmp, f"noise_{colour}.wav")
    if not os.path.exists(path):
        run(SOX + ["-n", "-r", str(RATE), "-b", "16", "-c", "1", path,
                   "synth", str(NOISE_SECONDS), colour + "noise", "vol", "0.5"])
    return path


def speech(tmp, p):
    """espeak-ng -> 16 kHz via sox -> trimmed, scaled to its peak, placed in 1 s."""
    raw = os.path.join(tmp, "espeak.wav")
    r16 = os.path.join(tmp, "espeak16.wav")
    run(["espeak-ng", "-v", p["voice"], "-s", str(p["speed"]), "-p", str(p["pitch"]), "-w", raw, p["word"]])
    run(SOX + [raw, "-r", str(RATE), "-b", "16", "-c", "1", r16])
    a = read_wav(r16)
    peak = max(abs(x) for x in a)
    thr = peak // 50
    idx = [i for i, x in enumerate(a) if abs(x) > thr]
    margin = RATE // 50  # keep 20 ms around the voiced part
    lo, hi = max(idx[0] - margin, 0), min(idx[-1] + margin + 1, len(a))
    word = a[lo:hi]
    if len(word) > SAMPLES:  # keep the middle second
        cut = (len(word) - SAMPLES) // 2
        word = word[cut:cut + SAMPLES]
    gain = p["peak"] * 32767 / peak
    word = [int(round(x * gain)) for x in word]
    start = (SAMPLES - len(word)) // 2 + p["shift"]
    start = min(max(start, 0), SAMPLES - len(word))
    out = [0] * SAMPLES
    out[start:start + len(word)] = word
    return out


def make_clip(tmp, p, path):
    seg = os.path.join(tmp, "noise_seg.wav")
    run(SOX + [noise_file(tmp, p["noise"]), seg, "trim", f"{p['noise_offset']}s", f"{SAMPLES}s"])
    n_rms = rms(read_wav(seg))
    if p["label"] == "silence":
        target = 32768 * 10 ** (p["noise_dbfs"] / 20)
        run(SOX + ["-v", f"{target / n_rms:.6f}", seg, path])
        return
    sp = os.path.join(tmp, "speech.wav")
    write_wav(sp, speech(tmp, p))
    target = p["peak"] * 32767 * 10 ** (-p["snr_db"] / 20)
    run(SOX + ["-m", "-v", "1", sp, "-v", f"{target / n_rms:.6f}", seg, path])


def describe(p):
    keys = ["word", "voice", "speed", "pitch", "peak", "shift", "snr_db", "noise", "noise_offset", "noise_dbfs"]
    return " ".join(f"{k}={p[k]}" for k in keys if k in p)


def generate(out, jobs):
    os.makedirs(out, exist_ok=True)
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, k in jobs:
            p = params(label, k)
            name = f"{label}_{k}.wav"
            make_clip(tmp, p, os.path.join(out, name))
            lines.append(f"{name}\t{describe(p)}\n")
    with open(os.path.join(out, "manifest.tsv"), "w") as f:
        f.write("# file\tparameters (tools/clips/make_clips.py)\n")
        f.writelines(lines)
    return [l.split("\t")[0] for l in lines]


def check(d):
    jobs = []
    with open(os.path.join(d, "manifest.tsv")) as f:
        for line in f:
            if line.startswith("#"):
                continue
            name = line.split("\t")[0]
            label, k = name[:-4].rsplit("_", 1)
            jobs.append((label, int(k)))
    with tempfile.TemporaryDirectory() as out:
        names = generate(out, jobs)
        bad = [n for n in names + ["manifest.tsv"]
               if open(os.path.join(out, n), "rb").read() != open(os.path.join(d, n), "rb").read()]
    if bad:
        print(f"clips differ from a fresh generation: {' '.join(bad)}", file=sys.stderr)
        return 1
    print(f"{len(names)} clips in {d} are byte-identical to a fresh generation")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", nargs="?")
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--count", type=int, default=3)
    ap.add_argument("--extra", type=int, default=None, help="silence/unknown clips (default: --count)")
    ap.add_argument("--check", metavar="DIR")
    a = ap.parse_args()
    for tool in ("espeak-ng", "sox"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} not found: apt-get install espeak-ng sox")
    if a.check:
        sys.exit(check(a.check))
    if not a.out:
        ap.error("OUT_DIR or --check DIR")
    extra = a.count if a.extra is None else a.extra
    jobs = [(kw, k) for kw in KEYWORDS for k in range(a.first, a.first + a.count)]
    jobs += [(lab, k) for lab in ("silence", "unknown") for k in range(a.first, a.first + extra)]
    names = generate(a.out, jobs)
    print(f"{len(names)} clips in {a.out}")


if __name__ == "__main__":
    main()
