/*
 * C-API harness: drives include/etch.h the way firmware does (static
 * buffers sized from etch_method_meta, no heap) on the fixtures embedded by
 * gen_fixtures.py, and compares against what ExecuTorch says about them:
 * outputs byte for byte, metadata from its deserializer, exact status codes
 * and error detail for the failure paths.
 *
 * Build-time knobs (-D): EXPECT_KERNELS, EXPECT_CAPACITY (registry),
 * EXPECT_FEATURES (etch_build_features()),
 * EXPECT_LOG (library built with the `log` feature), REDUCED (library with
 * only the first fixture's operators: the others must fail to load with
 * ETCH_OPERATOR_MISSING, at = EXPECT_MISSING), ETCH_SEMIHOSTING (bare metal),
 * SWEEP (corrupt every byte of the first fixture in turn).
 * Prints "N passed, M failed"; the exit status is non-zero on failure.
 */
#include "etch.h"
#include "fixture_sizes.h"
#include "fixtures.h"

#include <stdio.h>
#include <string.h>

#define CHECK_CTX ctx
#include "check.h"

#ifndef EXPECT_KERNELS
#error "EXPECT_KERNELS: number of kernels the library was built with"
#endif
#ifndef EXPECT_FEATURES
#error "EXPECT_FEATURES: ETCH_FEATURE_* bits the library was built with"
#endif
#ifndef EXPECT_CAPACITY
#define EXPECT_CAPACITY EXPECT_KERNELS
#endif

/* ---- the platform's log hook (the Zephyr glue forwards to LOG_*) ---- */
static int log_calls;
static int log_last_level;
static char log_last[ETCH_LOG_MAX_MESSAGE + 1];

void etch_log_write(int level, const char *msg, size_t len) {
  log_calls++;
  log_last_level = level;
  if (len > ETCH_LOG_MAX_MESSAGE || msg[len] != '\0') {
    failed++;
    printf("FAIL etch_log_write: message of %u bytes not NUL-terminated\n", (unsigned)len);
    return;
  }
  memcpy(log_last, msg, len + 1);
}

/* ---- caller-owned memory, sized for the largest fixture (+ canaries) ---- */
#define ARENA_BYTES (FIXTURE_MAX_PLANNED_BYTES + 64)
#define STATE_BYTES 8192
#define CANARY 0xA5
static uint8_t arena[FIXTURE_MAX_BUFFERS][ARENA_BYTES] __attribute__((aligned(16)));
static uint8_t state[STATE_BYTES];
static uint8_t scratch[FIXTURE_MAX_PTE_BYTES + 16] __attribute__((aligned(16)));
static etch_program_t prog;
static etch_method_t method;
static etch_method_t method_copy;

/* A cycle counter that advances by one per read: each profiled kernel call
 * then measures exactly 1. */
static uint32_t ticks;
static uint32_t fake_cycles(void) { return ticks++; }

static void fill_canary(void) {
  memset(arena, CANARY, sizeof arena);
  memset(state, CANARY, sizeof state);
}

/* Bytes past what was handed to etch must be untouched. */
static int canary_intact(const uint8_t *buf, size_t from, size_t to) {
  for (size_t i = from; i < to; i++)
    if (buf[i] != CANARY) return 0;
  return 1;
}

static etch_error_t method_error(void) {
  etch_error_t e;
  memset(&e, 0, sizeof e);
  etch_method_error(&method, &e);
  return e;
}

/* Loads "forward" with exactly the bytes meta asks for. */
static etch_status_t load_forward(const etch_method_meta_t *meta, const size_t *sizes,
                                  size_t state_shortfall, size_t planned_shortfall) {
  void *planned[ETCH_MAX_PLANNED_BUFFERS];
  size_t lens[ETCH_MAX_PLANNED_BUFFERS];
  for (size_t b = 0; b < meta->num_planned_buffers; b++) {
    planned[b] = arena[b];
    lens[b] = sizes[b] - (b == 0 ? planned_shortfall : 0);
  }
  return etch_method_load(&method, &prog, "forward", state,
                          meta->method_state_bytes - state_shortfall, planned, lens,
                          meta->num_planned_buffers);
}

