#!/usr/bin/env bash
# Links the audio front-end (tools/frontend/probe: the whole-clip and the
# streaming API) for Cortex-M and checks it by symbol: no `core::fmt` and no
# panic machinery may reach an embedded build. Prints .text/.rodata sizes.
set -euo pipefail
shopt -s inherit_errexit
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tools/ci/elf.sh"
probe=$here/tools/frontend/probe
out=${ETCH_FRONTEND_PROBE_OUT:-$here/target/frontend-probe}
mkdir -p "$out"
if ! command -v arm-none-eabi-ld >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq binutils-arm-none-eabi >/dev/null
fi
rustup target add thumbv7em-none-eabihf thumbv7em-none-eabi thumbv6m-none-eabi >/dev/null 2>&1
status=0
link() { # target features entry-symbols... -> elf path
  local target=$1 features=$2; shift 2
  (cd "$probe" && cargo build -q --release --target "$target" ${features:+--features "$features"} --target-dir "$out/cargo")
  local elf=$out/probe-$target${features:+-$features}.elf
  local undef=()
  for s in "$@"; do undef+=(-u "$s"); done
  arm-none-eabi-ld --gc-sections -e "$1" "${undef[@]}" -o "$elf" "$out/cargo/$target/release/libetch_frontend_probe.a"
  echo "$elf"
}
for target in thumbv7em-none-eabihf thumbv7em-none-eabi thumbv6m-none-eabi; do
  for api in "probe_mfcc_int8" "probe_stream_push probe_stream_int8" "probe_mfcc_int8 probe_stream_push probe_stream_int8"; do
    # shellcheck disable=SC2086
    elf=$(link "$target" "" $api)
    bad=$(arm-none-eabi-nm -C "$elf" | grep -E "$FORBIDDEN_SYMBOLS" || true)
    sizes=$(elf_sizes_text "$elf")
    if [ -n "$bad" ]; then
      echo "FAIL $target [$api]: formatting or panic symbols linked:"; echo "$bad" | head -20
      status=1
    else
      echo "ok   $target [$api]: no core::fmt, no panic symbols; $sizes"
    fi
  done
done
# The check must be able to fail.
elf=$(link thumbv7em-none-eabihf canary probe_canary)
if arm-none-eabi-nm -C "$elf" | grep -qE 'core::panicking|panic_bounds_check'; then
  echo "ok   canary build with a deliberate panic is detected"
else
  echo "FAIL canary: the symbol check did not see a deliberate panic"; status=1
fi
exit $status
