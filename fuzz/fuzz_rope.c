/* fuzz_rope.c - posenc_rope_apply, differential across backends: f32/f16/bf16 q and k (k absent,
 * GQA head counts, k aliasing q), NeoX/GPT-J, partial rotary, every scaling variant and M-RoPE,
 * dense/[b,h,s,d]/padded/bad/overflowing strides, position lists with out-of-range ids, a cache of
 * any layout (or one that aliases q) or none, forward and inverse. Also: an f32 cache gives the
 * on-the-fly bits, and a tensor whose extent overflows size_t is refused. Sometimes copies of the
 * rope, cache view, positions (and their ids), the q/k tensor structs or the cache data are
 * planted inside q or k (fuzz.h, fz_plant), and sometimes one field of the initialised rope holds
 * garbage (fz_rope_garble). Sometimes the forward rotation is posenc_rope_apply_norm in place, with a
 * QK-norm on Q, K or both (weights of any value, epsilon valid or not, Gemma's offset or not). */
#include "fuzz.h"

/* NaN results (Inf or NaN in q, k or a cache) differ in sign between scalar and SSE2 (reported in
 * fuzz/README.md; posenc.h documents that only for the masked add and the biases): compared as
 * "both NaN" unless built with -DFZ_ROPE_NAN_ANY=0. */
#ifndef FZ_ROPE_NAN_ANY
#define FZ_ROPE_NAN_ANY 1
#endif

typedef struct rope_case {
  posenc_rope *rope;                 /* in lists.rope's storage */
  posenc_rope_cache_view cache;
  const posenc_rope_cache_view *cache_used; /* NULL: on the fly */
  posenc_rope_positions pos;
  posenc_rope_tensor q, k;
  const posenc_rope_tensor *k_used; /* NULL: q only */
  const posenc_rope *rope_used;      /* rope, or a copy planted in q or k */
  const posenc_rope_positions *pos_used;
  const posenc_rope_tensor *q_used;
  posenc_rope_direction direction;
  int cache_exact; /* the cache holds posenc_rope_cache_table's values */
  size_t cache_bytes;
  int fused;                          /* posenc_rope_apply_norm in place */
  posenc_rope_norm qn, kn;
  const posenc_rope_norm *qn_used, *kn_used;
} rope_case;

static posenc_status run_rope(void *ctx) {
  rope_case *c = (rope_case *)ctx;
  if (c->fused)
    return posenc_rope_apply_norm(c->rope_used, c->cache_used, c->pos_used, c->q_used, c->q_used, c->qn_used,
                                  c->k_used, c->k_used, c->kn_used);
  return posenc_rope_apply(c->rope_used, c->cache_used, c->pos_used, c->q_used, c->k_used, c->direction);
}

/* A QK-norm: head_dim weights of any value (w), epsilon usually valid, the offset 0 or 1 (rarely
 * neither). */
static posenc_rope_norm draw_norm(fz_in *in, float *w) {
  static const float bad_eps[4] = {0.0f, -1e-6f, 1e30f, 3e-45f};
  posenc_rope_norm n;
  n.weight = w;
  n.epsilon = fz_u8(in) % 16 == 15 ? bad_eps[fz_below(in, 4)] : (fz_bool(in) ? 1e-6f : 0.5f);
  n.weight_offset = fz_u8(in) % 32 == 31 ? 2 : (int)fz_below(in, 2);
  return n;
}

/* Strides of t for [batch][tokens][heads][head_dim]; returns the elements the view spans
 * (SIZE_MAX when that overflows). */
static size_t draw_tensor(fz_in *in, posenc_rope_tensor *t, size_t batch, size_t tokens, size_t head_dim) {
  size_t hs, ts, bs;
  memset(t, 0, sizeof *t);
  t->dtype = fz_dtype(in);
  t->heads = fz_u8(in) % 16 == 15 ? fz_size(in, 2) : 1 + fz_below(in, 6);
  switch (fz_u8(in) % 8) {
    case 4: /* [batch, heads, seq, dim] */
      t->head_stride = fz_mul(tokens, head_dim);
      t->token_stride = head_dim;
      t->batch_stride = fz_mul(t->heads, t->head_stride);
      break;
    case 5: /* padded rows */
      t->head_stride = head_dim + fz_below(in, 5);
      t->token_stride = fz_add(fz_mul(t->heads, t->head_stride), fz_below(in, 5));
      t->batch_stride = fz_add(fz_mul(tokens, t->token_stride), fz_below(in, 5));
      break;
    case 6: /* too small: STRIDE or ALIAS */
      t->head_stride = head_dim ? head_dim - fz_below(in, 2) : 0;
      t->token_stride = fz_size(in, t->heads * head_dim);
      break;
    case 7: /* anything, overflowing included */
      t->head_stride = fz_size(in, 2 * head_dim);
      t->token_stride = fz_size(in, 4 * head_dim * t->heads);
      t->batch_stride = fz_size(in, 4 * head_dim * t->heads * tokens);
      break;
    default: /* dense (zero strides) */ break;
  }
  hs = t->head_stride ? t->head_stride : head_dim;
  ts = t->token_stride ? t->token_stride : fz_mul(t->heads, hs);
  bs = t->batch_stride ? t->batch_stride : fz_mul(tokens, ts);
  return fz_extent3(batch, bs, tokens, ts, t->heads, hs, head_dim);
}

