/* cli_bias.c - 'posenc alibi|t5|deberta ...' (see cli_bias.h).
 *
 * Exit statuses as in the rest of the tool: EXIT_USAGE for anything about the options themselves,
 * including a library error they cause (an odd bucket count in bidirectional mode names the
 * option and posenc_strerror's text); EXIT_FAILURE for I/O, memory and the contents of input
 * files (a bias table too small for --buckets). */
#include "cli_bias.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "cli_format.h"
#include "cli_input.h"
#include "cli_parse.h"
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

/* ---- commands, kinds and options ---------------------------------------------------------------- */

struct bias_command {
  const char *name;
  const char *help;
  enum bias_leaf first;   /* its two kinds are first and first + 1 */
  const char *kinds[2];
  const char *titles[2];
};

static const struct bias_command commands[] = {
  {"alibi", alibi_help, BIAS_ALIBI_SLOPES, {"slopes", "bias"}, {"posenc alibi slopes", "posenc alibi bias"}},
  {"t5", t5_help, BIAS_T5_BUCKETS, {"buckets", "bias"}, {"posenc t5 buckets", "posenc t5 bias"}},
  {"deberta", deberta_help, BIAS_DEBERTA_BUCKETS, {"buckets", "relative"},
   {"posenc deberta buckets", "posenc deberta relative"}},
};

static const char *leaf_name(const struct bias_request *req) {
  const struct bias_command *c = &commands[req->command];
  return c->titles[req->leaf - c->first];
}

#define IN(leaf) (1u << (leaf))
#define IN_SLOPES IN(BIAS_ALIBI_SLOPES)
#define IN_ALIBI IN(BIAS_ALIBI_BIAS)
#define IN_T5B IN(BIAS_T5_BUCKETS)
#define IN_T5 IN(BIAS_T5_BIAS)
#define IN_DEB IN(BIAS_DEBERTA_BUCKETS)
#define IN_DEBR IN(BIAS_DEBERTA_RELATIVE)
#define IN_TILES (IN_ALIBI | IN_T5)  /* the commands that write a bias block */
#define IN_LISTS (IN_SLOPES | IN_T5B | IN_DEB)
#define IN_ANY 0u

struct bias_option_spec {
  const char *long_name;
  char short_name;
  const char *label;
  int takes_value;
  unsigned leaves;  /* IN_ANY: every command, also before it */
};

static const struct bias_option_spec specs[BOPT_COUNT] = {
  [BOPT_HELP] = {"help", 'h', "--help", 0, IN_ANY},
  [BOPT_VERSION] = {"version", 0, "--version", 0, IN_ANY},
  [BOPT_ISA] = {"isa", 0, "--isa", 1, IN_ANY},
  [BOPT_HEADS] = {"heads", 0, "--heads", 1, IN_SLOPES | IN_ALIBI},
  [BOPT_MAX_BIAS] = {"max-bias", 0, "--max-bias", 1, IN_SLOPES | IN_ALIBI},
  [BOPT_QUERIES] = {"queries", 0, "--queries", 1, IN_TILES | IN_DEBR},
  [BOPT_KEYS] = {"keys", 0, "--keys", 1, IN_TILES | IN_DEBR},
  [BOPT_FORM] = {"form", 0, "--form", 1, IN_ALIBI},
  [BOPT_KEY_ORIGIN] = {"key-origin", 0, "--key-origin", 1, IN_ALIBI},
  [BOPT_CAUSAL] = {"causal", 0, "--causal", 0, IN_TILES | IN_T5B},
  [BOPT_WINDOW] = {"window", 0, "--window", 1, IN_TILES},
  [BOPT_Q_POS] = {"q-pos", 0, "--q-pos", 1, IN_TILES},
  [BOPT_K_POS] = {"k-pos", 0, "--k-pos", 1, IN_TILES},
  [BOPT_DTYPE] = {"dtype", 0, "--dtype", 1, IN_TILES},
  [BOPT_FROM] = {"from", 0, "--from", 1, IN_T5B | IN_DEB},
  [BOPT_TO] = {"to", 0, "--to", 1, IN_T5B | IN_DEB},
  [BOPT_BUCKETS] = {"buckets", 0, "--buckets", 1, IN_T5B | IN_T5},
  [BOPT_MAX_DISTANCE] = {"max-distance", 0, "--max-distance", 1, IN_T5B | IN_T5},
  [BOPT_BUCKET_SIZE] = {"bucket-size", 0, "--bucket-size", 1, IN_DEB | IN_DEBR},
  [BOPT_MAX_POSITION] = {"max-position", 0, "--max-position", 1, IN_DEB | IN_DEBR},
  [BOPT_TABLE] = {"table", 0, "--table", 1, IN_T5},
  [BOPT_FORMAT] = {"format", 0, "--format", 1, IN_LISTS},
  [BOPT_OUTPUT] = {"output", 'o', "-o/--output", 1, IN_ANY},
};

