/* posenc - the command-line tool of the posenc library.
 *
 *   posenc info                      version, backends (ISAs), self-test
 *   posenc table sinusoidal ...      a sinusoidal table as .npy, raw bytes or a C header
 *   posenc table learned|sincos2d    a learnable table's initialisation, a 2-D sin-cos table
 *   posenc rope freqs|table|apply    RoPE frequencies, cos/sin caches, rotation (cli_rope.c)
 *   posenc embed                     x * scale + P[pos] with padding (cli_embed.c)
 *   posenc analyze TABLE.npy         rank and spectrum of a table (cli_embed.c)
 *   posenc alibi|t5|deberta ...      position biases inside attention (cli_bias.c)
 *
 * Everything is validated before the first byte is written, and a file is replaced only once all
 * of it is written (cli_write.c), so a failing run never leaves a partial output. Tables whose
 * rows are independent are computed and written a chunk of rows at a time (cli_stream.c); the
 * rest are computed whole in memory first. */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_args.h"
#include "cli_bias.h"
#include "cli_common.h"
#include "cli_embed.h"
#include "cli_format.h"
#include "cli_parse.h"
#include "cli_rope.h"
#include "cli_stream.h"
#include "cli_write.h"
#include "posenc.h"

#define COUNT_OF(array) (sizeof(array) / sizeof((array)[0]))

/* ---- help ---------------------------------------------------------------------------------- */

static const char main_help[] =
  "Usage: posenc [--isa NAME] <command> [options]\n"
  "\n"
  "Transformer positional encodings, bit-identical on every ISA.\n"
  "\n"
  "Commands:\n"
  "  info                 version, SIMD backends (compiled in, supported, active), self-test\n"
  "  table sinusoidal     write a sinusoidal positional-encoding table\n"
  "  table learned        write a learnable table's truncated-normal initialisation\n"
  "  table sincos2d       write a 2-D sin-cos table (MAE / ViT)\n"
  "  rope freqs           print a RoPE variant's frequencies and attention factor\n"
  "  rope table           write a RoPE cos/sin cache (.npy, raw, or a C header for firmware)\n"
  "  rope apply           rotate query/key tensors read from .npy files (QK-norm fused too)\n"
  "  embed                add position rows to token embeddings (.npy in, .npy out)\n"
  "  analyze              rank and singular-value spectrum of a table, beside a sinusoidal one\n"
  "  alibi slopes         print ALiBi's per-head slopes (any head count, --max-bias)\n"
  "  alibi bias           write the ALiBi bias block (heads, queries, keys) with its masks\n"
  "  t5 buckets           T5's relative-position buckets for a range of distances\n"
  "  t5 bias              write T5's bias block from a learned (buckets, heads) table\n"
  "  deberta buckets      DeBERTa's log buckets for a range of relative positions\n"
  "  deberta relative     DeBERTa's build_relative_position (queries, keys)\n"
  "\n"
  "Options (before or after the command):\n"
  "  --isa NAME           backend to use (default: the POSENC_ISA environment variable,\n"
  "                       else the best available): %s\n"
  "  -h, --help           show this help; 'posenc <command> --help' shows a command's\n"
  "  --version            print the version\n"
  "  --                   the end of the options: what follows are words, even those that\n"
  "                       start with '-' (posenc analyze -- -table.npy)\n"
  "\n"
  "Exit status: 0 success, 1 runtime error (I/O, a bad input file, memory, ISA not\n"
  "available here), "
  "2 usage error. Errors are one line on stderr.\n";

static const char info_help[] =
  "Usage: posenc info [--isa NAME]\n"
  "\n"
  "Prints one fact per line: the version; for each ISA whether it is compiled in and\n"
  "supported by this CPU; what POSENC_ISA and --isa asked for; the active ISA; and 'selftest',\n"
  "whether this build and CPU reproduce posenc's reference bits. Exits 0 even if the\n"
  "self-test fails: check the 'selftest: passed' line. A failure adds the failed checks\n"
  "(rounding, contract, reassoc, values, subnormals, ftz, daz) and whether results of\n"
  "normal values are still exact (yes when only flush-to-zero modes differ).\n";

