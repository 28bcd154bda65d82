/*
 * etch on Zephyr, through the module: the model embedded by
 * CONFIG_ETCH_MODEL runs bit-exactly against ExecuTorch's reference output,
 * the build selected exactly its kernels, and failures give ExecuTorch's
 * exact error codes. testcase.yaml builds this for several models and
 * configurations (log, verify, profile, registry size, restricted
 * selection).
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#include <errno.h>
#include <string.h>

#include <zephyr/kernel.h>
#include <zephyr/ztest.h>

#include <etch.h>
#include <etch_zephyr.h>
#include <etch_model.h>
#include <ref_input.h>
#include <ref_output.h>

#define METHOD "forward"

static uint8_t arena[CONFIG_TEST_ETCH_ARENA_BYTES] __aligned(ETCH_PLANNED_BUFFER_ALIGNMENT);
/* A writable copy of the model, for corruption. */
static uint8_t model_copy[ETCH_MODEL_SIZE] __aligned(ETCH_PROGRAM_ALIGNMENT);

static etch_program_t program;
static etch_method_t method;
static etch_method_meta_t meta;
static void *planned[ETCH_MAX_PLANNED_BUFFERS];
static size_t planned_lens[ETCH_MAX_PLANNED_BUFFERS];
static uint8_t *state;

/* Lays out the planned buffers (16-byte aligned) and the state in arena. */
static void plan_memory(const etch_program_t *p)
{
	size_t used = 0;

	zassert_equal(etch_method_meta(p, METHOD, &meta), ETCH_OK);
	zassert_true(meta.num_planned_buffers <= ETCH_MAX_PLANNED_BUFFERS);
	for (size_t i = 0; i < meta.num_planned_buffers; i++) {
		zassert_equal(etch_method_planned_buffer_size(p, METHOD, i, &planned_lens[i]),
			      ETCH_OK);
		used = ROUND_UP(used, ETCH_PLANNED_BUFFER_ALIGNMENT);
		planned[i] = &arena[used];
		used += planned_lens[i];
	}
	zassert_true(used + meta.method_state_bytes <= sizeof(arena),
		     "arena too small: %zu bytes needed",
		     used + meta.method_state_bytes);
	state = &arena[used];
}

static etch_status_t load_method(size_t state_len)
{
	return etch_method_load(&method, &program, METHOD, state, state_len, planned,
				planned_lens, meta.num_planned_buffers);
}

static void *suite_setup(void)
{
	zassert_equal(etch_zephyr_load_model(&program), ETCH_OK);
	plan_memory(&program);
	return NULL;
}

static void skip_if_selection_restricted(void)
{
	if (CONFIG_TEST_ETCH_MISSING_OPS != 0) {
		ztest_test_skip();
	}
}

ZTEST(etch, test_program_and_meta)
{
	size_t n;
	const char *name;
	etch_tensor_info_t in, out;

	zassert_equal((uintptr_t)etch_model_data % 16, 0, "model not 16-byte aligned");
	zassert_equal(etch_model_size, ETCH_MODEL_SIZE);
	zassert_equal(etch_program_num_methods(&program, &n), ETCH_OK);
	/* int8-I/O exports add constant methods (input0_scale, ...). */
	bool found = false;

	for (size_t i = 0; i < n; i++) {
		zassert_equal(etch_program_method_name(&program, i, &name), ETCH_OK);
		found |= strcmp(name, METHOD) == 0;
	}
	zassert_true(found, "no method " METHOD);
	zassert_equal(etch_program_method_name(&program, n, &name), ETCH_INVALID_ARGUMENT);
	zassert_equal(meta.num_inputs, 1);
	zassert_equal(meta.num_outputs, 1);
	zassert_true(meta.num_instructions > 0);
	zassert_equal(etch_method_input_info(&program, METHOD, 0, &in), ETCH_OK);
	zassert_equal(in.nbytes, REF_INPUT_SIZE, "input is %zu bytes", in.nbytes);
	zassert_equal(etch_method_output_info(&program, METHOD, 0, &out), ETCH_OK);
	zassert_equal(out.nbytes, REF_OUTPUT_SIZE, "output is %zu bytes", out.nbytes);
	etch_status_t st = etch_method_meta(&program, "no_such_method", &meta);

	/* ExecuTorch's code for an unknown method name. */
	zassert_equal(st, ETCH_INVALID_ARGUMENT, "missing method: 0x%02x", st);
	zassert_equal(etch_method_meta(&program, METHOD, &meta), ETCH_OK);
}

