/* bench_bias - posenc's position biases added into attention scores (posenc_alibi_add,
 * posenc_t5_bias_add) against a read-modify-write floor, a plain C loop and its autovectorized
 * twins, on every backend this CPU runs, one thread.
 *
 *   RMW floor    s[i] = s[i] + c in place over the same block: plain C -O3 (and -O3 -mavx2), and
 *                AVX2 intrinsics with ordinary and with non-temporal stores; the fastest is the floor
 *   ALiBi        form RELATIVE with the causal mask (the target row), the same with key padding
 *                (the last 1/8 of the keys), and form SYMMETRIC without a mask
 *   T5           bidirectional, 32 buckets, max_distance 128, f32 table [32][heads]; causal off, on
 *   f16          ALiBi + causal into an f16 tile (its GB/s against the f32 floor's)
 *   tiles        ALiBi + causal and T5 + causal, one call per 128 x 128 tile (q_pos, k_pos, row
 *                stride), as a flash-attention caller hands them over
 * Bytes moved = read + write of the block, for every row. Before timing, every row runs once on
 * the same input as posenc's scalar backend and the bits column counts the elements that differ.
 *
 * Each method runs in round-robin rounds; the median of the rounds is reported. Targets (issue
 * 5): ALiBi + causal and the T5 add >= 90% of the RMW floor on 1 head x 4096 x 4096 f32 (64 MiB,
 * DRAM). The second shape, 8 heads x 256 x 256 (2 MiB, cache), shows what a call costs beyond
 * the bytes, and the last table the fixed cost of a call (a 1 x 1 x 1 tile). T5 also has an
 * experiment row: the loop through a bias row (bias_loops.h).
 * Run it pinned: taskset -c 1 build/bench/bench_bias [rounds]
 * Usage: bench_bias [rounds] [--smoke] [--json FILE] [--label NAME]; exit status 1 if any bits differ.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, posix_memalign, sysconf, uname */
#include <stdint.h>
#include <stdlib.h>
#include "posenc.h"
#include "bench_util.h"
#include "bench_json.h"
#include "bias_loops.h"

typedef struct shape { int heads, rows, cols, reps; const char *what; } shape;

/* The cases: what each posenc row and loop row computes (the bits column compares within one). */
enum { C_ALIBI_CAUSAL, C_ALIBI_KEEP, C_ALIBI_SYM, C_T5, C_T5_CAUSAL, C_ALIBI_F16, C_ALIBI_TILED, C_T5_TILED,
       C_COUNT };
typedef struct bias_case {
  const char *name;
  const char *id;  /* the JSON kernel */
  int t5, causal, keep;
  posenc_alibi_form form;
  posenc_dtype dtype;
  int tile;  /* > 0: one call per tile x tile block (row_stride = cols), as a flash-attention caller */
  int ref;   /* the case whose posenc scalar result the bits column compares with */
} bias_case;
static const bias_case cases[C_COUNT] = {
  {"ALiBi+causal", "alibi_causal", 0, 1, 0, POSENC_ALIBI_RELATIVE, POSENC_DTYPE_F32, 0, C_ALIBI_CAUSAL},
  {"ALiBi+causal+key pad", "alibi_causal_keypad", 0, 1, 1, POSENC_ALIBI_RELATIVE, POSENC_DTYPE_F32, 0, C_ALIBI_KEEP},
  {"ALiBi symmetric", "alibi_symmetric", 0, 0, 0, POSENC_ALIBI_SYMMETRIC, POSENC_DTYPE_F32, 0, C_ALIBI_SYM},
  {"T5 bidir", "t5_bidir", 1, 0, 0, POSENC_ALIBI_RELATIVE, POSENC_DTYPE_F32, 0, C_T5},
  {"T5 bidir+causal", "t5_bidir_causal", 1, 1, 0, POSENC_ALIBI_RELATIVE, POSENC_DTYPE_F32, 0, C_T5_CAUSAL},
  {"ALiBi+causal f16", "alibi_causal_f16", 0, 1, 0, POSENC_ALIBI_RELATIVE, POSENC_DTYPE_F16, 0, C_ALIBI_F16},
  /* tiled: the bits are compared with the whole block's */
  {"ALiBi+causal 128-tiles", "alibi_causal_tiles128", 0, 1, 0, POSENC_ALIBI_RELATIVE, POSENC_DTYPE_F32, 128, C_ALIBI_CAUSAL},
  {"T5 bidir+causal 128-tiles", "t5_bidir_causal_tiles128", 1, 1, 0, POSENC_ALIBI_RELATIVE, POSENC_DTYPE_F32, 128, C_T5_CAUSAL},
};

