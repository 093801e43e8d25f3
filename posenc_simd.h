/* posenc_simd.h - posenc's SIMD kernels: one source, instantiated once per ISA with SIMDe.
 *
 * Each inclusion instantiates one backend, chosen by a macro or by the compiler flags:
 *   POSENC_SIMD_AVX2 (needs -mavx2), POSENC_SIMD_SSE2 (x86 with SSE2), POSENC_SIMD_NEON
 *   (aarch64, or armv7 with -mfpu=neon); with none of them defined, the best the flags allow.
 *
 * Single file, no run-time dispatch:
 *     #define POSENC_IMPLEMENTATION
 *     #include "posenc_simd.h"
 * Run-time dispatch: compile src/posenc_<isa>.c with that ISA's flags and the implementation
 * with -DPOSENC_WITH_<ISA> for each (README, "Header-only use").
 *
 * The kernels reproduce posenc_i_scalar_sincos_rows in posenc.h bit for bit: the same IEEE double
 * operations in the same order, never fused (contraction is switched off below), no division,
 * no subnormal operands. Needs SIMDe (Debian: libsimde-dev).
 */
#if !defined(POSENC_SIMD_AVX2) && !defined(POSENC_SIMD_SSE2) && !defined(POSENC_SIMD_NEON) && !defined(POSENC_SIMD_AVX512)
#  if defined(__AVX2__)
#    define POSENC_SIMD_AVX2
#  elif defined(__SSE2__) || defined(_M_X64)
#    define POSENC_SIMD_SSE2
#  elif defined(__ARM_NEON) || defined(__ARM_NEON__)
#    define POSENC_SIMD_NEON
#  endif
#endif

#if defined(POSENC_SIMD_AVX2)
#  if !defined(__AVX2__)
#    error "POSENC_SIMD_AVX2 needs AVX2 code generation (-mavx2)"
#  endif
#  define POSENC_I_BUILTIN_AVX2
#  define POSENC_I_SIMD_ISA POSENC_ISA_AVX2
#  define POSENC_I_K(name) posenc_i_avx2_##name
#  define POSENC_I_SIMD_BACKEND posenc_i_backend_avx2
#elif defined(POSENC_SIMD_AVX512)
#  if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512DQ__) || !defined(__AVX512VL__) || \
      !defined(__F16C__)
#    error "POSENC_SIMD_AVX512 needs AVX-512 F, BW, DQ, VL and F16C code generation"
#  endif
#  define POSENC_I_BUILTIN_AVX512
#  define POSENC_I_SIMD_ISA POSENC_ISA_AVX512
#  define POSENC_I_K(name) posenc_i_avx512_##name
#  define POSENC_I_SIMD_BACKEND posenc_i_backend_avx512
#elif defined(POSENC_SIMD_SSE2)
#  if !defined(__SSE2__) && !defined(_M_X64)
#    error "POSENC_SIMD_SSE2 needs SSE2 code generation (-msse2)"
#  endif
#  define POSENC_I_BUILTIN_SSE2
#  define POSENC_I_SIMD_ISA POSENC_ISA_SSE2
#  define POSENC_I_K(name) posenc_i_sse2_##name
#  define POSENC_I_SIMD_BACKEND posenc_i_backend_sse2
#elif defined(POSENC_SIMD_NEON)
#  if !defined(__ARM_NEON) && !defined(__ARM_NEON__)
#    error "POSENC_SIMD_NEON needs NEON code generation (armv7: -mfpu=neon)"
#  endif
#  define POSENC_I_BUILTIN_NEON
#  define POSENC_I_SIMD_ISA POSENC_ISA_NEON
#  define POSENC_I_K(name) posenc_i_neon_##name
#  define POSENC_I_SIMD_BACKEND posenc_i_backend_neon
#endif

#include "posenc.h"

#if defined(POSENC_I_SIMD_ISA)

#if defined(__clang__)
#  pragma STDC FP_CONTRACT OFF
#  pragma clang fp contract(off)
#elif defined(__GNUC__)
#  pragma GCC push_options
#  pragma GCC optimize("fp-contract=off") /* not the vectorizers: SIMDe's emulated 256-bit ops need them (SSE2 +23% instructions without) */
#endif
/* 256-bit SIMDe types passed between inline functions of a TU without AVX: the ABI note is moot
 * (nothing crosses the library boundary but pointers and sizes). */
#if defined(__GNUC__)
#  pragma GCC diagnostic push
#  pragma GCC diagnostic ignored "-Wpsabi"
#endif

#include <string.h>
#include <simde/x86/avx2.h>
#include <simde/x86/f16c.h>

