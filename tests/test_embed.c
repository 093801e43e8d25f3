/* The masked add (posenc.h, "Absolute encodings end to end"): posenc_embed_forward, its dropout
 * and posenc_embed_backward, checked against a plain-C reference written here from the header's
 * contract (positions, the dropout hash, each f32 operation done in double and rounded: double
 * rounding is innocuous for + and * since 53 >= 2*24 + 2), bit for bit, on every backend;
 * XXH3-64 goldens of canonical outputs (the scalar backend's bits: qemu runs check the same);
 * seeds 001 and 003; finite differences for the backward; every bad input with a canary.
 * `test_embed --print` prints the golden hashes. */
#include <math.h>
#include <stdlib.h>
#include "posenc.h"
#include "testlib.h"
#include "backends.h"

#define F32 POSENC_DTYPE_F32
#define F16 POSENC_DTYPE_F16
#define BF16 POSENC_DTYPE_BF16
#define CANARY TL_CANARY

static uint32_t rng_state = 12345u;
static uint32_t rng(void) { rng_state ^= rng_state << 13; rng_state ^= rng_state >> 17; rng_state ^= rng_state << 5; return rng_state; }
static float rng_val(void) { return (float)((double)(rng() % 2000001u) / 500000.0 - 2.0); }

static size_t esz(posenc_dtype dt) { return dt == F32 ? 4 : 2; }
/* ---- the documented dropout hash, typed in again from the header -------------------------- */
static uint64_t ref_splitmix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static uint32_t ref_lowbias(uint32_t x) {
  x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16; return x;
}
static int ref_dropped(uint64_t seed, size_t b, size_t t, size_t j, double p) {
  uint32_t key = (uint32_t)(ref_splitmix(ref_splitmix(ref_splitmix(seed) ^ b) ^ t) >> 32);
  uint32_t h = ref_lowbias(key ^ ((uint32_t)j * 0x9E3779B9u));
  double thr = floor(p * 4294967296.0 + 0.5);
  if (thr > 4294967295.0) thr = 4294967295.0;
  return (double)h < thr;
}

/* ---- reference positions: -1 padding --------------------------------------------------------- */
static void ref_positions(const posenc_embed_tokens *tk, long long *out) {
  size_t b, t;
  for (b = 0; b < tk->batch; b++) {
    long long real = 0;
    for (t = 0; t < tk->tokens; t++) {
      size_t i = b * tk->tokens + t;
      int pad = (tk->token_ids && tk->token_ids[i] == tk->padding_id) || (tk->mask && !tk->mask[i]);
      if (pad) { out[i] = -1; continue; }
      if (tk->mode == POSENC_POS_RANGE) out[i] = (long long)tk->start + (long long)t;
      else if (tk->mode == POSENC_POS_IDS) out[i] = tk->positions[i];
      else if (tk->mode == POSENC_POS_FAIRSEQ) out[i] = tk->padding_id + 1 + real;
      else out[i] = tk->start + real;
      real++;
    }
  }
}

/* ---- one case ---------------------------------------------------------------------------------- */
typedef struct tcase {
  size_t B, T, D, n_rows;
  posenc_pos_mode mode;
  posenc_dtype xt, yt, pt;
  int sinus_src;                /* table.data NULL */
  posenc_layout layout;         /* of the sinusoidal rows */
  posenc_dtype sdt;             /* of the sinusoidal rows */
  posenc_oob_policy oob;
  double p;
  uint64_t seed;
  int strided;                  /* 0 dense, 1 gaps, 2 [T][B][D] */
  int inplace;
  int ids, mask;                /* token ids with padding, mask */
  int32_t start, pad;
  float scale;                  /* 0: default */
  size_t yoff;                  /* bytes y lies past a 64-byte boundary (0: aligned, as streaming wants) */
} tcase;

typedef struct tbufs {
  posenc_embed_config cfg;
  posenc_embed_tokens tk;
  posenc_embed_tensor x, y;
  unsigned char *xbuf, *x0, *ybuf, *yraw, *ref, *tab;  /* x0: x as made (an in-place call writes x) */
  float *gtab, *gt0, *gref;                           /* gt0: grad_table as made */
  size_t xbytes, tabbytes, gtn, ts, bs;
  int32_t *ids, *pos;
  uint8_t *mk;
  long long *rp;
} tbufs;

static void case_setup(const tcase *c, tbufs *s) {
  size_t N = c->B * c->T, i, ts, bs, span;
  memset(s, 0, sizeof *s);
  s->cfg = posenc_embed_default(c->D);
  if (c->scale != 0.0f) s->cfg.scale = c->scale;
  s->cfg.sinusoidal.layout = c->layout;
  s->cfg.sinusoidal.dtype = c->sdt;
  s->cfg.oob = c->oob;
  s->cfg.dropout_p = c->p;
  s->cfg.dropout_seed = c->seed;
  if (!c->sinus_src) {
    size_t pst = c->D + (c->strided ? 3 : 0);
    s->tabbytes = ((c->n_rows - 1) * pst + c->D) * esz(c->pt);
    s->tab = (unsigned char *)malloc(s->tabbytes);
    for (i = 0; i < s->tabbytes / esz(c->pt); i++) tl_store(s->tab + i * esz(c->pt), c->pt, rng_val());
    s->cfg.table.data = s->tab; s->cfg.table.dtype = c->pt; s->cfg.table.n_rows = c->n_rows;
    s->cfg.table.dim = c->D; s->cfg.table.row_stride = c->strided ? pst : 0;
    s->gtn = (c->n_rows - 1) * pst + c->D;
  }
  s->tk.batch = c->B; s->tk.tokens = c->T; s->tk.mode = c->mode; s->tk.start = c->start;
  s->tk.padding_id = c->pad;
  s->ids = (int32_t *)malloc(N * 4); s->pos = (int32_t *)malloc(N * 4); s->mk = (uint8_t *)malloc(N);
  s->rp = (long long *)malloc(N * sizeof(long long));
  for (i = 0; i < N; i++) {
    size_t t = i % c->T;
    s->ids[i] = (rng() % 4 == 0) ? c->pad : c->pad + 1 + (int32_t)(rng() % 50);
    if (t < (i / c->T) % 3) s->ids[i] = c->pad; /* left padding */
    s->mk[i] = (uint8_t)(rng() % 5 != 0);
    s->pos[i] = (int32_t)(rng() % (c->n_rows ? (uint32_t)c->n_rows + (c->oob ? 7u : 0u) : 3000u));
  }
  if (c->ids) s->tk.token_ids = s->ids;
  if (c->mask) s->tk.mask = s->mk;
  if (c->mode == POSENC_POS_IDS) s->tk.positions = s->pos;
  ref_positions(&s->tk, s->rp);
  /* layouts */
  if (c->strided == 2) { ts = c->B * (c->D + 2); bs = c->D + 2; }
  else if (c->strided == 1) { ts = c->D + 5; bs = c->T * ts + 11; }
  else { ts = c->D; bs = c->T * c->D; }
  s->ts = ts; s->bs = bs;
  span = (c->B - 1) * bs + (c->T - 1) * ts + c->D;
  s->xbytes = span * 4;
  s->xbuf = (unsigned char *)malloc(s->xbytes);
  /* y c->yoff bytes past a 64-byte boundary (0: aligned, non-temporal stores possible) */
  if (c->yoff >= 64) { printf("yoff %zu: under 64 bytes, please\n", c->yoff); exit(2); }
  s->yraw = (unsigned char *)malloc(s->xbytes + 128);
  s->ybuf = s->yraw + (64 - (size_t)((uintptr_t)s->yraw % 64)) % 64 + c->yoff;
  s->ref = (unsigned char *)malloc(s->xbytes);
  memset(s->xbuf, CANARY, s->xbytes);
  {
    size_t b, t, j;
    for (b = 0; b < c->B; b++) for (t = 0; t < c->T; t++) for (j = 0; j < c->D; j++)
      tl_store(s->xbuf + (b * bs + t * ts + j) * esz(c->xt), c->xt, rng_val());
  }
  s->x0 = (unsigned char *)malloc(s->xbytes);
  memcpy(s->x0, s->xbuf, s->xbytes);
  s->x.data = s->xbuf; s->x.dtype = c->xt;
  s->x.batch_stride = c->strided ? bs : 0; s->x.token_stride = c->strided ? ts : 0;
  s->y = s->x;
  s->y.dtype = c->inplace ? c->xt : c->yt;
  if (!c->inplace) s->y.data = s->ybuf;
}

