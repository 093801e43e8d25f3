/* cli_stream.h - tables computed and written a chunk of rows at a time.
 *
 * A table whose rows are independent (a sinusoidal table, a RoPE cache, a bias block) is never
 * held whole: a chunk of rows is computed into one reused buffer and written, then the next, so
 * peak memory is a chunk (CLI_CHUNK_BYTES, or one row if a row is larger) whatever the table's
 * size. Every error the computation can give is found before the first byte is written, by
 * computing the rows that decide it (row_stream.check), so a bad request fails as it did when
 * the whole table was computed first, and stdout never receives part of a table. */
#ifndef POSENC_CLI_STREAM_H
#define POSENC_CLI_STREAM_H

#include <stddef.h>

#include "cli_format.h"
#include "posenc.h"

/* The chunk size: 256 KiB, a few hundred rows of a typical table. It stays in L2 between being
 * computed and being copied by write(), and a larger one buys nothing measurable. */
#define CLI_CHUNK_BYTES ((size_t)256 * 1024)

struct row_stream {
  size_t rows;       /* rows of the whole table */
  size_t row_bytes;  /* bytes of one row */
  size_t elem_size;  /* bytes of one element (for the byte-order swap) */
  /* Computes rows row0 .. row0+n-1 into out (n * row_bytes bytes, host byte order). Returns
   * EXIT_SUCCESS, or an exit status after reporting why. */
  int (*fill)(void *ctx, size_t row0, size_t n, unsigned char *out);
  /* Finds every error the rows could give, before anything is written; row (row_bytes bytes)
   * is scratch for computing a row or two. NULL: computing the first and the last row does it
   * (the errors depend only on the extreme positions). Returns as fill. */
  int (*check)(void *ctx, unsigned char *row);
  void *ctx;
};

/* Rows per chunk for rows of row_bytes: CLI_CHUNK_BYTES / row_bytes, at least 1. The environment
 * variable POSENC_CLI_CHUNK_BYTES (a byte count) replaces CLI_CHUNK_BYTES: the tests use it to
 * compare tables written in many chunks with tables written in one. */
size_t stream_chunk_rows(size_t row_bytes);

/* Checks the stream, then writes it to path (NULL: stdout) all-or-nothing (see write_output):
 * format npy with a header for (type, shape, ndim), which must hold rows * row_bytes bytes, or
 * raw. Returns EXIT_SUCCESS or the exit status of the first error, reported. */
int write_row_stream(const char *path, enum table_format format, posenc_npy_type type,
                     const size_t *shape, size_t ndim, const struct row_stream *stream);

#endif /* POSENC_CLI_STREAM_H */
