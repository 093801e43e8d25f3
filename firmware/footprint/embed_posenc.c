/* Masked add, posenc: y = x * sqrt(D) + sinusoidal row (computed on the fly), padding rows 0. */
#define POSENC_IMPLEMENTATION
#define POSENC_NO_GETENV
#include "posenc.h"
#include "fp.h"

int main(void) {
  posenc_embed_config cfg = posenc_embed_default(FP_EMB_DIM);
  size_t n = (size_t)FP_EMB_TOKENS * FP_EMB_DIM;
  float *x = fp_buffer(n * sizeof *x), *y = fp_buffer(n * sizeof *y);
  uint8_t *mask = fp_buffer(FP_EMB_TOKENS);
  posenc_embed_tokens tokens = {0};
  posenc_embed_tensor tx = {0}, ty = {0};
  int t;
  for (t = 0; t < FP_EMB_TOKENS; t++) mask[t] = t < FP_EMB_TOKENS - 4;
  fp_fill(x, n);
  tokens.batch = 1;
  tokens.tokens = FP_EMB_TOKENS;
  tokens.mode = POSENC_POS_RANGE;
  tokens.mask = mask;
  tx.data = x;
  tx.dtype = POSENC_DTYPE_F32;
  ty.data = y;
  ty.dtype = POSENC_DTYPE_F32;
  if (posenc_embed_forward(&cfg, &tokens, &tx, &ty) != POSENC_OK) return 1;
  fp_keep(y, n * sizeof *y);
  return 0;
}
