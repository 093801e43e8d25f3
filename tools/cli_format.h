/* cli_format.h - serialising a computed table as .npy, raw bytes or a C header. */
#ifndef POSENC_CLI_FORMAT_H
#define POSENC_CLI_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "cli_common.h"
#include "posenc.h"

enum table_format { TABLE_FORMAT_NPY, TABLE_FORMAT_RAW, TABLE_FORMAT_C, TABLE_FORMAT_COUNT };

/* "npy", "raw", "c": indexed by enum table_format. */
extern const char *const table_format_names[TABLE_FORMAT_COUNT];

/* A computed table whose elements are already in little-endian byte order. */
struct table_view {
  const unsigned char *bytes;
  size_t size;  /* rows * cols * element size */
  size_t rows, cols;
  posenc_dtype dtype;
};

/* What a C header says about the table and where it came from. */
struct c_header_info {
  const char *name;      /* the array's identifier; also prefixes the macros */
  const char *title;     /* what the table is: "Sinusoidal positional-encoding table" */
  const char *command;   /* a command line that regenerates the table */
  const char *notes;     /* more comment lines, each " * ...\n" (the columns, say); NULL: none */
  int32_t first_position;
};

/* The serialised output: spans to write in order, pointing into the table and into memory
 * owned here. */
struct rendered_table {
  struct byte_span spans[2];
  size_t count;
  char *owned;
};

/* Converts count elements of elem_size bytes from host to little-endian order, in place (and
 * back: the swap, done only on big-endian hosts, is its own inverse). */
void table_to_little_endian(void *bytes, size_t count, size_t elem_size);

/* Serialises table in format (c_info is used by TABLE_FORMAT_C only). Returns EXIT_SUCCESS, or
 * EXIT_FAILURE after reporting (out of memory). Release with rendered_table_free either way. */
int render_table(const struct table_view *table, enum table_format format,
                 const struct c_header_info *c_info, struct rendered_table *out);

void rendered_table_free(struct rendered_table *rendered);

/* The .npy type of a posenc dtype: <f4, <f2, and <u2 for bf16 (NumPy has no bfloat16: the raw
 * bits). */
posenc_npy_type npy_type_of(posenc_dtype dtype);

/* A .npy 1.0 file of any array (C order, at most 4 dimensions) whose elements are already
 * little-endian. Release with rendered_table_free. */
int render_npy_array(posenc_npy_type type, const size_t *shape, size_t ndim, const void *bytes,
                     size_t size, struct rendered_table *out);

#endif /* POSENC_CLI_FORMAT_H */
