/* bias_loops.h - the plain C loops bench_bias compares posenc's ALiBi and T5 bias add with.
 *
 * bias_loops.c is compiled once per variant, each time with its own flags and a suffix on every
 * name (bench/meson.build):
 *   scalar  -O2 -fno-tree-vectorize    the loop as written
 *   o3      -O3                        autovectorized for the baseline ISA (SSE2 on x86-64)
 *   avx2    -O3 -mavx2 -mf16c          autovectorized for AVX2 (x86 only: BENCH_HAVE_LOOPS_AVX2)
 *
 * Scores are dense f32 [heads][rows][cols], query i at position i and key j at position j
 * (q_pos = k_pos = 0). The loops are what a user writes, and compute what posenc computes in the
 * same order (no contraction), so their bits should be posenc's:
 *   ALiBi, causal:  s = j > i ? -inf : s + slopes[h]*(float)(j - i)
 *   T5:             s = causal && j > i ? -inf : s + table[bucket[j - i + rows - 1]][h]
 *   T5, bias row:   the same with v[r] = table[bucket[r]][h] gathered once per head (an
 *                   experiment: what a contiguous bias row costs against the lookup per element)
 * bucket is a precomputed row of the buckets of r = -(rows-1) .. cols-1, table is
 * [num_buckets][heads] f32 (nn.Embedding's weight).
 */
#ifndef BENCH_BIAS_LOOPS_H
#define BENCH_BIAS_LOOPS_H

#include <stddef.h>
#include <stdint.h>

typedef void (*alibi_loop_fn)(float *s, int heads, int rows, int cols, const float *slopes);
typedef void (*t5_loop_fn)(float *s, int heads, int rows, int cols, const int32_t *bucket,
                           const float *table, int causal);
/* v: scratch for rows + cols - 1 floats */
typedef void (*t5_row_loop_fn)(float *s, int heads, int rows, int cols, const int32_t *bucket,
                               const float *table, int causal, float *v);
typedef void (*rmw_add_fn)(float *x, size_t n, float c);

#define BIAS_LOOPS_DECLARE(v)                                                                      \
  void alibi_loop_##v(float *s, int heads, int rows, int cols, const float *slopes);              \
  void t5_loop_##v(float *s, int heads, int rows, int cols, const int32_t *bucket,                \
                   const float *table, int causal);                                                \
  void t5_row_loop_##v(float *s, int heads, int rows, int cols, const int32_t *bucket,            \
                       const float *table, int causal, float *scratch);                            \
  void rmw_add_##v(float *x, size_t n, float c);

BIAS_LOOPS_DECLARE(scalar)
BIAS_LOOPS_DECLARE(o3)
#ifdef BENCH_HAVE_LOOPS_AVX2
BIAS_LOOPS_DECLARE(avx2)
/* x[i] += c with AVX2 intrinsics, 4 aligned vectors per iteration (n % 32 == 0, x 32-byte
 * aligned): with ordinary stores, and with non-temporal ones (which skip the cache on the way
 * back; in place the line is already cached by the load, so they save no read-for-ownership). */
void rmw_add_intrin_avx2(float *x, size_t n, float c);
void rmw_add_intrin_avx2_nt(float *x, size_t n, float c);
#endif

#endif /* BENCH_BIAS_LOOPS_H */
