/* cli_embed.c - 'posenc embed' and 'posenc analyze' (see cli_embed.h). As everywhere in the tool,
 * every input is read and checked and the result computed in memory before anything is written. */
#include "cli_embed.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "cli_format.h"
#include "cli_input.h"
#include "cli_parse.h"
#include "cli_write.h"

#define COUNT_OF(array) (sizeof(array) / sizeof((array)[0]))

const char embed_help[] =
  "Usage: posenc embed --in X.npy (--ids IDS.npy | --mask M.npy) (--table P.npy | --sinusoidal)\n"
  "                    [options] [-o Y.npy]\n"
  "\n"
  "Adds position rows to token embeddings (posenc_embed_forward):\n"
  "  y[b,t,:] = x[b,t,:] * scale + P[pos(b,t),:]     in float32, each product and sum rounded\n"
  "  y[b,t,:] = 0                                    for padding tokens\n"
  "X is (batch, tokens, D) or (tokens, D), <f4, <f2 or <u2 (bfloat16 bits). IDS/M/POS are\n"
  "(batch, tokens), or (tokens,) for a single sequence.\n"
  "\n"
  "Options:\n"
  "  --in X.npy           token embeddings\n"
  "  --ids IDS.npy        token ids (<i4/<i8): a token equal to --padding-id is padding\n"
  "  --mask M.npy         attention mask (|b1, |u1, <i4 or <i8): 0 is padding (with --ids: either pads)\n"
  "  --table P.npy        the position table, (rows, D), <f4, <f2 or <u2 (bfloat16 bits)\n"
  "  --sinusoidal         sinusoidal rows computed on the fly (base 10000, interleaved)\n"
  "  --scale S            multiplies x (default fl32(sqrt(D)), as fairseq and Vaswani et al.)\n"
  "  --padding-id K       the padding token id; fairseq's padding_idx (needed with --ids and\n"
  "                       --positions fairseq)\n"
  "  --positions MODE     range (default: start + t), ids (--pos-ids), fairseq (real tokens get\n"
  "                       K+1, K+2, ...; padding row K), cumsum (left-padding aware: start + real\n"
  "                       tokens before t, as HF's cumsum(mask) - 1)\n"
  "  --start N            first position for range and cumsum (default 0)\n"
  "  --pos-ids POS.npy    positions (<i4/<i8) for --positions ids\n"
  "  --oob POLICY         positions past the table: error (default), clamp (last row), or\n"
  "                       sinusoidal (that position's sinusoidal row)\n"
  "  --dropout P          dropout on the sum, P in [0, 1), with --seed: the same mask on every\n"
  "                       machine (a counter-based hash of seed, b, t, column)\n"
  "  --seed S             dropout seed, 0 .. 2^64-1\n"
  "  --dtype T            output f32, f16 or bf16 (default: that of X; bf16 as <u2 bits)\n"
  "  -o, --output FILE    write FILE instead of stdout (replaced only once complete)\n"
  "  -h, --help           show this help\n";

const char analyze_help[] =
  "Usage: posenc analyze TABLE.npy [--top K]\n"
  "\n"
  "Singular-value spectrum of a position table (rows, D), <f4, <f2, <f8 (rounded to f32) or <u2\n"
  "(bfloat16 bits), beside that of the sinusoidal table of the same shape (base 10000,\n"
  "interleaved). One line per fact: name, table value, sinusoidal value:\n"
  "  rank           singular values > sigma_1 * max(rows, D) * 2^-23 (numpy matrix_rank, float32)\n"
  "  k90, k99       fewest leading singular values holding 90% / 99% of sum(sigma^2)\n"
  "  entropy_rank   exp(entropy of sigma / sum(sigma)) (Roy & Vetterli's effective rank)\n"
  "  energy         sum(sigma^2), the squared Frobenius norm\n"
  "  sigma_i        the K leading singular values (descending)\n"
  "A learned table of rows >> D still has rank <= D, often far less: rank and k90 show how many\n"
  "directions it really uses.\n"
  "\n"
  "Options:\n"
  "  --top K              singular values to print (default 8; at most D are printed)\n"
  "  -h, --help           show this help\n";

