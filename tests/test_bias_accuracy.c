/* Position biases against exact arithmetic (GMP integers, MPFR reals):
 *   - ALiBi slopes: the correctly rounded f32 of 2^e for every head count up to 256, several
 *     max_bias (e = -(B*k)/c in double, as documented); posenc_alibi_add within its documented
 *     error bound of s - m|k-q| with the exact slope;
 *   - T5 buckets: exact bucket thresholds A_t = ceil((max_distance^t e^(n-e-t))^(1/(n-e)))
 *     (integer roots), for many configurations over r in [-5000, 5000] and a sparse sweep to
 *     10^6; Hugging Face's float32 recipe emulated, its disagreements counted;
 *   - DeBERTa buckets: the exact ceiling by integer comparisons, and HF's float32 recipe;
 *   - Transformer-XL's R within 0.5 ulp + 1e-12 of the exact sin/cos;
 *   - the attention scales: relative error below 1e-15, LogN f32 factors correctly rounded.
 * Every backend that runs here makes the ALiBi tiles and Transformer-XL's R, and must give
 * scalar's bytes: what is measured holds for each of them (the rest has no SIMD kernel). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <mpfr.h>
#include "posenc.h"
#include "testlib.h"
#include "backends.h"

#define PREC 256

static uint64_t rng_state = 0xb1a5accull;
static uint64_t rnd(uint64_t n) { return tl_splitmix64(&rng_state) % n; }

/* ---- ALiBi ------------------------------------------------------------------------------- */
static double slope_exp(size_t n, double B, size_t h) {
  size_t c = 1;
  while (c * 2 <= n) c *= 2;
  return h < c ? -(B * (double)(h + 1)) / (double)c : -(B * (double)(2 * (h - c) + 1)) / (double)(2 * c);
}

static void test_slopes(void) {
  static const double Bs[] = {8.0, 4.0, 16.0, 1.0, 2.5, 0.3, 5.5, 100.0};
  float s[256];
  size_t bi, n, h, total = 0;
  int bad = 0;
  mpfr_t x;
  mpfr_init2(x, PREC);
  for (bi = 0; bi < sizeof Bs / sizeof Bs[0]; bi++)
    for (n = 1; n <= 256; n++) {
      if (posenc_alibi_slopes(n, Bs[bi], s) != POSENC_OK) { bad++; continue; }
      for (h = 0; h < n; h++, total++) {
        float want;
        mpfr_set_d(x, slope_exp(n, Bs[bi], h), MPFR_RNDN);
        mpfr_exp2(x, x, MPFR_RNDN);
        want = mpfr_get_flt(x, MPFR_RNDN);
        if (s[h] != want && bad++ < 5) printf("  B=%g n=%zu h=%zu: %.9g, want %.9g\n", Bs[bi], n, h, s[h], want);
      }
    }
  CHECK(bad == 0, "ALiBi slopes correctly rounded: %d of %zu differ", bad, total);
  printf("ALiBi slopes: %zu slopes (n <= 256, 8 max_bias values), %d not correctly rounded\n", total, bad);
  mpfr_clear(x);
}

/* posenc_alibi_add of a form onto a tile whose scores were s0, in out. */
typedef struct alibi_call {
  posenc_score_tile tile; /* its scores: out */
  const float *s0, *slopes;
  posenc_alibi_form form;
  int32_t k_ref;
} alibi_call;

static int alibi_run(void *ctx, void *out, size_t out_bytes) {
  alibi_call *c = (alibi_call *)ctx;
  memcpy(out, c->s0, out_bytes);
  c->tile.scores = out;
  return (int)posenc_alibi_add(&c->tile, NULL, c->form, c->k_ref, c->slopes);
}

