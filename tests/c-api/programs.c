/*
 * Programs through the C API: the program-features zoo (tests/programs,
 * embedded by gen_programs.py) driven as firmware drives a stream. Each
 * method is loaded once and its steps executed in order, every input set
 * with its own sizes (etch_method_set_input_sized) and every output
 * compared with ExecuTorch's runtime's output of the same step (bytes by
 * the program's rule, sizes exactly through etch_method_output_sizes).
 * Then step 0 runs again: a stateful program now gives something else (its
 * state carried on), and after etch_method_reset step 0 and every later
 * step match again, step 0 bit for bit what the first run gave.
 *
 * The bounded dynamic program (seq_dyn_*, Dim("T", min=1, max=32)) also
 * gets the refusals: T = 33 (above the bound), another rank, a negative
 * size, bytes that do not match the sizes, too many dimensions, a short
 * sizes array for the output query, buffers over the method's memory, and
 * both calls from inside the running method; each with its exact status
 * and `at`, and the method unchanged afterwards.
 *
 * Prints "N passed, M failed"; the exit status is non-zero on failure
 * (ETCH_SEMIHOSTING: bare metal under QEMU, the exit through semihosting).
 */
#include "etch.h"
#include "program_sizes.h"
#include "programs.h"

#include <stdio.h>
#include <string.h>

#define CHECK_CTX ctx
#include "check.h"

static char ctx[128];

/* A refusal: the status, and the `at` etch_method_error reports. */
#define CHECK_REFUSED(m, expr, want, want_at)                                          \
  do {                                                                                 \
    CHECK_STATUS(expr, want);                                                          \
    etch_error_t e_;                                                                   \
    CHECK_STATUS(etch_method_error((m), &e_), ETCH_OK);                                \
    CHECK(e_.status == (want) && e_.at == (uint32_t)(want_at), "error 0x%02x at %u", \
          (unsigned)e_.status, (unsigned)e_.at);                                       \
  } while (0)

void etch_log_write(int level, const char *msg, size_t len) {
  (void)level;
  (void)msg;
  (void)len;
}

static uint8_t arena[PROGRAM_MAX_BUFFERS][PROGRAM_MAX_PLANNED_BYTES] __attribute__((aligned(16)));
static uint8_t state[16384];
static etch_program_t prog;
static etch_method_t method;
/* Step 0's outputs as etch gave them the first time. */
#define MAX_OUTPUTS 4
static uint8_t first[MAX_OUTPUTS][PROGRAM_MAX_OUTPUT_BYTES];
static size_t first_len[MAX_OUTPUTS];

/* f32 bits on one line of integers: ulp distance is their difference. */
static int64_t ordered(uint32_t bits) {
  return (bits & 0x80000000u) ? -(int64_t)(bits & 0x7fffffffu) : (int64_t)bits;
}

/* Whether `got` (n bytes) meets reference `want` by the program's rule;
 * `worst` gets the largest ulp / integer distance seen. */
static int meets(const prog_t *p, const prog_tensor_t *want, const uint8_t *got, size_t n,
                 int64_t *worst) {
  *worst = 0;
  if (n != want->len) return 0;
  if (want->dtype == ETCH_DTYPE_FLOAT) {
    for (size_t i = 0; i + 4 <= n; i += 4) {
      uint32_t a, b;
      memcpy(&a, got + i, 4);
      memcpy(&b, want->data + i, 4);
      int64_t d = ordered(a) - ordered(b);
      if (d < 0) d = -d;
      if (d > *worst) *worst = d;
    }
    return *worst <= p->ulp;
  }
  if (want->dtype == ETCH_DTYPE_CHAR || want->dtype == ETCH_DTYPE_BYTE) {
    for (size_t i = 0; i < n; i++) {
      int64_t a = want->dtype == ETCH_DTYPE_CHAR ? (int8_t)got[i] : got[i];
      int64_t b = want->dtype == ETCH_DTYPE_CHAR ? (int8_t)want->data[i] : want->data[i];
      int64_t d = a > b ? a - b : b - a;
      if (d > *worst) *worst = d;
    }
    return *worst <= p->int_diff;
  }
  return memcmp(got, want->data, n) == 0;
}

static etch_status_t set_inputs(etch_method_t *m, const prog_step_t *s) {
  for (size_t i = 0; i < s->num_inputs; i++) {
    const prog_tensor_t *t = &s->inputs[i];
    etch_status_t st = etch_method_set_input_sized(m, i, t->sizes, t->dim, t->data, t->len);
    if (st != ETCH_OK) return st;
  }
  return ETCH_OK;
}

