/* rope_proto.h - prototype AVX2 rotation kernels: posenc's f32 operations in other loop orders.
 *
 * rope_proto.c is compiled with -mavx2 -mf16c (x86 only; BENCH_HAVE_PROTO). Each kernel rotates
 * one token's heads in place exactly as posenc's AVX2 kernel does (the same vector operations on
 * the same lanes, so the same bits); only the order in which lanes and heads are visited, and the
 * GPT-J row expansion, differ. bench_rope times them beside posenc to show what the order costs.
 */
#ifndef BENCH_ROPE_PROTO_H
#define BENCH_ROPE_PROTO_H

#include <stddef.h>
#include <stdint.h>

typedef enum proto_order {
  PROTO_HEADS_INNER = 0, /* for each 8 lanes, every head (cos/sin loaded once) */
  PROTO_HEADS_OUTER = 1, /* posenc's order: for each head, every 8 lanes (cos/sin reloaded per head) */
  PROTO_HEAD_PAIRS = 2,  /* for each pair of heads, every 8 lanes of both (cos/sin once per pair): posenc's
                          * NeoX order at 128 and 256 bits until it measured slower from memory on Zen 4 */
  PROTO_ORDER_COUNT = 3
} proto_order;

/* Rotates tokens x heads x dim (dense, f32) in place, token t at cache row start + t of a dense
 * f32 [cos(h) | sin(h)] cache, h = dim/2, dim a multiple of 16. gptj: pairs (2j, 2j+1), the row
 * expanded per token with vector shuffles; else NeoX pairs (j, j+h). */
void proto_rotate_tokens(float *x, size_t tokens, size_t heads, size_t dim, const float *cache,
                         int32_t start, int gptj, proto_order order);

/* 16-bit NeoX, heads in pairs (f32 arithmetic, results rounded to nearest even as posenc does,
 * NaN kept quiet), same cache. conv: */
typedef enum proto_conv {
  PROTO_F16 = 0,          /* F16C vcvtph2ps / vcvtps2ph, 8 lanes */
  PROTO_BF16_POSENC = 1,  /* posenc's bf16 conversion: widen 8 lanes, round, pack */
  PROTO_BF16_EVENODD = 2, /* bf16 without shuffles: a 32-byte load holds 8 even lanes (<< 16)
                           * and 8 odd lanes (& 0xffff0000); cos/sin rows split even/odd once per
                           * token; rounded lanes recombined with a shift, an and and an or */
  PROTO_CONV_COUNT = 3
} proto_conv;

void proto_rotate_tokens_half(uint16_t *x, size_t tokens, size_t heads, size_t dim,
                              const float *cache, int32_t start, proto_conv conv);

#endif /* BENCH_ROPE_PROTO_H */