/* The plain loops, one per compiled variant; avx2 rows run only where the CPU has AVX2. */
typedef struct loop_variant {
  const char *name;
  const char *id;  /* in the JSON backends: loop_<id>, rmw_<id>, ... */
  alibi_loop_fn alibi;
  t5_loop_fn t5;
  t5_row_loop_fn t5_row;
  rmw_add_fn rmw;
  int avx2;
} loop_variant;
#define LOOP_VARIANT(v, name, id, avx2) {name, id, alibi_loop_##v, t5_loop_##v, t5_row_loop_##v, rmw_add_##v, avx2}
static const loop_variant loops[] = {
  LOOP_VARIANT(scalar, "-O2 no-vec", "o2", 0),
  LOOP_VARIANT(o3, "-O3 autovec", "o3", 0),
#ifdef BENCH_HAVE_LOOPS_AVX2
  LOOP_VARIANT(avx2, "-O3 -mavx2 autovec", "o3_avx2", 1),
#endif
};
#define N_LOOPS (sizeof loops / sizeof loops[0])
/* bench_shape's rows at most: the floors (N_LOOPS - 1 loops and 2 of intrinsics), then per case a
 * tiled floor, a row per backend, the loops and the T5 bias-row loops */
#define MAX_METHODS (N_LOOPS + 1 + C_COUNT * (1 + POSENC_ISA_COUNT + 2 * N_LOOPS))

/* M_LOOP_ROW: T5 through a bias row; M_FLOOR_TILED: the RMW floor in the tile order of its case */
enum { M_FLOOR, M_POSENC, M_LOOP, M_LOOP_ROW, M_FLOOR_TILED };
typedef struct method {
  int kind, cas, isa;     /* cas: a C_* case (not for M_FLOOR); isa: posenc's backend or -1 */
  rmw_add_fn rmw;         /* M_FLOOR, M_FLOOR_TILED */
  const loop_variant *loop;
  unsigned calls;         /* odd calls add the negated bias: the values stay bounded */
  long bits;              /* elements differing from posenc scalar; -1: not compared */
  double med;
  char name[64];
  char id[32];            /* the JSON backend: posenc's ISA, loop_o3, rmw_o3, ... */
} method;

typedef struct state {
  int heads, rows, cols;
  size_t n;                     /* heads * rows * cols */
  float *s, *ref;               /* f32 block, and the reference of the case being checked */
  uint16_t *s16;                /* f16 block */
  float *slopes[2], *table[2];  /* each also negated, for the odd calls */
  int32_t *bucket;              /* bucket of r = -(rows-1) .. cols-1 */
  float *scratch;               /* the bias row of M_LOOP_ROW */
  uint8_t *keep;
  posenc_t5_buckets t5;
  posenc_t5_plan t5_plan;   /* made once, as an engine would */
} state;

static void die(const char *what) {
  fprintf(stderr, "bench_bias: %s failed\n", what);
  exit(1);
}

static void *xalloc(size_t bytes) {
  void *p = bench_alloc64(bytes);
  if (!p) die("memory allocation");
  return p;
}

/* Scores in [-4, 4) from a hash of the index: no NaN, no subnormal. */
static float pattern(size_t i) {
  uint32_t x = (uint32_t)i * 2654435761u;
  x ^= x >> 15;
  return (float)(x & 0xffffu) * (1.0f / 8192.0f) - 4.0f;
}

