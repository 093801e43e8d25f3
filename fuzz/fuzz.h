/* fuzz.h - what posenc's fuzz targets share: a byte consumer that turns the fuzzer's input into
 * parameters (valid ones mostly, absurd ones sometimes, zeros once the input runs out), exact-size
 * buffers (so ASan sees a 1-byte overrun), and the differential check: a call runs on the scalar
 * backend, then on every other compiled and supported one from identical inputs, and must give the
 * same status and the same output bytes. Any difference, or a broken contract, aborts (a crash for
 * libFuzzer, a failed test for fuzz/replay.c). */
#ifndef POSENC_FUZZ_H
#define POSENC_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "posenc.h"
#include "testlib.h" /* tl_splitmix64 */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Bounds that keep one execution around a millisecond: buffers of at most 256 KiB (64 Ki f32). */
#define FZ_MAX_BYTES ((size_t)256 * 1024)
#define FZ_MAX_SPANS 6

/* ---- the byte consumer ----------------------------------------------------------------------- */
typedef struct fz_in {
  const uint8_t *p;
  size_t n;
} fz_in;

static inline uint8_t fz_u8(fz_in *in) {
  if (in->n == 0) return 0;
  in->n--;
  return *in->p++;
}

static inline uint32_t fz_u32(fz_in *in) {
  uint32_t v = fz_u8(in);
  v |= (uint32_t)fz_u8(in) << 8;
  v |= (uint32_t)fz_u8(in) << 16;
  return v | (uint32_t)fz_u8(in) << 24;
}

static inline uint64_t fz_u64(fz_in *in) {
  uint64_t lo = fz_u32(in);
  return lo | (uint64_t)fz_u32(in) << 32;
}

/* [0, n): one byte for small ranges, so that mutations stay local. */
static inline size_t fz_below(fz_in *in, size_t n) {
  if (n <= 1) return 0;
  if (n <= 256) return fz_u8(in) % n;
  return fz_u32(in) % n;
}

static inline int fz_bool(fz_in *in) { return fz_u8(in) & 1; }

/* A size in [0, max] mostly; rarely one that overflows every product it enters. */
static inline size_t fz_size(fz_in *in, size_t max) {
  static const size_t absurd[8] = {SIZE_MAX,   SIZE_MAX / 2 + 1, SIZE_MAX / 3,    (size_t)UINT32_MAX + 1,
                                   UINT32_MAX, INT32_MAX,        (size_t)1 << 24, 65537};
  uint8_t k = fz_u8(in);
  return k >= 248 ? absurd[k - 248] : fz_below(in, max + 1);
}

/* An int32 in [lo, hi] mostly; rarely one at the edges of int32. */
static inline int32_t fz_i32(fz_in *in, int32_t lo, int32_t hi) {
  static const int32_t edge[8] = {INT32_MAX, INT32_MIN, INT32_MAX - 1, INT32_MAX - 31,
                                  -1,        -2,        1 << 24,       -(1 << 24) - 1};
  uint8_t k = fz_u8(in);
  if (k >= 248) return edge[k - 248];
  return (int32_t)((int64_t)lo + (int64_t)fz_below(in, (size_t)((int64_t)hi - lo + 1)));
}

static inline double fz_bits_double(uint64_t bits) {
  double d;
  memcpy(&d, &bits, sizeof d);
  return d;
}

