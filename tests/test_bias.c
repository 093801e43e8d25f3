/* Position biases inside attention (posenc.h, "Position biases inside attention"), checked
 * against references written here from formulas.md §4, §5, §7 and the header's contract:
 *   - ALiBi slopes: the §4.1 reference values, the closed form for every head count (double exp2),
 *     MPT's gen_slopes and ggml's rule re-implemented (Bloom's float32 recipe: differences printed);
 *   - the score-tile kernels (posenc_mask_apply, posenc_alibi_add, posenc_t5_bias_add) bit for
 *     bit against a per-element reference on every backend: forms, masks, offsets, strides, f32
 *     and f16 tiles, special values, memory around and between the rows untouched; MPT, Bloom and
 *     the softmax equivalence of the causal forms;
 *   - T5 buckets: the §5.1 boundary tables and an exact reference (double + an exact tie test by
 *     prime factorisation); DeBERTa buckets and relative positions; Transformer-XL's R against
 *     the core's sinusoidal rows; the attention scales against their formulas;
 *   - XXH3-64 goldens of canonical outputs, computed once from the references here;
 *   - every bad input: its error code, and nothing written.
 * Built with -DTEST_BIAS_LIGHT=1 for emulated (cross) runs: fewer random cases, head counts and
 * DeBERTa distances, the same checks.
 * `test_bias --print` prints the reference goldens. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include "posenc.h"
#include "testlib.h"
#include "backends.h"

#ifndef TEST_BIAS_LIGHT
#define TEST_BIAS_LIGHT 0
#endif
#define NRAND (TEST_BIAS_LIGHT ? 40 : 300)   /* random tile cases per backend */
#define DEBERTA_SPAN (TEST_BIAS_LIGHT ? 1000 : 3000) /* |r| checked against the reference */

/* The head counts the slope sweeps take after n: every one to 256; light, every one to 40, then
 * each power of two to 256 and its neighbours (the Cortex-M4 computes the double references in
 * software: the whole sweep took 30 s there). */
static size_t next_head_count(size_t n) {
  static const size_t light[] = {63, 64, 65, 127, 128, 129, 255, 256};
  size_t i;
  if (!TEST_BIAS_LIGHT || n < 40) return n + 1;
  for (i = 0; i < sizeof light / sizeof light[0]; i++)
    if (light[i] > n) return light[i];
  return 257;
}

#define F32 POSENC_DTYPE_F32
#define F16 POSENC_DTYPE_F16
#define BF16 POSENC_DTYPE_BF16

static uint64_t rng_state = 0x5eed0005ull;
static uint64_t rnd(uint64_t n) { return tl_splitmix64(&rng_state) % n; }
static size_t esz(posenc_dtype dt) { return dt == F32 ? 4 : 2; }
static uint32_t fbits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

/* Distance in f32 ulps (finite, same sign assumed by callers; large when signs differ). */
static int64_t ulp_diff(float a, float b) {
  int64_t ia = (int32_t)fbits(a), ib = (int32_t)fbits(b);
  if (ia < 0) ia = INT32_MIN - ia;
  if (ib < 0) ib = INT32_MIN - ib;
  return ia > ib ? ia - ib : ib - ia;
}

/* ============================================================================================
 * Exact bucket references without big numbers. A bucket boundary is where a real quotient of
 * logarithms is an integer t: ln(a/e)/ln(m/e) * w = t  <=>  a^w e^t = m^t e^w. The quotient is
 * computed in double; when it lies within 1e-9 of an integer, the equality is decided exactly
 * by comparing prime exponents on both sides.
 * ========================================================================================== */
static long unresolved; /* near-integers that were not exact ties: the double could be wrong */

/* a^wa * b^wb == c^wc * d^wd for positive integers (exponents >= 0)? */
static int pow_eq(uint64_t a, long wa, uint64_t b, long wb, uint64_t c, long wc, uint64_t d, long wd) {
  uint64_t p;
  for (p = 2; a > 1 || b > 1 || c > 1 || d > 1; p++) {
    long l = 0, r = 0;
    if (p * p > a && p * p > b && p * p > c && p * p > d) {
      /* what is left of each is 1 or a prime: compare those primes as wholes */
      uint64_t v[4] = {a, b, c, d}, q = 0;
      long w[4] = {wa, wb, -wc, -wd}, s = 0;
      int i;
      for (i = 0; i < 4; i++) if (v[i] > 1 && (q == 0 || v[i] < q)) q = v[i];
      for (i = 0; i < 4; i++) if (v[i] == q) { s += w[i]; v[i] = 1; }
      if (s != 0) return 0;
      a = v[0]; b = v[1]; c = v[2]; d = v[3];
      p--; /* the same p again: more leftover primes */
      continue;
    }
    while (a % p == 0) { a /= p; l += wa; }
    while (b % p == 0) { b /= p; l += wb; }
    while (c % p == 0) { c /= p; r += wc; }
    while (d % p == 0) { d /= p; r += wd; }
    if (l != r) return 0;
  }
  return 1;
}

/* T5 bucket of relative position r = k - q (formulas.md §5.1, floor of the exact quotient). */
static int32_t ref_t5(uint32_t nb, uint32_t md, int bidir, int64_t r) {
  int64_t n = nb, off = 0, a, e, w, t;
  double x, nx;
  if (bidir) { n /= 2; off = r > 0 ? n : 0; a = r < 0 ? -r : r; }
  else a = r < 0 ? -r : 0;
  e = n / 2;
  if (a < e) return (int32_t)(off + a);
  w = n - e;
  x = (double)w * log((double)a / (double)e) / log((double)md / (double)e);
  t = (int64_t)floor(x);
  nx = floor(x + 0.5);
  if (fabs(x - nx) < 1e-9 * (nx + 1)) {
    if (pow_eq((uint64_t)a, (long)w, (uint64_t)e, (long)nx, (uint64_t)md, (long)nx, (uint64_t)e, (long)w)) t = (int64_t)nx;
    else unresolved++;
  }
  if (e + t > n - 1) t = n - 1 - e;
  return (int32_t)(off + e + t);
}

/* DeBERTa bucket of r = q - k: ceiling of the exact quotient, not clamped. */
static int32_t ref_deberta(uint32_t bs, uint32_t mp, int64_t r) {
  int64_t mid = bs / 2, a = r < 0 ? -r : r, t, L = (int64_t)mp - 1;
  double x, nx;
  if (bs == 0 || a <= mid) return (int32_t)r;
  x = (double)(mid - 1) * log((double)a / (double)mid) / log((double)L / (double)mid);
  t = (int64_t)ceil(x);
  nx = floor(x + 0.5);
  if (fabs(x - nx) < 1e-9 * (nx + 1)) {
    /* (a/mid)^(mid-1) == (L/mid)^t  <=>  a^(mid-1) mid^t == L^t mid^(mid-1) */
    if (pow_eq((uint64_t)a, (long)(mid - 1), (uint64_t)mid, (long)nx, (uint64_t)L, (long)nx, (uint64_t)mid, (long)(mid - 1)))
      t = (int64_t)nx;
    else unresolved++;
  }
  return (int32_t)(r < 0 ? -(mid + t) : mid + t);
}

/* ============================================================================================
 * ALiBi slopes
 * ========================================================================================== */
/* Exponent of head h (0-based) in the original get_slopes (formulas.md §4.1, scaled by B/8). */
static double ref_slope_exp(size_t n, double B, size_t h) {
  size_t c = 1;
  while (c * 2 <= n) c *= 2;
  return h < c ? -B * (double)(h + 1) / (double)c : -B * (double)(2 * (h - c) + 1) / (double)(2 * c);
}