static void fill(state *s, posenc_dtype dtype) {
  size_t i;
  if (dtype == POSENC_DTYPE_F16)
    for (i = 0; i < s->n; i++) s->s16[i] = posenc_f32_to_f16(pattern(i));
  else
    for (i = 0; i < s->n; i++) s->s[i] = pattern(i);
}

static int run(const method *m, const state *s, unsigned sign) {
  const bias_case *c = &cases[m->cas];
  size_t n = s->n;
  if (m->kind == M_FLOOR) { m->rmw(s->s, n, sign ? -1.0f : 1.0f); return 0; }
  if (m->kind == M_LOOP_ROW) {
    m->loop->t5_row(s->s, s->heads, s->rows, s->cols, s->bucket, s->table[sign], c->causal, s->scratch);
    return 0;
  }
  if (m->kind == M_LOOP) {
    if (c->t5) m->loop->t5(s->s, s->heads, s->rows, s->cols, s->bucket, s->table[sign], c->causal);
    else m->loop->alibi(s->s, s->heads, s->rows, s->cols, s->slopes[sign]);
    return 0;
  }
  {
    const int edge = c->tile > 0 ? c->tile : (s->rows > s->cols ? s->rows : s->cols);
    const size_t es = c->dtype == POSENC_DTYPE_F16 ? 2 : 4;
    posenc_score_tile tile;
    posenc_score_mask mask;
    posenc_table tab;
    int r0, c0, st = 0;
    memset(&tile, 0, sizeof tile);
    memset(&mask, 0, sizeof mask);
    memset(&tab, 0, sizeof tab);
    tile.dtype = c->dtype;
    tile.heads = (size_t)s->heads;
    tile.row_stride = (size_t)s->cols;
    tile.head_stride = (size_t)s->rows * (size_t)s->cols;
    mask.causal = c->causal;
    tab.data = s->table[sign]; tab.dtype = POSENC_DTYPE_F32;
    tab.n_rows = s->t5.num_buckets; tab.dim = (size_t)s->heads;
    for (r0 = 0; r0 < s->rows && st == 0; r0 += edge)
      for (c0 = 0; c0 < s->cols && st == 0; c0 += edge) {
        tile.scores = (c->dtype == POSENC_DTYPE_F16 ? (unsigned char *)s->s16 : (unsigned char *)s->s) +
                      ((size_t)r0 * (size_t)s->cols + (size_t)c0) * es;
        tile.rows = (size_t)(s->rows - r0 < edge ? s->rows - r0 : edge);
        tile.cols = (size_t)(s->cols - c0 < edge ? s->cols - c0 : edge);
        tile.q_pos = r0; tile.k_pos = c0;
        mask.key_keep = c->keep ? s->keep + c0 : NULL;
        if (m->kind == M_FLOOR_TILED) {
          size_t h, i;
          for (h = 0; h < tile.heads; h++)
            for (i = 0; i < tile.rows; i++)
              m->rmw((float *)(void *)tile.scores + h * tile.head_stride + i * tile.row_stride, tile.cols,
                     sign ? -1.0f : 1.0f);
          continue;
        }
        st = c->t5 ? posenc_t5_bias_add(&tile, &mask, &s->t5_plan, &tab, 0)
                   : posenc_alibi_add(&tile, &mask, c->form, 0, s->slopes[sign]);
      }
    return st;
  }
}

static size_t elem_size(const method *m) {
  return m->kind != M_FLOOR && m->kind != M_FLOOR_TILED && cases[m->cas].dtype == POSENC_DTYPE_F16 ? 2 : 4;
}

static void select_isa(const method *m) { posenc_isa_set(m->isa < 0 ? POSENC_ISA_AUTO : (posenc_isa)m->isa); }

/* Runs each method of case c once on the pattern and counts the elements whose bits differ from
 * posenc scalar's (the reference, computed first). */
