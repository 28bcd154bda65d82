/*
 * Models in two flash partitions (A/B), chosen at boot and updated in the
 * field: CONFIG_ETCH_MODEL_SLOTS, <etch_zephyr.h> etch_zephyr_models_*().
 * The image format and its checks are etch's (etch_image_* in <etch.h>);
 * this file moves bytes between them and the flash map.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#include <string.h>

#include <zephyr/devicetree.h>
#include <zephyr/drivers/flash.h>
#include <zephyr/kernel.h>
#include <zephyr/storage/flash_map.h>
#include <zephyr/sys/printk.h>
#include <zephyr/sys/util.h>
#if defined(CONFIG_FLASH_SIMULATOR)
#include <zephyr/drivers/flash/flash_simulator.h>
#endif

#include <etch.h>
#include <etch_zephyr.h>

#if !FIXED_PARTITION_EXISTS(etch_model_a) || !FIXED_PARTITION_EXISTS(etch_model_b)
#error "CONFIG_ETCH_MODEL_SLOTS needs two flash partitions with the nodelabels etch_model_a and etch_model_b (see docs/zephyr.md, 'Models in flash partitions')"
#endif

static const uint8_t slot_ids[2] = {
	FIXED_PARTITION_ID(etch_model_a),
	FIXED_PARTITION_ID(etch_model_b),
};

static char slot_name(int slot)
{
	return slot == 0 ? 'A' : 'B';
}

static const char *fault_str(etch_image_fault_t f)
{
	switch (f) {
	case ETCH_IMAGE_FAULT_NONE:
		return "none";
	case ETCH_IMAGE_FAULT_TRUNCATED:
		return "truncated";
	case ETCH_IMAGE_FAULT_BAD_MAGIC:
		return "no image (bad magic)";
	case ETCH_IMAGE_FAULT_BAD_VERSION:
		return "unknown image version";
	case ETCH_IMAGE_FAULT_BAD_HEADER:
		return "bad header";
	case ETCH_IMAGE_FAULT_LENGTH_OVERFLOW:
		return "longer than the slot";
	case ETCH_IMAGE_FAULT_HASH_MISMATCH:
		return "SHA-256 mismatch";
	default:
		return "?";
	}
}

/* The slot's bytes as the CPU reads them (the program executes in place):
 * the flash simulator's memory, or memory-mapped internal flash.
 */
static const uint8_t *slot_memory(const struct flash_area *fa)
{
#if defined(CONFIG_FLASH_SIMULATOR)
	size_t size = 0;
	uint8_t *mem = flash_simulator_get_memory(fa->fa_dev, &size);

	if (mem == NULL || fa->fa_off + fa->fa_size > size) {
		return NULL;
	}
	return mem + fa->fa_off;
#elif DT_HAS_CHOSEN(zephyr_flash) && DT_HAS_CHOSEN(zephyr_flash_controller)
	if (fa->fa_dev != DEVICE_DT_GET(DT_CHOSEN(zephyr_flash_controller))) {
		return NULL;
	}
	return (const uint8_t *)(uintptr_t)(DT_REG_ADDR(DT_CHOSEN(zephyr_flash)) + fa->fa_off);
#else
	ARG_UNUSED(fa);
	return NULL;
#endif
}

static void print_missing(void *ctx, const char *method, size_t method_len, const char *name,
			  size_t name_len, const char *overload, size_t overload_len)
{
	ARG_UNUSED(ctx);
	printk("etch: method %.*s needs %.*s.%.*s, which this firmware lacks\n", (int)method_len,
	       method, (int)name_len, name, (int)overload_len, overload);
}

/* The program loads (verified) and this firmware has all its operators. */
static etch_status_t usable(struct etch_zephyr_models *m, etch_program_t *program,
			    const uint8_t *pte, size_t len)
{
	size_t missing = 0;
	etch_status_t st;

	/* The program executes in place: say so instead of etch_program_load's
	 * bare InvalidArgument (a flash simulator's RAM off native_sim, or a
	 * partition at an odd offset).
	 */
	if ((uintptr_t)pte % 16U != 0U) {
		printk("etch: the .pte at %p is not 16-byte aligned (it runs in place): "
		       "align the partition and its memory to 16 bytes\n",
		       (const void *)pte);
		return ETCH_INVALID_ARGUMENT;
	}
	st = etch_program_load(program, pte, len, true);
	if (st != ETCH_OK) {
		etch_zephyr_print_error("etch_program_load", st, program, NULL);
		return st;
	}
	st = etch_program_missing_operators(program, print_missing, NULL, &missing);
	if (st != ETCH_OK) {
		etch_zephyr_print_error("etch_program_missing_operators", st, program, NULL);
		return st;
	}
	m->missing_operators = missing;
	if (missing > 0) {
		printk("etch: %zu operator(s) missing: add them with CONFIG_ETCH_OPS\n", missing);
		return ETCH_OPERATOR_MISSING;
	}
	return ETCH_OK;
}

