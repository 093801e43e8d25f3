/* RoPE accuracy against MPFR (posenc.h, "Rotary position embedding", default mode):
 *   - a cos/sin cache value is within 0.5 ulp(f32) + 1e-12 of A*cos(p*omega_i), omega_i the
 *     variant's real-valued frequency, computed here in MPFR at 256 bits from the variant's formula
 *     (formulas.md section 1). The YaRN ramp and the llama3 blend weight are parameters computed in
 *     double, as the library computes them; everything else is exact.
 *   - a rotated f32 value is within 2^-22 * (|x0| + |x1|) * max(1, A) of the exact rotation of the
 *     stored inputs by the exact angle.
 * HF compatibility mode (hf_compat) has another contract and is not measured here.
 * Positions: random below 2^24, plus 2^24 - 1 and a few small ones.
 * Every backend that runs here makes each cache and rotation, and must give scalar's bytes: what is
 * measured holds for each of them. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <mpfr.h>
#include "posenc.h"
#include "testlib.h"
#include "backends.h"

#define PREC 256


static uint64_t rng_state = 0x243f6a8885a308d3ull;
static uint64_t rng_next(void) { return tl_splitmix64(&rng_state); }

/* omega_i of a config in MPFR. */
static void mp_omega(const posenc_rope_config *c, size_t i, mpfr_t om) {
  size_t d = c->rotary_dim ? c->rotary_dim : c->head_dim;
  double s = c->factor, L = (double)c->original_max_pos, x = 1.0;
  mpfr_t lnb, t, g;
  mpfr_inits2(PREC, lnb, t, g, (mpfr_ptr)0);
  mpfr_set_d(lnb, c->base, MPFR_RNDN);
  mpfr_log(lnb, lnb, MPFR_RNDN);
  /* NTK-style bases: ln base' = ln base + d/(d-2) ln x */
  if (c->scaling == POSENC_ROPE_SCALING_NTK) x = s;
  if (c->scaling == POSENC_ROPE_SCALING_DYNAMIC) {
    double S = c->seq_len ? (double)c->seq_len : L;
    if (c->dynamic_qwen_alpha) { /* Qwen: max(2^ceil(log2(S/L) + 1) - 1, 1) */
      x = pow(2.0, ceil(log2(S / L) + 1.0)) - 1.0;
      if (x < 1.0) x = 1.0;
      mpfr_set_d(t, x, MPFR_RNDN);
    } else {                     /* HF: s*S/L - (s - 1), S = max(seq_len, L) */
      if (S < L) S = L;
      mpfr_set_d(t, s, MPFR_RNDN); mpfr_mul_d(t, t, S, MPFR_RNDN); mpfr_div_d(t, t, L, MPFR_RNDN);
      mpfr_sub_d(t, t, s, MPFR_RNDN); mpfr_add_ui(t, t, 1, MPFR_RNDN);
      x = mpfr_get_d(t, MPFR_RNDN);
    }
  } else {
    mpfr_set_d(t, x, MPFR_RNDN);
  }
  if (x != 1.0) {
    mpfr_log(t, t, MPFR_RNDN);
    mpfr_mul_ui(t, t, (unsigned long)d, MPFR_RNDN);
    mpfr_div_ui(t, t, (unsigned long)(d - 2), MPFR_RNDN);
    mpfr_add(lnb, lnb, t, MPFR_RNDN);
  }
  /* omega0 = exp(-2i/d * ln base') */
  mpfr_mul_si(om, lnb, -2 * (long)i, MPFR_RNDN);
  mpfr_div_ui(om, om, (unsigned long)d, MPFR_RNDN);
  mpfr_exp(om, om, MPFR_RNDN);
  switch (c->scaling) {
    case POSENC_ROPE_SCALING_LINEAR:
      mpfr_div_d(om, om, s, MPFR_RNDN);
      break;
    case POSENC_ROPE_SCALING_YARN: {
      double bf = c->beta_fast != 0.0 ? c->beta_fast : 32.0, bs = c->beta_slow != 0.0 ? c->beta_slow : 1.0;
      double lo = (double)d * log(L / (bf * 2.0 * 3.141592653589793)) / (2.0 * log(c->base));
      double hi = (double)d * log(L / (bs * 2.0 * 3.141592653589793)) / (2.0 * log(c->base));
      if (c->yarn_no_truncate) { CHECK(0, "no-truncate ramp bounds are not reproducible in double here"); }
      lo = floor(lo); hi = ceil(hi);
      if (lo < 0) lo = 0;
      if (hi > (double)(d - 1)) hi = (double)(d - 1);
      if (lo == hi) hi += 0.001;
      /* ramp = clamp((i - lo) / (hi - lo), 0, 1) and g = ramp/s + (1 - ramp), exact */
      mpfr_set_d(t, (double)i - lo, MPFR_RNDN); mpfr_div_d(t, t, hi - lo, MPFR_RNDN);
      if (mpfr_cmp_ui(t, 1) > 0) mpfr_set_ui(t, 1, MPFR_RNDN);
      if (mpfr_sgn(t) < 0) mpfr_set_ui(t, 0, MPFR_RNDN);
      mpfr_div_d(g, t, s, MPFR_RNDN);
      mpfr_add_ui(g, g, 1, MPFR_RNDN); mpfr_sub(g, g, t, MPFR_RNDN);
      mpfr_mul(om, om, g, MPFR_RNDN);
      break;
    }
    case POSENC_ROPE_SCALING_LLAMA3: {
      double lf = c->low_freq_factor != 0.0 ? c->low_freq_factor : 1.0;
      double hf = c->high_freq_factor != 0.0 ? c->high_freq_factor : 4.0;
      double u, wl;
      mpfr_const_pi(g, MPFR_RNDN);
      mpfr_div(t, om, g, MPFR_RNDN);
      mpfr_mul_ui(t, t, 2, MPFR_RNDN);
      u = mpfr_get_d(t, MPFR_RNDN);  /* omega0 * 2/pi */
      wl = 4.0 / u;                  /* the wavelength 2 pi / omega0 (only compared) */
      if (wl > L / lf) mpfr_div_d(om, om, s, MPFR_RNDN);
      else if (!(wl < L / hf)) {     /* sm = (L omega0 / (2 pi) - lf) / (hf - lf); g = (1 - sm)/s + sm, exact */
        mpfr_mul_d(t, t, L / 4.0, MPFR_RNDN); mpfr_sub_d(t, t, lf, MPFR_RNDN); mpfr_div_d(t, t, hf - lf, MPFR_RNDN);
        mpfr_ui_sub(g, 1, t, MPFR_RNDN); mpfr_div_d(g, g, s, MPFR_RNDN);
        mpfr_add(g, g, t, MPFR_RNDN);
        mpfr_mul(om, om, g, MPFR_RNDN);
      }
      break;
    }
    case POSENC_ROPE_SCALING_LONGROPE: {
      const float *ext = c->seq_len > c->original_max_pos ? c->long_factor : c->short_factor;
      mpfr_div_d(om, om, (double)ext[i], MPFR_RNDN);
      break;
    }
    default: break;
  }
  if (c->freq_factors) mpfr_div_d(om, om, (double)c->freq_factors[i], MPFR_RNDN);
  mpfr_clears(lnb, t, g, (mpfr_ptr)0);
}

