/*
 * Random call sequences over the custom-kernel path (etch_register_kernel):
 * registrations of valid, malformed and mutated schemas; the program of
 * tests/custom (etch_demo::scaled_softsign.out) loaded, fed, executed, read
 * and unloaded in random order; and, in each run, a C kernel that behaves
 * in a random way: correctly, returning an error code, calling back into
 * its running method, asking the accessors for out-of-range or mistyped
 * arguments, passing out-pointers over the context or the tensors they
 * describe, or writing only part of its output.
 *
 * Oracles (each failure printed and counted; the exit status is nonzero):
 * - a correct run after a correct input gives the reference bytes;
 * - a kernel's error code comes back from etch_method_execute exactly
 *   (unknown codes as ETCH_INTERNAL), and the method stays usable;
 * - every call back into the running method is ETCH_INVALID_STATE;
 * - out-of-range indices, mistyped accessors and overlapping out-pointers
 *   are never ETCH_OK;
 * - a registration gives one of ExecuTorch's codes and never takes a slot
 *   unless it is ETCH_OK; a malformed schema never registers.
 * Built with clang's ASan/UBSan (tools/ci/c-api.sh): any memory error ends
 * the run. The library needs at least 2 free registry slots.
 *
 *   fuzz_kernels SEQUENCES [SEED]   prints "N sequences, ... 0 failed"
 */
#include "etch.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const uint8_t custom_pte[];
extern const size_t custom_pte_len;
extern const uint8_t custom_input[];
extern const size_t custom_input_len;
extern const uint8_t custom_output[];
extern const size_t custom_output_len;

static uint64_t rng;
static uint32_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint32_t)(rng >> 16);
}

static long failed, reentrant, refused_accessors, kernel_errors, registered, refused_schemas, runs_ok;
#define FAIL(...)                                         \
  do {                                                    \
    failed++;                                             \
    if (failed < 20) {                                    \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);         \
      printf(__VA_ARGS__);                                \
      printf("\n");                                       \
    }                                                     \
  } while (0)

static etch_program_t prog;
static etch_method_t method;
static int loaded;
static uint8_t state[8192];
static _Alignas(16) uint8_t arena[16384];
static uint8_t other_state[64];

/* What the kernel does in the current run. */
enum mode { CORRECT, ERROR_CODE, REENTER, BAD_ACCESSORS, OVERLAP, PARTIAL, MODES };
static enum mode mode;
static etch_status_t error_code;

static void reenter(void) {
  const void *out = NULL;
  size_t n = 0;
  etch_error_t err;
  uint32_t prof[8];
  float in[4] = {0};
  void *planned[1] = {NULL};
  size_t lens[1] = {0};
  switch (next() % 9) {
  case 0: n = etch_method_execute(&method); break;
  case 1: n = etch_method_output(&method, 0, &out, &n); break;
  case 2: n = etch_method_set_input(&method, 0, in, sizeof in); break;
  case 3: n = etch_method_error(&method, &err); break;
  case 4: n = etch_method_set_instruction_limit(&method, next()); break;
  case 5: n = etch_method_execute_profiled(&method, NULL, prof, 8); break;
  case 6: n = etch_method_output_int(&method, 0, (int64_t *)(void *)prof); break;
  case 7: n = etch_method_load(&method, &prog, "forward", other_state, sizeof other_state, planned, lens, 0); break;
  default: n = etch_method_unload(&method); break;
  }
  reentrant++;
  if (n != ETCH_INVALID_STATE) FAIL("re-entrant call gave 0x%02zx", n);
}

