/*
 * What bindgen reads: Zephyr's DMIC API, with this build's configuration.
 * The prologue is what zephyr-lang-rust's own zephyr-sys/wrapper.h does
 * before any Zephyr header (see there for why).
 */
#undef KERNEL
#include <stdint.h>
#ifndef __INT8_C
#define __INT8_C(x) x
#endif
#ifndef __INT16_C
#define __INT16_C(x) x
#endif
#ifndef __INT32_C
#define __INT32_C(x) x
#endif
#ifndef __INT64_C
#define __INT64_C(x) x##LL
#endif
#ifndef __INTMAX_C
#define __INTMAX_C(x) x##LL
#endif
#ifndef __UINT8_C
#define __UINT8_C(x) x##U
#endif
#ifndef __UINT16_C
#define __UINT16_C(x) x##U
#endif
#ifndef __UINT32_C
#define __UINT32_C(x) x##U
#endif
#ifndef __UINT64_C
#define __UINT64_C(x) x##ULL
#endif
#ifndef __UINTMAX_C
#define __UINTMAX_C(x) x##ULL
#endif
#include <zephyr/autoconf.h>
#if defined(CONFIG_CPU_CORTEX_M) && !defined(CONFIG_FP_HARDABI) && !defined(__SOFTFP__)
#define __SOFTFP__
#endif
#include <zephyr/audio/dmic.h>
