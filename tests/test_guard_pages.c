/* Guard pages (issue 7): every public function that reads or writes a caller buffer runs with each
 * buffer in its own mapping, placed so that it ends right before an unmapped page (first pass) or
 * starts right after one (second pass), or (third pass) with every buffer of element data passed as
 * void * (tables, tensors, caches, tiles, .npy bytes) starting 1-3 bytes past the page start, so
 * past its natural alignment, while C-typed arrays (ids, slopes, work, shapes) and structs keep theirs
 * (posenc.h, "Buffers": element data may start at any byte address); inputs are also made
 * read-only. An overrun, an underrun,
 * an over-read or a write into an input faults at once. Every compiled and supported backend,
 * every innermost extent n = 0..40 (twice the widest vector: AVX2's 16 halves; 0 must fail and
 * write nothing; the .npy functions: every byte count 0..140 around their headers), a few rows. Each call's status and output bytes must equal the scalar backend's
 * (a differential test as well). A SIGSEGV/SIGBUS prints which call faulted.
 * POSIX: mmap and mprotect; Windows: VirtualAlloc and VirtualProtect (PAGE_NOACCESS, PAGE_READONLY),
 * where the C runtime reports an access violation as SIGSEGV. */
#define _DEFAULT_SOURCE 1
#define _DARWIN_C_SOURCE 1
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include "posenc.h"
#include "testlib.h"
#include "backends.h"
#if defined(_WIN32)
#  define WIN32_LEAN_AND_MEAN
#  include <windows.h>
#  include <io.h>
#else
#  include <sys/mman.h>
#  include <unistd.h>
#endif

#ifndef MAP_ANONYMOUS
#define MAP_ANONYMOUS MAP_ANON
#endif

#define F32 POSENC_DTYPE_F32
#define F16 POSENC_DTYPE_F16
#define BF16 POSENC_DTYPE_BF16

/* ---- the guarded arenas -------------------------------------------------------------------- */
#define GP_ARENAS 8              /* buffers one call may take */
#define GP_CAP (64 * 1024)       /* bytes of the largest buffer */
#define GP_POOL (GP_CAP / 2 + 4096) /* random elements per dtype pool */

typedef struct gp_arena {
  unsigned char *lo;             /* first usable byte, right after the leading guard page */
  size_t cap;                    /* usable bytes: whole pages, the trailing guard follows */
} gp_arena;

enum { GP_AT_END = 0, GP_AT_START = 1, GP_MISALIGNED = 2 };
enum { GP_IN, GP_INOUT, GP_OUT, GP_SCRATCH };

/* One call's buffers, handed out in order, one arena each. */
typedef struct gp_run {
  int place, used, expect_ok;
  unsigned salt;                 /* GP_MISALIGNED: buffer i of the call starts 1 + (salt + i) % 3 bytes in */
  unsigned char *ptr[GP_ARENAS];
  size_t bytes[GP_ARENAS];
  unsigned char *ro[GP_ARENAS];  /* GP_IN: the pages made read-only for the call ... */
  size_t ro_bytes[GP_ARENAS];    /* ... and their bytes */
  int kind[GP_ARENAS];
  const void *src[GP_ARENAS];    /* INOUT: what the buffer held before the call */
  unsigned char extra[4096];     /* results the family reads out of scratch after the call */
  size_t extra_len;
  int gap_buf;                   /* a buffer of rows with gaps between them, or -1 */
  size_t gap_row, gap_stride, gap_rows;  /* bytes of a row, bytes from row to row, rows */
} gp_run;

static gp_arena arenas[GP_ARENAS];
static unsigned char pool[3][GP_POOL * 4];   /* random values in [-2, 2] as f32, f16, bf16 */
static char where[200] = "setup";            /* the running call, for the fault handler */

static void die(const char *msg) {
  fprintf(stderr, "test_guard_pages: %s\n", msg);
  exit(2);
}

/* ---- pages: what the system calls them ------------------------------------------------------ */
enum { GP_NOACCESS, GP_READ, GP_READWRITE };

#if defined(_WIN32)
static void fault_message(const char *text) { (void)!_write(2, text, (unsigned)strlen(text)); }

static size_t page_size(void) {
  SYSTEM_INFO si;
  GetSystemInfo(&si);
  return si.dwPageSize;
}

static unsigned char *pages_map(size_t bytes) {
  return (unsigned char *)VirtualAlloc(NULL, bytes, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
}

static void pages_protect(void *p, size_t bytes, int access) {
  static const DWORD prot[] = {PAGE_NOACCESS, PAGE_READONLY, PAGE_READWRITE};
  DWORD old;
  if (!VirtualProtect(p, bytes, prot[access], &old)) die("VirtualProtect failed");
}
#else
static void fault_message(const char *text) { (void)!write(2, text, strlen(text)); }

static size_t page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }

static unsigned char *pages_map(size_t bytes) {
  void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return m == MAP_FAILED ? NULL : (unsigned char *)m;
}

static void pages_protect(void *p, size_t bytes, int access) {
  static const int prot[] = {PROT_NONE, PROT_READ, PROT_READ | PROT_WRITE};
  if (mprotect(p, bytes, prot[access])) die("mprotect failed");
}
#endif

static void on_fault(int sig) {
  fault_message("\nFAULT (guard page hit) in ");
  fault_message(where);
  fault_message("\n");
  signal(sig, SIG_DFL);
  raise(sig);
}

/* An arena of at least bytes (whole pages) between two guard pages. */
static void arena_map(gp_arena *a, size_t bytes) {
  const size_t page = page_size();
  const size_t cap = (bytes + page - 1) / page * page;
  unsigned char *m = pages_map(cap + 2 * page);
  if (!m) die("cannot map the arenas");
  pages_protect(m, page, GP_NOACCESS);
  pages_protect(m + page + cap, page, GP_NOACCESS);
  a->lo = m + page;
  a->cap = cap;
}

/* The whole pages of arena a that bytes at p lie on (an empty buffer: p's page, none at the end):
 * what a read-only input protects. Only those, not the arena: each page protected costs the
 * system a TLB entry to flush, on every call (most of the test's time when it was the arena). */
static unsigned char *span_pages(const gp_arena *a, const unsigned char *p, size_t bytes, size_t *len) {
  const size_t page = page_size(), at = (size_t)(p - a->lo);
  const size_t first = at / page * page;
  size_t end = (at + bytes + page - 1) / page * page;
  if (end < first + page) end = first + page;
  if (end > a->cap) end = a->cap;
  *len = end > first ? end - first : 0;
  return a->lo + first;
}

