/* Many threads at once. 16 threads, released together by a barrier, make their first posenc calls
 * concurrently (so they race through the first-use backend selection), then run every kernel family
 * ITERS times on their own buffers: sinusoidal tables, RoPE caches and rotations (cached and on the
 * fly, f32/f16/bf16), the masked embedding add, ALiBi and T5 biases, the self-test.
 * Afterwards the main thread recomputes each thread's work alone, on the backend the threads chose
 * and on scalar (backends are bit-identical): every output hash must match.
 * POSENC_ISA in the environment must be honoured by that racing first use too; POSENC_EXPECT_ISA
 * names the backend the first use must pick (the nehalem setup). The sanitizers CI stage runs this
 * under ThreadSanitizer and valgrind. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdlib.h>
#include "posenc.h"
#include "testlib.h"

enum {
  NTHREADS = 16, ITERS = 24,
  DIM = 96, SEQ = 24, BATCH = 2,                            /* tables and the embedding add */
  HEAD_DIM = 64, Q_HEADS = 4, K_HEADS = 2, CACHE_ROWS = 64, /* RoPE */
  HEADS = 4, QLEN = 8, KLEN = 40                            /* score tiles */
};

enum { K_TABLE, K_ROPE_CACHE, K_ROPE_CACHED, K_ROPE_FLY, K_EMBED, K_ALIBI, K_T5, K_COUNT };
static const char *const kernel_names[K_COUNT] = {
  "sinusoidal table", "rope cache", "rope apply (cache)", "rope apply (on the fly)", "embed forward",
  "alibi add", "t5 bias add"};

/* One thread's buffers (the main thread's reference runs use its own). */
typedef struct workspace {
  float table[SEQ * DIM];
  float cache[CACHE_ROWS * 2 * HEAD_DIM];  /* FULL layout: 4h = 2 * HEAD_DIM elements a row */
  float q[SEQ * Q_HEADS * HEAD_DIM], k[SEQ * K_HEADS * HEAD_DIM];
  float x[BATCH * SEQ * DIM], y[BATCH * SEQ * DIM];
  float scores[HEADS * QLEN * KLEN], t5_table[256 * HEADS], slopes[HEADS];
  POSENC_ROPE_STORAGE(HEAD_DIM) rope_st; /* rope_st.rope: made in place by each round */
  posenc_t5_plan plan;
} workspace;

typedef struct run_result {
  posenc_isa first_isa;       /* the backend active right after this thread's first call */
  posenc_isa isa_seen[ITERS]; /* posenc_isa_active() after each round */
  int requested;              /* posenc_isa_requested()'s state and isa */
  posenc_isa requested_isa;
  posenc_status selftest;     /* the first failed self-test, else OK */
  posenc_status failed;       /* the first failed kernel call (failed_kernel), else OK */
  int failed_kernel;
  uint64_t hash[ITERS][K_COUNT];
} run_result;

static workspace spaces[NTHREADS + 1];  /* the last: the main thread's */
static run_result results[NTHREADS];
static pthread_barrier_t start_line;

/* n elements of dt from the stream, uniform in [-2, 2). */
static void fill_random(void *buf, posenc_dtype dt, size_t n, uint64_t *rng) {
  size_t i, es = posenc_dtype_size(dt);
  for (i = 0; i < n; i++)
    tl_store((unsigned char *)buf + i * es, dt, (float)((double)(tl_splitmix64(rng) >> 11) * 0x1p-51 - 2.0));
}

static void record(run_result *r, int kernel, int iter, posenc_status st, const void *out, size_t bytes,
                   size_t elem) {
  if (st != POSENC_OK && r->failed == POSENC_OK) { r->failed = st; r->failed_kernel = kernel; }
  r->hash[iter][kernel] = tl_xxh3_le(out, bytes, elem);
}

/* Fresh q and k from data_rng, rotated with the cache (view) or on the fly (NULL); k's hash is
 * folded into q's. */
