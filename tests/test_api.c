/* The API's contracts: bad input gets its own error code and nothing is written; nothing is
 * written outside the rows (guard bytes, stride gaps); a value depends only on (p, i, d, base),
 * whatever the call shape; f16/bf16 are the round-to-nearest-even of the f32 result. */
#include <math.h>
#include <stdlib.h>
#include "posenc.h"
#include "testlib.h"
#include "backends.h"

#define CANARY TL_CANARY

static void test_errors(void) {
  unsigned char buf[4096];
  int32_t pos[2] = {0, 1};
  size_t bytes = 0;
  posenc_sinusoidal_params p = posenc_sinusoidal_default(8), q;
  memset(buf, CANARY, sizeof buf);
#define EXPECT(call, code) do { posenc_status s_ = (call); \
    CHECK(s_ == (code), "%s -> %s, want %s", #call, posenc_strerror(s_), posenc_strerror(code)); \
    CHECK(tl_all_canary(buf, sizeof buf), "%s wrote on error", #call); } while (0)
  EXPECT(posenc_sinusoidal_table(NULL, 0, 4, buf, sizeof buf), POSENC_ERR_NULL);
  EXPECT(posenc_sinusoidal_table(&p, 0, 4, NULL, sizeof buf), POSENC_ERR_NULL);
  EXPECT(posenc_sinusoidal_rows(&p, NULL, 2, buf, sizeof buf), POSENC_ERR_NULL);
  EXPECT(posenc_sinusoidal_table(&p, 0, 0, buf, sizeof buf), POSENC_ERR_SIZE);
  q = p; q.dim = 0; EXPECT(posenc_sinusoidal_table(&q, 0, 4, buf, sizeof buf), POSENC_ERR_SIZE);
  EXPECT(posenc_sinusoidal_table(&p, 0, 4, buf, 4 * 8 * 4 - 1), POSENC_ERR_BUFFER);
  q = p; q.layout = (posenc_layout)7; EXPECT(posenc_sinusoidal_table(&q, 0, 4, buf, sizeof buf), POSENC_ERR_LAYOUT);
  q = p; q.dtype = (posenc_dtype)9; EXPECT(posenc_sinusoidal_table(&q, 0, 4, buf, sizeof buf), POSENC_ERR_DTYPE);
  q = p; q.base = 0.0; EXPECT(posenc_sinusoidal_table(&q, 0, 4, buf, sizeof buf), POSENC_ERR_BASE);
  q = p; q.base = -10000.0; EXPECT(posenc_sinusoidal_table(&q, 0, 4, buf, sizeof buf), POSENC_ERR_BASE);
  q = p; q.base = NAN; EXPECT(posenc_sinusoidal_table(&q, 0, 4, buf, sizeof buf), POSENC_ERR_BASE);
  q = p; q.base = INFINITY; EXPECT(posenc_sinusoidal_table(&q, 0, 4, buf, sizeof buf), POSENC_ERR_BASE);
  q = p; q.base = 1e31; EXPECT(posenc_sinusoidal_table(&q, 0, 4, buf, sizeof buf), POSENC_ERR_BASE);
  q = p; q.row_stride = 7; EXPECT(posenc_sinusoidal_table(&q, 0, 4, buf, sizeof buf), POSENC_ERR_STRIDE);
  EXPECT(posenc_sinusoidal_table(&p, 2147483647, 2, buf, sizeof buf), POSENC_ERR_POSITION);
  EXPECT(posenc_sinusoidal_table(&p, 2147483000, 1000, buf, SIZE_MAX), POSENC_ERR_POSITION); /* fails before any write */
  q = p; q.base = 1e-30; /* largest omega 1e30^(6/8) */ EXPECT(posenc_sinusoidal_rows(&q, pos, 2, buf, sizeof buf), POSENC_ERR_POSITION);
  q = p; q.row_stride = SIZE_MAX / 2; EXPECT(posenc_sinusoidal_table(&q, 0, 4, buf, sizeof buf), POSENC_ERR_OVERFLOW);
  q = p; q.dim = SIZE_MAX / 2; EXPECT(posenc_sinusoidal_table(&q, 0, 1, buf, sizeof buf), POSENC_ERR_OVERFLOW);
  EXPECT(posenc_sinusoidal_bytes(&p, 4, NULL), POSENC_ERR_NULL);
  CHECK(posenc_sinusoidal_bytes(&p, 4, &bytes) == POSENC_OK && bytes == 4 * 8 * 4, "bytes %zu", bytes);
  q = p; q.row_stride = 10; q.dtype = POSENC_DTYPE_BF16;
  CHECK(posenc_sinusoidal_bytes(&q, 4, &bytes) == POSENC_OK && bytes == (3 * 10 + 8) * 2, "strided bytes %zu", bytes);
  CHECK(strcmp(posenc_strerror(POSENC_ERR_BASE), posenc_strerror(POSENC_ERR_POSITION)) != 0, "distinct messages");
#undef EXPECT
}

/* Every shape that exercises partial chunks, odd d, both layouts, all dtypes: exact-size buffer
 * plus guard bytes after it, and gaps between strided rows, stay untouched. */
static void test_bounds(void) {
  static const size_t dims[] = {1, 2, 3, 5, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 129, 255, 256, 257, 300};
  size_t di, n;
  int layout, dtype;
  for (di = 0; di < sizeof dims / sizeof dims[0]; di++)
    for (layout = 0; layout < 2; layout++)
      for (dtype = 0; dtype < 3; dtype++)
        for (n = 1; n <= 35; n += 17) {
          posenc_sinusoidal_params p = posenc_sinusoidal_default(dims[di]);
          size_t bytes, es = posenc_dtype_size((posenc_dtype)dtype), r, stride = dims[di] + 3, guard = 64;
          unsigned char *buf;
          int ok = 1;
          p.layout = (posenc_layout)layout; p.dtype = (posenc_dtype)dtype; p.row_stride = stride;
          if (posenc_sinusoidal_bytes(&p, n, &bytes) != POSENC_OK) { CHECK(0, "bytes"); continue; }
          buf = (unsigned char *)malloc(bytes + guard);
          memset(buf, CANARY, bytes + guard);
          CHECK(posenc_sinusoidal_table(&p, 13, n, buf, bytes) == POSENC_OK, "table");
          ok &= tl_all_canary(buf + bytes, guard);
          for (r = 0; r + 1 < n; r++) ok &= tl_all_canary(buf + (r * stride + dims[di]) * es, 3 * es);
          CHECK(ok, "write outside rows: d=%zu layout=%d dtype=%d n=%zu", dims[di], layout, dtype, n);
          free(buf);
        }
}

/* The same position gives the same bits from a range, a list, another start, or split calls. */
static void test_call_shape(void) {
  enum { D = 96, N = 70 };
  static float whole[N * D], piece[N * D], listed[N * D];
  int32_t pos[N];
  int layout, i;
  for (layout = 0; layout < 2; layout++) {
    posenc_sinusoidal_params p = posenc_sinusoidal_default(D);
    p.layout = (posenc_layout)layout; p.base = 500000.0;
    CHECK(posenc_sinusoidal_table(&p, 1000, N, whole, sizeof whole) == POSENC_OK, "whole");
    /* the same rows in three pieces that start off anchor boundaries */
    CHECK(posenc_sinusoidal_table(&p, 1000, 5, piece, sizeof piece) == POSENC_OK, "piece 1");
    CHECK(posenc_sinusoidal_table(&p, 1005, 30, piece + 5 * D, sizeof piece - 5 * D * 4) == POSENC_OK, "piece 2");
    CHECK(posenc_sinusoidal_table(&p, 1035, N - 35, piece + 35 * D, sizeof piece - 35 * D * 4) == POSENC_OK, "piece 3");
    CHECK(memcmp(whole, piece, sizeof whole) == 0, "split calls differ (layout %d)", layout);
    for (i = 0; i < N; i++) pos[i] = 1000 + (i * 37) % N; /* a permutation of the range */
    CHECK(posenc_sinusoidal_rows(&p, pos, N, listed, sizeof listed) == POSENC_OK, "rows");
    for (i = 0; i < N; i++)
      CHECK(memcmp(listed + i * D, whole + (pos[i] - 1000) * D, D * 4) == 0, "list row %d differs", i);
  }
}

/* Tables of POSENC_STREAM_MIN_BYTES and more, 64-byte aligned, are written with non-temporal
 * stores where no chunk shares a line with another, in calls of POSENC_I_UGROUP chunks. Each
 * backend's table must equal scalar's from an output 2 or 4 bytes off (ordinary stores), and
 * nothing past the table may change: a chunk's parts or steps taken from another chunk, a call's
 * second chunk skipped, or a zero column skipped, all break it. */
static void test_big_tables(void) {
  static const struct {
    size_t dim;
    posenc_layout layout;
    posenc_dtype dtype;
    int32_t start;
    int listed;  /* positions from a list */
  } cases[] = {
      {128, POSENC_LAYOUT_INTERLEAVED, POSENC_DTYPE_F32, 0, 0},
      {128, POSENC_LAYOUT_INTERLEAVED, POSENC_DTYPE_F32, -77, 1},
      {131, POSENC_LAYOUT_SPLIT, POSENC_DTYPE_F32, 1000003, 0},       /* a zero column, 65 frequencies */
      {200, POSENC_LAYOUT_INTERLEAVED, POSENC_DTYPE_F16, 45, 0},      /* a partial chunk */
      {96, POSENC_LAYOUT_SPLIT, POSENC_DTYPE_BF16, -4000, 0},         /* chunks sharing lines */
      {1030, POSENC_LAYOUT_INTERLEAVED, POSENC_DTYPE_F32, 17, 0},     /* 33 chunks: the last call has one */
  };
  const size_t guard = 64;
  size_t ci;
  for (ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
    posenc_sinusoidal_params p = posenc_sinusoidal_default(cases[ci].dim);
    size_t es, n, bytes, i;
    const size_t off = 2 + 2 * (cases[ci].dtype == POSENC_DTYPE_F32); /* 4 (f32) or 2: an element's */
    unsigned char *ref_block, *out_block, *ref, *out;
    int32_t *pos = NULL;
    posenc_isa was;
    p.layout = cases[ci].layout; p.dtype = cases[ci].dtype;
    es = posenc_dtype_size(p.dtype);
    n = (((size_t)4 << 20) / (p.dim * es)) + 40; /* a little past POSENC_STREAM_MIN_BYTES, 4 MiB */
    if (posenc_sinusoidal_bytes(&p, n, &bytes) != POSENC_OK) { CHECK(0, "bytes"); continue; }
    ref_block = (unsigned char *)malloc(bytes + guard + 64);
    out_block = (unsigned char *)malloc(bytes + guard + 64);
    if (!ref_block || !out_block) { CHECK(0, "out of memory"); free(ref_block); free(out_block); continue; }
    ref = ref_block + (64 - (uintptr_t)ref_block % 64) % 64 + off;
    out = out_block + (64 - (uintptr_t)out_block % 64) % 64;
    if (cases[ci].listed) {
      uint64_t state = 12345;
      pos = (int32_t *)malloc(n * sizeof *pos);
      if (!pos) { CHECK(0, "out of memory"); free(ref_block); free(out_block); continue; }
      for (i = 0; i < n; i++) pos[i] = (int32_t)(tl_splitmix64(&state) % 2000000) - 1000000;
    }
    was = bk_select(POSENC_ISA_SCALAR);
    CHECK((pos ? posenc_sinusoidal_rows(&p, pos, n, ref, bytes) : posenc_sinusoidal_table(&p, cases[ci].start, n, ref, bytes)) ==
              POSENC_OK, "reference");
    bk_select(was);
    BK_FOR_EACH(it) {
      memset(out, CANARY, bytes + guard);
      CHECK((pos ? posenc_sinusoidal_rows(&p, pos, n, out, bytes) : posenc_sinusoidal_table(&p, cases[ci].start, n, out, bytes)) ==
                POSENC_OK, "table");
      CHECK(memcmp(out, ref, bytes) == 0 && tl_all_canary(out + bytes, guard),
            "%s: d=%zu layout %d %s start %d%s: %s", posenc_isa_name(it.isa), p.dim, (int)p.layout,
            posenc_dtype_name(p.dtype), (int)cases[ci].start, pos ? " (list)" : "",
            memcmp(out, ref, bytes) ? "differs from the unaligned scalar table" : "wrote past the table");
    }
    free(pos);
    free(ref_block);
    free(out_block);
  }
}

/* Known values: p = 0 is (0, 1) everywhere; column pair 0 has omega = 1 exactly. */
static void test_known_values(void) {
  float t[3 * 4];
  posenc_sinusoidal_params p = posenc_sinusoidal_default(4);
  CHECK(posenc_sinusoidal_table(&p, 0, 3, t, sizeof t) == POSENC_OK, "d4");
  CHECK(t[0] == 0.0f && t[1] == 1.0f && t[2] == 0.0f && t[3] == 1.0f, "row 0: %g %g %g %g", t[0], t[1], t[2], t[3]);
  CHECK(t[4] == (float)sin(1.0) && t[5] == (float)cos(1.0), "row 1: %.9g %.9g", t[4], t[5]);
  /* seed 003's example: d = 4, base 10000: omega_1 = 10000^(-1/2) = 0.01 */
  CHECK(t[6] == (float)sin(0.01) && t[7] == (float)cos(0.01), "row 1 pair 1: %.9g %.9g", t[6], t[7]);
  CHECK(t[8] == (float)sin(2.0) && t[10] == (float)sin(0.02), "row 2: %.9g %.9g", t[8], t[10]);
}

/* f16/bf16 tables are exactly the RNE conversion of the f32 table. */
static void test_half_outputs(void) {
  enum { D = 70, N = 40 };
  static float f[N * D];
  static uint16_t h[N * D];
  int layout, dt, i;
  for (layout = 0; layout < 2; layout++)
    for (dt = 1; dt < 3; dt++) {
      posenc_sinusoidal_params p = posenc_sinusoidal_default(D);
      int bad = 0;
      p.layout = (posenc_layout)layout;
      CHECK(posenc_sinusoidal_table(&p, 99990, N, f, sizeof f) == POSENC_OK, "f32");
      p.dtype = (posenc_dtype)dt;
      CHECK(posenc_sinusoidal_table(&p, 99990, N, h, sizeof h) == POSENC_OK, "half");
      for (i = 0; i < N * D; i++)
        bad += h[i] != (dt == POSENC_DTYPE_F16 ? posenc_f32_to_f16(f[i]) : posenc_f32_to_bf16(f[i]));
      CHECK(bad == 0, "%s layout %d: %d values differ from RNE(f32)", posenc_dtype_name((posenc_dtype)dt), layout, bad);
    }
}

/* The scalar conversions against an independent oracle where the compiler has one. */
static void test_conversions(void) {
  uint64_t x;
  int bad16 = 0, badbf = 0;
  CHECK(posenc_f32_to_bf16(1.0f) == 0x3f80 && posenc_f32_to_bf16(-2.0f) == 0xc000, "bf16 basics");
  CHECK(posenc_f32_to_bf16(posenc_bf16_to_f32(0x3f81)) == 0x3f81, "bf16 round trip");
  CHECK(posenc_f32_to_f16(1.0f) == 0x3c00 && posenc_f32_to_f16(65504.0f) == 0x7bff &&
        posenc_f32_to_f16(65520.0f) == 0x7c00 && posenc_f32_to_f16(5.9604644775390625e-8f) == 0x0001 &&
        posenc_f32_to_f16(2.98023223876953125e-8f) == 0x0000 && posenc_f32_to_f16(-0.0f) == 0x8000, "f16 basics");
  for (x = 0; x < 0x10000; x++) { /* every f16 survives f16 -> f32 -> f16 */
    uint16_t h = (uint16_t)x;
    if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) continue; /* NaN payloads */
    bad16 += posenc_f32_to_f16(posenc_f16_to_f32(h)) != h;
  }
  CHECK(bad16 == 0, "f16 round trip: %d", bad16);
  bad16 = 0;
  for (x = 0; x < 0x100000000ull; x += 65521) { /* a sweep of f32 bit patterns */
    uint32_t u = (uint32_t)x;
    float f, back;
    memcpy(&f, &u, 4);
    if (f != f) continue;
    /* bf16: the result is the nearest bf16 (ties to even): check by neighbours */
    back = posenc_bf16_to_f32(posenc_f32_to_bf16(f));
    {
      uint16_t b = posenc_f32_to_bf16(f);
      float lo = posenc_bf16_to_f32((uint16_t)(b - 1)), hi = posenc_bf16_to_f32((uint16_t)(b + 1));
      if (!isinf(back) && (fabs((double)back - f) > fabs((double)lo - f) || fabs((double)back - f) > fabs((double)hi - f)))
        badbf++;
    }
#if defined(__FLT16_MAX__) && !defined(__cplusplus)
    {
      __extension__ typedef _Float16 f16_oracle; /* gcc 12 on x86-64: IEEE binary16, RNE */
      f16_oracle ref = (f16_oracle)f;
      uint16_t rb;
      memcpy(&rb, &ref, 2);
      bad16 += rb != posenc_f32_to_f16(f);
    }
#endif
  }
  CHECK(badbf == 0, "bf16 not nearest: %d", badbf);
  CHECK(bad16 == 0, "f16 differs from the compiler's _Float16: %d", bad16);
}

int main(void) {
  test_errors();
  test_bounds();
  test_call_shape();
  test_big_tables();
  test_known_values();
  test_half_outputs();
  test_conversions();
  CHECK(posenc_selftest() == POSENC_OK || 1, "selftest runs");
  {
    posenc_selftest_result r;
    unsigned k;
    CHECK(posenc_selftest_report(NULL) == POSENC_ERR_NULL, "selftest_report(NULL)");
    CHECK(posenc_selftest_report(&r) == r.status && r.status == posenc_selftest() && r.isa == posenc_isa_active() &&
          (r.status != POSENC_OK || (r.failed == 0 && r.normal_exact == 1)), "selftest_report agrees with selftest");
    CHECK(strcmp(posenc_selftest_check_name(POSENC_SELFTEST_ROUNDING), "rounding") == 0 &&
          strcmp(posenc_selftest_check_name(POSENC_SELFTEST_DAZ), "daz") == 0 &&
          strcmp(posenc_selftest_check_name(0), "unknown") == 0 &&
          strcmp(posenc_selftest_check_name(POSENC_SELFTEST_FTZ | POSENC_SELFTEST_DAZ), "unknown") == 0 &&
          strcmp(posenc_selftest_check_name(1u << POSENC_SELFTEST_CHECKS), "unknown") == 0, "selftest_check_name");
    for (k = 0; k < POSENC_SELFTEST_CHECKS; k++)
      CHECK(strcmp(posenc_selftest_check_name(1u << k), "unknown") != 0, "check %u has a name", k);
  }
  return tl_summary();
}
