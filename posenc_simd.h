/* posenc_simd.h - posenc's SIMD kernels: one source, instantiated once per ISA with SIMDe.
 *
 * Included once per file, it instantiates one backend, chosen by a macro or the compiler flags:
 *   POSENC_SIMD_AVX512 (needs -mavx512f -mavx512bw -mavx512dq -mavx512vl), POSENC_SIMD_AVX2
 *   (needs -mavx2; -mf16c for its f16 conversions), POSENC_SIMD_SSE2 (x86 with SSE2),
 *   POSENC_SIMD_NEON (aarch64, or armv7 with -mfpu=neon), POSENC_SIMD_SIMD128 (WebAssembly, needs
 *   -msimd128); with none of them defined, the widest the flags allow.
 *
 * Single file, no run-time dispatch:
 *     #define POSENC_IMPLEMENTATION
 *     #include "posenc_simd.h"
 * Run-time dispatch: compile src/posenc_<isa>.c with that ISA's flags and the implementation
 * with -DPOSENC_WITH_<ISA> for each (README, "Header-only use").
 *
 * The kernels are written once, against the small vocabulary of vector types and operations
 * defined below over SIMDe, and instantiated at POSENC_I_VBITS bits per vector: 512 for AVX-512,
 * 256 for AVX2, 128 for SSE2 and NEON. They test capabilities (SIMDe's SIMDE_X86_*_NATIVE), never
 * an ISA's name.
 *
 * The kernels reproduce posenc_i_scalar_sincos_rows in posenc.h bit for bit: the same IEEE double
 * operations in the same order, never fused (contraction is switched off below), no division,
 * no subnormal operands. Needs SIMDe (Debian: libsimde-dev).
 */
/* A backend once per translation unit: its kernels are the file's static functions. (Where the
 * flags allow no backend, including it again is harmless.) */
#if defined(POSENC_I_SIMD_ISA)
#  error "posenc_simd.h is included twice in this translation unit (a unity build?): its backend is instantiated once per file"
#else

#if !defined(POSENC_SIMD_AVX512BF16) && !defined(POSENC_SIMD_AVX512) && !defined(POSENC_SIMD_AVX2) && !defined(POSENC_SIMD_SSE2) && \
    !defined(POSENC_SIMD_NEON) && !defined(POSENC_SIMD_SIMD128)
#  if defined(__wasm_simd128__) /* first: Emscripten's -msse2 emulation defines __SSE2__ too */
#    define POSENC_SIMD_SIMD128
#  elif defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512VL__) && \
      defined(__AVX512BF16__)
#    define POSENC_SIMD_AVX512BF16
#  elif defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512VL__)
#    define POSENC_SIMD_AVX512
#  elif defined(__AVX2__)
#    define POSENC_SIMD_AVX2
#  elif defined(__SSE2__) || defined(_M_X64)
#    define POSENC_SIMD_SSE2
#  elif defined(__ARM_NEON) || defined(__ARM_NEON__)
#    define POSENC_SIMD_NEON
#  endif
#endif

#if defined(POSENC_SIMD_AVX512BF16)
#  if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512DQ__) || !defined(__AVX512VL__) || \
      !defined(__AVX512BF16__)
#    error "POSENC_SIMD_AVX512BF16 needs AVX-512 F, BW, DQ, VL and BF16 code generation (-mavx512f -mavx512bw -mavx512dq -mavx512vl -mavx512bf16)"
#  endif
#  define POSENC_I_BUILTIN_AVX512BF16
#  define POSENC_I_SIMD_ISA POSENC_ISA_AVX512BF16
#  define POSENC_I_K(name) posenc_i_avx512bf16_##name
#  define POSENC_I_SIMD_BACKEND posenc_i_backend_avx512bf16
#  define POSENC_I_ISA_VBITS 512
#  define POSENC_I_CVT_BF16 /* VCVTNEPS2BF16 (SIMDe 0.7 has no portable form of it) */
#elif defined(POSENC_SIMD_AVX512)
#  if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512DQ__) || !defined(__AVX512VL__)
#    error "POSENC_SIMD_AVX512 needs AVX-512 F, BW, DQ and VL code generation (-mavx512f -mavx512bw -mavx512dq -mavx512vl)"
#  endif
#  define POSENC_I_BUILTIN_AVX512
#  define POSENC_I_SIMD_ISA POSENC_ISA_AVX512
#  define POSENC_I_K(name) posenc_i_avx512_##name
#  define POSENC_I_SIMD_BACKEND posenc_i_backend_avx512
#  define POSENC_I_ISA_VBITS 512
#elif defined(POSENC_SIMD_AVX2)
#  if !defined(__AVX2__)
#    error "POSENC_SIMD_AVX2 needs AVX2 code generation (-mavx2)"
#  endif
#  define POSENC_I_BUILTIN_AVX2
#  define POSENC_I_SIMD_ISA POSENC_ISA_AVX2
#  define POSENC_I_K(name) posenc_i_avx2_##name
#  define POSENC_I_SIMD_BACKEND posenc_i_backend_avx2
#  define POSENC_I_ISA_VBITS 256
#elif defined(POSENC_SIMD_SSE2)
#  if !defined(__SSE2__) && !defined(_M_X64)
#    error "POSENC_SIMD_SSE2 needs SSE2 code generation (-msse2)"
#  endif
#  define POSENC_I_BUILTIN_SSE2
#  define POSENC_I_SIMD_ISA POSENC_ISA_SSE2
#  define POSENC_I_K(name) posenc_i_sse2_##name
#  define POSENC_I_SIMD_BACKEND posenc_i_backend_sse2
#  define POSENC_I_ISA_VBITS 128
#elif defined(POSENC_SIMD_NEON)
#  if !defined(__ARM_NEON) && !defined(__ARM_NEON__)
#    error "POSENC_SIMD_NEON needs NEON code generation (armv7: -mfpu=neon)"
#  endif
#  define POSENC_I_BUILTIN_NEON
#  define POSENC_I_SIMD_ISA POSENC_ISA_NEON
#  define POSENC_I_K(name) posenc_i_neon_##name
#  define POSENC_I_SIMD_BACKEND posenc_i_backend_neon
#  define POSENC_I_ISA_VBITS 128
#elif defined(POSENC_SIMD_SIMD128)
#  if !defined(__wasm_simd128__)
#    error "POSENC_SIMD_SIMD128 needs WebAssembly SIMD128 code generation (-msimd128)"
#  endif
#  define POSENC_I_BUILTIN_SIMD128
#  define POSENC_I_SIMD_ISA POSENC_ISA_SIMD128
#  define POSENC_I_K(name) posenc_i_simd128_##name
#  define POSENC_I_SIMD_BACKEND posenc_i_backend_simd128
#  define POSENC_I_ISA_VBITS 128
#endif

/* In the file that compiles the implementation, before posenc.h: included after it, the
 * implementation was compiled already, knowing no SIMD backend, and would run scalar without a
 * word. */
#if defined(POSENC_I_SIMD_ISA) && defined(POSENC_IMPLEMENTATION) && defined(POSENC_IMPLEMENTATION_DONE)
#  error "include posenc_simd.h before posenc.h in the file that defines POSENC_IMPLEMENTATION: posenc.h's implementation was compiled already, without the SIMD backend"
#endif

#include "posenc.h"

#if defined(POSENC_I_SIMD_ISA)

/* The vector width. Predefining POSENC_I_VBITS instantiates another width on the same ISA
 * through SIMDe's emulation (a test and measurement knob: 512 on AVX2 runs the fallbacks below). */
#if !defined(POSENC_I_VBITS)
#  define POSENC_I_VBITS POSENC_I_ISA_VBITS
#endif
#if POSENC_I_VBITS != 128 && POSENC_I_VBITS != 256 && POSENC_I_VBITS != 512
#  error "POSENC_I_VBITS must be 128, 256 or 512"
#endif

/* Exact IEEE arithmetic in every kernel and in the SIMDe functions they inline, whatever the
 * file's flags (posenc.h, "Exact arithmetic"); GCC's vectorizers stay on here, unlike in posenc.h:
 * SIMDe's emulated ops need them (SSE2's emulated 256-bit ops: +23% instructions without). SIMDe
 * turns -ffast-math into shortcuts of its own (SIMDE_FAST_NANS, _ROUND_MODE, ... in
 * simde-common.h); posenc asks for none. Functions defined before this point keep the flags they
 * were compiled with: under clang, intrinsics included earlier would bring fast-math into the
 * kernels they are inlined into (GCC optimizes an inlined body with the caller's flags). */
#if defined(SIMDE_COMMON_H) && !defined(POSENC_I_SIMDE_OURS) &&                                   \
    (defined(SIMDE_FAST_NANS) || defined(SIMDE_FAST_ROUND_MODE) || defined(SIMDE_FAST_ROUND_TIES) || \
     defined(SIMDE_FAST_CONVERSION_RANGE) || defined(SIMDE_FAST_EXCEPTIONS))
#  error "posenc_simd.h: SIMDe was included before it with SIMDE_FAST_* set (-ffast-math, -ffinite-math-only or SIMDE_FAST_MATH): include posenc_simd.h first in posenc's implementation file"
#endif
#if defined(__clang__) && (defined(__FAST_MATH__) || (defined(__FINITE_MATH_ONLY__) && __FINITE_MATH_ONLY__)) && \
    !defined(POSENC_I_SIMDE_OURS) &&                                                                    \
    (defined(SIMDE_COMMON_H) || defined(__XMMINTRIN_H) || defined(__EMMINTRIN_H) || defined(__IMMINTRIN_H) ||   \
     defined(__ARM_NEON_H))
#  error "posenc_simd.h: with clang's -ffast-math or -ffinite-math-only, intrinsics defined before posenc_simd.h (<immintrin.h>, <arm_neon.h> or SIMDe included first) keep those flags inside posenc's kernels: include posenc_simd.h first in posenc's implementation file"
#endif
#if !defined(SIMDE_COMMON_H)
#  define POSENC_I_SIMDE_OURS /* a later instantiation in this file finds SIMDe as it left it */
#  define SIMDE_NO_FAST_MATH
#  define SIMDE_NO_FAST_NANS
#  define SIMDE_NO_FAST_ROUND_MODE
#  define SIMDE_NO_FAST_ROUND_TIES
#  define SIMDE_NO_FAST_CONVERSION_RANGE
#  define SIMDE_NO_FAST_EXCEPTIONS
#endif
POSENC_I_PRECISE_BEGIN
/* Vectors wider than the TU's ISA (SIMDe's emulation, POSENC_I_VBITS above) passed between inline
 * functions: the ABI warnings are moot (nothing crosses the library boundary but pointers and
 * sizes). This silences clang's and GCC's -Wpsabi warnings, not GCC's note "the ABI for passing
 * parameters with 32-byte alignment has changed in GCC 4.6": GCC's x86 back end prints that with
 * inform() whenever -Wpsabi is on for the file, out of any diagnostic pragma's reach (once per
 * file, at the first SIMDe function taking such a vector). Every ISA's own width passes no such
 * vector, so only a POSENC_I_VBITS above the ISA's shows it; -Wno-psabi silences it there. */
#if defined(__GNUC__)
#  pragma GCC diagnostic push
#  pragma GCC diagnostic ignored "-Wpsabi"
#endif
/* GCC 12's avx512fintrin.h makes _mm512_undefined_*() from self-initialised variables, which its
 * C++ front end reports wherever a 512-bit intrinsic is inlined (hundreds of -Wuninitialized). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__cplusplus) && POSENC_I_VBITS == 512
#  pragma GCC diagnostic ignored "-Wuninitialized"
#  pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <string.h>
#if POSENC_I_VBITS == 512
#  include <simde/x86/avx512.h>
#endif
#include <simde/x86/avx2.h>
#include <simde/x86/f16c.h>

#ifdef __cplusplus
extern "C" {
#endif


/* ---- the vocabulary -------------------------------------------------------------------------
 * The kernels see vectors only through these names, defined once per width over SIMDe (the shape
 * of SLEEF's helper files and Highway's tags). Lanes are POSENC_I_DLANES doubles or
 * POSENC_I_FLANES = 2 * POSENC_I_DLANES floats per vector.
 *
 *   vd_t    f64 vector                vf_t    f32 vector            vi_t  its integer lanes
 *   vfh_t   DLANES f32 (a converted vd_t: half a vf_t)
 *   vh_t    FLANES 16-bit values (f16 or bf16 bits: what FLANES floats are in memory)
 *   vdm_t, vfm_t, vhm_t   lane masks of vd_t, vf_t, vh_t: all-ones lanes up to 256 bits, mask
 *                         registers at 512 (SIMDe's __mmask forms)
 *
 *   f64    vd_set1 vd_zero vd_loadu vd_storeu vd_add vd_sub vd_mul vd_xor vd_bits vd_from_bits
 *          vd_from_lo / vd_from_hi: a vf_t's low / high FLANES/2 lanes in f64 (exact)
 *          vd_odd(q): lanes whose 64-bit integer is odd; vd_sel(m, t, f): t where m, else f
 *          vd_cvt: to f32, rounded to nearest even (a vfh_t)
 *   i64    vl_set1 vl_add vl_slli
 *   f32    vf_set1 vf_loadu vf_storeu vf_stream vf_add vf_sub vf_mul vf_xor vf_bits
 *          vf_stream16 / vh_stream16: non-temporal stores in 16-byte pieces (p 16-byte aligned)
 *          vf_from_bits vf_iota (0, 1, ...) vf_isnan vf_sel vf_zero_where(m, x): 0 where m, else x
 *          vf_swap_pairs (lanes 2i and 2i+1 exchanged: GPT-J)
 *          vfh_zip(s, c): s0 c0 s1 c1 ...; vfh_cat(lo, hi): lo's lanes, then hi's
 *          vfh_loadu: DLANES floats (half a vector) from memory
 *   i32    vi_set1 vi_zero vi_loadu vi_storeu vi_iota vi_add vi_and vi_or vi_xor vi_srli vi_slli
 *          vi_mul (products mod 2^32) vi_gt (signed, a vfm_t) vi_sel
 *          vi_hi16: the high 16 bits of every lane (a vh_t); vh_widen_hi: the reverse, low bits 0
 *   16-bit vh_loadu vh_storeu vh_stream vh_stream16 (where POSENC_I_VH_STREAM) vh_set1 vh_sel
 *          vh_to_f32 / vf_to_f16: f16 conversions (F16C's, round to nearest even)
 *   keep   vfm_keep0(p) / vhm_keep0(p): lanes whose byte p[i] is 0
 *   v_sfence: orders non-temporal stores; v_prefetch(p): asks for p's line in cache (never faults)
 *
 * All of them are #undef'd at the end of this file. */
#define POSENC_I_DLANES (POSENC_I_VBITS / 64)
#define POSENC_I_FLANES (POSENC_I_VBITS / 32)

/* Short loops over columns are unrolled twice at 128 bits: at 16 bytes per iteration the bias
 * add in L3 ran 15% slower than SIMDe's emulated 256-bit vectors had (bench_bias). */
#if POSENC_I_VBITS == 128 && (defined(__GNUC__) || defined(__clang__))
#  define POSENC_I_UNROLL _Pragma("GCC unroll 2")
#else
#  define POSENC_I_UNROLL
#endif

#if POSENC_I_VBITS == 128
#  define POSENC_I_MM(op) simde_mm_##op
#  define vd_t simde__m128d
#  define vf_t simde__m128
#  define vfh_t simde__m128  /* the low 2 lanes */
#  define vi_t simde__m128i
#  define vh_t simde__m128i  /* the low 64 bits */
#  define vdm_t simde__m128d
#  define vfm_t simde__m128
#  define vhm_t simde__m128i
#elif POSENC_I_VBITS == 256
#  define POSENC_I_MM(op) simde_mm256_##op
#  define vd_t simde__m256d
#  define vf_t simde__m256
#  define vfh_t simde__m128
#  define vi_t simde__m256i
#  define vh_t simde__m128i
#  define vdm_t simde__m256d
#  define vfm_t simde__m256
#  define vhm_t simde__m128i
#else
#  define POSENC_I_MM(op) simde_mm512_##op
#  define vd_t simde__m512d
#  define vf_t simde__m512
#  define vfh_t simde__m256
#  define vi_t simde__m512i
#  define vh_t simde__m256i
#  define vdm_t simde__mmask8
#  define vfm_t simde__mmask16
#  define vhm_t simde__mmask16
#endif

/* the same name at every width */
#define vd_set1 POSENC_I_MM(set1_pd)
#define vd_zero POSENC_I_MM(setzero_pd)
#define vd_loadu POSENC_I_MM(loadu_pd)
#define vd_storeu POSENC_I_MM(storeu_pd)
#define vd_add POSENC_I_MM(add_pd)
#define vd_sub POSENC_I_MM(sub_pd)
#define vd_mul POSENC_I_MM(mul_pd)
#define vd_xor POSENC_I_MM(xor_pd)
#define vl_add POSENC_I_MM(add_epi64)
#define vl_slli POSENC_I_MM(slli_epi64)
#define vf_set1 POSENC_I_MM(set1_ps)
#define vf_loadu POSENC_I_MM(loadu_ps)
#define vf_storeu POSENC_I_MM(storeu_ps)
#define vf_add POSENC_I_MM(add_ps)
#define vf_sub POSENC_I_MM(sub_ps)
#define vf_mul POSENC_I_MM(mul_ps)
#define vf_xor POSENC_I_MM(xor_ps)
#define vi_set1 POSENC_I_MM(set1_epi32)
#define vi_add POSENC_I_MM(add_epi32)
#define vi_srli POSENC_I_MM(srli_epi32)
#define vi_slli POSENC_I_MM(slli_epi32)
#define v_sfence simde_mm_sfence
#ifdef POSENC_TEST_PREFETCH /* a test's function, handed every address asked for (tests/test_prefetch.c) */
void POSENC_TEST_PREFETCH(const void *p);
#  define v_prefetch(p) POSENC_TEST_PREFETCH((const void *)(p))
#elif defined(__GNUC__) || defined(__clang__)
/* to L1: SIMDe's SIMDE_MM_HINT_T0 is 1, which gcc's and clang's _mm_prefetch (clang-cl's too) read
 * as _MM_HINT_T2, prefetcht2 (simd-everywhere/simde#1186) */
#  define v_prefetch(p) __builtin_prefetch((const void *)(p), 0, 3)
#else /* MSVC, whose _MM_HINT_T0 is 1 */
#  define v_prefetch(p) simde_mm_prefetch((const char *)(const void *)(p), SIMDE_MM_HINT_T0)
#endif

/* 32-bit lane products mod 2^32. Without native support, SIMDe 0.7.4's simde_mm256_mullo_epi32
 * and simde_mm512_mullo_epi32 multiply signed ints (undefined on overflow; UBSan reports it); its
 * 128-bit form is defined for every input (SSE4.1 or NEON natively, else 64-bit products), so
 * wider vectors are multiplied in halves where they are not native. */
POSENC_I_FORCEINLINE simde__m128i POSENC_I_K(mul32_128)(simde__m128i a, simde__m128i b) {
  return simde_mm_mullo_epi32(a, b);
}
#if POSENC_I_VBITS >= 256
POSENC_I_FORCEINLINE simde__m256i POSENC_I_K(mul32_256)(simde__m256i a, simde__m256i b) {
#  if defined(SIMDE_X86_AVX2_NATIVE)
  return simde_mm256_mullo_epi32(a, b);
#  else
  return simde_mm256_set_m128i(
      POSENC_I_K(mul32_128)(simde_mm256_extracti128_si256(a, 1), simde_mm256_extracti128_si256(b, 1)),
      POSENC_I_K(mul32_128)(simde_mm256_castsi256_si128(a), simde_mm256_castsi256_si128(b)));
#  endif
}
#endif

