#!/usr/bin/env bash
# The C API (its header, its harness on QEMU and the host, its sanitizer
# runs), on a fresh Debian 12 machine:
#  1. etch-ffi forwards every etch-kernels feature (gen-features.py --check);
#  2. include/etch.h is what cbindgen generates now (--regen rewrites it),
#     and compiles as C99, C11 and C++11/17 with -Wall -Wextra -Werror;
#  3. the staticlib builds for every triple the Zephyr module uses; fmt and
#     clippy are clean;
#  4. the Cortex-M libraries without logging link with no core::fmt and no
#     panic machinery (every etch_* function kept), sizes printed;
#  5. a too-small ETCH_KERNEL_REGISTRY_SIZE fails the build naming the number;
#  6. the C harness (tests/c-api) passes on x86_64 and i686 Linux (full
#     library with logging; a reduced one for OperatorMissing and a registry
#     larger than the selection, whose free slots take kernels written in C:
#     custom_kernel.c) and bare metal on qemu-system-arm:
#     mps2-an385 (Cortex-M3), mps2-an386 (M4F, DSP kernels), mps2-an505
#     (M33F), whose exit status follows the result; aliasing.c
#     (overlapping buffers and re-entrant calls refused) under clang's
#     AddressSanitizer and UBSan;
#  7. ETDump from C (tests/c-api/etdump.c, feature `etdump`, in every build
#     above so step 4 covers it): the DS-CNN's file byte for byte what the
#     Rust writer gives (tests/c-api/etdump/), x86_64 (ASan/UBSan) and i686;
#  8. programs as streams (tests/c-api/programs.c over tests/programs):
#     state carried between executions and etch_method_reset, bounded dynamic
#     shapes set with etch_method_set_input_sized and read back with
#     etch_method_output_sizes, against ExecuTorch's runtime step by step;
#     x86_64 (ASan/UBSan), i686 and Cortex-M4F on qemu mps2-an386.
# Usage: tools/ci/c-api.sh [--regen]
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tools/ci/elf.sh"
ffi=$here/rust/etch-ffi
out=${ETCH_CAPI_OUT:-$here/target/c-api}
export CARGO_TARGET_DIR=$out/cargo
export CARGO_BUILD_JOBS=${CARGO_BUILD_JOBS:-2}
CBINDGEN_VERSION=0.29.4
start=$(date +%s)
status=0
fail() { echo "FAIL $*"; status=1; }

# --- tools ---------------------------------------------------------------
need=""
command -v arm-none-eabi-gcc >/dev/null || need="$need gcc-arm-none-eabi binutils-arm-none-eabi"
[ -f /usr/lib/arm-none-eabi/lib/rdimon.specs ] || need="$need libnewlib-arm-none-eabi"
command -v qemu-system-arm >/dev/null || need="$need qemu-system-arm"
[ -d /usr/lib/gcc/x86_64-linux-gnu/12/32 ] || need="$need gcc-multilib"
command -v g++ >/dev/null || need="$need g++"
# clang's AddressSanitizer/UBSan runtimes (aliasing.c, fuzz_capi.c).
if ! command -v clang >/dev/null; then
  need="$need clang libclang-rt-14-dev"
elif ! clang -fsanitize=address,undefined -x c -o /dev/null - <<<'int main(void){return 0;}' 2>/dev/null; then
  need="$need libclang-rt-14-dev"
fi
if [ -n "$need" ]; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $need >/dev/null
fi
cortex_m="thumbv6m-none-eabi thumbv7m-none-eabi thumbv7em-none-eabi thumbv7em-none-eabihf thumbv8m.main-none-eabi thumbv8m.main-none-eabihf"
hosted="i686-unknown-linux-gnu x86_64-unknown-linux-gnu"
installed=$(rustup target list --installed)
for t in $cortex_m $hosted; do
  grep -qx "$t" <<<"$installed" || rustup target add "$t" >/dev/null