static const char *const form_names[] = {"symmetric", "relative", "key"}; /* by posenc_alibi_form */
static const char *const dtype_names[] = {"f32", "f16"};                  /* by posenc_dtype */
static const char *const format_names[] = {"text", "npy"};

/* ---- the command line ------------------------------------------------------------------------- */

static int command_index(const char *word) {
  size_t i;
  for (i = 0; i < COUNT_OF(commands); i++)
    if (strcmp(word, commands[i].name) == 0) return (int)i;
  return -1;
}

/* Global options may come first; --isa takes the next word unless written --isa=NAME. */
int bias_command_named(int argc, char **argv) {
  int i;
  for (i = 1; i < argc; i++) {
    if (argv[i][0] != '-' || argv[i][1] == '\0') return command_index(argv[i]) >= 0;
    if (strcmp(argv[i], "--isa") == 0) i++;
  }
  return 0;
}

/* "--name", "--name=value" or "-x"; *inline_value is the text after '=', if any. */
static int find_bias_option(const char *arg, const char **inline_value) {
  int id;
  *inline_value = NULL;
  for (id = 0; id < BOPT_COUNT; id++) {
    size_t len = strlen(specs[id].long_name);
    if (arg[1] != '-') {
      if (specs[id].short_name && arg[1] == specs[id].short_name && arg[2] == '\0') return id;
      continue;
    }
    if (strncmp(arg + 2, specs[id].long_name, len) != 0) continue;
    if (arg[2 + len] == '\0') return id;
    if (arg[2 + len] == '=') {
      *inline_value = arg + 3 + len;
      return id;
    }
  }
  return -1;
}

static int take_bias_option(int argc, char **argv, int *i, struct bias_request *req) {
  const char *arg = argv[*i], *value;
  int id = find_bias_option(arg, &value);
  if (id < 0) return cli_usage_error("unknown option '%s' (see 'posenc --help')", arg);
  if (specs[id].leaves != IN_ANY && req->command < 0)
    return cli_usage_error("option '%s' must follow a command", arg);
  if (req->value[id]) return cli_usage_error("option %s given twice", specs[id].label);
  if (!specs[id].takes_value) {
    if (value) return cli_usage_error("option %s takes no value", specs[id].label);
    value = "";
  } else if (!value) {
    if (*i + 1 >= argc || strncmp(argv[*i + 1], "--", 2) == 0)
      return cli_usage_error("option %s needs a value", specs[id].label);
    value = argv[++*i];
  }
  req->value[id] = value;
  return EXIT_SUCCESS;
}

static int take_bias_word(const char *word, struct bias_request *req) {
  const struct bias_command *c;
  int k;
  if (req->command < 0) {
    req->command = command_index(word); /* bias_command_named saw that it is one */
    return EXIT_SUCCESS;
  }
  c = &commands[req->command];
  if (req->leaf != BIAS_LEAF_NONE) return cli_usage_error("unexpected argument '%s'", word);
  for (k = 0; k < 2; k++)
    if (strcmp(word, c->kinds[k]) == 0) {
      req->leaf = (enum bias_leaf)(c->first + k);
      return EXIT_SUCCESS;
    }
  return cli_usage_error("unknown %s kind '%s' (expected %s or %s)", c->name, word, c->kinds[0], c->kinds[1]);
}

int parse_bias_argv(int argc, char **argv, struct bias_request *req) {
  int i, id, rc = EXIT_SUCCESS;
  memset(req, 0, sizeof *req);
  req->command = -1;
  for (i = 1; i < argc && rc == EXIT_SUCCESS; i++) {
    const char *arg = argv[i];
    rc = (arg[0] == '-' && arg[1] != '\0') ? take_bias_option(argc, argv, &i, req) : take_bias_word(arg, req);
  }
  if (rc != EXIT_SUCCESS || req->leaf == BIAS_LEAF_NONE) return rc;
  /* the kind may follow its options: check them against it once all words are in */
  for (id = 0; id < BOPT_COUNT; id++)
    if (req->value[id] && specs[id].leaves != IN_ANY && !(specs[id].leaves & IN(req->leaf)))
      return cli_usage_error("'%s' has no option '%s'", leaf_name(req), specs[id].label);
  return EXIT_SUCCESS;
}

