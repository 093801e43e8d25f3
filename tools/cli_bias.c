/* cli_bias.c - 'posenc alibi|t5|deberta ...' (see cli_bias.h).
 *
 * Exit statuses as in the rest of the tool: EXIT_USAGE for anything about the options themselves,
 * including a library error they cause (an odd bucket count in bidirectional mode names the
 * option and posenc_strerror's text); EXIT_FAILURE for I/O, memory and the contents of input
 * files (a bias table too small for --buckets). */
#include "cli_bias.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "cli_format.h"
#include "cli_input.h"
#include "cli_parse.h"
#include "cli_stream.h"
#include "cli_write.h"

#define COUNT_OF(array) (sizeof(array) / sizeof((array)[0]))

/* ---- help ------------------------------------------------------------------------------------- */

static const char alibi_help[] =
  "Usage: posenc alibi slopes --heads H [--max-bias B] [--format text|npy] [-o FILE]\n"
  "       posenc alibi bias --heads H --queries Q --keys K [options] [-o B.npy]\n"
  "\n"
  "ALiBi (Press et al.): head h adds m_h * D to its attention scores, D an integer distance.\n"
  "slopes: m_h for h = 0..H-1, the original get_slopes (identical to Bloom, MPT and ggml with\n"
  "  max_bias 8), each the correctly rounded float32 of 2^e: c = 2^floor(log2 H),\n"
  "  e = -B(h+1)/c for h < c, else -B(2(h-c)+1)/(2c)\n"
  "  text (default on stdout): one slope per line, 9 significant digits (exact as float32)\n"
  "  npy (default with -o FILE): a float32 array of shape (H,)\n"
  "bias: the bias block (H, Q, K) as .npy: what posenc_alibi_add adds to a tile of zeros, so\n"
  "  entry (h, i, j) = fl32(m_h * D) for query position q = P+i and key position k = P'+j,\n"
  "  and -inf where the mask hides the key (k > q with --causal, q - k >= W with --window)\n"
  "\n"
  "Options:\n"
  "  --heads H            number of heads, at least 1\n"
  "  --max-bias B         the slopes' B, in (0, 100] (default 8, every ALiBi model)\n"
  "  --queries Q          bias: rows (query positions P .. P+Q-1)\n"
  "  --keys K             bias: columns (key positions P' .. P'+K-1)\n"
  "  --form F             bias: which D: symmetric, D = -|k - q| (MPT bidirectional);\n"
  "                       relative, D = k - q (causal models); key, D = k - N (the original and\n"
  "                       Bloom with N = 0, MPT causal with N = keys-1: a constant per row away\n"
  "                       from relative, the same softmax). Default: relative with --causal,\n"
  "                       else symmetric\n"
  "  --key-origin N       bias: the N of --form key (default 0)\n"
  "  --causal             bias: mask keys after the query (k > q)\n"
  "  --window W           bias: sliding window, mask q - k >= W (default 0: none)\n"
  "  --q-pos P            bias: position of the first query (default 0; the KV offset when\n"
  "                       decoding)\n"
  "  --k-pos P'           bias: position of the first key (default 0)\n"
  "  --dtype T            bias: f32 (default, <f4) or f16 (<f2)\n"
  "  --format F           slopes: text or npy\n"
  "  -o, --output FILE    write FILE instead of stdout (replaced only once complete)\n"
  "  -h, --help           show this help\n";

