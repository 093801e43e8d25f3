/* bench_qknorm: QK-norm fused with the rotation (posenc_rope_apply_norm, in place) against what an
 * engine does without it: the plain RMSNorm loop over every head of Q and K (kv_loops.c, llama2.c's
 * rmsnorm), then posenc_rope_apply. Rotation alone (posenc_rope_apply) is shown for what the norm
 * adds to it.
 *
 *   prefill: 4096 tokens, Q 32 heads and K 8 heads of 128, f32 (Qwen3-8B's attention), positions 0..
 *   decode:  1 token at position 4000
 *
 * Every backend runs, cos/sin cached (an f32 [cos | sin] table) and on the fly; the fused call's
 * bytes are checked equal across backends and cos/sin sources before timing. Medians of
 * round-robin samples. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, sysconf, uname */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "posenc.h"
#include "bench_util.h"
#include "bench_json.h"
#include "kv_loops.h"

#define MAX_METHODS (6 * POSENC_ISA_COUNT)
#define QHEADS 32
#define KHEADS 8
#define DIM 128
#define EPS 1e-6f

typedef void (*norm_fn)(float *x, size_t heads, size_t dim, const float *w, float eps);

typedef struct state {
  size_t tokens;
  int32_t start;
  POSENC_ROPE_STORAGE(POSENC_ROPE_MAX_DIM) rope_st;
  posenc_rope *rope;               /* &rope_st.rope */
  posenc_rope_cache_view cossin;  /* f32 [cos | sin] rows 0 .. 4095 */
  float *q, *k, *q_work, *k_work, wq[DIM], wk[DIM];
} state;

enum { FUSED = 0, LOOP_THEN_ROTATE = 1, ROTATE_ALONE = 2 };

typedef struct method {
  char name[96], id[48];
  const char *impl;
  int isa, cached, kind;
  norm_fn norm;
  double med;
} method;

static int run_method(const method *m, state *s) {
  posenc_rope_positions pos;
  posenc_rope_tensor q, k;
  posenc_rope_norm qn, kn;
  const posenc_rope_cache_view *cv = m->cached ? &s->cossin : NULL;
  memset(&q, 0, sizeof q);
  q.data = s->q_work; q.dtype = POSENC_DTYPE_F32; q.heads = QHEADS;
  k = q; k.data = s->k_work; k.heads = KHEADS;
  pos.batch = 1; pos.tokens = s->tokens; pos.ids = NULL; pos.start = s->start;
  if (m->kind == FUSED) {
    qn.weight = s->wq; qn.epsilon = EPS; qn.weight_offset = 0;
    kn = qn; kn.weight = s->wk;
    return posenc_rope_apply_norm(s->rope, cv, &pos, &q, &q, &qn, &k, &k, &kn) != POSENC_OK;
  }
  if (m->kind == LOOP_THEN_ROTATE) {
    m->norm(s->q_work, s->tokens * QHEADS, DIM, s->wq, EPS);
    m->norm(s->k_work, s->tokens * KHEADS, DIM, s->wk, EPS);
  }
  return posenc_rope_apply(s->rope, cv, &pos, &q, &k, POSENC_ROPE_FORWARD) != POSENC_OK;
}

static void reset_inputs(state *s) {
  memcpy(s->q_work, s->q, s->tokens * QHEADS * DIM * 4);
  memcpy(s->k_work, s->k, s->tokens * KHEADS * DIM * 4);
}