/* posenc_alibi_add on f32 tiles: |s' - (s + m_exact D)| <= ulp(b) + ulp(s')/2 (posenc.h). */
static void test_alibi_bound(void) {
  enum { H = 12, Q = 33, K = 300 };
  static float sc[H * Q * K], s0[H * Q * K];
  float sl[H];
  posenc_score_tile t;
  alibi_call call;
  bk_result res;
  size_t h, i, j, bad = 0, n = 0;
  int form;
  double worst = 0;
  mpfr_t m, e, v;
  mpfr_inits2(PREC, m, e, v, (mpfr_ptr)0);
  posenc_alibi_slopes(H, 8.0, sl);
  for (i = 0; i < H * Q * K; i++) s0[i] = (float)((int64_t)rnd(1u << 24) - (1 << 23)) / 65536.0f;
  memset(&t, 0, sizeof t);
  t.scores = sc; t.dtype = POSENC_DTYPE_F32; t.heads = H; t.rows = Q; t.cols = K; t.q_pos = 3000; t.k_pos = 2800;
  call.tile = t; call.s0 = s0; call.slopes = sl; call.k_ref = 1000;
  for (form = 0; form < 3; form++) {
    call.form = (posenc_alibi_form)form;
    if (!bk_compare_ok(alibi_run, &call, sizeof sc, sc, &res)) {
      CHECK(0, "ALiBi add, form %d: %s", form, res.msg);
      bad++;
      continue;
    }
    for (h = 0; h < H; h++) {
      mpfr_set_d(m, slope_exp(H, 8.0, h), MPFR_RNDN);
      mpfr_exp2(m, m, MPFR_RNDN);  /* the exact slope, to 256 bits */
      for (i = 0; i < Q; i++)
        for (j = 0; j < K; j++, n++) {
          int64_t q = t.q_pos + (int64_t)i, k = t.k_pos + (int64_t)j;
          int64_t D = form == 0 ? -(k > q ? k - q : q - k) : form == 1 ? k - q : k - 1000;
          float got = sc[(h * Q + i) * K + j], b = sl[h] * (float)D;
          double err, bound;
          mpfr_mul_si(e, m, (long)D, MPFR_RNDN);
          mpfr_add_d(e, e, s0[(h * Q + i) * K + j], MPFR_RNDN);
          mpfr_sub_d(v, e, got, MPFR_RNDN);
          err = fabs(mpfr_get_d(v, MPFR_RNDN));
          bound = 2 * tl_half_ulp_f32(b) + tl_half_ulp_f32(got);
          if (bound > 0 && err / bound > worst) worst = err / bound;
          if (err > bound) bad++;
        }
    }
  }
  CHECK(bad == 0, "ALiBi add within ulp(b) + ulp(s')/2 of the exact: %zu of %zu outside", bad, n);
  printf("ALiBi add (f32, 12 heads, three forms): worst error %.3f of the documented bound\n", worst);
  mpfr_clears(m, e, v, (mpfr_ptr)0);
}

/* ---- T5 ---------------------------------------------------------------------------------- */
typedef struct t5ref {
  uint32_t n, e, w;             /* w = n - e */
  long thr[2048];               /* thr[t]: the smallest a with bucket e + t (t < w) */
} t5ref;

static void t5_thresholds(uint32_t nb, uint32_t md, int bidir, t5ref *r) {
  mpz_t c, root, p;
  uint32_t t;
  r->n = bidir ? nb / 2 : nb; r->e = r->n / 2; r->w = r->n - r->e;
  mpz_inits(c, root, p, (mpz_ptr)0);
  r->thr[0] = r->e;
  for (t = 1; t < r->w; t++) {
    /* a^w >= md^t e^(w-t) */
    mpz_ui_pow_ui(c, md, t);
    mpz_ui_pow_ui(p, r->e, r->w - t);
    mpz_mul(c, c, p);
    r->thr[t] = mpz_root(root, c, r->w) ? (long)mpz_get_ui(root) : (long)mpz_get_ui(root) + 1;
  }
  mpz_clears(c, root, p, (mpz_ptr)0);
}

static int32_t t5_exact(const t5ref *r, int bidir, int64_t rel) {
  int64_t a = bidir ? (rel < 0 ? -rel : rel) : (rel < 0 ? -rel : 0), off = bidir && rel > 0 ? r->n : 0;
  uint32_t lo = 0, hi = r->w - 1;
  if (a < r->e) return (int32_t)(off + a);
  while (lo < hi) { /* the largest t with thr[t] <= a */
    uint32_t mid = (lo + hi + 1) / 2;
    if (r->thr[mid] <= a) lo = mid; else hi = mid - 1;
  }
  return (int32_t)(off + r->e + lo);
}

/* Hugging Face's _relative_position_bucket in float32 (torch.log, a double divisor used as a
 * float32 scalar, .to(long) truncation); logf stands in for torch's float32 log. */
