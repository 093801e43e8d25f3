/* Bad input, one argument at a time (issue 7): for every public function a valid call, then each
 * bad value of each argument with everything else valid, the exact status it must return, and
 * the memory it may write compared with a snapshot taken just before the call: on error nothing
 * is written. Also: posenc_strerror names every status distinctly, with a fallback for unknown
 * values, and every status the header declares is returned by some case here (SELFTEST aside:
 * a correct build cannot reach it; test_single_file's -ffast-math build does).
 *
 * CASE(fn, want, mutation): fn's arguments start from fn_ok() (a valid call), `mutation` (C
 * statements on `a`) makes one of them bad, fn_run(&a) calls posenc. Outputs, and in-place data,
 * live in MEM, which is filled with TL_CANARY first; a mutation may plant inputs there (the
 * aliasing cases): the snapshot is taken after it. Arguments that are structs point to statics
 * that fn_ok() resets. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include "posenc.h"
#include "testlib.h"

#define F32 POSENC_DTYPE_F32
#define F16 POSENC_DTYPE_F16
#define BAD_DTYPE ((posenc_dtype)7)
#define HUGE_SZ (SIZE_MAX / 2)
/* An output pointer whose buffer would run past the end of the address space */
#define TOP_PTR ((void *)(uintptr_t)(UINTPTR_MAX - 15))

static union { double align; unsigned char b[1 << 15]; } g_mem;
static unsigned char g_snap[sizeof g_mem.b];
#define MEM (g_mem.b)
#define MEM_F32(i) ((float *)(void *)MEM + (i))
#define MEM_I32(i) ((int32_t *)(void *)MEM + (i))

static int g_reached[32]; /* g_reached[-status]: some case expected it and got it */
static unsigned g_cases;

static void expect(const char *fn, const char *what, posenc_status got, posenc_status want) {
  g_cases++;
  CHECK(got == want, "%s {%s}: %d (%s), want %d (%s)", fn, what, (int)got, posenc_strerror(got), (int)want,
        posenc_strerror(want));
  if (got == want && got < 0 && -(int)got < 32) g_reached[-(int)got] = 1;
  if (want != POSENC_OK)
    CHECK(memcmp(MEM, g_snap, sizeof g_snap) == 0, "%s {%s} wrote before failing", fn, what);
}

#define CASE(fn, want, ...) do {                                                   \
    fn##_args a;                                                                   \
    memset(MEM, TL_CANARY, sizeof MEM);                                            \
    a = fn##_ok();                                                                 \
    { __VA_ARGS__; }                                                               \
    memcpy(g_snap, MEM, sizeof g_snap);                                            \
    expect(#fn, #__VA_ARGS__, fn##_run(&a), want);                                 \
  } while (0)

/* Read-only inputs, valid by default; a case that spoils one restores it itself. */
static const int32_t g_pos[8] = {0, 1, 2, 3, 4, 5, 6, 7};
static float g_tab[64 * 4];          /* tables: up to 64 rows x 4, or 32 x 8 */
static float g_x[64];                /* masked-add inputs (zeros) */
static double g_work[64];            /* spectrum scratch */

/* ---- sinusoidal tables (mode 0: _table, 1: _rows, 2: _bytes) ------------------------------- */
static posenc_sinusoidal_params s_sp;
typedef struct { posenc_sinusoidal_params *p; int32_t start; const int32_t *pos; size_t n; void *out;
                 size_t bytes; size_t *bytes_out; int mode; } sin_args;
static sin_args sin_ok(void) {
  sin_args a;
  s_sp = posenc_sinusoidal_default(8);
  a.p = &s_sp; a.start = 0; a.pos = g_pos; a.n = 4; a.out = MEM; a.bytes = 4 * 8 * 4;
  a.bytes_out = (size_t *)(void *)MEM; a.mode = 0;
  return a;
}
static posenc_status sin_run(sin_args *a) {
  if (a->mode == 2) return posenc_sinusoidal_bytes(a->p, a->n, a->bytes_out);
  if (a->mode == 1) return posenc_sinusoidal_rows(a->p, a->pos, a->n, a->out, a->bytes);
  return posenc_sinusoidal_table(a->p, a->start, a->n, a->out, a->bytes);
}

static void test_sinusoidal(void) {
  int mode;
  for (mode = 0; mode < 3; mode++) {
#define SIN(want, ...) CASE(sin, want, a.mode = mode; __VA_ARGS__)
    SIN(POSENC_OK, (void)a);
    SIN(POSENC_ERR_NULL, a.p = NULL);
    SIN(POSENC_ERR_SIZE, a.n = 0);
    SIN(POSENC_ERR_SIZE, s_sp.dim = 0);
    SIN(POSENC_ERR_LAYOUT, s_sp.layout = (posenc_layout)7);
    SIN(POSENC_ERR_DTYPE, s_sp.dtype = BAD_DTYPE);
    SIN(POSENC_ERR_PARAM, s_sp.freqs = (posenc_freq_rule)9);
    SIN(POSENC_ERR_DIM, s_sp.freqs = POSENC_FREQ_FAIRSEQ; s_sp.dim = 2);   /* one frequency */
    SIN(POSENC_ERR_PARAM, s_sp.freqs = POSENC_FREQ_T2T; s_sp.min_timescale = NAN);
    SIN(POSENC_ERR_PARAM, s_sp.freqs = POSENC_FREQ_T2T; s_sp.min_timescale = -1.0);
    SIN(POSENC_ERR_PARAM, s_sp.freqs = POSENC_FREQ_T2T; s_sp.min_timescale = 1e31);
    SIN(POSENC_ERR_STRIDE, s_sp.row_stride = 7);
    SIN(POSENC_ERR_OVERFLOW, s_sp.row_stride = HUGE_SZ);
    SIN(POSENC_ERR_OVERFLOW, a.n = HUGE_SZ);
    SIN(POSENC_ERR_OVERFLOW, s_sp.dim = HUGE_SZ; a.n = 1);
    if (mode == 2) {
      SIN(POSENC_ERR_NULL, a.bytes_out = NULL);
      SIN(POSENC_OK, s_sp.base = NAN); /* _bytes does not look at base */
      continue;
    }
    SIN(POSENC_ERR_NULL, a.out = NULL);
    SIN(POSENC_ERR_OVERFLOW, a.out = TOP_PTR);
    SIN(POSENC_ERR_BUFFER, a.bytes = 4 * 8 * 4 - 1);
    SIN(POSENC_ERR_BASE, s_sp.base = 0.0);
    SIN(POSENC_ERR_BASE, s_sp.base = -10000.0);
    SIN(POSENC_ERR_BASE, s_sp.base = NAN);
    SIN(POSENC_ERR_BASE, s_sp.base = INFINITY);
    SIN(POSENC_ERR_BASE, s_sp.base = 1e31);
    SIN(POSENC_ERR_BASE, s_sp.base = 1e-31);
    SIN(POSENC_ERR_POSITION, s_sp.base = 1e-30; a.start = 1000); /* |p| * omega beyond 2^50 */
    if (mode == 0) SIN(POSENC_ERR_POSITION, a.start = INT32_MAX; a.n = 2);
    if (mode == 1) {
      SIN(POSENC_ERR_NULL, a.pos = NULL);
      SIN(POSENC_ERR_ALIAS, a.pos = MEM_I32(2));                 /* positions inside out */
      SIN(POSENC_ERR_ALIAS, a.pos = MEM_I32(4 * 8 - 1));         /* the last element */
      SIN(POSENC_OK, a.pos = MEM_I32(4 * 8));                    /* just after out */
    }
#undef SIN
  }
}

/* ---- RoPE init and set_seq_len ------------------------------------------------------------- */
static posenc_rope_config s_rc;
static float s_short[4], s_long[4], s_ff[4];
/* The rope lives at MEM in exactly the storage its config needs (head_dim 8: POSENC_ROPE_BYTES(8)),
 * so a write past it shows in the snapshot. */
#define RINIT_BYTES POSENC_ROPE_BYTES(8)
typedef struct { posenc_rope *rope; size_t bytes; const posenc_rope_config *cfg; } rinit_args;
static rinit_args rinit_ok(void) {
  rinit_args a;
  size_t i;
  s_rc = posenc_rope_default(8);
  for (i = 0; i < 4; i++) { s_short[i] = 1.0f; s_long[i] = 2.0f; s_ff[i] = 1.5f; }
  a.rope = (posenc_rope *)(void *)MEM; a.bytes = RINIT_BYTES; a.cfg = &s_rc;
  return a;
}
static posenc_status rinit_run(rinit_args *a) { return posenc_rope_init(a->rope, a->bytes, a->cfg); }

typedef struct { posenc_rope *rope; uint32_t seq_len; } rseq_args;
static rseq_args rseq_ok(void) {
  rseq_args a;
  rinit_ok();
  s_rc.scaling = POSENC_ROPE_SCALING_LONGROPE; s_rc.factor = 4.0; s_rc.original_max_pos = 4096;
  s_rc.short_factor = s_short; s_rc.long_factor = s_long;
  a.rope = (posenc_rope *)(void *)MEM; a.seq_len = 8192;
  if (posenc_rope_init(a.rope, RINIT_BYTES, &s_rc) != POSENC_OK) CHECK(0, "rope_set_seq_len setup");
  return a;
}
static posenc_status rseq_run(rseq_args *a) { return posenc_rope_set_seq_len(a->rope, a->seq_len); }

/* posenc_rope_bytes: *bytes lives in MEM, so an error that wrote it shows in the snapshot. */
typedef struct { const posenc_rope_config *cfg; size_t *bytes; } rbytes_args;
static rbytes_args rbytes_ok(void) {
  rbytes_args a;
  rinit_ok();
  a.cfg = &s_rc; a.bytes = (size_t *)(void *)MEM;
  return a;
}
static posenc_status rbytes_run(rbytes_args *a) { return posenc_rope_bytes(a->cfg, a->bytes); }

/* A double's alignment (posenc_rope_init's BUFFER for a misaligned rope). */
struct double_align { char c; double d; };
#define DOUBLE_ALIGN offsetof(struct double_align, d)

