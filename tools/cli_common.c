/* cli_common.c - error reporting and strings shared by the posenc tool's modules. */
#include "cli_common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static void report(const char *fmt, va_list ap) {
  fputs("posenc: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
}

void cli_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  report(fmt, ap);
  va_end(ap);
}

int cli_usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  report(fmt, ap);
  va_end(ap);
  return EXIT_USAGE;
}

char *format_new_string(const char *fmt, ...) {
  va_list ap;
  char *text;
  int len;
  va_start(ap, fmt);
  len = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  text = len < 0 ? NULL : malloc((size_t)len + 1);
  if (!text) return NULL;
  va_start(ap, fmt);
  vsnprintf(text, (size_t)len + 1, fmt, ap);
  va_end(ap);
  return text;
}
