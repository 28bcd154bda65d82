#!/usr/bin/env bash
# Every Rust target the Zephyr module and the Rust samples build for, compiled
# without Zephyr, so code selected by architecture alone
# cannot break a Zephyr build unseen again (the SSE2 kernels aborted LLVM on
# zephyr-lang-rust's native_sim/native/64 target, x86_64-unknown-none).
#
#  1. rust/etch-ffi (the C library the module links) in release (LTO, as the
#     module builds it) with every kernel, element type, verification, the
#     front end and ETDump, for the triples tools/ci/c-api.sh does not build:
#       x86_64-unknown-none          zephyr-lang-rust, native_sim/native/64
#                                    (soft float, no SSE)
#       riscv32i-unknown-none-elf    zephyr-lang-rust on every RV32 board
#                                    (no M, no atomics), the module on RV32I
#       riscv32imac-unknown-none-elf, riscv32imafc (ilp32f)
#                                    the module on RV32 (cmake/etch.cmake
#                                    picks the triple from Zephyr's ISA
#                                    Kconfig; riscv32im/imc build the same code)
#       riscv64imac-unknown-none-elf the module and zephyr-lang-rust on RV64
#       riscv64gc-unknown-none-elf   the module on RV64 with hard float (lp64d)
#       thumbv8m.base-none-eabi      the module on Cortex-M23
#       aarch64-unknown-none-softfloat the module on ARM64 without CONFIG_FPU
#                                    (aarch64-unknown-none with it: the same code)
#     (c-api.sh builds the Cortex-M triples with DSP/FPU flags and the two
#     hosted native_sim triples, and runs the C harness on them.)
#  2. the Rust samples' own source (rust_hello, keyword_spotting_rust), final
#     crate and release profile (LTO: where the LLVM error showed) for
#     x86_64-unknown-none, thumbv7m-none-eabi, riscv32i-unknown-none-elf and
#     riscv64imac-unknown-none-elf, with tools/ci/zephyr-standin in place of
#     zephyr-lang-rust's `zephyr` crate (printing and the panic handler) and
#     of the DMIC bindings bindgen makes from Zephyr's header.
#  3. the no-SSE x86-64 build takes the scalar kernels: no SSE instruction in
#     the library (objdump finds no xmm register).
#  4. the model-image entry points (CONFIG_ETCH_MODEL_SLOTS) link no core::fmt
#     and no panic machinery (a Cortex-M0 library, checked by symbol).
# Usage: tools/ci/zephyr-targets.sh   (installs the rustup targets it needs)
#   ETCH_ZEPHYR_TARGETS="x86_64-unknown-none ..." limits steps 1-2 to these.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
out=${ETCH_ZEPHYR_TARGETS_OUT:-$here/target/zephyr-targets}
export CARGO_TARGET_DIR=$out/cargo
export CARGO_BUILD_JOBS=${CARGO_BUILD_JOBS:-2}
start=$(date +%s)
status=0
fail() { echo "FAIL $*"; status=1; }

ffi_targets="x86_64-unknown-none riscv32i-unknown-none-elf riscv32imac-unknown-none-elf
  riscv32imafc-unknown-none-elf riscv64imac-unknown-none-elf riscv64gc-unknown-none-elf
  thumbv8m.base-none-eabi aarch64-unknown-none-softfloat"
sample_targets="x86_64-unknown-none thumbv7m-none-eabi riscv32i-unknown-none-elf riscv64imac-unknown-none-elf"
if [ -n "${ETCH_ZEPHYR_TARGETS:-}" ]; then
  only() { for t in $1; do [[ " $ETCH_ZEPHYR_TARGETS " == *" $t "* ]] && echo "$t"; done; true; }
  ffi_targets=$(only "$ffi_targets"); sample_targets=$(only "$sample_targets")
fi
installed=$(rustup target list --installed)
for t in $(tr ' ' '\n' <<<"$ffi_targets $sample_targets" | sort -u); do
  grep -qx "$t" <<<"$installed" && continue
  if ! rustup target add "$t" >/dev/null 2>&1; then
    # (thumbv8m.base-none-eabi's rust-std answered 404 on the build machine.)
    echo "SKIP $t: \`rustup target add $t\` failed here"
    ffi_targets=$(tr ' ' '\n' <<<"$ffi_targets" | grep -vx "$t" || true)
    sample_targets=$(tr ' ' '\n' <<<"$sample_targets" | grep -vx "$t" || true)
  fi
done
mkdir -p "$out"

# --- 1. the C library -------------------------------------------------------
features="all-ops,all-dtypes,verify,frontend,etdump"
for t in $ffi_targets; do
  rm -f "$CARGO_TARGET_DIR/$t/release/libetch.a"
  if (cd "$here/rust/etch-ffi" && cargo build -q --release --locked --target "$t" \
      --no-default-features --features "$features") 2>"$out/ffi-$t.log"; then
    echo "ok   rust/etch-ffi for $t ($features)"
  else
    tail -20 "$out/ffi-$t.log"
    fail "rust/etch-ffi for $t"
  fi
done