static const char t5_help[] =
  "Usage: posenc t5 buckets --from A --to B [--causal] [--buckets N] [--max-distance M]\n"
  "                         [--format text|npy] [-o FILE]\n"
  "       posenc t5 bias --table T.npy --queries Q --keys K [options] [-o B.npy]\n"
  "\n"
  "T5 relative position buckets (HF _relative_position_bucket), r = k - q:\n"
  "  bidirectional (default; encoders): n = N/2, offset n if r > 0, a = |r|\n"
  "  --causal (decoders): n = N, offset 0, a = max(-r, 0); e = n/2 (the exact range)\n"
  "  bucket = offset + (a < e ? a : min(e + floor(ln(a/e) / ln(M/e) * (n - e)), n - 1)),\n"
  "  the floor of the exact real value (HF's float32 gives the same for T5's configurations)\n"
  "buckets: the bucket of every r = A .. B\n"
  "  text (default on stdout): one line 'r bucket' per r\n"
  "  npy (default with -o FILE): an int32 array of shape (B - A + 1,)\n"
  "bias: the bias block (H, Q, K) as .npy: what posenc_t5_bias_add adds to a tile of zeros,\n"
  "  entry (h, i, j) = T[bucket(k - q)][h] for q = P+i, k = P'+j; -inf where masked.\n"
  "  T is nn.Embedding(N, H).weight: (rows >= N, H), <f4, <f2 or <u2 (bfloat16 bits)\n"
  "\n"
  "Options:\n"
  "  --from A, --to B     buckets: the relative positions A <= B\n"
  "  --causal             unidirectional buckets; bias: also the causal mask (k > q), as in\n"
  "                       T5's decoder\n"
  "  --buckets N          num_buckets (default 32); bidirectional: even and >= 4, causal: >= 2;\n"
  "                       at most 1024\n"
  "  --max-distance M     max_distance (default 128); must exceed e\n"
  "  --table T.npy        bias: the learned table\n"
  "  --queries Q          bias: rows (query positions P .. P+Q-1)\n"
  "  --keys K             bias: columns (key positions P' .. P'+K-1)\n"
  "  --window W           bias: sliding window, mask q - k >= W (default 0: none)\n"
  "  --q-pos P            bias: position of the first query (default 0)\n"
  "  --k-pos P'           bias: position of the first key (default 0)\n"
  "  --dtype T            bias: f32 (default, <f4) or f16 (<f2)\n"
  "  --format F           buckets: text or npy\n"
  "  -o, --output FILE    write FILE instead of stdout (replaced only once complete)\n"
  "  -h, --help           show this help\n";

static const char deberta_help[] =
  "Usage: posenc deberta buckets --from A --to B [--bucket-size N] [--max-position M]\n"
  "                              [--format text|npy] [-o FILE]\n"
  "       posenc deberta relative --queries Q --keys K [--bucket-size N] [--max-position M]\n"
  "                               [-o R.npy]\n"
  "\n"
  "DeBERTa v2/v3 log buckets (make_log_bucket_position), r = q - k (the opposite of T5):\n"
  "  mid = N/2; |r| <= mid: r; else sign(r) (mid + ceil(ln(|r|/mid) / ln((M-1)/mid) (mid-1))),\n"
  "  the ceiling of the exact real value, not clamped (DeBERTa clamps where it uses them)\n"
  "buckets: the bucket of every r = A .. B\n"
  "  text (default on stdout): one line 'r bucket' per r\n"
  "  npy (default with -o FILE): an int32 array of shape (B - A + 1,)\n"
  "relative: build_relative_position, R[q][k] = bucket(q - k), an int32 array (Q, K)\n"
  "\n"
  "Options:\n"
  "  --from A, --to B     buckets: the relative positions A <= B\n"
  "  --queries Q          relative: rows\n"
  "  --keys K             relative: columns\n"
  "  --bucket-size N      position_buckets (default 256; even, not 2; 0: no buckets, r itself)\n"
  "  --max-position M     max_relative_positions (default 512); M - 1 must exceed N/2\n"
  "  --format F           buckets: text or npy\n"
  "  -o, --output FILE    write FILE instead of stdout (replaced only once complete)\n"
  "  -h, --help           show this help\n";

static const char *const form_names[] = {"symmetric", "relative", "key"}; /* by posenc_alibi_form */
static const char *const dtype_names[] = {"f32", "f16"};                  /* by posenc_dtype */
static const char *const format_names[] = {"text", "npy"};

const char *bias_help_text(enum command command) {
  return command == CMD_ALIBI ? alibi_help : command == CMD_T5 ? t5_help : deberta_help;
}

/* ---- converting values -------------------------------------------------------------------------- */

/* An optional uint32 (bucket counts and distances: the library judges 0 and the rest). */
static int convert_u32(const struct raw_args *args, enum option_id id, uint32_t *out) {
  const char *text = args->value[id];
  size_t value;
  enum parse_result result;
  if (!text) return EXIT_SUCCESS;
  if ((result = parse_size(text, &value)) != PARSE_OK) return bad_value(id, text, parse_result_text(result));
  if (value > UINT32_MAX) return bad_value(id, text, "out of range");
  *out = (uint32_t)value;
  return EXIT_SUCCESS;
}

