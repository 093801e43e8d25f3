/* RoPE (posenc.h, "Rotary position embedding"): the contracts, checked against references that
 * this file derives on its own from /work/shared/reference/formulas.md (sections 1 and 9):
 *   - every scaling variant's frequencies and attention factor, in long double (refmath.h's
 *     functions, not libm's: those are only double-accurate on some targets);
 *   - cache values against A*cos(p*omega_i) in long double, all layouts and dtypes, stride gaps;
 *   - rotations against a plain float reference, bit for bit, in every shape the API accepts;
 *   - properties a wrong kernel breaks; every backend against the scalar one; bad input.
 * posenc internals are never called: only the public API and the f16/bf16 conversions. */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include "posenc.h"
#include "testlib.h"
#include "backends.h"
#include "refmath.h"

typedef ref_ld ld;

/* Storage for a rope of any rotary dim (posenc.h: a rope's frequencies follow its header in the
 * caller's storage). */
typedef POSENC_ROPE_STORAGE(POSENC_ROPE_MAX_DIM) rope_store;

/* 1 if two ropes' frequency arrays (everything init writes after the header) are byte for byte
 * the same: POSENC_ROPE_BYTES(0) is the header's rounded size, where the arrays start. */
static int rope_arrays_equal(const posenc_rope *a, const posenc_rope *b) {
  size_t na = 0, nb = 0;
  if (posenc_rope_bytes(&a->config, &na) != POSENC_OK || posenc_rope_bytes(&b->config, &nb) != POSENC_OK || na != nb)
    return 0;
  return memcmp((const unsigned char *)a + POSENC_ROPE_BYTES(0), (const unsigned char *)b + POSENC_ROPE_BYTES(0),
                na - POSENC_ROPE_BYTES(0)) == 0;
}

#define PI_L 3.141592653589793238462643383279502884L
#define CANARY TL_CANARY
#define GUARD 64
#define NEOX POSENC_ROPE_NEOX
#define GPTJ POSENC_ROPE_GPTJ
#define F32 POSENC_DTYPE_F32
#define F16 POSENC_DTYPE_F16
#define BF16 POSENC_DTYPE_BF16
#define HALF POSENC_ROPE_CACHE_HALF
#define FULL POSENC_ROPE_CACHE_FULL
#define INTL POSENC_ROPE_CACHE_INTERLEAVED
#define FWD POSENC_ROPE_FORWARD
#define INV POSENC_ROPE_INVERSE


static uint32_t lcg_state = 12345u;
static uint32_t lcg(void) { lcg_state = lcg_state * 1664525u + 1013904223u; return lcg_state >> 8; }
/* k/64 with |k| <= 255: exact in f32, f16 and bf16; never -0 */
static float lcg_val(void) { return (float)((int)(lcg() % 511u) - 255) / 64.0f; }

/* ============================================================================================
 * Independent frequencies (formulas.md section 1)
 * ========================================================================================== */
typedef struct ref_freq {
  size_t h;
  ld om[POSENC_ROPE_MAX_DIM / 2];
  ld arg[POSENC_ROPE_MAX_DIM / 2];   /* |exponent| behind omega0_i, for the reference's own error */
  ld A;
} ref_freq;

static size_t rot_dim(const posenc_rope_config *c) { return c->rotary_dim ? c->rotary_dim : c->head_dim; }

/* Qwen (v1): ntk_alpha = max(2^ceil(log2(S/L) + 1) - 1, 1) */
static ld qwen_alpha(double S, double L) {
  double a = pow(2.0, ceil(log2(S / L) + 1.0)) - 1.0;
  return a < 1.0 ? 1.0L : (ld)a;
}

/* HF _compute_yarn_parameters: find_correction_dim, floor/ceil unless truncate = false, clamps. */
static void ref_yarn_range(const posenc_rope_config *c, ld *lo, ld *hi) {
  size_t d = rot_dim(c);
  ld bf = c->beta_fast != 0.0 ? c->beta_fast : 32.0, bs = c->beta_slow != 0.0 ? c->beta_slow : 1.0;
  ld L = (ld)c->original_max_pos, lnb = ref_logl((ld)c->base);
  ld l = (ld)d * ref_logl(L / (bf * 2.0L * PI_L)) / (2.0L * lnb);
  ld u = (ld)d * ref_logl(L / (bs * 2.0L * PI_L)) / (2.0L * lnb);
  if (!c->yarn_no_truncate) { l = ref_floorl(l); u = ref_ceill(u); }
  else { l = (ld)(double)l; u = (ld)(double)u; } /* HF's Python floats: the real value rounded once */
  if (l < 0.0L) l = 0.0L;
  if (u > (ld)(d - 1)) u = (ld)(d - 1);
  if (l == u) u += 0.001L;
  *lo = l; *hi = u;
}
static ld yarn_mscale(ld s, ld m) { return s <= 1.0L ? 1.0L : 0.1L * m * ref_logl(s) + 1.0L; }


static void ref_freqs(const posenc_rope_config *c, ref_freq *r) {
  size_t d = rot_dim(c), h = d / 2, i;
  ld lnb = ref_logl((ld)c->base), ex = d > 2 ? (ld)d / (ld)(d - 2) : 0.0L, s = (ld)c->factor, L = (ld)c->original_max_pos;
  ld lo = 0.0L, hi = 1.0L, ln_x = 0.0L;
  ld lf = c->low_freq_factor != 0.0 ? c->low_freq_factor : 1.0, hf = c->high_freq_factor != 0.0 ? c->high_freq_factor : 4.0;
  const float *ext = NULL;
  r->h = h;
  if (c->scaling == POSENC_ROPE_SCALING_NTK) ln_x = ref_logl(s);
  if (c->scaling == POSENC_ROPE_SCALING_DYNAMIC) {
    ld S = c->seq_len ? (ld)c->seq_len : L;
    if (c->dynamic_qwen_alpha) ln_x = ref_logl(qwen_alpha((double)S, (double)L));
    else { if (S < L) S = L; ln_x = ref_logl(s * S / L - (s - 1.0L)); }
  }
  lnb += ex * ln_x;
  if (c->scaling == POSENC_ROPE_SCALING_YARN) ref_yarn_range(c, &lo, &hi);
  if (c->scaling == POSENC_ROPE_SCALING_LONGROPE)
    ext = c->seq_len > c->original_max_pos ? c->long_factor : c->short_factor;
  for (i = 0; i < h; i++) {
    ld e = (ld)(2 * i) / (ld)d * lnb, om0 = ref_expl(-e), om = om0;
    r->arg[i] = ref_fabsl(e);
    /* d/(d-2) in double: relative error <= 2^-53, times ln(x) * 2i/d in the exponent */
    switch (c->scaling) {
      case POSENC_ROPE_SCALING_LINEAR: om = om0 / s; break;
      case POSENC_ROPE_SCALING_YARN: {
        ld ramp = ((ld)i - lo) / (hi - lo);
        ramp = ramp < 0.0L ? 0.0L : (ramp > 1.0L ? 1.0L : ramp);
        om = om0 * ramp / s + om0 * (1.0L - ramp); /* interpolated where ramp = 1 */
        break;
      }
      case POSENC_ROPE_SCALING_LLAMA3: {
        ld wl = 2.0L * PI_L / om0;
        if (wl > L / lf) om = om0 / s;
        else if (wl < L / hf) om = om0;
        else { ld sm = (L / wl - lf) / (hf - lf); om = (1.0L - sm) * om0 / s + sm * om0; }
        break;
      }
      case POSENC_ROPE_SCALING_LONGROPE: om = om0 / (ld)ext[i]; break;
      default: break;
    }
    if (c->freq_factors) om /= (ld)c->freq_factors[i];
    r->om[i] = om;
    if (!(om > 0.0L && om < 1e300L)) CHECK(0, "reference omega %zu not finite", i);
  }
  if (c->attention_factor > 0.0) r->A = c->attention_factor;
  else if (c->scaling == POSENC_ROPE_SCALING_YARN) {
    if (c->mscale != 0.0 && c->mscale_all_dim != 0.0) r->A = yarn_mscale(s, c->mscale) / yarn_mscale(s, c->mscale_all_dim);
    else r->A = yarn_mscale(s, 1.0L);
  } else if (c->scaling == POSENC_ROPE_SCALING_LONGROPE) r->A = s <= 1.0L ? 1.0L : ref_sqrtl(1.0L + ref_logl(s) / ref_logl(L));
  else r->A = 1.0L;
}

static double rel_err(double got, ld want) { return (double)(ref_fabsl((ld)got - want) / ref_fabsl(want)); }

/* 1e-15 relative, against a reference of a few of refmath.h's functions: widened only where their
 * series run in double arithmetic (valgrind's x87 long double); libm's double functions serve
 * where long double is double, and within 1e-15 as they did. */
static double tol_1e15(void) { return 1e-15 + (LDBL_MANT_DIG > DBL_MANT_DIG ? 64.0 * (double)ref_eps() : 0.0); }

/* rope->inv_freq and rope->attention_factor against ref_freqs. */
static void check_freqs(const char *name, const posenc_rope_config *c) {
  rope_store rope_st; posenc_rope *rope = &rope_st.rope;
  ref_freq r;
  size_t i;
  double worst = 0.0;
  int bad = 0;
  posenc_status st = posenc_rope_init(rope, sizeof rope_st, c);
  CHECK(st == POSENC_OK, "%s: init %s", name, posenc_strerror(st));
  if (st != POSENC_OK) return;
  ref_freqs(c, &r);
  CHECK(rope->pairs == r.h, "%s: pairs %zu want %zu", name, rope->pairs, r.h);
  for (i = 0; i < r.h; i++) {
    double e = rel_err(posenc_rope_inv_freq(rope)[i], r.om[i]);
    double tol = 1e-15 + 64.0 * (double)ref_eps() * (1.0 + (double)r.arg[i]);
    if (e > worst) worst = e;
    if (e > tol && bad++ < 4) CHECK(0, "%s: inv_freq[%zu] = %.17g, want %.20Lg (rel %.3g)", name, i, posenc_rope_inv_freq(rope)[i], r.om[i], e);
  }
  CHECK(bad == 0, "%s: %d frequencies off (worst rel %.3g)", name, bad, worst);
  CHECK(rel_err(rope->attention_factor, r.A) <= 1e-15 + 64.0 * (double)ref_eps(),
        "%s: attention factor %.17g want %.20Lg", name, rope->attention_factor, r.A);
}

static posenc_rope_config cfg_of(size_t D, double base, posenc_rope_scaling sc, double factor, uint32_t L) {
  posenc_rope_config c = posenc_rope_default(D);
  c.base = base; c.scaling = sc; c.factor = factor; c.original_max_pos = L;
  return c;
}

static float lr_short[256], lr_long[256], ffac[256];

static void init_lists(void) {
  int i;
  for (i = 0; i < 256; i++) {
    lr_short[i] = 1.0f + (float)(i % 7) / 16.0f;            /* Phi-3-like: near 1 */
    lr_long[i] = 1.0f + (float)i * 0.375f + (float)(i % 3); /* growing with i */
    ffac[i] = (float)(1 + i % 5) * 0.75f;                   /* ggml rope_freqs */
  }
}

static void test_freqs(void) {
  posenc_rope_config c;
  rope_store rope_st, r2_st;
  posenc_rope *rope = &rope_st.rope, *r2 = &r2_st.rope;
  ld lo, hi;
  size_t i;

  /* default: base^(-2i/d), partial rotary uses d = rotary_dim */
  c = posenc_rope_default(128); check_freqs("default d128", &c);
  c = posenc_rope_default(80); c.rotary_dim = 32; c.base = 1e6; check_freqs("default D80 d32 base 1e6", &c);
  c = posenc_rope_default(512); c.base = 500000.0; check_freqs("default d512", &c);
  c = posenc_rope_default(2); check_freqs("default d2", &c);
  c = posenc_rope_default(64); c.base = 1e-30; check_freqs("base 1e-30", &c);
  c = posenc_rope_default(64); c.base = 1e30; check_freqs("base 1e30", &c);
  c = posenc_rope_default(64); c.base = 0.5; check_freqs("base 0.5", &c);
  /* an unscaled config ignores the factor fields */
  c = posenc_rope_default(64); c.factor = -3.0; c.original_max_pos = 0; check_freqs("none ignores factor", &c);

  c = cfg_of(128, 10000.0, POSENC_ROPE_SCALING_LINEAR, 4.0, 0); check_freqs("linear 4", &c);
  c = cfg_of(64, 10000.0, POSENC_ROPE_SCALING_LINEAR, 3.0, 0); check_freqs("linear 3", &c);
  c = cfg_of(64, 10000.0, POSENC_ROPE_SCALING_LINEAR, 0.5, 0); check_freqs("linear 0.5", &c);

  c = cfg_of(128, 10000.0, POSENC_ROPE_SCALING_NTK, 8.0, 0); check_freqs("ntk 8", &c);
  c = cfg_of(64, 500000.0, POSENC_ROPE_SCALING_NTK, 2.5, 0); check_freqs("ntk 2.5", &c);
  c = cfg_of(4, 10000.0, POSENC_ROPE_SCALING_NTK, 2.0, 0); check_freqs("ntk d4", &c);
  { /* NTK: base' = base * s^(d/(d-2)) at pair 1 of d = 4: omega_1 = base'^(-1/2) */
    c = cfg_of(4, 10000.0, POSENC_ROPE_SCALING_NTK, 2.0, 0);
    posenc_rope_init(rope, sizeof rope_st, &c);
    CHECK(rel_err(posenc_rope_inv_freq(rope)[1], 1.0L / ref_sqrtl(10000.0L * 4.0L)) < tol_1e15(), "ntk d4 s2: %.17g", posenc_rope_inv_freq(rope)[1]);
  }

  /* dynamic (HF): S = max(seq_len, L), seq_len 0 means L */
  c = cfg_of(64, 10000.0, POSENC_ROPE_SCALING_DYNAMIC, 2.0, 2048);
  check_freqs("dynamic seq 0", &c);
  {
    posenc_rope_config d0 = posenc_rope_default(64);
    posenc_rope_init(rope, sizeof rope_st, &c);
    posenc_rope_init(r2, sizeof r2_st, &d0);
    for (i = 0; i < 32; i++)
      CHECK(rel_err(posenc_rope_inv_freq(rope)[i], (ld)posenc_rope_inv_freq(r2)[i]) <= 2e-16, "dynamic seq 0 pair %zu: %.17g vs default %.17g", i,
            posenc_rope_inv_freq(rope)[i], posenc_rope_inv_freq(r2)[i]);
  }
  c.seq_len = 1000; check_freqs("dynamic seq < L", &c);
  c.seq_len = 2048; check_freqs("dynamic seq = L", &c);
  c.seq_len = 2049; check_freqs("dynamic seq L+1", &c);
  c.seq_len = 4096; check_freqs("dynamic seq 2L", &c);
  { /* seq 2L, s = 2: base' = base * 3^(d/(d-2)), omega_1 = base'^(-2/64) */
    posenc_rope_init(rope, sizeof rope_st, &c);
    CHECK(rel_err(posenc_rope_inv_freq(rope)[1], ref_powl(10000.0L * ref_powl(3.0L, 64.0L / 62.0L), -2.0L / 64.0L)) < tol_1e15(),
          "dynamic 2L closed form %.17g", posenc_rope_inv_freq(rope)[1]);
  }
  c.seq_len = 100000; c.factor = 1.5; check_freqs("dynamic seq 100000 s1.5", &c);
  /* set_seq_len recomputes to the same bits as a fresh init */
  {
    posenc_rope_config c2 = c;
    c2.seq_len = 0;
    posenc_rope_init(rope, sizeof rope_st, &c2);
    CHECK(posenc_rope_set_seq_len(rope, 100000) == POSENC_OK, "set_seq_len");
    posenc_rope_init(r2, sizeof r2_st, &c);
    CHECK(rope_arrays_equal(rope, r2) && rope->config.seq_len == 100000,
          "set_seq_len differs from init");
    CHECK(posenc_rope_set_seq_len(NULL, 5) == POSENC_ERR_NULL, "set_seq_len NULL");
  }
  /* Qwen's alpha: 1 for S <= L, 3 for S <= 2L, 7 for S <= 4L, 15 for S <= 8L */
  {
    static const uint32_t seqs[] = {0, 100, 2048, 2049, 4096, 4097, 8192, 8193, 16384};
    static const double alphas[] = {1, 1, 1, 3, 3, 7, 7, 15, 15};
    size_t k;
    for (k = 0; k < sizeof seqs / sizeof seqs[0]; k++) {
      char nm[64];
      c = cfg_of(64, 10000.0, POSENC_ROPE_SCALING_DYNAMIC, 1.0, 2048);
      c.dynamic_qwen_alpha = 1; c.seq_len = seqs[k];
      CHECK(qwen_alpha(seqs[k] ? seqs[k] : 2048, 2048) == alphas[k], "reference alpha for %u", (unsigned)seqs[k]);
      sprintf(nm, "qwen alpha seq %u", (unsigned)seqs[k]);
      check_freqs(nm, &c);
      posenc_rope_init(rope, sizeof rope_st, &c);
      CHECK(rel_err(posenc_rope_inv_freq(rope)[31], ref_powl(10000.0L * ref_powl((ld)alphas[k], 64.0L / 62.0L), -62.0L / 64.0L)) < tol_1e15(),
            "qwen alpha %g: %.17g", alphas[k], posenc_rope_inv_freq(rope)[31]);
    }
  }

  /* YaRN: the reference table of formulas.md 1.5 (the test's own range function) */
  c = cfg_of(128, 10000.0, POSENC_ROPE_SCALING_YARN, 4.0, 4096);
  ref_yarn_range(&c, &lo, &hi);
  CHECK(lo == 20.0L && hi == 46.0L, "yarn d128 1e4 4096: [%Lg, %Lg]", lo, hi);
  c.yarn_no_truncate = 1; ref_yarn_range(&c, &lo, &hi);
  CHECK(ref_fabsl(lo - 20.944482L) < 1e-6L && ref_fabsl(hi - 45.026881L) < 1e-6L, "raw [%.9Lg, %.9Lg]", lo, hi);
  c = cfg_of(128, 1e6, POSENC_ROPE_SCALING_YARN, 4.0, 32768);
  ref_yarn_range(&c, &lo, &hi);
  CHECK(lo == 23.0L && hi == 40.0L, "yarn d128 1e6 32768: [%Lg, %Lg]", lo, hi);
  c = cfg_of(64, 150000.0, POSENC_ROPE_SCALING_YARN, 32.0, 4096); c.yarn_no_truncate = 1;
  ref_yarn_range(&c, &lo, &hi);
  CHECK(ref_fabsl(lo - 8.092779115512402L) < 1e-12L && ref_fabsl(hi - 17.39802450158856L) < 1e-12L, "gpt-oss [%.16Lg, %.16Lg]", lo, hi);

  /* the library's ramp: unchanged at and below low, divided by s at and above high, between inside */
  {
    static const struct { size_t d; double base; uint32_t L; int no_trunc; double lo, hi; } yr[] = {
      {128, 10000.0, 4096, 0, 20, 46}, {128, 1e6, 32768, 0, 23, 40}, {64, 150000.0, 4096, 1, 8.092779115512402, 17.39802450158856},
      {64, 150000.0, 4096, 0, 8, 18}};
    size_t k;
    for (k = 0; k < sizeof yr / sizeof yr[0]; k++) {
      posenc_rope_config d0 = posenc_rope_default(yr[k].d);
      int bad = 0;
      c = cfg_of(yr[k].d, yr[k].base, POSENC_ROPE_SCALING_YARN, 4.0, yr[k].L);
      c.yarn_no_truncate = yr[k].no_trunc;
      d0.base = yr[k].base;
      posenc_rope_init(rope, sizeof rope_st, &c);
      posenc_rope_init(r2, sizeof r2_st, &d0);
      for (i = 0; i < yr[k].d / 2; i++) {
        double ratio = posenc_rope_inv_freq(rope)[i] / posenc_rope_inv_freq(r2)[i];
        double ramp = ((double)i - yr[k].lo) / (yr[k].hi - yr[k].lo), want;
        ramp = ramp < 0 ? 0 : (ramp > 1 ? 1 : ramp);
        want = ramp / 4.0 + (1.0 - ramp);
        if (fabs(ratio - want) > 4e-16) bad++;
      }
      CHECK(bad == 0, "yarn ramp case %zu: %d pairs off the [low, high] ramp", k, bad);
      check_freqs("yarn ramp case", &c);
    }
  }
  c = cfg_of(128, 10000.0, POSENC_ROPE_SCALING_YARN, 16.0, 4096); c.attention_factor = 0.0; check_freqs("yarn s16", &c);
  /* high past d/2 - 1: HF clamps with dim - 1, not d/2 - 1 (formulas.md 1.5) */
  c = cfg_of(64, 10000.0, POSENC_ROPE_SCALING_YARN, 8.0, 1000000);
  ref_yarn_range(&c, &lo, &hi);
  CHECK(lo == 29.0L && hi == 42.0L, "yarn d64 L 1e6: [%Lg, %Lg]", lo, hi);
  check_freqs("yarn high > d/2", &c);
  c.beta_slow = 0.001; ref_yarn_range(&c, &lo, &hi);
  CHECK(hi == 63.0L, "yarn clamp to d - 1: %Lg", hi);
  check_freqs("yarn high clamped to d - 1", &c);
  c.beta_fast = 16.0; c.beta_slow = 2.0; check_freqs("yarn betas 16/2", &c);
  c = cfg_of(96, 1e6, POSENC_ROPE_SCALING_YARN, 0.5, 8192); check_freqs("yarn s0.5 (mscale 1)", &c);
  /* mscale: 0.1 ln s + 1 */
  {
    static const double s[] = {4.0, 8.0, 40.0}, want[] = {1.138629436, 1.207944154, 1.368887945};
    size_t k;
    for (k = 0; k < 3; k++) {
      c = cfg_of(64, 10000.0, POSENC_ROPE_SCALING_YARN, s[k], 4096);
      posenc_rope_init(rope, sizeof rope_st, &c);
      CHECK(fabs(rope->attention_factor - want[k]) < 1e-9, "yarn mscale s=%g: %.10f", s[k], rope->attention_factor);
      CHECK(ref_fabsl(yarn_mscale(s[k], 1.0L) - want[k]) < 1e-9L, "reference mscale s=%g", s[k]);
      check_freqs("yarn mscale", &c);
    }
  }
  /* DeepSeek: mscale / mscale_all_dim ratio; V3 (1, 1, s = 40): exactly 1.0 */
  c = cfg_of(64, 10000.0, POSENC_ROPE_SCALING_YARN, 40.0, 4096); c.mscale = 1.0; c.mscale_all_dim = 1.0;
  posenc_rope_init(rope, sizeof rope_st, &c);
  CHECK(rope->attention_factor == 1.0, "DeepSeek-V3 attention factor %.17g", rope->attention_factor);
  check_freqs("yarn deepseek-v3", &c);
  c.mscale = 1.0; c.mscale_all_dim = 0.707; check_freqs("yarn mscale ratio 1/0.707", &c);
  posenc_rope_init(rope, sizeof rope_st, &c);
  CHECK(fabs(rope->attention_factor - (0.1 * log(40.0) + 1.0) / (0.0707 * log(40.0) + 1.0)) < 1e-15, "ratio %.17g",
        rope->attention_factor);
  c.mscale = 2.0; c.mscale_all_dim = 0.0; check_freqs("yarn mscale only (ignored)", &c);
  posenc_rope_init(rope, sizeof rope_st, &c);
  CHECK(fabs(rope->attention_factor - 1.368887945) < 1e-9, "one of mscale/mscale_all_dim zero: %.10f", rope->attention_factor);
  c.attention_factor = 0.625; check_freqs("yarn attention_factor override", &c);
  posenc_rope_init(rope, sizeof rope_st, &c);
  CHECK(rope->attention_factor == 0.625, "override %.17g", rope->attention_factor);

  /* llama3 (Llama-3.1): theta 500000, d 128, s 8, L 8192; pairs 29..34 are medium */
  c = cfg_of(128, 500000.0, POSENC_ROPE_SCALING_LLAMA3, 8.0, 8192);
  check_freqs("llama3", &c);
  {
    ref_freq r;
    posenc_rope_config d0 = posenc_rope_default(128);
    d0.base = 500000.0;
    ref_freqs(&c, &r);
    posenc_rope_init(rope, sizeof rope_st, &c);
    posenc_rope_init(r2, sizeof r2_st, &d0);
    CHECK(fabs(posenc_rope_inv_freq(r2)[29] / 2.616099253e-3 - 1) < 1e-9 && fabs(posenc_rope_inv_freq(rope)[29] / 2.166570764e-3 - 1) < 1e-9,
          "llama3 i=29: %.10g -> %.10g", posenc_rope_inv_freq(r2)[29], posenc_rope_inv_freq(rope)[29]);
    CHECK(fabs(posenc_rope_inv_freq(r2)[32] / 1.414213562e-3 - 1) < 1e-9 && fabs(posenc_rope_inv_freq(rope)[32] / 5.248461610e-4 - 1) < 1e-9,
          "llama3 i=32: %.10g -> %.10g", posenc_rope_inv_freq(r2)[32], posenc_rope_inv_freq(rope)[32]);
    CHECK(ref_fabsl(r.om[29] / 2.166570764e-3L - 1) < 1e-9L && ref_fabsl(r.om[32] / 5.248461610e-4L - 1) < 1e-9L, "reference llama3");
    for (i = 0; i < 64; i++) {
      double ratio = posenc_rope_inv_freq(rope)[i] / posenc_rope_inv_freq(r2)[i];
      if (i < 29) CHECK(fabs(ratio - 1.0) < 4e-16, "llama3 high-frequency pair %zu scaled: %.17g", i, ratio);
      else if (i <= 34) CHECK(ratio > 0.125 + 1e-6 && ratio < 1.0 - 1e-6, "llama3 medium pair %zu: %.17g", i, ratio);
      else CHECK(fabs(ratio - 0.125) < 1e-16, "llama3 low-frequency pair %zu: %.17g", i, ratio);
    }
  }
  c.factor = 32.0; c.low_freq_factor = 1.0; c.high_freq_factor = 4.0; check_freqs("llama3 s32 (3.2 1B)", &c);
  c.factor = 6.0; c.low_freq_factor = 2.0; c.high_freq_factor = 8.0; c.original_max_pos = 4096; check_freqs("llama3 custom", &c);

  /* LongRoPE: short list while seq_len <= L, long beyond; A = sqrt(1 + ln s / ln L) */
  c = cfg_of(64, 10000.0, POSENC_ROPE_SCALING_LONGROPE, 32.0, 4096);
  c.short_factor = lr_short; c.long_factor = lr_long;
  c.seq_len = 0; check_freqs("longrope seq 0 (short)", &c);
  c.seq_len = 4096; check_freqs("longrope seq L (short)", &c);
  posenc_rope_init(rope, sizeof rope_st, &c);
  CHECK(fabs(rope->attention_factor - 1.190238071) < 1e-9, "longrope A 131072/4096: %.10f", rope->attention_factor);
  c.seq_len = 4097; check_freqs("longrope seq L+1 (long)", &c);
  posenc_rope_init(r2, sizeof r2_st, &c);
  CHECK(rel_err(posenc_rope_inv_freq(r2)[5] * lr_long[5], (ld)posenc_rope_inv_freq(rope)[5] * lr_short[5]) < 1e-15, "longrope list switch");
  {
    CHECK(posenc_rope_set_seq_len(rope, 4097) == POSENC_OK, "longrope set_seq_len");
    CHECK(memcmp(posenc_rope_inv_freq(rope), posenc_rope_inv_freq(r2), r2->pairs * sizeof(double)) == 0 &&
          rope_arrays_equal(rope, r2), "longrope set_seq_len = init");
  }
  c.factor = 1.0; check_freqs("longrope s1 (A 1)", &c);
  c.factor = 0.5; check_freqs("longrope s0.5 (A 1)", &c);
  c.factor = 16.0; c.attention_factor = 1.25; check_freqs("longrope A override", &c);

  /* freq_factors divide omega, in any variant */
  c = posenc_rope_default(64); c.freq_factors = ffac; check_freqs("freq_factors", &c);
  c = cfg_of(128, 500000.0, POSENC_ROPE_SCALING_NTK, 4.0, 0); c.freq_factors = ffac; check_freqs("ntk + freq_factors", &c);
  c = cfg_of(64, 10000.0, POSENC_ROPE_SCALING_YARN, 8.0, 2048); c.freq_factors = ffac; check_freqs("yarn + freq_factors", &c);
  /* attention factor override on an unscaled rope */
  c = posenc_rope_default(64); c.attention_factor = 0.5; check_freqs("none A 0.5", &c);
  /* M-RoPE uses the default frequencies */
  c = posenc_rope_default(128); c.base = 1e6; c.mrope = POSENC_ROPE_MROPE_SECTIONS;
  c.mrope_section[0] = 16; c.mrope_section[1] = 24; c.mrope_section[2] = 24; check_freqs("mrope sections", &c);
  /* the config copy */
  c = posenc_rope_default(96); c.rotary_dim = 0;
  posenc_rope_init(rope, sizeof rope_st, &c);
  CHECK(rope->config.rotary_dim == 96 && rope->pairs == 48 && rope->config.head_dim == 96, "rotary_dim 0 -> head_dim");
}

