/* RoPE canonical outputs and their XXH3-64 goldens (of the little-endian byte image): caches of
 * every scaling variant, f16/bf16 caches, and NeoX/GPT-J rotations of deterministic inputs. One
 * value per case holds on every backend and ISA. The values were printed once by the scalar
 * backend (`test_rope_golden --print`); a golden changes only when the math changes on purpose,
 * and the commit that changes it says why. */
#ifndef POSENC_GOLDEN_ROPE_H
#define POSENC_GOLDEN_ROPE_H

#include <stdlib.h>
#include <string.h>
#include "posenc.h"
#include "testlib.h"

/* Positions of the list cases: anchors and their neighbours, powers of two, 2^24 - 1. */
static const int32_t rope_golden_positions[] = {
  0, 1, 2, 31, 32, 33, 4095, 65535, 131071, 1 << 20, 999999, 8388608, 16777183, 16777215, 12345, 7};
#define ROPE_GOLDEN_NPOS (sizeof rope_golden_positions / sizeof rope_golden_positions[0])

/* Rotation shape: batch 2, 6 tokens, q 4 heads, k 2 heads (GQA) in one buffer, q first. */
enum { RG_B = 2, RG_T = 6, RG_HQ = 4, RG_HK = 2 };
/* One position per (batch, token), three planes for M-RoPE (t, h, w). */
static const int32_t rope_golden_ids[3 * RG_B * RG_T] = {
  0, 1, 2, 3, 16777215, 5,        100, 131071, 32, 31, 999999, 16777184,
  0, 7, 9, 3, 16777000, 5,        64, 20, 32, 31, 12, 16777184,
  0, 3, 2, 30, 16777100, 50,      100, 1, 33, 31, 77, 16777200};

enum {
  RG_DEFAULT, RG_LINEAR, RG_NTK, RG_DYNAMIC, RG_QWEN, RG_YARN, RG_YARN_GPTOSS, RG_LLAMA3, RG_LONGROPE,
  RG_HF, RG_FREQ_FACTORS, RG_GPTJ_PARTIAL, RG_MROPE, RG_NCONFIGS
};

static float rg_short[64], rg_long[64], rg_ff[64];

/* The configuration of each id (head_dim 128 unless said). */
static inline posenc_rope_config rope_golden_config(int id) {
  posenc_rope_config c = posenc_rope_default(128);
  int i;
  for (i = 0; i < 64; i++) { /* exactly representable, deterministic */
    rg_short[i] = 1.0f + (float)(i % 7) / 16.0f;
    rg_long[i] = 1.0f + (float)i * 0.375f + (float)(i % 3);
    rg_ff[i] = (float)(1 + i % 5) * 0.75f;
  }
  switch (id) {
    case RG_LINEAR: c.scaling = POSENC_ROPE_SCALING_LINEAR; c.factor = 4.0; break;
    case RG_NTK: c.scaling = POSENC_ROPE_SCALING_NTK; c.factor = 8.0; break;
    case RG_DYNAMIC: c.scaling = POSENC_ROPE_SCALING_DYNAMIC; c.factor = 2.0; c.original_max_pos = 2048; c.seq_len = 6000; break;
    case RG_QWEN: c.scaling = POSENC_ROPE_SCALING_DYNAMIC; c.factor = 1.0; c.original_max_pos = 2048; c.seq_len = 6000;
      c.dynamic_qwen_alpha = 1; break;
    case RG_YARN: c.scaling = POSENC_ROPE_SCALING_YARN; c.factor = 4.0; c.original_max_pos = 4096; break;
    case RG_YARN_GPTOSS: c = posenc_rope_default(64); c.base = 150000.0; c.scaling = POSENC_ROPE_SCALING_YARN;
      c.factor = 32.0; c.original_max_pos = 4096; c.yarn_no_truncate = 1; break;
    case RG_LLAMA3: c.base = 500000.0; c.scaling = POSENC_ROPE_SCALING_LLAMA3; c.factor = 8.0; c.original_max_pos = 8192; break;
    case RG_LONGROPE: c = posenc_rope_default(96); c.scaling = POSENC_ROPE_SCALING_LONGROPE; c.factor = 32.0;
      c.original_max_pos = 4096; c.seq_len = 131072; c.short_factor = rg_short; c.long_factor = rg_long; break;
    case RG_HF: c.hf_compat = 1; c.base = 500000.0; break;
    case RG_FREQ_FACTORS: c = posenc_rope_default(64); c.freq_factors = rg_ff; break;
    case RG_GPTJ_PARTIAL: c = posenc_rope_default(80); c.rotary_dim = 64; c.style = POSENC_ROPE_GPTJ; break;
    case RG_MROPE: c.base = 1e6; c.mrope = POSENC_ROPE_MROPE_SECTIONS;
      c.mrope_section[0] = 16; c.mrope_section[1] = 24; c.mrope_section[2] = 24; break;
    default: break;
  }
  return c;
}

