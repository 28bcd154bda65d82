#!/usr/bin/env bash
# Measures the KWS audio front-end on Cortex-M4 (and M7, M33-class M4F code)
# under QEMU: guest instructions per 1 s clip for the whole-clip API and the
# streaming API (our TCG plugin, bench/qemu-plugin/etch_count.c), stack high
# water, and flash/RAM from arm-none-eabi-size of the linked front-end
# (tools/frontend/probe, as tools/ci/check-frontend.sh links it).
# Writes bench/frontend/results.txt. Installs what it needs. Fails unless the
# target's features equal the host build's bit for bit.
#   bench/frontend.sh         measure, write bench/frontend/results.txt
#   bench/frontend.sh --ci    the same checks, results only in bench/frontend/build/
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
. "$root/tools/ci/elf.sh"
fw=$here/frontend
build=$fw/build
mkdir -p "$build"
ci=${1:-}

need_pkgs=()
for p in gcc-arm-none-eabi binutils-arm-none-eabi qemu-system-arm libglib2.0-dev dpkg-dev xz-utils; do
  dpkg -s "$p" >/dev/null 2>&1 || need_pkgs+=("$p")
done
if [ ${#need_pkgs[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
fi
rustup target add thumbv7em-none-eabihf >/dev/null 2>&1

# QEMU plugin header from Debian's QEMU source package (as bench/run.sh does);
# reuse bench/run.sh's extraction if it is there.
header=$(ls -d "$here"/build/qemu-*/include "$build"/qemu-*/include 2>/dev/null | head -1 || true)
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

clip=${ETCH_FRONTEND_CLIP:-$root/tools/frontend/vectors/kw_yes.wav}
(cd "$fw" && ETCH_FRONTEND_CLIP=$clip cargo build -q --release --target thumbv7em-none-eabihf --features dsp --target-dir "$fw/target")
elf=$fw/target/thumbv7em-none-eabihf/release/etch-frontend-bench
markers=0x$(arm-none-eabi-nm "$elf" | awk '/ETCH_BENCH_MARKERS/{print $1}')
log=$build/cortex-m4.log
counts=$build/cortex-m4.counts
timeout 600 qemu-system-arm -M mps2-an386 -cpu cortex-m4 -nographic \
  -semihosting-config enable=on,target=native \
  -plugin "$build/libetch_count.so,markers=$markers,n=8,out=$counts" \
  -kernel "$elf" >"$log" 2>&1 || { echo "FAIL cortex-m4:"; cat "$log"; exit 1; }

# Flash and RAM of the front-end alone: the probe linked with --gc-sections.
probe_out=$build/probe
(cd "$root/tools/frontend/probe" && cargo build -q --release --target thumbv7em-none-eabihf --target-dir "$probe_out/cargo")
lib=$probe_out/cargo/thumbv7em-none-eabihf/release/libetch_frontend_probe.a
arm-none-eabi-ld --gc-sections -e probe_mfcc_int8 -o "$probe_out/whole.elf" "$lib"
arm-none-eabi-ld --gc-sections -e probe_stream_push -u probe_stream_int8 -o "$probe_out/stream.elf" "$lib"
read -r wt wr <<<"$(elf_sizes "$probe_out/whole.elf")"
read -r st sr <<<"$(elf_sizes "$probe_out/stream.elf")"

bucket() { awk -v k="$1" '$1=="bucket" && $2==k {print $3}' "$counts"; }
whole=$(bucket 1); hops=$(bucket 2); feats=$(bucket 3); infer=$(bucket 4)
fe_bytes=$(awk '/frontend_bytes/{print $2}' "$log"); st_bytes=$(awk '/frontend_bytes/{print $4}' "$log")
whole_stack=$(awk '/^whole_clip/{print $5}' "$log"); stream_stack=$(awk '/^stream/{print $5}' "$log")
grep -q "whole_clip bit_exact true" "$log" && grep -q "stream bit_exact true" "$log" &&
  grep -q "scores bit_exact true" "$log" || { echo "FAIL: not bit-exact"; cat "$log"; exit 1; }
model=$(awk '/^model /{print $2}' "$log"); qp=$(awk '/^input_qparams/{print $2", "$3}' "$log")
out=$fw/results.txt
[ "$ci" = "--ci" ] && out=$build/results.txt
{
  echo "# bench/frontend.sh: KWS front-end (etch-frontend), Cortex-M4F (qemu mps2-an386), thumbv7em-none-eabihf, opt-level s, LTO"
  echo "# clip $(basename "$clip"), 16000 samples -> 490 int8 features (qparams $qp read from the program on target)"
  echo "# -> ${model#../../} forward (etch-kernels with feature dsp); features and scores bit-exact with the host build"
  echo "whole_clip_instructions $whole"
  echo "stream_push_instructions_50_hops $hops"
  echo "stream_push_instructions_per_hop $((hops / 50))"
  echo "stream_features_instructions $feats"
  echo "inference_instructions $infer"
  echo "clip_to_scores_instructions $((whole + infer))"
  echo "whole_clip_flash_text_bytes $wt"
  echo "whole_clip_flash_rodata_bytes $wr"
  echo "stream_flash_text_bytes $st"
  echo "stream_flash_rodata_bytes $sr"
  echo "frontend_scratch_bytes $fe_bytes"
  echo "stream_state_bytes $st_bytes"
  echo "whole_clip_stack_bytes $whole_stack"
  echo "stream_stack_bytes $stream_stack"
} >"$out"
cat "$out"