/* ============================================================================================
 * HF float32 compatibility: the test's own float32 recipe (formulas.md 1.1, 1.3, 1.5, 1.6)
 * ========================================================================================== */
static float powf_cr(float b, float e) { return (float)ref_powl((ld)b, (ld)e); } /* round once (long double) */

static void check_hf(const char *name, const posenc_rope_config *c) {
  rope_store rope_st; posenc_rope *rope = &rope_st.rope;
  size_t d = rot_dim(c), h = d / 2, i, r, width;
  float inv[256], *cache;
  double base = c->base;
  float s = (float)c->factor;
  static const int32_t pos[] = {0, 1, 2, 31, 32, 33, 1000, 4095, 65535, 131071, 1000003, 16777215, 16777216, 123456789};
  const size_t n = sizeof pos / sizeof pos[0];
  posenc_rope_cache_spec sp = {HALF, F32, 0};
  int bad = 0, badv = 0;
  const float *ext = NULL;
  CHECK(posenc_rope_init(rope, sizeof rope_st, c) == POSENC_OK, "%s: init", name);
  if (c->scaling == POSENC_ROPE_SCALING_NTK) base = c->base * pow(c->factor, (double)d / (double)(d - 2));
  if (c->scaling == POSENC_ROPE_SCALING_LONGROPE) ext = c->seq_len > c->original_max_pos ? c->long_factor : c->short_factor;
  for (i = 0; i < h; i++) {
    float e = (float)(int64_t)(2 * i) / (float)d, pf = powf_cr((float)base, e), v = 1.0f / pf;
    if (c->scaling == POSENC_ROPE_SCALING_LINEAR) v = v / s;
    if (ext) v = 1.0f / (ext[i] * pf);
    if (c->scaling == POSENC_ROPE_SCALING_YARN) {
      double L = c->original_max_pos, lo, hi;
      double bf = c->beta_fast != 0.0 ? c->beta_fast : 32.0, bs = c->beta_slow != 0.0 ? c->beta_slow : 1.0;
      float ramp, ew;
      lo = (double)d * log(L / (bf * 2.0 * 3.141592653589793)) / (2.0 * log(c->base));
      hi = (double)d * log(L / (bs * 2.0 * 3.141592653589793)) / (2.0 * log(c->base));
      if (!c->yarn_no_truncate) { lo = floor(lo); hi = ceil(hi); }
      if (lo < 0) lo = 0;
      if (hi > (double)(d - 1)) hi = (double)(d - 1);
      if (lo == hi) hi += 0.001;
      ramp = ((float)i - (float)lo) / (float)(hi - lo);
      ramp = ramp < 0.0f ? 0.0f : (ramp > 1.0f ? 1.0f : ramp);
      ew = 1.0f - ramp;
      v = (1.0f / (s * pf)) * (1.0f - ew) + v * ew;
    }
    inv[i] = v;
    if (posenc_rope_inv_freq_f32(rope)[i] != v && bad++ < 3)
      CHECK(0, "%s: HF inv_freq[%zu] %.9g want %.9g", name, i, posenc_rope_inv_freq_f32(rope)[i], v);
  }
  CHECK(bad == 0, "%s: %d HF float32 frequencies differ", name, bad);
  width = posenc_rope_cache_width(rope, HALF);
  cache = (float *)malloc(n * width * sizeof(float));
  CHECK(posenc_rope_cache_rows(rope, &sp, pos, n, cache, n * width * sizeof(float)) == POSENC_OK, "%s: rows", name);
  for (r = 0; r < n; r++)
    for (i = 0; i < h; i++) {
      float th = (float)pos[r] * inv[i], af = (float)rope->attention_factor;
      float wc = (float)ref_cosl((ld)th), ws = (float)ref_sinl((ld)th);
      if (af != 1.0f) { wc = wc * af; ws = ws * af; }
      if ((cache[r * width + i] != wc || cache[r * width + h + i] != ws) && badv++ < 3)
        CHECK(0, "%s: p=%d pair %zu: (%.9g, %.9g) want (%.9g, %.9g)", name, (int)pos[r], i, cache[r * width + i],
              cache[r * width + h + i], wc, ws);
    }
  CHECK(badv == 0, "%s: %d HF cache values differ from the float32 recipe", name, badv);
  free(cache);
}

static void test_hf_compat(void) {
  posenc_rope_config c;
  c = posenc_rope_default(128); c.hf_compat = 1; check_hf("hf default", &c);
  c = posenc_rope_default(64); c.base = 1e6; c.hf_compat = 1; check_hf("hf default 1e6", &c);
  c = cfg_of(64, 10000.0, POSENC_ROPE_SCALING_LINEAR, 4.0, 0); c.hf_compat = 1; check_hf("hf linear", &c);
  c = cfg_of(64, 10000.0, POSENC_ROPE_SCALING_NTK, 4.0, 0); c.hf_compat = 1; check_hf("hf ntk", &c);
  c = cfg_of(128, 10000.0, POSENC_ROPE_SCALING_YARN, 4.0, 4096); c.hf_compat = 1; check_hf("hf yarn", &c);
  c = cfg_of(64, 150000.0, POSENC_ROPE_SCALING_YARN, 32.0, 4096); c.yarn_no_truncate = 1; c.hf_compat = 1;
  check_hf("hf yarn gpt-oss", &c);
  c = cfg_of(64, 10000.0, POSENC_ROPE_SCALING_LONGROPE, 32.0, 4096); c.short_factor = lr_short; c.long_factor = lr_long;
  c.hf_compat = 1; c.seq_len = 9000; check_hf("hf longrope long", &c);
}

/* ============================================================================================
 * Cache values
 * ========================================================================================== */
/* Every entry of a cache against A*cos / A*sin of p * omega_i (reference omega, long double). */
static int check_values(const char *name, const ref_freq *r, const float *half, size_t stride, const int32_t *pos,
                        size_t n, double *worst_ulp) {
  size_t k, i;
  int bad = 0;
  for (k = 0; k < n; k++) {
    ld p = (ld)pos[k];
    for (i = 0; i < r->h; i++) {
      ld ang = p * r->om[i];
      ld want[2];
      double got[2];
      int w;
      want[0] = r->A * ref_cosl(ang); want[1] = r->A * ref_sinl(ang);
      got[0] = half[k * stride + i]; got[1] = half[k * stride + r->h + i];
      for (w = 0; w < 2; w++) {
        double wd = (double)want[w], err = (double)ref_fabsl((ld)got[w] - want[w]);
        /* the reference's own error: logl, expl and the products, a few long double ulps of omega
         * (relative error up to (2|e| + 4) eps, e the exponent), times the angle; then cosl */
        ld ref_err = (ref_fabsl(ang) * (2.0L * r->arg[i] + 4.0L) + 2.0L) * ref_eps() * r->A;
        ld bound = (ld)tl_half_ulp_f32(wd) + 1e-12L + ref_err;
        if (wd != 0.0 && err / (2 * tl_half_ulp_f32(wd)) > *worst_ulp) *worst_ulp = err / (2 * tl_half_ulp_f32(wd));
        if ((ld)err > bound && bad++ < 4)
          CHECK(0, "%s: p=%d pair %zu %s: got %.9g want %.17Lg (err %.3g, bound %.3Lg)", name, (int)pos[k], i,
                w ? "sin" : "cos", got[w], want[w], err, bound);
      }
    }
  }
  return bad;
}

/* One variant: the cache in every layout and dtype, rows and ranges, gaps and guards. */
static void check_cache_variant(const char *name, const posenc_rope_config *cfg, int32_t range_start) {
  enum { NR = 37 };
  rope_store rope_st; posenc_rope *rope = &rope_st.rope;
  ref_freq r;
  int32_t list[40];
  size_t n = 0, k, h, w2, w4, i, es;
  int lay, dt, bad;
  double worst = 0.0;
  float *half, *tab;
  size_t bytes, stride;
  unsigned char *buf;
  posenc_status st;

  if ((st = posenc_rope_init(rope, sizeof rope_st, cfg)) != POSENC_OK) { CHECK(0, "%s: init %s", name, posenc_strerror(st)); return; }
  ref_freqs(cfg, &r);
  h = rope->pairs;
  w2 = posenc_rope_cache_width(rope, HALF);
  w4 = posenc_rope_cache_width(rope, FULL);
  CHECK(w2 == 2 * h && w4 == 4 * h && posenc_rope_cache_width(rope, INTL) == 2 * h, "%s: widths", name);
  list[n++] = 0; list[n++] = 1; list[n++] = 2; list[n++] = 31; list[n++] = 32; list[n++] = 33; list[n++] = -5;
  list[n++] = 16777215; list[n++] = 16777184; list[n++] = 16777183; list[n++] = 8388608; list[n++] = 131071;
  while (n < 24) list[n++] = (int32_t)(lcg() & 0xffffff);

  /* HALF f32 with a row stride: the values */
  stride = w2 + 3;
  {
    posenc_rope_cache_spec sp = {HALF, F32, stride};
    CHECK(posenc_rope_cache_bytes(rope, &sp, n, &bytes) == POSENC_OK && bytes == ((n - 1) * stride + w2) * 4,
          "%s: bytes", name);
    buf = (unsigned char *)malloc(bytes + GUARD);
    memset(buf, CANARY, bytes + GUARD);
    CHECK(posenc_rope_cache_rows(rope, &sp, list, n, buf, bytes) == POSENC_OK, "%s: rows", name);
    CHECK(tl_all_canary(buf + bytes, GUARD), "%s: wrote past the exact-size buffer", name);
    for (k = 0; k + 1 < n; k++) CHECK(tl_all_canary(buf + (k * stride + w2) * 4, 3 * 4), "%s: stride gap row %zu", name, k);
    half = (float *)malloc(n * w2 * sizeof(float));
    for (k = 0; k < n; k++) memcpy(half + k * w2, buf + k * stride * 4, w2 * 4);
    free(buf);
  }
  bad = check_values(name, &r, half, w2, list, n, &worst);
  CHECK(bad == 0, "%s: %d cache values off the bound (worst %.4f ulp)", name, bad, worst);

  /* every layout and dtype, dense and strided: the f32 HALF values rearranged and RNE-converted */
  for (lay = 0; lay < 3; lay++)
    for (dt = 0; dt < 3; dt++) {
      size_t width = lay == FULL ? w4 : w2, str = width + (size_t)(lay + dt) % 3;
      posenc_rope_cache_spec sp;
      int badl = 0;
      sp.layout = (posenc_rope_cache_layout)lay; sp.dtype = (posenc_dtype)dt; sp.row_stride = str == width ? 0 : str;
      es = posenc_dtype_size(sp.dtype);
      if (posenc_rope_cache_bytes(rope, &sp, n, &bytes) != POSENC_OK) { CHECK(0, "bytes"); continue; }
      buf = (unsigned char *)malloc(bytes + GUARD);
      memset(buf, CANARY, bytes + GUARD);
      CHECK(posenc_rope_cache_rows(rope, &sp, list, n, buf, bytes) == POSENC_OK, "%s: rows %d/%d", name, lay, dt);
      CHECK(tl_all_canary(buf + bytes, GUARD), "%s: layout %d dtype %d wrote past the buffer", name, lay, dt);
      for (k = 0; k < n; k++) {
        const unsigned char *row = buf + k * str * es;
        if (k + 1 < n && str > width) CHECK(tl_all_canary(row + width * es, (str - width) * es), "%s: gap %d/%d", name, lay, dt);
        for (i = 0; i < h; i++) {
          float cv = half[k * w2 + i], sv = half[k * w2 + h + i];
          float want[4];
          size_t col[4], nc = 2, m;
          want[0] = cv; want[1] = sv;
          if (lay == HALF) { col[0] = i; col[1] = h + i; }
          else if (lay == INTL) { col[0] = 2 * i; col[1] = 2 * i + 1; }
          else { col[0] = i; col[1] = 2 * h + i; col[2] = h + i; col[3] = 3 * h + i; want[2] = cv; want[3] = sv; nc = 4; }
          for (m = 0; m < nc; m++) {
            unsigned char img[4];
            tl_store(img, sp.dtype, want[m]);
            if (memcmp(row + col[m] * es, img, es) != 0) badl++;
          }
        }
      }
      CHECK(badl == 0, "%s: layout %d dtype %d: %d entries differ from the f32 HALF value (RNE)", name, lay, dt, badl);
      free(buf);
    }

  /* a range crossing anchor boundaries = the same rows from a list; its values too */
  {
    int32_t rl[NR];
    posenc_rope_cache_spec sp = {HALF, F32, 0};
    float *lst = (float *)malloc(NR * w2 * sizeof(float));
    tab = (float *)malloc(NR * w2 * sizeof(float) + GUARD);
    memset(tab, CANARY, NR * w2 * sizeof(float) + GUARD);
    for (k = 0; k < NR; k++) rl[k] = range_start + (int32_t)k;
    CHECK(posenc_rope_cache_table(rope, &sp, range_start, NR, tab, NR * w2 * sizeof(float)) == POSENC_OK, "%s: table", name);
    CHECK(tl_all_canary((unsigned char *)tab + NR * w2 * sizeof(float), GUARD), "%s: table guard", name);
    CHECK(posenc_rope_cache_rows(rope, &sp, rl, NR, lst, NR * w2 * sizeof(float)) == POSENC_OK, "%s: rows", name);
    CHECK(memcmp(tab, lst, NR * w2 * sizeof(float)) == 0, "%s: range and list differ", name);
    bad = check_values(name, &r, tab, w2, rl, NR, &worst);
    CHECK(bad == 0, "%s: range: %d cache values off the bound", name, bad);
    free(lst);
    free(tab);
  }
  printf("  cache %-34s max error %.4f ulp (vs a %d-bit long double reference)\n", name, worst, LDBL_MANT_DIG);
  free(half);
}

static void test_cache_values(void) {
  posenc_rope_config c;
  c = posenc_rope_default(128); check_cache_variant("default d128", &c, 16777215 - 36);
  c = posenc_rope_default(64); c.base = 500000.0; c.style = GPTJ; check_cache_variant("default d64 500000", &c, 1000);
  c = posenc_rope_default(96); c.rotary_dim = 34; c.base = 1e6; check_cache_variant("partial d34 1e6", &c, -20);
  c = posenc_rope_default(2); check_cache_variant("d2", &c, 16777200);
  c = posenc_rope_default(64); c.attention_factor = 0.75; check_cache_variant("A 0.75", &c, 77);
  c = cfg_of(64, 10000.0, POSENC_ROPE_SCALING_LINEAR, 4.0, 0); check_cache_variant("linear 4", &c, 5000000);
  c = cfg_of(64, 10000.0, POSENC_ROPE_SCALING_LINEAR, 3.0, 0); check_cache_variant("linear 3", &c, 12345678);
  c = cfg_of(64, 10000.0, POSENC_ROPE_SCALING_NTK, 8.0, 0); check_cache_variant("ntk 8", &c, 999);
  c = cfg_of(64, 10000.0, POSENC_ROPE_SCALING_DYNAMIC, 2.0, 2048); c.seq_len = 6000;
  check_cache_variant("dynamic s2 seq 6000", &c, 4000);
  c = cfg_of(64, 10000.0, POSENC_ROPE_SCALING_DYNAMIC, 1.0, 2048); c.seq_len = 6000; c.dynamic_qwen_alpha = 1;
  check_cache_variant("dynamic qwen alpha 7", &c, 16777000);
  c = cfg_of(128, 10000.0, POSENC_ROPE_SCALING_YARN, 4.0, 4096); check_cache_variant("yarn s4 (A 1.1386)", &c, 16777215 - 36);
  c = cfg_of(64, 150000.0, POSENC_ROPE_SCALING_YARN, 32.0, 4096); c.yarn_no_truncate = 1;
  check_cache_variant("yarn gpt-oss no truncate", &c, 300000);
  c = cfg_of(64, 10000.0, POSENC_ROPE_SCALING_YARN, 40.0, 4096); c.mscale = 1.0; c.mscale_all_dim = 1.0;
  check_cache_variant("yarn deepseek A 1", &c, 65500);
  c = cfg_of(128, 500000.0, POSENC_ROPE_SCALING_LLAMA3, 8.0, 8192); check_cache_variant("llama3", &c, 16777215 - 36);
  c = cfg_of(64, 10000.0, POSENC_ROPE_SCALING_LONGROPE, 32.0, 4096); c.short_factor = lr_short; c.long_factor = lr_long;
  c.seq_len = 131072; check_cache_variant("longrope long (A 1.19)", &c, 4090);
  c.seq_len = 10; check_cache_variant("longrope short", &c, 0);
  c = posenc_rope_default(64); c.freq_factors = ffac; check_cache_variant("freq_factors", &c, 16777100);
}

/* An unscaled NeoX HALF cache is the sinusoidal SPLIT table [sin | cos] with its halves swapped. */
static void test_sinusoidal_equivalence(void) {
  static const size_t dims[] = {2, 6, 34, 64, 128, 256, 512};
  static const double bases[] = {10000.0, 500000.0, 1e6, 2.0};
  size_t di, bi, k, n = 40;
  int32_t pos[40];
  for (k = 0; k < n; k++) pos[k] = k < 8 ? (int32_t)k * 31 - 40 : (int32_t)(lcg() & 0xffffff);
  pos[8] = 16777215; pos[9] = 2147483647; pos[10] = -2147483647 - 1;
  for (di = 0; di < sizeof dims / sizeof dims[0]; di++)
    for (bi = 0; bi < sizeof bases / sizeof bases[0]; bi++) {
      size_t d = dims[di], h = d / 2;
      rope_store rope_st; posenc_rope *rope = &rope_st.rope;
      posenc_rope_config c = posenc_rope_default(d + 6);
      posenc_sinusoidal_params sp = posenc_sinusoidal_default(d);
      posenc_rope_cache_spec cs = {HALF, F32, 0};
      float *a = (float *)malloc(n * d * 4), *b = (float *)malloc(n * d * 4);
      int bad = 0;
      c.rotary_dim = d; c.base = bases[bi];
      sp.layout = POSENC_LAYOUT_SPLIT; sp.base = bases[bi];
      CHECK(posenc_rope_init(rope, sizeof rope_st, &c) == POSENC_OK, "init");
      CHECK(posenc_rope_cache_rows(rope, &cs, pos, n, a, n * d * 4) == POSENC_OK, "rope rows d=%zu", d);
      CHECK(posenc_sinusoidal_rows(&sp, pos, n, b, n * d * 4) == POSENC_OK, "sinusoidal rows d=%zu", d);
      for (k = 0; k < n; k++)
        bad += memcmp(a + k * d, b + k * d + h, h * 4) != 0 || memcmp(a + k * d + h, b + k * d, h * 4) != 0;
      CHECK(bad == 0, "d=%zu base %g: %d rope rows differ from the swapped sinusoidal split rows", d, bases[bi], bad);
      /* and from a range */
      CHECK(posenc_rope_cache_table(rope, &cs, 16777000, 20, a, n * d * 4) == POSENC_OK &&
            posenc_sinusoidal_table(&sp, 16777000, 20, b, n * d * 4) == POSENC_OK, "tables");
      for (k = 0, bad = 0; k < 20; k++)
        bad += memcmp(a + k * d, b + k * d + h, h * 4) != 0 || memcmp(a + k * d + h, b + k * d, h * 4) != 0;
      CHECK(bad == 0, "d=%zu base %g: range differs", d, bases[bi]);
      free(a); free(b);
    }
}

/* ============================================================================================
 * Rotation: a plain reference
 * ========================================================================================== */
typedef struct tview {
  size_t off;                 /* bytes from the buffer start */
  size_t heads, bs, ts, hs;   /* element strides (explicit) */
  posenc_dtype dt;
  int zero_strides;           /* hand the library 0 (dense defaults) instead */
} tview;

static size_t tview_end(const tview *t, size_t B, size_t T, size_t D) {
  return t->off + ((B - 1) * t->bs + (T - 1) * t->ts + (t->heads - 1) * t->hs + D) * posenc_dtype_size(t->dt);
}
static tview dense_view(size_t off, size_t heads, size_t T, size_t D, posenc_dtype dt) {
  tview t;
  t.off = off; t.heads = heads; t.hs = D; t.ts = heads * D; t.bs = T * heads * D; t.dt = dt; t.zero_strides = 0;
  return t;
}
static posenc_rope_tensor to_tensor(unsigned char *buf, const tview *t) {
  posenc_rope_tensor x;
  x.data = buf + t->off; x.dtype = t->dt; x.heads = t->heads;
  x.batch_stride = t->zero_strides ? 0 : t->bs;
  x.token_stride = t->zero_strides ? 0 : t->ts;
  x.head_stride = t->zero_strides ? 0 : t->hs;
  return x;
}

/* Qwen2-VL sections / Qwen3-VL interleaved (formulas.md 1.9): the axis of pair j. */
static int ref_axis(const posenc_rope_config *c, size_t j) {
  if (c->mrope == POSENC_ROPE_MROPE_SECTIONS) {
    if (j < c->mrope_section[0]) return 0;
    if (j < (size_t)c->mrope_section[0] + c->mrope_section[1]) return 1;
    return 2;
  }
  if (c->mrope == POSENC_ROPE_MROPE_INTERLEAVED) {
    if (j % 3 == 1 && j < 3 * (size_t)c->mrope_section[1]) return 1;
    if (j % 3 == 2 && j < 3 * (size_t)c->mrope_section[2]) return 2;
  }
  return 0;
}

/* cos/sin of pair j at position p, from a cache view (any layout/dtype) or a one-row f32 cache. */
static void ref_row(const posenc_rope *rope, const posenc_rope_cache_view *cv, int32_t p, float *c, float *s) {
  size_t h = rope->pairs, j;
  if (!cv) {
    float row[POSENC_ROPE_MAX_DIM];
    posenc_rope_cache_spec sp = {HALF, F32, 0};
    posenc_status st = posenc_rope_cache_rows(rope, &sp, &p, 1, row, sizeof row);
    if (st != POSENC_OK) { CHECK(0, "reference row: %s", posenc_strerror(st)); memset(row, 0, sizeof row); }
    for (j = 0; j < h; j++) { c[j] = row[j]; s[j] = row[h + j]; }
    return;
  } else {
    size_t es = posenc_dtype_size(cv->spec.dtype);
    size_t width = cv->spec.layout == FULL ? 4 * h : 2 * h, str = cv->spec.row_stride ? cv->spec.row_stride : width;
    const unsigned char *row = (const unsigned char *)cv->data + (size_t)p * str * es;
    for (j = 0; j < h; j++) {
      size_t cc = cv->spec.layout == INTL ? 2 * j : j;
      size_t sc = cv->spec.layout == INTL ? 2 * j + 1 : (cv->spec.layout == HALF ? h + j : 2 * h + j);
      c[j] = tl_load(row + cc * es, cv->spec.dtype);
      s[j] = tl_load(row + sc * es, cv->spec.dtype);
    }
  }
}

static int32_t pos_of(const posenc_rope_positions *pp, int axis, size_t b, size_t t) {
  if (!pp->ids) return (int32_t)(pp->start + (int32_t)t);
  return pp->ids[(size_t)axis * pp->batch * pp->tokens + b * pp->tokens + t];
}

/* x0' = x0*c - x1*s, x1' = x1*c + x0*s in float (inverse: s -> -s); storage RNE. */
static void ref_apply(const posenc_rope *rope, const posenc_rope_cache_view *cv, const posenc_rope_positions *pp,
                      unsigned char *buf, const tview *tv, int ntv, posenc_rope_direction dir) {
  size_t h = rope->pairs, b, t, j, hd;
  int naxes = rope->config.mrope != POSENC_ROPE_MROPE_NONE ? 3 : 1, a, m;
  static float c[3][POSENC_ROPE_MAX_DIM / 2], s[3][POSENC_ROPE_MAX_DIM / 2];
  for (b = 0; b < pp->batch; b++)
    for (t = 0; t < pp->tokens; t++) {
      for (a = 0; a < naxes; a++) ref_row(rope, cv, pos_of(pp, a, b, t), c[a], s[a]);
      for (m = 0; m < ntv; m++) {
        size_t es = posenc_dtype_size(tv[m].dt);
        for (hd = 0; hd < tv[m].heads; hd++) {
          unsigned char *x = buf + tv[m].off + (b * tv[m].bs + t * tv[m].ts + hd * tv[m].hs) * es;
          for (j = 0; j < h; j++) {
            int ax = ref_axis(&rope->config, j);
            float cc = c[ax][j], ss = dir == INV ? -s[ax][j] : s[ax][j];
            size_t e0 = rope->config.style == NEOX ? j : 2 * j, e1 = rope->config.style == NEOX ? j + h : 2 * j + 1;
            float x0 = tl_load(x + e0 * es, tv[m].dt), x1 = tl_load(x + e1 * es, tv[m].dt);
            float o0 = x0 * cc - x1 * ss, o1 = x1 * cc + x0 * ss;
            tl_store(x + e0 * es, tv[m].dt, o0);
            tl_store(x + e1 * es, tv[m].dt, o1);
          }
        }
      }
    }
}

/* Fill the buffer with values of q's dtype, then k's elements with k's dtype. */
static void fill_buffer(unsigned char *buf, size_t bytes, const tview *tv, int ntv, size_t B, size_t T, size_t D) {
  size_t i, b, t, hd, e;
  int m;
  posenc_dtype dt = tv[0].dt;
  size_t es = posenc_dtype_size(dt);
  for (i = 0; i + es <= bytes; i += es) tl_store(buf + i, dt, lcg_val());
  for (; i < bytes; i++) buf[i] = 0;
  for (m = 1; m < ntv; m++) {
    if (tv[m].dt == dt) continue;
    es = posenc_dtype_size(tv[m].dt);
    for (b = 0; b < B; b++)
      for (t = 0; t < T; t++)
        for (hd = 0; hd < tv[m].heads; hd++)
          for (e = 0; e < D; e++)
            tl_store(buf + tv[m].off + (b * tv[m].bs + t * tv[m].ts + hd * tv[m].hs + e) * es, tv[m].dt, lcg_val());
  }
}

/* Runs posenc_rope_apply and the reference on copies of one filled buffer (exact size + guard)
 * and requires identical bytes everywhere. Returns the library's buffer (caller frees) and, in
 * *input, a copy of the input if asked. */
static unsigned char *run_rot(const char *name, const posenc_rope *rope, const posenc_rope_cache_view *cv,
                              const posenc_rope_positions *pp, const tview *q, const tview *k,
                              posenc_rope_direction dir, unsigned char **input, size_t *nbytes) {
  tview tv[2];
  int ntv = k ? 2 : 1;
  size_t D = rope->config.head_dim, bytes, e2;
  unsigned char *lib, *ref;
  posenc_rope_tensor qt, kt;
  posenc_status st;
  tv[0] = *q;
  if (k) tv[1] = *k;
  bytes = tview_end(q, pp->batch, pp->tokens, D);
  if (k && (e2 = tview_end(k, pp->batch, pp->tokens, D)) > bytes) bytes = e2;
  lib = (unsigned char *)malloc(bytes + GUARD);
  ref = (unsigned char *)malloc(bytes + GUARD);
  fill_buffer(lib, bytes, tv, ntv, pp->batch, pp->tokens, D);
  memset(lib + bytes, CANARY, GUARD);
  memcpy(ref, lib, bytes + GUARD);
  if (input) { *input = (unsigned char *)malloc(bytes + GUARD); memcpy(*input, lib, bytes + GUARD); }
  if (nbytes) *nbytes = bytes;
  qt = to_tensor(lib, q);
  if (k) kt = to_tensor(lib, k);
  st = posenc_rope_apply(rope, cv, pp, &qt, k ? &kt : NULL, dir);
  CHECK(st == POSENC_OK, "%s: apply %s", name, posenc_strerror(st));
  ref_apply(rope, cv, pp, ref, tv, ntv, dir);
  CHECK(memcmp(lib, ref, bytes + GUARD) == 0, "%s [%s]: rotation differs from the reference (or wrote outside)", name,
        posenc_isa_name(posenc_isa_active()));
  free(ref);
  return lib;
}