static void bad_accessors(etch_kernel_context_t *ctx) {
  size_t i = (next() & 1) ? 4 + next() % 1000 : SIZE_MAX - next() % 4;
  int64_t v = 0;
  double d = 0;
  bool b = false;
  const void *data = NULL;
  void *wdata = NULL;
  etch_tensor_info_t info;
  etch_status_t s;
  switch (next() % 8) {
  case 0: s = etch_kernel_arg_int(ctx, i, &v); break;
  case 1: s = etch_kernel_arg_double(ctx, i, &d); break;
  case 2: s = etch_kernel_arg_bool(ctx, i, &b); break;
  case 3: s = etch_kernel_input(ctx, i, &data, &info); break;
  case 4: s = etch_kernel_output(ctx, i, &wdata, &info); break;
  case 5: s = etch_kernel_arg_int(ctx, 0, &v); break;       /* a tensor as an int */
  case 6: s = etch_kernel_arg_bool(ctx, 2, &b); break;      /* the out tensor as a bool */
  default: s = etch_kernel_input(ctx, 1, &data, &info); break; /* the float as a tensor */
  }
  refused_accessors++;
  if (s == ETCH_OK) FAIL("bad accessor (index %zu) gave ETCH_OK", i);
}

static void overlapping(etch_kernel_context_t *ctx, void *out_data, const void *x_data) {
  etch_status_t s;
  void *d = NULL;
  const void *c = NULL;
  etch_tensor_info_t info;
  switch (next() % 5) {
  case 0: s = etch_kernel_num_args(ctx, (size_t *)(void *)ctx); break;
  case 1: s = etch_kernel_output(ctx, 2, &d, (etch_tensor_info_t *)out_data); break;
  case 2: s = etch_kernel_input(ctx, 0, (const void **)(void *)&info, &info); break;
  case 3: s = etch_kernel_input(ctx, 0, &c, (etch_tensor_info_t *)(void *)((uint8_t *)ctx + 1)); break;
  default: s = etch_kernel_arg_double(ctx, 1, (double *)(void *)((uint8_t *)ctx + (next() % 8))); break;
  }
  (void)x_data;
  refused_accessors++;
  if (s != ETCH_INVALID_ARGUMENT) FAIL("overlapping out-pointer gave 0x%02x", (unsigned)s);
}

static etch_status_t softsign(etch_kernel_context_t *ctx) {
  size_t n = 0;
  double s = 0;
  const void *x_data = NULL;
  void *out_data = NULL;
  etch_tensor_info_t x, out;
  etch_status_t st;
  if (mode == ERROR_CODE) return error_code;
  if (mode == REENTER)
    for (int k = next() % 4; k >= 0; k--) reenter();
  if (mode == BAD_ACCESSORS)
    for (int k = next() % 4; k >= 0; k--) bad_accessors(ctx);
  if ((st = etch_kernel_num_args(ctx, &n)) != ETCH_OK) return st;
  if (n != 4) return ETCH_INVALID_ARGUMENT;
  if ((st = etch_kernel_arg_double(ctx, 1, &s)) != ETCH_OK) return st;
  if ((st = etch_kernel_input(ctx, 0, &x_data, &x)) != ETCH_OK) return st;
  if ((st = etch_kernel_output(ctx, 2, &out_data, &out)) != ETCH_OK) return st;
  if (mode == OVERLAP)
    for (int k = next() % 4; k >= 0; k--) overlapping(ctx, out_data, x_data);
  if (x.dtype != ETCH_DTYPE_FLOAT || out.dtype != ETCH_DTYPE_FLOAT || x.nbytes != out.nbytes)
    return ETCH_INVALID_ARGUMENT;
  size_t count = x.nbytes / sizeof(float);
  if (mode == PARTIAL) count = count ? next() % count : 0;
  const float *xs = (const float *)x_data;
  float *o = (float *)out_data;
  for (size_t i = 0; i < count; i++) o[i] = xs[i] / (1.0f + fabsf(xs[i])) * (float)s;
  return ETCH_OK;
}

static etch_status_t other_kernel(etch_kernel_context_t *ctx) {
  (void)ctx;
  return ETCH_INTERNAL;
}

/* Schemas: valid ones (new operators: they take slots while any are
 * free), malformed ones, and random mutations of both. The registry keeps
 * the pointers: every string lives in `pool` for the whole process. */