static void test_generic(void) {
  const char *ctx = "generic";
  CHECK(strcmp(etch_status_str(ETCH_OK), "Ok") == 0, "%s", etch_status_str(ETCH_OK));
  CHECK(strcmp(etch_status_str(0x23), "InvalidProgram") == 0, "%s", etch_status_str(0x23));
  CHECK(strcmp(etch_status_str(ETCH_OPERATOR_MISSING), "OperatorMissing") == 0, "x");
  CHECK(strcmp(etch_status_str(ETCH_MEMORY_ALLOCATION_FAILED), "MemoryAllocationFailed") == 0, "x");
  CHECK(strcmp(etch_status_str(0x999), "Unknown") == 0, "%s", etch_status_str(0x999));
  CHECK(ETCH_INVALID_PROGRAM == 0x23 && ETCH_OPERATOR_MISSING == 0x14 &&
            ETCH_MEMORY_ALLOCATION_FAILED == 0x21 && ETCH_INVALID_ARGUMENT == 0x12,
        "ExecuTorch numbering");
  CHECK(sizeof(etch_program_t) == 8 * ETCH_PROGRAM_WORDS, "%u", (unsigned)sizeof(etch_program_t));
  CHECK(sizeof(etch_method_t) == 8 * ETCH_METHOD_WORDS, "%u", (unsigned)sizeof(etch_method_t));
  CHECK(etch_build_features() == (EXPECT_FEATURES), "features 0x%x, want 0x%x",
        (unsigned)etch_build_features(), (unsigned)(EXPECT_FEATURES));
  CHECK(etch_kernel_count() == EXPECT_KERNELS, "%u", (unsigned)etch_kernel_count());
  CHECK(etch_kernel_registry_capacity() == EXPECT_CAPACITY, "%u",
        (unsigned)etch_kernel_registry_capacity());
  const char *kname = NULL;
  size_t klen = 0;
  CHECK_STATUS(etch_kernel_name(0, &kname, &klen), ETCH_OK);
  CHECK(kname != NULL && klen > 4 && memchr(kname, ':', klen) != NULL, "kernel name");
  CHECK_STATUS(etch_kernel_name(EXPECT_KERNELS, &kname, &klen), ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_kernel_name(0, NULL, &klen), ETCH_INVALID_ARGUMENT);

  /* NULLs and unloaded handles: codes, not crashes. */
  static etch_program_t zero_prog;
  static etch_method_t zero_method;
  etch_method_meta_t meta;
  etch_error_t err;
  size_t n;
  const void *out;
  CHECK_STATUS(etch_program_load(NULL, fixtures[0].pte, fixtures[0].pte_len, true),
               ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_program_num_methods(&zero_prog, &n), ETCH_INVALID_STATE);
  CHECK_STATUS(etch_program_num_methods(NULL, &n), ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_program_error(&zero_prog, &err), ETCH_INVALID_STATE);
  CHECK_STATUS(etch_method_meta(&zero_prog, "forward", &meta), ETCH_INVALID_STATE);
  CHECK_STATUS(etch_method_execute(&zero_method), ETCH_INVALID_STATE);
  CHECK_STATUS(etch_method_execute(NULL), ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_method_set_input(&zero_method, 0, state, 1), ETCH_INVALID_STATE);
  CHECK_STATUS(etch_method_output(&zero_method, 0, &out, &n), ETCH_INVALID_STATE);
  CHECK_STATUS(etch_method_error(&zero_method, &err), ETCH_INVALID_STATE);
  CHECK_STATUS(etch_program_load(&prog, NULL, 100, true), ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_program_error(&prog, &err), ETCH_OK);
  CHECK(err.status == ETCH_INVALID_ARGUMENT, "0x%x", (unsigned)err.status);
}

