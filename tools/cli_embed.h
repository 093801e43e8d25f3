/* cli_embed.h - 'posenc embed' (the masked add of a position table, posenc_embed_forward) and
 * 'posenc analyze' (the spectrum of a table beside a sinusoidal one, posenc_spectrum). */
#ifndef POSENC_CLI_EMBED_H
#define POSENC_CLI_EMBED_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli_args.h"
#include "posenc.h"

/* An embed command line with every value converted and checked; files are read by run_embed. */
struct embed_request {
  const char *in_path, *ids_path, *mask_path, *table_path, *pos_ids_path;
  const char *output;            /* NULL: stdout */
  int scale_given;
  float scale;
  int32_t padding_id, start;
  posenc_pos_mode mode;
  posenc_oob_policy oob;
  double dropout;
  uint64_t seed;
  int out_dtype;                 /* -1: that of --in */
};

struct analyze_request {
  const char *path;
  size_t top;
};

int build_embed_request(const struct raw_args *args, struct embed_request *req);
int run_embed(const struct embed_request *req);
int build_analyze_request(const struct raw_args *args, struct analyze_request *req);
int run_analyze(const struct analyze_request *req);

extern const char embed_help[];
extern const char analyze_help[];

#endif /* POSENC_CLI_EMBED_H */