/* The RoPE families' rope (rope_make): at the end of [0]'s arena, or at the start of [1]'s
 * (GP_AT_START), and the config it was made for. */
typedef struct rope_slot {
  gp_arena arena;
  posenc_rope *rope;             /* NULL: nothing made here yet */
  size_t n;                      /* the config it was made for ... */
  int partial;
  posenc_rope_style style;
  posenc_status status;          /* ... and what making it returned */
} rope_slot;
static rope_slot rope_slots[2];

static void arenas_init(void) {
  int i;
  for (i = 0; i < GP_ARENAS; i++) arena_map(&arenas[i], GP_CAP + 3); /* + 3: a misaligned start */
  for (i = 0; i < 2; i++) arena_map(&rope_slots[i].arena, POSENC_ROPE_BYTES(POSENC_ROPE_MAX_DIM));
}

static void pools_init(void) {
  uint64_t s = 2024;
  size_t i;
  for (i = 0; i < GP_POOL; i++) {
    float v = (float)((double)(tl_splitmix64(&s) % 4000001u) / 1000000.0 - 2.0);
    tl_store(pool[0] + 4 * i, F32, v);
    tl_store(pool[1] + 2 * i, F16, v);
    tl_store(pool[2] + 2 * i, BF16, v);
  }
}

/* count random values of dtype (salt picks where in the pool they start). */
static const void *gp_vals(posenc_dtype dt, size_t count, unsigned salt) {
  if (count + 4096 > GP_POOL) die("pool too small");
  return pool[dt] + (salt * 97u % 4096u) * posenc_dtype_size(dt);
}

/* The next arena's buffer of bytes: its last byte before the trailing guard, or its first byte
 * after the leading one; misaligned: element data (elem) 1-3 bytes after the leading guard, a
 * typed array or struct at the end (aligned: its bytes are a multiple of its alignment). */
static unsigned char *gp_take_any(gp_run *r, size_t bytes, int kind, const void *src, int elem) {
  gp_arena *a;
  unsigned char *p;
  if (r->used == GP_ARENAS || bytes > GP_CAP) die("a case needs more arenas or a larger GP_CAP");
  a = &arenas[r->used];
  if (r->place == GP_MISALIGNED)
    p = elem ? a->lo + 1 + (r->salt + (unsigned)r->used) % 3 : a->lo + a->cap - bytes;
  else
    p = r->place == GP_AT_END ? a->lo + a->cap - bytes : a->lo;
  if (kind == GP_OUT || kind == GP_SCRATCH) memset(p, TL_CANARY, bytes);
  else if (bytes) memcpy(p, src, bytes);
  if (kind == GP_IN) {
    r->ro[r->used] = span_pages(a, p, bytes, &r->ro_bytes[r->used]);
    if (r->ro_bytes[r->used]) pages_protect(r->ro[r->used], r->ro_bytes[r->used], GP_READ);
  }
  r->ptr[r->used] = p; r->bytes[r->used] = bytes; r->kind[r->used] = kind; r->src[r->used] = src;
  r->used++;
  return p;
}
/* C-typed arrays and structs (kept aligned in every placement) ... */
static const void *gp_in(gp_run *r, const void *src, size_t bytes) { return gp_take_any(r, bytes, GP_IN, src, 0); }
static void *gp_inout(gp_run *r, const void *src, size_t bytes) { return gp_take_any(r, bytes, GP_INOUT, src, 0); }
static void *gp_out(gp_run *r, size_t bytes) { return gp_take_any(r, bytes, GP_OUT, NULL, 0); }
static void *gp_scratch(gp_run *r, size_t bytes) { return gp_take_any(r, bytes, GP_SCRATCH, NULL, 0); }
/* ... and element data passed as void * (misaligned in the third placement). */
static const void *gp_din(gp_run *r, const void *src, size_t bytes) { return gp_take_any(r, bytes, GP_IN, src, 1); }
static void *gp_dinout(gp_run *r, const void *src, size_t bytes) { return gp_take_any(r, bytes, GP_INOUT, src, 1); }
static void *gp_dout(gp_run *r, size_t bytes) { return gp_take_any(r, bytes, GP_OUT, NULL, 1); }

/* The buffer taken last holds rows row_bytes long, stride_bytes apart: the bytes between them
 * must keep what they held. */
static void gp_gaps(gp_run *r, size_t row_bytes, size_t stride_bytes, size_t rows) {
  r->gap_buf = r->used - 1;
  r->gap_row = row_bytes; r->gap_stride = stride_bytes; r->gap_rows = rows;
}

static int gp_gaps_intact(const gp_run *r) {
  const int b = r->gap_buf;
  size_t i, off;
  if (b < 0) return 1;
  for (i = 0; i + 1 < r->gap_rows; i++) {
    off = i * r->gap_stride + r->gap_row;
    if (r->kind[b] == GP_OUT && !tl_all_canary(r->ptr[b] + off, r->gap_stride - r->gap_row)) return 0;
    if (r->kind[b] == GP_INOUT && memcmp(r->ptr[b] + off, (const unsigned char *)r->src[b] + off,
                                         r->gap_stride - r->gap_row) != 0) return 0;
  }
  return 1;
}

/* Appends a value read after the call (from scratch) to the compared result. */
static void gp_extra(gp_run *r, const void *v, size_t bytes) {
  if (r->extra_len + bytes > sizeof r->extra) die("extra results too large");
  memcpy(r->extra + r->extra_len, v, bytes);
  r->extra_len += bytes;
}

/* Gives the inputs their write access back. */
static void gp_release(gp_run *r) {
  int i;
  for (i = 0; i < r->used; i++)
    if (r->kind[i] == GP_IN && r->ro_bytes[i]) pages_protect(r->ro[i], r->ro_bytes[i], GP_READWRITE);
}

/* 1 if no output or in/out buffer changed. */
static int gp_untouched(const gp_run *r) {
  int i;
  for (i = 0; i < r->used; i++) {
    if (r->kind[i] == GP_OUT && !tl_all_canary(r->ptr[i], r->bytes[i])) return 0;
    if (r->kind[i] == GP_INOUT && memcmp(r->ptr[i], r->src[i], r->bytes[i]) != 0) return 0;
  }
  return 1;
}

/* The status, every output and in/out buffer, and the extras, one after another. */
static size_t gp_result(const gp_run *r, posenc_status st, unsigned char *res) {
  size_t len = 0;
  int i, s = (int)st;
  memcpy(res, &s, sizeof s); len += sizeof s;
  for (i = 0; i < r->used; i++)
    if (r->kind[i] == GP_OUT || r->kind[i] == GP_INOUT) {
      memcpy(res + len, r->ptr[i], r->bytes[i]);
      len += r->bytes[i];
    }
  memcpy(res + len, r->extra, r->extra_len);
  return len + r->extra_len;
}