static int state_init(state *s, size_t tokens, int32_t start) {
  const size_t nq = tokens * QHEADS * DIM, nk = tokens * KHEADS * DIM;
  posenc_rope_config cfg = posenc_rope_default(DIM);
  posenc_rope_cache_spec sp = {POSENC_ROPE_CACHE_HALF, POSENC_DTYPE_F32, 0};
  size_t bytes, i;
  void *table;
  memset(s, 0, sizeof *s);
  s->tokens = tokens; s->start = start;
  cfg.base = 1000000.0;
  s->rope = &s->rope_st.rope;
  if (posenc_rope_init(s->rope, sizeof s->rope_st, &cfg) != POSENC_OK || posenc_rope_cache_bytes(s->rope, &sp, 4096, &bytes)) return 1;
  table = malloc(bytes);
  s->q = (float *)malloc(nq * 4); s->q_work = (float *)malloc(nq * 4);
  s->k = (float *)malloc(nk * 4); s->k_work = (float *)malloc(nk * 4);
  if (!table || !s->q || !s->q_work || !s->k || !s->k_work) return 1;
  if (posenc_rope_cache_table(s->rope, &sp, 0, 4096, table, bytes) != POSENC_OK) return 1;
  s->cossin.data = table; s->cossin.n_rows = 4096; s->cossin.spec = sp;
  for (i = 0; i < nq; i++) s->q[i] = (float)((int)(i * 2654435761u % 511u) - 255) / 64.0f;
  for (i = 0; i < nk; i++) s->k[i] = (float)((int)(i * 40503u % 509u) - 254) / 64.0f;
  /* Decode repeats its call 2000 times on the same Q and K, in place: weights other than 1 would
   * compound (0.875 against 1.125: e^-500 after 2000 calls) and drive most elements subnormal,
   * timing subnormal arithmetic (about 100 us a call instead of 1 on an Intel Xeon). So decode's
   * weights are 1, which costs the same multiplies; the prefill's 4 repetitions keep Qwen-like
   * weights. */
  for (i = 0; i < DIM; i++) {
    s->wq[i] = tokens == 1 ? 1.0f : 1.0f + (float)((int)(i * 7u % 17u) - 8) / 64.0f;
    s->wk[i] = tokens == 1 ? 1.0f : 1.0f + (float)((int)(i * 5u % 13u) - 6) / 64.0f;
  }
  reset_inputs(s);
  return 0;
}

static void state_free(state *s) { free((void *)s->cossin.data); free(s->q); free(s->q_work); free(s->k); free(s->k_work); }

/* Per backend: fused, the plain loop then rotation, rotation alone; cached and on the fly. The
 * loop is the one built for the backend's ISA (scalar -O2, SSE2 -O3, AVX2 and up -O3 -mavx2). */
static size_t make_methods(method *m) {
  static const char *const kinds[3] = {"apply_norm (fused)", "RMSNorm loop + apply", "apply alone (no norm)"};
  size_t n = 0;
  int isa, cached, kind;
  BK_EACH_USABLE(isa)
    for (cached = 1; cached >= 0; cached--)
      for (kind = 0; kind < 3; kind++) {
        const char *name = posenc_isa_name((posenc_isa)isa);
        method *x = &m[n++];
        memset(x, 0, sizeof *x);
        x->isa = isa; x->cached = cached; x->kind = kind;
        x->impl = kind == LOOP_THEN_ROTATE ? "loop" : "posenc";
        x->norm = isa == POSENC_ISA_SCALAR ? kv_rmsnorm_heads_scalar : kv_rmsnorm_heads_o3;
#ifdef BENCH_HAVE_LOOPS_AVX2
        if (strncmp(name, "avx", 3) == 0 && cpu_has_avx2()) x->norm = kv_rmsnorm_heads_avx2;
#endif
        snprintf(x->name, sizeof x->name, "posenc %s %s, %s", name, kinds[kind], cached ? "cached" : "on the fly");
        snprintf(x->id, sizeof x->id, "%s_%s_%s", name, kind == FUSED ? "fused" : kind == ROTATE_ALONE ? "rotate" : "loop",
                 cached ? "cached" : "otf");
      }
  return n;
}

/* The fused call's Q and K after one run: equal bytes on every backend and cos/sin source. */
static int check_bits(const method *m, size_t nm, state *s) {
  const size_t nq = s->tokens * QHEADS * DIM * 4, nk = s->tokens * KHEADS * DIM * 4;
  unsigned char *want = (unsigned char *)malloc(nq + nk);
  size_t i;
  int bad = 0, have = 0;
  if (!want) return 1;
  for (i = 0; i < nm; i++) {
    if (m[i].kind != FUSED) continue;
    reset_inputs(s);
    posenc_isa_set((posenc_isa)m[i].isa);
    if (run_method(&m[i], s)) { printf("  %s: the call failed\n", m[i].name); bad = 1; continue; }
    if (!have) { memcpy(want, s->q_work, nq); memcpy(want + nq, s->k_work, nk); have = 1; }
    else if (memcmp(want, s->q_work, nq) != 0 || memcmp(want + nq, s->k_work, nk) != 0) {
      printf("  %s: Q or K differs from the first backend's\n", m[i].name);
      bad = 1;
    }
  }
  posenc_isa_set(POSENC_ISA_AUTO);
  free(want);
  return bad;
}

/* Round-robin timing (bench_round_robin): each method's median per call. */
typedef struct qk_timing {
  method *m;
  state *s;
} qk_timing;

static void qk_prepare(void *ctx, size_t i) {
  qk_timing *t = (qk_timing *)ctx;
  posenc_isa_set((posenc_isa)t->m[i].isa);
  reset_inputs(t->s);
}