static void test_rope_init(void) {
#define RI(want, ...) CASE(rinit, want, __VA_ARGS__)
  RI(POSENC_OK, (void)a);
  RI(POSENC_ERR_NULL, a.rope = NULL);
  RI(POSENC_ERR_NULL, a.cfg = NULL);
  RI(POSENC_ERR_DIM, s_rc.head_dim = 1);
  RI(POSENC_ERR_DIM, s_rc.head_dim = 0);
  RI(POSENC_ERR_DIM, s_rc.rotary_dim = 3);
  RI(POSENC_ERR_DIM, s_rc.rotary_dim = 10);
  RI(POSENC_ERR_DIM, s_rc.head_dim = POSENC_ROPE_MAX_DIM + 2);
  RI(POSENC_ERR_BASE, s_rc.base = 0.0);
  RI(POSENC_ERR_BASE, s_rc.base = -1.0);
  RI(POSENC_ERR_BASE, s_rc.base = NAN);
  RI(POSENC_ERR_BASE, s_rc.base = INFINITY);
  RI(POSENC_ERR_BASE, s_rc.base = 1e31);
  RI(POSENC_ERR_BASE, s_rc.base = 1e-31);
  RI(POSENC_ERR_PARAM, s_rc.style = (posenc_rope_style)2);
  RI(POSENC_ERR_PARAM, s_rc.scaling = (posenc_rope_scaling)7);
  RI(POSENC_ERR_PARAM, s_rc.mrope = (posenc_rope_mrope)3);
  RI(POSENC_ERR_PARAM, s_rc.scaling = POSENC_ROPE_SCALING_LINEAR; s_rc.factor = 0.0);
  RI(POSENC_ERR_PARAM, s_rc.scaling = POSENC_ROPE_SCALING_LINEAR; s_rc.factor = -2.0);
  RI(POSENC_ERR_PARAM, s_rc.scaling = POSENC_ROPE_SCALING_LINEAR; s_rc.factor = NAN);
  RI(POSENC_ERR_PARAM, s_rc.scaling = POSENC_ROPE_SCALING_LINEAR; s_rc.factor = INFINITY);
  RI(POSENC_OK, s_rc.scaling = POSENC_ROPE_SCALING_LINEAR; s_rc.factor = 2.0);
  /* factors outside [1e-30, 1e30] made NaN frequencies (found by fuzz_rope) */
  RI(POSENC_ERR_PARAM, s_rc.scaling = POSENC_ROPE_SCALING_LINEAR; s_rc.factor = 1e-310);
  RI(POSENC_ERR_PARAM, s_rc.scaling = POSENC_ROPE_SCALING_NTK; s_rc.factor = 1e31);
  RI(POSENC_ERR_PARAM, s_rc.scaling = POSENC_ROPE_SCALING_DYNAMIC; s_rc.factor = 1e300; s_rc.original_max_pos = 3831;
     s_rc.seq_len = 32863);
  RI(POSENC_OK, s_rc.scaling = POSENC_ROPE_SCALING_NTK; s_rc.factor = 1e30);
  /* hf_compat: HF's float32 base must be a normal float (1e30^(8/6) * 1e4 is not), and its float32
   * frequencies finite (base 1e-30 and a linear factor 1e-30 overflow them) */
  RI(POSENC_ERR_PARAM, s_rc.scaling = POSENC_ROPE_SCALING_NTK; s_rc.factor = 1e30; s_rc.hf_compat = 1);
  RI(POSENC_ERR_PARAM, s_rc.base = 1e-30; s_rc.scaling = POSENC_ROPE_SCALING_LINEAR; s_rc.factor = 1e-30;
     s_rc.hf_compat = 1);
  RI(POSENC_OK, s_rc.base = 1e-30; s_rc.scaling = POSENC_ROPE_SCALING_LINEAR; s_rc.factor = 1e-30);
  RI(POSENC_ERR_PARAM, s_rc.scaling = POSENC_ROPE_SCALING_DYNAMIC; s_rc.factor = 1e30; s_rc.original_max_pos = 16;
     s_rc.hf_compat = 1); /* HF: 1e30*S/L - (1e30 - 1) = 0 */
  RI(POSENC_OK, s_rc.scaling = POSENC_ROPE_SCALING_NTK; s_rc.factor = 4.0; s_rc.hf_compat = 1);
  RI(POSENC_ERR_DIM, s_rc.scaling = POSENC_ROPE_SCALING_NTK; s_rc.factor = 2.0; s_rc.rotary_dim = 2);
  RI(POSENC_ERR_DIM, s_rc.scaling = POSENC_ROPE_SCALING_DYNAMIC; s_rc.factor = 2.0; s_rc.rotary_dim = 2;
     s_rc.original_max_pos = 16);
  RI(POSENC_ERR_PARAM, s_rc.scaling = POSENC_ROPE_SCALING_DYNAMIC; s_rc.factor = 2.0);   /* L = 0 */
  RI(POSENC_ERR_PARAM, s_rc.scaling = POSENC_ROPE_SCALING_YARN; s_rc.factor = 4.0);      /* L = 0 */
  RI(POSENC_ERR_PARAM, s_rc.scaling = POSENC_ROPE_SCALING_LLAMA3; s_rc.factor = 8.0);    /* L = 0 */
#define YARN s_rc.scaling = POSENC_ROPE_SCALING_YARN; s_rc.factor = 4.0; s_rc.original_max_pos = 4096
  RI(POSENC_OK, YARN);
  RI(POSENC_ERR_PARAM, YARN; s_rc.beta_fast = -1.0);
  RI(POSENC_ERR_PARAM, YARN; s_rc.beta_slow = NAN);
  RI(POSENC_ERR_PARAM, YARN; s_rc.beta_fast = INFINITY);
  RI(POSENC_ERR_PARAM, YARN; s_rc.mscale = -1.0);
  RI(POSENC_ERR_PARAM, YARN; s_rc.mscale_all_dim = NAN);
  /* derived values: base 1 makes ln(base) = 0, which HF divides by (the ramp came out NaN and the
   * frequencies unscaled); mscale 1e300 over mscale_all_dim 1 gave an attention factor of 1.2e299 */
  RI(POSENC_ERR_PARAM, YARN; s_rc.base = 1.0);
  RI(POSENC_OK, YARN; s_rc.base = 1.0 + 0x1p-40);
  RI(POSENC_OK, YARN; s_rc.base = 0.5);
  RI(POSENC_ERR_PARAM, YARN; s_rc.mscale = 1e300; s_rc.mscale_all_dim = 1.0);
  RI(POSENC_ERR_PARAM, YARN; s_rc.mscale = 1.0; s_rc.mscale_all_dim = 1e300);
  RI(POSENC_OK, YARN; s_rc.mscale = 1e300; s_rc.mscale_all_dim = 1e300);
  RI(POSENC_OK, YARN; s_rc.mscale = 1e300; s_rc.attention_factor = 1.0);  /* explicit: mscale unused */
#undef YARN
#define LLAMA3 s_rc.scaling = POSENC_ROPE_SCALING_LLAMA3; s_rc.factor = 8.0; s_rc.original_max_pos = 8192
  RI(POSENC_OK, LLAMA3);
  RI(POSENC_ERR_PARAM, LLAMA3; s_rc.low_freq_factor = 4.0; s_rc.high_freq_factor = 1.0);
  RI(POSENC_ERR_PARAM, LLAMA3; s_rc.low_freq_factor = NAN);
  RI(POSENC_ERR_PARAM, LLAMA3; s_rc.high_freq_factor = -4.0);
#undef LLAMA3
#define LONGROPE s_rc.scaling = POSENC_ROPE_SCALING_LONGROPE; s_rc.factor = 4.0; \
  s_rc.original_max_pos = 4096; s_rc.short_factor = s_short; s_rc.long_factor = s_long
  RI(POSENC_OK, LONGROPE);
  RI(POSENC_ERR_NULL, LONGROPE; s_rc.short_factor = NULL);
  RI(POSENC_ERR_NULL, LONGROPE; s_rc.long_factor = NULL);
  RI(POSENC_ERR_PARAM, LONGROPE; s_rc.original_max_pos = 1);
  RI(POSENC_ERR_PARAM, LONGROPE; s_short[3] = 0.0f);
  RI(POSENC_ERR_PARAM, LONGROPE; s_long[0] = NAN);
  RI(POSENC_ERR_PARAM, LONGROPE; s_long[1] = -1.0f);
#undef LONGROPE
  RI(POSENC_OK, s_rc.freq_factors = s_ff);
  RI(POSENC_ERR_PARAM, s_rc.freq_factors = s_ff; s_ff[2] = INFINITY);
  RI(POSENC_ERR_PARAM, s_rc.freq_factors = s_ff; s_ff[0] = 0.0f);
  RI(POSENC_ERR_PARAM, s_rc.freq_factors = s_ff; s_rc.hf_compat = 1);
  /* factor lists inside *rope: init zeroes the arrays and then reads the lists */
  /* (the arrays start at POSENC_ROPE_BYTES(0), the header's rounded size; RINIT_BYTES - 16: the
   * last 4 floats of the storage, in HF's float32 frequencies) */
  RI(POSENC_ERR_ALIAS, s_rc.freq_factors = (const float *)(const void *)(MEM + POSENC_ROPE_BYTES(0));
     memcpy(MEM + POSENC_ROPE_BYTES(0), s_ff, sizeof s_ff));
  RI(POSENC_ERR_ALIAS, s_rc.scaling = POSENC_ROPE_SCALING_LONGROPE; s_rc.factor = 4.0;
     s_rc.original_max_pos = 4096; s_rc.short_factor = s_short;
     s_rc.long_factor = (const float *)(const void *)(MEM + RINIT_BYTES - sizeof s_long);
     memcpy(MEM + RINIT_BYTES - sizeof s_long, s_long, sizeof s_long));
  RI(POSENC_ERR_ALIAS, s_rc.freq_factors = (const float *)(const void *)(MEM + RINIT_BYTES - 4);
     memcpy(MEM + RINIT_BYTES - 4, s_ff, sizeof s_ff));                 /* its first float is the last */
  RI(POSENC_OK, s_rc.freq_factors = (const float *)(const void *)(MEM + RINIT_BYTES);
     memcpy(MEM + RINIT_BYTES, s_ff, sizeof s_ff));                     /* just after the storage */
  RI(POSENC_ERR_PARAM, s_rc.attention_factor = -1.0);
  RI(POSENC_ERR_PARAM, s_rc.attention_factor = NAN);
  RI(POSENC_ERR_PARAM, s_rc.attention_factor = 1e31);
  RI(POSENC_OK, s_rc.mrope = POSENC_ROPE_MROPE_SECTIONS; s_rc.mrope_section[0] = 2; s_rc.mrope_section[1] = 1;
     s_rc.mrope_section[2] = 1);
  RI(POSENC_ERR_DIM, s_rc.mrope = POSENC_ROPE_MROPE_SECTIONS; s_rc.mrope_section[0] = 1;
     s_rc.mrope_section[1] = 1; s_rc.mrope_section[2] = 1);
  RI(POSENC_ERR_DIM, s_rc.mrope = POSENC_ROPE_MROPE_INTERLEAVED; s_rc.mrope_section[0] = UINT32_MAX;
     s_rc.mrope_section[1] = 5); /* the sum wraps in 32 bits to 4 */
  /* the storage: exactly posenc_rope_bytes(config), a byte short, aligned for a double or not.
   * POSENC_ROPE_BYTES rounds pairs up to 16: head_dim 32 fits the storage of head_dim 8, 34 not */
  RI(POSENC_ERR_BUFFER, a.bytes = RINIT_BYTES - 1);
  RI(POSENC_ERR_BUFFER, a.bytes = 0);
  RI(POSENC_ERR_BUFFER, a.bytes = sizeof(posenc_rope));
  RI(POSENC_OK, a.bytes = sizeof MEM);
  RI(POSENC_OK, s_rc = posenc_rope_default(32));
  RI(POSENC_ERR_BUFFER, s_rc = posenc_rope_default(34));
  RI(POSENC_OK, s_rc = posenc_rope_default(34); a.bytes = POSENC_ROPE_BYTES(34));
  RI(POSENC_ERR_BUFFER, s_rc = posenc_rope_default(34); a.bytes = POSENC_ROPE_BYTES(34) - 1);
  RI(POSENC_OK, a.rope = (posenc_rope *)(void *)(MEM + DOUBLE_ALIGN));
  if (DOUBLE_ALIGN > 1) {
    RI(POSENC_ERR_BUFFER, a.rope = (posenc_rope *)(void *)(MEM + 1));
    RI(POSENC_ERR_BUFFER, a.rope = (posenc_rope *)(void *)(MEM + DOUBLE_ALIGN - 1); a.bytes = sizeof MEM - 8);
  }
#undef RI
  CASE(rbytes, POSENC_OK, (void)a);
  CASE(rbytes, POSENC_ERR_NULL, a.cfg = NULL);
  CASE(rbytes, POSENC_ERR_NULL, a.bytes = NULL);
  CASE(rbytes, POSENC_ERR_DIM, s_rc.rotary_dim = 3);
  CASE(rbytes, POSENC_ERR_DIM, s_rc.head_dim = 1);
  CASE(rbytes, POSENC_ERR_DIM, s_rc.head_dim = POSENC_ROPE_MAX_DIM + 2);
  CASE(rbytes, POSENC_ERR_BASE, s_rc.base = NAN);
  CASE(rbytes, POSENC_ERR_PARAM, s_rc.scaling = POSENC_ROPE_SCALING_LINEAR; s_rc.factor = -1.0);
  CASE(rbytes, POSENC_ERR_NULL, s_rc.scaling = POSENC_ROPE_SCALING_LONGROPE; s_rc.factor = 4.0;
       s_rc.original_max_pos = 4096);  /* LongRoPE's lists missing */
  CASE(rseq, POSENC_OK, (void)a);
  CASE(rseq, POSENC_ERR_NULL, a.rope = NULL);
  /* a rope init never made (garbage), or one moved away from where init made it: refused, nothing written */
  CASE(rseq, POSENC_ERR_DIM, memset(MEM, 0x5a, RINIT_BYTES));
  CASE(rseq, POSENC_ERR_DIM, memset(MEM, 0, RINIT_BYTES));
  CASE(rseq, POSENC_ERR_DIM, memmove(MEM + 4096, MEM, RINIT_BYTES); a.rope = (posenc_rope *)(void *)(MEM + 4096));
  CASE(rseq, POSENC_ERR_PARAM, s_long[2] = NAN);  /* the lists are read again */
  CASE(rseq, POSENC_ERR_PARAM, s_short[2] = 0.0f; a.seq_len = 100);
}

/* ---- RoPE caches --------------------------------------------------------------------------- */
typedef POSENC_ROPE_STORAGE(8) rope8_store;
static rope8_store g_rope_st, g_rope_far_st, g_rope_zero_st; /* head_dim 8; base 1e-30; never initialised */
static rope8_store s_bad_st;                                  /* a copy of g_rope with one field spoiled */
static posenc_rope *const g_rope = &g_rope_st.rope, *const g_rope_far = &g_rope_far_st.rope,
                   *const g_rope_zero = &g_rope_zero_st.rope, *const s_bad = &s_bad_st.rope;
/* s_bad: g_rope's whole storage copied, and made to say where it now is (a rope refuses a copy of
 * itself as ERR_DIM: a case that spoils one field must get past that check to reach its own). */
#define BAD_COPY (memcpy(&s_bad_st, &g_rope_st, sizeof s_bad_st), s_bad->self = s_bad)
/* Re-inits s_bad with g_rope's config plus hf_compat; flip: then switches the flag off. */
static void hf_rope_in_bad(int flip) {
  posenc_rope_config c = g_rope->config;
  c.hf_compat = 1;
  CHECK(posenc_rope_init(s_bad, sizeof s_bad_st, &c) == POSENC_OK, "g_rope's config with hf_compat");
  if (flip) s_bad->config.hf_compat = 0;
}
static posenc_rope_cache_spec s_spec;
typedef struct { const posenc_rope *rope; const posenc_rope_cache_spec *spec; int32_t start;
                 const int32_t *pos; size_t n; void *out; size_t bytes; size_t *bytes_out;
                 int mode; } rcache_args;
static rcache_args rcache_ok(void) {
  rcache_args a;
  s_spec.layout = POSENC_ROPE_CACHE_HALF; s_spec.dtype = F32; s_spec.row_stride = 0;
  a.rope = g_rope; a.spec = &s_spec; a.start = 0; a.pos = g_pos; a.n = 4; a.out = MEM; a.bytes = 4 * 8 * 4;
  a.bytes_out = (size_t *)(void *)MEM; a.mode = 0;
  return a;
}
static posenc_status rcache_run(rcache_args *a) {
  if (a->mode == 2) return posenc_rope_cache_bytes(a->rope, a->spec, a->n, a->bytes_out);
  if (a->mode == 1) return posenc_rope_cache_rows(a->rope, a->spec, a->pos, a->n, a->out, a->bytes);
  return posenc_rope_cache_table(a->rope, a->spec, a->start, a->n, a->out, a->bytes);
}

static void test_rope_cache(void) {
  int mode;
  for (mode = 0; mode < 3; mode++) {
#define RC(want, ...) CASE(rcache, want, a.mode = mode; __VA_ARGS__)
    RC(POSENC_OK, (void)a);
    RC(POSENC_ERR_NULL, a.rope = NULL);
    RC(POSENC_ERR_NULL, a.spec = NULL);
    RC(POSENC_ERR_SIZE, a.n = 0);
    RC(POSENC_ERR_LAYOUT, s_spec.layout = (posenc_rope_cache_layout)3);
    RC(POSENC_ERR_DTYPE, s_spec.dtype = BAD_DTYPE);
    RC(POSENC_ERR_DIM, a.rope = g_rope_zero);
    /* a copy of g_rope's whole storage is refused until it says where it is; then it works */
    RC(POSENC_ERR_DIM, memcpy(&s_bad_st, &g_rope_st, sizeof s_bad_st); a.rope = s_bad);
    RC(POSENC_OK, BAD_COPY; a.rope = s_bad);
    RC(POSENC_ERR_DIM, BAD_COPY; s_bad->config.style = (posenc_rope_style)7; a.rope = s_bad);
    RC(POSENC_ERR_DIM, BAD_COPY; s_bad->config.rotary_dim = 6; a.rope = s_bad);
    RC(POSENC_ERR_STRIDE, s_spec.row_stride = 7);
    RC(POSENC_ERR_OVERFLOW, s_spec.row_stride = HUGE_SZ);
    RC(POSENC_ERR_OVERFLOW, a.n = HUGE_SZ);
    if (mode == 2) { RC(POSENC_ERR_NULL, a.bytes_out = NULL); continue; }
    RC(POSENC_ERR_NULL, a.out = NULL);
    RC(POSENC_ERR_OVERFLOW, a.out = TOP_PTR);
    RC(POSENC_ERR_BUFFER, a.bytes = 4 * 8 * 4 - 1);
    RC(POSENC_ERR_BUFFER, s_spec.layout = POSENC_ROPE_CACHE_FULL);
    RC(POSENC_ERR_POSITION, a.rope = g_rope_far; a.start = 1);
    if (mode == 0) RC(POSENC_ERR_POSITION, a.start = INT32_MAX; a.n = 2);
    if (mode == 1) {
      RC(POSENC_ERR_NULL, a.pos = NULL);
      RC(POSENC_ERR_ALIAS, a.pos = MEM_I32(3));
      RC(POSENC_OK, a.pos = MEM_I32(4 * 8));
    }
#undef RC
  }
  CHECK(posenc_rope_cache_width(g_rope, POSENC_ROPE_CACHE_FULL) == 16 &&
        posenc_rope_cache_width(g_rope, (posenc_rope_cache_layout)3) == 0 &&
        posenc_rope_cache_width(NULL, POSENC_ROPE_CACHE_HALF) == 0 &&
        posenc_rope_cache_width(g_rope_zero, POSENC_ROPE_CACHE_HALF) == 0, "posenc_rope_cache_width");
  memcpy(&s_bad_st, &g_rope_st, sizeof s_bad_st);
  CHECK(posenc_rope_cache_width(s_bad, POSENC_ROPE_CACHE_HALF) == 0, "cache_width of a copied rope");
}

