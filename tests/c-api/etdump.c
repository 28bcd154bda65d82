/*
 * ETDump from the C API (etch_method_execute_etdump*, library feature
 * `etdump`): the DS-CNN fixture recorded with a clock that advances by one
 * per reading must give exactly the bytes etch-etdump's Rust writer gives
 * for the same readings (tests/c-api/etdump/, made and checked by
 * rust/etch-etdump/tests/golden.rs), with and without the debug buffer;
 * short buffers fail with ETCH_MEMORY_ALLOCATION_FAILED, bad arguments with
 * ETCH_INVALID_ARGUMENT, and the run's output stays ExecuTorch's.
 *
 * -DETDUMP_GOLDEN_DIR="tests/c-api/etdump" (read with stdio on the host).
 * Prints "N passed, M failed"; the exit status is non-zero on failure.
 * With --console it also prints the profile ETDump as the Zephyr glue does
 * (zephyr/src/etch_etdump_console.c, linked in), between log-like noise, for
 * tools/etdump/from_console.py to turn back into the golden file.
 */
#include "etch.h"
#include "etch_zephyr.h"
#include "fixture_sizes.h"
#include "fixtures.h"

#include <stdio.h>
#include <string.h>

#include "check.h"

#ifndef ETDUMP_GOLDEN_DIR
#error "ETDUMP_GOLDEN_DIR: directory of the golden ETDump files"
#endif

#define NAME "dscnn_cm_m33_int8io"

static uint8_t arena[FIXTURE_MAX_BUFFERS][FIXTURE_MAX_PLANNED_BYTES] __attribute__((aligned(16)));
static uint8_t state[8192];
static etch_program_t prog;
static etch_method_t method;
static uint8_t etdump[16 * 1024];
static uint8_t debug[128 * 1024];
static uint8_t golden[16 * 1024];

/* The platform's log hook, for libraries built with `log`. */
void etch_log_write(int level, const char *msg, size_t len) {
  (void)level;
  (void)msg;
  (void)len;
}

static uint64_t ticks;
static uint64_t counting_clock(void) { return ticks++; }

/* Reads a golden file; its length, or 0 when missing. */
static size_t read_golden(const char *name, uint8_t *buf, size_t cap) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", ETDUMP_GOLDEN_DIR, name);
  FILE *f = fopen(path, "rb");
  if (!f) {
    printf("FAIL cannot open %s\n", path);
    failed++;
    return 0;
  }
  size_t n = fread(buf, 1, cap, f);
  fclose(f);
  return n;
}

