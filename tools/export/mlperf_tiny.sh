#!/usr/bin/env bash
# Regenerates bench/models (the MLPerf Tiny programs with int8 I/O, and the float-I/O ones for Cortex-M55) with the
# pinned ExecuTorch (see requirements.txt). usage: tools/export/mlperf_tiny.sh PYTHON [NAME-FILTER]
set -euo pipefail
py=${1:?usage: mlperf_tiny.sh PYTHON}
here=$(cd "$(dirname "$0")" && pwd)
"$py" "$here/mlperf_tiny.py" "$here/../../bench/models" "${2:-}"
