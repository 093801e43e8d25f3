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
#include "backends.h" /* tests/backends.h: BK_FOR_EACH */

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
 * validation must refuse or survive (NaN, infinities, zero, negative, huge, tiny, raw bits, 1 and
 * its neighbours, the limits of the valid ranges and of double). */
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
    case 11: return 1.0; /* a base of 1: ln(base) = 0 in every derived value */
    case 12: return 1.0 + 0x1p-52;
    case 13: return 1.0 - 0x1p-53;
    case 14: return fz_u8(in) % 2 ? 1.0 + 1e-12 : 1.0 - 1e-12;
    case 15: {
      static const double edge[8] = {1.7976931348623157e308, 4.9406564584124654e-324, -0.0, 1e30,
                                     1e-30, 1e30 * (1.0 + 0x1p-52), 1e-30 * (1.0 - 0x1p-53), -1e-300};
      return edge[fz_u8(in) % 8];
    }
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
  if (k < 15) return (posenc_dtype)(k % 3);
  return (posenc_dtype)(fz_u8(in) % 2 ? 3 + fz_u8(in) : -1 - (int)fz_u8(in)); /* rarely an unknown dtype */
}

/* An enum value in [0, count), rarely one past it, negative, or at the int limits. */
static inline int fz_enum(fz_in *in, int count) {
  static const int odd[6] = {-1, INT32_MIN, INT32_MAX, -2, 1 << 30, 256};
  uint8_t k = fz_u8(in);
  if (k >= 250) return k >= 253 ? count + (k - 253) : odd[fz_u8(in) % 6];
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
  unsigned char *data, *init, *scalar_result, *backend_result; /* backend_result: planted runs */
  size_t bytes;
  posenc_dtype dtype; /* for nan_any: the element type */
  int nan_any;        /* NaNs may differ in payload and sign between backends (documented) */
  int scratch;        /* work space: written even on error, its content no result (not compared) */
} fz_span;

/* A copy of a struct or array the call reads, planted inside one of its spans (fz_plant). */
#define FZ_MAX_PLANTS 4
typedef struct fz_plant {
  const char *name;
  void *slot;           /* the case's pointer variable (any object pointer type) the call reads */
  const void *original; /* its value: the copy elsewhere */
  unsigned char *addr;  /* the planted copy, inside spans[span].data */
  size_t span, at, bytes;
} fz_planted;