static void case_free(tbufs *s) {
  free(s->tab); free(s->ids); free(s->pos); free(s->mk); free(s->rp);
  free(s->xbuf); free(s->x0); free(s->yraw); free(s->ref); free(s->gtab); free(s->gt0); free(s->gref);
}

/* P[pos][j] as the add reads it (table, clamped table, or sinusoidal row) */
static void ref_prow(const tcase *c, const tbufs *s, long long pos, float *row, int *src_table, size_t *trow) {
  size_t j;
  *src_table = 0;
  if (!c->sinus_src && (pos < (long long)c->n_rows || c->oob == POSENC_OOB_CLAMP)) {
    size_t r = pos < (long long)c->n_rows ? (size_t)pos : c->n_rows - 1;
    size_t pst = c->D + (c->strided ? 3 : 0);
    for (j = 0; j < c->D; j++) row[j] = tl_load(s->tab + (r * pst + j) * esz(c->pt), c->pt);
    *src_table = 1; *trow = r;
  } else {
    unsigned char buf[16 * 1024];
    int32_t p32 = (int32_t)pos;
    posenc_sinusoidal_params sp = s->cfg.sinusoidal;
    if (posenc_sinusoidal_rows(&sp, &p32, 1, buf, sizeof buf) != POSENC_OK) { printf("sinusoidal_rows failed\n"); exit(2); }
    for (j = 0; j < c->D; j++) row[j] = tl_load(buf + j * esz(c->sdt), c->sdt);
  }
}

static void ref_forward(const tcase *c, const tbufs *s, unsigned char *out, posenc_dtype yt) {
  size_t b, t, j, trow;
  float row[4096];
  int tsrc;
  for (b = 0; b < c->B; b++) for (t = 0; t < c->T; t++) {
    long long pos = s->rp[b * c->T + t];
    unsigned char *y = out + (b * s->bs + t * s->ts) * esz(yt);
    const unsigned char *x = s->xbuf + (b * s->bs + t * s->ts) * esz(c->xt);
    if (pos < 0) { memset(y, 0, c->D * esz(yt)); continue; }
    ref_prow(c, s, pos, row, &tsrc, &trow);
    for (j = 0; j < c->D; j++) {
      float v = (float)((double)tl_load(x + j * esz(c->xt), c->xt) * (double)s->cfg.scale);
      v = (float)((double)v + (double)row[j]);
      if (c->p > 0) v = (float)((double)v * (ref_dropped(c->seed, b, t, j, c->p) ? 0.0 : (double)(float)(1.0 / (1.0 - c->p))));
      tl_store(y + j * esz(yt), yt, v);
    }
  }
}

/* Where a case runs: on the active backend (the suite, run once per backend), or on every backend
 * in turn with its inputs and reference made once (the outputs past 4 MiB, where making them took
 * most of the test's time). */
enum { ON_ACTIVE, ON_EVERY_BACKEND };

/* The forward call on the active backend, from the inputs as made, against s->ref; returns XXH3
 * of y's span. */
static uint64_t forward_on_active(const tcase *c, tbufs *s, const char *what) {
  const posenc_dtype yt = c->inplace ? c->xt : c->yt;
  const size_t ybytes = ((c->B - 1) * s->bs + (c->T - 1) * s->ts + c->D) * esz(yt);
  posenc_status st;
  memcpy(s->xbuf, s->x0, s->xbytes);
  memset(s->ybuf, CANARY, s->xbytes);
  st = posenc_embed_forward(&s->cfg, &s->tk, &s->x, &s->y);
  CHECK(st == POSENC_OK, "%s [%s]: forward status %d", what, posenc_isa_name(posenc_isa_active()), (int)st);
  CHECK(memcmp(s->y.data, s->ref, s->xbytes) == 0, "%s [%s]: forward differs from the reference", what,
        posenc_isa_name(posenc_isa_active()));
  return tl_xxh3_le(s->y.data, ybytes, esz(yt));
}

/* forward vs the reference (where: ON_ACTIVE or ON_EVERY_BACKEND); returns XXH3 of y's span */
static uint64_t run_forward(const tcase *c, const char *what, int where) {
  tbufs s;
  uint64_t h = 0;
  case_setup(c, &s);
  memset(s.ybuf, CANARY, s.xbytes);
  memcpy(s.ref, c->inplace ? s.xbuf : s.ybuf, s.xbytes);
  ref_forward(c, &s, s.ref, c->inplace ? c->xt : c->yt);
  if (where == ON_EVERY_BACKEND) {
    BK_FOR_EACH(it) h = forward_on_active(c, &s, what);
  } else {
    h = forward_on_active(c, &s, what);
  }
  case_free(&s);
  return h;
}

