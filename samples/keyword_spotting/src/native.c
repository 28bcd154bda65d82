/*
 * native_sim only: --wav=FILE (repeatable) runs host WAV files instead of
 * the embedded clips. The files are read through the native simulator's
 * host trampolines (the Zephyr image has no host file system).
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdint.h>
#include <string.h>

#include <zephyr/kernel.h>
#include <zephyr/sys/printk.h>

#include "soc.h"
#include "cmdline.h"
#include "nsi_host_trampolines.h"
#include "posix_board_if.h"

#include "kws.h"

#define MAX_FILES 32
/* Longest file read: 60 s of 16 kHz 16-bit audio. The peak (normalisation)
 * is taken over all of it, the features over the first second, as etch kws.
 */
#define MAX_FILE_BYTES (60u * 16000u * 2u + 4096u)

static const char *paths[MAX_FILES];
static unsigned int n_paths;
static unsigned int dropped;
static uint8_t file_buf[MAX_FILE_BYTES] __aligned(4);

static void wav_found(char *argv, int offset)
{
	if (n_paths < MAX_FILES) {
		paths[n_paths++] = argv + offset;
	} else {
		dropped++;
	}
}

static void kws_add_options(void)
{
	static struct args_struct_t options[] = {
		{
			.option = "wav",
			.name = "FILE",
			.type = 's',
			.call_when_found = wav_found,
			.descript = "16 kHz mono 16-bit PCM WAV file to label instead of the "
				    "embedded clips (repeatable)",
		},
		ARG_TABLE_ENDMARKER,
	};

	native_add_command_line_opts(options);
}

NATIVE_TASK(kws_add_options, PRE_BOOT_1, 10);

static long read_file(const char *path)
{
	int fd = nsi_host_open(path, 0 /* O_RDONLY */);
	size_t len = 0;

	if (fd < 0) {
		return -1;
	}
	while (len < sizeof(file_buf)) {
		long r = nsi_host_read(fd, file_buf + len, sizeof(file_buf) - len);

		if (r <= 0) {
			break;
		}
		len += (size_t)r;
	}
	nsi_host_close(fd);
	return (long)len;
}

int kws_native_files(struct kws_totals *t)
{
	int failed = 0;

	if (dropped) {
		printk("kws: more than %u --wav files: %u ignored\n", MAX_FILES, dropped);
	}
	for (unsigned int i = 0; i < n_paths; i++) {
		long len = read_file(paths[i]);

		if (len < 0) {
			printk("kws: %s: cannot open\n", paths[i]);
			failed++;
			continue;
		}
		if ((size_t)len == sizeof(file_buf)) {
			printk("kws: %s: longer than %u bytes, cut\n", paths[i],
			       (unsigned int)sizeof(file_buf));
		}
		/* Shown by base name, so "down_0.wav" still names its label. */
		const char *base = strrchr(paths[i], '/');
		static char name[64];

		base = base ? base + 1 : paths[i];
		strncpy(name, base, sizeof(name) - 1);
		char *dot = strrchr(name, '.');

		if (dot != NULL) {
			*dot = '\0';
		}
		failed += kws_run_clip(name, file_buf, (size_t)len, t) != 0;
	}
	t->failed += failed;
	return (int)n_paths;
}

void kws_native_exit(int code)
{
	posix_exit(code);
}