static void qk_run(void *ctx, size_t i) {
  qk_timing *t = (qk_timing *)ctx;
  run_method(&t->m[i], t->s);
}

static void time_methods(method *m, size_t nm, state *s, int rounds, long reps) {
  qk_timing t;
  bench_rr rr;
  double med[MAX_METHODS];
  size_t i;
  t.m = m; t.s = s;
  rr.ctx = &t; rr.prepare = qk_prepare; rr.run = qk_run;
  if (bench_round_robin(&rr, nm, rounds, reps, med) == 0)
    for (i = 0; i < nm; i++) m[i].med = med[i];
  posenc_isa_set(POSENC_ISA_AUTO);
}

static const method *find(const method *m, size_t nm, int isa, int cached, int kind) {
  size_t i;
  for (i = 0; i < nm; i++)
    if (m[i].isa == isa && m[i].cached == cached && m[i].kind == kind) return &m[i];
  return NULL;
}

static int bench_shape(size_t tokens, int32_t start, const bench_cli *c, bench_json *j) {
  method m[MAX_METHODS];
  bench_rec rec[MAX_METHODS];
  state s;
  const int decode = tokens == 1, rounds = c->smoke ? 1 : 9;
  const long reps = c->smoke ? 1 : decode ? 2000 : 4;
  const double elems = (double)(tokens * (QHEADS + KHEADS) * DIM);
  size_t nm = make_methods(m), i;
  char size[64];
  int isa, bad;
  if (state_init(&s, tokens, start)) { printf("out of memory\n"); return 1; }
  printf("\n%s: %lu token%s, Q %d heads + K %d heads of %d, f32 in place\n", decode ? "decode" : "prefill",
         (unsigned long)tokens, decode ? "" : "s", QHEADS, KHEADS, DIM);
  bad = check_bits(m, nm, &s);
  printf("  bits: %s\n", bad ? "DIFFER" : "the fused call gives the same bytes on every backend, cached or not");
  time_methods(m, nm, &s, rounds, reps);
  for (i = 0; i < nm; i++) {
    if (decode) printf("  %-58s %9.0f ns\n", m[i].name, m[i].med * 1e9);
    else printf("  %-58s %8.3f ms  %6.2f ns/elem\n", m[i].name, m[i].med * 1e3, m[i].med * 1e9 / elems);
    rec[i].kernel = decode ? "rope_qknorm_decode" : "rope_qknorm";
    rec[i].backend = m[i].id; rec[i].impl = m[i].impl;
    rec[i].seconds = m[i].med; rec[i].elems = elems; rec[i].bytes = 0.0; rec[i].reps = reps;
  }
  printf("  (RMSNorm loop + apply) / fused, and fused / apply alone, same backend:\n");
  BK_EACH_USABLE(isa) {
    const method *f = find(m, nm, isa, 1, FUSED), *l = find(m, nm, isa, 1, LOOP_THEN_ROTATE),
                 *a = find(m, nm, isa, 1, ROTATE_ALONE), *fo = find(m, nm, isa, 0, FUSED),
                 *lo = find(m, nm, isa, 0, LOOP_THEN_ROTATE);
    printf("    %-10s cached %.2fx (fused %.2fx rotation alone), on the fly %.2fx\n", posenc_isa_name((posenc_isa)isa),
           l->med / f->med, f->med / a->med, lo->med / fo->med);
    if (!decode && isa == posenc_isa_active())
      printf("    target, %s cached: fused >= 1.4x the RMSNorm loop + apply: %s (%.2fx)\n",
             posenc_isa_name((posenc_isa)isa), l->med / f->med >= 1.4 ? "PASS" : "MISS", l->med / f->med);
  }
  snprintf(size, sizeof size, "tokens=%lu,qheads=%d,kheads=%d,dim=%d", (unsigned long)tokens, QHEADS, KHEADS, DIM);
  bench_json_group(j, size, "element", "median", rec, nm);
  state_free(&s);
  return bad;
}

int main(int argc, char **argv) {
  bench_cli cli;
  bench_json json;
  int rounds = 3, bad;
  if (bench_rounds_args("bench_qknorm", argc, argv, &cli, &rounds) != 0) return 2;
  if (bench_json_open(&json, "qknorm", &cli) != 0) return 1;
  bench_banner("bench_qknorm", &cli);
  bad = bench_shape(cli.smoke ? 40 : 4096, 0, &cli, &json);
  bad |= bench_shape(1, 4000, &cli, &json);
  return bench_json_close(&json) != 0 || bad;
}
