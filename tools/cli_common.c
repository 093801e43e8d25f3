/* cli_common.c - error reporting shared by the posenc tool's modules. */
#include "cli_common.h"

#include <stdarg.h>
#include <stdio.h>

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