/* The backward call on the active backend, from the inputs as made, against s->ref (grad_x) and
 * s->gref (grad_table); returns XXH3 of grad_x and (via *hg) of grad_table. */
static uint64_t backward_on_active(const tcase *c, tbufs *s, const char *what, uint64_t *hg) {
  const posenc_dtype yt = c->inplace ? c->xt : c->yt;
  const size_t gxbytes = ((c->B - 1) * s->bs + (c->T - 1) * s->ts + c->D) * esz(yt);
  posenc_status st;
  memcpy(s->xbuf, s->x0, s->xbytes);
  memset(s->ybuf, CANARY, s->xbytes);
  if (s->gtab) memcpy(s->gtab, s->gt0, s->gtn * 4);
  st = posenc_embed_backward(&s->cfg, &s->tk, &s->x, &s->y, s->gtab, c->strided ? c->D + 3 : 0);
  CHECK(st == POSENC_OK, "%s [%s]: backward status %d", what, posenc_isa_name(posenc_isa_active()), (int)st);
  CHECK(memcmp(s->y.data, s->ref, s->xbytes) == 0, "%s [%s]: grad_x differs", what, posenc_isa_name(posenc_isa_active()));
  if (s->gtab) CHECK(memcmp(s->gtab, s->gref, s->gtn * 4) == 0, "%s [%s]: grad_table differs", what,
                     posenc_isa_name(posenc_isa_active()));
  *hg = s->gtab ? tl_xxh3_le(s->gtab, s->gtn * 4, 4) : 0;
  return tl_xxh3_le(s->y.data, gxbytes, esz(yt));
}

/* backward vs the reference (where: ON_ACTIVE or ON_EVERY_BACKEND); returns XXH3 of grad_x and
 * (via *hg) of grad_table */
static uint64_t run_backward(const tcase *c, const char *what, int where, uint64_t *hg) {
  tbufs s;
  size_t b, t, j, trow;
  float row[4096];
  int tsrc;
  uint64_t h = 0;
  posenc_dtype yt = c->inplace ? c->xt : c->yt;
  float ks = (float)(1.0 / (1.0 - c->p));
  case_setup(c, &s);
  memset(s.ybuf, CANARY, s.xbytes);
  memcpy(s.ref, c->inplace ? s.xbuf : s.ybuf, s.xbytes);
  if (s.gtn) {
    s.gtab = (float *)malloc(s.gtn * 4); s.gt0 = (float *)malloc(s.gtn * 4); s.gref = (float *)malloc(s.gtn * 4);
    for (j = 0; j < s.gtn; j++) s.gtab[j] = s.gt0[j] = s.gref[j] = rng_val();
  }
  for (b = 0; b < c->B; b++) for (t = 0; t < c->T; t++) {
    long long pos = s.rp[b * c->T + t];
    unsigned char *gx = s.ref + (b * s.bs + t * s.ts) * esz(yt);
    const unsigned char *g = s.xbuf + (b * s.bs + t * s.ts) * esz(c->xt);
    if (pos < 0) { memset(gx, 0, c->D * esz(yt)); continue; }
    ref_prow(c, &s, pos, row, &tsrc, &trow);
    for (j = 0; j < c->D; j++) {
      float v = tl_load(g + j * esz(c->xt), c->xt);
      if (c->p > 0) v = (float)((double)v * (ref_dropped(c->seed, b, t, j, c->p) ? 0.0 : (double)ks));
      tl_store(gx + j * esz(yt), yt, (float)((double)v * (double)s.cfg.scale));
      if (tsrc && s.gref) {
        size_t pst = c->D + (c->strided ? 3 : 0);
        s.gref[trow * pst + j] = (float)((double)s.gref[trow * pst + j] + (double)v);
      }
    }
  }
  if (where == ON_EVERY_BACKEND) {
    BK_FOR_EACH(it) h = backward_on_active(c, &s, what, hg);
  } else {
    h = backward_on_active(c, &s, what, hg);
  }
  case_free(&s);
  return h;
}

static tcase base_case(void) {
  tcase c;
  memset(&c, 0, sizeof c);
  c.B = 3; c.T = 37; c.D = 67; c.n_rows = 64;
  c.mode = POSENC_POS_RANGE; c.xt = c.yt = c.pt = F32; c.sdt = F32;
  c.layout = POSENC_LAYOUT_INTERLEAVED; c.oob = POSENC_OOB_ERROR; c.pad = 1;
  return c;
}

/* Sinusoidal rows in f32 with x and y of one dtype (the kernels' own loops for them), both layouts,
 * odd D (the split layout's zero column, the interleaved one's lone sine), rows crossing anchors;
 * cases 4 and 5: outputs past 4 MiB (the non-temporal stores of the fused add), one with dropout. */
#define SINUS_F32_CASES 10
static int sinus_f32_large(int k) { return k == 4 || k == 5; }
static tcase sinus_f32_case(int k, char *what, size_t what_size) {
  tcase c = base_case();
  c.sinus_src = 1; c.n_rows = 0;
  c.layout = (k & 1) ? POSENC_LAYOUT_SPLIT : POSENC_LAYOUT_INTERLEAVED;
  c.sdt = F32; c.xt = c.yt = k < 6 ? F32 : k < 8 ? F16 : BF16;
  c.D = k < 2 || k >= 6 ? (size_t)(77 + k) : k < 4 ? 130 : 1040; c.T = k < 4 || k >= 6 ? 70 : 1100; c.B = 1;
  c.mode = POSENC_POS_RANGE; c.start = k < 2 || k >= 6 ? 29 : 0; c.mask = k == 2 || k == 8;
  c.inplace = k == 3 || k == 7; c.p = k == 5 || k == 9 ? 0.25 : 0.0; c.seed = 11;
  snprintf(what, what_size, "sinusoidal f32, x %s, %s D %zu T %zu", posenc_dtype_name(c.xt),
           c.layout ? "split" : "interleaved", c.D, c.T);
  return c;
}