/* ---- RoPE frequencies: NULL for a NULL rope, one init did not make, or (f32) without hf_compat */
static void test_rope_inv_freq(void) {
  static rope8_store hf_st, junk_st;
  posenc_rope *hf = &hf_st.rope, *junk = &junk_st.rope;
  posenc_rope_config c = posenc_rope_default(8);
  const double *f;
  const float *f32;
  size_t i;
  g_cases++;
  CHECK(posenc_rope_inv_freq(NULL) == NULL && posenc_rope_inv_freq_f32(NULL) == NULL, "inv_freq(NULL)");
  CHECK(posenc_rope_inv_freq(g_rope_zero) == NULL && posenc_rope_inv_freq_f32(g_rope_zero) == NULL,
        "inv_freq of a zeroed rope");
  memset(&junk_st, 0x5a, sizeof junk_st);
  CHECK(posenc_rope_inv_freq(junk) == NULL && posenc_rope_inv_freq_f32(junk) == NULL, "inv_freq of garbage");
  memcpy(&junk_st, &g_rope_st, sizeof junk_st);
  CHECK(posenc_rope_inv_freq(junk) == NULL, "inv_freq of a copied rope");
  f = posenc_rope_inv_freq(g_rope);
  CHECK(f != NULL && (const unsigned char *)f >= (const unsigned char *)g_rope + sizeof(posenc_rope) &&
        (const unsigned char *)(f + g_rope->pairs) <= (const unsigned char *)g_rope + POSENC_ROPE_BYTES(8),
        "inv_freq: inside the rope's storage");
  CHECK(f != NULL && f[0] == 1.0 && f[1] == 0.1, "inv_freq of head_dim 8: %.17g %.17g", f ? f[0] : 0.0,
        f ? f[1] : 0.0); /* 10000^(-2i/8): 1, 0.1 */
  CHECK(posenc_rope_inv_freq_f32(g_rope) == NULL, "inv_freq_f32 without hf_compat");
  c.hf_compat = 1;
  CHECK(posenc_rope_init(hf, sizeof hf_st, &c) == POSENC_OK, "hf_compat rope");
  f = posenc_rope_inv_freq(hf); f32 = posenc_rope_inv_freq_f32(hf);
  CHECK(f != NULL && f32 != NULL, "inv_freq, inv_freq_f32 with hf_compat");
  for (i = 0; f && f32 && i < hf->pairs; i++)
    CHECK(fabs((double)f32[i] - f[i]) <= 1e-6 * f[i], "hf_compat float32 frequency %u: %.9g vs %.17g", (unsigned)i,
          (double)f32[i], f[i]);
  hf->config.hf_compat = 0; /* switched off after init: the exact frequencies were not asked for */
  CHECK(posenc_rope_inv_freq(hf) == NULL && posenc_rope_inv_freq_f32(hf) == NULL,
        "inv_freq of a rope whose hf_compat was switched off");
}

/* ---- RoPE rotation ------------------------------------------------------------------------- */
/* q: 2 heads of 8 at MEM[0, 192) (1 batch x 3 tokens), k: 1 head at MEM[256, 352). */
static float g_cache[16 * 8];
static posenc_rope_cache_view s_view;
static posenc_rope_positions s_rpos;
static posenc_rope_tensor s_q, s_k;
static int32_t s_ids[8];
typedef struct { const posenc_rope *rope; const posenc_rope_cache_view *cache;
                 const posenc_rope_positions *pos;
                 const posenc_rope_tensor *q, *k; posenc_rope_direction dir; } rapply_args;
static rapply_args rapply_ok(void) {
  rapply_args a;
  size_t i;
  s_view.data = g_cache; s_view.n_rows = 16;
  s_view.spec.layout = POSENC_ROPE_CACHE_HALF; s_view.spec.dtype = F32; s_view.spec.row_stride = 0;
  s_rpos.batch = 1; s_rpos.tokens = 3; s_rpos.ids = NULL; s_rpos.start = 0;
  for (i = 0; i < 8; i++) s_ids[i] = (int32_t)i;
  memset(&s_q, 0, sizeof s_q); s_q.data = MEM; s_q.dtype = F32; s_q.heads = 2;
  memset(&s_k, 0, sizeof s_k); s_k.data = MEM + 256; s_k.dtype = F32; s_k.heads = 1;
  a.rope = g_rope; a.cache = NULL; a.pos = &s_rpos; a.q = &s_q; a.k = &s_k; a.dir = POSENC_ROPE_FORWARD;
  return a;
}
static posenc_status rapply_run(rapply_args *a) {
  return posenc_rope_apply(a->rope, a->cache, a->pos, a->q, a->k, a->dir);
}

static void test_rope_apply(void) {
  int cached;
  for (cached = 0; cached < 2; cached++) {
#define RA(want, ...) CASE(rapply, want, if (cached) a.cache = &s_view; __VA_ARGS__)
    RA(POSENC_OK, (void)a);
    RA(POSENC_OK, a.k = NULL);
    RA(POSENC_OK, s_rpos.ids = s_ids; a.dir = POSENC_ROPE_INVERSE);
    RA(POSENC_ERR_NULL, a.rope = NULL);
    RA(POSENC_ERR_NULL, a.pos = NULL);
    RA(POSENC_ERR_NULL, a.q = NULL);
    RA(POSENC_ERR_NULL, s_q.data = NULL);
    RA(POSENC_ERR_NULL, s_k.data = NULL);
    RA(POSENC_ERR_PARAM, a.dir = (posenc_rope_direction)2);
    RA(POSENC_ERR_DIM, a.rope = g_rope_zero);
    RA(POSENC_ERR_DIM, memcpy(&s_bad_st, &g_rope_st, sizeof s_bad_st); a.rope = s_bad);
    RA(POSENC_OK, BAD_COPY; a.rope = s_bad);  /* so the cases below fail on their own field */
    /* the storage init was given, as the header records it, below what the pairs need */
    RA(POSENC_ERR_DIM, BAD_COPY; s_bad->storage_bytes = POSENC_ROPE_BYTES(8) - 1; a.rope = s_bad);
    /* the reach check's bound below the first frequency: positions past the exact reduction would pass */
    RA(POSENC_ERR_DIM, BAD_COPY; s_bad->max_omega = 0.0; a.rope = s_bad);
    RA(POSENC_ERR_DIM, BAD_COPY; s_bad->max_omega = 0.5 * posenc_rope_inv_freq(g_rope)[0]; a.rope = s_bad);
    /* a rope with garbage in a field the kernels switch on reached the SIMD dispatch */
    RA(POSENC_ERR_DIM, BAD_COPY; s_bad->config.style = (posenc_rope_style)7; a.rope = s_bad);
    RA(POSENC_ERR_DIM, BAD_COPY; s_bad->config.style = (posenc_rope_style)-1; a.rope = s_bad);
    RA(POSENC_ERR_DIM, BAD_COPY; s_bad->config.scaling = (posenc_rope_scaling)9; a.rope = s_bad);
    RA(POSENC_ERR_DIM, BAD_COPY; s_bad->config.mrope = (posenc_rope_mrope)3; a.rope = s_bad);
    RA(POSENC_ERR_DIM, BAD_COPY; s_bad->config.mrope = POSENC_ROPE_MROPE_SECTIONS; a.rope = s_bad);
    RA(POSENC_ERR_DIM, BAD_COPY; s_bad->pairs = 3; a.rope = s_bad);         /* rotary_dim says 4 */
    RA(POSENC_ERR_DIM, BAD_COPY; s_bad->config.head_dim = 6; a.rope = s_bad); /* 2 * pairs > D */
    RA(POSENC_ERR_DIM, BAD_COPY; s_bad->attention_factor = NAN; a.rope = s_bad);
    RA(POSENC_ERR_DIM, BAD_COPY; s_bad->attention_factor = 0.0; a.rope = s_bad);
    /* hf_compat switched on in a rope made without it: HF's float32 frequencies are all zero,
     * and q came back unrotated with OK (found by fuzz_rope) */
    RA(POSENC_ERR_DIM, BAD_COPY; s_bad->config.hf_compat = 1; a.rope = s_bad);
    RA(POSENC_ERR_DIM, BAD_COPY; s_bad->config.hf_compat = -7; a.rope = s_bad);
    /* and switched off in a rope made with it: the exact frequencies rotated q, not HF's float32
     * ones, with OK (found by fuzz_rope) */
    RA(POSENC_OK, hf_rope_in_bad(0); a.rope = s_bad);
    RA(POSENC_ERR_DIM, hf_rope_in_bad(1); a.rope = s_bad);
    RA(POSENC_ERR_SIZE, s_rpos.batch = 0);
    RA(POSENC_ERR_SIZE, s_rpos.tokens = 0);
    RA(POSENC_ERR_SIZE, s_q.heads = 0);
    RA(POSENC_ERR_SIZE, s_k.heads = 0);
    RA(POSENC_ERR_OVERFLOW, s_rpos.batch = HUGE_SZ; s_rpos.tokens = 4);
    RA(POSENC_ERR_OVERFLOW, s_q.head_stride = HUGE_SZ);
    RA(POSENC_ERR_DTYPE, s_q.dtype = BAD_DTYPE);
    RA(POSENC_ERR_DTYPE, s_k.dtype = BAD_DTYPE);
    RA(POSENC_ERR_ALIAS, s_q.head_stride = 4);             /* heads overlap */
    RA(POSENC_ERR_ALIAS, s_q.token_stride = 8);            /* tokens overlap */
    RA(POSENC_ERR_ALIAS, s_k.data = MEM);                  /* k is q */
    RA(POSENC_ERR_ALIAS, s_k.data = MEM + 160);            /* k overlaps q's last token */
    RA(POSENC_ERR_ALIAS, s_rpos.ids = MEM_I32(40));        /* ids inside q */
    RA(POSENC_ERR_ALIAS, s_rpos.ids = MEM_I32(70));        /* ids inside k */
    RA(POSENC_ERR_POSITION, s_rpos.start = INT32_MAX);
    if (!cached) {
      RA(POSENC_ERR_POSITION, a.rope = g_rope_far; s_rpos.start = 1);
      RA(POSENC_OK, s_rpos.start = -5);
      continue;
    }
    RA(POSENC_ERR_NULL, s_view.data = NULL);
    RA(POSENC_ERR_SIZE, s_view.n_rows = 0);
    RA(POSENC_ERR_LAYOUT, s_view.spec.layout = (posenc_rope_cache_layout)5);
    RA(POSENC_ERR_DTYPE, s_view.spec.dtype = BAD_DTYPE);
    RA(POSENC_ERR_STRIDE, s_view.spec.row_stride = 7);
    RA(POSENC_ERR_OVERFLOW, s_view.n_rows = HUGE_SZ);
    RA(POSENC_ERR_POSITION, s_rpos.start = -1);
    RA(POSENC_ERR_POSITION, s_rpos.start = 14);           /* rows 14, 15, 16 of 16 */
    RA(POSENC_ERR_POSITION, s_rpos.ids = s_ids; s_ids[2] = 16);
    RA(POSENC_ERR_POSITION, s_rpos.ids = s_ids; s_ids[1] = -1);
    RA(POSENC_ERR_ALIAS, s_view.data = MEM + 128);        /* cache over q */
#undef RA
  }
}

/* ---- masked add: positions, forward, backward ---------------------------------------------- */
/* 2 x 3 tokens, D = 4. y / grad_x at MEM[0, 96); grad_table at MEM[1024, 1280) (16 rows). */
static posenc_embed_tokens s_tk;
static posenc_embed_config s_ec;
static posenc_embed_tensor s_x, s_y;
static uint8_t s_mask[6];
static void embed_reset(int table) {
  memset(&s_tk, 0, sizeof s_tk);
  s_tk.batch = 2; s_tk.tokens = 3; s_tk.mode = POSENC_POS_RANGE;
  memset(s_mask, 1, sizeof s_mask);
  s_ec = posenc_embed_default(4);
  if (table) {
    s_ec.table.data = g_tab; s_ec.table.dtype = F32; s_ec.table.n_rows = 16; s_ec.table.dim = 4;
  }
  memset(&s_x, 0, sizeof s_x); s_x.data = g_x; s_x.dtype = F32;
  memset(&s_y, 0, sizeof s_y); s_y.data = MEM; s_y.dtype = F32;
}

typedef struct { const posenc_embed_tokens *tk; int32_t *out; } epos_args;
static epos_args epos_ok(void) {
  epos_args a;
  embed_reset(0);
  a.tk = &s_tk; a.out = MEM_I32(0);
  return a;
}
static posenc_status epos_run(epos_args *a) { return posenc_embed_positions(a->tk, a->out); }

typedef struct { const posenc_embed_config *c; const posenc_embed_tokens *tk;
                 const posenc_embed_tensor *x, *y; } efwd_args;
static efwd_args efwd_ok(void) {
  efwd_args a;
  embed_reset(1);
  a.c = &s_ec; a.tk = &s_tk; a.x = &s_x; a.y = &s_y;
  return a;
}
static posenc_status efwd_run(efwd_args *a) { return posenc_embed_forward(a->c, a->tk, a->x, a->y); }

typedef struct { const posenc_embed_config *c; const posenc_embed_tokens *tk;
                 const posenc_embed_tensor *gy, *gx;
                 float *gt; size_t gts; } ebwd_args;
static ebwd_args ebwd_ok(void) {
  ebwd_args a;
  embed_reset(1);
  a.c = &s_ec; a.tk = &s_tk; a.gy = &s_x; a.gx = &s_y; a.gt = MEM_F32(256); a.gts = 0;
  return a;
}
static posenc_status ebwd_run(ebwd_args *a) {
  return posenc_embed_backward(a->c, a->tk, a->gy, a->gx, a->gt, a->gts);
}

