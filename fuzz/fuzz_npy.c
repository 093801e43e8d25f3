/* fuzz_npy.c - the .npy reader on arbitrary bytes: posenc_npy_parse (truncated files, wrong or
 * big-endian dtypes, fortran order, absurd shapes, malformed headers must be a FORMAT or OVERFLOW
 * error, never a read past the input), the CLI's whole-file npy_parse and its conversions
 * (npy_positions, npy_positive_floats, npy_format_shape: nothing here allocates from a shape, only
 * from the file's own size), a round trip of every accepted header through posenc_npy_header, and
 * the other way round: a drawn type, rank 0..5 and extents near every size limit written by
 * posenc_npy_header must parse back exactly, or, refused with OVERFLOW, be refused by the parser
 * too when written by hand. */
#include "cli_input.h"
#include "fuzz.h"

static size_t item_size(posenc_npy_type type) {
  static const size_t sizes[] = {4, 2, 8, 4, 8, 1, 1, 2}; /* by posenc_npy_type */
  return (size_t)type < sizeof sizes / sizeof sizes[0] ? sizes[type] : 0;
}

/* What an accepted header promises (posenc.h, posenc_npy_info). */
static void check_info(const posenc_npy_info *info, size_t len) {
  size_t i, count = 1;
  int empty = 0;
  FZ_REQUIRE(info->version >= 1 && info->version <= 3 && info->ndim <= 4, "npy: version %d, ndim %zu",
             info->version, info->ndim);
  FZ_REQUIRE(item_size(info->type) && info->item_size == item_size(info->type), "npy: type %d, item size %zu",
             (int)info->type, info->item_size);
  for (i = 0; i < info->ndim; i++) { /* NumPy's rule: the non-zero extents' product fits */
    if (!info->shape[i]) { empty = 1; continue; }
    FZ_REQUIRE(count <= SIZE_MAX / info->shape[i], "npy: the count overflows");
    count *= info->shape[i];
  }
  if (empty) count = 0;
  FZ_REQUIRE(info->count == count && count <= SIZE_MAX / info->item_size &&
                 info->data_bytes == count * info->item_size,
             "npy: count %zu (shape gives %zu), data_bytes %zu", info->count, count, info->data_bytes);
  FZ_REQUIRE(info->data_offset <= len && info->data_offset <= SIZE_MAX - info->data_bytes,
             "npy: data_offset %zu of %zu bytes, data_bytes %zu", info->data_offset, len, info->data_bytes);
}

/* Writes the accepted header again and parses that: same type and shape. The writer may refuse
 * (OVERFLOW) only a shape whose bytes leave less room than its own header needs. */
static void check_round_trip(const posenc_npy_info *info) {
  unsigned char header[POSENC_NPY_HEADER_MAX];
  posenc_npy_info again;
  size_t len = 0, nonzero = 1, i;
  posenc_status st = posenc_npy_header(info->type, info->ndim, info->shape, header, sizeof header, &len);
  for (i = 0; i < info->ndim; i++)
    if (info->shape[i]) nonzero *= info->shape[i]; /* fits: check_info */
  if (st == POSENC_ERR_OVERFLOW && nonzero > ((size_t)PTRDIFF_MAX - POSENC_NPY_HEADER_MAX) / info->item_size) return;
  FZ_REQUIRE(st == POSENC_OK, "npy_header refuses a parsed header: %s", posenc_strerror(st));
  st = posenc_npy_parse(header, len, &again);
  FZ_REQUIRE(st == POSENC_OK && again.data_offset == len && len % 64 == 0, "npy: own header %s",
             posenc_strerror(st));
  FZ_REQUIRE(again.type == info->type && again.ndim == info->ndim && again.count == info->count &&
                 memcmp(again.shape, info->shape, info->ndim * sizeof info->shape[0]) == 0,
             "npy: round trip changed it");
}

