/* cli_args.c - the option table, argv parsing and value conversion of the posenc tool. */
#include "cli_args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "cli_parse.h"

const char *const command_names[CMD_COUNT] = {"", "info", "table", "rope", "embed", "analyze", "alibi", "t5",
                                              "deberta"};

/* ---- commands and their kinds ---------------------------------------------------------------- */

struct leaf_spec {
  enum command command;
  const char *kind;   /* NULL: the command takes no kind */
  const char *title;
};

static const struct leaf_spec leaf_specs[LEAF_COUNT] = {
  [LEAF_NONE] = {CMD_NONE, NULL, "posenc"},
  [LEAF_INFO] = {CMD_INFO, NULL, "posenc info"},
  [LEAF_TABLE_SINUSOIDAL] = {CMD_TABLE, "sinusoidal", "posenc table sinusoidal"},
  [LEAF_TABLE_LEARNED] = {CMD_TABLE, "learned", "posenc table learned"},
  [LEAF_TABLE_SINCOS2D] = {CMD_TABLE, "sincos2d", "posenc table sincos2d"},
  [LEAF_ROPE_FREQS] = {CMD_ROPE, "freqs", "posenc rope freqs"},
  [LEAF_ROPE_TABLE] = {CMD_ROPE, "table", "posenc rope table"},
  [LEAF_ROPE_APPLY] = {CMD_ROPE, "apply", "posenc rope apply"},
  [LEAF_EMBED] = {CMD_EMBED, NULL, "posenc embed"},
  [LEAF_ANALYZE] = {CMD_ANALYZE, NULL, "posenc analyze"},
  [LEAF_ALIBI_SLOPES] = {CMD_ALIBI, "slopes", "posenc alibi slopes"},
  [LEAF_ALIBI_BIAS] = {CMD_ALIBI, "bias", "posenc alibi bias"},
  [LEAF_T5_BUCKETS] = {CMD_T5, "buckets", "posenc t5 buckets"},
  [LEAF_T5_BIAS] = {CMD_T5, "bias", "posenc t5 bias"},
  [LEAF_DEBERTA_BUCKETS] = {CMD_DEBERTA, "buckets", "posenc deberta buckets"},
  [LEAF_DEBERTA_RELATIVE] = {CMD_DEBERTA, "relative", "posenc deberta relative"},
};

const char *leaf_title(enum leaf leaf) { return leaf_specs[leaf].title; }

const char *expected_kinds(enum command command) {
  switch (command) {
    case CMD_TABLE: return "sinusoidal, learned or sincos2d";
    case CMD_ROPE: return "freqs, table or apply";
    case CMD_ALIBI: return "slopes or bias";
    case CMD_T5: return "buckets or bias";
    default: return "buckets or relative";
  }
}

/* ---- the option table ------------------------------------------------------------------------ */

#define IN(leaf) (1u << (leaf))
#define IN_SINUSOIDAL IN(LEAF_TABLE_SINUSOIDAL)
#define IN_LEARNED IN(LEAF_TABLE_LEARNED)
#define IN_SINCOS2D IN(LEAF_TABLE_SINCOS2D)
#define IN_TABLES (IN_SINUSOIDAL | IN_LEARNED | IN_SINCOS2D)
#define IN_EMBED IN(LEAF_EMBED)
#define IN_ANALYZE IN(LEAF_ANALYZE)
#define IN_FREQS IN(LEAF_ROPE_FREQS)
#define IN_RTABLE IN(LEAF_ROPE_TABLE)
#define IN_APPLY IN(LEAF_ROPE_APPLY)
#define IN_ROPE (IN_FREQS | IN_RTABLE | IN_APPLY)
#define IN_SLOPES IN(LEAF_ALIBI_SLOPES)
#define IN_ALIBI IN(LEAF_ALIBI_BIAS)
#define IN_T5B IN(LEAF_T5_BUCKETS)
#define IN_T5 IN(LEAF_T5_BIAS)
#define IN_DEB IN(LEAF_DEBERTA_BUCKETS)
#define IN_DEBR IN(LEAF_DEBERTA_RELATIVE)
#define IN_TILES (IN_ALIBI | IN_T5)           /* the bias blocks */
#define IN_LISTS (IN_SLOPES | IN_T5B | IN_DEB)  /* text or .npy lists */
#define IN_BIAS (IN_TILES | IN_LISTS | IN_DEBR)
#define IN_ALL 0u /* global */