static void test_embed(void) {
  int32_t ids[6] = {0, 1, 2, 3, 4, 5};
  CASE(epos, POSENC_OK, (void)a);
  CASE(epos, POSENC_ERR_NULL, a.tk = NULL);
  CASE(epos, POSENC_ERR_NULL, a.out = NULL);
  CASE(epos, POSENC_ERR_NULL, s_tk.mode = POSENC_POS_IDS);
  CASE(epos, POSENC_ERR_SIZE, s_tk.batch = 0);
  CASE(epos, POSENC_ERR_SIZE, s_tk.tokens = 0);
  CASE(epos, POSENC_ERR_OVERFLOW, s_tk.batch = HUGE_SZ; s_tk.tokens = 4);
  CASE(epos, POSENC_ERR_OVERFLOW, s_tk.batch = SIZE_MAX / 8; s_tk.tokens = 2); /* 4 bytes each */
  CASE(epos, POSENC_ERR_PARAM, s_tk.mode = (posenc_pos_mode)4);
  CASE(epos, POSENC_ERR_POSITION, s_tk.start = INT32_MAX - 1);
  CASE(epos, POSENC_ERR_POSITION, s_tk.start = -1);
  CASE(epos, POSENC_OK, s_tk.start = -1; s_tk.mask = s_mask; s_mask[0] = s_mask[3] = 0); /* pads: unchecked */
  CASE(epos, POSENC_ERR_POSITION, s_tk.mode = POSENC_POS_IDS; s_tk.positions = ids; ids[4] = -3);
  CASE(epos, POSENC_ERR_PADDING, s_tk.mode = POSENC_POS_FAIRSEQ; s_tk.padding_id = -1);
  CASE(epos, POSENC_ERR_ALIAS, s_tk.mode = POSENC_POS_IDS; memcpy(MEM + 8, ids, sizeof ids);
       s_tk.positions = MEM_I32(2));
  CASE(epos, POSENC_ERR_ALIAS, s_tk.token_ids = MEM_I32(5));
  CASE(epos, POSENC_ERR_ALIAS, s_tk.mask = MEM + 23);
  CASE(epos, POSENC_OK, s_tk.mask = MEM + 24);
  ids[4] = 4;

  CASE(efwd, POSENC_OK, (void)a);
  CASE(efwd, POSENC_OK, s_ec.table.data = NULL);          /* sinusoidal source */
  CASE(efwd, POSENC_OK, s_y.data = g_x);                  /* in place (g_x stays zero) */
  CASE(efwd, POSENC_ERR_NULL, a.c = NULL);
  CASE(efwd, POSENC_ERR_NULL, a.tk = NULL);
  CASE(efwd, POSENC_ERR_NULL, a.x = NULL);
  CASE(efwd, POSENC_ERR_NULL, a.y = NULL);
  CASE(efwd, POSENC_ERR_NULL, s_x.data = NULL);
  CASE(efwd, POSENC_ERR_NULL, s_y.data = NULL);
  CASE(efwd, POSENC_ERR_NULL, s_tk.mode = POSENC_POS_IDS);
  CASE(efwd, POSENC_ERR_SIZE, s_ec.dim = 0; s_ec.table.dim = 0);
  CASE(efwd, POSENC_ERR_SIZE, s_tk.batch = 0);
  CASE(efwd, POSENC_ERR_SIZE, s_ec.table.n_rows = 0);
  CASE(efwd, POSENC_ERR_DIM, s_ec.table.dim = 5);
  CASE(efwd, POSENC_ERR_DIM, s_ec.table.data = NULL; s_ec.sinusoidal.dim = 5);
  CASE(efwd, POSENC_ERR_DIM, s_ec.oob = POSENC_OOB_SINUSOIDAL; s_ec.sinusoidal.dim = 3);
  CASE(efwd, POSENC_ERR_DTYPE, s_x.dtype = BAD_DTYPE);
  CASE(efwd, POSENC_ERR_DTYPE, s_y.dtype = BAD_DTYPE);
  CASE(efwd, POSENC_ERR_DTYPE, s_ec.table.dtype = BAD_DTYPE);
  CASE(efwd, POSENC_ERR_DTYPE, s_ec.table.data = NULL; s_ec.sinusoidal.dtype = BAD_DTYPE);
  CASE(efwd, POSENC_ERR_LAYOUT, s_ec.table.data = NULL; s_ec.sinusoidal.layout = (posenc_layout)2);
  CASE(efwd, POSENC_ERR_BASE, s_ec.table.data = NULL; s_ec.sinusoidal.base = NAN);
  CASE(efwd, POSENC_ERR_BASE, s_ec.oob = POSENC_OOB_SINUSOIDAL; s_ec.sinusoidal.base = 0.0);
  CASE(efwd, POSENC_ERR_STRIDE, s_y.token_stride = 3);
  CASE(efwd, POSENC_ERR_STRIDE, s_x.batch_stride = 3);
  CASE(efwd, POSENC_ERR_STRIDE, s_ec.table.row_stride = 3);
  CASE(efwd, POSENC_ERR_OVERFLOW, s_y.token_stride = HUGE_SZ);
  CASE(efwd, POSENC_ERR_OVERFLOW, s_x.batch_stride = HUGE_SZ);
  CASE(efwd, POSENC_ERR_OVERFLOW, s_ec.table.row_stride = HUGE_SZ);
  CASE(efwd, POSENC_ERR_OVERFLOW, s_tk.batch = HUGE_SZ; s_tk.tokens = 4);
  /* the tensors' overflow first, before a pass over 2^63 tokens (found by fuzz_embed: it hung) */
  CASE(efwd, POSENC_ERR_OVERFLOW, s_tk.batch = (size_t)1 << (sizeof(size_t) * 4); s_tk.tokens = 0x7fffffff);
  CASE(efwd, POSENC_ERR_PARAM, s_ec.dropout_p = 1.0);
  CASE(efwd, POSENC_ERR_PARAM, s_ec.dropout_p = -0.25);
  CASE(efwd, POSENC_ERR_PARAM, s_ec.dropout_p = NAN);
  CASE(efwd, POSENC_ERR_PARAM, s_ec.scale = INFINITY);
  CASE(efwd, POSENC_ERR_PARAM, s_ec.scale = NAN);
  CASE(efwd, POSENC_ERR_PARAM, s_ec.oob = (posenc_oob_policy)3);
  CASE(efwd, POSENC_ERR_PARAM, s_tk.mode = (posenc_pos_mode)9);
  CASE(efwd, POSENC_ERR_POSITION, s_tk.start = 14);       /* rows 14..16 of a 16-row table */
  CASE(efwd, POSENC_OK, s_tk.start = 14; s_ec.oob = POSENC_OOB_CLAMP);
  CASE(efwd, POSENC_ERR_POSITION, s_tk.start = -1);
  CASE(efwd, POSENC_ERR_POSITION, s_ec.table.data = NULL; s_tk.start = INT32_MAX);
  CASE(efwd, POSENC_ERR_POSITION, s_ec.table.data = NULL; s_ec.sinusoidal.base = 1e-30; s_tk.start = 100);
  CASE(efwd, POSENC_ERR_PADDING, s_tk.mode = POSENC_POS_FAIRSEQ; s_tk.padding_id = 16);
  CASE(efwd, POSENC_ERR_PADDING, s_tk.mode = POSENC_POS_FAIRSEQ; s_tk.padding_id = -1);
  CASE(efwd, POSENC_ERR_ALIAS, s_x.data = MEM + 4);        /* x partly under y */
  CASE(efwd, POSENC_ERR_ALIAS, s_ec.table.data = MEM + 64);
  CASE(efwd, POSENC_ERR_ALIAS, s_y.token_stride = 4; s_y.batch_stride = 8); /* y's rows overlap */
  CASE(efwd, POSENC_ERR_ALIAS, s_tk.mask = MEM + 90);
  CASE(efwd, POSENC_ERR_ALIAS, s_tk.token_ids = MEM_I32(20));
  CASE(efwd, POSENC_ERR_ALIAS, s_tk.mode = POSENC_POS_IDS; memcpy(MEM + 80, ids, sizeof ids);
       s_tk.positions = MEM_I32(20));

  CASE(ebwd, POSENC_OK, (void)a);
  CASE(ebwd, POSENC_OK, a.gx = NULL);
  CASE(ebwd, POSENC_OK, a.gt = NULL);
  CASE(ebwd, POSENC_ERR_NULL, a.gy = NULL);
  CASE(ebwd, POSENC_ERR_NULL, s_x.data = NULL);
  CASE(ebwd, POSENC_ERR_NULL, s_y.data = NULL);
  CASE(ebwd, POSENC_ERR_NULL, a.c = NULL);
  CASE(ebwd, POSENC_ERR_STRIDE, a.gts = 3);
  CASE(ebwd, POSENC_ERR_OVERFLOW, a.gts = HUGE_SZ);
  CASE(ebwd, POSENC_ERR_STRIDE, s_y.token_stride = 2);
  CASE(ebwd, POSENC_ERR_DTYPE, s_x.dtype = BAD_DTYPE);
  CASE(ebwd, POSENC_ERR_PARAM, s_ec.dropout_p = NAN);
  CASE(ebwd, POSENC_ERR_POSITION, s_tk.start = 15);
  CASE(ebwd, POSENC_ERR_ALIAS, a.gt = MEM_F32(20));       /* grad_table over grad_x */
  CASE(ebwd, POSENC_ERR_ALIAS, s_x.data = MEM_F32(300));  /* grad_table over grad_y */
  CASE(ebwd, POSENC_ERR_ALIAS, s_x.data = MEM_F32(2));    /* grad_x partly over grad_y */
  CASE(ebwd, POSENC_ERR_ALIAS, s_tk.mask = MEM + 1100);   /* grad_table over the mask */
  CASE(ebwd, POSENC_ERR_ALIAS, s_tk.mask = MEM + 10);     /* grad_x over the mask */
}

/* ---- learned, resized and index tables ----------------------------------------------------- */
typedef struct { uint64_t seed; double std; size_t n, dim; posenc_dtype dt; size_t stride; void *out;
                 size_t bytes; } learned_args;
static learned_args learned_ok(void) {
  learned_args a;
  a.seed = 7; a.std = 0.0; a.n = 4; a.dim = 4; a.dt = F32; a.stride = 0; a.out = MEM; a.bytes = 64;
  return a;
}
static posenc_status learned_run(learned_args *a) {
  return posenc_learned_init(a->seed, a->std, a->n, a->dim, a->dt, a->stride, a->out, a->bytes);
}

static posenc_table s_src;
typedef struct { const posenc_table *src; size_t rows; int align; posenc_dtype dt; size_t stride; void *out;
                 size_t bytes; } resize_args;
static resize_args resize_ok(void) {
  resize_args a;
  s_src.data = g_tab; s_src.dtype = F32; s_src.n_rows = 16; s_src.dim = 4; s_src.row_stride = 0;
  a.src = &s_src; a.rows = 8; a.align = 0; a.dt = F16; a.stride = 0; a.out = MEM; a.bytes = 8 * 4 * 2;
  return a;
}
static posenc_status resize_run(resize_args *a) {
  return posenc_table_resize(a->src, a->rows, a->align, a->dt, a->stride, a->out, a->bytes);
}

typedef struct { posenc_index_kind kind; uint32_t max_len; int32_t start; size_t n, dim; posenc_dtype dt;
                 size_t stride; void *out; size_t bytes; } index_args;
static index_args index_ok(void) {
  index_args a;
  a.kind = POSENC_INDEX_NORMALIZED; a.max_len = 100; a.start = 0;
  a.n = 4; a.dim = 2; a.dt = F16; a.stride = 0; a.out = MEM; a.bytes = 4 * 2 * 2;
  return a;
}
static posenc_status index_run(index_args *a) {
  return posenc_index_table(a->kind, a->max_len, a->start, a->n, a->dim, a->dt, a->stride, a->out, a->bytes);
}

static void test_tables(void) {
  CASE(learned, POSENC_OK, (void)a);
  CASE(learned, POSENC_ERR_NULL, a.out = NULL);
  CASE(learned, POSENC_ERR_OVERFLOW, a.out = TOP_PTR);
  CASE(learned, POSENC_ERR_SIZE, a.n = 0);
  CASE(learned, POSENC_ERR_SIZE, a.dim = 0);
  CASE(learned, POSENC_ERR_DTYPE, a.dt = BAD_DTYPE);
  CASE(learned, POSENC_ERR_STRIDE, a.stride = 3);
  CASE(learned, POSENC_ERR_OVERFLOW, a.stride = HUGE_SZ);
  CASE(learned, POSENC_ERR_OVERFLOW, a.n = HUGE_SZ);
  CASE(learned, POSENC_ERR_BUFFER, a.bytes = 63);
  CASE(learned, POSENC_ERR_PARAM, a.std = -1.0);
  CASE(learned, POSENC_ERR_PARAM, a.std = NAN);
  CASE(learned, POSENC_ERR_PARAM, a.std = INFINITY);
  CASE(learned, POSENC_ERR_PARAM, a.std = 1e31);

  CASE(resize, POSENC_OK, (void)a);
  CASE(resize, POSENC_OK, a.align = 1; a.rows = 1);
  CASE(resize, POSENC_ERR_NULL, a.src = NULL);
  CASE(resize, POSENC_ERR_NULL, s_src.data = NULL);
  CASE(resize, POSENC_ERR_NULL, a.out = NULL);
  CASE(resize, POSENC_ERR_OVERFLOW, a.out = TOP_PTR);
  CASE(resize, POSENC_ERR_SIZE, s_src.n_rows = 0);
  CASE(resize, POSENC_ERR_SIZE, s_src.dim = 0);
  CASE(resize, POSENC_ERR_SIZE, a.rows = 0);
  CASE(resize, POSENC_ERR_DTYPE, a.dt = BAD_DTYPE);
  CASE(resize, POSENC_ERR_DTYPE, s_src.dtype = BAD_DTYPE);
  CASE(resize, POSENC_ERR_PARAM, a.align = 2);
  CASE(resize, POSENC_ERR_PARAM, a.align = -1);
  CASE(resize, POSENC_ERR_STRIDE, a.stride = 3);
  CASE(resize, POSENC_ERR_STRIDE, s_src.row_stride = 3);
  CASE(resize, POSENC_ERR_OVERFLOW, s_src.row_stride = HUGE_SZ);
  CASE(resize, POSENC_ERR_OVERFLOW, a.rows = HUGE_SZ);
  CASE(resize, POSENC_ERR_BUFFER, a.bytes = 63);
  CASE(resize, POSENC_ERR_ALIAS, s_src.data = MEM + 60);

  CASE(index, POSENC_OK, (void)a);
  CASE(index, POSENC_OK, a.dt = F32; a.start = -INT32_MAX - 1; a.bytes = 32);
  CASE(index, POSENC_ERR_NULL, a.out = NULL);
  CASE(index, POSENC_ERR_OVERFLOW, a.out = TOP_PTR);
  CASE(index, POSENC_ERR_SIZE, a.n = 0);
  CASE(index, POSENC_ERR_SIZE, a.dim = 0);
  CASE(index, POSENC_ERR_DTYPE, a.dt = BAD_DTYPE);
  CASE(index, POSENC_ERR_STRIDE, a.stride = 1);
  CASE(index, POSENC_ERR_OVERFLOW, a.stride = HUGE_SZ);
  CASE(index, POSENC_ERR_BUFFER, a.bytes = 15);
  CASE(index, POSENC_ERR_PARAM, a.kind = (posenc_index_kind)2);
  CASE(index, POSENC_ERR_PARAM, a.max_len = 0);
  CASE(index, POSENC_OK, a.kind = POSENC_INDEX_INTEGER; a.max_len = 0);
  CASE(index, POSENC_ERR_POSITION, a.start = INT32_MAX - 2);
  CASE(index, POSENC_ERR_POSITION, a.kind = POSENC_INDEX_INTEGER; a.start = 65502);    /* f16: 65505 */
  CASE(index, POSENC_ERR_POSITION, a.kind = POSENC_INDEX_INTEGER; a.start = -65505);
  CASE(index, POSENC_OK, a.kind = POSENC_INDEX_INTEGER; a.start = 65501);
}

/* ---- 2-D sin-cos --------------------------------------------------------------------------- */
static posenc_sincos_2d_params s_2d;
typedef struct { const posenc_sincos_2d_params *p; void *out; size_t bytes; size_t *bytes_out; int sizing;
                 } twod_args;
static twod_args twod_ok(void) {
  twod_args a;
  s_2d = posenc_sincos_2d_default(8, 2, 3);
  s_2d.cls_token = 1;
  a.p = &s_2d; a.out = MEM; a.bytes = 7 * 8 * 4; a.bytes_out = (size_t *)(void *)MEM; a.sizing = 0;
  return a;
}
static posenc_status twod_run(twod_args *a) {
  return a->sizing ? posenc_sincos_2d_bytes(a->p, a->bytes_out) : posenc_sincos_2d(a->p, a->out, a->bytes);
}

static void test_2d(void) {
  int sizing;
  for (sizing = 0; sizing < 2; sizing++) {
#define TD(want, ...) CASE(twod, want, a.sizing = sizing; __VA_ARGS__)
    TD(POSENC_OK, (void)a);
    TD(POSENC_ERR_NULL, a.p = NULL);
    TD(POSENC_ERR_NULL, if (sizing) a.bytes_out = NULL; else a.out = NULL);
    TD(POSENC_ERR_SIZE, s_2d.embed_dim = 0);
    TD(POSENC_ERR_SIZE, s_2d.grid_h = 0);
    TD(POSENC_ERR_SIZE, s_2d.grid_w = 0);
    TD(POSENC_ERR_DIM, s_2d.embed_dim = 6);
    TD(POSENC_ERR_DTYPE, s_2d.dtype = BAD_DTYPE);
    TD(POSENC_ERR_STRIDE, s_2d.row_stride = 7);
    TD(POSENC_ERR_OVERFLOW, s_2d.row_stride = HUGE_SZ);
    TD(POSENC_ERR_OVERFLOW, s_2d.grid_h = HUGE_SZ; s_2d.grid_w = 4);
    TD(POSENC_ERR_OVERFLOW, s_2d.grid_h = SIZE_MAX; s_2d.grid_w = 1); /* + the cls row */
    TD(POSENC_ERR_BASE, s_2d.base = 0.0);
    TD(POSENC_ERR_BASE, s_2d.base = NAN);
    TD(POSENC_ERR_POSITION, s_2d.base = 1e-30; s_2d.grid_h = 100);
    if (sizeof(size_t) > 4)
      TD(POSENC_ERR_POSITION, s_2d.embed_dim = 4; s_2d.cls_token = 0; s_2d.grid_h = 1;
         s_2d.grid_w = (size_t)INT32_MAX + 2);
    if (!sizing) TD(POSENC_ERR_BUFFER, a.bytes = 7 * 8 * 4 - 1);
    if (!sizing) TD(POSENC_ERR_OVERFLOW, a.out = TOP_PTR);
#undef TD
  }
}

/* ---- spectrum and .npy --------------------------------------------------------------------- */
/* work in g_work (scratch: it may be written before an error), singular values at MEM[0, 32),
 * info at MEM[512, ...). */
static posenc_table s_st;
typedef struct { const posenc_table *t; double *work; size_t count; double *sv; posenc_spectrum_info *info;
                 } spec_args;
