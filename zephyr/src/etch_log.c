/*
 * etch_log_write() for the Rust library's `log` feature (CONFIG_ETCH_LOG):
 * records go to Zephyr logging as module "etch", filtered by
 * CONFIG_ETCH_LOG_LEVEL (the library also compiles out what is above it).
 * SPDX-License-Identifier: Apache-2.0
 */
#include <zephyr/logging/log.h>

#include <etch.h>

LOG_MODULE_REGISTER(etch, CONFIG_ETCH_LOG_LEVEL);

void etch_log_write(int level, const char *msg, size_t len)
{
	/* msg is NUL-terminated after len bytes and valid during this call only:
	 * "%s" makes deferred logging copy it (it is not in read-only memory).
	 */
	ARG_UNUSED(len);
	switch (level) {
	case ETCH_LOG_LEVEL_ERROR:
		LOG_ERR("%s", msg);
		break;
	case ETCH_LOG_LEVEL_WARN:
		LOG_WRN("%s", msg);
		break;
	case ETCH_LOG_LEVEL_INFO:
		LOG_INF("%s", msg);
		break;
	default:
		LOG_DBG("%s", msg);
		break;
	}
}
