/* posenc baked-table example: what firmware does with tables generated on the host by
 * 'posenc table ... --format c' and 'posenc rope table ... --format c' (the headers in examples/baked/).
 *
 * At start-up each baked array is checked twice:
 *   1. integrity: XXH3-64 of its little-endian byte image equals the header's _XXH3 macro (the
 *      image is built element by element, so this holds on a big-endian target too);
 *   2. truth: posenc recomputes the same table from the parameters in the header's "regenerate
 *      with" line, and the bits must match. A wrong generator, a stale header or a posenc that
 *      computes differently on this target all fail here.
 * Prints a short report and returns 0 when everything matches, 1 otherwise.
 *
 * Bare-metal ready: no files, no malloc, no getenv; static buffers; printf only for the report
 * (newlib with semihosting on Cortex-M). xxhash.h is used header-only (XXH_INLINE_ALL).
 * Run: build/examples/baked */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "posenc.h"

#include "baked/rope_llama3_64x32_f16.h"
#include "baked/sinusoidal_64x32_f32.h"

/* ---- XXH3 of the little-endian image ------------------------------------------------------- */

/* count elements of elem_size (2 or 4) bytes, hashed as their little-endian bytes through a
 * small buffer: the same value on either byte order. */
static XXH64_hash_t hash_le(const void *data, size_t count, size_t elem_size) {
  static XXH3_state_t state; /* static: XXH3_createState would malloc */
  unsigned char chunk[256];
  const unsigned char *p = (const unsigned char *)data;
  size_t i, n = 0;
  XXH3_64bits_reset(&state);
  for (i = 0; i < count; i++, p += elem_size) {
    uint32_t v = 0;
    size_t b;
    if (elem_size == 2) {
      uint16_t h;
      memcpy(&h, p, 2);
      v = h;
    } else {
      memcpy(&v, p, 4);
    }
    for (b = 0; b < elem_size; b++) chunk[n++] = (unsigned char)(v >> (8 * b));
    if (n == sizeof chunk) {
      XXH3_64bits_update(&state, chunk, n);
      n = 0;
    }
  }
  XXH3_64bits_update(&state, chunk, n);
  return XXH3_64bits_digest(&state);
}

/* ---- the checks ------------------------------------------------------------------------------ */

static int failures;

static void report(const char *what, int ok, const char *detail) {
  printf("%-34s %s%s%s%s\n", what, ok ? "ok" : "FAIL", *detail ? "  (" : "", detail, *detail ? ")" : "");
  failures += !ok;
}

static void check_hash(const char *what, const void *table, size_t count, size_t elem_size,
                       XXH64_hash_t expected) {
  XXH64_hash_t got = hash_le(table, count, elem_size);
  char detail[64];
  /* two halves: newlib-nano's printf has no %llx */
  snprintf(detail, sizeof detail, "XXH3 %08lx%08lx", (unsigned long)(got >> 32),
           (unsigned long)(got & 0xffffffffu));
  report(what, got == expected, detail);
}

static void check_status(const char *what, posenc_status st) {
  if (st != POSENC_OK) report(what, 0, posenc_strerror(st));
}

/* The sinusoidal table: posenc table sinusoidal --positions 64 --dim 32 --base 10000 --start 0
 * --layout interleaved --dtype f32 */
static void check_sinusoidal(void) {
  static float table[baked_sinusoidal_ROWS][baked_sinusoidal_COLS];
  posenc_sinusoidal_params params = posenc_sinusoidal_default(baked_sinusoidal_COLS);
  posenc_status st;
  check_hash("sinusoidal 64x32 f32: checksum", baked_sinusoidal, baked_sinusoidal_ROWS * baked_sinusoidal_COLS,
             sizeof baked_sinusoidal[0][0], baked_sinusoidal_XXH3);
  params.base = 10000.0;
  params.layout = POSENC_LAYOUT_INTERLEAVED;
  params.dtype = POSENC_DTYPE_F32;
  st = posenc_sinusoidal_table(&params, 0, baked_sinusoidal_ROWS, table, sizeof table);
  check_status("sinusoidal 64x32 f32: posenc", st);
  if (st == POSENC_OK)
    report("sinusoidal 64x32 f32: recomputed", memcmp(table, baked_sinusoidal, sizeof table) == 0, "");
}

/* The RoPE cache: posenc rope table --head-dim 32 --base 500000 --scaling llama3 --factor 8
 * --original-max-pos 8192 (low/high freq factors 1 and 4) --rows 64 --start 0 --layout half
 * --dtype f16 */
static void check_rope(void) {
  static POSENC_ROPE_STORAGE(32) rope; /* 1 KiB: the rope of a 32-dim head */
  static uint16_t cache[baked_rope_ROWS][baked_rope_COLS];
  const posenc_rope_cache_spec spec = {POSENC_ROPE_CACHE_HALF, POSENC_DTYPE_F16, 0};
  posenc_rope_config config = posenc_rope_default(32);
  posenc_status st;
  check_hash("rope llama3 64x32 f16: checksum", baked_rope, baked_rope_ROWS * baked_rope_COLS,
             sizeof baked_rope[0][0], baked_rope_XXH3);
  config.base = 500000.0;
  config.scaling = POSENC_ROPE_SCALING_LLAMA3;
  config.factor = 8.0;
  config.original_max_pos = 8192;
  config.low_freq_factor = 1.0;
  config.high_freq_factor = 4.0;
  st = posenc_rope_init(&rope.rope, sizeof rope, &config);
  if (st == POSENC_OK) st = posenc_rope_cache_table(&rope.rope, &spec, 0, baked_rope_ROWS, cache, sizeof cache);
  check_status("rope llama3 64x32 f16: posenc", st);
  if (st == POSENC_OK)
    report("rope llama3 64x32 f16: recomputed", memcmp(cache, baked_rope, sizeof cache) == 0, "");
}

int main(void) {
  printf("posenc %s baked tables, backend %s\n", POSENC_VERSION_STRING, posenc_isa_name(posenc_isa_active()));
  check_sinusoidal();
  check_rope();
  printf("%s\n", failures ? "baked tables: FAILED" : "baked tables: all ok");
  return failures ? 1 : 0;
}
