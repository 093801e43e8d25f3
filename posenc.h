/* posenc.h - transformer positional encodings, exact and identical on every ISA.
 *
 * Header-only, stb style. In exactly one C or C++ file:
 *
 *     #define POSENC_IMPLEMENTATION
 *     #include "posenc.h"            (scalar kernels only)
 *   or
 *     #define POSENC_IMPLEMENTATION
 *     #include "posenc_simd.h"       (adds the best SIMD backend your compiler flags allow)
 *
 * Everywhere else just #include "posenc.h". Run-time dispatch over several ISAs: see README.
 *
 * Contracts (README has the details):
 *   - Every backend (scalar, SSE2, AVX2, NEON) returns the same bits for the same input.
 *   - sin/cos tables are within 0.5 ulp(f32) + 1e-12 of the exact real value
 *     sin(p * base^(-2i/d)) for every |p| < 2^31 (see posenc_sinusoidal_table).
 *   - Bad input returns an error code; nothing is written then. Kernels never allocate,
 *     print or abort.
 *
 * License: MIT (see LICENSE).
 */
#ifndef POSENC_H
#define POSENC_H

#include <stddef.h>
#include <stdint.h>

#define POSENC_VERSION_MAJOR 0
#define POSENC_VERSION_MINOR 1
#define POSENC_VERSION_PATCH 0
#define POSENC_VERSION_STRING "0.1.0"

#ifndef POSENC_API
#  ifdef POSENC_STATIC
#    define POSENC_API static
#  else
#    define POSENC_API extern
#  endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Status codes. Every fallible call returns one; posenc_strerror() names it.
 * ------------------------------------------------------------------------------------------- */
typedef enum posenc_status {
  POSENC_OK = 0,
  POSENC_ERR_NULL = -1,      /* a required pointer is NULL */
  POSENC_ERR_SIZE = -2,      /* a size or count is zero */
  POSENC_ERR_OVERFLOW = -3,  /* size arithmetic would overflow size_t */
  POSENC_ERR_BUFFER = -4,    /* the output buffer is smaller than the result */
  POSENC_ERR_LAYOUT = -5,    /* unknown layout */
  POSENC_ERR_DTYPE = -6,     /* unknown dtype */
  POSENC_ERR_BASE = -7,      /* base is not finite or not in [1e-30, 1e30] */
  POSENC_ERR_POSITION = -8,  /* a position (or position x frequency) is out of the supported range */
  POSENC_ERR_STRIDE = -9,    /* a row stride is smaller than a row */
  POSENC_ERR_ISA = -10,      /* that ISA is unknown, not compiled in, or not supported by this CPU */
  POSENC_ERR_SELFTEST = -11  /* the active backend does not reproduce the embedded goldens */
} posenc_status;

POSENC_API const char *posenc_strerror(posenc_status status);

/* Storage types. Arithmetic is always done in (at least) f32; f16 and bf16 outputs are the
 * round-to-nearest-even conversion of the f32 result. */
typedef enum posenc_dtype {
  POSENC_DTYPE_F32 = 0,
  POSENC_DTYPE_F16 = 1,  /* IEEE binary16 */
  POSENC_DTYPE_BF16 = 2  /* bfloat16: the top 16 bits of an f32 */
} posenc_dtype;

POSENC_API size_t posenc_dtype_size(posenc_dtype dtype);  /* 0 for an unknown dtype */
POSENC_API const char *posenc_dtype_name(posenc_dtype dtype);
POSENC_API uint16_t posenc_f32_to_f16(float x);  /* round to nearest even */
POSENC_API float posenc_f16_to_f32(uint16_t h);
POSENC_API uint16_t posenc_f32_to_bf16(float x); /* round to nearest even; NaN stays NaN */
POSENC_API float posenc_bf16_to_f32(uint16_t h);

/* ---------------------------------------------------------------------------------------------
 * Sinusoidal absolute encodings.
 *
 *   omega_i = base^(-2i/d)
 *   INTERLEAVED (Vaswani; HF DistilBERT):  PE[p][2i] = sin(p omega_i), PE[p][2i+1] = cos(p omega_i)
 *                                         odd d: the last column is a sin column.
 *   SPLIT [sin | cos] (Transformer-XL, GPT-J tables):
 *                                         PE[p][i] = sin(p omega_i), PE[p][h+i] = cos(p omega_i),
 *                                         h = floor(d/2); odd d: the last column is zero
 *                                         (as fairseq and tensor2tensor pad it).
 *
 * Accuracy (f32 output): |PE - exact| <= 0.5 ulp(exact) + 1e-12 for every |p| < 2^31, where
 * exact = sin(p * base^(-2i/d)) in real arithmetic with the given double base. That is at most
 * 2.98e-8 absolute. f16/bf16 add their own rounding (<= 2^-12 / 2^-9 absolute).
 *
 * Determinism: a value depends only on (p, i, d, base): a range, a list of positions, another
 * start, a split of the rows across threads, and every backend give the same bits.
 * ------------------------------------------------------------------------------------------- */
typedef enum posenc_layout {
  POSENC_LAYOUT_INTERLEAVED = 0,
  POSENC_LAYOUT_SPLIT = 1
} posenc_layout;

typedef struct posenc_sinusoidal_params {
  size_t dim;            /* d: columns of one row, >= 1 */
  double base;           /* 10000 in most models; finite, in [1e-30, 1e30] */
  posenc_layout layout;  /* POSENC_LAYOUT_INTERLEAVED by default */
  posenc_dtype dtype;    /* POSENC_DTYPE_F32 by default */
  size_t row_stride;     /* elements from one row to the next; 0 means dim (dense) */
} posenc_sinusoidal_params;

/* dim columns, base 10000, interleaved, f32, dense. */
POSENC_API posenc_sinusoidal_params posenc_sinusoidal_default(size_t dim);

/* Bytes that n_rows rows occupy: ((n_rows-1)*row_stride + dim) * dtype size.
 * Errors: NULL, SIZE, OVERFLOW, DTYPE, LAYOUT, STRIDE. */
POSENC_API posenc_status posenc_sinusoidal_bytes(const posenc_sinusoidal_params *params,
                                                 size_t n_rows, size_t *bytes);

/* Rows for positions start, start+1, ..., start+n_rows-1 (start + n_rows - 1 <= INT32_MAX).
 * Errors: NULL (params, out), SIZE (n_rows or dim is 0), OVERFLOW, BUFFER (out_bytes too small),
 * LAYOUT, DTYPE, BASE, STRIDE, POSITION (last position past INT32_MAX, or
 * |p| * max(omega) >= 2^50, possible only for base < 1). On error nothing is written. */
