/* The start-up's MPU guard: a write through a null pointer must fault (the runner then exits
 * with status 3, which firmware/meson.build requires), not silently overwrite the vector table. */
#include <stdio.h>

int main(void) {
  volatile unsigned *volatile null = 0;
  null[3] = 0;   /* the HardFault vector */
  printf("write through a null pointer did not fault\n");
  return 0;
}
