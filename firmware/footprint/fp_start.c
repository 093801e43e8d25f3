/* Start-up for the footprint programs (tools/footprint.py) on qemu-system-arm's MPS2 AN386 (M4)
 * and MPS3 AN547 (M55): the FPU on, .bss cleared, the stack painted, main() called, then the
 * stack's high-water mark reported over semihosting. Unlike firmware/startup.c it uses no newlib
 * (no printf, no rdimon), so that a program's size is its feature's and this file's few hundred
 * bytes; the empty program's row shows them. */
#include <stdint.h>
#include "fp.h"

#define STACK_PAINT 0xC0FFEE11u
#define REG(a) (*(volatile uint32_t *)(a))

extern uint32_t __bss_start__[], __bss_end__[], __stack_limit__[], __stack_top__[];
extern char end[];   /* firmware/sections.ld: the end of .bss */
extern int main(void);

static int semihost(int op, const void *arg) {
  register int r0 __asm__("r0") = op;
  register const void *r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

static void put(const char *s) { semihost(0x04, s); }   /* SYS_WRITE0 */

static void put_uint(const char *label, uint32_t v) {
  char buf[16], *p = buf + sizeof buf;
  *--p = 0;
  *--p = '\n';
  do *--p = (char)('0' + v % 10); while (v /= 10);
  put(label);
  put(p);
}

__attribute__((noreturn)) static void finish(uint32_t status) {
  uint32_t args[2] = {0x20026u, status};   /* ADP_Stopped_ApplicationExit, exit status */
  semihost(0x20, args);                    /* SYS_EXIT_EXTENDED */
  for (;;) {}
}

static char *buffer_next = end;
void *fp_buffer(size_t bytes) {
  char *p = (char *)(((uintptr_t)buffer_next + 15) & ~(uintptr_t)15);
  buffer_next = p + bytes;
  return p;
}

void fp_fill(float *x, size_t n) {
  static uint32_t state = 12345u;
  size_t i;
  for (i = 0; i < n; i++) {
    state = state * 1664525u + 1013904223u;
    x[i] = (float)(int32_t)(state >> 16 & 0xFFFFu) / 32768.0f - 1.0f;
  }
}

volatile uint32_t fp_sink;
void fp_keep(const void *p, size_t bytes) {
  const uint32_t *w = (const uint32_t *)p;
  uint32_t sum = 0;
  size_t i;
  for (i = 0; i < bytes / 4; i++) sum = sum * 31u + w[i];
  fp_sink += sum;
}

__attribute__((noreturn)) void Reset_Handler(void) {
  uint32_t *p, *sp;
  int rc;
  REG(0xE000ED88) |= 0xFu << 20;   /* CPACR: CP10/CP11 full access (the FPU) */
  __asm__ volatile("dsb\n\tisb" ::: "memory");
  for (p = __bss_start__; p < __bss_end__; p++) *p = 0;
  /* Paint up to the stack pointer: the high-water mark is then this frame and what main used. */
  __asm__ volatile("mov %0, sp" : "=r"(sp));
  for (p = __stack_limit__; p < sp; p++) *p = STACK_PAINT;
  rc = main();
  for (p = __stack_limit__; p < __stack_top__ && *p == STACK_PAINT; p++) {}
  put_uint("footprint: stack ", (uint32_t)(__stack_top__ - p) * 4);
  finish(rc == 0 && __stack_limit__[0] == STACK_PAINT ? 0 : 1);
}

static void fault(void) {
  put("footprint: fault\n");
  finish(3);
}

typedef union { uint32_t *sp; void (*handler)(void); } vector;
__attribute__((section(".vectors"), used)) static const vector vectors[16] = {
  {.sp = __stack_top__}, {.handler = Reset_Handler}, {.handler = fault}, {.handler = fault},
  {.handler = fault}, {.handler = fault}, {.handler = fault}, {.handler = fault}, {0}, {0}, {0},
  {.handler = fault}, {.handler = fault}, {0}, {.handler = fault}, {.handler = fault},
};
