/* T5 tile, plain newlib libm: HF's _relative_position_bucket (bidirectional) and the bias add of
 * t5_posenc.c. */
#include <math.h>
#include "fp.h"

static int bucket(int r) {
  const int n = FP_T5_BUCKETS / 2, exact = n / 2;
  int base = r > 0 ? n : 0, a = r < 0 ? -r : r, b;
  if (a < exact) return base + a;
  b = exact + (int)(logf((float)a / exact) / logf((float)FP_T5_MAXDIST / exact) * (float)(n - exact));
  return base + (b < n - 1 ? b : n - 1);
}

int main(void) {
  size_t n = (size_t)FP_TILE_HEADS * FP_TILE_ROWS * FP_TILE_COLS;
  float *s = fp_buffer(n * sizeof *s), *bias = fp_buffer(FP_T5_BUCKETS * FP_TILE_HEADS * sizeof *bias);
  int h, i, j;
  fp_fill(s, n);
  fp_fill(bias, FP_T5_BUCKETS * FP_TILE_HEADS);
  for (h = 0; h < FP_TILE_HEADS; h++)
    for (i = 0; i < FP_TILE_ROWS; i++)
      for (j = 0; j < FP_TILE_COLS; j++)
        s[((size_t)h * FP_TILE_ROWS + i) * FP_TILE_COLS + j] += bias[bucket(j - i) * FP_TILE_HEADS + h];
  fp_keep(s, n * sizeof *s);
  return 0;
}