static const char table_help[] =
  "Usage: posenc table sinusoidal --positions N --dim D [options]\n"
  "       posenc table learned --rows N --dim D --seed S [--init trunc-normal] [--std X] [options]\n"
  "       posenc table sincos2d --dim D --grid HxW [--cls-token] [--base B] [options]\n"
  "\n"
  "sinusoidal: N rows (positions P .. P+N-1) of D columns, with w_i = B^(-2i/D):\n"
  "  interleaved  row p = sin(p w_0), cos(p w_0), sin(p w_1), ...; odd D ends with a sin column\n"
  "  split        row p = sin(p w_0) .. sin(p w_h-1), cos(p w_0) .. cos(p w_h-1), h = floor(D/2);\n"
  "               odd D ends with a zero column\n"
  "  --freqs fairseq: w_i = B^(-i/(h-1)); t2t: w_i = M (B/M)^(-i/(h-1)), M = --min-timescale\n"
  "  (fairseq and tensor2tensor; use them with --layout split for those libraries' tables)\n"
  "learned: N x D truncated normal (std X, default sqrt(1/D); values beyond 2 std redrawn),\n"
  "  a function of (S, row, column) only: the same bits on every machine\n"
  "sincos2d: H*W rows (MAE get_2d_sincos_pos_embed; row h*W + w), columns [0, D/2) encode w\n"
  "  and [D/2, D) encode h; D a multiple of 4; --cls-token adds a zero row first\n"
  "\n"
  "Options:\n"
  "  --positions N        number of rows, at least 1\n"
  "  --dim D              columns per row, at least 1\n"
  "  --base B             frequency base (default 10000)\n"
  "  --start P            first position (default 0); |P| and P+N-1 at most 2147483647\n"
  "  --layout L           interleaved (default) or split\n"
  "  --freqs R            vaswani (default), fairseq or t2t\n"
  "  --min-timescale M    t2t's min_timescale (default 1)\n"
  "  --rows N             learned: number of rows\n"
  "  --seed S             learned: seed, 0 .. 2^64-1\n"
  "  --init I             learned: trunc-normal (the only one, default)\n"
  "  --std X              learned: standard deviation (> 0; default sqrt(1/D))\n"
  "  --grid HxW           sincos2d: the patch grid, as 14x14\n"
  "  --cls-token          sincos2d: a zero row before the grid\n"
  "  --dtype T            f32 (default), f16 (IEEE half) or bf16 (bfloat16)\n"
  "  --format F           npy (default), raw or c\n"
  "  --name IDENT         the array's C identifier with --format c (default posenc_table)\n"
  "  -o, --output FILE    write FILE instead of stdout ('-': stdout); FILE is replaced only\n"
  "                       once all of the output is written, and is left as it was on error\n"
  "  --isa NAME           backend (see 'posenc --help'); the output is the same on every ISA\n"
  "  -h, --help           show this help\n"
  "\n"
  "Formats:\n"
  "  npy   NumPy .npy 1.0, shape (rows, D), dtype <f4 (f32) or <f2 (f16). NumPy has no bfloat16,\n"
  "        so bf16 is stored as <u2 holding the raw bf16 bits; decode with\n"
  "        (a.astype(np.uint32) << 16).view(np.float32)\n"
  "  raw   the values only: little-endian, row-major, no header\n"
  "  c     a C/C++ header: 'static const float IDENT[N][D]' (f32; printed so that every value\n"
  "        converts back exactly) or 'static const uint16_t IDENT[N][D]' bit patterns (f16,\n"
  "        bf16), with IDENT_ROWS, IDENT_COLS and IDENT_XXH3, the XXH3-64 hash of the\n"
  "        table's little-endian bytes for a start-up check\n";

