/* Sinusoidal table, plain newlib libm: the same rows as sinusoidal_posenc.c. */
#include <math.h>
#include "fp.h"

int main(void) {
  size_t bytes = (size_t)FP_SIN_POS * FP_SIN_DIM * sizeof(float);
  float *out = fp_buffer(bytes);
  int p, i;
  for (p = 0; p < FP_SIN_POS; p++)
    for (i = 0; i < FP_SIN_DIM / 2; i++) {
      float w = powf(10000.0f, -2.0f * (float)i / (float)FP_SIN_DIM);
      out[p * FP_SIN_DIM + 2 * i] = sinf((float)p * w);
      out[p * FP_SIN_DIM + 2 * i + 1] = cosf((float)p * w);
    }
  fp_keep(out, bytes);
  return 0;
}