static int32_t t5_hf(uint32_t nb, uint32_t md, int bidir, int64_t rel) {
  int64_t n = nb, off = 0, a, e;
  float v;
  if (bidir) { n /= 2; off = rel > 0 ? n : 0; a = rel < 0 ? -rel : rel; }
  else a = rel < 0 ? -rel : 0;
  e = n / 2;
  if (a < e) return (int32_t)(off + a);
  v = logf((float)a / (float)e) / (float)log((double)md / (double)e) * (float)(n - e);
  a = e + (int64_t)v;
  return (int32_t)(off + (a < n - 1 ? a : n - 1));
}

#define FAR 1000000

static void test_t5(void) {
  static int32_t got[10001];
  static t5ref ref;
  int32_t *far = (int32_t *)malloc((2 * FAR + 1) * sizeof(int32_t));
  size_t configs = 0, checked = 0;
  unsigned idx;
  int bad = 0;
  long hf_total = 0;
  for (idx = 0; idx < 128; idx++) {
    posenc_t5_buckets cfg;
    long hf_bad = 0, hf_n = 0;
    int64_t r;
    int mode;
    if (!tl_t5_config(idx, &cfg.num_buckets, &cfg.max_distance, &cfg.bidirectional)) continue;
    mode = cfg.bidirectional;
    configs++;
    t5_thresholds(cfg.num_buckets, cfg.max_distance, mode, &ref);
    if (posenc_t5_bucket_range(&cfg, -5000, 10001, got) != POSENC_OK) { bad++; continue; }
    for (r = -5000; r <= 5000; r++, checked++) {
      int32_t want = t5_exact(&ref, mode, r);
      if (got[r + 5000] != want && bad++ < 5)
        printf("  t5 nb=%u md=%u bi=%d r=%lld: %d want %d\n", cfg.num_buckets, cfg.max_distance, mode, (long long)r,
               got[r + 5000], want);
      hf_n++; hf_bad += t5_hf(cfg.num_buckets, cfg.max_distance, mode, r) != want;
    }
    /* sparse to 10^6, both signs (one call: the thresholds are set up per call) */
    if (posenc_t5_bucket_range(&cfg, -FAR, 2 * FAR + 1, far) != POSENC_OK) { bad++; continue; }
    for (r = 5001; r <= FAR; r += 1 + (int64_t)rnd(400)) {
      int sign;
      for (sign = -1; sign <= 1; sign += 2) {
        int32_t one = far[sign * r + FAR], want = t5_exact(&ref, mode, sign * r);
        checked++;
        if (one != want && bad++ < 5) printf("  t5 nb=%u md=%u bi=%d r=%lld: %d want %d\n", cfg.num_buckets,
                                              cfg.max_distance, mode, (long long)(sign * r), one, want);
        hf_n++; hf_bad += t5_hf(cfg.num_buckets, cfg.max_distance, mode, sign * r) != want;
      }
    }
    hf_total += hf_bad;
    if (hf_bad || (cfg.num_buckets == 32 && cfg.max_distance == 128))
      printf("  T5 %s nb=%u md=%u: HF float32 recipe disagrees on %ld of %ld positions\n", mode ? "bidirectional" : "causal",
             cfg.num_buckets, cfg.max_distance, hf_bad, hf_n);
    if ((cfg.num_buckets == 32 && cfg.max_distance == 128) || (cfg.num_buckets == 64 && cfg.max_distance == 256))
      CHECK(hf_bad == 0, "T5 %u/%u (%s): HF float32 agrees with the exact buckets", cfg.num_buckets, cfg.max_distance,
            mode ? "bidirectional" : "causal");
  }
  free(far);
  CHECK(bad == 0, "T5 buckets exact: %d of %zu differ (%zu configurations)", bad, checked, configs);
  printf("T5 buckets: %zu configurations, %zu positions checked against exact integer thresholds, %d differ;"
         " HF float32 recipe: %ld disagreements in all\n", configs, checked, bad, hf_total);
}