#ifdef __cplusplus
extern "C" {
#endif


#if defined(__GNUC__) || defined(__clang__)
#  define POSENC_I_INLINE static inline __attribute__((always_inline))
#else
#  define POSENC_I_INLINE static inline
#endif

/* (sin, cos)(p * omega) for 4 frequency lanes; u points at lane 0 of part 0 (stride CHUNK). */
POSENC_I_INLINE void POSENC_I_K(exact_sincos)(simde__m256d p, const double *u,
                                              simde__m256d *s_out, simde__m256d *c_out) {
  const simde__m256d magic = simde_mm256_set1_pd(POSENC_I_MAGIC);
  const simde__m256i one = simde_mm256_set1_epi64x(1), two = simde_mm256_set1_epi64x(2);
  simde__m256i q = simde_mm256_setzero_si256(), odd, sign_s, sign_c;
  simde__m256d f = simde_mm256_setzero_pd(), a, k, r, r2, s, c, x, y, oddm;
  int j;
  for (j = 0; j < POSENC_UPARTS; j++) {
    simde__m256d pj = simde_mm256_mul_pd(p, simde_mm256_loadu_pd(u + (size_t)j * POSENC_CHUNK));
    a = simde_mm256_add_pd(pj, magic);
    q = simde_mm256_add_epi64(q, simde_mm256_castpd_si256(a));
    k = simde_mm256_sub_pd(a, magic);
    f = (j == 0) ? simde_mm256_sub_pd(pj, k) : simde_mm256_add_pd(f, simde_mm256_sub_pd(pj, k));
  }
  a = simde_mm256_add_pd(f, magic);
  q = simde_mm256_add_epi64(q, simde_mm256_castpd_si256(a));
  k = simde_mm256_sub_pd(a, magic);
  f = simde_mm256_sub_pd(f, k);
  r = simde_mm256_add_pd(simde_mm256_mul_pd(f, simde_mm256_set1_pd(POSENC_I_PIO2_HI)),
                         simde_mm256_mul_pd(f, simde_mm256_set1_pd(POSENC_I_PIO2_LO)));
  r2 = simde_mm256_mul_pd(r, r);
#define POSENC_I_HORNER(acc, coef) acc = simde_mm256_add_pd(simde_mm256_set1_pd(coef), simde_mm256_mul_pd(r2, acc))
  s = simde_mm256_set1_pd(POSENC_I_S17);
  POSENC_I_HORNER(s, POSENC_I_S15); POSENC_I_HORNER(s, POSENC_I_S13); POSENC_I_HORNER(s, POSENC_I_S11);
  POSENC_I_HORNER(s, POSENC_I_S9); POSENC_I_HORNER(s, POSENC_I_S7); POSENC_I_HORNER(s, POSENC_I_S5);
  POSENC_I_HORNER(s, POSENC_I_S3);
  s = simde_mm256_add_pd(r, simde_mm256_mul_pd(r, simde_mm256_mul_pd(r2, s)));
  c = simde_mm256_set1_pd(POSENC_I_C18);
  POSENC_I_HORNER(c, POSENC_I_C16); POSENC_I_HORNER(c, POSENC_I_C14); POSENC_I_HORNER(c, POSENC_I_C12);
  POSENC_I_HORNER(c, POSENC_I_C10); POSENC_I_HORNER(c, POSENC_I_C8); POSENC_I_HORNER(c, POSENC_I_C6);
  POSENC_I_HORNER(c, POSENC_I_C4); POSENC_I_HORNER(c, POSENC_I_C2); POSENC_I_HORNER(c, 1.0);
#undef POSENC_I_HORNER
  /* quadrant: odd swaps sin and cos; bit 1 of q (of q+1) negates sin (cos) */
  odd = simde_mm256_sub_epi64(simde_mm256_setzero_si256(), simde_mm256_and_si256(q, one));
  oddm = simde_mm256_castsi256_pd(odd);
  x = simde_mm256_or_pd(simde_mm256_and_pd(oddm, c), simde_mm256_andnot_pd(oddm, s));
  y = simde_mm256_or_pd(simde_mm256_and_pd(oddm, s), simde_mm256_andnot_pd(oddm, c));
  sign_s = simde_mm256_slli_epi64(simde_mm256_and_si256(q, two), 62);
  sign_c = simde_mm256_slli_epi64(simde_mm256_and_si256(simde_mm256_add_epi64(q, one), two), 62);
  *s_out = simde_mm256_xor_pd(x, simde_mm256_castsi256_pd(sign_s));
  *c_out = simde_mm256_xor_pd(y, simde_mm256_castsi256_pd(sign_c));
}

#define POSENC_I_NV (POSENC_CHUNK / 4) /* 4-lane vectors per chunk */

/* One chunk at an anchor: the running (sin, cos), the previous pair (sp, cp), and the step
 * E(1) = (ss, sc) with k2 = 2*sc (see POSENC_I_BACK / POSENC_I_STEP in posenc.h). */
typedef struct POSENC_I_K(state) {
  simde__m256d s[POSENC_I_NV], c[POSENC_I_NV], sp[POSENC_I_NV], cp[POSENC_I_NV];
  simde__m256d ss[POSENC_I_NV], sc[POSENC_I_NV], k2[POSENC_I_NV];
} POSENC_I_K(state);

/* k2*y - yp for one 4-lane vector */
#define POSENC_I_STEP_V(y, yp, k2) simde_mm256_sub_pd(simde_mm256_mul_pd((k2), (y)), (yp))

/* E(p) and the pair before it (rotated back by omega), for every vector of the chunk. */
POSENC_I_INLINE void POSENC_I_K(seed)(POSENC_I_K(state) *st, const double *u, double p) {
  int v;
  for (v = 0; v < POSENC_I_NV; v++) {
    POSENC_I_K(exact_sincos)(simde_mm256_set1_pd(p), u + 4 * v, &st->s[v], &st->c[v]);
    st->sp[v] = simde_mm256_sub_pd(simde_mm256_mul_pd(st->s[v], st->sc[v]), simde_mm256_mul_pd(st->c[v], st->ss[v]));
    st->cp[v] = simde_mm256_add_pd(simde_mm256_mul_pd(st->c[v], st->sc[v]), simde_mm256_mul_pd(st->s[v], st->ss[v]));
  }
}

/* One recurrence step for n vectors: y <- k2*y - yp, yp <- y (sin and cos alike). */
POSENC_I_INLINE void POSENC_I_K(step_vecs)(simde__m256d *s, simde__m256d *c, simde__m256d *sp,
                                           simde__m256d *cp, const simde__m256d *k2, int n) {
  int v;
  for (v = 0; v < n; v++) {
    simde__m256d s1 = POSENC_I_STEP_V(s[v], sp[v], k2[v]), c1 = POSENC_I_STEP_V(c[v], cp[v], k2[v]);
    sp[v] = s[v]; cp[v] = c[v];
    s[v] = s1; c[v] = c1;
  }
}

/* f32 -> bf16 round to nearest even in the low half of each 32-bit lane (no NaN reaches here). */
POSENC_I_INLINE simde__m128i POSENC_I_K(bf16_bits)(simde__m128 x) {
  simde__m128i b = simde_mm_castps_si128(x);
  simde__m128i lsb = simde_mm_and_si128(simde_mm_srli_epi32(b, 16), simde_mm_set1_epi32(1));
  b = simde_mm_add_epi32(simde_mm_add_epi32(b, simde_mm_set1_epi32(0x7fff)), lsb);
  return simde_mm_srli_epi32(b, 16);
}

/* 16-bit values of a dtype, one per 32-bit lane (low half). */
POSENC_I_INLINE simde__m128i POSENC_I_K(half_lanes)(simde__m128 x, posenc_dtype dtype) {
  if (dtype == POSENC_DTYPE_BF16) return POSENC_I_K(bf16_bits)(x);
  return simde_mm_unpacklo_epi16(simde_mm_cvtps_ph(x, SIMDE_MM_FROUND_TO_NEAREST_INT),
                                 simde_mm_setzero_si128());
}

/* Rows are walked in passes of POSENC_I_W vectors: their running values and steps (8 ymm on
 * AVX2) then stay in registers instead of being spilled at every row. */
#define POSENC_I_W 2

typedef struct POSENC_I_K(pass) {
  simde__m256d s[POSENC_I_W], c[POSENC_I_W], sp[POSENC_I_W], cp[POSENC_I_W], k2[POSENC_I_W];
} POSENC_I_K(pass);

POSENC_I_INLINE void POSENC_I_K(store_f32)(unsigned char *dst, simde__m128 x, int stream) {
  if (stream) simde_mm_stream_ps((float *)(void *)dst, x);
  else simde_mm_storeu_ps((float *)(void *)dst, x);
}

/* Store the (sin, cos) of one row of a pass at dst (cos_offset used by PLANAR); stream: dst is
 * 16-byte aligned and non-temporal stores are wanted. */
/* How a pass stores: loop invariants kept in locals (stores through dst could alias the job). */
typedef struct POSENC_I_K(store_opts) {
  int plain;              /* a constant at each instantiation: 1 = unscaled, sin first (tables) */
  int scaled, cos_first;
  simde__m256d scale;
} POSENC_I_K(store_opts);

POSENC_I_INLINE void POSENC_I_K(pass_store)(const POSENC_I_K(pass) *ps, unsigned char *dst,
                                            ptrdiff_t cos_offset, int mode, posenc_dtype dtype, int stream,
                                            POSENC_I_K(store_opts) o) {
  int v;
  for (v = 0; v < POSENC_I_W; v++) {
    simde__m256d sd = ps->s[v], cd = ps->c[v];
    simde__m128 sf, cf;
    if (!o.plain && o.scaled) { /* the attention factor, applied before the one rounding to f32 */
      sd = simde_mm256_mul_pd(sd, o.scale);
      cd = simde_mm256_mul_pd(cd, o.scale);
    }
    sf = simde_mm256_cvtpd_ps(sd); cf = simde_mm256_cvtpd_ps(cd);
    if (!o.plain && mode == POSENC_I_PAIRS && o.cos_first) { simde__m128 t = sf; sf = cf; cf = t; }
    if (dtype == POSENC_DTYPE_F32) {
      if (mode == POSENC_I_PAIRS) {
        POSENC_I_K(store_f32)(dst + 32 * v, simde_mm_unpacklo_ps(sf, cf), stream);
        POSENC_I_K(store_f32)(dst + 32 * v + 16, simde_mm_unpackhi_ps(sf, cf), stream);
      } else {
        POSENC_I_K(store_f32)(dst + 16 * v, sf, stream);
        POSENC_I_K(store_f32)(dst + cos_offset + 16 * v, cf, stream);
      }
    } else {
      simde__m128i hs = POSENC_I_K(half_lanes)(sf, dtype), hc = POSENC_I_K(half_lanes)(cf, dtype);
      if (mode == POSENC_I_PAIRS) {
        simde__m128i both = simde_mm_or_si128(hs, simde_mm_slli_epi32(hc, 16));
        if (stream) simde_mm_stream_si128((simde__m128i *)(void *)(dst + 16 * v), both);
        else simde_mm_storeu_si128((simde__m128i *)(void *)(dst + 16 * v), both);
      } else {
        /* lanes hold values < 2^16: sign-extend them so that the signed pack is exact */
        hs = simde_mm_srai_epi32(simde_mm_slli_epi32(hs, 16), 16);
        hc = simde_mm_srai_epi32(simde_mm_slli_epi32(hc, 16), 16);
        simde_mm_storel_epi64((simde__m128i *)(void *)(dst + 8 * v), simde_mm_packs_epi32(hs, hs));
        simde_mm_storel_epi64((simde__m128i *)(void *)(dst + cos_offset + 8 * v), simde_mm_packs_epi32(hc, hc));
      }
    }
  }
}

/* posenc_i_scalar_sincos_rows, 4 lanes per vector: rows walk from anchor to anchor; inside one
 * anchor block (in L1) every chunk of the group is done in turn, in passes of POSENC_I_W vectors.
 * A chunk with fewer valid columns is written to a block buffer and its valid columns copied.
 * mode and dtype are constants at each call site, so each combination compiles to its own loop. */
POSENC_I_INLINE void POSENC_I_K(rows)(const posenc_i_job *job, int mode, posenc_dtype dtype, int plain) {
  POSENC_I_K(state) st[POSENC_GROUP];
  unsigned char block[POSENC_ANCHOR * 2 * POSENC_CHUNK * 4];
  const size_t es = dtype == POSENC_DTYPE_F32 ? 4 : 2;
  const unsigned nchunk = (job->nfreq + POSENC_CHUNK - 1) / POSENC_CHUNK;
  /* columns one chunk fills: 2 per lane in PAIRS (sin, cos), 1 per lane per half in PLANAR */
  const unsigned chunk_cols = mode == POSENC_I_PAIRS ? 2 * POSENC_CHUNK : POSENC_CHUNK;
  const unsigned total_cols = mode == POSENC_I_PAIRS ? job->pair_cols : job->nfreq;
  const size_t vec_bytes = (mode == POSENC_I_PAIRS ? 8 : 4) * es; /* columns of 4 lanes */
  size_t row = 0;
  unsigned ch;
  int v;
  POSENC_I_K(store_opts) opts;
  opts.plain = plain; opts.scaled = job->scaled; opts.cos_first = job->cos_first;
  opts.scale = simde_mm256_set1_pd(job->scale);
  for (ch = 0; ch < nchunk; ch++)
    for (v = 0; v < POSENC_I_NV; v++)
    {
      POSENC_I_K(exact_sincos)(simde_mm256_set1_pd(1.0), job->u + (ch * POSENC_UPARTS * POSENC_CHUNK) + 4 * v,
                               &st[ch].ss[v], &st[ch].sc[v]);
      st[ch].k2[v] = simde_mm256_add_pd(st[ch].sc[v], st[ch].sc[v]); /* 2*cos, exact */
    }
  while (row < job->nrows) {
    int64_t p0 = job->positions ? job->positions[row] : (int64_t)job->start + (int64_t)row;
    int64_t a = POSENC_I_ANCHOR_OF(p0), j;
    /* rows of this block: one for a position list, else up to the next anchor */
    size_t nblock = job->positions ? 1 : (size_t)(a + POSENC_ANCHOR - p0);
    if (nblock > job->nrows - row) nblock = job->nrows - row;
    for (ch = 0; ch < nchunk; ch++) {
      unsigned char *out = job->out + (ptrdiff_t)row * job->row_stride + (size_t)ch * chunk_cols * es;
      unsigned ncols = total_cols - ch * chunk_cols < chunk_cols ? total_cols - ch * chunk_cols : chunk_cols;
      int full = ncols == chunk_cols;
      /* 16-bit PLANAR halves are 8-byte stores: those stay ordinary */
      int stream = job->stream && full && (dtype == POSENC_DTYPE_F32 || mode == POSENC_I_PAIRS);
      unsigned char *base = full ? out : block;
      ptrdiff_t stride = full ? job->row_stride : (ptrdiff_t)(2 * POSENC_CHUNK * es);
      ptrdiff_t cos_offset = full ? job->cos_offset : (ptrdiff_t)(POSENC_CHUNK * es);
      size_t r;
      POSENC_I_K(seed)(&st[ch], job->u + ch * POSENC_UPARTS * POSENC_CHUNK, (double)a);
      for (j = a; j < p0; j++) POSENC_I_K(step_vecs)(st[ch].s, st[ch].c, st[ch].sp, st[ch].cp, st[ch].k2, POSENC_I_NV);
      for (v = 0; v < POSENC_I_NV; v += POSENC_I_W) {
        POSENC_I_K(pass) ps;
        unsigned char *dst = base + (size_t)v * vec_bytes;
        int w;
        for (w = 0; w < POSENC_I_W; w++) {
          ps.s[w] = st[ch].s[v + w]; ps.c[w] = st[ch].c[v + w];
          ps.sp[w] = st[ch].sp[v + w]; ps.cp[w] = st[ch].cp[v + w]; ps.k2[w] = st[ch].k2[v + w];
        }
        for (r = 0;; r++, dst += stride) {
          POSENC_I_K(pass_store)(&ps, dst, cos_offset, mode, dtype, stream, opts);
          if (r + 1 == nblock) break;
          POSENC_I_K(step_vecs)(ps.s, ps.c, ps.sp, ps.cp, ps.k2, POSENC_I_W);
        }
      }
      if (!full) {
        for (r = 0; r < nblock; r++, out += job->row_stride) {
          memcpy(out, block + (ptrdiff_t)r * stride, ncols * es);
          if (mode == POSENC_I_PLANAR)
            memcpy(out + job->cos_offset, block + (ptrdiff_t)r * stride + cos_offset, ncols * es);
        }
      }
    }
    row += nblock;
  }
  if (job->stream) simde_mm_sfence(); /* order the non-temporal stores before the caller's */
}

/* The sinusoidal tables (unscaled, sin first) get their own instantiations: on SSE2 the option
 * checks cost 23% more instructions in the hot loop (16 xmm registers are already short). */
static void POSENC_I_K(sincos_rows)(const posenc_i_job *job) {
#define POSENC_I_ROWS_CASE(mode, dtype) case (dtype) * 2 + (mode): \
    if (plain) POSENC_I_K(rows)(job, mode, dtype, 1); else POSENC_I_K(rows)(job, mode, dtype, 0); break
  const int plain = !job->scaled && !job->cos_first;
  switch (job->dtype * 2 + job->mode) {
    POSENC_I_ROWS_CASE(POSENC_I_PAIRS, POSENC_DTYPE_F32);
    POSENC_I_ROWS_CASE(POSENC_I_PLANAR, POSENC_DTYPE_F32);
    POSENC_I_ROWS_CASE(POSENC_I_PAIRS, POSENC_DTYPE_F16);
    POSENC_I_ROWS_CASE(POSENC_I_PLANAR, POSENC_DTYPE_F16);
    POSENC_I_ROWS_CASE(POSENC_I_PAIRS, POSENC_DTYPE_BF16);
    default: if (plain) POSENC_I_K(rows)(job, POSENC_I_PLANAR, POSENC_DTYPE_BF16, 1);
             else POSENC_I_K(rows)(job, POSENC_I_PLANAR, POSENC_DTYPE_BF16, 0);
             break;
  }
#undef POSENC_I_ROWS_CASE
}

/* ---- RoPE rotation: 8 f32 lanes per vector ------------------------------------------------ */
POSENC_I_INLINE simde__m256 POSENC_I_K(load8)(const unsigned char *p, posenc_dtype dtype) {
  if (dtype == POSENC_DTYPE_F32) return simde_mm256_loadu_ps((const float *)(const void *)p);
  {
    simde__m128i h = simde_mm_loadu_si128((const simde__m128i *)(const void *)p);
    if (dtype == POSENC_DTYPE_F16) return simde_mm256_cvtph_ps(h);
    return simde_mm256_castsi256_ps(simde_mm256_slli_epi32(simde_mm256_cvtepu16_epi32(h), 16));
  }
}

/* f32 -> bf16, round to nearest even; NaN stays a quiet NaN (as posenc_f32_to_bf16). */
POSENC_I_INLINE simde__m128i POSENC_I_K(bf16_8)(simde__m256 x) {
  simde__m256i b = simde_mm256_castps_si256(x), top = simde_mm256_srli_epi32(b, 16);
  simde__m256i r = simde_mm256_add_epi32(simde_mm256_add_epi32(b, simde_mm256_set1_epi32(0x7fff)),
                                         simde_mm256_and_si256(top, simde_mm256_set1_epi32(1)));
  simde__m256i nan = simde_mm256_castps_si256(simde_mm256_cmp_ps(x, x, SIMDE_CMP_UNORD_Q));
  r = simde_mm256_srli_epi32(r, 16);
  r = simde_mm256_or_si256(simde_mm256_andnot_si256(nan, r),
                           simde_mm256_and_si256(nan, simde_mm256_or_si256(top, simde_mm256_set1_epi32(0x40))));
  return simde_mm_packus_epi32(simde_mm256_castsi256_si128(r), simde_mm256_extracti128_si256(r, 1));
}

POSENC_I_INLINE void POSENC_I_K(store8)(unsigned char *p, simde__m256 v, posenc_dtype dtype) {
  if (dtype == POSENC_DTYPE_F32) simde_mm256_storeu_ps((float *)(void *)p, v);
  else if (dtype == POSENC_DTYPE_F16)
    simde_mm_storeu_si128((simde__m128i *)(void *)p, simde_mm256_cvtps_ph(v, SIMDE_MM_FROUND_TO_NEAREST_INT));
  else simde_mm_storeu_si128((simde__m128i *)(void *)p, POSENC_I_K(bf16_8)(v));
}

/* 8 NeoX pairs: (x0, x1) -> (x0*c - x1*s, x1*c + x0*s), the scalar kernel's operations. */
POSENC_I_INLINE void POSENC_I_K(neox8)(unsigned char *p0, unsigned char *p1, simde__m256 cv, simde__m256 sv,
                                       posenc_dtype dtype) {
  simde__m256 x0 = POSENC_I_K(load8)(p0, dtype), x1 = POSENC_I_K(load8)(p1, dtype);
  POSENC_I_K(store8)(p0, simde_mm256_sub_ps(simde_mm256_mul_ps(x0, cv), simde_mm256_mul_ps(x1, sv)), dtype);
  POSENC_I_K(store8)(p1, simde_mm256_add_ps(simde_mm256_mul_ps(x1, cv), simde_mm256_mul_ps(x0, sv)), dtype);
}

/* 4 GPT-J pairs: x*c + swap(x)*s with the expanded rows (s = -sin, sin, ...). */
POSENC_I_INLINE void POSENC_I_K(gptj8)(unsigned char *p, simde__m256 cv, simde__m256 sv, posenc_dtype dtype) {
  simde__m256 x = POSENC_I_K(load8)(p, dtype), xs = simde_mm256_permute_ps(x, 0xB1);
  POSENC_I_K(store8)(p, simde_mm256_add_ps(simde_mm256_mul_ps(x, cv), simde_mm256_mul_ps(xs, sv)), dtype);
}

/* 8 lanes at lane j of `heads` heads (NeoX: lanes j..j+7 and their partners at j+h; GPT-J:
 * 4 pairs). Everything the loop reads lives in locals: stores through the data pointers could
 * alias the job. */
POSENC_I_INLINE void POSENC_I_K(rotate_lanes)(unsigned char *x, ptrdiff_t head_stride, size_t heads,
                                              size_t off0, size_t off1, simde__m256 cv, simde__m256 sv,
                                              int style, posenc_dtype dtype) {
  size_t hd;
  for (hd = 0; hd < heads; hd++) { /* indexed, not stepped: no pointer past the last head */
    unsigned char *xh = x + (ptrdiff_t)hd * head_stride;
    if (style == POSENC_ROPE_NEOX) POSENC_I_K(neox8)(xh + off0, xh + off1, cv, sv, dtype);
    else POSENC_I_K(gptj8)(xh + off0, cv, sv, dtype);
  }
}

POSENC_I_INLINE void POSENC_I_K(rotate_heads)(const posenc_i_rot_job *job, int style, posenc_dtype dtype) {
  const size_t es = dtype == POSENC_DTYPE_F32 ? 4 : 2, h = job->pairs, heads = job->heads;
  const size_t n = style == POSENC_ROPE_NEOX ? h : 2 * h; /* lanes per head */
  const size_t nv = n - n % 8, rest = n - nv;
  const ptrdiff_t hs = job->head_stride;
  unsigned char *const x0 = job->x;
  const float *const c = job->c, *const s = job->s;
  /* Heads in groups, lanes inside a group: walking all heads per 8 lanes (a 512-byte stride over
   * a 16 KiB token) got a third of the memory bandwidth in prefill. Measured best (bench_rope's
   * prototypes): NeoX two heads at a time (90% of the floor, and the cos/sin loads shared), GPT-J
   * one (91%). */
  const size_t group = style == POSENC_ROPE_NEOX ? 2 : 1;
  size_t j, hd;
  for (hd = 0; hd < heads; hd += group) {
    size_t ng = heads - hd < group ? heads - hd : group;
    unsigned char *xg = x0 + (ptrdiff_t)hd * hs;
    for (j = 0; j < nv; j += 8)
      POSENC_I_K(rotate_lanes)(xg, hs, ng, j * es, (h + j) * es, simde_mm256_loadu_ps(c + j),
                               simde_mm256_loadu_ps(s + j), style, dtype);
  }
  if (rest) { /* the last lanes: the same vector code on a zero-padded copy */
    float ct[8], st[8];
    unsigned char t[64];
    memset(ct, 0, sizeof ct); memset(st, 0, sizeof st);
    memcpy(ct, c + nv, rest * sizeof(float));
    memcpy(st, s + nv, rest * sizeof(float));
    for (hd = 0; hd < heads; hd++) {
      unsigned char *x = x0 + (ptrdiff_t)hd * hs;
      memset(t, 0, sizeof t);
      memcpy(t, x + nv * es, rest * es);
      if (style == POSENC_ROPE_NEOX) memcpy(t + 32, x + (h + nv) * es, rest * es);
      POSENC_I_K(rotate_lanes)(t, 0, 1, 0, 32, simde_mm256_loadu_ps(ct), simde_mm256_loadu_ps(st), style, dtype);
      memcpy(x + nv * es, t, rest * es);
      if (style == POSENC_ROPE_NEOX) memcpy(x + (h + nv) * es, t + 32, rest * es);
    }
  }
}

static void POSENC_I_K(rotate)(const posenc_i_rot_job *job) {
#define POSENC_I_ROT_CASE(style, dtype) case (style) * 3 + (dtype): POSENC_I_K(rotate_heads)(job, style, dtype); break
  switch (job->style * 3 + job->dtype) {
    POSENC_I_ROT_CASE(POSENC_ROPE_NEOX, POSENC_DTYPE_F32);
    POSENC_I_ROT_CASE(POSENC_ROPE_NEOX, POSENC_DTYPE_F16);
    POSENC_I_ROT_CASE(POSENC_ROPE_NEOX, POSENC_DTYPE_BF16);
    POSENC_I_ROT_CASE(POSENC_ROPE_GPTJ, POSENC_DTYPE_F32);
    POSENC_I_ROT_CASE(POSENC_ROPE_GPTJ, POSENC_DTYPE_F16);
    default: POSENC_I_K(rotate_heads)(job, POSENC_ROPE_GPTJ, POSENC_DTYPE_BF16); break;
  }
#undef POSENC_I_ROT_CASE
}

/* A cache row's values to f32 (negated for the inverse: exact). */
static void POSENC_I_K(to_f32)(const unsigned char *src, posenc_dtype dtype, float *dst, size_t n, int negate) {
  const size_t es = dtype == POSENC_DTYPE_F32 ? 4 : 2;
  const simde__m256 sign = simde_mm256_set1_ps(negate ? -0.0f : 0.0f);
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    simde_mm256_storeu_ps(dst + i, simde_mm256_xor_ps(POSENC_I_K(load8)(src + i * es, dtype), sign));
  if (i < n) {
    unsigned char t[32];
    float f[8];
    memset(t, 0, sizeof t);
    memcpy(t, src + i * es, (n - i) * es);
    simde_mm256_storeu_ps(f, simde_mm256_xor_ps(POSENC_I_K(load8)(t, dtype), sign));
    memcpy(dst + i, f, (n - i) * sizeof(float));
  }
}

/* ---- masked add (posenc_i_scalar_add_fwd / _bwd in posenc.h, bit for bit) ---------------- */
/* 32-bit lane products mod 2^32. Without native AVX2, SIMDe 0.7.4's simde_mm256_mullo_epi32
 * multiplies signed ints (undefined on overflow; UBSan reports it); its 128-bit form is defined
 * for every input (SSE4.1 or NEON natively, else 64-bit products). */
POSENC_I_INLINE simde__m256i POSENC_I_K(mul32)(simde__m256i a, simde__m256i b) {
#if defined(SIMDE_X86_AVX2_NATIVE)
  return simde_mm256_mullo_epi32(a, b);
#else
  return simde_mm256_set_m128i(
      simde_mm_mullo_epi32(simde_mm256_extracti128_si256(a, 1), simde_mm256_extracti128_si256(b, 1)),
      simde_mm_mullo_epi32(simde_mm256_castsi256_si128(a), simde_mm256_castsi256_si128(b)));
#endif
}

/* The dropout factor of 8 columns col .. col+7: 0 where lowbias32(key ^ col*0x9E3779B9) <
 * threshold (unsigned; thr_s is threshold ^ 2^31 for the signed compare), else keep_scale. */
POSENC_I_INLINE simde__m256 POSENC_I_K(keep8)(uint32_t key, size_t col, simde__m256i thr_s, simde__m256 ks) {
  const simde__m256i lane = simde_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const simde__m256i sign = simde_mm256_set1_epi32((int32_t)0x80000000u);
  simde__m256i c = simde_mm256_add_epi32(simde_mm256_set1_epi32((int32_t)(uint32_t)col), lane);
  simde__m256i h = simde_mm256_xor_si256(simde_mm256_set1_epi32((int32_t)key),
                                         POSENC_I_K(mul32)(c, simde_mm256_set1_epi32((int32_t)0x9E3779B9u)));
  h = simde_mm256_xor_si256(h, simde_mm256_srli_epi32(h, 16));
  h = POSENC_I_K(mul32)(h, simde_mm256_set1_epi32((int32_t)0x7feb352du));
  h = simde_mm256_xor_si256(h, simde_mm256_srli_epi32(h, 15));
  h = POSENC_I_K(mul32)(h, simde_mm256_set1_epi32((int32_t)0x846ca68bu));
  h = simde_mm256_xor_si256(h, simde_mm256_srli_epi32(h, 16));
  return simde_mm256_andnot_ps(simde_mm256_castsi256_ps(simde_mm256_cmpgt_epi32(thr_s, simde_mm256_xor_si256(h, sign))), ks);
}

/* store8, or non-temporal (dst 32-byte aligned for f32, 16 for 16-bit types) */
POSENC_I_INLINE void POSENC_I_K(store8s)(unsigned char *p, simde__m256 v, posenc_dtype dtype, int stream) {
  if (!stream) { POSENC_I_K(store8)(p, v, dtype); return; }
  if (dtype == POSENC_DTYPE_F32) {
    POSENC_I_K(store_f32)(p, simde_mm256_castps256_ps128(v), 1);
    POSENC_I_K(store_f32)(p + 16, simde_mm256_extractf128_ps(v, 1), 1);
  } else {
    simde__m128i h = dtype == POSENC_DTYPE_F16 ? simde_mm256_cvtps_ph(v, SIMDE_MM_FROUND_TO_NEAREST_INT)
                                               : POSENC_I_K(bf16_8)(v);
    simde_mm_stream_si128((simde__m128i *)(void *)p, h);
  }
}

POSENC_I_INLINE simde__m256 POSENC_I_K(fwd8)(const unsigned char *x, const unsigned char *p, posenc_dtype xt,
                                             posenc_dtype pt, simde__m256 sc) {
  return simde_mm256_add_ps(simde_mm256_mul_ps(POSENC_I_K(load8)(x, xt), sc), POSENC_I_K(load8)(p, pt));
}

POSENC_I_INLINE void POSENC_I_K(add_fwd_rows)(const posenc_i_add_job *job, posenc_dtype xt, posenc_dtype pt,
                                              posenc_dtype yt) {
  const size_t xs = xt == POSENC_DTYPE_F32 ? 4 : 2, ps = pt == POSENC_DTYPE_F32 ? 4 : 2;
  const size_t ys = yt == POSENC_DTYPE_F32 ? 4 : 2;
  const size_t n = job->n, nv = n - n % 8, rest = n - nv, col0 = job->col0, nrows = job->nrows;
  const simde__m256 sc = simde_mm256_set1_ps(job->scale), ks = simde_mm256_set1_ps(job->keep_scale);
  const simde__m256i thr = simde_mm256_set1_epi32((int32_t)(job->threshold ^ 0x80000000u));
  const uint32_t *const keys = job->keys;
  const unsigned char *x = job->x, *p = job->p;
  unsigned char *y = job->y;
  const ptrdiff_t xst = job->x_stride, pst = job->p_stride, yst = job->y_stride;
  const int want_stream = job->stream;
  size_t r, j;
  for (r = 0; r < nrows; r++, x += xst, p += pst, y += yst) {
    const int stream = want_stream && (uintptr_t)y % 32 == 0;
    if (keys) {
      const uint32_t key = keys[r];
      for (j = 0; j < nv; j += 8) {
        simde__m256 v = POSENC_I_K(fwd8)(x + j * xs, p + j * ps, xt, pt, sc);
        POSENC_I_K(store8s)(y + j * ys, simde_mm256_mul_ps(v, POSENC_I_K(keep8)(key, col0 + j, thr, ks)), yt, stream);
      }
    } else if (stream) {
      for (j = 0; j < nv; j += 8) POSENC_I_K(store8s)(y + j * ys, POSENC_I_K(fwd8)(x + j * xs, p + j * ps, xt, pt, sc), yt, 1);
    } else {
      for (j = 0; j < nv; j += 8) POSENC_I_K(store8)(y + j * ys, POSENC_I_K(fwd8)(x + j * xs, p + j * ps, xt, pt, sc), yt);
    }
    if (rest) { /* the same vector code on zero-padded copies */
      unsigned char tx[32], tp[32], ty[32];
      simde__m256 v;
      memset(tx, 0, sizeof tx); memset(tp, 0, sizeof tp);
      memcpy(tx, x + nv * xs, rest * xs); memcpy(tp, p + nv * ps, rest * ps);
      v = POSENC_I_K(fwd8)(tx, tp, xt, pt, sc);
      if (keys) v = simde_mm256_mul_ps(v, POSENC_I_K(keep8)(keys[r], col0 + nv, thr, ks));
      POSENC_I_K(store8)(ty, v, yt);
      memcpy(y + nv * ys, ty, rest * ys);
    }
  }
  if (want_stream) simde_mm_sfence();
}

static void POSENC_I_K(add_fwd)(const posenc_i_add_job *job) {
  const posenc_dtype xt = job->x_dtype, pt = job->p_dtype, yt = job->y_dtype;
  if (xt == pt && pt == yt) { /* the common cases get loops with constant dtypes */
    if (xt == POSENC_DTYPE_F32) POSENC_I_K(add_fwd_rows)(job, POSENC_DTYPE_F32, POSENC_DTYPE_F32, POSENC_DTYPE_F32);
    else if (xt == POSENC_DTYPE_BF16) POSENC_I_K(add_fwd_rows)(job, POSENC_DTYPE_BF16, POSENC_DTYPE_BF16, POSENC_DTYPE_BF16);
    else POSENC_I_K(add_fwd_rows)(job, POSENC_DTYPE_F16, POSENC_DTYPE_F16, POSENC_DTYPE_F16);
  } else if (pt == POSENC_DTYPE_F32 && xt == yt) {
    if (xt == POSENC_DTYPE_F32) POSENC_I_K(add_fwd_rows)(job, POSENC_DTYPE_F32, POSENC_DTYPE_F32, POSENC_DTYPE_F32);
    else if (xt == POSENC_DTYPE_BF16) POSENC_I_K(add_fwd_rows)(job, POSENC_DTYPE_BF16, POSENC_DTYPE_F32, POSENC_DTYPE_BF16);
    else POSENC_I_K(add_fwd_rows)(job, POSENC_DTYPE_F16, POSENC_DTYPE_F32, POSENC_DTYPE_F16);
  } else {
    POSENC_I_K(add_fwd_rows)(job, xt, pt, yt);
  }
}

/* has_keys, has_y, has_g: constants at each call site (the loop has no branch left) */
POSENC_I_INLINE void POSENC_I_K(add_bwd_rows)(const posenc_i_add_job *job, posenc_dtype xt, posenc_dtype yt,
                                              int has_keys, int has_y, int has_g) {
  const size_t xs = xt == POSENC_DTYPE_F32 ? 4 : 2, ys = yt == POSENC_DTYPE_F32 ? 4 : 2;
  const size_t n = job->n, nv = n - n % 8, rest = n - nv, col0 = job->col0, nrows = job->nrows;
  const simde__m256 sc = simde_mm256_set1_ps(job->scale), ks = simde_mm256_set1_ps(job->keep_scale);
  const simde__m256i thr = simde_mm256_set1_epi32((int32_t)(job->threshold ^ 0x80000000u));
  const uint32_t *const keys = job->keys;
  const unsigned char *x = job->x;
  unsigned char *y = job->y;
  float *gt = job->gt;
  const ptrdiff_t xst = job->x_stride, yst = job->y_stride, gst = job->gt_stride;
  const int want_stream = has_y && job->stream;
  size_t r, j;
  for (r = 0; r < nrows; r++, x += xst) {
    unsigned char *yr = has_y ? y + (ptrdiff_t)r * yst : NULL;
    float *g = has_g ? gt + (ptrdiff_t)r * gst : NULL;
    const int stream = want_stream && (uintptr_t)yr % 32 == 0;
    const uint32_t key = has_keys ? keys[r] : 0u;
    for (j = 0; j < nv; j += 8) {
      simde__m256 v = POSENC_I_K(load8)(x + j * xs, xt);
      if (has_keys) v = simde_mm256_mul_ps(v, POSENC_I_K(keep8)(key, col0 + j, thr, ks));
      if (has_y) POSENC_I_K(store8s)(yr + j * ys, simde_mm256_mul_ps(v, sc), yt, stream);
      if (has_g) simde_mm256_storeu_ps(g + j, simde_mm256_add_ps(simde_mm256_loadu_ps(g + j), v));
    }
    if (rest) { /* the same vector code on zero-padded copies */
      unsigned char tx[32], ty[32];
      float tg[8];
      simde__m256 v;
      memset(tx, 0, sizeof tx); memset(tg, 0, sizeof tg);
      memcpy(tx, x + nv * xs, rest * xs);
      v = POSENC_I_K(load8)(tx, xt);
      if (has_keys) v = simde_mm256_mul_ps(v, POSENC_I_K(keep8)(key, col0 + nv, thr, ks));
      if (has_y) {
        POSENC_I_K(store8)(ty, simde_mm256_mul_ps(v, sc), yt);
        memcpy(yr + nv * ys, ty, rest * ys);
      }
      if (has_g) {
        memcpy(tg, g + nv, rest * sizeof(float));
        simde_mm256_storeu_ps(tg, simde_mm256_add_ps(simde_mm256_loadu_ps(tg), v));
        memcpy(g + nv, tg, rest * sizeof(float));
      }
    }
  }
  if (want_stream) simde_mm_sfence();
}

static void POSENC_I_K(add_bwd)(const posenc_i_add_job *job) {
  const posenc_dtype xt = job->x_dtype, yt = job->y ? job->y_dtype : POSENC_DTYPE_F32;
  const int k = job->keys != NULL, hy = job->y != NULL, hg = job->gt != NULL;
  if (xt == POSENC_DTYPE_F32 && yt == POSENC_DTYPE_F32 && !k) { /* the common case: no dropout, f32 */
    if (hy && hg) POSENC_I_K(add_bwd_rows)(job, POSENC_DTYPE_F32, POSENC_DTYPE_F32, 0, 1, 1);
    else if (hy) POSENC_I_K(add_bwd_rows)(job, POSENC_DTYPE_F32, POSENC_DTYPE_F32, 0, 1, 0);
    else POSENC_I_K(add_bwd_rows)(job, POSENC_DTYPE_F32, POSENC_DTYPE_F32, 0, 0, 1);
  } else if (hy && hg) {
    if (k) POSENC_I_K(add_bwd_rows)(job, xt, yt, 1, 1, 1); else POSENC_I_K(add_bwd_rows)(job, xt, yt, 0, 1, 1);
  } else if (hy) {
    if (k) POSENC_I_K(add_bwd_rows)(job, xt, yt, 1, 1, 0); else POSENC_I_K(add_bwd_rows)(job, xt, yt, 0, 1, 0);
  } else {
    if (k) POSENC_I_K(add_bwd_rows)(job, xt, yt, 1, 0, 1); else POSENC_I_K(add_bwd_rows)(job, xt, yt, 0, 0, 1);
  }
}

/* ---- bias rows (posenc_i_scalar_bias_row in posenc.h, bit for bit) ----------------------- */
/* 0xff in the bytes (of 8) whose keep byte is 0: the masked keys. */
POSENC_I_INLINE simde__m128i POSENC_I_K(masked_bytes)(const uint8_t *keep) {
  return simde_mm_cmpeq_epi8(simde_mm_loadl_epi64((const simde__m128i *)(const void *)keep), simde_mm_setzero_si128());
}
/* ... widened to 8 lanes of 32 bits (all ones where masked). Off AVX2, SIMDe would widen with
 * cvtepu8_epi32 through memory: unpacking the compared bytes stays in registers. */
POSENC_I_INLINE simde__m256 POSENC_I_K(masked8)(const uint8_t *keep) {
  const simde__m128i m8 = POSENC_I_K(masked_bytes)(keep);
#if defined(SIMDE_X86_AVX2_NATIVE)
  return simde_mm256_castsi256_ps(simde_mm256_cvtepi8_epi32(m8));
#else
  const simde__m128i m16 = simde_mm_unpacklo_epi8(m8, m8);
  return simde_mm256_castsi256_ps(simde_mm256_set_m128i(simde_mm_unpackhi_epi16(m16, m16), simde_mm_unpacklo_epi16(m16, m16)));
#endif
}

/* Eight columns of -inf. */
POSENC_I_INLINE void POSENC_I_K(fill8)(unsigned char *p, posenc_dtype dt) {
  if (dt == POSENC_DTYPE_F16) {
    simde_mm_storeu_si128((simde__m128i *)(void *)p, simde_mm_set1_epi16((int16_t)(uint16_t)0xfc00u));
  } else {
#if defined(SIMDE_X86_AVX2_NATIVE)
    simde_mm256_storeu_ps((float *)(void *)p, simde_mm256_set1_ps(-SIMDE_MATH_INFINITYF));
#else /* SIMDe's emulated 256-bit store of a constant became eight scalar stores */
    simde_mm_storeu_ps((float *)(void *)p, simde_mm_set1_ps(-SIMDE_MATH_INFINITYF));
    simde_mm_storeu_ps((float *)(void *)p + 4, simde_mm_set1_ps(-SIMDE_MATH_INFINITYF));
#endif
  }
}

/* MASK: -inf where masked, the other bits untouched (no conversion, so an f16 signalling NaN
 * stays as it is, as in the scalar kernel). */
POSENC_I_INLINE void POSENC_I_K(mask8)(unsigned char *p, const uint8_t *keep, posenc_dtype dt) {
  if (dt == POSENC_DTYPE_F16) {
    const simde__m128i m8 = POSENC_I_K(masked_bytes)(keep), m16 = simde_mm_unpacklo_epi8(m8, m8);
    simde__m128i h = simde_mm_loadu_si128((const simde__m128i *)(const void *)p);
    h = simde_mm_or_si128(simde_mm_andnot_si128(m16, h),
                          simde_mm_and_si128(m16, simde_mm_set1_epi16((int16_t)(uint16_t)0xfc00u)));
    simde_mm_storeu_si128((simde__m128i *)(void *)p, h);
  } else {
    simde__m256 v = simde_mm256_loadu_ps((const float *)(const void *)p);
    v = simde_mm256_blendv_ps(v, simde_mm256_set1_ps(-SIMDE_MATH_INFINITYF), POSENC_I_K(masked8)(keep));
    simde_mm256_storeu_ps((float *)(void *)p, v);
  }
}

/* CONST, LINEAR, VALUES on columns j .. j+7 (d: the LINEAR distances, v: the VALUES values). */
POSENC_I_INLINE void POSENC_I_K(add8)(unsigned char *p, const uint8_t *keep, posenc_dtype dt, int kind,
                                      simde__m256 a, simde__m256 d, const float *v) {
  simde__m256 x = POSENC_I_K(load8)(p, dt);
  if (kind == POSENC_I_SEG_CONST) x = simde_mm256_add_ps(x, a);
  else if (kind == POSENC_I_SEG_LINEAR) x = simde_mm256_add_ps(x, simde_mm256_mul_ps(a, d));
  else x = simde_mm256_add_ps(x, simde_mm256_loadu_ps(v));
  if (keep) x = simde_mm256_blendv_ps(x, simde_mm256_set1_ps(-SIMDE_MATH_INFINITYF), POSENC_I_K(masked8)(keep));
  POSENC_I_K(store8)(p, x, dt);
}

POSENC_I_INLINE void POSENC_I_K(do8)(unsigned char *p, const uint8_t *keep, posenc_dtype dt, int kind,
                                     simde__m256 a, simde__m256 d, const float *v) {
  if (kind == POSENC_I_SEG_FILL) POSENC_I_K(fill8)(p, dt);
  else if (kind == POSENC_I_SEG_MASK) POSENC_I_K(mask8)(p, keep, dt);
  else POSENC_I_K(add8)(p, keep, dt, kind, a, d, v);
}

/* The VALUES values from column `at` of the segment on (NULL for the other kinds). */
POSENC_I_INLINE const float *POSENC_I_K(vals)(const posenc_i_bias_seg *g, int kind, size_t at) {
  return kind == POSENC_I_SEG_VALUES ? g->v + at : NULL;
}

/* Column j alone, with the scalar kernel's operations: the same bits (f16 conversions round to
 * nearest even alike). start: the segment's first column. */
POSENC_I_INLINE void POSENC_I_K(do1)(const posenc_i_bias_job *job, const posenc_i_bias_seg *g, size_t j,
                                     size_t start, posenc_dtype dt, int kind) {
  const size_t es = dt == POSENC_DTYPE_F32 ? 4 : 2;
  const int masked = job->keep && job->keep[j] == 0;
  unsigned char *p = job->row + j * es;
  float x;
  uint16_t h;
  if (kind == POSENC_I_SEG_MASK && !masked) return;
  if (kind == POSENC_I_SEG_FILL || masked) {
    x = -SIMDE_MATH_INFINITYF;
  } else {
    if (dt == POSENC_DTYPE_F32) memcpy(&x, p, 4);
    else { memcpy(&h, p, 2); x = posenc_f16_to_f32(h); }
    if (kind == POSENC_I_SEG_CONST) x = x + g->a;
    else if (kind == POSENC_I_SEG_LINEAR) x = x + g->a * (float)((int64_t)g->c + (int64_t)j);
    else x = x + g->v[j - start];
  }
  if (dt == POSENC_DTYPE_F32) memcpy(p, &x, 4);
  else { h = posenc_f32_to_f16(x); memcpy(p, &h, 2); }
}

/* One segment; kind and dtype are constants at every call site. A long segment starts with
 * single columns up to a vector-aligned address (vectors that straddle cache lines cost about
 * 5% in DRAM), then vectors of 8, then single columns. */
POSENC_I_INLINE void POSENC_I_K(bias_seg)(const posenc_i_bias_job *job, const posenc_i_bias_seg *g, size_t j,
                                          posenc_dtype dt, int kind) {
  const size_t es = dt == POSENC_DTYPE_F32 ? 4 : 2, end = g->end, start = j;
  const uint8_t *keep = job->keep;
  unsigned char *row = job->row;
  if (end - j >= 64 && (uintptr_t)row % es == 0)
    for (; ((uintptr_t)(row + j * es) & (8 * es - 1)) != 0; j++) POSENC_I_K(do1)(job, g, j, start, dt, kind);
  if (end - j >= 8) {
    const simde__m256 a = simde_mm256_set1_ps(g->a);
    const simde__m256 iota = simde_mm256_setr_ps(0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f);
    const int64_t c = (int64_t)g->c;
    /* the LINEAR distances c + j, exact (|c + j| <= 2^24). AVX2 carries them in a register from
     * one vector to the next; SIMDe's emulated 256-bit vector went through the stack each time
     * (2.5x slower on SSE2), so the other backends make them afresh. */
#if defined(SIMDE_X86_AVX2_NATIVE)
    simde__m256 d = simde_mm256_add_ps(simde_mm256_set1_ps((float)(c + (int64_t)j)), iota);
    for (; j + 8 <= end; j += 8, d = simde_mm256_add_ps(d, simde_mm256_set1_ps(8.0f)))
      POSENC_I_K(do8)(row + j * es, keep ? keep + j : NULL, dt, kind, a, d, POSENC_I_K(vals)(g, kind, j - start));
#else
    for (; j + 8 <= end; j += 8) {
      const simde__m256 d = kind == POSENC_I_SEG_LINEAR
                          ? simde_mm256_add_ps(simde_mm256_set1_ps((float)(c + (int64_t)j)), iota) : iota;
      POSENC_I_K(do8)(row + j * es, keep ? keep + j : NULL, dt, kind, a, d, POSENC_I_K(vals)(g, kind, j - start));
    }
#endif
  }
  for (; j < end; j++) POSENC_I_K(do1)(job, g, j, start, dt, kind);
}

static void POSENC_I_K(bias_row)(const posenc_i_bias_job *job) {
#define POSENC_I_BIAS_CASE(kind, dt) case (kind) * 2 + ((dt) == POSENC_DTYPE_F16): \
  POSENC_I_K(bias_seg)(job, g, j, (dt), (kind)); break
  size_t j = job->begin, n;
  for (n = 0; n < job->nseg; n++) {
    const posenc_i_bias_seg *g = &job->seg[n];
    if (g->kind != POSENC_I_SEG_MASK || job->keep) {
      switch (g->kind * 2 + (job->dtype == POSENC_DTYPE_F16)) {
        POSENC_I_BIAS_CASE(POSENC_I_SEG_FILL, POSENC_DTYPE_F32);
        POSENC_I_BIAS_CASE(POSENC_I_SEG_FILL, POSENC_DTYPE_F16);
        POSENC_I_BIAS_CASE(POSENC_I_SEG_MASK, POSENC_DTYPE_F32);
        POSENC_I_BIAS_CASE(POSENC_I_SEG_MASK, POSENC_DTYPE_F16);
        POSENC_I_BIAS_CASE(POSENC_I_SEG_CONST, POSENC_DTYPE_F32);
        POSENC_I_BIAS_CASE(POSENC_I_SEG_CONST, POSENC_DTYPE_F16);
        POSENC_I_BIAS_CASE(POSENC_I_SEG_LINEAR, POSENC_DTYPE_F32);
        POSENC_I_BIAS_CASE(POSENC_I_SEG_LINEAR, POSENC_DTYPE_F16);
        POSENC_I_BIAS_CASE(POSENC_I_SEG_VALUES, POSENC_DTYPE_F32);
        POSENC_I_BIAS_CASE(POSENC_I_SEG_VALUES, POSENC_DTYPE_F16);
        default: break;
      }
    }
    j = g->end;
  }
#undef POSENC_I_BIAS_CASE
}

/* ARMv7 NEON flushes subnormal f32 operands and results to zero, VFP does not: rotation there
 * runs the scalar kernel (on VFP) so that its bits match every other backend. */
#if defined(__arm__) && !defined(__aarch64__)
#  define POSENC_I_SIMD_ROTATE posenc_i_scalar_rotate
#  define POSENC_I_SIMD_ADD_FWD posenc_i_scalar_add_fwd  /* the masked add: likewise (x*scale + P can be subnormal) */
#  define POSENC_I_SIMD_ADD_BWD posenc_i_scalar_add_bwd
#  define POSENC_I_SIMD_BIAS_ROW posenc_i_scalar_bias_row /* and the bias add */
#else
#  define POSENC_I_SIMD_ROTATE POSENC_I_K(rotate)
#  define POSENC_I_SIMD_ADD_FWD POSENC_I_K(add_fwd)
#  define POSENC_I_SIMD_ADD_BWD POSENC_I_K(add_bwd)
#  define POSENC_I_SIMD_BIAS_ROW POSENC_I_K(bias_row)
#endif

extern const posenc_i_backend POSENC_I_SIMD_BACKEND;
const posenc_i_backend POSENC_I_SIMD_BACKEND = {POSENC_I_SIMD_ISA, POSENC_I_K(sincos_rows), POSENC_I_SIMD_ROTATE,
                                                 POSENC_I_K(to_f32), POSENC_I_SIMD_ADD_FWD, POSENC_I_SIMD_ADD_BWD,
                                                 POSENC_I_SIMD_BIAS_ROW};

#ifdef __cplusplus
}
#endif

#if defined(__GNUC__)
#  pragma GCC diagnostic pop
#endif
#if defined(__GNUC__) && !defined(__clang__)
#  pragma GCC pop_options
#endif

#endif /* POSENC_I_SIMD_ISA */