static void test_slopes(void) {
  float s[300], canary[4];
  size_t n, h;
  double B;
  int bad = 0;
  /* §4.1 reference values */
  {
    static const double r12[4] = {0.707106781, 0.353553391, 0.176776695, 0.0883883476};
    static const double r20[4] = {0.840896415, 0.594603558, 0.420448208, 0.297301779};
    CHECK(posenc_alibi_slopes(8, 8.0, s) == POSENC_OK, "slopes 8");
    for (h = 0; h < 8; h++) CHECK(s[h] == (float)ldexp(1.0, -(int)h - 1), "n=8 slope %zu: %.9g", h, s[h]);
    CHECK(posenc_alibi_slopes(12, 8.0, s) == POSENC_OK, "slopes 12");
    for (h = 0; h < 8; h++) CHECK(s[h] == (float)ldexp(1.0, -(int)h - 1), "n=12 slope %zu: %.9g", h, s[h]);
    for (h = 0; h < 4; h++) CHECK(fabs(s[8 + h] - r12[h]) <= tl_half_ulp_f32(r12[h]) + 1e-9 * r12[h],
                                  "n=12 slope %zu: %.9g vs %.9g", 8 + h, s[8 + h], r12[h]);
    CHECK(posenc_alibi_slopes(16, 8.0, s) == POSENC_OK, "slopes 16");
    for (h = 0; h < 16; h++) {
      double want = pow(2.0, -0.5 * (double)(h + 1));
      CHECK(fabs(s[h] - want) <= tl_half_ulp_f32(want) && (h % 2 == 0 || s[h] == (float)want),
            "n=16 slope %zu: %.9g vs %.9g", h, s[h], want);
    }
    CHECK(posenc_alibi_slopes(20, 8.0, s) == POSENC_OK, "slopes 20");
    for (h = 0; h < 16; h++) CHECK(fabs(s[h] - pow(2.0, -0.5 * (double)(h + 1))) <= tl_half_ulp_f32(s[h]),
                                   "n=20 slope %zu", h);
    for (h = 0; h < 4; h++) CHECK(fabs(s[16 + h] - r20[h]) <= tl_half_ulp_f32(r20[h]) + 1e-9 * r20[h],
                                  "n=20 slope %zu: %.9g vs %.9g", 16 + h, s[16 + h], r20[h]);
  }
  /* closed form, every head count, several max_bias: double exp2 rounded to f32 (exact for integer
   * exponents, within an ulp otherwise: the double result is rounded twice) */
  {
    static const double Bs[] = {8.0, 4.0, 16.0, 1.0, 2.5, 0.3, 100.0};
    size_t bi;
    for (bi = 0; bi < sizeof Bs / sizeof Bs[0]; bi++) {
      B = Bs[bi];
      for (n = 1; n <= 256; n = next_head_count(n)) {
        if (posenc_alibi_slopes(n, B, s) != POSENC_OK) { bad++; continue; }
        for (h = 0; h < n; h++) {
          double e = ref_slope_exp(n, B, h);
          float want = (float)exp2(e);
          if (e == floor(e) ? s[h] != want : ulp_diff(s[h], want) > 1) {
            if (bad++ < 5) printf("  B=%g n=%zu h=%zu: %.9g, want %.9g\n", B, n, h, s[h], want);
          }
        }
      }
    }
    CHECK(bad == 0, "closed-form slopes: %d differ", bad);
  }
  /* MPT gen_slopes (§4.3), exponents in double: _n = 2^ceil(log2 n), m = arange(1.._n)*(B/_n),
   * slopes = 2^-m, then concat(slopes[1::2], slopes[0::2])[:n] when _n != n */
  {
    static const double Bs[] = {8.0, 4.0, 16.0};
    size_t bi, exact = 0, total = 0;
    bad = 0;
    for (bi = 0; bi < 3; bi++) {
      B = Bs[bi];
      for (n = 1; n <= 256; n = next_head_count(n)) {
        double m[512], order[512];
        size_t N = 1, k, o = 0;
        while (N < n) N *= 2;
        for (k = 0; k < N; k++) m[k] = (double)(k + 1) * (B / (double)N);
        if (N != n) {
          for (k = 1; k < N; k += 2) order[o++] = m[k];
          for (k = 0; k < N; k += 2) order[o++] = m[k];
        } else for (k = 0; k < N; k++) order[o++] = m[k];
        posenc_alibi_slopes(n, B, s);
        for (h = 0; h < n; h++) {
          float want = (float)exp2(-order[h]);
          total++;
          if (-order[h] != ref_slope_exp(n, B, h) || ulp_diff(s[h], want) > 1) {
            if (bad++ < 5) printf("  MPT B=%g n=%zu h=%zu: m %.17g vs %.17g\n", B, n, h, order[h], -ref_slope_exp(n, B, h));
          }
          exact += s[h] == want;
        }
      }
    }
    CHECK(bad == 0, "MPT gen_slopes: %d exponents or slopes differ", bad);
    printf("MPT gen_slopes (double): same exponents for every n swept to 256; %zu of %zu slopes bit-equal\n", exact, total);
  }
  /* ggml (§4.4): 0-based h, m0 = 2^(-B/c), m1 = 2^(-B/2/c), slope = m0^(h+1) or m1^(2(h-c)+1);
   * in double it is the same rule (within an ulp after rounding); its float32 powf is reported */
  {
    size_t f32diff = 0, total = 0;
    int64_t worst = 0;
    bad = 0;
    for (n = 1; n <= 256; n++) {
      size_t c = 1;
      float m0f, m1f;
      double m0, m1;
      while (c * 2 <= n) c *= 2;
      m0 = exp2(-8.0 / (double)c); m1 = exp2(-(8.0 / 2.0) / (double)c);
      m0f = powf(2.0f, -8.0f / (float)c); m1f = powf(2.0f, -(8.0f / 2.0f) / (float)c);
      posenc_alibi_slopes(n, 8.0, s);
      for (h = 0; h < n; h++) {
        double d = h < c ? pow(m0, (double)(h + 1)) : pow(m1, (double)(2 * (h - c) + 1));
        float f = h < c ? powf(m0f, (float)(h + 1)) : powf(m1f, (float)(2 * (h - c) + 1));
        if (ulp_diff(s[h], (float)d) > 1) bad++;
        total++;
        if (f != s[h]) { f32diff++; if (ulp_diff(f, s[h]) > worst) worst = ulp_diff(f, s[h]); }
      }
    }
    CHECK(bad == 0, "ggml rule in double: %d slopes more than an ulp away", bad);
    printf("ggml float32 powf slopes: %zu of %zu differ from ours (worst %lld ulp)\n", f32diff, total, (long long)worst);
  }
  /* Bloom (§4.2): float32 base = fl32(2^(-(2^-(log2 c - 3)))), slopes base^(1..c), then
   * extra_base^(1, 3, ...) with 2c; torch.pow in float32 (powf here): differences printed */
  {
    size_t diff = 0, total = 0;
    int64_t worst = 0;
    for (n = 1; n <= 256; n++) {
      size_t c = 1, k;
      float base, extra;
      while (c * 2 <= n) c *= 2;
      base = (float)pow(2.0, -pow(2.0, -(log2((double)c) - 3.0)));
      extra = (float)pow(2.0, -pow(2.0, -(log2((double)(2 * c)) - 3.0)));
      posenc_alibi_slopes(n, 8.0, s);
      for (k = 0; k < n; k++) {
        float f = k < c ? powf(base, (float)(k + 1)) : powf(extra, (float)(2 * (k - c) + 1));
        total++;
        if (f != s[k]) { diff++; if (ulp_diff(f, s[k]) > worst) worst = ulp_diff(f, s[k]); }
      }
    }
    printf("Bloom float32 base^k slopes: %zu of %zu differ from ours (worst %lld ulp)\n", diff, total, (long long)worst);
  }
  /* bad input: nothing written */
#define BADS(code, heads, b, ptr) do {                                                               \
    memset(canary, TL_CANARY, sizeof canary);                                                        \
    CHECK(posenc_alibi_slopes(heads, b, ptr) == (code), "slopes(%zu, %g): %d", (size_t)(heads), (double)(b), \
          (int)posenc_alibi_slopes(heads, b, ptr));                                                  \
    CHECK(tl_all_canary((unsigned char *)canary, sizeof canary), "slopes(%zu, %g) wrote", (size_t)(heads), (double)(b)); \
  } while (0)
  BADS(POSENC_ERR_SIZE, 0, 8.0, canary);
  BADS(POSENC_ERR_PARAM, 4, 0.0, canary);
  BADS(POSENC_ERR_PARAM, 4, -8.0, canary);
  BADS(POSENC_ERR_PARAM, 4, NAN, canary);
  BADS(POSENC_ERR_PARAM, 4, INFINITY, canary);
  BADS(POSENC_ERR_PARAM, 4, 1e5, canary);
  BADS(POSENC_ERR_PARAM, 4, 100.0 * (1 + DBL_EPSILON), canary);
  BADS(POSENC_ERR_NULL, 4, 8.0, NULL);
  CHECK(posenc_alibi_slopes(1, 100.0, s) == POSENC_OK && s[0] == 0x1p-100f, "max_bias 100 is valid: 2^-100");
  CHECK(posenc_alibi_slopes(1, 8.0, s) == POSENC_OK && s[0] == 1.0f / 256.0f, "one head: 2^-8");
}

/* ============================================================================================
 * Score tiles: one reference for the three kernels
 * ========================================================================================== */
typedef enum { OP_MASK, OP_ALIBI, OP_T5 } op_kind;

typedef struct tcase {
  op_kind op;
  posenc_score_tile t;          /* scores: set by run_case */
  posenc_score_mask m;
  int no_mask;                  /* pass NULL for the mask */
  posenc_alibi_form form;
  int32_t key_origin;
  const float *slopes;
  posenc_t5_buckets cfg;
  posenc_table tab;
  size_t head0;
  int specials;                 /* NaN, inf, -0, subnormals, huge values among the scores */
} tcase;

static size_t tile_rs(const posenc_score_tile *t) { return t->row_stride ? t->row_stride : t->cols; }
static size_t tile_hs(const posenc_score_tile *t) { return t->head_stride ? t->head_stride : t->rows * tile_rs(t); }
static size_t tile_extent(const posenc_score_tile *t) {
  return (t->heads - 1) * tile_hs(t) + (t->rows - 1) * tile_rs(t) + t->cols;
}

static int ref_masked(const posenc_score_mask *m, int64_t q, int64_t k, size_t j) {
  if (!m) return 0;
  return (m->causal && k > q) || (m->window > 0 && q - k >= m->window) || (m->key_keep && m->key_keep[j] == 0);
}

