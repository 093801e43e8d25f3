/* cli_stream.c - tables computed and written a chunk of rows at a time (see cli_stream.h). */

#include "cli_stream.h"

#include <stdint.h>
#include <stdlib.h>

#include "cli_write.h"

size_t stream_chunk_rows(size_t row_bytes) {
  size_t chunk = CLI_CHUNK_BYTES;
  const char *env = getenv("POSENC_CLI_CHUNK_BYTES");
  if (env && *env) {
    char *end;
    unsigned long long value = strtoull(env, &end, 10);
    if (*end == '\0' && value > 0 && value <= SIZE_MAX) chunk = (size_t)value;
  }
  return row_bytes && chunk / row_bytes > 1 ? chunk / row_bytes : 1;
}

/* One pass over the stream as a chunk_source. */
struct chunk_pass {
  const struct row_stream *stream;
  size_t chunk_rows;
  unsigned char *buf; /* chunk_rows * row_bytes */
};

static int next_chunk(void *ctx, size_t i, struct byte_span *chunk) {
  struct chunk_pass *pass = (struct chunk_pass *)ctx;
  const struct row_stream *s = pass->stream;
  size_t row0 = i * pass->chunk_rows, n = s->rows - row0 < pass->chunk_rows ? s->rows - row0 : pass->chunk_rows;
  if (s->fill(s->ctx, row0, n, pass->buf) != EXIT_SUCCESS) return -1;
  table_to_little_endian(pass->buf, n * s->row_bytes / s->elem_size, s->elem_size);
  chunk->data = pass->buf;
  chunk->size = n * s->row_bytes;
  return 0;
}

static int check_stream(const struct row_stream *s, unsigned char *row) {
  int rc;
  if (s->check) return s->check(s->ctx, row);
  if ((rc = s->fill(s->ctx, 0, 1, row)) != EXIT_SUCCESS) return rc;
  return s->rows > 1 ? s->fill(s->ctx, s->rows - 1, 1, row) : EXIT_SUCCESS;
}

int write_row_stream(const char *path, enum table_format format, posenc_npy_type type,
                     const size_t *shape, size_t ndim, const struct row_stream *stream) {
  struct chunk_pass pass;
  struct chunk_source source;
  struct rendered_table header;
  unsigned char *block; /* what malloc gave: the chunk starts at its first 64-byte boundary */
  int rc;
  pass.stream = stream;
  pass.chunk_rows = stream_chunk_rows(stream->row_bytes);
  if (pass.chunk_rows > stream->rows) pass.chunk_rows = stream->rows;
  /* 64-byte aligned: the library's wide stores then never split a cache line */
  if (!(block = (unsigned char *)malloc(pass.chunk_rows * stream->row_bytes + 63))) {
    cli_error("out of memory: a chunk of %zu rows needs %zu bytes", pass.chunk_rows,
              pass.chunk_rows * stream->row_bytes);
    return EXIT_FAILURE;
  }
  pass.buf = block + (64 - (uintptr_t)block % 64) % 64;
  header.count = 0;
  header.owned = NULL;
  rc = check_stream(stream, pass.buf);
  if (rc == EXIT_SUCCESS && format == TABLE_FORMAT_NPY)
    rc = render_npy_array(type, shape, ndim, NULL, 0, &header);
  if (rc == EXIT_SUCCESS) {
    source.chunks = (stream->rows + pass.chunk_rows - 1) / pass.chunk_rows;
    source.next = next_chunk;
    source.ctx = &pass;
    rc = write_output_source(path, header.spans, header.count ? 1 : 0, &source); /* the header only */
  }
  rendered_table_free(&header);
  free(block);
  return rc;
}