typedef struct fz_call {
  const char *what;
  posenc_status (*run)(void *ctx);
  void *ctx;
  int untouched_on_error; /* the API promises "on error nothing is written" */
  size_t n_spans;
  fz_span spans[FZ_MAX_SPANS];
  size_t n_plants;
  fz_planted plants[FZ_MAX_PLANTS];
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

/* ---- structs and arrays planted inside outputs (posenc.h, "Buffers") --------------------------- */
static inline void fz_slot_set(void *slot, const void *value) { memcpy(slot, &value, sizeof value); }
static inline const void *fz_slot_get(const void *slot) {
  const void *v;
  memcpy(&v, slot, sizeof v);
  return v;
}

/* Plants a copy of the `bytes` bytes that the pointer variable *slot points to (a struct, or an
 * array a struct points to) at a drawn offset, a multiple of align, inside a drawn span, where it
 * overlaps no earlier plant. Its bytes go into the span's initial content, so every run (the
 * plain one too) starts from them; only the planted run reads the struct from there. Plants made
 * earlier (arrays whose pointer field lies in this struct) are applied to the copy. The contract
 * (fz_planted_run): ALIAS with every span as it was, or the plain call's status and bytes.
 * Returns 1 if planted (0: no span has room, or the slot holds NULL). */
static inline int fz_plant(fz_call *call, fz_in *in, const char *name, void *slot, size_t bytes, size_t align) {
  fz_planted *pl;
  fz_span *s;
  size_t si, at, k;
  const void *src = fz_slot_get(slot);
  if (call->n_plants == FZ_MAX_PLANTS || call->n_spans == 0 || !src || bytes == 0) return 0;
  si = fz_below(in, call->n_spans);
  s = &call->spans[si];
  if (s->bytes < bytes) return 0;
  at = (s->bytes - bytes) / align;
  switch (fz_u8(in) % 4) {
    case 0: at = 0; break;                  /* at the start */
    case 1: break;                          /* at the end (aligned) */
    default: at = fz_below(in, at + 1); /* anywhere */
  }
  at *= align;
  for (k = 0; k < call->n_plants; k++)
    if (call->plants[k].span == si && at < call->plants[k].at + call->plants[k].bytes &&
        call->plants[k].at < at + bytes)
      return 0;
  for (k = 0; k < call->n_plants; k++) fz_slot_set(call->plants[k].slot, call->plants[k].addr);
  memcpy(s->init + at, src, bytes);
  for (k = call->n_plants; k-- > 0;) fz_slot_set(call->plants[k].slot, call->plants[k].original);
  memcpy(s->data + at, s->init + at, bytes);
  pl = &call->plants[call->n_plants++];
  pl->name = name;
  pl->slot = slot;
  pl->original = src;
  pl->addr = s->data + at;
  pl->span = si;
  pl->at = at;
  pl->bytes = bytes;
  return 1;
}

/* fz_plant for a rope: its header and arrays (POSENC_ROPE_BYTES of its rotary dim), with the
 * copy's own address as its `self`, as posenc_rope_init would have made it there (a rope copied
 * as it is, is refused as moved: ERR_DIM). */
static inline int fz_plant_rope(fz_call *call, fz_in *in, const posenc_rope **slot) {
  const posenc_rope *r = *slot;
  const void *self;
  fz_planted *pl;
  if (!fz_plant(call, in, "rope", (void *)slot, POSENC_ROPE_BYTES(r->config.rotary_dim), 16)) return 0;
  pl = &call->plants[call->n_plants - 1];
  self = pl->addr;
  memcpy(call->spans[pl->span].init + pl->at + offsetof(posenc_rope, self), &self, sizeof self);
  memcpy(pl->addr + offsetof(posenc_rope, self), &self, sizeof self);
  return 1;
}

/* After the plain run on isa (status st, the spans holding its result): the same call with every
 * plant read from inside its span. It must refuse (ALIAS, every span byte as it was) or give
 * exactly the plain run's status and bytes: same backend, same initial bytes. */
static inline void fz_planted_run(fz_call *call, posenc_isa isa, posenc_status st) {
  posenc_status pst;
  size_t si, k;
  for (si = 0; si < call->n_spans; si++) {
    fz_span *s = &call->spans[si];
    if (!s->backend_result && !(s->backend_result = (unsigned char *)malloc(s->bytes ? s->bytes : 1))) abort();
    memcpy(s->backend_result, s->data, s->bytes);
    memcpy(s->data, s->init, s->bytes);
  }
  for (k = 0; k < call->n_plants; k++) fz_slot_set(call->plants[k].slot, call->plants[k].addr);
  pst = call->run(call->ctx);
  for (k = call->n_plants; k-- > 0;) fz_slot_set(call->plants[k].slot, call->plants[k].original);
  for (si = 0; si < call->n_spans; si++) {
    fz_span *s = &call->spans[si];
    const unsigned char *want = pst == POSENC_ERR_ALIAS ? s->init : s->backend_result;
    size_t at = SIZE_MAX, i;
    for (i = 0; i < s->bytes && at == SIZE_MAX && !s->scratch; i++)
      if (s->data[i] != want[i]) at = i;
    FZ_REQUIRE(pst == POSENC_ERR_ALIAS || pst == st, "%s on %s with %s planted in %s at byte %zu: %s, %s elsewhere",
               call->what, posenc_isa_name(isa), call->plants[0].name, call->spans[call->plants[0].span].name,
               call->plants[0].at, posenc_strerror(pst), posenc_strerror(st));
    FZ_REQUIRE(at == SIZE_MAX, "%s on %s, %zu plant(s), first %s in %s at byte %zu: %s, and %s at byte %zu of %zu %s",
               call->what, posenc_isa_name(isa), call->n_plants, call->plants[0].name,
               call->spans[call->plants[0].span].name, call->plants[0].at, posenc_strerror(pst), s->name, at,
               s->bytes, pst == POSENC_ERR_ALIAS ? "was written" : "differs from the call with the copies elsewhere");
  }
}

/* Runs the call on scalar, then on every other backend this build and CPU run (BK_FOR_EACH);
 * aborts on a status or byte difference from scalar, or on an error that wrote. Returns the
 * (common) status. Spans and plants make this more than bk_compare's one buffer. */
static inline posenc_status fz_differential(fz_call *call) {
  size_t si;
  posenc_status ref = POSENC_OK;
  BK_FOR_EACH(it) {
    posenc_status st;
    for (si = 0; si < call->n_spans; si++)
      memcpy(call->spans[si].data, call->spans[si].init, call->spans[si].bytes);
    st = call->run(call->ctx);
    if (it.index == 0) ref = st;
    FZ_REQUIRE(st == ref, "%s: %s returns %d (%s), scalar %d (%s)", call->what, posenc_isa_name(it.isa),
               (int)st, posenc_strerror(st), (int)ref, posenc_strerror(ref));
    for (si = 0; si < call->n_spans; si++) {
      fz_span *s = &call->spans[si];
      size_t at;
      if (s->scratch) continue;
      if (st != POSENC_OK && call->untouched_on_error) {
        at = fz_diff(s, s->data, s->init);
        FZ_REQUIRE(at == SIZE_MAX, "%s: %s wrote %s at byte %zu of %zu but returned %s", call->what,
                   posenc_isa_name(it.isa), s->name, at, s->bytes, posenc_strerror(st));
      }
      if (it.index == 0) {
        free(s->scalar_result);
        s->scalar_result = (unsigned char *)malloc(s->bytes ? s->bytes : 1);
        if (!s->scalar_result) abort();
        memcpy(s->scalar_result, s->data, s->bytes);
        continue;
      }
      at = fz_diff(s, s->data, s->scalar_result);
      FZ_REQUIRE(at == SIZE_MAX, "%s: %s differs from scalar in %s at byte %zu of %zu (status %s)",
                 call->what, posenc_isa_name(it.isa), s->name, at, s->bytes, posenc_strerror(st));
    }
    if (call->n_plants) fz_planted_run(call, it.isa, st);
  }
  return ref;
}

static inline void fz_call_free(fz_call *call) {
  size_t i;
  for (i = 0; i < call->n_spans; i++) {
    free(call->spans[i].data);
    free(call->spans[i].init);
    free(call->spans[i].scalar_result);
    free(call->spans[i].backend_result);
  }
  call->n_spans = 0;
  call->n_plants = 0;
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
/* The factor lists a configuration points to, owned by the caller: `pairs` floats drawn from the
 * input, then repeated to POSENC_ROPE_MAX_DIM / 2, so that a garbled rotary_dim or scaling (which
 * makes posenc_rope_init read more of them, fz_rope_reproducible) still reads inside the list. */
typedef struct fz_rope_lists {
  float *short_factor, *long_factor, *freq_factors;
  posenc_rope *rope; /* fz_rope_init's storage: exactly posenc_rope_bytes, so ASan sees an overread */
} fz_rope_lists;

static inline float *fz_factor_list(fz_in *in, size_t pairs) {
  float *list;
  size_t i;
  if (fz_u8(in) % 8 == 7) return NULL;
  list = (float *)malloc(POSENC_ROPE_MAX_DIM / 2 * sizeof *list);
  if (!list) abort();
  for (i = 0; i < pairs; i++) list[i] = fz_float(in, 1.0f + (float)(i % 7) * 0.5f);
  for (; i < POSENC_ROPE_MAX_DIM / 2; i++) list[i] = pairs ? list[i % pairs] : 1.0f;
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
  lists->rope = NULL;
  if (c.scaling == POSENC_ROPE_SCALING_LONGROPE) {
    c.short_factor = lists->short_factor = fz_factor_list(in, pairs);
    c.long_factor = lists->long_factor = fz_factor_list(in, pairs);
  }
  if (fz_u8(in) % 8 == 7) c.freq_factors = lists->freq_factors = fz_factor_list(in, pairs);
  return c;
}

/* An initialised rope must hold derived values a rotation can use, else every rotation is silent
 * garbage: every frequency finite and > 0 (HF's float32 ones finite too), the attention factor
 * finite and in (0, 1e30], whatever the config's base, factors, betas and mscales were. */
static inline void fz_require_finite_rope(const posenc_rope *rope, const char *after) {
  const double *om = posenc_rope_inv_freq(rope);
  const float *om32 = posenc_rope_inv_freq_f32(rope);
  /* the exact reduction's parts: the first array after the header (posenc.h, POSENC_ROPE_BYTES) */
  const double *parts = (const double *)(const void *)((const unsigned char *)rope + POSENC_ROPE_BYTES(0));
  size_t i;
  FZ_REQUIRE(om && (om32 != NULL) == (rope->config.hf_compat != 0), "%s: OK, but the rope is not valid", after);
  FZ_REQUIRE(rope->pairs >= 1 && rope->pairs <= POSENC_ROPE_MAX_DIM / 2, "%s: OK with %zu pairs", after, rope->pairs);
  FZ_REQUIRE(rope->attention_factor > 0.0 && rope->attention_factor <= 1e30,
             "%s returned OK with attention factor %g (scaling %d, factor %g, mscale %g / %g)", after,
             rope->attention_factor, (int)rope->config.scaling, rope->config.factor, rope->config.mscale,
             rope->config.mscale_all_dim);
  for (i = 0; i < rope->pairs; i++)
    FZ_REQUIRE(om[i] > 0.0 && om[i] - om[i] == 0.0 && parts[4 * i] - parts[4 * i] == 0.0 &&
                   (!om32 || om32[i] - om32[i] == 0.0f),
               "%s returned OK with frequency %zu = %g (f32 %g; scaling %d, base %.17g, factor %g, betas %g %g)",
               after, i, om[i], om32 ? (double)om32[i] : 0.0, (int)rope->config.scaling,
               rope->config.base, rope->config.factor, rope->config.beta_fast, rope->config.beta_slow);
}

/* posenc_rope_init into lists->rope, storage of exactly posenc_rope_bytes(cfg) (freed with the
 * lists), then sometimes posenc_rope_set_seq_len; both checked when they succeed. */
static inline posenc_status fz_rope_init(fz_in *in, fz_rope_lists *lists, const posenc_rope_config *cfg) {
  posenc_rope *rope;
  size_t bytes = 0;
  posenc_status st = posenc_rope_bytes(cfg, &bytes);
  if (st != POSENC_OK) return st;
  if (!(rope = lists->rope = (posenc_rope *)malloc(bytes))) abort();
  st = posenc_rope_init(rope, bytes, cfg);
  if (st != POSENC_OK) return st;
  fz_require_finite_rope(rope, "posenc_rope_init");
  if (fz_u8(in) % 4 == 3 &&
      posenc_rope_set_seq_len(rope, fz_u8(in) % 2 ? fz_u32(in) : fz_u8(in) * 64u) == POSENC_OK)
    fz_require_finite_rope(rope, "posenc_rope_set_seq_len");
  return POSENC_OK;
}

/* ---- initialised structs with garbage in one field (posenc.h, "Buffers") --------------------- */
/* What a consuming call may do with it: refuse it (an error, nothing written: fz_differential
 * checks that), or, only where the struct is still one init could have produced (fz_*_reproducible),
 * work as for that struct; otherwise it must give exactly what it gave before the change. */
/* The values init computed are trusted (posenc.h, "Buffers"): another attention factor in
 * (0, 1e30] scales the results, and a T5 plan's first[] beyond |r| = POSENC_T5_NEAR, still
 * ascending, moves a far bucket boundary (checking it would mean settling every threshold again:
 * posenc_t5_plan_init's tens of microseconds per call). near[] is checked against first[]. */
static inline int fz_garbage_known(const char *field) {
  return strcmp(field, "attention_factor") == 0 || strcmp(field, "first") == 0;
}

typedef struct fz_before {
  posenc_status st;
  unsigned char *bytes[FZ_MAX_SPANS];
} fz_before;

static inline void fz_before_take(const fz_call *call, posenc_status st, fz_before *b) {
  size_t i;
  b->st = st;
  for (i = 0; i < call->n_spans; i++) {
    if (!(b->bytes[i] = (unsigned char *)malloc(call->spans[i].bytes ? call->spans[i].bytes : 1))) abort();
    if (!call->spans[i].scratch) memcpy(b->bytes[i], call->spans[i].scalar_result, call->spans[i].bytes);
  }
}

/* st: the status of fz_differential with the garbled struct (the spans' scalar results its bytes). */
static inline void fz_garbage_verdict(const fz_call *call, fz_before *b, posenc_status st, int reproducible,
                                      const char *field) {
  size_t i;
  int same = st == b->st;
  for (i = 0; i < call->n_spans && same; i++)
    same = call->spans[i].scratch || memcmp(b->bytes[i], call->spans[i].scalar_result, call->spans[i].bytes) == 0;
  FZ_REQUIRE(st != POSENC_OK || reproducible || same || fz_garbage_known(field),
             "%s: returned OK with garbage in %s (no init makes that struct), and wrote %s", call->what, field,
             b->st == POSENC_OK ? "other bytes than before" : "where it refused the struct before");
  for (i = 0; i < call->n_spans; i++) free(b->bytes[i]);
}

/* Overwrites one field of an initialised rope with drawn bytes; returns the field's name. (The
 * caller's ids must have room for M-RoPE's three axes: mrope may turn on.) */
static inline const char *fz_rope_garble(fz_in *in, posenc_rope *r) {
  posenc_rope_config *c = &r->config;
  uint32_t bits = fz_u32(in);
  int e = (int)bits;
  switch (fz_u8(in) % 12) {
    case 0: c->style = (posenc_rope_style)(fz_bool(in) ? fz_enum(in, 2) : e); return "config.style";
    case 1: c->scaling = (posenc_rope_scaling)(fz_bool(in) ? fz_enum(in, 7) : e); return "config.scaling";
    case 2: c->mrope = (posenc_rope_mrope)(fz_bool(in) ? fz_enum(in, 3) : e); return "config.mrope";
    case 3: c->mrope_section[fz_below(in, 3)] = fz_bool(in) ? bits : bits % 8; return "config.mrope_section";
    case 4: r->pairs = fz_bool(in) ? fz_size(in, POSENC_ROPE_MAX_DIM) : r->pairs + (size_t)fz_i32(in, -2, 2); return "pairs";
    case 5: c->rotary_dim = fz_bool(in) ? fz_size(in, POSENC_ROPE_MAX_DIM + 2) : c->rotary_dim + (size_t)fz_i32(in, -2, 2); return "config.rotary_dim";
    case 6: { /* only smaller: a larger valid head_dim describes a larger tensor than the caller's */
      size_t d = fz_bool(in) ? fz_size(in, POSENC_ROPE_MAX_DIM + 2) : c->head_dim + (size_t)fz_i32(in, -2, 2);
      c->head_dim = d > c->head_dim ? d % (c->head_dim + 1) : d;
      return "config.head_dim";
    }
    case 7: r->attention_factor = fz_double(in, r->attention_factor); return "attention_factor";
    case 8: c->hf_compat = fz_bool(in) ? !c->hf_compat : e; return "config.hf_compat";
    case 9: c->attention_factor = fz_double(in, 1.0); return "config.attention_factor";
    case 10: c->base = fz_double(in, c->base); return "config.base";
    default: { /* the rope is valid here: only one field is garbled */
      double *om = (double *)(uintptr_t)posenc_rope_inv_freq(r);
      om[fz_below(in, r->pairs)] = fz_double(in, 0.5);
      return "inv_freq";
    }
  }
}

/* 1 if posenc_rope_init makes *r again from r->config (as far as the kernels read it). */
static inline int fz_rope_reproducible(const posenc_rope *r) {
  const size_t max_bytes = POSENC_ROPE_BYTES(POSENC_ROPE_MAX_DIM), head = POSENC_ROPE_BYTES(0);
  posenc_rope *again = (posenc_rope *)malloc(max_bytes);
  const posenc_rope_config *a, *c = &r->config;
  size_t h = r->pairs;
  int same;
  if (!again) abort();
  a = &again->config;
  same = posenc_rope_init(again, max_bytes, c) == POSENC_OK && again->pairs == h && h <= POSENC_ROPE_MAX_DIM / 2 &&
         r->self == r && r->storage_bytes >= POSENC_ROPE_BYTES(2 * h) &&
         memcmp(&again->attention_factor, &r->attention_factor, sizeof r->attention_factor) == 0 &&
         memcmp(&again->max_omega, &r->max_omega, sizeof r->max_omega) == 0 &&
         a->head_dim == c->head_dim && a->rotary_dim == c->rotary_dim && a->style == c->style &&
         a->scaling == c->scaling && a->mrope == c->mrope && a->hf_compat == c->hf_compat &&
         memcmp(a->mrope_section, c->mrope_section, sizeof a->mrope_section) == 0 &&
         /* the arrays after the header: parts, steps, omega (doubles), and HF's float32 omega,
          * the last (posenc.h, POSENC_ROPE_BYTES), which init leaves zero without hf_compat */
         memcmp((const unsigned char *)again + head, (const unsigned char *)r + head, POSENC_ROPE_BYTES(2 * h) - head) == 0;
  free(again);
  return same;
}

/* Garbage in one field of the rope the call used (st: its status): run it again, and it must be
 * refused with nothing written, or give what it gave, or the rope must be one init makes. */
static inline void fz_rope_garbage_round(fz_call *call, fz_in *in, posenc_rope *rope, posenc_status st) {
  fz_before before;
  const char *field;
  fz_before_take(call, st, &before);
  field = fz_rope_garble(in, rope);
  st = fz_differential(call);
  fz_garbage_verdict(call, &before, st, fz_rope_reproducible(rope), field);
}

static inline void fz_rope_lists_free(fz_rope_lists *lists) {
  free(lists->rope);
  free(lists->short_factor);
  free(lists->long_factor);
  free(lists->freq_factors);
}

#endif /* POSENC_FUZZ_H */