/* ---- DeBERTa ------------------------------------------------------------------------------ */
/* t >= (mid-1) ln(a/mid) / ln(L/mid)  <=>  L^t mid^(mid-1) >= a^(mid-1) mid^t */
static int deb_ge(long t, long a, long mid, long L) {
  mpz_t l, r, p;
  int ge;
  mpz_inits(l, r, p, (mpz_ptr)0);
  mpz_ui_pow_ui(l, (unsigned long)L, (unsigned long)t);
  mpz_ui_pow_ui(p, (unsigned long)mid, (unsigned long)(mid - 1));
  mpz_mul(l, l, p);
  mpz_ui_pow_ui(r, (unsigned long)a, (unsigned long)(mid - 1));
  mpz_ui_pow_ui(p, (unsigned long)mid, (unsigned long)t);
  mpz_mul(r, r, p);
  ge = mpz_cmp(l, r) >= 0;
  mpz_clears(l, r, p, (mpz_ptr)0);
  return ge;
}
static int32_t deb_exact(uint32_t bs, uint32_t mp, int64_t r) {
  long mid = (long)bs / 2, a = (long)(r < 0 ? -r : r), L = (long)mp - 1, t;
  if (bs == 0 || a <= mid) return (int32_t)r;
  t = (long)ceil((double)(mid - 1) * log((double)a / (double)mid) / log((double)L / (double)mid));
  if (t < 0) t = 0;
  while (!deb_ge(t, a, mid, L)) t++;
  while (t > 0 && deb_ge(t - 1, a, mid, L)) t--;
  return (int32_t)(r < 0 ? -(mid + t) : mid + t);
}
/* HF make_log_bucket_position in float32 (int / int true division, torch.log, ceil). */
static int32_t deb_hf(uint32_t bs, uint32_t mp, int64_t r) {
  int64_t mid = bs / 2, a = r < 0 ? -r : r, lp;
  if (a <= mid) return (int32_t)r;
  lp = (int64_t)ceilf(logf((float)a / (float)mid) / logf((float)((double)(mp - 1) / (double)mid)) * (float)(mid - 1)) + mid;
  return (int32_t)(r < 0 ? -lp : lp);
}

static void test_deberta(void) {
  static const uint32_t cfg[][2] = {{256, 512}, {256, 1024}, {128, 512}, {64, 128}, {32, 100}, {4, 10}, {512, 4096}};
  static int32_t got[6001];
  size_t ci, checked = 0;
  int bad = 0;
  for (ci = 0; ci < sizeof cfg / sizeof cfg[0]; ci++) {
    long hf_bad = 0, hf_n = 0;
    int64_t r;
    if (posenc_deberta_bucket_range(cfg[ci][0], cfg[ci][1], -3000, 6001, got) != POSENC_OK) { bad++; continue; }
    for (r = -3000; r <= 3000; r++, checked++) {
      int32_t want = deb_exact(cfg[ci][0], cfg[ci][1], r);
      if (got[r + 3000] != want && bad++ < 5)
        printf("  deberta %u/%u r=%lld: %d want %d\n", cfg[ci][0], cfg[ci][1], (long long)r, got[r + 3000], want);
      hf_n++; hf_bad += deb_hf(cfg[ci][0], cfg[ci][1], r) != want;
    }
    for (r = 3001; r <= FAR; r += 1 + (int64_t)rnd(4000), checked++) {
      int32_t one = 0, want = deb_exact(cfg[ci][0], cfg[ci][1], -r);
      posenc_deberta_bucket_range(cfg[ci][0], cfg[ci][1], (int32_t)-r, 1, &one);
      if (one != want && bad++ < 5) printf("  deberta %u/%u r=%lld: %d want %d\n", cfg[ci][0], cfg[ci][1], (long long)-r, one, want);
    }
    printf("  DeBERTa %u/%u: HF float32 recipe disagrees on %ld of %ld positions in [-3000, 3000]\n", cfg[ci][0], cfg[ci][1],
           hf_bad, hf_n);
  }
  CHECK(bad == 0, "DeBERTa buckets exact: %d of %zu differ", bad, checked);
}

/* ---- Transformer-XL ----------------------------------------------------------------------- */
typedef struct txl_call {
  const posenc_sinusoidal_params *prm;
  size_t klen;
  int32_t clamp;
} txl_call;

static int txl_run(void *ctx, void *out, size_t out_bytes) {
  const txl_call *c = (const txl_call *)ctx;
  return (int)posenc_txl_relative(c->prm, c->klen, c->clamp, out, out_bytes);
}

