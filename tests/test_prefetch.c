/* Where a large RoPE call's prefetches go (posenc_i_pass_job, posenc_simd.h's prefetch_heads).
 * A prefetch changes no bit, so the rotation tests cannot see it: a wrong offset, one past the
 * input, or none at all would pass them. Here the implementation is built with the
 * POSENC_TEST_PREFETCH hook (single file, the SIMD backend of the compiler's flags), which hands
 * this file every address asked for, and each call checks that
 *   - every address lies inside the call's input tensors (never a pointer past them);
 *   - a call reading POSENC_PREFETCH_MIN_BYTES or more asks for every line of the rotated lanes of
 *     every token but the first it rotates (the next token's, one token ahead), in each layout;
 *   - a smaller call, and a backend whose rotation is the scalar kernel (scalar; ARMv7's NEON, see
 *     posenc_simd.h), ask for nothing.
 * The sizes follow POSENC_PREFETCH_MIN_BYTES. Built again with POSENC_ROPE_FLY_BLOCK_BYTES at 2048
 * (tests/meson.build), where a prefill on the fly takes the fused rotation (rope_fly), one or two
 * chunks of pairs a call: the same checks hold its prefetches (the next token's, chunk's, window's
 * or call's). What is checked is that every line is asked for, not that it is asked for in time. */
#define POSENC_TEST_PREFETCH record_prefetch
#define POSENC_IMPLEMENTATION
#include "posenc_simd.h"
#include "testlib.h"

#include <stdlib.h>
#include <string.h>

#define D 128

/* The inputs being watched and the lines asked for in them (one flag per 64-byte line). */
typedef struct watched {
  const unsigned char *base;
  size_t bytes;
  unsigned char *asked; /* bytes/64 + 2 flags: the first and last lines may be partial */
} watched;

static watched w_in[3];
static size_t n_watched, n_asked, n_outside;

void record_prefetch(const void *p); /* also declared by posenc_simd.h where it has a SIMD backend */
void record_prefetch(const void *p) {
  const unsigned char *c = (const unsigned char *)p;
  size_t i;
  n_asked++;
  for (i = 0; i < n_watched; i++)
    if ((uintptr_t)c >= (uintptr_t)w_in[i].base && (uintptr_t)c < (uintptr_t)w_in[i].base + w_in[i].bytes) {
      w_in[i].asked[((uintptr_t)c - (uintptr_t)w_in[i].base + (uintptr_t)w_in[i].base % 64) / 64] = 1;
      return;
    }
  n_outside++;
}

/* Watches input i; 0 if there is no memory for its flags. */
static int watch(size_t i, const void *base, size_t bytes) {
  w_in[i].base = (const unsigned char *)base;
  w_in[i].bytes = bytes;
  w_in[i].asked = (unsigned char *)calloc(bytes / 64 + 2, 1);
  if (i + 1 > n_watched) n_watched = i + 1;
  return w_in[i].asked != NULL;
}

static void unwatch(void) {
  size_t i;
  for (i = 0; i < n_watched; i++) free(w_in[i].asked);
  n_watched = n_asked = n_outside = 0;
}

/* Whether the line holding byte off of watched input i was asked for. */
static int was_asked(size_t i, size_t off) {
  return w_in[i].asked[(off + (uintptr_t)w_in[i].base % 64) / 64];
}

/* Lines of input i not asked for among the rotated lanes (rot elements from each head's start,
 * f32) of every token (b, t) but (0, 0): strides in elements. */
static size_t missed(size_t i, size_t B, size_t T, size_t H, size_t bs, size_t ts, size_t hs, size_t rot, size_t es) {
  size_t b, t, h, e, n = 0;
  for (b = 0; b < B; b++)
    for (t = 0; t < T; t++)
      for (h = 0; h < H && (b || t); h++) {
        const size_t head = (b * bs + t * ts + h * hs) * es;
        for (e = 0; e < rot * es; e += 64) n += !was_asked(i, head + e);
        n += !was_asked(i, head + rot * es - 1); /* the last line, where the head does not start one */
      }
  return n;
}

