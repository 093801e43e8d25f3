/* embed_loops.c - the plain C peers of bench_embed, compiled once per variant with its own flags
 * and a suffix on every name (EMBED_LOOPS_VARIANT: scalar = -O2 -fno-tree-vectorize, o3 = -O3
 * autovectorized for the baseline ISA). No contraction (the project's -ffp-contract=off), so the
 * masked add gives posenc's bits for f32 without dropout. */
#include <stddef.h>
#include "embed_loops.h"

#ifndef EMBED_LOOPS_VARIANT
#  error "compile with -DEMBED_LOOPS_VARIANT=scalar|o3"
#endif
#define EL_CAT2(a, b) a##_##b
#define EL_CAT(a, b) EL_CAT2(a, b)
#define EL(name) EL_CAT(name, EMBED_LOOPS_VARIANT)

/* y[t][j] = x[t][j]*scale + P[start+t][j], dense rows of d */
void EL(embed_loop)(float *restrict y, const float *restrict x, const float *restrict P, size_t tokens,
                    size_t d, float scale) {
  size_t i, n = tokens * d;
  for (i = 0; i < n; i++) {
    float v = x[i] * scale;
    y[i] = v + P[i];
  }
}

/* STREAM add: c = a + b */
void EL(stream_add)(float *restrict c, const float *restrict a, const float *restrict b, size_t n) {
  size_t i;
  for (i = 0; i < n; i++) c[i] = a[i] + b[i];
}