etch_status_t etch_zephyr_models_boot(struct etch_zephyr_models *m, etch_program_t *program)
{
	bool valid[2] = {false, false};
	etch_image_info_t info[2];
	int8_t order[2];

	if (m == NULL || program == NULL) {
		return ETCH_INVALID_ARGUMENT;
	}
	memset(m, 0, sizeof(*m));
	m->active = -1;
	m->target = -1;
	for (int s = 0; s < 2; s++) {
		const struct flash_area *fa;
		const uint8_t *mem;
		etch_image_fault_t fault = ETCH_IMAGE_FAULT_NONE;

		if (flash_area_open(slot_ids[s], &fa) != 0) {
			printk("etch: model slot %c: cannot open its partition\n", slot_name(s));
			continue;
		}
		mem = slot_memory(fa);
		if (mem == NULL) {
			printk("etch: model slot %c: not memory-mapped\n", slot_name(s));
		} else {
			valid[s] = etch_image_check(mem, fa->fa_size, fa->fa_size, &info[s], &fault) ==
				   ETCH_OK;
			if (!valid[s]) {
				printk("etch: model slot %c: %s\n", slot_name(s), fault_str(fault));
			}
		}
		flash_area_close(fa);
	}
	if (etch_image_boot_order(valid[0], valid[0] ? info[0].sequence : 0, valid[1],
				  valid[1] ? info[1].sequence : 0, order) != ETCH_OK) {
		return ETCH_INTERNAL;
	}
	for (int k = 0; k < 2 && order[k] >= 0; k++) {
		int s = order[k];

		if (usable(m, program, info[s].pte, info[s].pte_len) == ETCH_OK) {
			m->active = s;
			m->sequence = info[s].sequence;
			printk("etch: model slot %c, generation %u, %zu B\n", slot_name(s),
			       (unsigned int)info[s].sequence, info[s].pte_len);
			return ETCH_OK;
		}
		printk("etch: model slot %c (generation %u) passed over\n", slot_name(s),
		       (unsigned int)info[s].sequence);
	}
	printk("etch: no usable model in slot A or B\n");
	return ETCH_NOT_FOUND;
}

static etch_status_t refuse(struct etch_zephyr_models *m, etch_image_fault_t fault,
			    etch_status_t st)
{
	if (fault != ETCH_IMAGE_FAULT_NONE) {
		printk("etch: update refused: %s\n", fault_str(fault));
	}
	m->fault = fault;
	m->target = -1;
	m->image_len = 0;
	return st;
}

etch_status_t etch_zephyr_models_update_begin(struct etch_zephyr_models *m, size_t image_len)
{
	const struct flash_area *fa;
	int rc;

	if (m == NULL) {
		return ETCH_INVALID_ARGUMENT;
	}
	m->fault = ETCH_IMAGE_FAULT_NONE;
	m->missing_operators = 0;
	/* Never the active slot. */
	m->target = m->active == 0 ? 1 : 0;
	if (flash_area_open(slot_ids[m->target], &fa) != 0) {
		return refuse(m, ETCH_IMAGE_FAULT_NONE, ETCH_ACCESS_FAILED);
	}
	if (image_len < ETCH_IMAGE_HEADER_LEN) {
		flash_area_close(fa);
		return refuse(m, ETCH_IMAGE_FAULT_TRUNCATED, ETCH_INVALID_PROGRAM);
	}
	if (image_len > fa->fa_size) {
		printk("etch: update of %zu B, slot %c holds %zu B\n", image_len,
		       slot_name(m->target), (size_t)fa->fa_size);
		flash_area_close(fa);
		return refuse(m, ETCH_IMAGE_FAULT_LENGTH_OVERFLOW, ETCH_INVALID_PROGRAM);
	}
	if (flash_area_align(fa) > ETCH_ZEPHYR_MODELS_WRITE_BLOCK_MAX ||
	    ETCH_IMAGE_HEADER_LEN % MAX(flash_area_align(fa), 1U) != 0) {
		printk("etch: slot %c: write block of %u B not supported\n", slot_name(m->target),
		       (unsigned int)flash_area_align(fa));
		flash_area_close(fa);
		return refuse(m, ETCH_IMAGE_FAULT_NONE, ETCH_NOT_SUPPORTED);
	}
	rc = flash_area_erase(fa, 0, fa->fa_size);
	flash_area_close(fa);
	if (rc != 0) {
		printk("etch: erasing slot %c failed (%d)\n", slot_name(m->target), rc);
		return refuse(m, ETCH_IMAGE_FAULT_NONE, ETCH_ACCESS_FAILED);
	}
	m->image_len = image_len;
	m->received = 0;
	m->pending_len = 0;
	return ETCH_OK;
}