static const char *const schemas[] = {
    "etch_fz::a(Tensor x) -> Tensor",
    "etch_fz::b.out(Tensor x, float s, *, Tensor(a!) out) -> Tensor(a!)",
    "etch_fz::c(Tensor x, int[] dims, bool keep=False) -> Tensor",
    "etch_fz::d(Tensor? x, Scalar s, ScalarType? t=None) -> (Tensor, Tensor)",
    "etch_fz::e(Tensor[] xs, int dim=0) -> Tensor",
    "etch_fz::f(SymInt n, float? f=None, str mode=\"x\") -> Tensor",
    "etch_demo::scaled_softsign.out(Tensor x, float s, *, Tensor(a!) out) -> Tensor(a!)",
    "::(Tensor x) -> Tensor",
    "etch_fz::g(Tensor x) ->",
    "etch_fz::g(Tensor x)",
    "etch_fz::g(Tensor x) -> Tensor out trailing",
    "etch_fz::g(Tensor x)) -> Tensor",
    "etch_fz::g((Tensor x) -> Tensor",
    "etch_fz::g(Tensor x, Tensor x) -> Tensor",
    "etch_fz::g(Widget x) -> ()",
    "etch_fz::g(Tensor x,) -> Tensor",
    "",
};
#define NSCHEMAS (sizeof schemas / sizeof schemas[0])
static char pool[4096][160];
static size_t pooled;

static void register_random(size_t free_slots) {
  if (pooled >= sizeof pool / sizeof pool[0]) return;
  char *s = pool[pooled++];
  snprintf(s, sizeof pool[0], "%s", schemas[next() % NSCHEMAS]);
  size_t len = strlen(s);
  int malformed_base = 0;
  for (size_t k = 7; k < NSCHEMAS; k++)
    if (strcmp(s, schemas[k]) == 0) malformed_base = 1;
  switch (next() % 4) {
  case 0: break;
  case 1: if (len) s[next() % len] = (char)(32 + next() % 95); break; /* one character */
  case 2: if (len) s[next() % len] = '\0'; break;                    /* truncated */
  default: { /* a unique name (a valid schema then takes a slot) */
    char tail[160];
    const char *paren = strchr(s, '(');
    if (paren && strncmp(s, "etch_fz::", 9) == 0) {
      snprintf(tail, sizeof tail, "%s", paren);
      snprintf(s, sizeof pool[0], "etch_fz::u%zu%s", pooled, tail);
    }
  }
  }
  size_t before = etch_kernel_count();
  etch_status_t st = etch_register_kernel(s, (next() & 1) ? other_kernel : softsign);
  if (st == ETCH_OK) {
    registered++;
    if (malformed_base && strcmp(s, schemas[0]) != 0) {
      /* A mutation could have repaired it; only the unmutated malformed
       * strings must never register. */
      for (size_t k = 7; k < NSCHEMAS; k++)
        if (strcmp(s, schemas[k]) == 0) FAIL("malformed schema \"%s\" registered", s);
    }
  } else if (st == ETCH_INVALID_ARGUMENT) {
    refused_schemas++;
  } else if (st != ETCH_REGISTRATION_ALREADY_REGISTERED &&
             st != ETCH_REGISTRATION_EXCEEDING_MAX_KERNELS) {
    FAIL("registration of \"%s\" gave 0x%02x", s, (unsigned)st);
  }
  if (etch_kernel_count() != before) FAIL("etch_kernel_count changed");
  (void)free_slots;
}

static etch_status_t load(int short_state) {
  etch_method_meta_t meta;
  etch_status_t st = etch_method_meta(&prog, "forward", &meta);
  if (st != ETCH_OK) return st;
  void *planned[1] = {arena};
  size_t lens[1] = {sizeof arena};
  size_t n = short_state ? next() % sizeof state : sizeof state;
  return etch_method_load(&method, &prog, "forward", state, n, planned, lens, meta.num_planned_buffers);
}