/* ---- the randomized suite on the active backend ---------------------------------------------- */
static void suite(void) {
  static const posenc_dtype dts[3] = {F32, F16, BF16};
  static const size_t dims[] = {1, 5, 8, 16, 67, 300};
  char what[160];
  int m, xi, yi, pi, k;
  uint64_t hg;
  for (m = 0; m < 4; m++) for (xi = 0; xi < 3; xi++) for (yi = 0; yi < 3; yi++) for (pi = 0; pi < 3; pi++) {
    tcase c = base_case();
    c.mode = (posenc_pos_mode)m; c.xt = dts[xi]; c.yt = dts[yi]; c.pt = dts[pi];
    c.D = dims[(m + xi + yi + pi) % 6];
    c.ids = (xi + pi) & 1; c.mask = (yi + m) % 3 == 0;
    c.strided = (xi + yi + pi + m) % 3;
    c.n_rows = m == POSENC_POS_IDS ? 80 : 120; c.start = m == POSENC_POS_CUMSUM ? 3 : 0;
    c.p = ((xi + yi + pi) % 2) ? 0.3 : 0.0; c.seed = 7u + (uint64_t)m;
    snprintf(what, sizeof what, "mode %d x %s y %s P %s D %zu strided %d drop %.1f", m, posenc_dtype_name(c.xt),
             posenc_dtype_name(c.yt), posenc_dtype_name(c.pt), c.D, c.strided, c.p);
    run_forward(&c, what, ON_ACTIVE);
    run_backward(&c, what, ON_ACTIVE, &hg);
    c.inplace = 1;
    run_forward(&c, what, ON_ACTIVE);
    run_backward(&c, what, ON_ACTIVE, &hg);
  }
  /* sinusoidal source, both layouts, every dtype of rows, odd and wide D (several groups) */
  for (k = 0; k < 12; k++) {
    tcase c = base_case();
    c.sinus_src = 1; c.n_rows = 0;
    c.layout = (k & 1) ? POSENC_LAYOUT_SPLIT : POSENC_LAYOUT_INTERLEAVED;
    c.sdt = dts[(k / 2) % 3]; c.xt = dts[k % 3]; c.yt = dts[(k + 1) % 3];
    c.D = k < 6 ? (size_t)(67 + 2 * k) : (size_t)(520 + (size_t)k);   /* 520+: 2 and 3 groups */
    c.T = k < 6 ? 70 : 20; c.B = 2;
    c.mode = (posenc_pos_mode)(k % 4); c.mask = k % 3 == 0; c.ids = k % 2;
    c.start = k % 4 == POSENC_POS_RANGE ? 28 : 0; /* crosses anchors */
    c.p = k % 5 == 0 ? 0.5 : 0.0; c.seed = (uint64_t)k;
    c.strided = k % 3; c.inplace = k % 4 == 1;
    snprintf(what, sizeof what, "sinusoidal %s rows %s D %zu mode %d", c.layout ? "split" : "interleaved",
             posenc_dtype_name(c.sdt), c.D, (int)c.mode);
    run_forward(&c, what, ON_ACTIVE);
    run_backward(&c, what, ON_ACTIVE, &hg);
  }
  for (k = 0; k < SINUS_F32_CASES; k++) {
    tcase c = sinus_f32_case(k, what, sizeof what);
    if (!sinus_f32_large(k)) run_forward(&c, what, ON_ACTIVE);
  }
  /* OOB policies */
  for (k = 0; k < 4; k++) {
    tcase c = base_case();
    c.oob = (k & 1) ? POSENC_OOB_SINUSOIDAL : POSENC_OOB_CLAMP;
    c.mode = k < 2 ? POSENC_POS_RANGE : POSENC_POS_IDS;
    c.n_rows = 20; c.T = 50; c.D = k < 2 ? 9 : 40; c.start = 5; c.mask = 1;
    c.p = k == 3 ? 0.1 : 0.0;
    snprintf(what, sizeof what, "oob %d mode %d", (int)c.oob, (int)c.mode);
    run_forward(&c, what, ON_ACTIVE);
    run_backward(&c, what, ON_ACTIVE, &hg);
  }
}

/* ---- outputs past POSENC_STREAM_MIN_BYTES (4 MiB), on every backend -------------------------- */
static void large_outputs(void) {
  char what[160];
  int k;
  uint64_t hg;
  /* the non-temporal stores */
  {
    tcase c = base_case();
    c.B = 1; c.T = 1100; c.D = 1024; c.n_rows = 1100; c.mask = 1;
    run_forward(&c, "large output (non-temporal stores)", ON_EVERY_BACKEND);
    run_backward(&c, "large grad_x (non-temporal stores)", ON_EVERY_BACKEND, &hg);
    c.p = 0.2; c.xt = c.yt = BF16; c.D = 2048; c.T = 1030; c.n_rows = 1030;
    run_forward(&c, "large bf16 output, dropout (non-temporal stores)", ON_EVERY_BACKEND);
  }
  for (k = 0; k < SINUS_F32_CASES; k++) {
    tcase c = sinus_f32_case(k, what, sizeof what);
    if (sinus_f32_large(k)) run_forward(&c, what, ON_EVERY_BACKEND);
  }
  /* y (grad_x) not aligned for the non-temporal stores: ordinary stores (a kernel streaming them
   * anyway faults, where the ISA's stream stores want alignment); 4 to 32 bytes off, so that a
   * check for less than the vector's alignment fails too; from a table (forward and backward) and
   * from sinusoidal rows in both layouts */
  for (k = 0; k < 6; k++) {
    static const size_t yoffs[6] = {4, 8, 16, 32, 16, 32};
    tcase c = base_case();
    c.B = 1; c.T = 1100; c.D = 1040; c.n_rows = 1100; c.yoff = yoffs[k];
    c.sinus_src = k >= 4; c.layout = k == 5 ? POSENC_LAYOUT_SPLIT : POSENC_LAYOUT_INTERLEAVED;
    snprintf(what, sizeof what, "large output, y %zu bytes past 64, %s", c.yoff,
             c.sinus_src ? (c.layout ? "sinusoidal split" : "sinusoidal interleaved") : "table");
    run_forward(&c, what, ON_EVERY_BACKEND);
    if (!c.sinus_src) run_backward(&c, what, ON_EVERY_BACKEND, &hg);
  }
}

