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

/**
 * Loads method `name` of `program` into one caller arena: each planned
 * buffer at ETCH_PLANNED_BUFFER_ALIGNMENT, then the method state (exactly
 * etch_method_meta()'s method_state_bytes). `*used` (may be NULL) gets the
 * bytes the method needs, also when the arena is too small
 * (ETCH_MEMORY_ALLOCATION_FAILED): size the arena from that number.
 * `arena` must be aligned to ETCH_PLANNED_BUFFER_ALIGNMENT.
 */
etch_status_t etch_zephyr_method_load(const etch_program_t *program, const char *name,
				      etch_method_t *method, uint8_t *arena, size_t arena_len,
				      size_t *used);

/**
 * Value of a program's config method (e.g. the int8-I/O quantization
 * parameters "input0_scale", "output0_zp" that ExecuTorch's QuantizeInputs
 * and QuantizeOutputs passes add): a method of no instructions returning
 * one Double or Int. Exactly one of `d` and `i` is non-NULL.
 */
etch_status_t etch_zephyr_config_value(const etch_program_t *program, const char *name,
				       double *d, int64_t *i);

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
