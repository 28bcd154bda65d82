/*
 * Zephyr glue of the etch module: cycle counter, embedded model, profiling.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>

#include <zephyr/kernel.h>
#include <zephyr/init.h>
#include <zephyr/logging/log.h>
#include <zephyr/sys/printk.h>
#include <zephyr/sys/util.h>

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
	etch_status_t st = etch_zephyr_stack_check();

	if (st != ETCH_OK) {
		return st;
	}
	st = etch_program_load(program, etch_model_data, etch_model_size,
			       IS_ENABLED(CONFIG_ETCH_VERIFY));
	if (st != ETCH_OK) {
		etch_zephyr_print_error("etch_program_load", st, program, NULL);
	}
	return st;
}
#endif

/* "18,726": sizes as the docs and messages write them. */
static const char *fmt_bytes(char buf[16], size_t n)
{
	char digits[24];
	int len = snprintk(digits, sizeof(digits), "%lu", (unsigned long)n);
	int out = 0;

	for (int i = 0; i < len && out < 15; i++) {
		if (i > 0 && (len - i) % 3 == 0 && out < 14) {
			buf[out++] = ',';
		}
		buf[out++] = digits[i];
	}
	buf[out] = '\0';
	return buf;
}

/* Appends to buf[*at..len) (always NUL-terminated; cut when full). */
static void append(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (buf == NULL || len == 0 || *at >= len - 1) {
		return;
	}
	va_start(ap, fmt);
	n = vsnprintk(buf + *at, len - *at, fmt, ap);
	va_end(ap);
	if (n > 0) {
		*at = MIN(*at + (size_t)n, len - 1);
	}
}

etch_status_t etch_zephyr_method_memory_check(const etch_program_t *program, const char *name,
					      size_t state_len, const size_t *planned_lens,
					      size_t num_planned, char *msg, size_t msg_len)
{
	etch_method_meta_t meta;
	char a[16], b[16];
	size_t at = 0;
	etch_status_t st = etch_method_meta(program, name, &meta);

	if (msg != NULL && msg_len > 0) {
		msg[0] = '\0';
	}
	if (st != ETCH_OK) {
		append(msg, msg_len, &at, "%s: no such method (%s)", name, etch_status_str(st));
		return st;
	}
	if (num_planned != meta.num_planned_buffers) {
		append(msg, msg_len, &at, "%s: %u planned buffer(s) given, %u needed", name,
		       (unsigned int)num_planned, (unsigned int)meta.num_planned_buffers);
		return ETCH_INVALID_ARGUMENT;
	}
	st = ETCH_OK;
	for (size_t k = 0; k < num_planned; k++) {
		size_t need;
		etch_status_t e = etch_method_planned_buffer_size(program, name, k, &need);

		if (e != ETCH_OK) {
			return e;
		}
		if (planned_lens == NULL || planned_lens[k] < need) {
			append(msg, msg_len, &at, "%splanned buffer %u: %s B given, %s B needed",
			       at ? "; " : "", (unsigned int)k,
			       fmt_bytes(a, planned_lens ? planned_lens[k] : 0), fmt_bytes(b, need));
			st = ETCH_MEMORY_ALLOCATION_FAILED;
		}
	}
	if (state_len < meta.method_state_bytes) {
		append(msg, msg_len, &at, "%smethod state: %s B given, %s B needed", at ? "; " : "",
		       fmt_bytes(a, state_len), fmt_bytes(b, meta.method_state_bytes));
		st = ETCH_MEMORY_ALLOCATION_FAILED;
	}
	return st;
}

#if defined(CONFIG_THREAD_STACK_INFO)
etch_status_t etch_zephyr_stack_check(void)
{
	const struct k_thread *t = k_current_get();
	/* The declared size, less what TLS or a random offset took from it. */
	size_t size = t->stack_info.size + t->stack_info.delta;
	char a[16], b[16];

	if (k_is_in_isr() || size + ETCH_ZEPHYR_STACK_SLACK >= CONFIG_ETCH_STACK_SIZE) {
		return ETCH_OK;
	}
	const char *name = k_thread_name_get((k_tid_t)t);

	if (name != NULL && name[0] == '\0') {
		name = NULL;
	}
	printk("etch: %s%s has a %s B stack; etch needs CONFIG_ETCH_STACK_SIZE = %s B: "
	       "raise the thread's stack (CONFIG_MAIN_STACK_SIZE for main), or set "
	       "CONFIG_ETCH_STACK_SIZE to what your model measured (docs/zephyr.md)\n",
	       name ? "thread " : "the calling thread", name ? name : "", fmt_bytes(a, size),
	       fmt_bytes(b, CONFIG_ETCH_STACK_SIZE));
	return ETCH_OUT_OF_RESOURCES;
}
#else
etch_status_t etch_zephyr_stack_check(void)
{
	return ETCH_OK;
}
#endif

