/* RoPE on the fly (no cache), posenc: Q and K of FP_ROPE_TOKENS tokens rotated in place. */
#define POSENC_IMPLEMENTATION
#define POSENC_NO_GETENV
#include "posenc.h"
#include "fp.h"

static POSENC_ROPE_STORAGE(FP_ROPE_DIM) rope;  /* static: the rope's storage counts in .bss */

int main(void) {
  posenc_rope_config cfg = posenc_rope_default(FP_ROPE_DIM);
  size_t nq = (size_t)FP_ROPE_TOKENS * FP_ROPE_QHEADS * FP_ROPE_DIM;
  size_t nk = (size_t)FP_ROPE_TOKENS * FP_ROPE_KHEADS * FP_ROPE_DIM;
  float *q = fp_buffer(nq * sizeof *q), *k = fp_buffer(nk * sizeof *k);
  posenc_rope_positions pos = {1, FP_ROPE_TOKENS, NULL, 0};
  posenc_rope_tensor tq = {q, POSENC_DTYPE_F32, FP_ROPE_QHEADS, 0, 0, 0};
  posenc_rope_tensor tk = {k, POSENC_DTYPE_F32, FP_ROPE_KHEADS, 0, 0, 0};
  fp_fill(q, nq);
  fp_fill(k, nk);
  if (posenc_rope_init(&rope.rope, sizeof rope, &cfg) != POSENC_OK) return 1;
  if (posenc_rope_apply(&rope.rope, NULL, &pos, &tq, &tk, POSENC_ROPE_FORWARD) != POSENC_OK) return 1;
  fp_keep(q, nq * sizeof *q);
  fp_keep(k, nk * sizeof *k);
  return 0;
}
