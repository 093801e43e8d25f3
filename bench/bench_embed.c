/* bench_embed - posenc's masked add (posenc_embed_forward / _backward) against a STREAM add, a
 * plain C loop and its -O3 autovectorized twin, on every backend this CPU runs, one thread.
 *
 *   masked add   y = x*sqrt(D) + P[t], f32, one batch row of `tokens` tokens, a table of as many
 *                rows (RANGE positions): bytes moved = read x + read P + write y
 *   STREAM add   c[i] = a[i] + b[i] over the same 3 * tokens * D * 4 bytes: plain C -O3, and
 *                with non-temporal stores (SSE2 intrinsics, x86) where the other rows use them
 *   backward     grad_x = g*scale and grad_table += g: read g, write grad_x, read+write table
 *   sinusoidal   the same add with table.data NULL: rows computed on the fly (no table read)
 *
 * Each method runs in round-robin rounds; the median of the rounds is reported. Targets (issue
 * 4): forward >= 90% of the STREAM add at 4096 x 4096 (DRAM) and >= 80% at 4096 x 512 (cache);
 * backward within 1.5x of forward. Before timing, every posenc row and plain loop is checked bit for
 * bit against posenc's scalar backend. Run it pinned: taskset -c 1 build/bench/bench_embed [rounds]
 * Usage: bench_embed [rounds] [--smoke] [--json FILE] [--label NAME]
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, posix_memalign, sysconf, uname */
#include <stdint.h>
#include <stdlib.h>
#include "posenc.h"
#include "bench_util.h"
#include "bench_json.h"
#include "embed_loops.h"
#if defined(__SSE2__)
#  include <emmintrin.h>
#  define BENCH_HAVE_NT 1
#endif

typedef struct shape { size_t tokens, dim; const char *what; } shape;

static float *xalloc(size_t n) {
  void *p = bench_alloc64(n * sizeof(float));
  if (!p) { fprintf(stderr, "bench_embed: out of memory\n"); exit(1); }
  return (float *)p;
}

#if defined(BENCH_HAVE_NT)
static void stream_add_nt(float *c, const float *a, const float *b, size_t n) {
  size_t i;
  for (i = 0; i + 8 <= n; i += 8) {
    _mm_stream_ps(c + i, _mm_add_ps(_mm_load_ps(a + i), _mm_load_ps(b + i)));
    _mm_stream_ps(c + i + 4, _mm_add_ps(_mm_load_ps(a + i + 4), _mm_load_ps(b + i + 4)));
  }
  for (; i < n; i++) c[i] = a[i] + b[i];
  _mm_sfence();
}
#endif

enum { M_STREAM_O3, M_STREAM_NT, M_LOOP_SCALAR, M_LOOP_O3, M_FWD, M_BWD, M_SIN, M_COUNT };
typedef struct method { int kind, isa; const char *id; char name[64]; double med; } method;
#define MAX_METHODS (4 + 3 * POSENC_ISA_COUNT) /* the floors and loops, then 3 rows per backend */

typedef struct state {
  size_t T, D;
  float *x, *y, *P, *g, *gt;
  posenc_embed_config cfg, cfg_sin;
  posenc_embed_tokens tk;
  posenc_embed_tensor tx, ty, tg;
} state;

static int run(const method *m, state *s) {
  size_t n = s->T * s->D;
  switch (m->kind) {
    case M_STREAM_O3: stream_add_o3(s->y, s->x, s->P, n); return 0;
#if defined(BENCH_HAVE_NT)
    case M_STREAM_NT: stream_add_nt(s->y, s->x, s->P, n); return 0;
#endif
    case M_LOOP_SCALAR: embed_loop_scalar(s->y, s->x, s->P, s->T, s->D, s->cfg.scale); return 0;
    case M_LOOP_O3: embed_loop_o3(s->y, s->x, s->P, s->T, s->D, s->cfg.scale); return 0;
    case M_FWD: return posenc_embed_forward(&s->cfg, &s->tk, &s->tx, &s->ty);
    case M_BWD: return posenc_embed_backward(&s->cfg, &s->tk, &s->tg, &s->ty, s->gt, 0);
    case M_SIN: return posenc_embed_forward(&s->cfg_sin, &s->tk, &s->tx, &s->ty);
  }
  return -1;
}

static double bytes_of(const method *m, const state *s) {
  double e = (double)s->T * (double)s->D * 4.0;
  return m->kind == M_BWD ? 4.0 * e : m->kind == M_SIN ? 2.0 * e : 3.0 * e;
}

/* Every posenc row and plain loop against posenc scalar (forward, backward: grad_x and the table's
 * gradient, on the fly), bit for bit; the number of rows that differ. */
