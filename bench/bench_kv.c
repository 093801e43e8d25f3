/* bench_kv: rotate-and-store into an f16 KV cache (posenc_rope_store_kv) against what an engine
 * does without it: rotate K in place with posenc_rope_apply, then convert and copy it into the
 * cache with a plain loop (kv_loops.c). The floor is that loop alone: it reads K's f32 and
 * writes the cache's f16, the bytes store_kv moves.
 *
 *   prefill: K of 4096 tokens x 8 heads x 128 (16 MiB f32 in, 8 MiB f16 out), positions 0..4095
 *   decode:  1 token, Q 32 heads in place, K and V 8 heads into slot 4000 of a 4096-slot cache
 *
 * Every backend runs, cos/sin cached (an f32 [cos | sin] table) and on the fly; the cache's bytes
 * are checked equal across all methods before timing. Medians of round-robin samples. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, sysconf, uname */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "posenc.h"
#include "bench_util.h"
#include "bench_json.h"
#include "kv_loops.h"

#define MAX_METHODS (6 * POSENC_ISA_COUNT + 4)

typedef struct kv_shape {
  size_t tokens, qheads, heads, dim, slots;  /* qheads: Q's (0: K alone) */
  int32_t start;
} kv_shape;

typedef struct kv_state {
  kv_shape sh;
  POSENC_ROPE_STORAGE(POSENC_ROPE_MAX_DIM) rope_st;
  posenc_rope *rope;               /* &rope_st.rope */
  posenc_rope_cache_view cossin;  /* f32 [cos | sin] rows 0 .. slots-1 */
  float *q, *k, *v, *k_work, *q_work;
  uint16_t *kc, *vc;              /* the f16 KV cache arrays [slot][head][dim] */
} kv_state;

typedef void (*convert_fn)(uint16_t *dst, const float *src, size_t n);

typedef struct method {
  char name[96], id[48];
  const char *impl;               /* "posenc", "loop" or "floor" */
  int isa;                        /* posenc backend; -1 none */
  int cached, separate;           /* cos/sin from the table; in place + loop instead of store_kv */
  convert_fn convert;
  double med;
} method;

static const posenc_rope_tensor no_tensor;

static posenc_rope_tensor dense(float *data, size_t heads) {
  posenc_rope_tensor t = no_tensor;
  t.data = data; t.dtype = POSENC_DTYPE_F32; t.heads = heads;
  return t;
}

/* One call of a method on the state: the prefill (Q NULL, V NULL) or the decode step. */
static int run_method(const method *m, kv_state *s, int decode) {
  const kv_shape *sh = &s->sh;
  const size_t row = sh->heads * sh->dim, n = sh->tokens * row;
  posenc_rope_positions pos;
  posenc_rope_tensor q = dense(s->q_work, sh->qheads ? sh->qheads : 1), k = dense(s->k, sh->heads), v;
  const posenc_rope_cache_view *cv = m->cached ? &s->cossin : NULL;
  posenc_kv_cache kv;
  pos.batch = 1; pos.tokens = sh->tokens; pos.ids = NULL; pos.start = sh->start;
  if (m->isa < 0) { /* the floor: the convert loop alone */
    m->convert(s->kc + (size_t)sh->start * row, s->k, n);
    return 0;
  }
  if (m->separate) { /* what an engine writes without store_kv */
    k.data = s->k_work;
    if (posenc_rope_apply(s->rope, cv, &pos, decode ? &q : &k, decode ? &k : NULL, POSENC_ROPE_FORWARD) != POSENC_OK)
      return 1;
    m->convert(s->kc + (size_t)sh->start * row, s->k_work, n);
    if (decode) m->convert(s->vc + (size_t)sh->start * row, s->v, n);
    return 0;
  }
  memset(&kv, 0, sizeof kv);
  kv.k = s->kc; kv.v = decode ? s->vc : NULL; kv.dtype = POSENC_DTYPE_F16; kv.heads = sh->heads;
  kv.n_slots = sh->slots;
  v = dense(s->v, sh->heads);
  return posenc_rope_store_kv(s->rope, cv, &pos, decode ? &q : NULL, &k, decode ? &v : NULL, &kv, NULL) != POSENC_OK;
}