static void check_case(int c, method *m, size_t nm, state *s) {
  size_t i, e, es = cases[c].dtype == POSENC_DTYPE_F16 ? 2 : 4;
  const unsigned char *out = es == 2 ? (const unsigned char *)s->s16 : (const unsigned char *)s->s;
  method ref;
  memset(&ref, 0, sizeof ref);
  ref.kind = M_POSENC; ref.cas = cases[c].ref; ref.isa = POSENC_ISA_SCALAR;
  fill(s, cases[c].dtype);
  select_isa(&ref);
  if (run(&ref, s, 0) != 0) die(cases[c].name);
  memcpy(s->ref, out, s->n * es);
  for (i = 0; i < nm; i++) {
    long diff = 0;
    if (m[i].kind == M_FLOOR || m[i].kind == M_FLOOR_TILED || m[i].cas != c) continue;
    fill(s, cases[c].dtype);
    select_isa(&m[i]);
    if (run(&m[i], s, 0) != 0) die(m[i].name);
    for (e = 0; e < s->n; e++) diff += memcmp(out + e * es, (const unsigned char *)s->ref + e * es, es) != 0;
    m[i].bits = diff;
  }
  posenc_isa_set(POSENC_ISA_AUTO);
}

static void setup(state *s, const shape *sh) {
  size_t i, nb = (size_t)sh->rows + (size_t)sh->cols - 1;
  int k;
  memset(s, 0, sizeof *s);
  s->heads = sh->heads; s->rows = sh->rows; s->cols = sh->cols;
  s->n = (size_t)sh->heads * (size_t)sh->rows * (size_t)sh->cols;
  s->s = (float *)xalloc(s->n * 4); s->ref = (float *)xalloc(s->n * 4); s->s16 = (uint16_t *)xalloc(s->n * 2);
  s->t5.num_buckets = 32; s->t5.max_distance = 128; s->t5.bidirectional = 1;
  if (posenc_t5_plan_init(&s->t5_plan, &s->t5) != POSENC_OK) die("posenc_t5_plan_init");
  for (k = 0; k < 2; k++) {
    s->slopes[k] = (float *)xalloc((size_t)sh->heads * 4);
    s->table[k] = (float *)xalloc(32 * (size_t)sh->heads * 4);
  }
  if (posenc_alibi_slopes((size_t)sh->heads, 8.0, s->slopes[0]) != POSENC_OK) die("posenc_alibi_slopes");
  for (i = 0; i < 32 * (size_t)sh->heads; i++) s->table[0][i] = pattern(i + 7) * 0.125f;
  for (i = 0; i < (size_t)sh->heads; i++) s->slopes[1][i] = -s->slopes[0][i];
  for (i = 0; i < 32 * (size_t)sh->heads; i++) s->table[1][i] = -s->table[0][i];
  s->bucket = (int32_t *)xalloc(nb * 4);
  s->scratch = (float *)xalloc(nb * 4);
  if (posenc_t5_bucket_range(&s->t5, -(sh->rows - 1), nb, s->bucket) != POSENC_OK) die("posenc_t5_bucket_range");
  s->keep = (uint8_t *)xalloc((size_t)sh->cols);
  for (i = 0; i < (size_t)sh->cols; i++) s->keep[i] = i < (size_t)sh->cols - (size_t)sh->cols / 8;
}

static void teardown(state *s) {
  bench_free64(s->s); bench_free64(s->ref); bench_free64(s->s16); bench_free64(s->bucket);
  bench_free64(s->scratch); bench_free64(s->keep);
  bench_free64(s->slopes[0]); bench_free64(s->slopes[1]); bench_free64(s->table[0]); bench_free64(s->table[1]);
}

/* Round-robin rounds of reps calls each (after a warm-up call that must succeed); m[i].med gets
 * the median time per call. */
