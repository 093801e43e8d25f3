/* cli_write.h - getting finished output onto disk or stdout. */
#ifndef POSENC_CLI_WRITE_H
#define POSENC_CLI_WRITE_H

#include "cli_common.h"

/* Writes the spans, in order, to path, or to stdout when path is NULL. A file is written to a
 * temporary beside it and renamed over it, so path either keeps its old contents or receives all
 * of the output, never a part. Returns EXIT_SUCCESS, or EXIT_FAILURE after reporting why. */
int write_output(const char *path, const struct byte_span *spans, size_t count);

#endif /* POSENC_CLI_WRITE_H */