static void test_fixture(const fixture_t *f, int runnable) {
  char ctx[96];
  snprintf(ctx, sizeof ctx, "%s", f->name);
  etch_error_t err;

  /* Program and its metadata, against ExecuTorch's deserializer. */
  CHECK_STATUS(etch_program_load(&prog, f->pte, f->pte_len, true), ETCH_OK);
  size_t n = 0;
  CHECK_STATUS(etch_program_num_methods(&prog, &n), ETCH_OK);
  CHECK(n == f->num_methods, "%s: %u methods, want %u", ctx, (unsigned)n, (unsigned)f->num_methods);
  for (size_t i = 0; i < n && i < f->num_methods; i++) {
    const char *name = NULL;
    CHECK_STATUS(etch_program_method_name(&prog, i, &name), ETCH_OK);
    CHECK(name && strcmp(name, f->methods[i]) == 0, "%s: method %u is %s, want %s", ctx,
          (unsigned)i, name ? name : "(null)", f->methods[i]);
  }
  const char *name = NULL;
  CHECK_STATUS(etch_program_method_name(&prog, n, &name), ETCH_INVALID_ARGUMENT);
  etch_method_meta_t meta;
  CHECK_STATUS(etch_method_meta(&prog, "no_such_method", &meta), ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_method_meta(&prog, "forward", NULL), ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_method_meta(&prog, NULL, &meta), ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_method_meta(&prog, "forward", &meta), ETCH_OK);
  CHECK(meta.num_inputs == 1 && meta.num_outputs == 1, "%s: %u in %u out", ctx,
        (unsigned)meta.num_inputs, (unsigned)meta.num_outputs);
  CHECK(meta.num_instructions == f->num_instructions, "%s: %u instructions, want %u", ctx,
        (unsigned)meta.num_instructions, (unsigned)f->num_instructions);
  CHECK(meta.num_planned_buffers == f->num_planned, "%s: %u planned buffers, want %u", ctx,
        (unsigned)meta.num_planned_buffers, (unsigned)f->num_planned);
  CHECK(meta.method_state_bytes > 0, "%s: state %u", ctx, (unsigned)meta.method_state_bytes);
  size_t sizes[ETCH_MAX_PLANNED_BUFFERS] = {0};
  for (size_t b = 0; b < f->num_planned; b++) {
    CHECK_STATUS(etch_method_planned_buffer_size(&prog, "forward", b, &sizes[b]), ETCH_OK);
    CHECK(sizes[b] == f->planned[b], "%s: buffer %u is %u B, want %u", ctx, (unsigned)b,
          (unsigned)sizes[b], (unsigned)f->planned[b]);
  }
  size_t extra;
  CHECK_STATUS(etch_method_planned_buffer_size(&prog, "forward", f->num_planned, &extra),
               ETCH_INVALID_ARGUMENT);
  etch_tensor_info_t ti;
  const fixture_tensor_t *want[2] = {&f->in, &f->out};
  size_t want_bytes[2] = {f->input_len, f->output_len};
  for (int io = 0; io < 2; io++) {
    etch_status_t s = io == 0 ? etch_method_input_info(&prog, "forward", 0, &ti)
                              : etch_method_output_info(&prog, "forward", 0, &ti);
    CHECK_STATUS(s, ETCH_OK);
    int same = ti.dtype == want[io]->dtype && ti.dim == want[io]->dim && ti.nbytes == want_bytes[io];
    for (size_t d = 0; d < ti.dim && d < 16; d++)
      same = same && ti.sizes[d] == want[io]->sizes[d] && ti.dim_order[d] == want[io]->dim_order[d];
    CHECK(same && ti.is_memory_planned, "%s: %s info dtype %d dim %u nbytes %u", ctx,
          io ? "output" : "input", (int)ti.dtype, (unsigned)ti.dim, (unsigned)ti.nbytes);
  }
  CHECK_STATUS(etch_method_input_info(&prog, "forward", 1, &ti), ETCH_INVALID_ARGUMENT);

  int fits = meta.method_state_bytes <= STATE_BYTES && meta.num_planned_buffers <= FIXTURE_MAX_BUFFERS;
  for (size_t b = 0; b < f->num_planned; b++) fits = fits && sizes[b] <= ARENA_BYTES - 64;
  CHECK(fits, "%s: harness buffers too small for this fixture", ctx);
  if (!fits) return;

  if (!runnable) {
#ifdef REDUCED
    CHECK_STATUS(load_forward(&meta, sizes, 0, 0), ETCH_OPERATOR_MISSING);
    err = method_error();
    CHECK(err.status == ETCH_OPERATOR_MISSING && err.at == EXPECT_MISSING,
          "%s: at %u, want %u missing operators", ctx, (unsigned)err.at, (unsigned)EXPECT_MISSING);
    CHECK_STATUS(etch_method_execute(&method), ETCH_INVALID_STATE);
#endif
    return;
  }

  /* Short buffers: MemoryAllocationFailed, at = the shortfall, before
   * anything is written. */
  fill_canary();
  CHECK_STATUS(load_forward(&meta, sizes, 1, 0), ETCH_MEMORY_ALLOCATION_FAILED);
  err = method_error();
  CHECK(err.status == ETCH_MEMORY_ALLOCATION_FAILED && err.at == 1, "%s: state short: at %u", ctx,
        (unsigned)err.at);
  CHECK_STATUS(etch_method_execute(&method), ETCH_INVALID_STATE);
  CHECK_STATUS(load_forward(&meta, sizes, 0, 1), ETCH_MEMORY_ALLOCATION_FAILED);
  err = method_error();
  CHECK(err.at == 1, "%s: planned short: at %u", ctx, (unsigned)err.at);
  CHECK(canary_intact(state, 0, STATE_BYTES) && canary_intact(arena[0], 0, ARENA_BYTES),
        "%s: failed load wrote memory", ctx);
  {
    void *planned[1] = {arena[0]};
    size_t lens[1] = {sizes[0]};
    CHECK_STATUS(etch_method_load(&method, &prog, "forward", state, meta.method_state_bytes,
                                  planned, lens, 0),
                 ETCH_MEMORY_ALLOCATION_FAILED);
    /* Overlapping buffers and misaligned planned memory are refused. */
    CHECK_STATUS(etch_method_load(&method, &prog, "forward", arena[0] + 8, meta.method_state_bytes,
                                  planned, lens, 1),
                 ETCH_INVALID_ARGUMENT);
    planned[0] = arena[0] + 4;
    CHECK_STATUS(etch_method_load(&method, &prog, "forward", state, meta.method_state_bytes,
                                  planned, lens, 1),
                 ETCH_INVALID_ARGUMENT);
    CHECK_STATUS(etch_method_load(&method, &prog, "forward", NULL, meta.method_state_bytes,
                                  planned, lens, 1),
                 ETCH_INVALID_ARGUMENT);
    CHECK_STATUS(etch_method_load(&method, &prog, "forward", state, meta.method_state_bytes,
                                  NULL, lens, 1),
                 ETCH_INVALID_ARGUMENT);
  }

  /* Exact sizes load and run; nothing past them is touched. */
  fill_canary();
  CHECK_STATUS(load_forward(&meta, sizes, 0, 0), ETCH_OK);
  CHECK_STATUS(etch_method_error(&method, &err), ETCH_OK);
  CHECK(err.status == ETCH_OK, "%s", ctx);
  CHECK_STATUS(etch_method_execute(&method), ETCH_INVALID_ARGUMENT); /* input not set */
  err = method_error();
  CHECK(err.at == 0, "%s: input not set: at %u", ctx, (unsigned)err.at);
  CHECK_STATUS(etch_method_set_input(&method, 0, f->input, f->input_len - 1), ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_method_set_input(&method, 1, f->input, f->input_len), ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_method_set_input(&method, 0, NULL, f->input_len), ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_method_set_input(&method, 0, arena[0], f->input_len), ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_method_set_input(&method, 0, f->input, f->input_len), ETCH_OK);
  CHECK_STATUS(etch_method_execute(&method), ETCH_OK);
  const void *out = NULL;
  size_t out_len = 0;
  CHECK_STATUS(etch_method_output(&method, 0, &out, &out_len), ETCH_OK);
  CHECK(out && out_len == f->output_len && memcmp(out, f->output, out_len) == 0,
        "%s: output differs from ExecuTorch's (%u bytes)", ctx, (unsigned)out_len);
  CHECK(canary_intact(state, meta.method_state_bytes, STATE_BYTES), "%s: state overrun", ctx);
  for (size_t b = 0; b < f->num_planned; b++)
    CHECK(canary_intact(arena[b], sizes[b], ARENA_BYTES), "%s: buffer %u overrun", ctx, (unsigned)b);
  CHECK_STATUS(etch_method_output(&method, 1, &out, &out_len), ETCH_INVALID_ARGUMENT);
  int64_t iv;
  CHECK_STATUS(etch_method_output_int(&method, 0, &iv), ETCH_INVALID_TYPE);

  /* Profiling: with a counter that advances once per read, each kernel
   * call measures 1; the operators per instruction must match
   * ExecuTorch's KernelCall counts. */
  static uint32_t prof[256];
  CHECK(meta.num_instructions <= 256, "%s", ctx);
  CHECK_STATUS(etch_method_execute_profiled(&method, fake_cycles, prof, meta.num_instructions - 1),
               ETCH_INVALID_ARGUMENT);
  err = method_error();
  CHECK(err.at == meta.num_instructions, "%s: at %u", ctx, (unsigned)err.at);
  CHECK_STATUS(etch_method_execute_profiled(&method, NULL, prof, meta.num_instructions),
               ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_method_execute_profiled(&method, fake_cycles, (uint32_t *)(void *)arena[0],
                                            meta.num_instructions),
               ETCH_INVALID_ARGUMENT);
  memset(prof, 0xff, sizeof prof);
  /* Inputs must be set before every execute: the memory plan may reuse
   * their bytes for later activations. */
  CHECK_STATUS(etch_method_set_input(&method, 0, f->input, f->input_len), ETCH_OK);
  CHECK_STATUS(etch_method_execute_profiled(&method, fake_cycles, prof, meta.num_instructions),
               ETCH_OK);
  CHECK_STATUS(etch_method_output(&method, 0, &out, &out_len), ETCH_OK);
  CHECK(memcmp(out, f->output, f->output_len) == 0, "%s: profiled output differs", ctx);
  size_t timed = 0, named = 0, matched = 0;
  for (size_t i = 0; i < meta.num_instructions; i++) {
    const char *op;
    size_t len;
    etch_status_t s = etch_method_instruction_operator(&method, i, &op, &len);
    timed += prof[i];
    if (s != ETCH_OK) {
      CHECK(s == ETCH_NOT_FOUND && prof[i] == 0, "%s: instruction %u: 0x%x", ctx, (unsigned)i, (unsigned)s);
      continue;
    }
    named++;
    CHECK(prof[i] == 1, "%s: instruction %u took %u", ctx, (unsigned)i, (unsigned)prof[i]);
    for (size_t o = 0; o < f->num_ops; o++)
      if (strlen(f->ops[o].name) == len && memcmp(f->ops[o].name, op, len) == 0) matched++;
  }
  size_t kernel_calls = 0;
  for (size_t o = 0; o < f->num_ops; o++) kernel_calls += f->ops[o].count;
  CHECK(named == kernel_calls && matched == kernel_calls && timed == kernel_calls,
        "%s: %u named, %u matched, %u timed; ExecuTorch counts %u KernelCalls", ctx,
        (unsigned)named, (unsigned)matched, (unsigned)timed, (unsigned)kernel_calls);
  {
    /* Per-operator counts, as ExecuTorch lists them. */
    int counts_ok = 1;
    for (size_t o = 0; o < f->num_ops; o++) {
      size_t c = 0;
      for (size_t i = 0; i < meta.num_instructions; i++) {
        const char *op;
        size_t len;
        if (etch_method_instruction_operator(&method, i, &op, &len) == ETCH_OK &&
            strlen(f->ops[o].name) == len && memcmp(f->ops[o].name, op, len) == 0)
          c++;
      }
      counts_ok = counts_ok && c == f->ops[o].count;
    }
    CHECK(counts_ok, "%s: per-operator KernelCall counts differ", ctx);
  }
  CHECK_STATUS(etch_method_instruction_operator(&method, meta.num_instructions, &name, &n),
               ETCH_INVALID_ARGUMENT);

  /* A copied handle is refused, the original keeps working. */
  memcpy(&method_copy, &method, sizeof method);
  CHECK_STATUS(etch_method_execute(&method_copy), ETCH_INVALID_STATE);
  CHECK_STATUS(etch_method_output(&method_copy, 0, &out, &out_len), ETCH_INVALID_STATE);
  CHECK_STATUS(etch_method_set_input(&method, 0, f->input, f->input_len), ETCH_OK);
  CHECK_STATUS(etch_method_execute(&method), ETCH_OK);
  CHECK_STATUS(etch_method_output(&method, 0, &out, &out_len), ETCH_OK);
  CHECK(memcmp(out, f->output, f->output_len) == 0, "%s: second run differs", ctx);
  /* The method needs the program bytes, not the etch_program_t. */
  {
    etch_program_t saved = prog;
    memset(&prog, 0, sizeof prog);
    CHECK_STATUS(etch_method_set_input(&method, 0, f->input, f->input_len), ETCH_OK);
    CHECK_STATUS(etch_method_execute(&method), ETCH_OK);
    CHECK_STATUS(etch_method_output(&method, 0, &out, &out_len), ETCH_OK);
    CHECK(memcmp(out, f->output, f->output_len) == 0, "%s: run without the program handle", ctx);
    prog = saved; /* a program handle may be copied */
    CHECK_STATUS(etch_method_meta(&prog, "forward", &meta), ETCH_OK);
  }

  /* Instruction limit: fails at the first instruction past it. */
  if (meta.num_instructions > 1) {
    CHECK_STATUS(etch_method_set_instruction_limit(&method, 1), ETCH_OK);
    CHECK_STATUS(etch_method_execute(&method), ETCH_INVALID_STATE);
    err = method_error();
    CHECK(err.at == 1, "%s: limit at %u", ctx, (unsigned)err.at);
  }

  /* Config methods (int8-I/O exports): scalar outputs, no instructions. */
  for (size_t s = 0; s < f->num_scalars; s++) {
    const fixture_scalar_t *sc = &f->scalars[s];
    snprintf(ctx, sizeof ctx, "%s.%s", f->name, sc->method);
    etch_method_meta_t m2;
    CHECK_STATUS(etch_method_meta(&prog, sc->method, &m2), ETCH_OK);
    CHECK(m2.num_inputs == 0 && m2.num_planned_buffers == 0 && m2.num_instructions == 0,
          "%s: meta", ctx);
    CHECK_STATUS(etch_method_load(&method, &prog, sc->method, state, m2.method_state_bytes, NULL,
                                  NULL, 0),
                 ETCH_OK);
    CHECK_STATUS(etch_method_execute(&method), ETCH_OK);
    if (sc->is_double) {
      double d = 0;
      CHECK_STATUS(etch_method_output_double(&method, 0, &d), ETCH_OK);
      CHECK(d == sc->double_value, "%s: %.17g, want %.17g", ctx, d, sc->double_value);
      CHECK_STATUS(etch_method_output_int(&method, 0, &iv), ETCH_INVALID_TYPE);
    } else {
      iv = 0;
      CHECK_STATUS(etch_method_output_int(&method, 0, &iv), ETCH_OK);
      CHECK(iv == sc->int_value, "%s: %lld, want %lld", ctx, (long long)iv, sc->int_value);
    }
  }
  snprintf(ctx, sizeof ctx, "%s", f->name);

  /* Corrupted and misplaced programs. */
  {
    memcpy(scratch + 16, f->pte, f->pte_len);
    CHECK_STATUS(etch_program_load(&prog, scratch + 1, f->pte_len, true), ETCH_INVALID_ARGUMENT);
    int before = log_calls;
    /* The flatbuffer root offset pointing past the end of the file. */
    memset(scratch + 16, 0xff, 4);
    CHECK_STATUS(etch_program_load(&prog, scratch + 16, f->pte_len, true), ETCH_INVALID_PROGRAM);
    CHECK_STATUS(etch_program_error(&prog, &err), ETCH_OK);
    CHECK(err.status == ETCH_INVALID_PROGRAM, "%s: 0x%x", ctx, (unsigned)err.status);
    CHECK_STATUS(etch_method_meta(&prog, "forward", &meta), ETCH_INVALID_STATE);
#ifdef EXPECT_LOG
    CHECK(log_calls > before && log_last_level == ETCH_LOG_LEVEL_ERROR &&
              strstr(log_last, "program rejected") != NULL,
          "%s: log: %d calls, level %d, \"%s\"", ctx, log_calls - before, log_last_level, log_last);
    CHECK(err.what != NULL && err.what_len > 0, "%s: no error message", ctx);
#else
    CHECK(log_calls == before && err.what == NULL && err.what_len == 0, "%s: logging compiled out",
          ctx);
#endif
    /* Truncated: half the file. */
    memcpy(scratch + 16, f->pte, f->pte_len);
    CHECK_STATUS(etch_program_load(&prog, scratch + 16, f->pte_len / 2, true), ETCH_INVALID_PROGRAM);
    /* Unchanged copy in RAM loads, with and without verification, and the
     * method runs from it as from flash. */
    CHECK_STATUS(etch_program_load(&prog, scratch + 16, f->pte_len, false), ETCH_OK);
    CHECK_STATUS(etch_program_load(&prog, scratch + 16, f->pte_len, true), ETCH_OK);
    CHECK_STATUS(etch_method_meta(&prog, "forward", &meta), ETCH_OK);
    CHECK_STATUS(load_forward(&meta, sizes, 0, 0), ETCH_OK);
    CHECK_STATUS(etch_method_set_input(&method, 0, f->input, f->input_len), ETCH_OK);
    CHECK_STATUS(etch_method_execute(&method), ETCH_OK);
    CHECK_STATUS(etch_method_output(&method, 0, &out, &out_len), ETCH_OK);
    CHECK(out_len == f->output_len && memcmp(out, f->output, out_len) == 0, "%s: RAM copy", ctx);
    /* Program bytes inside a planned buffer: refused. */
    {
      void *planned[1] = {scratch};
      size_t lens[1] = {sizes[0] < sizeof scratch ? sizes[0] : sizeof scratch};
      CHECK_STATUS(etch_method_load(&method, &prog, "forward", state, meta.method_state_bytes,
                                    planned, lens, 1),
                   ETCH_INVALID_ARGUMENT);
    }
  }
}

