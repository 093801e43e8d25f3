/* cli_input.h - reading .npy input files for the rope commands. Every problem with an input file
 * (cannot be read, not a strict .npy, wrong dtype, shape or values) is reported as one line that
 * names the option and the file, and returns EXIT_FAILURE. */
#ifndef POSENC_CLI_INPUT_H
#define POSENC_CLI_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "cli_common.h"
#include "cli_npy_read.h"

struct npy_input {
  const char *label;      /* the option that named the file, for messages */
  const char *path;
  posenc_npy_info info;
  unsigned char *data;    /* the payload (malloc'd), moved to the start, in host byte order */
};

/* Reads and checks path; on success release with npy_input_free. */
int npy_load(const char *label, const char *path, struct npy_input *in);
void npy_input_free(struct npy_input *in);

/* Reports "LABEL 'PATH': <message>" and returns EXIT_FAILURE. */
int input_error(const struct npy_input *in, const char *fmt, ...) CLI_PRINTF(2, 3);

/* "(3, 4)" */
const char *input_shape(const struct npy_input *in, char *buf, size_t size);

/* A float list (<f2, <f4 or <f8) of exactly count values, each finite and > 0, into out. */
int npy_positive_floats(const struct npy_input *in, size_t count, float *out);

/* An RMSNorm weight of exactly count values (shape (count,)), each finite, into out exactly: <f4,
 * <f2, or <u2 holding bfloat16 bits (as posenc writes bf16); not <f8 (it would need rounding). */
int npy_norm_weight(const struct npy_input *in, size_t count, float *out);

/* The values of an <i4 or <i8 array as int32 (each within +-2147483647) into out[0..count). */
int npy_positions(const struct npy_input *in, int32_t *out);

#endif /* POSENC_CLI_INPUT_H */