/* ---- canonical outputs and their scalar goldens ---------------------------------------------- */
#define N_GOLD 8
static void goldens(uint64_t *h) {
  tcase c = base_case();
  rng_state = 777u;
  c.B = 2; c.T = 41; c.D = 77; c.n_rows = 50; c.ids = 1;
  h[0] = run_forward(&c, "golden f32", ON_ACTIVE);
  c.xt = c.yt = F16; c.pt = F32;
  h[1] = run_forward(&c, "golden f16", ON_ACTIVE);
  c.xt = c.yt = c.pt = BF16;
  h[2] = run_forward(&c, "golden bf16", ON_ACTIVE);
  c = base_case(); c.B = 2; c.T = 41; c.D = 77; c.n_rows = 50; c.p = 0.25; c.seed = 42; c.mask = 1;
  h[3] = run_forward(&c, "golden dropout", ON_ACTIVE);
  h[4] = run_backward(&c, "golden backward", ON_ACTIVE, &h[5]);
  c = base_case(); c.sinus_src = 1; c.n_rows = 0; c.D = 300; c.T = 45; c.B = 2; c.mode = POSENC_POS_CUMSUM; c.mask = 1;
  h[6] = run_forward(&c, "golden sinusoidal", ON_ACTIVE);
  c.layout = POSENC_LAYOUT_SPLIT; c.D = 301; c.sdt = BF16; c.yt = BF16; c.p = 0.1;
  h[7] = run_forward(&c, "golden sinusoidal split bf16 dropout", ON_ACTIVE);
}
static const char *const gold_names[N_GOLD] = {"forward f32", "forward f16", "forward bf16", "dropout",
                                               "backward grad_x", "backward grad_table", "sinusoidal",
                                               "sinusoidal split bf16 dropout"};
static const uint64_t gold[N_GOLD] = {
  0x1429662d30b30719ull, /* forward f32 */
  0xc089f8676ff0c9ffull, /* forward f16 */
  0x8a77e16fb547a7e9ull, /* forward bf16 */
  0x1a5cddc20d4addeeull, /* dropout */
  0xa96daee6eb6b6048ull, /* backward grad_x */
  0xc9bbdbf7ca33044cull, /* backward grad_table */
  0x3fd53b34019aef4aull, /* sinusoidal */
  0x2d187cc680ea5b0dull, /* sinusoidal split bf16 dropout */
};

/* ---- dropout statistics and determinism -------------------------------------------------------- */
static void test_dropout(void) {
  const size_t B = 4, T = 64, D = 256, N = B * T * D;
  float *x = (float *)malloc(N * 4), *y0 = (float *)malloc(N * 4), *y1 = (float *)malloc(N * 4), *y2 = (float *)malloc(N * 4);
  float tab[64 * 256];
  posenc_embed_config cfg = posenc_embed_default(D);
  posenc_embed_tokens tk;
  posenc_embed_tensor tx, ty;
  size_t i, j, zeros;
  static const double ps[3] = {0.1, 0.5, 0.9};
  int k;
  for (i = 0; i < N; i++) x[i] = 1.0f + (float)(i % 7);
  for (i = 0; i < 64 * 256; i++) tab[i] = 0.5f;
  memset(&tk, 0, sizeof tk); tk.batch = B; tk.tokens = T;
  cfg.table.data = tab; cfg.table.n_rows = 64; cfg.table.dim = D; cfg.table.dtype = F32;
  tx.data = x; tx.dtype = F32; tx.batch_stride = tx.token_stride = 0;
  ty = tx; ty.data = y0;
  CHECK(posenc_embed_forward(&cfg, &tk, &tx, &ty) == POSENC_OK, "forward p=0");
  cfg.dropout_p = 0.0; cfg.dropout_seed = 99; ty.data = y1;
  CHECK(posenc_embed_forward(&cfg, &tk, &tx, &ty) == POSENC_OK, "forward p=0 seed 99");
  CHECK(memcmp(y0, y1, N * 4) == 0, "p = 0 is bit-identical to no dropout, whatever the seed");
  for (k = 0; k < 3; k++) {
    double p = ps[k], sd = sqrt(p * (1 - p) / (double)N);
    float ks = (float)(1.0 / (1.0 - p));
    int exact = 1;
    cfg.dropout_p = p; cfg.dropout_seed = 1234;
    ty.data = y1;
    CHECK(posenc_embed_forward(&cfg, &tk, &tx, &ty) == POSENC_OK, "forward p=%g", p);
    for (i = 0, zeros = 0; i < N; i++) {
      size_t b = i / (T * D), t = (i / D) % T;
      int drop = ref_dropped(1234, b, t, i % D, p);
      zeros += y1[i] == 0.0f;
      if (drop ? y1[i] != 0.0f : y1[i] != y0[i] * ks) exact = 0;
    }
    CHECK(fabs((double)zeros / (double)N - p) <= 6 * sd, "p=%g: dropped fraction %g outside 6 sigma", p, (double)zeros / (double)N);
    CHECK(exact, "p=%g: the mask is the documented hash, kept values are y*keep_scale", p);
    ty.data = y2;
    CHECK(posenc_embed_forward(&cfg, &tk, &tx, &ty) == POSENC_OK, "again");
    CHECK(memcmp(y1, y2, N * 4) == 0, "p=%g: same seed, same mask", p);
    cfg.dropout_seed = 1235;
    CHECK(posenc_embed_forward(&cfg, &tk, &tx, &ty) == POSENC_OK, "seed 1235");
    for (i = 0, j = 0; i < N; i++) j += (y1[i] == 0.0f) != (y2[i] == 0.0f);
    CHECK(j > N / 20, "p=%g: another seed gives another mask (%zu differ)", p, j);
    /* split: batch rows one at a time give the same bits */
    {
      posenc_embed_tokens t1 = tk;
      posenc_embed_tensor a = tx, o = ty;
      size_t b;
      cfg.dropout_seed = 1234;
      t1.batch = 1;
      (void)b;
      o.data = y2;
      CHECK(posenc_embed_forward(&cfg, &t1, &a, &o) == POSENC_OK, "split");
      CHECK(memcmp(y1, y2, T * D * 4) == 0, "p=%g: batch row 0 alone gives the same mask", p);
    }
  }
  /* column independence: rows of a mask must differ (the key depends on b and t) */
  cfg.dropout_p = 0.5; cfg.dropout_seed = 5; ty.data = y1;
  posenc_embed_forward(&cfg, &tk, &tx, &ty);
  for (i = 0, j = 0; i < D; i++) j += (y1[i] == 0.0f) != (y1[D + i] == 0.0f);
  CHECK(j > D / 8, "different tokens get different masks");
  free(x); free(y0); free(y1); free(y2);
}

