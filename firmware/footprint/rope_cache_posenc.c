/* RoPE cos/sin cache, posenc: FP_ROPE_POS rows of [cos(h) | sin(h)], h = FP_ROPE_DIM/2, f32. */
#define POSENC_IMPLEMENTATION
#define POSENC_NO_GETENV
#include "posenc.h"
#include "fp.h"

static POSENC_ROPE_STORAGE(FP_ROPE_DIM) rope;  /* static: the rope's storage counts in .bss */

int main(void) {
  posenc_rope_config cfg = posenc_rope_default(FP_ROPE_DIM);
  posenc_rope_cache_spec spec = {POSENC_ROPE_CACHE_HALF, POSENC_DTYPE_F32, 0};
  size_t bytes = (size_t)FP_ROPE_POS * FP_ROPE_DIM * sizeof(float);
  float *out = fp_buffer(bytes);
  if (posenc_rope_init(&rope.rope, sizeof rope, &cfg) != POSENC_OK) return 1;
  if (posenc_rope_cache_table(&rope.rope, &spec, 0, FP_ROPE_POS, out, bytes) != POSENC_OK) return 1;
  fp_keep(out, bytes);
  return 0;
}
