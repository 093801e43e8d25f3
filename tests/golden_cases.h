/* Canonical outputs and their XXH3-64 goldens (of the little-endian byte image). One stored value
 * per case holds on every backend and every ISA. A golden changes only when the math changes on
 * purpose, and the commit that changes it says why. */
#ifndef POSENC_GOLDEN_CASES_H
#define POSENC_GOLDEN_CASES_H

#include "posenc.h"

typedef struct golden_case {
  const char *name;
  size_t dim;
  double base;
  posenc_layout layout;
  posenc_dtype dtype;
  int32_t start;          /* used when positions is NULL */
  size_t n_rows;
  const int32_t *positions;
  uint64_t xxh3;
} golden_case;

static const int32_t golden_positions[] = {
  0, 1, 15, 16, 17, 31, 32, -1, -16, -17, 1000, 4095, 65535, 131071, 131072, 1 << 20,
  16777215, 16777216, 100000007, 1 << 30, 2147483646, 2147483647, -2147483647 - 1, 7, 7};

#define GOLDEN_NPOS (sizeof golden_positions / sizeof golden_positions[0])

static const golden_case golden_cases[] = {
  {"interleaved d128 n300", 128, 10000.0, POSENC_LAYOUT_INTERLEAVED, POSENC_DTYPE_F32, 0, 300, NULL, 0x86e13a12965b6da8ull},
  {"interleaved d128 start 16777000", 128, 10000.0, POSENC_LAYOUT_INTERLEAVED, POSENC_DTYPE_F32, 16777000, 300, NULL, 0xa9f8644c5299f563ull},
  {"split d128 n300", 128, 10000.0, POSENC_LAYOUT_SPLIT, POSENC_DTYPE_F32, 0, 300, NULL, 0xaadfd480f625061aull},
  {"interleaved d4 (seed 003)", 4, 10000.0, POSENC_LAYOUT_INTERLEAVED, POSENC_DTYPE_F32, 0, 3, NULL, 0x0d2a6f23ed6ea8aeull},
  {"interleaved d37 odd", 37, 10000.0, POSENC_LAYOUT_INTERLEAVED, POSENC_DTYPE_F32, 3, 70, NULL, 0x74839e76016e4da0ull},
  {"split d37 odd", 37, 10000.0, POSENC_LAYOUT_SPLIT, POSENC_DTYPE_F32, 3, 70, NULL, 0xd40615ecb6e6a80bull},
  {"interleaved d1", 1, 10000.0, POSENC_LAYOUT_INTERLEAVED, POSENC_DTYPE_F32, 0, 20, NULL, 0x8bb00256e9619196ull},
  {"split d1 zero", 1, 10000.0, POSENC_LAYOUT_SPLIT, POSENC_DTYPE_F32, 0, 20, NULL, 0x86da9cd1ba60ecd5ull},
  {"interleaved d512 base 500000", 512, 500000.0, POSENC_LAYOUT_INTERLEAVED, POSENC_DTYPE_F32, -40, 100, NULL, 0x9c37dfab9230b966ull},
  {"interleaved d8192", 8192, 10000.0, POSENC_LAYOUT_INTERLEAVED, POSENC_DTYPE_F32, 1000, 20, NULL, 0x42b43a3236dc3619ull},
  {"split d96 base 1e6 positions", 96, 1e6, POSENC_LAYOUT_SPLIT, POSENC_DTYPE_F32, 0, GOLDEN_NPOS, golden_positions, 0x69612ec1945eefbeull},
  {"interleaved d64 positions", 64, 10000.0, POSENC_LAYOUT_INTERLEAVED, POSENC_DTYPE_F32, 0, GOLDEN_NPOS, golden_positions, 0xd894b9feb8a32ee9ull},
  {"interleaved d128 f16", 128, 10000.0, POSENC_LAYOUT_INTERLEAVED, POSENC_DTYPE_F16, 0, 300, NULL, 0x3ae65041737f9ab6ull},
  {"split d128 f16", 128, 10000.0, POSENC_LAYOUT_SPLIT, POSENC_DTYPE_F16, 5, 300, NULL, 0x8784b092bdbc85e2ull},
  {"interleaved d128 bf16", 128, 10000.0, POSENC_LAYOUT_INTERLEAVED, POSENC_DTYPE_BF16, 0, 300, NULL, 0x7b98d986b6eadd8full},
  {"split d130 bf16", 130, 10000.0, POSENC_LAYOUT_SPLIT, POSENC_DTYPE_BF16, 5, 300, NULL, 0x374fb5b5768502cdull},
  {"interleaved d64 base 2", 64, 2.0, POSENC_LAYOUT_INTERLEAVED, POSENC_DTYPE_F32, 0, 64, NULL, 0xf41cfde02273d606ull},
  {"interleaved d64 base 0.5", 64, 0.5, POSENC_LAYOUT_INTERLEAVED, POSENC_DTYPE_F32, 0, 64, NULL, 0x897eff07672a5dd7ull},
};

#define GOLDEN_NCASES (sizeof golden_cases / sizeof golden_cases[0])

#endif
