/* cli_npy_read.h - a strict reader of NumPy .npy files, as a pure function over bytes.
 *
 * The header is parsed by the library (posenc_npy_parse: versions 1.0-3.0, exactly the keys
 * 'descr', 'fortran_order' (False) and 'shape' (at most 4 dimensions), little-endian <f2 <f4 <f8
 * <i4 <i8 <u2 |u1 |b1). npy_parse adds what a whole file needs: a payload of exactly
 * prod(shape) * itemsize bytes, and a one-line reason for each refusal (the library's problem
 * code, worded for people). Which dtypes and shapes a command accepts is checked where the file
 * is used (cli_input.c, cli_rope.c). */
#ifndef POSENC_CLI_NPY_READ_H
#define POSENC_CLI_NPY_READ_H

#include <stddef.h>

#include "posenc.h"

/* Parses the file image bytes[0..length). Returns 1 and fills *info, or returns 0 and writes a
 * reason (no trailing newline, truncated to error_size) to error; *info is then unspecified. */
int npy_parse(const unsigned char *bytes, size_t length, posenc_npy_info *info, char *error,
              size_t error_size);

/* "<f4" and so on. */
const char *npy_dtype_descr(posenc_npy_type type);

/* shape as NumPy prints it, "(3, 4)", "(5,)", "()", cut to out_size. */
void npy_format_shape(const posenc_npy_info *info, char *out, size_t out_size);

#endif /* POSENC_CLI_NPY_READ_H */
