/* cli_common.h - what every part of the posenc command-line tool shares. */
#ifndef POSENC_CLI_COMMON_H
#define POSENC_CLI_COMMON_H

#include <stddef.h>
#include <stdio.h> /* MinGW's __MINGW_PRINTF_FORMAT */

/* Exit statuses: EXIT_SUCCESS, EXIT_FAILURE for runtime errors (I/O, memory, this machine),
 * and EXIT_USAGE when the command line itself is wrong. */
#define EXIT_USAGE 2

/* Bytes to write. An output is a few spans (header, payload) so the payload is never copied. */
struct byte_span {
  const void *data;
  size_t size;
};

/* printf's format checks. MinGW's "printf" archetype is msvcrt's printf, which lacks %zu; its
 * stdio.h names the archetype of the printf it declares (gnu_printf for its C99 one, which C99
 * builds get). */
#if defined(__MINGW_PRINTF_FORMAT)
#  define CLI_PRINTF(fmt_index, first_arg) __attribute__((format(__MINGW_PRINTF_FORMAT, fmt_index, first_arg)))
#elif defined(__GNUC__)
#  define CLI_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#  define CLI_PRINTF(fmt_index, first_arg)
#endif

/* Prints "posenc: <message>" as one line on stderr. Every error is reported exactly once, by
 * the function that detects it; callers only pass the exit status up. */
void cli_error(const char *fmt, ...) CLI_PRINTF(1, 2);

/* cli_error, then returns EXIT_USAGE: for errors in the command line. */
int cli_usage_error(const char *fmt, ...) CLI_PRINTF(1, 2);

/* User text (a path, an option's value, a word of the command line) as a message shows it: in
 * single quotes, control characters as '?', and when longer than 100 bytes only its start
 * and end around "..." with its length in bytes, so that a 5,000-character path or a 100,000-digit
 * number still gives a short one-line message. The result lives in one of a few static buffers
 * used in turn: up to 4 quoted() results may appear in one message. */
const char *quoted(const char *text);

/* Flushes stdout (text written with stdio): EXIT_SUCCESS, or EXIT_FAILURE after saying why it
 * could not be written (stdio keeps a failed write's error until the flush). */
int cli_finish_stdout(void);

/* printf into a new string (release with free); NULL when out of memory. */
char *format_new_string(const char *fmt, ...) CLI_PRINTF(1, 2);

#endif /* POSENC_CLI_COMMON_H */