static const char *const pos_mode_names[] = {"range", "ids", "fairseq", "cumsum"}; /* by posenc_pos_mode */
static const char *const oob_names[] = {"error", "clamp", "sinusoidal"};          /* by posenc_oob_policy */
static const char *const dtype_names[] = {"f32", "f16", "bf16"};                  /* by posenc_dtype */


/* ---- embed: the command line ----------------------------------------------------------------- */

static int convert_embed_choices(const struct raw_args *args, struct embed_request *req) {
  int mode = POSENC_POS_RANGE, oob = POSENC_OOB_ERROR, rc;
  if ((rc = convert_choice(args, OPT_POSITIONS, pos_mode_names, COUNT_OF(pos_mode_names),
                           "unknown position mode (expected range, ids, fairseq or cumsum)", &mode)) ||
      (rc = convert_choice(args, OPT_OOB, oob_names, COUNT_OF(oob_names),
                           "unknown policy (expected error, clamp or sinusoidal)", &oob)) ||
      (rc = convert_choice(args, OPT_DTYPE, dtype_names, COUNT_OF(dtype_names),
                           "unknown dtype (expected f32, f16 or bf16)", &req->out_dtype)))
    return rc;
  req->mode = (posenc_pos_mode)mode;
  req->oob = (posenc_oob_policy)oob;
  return EXIT_SUCCESS;
}

static int convert_embed_numbers(const struct raw_args *args, struct embed_request *req) {
  double scale = 0.0;
  int rc;
  if ((rc = convert_optional_int32(args, OPT_START, &req->start)) ||
      (rc = convert_optional_int32(args, OPT_PADDING_ID, &req->padding_id)) ||
      (rc = convert_optional_real(args, OPT_DROPOUT, 0, 1.0, &req->dropout)) ||
      (rc = convert_seed(args, OPT_SEED, &req->seed)) ||
      (rc = convert_optional_double(args, OPT_SCALE, &scale)))
    return rc;
  if (args->value[OPT_DROPOUT] && req->dropout >= 1.0)
    return bad_value(OPT_DROPOUT, args->value[OPT_DROPOUT], "must be less than 1");
  if (args->value[OPT_SCALE]) {
    req->scale = (float)scale;
    req->scale_given = 1;
    if (!isfinite(req->scale)) return bad_value(OPT_SCALE, args->value[OPT_SCALE], "overflows float32");
  }
  return EXIT_SUCCESS;
}

/* Options that only make sense together. */
static int check_embed_combinations(const struct raw_args *args, const struct embed_request *req) {
  if (!req->in_path) return missing_option(OPT_IN, LEAF_EMBED);
  if (!req->ids_path && !req->mask_path)
    return cli_usage_error("missing --ids or --mask: padding is read from one of them (see 'posenc embed --help')");
  if (!req->table_path && !args->value[OPT_SINUSOIDAL])
    return cli_usage_error("missing --table or --sinusoidal: the position rows (see 'posenc embed --help')");
  if (req->table_path && args->value[OPT_SINUSOIDAL])
    return cli_usage_error("--table and --sinusoidal exclude each other");
  if (req->ids_path && !args->value[OPT_PADDING_ID])
    return cli_usage_error("--ids needs --padding-id: the id that marks padding");
  if (req->mode == POSENC_POS_FAIRSEQ && !args->value[OPT_PADDING_ID])
    return cli_usage_error("--positions fairseq needs --padding-id (fairseq's padding_idx)");
  if (req->mode == POSENC_POS_IDS && !req->pos_ids_path)
    return cli_usage_error("--positions ids needs --pos-ids POS.npy");
  if (req->pos_ids_path && req->mode != POSENC_POS_IDS)
    return bad_value(OPT_POS_IDS, req->pos_ids_path, "only applies to --positions ids");
  if (args->value[OPT_START] && req->mode != POSENC_POS_RANGE && req->mode != POSENC_POS_CUMSUM)
    return bad_value(OPT_START, args->value[OPT_START], "only applies to --positions range or cumsum");
  if (args->value[OPT_OOB] && !req->table_path)
    return bad_value(OPT_OOB, args->value[OPT_OOB], "only applies to --table (sinusoidal rows have no end)");
  if (args->value[OPT_DROPOUT] && req->dropout > 0.0 && !args->value[OPT_SEED])
    return cli_usage_error("--dropout needs --seed: the mask is a function of the seed");
  if (args->value[OPT_SEED] && !args->value[OPT_DROPOUT])
    return bad_value(OPT_SEED, args->value[OPT_SEED], "only applies with --dropout");
  return EXIT_SUCCESS;
}

