/* cli_args.h - the posenc tool's command line: commands, the option table, and the strict
 * conversion of option values. Every command shares one option table, so an option means the
 * same thing (and is spelled the same way) wherever it is accepted. */
#ifndef POSENC_CLI_ARGS_H
#define POSENC_CLI_ARGS_H

#include <stddef.h>
#include <stdint.h>

enum command {
  CMD_NONE, CMD_INFO, CMD_TABLE, CMD_ROPE, CMD_EMBED, CMD_ANALYZE, CMD_ALIBI, CMD_T5, CMD_DEBERTA, CMD_COUNT
};

/* What a command line finally runs: a command and, for table, rope, alibi, t5 and deberta, its kind. */
enum leaf {
  LEAF_NONE,            /* no command, or table/rope without a kind */
  LEAF_INFO,
  LEAF_TABLE_SINUSOIDAL,
  LEAF_TABLE_LEARNED,
  LEAF_TABLE_SINCOS2D,
  LEAF_ROPE_FREQS,
  LEAF_ROPE_TABLE,
  LEAF_ROPE_APPLY,
  LEAF_EMBED,
  LEAF_ANALYZE,
  LEAF_ALIBI_SLOPES,
  LEAF_ALIBI_BIAS,
  LEAF_T5_BUCKETS,
  LEAF_T5_BIAS,
  LEAF_DEBERTA_BUCKETS,
  LEAF_DEBERTA_RELATIVE,
  LEAF_COUNT
};

enum option_id {
  /* everywhere */
  OPT_HELP, OPT_VERSION, OPT_ISA,
  /* tables and outputs */
  OPT_POSITIONS, OPT_DIM, OPT_BASE, OPT_START, OPT_LAYOUT, OPT_DTYPE, OPT_FORMAT, OPT_NAME,
  OPT_OUTPUT,
  /* rope table / apply */
  OPT_ROWS, OPT_IN, OPT_K, OPT_K_OUT, OPT_INVERSE, OPT_CACHE_ROWS, OPT_OUT_DTYPE,
  OPT_QK_NORM, OPT_K_NORM, OPT_QK_NORM_EPS, OPT_QK_NORM_OFFSET,
  /* the RoPE variant: every rope command */
  OPT_HEAD_DIM, OPT_ROTARY_DIM, OPT_STYLE, OPT_SCALING, OPT_FACTOR, OPT_ORIGINAL_MAX_POS,
  OPT_SEQ_LEN, OPT_QWEN_ALPHA, OPT_BETA_FAST, OPT_BETA_SLOW, OPT_NO_TRUNCATE, OPT_MSCALE,
  OPT_MSCALE_ALL_DIM, OPT_LOW_FREQ_FACTOR, OPT_HIGH_FREQ_FACTOR, OPT_SHORT_FACTOR,
  OPT_LONG_FACTOR, OPT_FREQ_FACTORS, OPT_ATTENTION_FACTOR, OPT_MROPE_SECTION,
  OPT_MROPE_INTERLEAVED, OPT_HF_COMPAT,
  /* table sinusoidal / learned / sincos2d */
  OPT_FREQS, OPT_MIN_TIMESCALE, OPT_INIT, OPT_SEED, OPT_STD, OPT_GRID, OPT_CLS_TOKEN,
  /* embed */
  OPT_IDS, OPT_MASK, OPT_TABLE, OPT_SINUSOIDAL, OPT_SCALE, OPT_PADDING_ID, OPT_POS_IDS, OPT_OOB,
  OPT_DROPOUT,
  /* analyze */
  OPT_TOP,
  /* alibi, t5, deberta */
  OPT_HEADS, OPT_MAX_BIAS, OPT_QUERIES, OPT_KEYS, OPT_FORM, OPT_KEY_ORIGIN, OPT_CAUSAL, OPT_WINDOW,
  OPT_Q_POS, OPT_K_POS, OPT_FROM, OPT_TO, OPT_BUCKETS, OPT_MAX_DISTANCE, OPT_BUCKET_SIZE,
  OPT_MAX_POSITION,
  OPT_COUNT
};

/* The command line as given: no value is converted yet, so that --help and --version work even
 * when other values are wrong. */
struct raw_args {
  enum command command;
  enum leaf leaf;
  const char *kind;             /* the word after table, rope, alibi, t5, deberta */
  const char *operand;          /* analyze: the file */
  const char *value[OPT_COUNT]; /* as given; "" for a flag that is present; NULL if absent */
};

/* "info", "table", ..., "deberta" (index by enum command; CMD_NONE is ""). */
extern const char *const command_names[CMD_COUNT];

/* "posenc rope freqs" and so on, for messages. */
const char *leaf_title(enum leaf leaf);
/* The kinds a command expects, for messages: "freqs, table or apply". */
const char *expected_kinds(enum command command);

/* How messages name an option: "--base", "-o/--output". */
const char *option_label(enum option_id id);

/* One pass over argv. Checks the words and that each option belongs to the command it follows;
 * reports the first problem and returns EXIT_USAGE, else EXIT_SUCCESS. */
int parse_argv(int argc, char **argv, struct raw_args *args);

/* ---- converting values: each reports its own error and returns EXIT_USAGE, or EXIT_SUCCESS.
 * The optional ones leave *out alone when the option is absent. */

int bad_value(enum option_id id, const char *text, const char *why);
int missing_option(enum option_id id, enum leaf leaf);

/* A required count >= 1. */
int convert_count(const struct raw_args *args, enum option_id id, size_t *out);
/* An optional count >= 1 that also fits max. */
int convert_optional_count(const struct raw_args *args, enum option_id id, size_t max, size_t *out);
/* An optional count >= min that also fits max. */
int convert_optional_count_from(const struct raw_args *args, enum option_id id, size_t min, size_t max, size_t *out);
/* An optional finite double at most max; positive: > 0, else >= 0. */
int convert_optional_real(const struct raw_args *args, enum option_id id, int positive, double max,
                          double *out);
/* An optional base: finite and > 0 (the library checks its own range). */
int convert_optional_double(const struct raw_args *args, enum option_id id, double *out);
int convert_optional_int32(const struct raw_args *args, enum option_id id, int32_t *out);
/* An optional name from names[0..count); expected says what is allowed. */
int convert_choice(const struct raw_args *args, enum option_id id, const char *const *names,
                   size_t count, const char *expected, int *out);
/* An optional output path: NULL (stdout) when absent or "-"; an empty name is an error. */
int convert_output(const struct raw_args *args, enum option_id id, const char **out);
/* An optional seed: decimal, 0 .. 2^64-1. */
int convert_seed(const struct raw_args *args, enum option_id id, uint64_t *out);

#endif /* POSENC_CLI_ARGS_H */
