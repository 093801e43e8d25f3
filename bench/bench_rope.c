/* bench_rope.c - posenc's RoPE against plain C loops, libm caches and a read-modify-write floor.
 *
 * One run measures, single-threaded, for every posenc backend this build has and this CPU runs:
 *   cache   posenc_rope_cache_table (4096 rows, d = 128, f32 [cos | sin]) against the HF recipe
 *           (libm cosf/sinf of float angles) and double cos/sin; max |diff| against the latter
 *   prefill in-place rotation of Q = 4096 tokens x 32 heads x 128 (f32: 64 MiB), NeoX and GPT-J,
 *           cached and on the fly, against the same loop in plain C (scalar, -O3 and -O3 -mavx2,
 *           all reading the same f32 [cos | sin] cache) and against an in-place read-modify-write
 *           of the same bytes (x[i] *= a), the memory floor (its fastest row: autovectorized, AVX2
 *           intrinsics, or those asking for their lines a fixed 4 KiB ahead; posenc asks for the
 *           next token's, 16 KiB ahead here)
 *   16-bit  the NeoX prefill in f16 and bf16 storage (32 MiB), with a cache in the tensor's
 *           dtype (HF, vLLM), with an f32 cache, and on the fly
 *   decode  1 token x 32 heads (Q) and 32 + 8 heads (Q, K), cached (8192-row f32 cache) and on
 *           the fly, at positions 4000..4031 in turn; median ns per call; and Q on the fly with
 *           the step's rows made once for 32 calls (an engine's layers), ns per call
 *   proto   (x86 with AVX2) posenc's AVX2 rotation rewritten in other loop orders and, for bf16,
 *           with another conversion (bench/rope_proto.c): what the kernel's choices cost
 * and ends with the issue's targets, each with its measured value and PASS or MISS.
 * Before timing, every backend, cached and on the fly, the plain loops and the prototypes are
 * checked to give the same bits. Bandwidths count the bytes of the rotated tensor read and
 * written (the cache rows, 1/64 of that, are not counted). Methods of a table run round-robin
 * (one timed run of each per round), so that a slow phase of the machine hits them alike; each
 * gets about the same share of the table's time (a slow scalar row fewer rounds), at least 5
 * rounds; best and median are kept. Prefill runs start cold (see scrub_caches); decode runs
 * find their data in cache, as a decode step does. This is a benchmark, not a test: it never fails because of
 * a time (only because a call failed or results differ).
 *
 * --smoke runs the same tables on a few tokens (one round each; timings meaningless): what CI
 * runs, natively and under qemu.
 *
 * Usage: bench_rope [--quick] [--rounds K] [--smoke] [--json FILE] [--label NAME]
 */
#define _GNU_SOURCE /* sysconf(_SC_NPROCESSORS_ONLN); implies POSIX 2008 (clock_gettime) */

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "posenc.h"
#include "bench_util.h"
#include "bench_json.h"
#include "rope_loops.h"
#ifdef BENCH_HAVE_PROTO
#  include "rope_proto.h"
#endif


#define BENCH_DIM 128
#define BENCH_HALF (BENCH_DIM / 2)
#define BENCH_BASE 10000.0
#define BENCH_HEADS 32            /* Q heads */
#define BENCH_KV_HEADS 8          /* K heads (GQA) */
#define BENCH_START 0
/* A prefill in calls of this many tokens (an engine's micro-batches): 2 MiB of f32 a call at 32
 * heads of 128, under POSENC_PREFETCH_MIN_BYTES, so the rotation runs without its prefetches */
#define BENCH_CHUNK_TOKENS 128
#define BENCH_DECODE_SPAN 32
#define BENCH_DECODE_BATCH 100    /* decode calls per timed run */
#define BENCH_LAYERS 32           /* decode: the layers that share a step's rows (VAR_STEP_ROWS) */
#define BENCH_PREFILL_BUDGET_S 2.0 /* timed seconds per prefill table (rounds from the warm-up) */
#define BENCH_CACHE_BUDGET_S 1.0
#define BENCH_DECODE_BUDGET_S 2.0
#define BENCH_MIN_ROUNDS 5
#define BENCH_MAX_ROUNDS 2000
#define BENCH_MAX_METHODS (8 + 4 * POSENC_ISA_COUNT) /* the peers, and up to 4 rows per backend */
#define BENCH_CHECK_TOKENS 40     /* correctness checks: crosses an anchor and an on-the-fly block */
#define BENCH_CHECK_START 5

/* Targets (the issue's). */
#define TARGET_FLOOR_FRACTION 0.90
#define TARGET_DECODE_VS_LOOP 1.10  /* decode Q cached: at most this times the plain -O3 loop's time */
#define TARGET_OTF_RATIO 1.20       /* prefill: on the fly / cached time */
#define TARGET_DECODE_OTF_RATIO 1.50 /* decode Q: on the fly / cached time */
#define TARGET_HALF_RATE 1.60
#define ISSUE_LOOP_DECODE_NS 292.0 /* the issue author's plain -O3 loop, their machine */
#define ISSUE_GGML_DECODE_NS 3050.0

/* The sizes: full, or --smoke's (a few tokens; the cache still covers the check positions). */
typedef struct bench_sizes {
  int tokens;         /* prefill tokens, positions BENCH_START.. */
  int cache_rows;
  int decode_pos;     /* decode positions: decode_pos + (call % BENCH_DECODE_SPAN) */
  size_t scrub_bytes; /* read before each cold run (scrub_caches) */
} bench_sizes;
static const bench_sizes full_sizes = {4096, 8192, 4000, (size_t)64 << 20};
static const bench_sizes smoke_sizes = {24, 96, 40, (size_t)64 << 10};
static bench_sizes sz;

#define BENCH_PREFILL_ELEMS ((size_t)sz.tokens * BENCH_HEADS * BENCH_DIM)

/* ---- options -------------------------------------------------------------------------------- */
typedef struct bench_opts {
  int quick;
  long rounds;      /* 0: from the budgets */
  bench_cli cli;
  bench_json *json; /* where the tables go, besides stdout */
} bench_opts;

static void usage(FILE *f) {
  fprintf(f, "usage: bench_rope [--quick] [--rounds K] [--smoke] [--json FILE] [--label NAME]\n"
             "  --quick        1 timed round per table\n"
             "  --rounds K     exactly K timed rounds per table, 1 <= K <= %d\n" BENCH_CLI_USAGE,
          BENCH_MAX_ROUNDS);
}

static int parse_args(int argc, char **argv, bench_opts *o) {
  int a;
  memset(o, 0, sizeof *o);
  for (a = 1; a < argc; a++) {
    int shared = bench_cli_arg(&o->cli, argc, argv, &a);
    if (shared > 0) continue;
    if (shared < 0) goto bad;
    if (strcmp(argv[a], "--quick") == 0) {
      o->quick = 1;
    } else if (strcmp(argv[a], "--rounds") == 0 && argv[a + 1] && argv[a + 1][0] >= '0' &&
               argv[a + 1][0] <= '9') {
      char *end;
      errno = 0;
      o->rounds = strtol(argv[++a], &end, 10);
      if (errno || *end || o->rounds < 1 || o->rounds > BENCH_MAX_ROUNDS) goto bad;
    } else if (strcmp(argv[a], "--help") == 0 || strcmp(argv[a], "-h") == 0) {
      usage(stdout);
      exit(0);
    } else {
      goto bad;
    }
  }
  if (o->cli.smoke) o->quick = 1;
  return 0;
bad:
  fprintf(stderr, "bench_rope: bad argument '%s'\n", argv[a < argc ? a : argc - 1]);
  usage(stderr);
  return -1;
}

/* ---- helpers -------------------------------------------------------------------------------- */



static void *xalloc(size_t bytes) {
  void *p = bench_alloc64(bytes);
  if (!p) {
    fprintf(stderr, "bench_rope: cannot allocate %zu bytes\n", bytes);
    exit(1);
  }
  memset(p, 0, bytes); /* touch every page before anything is timed */
  return p;
}

/* Deterministic values in [-1, 1). */
static void fill_random(float *x, size_t n, uint32_t seed) {
  size_t i;
  uint32_t s = seed * 2654435761u + 12345u;
  for (i = 0; i < n; i++) {
    s ^= s << 13; s ^= s >> 17; s ^= s << 5;
    x[i] = (float)(s >> 8) * (2.0f / 16777216.0f) - 1.0f;
  }
}

static void to_half(uint16_t *dst, const float *src, size_t n, posenc_dtype dtype) {
  size_t i;
  for (i = 0; i < n; i++)
    dst[i] = dtype == POSENC_DTYPE_F16 ? posenc_f32_to_f16(src[i]) : posenc_f32_to_bf16(src[i]);
}

/* FNV-1a over bytes: enough to tell whether two outputs have the same bits. */
static uint64_t digest(const void *data, size_t bytes) {
  const unsigned char *b = data;
  uint64_t h = 14695981039346656037u;
  size_t k;
  for (k = 0; k < bytes; k++) h = (h ^ b[k]) * 1099511628211u;
  return h;
}

static posenc_rope_tensor make_tensor(void *data, posenc_dtype dtype, size_t heads) {
  posenc_rope_tensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.dtype = dtype;
  t.heads = heads;
  return t;
}

/* ---- methods -------------------------------------------------------------------------------- */
typedef enum bench_role { ROLE_POSENC, ROLE_LOOP, ROLE_FLOOR, ROLE_PEER, ROLE_PROTO } bench_role;

typedef struct bench_method bench_method;
typedef int (*bench_run_fn)(const bench_method *m, unsigned long run); /* 0 on success */

/* posenc_rope_apply's arguments; pos.start is advanced per call in decode runs */
typedef struct rope_call {
  const posenc_rope *rope;
  const posenc_rope_cache_view *cache; /* NULL: on the fly */
  posenc_rope_positions pos;
  posenc_rope_tensor q, k;
  int has_k;
} rope_call;

struct bench_method {
  char name[40];
  const char *id;        /* the JSON backend: posenc's ISA, or the loop's, floor's or peer's id */
  bench_run_fn run;
  bench_role role;
  int isa;               /* posenc backend selected before each timed run; -1: not posenc */
  int needs_avx2;        /* skipped on a CPU without AVX2 */
  int is_baseline;       /* the row the "vs" column divides by */
  int variant;           /* bench_variant: what the targets look up */
  unsigned calls;        /* calls per run (decode batches); 0 means 1 */
  int chunk;             /* prefill: tokens per call (BENCH_CHUNK_TOKENS); 0: one call */
  rope_call rc;          /* ROLE_POSENC */
  rope_loop_fn loop;     /* ROLE_LOOP: also the cache (rc.cache) and tensors (rc.q, rc.k) */
  rmw_loop_fn rmw;       /* ROLE_FLOOR */
  int order;             /* ROLE_PROTO: proto_order */
  float *buf;            /* ROLE_FLOOR / ROLE_PEER: the buffer */
  size_t n;              /* ROLE_FLOOR: floats; ROLE_PEER: rows */
  double bytes;          /* per call, for GB/s */
  double elems;          /* tensor elements per call */
};

