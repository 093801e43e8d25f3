/* Spectrum analysis and .npy headers (posenc.h, "spectrum of a table", ".npy headers"):
 *   - rank of tables built from r outer products, for several r, n and d, and every dtype;
 *   - singular values of P = H1 diag(s) H2 (Hadamard factors: P^T P is far from diagonal, and
 *     the exact values are sqrt(n d) s_k) to 1e-12 relative;
 *   - k90, k99, energy and entropy rank of a designed spectrum against values derived here;
 *   - sinusoidal tables: full rank where the columns are well separated, rank-deficient where
 *     low frequencies make cos columns nearly constant (seed 000's "rank <= d" in practice);
 *   - bad input: NaN/Inf, work too small, strides, aliasing; nothing written on error;
 *   - .npy: header/parse round trips for every type and rank, NumPy's exact bytes, and a battery
 *     of malformed headers (every truncation, every bad byte position) that must be refused
 *     without reading past len: each case is parsed from a heap copy of exactly len bytes, so
 *     the ASan build catches any over-read.
 * Only the public API is used. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include "posenc.h"
#include "testlib.h"

#define F32 POSENC_DTYPE_F32
#define F16 POSENC_DTYPE_F16
#define BF16 POSENC_DTYPE_BF16
#define CANARY (-12345.0)

static uint32_t lcg_state = 2024u;
static double lcg_unit(void) { /* uniform in [-1, 1) */
  lcg_state = lcg_state * 1664525u + 1013904223u;
  return (double)(lcg_state >> 8) / 8388608.0 - 1.0;
}

/* Stores v (rounded) into element i of a table of dtype. */
static void put(void *data, posenc_dtype dt, size_t i, double v) {
  if (dt == F32) ((float *)data)[i] = (float)v;
  else if (dt == F16) ((uint16_t *)data)[i] = posenc_f32_to_f16((float)v);
  else ((uint16_t *)data)[i] = posenc_f32_to_bf16((float)v);
}

/* Runs posenc_spectrum with a work buffer of the advertised size. */
static posenc_status spectrum(const posenc_table *t, double *sv, posenc_spectrum_info *info) {
  size_t need = posenc_spectrum_work(t->dim);
  double *work = (double *)malloc((need ? need : 1) * sizeof(double));
  posenc_status st = posenc_spectrum(t, work, need, sv, info);
  free(work);
  return st;
}

static posenc_table make_table(const void *data, posenc_dtype dt, size_t n, size_t d, size_t stride) {
  posenc_table t;
  t.data = data;
  t.dtype = dt;
  t.n_rows = n;
  t.dim = d;
  t.row_stride = stride;
  return t;
}

/* ---- rank of sums of outer products ------------------------------------------------------- */

/* P = sum_k u_k v_k^T with small-integer u, v: every entry is an integer below 256 in magnitude,
 * exact in f32, f16 and bf16, so P has rank exactly r in every dtype (row strides with gaps). */
static void test_rank_outer_products(void) {
  static const size_t cases[][3] = { /* n, d, r */
    {64, 16, 1}, {64, 16, 3}, {64, 16, 8}, {64, 16, 16}, {40, 40, 7}, {200, 32, 5},
    {10, 24, 10}, {12, 24, 4}, {300, 64, 17}, {7, 3, 2}, {1, 5, 1}};
  size_t c, dti;
  for (dti = 0; dti < 3; dti++) {
    posenc_dtype dt = (posenc_dtype)dti;
    for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
      size_t n = cases[c][0], d = cases[c][1], r = cases[c][2], stride = d + (c % 3), p, j, k;
      double *u = (double *)malloc(n * r * sizeof(double)), *v = (double *)malloc(d * r * sizeof(double));
      void *data = calloc(n * stride, 4);
      double *sv = (double *)malloc(d * sizeof(double));
      posenc_table t = make_table(data, dt, n, d, stride);
      posenc_spectrum_info info;
      posenc_status st;
      /* entries in {-2..2}: every sum fits 8 bits, exact in f16 and bf16 */
      for (k = 0; k < n * r; k++) u[k] = (double)((int)(lcg_unit() * 2.5));
      for (k = 0; k < d * r; k++) v[k] = (double)((int)(lcg_unit() * 2.5));
      for (k = 0; k < r; k++) { u[k * n + k % n] = 7.0; v[k * d + k % d] = 5.0; } /* independent */
      for (p = 0; p < n; p++)
        for (j = 0; j < d; j++) {
          double s = 0.0;
          for (k = 0; k < r; k++) s += u[k * n + p] * v[k * d + j];
          put(data, dt, p * stride + j, s);
        }
      st = spectrum(&t, sv, &info);
      CHECK(st == POSENC_OK, "%s n %zu d %zu r %zu: %s", posenc_dtype_name(dt), n, d, r, posenc_strerror(st));
      CHECK(info.rank == r, "%s n %zu d %zu r %zu: rank %zu", posenc_dtype_name(dt), n, d, r, info.rank);
      CHECK(info.entropy_rank >= 1.0 - 1e-12 && info.entropy_rank <= (double)r * (1.0 + 1e-12),
            "entropy rank %.17g not in [1, r]", info.entropy_rank);
      CHECK(info.k90 >= 1 && info.k90 <= info.k99 && info.k99 <= r, "k90 %zu k99 %zu r %zu", info.k90, info.k99, r);
      for (j = 1; j < d; j++) CHECK(sv[j] <= sv[j - 1], "descending at %zu", j);
      CHECK(sv[d - 1] >= 0.0, "non-negative");
      free(u); free(v); free(data); free(sv);
    }
  }
}

