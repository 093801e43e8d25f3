/* posenc's implementation in a file built with unsafe float flags (-Ofast, -ffast-math,
 * -fassociative-math, -ffinite-math-only, ...; tests/check_fast_math.py builds it each way, with
 * and without them): posenc's pragmas keep its own arithmetic exact, so the results must be the
 * bits of a build without the flags. Checks the sinusoidal and RoPE goldens and that NaN and
 * infinite input is still refused (-ffinite-math-only must not fold those checks away), and prints
 * a digest of further results (biases, scales, learned, resized, index and 2-D tables, spectrum)
 * for the script to compare between builds. The self-test must find posenc's arithmetic exact:
 * at most the flush-to-zero modes that linking with -ffast-math sets (POSENC_ERR_SUBNORMAL, which
 * changes subnormals only, and no input here is one). TEST_FM_HEADER_ONLY: posenc.h alone (scalar), else
 * posenc_simd.h with the backend the flags allow. Everything this file computes itself is integer
 * arithmetic, so its own flags do not matter. */
#define POSENC_IMPLEMENTATION
#if defined(TEST_FM_HEADER_ONLY)
#  include "posenc.h"
#else
#  include "posenc_simd.h"
#endif
#include "golden_check.h"
#include "golden_rope.h"

static XXH3_state_t fm_digest;
static void fm_add(const void *p, size_t n) { XXH3_64bits_update(&fm_digest, p, n); }
static void fm_add_status(posenc_status st) { int s = (int)st; fm_add(&s, sizeof s); }
static double fm_bitsd(uint64_t u) { double d; memcpy(&d, &u, 8); return d; }
/* NaN by its bits: whatever the compiler assumes of NaN, this comparison is integer. */
static int fm_is_nan(double x) {
  uint64_t u;
  memcpy(&u, &x, 8);
  return (u & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (u & 0x000fffffffffffffull) != 0;
}

/* NaN and infinite arguments: the statuses and NaN results the API documents. */
static void refusals(void) {
  const double nan = fm_bitsd(0x7ff8000000000000ull), inf = fm_bitsd(0x7ff0000000000000ull);
  posenc_sinusoidal_params prm = posenc_sinusoidal_default(8);
  posenc_rope_config cfg = posenc_rope_default(64);
  POSENC_ROPE_STORAGE(64) rope_st;
  float out[8], slopes[4];
  prm.base = nan;
  CHECK(posenc_sinusoidal_table(&prm, 0, 1, out, sizeof out) == POSENC_ERR_BASE, "sinusoidal base NaN accepted");
  prm.base = inf;
  CHECK(posenc_sinusoidal_table(&prm, 0, 1, out, sizeof out) == POSENC_ERR_BASE, "sinusoidal base inf accepted");
  cfg.base = nan;
  CHECK(posenc_rope_init(&rope_st.rope, sizeof rope_st, &cfg) == POSENC_ERR_BASE, "rope base NaN accepted");
  cfg = posenc_rope_default(64);
  cfg.scaling = POSENC_ROPE_SCALING_LINEAR;
  cfg.factor = inf;
  CHECK(posenc_rope_init(&rope_st.rope, sizeof rope_st, &cfg) == POSENC_ERR_PARAM, "rope factor inf accepted");
  CHECK(posenc_alibi_slopes(4, nan, slopes) == POSENC_ERR_PARAM, "ALiBi max_bias NaN accepted");
  CHECK(posenc_learned_init(1, nan, 2, 4, POSENC_DTYPE_F32, 0, out, sizeof out) == POSENC_ERR_PARAM,
        "learned std NaN accepted");
  CHECK(fm_is_nan(posenc_yarn_mscale(nan, 1.0)), "yarn_mscale(NaN) is not NaN");
  CHECK(fm_is_nan(posenc_yarn_mscale(inf, 1.0)), "yarn_mscale(inf) is not NaN");
  CHECK(fm_is_nan(posenc_deepseek_softmax_scale(128, 4.0, 1e308)), "deepseek scale overflow is not NaN");
  CHECK(fm_is_nan(posenc_deepseek_softmax_scale(128, nan, 1.0)), "deepseek scale of NaN is not NaN");
}

/* NaN in, NaN out, through every conversion the rotation makes (rotated pairs and the dims past
 * rotary_dim; f32, f16 and bf16 in and out): a NaN test that the file's -ffinite-math-only folded
 * away rounded a NaN to bf16 Inf. Payloads may differ between backends (README, "Contracts"),
 * so each output is judged by its bits' class alone. */
static void nan_stays_nan(void) {
  enum { D = 24, HEADS = 3, N = D * HEADS };
  static const uint32_t nans[] = {0x7f800001u, 0x7fc00000u, 0xffc00001u, 0x7fbfffffu, 0xff800100u};
  static const posenc_dtype dts[] = {POSENC_DTYPE_F32, POSENC_DTYPE_F16, POSENC_DTYPE_BF16};
  posenc_rope_config cfg = posenc_rope_default(D);
  POSENC_ROPE_STORAGE(D) rope_st;
  posenc_rope_positions pos = {1, 1, NULL, 0};
  unsigned char in[N * 4], out[N * 4];
  size_t i, a, b;
  cfg.rotary_dim = 16;
  CHECK(posenc_rope_init(&rope_st.rope, sizeof rope_st, &cfg) == POSENC_OK, "rope init");
  for (a = 0; a < 3; a++)
    for (b = 0; b < 3; b++) {
      size_t ia = posenc_dtype_size(dts[a]), ib = posenc_dtype_size(dts[b]);
      posenc_rope_tensor q_in = {in, dts[a], HEADS, 0, 0, 0}, q_out = {out, dts[b], HEADS, 0, 0, 0};
      int bad = 0;
      for (i = 0; i < N; i++) {
        uint32_t u = nans[i % (sizeof nans / sizeof nans[0])];
        uint16_t h = (uint16_t)(dts[a] == POSENC_DTYPE_F16 ? ((u >> 16) & 0x8000u) | 0x7c00u | (u & 0x3ffu) | 1u
                                                           : u >> 16 | 1u); /* f16, bf16: NaN as well */
        if (ia == 4) memcpy(in + i * 4, &u, 4);
        else memcpy(in + i * 2, &h, 2);
      }
      memset(out, 0, sizeof out);
      CHECK(posenc_rope_apply_out(&rope_st.rope, NULL, &pos, &q_in, &q_out, NULL, NULL, POSENC_ROPE_FORWARD) ==
                POSENC_OK, "apply_out %d -> %d", (int)dts[a], (int)dts[b]);
      for (i = 0; i < N; i++) {
        uint32_t u = 0;
        uint16_t h = 0;
        int is_nan;
        if (ib == 4) { memcpy(&u, out + i * 4, 4); is_nan = (u & 0x7fffffffu) > 0x7f800000u; }
        else {
          memcpy(&h, out + i * 2, 2);
          is_nan = dts[b] == POSENC_DTYPE_F16 ? (h & 0x7fffu) > 0x7c00u : (h & 0x7fffu) > 0x7f80u;
        }
        if (!is_nan && bad++ < 3) CHECK(0, "NaN in (dtype %d) -> %s out (dtype %d), element %zu: 0x%x", (int)dts[a],
                                        "not NaN", (int)dts[b], i, ib == 4 ? (unsigned)u : (unsigned)h);
      }
    }
}

/* Results without goldens of their own: hashed, for the script to compare between builds. */
static void digest(void) {
  static float f[64 * 48];
  static double work[48 * 49], sv[48];
  int32_t buckets[300];
  float slopes[12];
  double d[6];
  posenc_t5_buckets t5 = {32, 128, 1};
  posenc_sincos_2d_params p2 = posenc_sincos_2d_default(32, 6, 5);
  posenc_sinusoidal_params txl = posenc_sinusoidal_default(48);
  posenc_table tab;
  posenc_spectrum_info info;
  size_t h;
  for (h = 1; h <= 12; h++) {
    fm_add_status(posenc_alibi_slopes(h, 8.0, slopes));
    fm_add(slopes, h * sizeof slopes[0]);
  }
  fm_add_status(posenc_alibi_slopes(12, 3.5, slopes));
  fm_add(slopes, sizeof slopes);
  fm_add_status(posenc_t5_bucket_range(&t5, -150, 300, buckets));
  fm_add(buckets, sizeof buckets);
  t5.bidirectional = 0;
  fm_add_status(posenc_t5_bucket_range(&t5, -299, 300, buckets));
  fm_add(buckets, sizeof buckets);
  fm_add_status(posenc_deberta_bucket_range(256, 512, -150, 300, buckets));
  fm_add(buckets, sizeof buckets);
  d[0] = posenc_logn_scale(100000, 8192);
  d[1] = posenc_yarn_mscale(40.0, 1.0);
  d[2] = posenc_yarn_mscale(4.0, 0.707);
  d[3] = posenc_deepseek_softmax_scale(192, 40.0, 1.0);
  d[4] = posenc_llama4_attn_scale(123456, 8192, 0.1);
  d[5] = posenc_logn_scale(5000, 2048);
  fm_add(d, sizeof d);
  fm_add_status(posenc_logn_scales(2048, 2000, 64, f));
  fm_add(f, 64 * sizeof f[0]);
  fm_add_status(posenc_learned_init(42, 0.0, 64, 48, POSENC_DTYPE_F32, 0, f, sizeof f));
  fm_add(f, sizeof f);
  tab.data = f; tab.dtype = POSENC_DTYPE_F32; tab.n_rows = 64; tab.dim = 48; tab.row_stride = 0;
  fm_add_status(posenc_spectrum(&tab, work, sizeof work / sizeof work[0], sv, &info));
  fm_add(sv, sizeof sv);
  fm_add(&info.rank, sizeof info.rank);
  fm_add(&info.energy, sizeof info.energy);
  fm_add(&info.entropy_rank, sizeof info.entropy_rank);
  {
    static float resized[40 * 48];
    fm_add_status(posenc_table_resize(&tab, 40, 0, POSENC_DTYPE_F32, 0, resized, sizeof resized));
    fm_add(resized, sizeof resized);
    fm_add_status(posenc_table_resize(&tab, 40, 1, POSENC_DTYPE_F32, 0, resized, sizeof resized));
    fm_add(resized, sizeof resized);
  }
  fm_add_status(posenc_index_table(POSENC_INDEX_NORMALIZED, 1000, -20, 64, 3, POSENC_DTYPE_F32, 0, f, sizeof f));
  fm_add(f, 64 * 3 * sizeof f[0]);
  fm_add_status(posenc_sincos_2d(&p2, f, sizeof f));
  fm_add(f, 30 * 32 * sizeof f[0]);
  txl.layout = POSENC_LAYOUT_SPLIT;
  fm_add_status(posenc_txl_relative(&txl, 40, 0, f, sizeof f));
  fm_add(f, 40 * 48 * sizeof f[0]);
}

int main(void) {
  const unsigned modes = POSENC_SELFTEST_SUBNORMALS | POSENC_SELFTEST_FTZ | POSENC_SELFTEST_DAZ;
  posenc_selftest_result r;
  posenc_status st = posenc_selftest_report(&r);
  printf("backend: %s\n", posenc_isa_name(posenc_isa_active()));
  CHECK((st == POSENC_OK || st == POSENC_ERR_SUBNORMAL) && r.normal_exact == 1 && (r.failed & ~modes) == 0,
        "self-test: %s, failed 0x%x, normal_exact %d", posenc_strerror(st), r.failed, r.normal_exact);
  golden_check_active();
  rope_golden_check_active();
  refusals();
  nan_stays_nan();
  XXH3_64bits_reset(&fm_digest);
  digest();
  printf("digest: 0x%016llx\n", (unsigned long long)XXH3_64bits_digest(&fm_digest));
  return tl_summary();
}
