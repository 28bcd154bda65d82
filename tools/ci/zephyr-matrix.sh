#!/usr/bin/env bash
# Twister over every sample and test of the etch Zephyr module on the
# platforms the module is checked on (native_sim, native_sim/native/64,
# qemu_riscv32), one sample/test folder and one platform at a time, and a
# table of the summary lines and wall times.
#
#   tools/ci/zephyr-matrix.sh [platform ...]     (default: all three)
#
# Environment (see docs/zephyr-measured.md):
#   ZEPHYR_BASE            Zephyr tree (>= 4.2), west and twister on PATH
#   ETCH_MATRIX_DIR        output folder (default /tmp/etch-zephyr-matrix)
#   ETCH_MATRIX_ONLY       a space-separated subset of folders (e.g. "samples/hello")
#   ETCH_ZEPHYR_LANG_RUST  zephyr-lang-rust checkout, for samples/rust_hello and
#                          samples/keyword_spotting_rust (skipped without it)
#   ETCH_RISCV_CROSS       cross prefix for qemu_riscv32 without the Zephyr SDK
#                          (default /usr/bin/riscv64-unknown-elf-, Debian's
#                          gcc-riscv64-unknown-elf with picolibc-riscv64-unknown-elf)
#   ETCH_JOBS              twister -j (default 1)
# Exit status 1 if any run failed.
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
out=${ETCH_MATRIX_DIR:-/tmp/etch-zephyr-matrix}
mkdir -p "$out"
[ -n "${ZEPHYR_BASE:-}" ] || { echo "ZEPHYR_BASE is not set"; exit 2; }
command -v west >/dev/null || { echo "west not on PATH"; exit 2; }

platforms=("$@")
[ ${#platforms[@]} -gt 0 ] || platforms=(native_sim native_sim/native/64 qemu_riscv32)
folders=${ETCH_MATRIX_ONLY:-$(cd "$root" && find samples tests/zephyr \
  \( -name sample.yaml -o -name testcase.yaml \) -printf '%h\n' | sort)}
export ETCH_HOST_TARGET_DIR=${ETCH_HOST_TARGET_DIR:-$out/etch-host}

summary=$out/summary.txt
: >"$summary"
fail=0
for p in "${platforms[@]}"; do
  for f in $folders; do
    name=$(echo "$p-$f" | tr '/' '_')
    modules=$root
    env_args=(ZEPHYR_TOOLCHAIN_VARIANT=host)
    extra=()
    case "$f" in
      *rust*)
        if [ -z "${ETCH_ZEPHYR_LANG_RUST:-}" ]; then
          echo "$p $f: skipped (ETCH_ZEPHYR_LANG_RUST not set)" | tee -a "$summary"
          continue
        fi
        modules="$root;$ETCH_ZEPHYR_LANG_RUST" ;;
    esac
    if [ "$p" = qemu_riscv32 ]; then
      cross=${ETCH_RISCV_CROSS:-/usr/bin/riscv64-unknown-elf-}
      env_args=(ZEPHYR_TOOLCHAIN_VARIANT=cross-compile CROSS_COMPILE=$cross)
      # Debian's binutils warn about the RWX segment of the qemu_riscv32
      # image, and twister links with --fatal-warnings (the SDK's do not).
      # Debian's GCC 12 has no multilib for Zephyr's
      # -march=rv32imac_zicsr_zifencei and names its default (rv64) libgcc.a,
      # which the Rust samples' link pulls in ("ABI is incompatible ...
      # elf64-littleriscv does not match elf32-littleriscv"): name the
      # rv32imac/ilp32 one first.
      libgcc=$(dirname "$("${cross}gcc" -march=rv32imac -mabi=ilp32 -print-libgcc-file-name)")
      extra=(-x SYSROOT_DIR=/usr/lib/picolibc/riscv64-unknown-elf
             -x "EXTRA_LDFLAGS=-Wl,--no-warn-rwx-segments -L$libgcc")
    fi
    start=$(date +%s)
    (cd "$root" && env "${env_args[@]}" ZEPHYR_EXTRA_MODULES="$modules" \
      nice -n 5 west twister -p "$p" -T "$f" -j "${ETCH_JOBS:-1}" -O "$out/$name" \
      --inline-logs "${extra[@]}") >"$out/$name.log" 2>&1
    rc=$?
    wall=$(( $(date +%s) - start ))
    {
      echo "== $p $f (rc=$rc, ${wall} s wall)"
      tr '\r' '\n' <"$out/$name.log" \
        | grep -E "test scenarios .* selected|executed test configurations passed|executed test cases passed|No tests to run|test configurations executed" \
        | sed 's/^INFO *- //'
    } | tee -a "$summary"
    [ "$rc" -eq 0 ] || fail=1
  done
done
exit $fail