int build_embed_request(const struct raw_args *args, struct embed_request *req) {
  int rc;
  memset(req, 0, sizeof *req);
  req->out_dtype = -1;
  req->in_path = args->value[OPT_IN];
  req->ids_path = args->value[OPT_IDS];
  req->mask_path = args->value[OPT_MASK];
  req->table_path = args->value[OPT_TABLE];
  req->pos_ids_path = args->value[OPT_POS_IDS];
  if ((rc = convert_embed_choices(args, req)) || (rc = convert_embed_numbers(args, req)) ||
      (rc = convert_output(args, OPT_OUTPUT, &req->output)))
    return rc;
  return check_embed_combinations(args, req);
}

/* ---- embed: inputs --------------------------------------------------------------------------- */

/* A float array as a posenc dtype: <f4, <f2, or <u2 holding bfloat16 bits (as posenc writes it). */
static int float_dtype(const struct npy_input *in, posenc_dtype *dtype) {
  switch (in->info.type) {
    case POSENC_NPY_F32: *dtype = POSENC_DTYPE_F32; return EXIT_SUCCESS;
    case POSENC_NPY_F16: *dtype = POSENC_DTYPE_F16; return EXIT_SUCCESS;
    case POSENC_NPY_U16: *dtype = POSENC_DTYPE_BF16; return EXIT_SUCCESS;
    default:
      return input_error(in, "dtype %s, expected <f4 (float32), <f2 (float16) or <u2 (bfloat16 bits)",
                         npy_dtype_descr(in->info.type));
  }
}

struct embed_job {
  struct npy_input x, ids, mask, table, pos;
  size_t batch, tokens, dim;
  posenc_dtype x_dtype;
  posenc_table view;
  int32_t *ids_values, *pos_values;
  uint8_t *mask_values;
  unsigned char *y;
  size_t y_bytes;
};

static int load_x(const struct embed_request *req, struct embed_job *job) {
  const posenc_npy_info *info = &job->x.info;
  char shape[96];
  int rc = npy_load(option_label(OPT_IN), req->in_path, &job->x);
  if (rc || (rc = float_dtype(&job->x, &job->x_dtype))) return rc;
  if (info->ndim != 2 && info->ndim != 3)
    return input_error(&job->x, "shape %s, expected (batch, tokens, D) or (tokens, D)",
                       input_shape(&job->x, shape, sizeof shape));
  if (info->count == 0) return input_error(&job->x, "shape %s has an empty axis", input_shape(&job->x, shape, sizeof shape));
  job->batch = info->ndim == 3 ? info->shape[0] : 1;
  job->tokens = info->shape[info->ndim - 2];
  job->dim = info->shape[info->ndim - 1];
  return EXIT_SUCCESS;
}

/* A (batch, tokens) grid, or (tokens,) when batch is 1. */
static int check_grid(const struct embed_job *job, const struct npy_input *in) {
  const posenc_npy_info *info = &in->info;
  char shape[96];
  int ok = (info->ndim == 2 && info->shape[0] == job->batch && info->shape[1] == job->tokens) ||
           (info->ndim == 1 && job->batch == 1 && info->shape[0] == job->tokens);
  if (ok) return EXIT_SUCCESS;
  return input_error(in, "shape %s, expected (%zu, %zu)%s to match --in", input_shape(in, shape, sizeof shape),
                     job->batch, job->tokens, job->batch == 1 ? " or (tokens,)" : "");
}

