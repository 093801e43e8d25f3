/* embed_loops.h - plain C loops bench_embed compares posenc's masked add with (embed_loops.c). */
#ifndef BENCH_EMBED_LOOPS_H
#define BENCH_EMBED_LOOPS_H
#include <stddef.h>

#define EMBED_LOOPS_DECLARE(v)                                                                     \
  void embed_loop_##v(float *y, const float *x, const float *P, size_t tokens, size_t d, float scale); \
  void stream_add_##v(float *c, const float *a, const float *b, size_t n);

EMBED_LOOPS_DECLARE(scalar)
EMBED_LOOPS_DECLARE(o3)

#endif
