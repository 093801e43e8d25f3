/* The attention step of examples/engine.c (rope_store: QK-norm, RoPE, K and V into the f16 KV
 * cache) split across threads. The threads share the rope read-only; each call writes only its
 * own Q rows and cache slots, and a value's bits do not depend on the split. So each thread takes
 * a slice of the step: a run of tokens (prefill), a group of KV heads with their query heads (the
 * only split a one-token decode step has), or both. Q and the cache must equal, byte for byte,
 * those of engine.c's single call.
 * Run: build/examples/engine_threads */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "engine_model.h"

enum { G = HQ / HKV, MAX_THREADS = 4 }; /* G: query heads per KV head */

/* A thread's share of a step at positions pos .. pos+n-1: tokens t0 .. t0+nt-1 of it, and KV heads
 * g0 .. g0+ng-1 with their query heads. q, k, v: the step's dense [n][heads][D] tensors. */
typedef struct slice {
  const model *m;
  int32_t pos;
  size_t t0, nt, g0, ng;
  float *q, *k, *v;
  uint16_t *k_cache, *v_cache;
  posenc_status st;
} slice;

/* rope_store (engine_model.h) on a slice: each tensor and cache array entered at the slice's first
 * token and head, keeping the whole tensor's strides (a token's Q is QD floats apart, its K KD;
 * a cache slot is KD values). */
static void *store_slice(void *arg) {
  slice *s = arg;
  const layer *l = &s->m->l[0];
  posenc_rope_positions p = {1, s->nt, NULL, s->pos + (int32_t)s->t0};
  posenc_rope_tensor q = {s->q + s->t0 * QD + s->g0 * G * D, POSENC_DTYPE_F32, s->ng * G, 0, QD, 0};
  posenc_rope_tensor k = {s->k + s->t0 * KD + s->g0 * D, POSENC_DTYPE_F32, s->ng, 0, KD, 0};
  posenc_rope_tensor v = {s->v + s->t0 * KD + s->g0 * D, POSENC_DTYPE_F32, s->ng, 0, KD, 0};
  posenc_rope_norm qn = {l->q_norm, NORM_EPS, 0}, kn = {l->k_norm, NORM_EPS, 0};
  posenc_kv_cache kv = {s->k_cache + s->g0 * D, s->v_cache + s->g0 * D, POSENC_DTYPE_F16, s->ng, MAX_T, 0, 0, KD, 0};
  s->st = posenc_rope_store_kv_norm(&s->m->rope.rope, NULL, &p, &q, &qn, &k, &kn, &v, &kv, NULL);
  return NULL;
}

/* The step split into token_runs x head_groups slices, a thread each. */
static posenc_status threaded(const model *m, int32_t pos, size_t n, size_t token_runs, size_t head_groups,
                              float *q, float *k, float *v, uint16_t *k_cache, uint16_t *v_cache) {
  pthread_t th[MAX_THREADS];
  slice s[MAX_THREADS];
  int started[MAX_THREADS];
  size_t i, count = token_runs * head_groups;
  posenc_status st = POSENC_OK;
  for (i = 0; i < count; i++) {
    size_t run = i / head_groups, group = i % head_groups;
    slice one = {m, pos, 0, 0, 0, 0, q, k, v, k_cache, v_cache, POSENC_OK};
    one.t0 = n * run / token_runs;
    one.nt = n * (run + 1) / token_runs - one.t0;
    one.g0 = HKV * group / head_groups;
    one.ng = HKV * (group + 1) / head_groups - one.g0;
    s[i] = one;
    started[i] = pthread_create(&th[i], NULL, store_slice, &s[i]) == 0;
    if (!started[i]) store_slice(&s[i]); /* no thread to be had: this one does the slice */
  }
  for (i = 0; i < count; i++) {
    if (started[i]) pthread_join(th[i], NULL);
    if (st == POSENC_OK) st = s[i].st;
  }
  return st;
}

int main(void) {
  static model m;
  static float x[MAX_T * DM], h[MAX_T * DM], q[MAX_T * QD], k[MAX_T * KD], v[MAX_T * KD];
  static float q1[MAX_T * QD], qn[MAX_T * QD];                    /* Q rotated by one call, by threads */
  static uint16_t k1[MAX_T * KD], v1[MAX_T * KD], kn[MAX_T * KD], vn[MAX_T * KD]; /* their caches */
  static const struct { const char *what; int32_t pos; size_t n, token_runs, head_groups; } steps[] = {
    {"prefill of 16 tokens, 4 threads by tokens", 0, PROMPT, 4, 1},
    {"prefill of 16 tokens, 2 token runs x 2 KV heads", 0, PROMPT, 2, 2},
    {"decode of 1 token, 2 threads by KV head", PROMPT, 1, 1, 2}};
  int tok[PROMPT + 1], failed = 0;
  size_t i;
  posenc_status st = model_init(&m);
  if (st != POSENC_OK) {
    fprintf(stderr, "rope init: %s\n", posenc_strerror(st));
    return 1;
  }
  make_prompt(tok);
  tok[PROMPT] = tok[0]; /* the decoded token: any will do */
  embed(&m, tok, PROMPT + 1, x);
  project_qkv(&m.l[0], x, PROMPT + 1, h, q, k, v); /* layer 0's Q, K and V of positions 0 .. PROMPT */
  for (i = 0; i < sizeof steps / sizeof steps[0]; i++) {
    int32_t p = steps[i].pos;
    size_t n = steps[i].n;
    int same;
    memcpy(q1, q + p * QD, n * QD * sizeof(float));
    memcpy(qn, q + p * QD, n * QD * sizeof(float));
    st = rope_store(&m, &m.l[0], p, n, q1, k + p * KD, v + p * KD, k1, v1);
    if (st == POSENC_OK)
      st = threaded(&m, p, n, steps[i].token_runs, steps[i].head_groups, qn, k + p * KD, v + p * KD, kn, vn);
    same = st == POSENC_OK && memcmp(q1, qn, n * QD * sizeof(float)) == 0 && memcmp(k1, kn, sizeof k1) == 0 &&
           memcmp(v1, vn, sizeof v1) == 0;
    printf("%s: Q and the f16 KV cache %s\n", steps[i].what,
           st != POSENC_OK ? posenc_strerror(st) : same ? "identical to one call's" : "DIFFER from one call's");
    failed |= !same;
  }
  return failed;
}
