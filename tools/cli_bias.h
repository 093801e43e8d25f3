/* cli_bias.h - 'posenc alibi slopes|bias', 'posenc t5 buckets|bias' and 'posenc deberta
 * buckets|relative': the position biases added inside attention (posenc_alibi_*, posenc_t5_*,
 * posenc_deberta_*). Their options are in cli_args.c's table with every other command's. As
 * everywhere in the tool, everything is checked and computed in memory before the first byte is
 * written. */
#ifndef POSENC_CLI_BIAS_H
#define POSENC_CLI_BIAS_H

#include <stddef.h>
#include <stdint.h>

#include "cli_args.h"
#include "posenc.h"

struct bias_request {
  enum leaf leaf;
  size_t heads, queries, keys;
  double max_bias;
  const char *max_bias_text;      /* as given, for messages; NULL if absent */
  posenc_alibi_form form;
  posenc_score_mask mask;
  int32_t key_origin, q_pos, k_pos, from, to;
  posenc_dtype dtype;
  posenc_t5_buckets t5;
  const char *table_path;         /* t5 bias */
  uint32_t bucket_size, max_position;
  int text;                       /* slopes and buckets: text lines instead of .npy */
  const char *output;             /* NULL: stdout */
};

/* Converts and checks every value, including the library's own checks of the configuration. */
int build_bias_request(const struct raw_args *args, struct bias_request *req);

int run_bias(const struct bias_request *req);

/* The help of an alibi, t5 or deberta command (all of its kinds). */
const char *bias_help_text(enum command command);

#endif /* POSENC_CLI_BIAS_H */