typedef struct bench_result {
  int status;
  double best_s, median_s; /* per call */
  long rounds;
} bench_result;

static int decode_pos(unsigned long run, unsigned c) {
  return sz.decode_pos + (int)((run * BENCH_DECODE_BATCH + c) % BENCH_DECODE_SPAN);
}

/* The prefill of m->rc (Q alone: the prefill tables have no K) in calls of m->chunk tokens, each
 * at its tokens' rows of the tensor. */
static int run_posenc_chunks(const bench_method *m) {
  rope_call rc = m->rc;
  const size_t token_bytes = rc.q.heads * BENCH_DIM * posenc_dtype_size(rc.q.dtype);
  size_t t0;
  for (t0 = 0; t0 < m->rc.pos.tokens; t0 += (size_t)m->chunk) {
    posenc_status st;
    rc.pos.tokens = m->rc.pos.tokens - t0 < (size_t)m->chunk ? m->rc.pos.tokens - t0 : (size_t)m->chunk;
    rc.pos.start = m->rc.pos.start + (int32_t)t0;
    rc.q.data = (unsigned char *)m->rc.q.data + t0 * token_bytes;
    st = posenc_rope_apply(rc.rope, rc.cache, &rc.pos, &rc.q, NULL, POSENC_ROPE_FORWARD);
    if (st != POSENC_OK) return (int)st;
  }
  return 0;
}

static int run_posenc(const bench_method *m, unsigned long run) {
  unsigned c, calls = m->calls ? m->calls : 1;
  rope_call rc = m->rc;
  if (m->chunk) return run_posenc_chunks(m);
  for (c = 0; c < calls; c++) {
    posenc_status st;
    if (m->calls) rc.pos.start = decode_pos(run, c);
    st = posenc_rope_apply(rc.rope, rc.cache, &rc.pos, &rc.q, rc.has_k ? &rc.k : NULL,
                           POSENC_ROPE_FORWARD);
    if (st != POSENC_OK) return (int)st;
  }
  return 0;
}

/* A decode step's rows made once (posenc_rope_cache_rows, one row) and used by BENCH_LAYERS calls,
 * a layer each, as a one-row cache at id 0 (README, "Decode on the fly across layers"). m->calls
 * is a multiple of BENCH_LAYERS: ns per call is per layer, the rows' share included. */
static int run_step_rows(const bench_method *m, unsigned long run) {
  static const int32_t row_id = 0;
  float row[2 * BENCH_HALF];
  unsigned c, l;
  const posenc_rope_positions at = {1, 1, &row_id, 0};
  posenc_rope_cache_view step;
  step.data = row; step.n_rows = 1;
  step.spec.layout = POSENC_ROPE_CACHE_HALF; step.spec.dtype = POSENC_DTYPE_F32; step.spec.row_stride = 0;
  for (c = 0; c < m->calls; c += BENCH_LAYERS) {
    const int32_t p = decode_pos(run, c / BENCH_LAYERS);
    posenc_status st = posenc_rope_cache_rows(m->rc.rope, &step.spec, &p, 1, row, sizeof row);
    for (l = 0; st == POSENC_OK && l < BENCH_LAYERS; l++)
      st = posenc_rope_apply(m->rc.rope, &step, &at, &m->rc.q, NULL, POSENC_ROPE_FORWARD);
    if (st != POSENC_OK) return (int)st;
  }
  return 0;
}

static int run_loop(const bench_method *m, unsigned long run) {
  unsigned c, calls = m->calls ? m->calls : 1;
  const float *cache = (const float *)m->rc.cache->data;
  for (c = 0; c < calls; c++) {
    int32_t start = m->calls ? decode_pos(run, c) : m->rc.pos.start;
    m->loop((float *)m->rc.q.data, m->rc.pos.tokens, m->rc.q.heads, BENCH_DIM, cache, start);
    if (m->rc.has_k)
      m->loop((float *)m->rc.k.data, m->rc.pos.tokens, m->rc.k.heads, BENCH_DIM, cache, start);
  }
  return 0;
}

#ifdef BENCH_HAVE_PROTO
static int run_proto(const bench_method *m, unsigned long run) {
  unsigned c, calls = m->calls ? m->calls : 1;
  const float *cache = (const float *)m->rc.cache->data;
  int gptj = m->rc.rope->config.style == POSENC_ROPE_GPTJ;
  for (c = 0; c < calls; c++) {
    int32_t start = m->calls ? decode_pos(run, c) : m->rc.pos.start;
    proto_rotate_tokens((float *)m->rc.q.data, m->rc.pos.tokens, m->rc.q.heads, BENCH_DIM, cache,
                        start, gptj, (proto_order)m->order);
  }
  return 0;
}
#endif

#ifdef BENCH_HAVE_PROTO
static int run_proto_half(const bench_method *m, unsigned long run) {
  (void)run;
  proto_rotate_tokens_half((uint16_t *)m->rc.q.data, m->rc.pos.tokens, m->rc.q.heads, BENCH_DIM,
                           (const float *)m->rc.cache->data, m->rc.pos.start, (proto_conv)m->order);
  return 0;
}
#endif

static int run_floor(const bench_method *m, unsigned long run) {
  m->rmw(m->buf, m->n, (run & 1) ? -1.0f : 1.0f); /* |x| stays as it is */
  return 0;
}

/* ---- timing: warm up, then rounds of one timed run per method ---------------------------------- */
static long rounds_for(double warm_s, double budget_s, const bench_opts *o) {
  double k;
  if (o->rounds > 0) return o->rounds;
  if (o->quick) return 1;
  k = ceil(budget_s / (warm_s > 1e-9 ? warm_s : 1e-9));
  if (k < BENCH_MIN_ROUNDS) return BENCH_MIN_ROUNDS;
  return k > BENCH_MAX_ROUNDS ? BENCH_MAX_ROUNDS : (long)k;
}

static int select_isa(const bench_method *m) {
  return m->isa >= 0 ? (int)posenc_isa_set((posenc_isa)m->isa) : 0;
}

/* Cold runs: reading a buffer of 2x the L3 (and more than any tensor here) before each timed
 * prefill run leaves none of the tensor in cache and the previous run's dirty lines written back,
 * whatever ran before (a 32 MiB 16-bit tensor would otherwise stay partly in a 32 MiB L3). */
static const unsigned char *bench_scrub_buf;
static volatile unsigned bench_scrub_sink;

static void scrub_caches(void) {
  size_t k;
  unsigned acc = 0;
  for (k = 0; k < sz.scrub_bytes; k += 64) acc += bench_scrub_buf[k];
  bench_scrub_sink = acc;
}

static void time_methods(const bench_method *m, size_t count, double budget_s, int cold,
                         const bench_opts *o, bench_result *r) {
  double *times;
  long k, max_rounds = 0;
  size_t i;
  unsigned long run = 0;
  memset(r, 0, count * sizeof *r);
  /* warm-up: pages, caches, clocks; two runs, the second timed: it sizes the method's rounds, so
   * that every method gets about the same share of the budget (slow scalar rows fewer rounds) */
  for (i = 0; i < count; i++) {
    double t0;
    if ((r[i].status = select_isa(&m[i])) != 0 || (r[i].status = m[i].run(&m[i], run++)) != 0)
      continue;
    if (cold) scrub_caches();
    t0 = now_s();
    r[i].status = m[i].run(&m[i], run++);
    r[i].rounds = rounds_for(now_s() - t0, budget_s / (double)count, o);
    if (r[i].rounds > max_rounds) max_rounds = r[i].rounds;
  }
  times = malloc(((size_t)max_rounds + 1) * count * sizeof *times);
  if (!times) { fprintf(stderr, "bench_rope: out of memory\n"); exit(1); }
  for (k = 0; k < max_rounds; k++) /* round-robin: one timed run of each method still running */
    for (i = 0; i < count; i++) {
      double t0;
      if (r[i].status != 0 || k >= r[i].rounds) continue;
      if ((r[i].status = select_isa(&m[i])) != 0) continue;
      if (cold) scrub_caches();
      t0 = now_s();
      r[i].status = m[i].run(&m[i], run++);
      times[i * (size_t)max_rounds + (size_t)k] = now_s() - t0;
    }
  for (i = 0; i < count; i++) {
    double *t = times + i * (size_t)max_rounds, calls = m[i].calls ? m[i].calls : 1;
    if (r[i].status != 0) continue;
    qsort(t, (size_t)r[i].rounds, sizeof *t, cmp_double);
    r[i].best_s = t[0] / calls;
    r[i].median_s = t[r[i].rounds / 2] / calls;
  }
  free(times);
  posenc_isa_set(POSENC_ISA_AUTO);
}

/* Compact the method list to what this CPU runs. */
static size_t runnable(bench_method *m, size_t count) {
  size_t i, n = 0;
  for (i = 0; i < count; i++)
    if (!m[i].needs_avx2 || cpu_has_avx2()) m[n++] = m[i];
  return n;
}

/* ---- the shared state ----------------------------------------------------------------------- */
typedef struct bench_state {
  POSENC_ROPE_STORAGE(BENCH_DIM) neox_st, gptj_st;
  posenc_rope *neox, *gptj;          /* &neox_st.rope, &gptj_st.rope */
  float *cache_f32;                 /* sz.cache_rows x [cos | sin], f32 */
  uint16_t *cache_f16, *cache_bf16;
  posenc_rope_cache_view view_f32, view_f16, view_bf16;
  float *x;                         /* prefill tensor, f32 (also the floor's buffer) */
  uint16_t *xh;                     /* prefill tensor, 16-bit */
  uint16_t *xh2;                    /* a second one (prototypes: f16 beside bf16) */
  float *dq, *dk;                   /* decode Q and K */
  unsigned char *scrub;             /* read before each timed prefill run (scrub_caches) */
} bench_state;

static posenc_rope_cache_view make_view(const void *data, posenc_dtype dtype) {
  posenc_rope_cache_view v;
  memset(&v, 0, sizeof v);
  v.data = data;
  v.n_rows = sz.cache_rows;
  v.spec.layout = POSENC_ROPE_CACHE_HALF;
  v.spec.dtype = dtype;
  return v;
}