/* The registry holds exactly the selection, with the configured capacity. */
ZTEST(etch, test_selection)
{
	size_t kernels = etch_kernel_count();

	zassert_equal(kernels, CONFIG_TEST_ETCH_KERNELS, "%zu kernels linked", kernels);
	zassert_equal(etch_kernel_registry_capacity(),
		      CONFIG_ETCH_KERNEL_REGISTRY_SIZE ? CONFIG_ETCH_KERNEL_REGISTRY_SIZE
						       : kernels);
}

ZTEST(etch, test_bit_exact)
{
	const void *out;
	size_t out_len;

	skip_if_selection_restricted();
	zassert_equal(load_method(meta.method_state_bytes), ETCH_OK);

	/* Every kernel instruction calls a linked kernel, and every linked
	 * kernel is called: the selection is exactly the model's.
	 */
	size_t used_kernels = 0;

	for (size_t k = 0; k < etch_kernel_count(); k++) {
		const char *kname;
		size_t klen;

		zassert_equal(etch_kernel_name(k, &kname, &klen), ETCH_OK);
		for (size_t i = 0; i < meta.num_instructions; i++) {
			const char *op;
			size_t len;

			if (etch_method_instruction_operator(&method, i, &op, &len) == ETCH_OK &&
			    len == klen && memcmp(op, kname, len) == 0) {
				used_kernels++;
				break;
			}
		}
	}
	zassert_equal(used_kernels, etch_kernel_count(), "a linked kernel is never called");

	for (int run = 0; run < 2; run++) {
		zassert_equal(etch_method_set_input(&method, 0, ref_input_data, ref_input_size),
			      ETCH_OK);
		zassert_equal(etch_method_execute(&method), ETCH_OK);
		zassert_equal(etch_method_output(&method, 0, &out, &out_len), ETCH_OK);
		zassert_equal(out_len, ref_output_size);
		zassert_mem_equal(out, ref_output_data, out_len, "run %d differs from ExecuTorch",
				  run);
	}
	/* A wrong input size is refused, not truncated. */
	zassert_equal(etch_method_set_input(&method, 0, ref_input_data, ref_input_size - 1),
		      ETCH_INVALID_ARGUMENT);
}

ZTEST(etch, test_state_one_byte_short)
{
	etch_error_t err;

	skip_if_selection_restricted();
	zassert_equal(load_method(meta.method_state_bytes - 1), ETCH_MEMORY_ALLOCATION_FAILED);
	zassert_equal(etch_method_error(&method, &err), ETCH_OK);
	zassert_equal(err.status, ETCH_MEMORY_ALLOCATION_FAILED);
	zassert_equal(err.at, 1, "shortfall %u", err.at);
	/* Messages exist only in builds with logging (a level above "off"). */
#if defined(CONFIG_ETCH_LOG) && CONFIG_ETCH_LOG_LEVEL > 0
	zassert_true(err.what != NULL && err.what_len > 0);
#else
	zassert_is_null(err.what);
	zassert_equal(err.what_len, 0);
#endif
}

ZTEST(etch, test_planned_buffer_one_byte_short)
{
	skip_if_selection_restricted();
	zassert_true(meta.num_planned_buffers > 0);
	planned_lens[0]--;
	etch_status_t st = load_method(meta.method_state_bytes);

	planned_lens[0]++;
	zassert_equal(st, ETCH_MEMORY_ALLOCATION_FAILED);
}

