/* bench_sleef_avx2.h - the SLEEF AVX2 peers of bench_table.
 *
 * Implemented in bench_sleef_avx2.c, the only file compiled with -mavx2: call these only when
 * the CPU has AVX2. The interface uses plain pointers, so no vector type crosses the boundary.
 */
#ifndef BENCH_SLEEF_AVX2_H
#define BENCH_SLEEF_AVX2_H

#include <stddef.h>

typedef enum bench_sleef_ulp { BENCH_SLEEF_U10, BENCH_SLEEF_U35 } bench_sleef_ulp;

/* Interleaved rows 0..n_rows-1: out[p][2i] = sin(a), out[p][2i+1] = cos(a), a = fl32((float)p *
 * freq[i]) - the usual f32 recipe - with Sleef_sincosf8_u10avx2 or _u35avx2.
 * nfreq must be a multiple of 8; out holds n_rows * 2 * nfreq floats. */
void bench_sleef_sincos_avx2(bench_sleef_ulp ulp, float *out, size_t n_rows,
                             const float *freq, size_t nfreq);

#endif /* BENCH_SLEEF_AVX2_H */