typedef struct rope_golden_case {
  const char *name;
  int config;                        /* RG_* */
  int rotate;                        /* 0: a cache; 1: rotation of the LCG tensor in place */
  posenc_rope_cache_layout layout;   /* cache */
  posenc_dtype dtype;                /* cache or tensor storage */
  int32_t start;                     /* cache range start, when n_rows != 0; else the list */
  size_t n_rows;
  posenc_rope_style style;           /* rotation */
  posenc_rope_direction direction;   /* rotation */
  uint64_t xxh3;
} rope_golden_case;

#define RG_CACHE(n, cf, lay, dt, st, nr, h) {n, cf, 0, lay, dt, st, nr, POSENC_ROPE_NEOX, POSENC_ROPE_FORWARD, h}
#define RG_ROT(n, cf, dt, sty, dir, h) {n, cf, 1, POSENC_ROPE_CACHE_HALF, dt, 0, 0, sty, dir, h}

static const rope_golden_case rope_golden_cases[] = {
  RG_CACHE("cache default half list", RG_DEFAULT, POSENC_ROPE_CACHE_HALF, POSENC_DTYPE_F32, 0, 0, 0xf7fa22997940af29ull),
  RG_CACHE("cache default half 16777000+40", RG_DEFAULT, POSENC_ROPE_CACHE_HALF, POSENC_DTYPE_F32, 16777000, 40, 0x96b5e14c56cad5a6ull),
  RG_CACHE("cache linear4 full list", RG_LINEAR, POSENC_ROPE_CACHE_FULL, POSENC_DTYPE_F32, 0, 0, 0xbb3201a9ddaa147aull),
  RG_CACHE("cache ntk8 interleaved list", RG_NTK, POSENC_ROPE_CACHE_INTERLEAVED, POSENC_DTYPE_F32, 0, 0, 0xf88326a09d19bb23ull),
  RG_CACHE("cache dynamic s2 seq6000 list", RG_DYNAMIC, POSENC_ROPE_CACHE_HALF, POSENC_DTYPE_F32, 0, 0, 0x4c5a2baffd1491f8ull),
  RG_CACHE("cache qwen alpha7 list", RG_QWEN, POSENC_ROPE_CACHE_HALF, POSENC_DTYPE_F32, 0, 0, 0xab7f0d5e23dea1a0ull),
  RG_CACHE("cache yarn s4 list", RG_YARN, POSENC_ROPE_CACHE_HALF, POSENC_DTYPE_F32, 0, 0, 0xad57021177feb066ull),
  RG_CACHE("cache yarn gpt-oss no-truncate list", RG_YARN_GPTOSS, POSENC_ROPE_CACHE_HALF, POSENC_DTYPE_F32, 0, 0, 0x843ad83a7c923d01ull),
  RG_CACHE("cache llama3 list", RG_LLAMA3, POSENC_ROPE_CACHE_HALF, POSENC_DTYPE_F32, 0, 0, 0x54a0aeb030faf9f7ull),
  RG_CACHE("cache longrope long list", RG_LONGROPE, POSENC_ROPE_CACHE_HALF, POSENC_DTYPE_F32, 0, 0, 0x360e85c09a56e52bull),
  RG_CACHE("cache hf_compat list", RG_HF, POSENC_ROPE_CACHE_HALF, POSENC_DTYPE_F32, 0, 0, 0x4d40faabc322f0e6ull),
  RG_CACHE("cache hf_compat 16777000+40", RG_HF, POSENC_ROPE_CACHE_FULL, POSENC_DTYPE_F32, 16777000, 40, 0xb62d42ec5c7ca3faull),
  RG_CACHE("cache freq_factors list", RG_FREQ_FACTORS, POSENC_ROPE_CACHE_HALF, POSENC_DTYPE_F32, 0, 0, 0x12097362c52c6c3full),
  RG_CACHE("cache default f16 full list", RG_DEFAULT, POSENC_ROPE_CACHE_FULL, POSENC_DTYPE_F16, 0, 0, 0x250cc91073701695ull),
  RG_CACHE("cache yarn bf16 interleaved list", RG_YARN, POSENC_ROPE_CACHE_INTERLEAVED, POSENC_DTYPE_BF16, 0, 0, 0xb38b9b1e8c13a796ull),
  RG_CACHE("cache llama3 bf16 half 16777100+40", RG_LLAMA3, POSENC_ROPE_CACHE_HALF, POSENC_DTYPE_BF16, 16777100, 40, 0x4f28c5e69e96c077ull),
  RG_ROT("rotate neox f32", RG_DEFAULT, POSENC_DTYPE_F32, POSENC_ROPE_NEOX, POSENC_ROPE_FORWARD, 0x22520a1663c8e812ull),
  RG_ROT("rotate neox f32 inverse", RG_DEFAULT, POSENC_DTYPE_F32, POSENC_ROPE_NEOX, POSENC_ROPE_INVERSE, 0x9efe6b6ef1bf11d2ull),
  RG_ROT("rotate gptj f32 partial 64/80", RG_GPTJ_PARTIAL, POSENC_DTYPE_F32, POSENC_ROPE_GPTJ, POSENC_ROPE_FORWARD, 0xa64b85ffdd5ad387ull),
  RG_ROT("rotate neox bf16", RG_DEFAULT, POSENC_DTYPE_BF16, POSENC_ROPE_NEOX, POSENC_ROPE_FORWARD, 0x2ec253b9fb34cfceull),
  RG_ROT("rotate gptj bf16 partial 64/80", RG_GPTJ_PARTIAL, POSENC_DTYPE_BF16, POSENC_ROPE_GPTJ, POSENC_ROPE_FORWARD, 0xe584767cf7fb9780ull),
  RG_ROT("rotate neox f16 yarn", RG_YARN, POSENC_DTYPE_F16, POSENC_ROPE_NEOX, POSENC_ROPE_FORWARD, 0xce61497e64ef6b9full),
  RG_ROT("rotate neox f32 llama3", RG_LLAMA3, POSENC_DTYPE_F32, POSENC_ROPE_NEOX, POSENC_ROPE_FORWARD, 0xe0476f1308467862ull),
  RG_ROT("rotate neox f32 mrope sections", RG_MROPE, POSENC_DTYPE_F32, POSENC_ROPE_NEOX, POSENC_ROPE_FORWARD, 0xdd047a7092b3128dull),
  RG_ROT("rotate gptj f32 hf_compat", RG_HF, POSENC_DTYPE_F32, POSENC_ROPE_GPTJ, POSENC_ROPE_FORWARD, 0x2ff9d308e0a8a752ull),
};
#define ROPE_GOLDEN_NCASES (sizeof rope_golden_cases / sizeof rope_golden_cases[0])