static int check_bits(const method *m, size_t nm, state *s) {
  static const int kinds[3] = {M_FWD, M_BWD, M_SIN};
  size_t i, bytes = s->T * s->D * sizeof(float);
  float *ref_y = xalloc(s->T * s->D), *ref_gt = xalloc(s->T * s->D);
  int bad = 0, k;
  for (k = 0; k < 3; k++) {
    method ref;
    ref.kind = kinds[k];
    memset(s->gt, 0, bytes);
    posenc_isa_set(POSENC_ISA_SCALAR);
    if (run(&ref, s) != 0) { fprintf(stderr, "bench_embed: posenc scalar failed\n"); exit(1); }
    memcpy(ref_y, s->y, bytes);
    memcpy(ref_gt, s->gt, bytes);
    for (i = 0; i < nm; i++) {
      int loop = m[i].kind == M_LOOP_SCALAR || m[i].kind == M_LOOP_O3;
      if (m[i].kind != kinds[k] && !(loop && kinds[k] == M_FWD)) continue;
      memset(s->y, 0, bytes);
      memset(s->gt, 0, bytes);
      posenc_isa_set(m[i].isa < 0 ? POSENC_ISA_AUTO : (posenc_isa)m[i].isa);
      if (run(&m[i], s) != 0 || memcmp(s->y, ref_y, bytes) != 0 || memcmp(s->gt, ref_gt, bytes) != 0) {
        printf("  check: %s differs from posenc scalar\n", m[i].name);
        bad++;
      }
    }
  }
  posenc_isa_set(POSENC_ISA_AUTO);
  bench_free64(ref_y);
  bench_free64(ref_gt);
  return bad;
}

static void json_shape(bench_json *j, const method *m, size_t nm, const state *s, int rounds) {
  bench_rec rec[MAX_METHODS];
  char size[64];
  size_t i;
  for (i = 0; i < nm; i++) {
    static const char *const kernel[M_COUNT] = {"embed_add_f32", "embed_add_f32", "embed_add_f32", "embed_add_f32",
                                                "embed_add_f32", "embed_add_backward_f32", "embed_add_sinusoidal_f32"};
    int posenc = m[i].kind >= M_FWD, is_floor = m[i].kind <= M_STREAM_NT;
    bench_rec x;
    x.kernel = kernel[m[i].kind];
    x.backend = m[i].id;
    x.impl = posenc ? "posenc" : is_floor ? "floor" : "loop";
    x.seconds = m[i].med;
    x.elems = (double)s->T * (double)s->D;
    x.bytes = bytes_of(&m[i], s);
    x.reps = rounds;
    rec[i] = x;
  }
  snprintf(size, sizeof size, "tokens=%zu,d=%zu", s->T, s->D);
  bench_json_group(j, size, "element", "median", rec, nm);
}

/* 1 if a row's bits differ from posenc scalar's. */
static int bench_shape(const shape *sh, int rounds, int smoke, bench_json *j) {
  state s;
  method m[MAX_METHODS];
  size_t nm = 0, i, n = sh->tokens * sh->dim;
  double *times;
  int k, isa, fwd_best = -1, bwd_best = -1, bad;
  double stream_best = 0.0;
  memset(&s, 0, sizeof s);
  s.T = sh->tokens; s.D = sh->dim;
  s.x = xalloc(n); s.y = xalloc(n); s.P = xalloc(n); s.g = xalloc(n); s.gt = xalloc(n);
  for (i = 0; i < n; i++) { s.x[i] = (float)(i % 97) * 0.01f; s.P[i] = (float)(i % 89) * 0.02f; s.g[i] = 0.001f; s.gt[i] = 0.0f; }
  s.cfg = posenc_embed_default(s.D);
  s.cfg.table.data = s.P; s.cfg.table.dtype = POSENC_DTYPE_F32; s.cfg.table.n_rows = s.T; s.cfg.table.dim = s.D;
  s.cfg_sin = posenc_embed_default(s.D);
  memset(&s.tk, 0, sizeof s.tk); s.tk.batch = 1; s.tk.tokens = s.T;
  s.tx.data = s.x; s.tx.dtype = POSENC_DTYPE_F32; s.ty = s.tx; s.ty.data = s.y; s.tg = s.tx; s.tg.data = s.g;

#define ADD(k_, isa_, id_, ...) do { m[nm].kind = (k_); m[nm].isa = (isa_); m[nm].id = (id_); \
    snprintf(m[nm].name, sizeof m[nm].name, __VA_ARGS__); nm++; } while (0)
  ADD(M_STREAM_O3, -1, "stream_add_o3", "STREAM add, C -O3");
#if defined(BENCH_HAVE_NT)
  ADD(M_STREAM_NT, -1, "stream_add_sse2_nt", "STREAM add, SSE2 non-temporal");
