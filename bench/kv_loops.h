/* kv_loops.h - the plain C loops bench_kv compares posenc_rope_store_kv with: an engine's
 * convert-and-copy of K (or V) from f32 into an f16 KV cache, after rotating it in place; and
 * the RMSNorm per head (QK-norm) it runs before rotating, against posenc_rope_apply_norm.
 * kv_loops.c is compiled once per variant (bench/meson.build, the flags of rope_loops.c):
 * scalar (-O2 -fno-tree-vectorize), o3 (-O3) and, on x86, avx2 (-O3 -mavx2 -mf16c). Where the
 * compiler has _Float16 the loop is the cast a C programmer writes (GCC 12 converts it one value
 * at a time); otherwise posenc's conversion. kv_to_f16_intrin_avx2 is the loop written with F16C
 * intrinsics, as engines do. */
#ifndef BENCH_KV_LOOPS_H
#define BENCH_KV_LOOPS_H

#include <stddef.h>
#include <stdint.h>

#define KV_LOOPS_DECLARE(v) void kv_to_f16_##v(uint16_t *dst, const float *src, size_t n); \
  void kv_rmsnorm_heads_##v(float *x, size_t heads, size_t dim, const float *w, float eps);

KV_LOOPS_DECLARE(scalar)
KV_LOOPS_DECLARE(o3)
#ifdef BENCH_HAVE_LOOPS_AVX2
KV_LOOPS_DECLARE(avx2)
/* With F16C intrinsics, 8 values a step (in the avx2 variant): the hand-written loop. */
void kv_to_f16_intrin_avx2(uint16_t *dst, const float *src, size_t n);
#endif

#endif /* BENCH_KV_LOOPS_H */