/* 18671 -> "18,671" (below 10^9), as the glue writes sizes. */
static const char *with_commas(char buf[16], size_t n)
{
	if (n >= 1000000) {
		snprintk(buf, 16, "%u,%03u,%03u", (unsigned int)(n / 1000000),
			 (unsigned int)(n / 1000 % 1000), (unsigned int)(n % 1000));
	} else if (n >= 1000) {
		snprintk(buf, 16, "%u,%03u", (unsigned int)(n / 1000), (unsigned int)(n % 1000));
	} else {
		snprintk(buf, 16, "%u", (unsigned int)n);
	}
	return buf;
}

/* The glue's explanation of short memory, exact text:
 * planned buffer 0 one byte short and no state (tiny_cm_m33_int8io: "planned
 * buffer 0: 47 B given, 48 B needed; method state: 0 B given, 5 B needed";
 * the DS-CNN's sizes have thousands separators).
 */
ZTEST(etch, test_memory_check_message)
{
	char msg[160];
	size_t lens[ETCH_MAX_PLANNED_BUFFERS];
	size_t n = meta.num_planned_buffers;
	char want[160];

	zassert_true(n > 0);
	memcpy(lens, planned_lens, sizeof(lens));
	zassert_equal(etch_zephyr_method_memory_check(&program, METHOD, meta.method_state_bytes,
						      lens, n, msg, sizeof(msg)),
		      ETCH_OK);
	zassert_str_equal(msg, "");

	lens[0] = planned_lens[0] - 1;
	char a[16], b[16], c[16];

	snprintk(want, sizeof(want),
		 "planned buffer 0: %s B given, %s B needed; method state: 0 B given, %s B needed",
		 with_commas(a, lens[0]), with_commas(b, planned_lens[0]),
		 with_commas(c, meta.method_state_bytes));
	zassert_equal(etch_zephyr_method_memory_check(&program, METHOD, 0, lens, n, msg,
						      sizeof(msg)),
		      ETCH_MEMORY_ALLOCATION_FAILED);
	zassert_str_equal(msg, want);

	/* The number of buffers differs. */
	snprintk(want, sizeof(want), "forward: %u planned buffer(s) given, %u needed",
		 (unsigned int)(n - 1), (unsigned int)n);
	zassert_equal(etch_zephyr_method_memory_check(&program, METHOD, meta.method_state_bytes,
						      lens, n - 1, msg, sizeof(msg)),
		      ETCH_INVALID_ARGUMENT);
	zassert_str_equal(msg, want);

	/* A short message buffer is cut, always terminated. */
	zassert_equal(etch_zephyr_method_memory_check(&program, METHOD, 0, lens, n, msg, 8),
		      ETCH_MEMORY_ALLOCATION_FAILED);
	zassert_str_equal(msg, "planned");

	zassert_equal(etch_zephyr_method_memory_check(&program, "nope", 0, lens, n, msg,
						      sizeof(msg)),
		      ETCH_INVALID_ARGUMENT);
	zassert_true(strncmp(msg, "nope: no such method", 20) == 0, "%s", msg);
}

/* etch_zephyr_method_load() with an arena one byte short: the status, and
 * `used` says what the arena needs.
 */
ZTEST(etch, test_arena_one_byte_short)
{
	size_t used = 0, need = 0;

	skip_if_selection_restricted();
	zassert_equal(etch_zephyr_method_load(&program, METHOD, &method, arena, sizeof(arena), &need),
		      ETCH_OK);
	zassert_equal(etch_zephyr_method_load(&program, METHOD, &method, arena, need - 1, &used),
		      ETCH_MEMORY_ALLOCATION_FAILED);
	zassert_equal(used, need);
}

