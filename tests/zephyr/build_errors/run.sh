#!/usr/bin/env bash
# Build-time errors of the etch Zephyr module, checked against a Zephyr tree
# (twister cannot expect a build to fail): each case configures app/ (the
# smallest etch application) for native_sim, builds only the cargo step
# (target etch_cargo), expects it to fail, and greps the message.
#
# Needs ZEPHYR_BASE and west; etch is added with ZEPHYR_EXTRA_MODULES.
# Usage: tests/zephyr/build_errors/run.sh [build-root]
set -u
here=$(cd "$(dirname "$0")" && pwd)
etch=$(cd "$here/../../.." && pwd)
root=${1:-${TMPDIR:-/tmp}/etch-build-errors}
: "${ZEPHYR_BASE:?set ZEPHYR_BASE}"
export ZEPHYR_EXTRA_MODULES=$etch
export ZEPHYR_TOOLCHAIN_VARIANT=${ZEPHYR_TOOLCHAIN_VARIANT:-host}
app=$here/app
failures=0

# expect_failure NAME PATTERN CMAKE-ARGS...
expect_failure() {
  local name=$1 pattern=$2
  shift 2
  local dir=$root/$name log=$root/$name.log
  rm -rf "$dir"
  if west build -p -b native_sim "$app" -d "$dir" -t etch_cargo -o=-j2 -- "$@" >"$log" 2>&1; then
    echo "FAIL $name: the build succeeded"
    failures=$((failures + 1))
  elif grep -q -- "$pattern" "$log"; then
    echo "PASS $name: $(grep -m1 -o -- ".\{0,60\}$pattern.\{0,40\}" "$log")"
  else
    echo "FAIL $name: no '$pattern' in $log"
    tail -20 "$log"
    failures=$((failures + 1))
  fi
}

mkdir -p "$root"

# tiny_cm_m33 calls 3 operators: a registry of 2 cannot hold them, and the
# message names the number needed.
expect_failure registry_too_small "CONFIG_ETCH_KERNEL_REGISTRY_SIZE=3" \
  -DCONFIG_ETCH_MODEL=\"../../../fixtures/tiny_cm_m33.pte\" \
  -DCONFIG_ETCH_KERNEL_REGISTRY_SIZE=2

# Without a model every operator is linked; the count is only known to
# etch-ffi's build script, which refuses the size the same way.
expect_failure registry_too_small_all_ops "set it to at least" \
  -DCONFIG_ETCH_KERNEL_REGISTRY_SIZE=4

# An operator etch has no kernel for is named.
expect_failure unknown_operator "etch has no kernel for 'aten::no_such_op.out'" \
  -DCONFIG_ETCH_OPS=\"aten::no_such_op.out\"

# A program delegated to a backend etch does not have (XNNPACK) fails the
# build, naming the delegate, instead of failing at run time with NotFound.
expect_failure foreign_delegate "the program delegates to XnnpackBackend" \
  -DCONFIG_ETCH_MODEL=\"../../../fixtures/tiny_xnnpack_delegate.pte\"

if [ "$failures" -ne 0 ]; then
  echo "build_errors: $failures case(s) failed"
  exit 1
fi
echo "build_errors: all cases failed the build as expected"
