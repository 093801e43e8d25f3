/* wip/spectrum_npy_impl.h: implementation fragment, included by posenc.h while issue 4 is built;
 * merged into posenc.h before it lands. */

POSENC_API size_t posenc_spectrum_work(size_t dim) {
  (void)dim;
  return 0; /* stub */
}

POSENC_API posenc_status posenc_spectrum(const posenc_table *table, double *work, size_t work_count,                     double *singular_values, posenc_spectrum_info *info) {
  (void)table;
  (void)work;
  (void)work_count;
  (void)singular_values;
  (void)info;
  return POSENC_ERR_PARAM; /* stub */
}

POSENC_API posenc_status posenc_npy_parse(const void *buf, size_t len, posenc_npy_info *info) {
  (void)buf;
  (void)len;
  (void)info;
  return POSENC_ERR_PARAM; /* stub */
}

POSENC_API posenc_status posenc_npy_header(posenc_npy_type type, size_t ndim, const size_t *shape,                      void *out, size_t out_cap, size_t *len) {
  (void)type;
  (void)ndim;
  (void)shape;
  (void)out;
  (void)out_cap;
  (void)len;
  return POSENC_ERR_PARAM; /* stub */
}