/* QK-norm of one head of D f32 values in place, as posenc_rope_norm defines it, but with r from
 * long double's 1/sqrt rounded to f32 (the library's Newton steps in double round alike but within
 * about 1e-16 of an f32 midpoint). */
static void ref_norm(float *x, size_t D, const posenc_rope_norm *nm) {
  double a[8] = {0, 0, 0, 0, 0, 0, 0, 0}, ss, v;
  float r;
  size_t e;
  for (e = 0; e < D; e++) a[e % 8] += (double)x[e] * (double)x[e];
  ss = ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
  v = ss * (1.0 / (double)D) + (double)nm->epsilon;
  r = (float)(1.0L / ref_sqrtl((ld)v));
  for (e = 0; e < D; e++) {
    float w = nm->weight_offset ? 1.0f + nm->weight[e] : nm->weight[e];
    x[e] = (x[e] * r) * w;
  }
}

/* posenc_rope_apply_out from the inputs `in` (views qi, ki) into the outputs `out` (qo, ko; k NULL:
 * Q alone), against the reference: each input converted to f32, rotated by ref_apply, rounded to
 * the output's dtype. With norms (qn, kn; either NULL), posenc_rope_apply_norm, and the reference
 * normalises each head by ref_norm first. Bytes of the output buffer that no output element
 * covers keep the canary. */
static void run_rot_out(const char *name, const posenc_rope *rope, const posenc_rope_cache_view *cv,
                        const posenc_rope_positions *pp, const tview *qi, const tview *qo, const tview *ki,
                        const tview *ko, posenc_rope_direction dir, const posenc_rope_norm *qn,
                        const posenc_rope_norm *kn) {
  const size_t D = rope->config.head_dim, B = pp->batch, T = pp->tokens;
  const tview *ins[2], *outs[2];
  tview ref_v[2];
  size_t in_bytes = tview_end(qi, B, T, D), out_bytes = tview_end(qo, B, T, D), ref_off = 0, b, t, hd, e;
  int m, n = ki ? 2 : 1, bad = 0;
  unsigned char *in, *out, *ref, *covered;
  posenc_rope_tensor qit, qot, kit, kot;
  posenc_status st;
  ins[0] = qi; outs[0] = qo; ins[1] = ki; outs[1] = ko;
  if (ki && tview_end(ki, B, T, D) > in_bytes) in_bytes = tview_end(ki, B, T, D);
  if (ko && tview_end(ko, B, T, D) > out_bytes) out_bytes = tview_end(ko, B, T, D);
  in = (unsigned char *)malloc(in_bytes);
  out = (unsigned char *)malloc(out_bytes + GUARD);
  covered = (unsigned char *)calloc(out_bytes + GUARD, 1);
  ref = (unsigned char *)malloc((B * T * (qi->heads + (ki ? ki->heads : 0)) * D) * 4);
  {
    tview views[2];
    views[0] = *qi;
    if (ki) views[1] = *ki;
    fill_buffer(in, in_bytes, views, n, B, T, D);
  }
  memset(out, CANARY, out_bytes + GUARD);
  /* the reference: dense f32 copies [b][t][head][D], rotated by ref_apply */
  for (m = 0; m < n; m++) {
    const tview *v = ins[m];
    ref_v[m] = dense_view(ref_off, v->heads, T, D, F32);
    for (b = 0; b < B; b++)
      for (t = 0; t < T; t++)
        for (hd = 0; hd < v->heads; hd++)
          for (e = 0; e < D; e++) {
            float x = tl_load(in + v->off + (b * v->bs + t * v->ts + hd * v->hs + e) * posenc_dtype_size(v->dt), v->dt);
            memcpy(ref + ref_off + (((b * T + t) * v->heads + hd) * D + e) * 4, &x, 4);
          }
    if (m ? kn : qn)
      for (e = 0; e < B * T * v->heads; e++) {
        float head[POSENC_ROPE_MAX_DIM];
        memcpy(head, ref + ref_off + e * D * 4, D * 4);
        ref_norm(head, D, m ? kn : qn);
        memcpy(ref + ref_off + e * D * 4, head, D * 4);
      }
    ref_off += B * T * v->heads * D * 4;
  }
  ref_apply(rope, cv, pp, ref, ref_v, n, dir);
  qit = to_tensor(in, qi); qot = to_tensor(out, qo);
  if (ki) { kit = to_tensor(in, ki); kot = to_tensor(out, ko); }
  if (qn || kn)
    st = posenc_rope_apply_norm(rope, cv, pp, &qit, &qot, qn, ki ? &kit : NULL, ki ? &kot : NULL, kn);
  else
    st = posenc_rope_apply_out(rope, cv, pp, &qit, &qot, ki ? &kit : NULL, ki ? &kot : NULL, dir);
  CHECK(st == POSENC_OK, "%s: apply_out %s", name, posenc_strerror(st));
  for (m = 0; m < n; m++) {
    const tview *v = outs[m];
    size_t es = posenc_dtype_size(v->dt);
    for (b = 0; b < B; b++)
      for (t = 0; t < T; t++)
        for (hd = 0; hd < v->heads; hd++)
          for (e = 0; e < D; e++) {
            size_t at = v->off + (b * v->bs + t * v->ts + hd * v->hs + e) * es;
            unsigned char want[4];
            float r;
            memcpy(&r, ref + ref_v[m].off + (((b * T + t) * v->heads + hd) * D + e) * 4, 4);
            tl_store(want, v->dt, r);
            if (memcmp(out + at, want, es) != 0 && bad++ < 3)
              CHECK(0, "%s [%s]: tensor %d b%lu t%lu head %lu elem %lu differs from the reference", name,
                    posenc_isa_name(posenc_isa_active()), m, (unsigned long)b, (unsigned long)t, (unsigned long)hd,
                    (unsigned long)e);
            memset(covered + at, 1, es);
          }
  }
  for (e = 0; e < out_bytes + GUARD; e++)
    if (!covered[e] && out[e] != CANARY) { CHECK(0, "%s: wrote outside the outputs (byte %lu)", name, (unsigned long)e); break; }
  CHECK(bad == 0, "%s: %d elements differ", name, bad);
  free(in); free(out); free(ref); free(covered);
}

/* Positions for rotations on the fly: within +-20000, negative ones too (on the fly, a negative
 * position rotates by the negative angle: llama.cpp's K-shift after a context shift does that),
 * and with_max the extremes +-(2^24 - 1), 0 and 131071. */
static void make_ids(int32_t *ids, size_t n, int with_max) {
  size_t i;
  for (i = 0; i < n; i++) ids[i] = (int32_t)(lcg() % 40001u) - 20000;
  if (with_max && n > 3) { ids[0] = 16777215; ids[1] = -16777215; ids[n - 1] = 0; ids[n / 2] = 131071; }
}

/* Makes a rope in *st and returns it. */
static posenc_rope *make_rope(rope_store *st, size_t D, size_t rot, posenc_rope_style style, double base) {
  posenc_rope_config c = posenc_rope_default(D);
  c.rotary_dim = rot; c.style = style; c.base = base;
  if (posenc_rope_init(&st->rope, sizeof *st, &c) != POSENC_OK) CHECK(0, "make_rope init");
  return &st->rope;
}

/* Build a cache view for positions 0..n-1 in a spec. */
static void *make_cache(const posenc_rope *rope, posenc_rope_cache_layout lay, posenc_dtype dt, size_t stride_extra,
                        size_t n, posenc_rope_cache_view *cv) {
  posenc_rope_cache_spec sp;
  size_t bytes, w = posenc_rope_cache_width(rope, lay);
  void *data;
  sp.layout = lay; sp.dtype = dt; sp.row_stride = stride_extra ? w + stride_extra : 0;
  posenc_rope_cache_bytes(rope, &sp, n, &bytes);
  data = malloc(bytes);
  CHECK(posenc_rope_cache_table(rope, &sp, 0, n, data, bytes) == POSENC_OK, "make_cache");
  cv->data = data; cv->n_rows = n; cv->spec = sp;
  return data;
}

static void test_rotation_shapes(void) {
  static const posenc_dtype dts[3] = {F32, F16, BF16};
  static const size_t dims[2][2] = {{64, 64}, {80, 48}};
  int32_t ids[2 * 3 * 64];
  int si, di, dd;
  char nm[128];

  /* GQA (q 8 heads, k 2 heads) [batch, seq, heads, dim], batch 2 with their own positions;
   * full and partial rotary; every storage type; both styles and directions */
  for (si = 0; si < 2; si++)
    for (dd = 0; dd < 2; dd++)
      for (di = 0; di < 3; di++) {
        size_t D = dims[dd][0], B = 2, T = 5;
        rope_store rope_st; posenc_rope *rope = make_rope(&rope_st, D, dims[dd][1], (posenc_rope_style)si, 10000.0);
        posenc_rope_positions pp;
        tview q = dense_view(0, 8, T, D, dts[di]), k;
        int dir;
        k = dense_view(tview_end(&q, B, T, D) + 24, 2, T, D, dts[di]);
        make_ids(ids, B * T, 1);
        pp.batch = B; pp.tokens = T; pp.ids = ids; pp.start = 0;
        for (dir = 0; dir < 2; dir++) {
          sprintf(nm, "GQA %s D%lu rot%lu %s %s", si ? "gptj" : "neox", (unsigned long)D, (unsigned long)dims[dd][1],
                  posenc_dtype_name(dts[di]),
                  dir ? "inverse" : "forward");
          free(run_rot(nm, rope, NULL, &pp, &q, &k, (posenc_rope_direction)dir, NULL, NULL));
        }
        /* dense default strides (0) are the same tensor */
        q.zero_strides = 1; k.zero_strides = 1;
        sprintf(nm, "zero strides %s %s", si ? "gptj" : "neox", posenc_dtype_name(dts[di]));
        free(run_rot(nm, rope, NULL, &pp, &q, &k, FWD, NULL, NULL));
      }

  /* q f32 and k bf16 in one call */
  {
    rope_store rope_st; posenc_rope *rope = make_rope(&rope_st, 64, 64, NEOX, 10000.0);
    posenc_rope_positions pp = {1, 7, NULL, 16777209};
    tview q = dense_view(0, 4, 7, 64, F32), k = dense_view(0, 2, 7, 64, BF16);
    k.off = tview_end(&q, 1, 7, 64);
    free(run_rot("q f32 + k bf16", rope, NULL, &pp, &q, &k, FWD, NULL, NULL));
  }

  /* [batch, heads, seq, dim]: head_stride = seq*D, token_stride = D, batch_stride = heads*seq*D */
  for (si = 0; si < 2; si++)
    for (di = 0; di < 3; di++) {
      size_t B = 2, T = 6, H = 3, Hk = 1, D = 32;
      rope_store rope_st; posenc_rope *rope = make_rope(&rope_st, D, 32, (posenc_rope_style)si, 500000.0);
      posenc_rope_positions pp;
      tview q, k;
      q.off = 0; q.heads = H; q.hs = T * D; q.ts = D; q.bs = H * T * D; q.dt = dts[di]; q.zero_strides = 0;
      k = q; k.heads = Hk; k.hs = T * D; k.bs = Hk * T * D; k.off = tview_end(&q, B, T, D);
      make_ids(ids, B * T, 1);
      pp.batch = B; pp.tokens = T; pp.ids = ids; pp.start = 0;
      sprintf(nm, "BHSD %s %s", si ? "gptj" : "neox", posenc_dtype_name(dts[di]));
      free(run_rot(nm, rope, NULL, &pp, &q, &k, FWD, NULL, NULL));
    }

  /* positions NULL + start (prefill after a KV offset) = explicit ids start + t; decode */
  {
    size_t B = 2, T = 9, D = 64, t;
    rope_store rope_st; posenc_rope *rope = make_rope(&rope_st, D, 64, NEOX, 10000.0);
    posenc_rope_positions p1 = {2, 9, NULL, 1000}, p2 = {2, 9, NULL, 0};
    tview q = dense_view(0, 3, T, D, F32), k = dense_view(0, 1, T, D, F32);
    unsigned char *a, *b;
    size_t nb;
    uint32_t save;
    static const int32_t starts[2] = {1000, -4}; /* and a start below 0, the tokens crossing 0 */
    int si;
    k.off = tview_end(&q, B, T, D);
    p2.ids = ids;
    for (si = 0; si < 2; si++) {
      for (t = 0; t < B * T; t++) ids[t] = starts[si] + (int32_t)(t % T);
      p1.start = starts[si];
      save = lcg_state;
      a = run_rot("start", rope, NULL, &p1, &q, &k, FWD, NULL, &nb);
      lcg_state = save;
      b = run_rot("ids start+t", rope, NULL, &p2, &q, &k, FWD, NULL, NULL);
      CHECK(memcmp(a, b, nb) == 0, "start %d and explicit ids differ", (int)starts[si]);
      free(a); free(b);
    }
    {
      posenc_rope_positions pd = {2, 1, NULL, 16777215}, pn = {2, 1, NULL, -16777215}, pe = {3, 1, NULL, 0};
      tview qd = dense_view(0, 8, 1, D, BF16), kd = dense_view(0, 2, 1, D, BF16);
      int32_t di3[3] = {5, 16777215, 77};
      kd.off = tview_end(&qd, 3, 1, D);
      free(run_rot("decode start 2^24-1", rope, NULL, &pd, &qd, &kd, FWD, NULL, NULL));
      free(run_rot("decode start -(2^24-1)", rope, NULL, &pn, &qd, &kd, FWD, NULL, NULL));
      pe.ids = di3;
      free(run_rot("decode ids, batch 3", rope, NULL, &pe, &qd, &kd, FWD, NULL, NULL));
    }
    /* long prefill: on-the-fly rows come in blocks; positions cross block ends */
    {
      rope_store r512_st; posenc_rope *r512 = make_rope(&r512_st, 512, 512, GPTJ, 10000.0);
      posenc_rope_positions pl = {1, 11, NULL, 16777210};
      tview ql = dense_view(0, 2, 11, 512, F32);
      free(run_rot("d512 prefill 11 tokens", r512, NULL, &pl, &ql, NULL, FWD, NULL, NULL));
    }
  }

  /* a fused QKV buffer: [batch][tokens][(Hq + 2Hk) * D]; q and k are views into it, v untouched */
  for (di = 0; di < 3; di++) {
    size_t B = 2, T = 7, Hq = 4, Hk = 2, D = 64, row = (Hq + 2 * Hk) * D;
    rope_store rope_st; posenc_rope *rope = make_rope(&rope_st, D, 48, NEOX, 10000.0);
    posenc_rope_positions pp;
    tview q, k;
    q.off = 0; q.heads = Hq; q.hs = D; q.ts = row; q.bs = T * row; q.dt = dts[di]; q.zero_strides = 0;
    k = q; k.heads = Hk; k.off = Hq * D * posenc_dtype_size(dts[di]);
    make_ids(ids, B * T, 1);
    pp.batch = B; pp.tokens = T; pp.ids = ids; pp.start = 0;
    sprintf(nm, "fused QKV %s", posenc_dtype_name(dts[di]));
    free(run_rot(nm, rope, NULL, &pp, &q, &k, FWD, NULL, NULL));
    pp.batch = 1; pp.tokens = 1;
    sprintf(nm, "fused QKV decode %s", posenc_dtype_name(dts[di]));
    free(run_rot(nm, rope, NULL, &pp, &q, &k, FWD, NULL, NULL));
    /* k before q in the row (K first) is disjoint too */
    k.off = 0; q.off = 2 * Hk * D * posenc_dtype_size(dts[di]); q.heads = Hq;
    pp.batch = 2; pp.tokens = 7;
    sprintf(nm, "fused KQ order %s", posenc_dtype_name(dts[di]));
    free(run_rot(nm, rope, NULL, &pp, &q, &k, FWD, NULL, NULL));
  }

  /* head_stride > head_dim (gaps between heads stay untouched) */
  {
    rope_store rope_st; posenc_rope *rope = make_rope(&rope_st, 40, 40, GPTJ, 10000.0);
    posenc_rope_positions pp = {2, 3, NULL, 50};
    tview q;
    q.off = 0; q.heads = 3; q.hs = 47; q.ts = 3 * 47 + 5; q.bs = 3 * (3 * 47 + 5) + 11; q.dt = F16; q.zero_strides = 0;
    free(run_rot("head gaps f16", rope, NULL, &pp, &q, NULL, FWD, NULL, NULL));
  }
}

/* Out of place: every pair of dtypes, both styles, partial rotary, GQA with K, strided outputs with
 * gaps, a cache; in place through apply_out; a fused QKV input into separate outputs. */
static void test_rotation_out(void) {
  static const posenc_dtype dts[3] = {F32, F16, BF16};
  int32_t ids[2 * 5];
  int si, a, c;
  char nm[160];
  for (si = 0; si < 2; si++)
    for (a = 0; a < 3; a++)
      for (c = 0; c < 3; c++) {
        size_t B = 2, T = 5, D = 80;
        rope_store rope_st; posenc_rope *rope = make_rope(&rope_st, D, si ? 48 : 64, (posenc_rope_style)si, 10000.0);
        posenc_rope_positions pp;
        tview qi = dense_view(0, 4, T, D, dts[a]), ki, qo, ko;
        ki = dense_view(tview_end(&qi, B, T, D), 2, T, D, dts[c]);
        /* outputs: Q dense in the other dtype, K in a [batch][heads][tokens] "cache" with gaps */
        qo = dense_view(0, 4, T, D, dts[c]);
        ko.off = tview_end(&qo, B, T, D) + 8; ko.heads = 2; ko.dt = dts[a]; ko.zero_strides = 0;
        ko.ts = D + 3; ko.hs = T * ko.ts + 5; ko.bs = 2 * ko.hs + 7;
        make_ids(ids, B * T, 1);
        pp.batch = B; pp.tokens = T; pp.ids = ids; pp.start = 0;
        sprintf(nm, "out %s q %s->%s k %s->%s", si ? "gptj 48/80" : "neox 64/80", posenc_dtype_name(dts[a]),
                posenc_dtype_name(dts[c]), posenc_dtype_name(dts[c]), posenc_dtype_name(dts[a]));
        run_rot_out(nm, rope, NULL, &pp, &qi, &qo, &ki, &ko, c == 1 ? INV : FWD, NULL, NULL);
      }
  { /* from a cache, Q alone, decode */
    rope_store rope_st; posenc_rope *rope = make_rope(&rope_st, 128, 128, NEOX, 500000.0);
    posenc_rope_cache_view cv;
    posenc_rope_positions pp = {1, 1, NULL, 299};
    tview qi = dense_view(0, 32, 1, 128, F32), qo = dense_view(0, 32, 1, 128, BF16);
    void *cache = make_cache(rope, HALF, F32, 0, 300, &cv);
    run_rot_out("out cached decode f32->bf16", rope, &cv, &pp, &qi, &qo, NULL, NULL, FWD, NULL, NULL);
    free(cache);
  }
  { /* a fused QKV input [tokens][(Hq + 2Hk) * D] into a bf16 Q and an f16 K cache */
    size_t T = 7, Hq = 4, Hk = 2, D = 64, row = (Hq + 2 * Hk) * D;
    rope_store rope_st; posenc_rope *rope = make_rope(&rope_st, D, 64, GPTJ, 10000.0);
    posenc_rope_positions pp = {1, 7, NULL, 1000};
    tview qi, ki, qo = dense_view(0, Hq, T, D, BF16), ko;
    qi.off = 0; qi.heads = Hq; qi.hs = D; qi.ts = row; qi.bs = T * row; qi.dt = F32; qi.zero_strides = 0;
    ki = qi; ki.heads = Hk; ki.off = Hq * D * 4;
    ko = dense_view(tview_end(&qo, 1, T, D), Hk, T, D, F16);
    run_rot_out("out fused QKV f32 -> bf16 Q, f16 K", rope, NULL, &pp, &qi, &qo, &ki, &ko, FWD, NULL, NULL);
  }
}

/* Weights for a QK-norm: around 1 (Qwen3's), around 0 for Gemma's 1 + w, a few zeros and a
 * negative zero (the bias -0.0f must leave it, 1.0f make it 1). */
static void norm_weights(float *w, size_t D, int offset) {
  size_t e;
  for (e = 0; e < D; e++) w[e] = (offset ? 0.0f : 1.0f) + lcg_val() / 64.0f;
  w[D / 3] = 0.0f; w[D / 2] = -0.0f;
}

/* The normalised values against the exact x_e * w_e / sqrt(mean(x^2) + epsilon) in long double, at
 * position 0 (cos 1, sin 0: the rotation leaves them), f32 in and out, heads at scales from 1e-30
 * to 1e30, both weight conventions: within the header's 3 ulp. */
static void test_norm_accuracy(void) {
  enum { D = 128, H = 64 };
  static float x[H * D], y[H * D], w[D];
  rope_store rope_st; posenc_rope *rope = make_rope(&rope_st, D, D, NEOX, 10000.0);
  posenc_rope_positions pp = {1, 1, NULL, 0};
  posenc_rope_tensor xt = {x, F32, H, 0, 0, 0}, yt = {y, F32, H, 0, 0, 0};
  posenc_rope_norm nm;
  double worst = 0.0;
  int off;
  size_t hd, e;
  for (off = 0; off < 2; off++) {
    norm_weights(w, D, off);
    nm.weight = w; nm.epsilon = 1e-6f; nm.weight_offset = off;
    for (hd = 0; hd < H; hd++) {
      float scale = powf(10.0f, (float)((int)(hd % 13) * 5 - 30)); /* 1e-30 .. 1e30 */
      for (e = 0; e < D; e++) x[hd * D + e] = lcg_val() * scale;
    }
    CHECK(posenc_rope_apply_norm(rope, NULL, &pp, &xt, &yt, &nm, NULL, NULL, NULL) == POSENC_OK, "norm accuracy call");
    for (hd = 0; hd < H; hd++) {
      ld ss = 0.0L, rr;
      for (e = 0; e < D; e++) ss += (ld)x[hd * D + e] * (ld)x[hd * D + e];
      rr = 1.0L / ref_sqrtl(ss / D + (ld)nm.epsilon);
      for (e = 0; e < D; e++) {
        ld want = (ld)x[hd * D + e] * ((off ? 1.0L : 0.0L) + (ld)w[e]) * rr;
        float got = y[hd * D + e];
        double ulps;
        if (want == 0.0L) { CHECK(got == 0.0f, "norm accuracy: a zero became %g", (double)got); continue; }
        ulps = (double)ref_fabsl((ld)got - want) / (2.0 * tl_half_ulp_f32((double)want));
        if (ulps > worst) worst = ulps;
      }
    }
  }
  printf("  QK-norm: max error %.3f ulp against the exact normalised value (bound 3)\n", worst);
  CHECK(worst <= 3.0, "QK-norm error %.3f ulp exceeds 3", worst);
}

/* QK-norm fused with the rotation: both styles, every pair of dtypes, partial rotary (the dims
 * past it normalised too), a head_dim (76) that leaves tails at every width, Gemma's offset, Q
 * alone, K alone normalised, in place, GQA, a cache, inputs at scales far from 1. */
static void test_rotation_norm(void) {
  static const posenc_dtype dts[3] = {F32, F16, BF16};
  static float wq[POSENC_ROPE_MAX_DIM], wk[POSENC_ROPE_MAX_DIM];
  posenc_rope_norm qn, kn;
  int32_t ids[2 * 5];
  int si, a, c;
  char nm[160];
  size_t B = 2, T = 5, D = 76;
  for (si = 0; si < 2; si++)
    for (a = 0; a < 3; a++)
      for (c = 0; c < 3; c++) {
        rope_store rope_st; posenc_rope *rope = make_rope(&rope_st, D, si ? 48 : 64, (posenc_rope_style)si, 10000.0);
        posenc_rope_positions pp;
        tview qi = dense_view(0, 6, T, D, dts[a]), ki = dense_view(tview_end(&qi, B, T, D), 2, T, D, dts[c]), qo, ko;
        qo = dense_view(0, 6, T, D, dts[c]);
        ko = dense_view(tview_end(&qo, B, T, D) + 4, 2, T, D, dts[a]);
        norm_weights(wq, D, c == 2); norm_weights(wk, D, c == 2);
        qn.weight = wq; qn.epsilon = 1e-6f; qn.weight_offset = c == 2;
        kn = qn; kn.weight = wk; kn.epsilon = a == 1 ? 0.5f : 1e-5f;
        make_ids(ids, B * T, 1);
        pp.batch = B; pp.tokens = T; pp.ids = ids; pp.start = 0;
        sprintf(nm, "norm %s q %s->%s k %s->%s%s", si ? "gptj 48/76" : "neox 64/76", posenc_dtype_name(dts[a]),
                posenc_dtype_name(dts[c]), posenc_dtype_name(dts[c]), posenc_dtype_name(dts[a]), c == 2 ? " 1+w" : "");
        run_rot_out(nm, rope, NULL, &pp, &qi, &qo, &ki, &ko, FWD, &qn, a == 2 ? NULL : &kn);
        if (a == 0) { /* Q alone, in place; and K alone normalised */
          sprintf(nm, "norm %s in place %s", si ? "gptj" : "neox", posenc_dtype_name(dts[c]));
          qo = qi; qo.dt = qi.dt = dts[c];
          run_rot_out(nm, rope, NULL, &pp, &qi, &qi, NULL, NULL, FWD, &qn, NULL);
          run_rot_out(nm, rope, NULL, &pp, &qi, &qi, &ki, &ki, FWD, NULL, &kn);
        }
      }
  { /* decode from a cache, 40 heads (groups of 16), head_dim 128, and one of 8 */
    rope_store rope_st; posenc_rope *rope = make_rope(&rope_st, 128, 128, NEOX, 1000000.0);
    posenc_rope_cache_view cv;
    posenc_rope_positions pp = {1, 1, NULL, 299};
    tview qi = dense_view(0, 40, 1, 128, BF16), qo = dense_view(0, 40, 1, 128, BF16);
    void *cache = make_cache(rope, HALF, F32, 0, 300, &cv);
    norm_weights(wq, 128, 0);
    qn.weight = wq; qn.epsilon = 1e-6f; qn.weight_offset = 0;
    run_rot_out("norm cached decode 40 heads bf16", rope, &cv, &pp, &qi, &qo, NULL, NULL, FWD, &qn, NULL);
    free(cache);
    /* rotary 256: a head's 128 pairs rotated 64 at a time (POSENC_I_ROPE_PAIRS), each range's
     * cos/sin prepared after the head's scale */
    rope = make_rope(&rope_st, 256, 256, GPTJ, 10000.0);
    cache = make_cache(rope, HALF, F32, 0, 300, &cv);
    qi = dense_view(0, 3, 1, 256, F16); qo = dense_view(0, 3, 1, 256, F32);
    norm_weights(wq, 256, 1);
    qn.weight_offset = 1;
    run_rot_out("norm cached rotary 256 f16->f32 1+w", rope, &cv, &pp, &qi, &qo, NULL, NULL, FWD, &qn, NULL);
    free(cache);
    qn.weight_offset = 0;
    rope = make_rope(&rope_st, 8, 8, GPTJ, 10000.0);
    qi = dense_view(0, 3, 1, 8, F32);
    run_rot_out("norm head_dim 8", rope, NULL, &pp, &qi, &qi, NULL, NULL, FWD, &qn, NULL);
  }
}

/* ============================================================================================
 * Rotate-and-store into a KV cache
 * ========================================================================================== */
/* Element (slot, head, e) of a cache array, by the rules of posenc_kv_cache. */
static size_t kv_elem(const posenc_kv_cache *kv, size_t D, size_t slot, size_t hd, size_t e) {
  size_t hs = kv->head_stride ? kv->head_stride : D, ss = kv->slot_stride ? kv->slot_stride : kv->heads * hs;
  size_t bls = kv->block_stride ? kv->block_stride : (kv->block_size - 1) * ss + (kv->heads - 1) * hs + D;
  size_t at = kv->block_size ? slot / kv->block_size * bls + slot % kv->block_size * ss : slot * ss;
  return at + hd * hs + e;
}