static int state_init(bench_state *s) {
  posenc_rope_config cfg = posenc_rope_default(BENCH_DIM);
  posenc_rope_cache_spec spec = {POSENC_ROPE_CACHE_HALF, POSENC_DTYPE_F32, 0};
  size_t rows_elems = (size_t)sz.cache_rows * BENCH_DIM;
  memset(s, 0, sizeof *s);
  s->neox = &s->neox_st.rope;
  s->gptj = &s->gptj_st.rope;
  if (posenc_rope_init(s->neox, sizeof s->neox_st, &cfg) != POSENC_OK) return -1;
  cfg.style = POSENC_ROPE_GPTJ;
  if (posenc_rope_init(s->gptj, sizeof s->gptj_st, &cfg) != POSENC_OK) return -1;
  s->cache_f32 = xalloc(rows_elems * 4);
  s->cache_f16 = xalloc(rows_elems * 2);
  s->cache_bf16 = xalloc(rows_elems * 2);
  if (posenc_rope_cache_table(s->neox, &spec, 0, sz.cache_rows, s->cache_f32, rows_elems * 4))
    return -1;
  spec.dtype = POSENC_DTYPE_F16;
  if (posenc_rope_cache_table(s->neox, &spec, 0, sz.cache_rows, s->cache_f16, rows_elems * 2))
    return -1;
  spec.dtype = POSENC_DTYPE_BF16;
  if (posenc_rope_cache_table(s->neox, &spec, 0, sz.cache_rows, s->cache_bf16, rows_elems * 2))
    return -1;
  s->view_f32 = make_view(s->cache_f32, POSENC_DTYPE_F32);
  s->view_f16 = make_view(s->cache_f16, POSENC_DTYPE_F16);
  s->view_bf16 = make_view(s->cache_bf16, POSENC_DTYPE_BF16);
  s->x = xalloc(BENCH_PREFILL_ELEMS * 4);
  s->xh = xalloc(BENCH_PREFILL_ELEMS * 2);
#ifdef BENCH_HAVE_PROTO
  s->xh2 = xalloc(BENCH_PREFILL_ELEMS * 2);
#endif
  s->scrub = xalloc(sz.scrub_bytes);
  bench_scrub_buf = s->scrub;
  s->dq = xalloc((size_t)BENCH_HEADS * BENCH_DIM * 4);
  s->dk = xalloc((size_t)BENCH_KV_HEADS * BENCH_DIM * 4);
  fill_random(s->x, BENCH_PREFILL_ELEMS, 1);
  fill_random(s->dq, (size_t)BENCH_HEADS * BENCH_DIM, 2);
  fill_random(s->dk, (size_t)BENCH_KV_HEADS * BENCH_DIM, 3);
  return 0;
}

static void state_free(bench_state *s) {
  bench_free64(s->cache_f32); bench_free64(s->cache_f16); bench_free64(s->cache_bf16);
  bench_free64(s->x); bench_free64(s->xh); bench_free64(s->xh2); bench_free64(s->dq); bench_free64(s->dk);
  bench_free64(s->scrub);
}

/* ---- correctness: every backend, cached and on the fly, and the plain loops agree ------------ */
typedef struct check_case {
  posenc_rope_style style;
  posenc_dtype dtype;
  int cache;   /* 0: on the fly; 1: f32 cache; 2: cache in the tensor's dtype; 3: the positions'
                * rows made by posenc_rope_cache_rows, ids their indices (run_step_rows) */
} check_case;

/* Rotates a fresh copy of the check tensors (Q, K) with the active backend; digest of both. */
static int check_run(const bench_state *s, const check_case *cc, uint64_t *dig) {
  enum { QN = BENCH_CHECK_TOKENS * 4 * BENCH_DIM, KN = BENCH_CHECK_TOKENS * 2 * BENCH_DIM };
  float qf[QN], kf[KN];
  uint16_t qh[QN], kh[KN];
  size_t es = posenc_dtype_size(cc->dtype);
  void *qd = cc->dtype == POSENC_DTYPE_F32 ? (void *)qf : (void *)qh;
  void *kd = cc->dtype == POSENC_DTYPE_F32 ? (void *)kf : (void *)kh;
  posenc_rope_tensor q = make_tensor(qd, cc->dtype, 4), k = make_tensor(kd, cc->dtype, 2);
  posenc_rope_positions pos = {1, BENCH_CHECK_TOKENS, NULL, BENCH_CHECK_START};
  const posenc_rope *rope = cc->style == POSENC_ROPE_NEOX ? s->neox : s->gptj;
  const posenc_rope_cache_view *view = NULL;
  static float step_rows[BENCH_CHECK_TOKENS * BENCH_DIM];
  int32_t step_pos[BENCH_CHECK_TOKENS], step_ids[BENCH_CHECK_TOKENS];
  posenc_rope_cache_view step;
  posenc_status st;
  int i;
  fill_random(qf, QN, 7);
  fill_random(kf, KN, 8);
  if (cc->dtype != POSENC_DTYPE_F32) { to_half(qh, qf, QN, cc->dtype); to_half(kh, kf, KN, cc->dtype); }
  if (cc->cache == 1) view = &s->view_f32;
  if (cc->cache == 2) view = cc->dtype == POSENC_DTYPE_F16 ? &s->view_f16 : &s->view_bf16;
  if (cc->cache == 3) {
    step.spec.layout = POSENC_ROPE_CACHE_HALF; step.spec.dtype = POSENC_DTYPE_F32; step.spec.row_stride = 0;
    for (i = 0; i < BENCH_CHECK_TOKENS; i++) { step_pos[i] = BENCH_CHECK_START + i; step_ids[i] = i; }
    st = posenc_rope_cache_rows(rope, &step.spec, step_pos, BENCH_CHECK_TOKENS, step_rows, sizeof step_rows);
    if (st != POSENC_OK) return (int)st;
    step.data = step_rows; step.n_rows = BENCH_CHECK_TOKENS;
    view = &step;
    pos.ids = step_ids;
  }
  st = posenc_rope_apply(rope, view, &pos, &q, &k, POSENC_ROPE_FORWARD);
  if (st != POSENC_OK) return (int)st;
  *dig = digest(qd, QN * es) ^ (digest(kd, KN * es) * 31u);
  return 0;
}

/* A plain loop on the same check tensors (f32 only). */
static uint64_t check_loop(const bench_state *s, rope_loop_fn fn) {
  enum { QN = BENCH_CHECK_TOKENS * 4 * BENCH_DIM, KN = BENCH_CHECK_TOKENS * 2 * BENCH_DIM };
  float qf[QN], kf[KN];
  fill_random(qf, QN, 7);
  fill_random(kf, KN, 8);
  fn(qf, BENCH_CHECK_TOKENS, 4, BENCH_DIM, s->cache_f32, BENCH_CHECK_START);
  fn(kf, BENCH_CHECK_TOKENS, 2, BENCH_DIM, s->cache_f32, BENCH_CHECK_START);
  return digest(qf, sizeof qf) ^ (digest(kf, sizeof kf) * 31u);
}

#ifdef BENCH_HAVE_PROTO
/* A prototype kernel on the same check tensors. */
static uint64_t check_proto(const bench_state *s, int gptj, proto_order order) {
  enum { QN = BENCH_CHECK_TOKENS * 4 * BENCH_DIM, KN = BENCH_CHECK_TOKENS * 2 * BENCH_DIM };
  float qf[QN], kf[KN];
  fill_random(qf, QN, 7);
  fill_random(kf, KN, 8);
  proto_rotate_tokens(qf, BENCH_CHECK_TOKENS, 4, BENCH_DIM, s->cache_f32, BENCH_CHECK_START, gptj,
                      order);
  proto_rotate_tokens(kf, BENCH_CHECK_TOKENS, 2, BENCH_DIM, s->cache_f32, BENCH_CHECK_START, gptj,
                      order);
  return digest(qf, sizeof qf) ^ (digest(kf, sizeof kf) * 31u);
}

static const char *const proto_order_name[PROTO_ORDER_COUNT] = {"heads inner", "heads outer",
                                                                "head pairs"};
static const char *const proto_conv_name[PROTO_CONV_COUNT] = {"f16 head pairs",
                                                              "bf16 head pairs",
                                                              "bf16 even/odd pairs"};

/* A 16-bit prototype on the check tensors (f32 cache). */
static uint64_t check_proto_half(const bench_state *s, posenc_dtype dtype, proto_conv conv) {
  enum { QN = BENCH_CHECK_TOKENS * 4 * BENCH_DIM, KN = BENCH_CHECK_TOKENS * 2 * BENCH_DIM };
  float qf[QN], kf[KN];
  uint16_t qh[QN], kh[KN];
  fill_random(qf, QN, 7);
  fill_random(kf, KN, 8);
  to_half(qh, qf, QN, dtype);
  to_half(kh, kf, KN, dtype);
  proto_rotate_tokens_half(qh, BENCH_CHECK_TOKENS, 4, BENCH_DIM, s->cache_f32, BENCH_CHECK_START,
                           conv);
  proto_rotate_tokens_half(kh, BENCH_CHECK_TOKENS, 2, BENCH_DIM, s->cache_f32, BENCH_CHECK_START,
                           conv);
  return digest(qh, sizeof qh) ^ (digest(kh, sizeof kh) * 31u);
}
#endif

typedef struct loop_variant {
  const char *name;   /* as printed */
  const char *id, *floor_id; /* in the JSON */
  rope_loop_fn neox, gptj;
  rmw_loop_fn rmw;
  int needs_avx2;
} loop_variant;

static const loop_variant loop_variants[] = {
  {"loop -O2 scalar", "loop_o2", "rmw_o2", rope_loop_neox_scalar, rope_loop_gptj_scalar, rmw_loop_scalar, 0},
  {"loop -O3", "loop_o3", "rmw_o3", rope_loop_neox_o3, rope_loop_gptj_o3, rmw_loop_o3, 0},
#ifdef BENCH_HAVE_LOOPS_AVX2
  {"loop -O3 -mavx2", "loop_o3_avx2", "rmw_o3_avx2", rope_loop_neox_avx2, rope_loop_gptj_avx2, rmw_loop_avx2, 1},
#endif
};
#define N_LOOPS (sizeof loop_variants / sizeof loop_variants[0])

