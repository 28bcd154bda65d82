/*
 * etch on Zephyr: glue around the C API in <etch.h>.
 *
 * - CONFIG_ETCH_MODEL embeds a model; <etch_model.h> (generated) declares
 *   etch_model_data / etch_model_size. etch_zephyr_load_model() loads it.
 * - CONFIG_ETCH_LOG forwards the runtime's log records to Zephyr logging
 *   (module "etch"); the library calls etch_log_init() itself at boot.
 * - CONFIG_ETCH_PROFILE adds etch_zephyr_execute_profiled().
 * - CONFIG_ETCH_ETDUMP adds etch_zephyr_execute_etdump() (ExecuTorch's
 *   ETDump of a run) and etch_zephyr_etdump_print() (to the console, for
 *   tools/etdump/from_console.py on the host).
 * - CONFIG_ETCH_MODEL_SLOTS adds etch_zephyr_models_*(): models in two
 *   flash partitions (devicetree nodelabels etch_model_a, etch_model_b),
 *   chosen at boot and updated in the field, verified before activation.
 * - CONFIG_ETCH_PLANNED_MEMORY adds etch_zephyr_planned_method_load(): the
 *   embedded model's planned buffers (one per memory id) as static arrays
 *   sized at build time, each in the memory region the devicetree or
 *   Kconfig names; <etch_planned.h> (generated) has their sizes.
 * - CONFIG_THREAD_STACK_INFO adds etch_zephyr_stack_paint() and
 *   etch_zephyr_stack_used(): the stack one call (an inference) needs, by
 *   stack painting.
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
 * (ETCH_MEMORY_ALLOCATION_FAILED, printed as "etch: method forward: arena
 * 16,384 B given, 18,736 B needed ..."): size the arena from that number.
 * `arena` must be aligned to ETCH_PLANNED_BUFFER_ALIGNMENT. Every failure is
 * printed (etch_zephyr_print_error()); a thread stack smaller than
 * CONFIG_ETCH_STACK_SIZE fails first (etch_zephyr_stack_check()).
 */
etch_status_t etch_zephyr_method_load(const etch_program_t *program, const char *name,
				      etch_method_t *method, uint8_t *arena, size_t arena_len,
				      size_t *used);

#if defined(CONFIG_ETCH_PLANNED_MEMORY)
/**
 * CONFIG_ETCH_PLANNED_MEMORY: loads method CONFIG_ETCH_PLANNED_METHOD of
 * `program` (the embedded model) on the static planned buffers the build
 * made for it, one per memory id, each exactly the program's size and in
 * the memory region the devicetree ("etch,planned-memory") or
 * CONFIG_ETCH_PLANNED_REGIONS chose (<etch_planned.h> has the sizes as
 * macros). `state` (any alignment) holds the method state:
 * etch_method_meta()'s method_state_bytes. One loaded method at a time
 * uses the buffers. Every failure is printed, e.g. "etch: method forward:
 * method state: 16 B given, 39 B needed"; a thread stack smaller than
 * CONFIG_ETCH_STACK_SIZE fails first.
 */
etch_status_t etch_zephyr_planned_method_load(const etch_program_t *program,
					      etch_method_t *method, uint8_t *state,
					      size_t state_len);

/**
 * Planned buffer `k` (memory id k + 1) of CONFIG_ETCH_PLANNED_MEMORY: its
 * address, size and memory region name ("" = ordinary RAM). Any output
 * pointer may be NULL. ETCH_INVALID_ARGUMENT when `k` is not a buffer.
 */
etch_status_t etch_zephyr_planned_buffer(size_t k, void **data, size_t *len,
					 const char **region);
#endif

/**
 * Why `state_len` bytes of method state and `num_planned` planned buffers of
 * `planned_lens[k]` bytes do not fit method `name` of `program`, written to
 * `msg` (NUL-terminated, cut at `msg_len`; empty when they fit), e.g.
 *
 *     planned buffer 0: 16,384 B given, 18,726 B needed; method state: 4 B given, 54 B needed
 *
 * Returns ETCH_OK when they fit, ETCH_MEMORY_ALLOCATION_FAILED when a
 * buffer is short, ETCH_INVALID_ARGUMENT when the number of planned
 * buffers differs. Call it before etch_method_load() (or after it failed)
 * and print `msg`: the C API itself carries no message strings without
 * CONFIG_ETCH_LOG.
 */