/* ---- known singular values ---------------------------------------------------------------- */

/* Sylvester Hadamard entry (i, j) of any order 2^m: (-1)^popcount(i & j). */
static double hadamard(size_t i, size_t j) {
  size_t x = i & j, bits = 0;
  while (x) { bits += x & 1u; x >>= 1; }
  return bits & 1u ? -1.0 : 1.0;
}

/* P = H1 diag(s) H2: H1 n x d (first d columns of a Hadamard of order n: H1^T H1 = n I), H2 d x d
 * Hadamard (H2 H2^T = d I), so sigma_k = sqrt(n d) s_k exactly while P^T P = n H2^T diag(s^2) H2 is
 * dense. Integer entries: P is exact in f32. */
static void test_known_singular_values(void) {
  static const size_t shapes[][2] = {{8, 8}, {32, 8}, {64, 16}, {16, 16}, {128, 32}};
  size_t c;
  for (c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
    size_t n = shapes[c][0], d = shapes[c][1], p, j, k;
    float *P = (float *)malloc(n * d * sizeof(float));
    double *s = (double *)malloc(d * sizeof(double)), *sv = (double *)malloc(d * sizeof(double));
    double worst = 0.0;
    posenc_table t = make_table(P, F32, n, d, 0);
    posenc_spectrum_info info;
    for (k = 0; k < d; k++) s[k] = (double)((k * 7) % d + 1); /* a permutation of 1..d */
    if (c == 3) s[5] = s[9] = 3.0; /* repeated values */
    for (p = 0; p < n; p++)
      for (j = 0; j < d; j++) {
        double v = 0.0;
        for (k = 0; k < d; k++) v += hadamard(p, k) * s[k] * hadamard(k, j);
        P[p * d + j] = (float)v;
      }
    CHECK(spectrum(&t, sv, &info) == POSENC_OK, "%zu x %zu", n, d);
    /* expected: sqrt(n d) * s sorted descending */
    for (k = 0; k < d; k++) {
      size_t i2, larger = 0;
      double want, rel;
      for (i2 = 0; i2 < d; i2++) larger += s[i2] > s[k] || (s[i2] == s[k] && i2 < k);
      want = sqrt((double)(n * d)) * s[k];
      rel = fabs(sv[larger] - want) / want;
      if (rel > worst) worst = rel;
    }
    CHECK(worst <= 1e-12, "%zu x %zu: worst relative error %.3g", n, d, worst);
    CHECK(info.rank == d, "%zu x %zu: rank %zu", n, d, info.rank);
    {
      double e = 0.0;
      for (k = 0; k < d; k++) e += (double)(n * d) * s[k] * s[k];
      CHECK(fabs(info.energy - e) <= 1e-12 * e, "energy %.17g want %.17g", info.energy, e);
    }
    free(P); free(s); free(sv);
  }
}

/* ---- k90, k99, entropy rank ------------------------------------------------------------------ */

/* P = H1 diag(s) (columns scaled): sigma = sqrt(n) s. The spectrum is designed so that 90% and
 * 99% of the energy are reached at known counts, away from the boundary. */
