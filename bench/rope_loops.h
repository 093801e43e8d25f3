/* rope_loops.h - the plain C loops bench_rope compares posenc's rotation with.
 *
 * rope_loops.c is compiled once per variant, each time with its own flags and a suffix on every
 * name (bench/meson.build):
 *   scalar  -O2 -fno-tree-vectorize    the loop as written
 *   o3      -O3                        autovectorized for the baseline ISA (SSE2 on x86-64)
 *   avx2    -O3 -mavx2 -mf16c          autovectorized for AVX2 (x86 only: BENCH_HAVE_LOOPS_AVX2)
 *
 * The rotation loops read a dense f32 [cos(h) | sin(h)] cache (vLLM's cos_sin_cache, h = dim/2)
 * whose row r holds position r, and rotate x = [tokens][heads][dim] in place, token t at
 * position start + t. They compute what posenc computes, in the same order (x0*c - x1*s,
 * x1*c + x0*s, no contraction), so their results are bit-identical to posenc's.
 */
#ifndef BENCH_ROPE_LOOPS_H
#define BENCH_ROPE_LOOPS_H

#include <stddef.h>
#include <stdint.h>

typedef void (*rope_loop_fn)(float *x, size_t tokens, size_t heads, size_t dim, const float *cache,
                             int32_t start);
typedef void (*rmw_loop_fn)(float *x, size_t n, float a);

#define ROPE_LOOPS_DECLARE(v)                                                                      \
  void rope_loop_neox_##v(float *x, size_t tokens, size_t heads, size_t dim, const float *cache,  \
                          int32_t start);                                                          \
  void rope_loop_gptj_##v(float *x, size_t tokens, size_t heads, size_t dim, const float *cache,  \
                          int32_t start);                                                          \
  void rmw_loop_##v(float *x, size_t n, float a);

ROPE_LOOPS_DECLARE(scalar)
ROPE_LOOPS_DECLARE(o3)
#ifdef BENCH_HAVE_LOOPS_AVX2
ROPE_LOOPS_DECLARE(avx2)
/* x[i] *= a with AVX2 intrinsics, 4 aligned vectors per iteration: n % 32 == 0, x 32-byte
 * aligned. The hand-written end of the read-modify-write floor. */
void rmw_intrin_avx2(float *x, size_t n, float a);
/* The same, asking for the lines RMW_PREFETCH_BYTES ahead of those it reads (_mm_prefetch). */
#ifndef RMW_PREFETCH_BYTES
#  define RMW_PREFETCH_BYTES 4096
#endif
void rmw_intrin_avx2_prefetch(float *x, size_t n, float a);
#endif

#endif /* BENCH_ROPE_LOOPS_H */
