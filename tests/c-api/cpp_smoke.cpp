// etch.h from C++ (no exceptions, no RTTI, no C++ runtime needed by the
// library): declares handles statically and runs the first fixture.
#include "etch.h"
#include "fixture_sizes.h"
#include "fixtures.h"

#include <cstdio>
#include <cstring>

static etch_program_t prog;
static etch_method_t method;
alignas(16) static uint8_t arena[FIXTURE_MAX_PLANNED_BYTES];
static uint8_t state[1024];

static_assert(sizeof(etch_method_t) == 8 * ETCH_METHOD_WORDS, "handle size");

extern "C" void etch_log_write(int, const char *, size_t) {}

int main() {
  const fixture_t &f = fixtures[0];
  etch_method_meta_t meta;
  size_t size = 0;
  if (etch_program_load(&prog, f.pte, f.pte_len, true) != ETCH_OK ||
      etch_method_meta(&prog, "forward", &meta) != ETCH_OK ||
      etch_method_planned_buffer_size(&prog, "forward", 0, &size) != ETCH_OK ||
      size > sizeof arena || meta.method_state_bytes > sizeof state) {
    std::puts("C++: load failed");
    return 1;
  }
  void *planned[] = {arena};
  size_t lens[] = {size};
  const void *out = nullptr;
  size_t n = 0;
  etch_status_t s = etch_method_load(&method, &prog, "forward", state, meta.method_state_bytes,
                                     planned, lens, 1);
  if (s == ETCH_OK) s = etch_method_set_input(&method, 0, f.input, f.input_len);
  if (s == ETCH_OK) s = etch_method_execute(&method);
  if (s == ETCH_OK) s = etch_method_output(&method, 0, &out, &n);
  bool same = s == ETCH_OK && n == f.output_len && std::memcmp(out, f.output, n) == 0;
  std::printf("C++: %s, status %s\n", same ? "output matches ExecuTorch" : "FAILED", etch_status_str(s));
  return same ? 0 : 1;
}
