/* cli_common.c - error reporting and strings shared by the posenc tool's modules. */
#include "cli_common.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

enum { QUOTED_SLOTS = 4, QUOTED_HEAD = 60, QUOTED_TAIL = 24, QUOTED_WHOLE = 100 };

/* n bytes of text, control characters (a newline would split the message) as '?'. */
static char *copy_printable(char *out, const char *text, size_t n) {
  size_t i;
  for (i = 0; i < n; i++) {
    unsigned char c = (unsigned char)text[i];
    *out++ = c < 0x20 || c == 0x7f ? '?' : (char)c;
  }
  return out;
}

/* Moves a cut at text[at] back to the start of a UTF-8 sequence, so no character is split. */
static size_t utf8_boundary(const char *text, size_t at) {
  while (at > 0 && ((unsigned char)text[at] & 0xc0) == 0x80) at--;
  return at;
}

const char *quoted(const char *text) {
  static char slots[QUOTED_SLOTS][QUOTED_WHOLE + 48];
  static unsigned next;
  char *buf = slots[next++ % QUOTED_SLOTS], *p = buf;
  size_t len = strlen(text);
  *p++ = '\'';
  if (len <= QUOTED_WHOLE) {
    p = copy_printable(p, text, len);
    *p++ = '\'';
    *p = '\0';
    return buf;
  }
  {
    size_t head = utf8_boundary(text, QUOTED_HEAD), tail = utf8_boundary(text, len - QUOTED_TAIL);
    p = copy_printable(p, text, head);
    memcpy(p, "...", 3);
    p = copy_printable(p + 3, text + tail, len - tail);
    snprintf(p, sizeof slots[0] - (size_t)(p - buf), "' (%zu bytes)", len);
  }
  return buf;
}

int cli_finish_stdout(void) {
  int flush_failed;
  errno = 0;
  flush_failed = fflush(stdout) != 0;
  if (!flush_failed && !ferror(stdout)) return EXIT_SUCCESS;
  if (flush_failed && errno) cli_error("cannot write to standard output: %s", strerror(errno));
  else cli_error("cannot write to standard output");
  return EXIT_FAILURE;
}
