/* cli_npy_read.c - whole .npy files (see cli_npy_read.h): the library parses the header; this
 * file checks the payload size and words the library's problem codes as messages. */
#include "cli_npy_read.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli_common.h"

static const char *const npy_descrs[] = {"<f4", "<f2", "<f8", "<i4", "<i8", "|u1", "|b1", "<u2"}; /* by type */

const char *npy_dtype_descr(posenc_npy_type type) {
  return (size_t)type < sizeof npy_descrs / sizeof npy_descrs[0] ? npy_descrs[type] : "?";
}

static int fail(char *error, size_t error_size, const char *fmt, ...) CLI_PRINTF(3, 4);
static int fail(char *error, size_t error_size, const char *fmt, ...) {
  va_list ap;
  if (error_size == 0) return 0;
  va_start(ap, fmt);
  vsnprintf(error, error_size, fmt, ap);
  va_end(ap);
  return 0;
}

/* The message for a refused header; text[at..] is where the library stopped. */
static const char *problem_text(posenc_npy_problem problem) {
  switch (problem) {
    case POSENC_NPY_PROBLEM_MAGIC: return "not a .npy file (bad magic)";
    case POSENC_NPY_PROBLEM_TRUNCATED: return "truncated .npy header";
    case POSENC_NPY_PROBLEM_VERSION: return "unsupported .npy format version (expected 1.0, 2.0 or 3.0)";
    case POSENC_NPY_PROBLEM_SYNTAX: return "malformed header: not a dict literal as NumPy writes it";
    case POSENC_NPY_PROBLEM_KEY_UNKNOWN: return "malformed header: unexpected key (expected only 'descr', "
                                                "'fortran_order' and 'shape')";
    case POSENC_NPY_PROBLEM_KEY_TWICE: return "malformed header: a key is given twice";
    case POSENC_NPY_PROBLEM_KEY_MISSING: return "malformed header: missing key ('descr', 'fortran_order' and "
                                                "'shape' are required)";
    case POSENC_NPY_PROBLEM_DTYPE: return "unsupported (expected <f2, <f4, <f8, <i4, <i8, <u2, |u1 or |b1)";
    case POSENC_NPY_PROBLEM_BIG_ENDIAN: return "big-endian dtypes are not supported (save a little-endian copy: "
                                               "a.astype(a.dtype.newbyteorder('<')))";
    case POSENC_NPY_PROBLEM_STRUCTURED: return "structured dtypes are not supported";
    case POSENC_NPY_PROBLEM_FORTRAN: return "Fortran-order arrays are not supported (save np.ascontiguousarray(a))";
    case POSENC_NPY_PROBLEM_BOOL: return "malformed header: fortran_order must be True or False";
    case POSENC_NPY_PROBLEM_SHAPE: return "malformed header: shape must be a tuple of integers, as (n,) or (a, b)";
    case POSENC_NPY_PROBLEM_NDIM: return "shape has more than 4 dimensions";
    case POSENC_NPY_PROBLEM_TOO_LARGE: return "array too large (its size overflows)";
    case POSENC_NPY_PROBLEM_NONE: break;
  }
  return "malformed .npy header";
}

int npy_parse(const unsigned char *bytes, size_t length, posenc_npy_info *info, char *error,
              size_t error_size) {
  posenc_status st;
  size_t avail;
  if (error_size) error[0] = '\0';
  memset(info, 0, sizeof *info);
  st = posenc_npy_parse(length ? (const void *)bytes : (const void *)"", length, info);
  if (st == POSENC_ERR_FORMAT || st == POSENC_ERR_OVERFLOW) {
    if (info->problem == POSENC_NPY_PROBLEM_TRUNCATED)
      return fail(error, error_size, "truncated .npy file (%zu bytes)", length);
    if (info->problem == POSENC_NPY_PROBLEM_DTYPE || info->problem == POSENC_NPY_PROBLEM_BIG_ENDIAN) {
      size_t at = info->problem_at, n = 0; /* at: the descr's first character, inside the header */
      while (n < 16 && at + n < length && bytes[at + n] != '\'' && bytes[at + n] != '"' && bytes[at + n] >= 0x20 &&
             bytes[at + n] < 0x7f)
        n++;
      return fail(error, error_size, "dtype '%.*s': %s", (int)n, (const char *)bytes + at, problem_text(info->problem));
    }
    if (info->problem == POSENC_NPY_PROBLEM_MAGIC || info->problem == POSENC_NPY_PROBLEM_VERSION)
      return fail(error, error_size, "%s", problem_text(info->problem));
    return fail(error, error_size, "%s (at byte %zu)", problem_text(info->problem), info->problem_at);
  }
  if (st != POSENC_OK) return fail(error, error_size, "internal error: %s", posenc_strerror(st));
  avail = length - info->data_offset;
  if (info->data_bytes > avail)
    return fail(error, error_size, "truncated data: the shape needs %zu bytes, the file holds %zu",
                info->data_bytes, avail);
  if (info->data_bytes < avail)
    return fail(error, error_size, "%zu bytes of unexpected data after the array", avail - info->data_bytes);
  return 1;
}

void npy_format_shape(const posenc_npy_info *info, char *out, size_t out_size) {
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
