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
 * without a reader fails the command before any output is touched.
 *
 * Windows (the _WIN32 parts below) keeps the same rules with its own calls: the temporary is
 * flushed with _commit and moved over the file with MoveFileEx(MOVEFILE_REPLACE_EXISTING), which
 * replaces an existing file (rename() there does not); a character device (NUL, CON, COM1) or a
 * named pipe (GetFileType) is written in place, without a flush (FlushFileBuffers on a pipe waits
 * for the reader to take everything); a symbolic link is followed to its final path
 * (GetFinalPathNameByHandle). What differs: there are no permission bits to keep (a replaced file
 * gets the attributes and ACL a new file in its directory gets), a read-only file cannot be
 * replaced (MoveFileEx refuses it, as Windows' own tools do), and paths are in the ANSI code page
 * (the narrow argv and the ...A calls). stdout and stderr are switched to binary mode (cli_stdio_binary),
 * so that a table on stdout is the same bytes as on POSIX. */
#if !defined(_WIN32)
#  define _XOPEN_SOURCE 700 /* POSIX.1-2008 with realpath (glibc hides it from plain _POSIX_C_SOURCE) */
#  if defined(__linux__)
#    define _GNU_SOURCE /* sync_file_range */
#  endif
#endif

#include "cli_write.h" /* posenc.h before <windows.h>, whose "near" macro would empty a field's name */
#include "cli_format.h"

#if defined(_WIN32)
#  define WIN32_LEAN_AND_MEAN
#  include <windows.h>
#  include <fcntl.h>
#  include <io.h>
#  include <sys/stat.h>
#else
#  include <fcntl.h>
#  include <sys/stat.h>
#  include <unistd.h>
#endif
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The few descriptor calls both systems have, by their Windows CRT names there. Windows' _write
 * takes an unsigned count and returns an int: writes go in pieces of at most 1 GiB. */
#if defined(_WIN32)
#  define fd_write(fd, data, size) _write(fd, data, (unsigned)(size))
#  define fd_close _close
#  define fd_sync _commit
#  define STDOUT_FD 1
#else
#  define fd_write write
#  define fd_close close
#  define fd_sync fsync
#  define STDOUT_FD STDOUT_FILENO
#endif
#define WRITE_PIECE ((size_t)1 << 30)

void cli_stdio_binary(void) {
#if defined(_WIN32)
  (void)_setmode(_fileno(stdout), _O_BINARY);
  (void)_setmode(_fileno(stderr), _O_BINARY);
#endif
}

/* write() may write less than asked (pipes, signals): loop until every byte is out.
 * Returns 0, or -1 with errno set. */
static int write_all(int fd, const unsigned char *data, size_t size) {
  while (size > 0) {
    long n = (long)fd_write(fd, data, size < WRITE_PIECE ? size : WRITE_PIECE);
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

static void start_writeback(int fd, uint64_t offset, uint64_t length) {
#if defined(SYNC_FILE_RANGE_WRITE)
  (void)sync_file_range(fd, (off_t)offset, (off_t)length, SYNC_FILE_RANGE_WRITE); /* a hint: fsync checks */
#else
  (void)fd; (void)offset; (void)length;
#endif
}

/* Writes the spans, then every chunk of the source as it is produced: the whole output is never
 * held in memory at once. early_writeback: start writing the data back to disk as it goes. */
static int write_content(int fd, const struct content *c, int early_writeback) {
  uint64_t done = 0, synced = 0;
  size_t i;
  for (i = 0; i < c->count; i++) {
    if (write_all(fd, (const unsigned char *)c->spans[i].data, c->spans[i].size) != 0) return WRITE_IO;
    done += c->spans[i].size;
  }
  for (i = 0; c->source && i < c->source->chunks; i++) {
    struct byte_span chunk;
    if (c->source->next(c->source->ctx, i, &chunk) != 0) return WRITE_SOURCE;
    if (write_all(fd, (const unsigned char *)chunk.data, chunk.size) != 0) return WRITE_IO;
    done += chunk.size;
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
#if !defined(_WIN32)
  mode_t mode;       /* a replaced file's permission bits */
#endif
  int fd;            /* a device, FIFO or socket open for writing in place; -1: replaced */
  char *tmp;         /* the filled temporary beside file, until it is renamed over it */
};

static int target_error(const struct target *t, const char *why) {
  cli_error("cannot write %s: %s", quoted(t->path), why);
  return -1;
}

static int copy_path(struct target *t) {
  return (t->file = strdup(t->path)) ? 0 : target_error(t, "out of memory");
}

#if !defined(_WIN32)
/* ---- what the path names (POSIX: lstat, realpath, open flags, fcntl) ------------------------- */

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

/* The temporary, created 0600 under a name no other file has; -1 with errno. */
static int open_temporary(char *tmpl) { return mkstemp(tmpl); }

/* A new file gets the mode open() would have given it; a replaced one keeps its own. */
static int set_temporary_mode(int fd, const struct target *t) { return fchmod(fd, t->mode); }

/* A device that cannot sync (a FIFO, /dev/null, a terminal) says EINVAL: nothing to wait for. */
static int sync_in_place(int fd) { return fsync(fd) != 0 && errno != EINVAL ? -1 : 0; }

/* Moves the filled temporary over t->file: 0, or -1 after reporting why not. */
static int replace_file(const struct target *t) {
  return rename(t->tmp, t->file) == 0 ? 0 : target_error(t, strerror(errno));
}

#else
/* ---- what the path names (Windows: CreateFile, GetFileType, GetFinalPathNameByHandle) -------- */

/* The system's text for a GetLastError() code, without its final period and line break. */
static const char *win_error_text(DWORD code) {
  static char text[256];
  DWORD n = FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, code, 0, text,
                           (DWORD)sizeof text, NULL);
  while (n > 0 && strchr(" .\r\n", text[n - 1])) n--;
  if (n == 0) snprintf(text, sizeof text, "Windows error %lu", (unsigned long)code);
  else text[n] = '\0';
  return text;
}

/* The final path of what the open handle h names (a symbolic link followed), into t->file:
 * GetFinalPathNameByHandle's "\\?\C:\dir\name" without its "\\?\" (and "\\?\UNC\host\share\..."
 * as "\\host\share\..."), so that the temporary's name beside it is an ordinary path. */
static int follow_link(struct target *t, HANDLE h) {
  char buf[4096];
  const char *p = buf;
  DWORD n = GetFinalPathNameByHandleA(h, buf, (DWORD)sizeof buf, FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
  if (n == 0 || n >= sizeof buf) return target_error(t, win_error_text(GetLastError()));
  if (strncmp(p, "\\\\?\\UNC\\", 8) == 0) {
    p += 6;
    buf[6] = '\\'; /* "\\?\UNC\host" -> "\\host" */
  } else if (strncmp(p, "\\\\?\\", 4) == 0) {
    p += 4;
  }
  return (t->file = strdup(p)) ? 0 : target_error(t, "out of memory");
}

/* Decides how t->path is written (see the top of this file). Opening it for writing (without
 * truncating it) tells a device or pipe from a file; a file that cannot be opened for writing
 * (read-only, or in use without sharing) is left to the final move to accept or refuse. Returns
 * 0, or -1 after reporting why it cannot be written. */
static int resolve_target(struct target *t) {
  DWORD attrs = GetFileAttributesA(t->path), err;
  HANDLE h;
  int rc;
  if (attrs != INVALID_FILE_ATTRIBUTES && (attrs & FILE_ATTRIBUTE_DIRECTORY))
    return target_error(t, "it is a directory");
  h = CreateFileA(t->path, GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL, OPEN_EXISTING,
                  FILE_ATTRIBUTE_NORMAL, NULL);
  if (h == INVALID_HANDLE_VALUE) {
    err = GetLastError();
    if (err == ERROR_FILE_NOT_FOUND || err == ERROR_PATH_NOT_FOUND) {
      if (attrs != INVALID_FILE_ATTRIBUTES) /* the name exists: a link to nothing */
        return target_error(t, "a dangling symbolic link (what it names does not exist)");
      return copy_path(t); /* nothing there yet; a missing directory fails at the temporary */
    }
    if (attrs != INVALID_FILE_ATTRIBUTES && !(attrs & FILE_ATTRIBUTE_REPARSE_POINT)) return copy_path(t);
    return target_error(t, win_error_text(err));
  }
  switch (GetFileType(h)) {
    case FILE_TYPE_DISK:
      break;
    case FILE_TYPE_CHAR:
    case FILE_TYPE_PIPE:
      if ((t->fd = _open_osfhandle((intptr_t)h, _O_WRONLY | _O_BINARY)) < 0) {
        CloseHandle(h);
        return target_error(t, strerror(errno));
      }
      return copy_path(t);
    default:
      CloseHandle(h);
      return target_error(t, "not a file, a device or a pipe");
  }
  rc = (attrs & FILE_ATTRIBUTE_REPARSE_POINT) ? follow_link(t, h) : copy_path(t);
  CloseHandle(h);
  return rc;
}

/* The volume and file index of an existing file: 1, or 0 if there is none. */
static int file_id(const char *path, BY_HANDLE_FILE_INFORMATION *info) {
  HANDLE h = CreateFileA(path, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
                         FILE_FLAG_BACKUP_SEMANTICS, NULL);
  int ok;
  if (h == INVALID_HANDLE_VALUE) return 0;
  ok = GetFileInformationByHandle(h, info) != 0;
  CloseHandle(h);
  return ok;
}

/* 1 if two resolved targets are one file under two names: an existing file is known by its volume
 * and file index, a new one by its full path (Windows' names are case-insensitive). */
static int same_file(const struct target *a, const struct target *b) {
  BY_HANDLE_FILE_INFORMATION ia, ib;
  char fa[4096], fb[4096];
  int ea = !file_id(a->file, &ia), eb = !file_id(b->file, &ib);
  DWORD na, nb;
  if (!ea && !eb)
    return ia.dwVolumeSerialNumber == ib.dwVolumeSerialNumber && ia.nFileIndexHigh == ib.nFileIndexHigh &&
           ia.nFileIndexLow == ib.nFileIndexLow;
  if (!ea || !eb) return 0;
  na = GetFullPathNameA(a->file, (DWORD)sizeof fa, fa, NULL);
  nb = GetFullPathNameA(b->file, (DWORD)sizeof fb, fb, NULL);
  return na > 0 && na < sizeof fa && nb > 0 && nb < sizeof fb && lstrcmpiA(fa, fb) == 0;
}

/* mkstemp's part: tmpl's last six characters made into a name no file has, created exclusively
 * (binary, not inherited by child processes); -1 with errno. */
static int open_temporary(char *tmpl) {
  static const char letters[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  static unsigned long counter;
  char *x = tmpl + strlen(tmpl) - 6;
  int attempt, i, fd = -1;
  for (attempt = 0; attempt < 100; attempt++) {
    unsigned long v = (unsigned long)GetCurrentProcessId() * 2654435761ul ^ GetTickCount() ^ counter++ * 40503ul;
    for (i = 0; i < 6; i++, v /= 36) x[i] = letters[v % 36];
    fd = _open(tmpl, _O_WRONLY | _O_CREAT | _O_EXCL | _O_BINARY | _O_NOINHERIT, _S_IREAD | _S_IWRITE);
    if (fd >= 0 || errno != EEXIST) break;
  }
  return fd;
}

/* No permission bits to give the temporary. */
static int set_temporary_mode(int fd, const struct target *t) { (void)fd; (void)t; return 0; }

/* Devices and pipes are not flushed: FlushFileBuffers on a pipe waits until the reader has read
 * everything, and NUL or a console refuse it. */
static int sync_in_place(int fd) { (void)fd; return 0; }

/* Moves the filled temporary over t->file (rename() does not replace an existing file here):
 * 0, or -1 after reporting why not. */
static int replace_file(const struct target *t) {
  if (MoveFileExA(t->tmp, t->file, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)) return 0;
  return target_error(t, win_error_text(GetLastError()));
}
#endif

/* ---- replacing a regular file ---------------------------------------------------------------- */

/* The last directory separator in path, or NULL: '/', and on Windows '\\' and a drive's ':'. */
static const char *last_separator(const char *path) {
  const char *p, *last = NULL;
  for (p = path; *p; p++)
#if defined(_WIN32)
    if (*p == '/' || *p == '\\' || *p == ':') last = p;
#else
    if (*p == '/') last = p;
#endif
  return last;
}

enum { MAX_OUTPUTS = 4 };

/* ---- temporaries removed when a signal ends the program -------------------------------------- */

/* The temporaries that exist now (created, not yet renamed or removed). A signal that ends the
 * program (Ctrl-C, kill, a closed terminal) removes them first: an interrupted command leaves no
 * temporary beside its outputs, which for a streamed bias block may hold gigabytes. Set after
 * mkstemp has created the file (before, the name may still change), cleared after the rename or
 * the removal (a removal of a name already renamed fails harmlessly). */
static char *volatile live_temporaries[MAX_OUTPUTS];

/* POSIX only: Windows runs a Ctrl-C handler on a thread of its own while the temporary is still
 * open, and an open file cannot be removed there (the C runtime opens it without
 * FILE_SHARE_DELETE). */
#if !defined(_WIN32)
/* Installed with SA_RESETHAND and SA_NODEFER: the raise then dies of the signal at once, by its
 * default action, as without the handler. */
static void remove_temporaries_then_die(int sig) {
  size_t i;
  for (i = 0; i < MAX_OUTPUTS; i++) {
    char *tmp = live_temporaries[i];
    if (tmp) unlink(tmp); /* async-signal-safe */
  }
  raise(sig);
}
#endif

/* The handler for the signals sent to end a program, whose default action ends it: Ctrl-C, kill,
 * a closed terminal, a reader that closed stdout's pipe, RLIMIT_FSIZE and RLIMIT_CPU, timers,
 * the user signals. A signal the caller ignores or handles (nohup's SIGHUP, a background job's
 * SIGINT, a profiler's SIGPROF) is left as it is: each is asked first, not replaced and put back. */
static void watch_ending_signals(void) {
#if !defined(_WIN32)
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ, SIGXCPU, SIGALRM, SIGUSR1,
                             SIGUSR2,
#  if defined(SIGVTALRM)
                             SIGVTALRM,
#  endif
#  if defined(SIGPROF)
                             SIGPROF,
#  endif
  };
  static int watching;
  struct sigaction old, act;
  size_t i;
  if (watching) return;
  watching = 1;
  memset(&act, 0, sizeof act);
  act.sa_handler = remove_temporaries_then_die;
  sigemptyset(&act.sa_mask);
  act.sa_flags = SA_RESETHAND | SA_NODEFER;
  for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
    if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL) sigaction(sigs[i], &act, NULL);
#endif
}

static void track_temporary(char *tmp, int live) {
  size_t i;
  for (i = 0; i < MAX_OUTPUTS; i++)
    if (live ? live_temporaries[i] == NULL : live_temporaries[i] == tmp) {
      live_temporaries[i] = live ? tmp : NULL;
      return;
    }
}

/* "dir/.posenc-XXXXXX" for "dir/name": the same directory, so the rename cannot cross file
 * systems, and a hidden name that cannot exceed NAME_MAX however long "name" is. */
static char *temp_template_beside(const char *path) {
  static const char suffix[] = ".posenc-XXXXXX";
  const char *slash = last_separator(path);
  size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
  char *tmpl = malloc(dir_len + sizeof suffix);
  if (!tmpl) return NULL;
  memcpy(tmpl, path, dir_len);
  memcpy(tmpl + dir_len, suffix, sizeof suffix);
  return tmpl;
}

/* Fills the open temporary and closes it. Returns WRITE_OK, or WRITE_IO with errno of the first
 * failure, or WRITE_SOURCE. */
static int fill_and_close(int fd, const struct target *t, const struct content *c) {
  int rc = set_temporary_mode(fd, t) != 0 ? WRITE_IO : write_content(fd, c, 1), saved;
  if (rc == WRITE_OK && fd_sync(fd) != 0) rc = WRITE_IO; /* on disk before the rename shows it */
  saved = errno;
  if (fd_close(fd) != 0 && rc == WRITE_OK) return WRITE_IO;
  errno = saved;
  return rc;
}

/* A temporary beside t->file, filled with the output and closed, into t->tmp (to rename or
 * remove). Returns 0, or -1 after reporting why not. */
static int write_temporary(struct target *t, const struct content *c) {
  char *tmp = temp_template_beside(t->file);
  int fd, rc;
  if (!tmp) return target_error(t, "out of memory");
  watch_ending_signals();
  fd = open_temporary(tmp);
  if (fd < 0) {
    cli_error("cannot create a temporary file for %s: %s", quoted(t->path), strerror(errno));
    free(tmp);
    return -1;
  }
  track_temporary(tmp, 1);
  if ((rc = fill_and_close(fd, t, c)) != WRITE_OK) { /* the old file stays as it was */
    int saved = errno;
    remove(tmp);
    track_temporary(tmp, 0);
    free(tmp);
    return rc == WRITE_SOURCE ? -1 : target_error(t, strerror(saved));
  }
  t->tmp = tmp;
  return 0;
}

/* ---- writing a device in place --------------------------------------------------------------- */

/* Writes and closes t->fd. */
static int write_in_place(struct target *t, const struct content *c) {
  int fd = t->fd, rc = write_content(fd, c, 0), saved;
  if (rc == WRITE_OK && sync_in_place(fd) != 0) rc = WRITE_IO;
  saved = errno;
  t->fd = -1;
  if (fd_close(fd) != 0 && rc == WRITE_OK) {
    rc = WRITE_IO;
    saved = errno;
  }
  if (rc == WRITE_SOURCE) return -1;
  return rc == WRITE_IO ? target_error(t, strerror(saved)) : 0;
}

/* ---- several outputs together ---------------------------------------------------------------- */

static void release_target(struct target *t) {
  if (t->fd >= 0) fd_close(t->fd);
  if (t->tmp) {
    remove(t->tmp);
    track_temporary(t->tmp, 0);
  }
  free(t->tmp);
  free(t->file);
  t->fd = -1;
  t->tmp = t->file = NULL;
}

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
    int written = paths[i] ? WRITE_OK : write_content(STDOUT_FD, &contents[i], 0);
    if (written == WRITE_IO) cli_error("cannot write to standard output: %s", strerror(errno));
    if (written != WRITE_OK) rc = -1;
  }
  for (i = 0; i < n_outputs && rc == 0; i++)
    if (targets[i].fd >= 0) rc = write_in_place(&targets[i], &contents[i]);
  for (i = 0; i < n_outputs && rc == 0; i++) {
    if (!targets[i].tmp) continue;
    if ((rc = replace_file(&targets[i])) != 0) break;
    track_temporary(targets[i].tmp, 0);
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
