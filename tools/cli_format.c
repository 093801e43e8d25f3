/* cli_format.c - .npy, raw and C-header serialisers. */
#include "cli_format.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL /* header-only use: nothing to link */
#include <xxhash.h>

const char *const table_format_names[TABLE_FORMAT_COUNT] = {"npy", "raw", "c"};

/* ---- byte order ------------------------------------------------------------------------- */

static int host_is_little_endian(void) {
  const uint16_t one = 1;
  unsigned char first;
  memcpy(&first, &one, 1);
  return first == 1;
}

void table_to_little_endian(void *bytes, size_t count, size_t elem_size) {
  unsigned char *elem = (unsigned char *)bytes;
  size_t i, j;
  if (host_is_little_endian()) return;
  for (i = 0; i < count; i++, elem += elem_size)
    for (j = 0; j < elem_size / 2; j++) {
      unsigned char t = elem[j];
      elem[j] = elem[elem_size - 1 - j];
      elem[elem_size - 1 - j] = t;
    }
}

static uint16_t load_le16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }

static float load_le_f32(const unsigned char *p) {
  uint32_t bits = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
  float value;
  memcpy(&value, &bits, sizeof value);
  return value;
}

/* ---- a growing text buffer -----------------------------------------------------------------
 * Appends never fail individually: the first allocation failure sets failed, later appends do
 * nothing, and the caller checks once at the end. */
struct text {
  char *data;
  size_t len, cap;
  int failed;
};

static int text_reserve(struct text *t, size_t extra) {
  size_t need, cap;
  char *data;
  if (t->failed) return 0;
  if (extra <= t->cap - t->len) return 1;
  if (extra > (size_t)-1 - t->len) { t->failed = 1; return 0; }
  need = t->len + extra;
  cap = t->cap > (size_t)-1 / 2 ? (size_t)-1 : t->cap * 2;
  if (cap < need) cap = need;
  data = realloc(t->data, cap);
  if (!data) { t->failed = 1; return 0; }
  t->data = data;
  t->cap = cap;
  return 1;
}