void bias_help(const struct bias_request *req, FILE *out) { fputs(commands[req->command].help, out); }

/* ---- converting values -------------------------------------------------------------------------- */

static int bad(enum bias_option id, const char *text, const char *why) {
  return cli_usage_error("%s '%s': %s", specs[id].label, text, why);
}

static int missing(const struct bias_request *req, enum bias_option id) {
  return cli_usage_error("missing %s (see 'posenc %s --help')", specs[id].label, commands[req->command].name);
}

static int parsed(enum bias_option id, const char *text, enum parse_result result) {
  return result == PARSE_OK ? EXIT_SUCCESS : bad(id, text, parse_result_text(result));
}

/* A required count >= 1 (heads, queries, keys). */
static int convert_count(const struct bias_request *req, enum bias_option id, size_t *out) {
  const char *text = req->value[id];
  int rc;
  if (!text) return missing(req, id);
  if ((rc = parsed(id, text, parse_size(text, out))) != EXIT_SUCCESS) return rc;
  return *out == 0 ? bad(id, text, "must be at least 1") : EXIT_SUCCESS;
}

/* An optional uint32 (bucket counts and distances: the library judges 0 and the rest). */
static int convert_u32(const struct bias_request *req, enum bias_option id, uint32_t *out) {
  const char *text = req->value[id];
  size_t value;
  int rc;
  if (!text) return EXIT_SUCCESS;
  if ((rc = parsed(id, text, parse_size(text, &value))) != EXIT_SUCCESS) return rc;
  if (value > UINT32_MAX) return bad(id, text, "out of range");
  *out = (uint32_t)value;
  return EXIT_SUCCESS;
}

static int convert_int32(const struct bias_request *req, enum bias_option id, int32_t *out) {
  const char *text = req->value[id];
  return text ? parsed(id, text, parse_int32(text, out)) : EXIT_SUCCESS;
}

static int convert_name(const struct bias_request *req, enum bias_option id, const char *const *names,
                        size_t count, const char *expected, int *out) {
  const char *text = req->value[id];
  int index;
  if (!text) return EXIT_SUCCESS;
  if ((index = lookup_name(names, count, text)) < 0) return bad(id, text, expected);
  *out = index;
  return EXIT_SUCCESS;
}

/* A library error caused by the options: what they said, and the library's reason. */
static int config_error(const struct bias_request *req, posenc_status st) {
  switch (req->leaf) {
    case BIAS_ALIBI_SLOPES:
    case BIAS_ALIBI_BIAS:
      if (st == POSENC_ERR_PARAM && req->value[BOPT_MAX_BIAS])
        return bad(BOPT_MAX_BIAS, req->value[BOPT_MAX_BIAS], posenc_strerror(st));
      break;
    case BIAS_T5_BUCKETS:
    case BIAS_T5_BIAS:
      return cli_usage_error("--buckets %" PRIu32 " with --max-distance %" PRIu32 " (%s): %s", req->t5.num_buckets,
                             req->t5.max_distance, req->t5.bidirectional ? "bidirectional" : "causal",
                             posenc_strerror(st));
    default:
      return cli_usage_error("--bucket-size %" PRIu32 " with --max-position %" PRIu32 ": %s", req->bucket_size,
                             req->max_position, posenc_strerror(st));
  }
  return cli_usage_error("%s: %s", leaf_name(req), posenc_strerror(st));
}

/* The tile options: --queries, --keys, the mask and the positions, --dtype. */
static int convert_tile_options(struct bias_request *req) {
  int dtype = 0, rc;
  if ((rc = convert_count(req, BOPT_QUERIES, &req->queries)) || (rc = convert_count(req, BOPT_KEYS, &req->keys)))
    return rc;
  if (req->leaf == BIAS_DEBERTA_RELATIVE) return EXIT_SUCCESS;
  if ((rc = convert_int32(req, BOPT_WINDOW, &req->mask.window)) ||
      (rc = convert_int32(req, BOPT_Q_POS, &req->q_pos)) || (rc = convert_int32(req, BOPT_K_POS, &req->k_pos)) ||
      (rc = convert_name(req, BOPT_DTYPE, dtype_names, COUNT_OF(dtype_names),
                         "unknown dtype (expected f32 or f16)", &dtype)))
    return rc;
  if (req->mask.window < 0) return bad(BOPT_WINDOW, req->value[BOPT_WINDOW], "must not be negative");
  req->mask.causal = req->value[BOPT_CAUSAL] != NULL;
  req->dtype = (posenc_dtype)dtype;
  return EXIT_SUCCESS;
}