static int state_init(kv_state *s, const kv_shape *sh) {
  const size_t row = sh->heads * sh->dim, nk = sh->tokens * row, nq = sh->tokens * (sh->qheads + 1) * sh->dim;
  posenc_rope_config cfg = posenc_rope_default(sh->dim);
  posenc_rope_cache_spec sp = {POSENC_ROPE_CACHE_HALF, POSENC_DTYPE_F32, 0};
  size_t bytes, i;
  void *table;
  memset(s, 0, sizeof *s);
  s->sh = *sh;
  s->rope = &s->rope_st.rope;
  if (posenc_rope_init(s->rope, sizeof s->rope_st, &cfg) != POSENC_OK || posenc_rope_cache_bytes(s->rope, &sp, sh->slots, &bytes))
    return 1;
  table = malloc(bytes);
  s->q = (float *)malloc(nq * 4); s->q_work = (float *)malloc(nq * 4);
  s->k = (float *)malloc(nk * 4); s->k_work = (float *)malloc(nk * 4); s->v = (float *)malloc(nk * 4);
  s->kc = (uint16_t *)calloc(sh->slots * row, 2); s->vc = (uint16_t *)calloc(sh->slots * row, 2);
  if (!table || !s->q || !s->q_work || !s->k || !s->k_work || !s->v || !s->kc || !s->vc) return 1;
  if (posenc_rope_cache_table(s->rope, &sp, 0, sh->slots, table, bytes) != POSENC_OK) return 1;
  s->cossin.data = table; s->cossin.n_rows = sh->slots; s->cossin.spec = sp;
  for (i = 0; i < nq; i++) s->q[i] = s->q_work[i] = (float)((int)(i * 2654435761u % 511u) - 255) / 64.0f;
  for (i = 0; i < nk; i++) {
    s->k[i] = s->k_work[i] = (float)((int)(i * 40503u % 509u) - 254) / 64.0f;
    s->v[i] = (float)((int)(i * 2246822519u % 503u) - 251) / 32.0f;
  }
  return 0;
}

static void state_free(kv_state *s) {
  free((void *)s->cossin.data); free(s->q); free(s->q_work); free(s->k); free(s->k_work); free(s->v);
  free(s->kc); free(s->vc);
}

/* Resets the inputs that in-place rotation changes, so that every method starts from the same. */
static void reset_inputs(kv_state *s) {
  const size_t nk = s->sh.tokens * s->sh.heads * s->sh.dim, nq = s->sh.tokens * s->sh.qheads * s->sh.dim;
  memcpy(s->k_work, s->k, nk * 4);
  memcpy(s->q_work, s->q, nq * 4);
}

/* The methods: per backend store_kv and in place + the best plain loop, cached and on the fly;
 * the loop alone as the floor (prefill only). */
static size_t make_methods(method *m, int decode) {
  static const struct { const char *name; convert_fn fn; } loops[] = {
#ifdef BENCH_HAVE_LOOPS_AVX2
    {"F16C intrinsics", kv_to_f16_intrin_avx2}, {"-O3 -mavx2 -mf16c", kv_to_f16_avx2},
#endif
    {"-O3", kv_to_f16_o3}, {"-O2 -fno-tree-vectorize", kv_to_f16_scalar}};
  const size_t nloops = sizeof loops / sizeof loops[0];
  size_t n = 0, l;
  int isa, cached, separate, best_loop = 0;
#ifdef BENCH_HAVE_LOOPS_AVX2
  best_loop = cpu_has_avx2() ? 0 : 2;
#endif
  BK_EACH_USABLE(isa)
    for (cached = 1; cached >= 0; cached--)
      for (separate = 0; separate < 3; separate++) {
        /* each backend beside the plain loop built for its ISA (scalar -O2, the baseline -O3,
         * -O3 -mavx2 -mf16c) and, on AVX2, the loop written with F16C intrinsics (separate 2) */
        const char *name = posenc_isa_name((posenc_isa)isa);
        const int avx = strncmp(name, "avx", 3) == 0 && best_loop == 0;
        size_t loop = isa == POSENC_ISA_SCALAR ? nloops - 1 : avx ? (separate == 2 ? 0u : 1u) : nloops - 2;
        method *x;
        if (separate == 2 && !avx) continue;
        x = &m[n++];
        memset(x, 0, sizeof *x);
        x->impl = separate ? "loop" : "posenc";
        x->isa = isa; x->cached = cached; x->separate = separate; x->convert = loops[loop].fn;
        snprintf(x->name, sizeof x->name, "posenc %s %s%s, %s", name, separate ? "in place + loop " : "store_kv",
                 separate ? loops[loop].name : "", cached ? "cached" : "on the fly");
        snprintf(x->id, sizeof x->id, "%s_%s_%s", posenc_isa_name((posenc_isa)isa),
                 separate == 2 ? "inplace_intrin" : separate ? "inplace_loop" : "store_kv", cached ? "cached" : "otf");
      }
  for (l = 0; l < nloops && !decode; l++) {
    method *x = &m[n++];
    if (l < (size_t)best_loop) { n--; continue; } /* AVX2 loops on a CPU without AVX2 */
    memset(x, 0, sizeof *x);
    x->impl = "floor"; x->isa = -1; x->convert = loops[l].fn;
    snprintf(x->name, sizeof x->name, "convert loop alone, %s", loops[l].name);
    snprintf(x->id, sizeof x->id, "convert_loop_%lu", (unsigned long)l);
  }
  return n;
}