/* Sets step k's inputs, executes, and holds every output to the
 * reference: bytes by the rule, sizes exactly. Returns the number of
 * outputs that failed. With `keep`, step 0's outputs are saved. */
static int run_step(const prog_t *p, const prog_method_t *pm, size_t k, int keep) {
  const prog_step_t *s = &pm->steps[k];
  int bad = 0;
  CHECK_STATUS(set_inputs(&method, s), ETCH_OK);
  etch_status_t st = etch_method_execute(&method);
  CHECK_STATUS(st, ETCH_OK);
  if (st != ETCH_OK) return (int)s->num_outputs;
  for (size_t j = 0; j < s->num_outputs; j++) {
    const prog_tensor_t *want = &s->outputs[j];
    const void *out = NULL;
    size_t n = 0;
    CHECK_STATUS(etch_method_output(&method, j, &out, &n), ETCH_OK);
    int64_t worst = 0;
    int ok = out != NULL && meets(p, want, out, n, &worst);
    CHECK(ok, "%s step %u output %u: %u B (want %u), %s %lld", pm->name, (unsigned)k, (unsigned)j,
          (unsigned)n, (unsigned)want->len, want->dtype == ETCH_DTYPE_FLOAT ? "ulp" : "diff",
          (long long)worst);
    int32_t sizes[ETCH_MAX_DIMS];
    size_t dim = 99;
    CHECK_STATUS(etch_method_output_sizes(&method, j, sizes, ETCH_MAX_DIMS, &dim), ETCH_OK);
    int same = dim == want->dim && memcmp(sizes, want->sizes, dim * sizeof sizes[0]) == 0;
    CHECK(same, "%s step %u output %u: rank %u [%d, %d, ...], want rank %u [%d, %d, ...]",
          pm->name, (unsigned)k, (unsigned)j, (unsigned)dim, (int)sizes[0], dim > 1 ? (int)sizes[1] : 0,
          (unsigned)want->dim, (int)want->sizes[0], want->dim > 1 ? (int)want->sizes[1] : 0);
    if (!ok || !same) bad++;
    if (keep && j < MAX_OUTPUTS && out && n <= PROGRAM_MAX_OUTPUT_BYTES) {
      memcpy(first[j], out, n);
      first_len[j] = n;
    }
  }
  return bad;
}

/* Whether step 0 now gives exactly what it gave the first time. */
static int step0_as_first(const prog_method_t *pm) {
  CHECK_STATUS(set_inputs(&method, &pm->steps[0]), ETCH_OK);
  CHECK_STATUS(etch_method_execute(&method), ETCH_OK);
  int same = 1;
  for (size_t j = 0; j < pm->steps[0].num_outputs && j < MAX_OUTPUTS; j++) {
    const void *out = NULL;
    size_t n = 0;
    CHECK_STATUS(etch_method_output(&method, j, &out, &n), ETCH_OK);
    same = same && out && n == first_len[j] && memcmp(out, first[j], n) == 0;
  }
  return same;
}

static int load(const prog_t *p, const char *name) {
  etch_method_meta_t meta;
  CHECK_STATUS(etch_method_meta(&prog, name, &meta), ETCH_OK);
  void *planned[ETCH_MAX_PLANNED_BUFFERS];
  size_t lens[ETCH_MAX_PLANNED_BUFFERS];
  CHECK(meta.num_planned_buffers <= PROGRAM_MAX_BUFFERS && meta.method_state_bytes <= sizeof state,
        "%u buffers, state %u B", (unsigned)meta.num_planned_buffers,
        (unsigned)meta.method_state_bytes);
  if (meta.num_planned_buffers > PROGRAM_MAX_BUFFERS || meta.method_state_bytes > sizeof state)
    return 0;
  for (size_t b = 0; b < meta.num_planned_buffers; b++) {
    CHECK_STATUS(etch_method_planned_buffer_size(&prog, name, b, &lens[b]), ETCH_OK);
    planned[b] = arena[b];
    /* Whatever the arena held before: the state comes from the program. */
    memset(arena[b], 0x5a, sizeof arena[b]);
  }
  (void)p;
  etch_status_t st = etch_method_load(&method, &prog, name, state, meta.method_state_bytes,
                                      planned, lens, meta.num_planned_buffers);
  CHECK_STATUS(st, ETCH_OK);
  return st == ETCH_OK;
}