/* Writes `len` .pte bytes that continue the image at m->received through
 * m->pending, so that every flash write is whole blocks at block offsets.
 * `len` 0 with pending bytes pads them with the erase value (the end).
 */
static int body_write(struct etch_zephyr_models *m, const struct flash_area *fa,
		      const uint8_t *p, size_t len)
{
	size_t wbs = flash_area_align(fa);
	int rc = 0;

	if (wbs == 0) {
		wbs = 1;
	}
	if (len == 0 && m->pending_len > 0) {
		size_t at = m->received - m->pending_len;

		memset(&m->pending[m->pending_len], flash_area_erased_val(fa),
		       wbs - m->pending_len);
		rc = flash_area_write(fa, at, m->pending, wbs);
		m->pending_len = 0;
	}
	while (rc == 0 && len > 0) {
		if (m->pending_len > 0 || len < wbs) {
			size_t n = MIN(len, wbs - m->pending_len);

			memcpy(&m->pending[m->pending_len], p, n);
			m->pending_len += n;
			m->received += n;
			p += n;
			len -= n;
			if (m->pending_len == wbs) {
				rc = flash_area_write(fa, m->received - wbs, m->pending, wbs);
				m->pending_len = 0;
			}
		} else {
			size_t n = ROUND_DOWN(len, wbs);

			rc = flash_area_write(fa, m->received, p, n);
			m->received += n;
			p += n;
			len -= n;
		}
	}
	if (rc != 0) {
		printk("etch: update: writing slot %c failed (%d)\n", slot_name(m->target), rc);
	}
	return rc;
}

etch_status_t etch_zephyr_models_update_write(struct etch_zephyr_models *m, const void *data,
					      size_t len)
{
	const uint8_t *p = data;
	const struct flash_area *fa;
	int rc = 0;

	if (m == NULL || (data == NULL && len > 0)) {
		return ETCH_INVALID_ARGUMENT;
	}
	if (m->target < 0 || m->image_len == 0) {
		return ETCH_INVALID_STATE;
	}
	if (len > m->image_len - m->received) {
		printk("etch: update: %zu B more than the %zu B announced\n",
		       len - (m->image_len - m->received), m->image_len);
		return ETCH_INVALID_ARGUMENT;
	}
	/* The header stays in RAM until the image is checked. */
	if (m->received < ETCH_IMAGE_HEADER_LEN) {
		size_t n = MIN(len, ETCH_IMAGE_HEADER_LEN - m->received);

		memcpy(&m->header[m->received], p, n);
		m->received += n;
		p += n;
		len -= n;
	}
	if (len == 0) {
		return ETCH_OK;
	}
	/* The .pte at the offset it has in the image, in whole write blocks
	 * (the body starts at 64, a multiple of any block handled).
	 */
	if (flash_area_open(slot_ids[m->target], &fa) != 0) {
		return ETCH_ACCESS_FAILED;
	}
	rc = body_write(m, fa, p, len);
	flash_area_close(fa);
	return rc == 0 ? ETCH_OK : ETCH_ACCESS_FAILED;
}