/* The cache arrays after one run of each method: equal bytes everywhere (1 if not). */
static int check_bits(method *m, size_t nm, kv_state *s, int decode) {
  const size_t bytes = s->sh.slots * s->sh.heads * s->sh.dim * 2;
  uint16_t *want = (uint16_t *)malloc(2 * bytes);
  size_t i;
  int bad = 0;
  if (!want) return 1;
  for (i = 0; i < nm; i++) {
    if (m[i].isa < 0) continue;
    reset_inputs(s);
    memset(s->kc, 0, bytes); memset(s->vc, 0, bytes);
    posenc_isa_set((posenc_isa)m[i].isa);
    if (run_method(&m[i], s, decode)) { printf("  %s: the call failed\n", m[i].name); bad = 1; continue; }
    if (i == 0) { memcpy(want, s->kc, bytes); memcpy((char *)want + bytes, s->vc, bytes); }
    else if (memcmp(want, s->kc, bytes) != 0 || memcmp((char *)want + bytes, s->vc, bytes) != 0) {
      printf("  %s: the cache's bytes differ from %s's\n", m[i].name, m[0].name);
      bad = 1;
    }
  }
  posenc_isa_set(POSENC_ISA_AUTO);
  free(want);
  return bad;
}

/* Round-robin timing (bench_round_robin): each method's median per call. */
typedef struct kv_timing {
  method *m;
  kv_state *s;
  int decode;
} kv_timing;

static void kv_prepare(void *ctx, size_t i) {
  kv_timing *t = (kv_timing *)ctx;
  if (t->m[i].isa >= 0) posenc_isa_set((posenc_isa)t->m[i].isa);
  reset_inputs(t->s);
}

static void kv_run(void *ctx, size_t i) {
  kv_timing *t = (kv_timing *)ctx;
  run_method(&t->m[i], t->s, t->decode);
}

static void time_methods(method *m, size_t nm, kv_state *s, int decode, int rounds, long reps) {
  kv_timing t;
  bench_rr rr;
  double med[MAX_METHODS];
  size_t i;
  t.m = m; t.s = s; t.decode = decode;
  rr.ctx = &t; rr.prepare = kv_prepare; rr.run = kv_run;
  if (bench_round_robin(&rr, nm, rounds, reps, med) == 0)
    for (i = 0; i < nm; i++) m[i].med = med[i];
  posenc_isa_set(POSENC_ISA_AUTO);
}

static const method *find(const method *m, size_t nm, int isa, int cached, int separate) {
  size_t i;
  for (i = 0; i < nm; i++)
    if (m[i].isa == isa && m[i].cached == cached && m[i].separate == separate) return &m[i];
  return NULL;
}

static void json_rows(bench_json *j, const method *m, size_t nm, const kv_state *s, int decode, long reps) {
  bench_rec rec[MAX_METHODS];
  char size[64];
  const double elems = (double)(s->sh.tokens * s->sh.heads * s->sh.dim);
  size_t i;
  for (i = 0; i < nm; i++) {
    rec[i].kernel = decode ? "rope_store_kv_decode_f16" : "rope_store_kv_f16";
    rec[i].backend = m[i].id; rec[i].impl = m[i].impl;
    rec[i].seconds = m[i].med; rec[i].elems = elems;
    rec[i].bytes = decode ? 0.0 : elems * 6.0; /* f32 in, f16 out */
    rec[i].reps = reps;
  }
  snprintf(size, sizeof size, "tokens=%lu,heads=%lu,dim=%lu", (unsigned long)s->sh.tokens,
           (unsigned long)s->sh.heads, (unsigned long)s->sh.dim);
  bench_json_group(j, size, "element", "median", rec, nm);
}

