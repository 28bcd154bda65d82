/*
 * C-API call sequences: every byte string is a sequence of etch_*
 * calls on the fixtures (tests/c-api/fixtures.c) with arguments taken from
 * the bytes: right and wrong lengths, dtypes, indices, misaligned and
 * overlapping buffers, handles used before loading, after a failed load,
 * after etch_method_unload, copied, and a program built from the bytes
 * themselves. Every call must return a status, and the sanitizers
 * (AddressSanitizer, UBSan) must stay quiet.
 *
 * The C-API audit adds hostile buffers: ETDump, debug, profile buffers, `written`
 * and output out-pointers, and input data placed inside the method handle
 * (on the heap, exactly its size, so ASan sees a write past it), the state,
 * the planned buffers or the program bytes; and clock/cycle callbacks that
 * call back into the running method. Oracles beyond the sanitizers: a call
 * handed a written buffer that overlaps the handle or the program bytes
 * never returns ETCH_OK, the program bytes never change, and every call a
 * callback makes on the running method returns ETCH_INVALID_STATE.
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
#define STATE 8192

/* 16-byte aligned scratch: the program copy, planned buffers, state, data. */
static _Alignas(16) uint8_t program_copy[65536];
static _Alignas(16) uint8_t arena[2][ARENA + 64];
static _Alignas(16) uint8_t state[STATE + 64];
static _Alignas(16) uint8_t data[ARENA + 64];
static _Alignas(16) uint8_t etdump[8192];

/* The method handle lives on the heap, exactly its size. */
static etch_method_t *mh;

/* Where the program bytes are (when they are a fixture's) and what they
 * must stay; and the bytes the loaded method was loaded from. */
static const uint8_t *pte_at;
static const fixture_t *pte_of;
static size_t pte_len;
static const uint8_t *m_pte_at;
static size_t m_pte_len;

static unsigned cur_op;
static void abort_because(const char *why) {
  fprintf(stderr, "fuzz_capi: %s (call %u)\n", why, cur_op);
  abort();
}

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

/* A hostile place for a buffer: inside the handle, the state, a planned
 * buffer, the program bytes, or (harmless) the scratch; its offset and
 * length from the bytes, always inside the object it is in (a length past
 * the object would be the caller's own overflow, not etch's). A write
 * there must be refused when it overlaps what the call's handle holds:
 * `on_method` for method calls (the handle, the bytes the method was loaded
 * from), `on_program` for program calls (the program's bytes). */
typedef struct {
  uint8_t *p;
  size_t len;
  int on_method, on_program;
  /* Over the current program's bytes: a method loaded from other bytes
   * does not know them, so a write there is the caller's own. */
  int in_pte;
} place_t;

static int overlaps(const uint8_t *p, size_t len, const uint8_t *q, size_t qlen) {
  return len && qlen && p < q + qlen && q < p + len;
}

static place_t place(reader_t *r, size_t align) {
  uint8_t *base;
  size_t cap;
  switch (next(r) % 6) {
  case 0: base = (uint8_t *)mh; cap = sizeof *mh; break;
  case 1: base = state; cap = STATE; break;
  case 2: base = arena[0]; cap = ARENA; break;
  case 3: base = arena[1]; cap = ARENA; break;
  case 4: base = program_copy; cap = sizeof program_copy; break;
  default: base = data; cap = ARENA; break;
  }
  size_t off = (wide(r) % cap) & ~(align - 1);
  size_t room = cap - off;
  size_t len = (next(r) & 1) ? room : wide(r) % (room + 1);
  place_t pl = {base + off, len, 0, 0, 0};
  pl.on_method = overlaps(pl.p, len, (const uint8_t *)mh, sizeof *mh) ||
                 (m_pte_at && overlaps(pl.p, len, m_pte_at, m_pte_len));
  pl.on_program = pte_of && overlaps(pl.p, len, pte_at, pte_len);
  pl.in_pte = pl.on_program;
  return pl;
}

/* An out-pointer for one T: a local (fine) or a hostile place. */
static void *out_ptr(reader_t *r, void *local, size_t size, place_t *where) {
  if (next(r) & 3) return local;
  place_t pl = place(r, 8);
  if (pl.len < size) return local;
  pl.len = size;
  pl.on_method = overlaps(pl.p, size, (const uint8_t *)mh, sizeof *mh) ||
                 (m_pte_at && overlaps(pl.p, size, m_pte_at, m_pte_len));
  pl.on_program = pte_of && overlaps(pl.p, size, pte_at, pte_len);
  where->on_method |= pl.on_method;
  where->on_program |= pl.on_program;
  where->in_pte |= pl.on_program;
  return pl.p;
}