struct option_spec {
  const char *long_name;
  char short_name;      /* 0: none */
  const char *label;    /* how error messages name it */
  int takes_value;
  unsigned leaves;      /* IN(...) bits of the leaves that accept it; IN_ALL: every command */
};

static const struct option_spec option_specs[OPT_COUNT] = {
  [OPT_HELP] = {"help", 'h', "--help", 0, IN_ALL},
  [OPT_VERSION] = {"version", 0, "--version", 0, IN_ALL},
  [OPT_ISA] = {"isa", 0, "--isa", 1, IN_ALL},
  [OPT_POSITIONS] = {"positions", 0, "--positions", 1, IN_SINUSOIDAL | IN_RTABLE | IN_APPLY | IN_EMBED},
  [OPT_DIM] = {"dim", 0, "--dim", 1, IN_TABLES},
  [OPT_BASE] = {"base", 0, "--base", 1, IN_SINUSOIDAL | IN_SINCOS2D | IN_ROPE},
  [OPT_START] = {"start", 0, "--start", 1, IN_SINUSOIDAL | IN_RTABLE | IN_APPLY | IN_EMBED},
  [OPT_LAYOUT] = {"layout", 0, "--layout", 1, IN_SINUSOIDAL | IN_RTABLE | IN_APPLY},
  [OPT_DTYPE] = {"dtype", 0, "--dtype", 1, IN_TABLES | IN_RTABLE | IN_EMBED | IN_TILES},
  [OPT_FORMAT] = {"format", 0, "--format", 1, IN_TABLES | IN_FREQS | IN_RTABLE | IN_LISTS},
  [OPT_NAME] = {"name", 0, "--name", 1, IN_TABLES | IN_RTABLE},
  [OPT_OUTPUT] = {"output", 'o', "-o/--output", 1, IN_TABLES | IN_ROPE | IN_EMBED | IN_BIAS},
  [OPT_ROWS] = {"rows", 0, "--rows", 1, IN_RTABLE | IN_LEARNED},
  [OPT_IN] = {"in", 0, "--in", 1, IN_APPLY | IN_EMBED},
  [OPT_K] = {"k", 0, "--k", 1, IN_APPLY},
  [OPT_K_OUT] = {"k-out", 0, "--k-out", 1, IN_APPLY},
  [OPT_INVERSE] = {"inverse", 0, "--inverse", 0, IN_APPLY},
  [OPT_CACHE_ROWS] = {"cache-rows", 0, "--cache-rows", 1, IN_APPLY},
  [OPT_OUT_DTYPE] = {"out-dtype", 0, "--out-dtype", 1, IN_APPLY},
  [OPT_QK_NORM] = {"qk-norm", 0, "--qk-norm", 1, IN_APPLY},
  [OPT_K_NORM] = {"k-norm", 0, "--k-norm", 1, IN_APPLY},
  [OPT_QK_NORM_EPS] = {"qk-norm-eps", 0, "--qk-norm-eps", 1, IN_APPLY},
  [OPT_QK_NORM_OFFSET] = {"qk-norm-offset", 0, "--qk-norm-offset", 0, IN_APPLY},
  [OPT_HEAD_DIM] = {"head-dim", 0, "--head-dim", 1, IN_ROPE},
  [OPT_ROTARY_DIM] = {"rotary-dim", 0, "--rotary-dim", 1, IN_ROPE},
  [OPT_STYLE] = {"style", 0, "--style", 1, IN_ROPE},
  [OPT_SCALING] = {"scaling", 0, "--scaling", 1, IN_ROPE},
  [OPT_FACTOR] = {"factor", 0, "--factor", 1, IN_ROPE},
  [OPT_ORIGINAL_MAX_POS] = {"original-max-pos", 0, "--original-max-pos", 1, IN_ROPE},
  [OPT_SEQ_LEN] = {"seq-len", 0, "--seq-len", 1, IN_ROPE},
  [OPT_QWEN_ALPHA] = {"qwen-alpha", 0, "--qwen-alpha", 0, IN_ROPE},
  [OPT_BETA_FAST] = {"beta-fast", 0, "--beta-fast", 1, IN_ROPE},
  [OPT_BETA_SLOW] = {"beta-slow", 0, "--beta-slow", 1, IN_ROPE},
  [OPT_NO_TRUNCATE] = {"no-truncate", 0, "--no-truncate", 0, IN_ROPE},
  [OPT_MSCALE] = {"mscale", 0, "--mscale", 1, IN_ROPE},
  [OPT_MSCALE_ALL_DIM] = {"mscale-all-dim", 0, "--mscale-all-dim", 1, IN_ROPE},
  [OPT_LOW_FREQ_FACTOR] = {"low-freq-factor", 0, "--low-freq-factor", 1, IN_ROPE},
  [OPT_HIGH_FREQ_FACTOR] = {"high-freq-factor", 0, "--high-freq-factor", 1, IN_ROPE},
  [OPT_SHORT_FACTOR] = {"short-factor", 0, "--short-factor", 1, IN_ROPE},
  [OPT_LONG_FACTOR] = {"long-factor", 0, "--long-factor", 1, IN_ROPE},
  [OPT_FREQ_FACTORS] = {"freq-factors", 0, "--freq-factors", 1, IN_ROPE},
  [OPT_ATTENTION_FACTOR] = {"attention-factor", 0, "--attention-factor", 1, IN_ROPE},
  [OPT_MROPE_SECTION] = {"mrope-section", 0, "--mrope-section", 1, IN_ROPE},
  [OPT_MROPE_INTERLEAVED] = {"mrope-interleaved", 0, "--mrope-interleaved", 0, IN_ROPE},
  [OPT_HF_COMPAT] = {"hf-compat", 0, "--hf-compat", 0, IN_ROPE},
  [OPT_FREQS] = {"freqs", 0, "--freqs", 1, IN_SINUSOIDAL},
  [OPT_MIN_TIMESCALE] = {"min-timescale", 0, "--min-timescale", 1, IN_SINUSOIDAL},
  [OPT_INIT] = {"init", 0, "--init", 1, IN_LEARNED},
  [OPT_SEED] = {"seed", 0, "--seed", 1, IN_LEARNED | IN_EMBED},
  [OPT_STD] = {"std", 0, "--std", 1, IN_LEARNED},
  [OPT_GRID] = {"grid", 0, "--grid", 1, IN_SINCOS2D},
  [OPT_CLS_TOKEN] = {"cls-token", 0, "--cls-token", 0, IN_SINCOS2D},
  [OPT_IDS] = {"ids", 0, "--ids", 1, IN_EMBED},
  [OPT_MASK] = {"mask", 0, "--mask", 1, IN_EMBED},
  [OPT_TABLE] = {"table", 0, "--table", 1, IN_EMBED | IN_T5},
  [OPT_SINUSOIDAL] = {"sinusoidal", 0, "--sinusoidal", 0, IN_EMBED},
  [OPT_SCALE] = {"scale", 0, "--scale", 1, IN_EMBED},
  [OPT_PADDING_ID] = {"padding-id", 0, "--padding-id", 1, IN_EMBED},
  [OPT_POS_IDS] = {"pos-ids", 0, "--pos-ids", 1, IN_EMBED},
  [OPT_OOB] = {"oob", 0, "--oob", 1, IN_EMBED},
  [OPT_DROPOUT] = {"dropout", 0, "--dropout", 1, IN_EMBED},
  [OPT_TOP] = {"top", 0, "--top", 1, IN_ANALYZE},
  [OPT_HEADS] = {"heads", 0, "--heads", 1, IN_SLOPES | IN_ALIBI},
  [OPT_MAX_BIAS] = {"max-bias", 0, "--max-bias", 1, IN_SLOPES | IN_ALIBI},
  [OPT_QUERIES] = {"queries", 0, "--queries", 1, IN_TILES | IN_DEBR},
  [OPT_KEYS] = {"keys", 0, "--keys", 1, IN_TILES | IN_DEBR},
  [OPT_FORM] = {"form", 0, "--form", 1, IN_ALIBI},
  [OPT_KEY_ORIGIN] = {"key-origin", 0, "--key-origin", 1, IN_ALIBI},
  [OPT_CAUSAL] = {"causal", 0, "--causal", 0, IN_TILES | IN_T5B},
  [OPT_WINDOW] = {"window", 0, "--window", 1, IN_TILES},
  [OPT_Q_POS] = {"q-pos", 0, "--q-pos", 1, IN_TILES},
  [OPT_K_POS] = {"k-pos", 0, "--k-pos", 1, IN_TILES},
  [OPT_FROM] = {"from", 0, "--from", 1, IN_T5B | IN_DEB},
  [OPT_TO] = {"to", 0, "--to", 1, IN_T5B | IN_DEB},
  [OPT_BUCKETS] = {"buckets", 0, "--buckets", 1, IN_T5B | IN_T5},
  [OPT_MAX_DISTANCE] = {"max-distance", 0, "--max-distance", 1, IN_T5B | IN_T5},
  [OPT_BUCKET_SIZE] = {"bucket-size", 0, "--bucket-size", 1, IN_DEB | IN_DEBR},
  [OPT_MAX_POSITION] = {"max-position", 0, "--max-position", 1, IN_DEB | IN_DEBR},
};