/* The stack guard: the ztest thread (CONFIG_ZTEST_STACK_SIZE = 8192) is
 * above CONFIG_ETCH_STACK_SIZE; a 1 KiB thread is refused.
 */
static etch_status_t small_thread_status;
static K_THREAD_STACK_DEFINE(small_stack, 1024);
static struct k_thread small_thread;

static void small_thread_entry(void *a, void *b, void *c)
{
	ARG_UNUSED(a);
	ARG_UNUSED(b);
	ARG_UNUSED(c);
	small_thread_status = etch_zephyr_stack_check();
}

ZTEST(etch, test_stack_guard)
{
	zassert_equal(etch_zephyr_stack_check(), ETCH_OK);
	k_thread_create(&small_thread, small_stack, K_THREAD_STACK_SIZEOF(small_stack),
			small_thread_entry, NULL, NULL, NULL, K_PRIO_PREEMPT(1), 0, K_NO_WAIT);
	zassert_equal(k_thread_join(&small_thread, K_SECONDS(5)), 0);
	zassert_equal(small_thread_status, ETCH_OUT_OF_RESOURCES);
}

ZTEST(etch, test_missing_operator)
{
	etch_error_t err;

	if (CONFIG_TEST_ETCH_MISSING_OPS == 0) {
		ztest_test_skip();
	}
	zassert_equal(load_method(meta.method_state_bytes), ETCH_OPERATOR_MISSING);
	zassert_equal(etch_method_error(&method, &err), ETCH_OK);
	zassert_equal(err.at, CONFIG_TEST_ETCH_MISSING_OPS, "%u operators missing", err.at);
}

ZTEST(etch, test_corrupted_identifier)
{
	etch_program_t p;

	/* "ET12" at bytes 4..7 is the flatbuffer file identifier. */
	memcpy(model_copy, etch_model_data, ETCH_MODEL_SIZE);
	model_copy[5] ^= 0xff;
	zassert_equal(etch_program_load(&p, model_copy, ETCH_MODEL_SIZE, true),
		      ETCH_INVALID_PROGRAM);
	zassert_equal(etch_program_load(&p, model_copy, ETCH_MODEL_SIZE, false),
		      ETCH_INVALID_PROGRAM);
	/* Truncated and misaligned copies are refused too. */
	memcpy(model_copy, etch_model_data, ETCH_MODEL_SIZE);
	zassert_equal(etch_program_load(&p, model_copy, 7, true), ETCH_INVALID_PROGRAM);
	zassert_equal(etch_program_load(&p, model_copy + 1, ETCH_MODEL_SIZE - 1, true),
		      ETCH_INVALID_ARGUMENT);
	zassert_equal(etch_program_load(&p, model_copy, ETCH_MODEL_SIZE, true), ETCH_OK);
}

/* A corruption deep in the file: whole-program verification rejects it at
 * load; without it the program loads and the method load finds it. Both
 * ways an error code, never a wrong read.
 */
ZTEST(etch, test_corrupted_deep)
{
#if CONFIG_TEST_ETCH_DEEP_CORRUPTION < 0
	ztest_test_skip();
#else
	etch_program_t p;
	etch_method_t m;
	etch_method_meta_t mm;

	memcpy(model_copy, etch_model_data, ETCH_MODEL_SIZE);
	model_copy[CONFIG_TEST_ETCH_DEEP_CORRUPTION] ^= 0xff;
	etch_status_t st = etch_program_load(&p, model_copy, ETCH_MODEL_SIZE, true);

	if (IS_ENABLED(CONFIG_ETCH_VERIFY)) {
		zassert_equal(st, ETCH_INVALID_PROGRAM, "verified load: 0x%02x", st);
		return;
	}
	/* Without the verify feature, verify=true means the header check. */
	zassert_equal(st, ETCH_OK, "unverified load: 0x%02x", st);
	zassert_equal(etch_method_meta(&p, METHOD, &mm), ETCH_OK);
	zassert_equal(etch_method_load(&m, &p, METHOD, state, meta.method_state_bytes, planned,
				       planned_lens, meta.num_planned_buffers),
		      ETCH_INVALID_PROGRAM);
#endif
}

