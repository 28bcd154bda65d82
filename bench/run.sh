#!/usr/bin/env bash
# Regenerates the benchmark numbers: builds our QEMU instruction-counting
# plugin and the bare-metal benchmark firmware for each Cortex-M target, runs
# each under qemu-system-arm, and writes bench/results.json and
# docs/benchmarks.md. Installs what it needs (Debian packages, rustup targets).
#   bench/run.sh            Cortex-M0/M3/M4/M7/M33/M55 x the MLPerf Tiny suite,
#                           and DS-CNN on the x86-64 host (callgrind)
#   bench/run.sh --ci       the suite with int8 I/O on Cortex-M4 and Cortex-M55
#                           (Helium: --features mve) only; fails unless bit-exact
#                           and within the guards
# Every run fails unless each program's output is bit-exact and the guards of
# bench/report.py hold. ETCH_BENCH_MODEL=name runs one program on every target;
# ETCH_BENCH_TARGETS="cortex-m55" only the named targets.
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
rustup target add thumbv6m-none-eabi thumbv7m-none-eabi thumbv7em-none-eabihf thumbv8m.main-none-eabihf >/dev/null 2>&1

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

# The MLPerf Tiny closed-division models (int8, cortex_m flow, from upstream's
# executorch.examples.models.mlperf_tiny): keyword spotting is the DS-CNN
# fixture (int8 I/O; exported for the target's CPU where the flow tells them
# apart); the others twice: with int8 I/O as deployed (bench/models,
# tools/export/mlperf_tiny.py: cpu M33 encoding, cpu M55 on Cortex-M55) and
# with float I/O (the zoo's cortex_m programs, tools/export/zoo.py, cpu M33
# encoding; on Cortex-M55 the same exported for cpu M55, bench/models).
# suite-name:program, where {enc} is m0, m33 or m55, {e} m55 on Cortex-M55
# and m33 elsewhere, and {m55} _m55 on Cortex-M55, else nothing.
suite=("kws:dscnn_cm_{enc}_int8io"
       "vww:mobilenet_v1_025_cm_{e}_int8io" "ic:resnet8_cm_{e}_int8io" "ad:autoencoder_cm_{e}_int8io"
       "vww-f32io:mobilenet_v1_025_cm{m55}" "ic-f32io:resnet8_cm{m55}" "ad-f32io:autoencoder_cm{m55}")
# target name, rust triple, qemu machine, qemu cpu, firmware features (- = none),
# -C target-cpu (- = the triple's default / .cargo/config.toml), memory map, program encoding.
# Cortex-M0: QEMU has no MPS2 board taking -cpu cortex-m0 (and its micro:bit,
# the one Cortex-M0 machine, has 16 KiB of RAM), so the thumbv6m-none-eabi ELF
# runs on the Cortex-M3 board after check_v6m has proved it holds only
# Armv6-M instructions (which execute identically on the M3).
targets=("cortex-m0 thumbv6m-none-eabi mps2-an385 cortex-m3 - - mps2 m0"
         "cortex-m3 thumbv7m-none-eabi mps2-an385 cortex-m3 - - mps2 m33"
         "cortex-m4 thumbv7em-none-eabihf mps2-an386 cortex-m4 dsp - mps2 m33"
         "cortex-m7 thumbv7em-none-eabihf mps2-an500 cortex-m7 dsp - mps2 m33"
         "cortex-m33 thumbv8m.main-none-eabihf mps2-an505 cortex-m33 dsp - an505 m33"
         "cortex-m55 thumbv8m.main-none-eabihf mps3-an547 cortex-m55 mve cortex-m55 an547 m55")
if [ "$ci" = "--ci" ]; then
  targets=("cortex-m4 thumbv7em-none-eabihf mps2-an386 cortex-m4 dsp - mps2 m33"
           "cortex-m55 thumbv8m.main-none-eabihf mps3-an547 cortex-m55 mve cortex-m55 an547 m55")
  suite=("kws:dscnn_cm_{enc}_int8io"
         "vww:mobilenet_v1_025_cm_{e}_int8io" "ic:resnet8_cm_{e}_int8io" "ad:autoencoder_cm_{e}_int8io")