#if POSENC_I_VBITS == 128
#  define POSENC_I_VH_STREAM 0 /* 8-byte vh_t: no non-temporal store of that size */
#  define vd_bits simde_mm_castpd_si128
#  define vd_from_bits simde_mm_castsi128_pd
#  define vd_cvt simde_mm_cvtpd_ps
#  define vd_from_lo simde_mm_cvtps_pd
#  define vd_from_hi(x) simde_mm_cvtps_pd(simde_mm_movehl_ps((x), (x)))
#  define vl_set1 simde_mm_set1_epi64x
#  define vf_stream simde_mm_stream_ps
#  define vf_stream16 simde_mm_stream_ps
#  define vf_bits simde_mm_castps_si128
#  define vf_from_bits simde_mm_castsi128_ps
#  define vf_zero_where simde_mm_andnot_ps
#  define vf_swap_pairs(x) simde_mm_shuffle_ps((x), (x), 0xB1)
#  define vfh_zip simde_mm_unpacklo_ps
#  define vfh_cat simde_mm_movelh_ps
#  define vfh_loadu(p) simde_mm_castsi128_ps(simde_mm_loadl_epi64((const simde__m128i *)(const void *)(p)))
#  define vi_zero simde_mm_setzero_si128
#  define vi_loadu(p) simde_mm_loadu_si128((const simde__m128i *)(const void *)(p))
#  define vi_storeu(p, x) simde_mm_storeu_si128((simde__m128i *)(void *)(p), (x))
#  define vi_and simde_mm_and_si128
#  define vi_or simde_mm_or_si128
#  define vi_xor simde_mm_xor_si128
#  define vi_mul POSENC_I_K(mul32_128)
#  define vi_gt(a, b) simde_mm_castsi128_ps(simde_mm_cmpgt_epi32((a), (b)))
#  define vh_loadu(p) simde_mm_loadl_epi64((const simde__m128i *)(const void *)(p))
#  define vh_storeu(p, h) simde_mm_storel_epi64((simde__m128i *)(void *)(p), (h))
#  define vh_set1 simde_mm_set1_epi16
#  if defined(SIMDE_X86_F16C_NATIVE) || defined(SIMDE_ARM_NEON_A32V7_NATIVE)
#    define vh_to_f32 simde_mm_cvtph_ps
#    define vf_to_f16(x) simde_mm_cvtps_ph((x), SIMDE_MM_FROUND_TO_NEAREST_INT)
#  else
#    define vh_to_f32 POSENC_I_K(cvtph_ps)
#    define vf_to_f16 POSENC_I_K(cvtps_ph)
#  endif
#  define vhm_keep0 POSENC_I_K(vhm_keep0)
POSENC_I_FORCEINLINE vd_t POSENC_I_K(vd_sel)(vdm_t m, vd_t t, vd_t f) {
  return simde_mm_or_pd(simde_mm_and_pd(m, t), simde_mm_andnot_pd(m, f));
}
POSENC_I_FORCEINLINE vdm_t POSENC_I_K(vd_odd)(vi_t q) {
  return simde_mm_castsi128_pd(simde_mm_sub_epi64(simde_mm_setzero_si128(), simde_mm_and_si128(q, simde_mm_set1_epi64x(1))));
}
POSENC_I_FORCEINLINE vf_t POSENC_I_K(vf_sel)(vfm_t m, vf_t t, vf_t f) {
  return simde_mm_or_ps(simde_mm_and_ps(m, t), simde_mm_andnot_ps(m, f));
}
POSENC_I_FORCEINLINE vi_t POSENC_I_K(vi_sel)(vfm_t m, vi_t t, vi_t f) {
  const simde__m128i mi = simde_mm_castps_si128(m);
  return simde_mm_or_si128(simde_mm_and_si128(mi, t), simde_mm_andnot_si128(mi, f));
}
POSENC_I_FORCEINLINE vh_t POSENC_I_K(vh_sel)(vhm_t m, vh_t t, vh_t f) {
  return simde_mm_or_si128(simde_mm_and_si128(m, t), simde_mm_andnot_si128(m, f));
}
/* SSE2 has no unsigned pack: the high halves, sign-extended, pack exactly with the signed one */
POSENC_I_FORCEINLINE vh_t POSENC_I_K(vi_hi16)(vi_t r) {
  r = simde_mm_srai_epi32(r, 16);
  return simde_mm_packs_epi32(r, r);
}
POSENC_I_FORCEINLINE vi_t POSENC_I_K(vh_widen_hi)(vh_t h) { return simde_mm_unpacklo_epi16(simde_mm_setzero_si128(), h); }
/* the compared keep bytes unpacked in registers (SIMDe's cvtepi8 widening goes through memory) */
POSENC_I_FORCEINLINE vhm_t POSENC_I_K(vhm_keep0)(const uint8_t *keep) {
  const simde__m128i m8 = simde_mm_cmpeq_epi8(simde_mm_loadu_si32(keep), simde_mm_setzero_si128());
  return simde_mm_unpacklo_epi8(m8, m8);
}
POSENC_I_FORCEINLINE vfm_t POSENC_I_K(vfm_keep0)(const uint8_t *keep) {
  const simde__m128i m16 = POSENC_I_K(vhm_keep0)(keep);
  return simde_mm_castsi128_ps(simde_mm_unpacklo_epi16(m16, m16));
}

#elif POSENC_I_VBITS == 256
#  define POSENC_I_VH_STREAM 1
#  define vd_bits simde_mm256_castpd_si256
#  define vd_from_bits simde_mm256_castsi256_pd
#  define vd_cvt simde_mm256_cvtpd_ps
#  define vd_from_lo(x) simde_mm256_cvtps_pd(simde_mm256_castps256_ps128(x))
#  define vd_from_hi(x) simde_mm256_cvtps_pd(simde_mm256_extractf128_ps((x), 1))
#  define vl_set1 simde_mm256_set1_epi64x
#  define vf_stream simde_mm256_stream_ps
#  define vf_stream16(p, x) (simde_mm_stream_ps((p), simde_mm256_castps256_ps128(x)), \
                             simde_mm_stream_ps((p) + 4, simde_mm256_extractf128_ps((x), 1)))
#  define vf_bits simde_mm256_castps_si256
#  define vf_from_bits simde_mm256_castsi256_ps
#  define vf_zero_where simde_mm256_andnot_ps
#  define vf_swap_pairs(x) simde_mm256_permute_ps((x), 0xB1)
#  define vfh_cat(lo, hi) simde_mm256_set_m128((hi), (lo))
#  define vfh_loadu(p) simde_mm_loadu_ps((const float *)(const void *)(p))
#  define vi_zero simde_mm256_setzero_si256
#  define vi_loadu(p) simde_mm256_loadu_si256((const void *)(p))
#  define vi_storeu(p, x) simde_mm256_storeu_si256((void *)(p), (x))
#  define vi_and simde_mm256_and_si256
#  define vi_or simde_mm256_or_si256
#  define vi_xor simde_mm256_xor_si256
#  define vi_mul POSENC_I_K(mul32_256)
#  define vi_gt(a, b) simde_mm256_castsi256_ps(simde_mm256_cmpgt_epi32((a), (b)))
#  define vh_loadu(p) simde_mm_loadu_si128((const simde__m128i *)(const void *)(p))
#  define vh_storeu(p, h) simde_mm_storeu_si128((simde__m128i *)(void *)(p), (h))
#  define vh_stream(p, h) simde_mm_stream_si128((simde__m128i *)(void *)(p), (h))
#  define vh_stream16 vh_stream
#  define vh_set1 simde_mm_set1_epi16
#  define vh_to_f32 simde_mm256_cvtph_ps
#  define vf_to_f16(x) simde_mm256_cvtps_ph((x), SIMDE_MM_FROUND_TO_NEAREST_INT)
#  define vfh_zip POSENC_I_K(vfh_zip)
#  define vhm_keep0 POSENC_I_K(vhm_keep0)
POSENC_I_FORCEINLINE vd_t POSENC_I_K(vd_sel)(vdm_t m, vd_t t, vd_t f) {
  return simde_mm256_or_pd(simde_mm256_and_pd(m, t), simde_mm256_andnot_pd(m, f));
}
POSENC_I_FORCEINLINE vdm_t POSENC_I_K(vd_odd)(vi_t q) {
  return simde_mm256_castsi256_pd(
      simde_mm256_sub_epi64(simde_mm256_setzero_si256(), simde_mm256_and_si256(q, simde_mm256_set1_epi64x(1))));
}
POSENC_I_FORCEINLINE vf_t POSENC_I_K(vf_sel)(vfm_t m, vf_t t, vf_t f) { return simde_mm256_blendv_ps(f, t, m); }
POSENC_I_FORCEINLINE vi_t POSENC_I_K(vi_sel)(vfm_t m, vi_t t, vi_t f) {
  return simde_mm256_castps_si256(simde_mm256_blendv_ps(simde_mm256_castsi256_ps(f), simde_mm256_castsi256_ps(t), m));
}
POSENC_I_FORCEINLINE vh_t POSENC_I_K(vh_sel)(vhm_t m, vh_t t, vh_t f) {
  return simde_mm_or_si128(simde_mm_and_si128(m, t), simde_mm_andnot_si128(m, f));
}
POSENC_I_FORCEINLINE vf_t POSENC_I_K(vfh_zip)(vfh_t s, vfh_t c) {
  return simde_mm256_set_m128(simde_mm_unpackhi_ps(s, c), simde_mm_unpacklo_ps(s, c));
}
POSENC_I_FORCEINLINE vh_t POSENC_I_K(vi_hi16)(vi_t r) {
  r = simde_mm256_srai_epi32(r, 16); /* sign-extended: the signed pack is exact */
  return simde_mm_packs_epi32(simde_mm256_castsi256_si128(r), simde_mm256_extracti128_si256(r, 1));
}
POSENC_I_FORCEINLINE vi_t POSENC_I_K(vh_widen_hi)(vh_t h) { return simde_mm256_slli_epi32(simde_mm256_cvtepu16_epi32(h), 16); }
POSENC_I_FORCEINLINE vhm_t POSENC_I_K(vhm_keep0)(const uint8_t *keep) {
  const simde__m128i m8 = simde_mm_cmpeq_epi8(simde_mm_loadl_epi64((const simde__m128i *)(const void *)keep),
                                              simde_mm_setzero_si128());
  return simde_mm_unpacklo_epi8(m8, m8);
}
/* Off AVX2, SIMDe would widen with cvtepi8_epi32 through memory: unpacking the compared bytes
 * stays in registers. */
POSENC_I_FORCEINLINE vfm_t POSENC_I_K(vfm_keep0)(const uint8_t *keep) {
#  if defined(SIMDE_X86_AVX2_NATIVE)
  const simde__m128i m8 = simde_mm_cmpeq_epi8(simde_mm_loadl_epi64((const simde__m128i *)(const void *)keep),
                                              simde_mm_setzero_si128());
  return simde_mm256_castsi256_ps(simde_mm256_cvtepi8_epi32(m8));
#  else
  const simde__m128i m16 = POSENC_I_K(vhm_keep0)(keep);
  return simde_mm256_castsi256_ps(simde_mm256_set_m128i(simde_mm_unpackhi_epi16(m16, m16), simde_mm_unpacklo_epi16(m16, m16)));
#  endif
}

#else /* 512 */
#  define POSENC_I_VH_STREAM 1
#  define vd_bits simde_mm512_castpd_si512
#  define vd_from_bits simde_mm512_castsi512_pd
#  define vd_cvt POSENC_I_K(cvtpd_ps)
#  define vd_from_lo(x) POSENC_I_K(cvtps_pd)(simde_mm512_castps512_ps256(x))
#  define vd_from_hi(x) POSENC_I_K(cvtps_pd)(POSENC_I_K(hi256)(x))
#  define vl_set1 simde_mm512_set1_epi64
#  define vf_stream POSENC_I_K(stream_ps)
#  define vf_stream16 POSENC_I_K(stream16_ps)
#  define vf_bits simde_mm512_castps_si512
#  define vf_from_bits simde_mm512_castsi512_ps
#  define vf_zero_where(m, x) simde_mm512_maskz_mov_ps((simde__mmask16)~(m), (x))
#  define vf_swap_pairs(x) simde_mm512_shuffle_ps((x), (x), 0xB1) /* = permute_ps(x, 0xB1), which SIMDe 0.7.4 lacks */
#  define vfh_cat(lo, hi) simde_mm512_insertf32x8(simde_mm512_castps256_ps512(lo), (hi), 1)
#  define vfh_loadu(p) simde_mm256_loadu_ps((const float *)(const void *)(p))
#  define vi_zero simde_mm512_setzero_si512
#  define vi_loadu(p) simde_mm512_loadu_si512((const void *)(p))
#  define vi_storeu(p, x) simde_mm512_storeu_si512((void *)(p), (x))
#  define vi_and simde_mm512_and_si512
#  define vi_or simde_mm512_or_si512
#  define vi_xor simde_mm512_xor_si512
#  define vi_mul POSENC_I_K(mul32_512)
#  define vi_gt simde_mm512_cmpgt_epi32_mask
#  define vh_loadu(p) simde_mm256_loadu_si256((const void *)(p))
#  define vh_storeu(p, h) simde_mm256_storeu_si256((void *)(p), (h))
#  define vh_stream(p, h) simde_mm256_stream_si256((simde__m256i *)(void *)(p), (h))
#  define vh_stream16 POSENC_I_K(stream16_h)
#  define vh_set1 simde_mm256_set1_epi16
#  define vh_to_f32 POSENC_I_K(cvtph_ps)
#  define vf_to_f16 POSENC_I_K(cvtps_ph)
#  define vfh_zip POSENC_I_K(vfh_zip)
#  define vhm_keep0 POSENC_I_K(vfm_keep0) /* 16 lanes either way: one mask */
/* SIMDe 0.7.4 lacks these 512-bit operations: the intrinsic where AVX-512F is native (SIMDe's
 * types are then the native ones), else two of SIMDe's 256-bit halves. */
POSENC_I_FORCEINLINE vfh_t POSENC_I_K(cvtpd_ps)(vd_t a) {
#  if defined(SIMDE_X86_AVX512F_NATIVE)
  return _mm512_cvtpd_ps(a);
#  else
  return simde_mm256_set_m128(simde_mm256_cvtpd_ps(simde_mm512_extractf64x4_pd(a, 1)),
                              simde_mm256_cvtpd_ps(simde_mm512_castpd512_pd256(a)));
#  endif
}
POSENC_I_FORCEINLINE vd_t POSENC_I_K(cvtps_pd)(simde__m256 h) {
#  if defined(SIMDE_X86_AVX512F_NATIVE)
  return _mm512_cvtps_pd(h);
#  else
  return simde_mm512_insertf64x4(simde_mm512_castpd256_pd512(simde_mm256_cvtps_pd(simde_mm256_castps256_ps128(h))),
                                 simde_mm256_cvtps_pd(simde_mm256_extractf128_ps(h, 1)), 1);
#  endif
}
POSENC_I_FORCEINLINE vf_t POSENC_I_K(cvtph_ps)(vh_t h) {
#  if defined(SIMDE_X86_AVX512F_NATIVE)
  return _mm512_cvtph_ps(h);
#  else
  return simde_mm512_insertf32x8(simde_mm512_castps256_ps512(simde_mm256_cvtph_ps(simde_mm256_castsi256_si128(h))),
                                 simde_mm256_cvtph_ps(simde_mm256_extracti128_si256(h, 1)), 1);
#  endif
}
POSENC_I_FORCEINLINE simde__m256 POSENC_I_K(hi256)(vf_t x) {
  return simde_mm256_castpd_ps(simde_mm512_extractf64x4_pd(simde_mm512_castps_pd(x), 1));
}
POSENC_I_FORCEINLINE vh_t POSENC_I_K(cvtps_ph)(vf_t x) {
#  if defined(SIMDE_X86_AVX512F_NATIVE)
  return _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT);
#  else
  return simde_mm256_set_m128i(simde_mm256_cvtps_ph(POSENC_I_K(hi256)(x), SIMDE_MM_FROUND_TO_NEAREST_INT),
                               simde_mm256_cvtps_ph(simde_mm512_castps512_ps256(x), SIMDE_MM_FROUND_TO_NEAREST_INT));
#  endif
}
POSENC_I_FORCEINLINE void POSENC_I_K(stream_ps)(float *p, vf_t x) {
#  if defined(SIMDE_X86_AVX512F_NATIVE)
  _mm512_stream_ps(p, x);
#  else
  simde_mm256_stream_ps(p, simde_mm512_castps512_ps256(x));
  simde_mm256_stream_ps(p + 8, POSENC_I_K(hi256)(x));
#  endif
}
POSENC_I_FORCEINLINE void POSENC_I_K(stream16_ps)(float *p, vf_t x) {
  simde_mm_stream_ps(p, simde_mm512_extractf32x4_ps(x, 0));
  simde_mm_stream_ps(p + 4, simde_mm512_extractf32x4_ps(x, 1));
  simde_mm_stream_ps(p + 8, simde_mm512_extractf32x4_ps(x, 2));
  simde_mm_stream_ps(p + 12, simde_mm512_extractf32x4_ps(x, 3));
}
POSENC_I_FORCEINLINE void POSENC_I_K(stream16_h)(unsigned char *p, vh_t h) {
  simde_mm_stream_si128((simde__m128i *)(void *)p, simde_mm256_castsi256_si128(h));
  simde_mm_stream_si128((simde__m128i *)(void *)(p + 16), simde_mm256_extracti128_si256(h, 1));
}
POSENC_I_FORCEINLINE simde__m512i POSENC_I_K(mul32_512)(simde__m512i a, simde__m512i b) {
#  if defined(SIMDE_X86_AVX512F_NATIVE)
  return simde_mm512_mullo_epi32(a, b);
#  else
  return simde_mm512_inserti64x4(
      simde_mm512_castsi256_si512(POSENC_I_K(mul32_256)(simde_mm512_castsi512_si256(a), simde_mm512_castsi512_si256(b))),
      POSENC_I_K(mul32_256)(simde_mm512_extracti64x4_epi64(a, 1), simde_mm512_extracti64x4_epi64(b, 1)), 1);
#  endif
}
POSENC_I_FORCEINLINE vd_t POSENC_I_K(vd_sel)(vdm_t m, vd_t t, vd_t f) { return simde_mm512_mask_blend_pd(m, f, t); }
POSENC_I_FORCEINLINE vdm_t POSENC_I_K(vd_odd)(vi_t q) { return simde_mm512_test_epi64_mask(q, simde_mm512_set1_epi64(1)); }
POSENC_I_FORCEINLINE vf_t POSENC_I_K(vf_sel)(vfm_t m, vf_t t, vf_t f) { return simde_mm512_mask_blend_ps(m, f, t); }
POSENC_I_FORCEINLINE vi_t POSENC_I_K(vi_sel)(vfm_t m, vi_t t, vi_t f) { return simde_mm512_mask_blend_epi32(m, f, t); }
POSENC_I_FORCEINLINE vh_t POSENC_I_K(vh_sel)(vhm_t m, vh_t t, vh_t f) { return simde_mm256_mask_blend_epi16(m, f, t); }
/* Index vectors are loads from static arrays (as vf_iota below): SIMDe 0.7.4 sets 512-bit
 * vectors lane by lane, which GCC 12 builds with 16 masked broadcasts and keeps on the stack. */
/* one two-source permute: s0 c0 s1 c1 ... s7 c7 */
POSENC_I_FORCEINLINE vf_t POSENC_I_K(vfh_zip)(vfh_t s, vfh_t c) {
  static const int32_t idx[16] = {0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23};
  return simde_mm512_permutex2var_ps(simde_mm512_castps256_ps512(s), vi_loadu(idx), simde_mm512_castps256_ps512(c));
}
/* the odd 16-bit halves gathered by one word permute */
POSENC_I_FORCEINLINE vh_t POSENC_I_K(vi_hi16)(vi_t r) {
  static const int16_t idx[32] = {1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31};
  return simde_mm512_castsi512_si256(simde_mm512_permutexvar_epi16(vi_loadu(idx), r));
}
/* word i to the high half of lane i, the low halves zeroed by the mask */
POSENC_I_FORCEINLINE vi_t POSENC_I_K(vh_widen_hi)(vh_t h) {
  static const int16_t idx[32] = {0, 0, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7,
                                  0, 8, 0, 9, 0, 10, 0, 11, 0, 12, 0, 13, 0, 14, 0, 15};
  return simde_mm512_maskz_permutexvar_epi16((simde__mmask32)0xAAAAAAAAu, vi_loadu(idx), simde_mm512_castsi256_si512(h));
}
POSENC_I_FORCEINLINE vfm_t POSENC_I_K(vfm_keep0)(const uint8_t *keep) {
  return simde_mm_movepi8_mask(simde_mm_cmpeq_epi8(simde_mm_loadu_si128((const simde__m128i *)(const void *)keep),
                                                   simde_mm_setzero_si128()));
}
#endif