static int load_ints(enum option_id id, const char *path, const struct embed_job *job, struct npy_input *in,
                     int32_t **out) {
  int rc = npy_load(option_label(id), path, in);
  if (rc || (rc = check_grid(job, in))) return rc;
  *out = malloc((in->info.count ? in->info.count : 1) * sizeof **out);
  if (!*out) {
    cli_error("out of memory");
    return EXIT_FAILURE;
  }
  return npy_positions(in, *out);
}

/* |b1, |u1, <i4 or <i8: nonzero is a real token. */
static int load_mask(const struct embed_request *req, struct embed_job *job) {
  struct npy_input *in = &job->mask;
  size_t i, n, es;
  int rc = npy_load(option_label(OPT_MASK), req->mask_path, in);
  if (rc || (rc = check_grid(job, in))) return rc;
  n = in->info.count;
  es = in->info.item_size;
  if (in->info.type != POSENC_NPY_BOOL && in->info.type != POSENC_NPY_U8 && in->info.type != POSENC_NPY_I32 &&
      in->info.type != POSENC_NPY_I64)
    return input_error(in, "dtype %s, expected a mask of |b1, |u1, <i4 or <i8", npy_dtype_descr(in->info.type));
  job->mask_values = malloc(n ? n : 1);
  if (!job->mask_values) {
    cli_error("out of memory");
    return EXIT_FAILURE;
  }
  for (i = 0; i < n; i++) {
    size_t b;
    uint8_t any = 0;
    for (b = 0; b < es; b++) any |= in->data[i * es + b];
    job->mask_values[i] = any != 0;
  }
  return EXIT_SUCCESS;
}

static int load_table(const struct embed_request *req, struct embed_job *job) {
  struct npy_input *in = &job->table;
  char shape[96];
  int rc = npy_load(option_label(OPT_TABLE), req->table_path, in);
  if (rc || (rc = float_dtype(in, &job->view.dtype))) return rc;
  if (in->info.ndim != 2 || in->info.shape[1] != job->dim || in->info.shape[0] == 0)
    return input_error(in, "shape %s, expected (rows, %zu): rows >= 1 of --in's D", input_shape(in, shape, sizeof shape),
                       job->dim);
  job->view.data = in->data;
  job->view.n_rows = in->info.shape[0];
  job->view.dim = job->dim;
  job->view.row_stride = 0;
  return EXIT_SUCCESS;
}

static int load_embed_inputs(const struct embed_request *req, struct embed_job *job) {
  int rc;
  if ((rc = load_x(req, job))) return rc;
  if (req->ids_path && (rc = load_ints(OPT_IDS, req->ids_path, job, &job->ids, &job->ids_values))) return rc;
  if (req->mask_path && (rc = load_mask(req, job))) return rc;
  if (req->pos_ids_path && (rc = load_ints(OPT_POS_IDS, req->pos_ids_path, job, &job->pos, &job->pos_values)))
    return rc;
  if (req->table_path && (rc = load_table(req, job))) return rc;
  return EXIT_SUCCESS;
}

static void free_embed_job(struct embed_job *job) {
  npy_input_free(&job->x);
  npy_input_free(&job->ids);
  npy_input_free(&job->mask);
  npy_input_free(&job->table);
  npy_input_free(&job->pos);
  free(job->ids_values);
  free(job->pos_values);
  free(job->mask_values);
  free(job->y);
}

/* ---- embed: running ---------------------------------------------------------------------------- */

static int report_embed_status(posenc_status st, const struct embed_request *req, const struct embed_job *job) {
  switch (st) {
    case POSENC_ERR_POSITION:
      if (req->table_path)
        cli_error("a position is outside the table's %zu rows (or negative): use --oob clamp or --oob "
                  "sinusoidal, or check --start / --pos-ids", job->view.n_rows);
      else
        cli_error("a position is negative or past 2147483647: check --start / --pos-ids");
      return EXIT_FAILURE;
    case POSENC_ERR_PADDING:
      cli_error("--padding-id %" PRId32 ": %s%s", req->padding_id, posenc_strerror(st),
                req->table_path ? " (fairseq uses that row for padding)" : "");
      return EXIT_USAGE;
    default:
      cli_error("internal error: posenc_embed_forward: %s", posenc_strerror(st));
      return EXIT_FAILURE;
  }
}