static inline float fz_bits_float(uint32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* A double parameter: typical mostly (zero input gives typical), scaled, or a value that every
 * validation must refuse or survive (NaN, infinities, zero, negative, huge, tiny, raw bits). */
static inline double fz_double(fz_in *in, double typical) {
  uint8_t k = fz_u8(in);
  switch (k % 32) {
    case 1: return typical * (1.0 + (double)fz_u8(in) / 16.0);
    case 2: return typical / (1.0 + (double)fz_u8(in) / 8.0);
    case 3: return (double)fz_u32(in) / 65536.0;
    case 4: return fz_bits_double(0x7ff8000000000000u);
    case 5: return fz_bits_double(0x7ff0000000000000u);
    case 6: return -typical;
    case 7: return 0.0;
    case 8: return 1e300;
    case 9: return 1e-300;
    case 10: return fz_bits_double(fz_u64(in));
    default: return typical;
  }
}

/* A float: typical mostly, or the same family of strange values as fz_double. */
static inline float fz_float(fz_in *in, float typical) {
  uint8_t k = fz_u8(in);
  switch (k % 16) {
    case 1: return typical * (1.0f + (float)fz_u8(in) / 16.0f);
    case 2: return typical / (1.0f + (float)fz_u8(in) / 8.0f);
    case 3: return fz_bits_float(0x7fc00000u);
    case 4: return fz_bits_float(0x7f800000u);
    case 5: return 0.0f;
    case 6: return -typical;
    case 7: return fz_bits_float(fz_u32(in));
    default: return typical;
  }
}

static inline posenc_dtype fz_dtype(fz_in *in) {
  uint8_t k = fz_u8(in) % 16;
  return (posenc_dtype)(k < 15 ? k % 3 : 3 + fz_u8(in)); /* rarely an unknown dtype */
}

/* An enum value in [0, count), rarely one past it or negative. */
static inline int fz_enum(fz_in *in, int count) {
  uint8_t k = fz_u8(in);
  if (k >= 250) return k == 255 ? -1 : count + (k - 250);
  return (int)(k % count);
}

/* ---- size arithmetic that saturates at SIZE_MAX instead of wrapping --------------------------- */
static inline size_t fz_mul(size_t a, size_t b) { return a && b > SIZE_MAX / a ? SIZE_MAX : a * b; }
static inline size_t fz_add(size_t a, size_t b) { return a > SIZE_MAX - b ? SIZE_MAX : a + b; }

/* Elements spanned by an [outer][mid][inner] view whose inner rows hold `row` elements. */
static inline size_t fz_extent3(size_t n0, size_t s0, size_t n1, size_t s1, size_t n2, size_t s2,
                                size_t row) {
  size_t e = row;
  if (!n0 || !n1 || !n2) return row;
  e = fz_add(e, fz_mul(n0 - 1, s0));
  e = fz_add(e, fz_mul(n1 - 1, s1));
  return fz_add(e, fz_mul(n2 - 1, s2));
}

/* ---- deterministic test data ---------------------------------------------------------------- */

/* count elements of dtype (f32/f16/bf16; other dtypes: f32-sized raw bits) from a drawn seed:
 * values in (-4, 4) with a drawn share of zeros, infinities, NaNs and raw bit patterns. */
static inline void fz_fill(fz_in *in, void *out, size_t count, posenc_dtype dtype) {
  uint64_t state = fz_u64(in);
  unsigned specials = fz_u8(in) % 4 == 3 ? fz_u8(in) % 64 : 0; /* per 256 */
  size_t i;
  for (i = 0; i < count; i++) {
    uint64_t r = tl_splitmix64(&state);
    float v = (float)((int32_t)(r >> 32)) * (float)(1.0 / 536870912.0);
    if ((r & 255) < specials) {
      static const uint32_t special[4] = {0x7f800000u, 0xff800000u, 0x7fc00000u, 0x80000000u};
      v = fz_bits_float((r >> 8 & 3) == 3 ? (uint32_t)(r >> 10) : special[r >> 8 & 3]);
    }
    if (dtype == POSENC_DTYPE_F16) {
      uint16_t h = posenc_f32_to_f16(v);
      memcpy((uint16_t *)out + i, &h, 2);
    } else if (dtype == POSENC_DTYPE_BF16) {
      uint16_t h = posenc_f32_to_bf16(v);
      memcpy((uint16_t *)out + i, &h, 2);
    } else {
      memcpy((float *)out + i, &v, 4);
    }
  }
}

/* Bytes of count elements of dtype, 4 for unknown dtypes (what a caller might have allocated). */
static inline size_t fz_elem_bytes(posenc_dtype dtype) {
  size_t s = posenc_dtype_size(dtype);
  return s ? s : 4;
}

/* ---- aborting checks ------------------------------------------------------------------------- */
#define FZ_REQUIRE(cond, ...)                                                \
  do {                                                                       \
    if (!(cond)) {                                                           \
      fprintf(stderr, "fuzz: %s:%d: contract broken: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                                          \
      fprintf(stderr, "\n");                                                 \
      abort();                                                               \
    }                                                                        \
  } while (0)

/* ---- the differential call ------------------------------------------------------------------- */
/* An output (or in-place) buffer: exactly `bytes` long, reset from init before every backend. */
typedef struct fz_span {
  const char *name;
  unsigned char *data, *init, *scalar_result;
  size_t bytes;
  posenc_dtype dtype; /* for nan_any: the element type */
  int nan_any;        /* NaNs may differ in payload and sign between backends (documented) */
} fz_span;

typedef struct fz_call {
  const char *what;
  posenc_status (*run)(void *ctx);
  void *ctx;
  int untouched_on_error; /* the API promises "on error nothing is written" */
  size_t n_spans;
  fz_span spans[FZ_MAX_SPANS];
} fz_call;

static inline fz_call fz_call_make(const char *what, posenc_status (*run)(void *ctx), void *ctx,
                                   int untouched_on_error) {
  fz_call call;
  memset(&call, 0, sizeof call);
  call.what = what;
  call.run = run;
  call.ctx = ctx;
  call.untouched_on_error = untouched_on_error;
  return call;
}

/* A buffer of exactly bytes (malloc(0) avoided: 1 byte then, reported as 0), its initial content
 * drawn (fz_fill) when fill is nonzero, else a 0xA5 pattern that shows what a writer touched. */
static inline void *fz_span_add(fz_call *call, fz_in *in, const char *name, size_t bytes, posenc_dtype dtype,
                                int fill) {
  fz_span *s;
  size_t alloc = bytes ? bytes : 1;
  FZ_REQUIRE(call->n_spans < FZ_MAX_SPANS && bytes <= 4 * FZ_MAX_BYTES, "harness: span %s", name);
  s = &call->spans[call->n_spans++];
  s->name = name;
  s->bytes = bytes;
  s->dtype = dtype;
  s->data = (unsigned char *)malloc(alloc);
  s->init = (unsigned char *)malloc(alloc);
  if (!s->data || !s->init) abort();
  memset(s->init, 0xA5, alloc);
  if (fill) fz_fill(in, s->init, bytes / fz_elem_bytes(dtype), dtype);
  memcpy(s->data, s->init, alloc);
  return s->data;
}

static inline int fz_is_nan(const unsigned char *p, posenc_dtype dtype) {
  if (dtype == POSENC_DTYPE_F32) {
    uint32_t b;
    memcpy(&b, p, 4);
    return (b & 0x7fffffffu) > 0x7f800000u;
  } else {
    uint16_t h;
    memcpy(&h, p, 2);
    return dtype == POSENC_DTYPE_F16 ? (h & 0x7fffu) > 0x7c00u : (h & 0x7fffu) > 0x7f80u;
  }
}

/* The first byte offset where a and b differ (element-wise with NaN == NaN when nan_any), or
 * SIZE_MAX when they agree. */
static inline size_t fz_diff(const fz_span *s, const unsigned char *a, const unsigned char *b) {
  size_t i, e;
  if (!s->nan_any || posenc_dtype_size(s->dtype) == 0) {
    for (i = 0; i < s->bytes; i++)
      if (a[i] != b[i]) return i;
    return SIZE_MAX;
  }
  e = posenc_dtype_size(s->dtype);
  for (i = 0; i + e <= s->bytes; i += e)
    if (memcmp(a + i, b + i, e) != 0 && !(fz_is_nan(a + i, s->dtype) && fz_is_nan(b + i, s->dtype))) return i;
  return memcmp(a + i, b + i, s->bytes - i) ? i : SIZE_MAX;
}

/* The backends to compare: scalar first, then every other one this build and CPU can run. */
static inline size_t fz_backends(posenc_isa *isas) {
  size_t n = 0;
  int i;
  for (i = 0; i < POSENC_ISA_COUNT; i++)
    if (posenc_isa_compiled((posenc_isa)i) && posenc_isa_supported((posenc_isa)i)) isas[n++] = (posenc_isa)i;
  return n;
}

/* Runs the call on every backend; aborts on a status or byte difference from scalar, or on an
 * error that wrote. Returns the (common) status. */
static inline posenc_status fz_differential(fz_call *call) {
  posenc_isa isas[POSENC_ISA_COUNT];
  size_t n_isas = fz_backends(isas), ii, si;
  posenc_status ref = POSENC_OK;
  for (ii = 0; ii < n_isas; ii++) {
    posenc_status st;
    if (posenc_isa_set(isas[ii]) != POSENC_OK) abort();
    for (si = 0; si < call->n_spans; si++)
      memcpy(call->spans[si].data, call->spans[si].init, call->spans[si].bytes);
    st = call->run(call->ctx);
    if (ii == 0) ref = st;
    FZ_REQUIRE(st == ref, "%s: %s returns %d (%s), scalar %d (%s)", call->what, posenc_isa_name(isas[ii]),
               (int)st, posenc_strerror(st), (int)ref, posenc_strerror(ref));
    for (si = 0; si < call->n_spans; si++) {
      fz_span *s = &call->spans[si];
      size_t at;
      if (st != POSENC_OK && call->untouched_on_error) {
        at = fz_diff(s, s->data, s->init);
        FZ_REQUIRE(at == SIZE_MAX, "%s: %s wrote %s at byte %zu of %zu but returned %s", call->what,
                   posenc_isa_name(isas[ii]), s->name, at, s->bytes, posenc_strerror(st));
      }
      if (ii == 0) {
        s->scalar_result = (unsigned char *)malloc(s->bytes ? s->bytes : 1);
        if (!s->scalar_result) abort();
        memcpy(s->scalar_result, s->data, s->bytes);
        continue;
      }
      at = fz_diff(s, s->data, s->scalar_result);
      FZ_REQUIRE(at == SIZE_MAX, "%s: %s differs from scalar in %s at byte %zu of %zu (status %s)",
                 call->what, posenc_isa_name(isas[ii]), s->name, at, s->bytes, posenc_strerror(st));
    }
  }
  posenc_isa_set(POSENC_ISA_AUTO);
  return ref;
}

static inline void fz_call_free(fz_call *call) {
  size_t i;
  for (i = 0; i < call->n_spans; i++) {
    free(call->spans[i].data);
    free(call->spans[i].init);
    free(call->spans[i].scalar_result);
  }
  call->n_spans = 0;
}

/* Bytes to hand a writer that needs `need` bytes (st: the _bytes query's status): mostly exact,
 * sometimes one short (must be ERR_BUFFER) or a few over; 64 when the need is absurd or unknown. */
static inline size_t fz_out_bytes(fz_in *in, posenc_status st, size_t need) {
  uint8_t k = fz_u8(in) % 16;
  if (st != POSENC_OK || need > FZ_MAX_BYTES) return 64;
  if (k == 15 && need > 0) return need - 1;
  if (k == 14) return need + 3;
  return need;
}

/* ---- RoPE configurations (fuzz_tables and fuzz_rope) ----------------------------------------- */
/* The factor lists a configuration points to: exactly `pairs` floats each, owned by the caller. */
typedef struct fz_rope_lists {
  float *short_factor, *long_factor, *freq_factors;
} fz_rope_lists;

static inline float *fz_factor_list(fz_in *in, size_t pairs) {
  float *list;
  size_t i;
  if (fz_u8(in) % 8 == 7) return NULL;
  list = (float *)malloc(pairs ? pairs * sizeof *list : 1);
  if (!list) abort();
  for (i = 0; i < pairs; i++) {
    list[i] = fz_float(in, 1.0f + (float)(i % 7) * 0.5f);
  }
  return list;
}

/* A RoPE configuration over the whole space (every style, scaling, M-RoPE and hf_compat mode),
 * with invalid values sometimes; head_dim at most max_head. */
static inline posenc_rope_config fz_rope_config(fz_in *in, size_t max_head, fz_rope_lists *lists) {
  posenc_rope_config c = posenc_rope_default(2 + 2 * fz_below(in, max_head / 2));
  size_t pairs;
  uint8_t k = fz_u8(in);
  if (k % 8 == 1) c.rotary_dim = 2 * fz_below(in, c.head_dim / 2 + 1); /* partial rotary */
  if (k % 8 == 2) c.rotary_dim = fz_size(in, c.head_dim + 2);          /* odd or too big */
  if (k % 8 == 3) c.head_dim = fz_size(in, 3);                         /* 0, 1, odd */
  c.base = fz_double(in, 10000.0);
  c.style = (posenc_rope_style)fz_enum(in, 2);
  c.scaling = (posenc_rope_scaling)fz_enum(in, 7);
  c.factor = fz_double(in, 4.0);
  c.original_max_pos = fz_u8(in) % 8 == 7 ? fz_u32(in) : (uint32_t)fz_below(in, 4096);
  c.seq_len = fz_u8(in) % 4 == 3 ? fz_u32(in) : (uint32_t)fz_below(in, 8192);
  c.dynamic_qwen_alpha = fz_bool(in);
  c.beta_fast = fz_u8(in) % 4 == 3 ? fz_double(in, 32.0) : 0.0;
  c.beta_slow = fz_u8(in) % 4 == 3 ? fz_double(in, 1.0) : 0.0;
  c.yarn_no_truncate = fz_bool(in);
  if (fz_u8(in) % 4 == 3) {
    c.mscale = fz_double(in, 0.707);
    c.mscale_all_dim = fz_double(in, 0.707);
  }
  c.low_freq_factor = fz_u8(in) % 4 == 3 ? fz_double(in, 1.0) : 0.0;
  c.high_freq_factor = fz_u8(in) % 4 == 3 ? fz_double(in, 4.0) : 0.0;
  c.attention_factor = fz_u8(in) % 4 == 3 ? fz_double(in, 1.0) : 0.0;
  c.mrope = (posenc_rope_mrope)(fz_u8(in) % 8 == 7 ? fz_enum(in, 3) : 0);
  pairs = (c.rotary_dim ? c.rotary_dim : c.head_dim) / 2;
  if (pairs > POSENC_ROPE_MAX_DIM / 2) pairs = POSENC_ROPE_MAX_DIM / 2; /* init refuses such dims */
  if (c.mrope) {
    uint32_t t = (uint32_t)fz_below(in, pairs + 1), h = (uint32_t)fz_below(in, pairs - t + 1);
    c.mrope_section[0] = t;
    c.mrope_section[1] = h;
    c.mrope_section[2] = (uint32_t)(pairs - t - h) + (fz_u8(in) % 16 == 15); /* rarely not summing */
  }
  c.hf_compat = fz_u8(in) % 4 == 3;
  lists->short_factor = lists->long_factor = lists->freq_factors = NULL;
  if (c.scaling == POSENC_ROPE_SCALING_LONGROPE) {
    c.short_factor = lists->short_factor = fz_factor_list(in, pairs);
    c.long_factor = lists->long_factor = fz_factor_list(in, pairs);
  }
  if (fz_u8(in) % 8 == 7) c.freq_factors = lists->freq_factors = fz_factor_list(in, pairs);
  return c;
}

/* An initialised rope must hold finite frequencies, else every rotation is silent garbage. */
static inline void fz_require_finite_rope(const posenc_rope *rope, const char *after) {
  size_t i;
  int finite = rope->attention_factor - rope->attention_factor == 0.0;
  for (i = 0; i < rope->pairs && i < POSENC_ROPE_MAX_DIM / 2; i++)
    finite &= rope->inv_freq[i] - rope->inv_freq[i] == 0.0 &&
              rope->u_parts[4 * i] - rope->u_parts[4 * i] == 0.0 &&
              (!rope->config.hf_compat || rope->inv_freq_f32[i] - rope->inv_freq_f32[i] == 0.0f);
  FZ_REQUIRE(finite, "%s returned OK with a NaN or infinite frequency (scaling %d, factor %g)", after,
             (int)rope->config.scaling, rope->config.factor);
}

/* posenc_rope_init, then sometimes posenc_rope_set_seq_len; both checked when they succeed. */
static inline posenc_status fz_rope_init(fz_in *in, posenc_rope *rope, const posenc_rope_config *cfg) {
  posenc_status st = posenc_rope_init(rope, cfg);
  if (st != POSENC_OK) return st;
  fz_require_finite_rope(rope, "posenc_rope_init");
  if (fz_u8(in) % 4 == 3 &&
      posenc_rope_set_seq_len(rope, fz_u8(in) % 2 ? fz_u32(in) : fz_u8(in) * 64u) == POSENC_OK)
    fz_require_finite_rope(rope, "posenc_rope_set_seq_len");
  return POSENC_OK;
}

static inline void fz_rope_lists_free(fz_rope_lists *lists) {
  free(lists->short_factor);
  free(lists->long_factor);
  free(lists->freq_factors);
}

#endif /* POSENC_FUZZ_H */