/* A library error caused by the options: what they said, and the library's reason. */
static int config_error(const struct bias_request *req, posenc_status st) {
  switch (req->leaf) {
    case LEAF_ALIBI_SLOPES:
    case LEAF_ALIBI_BIAS:
      if (st == POSENC_ERR_PARAM && req->max_bias_text) return bad_value(OPT_MAX_BIAS, req->max_bias_text, posenc_strerror(st));
      break;
    case LEAF_T5_BUCKETS:
    case LEAF_T5_BIAS:
      return cli_usage_error("--buckets %" PRIu32 " with --max-distance %" PRIu32 " (%s): %s", req->t5.num_buckets,
                             req->t5.max_distance, req->t5.bidirectional ? "bidirectional" : "causal",
                             st != POSENC_ERR_DIM ? posenc_strerror(st)
                             : req->t5.bidirectional ? "invalid dimension: the bucket count must be even, 4 to 1024"
                                                     : "invalid dimension: the bucket count must be 2 to 1024");
    default:
      return cli_usage_error("--bucket-size %" PRIu32 " with --max-position %" PRIu32 ": %s", req->bucket_size,
                             req->max_position,
                             st != POSENC_ERR_DIM ? posenc_strerror(st)
                                                  : "invalid dimension: the bucket size must be 0 (none) or even, 4 to 65536");
  }
  return cli_usage_error("%s: %s", leaf_title(req->leaf), posenc_strerror(st));
}

/* The tile options: --queries, --keys, the mask and the positions, --dtype. */
static int convert_tile_options(const struct raw_args *args, struct bias_request *req) {
  int dtype = 0, rc;
  if ((rc = convert_count(args, OPT_QUERIES, &req->queries)) || (rc = convert_count(args, OPT_KEYS, &req->keys)))
    return rc;
  if (req->leaf == LEAF_DEBERTA_RELATIVE) return EXIT_SUCCESS;
  if ((rc = convert_optional_int32(args, OPT_WINDOW, &req->mask.window)) ||
      (rc = convert_optional_int32(args, OPT_Q_POS, &req->q_pos)) ||
      (rc = convert_optional_int32(args, OPT_K_POS, &req->k_pos)) ||
      (rc = convert_choice(args, OPT_DTYPE, dtype_names, COUNT_OF(dtype_names),
                           "unknown dtype (expected f32 or f16)", &dtype)))
    return rc;
  if (req->mask.window < 0) return bad_value(OPT_WINDOW, args->value[OPT_WINDOW], "must not be negative");
  req->mask.causal = args->value[OPT_CAUSAL] != NULL;
  req->dtype = (posenc_dtype)dtype;
  return EXIT_SUCCESS;
}

static int convert_alibi(const struct raw_args *args, struct bias_request *req) {
  int form, rc;
  float slope;
  if ((rc = convert_count(args, OPT_HEADS, &req->heads)) ||
      (rc = convert_optional_double(args, OPT_MAX_BIAS, &req->max_bias)))
    return rc;
  req->max_bias_text = args->value[OPT_MAX_BIAS];
  if (posenc_alibi_slopes(1, req->max_bias, &slope) != POSENC_OK) /* the range of B, before any work */
    return config_error(req, POSENC_ERR_PARAM);
  if (req->leaf == LEAF_ALIBI_SLOPES) return EXIT_SUCCESS;
  if ((rc = convert_tile_options(args, req))) return rc;
  form = req->mask.causal ? POSENC_ALIBI_RELATIVE : POSENC_ALIBI_SYMMETRIC;
  if ((rc = convert_choice(args, OPT_FORM, form_names, COUNT_OF(form_names),
                           "unknown form (expected symmetric, relative or key)", &form)) ||
      (rc = convert_optional_int32(args, OPT_KEY_ORIGIN, &req->key_origin)))
    return rc;
  req->form = (posenc_alibi_form)form;
  if (args->value[OPT_KEY_ORIGIN] && req->form != POSENC_ALIBI_KEY)
    return bad_value(OPT_KEY_ORIGIN, args->value[OPT_KEY_ORIGIN], "only applies to --form key");
  return EXIT_SUCCESS;
}

