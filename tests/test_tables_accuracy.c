/* Tables accuracy against MPFR (posenc.h, "Absolute encodings end to end"):
 *   - learned tables: std = 0 is sqrt(1/dim) correctly rounded (the internal helper, every dim
 *     up to 2^17 and large ones), and the table with std = 0 equals the one with that std;
 *   - resize: every value is the exact interpolation (v0 (den-rem) + v1 rem) / den correctly
 *     rounded to f32, f16 and bf16;
 *   - index encodings: p and p / max_len correctly rounded to f32, f16 and bf16;
 *   - 2-D sin-cos and the fairseq / tensor2tensor rules: every value within 0.5 ulp(f32) + 1e-12
 *     of sin/cos(p omega_k) with the rule's exact omega_k, positions up to 2^24.
 * This file compiles posenc.h itself (static) to reach the internal sqrt helper. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <mpfr.h>
/* Every API function is static here and most go unused. */
#if defined(__GNUC__)
#  pragma GCC diagnostic ignored "-Wunused-function"
#endif
#define POSENC_STATIC
#define POSENC_IMPLEMENTATION
#include "posenc.h"
#include "testlib.h"

#define PREC 256

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng_next(void) { return tl_splitmix64(&rng_state); }

/* x rounded to nearest even in a binary format of p bits whose smallest subnormal is 2^qmin. */
static double mp_round(mpfr_t x, int p, int qmin) {
  mpfr_t t;
  long q;
  double r;
  if (mpfr_zero_p(x)) return 0.0;
  q = (long)mpfr_get_exp(x) - p;   /* x = m 2^e, m in [0.5, 1): ulp 2^(e-p) */
  if (q < qmin) q = qmin;
  mpfr_init2(t, PREC);
  mpfr_div_2si(t, x, q, MPFR_RNDN);
  mpfr_rint(t, t, MPFR_RNDN);      /* ties to even */
  mpfr_mul_2si(t, t, q, MPFR_RNDN);
  r = mpfr_get_d(t, MPFR_RNDN);
  mpfr_clear(t);
  return r;
}
static double mp_round_dtype(mpfr_t x, posenc_dtype dt) {
  return dt == POSENC_DTYPE_F32 ? mp_round(x, 24, -149) : dt == POSENC_DTYPE_F16 ? mp_round(x, 11, -24) : mp_round(x, 8, -133);
}
static double get_val(const void *base, posenc_dtype dt, size_t i) {
  if (dt == POSENC_DTYPE_F32) { float f; memcpy(&f, (const unsigned char *)base + 4 * i, 4); return f; }
  { uint16_t h; memcpy(&h, (const unsigned char *)base + 2 * i, 2);
    return dt == POSENC_DTYPE_F16 ? posenc_f16_to_f32(h) : posenc_bf16_to_f32(h); }
}

/* ---- std = sqrt(1/dim) --------------------------------------------------------------------- */
static void test_std(void) {
  uint64_t d, bad = 0, n = 0;
  mpfr_t x;
  mpfr_init2(x, 53);
  for (d = 1; d <= ((uint64_t)1 << 17) + 200; d++, n++) {
    double got = posenc_i_tb_rsqrt_int(d);
    mpfr_set_uj(x, d, MPFR_RNDN);
    mpfr_rec_sqrt(x, x, MPFR_RNDN);
    if (got != mpfr_get_d(x, MPFR_RNDN)) { if (bad++ < 5) printf("  sqrt(1/%llu): %.17g vs %.17g\n",
        (unsigned long long)d, got, mpfr_get_d(x, MPFR_RNDN)); }
  }
  for (d = 0; d < 20000; d++, n++) {
    uint64_t v = rng_next(), sh = 2 + rng_next() % 60;   /* one call per statement: a fixed order */
    v >>= sh;
    double got;
    if (v == 0) v = 1;
    got = posenc_i_tb_rsqrt_int(v);
    mpfr_set_uj(x, v, MPFR_RNDN); /* exact: 53 bits suffice only for v < 2^53, so use a wide one */
    {
      mpfr_t w; mpfr_init2(w, 128); mpfr_set_uj(w, v, MPFR_RNDN); mpfr_rec_sqrt(x, w, MPFR_RNDN); mpfr_clear(w);
    }
    if (got != mpfr_get_d(x, MPFR_RNDN)) { if (bad++ < 10) printf("  sqrt(1/%llu): %.17g vs %.17g\n",
        (unsigned long long)v, got, mpfr_get_d(x, MPFR_RNDN)); }
  }
  CHECK(bad == 0, "sqrt(1/dim) correctly rounded: %llu of %llu differ", (unsigned long long)bad, (unsigned long long)n);
  printf("std = sqrt(1/dim): %llu dims, %llu not correctly rounded\n", (unsigned long long)n, (unsigned long long)bad);
  /* the public API uses it */
  {
    static const size_t dims[] = {3, 7, 96, 768, 1000, 4095};
    size_t i;
    for (i = 0; i < sizeof dims / sizeof dims[0]; i++) {
      float *a = (float *)malloc(8 * dims[i] * 4), *b = (float *)malloc(8 * dims[i] * 4);
      mpfr_set_ui(x, (unsigned long)dims[i], MPFR_RNDN); mpfr_rec_sqrt(x, x, MPFR_RNDN);
      CHECK(posenc_learned_init(11, 0.0, 8, dims[i], POSENC_DTYPE_F32, 0, a, 8 * dims[i] * 4) == POSENC_OK &&
            posenc_learned_init(11, mpfr_get_d(x, MPFR_RNDN), 8, dims[i], POSENC_DTYPE_F32, 0, b, 8 * dims[i] * 4) == POSENC_OK &&
            memcmp(a, b, 8 * dims[i] * 4) == 0, "dim %zu: std 0 is sqrt(1/dim)", dims[i]);
      free(a); free(b);
    }
  }
  mpfr_clear(x);
}