/* ---- seed 003: "I love AI" -------------------------------------------------------------------- */
static void test_seed003(void) {
  float X[12] = {.1f, .2f, .3f, .4f, .5f, .6f, .7f, .8f, .9f, .8f, .7f, .6f};
  float P[40], Y[12];
  static const double want[12] = {.1, 1.2, .3, 1.4, .5, 1.6, 1.7, .8, 1.9, .8, .7, 1.6};
  posenc_embed_config cfg = posenc_embed_default(4);
  posenc_embed_tokens tk;
  posenc_embed_tensor x, y;
  int32_t pos10[3] = {0, 1, 10};
  size_t i;
  static const float rows[12] = {0, 1, 0, 1, 0, 1, 1, 0, 1, 0, 0, 1};
  memset(P, 0, sizeof P); memcpy(P, rows, sizeof rows);
  cfg.scale = 1.0f;
  cfg.table.data = P; cfg.table.dtype = F32; cfg.table.n_rows = 10; cfg.table.dim = 4;
  memset(&tk, 0, sizeof tk); tk.batch = 1; tk.tokens = 3;
  x.data = X; x.dtype = F32; x.batch_stride = x.token_stride = 0;
  y = x; y.data = Y;
  CHECK(posenc_embed_forward(&cfg, &tk, &x, &y) == POSENC_OK, "seed 003 forward");
  for (i = 0; i < 12; i++) {
    float w = (float)want[i];
    uint32_t a, b;
    memcpy(&a, &Y[i], 4); memcpy(&b, &w, 4);
    CHECK((a > b ? a - b : b - a) <= 1, "seed 003: y[%zu] = %.9g, want %.9g (1 ulp)", i, (double)Y[i], want[i]);
  }
  /* position 10 with max_sequence_length 10: "extrapolation fails" */
  memset(Y, CANARY, sizeof Y);
  tk.mode = POSENC_POS_IDS; tk.positions = pos10;
  CHECK(posenc_embed_forward(&cfg, &tk, &x, &y) == POSENC_ERR_POSITION, "seed 003: position 10 of 10 rows");
  CHECK(tl_all_canary((unsigned char *)Y, sizeof Y), "seed 003: nothing written");
  tk.mode = POSENC_POS_RANGE; tk.start = 8; /* 8, 9, 10 */
  CHECK(posenc_embed_forward(&cfg, &tk, &x, &y) == POSENC_ERR_POSITION, "seed 003: range past the table");
}

/* ---- seed 001: learnable table, scale sqrt(D), dropout, padding id 0 masked; finite differences */
static void test_seed001(void) {
  enum { B = 2, T = 6, D = 12, R = 8 };
  static float x[B * T * D], tab[R * D], y[B * T * D], gy[B * T * D], gx[B * T * D], gt[R * D];
  static double w[B * T * D];
  int32_t ids[B * T] = {0, 0, 5, 7, 9, 3, 4, 4, 0, 8, 2, 0}; /* 0 = padding */
  posenc_embed_config cfg = posenc_embed_default(D);
  posenc_embed_tokens tk;
  posenc_embed_tensor tx, ty, tg, tgx;
  size_t i, k;
  double worst = 0.0;
  CHECK(cfg.scale == (float)sqrt((double)D), "seed 001: scale sqrt(D)");
  for (i = 0; i < R * D; i++) tab[i] = rng_val() * 0.3f;
  for (i = 0; i < B * T * D; i++) { x[i] = rng_val(); w[i] = rng_val(); gy[i] = (float)w[i]; }
  cfg.table.data = tab; cfg.table.dtype = F32; cfg.table.n_rows = R; cfg.table.dim = D;
  cfg.dropout_p = 0.2; cfg.dropout_seed = 2024;
  memset(&tk, 0, sizeof tk); tk.batch = B; tk.tokens = T; tk.token_ids = ids; tk.padding_id = 0;
  tx.data = x; tx.dtype = F32; tx.batch_stride = tx.token_stride = 0;
  ty = tx; ty.data = y; tg = tx; tg.data = gy; tgx = tx; tgx.data = gx;
  CHECK(posenc_embed_forward(&cfg, &tk, &tx, &ty) == POSENC_OK, "seed 001 forward");
  for (i = 0; i < B * T; i++) if (ids[i] == 0) {
    for (k = 0; k < D; k++) CHECK(y[i * D + k] == 0.0f && !signbit(y[i * D + k]), "padding row %zu is +0", i);
  }
  memset(gt, 0, sizeof gt);
  CHECK(posenc_embed_backward(&cfg, &tk, &tg, &tgx, gt, 0) == POSENC_OK, "seed 001 backward");
  /* loss L = sum w*y; central differences of L in double around the f32 forward */
  for (k = 0; k < 2 * 40; k++) {
    int is_x = k < 40;
    size_t idx = is_x ? (size_t)(rng() % (B * T * D)) : (size_t)(rng() % (R * D));
    float *v = is_x ? &x[idx] : &tab[idx], save = *v, hh = 1.0f / 64;
    double lp = 0, lm = 0, fd, an;
    *v = save + hh; posenc_embed_forward(&cfg, &tk, &tx, &ty);
    for (i = 0; i < B * T * D; i++) lp += w[i] * y[i];
    *v = save - hh; posenc_embed_forward(&cfg, &tk, &tx, &ty);
    for (i = 0; i < B * T * D; i++) lm += w[i] * y[i];
    *v = save;
    fd = (lp - lm) / (2.0 * hh);
    an = is_x ? gx[idx] : gt[idx];
    if (fabs(fd - an) > worst) worst = fabs(fd - an);
    CHECK(fabs(fd - an) <= 1e-3 * (1.0 + fabs(an)), "seed 001: d L / d %s[%zu]: finite difference %.7g, analytic %.7g",
          is_x ? "x" : "P", idx, fd, an);
  }
  printf("seed 001: finite differences vs backward, worst |diff| %.3g\n", worst);
}

