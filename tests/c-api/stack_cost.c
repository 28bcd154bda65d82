/*
 * Stack cost of the C API's entry points on bare metal (QEMU mps2-an386,
 * Cortex-M4F, the firmware library of tools/ci/c-api.sh): for each call,
 * the stack below the caller's frame is painted, the call made, and the
 * deepest byte it changed found (the bench firmware's method). Calls that
 * do almost nothing besides `with_method` (the handle check, the busy flag
 * and the `Region` overlap check of every pointer) show what that
 * machinery costs; `etch_method_execute` on the DS-CNN fixture shows a
 * whole inference through the C API. Prints one line per call:
 * "<call>: N bytes". Exit status 0 when every call returned ETCH_OK.
 */
#include "etch.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fixtures.h"

#define PAINT 0xA5A5A5A5u
#define DEPTH 8192u /* bytes painted below the caller's stack pointer */

static etch_program_t prog;
static etch_method_t method;
static _Alignas(16) uint8_t state[8192];
static _Alignas(16) uint8_t arena[32768];
static int failures;

/* Paints DEPTH bytes below the current stack pointer, runs `call`, and
 * returns how many bytes below that pointer it used. The painting loop
 * runs in this frame without calls, so it only writes below sp. */
typedef etch_status_t (*call_fn)(void);
static __attribute__((noinline)) uint32_t measure(call_fn call, etch_status_t *st) {
  uint32_t sp;
  __asm__ volatile("mov %0, sp" : "=r"(sp));
  volatile uint32_t *lo = (volatile uint32_t *)(sp - DEPTH);
  volatile uint32_t *hi = (volatile uint32_t *)(sp - 16);
  for (volatile uint32_t *p = lo; p < hi; p++) *p = PAINT;
  *st = call();
  const volatile uint32_t *p = lo;
  while (p < hi && *p == PAINT) p++;
  return sp - (uint32_t)(uintptr_t)p;
}

static const void *out_data;
static size_t out_len;
static etch_error_t err;
static int64_t scratch[2];

static etch_status_t c_execute(void) { return etch_method_execute(&method); }
static etch_status_t c_set_input(void) {
  return etch_method_set_input(&method, 0, fixtures[1].input, fixtures[1].input_len);
}
static etch_status_t c_output(void) { return etch_method_output(&method, 0, &out_data, &out_len); }
static etch_status_t c_error(void) { return etch_method_error(&method, &err); }
static etch_status_t c_limit(void) { return etch_method_set_instruction_limit(&method, 10000000); }
static etch_status_t c_load(void) {
  void *planned[1] = {arena};
  size_t lens[1] = {sizeof arena};
  return etch_method_load(&method, &prog, "forward", state, sizeof state, planned, lens, 1);
}
static etch_status_t c_program(void) {
  return etch_program_load(&prog, fixtures[1].pte, fixtures[1].pte_len, true);
}
static etch_status_t c_unload(void) { return etch_method_unload(&method); }

static void report(const char *name, call_fn f) {
  etch_status_t st = ETCH_INTERNAL;
  uint32_t used = measure(f, &st);
  printf("%s: %lu bytes%s\n", name, (unsigned long)used, st == ETCH_OK ? "" : " (FAILED)");
  if (st != ETCH_OK) failures++;
}

int main(void) {
  (void)scratch;
  report("etch_program_load (DS-CNN, verification on)", c_program);
  report("etch_method_load", c_load);
  report("etch_method_error", c_error);
  report("etch_method_set_instruction_limit", c_limit);
  report("etch_method_set_input", c_set_input);
  report("etch_method_execute (DS-CNN inference)", c_execute);
  report("etch_method_output", c_output);
  if (out_len != fixtures[1].output_len || memcmp(out_data, fixtures[1].output, out_len) != 0) {
    printf("FAIL output differs from the reference\n");
    failures++;
  }
  report("etch_method_unload", c_unload);
  printf("%d failed\n", failures);
  return failures != 0;
}