/* n floats at a 64-byte boundary, in a block 64 bytes longer (free *raw): so that a slice of a
 * head (the fused rotation's chunk, 64 bytes in f32) is whole lines, and a wrong offset cannot
 * hide in a line a neighbouring slice shares, as it did in malloc's 16-byte aligned buffers. */
static float *filled(size_t n, void **raw) {
  unsigned char *block = (unsigned char *)malloc(n * sizeof(float) + 64);
  float *x = block ? (float *)(block + (64 - (uintptr_t)block % 64) % 64) : NULL;
  size_t i;
  *raw = block;
  if (x)
    for (i = 0; i < n; i++) x[i] = (float)((int)(i * 2654435761u % 509u) - 254) / 64.0f;
  return x;
}

/* posenc_rope_apply in place on a [B][T][H][D] tensor of dtype dt (head_major: [B][H][T][D]); with
 * out, posenc_rope_apply_out into an f16 (out 1) or f32 (out 2) [B][T][H][D + 64] tensor instead,
 * which is not prefetched (its lines would count as outside the input). */
static void case_apply(const char *name, posenc_rope_style style, posenc_dtype dt, size_t rot, size_t B, size_t T,
                       size_t H, int head_major, int out, int expect) {
  static POSENC_ROPE_STORAGE(256) st;
  posenc_rope_config cfg = posenc_rope_default(D);
  posenc_rope_positions pos = {0, 0, NULL, 3};
  posenc_rope_tensor q = {NULL, POSENC_DTYPE_F32, 0, 0, 0, 0}, qo = {NULL, POSENC_DTYPE_F16, 0, 0, 0, 0};
  const size_t n = B * T * H * D, es = posenc_dtype_size(dt);
  void *raw;
  float *x = filled(n * es / 4, &raw); /* 16-bit: values from the floats' bits (no bit is checked here) */
  unsigned char *y = out ? (unsigned char *)malloc(B * T * H * (D + 64) * (size_t)(out == 2 ? 4 : 2)) : NULL;
  posenc_status s;
  if (!x || (out && !y) || !watch(0, x, n * es)) {
    printf("%s: not run (no memory)\n", name);
    unwatch(); free(raw); free(y);
    return;
  }
  if (out == 2) qo.dtype = POSENC_DTYPE_F32;
  cfg.style = style; cfg.rotary_dim = rot;
  CHECK(posenc_rope_init(&st.rope, sizeof st, &cfg) == POSENC_OK, "%s: init", name);
  pos.batch = B; pos.tokens = T;
  q.data = x; q.heads = H; q.dtype = dt;
  if (head_major) { q.head_stride = T * D; q.token_stride = D; q.batch_stride = H * T * D; }
  qo.data = y; qo.heads = H; qo.head_stride = D + 64;
  s = out ? posenc_rope_apply_out(&st.rope, NULL, &pos, &q, &qo, NULL, NULL, POSENC_ROPE_FORWARD)
          : posenc_rope_apply(&st.rope, NULL, &pos, &q, NULL, POSENC_ROPE_FORWARD);
  CHECK(s == POSENC_OK, "%s: %s", name, posenc_strerror(s));
  CHECK(n_outside == 0, "%s: %lu of %lu prefetches outside the input", name, (unsigned long)n_outside,
        (unsigned long)n_asked);
  if (expect) {
    size_t bs = head_major ? H * T * D : T * H * D, ts = head_major ? D : H * D, hs = head_major ? T * D : D;
    size_t m = missed(0, B, T, H, bs, ts, hs, rot, es);
    CHECK(m == 0, "%s: %lu lines of the tokens after the first not asked for (%lu prefetches)", name,
          (unsigned long)m, (unsigned long)n_asked);
  } else {
    CHECK(n_asked == 0, "%s: %lu prefetches in a call that should make none", name, (unsigned long)n_asked);
  }
  printf("%s: %lu prefetches\n", name, (unsigned long)n_asked);
  unwatch();
  free(raw); free(y);
}

/* posenc_rope_apply on Q (8 heads) and K (2 heads) in place, f32 [T][H][D], inverse: two passes in
 * one kernel call where the rotation is fused. */
