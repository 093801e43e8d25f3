/* A worked example engine: a small Qwen3-style decoder (engine_model.h: 2 layers, d_model 256,
 * 8 query heads and 2 KV heads of 64, SwiGLU, random weights) in f32 with an f16 KV cache. Its
 * attention step is posenc_rope_store_kv_norm: QK-norm, RoPE of Q and K, and K and V stored into
 * the f16 cache, in one pass. It prefills a 16-token prompt in one call, then decodes 4 tokens
 * greedily, one at a time, and checks every step's logits against the same model in double
 * (RoPE from posenc_rope_inv_freq with libm's cos and sin, a double KV cache: no f16 rounding).
 * Prints the largest |logit difference| and exits 1 if it is past TOLERANCE.
 * Run: build/examples/engine */
#include <math.h>
#include <stdio.h>
#include "engine_model.h"

/* Measured: 9.7e-4 on logits within +-4, the same on x86-64, aarch64, armv7, riscv64 and i686
 * (posenc's backends give the same bits; the f32 arithmetic around it is the same C). It is the
 * f16 cache's: K and V are rounded to 11 significant bits (relative error up to 2^-11); with an
 * f32 cache the same program is off by 4.0e-6. The tolerance is about 4 times the measured error:
 * a wrong RoPE style, a K left unnormalised or a position off by one are off by 0.7 to 1.6. */
#define TOLERANCE 4e-3

static uint16_t k_cache[LAYERS][MAX_T * KD], v_cache[LAYERS][MAX_T * KD]; /* f16 bits */

/* Causal GQA attention of n queries at positions pos .. pos+n-1 over the f16 cache: query head
 * h reads KV head h / (HQ/HKV) in slots 0 .. its position. */
static void attention(const float *q, const uint16_t *kc, const uint16_t *vc, size_t n, int32_t pos, float *out) {
  float score[MAX_T];
  size_t t, h, s, e;
  for (t = 0; t < n; t++)
    for (h = 0; h < HQ; h++) {
      const float *qh = q + t * QD + h * D;
      float *o = out + t * QD + h * D, mx = -INFINITY, sum = 0.0f;
      size_t g = h / (HQ / HKV), n_keys = (size_t)pos + t + 1;
      for (s = 0; s < n_keys; s++) {
        float dot = 0.0f;
        for (e = 0; e < D; e++) dot += qh[e] * posenc_f16_to_f32(kc[s * KD + g * D + e]);
        score[s] = dot / 8.0f; /* 1/sqrt(D) */
        if (score[s] > mx) mx = score[s];
      }
      for (s = 0; s < n_keys; s++) sum += score[s] = expf(score[s] - mx);
      for (e = 0; e < D; e++) o[e] = 0.0f;
      for (s = 0; s < n_keys; s++)
        for (e = 0; e < D; e++) o[e] += score[s] / sum * posenc_f16_to_f32(vc[s * KD + g * D + e]);
    }
}

/* One call of the engine: n tokens at positions pos .. pos+n-1 (the prompt, or 1 when
 * decoding); writes the last token's logits. */
static posenc_status forward(const model *m, const int *tok, size_t n, int32_t pos, float *logits) {
  static float x[MAX_T * DM], h[MAX_T * DM], q[MAX_T * QD], k[MAX_T * KD], v[MAX_T * KD];
  static float att[MAX_T * QD], gate[MAX_T * FF], up[MAX_T * FF];
  size_t i, t;
  embed(m, tok, n, x);
  for (i = 0; i < LAYERS; i++) {
    const layer *l = &m->l[i];
    posenc_status st;
    project_qkv(l, x, n, h, q, k, v);
    st = rope_store(m, l, pos, n, q, k, v, k_cache[i], v_cache[i]);
    if (st != POSENC_OK) return st;
    attention(q, k_cache[i], v_cache[i], n, pos, att);
    matmul(h, att, l->wo, n, QD, DM);
    for (t = 0; t < n * DM; t++) x[t] += h[t];
    rmsnorm(h, x, l->mlp_norm, n, DM);
    matmul(gate, h, l->wg, n, DM, FF);
    matmul(up, h, l->wu, n, DM, FF);
    for (t = 0; t < n * FF; t++) gate[t] = gate[t] / (1.0f + expf(-gate[t])) * up[t]; /* SiLU(gate) * up */
    matmul(h, gate, l->wd, n, FF, DM);
    for (t = 0; t < n * DM; t++) x[t] += h[t];
  }
  rmsnorm(h, x + (n - 1) * DM, m->final_norm, 1, DM);
  matmul(logits, h, m->embed, 1, DM, VOCAB);
  return POSENC_OK;
}

/* ---- the reference: the same model in double, one token at a time ------------------------- */

static double ref_k[LAYERS][MAX_T * KD], ref_v[LAYERS][MAX_T * KD];

static void ref_matvec(double *y, const double *x, const float *w, size_t in, size_t out) {
  size_t o, i;
  for (o = 0; o < out; o++) {
    double acc = 0.0;
    for (i = 0; i < in; i++) acc += x[i] * w[o * in + i];
    y[o] = acc;
  }
}

/* y = x / rms(x) * w over n values; in place is fine */
static void ref_rmsnorm(double *y, const double *x, const float *w, size_t n) {
  double ss = 0.0, r;
  size_t i;
  for (i = 0; i < n; i++) ss += x[i] * x[i];
  r = 1.0 / sqrt(ss / (double)n + NORM_EPS);
  for (i = 0; i < n; i++) y[i] = x[i] * r * w[i];
}

