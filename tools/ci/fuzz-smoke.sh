#!/usr/bin/env bash
# Fuzz smoke: a bounded run of the stable mutation driver
# (rust/etch-fuzz, `etch-mutate`) in the `fuzz` profile (optimised, overflow
# checks on) over the small fixtures and the DS-CNN ones, verification off
# and on, every kernel etch has. Fails on a panic (the mutant is saved under
# target/etch-mutate/) or on any run over 100 ms (fastest of three). The
# regression corpus (rust/etch-fuzz/regressions/) is replayed by
# `cargo test --workspace`. Long campaigns and libFuzzer: docs/robustness.md.
# A few minutes on 2 cores (timed in docs/robustness.md); the seed changes
# daily (printed, so a failure reproduces with the same command).
set -euo pipefail
cd "$(dirname "$0")/../.."
export CARGO_BUILD_JOBS=${CARGO_BUILD_JOBS:-2}
seed=${ETCH_FUZZ_SEED:-$(date -u +%Y%j)}
cargo build -q --profile fuzz -p etch-fuzz --bin etch-mutate
# The binary is where cargo put it: CARGO_TARGET_DIR when set (a stale
# target/fuzz/etch-mutate in the tree would otherwise be run instead).
bin=${CARGO_TARGET_DIR:-target}/fuzz/etch-mutate
F=tests/fixtures
echo "fuzz smoke: seed $seed (ETCH_FUZZ_SEED=$seed $0 reproduces)"
"$bin" --seed "$seed" --iters 60000 --out target/etch-mutate \
  $F/tiny_*.pte $F/zoo_*.pte $F/attn_*.pte $F/fzoo_portable_f32.pte
"$bin" --seed "$seed" --iters 1500 --out target/etch-mutate \
  $F/dscnn_cm_*.pte
# Every single-operator program and every zoo model seeds the smoke too
# (a kernel no seed calls is never fuzzed; rust/etch-fuzz
# tests/seed_coverage.rs checks each kernel has a seed of at most 64 KB).
# The zoo models over 64 KB (up to 1 MB, tens of ms per run) get fewer
# mutants; each run's limit is --max-ms plus 4x its seed's own run.
small_zoo=() large_zoo=()
for f in tests/zoo/*.pte; do
  if [ "$(stat -c %s "$f")" -le 65536 ]; then small_zoo+=("$f"); else large_zoo+=("$f"); fi
done
# tests/programs: the program-features zoo (dynamic shapes,
# dim orders, state); absent until exported.
programs=(); for f in tests/programs/*.pte; do [ -e "$f" ] && programs+=("$f"); done
"$bin" --seed "$seed" --iters 100000 --out target/etch-mutate \
  tests/ops/*.pte tests/custom/*.pte "${small_zoo[@]}" "${programs[@]}"
"$bin" --seed "$seed" --iters 400 --out target/etch-mutate "${large_zoo[@]}"
"$bin" --target reader --seed "$seed" --iters 60000 --out target/etch-mutate \
  $F/*.pte tests/ops/*.pte tests/custom/*.pte tests/zoo/*.pte
