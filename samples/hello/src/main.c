/*
 * etch hello: run the smallest fixture (a 16 -> 8 int8 linear layer exported
 * by ExecuTorch's Cortex-M flow) and compare its output, bit for bit, with
 * the output ExecuTorch's own runtime produced for the same input.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#include <string.h>

#include <zephyr/kernel.h>
#include <zephyr/sys/printk.h>

#include <etch.h>
#include <etch_zephyr.h>
#include <etch_model.h>     /* CONFIG_ETCH_MODEL, embedded by the module */
#include <hello_input.h>    /* etch_embed(... NPY) in CMakeLists.txt */
#include <hello_expected.h>

/* All memory is static: the method's state and its planned buffers come
 * out of one arena, sized by what etch_method_meta() reports.
 */
#define ARENA_BYTES 4096
static uint8_t arena[ARENA_BYTES] __aligned(ETCH_PLANNED_BUFFER_ALIGNMENT);

static etch_program_t program;
static etch_method_t method;

static int fail(const char *what, etch_status_t st)
{
	printk("etch hello: %s failed: 0x%02x %s\n", what, (unsigned int)st,
	       etch_status_str(st));
	return -1;
}

int main(void)
{
	etch_method_meta_t meta;
	etch_status_t st;

	st = etch_zephyr_load_model(&program);
	if (st != ETCH_OK) {
		return fail("etch_program_load", st);
	}
	st = etch_method_meta(&program, "forward", &meta);
	if (st != ETCH_OK) {
		return fail("etch_method_meta", st);
	}

	/* Planned buffers first (16-byte aligned), the method state after. */
	void *planned[ETCH_MAX_PLANNED_BUFFERS];
	size_t planned_lens[ETCH_MAX_PLANNED_BUFFERS];
	size_t used = 0;
	size_t planned_total = 0;

	if (meta.num_planned_buffers > ETCH_MAX_PLANNED_BUFFERS) {
		return fail("planned buffer count", ETCH_NOT_SUPPORTED);
	}
	for (size_t i = 0; i < meta.num_planned_buffers; i++) {
		st = etch_method_planned_buffer_size(&program, "forward", i, &planned_lens[i]);
		if (st != ETCH_OK) {
			return fail("etch_method_planned_buffer_size", st);
		}
		used = ROUND_UP(used, ETCH_PLANNED_BUFFER_ALIGNMENT);
		planned[i] = &arena[used];
		used += planned_lens[i];
		planned_total += planned_lens[i];
	}
	if (used + meta.method_state_bytes > sizeof(arena)) {
		return fail("arena (ARENA_BYTES too small)", ETCH_MEMORY_ALLOCATION_FAILED);
	}
	printk("etch hello: model %u bytes, method forward: %u state bytes, "
	       "%u planned buffer(s) of %u bytes, %u kernel(s) linked\n",
	       (unsigned int)etch_model_size, (unsigned int)meta.method_state_bytes,
	       (unsigned int)meta.num_planned_buffers, (unsigned int)planned_total,
	       (unsigned int)etch_kernel_count());

	st = etch_method_load(&method, &program, "forward", &arena[used],
			      meta.method_state_bytes, planned, planned_lens,
			      meta.num_planned_buffers);
	if (st != ETCH_OK) {
		return fail("etch_method_load", st);
	}
	st = etch_method_set_input(&method, 0, hello_input_data, hello_input_size);
	if (st != ETCH_OK) {
		return fail("etch_method_set_input", st);
	}
#if defined(CONFIG_ETCH_PROFILE)
	/* Cycles per instruction (k_cycle_get_32); logged too with CONFIG_ETCH_LOG. */
	static uint32_t cycles[16];

	if (meta.num_instructions > ARRAY_SIZE(cycles)) {
		return fail("profile array", ETCH_OUT_OF_RESOURCES);
	}
	st = etch_zephyr_execute_profiled(&method, cycles, meta.num_instructions);
	if (st != ETCH_OK) {
		return fail("etch_zephyr_execute_profiled", st);
	}
	for (size_t i = 0; i < meta.num_instructions; i++) {
		const char *op;
		size_t len;

		if (etch_method_instruction_operator(&method, i, &op, &len) == ETCH_OK) {
			printk("etch hello: profile #%u %.*s: %u cycles\n", (unsigned int)i,
			       (int)len, op, cycles[i]);
		}
	}
#else
	st = etch_method_execute(&method);
	if (st != ETCH_OK) {
		return fail("etch_method_execute", st);
	}
#endif
#if defined(CONFIG_ETCH_ETDUMP)
	/* The same run again, recorded as ExecuTorch's ETDump and printed as
	 * base64 lines; tools/etdump/from_console.py turns the log back into
	 * the .etdp file ExecuTorch's Inspector opens.
	 */
	const uint8_t *etdp;
	size_t etdp_len;

	st = etch_method_set_input(&method, 0, hello_input_data, hello_input_size);
	if (st == ETCH_OK) {
		st = etch_zephyr_execute_etdump(&method, &etdp, &etdp_len);
	}
	if (st != ETCH_OK) {
		return fail("etch_zephyr_execute_etdump", st);
	}
	etch_zephyr_etdump_print(etdp, etdp_len);
#endif

	const void *out;
	size_t out_len;

	st = etch_method_output(&method, 0, &out, &out_len);
	if (st != ETCH_OK) {
		return fail("etch_method_output", st);
	}
	const int8_t *o = out;

	printk("etch hello: output");
	for (size_t i = 0; i < out_len; i++) {
		printk(" %d", o[i]);
	}
	printk("\n");

	if (out_len != hello_expected_size || memcmp(out, hello_expected_data, out_len) != 0) {
		printk("etch hello: MISMATCH against ExecuTorch's reference output\n");
		return -1;
	}
	printk("etch hello: bit-exact\n");
	return 0;
}
