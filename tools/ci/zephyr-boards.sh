#!/usr/bin/env bash
# Build-only sweep of samples/hello over real boards from several vendors:
# does the module configure, pick the right Rust target and link for each,
# and how much FLASH / RAM does the result take. Not part of .ci/run (it
# needs a Zephyr workspace with the boards' HALs); docs/zephyr.md quotes
# its table.
#
# Needs ZEPHYR_BASE (Zephyr >= 4.2 inside a west workspace whose
# modules/ holds the HALs below), west and Zephyr's Python requirements on
# PATH, arm-none-eabi-gcc (GNUARMEMB_TOOLCHAIN_PATH, default /usr) and, for
# RISC-V boards, a riscv64-unknown-elf- toolchain (CROSS_COMPILE).
#
# Usage: tools/ci/zephyr-boards.sh [--markdown] [board ...]
#   ETCH_BOARDS_OUT  build folders and logs (default /tmp/etch-zephyr-boards)
# A board whose HAL is missing from the workspace is reported as SKIP with
# the HAL's name, not built; one whose HAL lacks a file it needs, or whose
# core the C compiler does not know, as SKIP with the compiler's message.
# Exit status 1 if any other board failed.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${ETCH_BOARDS_OUT:-/tmp/etch-zephyr-boards}
markdown=0
if [ "${1:-}" = --markdown ]; then markdown=1; shift; fi
[ -n "${ZEPHYR_BASE:-}" ] || { echo "ZEPHYR_BASE is not set (see docs/zephyr.md, section 1)"; exit 2; }
command -v west >/dev/null || { echo "west not on PATH"; exit 2; }
ws=$(cd "$ZEPHYR_BASE/.." && pwd)
mkdir -p "$out"
export ZEPHYR_EXTRA_MODULES=$root
export ETCH_HOST_TARGET_DIR=${ETCH_HOST_TARGET_DIR:-$out/etch-host}

# board | toolchain (gnuarmemb or riscv) | HAL modules (west project paths under modules/)
all_boards="
nrf52840dk/nrf52840|gnuarmemb|hal/cmsis_6 hal/nordic
nrf5340dk/nrf5340/cpuapp|gnuarmemb|hal/cmsis_6 hal/nordic
nrf54l15dk/nrf54l15/cpuapp|gnuarmemb|hal/cmsis_6 hal/nordic
nucleo_f429zi|gnuarmemb|hal/cmsis_6 hal/stm32
nucleo_f746zg|gnuarmemb|hal/cmsis_6 hal/stm32
nucleo_h743zi|gnuarmemb|hal/cmsis_6 hal/stm32
nucleo_u575zi_q|gnuarmemb|hal/cmsis_6 hal/stm32
nucleo_h563zi|gnuarmemb|hal/cmsis_6 hal/stm32
disco_l475_iot1|gnuarmemb|hal/cmsis_6 hal/stm32
nucleo_l4r5zi|gnuarmemb|hal/cmsis_6 hal/stm32
mimxrt1060_evk@C/mimxrt1062/qspi|gnuarmemb|hal/cmsis_6 hal/nxp
frdm_k64f|gnuarmemb|hal/cmsis_6 hal/nxp
rpi_pico|gnuarmemb|hal/cmsis_6 hal/rpi_pico
mps3/corstone300/an547|gnuarmemb|hal/cmsis_6
mps3/corstone310/an555|gnuarmemb|hal/cmsis_6
esp32c3_devkitm|riscv|hal/espressif
"
if [ $# -gt 0 ]; then
  sel=""
  for b in "$@"; do sel+=$(grep "^$b|" <<<"$all_boards" || echo "$b|gnuarmemb|")$'\n'; done
  all_boards=$sel
fi

sizes() { # elf -> "FLASH RAM" (text+data, data+bss)
  local tool=$1 elf=$2
  "$tool" "$elf" | awk 'NR == 2 { print $1 + $2, $2 + $3 }'
}
commas() { sed ':a;s/\B[0-9]\{3\}\>/,&/;ta' <<<"$1"; }

status=0
rows=()
while IFS='|' read -r board chain hals; do
  [ -n "$board" ] || continue
  missing=""
  for h in $hals; do
    # A west project with files, or an empty folder (not fetched).
    if [ -z "$(ls -A "$ws/modules/$h" 2>/dev/null)" ]; then missing+=" ${h#hal/}"; fi
  done
  dir=$out/$(tr '/@' '__' <<<"$board")
  if [ -n "$missing" ]; then
    rows+=("$board|SKIP|HAL not in the workspace:$missing|||")
    echo "${rows[-1]}" | tr '|' '\t'
    continue
  fi
  env=(ZEPHYR_TOOLCHAIN_VARIANT=gnuarmemb GNUARMEMB_TOOLCHAIN_PATH=${GNUARMEMB_TOOLCHAIN_PATH:-/usr})
  size_tool=arm-none-eabi-size
  if [ "$chain" = riscv ]; then
    env=(ZEPHYR_TOOLCHAIN_VARIANT=cross-compile CROSS_COMPILE=${CROSS_COMPILE:-/usr/bin/riscv64-unknown-elf-})
    size_tool=${CROSS_COMPILE:-/usr/bin/riscv64-unknown-elf-}size
  fi
  start=$(date +%s)
  if env "${env[@]}" west build -p always -b "$board" -d "$dir" "$root/samples/hello" \
    >"$dir.log" 2>&1; then
    secs=$(( $(date +%s) - start ))
    target=$(sed -n 's/^-- etch: \([^,]*\),.*/\1/p' "$dir.log" | head -1)
    read -r flash ram <<<"$(sizes "$size_tool" "$dir/zephyr/zephyr.elf")"
    rows+=("$board|built|$target|$(commas "$flash") B|$(commas "$ram") B|$secs s")
  else
    secs=$(( $(date +%s) - start ))
    why=$(grep -m1 -E "error: |CMake Error|FATAL ERROR" "$dir.log" | sed "s|$ws/||g" | cut -c1-160 || true)
    # A header missing inside a HAL: the module in this workspace is
    # incomplete, not an etch failure.
    if grep -qE "^$ws/modules/[^:]*:[0-9]+:[0-9]+: fatal error: .*: No such file" "$dir.log"; then
      rows+=("$board|SKIP|HAL incomplete in this workspace: $why|||$secs s")
    elif grep -q "unrecognized -mcpu target" "$dir.log"; then
      # The C compiler predates the core (Debian 12's GCC 12: no Cortex-M85).
      rows+=("$board|SKIP|C toolchain too old: $why|||$secs s")
    else
      rows+=("$board|FAIL|${why:-see $dir.log}|||$secs s")
      status=1
    fi
  fi
  echo "${rows[-1]}" | tr '|' '\t'
done <<<"$all_boards"

if [ $markdown = 1 ]; then
  echo
  echo "| Board | Result | Rust target / reason | FLASH (text+data) | RAM (data+bss) | Build |"
  echo "|---|---|---|---|---|---|"
  for r in "${rows[@]}"; do echo "| ${r//|/ | } |"; done
fi
exit $status
