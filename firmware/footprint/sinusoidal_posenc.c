/* Sinusoidal table, posenc: FP_SIN_POS rows of d = FP_SIN_DIM, f32, interleaved, base 10000. */
#define POSENC_IMPLEMENTATION
#define POSENC_NO_GETENV
#include "posenc.h"
#include "fp.h"

int main(void) {
  posenc_sinusoidal_params params = posenc_sinusoidal_default(FP_SIN_DIM);
  size_t bytes = (size_t)FP_SIN_POS * FP_SIN_DIM * sizeof(float);
  float *out = fp_buffer(bytes);
  if (posenc_sinusoidal_table(&params, 0, FP_SIN_POS, out, bytes) != POSENC_OK) return 1;
  fp_keep(out, bytes);
  return 0;
}