static int convert_t5(const struct raw_args *args, struct bias_request *req) {
  posenc_status st;
  int rc;
  req->t5.num_buckets = 32;
  req->t5.max_distance = 128;
  req->t5.bidirectional = args->value[OPT_CAUSAL] == NULL;
  if ((rc = convert_u32(args, OPT_BUCKETS, &req->t5.num_buckets)) ||
      (rc = convert_u32(args, OPT_MAX_DISTANCE, &req->t5.max_distance)))
    return rc;
  if ((st = posenc_t5_check(&req->t5)) != POSENC_OK) return config_error(req, st);
  if (req->leaf == LEAF_T5_BUCKETS) return EXIT_SUCCESS;
  if (!(req->table_path = args->value[OPT_TABLE])) return missing_option(OPT_TABLE, req->leaf);
  return convert_tile_options(args, req);
}

static int convert_deberta(const struct raw_args *args, struct bias_request *req) {
  int32_t one;
  posenc_status st;
  int rc;
  req->bucket_size = 256;
  req->max_position = 512;
  if ((rc = convert_u32(args, OPT_BUCKET_SIZE, &req->bucket_size)) ||
      (rc = convert_u32(args, OPT_MAX_POSITION, &req->max_position)))
    return rc;
  if ((st = posenc_deberta_bucket_range(req->bucket_size, req->max_position, 0, 1, &one)) != POSENC_OK)
    return config_error(req, st); /* the configuration, checked on one position */
  return req->leaf == LEAF_DEBERTA_RELATIVE ? convert_tile_options(args, req) : EXIT_SUCCESS;
}

/* --from A --to B, and --format (text on stdout, npy into a file, unless said otherwise). */
static int convert_list_options(const struct raw_args *args, struct bias_request *req) {
  int format = req->output ? 1 : 0, rc;
  if ((rc = convert_choice(args, OPT_FORMAT, format_names, COUNT_OF(format_names),
                           "unknown format (expected text or npy)", &format)))
    return rc;
  req->text = format == 0;
  if (req->leaf == LEAF_ALIBI_SLOPES) return EXIT_SUCCESS;
  if (!args->value[OPT_FROM]) return missing_option(OPT_FROM, req->leaf);
  if (!args->value[OPT_TO]) return missing_option(OPT_TO, req->leaf);
  if ((rc = convert_optional_int32(args, OPT_FROM, &req->from)) ||
      (rc = convert_optional_int32(args, OPT_TO, &req->to)))
    return rc;
  if (req->to < req->from) return cli_usage_error("--to %" PRId32 " is below --from %" PRId32, req->to, req->from);
  return EXIT_SUCCESS;
}

int build_bias_request(const struct raw_args *args, struct bias_request *req) {
  int rc;
  memset(req, 0, sizeof *req);
  req->leaf = args->leaf;
  if (req->leaf == LEAF_NONE)
    return cli_usage_error("%s: missing the kind (expected %s)", command_names[args->command],
                           expected_kinds(args->command));
  if ((rc = convert_output(args, OPT_OUTPUT, &req->output))) return rc;
  req->max_bias = 8.0;
  if ((req->leaf == LEAF_ALIBI_SLOPES || req->leaf == LEAF_T5_BUCKETS || req->leaf == LEAF_DEBERTA_BUCKETS) &&
      (rc = convert_list_options(args, req)))
    return rc;
  switch (req->leaf) {
    case LEAF_ALIBI_SLOPES: case LEAF_ALIBI_BIAS: return convert_alibi(args, req);
    case LEAF_T5_BUCKETS: case LEAF_T5_BIAS: return convert_t5(args, req);
    default: return convert_deberta(args, req);
  }
}

/* ---- output ------------------------------------------------------------------------------------- */

static void *alloc_or_report(size_t bytes, const char *what) {
  void *p = calloc(bytes ? bytes : 1, 1);
  if (!p) cli_error("out of memory: %s needs %zu bytes", what, bytes);
  return p;
}