/* ---- table requests ------------------------------------------------------------------------ */

static const char *const layout_names[] = {"interleaved", "split"}; /* by posenc_layout */
static const char *const dtype_names[] = {"f32", "f16", "bf16"};     /* by posenc_dtype */
static const char *const freq_names[] = {"vaswani", "fairseq", "t2t"}; /* by posenc_freq_rule */
static const char *const init_names[] = {"trunc-normal"};

struct table_request {
  enum leaf leaf;
  posenc_sinusoidal_params params; /* sinusoidal; dim and dtype for every kind */
  posenc_sincos_2d_params grid;    /* sincos2d */
  uint64_t seed;                   /* learned */
  double std;                      /* learned: 0 means sqrt(1/dim) */
  int32_t start;
  size_t positions;                /* rows of the output */
  enum table_format format;
  const char *base_text; /* --base as given, for messages */
  const char *name;    /* C identifier, --format c */
  const char *output;  /* NULL: stdout */
  size_t bytes;        /* the table's size */
};

/* Options every table kind shares: --dim, --dtype, --format, --name, -o. */
static int convert_common_table_options(const struct raw_args *args, struct table_request *req) {
  int dtype = POSENC_DTYPE_F32, format = TABLE_FORMAT_NPY;
  size_t dim;
  int rc;
  if ((rc = convert_count(args, OPT_DIM, &dim)) ||
      (rc = convert_choice(args, OPT_DTYPE, dtype_names, COUNT_OF(dtype_names),
                           "unknown dtype (expected f32, f16 or bf16)", &dtype)) ||
      (rc = convert_choice(args, OPT_FORMAT, table_format_names, TABLE_FORMAT_COUNT,
                           "unknown format (expected npy, raw or c)", &format)) ||
      (rc = convert_output(args, OPT_OUTPUT, &req->output)))
    return rc;
  req->params = posenc_sinusoidal_default(dim);
  req->params.dtype = (posenc_dtype)dtype;
  req->format = (enum table_format)format;
  req->base_text = args->value[OPT_BASE] ? args->value[OPT_BASE] : "10000";
  req->name = args->value[OPT_NAME] ? args->value[OPT_NAME] : "posenc_table";
  return EXIT_SUCCESS;
}

static int convert_sinusoidal_options(const struct raw_args *args, struct table_request *req) {
  int layout = POSENC_LAYOUT_INTERLEAVED, freqs = POSENC_FREQ_VASWANI;
  double base = 10000.0, min_timescale = 0.0;
  int rc;
  if ((rc = convert_count(args, OPT_POSITIONS, &req->positions)) ||
      (rc = convert_optional_double(args, OPT_BASE, &base)) ||
      (rc = convert_optional_int32(args, OPT_START, &req->start)) ||
      (rc = convert_choice(args, OPT_LAYOUT, layout_names, COUNT_OF(layout_names),
                           "unknown layout (expected interleaved or split)", &layout)) ||
      (rc = convert_choice(args, OPT_FREQS, freq_names, COUNT_OF(freq_names),
                           "unknown frequency rule (expected vaswani, fairseq or t2t)", &freqs)) ||
      (rc = convert_optional_real(args, OPT_MIN_TIMESCALE, 1, 1e30, &min_timescale)))
    return rc;
  if (args->value[OPT_MIN_TIMESCALE] && freqs != POSENC_FREQ_T2T)
    return bad_value(OPT_MIN_TIMESCALE, args->value[OPT_MIN_TIMESCALE], "only applies to --freqs t2t");
  req->params.base = base;
  req->params.layout = (posenc_layout)layout;
  req->params.freqs = (posenc_freq_rule)freqs;
  req->params.min_timescale = min_timescale;
  return EXIT_SUCCESS;
}

