/*
 * Aliasing and re-entry: every buffer and out-pointer a call is
 * handed is checked against the handle, the program bytes, the method
 * state, the planned buffers and the call's other buffers; a call on a
 * method while it runs (from the clock or cycle callback) is refused with
 * ETCH_INVALID_STATE and changes nothing. On every fixture given by
 * gen_fixtures.py, with the program bytes in RAM (so a write into them would
 * land), the handle on the heap (so AddressSanitizer sees an overflow past
 * it): each overlapping call returns ETCH_INVALID_ARGUMENT with `at` = the
 * argument, writes nothing, and the method afterwards still gives
 * ExecuTorch's output byte for byte.
 *
 * Needs the full host library (feature `etdump`). Build with clang or gcc
 * and -fsanitize=address,undefined (tools/ci/c-api.sh). Prints
 * "N passed, M failed"; the exit status is non-zero on failure.
 */
#include "etch.h"
#include "fixture_sizes.h"
#include "fixtures.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_CTX ctx
#include "check.h"

static const char *ctx = "";

/* A refusal with its argument: status and the recorded `at`. */
#define CHECK_REFUSED(m, expr, arg)                                                  \
  do {                                                                               \
    CHECK_STATUS(expr, ETCH_INVALID_ARGUMENT);                                       \
    etch_error_t e_;                                                                 \
    CHECK_STATUS(etch_method_error(m, &e_), ETCH_OK);                                \
    CHECK(e_.status == ETCH_INVALID_ARGUMENT && e_.at == (arg), "at %u, want %u", \
          (unsigned)e_.at, (unsigned)(arg));                                         \
  } while (0)

void etch_log_write(int level, const char *msg, size_t len) {
  (void)level;
  (void)msg;
  (void)len;
}

static uint8_t arena[FIXTURE_MAX_BUFFERS][FIXTURE_MAX_PLANNED_BYTES] __attribute__((aligned(16)));
static uint8_t state[8192];
static uint8_t pte[FIXTURE_MAX_PTE_BYTES] __attribute__((aligned(16)));
static uint8_t pte_before[FIXTURE_MAX_PTE_BYTES];
static uint8_t etdump[64 * 1024];
static uint8_t debug[2 * 1024 * 1024];

static etch_method_t *running;
static const fixture_t *fx;

/* The calls a callback makes on the running method: each must be refused
 * as busy. Counted so the test knows the callback ran. */
static unsigned busy_calls, busy_wrong;
static void call_running(void) {
  const void *out = NULL;
  size_t n = 0;
  etch_error_t e;
  uint32_t prof[64];
  size_t written = 0;
  uint8_t small[64];
  int32_t sizes[16];
  etch_status_t got[] = {
      etch_method_execute(running),
      etch_method_set_input(running, 0, fx->input, fx->input_len),
      etch_method_set_input_typed(running, 0, fx->in.dtype, fx->input, fx->input_len),
      etch_method_output(running, 0, &out, &n),
      etch_method_error(running, &e),
      etch_method_set_instruction_limit(running, 1),
      etch_method_execute_profiled(running, NULL, prof, 64),
      etch_method_execute_etdump(running, NULL, small, sizeof small, &written),
      etch_method_instruction_operator(running, 0, (const char **)&out, &n),
      etch_method_set_input_sized(running, 0, fx->in.sizes, fx->in.dim, fx->input, fx->input_len),
      etch_method_output_sizes(running, 0, sizes, 16, &n),
      etch_method_reset(running),
      etch_method_unload(running),
  };
  for (size_t i = 0; i < sizeof got / sizeof got[0]; i++) {
    busy_calls++;
    if (got[i] != ETCH_INVALID_STATE) {
      busy_wrong++;
      printf("FAIL [%s]: re-entrant call %u gave 0x%02x, want InvalidState\n", ctx, (unsigned)i,
             (unsigned)got[i]);
    }
  }
}

