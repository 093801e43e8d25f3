/* bias_loops.c - the plain C peers of bench_bias (see bias_loops.h), compiled once per variant
 * with its own flags (BIAS_LOOPS_VARIANT). The project's -ffp-contract=off applies: no fused
 * multiply-add, so fl32(s + fl32(m*D)) as posenc computes it. */
#include <math.h>
#include "bias_loops.h"

#ifndef BIAS_LOOPS_VARIANT
#  error "compile with -DBIAS_LOOPS_VARIANT=scalar|o3|avx2"
#endif
#define BL_CAT2(a, b) a##_##b
#define BL_CAT(a, b) BL_CAT2(a, b)
#define BL(name) BL_CAT(name, BIAS_LOOPS_VARIANT)

void BL(alibi_loop)(float *restrict s, int heads, int rows, int cols, const float *restrict slopes) {
  int h, i, j;
  for (h = 0; h < heads; h++)
    for (i = 0; i < rows; i++) {
      float *restrict r = s + ((size_t)h * (size_t)rows + (size_t)i) * (size_t)cols;
      const float m = slopes[h];
      for (j = 0; j < cols; j++) r[j] = j > i ? -INFINITY : r[j] + m * (float)(j - i);
    }
}

void BL(t5_loop)(float *restrict s, int heads, int rows, int cols, const int32_t *restrict bucket,
                 const float *restrict table, int causal) {
  int h, i, j;
  for (h = 0; h < heads; h++)
    for (i = 0; i < rows; i++) {
      float *restrict r = s + ((size_t)h * (size_t)rows + (size_t)i) * (size_t)cols;
      const int32_t *restrict b = bucket + (rows - 1 - i); /* b[j]: bucket of r = j - i */
      for (j = 0; j < cols; j++)
        r[j] = causal && j > i ? -INFINITY : r[j] + table[b[j] * heads + h];
    }
}

/* The same T5 add through a bias row: v[r] = table[bucket(r)][h] once per head (a gather of
 * rows + cols - 1 values into scratch), then each row adds a slice of v, a contiguous load. */
void BL(t5_row_loop)(float *restrict s, int heads, int rows, int cols, const int32_t *restrict bucket,
                     const float *restrict table, int causal, float *restrict v) {
  int h, i, j, nb = rows + cols - 1;
  for (h = 0; h < heads; h++) {
    for (j = 0; j < nb; j++) v[j] = table[bucket[j] * heads + h];
    for (i = 0; i < rows; i++) {
      float *restrict r = s + ((size_t)h * (size_t)rows + (size_t)i) * (size_t)cols;
      const float *restrict b = v + (rows - 1 - i);
      const int last = causal ? i : cols; /* the last visible key */
      for (j = 0; j < cols; j++) { /* b[j] read unconditionally, no &&: the loop vectorizes */
        float x = r[j] + b[j];
        r[j] = j > last ? -INFINITY : x;
      }
    }
  }
}

/* The read-modify-write floor: the same bytes read and written in place, one add each. */
void BL(rmw_add)(float *restrict x, size_t n, float c) {
  size_t i;
  for (i = 0; i < n; i++) x[i] = x[i] + c;
}

#if defined(BENCH_HAVE_LOOPS_AVX2) /* the avx2 variant only: one definition */
#  include <immintrin.h>
/* One body for both stores: STORE is _mm256_store_ps or _mm256_stream_ps. */
#  define RMW_INTRIN(STORE)                                                                        \
  const __m256 vc = _mm256_set1_ps(c);                                                             \
  size_t i;                                                                                        \
  for (i = 0; i < n; i += 32) {                                                                    \
    __m256 v0 = _mm256_load_ps(x + i), v1 = _mm256_load_ps(x + i + 8);                             \
    __m256 v2 = _mm256_load_ps(x + i + 16), v3 = _mm256_load_ps(x + i + 24);                       \
    STORE(x + i, _mm256_add_ps(v0, vc));                                                           \
    STORE(x + i + 8, _mm256_add_ps(v1, vc));                                                       \
    STORE(x + i + 16, _mm256_add_ps(v2, vc));                                                      \
    STORE(x + i + 24, _mm256_add_ps(v3, vc));                                                      \
  }

void rmw_add_intrin_avx2(float *x, size_t n, float c) { RMW_INTRIN(_mm256_store_ps) }
void rmw_add_intrin_avx2_nt(float *x, size_t n, float c) {
  RMW_INTRIN(_mm256_stream_ps)
  _mm_sfence();
}
#endif