static size_t esz(posenc_dtype dt) { return posenc_dtype_size(dt); }

/* ---- absolute tables ------------------------------------------------------------------------ */
/* v: layout (2) x dtype (3) x table/rows (2) x dense/padded stride (2). */
static posenc_status fam_sinusoidal(gp_run *r, size_t n, unsigned v) {
  static const int32_t pos[3] = {29, -3, 100000};
  posenc_sinusoidal_params p = posenc_sinusoidal_default(n);
  size_t bytes = 0;
  void *out;
  p.layout = (posenc_layout)(v % 2);
  p.dtype = (posenc_dtype)(v / 2 % 3);
  p.row_stride = v / 12 % 2 ? n + 3 : 0;
  posenc_sinusoidal_bytes(&p, 3, &bytes);
  if (v / 6 % 2) {
    const int32_t *ids = (const int32_t *)gp_in(r, pos, sizeof pos);
    out = gp_dout(r, bytes);
    gp_gaps(r, n * esz(p.dtype), (p.row_stride ? p.row_stride : n) * esz(p.dtype), 3);
    return posenc_sinusoidal_rows(&p, ids, 3, out, bytes);
  }
  out = gp_dout(r, bytes);
  gp_gaps(r, n * esz(p.dtype), (p.row_stride ? p.row_stride : n) * esz(p.dtype), 3);
  return posenc_sinusoidal_table(&p, 29, 3, out, bytes);
}

/* Transformer-XL's relative rows: n = dim; v: dtype (3) x clamp (2). */
static posenc_status fam_txl(gp_run *r, size_t n, unsigned v) {
  posenc_sinusoidal_params p = posenc_sinusoidal_default(n);
  size_t bytes = 0;
  p.layout = POSENC_LAYOUT_SPLIT;
  p.dtype = (posenc_dtype)(v % 3);
  posenc_sinusoidal_bytes(&p, 4, &bytes);
  return posenc_txl_relative(&p, 4, v / 3 ? 2 : 0, gp_dout(r, bytes), bytes);
}

/* n = dim; v: dtype (3) x stride (2). */
static posenc_status fam_learned(gp_run *r, size_t n, unsigned v) {
  const posenc_dtype dt = (posenc_dtype)(v % 3);
  const size_t stride = v / 3 ? n + 1 : n, bytes = n ? (2 * stride + n) * esz(dt) : 0;
  void *out = gp_dout(r, bytes);
  gp_gaps(r, n * esz(dt), stride * esz(dt), 3);
  return posenc_learned_init(7, 0.0, 3, n, dt, stride, out, bytes);
}

/* n = dim; v: kind (2) x dtype (3) x stride (2). */
static posenc_status fam_index(gp_run *r, size_t n, unsigned v) {
  const posenc_dtype dt = (posenc_dtype)(v / 2 % 3);
  const size_t stride = v / 6 ? n + 2 : n, bytes = n ? (2 * stride + n) * esz(dt) : 0;
  void *out = gp_dout(r, bytes);
  gp_gaps(r, n * esz(dt), stride * esz(dt), 3);
  return posenc_index_table((posenc_index_kind)(v % 2), 50, -2, 3, n, dt, stride, out, bytes);
}

/* n = dim; v: source dtype (3) x destination dtype (3) x align_corners (2) x shrink/grow (2). */
static posenc_status fam_resize(gp_run *r, size_t n, unsigned v) {
  const posenc_dtype sdt = (posenc_dtype)(v % 3), ddt = (posenc_dtype)(v / 3 % 3);
  const size_t new_rows = v / 18 % 2 ? 7 : 3, bytes = new_rows * n * esz(ddt);
  posenc_table src;
  src.dtype = sdt; src.n_rows = 5; src.dim = n; src.row_stride = 0;
  src.data = gp_din(r, gp_vals(sdt, 5 * n, v), 5 * n * esz(sdt));
  return posenc_table_resize(&src, new_rows, (int)(v / 9 % 2), ddt, 0, gp_dout(r, bytes), bytes);
}

/* n = embed_dim (a multiple of 4); v: dtype (3) x cls row (2) x stride (2). */
static posenc_status fam_sincos_2d(gp_run *r, size_t n, unsigned v) {
  posenc_sincos_2d_params p = posenc_sincos_2d_default(n, 2, 3);
  size_t bytes = 0;
  void *out;
  p.dtype = (posenc_dtype)(v % 3);
  p.cls_token = (int)(v / 3 % 2);
  p.row_stride = v / 6 ? n + 1 : 0;
  posenc_sincos_2d_bytes(&p, &bytes);
  out = gp_dout(r, bytes);
  gp_gaps(r, n * esz(p.dtype), (p.row_stride ? p.row_stride : n) * esz(p.dtype), 6 + (size_t)p.cls_token);
  return posenc_sincos_2d(&p, out, bytes);
}

/* n = dim, the dtype cycles with n (the Jacobi sweeps cost d^3: one table per n). The work space
 * is scratch: only the singular values and info count. */
static posenc_status fam_spectrum(gp_run *r, size_t n, unsigned v) {
  const posenc_dtype dt = (posenc_dtype)(n % 3);
  const size_t work = posenc_spectrum_work(n);
  posenc_table t;
  double *w, *sv;
  t.dtype = dt; t.n_rows = 5; t.dim = n; t.row_stride = 0;
  t.data = gp_din(r, gp_vals(dt, 5 * n, v), 5 * n * esz(dt));
  w = (double *)gp_scratch(r, work * sizeof *w);
  sv = (double *)gp_out(r, n * sizeof *sv);
  return posenc_spectrum(&t, w, work, sv, (posenc_spectrum_info *)gp_out(r, sizeof(posenc_spectrum_info)));
}

/* ---- .npy headers: n = bytes available ------------------------------------------------------ */
static size_t npy_make(unsigned v, size_t shape[4], unsigned char *hdr) {
  const size_t ndim = v % 5;
  size_t len = 0, i;
  for (i = 0; i < 4; i++) shape[i] = 3 + 5 * i + v;
  if (posenc_npy_header((posenc_npy_type)(v % 8), ndim, shape, hdr, POSENC_NPY_HEADER_MAX, &len) != POSENC_OK)
    die("npy_header rejected a valid shape");
  return len;
}