int main(int argc, char **argv) {
  long sequences = argc > 1 ? atol(argv[1]) : 10000;
  rng = argc > 2 ? strtoull(argv[2], NULL, 0) : 0x9e3779b97f4a7c15ull;
  if (!rng) rng = 1;
  size_t free_slots = etch_kernel_registry_capacity() - etch_kernel_count();
  if (free_slots < 2) {
    printf("FAIL: %zu free registry slots (need 2)\n", free_slots);
    return 1;
  }
  if (etch_program_load(&prog, custom_pte, custom_pte_len, true) != ETCH_OK) {
    printf("FAIL: program load\n");
    return 1;
  }
  if (etch_register_kernel("etch_demo::scaled_softsign.out(Tensor x, float s, *, Tensor(a!) out) -> "
                           "Tensor(a!)",
                           softsign) != ETCH_OK) {
    printf("FAIL: registration of the program's operator\n");
    return 1;
  }
  long steps = 0;
  for (long q = 0; q < sequences; q++) {
    int input_ok = 0;
    int len = 1 + next() % 12;
    for (int k = 0; k < len; k++, steps++) {
      etch_status_t st;
      switch (next() % 8) {
      case 0: register_random(free_slots); break;
      case 1:
        if (loaded) etch_method_unload(&method);
        st = load(next() % 4 == 0);
        loaded = st == ETCH_OK;
        input_ok = 0;
        break;
      case 2: {
        size_t n = (next() % 3) ? custom_input_len : next() % (2 * custom_input_len + 1);
        static uint8_t buf[4096];
        memcpy(buf, custom_input, custom_input_len);
        st = etch_method_set_input(&method, 0, buf, n);
        if (loaded && n == custom_input_len && st != ETCH_OK) FAIL("set_input gave 0x%02x", (unsigned)st);
        if (st == ETCH_OK) input_ok = 1;
        break;
      }
      case 3: case 4: case 5: {
        if (loaded && next() % 4 && etch_method_set_input(&method, 0, custom_input, custom_input_len) == ETCH_OK)
          input_ok = 1;
        mode = (enum mode)(next() % MODES);
        error_code = (etch_status_t)(1 + next() % 0x40);
        st = etch_method_execute(&method);
        if (!loaded) {
          if (st == ETCH_OK) FAIL("execute of an unloaded method gave ETCH_OK");
          break;
        }
        if (mode == ERROR_CODE && input_ok) {
          kernel_errors++;
          /* Unknown codes come back as ETCH_INTERNAL. */
          etch_status_t want = strcmp(etch_status_str(error_code), "Unknown") ? error_code : ETCH_INTERNAL;
          if (st != want)
            FAIL("kernel error 0x%02x came back as 0x%02x", (unsigned)error_code, (unsigned)st);
        } else if (input_ok && st != ETCH_OK) {
          FAIL("execute (mode %d) gave 0x%02x", (int)mode, (unsigned)st);
        }
        if (st == ETCH_OK && input_ok && mode != PARTIAL) {
          const void *out = NULL;
          size_t n = 0;
          if (etch_method_output(&method, 0, &out, &n) != ETCH_OK || n != custom_output_len ||
              memcmp(out, custom_output, n) != 0)
            FAIL("output after a mode-%d run differs from the reference", (int)mode);
          else
            runs_ok++;
        }
        /* The next run rewrites the input (the plan may reuse its bytes). */
        input_ok = 0;
        break;
      }
      case 6: {
        const void *out = NULL;
        size_t n = 0;
        st = etch_method_output(&method, next() % 3, &out, &n);
        if (!loaded && st == ETCH_OK) FAIL("output of an unloaded method gave ETCH_OK");
        break;
      }
      default:
        st = etch_method_unload(&method);
        if (loaded && st != ETCH_OK) FAIL("unload gave 0x%02x", (unsigned)st);
        loaded = 0;
        break;
      }
    }
  }
  printf("%ld sequences, %ld calls: %ld correct runs bit-exact, %ld kernel errors returned, %ld re-entrant calls "
         "refused, %ld bad accessor calls refused, %ld registrations, %ld schemas refused; %ld failed\n",
         sequences, steps, runs_ok, kernel_errors, reentrant, refused_accessors, registered, refused_schemas, failed);
  return failed != 0;
}