POSENC_API posenc_status posenc_sinusoidal_table(const posenc_sinusoidal_params *params,
                                                 int32_t start, size_t n_rows,
                                                 void *out, size_t out_bytes);

/* Rows for an explicit list of positions (any order, repeats allowed, negative allowed).
 * Same errors as posenc_sinusoidal_table, plus NULL for positions. */
POSENC_API posenc_status posenc_sinusoidal_rows(const posenc_sinusoidal_params *params,
                                                const int32_t *positions, size_t n_rows,
                                                void *out, size_t out_bytes);

/* ---------------------------------------------------------------------------------------------
 * Backends and dispatch.
 *
 * The best backend that is compiled in and supported by the CPU is chosen on first use
 * (thread-safe), unless the environment variable POSENC_ISA names one (scalar|sse2|avx2|neon).
 * A POSENC_ISA that names an unavailable backend is ignored: posenc_isa_requested() reports it
 * and posenc_isa_active() shows what runs instead.
 * ------------------------------------------------------------------------------------------- */
typedef enum posenc_isa {
  POSENC_ISA_SCALAR = 0,
  POSENC_ISA_SSE2 = 1,
  POSENC_ISA_AVX2 = 2,
  POSENC_ISA_NEON = 3,
  POSENC_ISA_COUNT = 4,
  POSENC_ISA_AUTO = -1  /* for posenc_isa_set: the best available */
} posenc_isa;

POSENC_API const char *posenc_isa_name(posenc_isa isa);                      /* "avx2", ... */
POSENC_API posenc_status posenc_isa_from_name(const char *name, posenc_isa *isa); /* also "auto" */
POSENC_API int posenc_isa_compiled(posenc_isa isa);   /* 1 if this build contains the backend */
POSENC_API int posenc_isa_supported(posenc_isa isa);  /* 1 if this CPU can run it */
POSENC_API posenc_isa posenc_isa_active(void);        /* selects on first use */
/* The POSENC_ISA environment value seen at selection: 1 and *isa set when one was given
 * (valid name), -1 when it was given but is not a known name, 0 when unset. */
POSENC_API int posenc_isa_requested(posenc_isa *isa);
/* Force a backend (or POSENC_ISA_AUTO). ERR_ISA if it is not compiled in or not supported. */
POSENC_API posenc_status posenc_isa_set(posenc_isa isa);

/* Recomputes small canonical cases with the active backend and compares them with embedded
 * goldens. ERR_SELFTEST means this build or this thread's floating-point environment does not
 * produce posenc's results (-ffast-math, a non-default rounding mode, x87 arithmetic, ...). */
POSENC_API posenc_status posenc_selftest(void);

/* =============================================================================================
 * Internal interface between posenc.h and the per-ISA kernels of posenc_simd.h.
 * Not part of the API: it may change in any release.
 * =========================================================================================== */

/* Positions are anchored every POSENC_ANCHOR positions (an absolute multiple): the value at p
 * is the exact anchor value advanced by (p mod POSENC_ANCHOR) double-precision rotations.
 * Changing this changes results, so it is fixed. */
#define POSENC_ANCHOR 32
/* Frequencies per SIMD chunk, and chunks per kernel call (performance knobs only). */
#ifndef POSENC_CHUNK
#define POSENC_CHUNK 16
#endif
#define POSENC_GROUP 8
/* omega * 2/pi as four 21-bit parts: p * part is exact in double for |p| <= 2^31. */
#define POSENC_UPARTS 4

enum { POSENC_I_PAIRS = 0, POSENC_I_PLANAR = 1 };

/* floor(p / POSENC_ANCHOR) * POSENC_ANCHOR for an int64_t p, also negative. */
#define POSENC_I_ANCHOR_OF(p) ((p) - (int64_t)((uint64_t)(p) & (POSENC_ANCHOR - 1)))

/* Constants of the exact sin/cos primitive (posenc_i_exact_sincos): shared by every kernel. */
#define POSENC_I_MAGIC 6755399441055744.0 /* 1.5 * 2^52 */
#define POSENC_I_PIO2_HI 1.5707963267948966
#define POSENC_I_PIO2_LO 6.123233995736766e-17
#define POSENC_I_S3 (-0.16666666666666666)
#define POSENC_I_S5 0.008333333333333333
#define POSENC_I_S7 (-0.0001984126984126984)
#define POSENC_I_S9 2.7557319223985893e-06
#define POSENC_I_S11 (-2.505210838544172e-08)
#define POSENC_I_S13 1.6059043836821613e-10
#define POSENC_I_S15 (-7.647163731819816e-13)
#define POSENC_I_S17 2.8114572543455206e-15
#define POSENC_I_C2 (-0.5)
#define POSENC_I_C4 0.041666666666666664
#define POSENC_I_C6 (-0.001388888888888889)
#define POSENC_I_C8 2.48015873015873e-05
#define POSENC_I_C10 (-2.755731922398589e-07)
#define POSENC_I_C12 2.08767569878681e-09
#define POSENC_I_C14 (-1.1470745597729725e-11)
#define POSENC_I_C16 4.779477332387385e-14
#define POSENC_I_C18 (-1.5619206968586225e-16)


typedef struct posenc_i_job {
  const double *u;              /* [chunk][POSENC_UPARTS][POSENC_CHUNK], unused lanes 0 */
  unsigned nfreq;               /* valid lanes, 1..POSENC_GROUP*POSENC_CHUNK */
  int32_t start;                /* first position when positions is NULL */
  const int32_t *positions;     /* else one position per row */
  size_t nrows;
  unsigned char *out;           /* row 0, the group's first sin column */
  ptrdiff_t row_stride;         /* bytes */
  int mode;                     /* POSENC_I_PAIRS: sin,cos adjacent; POSENC_I_PLANAR: apart */
  ptrdiff_t cos_offset;         /* PLANAR: bytes from a sin column to its cos column */
  unsigned pair_cols;           /* PAIRS: columns stored, 2*nfreq or 2*nfreq-1 */
  posenc_dtype dtype;
  int stream;                   /* 1: full chunks may use non-temporal stores (16-byte aligned) */
} posenc_i_job;

typedef struct posenc_i_backend {
  posenc_isa isa;
  void (*sincos_rows)(const posenc_i_job *job);
} posenc_i_backend;

#ifdef __cplusplus
}
#endif
#endif /* POSENC_H */

/* =============================================================================================
 * Implementation
 * =========================================================================================== */
#if defined(POSENC_IMPLEMENTATION) && !defined(POSENC_IMPLEMENTATION_DONE)
#define POSENC_IMPLEMENTATION_DONE