static int convert_alibi(struct bias_request *req) {
  const char *max_bias = req->value[BOPT_MAX_BIAS];
  int form, rc;
  float slope;
  if ((rc = convert_count(req, BOPT_HEADS, &req->heads))) return rc;
  if (max_bias && (rc = parsed(BOPT_MAX_BIAS, max_bias, parse_double(max_bias, &req->max_bias)))) return rc;
  if (posenc_alibi_slopes(1, req->max_bias, &slope) != POSENC_OK) /* the range of B, before any work */
    return config_error(req, POSENC_ERR_PARAM);
  if (req->leaf == BIAS_ALIBI_SLOPES) return EXIT_SUCCESS;
  if ((rc = convert_tile_options(req))) return rc;
  form = req->mask.causal ? POSENC_ALIBI_RELATIVE : POSENC_ALIBI_SYMMETRIC;
  if ((rc = convert_name(req, BOPT_FORM, form_names, COUNT_OF(form_names),
                         "unknown form (expected symmetric, relative or key)", &form)) ||
      (rc = convert_int32(req, BOPT_KEY_ORIGIN, &req->key_origin)))
    return rc;
  req->form = (posenc_alibi_form)form;
  if (req->value[BOPT_KEY_ORIGIN] && req->form != POSENC_ALIBI_KEY)
    return bad(BOPT_KEY_ORIGIN, req->value[BOPT_KEY_ORIGIN], "only applies to --form key");
  return EXIT_SUCCESS;
}

static int convert_t5(struct bias_request *req) {
  posenc_status st;
  int rc;
  req->t5.num_buckets = 32;
  req->t5.max_distance = 128;
  req->t5.bidirectional = req->value[BOPT_CAUSAL] == NULL;
  if ((rc = convert_u32(req, BOPT_BUCKETS, &req->t5.num_buckets)) ||
      (rc = convert_u32(req, BOPT_MAX_DISTANCE, &req->t5.max_distance)))
    return rc;
  if ((st = posenc_t5_check(&req->t5)) != POSENC_OK) return config_error(req, st);
  if (req->leaf == BIAS_T5_BUCKETS) return EXIT_SUCCESS;
  if (!req->value[BOPT_TABLE]) return missing(req, BOPT_TABLE);
  return convert_tile_options(req);
}

static int convert_deberta(struct bias_request *req) {
  int32_t one;
  posenc_status st;
  int rc;
  req->bucket_size = 256;
  req->max_position = 512;
  if ((rc = convert_u32(req, BOPT_BUCKET_SIZE, &req->bucket_size)) ||
      (rc = convert_u32(req, BOPT_MAX_POSITION, &req->max_position)))
    return rc;
  if ((st = posenc_deberta_bucket_range(req->bucket_size, req->max_position, 0, 1, &one)) != POSENC_OK)
    return config_error(req, st); /* the configuration, checked on one position */
  return req->leaf == BIAS_DEBERTA_RELATIVE ? convert_tile_options(req) : EXIT_SUCCESS;
}

/* --from A --to B, and --format (text on stdout, npy into a file, unless said otherwise). */
static int convert_list_options(struct bias_request *req) {
  int format = req->output ? 1 : 0, rc;
  if ((rc = convert_name(req, BOPT_FORMAT, format_names, COUNT_OF(format_names),
                         "unknown format (expected text or npy)", &format)))
    return rc;
  req->text = format == 0;
  if (req->leaf == BIAS_ALIBI_SLOPES) return EXIT_SUCCESS;
  if (!req->value[BOPT_FROM]) return missing(req, BOPT_FROM);
  if (!req->value[BOPT_TO]) return missing(req, BOPT_TO);
  if ((rc = convert_int32(req, BOPT_FROM, &req->from)) || (rc = convert_int32(req, BOPT_TO, &req->to))) return rc;
  if (req->to < req->from) return cli_usage_error("--to %" PRId32 " is below --from %" PRId32, req->to, req->from);
  return EXIT_SUCCESS;
}