/* 0: all agree; else the number of disagreements (printed). */
static int run_checks(const bench_state *s) {
  static const posenc_dtype dtypes[3] = {POSENC_DTYPE_F32, POSENC_DTYPE_F16, POSENC_DTYPE_BF16};
  int bad = 0, cases = 0, si, di, mode;
  size_t l;
  for (si = 0; si < 2; si++)
    for (di = 0; di < 3; di++) {
      uint64_t ref = 0, ref2 = 0;
      for (mode = 0; mode < 4; mode++) {
        check_case cc;
        if (mode == 2 && dtypes[di] == POSENC_DTYPE_F32) continue;
        cc.style = si ? POSENC_ROPE_GPTJ : POSENC_ROPE_NEOX;
        cc.dtype = dtypes[di];
        cc.cache = mode;
        BK_FOR_EACH(it) {
          uint64_t d;
          int st;
          cases++;
          st = check_run(s, &cc, &d);
          if (st != 0) {
            printf("check FAILED: %s %s cache %d on %s: %s\n", si ? "gptj" : "neox",
                   posenc_dtype_name(cc.dtype), mode, posenc_isa_name(it.isa),
                   posenc_strerror((posenc_status)st));
            bad++;
            continue;
          }
          /* on the fly, the f32 cache and the positions' rows give the same bits; a 16-bit
           * cache its own */
          if (mode != 2 && ref == 0) ref = d;
          if (mode == 2 && ref2 == 0) ref2 = d;
          if (d != (mode != 2 ? ref : ref2)) {
            static const char *const mode_name[4] = {"on the fly", "f32 cache", "16-bit cache", "the positions' rows"};
            printf("check: %s %s %s on %s DIFFERS\n", si ? "gptj" : "neox", posenc_dtype_name(cc.dtype),
                   mode_name[mode], posenc_isa_name(it.isa));
            bad++;
          }
        }
      }
      if (dtypes[di] == POSENC_DTYPE_F32)
        for (l = 0; l < N_LOOPS; l++) {
          if (loop_variants[l].needs_avx2 && !cpu_has_avx2()) continue;
          cases++;
          if (check_loop(s, si ? loop_variants[l].gptj : loop_variants[l].neox) != ref) {
            printf("check: %s %s differs from posenc\n", loop_variants[l].name, si ? "gptj" : "neox");
            bad++;
          }
        }
#ifdef BENCH_HAVE_PROTO
      if (dtypes[di] != POSENC_DTYPE_F32 && si == 0 && cpu_has_avx2())
        for (l = 0; l < PROTO_CONV_COUNT; l++) {
          if ((l == PROTO_F16) != (dtypes[di] == POSENC_DTYPE_F16)) continue;
          cases++;
          if (check_proto_half(s, dtypes[di], (proto_conv)l) != ref) {
            printf("check: proto %s differs from posenc\n", proto_conv_name[l]);
            bad++;
          }
        }
      if (dtypes[di] == POSENC_DTYPE_F32 && cpu_has_avx2())
        for (l = 0; l < PROTO_ORDER_COUNT; l++) {
          cases++;
          if (check_proto(s, si, (proto_order)l) != ref) {
            printf("check: proto %s %s differs from posenc\n", proto_order_name[l],
                   si ? "gptj" : "neox");
            bad++;
          }
        }
#endif
    }
  printf("checks  : %d runs (%d tokens from position %d, Q 4 + K 2 heads): ", cases,
         BENCH_CHECK_TOKENS, BENCH_CHECK_START);
  if (bad) printf("%d DISAGREE\n", bad);
  else printf("every backend bit-identical, on the fly = f32 cache = the positions' rows, plain loops%s = posenc\n",
#ifdef BENCH_HAVE_PROTO
                   cpu_has_avx2() ? " and prototypes" : ""
#else
                   ""
#endif
  );
  return bad;
}

/* ---- tables --------------------------------------------------------------------------------- */
typedef enum bench_variant { /* json_table's suffixes follow this order */
  VAR_NONE = 0,
  VAR_CACHED,      /* posenc, cache in the tensor's dtype (f32 tensors: the f32 cache) */
  VAR_CACHED_F32,  /* posenc, 16-bit tensor, f32 cache */
  VAR_OTF,         /* posenc, on the fly */
  VAR_F32_REF,     /* posenc, the f32 tensor, cached, in a 16-bit table */
  VAR_QK_CACHED,   /* decode: Q and K, cached */
  VAR_QK_OTF,      /* decode: Q and K, on the fly */
  VAR_STEP_ROWS,   /* decode: Q, the step's rows made once for BENCH_LAYERS calls */
  VAR_CHUNKS,      /* prefill: cached, in calls of BENCH_CHUNK_TOKENS tokens */
  VAR_COUNT
} bench_variant;

typedef struct bench_table {
  bench_method m[BENCH_MAX_METHODS];
  bench_result r[BENCH_MAX_METHODS];
  size_t count;
} bench_table;

static bench_method *add_method(bench_table *t, const char *name, bench_run_fn run,
                                bench_role role, int isa) {
  bench_method *x;
  if (t->count == BENCH_MAX_METHODS) {
    fprintf(stderr, "bench_rope: more than %d methods in a table\n", BENCH_MAX_METHODS);
    exit(1);
  }
  x = &t->m[t->count++];
  memset(x, 0, sizeof *x);
  snprintf(x->name, sizeof x->name, "%s", name);
  x->run = run;
  x->role = role;
  x->isa = isa;
  return x;
}

/* A posenc row; elems and bytes from its tensors (read + written). */
static bench_method *add_posenc(bench_table *t, int isa, const char *what, const rope_call *rc,
                                int variant) {
  char name[40];
  bench_method *x;
  double elems = (double)(rc->q.heads + (rc->has_k ? rc->k.heads : 0)) * BENCH_DIM *
                 (double)rc->pos.tokens;
  snprintf(name, sizeof name, "posenc %s%s", posenc_isa_name((posenc_isa)isa), what);
  x = add_method(t, name, run_posenc, ROLE_POSENC, isa);
  x->id = posenc_isa_name((posenc_isa)isa);
  x->rc = *rc;
  x->variant = variant;
  x->elems = elems;
  x->bytes = 2.0 * elems * (double)posenc_dtype_size(rc->q.dtype);
  return x;
}

/* A plain-loop row: the same call shape as rc (the loops read rc's f32 cache). */
static bench_method *add_loop(bench_table *t, const loop_variant *lv, const char *what,
                              posenc_rope_style style, const rope_call *rc) {
  char name[40];
  bench_method *x;
  snprintf(name, sizeof name, "%s%s", lv->name, what);
  x = add_method(t, name, run_loop, ROLE_LOOP, -1);
  x->id = lv->id;
  x->needs_avx2 = lv->needs_avx2;
  x->loop = style == POSENC_ROPE_NEOX ? lv->neox : lv->gptj;
  x->rc = *rc;
  x->elems = (double)(rc->q.heads + (rc->has_k ? rc->k.heads : 0)) * BENCH_DIM *
             (double)rc->pos.tokens;
  x->bytes = 2.0 * x->elems * 4.0;
  return x;
}

/* The floors: x *= a in place over n floats of buf, autovectorized and with intrinsics (plain,
 * and asking for lines ahead). */
static void add_floors(bench_table *t, float *buf, size_t n) {
#ifdef BENCH_HAVE_LOOPS_AVX2
  static const struct { const char *name, *id; rmw_loop_fn rmw; } intrinsics[] = {
    {"floor rmw avx2 intrinsics", "rmw_avx2_intrin", rmw_intrin_avx2},
    {"floor rmw avx2 intr. + prefetch", "rmw_avx2_intrin_prefetch", rmw_intrin_avx2_prefetch}};
  const size_t n_intrinsics = sizeof intrinsics / sizeof intrinsics[0];
#else
  const size_t n_intrinsics = 0;
#endif
  size_t l;
  for (l = 1; l < N_LOOPS + n_intrinsics; l++) { /* loop variant 0 is scalar: no floor */
    bench_method *x;
    char name[40];
    if (l < N_LOOPS) {
      snprintf(name, sizeof name, "floor rmw %s", loop_variants[l].name + 5); /* "-O3 ..." */
      x = add_method(t, name, run_floor, ROLE_FLOOR, -1);
      x->id = loop_variants[l].floor_id;
      x->rmw = loop_variants[l].rmw;
      x->needs_avx2 = loop_variants[l].needs_avx2;
    } else {
#ifdef BENCH_HAVE_LOOPS_AVX2
      x = add_method(t, intrinsics[l - N_LOOPS].name, run_floor, ROLE_FLOOR, -1);
      x->id = intrinsics[l - N_LOOPS].id;
      x->rmw = intrinsics[l - N_LOOPS].rmw;
      x->needs_avx2 = 1;
#else
      continue; /* not reached: no intrinsics rows */
#endif
    }
    x->buf = buf;
    x->n = n;
    x->elems = (double)n;
    x->bytes = 2.0 * (double)n * 4.0;
  }
}

static const char *prefill_size(void) {
  static char size[48];
  snprintf(size, sizeof size, "tokens=%d,heads=%d,d=%d", sz.tokens, BENCH_HEADS, BENCH_DIM);
  return size;
}

static rope_call prefill_call(const bench_state *s, posenc_rope_style style, void *x,
                              posenc_dtype dtype, const posenc_rope_cache_view *view) {
  rope_call rc;
  memset(&rc, 0, sizeof rc);
  rc.rope = style == POSENC_ROPE_NEOX ? s->neox : s->gptj;
  rc.cache = view;
  rc.pos.batch = 1;
  rc.pos.tokens = sz.tokens;
  rc.pos.start = BENCH_START;
  rc.q = make_tensor(x, dtype, BENCH_HEADS);
  return rc;
}

/* Index of the first row matching role, isa (or -1: any) and variant; -1 if none ran. */
static int find_row(const bench_table *t, bench_role role, int isa, int variant) {
  size_t i;
  for (i = 0; i < t->count; i++)
    if (t->m[i].role == role && (isa < 0 || t->m[i].isa == isa) && t->m[i].variant == variant &&
        t->r[i].status == 0)
      return (int)i;
  return -1;
}

/* The floor of a table: its fastest floor row (by bandwidth). */
static int floor_row(const bench_table *t) {
  size_t i;
  int best = -1;
  for (i = 0; i < t->count; i++)
    if (t->m[i].role == ROLE_FLOOR && t->r[i].status == 0 &&
        (best < 0 || t->r[i].best_s < t->r[best].best_s))
      best = (int)i;
  return best;
}

static int baseline_row(const bench_table *t) {
  size_t i;
  for (i = 0; i < t->count; i++)
    if (t->m[i].is_baseline && t->r[i].status == 0) return (int)i;
  return -1;
}

/* The baseline of row i: the first baseline row of the same rope and shape (floors: none). */
static int baseline_for(const bench_table *t, size_t i) {
  size_t b;
  if (t->m[i].role == ROLE_FLOOR) return -1;
  for (b = 0; b < t->count; b++)
    if (t->m[b].is_baseline && t->r[b].status == 0 && t->m[b].rc.rope == t->m[i].rc.rope &&
        t->m[b].rc.has_k == t->m[i].rc.has_k)
      return (int)b;
  return -1;
}