/* posenc_rope_store_kv with dense f32 Q, K, V [batch][tokens][heads][D] against: Q rotated in
 * place by posenc_rope_apply; K rotated by posenc_rope_apply_out into the cache dtype; V
 * converted; each token's K and V at its slot, every other element of the arrays untouched. With
 * norms (qn, kn; either NULL): posenc_rope_store_kv_norm, against posenc_rope_apply_norm. */
static void run_store_kv(const char *name, const posenc_rope *rope, const posenc_rope_positions *pp, size_t hq,
                         const posenc_kv_cache *layout, size_t array_elems, const int64_t *slots,
                         const posenc_rope_norm *qn, const posenc_rope_norm *kn) {
  const size_t D = rope->config.head_dim, B = pp->batch, T = pp->tokens, H = layout->heads;
  const size_t es = posenc_dtype_size(layout->dtype), nq = B * T * hq * D, nk = B * T * H * D;
  float *q = (float *)malloc(nq * 4), *qref = (float *)malloc(nq * 4), *k = (float *)malloc(nk * 4),
        *v = (float *)malloc(nk * 4);
  unsigned char *kc = (unsigned char *)malloc(array_elems * es), *vc = (unsigned char *)malloc(array_elems * es);
  unsigned char *kexp = (unsigned char *)malloc(nk * es), *written = (unsigned char *)calloc(array_elems, 1);
  posenc_rope_tensor qt = {NULL, F32, 0, 0, 0, 0}, kt, vt, ke;
  posenc_kv_cache kv = *layout;
  size_t i, b, t, hd, e;
  int bad = 0;
  posenc_status st;
  for (i = 0; i < nq; i++) q[i] = qref[i] = lcg_val();
  for (i = 0; i < nk; i++) { k[i] = lcg_val(); v[i] = lcg_val(); }
  memset(kc, CANARY, array_elems * es); memset(vc, CANARY, array_elems * es);
  qt.data = q; qt.heads = hq;
  kt = qt; kt.data = k; kt.heads = H;
  vt = kt; vt.data = v;
  kv.k = kc; kv.v = vc;
  if (qn || kn) st = posenc_rope_store_kv_norm(rope, NULL, pp, &qt, qn, &kt, kn, &vt, &kv, slots);
  else st = posenc_rope_store_kv(rope, NULL, pp, &qt, &kt, &vt, &kv, slots);
  CHECK(st == POSENC_OK, "%s: store_kv %s", name, posenc_strerror(st));
  qt.data = qref;
  ke = kt; ke.data = kexp; ke.dtype = layout->dtype;
  CHECK(posenc_rope_apply_norm(rope, NULL, pp, &qt, &qt, qn, NULL, NULL, NULL) == POSENC_OK &&
        posenc_rope_apply_norm(rope, NULL, pp, &kt, &ke, kn, NULL, NULL, NULL) == POSENC_OK, "%s: references", name);
  CHECK(memcmp(q, qref, nq * 4) == 0, "%s [%s]: Q differs from the in-place rotation", name,
        posenc_isa_name(posenc_isa_active()));
  for (b = 0; b < B; b++)
    for (t = 0; t < T; t++) {
      int64_t slot = slots ? slots[b * T + t] : (int64_t)(pp->ids ? pp->ids[b * T + t] : pp->start + (int32_t)t);
      if (slot < 0) continue;
      for (hd = 0; hd < H; hd++)
        for (e = 0; e < D; e++) {
          size_t at = kv_elem(&kv, D, (size_t)slot, hd, e), src = ((b * T + t) * H + hd) * D + e;
          unsigned char vexp[4];
          tl_store(vexp, layout->dtype, v[src]);
          if ((memcmp(kc + at * es, kexp + src * es, es) != 0 || memcmp(vc + at * es, vexp, es) != 0) && bad++ < 3)
            CHECK(0, "%s [%s]: token b%lu t%lu head %lu elem %lu: K or V in its slot differs", name,
                  posenc_isa_name(posenc_isa_active()), (unsigned long)b, (unsigned long)t, (unsigned long)hd,
                  (unsigned long)e);
          written[at] = 1;
        }
    }
  for (i = 0; i < array_elems; i++)
    if (!written[i] && (!tl_all_canary(kc + i * es, es) || !tl_all_canary(vc + i * es, es))) {
      CHECK(0, "%s: element %lu of a cache array written, not a token's slot", name, (unsigned long)i);
      break;
    }
  CHECK(bad == 0, "%s: %d elements differ", name, bad);
  free(q); free(qref); free(k); free(v); free(kc); free(vc); free(kexp); free(written);
}

static void test_store_kv(void) {
  char nm[128];
  int di;
  for (di = 0; di < 3; di++) {
    static const posenc_dtype dts[3] = {F16, BF16, F32};
    posenc_kv_cache kv;
    memset(&kv, 0, sizeof kv);
    { /* llama.cpp-like: one contiguous run of slots, slot = position, prefill after an offset */
      rope_store rope_st; posenc_rope *rope = make_rope(&rope_st, 80, 64, NEOX, 10000.0);
      posenc_rope_positions pp = {1, 9, NULL, 100};
      kv.dtype = dts[di]; kv.heads = 2; kv.n_slots = 128;
      sprintf(nm, "store_kv contiguous %s", posenc_dtype_name(dts[di]));
      run_store_kv(nm, rope, &pp, 4, &kv, 128 * 2 * 80, NULL, NULL, NULL);
    }
    { /* vLLM's paged flash layout [block][slot][head][dim], two sequences, a padding token */
      rope_store rope_st; posenc_rope *rope = make_rope(&rope_st, 64, 64, GPTJ, 500000.0);
      static const int32_t ids[2 * 3] = {17, 18, 19, 5, 6, 7};
      static const int64_t slots[2 * 3] = {2 * 16 + 1, 2 * 16 + 2, 2 * 16 + 3, 3 * 16 + 5, -1, 0 * 16 + 7};
      posenc_rope_positions pp = {2, 3, ids, 0};
      kv.dtype = dts[di]; kv.heads = 2; kv.n_slots = 64; kv.block_size = 16;
      sprintf(nm, "store_kv paged flash %s", posenc_dtype_name(dts[di]));
      run_store_kv(nm, rope, &pp, 8, &kv, 64 * 2 * 64, slots, NULL, NULL);
      { /* Qwen3's QK-norm on both, and on K alone with Gemma's 1 + w */
        static float wq[64], wk[64];
        posenc_rope_norm qn, kn;
        norm_weights(wq, 64, 0); norm_weights(wk, 64, 1);
        qn.weight = wq; qn.epsilon = 1e-6f; qn.weight_offset = 0;
        kn.weight = wk; kn.epsilon = 1e-6f; kn.weight_offset = 1;
        sprintf(nm, "store_kv_norm paged flash %s", posenc_dtype_name(dts[di]));
        run_store_kv(nm, rope, &pp, 8, &kv, 64 * 2 * 64, slots, &qn, &qn);
        run_store_kv(nm, rope, &pp, 8, &kv, 64 * 2 * 64, slots, NULL, &kn);
      }
      /* [block][head][slot][dim] */
      kv.head_stride = 16 * 64; kv.slot_stride = 64;
      sprintf(nm, "store_kv paged head-major %s", posenc_dtype_name(dts[di]));
      run_store_kv(nm, rope, &pp, 8, &kv, 64 * 2 * 64, slots, NULL, NULL);
    }
  }
}

/* Outputs of 4 MiB and more (POSENC_STREAM_MIN_BYTES) are written with non-temporal stores where
 * the rotation's vector stores write whole heads (rotary_dim = head_dim) and are 16-byte aligned:
 * the same bits as a K rotated in place and then rounded to the output's dtype, and nothing
 * outside the written rows. The outputs start at 16 bytes past
 * a 64-byte boundary (aligned for 16-byte pieces, not for a 256- or 512-bit store) or at 8 (plain
 * stores). */
static void run_streaming(const char *name, posenc_rope_style style, size_t rotary, posenc_dtype odt, size_t T,
                          size_t misalign, int to_cache) {
  enum { H = 8, D = 128, LEAD = 3 }; /* LEAD slots (rows) before the written ones */
  const size_t n = T * H * D, es = posenc_dtype_size(odt), total = (LEAD + T + 1) * H * D * es;
  rope_store rope_st; posenc_rope *rope = make_rope(&rope_st, D, rotary, style, 10000.0);
  posenc_rope_positions pp = {1, 0, NULL, LEAD};
  float *k = (float *)malloc(n * 4);
  unsigned char *raw = (unsigned char *)malloc(total + 64 + misalign), *out, want[4];
  posenc_rope_tensor kt = {NULL, F32, H, 0, 0, 0}, ot = {NULL, F32, H, 0, 0, 0};
  posenc_kv_cache kv;
  posenc_status st;
  size_t i, bad = 0;
  pp.tokens = T;
  if (!k || !raw) { /* a board's heap (the Cortex-M4 firmware has 16 MiB, and no streaming backend) */
    printf("%s: not run (no %lu MiB to allocate)\n", name, (unsigned long)((n * 4 + total) >> 20));
    free(k); free(raw);
    return;
  }
  out = raw + (64 - (uintptr_t)raw % 64) % 64 + misalign;
  for (i = 0; i < n; i++) k[i] = lcg_val();
  memset(out, CANARY, total);
  kt.data = k;
  if (to_cache) {
    memset(&kv, 0, sizeof kv);
    kv.k = out; kv.dtype = odt; kv.heads = H; kv.n_slots = LEAD + T + 1;
    st = posenc_rope_store_kv(rope, NULL, &pp, NULL, &kt, NULL, &kv, NULL);
  } else {
    ot.data = out + LEAD * H * D * es; ot.dtype = odt;
    st = posenc_rope_apply_out(rope, NULL, &pp, &kt, &ot, NULL, NULL, POSENC_ROPE_FORWARD);
  }
  /* the reference: K (only read above) rotated in place, then rounded */
  CHECK(st == POSENC_OK && posenc_rope_apply(rope, NULL, &pp, &kt, NULL, POSENC_ROPE_FORWARD) == POSENC_OK,
        "%s: %s", name, posenc_strerror(st));
  for (i = 0; i < n; i++) {
    tl_store(want, odt, k[i]);
    if (memcmp(out + (LEAD * H * D + i) * es, want, es) != 0 && bad++ == 0)
      CHECK(0, "%s [%s]: element %lu differs from the rotation in place, rounded", name,
            posenc_isa_name(posenc_isa_active()), (unsigned long)i);
  }
  CHECK(tl_all_canary(out, LEAD * H * D * es) && tl_all_canary(out + (LEAD + T) * H * D * es, H * D * es),
        "%s [%s]: written outside its rows", name, posenc_isa_name(posenc_isa_active()));
  free(k); free(raw);
}

static void test_streaming(void) {
  run_streaming("store_kv streaming neox f16", NEOX, 128, F16, 2048, 16, 1);
  run_streaming("store_kv unaligned neox bf16", NEOX, 128, BF16, 2048, 8, 1);
  run_streaming("apply_out streaming gptj f32", GPTJ, 128, F32, 1024, 16, 0);
  run_streaming("store_kv rotary 64 of 128 f16 (ordinary stores)", NEOX, 64, F16, 2048, 16, 1);
}

/* Calls of 4 MiB and more (POSENC_PREFETCH_MIN_BYTES, at its default): the rotation asks for the
 * next token's lines while it rotates a token's (posenc_i_pass_job). That must not change a bit: a
 * prefill of T tokens, in place, with or without a QK-norm, equals T calls of one token each,
 * which never prefetch (tests/test_prefetch.c checks where the prefetches go). */
static void run_large_input(const char *name, posenc_rope_style style, posenc_dtype dt, size_t T, int normed) {
  enum { H = 8, D = 128 };
  const size_t per_token = (size_t)H * D, es = posenc_dtype_size(dt), n = T * per_token;
  rope_store rope_st; posenc_rope *rope = make_rope(&rope_st, D, D, style, 10000.0);
  unsigned char *x = (unsigned char *)malloc(n * es), *y = (unsigned char *)malloc(n * es);
  float w[D];
  posenc_rope_norm norm = {NULL, 1e-6f, 0};
  size_t i, t, bad = 0;
  if (!x || !y) {
    printf("%s: not run (no %lu MiB to allocate)\n", name, (unsigned long)((2 * n * es) >> 20));
    free(x); free(y);
    return;
  }
  for (i = 0; i < D; i++) w[i] = 0.5f + (float)i / 64.0f;
  norm.weight = w;
  for (i = 0; i < n; i++) tl_store(x + i * es, dt, lcg_val());
  memcpy(y, x, n * es);
  {
    posenc_rope_positions pp = {1, 0, NULL, 7};
    posenc_rope_tensor xt = {NULL, F32, H, 0, 0, 0};
    posenc_status st;
    pp.tokens = T; xt.data = x; xt.dtype = dt;
    st = normed ? posenc_rope_apply_norm(rope, NULL, &pp, &xt, &xt, &norm, NULL, NULL, NULL)
                : posenc_rope_apply(rope, NULL, &pp, &xt, NULL, POSENC_ROPE_FORWARD);
    CHECK(st == POSENC_OK, "%s: %s", name, posenc_strerror(st));
  }
  for (t = 0; t < T; t++) {
    posenc_rope_positions p1 = {1, 1, NULL, 0};
    posenc_rope_tensor yt = {NULL, F32, H, 0, 0, 0};
    p1.start = (int32_t)(7 + t); yt.data = y + t * per_token * es; yt.dtype = dt;
    if (normed) posenc_rope_apply_norm(rope, NULL, &p1, &yt, &yt, &norm, NULL, NULL, NULL);
    else posenc_rope_apply(rope, NULL, &p1, &yt, NULL, POSENC_ROPE_FORWARD);
  }
  for (i = 0; i < n && !bad; i++) bad = memcmp(x + i * es, y + i * es, es) != 0;
  CHECK(!bad, "%s [%s]: element %lu differs from one-token calls", name, posenc_isa_name(posenc_isa_active()),
        (unsigned long)(i - 1));
  free(x); free(y);
}

static void test_large_input(void) {
  run_large_input("large input neox f32", NEOX, F32, 1024, 0);
  run_large_input("large input gptj f32", GPTJ, F32, 1024, 0);
  run_large_input("large input neox bf16", NEOX, BF16, 2048, 0);
  run_large_input("large input neox f32, QK-norm", NEOX, F32, 1024, 1);
}