static int convert_learned_options(const struct raw_args *args, struct table_request *req) {
  int init = 0, rc;
  if ((rc = convert_count(args, OPT_ROWS, &req->positions)) ||
      (rc = convert_choice(args, OPT_INIT, init_names, COUNT_OF(init_names),
                           "unknown init (expected trunc-normal)", &init)) ||
      (rc = convert_seed(args, OPT_SEED, &req->seed)) ||
      (rc = convert_optional_real(args, OPT_STD, 1, 1e30, &req->std)))
    return rc;
  if (!args->value[OPT_SEED]) return missing_option(OPT_SEED, args->leaf);
  return EXIT_SUCCESS;
}

/* --grid HxW: two counts >= 1. */
static int convert_grid(const struct raw_args *args, size_t *h, size_t *w) {
  const char *text = args->value[OPT_GRID], *x;
  char first[32];
  size_t len;
  if (!text) return missing_option(OPT_GRID, args->leaf);
  x = strchr(text, 'x');
  len = x ? (size_t)(x - text) : 0;
  if (!x || len == 0 || len >= sizeof first) return bad_value(OPT_GRID, text, "expected HxW, as 14x14");
  memcpy(first, text, len);
  first[len] = '\0';
  if (parse_size(first, h) != PARSE_OK || parse_size(x + 1, w) != PARSE_OK)
    return bad_value(OPT_GRID, text, "expected HxW with decimal H and W, as 14x14");
  if (*h == 0 || *w == 0) return bad_value(OPT_GRID, text, "H and W must be at least 1");
  return EXIT_SUCCESS;
}

static int convert_sincos2d_options(const struct raw_args *args, struct table_request *req) {
  size_t h, w;
  double base = 10000.0;
  int rc;
  if ((rc = convert_grid(args, &h, &w)) || (rc = convert_optional_double(args, OPT_BASE, &base))) return rc;
  req->grid = posenc_sincos_2d_default(req->params.dim, h, w);
  req->grid.embed_dim = req->params.dim;
  req->grid.grid_h = h;
  req->grid.grid_w = w;
  req->grid.cls_token = args->value[OPT_CLS_TOKEN] != NULL;
  req->grid.base = base;
  req->grid.dtype = req->params.dtype;
  req->grid.row_stride = 0;
  if (h > (SIZE_MAX - 1) / w) return bad_value(OPT_GRID, args->value[OPT_GRID], "too many cells");
  req->positions = h * w + (req->grid.cls_token ? 1 : 0);
  return EXIT_SUCCESS;
}

static int convert_table_options(const struct raw_args *args, struct table_request *req) {
  int rc = convert_common_table_options(args, req);
  if (rc) return rc;
  switch (req->leaf) {
    case LEAF_TABLE_LEARNED: return convert_learned_options(args, req);
    case LEAF_TABLE_SINCOS2D: return convert_sincos2d_options(args, req);
    default: return convert_sinusoidal_options(args, req);
  }
}

/* n_rows x dim of dtype, dense: the size of the learned and 2-D tables. */
static posenc_status dense_table_bytes(size_t rows, size_t dim, posenc_dtype dtype, size_t *bytes) {
  size_t es = posenc_dtype_size(dtype);
  if (dim > SIZE_MAX / rows || rows * dim > SIZE_MAX / es) return POSENC_ERR_OVERFLOW;
  *bytes = rows * dim * es;
  return POSENC_OK;
}