static void test_program(const prog_t *p) {
  snprintf(ctx, sizeof ctx, "%s", p->name);
  CHECK_STATUS(etch_program_load(&prog, p->pte, p->pte_len, true), ETCH_OK);
  for (size_t mi = 0; mi < p->num_methods; mi++) {
    const prog_method_t *pm = &p->methods[mi];
    snprintf(ctx, sizeof ctx, "%s.%s", p->name, pm->name);
    if (!load(p, pm->name)) continue;
    int bad = 0;
    for (size_t k = 0; k < pm->num_steps; k++) bad += run_step(p, pm, k, k == 0);
    /* Step 0 again: a stateful method has moved on; a stateless one gives
     * the same bytes. */
    int same = step0_as_first(pm);
    CHECK(same == !p->stateful, "step 0 again without reset: %s",
          same ? "same output (no state kept?)" : "different output (state not kept?)");
    CHECK_STATUS(etch_method_reset(&method), ETCH_OK);
    CHECK(step0_as_first(pm), "step 0 after etch_method_reset differs from the first run");
    /* The stream goes on from there as the first time. */
    for (size_t k = 1; k < pm->num_steps; k++) bad += run_step(p, pm, k, 0);
    printf("ok   %-22s %-7s %u steps%s%s, reset%s\n", p->name, pm->name, (unsigned)pm->num_steps,
           p->stateful ? " (state carried)" : "",
           p->ulp ? " within the ulp rule" : (p->int_diff ? " within the int rule" : " exact"),
           bad ? ": FAILED" : " reproduces step 0 bit-exactly");
    CHECK_STATUS(etch_method_unload(&method), ETCH_OK);
  }
}

/* ---- calls from inside the running method (a cycle callback) ---- */
static const prog_tensor_t *busy_input;
static unsigned busy_calls, busy_wrong;
static uint32_t busy_cycles(void) {
  static uint32_t t;
  int32_t sizes[ETCH_MAX_DIMS];
  size_t dim = 0;
  etch_status_t got[] = {
      etch_method_set_input_sized(&method, 0, busy_input->sizes, busy_input->dim, busy_input->data,
                                  busy_input->len),
      etch_method_output_sizes(&method, 0, sizes, ETCH_MAX_DIMS, &dim),
  };
  for (size_t i = 0; i < sizeof got / sizeof got[0]; i++) {
    busy_calls++;
    if (got[i] != ETCH_INVALID_STATE) busy_wrong++;
  }
  return t++;
}

/* The bounded dynamic program: T = max, 5, 1 come from its steps; here
 * what must be refused, and that a refusal changes nothing. */