etch_status_t etch_zephyr_method_load(const etch_program_t *program, const char *name,
				      etch_method_t *method, uint8_t *arena, size_t arena_len,
				      size_t *used)
{
	etch_method_meta_t meta;
	void *planned[ETCH_MAX_PLANNED_BUFFERS];
	size_t lens[ETCH_MAX_PLANNED_BUFFERS];
	size_t at = 0;
	char a[16], b[16];
	etch_status_t st = etch_zephyr_stack_check();

	if (st != ETCH_OK) {
		return st;
	}
	st = etch_method_meta(program, name, &meta);
	if (st != ETCH_OK) {
		printk("etch: method %s: %s\n", name, etch_status_str(st));
		return st;
	}
	if (meta.num_planned_buffers > ETCH_MAX_PLANNED_BUFFERS) {
		printk("etch: method %s: %u planned buffers, ETCH_MAX_PLANNED_BUFFERS is %u\n",
		       name, (unsigned int)meta.num_planned_buffers,
		       (unsigned int)ETCH_MAX_PLANNED_BUFFERS);
		return ETCH_NOT_SUPPORTED;
	}
	for (size_t k = 0; k < meta.num_planned_buffers; k++) {
		st = etch_method_planned_buffer_size(program, name, k, &lens[k]);
		if (st != ETCH_OK) {
			return st;
		}
		at = ROUND_UP(at, ETCH_PLANNED_BUFFER_ALIGNMENT);
		planned[k] = arena + MIN(at, arena_len);
		at += lens[k];
	}
	if (used != NULL) {
		*used = at + meta.method_state_bytes;
	}
	if (at + meta.method_state_bytes > arena_len) {
		printk("etch: method %s: arena %s B given, %s B needed (%u planned buffer(s) "
		       "and %u B of method state)\n",
		       name, fmt_bytes(a, arena_len), fmt_bytes(b, at + meta.method_state_bytes),
		       (unsigned int)meta.num_planned_buffers,
		       (unsigned int)meta.method_state_bytes);
		return ETCH_MEMORY_ALLOCATION_FAILED;
	}
	st = etch_method_load(method, program, name, arena + at, meta.method_state_bytes, planned,
			      lens, meta.num_planned_buffers);
	if (st != ETCH_OK) {
		etch_zephyr_print_error("etch_method_load", st, NULL, method);
	}
	return st;
}

#if defined(CONFIG_ETCH_PLANNED_MEMORY)
#include <etch_planned.h>

etch_status_t etch_zephyr_planned_buffer(size_t k, void **data, size_t *len,
					 const char **region)
{
	if (k >= ETCH_PLANNED_NUM_BUFFERS) {
		return ETCH_INVALID_ARGUMENT;
	}
	if (data != NULL) {
		*data = etch_planned_buffers[k];
	}
	if (len != NULL) {
		*len = etch_planned_sizes[k];
	}
	if (region != NULL) {
		*region = etch_planned_regions[k];
	}
	return ETCH_OK;
}

etch_status_t etch_zephyr_planned_method_load(const etch_program_t *program,
					      etch_method_t *method, uint8_t *state,
					      size_t state_len)
{
	void *planned[MAX(ETCH_PLANNED_NUM_BUFFERS, 1)];
	char why[160];
	etch_status_t st = etch_zephyr_stack_check();

	if (st != ETCH_OK) {
		return st;
	}
	for (size_t k = 0; k < ETCH_PLANNED_NUM_BUFFERS; k++) {
		planned[k] = etch_planned_buffers[k];
	}
	/* The program may not be the one the buffers were sized from (e.g. a
	 * model from a flash partition): say what does not fit.
	 */
	st = etch_zephyr_method_memory_check(program, ETCH_PLANNED_METHOD, state_len,
					     etch_planned_sizes, ETCH_PLANNED_NUM_BUFFERS, why,
					     sizeof(why));
	if (st != ETCH_OK) {
		printk("etch: method %s: %s\n", ETCH_PLANNED_METHOD, why);
		return st;
	}
	st = etch_method_load(method, program, ETCH_PLANNED_METHOD, state, state_len, planned,
			      etch_planned_sizes, ETCH_PLANNED_NUM_BUFFERS);
	if (st != ETCH_OK) {
		etch_zephyr_print_error("etch_method_load", st, NULL, method);
	}
	return st;
}
#endif

void etch_zephyr_print_error(const char *call, etch_status_t st, const etch_program_t *program,
			     const etch_method_t *method)
{
	etch_error_t e = {0};
	bool detail = (method != NULL && etch_method_error(method, &e) == ETCH_OK) ||
		      (program != NULL && etch_program_error(program, &e) == ETCH_OK);

	printk("etch: %s: 0x%02x %s", call, (unsigned int)st, etch_status_str(st));
	if (detail && e.status == st) {
		if (e.what_len > 0) {
			printk(": %.*s", (int)e.what_len, e.what);
		}
		printk(" (at %u)", (unsigned int)e.at);
	}
	printk("\n");
}

