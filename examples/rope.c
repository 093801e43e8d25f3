/* posenc RoPE example: a Llama-3.1-style rope (theta 500000, factor 8), prefill and decode on
 * [tokens][heads][head_dim] Q and K with GQA, on the fly and from a cache, and the inverse.
 * Run: build/examples/rope */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "posenc.h"

enum { T = 6, HQ = 4, HK = 2, D = 64, CACHE_ROWS = 64 };

static void fill(float *x, size_t n, float seed) {
  size_t i;
  for (i = 0; i < n; i++) x[i] = (float)sin(seed + 0.37 * (double)i);
}

static int check(posenc_status st, const char *what) {
  if (st != POSENC_OK) fprintf(stderr, "%s: %s\n", what, posenc_strerror(st));
  return st != POSENC_OK;
}

int main(void) {
  POSENC_ROPE_STORAGE(D) st;  /* 2 KiB for d = 64: the stack, static or heap; init once per model */
  posenc_rope *rope = &st.rope;
  static float q[T * HQ * D], k[T * HK * D], q2[T * HQ * D], k2[T * HK * D], q0[T * HQ * D];
  static float cache[CACHE_ROWS * D];  /* [cos(32) | sin(32)] per position (vLLM layout) */
  posenc_rope_config cfg = posenc_rope_default(D);
  posenc_rope_cache_spec spec = {POSENC_ROPE_CACHE_HALF, POSENC_DTYPE_F32, 0};
  posenc_rope_cache_view view;
  posenc_rope_positions prefill = {1, T, NULL, 0};  /* positions 0..T-1 */
  posenc_rope_tensor tq = {q, POSENC_DTYPE_F32, HQ, 0, 0, 0}, tk = {k, POSENC_DTYPE_F32, HK, 0, 0, 0};
  posenc_rope_tensor tq2 = {q2, POSENC_DTYPE_F32, HQ, 0, 0, 0}, tk2 = {k2, POSENC_DTYPE_F32, HK, 0, 0, 0};
  double err = 0.0;
  size_t i;

  cfg.base = 500000.0;
  cfg.scaling = POSENC_ROPE_SCALING_LLAMA3;
  cfg.factor = 8.0;
  cfg.original_max_pos = 8192;
  if (check(posenc_rope_init(rope, sizeof st, &cfg), "init")) return 1;
  printf("posenc %s, backend %s: llama3 rope, d = %d, A = %g\n", POSENC_VERSION_STRING,
         posenc_isa_name(posenc_isa_active()), D, rope->attention_factor);
  printf("inv_freq[0, 20, 31] = %.9g %.9g %.9g\n", posenc_rope_inv_freq(rope)[0], posenc_rope_inv_freq(rope)[20],
         posenc_rope_inv_freq(rope)[31]);

  fill(q, sizeof q / sizeof q[0], 0.1f); fill(k, sizeof k / sizeof k[0], 0.2f);
  memcpy(q0, q, sizeof q);
  memcpy(q2, q, sizeof q); memcpy(k2, k, sizeof k);

  /* prefill on the fly: no cache, cos/sin computed once per token and shared by all heads */
  if (check(posenc_rope_apply(rope, NULL, &prefill, &tq, &tk, POSENC_ROPE_FORWARD), "apply")) return 1;

  /* the same from a cache of positions 0..63: the same bits */
  if (check(posenc_rope_cache_table(rope, &spec, 0, CACHE_ROWS, cache, sizeof cache), "cache")) return 1;
  view.data = cache; view.n_rows = CACHE_ROWS; view.spec = spec;
  if (check(posenc_rope_apply(rope, &view, &prefill, &tq2, &tk2, POSENC_ROPE_FORWARD), "apply cached")) return 1;
  printf("prefill of %d tokens, %d q heads + %d k heads: cached == on the fly: %s\n", T, HQ, HK,
         memcmp(q, q2, sizeof q) == 0 && memcmp(k, k2, sizeof k) == 0 ? "yes, bit for bit" : "NO");

  /* undo it: the inverse rotation returns the input within the rounding of two rotations */
  if (check(posenc_rope_apply(rope, NULL, &prefill, &tq, NULL, POSENC_ROPE_INVERSE), "inverse")) return 1;
  for (i = 0; i < sizeof q / sizeof q[0]; i++) { /* a plain compare: aarch64 gcc 12 -O3 ICEs on an fmax reduction */
    double e = fabs((double)q[i] - (double)q0[i]);
    if (e > err) err = e;
  }
  printf("inverse(forward(q)) - q: max |difference| %.3g\n", err);

  /* decode: one new token at position 100000 (past the cache: on the fly) */
  {
    posenc_rope_positions decode = {1, 1, NULL, 100000};
    posenc_rope_tensor one = {q, POSENC_DTYPE_F32, HQ, 0, 0, 0};
    if (check(posenc_rope_apply(rope, NULL, &decode, &one, NULL, POSENC_ROPE_FORWARD), "decode")) return 1;
    printf("decode at p = 100000: q[0][0..3] = %.6f %.6f %.6f %.6f\n", q[0], q[1], q[2], q[3]);
    printf("the same token from the 64-row cache: %s\n",
           posenc_strerror(posenc_rope_apply(rope, &view, &decode, &one, NULL, POSENC_ROPE_FORWARD)));
  }
  return 0;
}