/* Text lines built in memory, then written all-or-nothing. */
struct text {
  char *data;
  size_t len, cap;
  int failed;
};

static void text_printf(struct text *t, const char *fmt, ...) CLI_PRINTF(2, 3);
static void text_printf(struct text *t, const char *fmt, ...) {
  va_list ap;
  int n;
  if (t->failed) return;
  if (t->cap - t->len < 64) {
    size_t cap = t->cap ? 2 * t->cap : 4096;
    char *grown = cap > t->cap ? realloc(t->data, cap) : NULL;
    if (!grown) {
      t->failed = 1;
      return;
    }
    t->data = grown;
    t->cap = cap;
  }
  va_start(ap, fmt);
  n = vsnprintf(t->data + t->len, t->cap - t->len, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= t->cap - t->len) t->failed = 1; /* every line here is far shorter */
  else t->len += (size_t)n;
}

static int write_text(const char *path, struct text *t) {
  struct byte_span span;
  int rc;
  if (t->failed) {
    cli_error("out of memory");
    rc = EXIT_FAILURE;
  } else {
    span.data = t->data;
    span.size = t->len;
    rc = write_output(path, &span, 1);
  }
  free(t->data);
  return rc;
}

/* ---- running ------------------------------------------------------------------------------------ */

static int run_slopes(const struct bias_request *req) {
  float *slopes;
  posenc_status st;
  int rc;
  if (req->heads > SIZE_MAX / sizeof *slopes) return cli_usage_error("--heads %zu: out of range", req->heads);
  if (!(slopes = alloc_or_report(req->heads * sizeof *slopes, "the slopes"))) return EXIT_FAILURE;
  if ((st = posenc_alibi_slopes(req->heads, req->max_bias, slopes)) != POSENC_OK) {
    rc = config_error(req, st);
  } else if (req->text) {
    struct text t = {NULL, 0, 0, 0};
    size_t h;
    for (h = 0; h < req->heads; h++) text_printf(&t, "%.9g\n", (double)slopes[h]);
    rc = write_text(req->output, &t);
  } else {
    rc = write_npy_file(req->output, POSENC_NPY_F32, &req->heads, 1, slopes, req->heads, sizeof *slopes);
  }
  free(slopes);
  return rc;
}

/* r = from .. to with their buckets, as 'r bucket' lines or an int32 .npy. */
static int run_buckets(const struct bias_request *req) {
  size_t count = (size_t)((int64_t)req->to - req->from) + 1;
  int32_t *buckets;
  posenc_status st;
  int rc;
  if (count > SIZE_MAX / sizeof *buckets) return cli_usage_error("--from/--to: too many positions");
  if (!(buckets = alloc_or_report(count * sizeof *buckets, "the buckets"))) return EXIT_FAILURE;
  st = req->leaf == LEAF_T5_BUCKETS
       ? posenc_t5_bucket_range(&req->t5, req->from, count, buckets)
       : posenc_deberta_bucket_range(req->bucket_size, req->max_position, req->from, count, buckets);
  if (st != POSENC_OK) {
    rc = config_error(req, st);
  } else if (req->text) {
    struct text t = {NULL, 0, 0, 0};
    size_t i;
    for (i = 0; i < count; i++)
      text_printf(&t, "%" PRId64 " %" PRId32 "\n", (int64_t)req->from + (int64_t)i, buckets[i]);
    rc = write_text(req->output, &t);
  } else {
    rc = write_npy_file(req->output, POSENC_NPY_I32, &count, 1, buckets, count, sizeof *buckets);
  }
  free(buckets);
  return rc;
}

static int run_relative(const struct bias_request *req) {
  size_t shape[2], count;
  int32_t *rel;
  posenc_status st;
  int rc;
  shape[0] = req->queries;
  shape[1] = req->keys;
  if (req->keys > SIZE_MAX / sizeof *rel / req->queries)
    return cli_usage_error("--queries %zu x --keys %zu: %s", req->queries, req->keys,
                           posenc_strerror(POSENC_ERR_OVERFLOW));
  count = req->queries * req->keys;
  if (!(rel = alloc_or_report(count * sizeof *rel, "the relative positions"))) return EXIT_FAILURE;
  st = posenc_deberta_relative(req->queries, req->keys, req->bucket_size, req->max_position, rel, count);
  rc = st != POSENC_OK ? config_error(req, st)
                       : write_npy_file(req->output, POSENC_NPY_I32, shape, 2, rel, count, sizeof *rel);
  free(rel);
  return rc;
}

