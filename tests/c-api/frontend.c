/*
 * The front-end's C API (etch_frontend_*, library feature `frontend`)
 * against the committed references: for every clip given on the command
 * line, the int8 MFCCs of tools/clips/wav/<clip>.wav must equal, byte for
 * byte, models/kws/ref/dscnn_kws_int8io/<clip>.input0.npy (the features the
 * DS-CNN was exported and checked with), whole-clip and streamed; plus the
 * status codes of bad arguments.
 *
 *   frontend REPO_ROOT CLIP...        (CLIP = down_0, ...)
 *
 * Exit status 0 only if every check passes. SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <etch.h>

#include "check.h"

/* dscnn_kws_int8io.pte's input0_scale (a double in the program) and
 * input0_zp; ExecuTorch quantizes with the scale as float. */
#define IN_SCALE ((float)0.17949718236923218)
#ifndef IN_ZP
#define IN_ZP 30
#endif

static unsigned char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf;
	long n;

	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) != 0) {
		if (f) {
			fclose(f);
		}
		return NULL;
	}
	buf = malloc((size_t)n + 1);
	if (buf != NULL && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* The samples of a canonical 44-byte-header 16 kHz mono 16-bit WAV (what
 * tools/clips/make_clips.py writes), copied to aligned memory. */
static int16_t *wav_samples(const unsigned char *wav, size_t len, size_t *n)
{
	if (len < 44 || memcmp(wav, "RIFF", 4) != 0 || memcmp(wav + 36, "data", 4) != 0) {
		return NULL;
	}
	size_t bytes = (size_t)wav[40] | (size_t)wav[41] << 8 | (size_t)wav[42] << 16 |
		       (size_t)wav[43] << 24;
	if (bytes > len - 44) {
		return NULL;
	}
	int16_t *pcm = malloc(bytes + 2);
	if (pcm == NULL) {
		return NULL;
	}
	for (size_t i = 0; i < bytes / 2; i++) {
		pcm[i] = (int16_t)(wav[44 + 2 * i] | wav[45 + 2 * i] << 8);
	}
	*n = bytes / 2;
	return pcm;
}

/* The data of a .npy file (format 1.0). */
static const unsigned char *npy_data(const unsigned char *npy, size_t len, size_t *n)
{
	if (len < 10 || memcmp(npy, "\x93NUMPY\x01", 7) != 0) {
		return NULL;
	}
	size_t start = 10 + ((size_t)npy[8] | (size_t)npy[9] << 8);
	if (start > len) {
		return NULL;
	}
	*n = len - start;
	return npy + start;
}

static etch_frontend_t fe;
static etch_frontend_stream_t stream;

static void clip(const char *root, const char *name)
{
	char path[1024];
	size_t wav_len = 0, npy_len = 0, n = 0, ref_len = 0;
	int8_t out[ETCH_FRONTEND_FEATURES];
	int16_t peak = 0;

	snprintf(path, sizeof(path), "%s/tools/clips/wav/%s.wav", root, name);
	unsigned char *wav = read_file(path, &wav_len);
	snprintf(path, sizeof(path), "%s/models/kws/ref/dscnn_kws_int8io/%s.input0.npy", root,
		 name);
	unsigned char *npy = read_file(path, &npy_len);
	int16_t *pcm = wav ? wav_samples(wav, wav_len, &n) : NULL;
	const unsigned char *ref = npy ? npy_data(npy, npy_len, &ref_len) : NULL;

	CHECK(pcm != NULL && ref != NULL && ref_len == ETCH_FRONTEND_FEATURES,
	      "%s: cannot read the clip or its reference", name);
	if (pcm == NULL || ref == NULL || ref_len != ETCH_FRONTEND_FEATURES) {
		goto out;
	}
	/* Scratch contents on entry must not matter. */
	memset(&fe, 0xA5, sizeof(fe));
	etch_status_t st = etch_frontend_mfcc_int8(&fe, pcm, n, IN_SCALE, IN_ZP, out,
						   sizeof(out), &peak);
	CHECK(st == ETCH_OK, "%s: etch_frontend_mfcc_int8 = 0x%x", name, (unsigned)st);
	int diff = 0;
	for (size_t i = 0; i < ETCH_FRONTEND_FEATURES; i++) {
		diff += out[i] != (int8_t)ref[i];
	}
	CHECK(diff == 0, "%s: %d of 490 features differ from the reference", name, diff);
	int16_t max = pcm[0];
	for (size_t i = 1; i < n; i++) {
		max = pcm[i] > max ? pcm[i] : max;
	}
	CHECK(peak == max, "%s: peak %d, clip maximum %d", name, peak, max);

	/* Streamed in 20 ms hops: the same bytes once a second is in. */
	CHECK(etch_frontend_stream_init(&stream) == ETCH_OK, "stream_init");
	int8_t streamed[ETCH_FRONTEND_FEATURES];
	size_t hops = 0;
	for (size_t h = 0; h + ETCH_FRONTEND_HOP_SAMPLES <= n && h < ETCH_FRONTEND_CLIP_SAMPLES;
	     h += ETCH_FRONTEND_HOP_SAMPLES) {
		st = etch_frontend_stream_push(&stream, &fe, pcm + h, ETCH_FRONTEND_HOP_SAMPLES);
		CHECK(st == ETCH_OK, "%s: stream_push = 0x%x", name, (unsigned)st);
	}
	CHECK(etch_frontend_stream_hops(&stream, &hops) == ETCH_OK && hops == 50,
	      "%s: %u hops", name, (unsigned)hops);
	st = etch_frontend_stream_features_int8(&stream, IN_SCALE, IN_ZP, streamed,
						sizeof(streamed), NULL);
	CHECK(st == ETCH_OK, "%s: stream_features_int8 = 0x%x", name, (unsigned)st);
	/* The reference's normalisation is the whole clip's maximum, the
	 * stream's that of the last second: equal for 1 s clips. */
	CHECK(n != ETCH_FRONTEND_CLIP_SAMPLES || memcmp(streamed, out, sizeof(out)) == 0,
	      "%s: streamed features differ from the whole clip's", name);
out:
	free(pcm);
	free(wav);
	free(npy);
}

static void bad_arguments(void)
{
	static int16_t pcm[ETCH_FRONTEND_CLIP_SAMPLES + 1];
	int8_t out[ETCH_FRONTEND_FEATURES];
	int16_t peak = 7;
	size_t hops;

	for (size_t i = 0; i < ETCH_FRONTEND_CLIP_SAMPLES; i++) {
		pcm[i] = (int16_t)((i * 7919u) % 2001u) - 1000;
	}
	CHECK(etch_frontend_mfcc_int8(NULL, pcm, 16000, IN_SCALE, IN_ZP, out, sizeof(out), NULL) ==
		      ETCH_INVALID_ARGUMENT, "NULL scratch");
	CHECK(etch_frontend_mfcc_int8(&fe, NULL, 16000, IN_SCALE, IN_ZP, out, sizeof(out), NULL) ==
		      ETCH_INVALID_ARGUMENT, "NULL samples");
	CHECK(etch_frontend_mfcc_int8(&fe, pcm, 0, IN_SCALE, IN_ZP, out, sizeof(out), NULL) ==
		      ETCH_INVALID_ARGUMENT, "no samples");
	CHECK(etch_frontend_mfcc_int8(&fe, pcm, 16000, IN_SCALE, IN_ZP, out, sizeof(out) - 1,
				      NULL) == ETCH_INVALID_ARGUMENT, "short output");
	CHECK(etch_frontend_mfcc_int8(&fe, pcm, 16000, IN_SCALE, IN_ZP, NULL, sizeof(out), NULL) ==
		      ETCH_INVALID_ARGUMENT, "NULL output");
	CHECK(etch_frontend_mfcc_int8(&fe, pcm, 16000, 0.0f, IN_ZP, out, sizeof(out), NULL) ==
		      ETCH_INVALID_ARGUMENT, "zero scale");
	CHECK(etch_frontend_mfcc_int8(&fe, pcm, 16000, -1.0f, IN_ZP, out, sizeof(out), NULL) ==
		      ETCH_INVALID_ARGUMENT, "negative scale");
	CHECK(etch_frontend_mfcc_int8(&fe, pcm, 16000, IN_SCALE, 128, out, sizeof(out), NULL) ==
		      ETCH_INVALID_ARGUMENT, "zero point 128");
	CHECK(etch_frontend_mfcc_int8(&fe, pcm, 16000, IN_SCALE, -129, out, sizeof(out), NULL) ==
		      ETCH_INVALID_ARGUMENT, "zero point -129");
	CHECK(etch_frontend_mfcc_int8(&fe, (const int16_t *)((const char *)pcm + 1), 100, IN_SCALE,
				      IN_ZP, out, sizeof(out), NULL) == ETCH_INVALID_ARGUMENT,
	      "misaligned samples");
	CHECK(etch_frontend_mfcc_int8(&fe, pcm, 16000, IN_SCALE, IN_ZP, (int8_t *)pcm + 2,
				      sizeof(out), NULL) == ETCH_INVALID_ARGUMENT,
	      "output inside the samples");
	CHECK(etch_frontend_mfcc_int8(&fe, pcm, 16000, IN_SCALE, IN_ZP, (int8_t *)&fe,
				      sizeof(out), NULL) == ETCH_INVALID_ARGUMENT,
	      "output inside the scratch");
	/* Digital silence: features undefined, -128 everywhere, peak 0. */
	static const int16_t silent[ETCH_FRONTEND_CLIP_SAMPLES];
	CHECK(etch_frontend_mfcc_int8(&fe, silent, 16000, IN_SCALE, IN_ZP, out, sizeof(out),
				      &peak) == ETCH_OK && peak == 0,
	      "silence: peak %d", peak);
	int all_min = 1;
	for (size_t i = 0; i < sizeof(out); i++) {
		all_min &= out[i] == -128;
	}
	CHECK(all_min, "silence gives -128 everywhere");
	/* Float features: NaN for silence, finite otherwise. */
	static float f[ETCH_FRONTEND_FEATURES];
	CHECK(etch_frontend_mfcc(&fe, pcm, 16000, f, ETCH_FRONTEND_FEATURES, NULL) == ETCH_OK &&
		      f[0] == f[0], "float features");
	CHECK(etch_frontend_mfcc(&fe, pcm, 16000, f, ETCH_FRONTEND_FEATURES - 1, NULL) ==
		      ETCH_INVALID_ARGUMENT, "short float output");
	/* Streams: uninitialised handle, wrong hop, not ready yet. */
	memset(&stream, 0, sizeof(stream));
	CHECK(etch_frontend_stream_push(&stream, &fe, pcm, ETCH_FRONTEND_HOP_SAMPLES) ==
		      ETCH_INVALID_STATE, "push on an uninitialised stream");
	CHECK(etch_frontend_stream_hops(&stream, &hops) == ETCH_INVALID_STATE,
	      "hops of an uninitialised stream");
	CHECK(etch_frontend_stream_init(NULL) == ETCH_INVALID_ARGUMENT, "init NULL");
	CHECK(etch_frontend_stream_init(&stream) == ETCH_OK, "init");
	CHECK(etch_frontend_stream_push(&stream, &fe, pcm, ETCH_FRONTEND_HOP_SAMPLES - 1) ==
		      ETCH_INVALID_ARGUMENT, "short hop");
	CHECK(etch_frontend_stream_push(&stream, NULL, pcm, ETCH_FRONTEND_HOP_SAMPLES) ==
		      ETCH_INVALID_ARGUMENT, "push without scratch");
	CHECK(etch_frontend_stream_push(&stream, &fe, pcm, ETCH_FRONTEND_HOP_SAMPLES) == ETCH_OK,
	      "push");
	CHECK(etch_frontend_stream_features_int8(&stream, IN_SCALE, IN_ZP, out, sizeof(out),
						 NULL) == ETCH_INVALID_STATE,
	      "features after one hop");
	/* `peak` inside `out`, the samples, the scratch or the stream: refused
	 * before anything is written (once silently overwritten). */
	memset(out, 0x55, sizeof(out));
	CHECK(etch_frontend_mfcc_int8(&fe, pcm, 16000, IN_SCALE, IN_ZP, out, sizeof(out),
				      (int16_t *)(void *)(out + 100)) == ETCH_INVALID_ARGUMENT,
	      "peak inside the output");
	CHECK(out[100] == 0x55 && out[0] == 0x55, "output written on a refused call");
	CHECK(etch_frontend_mfcc_int8(&fe, pcm, 16000, IN_SCALE, IN_ZP, out, sizeof(out),
				      pcm + 5) == ETCH_INVALID_ARGUMENT,
	      "peak inside the samples");
	CHECK(etch_frontend_mfcc_int8(&fe, pcm, 16000, IN_SCALE, IN_ZP, out, sizeof(out),
				      (int16_t *)(void *)&fe) == ETCH_INVALID_ARGUMENT,
	      "peak inside the scratch");
	CHECK(etch_frontend_mfcc(&fe, pcm, 16000, f, ETCH_FRONTEND_FEATURES,
				 (int16_t *)(void *)(f + 7)) == ETCH_INVALID_ARGUMENT,
	      "peak inside the float output");
	CHECK(etch_frontend_stream_features_int8(&stream, IN_SCALE, IN_ZP, out, sizeof(out),
						 (int16_t *)(void *)&stream) == ETCH_INVALID_ARGUMENT,
	      "peak inside the stream");
	CHECK(etch_frontend_stream_hops(&stream, (size_t *)(void *)&stream) ==
		      ETCH_INVALID_ARGUMENT, "hops inside the stream");
	CHECK(etch_frontend_stream_push(&stream, (etch_frontend_t *)(void *)&stream, pcm,
					ETCH_FRONTEND_HOP_SAMPLES) == ETCH_INVALID_ARGUMENT,
	      "scratch over the stream");
}

/* The keyword recognizer with hostile numbers: the zero point is
 * any int32 the caller passes, and `score - zero_point` must not wrap. */
static void kws_arguments(void)
{
	static etch_kws_t k;
	etch_kws_config_t cfg = {.labels = 12, .keywords = 10, .window_ms = 1000,
				 .min_count = 1, .threshold = 200, .refractory_ms = 1000};
	etch_kws_detection_t d;
	uint8_t hit = 7;
	int8_t silence[12], loud[12];
	memset(silence, -128, sizeof(silence));
	memset(loud, -128, sizeof(loud));
	loud[3] = 110; /* label 3 at 238 / 255 with zero point -128 */

	CHECK(etch_kws_init(&k, &cfg) == ETCH_OK, "kws init");
	/* INT32_MAX: silence is probability 0, not 255 (wrapped before). */
	CHECK(etch_kws_push_int8(&k, 0, silence, 12, 2147483647, &d, &hit) == ETCH_OK && hit == 0,
	      "silence with zero point INT32_MAX detected (hit %u, label %u, score %u)",
	      (unsigned)hit, (unsigned)d.label, (unsigned)d.score);
	/* INT32_MIN: every score saturates at 255, label 0 wins the tie. */
	CHECK(etch_kws_init(&k, &cfg) == ETCH_OK, "kws init");
	CHECK(etch_kws_push_int8(&k, 0, silence, 12, (int32_t)(-2147483647 - 1), &d, &hit) ==
			  ETCH_OK &&
		      hit == 1 && d.label == 0 && d.score == 255,
	      "zero point INT32_MIN: hit %u label %u score %u", (unsigned)hit, (unsigned)d.label,
	      (unsigned)d.score);
	CHECK(etch_kws_init(&k, &cfg) == ETCH_OK, "kws init");
	CHECK(etch_kws_push_int8(&k, 0, loud, 12, -128, &d, &hit) == ETCH_OK && hit == 1 &&
		      d.label == 3 && d.score == 238,
	      "loud: hit %u label %u score %u", (unsigned)hit, (unsigned)d.label,
	      (unsigned)d.score);
	/* Out-pointers into the recognizer, the scores or each other. */
	CHECK(etch_kws_push_int8(&k, 2000, loud, 12, -128, (etch_kws_detection_t *)(void *)&k,
				 &hit) == ETCH_INVALID_ARGUMENT, "detection inside the recognizer");
	CHECK(etch_kws_push_int8(&k, 2000, loud, 12, -128, &d, (uint8_t *)&d) ==
		      ETCH_INVALID_ARGUMENT, "detected inside the detection");
	CHECK(etch_kws_push_int8(&k, 2000, loud, 12, -128, &d, (uint8_t *)loud) ==
		      ETCH_INVALID_ARGUMENT, "detected inside the scores");
	CHECK(etch_kws_push_int8(&k, 2000, (const int8_t *)&k, 12, -128, &d, &hit) ==
		      ETCH_INVALID_ARGUMENT, "scores inside the recognizer");
	CHECK(etch_kws_init(&k, (const etch_kws_config_t *)(void *)&k) == ETCH_INVALID_ARGUMENT,
	      "config inside the recognizer");
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		printf("usage: %s REPO_ROOT CLIP...\n", argv[0]);
		return 2;
	}
	CHECK((etch_build_features() & ETCH_FEATURE_FRONTEND) != 0,
	      "library built without the frontend feature");
	CHECK(sizeof(etch_frontend_t) == 2048, "etch_frontend_t is %u bytes",
	      (unsigned)sizeof(etch_frontend_t));
	bad_arguments();
	kws_arguments();
	for (int i = 2; i < argc; i++) {
		clip(argv[1], argv[i]);
	}
	printf("%s: %d checks, %d failed, %d clips bit-exact against the reference features\n",
	       failed ? "FAIL" : "ok", passed + failed, failed, failed ? 0 : argc - 2);
	return failed != 0;
}
