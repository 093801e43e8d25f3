/* cli_write.c - output files: regular files replaced all-or-nothing, devices written in place.
 *
 * What -o names decides how it is written:
 *  - a regular file, or nothing yet: a temporary beside it is filled, synced and renamed over it,
 *    so the path holds either its old contents or all of the new ones, never a part. An existing
 *    file keeps its permission bits; a new one gets 0666 less the umask, as open() would give.
 *  - a character or block device, a FIFO or a socket: opened for writing and written in place,
 *    never created, truncated, unlinked or renamed (replacing /dev/null with a regular file, as a
 *    rename would, breaks the machine). All-or-nothing cannot hold there: a failed write leaves
 *    what was already written. A FIFO that no process has open for reading is an error, not a
 *    wait that may never end (the open is O_NONBLOCK): start the reader first.
 *  - a symbolic link: followed to the file it finally names, which is written by the rules above,
 *    a regular one through a temporary in the target's own directory, so the link stays a link
 *    and shows the new data. A dangling link is refused, as cp refuses it: nothing is created.
 *  - a directory: refused.
 * The kind is decided before anything is written, and every device is opened then too, so a FIFO
 * without a reader fails the command before any output is touched. */
#define _XOPEN_SOURCE 700 /* POSIX.1-2008 with realpath (glibc hides it from plain _POSIX_C_SOURCE) */
#if defined(__linux__)
#  define _GNU_SOURCE /* sync_file_range */
#endif

#include "cli_write.h"
#include "cli_format.h"

#include <errno.h>
#include <fcntl.h>
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

/* What one output holds: spans written in order, then the source's chunks, if any. */
struct content {
  const struct byte_span *spans;
  size_t count;
  const struct chunk_source *source; /* NULL: none */
};

/* How writing a content failed: WRITE_IO sets errno (to report with the path); WRITE_SOURCE
 * was a chunk that could not be computed, reported already by the source. */
enum { WRITE_OK = 0, WRITE_IO = -1, WRITE_SOURCE = -2 };

/* A temporary is synced before it is renamed. Where the system allows, its writeback is started
 * every few MiB while the rest is still being computed, so the final fsync waits for the last
 * few MiB instead of the whole file. */
enum { WRITEBACK_BYTES = 4 << 20 };

static void start_writeback(int fd, off_t offset, off_t length) {
#if defined(SYNC_FILE_RANGE_WRITE)
  (void)sync_file_range(fd, offset, length, SYNC_FILE_RANGE_WRITE); /* a hint: fsync checks */
#else
  (void)fd; (void)offset; (void)length;
#endif
}

/* Writes the spans, then every chunk of the source as it is produced: the whole output is never
 * held in memory at once. early_writeback: start writing the data back to disk as it goes. */
static int write_content(int fd, const struct content *c, int early_writeback) {
  off_t done = 0, synced = 0;
  size_t i;
  for (i = 0; i < c->count; i++) {
    if (write_all(fd, (const unsigned char *)c->spans[i].data, c->spans[i].size) != 0) return WRITE_IO;
    done += (off_t)c->spans[i].size;
  }
  for (i = 0; c->source && i < c->source->chunks; i++) {
    struct byte_span chunk;
    if (c->source->next(c->source->ctx, i, &chunk) != 0) return WRITE_SOURCE;
    if (write_all(fd, (const unsigned char *)chunk.data, chunk.size) != 0) return WRITE_IO;
    done += (off_t)chunk.size;
    if (early_writeback && done - synced >= WRITEBACK_BYTES) {
      start_writeback(fd, synced, done - synced);
      synced = done;
    }
  }
  return WRITE_OK;
}

/* One output path and how it is being written. */
struct target {
  const char *path;  /* as given, for messages */
  char *file;        /* what is written: path, or the file its symbolic links finally name */
  mode_t mode;       /* a replaced file's permission bits */
  int fd;            /* a device, FIFO or socket open for writing in place; -1: replaced */
  char *tmp;         /* the filled temporary beside file, until it is renamed over it */
};

static int target_error(const struct target *t, const char *why) {
  cli_error("cannot write %s: %s", quoted(t->path), why);
  return -1;
}

/* ---- what the path names (the POSIX-only part: lstat, realpath, open flags, fcntl) --------- */

/* mkstemp creates files 0600; a new output gets the mode a plain open(..., 0666) would give. */
static mode_t new_file_mode(void) {
  mode_t mask = umask(0);
  umask(mask);
  return (mode_t)(0666 & ~mask);
}

/* Opens a device, FIFO or socket for writing in place. O_NONBLOCK so that a FIFO without a reader
 * fails (ENXIO) instead of blocking forever, and a serial line does not wait for its carrier;
 * blocking again afterwards, so that writes wait for a slow reader instead of failing. */