etch_status_t etch_zephyr_method_memory_check(const etch_program_t *program, const char *name,
					      size_t state_len, const size_t *planned_lens,
					      size_t num_planned, char *msg, size_t msg_len);

/**
 * printk()s "etch: <call>: 0x<code> <status name>[: <detail>] (at <n>)" for
 * a failed call: the detail from etch_method_error(method) or
 * etch_program_error(program) (either may be NULL) when it is about the
 * same status. etch_zephyr_load_model() and etch_zephyr_method_load() print
 * this way themselves.
 */
void etch_zephyr_print_error(const char *call, etch_status_t st, const etch_program_t *program,
			     const etch_method_t *method);

/** What TLS, a random stack offset and the sentinel may take off a
 * thread's declared stack before etch_zephyr_stack_check() objects.
 */
#define ETCH_ZEPHYR_STACK_SLACK 256

/**
 * The stack guard (CONFIG_THREAD_STACK_INFO): ETCH_OUT_OF_RESOURCES, with a
 * printk naming the thread, its stack and CONFIG_ETCH_STACK_SIZE, when the
 * calling thread's stack is smaller than CONFIG_ETCH_STACK_SIZE (less
 * ETCH_ZEPHYR_STACK_SLACK); ETCH_OK otherwise, and always without
 * CONFIG_THREAD_STACK_INFO. etch_zephyr_load_model() and
 * etch_zephyr_method_load() call it first, so a thread too small for etch
 * is reported instead of overflowing silently. CONFIG_ETCH_STACK_SIZE is
 * what etch needs (measured for the DS-CNN); lower it to what your model
 * measured.
 */
etch_status_t etch_zephyr_stack_check(void);

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

#if defined(CONFIG_THREAD_STACK_INFO)
/**
 * Stack painting around one call, e.g. etch_method_execute():
 *
 *     struct etch_zephyr_stack_probe probe = {0};
 *
 *     if (etch_zephyr_stack_paint(&probe) == 0) {
 *             st = etch_method_execute(m);
 *             used = etch_zephyr_stack_used(&probe);
 *     }
 *
 * etch_zephyr_stack_paint() takes the caller's stack pointer as `top` and
 * fills the current thread's stack below it with a pattern, word by word,
 * from the thread's lowest stack word (above CONFIG_STACK_SENTINEL's word)
 * up to ETCH_ZEPHYR_STACK_PAINT_MARGIN bytes below its own frame (an
 * exception frame stacked while it paints lands in that margin).
 * etch_zephyr_stack_used() then gives the bytes from `top` down to the
 * lowest word overwritten since: what the calls made in between from the
 * same function, in the same thread, needed (their frames and any
 * exception frame stacked on the thread meanwhile). Call both from that
 * one function, in the thread that runs the call.
 *
 * The pattern is CONFIG_INIT_STACKS's (0xAA bytes), so painted memory
 * reads as unused to k_thread_stack_space_get(); painting forgets how deep
 * the thread went before it, which the probe keeps in `thread_peak` and
 * etch_zephyr_stack_thread_used() adds back.
 *
 * -ENOTSUP when the caller's stack pointer is not within the current
 * thread's stack (native_sim, whose Zephyr threads run on host stacks; an
 * interrupt handler) or the stack grows up, -ENOMEM when less than the
 * margin is left below the caller; nothing is painted then.
 */
struct etch_zephyr_stack_probe {
	/** The caller's stack pointer at the last paint. */
	uintptr_t top;
	/** The lowest painted word (== top: nothing painted). */
	uintptr_t bottom;
	/** The thread's high-water mark before the paints (CONFIG_INIT_STACKS). */
	size_t thread_peak;
};

/** Bytes left unpainted below etch_zephyr_stack_paint_below()'s own frame. */
#define ETCH_ZEPHYR_STACK_PAINT_MARGIN 128

