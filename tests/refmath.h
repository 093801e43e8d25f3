/* refmath.h - long double exp, log, pow, sin, cos and sqrt for the tests' reference values,
 * written with + - * / alone, so that they are as accurate as the platform's long double is wide.
 *
 * libm's long double functions are not that everywhere: on wasm32 (wasi-libc, musl) long double
 * is IEEE binary128 but powl, expl and logl are musl's double functions behind a cast, so a
 * reference computed with them is off by 1e-16 where the test expects 1e-34. Here the answer is
 * within a few units in the last place of whatever long double is: x87's 64-bit significand,
 * binary128 (aarch64, riscv64, s390x, wasm32, in software), ppc64le's double-double (106 bits),
 * or double (valgrind, which computes
 * x87 long double in double; where long double is double, libm's double functions are used).
 * ref_eps() says which, as measured.
 *
 * Method (the textbook one; e.g. Muller, "Elementary Functions", chapters 6 and 11): reduce the
 * argument by a multiple of ln 2 or pi/2 held as eight 24-bit pieces (each product with a
 * multiple below 2^40 exact in x87's 64 bits), then a Taylor series carried until its terms
 * fall below eps/64 of the sum. Slow, plain and independent of posenc's own double-double code.
 * ref_check() compares every function with values computed to 36 digits outside C (C99: the
 * constants are hexadecimal floating literals). */
#ifndef POSENC_TEST_REFMATH_H
#define POSENC_TEST_REFMATH_H

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>

typedef long double ref_ld;

/* floor, ceil and |x| of a long double, exact on every libm; where long double is double
 * (MSVC; Wine's C library headers have no floorl), the double functions. */
#if LDBL_MANT_DIG > DBL_MANT_DIG
#  define ref_floorl floorl
#  define ref_ceill ceill
#  define ref_fabsl fabsl
#else
#  define ref_floorl(x) ((ref_ld)floor((double)(x)))
#  define ref_ceill(x) ((ref_ld)ceil((double)(x)))
#  define ref_fabsl(x) ((ref_ld)fabs((double)(x)))
#endif


/* The long double epsilon the arithmetic actually has (measured, so that valgrind's double
 * arithmetic is seen for what it is): 2^-63 on x87, 2^-112 in binary128, 2^-52 in double. At
 * least 2^(1 - LDBL_MANT_DIG): ppc64le's double-double holds 1 + 2^-1000 exactly (GCC's
 * LDBL_EPSILON there is the smallest subnormal), yet its precision is 106 bits. */
static ref_ld ref_eps(void) {
  static ref_ld eps = 0.0L;
  if (eps == 0.0L) {
    volatile ref_ld e = 1.0L, one_plus;
    ref_ld mant = 1.0L;
    int i;
    for (;;) {
      one_plus = 1.0L + e / 2.0L;
      if (one_plus == 1.0L) break;
      e = e / 2.0L;
    }
    for (i = 1; i < LDBL_MANT_DIG; i++) mant /= 2.0L;
    eps = e > mant ? e : mant;
  }
  return eps;
}

#if LDBL_MANT_DIG > DBL_MANT_DIG /* else libm's double functions: see ref_expl below */
/* pi/2 and ln 2 as sums of eight doubles of 24 significant bits each (192 bits; printed from a
 * 150-digit Machin's formula and Python's decimal ln). */
static const double ref_pio2_parts[8] = {0x1.921fb6p+0,    -0x1.777a5cp-25, -0x1.ee59dap-50, 0x1.98a2e0p-77,
                                         0x1.b839a2p-104,  0x1.481270p-130, 0x1.114cfap-156, -0x1.c5fefap-182};
static const double ref_ln2_parts[8] = {0x1.62e430p-1,    -0x1.05c610p-29, -0x1.950d88p-54, 0x1.d9cc02p-79,
                                        -0x1.a12a18p-109, 0x1.e6864cp-137, 0x1.ca62d8p-162, 0x1.6c5068p-187};
#define REF_TWO_OVER_PI 0.636619772367581343075535053490057448137838582961L

/* x - k * c for the constant c given in parts, k a whole number. */
static ref_ld ref_reduce(ref_ld x, ref_ld k, const double *parts) {
  int i;
  for (i = 0; i < 8; i++) x -= k * (ref_ld)parts[i];
  return x;
}

static ref_ld ref_nearest(ref_ld x) { return ref_floorl(x + 0.5L); }

/* x * 2^k, exactly (unless it overflows or underflows). */
static ref_ld ref_scale2(ref_ld x, long k) {
  for (; k >= 32; k -= 32) x *= 4294967296.0L;
  for (; k <= -32; k += 32) x /= 4294967296.0L;
  return k >= 0 ? x * (ref_ld)(1ul << k) : x / (ref_ld)(1ul << -k);
}

