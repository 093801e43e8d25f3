/* posenc footprint programs (tools/footprint.py): one feature per program, posenc or plain newlib
 * libm, linked with fp_start.c and the test firmware's linker scripts. The sizes below are the
 * table's (tools/footprint.py reads them from here). */
#ifndef FP_H
#define FP_H
#include <stddef.h>
#include <stdint.h>

#define FP_SIN_POS 64       /* sinusoidal table: positions */
#define FP_SIN_DIM 128      /*                   columns, f32 interleaved sin/cos, base 10000 */
#define FP_ROPE_DIM 64      /* RoPE: head_dim = rotary dim, NeoX pairs, base 10000 */
#define FP_ROPE_POS 64      /* RoPE cache: positions (vLLM's [cos | sin] rows, f32) */
#define FP_ROPE_TOKENS 8    /* RoPE on the fly: tokens (positions 0..7) */
#define FP_ROPE_QHEADS 4    /*                  Q heads, [token][head][dim] f32 */
#define FP_ROPE_KHEADS 4    /*                  K heads */
#define FP_EMB_TOKENS 16    /* masked add: tokens (positions 0..15, the last 4 padding) */
#define FP_EMB_DIM 128      /*             columns, f32, x * sqrt(D) + sinusoidal row */
#define FP_TILE_HEADS 8     /* ALiBi, T5: score tile heads */
#define FP_TILE_ROWS 32     /*            rows (queries 0..31) */
#define FP_TILE_COLS 32     /*            columns (keys 0..31), f32 */
#define FP_T5_BUCKETS 32    /* T5: bidirectional, max_distance 128 */
#define FP_T5_MAXDIST 128

/* The caller's buffers (inputs, outputs, weights): carved from RAM past .bss, so they count in
 * no figure; both variants use the same ones. */
void *fp_buffer(size_t bytes);
/* Deterministic values in [-1, 1), without libm. */
void fp_fill(float *x, size_t n);
/* Keeps a result alive: a checksum of its words into a volatile sink. */
void fp_keep(const void *p, size_t bytes);
#endif