# --- 2. the Rust samples ----------------------------------------------------
# A crate in $out per sample with the sample's package, dependencies (paths
# made absolute; `zephyr` -> the stand-in) and release profile, whose library
# is the sample's own src/lib.rs; the sample's Cargo.lock pins the versions.
# keyword_spotting_rust's build.rs runs bindgen on Zephyr's <zephyr/audio/dmic.h>:
# here a build script copies the stand-in's dmic.rs (the same declarations).
gen_sample() { # sample dir
  python3 - "$here/samples/$1" "$here/tools/ci/zephyr-standin" "$2" <<'PY'
import os, sys, tomllib
src, standin, dst = sys.argv[1:]
with open(os.path.join(src, "Cargo.toml"), "rb") as f:
    m = tomllib.load(f)
def val(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return "[" + ", ".join(val(x) for x in v) + "]"
    return "{ " + ", ".join(f"{k} = {val(x)}" for k, x in v.items()) + " }"
def deps(table):
    out = []
    for name, d in table.items():
        if name == "zephyr":
            d = {"path": standin}
        elif isinstance(d, dict) and "path" in d:
            d = dict(d, path=os.path.normpath(os.path.join(src, d["path"])))
        out.append(f"{name} = {val(d)}")
    return out
pkg = dict(m["package"])
has_build = os.path.exists(os.path.join(src, "build.rs"))
pkg.pop("build", None)
lines = ["[package]"] + [f"{k} = {val(v)}" for k, v in pkg.items()]
if has_build:
    lines.append('build = "build.rs"')
    with open(os.path.join(dst, "build.rs"), "w") as f:
        f.write("fn main() {\n    let out = std::path::PathBuf::from(std::env::var(\"OUT_DIR\").unwrap());\n"
                f"    std::fs::copy({val(os.path.join(standin, 'dmic.rs'))}, out.join(\"dmic.rs\")).unwrap();\n}}\n")
lines += ["", "[lib]", 'crate-type = ["staticlib"]', f"path = {val(os.path.join(src, 'src/lib.rs'))}",
          "", "[dependencies]"] + deps(m["dependencies"])
for triple, t in m.get("target", {}).items():
    lines += ["", f'[target.{val(triple)}.dependencies]'] + deps(t.get("dependencies", {}))
lines += ["", "[profile.release]"] + [f"{k} = {val(v)}" for k, v in m["profile"]["release"].items()]
lines += ["", "[workspace]", ""]
with open(os.path.join(dst, "Cargo.toml"), "w") as f:
    f.write("\n".join(lines))
PY
  cp "$here/samples/$1/Cargo.lock" "$2/Cargo.lock"
}
for sample in rust_hello keyword_spotting_rust; do
  dir=$out/$sample
  mkdir -p "$dir"
  gen_sample "$sample" "$dir"
  for t in $sample_targets; do
    if (cd "$dir" && { cargo build -q --release --offline --target "$t" 2>/dev/null ||
        cargo build -q --release --target "$t"; }) 2>"$out/$sample-$t.log"; then
      echo "ok   samples/$sample (its lib.rs, release LTO) for $t"
    else
      tail -20 "$out/$sample-$t.log"
      fail "samples/$sample for $t"
    fi
  done
done

# --- 3. no SSE where the target has none --------------------------------------
a=$CARGO_TARGET_DIR/x86_64-unknown-none/release/libetch.a
if [ -f "$a" ]; then
  # Per function; compiler-builtins' own helpers (__divsc3, ...) excluded.
  bad=$(objdump -d "$a" 2>/dev/null | awk '/^[0-9a-f]+ <.*>:$/ { f = $2 }
    /%xmm/ && f !~ /^<__/ { n[f]++ } END { for (k in n) print n[k], k }')
  if [ -z "$bad" ]; then
    echo "ok   x86_64-unknown-none: no SSE register in etch's code (scalar kernels)"
  else
    head -5 <<<"$bad"
    fail "x86_64-unknown-none: instructions on xmm registers in etch's code"
  fi
fi

# --- 4. the model-image entry points stay free of formatting and panics ------
# What CONFIG_ETCH_MODEL_SLOTS links beyond the runtime (etch_image_*,
# etch_program_missing_operators: header checks, SHA-256, the A/B order),
# in a Cortex-M0 library with verification and no kernel (a quick build),
# kept alive by name and checked by symbol as tools/ci/check-embedded.sh
# checks the runtime.
t=thumbv6m-none-eabi
if command -v arm-none-eabi-ld >/dev/null && grep -qx "$t" <<<"$(rustup target list --installed)"; then
  . "$here/tools/ci/elf.sh"
  a=$CARGO_TARGET_DIR/image-check/$t/release/libetch.a
  elf=$out/image-entry-points.elf
  if (cd "$here/rust/etch-ffi" && cargo build -q --release --locked --target "$t" \
      --target-dir "$CARGO_TARGET_DIR/image-check" --no-default-features --features verify) \
      2>"$out/image-check.log" &&
    arm-none-eabi-ld --gc-sections -e etch_image_check -u etch_image_check_header \
      -u etch_image_header -u etch_image_boot_order -u etch_image_newer \
      -u etch_program_missing_operators -o "$elf" "$a" 2>>"$out/image-check.log"; then
    bad=$(arm-none-eabi-nm -C "$elf" | grep -E "$FORBIDDEN_SYMBOLS" || true)
    if [ -z "$bad" ]; then
      echo "ok   $t: model-image entry points link no core::fmt and no panic symbol ($(elf_sizes_text "$elf"))"
    else
      head -5 <<<"$bad"
      fail "$t: formatting or panic symbols in the model-image entry points"
    fi
  else
    tail -20 "$out/image-check.log"
    fail "$t: building or linking the model-image entry points"
  fi
else
  echo "SKIP model-image symbol check: needs arm-none-eabi-ld and the $t target"
fi

echo "zephyr targets: $([ $status = 0 ] && echo ok || echo FAILED) in $(($(date +%s) - start)) s"
exit $status
