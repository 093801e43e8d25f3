/* cli_parse.c - strict parsing of command-line values. strtoll and strtod alone accept leading
 * spaces, '+', hex and "inf", and silently stop at trailing text: every value is checked first
 * against the plain decimal syntax and must be consumed to its end. */
#include "cli_parse.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* [-]digits, nothing else. */
static int is_decimal_integer(const char *text) {
  const char *p = text + (text[0] == '-');
  if (*p == '\0') return 0;
  for (; *p; p++)
    if (!isdigit((unsigned char)*p)) return 0;
  return 1;
}

static enum parse_result parse_long_long(const char *text, long long *out) {
  char *end;
  long long value;
  if (!is_decimal_integer(text)) return PARSE_SYNTAX;
  errno = 0;
  value = strtoll(text, &end, 10);
  if (errno == ERANGE) return PARSE_RANGE;
  if (*end != '\0') return PARSE_SYNTAX;
  *out = value;
  return PARSE_OK;
}

enum parse_result parse_size(const char *text, size_t *out) {
  long long value;
  enum parse_result result = parse_long_long(text, &value);
  if (result != PARSE_OK) return result;
  if (value < 0) return PARSE_NEGATIVE;
  if ((unsigned long long)value > SIZE_MAX) return PARSE_RANGE;
  *out = (size_t)value;
  return PARSE_OK;
}

enum parse_result parse_int32(const char *text, int32_t *out) {
  long long value;
  enum parse_result result = parse_long_long(text, &value);
  if (result != PARSE_OK) return result;
  if (value > INT32_MAX || value < -(long long)INT32_MAX) return PARSE_RANGE;
  *out = (int32_t)value;
  return PARSE_OK;
}

/* [-+]digits[.digits][e[-+]digits] with at least one digit in the mantissa. */
static int is_decimal_real(const char *text) {
  const char *p = text;
  int mantissa_digits = 0;
  if (*p == '-' || *p == '+') p++;
  for (; isdigit((unsigned char)*p); p++) mantissa_digits++;
  if (*p == '.')
    for (p++; isdigit((unsigned char)*p); p++) mantissa_digits++;
  if (mantissa_digits == 0) return 0;
  if (*p == 'e' || *p == 'E') {
    p++;
    if (*p == '-' || *p == '+') p++;
    if (!isdigit((unsigned char)*p)) return 0;
    while (isdigit((unsigned char)*p)) p++;
  }
  return *p == '\0';
}

enum parse_result parse_double(const char *text, double *out) {
  char *end;
  double value;
  if (!is_decimal_real(text)) return PARSE_SYNTAX;
  errno = 0;
  value = strtod(text, &end);
  if (*end != '\0') return PARSE_SYNTAX;
  if (errno == ERANGE || !isfinite(value)) return PARSE_RANGE; /* overflow or underflow */
  *out = value;
  return PARSE_OK;
}

const char *parse_result_text(enum parse_result result) {
  switch (result) {
    case PARSE_OK: return "ok";
    case PARSE_SYNTAX: return "not a plain decimal number";
    case PARSE_NEGATIVE: return "must not be negative";
    case PARSE_RANGE: return "out of range";
  }
  return "invalid";
}

int lookup_name(const char *const *names, size_t count, const char *text) {
  size_t i;
  for (i = 0; i < count; i++)
    if (strcmp(names[i], text) == 0) return (int)i;
  return -1;
}

/* Keywords of C99 and of C++ up to C++20 (the header must compile as both). The C keywords
 * spelled _Xxx are caught by the reserved-name rule instead. */
static const char *const keywords[] = {
  "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
  "case", "catch", "char", "char16_t", "char32_t", "char8_t", "class", "co_await", "co_return",
  "co_yield", "compl", "concept", "const", "const_cast", "consteval", "constexpr", "constinit",
  "continue", "decltype", "default", "delete", "do", "double", "dynamic_cast", "else", "enum",
  "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if", "inline",
  "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr",
  "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
  "requires", "restrict", "return", "short", "signed", "sizeof", "static", "static_assert",
  "static_cast", "struct", "switch", "template", "this", "thread_local", "throw", "true", "try",
  "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile",
  "wchar_t", "while", "xor", "xor_eq"};

static int is_reserved_identifier(const char *text) {
  return (text[0] == '_' && isupper((unsigned char)text[1])) || strstr(text, "__") != NULL;
}

const char *c_identifier_problem(const char *text) {
  const char *p = text;
  int valid = isalpha((unsigned char)*p) || *p == '_';
  for (p++; valid && *p; p++) valid = isalnum((unsigned char)*p) || *p == '_';
  if (!valid) return "not a C identifier (letters, digits and '_', not starting with a digit)";
  if (lookup_name(keywords, sizeof keywords / sizeof keywords[0], text) >= 0)
    return "a C or C++ keyword";
  if (is_reserved_identifier(text)) return "reserved to the C implementation ('_X...' or '__')";
  return NULL;
}
