/* rope_proto.c - prototype AVX2 rotation kernels (see rope_proto.h). Compiled with -mavx2 -mf16c.
 * The arithmetic is posenc_simd.h's neox8 / gptj8, written with the native intrinsics that
 * SIMDe maps them to on AVX2.
 */
#include "rope_proto.h"

#include <immintrin.h>

#define PROTO_MAX_DIM 512

/* (x0, x1) -> (x0*c - x1*s, x1*c + x0*s), 8 pairs */
static inline void neox8(float *p0, float *p1, __m256 c, __m256 s) {
  __m256 x0 = _mm256_loadu_ps(p0), x1 = _mm256_loadu_ps(p1);
  _mm256_storeu_ps(p0, _mm256_sub_ps(_mm256_mul_ps(x0, c), _mm256_mul_ps(x1, s)));
  _mm256_storeu_ps(p1, _mm256_add_ps(_mm256_mul_ps(x1, c), _mm256_mul_ps(x0, s)));
}

/* x*c + swap(x)*s with c = (c0 c0 c1 c1 ...), s = (-s0 s0 -s1 s1 ...), 4 pairs */
static inline void gptj8(float *p, __m256 c, __m256 s) {
  __m256 x = _mm256_loadu_ps(p), xs = _mm256_permute_ps(x, 0xB1);
  _mm256_storeu_ps(p, _mm256_add_ps(_mm256_mul_ps(x, c), _mm256_mul_ps(xs, s)));
}

/* One token, NeoX, h pairs per head (h % 8 == 0). */
static void neox_token(float *x, size_t heads, size_t dim, const float *c, const float *s,
                       proto_order order) {
  size_t h = dim / 2, hd, j;
  if (order == PROTO_HEADS_INNER) {
    for (j = 0; j < h; j += 8) {
      __m256 cv = _mm256_loadu_ps(c + j), sv = _mm256_loadu_ps(s + j);
      for (hd = 0; hd < heads; hd++) neox8(x + hd * dim + j, x + hd * dim + h + j, cv, sv);
    }
    return;
  }
  hd = 0;
  if (order == PROTO_HEAD_PAIRS)
    for (; hd + 2 <= heads; hd += 2) {
      float *a = x + hd * dim, *b = a + dim;
      for (j = 0; j < h; j += 8) {
        __m256 cv = _mm256_loadu_ps(c + j), sv = _mm256_loadu_ps(s + j);
        neox8(a + j, a + h + j, cv, sv);
        neox8(b + j, b + h + j, cv, sv);
      }
    }
  for (; hd < heads; hd++) {
    float *a = x + hd * dim;
    for (j = 0; j < h; j += 8) neox8(a + j, a + h + j, _mm256_loadu_ps(c + j), _mm256_loadu_ps(s + j));
  }
}

/* One token, GPT-J, with the expanded rows c2, s2 (dim lanes). */
static void gptj_token(float *x, size_t heads, size_t dim, const float *c2, const float *s2,
                       proto_order order) {
  size_t hd, j;
  if (order == PROTO_HEADS_INNER) {
    for (j = 0; j < dim; j += 8) {
      __m256 cv = _mm256_loadu_ps(c2 + j), sv = _mm256_loadu_ps(s2 + j);
      for (hd = 0; hd < heads; hd++) gptj8(x + hd * dim + j, cv, sv);
    }
    return;
  }
  hd = 0;
  if (order == PROTO_HEAD_PAIRS)
    for (; hd + 2 <= heads; hd += 2) {
      float *a = x + hd * dim, *b = a + dim;
      for (j = 0; j < dim; j += 8) {
        __m256 cv = _mm256_loadu_ps(c2 + j), sv = _mm256_loadu_ps(s2 + j);
        gptj8(a + j, cv, sv);
        gptj8(b + j, cv, sv);
      }
    }
  for (; hd < heads; hd++) {
    float *a = x + hd * dim;
    for (j = 0; j < dim; j += 8) gptj8(a + j, _mm256_loadu_ps(c2 + j), _mm256_loadu_ps(s2 + j));
  }
}