/* A in MPFR */
static void mp_attention(const posenc_rope_config *c, mpfr_t A) {
  mpfr_t t, u;
  double s = c->factor;
  mpfr_inits2(PREC, t, u, (mpfr_ptr)0);
  mpfr_set_ui(A, 1, MPFR_RNDN);
  if (c->attention_factor > 0.0) mpfr_set_d(A, c->attention_factor, MPFR_RNDN);
  else if (c->scaling == POSENC_ROPE_SCALING_YARN && s > 1.0) {
    double m = (c->mscale != 0.0 && c->mscale_all_dim != 0.0) ? c->mscale : 1.0;
    mpfr_set_d(t, s, MPFR_RNDN); mpfr_log(t, t, MPFR_RNDN);
    mpfr_mul_d(A, t, 0.1 * m, MPFR_RNDN); mpfr_add_ui(A, A, 1, MPFR_RNDN);
    if (c->mscale != 0.0 && c->mscale_all_dim != 0.0) {
      mpfr_mul_d(u, t, 0.1 * c->mscale_all_dim, MPFR_RNDN); mpfr_add_ui(u, u, 1, MPFR_RNDN);
      mpfr_div(A, A, u, MPFR_RNDN);
    }
  } else if (c->scaling == POSENC_ROPE_SCALING_LONGROPE && s > 1.0) {
    mpfr_set_d(t, s, MPFR_RNDN); mpfr_log(t, t, MPFR_RNDN);
    mpfr_set_d(u, (double)c->original_max_pos, MPFR_RNDN); mpfr_log(u, u, MPFR_RNDN);
    mpfr_div(A, t, u, MPFR_RNDN); mpfr_add_ui(A, A, 1, MPFR_RNDN); mpfr_sqrt(A, A, MPFR_RNDN);
  }
  mpfr_clears(t, u, (mpfr_ptr)0);
}