/* store_kv's errors: the status, and nothing written anywhere. */
static void test_store_kv_errors(void) {
  rope_store rope_st; posenc_rope *rope = make_rope(&rope_st, 32, 32, NEOX, 10000.0);
  posenc_rope_positions pp = {1, 2, NULL, 3}, p2;
  float q[2 * 2 * 32], k[2 * 32], v[2 * 32], snapq[2 * 2 * 32];
  uint16_t kc[8 * 32], vc[8 * 32], snapc[8 * 32];
  int64_t slots[2] = {0, 7};
  posenc_rope_tensor qt = {q, F32, 2, 0, 0, 0}, kt = {k, F32, 1, 0, 0, 0}, vt = {v, F32, 1, 0, 0, 0}, t2;
  posenc_kv_cache kv, c2;
  size_t i;
  for (i = 0; i < 2 * 2 * 32; i++) q[i] = snapq[i] = lcg_val();
  for (i = 0; i < 2 * 32; i++) { k[i] = lcg_val(); v[i] = lcg_val(); }
  memset(kc, CANARY, sizeof kc); memset(vc, CANARY, sizeof vc); memset(snapc, CANARY, sizeof snapc);
  memset(&kv, 0, sizeof kv);
  kv.k = kc; kv.v = vc; kv.dtype = F16; kv.heads = 1; kv.n_slots = 8;
#define KV_BAD(call, code) do { posenc_status s_ = (call); \
    CHECK(s_ == (code), "%s -> %s, want %s", #call, posenc_strerror(s_), posenc_strerror(code)); \
    CHECK(memcmp(q, snapq, sizeof q) == 0 && memcmp(kc, snapc, sizeof kc) == 0 && memcmp(vc, snapc, sizeof vc) == 0, \
          "%s wrote", #call); } while (0)
  KV_BAD(posenc_rope_store_kv(rope, NULL, &pp, &qt, &kt, &vt, NULL, slots), POSENC_ERR_NULL);
  KV_BAD(posenc_rope_store_kv(rope, NULL, &pp, &qt, NULL, &vt, &kv, slots), POSENC_ERR_NULL);
  c2 = kv; c2.v = NULL; KV_BAD(posenc_rope_store_kv(rope, NULL, &pp, &qt, &kt, &vt, &c2, slots), POSENC_ERR_NULL);
  KV_BAD(posenc_rope_store_kv(rope, NULL, &pp, &qt, &kt, NULL, &kv, slots), POSENC_ERR_NULL);
  c2 = kv; c2.k = NULL; KV_BAD(posenc_rope_store_kv(rope, NULL, &pp, &qt, &kt, &vt, &c2, slots), POSENC_ERR_NULL);
  c2 = kv; c2.heads = 2; KV_BAD(posenc_rope_store_kv(rope, NULL, &pp, &qt, &kt, &vt, &c2, slots), POSENC_ERR_SIZE);
  c2 = kv; c2.n_slots = 0; KV_BAD(posenc_rope_store_kv(rope, NULL, &pp, &qt, &kt, &vt, &c2, slots), POSENC_ERR_SIZE);
  c2 = kv; c2.block_size = 3; KV_BAD(posenc_rope_store_kv(rope, NULL, &pp, &qt, &kt, &vt, &c2, slots), POSENC_ERR_SIZE);
  c2 = kv; c2.dtype = (posenc_dtype)3; KV_BAD(posenc_rope_store_kv(rope, NULL, &pp, &qt, &kt, &vt, &c2, slots), POSENC_ERR_DTYPE);
  c2 = kv; c2.slot_stride = 16; KV_BAD(posenc_rope_store_kv(rope, NULL, &pp, &qt, &kt, &vt, &c2, slots), POSENC_ERR_STRIDE);
  slots[1] = 8; KV_BAD(posenc_rope_store_kv(rope, NULL, &pp, &qt, &kt, &vt, &kv, slots), POSENC_ERR_POSITION);
  slots[1] = 7;
  p2 = pp; p2.start = 7; KV_BAD(posenc_rope_store_kv(rope, NULL, &p2, &qt, &kt, &vt, &kv, NULL), POSENC_ERR_POSITION);
  p2 = pp; p2.start = -1; KV_BAD(posenc_rope_store_kv(rope, NULL, &p2, &qt, &kt, &vt, &kv, NULL), POSENC_ERR_POSITION);
  p2 = pp; p2.batch = 2; p2.tokens = 1; KV_BAD(posenc_rope_store_kv(rope, NULL, &p2, &qt, &kt, &vt, &kv, NULL), POSENC_ERR_PARAM);
  c2 = kv; c2.v = kc + 4; KV_BAD(posenc_rope_store_kv(rope, NULL, &pp, &qt, &kt, &vt, &c2, slots), POSENC_ERR_ALIAS);
  c2 = kv; c2.k = (uint16_t *)(void *)k; c2.n_slots = 1;
  t2 = kt; t2.heads = 1; pp.tokens = 1;
  KV_BAD(posenc_rope_store_kv(rope, NULL, &pp, &qt, &t2, &vt, &c2, slots), POSENC_ERR_ALIAS); /* K's array over K */
  c2 = kv; c2.k = (uint16_t *)(void *)q; c2.n_slots = 2;
  KV_BAD(posenc_rope_store_kv(rope, NULL, &pp, &qt, &kt, &vt, &c2, slots), POSENC_ERR_ALIAS); /* over Q */
  pp.tokens = 2;
  KV_BAD(posenc_rope_store_kv(rope, NULL, &pp, &qt, &kt, &vt, &kv, (const int64_t *)(void *)(kc + 64)), POSENC_ERR_ALIAS);
  /* slots inside Q, which is rotated in place before K's slot is read: refused, never a slot
   * that Q's rotation rewrote past n_slots */
  memcpy(q, slots, sizeof slots); memcpy(snapq, q, sizeof q);
  KV_BAD(posenc_rope_store_kv(rope, NULL, &pp, &qt, &kt, &vt, &kv, (const int64_t *)(void *)q), POSENC_ERR_ALIAS);
#undef KV_BAD
  /* a valid call writes, and only the two slots */
  CHECK(posenc_rope_store_kv(rope, NULL, &pp, &qt, &kt, &vt, &kv, slots) == POSENC_OK &&
        memcmp(kc + 32, snapc + 32, 6 * 32 * 2) == 0 && memcmp(kc, snapc, 32 * 2) != 0, "store_kv writes its slots only");
}

/* The norms' errors, for apply_norm and store_kv_norm: the status, and nothing written. */
static void test_norm_errors(void) {
  rope_store rope_st; posenc_rope *rope = make_rope(&rope_st, 32, 32, NEOX, 10000.0);
  posenc_rope_positions pp = {1, 2, NULL, 3};
  float q[2 * 2 * 32], k[2 * 32], o[2 * 2 * 32], w[32], snapq[2 * 2 * 32], snapo[2 * 2 * 32];
  uint16_t kc[8 * 32], snapc[8 * 32];
  posenc_rope_tensor qt = {q, F32, 2, 0, 0, 0}, kt = {k, F32, 1, 0, 0, 0}, ot = {o, F32, 2, 0, 0, 0};
  posenc_rope_norm good, n2;
  posenc_kv_cache kv;
  size_t i;
  for (i = 0; i < 2 * 2 * 32; i++) { q[i] = snapq[i] = lcg_val(); o[i] = snapo[i] = 7.0f; }
  for (i = 0; i < 2 * 32; i++) k[i] = lcg_val();
  for (i = 0; i < 32; i++) w[i] = 1.0f;
  memset(kc, CANARY, sizeof kc); memset(snapc, CANARY, sizeof snapc);
  memset(&kv, 0, sizeof kv);
  kv.k = kc; kv.dtype = F16; kv.heads = 1; kv.n_slots = 8;
  good.weight = w; good.epsilon = 1e-6f; good.weight_offset = 0;
#define NORM_BAD(norm, code) do { posenc_status s1_ = posenc_rope_apply_norm(rope, NULL, &pp, &qt, &ot, (norm), NULL, NULL, NULL); \
    posenc_status s2_ = posenc_rope_store_kv_norm(rope, NULL, &pp, &qt, (norm), &kt, NULL, NULL, &kv, NULL); \
    CHECK(s1_ == (code) && s2_ == (code), "%s -> %s / %s, want %s", #norm, posenc_strerror(s1_), posenc_strerror(s2_), \
          posenc_strerror(code)); \
    CHECK(memcmp(q, snapq, sizeof q) == 0 && memcmp(o, snapo, sizeof o) == 0 && memcmp(kc, snapc, sizeof kc) == 0, \
          "%s: a refused norm wrote", #norm); } while (0)
  n2 = good; n2.weight = NULL; NORM_BAD(&n2, POSENC_ERR_NULL);
  n2 = good; n2.epsilon = 0.0f; NORM_BAD(&n2, POSENC_ERR_PARAM);
  n2 = good; n2.epsilon = -1e-6f; NORM_BAD(&n2, POSENC_ERR_PARAM);
  n2 = good; n2.epsilon = (float)INFINITY; NORM_BAD(&n2, POSENC_ERR_PARAM);
  n2 = good; n2.epsilon = (float)NAN; NORM_BAD(&n2, POSENC_ERR_PARAM);
  n2 = good; n2.weight_offset = 2; NORM_BAD(&n2, POSENC_ERR_PARAM);
  n2 = good; n2.weight_offset = -1; NORM_BAD(&n2, POSENC_ERR_PARAM);
  n2 = good; n2.weight = o + 8; /* a weight the output overwrites; the cache array */
  CHECK(posenc_rope_apply_norm(rope, NULL, &pp, &qt, &ot, &n2, NULL, NULL, NULL) == POSENC_ERR_ALIAS &&
        memcmp(o, snapo, sizeof o) == 0, "a weight inside the output: ALIAS, nothing written");
  n2.weight = (const float *)(const void *)(kc + 64);
  CHECK(posenc_rope_store_kv_norm(rope, NULL, &pp, &qt, NULL, &kt, &n2, NULL, &kv, NULL) == POSENC_ERR_ALIAS &&
        memcmp(q, snapq, sizeof q) == 0 && memcmp(kc, snapc, sizeof kc) == 0,
        "K's weight inside the cache array: ALIAS, nothing written");
  n2 = good; n2.weight = q + 8; /* in place: Q's weight inside Q */
  CHECK(posenc_rope_apply_norm(rope, NULL, &pp, &qt, &qt, &n2, NULL, NULL, NULL) == POSENC_ERR_ALIAS &&
        memcmp(q, snapq, sizeof q) == 0, "a weight inside Q rotated in place: ALIAS, nothing written");
  CHECK(posenc_rope_apply_norm(rope, NULL, &pp, &qt, &ot, NULL, NULL, NULL, &good) == POSENC_ERR_NULL &&
        posenc_rope_store_kv_norm(rope, NULL, &pp, NULL, &good, &kt, NULL, NULL, &kv, NULL) == POSENC_ERR_NULL &&
        memcmp(o, snapo, sizeof o) == 0 && memcmp(kc, snapc, sizeof kc) == 0, "a norm for a tensor not given: NULL");
#undef NORM_BAD
  /* without norms, the fused calls are the plain ones */
  CHECK(posenc_rope_apply_norm(rope, NULL, &pp, &qt, &ot, NULL, NULL, NULL, NULL) == POSENC_OK &&
        posenc_rope_apply(rope, NULL, &pp, &qt, NULL, FWD) == POSENC_OK && memcmp(q, o, sizeof q) == 0,
        "apply_norm without a norm = apply");
}

/* apply_out's own errors, nothing written; in place through it equals posenc_rope_apply. */
static void test_rotation_out_errors(void) {
  rope_store rope_st; posenc_rope *rope = make_rope(&rope_st, 64, 64, NEOX, 10000.0);
  posenc_rope_positions pp = {1, 3, NULL, 5};
  float qb[3 * 2 * 64], kb[3 * 64], qo[3 * 2 * 64], ko[3 * 64], snap[3 * 2 * 64], ref[3 * 2 * 64];
  posenc_rope_tensor qi = {qb, F32, 2, 0, 0, 0}, ki = {kb, F32, 1, 0, 0, 0}, qot = {qo, F32, 2, 0, 0, 0},
                     kot = {ko, F32, 1, 0, 0, 0}, t2;
  size_t i;
  for (i = 0; i < 3 * 2 * 64; i++) qb[i] = lcg_val();
  for (i = 0; i < 3 * 64; i++) kb[i] = lcg_val();
  memset(qo, 0, sizeof qo); memset(ko, 0, sizeof ko);
  memcpy(snap, qo, sizeof qo);
#define OUT_BAD(call, code) do { posenc_status s_ = (call); \
    CHECK(s_ == (code), "%s -> %s, want %s", #call, posenc_strerror(s_), posenc_strerror(code)); \
    CHECK(memcmp(qo, snap, sizeof qo) == 0 && memcmp(ko, snap, sizeof ko) == 0, "%s wrote", #call); } while (0)
  OUT_BAD(posenc_rope_apply_out(rope, NULL, &pp, &qi, NULL, NULL, NULL, FWD), POSENC_ERR_NULL);
  OUT_BAD(posenc_rope_apply_out(rope, NULL, &pp, NULL, &qot, NULL, NULL, FWD), POSENC_ERR_NULL);
  OUT_BAD(posenc_rope_apply_out(rope, NULL, &pp, &qi, &qot, &ki, NULL, FWD), POSENC_ERR_NULL);
  OUT_BAD(posenc_rope_apply_out(rope, NULL, &pp, &qi, &qot, NULL, &kot, FWD), POSENC_ERR_NULL);
  t2 = qot; t2.heads = 1; OUT_BAD(posenc_rope_apply_out(rope, NULL, &pp, &qi, &t2, NULL, NULL, FWD), POSENC_ERR_SIZE);
  t2 = qot; t2.dtype = (posenc_dtype)3; OUT_BAD(posenc_rope_apply_out(rope, NULL, &pp, &qi, &t2, NULL, NULL, FWD), POSENC_ERR_DTYPE);
  /* an output overlapping its input without being it: shifted by one element, or other strides */
  t2 = qi; t2.data = qb + 1; t2.heads = 1;
  {
    posenc_rope_tensor q1 = qi;
    q1.heads = 1;
    for (i = 0; i < 3 * 2 * 64; i++) ref[i] = qb[i];
    CHECK(posenc_rope_apply_out(rope, NULL, &pp, &q1, &t2, NULL, NULL, FWD) == POSENC_ERR_ALIAS &&
          memcmp(qb, ref, sizeof qb) == 0, "shifted output: ALIAS, input unchanged");
    t2 = qi; t2.dtype = BF16;
    CHECK(posenc_rope_apply_out(rope, NULL, &pp, &qi, &t2, NULL, NULL, FWD) == POSENC_ERR_ALIAS &&
          memcmp(qb, ref, sizeof qb) == 0, "same memory in another dtype: ALIAS, input unchanged");
  }
  /* Q's output over K's input, K's output over Q's input */
  t2 = qot; t2.data = kb; t2.heads = 1; ki.heads = 1;
  {
    posenc_rope_tensor q1 = qi;
    q1.heads = 1;
    OUT_BAD(posenc_rope_apply_out(rope, NULL, &pp, &q1, &t2, &ki, &kot, FWD), POSENC_ERR_ALIAS);
    t2 = kot; t2.data = qb;
    OUT_BAD(posenc_rope_apply_out(rope, NULL, &pp, &qi, &qot, &ki, &t2, FWD), POSENC_ERR_ALIAS);
  }
#undef OUT_BAD
  /* in place through apply_out (a copy of the struct) = posenc_rope_apply */
  memcpy(ref, qb, sizeof qb);
  {
    posenc_rope_tensor same = qi, r = {ref, F32, 2, 0, 0, 0};
    CHECK(posenc_rope_apply_out(rope, NULL, &pp, &qi, &same, NULL, NULL, FWD) == POSENC_OK &&
          posenc_rope_apply(rope, NULL, &pp, &r, NULL, FWD) == POSENC_OK && memcmp(qb, ref, sizeof qb) == 0,
          "apply_out in place = apply");
  }
}

/* Cached rotation (every layout, dtype and stride) against the reference reading the same cache;
 * f32 caches give the same bits as on the fly. */
static void test_rotation_cached(void) {
  int si, lay, cdt, xdt;
  int32_t ids[2 * 6];
  char nm[128];
  for (si = 0; si < 2; si++) {
    posenc_rope_config c = cfg_of(72, 10000.0, POSENC_ROPE_SCALING_YARN, 8.0, 64);
    rope_store rope_st; posenc_rope *rope = &rope_st.rope;
    size_t B = 2, T = 6, D = 72, i;
    c.rotary_dim = 58; c.style = (posenc_rope_style)si;
    CHECK(posenc_rope_init(rope, sizeof rope_st, &c) == POSENC_OK, "yarn init");
    for (i = 0; i < B * T; i++) ids[i] = (int32_t)(lcg() % 300u);
    ids[3] = 299; ids[4] = 0;
    for (xdt = 0; xdt < 3; xdt++) {
      posenc_rope_positions pp = {2, 6, NULL, 0};
      tview q = dense_view(0, 3, T, D, (posenc_dtype)xdt), k;
      unsigned char *fly, *cached;
      size_t nb;
      uint32_t save;
      k = dense_view(tview_end(&q, B, T, D) + 8, 2, T, D, (posenc_dtype)xdt);
      pp.ids = ids;
      save = lcg_state;
      fly = run_rot("on the fly", rope, NULL, &pp, &q, &k, FWD, NULL, &nb);
      for (lay = 0; lay < 3; lay++)
        for (cdt = 0; cdt < 3; cdt++) {
          posenc_rope_cache_view cv;
          void *data = make_cache(rope, (posenc_rope_cache_layout)lay, (posenc_dtype)cdt, (size_t)(lay + cdt) % 3, 300, &cv);
          int dir;
          for (dir = 0; dir < 2; dir++) {
            sprintf(nm, "cached %s layout %d cache %s x %s %s", si ? "gptj" : "neox", lay, posenc_dtype_name((posenc_dtype)cdt),
                    posenc_dtype_name((posenc_dtype)xdt), dir ? "inv" : "fwd");
            lcg_state = save;
            cached = run_rot(nm, rope, &cv, &pp, &q, &k, (posenc_rope_direction)dir, NULL, NULL);
            if (cdt == F32 && dir == FWD)
              CHECK(memcmp(cached, fly, nb) == 0, "%s: f32 cache differs from on the fly", nm);
            free(cached);
          }
          /* positions NULL + start with a cache */
          {
            posenc_rope_positions ps = {2, 6, NULL, 294};
            lcg_state = save;
            free(run_rot("cached start 294", rope, &cv, &ps, &q, &k, FWD, NULL, NULL));
          }
          free(data);
        }
      free(fly);
    }
  }
}

/* M-RoPE: Qwen2-VL sections {16, 24, 24} and Qwen3-VL interleaved {24, 20, 20}, d = 128; on the
 * fly, and from caches in each layout (f32 interleaved, bf16 half, f16 full); with bf16 tensors,
 * in HF compatibility mode. */
static void test_mrope(void) {
  static const uint32_t secs[2][3] = {{16, 24, 24}, {24, 20, 20}};
  static const posenc_rope_cache_layout cache_layout[4] = {HALF, INTL, HALF, FULL};
  static const posenc_dtype cache_dtype[4] = {F32, F32, BF16, F16};
  int m, si, dt, withc, eq;
  char nm[160];
  for (m = 0; m < 2; m++)
    for (si = 0; si < 2; si++)
      for (dt = 0; dt < 3; dt++)
        for (withc = 0; withc < 4; withc++) {
          posenc_rope_config c = posenc_rope_default(128);
          rope_store rope_st, plain_st;
          posenc_rope *rope = &rope_st.rope, *plain = &plain_st.rope;
          size_t B = 2, T = 5, i;
          int32_t ids[3 * 2 * 5];
          posenc_rope_positions pp = {2, 5, NULL, 0};
          tview q = dense_view(0, 4, T, 128, (posenc_dtype)dt), k;
          posenc_rope_cache_view cv;
          void *data = NULL;
          c.base = m ? 5000000.0 : 1e6; c.style = (posenc_rope_style)si;
          c.hf_compat = dt == 2; /* HF's float32 rows too: made a section's chunks at a time on the fly */
          c.mrope = m ? POSENC_ROPE_MROPE_INTERLEAVED : POSENC_ROPE_MROPE_SECTIONS;
          memcpy(c.mrope_section, secs[m], sizeof secs[m]);
          CHECK(posenc_rope_init(rope, sizeof rope_st, &c) == POSENC_OK, "mrope init");
          k = dense_view(tview_end(&q, B, T, 128), 2, T, 128, (posenc_dtype)dt);
          pp.ids = ids;
          if (withc) data = make_cache(rope, cache_layout[withc], cache_dtype[withc], 0, 1000, &cv);
          /* planes: all differ (image tokens); all equal (a text prompt, whose rows posenc makes
           * once for the three axes); mixed, each batch row a text token first, then every other;
           * t = h but not w */
          for (eq = 0; eq < 5; eq++) {
            for (i = 0; i < 3 * B * T; i++) ids[i] = (int32_t)(lcg() % 1000u); /* t, h, w planes all differ */
            for (i = 0; eq && i < B * T; i++) {
              if (eq == 1 || (eq == 2 && i % T % 2 == 0)) ids[B * T + i] = ids[2 * B * T + i] = ids[i];
              if (eq == 3) ids[B * T + i] = ids[i];
              if (eq == 4) { /* an image 2 wide: t repeated, h repeated by pairs, w counting up */
                ids[i] = 900; ids[B * T + i] = 30 + (int32_t)(i / 2); ids[2 * B * T + i] = 31 + (int32_t)(i % 2);
              }
            }
            if (!withc) ids[0] = 16777215;
            if (!withc && (eq == 1 || eq == 2)) ids[B * T] = ids[2 * B * T] = 16777215; /* token 0 stays text */
            sprintf(nm, "mrope %s %s %s%s%s%s%s, planes %s", m ? "interleaved" : "sections", si ? "gptj" : "neox",
                    posenc_dtype_name((posenc_dtype)dt), withc ? " cached " : "",
                    withc ? (cache_layout[withc] == HALF ? "half " : cache_layout[withc] == FULL ? "full " : "interleaved ") : "",
                    withc ? posenc_dtype_name(cache_dtype[withc]) : "", c.hf_compat ? " hf" : "",
                    eq == 0 ? "differ" : (eq == 1 ? "equal" : (eq == 2 ? "mixed" : (eq == 3 ? "t = h" : "image"))));
            free(run_rot(nm, rope, withc ? &cv : NULL, &pp, &q, &k, FWD, NULL, NULL));
            free(run_rot(nm, rope, withc ? &cv : NULL, &pp, &q, &k, INV, NULL, NULL));
            { /* decode: each batch row's one token */
              posenc_rope_positions pd = {2, 1, NULL, 0};
              int32_t dids[6];
              size_t a2;
              for (a2 = 0; a2 < 3; a2++) { dids[2 * a2] = ids[a2 * B * T]; dids[2 * a2 + 1] = ids[a2 * B * T + 1]; }
              pd.ids = dids;
              free(run_rot(nm, rope, withc ? &cv : NULL, &pd, &q, &k, FWD, NULL, NULL));
            }
          }
          /* text tokens: ids NULL means t = h = w = start + t: a plain rope's result */
          {
            posenc_rope_positions pt = {2, 5, NULL, 990};
            unsigned char *a, *b;
            size_t nb;
            uint32_t save = lcg_state;
            c.mrope = POSENC_ROPE_MROPE_NONE;
            posenc_rope_init(plain, sizeof plain_st, &c);
            a = run_rot("mrope text", rope, withc ? &cv : NULL, &pt, &q, &k, FWD, NULL, &nb);
            lcg_state = save;
            b = run_rot("plain text", plain, withc ? &cv : NULL, &pt, &q, &k, FWD, NULL, NULL);
            CHECK(memcmp(a, b, nb) == 0, "%s: text tokens differ from the plain rope", nm);
            free(a); free(b);
          }
          free(data);
        }
  /* the pair -> axis map itself, from the single-axis extremes: only h moves -> pairs of axis h move */
  {
    posenc_rope_config c = posenc_rope_default(128);
    rope_store rope_st; posenc_rope *rope = &rope_st.rope;
    int32_t ids[3] = {0, 12345, 0};
    posenc_rope_positions pp = {1, 1, NULL, 0};
    float x[128];
    posenc_rope_tensor q;
    size_t j;
    int ok = 1;
    c.base = 1e6;
    c.mrope = POSENC_ROPE_MROPE_SECTIONS; c.mrope_section[0] = 16; c.mrope_section[1] = 24; c.mrope_section[2] = 24;
    posenc_rope_init(rope, sizeof rope_st, &c);
    for (j = 0; j < 128; j++) x[j] = 1.0f;
    q.data = x; q.dtype = F32; q.heads = 1; q.batch_stride = q.token_stride = q.head_stride = 0;
    pp.ids = ids;
    CHECK(posenc_rope_apply(rope, NULL, &pp, &q, NULL, FWD) == POSENC_OK, "mrope axis probe");
    for (j = 0; j < 64; j++) {
      int moved = x[j] != 1.0f || x[j + 64] != 1.0f;
      if (moved != (j >= 16 && j < 40)) ok = 0;
    }
    CHECK(ok, "Qwen2-VL: exactly pairs [16, 40) follow the h position");
  }
}

/* posenc_rope_cache_rows takes a list in segments (a repeat copies the row before, a run of
 * consecutive positions is made as a range): every row equal to that position's row made alone,
 * in every layout and dtype with a row stride, the stride's gaps untouched; exact and HF
 * frequencies. */
static void test_rows_segments(void) {
  static const int32_t list[] = {7, 7, 7, 8, 9, 10, 40, 3, 3, -2, -1, 0, 1, 31, 32, 33, 100, 5, 200, 201,
                                 16777215, 16777215, -5, 64, 66, 68, 69, 69, 70, 2147483, 2147483};
  const size_t n = sizeof list / sizeof list[0];
  int hf, lay, dt;
  for (hf = 0; hf < 2; hf++) {
    posenc_rope_config c = posenc_rope_default(96);
    rope_store rope_st;
    posenc_rope *rope = &rope_st.rope;
    c.hf_compat = hf;
    CHECK(posenc_rope_init(rope, sizeof rope_st, &c) == POSENC_OK, "segments: init");
    for (lay = 0; lay < 3; lay++)
      for (dt = 0; dt < 3; dt++) {
        posenc_rope_cache_spec sp, one;
        size_t width = posenc_rope_cache_width(rope, (posenc_rope_cache_layout)lay), es, bytes = 0, k;
        unsigned char *buf, row[4 * 64 * 4];
        int bad = 0;
        sp.layout = (posenc_rope_cache_layout)lay; sp.dtype = (posenc_dtype)dt; sp.row_stride = width + 5;
        one = sp; one.row_stride = 0;
        es = posenc_dtype_size(sp.dtype);
        if (posenc_rope_cache_bytes(rope, &sp, n, &bytes) != POSENC_OK) { CHECK(0, "segments: bytes"); continue; }
        buf = (unsigned char *)malloc(bytes + GUARD);
        memset(buf, CANARY, bytes + GUARD);
        CHECK(posenc_rope_cache_rows(rope, &sp, list, n, buf, bytes) == POSENC_OK, "segments: rows");
        CHECK(tl_all_canary(buf + bytes, GUARD), "segments: wrote past the buffer (layout %d dtype %d)", lay, dt);
        for (k = 0; k < n; k++) {
          const unsigned char *got = buf + k * sp.row_stride * es;
          CHECK(posenc_rope_cache_table(rope, &one, list[k], 1, row, sizeof row) == POSENC_OK, "segments: row alone");
          if (memcmp(got, row, width * es) != 0) bad++;
          if (k + 1 < n && !tl_all_canary(got + width * es, 5 * es)) bad++;
        }
        CHECK(bad == 0, "segments%s: layout %d dtype %d: %d rows differ from the row made alone (or a gap written)",
              hf ? " (hf)" : "", lay, dt, bad);
        free(buf);
      }
  }
}

/* The largest |p| the reach check accepts on the fly for a largest frequency w: |p| * w * 2/pi in
 * double below 2^50 quarter turns (posenc_rope_apply's POSITION error), in that order. */
static int64_t reach_max(double w) {
  const double turns = 1125899906842624.0, two_over_pi = 0.6366197723675814;
  int64_t p = (int64_t)(turns / (w * two_over_pi));
  while ((double)(p + 1) * w * two_over_pi < turns) p++;
  while ((double)p * w * two_over_pi >= turns) p--;
  return p;
}

/* 0 or the status of a one-token rotation on the fly at position p. */
static posenc_status apply_at(const posenc_rope *rope, int64_t p) {
  float x[64];
  posenc_rope_positions pp = {1, 1, NULL, 0};
  posenc_rope_tensor q = {NULL, F32, 1, 0, 0, 0};
  size_t i;
  for (i = 0; i < 64; i++) x[i] = 1.0f;
  q.data = x;
  pp.start = (int32_t)p;
  return posenc_rope_apply(rope, NULL, &pp, &q, NULL, FWD);
}

/* The reach check's exact boundary, where the largest frequency is not pair 0's: freq_factors,
 * HF's float32 frequencies with a base below 1, and LongRoPE before and after set_seq_len turns
 * to the long factors. The largest position accepted, and the next refused, on both signs. */
static void test_reach_bound(void) {
  static float ff[32], shortf[32], longf[32];
  int k;
  size_t i;
  for (i = 0; i < 32; i++) ff[i] = shortf[i] = longf[i] = 1.0f;
  ff[10] = 1e-12f;
  shortf[0] = 1e-9f;
  for (k = 0; k < 4; k++) {
    posenc_rope_config c = posenc_rope_default(64);
    rope_store rope_st;
    posenc_rope *rope = &rope_st.rope;
    double w = 0.0;
    int64_t pm;
    if (k == 0) c.freq_factors = ff;
    if (k == 1) { c.hf_compat = 1; c.base = 1e-9; }
    if (k >= 2) {
      c.scaling = POSENC_ROPE_SCALING_LONGROPE; c.factor = 4.0; c.original_max_pos = 4096; c.seq_len = 100;
      c.short_factor = shortf; c.long_factor = longf;
    }
    CHECK(posenc_rope_init(rope, sizeof rope_st, &c) == POSENC_OK, "reach %d: init", k);
    if (k == 3) CHECK(posenc_rope_set_seq_len(rope, 8192) == POSENC_OK, "reach: set_seq_len");
    for (i = 0; i < 32; i++) {
      double f = c.hf_compat ? (double)posenc_rope_inv_freq_f32(rope)[i] : posenc_rope_inv_freq(rope)[i];
      if (f > w) w = f;
    }
    pm = reach_max(w);
    if (pm >= INT32_MAX) { /* every position: the long factors' largest frequency is 1 */
      CHECK(k == 3 && apply_at(rope, INT32_MAX) == POSENC_OK && apply_at(rope, -INT32_MAX) == POSENC_OK,
            "reach %d: every position", k);
      continue;
    }
    CHECK(apply_at(rope, pm) == POSENC_OK && apply_at(rope, -pm) == POSENC_OK, "reach %d: %lld refused", k, (long long)pm);
    CHECK(apply_at(rope, pm + 1) == POSENC_ERR_POSITION && apply_at(rope, -pm - 1) == POSENC_ERR_POSITION,
          "reach %d: %lld accepted", k, (long long)(pm + 1));
  }
}

/* An engine's decode step across its layers (README, "Decode on the fly across layers"): the step's
 * rows made once, posenc_rope_cache_rows for its positions, and handed to each layer's call as a
 * small f32 [cos | sin] cache with ids 0 .. n-1, the rows' indices. The bits must be those of the
 * call on the fly, with apply (NeoX, GPT-J, both directions, bf16 Q and K) and with store_kv (its
 * slots given, since its positions are now row indices). Batch 3 at their own positions (one
 * negative, one past 2^24); plain and M-RoPE (three planes, 3*3 rows). */
static void test_step_rows(void) {
  static const int32_t ids[9] = {4000, -7, 16777301, 12, 40, 99, 3, 5, 7};
  int m, si, dir;
  char nm[128];
  for (m = 0; m < 2; m++)
    for (si = 0; si < 2; si++) {
      posenc_rope_config c = cfg_of(128, 500000.0, POSENC_ROPE_SCALING_LLAMA3, 8.0, 8192);
      rope_store rope_st;
      posenc_rope *rope = &rope_st.rope;
      const size_t B = 3, n = (m ? 3 : 1) * B;
      int32_t row_ids[9];
      posenc_rope_positions fly = {3, 1, ids, 0}, step = {3, 1, row_ids, 0};
      posenc_rope_cache_spec sp;
      posenc_rope_cache_view cv;
      float rows[9 * 128];
      size_t bytes = 0, i;
      tview q = dense_view(0, 4, 1, 128, BF16), k = dense_view(tview_end(&q, B, 1, 128), 2, 1, 128, BF16);
      c.style = (posenc_rope_style)si;
      if (m) {
        c.mrope = POSENC_ROPE_MROPE_SECTIONS;
        c.mrope_section[0] = 16; c.mrope_section[1] = 24; c.mrope_section[2] = 24;
      }
      CHECK(posenc_rope_init(rope, sizeof rope_st, &c) == POSENC_OK, "step rows: init");
      sp.layout = HALF; sp.dtype = F32; sp.row_stride = 0;
      CHECK(posenc_rope_cache_bytes(rope, &sp, n, &bytes) == POSENC_OK && bytes <= sizeof rows, "step rows: bytes");
      CHECK(posenc_rope_cache_rows(rope, &sp, ids, n, rows, sizeof rows) == POSENC_OK, "step rows: the step's rows");
      for (i = 0; i < n; i++) row_ids[i] = (int32_t)i;
      cv.data = rows; cv.n_rows = n; cv.spec = sp;
      for (dir = 0; dir < 2; dir++) {
        unsigned char *a, *b;
        size_t nb;
        uint32_t save = lcg_state;
        sprintf(nm, "step rows %s %s %s", m ? "mrope" : "plain", si ? "gptj" : "neox", dir ? "inv" : "fwd");
        a = run_rot(nm, rope, NULL, &fly, &q, &k, (posenc_rope_direction)dir, NULL, &nb);
        lcg_state = save;
        b = run_rot(nm, rope, &cv, &step, &q, &k, (posenc_rope_direction)dir, NULL, NULL);
        CHECK(memcmp(a, b, nb) == 0, "%s: the step's rows differ from on the fly", nm);
        free(a); free(b);
      }
      { /* store_kv: Q in place, K and V into slots 5, 9, 2 of an f16 cache */
        static const int64_t slots[3] = {5, 9, 2};
        float qa[3 * 4 * 128], qb[3 * 4 * 128], kx[3 * 2 * 128], vx[3 * 2 * 128];
        uint16_t ka[10 * 2 * 128], va[10 * 2 * 128], kb[10 * 2 * 128], vb[10 * 2 * 128];
        posenc_rope_tensor qt = {NULL, F32, 4, 0, 0, 0}, kt = {kx, F32, 2, 0, 0, 0}, vt = {vx, F32, 2, 0, 0, 0};
        posenc_kv_cache kv;
        memset(&kv, 0, sizeof kv);
        kv.dtype = F16; kv.heads = 2; kv.n_slots = 10;
        for (i = 0; i < sizeof qa / sizeof *qa; i++) qa[i] = qb[i] = lcg_val();
        for (i = 0; i < sizeof kx / sizeof *kx; i++) { kx[i] = lcg_val(); vx[i] = lcg_val(); }
        memset(ka, 0, sizeof ka); memset(va, 0, sizeof va); memset(kb, 0, sizeof kb); memset(vb, 0, sizeof vb);
        qt.data = qa; kv.k = ka; kv.v = va;
        CHECK(posenc_rope_store_kv(rope, NULL, &fly, &qt, &kt, &vt, &kv, slots) == POSENC_OK, "step rows: store_kv on the fly");
        qt.data = qb; kv.k = kb; kv.v = vb;
        CHECK(posenc_rope_store_kv(rope, &cv, &step, &qt, &kt, &vt, &kv, slots) == POSENC_OK, "step rows: store_kv");
        CHECK(memcmp(qa, qb, sizeof qa) == 0 && memcmp(ka, kb, sizeof ka) == 0 && memcmp(va, vb, sizeof va) == 0,
              "step rows %s %s: store_kv's Q, K or V differ from on the fly", m ? "mrope" : "plain", si ? "gptj" : "neox");
        { /* the slots given, and no other */
          size_t sl, nz[10];
          for (sl = 0; sl < 10; sl++)
            for (nz[sl] = 0, i = 0; i < 2 * 128; i++) nz[sl] += ka[sl * 2 * 128 + i] != 0;
          CHECK(nz[5] > 0 && nz[9] > 0 && nz[2] > 0 && nz[0] == 0 && nz[1] == 0, "step rows: store_kv's slots");
        }
      }
    }
}

/* Prefills on the fly whose blocks hold fewer than 16 tokens' rows, which carry the recurrence
 * from one block to the next (rotary dims past 128 at the default block; with
 * POSENC_ROPE_FLY_BLOCK_BYTES=1024, past 16): 70 tokens in two batch rows from a start off an
 * anchor, a negative one and one on an anchor; NeoX and GPT-J; rotary dim 100 leaves a chunk of
 * pairs partly used and a head's tail to copy; YaRN at 256 scales every value (its attention
 * factor); a rotary dim of 128 in heads of 192 leaves a tail to copy. Against the reference, whose
 * rows are made one position at a time; apply_out too (bf16 in, f32 out; Q f16 and K bf16 into
 * their own dtypes, forward and inverse). */
static void test_rotation_carried(void) {
  static const size_t dims[6][2] = {{512, 512}, {256, 256}, {110, 100}, {128, 128}, {256, 256}, {192, 128}}; /* head, rotary */
  static const int32_t starts[3] = {993, -45, 64};
  char nm[128];
  size_t di, si, st;
  for (di = 0; di < 6; di++)
    for (si = 0; si < 2; si++)
      for (st = 0; st < 3; st++) {
        const size_t D = dims[di][0], T = 70;
        rope_store rope_st; posenc_rope *rope = make_rope(&rope_st, D, dims[di][1], (posenc_rope_style)si, 10000.0);
        if (di == 4) { /* YaRN: scaled values */
          posenc_rope_config c = cfg_of(D, 10000.0, POSENC_ROPE_SCALING_YARN, 8.0, 4096);
          c.style = (posenc_rope_style)si;
          CHECK(posenc_rope_init(rope, sizeof rope_st, &c) == POSENC_OK && rope->attention_factor != 1.0,
                "carried: yarn init");
        }
        posenc_rope_positions pp = {2, 70, NULL, 0};
        tview q = dense_view(0, 3, T, D, F32), k = dense_view(tview_end(&q, 2, T, D) + 8, 1, T, D, BF16);
        pp.start = starts[st];
        sprintf(nm, "carried %s%s %lu/%lu from %ld", si ? "gptj" : "neox", di == 4 ? " yarn" : "",
                (unsigned long)dims[di][1], (unsigned long)D, (long)starts[st]);
        free(run_rot(nm, rope, NULL, &pp, &q, &k, st == 1 ? INV : FWD, NULL, NULL));
        if (st == 0) {
          tview qi = dense_view(0, 3, T, D, BF16), qo = dense_view(0, 3, T, D, F32);
          run_rot_out(nm, rope, NULL, &pp, &qi, &qo, NULL, NULL, FWD, NULL, NULL);
        }
        if (st != 1) { /* out of place into the same dtypes (the fused rotation's), and back */
          tview qi = dense_view(0, 3, T, D, F16), qo = dense_view(0, 3, T, D, F16);
          tview ki = dense_view(tview_end(&qi, 2, T, D), 2, T, D, BF16);
          tview ko = dense_view(tview_end(&qo, 2, T, D) + 8, 2, T, D, BF16);
          run_rot_out(nm, rope, NULL, &pp, &qi, &qo, &ki, &ko, st == 0 ? FWD : INV, NULL, NULL);
        }
      }
}

/* A strided view: heads hs = D + 8 apart, tokens and batch rows with gaps. */
static tview gapped_view(size_t off, size_t heads, size_t T, size_t D, posenc_dtype dt) {
  tview t = dense_view(off, heads, T, D, dt);
  t.hs = D + 8; t.ts = heads * t.hs + 16; t.bs = T * t.ts + 32;
  return t;
}

/* The fused rotation's calls (POSENC_ROPE_FLY_BLOCK_BYTES under 4 KiB; with the default block these
 * take the carried rows): Q and K in one dtype, one kernel call for both; in place and out of
 * place; strided views; 64 + 8 heads, a window of one token; two batch rows from a negative start
 * off an anchor. */
static void test_rotation_fused(void) {
  char nm[128];
  int si, dir;
  for (si = 0; si < 2; si++)
    for (dir = 0; dir < 2; dir++) {
      const size_t D = 128, T = 40;
      rope_store rope_st; posenc_rope *rope = make_rope(&rope_st, D, D, (posenc_rope_style)si, 10000.0);
      posenc_rope_positions pp = {2, 40, NULL, -37};
      tview q = gapped_view(0, 64, T, D, F16), k = gapped_view(tview_end(&q, 2, T, D) + 8, 8, T, D, F16);
      tview qo = gapped_view(0, 64, T, D, F16), ko = gapped_view(tview_end(&qo, 2, T, D) + 8, 8, T, D, F16);
      sprintf(nm, "fused %s %s", si ? "gptj" : "neox", dir ? "inverse" : "forward");
      free(run_rot(nm, rope, NULL, &pp, &q, &k, dir ? INV : FWD, NULL, NULL));
      run_rot_out(nm, rope, NULL, &pp, &q, &qo, &k, &ko, dir ? INV : FWD, NULL, NULL);
    }
}

/* A decode step on the fly whose token's rows fit none of posenc's blocks whole (past rotary dim
 * 128, or M-RoPE's three axes): posenc makes them a range of pairs at a time. Against the
 * reference, whose rows are whole (posenc_rope_cache_rows): rotary dims 256 and 512 (and 200 of
 * 512), NeoX and GPT-J, batch 3; M-RoPE with a section boundary one pair into a range (17, 23,
 * 24); QK-norm with more heads (Q 80 + K 16) than posenc keeps scales for at once, into other
 * dtypes and in place, and into a KV cache with a padding slot. */
static void test_decode_ranges(void) {
  static const size_t dims[3][2] = {{256, 256}, {512, 512}, {512, 200}}; /* head dim, rotary dim */
  static float wq[POSENC_ROPE_MAX_DIM], wk[POSENC_ROPE_MAX_DIM];
  posenc_rope_norm qn, kn;
  char nm[128];
  size_t di;
  int si;
  for (di = 0; di < 3; di++)
    for (si = 0; si < 2; si++) {
      const size_t D = dims[di][0];
      rope_store rope_st; posenc_rope *rope = make_rope(&rope_st, D, dims[di][1], (posenc_rope_style)si, 10000.0);
      posenc_rope_positions pp = {3, 1, NULL, 4000};
      tview q = dense_view(0, 4, 1, D, F32), k = dense_view(tview_end(&q, 3, 1, D), 2, 1, D, BF16);
      sprintf(nm, "decode ranges %s %lu/%lu", si ? "gptj" : "neox", (unsigned long)dims[di][1], (unsigned long)D);
      free(run_rot(nm, rope, NULL, &pp, &q, &k, FWD, NULL, NULL));
      free(run_rot(nm, rope, NULL, &pp, &q, &k, INV, NULL, NULL));
    }
  for (si = 0; si < 2; si++) {
    posenc_rope_config c = posenc_rope_default(128);
    rope_store rope_st; posenc_rope *rope = &rope_st.rope;
    int32_t ids[3 * 2];
    posenc_rope_positions pp = {2, 1, NULL, 0};
    tview q = dense_view(0, 4, 1, 128, F32), k = dense_view(tview_end(&q, 2, 1, 128), 2, 1, 128, F16);
    size_t i;
    c.mrope = si ? POSENC_ROPE_MROPE_INTERLEAVED : POSENC_ROPE_MROPE_SECTIONS;
    c.mrope_section[0] = si ? 24 : 17; c.mrope_section[1] = si ? 20 : 23; c.mrope_section[2] = si ? 20 : 24;
    CHECK(posenc_rope_init(rope, sizeof rope_st, &c) == POSENC_OK, "decode ranges mrope init");
    for (i = 0; i < 6; i++) ids[i] = (int32_t)(lcg() % 5000u); /* every axis's position differs */
    pp.ids = ids;
    free(run_rot(si ? "decode ranges mrope interleaved" : "decode ranges mrope 17/23/24", rope, NULL, &pp, &q, &k, FWD,
                 NULL, NULL));
  }
  for (si = 0; si < 2; si++) {
    rope_store rope_st; posenc_rope *rope = make_rope(&rope_st, 256, si ? 192 : 256, (posenc_rope_style)si, 1e6);
    posenc_rope_positions pp = {1, 1, NULL, 777};
    tview qi = dense_view(0, 80, 1, 256, F32), ki = dense_view(tview_end(&qi, 1, 1, 256), 16, 1, 256, BF16);
    tview qo = dense_view(0, 80, 1, 256, BF16), ko = dense_view(tview_end(&qo, 1, 1, 256), 16, 1, 256, F32);
    posenc_kv_cache kv;
    int64_t slots[2] = {-1, 5};
    norm_weights(wq, 256, 0); norm_weights(wk, 256, 1);
    qn.weight = wq; qn.epsilon = 1e-6f; qn.weight_offset = 0;
    kn = qn; kn.weight = wk; kn.weight_offset = 1;
    sprintf(nm, "decode ranges norm %s Q 80 + K 16", si ? "gptj 192/256" : "neox 256");
    run_rot_out(nm, rope, NULL, &pp, &qi, &qo, &ki, &ko, FWD, &qn, &kn);
    run_rot_out(nm, rope, NULL, &pp, &qi, &qi, &ki, &ki, FWD, &qn, &kn);
    memset(&kv, 0, sizeof kv);
    kv.dtype = F16; kv.heads = 16; kv.n_slots = 8;
    pp.batch = 2;
    run_store_kv(nm, rope, &pp, 80, &kv, 8 * 16 * 256, slots, &qn, &kn);
  }
}

/* Properties a wrong kernel breaks. */
static double dot_d(const float *a, const float *b, size_t n) {
  double s = 0.0;
  size_t i;
  for (i = 0; i < n; i++) s += (double)a[i] * (double)b[i];
  return s;
}

static void rotate1(const posenc_rope *rope, float *x, size_t heads, int32_t p, posenc_rope_direction dir) {
  posenc_rope_positions pp;
  posenc_rope_tensor t;
  pp.batch = 1; pp.tokens = 1; pp.ids = NULL; pp.start = p;
  t.data = x; t.dtype = F32; t.heads = heads; t.batch_stride = t.token_stride = t.head_stride = 0;
  CHECK(posenc_rope_apply(rope, NULL, &pp, &t, NULL, dir) == POSENC_OK, "rotate1");
}

static void test_properties(void) {
  int si, r;
  const double eps = ldexp(1.0, -22);
  for (si = 0; si < 2; si++) {
    static const double As[3] = {1.0, 1.3, 0.6};
    int ai;
    for (ai = 0; ai < 3; ai++) {
      posenc_rope_config c = posenc_rope_default(128);
      rope_store rope_st; posenc_rope *rope = &rope_st.rope;
      float x[128], y[128], z[128];
      size_t j, h = 64;
      double A = As[ai], worst_rt = 0, worst_norm = 0;
      int badn = 0, badr = 0;
      c.style = (posenc_rope_style)si; c.attention_factor = A;
      posenc_rope_init(rope, sizeof rope_st, &c);
      for (r = 0; r < 40; r++) {
        int32_t p = r < 2 ? (r ? 16777215 : 1) : (int32_t)(lcg() & 0xffffff);
        for (j = 0; j < 128; j++) x[j] = lcg_val();
        memcpy(y, x, sizeof x);
        rotate1(rope, y, 1, p, FWD);
        memcpy(z, y, sizeof y);
        /* INVERSE at p, or FORWARD at -p: the same rotation (R(-angle)) */
        rotate1(rope, z, 1, r % 2 ? -p : p, r % 2 ? FWD : INV);
        for (j = 0; j < h; j++) {
          size_t e0 = si ? 2 * j : j, e1 = si ? 2 * j + 1 : j + h;
          double s1 = fabs(x[e0]) + fabs(x[e1]);
          /* norm of each pair scales by A */
          double n0 = sqrt((double)x[e0] * x[e0] + (double)x[e1] * x[e1]), n1 = sqrt((double)y[e0] * y[e0] + (double)y[e1] * y[e1]);
          double en = fabs(n1 - A * n0), bn = sqrt(2.0) * eps * (A > 1 ? A : 1) * s1 + 1e-300;
          /* inverse(forward(x)) = A^2 x (INVERSE is the transpose; for A = 1 it undoes FORWARD);
           * so is forward at -p after forward at p */
          double e_rt = fabs(z[e0] - A * A * x[e0]) > fabs(z[e1] - A * A * x[e1]) ? fabs(z[e0] - A * A * x[e0]) : fabs(z[e1] - A * A * x[e1]);
          double brt = 4.0 * eps * A * (A > 1 ? A : 1) * s1 + 1e-300;
          if (s1 > 0 && en / (eps * s1) > worst_norm) worst_norm = en / (eps * s1);
          if (s1 > 0 && e_rt / (eps * s1) > worst_rt) worst_rt = e_rt / (eps * s1);
          if (en > bn) badn++;
          if (e_rt > brt) badr++;
        }
      }
      CHECK(badn == 0, "style %d A %g: %d pairs change norm beyond the bound", si, A, badn);
      CHECK(badr == 0, "style %d A %g: %d pairs: inverse(forward(x)) or forward(-p, forward(p, x)) != A^2 x within the bound",
            si, A, badr);
      printf("  properties style %d A %.1f: max |norm error| %.3f, max |inverse(forward) - A^2 x| %.3f (units of 2^-22 (|x0|+|x1|))\n",
             si, A, worst_norm, worst_rt);
    }
    /* <R(p) q, R(m) k> depends only on p - m */
    {
      posenc_rope_config c = posenc_rope_default(128);
      rope_store rope_st; posenc_rope *rope = &rope_st.rope;
      float q[128], k[128], q1[128], k1[128], q2[128], k2[128];
      static const int32_t sh[][3] = {{100, 37, 1000000}, {5, 5, 16777000}, {16777215, 16000000, -16000000}, {0, 31, 65536}};
      size_t j, s;
      c.style = (posenc_rope_style)si;
      posenc_rope_init(rope, sizeof rope_st, &c);
      for (s = 0; s < sizeof sh / sizeof sh[0]; s++) {
        double d1, d2, tol = 0.0, d3;
        for (j = 0; j < 128; j++) { q[j] = lcg_val(); k[j] = lcg_val(); }
        for (j = 0; j < 64; j++) {
          size_t e0 = si ? 2 * j : j, e1 = si ? 2 * j + 1 : j + 64;
          tol += (fabs(q[e0]) + fabs(q[e1])) * (fabs(k[e0]) + fabs(k[e1]));
        }
        tol *= 8.0 * eps;
        memcpy(q1, q, sizeof q); memcpy(k1, k, sizeof k); memcpy(q2, q, sizeof q); memcpy(k2, k, sizeof k);
        rotate1(rope, q1, 1, sh[s][0], FWD); rotate1(rope, k1, 1, sh[s][1], FWD);
        rotate1(rope, q2, 1, sh[s][0] + sh[s][2], FWD); rotate1(rope, k2, 1, sh[s][1] + sh[s][2], FWD);
        d1 = dot_d(q1, k1, 128); d2 = dot_d(q2, k2, 128);
        CHECK(fabs(d1 - d2) <= tol, "style %d shift %d: <q,k> %.9g vs %.9g (tol %.3g)", si, (int)sh[s][2], d1, d2, tol);
        /* and it does depend on p - m */
        memcpy(q2, q, sizeof q);
        rotate1(rope, q2, 1, sh[s][0] + 1, FWD);
        d3 = dot_d(q2, k1, 128);
        CHECK(fabs(d3 - d1) > tol, "style %d: moving q by one position left <q,k> unchanged", si);
      }
    }
    /* position 0 is the identity, bit for bit, for every storage type */
    {
      int dt;
      for (dt = 0; dt < 3; dt++) {
        rope_store rope_st; posenc_rope *rope = make_rope(&rope_st, 70, 66, (posenc_rope_style)si, 10000.0);
        posenc_rope_positions pp = {1, 1, NULL, 0};
        tview q = dense_view(0, 3, 1, 70, (posenc_dtype)dt);
        unsigned char *in = NULL, *out;
        size_t nb;
        out = run_rot("identity at 0", rope, NULL, &pp, &q, NULL, FWD, &in, &nb);
        CHECK(memcmp(in, out, nb) == 0, "style %d dtype %d: rotation at p = 0 changed the input", si, dt);
        free(in); free(out);
      }
    }
  }
}

/* ============================================================================================
 * Every backend: the same bytes as scalar
 * ========================================================================================== */
/* values that stress the kernels: ordinary, tiny (f16/f32 subnormal), huge, signed zeros */
static float special_val(posenc_dtype dt) {
  uint32_t k = lcg() % 16u;
  switch (k) {
    case 0: return dt == F16 ? 3.0e-6f : 1.0e-39f;
    case 1: return dt == F16 ? 60000.0f : 3.0e38f;
    case 2: return -0.0f;
    case 3: return dt == F16 ? -6.1e-5f : -1.5e-38f;
    default: return lcg_val();
  }
}

/* A cache of 70 rows from 16777215 - 40, then 30 rows of a list after it, in one buffer (bk_fn):
 * the first status that is not OK. */
typedef struct cache_case {
  const posenc_rope *rope;
  posenc_rope_cache_spec sp;
  const int32_t *list;
  size_t bytes; /* of the 70 rows */
} cache_case;

static int cache_table_and_rows(void *ctx, void *out, size_t out_bytes) {
  const cache_case *c = (const cache_case *)ctx;
  unsigned char *o = (unsigned char *)out;
  size_t b30;
  posenc_status st = posenc_rope_cache_table(c->rope, &c->sp, 16777215 - 40, 70, o, c->bytes);
  posenc_status st_rows = posenc_rope_cache_bytes(c->rope, &c->sp, 30, &b30);
  (void)out_bytes;
  if (st_rows == POSENC_OK) st_rows = posenc_rope_cache_rows(c->rope, &c->sp, c->list, 30, o + c->bytes, b30);
  return (int)(st != POSENC_OK ? st : st_rows);
}

/* The input, then Q and K rotated in place in it (bk_fn). */
typedef struct rotation_case {
  const posenc_rope *rope;
  const posenc_rope_cache_view *cv;
  const posenc_rope_positions *pp;
  tview q, k;
  const unsigned char *input;
  posenc_rope_direction dir;
} rotation_case;

static int rotate_input(void *ctx, void *out, size_t out_bytes) {
  const rotation_case *c = (const rotation_case *)ctx;
  posenc_rope_tensor qt, kt;
  memcpy(out, c->input, out_bytes);
  qt = to_tensor((unsigned char *)out, &c->q); kt = to_tensor((unsigned char *)out, &c->k);
  return (int)posenc_rope_apply(c->rope, c->cv, c->pp, &qt, &kt, c->dir);
}

/* bf16 NeoX with NaNs and infinities: in q (NaN with and without payload, both infinities, the
 * largest finite value, whose rotations overflow) and in a cache row (cos and sin NaN with every
 * payload bit set), and a row whose cos and sin of one pair are 1.5 (the largest values there
 * give infinity - infinity). Every backend gives scalar's words, a NaN where scalar has one. The
 * SIMD backends round without picking out NaN lanes where the cache row's |cos|, |sin| <= 1 and
 * the inputs hold no NaN or infinity (posenc_simd.h, neox_bf16_eo): rounding 0x7fffffff that way
 * would carry into the sign and store -0, not a NaN. Only that NaN row can show a bound check
 * gone wrong here: x86's and ARM's other NaN results round safely either way. */
static void test_bf16_specials(void) {
  enum { T = 4, HEADS = 2, D = 128, PAIRS = D / 2 };
  static uint16_t input[T * HEADS * D], ref[T * HEADS * D], got[T * HEADS * D];
  static float cache[T * D];
  rope_store rope_st; posenc_rope *rope = make_rope(&rope_st, D, D, NEOX, 10000.0);
  posenc_rope_cache_spec spec = {POSENC_ROPE_CACHE_HALF, F32, 0};
  posenc_rope_cache_view view;
  posenc_rope_positions pos = {1, T, NULL, 0};
  posenc_rope_tensor q = {NULL, BF16, HEADS, 0, 0, 0};
  const uint32_t nan_all = 0x7fffffffu, neg_nan_all = 0xffffffffu;
  static const struct { size_t at; uint16_t v; } specials[] = {
      {3 * HEADS * D + D + 5, 0x7f81},  {3 * HEADS * D + D + 70, 0xffff}, {3 * HEADS * D + 33, 0x7f80},
      {3 * HEADS * D + 100, 0xff80},    {3 * HEADS * D + 12, 0x7f7f},     {3 * HEADS * D + 76, 0x7f7f},
      {2 * HEADS * D + D + 10, 0x7f7f}, {2 * HEADS * D + D + 74, 0xff7f}, {2 * HEADS * D + 50, 0x7fc0},
      {2 * HEADS * D + 40, 0x7f7f},     {2 * HEADS * D + 104, 0x7f7f}};
  size_t i, bad = 0, first = 0;
  int nan_lanes = 1;
  posenc_status st;
  st = posenc_rope_cache_table(rope, &spec, 0, T, cache, sizeof cache);
  CHECK(st == POSENC_OK, "bf16 specials: cache: %s", posenc_strerror(st));
  memcpy(&cache[1 * D + 3], &nan_all, 4);               /* row 1: cos of pair 3 */
  memcpy(&cache[1 * D + PAIRS + 20], &neg_nan_all, 4);   /* row 1: sin of pair 20 */
  cache[2 * D + 40] = 1.5f;                             /* row 2: cos and sin of pair 40 */
  cache[2 * D + PAIRS + 40] = 1.5f;
  view.data = cache; view.n_rows = T; view.spec = spec;
  for (i = 0; i < T * HEADS * D; i++) input[i] = posenc_f32_to_bf16(lcg_val());
  for (i = 0; i < sizeof specials / sizeof specials[0]; i++) input[specials[i].at] = specials[i].v;
  BK_FOR_EACH(it) {
    uint16_t *out = it.index == 0 ? ref : got;
    memcpy(out, input, sizeof input);
    q.data = out;
    st = posenc_rope_apply(rope, &view, &pos, &q, NULL, FWD);
    CHECK(st == POSENC_OK, "bf16 specials on %s: apply: %s", posenc_isa_name(it.isa), posenc_strerror(st));
    if (it.index == 0) continue;
    for (i = 0; i < T * HEADS * D; i++)
      if (got[i] != ref[i] && !((got[i] & 0x7fff) > 0x7f80 && (ref[i] & 0x7fff) > 0x7f80) && !bad++) first = i;
    CHECK(bad == 0, "bf16 specials on %s: %zu words differ from scalar's, the first at %zu (%04x, scalar %04x)",
          posenc_isa_name(it.isa), bad, first, got[first], ref[first]);
    bad = 0;
  }
  /* what the case is for: scalar's NaN lanes of row 1 (pairs 3 and 20 of both heads), and the
   * largest values' overflows to infinities (row 2, head 1, pair 10; row 3, head 0, pair 12) */
  for (i = 0; i < HEADS; i++)
    nan_lanes &= (ref[1 * HEADS * D + i * D + 3] & 0x7fff) > 0x7f80 && (ref[1 * HEADS * D + i * D + 67] & 0x7fff) > 0x7f80 &&
                 (ref[1 * HEADS * D + i * D + 20] & 0x7fff) > 0x7f80 && (ref[1 * HEADS * D + i * D + 84] & 0x7fff) > 0x7f80;
  CHECK(nan_lanes, "bf16 specials: scalar has no NaN where the cache row's cos or sin is NaN");
  CHECK((ref[2 * HEADS * D + 40] & 0x7fff) > 0x7f80, "bf16 specials: max * 1.5 - max * 1.5 is not NaN (%04x)",
        ref[2 * HEADS * D + 40]);
  CHECK((ref[2 * HEADS * D + D + 10] & 0x7fff) == 0x7f80 && (ref[3 * HEADS * D + 76] & 0x7fff) == 0x7f80,
        "bf16 specials: the largest values' rotations did not overflow (%04x %04x)", ref[2 * HEADS * D + D + 10],
        ref[3 * HEADS * D + 76]);
}

static void test_backends(void) {
  static const size_t rots[] = {2, 6, 14, 16, 18, 30, 34, 64, 130};
  size_t ri;
  char nm[160];
  bk_result r;
  if (bk_next_usable(POSENC_ISA_SCALAR) == POSENC_ISA_COUNT)
    printf("  only scalar in this build/CPU: backend comparison has nothing to compare\n");
  /* caches */
  {
    posenc_rope_config cs[6];
    int nc = 0, ci, lay, dt;
    int32_t list[30];
    size_t k;
    cs[nc++] = posenc_rope_default(34);
    cs[nc] = cfg_of(130, 10000.0, POSENC_ROPE_SCALING_YARN, 4.0, 4096); cs[nc++].rotary_dim = 126;
    cs[nc] = posenc_rope_default(6); cs[nc++].hf_compat = 1;
    cs[nc] = cfg_of(18, 500000.0, POSENC_ROPE_SCALING_LLAMA3, 8.0, 64); nc++;
    cs[nc] = posenc_rope_default(512); cs[nc++].attention_factor = 1.5;
    cs[nc] = cfg_of(14, 10000.0, POSENC_ROPE_SCALING_LINEAR, 3.0, 0); cs[nc].hf_compat = 1; nc++;
    for (k = 0; k < 30; k++) list[k] = (int32_t)(lcg() & 0xffffff) - 100000;
    list[0] = 16777215; list[1] = 2147483647; list[2] = -2147483647 - 1; list[3] = 31; list[4] = 32;
    for (ci = 0; ci < nc; ci++) {
      rope_store rope_st; posenc_rope *rope = &rope_st.rope;
      CHECK(posenc_rope_init(rope, sizeof rope_st, &cs[ci]) == POSENC_OK, "backend cache init %d", ci);
      for (lay = 0; lay < 3; lay++)
        for (dt = 0; dt < 3; dt++) {
          cache_case c;
          c.rope = rope; c.list = list;
          c.sp.layout = (posenc_rope_cache_layout)lay; c.sp.dtype = (posenc_dtype)dt; c.sp.row_stride = 0;
          posenc_rope_cache_bytes(rope, &c.sp, 70, &c.bytes);
          CHECK(bk_compare_ok(cache_table_and_rows, &c, 2 * c.bytes + GUARD, NULL, &r), "cache %d layout %d dtype %d: %s",
                ci, lay, dt, r.msg);
        }
    }
  }
  /* rotations: odd pair counts (vector tails), head counts 1..3, pass-through dims */
  for (ri = 0; ri < sizeof rots / sizeof rots[0]; ri++) {
    size_t rot = rots[ri], extra, heads;
    for (extra = 0; extra <= 5; extra += 5)
      for (heads = 1; heads <= 3; heads++) {
        int si, dt, dir, withc, sp;
        for (si = 0; si < 2; si++)
          for (dt = 0; dt < 3; dt++)
            for (dir = 0; dir < 2; dir++)
              for (withc = 0; withc < 2; withc++)
                for (sp = 0; sp < 2; sp++) {
                  size_t D = rot + extra, T = 3, i;
                  rope_store rope_st; posenc_rope *rope = make_rope(&rope_st, D, rot, (posenc_rope_style)si, 10000.0);
                  posenc_rope_positions pp = {1, 3, NULL, 0};
                  posenc_rope_cache_view cv;
                  rotation_case c;
                  void *cdata = NULL;
                  int32_t ids[3] = {7, 299, 32};
                  unsigned char *input, *scalar, *r2;
                  size_t bytes, es = posenc_dtype_size((posenc_dtype)dt);
                  tview tv[2];
                  c.q = dense_view(0, heads, T, D, (posenc_dtype)dt);
                  c.k = dense_view(tview_end(&c.q, 1, T, D), 1, T, D, (posenc_dtype)dt);
                  bytes = tview_end(&c.k, 1, T, D);
                  input = (unsigned char *)malloc(bytes + GUARD);
                  for (i = 0; i + es <= bytes; i += es) tl_store(input + i, (posenc_dtype)dt, sp ? special_val((posenc_dtype)dt) : lcg_val());
                  memset(input + bytes, CANARY, GUARD);
                  pp.ids = ids;
                  if (withc) cdata = make_cache(rope, (posenc_rope_cache_layout)(ri % 3), (posenc_dtype)(heads % 3), 0, 300, &cv);
                  c.rope = rope; c.cv = withc ? &cv : NULL; c.pp = &pp; c.input = input; c.dir = (posenc_rope_direction)dir;
                  sprintf(nm, "rot %lu D %lu heads %lu style %d %s dir %d cache %d specials %d", (unsigned long)rot,
                          (unsigned long)D, (unsigned long)heads, si, posenc_dtype_name((posenc_dtype)dt), dir, withc, sp);
                  scalar = (unsigned char *)malloc(bytes + GUARD);
                  CHECK(bk_compare_ok(rotate_input, &c, bytes + GUARD, scalar, &r), "%s: %s", nm, r.msg);
                  /* scalar against the plain reference too (the inputs here include specials) */
                  r2 = (unsigned char *)malloc(bytes + GUARD);
                  tv[0] = c.q; tv[1] = c.k;
                  memcpy(r2, input, bytes + GUARD);
                  ref_apply(rope, c.cv, &pp, r2, tv, 2, c.dir);
                  CHECK(memcmp(r2, scalar, bytes + GUARD) == 0, "%s: scalar differs from the reference", nm);
                  free(r2); free(scalar); free(input); free(cdata);
                }
      }
  }
}

/* ============================================================================================
 * Bad input: a distinct code each, and nothing written
 * ========================================================================================== */
static void test_bad_init(void) {
  rope_store r2_st; posenc_rope *r2 = &r2_st.rope;
  unsigned char snap[sizeof(rope_store)];
  posenc_rope_config base = posenc_rope_default(64), c;
  float bad_list[32];
  int i;
  static const posenc_rope_scaling scs[] = {POSENC_ROPE_SCALING_LINEAR, POSENC_ROPE_SCALING_NTK, POSENC_ROPE_SCALING_DYNAMIC,
                                            POSENC_ROPE_SCALING_YARN, POSENC_ROPE_SCALING_LLAMA3, POSENC_ROPE_SCALING_LONGROPE};
  static const double bad_factors[] = {0.0, -2.0, NAN, INFINITY, -INFINITY};
#define EXPECT_INIT(setup, code) do { posenc_status s_; c = base; setup; memset(r2, 0x5A, sizeof r2_st); \
    memcpy(snap, r2, sizeof r2_st); s_ = posenc_rope_init(r2, sizeof r2_st, &c); \
    CHECK(s_ == (code), "init(%s) -> %s, want %s", #setup, posenc_strerror(s_), posenc_strerror(code)); \
    if ((code) != POSENC_OK) CHECK(memcmp(r2, snap, sizeof r2_st) == 0, "init(%s) wrote *rope on error", #setup); } while (0)
  for (i = 0; i < 32; i++) bad_list[i] = 1.0f;
  EXPECT_INIT((void)0, POSENC_OK);
  CHECK(posenc_rope_init(NULL, sizeof r2_st, &base) == POSENC_ERR_NULL, "init NULL rope");
  memset(r2, 0x5A, sizeof r2_st); memcpy(snap, r2, sizeof r2_st);
  CHECK(posenc_rope_init(r2, sizeof r2_st, NULL) == POSENC_ERR_NULL && memcmp(r2, snap, sizeof r2_st) == 0, "init NULL config");
  EXPECT_INIT(c.rotary_dim = 63, POSENC_ERR_DIM);
  EXPECT_INIT(c.rotary_dim = 66, POSENC_ERR_DIM);
  EXPECT_INIT((c.head_dim = 1024, c.rotary_dim = 514), POSENC_ERR_DIM);
  EXPECT_INIT((c.head_dim = 1024, c.rotary_dim = 0), POSENC_ERR_DIM);
  EXPECT_INIT(c.head_dim = 1, POSENC_ERR_DIM);
  EXPECT_INIT(c.head_dim = 0, POSENC_ERR_DIM);
  EXPECT_INIT((c.head_dim = 1024, c.rotary_dim = 512), POSENC_OK);
  EXPECT_INIT((c.head_dim = 65), POSENC_ERR_DIM);           /* rotary_dim 0 -> head_dim 65, odd */
  EXPECT_INIT((c.head_dim = 65, c.rotary_dim = 64), POSENC_OK);
  EXPECT_INIT(c.base = 0.0, POSENC_ERR_BASE);
  EXPECT_INIT(c.base = -10000.0, POSENC_ERR_BASE);
  EXPECT_INIT(c.base = NAN, POSENC_ERR_BASE);
  EXPECT_INIT(c.base = INFINITY, POSENC_ERR_BASE);
  EXPECT_INIT(c.base = 1e31, POSENC_ERR_BASE);
  EXPECT_INIT(c.base = 1e-31, POSENC_ERR_BASE);
  for (i = 0; i < 6; i++) {
    size_t f;
    for (f = 0; f < sizeof bad_factors / sizeof bad_factors[0]; f++) {
      double bf = bad_factors[f];
      EXPECT_INIT((c.scaling = scs[i], c.factor = bf, c.original_max_pos = 4096, c.short_factor = bad_list,
                   c.long_factor = bad_list), POSENC_ERR_PARAM);
    }
    EXPECT_INIT((c.scaling = scs[i], c.factor = 2.0, c.original_max_pos = 4096, c.short_factor = bad_list,
                 c.long_factor = bad_list), POSENC_OK);
  }
  EXPECT_INIT((c.scaling = POSENC_ROPE_SCALING_NTK, c.factor = 2.0, c.head_dim = 2), POSENC_ERR_DIM);
  EXPECT_INIT((c.scaling = POSENC_ROPE_SCALING_DYNAMIC, c.factor = 2.0, c.original_max_pos = 64, c.rotary_dim = 2), POSENC_ERR_DIM);
  EXPECT_INIT((c.scaling = POSENC_ROPE_SCALING_LINEAR, c.factor = 2.0, c.head_dim = 2), POSENC_OK);
  /* L = 0 where a variant needs it */
  EXPECT_INIT((c.scaling = POSENC_ROPE_SCALING_YARN, c.factor = 2.0), POSENC_ERR_PARAM);
  EXPECT_INIT((c.scaling = POSENC_ROPE_SCALING_LLAMA3, c.factor = 2.0), POSENC_ERR_PARAM);
  EXPECT_INIT((c.scaling = POSENC_ROPE_SCALING_DYNAMIC, c.factor = 2.0), POSENC_ERR_PARAM);
  /* LongRoPE lists: an entry 0, NaN, inf or negative */
  {
    static const float bad_vals[] = {0.0f, NAN, INFINITY, -1.0f};
    size_t v;
    for (v = 0; v < 4; v++) {
      bad_list[7] = bad_vals[v];
      EXPECT_INIT((c.scaling = POSENC_ROPE_SCALING_LONGROPE, c.factor = 8.0, c.original_max_pos = 4096,
                   c.short_factor = bad_list, c.long_factor = lr_long), POSENC_ERR_PARAM);
      EXPECT_INIT((c.scaling = POSENC_ROPE_SCALING_LONGROPE, c.factor = 8.0, c.original_max_pos = 4096,
                   c.short_factor = lr_short, c.long_factor = bad_list), POSENC_ERR_PARAM);
      EXPECT_INIT(c.freq_factors = bad_list, POSENC_ERR_PARAM);
      bad_list[7] = 1.0f;
    }
    bad_list[31] = 0.0f; /* the last of the 32 entries that d = 64 reads */
    EXPECT_INIT(c.freq_factors = bad_list, POSENC_ERR_PARAM);
    EXPECT_INIT((c.rotary_dim = 62, c.freq_factors = bad_list), POSENC_OK); /* only d/2 entries are read */
    bad_list[31] = 1.0f;
  }
  /* a missing list is NULL (posenc.h's comment on posenc_rope_init lists it under PARAM: reported) */
  EXPECT_INIT((c.scaling = POSENC_ROPE_SCALING_LONGROPE, c.factor = 8.0, c.original_max_pos = 4096, c.long_factor = lr_long),
              POSENC_ERR_NULL);
  EXPECT_INIT((c.scaling = POSENC_ROPE_SCALING_LONGROPE, c.factor = 8.0, c.original_max_pos = 4096, c.short_factor = lr_short),
              POSENC_ERR_NULL);
  EXPECT_INIT((c.scaling = POSENC_ROPE_SCALING_LONGROPE, c.factor = 8.0, c.original_max_pos = 4096), POSENC_ERR_NULL);
  /* llama3: high_freq_factor must exceed low_freq_factor */
  EXPECT_INIT((c.scaling = POSENC_ROPE_SCALING_LLAMA3, c.factor = 8.0, c.original_max_pos = 8192, c.low_freq_factor = 4.0,
               c.high_freq_factor = 4.0), POSENC_ERR_PARAM);
  EXPECT_INIT((c.scaling = POSENC_ROPE_SCALING_LLAMA3, c.factor = 8.0, c.original_max_pos = 8192, c.low_freq_factor = 4.0,
               c.high_freq_factor = 2.0), POSENC_ERR_PARAM);
  EXPECT_INIT((c.scaling = POSENC_ROPE_SCALING_LLAMA3, c.factor = 8.0, c.original_max_pos = 8192, c.high_freq_factor = 0.5),
              POSENC_ERR_PARAM); /* low 0 means 1 */
  EXPECT_INIT((c.scaling = POSENC_ROPE_SCALING_LLAMA3, c.factor = 8.0, c.original_max_pos = 8192, c.low_freq_factor = -1.0),
              POSENC_ERR_PARAM);
  EXPECT_INIT((c.scaling = POSENC_ROPE_SCALING_LLAMA3, c.factor = 8.0, c.original_max_pos = 8192, c.high_freq_factor = NAN),
              POSENC_ERR_PARAM);
  /* yarn betas and mscales */
  EXPECT_INIT((c.scaling = POSENC_ROPE_SCALING_YARN, c.factor = 8.0, c.original_max_pos = 8192, c.beta_fast = -1.0), POSENC_ERR_PARAM);
  EXPECT_INIT((c.scaling = POSENC_ROPE_SCALING_YARN, c.factor = 8.0, c.original_max_pos = 8192, c.beta_slow = NAN), POSENC_ERR_PARAM);
  EXPECT_INIT((c.scaling = POSENC_ROPE_SCALING_YARN, c.factor = 8.0, c.original_max_pos = 8192, c.mscale = NAN), POSENC_ERR_PARAM);
  EXPECT_INIT((c.scaling = POSENC_ROPE_SCALING_YARN, c.factor = 8.0, c.original_max_pos = 8192, c.mscale_all_dim = -1.0),
              POSENC_ERR_PARAM);
  /* attention factor */
  EXPECT_INIT(c.attention_factor = -1.0, POSENC_ERR_PARAM);
  EXPECT_INIT(c.attention_factor = NAN, POSENC_ERR_PARAM);
  EXPECT_INIT(c.attention_factor = INFINITY, POSENC_ERR_PARAM);
  /* M-RoPE sections must sum to d/2 */
  EXPECT_INIT((c.head_dim = 128, c.mrope = POSENC_ROPE_MROPE_SECTIONS, c.mrope_section[0] = 16, c.mrope_section[1] = 24,
               c.mrope_section[2] = 23), POSENC_ERR_DIM);
  EXPECT_INIT((c.head_dim = 128, c.mrope = POSENC_ROPE_MROPE_INTERLEAVED, c.mrope_section[0] = 24, c.mrope_section[1] = 20,
               c.mrope_section[2] = 21), POSENC_ERR_DIM);
  EXPECT_INIT((c.head_dim = 128, c.mrope = POSENC_ROPE_MROPE_SECTIONS, c.mrope_section[0] = 0xffffffffu, c.mrope_section[1] = 65,
               c.mrope_section[2] = 0), POSENC_ERR_DIM); /* no wrap-around */
  EXPECT_INIT((c.head_dim = 128, c.mrope = POSENC_ROPE_MROPE_NONE, c.mrope_section[0] = 1), POSENC_OK);
  /* unknown enums, freq_factors with hf_compat */
  EXPECT_INIT(c.style = (posenc_rope_style)2, POSENC_ERR_PARAM);
  EXPECT_INIT(c.scaling = (posenc_rope_scaling)7, POSENC_ERR_PARAM);
  EXPECT_INIT(c.mrope = (posenc_rope_mrope)3, POSENC_ERR_PARAM);
  EXPECT_INIT((c.freq_factors = ffac, c.hf_compat = 1), POSENC_ERR_PARAM);
#undef EXPECT_INIT
}

static void test_bad_cache(void) {
  rope_store rope_st; posenc_rope *rope = &rope_st.rope;
  posenc_rope_config c = posenc_rope_default(64);
  posenc_rope_cache_spec sp = {HALF, F32, 0}, s2;
  unsigned char buf[8192];
  int32_t pos[2] = {0, 1};
  size_t bytes = 0;
  posenc_rope_init(rope, sizeof rope_st, &c);
  memset(buf, CANARY, sizeof buf);
#define EXPECT(call, code) do { posenc_status s_ = (call); \
    CHECK(s_ == (code), "%s -> %s, want %s", #call, posenc_strerror(s_), posenc_strerror(code)); \
    CHECK(tl_all_canary(buf, sizeof buf), "%s wrote on error", #call); } while (0)
  EXPECT(posenc_rope_cache_table(NULL, &sp, 0, 4, buf, sizeof buf), POSENC_ERR_NULL);
  EXPECT(posenc_rope_cache_table(rope, NULL, 0, 4, buf, sizeof buf), POSENC_ERR_NULL);
  EXPECT(posenc_rope_cache_table(rope, &sp, 0, 4, NULL, sizeof buf), POSENC_ERR_NULL);
  EXPECT(posenc_rope_cache_rows(rope, &sp, NULL, 2, buf, sizeof buf), POSENC_ERR_NULL);
  EXPECT(posenc_rope_cache_bytes(rope, &sp, 4, NULL), POSENC_ERR_NULL);
  EXPECT(posenc_rope_cache_table(rope, &sp, 0, 0, buf, sizeof buf), POSENC_ERR_SIZE);
  EXPECT(posenc_rope_cache_rows(rope, &sp, pos, 0, buf, sizeof buf), POSENC_ERR_SIZE);
  s2 = sp; s2.layout = (posenc_rope_cache_layout)3; EXPECT(posenc_rope_cache_table(rope, &s2, 0, 4, buf, sizeof buf), POSENC_ERR_LAYOUT);
  s2 = sp; s2.dtype = (posenc_dtype)3; EXPECT(posenc_rope_cache_table(rope, &s2, 0, 4, buf, sizeof buf), POSENC_ERR_DTYPE);
  s2 = sp; s2.row_stride = 63; EXPECT(posenc_rope_cache_table(rope, &s2, 0, 4, buf, sizeof buf), POSENC_ERR_STRIDE);
  s2 = sp; s2.layout = FULL; s2.row_stride = 64; EXPECT(posenc_rope_cache_table(rope, &s2, 0, 4, buf, sizeof buf), POSENC_ERR_STRIDE);
  EXPECT(posenc_rope_cache_table(rope, &sp, 0, 4, buf, 4 * 64 * 4 - 1), POSENC_ERR_BUFFER);
  EXPECT(posenc_rope_cache_rows(rope, &sp, pos, 2, buf, 2 * 64 * 4 - 1), POSENC_ERR_BUFFER);
  s2 = sp; s2.dtype = BF16; s2.row_stride = 70;
  EXPECT(posenc_rope_cache_table(rope, &s2, 0, 4, buf, (3 * 70 + 64) * 2 - 1), POSENC_ERR_BUFFER);
  CHECK(posenc_rope_cache_bytes(rope, &s2, 4, &bytes) == POSENC_OK && bytes == (3 * 70 + 64) * 2, "strided bytes %zu", bytes);
  EXPECT(posenc_rope_cache_table(rope, &sp, 2147483647, 2, buf, sizeof buf), POSENC_ERR_POSITION);
  EXPECT(posenc_rope_cache_table(rope, &sp, 2147483000, 1000, buf, SIZE_MAX), POSENC_ERR_POSITION);
  s2 = sp; s2.row_stride = SIZE_MAX / 2; EXPECT(posenc_rope_cache_table(rope, &s2, 0, 4, buf, sizeof buf), POSENC_ERR_OVERFLOW);
  { /* |p| * omega beyond the exact reduction (base 1e-30: omega up to ~1e29) */
    rope_store r3_st; posenc_rope *r3 = &r3_st.rope;
    posenc_rope_config c3 = posenc_rope_default(64);
    int32_t far[2] = {0, 100};
    c3.base = 1e-30;
    posenc_rope_init(r3, sizeof r3_st, &c3);
    EXPECT(posenc_rope_cache_rows(r3, &sp, far, 2, buf, sizeof buf), POSENC_ERR_POSITION);
  }
  { /* a rope struct that was never initialised (zeroed) */
    rope_store z_st; posenc_rope *z = &z_st.rope;
    memset(z, 0, sizeof z_st);
    EXPECT(posenc_rope_cache_table(z, &sp, 0, 4, buf, sizeof buf), POSENC_ERR_DIM);
    CHECK(posenc_rope_cache_width(z, HALF) == 0 && posenc_rope_cache_width(NULL, HALF) == 0, "width of nothing");
  }
#undef EXPECT
}

static void test_bad_apply(void) {
  enum { D = 64, T = 4, HQ = 4, HK = 2 };
  static float qb[T * HQ * D + 64], kb[T * HK * D + 64], snapq[T * HQ * D + 64], snapk[T * HK * D + 64];
  static float cache[300 * 2 * 32];
  float snapc[300 * 2 * 32];
  rope_store rope_st; posenc_rope *rope = &rope_st.rope;
  posenc_rope_config c = posenc_rope_default(D);
  posenc_rope_tensor q, k, t2;
  posenc_rope_positions pp = {1, T, NULL, 0}, p2;
  posenc_rope_cache_view cv, cv2;
  posenc_rope_cache_spec sp = {HALF, F32, 0};
  int32_t ids[3 * T] = {0, 1, 2, 3};
  size_t i;
  posenc_rope_init(rope, sizeof rope_st, &c);
  for (i = 0; i < sizeof qb / sizeof qb[0]; i++) qb[i] = lcg_val();
  for (i = 0; i < sizeof kb / sizeof kb[0]; i++) kb[i] = lcg_val();
  posenc_rope_cache_table(rope, &sp, 0, 300, cache, sizeof cache);
  memcpy(snapq, qb, sizeof qb); memcpy(snapk, kb, sizeof kb); memcpy(snapc, cache, sizeof cache);
  q.data = qb; q.dtype = F32; q.heads = HQ; q.batch_stride = q.token_stride = q.head_stride = 0;
  k = q; k.data = kb; k.heads = HK;
  cv.data = cache; cv.n_rows = 300; cv.spec = sp;
#define UNCHANGED() (memcmp(qb, snapq, sizeof qb) == 0 && memcmp(kb, snapk, sizeof kb) == 0 && memcmp(cache, snapc, sizeof cache) == 0)
#define EXPECT(call, code) do { posenc_status s_ = (call); \
    CHECK(s_ == (code), "%s -> %s, want %s", #call, posenc_strerror(s_), posenc_strerror(code)); \
    CHECK(UNCHANGED(), "%s wrote on error", #call); } while (0)
  EXPECT(posenc_rope_apply(NULL, NULL, &pp, &q, &k, FWD), POSENC_ERR_NULL);
  EXPECT(posenc_rope_apply(rope, NULL, NULL, &q, &k, FWD), POSENC_ERR_NULL);
  EXPECT(posenc_rope_apply(rope, NULL, &pp, NULL, &k, FWD), POSENC_ERR_NULL);
  t2 = q; t2.data = NULL; EXPECT(posenc_rope_apply(rope, NULL, &pp, &t2, &k, FWD), POSENC_ERR_NULL);
  t2 = k; t2.data = NULL; EXPECT(posenc_rope_apply(rope, NULL, &pp, &q, &t2, FWD), POSENC_ERR_NULL);
  cv2 = cv; cv2.data = NULL; EXPECT(posenc_rope_apply(rope, &cv2, &pp, &q, &k, FWD), POSENC_ERR_NULL);
  p2 = pp; p2.batch = 0; EXPECT(posenc_rope_apply(rope, NULL, &p2, &q, &k, FWD), POSENC_ERR_SIZE);
  p2 = pp; p2.tokens = 0; EXPECT(posenc_rope_apply(rope, NULL, &p2, &q, &k, FWD), POSENC_ERR_SIZE);
  t2 = q; t2.heads = 0; EXPECT(posenc_rope_apply(rope, NULL, &pp, &t2, &k, FWD), POSENC_ERR_SIZE);
  t2 = k; t2.heads = 0; EXPECT(posenc_rope_apply(rope, NULL, &pp, &q, &t2, FWD), POSENC_ERR_SIZE);
  t2 = q; t2.dtype = (posenc_dtype)5; EXPECT(posenc_rope_apply(rope, NULL, &pp, &t2, &k, FWD), POSENC_ERR_DTYPE);
  t2 = k; t2.dtype = (posenc_dtype)-1; EXPECT(posenc_rope_apply(rope, NULL, &pp, &q, &t2, FWD), POSENC_ERR_DTYPE);
  cv2 = cv; cv2.spec.dtype = (posenc_dtype)4; EXPECT(posenc_rope_apply(rope, &cv2, &pp, &q, &k, FWD), POSENC_ERR_DTYPE);
  cv2 = cv; cv2.spec.layout = (posenc_rope_cache_layout)7; EXPECT(posenc_rope_apply(rope, &cv2, &pp, &q, &k, FWD), POSENC_ERR_LAYOUT);
  cv2 = cv; cv2.spec.row_stride = 63; EXPECT(posenc_rope_apply(rope, &cv2, &pp, &q, &k, FWD), POSENC_ERR_STRIDE);
  cv2 = cv; cv2.n_rows = 0; EXPECT(posenc_rope_apply(rope, &cv2, &pp, &q, &k, FWD), POSENC_ERR_SIZE);
  EXPECT(posenc_rope_apply(rope, NULL, &pp, &q, &k, (posenc_rope_direction)2), POSENC_ERR_PARAM);
  /* positions: past the cache, negative with a cache, past INT32_MAX */
  p2 = pp; p2.ids = ids; ids[2] = 300; EXPECT(posenc_rope_apply(rope, &cv, &p2, &q, &k, FWD), POSENC_ERR_POSITION);
  ids[2] = -1; EXPECT(posenc_rope_apply(rope, &cv, &p2, &q, &k, FWD), POSENC_ERR_POSITION);
  ids[2] = 2;
  p2 = pp; p2.start = 297; EXPECT(posenc_rope_apply(rope, &cv, &p2, &q, &k, FWD), POSENC_ERR_POSITION);
  p2 = pp; p2.start = -1; EXPECT(posenc_rope_apply(rope, &cv, &p2, &q, &k, FWD), POSENC_ERR_POSITION);
  p2 = pp; p2.start = 2147483647 - 2; EXPECT(posenc_rope_apply(rope, NULL, &p2, &q, &k, FWD), POSENC_ERR_POSITION);
  p2 = pp; p2.start = 2147483647 - 3; p2.tokens = 1; /* fits: 1 token at INT32_MAX - 3 */
  {
    posenc_rope_tensor q1 = q, k1 = k;
    float one_q[HQ * D], one_k[HK * D];
    memcpy(one_q, qb, sizeof one_q); memcpy(one_k, kb, sizeof one_k);
    q1.data = one_q; k1.data = one_k;
    CHECK(posenc_rope_apply(rope, NULL, &p2, &q1, &k1, FWD) == POSENC_OK, "INT32_MAX - 3 is a valid position");
  }
  { /* M-RoPE: the h and w planes are checked too */
    rope_store mr_st; posenc_rope *mr = &mr_st.rope;
    posenc_rope_config mc = posenc_rope_default(D);
    mc.mrope = POSENC_ROPE_MROPE_SECTIONS; mc.mrope_section[0] = 10; mc.mrope_section[1] = 11; mc.mrope_section[2] = 11;
    posenc_rope_init(mr, sizeof mr_st, &mc);
    for (i = 0; i < 3 * T; i++) ids[i] = (int32_t)i;
    ids[2 * T + 1] = 300;
    p2 = pp; p2.ids = ids;
    EXPECT(posenc_rope_apply(mr, &cv, &p2, &q, &k, FWD), POSENC_ERR_POSITION);
    ids[2 * T + 1] = 1;
    for (i = 0; i < T; i++) ids[i] = (int32_t)i;
  }
  /* aliasing: k = q, k overlapping q, a tensor overlapping itself, q or k overlapping the cache */
  EXPECT(posenc_rope_apply(rope, NULL, &pp, &q, &q, FWD), POSENC_ERR_ALIAS);
  t2 = q; t2.data = qb + D / 2; t2.heads = 1; EXPECT(posenc_rope_apply(rope, NULL, &pp, &q, &t2, FWD), POSENC_ERR_ALIAS);
  t2 = q; t2.data = qb + 3 * D; t2.heads = 2; t2.token_stride = HQ * D; /* k's heads run into the next token's q heads */
  EXPECT(posenc_rope_apply(rope, NULL, &pp, &q, &t2, FWD), POSENC_ERR_ALIAS);
  t2 = q; t2.head_stride = D - 1; EXPECT(posenc_rope_apply(rope, NULL, &pp, &t2, &k, FWD), POSENC_ERR_ALIAS);
  t2 = q; t2.head_stride = D - 2; t2.heads = 2; EXPECT(posenc_rope_apply(rope, NULL, &pp, &t2, NULL, FWD), POSENC_ERR_ALIAS);
  t2 = q; t2.token_stride = HQ * D - 1; EXPECT(posenc_rope_apply(rope, NULL, &pp, &t2, NULL, FWD), POSENC_ERR_ALIAS);
  t2 = q; t2.token_stride = D; t2.head_stride = D; EXPECT(posenc_rope_apply(rope, NULL, &pp, &t2, NULL, FWD), POSENC_ERR_ALIAS);
  p2 = pp; p2.batch = 2; t2 = q; t2.batch_stride = HQ * D; t2.token_stride = HQ * D;
  EXPECT(posenc_rope_apply(rope, NULL, &p2, &t2, NULL, FWD), POSENC_ERR_ALIAS);
  t2 = q; t2.head_stride = 0; t2.heads = 1; t2.token_stride = D / 2; /* tokens overlap */
  EXPECT(posenc_rope_apply(rope, NULL, &pp, &t2, NULL, FWD), POSENC_ERR_ALIAS);
  /* a single head with head_stride < D is fine: nothing overlaps */
  {
    static float one[T * D];
    memcpy(one, qb, sizeof one);
    t2 = q; t2.data = one; t2.heads = 1; t2.head_stride = 3; t2.token_stride = D;
    CHECK(posenc_rope_apply(rope, NULL, &pp, &t2, NULL, FWD) == POSENC_OK, "one head, head_stride < D");
  }
  cv2 = cv; cv2.data = qb + 10; EXPECT(posenc_rope_apply(rope, &cv2, &pp, &q, &k, FWD), POSENC_ERR_ALIAS);
  cv2 = cv; cv2.data = kb; cv2.n_rows = 1; p2 = pp; p2.tokens = 1; t2 = k; t2.data = kb + 2 * 32 - 1;
  EXPECT(posenc_rope_apply(rope, &cv2, &p2, &q, &t2, FWD), POSENC_ERR_ALIAS);  /* k's first element = the cache's last */
  { /* a rope that was never initialised */
    rope_store z_st; posenc_rope *z = &z_st.rope;
    memset(z, 0, sizeof z_st);
    EXPECT(posenc_rope_apply(z, NULL, &pp, &q, &k, FWD), POSENC_ERR_DIM);
  }
  { /* |p| * omega beyond the exact reduction without a cache */
    rope_store r3_st; posenc_rope *r3 = &r3_st.rope;
    posenc_rope_config c3 = posenc_rope_default(D);
    c3.base = 1e-30;
    posenc_rope_init(r3, sizeof r3_st, &c3);
    p2 = pp; p2.start = 100;
    EXPECT(posenc_rope_apply(r3, NULL, &p2, &q, &k, FWD), POSENC_ERR_POSITION);
  }
  CHECK(UNCHANGED(), "buffers changed");
#undef EXPECT
#undef UNCHANGED
}

/* Former bugs, fixed:
 * 1. posenc_rope_init accepted LongRoPE with original_max_pos = 1 and factor > 1: ln(L) = 0 makes
 *    the attention factor sqrt(1 + ln s / 0) NaN, and every cache value NaN (HF raises
 *    ZeroDivisionError there). Expected: POSENC_ERR_PARAM.
 * 2. posenc_rope_apply without a cache, ids {INT32_MAX, 5}: posenc_i_rope_apply's test for
 *    consecutive ids computes ids[0] + (int32_t)tt in int32: signed overflow (UBSan reports it). */
/* ============================================================================================
 * ggml's parameters (formulas.md section 2.2): posenc_rope_config_from_ggml's config against
 * ggml's rope_yarn computed in long double from ggml's own parameters
 * ========================================================================================== */
/* cos and sin of pair i at position p, the way ggml_compute_forward_rope_flt defines them, in
 * exact arithmetic: theta_extrap = p * base^(-2i/n) / ff[i], YaRN's ramp mix of it with
 * freq_scale * theta_extrap, times attn_factor (times 1 + 0.1 ln(1/freq_scale) with YaRN). */
static void ggml_ref(const posenc_ggml_rope_params *g, int32_t p, size_t i, ld *c, ld *s) {
  ld n = (ld)g->n_dims, base = (ld)g->freq_base, fs = (ld)g->freq_scale, mscale = (ld)g->attn_factor;
  ld extrap = (ld)p * ref_powl(base, -2.0L * (ld)i / n) / (g->freq_factors ? (ld)g->freq_factors[i] : 1.0L);
  ld theta = fs * extrap;
  if (g->ext_factor != 0.0f) {
    /* ggml_rope_yarn_corr_dims; beta 0 makes a bound +inf */
    ld lo = g->beta_fast == 0.0f ? (ld)INFINITY
                                 : ref_floorl(n * ref_logl((ld)g->n_ctx_orig / ((ld)g->beta_fast * 2.0L * PI_L)) / (2.0L * ref_logl(base)));
    ld hi = g->beta_slow == 0.0f ? (ld)INFINITY
                                 : ref_ceill(n * ref_logl((ld)g->n_ctx_orig / ((ld)g->beta_slow * 2.0L * PI_L)) / (2.0L * ref_logl(base)));
    ld y, mix;
    if (lo < 0.0L) lo = 0.0L;
    if (hi > n - 1.0L) hi = n - 1.0L;
    y = isinf(lo) ? -(ld)INFINITY : ((ld)i - lo) / (hi - lo > 0.001L ? hi - lo : 0.001L);
    mix = (1.0L - (y < 0.0L ? 0.0L : y > 1.0L ? 1.0L : y)) * (ld)g->ext_factor;
    theta = theta * (1.0L - mix) + extrap * mix;
    mscale *= 1.0L + 0.1L * ref_logl(1.0L / fs);
  }
  *c = mscale * ref_cosl(theta);
  *s = mscale * ref_sinl(theta);
}

static void check_ggml(const char *name, const posenc_ggml_rope_params *g) {
  static const int32_t ps[6] = {0, 1, 7, 1000, 65535, 131071};
  posenc_rope_config cfg;
  rope_store rope_st; posenc_rope *rope = &rope_st.rope;
  posenc_rope_cache_spec sp = {HALF, F32, POSENC_ROPE_MAX_DIM};
  float row[6][POSENC_ROPE_MAX_DIM];
  size_t h = (size_t)g->n_dims / 2, i, r;
  ld worst = 0.0L, A = 0.0L;
  posenc_status st = posenc_rope_config_from_ggml(g, &cfg);
  CHECK(st == POSENC_OK, "%s: from_ggml: %s", name, posenc_strerror(st));
  if (st != POSENC_OK) return;
  CHECK((st = posenc_rope_init(rope, sizeof rope_st, &cfg)) == POSENC_OK, "%s: init: %s", name, posenc_strerror(st));
  CHECK(cfg.style == (g->mode == 0 ? GPTJ : NEOX) && cfg.rotary_dim == (size_t)g->n_dims && cfg.head_dim == g->head_dim,
        "%s: style or dims", name);
  if (st != POSENC_OK) return;
  posenc_rope_cache_rows(rope, &sp, ps, 6, row, sizeof row);
  for (r = 0; r < 6; r++)
    for (i = 0; i < h; i++) {
      ld c, s, e;
      ggml_ref(g, ps[r], i, &c, &s);
      e = ref_fabsl((ld)row[r][i] - c) > ref_fabsl((ld)row[r][h + i] - s) ? ref_fabsl((ld)row[r][i] - c) : ref_fabsl((ld)row[r][h + i] - s);
      if (e > worst) worst = e;
      if (ref_fabsl(c) > A) A = ref_fabsl(c);
    }
  /* posenc is within an f32 rounding of the exact value (plus the reference's own long double
   * angle error at 131071); a misread parameter is off by 1e-2 and more */
  CHECK(worst <= 1.2e-7L * (A > 1.0L ? A : 1.0L), "%s: |posenc - ggml's exact values| = %.3Lg", name, worst);
  printf("  ggml %s: max |posenc - exact ggml| %.3Lg (magnitude %.4Lf)\n", name, worst, A);
}

static void test_ggml_params(void) {
  float ff[64];
  posenc_ggml_rope_params g, b;
  posenc_rope_config cfg, snap;
  int i;
  for (i = 0; i < 64; i++) ff[i] = i < 16 ? 1.0f : i < 40 ? 1.0f + (float)(i - 16) / 8.0f : 4.0f; /* llama3-like */
  memset(&g, 0, sizeof g);
  g.mode = 0; g.head_dim = 128; g.n_dims = 128; g.freq_base = 10000.0f; g.freq_scale = 1.0f; g.attn_factor = 1.0f;
  check_ggml("ggml_rope defaults, NORMAL", &g);
  g.mode = 2; g.freq_base = 500000.0f; g.freq_scale = 0.25f; g.attn_factor = 1.25f;
  check_ggml("NEOX linear 4, attn 1.25", &g);
  /* llama.cpp's YaRN: ext_factor 1, betas 32/1; attn_factor multiplies YaRN's magnitude */
  g.freq_base = 1000000.0f; g.freq_scale = 0.25f; g.ext_factor = 1.0f; g.attn_factor = 0.8f; g.n_ctx_orig = 32768;
  g.beta_fast = 32.0f; g.beta_slow = 1.0f;
  check_ggml("NEOX YaRN 4, attn 0.8, betas 32/1", &g);
  g.n_dims = 96; g.mode = 0; g.beta_fast = 24.0f; g.beta_slow = 2.0f;
  check_ggml("NORMAL YaRN partial 96/128, betas 24/2", &g);
  /* beta_fast 0: no pair is interpolated; the magnitude stays */
  g.beta_fast = 0.0f; g.beta_slow = 0.0f;
  check_ggml("YaRN betas 0/0 (extrapolation)", &g);
  g.mode = 2; g.ext_factor = 0.0f; g.freq_scale = 1.0f; g.attn_factor = 1.0f; g.n_dims = 128; g.freq_factors = ff;
  check_ggml("NEOX freq_factors", &g);
  g.freq_factors = NULL; g.mode = 8; g.sections[0] = 24; g.sections[1] = 20; g.sections[2] = 20;
  CHECK(posenc_rope_config_from_ggml(&g, &cfg) == POSENC_OK && cfg.mrope == POSENC_ROPE_MROPE_SECTIONS &&
        cfg.mrope_section[0] == 24 && cfg.mrope_section[2] == 20 && cfg.style == NEOX, "MROPE sections");
  g.mode = 40;
  CHECK(posenc_rope_config_from_ggml(&g, &cfg) == POSENC_OK && cfg.mrope == POSENC_ROPE_MROPE_INTERLEAVED, "IMROPE");
  g.mode = 2; g.sections[0] = g.sections[1] = g.sections[2] = 0;

  /* errors leave the config untouched */
  memset(&snap, 0x5a, sizeof snap);
#define GGML_BAD(edit, code) do { b = g; edit; cfg = snap; \
    CHECK(posenc_rope_config_from_ggml(&b, &cfg) == (code) && memcmp(&cfg, &snap, sizeof cfg) == 0, "from_ggml: %s", #edit); } while (0)
  CHECK(posenc_rope_config_from_ggml(NULL, &cfg) == POSENC_ERR_NULL, "from_ggml NULL params");
  CHECK(posenc_rope_config_from_ggml(&g, NULL) == POSENC_ERR_NULL, "from_ggml NULL config");
  GGML_BAD(b.n_dims = 127, POSENC_ERR_DIM);
  GGML_BAD(b.n_dims = 130, POSENC_ERR_DIM);
  GGML_BAD(b.n_dims = 0, POSENC_ERR_DIM);
  GGML_BAD(b.head_dim = 1, POSENC_ERR_DIM);
  GGML_BAD(b.mode = 24, POSENC_ERR_PARAM);
  GGML_BAD(b.mode = 1, POSENC_ERR_PARAM);
  GGML_BAD(b.ext_factor = 0.5f, POSENC_ERR_PARAM);
  GGML_BAD(b.freq_scale = 0.0f, POSENC_ERR_PARAM);
  GGML_BAD(b.freq_scale = (float)INFINITY, POSENC_ERR_PARAM);
  GGML_BAD(b.attn_factor = 0.0f, POSENC_ERR_PARAM);
  GGML_BAD(b.attn_factor = (float)NAN, POSENC_ERR_PARAM);
  GGML_BAD((b.ext_factor = 1.0f, b.n_ctx_orig = 0), POSENC_ERR_PARAM);
  GGML_BAD((b.ext_factor = 1.0f, b.beta_fast = 32.0f, b.beta_slow = 0.0f), POSENC_ERR_PARAM);
  GGML_BAD((b.ext_factor = 1.0f, b.freq_scale = 1e5f), POSENC_ERR_PARAM);
  GGML_BAD((b.mode = 8, b.sections[0] = 64, b.sections[3] = 2), POSENC_ERR_PARAM);
  GGML_BAD((b.mode = 8, b.sections[0] = -1), POSENC_ERR_PARAM);
#undef GGML_BAD
}

static void test_known_bugs(void) {
  {
    rope_store r_st;
    posenc_rope *r = &r_st.rope;
    posenc_rope_config c = cfg_of(8, 10000.0, POSENC_ROPE_SCALING_LONGROPE, 8.0, 1);
    posenc_status st;
    c.short_factor = lr_short; c.long_factor = lr_long;
    st = posenc_rope_init(r, sizeof r_st, &c);
    CHECK(st == POSENC_ERR_PARAM, "longrope L = 1: init %s (attention factor %g)", posenc_strerror(st),
          st == POSENC_OK ? r->attention_factor : 0.0);
  }
  {
    rope_store rope_st; posenc_rope *rope = make_rope(&rope_st, 8, 8, NEOX, 10000.0);
    int32_t ids[2] = {2147483647, 5};
    posenc_rope_positions pp = {1, 2, NULL, 0};
    tview q = dense_view(0, 1, 2, 8, F32);
    pp.ids = ids;
    free(run_rot("ids from INT32_MAX (UBSan)", rope, NULL, &pp, &q, NULL, FWD, NULL, NULL));
  }
}

/* Buffers at any byte address (posenc.h: "Buffers"): a cache, q and k shifted off their natural
 * alignment by 1-3 bytes rotate to the same bits as aligned ones. A misaligned f32 cache row was
 * handed to the kernels as a float pointer (undefined behaviour; UBSan's alignment check in the
 * sanitizer build; a fault on cores that trap unaligned loads). */
static void test_misaligned(void) {
  static union { double align; unsigned char b[4 * 16 * 64 + 64]; } cache_mem, q_mem, k_mem;
  static unsigned char ref_q[2 * 3 * 64 * 4], ref_k[3 * 64 * 4];
  rope_store rope_st; posenc_rope *rope = make_rope(&rope_st, 64, 64, NEOX, 10000.0);
  posenc_rope_cache_spec spec = {POSENC_ROPE_CACHE_HALF, F32, 0};
  posenc_dtype dts[2] = {F32, F16};
  size_t d, i;
  for (d = 0; d < 2; d++) {
    posenc_dtype dt = dts[d];
    size_t es = posenc_dtype_size(dt), qb = 2 * 3 * 64 * es, kb = 3 * 64 * es, off;
    for (off = 0; off < 4; off++) {
      posenc_rope_cache_view view;
      posenc_rope_positions pos = {1, 3, NULL, 5};
      posenc_rope_tensor q = {NULL, F32, 2, 0, 0, 0}, k = {NULL, F32, 1, 0, 0, 0};
      posenc_status st;
      unsigned char *c = cache_mem.b + off, *qd = q_mem.b + 3 - off, *kd = k_mem.b + off;
      spec.dtype = F32;
      CHECK(posenc_rope_cache_table(rope, &spec, 0, 16, c, 16 * 64 * 4) == POSENC_OK, "misaligned cache table");
      view.data = c; view.n_rows = 16; view.spec = spec;
      for (i = 0; i < qb; i++) qd[i] = (unsigned char)(i * 37 + 11) & 0x3f; /* small finite values */
      for (i = 0; i < kb; i++) kd[i] = (unsigned char)(i * 53 + 7) & 0x3f;
      q.data = qd; k.data = kd; q.dtype = k.dtype = dt;
      st = posenc_rope_apply(rope, &view, &pos, &q, &k, FWD);
      CHECK(st == POSENC_OK, "misaligned by %u, %s: %s", (unsigned)off, posenc_dtype_name(dt), posenc_strerror(st));
      if (off == 0) { memcpy(ref_q, qd, qb); memcpy(ref_k, kd, kb); continue; }
      CHECK(memcmp(ref_q, qd, qb) == 0 && memcmp(ref_k, kd, kb) == 0,
            "%s: rotation with buffers misaligned by %u differs from aligned", posenc_dtype_name(dt), (unsigned)off);
    }
  }
}

/* ============================================================================================
 * A rope's storage (posenc.h: a header, then the frequencies of its rotary dim, in storage the
 * caller provides): its size, the refusals (too small, misaligned, copied or moved, never
 * initialised), and that a rope in exactly the storage it needs computes what one in the largest
 * storage does.
 * ========================================================================================== */
struct double_align { char c; double d; };
#define DOUBLE_ALIGN offsetof(struct double_align, d)

/* Everything a rope computes, one result after another: its cache in every layout (f32, bf16)
 * for positions 0..39 and for a list out to 2^24 - 1, then q (40 tokens, 2 heads) rotated on the
 * fly forward from 2^24 - 41, inverse from 0, and with the f32 HALF cache. malloc'd; NULL (and
 * *st the status) on an error. */
enum { SO_ROWS = 40, SO_HEADS = 2 };
static unsigned char *rope_outputs(const posenc_rope *rope, size_t *len, posenc_status *st) {
  static const int32_t list[6] = {0, 1, 31, 32, 65535, 16777215};
  const size_t D = rope->config.head_dim, qn = (size_t)SO_ROWS * SO_HEADS * D;
  const size_t cap = 6 * (SO_ROWS + 6) * 4 * D * 4 + 3 * qn * 4;
  unsigned char *out = (unsigned char *)malloc(cap);
  float *q = (float *)malloc(qn * sizeof(float));
  size_t at = 0, bytes = 0, i;
  int lay, d, pass;
  *st = POSENC_OK;
  for (lay = 0; lay < 3 && *st == POSENC_OK; lay++)
    for (d = 0; d < 2 && *st == POSENC_OK; d++) {
      posenc_rope_cache_spec sp;
      sp.layout = (posenc_rope_cache_layout)lay; sp.dtype = d ? BF16 : F32; sp.row_stride = 0;
      if ((*st = posenc_rope_cache_bytes(rope, &sp, SO_ROWS, &bytes)) != POSENC_OK ||
          (*st = posenc_rope_cache_table(rope, &sp, 0, SO_ROWS, out + at, cap - at)) != POSENC_OK)
        break;
      at += bytes;
      if ((*st = posenc_rope_cache_bytes(rope, &sp, 6, &bytes)) != POSENC_OK ||
          (*st = posenc_rope_cache_rows(rope, &sp, list, 6, out + at, cap - at)) != POSENC_OK)
        break;
      at += bytes;
    }
  for (pass = 0; pass < 3 && *st == POSENC_OK; pass++) {
    posenc_rope_positions pp = {1, SO_ROWS, NULL, 0};
    posenc_rope_tensor qt = {NULL, F32, SO_HEADS, 0, 0, 0};
    posenc_rope_cache_view cv;
    uint32_t seed = 77u + (uint32_t)pass;
    for (i = 0; i < qn; i++) {
      seed = seed * 1664525u + 1013904223u;
      q[i] = (float)((int)((seed >> 8) % 511u) - 255) / 64.0f;
    }
    cv.data = out; cv.n_rows = SO_ROWS; /* the first table: HALF f32, positions 0..39 */
    cv.spec.layout = HALF; cv.spec.dtype = F32; cv.spec.row_stride = 0;
    pp.start = pass == 0 ? 16777215 - SO_ROWS : 0;
    qt.data = q;
    if ((*st = posenc_rope_apply(rope, pass == 2 ? &cv : NULL, &pp, &qt, NULL,
                                 pass == 1 ? POSENC_ROPE_INVERSE : POSENC_ROPE_FORWARD)) != POSENC_OK)
      break;
    memcpy(out + at, q, qn * sizeof(float));
    at += qn * sizeof(float);
  }
  free(q);
  if (*st != POSENC_OK) { free(out); return NULL; }
  *len = at;
  return out;
}

/* 1 if two ropes compute the same bytes (rope_outputs). */
static int same_outputs(const char *name, const posenc_rope *a, const posenc_rope *b) {
  size_t la = 0, lb = 0;
  posenc_status sa, sb;
  unsigned char *oa = rope_outputs(a, &la, &sa), *ob = rope_outputs(b, &lb, &sb);
  int same = oa && ob && la == lb && memcmp(oa, ob, la) == 0;
  CHECK(oa && ob, "%s: %s / %s", name, posenc_strerror(sa), posenc_strerror(sb));
  free(oa); free(ob);
  return same;
}

static void test_storage(void) {
  /* posenc_rope_bytes is POSENC_ROPE_BYTES of the rotary dim, and grows with it */
  {
    static const size_t dims[4] = {2, 64, 128, 512};
    const size_t want[4] = {POSENC_ROPE_BYTES(2), POSENC_ROPE_BYTES(64), POSENC_ROPE_BYTES(128), POSENC_ROPE_BYTES(512)};
    posenc_rope_config c;
    size_t k, b, prev = 0, d;
    int bad = 0;
    for (k = 0; k < 4; k++) {
      c = posenc_rope_default(dims[k]);
      b = 0;
      CHECK(posenc_rope_bytes(&c, &b) == POSENC_OK && b == want[k], "rope_bytes d=%u: %u, POSENC_ROPE_BYTES %u",
            (unsigned)dims[k], (unsigned)b, (unsigned)want[k]);
      CHECK(b > prev, "rope_bytes d=%u: %u, not above d=%u's %u", (unsigned)dims[k], (unsigned)b,
            k ? (unsigned)dims[k - 1] : 0u, (unsigned)prev);
      CHECK(b > sizeof(posenc_rope) + dims[k] / 2 * sizeof(double), "rope_bytes d=%u: %u holds no frequencies",
            (unsigned)dims[k], (unsigned)b);
      prev = b;
    }
    for (d = 2; d <= POSENC_ROPE_MAX_DIM; d += 2) { /* every rotary dim: the macro, never shrinking */
      c = posenc_rope_default(d);
      if ((posenc_rope_bytes(&c, &b) != POSENC_OK || b != POSENC_ROPE_BYTES(d) ||
           POSENC_ROPE_BYTES(d) < POSENC_ROPE_BYTES(d - 2)) && bad++ < 3)
        CHECK(0, "rope_bytes d=%u: %u, POSENC_ROPE_BYTES %u", (unsigned)d, (unsigned)b, (unsigned)POSENC_ROPE_BYTES(d));
    }
    CHECK(bad == 0, "rope_bytes: %d rotary dims off", bad);
    c = posenc_rope_default(512); c.rotary_dim = 64; /* the rotary dim counts, not head_dim */
    CHECK(posenc_rope_bytes(&c, &b) == POSENC_OK && b == POSENC_ROPE_BYTES(64), "rope_bytes partial: %u", (unsigned)b);
    c = posenc_rope_default(96); c.rotary_dim = 0;
    CHECK(posenc_rope_bytes(&c, &b) == POSENC_OK && b == POSENC_ROPE_BYTES(96), "rope_bytes rotary_dim 0: %u", (unsigned)b);
    CHECK(POSENC_ROPE_BYTES(64) < 2560, "a rope of rotary dim 64 takes %u bytes, 2.5 KiB or more",
          (unsigned)POSENC_ROPE_BYTES(64));
    printf("rope storage: d=64 %u bytes, d=128 %u, d=512 %u (header %u)\n", (unsigned)POSENC_ROPE_BYTES(64),
           (unsigned)POSENC_ROPE_BYTES(128), (unsigned)POSENC_ROPE_BYTES(512), (unsigned)sizeof(posenc_rope));
    /* errors leave *bytes alone */
    b = 12345;
    CHECK(posenc_rope_bytes(NULL, &b) == POSENC_ERR_NULL && b == 12345, "rope_bytes(NULL config)");
    c = posenc_rope_default(64);
    CHECK(posenc_rope_bytes(&c, NULL) == POSENC_ERR_NULL, "rope_bytes(NULL bytes)");
    c.rotary_dim = 63;
    CHECK(posenc_rope_bytes(&c, &b) == POSENC_ERR_DIM && b == 12345, "rope_bytes odd rotary dim");
    c = posenc_rope_default(POSENC_ROPE_MAX_DIM + 2);
    CHECK(posenc_rope_bytes(&c, &b) == POSENC_ERR_DIM && b == 12345, "rope_bytes past POSENC_ROPE_MAX_DIM");
    c = posenc_rope_default(64); c.base = -1.0;
    CHECK(posenc_rope_bytes(&c, &b) == POSENC_ERR_BASE && b == 12345, "rope_bytes bad base");
  }
  /* init: a byte short, or misaligned, is BUFFER with the storage untouched; exactly enough is OK
   * and writes nothing past it */
  {
    static union { double align; unsigned char b[POSENC_ROPE_BYTES(64) + 64]; } buf;
    static unsigned char snap[sizeof buf.b];
    POSENC_ROPE_STORAGE(64) st64;
    posenc_rope_config c = posenc_rope_default(64);
    size_t need = 0;
    CHECK(posenc_rope_bytes(&c, &need) == POSENC_OK && need == POSENC_ROPE_BYTES(64), "rope_bytes d=64");
    memset(buf.b, 0xA5, sizeof buf.b); memcpy(snap, buf.b, sizeof snap);
    CHECK(posenc_rope_init((posenc_rope *)(void *)buf.b, need - 1, &c) == POSENC_ERR_BUFFER &&
          memcmp(buf.b, snap, sizeof snap) == 0, "init with a byte short: BUFFER, storage untouched");
    CHECK(posenc_rope_init((posenc_rope *)(void *)buf.b, 0, &c) == POSENC_ERR_BUFFER &&
          memcmp(buf.b, snap, sizeof snap) == 0, "init with 0 bytes");
    if (DOUBLE_ALIGN > 1) {
      CHECK(posenc_rope_init((posenc_rope *)(void *)(buf.b + 1), need, &c) == POSENC_ERR_BUFFER &&
            memcmp(buf.b, snap, sizeof snap) == 0, "init misaligned by 1 byte: BUFFER, storage untouched");
      CHECK(posenc_rope_init((posenc_rope *)(void *)(buf.b + DOUBLE_ALIGN - 1), need, &c) == POSENC_ERR_BUFFER &&
            memcmp(buf.b, snap, sizeof snap) == 0, "init misaligned by %u bytes", (unsigned)(DOUBLE_ALIGN - 1));
    }
    CHECK(posenc_rope_init((posenc_rope *)(void *)buf.b, need, &c) == POSENC_OK, "init in exactly posenc_rope_bytes");
    {
      size_t i;
      int past = 0;
      for (i = need; i < sizeof buf.b; i++) past |= buf.b[i] != 0xA5;
      CHECK(!past, "init wrote past posenc_rope_bytes");
    }
    CHECK(sizeof st64 >= need && posenc_rope_init(&st64.rope, sizeof st64, &c) == POSENC_OK &&
          same_outputs("d=64: exact buffer vs POSENC_ROPE_STORAGE(64)", (posenc_rope *)(void *)buf.b, &st64.rope),
          "POSENC_ROPE_STORAGE(64) and an exact buffer differ");
    CHECK(posenc_rope_init((posenc_rope *)(void *)(buf.b + DOUBLE_ALIGN), need, &c) == POSENC_OK,
          "init at the next double");
  }
  /* a copy (by value, or the whole storage) is refused as DIM, writing nothing; init-ing the new
   * place makes it compute what the original does */
  {
    rope_store a_st, b_st;
    posenc_rope *a = &a_st.rope, *b = &b_st.rope, hdr;
    posenc_rope_config c = posenc_rope_default(64);
    posenc_rope_cache_spec sp = {HALF, F32, 0};
    posenc_rope_positions pp = {1, 2, NULL, 5};
    float q[2 * 64], qs[2 * 64];
    unsigned char out[4 * 64 * 4];
    posenc_rope_tensor qt = {NULL, F32, 1, 0, 0, 0};
    size_t i, bytes = 7;
    int pass;
    qt.data = q;
    c.style = GPTJ;
    memset(&a_st, 0, sizeof a_st); /* init defines the bytes it uses; the storage is compared whole */
    CHECK(posenc_rope_init(a, sizeof a_st, &c) == POSENC_OK, "copy: init");
    for (i = 0; i < 2 * 64; i++) qs[i] = (float)i / 16.0f - 4.0f;
    for (pass = 0; pass < 2; pass++) {
      const posenc_rope *cp;
      const char *how = pass ? "memcpy'd storage" : "a copy by value";
      if (pass) { memcpy(&b_st, &a_st, sizeof b_st); cp = b; } else { hdr = *a; cp = &hdr; }
      memcpy(q, qs, sizeof q);
      memset(out, CANARY, sizeof out);
      CHECK(posenc_rope_apply(cp, NULL, &pp, &qt, NULL, POSENC_ROPE_FORWARD) == POSENC_ERR_DIM &&
            memcmp(q, qs, sizeof q) == 0, "%s: apply not refused (or wrote)", how);
      CHECK(posenc_rope_cache_table(cp, &sp, 0, 4, out, sizeof out) == POSENC_ERR_DIM &&
            posenc_rope_cache_rows(cp, &sp, &pp.start, 1, out, sizeof out) == POSENC_ERR_DIM &&
            tl_all_canary(out, sizeof out), "%s: cache_table/rows not refused (or wrote)", how);
      CHECK(posenc_rope_cache_width(cp, HALF) == 0 && posenc_rope_cache_width(cp, FULL) == 0, "%s: width", how);
      CHECK(posenc_rope_cache_bytes(cp, &sp, 4, &bytes) == POSENC_ERR_DIM && bytes == 7, "%s: cache_bytes", how);
      CHECK(posenc_rope_inv_freq(cp) == NULL && posenc_rope_inv_freq_f32(cp) == NULL, "%s: inv_freq", how);
    }
    /* set_seq_len on the copy: refused, nothing written */
    {
      static unsigned char snap[sizeof b_st];
      memcpy(snap, &b_st, sizeof snap);
      CHECK(posenc_rope_set_seq_len(b, 9000) == POSENC_ERR_DIM && memcmp(snap, &b_st, sizeof snap) == 0,
            "set_seq_len on a memcpy'd rope");
      hdr = *a;
      memcpy(snap, &hdr, sizeof hdr);
      CHECK(posenc_rope_set_seq_len(&hdr, 9000) == POSENC_ERR_DIM && memcmp(snap, &hdr, sizeof hdr) == 0,
            "set_seq_len on a rope copied by value");
    }
    CHECK(posenc_rope_init(b, sizeof b_st, &c) == POSENC_OK, "copy: init the new place");
    CHECK(same_outputs("init where the copy was", a, b), "the rope made where a copy was computes otherwise");
    CHECK(posenc_rope_cache_width(b, HALF) == 64, "the new place's width");
    /* the original still works after all that */
    memcpy(q, qs, sizeof q);
    CHECK(posenc_rope_apply(a, NULL, &pp, &qt, NULL, POSENC_ROPE_FORWARD) == POSENC_OK && memcmp(q, qs, sizeof q) != 0,
          "the original after its copies");
  }
  /* exactly posenc_rope_bytes (malloc'd, so ASan and valgrind see a read past it) vs the largest
   * storage: the same bits from every entry point, NeoX and GPT-J, hf_compat on and off, on the
   * fly and cached; also a partial rotary and a YaRN rope */
  {
    int variant;
    for (variant = 0; variant < 6; variant++) {
      rope_store big_st;
      posenc_rope_config c = posenc_rope_default(64);
      posenc_rope *small;
      size_t need = 0;
      char name[96];
      if (variant < 4) {
        c.style = variant % 2 ? GPTJ : NEOX;
        c.hf_compat = variant / 2;
      } else if (variant == 4) {
        c = posenc_rope_default(80); c.rotary_dim = 64; c.style = GPTJ;
      } else {
        c = cfg_of(64, 10000.0, POSENC_ROPE_SCALING_YARN, 8.0, 4096);
      }
      sprintf(name, "exact storage d=64 %s hf_compat %d%s", c.style ? "gptj" : "neox", c.hf_compat,
              variant == 4 ? " head_dim 80" : variant == 5 ? " yarn" : "");
      if (posenc_rope_bytes(&c, &need) != POSENC_OK) { CHECK(0, "%s: rope_bytes", name); continue; }
      small = (posenc_rope *)malloc(need);
      CHECK(need == POSENC_ROPE_BYTES(64), "%s: %u bytes", name, (unsigned)need);
      CHECK(posenc_rope_init(small, need, &c) == POSENC_OK && posenc_rope_init(&big_st.rope, sizeof big_st, &c) == POSENC_OK,
            "%s: init", name);
      CHECK(same_outputs(name, small, &big_st.rope), "%s: differs from the rope in POSENC_ROPE_STORAGE(512)", name);
      CHECK(memcmp(posenc_rope_inv_freq(small), posenc_rope_inv_freq(&big_st.rope), 32 * sizeof(double)) == 0 &&
            (posenc_rope_inv_freq_f32(small) != NULL) == (c.hf_compat != 0) &&
            (!c.hf_compat || memcmp(posenc_rope_inv_freq_f32(small), posenc_rope_inv_freq_f32(&big_st.rope),
                                    32 * sizeof(float)) == 0),
            "%s: frequencies differ", name);
      free(small);
    }
  }
  /* posenc_rope_inv_freq(_f32): NULL for NULL, garbage, zeroes; _f32 NULL without hf_compat */
  {
    rope_store g_st;
    posenc_rope_config c = posenc_rope_default(8);
    CHECK(posenc_rope_inv_freq(NULL) == NULL && posenc_rope_inv_freq_f32(NULL) == NULL, "inv_freq(NULL)");
    memset(&g_st, 0x5a, sizeof g_st);
    CHECK(posenc_rope_inv_freq(&g_st.rope) == NULL && posenc_rope_inv_freq_f32(&g_st.rope) == NULL, "inv_freq(garbage)");
    memset(&g_st, 0, sizeof g_st);
    CHECK(posenc_rope_inv_freq(&g_st.rope) == NULL && posenc_rope_inv_freq_f32(&g_st.rope) == NULL, "inv_freq(zeroes)");
    CHECK(posenc_rope_init(&g_st.rope, sizeof g_st, &c) == POSENC_OK && posenc_rope_inv_freq(&g_st.rope) != NULL &&
          posenc_rope_inv_freq_f32(&g_st.rope) == NULL, "inv_freq_f32 without hf_compat");
    c.hf_compat = 1;
    CHECK(posenc_rope_init(&g_st.rope, sizeof g_st, &c) == POSENC_OK && posenc_rope_inv_freq(&g_st.rope) != NULL &&
          posenc_rope_inv_freq_f32(&g_st.rope) != NULL && posenc_rope_inv_freq_f32(&g_st.rope)[0] == 1.0f,
          "inv_freq_f32 with hf_compat");
  }
  /* set_seq_len on a rope never initialised (garbage, zeroes): DIM, nothing written */
  {
    static rope_store g_st;
    static unsigned char snap[sizeof g_st];
    int fill;
    for (fill = 0; fill < 2; fill++) {
      memset(&g_st, fill ? 0 : 0x5a, sizeof g_st);
      memcpy(snap, &g_st, sizeof snap);
      CHECK(posenc_rope_set_seq_len(&g_st.rope, 100) == POSENC_ERR_DIM && memcmp(snap, &g_st, sizeof snap) == 0,
            "set_seq_len on %s: not refused, or wrote", fill ? "zeroes" : "garbage");
    }
    CHECK(posenc_rope_set_seq_len(NULL, 100) == POSENC_ERR_NULL, "set_seq_len(NULL)");
  }
}

int main(void) {
  init_lists();
  bk_report(stdout);
  CHECK(ref_check() == 0, "the long double references (refmath.h) are off on this platform");
  test_freqs();
  test_hf_compat();
  test_cache_values();
  test_sinusoidal_equivalence();
  test_bad_init();
  test_storage();
  test_bad_cache();
  test_bad_apply();
  test_known_bugs();
  test_ggml_params();
  test_rotation_out_errors();
  test_store_kv_errors();
  test_norm_errors();
  test_norm_accuracy();
  /* the rotation suite on every backend: each compared bit for bit with the plain reference */
  BK_FOR_EACH(it) {
    int before = tl_failed;
    test_rotation_shapes();
    test_rotation_cached();
    test_rotation_out();
    test_rotation_norm();
    test_store_kv();
    test_streaming();
    test_large_input();
    test_mrope();
    test_step_rows();
    test_rows_segments();
    test_reach_bound();
    test_decode_ranges();
    test_rotation_carried();
    test_rotation_fused();
    test_properties();
    test_misaligned();
    printf("backend %s: rotation suite %s\n", posenc_isa_name(it.isa), tl_failed == before ? "ok" : "FAILED");
  }
  test_backends();
  test_bf16_specials();
  return tl_summary();
}