#include <string.h>
#if !defined(POSENC_NO_GETENV)
#  include <stdlib.h>
#endif
#include <float.h>

/* Results must not depend on the compiler fusing a*b+c: switch contraction off here. */
#if defined(__clang__)
#  pragma STDC FP_CONTRACT OFF
#  pragma clang fp contract(off)
#elif defined(__GNUC__)
#  pragma GCC push_options
#  pragma GCC optimize("fp-contract=off")
#  define POSENC_I_POP_OPTIONS
#elif defined(_MSC_VER)
#  pragma fp_contract(off)
#endif

#if defined(FLT_EVAL_METHOD) && (FLT_EVAL_METHOD != 0) && (FLT_EVAL_METHOD != -1)
#  error "posenc needs IEEE double arithmetic without excess precision (on i386: -msse2 -mfpmath=sse)"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- bits ---------------------------------------------------------------------------------- */
static uint64_t posenc_i_dbits(double x) { uint64_t u; memcpy(&u, &x, 8); return u; }
static double posenc_i_bitsd(uint64_t u) { double x; memcpy(&x, &u, 8); return x; }
static uint32_t posenc_i_fbits(float x) { uint32_t u; memcpy(&u, &x, 4); return u; }
static float posenc_i_bitsf(uint32_t u) { float x; memcpy(&x, &u, 4); return x; }

POSENC_API uint16_t posenc_f32_to_bf16(float x) {
  uint32_t u = posenc_i_fbits(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u); /* quiet NaN */
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
POSENC_API float posenc_bf16_to_f32(uint16_t h) { return posenc_i_bitsf((uint32_t)h << 16); }

/* Round to nearest even, as F16C's vcvtps2ph and ARM's vcvt do. */
POSENC_API uint16_t posenc_f32_to_f16(float x) {
  uint32_t u = posenc_i_fbits(x);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);             /* NaN */
  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);            /* rounds to inf */
  if (a < 0x38800000u) {                   /* f16 subnormal or 0: value / 2^-24, rounded */
    uint32_t shift = 126u - (a >> 23), mant = (a & 0x7fffffu) | 0x800000u, h, rem, half;
    if (a <= 0x33000000u) return sign;     /* <= 2^-25 rounds to 0 (a tie goes to even 0) */
    h = mant >> shift;                     /* shift is 14..24 */
    rem = mant & ((1u << shift) - 1u);
    half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (h & 1u))) h++;
    return (uint16_t)(sign | h);
  }
  a += 0xfffu + ((a >> 13) & 1u);
  return (uint16_t)(sign | ((a - 0x38000000u) >> 13));
}
POSENC_API float posenc_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1f) return posenc_i_bitsf(sign | 0x7f800000u | (m << 13));
  if (e != 0) return posenc_i_bitsf(sign | ((e + 112u) << 23) | (m << 13));
  if (m == 0) return posenc_i_bitsf(sign);
  { /* subnormal: m * 2^-24, exact in f32 */
    float v = (float)m * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
}

POSENC_API size_t posenc_dtype_size(posenc_dtype dtype) {
  switch (dtype) {
    case POSENC_DTYPE_F32: return 4;
    case POSENC_DTYPE_F16: case POSENC_DTYPE_BF16: return 2;
  }
  return 0;
}
POSENC_API const char *posenc_dtype_name(posenc_dtype dtype) {
  switch (dtype) {
    case POSENC_DTYPE_F32: return "f32";
    case POSENC_DTYPE_F16: return "f16";
    case POSENC_DTYPE_BF16: return "bf16";
  }
  return "unknown";
}

POSENC_API const char *posenc_strerror(posenc_status status) {
  switch (status) {
    case POSENC_OK: return "ok";
    case POSENC_ERR_NULL: return "a required pointer is NULL";
    case POSENC_ERR_SIZE: return "a size or count is zero";
    case POSENC_ERR_OVERFLOW: return "the size arithmetic overflows";
    case POSENC_ERR_BUFFER: return "the output buffer is too small";
    case POSENC_ERR_LAYOUT: return "unknown layout";
    case POSENC_ERR_DTYPE: return "unknown dtype";
    case POSENC_ERR_BASE: return "base must be finite and in [1e-30, 1e30]";
    case POSENC_ERR_POSITION: return "position out of the supported range";
    case POSENC_ERR_STRIDE: return "row stride is smaller than a row";
    case POSENC_ERR_ISA: return "ISA unknown, not compiled in, or not supported by this CPU";
    case POSENC_ERR_SELFTEST: return "self-test failed: this build or FP environment changes results";
  }
  return "unknown status";
}

/* ---- double-double arithmetic (Dekker/Knuth; exact with IEEE double and no contraction) --- */
typedef struct posenc_i_dd { double hi, lo; } posenc_i_dd;

static posenc_i_dd posenc_i_two_sum(double a, double b) {
  posenc_i_dd r; double bb;
  r.hi = a + b; bb = r.hi - a;
  r.lo = (a - (r.hi - bb)) + (b - bb);
  return r;
}
static posenc_i_dd posenc_i_fast_two_sum(double a, double b) { /* |a| >= |b| */
  posenc_i_dd r; r.hi = a + b; r.lo = b - (r.hi - a); return r;
}
static void posenc_i_split(double a, double *hi, double *lo) {
  double t = 134217729.0 * a; /* 2^27 + 1 */
  *hi = t - (t - a); *lo = a - *hi;
}
static posenc_i_dd posenc_i_two_prod(double a, double b) {
  posenc_i_dd r; double ah, al, bh, bl;
  r.hi = a * b;
  posenc_i_split(a, &ah, &al); posenc_i_split(b, &bh, &bl);
  r.lo = ((ah * bh - r.hi) + ah * bl + al * bh) + al * bl;
  return r;
}
static posenc_i_dd posenc_i_dd_add(posenc_i_dd x, posenc_i_dd y) {
  posenc_i_dd s = posenc_i_two_sum(x.hi, y.hi), t = posenc_i_two_sum(x.lo, y.lo);
  s.lo += t.hi; s = posenc_i_fast_two_sum(s.hi, s.lo);
  s.lo += t.lo; return posenc_i_fast_two_sum(s.hi, s.lo);
}
static posenc_i_dd posenc_i_dd_mul(posenc_i_dd x, posenc_i_dd y) {
  posenc_i_dd p = posenc_i_two_prod(x.hi, y.hi);
  p.lo += x.hi * y.lo + x.lo * y.hi;
  return posenc_i_fast_two_sum(p.hi, p.lo);
}
static posenc_i_dd posenc_i_dd_mul_d(posenc_i_dd x, double y) {
  posenc_i_dd p = posenc_i_two_prod(x.hi, y);
  p.lo += x.lo * y;
  return posenc_i_fast_two_sum(p.hi, p.lo);
}
static posenc_i_dd posenc_i_dd_div_d(posenc_i_dd x, double y) {
  double q1 = x.hi / y, q2;
  posenc_i_dd p = posenc_i_two_prod(q1, y), r = posenc_i_two_sum(x.hi, -p.hi);
  r.lo += x.lo - p.lo;
  q2 = (r.hi + r.lo) / y;
  return posenc_i_fast_two_sum(q1, q2);
}
static posenc_i_dd posenc_i_dd_make(double hi, double lo) { posenc_i_dd r; r.hi = hi; r.lo = lo; return r; }

