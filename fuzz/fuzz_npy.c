/* fuzz_npy.c - the .npy reader on arbitrary bytes: posenc_npy_parse (truncated files, wrong or
 * big-endian dtypes, fortran order, absurd shapes, malformed headers must be a FORMAT or OVERFLOW
 * error, never a read past the input), the CLI's whole-file npy_parse and its conversions
 * (npy_positions, npy_positive_floats, npy_format_shape: nothing here allocates from a shape, only
 * from the file's own size), and a round trip of every accepted header through posenc_npy_header. */
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

/* Writes the accepted header again and parses that: same type and shape. */
static void check_round_trip(const posenc_npy_info *info) {
  unsigned char header[POSENC_NPY_HEADER_MAX];
  posenc_npy_info again;
  size_t len = 0;
  posenc_status st = posenc_npy_header(info->type, info->ndim, info->shape, header, sizeof header, &len);
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  posenc_npy_info info;
  posenc_status st;
  memset(&info, 0xA5, sizeof info);
  st = posenc_npy_parse(data, size, &info);
  if (st == POSENC_OK) {
    check_info(&info, size);
    /* the writer refuses arrays past SIZE_MAX/2 bytes, the reader only past SIZE_MAX (README) */
    if (info.count <= SIZE_MAX / 2 / info.item_size) check_round_trip(&info);
  } else {
    FZ_REQUIRE(st == POSENC_ERR_FORMAT || st == POSENC_ERR_OVERFLOW, "npy_parse: %s", posenc_strerror(st));
    FZ_REQUIRE(info.problem != POSENC_NPY_PROBLEM_NONE && info.problem_at <= size,
               "npy: problem %d at %zu of %zu", (int)info.problem, info.problem_at, size);
  }
  /* the last byte picks the message buffer's size: 0 (none), tiny, or roomy */
  check_cli(data, size, size ? data[size - 1] % 80 : 64);
  return 0;
}
