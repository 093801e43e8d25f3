/* NoPE (seed 004): causal attention without any position encoding still knows position. With
 * uniform attention (all scores equal) the causal mask makes y_n the mean of v_1..v_n, so for
 * v's components drawn i.i.d. with mean 0 and variance s2 the mean square of y_n is s2/n: the
 * position hides in the norm. Without the mask every row averages all L values: no position.
 * Build and run: meson compile -C build && build/examples/nope */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "posenc.h"

enum { H = 8, L = 64, D = 4096 }; /* H heads, each with its own V: H*D samples per mean square */

static int check(posenc_status st) {
  if (st != POSENC_OK) fprintf(stderr, "posenc: %s\n", posenc_strerror(st));
  return st != POSENC_OK;
}

/* Y = softmax(S) V for one head (a masked -inf score gets weight 0); ms[n] += mean_d Y[n]^2 / H. */
static void attend(const float *S, const float *V, double *ms) {
  static double y[D];
  int n, m, j;
  for (n = 0; n < L; n++) {
    double sq = 0.0;
    double mx = -INFINITY, sum = 0.0;
    for (m = 0; m < L; m++) mx = S[n * L + m] > mx ? S[n * L + m] : mx;
    for (j = 0; j < D; j++) y[j] = 0.0;
    for (m = 0; m < L; m++) {
      double w = exp(S[n * L + m] - mx); /* exp(-inf) = 0: a masked key */
      sum += w;
      for (j = 0; j < D; j++) y[j] += w * V[m * D + j];
    }
    for (j = 0; j < D; j++) sq += (y[j] / sum) * (y[j] / sum);
    ms[n] += sq / D / H;
  }
}

int main(void) {
  float *V = malloc(sizeof(float) * H * L * D), *S = calloc(H * L * L, sizeof(float)); /* S: all 0 */
  double ms[L] = {0}, s2 = 0.0, worst = 0.0, lo = INFINITY, hi = 0.0, spread = sqrt(2.0 / (H * D));
  posenc_score_tile tile = {NULL, POSENC_DTYPE_F32, H, L, L, 0, 0, 0, 0};
  posenc_score_mask causal = {1, 0, NULL};
  int i, n, h;
  if (!V || !S) return 1;
  tile.scores = S;
  /* V: a truncated normal (std 1, cut at 2 std), the same bits on every machine */
  if (check(posenc_learned_init(4, 1.0, H * L, D, POSENC_DTYPE_F32, 0, V, sizeof(float) * H * L * D))) return 1;
  for (i = 0; i < H * L * D; i++) s2 += (double)V[i] * V[i];
  s2 /= (double)H * L * D; /* the measured variance (mean square) of V's components, about 0.774 */

  /* bidirectional first: no mask, every row is the mean of all L values */
  for (h = 0; h < H; h++) attend(S + h * L * L, V + (size_t)h * L * D, ms);
  for (n = 0; n < L; n++) lo = ms[n] < lo ? ms[n] : lo, hi = ms[n] > hi ? ms[n] : hi;

  if (check(posenc_mask_apply(&tile, &causal))) return 1; /* k > q becomes -inf, every head */
  for (n = 0; n < L; n++) ms[n] = 0.0;
  for (h = 0; h < H; h++) attend(S + h * L * L, V + (size_t)h * L * D, ms);
  printf("uniform causal attention, %d heads of V [%d][%d], s2 = %.6f (measured variance of V)\n", H, L, D, s2);
  printf("   n | mean square of y_n |    s2 / n    | ratio\n");
  for (n = 1; n <= L; n *= 2) {
    double ratio = ms[n - 1] / (s2 / n);
    printf("%4d | %18.6e | %12.6e | %.4f\n", n, ms[n - 1], s2 / n, ratio);
    worst = fabs(ratio - 1.0) > worst ? fabs(ratio - 1.0) : worst;
  }
  printf("fit: max |ratio - 1| = %.4f (sampling spread about sqrt(2/(H d)) = %.4f): %s\n", worst, spread,
         worst < 4.0 * spread ? "ok, mean square = s2/n" : "POOR FIT");
  printf("bidirectional (no mask): every row's mean square in [%.6e, %.6e], s2/L = %.6e: "
         "the same for every position\n", lo, hi, s2 / L);
  free(V);
  free(S);
  return worst < 4.0 * spread && lo == hi ? 0 : 1;
}
