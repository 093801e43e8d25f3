/* cli_rope.h - 'posenc rope freqs|table|apply': RoPE frequencies, cos/sin caches and rotation. */
#ifndef POSENC_CLI_ROPE_H
#define POSENC_CLI_ROPE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli_args.h"
#include "cli_format.h"
#include "posenc.h"

/* A rope command line with every value converted and checked. Files are only named here: they
 * are read by run_rope. */
struct rope_request {
  enum leaf leaf;
  posenc_rope_config config;    /* head_dim is 0 for apply until --in is read; factor lists NULL */
  size_t head_dim_given;        /* --head-dim, 0 if absent */
  int seq_len_given;
  const char *short_path, *long_path, *freq_factors_path;
  const char *base_text;        /* --base as given, for messages */
  const char *output;           /* -o; NULL: stdout */
  int text_format;              /* freqs: 1 text, 0 npy */
  /* table */
  size_t rows;                  /* 0: from --positions */
  posenc_rope_cache_layout layout;
  posenc_dtype dtype;
  enum table_format format;     /* npy, raw or c */
  const char *name;             /* --format c: the array's identifier */
  /* table and apply */
  int32_t start;
  const char *positions_path;
  /* apply */
  const char *in_path, *k_path, *k_out;
  int inverse;
  size_t cache_rows;            /* 0: on the fly */
  int out_dtype;                /* a posenc_dtype for every output; -1: each output its input's */
  const char *qk_norm_path;     /* --qk-norm: --in's RMSNorm weight; NULL: no norm */
  const char *k_norm_path;      /* --k-norm: --k's weight (given exactly when --qk-norm and --k are) */
  float qk_norm_eps;            /* --qk-norm-eps as float32 (default 1e-6) */
  int qk_norm_offset;           /* --qk-norm-offset: scale by 1 + w */
};

/* Converts and checks the options (usage errors: EXIT_USAGE after one message). */
int build_rope_request(const struct raw_args *args, struct rope_request *req);

/* Reads the inputs, computes, writes. */
int run_rope(const struct rope_request *req);

/* Help for 'posenc rope' or one of its commands. */
void rope_help(enum leaf leaf, FILE *out);

#endif /* POSENC_CLI_ROPE_H */
