/* kv_loops.c - see kv_loops.h. */
#include "kv_loops.h"

#include <math.h>

#include "posenc.h"

#define KV_CAT2(a, b) a##b
#define KV_CAT(a, b) KV_CAT2(a, b)
#define KV_NAME(name) KV_CAT(name##_, KV_LOOPS_VARIANT)

#if defined(__FLT16_MAX__)
__extension__ typedef _Float16 kv_half; /* not ISO C: -Wpedantic would say so */
#endif

void KV_NAME(kv_to_f16)(uint16_t *dst, const float *src, size_t n) {
  size_t i;
#if defined(__FLT16_MAX__)
  kv_half *d = (kv_half *)(void *)dst;
  for (i = 0; i < n; i++) d[i] = (kv_half)src[i];
#else
  for (i = 0; i < n; i++) dst[i] = posenc_f32_to_f16(src[i]);
#endif
}

#if defined(BENCH_HAVE_LOOPS_AVX2) && defined(__F16C__) && defined(__AVX__)
#include <immintrin.h>
/* The loop an engine writes by hand with F16C (as ggml's fp32 -> fp16 rows): 8 values a step. */
void kv_to_f16_intrin_avx2(uint16_t *dst, const float *src, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128((__m128i *)(void *)(dst + i), _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; i++) dst[i] = _cvtss_sh(src[i], _MM_FROUND_TO_NEAREST_INT);
}
#endif

/* The RMSNorm an engine writes over each head (llama2.c's rmsnorm, per head): a float sum in
 * order, 1/sqrtf, weight * (r * x). */
void KV_NAME(kv_rmsnorm_heads)(float *x, size_t heads, size_t dim, const float *w, float eps) {
  size_t h, j;
  for (h = 0; h < heads; h++, x += dim) {
    float ss = 0.0f;
    for (j = 0; j < dim; j++) ss += x[j] * x[j];
    ss /= (float)dim;
    ss += eps;
    ss = 1.0f / sqrtf(ss);
    for (j = 0; j < dim; j++) x[j] = w[j] * (ss * x[j]);
  }
}