/* Calls back into the running method from the clock and the cycle
 * counter: each must be refused as busy. */
static unsigned reentry;
static void call_running(void) {
  const void *out = NULL;
  size_t n = 0;
  etch_error_t e;
  uint32_t prof[4];
  etch_status_t s;
  int32_t sizes[16] = {1};
  switch (reentry++ % 10) {
  case 8: s = etch_method_set_input_sized(mh, 0, sizes, 1, data, 16); break;
  case 9: s = etch_method_output_sizes(mh, 0, sizes, 16, &n); break;
  case 0: s = etch_method_execute(mh); break;
  case 1: s = etch_method_output(mh, 0, &out, &n); break;
  case 2: s = etch_method_set_input(mh, 0, data, 16); break;
  case 3: s = etch_method_unload(mh); break;
  case 4: s = etch_method_error(mh, &e); break;
  case 5: s = etch_method_execute_profiled(mh, NULL, prof, 4); break;
  case 6: s = etch_method_set_instruction_limit(mh, 1); break;
  default: s = etch_method_execute_etdump(mh, NULL, etdump, sizeof etdump, &n); break;
  }
  if (s != ETCH_INVALID_STATE) abort_because("a call on the running method was not refused");
}
static uint64_t ticks;
static uint64_t clock_plain(void) { return ticks++; }
static uint64_t clock_reentrant(void) {
  call_running();
  return ticks++;
}
static uint32_t cycles_plain(void) { return (uint32_t)ticks++; }
static uint32_t cycles_reentrant(void) {
  call_running();
  return (uint32_t)ticks++;
}

/* Written through a hostile pointer must never be OK; the program bytes
 * never change, unless the call was handed them as an output and has no
 * way to know them (a method loaded from other bytes): then they are put
 * back. */
static void after(etch_status_t s, int hot, int in_pte) {
  check(s);
  if (hot && s == ETCH_OK) abort_because("a write over the handle or the program was accepted");
  if (pte_of && memcmp(pte_at, pte_of->pte, pte_len) != 0) {
    if (!in_pte) abort_because("the program bytes changed");
    memcpy((uint8_t *)pte_at, pte_of->pte, pte_len);
  }
}