static spec_args spec_ok(void) {
  spec_args a;
  s_st.data = g_tab; s_st.dtype = F32; s_st.n_rows = 16; s_st.dim = 4; s_st.row_stride = 0;
  a.t = &s_st; a.work = g_work; a.count = 20; a.sv = (double *)(void *)MEM;
  a.info = (posenc_spectrum_info *)(void *)(MEM + 512);
  return a;
}
static posenc_status spec_run(spec_args *a) {
  return posenc_spectrum(a->t, a->work, a->count, a->sv, a->info);
}

static unsigned char g_npy[256];
static size_t g_npy_len;
static posenc_npy_info g_info;
typedef struct { const void *buf; size_t len; posenc_npy_info *info; } parse_args;
static parse_args parse_ok(void) {
  parse_args a;
  size_t shape[2] = {16, 4};
  if (posenc_npy_header(POSENC_NPY_F32, 2, shape, g_npy, sizeof g_npy, &g_npy_len) != POSENC_OK)
    CHECK(0, "npy setup");
  a.buf = g_npy; a.len = g_npy_len; a.info = &g_info;
  return a;
}
/* On FORMAT and OVERFLOW only info->problem and info->problem_at may change. */
static posenc_status parse_run(parse_args *a) {
  posenc_npy_info before;
  posenc_status st;
  memset(&g_info, TL_CANARY, sizeof g_info);
  before = g_info;
  st = posenc_npy_parse(a->buf, a->len, a->info);
  if (st != POSENC_OK) {
    posenc_npy_info after = g_info;
    after.problem = before.problem; after.problem_at = before.problem_at;
    CHECK(memcmp(&after, &before, sizeof before) == 0, "npy_parse wrote more than the problem fields");
    CHECK(st == POSENC_ERR_NULL || g_info.problem != POSENC_NPY_PROBLEM_NONE, "npy_parse: no problem given");
  }
  return st;
}
/* A v1 .npy header around dict (padded to 64 bytes with spaces and '\n'). */
static size_t make_npy(const char *dict) {
  size_t n = strlen(dict), total = (10 + n + 1 + 63) / 64 * 64;
  memcpy(g_npy, "\x93NUMPY\x01\x00", 8);
  g_npy[8] = (unsigned char)((total - 10) & 0xff); g_npy[9] = (unsigned char)((total - 10) >> 8);
  memcpy(g_npy + 10, dict, n);
  memset(g_npy + 10 + n, ' ', total - 11 - n);
  g_npy[total - 1] = '\n';
  return total;
}

static size_t s_shape[5];
typedef struct { posenc_npy_type type; size_t ndim; const size_t *shape; void *out; size_t cap; size_t *len;
                 } header_args;
static header_args header_ok(void) {
  header_args a;
  s_shape[0] = 16; s_shape[1] = 4; s_shape[2] = s_shape[3] = s_shape[4] = 1;
  a.type = POSENC_NPY_F16; a.ndim = 2; a.shape = s_shape; a.out = MEM; a.cap = 128;
  a.len = (size_t *)(void *)(MEM + 1024);
  return a;
}
static posenc_status header_run(header_args *a) {
  return posenc_npy_header(a->type, a->ndim, a->shape, a->out, a->cap, a->len);
}

static void test_spectrum_npy(void) {
  size_t i;
  for (i = 0; i < 64; i++) g_tab[i] = (float)((i * 7) % 5) - 2.0f;
  CASE(spec, POSENC_OK, (void)a);
  CASE(spec, POSENC_OK, a.sv = NULL);
  CASE(spec, POSENC_ERR_NULL, a.t = NULL);
  CASE(spec, POSENC_ERR_NULL, s_st.data = NULL);
  CASE(spec, POSENC_ERR_NULL, a.work = NULL);
  CASE(spec, POSENC_ERR_NULL, a.info = NULL);
  CASE(spec, POSENC_ERR_SIZE, s_st.n_rows = 0);
  CASE(spec, POSENC_ERR_SIZE, s_st.dim = 0);
  CASE(spec, POSENC_ERR_DTYPE, s_st.dtype = BAD_DTYPE);
  CASE(spec, POSENC_ERR_STRIDE, s_st.row_stride = 3);
  CASE(spec, POSENC_ERR_OVERFLOW, s_st.row_stride = HUGE_SZ);
  CASE(spec, POSENC_ERR_OVERFLOW, s_st.n_rows = 1; s_st.dim = SIZE_MAX / 4);
  CASE(spec, POSENC_ERR_BUFFER, a.count = 19);
  CASE(spec, POSENC_ERR_PARAM, g_tab[13] = NAN);
  CASE(spec, POSENC_ERR_PARAM, g_tab[63] = -INFINITY);
  g_tab[13] = g_tab[63] = 1.0f;
  CASE(spec, POSENC_ERR_ALIAS, a.work = (double *)(void *)g_tab);
  CASE(spec, POSENC_ERR_ALIAS, a.work = (double *)(void *)MEM);               /* over singular values */
  CASE(spec, POSENC_ERR_ALIAS, a.work = (double *)(void *)(MEM + 400));       /* over info */
  CASE(spec, POSENC_ERR_ALIAS, a.sv = (double *)(void *)(g_tab + 6));
  CASE(spec, POSENC_ERR_ALIAS, a.sv = (double *)(void *)(MEM + 520));         /* over info */

  CASE(parse, POSENC_OK, (void)a);
  CASE(parse, POSENC_ERR_NULL, a.buf = NULL);
  CASE(parse, POSENC_ERR_NULL, a.info = NULL);
  CASE(parse, POSENC_ERR_FORMAT, a.len = 5);
  CASE(parse, POSENC_ERR_FORMAT, a.len = 20);
  CASE(parse, POSENC_ERR_FORMAT, g_npy[1] = 'n');
  CASE(parse, POSENC_ERR_FORMAT, g_npy[6] = 4);
  CASE(parse, POSENC_ERR_FORMAT, a.len = make_npy("{'descr': '>f4', 'fortran_order': False, 'shape': (3,)}"));
  CASE(parse, POSENC_ERR_FORMAT, a.len = make_npy("{'descr': '<f4', 'fortran_order': True, 'shape': (3,)}"));
  CASE(parse, POSENC_ERR_FORMAT, a.len = make_npy("{'descr': '<f4', 'fortran_order': False, "
                                                  "'shape': (-1,)}"));
  CASE(parse, POSENC_OK, a.len = make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}"));
  CASE(parse, POSENC_ERR_OVERFLOW,
       a.len = make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,), }"));
  CASE(parse, POSENC_ERR_OVERFLOW,
       a.len = make_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967295, 4294967295, 2), }"));

  CASE(header, POSENC_OK, (void)a);
  CASE(header, POSENC_OK, a.ndim = 0; a.shape = NULL);
  CASE(header, POSENC_ERR_NULL, a.out = NULL);
  CASE(header, POSENC_ERR_NULL, a.len = NULL);
  CASE(header, POSENC_ERR_NULL, a.shape = NULL);
  CASE(header, POSENC_ERR_SIZE, a.ndim = 5);
  CASE(header, POSENC_ERR_PARAM, a.type = (posenc_npy_type)8);
  CASE(header, POSENC_ERR_PARAM, a.type = (posenc_npy_type)-1);
  CASE(header, POSENC_ERR_OVERFLOW, s_shape[0] = SIZE_MAX; s_shape[1] = 2);
  CASE(header, POSENC_ERR_OVERFLOW, s_shape[0] = SIZE_MAX / 2; a.ndim = 1);  /* 2 bytes each */
  /* the parser's rule: header + data within PTRDIFF_MAX (the writer once allowed 2^63 - 1 bytes) */
  CASE(header, POSENC_ERR_OVERFLOW, a.type = POSENC_NPY_U8; s_shape[0] = (size_t)PTRDIFF_MAX; a.ndim = 1);
  CASE(header, POSENC_ERR_OVERFLOW, a.type = POSENC_NPY_U8; s_shape[0] = (size_t)PTRDIFF_MAX - 127; a.ndim = 1);
  CASE(header, POSENC_OK, a.type = POSENC_NPY_U8; s_shape[0] = (size_t)PTRDIFF_MAX - 128; a.ndim = 1);
  CASE(header, POSENC_ERR_OVERFLOW, a.type = POSENC_NPY_BOOL; s_shape[0] = 0; s_shape[1] = (size_t)PTRDIFF_MAX);
  CASE(header, POSENC_ERR_BUFFER, a.cap = 127);
  CASE(header, POSENC_ERR_ALIAS, a.len = (size_t *)(void *)(MEM + 64));       /* len inside the header */
  CASE(header, POSENC_OK, a.len = (size_t *)(void *)(MEM + 128));
}

/* The writer and the parser share one size rule: every shape near the limits, in every type and
 * rank, is either written and parsed back exactly, or refused by both (the writer with OVERFLOW,
 * the parser, given the same shape in a hand-written header, with OVERFLOW too). The writer once
 * wrote (2^63-1,) u1 headers that the parser refused. */
static void test_npy_round_trip(void) {
  static const size_t ext[] = {0, 1, 2, 3, 255, 65536, 4294967295u, (size_t)(UINT64_C(1) << 32), (size_t)(UINT64_C(1) << 40), /* 0 where size_t has 32 bits */
                               (size_t)PTRDIFF_MAX / 8 - 16, (size_t)PTRDIFF_MAX / 4 - 32, (size_t)PTRDIFF_MAX / 2 - 64,
                               (size_t)PTRDIFF_MAX - 128, (size_t)PTRDIFF_MAX - 127, (size_t)PTRDIFF_MAX,
                               (size_t)PTRDIFF_MAX + 1, SIZE_MAX};
  const size_t n_ext = sizeof ext / sizeof ext[0];
  unsigned char buf[256];
  size_t type, ndim, k, agree = 0, both_refuse = 0;
  for (type = 0; type < 8; type++)
    for (ndim = 0; ndim <= 4; ndim++)
      for (k = 0; k < (ndim ? n_ext * n_ext : 1); k++) {
        size_t shape[4], len = 0, i, dlen;
        posenc_npy_info info;
        posenc_status w, r;
        char dict[200];
        for (i = 0; i < ndim; i++) shape[i] = ext[(i == 0 ? k % n_ext : (k / n_ext + i) % n_ext)];
        w = posenc_npy_header((posenc_npy_type)type, ndim, shape, buf, sizeof buf, &len);
        if (w == POSENC_OK) {
          r = posenc_npy_parse(buf, len, &info);
          CHECK(r == POSENC_OK && info.type == (posenc_npy_type)type && info.ndim == ndim &&
                memcmp(info.shape, shape, ndim * sizeof *shape) == 0 && info.data_offset == len &&
                info.data_offset + info.data_bytes <= (size_t)PTRDIFF_MAX,
                "npy: header written for type %u, rank %u, shape[0] %zu is not parsed back (%s)", (unsigned)type,
                (unsigned)ndim, ndim ? shape[0] : (size_t)0, posenc_strerror(r));
          agree++;
          continue;
        }
        CHECK(w == POSENC_ERR_OVERFLOW, "npy_header: %s", posenc_strerror(w));
        /* the same dict, written by hand (posenc_npy_header's format), must be refused too */
        dlen = (size_t)snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                                (const char *[]){"<f4", "<f2", "<f8", "<i4", "<i8", "|u1", "|b1", "<u2"}[type]);
        for (i = 0; i < ndim; i++) dlen += (size_t)snprintf(dict + dlen, sizeof dict - dlen, "%s%zu", i ? ", " : "", shape[i]);
        snprintf(dict + dlen, sizeof dict - dlen, "%s), }", ndim == 1 ? "," : "");
        r = posenc_npy_parse(g_npy, make_npy(dict), &info);
        CHECK(r == POSENC_ERR_OVERFLOW, "npy: the writer refuses %s but the parser says %s", dict, posenc_strerror(r));
        both_refuse++;
      }
  printf("npy round trip: %zu shapes written and parsed back, %zu refused by both\n", agree, both_refuse);
}

/* ---- position biases ----------------------------------------------------------------------- */
/* The tile: 2 heads x 3 rows x 4 cols of f32 at MEM[0, 96). */
static posenc_score_tile s_tile;
static posenc_score_mask s_mask_cfg;
static float s_slopes[2];
static void tile_reset(void) {
  memset(&s_tile, 0, sizeof s_tile);
  s_tile.scores = MEM; s_tile.dtype = F32; s_tile.heads = 2; s_tile.rows = 3; s_tile.cols = 4;
  s_mask_cfg.causal = 1; s_mask_cfg.window = 0; s_mask_cfg.key_keep = NULL;
  s_slopes[0] = 0.5f; s_slopes[1] = 0.25f;
}
/* The tile and mask errors every bias function shares. */
#define TILE_CASES(fn)                                                                     \
  CASE(fn, POSENC_OK, a.mask = NULL);                                                      \
  CASE(fn, POSENC_ERR_NULL, a.tile = NULL);                                                \
  CASE(fn, POSENC_ERR_NULL, s_tile.scores = NULL);                                         \
  CASE(fn, POSENC_ERR_DTYPE, s_tile.dtype = POSENC_DTYPE_BF16);                            \
  CASE(fn, POSENC_ERR_DTYPE, s_tile.dtype = BAD_DTYPE);                                    \
  CASE(fn, POSENC_ERR_SIZE, s_tile.heads = 0);                                             \
  CASE(fn, POSENC_ERR_SIZE, s_tile.rows = 0);                                              \
  CASE(fn, POSENC_ERR_SIZE, s_tile.cols = 0);                                              \
  CASE(fn, POSENC_ERR_PARAM, s_mask_cfg.window = -1);                                      \
  CASE(fn, POSENC_ERR_POSITION, s_tile.q_pos = INT32_MAX - 1);                             \
  CASE(fn, POSENC_ERR_POSITION, s_tile.k_pos = INT32_MAX - 2);                             \
  CASE(fn, POSENC_ERR_ALIAS, s_tile.row_stride = 3);                                       \
  CASE(fn, POSENC_ERR_ALIAS, s_tile.head_stride = 8);                                      \
  CASE(fn, POSENC_ERR_ALIAS, s_tile.head_stride = 2; s_tile.row_stride = 4);               \
  CASE(fn, POSENC_OK, s_tile.head_stride = 4; s_tile.row_stride = 8);   /* [q][h][k] */    \
  CASE(fn, POSENC_ERR_OVERFLOW, s_tile.row_stride = HUGE_SZ);                              \
  CASE(fn, POSENC_ERR_ALIAS, s_mask_cfg.key_keep = MEM + 92);                              \
  CASE(fn, POSENC_OK, s_mask_cfg.key_keep = MEM + 96)

typedef struct { const posenc_score_tile *tile; const posenc_score_mask *mask; } maskap_args;
static maskap_args maskap_ok(void) {
  maskap_args a;
  tile_reset();
  a.tile = &s_tile; a.mask = &s_mask_cfg;
  return a;
}
static posenc_status maskap_run(maskap_args *a) { return posenc_mask_apply(a->tile, a->mask); }

typedef struct { size_t heads; double max_bias; float *slopes; } slopes_args;
static slopes_args slopes_ok(void) {
  slopes_args a;
  a.heads = 12; a.max_bias = 8.0; a.slopes = MEM_F32(0);
  return a;
}
static posenc_status slopes_run(slopes_args *a) {
  return posenc_alibi_slopes(a->heads, a->max_bias, a->slopes);
}

typedef struct { const posenc_score_tile *tile; const posenc_score_mask *mask; posenc_alibi_form form;
                 int32_t key_origin; const float *slopes; } alibi_args;
static alibi_args alibi_ok(void) {
  alibi_args a;
  tile_reset();
  a.tile = &s_tile; a.mask = &s_mask_cfg; a.form = POSENC_ALIBI_RELATIVE; a.key_origin = 0;
  a.slopes = s_slopes;
  return a;
}
static posenc_status alibi_run(alibi_args *a) {
  return posenc_alibi_add(a->tile, a->mask, a->form, a->key_origin, a->slopes);
}