fi
# ETCH_BENCH_MODEL=name: that program alone (on every target).
[ -n "${ETCH_BENCH_MODEL:-}" ] && suite=("one:$ETCH_BENCH_MODEL")
# ETCH_BENCH_TARGETS="cortex-m55 ...": those targets only (e.g. to check one
# core's kernels bit-exact on the whole suite without building the others).
if [ -n "${ETCH_BENCH_TARGETS:-}" ]; then
  keep=()
  for t in "${targets[@]}"; do
    for n in $ETCH_BENCH_TARGETS; do [ "${t%% *}" = "$n" ] && keep+=("$t"); done
  done
  [ ${#keep[@]} -gt 0 ] || { echo "FAIL ETCH_BENCH_TARGETS matches no target: $ETCH_BENCH_TARGETS"; exit 1; }
  targets=("${keep[@]}")
fi

# Fails unless every instruction of the ELF is Armv6-M: the only 32-bit
# encodings v6-M has are BL, DMB, DSB, ISB, MRS and MSR, and of the 16-bit
# ones v7-M added CBZ, CBNZ and IT.
check_v6m() {
  arm-none-eabi-readelf -A "$1" | grep -q 'Tag_CPU_arch: v6S\?-M' || { echo "FAIL $1: not an Armv6-M ELF"; return 1; }
  local bad
  bad=$(arm-none-eabi-objdump -d "$1" | awk -F'\t' '/^ *[0-9a-f]+:\t/ {
      enc = $2; gsub(/ +$/, "", enc); split($3, m, " "); op = m[1]
      if (op ~ /^\./) next
      if (op ~ /undefined/ || op ~ /^(cbz|cbnz|it[te]*)$/ ||
          (enc ~ /^[0-9a-f]{4} [0-9a-f]{4}$/ && op !~ /^(bl|dmb|dsb|isb|mrs|msr)$/)) print }')
  [ -z "$bad" ] || { echo "FAIL $1 holds non-Armv6-M instructions:"; head -5 <<<"$bad"; return 1; }
}

# Kernel selection: what `etch select` prints for the program, as features
# of etch-kernels. The DS-CNN programs link the firmware's default `dscnn`
# list instead (no host build of etch in --ci); full runs check that list.
etch=${CARGO_TARGET_DIR:-$root/target}/debug/etch
need_etch=""; [ "$ci" != "--ci" ] && need_etch=1
for s in "${suite[@]}"; do [[ ${s#*:} == dscnn_cm_* ]] || need_etch=1; done
[ -z "$need_etch" ] || (cd "$root" && cargo build -q -p etch-cli)
select_list() {
  local pte
  pte=$(ls "$root"/tests/fixtures/$1.pte "$root"/tests/zoo/$1.pte "$here"/models/$1.pte 2>/dev/null | head -1)
  "$etch" select --format cargo "$pte" | sed 's/^features = \[//; s/\]$//; s/"//g; s/, /\n/g' |
    sed 's|^|etch-kernels/|' | sort | paste -sd, -
}
select_features() {
  if [[ $1 == dscnn_cm_* ]]; then echo "dscnn"; else select_list "$1"; fi
}
if [ "$ci" != "--ci" ]; then
  have=$(sed -n '/^dscnn = \[/,/^\]/p' "$here/firmware/Cargo.toml" | grep -o '"etch-kernels/[^"]*"' | tr -d '"' | sort | paste -sd, -)
  want=$(select_list dscnn_cm_m33_int8io)
  [ "$have" = "$want" ] || { echo "FAIL bench/firmware's dscnn features are not etch select's: $want"; exit 1; }
fi

runs=()
for t in "${targets[@]}"; do
  read -r name triple machine cpu features tcpu memory enc <<<"$t"
  for s in "${suite[@]}"; do
    label=${s%%:*}; model=${s#*:}; model=${model//\{enc\}/$enc}
    m55=""; e=m33; [ "$enc" = m55 ] && m55=_m55 && e=m55; model=${model//\{m55\}/$m55}; model=${model//\{e\}/$e}
    feat=$(select_features "$model")
    [ "$features" != "-" ] && feat="$feat,$features"
    cfg=(); [ "$tcpu" != "-" ] && cfg=(--config "target.$triple.rustflags=['-C','target-cpu=$tcpu']")
    # One target dir per CPU: the same triple is built with different features.
    (cd "$here/firmware" && ETCH_BENCH_MODEL=$model ETCH_BENCH_MEMORY=memory-$memory.x \
       CARGO_TARGET_DIR="$here/firmware/target/$name" \
       cargo build -q --release --target "$triple" --no-default-features --features "$feat" "${cfg[@]}")
    elf=$here/firmware/target/$name/$triple/release/etch-bench
    [ "$triple" = thumbv6m-none-eabi ] && check_v6m "$elf"
    run=$name.$label
    # ETCH_BENCH_PCPROF=1: also count per instruction address (hot loops).
    prof=""; [ -n "${ETCH_BENCH_PCPROF:-}" ] && prof=",pcprof=$build/$run.pcprof"
    markers=0x$(arm-none-eabi-nm "$elf" | awk '/ETCH_BENCH_MARKERS/{print $1}')
    log=$build/$run.log
    counts=$build/$run.counts
    timeout 900 qemu-system-arm -M "$machine" -cpu "$cpu" -nographic \
      -semihosting-config enable=on,target=native \
      -plugin "$build/libetch_count.so,markers=$markers,n=256,out=$counts$prof" \
      -kernel "$elf" >"$log" 2>&1 || { echo "FAIL $run:"; grep -v '^instruction' "$log" | head -20; exit 1; }
    arm-none-eabi-nm -S --size-sort -C "$elf" >"$build/$run.nm"
    arm-none-eabi-size -A "$elf" >"$build/$run.size"
    runs+=("$name:$triple:$model:$features:$label:$machine:$cpu")
    echo "ran $name $model ($machine)"
  done
done

# Host x86-64 (full runs): DS-CNN instructions per inference under callgrind,
# `etch run` at the workspace's release profile; the difference between 11
# inferences and 1, over 10, so loading and process start-up cancel out.
if [ "$ci" != "--ci" ] && [ -z "${ETCH_BENCH_MODEL:-}" ]; then
  dpkg -s valgrind >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null; }
  (cd "$root" && cargo build -q --release -p etch-cli)
  rel=${CARGO_TARGET_DIR:-$root/target}/release/etch
  fx=$root/tests/fixtures/dscnn_cm_m33_int8io
  "$rel" run "$fx.pte" --input "$fx.input0.npy" --compare "$fx.output0.npy" >/dev/null
  ir() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$rel" run "$fx.pte" --input "$fx.input0.npy" \
      --repeat "$1" 2>&1 >/dev/null | awk '/Collected :/ {print $4}'
  }
  one=$(ir 1); eleven=$(ir 11)
  { echo "instructions_per_inference $(( (eleven - one) / 10 ))"
    echo "model dscnn_cm_m33_int8io.pte"
    echo "runs_short 1"; echo "runs_long 11"
    echo "cpu $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)"
    # The x86 kernels pick AVX2 at run time when the CPU has it, else SSE2.
    echo "simd $(grep -qw avx2 /proc/cpuinfo && echo avx2 || echo sse2)"
    echo "command valgrind --tool=callgrind target/release/etch run tests/fixtures/dscnn_cm_m33_int8io.pte --input tests/fixtures/dscnn_cm_m33_int8io.input0.npy --repeat N (N = 1, 11)"
  } >"$build/host-x86_64.txt"
  echo "ran x86-64 host (callgrind): $(head -1 "$build/host-x86_64.txt")"
fi

# --ci checks bit-exactness and the guards only; the committed tables come from full runs.
out_root=$root
# So do runs of some targets only (ETCH_BENCH_TARGETS): their tables would be partial.
if [ "$ci" = "--ci" ] || [ -n "${ETCH_BENCH_TARGETS:-}" ]; then
  out_root=$build/ci-report; mkdir -p "$out_root/bench" "$out_root/docs"
fi
python3 "$here/report.py" "$build" "$out_root" "${runs[@]}"
