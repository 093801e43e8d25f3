/* Tiny test harness shared by posenc's tests: counts checks, prints failures, ends with the
 * plain summary line "N passed, N failed". */
#ifndef POSENC_TESTLIB_H
#define POSENC_TESTLIB_H

#include <stdio.h>
#include <stdint.h>
#include <string.h>

static int tl_passed, tl_failed;

#define CHECK(cond, ...) do {                                              \
    if (cond) { tl_passed++; }                                             \
    else { tl_failed++; printf("FAIL %s:%d: ", __FILE__, __LINE__);        \
           printf(__VA_ARGS__); printf("\n"); }                            \
  } while (0)

static inline int tl_summary(void) {
  printf("%d passed, %d failed\n", tl_passed, tl_failed);
  return tl_failed ? 1 : 0;
}

/* Little-endian byte image of 4- or 2-byte elements, so that one hash holds on any host. */
static inline void tl_le_image(const void *src, size_t n_bytes, size_t elem, unsigned char *dst) {
  const uint16_t one = 1;
  size_t i, b;
  if (*(const unsigned char *)&one == 1) { memcpy(dst, src, n_bytes); return; }
  for (i = 0; i < n_bytes; i += elem)
    for (b = 0; b < elem; b++) dst[i + b] = ((const unsigned char *)src)[i + elem - 1 - b];
}

#endif