static posenc_t5_buckets s_t5;
static posenc_t5_plan g_plan, s_plan_bad;
static float g_t5tab[32 * 2];
static posenc_table s_t5t;
typedef struct { const posenc_t5_buckets *cfg; } t5chk_args;
static t5chk_args t5chk_ok(void) {
  t5chk_args a;
  s_t5.num_buckets = 32; s_t5.max_distance = 128; s_t5.bidirectional = 1;
  a.cfg = &s_t5;
  return a;
}
static posenc_status t5chk_run(t5chk_args *a) { return posenc_t5_check(a->cfg); }

typedef struct { posenc_t5_plan *plan; const posenc_t5_buckets *cfg; } t5plan_args;
static t5plan_args t5plan_ok(void) {
  t5plan_args a;
  a.cfg = t5chk_ok().cfg; a.plan = (posenc_t5_plan *)(void *)MEM;
  return a;
}
static posenc_status t5plan_run(t5plan_args *a) { return posenc_t5_plan_init(a->plan, a->cfg); }

typedef struct { const posenc_t5_buckets *cfg; int32_t first; size_t count; int32_t *out; } t5range_args;
static t5range_args t5range_ok(void) {
  t5range_args a;
  a.cfg = t5chk_ok().cfg; a.first = -300; a.count = 600; a.out = MEM_I32(0);
  return a;
}
static posenc_status t5range_run(t5range_args *a) {
  return posenc_t5_bucket_range(a->cfg, a->first, a->count, a->out);
}

typedef struct { const posenc_score_tile *tile; const posenc_score_mask *mask; const posenc_t5_plan *plan;
                 const posenc_table *table; size_t head0; } t5add_args;
static t5add_args t5add_ok(void) {
  t5add_args a;
  tile_reset();
  s_t5t.data = g_t5tab; s_t5t.dtype = POSENC_DTYPE_BF16; s_t5t.n_rows = 32; s_t5t.dim = 2;
  s_t5t.row_stride = 0;
  a.tile = &s_tile; a.mask = &s_mask_cfg; a.plan = &g_plan; a.table = &s_t5t; a.head0 = 0;
  return a;
}
static posenc_status t5add_run(t5add_args *a) {
  return posenc_t5_bias_add(a->tile, a->mask, a->plan, a->table, a->head0);
}

typedef struct { uint32_t bs, maxpos; int32_t first; size_t count; int32_t *out; } debrange_args;
static debrange_args debrange_ok(void) {
  debrange_args a;
  a.bs = 256; a.maxpos = 512; a.first = -1000; a.count = 2000; a.out = MEM_I32(0);
  return a;
}
static posenc_status debrange_run(debrange_args *a) {
  return posenc_deberta_bucket_range(a->bs, a->maxpos, a->first, a->count, a->out);
}

typedef struct { size_t q, k; uint32_t bs, maxpos; int32_t *out; size_t count; } debrel_args;
static debrel_args debrel_ok(void) {
  debrel_args a;
  a.q = 40; a.k = 50; a.bs = 8; a.maxpos = 64; a.out = MEM_I32(0); a.count = 2000;
  return a;
}
static posenc_status debrel_run(debrel_args *a) {
  return posenc_deberta_relative(a->q, a->k, a->bs, a->maxpos, a->out, a->count);
}

static posenc_sinusoidal_params s_txl;
typedef struct { const posenc_sinusoidal_params *p; size_t klen; int32_t clamp; void *out; size_t bytes;
                 } txl_args;
static txl_args txl_ok(void) {
  txl_args a;
  s_txl = posenc_sinusoidal_default(8);
  s_txl.layout = POSENC_LAYOUT_SPLIT;
  a.p = &s_txl; a.klen = 6; a.clamp = 3; a.out = MEM; a.bytes = 6 * 8 * 4;
  return a;
}
static posenc_status txl_run(txl_args *a) {
  return posenc_txl_relative(a->p, a->klen, a->clamp, a->out, a->bytes);
}

typedef struct { uint32_t train_len; int32_t first; size_t count; float *out; } logn_args;
static logn_args logn_ok(void) {
  logn_args a;
  a.train_len = 8; a.first = 0; a.count = 16; a.out = MEM_F32(0);
  return a;
}
static posenc_status logn_run(logn_args *a) {
  return posenc_logn_scales(a->train_len, a->first, a->count, a->out);
}

static void test_bias(void) {
  CASE(maskap, POSENC_OK, (void)a);
  TILE_CASES(maskap);

  CASE(slopes, POSENC_OK, (void)a);
  CASE(slopes, POSENC_ERR_NULL, a.slopes = NULL);
  CASE(slopes, POSENC_ERR_SIZE, a.heads = 0);
  CASE(slopes, POSENC_ERR_PARAM, a.max_bias = 0.0);
  CASE(slopes, POSENC_ERR_PARAM, a.max_bias = -8.0);
  CASE(slopes, POSENC_ERR_PARAM, a.max_bias = NAN);
  CASE(slopes, POSENC_ERR_PARAM, a.max_bias = INFINITY);
  CASE(slopes, POSENC_ERR_PARAM, a.max_bias = 100.5);

  CASE(alibi, POSENC_OK, (void)a);
  TILE_CASES(alibi);
  CASE(alibi, POSENC_ERR_NULL, a.slopes = NULL);
  CASE(alibi, POSENC_ERR_PARAM, a.form = (posenc_alibi_form)3);
  CASE(alibi, POSENC_ERR_PARAM, s_slopes[1] = NAN);
  CASE(alibi, POSENC_ERR_PARAM, s_slopes[0] = -INFINITY);
  CASE(alibi, POSENC_ERR_POSITION, s_tile.k_pos = (1 << 24) + 1);
  CASE(alibi, POSENC_OK, s_tile.k_pos = (1 << 24) - 3);
  CASE(alibi, POSENC_ERR_POSITION, a.form = POSENC_ALIBI_KEY; a.key_origin = -(1 << 24) - 1);
  CASE(alibi, POSENC_ERR_ALIAS, a.slopes = MEM_F32(23));

  CASE(t5chk, POSENC_OK, (void)a);
  CASE(t5chk, POSENC_ERR_NULL, a.cfg = NULL);
  CASE(t5chk, POSENC_ERR_DIM, s_t5.num_buckets = 31);
  CASE(t5chk, POSENC_ERR_DIM, s_t5.num_buckets = 2);
  CASE(t5chk, POSENC_OK, s_t5.num_buckets = 2; s_t5.bidirectional = 0);
  CASE(t5chk, POSENC_ERR_DIM, s_t5.num_buckets = 1; s_t5.bidirectional = 0);
  CASE(t5chk, POSENC_ERR_DIM, s_t5.num_buckets = POSENC_T5_MAX_BUCKETS + 2);
  CASE(t5chk, POSENC_ERR_PARAM, s_t5.max_distance = 8);    /* e = 8 */
  CASE(t5chk, POSENC_ERR_PARAM, s_t5.max_distance = 0);
  CASE(t5chk, POSENC_ERR_PARAM, s_t5.max_distance = (uint32_t)INT32_MAX + 1);
  CASE(t5plan, POSENC_OK, (void)a);
  CASE(t5plan, POSENC_ERR_NULL, a.plan = NULL);
  CASE(t5plan, POSENC_ERR_NULL, a.cfg = NULL);
  CASE(t5plan, POSENC_ERR_DIM, s_t5.num_buckets = 3);
  CASE(t5range, POSENC_OK, (void)a);
  CASE(t5range, POSENC_ERR_NULL, a.cfg = NULL);
  CASE(t5range, POSENC_ERR_NULL, a.out = NULL);
  CASE(t5range, POSENC_ERR_SIZE, a.count = 0);
  CASE(t5range, POSENC_ERR_PARAM, s_t5.max_distance = 1);
  CASE(t5range, POSENC_ERR_POSITION, a.first = INT32_MAX; a.count = 2);
  CASE(t5range, POSENC_ERR_POSITION, a.first = INT32_MIN; a.count = (size_t)INT32_MAX + 2);
  CASE(t5add, POSENC_OK, (void)a);
  TILE_CASES(t5add);
  CASE(t5add, POSENC_ERR_NULL, a.plan = NULL);
  CASE(t5add, POSENC_ERR_NULL, a.table = NULL);
  CASE(t5add, POSENC_ERR_NULL, s_t5t.data = NULL);
  CASE(t5add, POSENC_ERR_PARAM, a.plan = &s_plan_bad);
  /* in range but not what first[] implies, for an r the tile adds (r = k - q in [-2, 3]): wrong
   * biases with OK before (found by fuzz_bias) */
  CASE(t5add, POSENC_ERR_PARAM, s_plan_bad = g_plan; s_plan_bad.near[POSENC_T5_NEAR - 2] ^= 1; a.plan = &s_plan_bad);
  CASE(t5add, POSENC_ERR_PARAM, s_plan_bad = g_plan; s_plan_bad.near[POSENC_T5_NEAR + 1] = 0; a.plan = &s_plan_bad);
  CASE(t5add, POSENC_ERR_DTYPE, s_t5t.dtype = BAD_DTYPE);
  CASE(t5add, POSENC_ERR_TABLE, s_t5t.n_rows = 31);
  CASE(t5add, POSENC_ERR_TABLE, a.head0 = 1);
  CASE(t5add, POSENC_ERR_TABLE, a.head0 = SIZE_MAX);
  CASE(t5add, POSENC_ERR_STRIDE, s_t5t.row_stride = 1);
  CASE(t5add, POSENC_ERR_OVERFLOW, s_t5t.row_stride = HUGE_SZ);
  CASE(t5add, POSENC_ERR_ALIAS, s_t5t.data = MEM + 32);

  CASE(debrange, POSENC_OK, (void)a);
  CASE(debrange, POSENC_OK, a.bs = 0; a.maxpos = 0);
  CASE(debrange, POSENC_ERR_NULL, a.out = NULL);
  CASE(debrange, POSENC_ERR_SIZE, a.count = 0);
  CASE(debrange, POSENC_ERR_DIM, a.bs = 255);
  CASE(debrange, POSENC_ERR_DIM, a.bs = 2);
  CASE(debrange, POSENC_ERR_DIM, a.bs = 65538);
  CASE(debrange, POSENC_ERR_PARAM, a.maxpos = 129);        /* max_position - 1 <= mid */
  CASE(debrange, POSENC_ERR_PARAM, a.maxpos = 0);
  CASE(debrange, POSENC_ERR_POSITION, a.first = INT32_MAX - 5; a.count = 7);
  CASE(debrel, POSENC_OK, (void)a);
  CASE(debrel, POSENC_ERR_NULL, a.out = NULL);
  CASE(debrel, POSENC_ERR_SIZE, a.q = 0);
  CASE(debrel, POSENC_ERR_SIZE, a.k = 0);
  CASE(debrel, POSENC_ERR_OVERFLOW, a.q = HUGE_SZ; a.k = 4);
  CASE(debrel, POSENC_ERR_BUFFER, a.count = 1999);
  CASE(debrel, POSENC_ERR_DIM, a.bs = 7);
  CASE(debrel, POSENC_ERR_PARAM, a.maxpos = 5);
  CASE(debrel, POSENC_ERR_POSITION, a.q = (size_t)INT32_MAX + 2; a.k = 1; a.count = SIZE_MAX);

  CASE(txl, POSENC_OK, (void)a);
  CASE(txl, POSENC_OK, a.clamp = 0);
  CASE(txl, POSENC_ERR_NULL, a.p = NULL);
  CASE(txl, POSENC_ERR_NULL, a.out = NULL);
  CASE(txl, POSENC_ERR_LAYOUT, s_txl.layout = POSENC_LAYOUT_INTERLEAVED);
  CASE(txl, POSENC_ERR_PARAM, a.clamp = -1);
  CASE(txl, POSENC_ERR_SIZE, a.klen = 0);
  CASE(txl, POSENC_ERR_SIZE, s_txl.dim = 0);
  CASE(txl, POSENC_ERR_DTYPE, s_txl.dtype = BAD_DTYPE);
  CASE(txl, POSENC_ERR_PARAM, s_txl.freqs = (posenc_freq_rule)3);
  CASE(txl, POSENC_ERR_BUFFER, a.bytes = 6 * 8 * 4 - 1);
  CASE(txl, POSENC_ERR_BASE, s_txl.base = NAN);
  CASE(txl, POSENC_ERR_OVERFLOW, a.klen = HUGE_SZ);
  CASE(txl, POSENC_ERR_POSITION, s_txl.base = 1e-30; a.klen = 300; a.bytes = 300 * 8 * 4);
  if (sizeof(size_t) > 4)
    CASE(txl, POSENC_ERR_POSITION, s_txl.dim = 2; a.klen = (size_t)INT32_MAX + 2; a.bytes = SIZE_MAX);

  CASE(logn, POSENC_OK, (void)a);
  CASE(logn, POSENC_ERR_NULL, a.out = NULL);
  CASE(logn, POSENC_ERR_SIZE, a.count = 0);
  CASE(logn, POSENC_ERR_PARAM, a.train_len = 1);
  CASE(logn, POSENC_ERR_PARAM, a.train_len = 0);
  CASE(logn, POSENC_ERR_POSITION, a.first = -1);
  CASE(logn, POSENC_ERR_POSITION, a.first = INT32_MAX - 14);
}

/* ---- dispatch ------------------------------------------------------------------------------ */
typedef struct { const char *name; posenc_isa *isa; } isaname_args;
static isaname_args isaname_ok(void) {
  isaname_args a;
  a.name = "scalar"; a.isa = (posenc_isa *)(void *)MEM;
  return a;
}
static posenc_status isaname_run(isaname_args *a) { return posenc_isa_from_name(a->name, a->isa); }
typedef struct { posenc_isa isa; } isaset_args;
static isaset_args isaset_ok(void) {
  isaset_args a;
  a.isa = posenc_isa_active();
  return a;
}
static posenc_status isaset_run(isaset_args *a) { return posenc_isa_set(a->isa); }

static void test_dispatch(void) {
  posenc_isa active = posenc_isa_active();
  CASE(isaname, POSENC_OK, (void)a);
  CASE(isaname, POSENC_OK, a.name = "auto");
  CASE(isaname, POSENC_ERR_NULL, a.name = NULL);
  CASE(isaname, POSENC_ERR_NULL, a.isa = NULL);
  CASE(isaname, POSENC_ERR_ISA, a.name = "avx1024"); /* a name no backend will have */
  CASE(isaname, POSENC_ERR_ISA, a.name = "");
  CASE(isaname, POSENC_ERR_ISA, a.name = "SCALAR");
  CASE(isaset, POSENC_OK, (void)a);
  CASE(isaset, POSENC_ERR_ISA, a.isa = POSENC_ISA_COUNT);
  CASE(isaset, POSENC_ERR_ISA, a.isa = (posenc_isa)-2);
  CASE(isaset, POSENC_ERR_ISA, a.isa = (posenc_isa)1000);
  CHECK(posenc_isa_active() == active, "a refused posenc_isa_set changed the backend");
  CHECK(strcmp(posenc_isa_name((posenc_isa)77), "unknown") == 0 && !posenc_isa_compiled((posenc_isa)77) &&
        !posenc_isa_supported((posenc_isa)-3), "unknown ISA values");
  CHECK(posenc_selftest() == POSENC_OK, "selftest");
}

