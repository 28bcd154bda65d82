#!/usr/bin/env bash
# Regenerates models/kws (the trained MLPerf Tiny KWS DS-CNN as .pte files)
# with the pinned ExecuTorch (requirements.txt + ai-edge-litert) and
# espeak-ng/sox for the evaluation clips.
# usage: tools/export/kws.sh PYTHON [--twice]
#   --twice: export again into a temporary folder and check that the .pte files
#            and every reference .npy are byte-identical.
set -euo pipefail
py=${1:?usage: kws.sh PYTHON [--twice]}
here=$(cd "$(dirname "$0")" && pwd)
root=$here/../..
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$root/tools/clips/make_clips.py" "$tmp/eval" --first 3 --count 40
"$py" "$here/kws.py" --eval "$tmp/eval" --out "$root/models/kws"
if [ "${2:-}" = "--twice" ]; then
  "$py" "$here/kws.py" --out "$tmp/again"
  (cd "$root/models/kws" && find . -name '*.pte' -o -name '*.npy' | sort | xargs sha256sum) > "$tmp/a.sha"
  (cd "$tmp/again" && find . -name '*.pte' -o -name '*.npy' | sort | xargs sha256sum) > "$tmp/b.sha"
  diff "$tmp/a.sha" "$tmp/b.sha" && echo "deterministic: both exports are byte-identical ($(wc -l < "$tmp/a.sha") files)"
fi