static void test_txl(void) {
  static const size_t dims[] = {64, 7, 512};
  static const double bases[] = {10000.0, 500000.0, 10000.0};
  static const int32_t clamps[] = {0, 1000, 30000};
  size_t di, n = 0, bad = 0;
  double worst = 0;
  mpfr_t w, x, v;
  mpfr_inits2(PREC, w, x, v, (mpfr_ptr)0);
  for (di = 0; di < 3; di++) {
    size_t d = dims[di], half = d / 2, klen = di == 2 ? 40000 : 3000, k, i, step = di == 2 ? 97 : 7;
    posenc_sinusoidal_params p = posenc_sinusoidal_default(d);
    float *out = (float *)malloc(klen * d * 4);
    txl_call call;
    bk_result res;
    p.layout = POSENC_LAYOUT_SPLIT; p.base = bases[di];
    call.prm = &p; call.klen = klen; call.clamp = clamps[di];
    if (!bk_compare_ok(txl_run, &call, klen * d * 4, out, &res)) {
      CHECK(0, "Transformer-XL d=%zu: %s", d, res.msg);
      bad++;
      free(out);
      continue;
    }
    for (i = 0; i < half; i++) {
      /* omega_i = base^(-2i/d), exact from the double base */
      mpfr_set_d(w, bases[di], MPFR_RNDN);
      mpfr_log(w, w, MPFR_RNDN);
      mpfr_mul_si(w, w, -2 * (long)i, MPFR_RNDN);
      mpfr_div_ui(w, w, (unsigned long)d, MPFR_RNDN);
      mpfr_exp(w, w, MPFR_RNDN);
      for (k = 0; k < klen; k += (k < 50 ? 1 : step)) {
        long pos = (long)(klen - 1 - k);
        int sc;
        if (clamps[di] > 0 && pos > clamps[di]) pos = clamps[di];
        mpfr_mul_si(x, w, pos, MPFR_RNDN);
        for (sc = 0; sc < 2; sc++, n++) {
          double exact, err, bound;
          float got = out[k * d + (sc ? half : 0) + i];
          if (sc) mpfr_cos(v, x, MPFR_RNDN); else mpfr_sin(v, x, MPFR_RNDN);
          exact = mpfr_get_d(v, MPFR_RNDN);
          err = fabs((double)got - exact);
          bound = tl_half_ulp_f32(exact) + 1e-12;
          if (err / (2 * tl_half_ulp_f32(exact) + 1e-300) > worst) worst = err / (2 * tl_half_ulp_f32(exact) + 1e-300);
          if (err > bound && bad++ < 5) printf("  txl d=%zu p=%ld i=%zu %s: %.9g vs %.17g\n", d, pos, i, sc ? "cos" : "sin", got, exact);
        }
      }
    }
    if (d % 2) for (k = 0; k < klen; k++) if (out[k * d + d - 1] != 0.0f) bad++;  /* odd d: zero column */
    free(out);
  }
  CHECK(bad == 0, "Transformer-XL R within 0.5 ulp + 1e-12 of the exact: %zu of %zu outside", bad, n);
  printf("Transformer-XL R: %zu values, worst %.4f ulp\n", n, worst);
  mpfr_clears(w, x, v, (mpfr_ptr)0);
}

/* ---- scales ------------------------------------------------------------------------------- */
static double rel_err(double got, mpfr_t exact) {
  mpfr_t d;
  double r;
  mpfr_init2(d, PREC);
  mpfr_sub_d(d, exact, got, MPFR_RNDN);
  mpfr_div(d, d, exact, MPFR_RNDN);
  r = fabs(mpfr_get_d(d, MPFR_RNDN));
  mpfr_clear(d);
  return r;
}