/* The bias of entry (h, q, k) as an f32: ALiBi fl32(m * (float)D), T5 the table entry. */
static float ref_bias(const tcase *c, size_t h, int64_t q, int64_t k) {
  if (c->op == OP_ALIBI) {
    int64_t D = c->form == POSENC_ALIBI_SYMMETRIC ? -(k > q ? k - q : q - k)
              : c->form == POSENC_ALIBI_RELATIVE ? k - q : k - c->key_origin;
    return c->slopes[h] * (float)D;
  } else {
    int32_t b = ref_t5(c->cfg.num_buckets, c->cfg.max_distance, c->cfg.bidirectional, k - q);
    size_t rs = c->tab.row_stride ? c->tab.row_stride : c->tab.dim;
    size_t es = esz(c->tab.dtype);
    return tl_load((const unsigned char *)c->tab.data + ((size_t)b * rs + c->head0 + h) * es, c->tab.dtype);
  }
}

/* Applies the operation to the tile at base, element by element, from the header's contract. */
static void ref_apply(const tcase *c, unsigned char *base) {
  const posenc_score_tile *t = &c->t;
  const posenc_score_mask *m = c->no_mask ? NULL : &c->m;
  size_t h, i, j, es = esz(t->dtype);
  for (h = 0; h < t->heads; h++)
    for (i = 0; i < t->rows; i++)
      for (j = 0; j < t->cols; j++) {
        unsigned char *p = base + (h * tile_hs(t) + i * tile_rs(t) + j) * es;
        int64_t q = (int64_t)t->q_pos + (int64_t)i, k = (int64_t)t->k_pos + (int64_t)j;
        if (ref_masked(m, q, k, j)) tl_store(p, t->dtype, -INFINITY);
        else if (c->op != OP_MASK) {
          float s = tl_load(p, t->dtype), b = ref_bias(c, h, q, k);
          tl_store(p, t->dtype, s + b);
        }
      }
}

/* A score: uniform in [-8, 8) on a 2^-20 grid, with special values now and then. */
static float rand_score(int specials) {
  static const float sp[] = {NAN, -NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 1e-40f, -3e-39f, 3.0e38f, -3.0e38f,
                             6.0e-8f, 65504.0f};
  if (specials && rnd(12) == 0) return sp[rnd(sizeof sp / sizeof sp[0])];
  return (float)((int64_t)rnd(1u << 24) - (1 << 23)) / 1048576.0f;
}
static void fill_scores(unsigned char *b, size_t n, posenc_dtype dt, int specials) {
  size_t i;
  for (i = 0; i < n; i++) tl_store(b + i * esz(dt), dt, rand_score(specials));
}

static int is_nan_at(const unsigned char *p, posenc_dtype dt) { return isnan(tl_load(p, dt)); }

/* posenc_t5_bias_add with a plan made for cfg: the plan's errors are the call's. */
static posenc_status t5_add(const posenc_score_tile *t, const posenc_score_mask *m, const posenc_t5_buckets *cfg,
                            const posenc_table *tb, size_t head0) {
  posenc_t5_plan plan;
  posenc_status st = posenc_t5_plan_init(&plan, cfg);
  return st != POSENC_OK ? st : posenc_t5_bias_add(t, m, &plan, tb, head0);
}

static posenc_status call_op(const tcase *c, const posenc_score_tile *t) {
  const posenc_score_mask *m = c->no_mask ? NULL : &c->m;
  switch (c->op) {
    case OP_MASK: return posenc_mask_apply(t, m);
    case OP_ALIBI: return posenc_alibi_add(t, m, c->form, c->key_origin, c->slopes);
    default: return t5_add(t, m, &c->cfg, &c->tab, c->head0);
  }
}

#define GUARD 19  /* elements of canary scores before and after the tile */

/* Runs a case on the active backend and compares the whole buffer (guards, row gaps, tile) with
 * the reference: bit for bit, NaN for NaN. Returns 1 if it matched. */
static int run_case(const tcase *c0, const char *what) {
  tcase c = *c0;
  size_t es = esz(c.t.dtype), n = tile_extent(&c.t) + 2 * GUARD, i, nbad = 0, first = 0;
  unsigned char *init = (unsigned char *)malloc(n * es), *ref = (unsigned char *)malloc(n * es),
                *got = (unsigned char *)malloc(n * es);
  posenc_status st;
  fill_scores(init, n, c.t.dtype, c.specials);
  memcpy(ref, init, n * es); memcpy(got, init, n * es);
  ref_apply(&c, ref + GUARD * es);
  c.t.scores = got + GUARD * es;
  st = call_op(&c, &c.t);
  for (i = 0; i < n; i++) {
    const unsigned char *a = ref + i * es, *b = got + i * es;
    if (memcmp(a, b, es) != 0 && !(is_nan_at(a, c.t.dtype) && is_nan_at(b, c.t.dtype))) { if (!nbad++) first = i; }
  }
  CHECK(st == POSENC_OK && nbad == 0, "%s [%s]: status %s, %zu elements differ (first at %ld: got %.9g want %.9g, was %.9g)",
        what, posenc_isa_name(posenc_isa_active()), posenc_strerror(st), nbad, (long)first - GUARD,
        (double)tl_load(got + first * es, c.t.dtype), (double)tl_load(ref + first * es, c.t.dtype),
        (double)tl_load(init + first * es, c.t.dtype));
  free(init); free(ref); free(got);
  return st == POSENC_OK && nbad == 0;
}

/* Shared inputs of the tile tests */
static float g_slopes[64];
static uint8_t g_keep[4096];
static unsigned char g_tab[300 * 80 * 4];  /* T5 tables: up to 300 rows of 80 f32 */

static void make_table(posenc_table *tab, posenc_dtype dt, size_t rows, size_t dim, size_t stride) {
  size_t i, n = (rows - 1) * (stride ? stride : dim) + dim;
  for (i = 0; i < n; i++) {
    float v = (float)((int64_t)rnd(1u << 20) - (1 << 19)) / 65536.0f;
    if (rnd(50) == 0) v = rnd(2) ? -0.0f : 0.0f;
    tl_store(g_tab + i * esz(dt), dt, v);
  }
  tab->data = g_tab; tab->dtype = dt; tab->n_rows = rows; tab->dim = dim; tab->row_stride = stride;
}

/* A random T5 table that fits the case's heads (call again after changing them). */
static void t5_table_for(tcase *c) {
  static const posenc_dtype tdt[] = {F32, F16, BF16};
  size_t dim = c->head0 + c->t.heads + rnd(3);
  make_table(&c->tab, tdt[rnd(3)], c->cfg.num_buckets + rnd(3), dim, rnd(2) ? 0 : dim + rnd(5));
}

/* A random case of each kind: shapes, strides, positions, masks, dtypes. */
static void random_case(tcase *c, op_kind op) {
  size_t gap_r, gap_h;
  memset(c, 0, sizeof *c);
  c->op = op;
  c->t.dtype = rnd(3) == 0 ? F16 : F32;
  c->t.heads = 1 + rnd(5); c->t.rows = 1 + rnd(9); c->t.cols = 1 + rnd(80);
  gap_r = rnd(3) ? 0 : rnd(7); gap_h = rnd(3) ? 0 : rnd(13);
  if (rnd(3) == 0) { /* [q][h][k] interleaved */
    c->t.head_stride = c->t.cols + gap_h;
    c->t.row_stride = c->t.heads * c->t.head_stride + gap_r;
  } else {
    c->t.row_stride = (gap_r || rnd(2)) ? c->t.cols + gap_r : 0;
    c->t.head_stride = (gap_h || rnd(2)) ? c->t.rows * tile_rs(&c->t) + gap_h : 0;
  }
  c->t.q_pos = (int32_t)rnd(200); c->t.k_pos = (int32_t)rnd(200);
  if (rnd(4) == 0) { c->t.q_pos = 4000 + (int32_t)rnd(100); c->t.rows = 1; c->t.k_pos = (int32_t)rnd(4000); }
  if (rnd(8) == 0) c->t.q_pos = -(int32_t)rnd(50);
  c->m.causal = (int)rnd(2);
  c->m.window = rnd(3) == 0 ? (int32_t)(1 + rnd(40)) : 0;
  c->m.key_keep = rnd(2) ? g_keep + rnd(200) : NULL;
  c->no_mask = rnd(6) == 0;
  c->specials = (int)rnd(2);
  c->form = (posenc_alibi_form)rnd(3);
  c->key_origin = (int32_t)rnd(300) - 50;
  c->slopes = g_slopes + rnd(51);  /* some heads get slopes 0, -0.25, 1.5 */
  if (op == OP_T5) {
    static const uint32_t nbs[] = {2, 4, 8, 16, 32, 64, 128};
    uint32_t e;
    c->cfg.bidirectional = (int)rnd(2);
    do c->cfg.num_buckets = nbs[rnd(7)]; while (c->cfg.bidirectional && c->cfg.num_buckets < 4);
    e = (c->cfg.bidirectional ? c->cfg.num_buckets / 2 : c->cfg.num_buckets) / 2;
    c->cfg.max_distance = e + 1 + (uint32_t)rnd(300);
    c->head0 = rnd(4);
    t5_table_for(c);
  }
}

static void describe(const tcase *c, char *buf, size_t cap) {
  snprintf(buf, cap, "%s %s h%zu r%zu c%zu rs%zu hs%zu q%d k%d causal%d win%d keep%d form%d ko%d nb%u md%u bi%d",
           c->op == OP_MASK ? "mask" : c->op == OP_ALIBI ? "alibi" : "t5", posenc_dtype_name(c->t.dtype),
           c->t.heads, c->t.rows, c->t.cols, c->t.row_stride, c->t.head_stride, (int)c->t.q_pos, (int)c->t.k_pos,
           c->m.causal, (int)c->m.window, c->m.key_keep != NULL, (int)c->form, (int)c->key_origin,
           c->cfg.num_buckets, c->cfg.max_distance, c->cfg.bidirectional);
}