typedef struct variant {
  const char *name;
  posenc_rope_config cfg;
} variant;

typedef struct cache_call {
  const posenc_rope *rope;
  const posenc_rope_cache_spec *spec;
  const int32_t *pos;
  size_t n_pos;
} cache_call;

static int cache_run(void *ctx, void *out, size_t out_bytes) {
  const cache_call *c = (const cache_call *)ctx;
  return (int)posenc_rope_cache_rows(c->rope, c->spec, c->pos, c->n_pos, out, out_bytes);
}

static void check_cache(const variant *v, int n_pos) {
  POSENC_ROPE_STORAGE(128) rope_st;
  posenc_rope *rope = &rope_st.rope;
  const double *inv_freq;
  size_t h, k, i, width;
  int32_t *pos = (int32_t *)malloc((size_t)n_pos * sizeof(int32_t));
  float *tab;
  mpfr_t om, A, x, s, c;
  double max_ulp = 0.0, max_abs = 0.0;
  long strict_bad = 0, n_vals = 0;
  posenc_rope_cache_spec sp = {POSENC_ROPE_CACHE_HALF, POSENC_DTYPE_F32, 0};
  cache_call call;
  bk_result res;
  posenc_status st = posenc_rope_init(rope, sizeof rope_st, &v->cfg);
  CHECK(st == POSENC_OK, "%s: init %s", v->name, posenc_strerror(st));
  if (st != POSENC_OK) { free(pos); return; }
  h = rope->pairs;
  inv_freq = posenc_rope_inv_freq(rope);
  CHECK(inv_freq != NULL, "%s: inv_freq NULL", v->name);
  if (!inv_freq) { free(pos); return; }
  width = 2 * h;
  for (k = 0; k < (size_t)n_pos; k++) pos[k] = (int32_t)(rng_next() % 16777216u);
  pos[0] = 16777215; pos[1] = 0; pos[2] = 1; pos[3] = 31; pos[4] = 32; pos[5] = 16777184; pos[6] = 8388607;
  tab = (float *)malloc((size_t)n_pos * width * sizeof(float));
  call.rope = rope; call.spec = &sp; call.pos = pos; call.n_pos = (size_t)n_pos;
  CHECK(bk_compare_ok(cache_run, &call, (size_t)n_pos * width * sizeof(float), tab, &res), "%s: rows: %s", v->name,
        res.msg);
  mpfr_inits2(PREC, om, A, x, s, c, (mpfr_ptr)0);
  mp_attention(&v->cfg, A);
  CHECK(fabs(mpfr_get_d(A, MPFR_RNDN) - rope->attention_factor) <= 4e-16 * rope->attention_factor, "%s: A %.17g vs %.17g",
        v->name, rope->attention_factor, mpfr_get_d(A, MPFR_RNDN));
  for (i = 0; i < h; i++) {
    double om_d;
    mp_omega(&v->cfg, i, om);
    om_d = mpfr_get_d(om, MPFR_RNDN);
    CHECK(fabs(om_d - inv_freq[i]) <= 2.5e-16 * om_d, "%s: omega %zu: %.17g vs exact %.17g", v->name, i,
          inv_freq[i], om_d);
    for (k = 0; k < (size_t)n_pos; k++) {
      int w;
      mpfr_mul_si(x, om, (long)pos[k], MPFR_RNDN);
      mpfr_sin_cos(s, c, x, MPFR_RNDN);
      mpfr_mul(s, s, A, MPFR_RNDN);
      mpfr_mul(c, c, A, MPFR_RNDN);
      for (w = 0; w < 2; w++) {
        double want = mpfr_get_d(w ? s : c, MPFR_RNDN), got = tab[k * width + (w ? h : 0) + i];
        double err = fabs(got - want), hu = tl_half_ulp_f32(want), bound = hu + 1e-12;
        n_vals++;
        if (hu > 0 && err / (2 * hu) > max_ulp) max_ulp = err / (2 * hu);
        if (err > max_abs) max_abs = err;
        if (err > bound && strict_bad++ < 4)
          CHECK(0, "%s: p=%d pair %zu %s: got %.9g want %.17g err %.3g > %.3g", v->name, (int)pos[k], i, w ? "sin" : "cos",
                got, want, err, bound);
      }
    }
  }
  CHECK(strict_bad == 0, "%s: %ld values beyond 0.5 ulp + 1e-12", v->name, strict_bad);
  printf("  %-30s A %.6f  %6ld values: max %.4f ulp, max abs %.3g, beyond 0.5 ulp + 1e-12: %ld\n", v->name,
         rope->attention_factor, n_vals, max_ulp, max_abs, strict_bad);
  mpfr_clears(om, A, x, s, c, (mpfr_ptr)0);
  free(tab); free(pos);
}

