/* The baseline: the start-up and the harness (fp_fill, fp_keep), no feature. */
#include "fp.h"

int main(void) {
  float *x = fp_buffer(4 * sizeof *x);
  fp_fill(x, 4);
  fp_keep(x, 4 * sizeof *x);
  return 0;
}