static void test_tiles_backend(void) {
  tcase c;
  char what[256];
  size_t k, cols;
  int op, failures = 0;
  /* every tail length, each kind, dense and with row gaps, f32 and f16 */
  for (op = 0; op < 3; op++)
    for (cols = 1; cols <= 70; cols++) {
      random_case(&c, (op_kind)op);
      c.t.heads = 2; c.t.rows = 3; c.t.cols = cols;
      c.t.row_stride = cols % 2 ? cols + 5 : 0; c.t.head_stride = 0;
      c.t.dtype = cols % 3 == 0 ? F16 : F32;
      c.t.q_pos = 20; c.t.k_pos = 0;
      if (op == OP_T5) t5_table_for(&c);
      describe(&c, what, sizeof what);
      if (!run_case(&c, what) && failures++ > 3) return;
    }
  /* random shapes */
  for (op = 0; op < 3; op++)
    for (k = 0; k < NRAND; k++) {
      random_case(&c, (op_kind)op);
      describe(&c, what, sizeof what);
      if (!run_case(&c, what) && failures++ > 3) return;
    }
  /* each form with each mask combination, decode rows */
  for (k = 0; k < 3 * 2 * 2 * 2; k++) {
    random_case(&c, OP_ALIBI);
    c.form = (posenc_alibi_form)(k % 3); c.m.causal = (int)(k / 3 % 2);
    c.m.window = k / 6 % 2 ? 7 : 0; c.m.key_keep = k / 12 % 2 ? g_keep : NULL; c.no_mask = 0;
    c.t.rows = 1; c.t.q_pos = 4000; c.t.k_pos = 3950; c.t.cols = 67;
    c.t.row_stride = k % 2 ? 70 : 0; c.t.head_stride = k % 4 == 1 ? 75 : 0;
    describe(&c, what, sizeof what);
    run_case(&c, what);
  }
}

/* Values whose results the contract fixes exactly, on the active backend. */
static void test_tile_specials(void) {
  float sc[4 * 8], sl[1] = {0.5f};
  uint16_t sh[4 * 8];
  posenc_score_tile t;
  posenc_score_mask m;
  size_t i;
  memset(&t, 0, sizeof t); memset(&m, 0, sizeof m);
  t.scores = sc; t.dtype = F32; t.heads = 1; t.rows = 4; t.cols = 8;
  for (i = 0; i < 32; i++) sc[i] = -0.0f;
  CHECK(posenc_alibi_add(&t, NULL, POSENC_ALIBI_SYMMETRIC, 0, sl) == POSENC_OK, "symmetric on -0");
  for (i = 0; i < 4; i++) CHECK(sc[i * 8 + i] == 0.0f && !signbit(sc[i * 8 + i]), "symmetric k == q: -0 + +0 = +0");
  CHECK(sc[1] == -0.5f && sc[8] == -0.5f, "symmetric |k - q| = 1: -m");
  for (i = 0; i < 32; i++) sc[i] = NAN;
  m.causal = 1;
  CHECK(posenc_alibi_add(&t, &m, POSENC_ALIBI_RELATIVE, 0, sl) == POSENC_OK, "NaN scores");
  for (i = 0; i < 32; i++) {
    size_t q = i / 8, k = i % 8;
    if (k > q) CHECK(sc[i] == -INFINITY, "masked NaN becomes -inf (%zu)", i);
    else CHECK(isnan(sc[i]), "unmasked NaN stays NaN (%zu)", i);
  }
  for (i = 0; i < 32; i++) sc[i] = NAN;
  CHECK(posenc_mask_apply(&t, &m) == POSENC_OK, "mask NaN");
  for (i = 0; i < 32; i++) CHECK(i % 8 > i / 8 ? sc[i] == -INFINITY : isnan(sc[i]), "mask_apply NaN (%zu)", i);
  for (i = 0; i < 32; i++) sh[i] = 0x8000u; /* f16 -0 */
  t.scores = sh; t.dtype = F16;
  CHECK(posenc_alibi_add(&t, &m, POSENC_ALIBI_RELATIVE, 0, sl) == POSENC_OK, "f16 -0");
  for (i = 0; i < 32; i++) {
    size_t q = i / 8, k = i % 8;
    uint16_t want = k > q ? 0xfc00u : k == q ? 0x0000u : posenc_f32_to_f16(-0.5f * (float)(q - k));
    CHECK(sh[i] == want, "f16 (%zu, %zu): 0x%04x want 0x%04x", q, k, sh[i], want);
  }
}

/* MPT's causal bias and Bloom's padded one are the KEY form; RELATIVE and KEY give one softmax. */
static void test_model_forms(void) {
  enum { H = 12, Q = 24, K = 40, P = 5 };
  static float s0[H * Q * K], a[H * Q * K], b[H * Q * K];
  float sl[H];
  posenc_score_tile t;
  posenc_score_mask m;
  uint8_t keep[K];
  size_t h, i, j, bad;
  double worst = 0;
  posenc_alibi_slopes(H, 8.0, sl);
  for (i = 0; i < H * Q * K; i++) s0[i] = rand_score(0);
  memset(&t, 0, sizeof t); memset(&m, 0, sizeof m);
  t.dtype = F32; t.heads = H; t.rows = Q; t.cols = K; t.q_pos = K - Q; t.k_pos = 0;
  /* MPT build_alibi_bias causal: bias[h][j] = fl32((float)(j - (K-1)) * slope), then the causal mask */
  memcpy(a, s0, sizeof a); memcpy(b, s0, sizeof b);
  for (h = 0, bad = 0; h < H; h++)
    for (i = 0; i < Q; i++)
      for (j = 0; j < K; j++) {
        float bias = (float)((int)j - (K - 1)) * sl[h];
        float *e = &b[(h * Q + i) * K + j];
        *e = j > (size_t)t.q_pos + i ? -INFINITY : *e + bias;
      }
  m.causal = 1; t.scores = a;
  CHECK(posenc_alibi_add(&t, &m, POSENC_ALIBI_KEY, K - 1, sl) == POSENC_OK, "MPT causal");
  CHECK(memcmp(a, b, sizeof a) == 0, "MPT causal bias = KEY form with key_origin = keys-1 [%s]", posenc_isa_name(posenc_isa_active()));
  /* Bloom with P left pads: positions (cumsum(mask)-1)*mask, alibi = slope * position, pads masked */
  memcpy(a, s0, sizeof a); memcpy(b, s0, sizeof b);
  for (j = 0; j < K; j++) keep[j] = j >= P;
  for (h = 0; h < H; h++)
    for (i = 0; i < Q; i++)
      for (j = 0; j < K; j++) {
        float pos = j >= P ? (float)(j - P) : 0.0f;
        float *e = &b[(h * Q + i) * K + j];
        *e = (j > (size_t)t.q_pos + i || j < P) ? -INFINITY : *e + sl[h] * pos;
      }
  m.key_keep = keep;
  CHECK(posenc_alibi_add(&t, &m, POSENC_ALIBI_KEY, P, sl) == POSENC_OK, "Bloom");
  CHECK(memcmp(a, b, sizeof a) == 0, "Bloom bias = KEY form with key_origin = left pads [%s]", posenc_isa_name(posenc_isa_active()));
  /* softmax of RELATIVE and KEY rows, in double */
  memcpy(a, s0, sizeof a); memcpy(b, s0, sizeof b);
  t.scores = a;
  CHECK(posenc_alibi_add(&t, &m, POSENC_ALIBI_RELATIVE, 0, sl) == POSENC_OK, "relative");
  t.scores = b;
  CHECK(posenc_alibi_add(&t, &m, POSENC_ALIBI_KEY, 17, sl) == POSENC_OK, "key");
  for (h = 0, bad = 0; h < H * Q; h++) {
    double ma = -INFINITY, mb = -INFINITY, za = 0, zb = 0;
    const float *ra = a + h * K, *rb = b + h * K;
    for (j = 0; j < K; j++) { if (ra[j] > ma) ma = ra[j]; if (rb[j] > mb) mb = rb[j]; }
    for (j = 0; j < K; j++) { za += exp(ra[j] - ma); zb += exp(rb[j] - mb); }
    for (j = 0; j < K; j++) {
      double d = fabs(exp(ra[j] - ma) / za - exp(rb[j] - mb) / zb);
      if (d > worst) worst = d;
      if ((ra[j] == -INFINITY) != (rb[j] == -INFINITY)) bad++;
    }
  }
  CHECK(bad == 0 && worst <= 1e-6, "RELATIVE and KEY softmax: %zu mask differences, max |dp| %.3g", bad, worst);
  if (posenc_isa_active() == POSENC_ISA_SCALAR)
    printf("softmax of RELATIVE vs KEY (12 heads, f32 rounding of s + b): max |dp| = %.3g\n", worst);
}

/* ============================================================================================
 * T5, DeBERTa, Transformer-XL, scales
 * ========================================================================================== */
