/* sleef_stream_writer - the plain program a user would write to save a sinusoidal table with
 * SLEEF: the peer of `posenc table sinusoidal --positions N --dim D -o FILE` in
 * bench/bench_cli_stream.py, timed as a whole process.
 *
 *   sleef_stream_writer N D FILE
 *
 * Writes the same bytes' worth as posenc's default table (.npy, float32, interleaved rows
 * sin(p w_0), cos(p w_0), sin(p w_1), ...; w_i = 10000^(-2i/D)): the usual float recipe, angle
 * fl32(p * w_i) into Sleef_sincosf8_u35avx2, a chunk of rows at a time, fwrite, fclose. No
 * fsync and no rename: the file is written in place. D must be a multiple of 16. Built with
 * -mavx2; the script runs it only where bench_table's SLEEF peers run. */
#include <immintrin.h>
#include <math.h>
#include <sleef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CHUNK_ROWS = 512 }; /* 256 KiB of rows at D = 128, as posenc's chunks */

/* s0..s7, c0..c7 -> s0 c0 s1 c1 ... s7 c7 */
static void store_interleaved(float *dst, __m256 s, __m256 c) {
  __m256 lo = _mm256_unpacklo_ps(s, c), hi = _mm256_unpackhi_ps(s, c);
  _mm256_storeu_ps(dst, _mm256_permute2f128_ps(lo, hi, 0x20));
  _mm256_storeu_ps(dst + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
}

static void sincos_row(float *row, float p, const float *freq, size_t nfreq) {
  __m256 vp = _mm256_set1_ps(p);
  size_t i;
  for (i = 0; i < nfreq; i += 8) {
    Sleef___m256_2 sc = Sleef_sincosf8_u35avx2(_mm256_mul_ps(vp, _mm256_loadu_ps(freq + i)));
    store_interleaved(row + 2 * i, sc.x, sc.y);
  }
}

/* A .npy 1.0 header for (n, d) <f4, padded to 128 bytes as NumPy (and posenc) pad it. */
static int write_npy_header(FILE *f, size_t n, size_t d) {
  char header[128];
  int len = snprintf(header + 10, sizeof header - 10,
                     "{'descr': '<f4', 'fortran_order': False, 'shape': (%zu, %zu), }", n, d);
  if (len < 0 || len > 117) return -1;
  memcpy(header, "\x93NUMPY\x01\x00", 8);
  header[8] = 118; /* header length, little-endian */
  header[9] = 0;
  memset(header + 10 + len, ' ', (size_t)(117 - len));
  header[127] = '\n';
  return fwrite(header, 1, sizeof header, f) == sizeof header ? 0 : -1;
}

int main(int argc, char **argv) {
  size_t n, d, nfreq, i, p;
  float *freq, *chunk;
  FILE *f;
  if (argc != 4 || (n = strtoul(argv[1], NULL, 10)) == 0 || (d = strtoul(argv[2], NULL, 10)) % 16 != 0 || !d) {
    fprintf(stderr, "usage: sleef_stream_writer N D FILE (D a multiple of 16)\n");
    return 2;
  }
  nfreq = d / 2;
  freq = malloc(nfreq * sizeof *freq);
  chunk = malloc(CHUNK_ROWS * d * sizeof *chunk);
  if (!freq || !chunk || !(f = fopen(argv[3], "wb"))) return 1;
  for (i = 0; i < nfreq; i++) freq[i] = powf(10000.0f, -2.0f * (float)i / (float)d);
  if (write_npy_header(f, n, d) != 0) return 1;
  for (p = 0; p < n; p += CHUNK_ROWS) {
    size_t rows = n - p < CHUNK_ROWS ? n - p : CHUNK_ROWS, r;
    for (r = 0; r < rows; r++) sincos_row(chunk + r * d, (float)(p + r), freq, nfreq);
    if (fwrite(chunk, sizeof *chunk * d, rows, f) != rows) return 1;
  }
  if (fclose(f) != 0) return 1;
  free(freq);
  free(chunk);
  return 0;
}