static double gbps(const bench_table *t, int i) {
  return i < 0 ? 0.0 : t->m[i].bytes / t->r[i].best_s * 1e-9;
}
static double elem_rate(const bench_table *t, int i) {
  return i < 0 ? 0.0 : t->m[i].elems / t->r[i].best_s;
}

/* A table's rows as JSON: kernel = base + the variant's suffix; the f32 reference rows of the
 * 16-bit tables (their own table has them) and the prototypes are left out. */
static void json_table(const bench_table *t, const bench_opts *o, const char *base,
                       const char *size, const char *elem, const char *stat) {
  /* by variant, sized by the enum: a variant added without one is left out, not read past */
  static const char *const suffix[VAR_COUNT] = {"", "", "_f32cache", "_otf", NULL, "_qk", "_qk_otf", "_step_rows",
                                                "_chunks"};
  static const char *const impl[] = {"posenc", "loop", "floor", "peer", NULL}; /* by bench_role */
  char kernel[BENCH_MAX_METHODS][64];
  bench_rec rec[BENCH_MAX_METHODS];
  size_t i;
  for (i = 0; i < t->count; i++) {
    const bench_method *m = &t->m[i];
    int skip = !suffix[m->variant] || !impl[m->role] || t->r[i].status != 0;
    snprintf(kernel[i], sizeof kernel[i], "%s%s", base, skip ? "" : suffix[m->variant]);
    rec[i].kernel = skip ? NULL : kernel[i];
    rec[i].backend = m->id;
    rec[i].impl = impl[m->role];
    rec[i].seconds = strcmp(stat, "median") == 0 ? t->r[i].median_s : t->r[i].best_s;
    rec[i].elems = m->elems;
    rec[i].bytes = m->bytes;
    rec[i].reps = t->r[i].rounds;
  }
  bench_json_group(o->json, size, elem, stat, rec, t->count);
}

static void print_failed(const bench_method *m, const bench_result *r) {
  printf("%-30s  FAILED: %s\n", m->name,
         m->role == ROLE_POSENC ? posenc_strerror((posenc_status)r->status) : "error");
}

static void print_noise(const bench_result *r) {
  printf("  %6ld  %+6.1f%%\n", r->rounds, 100.0 * (r->median_s / r->best_s - 1.0));
}

/* Prefill tables: ms, GB/s (tensor read + written), elements/s, % of the floor's bandwidth (rows
 * moving the floor's bytes), and element rate relative to the baseline row. */
static void print_prefill(const bench_table *t, const char *vs_name) {
  int fl = floor_row(t), base;
  size_t i;
  printf("%-34s  %7s  %7s  %7s  %7s  %8s  %6s  %7s\n", "method", "ms", "GB/s", "Gelem/s",
         "%floor", vs_name, "rounds", "med/min");
  for (i = 0; i < t->count; i++) {
    const bench_method *m = &t->m[i];
    const bench_result *r = &t->r[i];
    if (r->status != 0) { print_failed(m, r); continue; }
    printf("%-34s  %7.3f  %7.2f  %7.3f", m->name, r->best_s * 1e3, gbps(t, (int)i),
           elem_rate(t, (int)i) * 1e-9);
    if (fl >= 0 && m->bytes == t->m[fl].bytes)
      printf("  %6.1f%%", 100.0 * t->r[fl].best_s / r->best_s);
    else printf("  %7s", "-");
    if ((base = baseline_for(t, i)) >= 0)
      printf("  %7.2fx", elem_rate(t, (int)i) / elem_rate(t, base));
    else printf("  %8s", "-");
    print_noise(r);
  }
  if (fl >= 0) printf("floor = %s (%.2f GB/s, read + write)\n", t->m[fl].name, gbps(t, fl));
}

/* ---- cache generation ----------------------------------------------------------------------- */
static float hf_inv_freq[BENCH_HALF];  /* HF: 1 / base ** (arange(0, d, 2).float() / d), in f32 */
static double dbl_omega[BENCH_HALF];   /* base^(-2i/d) in double */

static int run_cache_posenc(const bench_method *m, unsigned long run) {
  posenc_rope_cache_spec spec = {POSENC_ROPE_CACHE_HALF, POSENC_DTYPE_F32, 0};
  (void)run;
  return (int)posenc_rope_cache_table(m->rc.rope, &spec, 0, m->n, m->buf,
                                      m->n * BENCH_DIM * sizeof(float));
}

/* HF's recipe (LlamaRotaryEmbedding in float32): angle = fl32(fl32(p) * inv_freq), then cos and
 * sin of it, computed apart as HF does (emb.cos(), emb.sin()); two loops also keep gcc from
 * merging the calls into sincosf. */
static int run_cache_hf(const bench_method *m, unsigned long run) {
  size_t p, i;
  (void)run;
  for (p = 0; p < m->n; p++) {
    float *row = m->buf + p * BENCH_DIM, fp = (float)p;
    for (i = 0; i < BENCH_HALF; i++) row[i] = cosf(fp * hf_inv_freq[i]);
    for (i = 0; i < BENCH_HALF; i++) row[BENCH_HALF + i] = sinf(fp * hf_inv_freq[i]);
  }
  return 0;
}

/* The same in double: cos and sin of p * omega_i, rounded to f32 (the reference of max|diff|). */
static int run_cache_double(const bench_method *m, unsigned long run) {
  size_t p, i;
  (void)run;
  for (p = 0; p < m->n; p++) {
    float *row = m->buf + p * BENCH_DIM;
    for (i = 0; i < BENCH_HALF; i++) row[i] = (float)cos((double)p * dbl_omega[i]);
    for (i = 0; i < BENCH_HALF; i++) row[BENCH_HALF + i] = (float)sin((double)p * dbl_omega[i]);
  }
  return 0;
}

typedef struct cache_summary {
  double posenc_s, hf_s, dbl_s; /* best isa */
} cache_summary;

static int bench_cache(const bench_state *s, const bench_opts *o, cache_summary *cs) {
  static bench_table t;
  size_t rows = sz.tokens, elems = rows * BENCH_DIM, i, k;
  float *buf = xalloc(elems * sizeof(float)), *ref = xalloc(elems * sizeof(float));
  double pairs = (double)rows * BENCH_HALF, hf_s = 0.0;
  uint64_t dig0 = 0;
  int isa, failed = 0, digests_agree = 1;
  bench_method *x;

  for (i = 0; i < BENCH_HALF; i++) {
    hf_inv_freq[i] = 1.0f / powf((float)BENCH_BASE, (float)(2 * i) / (float)BENCH_DIM);
    dbl_omega[i] = pow(BENCH_BASE, -(double)(2 * i) / (double)BENCH_DIM);
  }
  memset(&t, 0, sizeof t);
  BK_EACH_USABLE(isa) {
    char name[40];
    snprintf(name, sizeof name, "posenc %s", posenc_isa_name((posenc_isa)isa));
    x = add_method(&t, name, run_cache_posenc, ROLE_POSENC, isa);
    x->id = posenc_isa_name((posenc_isa)isa);
    x->rc.rope = s->neox;
  }
  x = add_method(&t, "libm cosf/sinf, f32 angle (HF)", run_cache_hf, ROLE_PEER, -1);
  x->id = "libm_cosf_sinf_hf";
  x->is_baseline = 1;
  x = add_method(&t, "libm cos/sin, double angle", run_cache_double, ROLE_PEER, -1);
  x->id = "libm_cos_sin_double";
  for (i = 0; i < t.count; i++) {
    t.m[i].buf = buf;
    t.m[i].n = rows;
    t.m[i].elems = pairs;
    t.m[i].bytes = (double)elems * sizeof(float);
  }
  time_methods(t.m, t.count, BENCH_CACHE_BUDGET_S, 0, o, t.r);
  run_cache_double(&t.m[t.count - 1], 0);
  memcpy(ref, buf, elems * sizeof(float));

  printf("\ncache generation: %zu rows x %d, f32 [cos | sin] (%.1f MiB), positions 0..%zu\n",
         rows, BENCH_DIM, (double)elems * 4.0 / 1048576.0, rows - 1);
  printf("%-30s  %8s  %7s  %7s  %7s  %9s  %6s  %7s\n", "method", "us/table", "ns/pair", "GB/s",
         "vs HF", "max|diff|", "rounds", "med/min");
  for (i = 0; i < t.count; i++)
    if (t.m[i].is_baseline && t.r[i].status == 0) hf_s = t.r[i].best_s;
  for (i = 0; i < t.count; i++) {
    const bench_method *m = &t.m[i];
    const bench_result *r = &t.r[i];
    double worst = 0.0;
    if (r->status != 0) { print_failed(m, r); failed = 1; continue; }
    /* run once more for the values; posenc backends must agree bit for bit */
    select_isa(m);
    memset(buf, 0, elems * sizeof(float));
    m->run(m, 0);
    posenc_isa_set(POSENC_ISA_AUTO);
    for (k = 0; k < elems; k++) {
      double d = fabs((double)buf[k] - (double)ref[k]);
      if (d > worst) worst = d;
    }
    if (m->role == ROLE_POSENC) {
      uint64_t d = digest(buf, elems * sizeof(float));
      if (dig0 == 0) dig0 = d;
      else if (d != dig0) digests_agree = 0;
      if (m->isa == (int)bk_best()) cs->posenc_s = r->best_s;
    }
    if (m->run == run_cache_hf) cs->hf_s = r->best_s;
    if (m->run == run_cache_double) cs->dbl_s = r->best_s;
    printf("%-30s  %8.1f  %7.3f  %7.2f", m->name, r->best_s * 1e6, r->best_s * 1e9 / pairs,
           m->bytes / r->best_s * 1e-9);
    if (hf_s > 0.0) printf("  %6.2fx", hf_s / r->best_s);
    else printf("  %7s", "-");
    printf("  %9.2e", worst);
    print_noise(r);
  }
  printf("posenc backends: %s; max|diff| is against the double row\n",
         digests_agree ? "bit-identical caches" : "caches DIFFER");
  {
    char size[48];
    snprintf(size, sizeof size, "rows=%zu,d=%d", rows, BENCH_DIM);
    json_table(&t, o, "rope_cache_f32", size, "pair", "best");
  }
  bench_free64(buf);
  bench_free64(ref);
  return failed || !digests_agree;
}