/* The CLI's reader with an error buffer of exactly error_size bytes, then its conversions. */
static void check_cli(const uint8_t *data, size_t size, size_t error_size) {
  char *error = (char *)malloc(error_size ? error_size : 1);
  char *shape = (char *)malloc(error_size ? error_size : 1);
  struct npy_input in;
  if (!error || !shape) abort();
  memset(&in, 0, sizeof in);
  in.label = "--fuzz";
  in.path = "input.npy";
  if (!npy_parse(data, size, &in.info, error, error_size)) {
    FZ_REQUIRE(!error_size || (memchr(error, '\0', error_size) && (error_size == 1 || error[0])),
               "npy_parse: no reason given");
  } else {
    void *values;
    check_info(&in.info, size);
    FZ_REQUIRE(in.info.data_offset + in.info.data_bytes == size, "npy_parse accepted a wrong payload size");
    /* as npy_load leaves it: the payload alone in its own block (bounded by the file size) */
    in.data = (unsigned char *)malloc(in.info.data_bytes ? in.info.data_bytes : 1);
    values = malloc(in.info.count ? in.info.count * 4 : 1);
    if (!in.data || !values) abort();
    memcpy(in.data, data + in.info.data_offset, in.info.data_bytes);
    if (in.info.type == POSENC_NPY_I32 || in.info.type == POSENC_NPY_I64)
      npy_positions(&in, (int32_t *)values);
    if (in.info.type == POSENC_NPY_F16 || in.info.type == POSENC_NPY_F32 || in.info.type == POSENC_NPY_F64)
      npy_positive_floats(&in, in.info.count, (float *)values);
    npy_format_shape(&in.info, shape, error_size);
    FZ_REQUIRE(!error_size || memchr(shape, '\0', error_size), "npy_format_shape: not terminated");
    free(values);
    npy_input_free(&in);
  }
  free(error);
  free(shape);
}

/* An extent near a size limit: 0, 1, the 32-bit edges, PTRDIFF_MAX / item_size (the writer's and
 * parser's rule), PTRDIFF_MAX, SIZE_MAX, give or take a little; or small, or raw bits. */
static size_t draw_extent(fz_in *in, size_t item) {
  static const size_t edge[] = {0,
                                1,
                                2,
                                3,
                                255,
                                65536,
                                (size_t)INT32_MAX,
                                (size_t)1 << 31,
                                UINT32_MAX,
                                (size_t)(UINT64_C(1) << 32), /* 0 where size_t has 32 bits */
                                (size_t)(UINT64_C(1) << 40),
                                (size_t)PTRDIFF_MAX / 2,
                                (size_t)PTRDIFF_MAX,
                                (size_t)PTRDIFF_MAX + 1,
                                SIZE_MAX / 3,
                                SIZE_MAX};
  uint8_t k = fz_u8(in);
  size_t delta = fz_u8(in) % 200;
  switch (k % 8) {
    case 0: case 1: return edge[fz_u8(in) % 16];
    case 2: return edge[fz_u8(in) % 16] - delta;
    case 3: return ((size_t)PTRDIFF_MAX - 64 * (1 + k / 8 % 4)) / item - 2 + delta % 5; /* the rule's edge */
    case 4: return (size_t)PTRDIFF_MAX / item + delta - 100;
    case 5: return fz_u64(in);
    default: return fz_below(in, 1000);
  }
}

/* A header written by hand (NumPy's dict, as posenc_npy_header writes it) for any shape. */
static size_t hand_header(unsigned char *buf, size_t cap, size_t type, size_t ndim, const size_t *shape) {
  static const char *const descr[8] = {"<f4", "<f2", "<f8", "<i4", "<i8", "|u1", "|b1", "<u2"};
  char dict[256];
  size_t n, i, total;
  n = (size_t)snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr[type]);
  for (i = 0; i < ndim; i++) n += (size_t)snprintf(dict + n, sizeof dict - n, "%s%zu", i ? ", " : "", shape[i]);
  n += (size_t)snprintf(dict + n, sizeof dict - n, "%s), }", ndim == 1 ? "," : "");
  total = (10 + n + 1 + 63) / 64 * 64;
  if (total > cap) abort();
  memcpy(buf, "\x93NUMPY\x01\x00", 8);
  buf[8] = (unsigned char)((total - 10) & 0xff);
  buf[9] = (unsigned char)((total - 10) >> 8);
  memcpy(buf + 10, dict, n);
  memset(buf + 10 + n, ' ', total - 11 - n);
  buf[total - 1] = '\n';
  return total;
}

