#!/usr/bin/env bash
# Builds the embedded probe (etch-pte + etch-runtime as a firmware links them)
# for Cortex-M targets and checks the linked code by symbol: no `core::fmt`
# and no panic machinery may reach an embedded build. Prints .text/.rodata sizes.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tools/ci/elf.sh"
probe=$here/tools/embedded-probe
out=${ETCH_PROBE_OUT:-$here/target/embedded-probe}
mkdir -p "$out"
status=0
for target in thumbv7em-none-eabihf thumbv6m-none-eabi; do
  # all-kernels: every operator and dtype (the whole portable set
  # must stay free of core::fmt and panics, not only the DS-CNN selection).
  combos=("runtime,verify" "runtime" "runtime,verify,messages" "kernels,verify" "kernels,verify,all-kernels")
  # The DSP kernels exist only where the instructions do.
  [ "$target" = thumbv7em-none-eabihf ] && combos+=("kernels,verify,dsp")
  for features in "${combos[@]}"; do
    (cd "$probe" && cargo build -q --release --target "$target" --no-default-features --features "$features" \
      --target-dir "$out/cargo")
    lib=$out/cargo/$target/release/libetch_embedded_probe.a
    elf=$out/probe-$target-${features//,/-}.elf
    extra=""
    case $features in *kernels*) extra="-u probe_run" ;; esac
    arm-none-eabi-ld --gc-sections -e probe_verify -u probe_state_bytes -u probe_core $extra -o "$elf" "$lib"
    bad=$(arm-none-eabi-nm -C "$elf" | grep -E "$FORBIDDEN_SYMBOLS" || true)
    sizes=$(elf_sizes_text "$elf")
    if [ -n "$bad" ]; then
      echo "FAIL $target [$features]: formatting or panic symbols linked:"; echo "$bad" | head -20
      status=1
    else
      echo "ok   $target [$features]: no core::fmt, no panic symbols; $sizes"
    fi
    # Core runtime flash: reader + verifier + loader +
    # executor, no kernels: everything reachable from probe_core alone.
    case $features in
      runtime|runtime,verify|runtime,verify,messages)
        core_elf=$out/core-$target-${features//,/-}.elf
        arm-none-eabi-ld --gc-sections -e probe_core -o "$core_elf" "$lib"
        read -r t r <<<"$(elf_sizes "$core_elf")"
        echo "size $target [$features]: core runtime (probe_core, log off) .text $t B + .rodata $r B = $((t + r)) B"
        # Guards on the reference builds (Cortex-M4F, messages off): the last
        # measured size plus a little headroom. The core's targets are
        # 12,288 B with verification and 8,192 B without; a guard becomes
        # its target once the target is met (docs/benchmarks.md, "Footprint").
        # Mutable buffers (initialised at load, PteFile::mutable_data, the
        # JumpFalse end-of-chain check) raised them by 510 / 478 B (10,738 ->
        # 11,248 B, 8,050 -> 8,528 B: above the 8,192 B target without
        # verification). Bounded dynamic shapes' static path (the `dynamic`
        # feature off, as here): +16 B each. The decoded kernel calls'
        # execute path with `decoded-calls` off, as here (a call table field
        # in the kernel context, one instruction source in the loop): +10 B
        # each (11,284 / 8,564 B measured); with `decoded-calls` the bench
        # firmware's core column says what they cost (docs/benchmarks.md).
        # `method.rs` split into `method/{mod,checks,observer}.rs` (moves
        # only): +4 B each, function placement (11,288 / 8,568 B measured).
        # A kind byte per run-time value slot (a prim op's result keeps the
        # kind it was written with, as ExecuTorch's EValue tag: `truediv`
        # on sizes writes a Double into a value declared Int): outputs and
        # Moves read and copy it, +22 B each (11,310 / 8,590 B measured).
        # One tensor-placement function (`values::place`) read by load's
        # check and the outputs as by the kernels' views: +8 B each alone,
        # +12 B each over the kind byte (11,322 / 8,602 B measured).
        # The load walk's look-back answer as a one-word `Seen` with named
        # accessors: -28 B each (11,294 / 8,574 B measured).
        # The kernel context's one-output path takes its buffer split around
        # the output (`Arenas::split`, linked here through the context's
        # vtable though this build decodes no calls: 64 B) and `execute`
        # ends at the state's instruction count instead of decoding the
        # instruction past the last (+8 B, about 330 fewer instructions per
        # inference): +76 B each (11,370 / 8,650 B measured).
        if [ "$target" = thumbv7em-none-eabihf ]; then
          case $features in
            runtime,verify) max=${ETCH_CORE_FLASH_MAX:-11370}; goal=12288 ;;
            runtime) max=${ETCH_CORE_FLASH_NOVERIFY_MAX:-8650}; goal=8192 ;;
            *) max=""; goal="" ;;
          esac
          if [ -n "$max" ]; then
            state=$([ $((t + r)) -le "$goal" ] && echo "meets" || echo "above")
            if [ $((t + r)) -gt "$max" ]; then
              echo "FAIL core runtime flash [$features] $((t + r)) B exceeds the guard $max B (target $goal B)"; status=1
            else
              echo "ok   core runtime flash [$features] $((t + r)) B <= guard $max B (target $goal B: $state)"
            fi
          fi
        fi
        # No memory builtin in the cores, Cortex-M4F and Armv6-M:
        # struct copies and fills the compiler turned into calls linked
        # compiler_builtins' memcpy (730 B) and memclr (208 B + 174 B); on
        # Armv6-M a copy over 16 B (four LDM/STM registers) is a memcpy call.
        # Not checked: the kernels ELFs (tensors are copied through
        # etch_runtime::memory::copy_slice, which may become a memcpy) and
        # `messages` builds (a four-word Error).
        if [ "$features" != runtime,verify,messages ]; then
          mem=$(arm-none-eabi-nm -C "$core_elf" | grep -E 'memcpy|memmove|memset|memclr' || true)
          if [ -n "$mem" ]; then
            echo "FAIL core runtime $target [$features]: memory builtins linked:"; echo "$mem" | head -10; status=1
          else
            echo "ok   core runtime $target [$features]: no memcpy/memmove/memset/memclr linked"
          fi
        fi
        ;;
    esac
  done
