/* fuzz_bias.c - position biases on score tiles, differential across backends: posenc_mask_apply,
 * posenc_alibi_add (every form, drawn or computed slopes) and posenc_t5_bias_add (any bucket
 * configuration, f32/f16/bf16 tables, strides, head offsets) on f32/f16 tiles of any layout with
 * causal, window and key-padding masks at any q/k origin; and the bucket/relative writers
 * (T5, DeBERTa, Transformer-XL, LogN). NaN payloads may differ between backends (documented).
 * Sometimes copies of the tile, mask, T5 plan, table, bucket config or sinusoidal params and the
 * arrays they point to (key_keep, slopes, table data) are planted inside the scores or the output
 * (fuzz.h, fz_plant), and sometimes one field of an initialised T5 plan holds garbage. */
#include "fuzz.h"

enum { OP_MASK, OP_ALIBI, OP_T5, OP_DEBERTA, OP_TXL, OP_T5_RANGE, OP_DEBERTA_RANGE, OP_LOGN, OP_COUNT };

typedef struct bias_case {
  int op;
  void *out; /* the writers' output (not the tile ops') */
  size_t out_bytes;
  posenc_score_tile tile;
  posenc_score_mask mask;
  const posenc_score_mask *mask_used;
  posenc_alibi_form form;
  int32_t key_origin, first, clamp_len;
  const float *slopes;
  posenc_t5_buckets t5;
  posenc_t5_plan plan;
  posenc_table table;
  size_t head0, q_len, k_len, count;
  uint32_t bucket_size, max_position, train_len;
  posenc_sinusoidal_params sin;
  /* what the call reads: the structs above, or copies planted in an output */
  const posenc_score_tile *tile_used;
  const posenc_t5_plan *plan_used;
  const posenc_table *table_used;
  const posenc_t5_buckets *t5_used;
  const posenc_sinusoidal_params *sin_used;
} bias_case;

static posenc_status run_bias(void *ctx) {
  bias_case *c = (bias_case *)ctx;
  switch (c->op) {
    case OP_MASK: return posenc_mask_apply(c->tile_used, c->mask_used);
    case OP_ALIBI: return posenc_alibi_add(c->tile_used, c->mask_used, c->form, c->key_origin, c->slopes);
    case OP_T5: return posenc_t5_bias_add(c->tile_used, c->mask_used, c->plan_used, c->table_used, c->head0);
    case OP_DEBERTA:
      return posenc_deberta_relative(c->q_len, c->k_len, c->bucket_size, c->max_position, (int32_t *)c->out,
                                     c->out_bytes / 4);
    case OP_TXL: return posenc_txl_relative(c->sin_used, c->k_len, c->clamp_len, c->out, c->out_bytes);
    case OP_T5_RANGE: return posenc_t5_bucket_range(c->t5_used, c->first, c->count, (int32_t *)c->out);
    case OP_DEBERTA_RANGE:
      return posenc_deberta_bucket_range(c->bucket_size, c->max_position, c->first, c->count,
                                         (int32_t *)c->out);
    default: return posenc_logn_scales(c->train_len, c->first, c->count, (float *)c->out);
  }
}

/* The tile's layout ([h][q][k], [q][h][k], padded, overlapping or anything); returns its elements
 * (SIZE_MAX: overflow). */
