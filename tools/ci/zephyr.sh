#!/usr/bin/env bash
# CI for the etch Zephyr module.
#
# Always (no Zephyr tree needed): kconfiglib lint of Kconfig in a stub
# harness, YAML sanity of module.yml / west.yml / submanifest / every
# sample.yaml and testcase.yaml (tools/ci/zephyr_lint.py). Installs
# kconfiglib and PyYAML from PyPI into a private venv.
#
# Only where ZEPHYR_BASE points at a Zephyr tree (>= 4.2, with west and
# Zephyr's Python requirements on PATH, see docs/zephyr.md): twister on
# tests/zephyr and samples for native_sim, and the build-error checks
# (tests/zephyr/build_errors/run.sh). Prints the twister summary.
#
# Environment: ZEPHYR_BASE (optional), ETCH_CI_DIR (scratch, default
# /tmp/etch-ci-zephyr), ETCH_TWISTER_ARGS (extra twister arguments).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
work=${ETCH_CI_DIR:-/tmp/etch-ci-zephyr}
mkdir -p "$work"

echo "== zephyr: Kconfig and YAML lint"
python=${PYTHON:-python3}
if [ ! -x "$work/venv/bin/python" ]; then
  "$python" -m venv "$work/venv"
fi
"$work/venv/bin/pip" install --quiet --disable-pip-version-check kconfiglib==14.1.0 pyyaml
"$work/venv/bin/python" "$root/tools/ci/zephyr_lint.py" "$root"

if [ -z "${ZEPHYR_BASE:-}" ]; then
  echo "== zephyr: ZEPHYR_BASE not set: twister and build-error checks skipped"
  echo "   (no package registry ships a Zephyr tree; see docs/zephyr.md)"
  exit 0
fi

echo "== zephyr: twister (native_sim) with ZEPHYR_BASE=$ZEPHYR_BASE"
command -v west >/dev/null || { echo "west not on PATH"; exit 1; }
export ZEPHYR_EXTRA_MODULES=$root
export ZEPHYR_TOOLCHAIN_VARIANT=${ZEPHYR_TOOLCHAIN_VARIANT:-host}
# The host `etch` CLI (for `etch select`) is built once for all scenarios.
export ETCH_HOST_TARGET_DIR=${ETCH_HOST_TARGET_DIR:-$work/etch-host}
for t in i686-unknown-linux-gnu x86_64-unknown-linux-gnu; do
  rustup target list --installed 2>/dev/null | grep -qx "$t" || rustup target add "$t"
done
out=$work/twister-out
rc=0
(cd "$root" && west twister -p native_sim -T tests/zephyr -T samples \
  -j "${ETCH_JOBS:-2}" -O "$out" --inline-logs ${ETCH_TWISTER_ARGS:-}) \
  >"$work/twister.log" 2>&1 || rc=$?
# Progress lines end in \r: split them before picking the summary.
tr '\r' '\n' <"$work/twister.log" \
  | grep -E "test scenarios .* selected|executed test configurations passed|executed test cases passed|test configurations executed" \
  | sed 's/^INFO *- //' || true
if [ "$rc" -ne 0 ]; then
  tail -60 "$work/twister.log"
  echo "== zephyr: twister failed (log: $work/twister.log)"
  exit 1
fi

echo "== zephyr: build errors (registry too small, unknown operator)"
"$root/tests/zephyr/build_errors/run.sh" "$work/build-errors"
echo "== zephyr: ok"
