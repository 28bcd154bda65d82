/*
 * Models in two flash partitions (CONFIG_ETCH_MODEL_SLOTS) on a flash
 * simulator (native_sim's, or qemu_riscv32's in a RAM region): the boot picks the newer usable image and falls back to
 * the other; an update goes to the inactive slot and is activated only
 * after its length, SHA-256, program verification and operators are
 * checked; corrupted, truncated and foreign updates and power cuts leave
 * the active model as it was, byte for byte.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#include <string.h>

#include <zephyr/kernel.h>
#include <zephyr/device.h>
#include <zephyr/storage/flash_map.h>
#include <zephyr/drivers/flash/flash_simulator.h>
#include <zephyr/ztest.h>

#include <etch.h>
#include <etch_zephyr.h>
#include <etch_model.h>
#include <first_input.h>
#include <first_output.h>
#include <second_model.h>
#include <second_input.h>
#include <second_output.h>
#include <foreign_model.h>

#define SLOT_A 0
#define SLOT_B 1
#define IMAGE_MAX (ETCH_IMAGE_HEADER_LEN + 16384)

static const uint8_t slot_ids[2] = {FIXED_PARTITION_ID(etch_model_a),
				    FIXED_PARTITION_ID(etch_model_b)};
static uint8_t image[IMAGE_MAX];
static uint8_t arena[32768] __aligned(ETCH_PLANNED_BUFFER_ALIGNMENT);
static uint8_t snapshot[IMAGE_MAX];
static struct etch_zephyr_models models;
static etch_program_t program;

static uint8_t *slot_memory(int s)
{
	const struct flash_area *fa;
	size_t size;
	uint8_t *mem;

	zassert_ok(flash_area_open(slot_ids[s], &fa));
	mem = flash_simulator_get_memory(fa->fa_dev, &size);
	zassert_not_null(mem);
	mem += fa->fa_off;
	flash_area_close(fa);
	return mem;
}

static size_t slot_size(int s)
{
	const struct flash_area *fa;
	size_t n;

	zassert_ok(flash_area_open(slot_ids[s], &fa));
	n = fa->fa_size;
	flash_area_close(fa);
	return n;
}

/* Raw flash access, as a bootloader or a half-finished write leaves it. */
static void slot_erase(int s)
{
	const struct flash_area *fa;

	zassert_ok(flash_area_open(slot_ids[s], &fa));
	zassert_ok(flash_area_erase(fa, 0, fa->fa_size));
	flash_area_close(fa);
}

static void slot_write(int s, size_t off, const void *data, size_t len)
{
	const struct flash_area *fa;

	zassert_ok(flash_area_open(slot_ids[s], &fa));
	zassert_ok(flash_area_write(fa, off, data, len));
	flash_area_close(fa);
}

/* Header + .pte in `image`; returns the image's length. */
static size_t make_image(const uint8_t *pte, size_t len, uint32_t seq)
{
	zassert_true(ETCH_IMAGE_HEADER_LEN + len <= sizeof(image));
	memcpy(&image[ETCH_IMAGE_HEADER_LEN], pte, len);
	zassert_equal(etch_image_header(image, ETCH_IMAGE_HEADER_LEN, pte, len, seq), ETCH_OK);
	return ETCH_IMAGE_HEADER_LEN + len;
}

/* Sends image[0..len) in pieces of 100 bytes (the header split across
 * two), announcing `announced` bytes.
 */
static etch_status_t send(size_t announced, size_t len)
{
	etch_status_t st = etch_zephyr_models_update_begin(&models, announced);

	for (size_t at = 0; st == ETCH_OK && at < len; at += 100) {
		st = etch_zephyr_models_update_write(&models, &image[at], MIN(100, len - at));
	}
	return st;
}

static etch_status_t update(const uint8_t *pte, size_t len)
{
	size_t n = make_image(pte, len, 0);
	etch_status_t st = send(n, n);

	return st != ETCH_OK ? st : etch_zephyr_models_update_finish(&models, &program);
}

/* Runs the loaded program's "forward" on `in` and compares with `out`. */
static void run_exact(const uint8_t *in, size_t in_len, const uint8_t *out, size_t out_len)
{
	etch_method_t method;
	const void *got;
	size_t got_len, used;

	zassert_equal(etch_zephyr_method_load(&program, "forward", &method, arena, sizeof(arena),
					      &used),
		      ETCH_OK);
	zassert_equal(etch_method_set_input(&method, 0, in, in_len), ETCH_OK);
	zassert_equal(etch_method_execute(&method), ETCH_OK);
	zassert_equal(etch_method_output(&method, 0, &got, &got_len), ETCH_OK);
	zassert_equal(got_len, out_len);
	zassert_mem_equal(got, out, out_len, "output differs from ExecuTorch's");
	zassert_equal(etch_method_unload(&method), ETCH_OK);
}

