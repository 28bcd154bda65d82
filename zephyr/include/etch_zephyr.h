/*
 * etch on Zephyr: glue around the C API in <etch.h>.
 *
 * - CONFIG_ETCH_MODEL embeds a model; <etch_model.h> (generated) declares
 *   etch_model_data / etch_model_size. etch_zephyr_load_model() loads it.
 * - CONFIG_ETCH_LOG forwards the runtime's log records to Zephyr logging
 *   (module "etch"); the library calls etch_log_init() itself at boot.
 * - CONFIG_ETCH_PROFILE adds etch_zephyr_execute_profiled().
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef ETCH_ZEPHYR_H
#define ETCH_ZEPHYR_H

#include <stddef.h>
#include <stdint.h>

#include <etch.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Cycle counter etch profiles with: k_cycle_get_32(). */
uint32_t etch_zephyr_cycles(void);

#if defined(CONFIG_ETCH_MODEL_EMBEDDED)
/**
 * etch_program_load() of the model embedded through CONFIG_ETCH_MODEL,
 * verified when CONFIG_ETCH_VERIFY=y.
 */
etch_status_t etch_zephyr_load_model(etch_program_t *program);
#endif

#if defined(CONFIG_ETCH_PROFILE)
/**
 * etch_method_execute_profiled() with k_cycle_get_32(): per_instruction[i]
 * gets instruction i's cycles (n >= etch_method_meta_t.num_instructions).
 * With CONFIG_ETCH_LOG each kernel instruction is logged at info level:
 * "profile: #i <operator> <cycles> cycles", then the total.
 */
etch_status_t etch_zephyr_execute_profiled(etch_method_t *m, uint32_t *per_instruction,
					   size_t n);
#endif

#ifdef __cplusplus
}
#endif

#endif /* ETCH_ZEPHYR_H */