static const posenc_i_dd posenc_i_LN2 = {0.6931471805599453, 2.3190468138462996e-17};
static const posenc_i_dd posenc_i_TWO_OVER_PI = {0.6366197723675814, -3.935735335036497e-17};

/* exp(x) to about 2^-100 relative, for |x| < 700. */
static posenc_i_dd posenc_i_dd_exp(posenc_i_dd x) {
  double k = x.hi / posenc_i_LN2.hi;
  posenc_i_dd r, s, term;
  int i, ki;
  k = (k + 6755399441055744.0) - 6755399441055744.0; /* round to integer */
  r = posenc_i_dd_add(x, posenc_i_dd_mul_d(posenc_i_LN2, -k));
  r.hi *= 1.0 / 1024; r.lo *= 1.0 / 1024;             /* |r| <= 3.4e-4 */
  s = r; term = r;
  for (i = 2; i <= 9; i++) {                          /* expm1(r), Taylor */
    term = posenc_i_dd_div_d(posenc_i_dd_mul(term, r), (double)i);
    s = posenc_i_dd_add(s, term);
  }
  for (i = 0; i < 10; i++)                            /* expm1(2r) = expm1(r) * (2 + expm1(r)) */
    s = posenc_i_dd_mul(s, posenc_i_dd_add(s, posenc_i_dd_make(2.0, 0.0)));
  s = posenc_i_dd_add(s, posenc_i_dd_make(1.0, 0.0));
  ki = (int)k;
  { double scale = posenc_i_bitsd((uint64_t)(1023 + ki) << 52); s.hi *= scale; s.lo *= scale; }
  return s;
}

/* log(a) for finite a > 0 (normal), to about 2^-100: a double estimate, then one Newton step
 * y + a*exp(-y) - 1 in double-double. */
static posenc_i_dd posenc_i_dd_log(double a) {
  uint64_t bits = posenc_i_dbits(a);
  int e = (int)((bits >> 52) & 0x7ff) - 1023;
  double m = posenc_i_bitsd((bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull), s, s2, t, y0;
  posenc_i_dd c;
  int i;
  if (m > 1.4142135623730951) { m *= 0.5; e++; }
  s = (m - 1.0) / (m + 1.0); s2 = s * s; t = 0.0;
  for (i = 29; i >= 3; i -= 2) t = (t + 1.0 / i) * s2;  /* atanh(s)/s - 1 */
  y0 = (double)e * posenc_i_LN2.hi + 2.0 * (s + s * t);
  c = posenc_i_dd_mul_d(posenc_i_dd_exp(posenc_i_dd_make(-y0, 0.0)), a);
  c = posenc_i_dd_add(c, posenc_i_dd_make(-1.0, 0.0));
  return posenc_i_dd_add(posenc_i_dd_make(y0, 0.0), c);
}

/* ---- the exact angle primitive, scalar reference --------------------------------------------
 * E(p) = (sin, cos)(p * omega) in double for one frequency given as u = omega*2/pi in four
 * 21-bit parts. Every product p*u[j] is exact; the integer part of each is dropped
 * (quadrant bits kept) by adding 1.5*2^52; what is left is at most 2 quarter turns, reduced once
 * more, scaled by pi/2 and fed to Taylor polynomials on |r| <= pi/4 (truncation < 1e-17).
 * The SIMD kernels perform the same operations in the same order. */
static void posenc_i_exact_sincos(double p, const double *u, size_t lane_stride,
                                  double *s_out, double *c_out) {
  uint64_t q = 0;
  double f = 0.0, a, k, r, r2, s, c, x, y;
  int j;
  for (j = 0; j < POSENC_UPARTS; j++) {
    double pj = p * u[(size_t)j * lane_stride];
    a = pj + POSENC_I_MAGIC; q += posenc_i_dbits(a);
    k = a - POSENC_I_MAGIC;
    f = (j == 0) ? pj - k : f + (pj - k);
  }
  a = f + POSENC_I_MAGIC; q += posenc_i_dbits(a);
  k = a - POSENC_I_MAGIC; f = f - k;
  r = f * POSENC_I_PIO2_HI + f * POSENC_I_PIO2_LO;
  r2 = r * r;
  s = POSENC_I_S15 + r2 * POSENC_I_S17;
  s = POSENC_I_S13 + r2 * s; s = POSENC_I_S11 + r2 * s; s = POSENC_I_S9 + r2 * s;
  s = POSENC_I_S7 + r2 * s; s = POSENC_I_S5 + r2 * s; s = POSENC_I_S3 + r2 * s;
  s = r + r * (r2 * s);
  c = POSENC_I_C16 + r2 * POSENC_I_C18;
  c = POSENC_I_C14 + r2 * c; c = POSENC_I_C12 + r2 * c; c = POSENC_I_C10 + r2 * c;
  c = POSENC_I_C8 + r2 * c; c = POSENC_I_C6 + r2 * c; c = POSENC_I_C4 + r2 * c;
  c = POSENC_I_C2 + r2 * c;
  c = 1.0 + r2 * c;
  /* quadrant q: (sin, cos) of r + q*pi/2 */
  x = (q & 1) ? c : s;
  y = (q & 1) ? s : c;
  *s_out = posenc_i_bitsd(posenc_i_dbits(x) ^ ((q & 2) << 62));
  *c_out = posenc_i_bitsd(posenc_i_dbits(y) ^ (((q + 1) & 2) << 62));
}

/* The anchored recurrence. At an anchor a: (s, c) = E(a), and the previous pair (sp, cp) is E(a)
 * rotated back by omega: (s*sc - c*ss, c*sc + s*ss) with (ss, sc) = E(1). Each step is then the
 * three-term (Chebyshev) recurrence y(k+1) = k2*y(k) - y(k-1), k2 = 2*cos(omega) (exact doubling):
 * two products and two differences per position instead of a rotation's four and two. Its
 * rounding error grows at most as K^2 * 2^-53 over K steps: below 1e-13 for K < 32. */
#define POSENC_I_BACK(s, c, sp, cp, ss, sc) do { (sp) = (s) * (sc) - (c) * (ss); \
  (cp) = (c) * (sc) + (s) * (ss); } while (0)
