/*
 * The C harnesses' checks: CHECK(cond, fmt, ...) counts a pass or prints
 * the failure (file, line, the condition and the message) and counts it;
 * CHECK_STATUS(expr, want) checks a call's etch_status_t and prints both
 * codes by name. A harness that names the case it is checking defines
 * CHECK_CTX (an expression giving a string, in scope at every CHECK) before
 * including this file; it is printed in brackets after the line. Each
 * harness prints its own "N passed, M failed" from `passed` and `failed`.
 */
#ifndef ETCH_TEST_CHECK_H
#define ETCH_TEST_CHECK_H

#include <stdio.h>

#include "etch.h"

static int passed, failed;

#ifdef CHECK_CTX
#define CHECK_FAIL_AT_() printf("FAIL %s:%d [%s]: ", __FILE__, __LINE__, CHECK_CTX)
#else
#define CHECK_FAIL_AT_() printf("FAIL %s:%d: ", __FILE__, __LINE__)
#endif

#define CHECK(cond, ...)        \
  do {                          \
    if (cond) {                 \
      passed++;                 \
    } else {                    \
      failed++;                 \
      CHECK_FAIL_AT_();         \
      printf("%s: ", #cond);    \
      printf(__VA_ARGS__);      \
      printf("\n");             \
    }                           \
  } while (0)

#define CHECK_STATUS(expr, want)                                                          \
  do {                                                                                    \
    etch_status_t got_ = (expr);                                                          \
    CHECK(got_ == (etch_status_t)(want), "got 0x%02x %s, want 0x%02x %s", (unsigned)got_, \
          etch_status_str(got_), (unsigned)(want), etch_status_str(want));                \
  } while (0)

#endif