/* The T5 table: (rows, heads) of <f4, <f2 or <u2 (bfloat16 bits). */
static int load_t5_table(const struct bias_request *req, struct npy_input *in, posenc_table *table) {
  char shape[96];
  int rc = npy_load(option_label(OPT_TABLE), req->table_path, in);
  if (rc != EXIT_SUCCESS) return rc;
  switch (in->info.type) {
    case POSENC_NPY_F32: table->dtype = POSENC_DTYPE_F32; break;
    case POSENC_NPY_F16: table->dtype = POSENC_DTYPE_F16; break;
    case POSENC_NPY_U16: table->dtype = POSENC_DTYPE_BF16; break;
    default:
      return input_error(in, "dtype %s, expected <f4 (float32), <f2 (float16) or <u2 (bfloat16 bits)",
                         npy_dtype_descr(in->info.type));
  }
  if (in->info.ndim != 2 || in->info.count == 0)
    return input_error(in, "shape %s, expected (buckets, heads), both at least 1",
                       input_shape(in, shape, sizeof shape));
  if (in->info.shape[0] < req->t5.num_buckets)
    return input_error(in, "%zu rows, fewer than --buckets %" PRIu32 ": %s", in->info.shape[0],
                       req->t5.num_buckets, posenc_strerror(POSENC_ERR_TABLE));
  table->data = in->data;
  table->n_rows = in->info.shape[0];
  table->dim = in->info.shape[1];
  table->row_stride = 0;
  return EXIT_SUCCESS;
}

/* A tile error: the positions, or a bug (everything else was checked before). */
static int tile_error(const struct bias_request *req, size_t heads, posenc_status st) {
  if (st == POSENC_ERR_POSITION)
    return cli_usage_error("--q-pos %" PRId32 " with --queries %zu and --k-pos %" PRId32 " with --keys %zu: %s",
                           req->q_pos, req->queries, req->k_pos, req->keys, posenc_strerror(st));
  if (st == POSENC_ERR_OVERFLOW)
    return cli_usage_error("%zu heads x --queries %zu x --keys %zu: %s", heads, req->queries, req->keys,
                           posenc_strerror(st));
  cli_error("internal error: %s", posenc_strerror(st));
  return EXIT_FAILURE;
}

/* What computing the (heads, queries, keys) bias block a chunk of rows at a time needs; row r
 * of the block is head r / queries, query r % queries. */
struct bias_chunks {
  const struct bias_request *req;
  size_t heads;
  size_t row_bytes;             /* keys * element size */
  const float *slopes;          /* ALiBi: one per head */
  const posenc_table *table;    /* T5 */
  posenc_t5_plan plan;          /* T5 */
};

/* The bias of one head's rows, added to zeros: a tile of m queries from query i. */
static posenc_status add_head_rows(const struct bias_chunks *c, size_t h, size_t i, size_t m, void *out) {
  const struct bias_request *req = c->req;
  posenc_score_tile tile;
  memset(&tile, 0, sizeof tile);
  tile.scores = out;
  tile.dtype = req->dtype;
  tile.heads = 1;
  tile.rows = m;
  tile.cols = req->keys;
  tile.q_pos = (int32_t)((int64_t)req->q_pos + (int64_t)i); /* fits: checked in run_tile */
  tile.k_pos = req->k_pos;
  if (req->leaf == LEAF_ALIBI_BIAS) return posenc_alibi_add(&tile, &req->mask, req->form, req->key_origin, c->slopes + h);
  return posenc_t5_bias_add(&tile, &req->mask, &c->plan, c->table, h);
}

/* Rows row0 .. row0+n-1 of the block (a row_stream's fill): one tile per head they cross. Every
 * entry depends only on (head, query, key), so the chunks join into the block one call makes. */