/* ---- posenc_embed_positions and the default scale ------------------------------------------- */
static void test_positions_scale(void) {
  int32_t ids[10] = {1, 1, 4, 5, 1, 6, 7, 8, 1, 9}, out[10];
  uint8_t mask[10] = {0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
  posenc_embed_tokens tk;
  static const int32_t want_fs[10] = {-1, -1, 2, 3, -1, 2, 3, 4, -1, 5};
  static const int32_t want_cs[10] = {-1, -1, 0, 1, 2, 3, 4, 5, 6, 7};
  size_t d;
  int bad = 0;
  memset(&tk, 0, sizeof tk); tk.batch = 2; tk.tokens = 5;
  tk.mode = POSENC_POS_FAIRSEQ; tk.token_ids = ids; tk.padding_id = 1;
  CHECK(posenc_embed_positions(&tk, out) == POSENC_OK && memcmp(out, want_fs, sizeof out) == 0,
        "fairseq: real tokens numbered from padding_id + 1, restarting per batch row");
  tk.mode = POSENC_POS_CUMSUM; tk.token_ids = NULL; tk.mask = mask; tk.batch = 1; tk.tokens = 10;
  CHECK(posenc_embed_positions(&tk, out) == POSENC_OK && memcmp(out, want_cs, sizeof out) == 0, "cumsum - 1, left padding");
  tk.mode = POSENC_POS_RANGE; tk.start = INT32_MAX - 5;
  CHECK(posenc_embed_positions(&tk, out) == POSENC_ERR_POSITION, "range past INT32_MAX");
  tk.mode = POSENC_POS_FAIRSEQ; tk.padding_id = -1;
  CHECK(posenc_embed_positions(&tk, out) == POSENC_ERR_PADDING, "fairseq padding_id < 0");
  for (d = 1; d <= 200000; d++) {
    float s = posenc_embed_default(d).scale;
    if (s != (float)sqrt((double)d)) { if (bad++ < 3) printf("scale(%zu) = %.9g\n", d, (double)s); }
  }
  CHECK(bad == 0, "fl32(sqrt(D)) for D <= 200000 (%d wrong)", bad);
  for (d = 1; d < 40 && d < sizeof(size_t) * 8; d++) {
    size_t n = ((size_t)1 << d) - 1;
    CHECK(posenc_embed_default(n).scale == (float)sqrt((double)n), "fl32(sqrt(2^%zu - 1))", d);
    CHECK(posenc_embed_default(n + 1).scale == (float)sqrt((double)(n + 1)), "fl32(sqrt(2^%zu))", d);
  }
}

/* ---- bad input -------------------------------------------------------------------------------- */
static void test_bad_input(void) {
  enum { B = 2, T = 5, D = 8, R = 10 };
  static float x[B * T * D], y[B * T * D + 64], tab[R * D], gt[R * D];
  static float big[4096];
  posenc_embed_config cfg0 = posenc_embed_default(D), cfg;
  posenc_embed_tokens tk0, tk;
  posenc_embed_tensor tx0, ty0, tx, ty;
  int32_t ids_pos[B * T];
  size_t i;
  for (i = 0; i < B * T * D; i++) x[i] = (float)i;
  for (i = 0; i < B * T; i++) ids_pos[i] = (int32_t)(i % R);
  cfg0.table.data = tab; cfg0.table.dtype = F32; cfg0.table.n_rows = R; cfg0.table.dim = D;
  memset(&tk0, 0, sizeof tk0); tk0.batch = B; tk0.tokens = T;
  tx0.data = x; tx0.dtype = F32; tx0.batch_stride = tx0.token_stride = 0;
  ty0 = tx0; ty0.data = y;
#define BAD(code, what, setup) do { cfg = cfg0; tk = tk0; tx = tx0; ty = ty0; setup;                      \
    memset(y, CANARY, sizeof y);                                                                          \
    CHECK(posenc_embed_forward(&cfg, &tk, &tx, &ty) == (code), "forward %s: %d", what,                   \
          (int)posenc_embed_forward(&cfg, &tk, &tx, &ty));                                                \
    CHECK(tl_all_canary((unsigned char *)y, sizeof y), "forward %s wrote", what); } while (0)
  BAD(POSENC_ERR_POSITION, "position past the table", tk.start = 6);
  BAD(POSENC_ERR_POSITION, "negative id", tk.mode = POSENC_POS_IDS; ids_pos[3] = -1; tk.positions = ids_pos);
  ids_pos[3] = 3;
  BAD(POSENC_ERR_POSITION, "id = n_rows", tk.mode = POSENC_POS_IDS; ids_pos[9] = R; tk.positions = ids_pos);
  ids_pos[9] = 9;
  BAD(POSENC_ERR_PADDING, "fairseq padding_id >= n_rows", tk.mode = POSENC_POS_FAIRSEQ; tk.padding_id = R);
  BAD(POSENC_ERR_PADDING, "fairseq padding_id < 0", tk.mode = POSENC_POS_FAIRSEQ; tk.padding_id = -2);
  BAD(POSENC_ERR_DIM, "table.dim != dim", cfg.table.dim = D + 1);
  BAD(POSENC_ERR_DIM, "sinusoidal.dim != dim", cfg.table.data = NULL; cfg.sinusoidal.dim = D - 1);
  BAD(POSENC_ERR_DIM, "OOB_SINUSOIDAL sinusoidal.dim != dim", cfg.oob = POSENC_OOB_SINUSOIDAL; cfg.sinusoidal.dim = 3);
  BAD(POSENC_ERR_ALIAS, "y overlaps P", ty.data = tab);
  BAD(POSENC_ERR_ALIAS, "y overlaps P (inside)", cfg.table.data = y + 40; tx.data = x);
  BAD(POSENC_ERR_ALIAS, "y partially overlaps x", tx.data = y; ty.data = y + 1; memcpy(y, x, sizeof x));
  BAD(POSENC_ERR_ALIAS, "x in place with other strides", tx.data = y; tx.token_stride = D; tx.batch_stride = T * D + 8);
  BAD(POSENC_ERR_ALIAS, "x in place with another dtype", tx.data = y; ty.dtype = BF16);
  BAD(POSENC_ERR_ALIAS, "y rows overlap each other", ty.batch_stride = D);
  /* token arrays are read again while y is written: y must not meet them */
  BAD(POSENC_ERR_ALIAS, "y overlaps the mask", tk.mask = (const uint8_t *)(y + 3));
  BAD(POSENC_ERR_ALIAS, "y overlaps the token ids", tk.token_ids = (const int32_t *)(y + B * T * D - 2));
  memcpy(big + 8, ids_pos, sizeof ids_pos); /* valid ids inside the buffer y is given */
  BAD(POSENC_ERR_ALIAS, "y overlaps the positions", tk.mode = POSENC_POS_IDS; tk.positions = (const int32_t *)(big + 8);
      ty.data = big);
  CHECK(memcmp(big + 8, ids_pos, sizeof ids_pos) == 0, "positions untouched");
  BAD(POSENC_ERR_PARAM, "dropout 1", cfg.dropout_p = 1.0);
  BAD(POSENC_ERR_PARAM, "dropout -0.1", cfg.dropout_p = -0.1);
  BAD(POSENC_ERR_PARAM, "dropout NaN", cfg.dropout_p = NAN);
  BAD(POSENC_ERR_PARAM, "scale NaN", cfg.scale = NAN);
  BAD(POSENC_ERR_PARAM, "scale Inf", cfg.scale = INFINITY);
  BAD(POSENC_ERR_PARAM, "unknown mode", tk.mode = (posenc_pos_mode)9);
  BAD(POSENC_ERR_PARAM, "unknown policy", cfg.oob = (posenc_oob_policy)9);
  BAD(POSENC_ERR_STRIDE, "token stride < dim", tx.token_stride = D - 1);
  BAD(POSENC_ERR_STRIDE, "y token stride < dim", ty.token_stride = 3);
  BAD(POSENC_ERR_STRIDE, "table stride < dim", cfg.table.row_stride = D - 1);
  BAD(POSENC_ERR_OVERFLOW, "batch*tokens overflows", tk.batch = SIZE_MAX / 2; tk.tokens = 4);
  BAD(POSENC_ERR_OVERFLOW, "stride overflows", tx.token_stride = SIZE_MAX / 3);
  BAD(POSENC_ERR_OVERFLOW, "table rows overflow", cfg.table.n_rows = SIZE_MAX / 4);
  BAD(POSENC_ERR_NULL, "x NULL", tx.data = NULL);
  BAD(POSENC_ERR_NULL, "IDS without positions", tk.mode = POSENC_POS_IDS);
  BAD(POSENC_ERR_SIZE, "dim 0", cfg.dim = 0);
  BAD(POSENC_ERR_SIZE, "batch 0", tk.batch = 0);
  BAD(POSENC_ERR_SIZE, "table of 0 rows", cfg.table.n_rows = 0);
  BAD(POSENC_ERR_DTYPE, "x dtype", tx.dtype = (posenc_dtype)7);
  BAD(POSENC_ERR_DTYPE, "table dtype", cfg.table.dtype = (posenc_dtype)7);
  BAD(POSENC_ERR_BASE, "sinusoidal base NaN", cfg.table.data = NULL; cfg.sinusoidal.base = NAN);
  cfg = cfg0; tk = tk0; tx = tx0; ty = ty0;
  CHECK(posenc_embed_forward(&cfg, &tk, &tx, &ty) == POSENC_OK, "a valid call after all that");
  /* backward */
#define BADB(code, what, setup) do { cfg = cfg0; tk = tk0; tx = tx0; ty = ty0; gtp = gt; gts = 0; setup;     \
    memset(y, CANARY, sizeof y); memset(gt, CANARY, sizeof gt);                                               \
    CHECK(posenc_embed_backward(&cfg, &tk, &tx, &ty, gtp, gts) == (code), "backward %s", what);             \
    CHECK(tl_all_canary((unsigned char *)y, sizeof y) && tl_all_canary((unsigned char *)gt, sizeof gt),             \
          "backward %s wrote", what); } while (0)
  {
    float *gtp = gt;
    size_t gts = 0;
    BADB(POSENC_ERR_ALIAS, "grad_table overlaps grad_y", tx.data = big; gtp = big + 16);
    BADB(POSENC_ERR_ALIAS, "grad_table overlaps grad_x", ty.data = big; gtp = big + 8);
    BADB(POSENC_ERR_STRIDE, "grad_table stride < dim", gts = D - 1);
    BADB(POSENC_ERR_POSITION, "position past the table", tk.start = 7);
    BADB(POSENC_ERR_PARAM, "dropout NaN", cfg.dropout_p = NAN);
    BADB(POSENC_ERR_ALIAS, "grad_x partially overlaps grad_y", tx.data = y; ty.data = y + 3);
    BADB(POSENC_ERR_NULL, "grad_y NULL", tx.data = NULL);
    BADB(POSENC_ERR_ALIAS, "grad_x overlaps the mask", tk.mask = (const uint8_t *)(y + 5));
    BADB(POSENC_ERR_ALIAS, "grad_table overlaps the token ids", tk.token_ids = (const int32_t *)(gt + 3));
  }
  { /* posenc_embed_positions writing over the ids it reads */
    int32_t ids[B * T];
    for (i = 0; i < B * T; i++) ids[i] = 1;
    tk = tk0; tk.token_ids = ids; tk.padding_id = 0; tk.mode = POSENC_POS_FAIRSEQ;
    CHECK(posenc_embed_positions(&tk, ids + 1) == POSENC_ERR_ALIAS && ids[1] == 1, "positions over the ids");
  }
  /* NaN in the table propagates; padding rows stay +0 */
  {
    int32_t tid[B * T];
    cfg = cfg0; tk = tk0; tx = tx0; ty = ty0;
    for (i = 0; i < R * D; i++) tab[i] = 0.0f;
    tab[D + 2] = NAN;
    for (i = 0; i < B * T; i++) tid[i] = (int32_t)i + 1;
    tid[T + 1] = 0; /* row (1, 1) reads P[1] but is padding */
    tk.token_ids = tid; tk.padding_id = 0;
    CHECK(posenc_embed_forward(&cfg, &tk, &tx, &ty) == POSENC_OK, "NaN table");
    CHECK(isnan(y[D + 2]) && !isnan(y[D + 1]), "NaN propagates to its element only");
    CHECK(y[(T + 1) * D + 2] == 0.0f && !signbit(y[(T + 1) * D + 2]), "padding row over a NaN: +0");
  }
}

