/*
 * Streaming on the device: one method of a stateful program (its state in
 * mutable buffers, tests/programs) stays loaded and is fed one step per
 * call; every output of every step must equal, byte for byte, what
 * ExecuTorch's own runtime produced executing one loaded method step after
 * step (<model>.<method>.steps/, embedded by CMakeLists.txt). Then
 * etch_method_reset() starts the stream over: step 0 and the rest again,
 * bit-exact, without reloading. testcase.yaml builds it for several
 * programs (float32 running sum, GRU, int8 LSTM, int8 streaming conv).
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#include <string.h>

#include <zephyr/kernel.h>
#include <zephyr/ztest.h>

#include <etch.h>
#include <etch_zephyr.h>
#include <etch_model.h>
#include <stream_steps.h>

#define METHOD CONFIG_TEST_STREAM_METHOD

/* Two streams of one program, each with its own state. */
static uint8_t arena[2][CONFIG_TEST_STREAM_ARENA_BYTES] __aligned(ETCH_PLANNED_BUFFER_ALIGNMENT);
static etch_program_t program;
static etch_method_t stream[2];

/* Sets every input of step k and executes once. */
static void feed(etch_method_t *m, unsigned int k)
{
	etch_status_t st;

	for (size_t i = 0; i < ARRAY_SIZE(etch_step_inputs); i++) {
		const struct etch_step_tensor *t = &etch_step_inputs[i];

		if (t->step != k) {
			continue;
		}
		st = etch_method_set_input(m, t->index, t->data, t->size);
		zassert_equal(st, ETCH_OK, "step %u input %u: set_input 0x%02x", k, t->index, st);
	}
	st = etch_method_execute(m);
	zassert_equal(st, ETCH_OK, "step %u: execute 0x%02x", k, st);
}

/* Number of outputs of step k that differ from ExecuTorch's (0 = all equal). */
static int mismatches(const etch_method_t *m, unsigned int k)
{
	int bad = 0;

	for (size_t i = 0; i < ARRAY_SIZE(etch_step_outputs); i++) {
		const struct etch_step_tensor *t = &etch_step_outputs[i];
		const void *out;
		size_t len;

		if (t->step != k) {
			continue;
		}
		zassert_equal(etch_method_output(m, t->index, &out, &len), ETCH_OK);
		zassert_equal(len, t->size, "step %u output %u: %zu bytes, reference %zu", k,
			      t->index, len, t->size);
		bad += memcmp(out, t->data, len) != 0;
	}
	return bad;
}

static void step_exact(etch_method_t *m, unsigned int k, const char *when)
{
	feed(m, k);
	zassert_equal(mismatches(m, k), 0, "%s: step %u differs from ExecuTorch", when, k);
}

static void load_stream(int s)
{
	size_t used = 0;
	etch_status_t st = etch_zephyr_method_load(&program, METHOD, &stream[s], arena[s],
						   sizeof(arena[s]), &used);

	zassert_equal(st, ETCH_OK, "method load 0x%02x (%zu B needed)", st, used);
}

static void *suite_setup(void)
{
	zassert_equal(etch_zephyr_load_model(&program), ETCH_OK);
	return NULL;
}

static void after(void *fixture)
{
	ARG_UNUSED(fixture);
	(void)etch_method_unload(&stream[0]);
	(void)etch_method_unload(&stream[1]);
}

/* The fixture and its steps are what the test assumes. */
ZTEST(etch_streaming, test_fixture)
{
	etch_method_meta_t meta;
	etch_tensor_info_t info;

	zassert_true(ETCH_STEPS >= 2);
	/* Every .npy of the folder is a step's input or output. */
	zassert_equal(ARRAY_SIZE(etch_step_inputs) + ARRAY_SIZE(etch_step_outputs), ETCH_STEP_FILES);
	zassert_equal(etch_method_meta(&program, METHOD, &meta), ETCH_OK);
	zassert_equal(ARRAY_SIZE(etch_step_inputs), ETCH_STEPS * meta.num_inputs);
	zassert_equal(ARRAY_SIZE(etch_step_outputs), ETCH_STEPS * meta.num_outputs);
	for (size_t i = 0; i < meta.num_outputs; i++) {
		zassert_equal(etch_method_output_info(&program, METHOD, i, &info), ETCH_OK);
		zassert_equal(info.nbytes, etch_step_outputs[i].size);
	}
}

/* One loaded method, steps 0..n-1: each depends on the state the earlier
 * ones left, and equals ExecuTorch's.
 */
ZTEST(etch_streaming, test_steps_bit_exact)
{
	load_stream(0);
	for (unsigned int k = 0; k < ETCH_STEPS; k++) {
		step_exact(&stream[0], k, "first pass");
	}
}

/* The state is kept: step 0's input again, after the whole sequence, does
 * not give step 0's output; etch_method_reset() makes it do so again, and
 * the sequence after it is the same as the first.
 */
ZTEST(etch_streaming, test_reset_starts_over)
{
	load_stream(0);
	for (unsigned int k = 0; k < ETCH_STEPS; k++) {
		feed(&stream[0], k);
	}
	feed(&stream[0], 0);
	zassert_not_equal(mismatches(&stream[0], 0), 0,
			  "step 0 again without reset gave step 0's output: no state kept");

	zassert_equal(etch_method_reset(&stream[0]), ETCH_OK);
	for (unsigned int k = 0; k < ETCH_STEPS; k++) {
		step_exact(&stream[0], k, "after reset");
	}
	/* Twice in a row is the same as once. */
	zassert_equal(etch_method_reset(&stream[0]), ETCH_OK);
	zassert_equal(etch_method_reset(&stream[0]), ETCH_OK);
	step_exact(&stream[0], 0, "after two resets");
}

/* Two streams of one program, interleaved (B one step behind A): each
 * keeps its own state in its own arena.
 */
ZTEST(etch_streaming, test_two_streams)
{
	load_stream(0);
	load_stream(1);
	for (unsigned int k = 0; k <= ETCH_STEPS; k++) {
		if (k < ETCH_STEPS) {
			step_exact(&stream[0], k, "stream A");
		}
		if (k > 0) {
			step_exact(&stream[1], k - 1, "stream B");
		}
	}
	/* Resetting A leaves B's state alone. */
	zassert_equal(etch_method_reset(&stream[0]), ETCH_OK);
	step_exact(&stream[0], 0, "stream A after its reset");
	feed(&stream[1], 0);
	zassert_not_equal(mismatches(&stream[1], 0), 0, "stream B lost its state");
}

/* Errors keep ExecuTorch's codes. */
ZTEST(etch_streaming, test_reset_errors)
{
	zassert_equal(etch_method_reset(NULL), ETCH_INVALID_ARGUMENT);
	load_stream(0);
	zassert_equal(etch_method_unload(&stream[0]), ETCH_OK);
	zassert_equal(etch_method_reset(&stream[0]), ETCH_INVALID_STATE, "reset after unload");
}

ZTEST_SUITE(etch_streaming, NULL, suite_setup, NULL, after, NULL);