/* A valid header (v: type and ndim) followed by zero data, cut to n bytes: every prefix shorter
 * than the header is refused without reading past n. */
static posenc_status fam_npy_parse(gp_run *r, size_t n, unsigned v) {
  unsigned char file[256] = {0};
  size_t shape[4];
  const size_t len = npy_make(v, shape, file);
  posenc_npy_info *info = (posenc_npy_info *)gp_scratch(r, sizeof *info);
  posenc_status st = posenc_npy_parse(gp_din(r, file, n), n, info);
  r->expect_ok = n >= len;
  gp_extra(r, &info->problem, sizeof info->problem);
  gp_extra(r, &info->problem_at, sizeof info->problem_at);
  if (st == POSENC_OK) {
    gp_extra(r, info->shape, sizeof info->shape);
    gp_extra(r, &info->data_offset, sizeof info->data_offset);
    gp_extra(r, &info->count, sizeof info->count);
  }
  return st;
}

/* The header written into exactly n bytes of room. */
static posenc_status fam_npy_header(gp_run *r, size_t n, unsigned v) {
  unsigned char hdr[POSENC_NPY_HEADER_MAX];
  size_t shape[4];
  const size_t len = npy_make(v, shape, hdr);
  const size_t *sh = (const size_t *)gp_in(r, shape, v % 5 * sizeof *shape);
  void *out = gp_dout(r, n);
  r->expect_ok = n >= len;
  return posenc_npy_header((posenc_npy_type)(v % 8), v % 5, sh, out, n, (size_t *)gp_out(r, sizeof(size_t)));
}

/* ---- RoPE ------------------------------------------------------------------------------------ */
static posenc_rope *rope;

/* rotary_dim = 2n (n pairs), head_dim = 2n or 2n + 3 (partial rotary, odd head_dim). The rope gets
 * exactly posenc_rope_bytes(cfg) of storage in an arena of its own, ending right before its
 * trailing guard page (starting right after the leading one when the call's buffers do: a second
 * arena), and is read-only while the call runs: a kernel that reads past a small rope's arrays, or
 * writes into it, faults. The rope an arena holds is read-only from the call that made it on, so
 * a call for the same config finds it as made and uses it again: making it (exact frequencies in
 * double-double) was most of a RoPE call's time under emulation. */
static posenc_status rope_make(const gp_run *r, size_t n, int partial, posenc_rope_style style) {
  rope_slot *slot = &rope_slots[r->place == GP_AT_START];
  posenc_rope_config cfg = posenc_rope_default(2 * n + (partial ? 3 : 0));
  size_t bytes = 0, ro_bytes;
  unsigned char *ro;
  if (slot->rope && slot->n == n && slot->partial == partial && slot->style == style) {
    rope = slot->rope;
    return slot->status;
  }
  cfg.rotary_dim = 2 * n;
  cfg.style = style;
  pages_protect(slot->arena.lo, slot->arena.cap, GP_READWRITE);
  slot->n = n; slot->partial = partial; slot->style = style;
  slot->status = posenc_rope_bytes(&cfg, &bytes);
  if (bytes > slot->arena.cap) die("the rope arena is too small");
  rope = slot->rope = (posenc_rope *)(void *)(r->place == GP_AT_START ? slot->arena.lo
                                                                      : slot->arena.lo + slot->arena.cap - bytes);
  if (slot->status == POSENC_OK) slot->status = posenc_rope_init(rope, bytes, &cfg);
  ro = span_pages(&slot->arena, (const unsigned char *)rope, bytes, &ro_bytes);
  if (ro_bytes) pages_protect(ro, ro_bytes, GP_READ);
  return slot->status;
}

/* The factor lists rope_init and set_seq_len read: n = pairs (rotary_dim 2n); v: ggml freq_factors,
 * or LongRoPE's short and long lists (set_seq_len then switches to the long one). The struct is
 * scratch (it holds the list pointers); its frequencies count. */
static posenc_status fam_rope_factors(gp_run *r, size_t n, unsigned v) {
  posenc_rope_config cfg = posenc_rope_default(2 * n);
  posenc_rope *out;
  posenc_status st;
  size_t bytes = 0;
  static float factors[2][40];
  size_t i;
  for (i = 0; i < n; i++) {
    factors[0][i] = 1.0f + 0.25f * (float)(i % 7);
    factors[1][i] = 1.0f + 0.5f * (float)(i % 5);
  }
  if (v) {
    cfg.scaling = POSENC_ROPE_SCALING_LONGROPE;
    cfg.factor = 4.0;
    cfg.original_max_pos = 4096;
    cfg.short_factor = (const float *)gp_in(r, factors[0], n * sizeof(float));
    cfg.long_factor = (const float *)gp_in(r, factors[1], n * sizeof(float));
  } else {
    cfg.freq_factors = (const float *)gp_in(r, factors[0], n * sizeof(float));
  }
  /* exactly the storage the config needs (the header alone where the config is refused) */
  if (posenc_rope_bytes(&cfg, &bytes) != POSENC_OK) bytes = sizeof(posenc_rope);
  out = (posenc_rope *)gp_scratch(r, bytes);
  st = posenc_rope_init(out, bytes, &cfg);
  if (st == POSENC_OK && v) st = posenc_rope_set_seq_len(out, 8192);
  if (st == POSENC_OK) {
    const double *f = posenc_rope_inv_freq(out);
    if (!f) return POSENC_ERR_DIM;
    gp_extra(r, &out->attention_factor, sizeof out->attention_factor);
    gp_extra(r, f, n * sizeof *f);
    /* every array init wrote, after the header (POSENC_ROPE_BYTES(0) bytes) */
    gp_extra(r, (const unsigned char *)out + POSENC_ROPE_BYTES(0), bytes - POSENC_ROPE_BYTES(0));
  }
  return st;
}

/* n = pairs; v: layout (3) x dtype (3) x table/rows (2) x stride (2). */
static posenc_status fam_rope_cache(gp_run *r, size_t n, unsigned v) {
  static const int32_t pos[3] = {31, 0, 70000};
  posenc_rope_cache_spec spec;
  size_t bytes = 0, width;
  const int32_t *ids;
  void *out;
  posenc_status st = rope_make(r, n, 0, POSENC_ROPE_NEOX);
  if (st != POSENC_OK) return st;
  spec.layout = (posenc_rope_cache_layout)(v % 3);
  spec.dtype = (posenc_dtype)(v / 3 % 3);
  width = posenc_rope_cache_width(rope, spec.layout);
  spec.row_stride = v / 18 % 2 ? width + 1 : 0;
  posenc_rope_cache_bytes(rope, &spec, 3, &bytes);
  ids = v / 9 % 2 ? (const int32_t *)gp_in(r, pos, sizeof pos) : NULL;
  out = gp_dout(r, bytes);
  gp_gaps(r, width * esz(spec.dtype), (spec.row_stride ? spec.row_stride : width) * esz(spec.dtype), 3);
  return ids ? posenc_rope_cache_rows(rope, &spec, ids, 3, out, bytes)
             : posenc_rope_cache_table(rope, &spec, 30, 3, out, bytes);
}

