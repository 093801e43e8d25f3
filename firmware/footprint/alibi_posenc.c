/* ALiBi tile, posenc: slopes for FP_TILE_HEADS heads (max_bias 8), then bias + causal mask. */
#define POSENC_IMPLEMENTATION
#define POSENC_NO_GETENV
#include "posenc.h"
#include "fp.h"

int main(void) {
  size_t n = (size_t)FP_TILE_HEADS * FP_TILE_ROWS * FP_TILE_COLS;
  float *s = fp_buffer(n * sizeof *s), *slopes = fp_buffer(FP_TILE_HEADS * sizeof *slopes);
  posenc_score_tile tile = {0};
  posenc_score_mask mask = {1, 0, NULL};
  fp_fill(s, n);
  tile.scores = s;
  tile.dtype = POSENC_DTYPE_F32;
  tile.heads = FP_TILE_HEADS;
  tile.rows = FP_TILE_ROWS;
  tile.cols = FP_TILE_COLS;
  if (posenc_alibi_slopes(FP_TILE_HEADS, 8.0, slopes) != POSENC_OK) return 1;
  if (posenc_alibi_add(&tile, &mask, POSENC_ALIBI_RELATIVE, 0, slopes) != POSENC_OK) return 1;
  fp_keep(s, n * sizeof *s);
  return 0;
}