static size_t draw_tile(fz_in *in, posenc_score_tile *t) {
  size_t rs, hs;
  t->dtype = fz_u8(in) % 16 == 15 ? fz_dtype(in) : (posenc_dtype)(fz_u8(in) % 2); /* f32, f16; bf16 refused */
  t->heads = fz_u8(in) % 32 == 31 ? fz_size(in, 1) : 1 + fz_below(in, 4);
  t->rows = fz_u8(in) % 32 == 31 ? fz_size(in, 1) : 1 + fz_below(in, 16);
  t->cols = fz_u8(in) % 32 == 31 ? fz_size(in, 1) : 1 + fz_below(in, 40);
  t->q_pos = fz_i32(in, 0, 1000);
  t->k_pos = fz_u8(in) % 2 ? t->q_pos : fz_i32(in, 0, 1000);
  switch (fz_u8(in) % 8) {
    case 4: /* [q][h][k] */
      t->head_stride = t->cols;
      t->row_stride = fz_mul(t->heads, t->cols);
      break;
    case 5: /* padded */
      t->row_stride = t->cols + fz_below(in, 5);
      t->head_stride = fz_add(fz_mul(t->rows, t->row_stride), fz_below(in, 5));
      break;
    case 6: /* overlapping or anything */
      t->row_stride = fz_size(in, t->cols + 1);
      t->head_stride = fz_size(in, 2 * t->cols * t->rows);
      break;
    default: break;
  }
  rs = t->row_stride ? t->row_stride : t->cols;
  hs = t->head_stride ? t->head_stride : fz_mul(t->rows, rs);
  return fz_extent3(t->heads, hs, t->rows, rs, 1, 0, t->cols);
}

/* T5's learned bias table: num_buckets x (head0 + heads) mostly, sometimes too small. */
static void *draw_t5_table(fz_in *in, bias_case *c) {
  posenc_table *t = &c->table;
  size_t count;
  void *data;
  c->head0 = fz_below(in, 4);
  t->n_rows = c->t5.num_buckets > 2048 ? 2048 : c->t5.num_buckets;
  if (t->n_rows && fz_u8(in) % 16 == 15) t->n_rows--; /* TABLE */
  t->dim = (c->tile.heads > 64 ? 64 : c->tile.heads) + c->head0 + fz_below(in, 3);
  if (t->dim && fz_u8(in) % 16 == 15) t->dim--; /* TABLE, sometimes */
  t->dtype = fz_dtype(in);
  t->row_stride = fz_bool(in) ? 0 : t->dim + fz_below(in, 3);
  if (t->row_stride && t->dim && fz_u8(in) % 16 == 15) t->row_stride = t->dim - 1; /* STRIDE */
  count = fz_extent3(t->n_rows, t->row_stride ? t->row_stride : t->dim, 1, 0, 1, 0, t->dim);
  if (!(data = malloc(count ? count * fz_elem_bytes(t->dtype) : 1))) abort();
  fz_fill(in, data, count, t->dtype);
  t->data = data;
  return data;
}

/* Overwrites one field of an initialised T5 plan with drawn bytes; returns the field's name. */
static const char *t5_garble(fz_in *in, posenc_t5_plan *p) {
  uint32_t bits = fz_u32(in);
  switch (fz_u8(in) % 8) {
    case 0: p->n = fz_bool(in) ? bits : p->n + (uint32_t)fz_i32(in, -2, 2); return "n";
    case 1: p->e = fz_bool(in) ? bits : p->e + (uint32_t)fz_i32(in, -2, 2); return "e";
    case 2: p->first[fz_below(in, POSENC_T5_MAX_BUCKETS / 2)] = fz_bool(in) ? (int32_t)bits : fz_i32(in, -4, 600); return "first";
    case 3: p->near[fz_below(in, 2 * POSENC_T5_NEAR + 1)] = (int16_t)(fz_bool(in) ? bits : (uint32_t)fz_i32(in, -2, 40)); return "near";
    case 4: p->cfg.num_buckets = fz_bool(in) ? bits : p->cfg.num_buckets + (uint32_t)fz_i32(in, -2, 2); return "cfg.num_buckets";
    case 5: p->cfg.max_distance = fz_bool(in) ? bits : p->cfg.max_distance + (uint32_t)fz_i32(in, -2, 2); return "cfg.max_distance";
    default: p->cfg.bidirectional = fz_bool(in) ? (int)bits : !p->cfg.bidirectional; return "cfg.bidirectional";
  }
}