/* [cos | sin] half row -> (c0 c0 c1 c1 ...), (-s0 s0 -s1 s1 ...), 8 pairs per step. */
static void gptj_expand(const float *c, const float *s, size_t h, float *c2, float *s2) {
  const __m256 neg = _mm256_set1_ps(-0.0f);
  size_t j;
  for (j = 0; j < h; j += 8) {
    __m256 cv = _mm256_loadu_ps(c + j), sv = _mm256_loadu_ps(s + j);
    __m256 ns = _mm256_xor_ps(sv, neg);
    __m256 clo = _mm256_unpacklo_ps(cv, cv), chi = _mm256_unpackhi_ps(cv, cv);
    __m256 slo = _mm256_unpacklo_ps(ns, sv), shi = _mm256_unpackhi_ps(ns, sv);
    _mm256_storeu_ps(c2 + 2 * j, _mm256_permute2f128_ps(clo, chi, 0x20));
    _mm256_storeu_ps(c2 + 2 * j + 8, _mm256_permute2f128_ps(clo, chi, 0x31));
    _mm256_storeu_ps(s2 + 2 * j, _mm256_permute2f128_ps(slo, shi, 0x20));
    _mm256_storeu_ps(s2 + 2 * j + 8, _mm256_permute2f128_ps(slo, shi, 0x31));
  }
}

void proto_rotate_tokens(float *x, size_t tokens, size_t heads, size_t dim, const float *cache,
                         int32_t start, int gptj, proto_order order) {
  float c2[PROTO_MAX_DIM], s2[PROTO_MAX_DIM];
  size_t h = dim / 2, t;
  if (dim % 16 != 0 || dim > PROTO_MAX_DIM) return;
  for (t = 0; t < tokens; t++) {
    const float *c = cache + ((size_t)start + t) * dim, *s = c + h;
    float *xt = x + t * heads * dim;
    if (gptj) {
      gptj_expand(c, s, h, c2, s2);
      gptj_token(xt, heads, dim, c2, s2, order);
    } else {
      neox_token(xt, heads, dim, c, s, order);
    }
  }
}

/* ---- 16-bit NeoX, heads in pairs ---------------------------------------------------------- */
static inline __m256 load_bf16_8(const uint16_t *p) {
  __m128i h = _mm_loadu_si128((const __m128i *)(const void *)p);
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

/* posenc_simd.h's bf16_8: round to nearest even, NaN -> quiet NaN, pack 8 lanes */
static inline __m128i bf16_8(__m256 x) {
  __m256i b = _mm256_castps_si256(x), top = _mm256_srli_epi32(b, 16);
  __m256i r = _mm256_add_epi32(_mm256_add_epi32(b, _mm256_set1_epi32(0x7fff)),
                               _mm256_and_si256(top, _mm256_set1_epi32(1)));
  __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(x, x, _CMP_UNORD_Q));
  r = _mm256_srli_epi32(r, 16);
  r = _mm256_or_si256(_mm256_andnot_si256(nan, r),
                      _mm256_and_si256(nan, _mm256_or_si256(top, _mm256_set1_epi32(0x40))));
  return _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
}

static inline void neox8_half(uint16_t *p0, uint16_t *p1, __m256 c, __m256 s, int f16) {
  __m256 x0, x1, o0, o1;
  if (f16) {
    x0 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)p0));
    x1 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)p1));
  } else {
    x0 = load_bf16_8(p0);
    x1 = load_bf16_8(p1);
  }
  o0 = _mm256_sub_ps(_mm256_mul_ps(x0, c), _mm256_mul_ps(x1, s));
  o1 = _mm256_add_ps(_mm256_mul_ps(x1, c), _mm256_mul_ps(x0, s));
  if (f16) {
    _mm_storeu_si128((__m128i *)(void *)p0, _mm256_cvtps_ph(o0, _MM_FROUND_TO_NEAREST_INT));
    _mm_storeu_si128((__m128i *)(void *)p1, _mm256_cvtps_ph(o1, _MM_FROUND_TO_NEAREST_INT));
  } else {
    _mm_storeu_si128((__m128i *)(void *)p0, bf16_8(o0));
    _mm_storeu_si128((__m128i *)(void *)p1, bf16_8(o1));
  }
}

/* Rounded bf16 bits in the top half of each lane (low half: garbage); NaN -> quiet (bit 22). */
static inline __m256i bf16_round_hi(__m256 x) {
  __m256i b = _mm256_castps_si256(x);
  __m256i r = _mm256_add_epi32(_mm256_add_epi32(b, _mm256_set1_epi32(0x7fff)),
                               _mm256_and_si256(_mm256_srli_epi32(b, 16), _mm256_set1_epi32(1)));
  __m256i q = _mm256_or_si256(b, _mm256_set1_epi32(0x400000));
  return _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(r), _mm256_castsi256_ps(q),
                                              _mm256_cmp_ps(x, x, _CMP_UNORD_Q)));
}

