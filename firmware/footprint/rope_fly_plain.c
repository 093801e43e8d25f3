/* RoPE on the fly, plain newlib libm: the rotation of rope_fly_posenc.c (NeoX pairs j, j + d/2). */
#include <math.h>
#include "fp.h"

static void rotate(float *x, int heads, int t) {
  enum { H = FP_ROPE_DIM / 2 };
  int h, j;
  for (j = 0; j < H; j++) {
    float a = (float)t * powf(10000.0f, -2.0f * (float)j / (float)FP_ROPE_DIM);
    float c = cosf(a), s = sinf(a);
    for (h = 0; h < heads; h++) {
      float *v = x + ((size_t)t * heads + h) * FP_ROPE_DIM;
      float x0 = v[j], x1 = v[j + H];
      v[j] = x0 * c - x1 * s;
      v[j + H] = x1 * c + x0 * s;
    }
  }
}

int main(void) {
  size_t nq = (size_t)FP_ROPE_TOKENS * FP_ROPE_QHEADS * FP_ROPE_DIM;
  size_t nk = (size_t)FP_ROPE_TOKENS * FP_ROPE_KHEADS * FP_ROPE_DIM;
  float *q = fp_buffer(nq * sizeof *q), *k = fp_buffer(nk * sizeof *k);
  int t;
  fp_fill(q, nq);
  fp_fill(k, nk);
  for (t = 0; t < FP_ROPE_TOKENS; t++) {
    rotate(q, FP_ROPE_QHEADS, t);
    rotate(k, FP_ROPE_KHEADS, t);
  }
  fp_keep(q, nq * sizeof *q);
  fp_keep(k, nk * sizeof *k);
  return 0;
}