static int fill_bias_rows(void *ctx, size_t row0, size_t n, unsigned char *out) {
  const struct bias_chunks *c = (const struct bias_chunks *)ctx;
  memset(out, 0, n * c->row_bytes); /* zero bits are +0 in f32 and f16 alike */
  while (n > 0) {
    size_t h = row0 / c->req->queries, i = row0 % c->req->queries;
    size_t m = c->req->queries - i < n ? c->req->queries - i : n;
    posenc_status st = add_head_rows(c, h, i, m, out);
    if (st != POSENC_OK) return tile_error(c->req, c->heads, st);
    out += m * c->row_bytes;
    row0 += m;
    n -= m;
  }
  return EXIT_SUCCESS;
}

/* The bias added to a tile of zeros, (heads, queries, keys): ALiBi's heads are --heads, T5's
 * the table's columns. Streamed a chunk of rows at a time (one row at least: --keys sets the
 * smallest chunk). The errors a tile can give are decided by its corners, which the stream's
 * check (the first and the last row) computes before anything is written; positions past
 * INT32_MAX are refused here, as the library refuses them for the whole tile. */
static int run_tile(const struct bias_request *req) {
  struct npy_input table_file;
  posenc_table table;
  struct bias_chunks *chunks;
  struct row_stream stream;
  size_t es = posenc_dtype_size(req->dtype), heads = req->heads, shape[3];
  float *slopes = NULL;
  posenc_status st = POSENC_OK;
  int rc = EXIT_SUCCESS;
  memset(&table_file, 0, sizeof table_file);
  memset(&table, 0, sizeof table);
  if (!(chunks = alloc_or_report(sizeof *chunks, "the bias plan"))) return EXIT_FAILURE;
  if (req->leaf == LEAF_T5_BIAS && (rc = load_t5_table(req, &table_file, &table)) == EXIT_SUCCESS)
    heads = table.dim;
  if (rc == EXIT_SUCCESS && (req->queries > SIZE_MAX / heads || req->keys > SIZE_MAX / es / (heads * req->queries)))
    rc = tile_error(req, heads, POSENC_ERR_OVERFLOW);
  if (rc == EXIT_SUCCESS && (req->queries - 1 > (size_t)INT32_MAX || req->keys - 1 > (size_t)INT32_MAX ||
                             (int64_t)req->q_pos + (int64_t)(req->queries - 1) > INT32_MAX ||
                             (int64_t)req->k_pos + (int64_t)(req->keys - 1) > INT32_MAX))
    rc = tile_error(req, heads, POSENC_ERR_POSITION);
  if (rc == EXIT_SUCCESS && req->leaf == LEAF_ALIBI_BIAS) {
    if (!(slopes = alloc_or_report(heads * sizeof *slopes, "the slopes"))) rc = EXIT_FAILURE;
    else st = posenc_alibi_slopes(heads, req->max_bias, slopes);
  } else if (rc == EXIT_SUCCESS) {
    st = posenc_t5_plan_init(&chunks->plan, &req->t5);
  }
  if (rc == EXIT_SUCCESS && st != POSENC_OK) rc = tile_error(req, heads, st);
  if (rc == EXIT_SUCCESS) {
    chunks->req = req;
    chunks->heads = heads;
    chunks->row_bytes = req->keys * es;
    chunks->slopes = slopes;
    chunks->table = &table;
    stream.rows = heads * req->queries;
    stream.row_bytes = chunks->row_bytes;
    stream.elem_size = es;
    stream.fill = fill_bias_rows;
    stream.check = NULL;
    stream.ctx = chunks;
    shape[0] = heads;
    shape[1] = req->queries;
    shape[2] = req->keys;
    rc = write_row_stream(req->output, TABLE_FORMAT_NPY, npy_type_of(req->dtype), shape, 3, &stream);
  }
  free(slopes);
  free(chunks);
  npy_input_free(&table_file);
  return rc;
}

int run_bias(const struct bias_request *req) {
  switch (req->leaf) {
    case LEAF_ALIBI_SLOPES: return run_slopes(req);
    case LEAF_T5_BUCKETS: case LEAF_DEBERTA_BUCKETS: return run_buckets(req);
    case LEAF_DEBERTA_RELATIVE: return run_relative(req);
    default: return run_tile(req);
  }
}