static int open_in_place(struct target *t, const struct stat *st) {
  struct stat now;
  int fd = open(t->file, O_WRONLY | O_NOCTTY | O_NONBLOCK), flags;
  if (fd < 0) {
    if (errno == ENXIO && S_ISFIFO(st->st_mode))
      return target_error(t, "no process has the FIFO open for reading (start the reader first)");
    return target_error(t, strerror(errno));
  }
  /* it may have been replaced since the stat: a regular file is never written in place */
  if (fstat(fd, &now) != 0 || S_ISREG(now.st_mode) || S_ISDIR(now.st_mode)) {
    close(fd);
    return target_error(t, "the file changed while it was being opened");
  }
  if ((flags = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    int saved = errno;
    close(fd);
    return target_error(t, strerror(saved));
  }
  t->fd = fd;
  return 0;
}

/* The file a symbolic link finally names, into t->file and *st; -1 after reporting why not. */
static int follow_link(struct target *t, struct stat *st) {
  if (!(t->file = realpath(t->path, NULL))) {
    if (errno == ENOENT) return target_error(t, "a dangling symbolic link (what it names does not exist)");
    return target_error(t, strerror(errno));
  }
  if (stat(t->file, st) != 0) return target_error(t, strerror(errno));
  return 0;
}

static int copy_path(struct target *t) {
  return (t->file = strdup(t->path)) ? 0 : target_error(t, "out of memory");
}

/* Decides how t->path is written (see the top of this file). Returns 0, or -1 after reporting
 * why it cannot be written. */
static int resolve_target(struct target *t) {
  struct stat st;
  if (lstat(t->path, &st) != 0) {
    if (errno != ENOENT) return target_error(t, strerror(errno));
    t->mode = new_file_mode(); /* nothing there yet; a missing directory fails at mkstemp */
    return copy_path(t);
  }
  if (S_ISLNK(st.st_mode) ? follow_link(t, &st) != 0 : copy_path(t) != 0) return -1;
  if (S_ISDIR(st.st_mode)) return target_error(t, "it is a directory");
  if (!S_ISREG(st.st_mode)) return open_in_place(t, &st);
  t->mode = st.st_mode & 0777;
  return 0;
}

/* 1 if two resolved targets are one file under two names ("q.npy" and "./q.npy", a hard link, a
 * symbolic link): both would be written and the last rename would win. An existing file is known
 * by its device and inode; a new one by its directory's real path and its own name. */
static int same_file(const struct target *a, const struct target *b) {
  struct stat sa, sb;
  int ea = stat(a->file, &sa) != 0, eb = stat(b->file, &sb) != 0;
  if (!ea && !eb) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  if (ea && eb) {
    const char *na = strrchr(a->file, '/'), *nb = strrchr(b->file, '/');
    char *da, *db;
    int same;
    if (strcmp(na ? na + 1 : a->file, nb ? nb + 1 : b->file) != 0) return 0;
    da = na ? strndup(a->file, (size_t)(na - a->file) + 1) : strdup(".");
    db = nb ? strndup(b->file, (size_t)(nb - b->file) + 1) : strdup(".");
    {
      char *ra = da ? realpath(da, NULL) : NULL, *rb = db ? realpath(db, NULL) : NULL;
      same = ra && rb && strcmp(ra, rb) == 0;
      free(ra); free(rb);
    }
    free(da); free(db);
    return same;
  }
  return 0;
}

/* ---- replacing a regular file ---------------------------------------------------------------- */

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

/* Fills the open temporary and closes it. Returns WRITE_OK, or WRITE_IO with errno of the first
 * failure, or WRITE_SOURCE. */
static int fill_and_close(int fd, mode_t mode, const struct content *c) {
  int rc = fchmod(fd, mode) != 0 ? WRITE_IO : write_content(fd, c, 1), saved;
  if (rc == WRITE_OK && fsync(fd) != 0) rc = WRITE_IO; /* on disk before the rename shows it */
  saved = errno;
  if (close(fd) != 0 && rc == WRITE_OK) return WRITE_IO;
  errno = saved;
  return rc;
}

/* A temporary beside t->file, filled with the output and closed, into t->tmp (to rename or
 * unlink). Returns 0, or -1 after reporting why not. */
static int write_temporary(struct target *t, const struct content *c) {
  char *tmp = temp_template_beside(t->file);
  int fd, rc;
  if (!tmp) return target_error(t, "out of memory");
  fd = mkstemp(tmp);
  if (fd < 0) {
    cli_error("cannot create a temporary file for %s: %s", quoted(t->path), strerror(errno));
    free(tmp);
    return -1;
  }
  if ((rc = fill_and_close(fd, t->mode, c)) != WRITE_OK) { /* the old file stays as it was */
    int saved = errno;
    unlink(tmp);
    free(tmp);
    return rc == WRITE_SOURCE ? -1 : target_error(t, strerror(saved));
  }
  t->tmp = tmp;
  return 0;
}

/* ---- writing a device in place --------------------------------------------------------------- */

/* Writes and closes t->fd. A device that cannot sync (a FIFO, /dev/null, a terminal) says
 * EINVAL: nothing to wait for there. */
static int write_in_place(struct target *t, const struct content *c) {
  int fd = t->fd, rc = write_content(fd, c, 0), saved;
  if (rc == WRITE_OK && fsync(fd) != 0 && errno != EINVAL) rc = WRITE_IO;
  saved = errno;
  t->fd = -1;
  if (close(fd) != 0 && rc == WRITE_OK) {
    rc = WRITE_IO;
    saved = errno;
  }
  if (rc == WRITE_SOURCE) return -1;
  return rc == WRITE_IO ? target_error(t, strerror(saved)) : 0;
}

/* ---- several outputs together ---------------------------------------------------------------- */

static void release_target(struct target *t) {
  if (t->fd >= 0) close(t->fd);
  if (t->tmp) unlink(t->tmp);
  free(t->tmp);
  free(t->file);
  t->fd = -1;
  t->tmp = t->file = NULL;
}

enum { MAX_OUTPUTS = 4 };

/* The order keeps all-or-nothing as far as devices allow: every path is checked and every device
 * opened first, every regular output completed in its temporary, stdout written, and only then
 * the devices written (the first step that cannot be undone) and the temporaries renamed.
 * n_outputs <= MAX_OUTPUTS. */
static int write_contents(const char *const *paths, const struct content *contents, size_t n_outputs) {
  struct target targets[MAX_OUTPUTS];
  size_t i;
  int rc = 0;
  memset(targets, 0, sizeof targets);
  for (i = 0; i < n_outputs; i++) {
    targets[i].path = paths[i];
    targets[i].fd = -1;
  }
  for (i = 0; i < n_outputs && rc == 0; i++)
    if (paths[i]) rc = resolve_target(&targets[i]);
  for (i = 0; i < n_outputs && rc == 0; i++) {
    size_t j;
    for (j = i + 1; j < n_outputs && rc == 0 && targets[i].file; j++)
      if (targets[j].file && same_file(&targets[i], &targets[j])) {
        cli_error("%s and %s are the same file: each output needs its own", quoted(targets[i].path),
                  quoted(targets[j].path));
        rc = -1;
      }
  }
  for (i = 0; i < n_outputs && rc == 0; i++)
    if (paths[i] && targets[i].fd < 0) rc = write_temporary(&targets[i], &contents[i]);
  for (i = 0; i < n_outputs && rc == 0; i++) {
    int written = paths[i] ? WRITE_OK : write_content(STDOUT_FILENO, &contents[i], 0);
    if (written == WRITE_IO) cli_error("cannot write to standard output: %s", strerror(errno));
    if (written != WRITE_OK) rc = -1;
  }
  for (i = 0; i < n_outputs && rc == 0; i++)
    if (targets[i].fd >= 0) rc = write_in_place(&targets[i], &contents[i]);
  for (i = 0; i < n_outputs && rc == 0; i++) {
    if (!targets[i].tmp) continue;
    if (rename(targets[i].tmp, targets[i].file) != 0) {
      rc = target_error(&targets[i], strerror(errno));
      break;
    }
    free(targets[i].tmp);
    targets[i].tmp = NULL;
  }
  for (i = 0; i < n_outputs; i++) release_target(&targets[i]);
  return rc == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

int write_outputs(const struct output_file *outputs, size_t n_outputs) {
  const char *paths[MAX_OUTPUTS];
  struct content contents[MAX_OUTPUTS];
  size_t i;
  if (n_outputs > MAX_OUTPUTS) {
    cli_error("internal error: too many outputs");
    return EXIT_FAILURE;
  }
  for (i = 0; i < n_outputs; i++) {
    paths[i] = outputs[i].path;
    contents[i].spans = outputs[i].spans;
    contents[i].count = outputs[i].count;
    contents[i].source = NULL;
  }
  return write_contents(paths, contents, n_outputs);
}

int write_output_source(const char *path, const struct byte_span *spans, size_t count,
                        const struct chunk_source *source) {
  struct content content;
  content.spans = spans;
  content.count = count;
  content.source = source;
  return write_contents(&path, &content, 1);
}

int write_output(const char *path, const struct byte_span *spans, size_t count) {
  return write_output_source(path, spans, count, NULL);
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