/* QK-norm, then the NeoX rotation of pairs (j, j + D/2) by pos * inv_freq[j] */
static void ref_norm_rope(const posenc_rope *rope, double *x, const float *w, int32_t pos) {
  size_t j;
  ref_rmsnorm(x, x, w, D);
  for (j = 0; j < D / 2; j++) {
    double a = pos * posenc_rope_inv_freq(rope)[j], c = cos(a), s = sin(a), x0 = x[j], x1 = x[j + D / 2];
    x[j] = x0 * c - x1 * s;
    x[j + D / 2] = x1 * c + x0 * s;
  }
}

static void ref_forward(const model *m, int tok, int32_t pos, double *logits) {
  double x[DM], h[DM], q[QD], att[QD], y[DM], gate[FF], up[FF], score[MAX_T];
  size_t i, j, hd, s, e;
  for (j = 0; j < DM; j++) x[j] = m->embed[tok * DM + j];
  for (i = 0; i < LAYERS; i++) {
    const layer *l = &m->l[i];
    double *k = ref_k[i] + pos * KD, *v = ref_v[i] + pos * KD; /* this position's cache slot */
    ref_rmsnorm(h, x, l->attn_norm, DM);
    ref_matvec(q, h, l->wq, DM, QD);
    ref_matvec(k, h, l->wk, DM, KD);
    ref_matvec(v, h, l->wv, DM, KD);
    for (hd = 0; hd < HQ; hd++) ref_norm_rope(&m->rope.rope, q + hd * D, l->q_norm, pos);
    for (hd = 0; hd < HKV; hd++) ref_norm_rope(&m->rope.rope, k + hd * D, l->k_norm, pos);
    for (hd = 0; hd < HQ; hd++) {
      const double *kc = ref_k[i] + hd / (HQ / HKV) * D, *vc = ref_v[i] + hd / (HQ / HKV) * D;
      double mx = -INFINITY, sum = 0.0;
      for (s = 0; s <= (size_t)pos; s++) {
        double dot = 0.0;
        for (e = 0; e < D; e++) dot += q[hd * D + e] * kc[s * KD + e];
        score[s] = dot / sqrt((double)D);
        if (score[s] > mx) mx = score[s];
      }
      for (s = 0; s <= (size_t)pos; s++) sum += score[s] = exp(score[s] - mx);
      for (e = 0; e < D; e++) {
        double acc = 0.0;
        for (s = 0; s <= (size_t)pos; s++) acc += score[s] * vc[s * KD + e];
        att[hd * D + e] = acc / sum;
      }
    }
    ref_matvec(y, att, l->wo, QD, DM);
    for (j = 0; j < DM; j++) x[j] += y[j];
    ref_rmsnorm(h, x, l->mlp_norm, DM);
    ref_matvec(gate, h, l->wg, DM, FF);
    ref_matvec(up, h, l->wu, DM, FF);
    for (j = 0; j < FF; j++) gate[j] = gate[j] / (1.0 + exp(-gate[j])) * up[j];
    ref_matvec(y, gate, l->wd, FF, DM);
    for (j = 0; j < DM; j++) x[j] += y[j];
  }
  ref_rmsnorm(h, x, m->final_norm, DM);
  ref_matvec(logits, h, m->embed, DM, VOCAB);
}

/* ---- prefill, decode, compare ---------------------------------------------------------------- */

/* max |a - b| over the vocabulary; *best: a's argmax (the greedy next token) */
static double compare(const float *a, const double *b, int *best) {
  double err = 0.0;
  int i;
  *best = 0;
  for (i = 0; i < VOCAB; i++) {
    double d = fabs(a[i] - b[i]);
    if (d > err) err = d;
    if (a[i] > a[*best]) *best = i;
  }
  return err;
}

int main(void) {
  static model m;
  float logits[VOCAB];
  double ref[VOCAB], err, worst = 0.0;
  int tok[MAX_T], next, t;
  posenc_status st = model_init(&m);
  if (st != POSENC_OK) {
    fprintf(stderr, "rope init: %s\n", posenc_strerror(st));
    return 1;
  }
  printf("posenc %s, backend %s: %d layers, d_model %d, %d query / %d KV heads of %d, f16 KV cache\n",
         POSENC_VERSION_STRING, posenc_isa_name(posenc_isa_active()), LAYERS, DM, HQ, HKV, D);
  make_prompt(tok);
  for (t = 0; t < PROMPT; t++) ref_forward(&m, tok[t], t, ref); /* the reference: a token a call */
  st = forward(&m, tok, PROMPT, 0, logits);                      /* prefill: the prompt in one call */
  for (t = PROMPT - 1;; t++) {
    if (st != POSENC_OK) {
      fprintf(stderr, "rope_store, step ending at position %d: %s\n", t, posenc_strerror(st));
      return 1;
    }
    err = compare(logits, ref, &next);
    if (err > worst) worst = err;
    printf("%s position %2d: next token %3d, max |logit - reference| %.3g\n", t < PROMPT ? "prefill," : "decode, ",
           t, next, err);
    if (t + 1 == MAX_T) break;
    tok[t + 1] = next; /* decode: the greedy token, one a call */
    st = forward(&m, &tok[t + 1], 1, t + 1, logits);
    ref_forward(&m, tok[t + 1], t + 1, ref);
  }
  printf("max |logit error| %.3g, tolerance %.3g: %s\n", worst, TOLERANCE, worst <= TOLERANCE ? "ok" : "FAILED");
  return worst <= TOLERANCE ? 0 : 1;
}