/* k/64, |k| <= 255: exact in f32, f16 and bf16; no NaN, no -0. A tiny LCG, the same everywhere. */
static inline float rope_golden_value(uint32_t *state) {
  *state = *state * 1664525u + 1013904223u;
  return (float)((int)((*state >> 8) % 511u) - 255) / 64.0f;
}

/* Computes a case into out (out_bytes) with the active backend; *bytes gets the size it needs
 * (with out NULL, only that is computed). A rotation writes its input into out first. */
static inline posenc_status rope_golden_run(const rope_golden_case *gc, void *out, size_t out_bytes, size_t *bytes) {
  POSENC_ROPE_STORAGE(128) rope_st; /* the largest golden config's rotary dim */
  posenc_rope *rope = &rope_st.rope;
  posenc_rope_config cfg = rope_golden_config(gc->config);
  posenc_status st;
  unsigned char *o = (unsigned char *)out;
  *bytes = 0;
  if (gc->rotate) cfg.style = gc->style;
  if ((st = posenc_rope_init(rope, sizeof rope_st, &cfg)) != POSENC_OK) return st;
  if (!gc->rotate) {
    posenc_rope_cache_spec sp;
    size_t n = gc->n_rows ? gc->n_rows : ROPE_GOLDEN_NPOS;
    sp.layout = gc->layout; sp.dtype = gc->dtype; sp.row_stride = 0;
    if ((st = posenc_rope_cache_bytes(rope, &sp, n, bytes)) != POSENC_OK || !out) return st;
    return gc->n_rows ? posenc_rope_cache_table(rope, &sp, gc->start, n, out, out_bytes)
                      : posenc_rope_cache_rows(rope, &sp, rope_golden_positions, n, out, out_bytes);
  } else {
    size_t D = cfg.head_dim, es = posenc_dtype_size(gc->dtype), nq = (size_t)RG_B * RG_T * RG_HQ * D,
           nk = (size_t)RG_B * RG_T * RG_HK * D, i;
    uint32_t state = 2024u;
    posenc_rope_tensor q, k;
    posenc_rope_positions pp;
    *bytes = (nq + nk) * es;
    if (!out) return POSENC_OK;
    if (out_bytes < *bytes) return POSENC_ERR_BUFFER;
    for (i = 0; i < nq + nk; i++) {
      float v = rope_golden_value(&state);
      uint16_t h;
      if (gc->dtype == POSENC_DTYPE_F32) memcpy(o + i * 4, &v, 4);
      else { h = gc->dtype == POSENC_DTYPE_F16 ? posenc_f32_to_f16(v) : posenc_f32_to_bf16(v); memcpy(o + i * 2, &h, 2); }
    }
    q.data = o; q.dtype = gc->dtype; q.heads = RG_HQ; q.batch_stride = q.token_stride = q.head_stride = 0;
    k = q; k.data = o + nq * es; k.heads = RG_HK;
    pp.batch = RG_B; pp.tokens = RG_T; pp.ids = rope_golden_ids; pp.start = 0;
    return posenc_rope_apply(rope, NULL, &pp, &q, &k, gc->direction);
  }
}