/* A fresh boot: the struct and the handle rebuilt from flash alone. */
static etch_status_t reboot(void)
{
	memset(&models, 0x5a, sizeof(models));
	memset(&program, 0, sizeof(program));
	return etch_zephyr_models_boot(&models, &program);
}

static void expect_active(int slot, uint32_t seq)
{
	zassert_equal(models.active, slot, "active slot %d", models.active);
	zassert_equal(models.sequence, seq, "generation %u", models.sequence);
}

static etch_image_fault_t slot_fault(int s)
{
	etch_image_info_t info;
	etch_image_fault_t fault = 99;

	(void)etch_image_check(slot_memory(s), slot_size(s), slot_size(s), &info, &fault);
	return fault;
}

/* The first model (the firmware's embedded one) installed in slot A. */
static void install_first(void)
{
	zassert_equal(reboot(), ETCH_NOT_FOUND);
	zassert_equal(update(etch_model_data, etch_model_size), ETCH_OK);
	expect_active(SLOT_A, 1);
}

static void before(void *f)
{
	ARG_UNUSED(f);
	slot_erase(SLOT_A);
	slot_erase(SLOT_B);
}

ZTEST(etch_model_slots, test_empty_slots)
{
	zassert_equal(reboot(), ETCH_NOT_FOUND);
	expect_active(-1, 0);
	zassert_equal(slot_fault(SLOT_A), ETCH_IMAGE_FAULT_BAD_MAGIC);
	/* Nothing to finish, nothing begun. */
	zassert_equal(etch_zephyr_models_update_finish(&models, &program), ETCH_INVALID_STATE);
	zassert_equal(etch_zephyr_models_update_write(&models, image, 1), ETCH_INVALID_STATE);
}

ZTEST(etch_model_slots, test_install_and_boot)
{
	install_first();
	run_exact(first_input_data, first_input_size, first_output_data, first_output_size);
	zassert_equal(reboot(), ETCH_OK);
	expect_active(SLOT_A, 1);
	zassert_equal(slot_fault(SLOT_B), ETCH_IMAGE_FAULT_BAD_MAGIC);
	/* Executed in place from the slot. */
	run_exact(first_input_data, first_input_size, first_output_data, first_output_size);
}

ZTEST(etch_model_slots, test_good_update)
{
	size_t a_len = ETCH_IMAGE_HEADER_LEN + etch_model_size;

	install_first();
	memcpy(snapshot, slot_memory(SLOT_A), a_len);

	zassert_equal(update(second_model_data, second_model_size), ETCH_OK);
	expect_active(SLOT_B, 2);
	zassert_mem_equal(slot_memory(SLOT_A), snapshot, a_len, "the active slot was written");
	run_exact(second_input_data, second_input_size, second_output_data, second_output_size);

	zassert_equal(reboot(), ETCH_OK);
	expect_active(SLOT_B, 2);
	run_exact(second_input_data, second_input_size, second_output_data, second_output_size);

	/* The next update goes to A, leaving B alone. */
	memcpy(snapshot, slot_memory(SLOT_B), ETCH_IMAGE_HEADER_LEN + second_model_size);
	zassert_equal(update(etch_model_data, etch_model_size), ETCH_OK);
	expect_active(SLOT_A, 3);
	zassert_mem_equal(slot_memory(SLOT_B), snapshot, ETCH_IMAGE_HEADER_LEN + second_model_size);
	zassert_equal(reboot(), ETCH_OK);
	expect_active(SLOT_A, 3);
	run_exact(first_input_data, first_input_size, first_output_data, first_output_size);
}

ZTEST(etch_model_slots, test_corrupted_update)
{
	size_t a_len = ETCH_IMAGE_HEADER_LEN + etch_model_size;
	size_t n;

	install_first();
	memcpy(snapshot, slot_memory(SLOT_A), a_len);
	/* One bit of the .pte flipped on the way; the header is the sender's. */
	n = make_image(second_model_data, second_model_size, 0);
	image[ETCH_IMAGE_HEADER_LEN + 1000] ^= 0x10;
	zassert_equal(send(n, n), ETCH_OK);
	zassert_equal(etch_zephyr_models_update_finish(&models, &program), ETCH_INVALID_PROGRAM);
	zassert_equal(models.fault, ETCH_IMAGE_FAULT_HASH_MISMATCH);
	expect_active(SLOT_A, 1);
	/* B never got a header: not an image. */
	zassert_equal(slot_fault(SLOT_B), ETCH_IMAGE_FAULT_BAD_MAGIC);
	zassert_mem_equal(slot_memory(SLOT_A), snapshot, a_len);

	/* A header damaged on the way (its sequence check). */
	n = make_image(second_model_data, second_model_size, 0);
	image[17] ^= 1;
	zassert_equal(send(n, n), ETCH_OK);
	zassert_equal(etch_zephyr_models_update_finish(&models, &program), ETCH_INVALID_PROGRAM);
	zassert_equal(models.fault, ETCH_IMAGE_FAULT_BAD_HEADER);
	/* Not an image at all. */
	memcpy(image, second_model_data, second_model_size);
	zassert_equal(send(second_model_size, second_model_size), ETCH_OK);
	zassert_equal(etch_zephyr_models_update_finish(&models, &program), ETCH_INVALID_PROGRAM);
	zassert_equal(models.fault, ETCH_IMAGE_FAULT_BAD_MAGIC);

	zassert_equal(reboot(), ETCH_OK);
	expect_active(SLOT_A, 1);
	run_exact(first_input_data, first_input_size, first_output_data, first_output_size);
}