static void test_designed_spectrum(void) {
  enum { N = 32, D = 8 };
  /* energies s^2: 50, 30, 12, 5, 2, 0.6, 0.3, 0.1 (sum 100): cumulative 50, 80, 92 -> k90 = 3;
   * 97, 99, 99.6 -> k99 = 6 (99 exactly at 5 is a boundary: moved to 99.0 - 0.01 by 1.99) */
  static const double energy[D] = {50.0, 30.0, 12.0, 5.0, 1.99, 0.61, 0.3, 0.1};
  float P[N * D];
  double sv[D], s[D], sum = 0.0, h = 0.0, total = 0.0;
  size_t p, j;
  posenc_table t = make_table(P, F32, N, D, 0);
  posenc_spectrum_info info;
  for (j = 0; j < D; j++) s[j] = sqrt(energy[j]);
  for (p = 0; p < N; p++)
    for (j = 0; j < D; j++) P[p * D + j] = (float)(hadamard(p, j) * s[j]);
  for (j = 0; j < D; j++) { /* the f32 values actually stored */
    s[j] = (double)(float)s[j] * sqrt((double)N);
    sum += s[j];
    total += s[j] * s[j];
  }
  for (j = 0; j < D; j++) h -= s[j] / sum * log(s[j] / sum);
  CHECK(spectrum(&t, sv, &info) == POSENC_OK, "designed");
  CHECK(info.k90 == 3, "k90 %zu", info.k90);
  CHECK(info.k99 == 6, "k99 %zu", info.k99);
  CHECK(info.rank == D, "rank %zu", info.rank);
  CHECK(fabs(info.energy - total) <= 1e-13 * total, "energy %.17g want %.17g", info.energy, total);
  CHECK(fabs(info.entropy_rank - exp(h)) <= 1e-12 * exp(h), "entropy rank %.17g want %.17g",
        info.entropy_rank, exp(h));
  CHECK(info.entropy_rank > 1.0 && info.entropy_rank < (double)D, "entropy rank in (1, d)");

  /* flat spectrum: entropy rank = d, k90 = ceil(0.9 d); one value: entropy rank 1, k = 1 */
  for (p = 0; p < N; p++)
    for (j = 0; j < D; j++) P[p * D + j] = (float)hadamard(p, j);
  CHECK(spectrum(&t, sv, &info) == POSENC_OK, "flat");
  CHECK(fabs(info.entropy_rank - D) <= 1e-12 * D, "flat entropy rank %.17g", info.entropy_rank);
  CHECK(info.k90 == 8 && info.k99 == 8, "flat k90 %zu k99 %zu", info.k90, info.k99);
  for (p = 0; p < N; p++)
    for (j = 0; j < D; j++) P[p * D + j] = j == 2 ? 3.0f : 0.0f;
  CHECK(spectrum(&t, sv, &info) == POSENC_OK, "one column");
  CHECK(info.rank == 1 && info.k90 == 1 && info.k99 == 1, "one column: rank %zu k90 %zu k99 %zu",
        info.rank, info.k90, info.k99);
  CHECK(fabs(info.entropy_rank - 1.0) <= 1e-15, "one column entropy rank %.17g", info.entropy_rank);
  CHECK(sv[0] == sqrt(9.0 * N) && sv[1] == 0.0, "one column sv %.17g %.17g", sv[0], sv[1]);
  /* zero table */
  memset(P, 0, sizeof P);
  CHECK(spectrum(&t, sv, &info) == POSENC_OK, "zero");
  CHECK(info.rank == 0 && info.k90 == 0 && info.k99 == 0 && info.energy == 0.0 && info.entropy_rank == 0.0,
        "zero table: rank %zu k90 %zu energy %g entropy %g", info.rank, info.k90, info.energy, info.entropy_rank);
}

/* ---- sinusoidal tables --------------------------------------------------------------------- */

static void sinusoidal_rank(size_t n, size_t d, double base, int full) {
  posenc_sinusoidal_params pr = posenc_sinusoidal_default(d);
  size_t bytes;
  float *P;
  double *sv = (double *)malloc(d * sizeof(double));
  posenc_spectrum_info info;
  posenc_table t;
  pr.base = base;
  CHECK(posenc_sinusoidal_bytes(&pr, n, &bytes) == POSENC_OK, "bytes");
  P = (float *)malloc(bytes);
  CHECK(posenc_sinusoidal_table(&pr, 0, n, P, bytes) == POSENC_OK, "table");
  t = make_table(P, F32, n, d, 0);
  CHECK(spectrum(&t, sv, &info) == POSENC_OK, "sinusoidal %zu x %zu", n, d);
  if (full)
    CHECK(info.rank == d, "sinusoidal %zu x %zu base %g: rank %zu, want full", n, d, base, info.rank);
  else
    CHECK(info.rank < d && info.rank >= d / 4, "sinusoidal %zu x %zu base %g: rank %zu, want deficient", n, d,
          base, info.rank);
  /* energy: each sin/cos pair contributes n (sin^2 + cos^2 = 1); odd d adds a sin column */
  CHECK(info.energy >= (double)(n * (d / 2)) * (1.0 - 1e-6) &&
        info.energy <= (double)(n * (d / 2) + (d % 2 ? n : 0)) * (1.0 + 1e-6), "energy %.9g", info.energy);
  free(P); free(sv);
}