/* Checks that involve several options, or the library's own limits. */
static int check_table_request(const struct raw_args *args, struct table_request *req) {
  const char *name_problem = c_identifier_problem(req->name);
  posenc_status st;
  if (args->value[OPT_NAME] && req->format != TABLE_FORMAT_C)
    return bad_value(OPT_NAME, req->name, "only applies to --format c");
  if (name_problem) return bad_value(OPT_NAME, req->name, name_problem);
  if (req->leaf == LEAF_TABLE_SINCOS2D && req->params.dim % 4 != 0)
    return bad_value(OPT_DIM, args->value[OPT_DIM], "must be a multiple of 4 for sincos2d (MAE splits it in 4)");
  if (req->leaf == LEAF_TABLE_SINUSOIDAL &&
      (uint64_t)(req->positions - 1) > (uint64_t)((int64_t)INT32_MAX - req->start)) {
    cli_error("--start %" PRId32 " with --positions %zu: the last position exceeds 2147483647",
              req->start, req->positions);
    return EXIT_USAGE;
  }
  st = req->leaf == LEAF_TABLE_SINUSOIDAL ? posenc_sinusoidal_bytes(&req->params, req->positions, &req->bytes)
     : dense_table_bytes(req->positions, req->params.dim, req->params.dtype, &req->bytes);
  if (st != POSENC_OK) {
    cli_error("%zu rows x --dim %zu: %s", req->positions, req->params.dim, posenc_strerror(st));
    return EXIT_USAGE;
  }
  return EXIT_SUCCESS;
}

static int build_table_request(const struct raw_args *args, struct table_request *req) {
  int rc;
  memset(req, 0, sizeof *req);
  req->leaf = args->leaf;
  if (!args->kind) {
    cli_error("table: missing the table kind (expected sinusoidal, learned or sincos2d)");
    return EXIT_USAGE;
  }
  rc = convert_table_options(args, req);
  return rc ? rc : check_table_request(args, req);
}

/* "posenc table ..." with every parameter spelled out: a C header's provenance. */
static char *canonical_command(const struct table_request *req) {
  const char *dtype = dtype_names[req->params.dtype], *format = table_format_names[req->format];
  switch (req->leaf) {
    case LEAF_TABLE_LEARNED: {
      char std[40] = ""; /* absent: the default sqrt(1/D), as the library computes it */
      if (req->std) snprintf(std, sizeof std, " --std %.17g", req->std);
      return format_new_string("posenc table learned --rows %zu --dim %zu --init trunc-normal --seed %" PRIu64
                               "%s --dtype %s --format %s --name %s", req->positions,
                               req->params.dim, req->seed, std, dtype, format, req->name);
    }
    case LEAF_TABLE_SINCOS2D:
      return format_new_string("posenc table sincos2d --dim %zu --grid %zux%zu%s --base %.17g --dtype %s"
                               " --format %s --name %s", req->params.dim, req->grid.grid_h, req->grid.grid_w,
                               req->grid.cls_token ? " --cls-token" : "", req->grid.base, dtype, format,
                               req->name);
    default: {
      char rule[96] = ""; /* the frequency rule only when it is not the default */
      if (req->params.freqs == POSENC_FREQ_T2T)
        snprintf(rule, sizeof rule, " --freqs t2t --min-timescale %.17g",
                 req->params.min_timescale ? req->params.min_timescale : 1.0);
      else if (req->params.freqs != POSENC_FREQ_VASWANI)
        snprintf(rule, sizeof rule, " --freqs %s", freq_names[req->params.freqs]);
      return format_new_string("posenc table sinusoidal --positions %zu --dim %zu --base %.17g"
                               " --start %" PRId32 " --layout %s%s --dtype %s --format %s --name %s",
                               req->positions, req->params.dim, req->params.base, req->start,
                               layout_names[req->params.layout], rule, dtype, format, req->name);
    }
  }
}

/* ---- running table ------------------------------------------------------------------------- */

/* Library errors that come from the arguments are usage errors naming them; others are bugs. */
static int report_table_status(posenc_status st, const struct table_request *req) {
  switch (st) {
    case POSENC_ERR_BASE:
      return bad_value(OPT_BASE, req->base_text, posenc_strerror(st));
    case POSENC_ERR_POSITION:
      cli_error("--start %" PRId32 " with --positions %zu and --base %s: %s", req->start,
                req->positions, quoted(req->base_text), posenc_strerror(st));
      return EXIT_USAGE;
    case POSENC_ERR_DIM:
      cli_error("--dim %zu: %s for this table kind", req->params.dim, posenc_strerror(st));
      return EXIT_USAGE;
    default:
      cli_error("internal error: %s", posenc_strerror(st));
      return EXIT_FAILURE;
  }
}

