/* fuzz_tables.c - every table writer, differential across backends: sinusoidal tables and rows
 * (every layout, dtype, frequency rule, stride), RoPE cos/sin caches (every scaling variant,
 * cache layout and dtype, table and rows), 2-D sin-cos, index tables, learned init, resize and
 * the spectrum. Parameters range over invalid values too; errors must match scalar's and write
 * nothing. Sometimes the call's descriptor structs (params, rope, cache spec, source table) and
 * arrays (positions, table data) are planted inside its outputs (fuzz.h, fz_plant), and sometimes
 * one field of the initialised rope holds garbage (fz_rope_garble). */
#include "fuzz.h"

enum {
  OP_SIN_TABLE,
  OP_SIN_ROWS,
  OP_ROPE_TABLE,
  OP_ROPE_ROWS,
  OP_SINCOS_2D,
  OP_INDEX,
  OP_LEARNED,
  OP_RESIZE, /* or the spectrum of that source table */
  OP_COUNT
};

typedef struct tables_case {
  int op, spectrum;
  posenc_sinusoidal_params sin;
  posenc_rope *rope;                 /* in lists.rope's storage */
  posenc_rope_cache_spec cache;
  posenc_sincos_2d_params grid;
  posenc_table src; /* resize, spectrum */
  /* what the call reads: the structs above, or copies planted inside an output */
  const posenc_sinusoidal_params *sin_used;
  const posenc_rope *rope_used;
  const posenc_rope_cache_spec *cache_used;
  const posenc_sincos_2d_params *grid_used;
  const posenc_table *src_used;
  double *work, *sv; /* spectrum */
  size_t work_count;
  posenc_spectrum_info *info;
  int32_t start;
  size_t n_rows, dim, row_stride;
  const int32_t *positions; /* _rows: n_rows of them */
  posenc_dtype dtype;
  posenc_index_kind kind;
  uint32_t max_len;
  uint64_t seed;
  double std;
  int align_corners;
  void *out;
  size_t out_bytes;
} tables_case;

static posenc_status run_tables(void *ctx) {
  tables_case *c = (tables_case *)ctx;
  switch (c->op) {
    case OP_SIN_TABLE: return posenc_sinusoidal_table(c->sin_used, c->start, c->n_rows, c->out, c->out_bytes);
    case OP_SIN_ROWS: return posenc_sinusoidal_rows(c->sin_used, c->positions, c->n_rows, c->out, c->out_bytes);
    case OP_ROPE_TABLE:
      return posenc_rope_cache_table(c->rope_used, c->cache_used, c->start, c->n_rows, c->out, c->out_bytes);
    case OP_ROPE_ROWS:
      return posenc_rope_cache_rows(c->rope_used, c->cache_used, c->positions, c->n_rows, c->out, c->out_bytes);
    case OP_SINCOS_2D: return posenc_sincos_2d(c->grid_used, c->out, c->out_bytes);
    case OP_INDEX:
      return posenc_index_table(c->kind, c->max_len, c->start, c->n_rows, c->dim, c->dtype, c->row_stride,
                                c->out, c->out_bytes);
    case OP_LEARNED:
      return posenc_learned_init(c->seed, c->std, c->n_rows, c->dim, c->dtype, c->row_stride, c->out,
                                 c->out_bytes);
    default:
      if (c->spectrum) return posenc_spectrum(c->src_used, c->work, c->work_count, c->sv, c->info);
      return posenc_table_resize(c->src_used, c->n_rows, c->align_corners, c->dtype, c->row_stride, c->out,
                                 c->out_bytes);
  }
}

/* A row stride for rows of dim elements: dense (0 or dim), padded, or too small. */
static size_t draw_stride(fz_in *in, size_t dim) {
  switch (fz_u8(in) % 8) {
    case 1: return dim;
    case 2: return dim + 1 + fz_below(in, 8);
    case 3: return dim ? dim - 1 : 0;
    case 4: return fz_size(in, 2 * dim + 4);
    default: return 0;
  }
}

/* Positions for _rows: mostly near 0, some negative or at the int32 edges. */
static int32_t *draw_positions(fz_in *in, size_t n, int32_t span) {
  int32_t *p = (int32_t *)malloc(n ? n * sizeof *p : 1);
  size_t i;
  if (!p) abort();
  for (i = 0; i < n; i++) p[i] = fz_i32(in, -span / 8, span);
  return p;
}