/* NumPy's matrix_rank agrees on each (checked when the cases were chosen): full rank when n is
 * large enough for every frequency to turn; rank-deficient at 64 x 64 (numpy: 20). */
static void test_sinusoidal(void) {
  sinusoidal_rank(256, 8, 10000.0, 1);
  sinusoidal_rank(4096, 16, 10000.0, 1);
  sinusoidal_rank(200, 9, 1000.0, 1);
  sinusoidal_rank(1000, 5, 10000.0, 1);
  sinusoidal_rank(64, 64, 10000.0, 0);
}

/* ---- bad input ----------------------------------------------------------------------------- */

static void test_bad_spectrum(void) {
  enum { N = 6, D = 4 };
  float P[N * D];
  double work[64], sv[D];
  posenc_spectrum_info info, before;
  posenc_table t = make_table(P, F32, N, D, 0), bad;
  size_t i;
  static const float specials[3] = {NAN, INFINITY, -INFINITY};
  for (i = 0; i < N * D; i++) P[i] = (float)lcg_unit();
  CHECK(posenc_spectrum_work(4) == 20 && posenc_spectrum_work(1) == 2, "work sizes");
  CHECK(posenc_spectrum_work(0) == 0 && posenc_spectrum_work(SIZE_MAX / 2) == 0 &&
        posenc_spectrum_work(SIZE_MAX) == 0 && posenc_spectrum_work(SIZE_MAX / 8) == 0, "work overflow -> 0");
  memset(&before, 0x5a, sizeof before);
#define EXPECT(call, want, what) do {                                                   \
    posenc_status st_;                                                                   \
    size_t e_;                                                                           \
    for (e_ = 0; e_ < D; e_++) sv[e_] = CANARY;                                          \
    info = before;                                                                       \
    st_ = (call);                                                                        \
    CHECK(st_ == (want), "%s: got %s", what, posenc_strerror(st_));                       \
    CHECK(memcmp(&info, &before, sizeof info) == 0, "%s: info written", what);           \
    for (e_ = 0; e_ < D; e_++) CHECK(sv[e_] == CANARY, "%s: sv written", what);          \
  } while (0)
  EXPECT(posenc_spectrum(NULL, work, 64, sv, &info), POSENC_ERR_NULL, "NULL table");
  EXPECT(posenc_spectrum(&t, NULL, 64, sv, &info), POSENC_ERR_NULL, "NULL work");
  bad = t; bad.data = NULL;
  EXPECT(posenc_spectrum(&bad, work, 64, sv, &info), POSENC_ERR_NULL, "NULL data");
  bad = t; bad.n_rows = 0;
  EXPECT(posenc_spectrum(&bad, work, 64, sv, &info), POSENC_ERR_SIZE, "0 rows");
  bad = t; bad.dim = 0;
  EXPECT(posenc_spectrum(&bad, work, 64, sv, &info), POSENC_ERR_SIZE, "0 dim");
  bad = t; bad.dtype = (posenc_dtype)7;
  EXPECT(posenc_spectrum(&bad, work, 64, sv, &info), POSENC_ERR_DTYPE, "dtype");
  bad = t; bad.row_stride = D - 1;
  EXPECT(posenc_spectrum(&bad, work, 64, sv, &info), POSENC_ERR_STRIDE, "stride");
  bad = t; bad.row_stride = SIZE_MAX / 2; bad.n_rows = 3;
  EXPECT(posenc_spectrum(&bad, work, 64, sv, &info), POSENC_ERR_OVERFLOW, "overflowing stride");
  EXPECT(posenc_spectrum(&t, work, 19, sv, &info), POSENC_ERR_BUFFER, "work 19 < 20");
  EXPECT(posenc_spectrum(&t, work, 0, sv, &info), POSENC_ERR_BUFFER, "work 0");
  EXPECT(posenc_spectrum(&t, (double *)(void *)P, 64, sv, &info), POSENC_ERR_ALIAS, "work is the table");
  EXPECT(posenc_spectrum(&t, work, 64, work + 10, &info), POSENC_ERR_ALIAS, "sv inside work");
  for (i = 0; i < 3; i++) {
    size_t at = (size_t)(i * 7 + 3) % (N * D);
    float keep = P[at];
    P[at] = specials[i];
    EXPECT(posenc_spectrum(&t, work, 64, sv, &info), POSENC_ERR_PARAM, "NaN/Inf");
    P[at] = keep;
  }
  { /* NaN in f16 and bf16, in the last element */
    uint16_t H[N * D];
    posenc_table th = make_table(H, F16, N, D, 0);
    for (i = 0; i < N * D; i++) H[i] = posenc_f32_to_f16(0.5f);
    H[N * D - 1] = 0x7e00;
    EXPECT(posenc_spectrum(&th, work, 64, sv, &info), POSENC_ERR_PARAM, "f16 NaN");
    th.dtype = BF16;
    H[N * D - 1] = 0x7f80;
    EXPECT(posenc_spectrum(&th, work, 64, sv, &info), POSENC_ERR_PARAM, "bf16 Inf");
  }
