/*
 * Kernels written in C for an operator etch does not ship: the program
 * tests/custom/custom_softsign.pte calls etch_demo::scaled_softsign.out
 * (defined with torch.library, tools/export/custom_op.py). Registered with
 * etch_register_kernel into the registry's free slots, the kernel runs the
 * program and matches the operator's Python definition byte for byte.
 * Also: a model whose operator is not registered fails with
 * ETCH_OPERATOR_MISSING naming it; duplicate and over-capacity registrations
 * give ExecuTorch's codes (0x16, 0x15); a bad schema is refused.
 *
 * Build with -DWRONG_SCHEMA to register the operator with `int s` instead of
 * `float s`: loading then fails with ETCH_INVALID_PROGRAM (the registered
 * kernel's schema is checked at load like a built-in one's).
 * The library must have at least 3 free registry slots
 * (ETCH_KERNEL_REGISTRY_SIZE). Prints "N passed, M failed".
 */
#include "etch.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

extern const uint8_t custom_pte[];
extern const size_t custom_pte_len;
extern const uint8_t custom_input[];
extern const size_t custom_input_len;
extern const uint8_t custom_output[];
extern const size_t custom_output_len;

static int calls;

/* Set while a run should call back into its own method from the kernel
 * (re-entry): every such call must be refused as busy and change nothing. */
static etch_method_t *reenter;
static etch_program_t prog;
static int reentrant_calls, reentrant_wrong;
static uint8_t other_state[64];

static void call_running_method(etch_kernel_context_t *ctx) {
  const void *out = NULL;
  size_t n = 0;
  etch_error_t err;
  uint32_t prof[8];
  float in[4] = {0};
  void *planned[1] = {NULL};
  size_t lens[1] = {0};
  etch_status_t got[] = {
      etch_method_execute(reenter),
      etch_method_output(reenter, 0, &out, &n),
      etch_method_set_input(reenter, 0, in, sizeof in),
      etch_method_error(reenter, &err),
      etch_method_set_instruction_limit(reenter, 1),
      etch_method_execute_profiled(reenter, NULL, prof, 8),
      etch_method_instruction_operator(reenter, 0, (const char **)&out, &n),
      etch_method_output_int(reenter, 0, (int64_t *)(void *)prof),
      etch_method_load(reenter, &prog, "forward", other_state, sizeof other_state, planned, lens, 0),
      etch_method_unload(reenter),
  };
  for (size_t i = 0; i < sizeof got / sizeof got[0]; i++) {
    reentrant_calls++;
    if (got[i] != ETCH_INVALID_STATE) {
      reentrant_wrong++;
      printf("FAIL re-entrant call %zu from the kernel gave 0x%02x %s\n", i, (unsigned)got[i],
             etch_status_str(got[i]));
    }
  }
  /* The kernel's own accessors refuse out-pointers into its context. */
  size_t nargs = 0;
  if (etch_kernel_num_args(ctx, (size_t *)(void *)ctx) != ETCH_INVALID_ARGUMENT ||
      etch_kernel_num_args(ctx, &nargs) != ETCH_OK || nargs != 4) {
    reentrant_wrong++;
    printf("FAIL etch_kernel_num_args with an out-pointer into its context\n");
  }
}