static void test_scales(void) {
  static const uint32_t Ls[] = {2, 3, 1024, 2048, 8192, 32768, 131072};
  static float f[20000];
  mpfr_t a, b;
  double worst = 0;
  size_t li, n = 0;
  int bad = 0, badf = 0;
  uint32_t pos;
  mpfr_inits2(PREC, a, b, (mpfr_ptr)0);
  for (li = 0; li < sizeof Ls / sizeof Ls[0]; li++) {
    uint32_t L = Ls[li];
    uint64_t p64;
    for (p64 = 0; p64 < 4000000000u; p64 = p64 < 20000 ? p64 + 1 : p64 + p64 / 7 + rnd(1000)) {
      double got = posenc_logn_scale(pos = (uint32_t)p64, L), e;
      n++;
      if (pos + 1 <= L) { bad += got != 1.0; continue; }
      mpfr_set_ui(a, pos + 1u, MPFR_RNDN); mpfr_log(a, a, MPFR_RNDN);
      mpfr_set_ui(b, L, MPFR_RNDN); mpfr_log(b, b, MPFR_RNDN);
      mpfr_div(a, a, b, MPFR_RNDN);
      e = rel_err(got, a);
      if (e > worst) worst = e;
      if (e >= 1e-15) bad++;
    }
    if (posenc_logn_scales(L, 0, 20000, f) != POSENC_OK) { badf++; continue; }
    for (pos = 0; pos < 20000; pos++) {
      float want = 1.0f;
      if (pos + 1 > L) {
        mpfr_set_ui(a, pos + 1u, MPFR_RNDN); mpfr_log(a, a, MPFR_RNDN);
        mpfr_set_ui(b, L, MPFR_RNDN); mpfr_log(b, b, MPFR_RNDN);
        mpfr_div(a, a, b, MPFR_RNDN);
        want = mpfr_get_flt(a, MPFR_RNDN);
      }
      if (f[pos] != want && badf++ < 5) printf("  logn f32 L=%u pos=%u: %.9g want %.9g\n", L, pos, f[pos], want);
    }
  }
  CHECK(bad == 0, "LogN scale: %d of %zu with relative error >= 1e-15 (worst %.3g)", bad, n, worst);
  CHECK(badf == 0, "LogN f32 factors correctly rounded: %d differ", badf);
  printf("LogN: %zu factors, worst relative error %.3g; f32 factors correctly rounded\n", n, worst);
  /* YaRN, DeepSeek, Llama-4 */
  {
    static const double fs[] = {1.0000001, 1.5, 2.0, 4.0, 8.0, 16.0, 32.0, 40.0, 64.0, 1e3, 1e6};
    static const double ms[] = {1.0, 0.707, 0.1, 1.5, 2.0};
    size_t i, j;
    double w2 = 0;
    bad = 0;
    for (i = 0; i < sizeof fs / sizeof fs[0]; i++)
      for (j = 0; j < sizeof ms / sizeof ms[0]; j++) {
        double e1, e2;
        /* 0.1 m ln(s) + 1 with the double 0.1 read as the decimal 0.1 */
        mpfr_set_d(a, fs[i], MPFR_RNDN); mpfr_log(a, a, MPFR_RNDN);
        mpfr_mul_d(a, a, ms[j], MPFR_RNDN);
        mpfr_div_ui(a, a, 10, MPFR_RNDN);
        mpfr_add_ui(a, a, 1, MPFR_RNDN);
        e1 = rel_err(posenc_yarn_mscale(fs[i], ms[j]), a);
        mpfr_sqr(a, a, MPFR_RNDN);
        mpfr_set_ui(b, 192, MPFR_RNDN); mpfr_sqrt(b, b, MPFR_RNDN);
        mpfr_div(a, a, b, MPFR_RNDN);
        e2 = rel_err(posenc_deepseek_softmax_scale(192, fs[i], ms[j]), a);
        if (e1 > w2) w2 = e1;
        if (e2 > w2) w2 = e2;
        bad += e1 >= 1e-15 || e2 >= 1e-15;
      }
    CHECK(bad == 0, "YaRN mscale and DeepSeek softmax scale: %d with relative error >= 1e-15 (worst %.3g)", bad, w2);
    bad = 0; w2 = 0;
    uint64_t p64;
    for (p64 = 0; p64 < 4000000000u; p64 = p64 + 1 + p64 / 3 + rnd(5000)) {
      uint32_t fsc;
      pos = (uint32_t)p64;
      for (fsc = 1; fsc <= 8192; fsc *= 8) {
        double e;
        mpfr_set_ui(a, (uint32_t)(((uint64_t)pos + 1) / fsc) + 1u, MPFR_RNDN);
        mpfr_log(a, a, MPFR_RNDN);
        mpfr_div_ui(a, a, 10, MPFR_RNDN);
        mpfr_add_ui(a, a, 1, MPFR_RNDN);
        e = rel_err(posenc_llama4_attn_scale(pos, fsc, 0.1), a);
        if (e > w2) w2 = e;
        bad += e >= 1e-15;
      }
    }
    CHECK(bad == 0, "Llama-4 attn scale: %d with relative error >= 1e-15 (worst %.3g)", bad, w2);
  }
  mpfr_clears(a, b, (mpfr_ptr)0);
}

int main(void) {
  test_slopes();
  test_alibi_bound();
  test_t5();
  test_deberta();
  test_txl();
  test_scales();
  CHECK(bk_baseline_runs(), "SSE2, part of x86-64, is not among the backends compared");
  bk_report_measured(stdout);
  return tl_summary();
}