/** The stack pointer where this is inlined. */
static inline __attribute__((always_inline)) uintptr_t etch_zephyr_stack_pointer(void)
{
#if defined(__arm__) || defined(__thumb__)
	uintptr_t sp;

	__asm__ volatile("mov %0, sp" : "=r"(sp));
	return sp;
#else
	return (uintptr_t)__builtin_frame_address(0);
#endif
}

/** etch_zephyr_stack_paint() with an explicit `top` (a stack address of the caller). */
int etch_zephyr_stack_paint_below(struct etch_zephyr_stack_probe *probe, uintptr_t top);

/** Paints the current thread's stack below the caller's stack pointer (see above). */
static inline __attribute__((always_inline)) int
etch_zephyr_stack_paint(struct etch_zephyr_stack_probe *probe)
{
	return etch_zephyr_stack_paint_below(probe, etch_zephyr_stack_pointer());
}

/**
 * Bytes of stack used below `probe->top` since the last paint; 0 when
 * nothing was painted.
 */
size_t etch_zephyr_stack_used(const struct etch_zephyr_stack_probe *probe);

#if defined(CONFIG_INIT_STACKS)
/**
 * The current thread's stack high-water mark in bytes (as
 * k_thread_stack_space_get()), including what it used before the paints
 * of `probe` (may be NULL). 0 or k_thread_stack_space_get()'s error.
 */
int etch_zephyr_stack_thread_used(const struct etch_zephyr_stack_probe *probe, size_t *used);
#endif
#endif /* CONFIG_THREAD_STACK_INFO */

/** Base64 characters per console line of an ETDump (a multiple of 4). */
#define ETCH_ETDUMP_CONSOLE_LINE 64

/** Receives one NUL-terminated line (`len` characters, no newline). */
typedef void (*etch_console_line_fn)(const char *line, size_t len, void *ctx);

/**
 * Writes `data` (an ETDump) as text lines to `put`: a begin marker with
 * the byte count, CRC-32 and the clock's ticks per second, base64 lines of
 * ETCH_ETDUMP_CONSOLE_LINE characters, an end marker, each tagged
 * "etch-etdump: ". tools/etdump/from_console.py turns a captured log back
 * into the file. No Zephyr calls (the host tests use it too).
 */
void etch_etdump_console_write(const uint8_t *data, size_t len, uint64_t ticks_per_s,
			       etch_console_line_fn put, void *ctx);

#if defined(CONFIG_ETCH_ETDUMP)
/**
 * etch_method_execute_etdump() into a static buffer of
 * CONFIG_ETCH_ETDUMP_BUFFER_SIZE bytes, timed in hardware cycles
 * (k_cycle_get_64(), or k_cycle_get_32() extended to 64 bits). `*data` and
 * `*len` get the file; it stays valid until the next call. Set the inputs
 * first, as for etch_method_execute(). ETCH_MEMORY_ALLOCATION_FAILED when
 * the buffer is too small (etch_method_error()'s `at` says by how much).
 */
etch_status_t etch_zephyr_execute_etdump(etch_method_t *m, const uint8_t **data, size_t *len);

/** etch_etdump_console_write() to printk, ticks per second from
 * sys_clock_hw_cycles_per_sec(). */
void etch_zephyr_etdump_print(const uint8_t *data, size_t len);
#endif


#if defined(CONFIG_ETCH_MODEL_SLOTS)
/**
 * Models in two flash partitions, A and B (devicetree nodelabels
 * `etch_model_a`, `etch_model_b`), each holding a model image: a 64-byte
 * header (magic, version, length, generation, SHA-256 of the .pte; see
 * etch_image_check() in <etch.h> and `etch image` on the host) and the .pte,
 * executed in place from memory-mapped flash.
 *
 * - etch_zephyr_models_boot() picks the newer image whose header, SHA-256,
 *   etch_program_load() verification and operator check all pass, and falls
 *   back to the other slot.
 * - An update (begin, write..., finish) only ever writes the slot that is
 *   not active: it erases it, writes the .pte, and, only after the image
 *   is checked (length, SHA-256, program verification, every operator
 *   present in this firmware), writes the header with the next generation,
 *   last. A power cut or a refused image leaves the slot without a valid
 *   header, so the next boot takes the active one; the active slot is
 *   never written.
 *
 * The state is caller-owned (no global): one struct per device.
 */