ZTEST(etch, test_null_arguments)
{
	zassert_equal(etch_program_load(NULL, etch_model_data, etch_model_size, true),
		      ETCH_INVALID_ARGUMENT);
	zassert_equal(etch_method_execute(NULL), ETCH_INVALID_ARGUMENT);
	zassert_str_equal(etch_status_str(ETCH_OPERATOR_MISSING), "OperatorMissing");
	zassert_str_equal(etch_status_str(ETCH_MEMORY_ALLOCATION_FAILED),
			  "MemoryAllocationFailed");
	zassert_str_equal(etch_status_str(0xdead), "Unknown");
}

ZTEST(etch, test_profile)
{
#if defined(CONFIG_ETCH_PROFILE)
	static uint32_t cycles[64];
	const void *out;
	size_t out_len;
	etch_error_t err;

	skip_if_selection_restricted();
	zassert_true(meta.num_instructions <= ARRAY_SIZE(cycles));
	zassert_equal(load_method(meta.method_state_bytes), ETCH_OK);
	zassert_equal(etch_method_set_input(&method, 0, ref_input_data, ref_input_size),
		      ETCH_OK);
	/* Too short a cycle array is refused before anything runs. */
	zassert_equal(etch_zephyr_execute_profiled(&method, cycles, meta.num_instructions - 1),
		      ETCH_INVALID_ARGUMENT);
	zassert_equal(etch_method_error(&method, &err), ETCH_OK);
	zassert_equal(err.at, meta.num_instructions);
	zassert_equal(etch_zephyr_execute_profiled(&method, cycles, meta.num_instructions),
		      ETCH_OK);
	zassert_equal(etch_method_output(&method, 0, &out, &out_len), ETCH_OK);
	zassert_mem_equal(out, ref_output_data, ref_output_size);
#else
	ztest_test_skip();
#endif
}

#if defined(CONFIG_THREAD_STACK_INFO)
/* Writes `n` bytes of stack (a volatile array the compiler must keep). */
static __noinline void use_stack(size_t n)
{
	volatile uint8_t buf[512];

	for (size_t i = 0; i < n && i < sizeof(buf); i++) {
		buf[i] = (uint8_t)i;
	}
}

/* Stack painting (<etch_zephyr.h>): a callee's 512-byte array is seen; on
 * native_sim, whose threads run on host stacks, nothing is painted.
 */
ZTEST(etch, test_stack_paint)
{
	struct etch_zephyr_stack_probe probe = {0};
	int ret = etch_zephyr_stack_paint(&probe);

	if (IS_ENABLED(CONFIG_ARCH_POSIX)) {
		zassert_equal(ret, -ENOTSUP, "paint on native_sim: %d", ret);
		zassert_equal(etch_zephyr_stack_used(&probe), 0);
		return;
	}
	zassert_equal(ret, 0, "paint: %d", ret);
	zassert_true(etch_zephyr_stack_used(&probe) < 512, "nothing ran yet");
	use_stack(512);
	size_t used = etch_zephyr_stack_used(&probe);

	/* The array, its frame and at most one exception frame (104 B). */
	zassert_true(used >= 512 && used <= 512 + 64 + 104, "used %u", (unsigned int)used);
#if defined(CONFIG_INIT_STACKS)
	size_t thread;

	zassert_equal(etch_zephyr_stack_thread_used(&probe, &thread), 0);
	zassert_true(thread >= used, "thread %u < inference %u", (unsigned int)thread,
		     (unsigned int)used);
#endif
}
#endif

ZTEST_SUITE(etch, NULL, suite_setup, NULL, NULL, NULL);