static posenc_status fill_table(const struct table_request *req, unsigned char *table) {
  switch (req->leaf) {
    case LEAF_TABLE_LEARNED:
      return posenc_learned_init(req->seed, req->std, req->positions, req->params.dim, req->params.dtype, 0,
                                 table, req->bytes);
    case LEAF_TABLE_SINCOS2D: return posenc_sincos_2d(&req->grid, table, req->bytes);
    default: return posenc_sinusoidal_table(&req->params, req->start, req->positions, table, req->bytes);
  }
}

static int compute_table(const struct table_request *req, unsigned char **table) {
  posenc_status st;
  *table = malloc(req->bytes);
  if (!*table) {
    cli_error("out of memory: the table needs %zu bytes", req->bytes);
    return EXIT_FAILURE;
  }
  st = fill_table(req, *table);
  if (st != POSENC_OK) {
    free(*table);
    *table = NULL;
    return report_table_status(st, req);
  }
  table_to_little_endian(*table, req->bytes / posenc_dtype_size(req->params.dtype),
                         posenc_dtype_size(req->params.dtype));
  return EXIT_SUCCESS;
}

static int render_and_write(const struct table_request *req, const unsigned char *table) {
  struct table_view view;
  struct c_header_info c_info;
  struct rendered_table rendered;
  char *command = NULL;
  int rc;
  view.bytes = table;
  view.size = req->bytes;
  view.rows = req->positions;
  view.cols = req->params.dim;
  view.dtype = req->params.dtype;
  if (req->format == TABLE_FORMAT_C && !(command = canonical_command(req))) {
    cli_error("out of memory");
    return EXIT_FAILURE;
  }
  c_info.name = req->name;
  c_info.title = req->leaf == LEAF_TABLE_LEARNED  ? "Learned positional-embedding table (initial values)"
               : req->leaf == LEAF_TABLE_SINCOS2D ? "2-D sin-cos positional-embedding table"
                                                  : "Sinusoidal positional-encoding table";
  c_info.command = command;
  c_info.notes = NULL;
  c_info.first_position = req->leaf == LEAF_TABLE_SINUSOIDAL ? req->start : 0;
  rc = render_table(&view, req->format, &c_info, &rendered);
  if (rc == EXIT_SUCCESS) rc = write_output(req->output, rendered.spans, rendered.count);
  rendered_table_free(&rendered);
  free(command);
  return rc;
}

/* Rows row0 .. row0+n-1 of a sinusoidal table (a row_stream's fill). */
static int fill_sinusoidal_rows(void *ctx, size_t row0, size_t n, unsigned char *out) {
  const struct table_request *req = (const struct table_request *)ctx;
  int32_t first = (int32_t)((int64_t)req->start + (int64_t)row0); /* fits: checked with the request */
  size_t bytes = n * req->params.dim * posenc_dtype_size(req->params.dtype);
  posenc_status st = posenc_sinusoidal_table(&req->params, first, n, out, bytes);
  return st == POSENC_OK ? EXIT_SUCCESS : report_table_status(st, req);
}

/* A sinusoidal table's rows are independent and a .npy header or raw bytes need nothing from
 * the whole table: those are streamed. A C header starts with the whole table's XXH3, and the
 * library makes learned and 2-D tables in one call with no first row to start at: those are
 * computed whole. */
static int table_streams(const struct table_request *req) {
  return req->leaf == LEAF_TABLE_SINUSOIDAL && req->format != TABLE_FORMAT_C;
}