#ifdef SWEEP
/* Every byte of the program replaced in turn (0xFF, then bit 0 flipped),
 * loaded with and without verification, then taken through the whole API
 * as firmware would: each call must give a status code, never a crash. */
static int known(etch_status_t s) { return strcmp(etch_status_str(s), "Unknown") != 0; }

static void test_sweep(const fixture_t *f) {
  char ctx[64];
  snprintf(ctx, sizeof ctx, "%s sweep", f->name);
  size_t runs = 0, loaded = 0, executed = 0, unknown = 0;
  for (size_t pos = 0; pos < f->pte_len; pos++) {
    for (int variant = 0; variant < 2; variant++) {
      memcpy(scratch, f->pte, f->pte_len);
      scratch[pos] = variant ? (uint8_t)(f->pte[pos] ^ 1) : 0xFF;
      if (scratch[pos] == f->pte[pos]) continue;
      for (int verify = 0; verify < 2; verify++) {
        runs++;
        etch_status_t s = etch_program_load(&prog, scratch, f->pte_len, verify);
        unknown += !known(s);
        if (s != ETCH_OK) continue;
        etch_method_meta_t meta;
        s = etch_method_meta(&prog, "forward", &meta);
        unknown += !known(s);
        if (s != ETCH_OK) continue;
        size_t sizes[ETCH_MAX_PLANNED_BUFFERS];
        int fits = meta.num_planned_buffers <= FIXTURE_MAX_BUFFERS &&
                   meta.method_state_bytes <= STATE_BYTES;
        for (size_t b = 0; fits && b < meta.num_planned_buffers; b++)
          fits = etch_method_planned_buffer_size(&prog, "forward", b, &sizes[b]) == ETCH_OK &&
                 sizes[b] <= ARENA_BYTES;
        if (!fits) continue;
        s = load_forward(&meta, sizes, 0, 0);
        unknown += !known(s);
        if (s != ETCH_OK) continue;
        loaded++;
        etch_tensor_info_t ti;
        if (etch_method_input_info(&prog, "forward", 0, &ti) == ETCH_OK && ti.nbytes <= f->input_len)
          etch_method_set_input(&method, 0, f->input, ti.nbytes);
        s = etch_method_execute(&method);
        unknown += !known(s);
        if (s == ETCH_OK) {
          executed++;
          const void *out;
          size_t n;
          unknown += !known(etch_method_output(&method, 0, &out, &n));
        }
      }
    }
  }
  CHECK(unknown == 0 && runs > 0, "%s: %u runs, %u unknown statuses", ctx, (unsigned)runs,
        (unsigned)unknown);
  printf("%s: %u corrupted loads, %u methods loaded, %u executed, all with status codes\n",
         ctx, (unsigned)runs, (unsigned)loaded, (unsigned)executed);
}
#endif

#ifdef ETCH_SEMIHOSTING
/* Bare metal: end QEMU through semihosting with the result as exit status
 * (ApplicationExit = 0, RunTimeError = 1). */
static void semihosting_exit(int ok) {
  register int r0 __asm__("r0") = 0x18; /* SYS_EXIT */
  register int r1 __asm__("r1") = ok ? 0x20026 : 0x20023;
  __asm__ volatile("bkpt 0xab" : : "r"(r0), "r"(r1) : "memory");
  for (;;) {
  }
}
#endif

int main(void) {
  etch_log_init();
  test_generic();
  for (size_t i = 0; i < num_fixtures; i++) {
#ifdef REDUCED
    test_fixture(&fixtures[i], i == 0);
#else
    test_fixture(&fixtures[i], 1);
#endif
  }
#ifdef SWEEP
  test_sweep(&fixtures[0]);
#endif
  printf("%d passed, %d failed\n", passed, failed);
#ifdef ETCH_SEMIHOSTING
  semihosting_exit(failed == 0);
#endif
  return failed != 0;
}
