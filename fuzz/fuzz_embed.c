/* fuzz_embed.c - the masked add of absolute encodings, differential across backends:
 * posenc_embed_forward and _backward with learned tables (f32/f16/bf16, strided, short) or
 * sinusoidal rows on the fly, every position mode, padding by ids and by mask, every OOB policy,
 * dropout, scale, x/y in place or partially overlapping, strided and transposed tensors; and
 * posenc_embed_positions. NaN payloads may differ between backends (documented). Sometimes copies
 * of the config, tokens, tensor structs and the arrays they point to (positions, token ids, mask,
 * table data) are planted inside x, y, grad_table or the positions written (fuzz.h, fz_plant). */
#include "fuzz.h"

enum { OP_FORWARD, OP_BACKWARD, OP_POSITIONS, OP_COUNT };

typedef struct embed_case {
  int op;
  posenc_embed_config config;
  posenc_embed_tokens tokens;
  posenc_embed_tensor x, y; /* backward: grad_y, grad_x */
  const posenc_embed_tensor *y_used;
  const posenc_embed_config *config_used; /* &config, or a copy planted in an output */
  const posenc_embed_tokens *tokens_used;
  const posenc_embed_tensor *x_used;
  float *grad_table;
  size_t grad_table_stride;
  int32_t *positions_out;
} embed_case;

static posenc_status run_embed(void *ctx) {
  embed_case *c = (embed_case *)ctx;
  if (c->op == OP_FORWARD) return posenc_embed_forward(c->config_used, c->tokens_used, c->x_used, c->y_used);
  if (c->op == OP_BACKWARD)
    return posenc_embed_backward(c->config_used, c->tokens_used, c->x_used, c->y_used, c->grad_table,
                                 c->grad_table_stride);
  return posenc_embed_positions(c->tokens_used, c->positions_out);
}

/* Strides of a [batch][tokens][dim] tensor; returns the elements it spans (SIZE_MAX: overflow). */
static size_t draw_tensor(fz_in *in, posenc_embed_tensor *t, size_t batch, size_t tokens, size_t dim) {
  size_t ts, bs;
  memset(t, 0, sizeof *t);
  t->dtype = fz_dtype(in);
  switch (fz_u8(in) % 8) {
    case 4: /* [tokens][batch][dim] */
      t->token_stride = fz_mul(batch, dim);
      t->batch_stride = dim;
      break;
    case 5: /* padded rows */
      t->token_stride = dim + fz_below(in, 4);
      t->batch_stride = fz_add(fz_mul(tokens, t->token_stride), fz_below(in, 4));
      break;
    case 6: /* too small or anything */
      t->token_stride = fz_size(in, dim + 1);
      t->batch_stride = fz_size(in, 2 * tokens * dim);
      break;
    default: break;
  }
  ts = t->token_stride ? t->token_stride : dim;
  bs = t->batch_stride ? t->batch_stride : fz_mul(tokens, ts);
  return fz_extent3(batch, bs, tokens, ts, 1, 0, dim);
}

