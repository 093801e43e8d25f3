/* kv_loops.h - the plain C loop bench_kv compares posenc_rope_store_kv with: an engine's
 * convert-and-copy of K (or V) from f32 into an f16 KV cache, after rotating it in place.
 * kv_loops.c is compiled once per variant (bench/meson.build, the flags of rope_loops.c):
 * scalar (-O2 -fno-tree-vectorize), o3 (-O3) and, on x86, avx2 (-O3 -mavx2 -mf16c). Where the
 * compiler has _Float16 the loop is the cast an engine writes; otherwise posenc's conversion. */
#ifndef BENCH_KV_LOOPS_H
#define BENCH_KV_LOOPS_H

#include <stddef.h>
#include <stdint.h>

#define KV_LOOPS_DECLARE(v) void kv_to_f16_##v(uint16_t *dst, const float *src, size_t n);

KV_LOOPS_DECLARE(scalar)
KV_LOOPS_DECLARE(o3)
#ifdef BENCH_HAVE_LOOPS_AVX2
KV_LOOPS_DECLARE(avx2)
#endif

#endif /* BENCH_KV_LOOPS_H */
