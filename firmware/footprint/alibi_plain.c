/* ALiBi tile, plain newlib libm: what alibi_posenc.c computes (heads a power of two). */
#include <math.h>
#include "fp.h"

int main(void) {
  size_t n = (size_t)FP_TILE_HEADS * FP_TILE_ROWS * FP_TILE_COLS;
  float *s = fp_buffer(n * sizeof *s), *slopes = fp_buffer(FP_TILE_HEADS * sizeof *slopes);
  int h, i, j;
  fp_fill(s, n);
  for (h = 0; h < FP_TILE_HEADS; h++) slopes[h] = powf(2.0f, -8.0f * (float)(h + 1) / FP_TILE_HEADS);
  for (h = 0; h < FP_TILE_HEADS; h++)
    for (i = 0; i < FP_TILE_ROWS; i++)
      for (j = 0; j < FP_TILE_COLS; j++) {
        float *e = s + ((size_t)h * FP_TILE_ROWS + i) * FP_TILE_COLS + j;
        *e = j > i ? -INFINITY : *e + slopes[h] * (float)(j - i);
      }
  fp_keep(s, n * sizeof *s);
  return 0;
}