int build_bias_request(struct bias_request *req) {
  const char *out = req->value[BOPT_OUTPUT];
  int rc;
  if (req->leaf == BIAS_LEAF_NONE) {
    const struct bias_command *c = &commands[req->command];
    return cli_usage_error("%s: missing the kind (expected %s or %s)", c->name, c->kinds[0], c->kinds[1]);
  }
  if (out && out[0] == '\0') return bad(BOPT_OUTPUT, "", "empty file name");
  req->output = out && strcmp(out, "-") != 0 ? out : NULL;
  req->max_bias = 8.0;
  if ((IN(req->leaf) & IN_LISTS) && (rc = convert_list_options(req))) return rc;
  switch (req->leaf) {
    case BIAS_ALIBI_SLOPES: case BIAS_ALIBI_BIAS: return convert_alibi(req);
    case BIAS_T5_BUCKETS: case BIAS_T5_BIAS: return convert_t5(req);
    default: return convert_deberta(req);
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
  if (req->heads > SIZE_MAX / sizeof *slopes) return bad(BOPT_HEADS, req->value[BOPT_HEADS], "out of range");
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
  st = req->leaf == BIAS_T5_BUCKETS
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
  int rc = npy_load(specs[BOPT_TABLE].label, req->value[BOPT_TABLE], in);
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

/* Adds req's bias to the zero tile (dense, heads x queries x keys) and writes it. */
static int fill_and_write(const struct bias_request *req, const posenc_table *table, posenc_score_tile *tile) {
  size_t es = posenc_dtype_size(req->dtype), shape[3];
  float *slopes = NULL;
  posenc_status st;
  shape[0] = tile->heads;
  shape[1] = tile->rows;
  shape[2] = tile->cols;
  if (req->leaf == BIAS_ALIBI_BIAS) {
    if (!(slopes = alloc_or_report(tile->heads * sizeof *slopes, "the slopes"))) return EXIT_FAILURE;
    st = posenc_alibi_slopes(tile->heads, req->max_bias, slopes);
    if (st == POSENC_OK) st = posenc_alibi_add(tile, &req->mask, req->form, req->key_origin, slopes);
    free(slopes);
  } else {
    posenc_t5_plan plan;
    st = posenc_t5_plan_init(&plan, &req->t5);
    if (st == POSENC_OK) st = posenc_t5_bias_add(tile, &req->mask, &plan, table, 0);
  }
  if (st != POSENC_OK) return tile_error(req, tile->heads, st);
  return write_npy_file(req->output, npy_type_of(req->dtype), shape, 3, tile->scores, shape[0] * shape[1] * shape[2],
                     es);
}

/* The bias added to a tile of zeros, (heads, queries, keys): ALiBi's heads are --heads, T5's
 * the table's columns. */
static int run_tile(const struct bias_request *req) {
  struct npy_input table_file;
  posenc_table table;
  posenc_score_tile tile;
  size_t es = posenc_dtype_size(req->dtype), heads = req->heads;
  int rc = EXIT_SUCCESS;
  memset(&table_file, 0, sizeof table_file);
  memset(&table, 0, sizeof table);
  memset(&tile, 0, sizeof tile);
  if (req->leaf == BIAS_T5_BIAS && (rc = load_t5_table(req, &table_file, &table)) == EXIT_SUCCESS)
    heads = table.dim;
  if (rc == EXIT_SUCCESS && (req->queries > SIZE_MAX / heads || req->keys > SIZE_MAX / es / (heads * req->queries)))
    rc = tile_error(req, heads, POSENC_ERR_OVERFLOW);
  if (rc == EXIT_SUCCESS &&
      !(tile.scores = alloc_or_report(heads * req->queries * req->keys * es, "the bias block")))
    rc = EXIT_FAILURE;
  if (rc == EXIT_SUCCESS) {
    tile.dtype = req->dtype; /* zero bits are +0 in f32 and f16 alike */
    tile.heads = heads;
    tile.rows = req->queries;
    tile.cols = req->keys;
    tile.q_pos = req->q_pos;
    tile.k_pos = req->k_pos;
    rc = fill_and_write(req, &table, &tile);
  }
  free(tile.scores);
  npy_input_free(&table_file);
  return rc;
}

int run_bias(const struct bias_request *req) {
  switch (req->leaf) {
    case BIAS_ALIBI_SLOPES: return run_slopes(req);
    case BIAS_T5_BUCKETS: case BIAS_DEBERTA_BUCKETS: return run_buckets(req);
    case BIAS_DEBERTA_RELATIVE: return run_relative(req);
    default: return run_tile(req);
  }
}