#define POSENC_I_STEP(s, c, sp, cp, k2) do { double s_ = (k2) * (s) - (sp), c_ = (k2) * (c) - (cp); \
  (sp) = (s); (cp) = (c); (s) = s_; (c) = c_; } while (0)


/* Store one f32 value in the job's dtype. */
static void posenc_i_store(unsigned char *dst, posenc_dtype dtype, float v) {
  if (dtype == POSENC_DTYPE_F32) { memcpy(dst, &v, 4); }
  else {
    uint16_t h = dtype == POSENC_DTYPE_F16 ? posenc_f32_to_f16(v) : posenc_f32_to_bf16(v);
    memcpy(dst, &h, 2);
  }
}

static void posenc_i_store_row_lane(const posenc_i_job *job, size_t row, unsigned lane,
                                    double s, double c) {
  size_t es = posenc_dtype_size(job->dtype);
  unsigned char *base = job->out + (ptrdiff_t)row * job->row_stride;
  if (job->mode == POSENC_I_PAIRS) {
    posenc_i_store(base + (size_t)2 * lane * es, job->dtype, (float)s);
    if (2 * lane + 1 < job->pair_cols)
      posenc_i_store(base + (size_t)(2 * lane + 1) * es, job->dtype, (float)c);
  } else {
    posenc_i_store(base + (size_t)lane * es, job->dtype, (float)s);
    posenc_i_store(base + job->cos_offset + (ptrdiff_t)(lane * es), job->dtype, (float)c);
  }
}

/* The scalar reference kernel: the definition every SIMD kernel must reproduce bit for bit. */
static void posenc_i_scalar_sincos_rows(const posenc_i_job *job) {
  unsigned lane;
  for (lane = 0; lane < job->nfreq; lane++) {
    const double *u = job->u + (lane / POSENC_CHUNK) * POSENC_UPARTS * POSENC_CHUNK + lane % POSENC_CHUNK;
    double ss, sc, k2, s, c, sp, cp;
    size_t row = 0;
    posenc_i_exact_sincos(1.0, u, POSENC_CHUNK, &ss, &sc);
    k2 = 2.0 * sc;
    while (row < job->nrows) {
      int64_t p = job->positions ? job->positions[row] : (int64_t)job->start + (int64_t)row;
      int64_t a = POSENC_I_ANCHOR_OF(p), j;
      posenc_i_exact_sincos((double)a, u, POSENC_CHUNK, &s, &c);
      POSENC_I_BACK(s, c, sp, cp, ss, sc);
      for (j = a; j < p; j++) POSENC_I_STEP(s, c, sp, cp, k2);
      /* consecutive positions continue the recurrence up to the next anchor */
      for (;;) {
        posenc_i_store_row_lane(job, row, lane, s, c);
        row++;
        if (job->positions || row >= job->nrows || ((p + 1) & (POSENC_ANCHOR - 1)) == 0) break;
        POSENC_I_STEP(s, c, sp, cp, k2);
        p++;
      }
    }
  }
}

static const posenc_i_backend posenc_i_backend_scalar = {POSENC_ISA_SCALAR, posenc_i_scalar_sincos_rows};

/* ---- backends: which are compiled in ------------------------------------------------------
 * A build with run-time dispatch compiles posenc_simd.h once per ISA (src/posenc_<isa>.c) and
 * defines POSENC_WITH_<ISA> here. Single-file use gets the one that posenc_simd.h instantiated
 * (it defines POSENC_I_BUILTIN_<ISA> before including this file). */
#if defined(POSENC_WITH_SSE2) || defined(POSENC_I_BUILTIN_SSE2)
extern const posenc_i_backend posenc_i_backend_sse2;
#  define POSENC_I_HAS_SSE2 1
#endif
#if defined(POSENC_WITH_AVX2) || defined(POSENC_I_BUILTIN_AVX2)
extern const posenc_i_backend posenc_i_backend_avx2;
#  define POSENC_I_HAS_AVX2 1
#endif
#if defined(POSENC_WITH_NEON) || defined(POSENC_I_BUILTIN_NEON)
extern const posenc_i_backend posenc_i_backend_neon;
#  define POSENC_I_HAS_NEON 1
#endif

static const posenc_i_backend *posenc_i_backend_of(posenc_isa isa) {
  switch (isa) {
    case POSENC_ISA_SCALAR: return &posenc_i_backend_scalar;
#ifdef POSENC_I_HAS_SSE2
    case POSENC_ISA_SSE2: return &posenc_i_backend_sse2;
#endif
#ifdef POSENC_I_HAS_AVX2
    case POSENC_ISA_AVX2: return &posenc_i_backend_avx2;
#endif
#ifdef POSENC_I_HAS_NEON
    case POSENC_ISA_NEON: return &posenc_i_backend_neon;
#endif
    default: return NULL;
  }
}

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#  define POSENC_I_X86_DETECT 1
#elif defined(__arm__) && defined(__linux__) && !defined(__aarch64__)
#  include <sys/auxv.h>
#  define POSENC_I_ARM_HWCAP_NEON (1 << 12)
#endif

POSENC_API int posenc_isa_compiled(posenc_isa isa) { return posenc_i_backend_of(isa) != NULL; }

POSENC_API int posenc_isa_supported(posenc_isa isa) {
  switch (isa) {
    case POSENC_ISA_SCALAR: return 1;
#if defined(POSENC_I_X86_DETECT)
    case POSENC_ISA_SSE2:
#  if defined(__x86_64__) || defined(__SSE2__)
      return 1;
#  else
      return __builtin_cpu_supports("sse2") ? 1 : 0;
#  endif
    case POSENC_ISA_AVX2: return __builtin_cpu_supports("avx2") ? 1 : 0; /* checks OS YMM state too */
#elif defined(__x86_64__) || defined(_M_X64)
    case POSENC_ISA_SSE2: return 1;
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
    case POSENC_ISA_NEON: return 1;
#elif defined(POSENC_I_ARM_HWCAP_NEON)
    case POSENC_ISA_NEON: return (getauxval(AT_HWCAP) & POSENC_I_ARM_HWCAP_NEON) ? 1 : 0;
#elif defined(__ARM_NEON)
    case POSENC_ISA_NEON: return 1; /* compiled for NEON: the target has it */
#endif
    default: return 0;
  }
}