static void time_methods(method *m, size_t nm, state *s, int rounds, int reps) {
  double *times = (double *)malloc(nm * (size_t)rounds * sizeof *times);
  size_t i;
  int k, r;
  if (!times) die("memory allocation");
  for (i = 0; i < nm; i++) {
    select_isa(&m[i]);
    if (run(&m[i], s, m[i].calls++ & 1u) != 0) die(m[i].name);
  }
  for (k = 0; k < rounds; k++)
    for (i = 0; i < nm; i++) {
      double t0;
      select_isa(&m[i]);
      t0 = now_s();
      for (r = 0; r < reps; r++) run(&m[i], s, m[i].calls++ & 1u);
      times[i * (size_t)rounds + (size_t)k] = (now_s() - t0) / reps;
    }
  posenc_isa_set(POSENC_ISA_AUTO);
  for (i = 0; i < nm; i++) {
    qsort(times + i * (size_t)rounds, (size_t)rounds, sizeof *times, cmp_double);
    m[i].med = times[i * (size_t)rounds + (size_t)rounds / 2];
  }
  free(times);
}

/* The fastest posenc backend on case c (index into m), or -1. */
static int best_posenc(const method *m, size_t nm, int c) {
  int best = -1;
  size_t i;
  for (i = 0; i < nm; i++)
    if (m[i].kind == M_POSENC && m[i].cas == c && (best < 0 || m[i].med < m[best].med)) best = (int)i;
  return best;
}

static void json_methods(bench_json *j, const method *m, size_t nm, const state *s, long reps) {
  bench_rec rec[MAX_METHODS];
  char size[64];
  size_t i;
  for (i = 0; i < nm; i++) {
    bench_rec x;
    x.kernel = m[i].kind == M_FLOOR ? "rmw_add_f32" : m[i].kind == M_FLOOR_TILED ? "rmw_add_f32_tiled"
                                                                              : cases[m[i].cas].id;
    x.backend = m[i].id;
    x.impl = m[i].kind == M_POSENC ? "posenc" : m[i].kind == M_FLOOR || m[i].kind == M_FLOOR_TILED ? "floor" : "loop";
    x.seconds = m[i].med;
    x.elems = (double)s->n;
    x.bytes = s->n > 1 ? 2.0 * (double)s->n * (double)elem_size(&m[i]) : 0.0; /* a 1 x 1 call moves no bytes that count */
    x.reps = reps;
    rec[i] = x;
  }
  snprintf(size, sizeof size, "heads=%d,rows=%d,cols=%d", s->heads, s->rows, s->cols);
  bench_json_group(j, size, "score", "median", rec, nm);
}

/* 1 if a row's bits differ from posenc scalar's. */
static int bench_shape(const shape *sh, int rounds, int targets, bench_json *j) {
  state s;
  method m[MAX_METHODS];
  size_t nm = 0, i, l;
  double floor_bw = 0.0, block_mib;
  int c, isa, floor_best = -1, bad = 0;
  setup(&s, sh);
  memset(m, 0, sizeof m);

#define ADD(kind_, cas_, isa_, id_, ...) do { m[nm].kind = (kind_); m[nm].cas = (cas_); m[nm].isa = (isa_); \
    m[nm].bits = -1; snprintf(m[nm].id, sizeof m[nm].id, "%s", id_); \
    snprintf(m[nm].name, sizeof m[nm].name, __VA_ARGS__); nm++; } while (0)
  for (l = 1; l < N_LOOPS; l++) { /* the no-vec loop is no floor */
    if (loops[l].avx2 && !cpu_has_avx2()) continue;
    ADD(M_FLOOR, 0, -1, "rmw", "RMW floor, C %s", loops[l].name);
    snprintf(m[nm - 1].id, sizeof m[nm - 1].id, "rmw_%s", loops[l].id);
    m[nm - 1].rmw = loops[l].rmw;
  }
#ifdef BENCH_HAVE_LOOPS_AVX2
  if (cpu_has_avx2()) {
    ADD(M_FLOOR, 0, -1, "rmw_avx2_intrin", "RMW floor, AVX2 intrinsics");
    m[nm - 1].rmw = rmw_add_intrin_avx2;
    ADD(M_FLOOR, 0, -1, "rmw_avx2_nt", "RMW floor, AVX2 non-temporal");
    m[nm - 1].rmw = rmw_add_intrin_avx2_nt;
  }