static posenc_sinusoidal_params draw_sinusoidal(fz_in *in) {
  posenc_sinusoidal_params p = posenc_sinusoidal_default(fz_size(in, 130));
  p.base = fz_double(in, 10000.0);
  p.layout = (posenc_layout)fz_enum(in, 2);
  p.dtype = fz_dtype(in);
  p.row_stride = draw_stride(in, p.dim);
  p.freqs = (posenc_freq_rule)fz_enum(in, 3);
  p.min_timescale = fz_u8(in) % 4 == 3 ? fz_double(in, 1.0) : 0.0;
  return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_in in = {data, size};
  tables_case c;
  fz_rope_lists lists = {NULL, NULL, NULL, NULL};
  int32_t *positions = NULL;
  void *src_data = NULL;
  fz_call call;
  posenc_status st = POSENC_OK;
  size_t need = 0;
  memset(&c, 0, sizeof c);
  c.sin_used = &c.sin;
  c.cache_used = &c.cache;
  c.grid_used = &c.grid;
  c.src_used = &c.src;
  c.op = (int)fz_below(&in, OP_COUNT);
  c.n_rows = fz_size(&in, 64);
  c.start = fz_i32(&in, -64, 4096);
  switch (c.op) {
    case OP_SIN_TABLE:
    case OP_SIN_ROWS:
      c.sin = draw_sinusoidal(&in);
      st = posenc_sinusoidal_bytes(&c.sin, c.n_rows, &need);
      break;
    case OP_ROPE_TABLE:
    case OP_ROPE_ROWS: {
      posenc_rope_config cfg = fz_rope_config(&in, 160, &lists);
      if (fz_rope_init(&in, &lists, &cfg) != POSENC_OK) {
        fz_rope_lists_free(&lists);
        return 0;
      }
      c.rope = lists.rope;
      c.rope_used = c.rope;
      c.cache.layout = (posenc_rope_cache_layout)fz_enum(&in, 3);
      c.cache.dtype = fz_dtype(&in);
      c.cache.row_stride = draw_stride(&in, posenc_rope_cache_width(c.rope, c.cache.layout));
      st = posenc_rope_cache_bytes(c.rope, &c.cache, c.n_rows, &need);
      break;
    }
    case OP_SINCOS_2D:
      c.grid = posenc_sincos_2d_default(4 * fz_size(&in, 40) + (fz_u8(&in) % 8 == 7), fz_size(&in, 16),
                                        fz_size(&in, 16));
      c.grid.cls_token = fz_bool(&in);
      c.grid.base = fz_double(&in, 10000.0);
      c.grid.dtype = fz_dtype(&in);
      c.grid.row_stride = draw_stride(&in, c.grid.embed_dim);
      st = posenc_sincos_2d_bytes(&c.grid, &need);
      break;
    default: {
      size_t es;
      c.dim = fz_size(&in, 100);
      c.dtype = fz_dtype(&in);
      c.row_stride = draw_stride(&in, c.dim);
      c.kind = (posenc_index_kind)fz_enum(&in, 2);
      c.max_len = fz_u8(&in) % 8 == 7 ? 0 : fz_u32(&in);
      c.seed = fz_u64(&in);
      c.std = fz_u8(&in) % 2 ? fz_double(&in, 0.02) : 0.0;
      c.align_corners = fz_enum(&in, 2);
      if (c.op == OP_RESIZE) {
        /* a small source table, values with a drawn share of Inf/NaN */
        size_t src_count;
        c.src.n_rows = 1 + fz_below(&in, 40);
        c.src.dim = c.dim = c.dim > 128 ? 128 : c.dim; /* the output has the source's columns */
        c.src.dtype = fz_dtype(&in);
        c.src.row_stride = c.src.dim + fz_below(&in, 3);
        src_count = fz_extent3(c.src.n_rows, c.src.row_stride, 1, 0, 1, 0, c.src.dim);
        src_data = malloc(src_count ? src_count * fz_elem_bytes(c.src.dtype) : 1);
        if (!src_data) abort();
        fz_fill(&in, src_data, src_count, c.src.dtype);
        c.src.data = src_data;
        c.spectrum = fz_u8(&in) % 4 == 3 && c.src.dim <= 32; /* d^3 work: small tables only */
      }
      es = posenc_dtype_size(c.dtype);
      /* the size every writer of this group asks for: (n_rows-1)*stride + dim elements */
      need = fz_mul(fz_extent3(c.n_rows, c.row_stride ? c.row_stride : c.dim, 1, 0, 1, 0, c.dim), es);
      st = es && need != SIZE_MAX ? POSENC_OK : POSENC_ERR_OVERFLOW;
    }
  }
  if ((c.op == OP_SIN_ROWS || c.op == OP_ROPE_ROWS) && c.n_rows > 4096)
    c.n_rows = 4096; /* positions[] exists */
  if (c.op == OP_SIN_ROWS || c.op == OP_ROPE_ROWS)
    c.positions = positions = draw_positions(&in, c.n_rows, 1 << 16);
  c.out_bytes = fz_out_bytes(&in, st, need);
  call = fz_call_make(c.spectrum ? "spectrum" : "tables", run_tables, &c, 1);
  if (c.spectrum) { /* work (exact, short or roomy), the singular values (or NULL), *info */
    size_t work = posenc_spectrum_work(c.src.dim);
    c.work_count = fz_u8(&in) % 8 == 7 ? work - (work > 0) : work + fz_below(&in, 3);
    c.work = (double *)fz_span_add(&call, &in, "work", c.work_count * sizeof(double), POSENC_DTYPE_F32, 0);
    call.spans[0].scratch = 1;
    c.sv = fz_u8(&in) % 8 == 7 ? NULL
                               : (double *)fz_span_add(&call, &in, "singular values", c.src.dim * sizeof(double),
                                                       POSENC_DTYPE_F32, 0);
    c.info = (posenc_spectrum_info *)fz_span_add(&call, &in, "info", sizeof *c.info, POSENC_DTYPE_F32, 0);
    need = 0;
  } else {
    c.out = fz_span_add(&call, &in, "out", c.out_bytes, POSENC_DTYPE_F32, 0);
    if (fz_u8(&in) % 32 == 31) c.out = NULL; /* ERR_NULL */
  }
  /* copies of what the call reads, inside what it writes: arrays first, then the structs that
   * point to them (the copies point to the planted arrays) */
  if (fz_u8(&in) % 4 == 3) {
    if (c.positions && fz_bool(&in)) fz_plant(&call, &in, "positions", &c.positions, c.n_rows * sizeof(int32_t), 4);
    switch (c.op) {
      case OP_SIN_TABLE:
      case OP_SIN_ROWS: fz_plant(&call, &in, "sinusoidal params", &c.sin_used, sizeof c.sin, 8); break;
      case OP_ROPE_TABLE:
      case OP_ROPE_ROWS:
        if (fz_bool(&in)) fz_plant(&call, &in, "cache spec", &c.cache_used, sizeof c.cache, 8);
        if (fz_bool(&in)) fz_plant_rope(&call, &in, &c.rope_used);
        break;
      case OP_SINCOS_2D: fz_plant(&call, &in, "sincos_2d params", &c.grid_used, sizeof c.grid, 8); break;
      case OP_RESIZE:
        if (fz_u8(&in) % 4 == 3)
          fz_plant(&call, &in, "source data", &c.src.data,
                   fz_extent3(c.src.n_rows, c.src.row_stride, 1, 0, 1, 0, c.src.dim) * fz_elem_bytes(c.src.dtype), 8);
        fz_plant(&call, &in, "source table", &c.src_used, sizeof c.src, 8);
        break;
      default: break;
    }
  }
  st = fz_differential(&call);
  FZ_REQUIRE(!(st == POSENC_OK && c.out_bytes < need), "op %d: OK with %zu bytes, %zu needed", c.op,
             c.out_bytes, need);
  /* garbage in one field of the rope: refused with nothing written, or as an init makes it */
  if ((c.op == OP_ROPE_TABLE || c.op == OP_ROPE_ROWS) && call.n_plants == 0 && fz_u8(&in) % 4 == 3)
    fz_rope_garbage_round(&call, &in, c.rope, st);
  fz_call_free(&call);
  free(positions);
  free(src_data);
  fz_rope_lists_free(&lists);
  return 0;
}
