/* T5 tile, posenc: bidirectional buckets (FP_T5_BUCKETS, max distance FP_T5_MAXDIST), the learned
 * bias table [bucket][head] added to an unmasked tile. */
#define POSENC_IMPLEMENTATION
#define POSENC_NO_GETENV
#include "posenc.h"
#include "fp.h"

static posenc_t5_plan plan;   /* static: the plan counts in .bss */

int main(void) {
  size_t n = (size_t)FP_TILE_HEADS * FP_TILE_ROWS * FP_TILE_COLS;
  float *s = fp_buffer(n * sizeof *s), *bias = fp_buffer(FP_T5_BUCKETS * FP_TILE_HEADS * sizeof *bias);
  posenc_t5_buckets cfg = {FP_T5_BUCKETS, FP_T5_MAXDIST, 1};
  posenc_table table = {0};
  posenc_score_tile tile = {0};
  fp_fill(s, n);
  fp_fill(bias, FP_T5_BUCKETS * FP_TILE_HEADS);
  table.data = bias;
  table.dtype = POSENC_DTYPE_F32;
  table.n_rows = FP_T5_BUCKETS;
  table.dim = FP_TILE_HEADS;
  tile.scores = s;
  tile.dtype = POSENC_DTYPE_F32;
  tile.heads = FP_TILE_HEADS;
  tile.rows = FP_TILE_ROWS;
  tile.cols = FP_TILE_COLS;
  if (posenc_t5_plan_init(&plan, &cfg) != POSENC_OK) return 1;
  if (posenc_t5_bias_add(&tile, NULL, &plan, &table, 0) != POSENC_OK) return 1;
  fp_keep(s, n * sizeof *s);
  return 0;
}
