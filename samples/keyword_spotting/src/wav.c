/*
 * Minimal RIFF/WAVE reader: enough to find 16 kHz mono 16-bit PCM, never
 * reading past the buffer whatever the file says.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <string.h>

#include "wav.h"

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
	       ((uint32_t)p[3] << 24);
}

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

int kws_wav_pcm(const uint8_t *wav, size_t len, const int16_t **pcm, size_t *n_samples)
{
	int have_fmt = 0;
	size_t off = 12;

	if (wav == NULL || len < 12 || memcmp(wav, "RIFF", 4) != 0 ||
	    memcmp(wav + 8, "WAVE", 4) != 0) {
		return KWS_WAV_NOT_RIFF;
	}
	while (len - off >= 8) {
		const uint8_t *id = wav + off;
		size_t body = off + 8;
		size_t avail = len - body;
		uint32_t size = le32(id + 4);

		if (memcmp(id, "fmt ", 4) == 0) {
			if (size < 16 || size > avail) {
				return KWS_WAV_BAD_CHUNK;
			}
			uint16_t tag = le16(wav + body);
			uint16_t channels = le16(wav + body + 2);
			uint32_t rate = le32(wav + body + 4);
			uint16_t bits = le16(wav + body + 14);

			/* 1 = PCM, 0xFFFE = WAVE_FORMAT_EXTENSIBLE (PCM sub-format assumed) */
			if ((tag != 1 && tag != 0xFFFE) || channels != 1 || rate != 16000 ||
			    bits != 16) {
				return KWS_WAV_NOT_KWS;
			}
			have_fmt = 1;
		} else if (memcmp(id, "data", 4) == 0) {
			if (!have_fmt) {
				return KWS_WAV_NO_DATA;
			}
			if ((((uintptr_t)(wav + body)) & 1u) != 0) {
				return KWS_WAV_MISALIGNED;
			}
			*pcm = (const int16_t *)(const void *)(wav + body);
			*n_samples = (size > avail ? avail : size) / 2;
			return KWS_WAV_OK;
		}
		/* Chunks are padded to an even size. */
		if (size > avail || avail - size < (size & 1u)) {
			return KWS_WAV_BAD_CHUNK;
		}
		off = body + size + (size & 1u);
	}
	return KWS_WAV_NO_DATA;
}

const char *kws_wav_error_str(int err)
{
	switch (err) {
	case KWS_WAV_OK:
		return "ok";
	case KWS_WAV_NOT_RIFF:
		return "not a RIFF/WAVE file";
	case KWS_WAV_BAD_CHUNK:
		return "chunk runs past the end of the file";
	case KWS_WAV_NOT_KWS:
		return "not 16000 Hz mono 16-bit PCM";
	case KWS_WAV_NO_DATA:
		return "no data chunk after the fmt chunk";
	case KWS_WAV_MISALIGNED:
		return "data not 2-byte aligned";
	default:
		return "unknown error";
	}
}