#endif
  for (c = 0; c < C_COUNT; c++) {
    if (cases[c].tile && !cases[c - 1].tile) { /* the first tiled case: the floor in its tile order */
      l = loops[N_LOOPS - 1].avx2 && !cpu_has_avx2() ? N_LOOPS - 2 : N_LOOPS - 1;
      ADD(M_FLOOR_TILED, c, -1, "", "RMW floor, %d-tiles, C %s", cases[c].tile, loops[l].name);
      snprintf(m[nm - 1].id, sizeof m[nm - 1].id, "rmw_%s_tiles%d", loops[l].id, cases[c].tile);
      m[nm - 1].rmw = loops[l].rmw;
    }
    BK_EACH_USABLE(isa)
      ADD(M_POSENC, c, isa, posenc_isa_name((posenc_isa)isa), "posenc %s %s", cases[c].name,
          posenc_isa_name((posenc_isa)isa));
    if (c != C_ALIBI_CAUSAL && c != C_T5 && c != C_T5_CAUSAL) continue; /* the cases with plain loops */
    for (l = 0; l < N_LOOPS; l++) {
      if (loops[l].avx2 && !cpu_has_avx2()) continue;
      ADD(M_LOOP, c, -1, "", "loop %s %s", cases[c].name, loops[l].name);
      snprintf(m[nm - 1].id, sizeof m[nm - 1].id, "loop_%s", loops[l].id);
      m[nm - 1].loop = &loops[l];
    }
    for (l = 1; l < N_LOOPS && cases[c].t5; l++) {
      if (loops[l].avx2 && !cpu_has_avx2()) continue;
      ADD(M_LOOP_ROW, c, -1, "", "loop %s bias row %s", cases[c].name, loops[l].name);
      snprintf(m[nm - 1].id, sizeof m[nm - 1].id, "loop_row_%s", loops[l].id);
      m[nm - 1].loop = &loops[l];
    }
  }
#undef ADD

  for (c = 0; c < C_COUNT; c++) check_case(c, m, nm, &s);

  fill(&s, POSENC_DTYPE_F32);
  fill(&s, POSENC_DTYPE_F16);
  time_methods(m, nm, &s, rounds, sh->reps);
  for (i = 0; i < nm; i++)
    if (m[i].kind == M_FLOOR && 2.0 * (double)s.n * 4.0 / m[i].med > floor_bw) {
      floor_bw = 2.0 * (double)s.n * 4.0 / m[i].med;
      floor_best = (int)i;
    }
  block_mib = (double)s.n * 4.0 / 1048576.0;
  printf("\n%s: %d head%s x %d q x %d k f32 (%.1f MiB; f16 %.1f MiB), q_pos = k_pos = 0, median of %d rounds%s\n",
         sh->what, s.heads, s.heads > 1 ? "s" : "", s.rows, s.cols, block_mib, block_mib / 2.0, rounds,
         sh->reps > 1 ? " (time per call)" : "");
  printf("  %-50s %10s %9s %10s  %s\n", "method", "ms", "GB/s", "% of RMW", "bits vs posenc scalar");
  for (i = 0; i < nm; i++) {
    double bw = 2.0 * (double)s.n * (double)elem_size(&m[i]) / m[i].med;
    char bits[32];
    if (m[i].bits < 0) snprintf(bits, sizeof bits, "-");
    else if (m[i].bits == 0) snprintf(bits, sizeof bits, "identical");
    else snprintf(bits, sizeof bits, "%ld differ", m[i].bits), bad = 1;
    printf("  %-50s %10.4f %9.2f %9.1f%%  %s\n", m[i].name, m[i].med * 1e3, bw * 1e-9, 100.0 * bw / floor_bw, bits);
  }
  printf("  RMW floor: %.2f GB/s (%s), bytes = read + write of the block\n", floor_bw * 1e-9, m[floor_best].name);
  json_methods(j, m, nm, &s, (long)rounds * sh->reps);
  if (targets) {
    static const int target_cases[] = {C_ALIBI_CAUSAL, C_T5, C_T5_CAUSAL};
    for (l = 0; l < sizeof target_cases / sizeof target_cases[0]; l++) {
      int b = best_posenc(m, nm, target_cases[l]);
      double r = 2.0 * (double)s.n * 4.0 / m[b].med / floor_bw;
      printf("  target: %s (%s) %.1f%% of the RMW floor, want >= 90%%: %s\n", cases[target_cases[l]].name,
             m[b].name, 100.0 * r, r >= 0.90 ? "PASS" : "MISS");
    }
  }
  for (i = 0; i < nm; i++) /* the tiled cases against the floor in the same tile order */
    if (m[i].kind == M_FLOOR_TILED)
      for (c = 0; c < C_COUNT; c++) {
        int b = cases[c].tile ? best_posenc(m, nm, c) : -1;
        if (b >= 0)
          printf("  tiles: %s (%s) %.1f%% of the tiled RMW floor (%.2f GB/s)\n", cases[c].name, m[b].name,
                 100.0 * m[i].med / m[b].med, 2.0 * (double)s.n * 4.0 / m[i].med * 1e-9);
      }
  teardown(&s);
  return bad;
}