static void rope_rotate(workspace *w, run_result *r, int iter, int kernel, const posenc_rope_cache_view *view,
                        const posenc_rope_positions *pos, posenc_dtype dt, uint64_t data_rng) {
  const size_t es = posenc_dtype_size(dt), qn = SEQ * Q_HEADS * HEAD_DIM, kn = SEQ * K_HEADS * HEAD_DIM;
  posenc_rope_tensor q = {NULL, POSENC_DTYPE_F32, Q_HEADS, 0, 0, 0}, k = {NULL, POSENC_DTYPE_F32, K_HEADS, 0, 0, 0};
  q.data = w->q; k.data = w->k;
  q.dtype = k.dtype = dt;
  fill_random(w->q, dt, qn, &data_rng);
  fill_random(w->k, dt, kn, &data_rng);
  record(r, kernel, iter, posenc_rope_apply(&w->rope_st.rope, view, pos, &q, &k, POSENC_ROPE_FORWARD), w->q, qn * es, es);
  r->hash[iter][kernel] ^= tl_xxh3_le(w->k, kn * es, es) * 3;
}

static void rope_work(workspace *w, run_result *r, int iter, posenc_dtype dt, uint64_t *rng) {
  const size_t es = posenc_dtype_size(dt);
  posenc_rope_config cfg = posenc_rope_default(HEAD_DIM);
  posenc_rope_cache_spec spec = {POSENC_ROPE_CACHE_HALF, POSENC_DTYPE_F32, 0};
  posenc_rope_cache_view view;
  posenc_rope_positions pos = {1, SEQ, NULL, 0};
  posenc_status st;
  size_t bytes = sizeof w->cache;
  cfg.style = iter % 2 ? POSENC_ROPE_GPTJ : POSENC_ROPE_NEOX;
  st = posenc_rope_init(&w->rope_st.rope, sizeof w->rope_st, &cfg);
  spec.layout = (posenc_rope_cache_layout)(iter % 3);
  spec.dtype = dt;
  if (st == POSENC_OK) st = posenc_rope_cache_bytes(&w->rope_st.rope, &spec, CACHE_ROWS, &bytes);
  if (st == POSENC_OK) st = posenc_rope_cache_table(&w->rope_st.rope, &spec, 0, CACHE_ROWS, w->cache, bytes);
  record(r, K_ROPE_CACHE, iter, st, w->cache, bytes, es);

  /* the same q and k rotated with the cache, then on the fly */
  view.data = w->cache; view.n_rows = CACHE_ROWS; view.spec = spec;
  pos.start = (int32_t)(tl_splitmix64(rng) % (CACHE_ROWS - SEQ + 1));
  rope_rotate(w, r, iter, K_ROPE_CACHED, &view, &pos, dt, *rng);
  rope_rotate(w, r, iter, K_ROPE_FLY, NULL, &pos, dt, *rng);
}

static void embed_work(workspace *w, run_result *r, int iter, posenc_dtype dt, uint64_t *rng) {
  const size_t es = posenc_dtype_size(dt);
  posenc_embed_config cfg = posenc_embed_default(DIM);
  posenc_embed_tokens tokens = {BATCH, SEQ, POSENC_POS_RANGE, 0, NULL, NULL, 0, NULL};
  posenc_embed_tensor x = {NULL, POSENC_DTYPE_F32, 0, 0}, y = {NULL, POSENC_DTYPE_F32, 0, 0};
  if (iter % 2) { /* rows from the thread's own sinusoidal table (positions 0..SEQ-1), with dropout */
    cfg.table.data = w->table; cfg.table.dtype = dt; cfg.table.n_rows = SEQ; cfg.table.dim = DIM;
    cfg.dropout_p = 0.25;
    cfg.dropout_seed = tl_splitmix64(rng);
  } else {
    tokens.start = (int32_t)(tl_splitmix64(rng) % 5000);
  }
  fill_random(w->x, dt, BATCH * SEQ * DIM, rng);
  x.data = w->x; y.data = w->y;
  x.dtype = y.dtype = dt;
  record(r, K_EMBED, iter, posenc_embed_forward(&cfg, &tokens, &x, &y), w->y, BATCH * SEQ * DIM * es, es);
}