const char *option_label(enum option_id id) { return option_specs[id].label; }

/* Whether some kind of command accepts the option. */
static int command_accepts(enum command command, unsigned leaves) {
  int leaf;
  for (leaf = 0; leaf < LEAF_COUNT; leaf++)
    if ((leaves & IN(leaf)) && leaf_specs[leaf].command == command) return 1;
  return 0;
}

/* ---- one pass over argv ---------------------------------------------------------------------- */

/* Finds "--name", "--name=value" or "-x"; *inline_value is the text after '=', if any. */
static int find_option(const char *arg, const char **inline_value) {
  int id;
  *inline_value = NULL;
  if (arg[1] != '-') {
    for (id = 0; id < OPT_COUNT; id++)
      if (option_specs[id].short_name && arg[1] == option_specs[id].short_name && arg[2] == '\0')
        return id;
    return -1;
  }
  for (id = 0; id < OPT_COUNT; id++) {
    size_t len = strlen(option_specs[id].long_name);
    if (strncmp(arg + 2, option_specs[id].long_name, len) != 0) continue;
    if (arg[2 + len] == '\0') return id;
    if (arg[2 + len] == '=') {
      *inline_value = arg + 3 + len;
      return id;
    }
  }
  return -1;
}

/* An option before any command: say which command(s) it belongs to. */
static int option_needs_command(const char *arg, unsigned leaves) {
  char list[160];
  size_t len = 0, n = 0, total = 0;
  int cmd;
  for (cmd = CMD_INFO; cmd < CMD_COUNT; cmd++) total += command_accepts((enum command)cmd, leaves);
  list[0] = '\0';
  for (cmd = CMD_INFO; cmd < CMD_COUNT && len < sizeof list; cmd++) {
    int w;
    if (!command_accepts((enum command)cmd, leaves)) continue;
    n++;
    w = snprintf(list + len, sizeof list - len, "%s'posenc %s'", n == 1 ? "" : n == total ? " or " : ", ",
                 command_names[cmd]);
    if (w < 0) break;
    len += (size_t)w;
  }
  if (total > 1)
    cli_error("option %s must follow a command (%s)", quoted(arg), list);
  else
    cli_error("option %s must follow the command %s", quoted(arg), total ? list : "?");
  return EXIT_USAGE;
}