/* B = 2 batches of T = 3 tokens; q has 3 heads, k 2 (or 1 with explicit ids). v: style (2) x
 * dtype (3) x source (on the fly, or a HALF/FULL/INTERLEAVED cache) (4) x partial (2) x misc (4:
 * [b][h][t][d] with padding, explicit ids with GQA); the inverse on half of each source x misc.
 * The cache (its dtype cycling through all three) ends at the last position's row. */
static posenc_status fam_rope_apply(gp_run *r, size_t n, unsigned v) {
  static const int32_t ids[6] = {5, 0, 40, 33, 2, 31};
  static unsigned char cache_src[GP_CAP];
  const posenc_rope_style style = (posenc_rope_style)(v % 2);
  const posenc_dtype dt = (posenc_dtype)(v / 2 % 3);
  const unsigned source = v / 6 % 4, misc = v / 48 % 4;
  const int partial = (int)(v / 24 % 2), strided = misc & 1, gqa = misc >> 1 & 1;
  posenc_rope_positions pos;
  posenc_rope_tensor q, k;
  posenc_rope_cache_view cache;
  size_t hd, span_q, span_k;
  posenc_status st = rope_make(r, n, partial, style);
  if (st != POSENC_OK) return st;
  hd = rope->config.head_dim;
  pos.batch = 2; pos.tokens = 3; pos.start = 30;
  pos.ids = gqa ? (const int32_t *)gp_in(r, ids, sizeof ids) : NULL;
  q.dtype = k.dtype = dt;
  q.heads = 3; k.heads = gqa ? 1 : 2;
  if (strided) { /* [b][h][t][d], rows padded by 2 elements */
    q.token_stride = k.token_stride = hd + 2;
    q.head_stride = k.head_stride = 3 * (hd + 2);
    q.batch_stride = q.heads * q.head_stride; k.batch_stride = k.heads * k.head_stride;
  } else {
    q.token_stride = q.head_stride = q.batch_stride = 0;
    k.token_stride = k.head_stride = k.batch_stride = 0;
  }
  span_q = strided ? q.batch_stride + 2 * q.head_stride + 2 * q.token_stride + hd : 2 * 3 * q.heads * hd;
  span_k = strided ? k.batch_stride + (k.heads - 1) * k.head_stride + 2 * k.token_stride + hd
                   : 2 * 3 * k.heads * hd;
  q.data = gp_dinout(r, gp_vals(dt, span_q, v), span_q * esz(dt));
  if (strided) gp_gaps(r, hd * esz(dt), (hd + 2) * esz(dt), 2 * 3 * q.heads); /* rows evenly spaced */
  k.data = gp_dinout(r, gp_vals(dt, span_k, v + 1), span_k * esz(dt));
  if (source) {
    static size_t made_n = (size_t)-1; /* cache_src holds the cache of case (made_n, made_v) */
    static unsigned made_v;
    size_t bytes = 0;
    cache.n_rows = gqa ? 41 : 33;
    cache.spec.layout = (posenc_rope_cache_layout)(source - 1);
    cache.spec.dtype = (posenc_dtype)((v / 2 + v / 24) % 3);
    cache.spec.row_stride = 0;
    if (posenc_rope_cache_bytes(rope, &cache.spec, cache.n_rows, &bytes) != POSENC_OK || bytes > GP_CAP)
      die("cannot size a rope cache");
    if (made_n != n || made_v != v) { /* made once per case, not for each backend and placement */
      if (posenc_rope_cache_table(rope, &cache.spec, 0, cache.n_rows, cache_src, bytes) != POSENC_OK)
        die("cannot build a rope cache");
      made_n = n; made_v = v;
    }
    cache.data = gp_din(r, cache_src, bytes);
  }
  return posenc_rope_apply(rope, source ? &cache : NULL, &pos, &q, &k,
                           (source + misc) % 2 ? POSENC_ROPE_INVERSE : POSENC_ROPE_FORWARD);
}

/* A QK-norm whose weight (head_dim f32) lies in the arena; Gemma's 1 + w for odd v. */
static posenc_rope_norm norm_in(gp_run *r, size_t hd, unsigned v) {
  posenc_rope_norm nm;
  nm.weight = (const float *)gp_in(r, gp_vals(POSENC_DTYPE_F32, hd, v + 5), hd * sizeof(float));
  nm.epsilon = 1e-6f;
  nm.weight_offset = (int)(v % 2);
  return nm;
}

/* Out of place: B = 2 batches of T = 3 tokens, q 3 heads and k 2, on the fly from position 30.
 * v: style (2) x input dtype (3) x output dtype (3) x partial (2) x QK-norm (2: apply_norm). */
static posenc_status fam_rope_apply_out(gp_run *r, size_t n, unsigned v) {
  const posenc_rope_style style = (posenc_rope_style)(v % 2);
  const posenc_dtype din = (posenc_dtype)(v / 2 % 3), dout = (posenc_dtype)(v / 6 % 3);
  posenc_rope_positions pos = {2, 3, NULL, 30};
  posenc_rope_tensor qi = {NULL, din, 3, 0, 0, 0}, ki = {NULL, din, 2, 0, 0, 0}, qo, ko;
  size_t hd;
  posenc_status st = rope_make(r, n, (int)(v / 18 % 2), style);
  if (st != POSENC_OK) return st;
  hd = rope->config.head_dim;
  qo = qi; qo.dtype = dout; ko = ki; ko.dtype = dout;
  qi.data = (void *)(uintptr_t)gp_din(r, gp_vals(din, 6 * 3 * hd, v), 6 * 3 * hd * esz(din));
  ki.data = (void *)(uintptr_t)gp_din(r, gp_vals(din, 6 * 2 * hd, v + 1), 6 * 2 * hd * esz(din));
  qo.data = gp_dout(r, 6 * 3 * hd * esz(dout));
  ko.data = gp_dout(r, 6 * 2 * hd * esz(dout));
  if (v / 36 % 2) {
    posenc_rope_norm qn = norm_in(r, hd, v), kn = norm_in(r, hd, v + 1);
    return posenc_rope_apply_norm(rope, NULL, &pos, &qi, &qo, &qn, &ki, &ko, &kn);
  }
  return posenc_rope_apply_out(rope, NULL, &pos, &qi, &qo, &ki, &ko, POSENC_ROPE_FORWARD);
}