/* The bytes a case writes (0 if it fails: then so does the run). */
static inline size_t rope_golden_bytes(const rope_golden_case *gc) {
  size_t bytes = 0;
  rope_golden_run(gc, NULL, 0, &bytes);
  return bytes;
}

/* Computes a case with the active backend: a malloc'ed buffer, its size and element size. */
static inline void *rope_golden_compute(const rope_golden_case *gc, size_t *bytes, size_t *elem, posenc_status *status) {
  void *out;
  *elem = posenc_dtype_size(gc->dtype);
  if ((*status = rope_golden_run(gc, NULL, 0, bytes)) != POSENC_OK) return NULL;
  if (!(out = malloc(*bytes))) return NULL;
  if ((*status = rope_golden_run(gc, out, *bytes, bytes)) != POSENC_OK) { free(out); return NULL; }
  return out;
}

/* Every case on the active backend but those whose dtype is skip_dtype (-1: none); returns the
 * number of mismatches. */
static inline int rope_golden_check_active_but(int skip_dtype) {
  size_t i;
  int bad = 0;
  for (i = 0; i < ROPE_GOLDEN_NCASES; i++) {
    size_t bytes = 0, elem = 0;
    posenc_status st;
    void *t;
    uint64_t h;
    if ((int)rope_golden_cases[i].dtype == skip_dtype) continue;
    t = rope_golden_compute(&rope_golden_cases[i], &bytes, &elem, &st);
    h = t ? tl_xxh3_le(t, bytes, elem) : 0;
    CHECK(t != NULL && h == rope_golden_cases[i].xxh3, "%s: rope golden '%s': status %s, xxh3 0x%016llx, want 0x%016llx",
          posenc_isa_name(posenc_isa_active()), rope_golden_cases[i].name, posenc_strerror(st), (unsigned long long)h,
          (unsigned long long)rope_golden_cases[i].xxh3);
    if (!t || h != rope_golden_cases[i].xxh3) bad++;
    free(t);
  }
  return bad;
}
static inline int rope_golden_check_active(void) { return rope_golden_check_active_but(-1); }

#endif