/* The cache for positions 0..n_rows-1 of the drawn spec, built on the scalar backend (fuzz_tables
 * checks that build); sometimes garbage values or a row count of 0. NULL if it would be too big. */
static void *draw_cache(fz_in *in, rope_case *c) {
  posenc_rope_cache_spec *spec = &c->cache.spec;
  size_t bytes = 0;
  void *data;
  posenc_isa was;
  spec->layout = (posenc_rope_cache_layout)fz_enum(in, 3);
  spec->dtype = fz_u8(in) % 2 ? POSENC_DTYPE_F32 : fz_dtype(in);
  spec->row_stride =
      fz_u8(in) % 4 == 3 ? posenc_rope_cache_width(c->rope, spec->layout) + fz_below(in, 4) : 0;
  c->cache.n_rows = fz_u8(in) % 32 == 31 ? 0 : 1 + fz_below(in, 300);
  if (posenc_rope_cache_bytes(c->rope, spec, c->cache.n_rows ? c->cache.n_rows : 1, &bytes) != POSENC_OK ||
      bytes > FZ_MAX_BYTES)
    return NULL;
  if (!(data = malloc(bytes))) abort();
  was = bk_select(POSENC_ISA_SCALAR);
  c->cache_exact = fz_u8(in) % 16 != 15 &&
                   posenc_rope_cache_table(c->rope, spec, 0, c->cache.n_rows ? c->cache.n_rows : 1, data,
                                           bytes) == POSENC_OK;
  if (!c->cache_exact) fz_fill(in, data, bytes / posenc_dtype_size(spec->dtype), spec->dtype);
  bk_select(was);
  c->cache.data = data;
  c->cache_bytes = bytes;
  return data;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_in in = {data, size};
  rope_case c;
  posenc_rope_config cfg;
  fz_rope_lists lists;
  fz_call call;
  int32_t *ids = NULL;
  float *weights = NULL;
  void *cache_data = NULL;
  size_t head_dim, q_extent, k_extent, n_ids, i;
  posenc_status st;
  memset(&c, 0, sizeof c);
  c.pos_used = &c.pos;
  c.q_used = &c.q;
  cfg = fz_rope_config(&in, 160, &lists);
  if (fz_rope_init(&in, &lists, &cfg) != POSENC_OK) {
    fz_rope_lists_free(&lists);
    return 0;
  }
  c.rope = lists.rope;
  c.rope_used = c.rope;
  head_dim = c.rope->config.head_dim;
  c.direction = (posenc_rope_direction)fz_enum(&in, 2);
  c.pos.batch = fz_u8(&in) % 32 == 31 ? fz_size(&in, 1) : 1 + fz_below(&in, 3);
  c.pos.tokens = fz_u8(&in) % 32 == 31 ? fz_size(&in, 1) : 1 + fz_below(&in, 12);
  c.pos.start = fz_i32(&in, 0, 2048);
  if (fz_u8(&in) % 3 == 0) cache_data = draw_cache(&in, &c);
  if (cache_data) c.cache_used = &c.cache;
  n_ids = fz_mul(fz_mul(c.pos.batch, c.pos.tokens), c.rope->config.mrope ? 3 : 1);
  if (n_ids <= 4096 && fz_u8(&in) % 2) {
    int32_t range = cache_data && c.cache.n_rows ? (int32_t)c.cache.n_rows : 4096;
    size_t room = fz_mul(fz_mul(c.pos.batch, c.pos.tokens), 3); /* garbage may turn M-RoPE on */
    if (!(ids = (int32_t *)malloc(room ? room * sizeof *ids : 1))) abort();
    for (i = 0; i < n_ids; i++)
      ids[i] = fz_u8(&in) % 16 == 15 ? fz_i32(&in, -2, range) : (int32_t)fz_below(&in, range);
    for (; i < room; i++) ids[i] = ids[i % n_ids];
    c.pos.ids = ids;
  }
  q_extent = fz_mul(draw_tensor(&in, &c.q, c.pos.batch, c.pos.tokens, head_dim), fz_elem_bytes(c.q.dtype));
  k_extent = fz_mul(draw_tensor(&in, &c.k, c.pos.batch, c.pos.tokens, head_dim), fz_elem_bytes(c.k.dtype));
  if ((q_extent != SIZE_MAX && q_extent > FZ_MAX_BYTES) ||
      (k_extent != SIZE_MAX && k_extent > FZ_MAX_BYTES)) {
    free(ids); /* a valid but big tensor: not worth the time */
    free(cache_data);
    fz_rope_lists_free(&lists);
    return 0;
  }
  if (c.direction == POSENC_ROPE_FORWARD && fz_u8(&in) % 3 == 0) { /* QK-norm fused */
    if (!(weights = (float *)malloc(2 * head_dim * sizeof *weights))) abort();
    fz_fill(&in, weights, 2 * head_dim, POSENC_DTYPE_F32);
    c.fused = 1;
    c.qn = draw_norm(&in, weights);
    c.kn = draw_norm(&in, weights + head_dim);
    c.qn_used = fz_u8(&in) % 4 == 3 ? NULL : &c.qn;
    c.kn_used = fz_u8(&in) % 4 == 3 ? NULL : &c.kn;
  }
  call = fz_call_make(c.fused ? "rope_apply_norm" : "rope_apply", run_rope, &c, 1);
  /* an overflowing view gets a token buffer: apply must refuse it before touching memory */
  c.q.data = fz_span_add(&call, &in, "q", q_extent == SIZE_MAX ? 64 : q_extent, c.q.dtype, 1);
  call.spans[0].nan_any = FZ_ROPE_NAN_ANY;
  switch (fz_u8(&in) % 8) {
    case 0: c.k_used = NULL; break;
    case 1:
      c.k.data = c.q.data;
      c.k_used = &c.k;
      break; /* ALIAS */
    default:
      c.k.data = fz_span_add(&call, &in, "k", k_extent == SIZE_MAX ? 64 : k_extent, c.k.dtype, 1);
      call.spans[1].nan_any = FZ_ROPE_NAN_ANY;
      c.k_used = &c.k;
  }
  if (cache_data && fz_u8(&in) % 32 == 31) c.cache.data = c.q.data; /* ALIAS */
  if (fz_u8(&in) % 4 == 3) { /* copies inside q or k: arrays first, then the structs */
    if (ids && fz_bool(&in)) fz_plant(&call, &in, "position ids", &c.pos.ids, n_ids * sizeof *ids, 4);
    if (cache_data && c.cache.data == cache_data && fz_u8(&in) % 4 == 3)
      fz_plant(&call, &in, "cache data", &c.cache.data, c.cache_bytes, 4);
    switch (fz_u8(&in) % 5) {
      case 0: fz_plant_rope(&call, &in, &c.rope_used); break;
      case 1: fz_plant(&call, &in, "positions", &c.pos_used, sizeof c.pos, 8); break;
      case 2: fz_plant(&call, &in, "cache view", &c.cache_used, sizeof c.cache, 8); break;
      case 3: fz_plant(&call, &in, "q tensor", &c.q_used, sizeof c.q, 8); break;
      default: fz_plant(&call, &in, "k tensor", &c.k_used, sizeof c.k, 8);
    }
  }
  st = fz_differential(&call);
  FZ_REQUIRE(st != POSENC_OK || (q_extent != SIZE_MAX && (!c.k_used || k_extent != SIZE_MAX)),
             "rope_apply accepted a tensor whose extent overflows size_t");
  /* an exact f32 cache must give the on-the-fly bits (compared with the scalar run above) */
  if (st == POSENC_OK && c.cache_used && c.cache_exact && c.cache.spec.dtype == POSENC_DTYPE_F32) {
    size_t si;
    const posenc_rope_cache_view *used = c.cache_used;
    posenc_isa was;
    c.cache_used = NULL;
    for (si = 0; si < call.n_spans; si++)
      memcpy(call.spans[si].data, call.spans[si].init, call.spans[si].bytes);
    was = bk_select(POSENC_ISA_SCALAR);
    st = run_rope(&c);
    bk_select(was);
    FZ_REQUIRE(st == POSENC_OK, "rope_apply on the fly: %s where the cache gave OK", posenc_strerror(st));
    for (si = 0; si < call.n_spans; si++)
      FZ_REQUIRE(fz_diff(&call.spans[si], call.spans[si].data, call.spans[si].scalar_result) == SIZE_MAX,
                 "rope_apply: %s from the f32 cache (layout %d) differs from on the fly at byte %zu",
                 call.spans[si].name, (int)c.cache.spec.layout,
                 fz_diff(&call.spans[si], call.spans[si].data, call.spans[si].scalar_result));
    c.cache_used = used;
  }
  /* garbage in one field of the rope: refused with nothing written, or as an init makes it */
  if (call.n_plants == 0 && fz_u8(&in) % 4 == 3) fz_rope_garbage_round(&call, &in, c.rope, st);
  fz_call_free(&call);
  free(ids);
  free(weights);
  free(cache_data);
  fz_rope_lists_free(&lists);
  return 0;
}