/* ---- functions without a status: unknown enums and bad parameters -------------------------- */
static void test_plain_values(void) {
  CHECK(posenc_dtype_size(BAD_DTYPE) == 0 && posenc_dtype_size((posenc_dtype)-1) == 0, "dtype_size: unknown");
  CHECK(strcmp(posenc_dtype_name(BAD_DTYPE), "unknown") == 0, "dtype_name of an unknown dtype");
  CHECK(isnan(posenc_logn_scale(5, 1)) && posenc_logn_scale(1, 2) == 1.0, "logn_scale train_len < 2");
  CHECK(isnan(posenc_yarn_mscale(0.0, 1.0)) && isnan(posenc_yarn_mscale(-2.0, 1.0)) &&
        isnan(posenc_yarn_mscale(NAN, 1.0)) && isnan(posenc_yarn_mscale(INFINITY, 1.0)) &&
        isnan(posenc_yarn_mscale(4.0, NAN)) && isnan(posenc_yarn_mscale(4.0, -INFINITY)), "yarn_mscale");
  CHECK(isnan(posenc_deepseek_softmax_scale(0, 4.0, 1.0)) &&
        isnan(posenc_deepseek_softmax_scale(128, 0.0, 1.0)) &&
        isnan(posenc_deepseek_softmax_scale(128, 4.0, NAN)), "deepseek_softmax_scale");
  CHECK(isnan(posenc_llama4_attn_scale(3, 0, 0.1)) && isnan(posenc_llama4_attn_scale(3, 8192, NAN)) &&
        isnan(posenc_llama4_attn_scale(3, 8192, INFINITY)), "llama4_attn_scale");
  /* finite arguments whose scale overflows: NaN, never an infinity */
  CHECK(isnan(posenc_yarn_mscale(1e300, 1e308)) && isnan(posenc_deepseek_softmax_scale(1, 1e30, 1e160)) &&
        isnan(posenc_llama4_attn_scale(UINT32_MAX, 1, 1.7e308)) && posenc_yarn_mscale(1e300, 1e300) < 1e303,
        "scales that overflow");
  CHECK(posenc_spectrum_work(0) == 0 && posenc_spectrum_work(SIZE_MAX / 4) == 0, "spectrum_work");
}

/* ---- status codes -------------------------------------------------------------------------- */
#define FIRST_CODE POSENC_ERR_SUBNORMAL /* the most negative declared status */

static void test_strerror(void) {
  int i, j;
  const char *unknown = posenc_strerror((posenc_status)1);
  CHECK(unknown && strcmp(unknown, "unknown status") == 0, "fallback for 1");
  CHECK(strcmp(posenc_strerror((posenc_status)(FIRST_CODE - 1)), unknown) == 0, "fallback past the end");
  CHECK(strcmp(posenc_strerror((posenc_status)-1000), unknown) == 0, "fallback for -1000");
  for (i = FIRST_CODE; i <= 0; i++) {
    const char *m = posenc_strerror((posenc_status)i);
    CHECK(m && m[0] && strcmp(m, unknown) != 0, "status %d has its own message", i);
    for (j = FIRST_CODE; j < i; j++)
      CHECK(strcmp(m, posenc_strerror((posenc_status)j)) != 0, "statuses %d and %d share a message", i, j);
  }
}

/* ---- the caller's structs inside an output ---------------------------------------------------
 * A config, plan or tokens struct that is read again while outputs are written must not lie in
 * them (ALIAS, nothing written); the sinusoidal params are copied first, so they may. */
static union { double align; unsigned char b[POSENC_ROPE_BYTES(POSENC_ROPE_MAX_DIM) + 4096]; } g_big;

static void struct_case(const char *what, posenc_status got, posenc_status want, const void *snap, size_t n) {
  g_cases++;
  CHECK(got == want, "%s: %d (%s), want %d", what, (int)got, posenc_strerror(got), (int)want);
  CHECK(memcmp(g_big.b, snap, n) == 0, "%s wrote before failing", what);
}

static void test_structs_in_outputs(void) {
  static unsigned char snap[sizeof g_big.b];
  posenc_rope_config rc = posenc_rope_default(64);
  posenc_rope *rope_in = (posenc_rope *)(void *)g_big.b;
  posenc_rope_positions pos = {1, 0, NULL, 0};
  posenc_rope_tensor q = {NULL, F32, 1, 0, 0, 0};
  posenc_rope_cache_spec half = {POSENC_ROPE_CACHE_HALF, F32, 0};
  size_t rope_bytes = POSENC_ROPE_BYTES(64);
  size_t tokens = (rope_bytes + 255) / 256; /* q's tokens: 64 floats each, covering the rope's storage */
  CHECK(posenc_rope_init(rope_in, rope_bytes, &rc) == POSENC_OK, "rope_init");
  memcpy(snap, g_big.b, sizeof snap);
  pos.tokens = tokens; q.data = g_big.b;
  struct_case("rope_apply, *rope inside q", posenc_rope_apply(rope_in, NULL, &pos, &q, NULL, POSENC_ROPE_FORWARD),
              POSENC_ERR_ALIAS, snap, sizeof snap);
  struct_case("rope_cache_table, *rope inside out", posenc_rope_cache_table(rope_in, &half, 0, tokens, g_big.b,
              sizeof g_big.b), POSENC_ERR_ALIAS, snap, sizeof snap);
  {
    posenc_t5_buckets cfg = {32, 128, 1};
    posenc_t5_plan *plan_in = (posenc_t5_plan *)(void *)(g_big.b + 64);
    float table[32];
    posenc_table t = {NULL, F32, 32, 1, 0};
    posenc_score_tile tile;
    memset(&tile, 0, sizeof tile);
    memset(table, 0, sizeof table);
    t.data = table;
    CHECK(posenc_t5_plan_init(plan_in, &cfg) == POSENC_OK, "t5_plan_init");
    memcpy(snap, g_big.b, sizeof snap);
    tile.scores = g_big.b; tile.dtype = F32; tile.heads = 1; tile.rows = 1;
    tile.cols = (64 + sizeof *plan_in) / 4; /* the plan is read per row: rows past the first would see it written */
    struct_case("t5_bias_add, *plan inside the tile", posenc_t5_bias_add(&tile, NULL, plan_in, &t, 0), POSENC_ERR_ALIAS,
                snap, sizeof snap);
  }
  {
    posenc_embed_config *ec = (posenc_embed_config *)(void *)(g_big.b + 32);
    posenc_embed_tokens *tk = (posenc_embed_tokens *)(void *)(g_big.b + 512), tk_out;
    posenc_embed_config ec_out;
    posenc_embed_tensor y = {NULL, F32, 0, 0};
    *ec = posenc_embed_default(64);
    memset(tk, 0, sizeof *tk);
    tk->batch = 1; tk->tokens = 8; tk->mode = POSENC_POS_RANGE;
    tk_out = *tk; ec_out = *ec;
    y.data = g_big.b;
    memcpy(snap, g_big.b, sizeof snap);
    struct_case("embed_forward, *config inside y", posenc_embed_forward(ec, &tk_out, &y, &y), POSENC_ERR_ALIAS, snap,
                sizeof snap);
    struct_case("embed_forward, *tokens inside y", posenc_embed_forward(&ec_out, tk, &y, &y), POSENC_ERR_ALIAS, snap,
                sizeof snap);
  }
  { /* sinusoidal params inside out: copied at entry, so the table is the usual one */
    posenc_sinusoidal_params *sp = (posenc_sinusoidal_params *)(void *)(g_big.b + 40);
    static float ref[16 * 33];
    *sp = posenc_sinusoidal_default(33);
    sp->layout = POSENC_LAYOUT_SPLIT;
    CHECK(posenc_sinusoidal_table(sp, 0, 16, ref, sizeof ref) == POSENC_OK, "sinusoidal reference");
    g_cases++;
    CHECK(posenc_sinusoidal_table(sp, 0, 16, g_big.b, sizeof g_big.b) == POSENC_OK &&
          memcmp(g_big.b, ref, sizeof ref) == 0, "sinusoidal_table with its params inside out differs");
  }
}

/* The class: every public function that takes a descriptor struct and writes a buffer, with a
 * copy of the struct planted inside that buffer (or its work space). The call must either refuse
 * it (ALIAS, the buffer as it was) or read the struct whole first and give exactly the result of
 * the call with the struct elsewhere; never something computed from a half-overwritten struct.
 * (test_rope_init covers the factor lists inside *rope.) */
static unsigned char g_ref[sizeof g_big.b], g_pre[sizeof g_big.b];
static size_t g_skip_lo, g_skip_hi; /* in-place calls: the planted bytes are input there, skip them */

/* Plants the struct var (of type T) at offset `at` of a canary-filled g_big, calls, and judges
 * the first n bytes against the reference call's (REFERENCE, just before). */
#define PLANTED(what, T, var, at, n, call) do {                                                   \
    T *var##_in;                                                                              \
    posenc_status st_;                                                                        \
    memset(g_big.b, TL_CANARY, sizeof g_big.b);                                               \
    var##_in = (T *)(void *)(g_big.b + (at));                                                 \
    *var##_in = var;                                                                          \
    memcpy(g_pre, g_big.b, sizeof g_pre);                                                     \
    st_ = (call);                                                                             \
    planted_verdict(what, st_, n);                                                            \
  } while (0)

/* ALIAS: nothing written. OK: every byte as the reference call left it, where it wrote; where it
 * did not (a canary there), as before the call. */
static void planted_verdict(const char *what, posenc_status st, size_t n) {
  size_t i;
  int same = 1;
  g_cases++;
  if (st == POSENC_ERR_ALIAS) {
    CHECK(memcmp(g_big.b, g_pre, sizeof g_pre) == 0, "%s: ALIAS, but it wrote", what);
    return;
  }
  for (i = 0; i < n && same; i++)
    if (!(i >= g_skip_lo && i < g_skip_hi))
      same = g_big.b[i] == g_ref[i] || (g_ref[i] == TL_CANARY && g_big.b[i] == g_pre[i]);
  CHECK(st == POSENC_OK && same, "%s: %s, %s", what, posenc_strerror(st),
        same ? "" : "a result unlike the call's with the struct elsewhere");
}

#define REFERENCE(what, n, call) do {                                                             \
    memset(g_big.b, TL_CANARY, sizeof g_big.b);                                               \
    { posenc_status st_ = (call); CHECK(st_ == POSENC_OK, "%s: reference call failed", what); } \
    memcpy(g_ref, g_big.b, n);                                                                \
  } while (0)

