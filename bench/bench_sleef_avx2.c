/* bench_sleef_avx2.c - SLEEF 8-wide sincosf on AVX2, writing posenc's interleaved layout.
 * Compiled with -mavx2 (meson); bench_table.c calls it only after checking the CPU. */
#include "bench_sleef_avx2.h"

#include <immintrin.h>
#include <sleef.h>

/* (s0..s7, c0..c7) -> s0 c0 s1 c1 ... s7 c7 at dst: unpack pairs within 128-bit lanes, then
 * put the lanes back in order. */
static void store_interleaved(float *dst, __m256 s, __m256 c) {
  __m256 lo = _mm256_unpacklo_ps(s, c); /* s0 c0 s1 c1 | s4 c4 s5 c5 */
  __m256 hi = _mm256_unpackhi_ps(s, c); /* s2 c2 s3 c3 | s6 c6 s7 c7 */
  _mm256_storeu_ps(dst, _mm256_permute2f128_ps(lo, hi, 0x20));
  _mm256_storeu_ps(dst + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
}

/* A branch rather than a function pointer: SLEEF declares its functions with a const-qualified
 * return type, which no warning-clean pointer type matches. The branch is perfectly predicted. */
static void sincos_row(bench_sleef_ulp ulp, float *row, float p, const float *freq, size_t nfreq) {
  __m256 vp = _mm256_set1_ps(p);
  size_t i;
  for (i = 0; i < nfreq; i += 8) {
    __m256 angle = _mm256_mul_ps(vp, _mm256_loadu_ps(freq + i)); /* rounded to f32, as in HF */
    Sleef___m256_2 sc = ulp == BENCH_SLEEF_U35 ? Sleef_sincosf8_u35avx2(angle)
                                               : Sleef_sincosf8_u10avx2(angle);
    store_interleaved(row + 2 * i, sc.x, sc.y);
  }
}

void bench_sleef_sincos_avx2(bench_sleef_ulp ulp, float *out, size_t n_rows,
                             const float *freq, size_t nfreq) {
  size_t p;
  for (p = 0; p < n_rows; p++) sincos_row(ulp, out + p * 2 * nfreq, (float)p, freq, nfreq);
}