int main(int argc, char **argv) {
  uint64_t h[N_GOLD], hs[N_GOLD];
  int i, print = argc > 1 && strcmp(argv[1], "--print") == 0;
  posenc_isa was = bk_select(POSENC_ISA_SCALAR);
  goldens(hs);
  bk_select(was);
  if (print) {
    for (i = 0; i < N_GOLD; i++) printf("  0x%016llxull, /* %s */\n", (unsigned long long)hs[i], gold_names[i]);
    return 0;
  }
  for (i = 0; i < N_GOLD; i++)
    CHECK(hs[i] == gold[i], "golden %s: scalar 0x%016llx, stored 0x%016llx", gold_names[i],
          (unsigned long long)hs[i], (unsigned long long)gold[i]);
  bk_report(stdout);
  BK_FOR_EACH(it) {
    printf("backend %s\n", posenc_isa_name(it.isa));
    rng_state = 12345u;
    suite();
    goldens(h);
    for (i = 0; i < N_GOLD; i++)
      CHECK(h[i] == hs[i], "%s: golden %s differs from scalar", posenc_isa_name(it.isa), gold_names[i]);
    test_dropout();
  }
  large_outputs();
  test_seed003();
  test_seed001();
  test_positions_scale();
  test_bad_input();
  return tl_summary();
}