etch_status_t etch_zephyr_config_value(const etch_program_t *program, const char *name,
				       double *d, int64_t *i)
{
	/* Config methods have no planned memory and a few bytes of state. */
	static uint8_t state[64] __aligned(8);
	static etch_method_t config;
	static K_MUTEX_DEFINE(lock);
	etch_status_t st;

	k_mutex_lock(&lock, K_FOREVER);
	st = etch_zephyr_method_load(program, name, &config, state, sizeof(state), NULL);
	if (st == ETCH_OK) {
		st = etch_method_execute(&config);
	}
	if (st == ETCH_OK) {
		st = d != NULL ? etch_method_output_double(&config, 0, d)
			       : etch_method_output_int(&config, 0, i);
	}
	k_mutex_unlock(&lock);
	return st;
}

#if defined(CONFIG_THREAD_STACK_INFO)
/* CONFIG_INIT_STACKS's fill: k_thread_stack_space_get() counts it as unused. */
#define STACK_PAINT 0xAAAAAAAAu

/* The current thread's stack as word addresses [*low, *high), without
 * CONFIG_STACK_SENTINEL's word (the lowest; checked on every switch).
 */
static void stack_bounds(uintptr_t *low, uintptr_t *high)
{
	const struct k_thread *t = k_current_get();
	uintptr_t start = t->stack_info.start;

	if (IS_ENABLED(CONFIG_STACK_SENTINEL)) {
		start += 4;
	}
	*low = ROUND_UP(start, 4);
	*high = ROUND_DOWN(t->stack_info.start + t->stack_info.size, 4);
}

__noinline int etch_zephyr_stack_paint_below(struct etch_zephyr_stack_probe *probe,
					     uintptr_t top)
{
	uintptr_t low;
	uintptr_t high;

	probe->top = top;
	probe->bottom = top;
	if (IS_ENABLED(CONFIG_STACK_GROWS_UP) || k_is_in_isr()) {
		return -ENOTSUP;
	}
	stack_bounds(&low, &high);
	if (top <= low || top > high) {
		return -ENOTSUP; /* not on this thread's stack (native_sim: host stacks) */
	}
#if defined(CONFIG_INIT_STACKS)
	size_t used;

	if (etch_zephyr_stack_thread_used(probe, &used) == 0) {
		probe->thread_peak = used;
	}
#endif
	/* From here on no calls: nothing below this frame is in use but what
	 * an exception stacks, and that lands in the margin.
	 */
	uintptr_t sp = ROUND_DOWN(etch_zephyr_stack_pointer(), 4);

	if (sp < low + ETCH_ZEPHYR_STACK_PAINT_MARGIN + 4) {
		return -ENOMEM; /* the stack is (nearly) full already */
	}
	uintptr_t end = sp - ETCH_ZEPHYR_STACK_PAINT_MARGIN;

	for (uintptr_t w = low; w < end; w += 4) {
		*(volatile uint32_t *)w = STACK_PAINT;
	}
	probe->bottom = low;
	return 0;
}

size_t etch_zephyr_stack_used(const struct etch_zephyr_stack_probe *probe)
{
	uintptr_t w = probe->bottom;

	while (w < probe->top && *(const volatile uint32_t *)w == STACK_PAINT) {
		w += 4;
	}
	return probe->top - w;
}

#if defined(CONFIG_INIT_STACKS)
int etch_zephyr_stack_thread_used(const struct etch_zephyr_stack_probe *probe, size_t *used)
{
	const struct k_thread *t = k_current_get();
	size_t unused;
	int ret = k_thread_stack_space_get(t, &unused);

	if (ret == 0) {
		*used = t->stack_info.size - unused;
		if (probe != NULL && probe->thread_peak > *used) {
			*used = probe->thread_peak;
		}
	}
	return ret;
}
#endif
#endif /* CONFIG_THREAD_STACK_INFO */

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

#if defined(CONFIG_ETCH_ETDUMP)
static uint8_t etdump_buf[CONFIG_ETCH_ETDUMP_BUFFER_SIZE] __aligned(8);

static uint64_t etch_zephyr_cycles64(void)
{
#if defined(CONFIG_TIMER_HAS_64BIT_CYCLE_COUNTER)
	return k_cycle_get_64();
#else
	/* Extended from 32 bits: correct while runs between readings are
	 * shorter than one wrap of the counter.
	 */
	static uint64_t high;
	static uint32_t last;
	uint32_t now = k_cycle_get_32();

	if (now < last) {
		high += (uint64_t)1 << 32;
	}
	last = now;
	return high | now;
#endif
}

etch_status_t etch_zephyr_execute_etdump(etch_method_t *m, const uint8_t **data, size_t *len)
{
	size_t written = 0;
	etch_status_t st = etch_method_execute_etdump(m, etch_zephyr_cycles64, etdump_buf,
						      sizeof(etdump_buf), &written);

	if (st == ETCH_OK) {
		*data = etdump_buf;
		*len = written;
	}
	return st;
}

static void print_line(const char *line, size_t len, void *ctx)
{
	ARG_UNUSED(len);
	ARG_UNUSED(ctx);
	printk("%s\n", line);
}

void etch_zephyr_etdump_print(const uint8_t *data, size_t len)
{
	etch_etdump_console_write(data, len, sys_clock_hw_cycles_per_sec(), print_line, NULL);
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