/* What a call costs beyond its bytes: posenc on a 1 x 1 x 1 tile (validation, setup such as T5's
 * bucket thresholds, dispatch), microseconds per call, one column per backend. */
static void bench_fixed(int rounds, bench_json *j) {
  static const shape one = {1, 1, 1, 64, "fixed cost"};
  state s;
  method m[C_COUNT * POSENC_ISA_COUNT];
  size_t nm = 0, i;
  int c, isa;
  setup(&s, &one);
  memset(m, 0, sizeof m);
  for (c = 0; c < C_COUNT; c++) {
    if (cases[c].tile) continue; /* a tiled call is one call here */
    BK_EACH_USABLE(isa) {
      m[nm].kind = M_POSENC; m[nm].cas = c; m[nm].isa = isa;
      snprintf(m[nm].name, sizeof m[nm].name, "posenc %s %s", cases[c].name, posenc_isa_name((posenc_isa)isa));
      snprintf(m[nm].id, sizeof m[nm].id, "%s", posenc_isa_name((posenc_isa)isa));
      nm++;
    }
  }
  fill(&s, POSENC_DTYPE_F32);
  fill(&s, POSENC_DTYPE_F16);
  time_methods(m, nm, &s, rounds, one.reps);
  printf("\n%s: a call on a 1 x 1 x 1 tile, us per call, median of %d rounds of %d calls\n  %-24s", one.what,
         rounds, one.reps, "case");
  for (i = 0; i < nm && m[i].cas == 0; i++) printf(" %9s", posenc_isa_name((posenc_isa)m[i].isa));
  for (i = 0; i < nm; i++) {
    if (i == 0 || m[i].cas != m[i - 1].cas) printf("\n  %-24s", cases[m[i].cas].name);
    printf(" %9.3f", m[i].med * 1e6);
  }
  printf("\n");
  json_methods(j, m, nm, &s, (long)rounds * one.reps);
  teardown(&s);
}

int main(int argc, char **argv) {
  static const shape shapes[2] = {{1, 4096, 4096, 1, "DRAM"}, {8, 256, 256, 16, "cache"}};
  /* smoke: two 128-tiles and a rest each way, and a small multi-head block; heads * rows * cols
   * stays a multiple of 32 (rmw_add_intrin_avx2) */
  static const shape smoke_shapes[2] = {{1, 288, 260, 1, "smoke"}, {3, 24, 40, 1, "smoke"}};
  const shape *sh = shapes;
  int rounds = 15, rc = 0;
  bench_cli cli;
  bench_json json;
  if (bench_rounds_args("bench_bias", argc, argv, &cli, &rounds) != 0) return 2;
  if (cli.smoke) sh = smoke_shapes;
  if (bench_json_open(&json, "bias", &cli) != 0) return 1;
  bench_banner("bench_bias", &cli);
  rc |= bench_shape(&sh[0], rounds, !cli.smoke, &json);
  rc |= bench_shape(&sh[1], cli.smoke ? 1 : rounds * 4, 0, &json);
  bench_fixed(rounds, &json);
  return bench_json_close(&json) != 0 || rc;
}