POSENC_API const char *posenc_isa_name(posenc_isa isa) {
  switch (isa) {
    case POSENC_ISA_SCALAR: return "scalar";
    case POSENC_ISA_SSE2: return "sse2";
    case POSENC_ISA_AVX2: return "avx2";
    case POSENC_ISA_NEON: return "neon";
    case POSENC_ISA_AUTO: return "auto";
    default: return "unknown";
  }
}

POSENC_API posenc_status posenc_isa_from_name(const char *name, posenc_isa *isa) {
  int i;
  if (!name || !isa) return POSENC_ERR_NULL;
  if (strcmp(name, "auto") == 0) { *isa = POSENC_ISA_AUTO; return POSENC_OK; }
  for (i = 0; i < POSENC_ISA_COUNT; i++)
    if (strcmp(name, posenc_isa_name((posenc_isa)i)) == 0) { *isa = (posenc_isa)i; return POSENC_OK; }
  return POSENC_ERR_ISA;
}

/* The active backend: selected once, on first use. Racing first calls compute the same answer;
 * the pointer itself is accessed atomically. */
static const posenc_i_backend *posenc_i_active;
static int posenc_i_requested_state; /* 0 unset, 1 valid name, -1 unknown name */
static posenc_isa posenc_i_requested_isa;

#if defined(__GNUC__) || defined(__clang__)
#  define POSENC_I_LOAD(p) __atomic_load_n(&(p), __ATOMIC_ACQUIRE)
#  define POSENC_I_STORE(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELEASE)
#else
#  define POSENC_I_LOAD(p) (p)
#  define POSENC_I_STORE(p, v) ((p) = (v))
#endif

static posenc_isa posenc_i_best(void) {
  int i;
  for (i = POSENC_ISA_COUNT - 1; i > 0; i--)
    if (posenc_isa_compiled((posenc_isa)i) && posenc_isa_supported((posenc_isa)i)) return (posenc_isa)i;
  return POSENC_ISA_SCALAR;
}

static const posenc_i_backend *posenc_i_select(void) {
  const posenc_i_backend *b = POSENC_I_LOAD(posenc_i_active);
  if (b) return b;
  {
    posenc_isa isa = posenc_i_best();
    int req = 0;
    posenc_isa want = POSENC_ISA_AUTO;
#if !defined(POSENC_NO_GETENV)
    const char *env = getenv("POSENC_ISA");
    if (env && *env) {
      req = posenc_isa_from_name(env, &want) == POSENC_OK ? 1 : -1;
      if (req == 1 && want != POSENC_ISA_AUTO && posenc_isa_compiled(want) && posenc_isa_supported(want))
        isa = want;
    }
#endif
    POSENC_I_STORE(posenc_i_requested_isa, want);
    POSENC_I_STORE(posenc_i_requested_state, req);
    b = posenc_i_backend_of(isa);
    POSENC_I_STORE(posenc_i_active, b);
    return b;
  }
}

POSENC_API posenc_isa posenc_isa_active(void) { return posenc_i_select()->isa; }

POSENC_API int posenc_isa_requested(posenc_isa *isa) {
  posenc_i_select();
  if (isa) *isa = POSENC_I_LOAD(posenc_i_requested_isa);
  return POSENC_I_LOAD(posenc_i_requested_state);
}

POSENC_API posenc_status posenc_isa_set(posenc_isa isa) {
  posenc_i_select(); /* read POSENC_ISA first, so that it cannot override this call later */
  if (isa == POSENC_ISA_AUTO) isa = posenc_i_best();
  if (!posenc_isa_compiled(isa) || !posenc_isa_supported(isa)) return POSENC_ERR_ISA;
  POSENC_I_STORE(posenc_i_active, posenc_i_backend_of(isa));
  return POSENC_OK;
}

/* ---- sinusoidal tables: validation and the driver ------------------------------------------ */
typedef struct posenc_i_table_plan {
  size_t nfreq;            /* frequencies */
  size_t esize;            /* bytes per element */
  size_t stride;           /* elements per row step */
  posenc_i_dd omega1;      /* base^(-2/d) */
} posenc_i_table_plan;

static posenc_status posenc_i_check_sinusoidal(const posenc_sinusoidal_params *pr, size_t n_rows,
                                               size_t *bytes, posenc_i_table_plan *plan) {
  size_t es, stride, last;
  if (!pr) return POSENC_ERR_NULL;
  if (pr->dim == 0 || n_rows == 0) return POSENC_ERR_SIZE;
  if (pr->layout != POSENC_LAYOUT_INTERLEAVED && pr->layout != POSENC_LAYOUT_SPLIT) return POSENC_ERR_LAYOUT;
  es = posenc_dtype_size(pr->dtype);
  if (es == 0) return POSENC_ERR_DTYPE;
  stride = pr->row_stride ? pr->row_stride : pr->dim;
  if (stride < pr->dim) return POSENC_ERR_STRIDE;
  if (n_rows - 1 > (SIZE_MAX - pr->dim) / stride) return POSENC_ERR_OVERFLOW;
  last = (n_rows - 1) * stride + pr->dim;
  if (last > SIZE_MAX / es || last * es > (size_t)PTRDIFF_MAX) return POSENC_ERR_OVERFLOW;
  if (stride > (size_t)PTRDIFF_MAX / es) return POSENC_ERR_OVERFLOW;
  *bytes = last * es;
  if (plan) {
    plan->esize = es;
    plan->stride = stride;
    plan->nfreq = pr->layout == POSENC_LAYOUT_INTERLEAVED ? (pr->dim + 1) / 2 : pr->dim / 2;
  }
  return POSENC_OK;
}

POSENC_API posenc_sinusoidal_params posenc_sinusoidal_default(size_t dim) {
  posenc_sinusoidal_params p;
  p.dim = dim; p.base = 10000.0; p.layout = POSENC_LAYOUT_INTERLEAVED;
  p.dtype = POSENC_DTYPE_F32; p.row_stride = 0;
  return p;
}

POSENC_API posenc_status posenc_sinusoidal_bytes(const posenc_sinusoidal_params *params,
                                                 size_t n_rows, size_t *bytes) {
  if (!bytes) return POSENC_ERR_NULL;
  return posenc_i_check_sinusoidal(params, n_rows, bytes, NULL);
}

/* Largest |p| * omega_max * 2/pi that the reduction handles exactly (a*2^52 rounding trick). */
#define POSENC_I_MAX_TURNS 1125899906842624.0 /* 2^50 */

