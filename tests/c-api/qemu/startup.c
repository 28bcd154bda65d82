/* Vector table for the bare-metal harness (mps2-an385 Cortex-M3, mps2-an386
 * Cortex-M4F): reset runs newlib's crt0
 * (`_start`: zeroes .bss, sets up semihosting I/O, calls main, exits); any
 * fault ends QEMU with a failure instead of hanging. */
#include <stdint.h>

extern void _start(void);
extern uint32_t __stack;

void Reset_Handler(void) {
#if defined(__ARM_FP)
  /* Hard-float builds: enable CP10/CP11 (the FPU) before any float code. */
  volatile uint32_t *cpacr = (volatile uint32_t *)0xE000ED88u;
  *cpacr |= 0xFu << 20;
  __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
  _start();
}

static void fault(void) {
  register int r0 __asm__("r0") = 0x18;     /* SYS_EXIT */
  register int r1 __asm__("r1") = 0x20023; /* ADP_Stopped_RunTimeError */
  __asm__ volatile("bkpt 0xab" : : "r"(r0), "r"(r1) : "memory");
  for (;;) {
  }
}

__attribute__((section(".vectors"), used)) static const void *const vectors[16] = {
    &__stack, (const void *)Reset_Handler, (const void *)fault, (const void *)fault,
    (const void *)fault, (const void *)fault, (const void *)fault,
};