/* Runs one shape; prints the table and, for the prefill, the targets. 1 if bits differ. */
static int bench_shape(const kv_shape *sh, int decode, const bench_cli *c, bench_json *j) {
  method m[MAX_METHODS];
  kv_state s;
  size_t nm = make_methods(m, decode), i;
  const int rounds = c->smoke ? 1 : 9;
  const long reps = c->smoke ? 1 : decode ? 2000 : 6;
  double floor_s = 0.0, bytes;
  int isa, bad;
  if (state_init(&s, sh)) { printf("out of memory\n"); return 1; }
  bytes = (double)(sh->tokens * sh->heads * sh->dim) * 6.0;
  printf("\n%s: %lu token%s x %lu heads x %lu, f32 -> f16 cache%s\n", decode ? "decode" : "prefill",
         (unsigned long)sh->tokens, sh->tokens > 1 ? "s" : "", (unsigned long)sh->heads, (unsigned long)sh->dim,
         decode ? " (Q 32 heads in place, K and V 8 heads to slot 4000)" : "");
  bad = check_bits(m, nm, &s, decode);
  printf("  bits: %s\n", bad ? "DIFFER" : "every method writes the same cache bytes");
  time_methods(m, nm, &s, decode, rounds, reps);
  for (i = 0; i < nm; i++)
    if (m[i].isa < 0 && (floor_s == 0.0 || m[i].med < floor_s)) floor_s = m[i].med;
  for (i = 0; i < nm; i++) {
    if (decode) printf("  %-62s %9.0f ns\n", m[i].name, m[i].med * 1e9);
    else printf("  %-62s %8.3f ms  %6.1f GB/s  %5.0f%% of floor\n", m[i].name, m[i].med * 1e3,
                bytes / m[i].med * 1e-9, 100.0 * floor_s / m[i].med);
  }
  printf("  (in place + loop) / store_kv, same backend and cos/sin source; plain loop [F16C intrinsics]:\n");
  BK_EACH_USABLE(isa) {
    const method *a = find(m, nm, isa, 1, 0), *b = find(m, nm, isa, 1, 1), *x = find(m, nm, isa, 0, 0),
                 *y = find(m, nm, isa, 0, 1), *bi = find(m, nm, isa, 1, 2), *yi = find(m, nm, isa, 0, 2);
    char intrin[64] = "";
    if (!a || !b || !x || !y) continue;
    if (bi && yi) snprintf(intrin, sizeof intrin, " [%.2fx, %.2fx]", bi->med / a->med, yi->med / x->med);
    printf("    %-10s cached %.2fx, on the fly %.2fx%s\n", posenc_isa_name((posenc_isa)isa), b->med / a->med,
           y->med / x->med, intrin);
    if (!decode && isa == posenc_isa_active())
      printf("    targets, %s cached: >= 1.5x the plain loop path %s; >= 85%% of the floor %s (%.0f%%)\n",
             posenc_isa_name((posenc_isa)isa), b->med / a->med >= 1.5 ? "PASS" : "MISS",
             floor_s / a->med >= 0.85 ? "PASS" : "MISS", 100.0 * floor_s / a->med);
  }
  json_rows(j, m, nm, &s, decode, reps);
  state_free(&s);
  return bad;
}

int main(int argc, char **argv) {
  bench_cli cli;
  bench_json json;
  int rounds = 3, bad;
  kv_shape prefill = {4096, 0, 8, 128, 4096, 0}, decode = {1, 32, 8, 128, 4096, 4000};
  if (bench_rounds_args("bench_kv", argc, argv, &cli, &rounds) != 0) return 2;
  if (cli.smoke) { prefill.tokens = 40; prefill.slots = 64; decode.slots = 4096; }
  if (bench_json_open(&json, "kv", &cli) != 0) return 1;
  bench_banner("bench_kv", &cli);
  bad = bench_shape(&prefill, 0, &cli, &json);
  bad |= bench_shape(&decode, 1, &cli, &json);
  return bench_json_close(&json) != 0 || bad;
}
