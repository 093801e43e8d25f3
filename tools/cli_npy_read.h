/* cli_npy_read.h - a strict reader of NumPy .npy files, as a pure function over bytes.
 *
 * npy_parse() checks a whole file image, header and payload size, and describes it; it has no
 * global state, never allocates, and reads nothing outside bytes[0..length). It accepts:
 *   - format versions 1.0, 2.0 and 3.0 (header length u16 / u32 / u32);
 *   - a header that is a Python dict literal with exactly the keys 'descr', 'fortran_order' and
 *     'shape' (any order, each once), optional trailing comma, spaces/tabs/newlines between
 *     tokens, and trailing whitespace;
 *   - descr '<f2', '<f4', '<f8', '<i4', '<i8' (little-endian only; '>..' is refused by name);
 *   - fortran_order False only;
 *   - shape a tuple of at most NPY_MAX_DIMS decimal integers: (), (n,), (a, b, ...);
 *   - a payload of exactly prod(shape) * itemsize bytes (checked without overflow).
 * Anything else (a truncated file, a bad magic, escapes or unknown keys in the header, a size
 * that does not fit size_t) is refused with a one-line reason. */
#ifndef POSENC_CLI_NPY_READ_H
#define POSENC_CLI_NPY_READ_H

#include <stddef.h>

#define NPY_MAX_DIMS 32

enum npy_dtype { NPY_DTYPE_F2, NPY_DTYPE_F4, NPY_DTYPE_F8, NPY_DTYPE_I4, NPY_DTYPE_I8 };

struct npy_info {
  int major, minor;        /* format version */
  enum npy_dtype dtype;
  size_t item_size;        /* bytes per element */
  size_t ndim;
  size_t shape[NPY_MAX_DIMS];
  size_t count;            /* elements: the product of shape (1 for shape ()) */
  size_t data_offset;      /* where the payload starts */
  size_t data_size;        /* count * item_size; data_offset + data_size == length */
};

/* Parses the file image bytes[0..length). Returns 1 and fills *info, or returns 0 and writes a
 * reason (no trailing newline, truncated to error_size) to error; *info is then unspecified. */
int npy_parse(const unsigned char *bytes, size_t length, struct npy_info *info, char *error,
              size_t error_size);

/* "<f4" and so on. */
const char *npy_dtype_descr(enum npy_dtype dtype);

/* shape as NumPy prints it, "(3, 4)", "(5,)", "()", cut to out_size. */
void npy_format_shape(const struct npy_info *info, char *out, size_t out_size);

#endif /* POSENC_CLI_NPY_READ_H */