/* Rotate-and-store: Q (3 heads) in place, K and V (2 heads) into cache arrays sized to their last
 * slot. v: input dtype (3) x cache dtype (3) x layout (3: contiguous by position, batch 1, tokens
 * at 30..32 of 33 slots; paged flash or head-major, blocks of 4, 12 slots, B = 2 x T = 3 with a
 * padding token) x partial (2) x QK-norm (2: store_kv_norm). */
static posenc_status fam_rope_store_kv(gp_run *r, size_t n, unsigned v) {
  static const int64_t slot_map[6] = {5, 11, -1, 0, 6, 3};
  const posenc_dtype din = (posenc_dtype)(v % 3), dc = (posenc_dtype)(v / 3 % 3);
  const unsigned layout = v / 9 % 3;
  posenc_rope_positions pos = {layout ? 2 : 1, 3, NULL, 30};
  posenc_rope_tensor q = {NULL, din, 3, 0, 0, 0}, k = {NULL, din, 2, 0, 0, 0}, vt;
  posenc_kv_cache kv;
  const int64_t *slots = NULL;
  size_t hd, ntok, arr;
  posenc_status st = rope_make(r, n, (int)(v / 27 % 2), POSENC_ROPE_NEOX);
  if (st != POSENC_OK) return st;
  hd = rope->config.head_dim;
  ntok = pos.batch * pos.tokens;
  memset(&kv, 0, sizeof kv);
  kv.dtype = dc; kv.heads = 2; kv.n_slots = layout ? 12 : 33;
  if (layout) {
    kv.block_size = 4;
    if (layout == 2) { kv.head_stride = 4 * hd; kv.slot_stride = hd; }
    slots = (const int64_t *)gp_in(r, slot_map, sizeof slot_map);
  }
  arr = kv.n_slots * 2 * hd;
  vt = k;
  q.data = gp_dinout(r, gp_vals(din, ntok * 3 * hd, v), ntok * 3 * hd * esz(din));
  k.data = (void *)(uintptr_t)gp_din(r, gp_vals(din, ntok * 2 * hd, v + 1), ntok * 2 * hd * esz(din));
  vt.data = (void *)(uintptr_t)gp_din(r, gp_vals(din, ntok * 2 * hd, v + 2), ntok * 2 * hd * esz(din));
  kv.k = gp_dout(r, arr * esz(dc));
  kv.v = gp_dout(r, arr * esz(dc));
  if (v / 54 % 2) {
    posenc_rope_norm qn = norm_in(r, hd, v), kn = norm_in(r, hd, v + 1);
    return posenc_rope_store_kv_norm(rope, NULL, &pos, &q, &qn, &k, &kn, &vt, &kv, slots);
  }
  return posenc_rope_store_kv(rope, NULL, &pos, &q, &k, &vt, &kv, slots);
}

/* ---- the masked add ----------------------------------------------------------------------------- */
/* B = 2, T = 3, D = n. Positions: a range from 3 (the table ends at its last row), or ids with pads
 * (token id 1) of which position 7 is past the table's 6 rows: clamped to the last row (with
 * dropout) or a sinusoidal row (without). */
typedef struct embed_case {
  posenc_embed_config cfg;
  posenc_embed_tokens tk;
  size_t rows;                   /* B*T */
} embed_case;

static void embed_setup(gp_run *r, size_t n, int table_dtype, int dropout, int ids, embed_case *c) {
  static const int32_t positions[6] = {7, 0, 3, 5, 1, 2};
  static const int32_t token_ids[6] = {5, 1, 9, 4, 6, 1};
  c->cfg = posenc_embed_default(n);
  c->rows = 6;
  memset(&c->tk, 0, sizeof c->tk);
  c->tk.batch = 2; c->tk.tokens = 3;
  if (ids) {
    c->tk.mode = POSENC_POS_IDS;
    c->tk.positions = (const int32_t *)gp_in(r, positions, sizeof positions);
    c->tk.token_ids = (const int32_t *)gp_in(r, token_ids, sizeof token_ids);
    c->tk.padding_id = 1;
    c->cfg.oob = dropout ? POSENC_OOB_CLAMP : POSENC_OOB_SINUSOIDAL;
  } else {
    c->tk.mode = POSENC_POS_RANGE;
    c->tk.start = 3;
  }
  if (table_dtype >= 0) {
    const posenc_dtype dt = (posenc_dtype)table_dtype;
    c->cfg.table.dtype = dt;
    c->cfg.table.n_rows = 6;
    c->cfg.table.dim = n;
    c->cfg.table.data = gp_din(r, gp_vals(dt, c->cfg.table.n_rows * n, 5), c->cfg.table.n_rows * n * esz(dt));
  }
  if (dropout) { c->cfg.dropout_p = 0.25; c->cfg.dropout_seed = 99; }
}

/* The input tensor of a pass (read-only, or updated in place) and its output tensor: out of place,
 * the output's dtype is `shift` dtypes after the input's. */
static void embed_tensors(gp_run *r, const embed_case *c, size_t n, posenc_dtype dt, int in_place,
                          unsigned shift, unsigned v, posenc_embed_tensor *in, posenc_embed_tensor *out) {
  const size_t count = c->rows * n;
  memset(in, 0, sizeof *in);
  in->dtype = dt;
  *out = *in;
  if (in_place) {
    in->data = out->data = gp_dinout(r, gp_vals(dt, count, v), count * esz(dt));
    return;
  }
  in->data = (void *)gp_din(r, gp_vals(dt, count, v), count * esz(dt));
  out->dtype = (posenc_dtype)((dt + shift) % 3);
  out->data = gp_dout(r, count * esz(out->dtype));
}

/* n = dim; v: x dtype (3) x source (sinusoidal, table f32/f16/bf16) (4) x misc (8: dropout,
 * in place, ids with pads). Out of place, y's dtype is the next one after x's. */
static posenc_status fam_embed_forward(gp_run *r, size_t n, unsigned v) {
  const posenc_dtype xdt = (posenc_dtype)(v % 3);
  const unsigned misc = v / 12 % 8;
  embed_case c;
  posenc_embed_tensor x, y;
  embed_setup(r, n, (int)(v / 3 % 4) - 1, misc & 1, misc >> 2 & 1, &c);
  embed_tensors(r, &c, n, xdt, misc >> 1 & 1, 1, v, &x, &y);
  return posenc_embed_forward(&c.cfg, &c.tk, &x, &y);
}