#endif
  ADD(M_LOOP_SCALAR, -1, "loop_o2", "plain C loop -O2 no-vec");
  ADD(M_LOOP_O3, -1, "loop_o3", "plain C loop -O3 autovec");
  BK_EACH_USABLE(isa) {
    const char *id = posenc_isa_name((posenc_isa)isa);
    ADD(M_FWD, isa, id, "posenc forward %s", id);
    ADD(M_BWD, isa, id, "posenc backward %s", id);
    ADD(M_SIN, isa, id, "posenc sinusoidal on the fly %s", id);
  }
#undef ADD
  bad = check_bits(m, nm, &s);
  times = (double *)malloc(nm * (size_t)rounds * sizeof *times);
  for (i = 0; i < nm; i++) { /* warm-up, and a check that every call works */
    posenc_isa_set(m[i].isa < 0 ? POSENC_ISA_AUTO : (posenc_isa)m[i].isa);
    if (run(&m[i], &s) != 0) { fprintf(stderr, "bench_embed: %s failed\n", m[i].name); exit(1); }
  }
  for (k = 0; k < rounds; k++)
    for (i = 0; i < nm; i++) {
      double t0;
      posenc_isa_set(m[i].isa < 0 ? POSENC_ISA_AUTO : (posenc_isa)m[i].isa);
      t0 = now_s();
      run(&m[i], &s);
      times[i * (size_t)rounds + (size_t)k] = now_s() - t0;
    }
  posenc_isa_set(POSENC_ISA_AUTO);
  for (i = 0; i < nm; i++) {
    qsort(times + i * (size_t)rounds, (size_t)rounds, sizeof *times, cmp_double);
    m[i].med = times[i * (size_t)rounds + (size_t)rounds / 2];
    if ((m[i].kind == M_STREAM_O3 || m[i].kind == M_STREAM_NT) && bytes_of(&m[i], &s) / m[i].med > stream_best)
      stream_best = bytes_of(&m[i], &s) / m[i].med;
    if (m[i].kind == M_FWD && (fwd_best < 0 || m[i].med < m[fwd_best].med)) fwd_best = (int)i;
    if (m[i].kind == M_BWD && (bwd_best < 0 || m[i].med < m[bwd_best].med)) bwd_best = (int)i;
  }
  printf("\n%s: %zu tokens x d=%zu f32 (x, P, y %.1f MiB each), median of %d rounds\n", sh->what, s.T, s.D,
         (double)n * 4.0 / 1048576.0, rounds);
  printf("  %-36s %10s %9s %12s\n", "method", "ms", "GB/s", "vs STREAM");
  for (i = 0; i < nm; i++) {
    double bw = bytes_of(&m[i], &s) / m[i].med;
    printf("  %-36s %10.3f %9.2f %11.1f%%\n", m[i].name, m[i].med * 1e3, bw * 1e-9, 100.0 * bw / stream_best);
  }
  printf("  bits: %s\n", bad ? "DIFFER (above)" : "every posenc backend and plain loop = posenc scalar");
  json_shape(j, m, nm, &s, rounds);
  if (!smoke) {
    double fr = bytes_of(&m[fwd_best], &s) / m[fwd_best].med / stream_best, target = s.D >= 4096 ? 0.90 : 0.80;
    double br = m[bwd_best].med / m[fwd_best].med;
    printf("  target: forward (%s) %.1f%% of the best STREAM add, want >= %.0f%%: %s\n", m[fwd_best].name,
           100.0 * fr, 100.0 * target, fr >= target ? "PASS" : "MISS");
    printf("  target: backward (%s) %.2fx the forward time, want <= 1.5x: %s\n", m[bwd_best].name, br,
           br <= 1.5 ? "PASS" : "MISS");
  }
  free(times);
  bench_free64(s.x); bench_free64(s.y); bench_free64(s.P); bench_free64(s.g); bench_free64(s.gt);
  return bad != 0;
}

int main(int argc, char **argv) {
  static const shape shapes[2] = {{4096, 4096, "DRAM"}, {4096, 512, "cache (L3)"}};
  static const shape smoke_shapes[2] = {{16, 256, "smoke"}, {7, 36, "smoke, d % 8 = 4"}};
  const shape *sh = shapes;
  int rounds = 15, rc = 0;
  bench_cli cli;
  bench_json json;
  if (bench_rounds_args("bench_embed", argc, argv, &cli, &rounds) != 0) return 2;
  if (cli.smoke) sh = smoke_shapes;
  if (bench_json_open(&json, "embed", &cli) != 0) return 1;
  bench_banner("bench_embed", &cli);
  rc |= bench_shape(&sh[0], rounds, cli.smoke, &json);
  rc |= bench_shape(&sh[1], cli.smoke ? 1 : rounds * 4, cli.smoke, &json);
  return bench_json_close(&json) != 0 || rc;
}