/* ---- resize -------------------------------------------------------------------------------- */
static void test_resize(void) {
  static const size_t shapes[][2] = {{5, 12}, {12, 5}, {3, 1000}, {1000, 3}, {197, 577}, {577, 197}, {7, 1}, {2, 2}, {50, 49}};
  enum { DIM = 5 };
  float *src = (float *)malloc(1000 * DIM * 4);
  unsigned char *out = (unsigned char *)malloc(1000 * DIM * 4);
  size_t si, r, j, i, total = 0, bad = 0;
  int ac, dt;
  mpfr_t a, b;
  mpfr_inits2(PREC, a, b, (mpfr_ptr)0);
  for (i = 0; i < 1000 * DIM; i++) {  /* random values over a few binades, some tiny */
    uint64_t u = rng_next();
    src[i] = (float)ldexp((double)(u >> 40) / 16777216.0 - 0.5, (int)(u % 12) - 6 - (u % 97 == 0 ? 20 : 0));
  }
  for (si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
    for (ac = 0; ac < 2; ac++)
      for (dt = 0; dt < 3; dt++) {
        size_t n = shapes[si][0], m = shapes[si][1];
        posenc_table tab = {src, POSENC_DTYPE_F32, n, DIM, 0};
        CHECK(posenc_table_resize(&tab, m, ac, (posenc_dtype)dt, 0, out, 1000 * DIM * 4) == POSENC_OK, "resize");
        for (r = 0; r < m; r++) {
          uint64_t num, den, i0, rem;
          if (ac) { num = m > 1 ? (uint64_t)r * (n - 1) : 0; den = m > 1 ? m - 1 : 1; }
          else { uint64_t x = (2 * (uint64_t)r + 1) * n; num = x > m ? x - m : 0; den = 2 * (uint64_t)m; }
          i0 = num / den; rem = num % den;
          if (i0 >= n - 1) { i0 = n - 1; rem = 0; }
          for (j = 0; j < DIM; j++) {
            double want, got = get_val(out, (posenc_dtype)dt, r * DIM + j);
            mpfr_set_flt(a, src[i0 * DIM + j], MPFR_RNDN);
            mpfr_mul_ui(a, a, (unsigned long)(den - rem), MPFR_RNDN);
            if (rem) {
              mpfr_set_flt(b, src[(i0 + 1) * DIM + j], MPFR_RNDN);
              mpfr_mul_ui(b, b, (unsigned long)rem, MPFR_RNDN);
              mpfr_add(a, a, b, MPFR_RNDN);
            }
            mpfr_div_ui(a, a, (unsigned long)den, MPFR_RNDN);
            want = mp_round_dtype(a, (posenc_dtype)dt);
            total++;
            if (got != want) { if (bad++ < 5) printf("  resize %zu->%zu ac %d %s row %zu col %zu: %.9g, want %.9g\n",
                n, m, ac, posenc_dtype_name((posenc_dtype)dt), r, j, got, want); }
          }
        }
      }
  CHECK(bad == 0, "resize: %zu of %zu values not the correctly rounded interpolation", bad, total);
  printf("resize: %zu values, %zu not correctly rounded (0 ulp)\n", total, bad);
  mpfr_clears(a, b, (mpfr_ptr)0);
  free(src); free(out);
}

/* ---- index encodings ----------------------------------------------------------------------- */
static void test_index(void) {
  size_t total = 0, bad = 0, naive_bad = 0, t;
  int dt;
  mpfr_t x;
  mpfr_init2(x, PREC);
  for (t = 0; t < 60000; t++) {
    uint64_t r1 = rng_next(), r2 = rng_next(), r3 = rng_next(), r4 = rng_next(), r5 = rng_next();
    uint32_t max_len = t < 20000 ? (uint32_t)(1 + t % 300) : (uint32_t)(r1 >> (32 + r2 % 32));
    int32_t p = t < 20000 ? (int32_t)(t / 300) * 7 % (int32_t)(max_len + 1)
                          : (int32_t)(r3 >> (33 + r4 % 31)) * (r5 & 1 ? -1 : 1);
    posenc_index_kind kind = t % 5 == 4 ? POSENC_INDEX_INTEGER : POSENC_INDEX_NORMALIZED;
    if (max_len == 0) max_len = 1;
    for (dt = 0; dt < 3; dt++) {
      unsigned char buf[4];
      posenc_status st = posenc_index_table(kind, max_len, p, 1, 1, (posenc_dtype)dt, 0, buf, 4);
      double got, want;
      mpfr_set_si(x, p, MPFR_RNDN);
      if (kind == POSENC_INDEX_NORMALIZED) mpfr_div_ui(x, x, max_len, MPFR_RNDN);
      want = mp_round_dtype(x, (posenc_dtype)dt);
      if (dt == POSENC_DTYPE_F16 && fabs(mpfr_get_d(x, MPFR_RNDN)) > 65504.0) {
        CHECK(st == POSENC_ERR_POSITION, "f16 beyond 65504: %s", posenc_strerror(st));
        continue;
      }
      got = get_val(buf, (posenc_dtype)dt, 0);
      total++;
      if (st != POSENC_OK || got != want) { if (bad++ < 5) printf("  index %d/%u %s: %.9g, want %.9g\n", p, max_len,
          posenc_dtype_name((posenc_dtype)dt), got, want); }
      if (dt == POSENC_DTYPE_F32 && kind == POSENC_INDEX_NORMALIZED) naive_bad += (double)(float)((double)p / max_len) != want;
      if (dt == POSENC_DTYPE_BF16) naive_bad += (double)posenc_bf16_to_f32(posenc_f32_to_bf16((float)(kind == POSENC_INDEX_NORMALIZED ? (double)p / max_len : (double)p))) != want;
    }
  }
  /* cases where rounding p / max_len (or p) to f32 first lands on a bf16 or f16 tie: found by
     search, so that a double-rounding implementation fails here */
  for (t = 0; t < 4000000 && naive_bad < 200; t++) {
    uint32_t max_len = (uint32_t)(1 + rng_next() % (1u << 20));
    int32_t p = (int32_t)(rng_next() % ((uint64_t)max_len * 8));
    posenc_index_kind kind = POSENC_INDEX_NORMALIZED;
    float f;
    uint32_t fb;
    if (t % 2) { kind = POSENC_INDEX_INTEGER; p = (int32_t)((1u << 24) + (rng_next() % (1u << 30))); }
    f = (float)(kind == POSENC_INDEX_NORMALIZED ? (double)p / max_len : (double)p);
    memcpy(&fb, &f, 4);
    for (dt = 1; dt < 3; dt++) {
      unsigned char buf[2];
      double got, want;
      if (dt == POSENC_DTYPE_BF16 ? (fb & 0xffffu) != 0x8000u : ((fb & 0x1fffu) != 0x1000u || f > 60000.0f)) continue;
      mpfr_set_si(x, p, MPFR_RNDN);
      if (kind == POSENC_INDEX_NORMALIZED) mpfr_div_ui(x, x, max_len, MPFR_RNDN);
      if (mpfr_cmp_d(x, (double)f) == 0) continue;  /* a real tie: no double rounding */
      want = mp_round_dtype(x, (posenc_dtype)dt);
      CHECK(posenc_index_table(kind, max_len, p, 1, 1, (posenc_dtype)dt, 0, buf, 2) == POSENC_OK, "tie case");
      got = get_val(buf, (posenc_dtype)dt, 0);
      total++;
      naive_bad += (dt == POSENC_DTYPE_BF16 ? (double)posenc_bf16_to_f32(posenc_f32_to_bf16(f))
                                            : (double)posenc_f16_to_f32(posenc_f32_to_f16(f))) != want;
      if (got != want) { if (bad++ < 5) printf("  index tie %d/%u %s: %.9g, want %.9g\n", p, max_len,
          posenc_dtype_name((posenc_dtype)dt), got, want); }
    }
  }
  CHECK(naive_bad >= 50, "the search found %zu double-rounding cases", naive_bad);
  CHECK(bad == 0, "index: %zu of %zu values not correctly rounded", bad, total);
  printf("index: %zu values, %zu not correctly rounded (0 ulp); rounding through double/f32 would miss %zu\n",
         total, bad, naive_bad);
  mpfr_clear(x);
}

/* ---- sinusoidal values vs MPFR: the 2-D table and the 1-D rules ---------------------------- */
typedef struct err_acc { double max_ulp, max_excess; size_t n, bad; } err_acc;

/* omega_k in MPFR: rule 0: base^(-k/q) (q = D/4 for 2-D); 1: fairseq base^(-k/(h-1));
 * 2: t2t m * (base/m)^(-k/max(h-1, 1)). */
static void mp_omega(int rule, double base, double m, size_t k, size_t h, size_t q, mpfr_t om) {
  mpfr_t t;
  mpfr_init2(t, PREC);
  if (rule == 2) { mpfr_set_d(t, base, MPFR_RNDN); mpfr_div_d(t, t, m, MPFR_RNDN); mpfr_log(t, t, MPFR_RNDN); }
  else { mpfr_set_d(t, base, MPFR_RNDN); mpfr_log(t, t, MPFR_RNDN); }
  mpfr_mul_si(t, t, -(long)k, MPFR_RNDN);
  mpfr_div_ui(t, t, (unsigned long)(rule == 0 ? q : (h > 1 ? h - 1 : 1)), MPFR_RNDN);
  mpfr_exp(om, t, MPFR_RNDN);
  if (rule == 2) mpfr_mul_d(om, om, m, MPFR_RNDN);
  mpfr_clear(t);
}

static void check_val(err_acc *acc, float got, mpfr_t exact) {
  double e = mpfr_get_d(exact, MPFR_RNDN), err = fabs((double)got - e), hu = tl_half_ulp_f32(e);
  double excess = err - (hu + 1e-12);
  acc->n++;
  if (hu > 0 && err / (2 * hu) > acc->max_ulp) acc->max_ulp = err / (2 * hu);
  if (excess > acc->max_excess) acc->max_excess = excess;
  if (excess > 0) acc->bad++;
}

static void test_2d(void) {
  static const size_t cfg[][3] = {{64, 14, 14}, {768, 16, 16}, {16, 3, 20000}, {8, 70000, 2}};
  size_t ci;
  err_acc acc = {0, -1, 0, 0};
  mpfr_t om, ang, s, c;
  mpfr_inits2(PREC, om, ang, s, c, (mpfr_ptr)0);
  for (ci = 0; ci < sizeof cfg / sizeof cfg[0]; ci++) {
    size_t D = cfg[ci][0], H = cfg[ci][1], W = cfg[ci][2], q = D / 4, k, w, h, bytes = 0, bad_copy = 0;
    posenc_sincos_2d_params p = posenc_sincos_2d_default(D, H, W);
    float *t;
    p.base = ci == 1 ? 100.0 : 10000.0;
    posenc_sincos_2d_bytes(&p, &bytes);
    t = (float *)malloc(bytes);
    CHECK(posenc_sincos_2d(&p, t, bytes) == POSENC_OK, "2-D %zu", ci);
    for (k = 0; k < q; k++) {
      mp_omega(0, p.base, 1.0, k, 0, q, om);
      for (w = 0; w < (W > H ? W : H); w++) {
        mpfr_mul_ui(ang, om, (unsigned long)w, MPFR_RNDN);
        mpfr_sin_cos(s, c, ang, MPFR_RNDN);
        if (w < W) { check_val(&acc, t[w * D + k], s); check_val(&acc, t[w * D + q + k], c); }
        if (w < H) { check_val(&acc, t[w * W * D + 2 * q + k], s); check_val(&acc, t[w * W * D + 3 * q + k], c); }
      }
    }
    for (h = 0; h < H; h++)   /* every other token is a copy of those values */
      for (w = 0; w < W; w++)
        bad_copy += memcmp(t + (h * W + w) * D, t + w * D, 2 * q * 4) != 0 ||
                    memcmp(t + (h * W + w) * D + 2 * q, t + h * W * D + 2 * q, 2 * q * 4) != 0;
    CHECK(bad_copy == 0, "2-D copies");
    free(t);
  }
  CHECK(acc.bad == 0, "2-D: %zu of %zu values beyond 0.5 ulp + 1e-12 (max excess %g)", acc.bad, acc.n, acc.max_excess);
  printf("2-D sin-cos: %zu values, max error %.4f ulp(f32), %zu beyond the bound\n", acc.n, acc.max_ulp, acc.bad);
  mpfr_clears(om, ang, s, c, (mpfr_ptr)0);
}

static void test_rules(void) {
  static const size_t dims[] = {4, 5, 64, 129, 512};
  /* rule, base (max_timescale), min_timescale */
  static const double rules[][3] = {{1, 10000, 0}, {1, 100, 0}, {2, 10000, 0}, {2, 5e4, 2}, {2, 1000, 0.5}, {2, 1e4, 1e-3}};
  enum { NPOS = 160 };
  int32_t pos[NPOS];
  size_t di, ri, i, r, k;
  mpfr_t om, ang, s, c;
  mpfr_inits2(PREC, om, ang, s, c, (mpfr_ptr)0);
  for (i = 0; i < NPOS; i++) {
    pos[i] = (int32_t)(rng_next() % (1u << 24));
    if (i % 4 == 1) pos[i] = -pos[i];
  }
  pos[0] = (1 << 24) - 1; pos[1] = -((1 << 24) - 1); pos[2] = 0; pos[3] = 1; pos[4] = 1 << 24; pos[5] = 31; pos[6] = 32;
  for (ri = 0; ri < sizeof rules / sizeof rules[0]; ri++) {
    err_acc acc = {0, -1, 0, 0};
    int rule = (int)rules[ri][0];
    for (di = 0; di < sizeof dims / sizeof dims[0]; di++) {
      size_t d = dims[di], h = d / 2;
      posenc_sinusoidal_params p = posenc_sinusoidal_default(d);
      float *t = (float *)malloc(NPOS * d * 4);
      size_t zbad = 0;
      p.layout = POSENC_LAYOUT_SPLIT; p.base = rules[ri][1]; p.min_timescale = rules[ri][2];
      p.freqs = rule == 1 ? POSENC_FREQ_FAIRSEQ : POSENC_FREQ_T2T;
      CHECK(posenc_sinusoidal_rows(&p, pos, NPOS, t, NPOS * d * 4) == POSENC_OK, "rows rule %d d %zu", rule, d);
      for (k = 0; k < h; k++) {
        mp_omega(rule, p.base, p.min_timescale != 0.0 ? p.min_timescale : 1.0, k, h, 0, om);
        for (r = 0; r < NPOS; r++) {
          mpfr_mul_si(ang, om, (long)pos[r], MPFR_RNDN);
          mpfr_sin_cos(s, c, ang, MPFR_RNDN);
          check_val(&acc, t[r * d + k], s);
          check_val(&acc, t[r * d + h + k], c);
        }
      }
      if (d & 1) for (r = 0; r < NPOS; r++) zbad += t[r * d + d - 1] != 0.0f;
      CHECK(zbad == 0, "zero column");
      free(t);
    }
    CHECK(acc.bad == 0, "%s base %g min %g: %zu of %zu values beyond 0.5 ulp + 1e-12 (max excess %g)",
          rule == 1 ? "fairseq" : "t2t", rules[ri][1], rules[ri][2], acc.bad, acc.n, acc.max_excess);
    printf("%s base %g min_timescale %g: %zu values, |p| < 2^24 (+2^24), max error %.4f ulp(f32), %zu beyond the bound\n",
           rule == 1 ? "fairseq" : "t2t", rules[ri][1], rules[ri][2], acc.n, acc.max_ulp, acc.bad);
  }
  mpfr_clears(om, ang, s, c, (mpfr_ptr)0);
}

int main(void) {
  test_std();
  test_resize();
  test_index();
  test_2d();
  test_rules();
  mpfr_free_cache();
  tl_measured_on(posenc_isa_name(posenc_isa_active())); /* POSENC_ISA picks it */
  return tl_summary();
}