static int compute_embed(const struct embed_request *req, struct embed_job *job, posenc_dtype out_dtype) {
  posenc_embed_config config = posenc_embed_default(job->dim);
  posenc_embed_tokens tokens;
  posenc_embed_tensor x, y;
  posenc_status st;
  size_t count = job->batch * job->tokens * job->dim;
  job->y_bytes = count * posenc_dtype_size(out_dtype);
  job->y = malloc(job->y_bytes);
  if (!job->y) {
    cli_error("out of memory: the output needs %zu bytes", job->y_bytes);
    return EXIT_FAILURE;
  }
  if (req->scale_given) config.scale = req->scale;
  if (req->table_path) config.table = job->view;
  config.oob = req->oob;
  config.dropout_p = req->dropout;
  config.dropout_seed = req->seed;
  memset(&tokens, 0, sizeof tokens);
  tokens.batch = job->batch;
  tokens.tokens = job->tokens;
  tokens.mode = req->mode;
  tokens.start = req->start;
  tokens.positions = job->pos_values;
  tokens.token_ids = job->ids_values;
  tokens.padding_id = req->padding_id;
  tokens.mask = job->mask_values;
  memset(&x, 0, sizeof x);
  x.data = job->x.data;
  x.dtype = job->x_dtype;
  memset(&y, 0, sizeof y);
  y.data = job->y;
  y.dtype = out_dtype;
  st = posenc_embed_forward(&config, &tokens, &x, &y);
  if (st != POSENC_OK) return report_embed_status(st, req, job);
  table_to_little_endian(job->y, count, posenc_dtype_size(out_dtype));
  return EXIT_SUCCESS;
}

int run_embed(const struct embed_request *req) {
  struct embed_job job;
  struct rendered_table rendered;
  posenc_dtype out_dtype;
  int rc;
  memset(&job, 0, sizeof job);
  rc = load_embed_inputs(req, &job);
  out_dtype = req->out_dtype < 0 ? job.x_dtype : (posenc_dtype)req->out_dtype;
  if (rc == EXIT_SUCCESS) rc = compute_embed(req, &job, out_dtype);
  if (rc == EXIT_SUCCESS) {
    rc = render_npy_array(npy_type_of(out_dtype), job.x.info.shape, job.x.info.ndim, job.y, job.y_bytes, &rendered);
    if (rc == EXIT_SUCCESS) rc = write_output(req->output, rendered.spans, rendered.count);
    rendered_table_free(&rendered);
  }
  free_embed_job(&job);
  return rc;
}

/* ---- analyze ------------------------------------------------------------------------------------ */

int build_analyze_request(const struct raw_args *args, struct analyze_request *req) {
  int rc;
  req->path = args->operand;
  req->top = 8;
  if (!req->path) return cli_usage_error("analyze: missing the table file (see 'posenc analyze --help')");
  if ((rc = convert_optional_count(args, OPT_TOP, SIZE_MAX, &req->top))) return rc;
  return EXIT_SUCCESS;
}

struct spectrum_result {
  posenc_spectrum_info info;
  double *sigma;
};

/* in: the file the table came from, for messages (NULL: computed here). */
static int spectrum_of(const posenc_table *t, struct spectrum_result *r, const struct npy_input *in) {
  size_t need = posenc_spectrum_work(t->dim);
  double *work = need ? malloc(need * sizeof *work) : NULL;
  posenc_status st;
  r->sigma = malloc(t->dim * sizeof *r->sigma);
  if (!work || !r->sigma) {
    free(work);
    cli_error("out of memory: the spectrum of %zu columns needs %zu doubles", t->dim, need);
    return EXIT_FAILURE;
  }
  st = posenc_spectrum(t, work, need, r->sigma, &r->info);
  free(work);
  if (st == POSENC_OK) return EXIT_SUCCESS;
  if (st == POSENC_ERR_PARAM && in) return input_error(in, "the table holds NaN or Inf");
  cli_error("internal error: posenc_spectrum: %s", posenc_strerror(st));
  return EXIT_FAILURE;
}

