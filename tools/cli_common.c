/* cli_common.c - error reporting shared by the posenc tool's modules. */
#include "cli_common.h"

#include <stdarg.h>
#include <stdio.h>

void cli_error(const char *fmt, ...) {
  va_list ap;
  fputs("posenc: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}