static int take_option(int argc, char **argv, int *i, struct raw_args *args) {
  const char *arg = argv[*i], *value;
  int id = find_option(arg, &value);
  const struct option_spec *spec;
  if (id < 0) {
    cli_error("unknown option %s (see 'posenc --help')", quoted(arg));
    return EXIT_USAGE;
  }
  spec = &option_specs[id];
  if (spec->leaves != IN_ALL && !command_accepts(args->command, spec->leaves)) {
    if (args->command == CMD_NONE) return option_needs_command(arg, spec->leaves);
    cli_error("'posenc %s' has no option %s", command_names[args->command], quoted(arg));
    return EXIT_USAGE;
  }
  if (args->value[id]) {
    cli_error("option %s given twice", spec->label);
    return EXIT_USAGE;
  }
  if (!spec->takes_value) {
    if (value) {
      cli_error("option %s takes no value", spec->label);
      return EXIT_USAGE;
    }
    value = "";
  } else if (!value) {
    /* the next word is the value, unless it is missing or is clearly another long option */
    if (*i + 1 >= argc || strncmp(argv[*i + 1], "--", 2) == 0) {
      cli_error("option %s needs a value", spec->label);
      return EXIT_USAGE;
    }
    value = argv[++*i];
  }
  args->value[id] = value;
  return EXIT_SUCCESS;
}