/* Rotation: |out - exact| / (|x0| + |x1|) <= 2^-22 * max(1, A), exact = A * R(p * omega) x in MPFR. */
static double max_rot_ratio;

static float rand_float(void) { /* any float in (-4, 4), full mantissa, some tiny */
  uint64_t r = rng_next();
  double m = (double)(r >> 11) / 9007199254740992.0; /* [0, 1) */
  int e = (int)((r >> 3) % 4u) - ((r & 4) ? 20 : 0);
  float f = (float)ldexp(m, e + 1);
  return (r & 1) ? -f : f;
}

/* The rotation of x (the inputs), written into out. */
typedef struct rotation_call {
  const posenc_rope *rope;
  const posenc_rope_positions *pp;
  const float *x;
  posenc_rope_direction dir;
} rotation_call;

static int rotation_run(void *ctx, void *out, size_t out_bytes) {
  const rotation_call *c = (const rotation_call *)ctx;
  posenc_rope_tensor q;
  memcpy(out, c->x, out_bytes);
  q.data = out; q.dtype = POSENC_DTYPE_F32; q.heads = 1; q.batch_stride = q.token_stride = q.head_stride = 0;
  return (int)posenc_rope_apply(c->rope, NULL, c->pp, &q, NULL, c->dir);
}