static posenc_status posenc_i_check_base(double base, size_t nfreq, double max_abs_pos) {
  double omega_max;
  if (!(base >= 1e-30) || !(base <= 1e30)) return POSENC_ERR_BASE; /* also NaN */
  /* omega_i <= max(1, 1/base); a quarter turn is pi/2 */
  omega_max = (base >= 1.0 || nfreq <= 1) ? 1.0 : 1.0 / base;
  if (max_abs_pos * omega_max * 0.6366197723675814 >= POSENC_I_MAX_TURNS) return POSENC_ERR_POSITION;
  return POSENC_OK;
}

/* Fill the u parts of nfreq frequencies (chunk after chunk) from the progression
 * u_i = u_{i-1} * omega1, u_0 = 2/pi, advancing *u_run. The progression always restarts at i = 0,
 * so u_i never depends on the call shape. */
static void posenc_i_fill_parts(double *u, size_t nfreq, posenc_i_dd *u_run, posenc_i_dd omega1) {
  size_t lane; int j;
  memset(u, 0, sizeof(double) * POSENC_UPARTS * POSENC_CHUNK * ((nfreq + POSENC_CHUNK - 1) / POSENC_CHUNK));
  for (lane = 0; lane < nfreq; lane++) {
    posenc_i_dd v = *u_run;
    double *dst = u + (lane / POSENC_CHUNK) * POSENC_UPARTS * POSENC_CHUNK + lane % POSENC_CHUNK;
    for (j = 0; j < POSENC_UPARTS; j++) {
      double part = posenc_i_bitsd(posenc_i_dbits(v.hi) & 0xffffffff00000000ull); /* 21 bits */
      posenc_i_dd rest = posenc_i_two_sum(v.hi - part, v.lo);
      /* parts below 2^-600 move no angle of |p| < 2^31 and would only risk subnormals */
      dst[(size_t)j * POSENC_CHUNK] = ((posenc_i_dbits(part) >> 52 & 0x7ff) > 1023 - 600) ? part : 0.0;
      v = rest;
    }
    *u_run = posenc_i_dd_mul(*u_run, omega1);
  }
}

/* Outputs at least this large are written with non-temporal stores where the kernel can: they
 * would not stay in cache anyway, and skipping the read-for-ownership halves the memory traffic. */
#ifndef POSENC_STREAM_MIN_BYTES
#define POSENC_STREAM_MIN_BYTES ((size_t)4 << 20)
#endif

/* Rows processed per pass over the frequency chunks: a tile of about 128 KiB stays in cache
 * while each chunk's columns are written, and the chunk parts are rebuilt once per tile. */
static size_t posenc_i_tile_rows(size_t row_bytes) {
  size_t rows = ((size_t)128 << 10) / (row_bytes ? row_bytes : 1);
  if (rows < 64) rows = 64;
  if (rows > 2048) rows = 2048;
  return rows - rows % POSENC_ANCHOR;
}

static posenc_status posenc_i_sinusoidal_run(const posenc_i_backend *be,
                                             const posenc_sinusoidal_params *pr, int32_t start,
                                             const int32_t *positions, size_t n_rows,
                                             void *out, size_t out_bytes) {
  posenc_i_table_plan plan;
  size_t need, row0 = 0, tile;
  int stream;
  double max_abs = 0.0;
  posenc_status st;
  double u[POSENC_GROUP * POSENC_UPARTS * POSENC_CHUNK];

  if (!out) return POSENC_ERR_NULL;
  st = posenc_i_check_sinusoidal(pr, n_rows, &need, &plan);
  if (st != POSENC_OK) return st;
  if (out_bytes < need) return POSENC_ERR_BUFFER;
  if (positions) {
    size_t r;
    for (r = 0; r < n_rows; r++) {
      double a = positions[r] < 0 ? -(double)positions[r] : (double)positions[r];
      if (a > max_abs) max_abs = a;
    }
  } else {
    if (n_rows - 1 > (size_t)((int64_t)INT32_MAX - (int64_t)start)) return POSENC_ERR_POSITION;
    max_abs = (double)start + (double)(n_rows - 1);
    if (-(double)start > max_abs) max_abs = -(double)start;
  }
  st = posenc_i_check_base(pr->base, plan.nfreq, max_abs);
  if (st != POSENC_OK) return st;

  /* omega_1 = base^(-2/d) = exp(-2 ln(base) / d) */
  plan.omega1 = posenc_i_dd_exp(posenc_i_dd_div_d(posenc_i_dd_mul_d(posenc_i_dd_log(pr->base), -2.0),
                                                  (double)pr->dim));
  tile = posenc_i_tile_rows(plan.stride * plan.esize);
  stream = need >= POSENC_STREAM_MIN_BYTES && (uintptr_t)out % 16 == 0 && (plan.stride * plan.esize) % 16 == 0 &&
           (pr->layout == POSENC_LAYOUT_INTERLEAVED || (plan.nfreq * plan.esize) % 16 == 0);

  while (row0 < n_rows) {
    size_t rows = n_rows - row0, f0;
    posenc_i_dd u_run = posenc_i_TWO_OVER_PI;
    unsigned char *rowp = (unsigned char *)out + row0 * plan.stride * plan.esize;
    if (!positions) { /* end tiles on an anchor boundary so that no anchor is computed twice */
      int64_t p0 = (int64_t)start + (int64_t)row0, end = p0 + (int64_t)tile;
      end -= (int64_t)((uint64_t)end & (POSENC_ANCHOR - 1));
      if (end > p0 && (size_t)(end - p0) < rows) rows = (size_t)(end - p0);
    } else if (rows > tile) {
      rows = tile;
    }
    for (f0 = 0; f0 < plan.nfreq; f0 += POSENC_GROUP * POSENC_CHUNK) {
      posenc_i_job job;
      size_t nf = plan.nfreq - f0 < POSENC_GROUP * POSENC_CHUNK ? plan.nfreq - f0 : POSENC_GROUP * POSENC_CHUNK;
      posenc_i_fill_parts(u, nf, &u_run, plan.omega1);
      job.u = u; job.nfreq = (unsigned)nf;
      job.start = positions ? 0 : (int32_t)((int64_t)start + (int64_t)row0);
      job.positions = positions ? positions + row0 : NULL;
      job.nrows = rows;
      job.row_stride = (ptrdiff_t)(plan.stride * plan.esize);
      job.dtype = pr->dtype;
      job.stream = stream;
      if (pr->layout == POSENC_LAYOUT_INTERLEAVED) {
        job.mode = POSENC_I_PAIRS;
        job.out = rowp + 2 * f0 * plan.esize;
        job.cos_offset = (ptrdiff_t)plan.esize;
        job.pair_cols = (unsigned)(pr->dim - 2 * f0 < 2 * nf ? pr->dim - 2 * f0 : 2 * nf);
      } else {
        job.mode = POSENC_I_PLANAR;
        job.out = rowp + f0 * plan.esize;
        job.cos_offset = (ptrdiff_t)(plan.nfreq * plan.esize);
        job.pair_cols = 0;
      }
      be->sincos_rows(&job);
    }
    if (pr->layout == POSENC_LAYOUT_SPLIT && (pr->dim & 1)) { /* the zero column */
      size_t r;
      for (r = 0; r < rows; r++)
        memset(rowp + (r * plan.stride + pr->dim - 1) * plan.esize, 0, plan.esize);
    }
    row0 += rows;
  }
  return POSENC_OK;
}

