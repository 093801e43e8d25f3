/* cli_parse.h - strict parsing of command-line values: the whole string or nothing. */
#ifndef POSENC_CLI_PARSE_H
#define POSENC_CLI_PARSE_H

#include <stddef.h>
#include <stdint.h>

enum parse_result {
  PARSE_OK = 0,
  PARSE_SYNTAX,    /* not a plain decimal number (spaces, '+', hex, "inf", trailing text, ...) */
  PARSE_NEGATIVE,  /* a count below zero */
  PARSE_RANGE      /* does not fit the type, or overflows / underflows a double */
};

/* A count: decimal digits only. Zero is accepted; callers that need >= 1 say so. */
enum parse_result parse_size(const char *text, size_t *out);

/* A signed decimal integer with |value| <= INT32_MAX, so that -value is a position too. */
enum parse_result parse_int32(const char *text, int32_t *out);

/* A finite decimal floating-point number (digits, sign, '.', exponent). */
enum parse_result parse_double(const char *text, double *out);

/* Why a value was rejected, phrased to follow "--option 'text': ". */
const char *parse_result_text(enum parse_result result);

/* Index of text in names[0..count), or -1. */
int lookup_name(const char *const *names, size_t count, const char *text);

/* NULL if text can name an array in both C and C++, else why not: not an identifier, a keyword,
 * or reserved to the implementation (leading underscore + capital, or a double underscore). */
const char *c_identifier_problem(const char *text);

#endif /* POSENC_CLI_PARSE_H */