/* n = dim; v: grad_y dtype (3) x source (sinusoidal, f32 table with a grad_table) (2) x misc (8:
 * dropout, grad_x in place or separate in another dtype, ids with pads). */
static posenc_status fam_embed_backward(gp_run *r, size_t n, unsigned v) {
  const posenc_dtype gdt = (posenc_dtype)(v % 3);
  const int table = (int)(v / 3 % 2);
  const unsigned misc = v / 6 % 8;
  embed_case c;
  posenc_embed_tensor gy, gx;
  float *grad_table = NULL;
  embed_setup(r, n, table ? 0 : -1, misc & 1, misc >> 2 & 1, &c);
  embed_tensors(r, &c, n, gdt, misc >> 1 & 1, 2, v, &gy, &gx);
  if (table) {
    const size_t cells = c.cfg.table.n_rows * n;
    grad_table = (float *)gp_inout(r, gp_vals(F32, cells, v + 3), cells * sizeof(float));
  }
  return posenc_embed_backward(&c.cfg, &c.tk, &gy, &gx, grad_table, 0);
}

/* n = tokens; v: mode (4) x token_ids (2) x mask (2). */
static posenc_status fam_embed_positions(gp_run *r, size_t n, unsigned v) {
  static int32_t vals[2 * 41];
  static uint8_t mask[2 * 41];
  posenc_embed_tokens tk;
  size_t i;
  for (i = 0; i < 2 * n; i++) { vals[i] = (int32_t)(i * 7 % 5); mask[i] = (uint8_t)(i % 4 != 3); }
  memset(&tk, 0, sizeof tk);
  tk.batch = 2; tk.tokens = n;
  tk.mode = (posenc_pos_mode)(v % 4);
  tk.start = 2;
  tk.padding_id = 1;
  if (tk.mode == POSENC_POS_IDS) tk.positions = (const int32_t *)gp_in(r, vals, 2 * n * sizeof *vals);
  if (v / 4 % 2) tk.token_ids = (const int32_t *)gp_in(r, vals, 2 * n * sizeof *vals);
  if (v / 8 % 2) tk.mask = (const uint8_t *)gp_in(r, mask, 2 * n);
  return posenc_embed_positions(&tk, (int32_t *)gp_out(r, 2 * n * sizeof(int32_t)));
}

/* ---- position biases ------------------------------------------------------------------------- */
/* A tile of 2 heads x 3 query rows x n key columns at q_pos 5, k_pos 3. v: dtype f32/f16 (2) x
 * [h][q][k] dense / [q][h][k] with padding (2) x mask (none, causal, window 2 + key_keep, causal +
 * key_keep) (4). */
static void tile_setup(gp_run *r, size_t n, unsigned v, posenc_score_tile *t, posenc_score_mask *m) {
  static uint8_t keep[41];
  const unsigned mk = v / 4 % 4;
  size_t span, i;
  for (i = 0; i < n; i++) keep[i] = (uint8_t)(i % 3 != 1);
  memset(t, 0, sizeof *t);
  t->dtype = v % 2 ? F16 : F32;
  t->heads = 2; t->rows = 3; t->cols = n;
  t->q_pos = 5; t->k_pos = 3;
  if (v / 2 % 2) { t->head_stride = n + 1; t->row_stride = 2 * (n + 1); }
  span = v / 2 % 2 ? 2 * t->row_stride + t->head_stride + n : 6 * n;
  t->scores = gp_dinout(r, gp_vals(t->dtype, span, v), span * esz(t->dtype));
  if (v / 2 % 2) gp_gaps(r, n * esz(t->dtype), (n + 1) * esz(t->dtype), 6); /* rows evenly spaced */
  memset(m, 0, sizeof *m);
  m->causal = mk == 1 || mk == 3;
  m->window = mk == 2 ? 2 : 0;
  if (mk >= 2) m->key_keep = (const uint8_t *)gp_in(r, keep, n);
}

static posenc_status fam_mask(gp_run *r, size_t n, unsigned v) {
  posenc_score_tile t;
  posenc_score_mask m;
  tile_setup(r, n, v, &t, &m);
  return posenc_mask_apply(&t, v % 16 == 0 ? NULL : &m);  /* NULL: validation only */
}

/* v: tile (16) x form (3). */
static posenc_status fam_alibi_add(gp_run *r, size_t n, unsigned v) {
  static const float slopes[2] = {0.5f, 0.0078125f};
  posenc_score_tile t;
  posenc_score_mask m;
  const float *s;
  tile_setup(r, n, v % 16, &t, &m);
  s = (const float *)gp_in(r, slopes, sizeof slopes);
  return posenc_alibi_add(&t, &m, (posenc_alibi_form)(v / 16), 4, s);
}

/* n = heads; v: max_bias 8 or 6.5. */
static posenc_status fam_alibi_slopes(gp_run *r, size_t n, unsigned v) {
  return posenc_alibi_slopes(n, v ? 6.5 : 8.0, (float *)gp_out(r, n * sizeof(float)));
}

/* v: tile (16) x table dtype (3). The table: 32 buckets x 3 heads (head0 = 1), ending at the guard. */
static posenc_status fam_t5_bias(gp_run *r, size_t n, unsigned v) {
  static posenc_t5_plan plan;
  static int planned;
  const posenc_dtype dt = (posenc_dtype)(v / 16);
  posenc_score_tile t;
  posenc_score_mask m;
  posenc_table table;
  if (!planned) {
    const posenc_t5_buckets cfg = {32, 128, 1};
    if (posenc_t5_plan_init(&plan, &cfg) != POSENC_OK) die("t5 plan");
    planned = 1;
  }
  tile_setup(r, n, v % 16, &t, &m);
  table.dtype = dt; table.n_rows = 32; table.dim = 3; table.row_stride = 0;
  table.data = gp_din(r, gp_vals(dt, 96, v), 96 * esz(dt));
  return posenc_t5_bias_add(&t, &m, (const posenc_t5_plan *)gp_in(r, &plan, sizeof plan), &table, 1);
}

/* n = count; v: configuration (causal 32/128, bidirectional 32/128) (2) x first (2). */
static posenc_status fam_t5_range(gp_run *r, size_t n, unsigned v) {
  static const unsigned configs[2] = {36, 100};
  posenc_t5_buckets cfg;
  int bi;
  if (!tl_t5_config(configs[v % 2], &cfg.num_buckets, &cfg.max_distance, &bi)) die("t5 config");
  cfg.bidirectional = bi;
  return posenc_t5_bucket_range(&cfg, v / 2 ? 110 : -20, n, (int32_t *)gp_out(r, n * sizeof(int32_t)));
}

