/* Start-up for posenc's test firmware on Cortex-M under qemu: vector table, FPU enable, MPU
 * guard on the code, .bss, newlib's semihosting I/O (rdimon), then the test's main(). The stack
 * is painted first so that the firmware reports its high-water mark, and fails if it used the
 * whole stack. Faults end the run (status 3) instead of hanging it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STACK_PAINT 0xC0FFEE11u
#define REG(a) (*(volatile uint32_t *)(a))

extern uint32_t __bss_start__[], __bss_end__[], __stack_limit__[], __stack_top__[];
extern uint32_t __flash_start__[], __flash_end__[];
extern char *__heap_limit;   /* newlib (rdimon): _sbrk's limit, besides the stack pointer */
extern int main(int argc, char **argv);
extern void initialise_monitor_handles(void);
extern void __libc_init_array(void);

/* Words of the stack region that were written (from the bottom up to the first paint). */
static size_t stack_used_bytes(void) {
  const uint32_t *p = __stack_limit__;
  while (p < __stack_top__ && *p == STACK_PAINT) p++;
  return (size_t)(__stack_top__ - p) * 4;
}

/* Linked with -nostartfiles (the start-up is this file): no crti/crtn, so empty _init/_fini for
 * newlib's __libc_init_array / __libc_fini_array; constructors run from .init_array. */
void _init(void) {}
void _fini(void) {}

/* Faults end the run with status 3 and the faulting PC (the stacked frame's 7th word). */
void fault_report(const uint32_t *frame) {
  printf("firmware: fault at pc 0x%08lx\n", (unsigned long)frame[6]);
  _exit(3);
}
__attribute__((naked)) static void fault(void) {
  __asm__ volatile("mrs r0, msp\n\tb fault_report");
}

/* The code region is read-only: on these boards RAM sits at address 0, where a write through
 * a null pointer would otherwise overwrite the vector table and the code without a fault. */
static void mpu_protect_code(void) {
  const uint32_t base = (uint32_t)__flash_start__, size = (uint32_t)__flash_end__ - base;
  REG(0xE000ED98) = 0;                                        /* MPU_RNR: region 0 */
#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)  /* PMSAv8 */
  REG(0xE000EDC0) = 0xFF;                                     /* MAIR0 attr 0: normal, write-back */
  REG(0xE000ED9C) = base | 3u << 1;                           /* RBAR: AP read-only */
  REG(0xE000EDA0) = ((base + size - 1) & ~0x1Fu) | 1u;         /* RLAR: limit, attr 0, enable */
#else                                                         /* PMSAv7: size a power of two */
  REG(0xE000ED9C) = base;
  REG(0xE000EDA0) = 6u << 24 | 1u << 17 | (uint32_t)(31 - __builtin_clz(size) - 1) << 1 | 1u;
#endif
  REG(0xE000ED94) = 1u << 2 | 1u;                              /* MPU on, default map elsewhere */
  __asm__ volatile("dsb\n\tisb" ::: "memory");
}

__attribute__((noreturn)) void Reset_Handler(void) {
  static char *argv[] = {"firmware", NULL};
  uint32_t *p;
  int rc;
  size_t used;
  /* CPACR: full access to CP10/CP11. Any FP instruction before this faults. */
  REG(0xE000ED88) |= 0xFu << 20;
  __asm__ volatile("dsb\n\tisb" ::: "memory");
  mpu_protect_code();
  for (p = __bss_start__; p < __bss_end__; p++) *p = 0;
  __heap_limit = (char *)__stack_limit__;   /* malloc fails rather than grow into the stack */
  /* Paint the stack below this frame (the start-up's own few words stay unpainted). */
  for (p = __stack_limit__; p < (uint32_t *)__builtin_frame_address(0) - 16; p++) *p = STACK_PAINT;
  initialise_monitor_handles();
  __libc_init_array();
  rc = main(1, argv);
  used = stack_used_bytes();
  printf("firmware: stack high-water %u of %u bytes\n", (unsigned)used,
         (unsigned)((__stack_top__ - __stack_limit__) * 4));
  if (__stack_limit__[0] != STACK_PAINT) {
    printf("firmware: stack overflow\n");
    rc = 1;
  }
  exit(rc);
}

void NMI_Handler(void) __attribute__((alias("fault")));
void HardFault_Handler(void) __attribute__((alias("fault")));

/* Architectural exceptions only: the tests enable no interrupt. */
typedef union { uint32_t *sp; void (*handler)(void); } vector;
__attribute__((section(".vectors"), used)) static const vector vectors[16] = {
  {.sp = __stack_top__}, {.handler = Reset_Handler}, {.handler = NMI_Handler}, {.handler = HardFault_Handler},
  {.handler = fault}, {.handler = fault}, {.handler = fault}, {.handler = fault}, {0}, {0}, {0},
  {.handler = fault}, {.handler = fault}, {0}, {.handler = fault}, {.handler = fault},
};