/* 16 NeoX pairs of bf16 (lanes j..j+15 of both halves), lanes split even/odd. */
static inline void neox16_evenodd(uint16_t *p0, uint16_t *p1, const float *ce, const float *co,
                                  const float *se, const float *so) {
  const __m256i hi = _mm256_set1_epi32((int)0xffff0000u);
  __m256i v0 = _mm256_loadu_si256((const __m256i *)(const void *)p0);
  __m256i v1 = _mm256_loadu_si256((const __m256i *)(const void *)p1);
  __m256 x0e = _mm256_castsi256_ps(_mm256_slli_epi32(v0, 16)), x0o = _mm256_castsi256_ps(_mm256_and_si256(v0, hi));
  __m256 x1e = _mm256_castsi256_ps(_mm256_slli_epi32(v1, 16)), x1o = _mm256_castsi256_ps(_mm256_and_si256(v1, hi));
  __m256 cE = _mm256_loadu_ps(ce), cO = _mm256_loadu_ps(co), sE = _mm256_loadu_ps(se), sO = _mm256_loadu_ps(so);
  __m256 o0e = _mm256_sub_ps(_mm256_mul_ps(x0e, cE), _mm256_mul_ps(x1e, sE));
  __m256 o0o = _mm256_sub_ps(_mm256_mul_ps(x0o, cO), _mm256_mul_ps(x1o, sO));
  __m256 o1e = _mm256_add_ps(_mm256_mul_ps(x1e, cE), _mm256_mul_ps(x0e, sE));
  __m256 o1o = _mm256_add_ps(_mm256_mul_ps(x1o, cO), _mm256_mul_ps(x0o, sO));
  _mm256_storeu_si256((__m256i *)(void *)p0,
                      _mm256_or_si256(_mm256_srli_epi32(bf16_round_hi(o0e), 16),
                                      _mm256_and_si256(bf16_round_hi(o0o), hi)));
  _mm256_storeu_si256((__m256i *)(void *)p1,
                      _mm256_or_si256(_mm256_srli_epi32(bf16_round_hi(o1e), 16),
                                      _mm256_and_si256(bf16_round_hi(o1o), hi)));
}

void proto_rotate_tokens_half(uint16_t *x, size_t tokens, size_t heads, size_t dim,
                              const float *cache, int32_t start, proto_conv conv) {
  float ce[PROTO_MAX_DIM / 4], co[PROTO_MAX_DIM / 4], se[PROTO_MAX_DIM / 4], so[PROTO_MAX_DIM / 4];
  size_t h = dim / 2, t, hd, j, i;
  if (dim % 32 != 0 || dim > PROTO_MAX_DIM || heads % 2 != 0) return;
  for (t = 0; t < tokens; t++) {
    const float *c = cache + ((size_t)start + t) * dim, *s = c + h;
    uint16_t *xt = x + t * heads * dim;
    if (conv == PROTO_BF16_EVENODD) {
      for (j = 0; j < h; j += 16) /* block j: ce[j/2 + i] = c[j + 2i], co[...] = c[j + 2i + 1] */
        for (i = 0; i < 8; i++) {
          ce[j / 2 + i] = c[j + 2 * i]; co[j / 2 + i] = c[j + 2 * i + 1];
          se[j / 2 + i] = s[j + 2 * i]; so[j / 2 + i] = s[j + 2 * i + 1];
        }
      for (hd = 0; hd < heads; hd += 2) {
        uint16_t *a = xt + hd * dim, *b = a + dim;
        for (j = 0; j < h; j += 16) {
          neox16_evenodd(a + j, a + h + j, ce + j / 2, co + j / 2, se + j / 2, so + j / 2);
          neox16_evenodd(b + j, b + h + j, ce + j / 2, co + j / 2, se + j / 2, so + j / 2);
        }
      }
    } else {
      int f16 = conv == PROTO_F16;
      for (hd = 0; hd < heads; hd += 2) {
        uint16_t *a = xt + hd * dim, *b = a + dim;
        for (j = 0; j < h; j += 8) {
          __m256 cv = _mm256_loadu_ps(c + j), sv = _mm256_loadu_ps(s + j);
          neox8_half(a + j, a + h + j, cv, sv, f16);
          neox8_half(b + j, b + h + j, cv, sv, f16);
        }
      }
    }
  }
}