static void bias_work(workspace *w, run_result *r, int iter, uint64_t *rng) {
  const posenc_dtype dt = iter % 2 ? POSENC_DTYPE_F16 : POSENC_DTYPE_F32;
  const size_t es = posenc_dtype_size(dt), n = HEADS * QLEN * KLEN;
  const posenc_score_mask mask = {1, iter % 3 ? 0 : 16, NULL};
  posenc_score_tile tile = {NULL, POSENC_DTYPE_F32, HEADS, QLEN, KLEN, 0, 0, KLEN - QLEN, 0};
  posenc_table t5 = {NULL, POSENC_DTYPE_F32, 0, HEADS, 0};
  posenc_t5_buckets cfg;
  posenc_status st;
  unsigned idx = (unsigned)(tl_splitmix64(rng) % 128);
  tile.scores = w->scores;
  tile.dtype = dt;
  tile.q_pos += (int32_t)(tl_splitmix64(rng) % 1000);
  tile.k_pos = tile.q_pos - (KLEN - QLEN);

  fill_random(w->scores, dt, n, rng);
  st = posenc_alibi_slopes(HEADS, 8.0, w->slopes);
  if (st == POSENC_OK) st = posenc_alibi_add(&tile, &mask, (posenc_alibi_form)(iter % 3), 0, w->slopes);
  record(r, K_ALIBI, iter, st, w->scores, n * es, es);

  while (!tl_t5_config(idx, &cfg.num_buckets, &cfg.max_distance, &cfg.bidirectional)) idx = (idx + 1) % 128;
  fill_random(w->scores, dt, n, rng);
  fill_random(w->t5_table, POSENC_DTYPE_F32, cfg.num_buckets * HEADS, rng);
  t5.data = w->t5_table;
  t5.n_rows = cfg.num_buckets;
  st = posenc_t5_plan_init(&w->plan, &cfg);
  if (st == POSENC_OK) st = posenc_t5_bias_add(&tile, &mask, &w->plan, &t5, 0);
  record(r, K_T5, iter, st, w->scores, n * es, es);
}

/* Thread `seed`'s work, the same whichever thread runs it: ITERS rounds of every kernel family. */
static void work(workspace *w, run_result *r, unsigned seed) {
  int iter;
  for (iter = 0; iter < ITERS; iter++) {
    uint64_t rng = seed * 1000003ull + (uint64_t)iter;
    const posenc_dtype dt = (posenc_dtype)(iter % 3);
    const size_t es = posenc_dtype_size(dt);
    posenc_sinusoidal_params p = posenc_sinusoidal_default(DIM);
    posenc_status st;
    p.dtype = dt;
    p.layout = iter % 2 ? POSENC_LAYOUT_SPLIT : POSENC_LAYOUT_INTERLEAVED;
    /* odd iterations feed the embedding add: their table must hold positions 0.. */
    st = posenc_sinusoidal_table(&p, iter % 2 ? 0 : (int32_t)(tl_splitmix64(&rng) % 100000) - 50000, SEQ,
                                 w->table, sizeof w->table);
    record(r, K_TABLE, iter, st, w->table, SEQ * DIM * es, es);
    rope_work(w, r, iter, dt, &rng);
    embed_work(w, r, iter, dt, &rng);
    bias_work(w, r, iter, &rng);
    st = posenc_selftest();
    if (st != POSENC_OK && r->selftest == POSENC_OK) r->selftest = st;
    r->isa_seen[iter] = posenc_isa_active();
  }
}

static void *thread_main(void *arg) {
  const unsigned k = (unsigned)(size_t)arg;
  run_result *r = &results[k];
  pthread_barrier_wait(&start_line);
  /* the first call, which selects the backend: one of four entries */
  switch (k % 4) {
    case 0: break;
    case 1: posenc_isa_requested(NULL); break;
    case 2: r->selftest = posenc_selftest(); break;
    default: {
      posenc_sinusoidal_params p = posenc_sinusoidal_default(DIM);
      r->failed = posenc_sinusoidal_table(&p, 0, SEQ, spaces[k].table, sizeof spaces[k].table);
    }
  }
  r->first_isa = posenc_isa_active();
  r->requested = posenc_isa_requested(&r->requested_isa);
  work(&spaces[k], r, k);
  return NULL;
}