#undef EXPECT
  /* singular_values may be NULL; a stride gap holding NaN is never read */
  {
    float G[N * 6];
    posenc_table tg = make_table(G, F32, N, D, 6);
    posenc_spectrum_info a, b;
    for (i = 0; i < N * 6; i++) G[i] = i % 6 >= D ? NAN : P[(i / 6) * D + i % 6];
    CHECK(posenc_spectrum(&tg, work, 64, NULL, &a) == POSENC_OK, "stride gap with NaN, sv NULL");
    CHECK(posenc_spectrum(&t, work, 64, sv, &b) == POSENC_OK, "dense");
    CHECK(memcmp(&a, &b, sizeof a) == 0, "strided == dense");
  }
}

/* ---- .npy ---------------------------------------------------------------------------------- */

/* posenc_npy_parse on a heap copy of exactly len bytes (ASan sees any over-read). */
static posenc_status parse_exact(const void *bytes, size_t len, posenc_npy_info *info) {
  void *copy = malloc(len ? len : 1);
  posenc_status st;
  if (len) memcpy(copy, bytes, len);
  st = posenc_npy_parse(copy, len, info);
  free(copy);
  return st;
}

/* A hand-written header of any dict text, as NumPy pads it (version 1, 2 or 3). */
static size_t npy_image(const char *dict, int version, unsigned char *out) {
  size_t n = strlen(dict), prefix = version == 1 ? 10 : 12, total = (prefix + n + 1 + 63) / 64 * 64;
  size_t hlen = total - prefix;
  memcpy(out, "\x93NUMPY", 6);
  out[6] = (unsigned char)version;
  out[7] = 0;
  out[8] = (unsigned char)(hlen & 0xff);
  out[9] = (unsigned char)(hlen >> 8);
  if (version > 1) { out[10] = (unsigned char)(hlen >> 16); out[11] = (unsigned char)(hlen >> 24); }
  memcpy(out + prefix, dict, n);
  memset(out + prefix + n, ' ', hlen - n - 1);
  out[total - 1] = '\n';
  return total;
}

