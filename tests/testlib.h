/* Tiny test harness shared by posenc's tests: counts checks, prints failures, ends with the
 * plain summary line "N passed, N failed". */
#ifndef POSENC_TESTLIB_H
#define POSENC_TESTLIB_H

#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

/* References round every operation: keep the compiler from fusing them, whatever the flags
 * (built single-file with -mfma -ffp-contract=fast, a test then checks posenc's kernels). */
#if defined(__clang__)
#  pragma STDC FP_CONTRACT OFF
#  pragma clang fp contract(off)
#elif defined(__GNUC__)
#  pragma GCC optimize("fp-contract=off")
#endif

static int tl_passed, tl_failed;

#define CHECK(cond, ...) do {                                              \
    if (cond) { tl_passed++; }                                             \
    else { tl_failed++; printf("FAIL %s:%d: ", __FILE__, __LINE__);        \
           printf(__VA_ARGS__); printf("\n"); }                            \
  } while (0)

/* The T5 configurations the bias tests sweep, by index 0..127: 1 and the configuration, or 0
 * where the index names no valid one (bidirectional with 2 buckets, max_distance <= e). */
static inline int tl_t5_config(unsigned idx, uint32_t *num_buckets, uint32_t *max_distance, int *bidirectional) {
  static const uint32_t nbs[] = {2, 4, 8, 16, 32, 64, 128, 256};
  static const uint32_t mds[] = {0, 20, 64, 100, 128, 256, 1000, 4096}; /* 0: e + 1 */
  const uint32_t nb = nbs[(idx / 8) % 8], md = mds[idx % 8];
  const int bi = (int)(idx / 64) % 2;
  const uint32_t e = (bi ? nb / 2 : nb) / 2;
  if (bi && nb < 4) return 0;
  if ((md ? md : e + 1) <= e) return 0;
  *num_buckets = nb; *max_distance = md ? md : e + 1; *bidirectional = bi;
  return 1;
}

/* The backend a test measured (posenc_isa_name of posenc_isa_active()): printed, and where
 * POSENC_EXPECT_ISA is set it must be that one (a run meant for one backend, with POSENC_ISA lost on
 * its way, would measure another and pass untested). */
static inline void tl_measured_on(const char *isa) {
  const char *expect = getenv("POSENC_EXPECT_ISA");
  printf("measured on the %s backend\n", isa);
  CHECK(!expect || strcmp(expect, isa) == 0, "POSENC_EXPECT_ISA=%s, measured %s", expect, isa);
}

static inline int tl_summary(void) {
  printf("%d passed, %d failed\n", tl_passed, tl_failed);
  return tl_failed ? 1 : 0;
}

/* XXH3-64 of the little-endian byte image of n_bytes of elem-byte elements (elem 1, 2, 4 or 8):
 * what every golden is, so that one value holds on big-endian hosts too. There the elements are
 * byte-reversed chunk by chunk into a streaming hash, which equals the one-shot hash. */
static inline uint64_t tl_xxh3_le(const void *data, size_t n_bytes, size_t elem) {
  const uint16_t one = 1;
  const unsigned char *p = (const unsigned char *)data;
  unsigned char chunk[4096]; /* a multiple of every elem: no element straddles two chunks */
  XXH3_state_t st;
  size_t off, i, n;
  if (*(const unsigned char *)&one == 1) return XXH3_64bits(data, n_bytes);
  XXH3_64bits_reset(&st);
  for (off = 0; off < n_bytes; off += n) {
    n = n_bytes - off < sizeof chunk ? n_bytes - off : sizeof chunk;
    for (i = 0; i < n; i++) chunk[i] = p[off + i - i % elem + elem - 1 - i % elem];
    XXH3_64bits_update(&st, chunk, n);
  }
  return XXH3_64bits_digest(&st);
}

/* ---- helpers more than one test needs (each test still derives its own references) ---- */
#include <math.h>
#include "posenc.h"

#define TL_CANARY 0xA5

/* splitmix64: a reproducible stream of test inputs from *state. */
static inline uint64_t tl_splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Half an ulp of the f32 nearest to v (v normal in f32's range). */
static inline double tl_half_ulp_f32(double v) {
  int e;
  if (v == 0.0) return 0.0;
  frexp(v, &e);
  return ldexp(1.0, e - 25);
}

/* One stored element of a dtype, as f32, and back (round to nearest even). */
static inline float tl_load(const unsigned char *p, posenc_dtype dt) {
  float f; uint16_t h;
  if (dt == POSENC_DTYPE_F32) { memcpy(&f, p, 4); return f; }
  memcpy(&h, p, 2);
  return dt == POSENC_DTYPE_F16 ? posenc_f16_to_f32(h) : posenc_bf16_to_f32(h);
}
static inline void tl_store(unsigned char *p, posenc_dtype dt, float v) {
  uint16_t h;
  if (dt == POSENC_DTYPE_F32) { memcpy(p, &v, 4); return; }
  h = dt == POSENC_DTYPE_F16 ? posenc_f32_to_f16(v) : posenc_f32_to_bf16(v);
  memcpy(p, &h, 2);
}

/* 1 if all n bytes still hold TL_CANARY: nothing was written. */
static inline int tl_all_canary(const unsigned char *b, size_t n) {
  size_t i;
  for (i = 0; i < n; i++) if (b[i] != TL_CANARY) return 0;
  return 1;
}

#endif
