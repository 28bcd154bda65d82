/*
 * The PCM samples of a RIFF/WAVE file, in place.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KWS_WAV_H
#define KWS_WAV_H

#include <stddef.h>
#include <stdint.h>

enum kws_wav_error {
	KWS_WAV_OK = 0,
	KWS_WAV_NOT_RIFF = -1,     /* no RIFF/WAVE header */
	KWS_WAV_BAD_CHUNK = -2,    /* a chunk runs past the end of the file */
	KWS_WAV_NOT_KWS = -3,      /* not 16 kHz mono 16-bit PCM */
	KWS_WAV_NO_DATA = -4,      /* no data chunk after the fmt chunk */
	KWS_WAV_MISALIGNED = -5,   /* data not 2-byte aligned in memory */
};

/*
 * Finds the samples of `len` bytes of WAV file at `wav`: `*pcm` points into
 * the file (little-endian int16, as every target of this sample is),
 * `*n_samples` counts them. A data chunk cut short by the end of the file
 * gives the samples that are there.
 */
int kws_wav_pcm(const uint8_t *wav, size_t len, const int16_t **pcm, size_t *n_samples);

const char *kws_wav_error_str(int err);

#endif /* KWS_WAV_H */
