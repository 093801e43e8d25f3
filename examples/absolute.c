/* posenc absolute encodings: seed 003's "I love AI" masked add, then a position table learned
 * from C by SGD with posenc_embed_forward / posenc_embed_backward.
 * Build and run: meson compile -C build && build/examples/absolute */
#include <stdio.h>
#include "posenc.h"

static int check(posenc_status st) {
  if (st != POSENC_OK) fprintf(stderr, "posenc: %s\n", posenc_strerror(st));
  return st != POSENC_OK;
}

int main(void) {
  /* ---- seed 003: y = x + P[position], scale 1, a 10-row table ---- */
  float X[3][4] = {{.1f, .2f, .3f, .4f}, {.5f, .6f, .7f, .8f}, {.9f, .8f, .7f, .6f}};
  float P[10][4] = {{0, 1, 0, 1}, {0, 1, 1, 0}, {1, 0, 0, 1}}, Y[3][4];
  const char *words[3] = {"I", "love", "AI"};
  int32_t far[3] = {0, 1, 10};
  posenc_embed_config cfg = posenc_embed_default(4);
  posenc_embed_tokens tok = {1, 3, POSENC_POS_RANGE, 0, NULL, NULL, 0, NULL};
  posenc_embed_tensor x = {X, POSENC_DTYPE_F32, 0, 0}, y = {Y, POSENC_DTYPE_F32, 0, 0};
  int i, j, step;
  cfg.scale = 1.0f;
  cfg.table.data = P; cfg.table.dtype = POSENC_DTYPE_F32; cfg.table.n_rows = 10; cfg.table.dim = 4;
  if (check(posenc_embed_forward(&cfg, &tok, &x, &y))) return 1;
  printf("seed 003, x + P[pos]:\n");
  for (i = 0; i < 3; i++) printf("  %-4s pos %d: [%.1f, %.1f, %.1f, %.1f]\n", words[i], i, Y[i][0], Y[i][1], Y[i][2], Y[i][3]);
  tok.mode = POSENC_POS_IDS; tok.positions = far;
  printf("position 10 with max_sequence_length 10: %s\n\n",
         posenc_strerror(posenc_embed_forward(&cfg, &tok, &x, &y)));

  /* ---- learn a table: target = x*sqrt(D) + Q for a hidden Q; loss = mean (y - target)^2 / 2 ---- */
  {
    enum { B = 4, T = 16, D = 8 };
    static float xs[B][T][D], out[B][T][D], target[B][T][D], grad[B][T][D], table[T][D], gtab[T][D];
    posenc_embed_config c = posenc_embed_default(D);  /* scale fl32(sqrt(8)) */
    posenc_embed_tokens tk = {B, T, POSENC_POS_RANGE, 0, NULL, NULL, 0, NULL};
    posenc_embed_tensor tx = {xs, POSENC_DTYPE_F32, 0, 0}, ty = {out, POSENC_DTYPE_F32, 0, 0};
    posenc_embed_tensor tg = {grad, POSENC_DTYPE_F32, 0, 0};
    uint32_t r = 1;
    float lr = 0.5f;
    c.table.data = table; c.table.dtype = POSENC_DTYPE_F32; c.table.n_rows = T; c.table.dim = D;
    for (i = 0; i < B * T * D; i++) {
      r = r * 1664525u + 1013904223u;
      (&xs[0][0][0])[i] = (float)(r >> 8) / 16777216.0f - 0.5f;
    }
    for (i = 0; i < T; i++) for (j = 0; j < D; j++) table[i][j] = (float)((i * 7 + j * 3) % 11) / 10.0f - 0.5f;
    if (check(posenc_embed_forward(&c, &tk, &tx, &ty))) return 1;     /* the hidden Q: this table */
    for (i = 0; i < B * T * D; i++) (&target[0][0][0])[i] = (&out[0][0][0])[i];
    for (i = 0; i < T * D; i++) (&table[0][0])[i] = 0.0f;              /* start from zero */
    printf("learning a %d x %d position table by SGD (forward + backward):\n", T, D);
    for (step = 0; step <= 20; step++) {
      double loss = 0.0;
      if (check(posenc_embed_forward(&c, &tk, &tx, &ty))) return 1;
      for (i = 0; i < B * T * D; i++) {
        float d = (&out[0][0][0])[i] - (&target[0][0][0])[i];
        loss += 0.5 * (double)d * d;
        (&grad[0][0][0])[i] = d;                 /* d loss / d y, up to the mean */
      }
      if (step % 5 == 0) printf("  step %2d  loss %.3e\n", step, loss / (B * T * D));
      for (i = 0; i < T * D; i++) (&gtab[0][0])[i] = 0.0f;
      if (check(posenc_embed_backward(&c, &tk, &tg, NULL, &gtab[0][0], 0))) return 1;
      for (i = 0; i < T * D; i++) (&table[0][0])[i] -= lr / B * (&gtab[0][0])[i];  /* each row: sum of B */
    }
  }
  return 0;
}