/* (x / (1 + |x|)) * s in float, as the operator's definition. */
static etch_status_t scaled_softsign(etch_kernel_context_t *ctx) {
  size_t n = 0;
  double s = 0;
  const void *x_data = NULL;
  void *out_data = NULL;
  etch_tensor_info_t x, out;
  etch_status_t st;
  calls++;
  if (reenter) call_running_method(ctx);
  if ((st = etch_kernel_num_args(ctx, &n)) != ETCH_OK) return st;
  if (n != 4) return ETCH_INVALID_ARGUMENT;
  if ((st = etch_kernel_arg_double(ctx, 1, &s)) != ETCH_OK) return st;
  if ((st = etch_kernel_input(ctx, 0, &x_data, &x)) != ETCH_OK) return st;
  if ((st = etch_kernel_output(ctx, 2, &out_data, &out)) != ETCH_OK) return st;
  if (reenter) {
    /* `info` over the data it describes, or `data` over `info`: refused. */
    void *d = NULL;
    if (etch_kernel_output(ctx, 2, &d, (etch_tensor_info_t *)out_data) != ETCH_INVALID_ARGUMENT ||
        etch_kernel_input(ctx, 0, (const void **)(void *)&x, &x) != ETCH_INVALID_ARGUMENT) {
      reentrant_wrong++;
      printf("FAIL etch_kernel_output/input with overlapping out-pointers\n");
    }
  }
  if (x.dtype != ETCH_DTYPE_FLOAT || out.dtype != ETCH_DTYPE_FLOAT || x.nbytes != out.nbytes)
    return ETCH_INVALID_ARGUMENT;
  const float *xs = (const float *)x_data;
  float *o = (float *)out_data;
  float sf = (float)s;
  for (size_t i = 0; i < x.nbytes / sizeof(float); i++) {
    float v = xs[i];
    float q = v / (1.0f + fabsf(v));
    o[i] = q * sf;
  }
  return ETCH_OK;
}

static etch_status_t never_called(etch_kernel_context_t *ctx) {
  (void)ctx;
  return ETCH_INTERNAL;
}

static etch_method_t method;
static uint8_t state[8192];
static _Alignas(16) uint8_t arena[16384];

static etch_status_t load(void) {
  etch_method_meta_t meta;
  etch_status_t st = etch_method_meta(&prog, "forward", &meta);
  if (st != ETCH_OK) return st;
  void *planned[1] = {arena};
  size_t lens[1] = {sizeof arena};
  return etch_method_load(&method, &prog, "forward", state, sizeof state, planned, lens,
                          meta.num_planned_buffers);
}