done
if ! cbindgen --version 2>/dev/null | grep -q " $CBINDGEN_VERSION\$"; then
  # A debug build of the tool compiles in a fraction of the release build's
  # time and still generates the header in well under a second.
  cargo install -q --debug --locked cbindgen --version "$CBINDGEN_VERSION"
fi
mkdir -p "$out"

# --- 1. features, 2. header --------------------------------------------------
python3 "$ffi/gen-features.py" --check || status=1
# The Zephyr module builds etch-ffi with --offline --locked
# (CONFIG_ETCH_CARGO_OFFLINE): its Cargo.lock must hold every dependency.
if cargo tree --locked --offline -q --manifest-path "$ffi/Cargo.toml" --features frontend,etdump >/dev/null 2>"$out/lock.err" \
   || cargo tree --locked -q --manifest-path "$ffi/Cargo.toml" --features frontend,etdump >/dev/null 2>"$out/lock.err"; then
  echo "ok   rust/etch-ffi/Cargo.lock is complete (--locked builds work)"
else
  cat "$out/lock.err"
  fail "rust/etch-ffi/Cargo.lock is stale: run cargo update -w --manifest-path rust/etch-ffi/Cargo.toml and commit it"
fi
cbindgen -q --config "$here/cbindgen.toml" --crate etch-ffi --output "$out/etch.h" "$ffi"
if [ "${1:-}" = "--regen" ]; then
  cp "$out/etch.h" "$here/include/etch.h"
  echo "ok   include/etch.h regenerated"
elif diff -u "$here/include/etch.h" "$out/etch.h" >"$out/etch.h.diff"; then
  echo "ok   include/etch.h is fresh (cbindgen $CBINDGEN_VERSION)"
else
  head -40 "$out/etch.h.diff"
  fail "include/etch.h is stale: run tools/ci/c-api.sh --regen and commit it"
fi
warn="-Wall -Wextra -Werror -pedantic"
for std in c99 c11; do
  gcc -std=$std $warn -fsyntax-only -x c "$here/include/etch.h" || fail "etch.h as $std"
done
for std in c++11 c++17; do
  g++ -std=$std $warn -fsyntax-only -x c++ "$here/include/etch.h" || fail "etch.h as $std"
done
arm-none-eabi-gcc -mcpu=cortex-m0 -mthumb -std=c99 $warn -fsyntax-only -x c "$here/include/etch.h" ||
  fail "etch.h for arm-none-eabi"
echo "ok   etch.h compiles as C99, C11, C++11, C++17 (-Wall -Wextra -Werror -pedantic)"

# --- 3. every Zephyr triple -------------------------------------------------
# Firmware configuration: the DS-CNN selection (`etch select
# tests/fixtures/dscnn_cm_m33_int8io.pte --format cargo`, plus the float I/O
# q/dq of dscnn_cm_m33), verification on, no logging.
select_dscnn="op-cortex_m-dequantize_per_tensor-out,op-cortex_m-pad-out,op-cortex_m-quantize_per_tensor-out,op-cortex_m-quantized_avg_pool2d-out,op-cortex_m-quantized_conv2d-out,op-cortex_m-quantized_depthwise_conv2d-out,op-cortex_m-quantized_linear-out,op-dim_order_ops-_clone_dim_order-out,dtype-f32,dtype-i32,dtype-i8,dtype-u8"
dscnn_kernels=8
build() { # triple features [rustflags]; a failed build leaves no stale library
  rm -f "$CARGO_TARGET_DIR/$1/release/libetch.a"
  (cd "$ffi" && RUSTFLAGS="${3:-}" cargo build -q --release --target "$1" --no-default-features --features "$2")
}
lib() { echo "$CARGO_TARGET_DIR/$1/release/libetch.a"; }
declare -A cpu=([thumbv6m-none-eabi]=cortex-m0 [thumbv7m-none-eabi]=cortex-m3 [thumbv7em-none-eabi]=cortex-m4
  [thumbv7em-none-eabihf]=cortex-m4 [thumbv8m.main-none-eabi]=cortex-m33 [thumbv8m.main-none-eabihf]=cortex-m33)
