/* Vector table for the bare-metal harness: reset runs newlib's crt0
 * (`_start`: zeroes .bss, sets up semihosting I/O, calls main, exits); any
 * fault ends QEMU with a failure instead of hanging. */
#include <stdint.h>

extern void _start(void);
extern uint32_t __stack;

void Reset_Handler(void) { _start(); }

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