static int take_word(const char *word, struct raw_args *args) {
  int leaf;
  if (args->command == CMD_NONE) {
    int cmd = lookup_name(command_names + 1, CMD_COUNT - 1, word);
    if (cmd < 0) {
      cli_error("unknown command %s (expected info, table, rope, embed, analyze, alibi, t5 or deberta)", quoted(word));
      return EXIT_USAGE;
    }
    args->command = (enum command)(cmd + 1);
    for (leaf = 0; leaf < LEAF_COUNT; leaf++) /* a command without kinds is its own leaf */
      if (leaf_specs[leaf].command == args->command && !leaf_specs[leaf].kind) args->leaf = (enum leaf)leaf;
    return EXIT_SUCCESS;
  }
  if (args->leaf == LEAF_NONE) {
    for (leaf = 0; leaf < LEAF_COUNT; leaf++)
      if (leaf_specs[leaf].command == args->command && leaf_specs[leaf].kind &&
          strcmp(leaf_specs[leaf].kind, word) == 0) {
        args->kind = word;
        args->leaf = (enum leaf)leaf;
        return EXIT_SUCCESS;
      }
    cli_error("unknown %s kind %s (expected %s)", command_names[args->command], quoted(word),
              expected_kinds(args->command));
    return EXIT_USAGE;
  }
  if (args->leaf == LEAF_ANALYZE && !args->operand) {
    args->operand = word;
    return EXIT_SUCCESS;
  }
  cli_error("unexpected argument %s", quoted(word));
  return EXIT_USAGE;
}

/* Options are checked against the command as they come; against its kind (which may come
 * later: 'posenc rope --rows 4 table') once all words are in. */
static int check_kind_options(const struct raw_args *args) {
  int id;
  if (args->leaf == LEAF_NONE) return EXIT_SUCCESS;
  for (id = 0; id < OPT_COUNT; id++)
    if (args->value[id] && option_specs[id].leaves != IN_ALL && !(option_specs[id].leaves & IN(args->leaf))) {
      cli_error("'%s' has no option '%s'", leaf_title(args->leaf), option_specs[id].label);
      return EXIT_USAGE;
    }
  return EXIT_SUCCESS;
}

int parse_argv(int argc, char **argv, struct raw_args *args) {
  int i, rc = EXIT_SUCCESS, options_ended = 0;
  memset(args, 0, sizeof *args);
  for (i = 1; i < argc && rc == EXIT_SUCCESS; i++) {
    const char *arg = argv[i];
    if (!options_ended && strcmp(arg, "--") == 0) { /* POSIX's end of options */
      options_ended = 1;
      continue;
    }
    rc = (!options_ended && arg[0] == '-' && arg[1] != '\0') ? take_option(argc, argv, &i, args)
                                                              : take_word(arg, args);
  }
  return rc ? rc : check_kind_options(args);
}

/* ---- converting values ----------------------------------------------------------------------- */

int bad_value(enum option_id id, const char *text, const char *why) {
  cli_error("%s %s: %s", option_specs[id].label, quoted(text), why);
  return EXIT_USAGE;
}