for t in $cortex_m; do
  features="$select_dscnn,verify,etdump"
  case $t in thumbv7em*|thumbv8m.main*) features="$features,dsp" ;; esac
  # Separate target dirs per CPU flag set would rebuild everything; the
  # triple already separates them.
  if build "$t" "$features" "-C target-cpu=${cpu[$t]}"; then
    echo "ok   built $t (-C target-cpu=${cpu[$t]}, features: DS-CNN selection,verify,etdump$([[ $features == *dsp ]] && echo ,dsp))"
  else
    fail "build $t"
  fi
done
for t in $hosted; do
  if build "$t" "verify,all-ops,all-dtypes,log,etdump,dynamic"; then echo "ok   built $t (all kernels, verify, log, etdump, dynamic)"; else fail "build $t"; fi
done

# Lints, in the three shapes the code has: hosted with logging, Armv6-M with
# logging (no compare-and-swap: the racy logger install), Cortex-M without.
lint=ok
for spec in "x86_64-unknown-linux-gnu|verify,all-ops,all-dtypes,log,etdump" \
  "thumbv6m-none-eabi|$select_dscnn,log-level-info" "thumbv7em-none-eabihf|$select_dscnn,verify,dsp,etdump"; do
  t=${spec%%|*}; features=${spec#*|}
  (cd "$ffi" && cargo fmt --check && cargo clippy -q --release --target "$t" --no-default-features --features "$features" -- -D warnings) ||
    { fail "fmt/clippy $t [$features]"; lint=failed; }
done
[ $lint = ok ] && echo "ok   cargo fmt --check; clippy -D warnings (x86_64 +log, thumbv6m +log, thumbv7em-hf)"

# --- 4. no core::fmt / panics on Cortex-M -----------------------------------
for t in $cortex_m; do
  a=$(lib "$t")
  [ -f "$a" ] || continue
  roots=$(arm-none-eabi-nm -g --defined-only "$a" 2>/dev/null | awk '$2 == "T" && $3 ~ /^etch_/ {printf " -u %s", $3}')
  elf=$out/link-$t.elf
  # The platform provides etch_log_write; a no-log build must not need it.
  if ! arm-none-eabi-ld --gc-sections -e etch_program_load $roots -o "$elf" "$a" 2>"$out/ld-$t.log"; then
    cat "$out/ld-$t.log"; fail "link $t"; continue
  fi
  n=$(wc -w <<<"$roots"); n=$((n / 2))
  bad=$(arm-none-eabi-nm -C "$elf" | grep -E "$FORBIDDEN_SYMBOLS" || true)
  size=$(elf_sizes_text "$elf")
  if [ -n "$bad" ]; then
    fail "$t: core::fmt or panic symbols linked:"; echo "$bad" | head -10
    # Name the code that reaches the panic machinery.
    python3 "$ffi/panic-callers.py" "$elf" 'core::panicking|panic_bounds_check|slice_index_fail|slice_end_index|slice_start_index|unwrap_failed|expect_failed' || true
  else
    echo "ok   $t: all $n etch_* functions linked, no core::fmt, no panic symbols; $size"
  fi
done

# --- 5. registry capacity below the selection --------------------------------
if msg=$(cd "$ffi" && ETCH_KERNEL_REGISTRY_SIZE=1 CARGO_TARGET_DIR=$out/cargo-small \
  cargo build -q --release --no-default-features --features op-cortex_m-quantized_linear-out,op-cortex_m-pad-out,dtype-i8 2>&1); then
  fail "ETCH_KERNEL_REGISTRY_SIZE=1 with 2 kernels built"
elif grep -q "set it to at least 2" <<<"$msg"; then
  echo "ok   ETCH_KERNEL_REGISTRY_SIZE=1 for 2 kernels fails the build: 'set it to at least 2'"
else
  echo "$msg" | tail -5; fail "registry size error does not name the number"
fi

# --- 6. the harness --------------------------------------------------------
h=$here/tests/c-api
cflags="-std=c11 -O2 $warn -I$here/include -I$h"
mkdir -p "$out/fx-host" "$out/fx-m"
python3 "$h/gen_fixtures.py" "$out/fx-host/fixtures.c" tiny_cm_m33_int8io dscnn_cm_m33_int8io tiny_portable_pt dscnn_portable_pt
python3 "$h/gen_fixtures.py" "$out/fx-m/fixtures.c" tiny_cm_m33_int8io dscnn_cm_m33_int8io
all_kernels=$(python3 -c "import tomllib,sys; f=tomllib.load(open(sys.argv[1],'rb'))['features']; print(sum(k.startswith('op-') for k in f))" "$here/rust/etch-kernels/Cargo.toml")
run() { # name command...
  local name=$1; shift
  local log=$out/$name.log
  if "$@" >"$log" 2>&1; then
    grep -E " sweep: " "$log" | sed 's/^/     /' || true
    echo "ok   $name: $(tail -1 "$log")"
  else
    { grep -E "^FAIL" "$log" || tail -5 "$log"; } | head -20; fail "$name: $(tail -1 "$log")"
  fi
}
# compile OUT CC ARGS...: builds a harness binary (never a stale one).
compile() {
  local exe=$1; shift
  rm -f "$exe"
  "$@" -o "$exe" || fail "compile $(basename "$exe")"
}
full="-DEXPECT_KERNELS=$all_kernels -DEXPECT_FEATURES=(ETCH_FEATURE_VERIFY|ETCH_FEATURE_LOG|ETCH_FEATURE_ETDUMP|ETCH_FEATURE_DYNAMIC) -DEXPECT_LOG"
# Host, full library with logging: 64-bit under AddressSanitizer/UBSan
# (the C side) and 32-bit; both also sweep corruptions over tiny's program.
compile "$out/harness-x86_64" gcc $cflags $full -DSWEEP -fsanitize=address,undefined "$h/harness.c" -I"$out/fx-host" "$out/fx-host/fixtures.c" \
  "$(lib x86_64-unknown-linux-gnu)" -Wl,--gc-sections
run "harness x86_64-linux" "$out/harness-x86_64"
# Aliasing and re-entry: buffers over the handle, the program
# bytes, the state, the planned buffers and each other are refused; calls
# from the clock/cycle callbacks on the running method are InvalidState.
# clang's AddressSanitizer + UBSan, handles on the heap.
compile "$out/aliasing" clang $cflags -fsanitize=address,undefined -fno-sanitize-recover=all "$h/aliasing.c" \
  -I"$out/fx-host" "$out/fx-host/fixtures.c" "$(lib x86_64-unknown-linux-gnu)" -Wl,--gc-sections
run "aliasing and re-entry x86_64-linux (clang ASan+UBSan)" "$out/aliasing"
# C-API call sequences (libFuzzer build: docs/robustness.md):
# random sequences over tiny and DS-CNN under clang's ASan/UBSan, with
# buffers over the handle (on the heap), the state, the planned buffers and
# the program bytes, and callbacks calling back into the running method
# (about 4 s of CPU; bounded by the count, deterministic seed).
compile "$out/fuzz-capi" clang $cflags -DFUZZ_STANDALONE -fsanitize=address,undefined -fno-sanitize-recover=all \
  "$h/fuzz_capi.c" -I"$out/fx-m" "$out/fx-m/fixtures.c" "$(lib x86_64-unknown-linux-gnu)" -Wl,--gc-sections
run "C-API call sequences x86_64-linux (clang ASan+UBSan)" timeout 120 "$out/fuzz-capi" 200000
compile "$out/harness-i686" gcc -m32 $cflags $full -DSWEEP "$h/harness.c" -I"$out/fx-host" "$out/fx-host/fixtures.c" \
  "$(lib i686-unknown-linux-gnu)" -Wl,--gc-sections
run "harness i686-linux (gcc -m32)" "$out/harness-i686"
# ETDump from C against the Rust writer's golden files.
golden="-DETDUMP_GOLDEN_DIR=\"$h/etdump\""
compile "$out/etdump-x86_64" gcc $cflags "$golden" -fsanitize=address,undefined -I"$here/zephyr/include" "$h/etdump.c" \
  "$here/zephyr/src/etch_etdump_console.c" -I"$out/fx-host" "$out/fx-host/fixtures.c" "$(lib x86_64-unknown-linux-gnu)" \
  -Wl,--gc-sections
run "ETDump x86_64-linux ASan+UBSan" "$out/etdump-x86_64" --console
# The Zephyr console form (etch_zephyr_etdump_print's encoder) back to the
# file with tools/etdump/from_console.py: the golden bytes again; a log with
# one character changed is refused (CRC-32).
fc=$here/tools/etdump/from_console.py
if python3 "$fc" "$out/ETDump x86_64-linux ASan+UBSan.log" -o "$out/console.etdp" >/dev/null &&
  cmp -s "$out/console.etdp" "$h/etdump/dscnn_cm_m33_int8io.etdp"; then
  echo "ok   ETDump console lines -> from_console.py: the golden file byte for byte"
else
  fail "from_console.py did not give back the golden ETDump"
fi
sed '0,/etch-etdump: [A-Z]/s/\(etch-etdump: \)[A-Z]/\1a/' "$out/ETDump x86_64-linux ASan+UBSan.log" >"$out/console-bad.log"
if python3 "$fc" "$out/console-bad.log" -o "$out/console-bad.etdp" 2>"$out/console-bad.err"; then
  fail "from_console.py accepted a corrupted log"
else
  echo "ok   from_console.py refuses a corrupted log: $(head -1 "$out/console-bad.err")"
fi
compile "$out/etdump-i686" gcc -m32 $cflags "$golden" -I"$here/zephyr/include" "$h/etdump.c" \
  "$here/zephyr/src/etch_etdump_console.c" -I"$out/fx-host" "$out/fx-host/fixtures.c" \
  "$(lib i686-unknown-linux-gnu)" -Wl,--gc-sections
run "ETDump i686-linux (gcc -m32)" "$out/etdump-i686"
# Programs as a stream (tests/programs): each method loaded once, its steps
# in order with every input set with its own sizes
# (etch_method_set_input_sized) and every output's bytes and sizes
# (etch_method_output_sizes) against ExecuTorch's runtime's; state carried,
# etch_method_reset back to step 0 bit-exactly; the bounded dynamic
# program at T = 32, 5, 17, 1 and its refusals (T = 33, ...). gcc's
# ASan/UBSan on x86_64, and i686.
programs="running_sum_f32 running_sum_int8 gru_f32 gru_cm lstm_f32 lstm_int8 lstm_cm conv_stream_f32 conv_stream_int8
  kv_attention_f32 kv_attention_int8 cond_f32 cond_state_f32 cond_state_int8 two_methods_f32 two_methods_int8
  two_methods_cm conv_stream_cm seq_dyn_f32 seq_dyn_int8 seq_ops_dyn_f32 seq_prim_dyn_f32 seq_symops_dyn_f32
  linear_dyn_f32 map_f32 scan_f32"
mkdir -p "$out/fx-prog"
python3 "$h/gen_programs.py" "$out/fx-prog/programs.c" $programs
compile "$out/programs-x86_64" gcc $cflags -fsanitize=address,undefined "$h/programs.c" -I"$out/fx-prog" \
  "$out/fx-prog/programs.c" "$(lib x86_64-unknown-linux-gnu)" -lm -Wl,--gc-sections
run "programs x86_64-linux ASan+UBSan" "$out/programs-x86_64"
compile "$out/programs-i686" gcc -m32 $cflags "$h/programs.c" -I"$out/fx-prog" "$out/fx-prog/programs.c" \
  "$(lib i686-unknown-linux-gnu)" -lm -Wl,--gc-sections
run "programs i686-linux (gcc -m32)" "$out/programs-i686"
# C++ (no exceptions, no RTTI) against the same library.
compile "$out/fixtures-host.o" gcc $cflags -c -I"$out/fx-host" "$out/fx-host/fixtures.c"
compile "$out/cpp-smoke" g++ -std=c++17 -O2 -fno-exceptions -fno-rtti $warn -I"$here/include" -I"$h" -I"$out/fx-host" \
  "$h/cpp_smoke.cpp" "$out/fixtures-host.o" "$(lib x86_64-unknown-linux-gnu)" -Wl,--gc-sections
run "C++17 x86_64-linux" "$out/cpp-smoke"
# Reduced library: only tiny's operator (cortex_m::quantized_linear), no
# logging, registry capacity 4 > 1 kernel; DS-CNN uses 6 operators, 5 of
# which are missing.
rm -f "$out/cargo-reduced/release/libetch.a"
(cd "$ffi" && ETCH_KERNEL_REGISTRY_SIZE=4 CARGO_TARGET_DIR=$out/cargo-reduced \
  cargo build -q --release --no-default-features --features op-cortex_m-quantized_linear-out,dtype-i8,dtype-i32,verify) ||
  fail "build of the reduced library"
compile "$out/harness-reduced" gcc $cflags -DEXPECT_KERNELS=1 -DEXPECT_FEATURES=ETCH_FEATURE_VERIFY -DEXPECT_CAPACITY=4 \
  -DREDUCED -DEXPECT_MISSING=5 "$h/harness.c" -I"$out/fx-m" "$out/fx-m/fixtures.c" \
  "$out/cargo-reduced/release/libetch.a" -Wl,--gc-sections
run "harness x86_64-linux reduced library" "$out/harness-reduced"
# Kernels written in C (etch_register_kernel) in the reduced library's 3
# free registry slots: the custom operator of tests/custom runs bit-exact;
# missing, duplicate, over-capacity, malformed and mismatched-schema
# registrations give their exact codes; the kernel calling back into its
# running method is refused. clang's ASan/UBSan.
python3 "$h/gen_custom.py" "$out/custom_fixture.c"
for variant in "" WRONG_SCHEMA; do
  compile "$out/custom-kernel$variant" clang $cflags ${variant:+-D$variant} -fsanitize=address,undefined -fno-sanitize-recover=all \
    "$h/custom_kernel.c" "$out/custom_fixture.c" "$out/cargo-reduced/release/libetch.a" -lm -Wl,--gc-sections
  run "C kernels x86_64-linux (clang ASan+UBSan)${variant:+ ($variant)}" "$out/custom-kernel$variant"
done
# C kernels under random call sequences (tests/c-api/fuzz_kernels.c): valid,
# malformed and mutated schemas registered (a registry of 1,024 so that
# the parser, not the capacity check, answers), and a kernel that returns
# error codes, calls back into its running method, asks for out-of-range or
# mistyped arguments, passes overlapping out-pointers or writes part of its
# output. clang's ASan/UBSan; fixed seed, about 3 s.
rm -f "$out/cargo-kfuzz/release/libetch.a"
(cd "$ffi" && ETCH_KERNEL_REGISTRY_SIZE=1024 CARGO_TARGET_DIR=$out/cargo-kfuzz \
  cargo build -q --release --no-default-features --features op-cortex_m-quantized_linear-out,dtype-i8,dtype-i32,verify) ||
  fail "build of the library with a 1,024-kernel registry"
compile "$out/fuzz-kernels" clang $cflags -fsanitize=address,undefined -fno-sanitize-recover=all \
  "$h/fuzz_kernels.c" "$out/custom_fixture.c" "$out/cargo-kfuzz/release/libetch.a" -lm -Wl,--gc-sections
run "C kernels, random call sequences x86_64-linux (clang ASan+UBSan)" timeout 120 "$out/fuzz-kernels" 200000
# Bare metal: the firmware libraries on QEMU's Arm MPS2 boards, through
# newlib's semihosting (rdimon); each run's exit status is the result.
qemu() { timeout 300 qemu-system-arm -M "$1" -semihosting-config enable=on,target=native -nographic -kernel "$2"; }
for spec in "mps2-an385|thumbv7m-none-eabi|-mcpu=cortex-m3|an385.ld|(ETCH_FEATURE_VERIFY|ETCH_FEATURE_ETDUMP)" \
  "mps2-an386|thumbv7em-none-eabihf|-mcpu=cortex-m4 -mfloat-abi=hard -mfpu=fpv4-sp-d16|an385.ld|(ETCH_FEATURE_VERIFY|ETCH_FEATURE_DSP|ETCH_FEATURE_ETDUMP)" \
  "mps2-an505|thumbv8m.main-none-eabihf|-mcpu=cortex-m33 -mfloat-abi=hard -mfpu=fpv5-sp-d16|an505.ld|(ETCH_FEATURE_VERIFY|ETCH_FEATURE_DSP|ETCH_FEATURE_ETDUMP)"; do
  IFS='|' read -r machine t mcpu ld features <<<"$spec"
  mflags="$mcpu -mthumb --specs=rdimon.specs -L$h/qemu -T $h/qemu/$ld -Wl,--gc-sections -Wl,-z,noexecstack"
  # The vector table casts addresses to pointers: C, not ISO-pedantic C.
  compile "$out/startup-$machine.o" arm-none-eabi-gcc $mcpu -mthumb -std=c11 -O2 -Wall -Wextra -Werror -c "$h/qemu/startup.c"
  compile "$out/harness-$machine.elf" arm-none-eabi-gcc $mflags $cflags -DEXPECT_KERNELS=$dscnn_kernels \
    "-DEXPECT_FEATURES=$features" -DETCH_SEMIHOSTING "$out/startup-$machine.o" "$h/harness.c" \
    -I"$out/fx-m" "$out/fx-m/fixtures.c" "$(lib "$t")"
  run "harness qemu $machine ($t)" qemu "$machine" "$out/harness-$machine.elf"
  bad=$(arm-none-eabi-nm -C "$out/harness-$machine.elf" 2>&1 | grep -E "$FORBIDDEN_SYMBOLS|No such file" || true)
  [ -z "$bad" ] || { fail "$machine harness firmware links core::fmt/panics: $(head -3 <<<"$bad")"; clean=no; }
done
[ "${clean:-yes}" = yes ] && echo "ok   bare-metal harness firmware: no core::fmt, no panic symbols"
# Stack of each entry point on the Cortex-M4F (painted below the caller's
# frame; docs/robustness.md): with_method's handle, busy and Region checks
# alone (set_instruction_limit, error) and a DS-CNN inference (execute).
compile "$out/stack-cost-an386.elf" arm-none-eabi-gcc -mcpu=cortex-m4 -mfloat-abi=hard -mfpu=fpv4-sp-d16 -mthumb \
  --specs=rdimon.specs -L"$h/qemu" -T "$h/qemu/an385.ld" -Wl,--gc-sections -Wl,-z,noexecstack $cflags -DETCH_SEMIHOSTING \
  "$out/startup-mps2-an386.o" "$h/stack_cost.c" -I"$out/fx-m" "$out/fx-m/fixtures.c" "$(lib thumbv7em-none-eabihf)"
run "C-API stack per call qemu mps2-an386" qemu mps2-an386 "$out/stack-cost-an386.elf"
sed 's/^/     /' "$out/C-API stack per call qemu mps2-an386.log"
mflags="-mcpu=cortex-m3 -mthumb --specs=rdimon.specs -L$h/qemu -T $h/qemu/an385.ld -Wl,--gc-sections -Wl,-z,noexecstack"
compile "$out/harness-canary.elf" arm-none-eabi-gcc $mflags $cflags -DEXPECT_KERNELS=999 \
  "-DEXPECT_FEATURES=(ETCH_FEATURE_VERIFY|ETCH_FEATURE_ETDUMP)" -DETCH_SEMIHOSTING "$out/startup-mps2-an385.o" "$h/harness.c" \
  -I"$out/fx-m" "$out/fx-m/fixtures.c" "$(lib thumbv7m-none-eabi)"
# The exit status must be able to fail: a wrong expectation exits non-zero.
if qemu mps2-an385 "$out/harness-canary.elf" >"$out/canary.log" 2>&1; then
  fail "qemu exit status does not follow a failing harness"
else
  echo "ok   qemu exit status follows the result (deliberately failing build: $(tail -1 "$out/canary.log"))"
fi

# The programs as streams on bare metal: the Cortex-M4F library with every
# kernel and `dynamic`, tests/c-api/programs.c on mps2-an386 (same checks
# as on the host; the exit status is the result).
rm -f "$out/cargo-m4all/thumbv7em-none-eabihf/release/libetch.a"
(cd "$ffi" && CARGO_TARGET_DIR=$out/cargo-m4all RUSTFLAGS="-C target-cpu=cortex-m4" cargo build -q --release \
  --target thumbv7em-none-eabihf --no-default-features --features all-ops,all-dtypes,verify,dynamic,dsp) ||
  fail "build of the Cortex-M4F library with every kernel and dynamic"
m4="-mcpu=cortex-m4 -mfloat-abi=hard -mfpu=fpv4-sp-d16"
compile "$out/programs-an386.elf" arm-none-eabi-gcc $m4 -mthumb --specs=rdimon.specs -L"$h/qemu" -T "$h/qemu/an385.ld" \
  -Wl,--gc-sections -Wl,-z,noexecstack $cflags -DETCH_SEMIHOSTING "$out/startup-mps2-an386.o" "$h/programs.c" \
  -I"$out/fx-prog" "$out/fx-prog/programs.c" "$out/cargo-m4all/thumbv7em-none-eabihf/release/libetch.a" -lm
run "programs qemu mps2-an386 (thumbv7em-none-eabihf, all kernels, dynamic)" qemu mps2-an386 "$out/programs-an386.elf"

# Opt-in (nightly + miri, several minutes): Miri over the Rust-side tests of
# the handles (src/tests.rs), Stacked and Tree Borrows.
if [ "${ETCH_MIRI:-0}" = 1 ]; then
  rustup component add --toolchain nightly miri rust-src >/dev/null
  f=op-cortex_m-quantized_linear-out,dtype-i8,dtype-i32,verify
  (cd "$ffi" && CARGO_TARGET_DIR=$out/cargo-miri cargo +nightly miri test -q --no-default-features --features $f tiny_through &&
    MIRIFLAGS=-Zmiri-tree-borrows CARGO_TARGET_DIR=$out/cargo-miri cargo +nightly miri test -q --no-default-features --features $f) &&
    echo "ok   miri: handle tests clean under Stacked and Tree Borrows" || fail "miri"
fi
(cd "$ffi" && CARGO_TARGET_DIR=$out/cargo-test cargo test -q --no-default-features \
  --features op-cortex_m-quantized_linear-out,dtype-i8,dtype-i32,verify >"$out/rust-tests.log" 2>&1) &&
  echo "ok   etch-ffi Rust-side tests" || { tail -20 "$out/rust-tests.log"; fail "etch-ffi Rust-side tests"; }

echo "c-api: $(( $(date +%s) - start )) s"
exit $status
