/* Compute a canonical case with the active backend and hash it (XXH3-64 of the LE image). */
#ifndef POSENC_GOLDEN_CHECK_H
#define POSENC_GOLDEN_CHECK_H

#include <stdlib.h>
#include "golden_cases.h"
#include "testlib.h"

/* Computes a case into out (out_bytes) with the active backend; *bytes gets the size it needs
 * (with out NULL, only that is computed). */
static inline posenc_status golden_run(const golden_case *gc, void *out, size_t out_bytes, size_t *bytes) {
  posenc_sinusoidal_params prm = posenc_sinusoidal_default(gc->dim);
  posenc_status st;
  prm.base = gc->base; prm.layout = gc->layout; prm.dtype = gc->dtype;
  if ((st = posenc_sinusoidal_bytes(&prm, gc->n_rows, bytes)) != POSENC_OK || !out) return st;
  return gc->positions ? posenc_sinusoidal_rows(&prm, gc->positions, gc->n_rows, out, out_bytes)
                       : posenc_sinusoidal_table(&prm, gc->start, gc->n_rows, out, out_bytes);
}

/* The bytes a case writes (0 if it fails: then so does the run). */
static inline size_t golden_bytes(const golden_case *gc) {
  size_t bytes = 0;
  golden_run(gc, NULL, 0, &bytes);
  return bytes;
}

/* Computes a case into a 64-byte-aligned table (*table; so that outputs of
 * POSENC_STREAM_MIN_BYTES and more take the non-temporal path) and returns the malloc'ed block
 * to free, or NULL; *status gets the library's answer. */
static inline void *golden_compute(const golden_case *gc, size_t *bytes, posenc_status *status, void **table) {
  unsigned char *block, *out;
  *status = golden_run(gc, NULL, 0, bytes);
  if (*status != POSENC_OK || !(block = (unsigned char *)malloc(*bytes + 64))) return NULL;
  out = block + (64 - (uintptr_t)block % 64) % 64;
  *status = golden_run(gc, out, *bytes, bytes);
  if (*status != POSENC_OK) { free(block); return NULL; }
  *table = out;
  return block;
}

static inline uint64_t golden_hash(const golden_case *gc, const void *table, size_t bytes) {
  return tl_xxh3_le(table, bytes, posenc_dtype_size(gc->dtype));
}

/* Checks every golden case on the active backend but those whose dtype is skip_dtype (-1: none);
 * returns the number of mismatches. */
static inline int golden_check_active_but(int skip_dtype) {
  size_t i;
  int bad = 0;
  for (i = 0; i < GOLDEN_NCASES; i++) {
    size_t bytes = 0;
    posenc_status st;
    void *table = NULL, *t;
    uint64_t h;
    if ((int)golden_cases[i].dtype == skip_dtype) continue;
    t = golden_compute(&golden_cases[i], &bytes, &st, &table);
    h = t ? golden_hash(&golden_cases[i], table, bytes) : 0;
    CHECK(t != NULL && h == golden_cases[i].xxh3, "%s: golden case '%s': status %s, xxh3 0x%016llx, want 0x%016llx",
          posenc_isa_name(posenc_isa_active()), golden_cases[i].name, posenc_strerror(st),
          (unsigned long long)h, (unsigned long long)golden_cases[i].xxh3);
    if (!t || h != golden_cases[i].xxh3) bad++;
    free(t);
  }
  return bad;
}
static inline int golden_check_active(void) { return golden_check_active_but(-1); }

#endif
