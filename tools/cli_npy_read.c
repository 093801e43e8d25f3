/* cli_npy_read.c - strict .npy parsing (see cli_npy_read.h). Written to be fuzzed: every read
 * is bounds-checked against the cursor's end, and all size arithmetic is checked for overflow. */
#include "cli_npy_read.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const struct {
  const char *descr;
  enum npy_dtype dtype;
  size_t item_size;
} known_dtypes[] = {
  {"<f2", NPY_DTYPE_F2, 2}, {"<f4", NPY_DTYPE_F4, 4}, {"<f8", NPY_DTYPE_F8, 8},
  {"<i4", NPY_DTYPE_I4, 4}, {"<i8", NPY_DTYPE_I8, 8},
};

const char *npy_dtype_descr(enum npy_dtype dtype) {
  size_t i;
  for (i = 0; i < sizeof known_dtypes / sizeof known_dtypes[0]; i++)
    if (known_dtypes[i].dtype == dtype) return known_dtypes[i].descr;
  return "?";
}

/* ---- errors ------------------------------------------------------------------------------------ */

struct npy_error {
  char *text;
  size_t size;
};

static int fail(struct npy_error *err, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 2, 3)))
#endif
  ;
static int fail(struct npy_error *err, const char *fmt, ...) {
  va_list ap;
  if (err->size == 0) return 0;
  va_start(ap, fmt);
  vsnprintf(err->text, err->size, fmt, ap);
  va_end(ap);
  return 0;
}

/* ---- the header dict ------------------------------------------------------------------------------
 * A cursor over the header text [p, end). Only the literal forms NumPy writes are accepted. */

struct cursor {
  const unsigned char *p, *end;
};

static int is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

static void skip_space(struct cursor *c) {
  while (c->p < c->end && is_space(*c->p)) c->p++;
}

/* After skipping whitespace: consumes ch if it is next. */
static int take_char(struct cursor *c, unsigned char ch) {
  skip_space(c);
  if (c->p < c->end && *c->p == ch) {
    c->p++;
    return 1;
  }
  return 0;
}

static int take_word(struct cursor *c, const char *word) {
  size_t n = strlen(word);
  skip_space(c);
  if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0) return 0;
  if ((size_t)(c->end - c->p) > n && (c->p[n] == '_' || is_digit(c->p[n]) ||
                                        ((c->p[n] | 0x20) >= 'a' && (c->p[n] | 0x20) <= 'z')))
    return 0; /* "Falsey" is not False */
  c->p += n;
  return 1;
}

/* A quoted string without escapes: 'abc' or "abc". *s and *n point into the header. */
static int take_string(struct cursor *c, const unsigned char **s, size_t *n, struct npy_error *err) {
  unsigned char quote;
  const unsigned char *start;
  skip_space(c);
  if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
    return fail(err, "malformed header: expected a quoted string");
  quote = *c->p++;
  start = c->p;
  while (c->p < c->end && *c->p != quote) {
    if (*c->p == '\\' || *c->p < 0x20 || *c->p >= 0x7f)
      return fail(err, "malformed header: unsupported character in a string");
    c->p++;
  }
  if (c->p >= c->end) return fail(err, "malformed header: unterminated string");
  *s = start;
  *n = (size_t)(c->p - start);
  c->p++;
  return 1;
}

static int string_is(const unsigned char *s, size_t n, const char *text) {
  return n == strlen(text) && memcmp(s, text, n) == 0;
}

/* A non-negative decimal integer as Python writes it (no sign, no leading zeros, no '_'). */
static int take_size(struct cursor *c, size_t *out, struct npy_error *err) {
  size_t value = 0;
  const unsigned char *start;
  skip_space(c);
  start = c->p;
  while (c->p < c->end && is_digit(*c->p)) {
    size_t digit = (size_t)(*c->p - '0');
    if (value > (SIZE_MAX - digit) / 10) return fail(err, "shape dimension too large");
    value = value * 10 + digit;
    c->p++;
  }
  if (c->p == start) return fail(err, "malformed header: shape must be a tuple of integers");
  if (c->p - start > 1 && *start == '0')
    return fail(err, "malformed header: integer with a leading zero");
  *out = value;
  return 1;
}