etch_status_t etch_zephyr_models_update_finish(struct etch_zephyr_models *m,
					       etch_program_t *program)
{
	const struct flash_area *fa;
	const uint8_t *mem;
	etch_image_info_t sent, got;
	etch_image_fault_t fault = ETCH_IMAGE_FAULT_NONE;
	uint8_t header[ETCH_IMAGE_HEADER_LEN];
	uint32_t next = m != NULL && m->active >= 0 ? m->sequence + 1 : 1;
	etch_status_t st;
	int rc;

	if (m == NULL || program == NULL) {
		return ETCH_INVALID_ARGUMENT;
	}
	if (m->target < 0 || m->image_len == 0) {
		return ETCH_INVALID_STATE;
	}
	if (m->pending_len > 0) {
		if (flash_area_open(slot_ids[m->target], &fa) != 0) {
			return refuse(m, ETCH_IMAGE_FAULT_NONE, ETCH_ACCESS_FAILED);
		}
		rc = body_write(m, fa, NULL, 0);
		flash_area_close(fa);
		if (rc != 0) {
			return refuse(m, ETCH_IMAGE_FAULT_NONE, ETCH_ACCESS_FAILED);
		}
	}
	if (m->received < m->image_len) {
		printk("etch: update: %zu of %zu B received\n", m->received, m->image_len);
		return refuse(m, ETCH_IMAGE_FAULT_TRUNCATED, ETCH_INVALID_PROGRAM);
	}
	if (etch_image_check_header(m->header, sizeof(m->header), &sent, &fault) != ETCH_OK) {
		return refuse(m, fault, ETCH_INVALID_PROGRAM);
	}
	if (sent.pte_len != m->image_len - ETCH_IMAGE_HEADER_LEN) {
		printk("etch: update: the header says %zu B of .pte, %zu B came\n", sent.pte_len,
		       m->image_len - ETCH_IMAGE_HEADER_LEN);
		return refuse(m,
			      sent.pte_len > m->image_len - ETCH_IMAGE_HEADER_LEN
				      ? ETCH_IMAGE_FAULT_TRUNCATED
				      : ETCH_IMAGE_FAULT_BAD_HEADER,
			      ETCH_INVALID_PROGRAM);
	}
	if (flash_area_open(slot_ids[m->target], &fa) != 0) {
		return refuse(m, ETCH_IMAGE_FAULT_NONE, ETCH_ACCESS_FAILED);
	}
	mem = slot_memory(fa);
	if (mem == NULL) {
		flash_area_close(fa);
		return refuse(m, ETCH_IMAGE_FAULT_NONE, ETCH_NOT_SUPPORTED);
	}
	/* The header this slot gets: the digest of what is in flash now, the
	 * next generation. It must promise what the sender's promised.
	 */
	st = etch_image_header(header, sizeof(header), mem + ETCH_IMAGE_HEADER_LEN, sent.pte_len,
			       next);
	if (st == ETCH_OK) {
		st = etch_image_check_header(header, sizeof(header), &got, &fault);
	}
	if (st != ETCH_OK || memcmp(got.sha256, sent.sha256, sizeof(got.sha256)) != 0) {
		flash_area_close(fa);
		return refuse(m, ETCH_IMAGE_FAULT_HASH_MISMATCH, ETCH_INVALID_PROGRAM);
	}
	st = usable(m, program, mem + ETCH_IMAGE_HEADER_LEN, sent.pte_len);
	if (st != ETCH_OK) {
		flash_area_close(fa);
		printk("etch: update refused: the new program cannot run here (0x%02x %s)\n",
		       (unsigned int)st, etch_status_str(st));
		return refuse(m, ETCH_IMAGE_FAULT_NONE, st);
	}
	/* Activation: the header, last. */
	rc = flash_area_write(fa, 0, header, sizeof(header));
	if (rc == 0 &&
	    etch_image_check(mem, fa->fa_size, fa->fa_size, &got, &fault) != ETCH_OK) {
		rc = -EIO;
	}
	flash_area_close(fa);
	if (rc != 0) {
		printk("etch: update: writing the header of slot %c failed (%d)\n",
		       slot_name(m->target), rc);
		return refuse(m, fault, ETCH_ACCESS_FAILED);
	}
	m->active = m->target;
	m->sequence = next;
	m->target = -1;
	m->image_len = 0;
	printk("etch: model slot %c active, generation %u, %zu B\n", slot_name(m->active),
	       (unsigned int)next, sent.pte_len);
	return ETCH_OK;
}

#if defined(CONFIG_ETCH_MODEL_SLOTS_SHELL)
#include <stdlib.h>
#include <zephyr/shell/shell.h>
#include <zephyr/sys/base64.h>

/* What the shell commands act on (the application's, attached once). */
static struct etch_zephyr_models *shell_models;
static etch_program_t *shell_program;

void etch_zephyr_models_shell_attach(struct etch_zephyr_models *m, etch_program_t *program)
{
	shell_models = m;
	shell_program = program;
}

static bool attached(const struct shell *sh)
{
	if (shell_models == NULL || shell_program == NULL) {
		shell_error(sh, "etch model: no models attached "
				"(etch_zephyr_models_shell_attach())");
		return false;
	}
	return true;
}