static void check_rotation(const char *name, const posenc_rope_config *cfg, int n_tok) {
  POSENC_ROPE_STORAGE(128) rope_st;
  posenc_rope *rope = &rope_st.rope;
  size_t D = cfg->head_dim, h, j, t;
  float *x, *y;
  int32_t *ids;
  mpfr_t om, A, ang, s, c, e0, e1, tmp;
  double worst = 0.0, Ad;
  int dir, bad = 0;
  posenc_rope_positions pp;
  rotation_call call;
  bk_result res;
  CHECK(posenc_rope_init(rope, sizeof rope_st, cfg) == POSENC_OK, "%s: init", name);
  h = rope->pairs;
  Ad = rope->attention_factor;
  x = (float *)malloc((size_t)n_tok * D * sizeof(float));
  y = (float *)malloc((size_t)n_tok * D * sizeof(float));
  ids = (int32_t *)malloc((size_t)n_tok * sizeof(int32_t));
  mpfr_inits2(PREC, om, A, ang, s, c, e0, e1, tmp, (mpfr_ptr)0);
  mp_attention(cfg, A);
  for (dir = 0; dir < 2; dir++) {
    for (t = 0; t < (size_t)n_tok; t++) ids[t] = t == 0 ? 16777215 : (int32_t)(rng_next() % 16777216u);
    for (j = 0; j < (size_t)n_tok * D; j++) x[j] = rand_float();
    pp.batch = 1; pp.tokens = (size_t)n_tok; pp.ids = ids; pp.start = 0;
    call.rope = rope; call.pp = &pp; call.x = x; call.dir = (posenc_rope_direction)dir;
    CHECK(bk_compare_ok(rotation_run, &call, (size_t)n_tok * D * sizeof(float), y, &res), "%s: apply: %s", name,
          res.msg);
    for (j = 0; j < h; j++) {
      mp_omega(cfg, j, om);
      for (t = 0; t < (size_t)n_tok; t++) {
        size_t i0 = cfg->style == POSENC_ROPE_NEOX ? j : 2 * j, i1 = cfg->style == POSENC_ROPE_NEOX ? j + h : 2 * j + 1;
        double x0 = x[t * D + i0], x1 = x[t * D + i1], n1 = fabs(x0) + fabs(x1), r0, r1;
        mpfr_mul_si(ang, om, (long)ids[t], MPFR_RNDN);
        if (dir) mpfr_neg(ang, ang, MPFR_RNDN);
        mpfr_sin_cos(s, c, ang, MPFR_RNDN);
        /* e0 = A (x0 c - x1 s), e1 = A (x1 c + x0 s) */
        mpfr_mul_d(e0, c, x0, MPFR_RNDN); mpfr_mul_d(tmp, s, x1, MPFR_RNDN); mpfr_sub(e0, e0, tmp, MPFR_RNDN);
        mpfr_mul_d(e1, c, x1, MPFR_RNDN); mpfr_mul_d(tmp, s, x0, MPFR_RNDN); mpfr_add(e1, e1, tmp, MPFR_RNDN);
        mpfr_mul(e0, e0, A, MPFR_RNDN); mpfr_mul(e1, e1, A, MPFR_RNDN);
        if (n1 == 0.0) continue;
        r0 = fabs((double)y[t * D + i0] - mpfr_get_d(e0, MPFR_RNDN)) / n1;
        r1 = fabs((double)y[t * D + i1] - mpfr_get_d(e1, MPFR_RNDN)) / n1;
        if (r1 > r0) r0 = r1;
        if (r0 > worst) worst = r0;
        if (r0 > ldexp(1.0, -22) * (Ad > 1.0 ? Ad : 1.0) && bad++ < 4)
          CHECK(0, "%s: p=%d pair %zu: error ratio %.3g > 2^-22 * max(1, A)", name, (int)ids[t], j, r0);
      }
    }
  }
  CHECK(bad == 0, "%s: %d rotated pairs beyond the bound", name, bad);
  printf("  rotation %-28s A %.4f: max |out - exact| / (|x0|+|x1|) = %.4g = %.4f * 2^-22\n", name, Ad, worst,
         worst / ldexp(1.0, -22));
  if (worst / (Ad > 1.0 ? Ad : 1.0) > max_rot_ratio) max_rot_ratio = worst / (Ad > 1.0 ? Ad : 1.0);
  mpfr_clears(om, A, ang, s, c, e0, e1, tmp, (mpfr_ptr)0);
  free(x); free(y); free(ids);
}

static posenc_rope_config cfg_of(size_t D, double base, posenc_rope_scaling sc, double factor, uint32_t L) {
  posenc_rope_config c = posenc_rope_default(D);
  c.base = base; c.scaling = sc; c.factor = factor; c.original_max_pos = L;
  return c;
}