/* (), (n,), (a, b), (a, b,): a Python tuple; "(n)" is an int in Python, so it is refused. */
static int take_shape(struct cursor *c, struct npy_info *info, struct npy_error *err) {
  info->ndim = 0;
  if (!take_char(c, '(')) return fail(err, "malformed header: shape must be a tuple");
  if (take_char(c, ')')) return 1;
  for (;;) {
    if (info->ndim == NPY_MAX_DIMS) return fail(err, "shape has more than %d dimensions", NPY_MAX_DIMS);
    if (!take_size(c, &info->shape[info->ndim++], err)) return 0;
    if (take_char(c, ')')) {
      if (info->ndim == 1) return fail(err, "malformed header: shape must be a tuple, as '(n,)'");
      return 1;
    }
    if (!take_char(c, ',')) return fail(err, "malformed header: expected ',' or ')' in shape");
    if (take_char(c, ')')) return 1;
  }
}

static int take_descr(struct cursor *c, struct npy_info *info, struct npy_error *err) {
  const unsigned char *s;
  size_t n, i;
  skip_space(c);
  if (c->p < c->end && (*c->p == '[' || *c->p == '('))
    return fail(err, "structured dtypes are not supported");
  if (!take_string(c, &s, &n, err)) return 0;
  for (i = 0; i < sizeof known_dtypes / sizeof known_dtypes[0]; i++)
    if (string_is(s, n, known_dtypes[i].descr)) {
      info->dtype = known_dtypes[i].dtype;
      info->item_size = known_dtypes[i].item_size;
      return 1;
    }
  if (n > 0 && s[0] == '>')
    return fail(err, "big-endian dtype '%.*s' is not supported (save a little-endian copy: "
                "a.astype(a.dtype.newbyteorder('<')))", n > 16 ? 16 : (int)n, (const char *)s);
  return fail(err, "unsupported dtype '%.*s' (expected <f2, <f4, <f8, <i4 or <i8)", n > 16 ? 16 : (int)n,
              (const char *)s);
}

static int take_fortran_order(struct cursor *c, struct npy_error *err) {
  if (take_word(c, "False")) return 1;
  if (take_word(c, "True"))
    return fail(err, "Fortran-order arrays are not supported (save np.ascontiguousarray(a))");
  return fail(err, "malformed header: fortran_order must be True or False");
}

enum { KEY_DESCR = 1, KEY_FORTRAN = 2, KEY_SHAPE = 4 };

static int parse_dict(struct cursor *c, struct npy_info *info, struct npy_error *err) {
  unsigned seen = 0;
  if (!take_char(c, '{')) return fail(err, "malformed header: expected a dict");
  while (!take_char(c, '}')) {
    const unsigned char *key;
    size_t n;
    unsigned which;
    int ok;
    if (!take_string(c, &key, &n, err)) return 0;
    which = string_is(key, n, "descr") ? KEY_DESCR
          : string_is(key, n, "fortran_order") ? KEY_FORTRAN
          : string_is(key, n, "shape") ? KEY_SHAPE : 0;
    if (!which)
      return fail(err, "malformed header: unexpected key '%.*s'", n > 32 ? 32 : (int)n, (const char *)key);
    if (seen & which)
      return fail(err, "malformed header: key '%.*s' given twice", (int)n, (const char *)key);
    seen |= which;
    if (!take_char(c, ':')) return fail(err, "malformed header: expected ':' after a key");
    ok = which == KEY_DESCR ? take_descr(c, info, err)
       : which == KEY_FORTRAN ? take_fortran_order(c, err) : take_shape(c, info, err);
    if (!ok) return 0;
    if (!take_char(c, ',')) {
      if (take_char(c, '}')) break;
      return fail(err, "malformed header: expected ',' or '}'");
    }
  }
  if (seen != (KEY_DESCR | KEY_FORTRAN | KEY_SHAPE))
    return fail(err, "malformed header: missing key '%s'",
                !(seen & KEY_DESCR) ? "descr" : !(seen & KEY_FORTRAN) ? "fortran_order" : "shape");
  skip_space(c);
  if (c->p != c->end) return fail(err, "malformed header: text after the dict");
  return 1;
}