/* n = count; v: bucket_size 0 / 256 (2) x first (2). */
static posenc_status fam_deberta_range(gp_run *r, size_t n, unsigned v) {
  return posenc_deberta_bucket_range(v % 2 ? 256 : 0, 512, v / 2 ? -300 : -5, n,
                                     (int32_t *)gp_out(r, n * sizeof(int32_t)));
}

/* n = k_len, q_len 3; v: bucket_size 0 / 256. */
static posenc_status fam_deberta_relative(gp_run *r, size_t n, unsigned v) {
  int32_t *out = (int32_t *)gp_out(r, 3 * n * sizeof(int32_t));
  return posenc_deberta_relative(3, n, v ? 256 : 0, 512, out, 3 * n);
}

/* n = count; v: first 0 / 5. */
static posenc_status fam_logn(gp_run *r, size_t n, unsigned v) {
  return posenc_logn_scales(8, v ? 5 : 0, n, (float *)gp_out(r, n * sizeof(float)));
}

/* ---- the driver ------------------------------------------------------------------------------ */
typedef struct gp_family {
  const char *name;
  posenc_status (*fn)(gp_run *r, size_t n, unsigned v);
  unsigned variants;
  size_t n_max, min_n, step;     /* n = 0..n_max; valid: n >= min_n and a multiple of step */
} gp_family;

static const gp_family families[] = {
  {"sinusoidal_table/rows", fam_sinusoidal, 24, 40, 1, 1},
  {"txl_relative", fam_txl, 6, 40, 1, 1},
  {"learned_init", fam_learned, 6, 40, 1, 1},
  {"index_table", fam_index, 12, 40, 1, 1},
  {"table_resize", fam_resize, 36, 40, 1, 1},
  {"sincos_2d", fam_sincos_2d, 12, 40, 4, 4},
  {"spectrum", fam_spectrum, 1, 40, 1, 1},
  {"npy_parse", fam_npy_parse, 10, 140, 0, 1},
  {"npy_header", fam_npy_header, 10, 140, 0, 1},
  {"rope_init factor lists", fam_rope_factors, 2, 40, 1, 1},
  {"rope_cache_table/rows", fam_rope_cache, 36, 40, 1, 1},
  {"rope_apply", fam_rope_apply, 192, 40, 1, 1},
  {"rope_apply_out/apply_norm", fam_rope_apply_out, 72, 40, 1, 1},
  {"rope_store_kv/store_kv_norm", fam_rope_store_kv, 108, 40, 1, 1},
  {"embed_forward", fam_embed_forward, 96, 40, 1, 1},
  {"embed_backward", fam_embed_backward, 48, 40, 1, 1},
  {"embed_positions", fam_embed_positions, 16, 40, 1, 1},
  {"mask_apply", fam_mask, 16, 40, 1, 1},
  {"alibi_add", fam_alibi_add, 48, 40, 1, 1},
  {"alibi_slopes", fam_alibi_slopes, 2, 40, 1, 1},
  {"t5_bias_add", fam_t5_bias, 48, 40, 1, 1},
  {"t5_bucket_range", fam_t5_range, 4, 40, 1, 1},
  {"deberta_bucket_range", fam_deberta_range, 4, 40, 1, 1},
  {"deberta_relative", fam_deberta_relative, 2, 40, 1, 1},
  {"logn_scales", fam_logn, 2, 40, 1, 1},
};

static unsigned long calls[POSENC_ISA_COUNT];
static unsigned char result[GP_ARENAS * GP_CAP + 256], reference[GP_ARENAS * GP_CAP + 256];

static void fail(const char *what) {
  if (++tl_failed <= 40) printf("FAIL %s: %s\n", where, what);
}

/* Every n and variant of a family on every backend, in all three placements, against scalar (its
 * buffers at the end of their pages, aligned). */
static void run_family(const gp_family *f) {
  size_t n, ref_len = 0, len;
  unsigned v;
  int place;
  for (n = 0; n <= f->n_max; n++) {
    for (v = 0; v < f->variants; v++) {
      BK_FOR_EACH(it) {
        for (place = GP_AT_END; place <= GP_MISALIGNED; place++) {
          gp_run r;
          posenc_status st;
          memset(&r, 0, sizeof r);
          r.place = place;
          r.salt = (unsigned)n + v;
          r.gap_buf = -1;
          r.expect_ok = n >= f->min_n && n % f->step == 0;
          snprintf(where, sizeof where, "%s n=%u variant=%u backend=%s buffers at %s", f->name,
                   (unsigned)n, v, posenc_isa_name(it.isa), place == GP_AT_END     ? "the end of their pages"
                   : place == GP_AT_START ? "the start of their pages"
                                          : "1-3 bytes past alignment");
          st = f->fn(&r, n, v);
          calls[it.isa]++;
          if (r.expect_ok && st != POSENC_OK) fail(posenc_strerror(st));
          else if (!r.expect_ok && st == POSENC_OK) fail("accepted an invalid size");
          else if (st != POSENC_OK && !gp_untouched(&r)) fail("wrote on error");
          else if (st == POSENC_OK && !gp_gaps_intact(&r)) fail("wrote between rows");
          else tl_passed++;
          len = gp_result(&r, st, result);
          if (it.index == 0 && place == GP_AT_END) { memcpy(reference, result, len); ref_len = len; }
          else if (len != ref_len || memcmp(result, reference, len) != 0)
            fail("result differs from the scalar backend's");
          else tl_passed++;
          gp_release(&r);
        }
      }
    }
  }
}

int main(void) {
  size_t k;
  int isa;
#if defined(_WIN32)
  signal(SIGSEGV, on_fault);
#else
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_fault;
  sigaction(SIGSEGV, &sa, NULL);
  sigaction(SIGBUS, &sa, NULL);
#endif
  arenas_init();
  pools_init();
  bk_report(stdout);
  for (k = 0; k < sizeof families / sizeof families[0]; k++) {
    const clock_t t0 = clock();
    const unsigned long before = calls[0];
    run_family(&families[k]);
    printf("%-22s %6lu calls per backend, %.2f s CPU\n", families[k].name, calls[0] - before,
           (double)(clock() - t0) / CLOCKS_PER_SEC);
  }
  BK_EACH_USABLE(isa) printf("%s: %lu guarded calls\n", posenc_isa_name((posenc_isa)isa), calls[isa]);
  return tl_summary();
}
