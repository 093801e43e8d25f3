/* cli_write.c - all-or-nothing output files. */
#define _POSIX_C_SOURCE 200809L

#include "cli_write.h"
#include "cli_format.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* write() may write less than asked (pipes, signals): loop until every byte is out.
 * Returns 0, or -1 with errno set. */
static int write_all(int fd, const unsigned char *data, size_t size) {
  while (size > 0) {
    ssize_t n = write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    data += n;
    size -= (size_t)n;
  }
  return 0;
}

static int write_spans(int fd, const struct byte_span *spans, size_t count) {
  size_t i;
  for (i = 0; i < count; i++)
    if (write_all(fd, (const unsigned char *)spans[i].data, spans[i].size) != 0) return -1;
  return 0;
}

/* "dir/.posenc-XXXXXX" for "dir/name": the same directory, so rename() cannot cross file
 * systems, and a hidden name that cannot exceed NAME_MAX however long "name" is. */
static char *temp_template_beside(const char *path) {
  static const char suffix[] = ".posenc-XXXXXX";
  const char *slash = strrchr(path, '/');
  size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
  char *tmpl = malloc(dir_len + sizeof suffix);
  if (!tmpl) return NULL;
  memcpy(tmpl, path, dir_len);
  memcpy(tmpl + dir_len, suffix, sizeof suffix);
  return tmpl;
}

/* mkstemp creates files 0600; give the output the mode a plain open(..., 0666) would. */
static mode_t new_file_mode(void) {
  mode_t mask = umask(0);
  umask(mask);
  return (mode_t)(0666 & ~mask);
}

/* Fills the open temporary and closes it. Returns 0, or -1 with errno of the first failure. */
static int fill_and_close(int fd, const struct byte_span *spans, size_t count) {
  int failed = fchmod(fd, new_file_mode()) != 0 || write_spans(fd, spans, count) != 0 ||
               fsync(fd) != 0; /* the data must be on disk before the rename makes it visible */
  int saved = errno;
  if (close(fd) != 0 && !failed) return -1;
  errno = saved;
  return failed ? -1 : 0;
}

/* A temporary beside path, filled with the output and closed. Returns its name (to rename or
 * unlink), or NULL after reporting why. */
static char *write_temporary(const char *path, const struct byte_span *spans, size_t count) {
  char *tmp = temp_template_beside(path);
  int fd;
  if (!tmp) {
    cli_error("out of memory");
    return NULL;
  }
  fd = mkstemp(tmp);
  if (fd < 0) {
    cli_error("cannot create a temporary file for %s: %s", quoted(path), strerror(errno));
    free(tmp);
    return NULL;
  }
  if (fill_and_close(fd, spans, count) != 0) {
    int saved = errno;
    unlink(tmp);
    cli_error("cannot write %s: %s", quoted(path), strerror(saved));
    free(tmp);
    return NULL;
  }
  return tmp;
}

static void discard_temporaries(char **tmps, size_t n) {
  size_t i;
  for (i = 0; i < n; i++)
    if (tmps[i]) {
      unlink(tmps[i]);
      free(tmps[i]);
      tmps[i] = NULL;
    }
}

enum { MAX_OUTPUTS = 4 };

int write_outputs(const struct output_file *outputs, size_t n_outputs) {
  char *tmps[MAX_OUTPUTS] = {NULL};
  size_t i;
  int rc = EXIT_SUCCESS;
  if (n_outputs > MAX_OUTPUTS) {
    cli_error("internal error: too many outputs");
    return EXIT_FAILURE;
  }
  for (i = 0; i < n_outputs && rc == EXIT_SUCCESS; i++)
    if (outputs[i].path && !(tmps[i] = write_temporary(outputs[i].path, outputs[i].spans, outputs[i].count)))
      rc = EXIT_FAILURE;
  for (i = 0; i < n_outputs && rc == EXIT_SUCCESS; i++)
    if (!outputs[i].path && write_spans(STDOUT_FILENO, outputs[i].spans, outputs[i].count) != 0) {
      cli_error("cannot write to standard output: %s", strerror(errno));
      rc = EXIT_FAILURE;
    }
  for (i = 0; i < n_outputs && rc == EXIT_SUCCESS; i++) {
    if (!tmps[i]) continue;
    if (rename(tmps[i], outputs[i].path) != 0) {
      cli_error("cannot write %s: %s", quoted(outputs[i].path), strerror(errno));
      rc = EXIT_FAILURE;
      break;
    }
    free(tmps[i]);
    tmps[i] = NULL;
  }
  discard_temporaries(tmps, n_outputs);
  return rc;
}

int write_output(const char *path, const struct byte_span *spans, size_t count) {
  struct output_file output;
  output.path = path;
  output.spans = spans;
  output.count = count;
  return write_outputs(&output, 1);
}

int write_npy_file(const char *path, posenc_npy_type type, const size_t *shape, size_t ndim, void *data,
                   size_t count, size_t item_size) {
  struct rendered_table rendered;
  int rc;
  table_to_little_endian(data, count, item_size);
  rc = render_npy_array(type, shape, ndim, data, count * item_size, &rendered);
  if (rc == EXIT_SUCCESS) rc = write_output(path, rendered.spans, rendered.count);
  rendered_table_free(&rendered);
  return rc;
}
