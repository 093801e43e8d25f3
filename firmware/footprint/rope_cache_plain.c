/* RoPE cos/sin cache, plain newlib libm: the same rows as rope_cache_posenc.c. */
#include <math.h>
#include "fp.h"

int main(void) {
  enum { H = FP_ROPE_DIM / 2 };
  size_t bytes = (size_t)FP_ROPE_POS * FP_ROPE_DIM * sizeof(float);
  float *out = fp_buffer(bytes);
  int p, j;
  for (p = 0; p < FP_ROPE_POS; p++)
    for (j = 0; j < H; j++) {
      float a = (float)p * powf(10000.0f, -2.0f * (float)j / (float)FP_ROPE_DIM);
      out[p * FP_ROPE_DIM + j] = cosf(a);
      out[p * FP_ROPE_DIM + H + j] = sinf(a);
    }
  fp_keep(out, bytes);
  return 0;
}