/* 1 if posenc_t5_plan_init makes *p again from p->cfg (every entry the bias add reads). */
static int t5_reproducible(const posenc_t5_plan *p) {
  posenc_t5_plan again;
  uint32_t k;
  if (posenc_t5_plan_init(&again, &p->cfg) != POSENC_OK || again.n != p->n || again.e != p->e) return 0;
  for (k = 0; k < again.n - again.e && k < POSENC_T5_MAX_BUCKETS / 2; k++)
    if (again.first[k] != p->first[k]) return 0;
  return memcmp(again.near, p->near, sizeof again.near) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_in in = {data, size};
  bias_case c;
  fz_call call;
  void *owned = NULL; /* slopes or the T5 table */
  uint8_t *key_keep = NULL;
  size_t extent = 0, need = 0, i;
  posenc_status st = POSENC_OK;
  int plan_ok = 0;
  memset(&c, 0, sizeof c);
  c.tile_used = &c.tile;
  c.plan_used = &c.plan;
  c.table_used = &c.table;
  c.t5_used = &c.t5;
  c.sin_used = &c.sin;
  c.op = (int)fz_below(&in, OP_COUNT);
  c.first = fz_i32(&in, -300, 300);
  c.count = fz_size(&in, 300);
  c.q_len = fz_size(&in, 48);
  c.k_len = fz_size(&in, 48);
  c.bucket_size = fz_u8(&in) % 4 == 3 ? (uint32_t)fz_size(&in, 600) : 256;
  c.max_position = fz_u8(&in) % 4 == 3 ? (uint32_t)fz_size(&in, 1000) : 512;
  c.train_len = fz_u8(&in) % 4 == 3 ? (uint32_t)fz_size(&in, 8) : 32;
  c.t5.num_buckets = fz_u8(&in) % 4 == 3 ? (uint32_t)fz_size(&in, 1100) : 32;
  c.t5.max_distance = fz_u8(&in) % 4 == 3 ? (uint32_t)fz_size(&in, 300) : 128;
  c.t5.bidirectional = fz_bool(&in);
  c.clamp_len = fz_i32(&in, -1, 40);
  if (c.op <= OP_T5) {
    extent = fz_mul(draw_tile(&in, &c.tile), fz_elem_bytes(c.tile.dtype));
    if (extent != SIZE_MAX && extent > FZ_MAX_BYTES) return 0; /* valid but big: not worth the time */
    if (fz_bool(&in)) {
      c.mask.causal = fz_bool(&in);
      c.mask.window = fz_u8(&in) % 4 == 3 ? fz_i32(&in, -1, 16) : 0;
      if (fz_bool(&in) && c.tile.cols <= 4096) {
        if (!(key_keep = (uint8_t *)malloc(c.tile.cols))) abort();
        for (i = 0; i < c.tile.cols; i++) key_keep[i] = fz_u8(&in) % 4 ? 1 : 0;
        c.mask.key_keep = key_keep;
      }
      c.mask_used = &c.mask;
    }
  }
  if (c.op == OP_ALIBI) {
    /* more heads than this make the tile overflow or exceed FZ_MAX_BYTES (skipped above) */
    size_t heads = c.tile.heads > ((size_t)1 << 17) ? 1 : c.tile.heads;
    float *slopes = (float *)malloc(heads ? heads * sizeof *slopes : 1);
    if (!(owned = slopes)) abort();
    c.form = (posenc_alibi_form)fz_enum(&in, 3);
    c.key_origin = fz_i32(&in, -16, 1000);
    if (fz_u8(&in) % 4 == 3 || posenc_alibi_slopes(heads, fz_double(&in, 8.0), slopes) != POSENC_OK)
      for (i = 0; i < heads; i++) slopes[i] = fz_float(&in, 0.25f);
    c.slopes = slopes;
  } else if (c.op == OP_T5) {
    plan_ok = posenc_t5_plan_init(&c.plan, &c.t5) == POSENC_OK; /* else zero: bias_add must refuse it */
    owned = draw_t5_table(&in, &c);
  } else if (c.op == OP_TXL) {
    c.sin = posenc_sinusoidal_default(fz_size(&in, 64));
    c.sin.layout = fz_u8(&in) % 8 == 7 ? (posenc_layout)fz_enum(&in, 2) : POSENC_LAYOUT_SPLIT;
    c.sin.base = fz_double(&in, 10000.0);
    c.sin.dtype = fz_dtype(&in);
    st = posenc_sinusoidal_bytes(&c.sin, c.k_len, &need);
  } else if (c.op == OP_DEBERTA) {
    need = fz_mul(fz_mul(c.q_len, c.k_len), 4);
  } else if (c.op > OP_TXL) {
    need = fz_mul(c.count, 4);
  }
  if (c.op > OP_T5) c.out_bytes = fz_out_bytes(&in, need == SIZE_MAX ? POSENC_ERR_OVERFLOW : st, need);
  call = fz_call_make("bias", run_bias, &c, 1);
  if (c.op <= OP_T5) {
    c.tile.scores = fz_span_add(&call, &in, "scores", extent == SIZE_MAX ? 64 : extent, c.tile.dtype, 1);
    call.spans[0].nan_any = 1;
  } else {
    /* the range writers have no size argument: only call them with room for count values */
    if (c.op >= OP_T5_RANGE && c.out_bytes < need) c.count = c.out_bytes / 4;
    c.out = fz_span_add(&call, &in, "out", c.out_bytes, POSENC_DTYPE_F32, 0);
  }
  if (fz_u8(&in) % 4 == 3) { /* copies inside the outputs: arrays first, then the structs */
    if (key_keep && fz_bool(&in)) fz_plant(&call, &in, "key_keep", &c.mask.key_keep, c.tile.cols, 1);
    if (c.op == OP_ALIBI && fz_bool(&in)) {
      size_t heads = c.tile.heads > ((size_t)1 << 17) ? 1 : c.tile.heads;
      fz_plant(&call, &in, "slopes", &c.slopes, heads * sizeof(float), 4);
    }
    if (c.op == OP_T5 && fz_bool(&in)) {
      const posenc_table *t = &c.table;
      fz_plant(&call, &in, "t5 table data", &c.table.data,
               fz_extent3(t->n_rows, t->row_stride ? t->row_stride : t->dim, 1, 0, 1, 0, t->dim) *
                   fz_elem_bytes(t->dtype), 4);
    }
    switch (fz_u8(&in) % 4) {
      case 0: fz_plant(&call, &in, "tile", &c.tile_used, sizeof c.tile, 8); break;
      case 1: fz_plant(&call, &in, "mask", &c.mask_used, sizeof c.mask, 8); break;
      default:
        if (c.op == OP_T5 && fz_bool(&in)) fz_plant(&call, &in, "t5 plan", &c.plan_used, sizeof c.plan, 8);
        else if (c.op == OP_T5) fz_plant(&call, &in, "t5 table", &c.table_used, sizeof c.table, 8);
        if (c.op == OP_T5_RANGE) fz_plant(&call, &in, "t5 buckets", &c.t5_used, sizeof c.t5, 4);
        if (c.op == OP_TXL) fz_plant(&call, &in, "sinusoidal params", &c.sin_used, sizeof c.sin, 8);
    }
  }
  st = fz_differential(&call);
  FZ_REQUIRE(st != POSENC_OK || c.op > OP_T5 || extent != SIZE_MAX,
             "bias accepted a tile whose extent overflows");
  /* garbage in one field of an initialised plan: refused with nothing written, or as init makes it */
  if (c.op == OP_T5 && plan_ok && call.n_plants == 0 && fz_u8(&in) % 4 == 3) {
    fz_before before;
    const char *field;
    fz_before_take(&call, st, &before);
    field = t5_garble(&in, &c.plan);
    st = fz_differential(&call);
    fz_garbage_verdict(&call, &before, st, t5_reproducible(&c.plan), field);
  }
  fz_call_free(&call);
  free(owned);
  free(key_keep);
  return 0;
}