/* The analyzed table as posenc reads it: f64 is rounded to f32 into *converted. */
static int analyzed_table(struct npy_input *in, posenc_table *t, float **converted) {
  char shape[96];
  size_t i, n = in->info.count;
  *converted = NULL;
  if (in->info.ndim != 2 || n == 0)
    return input_error(in, "shape %s, expected a non-empty table (rows, D)", input_shape(in, shape, sizeof shape));
  t->n_rows = in->info.shape[0];
  t->dim = in->info.shape[1];
  t->row_stride = 0;
  t->data = in->data;
  if (in->info.type != POSENC_NPY_F64) return float_dtype(in, &t->dtype);
  if (!(*converted = malloc(n * sizeof **converted))) {
    cli_error("out of memory");
    return EXIT_FAILURE;
  }
  for (i = 0; i < n; i++) {
    double v;
    memcpy(&v, in->data + 8 * i, 8);
    (*converted)[i] = (float)v;
  }
  t->data = *converted;
  t->dtype = POSENC_DTYPE_F32;
  return EXIT_SUCCESS;
}

static int sinusoidal_spectrum(size_t rows, size_t dim, struct spectrum_result *r) {
  posenc_sinusoidal_params params = posenc_sinusoidal_default(dim);
  posenc_table t;
  size_t bytes;
  float *table;
  int rc;
  if (rows > (size_t)INT32_MAX + 1 || posenc_sinusoidal_bytes(&params, rows, &bytes) != POSENC_OK ||
      !(table = malloc(bytes))) {
    cli_error("out of memory: a sinusoidal table of %zu x %zu", rows, dim);
    return EXIT_FAILURE;
  }
  if (posenc_sinusoidal_table(&params, 0, rows, table, bytes) != POSENC_OK) {
    free(table);
    cli_error("internal error: sinusoidal table");
    return EXIT_FAILURE;
  }
  t.data = table;
  t.dtype = POSENC_DTYPE_F32;
  t.n_rows = rows;
  t.dim = dim;
  t.row_stride = 0;
  rc = spectrum_of(&t, r, NULL);
  free(table);
  return rc;
}

static void print_analysis(const struct npy_input *in, const posenc_table *t, const struct spectrum_result *a,
                           const struct spectrum_result *s, size_t top) {
  char shape[96];
  size_t i;
  printf("table: %s %s %s\n", in->path, input_shape(in, shape, sizeof shape), npy_dtype_descr(in->info.type));
  printf("%-14s %-24s %s\n", "", "table", "sinusoidal");
  printf("%-14s %-24zu %zu\n", "rank", a->info.rank, s->info.rank);
  printf("%-14s %-24zu %zu\n", "k90", a->info.k90, s->info.k90);
  printf("%-14s %-24zu %zu\n", "k99", a->info.k99, s->info.k99);
  printf("%-14s %-24.17g %.17g\n", "entropy_rank", a->info.entropy_rank, s->info.entropy_rank);
  printf("%-14s %-24.17g %.17g\n", "energy", a->info.energy, s->info.energy);
  for (i = 0; i < top && i < t->dim; i++) {
    char name[32];
    snprintf(name, sizeof name, "sigma_%zu", i + 1);
    printf("%-14s %-24.17g %.17g\n", name, a->sigma[i], s->sigma[i]);
  }
}

int run_analyze(const struct analyze_request *req) {
  struct npy_input in;
  struct spectrum_result a = {{0, 0, 0, 0.0, 0.0}, NULL}, s = {{0, 0, 0, 0.0, 0.0}, NULL};
  posenc_table t;
  float *converted = NULL;
  int rc = npy_load("analyze", req->path, &in);
  if (rc) return rc;
  rc = analyzed_table(&in, &t, &converted);
  if (rc == EXIT_SUCCESS) rc = spectrum_of(&t, &a, &in);
  if (rc == EXIT_SUCCESS) rc = sinusoidal_spectrum(t.n_rows, t.dim, &s);
  if (rc == EXIT_SUCCESS) {
    print_analysis(&in, &t, &a, &s, req->top);
    rc = cli_finish_stdout();
  }
  free(a.sigma);
  free(s.sigma);
  free(converted);
  npy_input_free(&in);
  return rc;
}