ZTEST(etch_model_slots, test_truncated_update)
{
	size_t n;

	install_first();
	n = make_image(second_model_data, second_model_size, 0);
	/* Half of what was announced arrived. */
	zassert_equal(send(n, n / 2), ETCH_OK);
	zassert_equal(etch_zephyr_models_update_finish(&models, &program), ETCH_INVALID_PROGRAM);
	zassert_equal(models.fault, ETCH_IMAGE_FAULT_TRUNCATED);
	/* Announced and received alike, but less than the header says. */
	zassert_equal(send(n - 10, n - 10), ETCH_OK);
	zassert_equal(etch_zephyr_models_update_finish(&models, &program), ETCH_INVALID_PROGRAM);
	zassert_equal(models.fault, ETCH_IMAGE_FAULT_TRUNCATED);
	/* Shorter than a header. */
	zassert_equal(etch_zephyr_models_update_begin(&models, 10), ETCH_INVALID_PROGRAM);
	zassert_equal(models.fault, ETCH_IMAGE_FAULT_TRUNCATED);
	/* More than the slot holds: refused before anything is erased. */
	zassert_equal(etch_zephyr_models_update_begin(&models, slot_size(SLOT_B) + 1),
		      ETCH_INVALID_PROGRAM);
	zassert_equal(models.fault, ETCH_IMAGE_FAULT_LENGTH_OVERFLOW);
	/* More bytes than announced. */
	zassert_equal(etch_zephyr_models_update_begin(&models, 80), ETCH_OK);
	zassert_equal(etch_zephyr_models_update_write(&models, image, 81), ETCH_INVALID_ARGUMENT);

	expect_active(SLOT_A, 1);
	zassert_equal(reboot(), ETCH_OK);
	expect_active(SLOT_A, 1);
}

ZTEST(etch_model_slots, test_update_needs_missing_operators)
{
	install_first();
	zassert_equal(update(foreign_model_data, foreign_model_size), ETCH_OPERATOR_MISSING);
	/* quantized_decomposed quantize/dequantize, aten permute_copy, addmm,
	 * relu: none in this firmware, each printed by name.
	 */
	zassert_equal(models.missing_operators, 5, "%zu missing", models.missing_operators);
	expect_active(SLOT_A, 1);
	zassert_equal(slot_fault(SLOT_B), ETCH_IMAGE_FAULT_BAD_MAGIC, "refused, yet activated");
	zassert_equal(reboot(), ETCH_OK);
	expect_active(SLOT_A, 1);
}

ZTEST(etch_model_slots, test_power_cut)
{
	size_t n;
	uint8_t torn[ETCH_IMAGE_HEADER_LEN];

	install_first();
	/* Cut after the whole .pte, before finish. */
	n = make_image(second_model_data, second_model_size, 0);
	zassert_equal(send(n, n), ETCH_OK);
	zassert_equal(reboot(), ETCH_OK);
	expect_active(SLOT_A, 1);

	/* Cut in the middle of the header write: the .pte and the first 20
	 * bytes of a header with generation 2 (its sequence check unwritten).
	 */
	n = make_image(second_model_data, second_model_size, 2);
	slot_erase(SLOT_B);
	slot_write(SLOT_B, ETCH_IMAGE_HEADER_LEN, &image[ETCH_IMAGE_HEADER_LEN],
		   n - ETCH_IMAGE_HEADER_LEN);
	memcpy(torn, image, sizeof(torn));
	slot_write(SLOT_B, 0, torn, 16);
	zassert_equal(slot_fault(SLOT_B), ETCH_IMAGE_FAULT_BAD_HEADER);
	zassert_equal(reboot(), ETCH_OK);
	expect_active(SLOT_A, 1);
	run_exact(first_input_data, first_input_size, first_output_data, first_output_size);
}