int main(void) {
  const char *schema =
      "etch_demo::scaled_softsign.out(Tensor x, float s, *, Tensor(a!) out) -> Tensor(a!)";
  size_t builtin = etch_kernel_count();
  size_t free_slots = etch_kernel_registry_capacity() - builtin;
  CHECK(free_slots >= 3, "free registry slots %zu", free_slots);
  CHECK_STATUS(etch_program_load(&prog, custom_pte, custom_pte_len, true), ETCH_OK);

  /* Not registered: OperatorMissing, and the loader names the operator. */
  CHECK_STATUS(load(), ETCH_OPERATOR_MISSING);
  {
    etch_error_t err;
    CHECK_STATUS(etch_method_error(&method, &err), ETCH_OK);
    CHECK(err.status == ETCH_OPERATOR_MISSING && err.at == 1, "missing: at %u", (unsigned)err.at);
  }

  /* Refused registrations leave the registry unchanged. */
  CHECK_STATUS(etch_register_kernel(NULL, scaled_softsign), ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_register_kernel(schema, NULL), ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_register_kernel("etch_demo::w(Widget x) -> ()", never_called),
               ETCH_INVALID_ARGUMENT);
  CHECK_STATUS(etch_register_kernel("etch_demo::w(Tensor x", never_called), ETCH_INVALID_ARGUMENT);
  /* Malformed schemas ExecuTorch's grammar refuses (once accepted);
   * the table of rust/etch-runtime/src/signature.rs has more. */
  {
    static const char *const bad[] = {
        "::(Tensor x) -> Tensor",
        "etch_demo::w(Tensor x) ->",
        "etch_demo::w(Tensor x)",
        "etch_demo::w(Tensor x) -> Tensor out trailing",
        "etch_demo::w(Tensor x)) -> Tensor",
        "etch_demo::w((Tensor x) -> Tensor",
        "etch_demo::w(Tensor x, Tensor x) -> Tensor",
        "etch_demo::w(Tensor x, *, Tensor(a!) x) -> Tensor(a!)",
        "etch_demo::w(Tensor x,) -> Tensor",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
      etch_status_t st = etch_register_kernel(bad[i], never_called);
      CHECK(st == ETCH_INVALID_ARGUMENT, "schema \"%s\": got 0x%02x %s", bad[i], (unsigned)st,
            etch_status_str(st));
    }
  }
  CHECK(etch_kernel_count() == builtin, "count");

#ifdef WRONG_SCHEMA
  CHECK_STATUS(etch_register_kernel("etch_demo::scaled_softsign.out(Tensor x, int s, *, "
                                    "Tensor(a!) out) -> Tensor(a!)",
                                    scaled_softsign),
               ETCH_OK);
  CHECK_STATUS(load(), ETCH_INVALID_PROGRAM);
  CHECK(calls == 0, "calls %d", calls);
#else
  CHECK_STATUS(etch_register_kernel(schema, scaled_softsign), ETCH_OK);
  {
    const char *name = NULL;
    size_t len = 0;
    CHECK_STATUS(etch_kernel_name(builtin, &name, &len), ETCH_OK);
    CHECK(name && len == strlen("etch_demo::scaled_softsign.out") &&
              memcmp(name, "etch_demo::scaled_softsign.out", len) == 0,
          "registered name");
  }
  /* Runs, bit-exact with the operator's definition. */
  CHECK_STATUS(load(), ETCH_OK);
  CHECK_STATUS(etch_method_set_input(&method, 0, custom_input, custom_input_len), ETCH_OK);
  CHECK_STATUS(etch_method_execute(&method), ETCH_OK);
  {
    const void *out = NULL;
    size_t out_len = 0;
    CHECK_STATUS(etch_method_output(&method, 0, &out, &out_len), ETCH_OK);
    CHECK(out_len == custom_output_len && memcmp(out, custom_output, out_len) == 0,
          "output differs from the reference (%zu bytes)", out_len);
  }
  CHECK(calls == 1, "calls %d", calls);

  /* The same operator again (C or built-in): RegistrationAlreadyRegistered. */
  CHECK_STATUS(etch_register_kernel(schema, never_called), ETCH_REGISTRATION_ALREADY_REGISTERED);
  CHECK(ETCH_REGISTRATION_ALREADY_REGISTERED == 0x16 &&
            ETCH_REGISTRATION_EXCEEDING_MAX_KERNELS == 0x15,
        "codes");
  /* Fill the free slots, then one more: RegistrationExceedingMaxKernels. */
  {
    static char names[64][64];
    /* etch_kernel_count() counts the compiled-in kernels only. */
    size_t left = free_slots - 1;
    for (size_t i = 0; i < left && i < 64; i++) {
      snprintf(names[i], sizeof names[i], "etch_demo::filler_%zu(Tensor x) -> Tensor", i);
      CHECK_STATUS(etch_register_kernel(names[i], never_called), ETCH_OK);
    }
    CHECK_STATUS(etch_register_kernel("etch_demo::one_too_many(Tensor x) -> Tensor", never_called),
                 ETCH_REGISTRATION_EXCEEDING_MAX_KERNELS);
    CHECK(etch_kernel_count() == builtin, "count");
  }
  /* The method still runs. */
  CHECK_STATUS(etch_method_execute(&method), ETCH_OK);
  CHECK(calls == 2, "calls %d", calls);
  /* The kernel calls back into its running method: every call refused as
   * busy, the run completes, the output is still the reference's, and the
   * method is still loaded (once the kernel could unload it, or recurse
   * until the stack overflowed). */
  reenter = &method;
  CHECK_STATUS(etch_method_set_input(&method, 0, custom_input, custom_input_len), ETCH_OK);
  CHECK_STATUS(etch_method_execute(&method), ETCH_OK);
  reenter = NULL;
  CHECK(calls == 3, "calls %d", calls);
  CHECK(reentrant_calls == 10 && reentrant_wrong == 0, "%d of %d re-entrant calls wrong",
        reentrant_wrong, reentrant_calls);
  {
    const void *out = NULL;
    size_t out_len = 0;
    etch_error_t err;
    CHECK_STATUS(etch_method_output(&method, 0, &out, &out_len), ETCH_OK);
    CHECK(out_len == custom_output_len && memcmp(out, custom_output, out_len) == 0,
          "output after re-entry differs");
    CHECK_STATUS(etch_method_error(&method, &err), ETCH_OK);
    CHECK(err.status == ETCH_OK, "recorded 0x%02x", (unsigned)err.status);
    CHECK_STATUS(etch_method_execute(&method), ETCH_OK);
    CHECK_STATUS(etch_method_unload(&method), ETCH_OK);
  }
#endif
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
