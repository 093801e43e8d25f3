/* kv_loops.c - see kv_loops.h. */
#include "kv_loops.h"
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