static uint64_t clock_ticks;
static uint64_t reentrant_clock(void) {
  call_running();
  return clock_ticks++;
}
static uint32_t reentrant_cycles(void) {
  call_running();
  return (uint32_t)clock_ticks++;
}
static uint64_t plain_clock(void) { return clock_ticks++; }
static uint32_t plain_cycles(void) { return (uint32_t)clock_ticks++; }

/* Sets the input, runs, compares the output with ExecuTorch's. */
static void runs_right(etch_method_t *m) {
  const void *out = NULL;
  size_t n = 0;
  CHECK_STATUS(etch_method_set_input(m, 0, fx->input, fx->input_len), ETCH_OK);
  CHECK_STATUS(etch_method_execute(m), ETCH_OK);
  CHECK_STATUS(etch_method_output(m, 0, &out, &n), ETCH_OK);
  CHECK(n == fx->output_len && out && memcmp(out, fx->output, n) == 0, "output differs");
}

/* The program bytes as they were (restored, so that later cases start
 * from the real program whatever an earlier one did). */
static void program_untouched(void) {
  CHECK(memcmp(pte, pte_before, fx->pte_len) == 0, "program bytes were written");
  memcpy(pte, pte_before, fx->pte_len);
}

static void test_fixture(const fixture_t *f) {
  fx = f;
  ctx = f->name;
  memcpy(pte, f->pte, f->pte_len);
  memcpy(pte_before, f->pte, f->pte_len);
  etch_program_t *prog = malloc(sizeof *prog);
  etch_method_t *m = malloc(sizeof *m);
  etch_method_meta_t meta;
  memset(prog, 0, sizeof *prog);
  memset(m, 0, sizeof *m);

  /* The program handle over the bytes it reads; out-pointers into the
   * handle or the bytes. */
  CHECK_STATUS(etch_program_load((etch_program_t *)(pte + 64), pte, f->pte_len, true),
               ETCH_INVALID_ARGUMENT);
  program_untouched();
  CHECK_STATUS(etch_program_load(prog, pte, f->pte_len, true), ETCH_OK);
  size_t nm = 0;
  CHECK_STATUS(etch_program_num_methods(prog, (size_t *)(pte + 32)), ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_program_num_methods(prog, (size_t *)prog + 1), ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_method_meta(prog, "forward", (etch_method_meta_t *)(pte + 16)),
               ETCH_INVALID_ARGUMENT);
  etch_error_t *perr = (etch_error_t *)prog;
  CHECK_STATUS(etch_program_error(prog, perr), ETCH_INVALID_ARGUMENT);
  program_untouched();
  CHECK_STATUS(etch_program_num_methods(prog, &nm), ETCH_OK);
  CHECK(nm == f->num_methods, "%u methods", (unsigned)nm);
  memset(&meta, 0, sizeof meta);
  CHECK_STATUS(etch_method_meta(prog, "forward", &meta), ETCH_OK);
  if (meta.num_planned_buffers > FIXTURE_MAX_BUFFERS) {
    CHECK(0, "%u planned buffers", (unsigned)meta.num_planned_buffers);
    return;
  }

  void *planned[ETCH_MAX_PLANNED_BUFFERS];
  size_t lens[ETCH_MAX_PLANNED_BUFFERS];
  for (size_t b = 0; b < meta.num_planned_buffers; b++) {
    planned[b] = arena[b];
    CHECK_STATUS(etch_method_planned_buffer_size(prog, "forward", b, &lens[b]), ETCH_OK);
  }
  /* A method handle over the program handle (the program handle inside
   * the method handle's storage): refused, neither written. */
  etch_method_t *big = malloc(sizeof *big);
  memset(big, 0, sizeof *big);
  etch_program_t *inside = (etch_program_t *)(void *)big;
  memcpy(inside, prog, sizeof *prog);
  CHECK_STATUS(etch_method_load(big, inside, "forward", state, meta.method_state_bytes, planned,
                                lens, meta.num_planned_buffers),
               ETCH_INVALID_ARGUMENT);
  CHECK(memcmp(inside, prog, sizeof *prog) == 0, "program handle written");
  free(big);
  CHECK_STATUS(etch_method_load(m, prog, "forward", state, meta.method_state_bytes, planned, lens,
                                meta.num_planned_buffers),
               ETCH_OK);
  runs_right(m);

  /* ETDump, debug, profile buffers and `written` over the handle, the
   * program bytes, the state, a planned buffer or each other. */
  size_t written = 0, dwritten = 0;
  uint8_t *h = (uint8_t *)m;
  CHECK_REFUSED(m, etch_method_execute_etdump(m, plain_clock, h, sizeof *m, &written), 2);
  CHECK_REFUSED(m, etch_method_execute_etdump(m, plain_clock, h + 8, 4096, &written), 2);
  CHECK_REFUSED(m, etch_method_execute_etdump(m, plain_clock, pte, f->pte_len, &written), 2);
  CHECK_REFUSED(m, etch_method_execute_etdump(m, plain_clock, state, sizeof state, &written), 2);
  CHECK_REFUSED(m, etch_method_execute_etdump(m, plain_clock, arena[0] + 16, 256, &written), 2);
  CHECK_REFUSED(m, etch_method_execute_etdump(m, plain_clock, etdump, sizeof etdump,
                                              (size_t *)(etdump + 64)), 4);
  CHECK_REFUSED(m, etch_method_execute_etdump(m, plain_clock, etdump, sizeof etdump,
                                              (size_t *)m + 2), 4);
  CHECK_REFUSED(m, etch_method_execute_etdump(m, plain_clock, etdump, sizeof etdump,
                                              (size_t *)(pte + 8)), 4);
  CHECK_REFUSED(m, etch_method_execute_etdump_debug(m, plain_clock, etdump, sizeof etdump,
                                                    &written, h, sizeof *m, &dwritten), 5);
  CHECK_REFUSED(m, etch_method_execute_etdump_debug(m, plain_clock, etdump, sizeof etdump,
                                                    &written, pte, f->pte_len, &dwritten), 5);
  CHECK_REFUSED(m, etch_method_execute_etdump_debug(m, plain_clock, etdump, sizeof etdump,
                                                    &written, etdump + 100, 1000, &dwritten), 5);
  CHECK_REFUSED(m, etch_method_execute_etdump_debug(m, plain_clock, etdump, sizeof etdump,
                                                    &written, debug, sizeof debug,
                                                    (size_t *)(debug + 8)), 7);
  CHECK_REFUSED(m, etch_method_execute_etdump_debug(m, plain_clock, etdump, sizeof etdump,
                                                    &written, debug, sizeof debug,
                                                    (size_t *)h), 7);
  static uint32_t prof[4096];
  size_t ni = meta.num_instructions;
  CHECK(ni <= 4096, "%u instructions", (unsigned)ni);
  CHECK_REFUSED(m, etch_method_execute_profiled(m, plain_cycles, (uint32_t *)h, ni), 2);
  CHECK_REFUSED(m, etch_method_execute_profiled(m, plain_cycles, (uint32_t *)pte, ni), 2);
  CHECK_REFUSED(m, etch_method_execute_profiled(m, plain_cycles, (uint32_t *)state, ni), 2);
  program_untouched();
  /* Output and error out-pointers into the handle, planned memory, each
   * other. */
  const void *out = NULL;
  size_t n = 0;
  CHECK_STATUS(etch_method_output(m, 0, (const void **)h + 3, &n), ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_method_output(m, 0, &out, (size_t *)arena[0]), ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_method_output(m, 0, &out, (size_t *)(void *)&out), ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_method_output(m, 0, (const void **)(pte + 16), &n), ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_method_error(m, (etch_error_t *)h), ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_method_set_input(m, 0, arena[0], f->input_len), ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_method_set_input(m, 0, h, f->input_len < sizeof *m ? f->input_len : sizeof *m),
               ETCH_INVALID_ARGUMENT);
  /* The sized setter's sizes and data, the output query's sizes and rank. */
  CHECK_REFUSED(m, etch_method_set_input_sized(m, 0, (const int32_t *)(void *)h, f->in.dim,
                                               f->input, f->input_len), 2);
  CHECK_REFUSED(m, etch_method_set_input_sized(m, 0, (const int32_t *)(void *)state, f->in.dim,
                                               f->input, f->input_len), 2);
  CHECK_REFUSED(m, etch_method_set_input_sized(m, 0, f->in.sizes, f->in.dim, arena[0],
                                               f->input_len), 4);
  int32_t osizes[16];
  CHECK_STATUS(etch_method_output_sizes(m, 0, (int32_t *)(void *)h, 16, &n), ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_method_output_sizes(m, 0, (int32_t *)(void *)(pte + 16), 16, &n),
               ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_method_output_sizes(m, 0, osizes, 16, (size_t *)(void *)arena[0]),
               ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_method_output_sizes(m, 0, osizes, 16, (size_t *)(void *)(osizes + 4)),
               ETCH_INVALID_ARGUMENT);
  program_untouched();
  runs_right(m);

  /* The same buffers, disjoint, work. */
  CHECK_STATUS(etch_method_set_input(m, 0, f->input, f->input_len), ETCH_OK);
  CHECK_STATUS(etch_method_execute_etdump_debug(m, plain_clock, etdump, sizeof etdump, &written,
                                                debug, sizeof debug, &dwritten),
               ETCH_OK);
  etch_error_t de;
  etch_method_error(m, &de);
  CHECK(written > 0 && dwritten > 0, "written %u, debug %u (at %u)", (unsigned)written,
        (unsigned)dwritten, (unsigned)de.at);

  /* Re-entry from the clock and the cycle counter: every call refused as
   * busy, nothing changed, the run completes with the right output. */
  running = m;
  busy_calls = busy_wrong = 0;
  CHECK_STATUS(etch_method_set_input(m, 0, f->input, f->input_len), ETCH_OK);
  CHECK_STATUS(etch_method_execute_etdump(m, reentrant_clock, etdump, sizeof etdump, &written),
               ETCH_OK);
  CHECK(busy_calls > 0 && busy_wrong == 0, "%u of %u re-entrant calls not refused",
        busy_wrong, busy_calls);
  const void *o = NULL;
  CHECK_STATUS(etch_method_output(m, 0, &o, &n), ETCH_OK);
  CHECK(n == f->output_len && o && memcmp(o, f->output, n) == 0, "output after re-entry");
  busy_calls = busy_wrong = 0;
  CHECK_STATUS(etch_method_set_input(m, 0, f->input, f->input_len), ETCH_OK);
  CHECK_STATUS(etch_method_execute_profiled(m, reentrant_cycles, prof, ni), ETCH_OK);
  CHECK(busy_calls > 0 && busy_wrong == 0, "%u of %u re-entrant calls not refused",
        busy_wrong, busy_calls);
  CHECK_STATUS(etch_method_output(m, 0, &o, &n), ETCH_OK);
  CHECK(n == f->output_len && o && memcmp(o, f->output, n) == 0, "output after re-entry");
  /* The error the last call recorded is its own (OK), not a busy one. */
  etch_error_t e;
  CHECK_STATUS(etch_method_error(m, &e), ETCH_OK);
  CHECK(e.status == ETCH_OK, "recorded 0x%02x", (unsigned)e.status);
  runs_right(m);
  CHECK_STATUS(etch_method_unload(m), ETCH_OK);
  CHECK_STATUS(etch_method_execute(m), ETCH_INVALID_STATE);
  running = NULL;
  free(m);
  free(prog);
}

int main(void) {
  for (size_t i = 0; i < num_fixtures; i++)
    if (fixtures[i].input_len > 0 && fixtures[i].pte_len <= sizeof pte) test_fixture(&fixtures[i]);
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