static void case_q_k(const char *name, posenc_rope_style style, size_t T, int expect) {
  static POSENC_ROPE_STORAGE(256) st;
  posenc_rope_config cfg = posenc_rope_default(D);
  posenc_rope_positions pos = {1, 0, NULL, 40};
  posenc_rope_tensor q = {NULL, POSENC_DTYPE_F32, 8, 0, 0, 0}, k = {NULL, POSENC_DTYPE_F32, 2, 0, 0, 0};
  void *qraw, *kraw;
  float *x = filled(T * 8 * D, &qraw), *y = filled(T * 2 * D, &kraw);
  posenc_status s;
  if (!x || !y || !watch(0, x, T * 8 * D * 4) || !watch(1, y, T * 2 * D * 4)) {
    printf("%s: not run (no memory)\n", name);
    unwatch(); free(qraw); free(kraw);
    return;
  }
  cfg.style = style;
  CHECK(posenc_rope_init(&st.rope, sizeof st, &cfg) == POSENC_OK, "%s: init", name);
  pos.tokens = T;
  q.data = x; k.data = y;
  s = posenc_rope_apply(&st.rope, NULL, &pos, &q, &k, POSENC_ROPE_INVERSE);
  CHECK(s == POSENC_OK, "%s: %s", name, posenc_strerror(s));
  CHECK(n_outside == 0, "%s: %lu of %lu prefetches outside the inputs", name, (unsigned long)n_outside,
        (unsigned long)n_asked);
  if (expect) {
    size_t mq = missed(0, 1, T, 8, 0, 8 * D, D, D, 4), mk = missed(1, 1, T, 2, 0, 2 * D, D, D, 4);
    CHECK(mq == 0 && mk == 0, "%s: lines not asked for: Q %lu, K %lu", name, (unsigned long)mq, (unsigned long)mk);
  } else {
    CHECK(n_asked == 0, "%s: %lu prefetches in a call that should make none", name, (unsigned long)n_asked);
  }
  printf("%s: %lu prefetches\n", name, (unsigned long)n_asked);
  unwatch();
  free(qraw); free(kraw);
}

/* posenc_rope_store_kv_norm: Q in place with a QK-norm, K into slots of an f16 cache, V copied;
 * Q alone is under the threshold, the call is over it. */
static void case_store_kv(int expect_prefetch, size_t T) {
  static POSENC_ROPE_STORAGE(128) st;
  posenc_rope_config cfg = posenc_rope_default(D);
  posenc_rope_positions pos = {1, 0, NULL, 0};
  enum { HQ = 6, HK = 2 };
  void *qraw, *kraw, *vraw;
  float *q = filled(T * HQ * D, &qraw), *k = filled(T * HK * D, &kraw), *v = filled(T * HK * D, &vraw), w[D];
  unsigned char *kc = (unsigned char *)malloc(T * HK * D * 2), *vc = (unsigned char *)malloc(T * HK * D * 2);
  int64_t *slots = (int64_t *)malloc(T * sizeof *slots);
  posenc_rope_tensor qt = {NULL, POSENC_DTYPE_F32, HQ, 0, 0, 0}, kt = qt, vt = qt;
  posenc_rope_norm qn = {NULL, 1e-6f, 0};
  posenc_kv_cache kv;
  posenc_status s;
  size_t i;
  const char *name = expect_prefetch ? "store_kv_norm, Q + K + V over the threshold" : "store_kv_norm, small";
  if (!q || !k || !v || !kc || !vc || !slots) {
    printf("%s: not run (no memory)\n", name);
    free(qraw); free(kraw); free(vraw); free(kc); free(vc); free(slots);
    return;
  }
  for (i = 0; i < D; i++) w[i] = 1.0f + (float)(i % 7) / 8.0f;
  for (i = 0; i < T; i++) slots[i] = (int64_t)(T - 1 - i);
  CHECK(posenc_rope_init(&st.rope, sizeof st, &cfg) == POSENC_OK, "%s: init", name);
  pos.tokens = T;
  qt.data = q; kt.data = k; kt.heads = HK; vt.data = v; vt.heads = HK;
  qn.weight = w;
  memset(&kv, 0, sizeof kv);
  kv.k = kc; kv.v = vc; kv.dtype = POSENC_DTYPE_F16; kv.heads = HK; kv.n_slots = T;
  if (!watch(0, q, T * HQ * D * 4) || !watch(1, k, T * HK * D * 4) || !watch(2, v, T * HK * D * 4)) {
    printf("%s: not run (no memory)\n", name);
    unwatch(); free(qraw); free(kraw); free(vraw); free(kc); free(vc); free(slots);
    return;
  }
  s = posenc_rope_store_kv_norm(&st.rope, NULL, &pos, &qt, &qn, &kt, NULL, &vt, &kv, slots);
  CHECK(s == POSENC_OK, "%s: %s", name, posenc_strerror(s));
  CHECK(n_outside == 0, "%s: %lu of %lu prefetches outside the inputs", name, (unsigned long)n_outside,
        (unsigned long)n_asked);
  if (expect_prefetch) {
    size_t mq = missed(0, 1, T, HQ, 0, HQ * D, D, D, 4), mk = missed(1, 1, T, HK, 0, HK * D, D, D, 4);
    CHECK(mq == 0 && mk == 0, "%s: lines not asked for: Q %lu, K %lu", name, (unsigned long)mq, (unsigned long)mk);
  } else {
    CHECK(n_asked == 0, "%s: %lu prefetches in a call that should make none", name, (unsigned long)n_asked);
  }
  printf("%s: %lu prefetches\n", name, (unsigned long)n_asked);
  unwatch();
  free(qraw); free(kraw); free(vraw); free(kc); free(vc); free(slots);
}

