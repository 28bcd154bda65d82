/*
 * Zephyr glue of the etch module: cycle counter, embedded model, profiling.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <zephyr/kernel.h>
#include <zephyr/init.h>
#include <zephyr/logging/log.h>

#include <etch_zephyr.h>

#if defined(CONFIG_ETCH_MODEL_EMBEDDED)
#include <etch_model.h>
#endif

#if defined(CONFIG_ETCH_LOG)
LOG_MODULE_DECLARE(etch, CONFIG_ETCH_LOG_LEVEL);
#endif

uint32_t etch_zephyr_cycles(void)
{
	return k_cycle_get_32();
}

#if defined(CONFIG_ETCH_MODEL_EMBEDDED)
etch_status_t etch_zephyr_load_model(etch_program_t *program)
{
	return etch_program_load(program, etch_model_data, etch_model_size,
				 IS_ENABLED(CONFIG_ETCH_VERIFY));
}
#endif

#if defined(CONFIG_ETCH_PROFILE)
etch_status_t etch_zephyr_execute_profiled(etch_method_t *m, uint32_t *per_instruction,
					   size_t n)
{
	etch_status_t st = etch_method_execute_profiled(m, etch_zephyr_cycles,
						       per_instruction, n);
#if defined(CONFIG_ETCH_LOG)
	if (st == ETCH_OK) {
		uint64_t total = 0;

		for (size_t i = 0; i < n; i++) {
			const char *op;
			size_t len;

			if (etch_method_instruction_operator(m, i, &op, &len) != ETCH_OK) {
				continue; /* moves and jumps run no kernel */
			}
			total += per_instruction[i];
			LOG_INF("profile: #%u %.*s %u cycles", (unsigned int)i, (int)len,
				op, per_instruction[i]);
		}
		LOG_INF("profile: total %llu cycles (%u Hz counter)",
			(unsigned long long)total, (unsigned int)sys_clock_hw_cycles_per_sec());
	}
#endif
	return st;
}
#endif

/* On Armv6-M the logger must be installed before any other etch call;
 * elsewhere this is the same as letting etch_program_load() do it.
 */
static int etch_zephyr_init(void)
{
	etch_log_init();
	return 0;
}

SYS_INIT(etch_zephyr_init, APPLICATION, 0);
