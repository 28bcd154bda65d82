#!/usr/bin/env bash
# Regenerates the dynamic-shape and dim-order programs of tests/programs
# with the pinned ExecuTorch (see requirements.txt); never run in CI.
# usage: tools/export/programs_dynamic.sh PYTHON
set -euo pipefail
py=${1:?usage: programs_dynamic.sh PYTHON}
here=$(cd "$(dirname "$0")" && pwd)
out=$here/../../tests/programs
mkdir -p "$out"
"$py" "$here/programs_dynamic.py" "$out"
