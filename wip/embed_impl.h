/* wip/embed_impl.h: implementation fragment, included by posenc.h while issue 4 is built;
 * merged into posenc.h before it lands. */

POSENC_API posenc_embed_config posenc_embed_default(size_t dim) {
  (void)dim;
  posenc_embed_config r; memset(&r, 0, sizeof r); return r; /* stub */
}

POSENC_API posenc_status posenc_embed_positions(const posenc_embed_tokens *tokens, int32_t *out) {
  (void)tokens;
  (void)out;
  return POSENC_ERR_PARAM; /* stub */
}

POSENC_API posenc_status posenc_embed_forward(const posenc_embed_config *config,                        const posenc_embed_tokens *tokens,                        const posenc_embed_tensor *x,                        const posenc_embed_tensor *y) {
  (void)config;
  (void)tokens;
  (void)x;
  (void)y;
  return POSENC_ERR_PARAM; /* stub */
}

POSENC_API posenc_status posenc_embed_backward(const posenc_embed_config *config,                        const posenc_embed_tokens *tokens,                        const posenc_embed_tensor *grad_y,                        const posenc_embed_tensor *grad_x,                        float *grad_table, size_t grad_table_stride) {
  (void)config;
  (void)tokens;
  (void)grad_y;
  (void)grad_x;
  (void)grad_table;
  (void)grad_table_stride;
  return POSENC_ERR_PARAM; /* stub */
}
