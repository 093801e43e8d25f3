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
 *   - Every backend (scalar, SSE2, AVX2, AVX-512, AVX-512 BF16, NEON, WebAssembly SIMD128)
 *     returns the same bits for the same input.
 *   - sin/cos tables are within 0.5 ulp(f32) + 1e-12 of the exact real value
 *     sin(p * base^(-2i/d)) for every |p| < 2^31 (see posenc_sinusoidal_table).
 *   - Bad input returns an error code; nothing is written then. Kernels never allocate,
 *     print or abort.
 *
 * License: MIT (see LICENSE).
 */

/* Contents (search for the quoted text or the name):
 *
 * API (this part is all most readers need)
 *   "Status codes"                 posenc_status, posenc_strerror
 *   "Buffers, in every call"       alignment, aliasing (ERR_ALIAS) and descriptor rules
 *   "Storage types"                posenc_dtype, f16/bf16 conversions
 *   "Sinusoidal absolute encodings"  posenc_sinusoidal_table, posenc_sinusoidal_rows
 *   "Rotary position embedding"    posenc_rope_init, posenc_rope_cache_table, posenc_rope_apply
 *   "Absolute encodings end to end"  posenc_embed_forward, _backward, posenc_embed_positions
 *   "learnable tables"             posenc_learned_init, posenc_table_resize
 *   "index encodings"              posenc_index_table
 *   "2-D sin-cos"                  posenc_sincos_2d
 *   "spectrum of a table"          posenc_spectrum
 *   ".npy headers"                 posenc_npy_parse, posenc_npy_header
 *   "Position biases inside attention"  score tiles and masks (posenc_mask_apply), ALiBi, T5,
 *                                  DeBERTa, Transformer-XL (posenc_txl_relative)
 *   "Position-dependent attention scales"  posenc_logn_scale, posenc_yarn_mscale, ...
 *   "Backends and dispatch"        posenc_isa, POSENC_I_ISA_TABLE, posenc_isa_set, posenc_selftest
 *   then the internal interface    the job structs and posenc_i_backend that posenc_simd.h uses
 *
 * Implementation (POSENC_IMPLEMENTATION), in dependency order
 *   "Implementation, 1: primitives"  bits, f16/bf16, double-double (posenc_i_dd_*), hashes
 *                                  (posenc_i_mix64), sizes and overlap of strided views
 *                                  (posenc_i_extent, posenc_i_strided_extent,
 *                                  posenc_i_ranges_meet), the exact angle (posenc_i_exact_sincos)
 *   "Implementation, 2: the scalar reference kernels"  posenc_i_scalar_sincos_rows, _rotate,
 *                                  _rope_fly, _to_f32, _add_fwd, _add_bwd, _add_sinus, _bias_row
 *                                  (posenc_simd.h mirrors)
 *   "Implementation, 3: dispatch"  posenc_i_backend_scalar, posenc_i_backends, CPU detection,
 *                                  posenc_i_select
 *   "Implementation, 4: features"  sinusoidal tables; RoPE (frequencies, cos/sin rows,
 *                                  rotation); masked add (dropout keys, positions, validation,
 *                                  drivers); learnable tables, index encodings, 2-D sin-cos;
 *                                  spectrum; .npy headers; position biases (score tiles, ALiBi,
 *                                  T5, DeBERTa, Transformer-XL); attention scales
 *   "Implementation, 5: self-test"  posenc_selftest
 */
/* <windows.h> (minwindef.h) defines near and far as nothing: a T5 plan's field is named near.
 * Saved here and given back at the end of this file, whatever was included first. */
#if defined(near)
#  pragma push_macro("near")
#  undef near
#  define POSENC_I_NEAR_SAVED
#endif

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
  POSENC_ERR_SIZE = -2,      /* a size or count is zero, or two that must agree do not (an output's heads and
                              * its input's), or a .npy rank above 4 */
  POSENC_ERR_OVERFLOW = -3,  /* size arithmetic would overflow size_t */
  POSENC_ERR_BUFFER = -4,    /* the output buffer is smaller than the result; a rope's storage is too small
                              * or not aligned for double */
  POSENC_ERR_LAYOUT = -5,    /* unknown layout */
  POSENC_ERR_DTYPE = -6,     /* unknown dtype, or one the call does not take (a bf16 score tile) */
  POSENC_ERR_BASE = -7,      /* base is not finite or not in [1e-30, 1e30] */
  POSENC_ERR_POSITION = -8,  /* a position is out of range: past a cache, past INT32_MAX, or too far */
  POSENC_ERR_STRIDE = -9,    /* a row stride is smaller than a row */
  POSENC_ERR_ISA = -10,      /* that ISA is unknown, not compiled in, or not supported by this CPU */
  POSENC_ERR_SELFTEST = -11, /* the active backend does not reproduce the embedded goldens */
  POSENC_ERR_DIM = -12,      /* a dimension is invalid: odd rotary dim, rotary dim > head dim, odd bucket count, ...;
                              * or a rope copied or moved from where posenc_rope_init made it */
  POSENC_ERR_PARAM = -13,    /* a parameter is not finite or out of its range (factor, beta, ...) */
  POSENC_ERR_ALIAS = -14,    /* buffers overlap, or strides make a tensor overlap itself */
  POSENC_ERR_PADDING = -15,  /* a padding id or padding row is out of range of the table */
  POSENC_ERR_FORMAT = -16,   /* malformed serialized data (a .npy header) */
  POSENC_ERR_TABLE = -17,    /* a table is too small for its configuration (bias rows < buckets) */
  POSENC_ERR_SUBNORMAL = -18 /* self-test: only subnormal values differ (FTZ/DAZ); normal values exact */
} posenc_status;

/* A short static message for status ("unknown status" for a value not listed above). */
POSENC_API const char *posenc_strerror(posenc_status status);

/* ---------------------------------------------------------------------------------------------
 * Buffers, in every call:
 *  - No input overlaps an output. A descriptor struct passed by pointer (params, configs, table,
 *    tensor, tile and cache views, plans) is either read whole before anything is written, so it
 *    may lie anywhere, even inside an output, or refused with ERR_ALIAS where it lies inside one
 *    (the functions that re-read a struct while writing: rope_apply, rope_cache_*, the masked
 *    add, t5_bias_add, embed_positions; each function's comment says so). Every array a struct
 *    points to that meets an output is ERR_ALIAS. A result is never computed from input that the
 *    call itself has half overwritten.
 *  - Element data passed as void * (tables, tensors, caches, score tiles, .npy bytes) may start at
 *    any byte address: posenc moves it with memcpy or unaligned vector loads and stores. On a core
 *    that traps unaligned word accesses, build with the compiler's option that keeps memcpy
 *    byte-wise (GCC: -mno-unaligned-access). Arrays of a C type (int32_t *, float *, double *,
 *    size_t *) must be aligned as C requires.
 *  - A struct that posenc initialises (posenc_rope, posenc_t5_plan) must come from its init call,
 *    and a rope must stay where its init made it (a copy or a move is refused: ERR_DIM). The fields a kernel switches on or indexes with (style, scaling, mrope and its sections,
 *    hf_compat, pair count, dims; a plan's buckets) are checked where the struct is used, and
 *    garbage there is refused (ERR_DIM, ERR_PARAM) before any kernel runs; the values init
 *    computed (frequencies, an attention factor within (0, 1e30]) are trusted.
 * ------------------------------------------------------------------------------------------- */

/* Storage types. Arithmetic is always done in (at least) f32; f16 and bf16 outputs are the
 * round-to-nearest-even conversion of the f32 result. */
typedef enum posenc_dtype {
  POSENC_DTYPE_F32 = 0,
  POSENC_DTYPE_F16 = 1,  /* IEEE binary16 */
  POSENC_DTYPE_BF16 = 2  /* bfloat16: the top 16 bits of an f32 */
} posenc_dtype;

POSENC_API size_t posenc_dtype_size(posenc_dtype dtype);  /* 0 for an unknown dtype */
POSENC_API const char *posenc_dtype_name(posenc_dtype dtype);  /* "f32", "f16", "bf16"; else "unknown" */
POSENC_API uint16_t posenc_f32_to_f16(float x);  /* round to nearest even */
POSENC_API float posenc_f16_to_f32(uint16_t h);  /* exact */
POSENC_API uint16_t posenc_f32_to_bf16(float x); /* round to nearest even; NaN stays NaN */
POSENC_API float posenc_bf16_to_f32(uint16_t h);  /* exact */

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
 * Frequency rules (params.freqs), h = number of frequencies (ceil(d/2) interleaved, floor(d/2) split):
 *   VASWANI (default): omega_i = base^(-2i/d)
 *   FAIRSEQ:           omega_i = base^(-i/(h-1))       (the last frequency is exactly 1/base;
 *                      fairseq get_embedding; needs h >= 2, else ERR_DIM where fairseq divides by 0)
 *   T2T:               omega_i = m * (base/m)^(-i/max(h-1, 1)), m = min_timescale (0 means 1),
 *                      base = max_timescale (tensor2tensor get_timing_signal_1d: it multiplies by
 *                      min_timescale where the paper divides; identical for the default 1)
 *   Use them with POSENC_LAYOUT_SPLIT to get fairseq's and tensor2tensor's [sin | cos] tables.
 *   The accuracy statement holds for each rule's exact real omega_i.
 *
 * Determinism: a value depends only on (p, i, d, base, rule): a range, a list of positions, another
 * start, a split of the rows across threads, and every backend give the same bits.
 * ------------------------------------------------------------------------------------------- */
typedef enum posenc_layout {
  POSENC_LAYOUT_INTERLEAVED = 0,
  POSENC_LAYOUT_SPLIT = 1
} posenc_layout;

typedef enum posenc_freq_rule {
  POSENC_FREQ_VASWANI = 0,
  POSENC_FREQ_FAIRSEQ = 1,
  POSENC_FREQ_T2T = 2
} posenc_freq_rule;

typedef struct posenc_sinusoidal_params {
  size_t dim;            /* d: columns of one row, >= 1 */
  double base;           /* 10000 in most models; finite, in [1e-30, 1e30] */
  posenc_layout layout;  /* POSENC_LAYOUT_INTERLEAVED by default */
  posenc_dtype dtype;    /* POSENC_DTYPE_F32 by default */
  size_t row_stride;     /* elements from one row to the next; 0 means dim (dense) */
  posenc_freq_rule freqs;  /* POSENC_FREQ_VASWANI by default */
  double min_timescale;  /* T2T only: 0 means 1; finite, in [1e-30, 1e30] */
} posenc_sinusoidal_params;

/* dim columns, base 10000, interleaved, f32, dense. */
POSENC_API posenc_sinusoidal_params posenc_sinusoidal_default(size_t dim);

/* Bytes that n_rows rows occupy: ((n_rows-1)*row_stride + dim) * dtype size.
 * Errors: NULL, SIZE, OVERFLOW, DTYPE, LAYOUT, STRIDE, PARAM (unknown freqs rule, T2T
 * min_timescale out of range), DIM (FAIRSEQ with fewer than 2 frequencies); base is checked by
 * posenc_sinusoidal_table, not here. */
POSENC_API posenc_status posenc_sinusoidal_bytes(const posenc_sinusoidal_params *params,
                                                 size_t n_rows, size_t *bytes);

/* Rows for positions start, start+1, ..., start+n_rows-1 (start + n_rows - 1 <= INT32_MAX).
 * Errors: NULL (params, out), SIZE (n_rows or dim is 0), OVERFLOW, BUFFER (out_bytes too small),
 * LAYOUT, DTYPE, BASE, STRIDE, PARAM and DIM (as posenc_sinusoidal_bytes), POSITION (last position
 * past INT32_MAX, or |p| * max(omega) >= 2^50, possible only for base < 1). On error nothing is
 * written. */
POSENC_API posenc_status posenc_sinusoidal_table(const posenc_sinusoidal_params *params,
                                                 int32_t start, size_t n_rows,
                                                 void *out, size_t out_bytes);

/* Rows for an explicit list of positions (any order, repeats allowed, negative allowed).
 * Same errors as posenc_sinusoidal_table, plus NULL for positions and ALIAS (out's bytes meet
 * positions). */
POSENC_API posenc_status posenc_sinusoidal_rows(const posenc_sinusoidal_params *params,
                                                const int32_t *positions, size_t n_rows,
                                                void *out, size_t out_bytes);

/* ---------------------------------------------------------------------------------------------
 * Rotary position embedding (RoPE).
 *
 *   omega_i = the variant's frequency of pair i (i < rotary_dim/2); default base^(-2i/rotary_dim)
 *   angle   = p * omega_i, c = A*cos(angle), s = A*sin(angle), A = the attention factor
 *   pair (x0, x1) -> (x0*c - x1*s, x1*c + x0*s)          inverse: s -> -s
 *   NEOX (HF Llama, vLLM is_neox, ggml NEOX): pairs (j, j + rotary_dim/2)
 *   GPTJ (GPT-J, Meta Llama, ggml NORMAL):    pairs (2j, 2j + 1)
 *   Dims at and after rotary_dim pass through unchanged (partial rotary).
 *
 * Usage, the common case:
 *     POSENC_ROPE_STORAGE(128) st;                          a rope for rotary dims up to 128 (4 KiB)
 *     posenc_rope_config cfg = posenc_rope_default(128);     base 10000, NeoX, no scaling
 *     posenc_rope_init(&st.rope, sizeof st, &cfg);
 *     posenc_rope_apply(&st.rope, NULL, &positions, &q, &k, POSENC_ROPE_FORWARD);
 * A rope's state is a header and its frequencies, about 60 bytes a pair: posenc_rope_bytes(cfg)
 * (2.1 KiB for rotary dim 64, 15 KiB for 512), in storage the caller provides (the stack, static,
 * malloc). Init once per model, then share it read-only between threads.
 *
 * Accuracy (default mode): a cos/sin value is within 0.5 ulp(f32) + 1e-12 of A*cos(p*omega_i)
 * computed in real arithmetic from the variant's real-valued omega_i, for |p| < 2^31, the
 * same primitive as the sinusoidal tables (at most 3.0e-8 absolute for A <= 1). f16/bf16 add
 * their own rounding. A rotated f32 value is within 2^-22 * (|x0| + |x1|) * max(1, A) of the exact
 * rotation of the stored inputs by the exact angle.
 * HF float32 compatibility mode (hf_compat = 1) instead follows Hugging Face's float32 recipe:
 * inv_freq in float32 with HF's operations (pow taken as correctly rounded), angle =
 * fl32(fl32(p) * inv_freq), c = the correctly rounded cos of that float angle (times fl32(A) in
 * float32). How close that is to a given PyTorch build depends on its float32 pow and cos
 * (README: measured figures against NumPy).
 * ------------------------------------------------------------------------------------------- */
#if defined(POSENC_ROPE_MAX_DIM) && POSENC_ROPE_MAX_DIM != 512
#error "POSENC_ROPE_MAX_DIM is no longer configurable: a rope's storage is sized to its rotary dim (posenc_rope_bytes)"
#endif
#undef POSENC_ROPE_MAX_DIM
#define POSENC_ROPE_MAX_DIM 512  /* the largest rotary_dim posenc_rope_init accepts */

typedef enum posenc_rope_style {
  POSENC_ROPE_NEOX = 0,  /* half split: (j, j + d/2) */
  POSENC_ROPE_GPTJ = 1   /* interleaved: (2j, 2j + 1) */
} posenc_rope_style;

typedef enum posenc_rope_scaling {
  POSENC_ROPE_SCALING_NONE = 0,
  POSENC_ROPE_SCALING_LINEAR = 1,   /* position interpolation: omega / factor */
  POSENC_ROPE_SCALING_NTK = 2,      /* static NTK: base * factor^(d/(d-2)) */
  POSENC_ROPE_SCALING_DYNAMIC = 3,  /* HF dynamic NTK from seq_len (or Qwen's alpha rule) */
  POSENC_ROPE_SCALING_YARN = 4,
  POSENC_ROPE_SCALING_LLAMA3 = 5,
  POSENC_ROPE_SCALING_LONGROPE = 6
} posenc_rope_scaling;

typedef enum posenc_rope_mrope {
  POSENC_ROPE_MROPE_NONE = 0,
  POSENC_ROPE_MROPE_SECTIONS = 1,    /* Qwen2-VL: pairs [0,s0) use t, [s0,s0+s1) h, the rest w */
  POSENC_ROPE_MROPE_INTERLEAVED = 2  /* Qwen3-VL: h if j%3==1 && j<3*s1, w if j%3==2 && j<3*s2, else t */
} posenc_rope_mrope;

/* Zero (or NULL) in an optional field selects the documented default. Fields a variant does not
 * use are ignored. */
typedef struct posenc_rope_config {
  size_t head_dim;               /* D: elements per head, >= 2 */
  size_t rotary_dim;             /* d: even, <= head_dim and POSENC_ROPE_MAX_DIM (512); 0 = head_dim */
  double base;                   /* rope_theta; finite, in [1e-30, 1e30] */
  posenc_rope_style style;
  posenc_rope_scaling scaling;
  double factor;                 /* s > 0 (linear, ntk, dynamic, yarn, llama3, longrope) */
  uint32_t original_max_pos;     /* L: yarn, llama3, longrope; dynamic: HF's max_position_embeddings */
  uint32_t seq_len;              /* dynamic, longrope: max position + 1 of the sequence (0: L) */
  int dynamic_qwen_alpha;        /* dynamic: Qwen's rule base * alpha^(d/(d-2)), alpha = 2^ceil(log2(seq/L)+1)-1 */
  double beta_fast, beta_slow;   /* yarn: 0 means 32 and 1 (HF: `get(...) or default`) */
  int yarn_no_truncate;          /* yarn: 1 keeps the correction range unrounded (gpt-oss) */
  double mscale, mscale_all_dim; /* yarn (DeepSeek): both nonzero: A = mscale(s,m)/mscale(s,m_all) */
  double low_freq_factor;        /* llama3: 0 means 1 */
  double high_freq_factor;       /* llama3: 0 means 4 */
  const float *short_factor;     /* longrope: d/2 factors used while seq_len <= L */
  const float *long_factor;      /* longrope: d/2 factors used when seq_len > L */
  const float *freq_factors;     /* optional, any variant (ggml rope_freqs): omega_i / ff[i] */
  double attention_factor;       /* A; 0: the variant's own (yarn, longrope), else 1 */
  posenc_rope_mrope mrope;
  uint32_t mrope_section[3];     /* t, h, w pair counts */
  int hf_compat;                 /* 1: reproduce HF's float32 inv_freq and angle (see above) */
} posenc_rope_config;

/* ggml's RoPE parameters, as ggml_rope_ext (and ggml_rope_multi) take them; llama.cpp fills
 * them from its hparams (formulas.md section 2). */
typedef struct posenc_ggml_rope_params {
  int mode;                  /* GGML_ROPE_TYPE_NORMAL 0 (GPT-J pairs), NEOX 2, MROPE 8, IMROPE 40 */
  size_t head_dim;           /* ne0 of the tensor */
  int n_dims;                /* the rotated elements, from the start of the head */
  int n_ctx_orig;            /* YaRN's original context (used when ext_factor != 0) */
  float freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow;
  const float *freq_factors; /* ggml's optional c tensor (rope_freqs, LongRoPE factors), or NULL */
  int sections[4];           /* MROPE/IMROPE: t, h, w pair counts (the 4th must be 0) */
} posenc_ggml_rope_params;

/* The posenc config that computes what ggml's CPU rope computes (with exact arithmetic where
 * ggml uses float32 cosf/sinf and repeated products). ggml's parameters differ from posenc's in
 * meaning, not only in name:
 *   - freq_scale is 1/factor. ext_factor 0 is linear scaling (none if freq_scale is 1); ext_factor
 *     1 is YaRN with factor 1/freq_scale, original_max_pos n_ctx_orig and ggml's betas;
 *   - attn_factor multiplies the variant's magnitude: with YaRN, ggml applies
 *     attn_factor * (1 + 0.1 ln(1/freq_scale)), where posenc's attention_factor replaces the
 *     magnitude; the config gets that product;
 *   - ggml's beta_fast 0 puts every pair past the correction range, so YaRN then interpolates no
 *     frequency (only the magnitude applies): the config is unscaled, with that magnitude. posenc's
 *     0 means HF's default, 32;
 *   - IMROPE (40): a pair outside the three interleaved runs (j%3 == 1 and j >= 3*s1, j%3 == 2 and
 *     j >= 3*s2, j%3 == 0 and j >= 3*s0; Qwen3-VL's [24, 20, 20]: pairs 61 and 62) turns by ggml's
 *     4th position plane, by t in posenc (as in HF). llama.cpp sets that plane to the position for
 *     text tokens, where the two agree, and to 0 for image tokens, where those pairs differ.
 * ggml computes YaRN's correction range in float32, posenc in double: a bound within float
 * rounding of an integer may round to another pair. Errors: NULL, DIM (head_dim < 2, n_dims odd,
 * <= 0 or > head_dim), PARAM (mode VISION or unknown, ext_factor other than 0 and 1, with YaRN
 * beta_slow 0 while beta_fast is not, or n_ctx_orig <= 0; freq_scale or attn_factor not finite or
 * <= 0; M-RoPE sections negative or a 4th section); the values are checked again by
 * posenc_rope_init. On error *config is untouched. */
POSENC_API posenc_status posenc_rope_config_from_ggml(const posenc_ggml_rope_params *ggml, posenc_rope_config *config);

/* A rope: this header, followed in the same storage by the frequencies of its rotary_dim
 * (posenc_rope_bytes). Read-only after posenc_rope_init. It stays where init made it: a copy or
 * a move (of the header or of the whole storage) is refused by every call as ERR_DIM; init the
 * new place instead. */
typedef struct posenc_rope {
  posenc_rope_config config;     /* a copy; the factor pointers are read again only by set_seq_len */
  size_t pairs;                  /* rotary_dim / 2 */
  double attention_factor;       /* A, as applied */
  double max_omega;              /* internal: the largest frequency the kernels use (the reach check) */
  size_t storage_bytes;          /* internal: the storage init was given */
  const void *self;              /* internal: where init made it */
} posenc_rope;

/* Bytes of storage for a rope of rotary dims up to d (even, <= POSENC_ROPE_MAX_DIM), as a
 * constant expression: the header, rounded to 16 bytes, then per pair (rounded up to 16 pairs,
 * the kernels' chunk) the exact reduction's 4 parts, the step's sin and cos, omega in double and
 * HF's float32 omega. A multiple of 16, so that ropes laid back to back in one 16-byte-aligned
 * block (malloc's) are each aligned. posenc_rope_bytes gives the same for a config. d becomes a
 * size_t by a cast (without one, an int d warns under -Wsign-conversion): in C++11 and later, one
 * inside a constexpr template, since the user's -Wuseless-cast flags static_cast<size_t> of a
 * size_t d written in their code, and -Wold-style-cast flags a C cast; before C++11, static_cast;
 * in C, a C cast. */
#if defined(__cplusplus) && __cplusplus >= 201103L
extern "C++" { template <typename T> constexpr size_t posenc_i_as_size(T x) { return static_cast<size_t>(x); } }
#  define POSENC_I_AS_SIZE(x) posenc_i_as_size(x)
#elif defined(__cplusplus)
#  define POSENC_I_AS_SIZE(x) static_cast<size_t>(x)
#else
#  define POSENC_I_AS_SIZE(x) ((size_t)(x))
#endif
#define POSENC_ROPE_BYTES(d) \
  (((sizeof(posenc_rope) + 15) / 16) * 16 + \
   ((POSENC_I_AS_SIZE(d) / 2 + 15) / 16) * 16 * (7 * sizeof(double) + sizeof(float)))
/* An anonymous union type holding a rope of rotary dims up to d, aligned for it: declare one on
 * the stack or static, and pass &x.rope and sizeof x to posenc_rope_init. */
#define POSENC_ROPE_STORAGE(d) \
  union { posenc_rope rope; double storage_[POSENC_ROPE_BYTES(d) / sizeof(double)]; }

/* head_dim, base 10000, NeoX, no scaling, rotary_dim = head_dim. */
POSENC_API posenc_rope_config posenc_rope_default(size_t head_dim);

/* The bytes a rope for this config needs (POSENC_ROPE_BYTES of its rotary dim). Errors: those of
 * posenc_rope_init's config checks (NULL, DIM, BASE, PARAM); on error *bytes is untouched. */
POSENC_API posenc_status posenc_rope_bytes(const posenc_rope_config *config, size_t *bytes);

/* Computes the frequencies and the attention factor into rope_bytes of storage at rope (aligned
 * for a double). Errors: NULL (rope, config, or a LongRoPE factor list), BUFFER (rope_bytes below
 * posenc_rope_bytes(config), or rope not aligned for a double), DIM (head_dim < 2, odd
 * rotary_dim, rotary_dim > head_dim or > POSENC_ROPE_MAX_DIM, NTK/dynamic with rotary_dim 2,
 * M-RoPE sections that do not sum to rotary_dim/2), BASE, PARAM (factor or a factor list value
 * outside [1e-30, 1e30] or NaN, L = 0 where needed or L < 2 for LongRoPE, negative betas, llama3
 * high_freq_factor <= low_freq_factor, an attention factor negative or above 1e30, unknown enums,
 * freq_factors with hf_compat; hf_compat: a rescaled base that is not a normal float32, or float32
 * frequencies that overflow, as from a base far below 1; derived values: YaRN with base 1, where
 * HF divides by ln(base) = 0, or a YaRN/LongRoPE attention factor outside [1e-30, 1e30], as from
 * mscale 1e300), ALIAS (a factor list inside the storage). YaRN without truncation: the ramp
 * bounds are HF's correction dims rounded to double (as HF's Python floats are); the rest is
 * exact. On error the storage is untouched. */
POSENC_API posenc_status posenc_rope_init(posenc_rope *rope, size_t rope_bytes, const posenc_rope_config *config);

/* The rope's frequencies omega_i, i < pairs, rounded to double (for display: the kernels use
 * them in exact parts), and with hf_compat HF's float32 ones (NULL otherwise). NULL for a NULL
 * rope or one posenc_rope_init did not make. */
POSENC_API const double *posenc_rope_inv_freq(const posenc_rope *rope);
POSENC_API const float *posenc_rope_inv_freq_f32(const posenc_rope *rope);

/* Dynamic NTK and LongRoPE depend on the sequence length (HF: max(position_ids) + 1). Recomputes
 * the frequencies for seq_len in the rope's storage; the config's factor lists must still be
 * valid. Keys already in a KV cache keep their old rotation: that is HF's behaviour too
 * (transformers #25104). Errors: NULL (rope), DIM (a rope posenc_rope_init did not make), and
 * those of posenc_rope_init; on error *rope is untouched. */
POSENC_API posenc_status posenc_rope_set_seq_len(posenc_rope *rope, uint32_t seq_len);

/* ---- cos/sin caches ------------------------------------------------------------------------ */
typedef enum posenc_rope_cache_layout {
  POSENC_ROPE_CACHE_HALF = 0,        /* [cos(h) | sin(h)], h = d/2: vLLM's cos_sin_cache */
  POSENC_ROPE_CACHE_FULL = 1,        /* [cos(h) cos(h) | sin(h) sin(h)]: HF's cos and sin rows */
  POSENC_ROPE_CACHE_INTERLEAVED = 2  /* [cos0 sin0 cos1 sin1 ...]: complex (Meta's freqs_cis) */
} posenc_rope_cache_layout;

typedef struct posenc_rope_cache_spec {
  posenc_rope_cache_layout layout;
  posenc_dtype dtype;
  size_t row_stride;              /* elements; 0: dense (the row width) */
} posenc_rope_cache_spec;

/* Row width in elements: 2h (HALF, INTERLEAVED) or 4h (FULL); 0 for a NULL rope, a rope
 * posenc_rope_init did not make, or an unknown layout. */
POSENC_API size_t posenc_rope_cache_width(const posenc_rope *rope, posenc_rope_cache_layout layout);
/* Errors: NULL, SIZE (n_rows 0), OVERFLOW, LAYOUT, DTYPE, STRIDE, DIM (a rope posenc_rope_init
 * did not make). */
POSENC_API posenc_status posenc_rope_cache_bytes(const posenc_rope *rope, const posenc_rope_cache_spec *spec,
                                                 size_t n_rows, size_t *bytes);
/* Rows for positions start .. start+n_rows-1, or for a list. Errors, nothing written: those of
 * _bytes, NULL (out; positions for _rows), BUFFER, POSITION (past INT32_MAX, or |p| * omega
 * beyond 2^50 quarter turns), ALIAS (out's bytes meet *rope or *spec; _rows: or positions). */
POSENC_API posenc_status posenc_rope_cache_table(const posenc_rope *rope, const posenc_rope_cache_spec *spec,
                                                 int32_t start, size_t n_rows, void *out, size_t out_bytes);
POSENC_API posenc_status posenc_rope_cache_rows(const posenc_rope *rope, const posenc_rope_cache_spec *spec,
                                                const int32_t *positions, size_t n_rows,
                                                void *out, size_t out_bytes);

/* A cache handed to posenc_rope_apply: a token whose position is r rotates by row r, for
 * r < n_rows. From posenc_rope_cache_table at start 0, row r holds position r. Rows of
 * posenc_rope_cache_rows for a step's positions, with ids 0 .. n-1 as their indices, let the
 * layers of a decode step share one set of rows (the README's "Decode on the fly across layers";
 * posenc_rope_store_kv then needs its slots given). It must come from a rope with the same
 * frequencies (posenc does not check that). */
typedef struct posenc_rope_cache_view {
  const void *data;
  size_t n_rows;
  posenc_rope_cache_spec spec;
} posenc_rope_cache_view;

/* ---- rotation in place --------------------------------------------------------------------- */
/* A [batch][tokens][heads][head_dim] view: element (b, t, h, e) lives at element index
 * b*batch_stride + t*token_stride + h*head_stride + e of data. Zero strides mean dense:
 * head_stride = head_dim, token_stride = heads*head_stride, batch_stride = tokens*token_stride.
 * [batch, seq, heads, dim] is the dense default; [batch, heads, seq, dim] is
 * head_stride = seq*head_dim, token_stride = head_dim, batch_stride = heads*seq*head_dim.
 * The defaults follow `heads`: a view of some of a tensor's heads (a thread's share) must give
 * the whole tensor's strides, or it describes a smaller dense tensor (posenc cannot tell). */
typedef struct posenc_rope_tensor {
  void *data;
  posenc_dtype dtype;              /* storage; arithmetic is f32 */
  size_t heads;
  size_t batch_stride, token_stride, head_stride;
} posenc_rope_tensor;

/* One position per token. ids: batch*tokens values, row-major; NULL: start + t in every batch
 * row (a prefill after a KV offset of start; decode is tokens = 1). M-RoPE: ids holds three
 * planes [t | h | w] of batch*tokens each (NULL: all three are start + t, text tokens). */
typedef struct posenc_rope_positions {
  size_t batch, tokens;
  const int32_t *ids;
  int32_t start;
} posenc_rope_positions;

typedef enum posenc_rope_direction {
  POSENC_ROPE_FORWARD = 0,
  POSENC_ROPE_INVERSE = 1   /* the transpose, A*R(-angle): the backward pass; with A = 1 it undoes
                               FORWARD (A != 1: inverse(forward(x)) = A^2 x) */
} posenc_rope_direction;

/* Rotates q and k (k may be NULL; Q and K may have different head counts, GQA) in place. cache
 * NULL: cos/sin are computed on the fly, once per token and reused across heads (no memory
 * but the struct); else read from the cache. Both give the same bits, on every backend, except
 * that a NaN output's sign and payload may differ (a pair holding NaNs of both signs, or Inf).
 * Positions: on the fly, any int32 position; a negative one rotates by the negative angle (as
 * llama.cpp's K-shift does after a context shift), so FORWARD at -p is INVERSE at p. With a
 * cache, a position r rotates by its row r: a position must be in [0, n_rows). A call whose
 * tensors are 4 MiB or more in all (POSENC_PREFETCH_MIN_BYTES) asks for each next token's cache
 * lines while it rotates a token's, as do posenc_rope_apply_out and the store_kv calls.
 * Errors: NULL, SIZE (batch, tokens, heads or the cache's n_rows 0), DIM, DTYPE, LAYOUT, STRIDE
 * (the cache's), OVERFLOW, PARAM (unknown direction), POSITION (with a cache: a position < 0 or
 * >= its n_rows; start + tokens - 1 past INT32_MAX; on the fly: |p| * omega beyond 2^50 quarter
 * turns), ALIAS (q and k overlap, a tensor
 * overlaps itself, q or k overlaps the cache, the ids, or the *rope, *positions or *cache structs).
 * On error nothing is written. */
POSENC_API posenc_status posenc_rope_apply(const posenc_rope *rope, const posenc_rope_cache_view *cache,
                                           const posenc_rope_positions *positions,
                                           const posenc_rope_tensor *q, const posenc_rope_tensor *k,
                                           posenc_rope_direction direction);

/* Out of place: rotates q_in into q_out (and k_in into k_out; both NULL or neither), each tensor
 * with its own dtype and strides, as an engine rotates its f32 activations into an f16 or bf16
 * buffer in the same pass. An output needs its input's head count; elements past rotary_dim are
 * copied, converted. Values are those of converting the input to f32, rotating in f32 as
 * posenc_rope_apply does and rounding to the output's dtype once, so an f32 input gives the bits
 * of rotating it in place and then converting. An output may be its input (the same memory,
 * dtype and strides: in place), else it must not overlap it; nothing written may overlap what
 * the other rotation reads or writes (Q and K may share a fused buffer's rows, as in place).
 * An output of 4 MiB or more (POSENC_STREAM_MIN_BYTES) is written with non-temporal stores,
 * fenced before the call returns, which bypass the caches, where every store can be one: rotary_dim
 * = head_dim, a multiple of 32; heads and head stride 16-byte aligned (malloc's alignment); a
 * backend with 16-byte stores of its dtype (AVX2, AVX-512; SSE2 for f32). Else ordinary stores.
 * Errors: those of posenc_rope_apply, and NULL (q_out; k_in without k_out or the reverse), SIZE
 * (an output's heads differ from its input's), ALIAS (an output overlapping its input without
 * being it, or the other tensors). On error nothing is written. */
POSENC_API posenc_status posenc_rope_apply_out(const posenc_rope *rope, const posenc_rope_cache_view *cache,
                                               const posenc_rope_positions *positions,
                                               const posenc_rope_tensor *q_in, const posenc_rope_tensor *q_out,
                                               const posenc_rope_tensor *k_in, const posenc_rope_tensor *k_out,
                                               posenc_rope_direction direction);

/* A KV cache's storage, as posenc_rope_store_kv writes it: a slot per cached token holding
 * `heads` rows of head_dim elements, K in one array and V in another with the same layout.
 * Slots come in blocks of block_size (vLLM's paged cache; 0: one run of n_slots slots, as
 * llama.cpp's per-layer K and V). Slot s is slot s % block_size of block s / block_size.
 * Strides are in elements, 0 for the dense defaults: head_stride head_dim, slot_stride
 * heads*head_dim, block_stride one block's extent, (block_size-1)*slot_stride +
 * (heads-1)*head_stride + head_dim. So [block][slot][head][dim] (vLLM's flash layout) is the
 * default, and [block][head][slot][dim] is head_stride block_size*head_dim, slot_stride head_dim. */
typedef struct posenc_kv_cache {
  void *k;                   /* K's storage */
  void *v;                   /* V's, or NULL (K only) */
  posenc_dtype dtype;        /* of both */
  size_t heads;              /* KV heads: K's and V's head count */
  size_t n_slots;            /* slots in each array (a multiple of block_size) */
  size_t block_size;         /* slots per block; 0: none */
  size_t head_stride, slot_stride, block_stride;  /* as for tensors: a share of the heads gives them */
} posenc_kv_cache;

/* Rotate-and-store, as an engine's attention step writes its KV cache: Q rotated in place (q may
 * be NULL), K rotated into kv->k and V (v, with kv->v; both or neither) copied into kv->v, each
 * token into its slot, converted to the cache's dtype, in one pass; cos/sin are made once per
 * token for Q and K. slots: one per token (batch*tokens, row-major), the slot its K and V go to,
 * negative to skip the token (padding, vLLM's -1 in slot_mapping; its Q is still rotated); NULL:
 * the token's position (batch 1, no M-RoPE: a contiguous cache indexed by position; with a cache
 * of a step's rows, whose ids are row indices, give the slots, or K and V go to those). Always the
 * forward rotation. K's values are posenc_rope_apply_out's; V's are converted by the same
 * rounding. A slot given twice receives the last token's. The cache arrays must not overlap each
 * other, the inputs, ids, slots, or the rope, positions and cache structs; Q must not overlap the
 * slots. K of 4 MiB or more (a prefill) goes into the cache with non-temporal stores under
 * posenc_rope_apply_out's conditions; V with ordinary stores.
 * Errors: those of posenc_rope_apply, and NULL (kv, k, kv->k; v without kv->v or the reverse),
 * SIZE (n_slots 0, block_size not dividing n_slots, kv->heads not K's or V's head count), DTYPE,
 * STRIDE (a cache stride that makes slots or heads overlap), OVERFLOW, PARAM (slots NULL with
 * batch > 1 or M-RoPE), POSITION (a slot >= n_slots; slots NULL: a position < 0 or >= n_slots),
 * ALIAS. On error nothing is written. */
POSENC_API posenc_status posenc_rope_store_kv(const posenc_rope *rope, const posenc_rope_cache_view *cache,
                                              const posenc_rope_positions *positions, const posenc_rope_tensor *q,
                                              const posenc_rope_tensor *k, const posenc_rope_tensor *v,
                                              const posenc_kv_cache *kv, const int64_t *slots);

/* ---- QK-norm fused with the rotation ------------------------------------------------------- */
/* A per-head RMSNorm applied to every head of a tensor right before its rotation: Qwen3 and Gemma 3
 * normalise Q and K so, each with a weight of head_dim values shared by the heads (OLMo 2's norm
 * spans all heads at once: not this).
 * Fused, the norm costs no pass over memory of its own. Exactly, for a head's values x_e (its
 * input converted to f32), e < D = head_dim:
 *   a_k = sum of (double)x_e * x_e over e = k (mod 8), in increasing e (k = 0..7, in double)
 *   ss  = ((a_0 + a_4) + (a_2 + a_6)) + ((a_1 + a_5) + (a_3 + a_7))
 *   r   = fl32(1 / sqrt(ss * fl64(1/D) + epsilon)), the root by four Newton steps in double from
 *         an integer estimate (0 when the mean square is infinite)
 *   n_e = fl32(fl32(x_e * r) * w_e),  w_e = weight[e], or fl32(1 + weight[e]) with weight_offset
 * and the head n is rotated as posenc_rope_apply rotates (dims past rotary_dim: n_e), rounded
 * once to the output's dtype. So every backend gives the same bits, and n_e is within 3 ulp of
 * x_e * w_e / sqrt(mean(x^2) + epsilon) where the head's root mean square is below 2^126 and
 * x_e * r is normal (or 0); past 2^126 r is subnormal, with fewer bits, and 0 under FTZ. HF's Qwen3 rounds the normalised head to the model's
 * dtype before the weight (bf16: 2^-9), its Gemma 3 keeps f32 to the end as posenc does. */
typedef struct posenc_rope_norm {
  const float *weight;   /* head_dim values (an engine converts a bf16 weight once, at load) */
  float epsilon;         /* added to the mean square: finite, > 0 (Qwen3 1e-6) */
  int weight_offset;     /* 1: scale by 1 + weight (Gemma's convention); 0: by weight */
} posenc_rope_norm;

/* posenc_rope_apply_out with Q normalised by q_norm and K by k_norm first (either may be NULL: no
 * norm for that tensor); always the forward rotation. An output may be its input (in place).
 * Errors: those of posenc_rope_apply_out, and NULL (a norm's weight; k_norm without k_in), PARAM
 * (epsilon not finite or <= 0, weight_offset not 0 or 1), ALIAS (a weight within the bytes from an
 * output's first element to its last, gaps included). On error nothing is written. */
POSENC_API posenc_status posenc_rope_apply_norm(const posenc_rope *rope, const posenc_rope_cache_view *cache,
                                                const posenc_rope_positions *positions,
                                                const posenc_rope_tensor *q_in, const posenc_rope_tensor *q_out,
                                                const posenc_rope_norm *q_norm,
                                                const posenc_rope_tensor *k_in, const posenc_rope_tensor *k_out,
                                                const posenc_rope_norm *k_norm);

/* posenc_rope_store_kv with Q (in place) normalised by q_norm and K by k_norm before their
 * rotation (either may be NULL); V is stored unnormalised. Errors: those of posenc_rope_store_kv
 * and of posenc_rope_apply_norm's norms (NULL: q_norm without q). */
POSENC_API posenc_status posenc_rope_store_kv_norm(const posenc_rope *rope, const posenc_rope_cache_view *cache,
                                                   const posenc_rope_positions *positions,
                                                   const posenc_rope_tensor *q, const posenc_rope_norm *q_norm,
                                                   const posenc_rope_tensor *k, const posenc_rope_norm *k_norm,
                                                   const posenc_rope_tensor *v, const posenc_kv_cache *kv,
                                                   const int64_t *slots);


/* ---------------------------------------------------------------------------------------------
 * Absolute encodings end to end: position tables, masked add (forward, dropout, backward),
 * learnable tables, 2-D sin-cos, index encodings, spectrum analysis, .npy headers.
 *
 * A position table is n_rows x dim in user memory; row p is position p. The masked add is
 *
 *   y[b,t,:] = (x[b,t,:] * scale + P[pos(b,t),:]) * keep(b,t,:)      in f32, never fused
 *   y[b,t,:] = +0.0                                                  for padding rows
 *
 * with keep = 1 without dropout, else 0 or keep_scale = fl32(1/(1-p)) from a counter-based hash
 * of (seed, b, t, column): the same mask on every backend, for any thread split. x, y and P may
 * each be f32, f16 or bf16 (arithmetic in f32; f16/bf16 results rounded to nearest even once).
 * Exactly: v = fl32(x*scale); v = fl32(v + P); with dropout v = fl32(v*keep); y = v rounded once
 * to y's dtype. Every backend gives the same bits (NaN payloads aside).
 * Error (f32 storage, no dropout): |y - (x*scale + P)| <= ulp(x*scale)/2 + ulp(y)/2 (two
 * roundings, as PyTorch's float32 ops); dropout adds ulp(y)/2 (one more rounding), f16/bf16
 * storage its own rounding (2^-11 / 2^-8 relative). On the sinusoidal source P is the row that
 * posenc_sinusoidal_table writes for config.sinusoidal (its dtype; row_stride is ignored), so P
 * itself is within 0.5 ulp + 1e-12 of the exact sin/cos. NaN or Inf in x or P propagate to those
 * elements of y (a dropped one is v*0: NaN for Inf/NaN, -0.0 for negative v, as PyTorch's x*mask);
 * padding rows are still +0.0; nothing crashes.
 *
 * Dropout hash (reproducible, e.g. in NumPy with uint64/uint32 wrap-around arithmetic):
 *   mix64(z):  z += 0x9E3779B97F4A7C15; z = (z ^ z>>30) * 0xBF58476D1CE4E5B9;
 *              z = (z ^ z>>27) * 0x94D049BB133111EB; return z ^ z>>31        (splitmix64)
 *   key(b, t)  = uint32(mix64(mix64(mix64(seed) ^ b) ^ t) >> 32)             (b, t as uint64)
 *   lowbias32(h): h ^= h>>16; h *= 0x7feb352d; h ^= h>>15; h *= 0x846ca68b; h ^= h>>16
 *   h(b, t, j) = lowbias32(key(b, t) ^ uint32(j * 0x9E3779B9))              (j: column 0..D-1)
 *   dropped iff h < threshold = min(floor(p * 2^32 + 1/2), 2^32 - 1)
 *   keep_scale = (float)(1.0 / (1.0 - p)) in IEEE double; p = 0: no multiply at all.
 * ------------------------------------------------------------------------------------------- */

/* A read-only table view: element (p, j) at index p*row_stride + j of data. */
typedef struct posenc_table {
  const void *data;
  posenc_dtype dtype;
  size_t n_rows, dim;
  size_t row_stride;          /* elements; 0 means dim */
} posenc_table;

/* How positions are derived for token (b, t). */
typedef enum posenc_pos_mode {
  POSENC_POS_RANGE = 0,    /* start + t (start 0: 0..N-1) */
  POSENC_POS_IDS = 1,      /* positions[b*tokens + t] */
  POSENC_POS_FAIRSEQ = 2,  /* fairseq make_positions: real tokens padding_id+1, +2, ... in order;
                              pads use row padding_id (padding_id must be < n_rows) */
  POSENC_POS_CUMSUM = 3    /* left-padding aware (HF/Bloom: cumsum(mask) - 1): start + number of
                              real tokens before t in row b */
} posenc_pos_mode;

/* The token grid and its padding: a row is padding if token_ids[b*tokens+t] == padding_id
 * (token_ids given) or mask[b*tokens+t] == 0 (mask given); both may be given (either pads). */
typedef struct posenc_embed_tokens {
  size_t batch, tokens;
  posenc_pos_mode mode;
  int32_t start;               /* RANGE, CUMSUM */
  const int32_t *positions;    /* IDS: batch*tokens positions */
  const int32_t *token_ids;    /* optional: batch*tokens ids, compared with padding_id */
  int32_t padding_id;          /* fairseq padding_idx; also FAIRSEQ's position offset */
  const uint8_t *mask;         /* optional: batch*tokens, 0 = padding */
} posenc_embed_tokens;

/* A [batch][tokens][dim] tensor: element (b, t, j) at b*batch_stride + t*token_stride + j.
 * Zero strides mean dense (token_stride = dim, batch_stride = tokens*token_stride). */
typedef struct posenc_embed_tensor {
  void *data;
  posenc_dtype dtype;
  size_t batch_stride, token_stride;
} posenc_embed_tensor;

/* Positions at or past the table's n_rows (table source only). */
typedef enum posenc_oob_policy {
  POSENC_OOB_ERROR = 0,       /* ERR_POSITION, nothing written (default; as PyTorch's IndexError) */
  POSENC_OOB_CLAMP = 1,       /* use row n_rows-1 */
  POSENC_OOB_SINUSOIDAL = 2   /* use the sinusoidal row of config.sinusoidal for that position */
} posenc_oob_policy;

typedef struct posenc_embed_config {
  size_t dim;                         /* D: columns of x, y and P */
  float scale;                        /* multiplies x; posenc_embed_default: fl32(sqrt(D)) */
  posenc_table table;                 /* table.data NULL: sinusoidal rows computed on the fly */
  posenc_sinusoidal_params sinusoidal;/* the on-the-fly source, and the OOB_SINUSOIDAL fallback */
  posenc_oob_policy oob;
  double dropout_p;                   /* in [0, 1); 0: no dropout (y is bit-identical to p = 0) */
  uint64_t dropout_seed;
} posenc_embed_config;

/* D columns, scale fl32(sqrt(D)) (correctly rounded, no libm; exact for every D < 2^48), no
 * table (sinusoidal default(D) on the fly), OOB error, no dropout. */
POSENC_API posenc_embed_config posenc_embed_default(size_t dim);

/* The position of every token (b, t) as the add will use it, before the OOB policy: -1 for a
 * padding row. out has batch*tokens entries. Errors, nothing written: NULL, SIZE, OVERFLOW,
 * PARAM (unknown mode), POSITION (a real token's position < 0 or past INT32_MAX), PADDING
 * (FAIRSEQ with a padding_id < 0), ALIAS (out overlaps positions, token_ids, mask or *tokens). Positions
 * of padding rows (IDS) are never read or checked. */
POSENC_API posenc_status posenc_embed_positions(const posenc_embed_tokens *tokens, int32_t *out);

/* y = masked add of x (out may equal x exactly: in place, same data, dtype and strides; any other
 * overlap of their spans is ERR_ALIAS). Strides may order the tensor either way ([B][T][D] or
 * [T][B][D]); y's rows must not overlap each other. Large outputs (POSENC_STREAM_MIN_BYTES) are
 * written with non-temporal stores where aligned. Errors, nothing written: NULL, SIZE (batch,
 * tokens, dim or n_rows 0), DIM (table.dim or sinusoidal.dim != dim; sinusoidal is checked when
 * it is the source or the OOB_SINUSOIDAL fallback), DTYPE, STRIDE (a stride < dim), OVERFLOW,
 * PARAM (dropout_p outside [0, 1) or NaN, scale not finite, unknown mode or policy), POSITION (a
 * real token's position < 0 or past INT32_MAX, or >= n_rows under OOB_ERROR), PADDING (FAIRSEQ
 * padding_id < 0 or >= n_rows), ALIAS (y overlaps P or itself, partially overlaps x, or overlaps
 * positions, token_ids, mask, *tokens or *config), BASE and the sinusoidal parameter errors. */
POSENC_API posenc_status posenc_embed_forward(const posenc_embed_config *config,
                                              const posenc_embed_tokens *tokens,
                                              const posenc_embed_tensor *x,
                                              const posenc_embed_tensor *y);

/* The backward pass of posenc_embed_forward with the same config and tokens:
 *   grad_x[b,t,:] = (g[b,t,:] * keep) * scale      (+0.0 on padding rows)
 *   grad_table[pos(b,t),:] += g[b,t,:] * keep      accumulated in f32, in the order b = 0.., t = 0..
 * grad_x may be NULL (not needed) or equal grad_y (in place). grad_table (f32, n_rows x dim with
 * grad_table_stride, 0 = dim) may be NULL; it is ignored for the sinusoidal source and for rows
 * served by OOB_SINUSOIDAL; OOB_CLAMP rows accumulate into row n_rows-1; padding rows add nothing.
 * The sums run in a fixed order, so every backend and every run give the same bits. keep is the
 * forward's mask (same config: same p and seed). Errors: those of forward (the table's values are
 * not read), plus STRIDE (grad_table_stride < dim) and ALIAS when grad_table overlaps grad_y,
 * grad_x or a token array, or grad_x partially overlaps grad_y or overlaps a token array (token
 * arrays here include *tokens and *config). */
POSENC_API posenc_status posenc_embed_backward(const posenc_embed_config *config,
                                               const posenc_embed_tokens *tokens,
                                               const posenc_embed_tensor *grad_y,
                                               const posenc_embed_tensor *grad_x,
                                               float *grad_table, size_t grad_table_stride);

/* ---- learnable tables ---------------------------------------------------------------------- */
/* Truncated normal (seed 001's reset_state): mean 0, std (0 means sqrt(1/dim), correctly rounded
 * to double), draws beyond +-2 redrawn. Value (p, j) = fl32(std * z(seed, p, j)): it depends only
 * on (seed, p, j, std), so a table of more rows (or columns) starts with the same rows (columns),
 * and the bits are the same on every platform (integer hash, own log, sqrt and sin/cos; no libm).
 * The generator, exactly (mix = the splitmix64 finalizer, golden = 0x9e3779b97f4a7c15, all
 * arithmetic mod 2^64):
 *   key  = mix(mix(mix(seed ^ 0x6a09e667f3bcc909) ^ p) ^ j),   x_n = mix(key + (n+1) * golden);
 *   pair t: u1 = ((x_2t >> 11) + 1) * 2^-53 in (0, 1], u2 = (x_(2t+1) >> 11) * 2^-53 in [0, 1);
 *   Box-Muller r = sqrt(-2 ln u1): draws r*cos(2 pi u2), then r*sin(2 pi u2); z is the first
 *   draw with |z| <= 2 (after 64 rejections, probability < 1e-85, z = 0).
 * ln and sqrt are double polynomial/Newton evaluations in a fixed order (a few ulp); sin/cos is
 * posenc's exact-reduction primitive. Every value satisfies |v| <= fl32(2 std). f16/bf16 are the
 * round-to-nearest-even of the f32 value, as for every posenc table.
 * out: n_rows x dim of dtype with row_stride (0 = dim). Errors: NULL, SIZE, DTYPE, STRIDE,
 * OVERFLOW, BUFFER, PARAM (std negative, NaN or above 1e30). */
POSENC_API posenc_status posenc_learned_init(uint64_t seed, double std, size_t n_rows, size_t dim,
                                             posenc_dtype dtype, size_t row_stride,
                                             void *out, size_t out_bytes);

/* Resample a table to new_rows rows by linear interpolation along positions (PyTorch
 * F.interpolate mode='linear'): align_corners 0: source x = max(0, (r + 0.5) * n/new_rows - 0.5);
 * 1: x = r * (n-1)/(new_rows-1) (x = 0 when new_rows is 1); i0 = floor(x), i1 = min(i0+1, n-1),
 * out = v[i0] + (x - i0) * (v[i1] - v[i0]). x is an exact rational (integer arithmetic; PyTorch
 * computes it in float32, which can differ for large sizes). The value (v0*(den-rem) +
 * v1*rem)/den is evaluated from the stored values in double-double (relative error < 2^-100) and
 * rounded once to the destination dtype (f16/bf16 too, not through f32): correctly rounded
 * unless within 2^-100 of a tie. Inf/NaN inputs: the double formula w0*v0 + w1*v1 (NaN
 * propagates). out's bytes must not overlap src's data (*src itself is read before anything is
 * written, so it may lie anywhere). Errors: NULL (src, src->data, out), SIZE
 * (src->n_rows, src->dim or new_rows 0), DTYPE (either), STRIDE (either), OVERFLOW, BUFFER,
 * PARAM (align_corners not 0 or 1), ALIAS. */
POSENC_API posenc_status posenc_table_resize(const posenc_table *src, size_t new_rows, int align_corners,
                                             posenc_dtype dtype, size_t row_stride,
                                             void *out, size_t out_bytes);

/* ---- index encodings (seed 001, "method A/B") ---------------------------------------------- */
typedef enum posenc_index_kind {
  POSENC_INDEX_INTEGER = 0,     /* p itself */
  POSENC_INDEX_NORMALIZED = 1   /* p / max_len (seed 001: index / maximum sequence length, so
                                   positions 0..max_len-1 map into [0, 1)) */
} posenc_index_kind;

/* Rows start .. start+n_rows-1 (negative allowed), every one of dim columns the value (dim 1:
 * one feature), correctly rounded to dtype once (f16/bf16 not through f32: bf16 of 16842753 is
 * 16908288, not 16777216). Errors: NULL, SIZE, DTYPE, STRIDE, OVERFLOW, BUFFER, PARAM (unknown
 * kind, NORMALIZED with max_len 0), POSITION (past INT32_MAX; in f16 a value beyond +-65504). */
POSENC_API posenc_status posenc_index_table(posenc_index_kind kind, uint32_t max_len, int32_t start,
                                            size_t n_rows, size_t dim, posenc_dtype dtype,
                                            size_t row_stride, void *out, size_t out_bytes);

/* ---- 2-D sin-cos (MAE / ViT get_2d_sincos_pos_embed) -------------------------------------- */
/* Row r = h*grid_w + w (after the cls row, if any): columns [0, D/2) are the 1-D [sin | cos]
 * encoding of the column index w with D/2 columns, columns [D/2, D) that of the row index h
 * (MAE's meshgrid(w, h) puts w first although its variable is called emb_h).
 * omega_k = base^(-k/(D/4)), k < D/4: the split sinusoidal table of dim D/2, bit for bit, so
 * within 0.5 ulp(f32) + 1e-12 of the exact value; every backend gives the same bits.
 * cls_token (nonzero): a zero row first. Computes grid_w + grid_h half rows and copies the rest
 * (no allocation). Errors (nothing written): NULL, SIZE (embed_dim, grid_h or grid_w 0), DIM
 * (embed_dim not a multiple of 4, as MAE asserts), DTYPE, STRIDE, OVERFLOW, BUFFER, BASE,
 * POSITION (a grid side above 2^31, or base < 1 so small that |p| * omega reaches 2^50 turns). */
typedef struct posenc_sincos_2d_params {
  size_t embed_dim, grid_h, grid_w;
  int cls_token;
  double base;               /* 10000 */
  posenc_dtype dtype;
  size_t row_stride;         /* elements; 0 = embed_dim */
} posenc_sincos_2d_params;

/* Defaults: base 10000, no cls row, f32, dense. _bytes: the bytes the table spans (*bytes is set
 * only on success), or the errors above other than BUFFER, plus NULL (bytes); posenc_sincos_2d
 * writes the table, or returns the errors above. */
POSENC_API posenc_sincos_2d_params posenc_sincos_2d_default(size_t embed_dim, size_t grid_h, size_t grid_w);
POSENC_API posenc_status posenc_sincos_2d_bytes(const posenc_sincos_2d_params *params, size_t *bytes);
POSENC_API posenc_status posenc_sincos_2d(const posenc_sincos_2d_params *params, void *out, size_t out_bytes);

/* ---- spectrum of a table (seed 000: rank and effective dimension) -------------------------- */
/* A table P (n x d) has rank <= min(n, d): a learned table of n >> d rows still spans at most d
 * directions, and often far fewer. posenc_spectrum measures that. */
typedef struct posenc_spectrum_info {
  size_t rank;               /* singular values > sigma_max * max(n, d) * 2^-23 (numpy matrix_rank's
                                tolerance for float32, used for every dtype) */
  size_t k90, k99;           /* fewest leading values holding 90% / 99% of sum(sigma^2) (0 for a
                                zero table) */
  double energy;             /* sum(sigma^2) = squared Frobenius norm */
  double entropy_rank;       /* exp(-sum q ln q), q = sigma / sum(sigma) over the rank values
                                (Roy & Vetterli's effective rank; the values below the rank
                                tolerance are rounding noise and left out; 0 for a zero table) */
} posenc_spectrum_info;

/* Doubles of work space posenc_spectrum needs for dim d: d*(d+1); 0 when d is 0 or the bytes
 * would overflow size_t. */
POSENC_API size_t posenc_spectrum_work(size_t dim);
/* Singular values of the table (descending, dim of them, into singular_values unless it is NULL)
 * and their summary in *info. Computed as the square roots of the eigenvalues of P^T P (summed in
 * double, rows in order) by cyclic Jacobi sweeps that stop when every off-diagonal entry is below
 * 2^-53 of its diagonal's geometric mean or of the largest diagonal entry; only + - * / are used,
 * so the bits are the same on every platform. Precision: sigma_i to about 1e-16 * sigma_max^2 /
 * sigma_i (values below ~1e-8 sigma_max are noise: the rank tolerance lies far above that). Cost
 * n*d^2/2 + O(d^3) (the d^3 part: about 1 s at d = 256, 15 s at d = 768). work is scratch.
 * Errors, nothing written to singular_values or *info: NULL, SIZE, DTYPE, STRIDE, OVERFLOW, BUFFER
 * (work_count < posenc_spectrum_work(dim)), PARAM (a NaN or Inf in the table), ALIAS (work meets
 * the table's data, singular_values or *info; singular_values meets the table's data or *info).
 * *table itself is read before anything is written, so it may lie anywhere. */
POSENC_API posenc_status posenc_spectrum(const posenc_table *table, double *work, size_t work_count,
                                         double *singular_values, posenc_spectrum_info *info);

/* ---- .npy headers (load and save tables; the library does no I/O) ------------------------- */
#define POSENC_NPY_HEADER_MAX 192 /* posenc_npy_header never writes more */
typedef enum posenc_npy_type {
  POSENC_NPY_F32 = 0,   /* <f4 */
  POSENC_NPY_F16 = 1,   /* <f2 */
  POSENC_NPY_F64 = 2,   /* <f8 */
  POSENC_NPY_I32 = 3,   /* <i4 */
  POSENC_NPY_I64 = 4,   /* <i8 */
  POSENC_NPY_U8 = 5,    /* |u1 */
  POSENC_NPY_BOOL = 6,  /* |b1 */
  POSENC_NPY_U16 = 7    /* <u2: NumPy has no bfloat16; posenc stores bf16 tables as their raw bits */
} posenc_npy_type;

/* Why posenc_npy_parse refused a header (for messages; the status says FORMAT or OVERFLOW). */
typedef enum posenc_npy_problem {
  POSENC_NPY_PROBLEM_NONE = 0,
  POSENC_NPY_PROBLEM_MAGIC,        /* does not start with \x93NUMPY */
  POSENC_NPY_PROBLEM_TRUNCATED,    /* len ends before the header does */
  POSENC_NPY_PROBLEM_VERSION,      /* not 1.0, 2.0 or 3.0 */
  POSENC_NPY_PROBLEM_SYNTAX,       /* not a dict literal as NumPy writes one (quotes, escapes, ...) */
  POSENC_NPY_PROBLEM_KEY_UNKNOWN,  /* a key other than descr, fortran_order, shape */
  POSENC_NPY_PROBLEM_KEY_TWICE,
  POSENC_NPY_PROBLEM_KEY_MISSING,
  POSENC_NPY_PROBLEM_DTYPE,        /* a descr other than the types above */
  POSENC_NPY_PROBLEM_BIG_ENDIAN,   /* a descr starting with '>' */
  POSENC_NPY_PROBLEM_STRUCTURED,   /* a list or tuple descr */
  POSENC_NPY_PROBLEM_FORTRAN,      /* fortran_order True */
  POSENC_NPY_PROBLEM_BOOL,         /* fortran_order neither True nor False */
  POSENC_NPY_PROBLEM_SHAPE,        /* shape not a tuple of decimal integers ("(n)", "-1", "01") */
  POSENC_NPY_PROBLEM_NDIM,         /* more than 4 dimensions */
  POSENC_NPY_PROBLEM_TOO_LARGE     /* a dimension, the element count or the byte size overflows */
} posenc_npy_problem;

typedef struct posenc_npy_info {
  posenc_npy_type type;
  size_t item_size;
  size_t ndim;               /* 0..4 (0: a scalar) */
  size_t shape[4];
  size_t count;              /* elements: the product of the shape (1 for a scalar) */
  size_t data_offset;        /* bytes from the file start to the data */
  size_t data_bytes;         /* count * item_size; data_offset + data_bytes <= PTRDIFF_MAX */
  int version;               /* 1, 2 or 3 */
  posenc_npy_problem problem;/* on a FORMAT or OVERFLOW error: why, ... */
  size_t problem_at;         /* ... and the byte offset where it was found */
} posenc_npy_info;

/* Parses a .npy v1/v2/v3 header at the start of buf (len bytes available; the data need not be:
 * compare data_offset + data_bytes with the file size yourself). Accepted: exactly the keys
 * descr, fortran_order (False) and shape, any order, quoted with ' or ", optional trailing comma,
 * whitespace between tokens; descr one of the types above (little-endian). Never reads past len.
 * Errors: NULL, FORMAT (anything else), OVERFLOW (a size that does not fit: as NumPy, the product
 * of the non-zero extents counts even when another extent is 0, and the header plus those
 * extents' bytes must stay within PTRDIFF_MAX; posenc_npy_header follows the same rule, so what
 * it writes this parses). On these two only info->problem and info->problem_at are written; on
 * NULL nothing is. */
POSENC_API posenc_status posenc_npy_parse(const void *buf, size_t len, posenc_npy_info *info);
/* Writes a v1 header for a C-order array (the dict NumPy writes, padded with spaces and a final
 * '\n' to a multiple of 64 bytes, as NumPy does); *len gets its length, at most 192 bytes
 * (POSENC_NPY_HEADER_MAX). shape may be NULL when ndim is 0. Errors, nothing written: NULL, SIZE (ndim > 4),
 * PARAM (unknown type), OVERFLOW (the header plus the bytes of the non-zero extents pass
 * PTRDIFF_MAX: posenc_npy_parse's rule), BUFFER, ALIAS (len inside the header's bytes). */
POSENC_API posenc_status posenc_npy_header(posenc_npy_type type, size_t ndim, const size_t *shape,
                                           void *out, size_t out_cap, size_t *len);

/* ---------------------------------------------------------------------------------------------
 * Position biases inside attention: ALiBi, T5 and DeBERTa buckets, Transformer-XL's relative
 * sinusoid, masks, and the position-dependent attention scales.
 *
 * Score tiles. A tile is a block of attention scores [heads][rows][cols] in f32 or f16, for
 * queries at positions q_pos .. q_pos+rows-1 and keys at k_pos .. k_pos+cols-1 (q_pos is the KV
 * offset while decoding; a flash-attention-style caller hands over one tile at a time with the
 * tile's origin). Element (h, i, j) is at index h*head_stride + i*row_stride + j. The strides
 * must not make the tile overlap itself: with the smaller stride first, inner >= cols and
 * outer >= (count_inner-1)*inner + cols (dense [h][q][k] and [q][h][k] both pass), else ERR_ALIAS.
 *
 * Masks, applied in the same pass as the bias: an entry is masked when
 *   causal and k > q,  or  window > 0 and q - k >= window,  or  key_keep && key_keep[j] == 0.
 * A masked entry is set to -inf (by selection: whatever it held, NaN included, becomes -inf);
 * every other entry becomes fl(s + b), computed in f32 and rounded once to the tile's dtype.
 * NaN scores or biases give NaN on every backend, but its payload and sign may differ (as in
 * the masked add: F16C keeps an f16 payload, the scalar conversion makes it canonical; the
 * compiler may swap the operands of an add).
 * ------------------------------------------------------------------------------------------- */
typedef struct posenc_score_tile {
  void *scores;               /* element (0, 0, 0) */
  posenc_dtype dtype;         /* POSENC_DTYPE_F32 or POSENC_DTYPE_F16 (else ERR_DTYPE) */
  size_t heads, rows, cols;   /* each >= 1 (else ERR_SIZE) */
  size_t row_stride;          /* elements; 0 means cols */
  size_t head_stride;         /* elements; 0 means rows * row_stride */
  int32_t q_pos, k_pos;       /* positions of row 0 and column 0; the last ones fit int32 */
} posenc_score_tile;

typedef struct posenc_score_mask {
  int causal;                 /* 1: mask keys after the query (k > q) */
  int32_t window;             /* > 0: sliding window, mask q - k >= window; 0: none */
  const uint8_t *key_keep;    /* NULL, or one byte per column of the tile: 0 masks (key padding) */
} posenc_score_mask;

/* Applies only the mask (RoPE and NoPE models). mask NULL means no mask (the call then only
 * validates). Errors, nothing written: NULL, SIZE, DTYPE, OVERFLOW, POSITION (the last row or
 * column position past INT32_MAX), PARAM (window < 0), ALIAS (tile overlaps itself or key_keep). */
POSENC_API posenc_status posenc_mask_apply(const posenc_score_tile *tile, const posenc_score_mask *mask);

/* ALiBi slopes for heads h = 0..heads-1 (the original get_slopes, identical in set and order to
 * Bloom, MPT with alibi_bias_max and ggml with max_bias): c = 2^floor(log2 heads),
 *   m_h = 2^(-B*(h+1)/c)            for h < c
 *   m_h = 2^(-B*(2(h-c)+1)/(2c))    for h >= c           (B = max_bias; 8 in every model)
 * Each slope is the correctly rounded f32 of the exact 2^e, e computed in double (exact for
 * B = 8; Bloom's float32 base^k and ggml's powf can differ from it by an ulp for non-powers of
 * two). Errors, nothing written: NULL, SIZE (heads == 0), PARAM (B not finite or not in (0, 100]). */
POSENC_API posenc_status posenc_alibi_slopes(size_t heads, double max_bias, float *slopes);

/* Which integer distance D the ALiBi bias b = fl32(m * (float)D) uses (q, k: positions). */
typedef enum posenc_alibi_form {
  POSENC_ALIBI_SYMMETRIC = 0, /* D = -|k - q|: bidirectional (MPT non-causal) */
  POSENC_ALIBI_RELATIVE = 1,  /* D = k - q: causal models (<= 0 on every visible key) */
  POSENC_ALIBI_KEY = 2        /* D = k - key_origin: the original and Bloom (m*j, key_origin 0,
                                 or the count of left pads), MPT causal (key_origin = keys-1);
                                 a constant per row away from RELATIVE: same softmax */
} posenc_alibi_form;

/* Adds the ALiBi bias of head h (slopes[h], for example posenc_alibi_slopes + the tile's first
 * head) to every unmasked entry and masks the rest, in one pass:
 *   s = fl(s + fl32(m_h * (float)D))   (D exact: |D| <= 2^24 is required)
 * Error against the exact s + (-m|k-q|) with the exact slope: at most ulp(b) + ulp(s')/2 for f32
 * (the slope's rounding, at most ulp(b)/2, plus the product's); f16 tiles round once more.
 * Errors, nothing written: the errors of posenc_mask_apply, and NULL (slopes), PARAM (unknown
 * form, a slope not finite), POSITION (some |D| > 2^24), ALIAS (slopes inside the tile). */
POSENC_API posenc_status posenc_alibi_add(const posenc_score_tile *tile, const posenc_score_mask *mask,
                                          posenc_alibi_form form, int32_t key_origin, const float *slopes);

/* T5 relative buckets (HF _relative_position_bucket), relative position r = k - q:
 *   bidirectional: n = num_buckets/2, offset n if r > 0, a = |r|;  causal: n = num_buckets,
 *   offset 0, a = max(-r, 0).  e = n/2 (the exact range).
 *   bucket = offset + (a < e ? a : min(e + floor(ln(a/e) / ln(max_distance/e) * (n - e)), n - 1))
 * computed exactly (the floor of the exact real value; ties such as a = 16 at the defaults, where
 * the real quotient is exactly 2, land on the upper bucket). HF's float32 gives the same buckets
 * for the default configurations (tested to |r| = 10^6). */
typedef struct posenc_t5_buckets {
  uint32_t num_buckets;       /* 32 in T5; bidirectional: even and >= 4, causal: >= 2; <= 1024 */
  uint32_t max_distance;      /* 128 in T5; must exceed e = n/2 */
  int bidirectional;          /* 1: encoders (HF: not is_decoder); 0: causal decoders */
} posenc_t5_buckets;

/* Errors: NULL, DIM (odd num_buckets when bidirectional, or too few or too many), PARAM
 * (max_distance <= e or > INT32_MAX). */
POSENC_API posenc_status posenc_t5_check(const posenc_t5_buckets *cfg);

/* A configuration's buckets, settled once (tens of microseconds) so that the bias add has no
 * setup: where each logarithmic bucket starts, and the buckets of |r| <= POSENC_T5_NEAR.
 * Read-only after posenc_t5_plan_init; share it between threads and calls. About 2.6 KiB. */
#define POSENC_T5_MAX_BUCKETS 1024
#define POSENC_T5_NEAR 127
typedef struct posenc_t5_plan {
  posenc_t5_buckets cfg;
  uint32_t n, e;                                 /* buckets per direction, exact range */
  int32_t first[POSENC_T5_MAX_BUCKETS / 2];      /* first[k]: the smallest a in bucket e + k */
  int16_t near[2 * POSENC_T5_NEAR + 1];          /* near[r + POSENC_T5_NEAR]: bucket of r */
} posenc_t5_plan;
/* Errors: those of posenc_t5_check; PARAM also if a threshold cannot be decided (not known to
 * happen: ties are decided exactly). */
POSENC_API posenc_status posenc_t5_plan_init(posenc_t5_plan *plan, const posenc_t5_buckets *cfg);
/* out[i] = bucket of r = first + i for i < count (first + count - 1 <= INT32_MAX). Errors, nothing
 * written: those of posenc_t5_check, NULL (out), SIZE (count 0), POSITION. */
POSENC_API posenc_status posenc_t5_bucket_range(const posenc_t5_buckets *cfg, int32_t first, size_t count,
                                                int32_t *out);

/* Adds T5's learned bias to the tile under the mask: entry (h, i, j) += table[bucket(k - q)][head0 + h],
 * table = nn.Embedding(num_buckets, n_heads).weight (f32, f16 or bf16, converted exactly).
 * The result is fl32(s + v) (the bias exact), rounded once more to f16 for f16 tiles. Errors,
 * nothing written: those of
 * posenc_mask_apply, NULL (plan, table), PARAM (a plan posenc_t5_plan_init did not make),
 * DTYPE (table), TABLE (table rows < num_buckets, or dim < head0 + heads), STRIDE (table),
 * ALIAS (table or plan inside the tile). */
POSENC_API posenc_status posenc_t5_bias_add(const posenc_score_tile *tile, const posenc_score_mask *mask,
                                            const posenc_t5_plan *plan, const posenc_table *table,
                                            size_t head0);

/* DeBERTa v2/v3 make_log_bucket_position, relative position r = q - k (note: opposite to T5):
 *   mid = bucket_size/2; |r| <= mid: r; else sign(r) * (mid + ceil(ln(|r|/mid) / ln((max_position-1)/mid) * (mid-1)))
 * computed exactly (the ceiling of the exact real value), not clamped (DeBERTa clamps at use:
 * c2p index clamp(r + span, 0, 2*span-1)). bucket_size 0 means no buckets: r itself.
 * Errors, nothing written: NULL, SIZE, DIM (bucket_size odd, 2, or above 65536), PARAM
 * (max_position - 1 <= mid when bucket_size > 0; or a bucket that cannot be decided, not known to
 * happen), POSITION (first + count - 1 past INT32_MAX, or a bucket past INT32_MAX). */
POSENC_API posenc_status posenc_deberta_bucket_range(uint32_t bucket_size, uint32_t max_position, int32_t first,
                                                     size_t count, int32_t *out);
/* build_relative_position: out[q][k] = bucket(q - k) for q < q_len, k < k_len (int32, dense).
 * Same errors, plus OVERFLOW (q_len*k_len) and BUFFER (out_count < q_len*k_len). */
POSENC_API posenc_status posenc_deberta_relative(size_t q_len, size_t k_len, uint32_t bucket_size,
                                                 uint32_t max_position, int32_t *out, size_t out_count);

/* Transformer-XL's relative sinusoid R: klen rows for positions klen-1, klen-2, ..., 0 (clamped to
 * clamp_len when clamp_len > 0), each [sin(p w_0) .. sin(p w_{d/2-1}) | cos(p w_0) ..], w_i =
 * base^(-2i/d): the core's split sinusoidal rows (same accuracy, same bits), row_stride dense.
 * Errors: those of posenc_sinusoidal_table (params->layout must be SPLIT, else ERR_LAYOUT),
 * PARAM (clamp_len < 0). */
POSENC_API posenc_status posenc_txl_relative(const posenc_sinusoidal_params *params, size_t klen,
                                             int32_t clamp_len, void *out, size_t out_bytes);

/* Position-dependent attention scales, in double (relative error below 1e-15):
 * Qwen LogN: factor for the query at position pos (0-based) = ln(pos+1)/ln(train_len) when
 *   pos+1 > train_len, else 1 (HF Qwen multiplies q by it after RoPE; train_len >= 2).
 * YaRN: mscale(s, m) = 0.1*m*ln(s) + 1 for s > 1, else 1 (cos and sin are scaled by it, logits by
 *   its square); DeepSeek: softmax scale = mscale(s, mscale_all_dim)^2 / sqrt(head_dim).
 * Llama-4 (NoPE layers): q *= ln(floor((pos+1)/floor_scale) + 1) * attn_scale + 1.
 * Invalid arguments (train_len < 2, s or m not finite, s <= 0, head_dim 0, floor_scale 0) give NaN,
 * and so do finite arguments whose result would overflow (mscale 1e308): never an infinity. */
POSENC_API double posenc_logn_scale(uint32_t pos, uint32_t train_len);
POSENC_API double posenc_yarn_mscale(double factor, double mscale);
POSENC_API double posenc_deepseek_softmax_scale(size_t head_dim, double factor, double mscale_all_dim);
POSENC_API double posenc_llama4_attn_scale(uint32_t pos, uint32_t floor_scale, double attn_scale);
/* LogN factors of the queries at positions first .. first+count-1, rounded to f32 (what Qwen
 * multiplies by). Errors: NULL, SIZE, PARAM (train_len < 2), POSITION (first < 0, or the last
 * position past INT32_MAX). */
POSENC_API posenc_status posenc_logn_scales(uint32_t train_len, int32_t first, size_t count, float *out);

/* ---------------------------------------------------------------------------------------------
 * Backends and dispatch.
 *
 * The backend with the highest priority that is compiled in and supported by the CPU is chosen
 * on first use (thread-safe), unless the environment variable POSENC_ISA names one (a name below,
 * or auto). A POSENC_ISA that names an unavailable backend is ignored: posenc_isa_requested()
 * reports it and posenc_isa_active() shows what runs instead.
 *
 * The ISA table: every backend is one entry, and everything that lists backends derives from it
 * (the enum, names, detection, priority, meson's per-ISA builds, the CLI's help, the tests).
 *   name     the backend's name (POSENC_ISA, --isa, src/posenc_<name>.c, posenc_i_backend_<name>)
 *   NAME     the enum's suffix; POSENC_WITH_<NAME> says that a build compiled the backend in
 *   prio     the automatic choice takes the highest among available backends
 *   detect   the run-time check (posenc_i_cpu_has: CPUID and the OS's register state, or HWCAP)
 *   build    for meson: "families:flags", alternatives separated by '|'; an alternative whose
 *            families start with "msvc" is for compilers with MSVC's options (cl.exe, clang-cl),
 *            the others for GCC's (a backend without one for its compiler is not built). clang-cl
 *            takes clang's -m options too: cl.exe has no option for AVX512-BF16 code.
 * An entry's position is its enum value, which is ABI: new backends are appended. Adding one is
 * this entry, src/posenc_<name>.c and its instantiation in posenc_simd.h (docs/porting.md). */
#define POSENC_I_ISA_TABLE(X)                                                                          \
  /* name   NAME    prio detect                                                 build */             \
  X(scalar, SCALAR, 0,   1,                                                     "")                  \
  X(sse2,   SSE2,   1,   posenc_i_cpu_has(POSENC_I_CPU_SSE2),                   "x86 x86_64:-msse2|msvc x86_64:") \
  X(avx2,   AVX2,   2,   posenc_i_cpu_has(POSENC_I_CPU_AVX2 | POSENC_I_CPU_F16C),                    \
    "x86 x86_64:-mavx2 -mf16c|msvc x86_64:/arch:AVX2")                                                \
  X(neon,   NEON,   1,   posenc_i_cpu_has(POSENC_I_CPU_NEON),                   "aarch64:|arm:-mfpu=neon") \
  X(avx512, AVX512, 3,   posenc_i_cpu_has(POSENC_I_CPU_AVX512 | POSENC_I_CPU_F16C),                  \
    "x86 x86_64:-mavx512f -mavx512bw -mavx512dq -mavx512vl -mf16c|msvc x86_64:/arch:AVX512")           \
  X(avx512bf16, AVX512BF16, 4, posenc_i_cpu_has(POSENC_I_CPU_AVX512 | POSENC_I_CPU_F16C | POSENC_I_CPU_BF16), \
    "x86 x86_64:-mavx512f -mavx512bw -mavx512dq -mavx512vl -mf16c -mavx512bf16|msvc x86_64:/arch:AVX512 -mavx512bf16") \
  X(simd128, SIMD128, 1, posenc_i_cpu_has(POSENC_I_CPU_SIMD128),                   "wasm32:-msimd128")

typedef enum posenc_isa {
#define POSENC_I_ISA_ENUM(name, NAME, prio, detect, build) POSENC_ISA_##NAME,
  POSENC_I_ISA_TABLE(POSENC_I_ISA_ENUM) /* SCALAR = 0, SSE2, AVX2, NEON, AVX512 = 4, AVX512BF16, SIMD128 = 6 */
#undef POSENC_I_ISA_ENUM
  POSENC_ISA_COUNT,     /* backends in the table */
  POSENC_ISA_AUTO = -1  /* for posenc_isa_set: the best available */
} posenc_isa;

/* The table as meson.build reads it (cc.get_define): "name@build;" for every backend. */
#define POSENC_I_ISA_BUILD_ENTRY(name, NAME, prio, detect, build) #name "@" build ";"
#define POSENC_I_ISA_BUILD POSENC_I_ISA_TABLE(POSENC_I_ISA_BUILD_ENTRY)

POSENC_API const char *posenc_isa_name(posenc_isa isa);                      /* "avx2", ... */
/* A backend's name from the table, or "auto". Errors: NULL, ISA (any other name). */
POSENC_API posenc_status posenc_isa_from_name(const char *name, posenc_isa *isa);
POSENC_API int posenc_isa_compiled(posenc_isa isa);   /* 1 if this build contains the backend */
POSENC_API int posenc_isa_supported(posenc_isa isa);  /* 1 if this CPU can run it */
POSENC_API posenc_isa posenc_isa_active(void);        /* selects on first use */
/* The POSENC_ISA environment value seen at selection: 1 and *isa set when one was given
 * (valid name), -1 when it was given but is not a known name, 0 when unset. */
POSENC_API int posenc_isa_requested(posenc_isa *isa);
/* Force a backend (or POSENC_ISA_AUTO). ERR_ISA if it is not compiled in or not supported. */
POSENC_API posenc_status posenc_isa_set(posenc_isa isa);

/* Recomputes small canonical cases with the active backend and compares them with embedded
 * goldens, in this thread's floating-point environment. Returns the status of
 * posenc_selftest_report:
 *   OK            every result is posenc's, bit for bit;
 *   ERR_SUBNORMAL only subnormal values differ: the thread flushes them to zero (flush-to-zero
 *                 or denormals-are-zero mode, as in a program linked with -ffast-math or -Ofast,
 *                 whose start-up code sets them). Tables and caches have no subnormal operand,
 *                 so they are exact. Rotation, the masked add and the bias add differ only where
 *                 an input, a product or a result is subnormal (nonzero, below 2^-126 in f32):
 *                 it becomes zero. Where the report has the F16 bit (an emulated CPU; x86's F16C
 *                 ignores the modes), f16 values below 2^-14 become zero too, in tables, caches
 *                 and f16 data. Every other value is posenc's, bit for bit;
 *   ERR_SELFTEST  results of normal values differ: this build fuses or reassociates posenc's
 *                 arithmetic (clang's -ffp-contract=fast), the rounding mode is not to nearest,
 *                 or the backend disagrees with the goldens. Do not use the results. */
POSENC_API posenc_status posenc_selftest(void);

/* The self-test's checks, as bits of posenc_selftest_result.failed. */
typedef enum posenc_selftest_check {
  POSENC_SELFTEST_ROUNDING = 1 << 0,   /* the rounding mode is not round-to-nearest-even */
  POSENC_SELFTEST_CONTRACT = 1 << 1,   /* a*b + c is computed with one rounding (fused multiply-add) */
  POSENC_SELFTEST_REASSOC = 1 << 2,    /* (x + c) - c is not computed as written (reassociation) */
  POSENC_SELFTEST_VALUES = 1 << 3,     /* a result of normal values differs from its golden, or the
                                          active backend's from the scalar one's */
  POSENC_SELFTEST_SUBNORMALS = 1 << 4, /* a result from subnormal inputs differs (rotation, masked
                                          add, bias add) */
  POSENC_SELFTEST_FTZ = 1 << 5,        /* the thread flushes subnormal results to zero */
  POSENC_SELFTEST_DAZ = 1 << 6,        /* the thread reads subnormal operands as zero (ARM's FZ
                                          does both: FTZ and DAZ) */
  POSENC_SELFTEST_F16 = 1 << 7         /* the active backend's f16 conversions flush subnormal
                                          halves (magnitude below 2^-14): f16 tables, caches and
                                          f16 data differ there. x86's F16C never does (it ignores
                                          FTZ and DAZ); an emulator may, under FTZ or DAZ */
} posenc_selftest_check;
#define POSENC_SELFTEST_CHECKS 8       /* bits above */

typedef struct posenc_selftest_result {
  posenc_status status;  /* OK, ERR_SUBNORMAL or ERR_SELFTEST, as posenc_selftest returns */
  unsigned failed;       /* the POSENC_SELFTEST_* bits of every check that failed */
  int normal_exact;      /* 1: results of normal inputs are posenc's bits (no ROUNDING, CONTRACT,
                            REASSOC or VALUES bit), but for a QK-norm's head whose root mean square
                            is 2^126 or more under FTZ (posenc_rope_norm); 0: do not use them */
  posenc_isa isa;        /* the backend it checked: the active one */
} posenc_selftest_result;

/* Runs every check of posenc_selftest, none skipped after a failure, and fills *result.
 * ERR_SUBNORMAL needs FTZ or DAZ observed and no failure beyond SUBNORMALS, FTZ and DAZ; a
 * subnormal result that differs while neither mode is set is ERR_SELFTEST. Errors: NULL (result;
 * nothing is run). */
POSENC_API posenc_status posenc_selftest_report(posenc_selftest_result *result);
/* The name of one check bit ("rounding", "contract", "reassoc", "values", "subnormals", "ftz",
 * "daz", "f16"), or "unknown" for anything else. */
POSENC_API const char *posenc_selftest_check_name(unsigned check);

/* =============================================================================================
 * Internal interface between posenc.h and the per-ISA kernels of posenc_simd.h.
 * Not part of the API: it may change in any release.
 * =========================================================================================== */

/* Positions are anchored every POSENC_ANCHOR positions (an absolute multiple): the value at p
 * is the exact anchor value advanced by (p mod POSENC_ANCHOR) double-precision rotations.
 * Changing this changes results, so it is fixed. */
#define POSENC_ANCHOR 32
/* Frequencies per SIMD chunk, and chunks per kernel call (performance knobs only). POSENC_GROUP:
 * jobs with their steps (RoPE's, made once in posenc_rope). POSENC_I_UGROUP: jobs whose kernel
 * makes the steps (tables): the driver holds their parts (512 B a chunk) and the kernel the steps
 * (256 B a chunk) on the stack. Two: a call writes 256 bytes of each row (d = 128, interleaved
 * f32) where one wrote 128, 512 bytes apart, and from memory that order was slow: a plain loop of
 * non-temporal stores writing 128-byte slices, a chunk at a time, took 1.8x the time of the same
 * stores row after row, 256-byte slices the same time (n = 131072, the EPYC of the README's
 * "Sinusoidal tables"). Only where a backend streams (x86's AVX2 and AVX-512; the table calls'
 * stack: gcc 2.3 -> 3.0 KiB, clang's AVX-512 5.2 of its 6): with ordinary stores the order measured
 * the same (SSE2), and on Cortex-M two took the table's stack from 1.9 to 2.4 KiB. */
#if defined(POSENC_CHUNK) && POSENC_CHUNK != 16
#error "POSENC_CHUNK is fixed at 16 (POSENC_ROPE_BYTES rounds pairs to it)"
#endif
#undef POSENC_CHUNK
#define POSENC_CHUNK 16 /* also POSENC_ROPE_BYTES's pair rounding */
#define POSENC_GROUP 8
#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__) || defined(_M_IX86)
#  define POSENC_I_UGROUP 2
#else
#  define POSENC_I_UGROUP 1
#endif
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
  const double *step;           /* [chunk][2][POSENC_CHUNK]: E(1) = (sin, cos)(omega) of each lane
                                 * as posenc_i_exact_sincos(1.0, ...) gives it; NULL: computed */
  unsigned nfreq;               /* valid lanes, 1..POSENC_GROUP*POSENC_CHUNK (step NULL: POSENC_I_UGROUP) */
  int32_t start;                /* first position when positions is NULL */
  const int32_t *positions;     /* else one position per row */
  size_t nrows;
  unsigned char *out;           /* row 0, the group's first sin column */
  ptrdiff_t row_stride;         /* bytes */
  int mode;                     /* POSENC_I_PAIRS: sin,cos adjacent; POSENC_I_PLANAR: apart */
  ptrdiff_t cos_offset;         /* PLANAR: bytes from a sin column to its cos column */
  size_t cos_col;               /* PLANAR, add_sinus: columns of x and y from a sin column to its cos */
  unsigned pair_cols;           /* PAIRS: columns stored, 2*nfreq or 2*nfreq-1 */
  posenc_dtype dtype;
  int stream;                   /* 1: full chunks may use non-temporal stores (16-byte aligned) */
  int cos_first;                /* PAIRS: store (cos, sin) instead of (sin, cos) */
  int scaled;                   /* 1: multiply both by scale (in double) before rounding */
  double scale;
  /* NULL, or the recurrence's state after the last row, [chunk][4][POSENC_CHUNK]: (s, c, sp, cp)
   * of each lane, stored by the kernel; with resume set (positions NULL), a first row past an
   * anchor continues from it (start - 1's state, which a call over the same lanes stored) instead
   * of from its anchor: the same values, the walk made once across calls. PLANAR f32 rows only
   * (a rotation's on-the-fly rows: the SIMD kernels have an instance for that alone) */
  double *state;
  int resume;
} posenc_i_job;

/* A small function inlined into its callers even where the optimizer would not: posenc_simd.h's
 * vocabulary (one instruction each, mostly), and the scalar kernels' per-value load and store
 * (clang at -O2 kept posenc_i_store out of line: a call and a dtype switch per value, 2.5x slower
 * than -O3 on wasm32). Not unoptimised: there every inlined copy keeps locals of its own, so a
 * kernel's frame took 1-2 MiB of stack (gcc -O0: AVX2's rotation 1.04 MiB; the largest frame is
 * 8.7 KiB now, and the self-test, which crashed on a 1 MiB thread, fits 24 KiB), and V8 refused
 * the simd128 rotate kernel (311,581 locals, over its 50,000). */
#if (defined(__GNUC__) || defined(__clang__)) && defined(__OPTIMIZE__)
#  define POSENC_I_FORCEINLINE static inline __attribute__((always_inline))
#elif defined(_MSC_VER) && !defined(__clang__) /* cl.exe's /Od does not inline, forced or not */
#  define POSENC_I_FORCEINLINE static __forceinline
#else
#  define POSENC_I_FORCEINLINE static inline
#endif
/* The scalar load and store: forced, but at -Os, where size comes first (the Cortex-M footprint
 * programs grew by 500-700 bytes each). */
#if defined(__OPTIMIZE_SIZE__)
#  define POSENC_I_SCALAR_INLINE static
#else
#  define POSENC_I_SCALAR_INLINE POSENC_I_FORCEINLINE
#endif

/* A function kept out of its callers: its stack frame is then on the stack only while it runs
 * (a bound on every call's stack; see posenc_i_rope_tokens). */
#if defined(__GNUC__) || defined(__clang__)
#  define POSENC_I_NOINLINE static __attribute__((noinline))
#elif defined(_MSC_VER)
#  define POSENC_I_NOINLINE static __declspec(noinline)
#else
#  define POSENC_I_NOINLINE static
#endif

/* Rotation of one token's heads in place by prepared f32 cos/sin rows. NEOX: pairs (j, j+half),
 * c[j], s[j]. GPTJ: pairs (2j, 2j+1), rows expanded to 2*pairs: c = (c0 c0 c1 c1 ...),
 * s = (-s0 s0 -s1 s1 ...), so that out = x*c + swap(x)*s. The inverse is prepared as -s. */
typedef struct posenc_i_rot_job {
  const unsigned char *src;     /* the input's head 0, element 0 */
  ptrdiff_t src_head_stride;    /* bytes */
  unsigned char *dst;           /* the output's (src itself in place) */
  ptrdiff_t dst_head_stride;
  posenc_dtype src_dtype, dst_dtype; /* 4-byte fields in pairs: the job is on the stack of every
                                        rotation */
  size_t heads;
  size_t pairs;                 /* rotated here: a range of the rope's pairs, src and dst at its first */
  size_t half;                  /* NEOX: lane j's partner is lane j + half (the rope's pairs) */
  ptrdiff_t ahead;              /* 0, or where the next token's src lies from src (bytes): a SIMD
                                   kernel asks for its lines in cache while it rotates this one's */
  const float *c, *s;
  /* QK-norm (posenc_rope_norm): NULL, or one scale r per head; element e of a head is then
   * fl32(fl32(x_e * r) * w_e) before the rotation, w_e = fl32(weight[e] + weight_bias) (bias
   * -0.0f leaves every weight as it is, 1.0f is Gemma's 1 + w; norm_weight is indexed like src),
   * and the kernel writes the elements from tail_from to dim (relative to src) as well */
  const float *norm_scale;
  const float *norm_weight;
  size_t tail_from, dim;
  float weight_bias;
  unsigned char style;          /* posenc_rope_style; bytes beside weight_bias, where a pad was */
  unsigned char stream;         /* 1: non-temporal stores allowed (the caller fences after its jobs) */
  /* NULL, or two buffers of POSENC_I_ROT_SCRATCH floats apart from c and s that the kernel may
   * overwrite (the bf16 NeoX kernel splits the cos/sin there into even and odd lanes) */
  float *scratch_c, *scratch_s;
} posenc_i_rot_job;
#define POSENC_I_ROT_SCRATCH 64

/* A rotation whose cos/sin rows are made as it goes (posenc_i_backend.rope_fly): the bits of
 * sincos_rows(*rows) for each token's position, then rotate(pass[i]) of the token over that row
 * (f32 PLANAR rows, as the on-the-fly rows are; the sines negated where inverse, GPT-J's expanded
 * as gptj_expand does), without a row in memory. The tokens: consecutive positions from
 * rows->start, inside one anchor block; the pairs: rows->nfreq (a multiple of POSENC_CHUNK) from the
 * rope's pair whose chunk rows->u and rows->step point at. Each pass's src and dst: its token 0 at
 * the first of those pairs, the next tokens src_ts and dst_ts bytes on; every pass of one style and
 * one pair of dtypes, in place or not alike, with no QK-norm and no streamed stores. prefetch:
 * before each token's heads the kernel asks for the lines each head rotates next (the chunk's at
 * the window's next token, the next chunk's at the window's first, the first chunk's at the next
 * window's first; at the last, the first chunk's next_call[i] bytes on from pass[i].src, the next
 * call's first; 0: none). pass[i].ahead is not read. rows->step:
 * E(1) of each lane (not NULL); rows->state: scratch of 4 * rows->nfreq doubles, the recurrence
 * kept there between windows of tokens (the SIMD kernels seed once, at the first token: the
 * tokens must not cross an anchor). */
#define POSENC_I_FLY_PASSES 2
typedef struct posenc_i_fly_job {
  const posenc_i_job *rows;
  posenc_i_rot_job pass[POSENC_I_FLY_PASSES];
  ptrdiff_t src_ts[POSENC_I_FLY_PASSES], dst_ts[POSENC_I_FLY_PASSES], next_call[POSENC_I_FLY_PASSES];
  size_t npass, tokens;
  int inverse, prefetch;
} posenc_i_fly_job;

/* The masked add over nrows rows of n columns (columns col0 .. col0+n-1 of the tensor), every
 * operation in f32 in this order, each rounded:
 *   forward:  v = x*scale; v = v + p; [dropout: v = v*k]; y = v rounded to y's dtype
 *   backward: v = x (the gradient g); [dropout: v = v*k]; [y: y = v*scale]; [gt: gt = gt + v]
 * k = 0 if lowbias32(keys[r] ^ (uint32)(col * 0x9E3779B9)) < threshold, else keep_scale. */
typedef struct posenc_i_add_job {
  const unsigned char *x; ptrdiff_t x_stride; posenc_dtype x_dtype;  /* bytes between rows */
  const unsigned char *p; ptrdiff_t p_stride; posenc_dtype p_dtype;  /* forward only */
  unsigned char *y; ptrdiff_t y_stride; posenc_dtype y_dtype;        /* backward: may be NULL */
  float *gt; ptrdiff_t gt_stride;                                    /* backward: f32 rows or NULL */
  size_t nrows, n, col0;
  float scale, keep_scale;
  const uint32_t *keys;                                              /* per row; NULL: no dropout */
  uint32_t threshold;
  int stream;                                                        /* forward: non-temporal y stores */
} posenc_i_add_job;

/* The bias add into one row of attention scores, segment by segment: columns [begin, seg[0].end),
 * then [seg[0].end, seg[1].end), ... Every value is f32 and is rounded once to the row's dtype:
 *   FILL:   -inf
 *   MASK:   s, or -inf where keep && keep[j] == 0 (keep NULL: the segment is not touched)
 *   CONST:  s + a, or -inf where keep && keep[j] == 0
 *   LINEAR: s + fl32(a * (float)(c + j)), or -inf likewise; j is the column, c an integer,
 *           |c + j| <= 2^24 (exact in f32)
 *   VALUES: s + v[j - start], or -inf likewise (start: the segment's first column) */
enum { POSENC_I_SEG_FILL = 0, POSENC_I_SEG_MASK = 1, POSENC_I_SEG_CONST = 2, POSENC_I_SEG_LINEAR = 3,
       POSENC_I_SEG_VALUES = 4 };
typedef struct posenc_i_bias_seg {
  size_t end;
  int kind;
  float a, c;
  const float *v;
} posenc_i_bias_seg;
typedef struct posenc_i_bias_job {
  unsigned char *row;            /* column 0 */
  posenc_dtype dtype;            /* F32 or F16 */
  const uint8_t *keep;           /* column 0's byte, or NULL */
  size_t begin;
  const posenc_i_bias_seg *seg;
  size_t nseg;
} posenc_i_bias_job;

/* A backend's kernels. Every slot is filled: a backend without a kernel of its own for a slot
 * names the scalar one there (posenc_simd.h on ARMv7), so call sites never check. */
typedef struct posenc_i_backend {
  posenc_isa isa;
  void (*sincos_rows)(const posenc_i_job *job);
  void (*rotate)(const posenc_i_rot_job *job);
  /* QK-norm's sum of squares of n values per head, in posenc_rope_norm's order (ss[head]) */
  void (*sumsq)(const unsigned char *src, posenc_dtype dtype, ptrdiff_t head_stride, size_t heads, size_t n,
                double *ss);
  /* n values of a dtype to f32, negated if negate (exact either way) */
  void (*to_f32)(const unsigned char *src, posenc_dtype dtype, float *dst, size_t n, int negate);
  /* GPT-J's expanded cos/sin of n pairs, from f32 values at c and s (step floats apart; bytes:
   * a cache row may lie anywhere): c2 = (c0 c0 c1 c1 ...), s2 = (-s0 s0 -s1 s1 ...), the sines
   * negated first if inverse */
  void (*gptj_expand)(const unsigned char *c, const unsigned char *s, size_t step, size_t n, int inverse, float *c2,
                      float *s2);
  /* n values from one dtype to another, rounded to nearest even (the same dtype: copied) */
  void (*convert)(const unsigned char *src, posenc_dtype sdt, unsigned char *dst, posenc_dtype ddt, size_t n);
  void (*add_fwd)(const posenc_i_add_job *job);  /* masked add rows */
  void (*add_bwd)(const posenc_i_add_job *job);  /* its backward */
  /* The masked add whose P rows are sinusoidal rows made on the fly: the bits of sincos_rows(rows)
   * into a buffer and add_fwd(add) over it, without the buffer (posenc_i_scalar_add_sinus). */
  void (*add_sinus)(const posenc_i_job *rows, const posenc_i_add_job *add);
  void (*bias_row)(const posenc_i_bias_job *job);
  /* RoPE's rotation with its rows made on the fly (posenc_i_fly_job; posenc_i_scalar_rope_fly) */
  void (*rope_fly)(const posenc_i_fly_job *job);
  /* orders the non-temporal stores of rotate's streaming jobs before what the caller does next */
  void (*fence)(void);
} posenc_i_backend;

/* The scalar kernels: the definitions every SIMD kernel reproduces bit for bit. Shared with the
 * per-ISA translation units, whose tables name them where they have no kernel of their own. */
#if defined(POSENC_STATIC)
#  define POSENC_I_SHARED static
#else
#  define POSENC_I_SHARED extern
#endif
POSENC_I_SHARED void posenc_i_scalar_sincos_rows(const posenc_i_job *job);
/* The scalar rotation kernel: the definition every SIMD rotation reproduces bit for bit. */
POSENC_I_SHARED void posenc_i_scalar_rotate(const posenc_i_rot_job *job);
POSENC_I_SHARED void posenc_i_scalar_to_f32(const unsigned char *src, posenc_dtype dtype, float *dst, size_t n,
                                            int negate);
POSENC_I_SHARED void posenc_i_scalar_gptj_expand(const unsigned char *c, const unsigned char *s, size_t step, size_t n,
                                                 int inverse, float *c2, float *s2);
POSENC_I_SHARED void posenc_i_scalar_sumsq(const unsigned char *src, posenc_dtype dtype, ptrdiff_t head_stride,
                                           size_t heads, size_t n, double *ss);
POSENC_I_SHARED void posenc_i_scalar_convert(const unsigned char *src, posenc_dtype sdt, unsigned char *dst,
                                             posenc_dtype ddt, size_t n);
POSENC_I_SHARED void posenc_i_scalar_add_fwd(const posenc_i_add_job *job);
POSENC_I_SHARED void posenc_i_scalar_add_bwd(const posenc_i_add_job *job);
POSENC_I_SHARED void posenc_i_scalar_add_sinus(const posenc_i_job *rows, const posenc_i_add_job *add);
POSENC_I_SHARED void posenc_i_scalar_bias_row(const posenc_i_bias_job *job);
POSENC_I_SHARED void posenc_i_scalar_rope_fly(const posenc_i_fly_job *job);

/* ---- Exact arithmetic, whatever the including file's flags ----------------------------------
 * The kernels need every IEEE operation done as written: (x + 1.5*2^52) - 1.5*2^52 rounds x to an
 * integer and the double-double steps recover rounding errors as b - (s - a), which reassociation
 * (-fassociative-math, part of -ffast-math and -Ofast) folds to x and 0; -ffinite-math-only folds
 * the NaN and infinity checks on input away; contraction fuses a*b + c. The implementation and
 * the kernels of posenc_simd.h lie between POSENC_I_PRECISE_BEGIN and POSENC_I_PRECISE_END, which
 * switch all of that off for posenc's own functions and give the rest of the file back its flags:
 *   GCC: push_options and optimize() naming each unsafe flag. A function's FP flags are its own,
 *     and GCC's inliner (ipa-inline.cc, can_inline_edge_by_limits_p) does not inline a function
 *     into one with other FP semantics, so code built with -Ofast calls posenc's functions rather
 *     than absorbing them. (-fcx-limited-range concerns complex division, which posenc has none of;
 *     -fexcess-precision only x87, which posenc refuses below.)
 *   clang 12 and later (Apple clang 13) on x86, PowerPC and SystemZ: float_control(precise, on,
 *     push), which also takes the back end's no-nans/no-infs/unsafe-fp-math attributes off posenc's
 *     functions (clang's test/CodeGen/fp-function-attrs.cpp), then contract(off), since precise
 *     means contract(on). clang ignores float_control on the targets it has no strict FP support
 *     for (LLVM's TargetInfo HasStrictFP; clang 14: ARM, AArch64, RISC-V, WebAssembly; llvm-project
 *     issue 55392): there only clang fp contract(off) and reassociate(off) apply, and they have no
 *     pop (the implementation file's code after posenc keeps them), so -ffast-math and
 *     -ffinite-math-only are refused below.
 *     Not in reach of any pragma: -ffp-contract=fast (which clang's -ffast-math and -Ofast imply)
 *     fuses in the back end on a target with FMA, and intrinsics that were defined before posenc
 *     (<immintrin.h>, <arm_neon.h> or SIMDe included first) carry the file's fast-math flags into
 *     the kernels they are inlined into. Both are refused below where the macros show them.
 *   MSVC: float_control(precise, on, push) and fp_contract(off), as /fp:precise has them
 *     (Microsoft's "float_control pragma" page); fp_contract is not on float_control's stack and
 *     stays off after the implementation, as it is by default since Visual Studio 2022.
 * Where none of that applies and the macros show an unsafe flag, the implementation does not
 * compile (below): a build that would be silently wrong stops with the flag and the fix. */
#if defined(__clang__) && (__clang_major__ >= 13 || (__clang_major__ == 12 && !defined(__apple_build_version__))) && \
    (defined(__i386__) || defined(__x86_64__) || defined(__powerpc__) || defined(__s390x__))
#  define POSENC_I_PRECISE_BEGIN _Pragma("float_control(precise, on, push)") _Pragma("STDC FP_CONTRACT OFF") \
    _Pragma("clang fp contract(off)")
#  define POSENC_I_PRECISE_END _Pragma("float_control(pop)")
#  define POSENC_I_PRECISE_PRAGMAS
#elif defined(__clang__) && (__clang_major__ >= 13 || (__clang_major__ >= 11 && !defined(__apple_build_version__)))
/* clang fp reassociate: LLVM 11 (Apple clang 13); an unknown clang fp option is an error */
#  define POSENC_I_PRECISE_BEGIN _Pragma("STDC FP_CONTRACT OFF") _Pragma("clang fp contract(off)") \
    _Pragma("clang fp reassociate(off)")
#  define POSENC_I_PRECISE_END
#elif defined(__clang__)
#  define POSENC_I_PRECISE_BEGIN _Pragma("STDC FP_CONTRACT OFF") _Pragma("clang fp contract(off)")
#  define POSENC_I_PRECISE_END
#elif defined(__GNUC__) && !defined(__INTEL_COMPILER)
#  define POSENC_I_PRECISE_BEGIN _Pragma("GCC push_options") _Pragma("GCC optimize(\"no-fast-math\", \
\"no-unsafe-math-optimizations\", \"no-associative-math\", \"no-reciprocal-math\", \"signed-zeros\", \"trapping-math\", \
\"no-finite-math-only\", \"no-cx-limited-range\", \"fp-contract=off\")")
#  define POSENC_I_PRECISE_END _Pragma("GCC pop_options")
#  if __GNUC__ >= 5
#    define POSENC_I_PRECISE_PRAGMAS
#  endif
#elif defined(_MSC_VER)
#  define POSENC_I_PRECISE_BEGIN __pragma(float_control(precise, on, push)) __pragma(fp_contract(off))
#  define POSENC_I_PRECISE_END __pragma(float_control(pop))
#  define POSENC_I_PRECISE_PRAGMAS
#else
#  define POSENC_I_PRECISE_BEGIN
#  define POSENC_I_PRECISE_END
#endif

#ifdef __cplusplus
}
#endif
#endif /* POSENC_H */

/* Fast-math flags that no pragma of this compiler undoes (see "Exact arithmetic" above): refused
 * in the files that compile posenc's arithmetic, the implementation and posenc_simd.h; once (this
 * part is read at every inclusion, and posenc_simd.h includes posenc.h too). */
#if (defined(POSENC_IMPLEMENTATION) || defined(POSENC_I_SIMD_ISA)) && !defined(POSENC_I_FAST_MATH_CHECKED) && \
    (defined(__FAST_MATH__) || (defined(__FINITE_MATH_ONLY__) && __FINITE_MATH_ONLY__))
#  define POSENC_I_FAST_MATH_CHECKED
#  if !defined(POSENC_I_PRECISE_PRAGMAS)
#    error "posenc: compiled with -ffast-math or -ffinite-math-only (__FAST_MATH__, __FINITE_MATH_ONLY__) by a compiler whose float pragmas cannot undo them here (posenc needs GCC 5, MSVC, or clang 12 / Apple clang 13 targeting x86, PowerPC or SystemZ: clang ignores #pragma float_control on ARM, AArch64, RISC-V and WebAssembly): build posenc's implementation file without -ffast-math / -Ofast, or add -fno-fast-math for that file"
#  elif defined(__clang__) && defined(__FAST_MATH__) && !defined(POSENC_FP_CONTRACT_ON) && \
      (defined(__FMA__) || defined(__FMA4__) || defined(__ARM_FEATURE_FMA) || \
       !(defined(__i386__) || defined(__x86_64__) || defined(__arm__) || defined(__wasm__)))
#    error "posenc: clang's -ffast-math / -Ofast include -ffp-contract=fast, which fuses a*b+c on this target (it has FMA) whatever posenc's pragmas say: add -ffp-contract=on after -ffast-math and define POSENC_FP_CONTRACT_ON to say so, or build posenc's implementation file without -ffast-math / -Ofast"
#  endif
#endif

/* =============================================================================================
 * Implementation
 * =========================================================================================== */
#if defined(POSENC_IMPLEMENTATION) && !defined(POSENC_IMPLEMENTATION_DONE)
#define POSENC_IMPLEMENTATION_DONE

/* Freestanding: the implementation needs <stddef.h>, <stdint.h> and <string.h> (mem* and
 * strcmp/strlen) and nothing else: no libm, no malloc, no stdio (tests/check_freestanding.py).
 * getenv (for POSENC_ISA) is used only in hosted builds; -DPOSENC_NO_GETENV leaves it out there. */
#include <string.h>
#if !defined(POSENC_NO_GETENV) && defined(__STDC_HOSTED__) && __STDC_HOSTED__ == 0
#  define POSENC_NO_GETENV
#endif
#if !defined(POSENC_NO_GETENV)
#  include <stdlib.h>
#endif

/* Exact IEEE arithmetic from here to the end of the implementation, whatever the file's flags
 * ("Exact arithmetic" above). GCC 12's vectorizers (on at -O2) build vfmaddsub from scalar code
 * even under fp-contract=off when the command line says -ffp-contract=fast, so they are switched
 * off too (the kernels are explicit SIMD). */
POSENC_I_PRECISE_BEGIN
#if defined(__GNUC__) && !defined(__clang__)
#  pragma GCC optimize("no-tree-slp-vectorize", "no-tree-loop-vectorize")
#endif

/* GCC and clang predefine __FLT_EVAL_METHOD__; other compilers (MSVC, x64/arm64: 0) define
 * FLT_EVAL_METHOD only in <float.h>, which a hosted build can include. */
#if !defined(__FLT_EVAL_METHOD__) && !(defined(__STDC_HOSTED__) && __STDC_HOSTED__ == 0)
#  include <float.h>
#  define POSENC_I_FLT_EVAL_METHOD FLT_EVAL_METHOD
#elif defined(__FLT_EVAL_METHOD__)
#  define POSENC_I_FLT_EVAL_METHOD __FLT_EVAL_METHOD__
#endif
/* 16 and 32 (ISO/IEC TS 18661-3, GCC's C mode with AVX512-FP16, e.g. -march=sapphirerapids) widen
 * only _Float16, which posenc does not compute with: float and double stay as they are. */
/* -1 (indeterminable) is also what GCC says on x86 where doubles may go through the x87
 * (x86-64 with -mno-sse2 or -mfpmath=sse,387): refused there, as the x87 is on i386. */
#if defined(POSENC_I_FLT_EVAL_METHOD) && (POSENC_I_FLT_EVAL_METHOD != 0) && (POSENC_I_FLT_EVAL_METHOD != -1) && \
    (POSENC_I_FLT_EVAL_METHOD != 16) && (POSENC_I_FLT_EVAL_METHOD != 32)
#  error "posenc needs IEEE arithmetic without excess precision (i386: -msse2 -mfpmath=sse; s390x with -std=c99: -fexcess-precision=fast)"
#elif defined(POSENC_I_FLT_EVAL_METHOD) && POSENC_I_FLT_EVAL_METHOD == -1 && \
    (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__) && !defined(__clang__)
#  error "posenc needs IEEE arithmetic without excess precision: doubles on the x87 (-mno-sse2 or -mfpmath=sse,387); use -msse2 -mfpmath=sse"
#endif
/* Double constants must be 64-bit doubles: GCC's -fsingle-precision-constant makes them float
 * (and a 32-bit double, as avr-gcc's -mdouble=32, is no better), which spoils every coefficient
 * and split constant (the self-test fails), and no macro says so. A double constant cast to an
 * integer is an integer constant expression that does: the array's size is negative, and its
 * name the error's reason. */
typedef char posenc_i_needs_64_bit_double_constants[(long)16777217.0 == 16777217L ? 1 : -1];

#ifdef __cplusplus
extern "C" {
#endif

/* =============================================================================================
 * Implementation, 1: primitives (bits, f16/bf16, double-double, hashes, sizes, the exact angle)
 * =========================================================================================== */

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
    case POSENC_ERR_SIZE: return "a size or count is zero, or two that must agree do not";
    case POSENC_ERR_OVERFLOW: return "the size arithmetic overflows";
    case POSENC_ERR_BUFFER: return "the output buffer is too small (or a rope's storage too small or misaligned)";
    case POSENC_ERR_LAYOUT: return "unknown layout";
    case POSENC_ERR_DTYPE: return "unknown dtype, or one this call does not take";
    case POSENC_ERR_BASE: return "base must be finite and in [1e-30, 1e30]";
    case POSENC_ERR_POSITION: return "position out of range (outside a cache's rows, past INT32_MAX, or too far for the exact reduction)";
    case POSENC_ERR_STRIDE: return "row stride is smaller than a row";
    case POSENC_ERR_ISA: return "ISA unknown, not compiled in, or not supported by this CPU";
    case POSENC_ERR_SELFTEST: return "self-test failed: this build or FP environment changes results";
    case POSENC_ERR_DIM: return "invalid dimension or count (a table dim with no frequency, odd rotary dim, rotary dim above head dim, odd bucket count), or a rope not initialised where it is (copied or moved after posenc_rope_init)";
    case POSENC_ERR_PARAM: return "a parameter is not finite or out of its range";
    case POSENC_ERR_ALIAS: return "buffers overlap or strides alias";
    case POSENC_ERR_PADDING: return "padding id or padding row out of range of the table";
    case POSENC_ERR_FORMAT: return "malformed serialized data";
    case POSENC_ERR_TABLE: return "a table is too small for its configuration (rows < buckets, columns < heads)";
    case POSENC_ERR_SUBNORMAL:
      return "self-test: flush-to-zero or denormals-are-zero mode: subnormal values differ, normal values are exact";
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

/* x / y: a quotient estimate and its correction from the remainder (not renormalised) */
static posenc_i_dd posenc_i_dd_div(posenc_i_dd x, posenc_i_dd y) {
  double q0 = x.hi / y.hi;
  posenc_i_dd r = posenc_i_dd_add(x, posenc_i_dd_mul_d(y, -q0));
  return posenc_i_dd_make(q0, r.hi / y.hi);
}

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

/* The double estimate's stage of a logarithm, for finite normal a > 0: a = 2^e * m with m in
 * (sqrt(1/2), sqrt(2)], and ln m = 2 atanh(s), s = (m-1)/(m+1), by its series (returned). */
static double posenc_i_log_series(double a, int *e_out) {
  uint64_t bits = posenc_i_dbits(a);
  int e = (int)((bits >> 52) & 0x7ff) - 1023, i;
  double m = posenc_i_bitsd((bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull), s, s2, t;
  if (m > 1.4142135623730951) { m *= 0.5; e++; }
  s = (m - 1.0) / (m + 1.0); s2 = s * s; t = 0.0;
  for (i = 29; i >= 3; i -= 2) t = (t + 1.0 / i) * s2;  /* atanh(s)/s - 1 */
  *e_out = e;
  return 2.0 * (s + s * t);
}

/* log(a) for finite a > 0 (normal), to about 2^-100: a double estimate, then one Newton step
 * y + a*exp(-y) - 1 in double-double. */
static posenc_i_dd posenc_i_dd_log(double a) {
  int e;
  double r = posenc_i_log_series(a, &e), y0;
  posenc_i_dd c;
  y0 = (double)e * posenc_i_LN2.hi + r;
  c = posenc_i_dd_mul_d(posenc_i_dd_exp(posenc_i_dd_make(-y0, 0.0)), a);
  c = posenc_i_dd_add(c, posenc_i_dd_make(-1.0, 0.0));
  return posenc_i_dd_add(posenc_i_dd_make(y0, 0.0), c);
}

/* sqrt(x) for finite x >= 0 from basic operations only (no libm): x is scaled by powers of 4 into
 * [1, 4) (exact), Newton's iteration runs from 1.5 (seven steps reach full precision from that
 * start), and one correction with the exact residual x - y*y (two_prod) rounds the result. */
static double posenc_i_sqrt(double x) {
  double f = 1.0, y = 1.5, r;
  posenc_i_dd yy;
  int i;
  if (!(x > 0.0)) return 0.0;
  while (x >= 18446744073709551616.0) { x *= 5.421010862427522e-20; f *= 4294967296.0; } /* 2^64 */
  while (x < 5.421010862427522e-20) { x *= 18446744073709551616.0; f *= 2.3283064365386963e-10; }
  while (x >= 4.0) { x *= 0.25; f *= 2.0; }
  while (x < 1.0) { x *= 4.0; f *= 0.5; }
  for (i = 0; i < 7; i++) y = 0.5 * (y + x / y);
  yy = posenc_i_two_prod(y, y);
  r = (x - yy.hi) - yy.lo;
  y = y + r / (2.0 * y);
  return y * f;
}
/* ln of a double-double (x.lo is a first-order correction to ln(x.hi)) */
static posenc_i_dd posenc_i_dd_log_dd(posenc_i_dd x) {
  return posenc_i_dd_add(posenc_i_dd_log(x.hi), posenc_i_dd_make(x.lo / x.hi, 0.0));
}
static double posenc_i_pow_d(double a, double e) { /* a^e, a > 0, to double (about 1e-30 rel before rounding) */
  return posenc_i_dd_exp(posenc_i_dd_mul_d(posenc_i_dd_log(a), e)).hi;
}
static double posenc_i_logd(double x) { return posenc_i_dd_log(x).hi; }
static double posenc_i_floor(double x) { /* |x| < 2^52 */
  double t = (x + POSENC_I_MAGIC) - POSENC_I_MAGIC; /* nearest */
  return t > x ? t - 1.0 : t;
}
static double posenc_i_ceil(double x) { return -posenc_i_floor(-x); }
static int posenc_i_finite(double x) { return x - x == 0.0; }
static int posenc_i_finite_pos(double x) { return x > 0.0 && x <= 1e300; }

/* ---- hashes: splitmix64 (dropout keys, learned tables) and lowbias32 (dropout) ------------- */
/* The splitmix64 finalizer (a bijection of 64-bit integers). */
static uint64_t posenc_i_mix64_fin(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
/* splitmix64: one golden step, then the finalizer */
static uint64_t posenc_i_mix64(uint64_t z) { return posenc_i_mix64_fin(z + 0x9E3779B97F4A7C15ull); }
static uint32_t posenc_i_lowbias32(uint32_t x) {
  x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16;
  return x;
}

/* ---- sizes and overlap of strided views ----------------------------------------------------- */
/* *ext = ext0 + (n-1)*stride elements, or ERR_OVERFLOW past SIZE_MAX. With ext0 = dim: the
 * elements n rows of dim elements, stride apart, span. n >= 1; stride > 0 where n > 1. */
static posenc_status posenc_i_extent(size_t n, size_t ext0, size_t stride, size_t *ext) {
  if (n > 1 && n - 1 > (SIZE_MAX - ext0) / stride) return POSENC_ERR_OVERFLOW;
  *ext = ext0 + (n - 1) * stride;
  return POSENC_OK;
}

/* elems elements of es bytes in bytes, within PTRDIFF_MAX, or ERR_OVERFLOW. */
static posenc_status posenc_i_bytes(size_t elems, size_t es, size_t *bytes) {
  if (elems > SIZE_MAX / es || elems * es > (size_t)PTRDIFF_MAX) return POSENC_ERR_OVERFLOW;
  *bytes = elems * es;
  return POSENC_OK;
}

/* Bytes of n rows of dim elements with a row stride (elements): ((n-1)*stride + dim) * es, and
 * the stride in bytes within PTRDIFF_MAX too (kernels step by it), or ERR_OVERFLOW. */
static posenc_status posenc_i_rows_span(size_t n, size_t dim, size_t stride, size_t es, size_t *bytes) {
  size_t last;
  if (posenc_i_extent(n, dim, stride, &last) != POSENC_OK || posenc_i_bytes(last, es, &last) != POSENC_OK ||
      stride > (size_t)PTRDIFF_MAX / es)
    return POSENC_ERR_OVERFLOW;
  *bytes = last;
  return POSENC_OK;
}

/* The one overlap rule of every strided view (RoPE tensors, embedding tensors, score tiles):
 * dim contiguous elements repeated along k axes, n[i] steps of st[i] elements. Sorted by stride
 * (equal strides keep their order), each axis longer than 1 must step past everything nested
 * inside it (a sufficient, simple rule), else ERR_ALIAS; ERR_OVERFLOW where the extent passes
 * SIZE_MAX, checked axis by axis in the same walk. *ext: the elements the view spans. Sorts n
 * and st in place. */
static posenc_status posenc_i_strided_extent(size_t dim, size_t *n, size_t *st, size_t k, size_t *ext) {
  size_t e = dim, i, j;
  for (i = 0; i < k; i++)
    for (j = i + 1; j < k; j++)
      if (st[j] < st[i]) { size_t a = st[i], b = n[i]; st[i] = st[j]; n[i] = n[j]; st[j] = a; n[j] = b; }
  for (i = 0; i < k; i++) {
    if (n[i] < 2) continue;
    if (st[i] < e) return POSENC_ERR_ALIAS;
    if (posenc_i_extent(n[i], e, st[i], &e) != POSENC_OK) return POSENC_ERR_OVERFLOW;
  }
  *ext = e;
  return POSENC_OK;
}

/* An output buffer of out_bytes for need: BUFFER where it is short, OVERFLOW where need bytes from
 * out would run past the end of the address space (a pointer no buffer of out_bytes can have: the
 * tensor views' extents are refused alike), else OK. */
static posenc_status posenc_i_out_room(const void *out, size_t out_bytes, size_t need) {
  if (out_bytes < need) return POSENC_ERR_BUFFER;
  if ((uintptr_t)out > UINTPTR_MAX - (uintptr_t)need) return POSENC_ERR_OVERFLOW;
  return POSENC_OK;
}

/* 1 if byte ranges [a, a+an) and [b, b+bn) meet: an output must not overwrite an input it reads. */
static int posenc_i_ranges_meet(const unsigned char *a, size_t an, const unsigned char *b, size_t bn) {
  uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
  return a0 < b0 + bn && b0 < a0 + an;
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

/* =============================================================================================
 * Implementation, 2: the scalar reference kernels, which posenc_simd.h mirrors bit for bit
 * =========================================================================================== */

/* ---- sinusoidal rows, rotation, conversion to f32 ------------------------------------------ */
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
POSENC_I_SCALAR_INLINE void posenc_i_store(unsigned char *dst, posenc_dtype dtype, float v) {
  if (dtype == POSENC_DTYPE_F32) { memcpy(dst, &v, 4); }
  else {
    uint16_t h = dtype == POSENC_DTYPE_F16 ? posenc_f32_to_f16(v) : posenc_f32_to_bf16(v);
    memcpy(dst, &h, 2);
  }
}

/* v rounded to a dtype, as storing it and loading it back gives. */
POSENC_I_SCALAR_INLINE float posenc_i_round_to(posenc_dtype dtype, float v) {
  if (dtype == POSENC_DTYPE_F32) return v;
  if (dtype == POSENC_DTYPE_F16) return posenc_f16_to_f32(posenc_f32_to_f16(v));
  return posenc_bf16_to_f32(posenc_f32_to_bf16(v));
}

static void posenc_i_store_row_lane(const posenc_i_job *job, size_t row, unsigned lane,
                                    double s, double c) {
  size_t es = posenc_dtype_size(job->dtype);
  unsigned char *base = job->out + (ptrdiff_t)row * job->row_stride;
  if (job->scaled) { s *= job->scale; c *= job->scale; }
  if (job->mode == POSENC_I_PAIRS) {
    double first = job->cos_first ? c : s, second = job->cos_first ? s : c;
    posenc_i_store(base + (size_t)2 * lane * es, job->dtype, (float)first);
    if (2 * lane + 1 < job->pair_cols)
      posenc_i_store(base + (size_t)(2 * lane + 1) * es, job->dtype, (float)second);
  } else {
    posenc_i_store(base + (size_t)lane * es, job->dtype, (float)s);
    posenc_i_store(base + job->cos_offset + (ptrdiff_t)(lane * es), job->dtype, (float)c);
  }
}

/* The scalar reference kernel: the definition every SIMD kernel must reproduce bit for bit. */
POSENC_I_SHARED void posenc_i_scalar_sincos_rows(const posenc_i_job *job) {
  unsigned lane;
  for (lane = 0; lane < job->nfreq; lane++) {
    const double *u = job->u + (lane / POSENC_CHUNK) * POSENC_UPARTS * POSENC_CHUNK + lane % POSENC_CHUNK;
    double ss, sc, k2, s, c, sp, cp;
    size_t row = 0;
    if (job->step) {
      const double *e = job->step + (lane / POSENC_CHUNK) * 2 * POSENC_CHUNK + lane % POSENC_CHUNK;
      ss = e[0]; sc = e[POSENC_CHUNK];
    } else {
      posenc_i_exact_sincos(1.0, u, POSENC_CHUNK, &ss, &sc);
    }
    k2 = 2.0 * sc;
    while (row < job->nrows) {
      int64_t p = job->positions ? job->positions[row] : (int64_t)job->start + (int64_t)row;
      int64_t a = POSENC_I_ANCHOR_OF(p), j;
      double *state = job->state ? job->state + (lane / POSENC_CHUNK) * 4 * POSENC_CHUNK + lane % POSENC_CHUNK : NULL;
      if (state && job->resume && row == 0 && !job->positions && p != a) { /* start - 1's state */
        s = state[0]; c = state[POSENC_CHUNK]; sp = state[2 * POSENC_CHUNK]; cp = state[3 * POSENC_CHUNK];
        a = p - 1;
      } else {
        posenc_i_exact_sincos((double)a, u, POSENC_CHUNK, &s, &c);
        POSENC_I_BACK(s, c, sp, cp, ss, sc);
      }
      for (j = a; j < p; j++) POSENC_I_STEP(s, c, sp, cp, k2);
      /* consecutive positions continue the recurrence up to the next anchor */
      for (;;) {
        posenc_i_store_row_lane(job, row, lane, s, c);
        row++;
        if (job->positions || row >= job->nrows || ((p + 1) & (POSENC_ANCHOR - 1)) == 0) break;
        POSENC_I_STEP(s, c, sp, cp, k2);
        p++;
      }
      if (state) {
        state[0] = s; state[POSENC_CHUNK] = c; state[2 * POSENC_CHUNK] = sp; state[3 * POSENC_CHUNK] = cp;
      }
    }
  }
}

/* Load one value of a dtype as f32 (exact). */
POSENC_I_SCALAR_INLINE float posenc_i_load(const unsigned char *src, posenc_dtype dtype) {
  float v; uint16_t h;
  if (dtype == POSENC_DTYPE_F32) { memcpy(&v, src, 4); return v; }
  memcpy(&h, src, 2);
  return dtype == POSENC_DTYPE_F16 ? posenc_f16_to_f32(h) : posenc_bf16_to_f32(h);
}

/* Element e of a head as the rotation reads it: the input in f32, normalised by a QK-norm's r. */
static float posenc_i_rot_load(const posenc_i_rot_job *job, const unsigned char *x, size_t e, float r) {
  float v = posenc_i_load(x + e * posenc_dtype_size(job->src_dtype), job->src_dtype);
  if (job->norm_scale) v = (v * r) * (job->norm_weight[e] + job->weight_bias);
  return v;
}

/* The scalar rotation kernel: the definition every SIMD rotation reproduces bit for bit. */
POSENC_I_SHARED void posenc_i_scalar_rotate(const posenc_i_rot_job *job) {
  size_t des = posenc_dtype_size(job->dst_dtype), h, j, e;
  for (h = 0; h < job->heads; h++) {
    const unsigned char *x = job->src + (ptrdiff_t)h * job->src_head_stride;
    unsigned char *y = job->dst + (ptrdiff_t)h * job->dst_head_stride;
    float r = job->norm_scale ? job->norm_scale[h] : 1.0f;
    for (j = 0; j < job->pairs; j++) {
      /* NEOX: (j, j + half) with c[j], s[j]; GPTJ: (2j, 2j + 1) with the expanded rows */
      size_t e0 = job->style == POSENC_ROPE_NEOX ? j : 2 * j;
      size_t e1 = job->style == POSENC_ROPE_NEOX ? j + job->half : 2 * j + 1;
      float x0 = posenc_i_rot_load(job, x, e0, r), x1 = posenc_i_rot_load(job, x, e1, r), o0, o1;
      if (job->style == POSENC_ROPE_NEOX) {
        o0 = x0 * job->c[j] - x1 * job->s[j];
        o1 = x1 * job->c[j] + x0 * job->s[j];
      } else {
        o0 = x0 * job->c[e0] + x1 * job->s[e0];   /* s[e0] = -sin */
        o1 = x1 * job->c[e1] + x0 * job->s[e1];
      }
      posenc_i_store(y + e0 * des, job->dst_dtype, o0);
      posenc_i_store(y + e1 * des, job->dst_dtype, o1);
    }
    if (job->norm_scale) /* the dims past rotary_dim, normalised */
      for (e = job->tail_from; e < job->dim; e++) posenc_i_store(y + e * des, job->dst_dtype, posenc_i_rot_load(job, x, e, r));
  }
}

/* The scalar rope_fly: token by token, a chunk of pairs at a time, the chunk's row made by the
 * scalar row kernel (its recurrence carried in rows->state from the token before), as the rotation
 * reads it (sines negated where inverse, GPT-J's expanded), then the scalar rotation. */
POSENC_I_SHARED void posenc_i_scalar_rope_fly(const posenc_i_fly_job *job) {
  const int gptj = job->pass[0].style == POSENC_ROPE_GPTJ;
  float row[2 * POSENC_CHUNK], c[2 * POSENC_CHUNK], s[2 * POSENC_CHUNK]; /* row: cos, then sin */
  posenc_i_job r = *job->rows;
  size_t t, i;
  unsigned ch;
  r.nfreq = POSENC_CHUNK;
  r.nrows = 1;
  r.positions = NULL;
  r.out = (unsigned char *)(row + POSENC_CHUNK);
  r.cos_offset = -(ptrdiff_t)(POSENC_CHUNK * sizeof(float));
  for (t = 0; t < job->tokens; t++)
    for (ch = 0; ch * POSENC_CHUNK < job->rows->nfreq; ch++) {
      r.u = job->rows->u + (size_t)ch * POSENC_UPARTS * POSENC_CHUNK;
      r.step = job->rows->step + (size_t)ch * 2 * POSENC_CHUNK;
      r.state = job->rows->state + (size_t)ch * 4 * POSENC_CHUNK;
      r.start = (int32_t)((int64_t)job->rows->start + (int64_t)t);
      r.resume = t > 0;
      posenc_i_scalar_sincos_rows(&r);
      if (gptj) {
        posenc_i_scalar_gptj_expand((const unsigned char *)row, (const unsigned char *)(row + POSENC_CHUNK), 1,
                                    POSENC_CHUNK, job->inverse, c, s);
      } else {
        memcpy(c, row, sizeof(float) * POSENC_CHUNK);
        posenc_i_scalar_to_f32((const unsigned char *)(row + POSENC_CHUNK), POSENC_DTYPE_F32, s, POSENC_CHUNK,
                               job->inverse);
      }
      for (i = 0; i < job->npass; i++) {
        posenc_i_rot_job rj = job->pass[i];
        const size_t e0 = (size_t)ch * POSENC_CHUNK * (gptj ? 2 : 1); /* the chunk's first element */
        rj.src += (ptrdiff_t)t * job->src_ts[i] + (ptrdiff_t)(e0 * posenc_dtype_size(rj.src_dtype));
        rj.dst += (ptrdiff_t)t * job->dst_ts[i] + (ptrdiff_t)(e0 * posenc_dtype_size(rj.dst_dtype));
        rj.pairs = POSENC_CHUNK;
        rj.c = c; rj.s = s;
        posenc_i_scalar_rotate(&rj);
      }
    }
}

/* QK-norm's sum of squares (posenc_rope_norm): eight double accumulators by e mod 8, then a
 * fixed tree; every square is exact in double. */
POSENC_I_SHARED void posenc_i_scalar_sumsq(const unsigned char *src, posenc_dtype dtype, ptrdiff_t head_stride,
                                           size_t heads, size_t n, double *ss) {
  size_t es = posenc_dtype_size(dtype), h, e, k;
  for (h = 0; h < heads; h++) {
    const unsigned char *x = src + (ptrdiff_t)h * head_stride;
    double a[8];
    for (k = 0; k < 8; k++) a[k] = 0.0;
    for (e = 0; e < n; e++) {
      double v = (double)posenc_i_load(x + e * es, dtype);
      a[e % 8] += v * v;
    }
    ss[h] = ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
  }
}

POSENC_I_SHARED void posenc_i_scalar_to_f32(const unsigned char *src, posenc_dtype dtype, float *dst, size_t n, int negate) {
  size_t es = posenc_dtype_size(dtype), i;
  for (i = 0; i < n; i++) dst[i] = negate ? -posenc_i_load(src + i * es, dtype) : posenc_i_load(src + i * es, dtype);
}

POSENC_I_SHARED void posenc_i_scalar_gptj_expand(const unsigned char *c, const unsigned char *s, size_t step, size_t n,
                                                 int inverse, float *c2, float *s2) {
  size_t k;
  for (k = 0; k < n; k++) {
    float cv, sv;
    memcpy(&cv, c + k * step * sizeof(float), sizeof cv);
    memcpy(&sv, s + k * step * sizeof(float), sizeof sv);
    if (inverse) sv = -sv;
    c2[2 * k] = cv; c2[2 * k + 1] = cv;
    s2[2 * k] = -sv; s2[2 * k + 1] = sv;
  }
}

POSENC_I_SHARED void posenc_i_scalar_convert(const unsigned char *src, posenc_dtype sdt, unsigned char *dst,
                                             posenc_dtype ddt, size_t n) {
  size_t ses = posenc_dtype_size(sdt), des = posenc_dtype_size(ddt), i;
  if (sdt == ddt) { memcpy(dst, src, n * ses); return; }
  for (i = 0; i < n; i++) posenc_i_store(dst + i * des, ddt, posenc_i_load(src + i * ses, sdt));
}

/* ---- masked add: the scalar kernels (every SIMD kernel reproduces them bit for bit) -------- */
static float posenc_i_add_keep(const posenc_i_add_job *job, size_t r, size_t j) {
  uint32_t h = posenc_i_lowbias32(job->keys[r] ^ (uint32_t)((uint32_t)(job->col0 + j) * 0x9E3779B9u));
  return h < job->threshold ? 0.0f : job->keep_scale;
}

/* The forward of column j of row r (x, y: that row), P's value p given. */
POSENC_I_SCALAR_INLINE void posenc_i_add_value(const posenc_i_add_job *job, size_t r, size_t j, const unsigned char *x,
                                               unsigned char *y, float p) {
  float v = posenc_i_load(x + j * posenc_dtype_size(job->x_dtype), job->x_dtype) * job->scale;
  v = v + p;
  if (job->keys) v = v * posenc_i_add_keep(job, r, j);
  posenc_i_store(y + j * posenc_dtype_size(job->y_dtype), job->y_dtype, v);
}

POSENC_I_SHARED void posenc_i_scalar_add_fwd(const posenc_i_add_job *job) {
  size_t ps = posenc_dtype_size(job->p_dtype), r, j;
  for (r = 0; r < job->nrows; r++) {
    const unsigned char *x = job->x + (ptrdiff_t)r * job->x_stride, *p = job->p + (ptrdiff_t)r * job->p_stride;
    unsigned char *y = job->y + (ptrdiff_t)r * job->y_stride;
    if (!job->keys && job->x_dtype == POSENC_DTYPE_F32 && job->p_dtype == POSENC_DTYPE_F32 &&
        job->y_dtype == POSENC_DTYPE_F32) { /* the same operations, without the per-element dispatch */
      for (j = 0; j < job->n; j++) {
        float a, c, v;
        memcpy(&a, x + 4 * j, 4); memcpy(&c, p + 4 * j, 4);
        v = a * job->scale;
        v = v + c;
        memcpy(y + 4 * j, &v, 4);
      }
      continue;
    }
    for (j = 0; j < job->n; j++) posenc_i_add_value(job, r, j, x, y, posenc_i_load(p + j * ps, job->p_dtype));
  }
}

POSENC_I_SHARED void posenc_i_scalar_add_bwd(const posenc_i_add_job *job) {
  size_t xs = posenc_dtype_size(job->x_dtype), ys = posenc_dtype_size(job->y_dtype), r, j;
  for (r = 0; r < job->nrows; r++) {
    const unsigned char *x = job->x + (ptrdiff_t)r * job->x_stride;
    unsigned char *y = job->y ? job->y + (ptrdiff_t)r * job->y_stride : NULL;
    float *gt = job->gt ? job->gt + (ptrdiff_t)r * job->gt_stride : NULL;
    if (!job->keys && job->x_dtype == POSENC_DTYPE_F32 && y && job->y_dtype == POSENC_DTYPE_F32 && gt) {
      for (j = 0; j < job->n; j++) { /* the same operations, without the per-element dispatch */
        float v, w;
        memcpy(&v, x + 4 * j, 4);
        w = v * job->scale;
        memcpy(y + 4 * j, &w, 4);
        gt[j] = gt[j] + v;
      }
      continue;
    }
    for (j = 0; j < job->n; j++) {
      float v = posenc_i_load(x + j * xs, job->x_dtype);
      if (job->keys) v = v * posenc_i_add_keep(job, r, j);
      if (y) posenc_i_store(y + j * ys, job->y_dtype, v * job->scale);
      if (gt) gt[j] = gt[j] + v;
    }
  }
}

/* The masked add of sinusoidal rows made on the fly (the add_sinus slot): bit for bit what
 * posenc_i_scalar_sincos_rows(rows) into a buffer and then posenc_i_scalar_add_fwd(add) over it
 * give, with no buffer (a block of rows in cache took 32 KiB of stack): each lane walks an anchor
 * block's rows as posenc_i_scalar_sincos_rows does, its recurrence in registers, adding each value
 * as it is made. A chunk's lanes in turn, so that their columns of the block stay in L1. rows:
 * consecutive positions (positions NULL), sin first and unscaled, out unused; add: p unused, its
 * columns the rows' (PAIRS: pair_cols of them; PLANAR: nfreq sin columns at x and y, their cos
 * columns rows->cos_col further), its keys one per row. */
POSENC_I_SHARED void posenc_i_scalar_add_sinus(const posenc_i_job *rows, const posenc_i_add_job *add) {
  const int pairs = rows->mode == POSENC_I_PAIRS;
  /* f32 throughout and no dropout: the same operations without the per-element dispatch */
  const int plain = !add->keys && rows->dtype == POSENC_DTYPE_F32 && add->x_dtype == POSENC_DTYPE_F32 &&
                    add->y_dtype == POSENC_DTYPE_F32;
  const size_t cos_col = pairs ? 1 : rows->cos_col;
  const float scale = add->scale;
  unsigned ch, lane;
  for (ch = 0; ch * POSENC_CHUNK < rows->nfreq; ch++) {
    const unsigned lanes = rows->nfreq - ch * POSENC_CHUNK < POSENC_CHUNK ? rows->nfreq - ch * POSENC_CHUNK
                                                                            : POSENC_CHUNK;
    const double *const uc = rows->u + (size_t)ch * POSENC_UPARTS * POSENC_CHUNK; /* the chunk's parts */
    double ss[POSENC_CHUNK], sc[POSENC_CHUNK];
    size_t row = 0;
    for (lane = 0; lane < lanes; lane++) posenc_i_exact_sincos(1.0, uc + lane, POSENC_CHUNK, &ss[lane], &sc[lane]);
    while (row < rows->nrows) {
      const int64_t p0 = (int64_t)rows->start + (int64_t)row, a = POSENC_I_ANCHOR_OF(p0);
      size_t nblock = (size_t)(a + POSENC_ANCHOR - p0);
      if (nblock > rows->nrows - row) nblock = rows->nrows - row;
      for (lane = 0; lane < lanes; lane++) {
        const size_t col = (size_t)(ch * POSENC_CHUNK + lane) * (pairs ? 2 : 1);
        const int has_cos = !pairs || col + 1 < rows->pair_cols;
        const double k2 = 2.0 * sc[lane];
        double s, c, sp, cp;
        size_t r;
        int64_t j;
        posenc_i_exact_sincos((double)a, uc + lane, POSENC_CHUNK, &s, &c);
        POSENC_I_BACK(s, c, sp, cp, ss[lane], sc[lane]);
        for (j = a; j < p0; j++) POSENC_I_STEP(s, c, sp, cp, k2);
        for (r = row;; r++) {
          const unsigned char *x = add->x + (ptrdiff_t)r * add->x_stride;
          unsigned char *y = add->y + (ptrdiff_t)r * add->y_stride;
          if (plain) {
            float xv, v;
            memcpy(&xv, x + 4 * col, 4); v = xv * scale; v = v + (float)s; memcpy(y + 4 * col, &v, 4);
            if (has_cos) {
              memcpy(&xv, x + 4 * (col + cos_col), 4); v = xv * scale; v = v + (float)c;
              memcpy(y + 4 * (col + cos_col), &v, 4);
            }
          } else { /* P's values as the buffer would hold them: rounded to its dtype */
            posenc_i_add_value(add, r, col, x, y, posenc_i_round_to(rows->dtype, (float)s));
            if (has_cos) posenc_i_add_value(add, r, col + cos_col, x, y, posenc_i_round_to(rows->dtype, (float)c));
          }
          if (r + 1 == row + nblock) break;
          POSENC_I_STEP(s, c, sp, cp, k2);
        }
      }
      row += nblock;
    }
  }
}

/* ---- the bias row -------------------------------------------------------------------------- */
/* The scalar bias-row kernel: the definition every SIMD kernel reproduces bit for bit. */
POSENC_I_SHARED void posenc_i_scalar_bias_row(const posenc_i_bias_job *job) {
  const size_t es = job->dtype == POSENC_DTYPE_F32 ? 4 : 2;
  const float ninf = posenc_i_bitsf(0xff800000u);
  size_t j = job->begin, k;
  for (k = 0; k < job->nseg; k++) {
    const posenc_i_bias_seg *sg = &job->seg[k];
    const size_t start = j;
    if (sg->kind == POSENC_I_SEG_MASK && !job->keep) { j = sg->end; continue; }
    for (; j < sg->end; j++) {
      unsigned char *p = job->row + j * es;
      float v;
      if (sg->kind == POSENC_I_SEG_FILL || (job->keep && job->keep[j] == 0)) v = ninf;
      else if (sg->kind == POSENC_I_SEG_MASK) continue;
      else if (sg->kind == POSENC_I_SEG_CONST) v = posenc_i_load(p, job->dtype) + sg->a;
      else if (sg->kind == POSENC_I_SEG_VALUES) v = posenc_i_load(p, job->dtype) + sg->v[j - start];
      else v = posenc_i_load(p, job->dtype) + sg->a * (float)((int64_t)sg->c + (int64_t)j);
      posenc_i_store(p, job->dtype, v);
    }
  }
}

/* =============================================================================================
 * Implementation, 3: dispatch (the ISA table: backend tables, CPU detection, selection)
 * =========================================================================================== */

/* The scalar kernels store nothing non-temporal: nothing to order. */
static void posenc_i_scalar_fence(void) {}

const posenc_i_backend posenc_i_backend_scalar = {POSENC_ISA_SCALAR, posenc_i_scalar_sincos_rows,
                                                  posenc_i_scalar_rotate, posenc_i_scalar_sumsq, posenc_i_scalar_to_f32,
                                                  posenc_i_scalar_gptj_expand, posenc_i_scalar_convert,
                                                  posenc_i_scalar_add_fwd, posenc_i_scalar_add_bwd,
                                                  posenc_i_scalar_add_sinus, posenc_i_scalar_bias_row,
                                                  posenc_i_scalar_rope_fly, posenc_i_scalar_fence};

/* ---- backends: which are compiled in ------------------------------------------------------
 * A build with run-time dispatch compiles posenc_simd.h once per ISA (src/posenc_<name>.c) and
 * defines POSENC_WITH_<NAME> here for each. Single-file use gets the one that posenc_simd.h
 * instantiated (it defines POSENC_I_BUILTIN_<NAME> before including this file).
 * POSENC_I_DEFINED(M) is 1 when the macro M is defined as 1 or as nothing, else 0: `defined`
 * cannot be written by a macro, so the table's rows test their macros this way (the trick of
 * Linux's IS_ENABLED, include/linux/kconfig.h). */
#define POSENC_I_PLACEHOLDER_1 0,
#define POSENC_I_PLACEHOLDER_ 0,
#define POSENC_I_SECOND(ignored, value, ...) value
#define POSENC_I_DEFINED(m) POSENC_I_DEFINED_(m)
#define POSENC_I_DEFINED_(value) POSENC_I_DEFINED__(POSENC_I_PLACEHOLDER_##value)
#define POSENC_I_DEFINED__(placeholder_or_junk) POSENC_I_SECOND(placeholder_or_junk 1, 0, 0)
#define POSENC_I_BUILTIN_SCALAR 1
#define POSENC_I_ISA_EXTERN(name, NAME, prio, detect, build) extern const posenc_i_backend posenc_i_backend_##name;
POSENC_I_ISA_TABLE(POSENC_I_ISA_EXTERN)
#undef POSENC_I_ISA_EXTERN

/* Every backend's table, or NULL where this build does not have it. An absent backend's table
 * is named only in a branch the compiler folds away, so nothing links to it. */
#define POSENC_I_ISA_BACKEND(name, NAME, prio, detect, build)                                   \
  (POSENC_I_DEFINED(POSENC_WITH_##NAME) || POSENC_I_DEFINED(POSENC_I_BUILTIN_##NAME)) ? &posenc_i_backend_##name \
                                                                                     : NULL,
static const posenc_i_backend *const posenc_i_backends[POSENC_ISA_COUNT] = {
    POSENC_I_ISA_TABLE(POSENC_I_ISA_BACKEND)};
#undef POSENC_I_ISA_BACKEND

static const posenc_i_backend *posenc_i_backend_of(posenc_isa isa) {
  return isa >= 0 && isa < POSENC_ISA_COUNT ? posenc_i_backends[isa] : NULL;
}

/* The dispatch's shared state (the CPU's features, the active backend), read with acquire and
 * written with release ordering:
 *   MSVC (cl.exe; clang-cl too, so that CI runs cl.exe's code): the Interlocked intrinsics, in C
 *     and C++ (cl.exe's C has no <stdatomic.h> without /experimental:c11atomics). The int-sized
 *     state is long-sized there (Windows is LLP64). They are full barriers;
 *   C11 and later (not C++): <stdatomic.h>;
 *   GCC and clang in C99 or C++: the __atomic builtins (what C11's atomics compile to);
 *   any other compiler: plain accesses, so a program that makes its first posenc calls from
 *     several threads at once must call posenc_isa_active() once before starting them.
 * POSENC_I_ATOMIC(T) declares a variable; POSENC_I_LOAD/STORE access an int or an enum,
 * POSENC_I_LOAD_PTR/STORE_PTR a pointer, sequentially consistent (posenc_i_select needs a store
 * then a load of another variable kept in that order; a compare-and-swap would do too, but GCC
 * makes it a call to libgcc on aarch64, which the freestanding core must not need). */
#if defined(_MSC_VER)
#  include <intrin.h>
#  define POSENC_I_ATOMIC(T) T volatile
#  define POSENC_I_LOAD(x) _InterlockedOr((long volatile *)&(x), 0)
#  define POSENC_I_STORE(x, v) ((void)_InterlockedExchange((long volatile *)&(x), (long)(v)))
#  define POSENC_I_LOAD_PTR(x) _InterlockedCompareExchangePointer((void *volatile *)&(x), NULL, NULL)
#  define POSENC_I_STORE_PTR(x, v) ((void)_InterlockedExchangePointer((void *volatile *)&(x), (void *)(v)))
#elif !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__STDC_NO_ATOMICS__)
#  include <stdatomic.h>
#  define POSENC_I_ATOMIC(T) _Atomic(T)
#  define POSENC_I_LOAD(x) atomic_load_explicit(&(x), memory_order_acquire)
#  define POSENC_I_STORE(x, v) atomic_store_explicit(&(x), (v), memory_order_release)
#  define POSENC_I_LOAD_PTR(x) atomic_load_explicit(&(x), memory_order_seq_cst)
#  define POSENC_I_STORE_PTR(x, v) atomic_store_explicit(&(x), (v), memory_order_seq_cst)
#elif defined(__GNUC__) || defined(__clang__)
#  define POSENC_I_ATOMIC(T) T
#  define POSENC_I_LOAD(x) __atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#  define POSENC_I_STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELEASE)
#  define POSENC_I_LOAD_PTR(x) __atomic_load_n(&(x), __ATOMIC_SEQ_CST)
#  define POSENC_I_STORE_PTR(x, v) __atomic_store_n(&(x), (v), __ATOMIC_SEQ_CST)
#else
#  define POSENC_I_ATOMIC(T) T volatile
#  define POSENC_I_LOAD(x) (x)
#  define POSENC_I_STORE(x, v) ((x) = (v))
#endif
#if !defined(POSENC_I_LOAD_PTR)
#  define POSENC_I_LOAD_PTR POSENC_I_LOAD
#  define POSENC_I_STORE_PTR POSENC_I_STORE
#endif

/* ---- backends: which this CPU runs ---------------------------------------------------------
 * The features the table's detect column asks for, read from the CPU once (posenc_i_cpu_has): x86
 * from CPUID, with the OS's XSAVE state (XCR0) for YMM and ZMM registers, since an OS that does
 * not save them makes the instructions fault; ARMv7 Linux from HWCAP. Bits 0-29 (bit 30 marks
 * the kept features as read). */
enum {
  POSENC_I_CPU_SSE2 = 1 << 0,
  POSENC_I_CPU_AVX2 = 1 << 1,   /* AVX and AVX2, YMM state enabled by the OS */
  POSENC_I_CPU_F16C = 1 << 2,
  POSENC_I_CPU_AVX512 = 1 << 3, /* AVX-512 F, BW, DQ and VL; opmask and ZMM state enabled by the OS */
  POSENC_I_CPU_NEON = 1 << 4,
  POSENC_I_CPU_BF16 = 1 << 5,   /* AVX512_BF16 (its instructions need the AVX-512 state above) */
  POSENC_I_CPU_SIMD128 = 1 << 6 /* WebAssembly's fixed-width SIMD */
};

/* CPUID and XGETBV: MSVC's <intrin.h> intrinsics (cl.exe and clang-cl, which define _MSC_VER;
 * cl.exe has neither <cpuid.h> nor GNU inline assembly), else GCC's and clang's <cpuid.h>. */
#if defined(_MSC_VER) && (defined(_M_X64) || defined(_M_IX86))
#  include <intrin.h>
#  define POSENC_I_X86_CPUID
static unsigned posenc_i_cpuid_max(void) {
  int r[4];
  __cpuid(r, 0);
  return (unsigned)r[0];
}
static void posenc_i_cpuid(unsigned leaf, unsigned subleaf, unsigned r[4]) {
  int v[4];
  __cpuidex(v, (int)leaf, (int)subleaf);
  r[0] = (unsigned)v[0]; r[1] = (unsigned)v[1]; r[2] = (unsigned)v[2]; r[3] = (unsigned)v[3];
}
static uint64_t posenc_i_xcr0(void) { return (uint64_t)_xgetbv(0); }
#elif (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#  include <cpuid.h>
#  define POSENC_I_X86_CPUID
static unsigned posenc_i_cpuid_max(void) { return (unsigned)__get_cpuid_max(0, NULL); } /* 0: no CPUID */
static void posenc_i_cpuid(unsigned leaf, unsigned subleaf, unsigned r[4]) {
  __cpuid_count(leaf, subleaf, r[0], r[1], r[2], r[3]);
}
static uint64_t posenc_i_xcr0(void) {
  uint32_t lo, hi;
  __asm__ __volatile__(".byte 0x0f, 0x01, 0xd0" : "=a"(lo), "=d"(hi) : "c"(0)); /* xgetbv */
  return ((uint64_t)hi << 32) | lo;
}
#endif

#if defined(POSENC_I_X86_CPUID)
static unsigned posenc_i_cpu_features(void) {
  /* CPUID.1: EDX 26 SSE2, ECX 27 OSXSAVE, 28 AVX, 29 F16C; CPUID.(7,0):EBX 5 AVX2, 16 AVX512F,
   * 17 AVX512DQ, 30 AVX512BW, 31 AVX512VL; CPUID.(7,1):EAX 5 AVX512_BF16. XCR0 (read with XGETBV,
   * valid only where OSXSAVE says the OS enabled it) bits 1-2: XMM and YMM state; 5-7: opmask,
   * the upper halves of ZMM0-15, and ZMM16-31 (Intel SDM vol. 1, 13.3 and 15.2).
   * r: EAX, EBX, ECX, EDX. */
  unsigned r[4], f = 0, max = posenc_i_cpuid_max();
  uint64_t xcr0 = 0;
  if (max < 1) return 0;
  posenc_i_cpuid(1, 0, r);
  if (r[3] & (1u << 26)) f |= POSENC_I_CPU_SSE2;
  if (r[2] & (1u << 27)) xcr0 = posenc_i_xcr0();
  if ((xcr0 & 0x6) != 0x6 || !(r[2] & (1u << 28))) return f; /* no AVX state: nothing wider */
  if (r[2] & (1u << 29)) f |= POSENC_I_CPU_F16C;
  if (max < 7) return f;
  posenc_i_cpuid(7, 0, r);
  if (r[1] & (1u << 5)) f |= POSENC_I_CPU_AVX2;
  if ((r[1] & 0xC0030000u) == 0xC0030000u && (xcr0 & 0xE6) == 0xE6) f |= POSENC_I_CPU_AVX512;
  if (r[0] >= 1) { /* EAX: the highest subleaf of leaf 7 */
    posenc_i_cpuid(7, 1, r);
    if (r[0] & (1u << 5)) f |= POSENC_I_CPU_BF16;
  }
  return f;
}
#elif defined(__aarch64__) || defined(_M_ARM64)
static unsigned posenc_i_cpu_features(void) { return POSENC_I_CPU_NEON; } /* part of ARMv8-A */
#elif defined(__arm__) && defined(__linux__)
#  include <sys/auxv.h>
static unsigned posenc_i_cpu_features(void) {
  return (getauxval(AT_HWCAP) & (1ul << 12)) ? POSENC_I_CPU_NEON : 0; /* HWCAP_NEON */
}
#elif defined(__ARM_NEON)
static unsigned posenc_i_cpu_features(void) { return POSENC_I_CPU_NEON; } /* compiled for it: the target has it */
#elif defined(__wasm_simd128__)
/* WebAssembly cannot ask: an engine without SIMD128 refuses to load a module compiled for it, so
 * a module that runs was compiled for what the engine has. */
static unsigned posenc_i_cpu_features(void) { return POSENC_I_CPU_SIMD128; }
#elif defined(__x86_64__) || defined(_M_X64)
static unsigned posenc_i_cpu_features(void) { return POSENC_I_CPU_SSE2; } /* part of x86-64 */
#else
static unsigned posenc_i_cpu_features(void) { return 0; }
#endif

/* The features, read once: every first use and posenc_isa_set ask about each backend, and so do
 * callers' own loops over backends, and under a hypervisor each CPUID exits to it (12-16% of a
 * test looping over backends natively). posenc_i_cpu_seen holds them with POSENC_I_CPU_READ set
 * (0: not read yet); racing first reads store the same value. */
#define POSENC_I_CPU_READ (1 << 30)
static POSENC_I_ATOMIC(int) posenc_i_cpu_seen;

static int posenc_i_cpu_has(unsigned features) {
  int seen = (int)POSENC_I_LOAD(posenc_i_cpu_seen);
  if (!seen) {
    seen = (int)posenc_i_cpu_features() | POSENC_I_CPU_READ;
    POSENC_I_STORE(posenc_i_cpu_seen, seen);
  }
  return ((unsigned)seen & features) == features;
}

POSENC_API int posenc_isa_compiled(posenc_isa isa) { return posenc_i_backend_of(isa) != NULL; }

POSENC_API int posenc_isa_supported(posenc_isa isa) {
  switch (isa) {
#define POSENC_I_ISA_DETECT(name, NAME, prio, detect, build) case POSENC_ISA_##NAME: return (detect) ? 1 : 0;
    POSENC_I_ISA_TABLE(POSENC_I_ISA_DETECT)
#undef POSENC_I_ISA_DETECT
    default: return 0;
  }
}

#define POSENC_I_ISA_NAME(name, NAME, prio, detect, build) #name,
static const char *const posenc_i_isa_names[POSENC_ISA_COUNT] = {POSENC_I_ISA_TABLE(POSENC_I_ISA_NAME)};
#undef POSENC_I_ISA_NAME
#define POSENC_I_ISA_PRIORITY(name, NAME, prio, detect, build) prio,
static const int posenc_i_isa_priority[POSENC_ISA_COUNT] = {POSENC_I_ISA_TABLE(POSENC_I_ISA_PRIORITY)};
#undef POSENC_I_ISA_PRIORITY

POSENC_API const char *posenc_isa_name(posenc_isa isa) {
  if (isa == POSENC_ISA_AUTO) return "auto";
  return isa >= 0 && isa < POSENC_ISA_COUNT ? posenc_i_isa_names[isa] : "unknown";
}

POSENC_API posenc_status posenc_isa_from_name(const char *name, posenc_isa *isa) {
  int i;
  if (!name || !isa) return POSENC_ERR_NULL;
  if (strcmp(name, "auto") == 0) { *isa = POSENC_ISA_AUTO; return POSENC_OK; }
  for (i = 0; i < POSENC_ISA_COUNT; i++)
    if (strcmp(name, posenc_i_isa_names[i]) == 0) { *isa = (posenc_isa)i; return POSENC_OK; }
  return POSENC_ERR_ISA;
}

/* The active backend: selected once, on first use. Racing first calls compute the same answer.
 * posenc_i_forced is what posenc_isa_set chose (NULL: none yet). */
static POSENC_I_ATOMIC(const posenc_i_backend *) posenc_i_active;
static POSENC_I_ATOMIC(const posenc_i_backend *) posenc_i_forced;
static POSENC_I_ATOMIC(int) posenc_i_requested_state; /* 0 unset, 1 valid name, -1 unknown name */
static POSENC_I_ATOMIC(int) posenc_i_requested_isa;   /* a posenc_isa */

/* A first use installs its choice b, then gives way to a posenc_isa_set, which stores posenc_i_forced
 * and then posenc_i_active: a set whose stores came after this load of posenc_i_forced also comes
 * after this store of posenc_i_active (both sequentially consistent), so it is never overwritten
 * (a first use that read nothing yet once stored its choice over a set made meanwhile). */
static const posenc_i_backend *posenc_i_install_active(const posenc_i_backend *b) {
  const posenc_i_backend *f, *g;
  POSENC_I_STORE_PTR(posenc_i_active, b);
  f = (const posenc_i_backend *)POSENC_I_LOAD_PTR(posenc_i_forced);
  while (f) { /* a set came first: its choice again, until no other set comes meanwhile */
    POSENC_I_STORE_PTR(posenc_i_active, f);
    g = (const posenc_i_backend *)POSENC_I_LOAD_PTR(posenc_i_forced);
    if (g == f) return f;
    f = g;
  }
  return b;
}

/* The available backend of the highest priority (the first in the table among equals). */
static posenc_isa posenc_i_best(void) {
  int i, best = POSENC_ISA_SCALAR;
  for (i = 0; i < POSENC_ISA_COUNT; i++)
    if (posenc_i_isa_priority[i] > posenc_i_isa_priority[best] && posenc_isa_compiled((posenc_isa)i) &&
        posenc_isa_supported((posenc_isa)i))
      best = i;
  return (posenc_isa)best;
}

static const posenc_i_backend *posenc_i_select(void) {
  const posenc_i_backend *b = (const posenc_i_backend *)POSENC_I_LOAD_PTR(posenc_i_active);
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
    POSENC_I_STORE(posenc_i_requested_isa, (int)want);
    POSENC_I_STORE(posenc_i_requested_state, req);
    return posenc_i_install_active(posenc_i_backend_of(isa));
  }
}

POSENC_API posenc_isa posenc_isa_active(void) { return posenc_i_select()->isa; }

POSENC_API int posenc_isa_requested(posenc_isa *isa) {
  posenc_i_select();
  if (isa) *isa = (posenc_isa)POSENC_I_LOAD(posenc_i_requested_isa);
  return (int)POSENC_I_LOAD(posenc_i_requested_state);
}

POSENC_API posenc_status posenc_isa_set(posenc_isa isa) {
  posenc_i_select(); /* read POSENC_ISA first, so that it cannot override this call later */
  if (isa == POSENC_ISA_AUTO) isa = posenc_i_best();
  if (!posenc_isa_compiled(isa) || !posenc_isa_supported(isa)) return POSENC_ERR_ISA;
  POSENC_I_STORE_PTR(posenc_i_forced, posenc_i_backend_of(isa)); /* first: posenc_i_install_active */
  POSENC_I_STORE_PTR(posenc_i_active, posenc_i_backend_of(isa));
  return POSENC_OK;
}

/* =============================================================================================
 * Implementation, 4: features, each validate -> plan -> run
 * =========================================================================================== */

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
  if (pr->freqs != POSENC_FREQ_VASWANI && pr->freqs != POSENC_FREQ_FAIRSEQ && pr->freqs != POSENC_FREQ_T2T)
    return POSENC_ERR_PARAM;
  if (pr->freqs == POSENC_FREQ_FAIRSEQ &&
      (pr->layout == POSENC_LAYOUT_INTERLEAVED ? (pr->dim + 1) / 2 : pr->dim / 2) < 2) return POSENC_ERR_DIM;
  if (pr->freqs == POSENC_FREQ_T2T && pr->min_timescale != 0.0 &&
      !(pr->min_timescale >= 1e-30 && pr->min_timescale <= 1e30)) return POSENC_ERR_PARAM;
  es = posenc_dtype_size(pr->dtype);
  if (es == 0) return POSENC_ERR_DTYPE;
  stride = pr->row_stride ? pr->row_stride : pr->dim;
  if (stride < pr->dim) return POSENC_ERR_STRIDE;
  if (posenc_i_rows_span(n_rows, pr->dim, stride, es, &last) != POSENC_OK) return POSENC_ERR_OVERFLOW;
  *bytes = last;
  if (plan) {
    plan->esize = es;
    plan->stride = stride;
    plan->nfreq = pr->layout == POSENC_LAYOUT_INTERLEAVED ? (pr->dim + 1) / 2 : pr->dim / 2;
  }
  return POSENC_OK;
}

POSENC_API posenc_sinusoidal_params posenc_sinusoidal_default(size_t dim) {
  posenc_sinusoidal_params p;
  memset(&p, 0, sizeof p); /* padding too: a copied or planted config has no undefined bytes */
  p.dim = dim; p.base = 10000.0; p.layout = POSENC_LAYOUT_INTERLEAVED;
  p.dtype = POSENC_DTYPE_F32; p.row_stride = 0;
  p.freqs = POSENC_FREQ_VASWANI; p.min_timescale = 0.0;
  return p;
}

POSENC_API posenc_status posenc_sinusoidal_bytes(const posenc_sinusoidal_params *params,
                                                 size_t n_rows, size_t *bytes) {
  if (!bytes) return POSENC_ERR_NULL;
  return posenc_i_check_sinusoidal(params, n_rows, bytes, NULL);
}

/* Largest |p| * omega_max * 2/pi that the reduction handles exactly (a*2^52 rounding trick). */
#define POSENC_I_MAX_TURNS 1125899906842624.0 /* 2^50 */

/* A sinusoidal rule's progression: omega_i = first * ratio^i, in double-double (first as
 * u = first * 2/pi, what the kernels read). Every rule is monotone, so its largest frequency is
 * the first or the last; that bounds the angle for the exact reduction. */
static posenc_status posenc_i_sinusoidal_freqs(const posenc_sinusoidal_params *pr, size_t nfreq,
                                               double max_abs_pos, posenc_i_dd *u_first,
                                               posenc_i_dd *ratio) {
  posenc_i_dd ln_ratio, first = posenc_i_dd_make(1.0, 0.0);
  double omega_max;
  if (!(pr->base >= 1e-30) || !(pr->base <= 1e30)) return POSENC_ERR_BASE; /* also NaN */
  if (pr->freqs == POSENC_FREQ_FAIRSEQ) {         /* base^(-1/(h-1)) */
    ln_ratio = posenc_i_dd_div_d(posenc_i_dd_mul_d(posenc_i_dd_log(pr->base), -1.0), (double)(nfreq - 1));
  } else if (pr->freqs == POSENC_FREQ_T2T) {      /* (base/m)^(-1/max(h-1,1)), first m */
    double m = pr->min_timescale != 0.0 ? pr->min_timescale : 1.0;
    posenc_i_dd ln_m = posenc_i_dd_log(m), ln_b = posenc_i_dd_log(pr->base);
    ln_ratio = posenc_i_dd_div_d(posenc_i_dd_add(ln_m, posenc_i_dd_make(-ln_b.hi, -ln_b.lo)),
                                 (double)(nfreq > 1 ? nfreq - 1 : 1));
    first = posenc_i_dd_make(m, 0.0);
  } else {                                        /* base^(-2/d) */
    ln_ratio = posenc_i_dd_div_d(posenc_i_dd_mul_d(posenc_i_dd_log(pr->base), -2.0), (double)pr->dim);
  }
  *ratio = posenc_i_dd_exp(ln_ratio);
  *u_first = posenc_i_dd_mul(posenc_i_TWO_OVER_PI, first);
  omega_max = first.hi;
  if (nfreq > 1) {
    double last = posenc_i_dd_exp(posenc_i_dd_add(posenc_i_dd_log(first.hi),
                                                  posenc_i_dd_mul_d(ln_ratio, (double)(nfreq - 1)))).hi;
    if (last > omega_max) omega_max = last;
  }
  /* a quarter turn is pi/2 */
  if (max_abs_pos * omega_max * 0.6366197723675814 >= POSENC_I_MAX_TURNS) return POSENC_ERR_POSITION;
  return POSENC_OK;
}

/* Fill the u parts of nfreq frequencies (chunk after chunk) from the progression
 * u_i = u_{i-1} * omega1, u_0 = 2/pi, advancing *u_run. The progression always restarts at i = 0,
 * so u_i never depends on the call shape. */
static void posenc_i_split_parts(double *u, size_t lane, posenc_i_dd v) {
  double *dst = u + (lane / POSENC_CHUNK) * POSENC_UPARTS * POSENC_CHUNK + lane % POSENC_CHUNK;
  int j;
  for (j = 0; j < POSENC_UPARTS; j++) {
    double part = posenc_i_bitsd(posenc_i_dbits(v.hi) & 0xffffffff00000000ull); /* 21 bits */
    posenc_i_dd rest = posenc_i_two_sum(v.hi - part, v.lo);
    /* parts below 2^-600 move no angle of |p| < 2^31 and would only risk subnormals */
    dst[(size_t)j * POSENC_CHUNK] = ((posenc_i_dbits(part) >> 52 & 0x7ff) > 1023 - 600) ? part : 0.0;
    v = rest;
  }
}

static void posenc_i_fill_parts(double *u, size_t nfreq, posenc_i_dd *u_run, posenc_i_dd omega1) {
  size_t lane;
  memset(u, 0, sizeof(double) * POSENC_UPARTS * POSENC_CHUNK * ((nfreq + POSENC_CHUNK - 1) / POSENC_CHUNK));
  for (lane = 0; lane < nfreq; lane++) {
    posenc_i_split_parts(u, lane, *u_run);
    *u_run = posenc_i_dd_mul(*u_run, omega1);
  }
}

/* Outputs at least this large are written with non-temporal stores where the kernel can: they
 * would not stay in cache anyway, and skipping the read-for-ownership halves the memory traffic. */
#ifndef POSENC_STREAM_MIN_BYTES
#define POSENC_STREAM_MIN_BYTES ((size_t)4 << 20)
#endif
/* A RoPE call whose inputs are at least this large in all asks for each next token's lines while
 * it rotates a token's (posenc_i_pass_job): they come from memory, which the prefetches hide,
 * where from a core's cache they only cost. */
#ifndef POSENC_PREFETCH_MIN_BYTES
#define POSENC_PREFETCH_MIN_BYTES ((size_t)4 << 20)
#endif

/* Rows processed per pass over the frequency chunks. Where chunks share 64-byte lines (a row not
 * 64-byte aligned or not a whole number of lines, 16-bit split halves, split f32 halves not whole
 * lines), a tile of about 128 KiB keeps those lines in cache until every chunk has written its
 * part. Where each chunk writes whole lines of its own (whole_lines),
 * no line waits for another chunk, and a tile of 2048 rows makes each chunk's parts (a chain of
 * double-double products, posenc_i_fill_parts) and steps once per 2048 rows instead of 256
 * (d = 128): at 256, the sinusoidal driver took a sixth of a table's time (bench_table). */
static size_t posenc_i_tile_rows(size_t row_bytes, int whole_lines) {
  size_t rows = whole_lines ? 2048 : ((size_t)128 << 10) / (row_bytes ? row_bytes : 1);
  if (rows < 64) rows = 64;
  if (rows > 2048) rows = 2048;
  return rows - rows % POSENC_ANCHOR;
}

/* The largest |position| of a list, or of the range start .. start+n-1 (which must end by
 * INT32_MAX): what the exact reduction must reach. */
static posenc_status posenc_i_max_abs_position(int32_t start, const int32_t *positions, size_t n,
                                               double *max_abs) {
  size_t r;
  *max_abs = 0.0;
  if (positions) {
    for (r = 0; r < n; r++) {
      double a = positions[r] < 0 ? -(double)positions[r] : (double)positions[r];
      if (a > *max_abs) *max_abs = a;
    }
    return POSENC_OK;
  }
  if (n - 1 > (size_t)((int64_t)INT32_MAX - (int64_t)start)) return POSENC_ERR_POSITION;
  *max_abs = (double)start + (double)(n - 1);
  if (-(double)start > *max_abs) *max_abs = -(double)start;
  return POSENC_OK;
}

static posenc_status posenc_i_sinusoidal_run(const posenc_i_backend *be,
                                             const posenc_sinusoidal_params *pr, int32_t start,
                                             const int32_t *positions, size_t n_rows,
                                             void *out, size_t out_bytes) {
  posenc_i_table_plan plan;
  size_t need, row0 = 0, tile;
  int stream, lines, whole_lines;
  double max_abs = 0.0;
  posenc_status st;
  posenc_i_dd u_first;
  double u[POSENC_I_UGROUP * POSENC_UPARTS * POSENC_CHUNK];
  posenc_sinusoidal_params copy; /* read again while rows are written: out may hold the caller's */
  if (!pr) return POSENC_ERR_NULL;
  copy = *pr;
  pr = &copy;

  if (!out) return POSENC_ERR_NULL;
  st = posenc_i_check_sinusoidal(pr, n_rows, &need, &plan);
  if (st != POSENC_OK) return st;
  if ((st = posenc_i_out_room(out, out_bytes, need)) != POSENC_OK) return st;
  /* later tiles read positions after earlier ones are written (n_rows <= need / 2: no overflow) */
  if (positions && posenc_i_ranges_meet((const unsigned char *)out, need, (const unsigned char *)positions,
                                        n_rows * sizeof *positions))
    return POSENC_ERR_ALIAS;
  st = posenc_i_max_abs_position(start, positions, n_rows, &max_abs);
  if (st != POSENC_OK) return st;
  st = posenc_i_sinusoidal_freqs(pr, plan.nfreq, max_abs, &u_first, &plan.omega1);
  if (st != POSENC_OK) return st;
  /* rows start on 64-byte lines, and so does the split layout's cos half */
  lines = (uintptr_t)out % 64 == 0 && (plan.stride * plan.esize) % 64 == 0 &&
          (pr->layout == POSENC_LAYOUT_INTERLEAVED || (plan.nfreq * plan.esize) % 64 == 0);
  /* and no line is written by two chunks: interleaved, a chunk is 64 or 128 bytes of a row; split,
   * 64 bytes of each half in f32 (16-bit halves are 32 bytes: two chunks a line) */
  whole_lines = lines && (pr->layout == POSENC_LAYOUT_INTERLEAVED || plan.esize == 4);
  tile = posenc_i_tile_rows(plan.stride * plan.esize, whole_lines);
  /* Non-temporal stores only where no chunk shares a line with another: such a line is flushed
   * part-filled (4x slower than cached stores, measured with malloc's 16-byte-aligned buffers;
   * split f16 halves, 32 bytes a chunk, streamed: 1.3x (AVX-512) and 1.5x (AVX2) the time of
   * ordinary stores at 64 MiB). */
  stream = need >= POSENC_STREAM_MIN_BYTES && whole_lines;

  while (row0 < n_rows) {
    size_t rows = n_rows - row0, f0;
    posenc_i_dd u_run = u_first;
    unsigned char *rowp = (unsigned char *)out + row0 * plan.stride * plan.esize;
    if (!positions) { /* end tiles on an anchor boundary so that no anchor is computed twice */
      int64_t p0 = (int64_t)start + (int64_t)row0, end = p0 + (int64_t)tile;
      end -= (int64_t)((uint64_t)end & (POSENC_ANCHOR - 1));
      if (end > p0 && (size_t)(end - p0) < rows) rows = (size_t)(end - p0);
    } else if (rows > tile) {
      rows = tile;
    }
    for (f0 = 0; f0 < plan.nfreq; f0 += POSENC_I_UGROUP * POSENC_CHUNK) {
      posenc_i_job job;
      size_t nf = plan.nfreq - f0 < POSENC_I_UGROUP * POSENC_CHUNK ? plan.nfreq - f0 : POSENC_I_UGROUP * POSENC_CHUNK;
      posenc_i_fill_parts(u, nf, &u_run, plan.omega1);
      job.u = u; job.step = NULL; job.nfreq = (unsigned)nf;
      job.state = NULL; job.resume = 0;
      job.start = positions ? 0 : (int32_t)((int64_t)start + (int64_t)row0);
      job.positions = positions ? positions + row0 : NULL;
      job.nrows = rows;
      job.row_stride = (ptrdiff_t)(plan.stride * plan.esize);
      job.dtype = pr->dtype;
      job.stream = stream;
      job.cos_first = 0; job.scaled = 0; job.scale = 1.0;
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

/* ---- RoPE: frequencies ---------------------------------------------------------------------
 * Every variant is omega_i = omega0_i * g_i, where omega0_i = base'^(-2i/d) (the sinusoidal
 * progression, so an unscaled cache equals the split sinusoidal table bit for bit) and g_i the
 * variant's factor; both in double-double, then split into the parts the kernels read. */
static const posenc_i_dd posenc_i_PI_OVER_2 = {1.5707963267948966, 6.123233995736766e-17};

/* Scaling factors and factor lists, like base, in [1e-30, 1e30]: beyond that the frequencies
 * leave double's range and come out NaN. */
static int posenc_i_factor_ok(double x) { return x >= 1e-30 && x <= 1e30; }

/* YaRN (HF _compute_yarn_parameters): find_correction_dim(r) = d ln(L / (2 pi r)) / (2 ln base). */
static double posenc_i_yarn_corr_dim(double r, size_t d, double L, double base) {
  posenc_i_dd ln2pi = posenc_i_dd_add(posenc_i_dd_add(posenc_i_dd_log(3.141592653589793),
                                                      posenc_i_dd_make(1.2246467991473532e-16 / 3.141592653589793, 0.0)),
                                      posenc_i_LN2);
  posenc_i_dd den = posenc_i_dd_add(posenc_i_dd_log(r), ln2pi);
  posenc_i_dd num = posenc_i_dd_mul_d(posenc_i_dd_add(posenc_i_dd_log(L), posenc_i_dd_make(-den.hi, -den.lo)), (double)d);
  posenc_i_dd lnb2 = posenc_i_dd_mul_d(posenc_i_dd_log(base), 2.0);
  /* num / lnb2, rounded once */
  posenc_i_dd q = posenc_i_dd_div(num, lnb2);
  return posenc_i_fast_two_sum(q.hi, q.lo).hi;
}

/* The extrapolation ramp's bounds [low, high] over pair indices, as HF computes them. */
static void posenc_i_yarn_range(const posenc_rope_config *c, size_t d, double *low, double *high) {
  double bf = c->beta_fast != 0.0 ? c->beta_fast : 32.0, bs = c->beta_slow != 0.0 ? c->beta_slow : 1.0;
  double lo = posenc_i_yarn_corr_dim(bf, d, (double)c->original_max_pos, c->base);
  double hi = posenc_i_yarn_corr_dim(bs, d, (double)c->original_max_pos, c->base);
  if (!c->yarn_no_truncate) { lo = posenc_i_floor(lo); hi = posenc_i_ceil(hi); }
  if (lo < 0.0) lo = 0.0;
  if (hi > (double)(d - 1)) hi = (double)(d - 1);
  if (lo == hi) hi += 0.001;
  *low = lo; *high = hi;
}

static double posenc_i_yarn_mscale(double s, double m) {
  return s <= 1.0 ? 1.0 : 0.1 * m * posenc_i_logd(s) + 1.0;
}

/* The attention factor A: the config's own, else the variant's (YaRN mscale, LongRoPE). */
static double posenc_i_rope_attention(const posenc_rope_config *c) {
  if (c->attention_factor > 0.0) return c->attention_factor;
  if (c->scaling == POSENC_ROPE_SCALING_YARN) {
    if (c->mscale != 0.0 && c->mscale_all_dim != 0.0)
      return posenc_i_yarn_mscale(c->factor, c->mscale) / posenc_i_yarn_mscale(c->factor, c->mscale_all_dim);
    return posenc_i_yarn_mscale(c->factor, 1.0);
  }
  if (c->scaling == POSENC_ROPE_SCALING_LONGROPE) {
    double x;
    if (c->factor <= 1.0) return 1.0;
    x = 1.0 + posenc_i_logd(c->factor) / posenc_i_logd((double)c->original_max_pos);
    return posenc_i_pow_d(x, 0.5); /* sqrt, without libm */
  }
  return 1.0;
}

/* Qwen's dynamic NTK alpha: 2^(ceil(log2(S/L)) + 1) - 1, at least 1 (exact: powers of two). */
static double posenc_i_qwen_alpha(double S, double L) {
  double pw = 1.0;
  if (S <= L) return 1.0;
  while (L * pw < S) pw *= 2.0;
  return 2.0 * pw - 1.0;
}

/* The base after NTK-style rescaling, in double, as HF computes it before rounding to float32. */
static double posenc_i_rope_hf_base(const posenc_rope_config *c, size_t d) {
  double base = c->base;
  if (c->scaling == POSENC_ROPE_SCALING_NTK) {
    base = c->base * posenc_i_pow_d(c->factor, (double)d / (double)(d - 2));
  } else if (c->scaling == POSENC_ROPE_SCALING_DYNAMIC) {
    double L = (double)c->original_max_pos, S = c->seq_len ? (double)c->seq_len : L, x = 1.0;
    if (c->dynamic_qwen_alpha) {
      x = posenc_i_qwen_alpha(S, L);
    } else {
      if (S < L) S = L;
      x = c->factor * S / L - (c->factor - 1.0); /* HF's double arithmetic: 0 for s = 1e30, S = L */
    }
    if (!(x > 0.0)) return 0.0;                  /* refused at init, as HF's base would be 0 */
    base = c->base * posenc_i_pow_d(x, (double)d / (double)(d - 2));
  }
  return base;
}

static posenc_status posenc_i_rope_check_config(const posenc_rope_config *c, size_t *d_out) {
  size_t d;
  if (c->head_dim < 2) return POSENC_ERR_DIM;
  d = c->rotary_dim ? c->rotary_dim : c->head_dim;
  if ((d & 1) || d > c->head_dim || d > POSENC_ROPE_MAX_DIM) return POSENC_ERR_DIM;
  if (!(c->base > 0.0) || !(c->base <= 1e30) || c->base < 1e-30) return POSENC_ERR_BASE;
  if ((unsigned)c->style > POSENC_ROPE_GPTJ || (unsigned)c->scaling > POSENC_ROPE_SCALING_LONGROPE ||
      (unsigned)c->mrope > POSENC_ROPE_MROPE_INTERLEAVED)
    return POSENC_ERR_PARAM;
  if (c->scaling != POSENC_ROPE_SCALING_NONE && !posenc_i_factor_ok(c->factor)) return POSENC_ERR_PARAM;
  if ((c->scaling == POSENC_ROPE_SCALING_NTK || c->scaling == POSENC_ROPE_SCALING_DYNAMIC) && d == 2)
    return POSENC_ERR_DIM; /* exponent d/(d-2) */
  if (c->scaling >= POSENC_ROPE_SCALING_DYNAMIC && c->original_max_pos == 0) return POSENC_ERR_PARAM;
  if (c->scaling == POSENC_ROPE_SCALING_LONGROPE && c->original_max_pos < 2) return POSENC_ERR_PARAM; /* ln L */
  if (c->scaling == POSENC_ROPE_SCALING_YARN) {
    if (c->beta_fast < 0.0 || !(c->beta_fast <= 1e300) || c->beta_slow < 0.0 || !(c->beta_slow <= 1e300) ||
        !(c->mscale >= 0.0 && c->mscale <= 1e300) || !(c->mscale_all_dim >= 0.0 && c->mscale_all_dim <= 1e300))
      return POSENC_ERR_PARAM;
  }
  if (c->scaling == POSENC_ROPE_SCALING_LLAMA3) {
    double lf = c->low_freq_factor != 0.0 ? c->low_freq_factor : 1.0;
    double hf = c->high_freq_factor != 0.0 ? c->high_freq_factor : 4.0;
    if (!posenc_i_finite_pos(lf) || !posenc_i_finite_pos(hf) || !(hf > lf)) return POSENC_ERR_PARAM;
  }
  if (c->scaling == POSENC_ROPE_SCALING_LONGROPE) {
    size_t i;
    if (!c->short_factor || !c->long_factor) return POSENC_ERR_NULL;
    for (i = 0; i < d / 2; i++)
      if (!posenc_i_factor_ok(c->short_factor[i]) || !posenc_i_factor_ok(c->long_factor[i])) return POSENC_ERR_PARAM;
  }
  if (c->freq_factors) {
    size_t i;
    if (c->hf_compat) return POSENC_ERR_PARAM; /* a ggml concept: HF has no float32 recipe for it */
    for (i = 0; i < d / 2; i++) if (!posenc_i_factor_ok(c->freq_factors[i])) return POSENC_ERR_PARAM;
  }
  if (!(c->attention_factor >= 0.0 && c->attention_factor <= 1e30)) return POSENC_ERR_PARAM;
  if (c->mrope != POSENC_ROPE_MROPE_NONE) {
    uint64_t sum = (uint64_t)c->mrope_section[0] + c->mrope_section[1] + c->mrope_section[2];
    if (sum != d / 2) return POSENC_ERR_DIM;
  }
  if (c->scaling == POSENC_ROPE_SCALING_YARN) { /* derived: ln(base) = 0 (base 1) makes the ramp NaN */
    double low, high;
    posenc_i_yarn_range(c, d, &low, &high);
    if (!posenc_i_finite(low) || !posenc_i_finite(high)) return POSENC_ERR_PARAM;
  }
  if (c->attention_factor == 0.0) { /* derived, like an explicit one: mscale 1e300 gives 1e299 */
    double a = posenc_i_rope_attention(c);
    if (!(a >= 1e-30 && a <= 1e30)) return POSENC_ERR_PARAM;
  }
  if (c->hf_compat) { /* HF rounds the rescaled base to a normal float32 (FLT_MIN .. FLT_MAX) */
    double b = posenc_i_rope_hf_base(c, d);
    if (!(b >= 1.1754943508222875e-38 && b <= 3.4028234663852886e38)) return POSENC_ERR_PARAM;
  }
  *d_out = d;
  return POSENC_OK;
}

/* ln(base'): the base after NTK-style rescaling, as HF and Qwen define it. */
static posenc_i_dd posenc_i_rope_log_base(const posenc_rope_config *c, size_t d) {
  posenc_i_dd lnb = posenc_i_dd_log(c->base);
  posenc_i_dd ex = posenc_i_dd_div_d(posenc_i_dd_make((double)d, 0.0), (double)(d - 2)); /* d/(d-2) */
  double x = 1.0;
  if (c->scaling == POSENC_ROPE_SCALING_NTK) {
    x = c->factor;
  } else if (c->scaling == POSENC_ROPE_SCALING_DYNAMIC) {
    double L = (double)c->original_max_pos, S = c->seq_len ? (double)c->seq_len : L;
    if (c->dynamic_qwen_alpha) {
      x = posenc_i_qwen_alpha(S, L);
    } else {                     /* base * (s*S/L - (s-1))^(d/(d-2)), S = max(seq_len, L) */
      posenc_i_dd t;
      if (S < L) S = L;
      t = posenc_i_dd_add(posenc_i_dd_div_d(posenc_i_dd_mul_d(posenc_i_dd_make(c->factor, 0.0), S), L),
                          posenc_i_two_sum(1.0, -c->factor));
      return posenc_i_dd_add(lnb, posenc_i_dd_mul(posenc_i_dd_log_dd(t), ex));
    }
  } else {
    return lnb;
  }
  return posenc_i_dd_add(lnb, posenc_i_dd_mul(posenc_i_dd_log(x), ex));
}

/* ---- HF float32 compatibility: inv_freq exactly as transformers computes it in float32.
 * torch.pow / math.log are taken as correctly rounded (PyTorch's are within 1 ulp). */
static float posenc_i_dd_to_f32(posenc_i_dd x) {
  float f = (float)x.hi;
  if ((double)f != x.hi) {
    double next = (double)posenc_i_bitsf(posenc_i_fbits(f) + 1u), prev = (double)posenc_i_bitsf(posenc_i_fbits(f) - 1u);
    double mid_up = 0.5 * ((double)f + next), mid_dn = 0.5 * ((double)f + prev);
    /* hi sits exactly on a midpoint only if (float) rounded a tie: lo then decides */
    if (x.hi == mid_up || x.hi == mid_dn) {
      double other = x.hi == mid_up ? next : prev;
      if ((x.lo > 0.0) == (other > (double)f) && x.lo != 0.0) f = (float)other;
    }
  }
  return f;
}
static float posenc_i_powf(float b, float e) { /* correctly rounded b^e for b > 0 */
  return posenc_i_dd_to_f32(posenc_i_dd_exp(posenc_i_dd_mul_d(posenc_i_dd_log((double)b), (double)e)));
}

static void posenc_i_rope_hf_inv(const posenc_rope_config *c, size_t d, const float *ext, float *inv) {
  size_t h = d / 2, i;
  double low = 0.0, high = 1.0;
  float s = (float)c->factor, fb = (float)posenc_i_rope_hf_base(c, d); /* normal: checked at init */
  if (c->scaling == POSENC_ROPE_SCALING_YARN) posenc_i_yarn_range(c, d, &low, &high);
  for (i = 0; i < h; i++) {
    float e = (float)(2 * i) / (float)d, pf = posenc_i_powf(fb, e), v;
    v = 1.0f / pf;
    if (c->scaling == POSENC_ROPE_SCALING_LINEAR) v = v / s;
    if (c->scaling == POSENC_ROPE_SCALING_LONGROPE) v = 1.0f / (ext[i] * pf);
    if (c->scaling == POSENC_ROPE_SCALING_YARN) {
      float ramp, ef, interp = 1.0f / (s * pf);
      ramp = ((float)i - (float)low) / (float)(high - low);
      ramp = ramp < 0.0f ? 0.0f : (ramp > 1.0f ? 1.0f : ramp);
      ef = 1.0f - ramp;
      v = interp * (1.0f - ef) + v * ef;
    }
    if (c->scaling == POSENC_ROPE_SCALING_LLAMA3) {
      float L = (float)c->original_max_pos;
      double lf = c->low_freq_factor != 0.0 ? c->low_freq_factor : 1.0;
      double hf = c->high_freq_factor != 0.0 ? c->high_freq_factor : 4.0;
      float low_wl = (float)((double)c->original_max_pos / lf), high_wl = (float)((double)c->original_max_pos / hf);
      float wl = (1.0f / v) * (float)(2.0 * 3.141592653589793); /* torch: 2*pi / t = reciprocal(t) * 2*pi */
      if (wl > low_wl) {
        v = v / s;
      } else if (!(wl < high_wl)) {
        float sm = ((1.0f / wl) * L - (float)lf) / (float)(hf - lf);
        v = (1.0f - sm) * v / s + sm * v;
      }
    }
    inv[i] = v;
  }
}

/* The frequency factor of a blend that interpolates with weight w: w/s + (1 - w). */
static posenc_i_dd posenc_i_rope_blend(posenc_i_dd w, double s) {
  return posenc_i_dd_add(posenc_i_dd_div_d(w, s), posenc_i_dd_add(posenc_i_dd_make(1.0, 0.0), posenc_i_dd_make(-w.hi, -w.lo)));
}

POSENC_API posenc_rope_config posenc_rope_default(size_t head_dim) {
  posenc_rope_config c;
  memset(&c, 0, sizeof c);
  c.head_dim = head_dim;
  c.base = 10000.0;
  c.style = POSENC_ROPE_NEOX;
  c.scaling = POSENC_ROPE_SCALING_NONE;
  c.mrope = POSENC_ROPE_MROPE_NONE;
  return c;
}

POSENC_API posenc_status posenc_rope_config_from_ggml(const posenc_ggml_rope_params *g, posenc_rope_config *config) {
  posenc_rope_config c;
  int i;
  if (!g || !config) return POSENC_ERR_NULL;
  if (g->head_dim < 2 || g->n_dims <= 0 || g->n_dims % 2 != 0 || (size_t)g->n_dims > g->head_dim) return POSENC_ERR_DIM;
  if (!posenc_i_finite(g->freq_scale) || g->freq_scale <= 0.0f || !posenc_i_finite(g->attn_factor) ||
      g->attn_factor <= 0.0f)
    return POSENC_ERR_PARAM;
  c = posenc_rope_default(g->head_dim);
  c.rotary_dim = (size_t)g->n_dims;
  c.base = g->freq_base;
  c.freq_factors = g->freq_factors;
  switch (g->mode) {
    case 0: c.style = POSENC_ROPE_GPTJ; break;
    case 2: c.style = POSENC_ROPE_NEOX; break;
    case 8: c.mrope = POSENC_ROPE_MROPE_SECTIONS; break;
    case 40: c.mrope = POSENC_ROPE_MROPE_INTERLEAVED; break;
    default: return POSENC_ERR_PARAM; /* VISION (24) restarts the frequencies per section: not a posenc variant */
  }
  if (c.mrope != POSENC_ROPE_MROPE_NONE) {
    if (g->sections[3] != 0) return POSENC_ERR_PARAM;
    for (i = 0; i < 3; i++) {
      if (g->sections[i] < 0) return POSENC_ERR_PARAM;
      c.mrope_section[i] = (uint32_t)g->sections[i];
    }
  }
  if (g->ext_factor == 0.0f) { /* cos/sin of freq_scale * theta, times attn_factor */
    if (g->freq_scale != 1.0f) {
      c.scaling = POSENC_ROPE_SCALING_LINEAR;
      c.factor = 1.0 / (double)g->freq_scale;
    }
    c.attention_factor = g->attn_factor;
  } else if (g->ext_factor == 1.0f) { /* rope_yarn: ramp mix, magnitude attn_factor * (1 + 0.1 ln(1/fs)) */
    double magnitude = (double)g->attn_factor * (1.0 + 0.1 * posenc_i_logd(1.0 / (double)g->freq_scale));
    if (g->n_ctx_orig <= 0) return POSENC_ERR_PARAM;
    if (!(magnitude > 0.0)) return POSENC_ERR_PARAM; /* freq_scale above e^10: no rotation's length is left */
    if (g->beta_fast != 0.0f) {
      if (g->beta_slow == 0.0f) return POSENC_ERR_PARAM; /* ggml's high bound n_dims - 1: no posenc beta says it */
      c.scaling = POSENC_ROPE_SCALING_YARN;
      c.factor = 1.0 / (double)g->freq_scale;
      c.original_max_pos = (uint32_t)g->n_ctx_orig;
      c.beta_fast = g->beta_fast;
      c.beta_slow = g->beta_slow;
    }
    c.attention_factor = magnitude;
  } else {
    return POSENC_ERR_PARAM; /* a partial ramp mix has no posenc variant */
  }
  *config = c;
  return POSENC_OK;
}

/* A rope's arrays follow its header (POSENC_ROPE_BYTES), for cap = pairs rounded up to a chunk:
 * u_parts [cap/CHUNK][POSENC_UPARTS][CHUNK] (unused lanes 0), u_step [cap/CHUNK][2][CHUNK],
 * inv_freq [cap] and inv_freq_f32 [cap]. */
#define POSENC_I_ROPE_HEAD POSENC_ROPE_BYTES(0)
struct posenc_i_double_align { char c; double d; };

static size_t posenc_i_rope_cap(size_t pairs) { return (pairs + POSENC_CHUNK - 1) / POSENC_CHUNK * POSENC_CHUNK; }
/* The bytes init writes (the public macro is the one formula; its pair rounding is POSENC_CHUNK's). */
static size_t posenc_i_rope_need(size_t pairs) { return POSENC_ROPE_BYTES(2 * pairs); }
static const double *posenc_i_rope_u_parts(const posenc_rope *rope) {
  return (const double *)(const void *)((const unsigned char *)rope + POSENC_I_ROPE_HEAD);
}
static const double *posenc_i_rope_u_step(const posenc_rope *rope) {
  return posenc_i_rope_u_parts(rope) + POSENC_UPARTS * posenc_i_rope_cap(rope->pairs);
}
static const double *posenc_i_rope_omega(const posenc_rope *rope) {
  return posenc_i_rope_u_step(rope) + 2 * posenc_i_rope_cap(rope->pairs);
}
static const float *posenc_i_rope_omega_f32(const posenc_rope *rope) {
  return (const float *)(const void *)(posenc_i_rope_omega(rope) + posenc_i_rope_cap(rope->pairs));
}

/* 1 if a factor list the frequencies are computed from lies inside the storage init overwrites
 * while it still reads them. */
static int posenc_i_rope_lists_meet(const posenc_rope *rope, const posenc_rope_config *c, size_t h) {
  const unsigned char *r = (const unsigned char *)rope;
  size_t lb = h * sizeof(float), rb = posenc_i_rope_need(h);
  return (c->freq_factors && posenc_i_ranges_meet(r, rb, (const unsigned char *)c->freq_factors, lb)) ||
         (c->scaling == POSENC_ROPE_SCALING_LONGROPE &&
          (posenc_i_ranges_meet(r, rb, (const unsigned char *)c->short_factor, lb) ||
           posenc_i_ranges_meet(r, rb, (const unsigned char *)c->long_factor, lb)));
}

POSENC_API posenc_status posenc_rope_bytes(const posenc_rope_config *config, size_t *bytes) {
  posenc_rope_config c;
  size_t d;
  posenc_status st;
  if (!config || !bytes) return POSENC_ERR_NULL;
  c = *config;
  if ((st = posenc_i_rope_check_config(&c, &d)) != POSENC_OK) return st;
  *bytes = posenc_i_rope_need(d / 2);
  return POSENC_OK;
}

POSENC_API posenc_status posenc_rope_init(posenc_rope *rope, size_t rope_bytes, const posenc_rope_config *config) {
  posenc_rope_config c;
  size_t d, h, i, cap;
  double *u_parts, *u_step, *inv_freq;
  posenc_i_dd run = posenc_i_TWO_OVER_PI, om1;
  const float *ext = NULL;
  float hf_inv[POSENC_ROPE_MAX_DIM / 2];
  double low = 0.0, high = 1.0;
  posenc_status st;
  if (!rope || !config) return POSENC_ERR_NULL;
  c = *config;
  st = posenc_i_rope_check_config(&c, &d);
  if (st != POSENC_OK) return st;
  h = d / 2;
  if (rope_bytes < posenc_i_rope_need(h) ||
      (uintptr_t)(void *)rope % offsetof(struct posenc_i_double_align, d) != 0)
    return POSENC_ERR_BUFFER;
  if (posenc_i_rope_lists_meet(rope, &c, h)) return POSENC_ERR_ALIAS;
  if (c.scaling == POSENC_ROPE_SCALING_LONGROPE)
    ext = (c.seq_len > c.original_max_pos) ? c.long_factor : c.short_factor;
  if (c.hf_compat) { /* HF's float32 frequencies must be finite (a base far below 1 overflows them) */
    posenc_i_rope_hf_inv(&c, d, ext, hf_inv);
    for (i = 0; i < h; i++)
      if (!(hf_inv[i] - hf_inv[i] == 0.0f)) return POSENC_ERR_PARAM;
  }
  if (c.scaling == POSENC_ROPE_SCALING_YARN) posenc_i_yarn_range(&c, d, &low, &high);
  om1 = posenc_i_dd_exp(posenc_i_dd_div_d(posenc_i_dd_mul_d(posenc_i_rope_log_base(&c, d), -2.0), (double)d));
  /* every byte the rope spans is defined (the header's padding, the gap before the arrays, the
   * unused lanes), so that it can be copied and compared byte for byte */
  memset(rope, 0, posenc_i_rope_need(h));
  rope->config = c;
  rope->config.rotary_dim = d;
  rope->config.hf_compat = c.hf_compat != 0;
  rope->pairs = h;
  rope->attention_factor = posenc_i_rope_attention(&c);
  rope->storage_bytes = rope_bytes;
  rope->self = rope;
  cap = posenc_i_rope_cap(h);
  u_parts = (double *)(void *)((unsigned char *)rope + POSENC_I_ROPE_HEAD);
  u_step = u_parts + POSENC_UPARTS * cap;
  inv_freq = u_step + 2 * cap;
  for (i = 0; i < h; i++) {
    posenc_i_dd u = run; /* omega0_i * 2/pi; every factor below stays in double-double */
    switch (c.scaling) {
      case POSENC_ROPE_SCALING_LINEAR: u = posenc_i_dd_div_d(u, c.factor); break;
      case POSENC_ROPE_SCALING_YARN: { /* ramp 1: interpolated (omega/s); ramp 0: extrapolated */
        posenc_i_dd ramp = posenc_i_dd_div_d(posenc_i_two_sum((double)i, -low), high - low);
        if (ramp.hi >= 1.0) u = posenc_i_dd_div_d(u, c.factor);
        else if (ramp.hi > 0.0) u = posenc_i_dd_mul(u, posenc_i_rope_blend(ramp, c.factor));
        break;
      }
      case POSENC_ROPE_SCALING_LLAMA3: {
        double L = (double)c.original_max_pos;
        double lf = c.low_freq_factor != 0.0 ? c.low_freq_factor : 1.0;
        double hf = c.high_freq_factor != 0.0 ? c.high_freq_factor : 4.0;
        double wl = 4.0 / u.hi; /* wavelength 2 pi / omega, omega = u * pi/2 */
        if (wl > L / lf) {
          u = posenc_i_dd_div_d(u, c.factor);
        } else if (!(wl < L / hf)) { /* smooth: sm = (L / wl - lf) / (hf - lf), L / wl = L u / 4 */
          posenc_i_dd sm = posenc_i_dd_div_d(posenc_i_dd_add(posenc_i_dd_mul_d(u, L * 0.25), posenc_i_dd_make(-lf, 0.0)),
                                             hf - lf);
          posenc_i_dd w = posenc_i_dd_add(posenc_i_dd_make(1.0, 0.0), posenc_i_dd_make(-sm.hi, -sm.lo));
          u = posenc_i_dd_mul(u, posenc_i_rope_blend(w, c.factor));
        }
        break;
      }
      default: break;
    }
    if (ext) u = posenc_i_dd_div_d(u, (double)ext[i]);
    if (c.freq_factors) u = posenc_i_dd_div_d(u, (double)c.freq_factors[i]);
    inv_freq[i] = posenc_i_dd_mul(u, posenc_i_PI_OVER_2).hi;
    posenc_i_split_parts(u_parts, i, u);
    { /* E(1), which every call on the fly would otherwise compute again */
      const size_t k = (i / POSENC_CHUNK) * POSENC_UPARTS * POSENC_CHUNK + i % POSENC_CHUNK;
      double *e = u_step + (i / POSENC_CHUNK) * 2 * POSENC_CHUNK + i % POSENC_CHUNK;
      posenc_i_exact_sincos(1.0, u_parts + k, POSENC_CHUNK, &e[0], &e[POSENC_CHUNK]);
    }
    run = posenc_i_dd_mul(run, om1);
  }
  if (c.hf_compat) memcpy(inv_freq + cap, hf_inv, h * sizeof *hf_inv);
  for (i = 0; i < h; i++) {
    double w = c.hf_compat ? (double)hf_inv[i] : inv_freq[i];
    if (w > rope->max_omega) rope->max_omega = w;
  }
  return POSENC_OK;
}

/* ---- RoPE: cos/sin rows ------------------------------------------------------------------- */
static posenc_status posenc_i_rope_check_spec(const posenc_rope *rope, const posenc_rope_cache_spec *spec,
                                              size_t n_rows, size_t *bytes, size_t *stride_out) {
  size_t es, width, stride, last;
  if (!rope || !spec) return POSENC_ERR_NULL;
  if (n_rows == 0) return POSENC_ERR_SIZE;
  if ((unsigned)spec->layout > POSENC_ROPE_CACHE_INTERLEAVED) return POSENC_ERR_LAYOUT;
  es = posenc_dtype_size(spec->dtype);
  if (es == 0) return POSENC_ERR_DTYPE;
  width = posenc_rope_cache_width(rope, spec->layout);
  if (width == 0) return POSENC_ERR_DIM;
  stride = spec->row_stride ? spec->row_stride : width;
  if (stride < width) return POSENC_ERR_STRIDE;
  if (posenc_i_extent(n_rows, width, stride, &last) != POSENC_OK || posenc_i_bytes(last, es, &last) != POSENC_OK)
    return POSENC_ERR_OVERFLOW;
  if (bytes) *bytes = last;
  if (stride_out) *stride_out = stride;
  return POSENC_OK;
}

/* 1 if *rope is as posenc_rope_init leaves it, as far as the kernels rely on it: the pair count
 * within the arrays and the head, every enum a kernel switches on within its range, hf_compat
 * matching the frequency array init filled, a finite attention factor, and a reach bound
 * (max_omega) no smaller than the first frequency. A struct with garbage in those fields (never
 * initialised, or overwritten) is refused as ERR_DIM instead of reaching a kernel. */
static int posenc_i_rope_valid(const posenc_rope *rope) {
  const posenc_rope_config *c = &rope->config;
  size_t h = rope->pairs;
  if (rope->self != (const void *)rope) return 0; /* copied or moved: its arrays are elsewhere */
  if (h == 0 || h > POSENC_ROPE_MAX_DIM / 2 || c->rotary_dim != 2 * h || c->head_dim < 2 * h) return 0;
  if (rope->storage_bytes < posenc_i_rope_need(h)) return 0;
  if ((unsigned)c->style > POSENC_ROPE_GPTJ || (unsigned)c->scaling > POSENC_ROPE_SCALING_LONGROPE ||
      (unsigned)c->mrope > POSENC_ROPE_MROPE_INTERLEAVED || (unsigned)c->hf_compat > 1)
    return 0;
  /* hf_compat must still be what init stored: init fills HF's float32 frequencies only with it
   * (the first then > 0) and leaves them zero without it, so a flag flipped either way after init
   * is refused here (the kernels would read zeros, or rotate by the exact frequencies where HF's
   * were asked for). Without hf_compat the kernels read the exact frequencies' parts, whose first
   * is > 0. */
  if (c->hf_compat ? !(posenc_i_rope_omega_f32(rope)[0] > 0.0f)
                   : (posenc_i_rope_omega_f32(rope)[0] != 0.0f || !(posenc_i_rope_u_parts(rope)[0] > 0.0)))
    return 0;
  /* the reach check's bound: at least the first frequency, and finite (garbage; a plausible value
   * between the first frequency and the largest is no more caught than spoiled frequencies are) */
  if (!(rope->max_omega >= (c->hf_compat ? (double)posenc_i_rope_omega_f32(rope)[0] : posenc_i_rope_omega(rope)[0]) &&
        rope->max_omega <= 1e300))
    return 0;
  if (c->mrope != POSENC_ROPE_MROPE_NONE &&
      (uint64_t)c->mrope_section[0] + c->mrope_section[1] + c->mrope_section[2] != h)
    return 0;
  return rope->attention_factor > 0.0 && rope->attention_factor <= 1e30;
}

POSENC_API posenc_status posenc_rope_set_seq_len(posenc_rope *rope, uint32_t seq_len) {
  posenc_rope_config c;
  if (!rope) return POSENC_ERR_NULL;
  if (!posenc_i_rope_valid(rope)) return POSENC_ERR_DIM;
  c = rope->config;
  c.seq_len = seq_len;
  return posenc_rope_init(rope, rope->storage_bytes, &c);
}

POSENC_API const double *posenc_rope_inv_freq(const posenc_rope *rope) {
  return rope && posenc_i_rope_valid(rope) ? posenc_i_rope_omega(rope) : NULL;
}

POSENC_API const float *posenc_rope_inv_freq_f32(const posenc_rope *rope) {
  return rope && posenc_i_rope_valid(rope) && rope->config.hf_compat ? posenc_i_rope_omega_f32(rope) : NULL;
}

/* Values in a cache row of h pairs: FULL repeats cos and sin. */
static size_t posenc_i_cache_row_width(posenc_rope_cache_layout layout, size_t h) {
  return layout == POSENC_ROPE_CACHE_FULL ? 4 * h : 2 * h;
}

POSENC_API size_t posenc_rope_cache_width(const posenc_rope *rope, posenc_rope_cache_layout layout) {
  if (!rope || !posenc_i_rope_valid(rope)) return 0;
  if ((unsigned)layout > POSENC_ROPE_CACHE_INTERLEAVED) return 0;
  return posenc_i_cache_row_width(layout, rope->pairs);
}

POSENC_API posenc_status posenc_rope_cache_bytes(const posenc_rope *rope, const posenc_rope_cache_spec *spec,
                                                 size_t n_rows, size_t *bytes) {
  if (!bytes) return POSENC_ERR_NULL;
  return posenc_i_rope_check_spec(rope, spec, n_rows, bytes, NULL);
}

/* |p| * max omega must stay within the exact reduction (as for the sinusoidal tables). The
 * maximum is init's: a loop over the frequencies here took 12% of a decode step on the fly
 * (AVX-512, Q 32 heads of 128: 68 of 564 ns). */
static posenc_status posenc_i_rope_check_reach(const posenc_rope *rope, double max_abs_pos) {
  if (max_abs_pos * rope->max_omega * 0.6366197723675814 >= POSENC_I_MAX_TURNS) return POSENC_ERR_POSITION;
  return POSENC_OK;
}

/* HF compatibility: the correctly rounded cos/sin of the float32 angle fl32(fl32(p) * inv_f32),
 * times fl32(A) in float32, for the n pairs from f0. The angle is a float, so the exact primitive
 * takes it as "p" with u = 2/pi in parts. Out of line: inlined, its 512-byte u sat in
 * posenc_i_rope_rows's frame on the exact path too. */
POSENC_I_NOINLINE void posenc_i_rope_hf_row(const posenc_rope *rope, int32_t p, size_t f0, size_t n, float *c, float *s) {
  double u[POSENC_UPARTS * POSENC_CHUNK], sd, cd;
  float fp = (float)p, af = (float)rope->attention_factor;
  size_t i;
  memset(u, 0, sizeof u);
  posenc_i_split_parts(u, 0, posenc_i_TWO_OVER_PI);
  for (i = 0; i < n; i++) {
    float theta = fp * posenc_i_rope_omega_f32(rope)[f0 + i];
    posenc_i_exact_sincos((double)theta, u, POSENC_CHUNK, &sd, &cd);
    c[i] = (float)cd; s[i] = (float)sd;
    if (af != 1.0f) { c[i] = c[i] * af; s[i] = s[i] * af; }
  }
}

/* Store the cos/sin of the n pairs from f0 (f32 c[i], s[i] for pair f0 + i) in a row of a cache
 * layout whose rows hold h pairs. */
static void posenc_i_rope_store_row(unsigned char *row, const posenc_rope_cache_spec *spec, size_t h, size_t f0,
                                    size_t n, const float *c, const float *s) {
  size_t es = posenc_dtype_size(spec->dtype), i, f;
  for (i = 0; i < n; i++) {
    f = f0 + i;
    switch (spec->layout) {
      case POSENC_ROPE_CACHE_HALF:
        posenc_i_store(row + f * es, spec->dtype, c[i]);
        posenc_i_store(row + (h + f) * es, spec->dtype, s[i]);
        break;
      case POSENC_ROPE_CACHE_FULL:
        posenc_i_store(row + f * es, spec->dtype, c[i]);
        posenc_i_store(row + (h + f) * es, spec->dtype, c[i]);
        posenc_i_store(row + (2 * h + f) * es, spec->dtype, s[i]);
        posenc_i_store(row + (3 * h + f) * es, spec->dtype, s[i]);
        break;
      default:
        posenc_i_store(row + 2 * f * es, spec->dtype, c[i]);
        posenc_i_store(row + (2 * f + 1) * es, spec->dtype, s[i]);
        break;
    }
  }
}

/* posenc_i_rope_rows in HF compatibility mode, a chunk of pairs at a time (a whole row's f32
 * would take 2 KiB of stack). Not inlined: its chunk is then not in the frames of the exact mode's
 * callers. */
POSENC_I_NOINLINE void posenc_i_rope_hf_rows(const posenc_rope *rope, const posenc_rope_cache_spec *spec,
                                             int32_t start, const int32_t *positions, size_t n_rows, size_t f_lo,
                                             size_t h, size_t width, unsigned char *out, size_t stride_bytes) {
  float c[POSENC_CHUNK], s[POSENC_CHUNK];
  size_t r, f0;
  for (r = 0; r < n_rows; r++)
    for (f0 = 0; f0 < h; f0 += POSENC_CHUNK) {
      size_t nf = h - f0 < POSENC_CHUNK ? h - f0 : POSENC_CHUNK;
      posenc_i_rope_hf_row(rope, positions ? positions[r] : (int32_t)((int64_t)start + (int64_t)r), f_lo + f0, nf, c,
                           s);
      posenc_i_rope_store_row(out + r * stride_bytes, spec, width, f0, nf, c, s);
    }
}

/* posenc_i_rope_rows for one segment of rows: a list, or start.. (positions NULL). */
/* The row kernel's job for nf pairs from pair f (nf <= POSENC_GROUP * POSENC_CHUNK) in rows laid out
 * for width pairs, out at pair f's cosine; start, positions and nrows left to the caller. */
static void posenc_i_rope_row_job(const posenc_rope *rope, const posenc_rope_cache_spec *spec, size_t f, size_t nf,
                                  size_t width, unsigned char *out, size_t stride_bytes, posenc_i_job *job) {
  const size_t es = posenc_dtype_size(spec->dtype);
  job->u = posenc_i_rope_u_parts(rope) + (f / POSENC_CHUNK) * POSENC_UPARTS * POSENC_CHUNK;
  job->step = posenc_i_rope_u_step(rope) + (f / POSENC_CHUNK) * 2 * POSENC_CHUNK;
  job->nfreq = (unsigned)nf;
  job->row_stride = (ptrdiff_t)stride_bytes;
  job->dtype = spec->dtype;
  job->stream = 0;
  job->scaled = rope->attention_factor != 1.0;
  job->scale = rope->attention_factor;
  job->cos_first = 1;
  job->pair_cols = 0;
  job->state = NULL;
  job->resume = 0;
  if (spec->layout == POSENC_ROPE_CACHE_INTERLEAVED) {
    job->mode = POSENC_I_PAIRS;
    job->out = out;
    job->cos_offset = (ptrdiff_t)es;
    job->pair_cols = (unsigned)(2 * nf);
  } else { /* sin at (1 or 2)*width past the cos */
    size_t sin_col = spec->layout == POSENC_ROPE_CACHE_HALF ? width : 2 * width;
    job->mode = POSENC_I_PLANAR;
    job->out = out + sin_col * es;
    job->cos_offset = -(ptrdiff_t)(sin_col * es);
  }
}

static void posenc_i_rope_rows_of(const posenc_i_backend *be, const posenc_rope *rope,
                                  const posenc_rope_cache_spec *spec, int32_t start, const int32_t *positions,
                                  size_t n_rows, size_t f_lo, size_t h, size_t width, unsigned char *out,
                                  size_t stride_bytes) {
  size_t es = posenc_dtype_size(spec->dtype), r, f0;
  if (rope->config.hf_compat) {
    posenc_i_rope_hf_rows(rope, spec, start, positions, n_rows, f_lo, h, width, out, stride_bytes);
    return;
  }
  for (f0 = 0; f0 < h; f0 += POSENC_GROUP * POSENC_CHUNK) {
    posenc_i_job job;
    size_t nf = h - f0 < POSENC_GROUP * POSENC_CHUNK ? h - f0 : POSENC_GROUP * POSENC_CHUNK;
    posenc_i_rope_row_job(rope, spec, f_lo + f0, nf, width,
                          out + (spec->layout == POSENC_ROPE_CACHE_INTERLEAVED ? 2 * f0 : f0) * es, stride_bytes, &job);
    job.start = start;
    job.positions = positions;
    job.nrows = n_rows;
    be->sincos_rows(&job);
  }
  if (spec->layout == POSENC_ROPE_CACHE_FULL)
    for (r = 0; r < n_rows; r++) {
      unsigned char *row = out + r * stride_bytes;
      memcpy(row + width * es, row, h * es);
      memcpy(row + 3 * width * es, row + 2 * width * es, h * es);
    }
}

/* The h pairs of a row at src (laid out for width pairs, src at the first pair's cosine) to the
 * same columns at dst. */
static void posenc_i_rope_copy_pairs(unsigned char *dst, const unsigned char *src, const posenc_rope_cache_spec *spec,
                                     size_t h, size_t width) {
  size_t es = posenc_dtype_size(spec->dtype), part;
  if (spec->layout == POSENC_ROPE_CACHE_INTERLEAVED) {
    memcpy(dst, src, 2 * h * es);
    return;
  }
  for (part = 0; part < (spec->layout == POSENC_ROPE_CACHE_FULL ? 4u : 2u); part++)
    memcpy(dst + part * width * es, src + part * width * es, h * es);
}

/* Rows for positions (list) or start.. (positions NULL) into out, rows stride_bytes apart, of
 * the h pairs from pair f_lo (a multiple of POSENC_CHUNK; a whole row: 0 and rope->pairs), in
 * rows laid out for width pairs (h or more), out at the column of pair f_lo's cosine (the rest of
 * a row is left alone); arguments already checked. A pair's values do not depend on the pairs
 * made with it. The exact mode runs the backend's sincos kernel.
 * A list is taken in segments: a position equal to the one before copies that row, and a run of
 * consecutive positions is made as a range, one exact sin/cos per anchor instead of one per row
 * (the same operations: a row's value is its anchor's walked to it either way). M-RoPE's image
 * tokens repeat their temporal and row ids and count up their column ids. */
static void posenc_i_rope_rows(const posenc_i_backend *be, const posenc_rope *rope,
                               const posenc_rope_cache_spec *spec, int32_t start, const int32_t *positions,
                               size_t n_rows, size_t f_lo, size_t h, size_t width, unsigned char *out,
                               size_t stride_bytes) {
  size_t r = 0, e;
  if (!positions) {
    posenc_i_rope_rows_of(be, rope, spec, start, NULL, n_rows, f_lo, h, width, out, stride_bytes);
    return;
  }
  while (r < n_rows) {
    if (r > 0 && positions[r] == positions[r - 1]) { /* the row before, again */
      posenc_i_rope_copy_pairs(out + r * stride_bytes, out + (r - 1) * stride_bytes, spec, h, width);
      r++;
      continue;
    }
    for (e = r + 1; e < n_rows && (int64_t)positions[e] == (int64_t)positions[e - 1] + 1; e++) {}
    if (e - r > 1) {
      posenc_i_rope_rows_of(be, rope, spec, positions[r], NULL, e - r, f_lo, h, width, out + r * stride_bytes,
                            stride_bytes);
    } else { /* a list up to the next repeat or run */
      while (e < n_rows && positions[e] != positions[e - 1] &&
             !(e + 1 < n_rows && (int64_t)positions[e + 1] == (int64_t)positions[e] + 1))
        e++;
      posenc_i_rope_rows_of(be, rope, spec, 0, positions + r, e - r, f_lo, h, width, out + r * stride_bytes,
                            stride_bytes);
    }
    r = e;
  }
}

static posenc_status posenc_i_rope_cache_run(const posenc_i_backend *be, const posenc_rope *rope,
                                             const posenc_rope_cache_spec *spec, int32_t start,
                                             const int32_t *positions, size_t n_rows, void *out, size_t out_bytes) {
  size_t need, stride, es, r, tile;
  double max_abs = 0.0;
  posenc_status st;
  if (!out) return POSENC_ERR_NULL;
  st = posenc_i_rope_check_spec(rope, spec, n_rows, &need, &stride);
  if (st != POSENC_OK) return st;
  if ((st = posenc_i_out_room(out, out_bytes, need)) != POSENC_OK) return st;
  if (positions && posenc_i_ranges_meet((const unsigned char *)out, need, (const unsigned char *)positions,
                                        n_rows * sizeof *positions))
    return POSENC_ERR_ALIAS; /* n_rows * 4 <= need: no overflow */
  es = posenc_dtype_size(spec->dtype);
  st = posenc_i_max_abs_position(start, positions, n_rows, &max_abs);
  if (st != POSENC_OK) return st;
  st = posenc_i_rope_check_reach(rope, max_abs);
  if (st != POSENC_OK) return st;
  if (posenc_i_ranges_meet((const unsigned char *)out, need, (const unsigned char *)rope, posenc_i_rope_need(rope->pairs)) ||
      posenc_i_ranges_meet((const unsigned char *)out, need, (const unsigned char *)spec, sizeof *spec))
    return POSENC_ERR_ALIAS; /* both are read for every tile */
  tile = posenc_i_tile_rows(stride * es, 0);
  for (r = 0; r < n_rows; r += tile) {
    size_t n = n_rows - r < tile ? n_rows - r : tile;
    posenc_i_rope_rows(be, rope, spec, positions ? 0 : (int32_t)((int64_t)start + (int64_t)r),
                       positions ? positions + r : NULL, n, 0, rope->pairs, rope->pairs,
                       (unsigned char *)out + r * stride * es, stride * es);
  }
  return POSENC_OK;
}

POSENC_API posenc_status posenc_rope_cache_table(const posenc_rope *rope, const posenc_rope_cache_spec *spec,
                                                 int32_t start, size_t n_rows, void *out, size_t out_bytes) {
  return posenc_i_rope_cache_run(posenc_i_select(), rope, spec, start, NULL, n_rows, out, out_bytes);
}

POSENC_API posenc_status posenc_rope_cache_rows(const posenc_rope *rope, const posenc_rope_cache_spec *spec,
                                                const int32_t *positions, size_t n_rows,
                                                void *out, size_t out_bytes) {
  if (!positions) return POSENC_ERR_NULL;
  return posenc_i_rope_cache_run(posenc_i_select(), rope, spec, 0, positions, n_rows, out, out_bytes);
}

/* ---- RoPE: rotation in place -------------------------------------------------------------- */
typedef struct posenc_i_tview {  /* a tensor's fields, read once: q and k may hold their structs */
  unsigned char *data;
  posenc_dtype dtype;
  size_t es, heads, bs, ts, hs;  /* strides in elements */
  size_t span;                   /* bytes from data to one past the last element */
} posenc_i_tview;

/* A tensor's strides, with defaults; it must not overlap itself (posenc_i_strided_extent). Not
 * inlined, as posenc_i_kv_array: the checks' arrays would otherwise stay in the frame of the call
 * that then runs the rotation (80 bytes more for a decode step). */
POSENC_I_NOINLINE posenc_status posenc_i_rope_check_tensor(const posenc_rope_tensor *t, size_t D, size_t B,
                                                           size_t T, posenc_i_tview *v) {
  size_t n[3], st[3], ext;
  posenc_status s;
  if (!t->data) return POSENC_ERR_NULL;
  if (t->heads == 0) return POSENC_ERR_SIZE;
  v->es = posenc_dtype_size(t->dtype);
  if (v->es == 0) return POSENC_ERR_DTYPE;
  v->data = (unsigned char *)t->data;
  v->dtype = t->dtype;
  v->heads = t->heads;
  v->hs = t->head_stride ? t->head_stride : D;
  if (t->token_stride) v->ts = t->token_stride;
  else if (t->heads > SIZE_MAX / v->hs) return POSENC_ERR_OVERFLOW;
  else v->ts = t->heads * v->hs;
  if (t->batch_stride) v->bs = t->batch_stride;
  else if (T > SIZE_MAX / v->ts) return POSENC_ERR_OVERFLOW;
  else v->bs = T * v->ts;
  n[0] = t->heads; n[1] = T; n[2] = B;
  st[0] = v->hs; st[1] = v->ts; st[2] = v->bs;
  if ((s = posenc_i_strided_extent(D, n, st, 3, &ext)) != POSENC_OK) return s; /* ALIAS, OVERFLOW */
  return posenc_i_bytes(ext, v->es, &v->span);
}

/* q and k may share one buffer row by row (a fused QKV projection): same dtype and token
 * stride, and per token k's heads lie after q's and before the next token's row (or before). */
static int posenc_i_rope_disjoint(const posenc_i_tview *q, const posenc_i_tview *k, size_t D, size_t B, size_t T) {
  size_t fq, fk, ts, r;
  ptrdiff_t delta;
  if (!posenc_i_ranges_meet(q->data, q->span, k->data, k->span)) return 1;
  if (q->es != k->es || q->ts != k->ts || (B > 1 && (q->bs != k->bs || q->bs % q->ts != 0))) return 0;
  if (T == 1 && B == 1) return 0; /* the spans are the footprints: they meet */
  ts = q->ts;
  fq = (q->heads - 1) * q->hs + D;
  fk = (k->heads - 1) * k->hs + D;
  delta = (ptrdiff_t)((uintptr_t)k->data - (uintptr_t)q->data);
  if (delta % (ptrdiff_t)q->es != 0) return 0;
  delta /= (ptrdiff_t)q->es;
  r = (size_t)(((delta % (ptrdiff_t)ts) + (ptrdiff_t)ts) % (ptrdiff_t)ts); /* k's offset within a row */
  if (fq <= r && r + fk <= ts) return 1;
  r = (ts - r) % ts;                                                       /* or q's within k's row */
  return fk <= r && r + fq <= ts;
}

/* The position axes of a rope's rows: 3 under M-RoPE, else 1. */
static size_t posenc_i_rope_naxes(const posenc_rope *rope) {
  return rope->config.mrope != POSENC_ROPE_MROPE_NONE ? 3 : 1;
}

/* The axes of token (b, t)'s rows on the fly: 1 where it is at one position on every axis (no
 * M-RoPE, ids NULL: start + t on each, or M-RoPE's three ids equal: a text token), its rows then
 * one axis's, made once (a pair's frequency does not depend on its axis); else
 * posenc_i_rope_naxes. */
static size_t posenc_i_rope_token_axes(const posenc_rope *rope, const posenc_rope_positions *pos, size_t b,
                                       size_t t) {
  const size_t n = pos->batch * pos->tokens, i = b * pos->tokens + t;
  if (rope->config.mrope == POSENC_ROPE_MROPE_NONE || !pos->ids) return 1;
  return pos->ids[n + i] == pos->ids[i] && pos->ids[2 * n + i] == pos->ids[i] ? 1 : posenc_i_rope_naxes(rope);
}

/* The axes of a call's rows on the fly: 1 where every token is at one position on every axis (a
 * text prompt under M-RoPE: a third of the rows, and the plain rotation's cos/sin, read in place;
 * a prefill of 256 tokens x 8 heads of 128 took 3x the plain rope's time), else
 * posenc_i_rope_naxes. */
static size_t posenc_i_rope_row_axes(const posenc_rope *rope, const posenc_rope_positions *pos) {
  size_t b, t;
  for (b = 0; b < pos->batch; b++)
    for (t = 0; t < pos->tokens; t++)
      if (posenc_i_rope_token_axes(rope, pos, b, t) > 1) return posenc_i_rope_naxes(rope);
  return 1;
}

/* Pair j's position axis under M-RoPE (0 = t, 1 = h, 2 = w). */
static int posenc_i_mrope_axis(const posenc_rope_config *c, size_t j) {
  if (c->mrope == POSENC_ROPE_MROPE_SECTIONS) {
    if (j < c->mrope_section[0]) return 0;
    return j < (size_t)c->mrope_section[0] + c->mrope_section[1] ? 1 : 2;
  }
  if (c->mrope == POSENC_ROPE_MROPE_INTERLEAVED) {
    if (j % 3 == 1 && j < 3 * (size_t)c->mrope_section[1]) return 1;
    if (j % 3 == 2 && j < 3 * (size_t)c->mrope_section[2]) return 2;
  }
  return 0;
}

/* GPT-J's expanded cos/sin of the nj pairs from column col of one cache row of h pairs (one
 * axis's: the plain rope's, or a run of M-RoPE section pairs): read in place when the row is f32,
 * else converted by the backend a chunk of pairs at a time. One pair at a time through
 * posenc_i_load, the expansion took 40% of a decode step's time (AVX2, 32 heads). Out of line:
 * its chunk buffer is then on the stack only for GPT-J. */
POSENC_I_NOINLINE void posenc_i_rope_prepare_gptj(const posenc_i_backend *be, const posenc_rope_cache_spec *spec,
                                                  const unsigned char *row, size_t h, int inverse, size_t col,
                                                  size_t nj, float *c2, float *s2) {
  const int inter = spec->layout == POSENC_ROPE_CACHE_INTERLEAVED;
  const size_t es = posenc_dtype_size(spec->dtype), step = inter ? 2 : 1;
  const size_t sin_at = inter ? 1 : (spec->layout == POSENC_ROPE_CACHE_HALF ? h : 2 * h); /* sine of pair 0 */
  float t[2 * POSENC_CHUNK];
  size_t k0;
  if (spec->dtype == POSENC_DTYPE_F32) {
    be->gptj_expand(row + step * col * es, row + (sin_at + step * col) * es, step, nj, inverse, c2, s2);
    return;
  }
  for (k0 = 0; k0 < nj; k0 += POSENC_CHUNK) {
    size_t m = nj - k0 < POSENC_CHUNK ? nj - k0 : POSENC_CHUNK, j = col + k0;
    const unsigned char *tb = (const unsigned char *)t;
    if (inter) {
      be->to_f32(row + 2 * j * es, spec->dtype, t, 2 * m, 0);
      be->gptj_expand(tb, tb + sizeof(float), 2, m, inverse, c2 + 2 * k0, s2 + 2 * k0);
    } else {
      be->to_f32(row + j * es, spec->dtype, t, m, 0);
      be->to_f32(row + (sin_at + j) * es, spec->dtype, t + POSENC_CHUNK, m, 0);
      be->gptj_expand(tb, tb + POSENC_CHUNK * sizeof(float), 1, m, inverse, c2 + 2 * k0, s2 + 2 * k0);
    }
  }
}

/* posenc_i_rope_prepare under M-RoPE's sections: a run of pairs on one axis at a time, as the
 * plain paths take a row. Out of line: its locals are then not in the frame of every rotation. */
POSENC_I_NOINLINE void posenc_i_rope_prepare_sections(const posenc_i_backend *be, const posenc_rope *rope,
                                                      const posenc_rope_cache_spec *spec,
                                                      const unsigned char *const rows[3], size_t h, size_t col,
                                                      int inverse, size_t j0, size_t nj, float *cbuf, float *sbuf) {
  const posenc_rope_config *cf = &rope->config;
  const size_t es = posenc_dtype_size(spec->dtype);
  size_t j, jb, k;
  for (j = j0; j < j0 + nj; j = jb) {
    const int axis = posenc_i_mrope_axis(cf, j);
    for (jb = j + 1; jb < j0 + nj && posenc_i_mrope_axis(cf, jb) == axis; jb++) {}
    k = j - j0;
    if (cf->style == POSENC_ROPE_GPTJ) {
      posenc_i_rope_prepare_gptj(be, spec, rows[axis], h, inverse, col + k, jb - j, cbuf + 2 * k, sbuf + 2 * k);
    } else {
      size_t sin_col = spec->layout == POSENC_ROPE_CACHE_HALF ? h : 2 * h, i;
      if (spec->dtype == POSENC_DTYPE_F32) { /* on-the-fly rows: copied (no conversion's frame on the stack) */
        memcpy(cbuf + k, rows[axis] + (col + k) * es, (jb - j) * es);
        memcpy(sbuf + k, rows[axis] + (sin_col + col + k) * es, (jb - j) * es);
        for (i = 0; inverse && i < jb - j; i++) sbuf[k + i] = -sbuf[k + i];
      } else {
        be->to_f32(rows[axis] + (col + k) * es, spec->dtype, cbuf + k, jb - j, 0);
        be->to_f32(rows[axis] + (sin_col + col + k) * es, spec->dtype, sbuf + k, jb - j, inverse);
      }
    }
  }
}

/* The f32 cos/sin rows the kernel reads for pairs j0 .. j0+nj-1 of one token, from cache rows in
 * any layout and dtype (rows[axis], of h pairs, pair j0 at column col: a whole row's j0, or 0 in
 * on-the-fly rows made for these pairs alone); c[0] is pair j0's. NeoX f32 [cos|sin] rows read
 * forward from an aligned cache are used in place. One row for every axis (no M-RoPE, or a token
 * at one position on all three) takes the plain rope's paths; M-RoPE's sections take them a run
 * of pairs on one axis at a time; else (the interleaved rule, or NeoX from an interleaved cache)
 * pair by pair. */
static void posenc_i_rope_prepare(const posenc_i_backend *be, const posenc_rope *rope,
                                  const posenc_rope_cache_spec *spec, const unsigned char *const rows[3], size_t h,
                                  size_t col, int inverse, size_t j0, size_t nj, float *cbuf, float *sbuf,
                                  const float **c, const float **s) {
  size_t es = posenc_dtype_size(spec->dtype), j, k;
  const posenc_rope_config *cf = &rope->config;
  const int one_row = rows[1] == rows[0] && rows[2] == rows[0];
  if (cf->style == POSENC_ROPE_NEOX && one_row && spec->layout != POSENC_ROPE_CACHE_INTERLEAVED) {
    size_t sin_col = spec->layout == POSENC_ROPE_CACHE_HALF ? h : 2 * h;
    if (spec->dtype == POSENC_DTYPE_F32 && !inverse && (uintptr_t)rows[0] % sizeof(float) == 0) {
      /* an aligned f32 cache row is used in place; a misaligned one is copied below, byte-wise,
       * since the kernels read c and s as floats */
      *c = (const float *)(const void *)rows[0] + col;
      *s = *c + sin_col;
      return;
    }
    be->to_f32(rows[0] + col * es, spec->dtype, cbuf, nj, 0);
    be->to_f32(rows[0] + (sin_col + col) * es, spec->dtype, sbuf, nj, inverse);
    *c = cbuf; *s = sbuf;
    return;
  }
  if (cf->style == POSENC_ROPE_GPTJ && one_row) {
    posenc_i_rope_prepare_gptj(be, spec, rows[0], h, inverse, col, nj, cbuf, sbuf);
    *c = cbuf; *s = sbuf;
    return;
  }
  if (cf->mrope == POSENC_ROPE_MROPE_SECTIONS &&
      (cf->style == POSENC_ROPE_GPTJ || spec->layout != POSENC_ROPE_CACHE_INTERLEAVED)) {
    posenc_i_rope_prepare_sections(be, rope, spec, rows, h, col, inverse, j0, nj, cbuf, sbuf);
    *c = cbuf; *s = sbuf;
    return;
  }
  for (j = j0, k = 0; k < nj; j++, k++) {
    const unsigned char *row = rows[posenc_i_mrope_axis(cf, j)];
    size_t cc = spec->layout == POSENC_ROPE_CACHE_INTERLEAVED ? 2 * (col + k) : col + k;
    size_t sc = spec->layout == POSENC_ROPE_CACHE_INTERLEAVED ? 2 * (col + k) + 1
              : (spec->layout == POSENC_ROPE_CACHE_HALF ? h + col + k : 2 * h + col + k);
    float cv = posenc_i_load(row + cc * es, spec->dtype), sv = posenc_i_load(row + sc * es, spec->dtype);
    if (inverse) sv = -sv;
    if (cf->style == POSENC_ROPE_NEOX) { cbuf[k] = cv; sbuf[k] = sv; }
    else { cbuf[2 * k] = cv; cbuf[2 * k + 1] = cv; sbuf[2 * k] = -sv; sbuf[2 * k + 1] = sv; }
  }
  *c = cbuf; *s = sbuf;
}

/* The largest block of on-the-fly cos/sin rows a rotation keeps on its stack, in bytes (a decode
 * step keeps 512 whatever this is). A prefill's block holds 16 tokens' rows at rotary dim 128,
 * each block's rows starting with an exact sin/cos and up to 31 steps of the recurrence; a block
 * that holds fewer carries the recurrence on from the block before (posenc_i_rope_fly_carry),
 * a range of pairs at a time; under 4 KiB the rotation makes its cos/sin as it goes instead
 * (posenc_i_rope_fly_fused). Smaller blocks are still slower from memory: with 1 KiB a prefill of
 * 32 heads of 128 takes 0.8-1.5x the time of 8 KiB in f32, 1.2-2.2x in f16 and bf16, though less
 * in cache (8 heads: 0.7-0.9x; the README's "Stack" section). 1 KiB on Cortex-M, where an RTOS
 * task's whole stack may be 4 KiB: every RoPE call then fits it. Any size gives the same bits; at
 * least 512. It is read where the implementation is compiled (the file that defines
 * POSENC_IMPLEMENTATION, or src/posenc.c's c_args), so other translation units need not agree. */
#ifndef POSENC_ROPE_FLY_BLOCK_BYTES
#  if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
#    define POSENC_ROPE_FLY_BLOCK_BYTES 1024
#  else
#    define POSENC_ROPE_FLY_BLOCK_BYTES 8192
#  endif
#endif
#if POSENC_ROPE_FLY_BLOCK_BYTES < 512
#  error "POSENC_ROPE_FLY_BLOCK_BYTES must be at least 512, the block a decode step keeps (POSENC_I_ROPE_BLOCK_TINY)"
#endif
/* Floats of on-the-fly rows in the three frames (posenc_i_rope_fly_*): a call takes the smallest
 * whose block holds a batch row's rows. 128: a decode step (one token) always, and a call whose
 * token's rows fit no block, its rows then made a range of pairs at a time; 256: a few tokens; the
 * largest: a prefill's blocks of tokens (with POSENC_ROPE_FLY_BLOCK_BYTES at 1024, 256 too). */
#define POSENC_I_ROPE_BLOCK (POSENC_ROPE_FLY_BLOCK_BYTES / 4)
#define POSENC_I_ROPE_BLOCK_TINY 128
#define POSENC_I_ROPE_BLOCK_SMALL (POSENC_I_ROPE_BLOCK < 256 ? POSENC_I_ROPE_BLOCK : 256)
/* Pairs rotated per step (a token's rotation walks its heads once per step): their cos/sin, GPT-J
 * expanded, take 1 KiB of stack, where a whole row took 4 KiB (POSENC_ROPE_MAX_DIM). */
#define POSENC_I_ROPE_PAIRS 64
#if POSENC_I_ROPE_PAIRS < POSENC_I_ROT_SCRATCH
#  error "posenc_i_rope_tokens lends the second halves of its cos/sin buffers as the rotation's scratch"
#endif

/* One tensor's pass: read from in, rotated (or, V, copied) and written to out: a tensor (in place:
 * in itself), or a KV cache array whose slot per token the plan gives. */
typedef struct posenc_i_rot_io {
  posenc_i_tview in, out;  /* a cache array's out: data, dtype, es, hs and span only */
  posenc_rope_norm norm;
  /* flags in bytes: a store_kv call keeps three passes on the stack under the rotation's frames */
  unsigned char in_place;
  unsigned char rotate;    /* 0: copied, converted */
  unsigned char to_slots;  /* out is a KV cache array */
  unsigned char normed;    /* 1: QK-norm by norm first */
  unsigned char stream;    /* 1: a large output, written with non-temporal stores where aligned */
  unsigned char prefetch;  /* 1: a large call; the rotation asks for the next token's lines */
} posenc_i_rot_io;

/* Where a token's slot lies in a KV cache array (posenc_kv_cache), in elements. */
typedef struct posenc_i_slot_plan {
  const int64_t *slots;    /* per token; NULL: the position */
  size_t block_size, slot_stride, block_stride;
} posenc_i_slot_plan;

/* The bytes of a pass's tensor: B x T tokens of `heads` heads of D elements of es bytes. */
static double posenc_i_rope_bytes(size_t heads, size_t es, size_t D, size_t B, size_t T) {
  return (double)B * (double)T * (double)heads * (double)D * (double)es;
}

/* Whether a pass's output is better written with non-temporal stores: it is large
 * (POSENC_STREAM_MIN_BYTES), so not read back from the cache, and the rotation's vector stores
 * write every element of it. Any other store into a line that non-temporal stores are filling
 * (the dims past rotary_dim, lanes short of a vector) flushes it half-written and reads it back:
 * with rotary_dim 64 of 128 that made store_kv 2-4x slower than ordinary stores. So: rotary_dim
 * = head_dim, its pairs a multiple of 16 (a 512-bit vector's lanes, so every range of pairs is
 * whole vectors at every width). */
static int posenc_i_rope_streams(const posenc_rope *rope, const posenc_i_rot_io *io, size_t B, size_t T) {
  const size_t D = rope->config.head_dim;
  return 2 * rope->pairs == D && rope->pairs % 16 == 0 &&
         posenc_i_rope_bytes(io->in.heads, io->out.es, D, B, T) >= (double)POSENC_STREAM_MIN_BYTES;
}

/* Whether the rotations of a call whose passes read POSENC_PREFETCH_MIN_BYTES or more in all ask
 * for each next token's lines (posenc_i_pass_job): sets every pass's prefetch. */
static void posenc_i_rope_plan_prefetch(posenc_i_rot_io *io, size_t n, size_t D, size_t B, size_t T) {
  double bytes = 0.0;
  size_t i;
  for (i = 0; i < n; i++) bytes += posenc_i_rope_bytes(io[i].in.heads, io[i].in.es, D, B, T);
  for (i = 0; i < n; i++) io[i].prefetch = bytes >= (double)POSENC_PREFETCH_MIN_BYTES;
}

/* Checks an input and its output tensor. The output is the input itself (in place: the same
 * memory, dtype and strides) or lies apart from it. */
static posenc_status posenc_i_rope_check_io(const posenc_rope_tensor *in, const posenc_rope_tensor *out, size_t D,
                                            size_t B, size_t T, posenc_i_rot_io *io) {
  posenc_status st;
  if (!in || !out) return POSENC_ERR_NULL;
  if ((st = posenc_i_rope_check_tensor(in, D, B, T, &io->in)) != POSENC_OK) return st;
  if (out == in) io->out = io->in;
  else if ((st = posenc_i_rope_check_tensor(out, D, B, T, &io->out)) != POSENC_OK) return st;
  if (io->out.heads != io->in.heads) return POSENC_ERR_SIZE;
  io->in_place = io->out.data == io->in.data && io->out.dtype == io->in.dtype && io->out.hs == io->in.hs &&
                 io->out.ts == io->in.ts && (B == 1 || io->out.bs == io->in.bs);
  io->rotate = 1;
  io->to_slots = 0;
  io->normed = 0;
  io->stream = 0; /* in place never streams; posenc_i_rope_inout decides for an output */
  io->prefetch = 0; /* posenc_i_rope_plan_prefetch decides for the call */
  if (!io->in_place && posenc_i_ranges_meet(io->in.data, io->in.span, io->out.data, io->out.span))
    return POSENC_ERR_ALIAS;
  return POSENC_OK;
}

/* A pass's QK-norm (NULL: none), copied: the struct may lie where the outputs are written. */
static posenc_status posenc_i_rope_check_norm(const posenc_rope_norm *norm, posenc_i_rot_io *io) {
  if (!norm) return POSENC_OK;
  if (!norm->weight) return POSENC_ERR_NULL;
  if (!(norm->epsilon > 0.0f && norm->epsilon <= 3.4028234663852886e38f) || (unsigned)norm->weight_offset > 1u)
    return POSENC_ERR_PARAM;
  io->normed = 1;
  io->norm = *norm;
  return POSENC_OK;
}

/* 1 if a pass's output and another view (an input or output) share no element: tensors may
 * interleave a fused buffer's rows; a cache array must lie apart. */
static int posenc_i_io_apart(const posenc_i_tview *out, int out_slots, const posenc_i_tview *other, int other_slots,
                             size_t D, size_t B, size_t T) {
  if (out_slots || other_slots) return !posenc_i_ranges_meet(out->data, out->span, other->data, other->span);
  return posenc_i_rope_disjoint(out, other, D, B, T);
}

/* Elements d .. D-1 of every head of one token, from src to dst in their dtypes. */
static void posenc_i_rope_copy_heads(const posenc_i_backend *be, const posenc_i_rot_io *io, const unsigned char *src,
                                     unsigned char *dst, size_t d, size_t D) {
  size_t hd;
  if (d == 0 && io->in.hs == D && io->out.hs == D) { /* whole heads back to back: one run (decode's V) */
    be->convert(src, io->in.dtype, dst, io->out.dtype, io->in.heads * D);
    return;
  }
  for (hd = 0; hd < io->in.heads; hd++)
    be->convert(src + (hd * io->in.hs + d) * io->in.es, io->in.dtype, dst + (hd * io->out.hs + d) * io->out.es,
                io->out.dtype, D - d);
}

/* r = fl32(1/sqrt(ss * inv_d + eps)) (posenc_rope_norm): Newton's iteration for 1/sqrt from an
 * integer estimate of the double's bits (within 3.5%, Lomont's constant for doubles); four steps
 * reach double precision. Basic operations in a fixed order, so every platform rounds alike. */
static float posenc_i_rms_scale(double ss, double inv_d, float eps) {
  double v = ss * inv_d + (double)eps, hv = 0.5 * v, y;
  int i;
  if (!(v <= 1.7976931348623157e308)) return v == v ? 0.0f : (float)v; /* an infinite mean square: 0, as HF's rsqrt */
  y = posenc_i_bitsd(0x5FE6EB50C7B537A9ull - (posenc_i_dbits(v) >> 1));
  for (i = 0; i < 4; i++) y = y * (1.5 - hv * y * y);
  return (float)y;
}

/* Heads per QK-norm group: their sums and scales on the stack. 8, not 16: 96 bytes less stack
 * (MinGW's store_kv_norm cached on SSE2 was 15 bytes over its 4.5 KiB budget), and the prefill
 * faster too, a group's heads still in L1 when the rotation follows their sums (bench_qknorm,
 * (RMSNorm loop + apply) / fused, two interleaved runs: AVX2 1.35-1.45x -> 1.86-1.87x, AVX-512
 * 1.49-1.59x -> 1.74-1.79x; decode unchanged). */
#define POSENC_I_NORM_HEADS 8

/* A QK-norm group's scales, before any write (the output may be the input): job->heads heads
 * from hsrc. */
static void posenc_i_norm_scales(const posenc_i_backend *be, const posenc_i_rot_job *job, const unsigned char *hsrc,
                                 const posenc_rope_norm *norm, size_t D, float *r) {
  double ss[POSENC_I_NORM_HEADS], inv_d = 1.0 / (double)D;
  size_t i;
  be->sumsq(hsrc, job->src_dtype, job->src_head_stride, job->heads, D, ss);
  for (i = 0; i < job->heads; i++) r[i] = posenc_i_rms_scale(ss[i], inv_d, norm->epsilon);
}

/* Narrows a QK-norm group's job (hsrc, hdst: its first head) to pairs j0 .. j0+nj-1 of h, whose
 * cos/sin are c and s; the last range also writes the dims past rotary_dim. */
static void posenc_i_norm_range(posenc_i_rot_job *job, const posenc_rope_norm *norm, size_t h, size_t D,
                                const unsigned char *hsrc, unsigned char *hdst, size_t j0, size_t nj, const float *c,
                                const float *s) {
  size_t off = job->style == POSENC_ROPE_NEOX ? j0 : 2 * j0;
  int last = j0 + nj == h;
  job->pairs = nj;
  job->c = c; job->s = s;
  job->src = hsrc + off * posenc_dtype_size(job->src_dtype);
  job->dst = hdst + off * posenc_dtype_size(job->dst_dtype);
  job->norm_weight = norm->weight + off;
  job->tail_from = last ? 2 * h - off : 0;
  job->dim = last ? D - off : 0;
}

/* A token's rotation with a QK-norm, in groups of heads: their scales, then the rotation range by
 * range. job->src and dst are the heads' starts. One range (h <= POSENC_I_ROPE_PAIRS): its
 * cos/sin are c and s, already prepared; else each range is prepared here again, for each group. */
static void posenc_i_rotate_normed(const posenc_i_backend *be, const posenc_rope *rope,
                                   const posenc_rope_cache_spec *spec, const unsigned char *const rows[3],
                                   int inverse, posenc_i_rot_job *job, const posenc_rope_norm *norm, size_t D,
                                   float *cbuf, float *sbuf, const float *c, const float *s) {
  const unsigned char *src = job->src;
  unsigned char *dst = job->dst;
  size_t heads = job->heads, h = rope->pairs, h0, j0;
  float r[POSENC_I_NORM_HEADS];
  job->norm_scale = r;
  job->weight_bias = norm->weight_offset ? 1.0f : -0.0f;
  for (h0 = 0; h0 < heads; h0 += POSENC_I_NORM_HEADS) {
    const unsigned char *hsrc = src + (ptrdiff_t)h0 * job->src_head_stride;
    unsigned char *hdst = dst + (ptrdiff_t)h0 * job->dst_head_stride;
    job->heads = heads - h0 < POSENC_I_NORM_HEADS ? heads - h0 : POSENC_I_NORM_HEADS;
    posenc_i_norm_scales(be, job, hsrc, norm, D, r);
    for (j0 = 0; j0 < h; j0 += POSENC_I_ROPE_PAIRS) {
      size_t nj = h - j0 < POSENC_I_ROPE_PAIRS ? h - j0 : POSENC_I_ROPE_PAIRS;
      if (h > POSENC_I_ROPE_PAIRS)
        posenc_i_rope_prepare(be, rope, spec, rows, h, j0, inverse, j0, nj, cbuf, sbuf, &c, &s);
      posenc_i_norm_range(job, norm, h, D, hsrc, hdst, j0, nj, c, s);
      be->rotate(job);
    }
  }
}

/* The position of token (b, t) on an axis (M-RoPE's t, h, w: ids hold one plane per axis; without
 * M-RoPE, axis 0). */
static int32_t posenc_i_rope_position(const posenc_rope_positions *pos, size_t axis, size_t b, size_t t) {
  if (pos->ids) return pos->ids[(axis * pos->batch + b) * pos->tokens + t];
  return (int32_t)((int64_t)pos->start + (int64_t)t);
}

/* Where a pass writes token (b, t): its row of the output tensor, or its slot of a KV cache
 * array; NULL for a padding token (slot < 0). */
static unsigned char *posenc_i_pass_dst(const posenc_i_rot_io *io, const posenc_i_slot_plan *plan,
                                        const posenc_rope_positions *pos, size_t b, size_t t) {
  const posenc_i_tview *out = &io->out;
  if (io->to_slots) {
    int64_t slot = plan->slots ? plan->slots[b * pos->tokens + t] : (int64_t)posenc_i_rope_position(pos, 0, b, t);
    size_t sl = (size_t)slot;
    if (slot < 0) return NULL;
    return out->data + (plan->block_size ? sl / plan->block_size * plan->block_stride +
                                               sl % plan->block_size * plan->slot_stride
                                         : sl * plan->slot_stride) * out->es;
  }
  return out->data + (b * out->bs + t * out->ts) * out->es;
}

/* The layout of on-the-fly cos/sin rows (posenc_i_rope_fly's block). */
static const posenc_rope_cache_spec posenc_i_fly_spec = {POSENC_ROPE_CACHE_HALF, POSENC_DTYPE_F32, 0};

/* Where the token after (b, t) in the rotation's order (tokens of a batch row, then the next
 * row's first) lies from (b, t) in a pass's input, in bytes; 0 after the last. */
static ptrdiff_t posenc_i_next_token(const posenc_i_tview *in, const posenc_rope_positions *pos, size_t b, size_t t) {
  if (t + 1 < pos->tokens) return (ptrdiff_t)(in->ts * in->es);
  if (b + 1 < pos->batch) return (ptrdiff_t)(in->bs * in->es) - (ptrdiff_t)(t * in->ts * in->es);
  return 0;
}

/* A rotation job for token (b, t) of a pass (src, dst: the token's first head), all its pairs
 * from pair 0; the caller narrows it to a range. In a large call (io->prefetch) the kernel asks
 * for the next token's lines while it rotates these: bench_rope's 64 MiB prefill ran a third
 * faster; from a core's cache the prefetches only cost (10-30% of a 1 MiB prefill, none at 4). */
static posenc_i_rot_job posenc_i_pass_job(const posenc_i_rot_io *io, const posenc_rope *rope,
                                          const posenc_rope_positions *pos, size_t b, size_t t,
                                          const unsigned char *src, unsigned char *dst) {
  posenc_i_rot_job job;
  job.src = src;
  job.src_head_stride = (ptrdiff_t)(io->in.hs * io->in.es);
  job.src_dtype = io->in.dtype;
  job.dst = dst;
  job.dst_head_stride = (ptrdiff_t)(io->out.hs * io->out.es);
  job.dst_dtype = io->out.dtype;
  job.heads = io->in.heads;
  job.pairs = job.half = rope->pairs;
  job.style = (unsigned char)rope->config.style;
  job.c = job.s = NULL;
  job.norm_scale = NULL;
  job.stream = io->stream;
  job.ahead = io->prefetch ? posenc_i_next_token(&io->in, pos, b, t) : 0;
  job.scratch_c = job.scratch_s = NULL;
  return job;
}

/* The first 64-byte boundary in an array of floats declared 16 floats longer. */
static float *posenc_i_align64(float *a) {
  return a + (64 - (uintptr_t)a % 64) % 64 / sizeof(float);
}

/* Tokens t0 .. t0+nt-1 of batch row b, every pass, pairs j_lo .. j_hi-1: cos/sin once per token
 * and range, from the cache's rows or (cache NULL) from block: nt on-the-fly rows per axis, of
 * those pairs alone where they are not all (each axis's row at 2*(j_hi-j_lo) floats; one token;
 * the passes with a QK-norm are then left to the caller). cbuf: the caller's buffers for the
 * cos/sin as the kernel reads them, 4*bp floats, 64-byte aligned: ranges of up to bp pairs.
 * Inlined into three functions, for all pairs, for a range, for a carried range: the range's
 * bounds would otherwise take stack in every rotation. */
POSENC_I_FORCEINLINE void posenc_i_rope_tokens_in(const posenc_i_backend *be, const posenc_rope *rope,
                                                  const posenc_rope_cache_view *cache, size_t crow_bytes,
                                                  const posenc_rope_positions *pos, const posenc_i_rot_io *io,
                                                  size_t n, const posenc_i_slot_plan *plan, int inverse, size_t b,
                                                  size_t t0, size_t nt, const float *block, size_t j_lo,
                                                  size_t j_hi, float *const cbuf, const size_t bp) {
  size_t D = rope->config.head_dim, h = rope->pairs, i, tt, a;
  size_t naxes = posenc_i_rope_naxes(rope);
  const posenc_rope_cache_spec *spec = cache ? &cache->spec : &posenc_i_fly_spec;
  const size_t row_h = j_hi - j_lo; /* pairs of a row, from pair j_lo */
  float *const sbuf = cbuf + 2 * bp;
  void (*rotate)(const posenc_i_rot_job *) = be->rotate;
  for (tt = 0; tt < nt; tt++) {
    size_t t = t0 + tt, j0;
    const unsigned char *rows[3];
    const float *c = NULL, *s = NULL; /* set by the pass below (h >= 1), which g++ cannot see */
    const size_t token_axes = cache ? naxes : posenc_i_rope_token_axes(rope, pos, b, t); /* on the fly */
    for (a = 0; a < 3; a++) {
      size_t ax = a < token_axes ? a : 0;
      if (cache) {
        rows[a] = (const unsigned char *)cache->data + (size_t)posenc_i_rope_position(pos, ax, b, t) * crow_bytes;
      } else {
        rows[a] = (const unsigned char *)(block + (ax * nt + tt) * 2 * row_h);
      }
    }
    for (j0 = j_lo; j0 < j_hi; j0 += bp) { /* pairs j0 .. j0+nj-1: elements off.. (NeoX: and +h) */
      size_t nj = j_hi - j0 < bp ? j_hi - j0 : bp;
      size_t off = rope->config.style == POSENC_ROPE_NEOX ? j0 : 2 * j0;
      int last = j0 + nj == h;
      posenc_i_rope_prepare(be, rope, spec, rows, row_h, j0 - j_lo, inverse, j0, nj, cbuf, sbuf, &c, &s);
      for (i = 0; i < n; i++) {
        const posenc_i_tview *in = &io[i].in;
        const unsigned char *src = in->data + (b * in->bs + t * in->ts) * in->es;
        unsigned char *dst;
        if (io[i].normed) continue; /* below, all ranges at once per group of heads */
        if (!(dst = posenc_i_pass_dst(&io[i], plan, pos, b, t))) continue; /* a padding token: no slot */
        if (io[i].rotate) {
          posenc_i_rot_job job = posenc_i_pass_job(&io[i], rope, pos, b, t, src + off * in->es, dst + off * io[i].out.es);
          job.pairs = nj;
          job.c = c; job.s = s;
          if (rope->config.style == POSENC_ROPE_NEOX && bp >= POSENC_I_ROT_SCRATCH) {
            job.scratch_c = cbuf + bp; /* NeoX's c and s use the buffers' first halves at most */
            job.scratch_s = sbuf + bp;
          }
          rotate(&job);
          if (last && !io[i].in_place && 2 * h < D) posenc_i_rope_copy_heads(be, &io[i], src, dst, 2 * h, D);
        } else if (j0 == 0) { /* V: copied once */
          posenc_i_rope_copy_heads(be, &io[i], src, dst, 0, D);
        }
      }
    }
    for (i = 0; row_h == h && i < n; i++) { /* the passes with a QK-norm: all pairs at once */
      const posenc_i_tview *in = &io[i].in;
      unsigned char *dst;
      posenc_i_rot_job job;
      if (!io[i].normed || !(dst = posenc_i_pass_dst(&io[i], plan, pos, b, t))) continue;
      job = posenc_i_pass_job(&io[i], rope, pos, b, t, in->data + (b * in->bs + t * in->ts) * in->es, dst);
      posenc_i_rotate_normed(be, rope, spec, rows, inverse, &job, &io[i].norm, D, cbuf, sbuf, c, s);
    }
  }
}

/* posenc_i_rope_tokens_in for all pairs (whole rows). Not inlined: its cos/sin buffers are then
 * never on the stack together with the row kernels' frames. */
POSENC_I_NOINLINE void posenc_i_rope_tokens(const posenc_i_backend *be, const posenc_rope *rope,
                                            const posenc_rope_cache_view *cache, size_t crow_bytes,
                                            const posenc_rope_positions *pos, const posenc_i_rot_io *io, size_t n,
                                            const posenc_i_slot_plan *plan, int inverse, size_t b, size_t t0,
                                            size_t nt, const float *block) {
  /* cos/sin as the kernel reads them (GPT-J expanded, converted, split), each 64-byte aligned:
   * at an odd multiple of 16 bytes every other 256-bit load split a cache line, and a GPT-J
   * decode step took 520-650 ns instead of 390-450 (AVX2, Q 32 heads of 128), as the stack fell */
  float bufs[4 * POSENC_I_ROPE_PAIRS + 16];
  posenc_i_rope_tokens_in(be, rope, cache, crow_bytes, pos, io, n, plan, inverse, b, t0, nt, block, 0, rope->pairs,
                          posenc_i_align64(bufs), POSENC_I_ROPE_PAIRS);
}

/* posenc_i_rope_tokens_in for pairs j_lo .. j_hi-1 of token t, from on-the-fly rows of those pairs
 * at block. Not inlined, as posenc_i_rope_tokens. */
POSENC_I_NOINLINE void posenc_i_rope_token_range(const posenc_i_backend *be, const posenc_rope *rope,
                                                 const posenc_rope_positions *pos, const posenc_i_rot_io *io,
                                                 size_t n, const posenc_i_slot_plan *plan, int inverse, size_t b,
                                                 size_t t, const float *block, size_t j_lo, size_t j_hi) {
  float bufs[4 * POSENC_I_ROPE_PAIRS + 16]; /* as posenc_i_rope_tokens's */
  posenc_i_rope_tokens_in(be, rope, NULL, 0, pos, io, n, plan, inverse, b, t, 1, block, j_lo, j_hi,
                          posenc_i_align64(bufs), POSENC_I_ROPE_PAIRS);
}

/* On-the-fly rows of token (b, t), pairs j0 .. j0+nj-1 alone: a row of 2*nj floats per axis at
 * block, for the axes those pairs use (M-RoPE's sections give most ranges one axis). Not inlined:
 * the row job's frame is then not in its callers'. */
POSENC_I_NOINLINE void posenc_i_rope_fly_range(const posenc_i_backend *be, const posenc_rope *rope,
                                               const posenc_rope_positions *pos, size_t b, size_t t, size_t j0,
                                               size_t nj, float *block) {
  size_t naxes = posenc_i_rope_token_axes(rope, pos, b, t), a, j;
  for (a = 0; a < naxes; a++) {
    for (j = j0; naxes > 1 && j < j0 + nj && posenc_i_mrope_axis(&rope->config, j) != (int)a; j++) {}
    if (j < j0 + nj) /* some pair of the range is on this axis */
      posenc_i_rope_rows(be, rope, &posenc_i_fly_spec, posenc_i_rope_position(pos, a, b, t), NULL, 1, j0, nj, nj,
                         (unsigned char *)(block + a * 2 * nj), 0);
  }
}

/* Pairs per range where a token on the fly has passes with a QK-norm (posenc_i_rope_fly_ranges_normed):
 * half of POSENC_I_ROPE_PAIRS, so that posenc_i_rope_norm_fly's cos/sin buffers take 512 bytes
 * less than posenc_i_rope_tokens's, under the QK-norm kernel, whose frame is the largest
 * rotation's. */
#define POSENC_I_NORM_FLY_PAIRS 32

/* The heads with a QK-norm of token (b, t) past the first k0 of them (in pass order), at most room
 * of them, whose scales are r[0..]: with nj 0 it makes those scales (before any write: the output
 * may be the input), else it rotates their pairs j0 .. j0+nj-1 (nj <= POSENC_I_NORM_FLY_PAIRS)
 * from the rows at block (posenc_i_rope_fly_range). Returns how many heads that was. Not inlined,
 * as posenc_i_rope_tokens. */
POSENC_I_NOINLINE size_t posenc_i_rope_norm_fly(const posenc_i_backend *be, const posenc_rope *rope,
                                                const posenc_rope_positions *pos, const posenc_i_rot_io *io, size_t n,
                                                const posenc_i_slot_plan *plan, int inverse, size_t b, size_t t,
                                                const float *block, float *r, size_t room, size_t k0, size_t j0,
                                                size_t nj) {
  size_t naxes = posenc_i_rope_token_axes(rope, pos, b, t), D = rope->config.head_dim, used = 0, a, i, hd;
  float bufs[4 * POSENC_I_NORM_FLY_PAIRS + 16];
  float *const cbuf = posenc_i_align64(bufs), *const sbuf = cbuf + 2 * POSENC_I_NORM_FLY_PAIRS;
  const float *c = NULL, *s = NULL;
  if (nj) {
    const unsigned char *rows[3];
    for (a = 0; a < 3; a++) rows[a] = (const unsigned char *)(block + (a < naxes ? a : 0) * 2 * nj);
    posenc_i_rope_prepare(be, rope, &posenc_i_fly_spec, rows, nj, 0, inverse, j0, nj, cbuf, sbuf, &c, &s);
  }
  for (i = 0; i < n && used < room; i++) {
    const posenc_i_tview *in = &io[i].in;
    const unsigned char *src = in->data + (b * in->bs + t * in->ts) * in->es;
    unsigned char *dst;
    posenc_i_rot_job job;
    if (!io[i].normed || !(dst = posenc_i_pass_dst(&io[i], plan, pos, b, t))) continue; /* padding: no slot */
    if (k0 >= in->heads) { k0 -= in->heads; continue; }
    job = posenc_i_pass_job(&io[i], rope, pos, b, t, src, dst);
    job.weight_bias = io[i].norm.weight_offset ? 1.0f : -0.0f;
    for (hd = k0, k0 = 0; hd < in->heads && used < room; hd += job.heads, used += job.heads) {
      const unsigned char *hsrc = src + (ptrdiff_t)hd * job.src_head_stride;
      unsigned char *hdst = dst + (ptrdiff_t)hd * job.dst_head_stride;
      job.heads = in->heads - hd; /* the scales in groups (their sums' buffer), the rotation at once */
      if (!nj && job.heads > POSENC_I_NORM_HEADS) job.heads = POSENC_I_NORM_HEADS;
      if (job.heads > room - used) job.heads = room - used;
      if (!nj) {
        posenc_i_norm_scales(be, &job, hsrc, &io[i].norm, D, r + used);
      } else {
        job.norm_scale = r + used;
        posenc_i_norm_range(&job, &io[i].norm, rope->pairs, D, hsrc, hdst, j0, nj, c, s);
        be->rotate(&job);
      }
    }
  }
  return used;
}

/* posenc_i_rope_fly_ranges where a pass has a QK-norm, ranges of at most POSENC_I_NORM_FLY_PAIRS:
 * the scales of the heads with one come first, kept in the block past a range's rows, then each
 * range's rows are made once for all heads while they fit (a decode step's Q and K heads), else
 * again for each block's worth of heads. */
POSENC_I_NOINLINE void posenc_i_rope_fly_ranges_normed(const posenc_i_backend *be, const posenc_rope *rope,
                                                       const posenc_rope_positions *pos, const posenc_i_rot_io *io,
                                                       size_t n, const posenc_i_slot_plan *plan, int inverse,
                                                       float *block, size_t cap) {
  size_t h = rope->pairs, naxes = posenc_i_rope_naxes(rope), b, t, j0, k0, nk;
  size_t wp = cap / (naxes * 2) / POSENC_CHUNK * POSENC_CHUNK, room;
  float *r;
  if (wp > POSENC_I_NORM_FLY_PAIRS) wp = POSENC_I_NORM_FLY_PAIRS;
  r = block + naxes * 2 * wp;
  room = cap - naxes * 2 * wp; /* 32 floats at least: cap is the smallest frame's 128 or more */
  for (b = 0; b < pos->batch; b++)
    for (t = 0; t < pos->tokens; t++)
      for (k0 = 0;; k0 += nk) { /* the heads with a QK-norm past the first k0, and first the passes without */
        nk = posenc_i_rope_norm_fly(be, rope, pos, io, n, plan, inverse, b, t, block, r, room, k0, 0, 0);
        if (k0 && !nk) break;
        for (j0 = 0; j0 < h; j0 += wp) {
          size_t nj = h - j0 < wp ? h - j0 : wp;
          posenc_i_rope_fly_range(be, rope, pos, b, t, j0, nj, block);
          if (!k0) posenc_i_rope_token_range(be, rope, pos, io, n, plan, inverse, b, t, block, j0, j0 + nj);
          if (nk) posenc_i_rope_norm_fly(be, rope, pos, io, n, plan, inverse, b, t, block, r, room, k0, j0, nj);
        }
        if (nk < room) break;
      }
}

/* On the fly, where a token's rows do not fit in block (cap floats) and no pass has a QK-norm
 * (else posenc_i_rope_fly_ranges_normed, apart so that its locals, 112 bytes more on x86-64, are
 * not under these calls' kernels): token by token, its rows made a range of pairs at a time (as
 * many as fit: a multiple of POSENC_CHUNK, at most POSENC_I_ROPE_PAIRS), each range rotated in
 * every pass. The row kernel runs here, so its frame is never under the rotation's cos/sin
 * buffers; not inlined, its locals are not in the frames of the calls whose rows fit. A token
 * pays the exact sin/cos and the steps to its position again for each range: a decode step's rows
 * cost the same as in one block. */
POSENC_I_NOINLINE void posenc_i_rope_fly_ranges(const posenc_i_backend *be, const posenc_rope *rope,
                                                const posenc_rope_positions *pos, const posenc_i_rot_io *io,
                                                size_t n, const posenc_i_slot_plan *plan, int inverse, float *block,
                                                size_t cap) {
  size_t h = rope->pairs, naxes = posenc_i_rope_naxes(rope);
  size_t wp = cap / (naxes * 2) / POSENC_CHUNK * POSENC_CHUNK, b, t, j0;
  if (wp > POSENC_I_ROPE_PAIRS) wp = POSENC_I_ROPE_PAIRS;
  for (b = 0; b < pos->batch; b++)
    for (t = 0; t < pos->tokens; t++)
      for (j0 = 0; j0 < h; j0 += wp) {
        size_t nj = h - j0 < wp ? h - j0 : wp;
        posenc_i_rope_fly_range(be, rope, pos, b, t, j0, nj, block);
        posenc_i_rope_token_range(be, rope, pos, io, n, plan, inverse, b, t, block, j0, j0 + nj);
      }
}

/* The pairs [*lo, *hi) of an axis's on-the-fly rows that a block's tokens read, in whole chunks:
 * under M-RoPE's sections, axes 1 and 2 only their own sections' (the h and w axes of an image
 * token); axis 0 all, for the tokens at one position on all three, which read it alone. */
static void posenc_i_rope_axis_pairs(const posenc_rope *rope, size_t axis, size_t *lo, size_t *hi) {
  const posenc_rope_config *cf = &rope->config;
  size_t h = rope->pairs, first = 0, end = h;
  if (axis > 0 && cf->mrope == POSENC_ROPE_MROPE_SECTIONS) {
    first = axis == 1 ? cf->mrope_section[0] : (size_t)cf->mrope_section[0] + cf->mrope_section[1];
    if (axis == 1) end = first + cf->mrope_section[1];
    if (first > h) first = h;
    if (end > h) end = h;
  }
  *lo = first / POSENC_CHUNK * POSENC_CHUNK;
  *hi = first < end ? (end + POSENC_CHUNK - 1) / POSENC_CHUNK * POSENC_CHUNK : *lo;
  if (*hi > h) *hi = h;
}

/* On-the-fly rows of tokens t0 .. t0+nt-1 of batch row b on one axis, into rows of all pairs at
 * out (posenc_i_rope_axis_pairs's pairs of them). Inlined: out of line, its frame sat under the
 * row kernels', the deepest call on Windows x64 (clang-cl, AVX-512, the 1 KiB block: 6,699 bytes
 * against 6,571 inlined); gcc on x86-64 takes the same either way. */
POSENC_I_FORCEINLINE void posenc_i_rope_axis_rows(const posenc_i_backend *be, const posenc_rope *rope,
                                               const posenc_rope_positions *pos, size_t axis, size_t b, size_t t0,
                                               size_t nt, float *out) {
  const size_t h = rope->pairs;
  const int32_t *ids = pos->ids ? pos->ids + (axis * pos->batch + b) * pos->tokens + t0 : NULL;
  const int32_t start = ids ? 0 : (int32_t)((int64_t)pos->start + (int64_t)t0);
  size_t lo, hi;
  posenc_i_rope_axis_pairs(rope, axis, &lo, &hi);
  if (hi > lo)
    posenc_i_rope_rows(be, rope, &posenc_i_fly_spec, start, ids, nt, lo, hi - lo, h, (unsigned char *)(out + lo),
                       2 * h * sizeof(float));
}

/* A chunk's recurrence state (4 x POSENC_CHUNK doubles) and 4 tokens' rows of its pairs, in
 * floats; the chunks of pairs a carried range takes (posenc_i_rope_fly_carry), and their pairs. */
#define POSENC_I_CARRY_FLOATS (2 * 4 * POSENC_CHUNK + 4 * 2 * POSENC_CHUNK)
#define POSENC_I_CARRY_CHUNKS (POSENC_I_ROPE_BLOCK / POSENC_I_CARRY_FLOATS < POSENC_I_ROPE_PAIRS / POSENC_CHUNK ? \
                               POSENC_I_ROPE_BLOCK / POSENC_I_CARRY_FLOATS : POSENC_I_ROPE_PAIRS / POSENC_CHUNK)
#define POSENC_I_CARRY_PAIRS (POSENC_I_CARRY_CHUNKS * POSENC_CHUNK)

/* posenc_i_rope_tokens_in for pairs j0 .. j0+nj-1 (nj <= POSENC_I_CARRY_PAIRS) of token t, from its
 * rows at block, with cos/sin buffers of that range's size (with a 1 KiB block: 320 bytes, not
 * 1,088). Not inlined, as posenc_i_rope_tokens. */
POSENC_I_NOINLINE void posenc_i_rope_carry_token(const posenc_i_backend *be, const posenc_rope *rope,
                                                 const posenc_rope_positions *pos, const posenc_i_rot_io *io,
                                                 size_t n, const posenc_i_slot_plan *plan, int inverse, size_t b,
                                                 size_t t, const float *block, size_t j0, size_t nj) {
  float bufs[4 * POSENC_I_CARRY_PAIRS + 16];
  posenc_i_rope_tokens_in(be, rope, NULL, 0, pos, io, n, plan, inverse, b, t, 1, block, j0, j0 + nj,
                          posenc_i_align64(bufs), POSENC_I_CARRY_PAIRS);
}

/* The end of the tokens from t0 on (consecutive positions from pos->start) up to the next anchor. */
static size_t posenc_i_rope_tile_end(const posenc_rope_positions *pos, size_t t0) {
  const int64_t p0 = (int64_t)pos->start + (int64_t)t0;
  const size_t to_anchor = POSENC_ANCHOR - (size_t)((uint64_t)p0 & (POSENC_ANCHOR - 1));
  return pos->tokens - t0 < to_anchor ? pos->tokens : t0 + to_anchor;
}

/* Batch row by batch row, from anchor to anchor, a range of wp pairs at a time: rows of that range
 * for nt_block tokens at a time, the first at the anchor's token (or the call's first), the rest
 * carried on from the block before in state; each token's range then rotated in every pass. */
POSENC_I_FORCEINLINE void posenc_i_rope_fly_carried(const posenc_i_backend *be, const posenc_rope *rope,
                                                    const posenc_rope_positions *pos, const posenc_i_rot_io *io,
                                                    size_t n, const posenc_i_slot_plan *plan, int inverse,
                                                    double *state, float *rows, size_t nt_block, size_t wp) {
  const size_t h = rope->pairs;
  size_t b, t0, t, j0, k;
  posenc_i_job job; /* here, not in a function between: the row kernel's frame is the deepest below */
  for (b = 0; b < pos->batch; b++)
    for (t0 = 0; t0 < pos->tokens;) {
      const size_t te = posenc_i_rope_tile_end(pos, t0);
      for (j0 = 0; j0 < h; j0 += wp) {
        const size_t nj = h - j0 < wp ? h - j0 : wp;
        posenc_i_rope_row_job(rope, &posenc_i_fly_spec, j0, nj, nj, (unsigned char *)rows, 2 * nj * sizeof(float), &job);
        job.positions = NULL;
        job.state = state;
        for (t = t0; t < te; t += nt_block) {
          const size_t nt = te - t < nt_block ? te - t : nt_block;
          job.start = (int32_t)((int64_t)pos->start + (int64_t)t);
          job.nrows = nt;
          job.resume = t != t0;
          be->sincos_rows(&job);
          for (k = 0; k < nt; k++)
            posenc_i_rope_carry_token(be, rope, pos, io, n, plan, inverse, b, t + k, rows + k * 2 * nj, j0, nj);
        }
      }
      t0 = te;
    }
}

/* On the fly: blocks of tokens whose cos/sin rows fit in block (cap floats), then their
 * rotations; where a token's rows do not fit, posenc_i_rope_fly_ranges(_normed). */
POSENC_I_FORCEINLINE void posenc_i_rope_fly_blocks(const posenc_i_backend *be, const posenc_rope *rope,
                                                   const posenc_rope_positions *pos, const posenc_i_rot_io *io,
                                                   size_t n, const posenc_i_slot_plan *plan, int inverse, float *block,
                                                   size_t cap) {
  size_t h = rope->pairs, B = pos->batch, T = pos->tokens, nt_max, b, t0, i;
  size_t naxes = posenc_i_rope_row_axes(rope, pos);
  nt_max = cap / (naxes * 2 * h);
  if (nt_max == 0) {
    for (i = 0; i < n && !io[i].normed; i++) {}
    if (i < n) posenc_i_rope_fly_ranges_normed(be, rope, pos, io, n, plan, inverse, block, cap);
    else posenc_i_rope_fly_ranges(be, rope, pos, io, n, plan, inverse, block, cap);
    return;
  }
  for (b = 0; b < B; b++) {
    for (t0 = 0; t0 < T; t0 += nt_max) {
      size_t nt = T - t0 < nt_max ? T - t0 : nt_max, a;
      for (a = 0; a < naxes; a++) posenc_i_rope_axis_rows(be, rope, pos, a, b, t0, nt, block + a * nt * 2 * h);
      posenc_i_rope_tokens(be, rope, NULL, 0, pos, io, n, plan, inverse, b, t0, nt, block);
    }
  }
}

/* Three frames, each with its own block: a call whose rows fit a small block (a decode step, the
 * self-test) keeps 0.5 or 1 KiB of rows on the stack instead of 8. Any gives the same bits: a
 * row's value does not depend on the block it is made in, nor on the pairs made with it. Each
 * block is 64-byte aligned, as the rows of a cache from malloc are: the rotation reads its cos/sin
 * a vector per head from there. */
#define POSENC_I_ROPE_FLY_FRAME(name, floats)                                                                    \
  POSENC_I_NOINLINE void name(const posenc_i_backend *be, const posenc_rope *rope,                            \
                              const posenc_rope_positions *pos, const posenc_i_rot_io *io, size_t n,          \
                              const posenc_i_slot_plan *plan, int inverse) {                                  \
    float block[(floats) + 16];                                                                               \
    posenc_i_rope_fly_blocks(be, rope, pos, io, n, plan, inverse, posenc_i_align64(block), (floats));         \
  }
POSENC_I_ROPE_FLY_FRAME(posenc_i_rope_fly_tiny, POSENC_I_ROPE_BLOCK_TINY)
POSENC_I_ROPE_FLY_FRAME(posenc_i_rope_fly_small, POSENC_I_ROPE_BLOCK_SMALL)
POSENC_I_ROPE_FLY_FRAME(posenc_i_rope_fly, POSENC_I_ROPE_BLOCK)
#undef POSENC_I_ROPE_FLY_FRAME

/* On the fly, where a block holds the rows of fewer than half an anchor's tokens (a small
 * POSENC_ROPE_FLY_BLOCK_BYTES, or rotary dims past 128 in the default block) and more tokens than
 * that follow on: consecutive positions (no ids) on one axis, not in HF compatibility mode, no
 * pass with a QK-norm (posenc_i_rope_carry_token's buffers are too small for its rotation) or
 * streamed stores (a range writes parts of a line). A token whose rows fit no block keeps the
 * smallest frame (posenc_i_rope_fly_ranges): this one's block would put it past 4 KiB with a 1 KiB
 * block. A block's rows start with an exact sin/cos and up to 31 steps of the recurrence to their
 * first token; here the recurrence is carried from one block to the next instead, a range of
 * POSENC_I_CARRY_CHUNKS chunks of pairs at a time: the block's front keeps the last row's
 * (s, c, sp, cp) of each lane, 512 bytes a chunk, and the rest the rows. Each token is then one
 * step from the last. The same values as every other way (posenc_i_job's state). */
POSENC_I_NOINLINE void posenc_i_rope_fly_carry(const posenc_i_backend *be, const posenc_rope *rope,
                                               const posenc_rope_positions *pos, const posenc_i_rot_io *io, size_t n,
                                               const posenc_i_slot_plan *plan, int inverse) {
  union { float f[POSENC_I_ROPE_BLOCK + 16]; double d[POSENC_I_ROPE_BLOCK / 2 + 8]; } block;
  float *const f = posenc_i_align64(block.f);
  double *const state = block.d + (f - block.f) / 2;
  const size_t h = rope->pairs;
  size_t chunks = (h + POSENC_CHUNK - 1) / POSENC_CHUNK, sf, wp;
  if (chunks > POSENC_I_CARRY_CHUNKS) chunks = POSENC_I_CARRY_CHUNKS; /* 1 at least: posenc_i_rope_run's condition */
  sf = 2 * 4 * POSENC_CHUNK * chunks;
  wp = chunks * POSENC_CHUNK < h ? chunks * POSENC_CHUNK : h;
  memset(state, 0, sf * sizeof(float)); /* lanes past h too: a resumed chunk loads them all */
  posenc_i_rope_fly_carried(be, rope, pos, io, n, plan, inverse, state, f + sf, (POSENC_I_ROPE_BLOCK - sf) / (2 * wp),
                            wp);
}

/* Pairs the fused rotation (posenc_i_rope_fly_fused) takes a call at a time: its recurrence's
 * scratch, 32 bytes a pair, is half the on-the-fly block's size (a chunk's at least). */
#define POSENC_I_FLY_PAIRS (POSENC_I_ROPE_BLOCK / 16 >= POSENC_CHUNK ? POSENC_I_ROPE_BLOCK / 16 / POSENC_CHUNK * POSENC_CHUNK \
                                                                  : POSENC_CHUNK)

/* Whether the carried passes run on the fused rotation (posenc_i_fly_job): where the carried
 * rows would be rotated in ranges of fewer than 64 pairs (a block under 4 KiB), with whole chunks of
 * pairs, no KV cache slots (so no V either), each pass in one dtype (in place, or out of place into
 * its own dtype). The others keep the carried rows (posenc_i_rope_fly_carry). With the 8 KiB
 * block's ranges of 128 pairs the fused kernel was 13-25% slower on SSE2 (its chunk's 40 f64
 * vectors spill), as fast on AVX2 and 10-15% faster on AVX-512 (rotary dims 256 and 512, 8 heads). */
static int posenc_i_rope_fusable(const posenc_rope *rope, const posenc_i_rot_io *io, size_t n) {
  size_t i;
  if (POSENC_I_CARRY_CHUNKS >= 4 || rope->pairs % POSENC_CHUNK != 0) return 0;
  for (i = 0; i < n; i++)
    if (io[i].to_slots || !io[i].rotate || io[i].in.dtype != io[i].out.dtype) return 0;
  return 1;
}

/* Bytes from a fused call's first element of a pass (token t0 of the tile t0 .. te-1 of batch row
 * b, pair f) to the next call's (pairs f+nf on of the same tile, else the next tile's or the next
 * batch row's first pair at its first token); 0 after the last. */
static ptrdiff_t posenc_i_fly_next_call(const posenc_i_tview *in, const posenc_rope_positions *pos, size_t b,
                                        size_t t0, size_t te, size_t f, size_t nf, size_t h, size_t per_pair) {
  const ptrdiff_t here = (ptrdiff_t)((t0 * in->ts + f * per_pair) * in->es);
  if (f + nf < h) return (ptrdiff_t)(nf * per_pair * in->es);
  if (te < pos->tokens) return (ptrdiff_t)(te * in->ts * in->es) - here;
  if (b + 1 < pos->batch) return (ptrdiff_t)(in->bs * in->es) - here;
  return 0;
}

/* The carried passes (posenc_i_rope_run) on the fused rotation: batch row by batch row, from
 * anchor to anchor, POSENC_I_FLY_PAIRS pairs at a time, a kernel call for up to
 * POSENC_I_FLY_PASSES passes alike (Q and K in one dtype: one walk of the recurrence); then, out
 * of place, each token's elements past the rotary dim. */
POSENC_I_NOINLINE void posenc_i_rope_fly_fused(const posenc_i_backend *be, const posenc_rope *rope,
                                               const posenc_rope_positions *pos, const posenc_i_rot_io *io, size_t n,
                                               int inverse) {
  double state[4 * POSENC_I_FLY_PAIRS];
  const size_t h = rope->pairs, D = rope->config.head_dim;
  const size_t per_pair = rope->config.style == POSENC_ROPE_NEOX ? 1 : 2; /* elements of a pair before it */
  posenc_i_job rows;
  posenc_i_fly_job job;
  size_t b, t0, t, f, i, last = 0;
  job.rows = &rows;
  job.inverse = inverse;
  job.prefetch = io[0].prefetch; /* alike for every pass (posenc_i_rope_plan_prefetch) */
  for (b = 0; b < pos->batch; b++)
    for (t0 = 0; t0 < pos->tokens;) {
      const size_t te = posenc_i_rope_tile_end(pos, t0);
      for (f = 0; f < h; f += POSENC_I_FLY_PAIRS) {
        const size_t nf = h - f < POSENC_I_FLY_PAIRS ? h - f : POSENC_I_FLY_PAIRS;
        /* rows' out is unused: the kernel keeps no row */
        posenc_i_rope_row_job(rope, &posenc_i_fly_spec, f, nf, nf, (unsigned char *)state, 0, &rows);
        rows.start = (int32_t)((int64_t)pos->start + (int64_t)t0);
        rows.positions = NULL;
        rows.state = state;
        job.tokens = te - t0;
        job.npass = 0;
        for (i = 0; i < n; i++) {
          const posenc_i_tview *in = &io[i].in, *out = &io[i].out;
          if (job.npass && (job.npass == POSENC_I_FLY_PASSES || in->dtype != io[last].in.dtype ||
                            io[i].in_place != io[last].in_place)) {
            be->rope_fly(&job);
            job.npass = 0;
          }
          job.pass[job.npass] = posenc_i_pass_job(&io[i], rope, pos, b, t0,
                                                  in->data + (b * in->bs + t0 * in->ts + f * per_pair) * in->es,
                                                  out->data + (b * out->bs + t0 * out->ts + f * per_pair) * out->es);
          job.next_call[job.npass] = job.prefetch ? posenc_i_fly_next_call(in, pos, b, t0, te, f, nf, h, per_pair)
                                                  : 0;
          job.src_ts[job.npass] = (ptrdiff_t)(in->ts * in->es);
          job.dst_ts[job.npass] = (ptrdiff_t)(out->ts * out->es);
          job.npass++;
          last = i;
        }
        if (job.npass) be->rope_fly(&job);
      }
      for (t = t0; 2 * h < D && t < te; t++)
        for (i = 0; i < n; i++) {
          const posenc_i_tview *in = &io[i].in, *out = &io[i].out;
          if (!io[i].in_place)
            posenc_i_rope_copy_heads(be, &io[i], in->data + (b * in->bs + t * in->ts) * in->es,
                                     out->data + (b * out->bs + t * out->ts) * out->es, 2 * h, D);
        }
      t0 = te;
    }
}

/* Runs n passes (Q, K, V) over validated views: cos/sin once per token (and range of pairs). */
static posenc_status posenc_i_rope_run(const posenc_i_backend *be, const posenc_rope *rope,
                                       const posenc_rope_cache_view *cache, const posenc_rope_positions *pos,
                                       const posenc_i_rot_io *io, size_t n, const posenc_i_slot_plan *plan,
                                       posenc_rope_direction direction) {
  size_t D = rope->config.head_dim, B = pos->batch, T = pos->tokens, naxes, b, i, j;
  size_t crow_bytes = 0, row_floats = 0;
  int inverse = direction == POSENC_ROPE_INVERSE, carry = 0;
  posenc_status st;

  naxes = posenc_i_rope_naxes(rope);
  /* what one pass writes, no other pass reads or writes (a fused QKV buffer's rows may
   * interleave them) */
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      if (j != i && (!posenc_i_io_apart(&io[i].out, io[i].to_slots, &io[j].in, 0, D, B, T) ||
                     (j > i && !posenc_i_io_apart(&io[i].out, io[i].to_slots, &io[j].out, io[j].to_slots, D, B, T))))
        return POSENC_ERR_ALIAS;
  if (pos->ids) { /* ids are read again while the outputs are written: a write there would change them */
    size_t nid = naxes * B * T;
    if (nid > (size_t)PTRDIFF_MAX / sizeof *pos->ids) return POSENC_ERR_OVERFLOW;
    for (i = 0; i < n; i++)
      if (posenc_i_ranges_meet((const unsigned char *)pos->ids, nid * sizeof *pos->ids, io[i].out.data, io[i].out.span))
        return POSENC_ERR_ALIAS;
  }
  for (i = 0; i < n; i++) { /* the structs and the norms' weights are read again while rotating */
    const posenc_i_tview *o = &io[i].out;
    for (j = 0; j < n; j++)
      if (io[j].normed && posenc_i_ranges_meet((const unsigned char *)io[j].norm.weight, D * sizeof(float), o->data, o->span))
        return POSENC_ERR_ALIAS;
    if (posenc_i_ranges_meet((const unsigned char *)rope, posenc_i_rope_need(rope->pairs), o->data, o->span) ||
        posenc_i_ranges_meet((const unsigned char *)pos, sizeof *pos, o->data, o->span) ||
        (cache && posenc_i_ranges_meet((const unsigned char *)cache, sizeof *cache, o->data, o->span)))
      return POSENC_ERR_ALIAS;
  }
  if (cache) {
    size_t cbytes, cstride;
    if (!cache->data) return POSENC_ERR_NULL;
    st = posenc_i_rope_check_spec(rope, &cache->spec, cache->n_rows, &cbytes, &cstride);
    if (st != POSENC_OK) return st;
    crow_bytes = cstride * posenc_dtype_size(cache->spec.dtype);
    for (i = 0; i < n; i++)
      if (posenc_i_ranges_meet((const unsigned char *)cache->data, cbytes, io[i].out.data, io[i].out.span))
        return POSENC_ERR_ALIAS;
  }
  { /* positions: in the cache, or within reach of the exact reduction */
    double max_abs = 0.0;
    if (pos->ids) {
      size_t nid = naxes * B * T;
      for (i = 0; i < nid; i++) {
        int32_t p = pos->ids[i];
        double a = p < 0 ? -(double)p : (double)p;
        if (cache && (p < 0 || (size_t)p >= cache->n_rows)) return POSENC_ERR_POSITION;
        if (a > max_abs) max_abs = a;
      }
    } else {
      if ((st = posenc_i_max_abs_position(pos->start, NULL, T, &max_abs)) != POSENC_OK) return st;
      if (cache && (pos->start < 0 || (size_t)pos->start + (T - 1) >= cache->n_rows)) return POSENC_ERR_POSITION;
    }
    if (!cache && (st = posenc_i_rope_check_reach(rope, max_abs)) != POSENC_OK) return st;
  }

  if (!cache) { /* a token's rows on the fly; whether a block holds fewer than half an anchor's */
    row_floats = posenc_i_rope_row_axes(rope, pos) * 2 * rope->pairs;
    carry = T > POSENC_I_ROPE_BLOCK / row_floats && POSENC_I_ROPE_BLOCK / row_floats < POSENC_ANCHOR / 2 &&
            row_floats <= POSENC_I_ROPE_BLOCK && POSENC_I_CARRY_CHUNKS > 0 && !pos->ids && !rope->config.hf_compat;
    for (i = 0; i < n; i++) carry = carry && !io[i].normed && !io[i].stream;
  }
  if (cache)
    for (b = 0; b < B; b++)
      posenc_i_rope_tokens(be, rope, cache, crow_bytes, pos, io, n, plan, inverse, b, 0, T, NULL);
  else if (carry && posenc_i_rope_fusable(rope, io, n))
    posenc_i_rope_fly_fused(be, rope, pos, io, n, inverse);
  else if (carry)
    posenc_i_rope_fly_carry(be, rope, pos, io, n, plan, inverse);
  else if (T == 1 || T <= POSENC_I_ROPE_BLOCK_TINY / row_floats || row_floats > POSENC_I_ROPE_BLOCK)
    posenc_i_rope_fly_tiny(be, rope, pos, io, n, plan, inverse); /* a batch row's rows, or a range's */
  else if (T <= POSENC_I_ROPE_BLOCK_SMALL / row_floats)
    posenc_i_rope_fly_small(be, rope, pos, io, n, plan, inverse);
  else
    posenc_i_rope_fly(be, rope, pos, io, n, plan, inverse);
  for (i = 0; i < n; i++)
    if (io[i].stream) { be->fence(); break; }
  return POSENC_OK;
}

/* The checks every rotation makes first: rope, positions, direction. */
static posenc_status posenc_i_rope_check_call(const posenc_rope *rope, const posenc_rope_positions *pos,
                                              posenc_rope_direction direction) {
  if (!rope || !pos) return POSENC_ERR_NULL;
  if ((unsigned)direction > POSENC_ROPE_INVERSE) return POSENC_ERR_PARAM;
  if (!posenc_i_rope_valid(rope)) return POSENC_ERR_DIM;
  if (pos->batch == 0 || pos->tokens == 0) return POSENC_ERR_SIZE;
  if (pos->batch > SIZE_MAX / 3 / pos->tokens) return POSENC_ERR_OVERFLOW;
  return POSENC_OK;
}

/* Q (and K) from ins[i] into outs[i], which may be ins[i] itself, normalised by norms[i] first
 * (norms NULL: none). */
static posenc_status posenc_i_rope_inout(const posenc_i_backend *be, const posenc_rope *rope,
                                         const posenc_rope_cache_view *cache, const posenc_rope_positions *pos,
                                         const posenc_rope_tensor *const ins[2], const posenc_rope_tensor *const outs[2],
                                         const posenc_rope_norm *const norms[2], size_t n,
                                         posenc_rope_direction direction) {
  posenc_i_rot_io io[2];
  posenc_status st;
  size_t i;
  if (!ins[0]) return POSENC_ERR_NULL;
  if ((st = posenc_i_rope_check_call(rope, pos, direction)) != POSENC_OK) return st;
  for (i = 0; i < n; i++) {
    if ((st = posenc_i_rope_check_io(ins[i], outs[i], rope->config.head_dim, pos->batch, pos->tokens, &io[i])) !=
        POSENC_OK)
      return st;
    if (norms && (st = posenc_i_rope_check_norm(norms[i], &io[i])) != POSENC_OK) return st;
    io[i].stream = !io[i].in_place && posenc_i_rope_streams(rope, &io[i], pos->batch, pos->tokens);
  }
  posenc_i_rope_plan_prefetch(io, n, rope->config.head_dim, pos->batch, pos->tokens);
  return posenc_i_rope_run(be, rope, cache, pos, io, n, NULL, direction);
}

static posenc_status posenc_i_rope_apply(const posenc_i_backend *be, const posenc_rope *rope,
                                         const posenc_rope_cache_view *cache, const posenc_rope_positions *pos,
                                         const posenc_rope_tensor *q, const posenc_rope_tensor *k,
                                         posenc_rope_direction direction) {
  const posenc_rope_tensor *const t[2] = {q, k};
  return posenc_i_rope_inout(be, rope, cache, pos, t, t, NULL, k ? 2 : 1, direction);
}

POSENC_API posenc_status posenc_rope_apply(const posenc_rope *rope, const posenc_rope_cache_view *cache,
                                           const posenc_rope_positions *positions,
                                           const posenc_rope_tensor *q, const posenc_rope_tensor *k,
                                           posenc_rope_direction direction) {
  return posenc_i_rope_apply(posenc_i_select(), rope, cache, positions, q, k, direction);
}

POSENC_API posenc_status posenc_rope_apply_out(const posenc_rope *rope, const posenc_rope_cache_view *cache,
                                               const posenc_rope_positions *positions,
                                               const posenc_rope_tensor *q_in, const posenc_rope_tensor *q_out,
                                               const posenc_rope_tensor *k_in, const posenc_rope_tensor *k_out,
                                               posenc_rope_direction direction) {
  const posenc_rope_tensor *const ins[2] = {q_in, k_in}, *const outs[2] = {q_out, k_out};
  if (!q_out || !k_in != !k_out) return POSENC_ERR_NULL;
  return posenc_i_rope_inout(posenc_i_select(), rope, cache, positions, ins, outs, NULL, k_in ? 2 : 1, direction);
}

POSENC_API posenc_status posenc_rope_apply_norm(const posenc_rope *rope, const posenc_rope_cache_view *cache,
                                                const posenc_rope_positions *positions,
                                                const posenc_rope_tensor *q_in, const posenc_rope_tensor *q_out,
                                                const posenc_rope_norm *q_norm,
                                                const posenc_rope_tensor *k_in, const posenc_rope_tensor *k_out,
                                                const posenc_rope_norm *k_norm) {
  const posenc_rope_tensor *const ins[2] = {q_in, k_in}, *const outs[2] = {q_out, k_out};
  const posenc_rope_norm *const norms[2] = {q_norm, k_norm};
  if (!q_out || !k_in != !k_out || (k_norm && !k_in)) return POSENC_ERR_NULL;
  return posenc_i_rope_inout(posenc_i_select(), rope, cache, positions, ins, outs, norms, k_in ? 2 : 1,
                             POSENC_ROPE_FORWARD);
}

/* A KV cache array as the output view of a pass over `in` (heads and dtype checked by the caller):
 * its span, with the plan's strides. */
POSENC_I_NOINLINE posenc_status posenc_i_kv_array(const posenc_kv_cache *kv, void *data,
                                                  const posenc_i_slot_plan *plan, size_t D, posenc_i_tview *out) {
  size_t nb[3], st[3], ext, nblocks = kv->block_size ? kv->n_slots / kv->block_size : 1;
  posenc_status s;
  out->data = (unsigned char *)data;
  out->dtype = kv->dtype;
  out->es = posenc_dtype_size(kv->dtype);
  out->heads = kv->heads;
  out->hs = kv->head_stride ? kv->head_stride : D;
  out->bs = out->ts = 0;
  nb[0] = kv->heads; nb[1] = kv->block_size ? kv->block_size : kv->n_slots; nb[2] = nblocks;
  st[0] = out->hs; st[1] = plan->slot_stride; st[2] = plan->block_stride;
  if ((s = posenc_i_strided_extent(D, nb, st, 3, &ext)) != POSENC_OK) return s == POSENC_ERR_ALIAS ? POSENC_ERR_STRIDE : s;
  return posenc_i_bytes(ext, out->es, &out->span);
}

/* Rotate-and-store (posenc_rope_store_kv), Q and K normalised by q_norm and k_norm (each may be NULL). */
static posenc_status posenc_i_store_kv(const posenc_rope *rope, const posenc_rope_cache_view *cache,
                                       const posenc_rope_positions *positions, const posenc_rope_tensor *q,
                                       const posenc_rope_norm *q_norm, const posenc_rope_tensor *k,
                                       const posenc_rope_norm *k_norm, const posenc_rope_tensor *v,
                                       const posenc_kv_cache *kv, const int64_t *slots) {
  posenc_i_rot_io io[3];
  posenc_i_slot_plan plan;
  size_t n = 0, D, B, T, i, hs;
  posenc_status st;
  if (!kv || !k) return POSENC_ERR_NULL;
  if (!kv->k || !v != !kv->v) return POSENC_ERR_NULL;
  if ((st = posenc_i_rope_check_call(rope, positions, POSENC_ROPE_FORWARD)) != POSENC_OK) return st;
  D = rope->config.head_dim; B = positions->batch; T = positions->tokens;
  if (posenc_dtype_size(kv->dtype) == 0) return POSENC_ERR_DTYPE;
  if (kv->n_slots == 0 || kv->heads == 0 || (kv->block_size && kv->n_slots % kv->block_size != 0)) return POSENC_ERR_SIZE;
  if (!slots && (B > 1 || rope->config.mrope != POSENC_ROPE_MROPE_NONE)) return POSENC_ERR_PARAM;
  hs = kv->head_stride ? kv->head_stride : D;
  plan.slots = slots;
  plan.block_size = kv->block_size;
  if (kv->slot_stride) plan.slot_stride = kv->slot_stride;
  else if (kv->heads > SIZE_MAX / hs) return POSENC_ERR_OVERFLOW;
  else plan.slot_stride = kv->heads * hs;
  if (kv->block_stride || !kv->block_size) {
    plan.block_stride = kv->block_stride;
  } else { /* a block's extent: dense for [slot][head][dim] and [head][slot][dim] blocks alike */
    size_t nb[2], sb[2];
    nb[0] = kv->heads; nb[1] = kv->block_size; sb[0] = hs; sb[1] = plan.slot_stride;
    if ((st = posenc_i_strided_extent(D, nb, sb, 2, &plan.block_stride)) != POSENC_OK)
      return st == POSENC_ERR_ALIAS ? POSENC_ERR_STRIDE : st;
  }
  if (q) {
    if ((st = posenc_i_rope_check_io(q, q, D, B, T, &io[n])) != POSENC_OK) return st;
    if ((st = posenc_i_rope_check_norm(q_norm, &io[n])) != POSENC_OK) return st;
    n++;
  } else if (q_norm) {
    return POSENC_ERR_NULL;
  }
  for (i = 0; i < 2; i++) { /* K rotated into kv->k, V copied into kv->v */
    const posenc_rope_tensor *in = i ? v : k;
    if (!in) continue;
    if ((st = posenc_i_rope_check_tensor(in, D, B, T, &io[n].in)) != POSENC_OK) return st;
    if (io[n].in.heads != kv->heads) return POSENC_ERR_SIZE;
    if ((st = posenc_i_kv_array(kv, i ? kv->v : kv->k, &plan, D, &io[n].out)) != POSENC_OK) return st;
    io[n].in_place = 0;
    io[n].rotate = !i;
    io[n].to_slots = 1;
    io[n].normed = 0;
    io[n].stream = !i && posenc_i_rope_streams(rope, &io[n], B, T); /* V's copy stores plainly */
    io[n].prefetch = 0;
    if (!i && (st = posenc_i_rope_check_norm(k_norm, &io[n])) != POSENC_OK) return st;
    n++;
  }
  { /* the slots (or the positions standing for them) name slots of the arrays; the arrays lie
       apart from their inputs and from the slots, which are read while the arrays are written */
    size_t nt = B * T;
    for (i = 0; i < nt; i++) {
      int64_t sl = slots ? slots[i] : (int64_t)posenc_i_rope_position(positions, 0, 0, i);
      if ((!slots && sl < 0) || (sl >= 0 && (uint64_t)sl >= (uint64_t)kv->n_slots)) return POSENC_ERR_POSITION;
    }
    for (i = 0; i < n; i++) /* every output, Q's too: a slot rewritten by Q's rotation was checked before */
      if ((io[i].to_slots && posenc_i_ranges_meet(io[i].in.data, io[i].in.span, io[i].out.data, io[i].out.span)) ||
          (slots && posenc_i_ranges_meet((const unsigned char *)slots, nt * sizeof *slots, io[i].out.data,
                                         io[i].out.span)))
        return POSENC_ERR_ALIAS;
  }
  posenc_i_rope_plan_prefetch(io, n, D, B, T);
  return posenc_i_rope_run(posenc_i_select(), rope, cache, positions, io, n, &plan, POSENC_ROPE_FORWARD);
}

POSENC_API posenc_status posenc_rope_store_kv(const posenc_rope *rope, const posenc_rope_cache_view *cache,
                                              const posenc_rope_positions *positions, const posenc_rope_tensor *q,
                                              const posenc_rope_tensor *k, const posenc_rope_tensor *v,
                                              const posenc_kv_cache *kv, const int64_t *slots) {
  return posenc_i_store_kv(rope, cache, positions, q, NULL, k, NULL, v, kv, slots);
}

POSENC_API posenc_status posenc_rope_store_kv_norm(const posenc_rope *rope, const posenc_rope_cache_view *cache,
                                                   const posenc_rope_positions *positions,
                                                   const posenc_rope_tensor *q, const posenc_rope_norm *q_norm,
                                                   const posenc_rope_tensor *k, const posenc_rope_norm *k_norm,
                                                   const posenc_rope_tensor *v, const posenc_kv_cache *kv,
                                                   const int64_t *slots) {
  return posenc_i_store_kv(rope, cache, positions, q, q_norm, k, k_norm, v, kv, slots);
}


/* ---- masked add: dropout hash (documented in the API comment) ------------------------------ */
/* key(b, t) = high 32 bits of mix64(mix64(mix64(seed) ^ b) ^ t) */
static uint64_t posenc_i_drop_key_b(uint64_t seed, size_t b) { return posenc_i_mix64(posenc_i_mix64(seed) ^ (uint64_t)b); }
static uint32_t posenc_i_drop_key(uint64_t key_b, size_t t) { return (uint32_t)(posenc_i_mix64(key_b ^ (uint64_t)t) >> 32); }

/* fl32(sqrt(n)), correctly rounded, without libm: the f32 neighbours of the double root are
 * checked against the exact midpoints (their squares are exact in double for n < 2^48). */
static float posenc_i_sqrt_f32(size_t n) {
  double d = (double)n, s = posenc_i_sqrt(d);
  float c;
  int i;
  if (n == 0) return 0.0f;
  c = (float)s;
  for (i = 0; i < 4; i++) {
    float lo = posenc_i_bitsf(posenc_i_fbits(c) - 1u), hi = posenc_i_bitsf(posenc_i_fbits(c) + 1u);
    double mlo = 0.5 * ((double)c + (double)lo), mhi = 0.5 * ((double)c + (double)hi);
    if (mlo * mlo > d || (mlo * mlo == d && (posenc_i_fbits(c) & 1u))) c = lo;
    else if (mhi * mhi < d || (mhi * mhi == d && (posenc_i_fbits(c) & 1u))) c = hi;
    else break;
  }
  return c;
}

POSENC_API posenc_embed_config posenc_embed_default(size_t dim) {
  posenc_embed_config r;
  memset(&r, 0, sizeof r);
  r.dim = dim;
  r.scale = posenc_i_sqrt_f32(dim);
  r.table.data = NULL; r.table.dtype = POSENC_DTYPE_F32; r.table.n_rows = 0; r.table.dim = dim; r.table.row_stride = 0;
  r.sinusoidal = posenc_sinusoidal_default(dim);
  r.oob = POSENC_OOB_ERROR;
  r.dropout_p = 0.0;
  r.dropout_seed = 0;
  return r;
}

/* ---- positions ------------------------------------------------------------------------------ */
/* Token (b, t) of a row walked in order t = 0, 1, ...; *count: real tokens before t. Returns 1
 * for a padding token, else 0 and *pos (64-bit: the caller checks the range). */
static int posenc_i_embed_pos(const posenc_embed_tokens *tk, size_t b, size_t t, int64_t *count, int64_t *pos) {
  size_t i = b * tk->tokens + t;
  int pad = (tk->token_ids && tk->token_ids[i] == tk->padding_id) || (tk->mask && tk->mask[i] == 0);
  if (pad) return 1;
  switch (tk->mode) {
    case POSENC_POS_RANGE: *pos = (int64_t)tk->start + (int64_t)t; break;
    case POSENC_POS_IDS: *pos = tk->positions[i]; break;
    case POSENC_POS_FAIRSEQ: *pos = (int64_t)tk->padding_id + 1 + *count; break;
    default: *pos = (int64_t)tk->start + *count; break; /* CUMSUM */
  }
  ++*count;
  return 0;
}

static posenc_status posenc_i_check_tokens(const posenc_embed_tokens *tk) {
  if (!tk) return POSENC_ERR_NULL;
  if ((unsigned)tk->mode > POSENC_POS_CUMSUM) return POSENC_ERR_PARAM;
  if (tk->mode == POSENC_POS_IDS && !tk->positions) return POSENC_ERR_NULL;
  if (tk->batch == 0 || tk->tokens == 0) return POSENC_ERR_SIZE;
  if (tk->batch > SIZE_MAX / tk->tokens) return POSENC_ERR_OVERFLOW;
  if (tk->mode == POSENC_POS_FAIRSEQ && tk->padding_id < 0) return POSENC_ERR_PADDING;
  return POSENC_OK;
}

/* 1 if bytes [lo, hi) meet what is read while outputs are written: the token arrays (positions,
 * ids, mask), the tokens struct and the config (a write there would change them after they were
 * checked). */
static int posenc_i_tokens_meet(const posenc_embed_config *c, const posenc_embed_tokens *tk, const void *o,
                                size_t bytes) {
  size_t n = tk->batch * tk->tokens, n4 = n <= SIZE_MAX / 4 ? n * 4 : SIZE_MAX - 3; /* n: checked */
  const unsigned char *out = (const unsigned char *)o;
  return posenc_i_ranges_meet(out, bytes, (const unsigned char *)tk, sizeof *tk) ||
         (c && posenc_i_ranges_meet(out, bytes, (const unsigned char *)c, sizeof *c)) ||
         (tk->mode == POSENC_POS_IDS && posenc_i_ranges_meet(out, bytes, (const unsigned char *)tk->positions, n4)) ||
         (tk->token_ids && posenc_i_ranges_meet(out, bytes, (const unsigned char *)tk->token_ids, n4)) ||
         (tk->mask && posenc_i_ranges_meet(out, bytes, tk->mask, n));
}

POSENC_API posenc_status posenc_embed_positions(const posenc_embed_tokens *tokens, int32_t *out) {
  size_t b, t;
  posenc_status st = posenc_i_check_tokens(tokens);
  if (st != POSENC_OK) return st;
  if (!out) return POSENC_ERR_NULL;
  if (tokens->batch * tokens->tokens > (size_t)PTRDIFF_MAX / sizeof *out) return POSENC_ERR_OVERFLOW;
  if (posenc_i_tokens_meet(NULL, tokens, out, tokens->batch * tokens->tokens * sizeof *out))
    return POSENC_ERR_ALIAS;
  for (b = 0; b < tokens->batch; b++) { /* validate everything first */
    int64_t count = 0, pos = 0;
    for (t = 0; t < tokens->tokens; t++)
      if (!posenc_i_embed_pos(tokens, b, t, &count, &pos) && (pos < 0 || pos > INT32_MAX)) return POSENC_ERR_POSITION;
  }
  for (b = 0; b < tokens->batch; b++) {
    int64_t count = 0, pos = 0;
    for (t = 0; t < tokens->tokens; t++)
      out[b * tokens->tokens + t] = posenc_i_embed_pos(tokens, b, t, &count, &pos) ? -1 : (int32_t)pos;
  }
  return POSENC_OK;
}

/* ---- masked add: validation ------------------------------------------------------------------ */
typedef struct posenc_i_tens {
  unsigned char *data;
  posenc_dtype dtype;
  size_t es, bs, ts;           /* element size; strides in elements */
  size_t span;                 /* bytes from data to one past the last element */
} posenc_i_tens;

typedef struct posenc_i_embed_plan {
  const posenc_i_backend *be;
  size_t B, T, D;
  float scale, keep_scale;
  uint32_t threshold;
  int dropout;
  uint64_t seed;
  /* table source */
  const unsigned char *P;
  posenc_dtype pdt;
  size_t pes, pstride, n_rows, pbytes;
  int table;                   /* 1: config.table.data given */
  int sinus;                   /* 1: sinusoidal rows needed (source or OOB fallback) */
  posenc_sinusoidal_params sp; /* dense, validated */
  posenc_i_table_plan splan;
  posenc_i_dd u_first;
  posenc_i_tens x, y;
} posenc_i_embed_plan;

/* Strides, span and overflow of a [B][T][D] tensor. */
static posenc_status posenc_i_tens_check(const posenc_embed_tensor *v, size_t B, size_t T, size_t D, posenc_i_tens *o) {
  size_t last;
  posenc_status st;
  o->data = (unsigned char *)v->data;
  o->dtype = v->dtype;
  o->es = posenc_dtype_size(v->dtype);
  if (o->es == 0) return POSENC_ERR_DTYPE;
  o->ts = v->token_stride ? v->token_stride : D;
  if (o->ts < D) return POSENC_ERR_STRIDE;
  if ((st = posenc_i_extent(T, D, o->ts, &last)) != POSENC_OK) return st;
  if (v->batch_stride) {
    o->bs = v->batch_stride;
  } else {
    if (T > SIZE_MAX / o->ts) return POSENC_ERR_OVERFLOW;
    o->bs = T * o->ts;
  }
  if (o->bs < D) return POSENC_ERR_STRIDE;
  if ((st = posenc_i_extent(B, last, o->bs, &last)) != POSENC_OK) return st;
  if ((st = posenc_i_bytes(last, o->es, &o->span)) != POSENC_OK) return st;
  if (o->ts > (size_t)PTRDIFF_MAX / o->es || o->bs > (size_t)PTRDIFF_MAX / o->es) return POSENC_ERR_OVERFLOW;
  if ((size_t)(uintptr_t)o->data > SIZE_MAX - o->span) return POSENC_ERR_OVERFLOW;
  return POSENC_OK;
}

/* Rows of a written tensor must not overlap each other (posenc_i_strided_extent; its extent
 * was checked by posenc_i_tens_check, so only ERR_ALIAS can come back). */
static int posenc_i_tens_self_overlap(const posenc_i_tens *o, size_t B, size_t T, size_t D) {
  size_t n[2], st[2], ext;
  n[0] = T; n[1] = B; st[0] = o->ts; st[1] = o->bs;
  return posenc_i_strided_extent(D, n, st, 2, &ext) != POSENC_OK;
}

/* In place (same data, dtype and strides) or apart; anything else overlapping is ERR_ALIAS. */
static int posenc_i_tens_alias(const posenc_i_tens *a, const posenc_i_tens *b) {
  if (a->data == b->data && a->dtype == b->dtype && a->ts == b->ts && a->bs == b->bs) return 0;
  return posenc_i_ranges_meet(a->data, a->span, b->data, b->span);
}

/* Everything but the tensors and positions: config, table, sinusoidal source. */
static posenc_status posenc_i_embed_setup(const posenc_embed_config *c, const posenc_embed_tokens *tk,
                                          posenc_i_embed_plan *pl) {
  posenc_status st;
  if (!c) return POSENC_ERR_NULL;
  st = posenc_i_check_tokens(tk);
  if (st != POSENC_OK) return st;
  memset(pl, 0, sizeof *pl);
  pl->B = tk->batch; pl->T = tk->tokens; pl->D = c->dim;
  if (c->dim == 0) return POSENC_ERR_SIZE;
  if ((unsigned)c->oob > POSENC_OOB_SINUSOIDAL) return POSENC_ERR_PARAM;
  if (!(c->dropout_p >= 0.0 && c->dropout_p < 1.0)) return POSENC_ERR_PARAM; /* also NaN */
  if (!(c->scale - c->scale == 0.0f)) return POSENC_ERR_PARAM;                /* Inf, NaN */
  pl->scale = c->scale;
  pl->dropout = c->dropout_p > 0.0;
  pl->seed = c->dropout_seed;
  if (pl->dropout) {
    /* threshold = floor(p * 2^32 + 1/2), at most 2^32 - 1; p * 2^33 is exact in double */
    uint64_t u = (uint64_t)(c->dropout_p * 8589934592.0);
    u = (u + 1) >> 1;
    pl->threshold = u > 0xffffffffull ? 0xffffffffu : (uint32_t)u;
    pl->keep_scale = (float)(1.0 / (1.0 - c->dropout_p));
  } else {
    pl->keep_scale = 1.0f;
  }
  pl->table = c->table.data != NULL;
  if (pl->table) {
    pl->P = (const unsigned char *)c->table.data;
    if (c->table.dim != c->dim) return POSENC_ERR_DIM;
    pl->pdt = c->table.dtype;
    pl->pes = posenc_dtype_size(c->table.dtype);
    if (pl->pes == 0) return POSENC_ERR_DTYPE;
    if (c->table.n_rows == 0) return POSENC_ERR_SIZE;
    pl->n_rows = c->table.n_rows;
    pl->pstride = c->table.row_stride ? c->table.row_stride : c->dim;
    if (pl->pstride < c->dim) return POSENC_ERR_STRIDE;
    if ((st = posenc_i_rows_span(pl->n_rows, c->dim, pl->pstride, pl->pes, &pl->pbytes)) != POSENC_OK) return st;
    if (tk->mode == POSENC_POS_FAIRSEQ && (size_t)tk->padding_id >= pl->n_rows) return POSENC_ERR_PADDING;
  }
  pl->sinus = !pl->table || c->oob == POSENC_OOB_SINUSOIDAL;
  if (pl->sinus) {
    size_t bytes;
    pl->sp = c->sinusoidal;
    pl->sp.row_stride = 0; /* rows are generated dense, a block at a time */
    if (pl->sp.dim != c->dim) return POSENC_ERR_DIM;
    st = posenc_i_check_sinusoidal(&pl->sp, 1, &bytes, &pl->splan);
    if (st != POSENC_OK) return st;
  }
  return POSENC_OK;
}

/* The positions, one pass over every token: called once the tensors are checked, so that the
 * pass is never longer than the tensors it is for (a batch*tokens past any buffer is refused). */
static posenc_status posenc_i_embed_scan(const posenc_embed_config *c, const posenc_embed_tokens *tk,
                                         posenc_i_embed_plan *pl) {
  size_t b, t;
  double max_abs = 0.0;
  posenc_status st;
  for (b = 0; b < tk->batch; b++) {
    int64_t count = 0, pos = 0;
    for (t = 0; t < tk->tokens; t++) {
      if (posenc_i_embed_pos(tk, b, t, &count, &pos)) continue;
      if (pos < 0 || pos > INT32_MAX) return POSENC_ERR_POSITION;
      if (pl->table && (size_t)pos >= pl->n_rows && c->oob == POSENC_OOB_ERROR) return POSENC_ERR_POSITION;
      if ((!pl->table || (size_t)pos >= pl->n_rows) && (double)pos > max_abs) max_abs = (double)pos;
    }
  }
  if (pl->sinus) {
    st = posenc_i_sinusoidal_freqs(&pl->sp, pl->splan.nfreq, max_abs, &pl->u_first, &pl->splan.omega1);
    if (st != POSENC_OK) return st;
  }
  pl->be = posenc_i_select();
  return POSENC_OK;
}

/* ---- masked add: the drivers ------------------------------------------------------------------ */
#define POSENC_I_ADD_ROWS 64   /* rows per kernel call (their dropout keys live on the stack) */

/* The fields of a plan's add job that do not depend on the rows. */
static void posenc_i_add_job_base(const posenc_i_embed_plan *pl, posenc_i_add_job *job, int stream) {
  memset(job, 0, sizeof *job);
  job->x_stride = (ptrdiff_t)(pl->x.ts * pl->x.es); job->x_dtype = pl->x.dtype;
  job->y_stride = (ptrdiff_t)(pl->y.ts * pl->y.es); job->y_dtype = pl->y.dtype;
  job->scale = pl->scale; job->keep_scale = pl->keep_scale; job->threshold = pl->threshold;
  job->stream = stream;
}

/* The forward kernel over rows [0, n) of a run: x, y at their row 0, P rows from p (stride in
 * bytes), columns col0 .. col0+ncols-1 of the tensors (pointers already at col0). Out of line:
 * its keys are 256 bytes of stack that posenc_i_add_sinus's frame need not hold. */
POSENC_I_NOINLINE void posenc_i_add_call(const posenc_i_embed_plan *pl, int backward, size_t b, size_t t0, size_t n,
                                         const unsigned char *x, unsigned char *y, const unsigned char *p,
                                         ptrdiff_t p_stride, posenc_dtype pdt, float *gt, ptrdiff_t gt_stride,
                                         size_t col0, size_t ncols, int stream) {
  uint32_t keys[POSENC_I_ADD_ROWS];
  uint64_t kb = pl->dropout ? posenc_i_drop_key_b(pl->seed, b) : 0;
  size_t r0 = 0, r;
  void (*fn)(const posenc_i_add_job *) = backward ? pl->be->add_bwd : pl->be->add_fwd;
  posenc_i_add_job job;
  posenc_i_add_job_base(pl, &job, stream);
  job.p_stride = p_stride; job.p_dtype = pdt; job.gt_stride = gt_stride;
  job.n = ncols; job.col0 = col0;
  while (r0 < n) {
    size_t m = n - r0 < POSENC_I_ADD_ROWS ? n - r0 : POSENC_I_ADD_ROWS;
    if (pl->dropout) for (r = 0; r < m; r++) keys[r] = posenc_i_drop_key(kb, t0 + r0 + r);
    job.x = x + (ptrdiff_t)r0 * job.x_stride;
    job.p = p ? p + (ptrdiff_t)r0 * p_stride : NULL;
    job.y = y ? y + (ptrdiff_t)r0 * job.y_stride : NULL;
    job.gt = gt ? gt + (ptrdiff_t)r0 * gt_stride : NULL;
    job.nrows = m;
    job.keys = pl->dropout ? keys : NULL;
    fn(&job);
    r0 += m;
  }
}

/* Forward rows t0 .. t0+n-1 of batch b whose source is the sinusoidal rows pos0, pos0+1, ... (a
 * run) or the one row pos0 (n == 1): exactly as posenc_sinusoidal_table computes them (same
 * parts, same jobs), added where they are made (the add_sinus kernel), one anchor block of rows
 * and one chunk of frequencies a call. */
POSENC_I_NOINLINE void posenc_i_add_sinus(const posenc_i_embed_plan *pl, size_t b, size_t t0, size_t n, int32_t pos0,
                                          int stream) {
  const size_t D = pl->D, nfreq = pl->splan.nfreq;
  const int inter = pl->sp.layout == POSENC_LAYOUT_INTERLEAVED;
  const uint64_t kb = pl->dropout ? posenc_i_drop_key_b(pl->seed, b) : 0;
  double u[POSENC_UPARTS * POSENC_CHUNK];
  uint32_t keys[POSENC_ANCHOR];
  static const float zero = 0.0f;
  posenc_i_job job;
  posenc_i_add_job add;
  size_t r0 = 0;
  const unsigned char *xb = pl->x.data + b * pl->x.bs * pl->x.es;
  unsigned char *yb = pl->y.data + b * pl->y.bs * pl->y.es;
  memset(&job, 0, sizeof job);
  job.dtype = pl->sp.dtype;
  job.mode = inter ? POSENC_I_PAIRS : POSENC_I_PLANAR;
  job.cos_col = nfreq;
  job.u = u;
  posenc_i_add_job_base(pl, &add, stream);
  add.keys = pl->dropout ? keys : NULL;
  while (r0 < n) {
    const int32_t p0 = (int32_t)((int64_t)pos0 + (int64_t)r0);
    size_t rows = POSENC_ANCHOR - (size_t)((uint32_t)p0 & (POSENC_ANCHOR - 1)), f0, r; /* to the next anchor */
    posenc_i_dd u_run = pl->u_first;
    const unsigned char *xr = xb + (t0 + r0) * (size_t)add.x_stride;
    unsigned char *yr = yb + (t0 + r0) * (size_t)add.y_stride;
    if (rows > n - r0) rows = n - r0;
    if (pl->dropout) for (r = 0; r < rows; r++) keys[r] = posenc_i_drop_key(kb, t0 + r0 + r);
    job.start = p0; job.nrows = rows; add.nrows = rows;
    for (f0 = 0; f0 < nfreq; f0 += POSENC_CHUNK) {
      const size_t nf = nfreq - f0 < POSENC_CHUNK ? nfreq - f0 : POSENC_CHUNK;
      const size_t col0 = inter ? 2 * f0 : f0;
      posenc_i_fill_parts(u, nf, &u_run, pl->splan.omega1);
      job.nfreq = (unsigned)nf;
      job.pair_cols = inter ? (unsigned)(D - col0 < 2 * nf ? D - col0 : 2 * nf) : 0;
      add.x = xr + col0 * pl->x.es; add.y = yr + col0 * pl->y.es;
      add.col0 = col0; add.n = inter ? job.pair_cols : nf;
      pl->be->add_sinus(&job, &add);
    }
    if (!inter && (D & 1)) /* the zero column */
      posenc_i_add_call(pl, 0, b, t0 + r0, rows, xr + (D - 1) * pl->x.es, yr + (D - 1) * pl->y.es,
                        (const unsigned char *)&zero, 0, POSENC_DTYPE_F32, NULL, 0, D - 1, 1, stream);
    r0 += rows;
  }
}

/* Source of a real token's P row: 0 table row *row, 1 sinusoidal position *row. */
static int posenc_i_embed_src(const posenc_i_embed_plan *pl, const posenc_embed_config *c, int64_t pos, int64_t *row) {
  if (!pl->table) { *row = pos; return 1; }
  if ((size_t)pos < pl->n_rows) { *row = pos; return 0; }
  if (c->oob == POSENC_OOB_CLAMP) { *row = (int64_t)pl->n_rows - 1; return 0; }
  *row = pos; return 1;
}

/* Walks batch row b in runs: consecutive real tokens whose source rows are consecutive (same
 * source). Calls flush for each run; padding rows are zeroed (forward, backward grad_x). */
static void posenc_i_embed_walk(const posenc_i_embed_plan *pl, const posenc_embed_config *c,
                                const posenc_embed_tokens *tk, int backward, float *gtab, size_t gts) {
  size_t b, t;
  const size_t D = pl->D;
  /* non-temporal stores for large outputs (forward y, backward grad_x), not in place */
  const int stream = pl->y.data && pl->y.data != pl->x.data && pl->y.span >= POSENC_STREAM_MIN_BYTES;
  for (b = 0; b < pl->B; b++) {
    int64_t count = 0, pos = 0, row = 0, run_row = 0;
    size_t run_t = 0, run_n = 0;
    int run_src = 0;
    for (t = 0; t <= pl->T; t++) {
      int pad = 0, src = 0, extend;
      if (t < pl->T) {
        pad = posenc_i_embed_pos(tk, b, t, &count, &pos);
        if (!pad) src = posenc_i_embed_src(pl, c, pos, &row);
      }
      extend = t < pl->T && !pad && run_n > 0 && src == run_src && row == run_row + (int64_t)run_n &&
               run_n < ((size_t)1 << 20);
      if (!extend && run_n > 0) { /* flush */
        const unsigned char *x = pl->x.data + (b * pl->x.bs + run_t * pl->x.ts) * pl->x.es;
        unsigned char *y = pl->y.data ? pl->y.data + (b * pl->y.bs + run_t * pl->y.ts) * pl->y.es : NULL;
        if (backward) {
          float *g = gtab && run_src == 0 ? gtab + (size_t)run_row * gts : NULL;
          if (y || g) posenc_i_add_call(pl, 1, b, run_t, run_n, x, y, NULL, 0, POSENC_DTYPE_F32, g,
                                        (ptrdiff_t)gts, 0, D, stream);
        } else if (run_src == 0) {
          posenc_i_add_call(pl, 0, b, run_t, run_n, x, y, pl->P + (size_t)run_row * pl->pstride * pl->pes,
                            (ptrdiff_t)(pl->pstride * pl->pes), pl->pdt, NULL, 0, 0, D, stream);
        } else {
          posenc_i_add_sinus(pl, b, run_t, run_n, (int32_t)run_row, stream);
        }
        run_n = 0;
      }
      if (t == pl->T) break;
      if (pad) {
        if (pl->y.data) memset(pl->y.data + (b * pl->y.bs + t * pl->y.ts) * pl->y.es, 0, D * pl->y.es);
        continue;
      }
      if (run_n == 0) { run_t = t; run_row = row; run_src = src; }
      run_n++;
    }
  }
}

POSENC_API posenc_status posenc_embed_forward(const posenc_embed_config *config,
                                              const posenc_embed_tokens *tokens,
                                              const posenc_embed_tensor *x,
                                              const posenc_embed_tensor *y) {
  posenc_i_embed_plan pl;
  posenc_status st;
  if (!x || !y || !x->data || !y->data) return POSENC_ERR_NULL;
  st = posenc_i_embed_setup(config, tokens, &pl);
  if (st != POSENC_OK) return st;
  st = posenc_i_tens_check(x, pl.B, pl.T, pl.D, &pl.x);
  if (st != POSENC_OK) return st;
  st = posenc_i_tens_check(y, pl.B, pl.T, pl.D, &pl.y);
  if (st != POSENC_OK) return st;
  if (posenc_i_tens_self_overlap(&pl.y, pl.B, pl.T, pl.D) || posenc_i_tens_alias(&pl.x, &pl.y) ||
      posenc_i_tokens_meet(config, tokens, pl.y.data, pl.y.span))
    return POSENC_ERR_ALIAS;
  if (pl.table && posenc_i_ranges_meet(pl.P, pl.pbytes, pl.y.data, pl.y.span)) return POSENC_ERR_ALIAS;
  st = posenc_i_embed_scan(config, tokens, &pl);
  if (st != POSENC_OK) return st;
  posenc_i_embed_walk(&pl, config, tokens, 0, NULL, 0);
  return POSENC_OK;
}

POSENC_API posenc_status posenc_embed_backward(const posenc_embed_config *config,
                                               const posenc_embed_tokens *tokens,
                                               const posenc_embed_tensor *grad_y,
                                               const posenc_embed_tensor *grad_x,
                                               float *grad_table, size_t grad_table_stride) {
  posenc_i_embed_plan pl;
  posenc_status st;
  size_t gts = 0;
  if (!grad_y || !grad_y->data) return POSENC_ERR_NULL;
  if (grad_x && !grad_x->data) return POSENC_ERR_NULL;
  st = posenc_i_embed_setup(config, tokens, &pl);
  if (st != POSENC_OK) return st;
  st = posenc_i_tens_check(grad_y, pl.B, pl.T, pl.D, &pl.x);
  if (st != POSENC_OK) return st;
  if (grad_x) {
    st = posenc_i_tens_check(grad_x, pl.B, pl.T, pl.D, &pl.y);
    if (st != POSENC_OK) return st;
    if (posenc_i_tens_self_overlap(&pl.y, pl.B, pl.T, pl.D) || posenc_i_tens_alias(&pl.x, &pl.y) ||
        posenc_i_tokens_meet(config, tokens, pl.y.data, pl.y.span))
      return POSENC_ERR_ALIAS;
  } else {
    pl.y.data = NULL; pl.y.dtype = POSENC_DTYPE_F32; pl.y.es = 4; pl.y.ts = pl.D; pl.y.bs = pl.D;
    pl.y.span = 0;
  }
  if (!pl.table) grad_table = NULL; /* the sinusoidal source has nothing to learn */
  if (grad_table) {
    const unsigned char *g = (const unsigned char *)grad_table;
    size_t gbytes;
    gts = grad_table_stride ? grad_table_stride : pl.D;
    if (gts < pl.D) return POSENC_ERR_STRIDE;
    if ((st = posenc_i_rows_span(pl.n_rows, pl.D, gts, 4, &gbytes)) != POSENC_OK) return st;
    if ((size_t)(uintptr_t)g > SIZE_MAX - gbytes) return POSENC_ERR_OVERFLOW;
    if (posenc_i_ranges_meet(g, gbytes, pl.x.data, pl.x.span) ||
        (pl.y.data && posenc_i_ranges_meet(g, gbytes, pl.y.data, pl.y.span)) ||
        posenc_i_tokens_meet(config, tokens, g, gbytes))
      return POSENC_ERR_ALIAS;
  }
  st = posenc_i_embed_scan(config, tokens, &pl);
  if (st != POSENC_OK) return st;
  posenc_i_embed_walk(&pl, config, tokens, 1, grad_table, gts);
  return POSENC_OK;
}

/* ---- learnable tables, index encodings, 2-D sin-cos: shared helpers ------------------------
 * Only IEEE basic operations in a fixed order (no libm): the same bits on every platform. */

/* An output table of n_rows x dim elements of dtype, row_stride apart (0: dim), in out_bytes:
 * NULL, SIZE, DTYPE, STRIDE, OVERFLOW, BUFFER, checked in that order. */
static posenc_status posenc_i_tb_check_out(const void *out, size_t out_bytes, size_t n_rows, size_t dim,
                                           posenc_dtype dtype, size_t row_stride, size_t *es, size_t *stride) {
  size_t need;
  if (!out) return POSENC_ERR_NULL;
  if (n_rows == 0 || dim == 0) return POSENC_ERR_SIZE;
  *es = posenc_dtype_size(dtype);
  if (*es == 0) return POSENC_ERR_DTYPE;
  *stride = row_stride ? row_stride : dim;
  if (*stride < dim) return POSENC_ERR_STRIDE;
  if (posenc_i_rows_span(n_rows, dim, *stride, *es, &need) != POSENC_OK) return POSENC_ERR_OVERFLOW;
  return posenc_i_out_room(out, out_bytes, need);
}

/* Round to odd at 24 bits (f32 precision): truncate x toward zero to an f32, and set the last
 * bit if that was inexact. Rounding the result to nearest even at <= 22 bits (f16, bf16) is the
 * correct rounding of x itself. x finite and within the f32 range. */
static float posenc_i_tb_odd32(double x) {
  float f = (float)x;
  uint32_t b;
  if ((double)f == x) return f;
  b = posenc_i_fbits(f);
  if ((x > 0.0) == ((double)f > x)) b -= 1;  /* rounded away from zero: step back toward zero */
  return posenc_i_bitsf(b | 1u);
}

/* Round to odd at 53 bits of an unevaluated sum hi + lo (|lo| <= ulp(hi)/2, hi != 0). */
static double posenc_i_tb_odd53(double hi, double lo) {
  uint64_t b;
  if (lo == 0.0) return hi;
  b = posenc_i_dbits(hi);
  if ((lo > 0.0) != (hi > 0.0)) b -= 1;       /* the exact value is nearer zero than hi */
  return posenc_i_bitsd(b | 1u);
}

/* Store a double that is already round-to-odd at >= 25 bits (or exact) to dtype, correctly
 * rounded (f32: round to nearest even of x; f16/bf16: via the round-to-odd f32). */
static void posenc_i_tb_store_odd(unsigned char *dst, posenc_dtype dtype, double x) {
  if (dtype == POSENC_DTYPE_F32) { float f = (float)x; memcpy(dst, &f, 4); return; }
  if (x != x) { posenc_i_store(dst, dtype, (float)x); return; }
  posenc_i_store(dst, dtype, posenc_i_tb_odd32(x));
}

/* ---- truncated normal ---------------------------------------------------------------------- */

/* ln(a) for a in [2^-53, 1]: the atanh series of posenc_i_dd_log's first estimate, in double
 * (a few ulp; only its determinism matters here). */
static double posenc_i_tb_log(double a) {
  int e;
  double r = posenc_i_log_series(a, &e);
  return (double)e * posenc_i_LN2.hi + ((double)e * posenc_i_LN2.lo + r);
}


/* 192-bit unsigned integers as 6 32-bit limbs, least significant first. */
static void posenc_i_tb_bn_mul(const uint32_t *a, const uint32_t *b, uint32_t *r) {
  int i, j;
  for (i = 0; i < 6; i++) r[i] = 0;
  for (i = 0; i < 6; i++) {
    uint64_t carry = 0;
    if (!a[i]) continue;
    for (j = 0; i + j < 6; j++) {
      uint64_t t = (uint64_t)a[i] * b[j] + r[i + j] + carry;
      r[i + j] = (uint32_t)t; carry = t >> 32;
    }
  }
}
static void posenc_i_tb_bn_set(uint32_t *r, uint64_t v) {
  r[0] = (uint32_t)v; r[1] = (uint32_t)(v >> 32); r[2] = r[3] = r[4] = r[5] = 0;
}
/* sign of N^2 * d - 2^e (N < 2^56, e < 190), exactly. */
static int posenc_i_tb_cmp_sq(uint64_t N, uint64_t d, int e) {
  uint32_t n[6], dd[6], n2[6], p[6];
  int i, top = -1;
  posenc_i_tb_bn_set(n, N); posenc_i_tb_bn_set(dd, d);
  posenc_i_tb_bn_mul(n, n, n2); posenc_i_tb_bn_mul(n2, dd, p);
  for (i = 191; i >= 0; i--) if ((p[i / 32] >> (i % 32)) & 1u) { top = i; break; }
  if (top != e) return top > e ? 1 : -1;
  for (i = 0; i < e; i++) if ((p[i / 32] >> (i % 32)) & 1u) return 1;
  return 0;
}

/* sqrt(1/d) correctly rounded to double, d >= 1: an estimate, then exact integer comparisons of
 * d * midpoint^2 with 1 move it to the right double. */
static double posenc_i_tb_rsqrt_int(uint64_t d) {
  double y = 1.0 / posenc_i_sqrt((double)d);
  uint64_t b = posenc_i_dbits(y);
  int k, it;
  for (it = 0; it < 8; it++) {   /* at most two steps are ever needed */
    uint64_t C = (b & 0x000fffffffffffffull) | 0x0010000000000000ull;  /* y = C * 2^-k */
    k = 1075 - (int)(b >> 52);
    if (posenc_i_tb_cmp_sq(2 * C + 1, d, 2 * (k + 1)) < 0) { b++; continue; } /* above the upper midpoint */
    if (C == 0x0010000000000000ull ? posenc_i_tb_cmp_sq(4 * C - 1, d, 2 * (k + 2)) > 0
                                   : posenc_i_tb_cmp_sq(2 * C - 1, d, 2 * (k + 1)) > 0) { b--; continue; }
    break;
  }
  return posenc_i_bitsd(b);
}

/* The i-th standard normal draw of element key e: Box-Muller on the splitmix64 stream of e,
 * x_n = mix(e + (n+1) * golden), mix = posenc_i_mix64_fin. Pair t uses u1 = (x_2t >> 11 + 1) * 2^-53 in (0, 1] and
 * u2 = (x_2t+1 >> 11) * 2^-53 in [0, 1); r = sqrt(-2 ln u1), draws 2t and 2t+1 are r*cos(2 pi u2)
 * and r*sin(2 pi u2). */
#define POSENC_I_TB_GOLDEN 0x9e3779b97f4a7c15ull
#define POSENC_I_TB_MAX_PAIRS 32

static double posenc_i_tb_trunc_normal(uint64_t e) {
  static const double quarter[POSENC_UPARTS] = {4.0, 0.0, 0.0, 0.0}; /* one turn = 4 quarter turns */
  int t;
  for (t = 0; t < POSENC_I_TB_MAX_PAIRS; t++) {
    uint64_t x1 = posenc_i_mix64_fin(e + (uint64_t)(2 * t + 1) * (uint64_t)POSENC_I_TB_GOLDEN);
    uint64_t x2 = posenc_i_mix64_fin(e + (uint64_t)(2 * t + 2) * (uint64_t)POSENC_I_TB_GOLDEN);
    double u1 = (double)((x1 >> 11) + 1) * (1.0 / 9007199254740992.0);
    double u2 = (double)(x2 >> 11) * (1.0 / 9007199254740992.0);
    double r2 = -2.0 * posenc_i_tb_log(u1), r, s, c, z;
    if (r2 == 0.0) return 0.0;                 /* u1 = 1: both draws are 0 */
    r = posenc_i_sqrt(r2);
    posenc_i_exact_sincos(u2, quarter, 1, &s, &c);
    z = r * c;
    if (z >= -2.0 && z <= 2.0) return z;
    z = r * s;
    if (z >= -2.0 && z <= 2.0) return z;
  }
  return 0.0; /* 64 rejections in a row: probability 0.0455^64 < 1e-85 */
}

POSENC_API posenc_status posenc_learned_init(uint64_t seed, double std, size_t n_rows, size_t dim,
                                             posenc_dtype dtype, size_t row_stride,
                                             void *out, size_t out_bytes) {
  size_t es, stride, p, j;
  uint64_t k0;
  posenc_status st;
  st = posenc_i_tb_check_out(out, out_bytes, n_rows, dim, dtype, row_stride, &es, &stride);
  if (st != POSENC_OK) return st;
  if (!(std >= 0.0 && std <= 1e30)) return POSENC_ERR_PARAM; /* also NaN */
  if (std == 0.0) std = posenc_i_tb_rsqrt_int((uint64_t)dim);
  k0 = posenc_i_mix64_fin(seed ^ 0x6a09e667f3bcc909ull);
  for (p = 0; p < n_rows; p++) {
    unsigned char *row = (unsigned char *)out + p * stride * es;
    uint64_t kp = posenc_i_mix64_fin(k0 ^ (uint64_t)p);
    for (j = 0; j < dim; j++) {
      double z = posenc_i_tb_trunc_normal(posenc_i_mix64_fin(kp ^ (uint64_t)j));
      posenc_i_store(row + j * es, dtype, (float)(std * z));
    }
  }
  return POSENC_OK;
}

/* ---- resize -------------------------------------------------------------------------------- */

/* (v0 * w0 + v1 * w1) / den, w0 + w1 = den, rounded once to dtype (for den < 2^40; the sum is
 * exact in double-double, the quotient within 2^-104). Inf or NaN: the plain double formula. */
static void posenc_i_tb_lerp_store(unsigned char *dst, posenc_dtype dtype, float v0, float v1,
                                   uint64_t w0, uint64_t w1, uint64_t den) {
  double a = (double)v0, b = (double)v1, x;
  posenc_i_dd num, q;
  if (w1 == 0 || a == b) { posenc_i_store(dst, dtype, v0); return; }
  if (w0 == 0) { posenc_i_store(dst, dtype, v1); return; }
  if (a - a != 0.0 || b - b != 0.0) {
    x = a * ((double)w0 / (double)den) + b * ((double)w1 / (double)den);
    posenc_i_store(dst, dtype, (float)x);
    return;
  }
  num = posenc_i_dd_add(posenc_i_two_prod(a, (double)w0), posenc_i_two_prod(b, (double)w1));
  if (num.hi == 0.0) { posenc_i_store(dst, dtype, 0.0f); return; }
  q = posenc_i_dd_div_d(num, (double)den);
  x = posenc_i_tb_odd53(q.hi, q.lo);
  posenc_i_tb_store_odd(dst, dtype, x);
}

POSENC_API posenc_status posenc_table_resize(const posenc_table *src, size_t new_rows, int align_corners,
                                             posenc_dtype dtype, size_t row_stride,
                                             void *out, size_t out_bytes) {
  posenc_table t; /* *src is read whole here: it may lie anywhere, even inside out */
  size_t es, ses, sstride, stride, need, sneed, r, j, n;
  posenc_status st;
  if (!src || !out) return POSENC_ERR_NULL;
  t = *src;
  src = &t;
  if (!src->data) return POSENC_ERR_NULL;
  if (src->n_rows == 0 || src->dim == 0 || new_rows == 0) return POSENC_ERR_SIZE;
  es = posenc_dtype_size(dtype);
  ses = posenc_dtype_size(src->dtype);
  if (es == 0 || ses == 0) return POSENC_ERR_DTYPE;
  if (align_corners != 0 && align_corners != 1) return POSENC_ERR_PARAM;
  sstride = src->row_stride ? src->row_stride : src->dim;
  stride = row_stride ? row_stride : src->dim;
  if (sstride < src->dim || stride < src->dim) return POSENC_ERR_STRIDE;
  if (posenc_i_rows_span(src->n_rows, src->dim, sstride, ses, &sneed) != POSENC_OK ||
      posenc_i_rows_span(new_rows, src->dim, stride, es, &need) != POSENC_OK)
    return POSENC_ERR_OVERFLOW;
  n = src->n_rows;
  /* the index arithmetic below: (2r+1)*n and r*(n-1) with r < new_rows, in 64 bits */
  if ((uint64_t)n > UINT64_MAX / 4 / (uint64_t)new_rows) return POSENC_ERR_OVERFLOW;
  if ((st = posenc_i_out_room(out, out_bytes, need)) != POSENC_OK) return st;
  if (posenc_i_ranges_meet((const unsigned char *)src->data, sneed, (const unsigned char *)out, need))
    return POSENC_ERR_ALIAS;
  for (r = 0; r < new_rows; r++) {
    /* source position x = num / den exactly; i0 = floor(x), weights (den - rem, rem) / den */
    uint64_t num, den, i0, i1, rem;
    const unsigned char *s0, *s1;
    unsigned char *dst = (unsigned char *)out + r * stride * es;
    if (align_corners) {
      num = new_rows > 1 ? (uint64_t)r * (uint64_t)(n - 1) : 0;
      den = new_rows > 1 ? (uint64_t)(new_rows - 1) : 1;
    } else {  /* (r + 0.5) * n / new_rows - 0.5, clamped at 0 */
      uint64_t a = (2 * (uint64_t)r + 1) * (uint64_t)n;
      num = a > (uint64_t)new_rows ? a - (uint64_t)new_rows : 0;
      den = 2 * (uint64_t)new_rows;
    }
    i0 = num / den; rem = num % den;
    if (i0 >= (uint64_t)n - 1) { i0 = (uint64_t)n - 1; rem = 0; }
    i1 = rem ? i0 + 1 : i0;
    s0 = (const unsigned char *)src->data + (size_t)i0 * sstride * ses;
    s1 = (const unsigned char *)src->data + (size_t)i1 * sstride * ses;
    for (j = 0; j < src->dim; j++)
      posenc_i_tb_lerp_store(dst + j * es, dtype, posenc_i_load(s0 + j * ses, src->dtype),
                             posenc_i_load(s1 + j * ses, src->dtype), den - rem, rem, den);
  }
  return POSENC_OK;
}

/* ---- index encodings ----------------------------------------------------------------------- */

POSENC_API posenc_status posenc_index_table(posenc_index_kind kind, uint32_t max_len, int32_t start,
                                            size_t n_rows, size_t dim, posenc_dtype dtype,
                                            size_t row_stride, void *out, size_t out_bytes) {
  size_t es, stride, r, j;
  double lim;
  posenc_status st;
  st = posenc_i_tb_check_out(out, out_bytes, n_rows, dim, dtype, row_stride, &es, &stride);
  if (st != POSENC_OK) return st;
  if (kind != POSENC_INDEX_INTEGER && kind != POSENC_INDEX_NORMALIZED) return POSENC_ERR_PARAM;
  if (kind == POSENC_INDEX_NORMALIZED && max_len == 0) return POSENC_ERR_PARAM;
  if (n_rows - 1 > (size_t)((int64_t)INT32_MAX - (int64_t)start)) return POSENC_ERR_POSITION;
  if (dtype == POSENC_DTYPE_F16) {  /* every |value| <= 65504: checked at both ends of the range */
    double m = kind == POSENC_INDEX_NORMALIZED ? (double)max_len : 1.0;
    double lo = (double)start, hi = (double)start + (double)(n_rows - 1);
    lim = 65504.0 * m;               /* exact: max_len < 2^32 */
    if (lo < -lim || hi > lim) return POSENC_ERR_POSITION;
  }
  for (r = 0; r < n_rows; r++) {
    unsigned char *row = (unsigned char *)out + r * stride * es;
    double p = (double)start + (double)r, x;  /* exact */
    if (kind == POSENC_INDEX_INTEGER || max_len == 1) {
      x = p;
    } else {  /* p / max_len, round to odd at 53 bits from the exact remainder */
      double q = p / (double)max_len;
      posenc_i_dd prod = posenc_i_two_prod(q, (double)max_len);
      double rem = (p - prod.hi) - prod.lo;     /* exact: p - q*max_len is tiny and representable */
      x = (q == 0.0) ? 0.0 : posenc_i_tb_odd53(q, rem == 0.0 ? 0.0 : (rem > 0.0 ? 1e-300 : -1e-300));
    }
    for (j = 0; j < dim; j++) posenc_i_tb_store_odd(row + j * es, dtype, x);
  }
  return POSENC_OK;
}

/* ---- 2-D sin-cos --------------------------------------------------------------------------- */

POSENC_API posenc_sincos_2d_params posenc_sincos_2d_default(size_t embed_dim, size_t grid_h, size_t grid_w) {
  posenc_sincos_2d_params r;
  memset(&r, 0, sizeof r);
  r.embed_dim = embed_dim; r.grid_h = grid_h; r.grid_w = grid_w;
  r.cls_token = 0; r.base = 10000.0; r.dtype = POSENC_DTYPE_F32; r.row_stride = 0;
  return r;
}

/* Validates everything posenc_sincos_2d needs before it writes: rows, bytes, the 1-D params. */
static posenc_status posenc_i_tb_check_2d(const posenc_sincos_2d_params *pr, size_t *rows, size_t *bytes,
                                          posenc_sinusoidal_params *half) {
  size_t es, stride, grid, maxpos;
  posenc_i_dd uf, ratio;
  posenc_status st;
  if (!pr) return POSENC_ERR_NULL;
  if (pr->embed_dim == 0 || pr->grid_h == 0 || pr->grid_w == 0) return POSENC_ERR_SIZE;
  if (pr->embed_dim % 4 != 0) return POSENC_ERR_DIM;
  es = posenc_dtype_size(pr->dtype);
  if (es == 0) return POSENC_ERR_DTYPE;
  stride = pr->row_stride ? pr->row_stride : pr->embed_dim;
  if (stride < pr->embed_dim) return POSENC_ERR_STRIDE;
  if (pr->grid_h > SIZE_MAX / pr->grid_w) return POSENC_ERR_OVERFLOW;
  grid = pr->grid_h * pr->grid_w;
  if (pr->cls_token && grid == SIZE_MAX) return POSENC_ERR_OVERFLOW;
  *rows = grid + (pr->cls_token ? 1 : 0);
  st = posenc_i_rows_span(*rows, pr->embed_dim, stride, es, bytes);
  if (st != POSENC_OK) return st;
  *half = posenc_sinusoidal_default(pr->embed_dim / 2);
  half->base = pr->base; half->layout = POSENC_LAYOUT_SPLIT; half->dtype = pr->dtype;
  if (!(pr->base >= 1e-30) || !(pr->base <= 1e30)) return POSENC_ERR_BASE;
  maxpos = (pr->grid_h > pr->grid_w ? pr->grid_h : pr->grid_w) - 1;
  if (maxpos > (size_t)INT32_MAX) return POSENC_ERR_POSITION;
  return posenc_i_sinusoidal_freqs(half, pr->embed_dim / 4, (double)maxpos, &uf, &ratio);
}

POSENC_API posenc_status posenc_sincos_2d_bytes(const posenc_sincos_2d_params *params, size_t *bytes) {
  size_t rows, need;
  posenc_sinusoidal_params half;
  posenc_status st;
  if (!bytes) return POSENC_ERR_NULL;
  st = posenc_i_tb_check_2d(params, &rows, &need, &half);
  if (st == POSENC_OK) *bytes = need; /* it knows the size before it has checked base and grid */
  return st;
}

POSENC_API posenc_status posenc_sincos_2d(const posenc_sincos_2d_params *params, void *out, size_t out_bytes) {
  size_t rows, need, es, S, D, H, W, h, w, half_bytes;
  posenc_sinusoidal_params half;
  posenc_status st;
  unsigned char *grid;
  if (!out) return POSENC_ERR_NULL;
  st = posenc_i_tb_check_2d(params, &rows, &need, &half);
  if (st != POSENC_OK) return st;
  if ((st = posenc_i_out_room(out, out_bytes, need)) != POSENC_OK) return st;
  es = posenc_dtype_size(params->dtype);
  D = params->embed_dim; H = params->grid_h; W = params->grid_w;
  S = params->row_stride ? params->row_stride : D;
  half_bytes = D / 2 * es;
  grid = (unsigned char *)out;
  if (params->cls_token) { memset(grid, 0, D * es); grid += S * es; }
  /* columns [0, D/2) of grid row 0: the w encodings; [D/2, D) of token (h, 0): the h encodings */
  half.row_stride = S;
  st = posenc_sinusoidal_table(&half, 0, W, grid, need - (size_t)(grid - (unsigned char *)out));
  if (st != POSENC_OK) return st;  /* not reached: validated above */
  half.row_stride = H > 1 ? W * S : S;  /* W * S fits: it is at most the table's span (H > 1) */
  st = posenc_sinusoidal_table(&half, 0, H, grid + half_bytes,
                               need - (size_t)(grid - (unsigned char *)out) - half_bytes);
  if (st != POSENC_OK) return st;
  for (h = 0; h < H; h++) {
    unsigned char *row0 = grid + h * W * S * es;
    for (w = 0; w < W; w++) {
      unsigned char *dst = row0 + w * S * es;
      if (h > 0) memcpy(dst, grid + w * S * es, half_bytes);
      if (w > 0) memcpy(dst + half_bytes, row0 + half_bytes, half_bytes);
    }
  }
  return POSENC_OK;
}

/* ---- spectrum of a table ------------------------------------------------------------------- */

/* Elements the table spans: (n_rows-1)*stride + dim, checked. */
static posenc_status posenc_i_table_extent(const posenc_table *t, size_t *stride, size_t *extent) {
  size_t s;
  if (!t || !t->data) return POSENC_ERR_NULL;
  if (t->n_rows == 0 || t->dim == 0) return POSENC_ERR_SIZE;
  if (posenc_dtype_size(t->dtype) == 0) return POSENC_ERR_DTYPE;
  s = t->row_stride ? t->row_stride : t->dim;
  if (s < t->dim) return POSENC_ERR_STRIDE;
  if (posenc_i_extent(t->n_rows, t->dim, s, extent) != POSENC_OK) return POSENC_ERR_OVERFLOW;
  if (*extent > SIZE_MAX / posenc_dtype_size(t->dtype)) return POSENC_ERR_OVERFLOW;
  *stride = s;
  return POSENC_OK;
}

POSENC_API size_t posenc_spectrum_work(size_t dim) {
  if (dim == 0 || dim >= SIZE_MAX / sizeof(double) || dim > SIZE_MAX / sizeof(double) / (dim + 1)) return 0;
  return dim * (dim + 1);
}

/* G = P^T P (upper triangle, then mirrored), row by row in a fixed order. Products of two f32
 * values are exact in double; the sums round in that fixed order. PARAM on NaN or Inf. */
static posenc_status posenc_i_gram(const posenc_table *t, size_t stride, double *g) {
  const unsigned char *base = (const unsigned char *)t->data;
  size_t es = posenc_dtype_size(t->dtype), d = t->dim, p, i, j;
  memset(g, 0, d * d * sizeof *g);
  for (p = 0; p < t->n_rows; p++) {
    const unsigned char *row = base + p * stride * es;
    for (i = 0; i < d; i++) {
      double xi = (double)posenc_i_load(row + i * es, t->dtype);
      double *gi = g + i * d;
      if (!(xi - xi == 0.0)) return POSENC_ERR_PARAM; /* NaN or Inf */
      if (xi == 0.0) continue;
      for (j = i; j < d; j++) gi[j] += xi * (double)posenc_i_load(row + j * es, t->dtype);
    }
  }
  for (i = 0; i < d; i++)
    for (j = i + 1; j < d; j++) g[j * d + i] = g[i * d + j];
  return POSENC_OK;
}

/* One Jacobi rotation zeroing a[p][q] (p < q) of the symmetric d x d matrix a (both triangles
 * kept), with Rutishauser's formulas: t = tan(phi), the smaller root. */
static void posenc_i_jacobi_rotate(double *a, size_t d, size_t p, size_t q) {
  double apq = a[p * d + q], theta = (a[q * d + q] - a[p * d + p]) / (2.0 * apq);
  double at = theta < 0.0 ? -theta : theta, t, c, s;
  size_t r;
  t = at > 1e150 ? 0.5 / at : 1.0 / (at + posenc_i_sqrt(at * at + 1.0));
  if (theta < 0.0) t = -t;
  c = 1.0 / posenc_i_sqrt(t * t + 1.0);
  s = t * c;
  a[p * d + p] -= t * apq;
  a[q * d + q] += t * apq;
  a[p * d + q] = a[q * d + p] = 0.0;
  for (r = 0; r < d; r++) {
    double arp, arq;
    if (r == p || r == q) continue;
    arp = a[r * d + p];
    arq = a[r * d + q];
    a[r * d + p] = a[p * d + r] = c * arp - s * arq;
    a[r * d + q] = a[q * d + r] = s * arp + c * arq;
  }
}

/* Cyclic sweeps (p, q) in row order until a sweep rotates nothing. An entry is negligible when
 * a_pq^2 <= 2^-106 a_pp a_qq (relative to its diagonal, as Demmel and Veselic: small eigenvalues
 * keep their relative accuracy), or a_pq^2 <= 2^-106 max(a_ii)^2: below the rounding of the Gram
 * matrix's largest entries. A rank-deficient table's null space is such noise, which the relative
 * test alone chased for up to all 64 sweeps (posenc analyze of 128 x 256: 3.9 s, now 1.0; of
 * 1024 x 384: 6.8 s, now 3.1; the values the same but in their last digits). At most 64 sweeps
 * (quadratic convergence needs far fewer). */
static void posenc_i_jacobi(double *a, size_t d) {
  int sweep;
  for (sweep = 0; sweep < 64; sweep++) {
    const double eps2 = 1.232595164407831e-32; /* 2^-106 */
    int rotated = 0;
    size_t p, q;
    double dmax = 0.0, floor2;
    for (p = 0; p < d; p++) dmax = a[p * d + p] > dmax ? a[p * d + p] : dmax;
    floor2 = eps2 * dmax * dmax;
    for (p = 0; p + 1 < d; p++)
      for (q = p + 1; q < d; q++) {
        double apq = a[p * d + q];
        if (apq == 0.0) continue;
        if (apq * apq <= eps2 * (a[p * d + p] * a[q * d + q]) || apq * apq <= floor2) continue;
        posenc_i_jacobi_rotate(a, d, p, q);
        rotated = 1;
      }
    if (!rotated) break;
  }
}

/* sigma[i] = sqrt(max(eigenvalue, 0)) from the diagonal, sorted descending (insertion sort:
 * d is a model width, and the order of equal values does not matter). */
static void posenc_i_sorted_singular_values(const double *a, size_t d, double *sigma) {
  size_t i, j;
  for (i = 0; i < d; i++) {
    double v = posenc_i_sqrt(a[i * d + i] > 0.0 ? a[i * d + i] : 0.0);
    for (j = i; j > 0 && sigma[j - 1] < v; j--) sigma[j] = sigma[j - 1];
    sigma[j] = v;
  }
}

static void posenc_i_spectrum_summary(const double *sigma, size_t n_rows, size_t d, posenc_spectrum_info *info) {
  double energy = 0.0, sum = 0.0, cum = 0.0, h = 0.0, tol;
  size_t i, big = n_rows > d ? n_rows : d;
  memset(info, 0, sizeof *info);
  for (i = 0; i < d; i++) energy += sigma[i] * sigma[i];
  info->energy = energy;
  tol = sigma[0] * (double)big * 1.1920928955078125e-07; /* 2^-23 */
  for (i = 0; i < d; i++) info->rank += sigma[i] > tol;
  for (i = 0; i < info->rank; i++) sum += sigma[i]; /* the entropy ignores the rounding noise below tol */
  if (!(energy > 0.0)) return; /* a zero table: every count 0, entropy rank 0 */
  for (i = 0; i < d && (info->k90 == 0 || info->k99 == 0); i++) {
    cum += sigma[i] * sigma[i];
    if (info->k90 == 0 && cum >= 0.9 * energy) info->k90 = i + 1;
    if (info->k99 == 0 && cum >= 0.99 * energy) info->k99 = i + 1;
  }
  if (info->k90 == 0) info->k90 = d; /* rounding of the running sum */
  if (info->k99 == 0) info->k99 = d;
  for (i = 0; i < info->rank; i++) {
    double q = sigma[i] / sum;
    if (q > 0.0) h -= q * posenc_i_logd(q);
  }
  info->entropy_rank = posenc_i_dd_exp(posenc_i_dd_make(h, 0.0)).hi;
}

POSENC_API posenc_status posenc_spectrum(const posenc_table *table, double *work, size_t work_count,
                                         double *singular_values, posenc_spectrum_info *info) {
  posenc_table t; /* *table is read whole here: the Gram matrix may overwrite it in work */
  size_t stride, extent, d, need;
  posenc_status st;
  if (!table || !work || !info) return POSENC_ERR_NULL;
  t = *table;
  table = &t;
  if ((st = posenc_i_table_extent(table, &stride, &extent)) != POSENC_OK) return st;
  d = table->dim;
  need = posenc_spectrum_work(d);
  if (need == 0) return POSENC_ERR_OVERFLOW;
  if (work_count < need) return POSENC_ERR_BUFFER;
  {
    const unsigned char *w = (const unsigned char *)work, *data = (const unsigned char *)table->data;
    size_t wb = need * sizeof *work, tb = extent * posenc_dtype_size(table->dtype);
    if (posenc_i_ranges_meet(w, wb, data, tb) ||
        (singular_values && (posenc_i_ranges_meet(w, wb, (const unsigned char *)singular_values, d * sizeof(double)) ||
                             posenc_i_ranges_meet(data, tb, (const unsigned char *)singular_values, d * sizeof(double)) ||
                             posenc_i_ranges_meet((const unsigned char *)info, sizeof *info,
                                                  (const unsigned char *)singular_values, d * sizeof(double)))) ||
        posenc_i_ranges_meet(w, wb, (const unsigned char *)info, sizeof *info))
      return POSENC_ERR_ALIAS;
  }
  if ((st = posenc_i_gram(table, stride, work)) != POSENC_OK) return st;
  posenc_i_jacobi(work, d);
  posenc_i_sorted_singular_values(work, d, work + d * d);
  posenc_i_spectrum_summary(work + d * d, table->n_rows, d, info);
  if (singular_values) memcpy(singular_values, work + d * d, d * sizeof *singular_values);
  return POSENC_OK;
}

/* ---- .npy headers -------------------------------------------------------------------------- */

static const struct {
  char descr[4];
  size_t item_size;
} posenc_i_npy_types[8] = { /* by posenc_npy_type */
  {"<f4", 4}, {"<f2", 2}, {"<f8", 8}, {"<i4", 4}, {"<i8", 8}, {"|u1", 1}, {"|b1", 1}, {"<u2", 2}
};
#define POSENC_I_NPY_TYPES (sizeof posenc_i_npy_types / sizeof posenc_i_npy_types[0])

static const unsigned char posenc_i_npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/* A cursor over the header text [p, end); the first problem found is kept with its offset. */
typedef struct posenc_i_npy_cur {
  const unsigned char *start, *p, *end;
  posenc_npy_problem problem;
  size_t at;
} posenc_i_npy_cur;

static int posenc_i_npy_fail(posenc_i_npy_cur *c, posenc_npy_problem problem) {
  c->problem = problem;
  c->at = (size_t)(c->p - c->start);
  return 0;
}

static void posenc_i_npy_space(posenc_i_npy_cur *c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}

/* After whitespace: consumes ch if it is next. */
static int posenc_i_npy_char(posenc_i_npy_cur *c, unsigned char ch) {
  posenc_i_npy_space(c);
  if (c->p < c->end && *c->p == ch) { c->p++; return 1; }
  return 0;
}

static int posenc_i_npy_is_ident(unsigned char ch) {
  return ch == '_' || (ch >= '0' && ch <= '9') || ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'z');
}

/* A whole word: "Falsey" is not False. */
static int posenc_i_npy_word(posenc_i_npy_cur *c, const char *word) {
  size_t n = strlen(word), left;
  posenc_i_npy_space(c);
  left = (size_t)(c->end - c->p);
  if (left < n || memcmp(c->p, word, n) != 0) return 0;
  if (left > n && posenc_i_npy_is_ident(c->p[n])) return 0;
  c->p += n;
  return 1;
}

/* A quoted string without escapes or control characters: 'abc' or "abc" (into the header). */
static int posenc_i_npy_string(posenc_i_npy_cur *c, const unsigned char **s, size_t *n) {
  unsigned char quote;
  posenc_i_npy_space(c);
  if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return posenc_i_npy_fail(c, POSENC_NPY_PROBLEM_SYNTAX);
  quote = *c->p++;
  *s = c->p;
  while (c->p < c->end && *c->p != quote) {
    if (*c->p == '\\' || *c->p < 0x20 || *c->p >= 0x7f) return posenc_i_npy_fail(c, POSENC_NPY_PROBLEM_SYNTAX);
    c->p++;
  }
  if (c->p >= c->end) return posenc_i_npy_fail(c, POSENC_NPY_PROBLEM_SYNTAX);
  *n = (size_t)(c->p - *s);
  c->p++;
  return 1;
}

static int posenc_i_npy_string_is(const unsigned char *s, size_t n, const char *text) {
  return n == strlen(text) && memcmp(s, text, n) == 0;
}

/* A decimal integer as Python writes it: digits, no sign, no leading zero, no '_'. */
static int posenc_i_npy_size(posenc_i_npy_cur *c, size_t *out) {
  size_t value = 0;
  const unsigned char *first;
  posenc_i_npy_space(c);
  first = c->p;
  while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
    size_t digit = (size_t)(*c->p - '0');
    if (value > (SIZE_MAX - digit) / 10) return posenc_i_npy_fail(c, POSENC_NPY_PROBLEM_TOO_LARGE);
    value = value * 10 + digit;
    c->p++;
  }
  if (c->p == first || (c->p - first > 1 && *first == '0')) return posenc_i_npy_fail(c, POSENC_NPY_PROBLEM_SHAPE);
  *out = value;
  return 1;
}

/* (), (n,), (a, b), (a, b,): "(n)" is an int in Python, not a tuple. */
static int posenc_i_npy_shape(posenc_i_npy_cur *c, posenc_npy_info *info) {
  info->ndim = 0;
  if (!posenc_i_npy_char(c, '(')) return posenc_i_npy_fail(c, POSENC_NPY_PROBLEM_SHAPE);
  if (posenc_i_npy_char(c, ')')) return 1;
  for (;;) {
    if (info->ndim == 4) return posenc_i_npy_fail(c, POSENC_NPY_PROBLEM_NDIM);
    if (!posenc_i_npy_size(c, &info->shape[info->ndim++])) return 0;
    if (posenc_i_npy_char(c, ')')) return info->ndim == 1 ? posenc_i_npy_fail(c, POSENC_NPY_PROBLEM_SHAPE) : 1;
    if (!posenc_i_npy_char(c, ',')) return posenc_i_npy_fail(c, POSENC_NPY_PROBLEM_SHAPE);
    if (posenc_i_npy_char(c, ')')) return 1;
  }
}

static int posenc_i_npy_descr(posenc_i_npy_cur *c, posenc_npy_info *info) {
  const unsigned char *s;
  size_t n, i;
  posenc_i_npy_space(c);
  if (c->p < c->end && (*c->p == '[' || *c->p == '(')) return posenc_i_npy_fail(c, POSENC_NPY_PROBLEM_STRUCTURED);
  if (!posenc_i_npy_string(c, &s, &n)) return 0;
  for (i = 0; i < POSENC_I_NPY_TYPES; i++)
    if (posenc_i_npy_string_is(s, n, posenc_i_npy_types[i].descr)) {
      info->type = (posenc_npy_type)i;
      info->item_size = posenc_i_npy_types[i].item_size;
      return 1;
    }
  c->p = s; /* the problem is at the descr itself */
  return posenc_i_npy_fail(c, n > 0 && s[0] == '>' ? POSENC_NPY_PROBLEM_BIG_ENDIAN : POSENC_NPY_PROBLEM_DTYPE);
}

static int posenc_i_npy_fortran(posenc_i_npy_cur *c) {
  if (posenc_i_npy_word(c, "False")) return 1;
  return posenc_i_npy_fail(c, posenc_i_npy_word(c, "True") ? POSENC_NPY_PROBLEM_FORTRAN : POSENC_NPY_PROBLEM_BOOL);
}

/* The dict: exactly 'descr', 'fortran_order' and 'shape', any order, each once, an optional
 * trailing comma, then only whitespace. */
static int posenc_i_npy_dict(posenc_i_npy_cur *c, posenc_npy_info *info) {
  unsigned seen = 0;
  if (!posenc_i_npy_char(c, '{')) return posenc_i_npy_fail(c, POSENC_NPY_PROBLEM_SYNTAX);
  while (!posenc_i_npy_char(c, '}')) {
    const unsigned char *key;
    size_t n;
    unsigned which;
    int ok;
    if (!posenc_i_npy_string(c, &key, &n)) return 0;
    which = posenc_i_npy_string_is(key, n, "descr") ? 1u
          : posenc_i_npy_string_is(key, n, "fortran_order") ? 2u
          : posenc_i_npy_string_is(key, n, "shape") ? 4u : 0u;
    if (!which || (seen & which)) {
      c->p = key;
      return posenc_i_npy_fail(c, which ? POSENC_NPY_PROBLEM_KEY_TWICE : POSENC_NPY_PROBLEM_KEY_UNKNOWN);
    }
    seen |= which;
    if (!posenc_i_npy_char(c, ':')) return posenc_i_npy_fail(c, POSENC_NPY_PROBLEM_SYNTAX);
    ok = which == 1u ? posenc_i_npy_descr(c, info) : which == 2u ? posenc_i_npy_fortran(c) : posenc_i_npy_shape(c, info);
    if (!ok) return 0;
    if (!posenc_i_npy_char(c, ',')) {
      if (posenc_i_npy_char(c, '}')) break;
      return posenc_i_npy_fail(c, POSENC_NPY_PROBLEM_SYNTAX);
    }
  }
  if (seen != 7u) return posenc_i_npy_fail(c, POSENC_NPY_PROBLEM_KEY_MISSING);
  posenc_i_npy_space(c);
  return c->p == c->end ? 1 : posenc_i_npy_fail(c, POSENC_NPY_PROBLEM_SYNTAX);
}

/* One size rule for the parser and the writer. NumPy's (np.empty): the product of the non-zero
 * extents must fit, whatever else; a zero extent makes the array empty. posenc's: the header and
 * the bytes of the non-zero extents together within PTRDIFF_MAX, so every offset into a whole
 * file is a ptrdiff_t. 0 if either fails; else 1 with the element count. */
static int posenc_i_npy_fits(const size_t *shape, size_t ndim, size_t item_size, size_t data_offset,
                             size_t *count) {
  size_t i, p = 1;
  int empty = 0;
  for (i = 0; i < ndim; i++) {
    if (shape[i] == 0) { empty = 1; continue; }
    if (p > SIZE_MAX / shape[i]) return 0;
    p *= shape[i];
  }
  if (data_offset > (size_t)PTRDIFF_MAX || p > ((size_t)PTRDIFF_MAX - data_offset) / item_size) return 0;
  *count = empty ? 0 : p;
  return 1;
}

/* Fills the problem fields of *info only (the rest is left as it was) and returns the status. */
static posenc_status posenc_i_npy_refuse(posenc_npy_info *info, posenc_npy_problem problem, size_t at) {
  info->problem = problem;
  info->problem_at = at;
  return problem == POSENC_NPY_PROBLEM_TOO_LARGE ? POSENC_ERR_OVERFLOW : POSENC_ERR_FORMAT;
}

POSENC_API posenc_status posenc_npy_parse(const void *buf, size_t len, posenc_npy_info *info) {
  const unsigned char *b = (const unsigned char *)buf;
  posenc_npy_info r;
  posenc_i_npy_cur c;
  size_t start, hlen, count;
  if (!buf || !info) return POSENC_ERR_NULL;
  if (len < 6 || memcmp(b, posenc_i_npy_magic, 6) != 0) return posenc_i_npy_refuse(info, POSENC_NPY_PROBLEM_MAGIC, 0);
  if (len < 8) return posenc_i_npy_refuse(info, POSENC_NPY_PROBLEM_TRUNCATED, len);
  if (b[6] < 1 || b[6] > 3 || b[7] != 0) return posenc_i_npy_refuse(info, POSENC_NPY_PROBLEM_VERSION, 6);
  start = b[6] == 1 ? 10 : 12;
  if (len < start) return posenc_i_npy_refuse(info, POSENC_NPY_PROBLEM_TRUNCATED, len);
  hlen = (size_t)b[8] | (size_t)b[9] << 8;
  if (b[6] > 1) hlen |= (size_t)((uint32_t)b[10] << 16 | (uint32_t)b[11] << 24);
  if (hlen > len - start) return posenc_i_npy_refuse(info, POSENC_NPY_PROBLEM_TRUNCATED, len);
  memset(&r, 0, sizeof r);
  c.start = b;
  c.p = b + start;
  c.end = c.p + hlen;
  c.problem = POSENC_NPY_PROBLEM_NONE;
  c.at = 0;
  if (!posenc_i_npy_dict(&c, &r)) return posenc_i_npy_refuse(info, c.problem, c.at);
  r.data_offset = start + hlen;
  if (!posenc_i_npy_fits(r.shape, r.ndim, r.item_size, r.data_offset, &count))
    return posenc_i_npy_refuse(info, POSENC_NPY_PROBLEM_TOO_LARGE, start);
  r.count = count;
  r.data_bytes = count * r.item_size;
  r.version = b[6];
  *info = r;
  return POSENC_OK;
}

/* Decimal digits of v at out (no terminator); returns how many. */
static size_t posenc_i_npy_digits(size_t v, char *out) {
  char tmp[24];
  size_t n = 0, i;
  do { tmp[n++] = (char)('0' + v % 10); v /= 10; } while (v);
  for (i = 0; i < n; i++) out[i] = tmp[n - 1 - i];
  return n;
}

POSENC_API posenc_status posenc_npy_header(posenc_npy_type type, size_t ndim, const size_t *shape,
                                           void *out, size_t out_cap, size_t *len) {
  static const char head[] = "{'descr': '", mid[] = "', 'fortran_order': False, 'shape': (";
  char dict[192];
  size_t n = 0, i, count, total;
  unsigned char *o = (unsigned char *)out;
  if (!out || !len || (ndim > 0 && !shape)) return POSENC_ERR_NULL;
  if (ndim > 4) return POSENC_ERR_SIZE;
  if ((unsigned)type >= POSENC_I_NPY_TYPES) return POSENC_ERR_PARAM;
  memcpy(dict, head, sizeof head - 1); n += sizeof head - 1;
  memcpy(dict + n, posenc_i_npy_types[type].descr, 3); n += 3;
  memcpy(dict + n, mid, sizeof mid - 1); n += sizeof mid - 1;
  for (i = 0; i < ndim; i++) {
    if (i) { dict[n++] = ','; dict[n++] = ' '; }
    n += posenc_i_npy_digits(shape[i], dict + n);
  }
  if (ndim == 1) dict[n++] = ',';
  memcpy(dict + n, "), }", 4); n += 4;
  total = (10 + n + 1 + 63) / 64 * 64; /* magic, version, u16 length, dict, '\n' */
  if (!posenc_i_npy_fits(shape, ndim, posenc_i_npy_types[type].item_size, total, &count))
    return POSENC_ERR_OVERFLOW; /* what posenc_npy_parse would refuse */
  if (out_cap < total) return POSENC_ERR_BUFFER;
  if (posenc_i_ranges_meet(o, total, (const unsigned char *)len, sizeof *len)) return POSENC_ERR_ALIAS;
  memcpy(o, posenc_i_npy_magic, 6);
  o[6] = 1; o[7] = 0;
  o[8] = (unsigned char)((total - 10) & 0xff);
  o[9] = (unsigned char)((total - 10) >> 8);
  memcpy(o + 10, dict, n);
  memset(o + 10 + n, ' ', total - 10 - n - 1);
  o[total - 1] = '\n';
  *len = total;
  return POSENC_OK;
}

/* =============================================================================================
 * Position biases: ALiBi, T5 and DeBERTa buckets, Transformer-XL, masks, attention scales
 * =========================================================================================== */

/* ---- score tiles --------------------------------------------------------------------------- */
typedef struct posenc_i_tile {
  unsigned char *base;
  posenc_dtype dtype;
  size_t es, heads, rows, cols, rs, hs;   /* strides in bytes */
  size_t extent;                          /* bytes from base to the end of the last element */
  int64_t q0, k0, window;                 /* window: 0 none */
  int causal;
  const uint8_t *keep;
  void (*row)(const posenc_i_bias_job *job);
} posenc_i_tile;

static posenc_status posenc_i_tile_check(const posenc_score_tile *t, const posenc_score_mask *m,
                                         posenc_i_tile *pt) {
  size_t rs, hs, n[2], st[2], ext;
  posenc_status s;
  const posenc_i_backend *be;
  if (!t || !t->scores) return POSENC_ERR_NULL;
  if (t->dtype != POSENC_DTYPE_F32 && t->dtype != POSENC_DTYPE_F16) return POSENC_ERR_DTYPE;
  if (!t->heads || !t->rows || !t->cols) return POSENC_ERR_SIZE;
  if (m && m->window < 0) return POSENC_ERR_PARAM;
  if (t->rows - 1 > (size_t)INT32_MAX || t->cols - 1 > (size_t)INT32_MAX ||
      (int64_t)t->q_pos + (int64_t)(t->rows - 1) > INT32_MAX || (int64_t)t->k_pos + (int64_t)(t->cols - 1) > INT32_MAX)
    return POSENC_ERR_POSITION;
  rs = t->row_stride ? t->row_stride : t->cols;
  if (t->head_stride) hs = t->head_stride;
  else if (t->rows > SIZE_MAX / rs) return POSENC_ERR_OVERFLOW;
  else hs = t->rows * rs;
  /* no overlap (posenc_i_strided_extent; rows before heads, so on equal strides rows are inner) */
  n[0] = t->rows; n[1] = t->heads; st[0] = rs; st[1] = hs;
  if ((s = posenc_i_strided_extent(t->cols, n, st, 2, &ext)) != POSENC_OK) return s; /* ALIAS, OVERFLOW */
  /* extent in elements, then bytes */
  if (ext > (size_t)PTRDIFF_MAX / 4) return POSENC_ERR_OVERFLOW;
  pt->es = t->dtype == POSENC_DTYPE_F32 ? 4 : 2;
  pt->extent = ext * pt->es;
  if (m && m->key_keep && posenc_i_ranges_meet((const unsigned char *)t->scores, pt->extent, m->key_keep, t->cols))
    return POSENC_ERR_ALIAS;
  pt->base = (unsigned char *)t->scores;
  pt->dtype = t->dtype;
  pt->heads = t->heads; pt->rows = t->rows; pt->cols = t->cols;
  pt->rs = rs * pt->es; pt->hs = hs * pt->es;
  pt->q0 = t->q_pos; pt->k0 = t->k_pos;
  pt->causal = m ? m->causal != 0 : 0;
  pt->window = m ? m->window : 0;
  pt->keep = m ? m->key_keep : NULL;
  be = posenc_i_select();
  pt->row = be->bias_row;
  return POSENC_OK;
}

/* Segments of one row, flushed to the kernel when the buffer is full. */
#define POSENC_I_SEGS 32
typedef struct posenc_i_segs {
  posenc_i_bias_job job;
  posenc_i_bias_seg seg[POSENC_I_SEGS];
  void (*row)(const posenc_i_bias_job *job);
} posenc_i_segs;

static void posenc_i_segs_flush(posenc_i_segs *s) {
  if (s->job.nseg) {
    s->row(&s->job);
    s->job.begin = s->seg[s->job.nseg - 1].end;
    s->job.nseg = 0;
  }
}
/* Appends columns [previous end, end) as a segment (none if empty); returns it, or NULL. */
static posenc_i_bias_seg *posenc_i_segs_add(posenc_i_segs *s, size_t end, int kind, float a, float c) {
  posenc_i_bias_seg *g;
  size_t start = s->job.nseg ? s->seg[s->job.nseg - 1].end : s->job.begin;
  if (end <= start) return NULL;
  if (s->job.nseg == POSENC_I_SEGS) posenc_i_segs_flush(s);
  g = &s->seg[s->job.nseg++];
  g->end = end; g->kind = kind; g->a = a; g->c = c; g->v = NULL;
  return g;
}
/* VALUES: column j of the segment adds v[j - start] */
static void posenc_i_segs_values(posenc_i_segs *s, size_t end, const float *v) {
  posenc_i_bias_seg *g = posenc_i_segs_add(s, end, POSENC_I_SEG_VALUES, 0.0f, 0.0f);
  if (g) g->v = v;
}

/* The visible columns [*lo, *hi) of the row at query position q (causal and window masks). */
static void posenc_i_tile_visible(const posenc_i_tile *pt, int64_t q, size_t *lo, size_t *hi) {
  int64_t l = 0, h = (int64_t)pt->cols;
  if (pt->causal && q - pt->k0 + 1 < h) h = q - pt->k0 + 1;           /* k <= q */
  if (pt->window > 0 && q - pt->window + 1 - pt->k0 > l) l = q - pt->window + 1 - pt->k0; /* q - k < window */
  if (h < 0) h = 0;
  if (l > h) l = h;
  *lo = (size_t)l; *hi = (size_t)h;
}

/* What is added in a row's visible columns. */
enum { POSENC_I_SRC_MASK, POSENC_I_SRC_ALIBI, POSENC_I_SRC_T5 };
typedef struct posenc_i_bias_src {
  int kind;                     /* POSENC_I_SRC_... */
  posenc_alibi_form form;
  int64_t key_origin;
  const float *slopes;
  const posenc_t5_plan *t5;
  const unsigned char *table;   /* T5: row 0, column head0 */
  posenc_dtype table_dtype;
  size_t table_rs, table_es;    /* bytes */
} posenc_i_bias_src;

/* T5: bucket of a >= 0 within one direction, and the last a with the same bucket. */
static uint32_t posenc_i_t5_dir(const posenc_t5_plan *pl, int64_t a, int64_t *last) {
  uint32_t lo = 0, hi, bucket;
  if (a < (int64_t)pl->e) { *last = a; return (uint32_t)a; }
  hi = pl->n - pl->e;           /* first[0 .. hi-1] ascending; find the last first[] <= a */
  while (hi - lo > 1) {
    uint32_t mid = (lo + hi) / 2;
    if (pl->first[mid] <= a) lo = mid; else hi = mid;
  }
  bucket = pl->e + lo;
  *last = lo + 1 < pl->n - pl->e ? (int64_t)pl->first[lo + 1] - 1 : INT64_MAX;
  return bucket;
}

/* T5 bucket of r = k - q, and the length of its run: r .. r + *run - 1 share it. */
static uint32_t posenc_i_t5_bucket(const posenc_t5_plan *pl, int64_t r, int64_t *run) {
  int64_t last;
  uint32_t bucket;
  if (pl->cfg.bidirectional && r > 0) {
    bucket = pl->n + posenc_i_t5_dir(pl, r, &last);
    *run = last == INT64_MAX ? INT64_MAX : last - r + 1;
    return bucket;
  }
  if (r >= 0) { *run = pl->cfg.bidirectional ? 1 : INT64_MAX; return 0; } /* r = 0, or causal future */
  bucket = posenc_i_t5_dir(pl, -r, &last);
  /* a = -r falls as r grows: the run ends where a drops below the bucket's first a */
  if (bucket < pl->e) *run = 1;
  else *run = -r - (int64_t)pl->first[bucket - pl->e] + 1;
  return bucket;
}

/* T5 runs of constant buckets over columns [j, end) of a row (r = r0 + column). */
static void posenc_i_t5_runs(const posenc_i_bias_src *b, posenc_i_segs *sg, size_t h, int64_t r0, size_t j,
                             size_t end) {
  while (j < end) {
    int64_t run;
    uint32_t bucket = posenc_i_t5_bucket(b->t5, r0 + (int64_t)j, &run);
    size_t stop = run >= (int64_t)(end - j) ? end : j + (size_t)run;
    posenc_i_segs_add(sg, stop, POSENC_I_SEG_CONST,
                      posenc_i_load(b->table + bucket * b->table_rs + h * b->table_es, b->table_dtype), 0.0f);
    j = stop;
  }
}

static void posenc_i_bias_row_segs(const posenc_i_bias_src *b, posenc_i_segs *sg, size_t h, int64_t q,
                                   int64_t k0, size_t lo, size_t hi, const float *near) {
  if (b->kind == POSENC_I_SRC_MASK) {
    posenc_i_segs_add(sg, hi, POSENC_I_SEG_MASK, 0.0f, 0.0f);
  } else if (b->kind == POSENC_I_SRC_ALIBI) {
    float m = b->slopes[h];
    if (b->form == POSENC_ALIBI_KEY) {
      posenc_i_segs_add(sg, hi, POSENC_I_SEG_LINEAR, m, (float)(k0 - b->key_origin));
    } else if (b->form == POSENC_ALIBI_RELATIVE) {
      posenc_i_segs_add(sg, hi, POSENC_I_SEG_LINEAR, m, (float)(k0 - q));
    } else { /* SYMMETRIC: m*(k-q) up to k = q, then -m*(k-q) */
      int64_t split = q - k0 + 1;
      size_t s = split < (int64_t)lo ? lo : (split > (int64_t)hi ? hi : (size_t)split);
      posenc_i_segs_add(sg, s, POSENC_I_SEG_LINEAR, m, (float)(k0 - q));
      posenc_i_segs_add(sg, hi, POSENC_I_SEG_LINEAR, -m, (float)(k0 - q));
    }
  } else {
    /* |r| <= POSENC_T5_NEAR (short runs near the diagonal): one VALUES segment over the row's
     * values near[r + NEAR]; beyond it, long runs of constant buckets */
    const int64_t r0 = k0 - q, R = POSENC_T5_NEAR;
    int64_t a = -R - r0, z = R + 1 - r0;   /* columns with |r| <= R: [a, z) */
    size_t na = a < (int64_t)lo ? lo : (a > (int64_t)hi ? hi : (size_t)a);
    size_t nz = z < (int64_t)na ? na : (z > (int64_t)hi ? hi : (size_t)z);
    posenc_i_t5_runs(b, sg, h, r0, lo, na);
    if (nz > na) posenc_i_segs_values(sg, nz, near + (r0 + (int64_t)na + R));
    posenc_i_t5_runs(b, sg, h, r0, nz, hi);
  }
}

static void posenc_i_tile_run(const posenc_i_tile *pt, const posenc_i_bias_src *b) {
  float near[2 * POSENC_T5_NEAR + 1];   /* T5: the head's bias of every r with |r| <= NEAR */
  posenc_i_segs sg;
  size_t h, i, k;
  sg.row = pt->row;
  sg.job.dtype = pt->dtype;
  sg.job.keep = pt->keep;
  sg.job.seg = sg.seg;
  for (h = 0; h < pt->heads; h++) {
    if (b->kind == POSENC_I_SRC_T5)
      for (k = 0; k < 2 * POSENC_T5_NEAR + 1; k++)
        near[k] = posenc_i_load(b->table + (size_t)b->t5->near[k] * b->table_rs + h * b->table_es, b->table_dtype);
    for (i = 0; i < pt->rows; i++) {
      int64_t q = pt->q0 + (int64_t)i;
      size_t lo, hi;
      posenc_i_tile_visible(pt, q, &lo, &hi);
      sg.job.row = pt->base + h * pt->hs + i * pt->rs;
      sg.job.begin = 0;
      sg.job.nseg = 0;
      posenc_i_segs_add(&sg, lo, POSENC_I_SEG_FILL, 0.0f, 0.0f);
      posenc_i_bias_row_segs(b, &sg, h, q, pt->k0, lo, hi, near);
      posenc_i_segs_add(&sg, pt->cols, POSENC_I_SEG_FILL, 0.0f, 0.0f);
      posenc_i_segs_flush(&sg);
    }
  }
}

POSENC_API posenc_status posenc_mask_apply(const posenc_score_tile *tile, const posenc_score_mask *mask) {
  posenc_i_tile pt;
  posenc_i_bias_src b;
  posenc_status st = posenc_i_tile_check(tile, mask, &pt);
  if (st != POSENC_OK) return st;
  if (!mask) return POSENC_OK;
  memset(&b, 0, sizeof b);
  b.kind = POSENC_I_SRC_MASK;
  posenc_i_tile_run(&pt, &b);
  return POSENC_OK;
}

/* ---- ALiBi --------------------------------------------------------------------------------- */
POSENC_API posenc_status posenc_alibi_slopes(size_t heads, double max_bias, float *slopes) {
  size_t c = 1, h;
  if (!slopes) return POSENC_ERR_NULL;
  if (!heads) return POSENC_ERR_SIZE;
  if (!(max_bias > 0.0 && max_bias <= 100.0)) return POSENC_ERR_PARAM;
  while (c <= heads / 2) c *= 2;
  for (h = 0; h < heads; h++) {
    /* e = -B*k/c (k = h+1), or -B*(2(h-c)+1)/(2c): the division by a power of two is exact */
    double e = h < c ? -(max_bias * (double)(h + 1)) / (double)c : -(max_bias * (double)(2 * (h - c) + 1)) / (double)(2 * c);
    slopes[h] = posenc_i_dd_to_f32(posenc_i_dd_exp(posenc_i_dd_mul_d(posenc_i_LN2, e)));
  }
  return POSENC_OK;
}

static int64_t posenc_i_abs64(int64_t v) { return v < 0 ? -v : v; }

/* The largest |k - q| over the tile: at one of its two off-diagonal corners. */
static int64_t posenc_i_tile_reach(const posenc_i_tile *pt) {
  int64_t a = posenc_i_abs64(pt->k0 + (int64_t)pt->cols - 1 - pt->q0);
  int64_t b = posenc_i_abs64(pt->k0 - (pt->q0 + (int64_t)pt->rows - 1));
  return a > b ? a : b;
}

POSENC_API posenc_status posenc_alibi_add(const posenc_score_tile *tile, const posenc_score_mask *mask,
                                          posenc_alibi_form form, int32_t key_origin, const float *slopes) {
  posenc_i_tile pt;
  posenc_i_bias_src b;
  int64_t dmax;
  size_t h;
  posenc_status st = posenc_i_tile_check(tile, mask, &pt);
  if (st != POSENC_OK) return st;
  if (!slopes) return POSENC_ERR_NULL;
  if ((unsigned)form > (unsigned)POSENC_ALIBI_KEY) return POSENC_ERR_PARAM;
  for (h = 0; h < pt.heads; h++) {
    uint32_t u = posenc_i_fbits(slopes[h]);
    if ((u & 0x7f800000u) == 0x7f800000u) return POSENC_ERR_PARAM;
  }
  if (posenc_i_ranges_meet(pt.base, pt.extent, (const unsigned char *)slopes, pt.heads * sizeof(float)))
    return POSENC_ERR_ALIAS;
  if (form == POSENC_ALIBI_KEY) { /* the largest |D| over the tile */
    int64_t k_last = pt.k0 + (int64_t)pt.cols - 1;
    dmax = posenc_i_abs64(pt.k0 - key_origin);
    if (posenc_i_abs64(k_last - key_origin) > dmax) dmax = posenc_i_abs64(k_last - key_origin);
  } else {
    dmax = posenc_i_tile_reach(&pt);
  }
  if (dmax > ((int64_t)1 << 24)) return POSENC_ERR_POSITION;
  memset(&b, 0, sizeof b);
  b.kind = POSENC_I_SRC_ALIBI;
  b.form = form;
  b.key_origin = key_origin;
  b.slopes = slopes;
  posenc_i_tile_run(&pt, &b);
  return POSENC_OK;
}

/* ---- exact comparisons of logarithms of integers ------------------------------------------- */
/* ln(a/b) = ln a - ln b, in double-double (a and b exact in double) */
static posenc_i_dd posenc_i_ln_frac(double a, double b) {
  return posenc_i_dd_add(posenc_i_dd_log(a), posenc_i_dd_mul_d(posenc_i_dd_log(b), -1.0));
}
static uint64_t posenc_i_gcd(uint64_t a, uint64_t b) {
  while (b) { uint64_t t = a % b; a = b; b = t; }
  return a;
}
/* t^e == x for some integer t (x >= 1): *t gets it. */
static int posenc_i_int_root(uint64_t x, uint64_t e, uint64_t *t) {
  double guess;
  uint64_t c;
  if (x == 1 || e == 1) { *t = x; return 1; }
  guess = posenc_i_dd_exp(posenc_i_dd_div_d(posenc_i_dd_log((double)x), (double)e)).hi;
  for (c = guess > 2.0 ? (uint64_t)guess - 1 : 1; (double)c <= guess + 1.0; c++) {
    uint64_t p = 1, k;
    for (k = 0; k < e && p <= x; k++) p = c < 2 ? p : (p > x / c ? x + 1 : p * c);
    if (c >= 2 && p == x) { *t = c; return 1; }
  }
  return 0;
}
/* t^e == x, without overflow */
static int posenc_i_pow_is(uint64_t t, uint64_t e, uint64_t x) {
  uint64_t p = 1, k;
  for (k = 0; k < e; k++) {
    if (t != 0 && p > x / t) return 0;
    p *= t;
  }
  return p == x;
}
/* (a/b)^p == (c/d)^q exactly (positive integers below 2^32, p, q >= 1). Reduced fractions have
 * reduced powers, so a^p = c^q and b^p = d^q; with g = gcd(p, q) and coprime p' = p/g,
 * q' = q/g, x^p' = y^q' holds iff x = t^q' and y = t^p' for an integer t. */
static int posenc_i_ratpow_eq(uint64_t a, uint64_t b, uint64_t p, uint64_t c, uint64_t d, uint64_t q) {
  uint64_t g1 = posenc_i_gcd(a, b), g2 = posenc_i_gcd(c, d), g = posenc_i_gcd(p, q), t;
  a /= g1; b /= g1; c /= g2; d /= g2; p /= g; q /= g;
  if (!posenc_i_int_root(a, q, &t) || !posenc_i_pow_is(t, p, c)) return 0;
  if (!posenc_i_int_root(b, q, &t) || !posenc_i_pow_is(t, p, d)) return 0;
  return 1;
}
/* The sign of p ln(a/b) - q ln(c/d): -1, 0 or 1, or 2 when it cannot be decided. Double-double
 * logarithms are within about 1e-30 relative, so |difference| > 1e-24 is decided by them; below
 * that only exact equality is known to occur (ties such as (16/8)^16 = (128/8)^4), which is tested
 * exactly. */
static int posenc_i_logcmp(uint64_t a, uint64_t b, uint64_t p, uint64_t c, uint64_t d, uint64_t q) {
  posenc_i_dd l = posenc_i_dd_mul_d(posenc_i_ln_frac((double)a, (double)b), (double)p);
  posenc_i_dd r = posenc_i_dd_mul_d(posenc_i_ln_frac((double)c, (double)d), (double)q);
  posenc_i_dd diff = posenc_i_dd_add(l, posenc_i_dd_mul_d(r, -1.0));
  if (diff.hi > 1e-24) return 1;
  if (diff.hi < -1e-24) return -1;
  return posenc_i_ratpow_eq(a, b, p, c, d, q) ? 0 : 2;
}

/* ---- T5 ------------------------------------------------------------------------------------ */
POSENC_API posenc_status posenc_t5_check(const posenc_t5_buckets *cfg) {
  uint32_t n;
  if (!cfg) return POSENC_ERR_NULL;
  if (cfg->num_buckets > POSENC_T5_MAX_BUCKETS) return POSENC_ERR_DIM;
  if (cfg->bidirectional && (cfg->num_buckets % 2 != 0 || cfg->num_buckets < 4)) return POSENC_ERR_DIM;
  if (!cfg->bidirectional && cfg->num_buckets < 2) return POSENC_ERR_DIM;
  n = cfg->bidirectional ? cfg->num_buckets / 2 : cfg->num_buckets;
  if (cfg->max_distance <= n / 2 || cfg->max_distance > (uint32_t)INT32_MAX) return POSENC_ERR_PARAM;
  return POSENC_OK;
}

/* The plan of a checked cfg, made in *pl (which the caller's error path discards): first[k] for
 * k = 0 .. n-e-1, the smallest a with bucket(a) >= e + k, i.e. with (n-e) ln(a/e) >=
 * k ln(max_distance/e); first[0] = e. Then near[] from them. One frame holds the plan, the
 * caller's: a copy here besides made posenc_t5_bucket_range 5.4 KiB deep. */
static posenc_status posenc_i_t5_plan_fill(posenc_t5_plan *pl, const posenc_t5_buckets *cfg) {
  uint32_t n, e, N, k;
  int64_t r, run;
  posenc_i_dd ln_ratio;
  memset(pl, 0, sizeof *pl);
  pl->cfg = *cfg;
  pl->cfg.bidirectional = cfg->bidirectional != 0;
  n = cfg->bidirectional ? cfg->num_buckets / 2 : cfg->num_buckets;
  e = n / 2; N = n - e;
  ln_ratio = posenc_i_ln_frac((double)cfg->max_distance, (double)e);
  pl->first[0] = (int32_t)e;
  for (k = 1; k < N; k++) {
    /* a >= e (max_distance/e)^(k/N), estimated, then settled exactly */
    double est = (double)e * posenc_i_dd_exp(posenc_i_dd_div_d(posenc_i_dd_mul_d(ln_ratio, (double)k), (double)N)).hi;
    uint64_t a = (uint64_t)posenc_i_ceil(est);
    int sg;
    if (a < (uint64_t)e) a = e;
    for (;;) { /* a too small: up */
      sg = posenc_i_logcmp(a, e, N, cfg->max_distance, e, k);
      if (sg == 2) return POSENC_ERR_PARAM;
      if (sg >= 0) break;
      a++;
    }
    while (a > e) { /* the smallest one */
      sg = posenc_i_logcmp(a - 1, e, N, cfg->max_distance, e, k);
      if (sg == 2) return POSENC_ERR_PARAM;
      if (sg < 0) break;
      a--;
    }
    pl->first[k] = (int32_t)a;
  }
  pl->n = n; pl->e = e;
  for (r = -POSENC_T5_NEAR; r <= POSENC_T5_NEAR; r++)
    pl->near[r + POSENC_T5_NEAR] = (int16_t)posenc_i_t5_bucket(pl, r, &run);
  return POSENC_OK;
}

POSENC_API posenc_status posenc_t5_plan_init(posenc_t5_plan *plan, const posenc_t5_buckets *cfg) {
  posenc_t5_plan pl; /* nothing written to *plan on error */
  posenc_status st;
  if (!plan) return POSENC_ERR_NULL;
  st = posenc_t5_check(cfg);
  if (st == POSENC_OK) st = posenc_i_t5_plan_fill(&pl, cfg);
  if (st == POSENC_OK) *plan = pl;
  return st;
}

/* near[] follows from first[]: the bucket of r for |r| <= reach (<= NEAR), in one pass over
 * a = |r| = 0 .. reach (the last first[] <= a, as posenc_i_t5_dir finds it by bisection). */
static int posenc_i_t5_near_ok(const posenc_t5_plan *pl, int64_t reach) {
  uint32_t lo = 0, d;
  int32_t a, last = reach < POSENC_T5_NEAR ? (int32_t)reach : POSENC_T5_NEAR;
  for (a = 0; a <= last; a++) {
    if (a < (int32_t)pl->e) d = (uint32_t)a;
    else {
      while (lo + 1 < pl->n - pl->e && pl->first[lo + 1] <= a) lo++;
      d = pl->e + lo;
    }
    if (pl->near[POSENC_T5_NEAR - a] != (int16_t)d) return 0;  /* r = -a (r = 0: bucket 0) */
    if (a > 0 && pl->near[POSENC_T5_NEAR + a] != (int16_t)(pl->cfg.bidirectional ? pl->n + d : 0)) return 0;
  }
  return 1;
}

/* A plan as posenc_t5_plan_init leaves it (the bias add trusts it to index the table): the
 * config, the sizes, first[] ascending from e, every near[] a bucket, and near[] as first[]
 * implies for every |r| up to reach (the tile adds no other entry; a small tile stays cheap). */
static int posenc_i_t5_plan_ok(const posenc_t5_plan *pl, int64_t reach) {
  uint32_t n, k;
  if (posenc_t5_check(&pl->cfg) != POSENC_OK || (pl->cfg.bidirectional != 0 && pl->cfg.bidirectional != 1)) return 0;
  n = pl->cfg.bidirectional ? pl->cfg.num_buckets / 2 : pl->cfg.num_buckets;
  if (pl->n != n || pl->e != n / 2 || pl->first[0] != (int32_t)pl->e) return 0;
  for (k = 1; k < n - pl->e; k++)
    if (pl->first[k] < pl->first[k - 1]) return 0;
  for (k = 0; k < 2 * POSENC_T5_NEAR + 1; k++) /* every entry indexes the table (tile_run loads them all) */
    if (pl->near[k] < 0 || (uint32_t)pl->near[k] >= pl->cfg.num_buckets) return 0;
  return posenc_i_t5_near_ok(pl, reach);
}

POSENC_API posenc_status posenc_t5_bucket_range(const posenc_t5_buckets *cfg, int32_t first, size_t count,
                                                int32_t *out) {
  posenc_t5_plan pl;
  posenc_status st;
  size_t i;
  if (!cfg || !out) return POSENC_ERR_NULL;
  st = posenc_t5_check(cfg);
  if (st != POSENC_OK) return st;
  if (!count) return POSENC_ERR_SIZE;
  if (count - 1 > (size_t)INT32_MAX || (int64_t)first + (int64_t)(count - 1) > INT32_MAX) return POSENC_ERR_POSITION;
  st = posenc_i_t5_plan_fill(&pl, cfg);
  if (st != POSENC_OK) return st;
  for (i = 0; i < count;) {
    int64_t run;
    int32_t bucket = (int32_t)posenc_i_t5_bucket(&pl, (int64_t)first + (int64_t)i, &run);
    size_t end = run >= (int64_t)(count - i) ? count : i + (size_t)run;
    for (; i < end; i++) out[i] = bucket;
  }
  return POSENC_OK;
}

POSENC_API posenc_status posenc_t5_bias_add(const posenc_score_tile *tile, const posenc_score_mask *mask,
                                            const posenc_t5_plan *plan, const posenc_table *table,
                                            size_t head0) {
  posenc_i_tile pt;
  posenc_i_bias_src b;
  size_t trs, tbytes;
  posenc_status st = posenc_i_tile_check(tile, mask, &pt);
  if (st != POSENC_OK) return st;
  if (!plan || !table || !table->data) return POSENC_ERR_NULL;
  if (!posenc_i_t5_plan_ok(plan, posenc_i_tile_reach(&pt))) return POSENC_ERR_PARAM;
  if (table->dtype != POSENC_DTYPE_F32 && table->dtype != POSENC_DTYPE_F16 && table->dtype != POSENC_DTYPE_BF16)
    return POSENC_ERR_DTYPE;
  if (table->n_rows < plan->cfg.num_buckets || head0 > table->dim || table->dim - head0 < pt.heads)
    return POSENC_ERR_TABLE;
  if ((st = posenc_i_table_extent(table, &trs, &tbytes)) != POSENC_OK) return st; /* STRIDE, OVERFLOW */
  tbytes *= posenc_dtype_size(table->dtype);
  if (posenc_i_ranges_meet(pt.base, pt.extent, (const unsigned char *)table->data, tbytes) ||
      posenc_i_ranges_meet(pt.base, pt.extent, (const unsigned char *)plan, sizeof *plan)) /* read per row */
    return POSENC_ERR_ALIAS;
  memset(&b, 0, sizeof b);
  b.kind = POSENC_I_SRC_T5;
  b.t5 = plan;
  b.table_dtype = table->dtype;
  b.table_es = posenc_dtype_size(table->dtype);
  b.table_rs = trs * b.table_es;
  b.table = (const unsigned char *)table->data + head0 * b.table_es;
  posenc_i_tile_run(&pt, &b);
  return POSENC_OK;
}

/* ---- DeBERTa ------------------------------------------------------------------------------- */
static posenc_status posenc_i_deberta_check(uint32_t bucket_size, uint32_t max_position) {
  if (bucket_size == 0) return POSENC_OK;
  if (bucket_size % 2 != 0 || bucket_size < 4 || bucket_size > 65536) return POSENC_ERR_DIM;
  if (max_position < 2 || max_position - 1 <= bucket_size / 2) return POSENC_ERR_PARAM;
  return POSENC_OK;
}

/* The bucket of a = |r| > mid: mid + ceil((mid-1) ln(a/mid) / ln((max_position-1)/mid)), the
 * ceiling being the smallest K with K ln(L/mid) >= (mid-1) ln(a/mid), L = max_position-1.
 * *ok: 1, or 0 if it does not fit int32, or -1 if it cannot be decided (not known to happen). */
static int64_t posenc_i_deberta_log(uint32_t mid, uint32_t L, uint64_t a, int *ok) {
  posenc_i_dd num = posenc_i_dd_mul_d(posenc_i_ln_frac((double)a, (double)mid), (double)(mid - 1));
  posenc_i_dd den = posenc_i_ln_frac((double)L, (double)mid);
  double est = num.hi / den.hi;
  int64_t K;
  int s;
  if (!(est < 2147483648.0)) { *ok = 0; return 0; }
  K = (int64_t)posenc_i_ceil(est);
  if (K < 1) K = 1; /* a > mid: K = 0 never satisfies it */
  for (;;) { /* up while K ln(L/mid) < (mid-1) ln(a/mid) */
    s = posenc_i_logcmp(L, mid, (uint64_t)K, a, mid, mid - 1);
    if (s == 2) { *ok = -1; return 0; }
    if (s >= 0) break;
    K++;
  }
  while (K > 1) { /* down while K-1 still satisfies it */
    s = posenc_i_logcmp(L, mid, (uint64_t)(K - 1), a, mid, mid - 1);
    if (s == 2) { *ok = -1; return 0; }
    if (s < 0) break;
    K--;
  }
  if ((int64_t)mid + K > INT32_MAX) { *ok = 0; return 0; }
  *ok = 1;
  return (int64_t)mid + K;
}

static int32_t posenc_i_deberta_bucket(uint32_t bucket_size, uint32_t max_position, int64_t r, int *ok) {
  uint32_t mid = bucket_size / 2;
  int64_t a = r < 0 ? -r : r, v;
  *ok = 1;
  if (bucket_size == 0 || a <= (int64_t)mid) return (int32_t)r;
  v = posenc_i_deberta_log(mid, max_position - 1, (uint64_t)a, ok);
  return (int32_t)(r < 0 ? -v : v);
}

POSENC_API posenc_status posenc_deberta_bucket_range(uint32_t bucket_size, uint32_t max_position, int32_t first,
                                                     size_t count, int32_t *out) {
  posenc_status st;
  size_t i;
  int ok;
  if (!out) return POSENC_ERR_NULL;
  st = posenc_i_deberta_check(bucket_size, max_position);
  if (st != POSENC_OK) return st;
  if (!count) return POSENC_ERR_SIZE;
  if (count - 1 > (size_t)INT32_MAX || (int64_t)first + (int64_t)(count - 1) > INT32_MAX) return POSENC_ERR_POSITION;
  /* every bucket is settled before the first is written (the largest |r| decides the fit) */
  {
    int64_t lo = first, hi = (int64_t)first + (int64_t)(count - 1);
    (void)posenc_i_deberta_bucket(bucket_size, max_position, -lo > hi ? lo : hi, &ok);
    if (ok == 0) return POSENC_ERR_POSITION;
    for (i = 0; i < count && ok == 1; i++)
      (void)posenc_i_deberta_bucket(bucket_size, max_position, (int64_t)first + (int64_t)i, &ok);
    if (ok != 1) return ok == 0 ? POSENC_ERR_POSITION : POSENC_ERR_PARAM;
  }
  for (i = 0; i < count; i++) out[i] = posenc_i_deberta_bucket(bucket_size, max_position, (int64_t)first + (int64_t)i, &ok);
  return POSENC_OK;
}

POSENC_API posenc_status posenc_deberta_relative(size_t q_len, size_t k_len, uint32_t bucket_size,
                                                 uint32_t max_position, int32_t *out, size_t out_count) {
  posenc_status st;
  size_t q, k;
  int ok;
  if (!out) return POSENC_ERR_NULL;
  st = posenc_i_deberta_check(bucket_size, max_position);
  if (st != POSENC_OK) return st;
  if (!q_len || !k_len) return POSENC_ERR_SIZE;
  if (q_len > SIZE_MAX / k_len) return POSENC_ERR_OVERFLOW;
  if (out_count < q_len * k_len) return POSENC_ERR_BUFFER;
  if (q_len - 1 > (size_t)INT32_MAX || k_len - 1 > (size_t)INT32_MAX) return POSENC_ERR_POSITION;
  { /* every distance |q - k| < max(q_len, k_len) is settled before the first is written */
    int64_t a, amax = (int64_t)(q_len > k_len ? q_len : k_len) - 1;
    (void)posenc_i_deberta_bucket(bucket_size, max_position, amax, &ok);
    if (ok == 0) return POSENC_ERR_POSITION;
    for (a = 0; a <= amax && ok == 1; a++) (void)posenc_i_deberta_bucket(bucket_size, max_position, a, &ok);
    if (ok != 1) return ok == 0 ? POSENC_ERR_POSITION : POSENC_ERR_PARAM;
  }
  /* bucket(-r) = -bucket(r): row 0 holds bucket(-k); the other rows reuse it */
  for (k = 0; k < k_len; k++) out[k] = posenc_i_deberta_bucket(bucket_size, max_position, -(int64_t)k, &ok);
  for (q = 1; q < q_len; q++) {
    int32_t *row = out + q * k_len;
    for (k = 0; k < k_len; k++) {
      if (k >= q) row[k] = out[k - q];
      else if (q - k < k_len) row[k] = -out[q - k];
      else row[k] = posenc_i_deberta_bucket(bucket_size, max_position, (int64_t)(q - k), &ok);
    }
  }
  return POSENC_OK;
}

/* ---- Transformer-XL ------------------------------------------------------------------------ */
POSENC_API posenc_status posenc_txl_relative(const posenc_sinusoidal_params *params, size_t klen,
                                             int32_t clamp_len, void *out, size_t out_bytes) {
  posenc_sinusoidal_params prm;
  size_t need, rowb, m, k;
  unsigned char *o = (unsigned char *)out;
  posenc_status st;
  if (!params || !out) return POSENC_ERR_NULL;
  if (params->layout != POSENC_LAYOUT_SPLIT) return POSENC_ERR_LAYOUT;
  if (clamp_len < 0) return POSENC_ERR_PARAM;
  prm = *params;
  prm.row_stride = 0; /* dense rows */
  st = posenc_sinusoidal_bytes(&prm, klen, &need);
  if (st != POSENC_OK) return st;
  if (need > out_bytes) return POSENC_ERR_BUFFER;
  if (klen - 1 > (size_t)INT32_MAX) return POSENC_ERR_POSITION;
  /* positions 0 .. m-1 ascending into the last m rows, then reversed in place; with a clamp, the
   * first klen - m rows are copies of position clamp_len (= m - 1) */
  m = clamp_len > 0 && (size_t)clamp_len + 1 < klen ? (size_t)clamp_len + 1 : klen;
  rowb = need / klen;
  st = posenc_sinusoidal_table(&prm, 0, m, o + (klen - m) * rowb, m * rowb);
  if (st != POSENC_OK) return st;
  for (k = 0; k < m / 2; k++) {
    unsigned char *a = o + (klen - m + k) * rowb, *b = o + (klen - 1 - k) * rowb, tmp[256];
    size_t off;
    for (off = 0; off < rowb; off += sizeof tmp) {
      size_t n = rowb - off < sizeof tmp ? rowb - off : sizeof tmp;
      memcpy(tmp, a + off, n); memcpy(a + off, b + off, n); memcpy(b + off, tmp, n);
    }
  }
  for (k = 0; k < klen - m; k++) memcpy(o + k * rowb, o + (klen - m) * rowb, rowb);
  return POSENC_OK;
}

/* ---- attention scales ---------------------------------------------------------------------- */
static double posenc_i_nan(void) { return posenc_i_bitsd(0x7ff8000000000000ull); }

/* ln(a)/ln(b) as a double-double (a, b > 1) */
static posenc_i_dd posenc_i_log_ratio(double a, double b) {
  return posenc_i_dd_div(posenc_i_dd_log(a), posenc_i_dd_log(b));
}

POSENC_API double posenc_logn_scale(uint32_t pos, uint32_t train_len) {
  if (train_len < 2) return posenc_i_nan();
  if ((uint64_t)pos + 1 <= train_len) return 1.0;
  return posenc_i_log_ratio((double)pos + 1.0, (double)train_len).hi;
}

POSENC_API posenc_status posenc_logn_scales(uint32_t train_len, int32_t first, size_t count, float *out) {
  size_t i;
  if (!out) return POSENC_ERR_NULL;
  if (!count) return POSENC_ERR_SIZE;
  if (train_len < 2) return POSENC_ERR_PARAM;
  if (first < 0 || count - 1 > (size_t)INT32_MAX || (int64_t)first + (int64_t)(count - 1) > INT32_MAX)
    return POSENC_ERR_POSITION;
  for (i = 0; i < count; i++) {
    double p1 = (double)first + (double)i + 1.0;
    out[i] = p1 <= (double)train_len ? 1.0f : posenc_i_dd_to_f32(posenc_i_log_ratio(p1, (double)train_len));
  }
  return POSENC_OK;
}

/* A scale that overflowed (mscale 1e308) is as unusable as one from invalid input: NaN too. */
static double posenc_i_finite_or_nan(double x) { return posenc_i_finite(x) ? x : posenc_i_nan(); }

POSENC_API double posenc_yarn_mscale(double factor, double mscale) {
  if (!posenc_i_finite(factor) || factor <= 0.0 || !posenc_i_finite(mscale)) return posenc_i_nan();
  return posenc_i_finite_or_nan(posenc_i_yarn_mscale(factor, mscale));
}

POSENC_API double posenc_deepseek_softmax_scale(size_t head_dim, double factor, double mscale_all_dim) {
  double m = posenc_yarn_mscale(factor, mscale_all_dim);
  if (head_dim == 0 || m != m) return posenc_i_nan();
  return posenc_i_finite_or_nan(m * m / posenc_i_sqrt((double)head_dim));
}

POSENC_API double posenc_llama4_attn_scale(uint32_t pos, uint32_t floor_scale, double attn_scale) {
  if (floor_scale == 0 || !posenc_i_finite(attn_scale)) return posenc_i_nan();
  return posenc_i_finite_or_nan(posenc_i_logd((double)(((uint64_t)pos + 1) / floor_scale) + 1.0) * attn_scale + 1.0);
}

/* =============================================================================================
 * Implementation, 5: self-test
 * =========================================================================================== */

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

/* The arithmetic every kernel relies on, on operands the compiler cannot see (volatile), each
 * probe independent of the others' failures: the POSENC_SELFTEST_* bits of what fails. */
static unsigned posenc_i_selftest_arith(void) {
  /* 1 + 0.75 ulp and -1 - 0.75 ulp both round away from 1 only under round-to-nearest */
  volatile double one = 1.0, q = 1.6653345369377348e-16, e = 9.313225746154785e-10 /* 2^-30 */, x = 0.3,
                  dmin = 2.2250738585072014e-308 /* 2^-1022 */, half = 0.5;
  volatile float fmin = posenc_i_bitsf(0x00800000u) /* 2^-126 */, fhalf = 0.5f,
                 ftiny = posenc_i_bitsf(1u) /* 2^-149 */, f2p24 = 16777216.0f;
  volatile double kept, r1, r2;
  volatile float f;
  double a, b;
  unsigned bad = 0;
  a = one + q; b = -one - q;
  if (!(a > 1.0 && b < -1.0)) bad |= POSENC_SELFTEST_ROUNDING;
  /* (1 + 2^-30)(1 - 2^-30) - 1 in one expression, and with the product stored first: fused,
   * the first is -2^-60 exactly; otherwise both round the product the same way */
  a = one + e; b = one - e;
  r1 = a * b - one;
  a = one + e; b = one - e;  /* read again: the product must not be shared with r1's */
  kept = a * b;
  r2 = kept - one;
  if (posenc_i_dbits(r1) != posenc_i_dbits(r2)) bad |= POSENC_SELFTEST_CONTRACT;
  /* the magic-number rounding of every kernel, in one expression (which reassociation folds to
   * 0.3) and with the sum stored first */
  a = x;
  r1 = (a + POSENC_I_MAGIC) - POSENC_I_MAGIC;
  kept = a + POSENC_I_MAGIC;
  r2 = kept - POSENC_I_MAGIC;
  if (posenc_i_dbits(r1) != posenc_i_dbits(r2)) bad |= POSENC_SELFTEST_REASSOC;
  /* a subnormal result of normal operands (2^-127, 2^-1023), and a normal result of a subnormal
   * operand (2^-149 * 2^24 = 2^-125); judged by their bits, since DAZ would read a subnormal
   * compared with 0 as 0 */
  f = fmin * fhalf;
  r1 = dmin * half;
  if (posenc_i_fbits(f) == 0 || posenc_i_dbits(r1) == 0) bad |= POSENC_SELFTEST_FTZ;
  f = ftiny * f2p24;
  if (posenc_i_fbits(f) == 0) bad |= POSENC_SELFTEST_DAZ;
  return bad;
}

static uint32_t posenc_i_st_hash(const uint32_t *bits, size_t n) {
  uint32_t h = 0;
  size_t j;
  for (j = 0; j < n; j++) h = h * 31u + bits[j];
  return h;
}

/* Rotation: one head of d = 32 (the first 24 dims rotated) at positions 5 and 16777215, NeoX and
 * GPT-J, on the fly. Inputs k/8 - 1.5, or with `tiny` subnormals of both signs, whose rotations
 * are subnormal too. A fused x0*c - x1*s changes the first; a flush-to-zero (FTZ) or
 * denormals-are-zero (DAZ) mode changes the second. The result: the bits of elements 0, 1, 13 and
 * 23 (picked[style][token]), and the checksum of all of them in order (a change of one element
 * always changes it: 31 is invertible mod 2^32). Returns 0 on success. Out of line, as
 * posenc_i_selftest_f16, so that their ropes (1 KiB each) are not on the stack at once. */
POSENC_I_NOINLINE int posenc_i_selftest_rotation(const posenc_i_backend *be, int tiny, uint32_t picked[2][2][4],
                                                 uint32_t *hash) {
  static const int32_t ids[2] = {5, 16777215}, elems[4] = {0, 1, 13, 23};
  POSENC_ROPE_STORAGE(32) st;
  posenc_rope_config cfg = posenc_rope_default(32);
  posenc_rope_positions pos;
  posenc_rope_tensor t;
  float x[2][32];
  uint32_t h = 0;
  int style, tok, e;
  cfg.rotary_dim = 24;
  pos.batch = 1; pos.tokens = 2; pos.ids = ids; pos.start = 0;
  memset(&t, 0, sizeof t);
  t.data = x; t.dtype = POSENC_DTYPE_F32; t.heads = 1;
  for (style = 0; style < 2; style++) {
    cfg.style = (posenc_rope_style)style;
    if (posenc_rope_init(&st.rope, sizeof st, &cfg) != POSENC_OK) return 1;
    for (tok = 0; tok < 2; tok++)
      for (e = 0; e < 32; e++)
        x[tok][e] = tiny ? posenc_i_bitsf((uint32_t)(e + 7 * tok) * 0x3579u + 0x40000u + ((uint32_t)(e & 1) << 31))
                         : (float)(e + 7 * tok) / 8.0f - 1.5f;
    if (posenc_i_rope_apply(be, &st.rope, NULL, &pos, &t, NULL, POSENC_ROPE_FORWARD) != POSENC_OK) return 1;
    for (tok = 0; tok < 2; tok++) {
      for (e = 0; e < 32; e++) h = h * 31u + posenc_i_fbits(x[tok][e]); /* posenc_i_st_hash of them all */
      for (e = 0; e < 4; e++) picked[style][tok][e] = posenc_i_fbits(x[tok][elems[e]]);
    }
  }
  *hash = h;
  return 0;
}
/* Expected bits of elements 0, 1, 13 and 23 of the normal inputs, and the checksum of the tiny ones */
static const uint32_t posenc_i_st_rot[2][2][4] = {
  {{0xbed9da42u, 0x3f5885b2u, 0xbf8baf05u, 0x3faffb8fu}, {0x3f839bb1u, 0xbf858669u, 0xbecdf435u, 0x3edc9f1fu}},
  {{0xbfdf3bdcu, 0x3f86305du, 0x3dffae19u, 0x3fb02c18u}, {0xbe8d1f83u, 0x3f405df4u, 0xbf4374bdu, 0x3fe574e6u}}};
#define POSENC_I_ST_ROT_TINY 0x9260771eu

/* f16 conversions of subnormal halves (magnitude below 2^-14): a d = 32 table in f16 at positions
 * 355 and 710, whose column 0 (sin 355 = -3.0e-5, sin 710 = -6.0e-5) rounds to subnormal halves,
 * and a NeoX rotation of f16 data made of subnormal halves. x86's F16C converts both ways without
 * regard to FTZ and DAZ (Intel SDM: "MXCSR.FTZ is ignored" for VCVTPS2PH, "MXCSR.DAZ is ignored"
 * for VCVTPH2PS) and the scalar conversions are integer code, so the active backend must agree
 * with the scalar one; an emulator can differ (qemu 7.2 flushes them). Returns 1 if they differ. */
POSENC_I_NOINLINE int posenc_i_selftest_f16(const posenc_i_backend *be) {
  static const int32_t ids[2] = {355, 710};
  const posenc_i_backend *pair[2];
  posenc_sinusoidal_params prm = posenc_sinusoidal_default(32);
  POSENC_ROPE_STORAGE(32) st;
  posenc_rope_config cfg = posenc_rope_default(32);
  posenc_rope_positions pos;
  posenc_rope_tensor t;
  uint16_t table[2][2 * 32], x[2][2 * 32];
  int which, e;
  prm.dtype = POSENC_DTYPE_F16;
  pos.batch = 1; pos.tokens = 2; pos.ids = ids; pos.start = 0;
  memset(&t, 0, sizeof t);
  t.dtype = POSENC_DTYPE_F16; t.heads = 1;
  if (posenc_rope_init(&st.rope, sizeof st, &cfg) != POSENC_OK) return 1;
  pair[0] = be; pair[1] = &posenc_i_backend_scalar;
  for (which = 0; which < 2; which++) {
    for (e = 0; e < 2 * 32; e++) x[which][e] = (uint16_t)(((unsigned)e * 0x0123u + 0x0011u) % 0x03ffu + 1u + (e % 3 == 1 ? 0x8000u : 0u));
    t.data = x[which];
    if (posenc_i_sinusoidal_run(pair[which], &prm, 0, ids, 2, table[which], sizeof table[which]) != POSENC_OK ||
        posenc_i_rope_apply(pair[which], &st.rope, NULL, &pos, &t, NULL, POSENC_ROPE_FORWARD) != POSENC_OK)
      return 1;
  }
  return memcmp(table[0], table[1], sizeof table[0]) != 0 || memcmp(x[0], x[1], sizeof x[0]) != 0;
}

/* The masked add on one row of 37 subnormal x and P (a vector body and a tail on every backend):
 * y = x*0.75 + P is subnormal, so FTZ or DAZ changes it. Returns the checksum of y's bits. */
#define POSENC_I_ST_ADD_TINY 0x8509c1e4u
static uint32_t posenc_i_selftest_add(const posenc_i_backend *be) {
  float x[37], p[37], y[37];
  uint32_t bits[37];
  posenc_i_add_job job;
  int j;
  for (j = 0; j < 37; j++) {
    x[j] = posenc_i_bitsf((uint32_t)j * 0x0002f1a3u + 0x00012345u + ((uint32_t)(j % 3 == 1) << 31));
    p[j] = posenc_i_bitsf((uint32_t)(j + 1) * 0x00000ab1u + ((uint32_t)(j % 5 == 2) << 31));
  }
  memset(&job, 0, sizeof job);
  job.x = (const unsigned char *)x; job.x_dtype = POSENC_DTYPE_F32; job.x_stride = (ptrdiff_t)sizeof x;
  job.p = (const unsigned char *)p; job.p_dtype = POSENC_DTYPE_F32; job.p_stride = (ptrdiff_t)sizeof p;
  job.y = (unsigned char *)y; job.y_dtype = POSENC_DTYPE_F32; job.y_stride = (ptrdiff_t)sizeof y;
  job.nrows = 1; job.n = 37; job.scale = 0.75f; job.keep_scale = 1.0f;
  be->add_fwd(&job);
  for (j = 0; j < 37; j++) bits[j] = posenc_i_fbits(y[j]);
  return posenc_i_st_hash(bits, 37);
}

/* The bias row kernel on one row with every kind of segment, short ones (single columns) and
 * long ones (vectors, and the alignment steps before them), masked keys in each; the bits are
 * folded into one checksum. */
#define POSENC_I_ST_BIAS 0x3e94f1c2u
static uint32_t posenc_i_selftest_bias(const posenc_i_backend *be) {
  static const int cuts[7] = {5, 9, 12, 16, 96, 120, 130};
  static const int kinds[7] = {POSENC_I_SEG_LINEAR, POSENC_I_SEG_CONST, POSENC_I_SEG_FILL, POSENC_I_SEG_MASK,
                               POSENC_I_SEG_LINEAR, POSENC_I_SEG_VALUES, POSENC_I_SEG_CONST};
  uint8_t keep[130];
  float row[130], vals[24];
  posenc_i_bias_seg seg[7];
  posenc_i_bias_job job;
  uint32_t h = 0;
  int j;
  for (j = 0; j < 130; j++) {
    row[j] = posenc_i_bitsf(0x3f800000u + (uint32_t)j * 0x01234567u);
    keep[j] = (uint8_t)(j % 10 != 3);
  }
  for (j = 0; j < 24; j++) vals[j] = posenc_i_bitsf(0xbe000000u + (uint32_t)j * 0x00345679u);
  for (j = 0; j < 7; j++) {
    seg[j].end = (size_t)cuts[j]; seg[j].kind = kinds[j]; seg[j].v = NULL;
    seg[j].a = posenc_i_bitsf(j % 2 ? 0x3e99999au : 0x3f3504f3u); seg[j].c = (float)(j * 7 - 40);
  }
  seg[4].a = -seg[4].a;
  seg[5].v = vals;
  job.row = (unsigned char *)row; job.dtype = POSENC_DTYPE_F32; job.keep = keep;
  job.begin = 0; job.seg = seg; job.nseg = 7;
  be->bias_row(&job);
  for (j = 0; j < 130; j++) h = h * 31u + posenc_i_fbits(row[j]);
  return h;
}

/* The table: 8 rows of d = 32 at the self-test's positions, the active backend against the scalar
 * one, and the scalar one's columns 0, 1, 30 and 31 against their known bits. Out of line, as the
 * rotations below, so that the two checks' buffers are never on the stack together. */
POSENC_I_NOINLINE unsigned posenc_i_selftest_table(const posenc_i_backend *be) {
  static const int cols[4] = {0, 1, 30, 31};
  float got[8 * 32], ref[8 * 32];
  posenc_sinusoidal_params prm = posenc_sinusoidal_default(32);
  int r, c;
  if (posenc_i_sinusoidal_run(be, &prm, 0, posenc_i_st_pos, 8, got, sizeof got) != POSENC_OK ||
      posenc_i_sinusoidal_run(&posenc_i_backend_scalar, &prm, 0, posenc_i_st_pos, 8, ref, sizeof ref) != POSENC_OK)
    return POSENC_SELFTEST_VALUES;
  for (r = 0; r < 8; r++)
    for (c = 0; c < 4; c++)
      if (posenc_i_fbits(ref[r * 32 + cols[c]]) != posenc_i_st_bits[r][c]) return POSENC_SELFTEST_VALUES;
  /* every column of the active backend against the scalar reference */
  return memcmp(got, ref, sizeof got) != 0 ? (unsigned)POSENC_SELFTEST_VALUES : 0u;
}

/* The rotations of normal inputs (tiny 0), then of subnormal ones: the active backend against the
 * scalar one, and the scalar one against its known bits. */
POSENC_I_NOINLINE unsigned posenc_i_selftest_rotations(const posenc_i_backend *be) {
  unsigned bad = 0;
  int tiny;
  for (tiny = 0; tiny < 2; tiny++) {
    uint32_t got[2][2][4], ref[2][2][4], got_hash, ref_hash;
    const unsigned fail = tiny ? POSENC_SELFTEST_SUBNORMALS : POSENC_SELFTEST_VALUES;
    if (posenc_i_selftest_rotation(be, tiny, got, &got_hash) ||
        posenc_i_selftest_rotation(&posenc_i_backend_scalar, tiny, ref, &ref_hash)) {
      bad |= POSENC_SELFTEST_VALUES;
      continue;
    }
    if (got_hash != ref_hash) bad |= fail;
    if (tiny ? ref_hash != POSENC_I_ST_ROT_TINY : memcmp(ref, posenc_i_st_rot, sizeof ref) != 0) bad |= fail;
  }
  return bad;
}

POSENC_API posenc_status posenc_selftest_report(posenc_selftest_result *result) {
  const posenc_i_backend *be;
  int r;
  unsigned bad;
  double chain[10];
  if (!result) return POSENC_ERR_NULL;
  be = posenc_i_select();
  bad = posenc_i_selftest_arith();
  posenc_i_selftest_chain(chain);
  for (r = 0; r < 10; r++)
    if (posenc_i_dbits(chain[r]) != posenc_i_st_chain[r]) bad |= POSENC_SELFTEST_VALUES;
  bad |= posenc_i_selftest_table(be);
  bad |= posenc_i_selftest_rotations(be);
  /* subnormals: an FTZ/DAZ mode set by the process (or by -ffast-math's start-up code) */
  if (posenc_i_selftest_add(be) != POSENC_I_ST_ADD_TINY ||
      posenc_i_selftest_add(&posenc_i_backend_scalar) != POSENC_I_ST_ADD_TINY)
    bad |= POSENC_SELFTEST_SUBNORMALS;
  if (posenc_i_selftest_bias(be) != POSENC_I_ST_BIAS || posenc_i_selftest_bias(&posenc_i_backend_scalar) != POSENC_I_ST_BIAS)
    bad |= POSENC_SELFTEST_SUBNORMALS;
  if (posenc_i_selftest_f16(be)) bad |= POSENC_SELFTEST_F16;
  result->failed = bad;
  result->isa = be->isa;
  result->normal_exact = !(bad & (POSENC_SELFTEST_ROUNDING | POSENC_SELFTEST_CONTRACT | POSENC_SELFTEST_REASSOC |
                                  POSENC_SELFTEST_VALUES));
  if (!bad)
    result->status = POSENC_OK;
  else if (result->normal_exact && (bad & (POSENC_SELFTEST_FTZ | POSENC_SELFTEST_DAZ)))
    result->status = POSENC_ERR_SUBNORMAL;
  else
    result->status = POSENC_ERR_SELFTEST;
  return result->status;
}

POSENC_API posenc_status posenc_selftest(void) {
  posenc_selftest_result r;
  return posenc_selftest_report(&r);
}

POSENC_API const char *posenc_selftest_check_name(unsigned check) {
  static const char *const names[POSENC_SELFTEST_CHECKS] = {"rounding", "contract", "reassoc", "values",
                                                             "subnormals", "ftz", "daz", "f16"};
  int i;
  for (i = 0; i < POSENC_SELFTEST_CHECKS; i++)
    if (check == 1u << i) return names[i];
  return "unknown";
}

#ifdef __cplusplus
}
#endif

POSENC_I_PRECISE_END

#endif /* POSENC_IMPLEMENTATION */

#if defined(POSENC_I_NEAR_SAVED)
#  undef POSENC_I_NEAR_SAVED
#  pragma pop_macro("near")
#endif
