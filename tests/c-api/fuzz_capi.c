/*
 * C-API call sequences (issue 13): every byte string is a sequence of etch_*
 * calls on the fixtures (tests/c-api/fixtures.c) with arguments taken from
 * the bytes: right and wrong lengths, dtypes, indices, misaligned and
 * overlapping buffers, handles used before loading, after a failed load,
 * after etch_method_unload, copied, and a program built from the bytes
 * themselves. Every call must return a status, and the sanitizers
 * (AddressSanitizer, UBSan) must stay quiet.
 *
 * libFuzzer:  clang -fsanitize=fuzzer,address,undefined ... fuzz_capi.c
 * standalone: cc -DFUZZ_STANDALONE -fsanitize=address,undefined ... fuzz_capi.c
 *             ./fuzz_capi [SEQUENCES [SEED]]   (random sequences, CI smoke)
 * (tools/ci/c-api.sh builds the standalone one; docs/robustness.md.)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etch.h"
#include "fixtures.h"

#define ARENA 32768
#define STATE 4096

/* 16-byte aligned scratch: the program copy, planned buffers, state, data. */
static _Alignas(16) uint8_t program_copy[65536];
static _Alignas(16) uint8_t arena[2][ARENA + 64];
static _Alignas(16) uint8_t state[STATE + 64];
static _Alignas(16) uint8_t data[ARENA + 64];

typedef struct {
  const uint8_t *p;
  size_t n;
} reader_t;

static unsigned next(reader_t *r) {
  if (r->n == 0) return 0;
  r->n--;
  return *r->p++;
}

static size_t wide(reader_t *r) { return next(r) | (size_t)next(r) << 8; }

/* A length near `want`: exact most of the time, else off by a little or a lot. */
static size_t len_near(reader_t *r, size_t want) {
  switch (next(r) & 7) {
  case 0: return want ? want - 1 : 0;
  case 1: return want + 1;
  case 2: return wide(r);
  default: return want;
  }
}

/* The library may be built with logging: drop the messages. */
void etch_log_write(int level, const char *msg, size_t len) {
  (void)level;
  (void)msg;
  (void)len;
}

static void check(etch_status_t s) {
  /* Every status is one of ExecuTorch's codes, and has a name. */
  if (etch_status_str(s) == NULL) abort();
}

