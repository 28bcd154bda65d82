#!/usr/bin/env bash
# Regenerates the benchmark numbers: builds our QEMU instruction-counting
# plugin and the bare-metal benchmark firmware for each Cortex-M target, runs
# each under qemu-system-arm, and writes bench/results.json and
# docs/benchmarks.md. Installs what it needs (Debian packages, rustup targets).
#   bench/run.sh            all targets
#   bench/run.sh --ci       Cortex-M4 DS-CNN only; fails unless bit-exact
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=$here/build
mkdir -p "$build"
ci=${1:-}

need_pkgs=()
for p in gcc-arm-none-eabi binutils-arm-none-eabi qemu-system-arm libglib2.0-dev dpkg-dev xz-utils; do
  dpkg -s "$p" >/dev/null 2>&1 || need_pkgs+=("$p")
done
if [ ${#need_pkgs[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
fi
rustup target add thumbv7m-none-eabi thumbv7em-none-eabihf thumbv8m.main-none-eabihf >/dev/null 2>&1

# The plugin header comes from Debian's QEMU source package (matching the
# installed qemu-system-arm); QEMU's source is never kept in the repository.
header=$(ls -d "$build"/qemu-*/include 2>/dev/null | head -1 || true)
if [ -z "$header" ]; then
  if ! grep -qs "deb-src" /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; then
    sed -i 's/^Types: deb$/Types: deb deb-src/' /etc/apt/sources.list.d/debian.sources
    apt-get update -qq
  fi
  (cd "$build" && apt-get source --download-only qemu >/dev/null 2>&1 &&
     tar -xJf qemu_*.orig.tar.xz --wildcards '*/include/qemu/qemu-plugin.h')
  header=$(ls -d "$build"/qemu-*/include | head -1)
fi
gcc -shared -fPIC -O2 -Wall -I "$header" $(pkg-config --cflags glib-2.0) \
  -o "$build/libetch_count.so" "$here/qemu-plugin/etch_count.c"

# target name, rust triple, qemu machine, cpu, firmware features (- = none)
targets=("cortex-m3 thumbv7m-none-eabi mps2-an385 cortex-m3 -"
         "cortex-m4 thumbv7em-none-eabihf mps2-an386 cortex-m4 dsp"
         "cortex-m7 thumbv7em-none-eabihf mps2-an500 cortex-m7 dsp"
         "cortex-m33 thumbv8m.main-none-eabihf mps2-an505 cortex-m33 dsp")
[ "$ci" = "--ci" ] && targets=("cortex-m4 thumbv7em-none-eabihf mps2-an386 cortex-m4 dsp")
model=${ETCH_BENCH_MODEL:-dscnn_cm_m33_int8io}

runs=()
for t in "${targets[@]}"; do
  read -r name triple machine cpu features <<<"$t"
  feat=(); [ "$features" != "-" ] && feat=(--features "$features")
  # One target dir per CPU: the same triple is built with different features.
  (cd "$here/firmware" && ETCH_BENCH_MODEL=$model CARGO_TARGET_DIR="$here/firmware/target/$name" \
     cargo build -q --release --target "$triple" "${feat[@]}")
  elf=$here/firmware/target/$name/$triple/release/etch-bench
  # ETCH_BENCH_PCPROF=1: also count per instruction address (hot loops).
  prof=""; [ -n "${ETCH_BENCH_PCPROF:-}" ] && prof=",pcprof=$build/$name.pcprof"
  markers=0x$(arm-none-eabi-nm "$elf" | awk '/ETCH_BENCH_MARKERS/{print $1}')
  log=$build/$name.log
  counts=$build/$name.counts
  timeout 600 qemu-system-arm -M "$machine" -cpu "$cpu" -nographic \
    -semihosting-config enable=on,target=native \
    -plugin "$build/libetch_count.so,markers=$markers,n=256,out=$counts$prof" \
    -kernel "$elf" >"$log" 2>&1 || { echo "FAIL $name:"; cat "$log"; exit 1; }
  arm-none-eabi-nm -S --size-sort -C "$elf" >"$build/$name.nm"
  arm-none-eabi-size -A "$elf" >"$build/$name.size"
  runs+=("$name:$triple:$model:$features")
  echo "ran $name ($machine)"
done

# --ci checks bit-exactness only; the committed tables come from full runs.
out_root=$root
[ "$ci" = "--ci" ] && { out_root=$build/ci-report; mkdir -p "$out_root/bench" "$out_root/docs"; }
python3 "$here/report.py" "$build" "$out_root" "${runs[@]}"