/* 0, 1, 2, ... in every lane's order, loaded from static arrays (see the 512-bit index vectors) */
POSENC_I_FORCEINLINE vf_t POSENC_I_K(vf_iota)(void) {
  static const float iota[16] = {0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f,
                                 8.0f, 9.0f, 10.0f, 11.0f, 12.0f, 13.0f, 14.0f, 15.0f};
  return vf_loadu(iota);
}
POSENC_I_FORCEINLINE vi_t POSENC_I_K(vi_iota)(void) {
  static const int32_t iota[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  return vi_loadu(iota);
}

#define vf_iota POSENC_I_K(vf_iota)
#define vi_iota POSENC_I_K(vi_iota)
#define vd_sel POSENC_I_K(vd_sel)
#define vd_odd POSENC_I_K(vd_odd)
#define vf_sel POSENC_I_K(vf_sel)
#define vi_sel POSENC_I_K(vi_sel)
#define vh_sel POSENC_I_K(vh_sel)
#define vi_hi16 POSENC_I_K(vi_hi16)
#define vh_widen_hi POSENC_I_K(vh_widen_hi)
#define vfm_keep0 POSENC_I_K(vfm_keep0)
/* NaN lanes, by their bits: a float compare is folded away where the including file's
 * -ffinite-math-only or -fno-honor-nans reaches SIMDe's functions (clang 14 marks their calls
 * nnan even inside posenc's float_control(precise)). */
#define vf_isnan(x) vi_gt(vi_and(vf_bits(x), vi_set1(0x7fffffff)), vi_set1(0x7f800000))

#if POSENC_I_VBITS == 128 && !defined(SIMDE_X86_F16C_NATIVE) && !defined(SIMDE_ARM_NEON_A32V7_NATIVE)
/* f16 conversions where the target has no vector instruction for them (SSE2, WebAssembly SIMD128;
 * SIMDe would convert lane by lane): Giesen's method ("half_to_float_fast5", "float_to_half_fast3",
 * public domain), which SIMDe's scalar simde_float16_from_float32 follows too, in integer lanes;
 * the same bits as posenc_f16_to_f32 and posenc_f32_to_f16 for every input (NaN: the quiet
 * 0x7e00 with its sign). Its one float operation per path meets no subnormal operand it could
 * need (a subnormal f32 becomes a zero f16 either way). */
POSENC_I_FORCEINLINE vf_t POSENC_I_K(cvtph_ps)(vh_t h) {
  const vi_t w = simde_mm_unpacklo_epi16(h, simde_mm_setzero_si128()), exp_all = vi_set1(0x7c00 << 13);
  vi_t o = simde_mm_slli_epi32(vi_and(w, vi_set1(0x7fff)), 13), e = vi_and(o, exp_all), sub;
  o = vi_add(o, vi_set1((127 - 15) << 23));                                          /* rebias */
  o = vi_add(o, vi_and(simde_mm_cmpeq_epi32(e, exp_all), vi_set1((128 - 16) << 23))); /* Inf, NaN */
  /* zero and subnormal: 2^-14 * (1 + m/1024) - 2^-14, exact */
  sub = vf_bits(vf_sub(vf_from_bits(vi_add(o, vi_set1(1 << 23))), vf_set1(6.103515625e-05f)));
  o = vi_sel(simde_mm_castsi128_ps(simde_mm_cmpeq_epi32(e, vi_zero())), sub, o);
  return vf_from_bits(vi_or(o, simde_mm_slli_epi32(vi_and(w, vi_set1(0x8000)), 16)));
}
POSENC_I_FORCEINLINE vh_t POSENC_I_K(cvtps_ph)(vf_t x) {
  const vi_t b = vf_bits(x), sign = vi_and(b, vi_set1((int32_t)0x80000000u)), a = vi_xor(b, sign);
  /* |x| > 65536: Inf or NaN (below 2^31 as integers, so the signed compares are right) */
  const vi_t inf_nan = vi_sel(vi_gt(a, vi_set1(0x7f800000)), vi_set1(0x7e00), vi_set1(0x7c00));
  /* |x| < 2^-14: added to 0.5, its f16 subnormal lands in the low bits, rounded to nearest even */
  const vi_t subnormal = simde_mm_sub_epi32(vf_bits(vf_add(vf_from_bits(a), vf_set1(0.5f))), vi_set1(126 << 23));
  /* normal: rebias, round to nearest even at bit 13 */
  const vi_t odd = vi_and(vi_srli(a, 13), vi_set1(1));
  const vi_t normal = vi_srli(vi_add(vi_add(a, vi_set1((int32_t)(0xc8000000u + 0xfffu))), odd), 13);
  vi_t r = vi_sel(vi_gt(vi_set1(113 << 23), a), subnormal, normal);
  r = vi_sel(vi_gt(a, vi_set1(0x47800000)), inf_nan, r);
  r = vi_or(r, vi_srli(sign, 16));
  r = simde_mm_srai_epi32(simde_mm_slli_epi32(r, 16), 16); /* 0..0xffff packs exactly once sign-extended */
  return simde_mm_packs_epi32(r, r);
}
#endif

/* ---- loads and stores of FLANES values of a dtype ------------------------------------------ */
POSENC_I_FORCEINLINE vf_t POSENC_I_K(load)(const unsigned char *p, posenc_dtype dtype) {
  if (dtype == POSENC_DTYPE_F32) return vf_loadu((const float *)(const void *)p);
  if (dtype == POSENC_DTYPE_F16) return vh_to_f32(vh_loadu(p));
  return vf_from_bits(vh_widen_hi(vh_loadu(p)));
}

/* f32 -> bf16 in the high half of each 32-bit lane (the low half: not meaningful), round to
 * nearest even; NaN stays a quiet NaN (as posenc_f32_to_bf16), unless the caller knows no NaN
 * reaches here (nan_free, a constant). */
POSENC_I_FORCEINLINE vi_t POSENC_I_K(bf16_hi)(vf_t x, int nan_free) {
  const vi_t b = vf_bits(x);
  vi_t r = vi_add(vi_add(b, vi_set1(0x7fff)), vi_and(vi_srli(b, 16), vi_set1(1)));
  if (!nan_free) r = vi_sel(vf_isnan(x), vi_or(b, vi_set1(0x400000)), r); /* high half: top | 0x40 */
  return r;
}

/* The same, packed: FLANES bf16 values. */
POSENC_I_FORCEINLINE vh_t POSENC_I_K(bf16)(vf_t x, int nan_free) {
#if defined(POSENC_I_CVT_BF16) && POSENC_I_VBITS == 512
  /* VCVTNEPS2BF16 rounds as bf16_hi and quiets a NaN the same way ((bits >> 16) | 0x40), but reads
   * a subnormal as zero (Intel SDM, VCVTNEPS2BF16): vectors with one take the integer path. */
  if (!_mm512_fpclass_ps_mask(x, 0x20)) return (vh_t)_mm512_cvtneps_pbh(x);
#endif
  return vi_hi16(POSENC_I_K(bf16_hi)(x, nan_free));
}

/* Store v at p as dtype; stream: non-temporal (p aligned to the store's size), where the width
 * has such a store. */
POSENC_I_FORCEINLINE void POSENC_I_K(put)(unsigned char *p, vf_t v, posenc_dtype dtype, int stream, int nan_free) {
  if (dtype == POSENC_DTYPE_F32) {
    if (stream) vf_stream((float *)(void *)p, v);
    else vf_storeu((float *)(void *)p, v);
  } else {
    const vh_t h = dtype == POSENC_DTYPE_F16 ? vf_to_f16(v) : POSENC_I_K(bf16)(v, nan_free);
#if POSENC_I_VH_STREAM
    if (stream) vh_stream(p, h);
    else
#endif
      vh_storeu(p, h);
  }
}

POSENC_I_FORCEINLINE void POSENC_I_K(store)(unsigned char *p, vf_t v, posenc_dtype dtype) {
  POSENC_I_K(put)(p, v, dtype, 0, 0);
}

/* v (no NaN) rounded to a dtype and read back in f32: what put and then load give. */
POSENC_I_FORCEINLINE vf_t POSENC_I_K(round_to)(vf_t v, posenc_dtype dtype) {
  if (dtype == POSENC_DTYPE_F32) return v;
  if (dtype == POSENC_DTYPE_F16) return vh_to_f32(vf_to_f16(v));
  return vf_from_bits(vi_and(POSENC_I_K(bf16_hi)(v, 1), vi_set1((int32_t)0xffff0000u)));
}

/* Store v at p as dtype; stream: non-temporal in 16-byte pieces (p 16-byte aligned, the
 * alignment malloc gives, where vf_stream needs the vector's), where the width has such a store. */
POSENC_I_FORCEINLINE void POSENC_I_K(put16)(unsigned char *p, vf_t v, posenc_dtype dtype, int stream) {
  if (!stream) {
    POSENC_I_K(store)(p, v, dtype);
  } else if (dtype == POSENC_DTYPE_F32) {
    vf_stream16((float *)(void *)p, v);
  } else {
#if POSENC_I_VH_STREAM
    vh_stream16(p, dtype == POSENC_DTYPE_F16 ? vf_to_f16(v) : POSENC_I_K(bf16)(v, 0));
#else
    POSENC_I_K(store)(p, v, dtype);
#endif
  }
}

/* A pass's f32 (sin, cos): zipped into (s0 c0 s1 c1 ...), or two vectors' lanes joined. At 256
 * bits two 16-byte stores each, with no lane-crossing insert (3% of bench_table's time). */
#if POSENC_I_VBITS == 256
POSENC_I_FORCEINLINE void POSENC_I_K(store_half)(unsigned char *p, vfh_t x, int stream) {
  if (stream) simde_mm_stream_ps((float *)(void *)p, x);
  else simde_mm_storeu_ps((float *)(void *)p, x);
}
POSENC_I_FORCEINLINE void POSENC_I_K(store_zip)(unsigned char *p, vfh_t s, vfh_t c, int stream) {
  POSENC_I_K(store_half)(p, simde_mm_unpacklo_ps(s, c), stream);
  POSENC_I_K(store_half)(p + 16, simde_mm_unpackhi_ps(s, c), stream);
}
POSENC_I_FORCEINLINE void POSENC_I_K(store_cat)(unsigned char *p, vfh_t lo, vfh_t hi, int stream) {
  POSENC_I_K(store_half)(p, lo, stream);
  POSENC_I_K(store_half)(p + 16, hi, stream);
}
#else
POSENC_I_FORCEINLINE void POSENC_I_K(store_zip)(unsigned char *p, vfh_t s, vfh_t c, int stream) {
  POSENC_I_K(put)(p, vfh_zip(s, c), POSENC_DTYPE_F32, stream, 1);
}
POSENC_I_FORCEINLINE void POSENC_I_K(store_cat)(unsigned char *p, vfh_t lo, vfh_t hi, int stream) {
  POSENC_I_K(put)(p, vfh_cat(lo, hi), POSENC_DTYPE_F32, stream, 1);
}
#endif

/* ---- masked add: vectors (posenc_i_scalar_add_fwd in posenc.h, bit for bit) -------------- */
/* Here, before the sin/cos rows: their add_sinus kernel adds with these. */
/* The dropout factor of FLANES columns col, col+1, ...: 0 where lowbias32(key ^ col*0x9E3779B9) <
 * threshold (unsigned; thr_s is threshold ^ 2^31 for the signed compare), else keep_scale. */
POSENC_I_FORCEINLINE vf_t POSENC_I_K(keep)(uint32_t key, size_t col, vi_t thr_s, vf_t ks) {
  const vi_t sign = vi_set1((int32_t)0x80000000u);
  vi_t c = vi_add(vi_set1((int32_t)(uint32_t)col), vi_iota());
  vi_t h = vi_xor(vi_set1((int32_t)key), vi_mul(c, vi_set1((int32_t)0x9E3779B9u)));
  h = vi_xor(h, vi_srli(h, 16));
  h = vi_mul(h, vi_set1((int32_t)0x7feb352du));
  h = vi_xor(h, vi_srli(h, 15));
  h = vi_mul(h, vi_set1((int32_t)0x846ca68bu));
  h = vi_xor(h, vi_srli(h, 16));
  return vf_zero_where(vi_gt(thr_s, vi_xor(h, sign)), ks);
}

/* store, or non-temporal (p aligned to the store: FLANES*4 bytes for f32, FLANES*2 for 16-bit
 * types; 16-bit stores narrower than 16 bytes stay ordinary) */
POSENC_I_FORCEINLINE void POSENC_I_K(store_s)(unsigned char *p, vf_t v, posenc_dtype dtype, int stream) {
  POSENC_I_K(put)(p, v, dtype, stream, 0);
}

/* x*scale + P, P's values pv in f32 */
POSENC_I_FORCEINLINE vf_t POSENC_I_K(fwd_val)(const unsigned char *x, posenc_dtype xt, vf_t pv, vf_t sc) {
  return vf_add(vf_mul(POSENC_I_K(load)(x, xt), sc), pv);
}

/* The forward of nvec (a constant, 1 or 2) vectors from column j, P's values given (pv), loads
 * before stores as in bwd_vecs below. */
POSENC_I_FORCEINLINE void POSENC_I_K(fwd_vals)(const unsigned char *x, const vf_t *pv, unsigned char *y, size_t j,
                                          int nvec, posenc_dtype xt, posenc_dtype yt, int has_keys, uint32_t key,
                                          size_t col0, vi_t thr, vf_t ks, vf_t sc, int stream) {
  const size_t xs = xt == POSENC_DTYPE_F32 ? 4 : 2, ys = yt == POSENC_DTYPE_F32 ? 4 : 2;
  vf_t v[2];
  int u;
  for (u = 0; u < nvec; u++) {
    const size_t ju = j + (size_t)u * POSENC_I_FLANES;
    v[u] = POSENC_I_K(fwd_val)(x + ju * xs, xt, pv[u], sc);
    if (has_keys) v[u] = vf_mul(v[u], POSENC_I_K(keep)(key, col0 + ju, thr, ks));
  }
  for (u = 0; u < nvec; u++) POSENC_I_K(store_s)(y + (j + (size_t)u * POSENC_I_FLANES) * ys, v[u], yt, stream);
}

/* The same, P's values loaded from p (of dtype pt) at column j. */
POSENC_I_FORCEINLINE void POSENC_I_K(fwd_vecs)(const unsigned char *x, const unsigned char *p, unsigned char *y,
                                          size_t j, int nvec, posenc_dtype xt, posenc_dtype pt, posenc_dtype yt,
                                          int has_keys, uint32_t key, size_t col0, vi_t thr, vf_t ks, vf_t sc,
                                          int stream) {
  const size_t ps = pt == POSENC_DTYPE_F32 ? 4 : 2;
  vf_t pv[2];
  int u;
  for (u = 0; u < nvec; u++) pv[u] = POSENC_I_K(load)(p + (j + (size_t)u * POSENC_I_FLANES) * ps, pt);
  POSENC_I_K(fwd_vals)(x, pv, y, j, nvec, xt, yt, has_keys, key, col0, thr, ks, sc, stream);
}

/* ---- sin/cos rows (posenc_i_scalar_sincos_rows in posenc.h, bit for bit) ------------------- */
/* (sin, cos)(p * omega) for DLANES frequency lanes; u points at lane 0 of part 0 (stride CHUNK). */
POSENC_I_FORCEINLINE void POSENC_I_K(exact_sincos)(vd_t p, const double *u, vd_t *s_out, vd_t *c_out) {
  const vd_t magic = vd_set1(POSENC_I_MAGIC);
  const vi_t one = vl_set1(1), two = vl_set1(2);
  vi_t q = vi_zero(), sign_s, sign_c;
  vd_t f = vd_zero(), a, k, r, r2, s, c, x, y;
  vdm_t odd;
  int j;
  for (j = 0; j < POSENC_UPARTS; j++) {
    vd_t pj = vd_mul(p, vd_loadu(u + (size_t)j * POSENC_CHUNK));
    a = vd_add(pj, magic);
    q = vl_add(q, vd_bits(a));
    k = vd_sub(a, magic);
    f = (j == 0) ? vd_sub(pj, k) : vd_add(f, vd_sub(pj, k));
  }
  a = vd_add(f, magic);
  q = vl_add(q, vd_bits(a));
  k = vd_sub(a, magic);
  f = vd_sub(f, k);
  r = vd_add(vd_mul(f, vd_set1(POSENC_I_PIO2_HI)), vd_mul(f, vd_set1(POSENC_I_PIO2_LO)));
  r2 = vd_mul(r, r);
#define POSENC_I_HORNER(acc, coef) acc = vd_add(vd_set1(coef), vd_mul(r2, acc))
  s = vd_set1(POSENC_I_S17);
  POSENC_I_HORNER(s, POSENC_I_S15); POSENC_I_HORNER(s, POSENC_I_S13); POSENC_I_HORNER(s, POSENC_I_S11);
  POSENC_I_HORNER(s, POSENC_I_S9); POSENC_I_HORNER(s, POSENC_I_S7); POSENC_I_HORNER(s, POSENC_I_S5);
  POSENC_I_HORNER(s, POSENC_I_S3);
  s = vd_add(r, vd_mul(r, vd_mul(r2, s)));
  c = vd_set1(POSENC_I_C18);
  POSENC_I_HORNER(c, POSENC_I_C16); POSENC_I_HORNER(c, POSENC_I_C14); POSENC_I_HORNER(c, POSENC_I_C12);
  POSENC_I_HORNER(c, POSENC_I_C10); POSENC_I_HORNER(c, POSENC_I_C8); POSENC_I_HORNER(c, POSENC_I_C6);
  POSENC_I_HORNER(c, POSENC_I_C4); POSENC_I_HORNER(c, POSENC_I_C2); POSENC_I_HORNER(c, 1.0);
#undef POSENC_I_HORNER
  /* quadrant: odd swaps sin and cos; bit 1 of q (of q+1) negates sin (cos) */
  odd = vd_odd(q);
  x = vd_sel(odd, c, s);
  y = vd_sel(odd, s, c);
  sign_s = vl_slli(vi_and(q, two), 62);
  sign_c = vl_slli(vi_and(vl_add(q, one), two), 62);
  *s_out = vd_xor(x, vd_from_bits(sign_s));
  *c_out = vd_xor(y, vd_from_bits(sign_c));
}

#define POSENC_I_NV (POSENC_CHUNK / POSENC_I_DLANES) /* f64 vectors per chunk: 8, 4, 2 */

/* Rows are walked in passes of POSENC_I_W vectors: their running values and steps (5 * W
 * registers) then stay in registers instead of being spilled at every row. W is even (two f64
 * vectors make one f32 vector) and 2 at every width: at 128 bits, 4 spilled (bench_rope's cache
 * generation 14% slower, bench_table no faster); at 512, 2 is the whole chunk. */
#define POSENC_I_W 2
/* Anchors made ahead together by the tables' rows kernels (seed_items), at 512 bits: 2 items, 512
 * bytes of stack (4 measured the same). Narrower, a chunk's 4 or 8 vectors already run that many
 * exact_sincos side by side, and 4 items ahead gained nothing measurable (bench_table n = 4096),
 * so they make one at a time. */
#if POSENC_I_NV > POSENC_I_W
#  define POSENC_I_SEEDS 0
#else
#  define POSENC_I_SEEDS 2
#endif
#if POSENC_I_NV % POSENC_I_W != 0
#  error "POSENC_CHUNK must be a multiple of 2 * POSENC_I_DLANES"
#endif

/* k2*y - yp for one vector */
#define POSENC_I_STEP_V(y, yp, k2) vd_sub(vd_mul((k2), (y)), (yp))

/* One recurrence step for n vectors: y <- k2*y - yp, yp <- y (sin and cos alike). */
POSENC_I_FORCEINLINE void POSENC_I_K(step_vecs)(vd_t *s, vd_t *c, vd_t *sp, vd_t *cp, const vd_t *k2, int n) {
  int v;
  for (v = 0; v < n; v++) {
    vd_t s1 = POSENC_I_STEP_V(s[v], sp[v], k2[v]), c1 = POSENC_I_STEP_V(c[v], cp[v], k2[v]);
    sp[v] = s[v]; cp[v] = c[v];
    s[v] = s1; c[v] = c1;
  }
}

/* POSENC_I_W vectors of a chunk walked together: the running (sin, cos), the previous pair
 * (sp, cp) and k2, all in registers. */
typedef struct POSENC_I_K(pass) {
  vd_t s[POSENC_I_W], c[POSENC_I_W], sp[POSENC_I_W], cp[POSENC_I_W], k2[POSENC_I_W];
} POSENC_I_K(pass);

/* A chunk's running values at position p, p - a steps after the anchor a: E(a) and the pair
 * before it (rotated back by omega) for every vector, then the steps. Every vector at once, in
 * locals the stores cannot alias: the vectors' chains are independent, so the seeds and the
 * steps overlap (one decode row at 31 steps: 3.5x faster than in a struct stepped in memory). */
POSENC_I_FORCEINLINE void POSENC_I_K(seed_vec)(vd_t *s, vd_t *c, vd_t *sp, vd_t *cp, vd_t ss, vd_t sc, const double *u,
                                          int64_t a) {
  POSENC_I_K(exact_sincos)(vd_set1((double)a), u, s, c);
  *sp = vd_sub(vd_mul(*s, sc), vd_mul(*c, ss));
  *cp = vd_add(vd_mul(*c, sc), vd_mul(*s, ss));
}

/* Out of line where a chunk takes several passes: inlined, the exact sin/cos's temporaries took
 * stack slots of their own in every rows instance, beside the walk's (AVX2: 2,056 bytes a frame,
 * 1,232 out of line; bench_table n = 4096 unchanged). Inline where one pass is the whole chunk
 * (512 bits): its state then stays in registers (out of line: 3.5% slower, for 184 bytes). */
#if POSENC_I_NV > POSENC_I_W
POSENC_I_NOINLINE
#else
POSENC_I_FORCEINLINE
#endif
void POSENC_I_K(seed_chunk)(vd_t *s, vd_t *c, vd_t *sp, vd_t *cp, const double *e, const double *u, int64_t a) {
  int v;
  for (v = 0; v < POSENC_I_NV; v++)
    POSENC_I_K(seed_vec)(&s[v], &c[v], &sp[v], &cp[v], vd_loadu(e + POSENC_I_DLANES * v),
                         vd_loadu(e + POSENC_CHUNK + POSENC_I_DLANES * v), u + POSENC_I_DLANES * v, a);
}

/* The recurrence's state of n vectors of a chunk (posenc_i_job's state, [4][POSENC_CHUNK] from
 * their first lane): loaded where a call resumes, stored after a block's last row. Out of line
 * where seed_chunk is, for the same reason. */
#if POSENC_I_NV > POSENC_I_W
POSENC_I_NOINLINE
#else
POSENC_I_FORCEINLINE
#endif
void POSENC_I_K(load_state)(vd_t *s, vd_t *c, vd_t *sp, vd_t *cp, int n, const double *state) {
  int v;
  for (v = 0; v < n; v++) {
    const double *st = state + (size_t)v * POSENC_I_DLANES;
    s[v] = vd_loadu(st); c[v] = vd_loadu(st + POSENC_CHUNK);
    sp[v] = vd_loadu(st + 2 * POSENC_CHUNK); cp[v] = vd_loadu(st + 3 * POSENC_CHUNK);
  }
}
#if POSENC_I_NV > POSENC_I_W
POSENC_I_NOINLINE
#else
POSENC_I_FORCEINLINE
#endif
void POSENC_I_K(store_state)(const vd_t *s, const vd_t *c, const vd_t *sp, const vd_t *cp, int n, double *state) {
  int v;
  for (v = 0; v < n; v++) {
    double *st = state + (size_t)v * POSENC_I_DLANES;
    vd_storeu(st, s[v]); vd_storeu(st + POSENC_CHUNK, c[v]);
    vd_storeu(st + 2 * POSENC_CHUNK, sp[v]); vd_storeu(st + 3 * POSENC_CHUNK, cp[v]);
  }
}

/* How a pass stores: loop invariants kept in locals (stores through dst could alias the job). */
typedef struct POSENC_I_K(store_opts) {
  int plain;              /* a constant at each instantiation: 1 = unscaled, sin first (tables) */
  int scaled, cos_first;
  vd_t scale;
} POSENC_I_K(store_opts);

/* Store the (sin, cos) of one row of a pass at dst (cos_offset used by PLANAR); stream: dst is
 * aligned to the stores and non-temporal stores are wanted. Two f64 vectors at a time fill f32
 * vectors: PAIRS interleaves each one's sin and cos lanes, PLANAR joins two vectors' sins (and
 * cosines). No NaN reaches the bf16 rounding. */
POSENC_I_FORCEINLINE void POSENC_I_K(pass_store)(const POSENC_I_K(pass) *ps, unsigned char *dst,
                                            ptrdiff_t cos_offset, int mode, posenc_dtype dtype, int stream,
                                            POSENC_I_K(store_opts) o) {
  const size_t es = dtype == POSENC_DTYPE_F32 ? 4 : 2;
  int v, w;
  for (v = 0; v < POSENC_I_W; v += 2) {
    vfh_t sf[2], cf[2];
    for (w = 0; w < 2; w++) {
      vd_t sd = ps->s[v + w], cd = ps->c[v + w];
      if (!o.plain && o.scaled) { /* the attention factor, applied before the one rounding to f32 */
        sd = vd_mul(sd, o.scale);
        cd = vd_mul(cd, o.scale);
      }
      sf[w] = vd_cvt(sd); cf[w] = vd_cvt(cd);
      if (!o.plain && mode == POSENC_I_PAIRS && o.cos_first) { vfh_t t = sf[w]; sf[w] = cf[w]; cf[w] = t; }
    }
    if (mode == POSENC_I_PAIRS) {
      for (w = 0; w < 2; w++) {
        unsigned char *d = dst + (size_t)(v + w) * POSENC_I_FLANES * es;
        if (dtype == POSENC_DTYPE_F32) POSENC_I_K(store_zip)(d, sf[w], cf[w], stream);
        else POSENC_I_K(put)(d, vfh_zip(sf[w], cf[w]), dtype, stream, 1);
      }
    } else {
      unsigned char *d = dst + (size_t)v * POSENC_I_DLANES * es;
      if (dtype == POSENC_DTYPE_F32) {
        POSENC_I_K(store_cat)(d, sf[0], sf[1], stream);
        POSENC_I_K(store_cat)(d + cos_offset, cf[0], cf[1], stream);
      } else {
        POSENC_I_K(put)(d, vfh_cat(sf[0], sf[1]), dtype, stream, 1);
        POSENC_I_K(put)(d + cos_offset, vfh_cat(cf[0], cf[1]), dtype, stream, 1);
      }
    }
  }
}

/* The masked add's job (add_sinus) in locals, as store_opts: the stores through y could alias the
 * job itself, so its fields would be loaded again at every row. */
typedef struct POSENC_I_K(add_opts) {
  const unsigned char *x;
  unsigned char *y;
  ptrdiff_t x_stride, y_stride;
  const uint32_t *keys;
  size_t col0;
  vf_t scale, keep_scale;
  vi_t threshold;         /* threshold ^ 2^31, for keep's signed compare */
  int stream;
  int prefetch_y;         /* y's lines are read for ownership: ordinary stores to another tensor */
} POSENC_I_K(add_opts);

/* add_cols' last columns of a row, fewer than its vectors hold: the same vector code on
 * zero-padded copies. Out of line, so that the copies take stack only while they are used (clang
 * kept them beside the inlined copies of everything else: 6.3 KiB for an AVX-512 call). */
POSENC_I_NOINLINE void POSENC_I_K(add_part)(const POSENC_I_K(add_opts) *o, const unsigned char *x, unsigned char *y,
                                          const vf_t *pv, unsigned valid, int nvec, uint32_t key, size_t col,
                                          posenc_dtype xt, posenc_dtype yt) {
  const size_t xs = xt == POSENC_DTYPE_F32 ? 4 : 2, ys = yt == POSENC_DTYPE_F32 ? 4 : 2;
  unsigned char tx[2 * POSENC_I_FLANES * 4], ty[2 * POSENC_I_FLANES * 4];
  memset(tx, 0, sizeof tx);
  memcpy(tx, x, valid * xs);
  POSENC_I_K(fwd_vals)(tx, pv, ty, 0, nvec, xt, yt, o->keys != NULL, key, o->col0 + col, o->threshold, o->keep_scale,
                       o->scale, 0);
  memcpy(y, ty, valid * ys);
}

/* The forward (fwd_vals) of nvec vectors of a row (x, y: its column col), P's values pv, the row's
 * dropout key; valid: how many of those columns to write (fewer: through zero-padded copies). */
POSENC_I_FORCEINLINE void POSENC_I_K(add_cols)(const POSENC_I_K(add_opts) *o, const unsigned char *x, unsigned char *y,
                                          uint32_t key, size_t col, const vf_t *pv, unsigned valid, int nvec,
                                          posenc_dtype xt, posenc_dtype yt) {
  const size_t ys = yt == POSENC_DTYPE_F32 ? 4 : 2;
  if (valid >= (unsigned)nvec * POSENC_I_FLANES) {
    /* non-temporal only where the stores fill whole 64-byte lines */
    const int stream = o->stream && (size_t)nvec * POSENC_I_FLANES * ys >= 64 && (uintptr_t)y % 64 == 0;
    if (o->keys) POSENC_I_K(fwd_vals)(x, pv, y, 0, nvec, xt, yt, 1, key, o->col0 + col, o->threshold, o->keep_scale,
                                      o->scale, 0);
    else if (stream) POSENC_I_K(fwd_vals)(x, pv, y, 0, nvec, xt, yt, 0, 0, 0, o->threshold, o->keep_scale, o->scale, 1);
    else POSENC_I_K(fwd_vals)(x, pv, y, 0, nvec, xt, yt, 0, 0, 0, o->threshold, o->keep_scale, o->scale, 0);
  } else {
    POSENC_I_K(add_part)(o, x, y, pv, valid, nvec, key, col, xt, yt);
  }
}

/* The masked add of one row of a pass (add_sinus, unscaled and sin first): its W vectors' (sin,
 * cos) at s and c; x and y: the pass's first column in the row (PLANAR: its first sin column; the
 * cos columns are cos_col further), col: that column's number; valid: columns of the pass to
 * write (PLANAR: in each half). P's values are made in registers as pass_store would store them
 * (rounded to P's dtype, then read back as f32): a buffer in between stalled every reload, its
 * 16-byte stores read as one 32-byte vector. */
POSENC_I_FORCEINLINE void POSENC_I_K(pass_add)(const vd_t *s, const vd_t *c, const POSENC_I_K(add_opts) *o,
                                          const unsigned char *x, unsigned char *y, uint32_t key, size_t col,
                                          unsigned valid, size_t cos_col, int mode, posenc_dtype pt, posenc_dtype xt,
                                          posenc_dtype yt) {
  vf_t pv[POSENC_I_W];
  int w;
  if (mode == POSENC_I_PAIRS) { /* 2 * W * DLANES columns: W vectors of (sin, cos) pairs */
    for (w = 0; w < POSENC_I_W; w++) pv[w] = POSENC_I_K(round_to)(vfh_zip(vd_cvt(s[w]), vd_cvt(c[w])), pt);
    POSENC_I_K(add_cols)(o, x, y, key, col, pv, valid, POSENC_I_W, xt, yt);
  } else { /* W * DLANES columns in each half: W / 2 vectors of sines, as many of cosines */
    const size_t xs = xt == POSENC_DTYPE_F32 ? 4 : 2, ys = yt == POSENC_DTYPE_F32 ? 4 : 2;
    for (w = 0; w < POSENC_I_W; w += 2) {
      pv[w / 2] = POSENC_I_K(round_to)(vfh_cat(vd_cvt(s[w]), vd_cvt(s[w + 1])), pt);
      pv[POSENC_I_W / 2 + w / 2] = POSENC_I_K(round_to)(vfh_cat(vd_cvt(c[w]), vd_cvt(c[w + 1])), pt);
    }
    POSENC_I_K(add_cols)(o, x, y, key, col, pv, valid, POSENC_I_W / 2, xt, yt);
    POSENC_I_K(add_cols)(o, x + cos_col * xs, y + cos_col * ys, key, col + cos_col, pv + POSENC_I_W / 2, valid,
                         POSENC_I_W / 2, xt, yt);
  }
}

/* A vector's recurrence at the anchor a (its lanes' parts at u), E(1) made here too (an add_sinus
 * call is one anchor block). Out of line, one vector a call: inlined into the walk, or looping over
 * the vectors, the exact sin/cos's constants and temporaries took stack slots of their own beside
 * the walk's (clang: 6.2-6.3 KiB for an AVX-512 call in all, over its 6 KiB). */
POSENC_I_NOINLINE void POSENC_I_K(add_seed)(const double *u, int64_t a, vd_t *s, vd_t *c, vd_t *sp, vd_t *cp, vd_t *k2) {
  vd_t ss, sc;
  POSENC_I_K(exact_sincos)(vd_set1(1.0), u, &ss, &sc);
  POSENC_I_K(seed_vec)(s, c, sp, cp, ss, sc, u, a);
  *k2 = vd_add(sc, sc); /* 2*cos, exact */
}

/* add_sinus's walk of one chunk over the rows of an anchor block a (from position p0), as the
 * tables walk it: pass by pass, each pass down the rows with its recurrence in registers. Down the
 * rows, each row's lines of x missed in cache (62% of the AVX2 time at d = 512 in L3): the
 * prefetchers follow a row, not a column of rows. So each row asks for its lines of the next pass
 * (of the next call's chunk, after the last pass), which the walk reads a pass later. col: the
 * chunk's first column; ncols: its valid columns (PLANAR: in each half). */
POSENC_I_FORCEINLINE void POSENC_I_K(add_chunk)(const POSENC_I_K(add_opts) *o, const double *uc, int64_t a, int64_t p0,
                                           size_t row, size_t nblock, size_t col, unsigned ncols, size_t cos_col,
                                           int mode, posenc_dtype pt, posenc_dtype xt, posenc_dtype yt) {
  const size_t xs = xt == POSENC_DTYPE_F32 ? 4 : 2, ys = yt == POSENC_DTYPE_F32 ? 4 : 2;
  const unsigned vec_cols = (mode == POSENC_I_PAIRS ? 2 : 1) * POSENC_I_DLANES; /* columns of a vector */
  const unsigned pass_cols = POSENC_I_W * vec_cols;
  const int halves = mode == POSENC_I_PLANAR ? 2 : 1;
  vd_t s0[POSENC_I_NV], c0[POSENC_I_NV], sp0[POSENC_I_NV], cp0[POSENC_I_NV], k20[POSENC_I_NV];
  int v;
  /* the whole chunk first: seeded pass by pass, two vectors a call, the SSE2 walk (four passes a
   * chunk) of 256 x 512 in place took 125 us, against 93 for a buffer of rows; so, 88-91 */
  for (v = 0; v < POSENC_I_NV; v++)
    POSENC_I_K(add_seed)(uc + (size_t)v * POSENC_I_DLANES, a, &s0[v], &c0[v], &sp0[v], &cp0[v], &k20[v]);
  for (v = 0; v < POSENC_I_NV && (unsigned)v * vec_cols < ncols; v += POSENC_I_W) {
    const size_t pcol = col + (size_t)v * vec_cols;
    const unsigned left = ncols - (unsigned)v * vec_cols, n = left < pass_cols ? left : pass_cols;
    const unsigned char *x = o->x + (ptrdiff_t)row * o->x_stride + pcol * xs;
    unsigned char *y = o->y + (ptrdiff_t)row * o->y_stride + pcol * ys;
    vd_t s[POSENC_I_W], c[POSENC_I_W], sp[POSENC_I_W], cp[POSENC_I_W], k2[POSENC_I_W];
    size_t r, k;
    int64_t j;
    int h, w;
    for (w = 0; w < POSENC_I_W; w++) {
      s[w] = s0[v + w]; c[w] = c0[v + w]; sp[w] = sp0[v + w]; cp[w] = cp0[v + w]; k2[w] = k20[v + w];
    }
    for (j = a; j < p0; j++) POSENC_I_K(step_vecs)(s, c, sp, cp, k2, POSENC_I_W);
    for (r = 0;; r++, x += o->x_stride, y += o->y_stride) {
      for (h = 0; h < halves; h++) { /* this row's lines of the next pass (never faults) */
        const uintptr_t nx = (uintptr_t)x + (pass_cols + (size_t)h * cos_col) * xs;
        const uintptr_t ny = (uintptr_t)y + (pass_cols + (size_t)h * cos_col) * ys;
        for (k = 0; k < pass_cols * xs; k += 64) v_prefetch(nx + k);
        if (o->prefetch_y) for (k = 0; k < pass_cols * ys; k += 64) v_prefetch(ny + k);
      }
      POSENC_I_K(pass_add)(s, c, o, x, y, o->keys ? o->keys[row + r] : 0, pcol, n, cos_col, mode, pt, xt, yt);
      if (r + 1 == nblock) break;
      POSENC_I_K(step_vecs)(s, c, sp, cp, k2, POSENC_I_W);
    }
  }
}

/* The pair before an anchor's (s, c): rotated back by omega, (ss, sc) = E(1), as seed_vec makes it
 * (which keeps its own two lines: written through this helper, the masked add's AVX-512 frames,
 * which inline seed_vec, grew by 96-160 bytes, to 4,048 of tests/test_stack.c's 4,096). */
POSENC_I_FORCEINLINE void POSENC_I_K(back_vec)(vd_t s, vd_t c, vd_t *sp, vd_t *cp, vd_t ss, vd_t sc) {
  *sp = vd_sub(vd_mul(s, sc), vd_mul(c, ss));
  *cp = vd_add(vd_mul(c, sc), vd_mul(s, ss));
}

/* The block of a rows job that starts at row: its first position p0, its anchor a, and its rows
 * (one for a position list, else up to the next anchor). */
POSENC_I_FORCEINLINE size_t POSENC_I_K(block_at)(const posenc_i_job *job, size_t row, int64_t *p0, int64_t *a) {
  size_t n;
  *p0 = job->positions ? job->positions[row] : (int64_t)job->start + (int64_t)row;
  *a = POSENC_I_ANCHOR_OF(*p0);
  n = job->positions ? 1 : (size_t)(*a + POSENC_ANCHOR - *p0);
  return n < job->nrows - row ? n : job->nrows - row;
}

/* The exact (sin, cos) at the anchors of up to max (block, chunk) items of a rows job, from the
 * block at row and its chunk ch on, in the order rows walks them: item i's vector v at
 * s[i * NV + v], c[i * NV + v]. Returns the number made. Each exact_sincos is one long chain of
 * dependent operations (the reduction, then two polynomials); made one before each item's walk,
 * nothing else ran beside it, and the anchors took a quarter of a table's time (bench_table AVX2
 * and AVX-512, n = 4096: see the README's "Sinusoidal tables"). Made together, they overlap. */
POSENC_I_FORCEINLINE int POSENC_I_K(seed_items)(const posenc_i_job *job, size_t row, unsigned ch, unsigned nchunk,
                                               int max, vd_t *s, vd_t *c) {
  int n = 0, v;
  while (n < max && row < job->nrows) {
    int64_t p0, a;
    const size_t nblock = POSENC_I_K(block_at)(job, row, &p0, &a);
    for (v = 0; v < POSENC_I_NV; v++)
      POSENC_I_K(exact_sincos)(vd_set1((double)a), job->u + ch * POSENC_UPARTS * POSENC_CHUNK + POSENC_I_DLANES * v,
                               &s[n * POSENC_I_NV + v], &c[n * POSENC_I_NV + v]);
    n++;
    if (++ch == nchunk) { ch = 0; row += nblock; }
  }
  return n;
}

/* posenc_i_scalar_sincos_rows, DLANES lanes per vector: rows walk from anchor to anchor; inside one
 * anchor block (in L1) every chunk of the group is done in turn, in passes of POSENC_I_W vectors.
 * Passes past the last valid column are skipped; the one pass that holds it writes each row to a
 * row buffer and copies the valid columns (a buffer of a whole block would cost 4 KiB of stack).
 * mode and dtype are constants at each call site, so each combination compiles to its own loop.
 * max_seeds > 0: the anchors are made that many items ahead (seed_items) into seed_s and seed_c,
 * max_seeds * POSENC_I_NV vectors each; 0: each item's by seed_chunk, and the buffers are unused. */
POSENC_I_FORCEINLINE void POSENC_I_K(rows)(const posenc_i_job *job, int mode, posenc_dtype dtype, int plain,
                                         int carry, int max_seeds, vd_t *seed_s, vd_t *seed_c, double *own) {
  /* E(1) = (ss, sc) of each chunk, [chunk][2][POSENC_CHUNK] as job->step holds them (see
   * POSENC_I_BACK / POSENC_I_STEP in posenc.h); k2 = 2*sc is made where a pass is loaded. Without
   * job->step (the tables) they are made here, into own: the instance's buffer, for
   * POSENC_I_UGROUP chunks in the tables' instances and one in the others, which RoPE's calls reach
   * with their own frames above (a decode step on the fly with clang-cl went over its stack budget
   * with two). */
  const double *steps = job->step ? job->step : own;
  const size_t es = dtype == POSENC_DTYPE_F32 ? 4 : 2;
  const unsigned nchunk = (job->nfreq + POSENC_CHUNK - 1) / POSENC_CHUNK;
  /* columns one chunk fills: 2 per lane in PAIRS (sin, cos), 1 per lane per half in PLANAR */
  const unsigned chunk_cols = mode == POSENC_I_PAIRS ? 2 * POSENC_CHUNK : POSENC_CHUNK;
  const unsigned total_cols = mode == POSENC_I_PAIRS ? job->pair_cols : job->nfreq;
  const unsigned vec_cols = (mode == POSENC_I_PAIRS ? 2 : 1) * POSENC_I_DLANES; /* columns of a vector */
  /* the row buffer's cos half, PLANAR (PAIRS: unused) */
  const ptrdiff_t tmp_cos = (ptrdiff_t)(POSENC_I_W * POSENC_I_DLANES * es);
  size_t row = 0;
  unsigned ch;
  int v, nseeds = 0, next_seed = 0; /* anchors made ahead (max_seeds > 0), and the next to use */
  POSENC_I_K(store_opts) opts;
  opts.plain = plain; opts.scaled = job->scaled; opts.cos_first = job->cos_first;
  opts.scale = vd_set1(job->scale);
  for (ch = 0; !job->step && ch < nchunk; ch++)
    for (v = 0; v < POSENC_I_NV; v++) {
      double *e = own + (size_t)ch * 2 * POSENC_CHUNK + (size_t)v * POSENC_I_DLANES;
      vd_t ss, sc;
      POSENC_I_K(exact_sincos)(vd_set1(1.0), job->u + (ch * POSENC_UPARTS * POSENC_CHUNK) + POSENC_I_DLANES * v,
                               &ss, &sc);
      vd_storeu(e, ss);
      vd_storeu(e + POSENC_CHUNK, sc);
    }
  while (row < job->nrows) {
    int64_t p0, a, j;
    const size_t nblock = POSENC_I_K(block_at)(job, row, &p0, &a);
    for (ch = 0; ch < nchunk; ch++) {
      unsigned char *out = job->out + (ptrdiff_t)row * job->row_stride + (size_t)ch * chunk_cols * es;
      unsigned ncols = total_cols - ch * chunk_cols < chunk_cols ? total_cols - ch * chunk_cols : chunk_cols;
      /* Non-temporal stores only where a pass writes whole 64-byte lines of a row: at 128 bits a
       * pass writes 32 bytes (f32 pairs) and the other half of the line a pass later, which broke
       * the write combining (bench_table n = 131072, SSE2: 2.93 ns per pair streamed, 1.33 with
       * ordinary stores). 16-bit stores narrower than 16 bytes stay ordinary too. */
      int stream = job->stream && ncols == chunk_cols && POSENC_I_VBITS >= 256 &&
                   (dtype == POSENC_DTYPE_F32 || POSENC_I_VH_STREAM);
      size_t r;
      vd_t s0[POSENC_I_NV], c0[POSENC_I_NV], sp0[POSENC_I_NV], cp0[POSENC_I_NV];
      const double *e = steps + (size_t)ch * 2 * POSENC_CHUNK;
      /* the recurrence's state (posenc_i_job), in the instance of its own (carry) alone: in the
       * others its copies took stack (ARMv7 NEON: 200 bytes a frame, in a decode step's too) */
      double *state = carry ? job->state + (size_t)ch * 4 * POSENC_CHUNK : NULL;
      int64_t from = a; /* where the walk starts */
      if (state && job->resume && row == 0 && !job->positions && p0 != a) { /* start - 1's state */
        POSENC_I_K(load_state)(s0, c0, sp0, cp0, POSENC_I_NV, state);
        from = p0 - 1;
      } else if (max_seeds == 0) {
        POSENC_I_K(seed_chunk)(s0, c0, sp0, cp0, e, job->u + ch * POSENC_UPARTS * POSENC_CHUNK, a);
      } else {
        if (next_seed == nseeds) {
          nseeds = POSENC_I_K(seed_items)(job, row, ch, nchunk, max_seeds, seed_s, seed_c);
          next_seed = 0;
        }
        for (v = 0; v < POSENC_I_NV; v++) {
          s0[v] = seed_s[next_seed * POSENC_I_NV + v];
          c0[v] = seed_c[next_seed * POSENC_I_NV + v];
          POSENC_I_K(back_vec)(s0[v], c0[v], &sp0[v], &cp0[v], vd_loadu(e + POSENC_I_DLANES * v),
                               vd_loadu(e + POSENC_CHUNK + POSENC_I_DLANES * v));
        }
        next_seed++;
      }
      for (v = 0; v < POSENC_I_NV && (unsigned)v * vec_cols < ncols; v += POSENC_I_W) {
        POSENC_I_K(pass) ps;
        unsigned char *dst = out + (size_t)v * vec_cols * es;
        const unsigned valid = ncols - (unsigned)v * vec_cols; /* columns of this pass to write */
        int w;
        for (w = 0; w < POSENC_I_W; w++) {
          ps.s[w] = s0[v + w]; ps.c[w] = c0[v + w]; ps.sp[w] = sp0[v + w]; ps.cp[w] = cp0[v + w];
          ps.k2[w] = vd_loadu(e + POSENC_CHUNK + (size_t)(v + w) * POSENC_I_DLANES);
          ps.k2[w] = vd_add(ps.k2[w], ps.k2[w]); /* 2*cos, exact */
        }
        for (j = from; j < p0; j++) POSENC_I_K(step_vecs)(ps.s, ps.c, ps.sp, ps.cp, ps.k2, POSENC_I_W);
        if (valid >= POSENC_I_W * vec_cols) { /* every column of the pass: straight to out */
          for (r = 0;; r++, dst += job->row_stride) {
            POSENC_I_K(pass_store)(&ps, dst, job->cos_offset, mode, dtype, stream, opts);
            if (r + 1 == nblock) break;
            POSENC_I_K(step_vecs)(ps.s, ps.c, ps.sp, ps.cp, ps.k2, POSENC_I_W);
          }
        } else { /* the last valid column is in this pass: through the row buffer */
          unsigned char tmp[2 * POSENC_I_W * POSENC_I_DLANES * 4];
          for (r = 0;; r++, dst += job->row_stride) {
            POSENC_I_K(pass_store)(&ps, tmp, tmp_cos, mode, dtype, 0, opts);
            memcpy(dst, tmp, valid * es);
            if (mode == POSENC_I_PLANAR) memcpy(dst + job->cos_offset, tmp + tmp_cos, valid * es);
            if (r + 1 == nblock) break;
            POSENC_I_K(step_vecs)(ps.s, ps.c, ps.sp, ps.cp, ps.k2, POSENC_I_W);
          }
        }
        if (state) /* the last row's state, for a call that resumes */
          POSENC_I_K(store_state)(ps.s, ps.c, ps.sp, ps.cp, POSENC_I_W, state + (size_t)v * POSENC_I_DLANES);
      }
    }
    row += nblock;
  }
  if (job->stream) v_sfence(); /* order the non-temporal stores before the caller's */
}

/* One function per layout, dtype and kind (the sinusoidal tables, unscaled and sin first, get
 * their own: on SSE2 the option checks cost 23% more instructions in the hot loop, 16 xmm
 * registers being already short), each with its own frame: inlined into one switch, their locals
 * took 2.2 KiB of stack at 256 bits, about what one instance needs alone (1.9-2.0). */
#define POSENC_I_ROWS_FN(name, mode, dtype, plain) POSENC_I_NOINLINE void POSENC_I_K(name)(const posenc_i_job *job) \
  { \
    double own[(plain ? POSENC_I_UGROUP : 1) * 2 * POSENC_CHUNK]; \
    POSENC_I_K(rows)(job, mode, dtype, plain, 0, 0, NULL, NULL, own); \
  }
/* The tables' instances make their anchors ahead (POSENC_I_SEEDS); the others, which RoPE's
 * calls reach with their own frames above, keep their stack. */
#if POSENC_I_SEEDS > 0
#  define POSENC_I_ROWS_PLAIN_FN(name, mode, dtype) POSENC_I_NOINLINE void POSENC_I_K(name)(const posenc_i_job *job) \
  { \
    vd_t seed_s[POSENC_I_SEEDS * POSENC_I_NV], seed_c[POSENC_I_SEEDS * POSENC_I_NV]; \
    double own[POSENC_I_UGROUP * 2 * POSENC_CHUNK]; \
    POSENC_I_K(rows)(job, mode, dtype, 1, 0, POSENC_I_SEEDS, seed_s, seed_c, own); \
  }
#else
#  define POSENC_I_ROWS_PLAIN_FN(name, mode, dtype) POSENC_I_ROWS_FN(name, mode, dtype, 1)
#endif
#define POSENC_I_ROWS_FNS(tag, mode, dtype) POSENC_I_ROWS_FN(rows_##tag, mode, dtype, 0) \
  POSENC_I_ROWS_PLAIN_FN(rows_##tag##_plain, mode, dtype)
POSENC_I_ROWS_FNS(pairs_f32, POSENC_I_PAIRS, POSENC_DTYPE_F32)
POSENC_I_ROWS_FNS(planar_f32, POSENC_I_PLANAR, POSENC_DTYPE_F32)
POSENC_I_ROWS_FNS(pairs_f16, POSENC_I_PAIRS, POSENC_DTYPE_F16)
POSENC_I_ROWS_FNS(planar_f16, POSENC_I_PLANAR, POSENC_DTYPE_F16)
POSENC_I_ROWS_FNS(pairs_bf16, POSENC_I_PAIRS, POSENC_DTYPE_BF16)
POSENC_I_ROWS_FNS(planar_bf16, POSENC_I_PLANAR, POSENC_DTYPE_BF16)
#undef POSENC_I_ROWS_FNS
#undef POSENC_I_ROWS_PLAIN_FN
#undef POSENC_I_ROWS_FN
/* Rows with the recurrence's state (job->state): the on-the-fly rows of a rotation, f32 PLANAR.
 * Where SIMDe emulates the f64 vectors (no f64 lanes: ARMv7 NEON), the scalar kernel's, whose
 * double arithmetic is the same work: the vector kernel's frame was 2 KiB there, with the state
 * 200 bytes more, over the 1 KiB block's stack budget (tests/test_stack.c). */
#if defined(SIMDE_X86_SSE2_NATIVE) || defined(SIMDE_ARM_NEON_A64V8_NATIVE) || defined(SIMDE_WASM_SIMD128_NATIVE)
POSENC_I_NOINLINE void POSENC_I_K(rows_planar_f32_carry)(const posenc_i_job *job) {
  double own[2 * POSENC_CHUNK];
  POSENC_I_K(rows)(job, POSENC_I_PLANAR, POSENC_DTYPE_F32, 0, 1, 0, NULL, NULL, own);
}
#else
#  define POSENC_I_ROWS_CARRY_SCALAR
#endif

static void POSENC_I_K(sincos_rows)(const posenc_i_job *job) {
#define POSENC_I_ROWS_CASE(mode, dtype, tag) case (dtype) * 2 + (mode): \
    if (plain) POSENC_I_K(rows_##tag##_plain)(job); else POSENC_I_K(rows_##tag)(job); break
  const int plain = !job->scaled && !job->cos_first;
  if (job->state) { /* f32 PLANAR only (posenc_i_job) */
#if defined(POSENC_I_ROWS_CARRY_SCALAR)
    posenc_i_scalar_sincos_rows(job);
#else
    POSENC_I_K(rows_planar_f32_carry)(job);
#endif
    return;
  }
  switch ((int)job->dtype * 2 + job->mode) { /* int, as the case labels are */
    POSENC_I_ROWS_CASE(POSENC_I_PAIRS, POSENC_DTYPE_F32, pairs_f32);
    POSENC_I_ROWS_CASE(POSENC_I_PLANAR, POSENC_DTYPE_F32, planar_f32);
    POSENC_I_ROWS_CASE(POSENC_I_PAIRS, POSENC_DTYPE_F16, pairs_f16);
    POSENC_I_ROWS_CASE(POSENC_I_PLANAR, POSENC_DTYPE_F16, planar_f16);
    POSENC_I_ROWS_CASE(POSENC_I_PAIRS, POSENC_DTYPE_BF16, pairs_bf16);
    default: if (plain) POSENC_I_K(rows_planar_bf16_plain)(job); else POSENC_I_K(rows_planar_bf16)(job); break;
  }
#undef POSENC_I_ROWS_CASE
}

/* The masked add of sinusoidal rows (posenc_i_scalar_add_sinus in posenc.h, bit for bit): the row
 * kernel with each row's values added where they are made. Rows in f32 with x and y of one dtype
 * get loops of their own (other dtypes, read as they go, took 15-25% longer with bf16 x and y);
 * the rest share one. */
/* Rows walk from anchor to anchor, as in rows; each chunk in turn (add_chunk). The add job's
 * fields go to locals first (add_opts). */
POSENC_I_FORCEINLINE void POSENC_I_K(add_rows)(const posenc_i_job *job, const posenc_i_add_job *add, int mode,
                                          posenc_dtype pt, posenc_dtype xt, posenc_dtype yt) {
  const unsigned nchunk = (job->nfreq + POSENC_CHUNK - 1) / POSENC_CHUNK;
  const unsigned chunk_cols = mode == POSENC_I_PAIRS ? 2 * POSENC_CHUNK : POSENC_CHUNK;
  const unsigned total_cols = mode == POSENC_I_PAIRS ? job->pair_cols : job->nfreq;
  POSENC_I_K(add_opts) o;
  size_t row = 0;
  unsigned ch;
  o.x = add->x; o.y = add->y; o.x_stride = add->x_stride; o.y_stride = add->y_stride;
  o.keys = add->keys; o.col0 = add->col0;
  o.scale = vf_set1(add->scale); o.keep_scale = vf_set1(add->keep_scale);
  o.threshold = vi_set1((int32_t)(add->threshold ^ 0x80000000u)); o.stream = add->stream;
  o.prefetch_y = add->y != add->x && !add->stream;
  while (row < job->nrows) {
    const int64_t p0 = (int64_t)job->start + (int64_t)row, a = POSENC_I_ANCHOR_OF(p0);
    size_t nblock = (size_t)(a + POSENC_ANCHOR - p0);
    if (nblock > job->nrows - row) nblock = job->nrows - row;
    for (ch = 0; ch < nchunk; ch++) {
      const unsigned ncols = total_cols - ch * chunk_cols < chunk_cols ? total_cols - ch * chunk_cols : chunk_cols;
      POSENC_I_K(add_chunk)(&o, job->u + ch * POSENC_UPARTS * POSENC_CHUNK, a, p0, row, nblock,
                            (size_t)ch * chunk_cols, ncols, job->cos_col, mode, pt, xt, yt);
    }
    row += nblock;
  }
  if (o.stream) v_sfence(); /* order the non-temporal stores before the caller's */
}

#define POSENC_I_ADD_SINUS_FN(name, mode, dt) \
  POSENC_I_NOINLINE void POSENC_I_K(name)(const posenc_i_job *job, const posenc_i_add_job *add) { \
    POSENC_I_K(add_rows)(job, add, mode, POSENC_DTYPE_F32, dt, dt); }
#define POSENC_I_ADD_SINUS_FNS(tag, dt) POSENC_I_ADD_SINUS_FN(add_sinus_pairs_##tag, POSENC_I_PAIRS, dt) \
  POSENC_I_ADD_SINUS_FN(add_sinus_planar_##tag, POSENC_I_PLANAR, dt)
POSENC_I_ADD_SINUS_FNS(f32, POSENC_DTYPE_F32)
POSENC_I_ADD_SINUS_FNS(f16, POSENC_DTYPE_F16)
POSENC_I_ADD_SINUS_FNS(bf16, POSENC_DTYPE_BF16)
#undef POSENC_I_ADD_SINUS_FNS
#undef POSENC_I_ADD_SINUS_FN
POSENC_I_NOINLINE void POSENC_I_K(add_sinus_pairs_any)(const posenc_i_job *job, const posenc_i_add_job *add) {
  POSENC_I_K(add_rows)(job, add, POSENC_I_PAIRS, job->dtype, add->x_dtype, add->y_dtype);
}
POSENC_I_NOINLINE void POSENC_I_K(add_sinus_planar_any)(const posenc_i_job *job, const posenc_i_add_job *add) {
  POSENC_I_K(add_rows)(job, add, POSENC_I_PLANAR, job->dtype, add->x_dtype, add->y_dtype);
}

static void POSENC_I_K(add_sinus)(const posenc_i_job *job, const posenc_i_add_job *add) {
#define POSENC_I_ADD_SINUS_CASE(dt, tag) case dt: \
    if (pairs) POSENC_I_K(add_sinus_pairs_##tag)(job, add); else POSENC_I_K(add_sinus_planar_##tag)(job, add); break
  const int pairs = job->mode == POSENC_I_PAIRS;
  if (job->dtype != POSENC_DTYPE_F32 || add->x_dtype != add->y_dtype) {
    if (pairs) POSENC_I_K(add_sinus_pairs_any)(job, add); else POSENC_I_K(add_sinus_planar_any)(job, add);
    return;
  }
  switch (add->x_dtype) {
    POSENC_I_ADD_SINUS_CASE(POSENC_DTYPE_F32, f32);
    POSENC_I_ADD_SINUS_CASE(POSENC_DTYPE_F16, f16);
    default: if (pairs) POSENC_I_K(add_sinus_pairs_bf16)(job, add); else POSENC_I_K(add_sinus_planar_bf16)(job, add);
  }
#undef POSENC_I_ADD_SINUS_CASE
}

/* ---- RoPE rotation: FLANES f32 lanes per vector -------------------------------------------- */
/* Every rotation reads its input (src, of dtype sdt) and writes its output (dst, of dtype ddt):
 * the same place in place, another tensor out of place. Loads come before the stores they feed. */

/* A QK-norm's view of a head (posenc_i_rot_job): its scale r, the weights' bias, and the weights of
 * the lanes at hand. on: a compile-time constant in every instance, so that rotations without a
 * norm compile to what they were. */
typedef struct POSENC_I_K(norm) {
  int on;
  vf_t r, bias;
} POSENC_I_K(norm);

/* FLANES input values at p, in f32, normalised where the norm is on (w + e: their weights; w is
 * NULL without a norm). */
POSENC_I_FORCEINLINE vf_t POSENC_I_K(load_normed)(const unsigned char *p, posenc_dtype dt, const float *w, size_t e,
                                             POSENC_I_K(norm) nm) {
  vf_t x = POSENC_I_K(load)(p, dt);
  return nm.on ? vf_mul(vf_mul(x, nm.r), vf_add(vf_loadu(w + e), nm.bias)) : x;
}

/* n values from sdt to ddt (posenc_i_scalar_convert's rounding; an f16 NaN's payload may differ),
 * normalised where the norm is on (w: their weights). */
POSENC_I_FORCEINLINE void POSENC_I_K(convert_as)(const unsigned char *src, posenc_dtype sdt, unsigned char *dst,
                                            posenc_dtype ddt, size_t n, const float *w, POSENC_I_K(norm) nm) {
  const size_t ses = sdt == POSENC_DTYPE_F32 ? 4 : 2, des = ddt == POSENC_DTYPE_F32 ? 4 : 2;
  size_t i = 0;
  for (; i + POSENC_I_FLANES <= n; i += POSENC_I_FLANES)
    POSENC_I_K(store)(dst + i * des, POSENC_I_K(load_normed)(src + i * ses, sdt, w, i, nm), ddt);
  if (i < n) {
    unsigned char t[POSENC_I_FLANES * 4], u[POSENC_I_FLANES * 4];
    float wt[POSENC_I_FLANES];
    memset(t, 0, sizeof t); memset(wt, 0, sizeof wt);
    memcpy(t, src + i * ses, (n - i) * ses);
    if (nm.on) memcpy(wt, w + i, (n - i) * sizeof(float));
    POSENC_I_K(store)(u, POSENC_I_K(load_normed)(t, sdt, wt, 0, nm), ddt);
    memcpy(dst + i * des, u, (n - i) * des);
  }
}

/* Asks for the cache lines of `bytes` (> 0) bytes at p: p's line, then each line that starts
 * within them. */
POSENC_I_FORCEINLINE void POSENC_I_K(prefetch_span)(const unsigned char *p, size_t bytes) {
  size_t k;
  v_prefetch(p);
  for (k = 64 - (size_t)((uintptr_t)p % 64); k < bytes; k += 64) v_prefetch(p + k);
}

/* Asks for the lines that heads hd .. hd+ng-1 of the next token will read (job->ahead on): lanes
 * 0 .. n-1 of each head and, NeoX, their partners. */
POSENC_I_FORCEINLINE void POSENC_I_K(prefetch_heads)(const posenc_i_rot_job *job, size_t hd, size_t ng, size_t n,
                                                size_t ses) {
  size_t g;
  for (g = 0; g < ng; g++) {
    const unsigned char *p = job->src + (ptrdiff_t)(hd + g) * job->src_head_stride + job->ahead;
    POSENC_I_K(prefetch_span)(p, n * ses);
    if (job->style == POSENC_ROPE_NEOX) POSENC_I_K(prefetch_span)(p + job->half * ses, n * ses);
  }
}

/* Asks for the lines of one head's chunk of pairs from pair j0 (NeoX: and their partners, h
 * pairs on), the head's first element at p. */
POSENC_I_FORCEINLINE void POSENC_I_K(prefetch_chunk)(const unsigned char *p, size_t j0, size_t h, int style,
                                                size_t ses) {
  if (style == POSENC_ROPE_NEOX) {
    POSENC_I_K(prefetch_span)(p + j0 * ses, POSENC_CHUNK * ses);
    POSENC_I_K(prefetch_span)(p + (h + j0) * ses, POSENC_CHUNK * ses);
  } else {
    POSENC_I_K(prefetch_span)(p + 2 * j0 * ses, 2 * POSENC_CHUNK * ses);
  }
}

/* FLANES NeoX pairs: (x0, x1) -> (x0*c - x1*s, x1*c + x0*s), the scalar kernel's operations. */
POSENC_I_FORCEINLINE void POSENC_I_K(neox)(const unsigned char *i0, const unsigned char *i1, unsigned char *o0,
                                      unsigned char *o1, vf_t cv, vf_t sv, posenc_dtype sdt, posenc_dtype ddt,
                                      const float *w, size_t e0, size_t e1, POSENC_I_K(norm) nm, int stream) {
  vf_t x0 = POSENC_I_K(load_normed)(i0, sdt, w, e0, nm), x1 = POSENC_I_K(load_normed)(i1, sdt, w, e1, nm);
  POSENC_I_K(put16)(o0, vf_sub(vf_mul(x0, cv), vf_mul(x1, sv)), ddt, stream);
  POSENC_I_K(put16)(o1, vf_add(vf_mul(x1, cv), vf_mul(x0, sv)), ddt, stream);
}

/* bf16 NeoX in even and odd lanes. 2*FLANES bf16 values read as FLANES 32-bit lanes hold the
 * even elements in the low halves and the odd ones in the high halves: shifted up or masked, each
 * is an exact f32 vector, with no widening shuffle, and rounded back (bf16_hi) the two merge with
 * a shift and an OR, with no narrowing one (at 256 bits the packing shuffles held the bf16
 * rotation to 1.1x the f32 element rate, as in bench/rope_proto.c, whose even/odd prototype
 * reached 1.3-1.6x; this kernel 1.3-1.4x).
 * The rotation is elementwise, so it runs on the even and on the odd elements as two vectors, with
 * the cos/sin split alike. Little-endian only (the even element is a lane's low half). Not at 512
 * bits: there the widening and the narrowing are one permute each, and the split measured no
 * faster (avx512 1.48-1.56x the f32 rate, 1.51-1.67x without); the avx512bf16 backend converts
 * with one instruction. */
#if !defined(POSENC_I_CVT_BF16) && POSENC_I_VBITS < 512 && POSENC_I_ROT_SCRATCH % 16 == 0 && \
    (defined(_MSC_VER) || (defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__))
#  define POSENC_I_BF16_EVEN_ODD 1

/* The 16-bit words of v equal to e's (all-ones or zero words), and whether any byte of v is
 * all ones (by its byte mask: SIMDe 0.7.4's simde_mm_testz_si128 off SSE4.1 returns 1 when either
 * 64-bit half is zero, simd-everywhere/simde#1097, and its simde_mm256_testz_si256 off AVX is
 * built on it). */
#  if POSENC_I_VBITS == 128
#    define POSENC_I_EQ16 simde_mm_cmpeq_epi16
#    define POSENC_I_ANY(v) (simde_mm_movemask_epi8(v) != 0)
#  else
#    define POSENC_I_EQ16 simde_mm256_cmpeq_epi16
#    define POSENC_I_ANY(v) (simde_mm256_movemask_epi8(v) != 0)
#  endif

/* lo, whose high halves are zero, with hi's high halves: one word blend where the ISA has it
 * (SSE4.1's pblendw, AVX2's vpblendw), else an AND and an OR */
POSENC_I_FORCEINLINE vi_t POSENC_I_K(merge_hi16)(vi_t lo, vi_t hi) {
#  if POSENC_I_VBITS == 128 && defined(SIMDE_X86_SSE4_1_NATIVE)
  return simde_mm_blend_epi16(lo, hi, 0xAA);
#  elif POSENC_I_VBITS == 256 && defined(SIMDE_X86_AVX2_NATIVE)
  return simde_mm256_blend_epi16(lo, hi, 0xAA);
#  else
  return vi_or(lo, vi_and(hi, vi_set1((int32_t)0xffff0000u)));
#  endif
}

/* The even and the odd results, rounded (bf16_hi; nan_free a constant), merged into 2*FLANES
 * bf16 values at o. */
POSENC_I_FORCEINLINE void POSENC_I_K(put_bf16_eo)(unsigned char *o, vf_t ye, vf_t yo, int nan_free) {
  vi_storeu(o, POSENC_I_K(merge_hi16)(vi_srli(POSENC_I_K(bf16_hi)(ye, nan_free), 16), POSENC_I_K(bf16_hi)(yo, nan_free)));
}

/* 2*FLANES NeoX pairs of bf16: lanes at i0, their partners at i1, written at o0 and o1; the
 * operations of neox. ce/co, se/so: the cos and sin of the even and of the odd lanes. bounded: 1
 * if every cos and sin of the chunk being rotated (up to POSENC_I_ROT_SCRATCH pairs, these among
 * them) is finite with |value| <= 1.
 * The rounding (bf16_hi) picks out NaN lanes, four operations a vector, because adding 0x7fff to
 * a NaN with a large payload carries into the sign (0x7fffffff would store -0). A NaN result
 * needs a NaN among the cos/sin or a NaN or an infinity among the inputs: with |cos|, |sin| <= 1
 * a product is no larger than its finite x, and the sum or difference of two finite values is
 * finite or infinite, never NaN. So where bounded and one test of the 4*FLANES input words'
 * exponents (all ones: NaN or infinity) finds none, the rounding skips its NaN lanes. On x86 and
 * ARM only a NaN cos or sin could do harm: there a NaN result carries a NaN operand's payload or
 * is the default NaN, and a bf16 input's or the default NaN's low bits are zero, which rounds
 * safely. WebAssembly's NaN results may carry any payload, hence the rest of the conditions
 * (test_rope's bf16 specials catch a NaN cos or sin taken as bounded; nothing run here can catch
 * the rest missing). */
POSENC_I_FORCEINLINE void POSENC_I_K(neox_bf16_eo)(const unsigned char *i0, const unsigned char *i1, unsigned char *o0,
                                              unsigned char *o1, vf_t ce, vf_t co, vf_t se, vf_t so, int bounded) {
  const vi_t hi = vi_set1((int32_t)0xffff0000u), exp = vi_set1(0x7f807f80);
  const vi_t v0 = vi_loadu(i0), v1 = vi_loadu(i1);
  const vf_t x0e = vf_from_bits(vi_slli(v0, 16)), x0o = vf_from_bits(vi_and(v0, hi));
  const vf_t x1e = vf_from_bits(vi_slli(v1, 16)), x1o = vf_from_bits(vi_and(v1, hi));
  const vf_t y0e = vf_sub(vf_mul(x0e, ce), vf_mul(x1e, se)), y0o = vf_sub(vf_mul(x0o, co), vf_mul(x1o, so));
  const vf_t y1e = vf_add(vf_mul(x1e, ce), vf_mul(x0e, se)), y1o = vf_add(vf_mul(x1o, co), vf_mul(x0o, so));
  if (bounded && !POSENC_I_ANY(vi_or(POSENC_I_EQ16(vi_and(v0, exp), exp), POSENC_I_EQ16(vi_and(v1, exp), exp)))) {
    POSENC_I_K(put_bf16_eo)(o0, y0e, y0o, 1);
    POSENC_I_K(put_bf16_eo)(o1, y1e, y1o, 1);
  } else {
    POSENC_I_K(put_bf16_eo)(o0, y0e, y0o, 0);
    POSENC_I_K(put_bf16_eo)(o1, y1e, y1o, 0);
  }
}

/* 1 if the float at p is finite with |value| <= 1 (by its bits: whatever the compiler assumes of
 * NaN) */
POSENC_I_FORCEINLINE int POSENC_I_K(within_one)(const float *p) {
  uint32_t b;
  memcpy(&b, p, 4);
  return (b & 0x7fffffffu) <= 0x3f800000u;
}

/* Lanes 0 .. n-1 (n a multiple of 2*FLANES) of every head of a bf16 -> bf16 NeoX job without a
 * norm, POSENC_I_ROT_SCRATCH at a time: their cos/sin split into even and odd lanes per block of
 * 2*FLANES in the job's scratch buffers, then every head. */
static void POSENC_I_K(rotate_bf16_eo)(const posenc_i_rot_job *job, size_t n) {
  const size_t h = job->half, block = 2 * POSENC_I_FLANES, half = POSENC_I_ROT_SCRATCH / 2;
  const ptrdiff_t shs = job->src_head_stride, dhs = job->dst_head_stride;
  float *const ce = job->scratch_c, *const co = ce + half, *const se = job->scratch_s, *const so = se + half;
  size_t j0, j, i, hd;
  /* the next token's lines, whole heads (rotate_heads, which runs the lanes past n, then does not) */
  if (job->ahead) POSENC_I_K(prefetch_heads)(job, 0, job->heads, job->pairs, 2);
  for (j0 = 0; j0 < n; j0 += POSENC_I_ROT_SCRATCH) {
    const size_t m = n - j0 < POSENC_I_ROT_SCRATCH ? n - j0 : POSENC_I_ROT_SCRATCH; /* a multiple of block */
    int bounded = 1;
    for (j = 0; j < m; j += block)
      for (i = 0; i < POSENC_I_FLANES; i++) {
        ce[j / 2 + i] = job->c[j0 + j + 2 * i]; co[j / 2 + i] = job->c[j0 + j + 2 * i + 1];
        se[j / 2 + i] = job->s[j0 + j + 2 * i]; so[j / 2 + i] = job->s[j0 + j + 2 * i + 1];
      }
    for (j = 0; j < m; j++) bounded &= POSENC_I_K(within_one)(job->c + j0 + j) & POSENC_I_K(within_one)(job->s + j0 + j);
    for (hd = 0; hd < job->heads; hd++) {
      const unsigned char *in = job->src + (ptrdiff_t)hd * shs + j0 * 2;
      unsigned char *out = job->dst + (ptrdiff_t)hd * dhs + j0 * 2;
      for (j = 0; j < m; j += block)
        POSENC_I_K(neox_bf16_eo)(in + j * 2, in + (h + j) * 2, out + j * 2, out + (h + j) * 2, vf_loadu(ce + j / 2),
                                 vf_loadu(co + j / 2), vf_loadu(se + j / 2), vf_loadu(so + j / 2), bounded);
    }
  }
}
#  undef POSENC_I_EQ16
#  undef POSENC_I_ANY
#else
#  define POSENC_I_BF16_EVEN_ODD 0
#endif

/* FLANES/2 GPT-J pairs: x*c + swap(x)*s with the expanded rows (s = -sin, sin, ...). */
POSENC_I_FORCEINLINE void POSENC_I_K(gptj)(const unsigned char *in, unsigned char *out, vf_t cv, vf_t sv,
                                      posenc_dtype sdt, posenc_dtype ddt, const float *w, size_t e, POSENC_I_K(norm) nm,
                                      int stream) {
  vf_t x = POSENC_I_K(load_normed)(in, sdt, w, e, nm), xs = vf_swap_pairs(x);
  POSENC_I_K(put16)(out, vf_add(vf_mul(x, cv), vf_mul(xs, sv)), ddt, stream);
}

/* Where lane j of a head and its NeoX partner j + h (GPT-J: none) lie in a tensor. */
typedef struct POSENC_I_K(rot_side) {
  const unsigned char *src; ptrdiff_t shs; size_t ses;  /* input: a head, head stride (fly_heads), element size */
  unsigned char *dst; ptrdiff_t dhs; size_t des;        /* output */
} POSENC_I_K(rot_side);

/* FLANES lanes at lane j of the head at t.src / t.dst (NeoX: lanes j.. and their partners at
 * j+h; GPT-J: FLANES/2 pairs), with a norm's weights w. Everything the loop reads lives in locals
 * (t is passed by value, its address never taken): stores through the data pointers could alias
 * the job, or a struct in memory. */
POSENC_I_FORCEINLINE void POSENC_I_K(rotate_lanes)(POSENC_I_K(rot_side) t, size_t j, size_t h, vf_t cv, vf_t sv,
                                              int style, posenc_dtype sdt, posenc_dtype ddt, int in_place,
                                              const float *w, POSENC_I_K(norm) nm, int stream) {
  unsigned char *out = t.dst;
  const unsigned char *in = in_place ? out : t.src; /* in place: one pointer */
  if (style == POSENC_ROPE_NEOX)
    POSENC_I_K(neox)(in + j * t.ses, in + (h + j) * t.ses, out + j * t.des, out + (h + j) * t.des, cv, sv, sdt, ddt, w,
                     j, h + j, nm, stream);
  else
    POSENC_I_K(gptj)(in + j * t.ses, out + j * t.des, cv, sv, sdt, ddt, w, j, nm, stream);
}

/* The last rest < FLANES lanes of every head, from lane nv (NeoX: and their partners): the same
 * vector code on zero-padded copies. Not inlined: its buffers would otherwise be in the frame of
 * every instance of rotate_heads (1.3 KiB more stack at 512 bits), and it runs once a head. */
POSENC_I_NOINLINE void POSENC_I_K(rotate_rest)(const posenc_i_rot_job *job, int style, posenc_dtype sdt,
                                               posenc_dtype ddt, int norm, size_t nv, size_t rest) {
  const size_t ses = sdt == POSENC_DTYPE_F32 ? 4 : 2, des = ddt == POSENC_DTYPE_F32 ? 4 : 2, h = job->half;
  const float *const w = norm ? job->norm_weight : NULL;
  float ct[POSENC_I_FLANES], st[POSENC_I_FLANES], wt[2 * POSENC_I_FLANES];
  unsigned char in[2 * POSENC_I_FLANES * 4], out[2 * POSENC_I_FLANES * 4]; /* NeoX: partners at lane FLANES */
  POSENC_I_K(rot_side) side;
  POSENC_I_K(norm) nm;
  size_t hd;
  nm.on = norm;
  nm.bias = vf_set1(norm ? job->weight_bias : 0.0f);
  nm.r = nm.bias;
  memset(ct, 0, sizeof ct); memset(st, 0, sizeof st); memset(wt, 0, sizeof wt);
  memcpy(ct, job->c + nv, rest * sizeof(float));
  memcpy(st, job->s + nv, rest * sizeof(float));
  if (norm) {
    memcpy(wt, w + nv, rest * sizeof(float));
    if (style == POSENC_ROPE_NEOX) memcpy(wt + POSENC_I_FLANES, w + h + nv, rest * sizeof(float));
  }
  side.shs = side.dhs = 0;
  side.ses = ses; side.des = des;
  side.src = in; side.dst = out;
  for (hd = 0; hd < job->heads; hd++) {
    const unsigned char *x = job->src + (ptrdiff_t)hd * job->src_head_stride;
    unsigned char *y = job->dst + (ptrdiff_t)hd * job->dst_head_stride;
    memset(in, 0, sizeof in);
    memcpy(in, x + nv * ses, rest * ses);
    if (style == POSENC_ROPE_NEOX) memcpy(in + POSENC_I_FLANES * ses, x + (h + nv) * ses, rest * ses);
    if (norm) nm.r = vf_set1(job->norm_scale[hd]);
    POSENC_I_K(rotate_lanes)(side, 0, POSENC_I_FLANES, vf_loadu(ct), vf_loadu(st), style, sdt, ddt, 0,
                             norm ? wt : NULL, nm, 0);
    memcpy(y + nv * des, out, rest * des);
    if (style == POSENC_ROPE_NEOX) memcpy(y + (h + nv) * des, out + POSENC_I_FLANES * des, rest * des);
  }
}

POSENC_I_FORCEINLINE void POSENC_I_K(rotate_heads)(const posenc_i_rot_job *job, int style, posenc_dtype sdt,
                                              posenc_dtype ddt, int in_place, int norm) {
  const size_t ses = sdt == POSENC_DTYPE_F32 ? 4 : 2, des = ddt == POSENC_DTYPE_F32 ? 4 : 2;
  const size_t h = job->half, heads = job->heads; /* h: a NeoX lane's partner distance */
  const size_t n = style == POSENC_ROPE_NEOX ? job->pairs : 2 * job->pairs; /* lanes per head */
  const size_t nv = n - n % POSENC_I_FLANES, rest = n - nv;
  const float *const c = job->c, *const s = job->s;
  /* the job's fields in locals: after a store through the data pointers the compiler would read
   * them again from *job (which those stores might alias), once per head */
  const unsigned char *const src0 = job->src;
  unsigned char *const dst0 = job->dst;
  const ptrdiff_t shs = job->src_head_stride, dhs = job->dst_head_stride, ahead = job->ahead;
  const float *const w = norm ? job->norm_weight : NULL;
  POSENC_I_K(rot_side) side;
  POSENC_I_K(norm) nm;
  /* One head at a time, lanes inside a head: walking all heads per vector of lanes (a 512-byte
   * stride over a 16 KiB token) got a third of the memory bandwidth in prefill. Two NeoX heads at
   * a time (their cos/sin loads shared) measured best on a Xeon's AVX2, but on an AMD EPYC (Zen 4)
   * their four interleaved streams made calls of 2 MiB from memory 1.5-1.8x slower (SSE2, AVX2);
   * one head costs 10% of a decode step in cache there. The head's start is stepped, not
   * recomputed as src0 + hd*shs: with gcc's generic tuning that product read src0 and shs back
   * from the stack before each head's loads, and AVX-512's calls of 2 MiB were 1.6-1.8x slower.
   * README, "RoPE", has the measurements. */
  /* Non-temporal stores where the job asks (a large output, not read back soon, written whole by
   * the vector stores: no rest lanes) and every vector store is 16-byte aligned: the head starts,
   * the head stride and (NeoX) the partner distance; the caller fences (posenc_i_backend.fence). */
  const int stream = !in_place && job->stream && rest == 0 && (des == 4 || POSENC_I_VH_STREAM) && (uintptr_t)dst0 % 16 == 0 &&
                     (size_t)dhs % 16 == 0 && (style != POSENC_ROPE_NEOX || h * des % 16 == 0);
  /* lanes from j_eo on take the paths below (bf16 NeoX: those short of a whole even/odd block) */
  size_t j, hd, j_eo = 0;
  nm.on = norm;
  nm.bias = vf_set1(norm ? job->weight_bias : 0.0f);
  nm.r = nm.bias;
  side.shs = shs; side.ses = ses;
  side.dhs = dhs; side.des = des;
#if POSENC_I_BF16_EVEN_ODD
  if (style == POSENC_ROPE_NEOX && sdt == POSENC_DTYPE_BF16 && ddt == POSENC_DTYPE_BF16 && !norm && !stream &&
      job->scratch_c) {
    j_eo = nv - nv % (2 * POSENC_I_FLANES);
    if (j_eo) POSENC_I_K(rotate_bf16_eo)(job, j_eo);
  }
#endif
  side.src = src0;
  side.dst = dst0;
  for (hd = 0; hd < heads && j_eo < nv; hd++) {
    if (hd) { /* stepped before a head, never past the last */
      side.src += shs;
      side.dst += dhs;
    }
    if (norm) nm.r = vf_set1(job->norm_scale[hd]);
    if (ahead && !j_eo) POSENC_I_K(prefetch_heads)(job, hd, 1, n, ses);
    if (stream) {
      POSENC_I_UNROLL
      for (j = j_eo; j < nv; j += POSENC_I_FLANES)
        POSENC_I_K(rotate_lanes)(side, j, h, vf_loadu(c + j), vf_loadu(s + j), style, sdt, ddt, 0, w, nm, 1);
    } else {
      POSENC_I_UNROLL
      for (j = j_eo; j < nv; j += POSENC_I_FLANES)
        POSENC_I_K(rotate_lanes)(side, j, h, vf_loadu(c + j), vf_loadu(s + j), style, sdt, ddt, in_place, w, nm, 0);
    }
  }
  if (rest) POSENC_I_K(rotate_rest)(job, style, sdt, ddt, norm, nv, rest);
  if (norm && job->dim > job->tail_from) /* the dims past rotary_dim, normalised */
    for (hd = 0; hd < heads; hd++) {
      nm.r = vf_set1(job->norm_scale[hd]);
      POSENC_I_K(convert_as)(src0 + (ptrdiff_t)hd * shs + job->tail_from * ses, sdt,
                             dst0 + (ptrdiff_t)hd * dhs + job->tail_from * des, ddt, job->dim - job->tail_from,
                             w + job->tail_from, nm);
    }
}

/* One instance per style and pair of dtypes, and per style and dtype in place, where one pointer
 * serves for loads and stores (two made in-place prefill 7% slower and decode 10%, AVX2); with a
 * QK-norm one per style and pair of dtypes. */
#define POSENC_I_ROT_CASE(style, sdt, ddt, norm) \
  case ((style) * 3 + (sdt)) * 3 + (ddt): POSENC_I_K(rotate_heads)(job, style, sdt, ddt, 0, norm); break
#define POSENC_I_ROT_IN_PLACE(style, dt) \
  case (style) * 3 + (dt): POSENC_I_K(rotate_heads)(job, style, dt, dt, 1, 0); break
#define POSENC_I_ROT_CASES(style, sdt, norm) POSENC_I_ROT_CASE(style, sdt, POSENC_DTYPE_F32, norm); \
  POSENC_I_ROT_CASE(style, sdt, POSENC_DTYPE_F16, norm); POSENC_I_ROT_CASE(style, sdt, POSENC_DTYPE_BF16, norm)
#define POSENC_I_ROT_ALL(norm) \
  switch ((job->style * 3 + job->src_dtype) * 3 + job->dst_dtype) { \
    POSENC_I_ROT_CASES(POSENC_ROPE_NEOX, POSENC_DTYPE_F32, norm); \
    POSENC_I_ROT_CASES(POSENC_ROPE_NEOX, POSENC_DTYPE_F16, norm); \
    POSENC_I_ROT_CASES(POSENC_ROPE_NEOX, POSENC_DTYPE_BF16, norm); \
    POSENC_I_ROT_CASES(POSENC_ROPE_GPTJ, POSENC_DTYPE_F32, norm); \
    POSENC_I_ROT_CASES(POSENC_ROPE_GPTJ, POSENC_DTYPE_F16, norm); \
    POSENC_I_ROT_CASE(POSENC_ROPE_GPTJ, POSENC_DTYPE_BF16, POSENC_DTYPE_F32, norm); \
    POSENC_I_ROT_CASE(POSENC_ROPE_GPTJ, POSENC_DTYPE_BF16, POSENC_DTYPE_F16, norm); \
    default: POSENC_I_K(rotate_heads)(job, POSENC_ROPE_GPTJ, POSENC_DTYPE_BF16, POSENC_DTYPE_BF16, 0, norm); break; \
  }
/* The instances with a QK-norm, out of line: they keep more vectors live, and inlined in rotate
 * their spills set the frame of every rotation (gcc 12: 784 bytes at 512 bits and 496 on AVX2,
 * against 216 without them). */
POSENC_I_NOINLINE void POSENC_I_K(rotate_with_norm)(const posenc_i_rot_job *job) {
  POSENC_I_ROT_ALL(1)
}

static void POSENC_I_K(rotate)(const posenc_i_rot_job *job) {
  if (job->norm_scale) {
    POSENC_I_K(rotate_with_norm)(job);
    return;
  }
  if (job->src == job->dst && job->src_dtype == job->dst_dtype && job->src_head_stride == job->dst_head_stride) {
    switch (job->style * 3 + job->dst_dtype) {
      POSENC_I_ROT_IN_PLACE(POSENC_ROPE_NEOX, POSENC_DTYPE_F32);
      POSENC_I_ROT_IN_PLACE(POSENC_ROPE_NEOX, POSENC_DTYPE_F16);
      POSENC_I_ROT_IN_PLACE(POSENC_ROPE_NEOX, POSENC_DTYPE_BF16);
      POSENC_I_ROT_IN_PLACE(POSENC_ROPE_GPTJ, POSENC_DTYPE_F32);
      POSENC_I_ROT_IN_PLACE(POSENC_ROPE_GPTJ, POSENC_DTYPE_F16);
      default: POSENC_I_K(rotate_heads)(job, POSENC_ROPE_GPTJ, POSENC_DTYPE_BF16, POSENC_DTYPE_BF16, 1, 0); break;
    }
    return;
  }
  POSENC_I_ROT_ALL(0)
#undef POSENC_I_ROT_ALL
#undef POSENC_I_ROT_IN_PLACE
#undef POSENC_I_ROT_CASES
#undef POSENC_I_ROT_CASE
}

/* GPT-J's expanded sines' signs: -0 on even lanes from here, on odd lanes from here + 1 (17: the
 * widest vector's 16 lanes from either) */
static const float POSENC_I_K(gptj_sign)[17] = {-0.0f, 0.0f, -0.0f, 0.0f, -0.0f, 0.0f, -0.0f, 0.0f, -0.0f,
                                               0.0f, -0.0f, 0.0f, -0.0f, 0.0f, -0.0f, 0.0f, -0.0f};

/* ---- rotation with its rows made as it goes (posenc_i_scalar_rope_fly, bit for bit) -------- */
/* Where the f64 vectors are native, as for the carried rows (rows_planar_f32_carry): elsewhere
 * the scalar kernel's. */
#if !defined(POSENC_I_ROWS_CARRY_SCALAR)
/* Bytes of input and output a window of tokens reads and writes (fly_heads): in L1 while each
 * chunk walks the window (a prototype over all 64 pairs of heads of 128: 8 heads fastest at 4-8
 * tokens, 32 heads at 1-2). */
#define POSENC_I_FLY_WINDOW_BYTES 16384
#define POSENC_I_FLY_WINDOW_MAX 8

/* posenc_i_fly_job in windows of tokens: in each window, each chunk walks the window's tokens
 * with its recurrence in locals (from the anchor in the first window, from rows->state in the
 * next), as the masked add's add_chunk walks its rows, and rotates its pairs of every head of
 * every pass at each token, head by head. No row in memory: with the 1 KiB block's carried rows, a
 * call to the rotation per token and range of 16 pairs took 1.5-1.6x the time of the 8 KiB block's
 * whole rows (AVX2 and AVX-512, 8 heads of 128). A chunk at a time, not W vectors (as rows and
 * add_chunk walk): on SSE2 a pass of 4 pairs per head and token was 1.35x slower. That order reads
 * a slice of each head, which the CPU's prefetchers do not follow from memory: in a large call
 * (job->prefetch) each token's heads ask first for their lines that come next (the README's
 * "Stack": 1.25-2.7x faster, run by run, at 32 heads of 128 from memory); asked head by head inside
 * the loop, they cost the loop registers (25-40% in cache). */
POSENC_I_FORCEINLINE void POSENC_I_K(fly_heads)(const posenc_i_fly_job *job, int style, posenc_dtype sdt,
                                              posenc_dtype ddt, int in_place) {
  const posenc_i_job *const rows = job->rows;
  const size_t ses = sdt == POSENC_DTYPE_F32 ? 4 : 2, des = ddt == POSENC_DTYPE_F32 ? 4 : 2;
  const size_t h = job->pass[0].half, npass = job->npass, tokens = job->tokens;
  const unsigned nchunk = rows->nfreq / POSENC_CHUNK;
  const int scaled = rows->scaled;
  const vd_t scale = vd_set1(rows->scale);
  /* the sines' signs: NeoX's all negated where inverse; GPT-J's even lanes (odd where inverse) */
  const vf_t sign = style == POSENC_ROPE_NEOX ? vf_set1(job->inverse ? -0.0f : 0.0f)
                                              : vf_loadu(POSENC_I_K(gptj_sign) + (job->inverse ? 1 : 0));
  POSENC_I_K(rot_side) side[POSENC_I_FLY_PASSES];
  size_t heads[POSENC_I_FLY_PASSES];
  ptrdiff_t sts[POSENC_I_FLY_PASSES], dts[POSENC_I_FLY_PASSES];
  POSENC_I_K(norm) nm;
  size_t bytes = 0, window, t0, i;
  nm.on = 0;
  nm.bias = vf_set1(0.0f);
  nm.r = nm.bias;
  for (i = 0; i < npass; i++) { /* the job's fields in locals, as rotate_heads keeps them */
    side[i].src = job->pass[i].src; side[i].shs = job->pass[i].src_head_stride; side[i].ses = ses;
    side[i].dst = job->pass[i].dst; side[i].dhs = job->pass[i].dst_head_stride; side[i].des = des;
    heads[i] = job->pass[i].heads;
    sts[i] = job->src_ts[i]; dts[i] = job->dst_ts[i];
    bytes += heads[i] * 2 * rows->nfreq * (in_place ? ses : ses + des);
  }
  window = bytes ? POSENC_I_FLY_WINDOW_BYTES / bytes : POSENC_I_FLY_WINDOW_MAX;
  if (window > POSENC_I_FLY_WINDOW_MAX) window = POSENC_I_FLY_WINDOW_MAX;
  if (window < 1) window = 1;
  for (t0 = 0; t0 < tokens; t0 += window) {
    const size_t nw = tokens - t0 < window ? tokens - t0 : window;
    const int64_t p0 = (int64_t)rows->start + (int64_t)t0, a = POSENC_I_ANCHOR_OF(p0);
    unsigned ch;
    for (ch = 0; ch < nchunk; ch++) {
      const double *e = rows->step + (size_t)ch * 2 * POSENC_CHUNK;
      double *st = rows->state + (size_t)ch * 4 * POSENC_CHUNK;
      const size_t j0 = (size_t)ch * POSENC_CHUNK; /* the chunk's first pair */
      vd_t s[POSENC_I_NV], c[POSENC_I_NV], sp[POSENC_I_NV], cp[POSENC_I_NV], k2[POSENC_I_NV];
      size_t tt, hd;
      int v;
      for (v = 0; v < POSENC_I_NV; v++) {
        k2[v] = vd_loadu(e + POSENC_CHUNK + (size_t)v * POSENC_I_DLANES);
        k2[v] = vd_add(k2[v], k2[v]); /* 2*cos, exact */
      }
      if (t0 == 0) {
        int64_t k;
        POSENC_I_K(seed_chunk)(s, c, sp, cp, e, rows->u + (size_t)ch * POSENC_UPARTS * POSENC_CHUNK, a);
        for (k = a; k < p0; k++) POSENC_I_K(step_vecs)(s, c, sp, cp, k2, POSENC_I_NV);
      } else { /* on from the window before's last token */
        POSENC_I_K(load_state)(s, c, sp, cp, POSENC_I_NV, st);
        POSENC_I_K(step_vecs)(s, c, sp, cp, k2, POSENC_I_NV);
      }
      for (tt = 0;; tt++) {
        /* the chunk's cos and sin as the rotation reads them: NeoX FLANES pairs a vector, GPT-J
         * DLANES (each value twice) */
        vf_t cv[POSENC_I_NV], sv[POSENC_I_NV];
        vfh_t chf[POSENC_I_NV], shf[POSENC_I_NV];
        for (v = 0; v < POSENC_I_NV; v++) {
          vd_t sd = s[v], cd = c[v];
          if (scaled) { sd = vd_mul(sd, scale); cd = vd_mul(cd, scale); } /* as pass_store */
          chf[v] = vd_cvt(cd); shf[v] = vd_cvt(sd);
        }
        if (style == POSENC_ROPE_NEOX) {
          for (v = 0; v < POSENC_I_NV / 2; v++) {
            cv[v] = vfh_cat(chf[2 * v], chf[2 * v + 1]);
            sv[v] = vf_xor(vfh_cat(shf[2 * v], shf[2 * v + 1]), sign);
          }
        } else {
          for (v = 0; v < POSENC_I_NV; v++) {
            cv[v] = vfh_zip(chf[v], chf[v]);
            sv[v] = vf_xor(vfh_zip(shf[v], shf[v]), sign);
          }
        }
        for (i = 0; i < npass; i++) {
          if (job->prefetch) { /* every head's lines that come next in this order */
            const unsigned char *at = NULL, *here = side[i].src + (ptrdiff_t)(t0 + tt) * sts[i];
            size_t nj = 0;
            if (tt + 1 < nw) { /* the chunk at the window's next token */
              at = here + sts[i]; nj = j0;
            } else if (ch + 1 < nchunk) { /* the next chunk at the window's first token */
              at = here - (ptrdiff_t)tt * sts[i]; nj = j0 + POSENC_CHUNK;
            } else if (t0 + nw < tokens) { /* the first chunk at the next window's first token */
              at = here + sts[i];
            } else if (job->next_call[i]) { /* the next call's first */
              at = side[i].src + job->next_call[i];
            }
            if (at)
              for (hd = 0; hd < heads[i]; hd++)
                POSENC_I_K(prefetch_chunk)(at + (ptrdiff_t)hd * side[i].shs, nj, h, style, ses);
          }
          for (hd = 0; hd < heads[i]; hd++) { /* head by head: its lines of the chunk in turn */
            POSENC_I_K(rot_side) t = side[i];
            t.src += (ptrdiff_t)(t0 + tt) * sts[i] + (ptrdiff_t)hd * t.shs;
            t.dst += (ptrdiff_t)(t0 + tt) * dts[i] + (ptrdiff_t)hd * t.dhs;
            if (style == POSENC_ROPE_NEOX) {
              for (v = 0; v < POSENC_I_NV / 2; v++)
                POSENC_I_K(rotate_lanes)(t, j0 + (size_t)v * POSENC_I_FLANES, h, cv[v], sv[v], style, sdt, ddt,
                                         in_place, NULL, nm, 0);
            } else {
              for (v = 0; v < POSENC_I_NV; v++)
                POSENC_I_K(rotate_lanes)(t, 2 * j0 + (size_t)v * POSENC_I_FLANES, 0, cv[v], sv[v], style, sdt,
                                         ddt, in_place, NULL, nm, 0);
            }
          }
        }
        if (tt + 1 == nw) break;
        POSENC_I_K(step_vecs)(s, c, sp, cp, k2, POSENC_I_NV);
      }
      if (t0 + nw < tokens) POSENC_I_K(store_state)(s, c, sp, cp, POSENC_I_NV, st);
    }
  }
}

/* One instance per style and dtype, in place or not (posenc.h runs the other pairs of dtypes
 * through rotate over rows in memory). */
#define POSENC_I_FLY_FN(name, style, dt, in_place) POSENC_I_NOINLINE void POSENC_I_K(name)(const posenc_i_fly_job *job) \
  { POSENC_I_K(fly_heads)(job, style, dt, dt, in_place); }
#define POSENC_I_FLY_FNS(tag, style, dt) POSENC_I_FLY_FN(fly_##tag, style, dt, 0) \
  POSENC_I_FLY_FN(fly_##tag##_in_place, style, dt, 1)
POSENC_I_FLY_FNS(neox_f32, POSENC_ROPE_NEOX, POSENC_DTYPE_F32)
POSENC_I_FLY_FNS(neox_f16, POSENC_ROPE_NEOX, POSENC_DTYPE_F16)
POSENC_I_FLY_FNS(neox_bf16, POSENC_ROPE_NEOX, POSENC_DTYPE_BF16)
POSENC_I_FLY_FNS(gptj_f32, POSENC_ROPE_GPTJ, POSENC_DTYPE_F32)
POSENC_I_FLY_FNS(gptj_f16, POSENC_ROPE_GPTJ, POSENC_DTYPE_F16)
POSENC_I_FLY_FNS(gptj_bf16, POSENC_ROPE_GPTJ, POSENC_DTYPE_BF16)
#undef POSENC_I_FLY_FNS
#undef POSENC_I_FLY_FN

static void POSENC_I_K(rope_fly)(const posenc_i_fly_job *job) {
  const posenc_i_rot_job *r = &job->pass[0];
  const int in_place = r->src == r->dst && r->src_head_stride == r->dst_head_stride && job->src_ts[0] == job->dst_ts[0];
#define POSENC_I_FLY_CASE(style, dt, tag) case (style) * 3 + (dt): \
    if (in_place) POSENC_I_K(fly_##tag##_in_place)(job); else POSENC_I_K(fly_##tag)(job); break
  switch ((int)r->style * 3 + (int)r->dst_dtype) {
    POSENC_I_FLY_CASE(POSENC_ROPE_NEOX, POSENC_DTYPE_F32, neox_f32);
    POSENC_I_FLY_CASE(POSENC_ROPE_NEOX, POSENC_DTYPE_F16, neox_f16);
    POSENC_I_FLY_CASE(POSENC_ROPE_NEOX, POSENC_DTYPE_BF16, neox_bf16);
    POSENC_I_FLY_CASE(POSENC_ROPE_GPTJ, POSENC_DTYPE_F32, gptj_f32);
    POSENC_I_FLY_CASE(POSENC_ROPE_GPTJ, POSENC_DTYPE_F16, gptj_f16);
    default: if (in_place) POSENC_I_K(fly_gptj_bf16_in_place)(job); else POSENC_I_K(fly_gptj_bf16)(job); break;
  }
#undef POSENC_I_FLY_CASE
}
#  define POSENC_I_SIMD_ROPE_FLY POSENC_I_K(rope_fly)
#else
#  define POSENC_I_SIMD_ROPE_FLY posenc_i_scalar_rope_fly
#endif

/* GPT-J's expanded cos/sin (posenc_i_scalar_gptj_expand): DLANES pairs a step where c and s are
 * contiguous, each zipped with itself, the sines' even lanes negated (inverse: the odd ones);
 * the scalar kernel for an interleaved row (step 2) and the last pairs. Moves and sign flips
 * only: the same bits. */
static void POSENC_I_K(gptj_expand)(const unsigned char *c, const unsigned char *s, size_t step, size_t n, int inverse,
                                    float *c2, float *s2) {
  const vf_t sign = vf_loadu(POSENC_I_K(gptj_sign) + (inverse ? 1 : 0));
  size_t k = 0;
  if (step == 1)
    for (; k + POSENC_I_DLANES <= n; k += POSENC_I_DLANES) {
      vfh_t cv = vfh_loadu(c + k * sizeof(float)), sv = vfh_loadu(s + k * sizeof(float));
      vf_storeu(c2 + 2 * k, vfh_zip(cv, cv));
      vf_storeu(s2 + 2 * k, vf_xor(vfh_zip(sv, sv), sign));
    }
  if (k < n)
    posenc_i_scalar_gptj_expand(c + k * step * sizeof(float), s + k * step * sizeof(float), step, n - k, inverse,
                                c2 + 2 * k, s2 + 2 * k);
}

/* Orders the rotations' non-temporal stores before the caller's later loads and stores. */
static void POSENC_I_K(fence)(void) { v_sfence(); }

/* QK-norm's sums of squares (posenc_i_scalar_sumsq's order): the squares in double, element e
 * into accumulator lane e mod 8 (NACC = 8 / DLANES vectors of DLANES lanes), then the scalar
 * kernel's tree. Each lane is a chain of n/8 dependent adds, so heads go four at a time, their
 * chains side by side (one at a time, decode's 40 heads took 4x the rotation's time, AVX2). Steps
 * of SQ_STEP elements (a whole number of vectors and of 8-lane rows) keep every accumulator's
 * index a constant: the accumulators stay in registers. */
#define POSENC_I_NACC (8 / POSENC_I_DLANES)
#define POSENC_I_SQ_STEP (POSENC_I_FLANES >= 8 ? POSENC_I_FLANES : 8)
#define POSENC_I_SQ_HEADS 4
#if defined(__GNUC__) || defined(__clang__)
#  define POSENC_I_UNROLL_ALL _Pragma("GCC unroll 16")
#else
#  define POSENC_I_UNROLL_ALL
#endif

/* The squares of SQ_STEP values at x into acc (a head's NACC accumulators). */
POSENC_I_FORCEINLINE void POSENC_I_K(sq_step)(vd_t *acc, const unsigned char *x, posenc_dtype dtype) {
  const size_t es = dtype == POSENC_DTYPE_F32 ? 4 : 2;
  size_t v;
  POSENC_I_UNROLL_ALL
  for (v = 0; v < POSENC_I_SQ_STEP / POSENC_I_FLANES; v++) {
    vf_t f = POSENC_I_K(load)(x + v * POSENC_I_FLANES * es, dtype);
    vd_t lo = vd_from_lo(f), hi = vd_from_hi(f);
    acc[2 * v % POSENC_I_NACC] = vd_add(acc[2 * v % POSENC_I_NACC], vd_mul(lo, lo));
    acc[(2 * v + 1) % POSENC_I_NACC] = vd_add(acc[(2 * v + 1) % POSENC_I_NACC], vd_mul(hi, hi));
  }
}

/* nh (a constant: SQ_HEADS or 1) heads' sums. */
POSENC_I_FORCEINLINE void POSENC_I_K(sumsq_heads)(const unsigned char *src, posenc_dtype dtype, ptrdiff_t head_stride,
                                             size_t nh, size_t n, double *ss) {
  const size_t es = dtype == POSENC_DTYPE_F32 ? 4 : 2, nv = n - n % POSENC_I_SQ_STEP;
  vd_t acc[POSENC_I_SQ_HEADS][POSENC_I_NACC];
  double lanes[8];
  size_t i, k, hd;
  POSENC_I_UNROLL_ALL
  for (hd = 0; hd < nh; hd++)
    for (k = 0; k < POSENC_I_NACC; k++) acc[hd][k] = vd_zero();
  for (i = 0; i < nv; i += POSENC_I_SQ_STEP) {
    POSENC_I_UNROLL_ALL
    for (hd = 0; hd < nh; hd++) POSENC_I_K(sq_step)(acc[hd], src + (ptrdiff_t)hd * head_stride + i * es, dtype);
  }
  if (nv < n) { /* zeros past the end add nothing */
    unsigned char t[POSENC_I_SQ_STEP * 4];
    for (hd = 0; hd < nh; hd++) {
      memset(t, 0, sizeof t);
      memcpy(t, src + (ptrdiff_t)hd * head_stride + nv * es, (n - nv) * es);
      POSENC_I_K(sq_step)(acc[hd], t, dtype);
    }
  }
  for (hd = 0; hd < nh; hd++) {
    for (k = 0; k < POSENC_I_NACC; k++) vd_storeu(lanes + k * POSENC_I_DLANES, acc[hd][k]);
    ss[hd] = ((lanes[0] + lanes[4]) + (lanes[2] + lanes[6])) + ((lanes[1] + lanes[5]) + (lanes[3] + lanes[7]));
  }
}

POSENC_I_FORCEINLINE void POSENC_I_K(sumsq_as)(const unsigned char *src, posenc_dtype dtype, ptrdiff_t head_stride,
                                          size_t heads, size_t n, double *ss) {
  size_t hd;
  for (hd = 0; hd + POSENC_I_SQ_HEADS <= heads; hd += POSENC_I_SQ_HEADS)
    POSENC_I_K(sumsq_heads)(src + (ptrdiff_t)hd * head_stride, dtype, head_stride, POSENC_I_SQ_HEADS, n, ss + hd);
  for (; hd < heads; hd++) POSENC_I_K(sumsq_heads)(src + (ptrdiff_t)hd * head_stride, dtype, head_stride, 1, n, ss + hd);
}

static void POSENC_I_K(sumsq)(const unsigned char *src, posenc_dtype dtype, ptrdiff_t head_stride, size_t heads,
                              size_t n, double *ss) {
  if (dtype == POSENC_DTYPE_F32) POSENC_I_K(sumsq_as)(src, POSENC_DTYPE_F32, head_stride, heads, n, ss);
  else if (dtype == POSENC_DTYPE_F16) POSENC_I_K(sumsq_as)(src, POSENC_DTYPE_F16, head_stride, heads, n, ss);
  else POSENC_I_K(sumsq_as)(src, POSENC_DTYPE_BF16, head_stride, heads, n, ss);
}
#undef POSENC_I_UNROLL_ALL
#undef POSENC_I_SQ_HEADS
#undef POSENC_I_SQ_STEP
#undef POSENC_I_NACC

/* A cache row's values to f32 (negated for the inverse: exact). */
static void POSENC_I_K(to_f32)(const unsigned char *src, posenc_dtype dtype, float *dst, size_t n, int negate) {
  const size_t es = dtype == POSENC_DTYPE_F32 ? 4 : 2;
  const vf_t sign = vf_set1(negate ? -0.0f : 0.0f);
  size_t i = 0;
  for (; i + POSENC_I_FLANES <= n; i += POSENC_I_FLANES)
    vf_storeu(dst + i, vf_xor(POSENC_I_K(load)(src + i * es, dtype), sign));
  if (i < n) {
    unsigned char t[POSENC_I_FLANES * 4];
    float f[POSENC_I_FLANES];
    memset(t, 0, sizeof t);
    memcpy(t, src + i * es, (n - i) * es);
    vf_storeu(f, vf_xor(POSENC_I_K(load)(t, dtype), sign));
    memcpy(dst + i, f, (n - i) * sizeof(float));
  }
}

static void POSENC_I_K(convert)(const unsigned char *src, posenc_dtype sdt, unsigned char *dst, posenc_dtype ddt,
                                size_t n) {
#define POSENC_I_CONVERT_CASE(a, b) case (a) * 3 + (b): POSENC_I_K(convert_as)(src, a, dst, b, n, NULL, off); break
  POSENC_I_K(norm) off;
  off.on = 0;
  off.r = off.bias = vf_set1(0.0f);
  if (sdt == ddt) { memcpy(dst, src, n * (sdt == POSENC_DTYPE_F32 ? 4 : 2)); return; }
  switch (sdt * 3 + ddt) {
    POSENC_I_CONVERT_CASE(POSENC_DTYPE_F32, POSENC_DTYPE_F16);
    POSENC_I_CONVERT_CASE(POSENC_DTYPE_F32, POSENC_DTYPE_BF16);
    POSENC_I_CONVERT_CASE(POSENC_DTYPE_F16, POSENC_DTYPE_F32);
    POSENC_I_CONVERT_CASE(POSENC_DTYPE_F16, POSENC_DTYPE_BF16);
    POSENC_I_CONVERT_CASE(POSENC_DTYPE_BF16, POSENC_DTYPE_F32);
    default: POSENC_I_K(convert_as)(src, POSENC_DTYPE_BF16, dst, POSENC_DTYPE_F16, n, NULL, off); break;
  }
#undef POSENC_I_CONVERT_CASE
}

/* ---- masked add: rows (posenc_i_scalar_add_fwd / _bwd in posenc.h, bit for bit) ----------- */
POSENC_I_FORCEINLINE void POSENC_I_K(add_fwd_rows)(const posenc_i_add_job *job, posenc_dtype xt, posenc_dtype pt,
                                              posenc_dtype yt) {
  const size_t xs = xt == POSENC_DTYPE_F32 ? 4 : 2, ps = pt == POSENC_DTYPE_F32 ? 4 : 2;
  const size_t ys = yt == POSENC_DTYPE_F32 ? 4 : 2;
  const size_t n = job->n, nv = n - n % POSENC_I_FLANES, rest = n - nv, col0 = job->col0, nrows = job->nrows;
  const vf_t sc = vf_set1(job->scale), ks = vf_set1(job->keep_scale);
  const vi_t thr = vi_set1((int32_t)(job->threshold ^ 0x80000000u));
  const uint32_t *const keys = job->keys;
  const unsigned char *x = job->x, *p = job->p;
  unsigned char *y = job->y;
  const ptrdiff_t xst = job->x_stride, pst = job->p_stride, yst = job->y_stride;
  const int want_stream = job->stream;
  size_t r, j;
  for (r = 0; r < nrows; r++, x += xst, p += pst, y += yst) {
    const int stream = want_stream && (uintptr_t)y % (POSENC_I_FLANES * 4) == 0;
    /* the loops have no branch left: has_keys and stream are constants in each */
    if (keys) {
      const uint32_t key = keys[r];
      for (j = 0; j + 2 * POSENC_I_FLANES <= nv; j += 2 * POSENC_I_FLANES)
        POSENC_I_K(fwd_vecs)(x, p, y, j, 2, xt, pt, yt, 1, key, col0, thr, ks, sc, stream);
      if (j < nv) POSENC_I_K(fwd_vecs)(x, p, y, j, 1, xt, pt, yt, 1, key, col0, thr, ks, sc, stream);
    } else if (stream) {
      for (j = 0; j + 2 * POSENC_I_FLANES <= nv; j += 2 * POSENC_I_FLANES)
        POSENC_I_K(fwd_vecs)(x, p, y, j, 2, xt, pt, yt, 0, 0, col0, thr, ks, sc, 1);
      if (j < nv) POSENC_I_K(fwd_vecs)(x, p, y, j, 1, xt, pt, yt, 0, 0, col0, thr, ks, sc, 1);
    } else {
      for (j = 0; j + 2 * POSENC_I_FLANES <= nv; j += 2 * POSENC_I_FLANES)
        POSENC_I_K(fwd_vecs)(x, p, y, j, 2, xt, pt, yt, 0, 0, col0, thr, ks, sc, 0);
      if (j < nv) POSENC_I_K(fwd_vecs)(x, p, y, j, 1, xt, pt, yt, 0, 0, col0, thr, ks, sc, 0);
    }
    if (rest) { /* the same vector code on zero-padded copies */
      unsigned char tx[POSENC_I_FLANES * 4], tp[POSENC_I_FLANES * 4], ty[POSENC_I_FLANES * 4];
      memset(tx, 0, sizeof tx); memset(tp, 0, sizeof tp);
      memcpy(tx, x + nv * xs, rest * xs); memcpy(tp, p + nv * ps, rest * ps);
      POSENC_I_K(fwd_vecs)(tx, tp, ty, 0, 1, xt, pt, yt, keys != NULL, keys ? keys[r] : 0, col0 + nv, thr, ks, sc, 0);
      memcpy(y + nv * ys, ty, rest * ys);
    }
  }
  if (want_stream) v_sfence();
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

/* The backward of nvec (a constant, 1 or 2) vectors from column j, every load before the stores:
 * two vectors per iteration that way ran 14-16% faster than one (bench_embed in L3, SSE2 and
 * AVX2). The loop invariants come in locals: stores through yr and g could alias the job. */
POSENC_I_FORCEINLINE void POSENC_I_K(bwd_vecs)(const unsigned char *x, unsigned char *yr, float *g, size_t j, int nvec,
                                          posenc_dtype xt, posenc_dtype yt, int has_keys, int has_y, int has_g,
                                          uint32_t key, size_t col0, vi_t thr, vf_t ks, vf_t sc, int stream) {
  const size_t xs = xt == POSENC_DTYPE_F32 ? 4 : 2, ys = yt == POSENC_DTYPE_F32 ? 4 : 2;
  vf_t v[2], gs[2];
  int u;
  for (u = 0; u < nvec; u++) {
    const size_t ju = j + (size_t)u * POSENC_I_FLANES;
    v[u] = POSENC_I_K(load)(x + ju * xs, xt);
    if (has_keys) v[u] = vf_mul(v[u], POSENC_I_K(keep)(key, col0 + ju, thr, ks));
    if (has_g) gs[u] = vf_add(vf_loadu(g + ju), v[u]);
  }
  for (u = 0; u < nvec; u++) {
    const size_t ju = j + (size_t)u * POSENC_I_FLANES;
    if (has_y) POSENC_I_K(store_s)(yr + ju * ys, vf_mul(v[u], sc), yt, stream);
    if (has_g) vf_storeu(g + ju, gs[u]);
  }
}

/* has_keys, has_y, has_g: constants at each call site (the loop has no branch left) */
POSENC_I_FORCEINLINE void POSENC_I_K(add_bwd_rows)(const posenc_i_add_job *job, posenc_dtype xt, posenc_dtype yt,
                                              int has_keys, int has_y, int has_g) {
  const size_t xs = xt == POSENC_DTYPE_F32 ? 4 : 2, ys = yt == POSENC_DTYPE_F32 ? 4 : 2;
  const size_t n = job->n, nv = n - n % POSENC_I_FLANES, rest = n - nv, col0 = job->col0, nrows = job->nrows;
  const vf_t sc = vf_set1(job->scale), ks = vf_set1(job->keep_scale);
  const vi_t thr = vi_set1((int32_t)(job->threshold ^ 0x80000000u));
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
    const int stream = want_stream && (uintptr_t)yr % (POSENC_I_FLANES * 4) == 0;
    const uint32_t key = has_keys ? keys[r] : 0u;
    for (j = 0; j + 2 * POSENC_I_FLANES <= nv; j += 2 * POSENC_I_FLANES)
      POSENC_I_K(bwd_vecs)(x, yr, g, j, 2, xt, yt, has_keys, has_y, has_g, key, col0, thr, ks, sc, stream);
    if (j < nv) POSENC_I_K(bwd_vecs)(x, yr, g, j, 1, xt, yt, has_keys, has_y, has_g, key, col0, thr, ks, sc, stream);
    if (rest) { /* the same vector code on zero-padded copies */
      unsigned char tx[POSENC_I_FLANES * 4], ty[POSENC_I_FLANES * 4];
      float tg[POSENC_I_FLANES];
      vf_t v;
      memset(tx, 0, sizeof tx); memset(tg, 0, sizeof tg);
      memcpy(tx, x + nv * xs, rest * xs);
      v = POSENC_I_K(load)(tx, xt);
      if (has_keys) v = vf_mul(v, POSENC_I_K(keep)(key, col0 + nv, thr, ks));
      if (has_y) {
        POSENC_I_K(store)(ty, vf_mul(v, sc), yt);
        memcpy(yr + nv * ys, ty, rest * ys);
      }
      if (has_g) {
        memcpy(tg, g + nv, rest * sizeof(float));
        vf_storeu(tg, vf_add(vf_loadu(tg), v));
        memcpy(g + nv, tg, rest * sizeof(float));
      }
    }
  }
  if (want_stream) v_sfence();
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
/* FLANES columns of -inf. */
POSENC_I_FORCEINLINE void POSENC_I_K(fill)(unsigned char *p, posenc_dtype dt) {
  if (dt == POSENC_DTYPE_F16) vh_storeu(p, vh_set1((int16_t)(uint16_t)0xfc00u));
  else vf_storeu((float *)(void *)p, vf_set1(-SIMDE_MATH_INFINITYF));
}

/* MASK: -inf where masked, the other bits untouched (no conversion, so an f16 signalling NaN
 * stays as it is, as in the scalar kernel). */
POSENC_I_FORCEINLINE void POSENC_I_K(mask)(unsigned char *p, const uint8_t *keep, posenc_dtype dt) {
  if (dt == POSENC_DTYPE_F16) {
    vh_storeu(p, vh_sel(vhm_keep0(keep), vh_set1((int16_t)(uint16_t)0xfc00u), vh_loadu(p)));
  } else {
    const vf_t v = vf_loadu((const float *)(const void *)p);
    vf_storeu((float *)(void *)p, vf_sel(vfm_keep0(keep), vf_set1(-SIMDE_MATH_INFINITYF), v));
  }
}

/* CONST, LINEAR, VALUES on FLANES columns from j (d: the LINEAR distances, v: the VALUES values). */
POSENC_I_FORCEINLINE void POSENC_I_K(add)(unsigned char *p, const uint8_t *keep, posenc_dtype dt, int kind,
                                     vf_t a, vf_t d, const float *v) {
  vf_t x = POSENC_I_K(load)(p, dt);
  if (kind == POSENC_I_SEG_CONST) x = vf_add(x, a);
  else if (kind == POSENC_I_SEG_LINEAR) x = vf_add(x, vf_mul(a, d));
  else x = vf_add(x, vf_loadu(v));
  if (keep) x = vf_sel(vfm_keep0(keep), vf_set1(-SIMDE_MATH_INFINITYF), x);
  POSENC_I_K(store)(p, x, dt);
}

POSENC_I_FORCEINLINE void POSENC_I_K(do_vec)(unsigned char *p, const uint8_t *keep, posenc_dtype dt, int kind,
                                        vf_t a, vf_t d, const float *v) {
  if (kind == POSENC_I_SEG_FILL) POSENC_I_K(fill)(p, dt);
  else if (kind == POSENC_I_SEG_MASK) POSENC_I_K(mask)(p, keep, dt);
  else POSENC_I_K(add)(p, keep, dt, kind, a, d, v);
}

/* The VALUES values from column `at` of the segment on (NULL for the other kinds). */
POSENC_I_FORCEINLINE const float *POSENC_I_K(vals)(const posenc_i_bias_seg *g, int kind, size_t at) {
  return kind == POSENC_I_SEG_VALUES ? g->v + at : NULL;
}

/* Column j alone, with the scalar kernel's operations: the same bits (f16 conversions round to
 * nearest even alike). start: the segment's first column. */
POSENC_I_FORCEINLINE void POSENC_I_K(do1)(const posenc_i_bias_job *job, const posenc_i_bias_seg *g, size_t j,
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

/* n < FLANES columns from column j: f32 ones alone (do1); f16 ones with the vector code on
 * zero-padded copies of the row, keep bytes and values: f16 columns alone (converted in software)
 * made the f16 bias add in L3 39% slower at 512 bits than at 256 (bench_bias, ALiBi+causal, 256
 * keys), and 20% slower at 256 than this. */
POSENC_I_FORCEINLINE void POSENC_I_K(do_part)(const posenc_i_bias_job *job, const posenc_i_bias_seg *g, size_t j, size_t n,
                                         size_t start, posenc_dtype dt, int kind) {
  unsigned char t[POSENC_I_FLANES * 2];
  uint8_t k[POSENC_I_FLANES];
  float v[POSENC_I_FLANES];
  size_t i;
  if (dt == POSENC_DTYPE_F32) {
    for (i = 0; i < n; i++) POSENC_I_K(do1)(job, g, j + i, start, dt, kind);
    return;
  }
  memset(t, 0, sizeof t);
  memcpy(t, job->row + j * 2, n * 2);
  if (job->keep) { memset(k, 1, sizeof k); memcpy(k, job->keep + j, n); }
  if (kind == POSENC_I_SEG_VALUES) { memset(v, 0, sizeof v); memcpy(v, g->v + (j - start), n * sizeof(float)); }
  POSENC_I_K(do_vec)(t, job->keep ? k : NULL, dt, kind, vf_set1(g->a),
                     vf_add(vf_set1((float)((int64_t)g->c + (int64_t)j)), vf_iota()), v);
  memcpy(job->row + j * 2, t, n * 2);
}

/* One segment; kind and dtype are constants at every call site. A long segment starts with
 * the columns up to a vector-aligned address (vectors that straddle cache lines cost about 5% in
 * DRAM on AVX2), then vectors of FLANES columns, then the rest (do_part). */
POSENC_I_FORCEINLINE void POSENC_I_K(bias_seg)(const posenc_i_bias_job *job, const posenc_i_bias_seg *g, size_t j,
                                          posenc_dtype dt, int kind) {
  const size_t es = dt == POSENC_DTYPE_F32 ? 4 : 2, end = g->end, start = j;
  const uint8_t *keep = job->keep;
  unsigned char *row = job->row;
  if (end - j >= 8 * POSENC_I_FLANES && (uintptr_t)row % es == 0) {
    const size_t mis = ((uintptr_t)(row + j * es) & (POSENC_I_FLANES * es - 1)) / es;
    if (mis) {
      POSENC_I_K(do_part)(job, g, j, POSENC_I_FLANES - mis, start, dt, kind);
      j += POSENC_I_FLANES - mis;
    }
  }
  if (end - j >= POSENC_I_FLANES) {
    const vf_t a = vf_set1(g->a);
    const int64_t c = (int64_t)g->c;
    /* the LINEAR distances c + j, exact (|c + j| <= 2^24), carried in a register from one
     * vector to the next */
    vf_t d = vf_add(vf_set1((float)(c + (int64_t)j)), vf_iota());
    POSENC_I_UNROLL
    for (; j + POSENC_I_FLANES <= end; j += POSENC_I_FLANES, d = vf_add(d, vf_set1((float)POSENC_I_FLANES)))
      POSENC_I_K(do_vec)(row + j * es, keep ? keep + j : NULL, dt, kind, a, d, POSENC_I_K(vals)(g, kind, j - start));
  }
  if (j < end) POSENC_I_K(do_part)(job, g, j, end - j, start, dt, kind);
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
#  define POSENC_I_SIMD_SUMSQ posenc_i_scalar_sumsq   /* QK-norm's sums, of subnormal values too */
#  define POSENC_I_SIMD_CONVERT posenc_i_scalar_convert /* an f32 subnormal copied to f16 or bf16 */
#  define POSENC_I_SIMD_ADD_FWD posenc_i_scalar_add_fwd  /* the masked add: likewise (x*scale + P can be subnormal) */
#  define POSENC_I_SIMD_ADD_BWD posenc_i_scalar_add_bwd
#  define POSENC_I_SIMD_ADD_SINUS posenc_i_scalar_add_sinus
#  define POSENC_I_SIMD_BIAS_ROW posenc_i_scalar_bias_row /* and the bias add */
#else
#  define POSENC_I_SIMD_ROTATE POSENC_I_K(rotate)
#  define POSENC_I_SIMD_SUMSQ POSENC_I_K(sumsq)
#  define POSENC_I_SIMD_CONVERT POSENC_I_K(convert)
#  define POSENC_I_SIMD_ADD_FWD POSENC_I_K(add_fwd)
#  define POSENC_I_SIMD_ADD_BWD POSENC_I_K(add_bwd)
#  define POSENC_I_SIMD_ADD_SINUS POSENC_I_K(add_sinus)
#  define POSENC_I_SIMD_BIAS_ROW POSENC_I_K(bias_row)
#endif

extern const posenc_i_backend POSENC_I_SIMD_BACKEND;
const posenc_i_backend POSENC_I_SIMD_BACKEND = {POSENC_I_SIMD_ISA, POSENC_I_K(sincos_rows), POSENC_I_SIMD_ROTATE,
                                                 POSENC_I_SIMD_SUMSQ, POSENC_I_K(to_f32), POSENC_I_K(gptj_expand),
                                                 POSENC_I_SIMD_CONVERT, POSENC_I_SIMD_ADD_FWD, POSENC_I_SIMD_ADD_BWD,
                                                 POSENC_I_SIMD_ADD_SINUS, POSENC_I_SIMD_BIAS_ROW, POSENC_I_SIMD_ROPE_FLY,
                                                 POSENC_I_K(fence)};

#ifdef __cplusplus
}
#endif

/* the vocabulary's names are this file's own */
#undef vd_t
#undef vf_t
#undef vfh_t
#undef vi_t
#undef vh_t
#undef vdm_t
#undef vfm_t
#undef vhm_t
#undef vd_set1
#undef vd_zero
#undef vd_loadu
#undef vd_storeu
#undef vd_from_lo
#undef vd_from_hi
#undef vd_add
#undef vd_sub
#undef vd_mul
#undef vd_xor
#undef vd_bits
#undef vd_from_bits
#undef vd_cvt
#undef vd_sel
#undef vd_odd
#undef vl_set1
#undef vl_add
#undef vl_slli
#undef vf_set1
#undef vf_loadu
#undef vf_storeu
#undef vf_stream
#undef vf_stream16
#undef vf_add
#undef vf_sub
#undef vf_mul
#undef vf_xor
#undef vf_bits
#undef vf_from_bits
#undef vf_iota
#undef vf_isnan
#undef vf_sel
#undef vf_zero_where
#undef vf_swap_pairs
#undef vfh_zip
#undef vfh_cat
#undef vfh_loadu
#undef vi_set1
#undef vi_zero
#undef vi_iota
#undef vi_loadu
#undef vi_add
#undef vi_and
#undef vi_or
#undef vi_xor
#undef vi_srli
#undef vi_slli
#undef vi_storeu
#undef vi_mul
#undef vi_gt
#undef vi_sel
#undef vi_hi16
#undef vh_widen_hi
#undef vh_loadu
#undef vh_storeu
#undef vh_stream
#undef vh_stream16
#undef vh_set1
#undef vh_sel
#undef vh_to_f32
#undef vf_to_f16
#undef vfm_keep0
#undef vhm_keep0
#undef v_sfence
#undef v_prefetch
#undef POSENC_I_MM
#undef POSENC_I_ROWS_CARRY_SCALAR
#undef POSENC_I_BF16_EVEN_ODD

#if defined(__GNUC__)
#  pragma GCC diagnostic pop
#endif
POSENC_I_PRECISE_END

#endif /* POSENC_I_SIMD_ISA */

#endif /* a backend already instantiated in this file */