/** Largest flash write block the update handles (bytes). */
#define ETCH_ZEPHYR_MODELS_WRITE_BLOCK_MAX 32

struct etch_zephyr_models {
	/** Slot the program was loaded from (0 = A, 1 = B), -1 for none. */
	int active;
	/** Its generation. */
	uint32_t sequence;
	/** Why the last image was refused (ETCH_IMAGE_FAULT_*, 0 = none). */
	etch_image_fault_t fault;
	/** Operators the last refused program lacked (ETCH_OPERATOR_MISSING). */
	size_t missing_operators;
	/* An update in progress (private). */
	int target;
	size_t image_len;
	size_t received;
	uint8_t header[ETCH_IMAGE_HEADER_LEN];
	/* Bytes not yet a whole flash write block. */
	uint8_t pending[ETCH_ZEPHYR_MODELS_WRITE_BLOCK_MAX];
	size_t pending_len;
};

/**
 * Boot: loads into `*program` (verified) the newer usable image of the two
 * slots, else the other one; prints why a slot was passed over. ETCH_OK
 * sets m->active and m->sequence; ETCH_NOT_FOUND when neither slot holds a
 * usable model (m->active = -1: install one with an update).
 */
etch_status_t etch_zephyr_models_boot(struct etch_zephyr_models *m, etch_program_t *program);

/**
 * Starts an update of `image_len` bytes (header + .pte, as `etch image`
 * writes it) into the slot that is not active: erases it. A length the
 * slot cannot hold is refused (ETCH_INVALID_PROGRAM, fault
 * ETCH_IMAGE_FAULT_LENGTH_OVERFLOW); a flash error gives ETCH_ACCESS_FAILED,
 * a write block above ETCH_ZEPHYR_MODELS_WRITE_BLOCK_MAX ETCH_NOT_SUPPORTED.
 */
etch_status_t etch_zephyr_models_update_begin(struct etch_zephyr_models *m, size_t image_len);

/**
 * The next `len` bytes of the image, in order, in pieces of any size (as
 * they arrive over a UART, BLE or the network). The header is kept in RAM
 * until finish; the .pte goes to the inactive slot. More bytes than
 * announced: ETCH_INVALID_ARGUMENT.
 */
etch_status_t etch_zephyr_models_update_write(struct etch_zephyr_models *m, const void *data,
					      size_t len);

/**
 * Checks the received image and activates it: every announced byte
 * received (else ETCH_INVALID_PROGRAM, fault TRUNCATED), the header valid
 * and its length the received one, the .pte's SHA-256 in flash equal to the
 * header's (HASH_MISMATCH), etch_program_load() with verification, and
 * every operator of every method in this firmware (else
 * ETCH_OPERATOR_MISSING, each missing operator printed and counted in
 * m->missing_operators). Only then the header is written, with generation
 * m->sequence + 1, and `*program` (a handle not in use: unload the methods
 * of the old program first, or pass another handle) holds the new program,
 * m->active the new slot. On a refusal nothing changes: the active slot and
 * m->active stay as they were.
 */
etch_status_t etch_zephyr_models_update_finish(struct etch_zephyr_models *m,
					       etch_program_t *program);

#if defined(CONFIG_ETCH_MODEL_SLOTS_SHELL)
/**
 * Gives the shell commands `etch model status|begin <bytes>|data
 * <base64>|finish` (CONFIG_ETCH_MODEL_SLOTS_SHELL) the state and the
 * program handle to act on: `etch model finish` loads the new program
 * into `program`, so attach a handle whose methods the application does
 * not hold across an update (or reloads them after one). `etch image shell
 * model.etim` on the host prints the lines to send.
 */
void etch_zephyr_models_shell_attach(struct etch_zephyr_models *m, etch_program_t *program);
#endif
#endif

#ifdef __cplusplus
}
#endif

#endif /* ETCH_ZEPHYR_H */