/* ---- prefill -------------------------------------------------------------------------------- */
/* Per backend [isa]: what the targets need, 0 where that backend did not run. */
typedef struct prefill_summary {
  double floor_gbps[2], loop_s[2];       /* [neox, gptj]: the rmw floor, the baseline loop */
  double posenc_gbps[POSENC_ISA_COUNT][2]; /* cached */
  double cached_s[POSENC_ISA_COUNT][2], otf_s[POSENC_ISA_COUNT][2];
  /* [f16, bf16]: f32 and 16-bit element rates, same rounds */
  double f32_rate_ref[POSENC_ISA_COUNT][2], half_rate[POSENC_ISA_COUNT][2];
  double half_f32cache_rate[POSENC_ISA_COUNT][2];
} prefill_summary;

static int table_failed(const bench_table *t) {
  size_t i;
  for (i = 0; i < t->count; i++) if (t->r[i].status != 0) return 1;
  return 0;
}

static int bench_prefill_f32(bench_state *s, posenc_rope_style style, const bench_opts *o,
                             prefill_summary *ps) {
  static bench_table t;
  rope_call cached = prefill_call(s, style, s->x, POSENC_DTYPE_F32, &s->view_f32);
  rope_call otf = prefill_call(s, style, s->x, POSENC_DTYPE_F32, NULL);
  int isa, si = style == POSENC_ROPE_GPTJ, row;
  size_t l;
  char chunks_what[24];
  snprintf(chunks_what, sizeof chunks_what, ", calls of %d", BENCH_CHUNK_TOKENS);
  memset(&t, 0, sizeof t);
  add_floors(&t, s->x, BENCH_PREFILL_ELEMS);
  BK_EACH_USABLE(isa) {
    add_posenc(&t, isa, ", cached", &cached, VAR_CACHED);
    add_posenc(&t, isa, ", on the fly", &otf, VAR_OTF);
    if (isa != POSENC_ISA_SCALAR) /* scalar's rows take 35 ms a round already */
      add_posenc(&t, isa, chunks_what, &cached, VAR_CHUNKS)->chunk = BENCH_CHUNK_TOKENS;
  }
  for (l = 0; l < N_LOOPS; l++) add_loop(&t, &loop_variants[l], "", style, &cached);
  t.count = runnable(t.m, t.count);
  t.m[t.count - 1].is_baseline = 1; /* the widest autovectorized loop this CPU runs */
  time_methods(t.m, t.count, BENCH_PREFILL_BUDGET_S, 1, o, t.r);

  printf("\nprefill f32 %s: %d tokens x %d heads x %d, positions %d..%d, in place "
         "(%.0f MiB read + written); cache: %d-row f32 [cos | sin]\n",
         si ? "GPT-J" : "NeoX", sz.tokens, BENCH_HEADS, BENCH_DIM, BENCH_START,
         BENCH_START + sz.tokens - 1, (double)BENCH_PREFILL_ELEMS * 4.0 / 1048576.0,
         sz.cache_rows);
  print_prefill(&t, "vs loop");
  printf("vs loop = element rate / that of %s\n", t.m[baseline_row(&t)].name);
  printf("calls of %d: the same prefill, cached, a call per %d tokens (%.0f MiB each: under the default\n"
         "  POSENC_PREFETCH_MIN_BYTES, no prefetch)\n",
         BENCH_CHUNK_TOKENS, BENCH_CHUNK_TOKENS, (double)BENCH_CHUNK_TOKENS * BENCH_HEADS * BENCH_DIM * 4.0 / 1048576.0);
  json_table(&t, o, si ? "rope_prefill_gptj_f32" : "rope_prefill_neox_f32", prefill_size(), "element",
             "best");
  ps->floor_gbps[si] = gbps(&t, floor_row(&t));
  BK_EACH_USABLE(isa) {
    row = find_row(&t, ROLE_POSENC, isa, VAR_CACHED);
    ps->posenc_gbps[isa][si] = gbps(&t, row);
    ps->cached_s[isa][si] = row >= 0 ? t.r[row].best_s : 0.0;
    row = find_row(&t, ROLE_POSENC, isa, VAR_OTF);
    ps->otf_s[isa][si] = row >= 0 ? t.r[row].best_s : 0.0;
  }
  row = baseline_row(&t);
  ps->loop_s[si] = row >= 0 ? t.r[row].best_s : 0.0;
  return table_failed(&t);
}

/* 16-bit NeoX prefill: the floor over the same bytes, the f32 tensor for reference, and posenc per
 * backend with a cache in the tensor's dtype, with the f32 cache, and on the fly. */
static int bench_prefill_half(bench_state *s, posenc_dtype dtype, const bench_opts *o,
                              prefill_summary *ps) {
  static bench_table t;
  const posenc_rope_cache_view *own = dtype == POSENC_DTYPE_F16 ? &s->view_f16 : &s->view_bf16;
  rope_call f32 = prefill_call(s, POSENC_ROPE_NEOX, s->x, POSENC_DTYPE_F32, &s->view_f32);
  rope_call cached = prefill_call(s, POSENC_ROPE_NEOX, s->xh, dtype, own);
  rope_call cached32 = prefill_call(s, POSENC_ROPE_NEOX, s->xh, dtype, &s->view_f32);
  rope_call otf = prefill_call(s, POSENC_ROPE_NEOX, s->xh, dtype, NULL);
  int isa, hi = dtype == POSENC_DTYPE_BF16, bi = (int)bk_best();
  char what[40];
  bench_method *ref;
  memset(&t, 0, sizeof t);
  /* 16-bit values of x (|x| < 1): finite, no subnormals */
  to_half(s->xh, s->x, BENCH_PREFILL_ELEMS, dtype);
  add_floors(&t, s->x, BENCH_PREFILL_ELEMS / 2); /* the same bytes as the 16-bit tensor */
  BK_EACH_USABLE(isa) { /* each backend's f32 rate, for its own ratio */
    ref = add_posenc(&t, isa, ", f32 tensor", &f32, VAR_F32_REF);
    ref->is_baseline = isa == bi;
  }
  BK_EACH_USABLE(isa) {
    snprintf(what, sizeof what, ", %s cache", posenc_dtype_name(dtype));
    add_posenc(&t, isa, what, &cached, VAR_CACHED);
    add_posenc(&t, isa, ", f32 cache", &cached32, VAR_CACHED_F32);
    add_posenc(&t, isa, ", on the fly", &otf, VAR_OTF);
  }
  t.count = runnable(t.m, t.count);
  time_methods(t.m, t.count, BENCH_PREFILL_BUDGET_S, 1, o, t.r);

  printf("\nprefill %s NeoX: %d tokens x %d heads x %d, in place (%.0f MiB read + written); "
         "f32 tensor row: the f32 prefill, in the same rounds\n",
         posenc_dtype_name(dtype), sz.tokens, BENCH_HEADS, BENCH_DIM,
         (double)BENCH_PREFILL_ELEMS * 2.0 / 1048576.0);
  print_prefill(&t, "vs f32");
  printf("vs f32 = element rate / that of the f32 tensor row (target >= %.1fx, cached)\n",
         TARGET_HALF_RATE);
  json_table(&t, o, hi ? "rope_prefill_neox_bf16" : "rope_prefill_neox_f16", prefill_size(), "element",
             "best");
  BK_EACH_USABLE(isa) {
    ps->f32_rate_ref[isa][hi] = elem_rate(&t, find_row(&t, ROLE_POSENC, isa, VAR_F32_REF));
    ps->half_rate[isa][hi] = elem_rate(&t, find_row(&t, ROLE_POSENC, isa, VAR_CACHED));
    ps->half_f32cache_rate[isa][hi] = elem_rate(&t, find_row(&t, ROLE_POSENC, isa, VAR_CACHED_F32));
  }
  return table_failed(&t);
}

/* ---- decode --------------------------------------------------------------------------------- */
typedef struct decode_summary {
  /* median ns per call, per backend [isa] (0: did not run) */
  double q_cached[POSENC_ISA_COUNT], qk_cached[POSENC_ISA_COUNT];
  double q_otf[POSENC_ISA_COUNT], qk_otf[POSENC_ISA_COUNT];
  double q_step[POSENC_ISA_COUNT]; /* on the fly, the step's rows once for BENCH_LAYERS layers: per layer */
  double loop_q; /* the baseline loop, Q only */
} decode_summary;

static rope_call decode_call(const bench_state *s, posenc_rope_style style) {
  rope_call rc;
  memset(&rc, 0, sizeof rc);
  rc.rope = style == POSENC_ROPE_NEOX ? s->neox : s->gptj;
  rc.cache = &s->view_f32;
  rc.pos.batch = 1;
  rc.pos.tokens = 1;
  rc.pos.start = sz.decode_pos;
  rc.q = make_tensor(s->dq, POSENC_DTYPE_F32, BENCH_HEADS);
  return rc;
}

/* Decode tables: median and best ns per call; vs = the baseline's median over the row's. */
static void print_decode(const bench_table *t, const char *vs_name) {
  size_t i;
  printf("%-30s  %9s  %9s  %8s  %6s  %7s\n", "method", "ns median", "ns best", vs_name,
         "rounds", "med/min");
  for (i = 0; i < t->count; i++) {
    const bench_method *m = &t->m[i];
    const bench_result *r = &t->r[i];
    int base = baseline_for(t, i);
    if (r->status != 0) { print_failed(m, r); continue; }
    printf("%-30s  %9.1f  %9.1f", m->name, r->median_s * 1e9, r->best_s * 1e9);
    if (base >= 0) printf("  %7.2fx", t->r[base].median_s / r->median_s);
    else printf("  %8s", "-");
    print_noise(r);
  }
}