static void test_npy_round_trip(void) {
  static const char *const descrs[8] = {"<f4", "<f2", "<f8", "<i4", "<i8", "|u1", "|b1", "<u2"};
  static const size_t items[8] = {4, 2, 8, 4, 8, 1, 1, 2};
  static const size_t shapes[][4] = {{0}, {5}, {3, 4}, {2, 3, 4}, {1, 2, 3, 4}, {0, 7}, {100000, 4096},
                                     {(size_t)1 << 31, 3}, {1, 1, 1, 1}};
  static const size_t ndims[] = {0, 1, 2, 3, 4, 2, 2, 2, 4};
  unsigned char buf[512];
  size_t ti, si, len, i;
  for (ti = 0; ti < 8; ti++)
    for (si = 0; si < sizeof ndims / sizeof ndims[0]; si++) {
      posenc_npy_info info;
      size_t count = 1;
      uint64_t elems = 1;
      posenc_status st = posenc_npy_header((posenc_npy_type)ti, ndims[si], shapes[si], buf, sizeof buf, &len);
      for (i = 0; i < ndims[si]; i++) elems *= shapes[si][i];
      if (elems > (uint64_t)(SIZE_MAX / 2 / items[ti])) { /* 32-bit size_t: the array cannot exist */
        CHECK(st == POSENC_ERR_OVERFLOW, "header %s ndim %zu on a %u-bit size_t: %s", descrs[ti], ndims[si],
              (unsigned)(sizeof(size_t) * 8), posenc_strerror(st));
        continue;
      }
      CHECK(st == POSENC_OK, "header %s ndim %zu: %s", descrs[ti], ndims[si], posenc_strerror(st));
      CHECK(len % 64 == 0 && len <= POSENC_NPY_HEADER_MAX && buf[len - 1] == '\n', "header length %zu", len);
      CHECK(memcmp(buf + 10, "{'descr': '", 11) == 0 && memcmp(buf + 21, descrs[ti], 3) == 0, "dict text");
      st = parse_exact(buf, len, &info);
      CHECK(st == POSENC_OK, "parse back %s ndim %zu: %s", descrs[ti], ndims[si], posenc_strerror(st));
      CHECK(info.type == (posenc_npy_type)ti && info.item_size == items[ti] && info.ndim == ndims[si] &&
            info.data_offset == len && info.version == 1, "fields %s ndim %zu", descrs[ti], ndims[si]);
      for (i = 0; i < ndims[si]; i++) {
        CHECK(info.shape[i] == shapes[si][i], "shape[%zu]", i);
        count *= shapes[si][i];
      }
      CHECK(info.count == count && info.data_bytes == count * items[ti], "count %zu bytes %zu", info.count,
            info.data_bytes);
    }
  /* the exact bytes NumPy 1.24 writes for np.save(f, np.zeros((3, 4), np.float32)) */
  {
    static const size_t shape[2] = {3, 4};
    static const char want[] = "\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }";
    CHECK(posenc_npy_header(POSENC_NPY_F32, 2, shape, buf, sizeof buf, &len) == POSENC_OK && len == 128, "len");
    CHECK(memcmp(buf, want, sizeof want - 1) == 0, "NumPy's bytes");
    for (i = sizeof want - 1; i < 127; i++) CHECK(buf[i] == ' ', "padding at %zu", i);
  }
  /* header errors: nothing written */
  {
    static const size_t shape[5] = {1, 2, 3, 4, 5}, huge[2] = {SIZE_MAX / 4, 3};
    memset(buf, 0xcc, sizeof buf);
    len = 77;
    CHECK(posenc_npy_header(POSENC_NPY_F32, 5, shape, buf, sizeof buf, &len) == POSENC_ERR_SIZE, "ndim 5");
    CHECK(posenc_npy_header((posenc_npy_type)8, 1, shape, buf, sizeof buf, &len) == POSENC_ERR_PARAM, "type 8");
    CHECK(posenc_npy_header(POSENC_NPY_F32, 2, huge, buf, sizeof buf, &len) == POSENC_ERR_OVERFLOW, "overflow");
    CHECK(posenc_npy_header(POSENC_NPY_F32, 2, shape, buf, 127, &len) == POSENC_ERR_BUFFER, "cap 127");
    CHECK(posenc_npy_header(POSENC_NPY_F32, 2, NULL, buf, sizeof buf, &len) == POSENC_ERR_NULL, "shape NULL");
    CHECK(posenc_npy_header(POSENC_NPY_F32, 2, shape, NULL, sizeof buf, &len) == POSENC_ERR_NULL, "out NULL");
    CHECK(posenc_npy_header(POSENC_NPY_F32, 2, shape, buf, sizeof buf, NULL) == POSENC_ERR_NULL, "len NULL");
    CHECK(len == 77 && buf[0] == 0xcc && buf[127] == 0xcc, "nothing written on error");
  }
  /* NumPy-legal spellings and versions 2 and 3 */
  {
    static const char *const dicts[] = {
      "{'shape': (4, 2, 8), 'descr': '<f4', 'fortran_order': False}",
      "{\"descr\":\"<f4\",\"fortran_order\":False,\"shape\":(4,2,8,)}",
      "{ 'descr' : '<f4' ,\n 'fortran_order' : False , 'shape' : ( 4 , 2 , 8 ) , }"};
    int v;
    for (v = 1; v <= 3; v++)
      for (i = 0; i < 3; i++) {
        posenc_npy_info info;
        size_t n = npy_image(dicts[i], v, buf);
        CHECK(parse_exact(buf, n, &info) == POSENC_OK && info.ndim == 3 && info.shape[2] == 8 &&
              info.data_offset == n && info.version == v, "version %d spelling %zu", v, i);
      }
  }
}

struct bad_case {
  const char *dict;
  posenc_status status;
  posenc_npy_problem problem;
};

