#!/usr/bin/env bash
# The front-end's C API (etch_frontend_*, etch-ffi feature `frontend`):
# tests/c-api/frontend.c on every committed clip, against the DS-CNN export's
# int8 features (models/kws/ref/dscnn_kws_int8io/*.input0.npy), byte for byte,
# whole-clip and streamed, plus the status codes of bad arguments, overlapping
# buffers and hostile recognizer numbers; built for x86_64 under
# clang's AddressSanitizer/UBSan and for i686 (native_sim's ABI).
# Usage: tools/ci/c-api-frontend.sh   (needs Rust, gcc, gcc-multilib)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
out=${ETCH_CAPI_OUT:-$here/target/c-api-frontend}
export CARGO_TARGET_DIR=$out/cargo
export CARGO_BUILD_JOBS=${CARGO_BUILD_JOBS:-2}
mkdir -p "$out"
if [ ! -d /usr/lib/gcc/x86_64-linux-gnu/12/32 ] && ! gcc -m32 -x c -o /dev/null - <<<'int main(void){return 0;}' 2>/dev/null; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq gcc-multilib >/dev/null
fi
if ! clang -fsanitize=address,undefined -x c -o /dev/null - <<<'int main(void){return 0;}' 2>/dev/null; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq clang libclang-rt-14-dev >/dev/null
fi
rustup target list --installed | grep -qx i686-unknown-linux-gnu || rustup target add i686-unknown-linux-gnu >/dev/null
features=frontend,op-cortex_m-quantized_linear-out,dtype-i8
clips=$(cd "$here/tools/clips/wav" && ls *.wav | sed 's/\.wav$//')
status=0
for t in x86_64-unknown-linux-gnu i686-unknown-linux-gnu; do
  (cd "$here/rust/etch-ffi" && cargo build -q --release --target $t --no-default-features --features $features)
  lib=$CARGO_TARGET_DIR/$t/release/libetch.a
  case $t in
    x86_64*) cc=(clang -fsanitize=address,undefined -fno-sanitize-recover=all) ;;
    i686*) cc=(gcc -m32) ;;
  esac
  exe=$out/frontend-$t
  rm -f "$exe"
  "${cc[@]}" -std=c11 -O2 -Wall -Wextra -Werror -pedantic -I"$here/include" \
    "$here/tests/c-api/frontend.c" "$lib" -lm -o "$exe"
  if res=$("$exe" "$here" $clips); then
    echo "ok   front-end C API $t: $(tail -1 <<<"$res")"
  else
    echo "$res" | grep -E "^FAIL" | head -20
    echo "FAIL front-end C API $t"; status=1
  fi
done
exit $status