static void test_t5_buckets(void) {
  /* §5.1 boundary tables at the defaults: the first |r| (or -r) of each bucket */
  static const int bid_start[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 23, 32, 46, 64, 91};
  static const int cau_start[32] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 19, 21, 24, 27,
                                    31, 35, 40, 46, 52, 59, 67, 77, 87, 99, 113};
  static int32_t got[4001];
  posenc_t5_buckets bi = {32, 128, 1}, ca = {32, 128, 0};
  int32_t r;
  int bad = 0, bucket;
  CHECK(posenc_t5_bucket_range(&bi, -2000, 4001, got) == POSENC_OK, "bidirectional range");
  for (r = -2000; r <= 2000; r++) {
    int a = r < 0 ? -r : r;
    for (bucket = 15; bid_start[bucket] > a; bucket--) {}
    bucket += r > 0 ? 16 : 0;
    if (got[r + 2000] != bucket) { if (bad++ < 5) printf("  bidirectional r=%d: %d want %d\n", r, got[r + 2000], bucket); }
    if (ref_t5(32, 128, 1, r) != bucket) bad++;  /* the reference itself reproduces the table */
  }
  CHECK(bad == 0, "T5 bidirectional boundary table: %d differ", bad);
  CHECK(got[2000 + 16] == 26 && got[2000 - 16] == 10 && got[2000 - 32] == 12 && got[2000 - 64] == 14 &&
        got[2000 - 15] == 9 && got[2000 - 31] == 11 && got[2000 - 63] == 13, "exact ties 16, 32, 64 land on the upper bucket");
  bad = 0;
  CHECK(posenc_t5_bucket_range(&ca, -2000, 4001, got) == POSENC_OK, "causal range");
  for (r = -2000; r <= 2000; r++) {
    int a = r < 0 ? -r : 0;
    for (bucket = 31; cau_start[bucket] > a; bucket--) {}
    if (got[r + 2000] != bucket) { if (bad++ < 5) printf("  causal r=%d: %d want %d\n", r, got[r + 2000], bucket); }
    if (ref_t5(32, 128, 0, r) != bucket) bad++;
  }
  CHECK(bad == 0, "T5 causal boundary table: %d differ", bad);
  /* other configurations against the exact reference */
  {
    size_t configs = 0;
    unsigned idx;
    int32_t span = TEST_BIAS_LIGHT ? 300 : 2000;
    bad = 0;
    for (idx = 0; idx < 128; idx++) {
      posenc_t5_buckets cfg;
      if (!tl_t5_config(idx, &cfg.num_buckets, &cfg.max_distance, &cfg.bidirectional)) continue;
      configs++;
      if (posenc_t5_bucket_range(&cfg, -span, (size_t)(2 * span + 1), got) != POSENC_OK) { bad++; continue; }
      for (r = -span; r <= span; r++)
        if (got[r + span] != ref_t5(cfg.num_buckets, cfg.max_distance, cfg.bidirectional, r)) {
          if (bad++ < 5) printf("  nb=%u md=%u bi=%d r=%d: %d want %d\n", cfg.num_buckets, cfg.max_distance,
                                cfg.bidirectional, r, got[r + span],
                                ref_t5(cfg.num_buckets, cfg.max_distance, cfg.bidirectional, r));
        }
    }
    CHECK(bad == 0, "T5 buckets, %zu configurations, |r| <= %d: %d differ", configs, (int)span, bad);
  }
  /* far positions and the top of the int32 range */
  {
    int32_t far[3];
    CHECK(posenc_t5_bucket_range(&bi, INT32_MAX - 2, 3, far) == POSENC_OK && far[0] == 31 && far[2] == 31, "r near INT32_MAX");
    CHECK(posenc_t5_bucket_range(&ca, INT32_MIN, 3, far) == POSENC_OK && far[0] == 31 && far[1] == 31, "r = INT32_MIN: %d", far[0]);
    CHECK(posenc_t5_bucket_range(&bi, INT32_MIN, 1, far) == POSENC_OK && far[0] == 15, "bidirectional r = INT32_MIN: %d", far[0]);
  }
  /* errors, nothing written */
  {
    int32_t out[4];
    posenc_t5_buckets c;
#define BADT(code, setup, first, count, ptr) do { c = bi; setup;                                      \
      memset(out, TL_CANARY, sizeof out);                                                           \
      CHECK(posenc_t5_bucket_range(&c, first, count, ptr) == (code), "t5 range %s: %d", #setup,      \
            (int)posenc_t5_bucket_range(&c, first, count, ptr));                                    \
      CHECK(tl_all_canary((unsigned char *)out, sizeof out), "t5 range %s wrote", #setup); } while (0)
    BADT(POSENC_ERR_DIM, c.num_buckets = 31, 0, 4, out);
    BADT(POSENC_ERR_DIM, c.num_buckets = 2, 0, 4, out);
    BADT(POSENC_ERR_DIM, c.num_buckets = 0, 0, 4, out);
    BADT(POSENC_ERR_DIM, c.num_buckets = 4098, 0, 4, out);
    BADT(POSENC_ERR_DIM, c.bidirectional = 0; c.num_buckets = 1, 0, 4, out);
    BADT(POSENC_ERR_PARAM, c.max_distance = 8, 0, 4, out);
    BADT(POSENC_ERR_PARAM, c.max_distance = 0, 0, 4, out);
    BADT(POSENC_ERR_PARAM, c.bidirectional = 0; c.max_distance = 16, 0, 4, out);
    BADT(POSENC_ERR_PARAM, c.max_distance = (uint32_t)INT32_MAX + 1u, 0, 4, out);
    BADT(POSENC_ERR_SIZE, (void)0, 0, 0, out);
    BADT(POSENC_ERR_NULL, (void)0, 0, 4, NULL);
    BADT(POSENC_ERR_POSITION, (void)0, INT32_MAX - 2, 4, out);
    CHECK(posenc_t5_bucket_range(NULL, 0, 4, out) == POSENC_ERR_NULL, "t5 range NULL cfg");
    CHECK(posenc_t5_check(NULL) == POSENC_ERR_NULL, "t5_check NULL");
    c = bi; c.max_distance = 9;
    CHECK(posenc_t5_check(&c) == POSENC_OK, "max_distance e+1 valid");
    c = ca; c.num_buckets = 2; c.max_distance = 2;
    CHECK(posenc_t5_check(&c) == POSENC_OK, "causal 2 buckets valid");
    c = bi; c.num_buckets = 1024; c.max_distance = 2000;
    CHECK(posenc_t5_check(&c) == POSENC_OK, "1024 buckets valid");
    c.num_buckets = 1026;
    CHECK(posenc_t5_check(&c) == POSENC_ERR_DIM, "1026 buckets: above the limit");
  }
}