static void test_every_struct_in_outputs(void) {
  unsigned char *out = g_big.b;
  size_t at;
  for (at = 0; at <= 96; at += 48) { /* at the start, and straddling rows */
    { /* table_resize: *src in out (the bug: an out-of-bounds read from overwritten dims) */
      posenc_table src = {NULL, F32, 16, 4, 0};
      src.data = g_tab;
      REFERENCE("resize", 64 * 4 * 2, posenc_table_resize(&src, 64, 0, F16, 0, out, 64 * 4 * 2));
      PLANTED("table_resize, *src inside out", posenc_table, src, at, 64 * 4 * 2,
              posenc_table_resize(src_in, 64, 0, F16, 0, out, 64 * 4 * 2));
    }
    { /* spectrum: *table in work (the bug: rank 0, energy 0), in the singular values, in *info */
      posenc_table t = {NULL, F32, 16, 4, 0};
      double *work = (double *)(void *)(out + 1024), *sv = (double *)(void *)out;
      posenc_spectrum_info *info = (posenc_spectrum_info *)(void *)(out + 256);
      t.data = g_tab;
      REFERENCE("spectrum", 256 + sizeof *info, posenc_spectrum(&t, work, 20, sv, info));
      PLANTED("spectrum, *table inside work", posenc_table, t, 1024 + at, 256 + sizeof *info,
              posenc_spectrum(t_in, work, 20, sv, info));
      PLANTED("spectrum, *table inside the singular values", posenc_table, t, 0, 256 + sizeof *info,
              posenc_spectrum(t_in, work, 20, sv, info));
      PLANTED("spectrum, *table inside *info", posenc_table, t, 256, 256 + sizeof *info,
              posenc_spectrum(t_in, work, 20, sv, info));
    }
    { /* sinusoidal tables and rows */
      posenc_sinusoidal_params p = posenc_sinusoidal_default(24);
      REFERENCE("sinusoidal", 16 * 24 * 4, posenc_sinusoidal_table(&p, 3, 16, out, 16 * 24 * 4));
      PLANTED("sinusoidal_table, *params inside out", posenc_sinusoidal_params, p, at, 16 * 24 * 4,
              posenc_sinusoidal_table(p_in, 3, 16, out, 16 * 24 * 4));
    }
    { /* Transformer-XL's R */
      posenc_sinusoidal_params p = posenc_sinusoidal_default(24);
      p.layout = POSENC_LAYOUT_SPLIT;
      REFERENCE("txl", 16 * 24 * 4, posenc_txl_relative(&p, 16, 5, out, 16 * 24 * 4));
      PLANTED("txl_relative, *params inside out", posenc_sinusoidal_params, p, at, 16 * 24 * 4,
              posenc_txl_relative(p_in, 16, 5, out, 16 * 24 * 4));
    }
    { /* 2-D sin-cos */
      posenc_sincos_2d_params p = posenc_sincos_2d_default(16, 4, 5);
      p.cls_token = 1;
      REFERENCE("sincos_2d", 21 * 16 * 4, posenc_sincos_2d(&p, out, 21 * 16 * 4));
      PLANTED("sincos_2d, *params inside out", posenc_sincos_2d_params, p, at, 21 * 16 * 4,
              posenc_sincos_2d(p_in, out, 21 * 16 * 4));
    }
    { /* RoPE init: the config inside *rope */
      posenc_rope_config rc = posenc_rope_default(64);
      rc.scaling = POSENC_ROPE_SCALING_YARN; rc.factor = 8.0; rc.original_max_pos = 4096;
      REFERENCE("rope_init", POSENC_ROPE_BYTES(64),
                posenc_rope_init((posenc_rope *)(void *)out, POSENC_ROPE_BYTES(64), &rc));
      PLANTED("rope_init, *config inside *rope", posenc_rope_config, rc, at, POSENC_ROPE_BYTES(64),
              posenc_rope_init((posenc_rope *)(void *)out, POSENC_ROPE_BYTES(64), rc_in));
    }
    { /* RoPE cache rows: *spec inside out */
      posenc_rope_cache_spec spec = {POSENC_ROPE_CACHE_INTERLEAVED, F32, 0};
      REFERENCE("rope_cache", 16 * 8 * 4, posenc_rope_cache_table(g_rope, &spec, 2, 16, out, 16 * 8 * 4));
      PLANTED("rope_cache_table, *spec inside out", posenc_rope_cache_spec, spec, at, 16 * 8 * 4,
              posenc_rope_cache_table(g_rope, spec_in, 2, 16, out, 16 * 8 * 4));
    }
    { /* RoPE rotation: the positions and cache view structs inside q */
      posenc_rope_positions pos = {1, 8, NULL, 3};
      posenc_rope_cache_view view;
      posenc_rope_tensor q = {NULL, F32, 2, 0, 0, 0};
      size_t i;
      view.data = g_cache; view.n_rows = 16; view.spec.layout = POSENC_ROPE_CACHE_HALF; view.spec.dtype = F32;
      view.spec.row_stride = 0;
      q.data = out;
      pos.tokens = 6;
      memset(g_big.b, TL_CANARY, sizeof g_big.b);
      for (i = 0; i < 6 * 2 * 8; i++) ((float *)(void *)out)[i] = (float)i * 0.25f;
      CHECK(posenc_rope_apply(g_rope, &view, &pos, &q, NULL, POSENC_ROPE_FORWARD) == POSENC_OK, "rope ref");
      memcpy(g_ref, out, 6 * 2 * 8 * 4);
      /* the planted copies start from the same q values: plant, then refill q around them is not
       * possible (they overlap), so only ALIAS (nothing written) can be right here */
      PLANTED("rope_apply, *positions inside q", posenc_rope_positions, pos, at, 0,
              posenc_rope_apply(g_rope, &view, pos_in, &q, NULL, POSENC_ROPE_FORWARD));
      CHECK(memcmp(g_big.b, g_pre, sizeof g_pre) == 0, "rope_apply, *positions inside q: not refused");
      PLANTED("rope_apply, *cache inside q", posenc_rope_cache_view, view, at, 0,
              posenc_rope_apply(g_rope, view_in, &pos, &q, NULL, POSENC_ROPE_FORWARD));
      CHECK(memcmp(g_big.b, g_pre, sizeof g_pre) == 0, "rope_apply, *cache inside q: not refused");
      { /* *k inside q: k's dtype was read again after q's first rows were rotated (fuzz_rope) */
        static unsigned char k_ref[6 * 8 * 2], k_data[6 * 8 * 2];
        posenc_rope_tensor k = {NULL, F16, 1, 0, 0, 0}, *k_in = (posenc_rope_tensor *)(void *)(out + at);
        posenc_status st;
        for (i = 0; i < sizeof k_data; i++) k_data[i] = (unsigned char)(i % 2 ? 0x3c : i); /* f16 near 1 */
        k.data = k_data;
        for (i = 0; i < 6 * 2 * 8; i++) ((float *)(void *)out)[i] = (float)i * 0.25f;
        CHECK(posenc_rope_apply(g_rope, &view, &pos, &q, &k, POSENC_ROPE_FORWARD) == POSENC_OK, "k ref");
        memcpy(k_ref, k_data, sizeof k_ref);
        memcpy(g_ref, out, 6 * 2 * 8 * 4);
        for (i = 0; i < sizeof k_data; i++) k_data[i] = (unsigned char)(i % 2 ? 0x3c : i);
        for (i = 0; i < 6 * 2 * 8; i++) ((float *)(void *)out)[i] = (float)i * 0.25f;
        *k_in = k;
        g_cases++;
        st = posenc_rope_apply(g_rope, &view, &pos, &q, k_in, POSENC_ROPE_FORWARD);
        CHECK(st == POSENC_ERR_ALIAS || (st == POSENC_OK && memcmp(k_data, k_ref, sizeof k_ref) == 0),
              "rope_apply, *k inside q: %s, k rotated unlike with *k elsewhere", posenc_strerror(st));
      }
    }
    { /* T5: the buckets config inside the plan and inside the bucket row */
      posenc_t5_buckets cfg = {32, 128, 1};
      REFERENCE("t5_plan", sizeof(posenc_t5_plan), posenc_t5_plan_init((posenc_t5_plan *)(void *)out, &cfg));
      PLANTED("t5_plan_init, *cfg inside *plan", posenc_t5_buckets, cfg, at, sizeof(posenc_t5_plan),
              posenc_t5_plan_init((posenc_t5_plan *)(void *)out, cfg_in));
      REFERENCE("t5_range", 300 * 4, posenc_t5_bucket_range(&cfg, -150, 300, (int32_t *)(void *)out));
      PLANTED("t5_bucket_range, *cfg inside out", posenc_t5_buckets, cfg, at, 300 * 4,
              posenc_t5_bucket_range(cfg_in, -150, 300, (int32_t *)(void *)out));
    }
    { /* score tiles: the tile and mask descriptors inside the scores */
      posenc_score_tile tile;
      posenc_score_mask mask = {1, 3, NULL};
      float slopes[2] = {0.5f, 0.25f};
      size_t i;
      memset(&tile, 0, sizeof tile);
      tile.scores = out; tile.dtype = F32; tile.heads = 2; tile.rows = 6; tile.cols = 10; tile.q_pos = 4;
      for (i = 0; i < 120; i++) ((float *)(void *)out)[i] = 0.0f;
      CHECK(posenc_alibi_add(&tile, &mask, POSENC_ALIBI_RELATIVE, 0, slopes) == POSENC_OK, "alibi ref");
      memcpy(g_ref, out, 120 * 4);
      /* planted: the rest of the tile holds zeros, as in the reference; the struct's own bytes
       * are scores the call overwrites (reading them first) or refuses */
#define ZERO_TILE_AROUND(at_, size_) do { size_t z_; for (z_ = 0; z_ < 480; z_++) \
        if (z_ < (at_) || z_ >= (at_) + (size_)) out[z_] = 0; } while (0)
      memset(g_big.b, TL_CANARY, sizeof g_big.b);
      *(posenc_score_tile *)(void *)(out + at) = tile;
      ZERO_TILE_AROUND(at, sizeof tile);
      memcpy(g_pre, g_big.b, sizeof g_pre);
      g_skip_lo = at; g_skip_hi = at + sizeof tile;
      planted_verdict("alibi_add, *tile inside the scores",
                      posenc_alibi_add((posenc_score_tile *)(void *)(out + at), &mask, POSENC_ALIBI_RELATIVE, 0,
                                       slopes), 120 * 4);
      memset(g_big.b, TL_CANARY, sizeof g_big.b);
      *(posenc_score_mask *)(void *)(out + at) = mask;
      ZERO_TILE_AROUND(at, sizeof mask);
      memcpy(g_pre, g_big.b, sizeof g_pre);
      g_skip_lo = at; g_skip_hi = at + sizeof mask;
      planted_verdict("alibi_add, *mask inside the scores",
                      posenc_alibi_add(&tile, (posenc_score_mask *)(void *)(out + at), POSENC_ALIBI_RELATIVE, 0,
                                       slopes), 120 * 4);
      g_skip_lo = g_skip_hi = 0;
#undef ZERO_TILE_AROUND
    }
    { /* .npy: the shape inside the header being written, *info inside the bytes being parsed */
      size_t shape[3] = {7, 300, 5}, len = 0;
      REFERENCE("npy_header", 128, posenc_npy_header(POSENC_NPY_F32, 3, shape, out, 1024, &len));
      memset(g_big.b, TL_CANARY, sizeof g_big.b);
      memcpy(out + 40, shape, sizeof shape);
      memcpy(g_pre, g_big.b, sizeof g_pre);
      planted_verdict("npy_header, shape inside out",
                      posenc_npy_header(POSENC_NPY_F32, 3, (const size_t *)(void *)(out + 40), out, 1024, &len), 128);
    }
  }
}

/* ---- paths the coverage stage found unreached (.ci/stage-coverage.sh) ----------------------
 * Checks no case above reached: size arithmetic that passes its first test and fails a later one
 * (the product in bytes past PTRDIFF_MAX, a buffer that wraps past the top of the address space),
 * a caller's struct inside an output, handles that posenc_rope_init never makes. Pointers near
 * the top of the address space are never dereferenced: the call must fail first. */
static POSENC_ROPE_STORAGE(2) g_rope_mrope2_st;  /* head_dim 2 with M-RoPE sections {1, 0, 0} */
static rope8_store g_rope_bad_st;                  /* spoilt copies of g_rope */
static posenc_rope *const g_rope_mrope2 = &g_rope_mrope2_st.rope, *const g_rope_bad = &g_rope_bad_st.rope;

static void test_unreached_checks(void) {
  const size_t past = (size_t)PTRDIFF_MAX / 4 + 1; /* f32 elements: fits in size_t, not in bytes */
  posenc_rope_config m = posenc_rope_default(2);
  m.mrope = POSENC_ROPE_MROPE_SECTIONS; m.mrope_section[0] = 1;
  CHECK(posenc_rope_init(g_rope_mrope2, sizeof g_rope_mrope2_st, &m) == POSENC_OK, "M-RoPE rope, head_dim 2");

  /* RoPE caches: 8 floats a row, (n - 1) * 8 + 8 elements fit, their bytes do not */
  CASE(rcache, POSENC_ERR_OVERFLOW, a.n = (size_t)PTRDIFF_MAX / 32 + 1);
  CASE(rcache, POSENC_ERR_OVERFLOW, a.mode = 1; a.n = (size_t)PTRDIFF_MAX / 32 + 1);
  CASE(rcache, POSENC_ERR_OVERFLOW, a.mode = 2; a.n = (size_t)PTRDIFF_MAX / 32 + 1);
  /* the spec is read for every tile: inside out it would change while the cache is written */
  CASE(rcache, POSENC_ERR_ALIAS, memcpy(MEM + 64, &s_spec, sizeof s_spec);
       a.spec = (const posenc_rope_cache_spec *)(const void *)(MEM + 64));
  CASE(rcache, POSENC_ERR_ALIAS, a.mode = 1; memcpy(MEM + 64, &s_spec, sizeof s_spec);
       a.spec = (const posenc_rope_cache_spec *)(const void *)(MEM + 64));
  /* handles posenc_rope_init never makes: more pairs than POSENC_ROPE_MAX_DIM allows, or than head_dim */
  memcpy(&g_rope_bad_st, &g_rope_st, sizeof g_rope_bad_st); g_rope_bad->self = g_rope_bad;
  g_rope_bad->pairs = POSENC_ROPE_MAX_DIM / 2 + 1;
  CHECK(posenc_rope_cache_width(g_rope_bad, POSENC_ROPE_CACHE_HALF) == 0, "cache_width of a rope with too many pairs");
  CASE(rcache, POSENC_ERR_DIM, a.rope = g_rope_bad);
  CASE(rapply, POSENC_ERR_DIM, a.rope = g_rope_bad);
  memcpy(&g_rope_bad_st, &g_rope_st, sizeof g_rope_bad_st); g_rope_bad->self = g_rope_bad;
  g_rope_bad->config.head_dim = 2 * g_rope->pairs - 2;
  CASE(rapply, POSENC_ERR_DIM, a.rope = g_rope_bad);
  CASE(rapply, POSENC_ERR_DIM, a.cache = &s_view; a.rope = g_rope_bad);

  /* RoPE rotation: q's elements fit in size_t, its bytes do not (1 token, 2 heads of 8, f32) */
  CASE(rapply, POSENC_ERR_OVERFLOW, s_rpos.tokens = 1; s_rpos.batch = (size_t)PTRDIFF_MAX / 64 + 1);
  /* M-RoPE reads 3 ids a token: q (f16, head_dim 2) spans 2^62 bytes, the ids 3 * 2^62 */
  if (sizeof(size_t) > 4)
    CASE(rapply, POSENC_ERR_OVERFLOW, a.rope = g_rope_mrope2; a.k = NULL; s_q.dtype = F16; s_q.heads = 1;
         s_rpos.ids = s_ids; s_rpos.tokens = 1; s_rpos.batch = (size_t)1 << (sizeof(size_t) * 8 - 4));
  /* the structs read again while rotating: the positions, and the cache view (rope: test_structs_in_outputs) */
  CASE(rapply, POSENC_ERR_ALIAS, memcpy(MEM + 64, &s_rpos, sizeof s_rpos);
       a.pos = (const posenc_rope_positions *)(const void *)(MEM + 64));
  CASE(rapply, POSENC_ERR_ALIAS, memcpy(MEM + 96, &s_view, sizeof s_view);
       a.cache = (const posenc_rope_cache_view *)(const void *)(MEM + 96));
  CASE(rapply, POSENC_ERR_ALIAS, memcpy(MEM + 288, &s_view, sizeof s_view);          /* inside k */
       a.cache = (const posenc_rope_cache_view *)(const void *)(MEM + 288));

  /* masked add: T * token_stride overflows though (T - 1) * token_stride + D does not */
  CASE(efwd, POSENC_ERR_OVERFLOW, s_x.token_stride = SIZE_MAX / 2 - 7);
  CASE(efwd, POSENC_ERR_OVERFLOW, s_x.batch_stride = past);             /* elements fit, bytes do not */
  CASE(efwd, POSENC_ERR_OVERFLOW, s_x.data = (void *)(uintptr_t)(UINTPTR_MAX - 63)); /* wraps */
  CASE(efwd, POSENC_ERR_OVERFLOW, s_ec.table.row_stride = (size_t)PTRDIFF_MAX / 60 + 1); /* 16 rows */
  CASE(efwd, POSENC_ERR_OVERFLOW, s_ec.table.n_rows = 1; s_ec.table.row_stride = past);
  CASE(ebwd, POSENC_ERR_OVERFLOW, s_x.token_stride = SIZE_MAX / 2 - 7);
  /* grad_table (16 rows of 4 floats): its elements, then its bytes, then its stride in bytes */
  CASE(ebwd, POSENC_ERR_OVERFLOW, a.gts = SIZE_MAX / 60 + 1);
  CASE(ebwd, POSENC_ERR_OVERFLOW, a.gts = (size_t)PTRDIFF_MAX / 60 + 1);
  CASE(ebwd, POSENC_ERR_OVERFLOW, s_ec.table.n_rows = 1; a.gts = past);
  CASE(ebwd, POSENC_ERR_OVERFLOW, a.gt = (float *)(uintptr_t)(UINTPTR_MAX - 255)); /* 256 bytes: wraps */

  /* resize: (2r+1) * n in 64 bits with n = 2^32 source rows and 2^31 new ones */
  if (sizeof(size_t) > 4)
    CASE(resize, POSENC_ERR_OVERFLOW, s_src.n_rows = (size_t)1 << (sizeof(size_t) * 4); a.rows = (size_t)1 << 31);
  /* T5: the table's extent fits in size_t, its bytes do not (32 rows of bf16) */
  CASE(t5add, POSENC_ERR_OVERFLOW, s_t5t.row_stride = (SIZE_MAX - 2) / 31);
  /* DeBERTa and log-n: a count past INT32_MAX positions from a start that keeps the last in range */
  CASE(debrange, POSENC_ERR_POSITION, a.first = INT32_MIN; a.count = (size_t)INT32_MAX + 2);
  CASE(debrel, POSENC_ERR_POSITION, a.q = 1; a.k = (size_t)INT32_MAX + 2; a.count = SIZE_MAX);
  CASE(logn, POSENC_ERR_POSITION, a.count = (size_t)INT32_MAX + 2);

  CHECK(posenc_spectrum_work((size_t)1 << (sizeof(size_t) * 4)) == 0, "spectrum_work: dim * (dim + 1) overflows");
  CHECK(strcmp(posenc_isa_name(POSENC_ISA_AUTO), "auto") == 0, "isa_name(AUTO)");
}

static void test_reached(void) {
  int i;
  for (i = 1; i <= -(int)FIRST_CODE; i++) {
    /* the self-test's: a broken build (test_single_file, clang -ffp-contract=fast) and a flush mode
     * (test_fpenv) */
    if (i == -(int)POSENC_ERR_SELFTEST || i == -(int)POSENC_ERR_SUBNORMAL) continue;
    CHECK(g_reached[i], "no case returns status %d (%s)", -i, posenc_strerror((posenc_status)-i));
  }
}

int main(void) {
  posenc_rope_config near = posenc_rope_default(8), far = posenc_rope_default(8);
  posenc_t5_buckets cfg = {32, 128, 1};
  posenc_rope_cache_spec half = {POSENC_ROPE_CACHE_HALF, F32, 0};
  far.base = 1e-30;
  if (posenc_rope_init(g_rope, sizeof g_rope_st, &near) != POSENC_OK || posenc_rope_init(g_rope_far, sizeof g_rope_far_st, &far) != POSENC_OK ||
      posenc_rope_cache_table(g_rope, &half, 0, 16, g_cache, sizeof g_cache) != POSENC_OK ||
      posenc_t5_plan_init(&g_plan, &cfg) != POSENC_OK) {
    printf("setup failed\n");
    return 1;
  }
  s_plan_bad = g_plan;
  s_plan_bad.near[3] = 99;  /* past num_buckets: the add would read outside the table */
  test_sinusoidal();
  test_rope_init();
  test_rope_cache();
  test_rope_apply();
  test_rope_inv_freq();
  test_embed();
  test_tables();
  test_2d();
  test_spectrum_npy();
  test_npy_round_trip();
  test_bias();
  test_dispatch();
  test_plain_values();
  test_strerror();
  test_structs_in_outputs();
  test_every_struct_in_outputs();
  test_unreached_checks();
  test_reached();
  printf("%u argument cases\n", g_cases);
  return tl_summary();
}