static void test_npy_malformed(void) {
  static const struct bad_case cases[] = {
    {"{'descr': '<f4', 'fortran_order': True, 'shape': (3,), }", POSENC_ERR_FORMAT, POSENC_NPY_PROBLEM_FORTRAN},
    {"{'descr': '<f4', 'fortran_order': 0, 'shape': (3,), }", POSENC_ERR_FORMAT, POSENC_NPY_PROBLEM_BOOL},
    {"{'descr': '<f4', 'fortran_order': Falsey, 'shape': (3,), }", POSENC_ERR_FORMAT, POSENC_NPY_PROBLEM_BOOL},
    {"{'descr': '>f4', 'fortran_order': False, 'shape': (3,), }", POSENC_ERR_FORMAT, POSENC_NPY_PROBLEM_BIG_ENDIAN},
    {"{'descr': '>i8', 'fortran_order': False, 'shape': (3,), }", POSENC_ERR_FORMAT, POSENC_NPY_PROBLEM_BIG_ENDIAN},
    {"{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }", POSENC_ERR_FORMAT, POSENC_NPY_PROBLEM_DTYPE},
    {"{'descr': '<f4 ', 'fortran_order': False, 'shape': (3,), }", POSENC_ERR_FORMAT, POSENC_NPY_PROBLEM_DTYPE},
    {"{'descr': '', 'fortran_order': False, 'shape': (3,), }", POSENC_ERR_FORMAT, POSENC_NPY_PROBLEM_DTYPE},
    {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,), }", POSENC_ERR_FORMAT,
     POSENC_NPY_PROBLEM_STRUCTURED},
    {"{'descr': '<f\\x34', 'fortran_order': False, 'shape': (3,), }", POSENC_ERR_FORMAT, POSENC_NPY_PROBLEM_SYNTAX},
    {"{'descr': <f4, 'fortran_order': False, 'shape': (3,), }", POSENC_ERR_FORMAT, POSENC_NPY_PROBLEM_SYNTAX},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,)", POSENC_ERR_FORMAT, POSENC_NPY_PROBLEM_SYNTAX},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), } x", POSENC_ERR_FORMAT, POSENC_NPY_PROBLEM_SYNTAX},
    {"{'descr': '<f4' 'fortran_order': False, 'shape': (3,), }", POSENC_ERR_FORMAT, POSENC_NPY_PROBLEM_SYNTAX},
    {"{'descr' '<f4', 'fortran_order': False, 'shape': (3,), }", POSENC_ERR_FORMAT, POSENC_NPY_PROBLEM_SYNTAX},
    {"('descr', '<f4')", POSENC_ERR_FORMAT, POSENC_NPY_PROBLEM_SYNTAX},
    {"", POSENC_ERR_FORMAT, POSENC_NPY_PROBLEM_SYNTAX},
    {"{'descr': '<f4', 'fortran_order': False, }", POSENC_ERR_FORMAT, POSENC_NPY_PROBLEM_KEY_MISSING},
    {"{'fortran_order': False, 'shape': (3,)}", POSENC_ERR_FORMAT, POSENC_NPY_PROBLEM_KEY_MISSING},
    {"{}", POSENC_ERR_FORMAT, POSENC_NPY_PROBLEM_KEY_MISSING},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1}", POSENC_ERR_FORMAT,
     POSENC_NPY_PROBLEM_KEY_UNKNOWN},
    {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", POSENC_ERR_FORMAT,
     POSENC_NPY_PROBLEM_KEY_TWICE},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (3)}", POSENC_ERR_FORMAT, POSENC_NPY_PROBLEM_SHAPE},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (3, -2)}", POSENC_ERR_FORMAT, POSENC_NPY_PROBLEM_SHAPE},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (03,)}", POSENC_ERR_FORMAT, POSENC_NPY_PROBLEM_SHAPE},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,,)}", POSENC_ERR_FORMAT, POSENC_NPY_PROBLEM_SHAPE},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': [3]}", POSENC_ERR_FORMAT, POSENC_NPY_PROBLEM_SHAPE},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (3.0,)}", POSENC_ERR_FORMAT, POSENC_NPY_PROBLEM_SHAPE},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1)}", POSENC_ERR_FORMAT,
     POSENC_NPY_PROBLEM_NDIM},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (18446744073709551616,)}", POSENC_ERR_OVERFLOW,
     POSENC_NPY_PROBLEM_TOO_LARGE},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904,)}", POSENC_ERR_OVERFLOW,
     POSENC_NPY_PROBLEM_TOO_LARGE},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 8)}", POSENC_ERR_OVERFLOW,
     POSENC_NPY_PROBLEM_TOO_LARGE},
    {"{'descr': '|u1', 'fortran_order': False, 'shape': (18446744073709551615,)}", POSENC_ERR_OVERFLOW,
     POSENC_NPY_PROBLEM_TOO_LARGE},
  };
  unsigned char buf[512], good[256];
  size_t c, cut, n_good;
  posenc_npy_info info, before;
  memset(&before, 0x3c, sizeof before);
  if (sizeof(size_t) < 8) return; /* the literals above assume a 64-bit size_t */
  for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    size_t n = npy_image(cases[c].dict, 1 + (int)(c % 3), buf);
    posenc_status st;
    info = before;
    st = parse_exact(buf, n, &info);
    CHECK(st == cases[c].status && info.problem == cases[c].problem, "case %zu %s: %s problem %d", c,
          cases[c].dict, posenc_strerror(st), (int)info.problem);
    CHECK(info.problem_at <= n, "case %zu: problem_at %zu", c, info.problem_at);
    CHECK(memcmp(&info, &before, offsetof(posenc_npy_info, problem)) == 0, "case %zu: info written", c);
  }
  /* a good header truncated at every byte; then every byte replaced by each interesting byte:
   * never a crash or an over-read, and a truncation is always refused */
  n_good = npy_image("{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }", 1, good);
  CHECK(parse_exact(good, n_good, &info) == POSENC_OK && info.data_bytes == 12, "good");
  for (cut = 0; cut < n_good; cut++) {
    posenc_status st = parse_exact(good, cut, &info);
    CHECK(st == POSENC_ERR_FORMAT, "cut at %zu: %s", cut, posenc_strerror(st));
    CHECK(info.problem == (cut < 6 ? POSENC_NPY_PROBLEM_MAGIC : POSENC_NPY_PROBLEM_TRUNCATED),
          "cut at %zu: problem %d", cut, (int)info.problem);
  }
  {
    static const unsigned char subst[] = {0, '\'', '"', '(', ')', ',', '}', '{', ':', '9', ' ', 0x80, 0xff, '\\'};
    size_t at, k, refused = 0;
    for (at = 0; at < n_good; at++)
      for (k = 0; k < sizeof subst; k++) {
        posenc_status st;
        memcpy(buf, good, n_good);
        if (buf[at] == subst[k]) continue;
        buf[at] = subst[k];
        st = parse_exact(buf, n_good, &info);
        refused += st != POSENC_OK;
        CHECK(st == POSENC_OK || st == POSENC_ERR_FORMAT || st == POSENC_ERR_OVERFLOW, "byte %zu", at);
        if (st == POSENC_OK) CHECK(info.data_offset + info.data_bytes >= info.data_offset && info.data_offset <= n_good, "offset %zu", at);
      }
    CHECK(refused > n_good, "most mutations refused (%zu)", refused);
  }
  /* magic, version */
  memcpy(buf, good, n_good);
  buf[3] = 'X';
  CHECK(parse_exact(buf, n_good, &info) == POSENC_ERR_FORMAT && info.problem == POSENC_NPY_PROBLEM_MAGIC, "magic");
  memcpy(buf, good, n_good);
  buf[6] = 4;
  CHECK(parse_exact(buf, n_good, &info) == POSENC_ERR_FORMAT && info.problem == POSENC_NPY_PROBLEM_VERSION, "4.0");
  buf[6] = 0;
  CHECK(parse_exact(buf, n_good, &info) == POSENC_ERR_FORMAT && info.problem == POSENC_NPY_PROBLEM_VERSION, "0.0");
  buf[6] = 1; buf[7] = 1;
  CHECK(parse_exact(buf, n_good, &info) == POSENC_ERR_FORMAT && info.problem == POSENC_NPY_PROBLEM_VERSION, "1.1");
  memcpy(buf, good, n_good);
  buf[8] = 0xff; buf[9] = 0xff;
  CHECK(parse_exact(buf, n_good, &info) == POSENC_ERR_FORMAT && info.problem == POSENC_NPY_PROBLEM_TRUNCATED,
        "header length past the end");
  { /* version 2 with a 4 GiB header length: refused, not read */
    size_t n = npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 2, buf);
    buf[11] = 0xff;
    CHECK(parse_exact(buf, n, &info) == POSENC_ERR_FORMAT && info.problem == POSENC_NPY_PROBLEM_TRUNCATED, "v2 huge");
  }
  CHECK(posenc_npy_parse(NULL, 10, &info) == POSENC_ERR_NULL, "NULL buf");
  CHECK(posenc_npy_parse(good, n_good, NULL) == POSENC_ERR_NULL, "NULL info");
}

int main(void) {
  test_rank_outer_products();
  test_known_singular_values();
  test_designed_spectrum();
  test_sinusoidal();
  test_bad_spectrum();
  test_npy_round_trip();
  test_npy_malformed();
  return tl_summary();
}
