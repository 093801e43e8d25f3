/* The model of examples/engine.c and engine_threads.c: a small Qwen3-style decoder (RMSNorm, GQA
 * attention with QK-norm and RoPE over an f16 KV cache, SwiGLU MLP, tied embeddings) with random
 * weights from a fixed seed, and the f32 pieces both programs use. Every function here is
 * static inline: each program uses only some. */
#ifndef ENGINE_MODEL_H
#define ENGINE_MODEL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include "posenc.h"

enum {
  LAYERS = 2, DM = 256, HQ = 8, HKV = 2, D = 64, FF = 512, VOCAB = 256,
  QD = HQ * D, KD = HKV * D,                /* a token's Q, and its K (or V), in floats */
  PROMPT = 16, DECODE = 4, MAX_T = PROMPT + DECODE  /* the KV cache's slots: one per position */
};
#define ROPE_THETA 1000000.0 /* Qwen3's rope_theta */
#define NORM_EPS 1e-6f       /* every RMSNorm's epsilon, QK-norm's too */

typedef struct layer {
  float attn_norm[DM], q_norm[D], k_norm[D], mlp_norm[DM];  /* q_norm, k_norm: shared by the heads */
  float wq[QD * DM], wk[KD * DM], wv[KD * DM], wo[DM * QD]; /* [out][in] */
  float wg[FF * DM], wu[FF * DM], wd[DM * FF];
} layer;

typedef struct model {
  float embed[VOCAB * DM]; /* tied: also the output projection */
  float final_norm[DM];
  layer l[LAYERS];
  POSENC_ROPE_STORAGE(D) rope; /* 2 KiB, read-only once initialised: threads share it */
} model;

/* splitmix64, mapped to [-1, 1) */
static inline float rnd(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15u);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
  return (float)((double)((z ^ (z >> 31)) >> 40) * 0x1p-23 - 1.0);
}

static inline void fill(uint64_t *state, float *w, size_t n, float offset, float scale) {
  size_t i;
  for (i = 0; i < n; i++) w[i] = offset + scale * rnd(state);
}

/* Weights: U(-1, 1)/sqrt(fan_in) for the projections, 1 +- 0.1 for the norms, +-0.1 for the
 * embeddings (logits about +-4). */
static inline posenc_status model_init(model *m) {
  uint64_t s = 42;
  posenc_rope_config cfg = posenc_rope_default(D); /* NeoX pairs (j, j + 32), as HF's Qwen3 */
  size_t i;
  fill(&s, m->embed, VOCAB * DM, 0.0f, 0.1f);
  fill(&s, m->final_norm, DM, 1.0f, 0.1f);
  for (i = 0; i < LAYERS; i++) {
    layer *l = &m->l[i];
    fill(&s, l->attn_norm, DM, 1.0f, 0.1f);
    fill(&s, l->q_norm, D, 1.0f, 0.1f);
    fill(&s, l->k_norm, D, 1.0f, 0.1f);
    fill(&s, l->mlp_norm, DM, 1.0f, 0.1f);
    fill(&s, l->wq, QD * DM, 0.0f, 1.0f / 16.0f); /* 1/sqrt(DM) */
    fill(&s, l->wk, KD * DM, 0.0f, 1.0f / 16.0f);
    fill(&s, l->wv, KD * DM, 0.0f, 1.0f / 16.0f);
    fill(&s, l->wo, DM * QD, 0.0f, 1.0f / 22.627417f); /* 1/sqrt(QD) */
    fill(&s, l->wg, FF * DM, 0.0f, 1.0f / 16.0f);
    fill(&s, l->wu, FF * DM, 0.0f, 1.0f / 16.0f);
    fill(&s, l->wd, DM * FF, 0.0f, 1.0f / 22.627417f); /* 1/sqrt(FF) */
  }
  cfg.base = ROPE_THETA;
  return posenc_rope_init(&m->rope.rope, sizeof m->rope, &cfg);
}

/* The prompt: PROMPT token ids from a seed of their own. */
static inline void make_prompt(int *tok) {
  uint64_t s = 7;
  size_t t;
  for (t = 0; t < PROMPT; t++) tok[t] = (int)((rnd(&s) + 1.0f) * (VOCAB / 2));
}

/* y[t][o] = sum_i x[t][i] w[o][i], for n rows t */
static inline void matmul(float *y, const float *x, const float *w, size_t n, size_t in, size_t out) {
  size_t t, o, i;
  for (t = 0; t < n; t++)
    for (o = 0; o < out; o++) {
      float acc = 0.0f;
      for (i = 0; i < in; i++) acc += x[t * in + i] * w[o * in + i];
      y[t * out + o] = acc;
    }
}

static inline void rmsnorm(float *y, const float *x, const float *w, size_t n, size_t dim) {
  size_t t, i;
  for (t = 0; t < n; t++) {
    float ss = 0.0f, r;
    for (i = 0; i < dim; i++) ss += x[t * dim + i] * x[t * dim + i];
    r = 1.0f / sqrtf(ss / (float)dim + NORM_EPS);
    for (i = 0; i < dim; i++) y[t * dim + i] = x[t * dim + i] * r * w[i];
  }
}

/* x[t] = the embedding of tok[t], for n tokens */
static inline void embed(const model *m, const int *tok, size_t n, float *x) {
  size_t t, i;
  for (t = 0; t < n; t++)
    for (i = 0; i < DM; i++) x[t * DM + i] = m->embed[tok[t] * DM + i];
}

/* The attention block's input: x[n][DM] normed into h, projected to q[n][HQ][D], k and v
 * [n][HKV][D]: the tensors that posenc rotates and stores. */
static inline void project_qkv(const layer *l, const float *x, size_t n, float *h, float *q, float *k, float *v) {
  rmsnorm(h, x, l->attn_norm, n, DM);
  matmul(q, h, l->wq, n, DM, QD);
  matmul(k, h, l->wk, n, DM, KD);
  matmul(v, h, l->wv, n, DM, KD);
}

/* The step posenc does, in one pass: tokens at positions pos .. pos+n-1 have Q (in place) and K
 * RMS-normed per head (Qwen3's q_norm, k_norm) and rotated; K and V go, as f16, into the slot of
 * their position in this layer's cache, [slot][HKV][D] (llama.cpp's layout). cos/sin are made on
 * the fly (cache NULL), once per token for Q and K. */
static inline posenc_status rope_store(const model *m, const layer *l, int32_t pos, size_t n, float *q, float *k,
                                       float *v, uint16_t *k_cache, uint16_t *v_cache) {
  posenc_rope_positions p = {1, n, NULL, pos};
  posenc_rope_tensor tq = {q, POSENC_DTYPE_F32, HQ, 0, 0, 0};
  posenc_rope_tensor tk = {k, POSENC_DTYPE_F32, HKV, 0, 0, 0}, tv = {v, POSENC_DTYPE_F32, HKV, 0, 0, 0};
  posenc_rope_norm qn = {l->q_norm, NORM_EPS, 0}, kn = {l->k_norm, NORM_EPS, 0};
  posenc_kv_cache kv = {k_cache, v_cache, POSENC_DTYPE_F16, HKV, MAX_T, 0, 0, 0, 0};
  return posenc_rope_store_kv_norm(&m->rope.rope, NULL, &p, &tq, &qn, &tk, &kn, &tv, &kv, NULL);
}

#endif