int main(void) {
  /* tokens of 8 heads of 128 f32 (4 KiB) that make POSENC_PREFETCH_MIN_BYTES; a small call a
   * quarter of that */
  const size_t big = (POSENC_PREFETCH_MIN_BYTES + 4095) / 4096, small = big / 4 ? big / 4 : 1;
  const posenc_dtype f32 = POSENC_DTYPE_F32, f16 = POSENC_DTYPE_F16, bf16 = POSENC_DTYPE_BF16;
  const posenc_rope_style neox = POSENC_ROPE_NEOX, gptj = POSENC_ROPE_GPTJ;
  const int simd = posenc_i_select()->rotate != posenc_i_scalar_rotate;
  printf("backend: %s (%s)\n", posenc_isa_name(posenc_isa_active()),
         simd ? "prefetches expected in large calls" : "its rotation is the scalar kernel: no prefetch expected");
  case_apply("NeoX, one batch row", neox, f32, D, 1, big, 8, 0, 0, simd);
  case_apply("GPT-J, one batch row", gptj, f32, D, 1, big, 8, 0, 0, simd);
  case_apply("NeoX bf16 (even/odd lanes below 512 bits)", neox, bf16, D, 1, 2 * big, 8, 0, 0, simd);
  case_apply("GPT-J f16", gptj, f16, D, 1, 2 * big, 8, 0, 0, simd);
  case_apply("NeoX, head-major [B][H][T][D]", neox, f32, D, 2, (big + 1) / 2, 8, 1, 0, simd);
  case_apply("NeoX, batched decode (T = 1)", neox, f32, D, big, 1, 8, 0, 0, simd);
  case_apply("NeoX, rotary 96 of 128, batch 3", neox, f32, 96, 3, big / 3 + 1, 8, 0, 0, simd);
  case_apply("NeoX, apply_out head-major f32 -> padded f16", neox, f32, D, 2, (big + 1) / 2, 8, 1, 1, simd);
  case_apply("GPT-J, apply_out f32 -> padded f32, rotary 96, batch 2", gptj, f32, 96, 2, big / 2 + 1, 8, 0, 2, simd);
  case_q_k("NeoX, Q + K, inverse", neox, (big * 4 + 4) / 5 + 1, simd); /* Q 8 heads + K 2 heads */
  case_q_k("GPT-J, Q + K, inverse", gptj, (big * 4 + 4) / 5 + 1, simd);
  case_apply("NeoX, small call", neox, f32, D, 1, small, 8, 0, 0, 0);
  if (big > 1) case_apply("NeoX, one token under the threshold", neox, f32, D, 1, big - 1, 8, 0, 0, 0);
  case_store_kv(simd, big); /* Q 6 heads (3/4 of the threshold) + K 2 + V 2 */
  case_store_kv(0, small);
  return tl_summary();
}