static void test_deberta(void) {
  { /* buckets near the top of int32 (values from 80-digit decimal logarithms) */
    int32_t o[2] = {0, 0};
    CHECK(posenc_deberta_bucket_range(65536, 32770, 211056, 2, o) == POSENC_OK && o[0] == 2000030083 &&
          o[1] == 2000035171, "deberta 65536/32770 at r = 211056..211057: %d %d", o[0], o[1]);
    CHECK(posenc_deberta_bucket_range(65536, 32770, 1000000, 1, o) == POSENC_ERR_POSITION,
          "deberta bucket past INT32_MAX");
  }
  static int32_t got[2 * DEBERTA_SPAN + 1];
  static const uint32_t cfg[][2] = {{256, 512}, {256, 1024}, {128, 512}, {64, 128}, {32, 100}, {4, 10}, {8, 6}, {512, 4096}};
  size_t ci;
  int32_t r;
  int bad = 0;
  for (ci = 0; ci < sizeof cfg / sizeof cfg[0]; ci++) {
    if (posenc_deberta_bucket_range(cfg[ci][0], cfg[ci][1], -DEBERTA_SPAN, 2 * DEBERTA_SPAN + 1, got) != POSENC_OK) {
      bad++;
      continue;
    }
    for (r = -DEBERTA_SPAN; r <= DEBERTA_SPAN; r++)
      if (got[r + DEBERTA_SPAN] != ref_deberta(cfg[ci][0], cfg[ci][1], r)) {
        if (bad++ < 5) printf("  deberta %u/%u r=%d: %d want %d\n", cfg[ci][0], cfg[ci][1], r, got[r + DEBERTA_SPAN],
                              ref_deberta(cfg[ci][0], cfg[ci][1], r));
      }
  }
  CHECK(bad == 0, "DeBERTa buckets against the exact reference: %d differ", bad);
  CHECK(posenc_deberta_bucket_range(256, 512, -200, 401, got) == POSENC_OK && got[200 + 128] == 128 &&
        got[200 - 128] == -128 && got[200 + 129] == 129 && got[200] == 0, "DeBERTa |r| <= mid is r itself");
  CHECK(posenc_deberta_bucket_range(256, 512, 511, 1, got) == POSENC_OK && got[0] == 255, "DeBERTa r = max_position-1 -> 255: %d", got[0]);
  CHECK(posenc_deberta_bucket_range(0, 0, -5, 11, got) == POSENC_OK && got[0] == -5 && got[10] == 5, "bucket_size 0: identity");
  CHECK(posenc_deberta_bucket_range(0, 512, INT32_MIN, 2, got) == POSENC_OK && got[0] == INT32_MIN, "identity at INT32_MIN");
  /* relative: out[q][k] = bucket(q - k) */
  {
    enum { QL = 37, KL = 300 };
    static int32_t rel[QL * KL];
    size_t q, k;
    bad = 0;
    CHECK(posenc_deberta_relative(QL, KL, 256, 512, rel, QL * KL) == POSENC_OK, "deberta relative");
    for (q = 0; q < QL; q++)
      for (k = 0; k < KL; k++) bad += rel[q * KL + k] != ref_deberta(256, 512, (int64_t)q - (int64_t)k);
    CHECK(posenc_deberta_relative(QL, KL, 0, 0, rel, QL * KL) == POSENC_OK, "deberta relative, no buckets");
    for (q = 0; q < QL; q++)
      for (k = 0; k < KL; k++) bad += rel[q * KL + k] != (int32_t)q - (int32_t)k;
    CHECK(bad == 0, "deberta relative: %d differ", bad);
  }
  /* errors, nothing written */
  {
    int32_t out[8];
#define BADD(code, call) do { memset(out, TL_CANARY, sizeof out);                                       \
      CHECK((call) == (code), "%s: %d", #call, (int)(call));                                          \
      CHECK(tl_all_canary((unsigned char *)out, sizeof out), "%s wrote", #call); } while (0)
    BADD(POSENC_ERR_DIM, posenc_deberta_bucket_range(255, 512, 0, 8, out));
    BADD(POSENC_ERR_DIM, posenc_deberta_bucket_range(2, 512, 0, 8, out));
    BADD(POSENC_ERR_PARAM, posenc_deberta_bucket_range(256, 129, 0, 8, out));
    BADD(POSENC_ERR_PARAM, posenc_deberta_bucket_range(256, 0, 0, 8, out));
    BADD(POSENC_ERR_SIZE, posenc_deberta_bucket_range(256, 512, 0, 0, out));
    BADD(POSENC_ERR_NULL, posenc_deberta_bucket_range(256, 512, 0, 8, NULL));
    BADD(POSENC_ERR_POSITION, posenc_deberta_bucket_range(256, 512, INT32_MAX - 3, 8, out));
    BADD(POSENC_ERR_BUFFER, posenc_deberta_relative(3, 3, 256, 512, out, 8));
    BADD(POSENC_ERR_OVERFLOW, posenc_deberta_relative(SIZE_MAX / 2, 3, 256, 512, out, 8));
    BADD(POSENC_ERR_SIZE, posenc_deberta_relative(0, 3, 256, 512, out, 8));
    BADD(POSENC_ERR_DIM, posenc_deberta_relative(2, 3, 7, 512, out, 8));
    BADD(POSENC_ERR_NULL, posenc_deberta_relative(2, 3, 256, 512, NULL, 8));
    CHECK(posenc_deberta_bucket_range(256, 130, 0, 8, out) == POSENC_OK, "max_position - 1 = mid + 1 valid");
  }
}

static void test_txl(void) {
  static const size_t dims[] = {1, 2, 7, 16, 64, 130};
  static const posenc_dtype dts[] = {F32, F16, BF16};
  static const int32_t clamps[] = {0, 5, 100, 1000};
  size_t di, ti, ci, bytes;
  int bad = 0;
  for (di = 0; di < 6; di++)
    for (ti = 0; ti < 3; ti++)
      for (ci = 0; ci < 4; ci++) {
        size_t klen = 1 + rnd(300), k;
        posenc_sinusoidal_params p = posenc_sinusoidal_default(dims[di]);
        int32_t *pos = (int32_t *)malloc(klen * 4);
        unsigned char *a, *b;
        p.layout = POSENC_LAYOUT_SPLIT; p.dtype = dts[ti];
        if (ci == 3) p.base = 500000.0;
        posenc_sinusoidal_bytes(&p, klen, &bytes);
        a = (unsigned char *)malloc(bytes + 8); b = (unsigned char *)malloc(bytes + 8);
        memset(a, TL_CANARY, bytes + 8); memset(b, TL_CANARY, bytes + 8);
        for (k = 0; k < klen; k++) {
          int32_t v = (int32_t)(klen - 1 - k);
          pos[k] = clamps[ci] > 0 && v > clamps[ci] ? clamps[ci] : v;
        }
        if (posenc_txl_relative(&p, klen, clamps[ci], a, bytes) != POSENC_OK ||
            posenc_sinusoidal_rows(&p, pos, klen, b, bytes) != POSENC_OK || memcmp(a, b, bytes + 8) != 0) {
          if (bad++ < 5) printf("  txl dim %zu %s clamp %d klen %zu differs\n", dims[di], posenc_dtype_name(dts[ti]),
                                (int)clamps[ci], klen);
        }
        free(pos); free(a); free(b);
      }
  CHECK(bad == 0, "Transformer-XL R = the split sinusoidal rows of klen-1 .. 0 (clamped) [%s]: %d differ",
        posenc_isa_name(posenc_isa_active()), bad);
  {
    posenc_sinusoidal_params p = posenc_sinusoidal_default(8);
    float out[64];
    memset(out, TL_CANARY, sizeof out);
    CHECK(posenc_txl_relative(&p, 4, 0, out, sizeof out) == POSENC_ERR_LAYOUT && tl_all_canary((unsigned char *)out, sizeof out),
          "txl interleaved: ERR_LAYOUT");
    p.layout = POSENC_LAYOUT_SPLIT;
    CHECK(posenc_txl_relative(&p, 4, -1, out, sizeof out) == POSENC_ERR_PARAM && tl_all_canary((unsigned char *)out, sizeof out),
          "txl clamp_len < 0: ERR_PARAM");
    CHECK(posenc_txl_relative(&p, 9, 0, out, sizeof out) == POSENC_ERR_BUFFER && tl_all_canary((unsigned char *)out, sizeof out),
          "txl buffer too small");
    CHECK(posenc_txl_relative(&p, 0, 0, out, sizeof out) == POSENC_ERR_SIZE, "txl klen 0");
    CHECK(posenc_txl_relative(NULL, 4, 0, out, sizeof out) == POSENC_ERR_NULL, "txl NULL params");
    CHECK(posenc_txl_relative(&p, 4, 0, NULL, sizeof out) == POSENC_ERR_NULL, "txl NULL out");
    CHECK(posenc_txl_relative(&p, 1, 0, out, sizeof out) == POSENC_OK && out[0] == 0.0f && out[4] == 1.0f,
          "txl klen 1: position 0");
  }
}

static void test_scales(void) {
  uint32_t pos, L;
  int bad = 0;
  static float f[5000];
  for (L = 2; L <= 70000; L = L * 3 + 1)
    for (pos = 0; pos < 200000; pos = pos * 2 + 1) {
      double got = posenc_logn_scale(pos, L);
      double want = pos + 1 <= L ? 1.0 : log((double)pos + 1.0) / log((double)L);
      if (pos + 1 <= L ? got != 1.0 : fabs(got - want) > 1.5e-15 * want) bad++;
    }
  CHECK(bad == 0, "logn scale: %d off", bad);
  CHECK(posenc_logn_scale(8191, 8192) == 1.0 && posenc_logn_scale(8192, 8192) > 1.0, "logn: 1 up to pos+1 = train_len");
  CHECK(isnan(posenc_logn_scale(10, 1)) && isnan(posenc_logn_scale(10, 0)), "logn train_len < 2: NaN");
  CHECK(posenc_logn_scales(2048, 0, 5000, f) == POSENC_OK, "logn scales");
  for (pos = 0, bad = 0; pos < 5000; pos++) {
    double want = pos + 1 <= 2048 ? 1.0 : log((double)pos + 1.0) / log(2048.0);
    if (ulp_diff(f[pos], (float)want) > (pos + 1 <= 2048 ? 0 : 1)) bad++;
  }
  CHECK(bad == 0, "logn scales (f32): %d off", bad);
  {
    float out[4];
#define BADL(code, call) do { memset(out, TL_CANARY, sizeof out); CHECK((call) == (code), "%s", #call); \
      CHECK(tl_all_canary((unsigned char *)out, sizeof out), "%s wrote", #call); } while (0)
    BADL(POSENC_ERR_PARAM, posenc_logn_scales(1, 0, 4, out));
    BADL(POSENC_ERR_SIZE, posenc_logn_scales(2048, 0, 0, out));
    BADL(POSENC_ERR_NULL, posenc_logn_scales(2048, 0, 4, NULL));
    BADL(POSENC_ERR_POSITION, posenc_logn_scales(2048, INT32_MAX - 2, 4, out));
  }
  /* YaRN and DeepSeek */
  {
    static const double fs[] = {1.0, 0.5, 1.0000001, 2.0, 4.0, 16.0, 40.0, 1e6};
    static const double ms[] = {1.0, 0.707, 0.0, 1.5};
    size_t i, j;
    bad = 0;
    for (i = 0; i < 8; i++)
      for (j = 0; j < 4; j++) {
        double want = fs[i] <= 1.0 ? 1.0 : 0.1 * ms[j] * log(fs[i]) + 1.0;
        double got = posenc_yarn_mscale(fs[i], ms[j]);
        double ds = posenc_deepseek_softmax_scale(192, fs[i], ms[j]);
        if (fabs(got - want) > 1.5e-15 * want) bad++;
        if (fabs(ds - want * want / sqrt(192.0)) > 2e-15 * ds) bad++;
      }
    CHECK(bad == 0, "yarn mscale / deepseek softmax scale: %d off", bad);
    CHECK(posenc_yarn_mscale(1.0, 1.0) == 1.0 && posenc_yarn_mscale(0.25, 1.0) == 1.0, "mscale: 1 for s <= 1");
    CHECK(isnan(posenc_yarn_mscale(0.0, 1.0)) && isnan(posenc_yarn_mscale(-2.0, 1.0)) && isnan(posenc_yarn_mscale(NAN, 1.0)) &&
          isnan(posenc_yarn_mscale(INFINITY, 1.0)) && isnan(posenc_yarn_mscale(4.0, NAN)) && isnan(posenc_yarn_mscale(4.0, INFINITY)),
          "mscale invalid: NaN");
    CHECK(isnan(posenc_deepseek_softmax_scale(0, 4.0, 1.0)) && isnan(posenc_deepseek_softmax_scale(128, NAN, 1.0)),
          "deepseek invalid: NaN");
    /* DeepSeek-V3: factor 40, mscale_all_dim 1, qk head dim 192 */
    CHECK(fabs(posenc_deepseek_softmax_scale(192, 40.0, 1.0) - pow(0.1 * log(40.0) + 1.0, 2) / sqrt(192.0)) < 2e-16,
          "deepseek-v3 softmax scale");
  }
  /* Llama-4 */
  {
    static const uint32_t ps[] = {0, 1, 8190, 8191, 8192, 16383, 100000, 1000000, 4000000000u};
    size_t i;
    bad = 0;
    for (i = 0; i < sizeof ps / sizeof ps[0]; i++) {
      double want = log((double)(((uint64_t)ps[i] + 1) / 8192u) + 1.0) * 0.1 + 1.0;
      double got = posenc_llama4_attn_scale(ps[i], 8192, 0.1);
      if (fabs(got - want) > 1.5e-15 * want) { if (bad++ < 3) printf("  llama4 %u: %.17g want %.17g\n", ps[i], got, want); }
    }
    CHECK(bad == 0, "llama4 attn scale: %d off", bad);
    CHECK(posenc_llama4_attn_scale(8190, 8192, 0.1) == 1.0, "llama4: 1 below floor_scale");
    CHECK(isnan(posenc_llama4_attn_scale(5, 0, 0.1)) && isnan(posenc_llama4_attn_scale(5, 8192, NAN)), "llama4 invalid: NaN");
  }
}

/* ============================================================================================
 * Tiles: bad input
 * ========================================================================================== */
static void test_tile_errors(void) {
  enum { H = 3, Q = 4, K = 10, N = H * Q * K + 64 };
  static float buf[N], snap[N];
  float sl[8] = {0.5f, 0.25f, 0.125f, 0.0625f, 0.5f, 0.5f, 0.5f, 0.5f};
  uint8_t keep[K];
  posenc_score_tile t0, t;
  posenc_score_mask m0, m;
  posenc_t5_buckets c0 = {32, 128, 1}, c;
  posenc_table tb0, tb;
  size_t i;
  static float tab[40 * 8];
  for (i = 0; i < N; i++) buf[i] = (float)i * 0.25f;
  for (i = 0; i < 40 * 8; i++) tab[i] = (float)i;
  memset(keep, 1, sizeof keep);
  memcpy(snap, buf, sizeof buf);
  memset(&t0, 0, sizeof t0); memset(&m0, 0, sizeof m0);
  t0.scores = buf; t0.dtype = F32; t0.heads = H; t0.rows = Q; t0.cols = K;
  m0.causal = 1; m0.key_keep = keep;
  tb0.data = tab; tb0.dtype = F32; tb0.n_rows = 32; tb0.dim = 8; tb0.row_stride = 0;
  /* the op, its expected code; the buffer compared whole (score writes anywhere show) */
#define BADTILE(code, what, setup) do { int op_;                                                        \
    for (op_ = 0; op_ < 3; op_++) {                                                                       \
      posenc_status st_, want_ = (code);                                                                  \
      const float *sl_ = sl; const posenc_table *tb_ = &tb; int form_ = POSENC_ALIBI_RELATIVE;          \
      t = t0; m = m0; c = c0; tb = tb0; setup;                                                            \
      if (want_ == POSENC_OK) continue; /* an error of another op only */                                 \
      st_ = op_ == 0 ? posenc_mask_apply(&t, &m)                                                          \
          : op_ == 1 ? posenc_alibi_add(&t, &m, (posenc_alibi_form)form_, 0, sl_)                         \
          : t5_add(&t, &m, &c, tb_, 0);                                                       \
      CHECK(st_ == want_, "%s (op %d): %d, want %d", what, op_, (int)st_, (int)want_);                    \
      CHECK(memcmp(buf, snap, sizeof buf) == 0, "%s (op %d): wrote", what, op_);                          \
      memcpy(buf, snap, sizeof buf);                                                                      \
    } } while (0)
#define ONLY(o, code) (op_ == (o) ? (code) : POSENC_OK)
  BADTILE(POSENC_ERR_NULL, "NULL scores", t.scores = NULL);
  BADTILE(POSENC_ERR_SIZE, "heads 0", t.heads = 0);
  BADTILE(POSENC_ERR_SIZE, "rows 0", t.rows = 0);
  BADTILE(POSENC_ERR_SIZE, "cols 0", t.cols = 0);
  BADTILE(POSENC_ERR_DTYPE, "bf16 scores", t.dtype = BF16);
  BADTILE(POSENC_ERR_DTYPE, "unknown dtype", t.dtype = (posenc_dtype)7);
  BADTILE(POSENC_ERR_ALIAS, "row_stride < cols", t.row_stride = K - 1);
  BADTILE(POSENC_ERR_ALIAS, "head_stride overlaps rows", t.head_stride = Q * K - 1);
  BADTILE(POSENC_ERR_ALIAS, "interleaved row_stride too small", t.head_stride = K; t.row_stride = H * K - 1);
  BADTILE(POSENC_ERR_ALIAS, "interleaved head_stride < cols", t.head_stride = K - 1; t.row_stride = H * K);
  BADTILE(POSENC_ERR_ALIAS, "key_keep inside the tile", m.key_keep = (const uint8_t *)(buf + 7));
  BADTILE(POSENC_ERR_ALIAS, "key_keep overlaps the tile's last byte",
          m.key_keep = (const uint8_t *)(buf + H * Q * K) - (K - 1));
  BADTILE(POSENC_ERR_PARAM, "window < 0", m.window = -1);
  BADTILE(POSENC_ERR_POSITION, "last row past INT32_MAX", t.q_pos = INT32_MAX - 2);
  BADTILE(POSENC_ERR_POSITION, "last column past INT32_MAX", t.k_pos = INT32_MAX - (K - 2));
  BADTILE(POSENC_ERR_OVERFLOW, "row stride overflows", t.row_stride = SIZE_MAX / 2);
  BADTILE(POSENC_ERR_OVERFLOW, "head stride overflows", t.head_stride = SIZE_MAX / 2);
  BADTILE(ONLY(1, POSENC_ERR_NULL), "NULL slopes", sl_ = NULL);
  BADTILE(ONLY(1, POSENC_ERR_PARAM), "unknown form", form_ = 3);
  BADTILE(ONLY(1, POSENC_ERR_PARAM), "slope NaN", sl[2] = NAN);
  sl[2] = 0.125f;
  BADTILE(ONLY(1, POSENC_ERR_PARAM), "slope inf", sl[1] = -INFINITY);
  sl[1] = 0.25f;
  BADTILE(ONLY(1, POSENC_ERR_ALIAS), "slopes inside the tile", sl_ = buf + 20);
  BADTILE(ONLY(1, POSENC_ERR_ALIAS), "slopes straddle the tile's end", sl_ = buf + H * Q * K - 1);
  BADTILE(ONLY(1, POSENC_ERR_POSITION), "|D| > 2^24", t.q_pos = 0; t.k_pos = (1 << 24) + 1; m.causal = 0);
  BADTILE(ONLY(2, POSENC_ERR_NULL), "NULL table", tb_ = NULL);
  BADTILE(ONLY(2, POSENC_ERR_NULL), "NULL table data", tb.data = NULL);
  BADTILE(ONLY(2, POSENC_ERR_DIM), "odd buckets, bidirectional", c.num_buckets = 33; tb.n_rows = 40);
  BADTILE(ONLY(2, POSENC_ERR_PARAM), "max_distance <= e", c.max_distance = 8);
  BADTILE(ONLY(2, POSENC_ERR_TABLE), "table rows < buckets", tb.n_rows = 31);
  BADTILE(ONLY(2, POSENC_ERR_TABLE), "table dim < head0 + heads", tb.dim = H - 1);
  BADTILE(ONLY(2, POSENC_ERR_DTYPE), "table dtype", tb.dtype = (posenc_dtype)9);
  BADTILE(ONLY(2, POSENC_ERR_ALIAS), "table inside the tile", tb.data = buf + 5; tb.n_rows = 32; tb.dim = 3);
  /* valid calls after all that, and one that a careless check would refuse */
  t = t0; m = m0;
  CHECK(posenc_mask_apply(&t, NULL) == POSENC_OK && memcmp(buf, snap, sizeof buf) == 0, "NULL mask: only validates");
  t.q_pos = INT32_MAX - (Q - 1); t.k_pos = INT32_MAX - (K - 1);
  CHECK(posenc_mask_apply(&t, &m) == POSENC_OK, "last positions at INT32_MAX");
  memcpy(buf, snap, sizeof buf);
  t = t0; tb = tb0; tb.dim = H; c = c0;
  CHECK(t5_add(&t, &m, &c, &tb, 0) == POSENC_OK, "table dim = heads");
  CHECK(t5_add(&t, &m, &c, &tb, 1) == POSENC_ERR_TABLE, "head0 + heads > dim");
  memcpy(buf, snap, sizeof buf);
  { /* plans that posenc_t5_plan_init did not make: refused, nothing written */
    posenc_t5_plan bad;
    t = t0; tb = tb0;
    memset(&bad, 0, sizeof bad);
    CHECK(posenc_t5_bias_add(&t, &m, &bad, &tb, 0) == POSENC_ERR_PARAM, "zeroed plan");
    CHECK(posenc_t5_bias_add(&t, &m, NULL, &tb, 0) == POSENC_ERR_NULL, "NULL plan");
    CHECK(posenc_t5_plan_init(NULL, &c0) == POSENC_ERR_NULL, "plan_init NULL plan");
    CHECK(posenc_t5_plan_init(&bad, &c0) == POSENC_OK, "plan_init");
    bad.near[3] = 32;
    CHECK(posenc_t5_bias_add(&t, &m, &bad, &tb, 0) == POSENC_ERR_PARAM, "plan with a bucket past the table");
    CHECK(posenc_t5_plan_init(&bad, &c0) == POSENC_OK, "plan_init again");
    bad.first[2] = bad.first[1] - 1;
    CHECK(posenc_t5_bias_add(&t, &m, &bad, &tb, 0) == POSENC_ERR_PARAM, "plan with descending thresholds");
    CHECK(posenc_t5_plan_init(&bad, &c0) == POSENC_OK, "plan_init again");
    bad.n = 17;
    CHECK(posenc_t5_bias_add(&t, &m, &bad, &tb, 0) == POSENC_ERR_PARAM, "plan with a wrong bucket count");
    CHECK(memcmp(buf, snap, sizeof buf) == 0, "bad plans: nothing written");
  }
  t = t0; t.row_stride = K + 2; t.head_stride = 0;
  t.heads = 1;
  CHECK(posenc_alibi_add(&t, &m, POSENC_ALIBI_KEY, 0, sl) == POSENC_OK, "one head with gaps");
  memcpy(buf, snap, sizeof buf);
}

/* ============================================================================================
 * Goldens: XXH3-64 of the little-endian image of canonical outputs. The stored values are the
 * references' (test_bias --print); every backend must reproduce them.
 * ========================================================================================== */
enum { N_GOLD = 5 };
static const char *const gold_names[N_GOLD] = {"alibi causal f32 8x64x80 keymask", "alibi symmetric f16 4x32x48 window",
                                               "t5 bias add f32, bf16 table", "t5 buckets [-1000, 1000] both modes",
                                               "deberta 256/512 [-3000, 3000]"};
static const uint64_t gold[N_GOLD] = {
  0x7990b6e7c03df823ull, /* alibi causal f32 8x64x80 keymask */
  0xc05bdfdd7cd25c5dull, /* alibi symmetric f16 4x32x48 window */
  0x2dd7c1a791daf320ull, /* t5 bias add f32, bf16 table */
  0x87774948131eabb5ull, /* t5 buckets [-1000, 1000] both modes */
  0x1ea6dfff10d1fd57ull, /* deberta 256/512 [-3000, 3000] */
};

/* Canonical scores, the same on any host: integers of the hash stream on a 2^-16 grid. */
static void canon_scores(unsigned char *b, size_t n, posenc_dtype dt, uint64_t seed) {
  size_t i;
  for (i = 0; i < n; i++) tl_store(b + i * esz(dt), dt, (float)((int64_t)(tl_splitmix64(&seed) >> 44) - (1 << 19)) / 65536.0f);
}

/* use_lib 0: the references here; 1: the library on the active backend. */
static void goldens(int use_lib, uint64_t h[N_GOLD]) {
  static float sl[8];
  static uint8_t keep[80];
  static uint16_t t5tab[32 * 6];
  tcase c;
  size_t i, n;
  unsigned char *b;
  int ok = 1;
  for (i = 0; i < 8; i++) sl[i] = (float)exp2(-(double)(i + 1)); /* 8 heads: 2^-1 .. 2^-8 */
  for (i = 0; i < 80; i++) keep[i] = (uint8_t)(i % 7 != 3 && i != 0);
  { uint64_t s = 77; for (i = 0; i < 32 * 6; i++) t5tab[i] = posenc_f32_to_bf16((float)((int64_t)(tl_splitmix64(&s) >> 50) - 8192) / 1024.0f); }
  /* ALiBi causal, f32, 8 x 64 x 80, key mask, queries 16 .. 79 */
  memset(&c, 0, sizeof c);
  c.op = OP_ALIBI; c.t.dtype = F32; c.t.heads = 8; c.t.rows = 64; c.t.cols = 80; c.t.q_pos = 16;
  c.m.causal = 1; c.m.key_keep = keep; c.form = POSENC_ALIBI_RELATIVE; c.slopes = sl;
  for (i = 0; i < 3; i++) {
    if (i == 1) { /* symmetric f16, 4 x 32 x 48 with row gaps, window 20 */
      memset(&c, 0, sizeof c);
      c.op = OP_ALIBI; c.t.dtype = F16; c.t.heads = 4; c.t.rows = 32; c.t.cols = 48; c.t.row_stride = 50;
      c.t.q_pos = 100; c.t.k_pos = 90; c.m.window = 20; c.form = POSENC_ALIBI_SYMMETRIC; c.slopes = sl + 2;
    } else if (i == 2) { /* T5, f32 tile 6 x 16 x 64, causal, heads 2..7 of a bf16 table */
      memset(&c, 0, sizeof c);
      c.op = OP_T5; c.t.dtype = F32; c.t.heads = 4; c.t.rows = 16; c.t.cols = 64; c.t.q_pos = 200; c.t.k_pos = 150;
      c.m.causal = 1; c.cfg.num_buckets = 32; c.cfg.max_distance = 128; c.cfg.bidirectional = 0;
      c.tab.data = t5tab; c.tab.dtype = BF16; c.tab.n_rows = 32; c.tab.dim = 6; c.head0 = 2;
    }
    n = tile_extent(&c.t);
    b = (unsigned char *)malloc(n * esz(c.t.dtype));
    canon_scores(b, n, c.t.dtype, 1000 + i);
    if (use_lib) { c.t.scores = b; ok &= call_op(&c, &c.t) == POSENC_OK; }
    else ref_apply(&c, b);
    h[i] = tl_xxh3_le(b, n * esz(c.t.dtype), esz(c.t.dtype));
    free(b);
  }
  { /* T5 buckets of [-1000, 1000], bidirectional then causal, defaults */
    static int32_t out[2 * 2001];
    posenc_t5_buckets bi = {32, 128, 1}, ca = {32, 128, 0};
    int32_t r;
    if (use_lib) ok &= posenc_t5_bucket_range(&bi, -1000, 2001, out) == POSENC_OK &&
                       posenc_t5_bucket_range(&ca, -1000, 2001, out + 2001) == POSENC_OK;
    else for (r = -1000; r <= 1000; r++) { out[r + 1000] = ref_t5(32, 128, 1, r); out[2001 + r + 1000] = ref_t5(32, 128, 0, r); }
    h[3] = tl_xxh3_le(out, sizeof out, 4);
  }
  { /* DeBERTa v3 */
    static int32_t out[6001];
    int32_t r;
    if (use_lib) ok &= posenc_deberta_bucket_range(256, 512, -3000, 6001, out) == POSENC_OK;
    else for (r = -3000; r <= 3000; r++) out[r + 3000] = ref_deberta(256, 512, r);
    h[4] = tl_xxh3_le(out, sizeof out, 4);
  }
  CHECK(ok, "golden computations succeed");
}

int main(int argc, char **argv) {
  uint64_t h[N_GOLD];
  int i;
  for (i = 0; i < (int)sizeof g_keep; i++) g_keep[i] = (uint8_t)(rnd(4) != 0);
  goldens(0, h);
  if (argc > 1 && strcmp(argv[1], "--print") == 0) {
    for (i = 0; i < N_GOLD; i++) printf("  0x%016llxull, /* %s */\n", (unsigned long long)h[i], gold_names[i]);
    return 0;
  }
  for (i = 0; i < N_GOLD; i++)
    CHECK(h[i] == gold[i], "reference golden %s: 0x%016llx, stored 0x%016llx", gold_names[i], (unsigned long long)h[i],
          (unsigned long long)gold[i]);
  test_slopes();
  posenc_alibi_slopes(32, 8.0, g_slopes);
  g_slopes[40] = 0.0f; g_slopes[41] = -0.25f; g_slopes[42] = 1.5f; /* slopes need only be finite */
  posenc_alibi_slopes(12, 8.0, g_slopes + 43);
  bk_report(stdout);
  BK_FOR_EACH(it) {
    printf("backend %s\n", posenc_isa_name(it.isa));
    rng_state = 0x5eed0005ull;
    test_tiles_backend();
    test_tile_specials();
    test_model_forms();
    test_txl();
    goldens(1, h);
    for (i = 0; i < N_GOLD; i++)
      CHECK(h[i] == gold[i], "%s: golden %s 0x%016llx, stored 0x%016llx", posenc_isa_name(it.isa), gold_names[i],
            (unsigned long long)h[i], (unsigned long long)gold[i]);
  }
  test_tile_errors();
  test_t5_buckets();
  test_deberta();
  test_scales();
  CHECK(unresolved == 0, "bucket references: %ld near-integer quotients that were not exact ties", unresolved);
  return tl_summary();
}