static void sequence(const uint8_t *bytes, size_t size) {
  reader_t r = {bytes, size};
  etch_program_t prog;
  etch_method_t copy;
  etch_method_t *const mp = mh;
  etch_method_meta_t meta;
  etch_error_t err;
  memset(&prog, 0, sizeof prog);
  memset(mh, 0, sizeof *mh);
  pte_of = NULL;
  m_pte_at = NULL;
  memset(&meta, 0, sizeof meta);
  const fixture_t *f = &fixtures[next(&r) % num_fixtures];
  const char *name = "forward";
  /* Most sequences start by loading a program and a method, so that the
   * calls after them meet a live handle. */
  static const unsigned prefix[3] = {0, 2, 3};
  int scripted = (next(&r) & 3) != 0;
  for (int step = 0; step < 32 && r.n > 0; step++) {
    unsigned op = scripted && step < 3 ? prefix[step] : next(&r) % 24;
    cur_op = op;
    switch (op) {
    case 0: { /* program from a fixture, possibly misaligned or short */
      size_t shift = (next(&r) & 3) == 0 ? 1 : 0;
      size_t len = len_near(&r, f->pte_len);
      if (f->pte_len + 1 > sizeof program_copy) break;
      /* The bytes must not change under a loaded method (etch.h). */
      check(etch_method_unload(mp));
      m_pte_at = NULL;
      memcpy(program_copy + shift, f->pte, f->pte_len);
      if (len > f->pte_len) len = f->pte_len;
      etch_status_t s = etch_program_load(&prog, program_copy + shift, len, next(&r) & 1);
      check(s);
      pte_of = s == ETCH_OK ? f : NULL;
      pte_at = program_copy + shift;
      pte_len = len;
      break;
    }
    case 1: { /* program from the rest of the bytes, with a few fixed */
      size_t n = r.n < sizeof program_copy ? r.n : sizeof program_copy;
      check(etch_method_unload(mp));
      m_pte_at = NULL;
      memcpy(program_copy, r.p, n);
      if (n >= 8) memcpy(program_copy + 4, "ET12", 4);
      pte_of = NULL;
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
      etch_status_t s = etch_method_load(mp, &prog, name, state, st, planned, sizes,
                                         (next(&r) & 7) ? np : np + 1);
      check(s);
      m_pte_at = s == ETCH_OK && pte_of ? pte_at : NULL;
      m_pte_len = pte_len;
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
        check(etch_method_set_input(mp, i, data, len));
      } else {
        int32_t dtypes[] = {ETCH_DTYPE_CHAR, ETCH_DTYPE_FLOAT, ETCH_DTYPE_BYTE, 99, -1};
        check(etch_method_set_input_typed(mp, i, dtypes[next(&r) % 5], data, len));
      }
      break;
    }
    case 6:
      check(etch_method_set_instruction_limit(mp, next(&r) ? 1000000 : 1));
      check(etch_method_execute(mp));
      break;
    case 7: {
      const void *out = NULL;
      size_t n = 0;
      etch_status_t s = etch_method_output(mp, next(&r) & 1, &out, &n);
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
      etch_status_t s = etch_method_instruction_operator(mp, next(&r) % 20, &opname, &len);
      check(s);
      if (s == ETCH_OK && len > 0) {
        volatile char sink = opname[0] ^ opname[len - 1]; /* readable, not NUL-terminated */
        (void)sink;
      }
      break;
    }
    case 9:
      check(etch_method_unload(mp));
      m_pte_at = NULL;
      break;
    case 10: /* a bitwise copy must be refused */
      memcpy(&copy, mp, sizeof copy);
      if (etch_method_execute(&copy) == ETCH_OK) abort();
      break;
    case 11:
      check(etch_method_error(mp, &err));
      check(etch_program_error(&prog, &err));
      break;
    case 12: {
      int64_t iv;
      double dv;
      check(etch_method_output_int(mp, next(&r) & 1, &iv));
      check(etch_method_output_double(mp, next(&r) & 1, &dv));
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
      check(etch_method_execute_profiled(mp, NULL, table, n));
      break;
    }
    case 16: { /* ETDump into a hostile place, maybe re-entrant clock */
      place_t pl = place(&r, 1);
      size_t written = 0;
      size_t *w = out_ptr(&r, &written, sizeof written, &pl);
      etch_status_t s = etch_method_execute_etdump(mp, (next(&r) & 1) ? clock_reentrant : clock_plain,
                                                   pl.p, pl.len, w);
      after(s, pl.on_method, pl.in_pte);
      break;
    }
    case 17: { /* ETDump and debug buffers, each maybe hostile */
      place_t e = (next(&r) & 1) ? place(&r, 1) : (place_t){etdump, sizeof etdump, 0, 0, 0};
      place_t d = place(&r, 1);
      size_t written = 0, dwritten = 0;
      size_t *w = out_ptr(&r, &written, sizeof written, &e);
      size_t *dw = out_ptr(&r, &dwritten, sizeof dwritten, &d);
      etch_status_t s = etch_method_execute_etdump_debug(mp, clock_plain, e.p, e.len, w, d.p, d.len, dw);
      after(s, e.on_method || d.on_method, e.in_pte || d.in_pte);
      break;
    }
    case 18: { /* profile table in a hostile place, maybe re-entrant cycles */
      place_t pl = place(&r, 4);
      size_t n = pl.len / 4;
      etch_status_t s = etch_method_execute_profiled(
          mp, (next(&r) & 1) ? cycles_reentrant : cycles_plain, (uint32_t *)(void *)pl.p, n);
      after(s, pl.on_method && n > 0, pl.in_pte);
      break;
    }
    case 19: { /* output out-pointers in hostile places */
      const void *out = NULL;
      size_t n = 0;
      place_t where = {0, 0, 0, 0, 0};
      const void **o = out_ptr(&r, (void *)&out, sizeof out, &where);
      size_t *np = out_ptr(&r, &n, sizeof n, &where);
      after(etch_method_output(mp, next(&r) & 1, o, np), where.on_method, where.in_pte);
      break;
    }
    case 22: { /* an input set with sizes: the bounds, one size off, another rank,
                * a negative size, too many dims; sizes and bytes maybe in a hostile place */
      size_t i = next(&r) & 1;
      etch_tensor_info_t info;
      int32_t sizes[17] = {0};
      size_t dim = 1, elems = 1;
      if (etch_method_input_info(&prog, name, i, &info) == ETCH_OK) {
        dim = info.dim;
        memcpy(sizes, info.sizes, sizeof info.sizes);
      }
      switch (next(&r) & 7) {
      case 0: if (dim) sizes[next(&r) % dim] += (next(&r) & 1) ? 1 : -1; break;
      case 1: dim = (dim + 1 + (next(&r) & 1)) % 18; break;
      case 2: if (dim) sizes[0] = -(int32_t)(next(&r) + 1); break;
      case 3: dim = 17; break;
      default: break;
      }
      for (size_t d = 0; d < dim && d < 16; d++) elems *= sizes[d] > 0 ? (size_t)sizes[d] : 1;
      size_t len = len_near(&r, elems * ((next(&r) & 1) ? 4 : 1));
      if (len > ARENA) len = ARENA;
      memset(data, next(&r), len);
      /* Both are only read: a place over the method's memory is refused,
       * one in the program bytes may be read; neither may be written. */
      const int32_t *sp = sizes;
      const uint8_t *dp = data;
      if ((next(&r) & 3) == 0) {
        place_t pl = place(&r, 4);
        if (pl.len >= dim * 4) sp = (const int32_t *)(void *)pl.p;
      }
      if ((next(&r) & 3) == 0) {
        place_t pl = place(&r, 1);
        if (pl.len >= len) dp = pl.p;
      }
      after(etch_method_set_input_sized(mp, i, sp, dim, dp, len), 0, 0);
      break;
    }
    case 23: { /* output sizes into hostile places, room short or enough */
      int32_t sizes[16];
      size_t n = 0;
      place_t where = {0, 0, 0, 0, 0};
      int32_t *sp = out_ptr(&r, sizes, sizeof sizes, &where);
      size_t *np = out_ptr(&r, &n, sizeof n, &where);
      after(etch_method_output_sizes(mp, next(&r) & 1, sp, next(&r) % 17, np), where.on_method,
            where.in_pte);
      break;
    }
    case 20: { /* input bytes from a hostile place (read only: the program is fine) */
      place_t pl = place(&r, 1);
      etch_status_t s = etch_method_set_input(mp, next(&r) & 1, pl.p, pl.len);
      after(s, overlaps(pl.p, pl.len, (const uint8_t *)mh, sizeof *mh), 0);
      break;
    }
    case 21: { /* error and count out-pointers in hostile places */
      etch_error_t e;
      size_t n = 0;
      place_t where = {0, 0, 0, 0, 0};
      etch_error_t *ep = out_ptr(&r, &e, sizeof e, &where);
      after(etch_method_error(mp, ep), where.on_method, where.in_pte);
      /* A program call cannot know the method's memory (etch.h: what
       * cannot be checked), so its out-pointer goes into the program bytes
       * or the scratch only. */
      size_t *np = &n;
      int on_program = 0;
      if ((next(&r) & 3) == 0) {
        size_t off = (wide(&r) % (sizeof program_copy - 8)) & ~(size_t)7;
        np = (size_t *)(void *)((next(&r) & 1) ? program_copy + off : data + off % ARENA);
        on_program = pte_of && overlaps((const uint8_t *)np, sizeof *np, pte_at, pte_len);
      }
      after(etch_program_num_methods(&prog, np), on_program, 0);
      break;
    }
    default: /* NULL arguments */
      check(etch_method_execute(NULL));
      check(etch_method_set_input(mp, 0, NULL, 4));
      check(etch_method_output(mp, 0, NULL, NULL));
      check(etch_method_meta(&prog, NULL, &meta));
      break;
    }
  }
  etch_method_unload(mp);
}

static void setup(void) {
  if (!mh) mh = malloc(sizeof *mh);
  if (!mh) abort();
}

#ifdef FUZZ_STANDALONE
int main(int argc, char **argv) {
  unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 10000;
  uint64_t x = argc > 2 ? strtoull(argv[2], NULL, 10) * 2654435761u + 1 : 88172645463325252ull;
  uint8_t buf[96];
  setup();
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
  printf("fuzz_capi: %lu sequences, %u re-entrant calls refused, no sanitizer report\n", n, reentry);
  return 0;
}
#else
int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size) {
  setup();
  sequence(bytes, size);
  return 0;
}
#endif