static void test_dynamic(const prog_t *p) {
  snprintf(ctx, sizeof ctx, "%s dynamic", p->name);
  const prog_method_t *pm = &p->methods[0];
  CHECK_STATUS(etch_program_load(&prog, p->pte, p->pte_len, true), ETCH_OK);
  CHECK(etch_build_features() & ETCH_FEATURE_DYNAMIC, "library built without `dynamic`");
  etch_tensor_info_t in;
  CHECK_STATUS(etch_method_input_info(&prog, pm->name, 0, &in), ETCH_OK);
  /* The upper bounds: [1, 32, 8]. */
  CHECK(in.dim == 3 && in.sizes[0] == 1 && in.sizes[1] == 32 && in.sizes[2] == 8,
        "input bound rank %u [%d, %d, %d]", (unsigned)in.dim, (int)in.sizes[0], (int)in.sizes[1], (int)in.sizes[2]);
  if (!load(p, pm->name)) return;
  /* Step 1 (T = 5) runs; every refusal after setting it leaves T = 5 and
   * its bytes. (Not an execute without setting the input again: the input's
   * planned bytes may be reused by later tensors, as in ExecuTorch.) */
  size_t k5 = 1;
  CHECK(pm->steps[k5].inputs[0].sizes[1] == 5, "step 1 has T = %d", (int)pm->steps[k5].inputs[0].sizes[1]);
  CHECK(run_step(p, pm, k5, 1) == 0, "T = 5 from a fresh load");
  const prog_tensor_t *t5 = &pm->steps[k5].inputs[0];
  size_t elem = t5->len / (5 * 8);
  /* T = 5 set again; the refusals come between it and the execute. */
  CHECK_STATUS(etch_method_set_input_sized(&method, 0, t5->sizes, t5->dim, t5->data, t5->len),
               ETCH_OK);
  static uint8_t big[33 * 8 * 8];
  memset(big, 0, sizeof big);
  int32_t s33[3] = {1, 33, 8};
  CHECK_REFUSED(&method, etch_method_set_input_sized(&method, 0, s33, 3, big, 33 * 8 * elem),
                ETCH_INVALID_ARGUMENT, 0);
  int32_t s2[2] = {5, 8};
  CHECK_REFUSED(&method, etch_method_set_input_sized(&method, 0, s2, 2, t5->data, t5->len),
                ETCH_INVALID_ARGUMENT, 0);
  int32_t neg[3] = {1, -5, 8};
  CHECK_REFUSED(&method, etch_method_set_input_sized(&method, 0, neg, 3, t5->data, t5->len),
                ETCH_INVALID_ARGUMENT, 2);
  /* T = 4's sizes with T = 5's bytes: `at` = the bytes T = 4 needs. */
  int32_t s4[3] = {1, 4, 8};
  CHECK_REFUSED(&method, etch_method_set_input_sized(&method, 0, s4, 3, t5->data, t5->len),
                ETCH_INVALID_ARGUMENT, 4 * 8 * elem);
  int32_t s17[17] = {1, 5, 8};
  CHECK_REFUSED(&method, etch_method_set_input_sized(&method, 0, s17, 17, t5->data, t5->len),
                ETCH_INVALID_ARGUMENT, 3);
  CHECK_REFUSED(&method, etch_method_set_input_sized(&method, 1, t5->sizes, 3, t5->data, t5->len),
                ETCH_INVALID_ARGUMENT, 1);
  CHECK_REFUSED(&method, etch_method_set_input_sized(&method, 0, NULL, 3, t5->data, t5->len),
                ETCH_INVALID_ARGUMENT, 2);
  /* Sizes or data over the method's planned memory or state. */
  /* (Refused before they are read: the planned bytes are not written.) */
  CHECK_REFUSED(&method,
                etch_method_set_input_sized(&method, 0, (const int32_t *)(arena[0] + 64), 3,
                                            t5->data, t5->len),
                ETCH_INVALID_ARGUMENT, 2);
  CHECK_REFUSED(&method, etch_method_set_input_sized(&method, 0, t5->sizes, 3, arena[0], t5->len),
                ETCH_INVALID_ARGUMENT, 4);
  CHECK_REFUSED(&method, etch_method_set_input_sized(&method, 0, t5->sizes, 3, state, t5->len),
                ETCH_INVALID_ARGUMENT, 4);
  /* Nothing changed: the execute gives step 1's outputs. */
  CHECK_STATUS(etch_method_execute(&method), ETCH_OK);
  for (size_t j = 0; j < pm->steps[k5].num_outputs; j++) {
    const void *out = NULL;
    size_t n = 0;
    CHECK_STATUS(etch_method_output(&method, j, &out, &n), ETCH_OK);
    CHECK(out && n == first_len[j] && memcmp(out, first[j], n) == 0,
          "output %u after the refusals differs from T = 5's", (unsigned)j);
  }
  /* The output query: room for fewer sizes than the rank (2: [1, 20]). */
  int32_t sizes[ETCH_MAX_DIMS] = {-7, -7};
  size_t dim = 99;
  CHECK_STATUS(etch_method_output_sizes(&method, 0, sizes, 1, &dim), ETCH_INVALID_ARGUMENT);
  CHECK(dim == 99 && sizes[0] == -7, "written on refusal: dim %u sizes[0] %d", (unsigned)dim,
        (int)sizes[0]);
  CHECK_STATUS(etch_method_output_sizes(&method, 0, sizes, 2, &dim), ETCH_OK);
  CHECK(dim == 2 && sizes[0] == 1 && sizes[1] == pm->steps[k5].outputs[0].sizes[1],
        "rank %u [%d, %d]", (unsigned)dim, (int)sizes[0], (int)sizes[1]);
  CHECK_STATUS(etch_method_output_sizes(&method, 9, sizes, 2, &dim), ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_method_output_sizes(&method, 0, NULL, 2, &dim), ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_method_output_sizes(&method, 0, sizes, 2, NULL), ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_method_output_sizes(&method, 0, (int32_t *)arena[0], 2, &dim),
               ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_method_output_sizes(&method, 0, sizes, 2, (size_t *)(void *)&method),
               ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_method_output_sizes(&method, 0, sizes, 4, (size_t *)(void *)(sizes + 2)),
               ETCH_INVALID_ARGUMENT);
  static etch_method_t zero;
  CHECK_STATUS(etch_method_output_sizes(&zero, 0, sizes, 2, &dim), ETCH_INVALID_STATE);
  CHECK_STATUS(etch_method_set_input_sized(&zero, 0, t5->sizes, 3, t5->data, t5->len),
               ETCH_INVALID_STATE);
  CHECK_STATUS(etch_method_output_sizes(NULL, 0, sizes, 2, &dim), ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_method_set_input_sized(NULL, 0, t5->sizes, 3, t5->data, t5->len),
               ETCH_INVALID_ARGUMENT);
  /* Both calls from inside the running method: busy, refused. */
  static uint32_t prof[4096];
  etch_method_meta_t meta;
  CHECK_STATUS(etch_method_meta(&prog, pm->name, &meta), ETCH_OK);
  busy_input = &pm->steps[0].inputs[0];
  busy_calls = busy_wrong = 0;
  CHECK_STATUS(etch_method_execute_profiled(&method, busy_cycles, prof, meta.num_instructions),
               ETCH_OK);
  CHECK(busy_calls > 0 && busy_wrong == 0, "%u of %u re-entrant calls not refused", busy_wrong,
        busy_calls);
  /* Still T = 5 (the callback's T = 32 was refused). */
  CHECK_STATUS(etch_method_output_sizes(&method, 0, sizes, ETCH_MAX_DIMS, &dim), ETCH_OK);
  CHECK(dim == 2 && sizes[1] == pm->steps[k5].outputs[0].sizes[1], "after re-entry [%d, %d]",
        (int)sizes[0], (int)sizes[1]);
  /* T = 32, 5, 17, 1 in a row on the same method (the steps), then T = 1
   * first after a reload: sizes only ever come from the last call. */
  for (size_t k = 0; k < pm->num_steps; k++) CHECK(run_step(p, pm, k, 0) == 0, "step %u", (unsigned)k);
  CHECK_STATUS(etch_method_unload(&method), ETCH_OK);
  if (!load(p, pm->name)) return;
  CHECK(run_step(p, pm, pm->num_steps - 1, 0) == 0, "T = 1 from a fresh load");
  CHECK_STATUS(etch_method_unload(&method), ETCH_OK);
  printf("ok   %-22s refusals: T = 33, rank 2, negative, bytes, 17 dims, index, NULL, overlaps, "
         "busy; unchanged after\n", p->name);
}

