/*
 * etch memory regions: a program whose planned memory is split over three
 * memory ids (activations, the graph's input and output, the state), each
 * id in its own static buffer, sized from the program at build time
 * (CONFIG_ETCH_PLANNED_MEMORY, <etch_planned.h>) and placed in the memory
 * region the devicetree names (boards/<board>.overlay: an
 * "etch,planned-memory" node). The method runs its step sequence; every
 * output must equal, bit for bit, what ExecuTorch's own runtime produced.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#include <string.h>

#include <zephyr/devicetree.h>
#include <zephyr/kernel.h>
#include <zephyr/sys/printk.h>

#include <etch.h>
#include <etch_zephyr.h>
#include <etch_planned.h>   /* generated: ETCH_PLANNED_NUM_BUFFERS, ..._SIZE */
#include <model_steps.h>    /* etch_embed_steps() in CMakeLists.txt */

#define TAG "etch memory regions: "

/* The method state (etch_method_meta()'s method_state_bytes; the load
 * says how many bytes are needed if this is too small).
 */
static uint8_t state[256];
static etch_program_t program;
static etch_method_t method;

#if DT_HAS_COMPAT_STATUS_OKAY(etch_planned_memory)
/* Where the devicetree put each buffer: the address range of its node. */
#define PM DT_COMPAT_GET_ANY_STATUS_OKAY(etch_planned_memory)
#define RANGE(node, prop, idx)                                                             \
	{DT_REG_ADDR(DT_PHANDLE_BY_IDX(node, prop, idx)),                                   \
	 DT_REG_SIZE(DT_PHANDLE_BY_IDX(node, prop, idx))},
static const struct {
	uintptr_t base;
	size_t size;
} ranges[] = {DT_FOREACH_PROP_ELEM(PM, memory_regions, RANGE)};
#endif

static int fail(const char *what, etch_status_t st)
{
	printk(TAG "%s failed: 0x%02x %s\n", what, (unsigned int)st, etch_status_str(st));
	return -1;
}

/* Sets step k's inputs, executes, compares every output with ExecuTorch's. */
static int step(unsigned int k)
{
	etch_status_t st;

	for (size_t i = 0; i < ARRAY_SIZE(etch_step_inputs); i++) {
		const struct etch_step_tensor *t = &etch_step_inputs[i];

		if (t->step == k) {
			st = etch_method_set_input(&method, t->index, t->data, t->size);
			if (st != ETCH_OK) {
				return fail("etch_method_set_input", st);
			}
		}
	}
	st = etch_method_execute(&method);
	if (st != ETCH_OK) {
		return fail("etch_method_execute", st);
	}
	for (size_t i = 0; i < ARRAY_SIZE(etch_step_outputs); i++) {
		const struct etch_step_tensor *t = &etch_step_outputs[i];
		const void *out;
		size_t len;

		if (t->step != k) {
			continue;
		}
		st = etch_method_output(&method, t->index, &out, &len);
		if (st != ETCH_OK) {
			return fail("etch_method_output", st);
		}
		if (len != t->size || memcmp(out, t->data, len) != 0) {
			printk(TAG "step %u: output %u differs from ExecuTorch's\n", k, t->index);
			return -1;
		}
	}
	return 0;
}

int main(void)
{
	etch_method_meta_t meta;
	etch_status_t st;

	st = etch_zephyr_load_model(&program);   /* prints why on a failure */
	if (st != ETCH_OK) {
		return -1;
	}
	st = etch_method_meta(&program, ETCH_PLANNED_METHOD, &meta);
	if (st != ETCH_OK) {
		return fail("etch_method_meta", st);
	}
	printk(TAG "method %s: %u planned buffers, %u B in all, %u B of method state\n",
	       ETCH_PLANNED_METHOD, (unsigned int)meta.num_planned_buffers,
	       (unsigned int)ETCH_PLANNED_BYTES, (unsigned int)meta.method_state_bytes);
	for (size_t k = 0; k < ETCH_PLANNED_NUM_BUFFERS; k++) {
		void *data;
		size_t len;
		const char *region;

		st = etch_zephyr_planned_buffer(k, &data, &len, &region);
		if (st != ETCH_OK) {
			return fail("etch_zephyr_planned_buffer", st);
		}
		printk(TAG "buffer %u (memory id %u): %u B at %p in %s\n", (unsigned int)k,
		       (unsigned int)k + 1, (unsigned int)len, data,
		       region[0] ? region : "RAM (.bss)");
#if DT_HAS_COMPAT_STATUS_OKAY(etch_planned_memory)
		/* (CONFIG_ETCH_PLANNED_REGIONS, when set, overrides the devicetree.) */
		if (sizeof(CONFIG_ETCH_PLANNED_REGIONS) == 1 && k < ARRAY_SIZE(ranges) &&
		    ((uintptr_t)data < ranges[k].base ||
		     (uintptr_t)data + len > ranges[k].base + ranges[k].size)) {
			printk(TAG "buffer %u is outside its devicetree region [0x%lx, +0x%lx)\n",
			       (unsigned int)k, (unsigned long)ranges[k].base,
			       (unsigned long)ranges[k].size);
			return -1;
		}
#endif
	}

	st = etch_zephyr_planned_method_load(&program, &method, state, sizeof(state));
	if (st != ETCH_OK) {   /* printed, e.g. "method state: 16 B given, 39 B needed" */
		return -1;
	}
	for (unsigned int k = 0; k < ETCH_STEPS; k++) {
		if (step(k) != 0) {
			return -1;
		}
		printk(TAG "step %u: bit-exact\n", k);
	}
	/* The state (memory id 3) back to the program's initial values. */
	st = etch_method_reset(&method);
	if (st != ETCH_OK) {
		return fail("etch_method_reset", st);
	}
	if (step(0) != 0) {
		return -1;
	}
	printk(TAG "after reset, step 0: bit-exact\n");
	printk(TAG "done\n");
	return 0;
}