int missing_option(enum option_id id, enum leaf leaf) {
  cli_error("missing %s (see 'posenc %s --help')", option_specs[id].label, command_names[leaf_specs[leaf].command]);
  return EXIT_USAGE;
}

/* EXIT_SUCCESS, or the usage error that says why text did not parse. */
static int parsed(enum option_id id, const char *text, enum parse_result result) {
  return result == PARSE_OK ? EXIT_SUCCESS : bad_value(id, text, parse_result_text(result));
}

static int convert_count_text(enum option_id id, const char *text, size_t min, size_t max, size_t *out) {
  size_t value;
  int rc = parsed(id, text, parse_size(text, &value));
  if (rc) return rc;
  if (value < min) {
    char why[48];
    snprintf(why, sizeof why, "must be at least %zu", min);
    return bad_value(id, text, why);
  }
  if (value > max) return bad_value(id, text, "out of range");
  *out = value;
  return EXIT_SUCCESS;
}

int convert_count(const struct raw_args *args, enum option_id id, size_t *out) {
  if (!args->value[id]) return missing_option(id, args->leaf);
  return convert_count_text(id, args->value[id], 1, SIZE_MAX, out);
}

int convert_optional_count(const struct raw_args *args, enum option_id id, size_t max, size_t *out) {
  return convert_optional_count_from(args, id, 1, max, out);
}

int convert_optional_count_from(const struct raw_args *args, enum option_id id, size_t min, size_t max, size_t *out) {
  return args->value[id] ? convert_count_text(id, args->value[id], min, max, out) : EXIT_SUCCESS;
}

int convert_optional_double(const struct raw_args *args, enum option_id id, double *out) {
  const char *text = args->value[id];
  return text ? parsed(id, text, parse_double(text, out)) : EXIT_SUCCESS;
}

int convert_optional_real(const struct raw_args *args, enum option_id id, int positive, double max,
                          double *out) {
  const char *text = args->value[id];
  double value;
  int rc;
  if (!text) return EXIT_SUCCESS;
  if ((rc = parsed(id, text, parse_double(text, &value))) != EXIT_SUCCESS) return rc;
  if (positive ? !(value > 0.0) : !(value >= 0.0))
    return bad_value(id, text, positive ? "must be greater than 0" : "must not be negative");
  if (value > max) {
    char why[48];
    snprintf(why, sizeof why, "out of range (at most %g)", max);
    return bad_value(id, text, why);
  }
  *out = value;
  return EXIT_SUCCESS;
}

int convert_optional_int32(const struct raw_args *args, enum option_id id, int32_t *out) {
  const char *text = args->value[id];
  return text ? parsed(id, text, parse_int32(text, out)) : EXIT_SUCCESS;
}

int convert_choice(const struct raw_args *args, enum option_id id, const char *const *names,
                   size_t count, const char *expected, int *out) {
  const char *text = args->value[id];
  int index;
  if (!text) return EXIT_SUCCESS;
  index = lookup_name(names, count, text);
  if (index < 0) return bad_value(id, text, expected);
  *out = index;
  return EXIT_SUCCESS;
}

int convert_output(const struct raw_args *args, enum option_id id, const char **out) {
  const char *text = args->value[id];
  *out = NULL;
  if (!text || strcmp(text, "-") == 0) return EXIT_SUCCESS; /* "-o -": stdout */
  if (text[0] == '\0') return bad_value(id, "", "empty file name");
  *out = text;
  return EXIT_SUCCESS;
}

int convert_seed(const struct raw_args *args, enum option_id id, uint64_t *out) {
  const char *text = args->value[id];
  uint64_t value = 0;
  const char *p;
  if (!text) return EXIT_SUCCESS;
  if (!*text) return bad_value(id, text, "expected a decimal integer");
  for (p = text; *p; p++) {
    unsigned digit = (unsigned)(*p - '0');
    if (digit > 9) return bad_value(id, text, "expected a decimal integer in 0 .. 18446744073709551615");
    if (value > (UINT64_MAX - digit) / 10) return bad_value(id, text, "out of range (at most 18446744073709551615)");
    value = value * 10 + digit;
  }
  *out = value;
  return EXIT_SUCCESS;
}
