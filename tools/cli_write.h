/* cli_write.h - getting finished output onto disk or stdout. */
#ifndef POSENC_CLI_WRITE_H
#define POSENC_CLI_WRITE_H

#include "cli_common.h"
#include "posenc.h"

/* Windows: stdout and stderr in binary mode, so that what the tool prints is the same bytes as on
 * POSIX (text mode writes "\r\n" for every "\n" byte, tables included). Elsewhere nothing.
 * Called first thing in main. */
void cli_stdio_binary(void);

/* Writes the spans, in order, to path, or to stdout when path is NULL. A regular file (or a new
 * one) is written to a temporary beside it and renamed over it, so path either keeps its old
 * contents or receives all of the output, never a part; a device or FIFO is written in place; a
 * symbolic link is followed; a directory or a dangling link is refused (cli_write.c has the rules).
 * Returns EXIT_SUCCESS, or EXIT_FAILURE after reporting why. */
int write_output(const char *path, const struct byte_span *spans, size_t count);

/* Output produced a chunk at a time, so that a large table is never held whole: a chunk is
 * computed, written, and its buffer reused for the next. */
struct chunk_source {
  size_t chunks;
  /* Sets *chunk to chunk i (i = 0 .. chunks-1, asked for in order, possibly more than once
   * when there are several passes), in memory the source owns until the next call. Returns 0,
   * or -1 after reporting why (the caller then abandons the output: a regular file keeps its
   * old contents). */
  int (*next)(void *ctx, size_t i, struct byte_span *chunk);
  void *ctx;
};

/* write_output, then the source's chunks after the spans, with the same all-or-nothing rules:
 * a chunk that fails, or a write that fails half-way, leaves a regular file as it was. */
int write_output_source(const char *path, const struct byte_span *spans, size_t count,
                        const struct chunk_source *source);

/* One of several outputs of a command (rope apply writes Q and K). */
struct output_file {
  const char *path;               /* NULL: stdout (at most one output may be) */
  const struct byte_span *spans;
  size_t count;
};

/* Writes every output all-or-nothing together, as far as devices allow: every path is checked and
 * every device opened first, each regular file goes to its own temporary, and only once all of
 * them are complete on disk (and stdout, if used, is written) are the devices written and the
 * temporaries renamed over their paths. On an error before that no path is touched. */
int write_outputs(const struct output_file *outputs, size_t n_outputs);

/* An array of count elements of item_size bytes (host order; swapped to little-endian in place)
 * as a .npy file at path (NULL: stdout), all-or-nothing. */
int write_npy_file(const char *path, posenc_npy_type type, const size_t *shape, size_t ndim, void *data,
                   size_t count, size_t item_size);

#endif /* POSENC_CLI_WRITE_H */
