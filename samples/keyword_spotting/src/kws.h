/*
 * Shared between main.c and native.c.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KWS_H
#define KWS_H

#include <stddef.h>
#include <stdint.h>

struct kws_totals {
	unsigned int clips;
	unsigned int named;
	unsigned int as_named;
	unsigned int failed;
	uint64_t frontend_cycles;
	uint64_t inference_cycles;
	/* Deepest stack of one etch_method_execute(), by stack painting; 0: not measured. */
	size_t inference_stack;
};

/* Labels one WAV file (in memory) and prints the result; 0 on success. */
int kws_run_clip(const char *name, const uint8_t *wav, size_t size, struct kws_totals *t);

/* native_sim: runs the --wav files; returns how many were given. */
int kws_native_files(struct kws_totals *t);

/* native_sim: ends the process with `code`. */
void kws_native_exit(int code);

#endif /* KWS_H */
