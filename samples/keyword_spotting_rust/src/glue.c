/*
 * The few things Rust cannot take from headers: a devicetree lookup (macros
 * only), a statically defined memory slab, and the LOG call (a macro) that
 * the `log` crate's messages go through.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <zephyr/device.h>
#include <zephyr/kernel.h>
#include <zephyr/logging/log.h>
#if defined(CONFIG_ARCH_POSIX)
#include "posix_board_if.h"
#endif

LOG_MODULE_REGISTER(kws_rust, LOG_LEVEL_INF);

#define BLOCK_BYTES (320 * 2) /* 20 ms of 16 kHz 16-bit audio */
K_MEM_SLAB_DEFINE_STATIC(audio_slab, BLOCK_BYTES, 8, 4);

const struct device *kws_mic(void)
{
	return DEVICE_DT_GET(DT_NODELABEL(dmic_dev));
}

bool kws_mic_ready(void)
{
	return device_is_ready(kws_mic());
}

struct k_mem_slab *kws_audio_slab(void)
{
	return &audio_slab;
}

void kws_audio_free(void *block)
{
	k_mem_slab_free(&audio_slab, block);
}

/* level: 1 error, 2 warning, 3 info, 4 debug (the log crate's order). */
void kws_log(uint32_t level, const char *msg, size_t len)
{
	switch (level) {
	case 1:
		LOG_ERR("%.*s", (int)len, msg);
		break;
	case 2:
		LOG_WRN("%.*s", (int)len, msg);
		break;
	case 3:
		LOG_INF("%.*s", (int)len, msg);
		break;
	default:
		LOG_DBG("%.*s", (int)len, msg);
		break;
	}
}

/* Stack painting (CONFIG_INIT_STACKS): the high-water mark of the thread
 * that runs etch (main, which calls rust_main).
 */
void kws_stack_report(void)
{
#if defined(CONFIG_THREAD_STACK_INFO) && defined(CONFIG_INIT_STACKS)
	size_t unused;

	if (k_thread_stack_space_get(k_current_get(), &unused) == 0) {
		LOG_INF("main stack: %u of %u bytes used",
			(unsigned int)(k_current_get()->stack_info.size - unused),
			(unsigned int)k_current_get()->stack_info.size);
	}
#endif
}

void kws_exit(int code)
{
#if defined(CONFIG_ARCH_POSIX)
	posix_exit(code);
#else
	ARG_UNUSED(code);
#endif
}
