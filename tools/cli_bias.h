/* cli_bias.h - 'posenc alibi slopes|bias', 'posenc t5 buckets|bias' and 'posenc deberta
 * buckets|relative': the position biases added inside attention (posenc_alibi_*, posenc_t5_*,
 * posenc_deberta_*).
 *
 * These commands parse their own command line (the words, the option spellings and the messages
 * are those of cli_args.c), so the option table of the other commands is left alone. As
 * everywhere in the tool, everything is checked and computed in memory before the first byte is
 * written. */
#ifndef POSENC_CLI_BIAS_H
#define POSENC_CLI_BIAS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "posenc.h"

enum bias_leaf {
  BIAS_LEAF_NONE, /* a command without its kind */
  BIAS_ALIBI_SLOPES, BIAS_ALIBI_BIAS, BIAS_T5_BUCKETS, BIAS_T5_BIAS, BIAS_DEBERTA_BUCKETS,
  BIAS_DEBERTA_RELATIVE, BIAS_LEAF_COUNT
};

enum bias_option {
  BOPT_HELP, BOPT_VERSION, BOPT_ISA, BOPT_HEADS, BOPT_MAX_BIAS, BOPT_QUERIES, BOPT_KEYS, BOPT_FORM,
  BOPT_KEY_ORIGIN, BOPT_CAUSAL, BOPT_WINDOW, BOPT_Q_POS, BOPT_K_POS, BOPT_DTYPE, BOPT_FROM, BOPT_TO,
  BOPT_BUCKETS, BOPT_MAX_DISTANCE, BOPT_BUCKET_SIZE, BOPT_MAX_POSITION, BOPT_TABLE, BOPT_FORMAT,
  BOPT_OUTPUT, BOPT_COUNT
};

struct bias_request {
  /* as given */
  int command;                    /* 0 alibi, 1 t5, 2 deberta */
  enum bias_leaf leaf;
  const char *value[BOPT_COUNT];  /* "" for a flag that is present; NULL if absent */
  /* converted by build_bias_request */
  size_t heads, queries, keys;
  double max_bias;
  posenc_alibi_form form;
  posenc_score_mask mask;
  int32_t key_origin, q_pos, k_pos, from, to;
  posenc_dtype dtype;
  posenc_t5_buckets t5;
  uint32_t bucket_size, max_position;
  int text;                       /* slopes and buckets: text lines instead of .npy */
  const char *output;             /* NULL: stdout */
};

/* Whether the first word of argv (after the global options) is alibi, t5 or deberta. */
int bias_command_named(int argc, char **argv);

/* One pass over argv; reports the first problem and returns EXIT_USAGE, else EXIT_SUCCESS.
 * Nothing is converted yet, so --help works whatever the other values are. */
int parse_bias_argv(int argc, char **argv, struct bias_request *req);

/* Converts and checks every value, including the library's own checks of the configuration. */
int build_bias_request(struct bias_request *req);

int run_bias(const struct bias_request *req);

/* The help of req's command (all of its kinds). */
void bias_help(const struct bias_request *req, FILE *out);

#endif /* POSENC_CLI_BIAS_H */
