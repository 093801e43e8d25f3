/* cli_input.c - .npy input files: read whole, parsed strictly (cli_npy_read.c), converted. */
#include "cli_input.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "cli_format.h"
#include "posenc.h"

int input_error(const struct npy_input *in, const char *fmt, ...) {
  char message[320];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  cli_error("%s %s: %s", in->label, quoted(in->path), message);
  return EXIT_FAILURE;
}

const char *input_shape(const struct npy_input *in, char *buf, size_t size) {
  npy_format_shape(&in->info, buf, size);
  return buf;
}

/* The whole file in a malloc'd block: the file's own size bounds the allocation. */
static int read_whole_file(const struct npy_input *in, unsigned char **bytes, size_t *length) {
  FILE *f = fopen(in->path, "rb");
  unsigned char *buf = NULL;
  size_t len = 0, cap = 0;
  int failed = 0;
  if (!f) return input_error(in, "cannot open: %s", strerror(errno));
  for (;;) {
    size_t n;
    if (len == cap) {
      size_t new_cap = cap ? cap * 2 : 65536;
      unsigned char *grown;
      if (cap > SIZE_MAX / 2 || !(grown = realloc(buf, new_cap))) {
        failed = ENOMEM;
        break;
      }
      buf = grown;
      cap = new_cap;
    }
    n = fread(buf + len, 1, cap - len, f);
    len += n;
    if (n == 0) {
      if (ferror(f)) failed = errno ? errno : EIO;
      break;
    }
  }
  fclose(f);
  if (failed) {
    free(buf);
    return failed == ENOMEM ? input_error(in, "out of memory reading the file")
                            : input_error(in, "cannot read: %s", strerror(failed));
  }
  *bytes = buf;
  *length = len;
  return EXIT_SUCCESS;
}

int npy_load(const char *label, const char *path, struct npy_input *in) {
  unsigned char *bytes = NULL;
  size_t length = 0;
  char why[256];
  int rc;
  in->label = label;
  in->path = path;
  in->data = NULL;
  if ((rc = read_whole_file(in, &bytes, &length)) != EXIT_SUCCESS) return rc;
  if (!npy_parse(bytes, length, &in->info, why, sizeof why)) {
    free(bytes);
    return input_error(in, "%s", why);
  }
  /* the payload to the start of the (malloc-aligned) block, then to host order */
  memmove(bytes, bytes + in->info.data_offset, in->info.data_bytes);
  table_to_little_endian(bytes, in->info.count, in->info.item_size);
  in->data = bytes;
  return EXIT_SUCCESS;
}

void npy_input_free(struct npy_input *in) {
  free(in->data);
  in->data = NULL;
}

/* Element i of a float array as a double, exactly: <f8, <f4, <f2, and <u2 as bfloat16 bits. */
static double float_at(const struct npy_input *in, size_t i) {
  double v;
  float f;
  uint16_t h;
  switch (in->info.type) {
    case POSENC_NPY_F64: memcpy(&v, in->data + 8 * i, 8); return v;
    case POSENC_NPY_F32: memcpy(&f, in->data + 4 * i, 4); return f;
    default:
      memcpy(&h, in->data + 2 * i, 2);
      return in->info.type == POSENC_NPY_U16 ? posenc_bf16_to_f32(h) : posenc_f16_to_f32(h);
  }
}

/* A list: shape (count,); what says what each value is for. */
static int check_list_shape(const struct npy_input *in, size_t count, const char *what) {
  char shape[64];
  if (in->info.ndim == 1 && in->info.count == count) return EXIT_SUCCESS;
  return input_error(in, "shape %s, expected (%zu,): %s", input_shape(in, shape, sizeof shape), count, what);
}

int npy_positive_floats(const struct npy_input *in, size_t count, float *out) {
  const posenc_npy_info *info = &in->info;
  size_t i;
  int rc;
  if (info->type != POSENC_NPY_F16 && info->type != POSENC_NPY_F32 && info->type != POSENC_NPY_F64)
    return input_error(in, "dtype %s, expected a float array (<f4, <f8 or <f2)",
                       npy_dtype_descr(info->type));
  if ((rc = check_list_shape(in, count, "one factor per rotary pair")) != EXIT_SUCCESS) return rc;
  for (i = 0; i < count; i++) {
    double v = float_at(in, i);
    if (!(v > 0.0) || !(v <= FLT_MAX)) /* as float: finite and > 0 (NaN fails both) */
      return input_error(in, "value %g at index %zu: every factor must be finite and greater than 0", v,
                         i);
    out[i] = (float)v;
    if (!(out[i] > 0.0f)) return input_error(in, "value %g at index %zu underflows float32", v, i);
  }
  return EXIT_SUCCESS;
}

int npy_norm_weight(const struct npy_input *in, size_t count, float *out) {
  const posenc_npy_info *info = &in->info;
  size_t i;
  int rc;
  if (info->type != POSENC_NPY_F32 && info->type != POSENC_NPY_F16 && info->type != POSENC_NPY_U16)
    return input_error(in, "dtype %s, expected <f4 (float32), <f2 (float16) or <u2 (bfloat16 bits)%s",
                       npy_dtype_descr(info->type),
                       info->type == POSENC_NPY_F64 ? ": the weight is float32, save w.astype(np.float32)" : "");
  if ((rc = check_list_shape(in, count, "one weight per element of a head (--in's head dim)")) != EXIT_SUCCESS)
    return rc;
  for (i = 0; i < count; i++) {
    double v = float_at(in, i);
    if (!(fabs(v) <= FLT_MAX)) /* NaN fails too */
      return input_error(in, "value %g at index %zu: every weight must be finite", v, i);
    out[i] = (float)v; /* exact: every accepted dtype is a subset of float32 */
  }
  return EXIT_SUCCESS;
}

int npy_positions(const struct npy_input *in, int32_t *out) {
  const posenc_npy_info *info = &in->info;
  size_t i;
  if (info->type != POSENC_NPY_I32 && info->type != POSENC_NPY_I64)
    return input_error(in, "dtype %s, expected integer positions (<i4 or <i8)",
                       npy_dtype_descr(info->type));
  for (i = 0; i < info->count; i++) {
    int64_t v;
    if (info->type == POSENC_NPY_I64) {
      memcpy(&v, in->data + 8 * i, 8);
    } else {
      int32_t w;
      memcpy(&w, in->data + 4 * i, 4);
      v = w;
    }
    if (v > INT32_MAX || v < -(int64_t)INT32_MAX)
      return input_error(in, "position %lld at index %zu is outside [-2147483647, 2147483647]",
                         (long long)v, i);
    out[i] = (int32_t)v;
  }
  return EXIT_SUCCESS;
}