static void sequence(const uint8_t *bytes, size_t size) {
  reader_t r = {bytes, size};
  etch_program_t prog;
  etch_method_t m, copy;
  etch_method_meta_t meta;
  etch_error_t err;
  memset(&prog, 0, sizeof prog);
  memset(&m, 0, sizeof m);
  memset(&meta, 0, sizeof meta);
  const fixture_t *f = &fixtures[next(&r) % num_fixtures];
  const char *name = "forward";
  /* Most sequences start by loading a program and a method, so that the
   * calls after them meet a live handle. */
  static const unsigned prefix[3] = {0, 2, 3};
  int scripted = (next(&r) & 3) != 0;
  for (int step = 0; step < 32 && r.n > 0; step++) {
    unsigned op = scripted && step < 3 ? prefix[step] : next(&r) % 16;
    switch (op) {
    case 0: { /* program from a fixture, possibly misaligned or short */
      size_t shift = (next(&r) & 3) == 0 ? 1 : 0;
      size_t len = len_near(&r, f->pte_len);
      if (f->pte_len + 1 > sizeof program_copy) break;
      memcpy(program_copy + shift, f->pte, f->pte_len);
      if (len > f->pte_len) len = f->pte_len;
      check(etch_program_load(&prog, program_copy + shift, len, next(&r) & 1));
      break;
    }
    case 1: { /* program from the rest of the bytes, with a few fixed */
      size_t n = r.n < sizeof program_copy ? r.n : sizeof program_copy;
      memcpy(program_copy, r.p, n);
      if (n >= 8) memcpy(program_copy + 4, "ET12", 4);
      check(etch_program_load(&prog, program_copy, n, next(&r) & 1));
      r.n = 0;
      break;
    }
    case 2:
      check(etch_method_meta(&prog, (next(&r) & 7) ? name : "nope", &meta));
      break;
    case 3: { /* method load: sizes from meta, some wrong */
      size_t sizes[2] = {0, 0};
      void *planned[2] = {arena[0], arena[1]};
      size_t np = meta.num_planned_buffers <= 2 ? meta.num_planned_buffers : 2;
      for (size_t i = 0; i < np; i++) {
        check(etch_method_planned_buffer_size(&prog, name, i, &sizes[i]));
        sizes[i] = len_near(&r, sizes[i]);
        if (sizes[i] > ARENA) sizes[i] = ARENA;
      }
      if ((next(&r) & 7) == 0) planned[0] = arena[0] + 4; /* misaligned */
      if ((next(&r) & 15) == 0) planned[1] = arena[0];     /* overlapping */
      size_t st = len_near(&r, meta.method_state_bytes);
      if (st > STATE) st = STATE;
      check(etch_method_load(&m, &prog, name, state, st, planned, sizes,
                             (next(&r) & 7) ? np : np + 1));
      break;
    }
    case 4: case 5: { /* untyped and typed input */
      size_t i = next(&r) & 1;
      etch_tensor_info_t info;
      size_t want = f->input_len;
      if (etch_method_input_info(&prog, name, i, &info) == ETCH_OK) want = info.nbytes;
      size_t len = len_near(&r, want);
      if (len > ARENA) len = ARENA;
      memset(data, next(&r), len);
      if (op == 4) {
        check(etch_method_set_input(&m, i, data, len));
      } else {
        int32_t dtypes[] = {ETCH_DTYPE_CHAR, ETCH_DTYPE_FLOAT, ETCH_DTYPE_BYTE, 99, -1};
        check(etch_method_set_input_typed(&m, i, dtypes[next(&r) % 5], data, len));
      }
      break;
    }
    case 6:
      check(etch_method_set_instruction_limit(&m, next(&r) ? 1000000 : 1));
      check(etch_method_execute(&m));
      break;
    case 7: {
      const void *out = NULL;
      size_t n = 0;
      etch_status_t s = etch_method_output(&m, next(&r) & 1, &out, &n);
      check(s);
      if (s == ETCH_OK && n > 0) {
        /* The output must be readable: ASan checks these loads. */
        volatile uint8_t sink = ((const uint8_t *)out)[0] ^ ((const uint8_t *)out)[n - 1];
        (void)sink;
      }
      break;
    }
    case 8: {
      const char *opname = NULL;
      size_t len = 0;
      etch_status_t s = etch_method_instruction_operator(&m, next(&r) % 20, &opname, &len);
      check(s);
      if (s == ETCH_OK && len > 0) {
        volatile char sink = opname[0] ^ opname[len - 1]; /* readable, not NUL-terminated */
        (void)sink;
      }
      break;
    }
    case 9:
      check(etch_method_unload(&m));
      break;
    case 10: /* a bitwise copy must be refused */
      memcpy(&copy, &m, sizeof m);
      if (etch_method_execute(&copy) == ETCH_OK) abort();
      break;
    case 11:
      check(etch_method_error(&m, &err));
      check(etch_program_error(&prog, &err));
      break;
    case 12: {
      int64_t iv;
      double dv;
      check(etch_method_output_int(&m, next(&r) & 1, &iv));
      check(etch_method_output_double(&m, next(&r) & 1, &dv));
      break;
    }
    case 13: {
      size_t n = 0;
      const char *mname = NULL;
      check(etch_program_num_methods(&prog, &n));
      if (etch_program_method_name(&prog, next(&r) % 16, &mname) == ETCH_OK) name = mname;
      break;
    }
    case 14: { /* a profiled run with a short or exact table */
      uint32_t table[64];
      size_t n = len_near(&r, meta.num_instructions);
      if (n > 64) n = 64;
      check(etch_method_execute_profiled(&m, NULL, table, n));
      break;
    }
    default: /* NULL arguments */
      check(etch_method_execute(NULL));
      check(etch_method_set_input(&m, 0, NULL, 4));
      check(etch_method_output(&m, 0, NULL, NULL));
      check(etch_method_meta(&prog, NULL, &meta));
      break;
    }
  }
  etch_method_unload(&m);
}

#ifdef FUZZ_STANDALONE
int main(int argc, char **argv) {
  unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 10000;
  uint64_t x = argc > 2 ? strtoull(argv[2], NULL, 10) * 2654435761u + 1 : 88172645463325252ull;
  uint8_t buf[96];
  for (unsigned long k = 0; k < n; k++) {
    size_t len = 8 + (size_t)(x % 88);
    for (size_t i = 0; i < len; i++) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      buf[i] = (uint8_t)(x >> 24);
    }
    sequence(buf, len);
  }
  printf("fuzz_capi: %lu sequences, no sanitizer report\n", n);
  return 0;
}
#else
int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size) {
  sequence(bytes, size);
  return 0;
}
#endif
