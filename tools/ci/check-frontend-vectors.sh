#!/usr/bin/env bash
# The front-end test vectors (tools/frontend/vectors) are what the numpy
# reference computes: regenerates every clip and feature in memory with
# tools/frontend/gen_vectors.py --check (numpy only, in a throwaway venv).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
venv=${ETCH_FRONTEND_VENV:-/tmp/etch-frontend-venv}
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q -r "$here/tools/frontend/requirements.txt"
"$venv/bin/python" "$here/tools/frontend/gen_vectors.py" --check
