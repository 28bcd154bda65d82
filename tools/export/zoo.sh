#!/usr/bin/env bash
# Regenerates tests/zoo with the pinned ExecuTorch (see requirements.txt).
# usage: tools/export/zoo.sh PYTHON [--twice]
#   --twice: export again into a temporary folder and check every file is
#            byte-identical (exports are deterministic).
set -euo pipefail
py=${1:?usage: zoo.sh PYTHON [--twice]}
here=$(cd "$(dirname "$0")" && pwd)
out=$here/../../tests/zoo
mkdir -p "$out"
"$py" "$here/zoo.py" "$out"
"$py" "$here/zoo_readme.py" "$out"
if [ "${2:-}" = "--twice" ]; then
  tmp=$(mktemp -d)
  cp "$out/zoo.json" "$tmp/"   # the comparison rules are kept from zoo.json
  "$py" "$here/zoo.py" "$tmp"
  (cd "$out" && sha256sum ./*.pte ./*.npy ./*.expected.json ./zoo.json) > "$tmp/a.sha"
  (cd "$tmp" && sha256sum ./*.pte ./*.npy ./*.expected.json ./zoo.json) > "$tmp/b.sha"
  diff "$tmp/a.sha" "$tmp/b.sha" && echo "deterministic: both exports are byte-identical"
  rm -rf "$tmp"
fi
