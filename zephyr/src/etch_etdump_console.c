/*
 * ETDump over a text console: the bytes as base64 lines between markers,
 * which tools/etdump/from_console.py turns back into the .etdp file.
 *
 *   etch-etdump: begin bytes=1056 crc32=0x1c291ca3 ticks_per_s=12000000
 *   etch-etdump: FAAAAAAAAABFRDAw...            (64 base64 characters a line)
 *   etch-etdump: end
 *
 * Every line carries the "etch-etdump: " tag, so log prefixes (timestamps,
 * module names) and other output between the lines do no harm. Plain C, no
 * Zephyr or libc calls: the host test (tools/ci/c-api.sh) compiles this
 * same file.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#include <etch_zephyr.h>

#define TAG "etch-etdump: "
#define TAG_LEN (sizeof(TAG) - 1)

/* CRC-32 (IEEE 802.3, zlib's crc32), bit by bit: no table in flash. */
static uint32_t crc32_ieee(const uint8_t *p, size_t n)
{
	uint32_t crc = 0xFFFFFFFFu;

	for (size_t i = 0; i < n; i++) {
		crc ^= p[i];
		for (int k = 0; k < 8; k++) {
			crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
		}
	}
	return ~crc;
}

static size_t put_str(char *out, size_t at, const char *s)
{
	while (*s != '\0') {
		out[at++] = *s++;
	}
	return at;
}

static size_t put_dec(char *out, size_t at, uint64_t v)
{
	char digits[20];
	size_t n = 0;

	do {
		digits[n++] = (char)('0' + (int)(v % 10u));
		v /= 10u;
	} while (v != 0u);
	while (n > 0u) {
		out[at++] = digits[--n];
	}
	return at;
}

static size_t put_hex32(char *out, size_t at, uint32_t v)
{
	static const char hex[] = "0123456789abcdef";

	at = put_str(out, at, "0x");
	for (int shift = 28; shift >= 0; shift -= 4) {
		out[at++] = hex[(v >> shift) & 0xFu];
	}
	return at;
}

void etch_etdump_console_write(const uint8_t *data, size_t len, uint64_t ticks_per_s,
			       etch_console_line_fn put, void *ctx)
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	/* Longest line: the begin marker (< 100 characters). */
	char line[TAG_LEN + ETCH_ETDUMP_CONSOLE_LINE + 1 > 128 ? TAG_LEN +
		  ETCH_ETDUMP_CONSOLE_LINE + 1 : 128];
	size_t at;

	at = put_str(line, 0, TAG "begin bytes=");
	at = put_dec(line, at, len);
	at = put_str(line, at, " crc32=");
	at = put_hex32(line, at, crc32_ieee(data, len));
	at = put_str(line, at, " ticks_per_s=");
	at = put_dec(line, at, ticks_per_s);
	line[at] = '\0';
	put(line, at, ctx);

	at = put_str(line, 0, TAG);
	for (size_t i = 0; i < len; i += 3) {
		uint32_t a = data[i];
		uint32_t b = i + 1 < len ? data[i + 1] : 0u;
		uint32_t c = i + 2 < len ? data[i + 2] : 0u;
		uint32_t w = (a << 16) | (b << 8) | c;

		line[at++] = b64[(w >> 18) & 63u];
		line[at++] = b64[(w >> 12) & 63u];
		line[at++] = i + 1 < len ? b64[(w >> 6) & 63u] : '=';
		line[at++] = i + 2 < len ? b64[w & 63u] : '=';
		if (at - TAG_LEN == ETCH_ETDUMP_CONSOLE_LINE || i + 3 >= len) {
			line[at] = '\0';
			put(line, at, ctx);
			at = TAG_LEN;
		}
	}
	at = put_str(line, 0, TAG "end");
	line[at] = '\0';
	put(line, at, ctx);
}