done
# The Helium kernels (Cortex-M55, every operator): their own target and CPU,
# so the MVE-only code is held to the same rule.
for features in "kernels,verify,mve" "kernels,verify,all-kernels,mve"; do
  (cd "$probe" && RUSTFLAGS="-C target-cpu=cortex-m55" cargo build -q --release --target thumbv8m.main-none-eabihf \
    --no-default-features --features "$features" --target-dir "$out/cargo-m55")
  lib=$out/cargo-m55/thumbv8m.main-none-eabihf/release/libetch_embedded_probe.a
  elf=$out/probe-thumbv8m.main-none-eabihf-${features//,/-}.elf
  arm-none-eabi-ld --gc-sections -e probe_verify -u probe_state_bytes -u probe_core -u probe_run -o "$elf" "$lib"
  bad=$(arm-none-eabi-nm -C "$elf" | grep -E "$FORBIDDEN_SYMBOLS" || true)
  if [ -n "$bad" ]; then
    echo "FAIL thumbv8m.main-none-eabihf cortex-m55 [$features]: formatting or panic symbols linked:"; echo "$bad" | head -20
    status=1
  else
    echo "ok   thumbv8m.main-none-eabihf cortex-m55 [$features]: no core::fmt, no panic symbols; $(elf_sizes_text "$elf")"
  fi
done

# Selective build: the DS-CNN selection links the DS-CNN kernels and nothing
# of the operators it did not select.
syms=$(arm-none-eabi-nm -C "$out/probe-thumbv7em-none-eabihf-kernels-verify.elf")
unselected=$(grep -E 'ops::(unary|binary|reduce|norm|matmul|conv|pool|shape|fill|index|upsample|prim)::|dequantize_per_channel|DEQUANTIZE_PER_CHANNEL|ADDMM|RELU_OUT|NHWC|softmax|batch_matmul|transpose_conv|quantized_add|quantized_mul|quantized_div' <<<"$syms" || true)
# Selected kernels are found by their registry names in the image (a
# kernel's name and function are linked together): the functions themselves
# may be inlined into a shared adapter and have no symbol of their own.
names=$(arm-none-eabi-strings -n 6 "$out/probe-thumbv7em-none-eabihf-kernels-verify.elf")
missing=""
for k in quantized_conv2d quantized_depthwise_conv2d quantized_linear pad quantized_avg_pool2d; do
  grep -qF "cortex_m::$k.out" <<<"$names" || missing="$missing $k"
done
if [ -n "$unselected" ] || [ -n "$missing" ]; then
  echo "FAIL selective build: unselected kernels linked: ${unselected:-none}; selected missing:${missing:- none}"; status=1
else
  echo "ok   selective build: DS-CNN kernels only (no symbol of an unselected portable family, no per-channel dequantize)"
fi

# The check must be able to fail: a build with a deliberate panic is flagged.
(cd "$probe" && cargo build -q --release --target thumbv7em-none-eabihf --features canary --target-dir "$out/cargo")
arm-none-eabi-ld --gc-sections -e probe_verify -u probe_verify_canary -o "$out/canary.elf" \
  "$out/cargo/thumbv7em-none-eabihf/release/libetch_embedded_probe.a"
canary_syms=$(arm-none-eabi-nm -C "$out/canary.elf")
if grep -qE 'core::panicking|panic_bounds_check' <<<"$canary_syms"; then
  echo "ok   canary build with a deliberate panic is detected"
else
  echo "FAIL canary: the symbol check did not see a deliberate panic"; status=1
fi
exit $status
