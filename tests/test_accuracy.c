/* Accuracy against the exact real value sin/cos(p * base^(-2i/d)), computed with MPFR at 320 bits.
 * Claim under test (posenc.h): |f32 result - exact| <= 0.5 ulp(exact) + 1e-12, for |p| < 2^31.
 * (The requirement is 1.5e-7 absolute for p < 2^24; this is about 5x tighter.)
 * Every backend that runs here makes each table, and must give scalar's bytes: what is measured
 * holds for each of them. */
#include <math.h>
#include <stdlib.h>
#include <mpfr.h>
#include "posenc.h"
#include "testlib.h"
#include "backends.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng_next(void) { return tl_splitmix64(&rng_state); }

static double max_err_seen, max_excess_ulp_seen; /* the largest |error| and error/ulp seen */

/* Exact sin or cos of p * base^(-2i/d), rounded to double (the error of that rounding, 1e-16,
 * is far below the bound). */
static double exact_value(double base, size_t d, size_t i, int32_t p, int want_cos) {
  mpfr_t b, e, x, s, c;
  double r;
  mpfr_inits2(320, b, e, x, s, c, (mpfr_ptr)0);
  mpfr_set_d(b, base, MPFR_RNDN);
  mpfr_set_si(e, -2 * (long)i, MPFR_RNDN);
  mpfr_div_ui(e, e, (unsigned long)d, MPFR_RNDN);
  mpfr_pow(x, b, e, MPFR_RNDN);
  mpfr_mul_si(x, x, (long)p, MPFR_RNDN);
  mpfr_sin_cos(s, c, x, MPFR_RNDN);
  r = mpfr_get_d(want_cos ? c : s, MPFR_RNDN);
  mpfr_clears(b, e, x, s, c, (mpfr_ptr)0);
  return r;
}

typedef struct rows_call {
  const posenc_sinusoidal_params *prm;
  const int32_t *pos;
  size_t n_rows;
} rows_call;

static int rows_run(void *ctx, void *out, size_t out_bytes) {
  const rows_call *c = (const rows_call *)ctx;
  return (int)posenc_sinusoidal_rows(c->prm, c->pos, c->n_rows, out, out_bytes);
}

/* Check n_rows sampled positions of one configuration on up to max_cols sampled columns. */
static void check_config(size_t d, double base, posenc_layout layout, const int32_t *pos, size_t n_rows,
                         size_t max_cols) {
  posenc_sinusoidal_params prm = posenc_sinusoidal_default(d);
  size_t bytes, r, k, h = d / 2, nfreq;
  float *t;
  int bad = 0;
  rows_call call;
  bk_result res;
  prm.base = base; prm.layout = layout;
  nfreq = layout == POSENC_LAYOUT_INTERLEAVED ? (d + 1) / 2 : d / 2;
  if (posenc_sinusoidal_bytes(&prm, n_rows, &bytes) != POSENC_OK || !(t = (float *)malloc(bytes))) {
    CHECK(0, "size"); return;
  }
  call.prm = &prm; call.pos = pos; call.n_rows = n_rows;
  CHECK(bk_compare_ok(rows_run, &call, bytes, t, &res), "rows d=%zu base %g: %s", d, base, res.msg);
  for (r = 0; r < n_rows; r++) {
    for (k = 0; k < max_cols && k < d; k++) {
      size_t col = k < max_cols / 2 ? k : (size_t)(rng_next() % d); /* the first columns, then random */
      size_t i; int is_cos;
      double want, got, err, bound;
      if (layout == POSENC_LAYOUT_INTERLEAVED) { i = col / 2; is_cos = (int)(col & 1); }
      else if (col == d - 1 && (d & 1)) { CHECK(t[r * d + col] == 0.0f, "zero column"); continue; }
      else { i = col < h ? col : col - h; is_cos = col >= h; }
      if (i >= nfreq) continue;
      want = exact_value(base, d, i, pos[r], is_cos);
      got = t[r * d + col];
      err = fabs(got - want);
      bound = tl_half_ulp_f32(want) + 1e-12;
      if (err > max_err_seen) max_err_seen = err;
      if (want != 0.0 && err / (2 * tl_half_ulp_f32(want)) > max_excess_ulp_seen)
        max_excess_ulp_seen = err / (2 * tl_half_ulp_f32(want));
      if (err > bound && bad++ < 5)
        CHECK(0, "d=%zu base=%g p=%ld col=%zu: got %.9g want %.17g err %.3g > %.3g", d, base,
              (long)pos[r], col, got, want, err, bound);
      else tl_passed++;
    }
  }
  free(t);
}

int main(void) {
  static const size_t dims[] = {1, 2, 3, 4, 5, 8, 37, 64, 127, 128, 256, 1000, 4096, 8192};
  static const double bases[] = {10000.0, 500000.0, 1e6, 2.0, 1.0001, 1e30};
  int32_t pos[48];
  size_t di, bi, r;
  int layout;
  for (di = 0; di < sizeof dims / sizeof dims[0]; di++) {
    for (bi = 0; bi < sizeof bases / sizeof bases[0]; bi++) {
      for (layout = 0; layout < 2; layout++) {
        size_t n = 0;
        /* positions < 2^24 (the range), a few boundaries, then the whole int32 range */
        pos[n++] = 0; pos[n++] = 1; pos[n++] = 16777215; pos[n++] = 131071;
        for (r = 0; r < 20; r++) pos[n++] = (int32_t)(rng_next() % 16777216u);
        pos[n++] = 2147483647; pos[n++] = -2147483647 - 1;
        for (r = 0; r < 6; r++) pos[n++] = (int32_t)(uint32_t)rng_next();
        check_config(dims[di], bases[bi], (posenc_layout)layout, pos, n, dims[di] > 64 ? 24 : dims[di]);
      }
    }
  }
  { /* base < 1: frequencies above 1 radian per position, positions kept in range */
    int32_t small[8] = {0, 1, 2, 17, 1000, 65536, 1 << 20, -12345};
    check_config(64, 0.5, POSENC_LAYOUT_INTERLEAVED, small, 8, 64);
  }
  printf("max |error| %.4g (0.5 ulp(f32) at 1 is 2.98e-08); max error/ulp %.4f\n",
         max_err_seen, max_excess_ulp_seen);
  CHECK(max_err_seen <= 1.5e-7, "issue requirement: max error %.3g <= 1.5e-7", max_err_seen);
  mpfr_free_cache();
  CHECK(bk_baseline_runs(), "SSE2, part of x86-64, is not among the backends compared");
  bk_report_measured(stdout);
  return tl_summary();
}
