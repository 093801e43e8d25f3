/* wip/tables_impl.h: implementation fragment, included by posenc.h while issue 4 is built;
 * merged into posenc.h before it lands. */

POSENC_API posenc_status posenc_learned_init(uint64_t seed, double std, size_t n_rows, size_t dim,                       posenc_dtype dtype, size_t row_stride,                       void *out, size_t out_bytes) {
  (void)seed;
  (void)std;
  (void)n_rows;
  (void)dim;
  (void)dtype;
  (void)row_stride;
  (void)out;
  (void)out_bytes;
  return POSENC_ERR_PARAM; /* stub */
}

POSENC_API posenc_status posenc_table_resize(const posenc_table *src, size_t new_rows, int align_corners,                       posenc_dtype dtype, size_t row_stride,                       void *out, size_t out_bytes) {
  (void)src;
  (void)new_rows;
  (void)align_corners;
  (void)dtype;
  (void)row_stride;
  (void)out;
  (void)out_bytes;
  return POSENC_ERR_PARAM; /* stub */
}

POSENC_API posenc_status posenc_index_table(posenc_index_kind kind, uint32_t max_len, int32_t start,                       size_t n_rows, size_t dim, posenc_dtype dtype,                       size_t row_stride, void *out, size_t out_bytes) {
  (void)kind;
  (void)max_len;
  (void)start;
  (void)n_rows;
  (void)dim;
  (void)dtype;
  (void)row_stride;
  (void)out;
  (void)out_bytes;
  return POSENC_ERR_PARAM; /* stub */
}

POSENC_API posenc_sincos_2d_params posenc_sincos_2d_default(size_t embed_dim, size_t grid_h, size_t grid_w) {
  (void)embed_dim;
  (void)grid_h;
  (void)grid_w;
  posenc_sincos_2d_params r; memset(&r, 0, sizeof r); return r; /* stub */
}

POSENC_API posenc_status posenc_sincos_2d_bytes(const posenc_sincos_2d_params *params, size_t *bytes) {
  (void)params;
  (void)bytes;
  return POSENC_ERR_PARAM; /* stub */
}

POSENC_API posenc_status posenc_sincos_2d(const posenc_sincos_2d_params *params, void *out, size_t out_bytes) {
  (void)params;
  (void)out;
  (void)out_bytes;
  return POSENC_ERR_PARAM; /* stub */
}
