#!/usr/bin/env bash
# Regenerates tests/programs (the program-features zoo) with the
# pinned ExecuTorch (see requirements.txt); never run in CI.
# usage: tools/export/programs.sh PYTHON [--only SUBSTRING]
set -euo pipefail
py=${1:?usage: programs.sh PYTHON [--only SUBSTRING]}
shift
here=$(cd "$(dirname "$0")" && pwd)
out=$here/../../tests/programs
mkdir -p "$out"
"$py" "$here/programs.py" "$out" "$@"
python3 "$here/programs_readme.py" "$out"
