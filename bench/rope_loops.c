/* rope_loops.c - plain C RoPE loops and a read-modify-write floor, compiled once per variant
 * (ROPE_LOOPS_VARIANT names it: scalar, o3, avx2; see rope_loops.h and bench/meson.build).
 * Written as a user would write them: restrict pointers, run-time sizes, no intrinsics (except
 * rmw_intrin_avx2, the hand-written floor, in the AVX2 variant only).
 */
#include "rope_loops.h"

#ifndef ROPE_LOOPS_VARIANT
#  error "compile with -DROPE_LOOPS_VARIANT=scalar|o3|avx2"
#endif

#define RL_CAT2(a, b) a##_##b
#define RL_CAT(a, b) RL_CAT2(a, b)
#define RL(name) RL_CAT(name, ROPE_LOOPS_VARIANT)

/* NeoX: pairs (j, j + h), c = cache[j], s = cache[h + j]. */
void RL(rope_loop_neox)(float *x, size_t tokens, size_t heads, size_t dim, const float *cache,
                        int32_t start) {
  size_t h = dim / 2, t, hd, j;
  for (t = 0; t < tokens; t++) {
    const float *restrict c = cache + ((size_t)start + t) * dim;
    const float *restrict s = c + h;
    for (hd = 0; hd < heads; hd++) {
      float *restrict x0p = x + (t * heads + hd) * dim;
      float *restrict x1p = x0p + h;
      for (j = 0; j < h; j++) {
        float x0 = x0p[j], x1 = x1p[j];
        x0p[j] = x0 * c[j] - x1 * s[j];
        x1p[j] = x1 * c[j] + x0 * s[j];
      }
    }
  }
}

/* GPT-J: pairs (2j, 2j + 1), the same cache row. */
void RL(rope_loop_gptj)(float *x, size_t tokens, size_t heads, size_t dim, const float *cache,
                        int32_t start) {
  size_t h = dim / 2, t, hd, j;
  for (t = 0; t < tokens; t++) {
    const float *restrict c = cache + ((size_t)start + t) * dim;
    const float *restrict s = c + h;
    for (hd = 0; hd < heads; hd++) {
      float *restrict xp = x + (t * heads + hd) * dim;
      for (j = 0; j < h; j++) {
        float x0 = xp[2 * j], x1 = xp[2 * j + 1];
        xp[2 * j] = x0 * c[j] - x1 * s[j];
        xp[2 * j + 1] = x1 * c[j] + x0 * s[j];
      }
    }
  }
}

/* The read-modify-write floor: the same bytes read and written in place, one multiply each. */
void RL(rmw_loop)(float *restrict x, size_t n, float a) {
  size_t i;
  for (i = 0; i < n; i++) x[i] = x[i] * a;
}

#if defined(__AVX2__)
#  include <immintrin.h>
void rmw_intrin_avx2(float *x, size_t n, float a) {
  const __m256 va = _mm256_set1_ps(a);
  size_t i;
  for (i = 0; i < n; i += 32) {
    __m256 v0 = _mm256_load_ps(x + i), v1 = _mm256_load_ps(x + i + 8);
    __m256 v2 = _mm256_load_ps(x + i + 16), v3 = _mm256_load_ps(x + i + 24);
    _mm256_store_ps(x + i, _mm256_mul_ps(v0, va));
    _mm256_store_ps(x + i + 8, _mm256_mul_ps(v1, va));
    _mm256_store_ps(x + i + 16, _mm256_mul_ps(v2, va));
    _mm256_store_ps(x + i + 24, _mm256_mul_ps(v3, va));
  }
}

/* rmw_intrin_avx2 asking for its lines RMW_PREFETCH_BYTES ahead: the floor for a kernel that
 * prefetches (posenc's rotation asks for the next token's lines, 16 KiB ahead in bench_rope's
 * prefill; at a fixed 2, 8 or 16 KiB ahead it ran alike in a first measurement). */
#define RMW_PREFETCH_FLOATS (RMW_PREFETCH_BYTES / sizeof(float))
void rmw_intrin_avx2_prefetch(float *x, size_t n, float a) {
  const __m256 va = _mm256_set1_ps(a);
  size_t i;
  for (i = 0; i < n; i += 32) {
    __m256 v0, v1, v2, v3;
    if (i + RMW_PREFETCH_FLOATS < n) {
      _mm_prefetch((const char *)(x + i + RMW_PREFETCH_FLOATS), _MM_HINT_T0);
      _mm_prefetch((const char *)(x + i + RMW_PREFETCH_FLOATS + 16), _MM_HINT_T0);
    }
    v0 = _mm256_load_ps(x + i); v1 = _mm256_load_ps(x + i + 8);
    v2 = _mm256_load_ps(x + i + 16); v3 = _mm256_load_ps(x + i + 24);
    _mm256_store_ps(x + i, _mm256_mul_ps(v0, va));
    _mm256_store_ps(x + i + 8, _mm256_mul_ps(v1, va));
    _mm256_store_ps(x + i + 16, _mm256_mul_ps(v2, va));
    _mm256_store_ps(x + i + 24, _mm256_mul_ps(v3, va));
  }
}
#endif