/* Recomputes every thread's work alone on the active backend and compares the hashes. */
static void check_against_reference(const char *backend) {
  static run_result ref;
  unsigned k;
  int iter, kernel;
  for (k = 0; k < NTHREADS; k++) {
    memset(&ref, 0, sizeof ref);
    work(&spaces[NTHREADS], &ref, k);
    CHECK(ref.failed == POSENC_OK, "%s reference: %s failed: %s", backend, kernel_names[ref.failed_kernel],
          posenc_strerror(ref.failed));
    for (iter = 0; iter < ITERS; iter++)
      for (kernel = 0; kernel < K_COUNT; kernel++)
        CHECK(results[k].hash[iter][kernel] == ref.hash[iter][kernel], "thread %u iteration %d: %s differs from %s",
              k, iter, kernel_names[kernel], backend);
  }
}

int main(void) {
  pthread_t th[NTHREADS];
  const char *env = getenv("POSENC_ISA"), *expect = getenv("POSENC_EXPECT_ISA");
  posenc_isa isa, requested_isa, want;
  int requested;
  unsigned k;
  int iter;

  /* no posenc call before this: the first use is the threads' */
  CHECK(pthread_barrier_init(&start_line, NULL, NTHREADS) == 0, "barrier");
  for (k = 0; k < NTHREADS; k++)
    CHECK(pthread_create(&th[k], NULL, thread_main, (void *)(size_t)k) == 0, "thread %u not started", k);
  for (k = 0; k < NTHREADS; k++) pthread_join(th[k], NULL);
  pthread_barrier_destroy(&start_line);

  isa = posenc_isa_active();
  requested = posenc_isa_requested(&requested_isa);
  printf("%d threads x %d rounds, first use chose %s (POSENC_ISA %s)\n", NTHREADS, ITERS, posenc_isa_name(isa),
         env ? env : "unset");
  for (k = 0; k < NTHREADS; k++) {
    const run_result *r = &results[k];
    CHECK(r->first_isa == isa, "thread %u first saw %s, main %s", k, posenc_isa_name(r->first_isa),
          posenc_isa_name(isa));
    for (iter = 0; iter < ITERS; iter++)
      CHECK(r->isa_seen[iter] == isa, "thread %u round %d ran on %s", k, iter, posenc_isa_name(r->isa_seen[iter]));
    CHECK(r->requested == requested && (requested != 1 || r->requested_isa == requested_isa),
          "thread %u: POSENC_ISA state %d, main %d", k, r->requested, requested);
    CHECK(r->selftest == POSENC_OK, "thread %u: self-test %s", k, posenc_strerror(r->selftest));
    CHECK(r->failed == POSENC_OK, "thread %u: %s failed: %s", k, kernel_names[r->failed_kernel],
          posenc_strerror(r->failed));
  }
  CHECK(requested == (env && *env ? (posenc_isa_from_name(env, &want) == POSENC_OK ? 1 : -1) : 0),
        "POSENC_ISA=%s: requested state %d", env ? env : "(unset)", requested);
  if (requested == 1 && want != POSENC_ISA_AUTO && posenc_isa_compiled(want) && posenc_isa_supported(want))
    CHECK(isa == want, "POSENC_ISA=%s not honoured by the threads' first use: %s", env, posenc_isa_name(isa));
  if (expect) CHECK(strcmp(posenc_isa_name(isa), expect) == 0, "first use chose %s, expected %s",
                    posenc_isa_name(isa), expect);

  check_against_reference(posenc_isa_name(isa));
  CHECK(posenc_isa_set(POSENC_ISA_SCALAR) == POSENC_OK, "scalar");
  check_against_reference("scalar");
  return tl_summary();
}