/* posenc_npy_header -> posenc_npy_parse: a drawn type (rarely an unknown one), rank 0..5 and
 * extents near the limits. Written: parsed back with the same type, rank and shape, the data
 * right after the header, header and data within PTRDIFF_MAX. OVERFLOW: the parser refuses the
 * same shape too. Nothing else. */
static void check_writer(const uint8_t *data, size_t size) {
  fz_in in = {data, size};
  unsigned char buf[POSENC_NPY_HEADER_MAX], hand[320];
  size_t shape[5], ndim = fz_u8(&in) % 6, type = fz_u8(&in) % 9, len = 0, i;
  size_t item = type < 8 ? item_size((posenc_npy_type)type) : 1;
  posenc_npy_info info;
  posenc_status w, r;
  for (i = 0; i < ndim; i++) shape[i] = draw_extent(&in, item);
  memset(buf, 0xA5, sizeof buf);
  w = posenc_npy_header((posenc_npy_type)type, ndim, shape, buf, sizeof buf, &len);
  if (ndim > 4 || type >= 8) {
    FZ_REQUIRE(w == (ndim > 4 ? POSENC_ERR_SIZE : POSENC_ERR_PARAM), "npy_header: type %zu, rank %zu: %s", type,
               ndim, posenc_strerror(w));
    return;
  }
  if (w == POSENC_OK) {
    r = posenc_npy_parse(buf, len, &info);
    FZ_REQUIRE(r == POSENC_OK && info.type == (posenc_npy_type)type && info.ndim == ndim &&
                   memcmp(info.shape, shape, ndim * sizeof *shape) == 0 && info.data_offset == len &&
                   info.data_bytes <= (size_t)PTRDIFF_MAX - info.data_offset,
               "npy: header written for type %zu, rank %zu, shape[0] %zu is not parsed back: %s", type, ndim,
               ndim ? shape[0] : (size_t)0, posenc_strerror(r));
    check_info(&info, len);
    return;
  }
  FZ_REQUIRE(w == POSENC_ERR_OVERFLOW, "npy_header: type %zu, rank %zu: %s", type, ndim, posenc_strerror(w));
  r = posenc_npy_parse(hand, hand_header(hand, sizeof hand, type, ndim, shape), &info);
  FZ_REQUIRE(r == POSENC_ERR_OVERFLOW, "npy: the writer refuses type %zu, rank %zu, shape[0] %zu; the parser says %s",
             type, ndim, ndim ? shape[0] : (size_t)0, posenc_strerror(r));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  posenc_npy_info info;
  posenc_status st;
  memset(&info, 0xA5, sizeof info);
  st = posenc_npy_parse(data, size, &info);
  if (st == POSENC_OK) {
    check_info(&info, size);
    check_round_trip(&info);
  } else {
    FZ_REQUIRE(st == POSENC_ERR_FORMAT || st == POSENC_ERR_OVERFLOW, "npy_parse: %s", posenc_strerror(st));
    FZ_REQUIRE(info.problem != POSENC_NPY_PROBLEM_NONE && info.problem_at <= size,
               "npy: problem %d at %zu of %zu", (int)info.problem, info.problem_at, size);
  }
  /* the last byte picks the message buffer's size: 0 (none), tiny, or roomy */
  check_cli(data, size, size ? data[size - 1] % 80 : 64);
  check_writer(data, size);
  return 0;
}