static uint64_t fnv1a(const uint8_t *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

static etch_error_t method_error(void) {
  etch_error_t e;
  memset(&e, 0, sizeof e);
  etch_method_error(&method, &e);
  return e;
}

static void output_is_executorchs(const fixture_t *f, const char *when) {
  const void *out = NULL;
  size_t out_len = 0;
  CHECK_STATUS(etch_method_output(&method, 0, &out, &out_len), ETCH_OK);
  CHECK(out && out_len == f->output_len && memcmp(out, f->output, out_len) == 0,
        "%s: output differs from ExecuTorch's", when);
}

/* A console line as a Zephyr log might show it: some with a timestamp
 * prefix, other output in between. */
static void console_line(const char *line, size_t len, void *ctx) {
  unsigned *n = ctx;
  if (*n % 2 == 1) printf("[00:00:%02u.%03u,000] <inf> app: ", *n / 1000, *n % 1000);
  printf("%.*s\r\n", (int)len, line);
  if (*n == 3) printf("unrelated output\n");
  (*n)++;
}

int main(int argc, char **argv) {
  int console = argc > 1 && strcmp(argv[1], "--console") == 0;
  const fixture_t *f = NULL;
  for (size_t i = 0; i < num_fixtures; i++)
    if (strcmp(fixtures[i].name, NAME) == 0) f = &fixtures[i];
  CHECK(f != NULL, "fixture %s not embedded", NAME);
  if (!f) return 1;
  CHECK(etch_build_features() & ETCH_FEATURE_ETDUMP, "library built without `etdump`");

  etch_method_meta_t meta;
  void *planned[ETCH_MAX_PLANNED_BUFFERS];
  size_t lens[ETCH_MAX_PLANNED_BUFFERS];
  CHECK_STATUS(etch_program_load(&prog, f->pte, f->pte_len, true), ETCH_OK);
  CHECK_STATUS(etch_method_meta(&prog, "forward", &meta), ETCH_OK);
  CHECK(meta.method_state_bytes <= sizeof state && meta.num_planned_buffers <= FIXTURE_MAX_BUFFERS,
        "harness buffers too small");
  for (size_t b = 0; b < meta.num_planned_buffers; b++) {
    planned[b] = arena[b];
    CHECK_STATUS(etch_method_planned_buffer_size(&prog, "forward", b, &lens[b]), ETCH_OK);
  }
  size_t written = 0, debug_written = 0;

  /* Not loaded yet. */
  CHECK_STATUS(etch_method_execute_etdump(&method, counting_clock, etdump, sizeof etdump, &written),
               ETCH_INVALID_STATE);
  CHECK_STATUS(etch_method_load(&method, &prog, "forward", state, meta.method_state_bytes, planned,
                                lens, meta.num_planned_buffers),
               ETCH_OK);
  CHECK_STATUS(etch_method_set_input(&method, 0, f->input, f->input_len), ETCH_OK);

  /* Profile only: byte for byte the Rust writer's file. */
  size_t want = read_golden(NAME ".etdp", golden, sizeof golden);
  ticks = 0;
  CHECK_STATUS(etch_method_execute_etdump(&method, counting_clock, etdump, sizeof etdump, &written),
               ETCH_OK);
  CHECK(want > 0 && written == want && memcmp(etdump, golden, want) == 0,
        "profile ETDump: %u B, golden %u B, or bytes differ", (unsigned)written, (unsigned)want);
  CHECK(memcmp(etdump + 8, "ED00", 4) == 0, "file identifier");
  if (console) {
    unsigned lines = 0;
    etch_etdump_console_write(etdump, written, 1000000000u, console_line, &lines);
    CHECK(lines == 2 + (written + 47) / 48, "%u console lines", lines);
  }
  output_is_executorchs(f, "profile run");

  /* One byte short: MemoryAllocationFailed with the shortfall, *written
   * untouched. (Inputs are set before every execute: the planned memory
   * reuses the input's bytes.) */
  CHECK_STATUS(etch_method_set_input(&method, 0, f->input, f->input_len), ETCH_OK);
  written = 12345;
  CHECK_STATUS(etch_method_execute_etdump(&method, counting_clock, etdump, want - 1, &written),
               ETCH_MEMORY_ALLOCATION_FAILED);
  etch_error_t err = method_error();
  CHECK(err.status == ETCH_MEMORY_ALLOCATION_FAILED && err.at >= 1, "at %u", (unsigned)err.at);
  CHECK(written == 12345, "written %u on failure", (unsigned)written);
  CHECK_STATUS(etch_method_execute_etdump(&method, counting_clock, etdump, 0, &written),
               ETCH_MEMORY_ALLOCATION_FAILED);

  /* Arguments. */
  CHECK_STATUS(etch_method_execute_etdump(&method, NULL, etdump, sizeof etdump, &written),
               ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_method_execute_etdump(&method, counting_clock, etdump, sizeof etdump, NULL),
               ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_method_execute_etdump(&method, counting_clock, NULL, sizeof etdump, &written),
               ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_method_execute_etdump(&method, counting_clock, arena[0], lens[0], &written),
               ETCH_INVALID_ARGUMENT);
  err = method_error();
  CHECK(err.at == 2, "overlap with planned memory: at %u", (unsigned)err.at);
  CHECK_STATUS(etch_method_execute_etdump(NULL, counting_clock, etdump, sizeof etdump, &written),
               ETCH_INVALID_ARGUMENT);

  /* Debug mode: every kernel's output in the debug buffer. */
  size_t want_dbg = read_golden(NAME ".debug.etdp", golden, sizeof golden);
  char summary[64] = {0};
  read_golden(NAME ".debug.txt", (uint8_t *)summary, sizeof summary - 1);
  unsigned long long dbg_len = 0, dbg_hash = 0;
  CHECK(sscanf(summary, "%llu %llx", &dbg_len, &dbg_hash) == 2, "debug summary '%s'", summary);
  CHECK_STATUS(etch_method_set_input(&method, 0, f->input, f->input_len), ETCH_OK);
  ticks = 0;
  CHECK_STATUS(etch_method_execute_etdump_debug(&method, counting_clock, etdump, sizeof etdump,
                                                &written, debug, sizeof debug, &debug_written),
               ETCH_OK);
  CHECK(want_dbg > 0 && written == want_dbg && memcmp(etdump, golden, want_dbg) == 0,
        "debug ETDump: %u B, golden %u B, or bytes differ", (unsigned)written, (unsigned)want_dbg);
  CHECK(debug_written == dbg_len && fnv1a(debug, debug_written) == dbg_hash,
        "debug buffer %u B hash %016llx, golden %llu B %016llx", (unsigned)debug_written,
        (unsigned long long)fnv1a(debug, debug_written), dbg_len, dbg_hash);
  output_is_executorchs(f, "debug run");
  CHECK_STATUS(etch_method_execute_etdump_debug(&method, counting_clock, etdump, sizeof etdump,
                                                &written, debug, dbg_len - 1, &debug_written),
               ETCH_MEMORY_ALLOCATION_FAILED);
  CHECK_STATUS(etch_method_execute_etdump_debug(&method, counting_clock, etdump, sizeof etdump,
                                                &written, etdump + 64, 1024, &debug_written),
               ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_method_execute_etdump_debug(&method, counting_clock, etdump, sizeof etdump,
                                                &written, debug, sizeof debug, NULL),
               ETCH_INVALID_ARGUMENT);

  printf("etdump: %d passed, %d failed\n", passed, failed);
  return failed != 0;
}