/* ---- the file ------------------------------------------------------------------------------------ */

static const unsigned char npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

int npy_parse(const unsigned char *bytes, size_t length, struct npy_info *info, char *error,
              size_t error_size) {
  struct npy_error err;
  struct cursor cur;
  size_t header_start, header_len, i, count = 1, data_size, avail;
  int zero = 0;
  err.text = error;
  err.size = error_size;
  if (error_size) error[0] = '\0';
  memset(info, 0, sizeof *info);
  if (length < 8 || memcmp(bytes, npy_magic, sizeof npy_magic) != 0) {
    if (length >= sizeof npy_magic && memcmp(bytes, npy_magic, sizeof npy_magic) == 0)
      return fail(&err, "truncated .npy file (%zu bytes)", length);
    return fail(&err, "not a .npy file (bad magic)");
  }
  info->major = bytes[6];
  info->minor = bytes[7];
  if (info->major < 1 || info->major > 3 || info->minor != 0)
    return fail(&err, "unsupported .npy format version %d.%d (expected 1.0, 2.0 or 3.0)", info->major,
                info->minor);
  header_start = info->major == 1 ? 10 : 12;
  if (length < header_start) return fail(&err, "truncated .npy file (%zu bytes)", length);
  header_len = (size_t)bytes[8] | (size_t)bytes[9] << 8;
  if (info->major > 1) header_len |= (size_t)bytes[10] << 16 | (size_t)bytes[11] << 24;
  if (header_len > length - header_start)
    return fail(&err, "truncated .npy header (%zu bytes announced, %zu present)", header_len,
                length - header_start);
  cur.p = bytes + header_start;
  cur.end = cur.p + header_len;
  if (!parse_dict(&cur, info, &err)) return 0;
  info->data_offset = header_start + header_len;

  /* elements and bytes, without overflow: any zero dimension makes the array empty */
  for (i = 0; i < info->ndim; i++) zero |= info->shape[i] == 0;
  if (zero) count = 0;
  else
    for (i = 0; i < info->ndim; i++) {
      if (count > SIZE_MAX / info->shape[i])
        return fail(&err, "array too large (its element count overflows)");
      count *= info->shape[i];
    }
  if (count > SIZE_MAX / info->item_size) return fail(&err, "array too large (its byte size overflows)");
  data_size = count * info->item_size;
  avail = length - info->data_offset;
  if (data_size > avail)
    return fail(&err, "truncated data: the shape needs %zu bytes, the file holds %zu", data_size, avail);
  if (data_size < avail)
    return fail(&err, "%zu bytes of unexpected data after the array", avail - data_size);
  info->count = count;
  info->data_size = data_size;
  return 1;
}

void npy_format_shape(const struct npy_info *info, char *out, size_t out_size) {
  size_t i, len = 0;
  int n;
  if (out_size == 0) return;
  out[0] = '\0';
  n = snprintf(out, out_size, "(");
  for (i = 0; n >= 0 && i < info->ndim; i++) {
    len += (size_t)n;
    if (len >= out_size) return;
    n = snprintf(out + len, out_size - len, "%s%zu", i ? ", " : "", info->shape[i]);
  }
  if (n < 0) return;
  len += (size_t)n;
  if (len >= out_size) return;
  snprintf(out + len, out_size - len, "%s)", info->ndim == 1 ? "," : "");
}