/* A static program takes its own sizes through the sized setter, and
 * only those. */
static void test_static(const prog_t *p) {
  snprintf(ctx, sizeof ctx, "%s static", p->name);
  const prog_method_t *pm = &p->methods[0];
  CHECK_STATUS(etch_program_load(&prog, p->pte, p->pte_len, true), ETCH_OK);
  if (!load(p, pm->name)) return;
  const prog_tensor_t *t = &pm->steps[0].inputs[0];
  int32_t other[ETCH_MAX_DIMS];
  memcpy(other, t->sizes, sizeof other);
  size_t d = t->dim - 1;
  other[d] = t->sizes[d] - 1;
  size_t smaller = t->len / (size_t)t->sizes[d] * (size_t)other[d];
  CHECK_REFUSED(&method, etch_method_set_input_sized(&method, 0, other, t->dim, t->data, smaller),
                ETCH_INVALID_ARGUMENT, 0);
  CHECK(run_step(p, pm, 0, 0) == 0, "own sizes");
  CHECK_STATUS(etch_method_unload(&method), ETCH_OK);
  printf("ok   %-22s static input: its own sizes run, [.., %d] refused\n", p->name, (int)other[d]);
}

#ifdef ETCH_SEMIHOSTING
/* Bare metal: end QEMU through semihosting with the result as exit status
 * (ApplicationExit = 0, RunTimeError = 1), as harness.c does. */
static void semihosting_exit(int ok) {
  register int r0 __asm__("r0") = 0x18; /* SYS_EXIT */
  register int r1 __asm__("r1") = ok ? 0x20026 : 0x20023;
  __asm__ volatile("bkpt 0xab" : : "r"(r0), "r"(r1) : "memory");
  for (;;) {
  }
}
#endif

int main(void) {
  for (size_t i = 0; i < num_programs; i++) test_program(&programs[i]);
  for (size_t i = 0; i < num_programs; i++) {
    if (strncmp(programs[i].name, "seq_dyn_", 8) == 0) test_dynamic(&programs[i]);
    if (strcmp(programs[i].name, "running_sum_f32") == 0) test_static(&programs[i]);
  }
  printf("%d passed, %d failed\n", passed, failed);
#ifdef ETCH_SEMIHOSTING
  semihosting_exit(failed == 0);
#endif
  return failed != 0;
}