ZTEST(etch_model_slots, test_boot_falls_back)
{
	size_t n;

	install_first();
	/* Newer, intact (SHA-256 right) but not a valid program: a byte the
	 * verifier rejects (tests/zephyr/runtime's deep corruption, 56).
	 */
	memcpy(snapshot, etch_model_data, etch_model_size);
	snapshot[56] ^= 0xff;
	n = make_image(snapshot, etch_model_size, 7);
	slot_write(SLOT_B, 0, image, n);
	zassert_equal(slot_fault(SLOT_B), ETCH_IMAGE_FAULT_NONE);
	zassert_equal(reboot(), ETCH_OK);
	expect_active(SLOT_A, 1);

	/* Newer and valid, but needing operators this firmware lacks. */
	slot_erase(SLOT_B);
	n = make_image(foreign_model_data, foreign_model_size, 8);
	slot_write(SLOT_B, 0, image, n);
	zassert_equal(reboot(), ETCH_OK);
	expect_active(SLOT_A, 1);

	/* A newer image of an unknown header version. */
	slot_erase(SLOT_B);
	n = make_image(second_model_data, second_model_size, 9);
	image[4] = 2;
	slot_write(SLOT_B, 0, image, n);
	zassert_equal(slot_fault(SLOT_B), ETCH_IMAGE_FAULT_BAD_VERSION);
	zassert_equal(reboot(), ETCH_OK);
	expect_active(SLOT_A, 1);

	/* A good update, then the active slot's flash decays (one bit): the
	 * next boot takes the older, intact image.
	 */
	slot_erase(SLOT_B);
	zassert_equal(update(second_model_data, second_model_size), ETCH_OK);
	expect_active(SLOT_B, 2);
	slot_memory(SLOT_B)[ETCH_IMAGE_HEADER_LEN + 100] ^= 0x01;
	zassert_equal(slot_fault(SLOT_B), ETCH_IMAGE_FAULT_HASH_MISMATCH);
	zassert_equal(reboot(), ETCH_OK);
	expect_active(SLOT_A, 1);
	run_exact(first_input_data, first_input_size, first_output_data, first_output_size);
}

#if defined(CONFIG_ETCH_MODEL_SLOTS_SHELL)
#include <zephyr/shell/shell.h>
#include <zephyr/shell/shell_dummy.h>
#include <zephyr/sys/base64.h>

static char line[160];

/* What `etch image shell` prints, sent through the shell: begin, data
 * lines of 96 bytes in base64, finish.
 */
static int shell_send(const struct shell *sh, size_t n)
{
	size_t olen;
	int rc;

	snprintk(line, sizeof(line), "etch model begin %zu", n);
	rc = shell_execute_cmd(sh, line);
	for (size_t at = 0; rc == 0 && at < n; at += 96) {
		strcpy(line, "etch model data ");
		zassert_ok(base64_encode((uint8_t *)&line[16], sizeof(line) - 16, &olen,
					 &image[at], MIN(96, n - at)));
		rc = shell_execute_cmd(sh, line);
	}
	return rc != 0 ? rc : shell_execute_cmd(sh, "etch model finish");
}

ZTEST(etch_model_slots, test_shell_update)
{
	const struct shell *sh = shell_backend_dummy_get_ptr();
	const char *out;
	size_t len, n;

	/* The dummy backend starts with the shell's thread. */
	WAIT_FOR(shell_ready(sh), 20000, k_msleep(1));
	zassert_true(shell_ready(sh), "the dummy shell did not start");
	install_first();
	etch_zephyr_models_shell_attach(&models, &program);

	n = make_image(second_model_data, second_model_size, 0);
	zassert_ok(shell_send(sh, n));
	expect_active(SLOT_B, 2);
	run_exact(second_input_data, second_input_size, second_output_data, second_output_size);

	shell_backend_dummy_clear_output(sh);
	zassert_ok(shell_execute_cmd(sh, "etch model status"));
	out = shell_backend_dummy_get_output(sh, &len);
	zassert_not_null(strstr(out, "active: slot B, generation 2"), "%s", out);
	zassert_not_null(strstr(out, "slot A: image, generation 1, .pte 5408 B"), "%s", out);

	/* A corrupted one through the shell: refused, with the reason. */
	n = make_image(etch_model_data, etch_model_size, 0);
	image[ETCH_IMAGE_HEADER_LEN + 7] ^= 1;
	shell_backend_dummy_clear_output(sh);
	zassert_equal(shell_send(sh, n), -EINVAL);
	out = shell_backend_dummy_get_output(sh, &len);
	zassert_not_null(strstr(out, "etch model finish: 0x23 InvalidProgram, SHA-256 mismatch"),
			 "%s", out);
	expect_active(SLOT_B, 2);
	/* Not base64; not a number. */
	zassert_equal(shell_execute_cmd(sh, "etch model data !!!"), -EINVAL);
	zassert_equal(shell_execute_cmd(sh, "etch model begin lots"), -EINVAL);
}
#endif

ZTEST_SUITE(etch_model_slots, NULL, NULL, before, NULL, NULL);