int main(void) {
  static float lr_short[64], lr_long[64], ffac[64];
  variant v[16];
  int nv = 0, i;
  for (i = 0; i < 64; i++) {
    lr_short[i] = 1.0f + (float)(i % 7) / 16.0f;
    lr_long[i] = 1.0f + (float)i * 0.375f + (float)(i % 3);
    ffac[i] = (float)(1 + i % 5) * 0.75f;
  }
  v[nv].name = "default d128"; v[nv].cfg = posenc_rope_default(128); nv++;
  v[nv].name = "default d64 base 500000"; v[nv].cfg = posenc_rope_default(64); v[nv].cfg.base = 500000.0; nv++;
  v[nv].name = "A 0.75 (override)"; v[nv].cfg = posenc_rope_default(64); v[nv].cfg.attention_factor = 0.75; nv++;
  v[nv].name = "linear 4"; v[nv].cfg = cfg_of(64, 10000.0, POSENC_ROPE_SCALING_LINEAR, 4.0, 0); nv++;
  v[nv].name = "linear 3"; v[nv].cfg = cfg_of(64, 10000.0, POSENC_ROPE_SCALING_LINEAR, 3.0, 0); nv++;
  v[nv].name = "ntk 8 d128"; v[nv].cfg = cfg_of(128, 10000.0, POSENC_ROPE_SCALING_NTK, 8.0, 0); nv++;
  v[nv].name = "dynamic s2 seq 6000"; v[nv].cfg = cfg_of(64, 10000.0, POSENC_ROPE_SCALING_DYNAMIC, 2.0, 2048);
  v[nv].cfg.seq_len = 6000; nv++;
  v[nv].name = "dynamic qwen alpha 7"; v[nv].cfg = cfg_of(64, 10000.0, POSENC_ROPE_SCALING_DYNAMIC, 1.0, 2048);
  v[nv].cfg.seq_len = 6000; v[nv].cfg.dynamic_qwen_alpha = 1; nv++;
  v[nv].name = "yarn d128 s4 (A > 1)"; v[nv].cfg = cfg_of(128, 10000.0, POSENC_ROPE_SCALING_YARN, 4.0, 4096); nv++;
  v[nv].name = "yarn deepseek-v3 s40 A 1"; v[nv].cfg = cfg_of(64, 10000.0, POSENC_ROPE_SCALING_YARN, 40.0, 4096);
  v[nv].cfg.mscale = 1.0; v[nv].cfg.mscale_all_dim = 1.0; nv++;
  v[nv].name = "llama3 d128 500000 s8"; v[nv].cfg = cfg_of(128, 500000.0, POSENC_ROPE_SCALING_LLAMA3, 8.0, 8192); nv++;
  v[nv].name = "longrope long (A 1.19)"; v[nv].cfg = cfg_of(64, 10000.0, POSENC_ROPE_SCALING_LONGROPE, 32.0, 4096);
  v[nv].cfg.short_factor = lr_short; v[nv].cfg.long_factor = lr_long; v[nv].cfg.seq_len = 9000; nv++;
  v[nv].name = "freq_factors"; v[nv].cfg = posenc_rope_default(64); v[nv].cfg.freq_factors = ffac; nv++;

  printf("cache values vs MPFR (%d bits), positions < 2^24 and 2^24 - 1:\n", PREC);
  for (i = 0; i < nv; i++) check_cache(&v[i], 320);

  printf("rotation (f32) vs the exact rotation of the stored inputs:\n");
  {
    posenc_rope_config c = posenc_rope_default(128);
    check_rotation("neox default d128", &c, 64);
    c.style = POSENC_ROPE_GPTJ; check_rotation("gptj default d128", &c, 64);
    c = cfg_of(128, 10000.0, POSENC_ROPE_SCALING_YARN, 16.0, 4096); check_rotation("neox yarn s16 (A 1.277)", &c, 16);
    c.style = POSENC_ROPE_GPTJ; check_rotation("gptj yarn s16 (A 1.277)", &c, 16);
    c = posenc_rope_default(64); c.attention_factor = 0.5; check_rotation("neox A 0.5", &c, 16);
    c = cfg_of(128, 500000.0, POSENC_ROPE_SCALING_LLAMA3, 8.0, 8192); check_rotation("neox llama3", &c, 16);
  }
  printf("max rotation error ratio over all cases: %.4g = %.4f * 2^-22 * max(1, A)\n", max_rot_ratio,
         max_rot_ratio / ldexp(1.0, -22));
  mpfr_free_cache();
  CHECK(bk_baseline_runs(), "SSE2, part of x86-64, is not among the backends compared");
  bk_report_measured(stdout);
  return tl_summary();
}