static ref_ld ref_sqrt_newton(ref_ld x) {
  ref_ld y;
  int i;
  if (!(x > 0.0L)) return x == 0.0L ? x : (ref_ld)NAN;
  y = (ref_ld)sqrt((double)x); /* within 2^-53, then Newton: 2^-106, 2^-212 */
  for (i = 0; i < 2; i++) y = 0.5L * (y + x / y);
  return y;
}

static ref_ld ref_exp_series(ref_ld x) {
  ref_ld k = ref_nearest(x / (ref_ld)ref_ln2_parts[0]), r = ref_reduce(x, k, ref_ln2_parts);
  ref_ld sum = 1.0L, term = 1.0L;
  int n;
  for (n = 1; ref_fabsl(term) > sum * ref_eps() / 64.0L; n++) { /* |r| <= 0.35: 20 terms in binary128 */
    term = term * r / (ref_ld)n;
    sum += term;
  }
  return ref_scale2(sum, (long)k);
}

static ref_ld ref_log_series(ref_ld x) {
  long k = 0;
  ref_ld s, s2, sum = 0.0L, pow_s;
  int n;
  if (!(x > 0.0L)) return x == 0.0L ? (ref_ld)-INFINITY : (ref_ld)NAN;
  while (x >= 4294967296.0L) { x /= 4294967296.0L; k += 32; }
  while (x < 1.0L / 4294967296.0L) { x *= 4294967296.0L; k -= 32; }
  while (x > 1.4142135623730950488L) { x /= 2.0L; k++; }
  while (x < 0.70710678118654752440L) { x *= 2.0L; k--; }
  /* log x = 2 atanh(s), s = (x - 1) / (x + 1), |s| <= 0.172 */
  s = (x - 1.0L) / (x + 1.0L);
  s2 = s * s;
  pow_s = s;
  for (n = 1; ref_fabsl(pow_s) > ref_fabsl(s) * ref_eps() / 64.0L; n += 2) {
    sum += pow_s / (ref_ld)n;
    pow_s *= s2;
  }
  return 2.0L * sum - ref_reduce(0.0L, (ref_ld)k, ref_ln2_parts);
}


/* sin and cos of |r| <= pi/4 + a little, by their series. */
static void ref_sincos_small(ref_ld r, ref_ld *s, ref_ld *c) {
  ref_ld term = 1.0L, sum_s = 0.0L, sum_c = 0.0L;
  int n;
  for (n = 0; n < 4 || ref_fabsl(term) > ref_eps() / 64.0L; n++) {
    switch (n & 3) {
      case 0: sum_c += term; break;
      case 1: sum_s += term; break;
      case 2: sum_c -= term; break;
      default: sum_s -= term; break;
    }
    term = term * r / (ref_ld)(n + 1);
  }
  *s = sum_s;
  *c = sum_c;
}

/* k mod 4, k a whole number */
static int ref_mod4(ref_ld k) {
  ref_ld q = k / 4.0L;
  return (int)((q - ref_floorl(q)) * 4.0L);
}

/* sin and cos of x. The reduction's error grows like |x| * eps, as any reference's must once x
 * itself is only known to eps. */
static void ref_sincos_series(ref_ld x, ref_ld *s, ref_ld *c) {
  ref_ld k = ref_nearest(x * REF_TWO_OVER_PI), r = ref_reduce(x, k, ref_pio2_parts), sr, cr;
  int quadrant = ref_mod4(k);
  /* Where k * pi/2's pieces were rounded (|x| past 2^40 in x87's 64 bits), r can be out of range:
   * reduce it again (still within |x| eps, see above). */
  while (ref_fabsl(r) > 0.79L) {
    k = ref_nearest(r * REF_TWO_OVER_PI);
    r = ref_reduce(r, k, ref_pio2_parts);
    quadrant += ref_mod4(k);
  }
  ref_sincos_small(r, &sr, &cr);
  switch (quadrant & 3) {
    case 0: *s = sr; *c = cr; break;
    case 1: *s = cr; *c = -sr; break;
    case 2: *s = -sr; *c = -cr; break;
    default: *s = -cr; *c = sr; break;
  }
}
/* The functions the tests call. Where long double is double (armv7, MSVC), libm's double
 * functions, within an ulp, beat a series carried in double. */
