/* cli_common.h - what every part of the posenc command-line tool shares. */
#ifndef POSENC_CLI_COMMON_H
#define POSENC_CLI_COMMON_H

#include <stddef.h>

/* Exit statuses: EXIT_SUCCESS, EXIT_FAILURE for runtime errors (I/O, memory, this machine),
 * and EXIT_USAGE when the command line itself is wrong. */
#define EXIT_USAGE 2

/* Bytes to write. An output is a few spans (header, payload) so the payload is never copied. */
struct byte_span {
  const void *data;
  size_t size;
};

#if defined(__GNUC__)
#  define CLI_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#  define CLI_PRINTF(fmt_index, first_arg)
#endif

/* Prints "posenc: <message>" as one line on stderr. Every error is reported exactly once, by
 * the function that detects it; callers only pass the exit status up. */
void cli_error(const char *fmt, ...) CLI_PRINTF(1, 2);

/* cli_error, then returns EXIT_USAGE: for errors in the command line. */
int cli_usage_error(const char *fmt, ...) CLI_PRINTF(1, 2);

/* printf into a new string (release with free); NULL when out of memory. */
char *format_new_string(const char *fmt, ...) CLI_PRINTF(1, 2);

#endif /* POSENC_CLI_COMMON_H */