static int bench_decode(bench_state *s, const bench_opts *o, decode_summary *ds) {
  static bench_table t;
  rope_call q, qk, qo, qko;
  int isa, row;
  size_t i, l;
  memset(&t, 0, sizeof t);
  q = decode_call(s, POSENC_ROPE_NEOX);
  qk = q;
  qk.k = make_tensor(s->dk, POSENC_DTYPE_F32, BENCH_KV_HEADS);
  qk.has_k = 1;
  qo = q; qo.cache = NULL;
  qko = qk; qko.cache = NULL;
  BK_EACH_USABLE(isa) {
    add_posenc(&t, isa, ", Q, cached", &q, VAR_CACHED);
    add_posenc(&t, isa, ", Q+K, cached", &qk, VAR_QK_CACHED);
    add_posenc(&t, isa, ", Q, on the fly", &qo, VAR_OTF);
    add_posenc(&t, isa, ", Q+K, on the fly", &qko, VAR_QK_OTF);
    add_posenc(&t, isa, ", Q, step's rows", &qo, VAR_STEP_ROWS)->run = run_step_rows;
  }
  for (l = 0; l < N_LOOPS; l++) {
    add_loop(&t, &loop_variants[l], ", Q", POSENC_ROPE_NEOX, &q)->variant = VAR_CACHED;
    add_loop(&t, &loop_variants[l], ", Q+K", POSENC_ROPE_NEOX, &qk)->variant = VAR_QK_CACHED;
  }
  t.count = runnable(t.m, t.count);
  t.m[t.count - 2].is_baseline = 1; /* the widest loop, Q only and Q+K */
  t.m[t.count - 1].is_baseline = 1;
  for (i = 0; i < t.count; i++)
    t.m[i].calls = t.m[i].variant == VAR_STEP_ROWS ? BENCH_DECODE_BATCH / BENCH_LAYERS * BENCH_LAYERS : BENCH_DECODE_BATCH;
  time_methods(t.m, t.count, BENCH_DECODE_BUDGET_S, 0, o, t.r);

  printf("\ndecode f32 NeoX: 1 token x %d heads (Q) or %d + %d heads (Q+K) x %d, positions "
         "%d..%d in turn; cache: %d-row f32 [cos | sin]\n", BENCH_HEADS, BENCH_HEADS,
         BENCH_KV_HEADS, BENCH_DIM, sz.decode_pos, sz.decode_pos + BENCH_DECODE_SPAN - 1,
         sz.cache_rows);
  print_decode(&t, "vs loop");
  {
    char size[64];
    snprintf(size, sizeof size, "tokens=1,heads=%d,kv_heads=%d,d=%d", BENCH_HEADS, BENCH_KV_HEADS,
             BENCH_DIM);
    json_table(&t, o, "rope_decode_neox_f32", size, "element", "median");
  }
  row = baseline_row(&t);
  printf("a timed run is %d calls; ns = its time / %d; median and best over the rounds; "
         "vs loop: against %s (Q+K rows: its Q+K row)\n", BENCH_DECODE_BATCH, BENCH_DECODE_BATCH,
         row >= 0 ? t.m[row].name : "-");
  printf("step's rows: on the fly as an engine's layers share a step, its cos/sin made once "
         "(posenc_rope_cache_rows) for %d calls, one a layer; a timed run is %d calls; ns a layer\n",
         BENCH_LAYERS, BENCH_DECODE_BATCH / BENCH_LAYERS * BENCH_LAYERS);
#define DECODE_NS(v) ((row = find_row(&t, ROLE_POSENC, isa, (v))) >= 0 ? t.r[row].median_s * 1e9 : 0.0)
  BK_EACH_USABLE(isa) {
    ds->q_cached[isa] = DECODE_NS(VAR_CACHED);
    ds->qk_cached[isa] = DECODE_NS(VAR_QK_CACHED);
    ds->q_otf[isa] = DECODE_NS(VAR_OTF);
    ds->qk_otf[isa] = DECODE_NS(VAR_QK_OTF);
    ds->q_step[isa] = DECODE_NS(VAR_STEP_ROWS);
  }
#undef DECODE_NS
  row = baseline_row(&t);
  ds->loop_q = row >= 0 ? t.r[row].median_s * 1e9 : 0.0;
  return table_failed(&t);
}

/* ---- prototypes: the same kernel in other loop orders --------------------------------------- */
#ifndef BENCH_HAVE_PROTO
#  define PROTO_ORDER_MAX 3
#  define PROTO_CONV_MAX 3
#else
#  define PROTO_ORDER_MAX PROTO_ORDER_COUNT
#  define PROTO_CONV_MAX PROTO_CONV_COUNT
#endif
typedef struct proto_summary {
  double prefill_frac[2][PROTO_ORDER_MAX];  /* [neox, gptj][order]: share of the floor's bandwidth */
  double posenc_frac[2];
  double decode_ns[2][PROTO_ORDER_MAX];     /* kernel only, median */
  double posenc_decode_ns[2];
  double half_rate[PROTO_CONV_MAX];        /* 16-bit prototypes: element rate / f32 head pairs */
  double posenc_half_rate[2];              /* posenc avx2 f16, bf16 (f32 cache), same ratio */
  int ran;
} proto_summary;

#ifdef BENCH_HAVE_PROTO
static bench_method *add_proto(bench_table *t, int order, const rope_call *rc, int gptj) {
  char name[40];
  bench_method *x;
  snprintf(name, sizeof name, "proto %s %s", gptj ? "GPT-J" : "NeoX", proto_order_name[order]);
  x = add_method(t, name, run_proto, ROLE_PROTO, -1);
  x->needs_avx2 = 1;
  x->order = order;
  x->rc = *rc;
  x->elems = (double)rc->q.heads * BENCH_DIM * (double)rc->pos.tokens;
  x->bytes = 2.0 * x->elems * 4.0;
  return x;
}

static int bench_proto(bench_state *s, const bench_opts *o, proto_summary *pr) {
  static bench_table t;
  int si, order, failed = 0, row;
  size_t i;
  if (!cpu_has_avx2() || !bk_usable(POSENC_ISA_AVX2)) return 0;
  pr->ran = 1;
  printf("\nprototypes (bench/rope_proto.c): posenc's AVX2 rotation, same operations and bits, in "
         "other loop orders\n(16-bit: heads in pairs, and another bf16 conversion); proto rows call "
         "the kernel per token directly\n(no API checks); vs posenc = element rate / posenc "
         "avx2's, same rounds\n");
  for (si = 0; si < 2; si++) {
    posenc_rope_style style = si ? POSENC_ROPE_GPTJ : POSENC_ROPE_NEOX;
    rope_call cached = prefill_call(s, style, s->x, POSENC_DTYPE_F32, &s->view_f32);
    bench_method *x;
    memset(&t, 0, sizeof t);
    add_floors(&t, s->x, BENCH_PREFILL_ELEMS);
    x = add_posenc(&t, POSENC_ISA_AVX2, si ? ", GPT-J, cached" : ", NeoX, cached", &cached,
                   VAR_CACHED);
    x->is_baseline = 1;
    for (order = 0; order < PROTO_ORDER_COUNT; order++) add_proto(&t, order, &cached, si);
    t.count = runnable(t.m, t.count);
    time_methods(t.m, t.count, BENCH_PREFILL_BUDGET_S, 1, o, t.r);
    printf("\nprototype prefill f32 %s (as above)\n", si ? "GPT-J" : "NeoX");
    print_prefill(&t, "vs posenc");
    failed |= table_failed(&t);
    row = floor_row(&t);
    for (i = 0; i < t.count; i++) {
      double frac = row >= 0 && t.r[i].status == 0 ? t.r[row].best_s / t.r[i].best_s : 0.0;
      if (t.m[i].role == ROLE_PROTO) pr->prefill_frac[si][t.m[i].order] = frac;
      if (t.m[i].role == ROLE_POSENC) pr->posenc_frac[si] = frac;
    }
  }
  { /* 16-bit NeoX prefill: what the conversions cost, in the prototypes' head-pair order */
    rope_call f32 = prefill_call(s, POSENC_ROPE_NEOX, s->x, POSENC_DTYPE_F32, &s->view_f32);
    rope_call h16 = prefill_call(s, POSENC_ROPE_NEOX, s->xh2, POSENC_DTYPE_F16, &s->view_f32);
    rope_call b16 = prefill_call(s, POSENC_ROPE_NEOX, s->xh, POSENC_DTYPE_BF16, &s->view_f32);
    int conv, base;
    bench_method *x;
    to_half(s->xh2, s->x, BENCH_PREFILL_ELEMS, POSENC_DTYPE_F16);
    to_half(s->xh, s->x, BENCH_PREFILL_ELEMS, POSENC_DTYPE_BF16);
    memset(&t, 0, sizeof t);
    add_proto(&t, PROTO_HEAD_PAIRS, &f32, 0)->is_baseline = 1;
    for (conv = 0; conv < PROTO_CONV_COUNT; conv++) {
      const rope_call *rc = conv == PROTO_F16 ? &h16 : &b16;
      if (conv < 2) add_posenc(&t, POSENC_ISA_AVX2, conv ? ", bf16, f32 cache" : ", f16, f32 cache",
                               rc, VAR_CACHED_F32);
      x = add_proto(&t, conv, rc, 0);
      snprintf(x->name, sizeof x->name, "proto %s", proto_conv_name[conv]);
      x->run = run_proto_half;
      x->bytes = x->elems * 4.0;
    }
    t.count = runnable(t.m, t.count);
    time_methods(t.m, t.count, BENCH_PREFILL_BUDGET_S, 1, o, t.r);
    printf("\nprototype prefill 16-bit NeoX (as above), f32 cache; vs f32 = element rate / that of "
           "proto NeoX head pairs (f32)\n");
    print_prefill(&t, "vs f32");
    failed |= table_failed(&t);
    base = baseline_row(&t);
    for (i = 0; i < t.count; i++) {
      double r = base >= 0 && t.r[i].status == 0 ? elem_rate(&t, (int)i) / elem_rate(&t, base) : 0.0;
      if (t.m[i].run == run_proto_half) pr->half_rate[t.m[i].order] = r;
      if (t.m[i].role == ROLE_POSENC) pr->posenc_half_rate[t.m[i].rc.q.dtype == POSENC_DTYPE_BF16] = r;
    }
  }

  memset(&t, 0, sizeof t);
  for (si = 0; si < 2; si++) {
    posenc_rope_style style = si ? POSENC_ROPE_GPTJ : POSENC_ROPE_NEOX;
    rope_call q = decode_call(s, style);
    add_posenc(&t, POSENC_ISA_AVX2, si ? ", GPT-J, Q, cached" : ", NeoX, Q, cached", &q,
               VAR_CACHED)->is_baseline = 1;
    for (order = 0; order < PROTO_ORDER_COUNT; order++) add_proto(&t, order, &q, si);
  }
  t.count = runnable(t.m, t.count);
  for (i = 0; i < t.count; i++) t.m[i].calls = BENCH_DECODE_BATCH;
  time_methods(t.m, t.count, BENCH_DECODE_BUDGET_S / 2, 0, o, t.r);
  printf("\nprototype decode f32: 1 token x %d heads (Q), positions %d..%d in turn\n",
         BENCH_HEADS, sz.decode_pos, sz.decode_pos + BENCH_DECODE_SPAN - 1);
  print_decode(&t, "vs posenc");
  failed |= table_failed(&t);
  for (i = 0; i < t.count; i++) {
    int gptj = t.m[i].rc.rope == s->gptj;
    double ns = t.r[i].status == 0 ? t.r[i].median_s * 1e9 : 0.0;
    if (t.m[i].role == ROLE_PROTO) pr->decode_ns[gptj][t.m[i].order] = ns;
    if (t.m[i].role == ROLE_POSENC) pr->posenc_decode_ns[gptj] = ns;
  }
  return failed;
}
#endif