static ref_ld ref_expl(ref_ld x) { return ref_exp_series(x); }
static ref_ld ref_logl(ref_ld x) { return ref_log_series(x); }
static ref_ld ref_sqrtl(ref_ld x) { return ref_sqrt_newton(x); }
static ref_ld ref_sinl(ref_ld x) { ref_ld s, c; ref_sincos_series(x, &s, &c); return s; }
static ref_ld ref_cosl(ref_ld x) { ref_ld s, c; ref_sincos_series(x, &s, &c); return c; }
static ref_ld ref_powl(ref_ld b, ref_ld e) { return ref_exp_series(e * ref_log_series(b)); }
#else
static ref_ld ref_expl(ref_ld x) { return exp((double)x); }
static ref_ld ref_logl(ref_ld x) { return log((double)x); }
static ref_ld ref_sqrtl(ref_ld x) { return sqrt((double)x); }
static ref_ld ref_sinl(ref_ld x) { return sin((double)x); }
static ref_ld ref_cosl(ref_ld x) { return cos((double)x); }
static ref_ld ref_powl(ref_ld b, ref_ld e) { return pow((double)b, (double)e); }
#endif

/* Known values (Python's decimal at 150 digits, printed to 37) against the functions above: the number of them
 * off by more than 8 eps relative (sin and cos: 8 eps absolute, times |x| where |x| > 1, as the
 * reduction's error grows); each is printed. */
static int ref_check(void) {
  static const ref_ld sincos_cases[][3] = {
      {1e22L, -8.522008497671888017727058937530293683e-1L, 5.232147853951389454975944733847094921e-1L},
      {0.5L, 4.794255386042030002732879352155713881e-1L, 8.775825618903727161162815826038296520e-1L},
      {0.78125L, 7.041675114545336727800595099739428152e-1L, 7.100338835660796749741216439594901785e-1L},
      {2147483647.25L, -8.728015798336414885007051194912401427e-1L, -4.880752014186948459230209412310935481e-1L},
      {1152921504606846976.0L, -8.306492176372546505752817955815103011e-1L, -5.567960822766417036833989719013960287e-1L},
      {-3.0L, -1.411200080598672221007448028081102798e-1L, -9.899924966004454572715727947312613024e-1L}};
  /* {x, log x} and {x, exp x} */
  static const ref_ld log_cases[][2] = {{10000.0L, 9.210340371976182736071965818737456830e+0L},
                                        {3.0L, 1.098612288668109691395245236922525705e+0L},
                                        {0.25L, -1.386294361119890618834464242916353136e+0L},
                                        {1.40625L, 3.409265869705932103050891997803562084e-1L},
                                        {1e22L, 5.065687204586900504839581200305601257e+1L}};
  static const ref_ld exp_cases[][2] = {{-10.5L, 2.753644934974715785741109710242551110e-5L},
                                        {0.25L, 1.284025416687741484073420568062436458e+0L},
                                        {40.0L, 2.353852668370199854078999107490348045e+17L},
                                        {-0.0078125L, 9.922179382602435121059372261136178301e-1L},
                                        {-69.0L, 1.080639277707278494536649616247343147e-30L}};
  const ref_ld eps8 = 8.0L * ref_eps();
  int bad = 0;
  size_t i;
#define REF_CHECK(name, x, got, want, tol)                                                        \
  do {                                                                                           \
    ref_ld g_ = (got), w_ = (want);                                                              \
    if (!(ref_fabsl(g_ - w_) <= (tol))) {                                                            \
      printf("refmath: %s(%.21Lg) = %.36Lg, want %.36Lg\n", name, (ref_ld)(x), g_, w_);          \
      bad++;                                                                                     \
    }                                                                                            \
  } while (0)
  for (i = 0; i < sizeof sincos_cases / sizeof sincos_cases[0]; i++) {
    ref_ld x = sincos_cases[i][0], tol = eps8 * (ref_fabsl(x) > 1.0L ? ref_fabsl(x) : 1.0L);
    REF_CHECK("sin", x, ref_sinl(x), sincos_cases[i][1], tol);
    REF_CHECK("cos", x, ref_cosl(x), sincos_cases[i][2], tol);
  }
  for (i = 0; i < sizeof log_cases / sizeof log_cases[0]; i++)
    REF_CHECK("log", log_cases[i][0], ref_logl(log_cases[i][0]), log_cases[i][1], eps8 * ref_fabsl(log_cases[i][1]));
  for (i = 0; i < sizeof exp_cases / sizeof exp_cases[0]; i++)
    REF_CHECK("exp", exp_cases[i][0], ref_expl(exp_cases[i][0]), exp_cases[i][1], eps8 * exp_cases[i][1]);
  /* exp(e log b): log's error times |e log b| = 7.05 */
  REF_CHECK("pow(10000, x)", -0.765625L, ref_powl(10000.0L, -0.765625L), 8.659643233600653523531691834202299819e-4L,
            8.0L * eps8 * 8.659643233600653523531691834202299819e-4L);
  REF_CHECK("sqrt", 2.0L, ref_sqrtl(2.0L), 1.414213562373095048801688724209698079e+0L, eps8);
#undef REF_CHECK
  return bad;
}

#endif