static void text_printf(struct text *t, const char *fmt, ...) CLI_PRINTF(2, 3);
static void text_printf(struct text *t, const char *fmt, ...) {
  va_list ap;
  int n;
  if (!text_reserve(t, 64)) return;
  va_start(ap, fmt);
  n = vsnprintf(t->data + t->len, t->cap - t->len, fmt, ap);
  va_end(ap);
  if (n < 0) { t->failed = 1; return; }
  if ((size_t)n >= t->cap - t->len) { /* did not fit: grow and print again */
    if (!text_reserve(t, (size_t)n + 1)) return;
    va_start(ap, fmt);
    vsnprintf(t->data + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
  }
  t->len += (size_t)n;
}

/* ---- .npy ----------------------------------------------------------------------------------
 * Format 1.0, header by posenc_npy_header (the data starts at a multiple of 64 bytes). */

posenc_npy_type npy_type_of(posenc_dtype dtype) {
  switch (dtype) {
    case POSENC_DTYPE_F32: return POSENC_NPY_F32;
    case POSENC_DTYPE_F16: return POSENC_NPY_F16;
    case POSENC_DTYPE_BF16: return POSENC_NPY_U16; /* NumPy has no bfloat16: the raw bits */
  }
  return POSENC_NPY_F32;
}

int render_npy_array(posenc_npy_type type, const size_t *shape, size_t ndim, const void *bytes,
                     size_t size, struct rendered_table *out) {
  unsigned char *header;
  size_t len;
  posenc_status st;
  out->count = 0;
  out->owned = NULL;
  header = malloc(POSENC_NPY_HEADER_MAX);
  if (!header) {
    cli_error("out of memory");
    return EXIT_FAILURE;
  }
  st = posenc_npy_header(type, ndim, shape, header, POSENC_NPY_HEADER_MAX, &len);
  if (st != POSENC_OK) {
    free(header);
    cli_error("internal error: .npy header: %s", posenc_strerror(st));
    return EXIT_FAILURE;
  }
  out->owned = (char *)header;
  out->spans[0].data = header;
  out->spans[0].size = len;
  out->spans[1].data = bytes;
  out->spans[1].size = size;
  out->count = 2;
  return EXIT_SUCCESS;
}

static int render_npy(const struct table_view *table, struct rendered_table *out) {
  size_t shape[2];
  shape[0] = table->rows;
  shape[1] = table->cols;
  return render_npy_array(npy_type_of(table->dtype), shape, 2, table->bytes, table->size, out);
}

/* ---- C header ------------------------------------------------------------------------------ */

/* One element as C source. %.9g round-trips every float; it prints integral values without a
 * point ("1", "-0") and "1f" is not a C literal, so those get ".0". The tool never calls
 * setlocale, so the decimal point is '.'. posenc never produces inf or NaN. */
static void format_element(char out[32], const unsigned char *elem, posenc_dtype dtype) {
  if (dtype == POSENC_DTYPE_F32) {
    int n = snprintf(out, 32, "%.9g", (double)load_le_f32(elem));
    snprintf(out + n, (size_t)(32 - n), "%sf", strpbrk(out, ".e") ? "" : ".0");
  } else {
    snprintf(out, 32, "0x%04x", (unsigned)load_le16(elem));
  }
}

static const char *dtype_note(posenc_dtype dtype) {
  switch (dtype) {
    case POSENC_DTYPE_F32:
      return " * IEEE binary32 values, printed with 9 significant digits: they convert back exactly.\n";
    case POSENC_DTYPE_F16:
      return " * IEEE binary16 (half) bit patterns: decode with posenc_f16_to_f32() from posenc.h,\n"
             " * or memcpy an element into a _Float16 / __fp16 where the compiler has one.\n";
    case POSENC_DTYPE_BF16:
      return " * bfloat16 bit patterns: an element v is the float whose IEEE binary32 bits are\n"
             " * (uint32_t)v << 16 (posenc_bf16_to_f32() in posenc.h does this).\n";
  }
  return "";
}

static void append_c_preamble(struct text *t, const struct table_view *table,
                              const struct c_header_info *info) {
  const char *name = info->name;
  size_t elem_size = posenc_dtype_size(table->dtype);
  text_printf(t, "/* %s generated by posenc %s. Do not edit;\n"
                 " * regenerate with:\n *   %s\n", info->title, POSENC_VERSION_STRING, info->command);
  text_printf(t, " * Row r holds position %ld + r.\n%s%s", (long)info->first_position,
              info->notes ? info->notes : "", dtype_note(table->dtype));
  text_printf(t, " * %s_XXH3 is XXH3-64 (seed 0) of the %zu x %zu x %zu table bytes in little-endian\n"
                 " * order: on a little-endian target XXH3_64bits(%s, sizeof %s) must equal it.\n */\n",
              name, table->rows, table->cols, elem_size, name, name);
  text_printf(t, "#ifndef %s_INCLUDED\n#define %s_INCLUDED\n\n", name, name);
  if (table->dtype != POSENC_DTYPE_F32) text_printf(t, "#include <stdint.h>\n\n");
  text_printf(t, "#define %s_ROWS %zu\n#define %s_COLS %zu\n#define %s_XXH3 0x%016llxULL\n\n",
              name, table->rows, name, table->cols, name,
              (unsigned long long)XXH3_64bits(table->bytes, table->size));
}

enum { C_VALUES_PER_LINE = 8 };

static void append_c_array(struct text *t, const struct table_view *table,
                           const struct c_header_info *info) {
  const char *name = info->name;
  size_t elem_size = posenc_dtype_size(table->dtype), r, c;
  const unsigned char *elem = table->bytes;
  text_printf(t, "static const %s %s[%s_ROWS][%s_COLS] = {\n",
              table->dtype == POSENC_DTYPE_F32 ? "float" : "uint16_t", name, name, name);
  for (r = 0; r < table->rows && !t->failed; r++) {
    text_printf(t, "  { /* position %lld */", (long long)info->first_position + (long long)r);
    for (c = 0; c < table->cols; c++, elem += elem_size) {
      char value[32];
      format_element(value, elem, table->dtype);
      text_printf(t, "%s%s%s", c % C_VALUES_PER_LINE == 0 ? "\n    " : " ", value,
                  c + 1 < table->cols ? "," : "");
    }
    text_printf(t, "\n  }%s\n", r + 1 < table->rows ? "," : "");
  }
  text_printf(t, "};\n\n#endif /* %s_INCLUDED */\n", name);
}

static int render_c_header(const struct table_view *table, const struct c_header_info *info,
                           struct rendered_table *out) {
  struct text t = {NULL, 0, 0, 0};
  append_c_preamble(&t, table, info);
  append_c_array(&t, table, info);
  out->owned = t.data;
  if (t.failed) {
    cli_error("out of memory");
    return EXIT_FAILURE;
  }
  out->spans[0].data = t.data;
  out->spans[0].size = t.len;
  out->count = 1;
  return EXIT_SUCCESS;
}

/* ---- dispatch ------------------------------------------------------------------------------ */

static int render_raw(const struct table_view *table, struct rendered_table *out) {
  out->spans[0].data = table->bytes;
  out->spans[0].size = table->size;
  out->count = 1;
  return EXIT_SUCCESS;
}

int render_table(const struct table_view *table, enum table_format format,
                 const struct c_header_info *c_info, struct rendered_table *out) {
  out->count = 0;
  out->owned = NULL;
  switch (format) {
    case TABLE_FORMAT_NPY: return render_npy(table, out);
    case TABLE_FORMAT_RAW: return render_raw(table, out);
    case TABLE_FORMAT_C: return render_c_header(table, c_info, out);
    case TABLE_FORMAT_COUNT: break;
  }
  cli_error("internal error: unknown output format");
  return EXIT_FAILURE;
}

void rendered_table_free(struct rendered_table *rendered) {
  free(rendered->owned);
  rendered->owned = NULL;
  rendered->count = 0;
}
