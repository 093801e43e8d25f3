/* replay.c - a main() for a fuzz target without libFuzzer (any compiler, cross builds under qemu):
 * feeds every file of the given corpus directories (or the given files) to LLVMFuzzerTestOneInput,
 * in name order. A contract violation aborts, so a finished run means every input passed. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#if !defined(_WIN32)
#  include <dirent.h>
#endif

#include "fuzz.h"
#if defined(_WIN32) /* FindFirstFile: MSVC's C library has no <dirent.h> */
#  define WIN32_LEAN_AND_MEAN
#  include <windows.h> /* after posenc.h: its "near" macro would empty a field's name */
#endif

#if !defined(S_ISDIR)
#  define S_ISDIR(m) (((m) & _S_IFMT) == _S_IFDIR) /* MSVC's <sys/stat.h> has only _S_IFDIR */
#endif

/* Feeds one file; returns 0 if it cannot be read. */
static int replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  unsigned char *buf = NULL;
  long len;
  int ok = 0;
  if (!f) return 0;
  if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
      (buf = (unsigned char *)malloc(len ? (size_t)len : 1)) &&
      fread(buf, 1, (size_t)len, f) == (size_t)len) {
    LLVMFuzzerTestOneInput(buf, (size_t)len); /* exactly len bytes, as libFuzzer gives them */
    ok = 1;
  }
  free(buf);
  fclose(f);
  return ok;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Appends "dir/name" to *names (n of them, room for *cap). */
static void add_name(char ***names, size_t *n, size_t *cap, const char *dir, const char *name) {
  if (*n == *cap && !(*names = (char **)realloc(*names, (*cap = *cap ? 2 * *cap : 256) * sizeof **names))) abort();
  if (!((*names)[*n] = (char *)malloc(strlen(dir) + strlen(name) + 2))) abort();
  sprintf((*names)[(*n)++], "%s/%s", dir, name);
}

/* The names in dir but those starting with '.', into *names; -1 if it cannot be listed. */
static int list_dir(const char *dir, char ***names, size_t *n) {
  size_t cap = 0;
#if defined(_WIN32)
  WIN32_FIND_DATAA e;
  HANDLE h;
  char *pattern = (char *)malloc(strlen(dir) + 3);
  if (!pattern) abort();
  sprintf(pattern, "%s/*", dir);
  h = FindFirstFileA(pattern, &e);
  free(pattern);
  if (h == INVALID_HANDLE_VALUE) return -1;
  do
    if (e.cFileName[0] != '.') add_name(names, n, &cap, dir, e.cFileName);
  while (FindNextFileA(h, &e));
  FindClose(h);
#else
  DIR *d = opendir(dir);
  struct dirent *e;
  if (!d) return -1;
  while ((e = readdir(d)) != NULL)
    if (e->d_name[0] != '.') add_name(names, n, &cap, dir, e->d_name);
  closedir(d);
#endif
  return 0;
}

/* Feeds every regular file of dir in name order; returns how many, or -1 on a read error. */
static long replay_dir(const char *dir) {
  char **names = NULL;
  size_t n = 0, i;
  long done = 0;
  if (list_dir(dir, &names, &n) != 0) return -1;
  qsort(names, n, sizeof *names, by_name);
  for (i = 0; i < n; i++) {
    if (done >= 0) done = replay_file(names[i]) ? done + 1 : -1;
    if (done < 0) fprintf(stderr, "replay: cannot read %s\n", names[i]);
    free(names[i]);
  }
  free(names);
  return done;
}

int main(int argc, char **argv) {
  long total = 0;
  int i;
  bk_report(stdout); /* the backends compared, and those not */
  for (i = 1; i < argc; i++) {
    struct stat st;
    long n = stat(argv[i], &st) != 0 ? -1
             : S_ISDIR(st.st_mode)   ? replay_dir(argv[i])
             : replay_file(argv[i])  ? 1
                                     : -1;
    if (n < 0) {
      fprintf(stderr, "replay: cannot read %s\n", argv[i]);
      printf("%ld passed, 1 failed\n", total);
      return 1;
    }
    printf("%s: %ld inputs\n", argv[i], n);
    total += n;
  }
  /* no input at all is a wrong path, not a pass */
  printf("%ld passed, %d failed\n", total, total == 0);
  return total == 0;
}