/* A token array of n int32 values in [lo, hi] (edges sometimes), or NULL when n is absurd. */
static int32_t *draw_ids(fz_in *in, size_t n, int32_t lo, int32_t hi) {
  int32_t *ids;
  size_t i;
  if (n > 4096) return NULL;
  if (!(ids = (int32_t *)malloc(n ? n * sizeof *ids : 1))) abort();
  for (i = 0; i < n; i++)
    ids[i] = fz_u8(in) % 32 == 31 ? fz_i32(in, lo, hi) : lo + (int32_t)fz_below(in, (size_t)(hi - lo + 1));
  return ids;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_in in = {data, size};
  embed_case c;
  fz_call call;
  void *table_data = NULL;
  int32_t *positions = NULL, *token_ids = NULL;
  uint8_t *mask = NULL;
  size_t dim, n_tokens, x_extent, y_extent, i;
  int32_t n_rows;
  posenc_status st;
  memset(&c, 0, sizeof c);
  c.config_used = &c.config;
  c.tokens_used = &c.tokens;
  c.x_used = &c.x;
  c.op = (int)fz_below(&in, OP_COUNT);
  dim = fz_u8(&in) % 32 == 31 ? fz_size(&in, 2) : 1 + fz_below(&in, 64);
  c.config = posenc_embed_default(dim);
  c.config.scale = fz_float(&in, c.config.scale);
  c.tokens.batch = fz_u8(&in) % 32 == 31 ? fz_size(&in, 1) : 1 + fz_below(&in, 3);
  c.tokens.tokens = fz_u8(&in) % 32 == 31 ? fz_size(&in, 1) : 1 + fz_below(&in, 12);
  n_tokens = fz_mul(c.tokens.batch, c.tokens.tokens);
  n_rows = fz_u8(&in) % 32 == 31 ? 0 : 1 + (int32_t)fz_below(&in, 48);
  if (fz_bool(&in) && dim && dim <= 256) { /* a learned table; else sinusoidal rows on the fly */
    posenc_table *t = &c.config.table;
    size_t count;
    t->n_rows = (size_t)n_rows;
    t->dim = fz_u8(&in) % 16 == 15 ? dim + 1 : dim;
    t->dtype = fz_dtype(&in);
    t->row_stride = fz_u8(&in) % 16 == 15 ? t->dim - 1 : t->dim + fz_below(&in, 3) * fz_bool(&in);
    count = fz_extent3(t->n_rows, t->row_stride ? t->row_stride : t->dim, 1, 0, 1, 0, t->dim);
    if (!(table_data = malloc(count ? count * fz_elem_bytes(t->dtype) : 1))) abort();
    fz_fill(&in, table_data, count, t->dtype);
    t->data = table_data;
  }
  c.config.sinusoidal.dim = fz_u8(&in) % 16 == 15 ? dim + 1 : dim;
  c.config.sinusoidal.base = fz_double(&in, 10000.0);
  c.config.sinusoidal.layout = (posenc_layout)fz_enum(&in, 2);
  c.config.sinusoidal.dtype = fz_dtype(&in);
  c.config.sinusoidal.freqs = (posenc_freq_rule)fz_enum(&in, 3);
  c.config.oob = (posenc_oob_policy)fz_enum(&in, 3);
  c.config.dropout_p = fz_u8(&in) % 4 == 3 ? fz_double(&in, 0.1) : 0.0;
  c.config.dropout_seed = fz_u64(&in);
  c.tokens.mode = (posenc_pos_mode)fz_enum(&in, 4);
  c.tokens.start = fz_i32(&in, 0, 64);
  c.tokens.padding_id = fz_i32(&in, -1, 3);
  c.tokens.positions = positions = draw_ids(&in, n_tokens, -1, n_rows + 4);
  if (fz_bool(&in)) c.tokens.token_ids = token_ids = draw_ids(&in, n_tokens, 0, 4);
  if (fz_bool(&in) && n_tokens <= 4096) {
    if (!(mask = (uint8_t *)malloc(n_tokens ? n_tokens : 1))) abort();
    for (i = 0; i < n_tokens; i++) mask[i] = fz_u8(&in) % 4 ? 1 : 0;
    c.tokens.mask = mask;
  }
  x_extent = fz_mul(draw_tensor(&in, &c.x, c.tokens.batch, c.tokens.tokens, dim), fz_elem_bytes(c.x.dtype));
  y_extent = fz_mul(draw_tensor(&in, &c.y, c.tokens.batch, c.tokens.tokens, dim), fz_elem_bytes(c.y.dtype));
  if ((x_extent != SIZE_MAX && x_extent > FZ_MAX_BYTES) ||
      (y_extent != SIZE_MAX && y_extent > FZ_MAX_BYTES) || (c.op == OP_POSITIONS && n_tokens > 4096))
    goto done;
  /* Read-only tensors with overlapping rows can describe a huge valid batch: not worth the time.
   * (Overflowing sizes get through: they must fail at once, before any walk over the tokens.) */
  if (n_tokens > ((size_t)1 << 20) && x_extent != SIZE_MAX && y_extent != SIZE_MAX) goto done;
  call = fz_call_make(c.op == OP_FORWARD    ? "embed_forward"
                      : c.op == OP_BACKWARD ? "embed_backward"
                                            : "embed_positions",
                      run_embed, &c, 1);
  if (c.op == OP_POSITIONS) {
    c.positions_out = (int32_t *)fz_span_add(&call, &in, "positions", n_tokens * 4, POSENC_DTYPE_F32, 0);
  } else {
    int y_mode = fz_u8(&in) % 8;
    size_t shift = y_mode == 2 ? fz_elem_bytes(c.x.dtype) * (1 + fz_below(&in, 2)) : 0;
    /* an overflowing view gets a token buffer: it must be refused before any access */
    c.x.data = fz_span_add(&call, &in, "x", (x_extent == SIZE_MAX ? 64 : x_extent) + shift, c.x.dtype, 1);
    call.spans[0].nan_any = 1;
    if (y_mode <= 2) y_extent = x_extent; /* y is x, or x's view shifted */
    switch (y_mode) {
      case 0: c.y_used = &c.x; break; /* in place */
      case 1: c.y_used = NULL; break; /* NULL (backward: no grad_x) */
      case 2:                         /* x shifted: ALIAS */
        c.y = c.x;
        c.y.data = (char *)c.x.data + shift;
        c.y_used = &c.y;
        break;
      default:
        c.y.data = fz_span_add(&call, &in, "y", y_extent == SIZE_MAX ? 64 : y_extent, c.y.dtype, 1);
        call.spans[1].nan_any = 1;
        c.y_used = &c.y;
    }
    if (c.op == OP_BACKWARD && fz_bool(&in) && dim && dim <= 256) {
      size_t rows = c.config.table.data ? c.config.table.n_rows : (size_t)n_rows;
      c.grad_table_stride = fz_u8(&in) % 16 == 15 ? dim - 1 : fz_bool(&in) ? dim + fz_below(&in, 3) : 0;
      c.grad_table = (float *)fz_span_add(
          &call, &in, "grad_table",
          4 * fz_extent3(rows, c.grad_table_stride ? c.grad_table_stride : dim, 1, 0, 1, 0, dim),
          POSENC_DTYPE_F32, 1);
      call.spans[call.n_spans - 1].nan_any = 1;
    }
  }
  if (fz_u8(&in) % 4 == 3) { /* copies inside the outputs: arrays first, then the structs */
    size_t table_bytes = 0;
    if (table_data) {
      const posenc_table *t = &c.config.table;
      table_bytes = fz_extent3(t->n_rows, t->row_stride ? t->row_stride : t->dim, 1, 0, 1, 0, t->dim) *
                    fz_elem_bytes(t->dtype);
    }
    switch (fz_u8(&in) % 4) {
      case 0: fz_plant(&call, &in, "positions", &c.tokens.positions, n_tokens * sizeof(int32_t), 4); break;
      case 1: fz_plant(&call, &in, "token ids", &c.tokens.token_ids, n_tokens * sizeof(int32_t), 4); break;
      case 2: fz_plant(&call, &in, "mask", &c.tokens.mask, n_tokens, 1); break;
      default: fz_plant(&call, &in, "table data", &c.config.table.data, table_bytes, 4);
    }
    if (fz_bool(&in)) fz_plant(&call, &in, "tokens", &c.tokens_used, sizeof c.tokens, 8);
    if (c.op != OP_POSITIONS) switch (fz_u8(&in) % 4) {
        case 0: fz_plant(&call, &in, "config", &c.config_used, sizeof c.config, 8); break;
        case 1: fz_plant(&call, &in, "x tensor", &c.x_used, sizeof c.x, 8); break;
        case 2: fz_plant(&call, &in, "y tensor", &c.y_used, sizeof c.y, 8); break;
        default: break;
      }
  }
  st = fz_differential(&call);
  FZ_REQUIRE(st != POSENC_OK || c.op == OP_POSITIONS ||
                 (x_extent != SIZE_MAX && (!c.y_used || y_extent != SIZE_MAX)),
             "embed accepted a tensor whose extent overflows size_t");
  fz_call_free(&call);
done:
  free(table_data);
  free(positions);
  free(token_ids);
  free(mask);
  return 0;
}