static int stream_table(const struct table_request *req) {
  struct row_stream stream;
  size_t shape[2];
  stream.rows = req->positions;
  stream.elem_size = posenc_dtype_size(req->params.dtype);
  stream.row_bytes = req->params.dim * stream.elem_size;
  stream.fill = fill_sinusoidal_rows;
  stream.check = NULL; /* BASE and POSITION are decided by the first and last positions */
  stream.ctx = (void *)req;
  shape[0] = req->positions;
  shape[1] = req->params.dim;
  return write_row_stream(req->output, req->format, npy_type_of(req->params.dtype), shape, 2, &stream);
}

static int run_table(const struct table_request *req) {
  unsigned char *table;
  int rc;
  if (table_streams(req)) return stream_table(req);
  rc = compute_table(req, &table);
  if (rc != EXIT_SUCCESS) return rc;
  rc = render_and_write(req, table);
  free(table);
  return rc;
}

/* ---- ISA selection and info ---------------------------------------------------------------- */

/* "scalar, sse2, ... or auto": every backend the library knows, compiled in here or not. */
static const char *isa_choices(void) {
  static char text[POSENC_ISA_COUNT * 16 + 16];
  int i;
  text[0] = '\0';
  for (i = 0; i < POSENC_ISA_COUNT; i++) {
    strncat(text, posenc_isa_name((posenc_isa)i), 15);
    strcat(text, ", ");
  }
  strcat(text, "or auto");
  return text;
}

static int convert_isa(const char *text, posenc_isa *isa) {
  char why[sizeof "unknown ISA (expected )" + POSENC_ISA_COUNT * 16 + 16];
  *isa = POSENC_ISA_AUTO;
  if (!text) return EXIT_SUCCESS;
  if (posenc_isa_from_name(text, isa) != POSENC_OK) {
    snprintf(why, sizeof why, "unknown ISA (expected %s)", isa_choices());
    return bad_value(OPT_ISA, text, why);
  }
  return EXIT_SUCCESS;
}

static int isa_available(posenc_isa isa) {
  return posenc_isa_compiled(isa) && posenc_isa_supported(isa);
}

static const char *isa_unavailable_reason(posenc_isa isa) {
  return !posenc_isa_compiled(isa) ? "not compiled into this build" : "not supported by this CPU";
}

/* --isa: a known name that this machine cannot run is a runtime error, not a usage error.
 * (auto always succeeds: scalar is always available.) */
static int apply_isa(const char *text, posenc_isa isa) {
  if (!text || posenc_isa_set(isa) == POSENC_OK) return EXIT_SUCCESS;
  cli_error("--isa %s: %s", quoted(text), isa_unavailable_reason(isa));
  return EXIT_FAILURE;
}

static const char *yes_no(int value) { return value ? "yes" : "no"; }

static void print_env_request(void) {
  posenc_isa wanted;
  int state = posenc_isa_requested(&wanted);
  const char *env = getenv("POSENC_ISA"); /* what the library read: it has no accessor */
  if (!env) env = "";
  if (state == 0)
    printf("POSENC_ISA: unset\n");
  else if (state < 0)
    printf("POSENC_ISA: %s (ignored: unknown ISA)\n", quoted(env));
  else if (wanted != POSENC_ISA_AUTO && !isa_available(wanted))
    printf("POSENC_ISA: %s (ignored: %s)\n", quoted(env), isa_unavailable_reason(wanted));
  else
    printf("POSENC_ISA: %s\n", quoted(env));
}

