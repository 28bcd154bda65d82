#!/usr/bin/env bash
# Regenerates tests/fixtures with the pinned ExecuTorch (see requirements.txt).
# usage: tools/export/export_fixtures.sh PYTHON [--twice]
#   --twice: export again into a temporary folder and check the .pte files are
#            byte-identical (exports are deterministic).
set -euo pipefail
py=${1:?usage: export_fixtures.sh PYTHON [--twice]}
here=$(cd "$(dirname "$0")" && pwd)
out=$here/../../tests/fixtures
"$py" "$here/export_fixtures.py" "$out"
"$py" "$here/fixtures_readme.py" "$out"
if [ "${2:-}" = "--twice" ]; then
  tmp=$(mktemp -d)
  "$py" "$here/export_fixtures.py" "$tmp"
  (cd "$out" && sha256sum ./*.pte) > "$tmp/a.sha"
  (cd "$tmp" && sha256sum ./*.pte) > "$tmp/b.sha"
  diff "$tmp/a.sha" "$tmp/b.sha" && echo "deterministic: both exports are byte-identical"
fi
