# Sourced by the scripts that check linked embedded images
# (tools/ci/check-embedded.sh, check-frontend.sh, c-api.sh, flash-per-op.sh,
# bench/frontend.sh): one definition of what they measure and forbid.

# elf_sizes ELF: the .text and .rodata bytes of ELF, as "TEXT RODATA".
elf_sizes() {
  arm-none-eabi-size -A "$1" | awk '$1==".text"{t=$2} $1==".rodata"{r=$2} END{print t+0, r+0}'
}

# elf_sizes_text ELF: ".text TEXT B, .rodata RODATA B".
elf_sizes_text() {
  local t r
  read -r t r <<<"$(elf_sizes "$1")"
  printf '.text %d B, .rodata %d B' "$t" "$r"
}

# Symbols no embedded build may link (grep -E): formatting and the panic
# machinery, including the slice-index panics.
FORBIDDEN_SYMBOLS='core::fmt|core::panicking|panic_bounds_check|unwrap_failed|expect_failed|slice_index_fail|slice_end_index|slice_start_index|rust_begin_unwind'