static int status_result(const struct shell *sh, const char *what, etch_status_t st)
{
	if (st == ETCH_OK) {
		shell_print(sh, "etch model %s: ok", what);
		return 0;
	}
	shell_error(sh, "etch model %s: 0x%02x %s%s%s", what, (unsigned int)st, etch_status_str(st),
		    shell_models->fault != ETCH_IMAGE_FAULT_NONE ? ", " : "",
		    shell_models->fault != ETCH_IMAGE_FAULT_NONE ? fault_str(shell_models->fault)
								 : "");
	return -EINVAL;
}

static int cmd_status(const struct shell *sh, size_t argc, char **argv)
{
	ARG_UNUSED(argc);
	ARG_UNUSED(argv);
	if (!attached(sh)) {
		return -ENOEXEC;
	}
	if (shell_models->active < 0) {
		shell_print(sh, "active: none");
	} else {
		shell_print(sh, "active: slot %c, generation %u", slot_name(shell_models->active),
			    (unsigned int)shell_models->sequence);
	}
	for (int s = 0; s < 2; s++) {
		const struct flash_area *fa;
		const uint8_t *mem;
		etch_image_info_t info;
		etch_image_fault_t fault = ETCH_IMAGE_FAULT_NONE;

		if (flash_area_open(slot_ids[s], &fa) != 0) {
			shell_print(sh, "slot %c: cannot open", slot_name(s));
			continue;
		}
		mem = slot_memory(fa);
		if (mem != NULL &&
		    etch_image_check(mem, fa->fa_size, fa->fa_size, &info, &fault) == ETCH_OK) {
			shell_print(sh, "slot %c: image, generation %u, .pte %zu B", slot_name(s),
				    (unsigned int)info.sequence, info.pte_len);
		} else {
			shell_print(sh, "slot %c: %s", slot_name(s),
				    mem == NULL ? "not memory-mapped" : fault_str(fault));
		}
		flash_area_close(fa);
	}
	return 0;
}

static int cmd_begin(const struct shell *sh, size_t argc, char **argv)
{
	char *end;
	unsigned long len;

	ARG_UNUSED(argc);
	if (!attached(sh)) {
		return -ENOEXEC;
	}
	len = strtoul(argv[1], &end, 10);
	if (*end != '\0' || end == argv[1]) {
		shell_error(sh, "etch model begin: '%s' is not a byte count", argv[1]);
		return -EINVAL;
	}
	return status_result(sh, "begin",
			     etch_zephyr_models_update_begin(shell_models, (size_t)len));
}

static int cmd_data(const struct shell *sh, size_t argc, char **argv)
{
	uint8_t buf[CONFIG_SHELL_CMD_BUFF_SIZE];
	size_t n = 0;
	etch_status_t st;

	ARG_UNUSED(argc);
	if (!attached(sh)) {
		return -ENOEXEC;
	}
	if (base64_decode(buf, sizeof(buf), &n, (const uint8_t *)argv[1], strlen(argv[1])) != 0) {
		shell_error(sh, "etch model data: not base64");
		return -EINVAL;
	}
	st = etch_zephyr_models_update_write(shell_models, buf, n);
	if (st != ETCH_OK) {
		return status_result(sh, "data", st);
	}
	return 0;
}

static int cmd_finish(const struct shell *sh, size_t argc, char **argv)
{
	ARG_UNUSED(argc);
	ARG_UNUSED(argv);
	if (!attached(sh)) {
		return -ENOEXEC;
	}
	return status_result(sh, "finish",
			     etch_zephyr_models_update_finish(shell_models, shell_program));
}

SHELL_STATIC_SUBCMD_SET_CREATE(
	etch_model_cmds,
	SHELL_CMD_ARG(status, NULL, "Active slot and what each slot holds", cmd_status, 1, 0),
	SHELL_CMD_ARG(begin, NULL, "<bytes>: start an update of an image of that length",
		      cmd_begin, 2, 0),
	SHELL_CMD_ARG(data, NULL, "<base64>: the next bytes of the image", cmd_data, 2, 0),
	SHELL_CMD_ARG(finish, NULL, "Check the image and activate it", cmd_finish, 1, 0),
	SHELL_SUBCMD_SET_END);
SHELL_STATIC_SUBCMD_SET_CREATE(etch_cmds,
			       SHELL_CMD(model, &etch_model_cmds, "Model slots (A/B)", NULL),
			       SHELL_SUBCMD_SET_END);
SHELL_CMD_REGISTER(etch, &etch_cmds, "etch runtime", NULL);
#endif
