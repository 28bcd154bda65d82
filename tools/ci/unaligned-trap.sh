#!/usr/bin/env bash
# Unaligned-access trapping: the bare-metal benchmark firmware
# with CCR.UNALIGN_TRP set while etch's code runs (program load, method load,
# inputs, execute), on Cortex-M4 with the DSP kernels, under QEMU (which
# models the trap). Fails if any unaligned access faults or the output is not
# bit-exact. Scope and limits: docs/robustness.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CARGO_BUILD_JOBS=${CARGO_BUILD_JOBS:-2}
rustup target add thumbv7em-none-eabihf >/dev/null 2>&1
# DS-CNN, and MobileNetV1 and ResNet-8 (3-channel first layers: the general
# convolution's padded windows); ResNet-8 also needs quantized_add.
for model in dscnn_cm_m33_int8io mobilenet_v1_025_cm_m33_int8io resnet8_cm_m33_int8io; do
  extra=""; [ "$model" = resnet8_cm_m33_int8io ] && extra=",etch-kernels/op-cortex_m-quantized_add-out"
  # The target dir bench/run.sh uses for Cortex-M4: only etch-bench rebuilds.
  dir=bench/firmware/target/cortex-m4
  (cd bench/firmware && ETCH_BENCH_MODEL=$model CARGO_TARGET_DIR="$PWD/target/cortex-m4" \
     cargo build -q --release --target thumbv7em-none-eabihf --features "dsp,unaligned-trap$extra")
  log=$(timeout 300 qemu-system-arm -M mps2-an386 -cpu cortex-m4 -nographic \
    -semihosting-config enable=on,target=native -kernel "$dir/thumbv7em-none-eabihf/release/etch-bench" 2>&1) || {
    echo "$log" | grep -v '^instruction' | head -20; echo "FAIL unaligned trap: $model"; exit 1; }
  grep -q "bit_exact true" <<<"$log" || { echo "$log" | head -20; echo "FAIL $model not bit-exact"; exit 1; }
  echo "ok   $model on Cortex-M4 (dsp) with CCR.UNALIGN_TRP set: no unaligned access, bit-exact"
done
