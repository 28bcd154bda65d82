#!/usr/bin/env python3
"""The listening test's recording: keywords at known times between stretches
of silence and noise, as a microphone would hear them (16 kHz mono 16-bit).

Built from the bundled synthetic clips (tools/clips/wav/) and the real
Speech Commands recordings in shared/data/speech-commands/ (TensorFlow Lite
Micro's micro_speech test data): real "yes", real near-silence between the
words, real background noise in long stretches. Python standard library
only; the output is a pure function of the inputs.

Writes OUT_DIR/recording.wav, OUT_DIR/bad_format.wav (8 kHz stereo: what a
microphone driver must refuse) and OUT_DIR/recording.tsv, one line per
segment: start and end (seconds), kind (keyword / silence / noise / other)
and, for keywords, the label and the source clip. The listening tests
(rust/etch-cli/tests/listen.rs, the Zephyr samples' twister scenarios)
expect one detection of each keyword segment's label and none elsewhere.

usage: make_recording.py OUT_DIR [--shared DIR]   (default $ETCH_SHARED, else ../shared beside the repository)
       make_recording.py --check OUT_DIR [--shared DIR]   regenerate and compare byte for byte
"""

import argparse
import filecmp
import os
import sys
import tempfile
import wave

HERE = os.path.dirname(os.path.abspath(__file__))
RATE = 16000

# (kind, source, seconds): kind "keyword" takes a 1 s clip; "silence" and
# "noise" repeat a real 1 s recording for the given seconds; "other" is a
# non-keyword clip (the model's "unknown"/"silence" classes).
TIMELINE = [
    ("silence", "shared:silence_1000ms", 2),
    ("keyword", "clip:yes_0", 1),
    ("silence", "shared:silence_1000ms", 3),
    ("keyword", "clip:left_0", 1),
    ("silence", "shared:silence_1000ms", 3),
    ("keyword", "shared:yes_1000ms", 1),
    ("noise", "shared:noise_1000ms", 4),
    ("keyword", "clip:right_1", 1),
    ("silence", "shared:silence_1000ms", 3),
    ("keyword", "clip:up_1", 1),
    ("silence", "shared:silence_1000ms", 3),
    ("other", "clip:unknown_0", 1),
    ("silence", "shared:silence_1000ms", 3),
    ("keyword", "clip:off_0", 1),
    ("silence", "shared:silence_1000ms", 3),
    ("keyword", "clip:no_2", 1),
    ("noise", "shared:noise_1000ms", 3),
    ("silence", "shared:silence_1000ms", 2),
]


def read_pcm(path):
    with wave.open(path, "rb") as w:
        if (w.getframerate(), w.getnchannels(), w.getsampwidth()) != (RATE, 1, 2):
            sys.exit(f"{path}: not 16 kHz mono 16-bit")
        data = w.readframes(w.getnframes())
    if len(data) != 2 * RATE:
        sys.exit(f"{path}: not 1 s long")
    return data


def source_path(source, shared):
    where, name = source.split(":")
    if where == "clip":
        return os.path.join(HERE, "wav", name + ".wav")
    return os.path.join(shared, "data", "speech-commands", name + ".wav")


def build(out_dir, shared):
    os.makedirs(out_dir, exist_ok=True)
    pcm = bytearray()
    rows = []
    for kind, source, seconds in TIMELINE:
        one = read_pcm(source_path(source, shared))
        start = len(pcm) // 2 / RATE
        pcm += one * seconds
        end = len(pcm) // 2 / RATE
        name = source.split(":")[1]
        label = name.split("_")[0] if kind == "keyword" else "-"
        rows.append(f"{start:.3f}\t{end:.3f}\t{kind}\t{label}\t{source}")
    with wave.open(os.path.join(out_dir, "recording.wav"), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(bytes(pcm))
    # A file the microphone must refuse (8 kHz stereo): the bad-input test.
    with wave.open(os.path.join(out_dir, "bad_format.wav"), "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(bytes(4 * 2000))
    with open(os.path.join(out_dir, "recording.tsv"), "w") as f:
        f.write("start_s\tend_s\tkind\tlabel\tsource\n")
        f.write("\n".join(rows) + "\n")
    return len(pcm) // 2 / RATE


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--shared", default=os.environ.get("ETCH_SHARED", os.path.join(HERE, "..", "..", "..", "shared")))
    a = ap.parse_args()
    if not a.check:
        secs = build(a.out, a.shared)
        print(f"{a.out}/recording.wav: {secs:.1f} s")
        return
    with tempfile.TemporaryDirectory() as tmp:
        build(tmp, a.shared)
        for name in ("recording.wav", "recording.tsv", "bad_format.wav"):
            if not filecmp.cmp(os.path.join(tmp, name), os.path.join(a.out, name), shallow=False):
                sys.exit(f"{name} differs from a fresh build")
    print("recording.wav, recording.tsv and bad_format.wav regenerate byte for byte")


if __name__ == "__main__":
    main()
