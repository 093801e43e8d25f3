/* Masked add, plain newlib libm: what embed_posenc.c computes. */
#include <math.h>
#include "fp.h"

int main(void) {
  size_t n = (size_t)FP_EMB_TOKENS * FP_EMB_DIM;
  float *x = fp_buffer(n * sizeof *x), *y = fp_buffer(n * sizeof *y);
  uint8_t *mask = fp_buffer(FP_EMB_TOKENS);
  float scale = sqrtf((float)FP_EMB_DIM);
  int t, i;
  for (t = 0; t < FP_EMB_TOKENS; t++) mask[t] = t < FP_EMB_TOKENS - 4;
  fp_fill(x, n);
  for (t = 0; t < FP_EMB_TOKENS; t++)
    for (i = 0; i < FP_EMB_DIM / 2; i++) {
      float w = powf(10000.0f, -2.0f * (float)i / (float)FP_EMB_DIM);
      float *xr = x + t * FP_EMB_DIM, *yr = y + t * FP_EMB_DIM;
      yr[2 * i] = mask[t] ? xr[2 * i] * scale + sinf((float)t * w) : 0.0f;
      yr[2 * i + 1] = mask[t] ? xr[2 * i + 1] * scale + cosf((float)t * w) : 0.0f;
    }
  fp_keep(y, n * sizeof *y);
  return 0;
}