/* A failing self-test is a fact to report, not a failure to run info: it still exits 0. */
static int run_info(const char *isa_option) {
  posenc_selftest_result report;
  posenc_status selftest;
  int i;
  printf("version: %s\n", POSENC_VERSION_STRING);
  for (i = 0; i < POSENC_ISA_COUNT; i++) {
    posenc_isa isa = (posenc_isa)i;
    printf("isa %s compiled: %s\n", posenc_isa_name(isa), yes_no(posenc_isa_compiled(isa)));
    printf("isa %s supported: %s\n", posenc_isa_name(isa), yes_no(posenc_isa_supported(isa)));
  }
  print_env_request();
  printf("--isa: %s\n", isa_option ? isa_option : "not given");
  printf("active isa: %s\n", posenc_isa_name(posenc_isa_active()));
  selftest = posenc_selftest_report(&report);
  if (selftest == POSENC_OK) {
    printf("selftest: passed\n");
  } else {
    printf("selftest: FAILED (%s)\n", posenc_strerror(selftest));
    printf("selftest failed checks:");
    for (i = 0; i < POSENC_SELFTEST_CHECKS; i++)
      if (report.failed & (1u << i)) printf(" %s", posenc_selftest_check_name(1u << i));
    printf("\nselftest normal values exact: %s\n", yes_no(report.normal_exact));
  }
  return cli_finish_stdout();
}

static int print_text(const char *text) {
  fputs(text, stdout);
  return cli_finish_stdout();
}

static int print_help(const struct raw_args *args) {
  switch (args->command) {
    case CMD_INFO: return print_text(info_help);
    case CMD_TABLE: return print_text(table_help);
    case CMD_ROPE:
      rope_help(args->leaf, stdout);
      return cli_finish_stdout();
    case CMD_EMBED: return print_text(embed_help);
    case CMD_ANALYZE: return print_text(analyze_help);
    case CMD_ALIBI: case CMD_T5: case CMD_DEBERTA: return print_text(bias_help_text(args->command));
    case CMD_NONE: case CMD_COUNT: break;
  }
  printf(main_help, isa_choices());
  return cli_finish_stdout();
}

/* ---- main ---------------------------------------------------------------------------------- */

int main(int argc, char **argv) {
  struct raw_args args;
  struct table_request req;
  struct rope_request rope_req;
  struct embed_request embed_req;
  struct analyze_request analyze_req;
  struct bias_request bias_req;
  posenc_isa isa;
  int rc;
  cli_stdio_binary();
  if ((rc = parse_argv(argc, argv, &args)) != EXIT_SUCCESS) return rc;
  if (args.value[OPT_HELP]) return print_help(&args);
  if (args.value[OPT_VERSION]) return print_text("posenc " POSENC_VERSION_STRING "\n");
  if (args.command == CMD_NONE) {
    cli_error("missing command (expected info, table, rope, embed, analyze, alibi, t5 or deberta; "
              "see 'posenc --help')");
    return EXIT_USAGE;
  }
  /* usage errors first, then what depends on this machine */
  if ((rc = convert_isa(args.value[OPT_ISA], &isa)) != EXIT_SUCCESS) return rc;
  if (args.command == CMD_TABLE && (rc = build_table_request(&args, &req)) != EXIT_SUCCESS)
    return rc;
  if (args.command == CMD_ROPE && (rc = build_rope_request(&args, &rope_req)) != EXIT_SUCCESS)
    return rc;
  if (args.command == CMD_EMBED && (rc = build_embed_request(&args, &embed_req)) != EXIT_SUCCESS)
    return rc;
  if (args.command == CMD_ANALYZE && (rc = build_analyze_request(&args, &analyze_req)) != EXIT_SUCCESS)
    return rc;
  if ((args.command == CMD_ALIBI || args.command == CMD_T5 || args.command == CMD_DEBERTA) &&
      (rc = build_bias_request(&args, &bias_req)) != EXIT_SUCCESS)
    return rc;
  if ((rc = apply_isa(args.value[OPT_ISA], isa)) != EXIT_SUCCESS) return rc;
  switch (args.command) {
    case CMD_TABLE: return run_table(&req);
    case CMD_ROPE: return run_rope(&rope_req);
    case CMD_EMBED: return run_embed(&embed_req);
    case CMD_ANALYZE: return run_analyze(&analyze_req);
    case CMD_ALIBI: case CMD_T5: case CMD_DEBERTA: return run_bias(&bias_req);
    default: return run_info(args.value[OPT_ISA]);
  }
}