/* ---- header and targets --------------------------------------------------------------------- */

static void print_header(const bench_opts *o) {
  char cpu[256];
  int isa;
  cpu_model(cpu, sizeof cpu);
  printf("posenc %s bench_rope: RoPE, head_dim %d, base %g, no scaling\n", POSENC_VERSION_STRING,
         BENCH_DIM, BENCH_BASE);
  printf("machine : %s, %ld cores online; single-threaded\n", cpu, bench_cores());
  printf("compiler: %s; build: %s (-O%s); loops: -O2 -fno-tree-vectorize, -O3%s\n",
         BENCH_COMPILER, BENCH_BUILD_TYPE, BENCH_OPTIMIZATION,
#ifdef BENCH_HAVE_LOOPS_AVX2
         cpu_has_avx2() ? ", -O3 -mavx2 -mf16c" : " (-mavx2 built, CPU lacks AVX2)"
#else
         ""
#endif
  );
  printf("backends:");
  BK_EACH_USABLE(isa) printf(" %s", posenc_isa_name((posenc_isa)isa));
  printf(" (targets use %s, the one dispatch picks)\n", posenc_isa_name(bk_best()));
  bk_report_not_run(stdout);
  printf("timing  : CLOCK_MONOTONIC, warm-up, then ");
  if (o->rounds > 0) printf("%ld rounds", o->rounds);
  else if (o->quick) printf("1 round (--quick)");
  else printf("~%.1f s per prefill table, shared alike by its methods (>= %d rounds each)",
              BENCH_PREFILL_BUDGET_S, BENCH_MIN_ROUNDS);
  printf(";\n          rounds of one timed run per method, round-robin; best of the rounds "
         "(decode: median);\n          prefill runs start cold (a %zu KiB buffer is read before "
         "each); med/min = median over best\n", sz.scrub_bytes >> 10);
}

static void print_target(const char *what, const char *target, const char *unit, double measured,
                         double ratio, int pass) {
  char m[32];
  if (measured > 0.0) snprintf(m, sizeof m, "%.2f %s", measured, unit);
  else snprintf(m, sizeof m, "n/a");
  printf("%-44s  %-12s  %14s  %6.2f  %s\n", what, target, m, ratio,
         measured > 0.0 ? (pass ? "PASS" : "MISS") : "n/a");
}

/* The targets of one SIMD backend. */
static void print_backend_targets(int isa, const prefill_summary *ps, const decode_summary *ds) {
  static const char *style_name[2] = {"NeoX", "GPT-J"};
  static const char *half_name[2] = {"f16", "bf16"};
  char what[64], tgt[24];
  double r;
  int i;
  printf("\ntargets, posenc %s (ratio = measured / target, or target / measured for limits)\n",
         posenc_isa_name((posenc_isa)isa));
  printf("%-44s  %-12s  %14s  %6s  %s\n", "target", "goal", "measured", "ratio", "result");
  for (i = 0; i < 2; i++) {
    double frac = ps->floor_gbps[i] > 0.0 ? ps->posenc_gbps[isa][i] / ps->floor_gbps[i] : 0.0;
    snprintf(what, sizeof what, "prefill f32 %s cached, %% of rmw floor", style_name[i]);
    snprintf(tgt, sizeof tgt, ">= %.0f%%", 100.0 * TARGET_FLOOR_FRACTION);
    print_target(what, tgt, "%", 100.0 * frac, frac / TARGET_FLOOR_FRACTION,
                 frac >= TARGET_FLOOR_FRACTION);
  }
  for (i = 0; i < 2; i++) {
    r = ps->cached_s[isa][i] > 0.0 ? ps->otf_s[isa][i] / ps->cached_s[isa][i] : 0.0;
    snprintf(what, sizeof what, "prefill f32 %s on the fly / cached time", style_name[i]);
    snprintf(tgt, sizeof tgt, "<= %.2fx", TARGET_OTF_RATIO);
    print_target(what, tgt, "x", r, r > 0.0 ? TARGET_OTF_RATIO / r : 0.0, r <= TARGET_OTF_RATIO);
  }
  for (i = 0; i < 2; i++) {
    const double ref = ps->f32_rate_ref[isa][i];
    r = ref > 0.0 ? ps->half_rate[isa][i] / ref : 0.0;
    snprintf(what, sizeof what, "prefill %s (%s cache) elem rate / f32", half_name[i], half_name[i]);
    snprintf(tgt, sizeof tgt, ">= %.1fx", TARGET_HALF_RATE);
    print_target(what, tgt, "x", r, r / TARGET_HALF_RATE, r >= TARGET_HALF_RATE);
    r = ref > 0.0 ? ps->half_f32cache_rate[isa][i] / ref : 0.0;
    snprintf(what, sizeof what, "prefill %s (f32 cache) elem rate / f32", half_name[i]);
    print_target(what, tgt, "x", r, r / TARGET_HALF_RATE, r >= TARGET_HALF_RATE);
  }
  r = ds->loop_q > 0.0 ? ds->q_cached[isa] / ds->loop_q : 0.0;
  snprintf(tgt, sizeof tgt, "<= %.2fx", TARGET_DECODE_VS_LOOP);
  print_target("decode Q 32x128 cached / plain loop, median", tgt, "x", r,
               r > 0.0 ? TARGET_DECODE_VS_LOOP / r : 0.0, r <= TARGET_DECODE_VS_LOOP);
  r = ds->q_cached[isa] > 0.0 ? ds->q_otf[isa] / ds->q_cached[isa] : 0.0;
  snprintf(tgt, sizeof tgt, "<= %.2fx", TARGET_DECODE_OTF_RATIO);
  print_target("decode Q 32x128 on the fly / cached, median", tgt, "x", r,
               r > 0.0 ? TARGET_DECODE_OTF_RATIO / r : 0.0, r <= TARGET_DECODE_OTF_RATIO);
  printf("  decode Q cached %.1f ns, Q+K cached %.1f ns, Q on the fly %.1f ns, Q+K on the fly "
         "%.1f ns (median); plain loop Q %.1f ns\n", ds->q_cached[isa], ds->qk_cached[isa],
         ds->q_otf[isa], ds->qk_otf[isa], ds->loop_q);
  printf("  decode Q on the fly with the step's rows made once for %d layers: %.1f ns a layer, %.2fx cached\n",
         BENCH_LAYERS, ds->q_step[isa], ds->q_cached[isa] > 0.0 ? ds->q_step[isa] / ds->q_cached[isa] : 0.0);
  for (i = 0; i < 2; i++)
    printf("  prefill f32 %s cached: %.2fx the widest plain loop of this run\n", style_name[i],
           ps->cached_s[isa][i] > 0.0 ? ps->loop_s[i] / ps->cached_s[isa][i] : 0.0);
}

static void print_targets(const cache_summary *cs, const prefill_summary *ps,
                          const decode_summary *ds, const proto_summary *pr) {
  static const char *style_name[2] = {"NeoX", "GPT-J"};
  int isa, i;
  BK_EACH_USABLE(isa)
    if (isa != POSENC_ISA_SCALAR) print_backend_targets(isa, ps, ds);
  printf("\n");
  printf("information (no target):\n");
  printf("  cache generation (4096 rows): %.2fx HF's cosf/sinf recipe, %.2fx double cos/sin\n",
         cs->posenc_s > 0.0 ? cs->hf_s / cs->posenc_s : 0.0,
         cs->posenc_s > 0.0 ? cs->dbl_s / cs->posenc_s : 0.0);
  if (pr->ran)
    for (i = 0; i < 2; i++)
      printf("  prototype %s, prefill %% of floor / decode ns (kernel only): heads inner %.0f%% / "
             "%.0f, heads outer %.0f%% / %.0f, head pairs %.0f%% / %.0f; posenc avx2 %.0f%% / "
             "%.0f\n", style_name[i], 100.0 * pr->prefill_frac[i][0], pr->decode_ns[i][0],
             100.0 * pr->prefill_frac[i][1], pr->decode_ns[i][1], 100.0 * pr->prefill_frac[i][2],
             pr->decode_ns[i][2], 100.0 * pr->posenc_frac[i], pr->posenc_decode_ns[i]);
  if (pr->ran)
    printf("  prototype 16-bit prefill (head pairs), element rate / f32 head pairs: f16 %.2fx, bf16 "
           "posenc conversion %.2fx, bf16 even/odd %.2fx; posenc avx2 f16 %.2fx, bf16 %.2fx\n",
           pr->half_rate[0], pr->half_rate[1], pr->half_rate[2], pr->posenc_half_rate[0],
           pr->posenc_half_rate[1]);
}

int main(int argc, char **argv) {
  bench_opts opts;
  bench_state s;
  cache_summary cs;
  prefill_summary ps;
  decode_summary ds;
  proto_summary pr;
  bench_json json;
  int rc = 0;
  double t0 = now_s();

  if (parse_args(argc, argv, &opts) != 0) return 2;
  sz = opts.cli.smoke ? smoke_sizes : full_sizes;
  if (bench_json_open(&json, "rope", &opts.cli) != 0) return 1;
  opts.json = &json;
  memset(&cs, 0, sizeof cs);
  memset(&ps, 0, sizeof ps);
  memset(&ds, 0, sizeof ds);
  memset(&pr, 0, sizeof pr);
  print_header(&opts);
  if (state_init(&s) != 0) {
    fprintf(stderr, "bench_rope: setup failed\n");
    return 1;
  }
  rc |= run_checks(&s) != 0;
  fflush(stdout);
  rc |= bench_cache(&s, &opts, &cs);
  fflush(stdout);
  rc |= bench_prefill_f32(&s, POSENC_ROPE_NEOX, &opts, &ps);
  fflush(stdout);
  rc |= bench_prefill_f32(&s, POSENC_ROPE_GPTJ, &opts, &ps);
  fflush(stdout);
  rc |= bench_prefill_half(&s, POSENC_DTYPE_F16, &opts, &ps);
  fflush(stdout);
  rc |= bench_prefill_half(&s, POSENC_DTYPE_BF16, &opts, &ps);
  fflush(stdout);
  rc |= bench_decode(&s, &opts, &ds);
  fflush(stdout);
#ifdef BENCH_HAVE_PROTO
  rc |= bench_proto(&s, &opts, &pr);
#endif
  if (!opts.cli.smoke) print_targets(&cs, &ps, &ds, &pr);
  printf("\nbench_rope: %.1f s\n", now_s() - t0);
  state_free(&s);
  return bench_json_close(&json) != 0 || rc;
}
