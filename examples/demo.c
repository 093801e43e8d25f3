/* posenc demo: a sinusoidal table, the backend that made it, and its accuracy at a long position.
 * Build and run: see README (meson setup build && meson compile -C build && build/examples/demo). */
#include <math.h>
#include <stdio.h>
#include "posenc.h"

int main(void) {
  enum { N = 8, D = 8 };
  float pe[N * D];
  float far[D];
  int32_t far_pos = 16777215; /* 2^24 - 1 */
  posenc_sinusoidal_params prm = posenc_sinusoidal_default(D);
  posenc_status st = posenc_sinusoidal_table(&prm, 0, N, pe, sizeof pe);
  int p, j;
  if (st != POSENC_OK) { fprintf(stderr, "posenc: %s\n", posenc_strerror(st)); return 1; }
  printf("posenc %s, backend %s, self-test %s\n", POSENC_VERSION_STRING,
         posenc_isa_name(posenc_isa_active()), posenc_strerror(posenc_selftest()));
  printf("sinusoidal table, d = %d, base %.0f, interleaved [sin, cos, ...]:\n", D, prm.base);
  for (p = 0; p < N; p++) {
    printf("  p=%d ", p);
    for (j = 0; j < D; j++) printf(" % .6f", pe[p * D + j]);
    printf("\n");
  }
  st = posenc_sinusoidal_rows(&prm, &far_pos, 1, far, sizeof far);
  if (st != POSENC_OK) { fprintf(stderr, "posenc: %s\n", posenc_strerror(st)); return 1; }
  /* column 4 is sin(p * 0.01): the usual recipe rounds the angle p * 0.01f to float first */
  printf("p = %ld, column 4: posenc %.9f, exact %.9f, float-angle recipe sinf(p * 0.01f) %.9f\n",
         (long)far_pos, far[4], sin((double)far_pos * 0.01), sinf((float)far_pos * 0.01f));
  return 0;
}