POSENC_API posenc_status posenc_sinusoidal_table(const posenc_sinusoidal_params *params,
                                                 int32_t start, size_t n_rows,
                                                 void *out, size_t out_bytes) {
  return posenc_i_sinusoidal_run(posenc_i_select(), params, start, NULL, n_rows, out, out_bytes);
}

POSENC_API posenc_status posenc_sinusoidal_rows(const posenc_sinusoidal_params *params,
                                                const int32_t *positions, size_t n_rows,
                                                void *out, size_t out_bytes) {
  if (!positions) return POSENC_ERR_NULL;
  return posenc_i_sinusoidal_run(posenc_i_select(), params, 0, positions, n_rows, out, out_bytes);
}

/* ---- self-test -------------------------------------------------------------------------- */
/* Exact f32 bits of interleaved d = 32, base 10000 at the positions below (columns 0, 1, 30, 31):
 * anchors, the last step before an anchor, negative and the largest positions. */
static const int32_t posenc_i_st_pos[8] = {0, 15, 17, -77, 131071, 16777215, 1 << 30, 2147483647};
static const uint32_t posenc_i_st_bits[8][4] = {
  {0x00000000u, 0x3f800000u, 0x00000000u, 0x3f800000u},
  {0x3f267944u, 0xbf427ae8u, 0x3b2ecfd0u, 0x3f7fffc4u},
  {0xbf761e25u, 0xbe8ce236u, 0x3b461eb4u, 0x3f7fffb3u},
  {0xbf7fe08eu, 0xbcfdbf5au, 0xbc6055c4u, 0x3f7ff9dbu},
  {0xbf13430au, 0xbf51675eu, 0xbf77cb9bu, 0xbe80958du},
  {0xbf72bf60u, 0xbea29962u, 0xbf5ebf68u, 0x3efc5842u},
  {0xbf1e091bu, 0x3f4965a3u, 0x3f7ffd8eu, 0xbc0d7b5du},
  {0xbf399422u, 0xbf30579au, 0xbc8c0523u, 0xbf7ff66du}};

/* The double-precision chain behind one value (base 10000, d = 128, frequency 37): omega_1, the
 * parts of u_37, the anchor at 2^24 - 16 and 15 recurrence steps. One fused or reassociated operation
 * anywhere in it changes these bits, even where the f32 results happen to round the same. */
static void posenc_i_selftest_chain(double out[10]) {
  double u[48 * POSENC_UPARTS], ss, sc, sp, cp;  /* 48: a multiple of the chunk width above lane 37 */
  const double *u37 = u + (37 / POSENC_CHUNK) * POSENC_UPARTS * POSENC_CHUNK + 37 % POSENC_CHUNK;
  posenc_i_dd run = posenc_i_TWO_OVER_PI;
  posenc_i_dd om = posenc_i_dd_exp(posenc_i_dd_div_d(posenc_i_dd_mul_d(posenc_i_dd_log(10000.0), -2.0), 128.0));
  int j;
  posenc_i_fill_parts(u, 38, &run, om);
  out[0] = om.hi; out[1] = om.lo;
  for (j = 0; j < POSENC_UPARTS; j++) out[2 + j] = u37[j * POSENC_CHUNK];
  posenc_i_exact_sincos(1.0, u37, POSENC_CHUNK, &ss, &sc);
  posenc_i_exact_sincos(16777200.0, u37, POSENC_CHUNK, &out[6], &out[7]);
  out[8] = out[6]; out[9] = out[7];
  POSENC_I_BACK(out[8], out[9], sp, cp, ss, sc);
  for (j = 0; j < 15; j++) POSENC_I_STEP(out[8], out[9], sp, cp, 2.0 * sc);
}
static const uint64_t posenc_i_st_chain[10] = {
  0x3febb5fad00ab22cull, 0x3c5a1cecee7dcb1full, 0x3f69657200000000ull, 0x3e0cf8c500000000ull, 0x3cb9f25400000000ull,
  0x3b6ecf7d00000000ull, 0xbfe5a563ebc9dfbdull, 0x3fe791652a4e162aull, 0xbfe3de4b96bd18a2ull, 0x3fe915b7daec9ffaull};

static int posenc_i_round_to_nearest(void) {
  /* 1 + 0.75 ulp and -1 - 0.75 ulp both round away from 1 only under round-to-nearest */
  volatile double one = 1.0, q = 1.6653345369377348e-16, a = one + q, b = -one - q;
  return a > 1.0 && b < -1.0;
}

POSENC_API posenc_status posenc_selftest(void) {
  static const int cols[4] = {0, 1, 30, 31};
  float got[8 * 32], ref[8 * 32];
  posenc_sinusoidal_params prm = posenc_sinusoidal_default(32);
  int r, c;
  double chain[10];
  if (!posenc_i_round_to_nearest()) return POSENC_ERR_SELFTEST;
  posenc_i_selftest_chain(chain);
  for (r = 0; r < 10; r++)
    if (posenc_i_dbits(chain[r]) != posenc_i_st_chain[r]) return POSENC_ERR_SELFTEST;
  if (posenc_i_sinusoidal_run(posenc_i_select(), &prm, 0, posenc_i_st_pos, 8, got, sizeof got) != POSENC_OK ||
      posenc_i_sinusoidal_run(&posenc_i_backend_scalar, &prm, 0, posenc_i_st_pos, 8, ref, sizeof ref) != POSENC_OK)
    return POSENC_ERR_SELFTEST;
  for (r = 0; r < 8; r++)
    for (c = 0; c < 4; c++)
      if (posenc_i_fbits(ref[r * 32 + cols[c]]) != posenc_i_st_bits[r][c]) return POSENC_ERR_SELFTEST;
  /* every column of the active backend against the scalar reference */
  return memcmp(got, ref, sizeof got) == 0 ? POSENC_OK : POSENC_ERR_SELFTEST;
}

#ifdef __cplusplus
}
#endif

#if defined(POSENC_I_POP_OPTIONS)
#  pragma GCC pop_options
#  undef POSENC_I_POP_OPTIONS
#endif

#endif /* POSENC_IMPLEMENTATION */
