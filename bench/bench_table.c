/* bench_table.c - posenc's sinusoidal table against the usual f32 recipes and a store floor.
 *
 * For each table size n (positions 0..n-1, d = 128, base 10000, f32 interleaved) every method
 * fills the same 64-byte aligned buffer; per method we report time per (sin, cos) pair, output
 * bandwidth, speed relative to SLEEF u35 and to a plain-store floor, and the max absolute error
 * against MPFR on a sample of rows. Single-threaded. This is a benchmark, not a test: it never
 * fails because of a time.
 *
 * Usage: bench_table [--quick] [--n N] [--reps K] [--smoke] [--json FILE] [--label NAME]
 */
#define _GNU_SOURCE /* sincosf, sysconf(_SC_NPROCESSORS_ONLN); implies POSIX 2008 (clock_gettime) */

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "posenc.h"
#include "bench_util.h"
#include "bench_json.h"

#ifdef __GLIBC__
#  include <gnu/libc-version.h>
#endif
#ifdef BENCH_HAVE_MPFR
#  include <mpfr.h>
#endif
#ifdef BENCH_HAVE_SLEEF_AVX2
#  include "bench_sleef_avx2.h"
#endif


#define BENCH_DIM 128
#define BENCH_NFREQ (BENCH_DIM / 2)
#define BENCH_BASE 10000.0
#define BENCH_SAMPLE_ROWS 256     /* rows checked against MPFR, spread over 0..n-1 */
#define BENCH_MPFR_BITS 256
#define BENCH_TARGET_S 0.050      /* K is chosen so that K runs take at least this long */
#define BENCH_MIN_REPS 3
#define BENCH_MAX_REPS 100000
#define BENCH_QUICK_REPS 1
#define BENCH_MAX_N ((size_t)1 << 24) /* positions stay exact in f32 for the peers */
#define BENCH_MAX_METHODS (POSENC_ISA_COUNT + 8) /* a row per backend, and the peers */
#define BENCH_SMOKE_N 64

/* The SLEEF peer works on 8 frequencies at a time. */
typedef char bench_nfreq_is_multiple_of_8[BENCH_NFREQ % 8 == 0 ? 1 : -1];

/* ---- options -------------------------------------------------------------------------------- */
typedef struct bench_opts {
  int quick;
  size_t n;   /* 0: the default sizes */
  long reps;  /* 0: chosen per method from BENCH_TARGET_S */
  bench_cli cli;
} bench_opts;

static void usage(FILE *f) {
  fprintf(f, "usage: bench_table [--quick] [--n N] [--reps K] [--smoke] [--json FILE] [--label NAME]\n"
             "  --quick        %d timed run(s) per method\n"
             "  --n N          one table size, 1 <= N <= %zu (default: 4096 and 131072; smoke: %d)\n"
             "  --reps K       exactly K timed runs per method, 1 <= K <= %d\n" BENCH_CLI_USAGE,
          BENCH_QUICK_REPS, BENCH_MAX_N, BENCH_SMOKE_N, BENCH_MAX_REPS);
}

/* Parses a whole decimal number in [lo, hi]; 0 on success. */
static int parse_count(const char *s, unsigned long lo, unsigned long hi, unsigned long *v) {
  char *end;
  if (!s || *s < '0' || *s > '9') return -1;
  errno = 0;
  *v = strtoul(s, &end, 10);
  return (errno || *end || *v < lo || *v > hi) ? -1 : 0;
}

static int parse_args(int argc, char **argv, bench_opts *o) {
  int a;
  unsigned long v;
  memset(o, 0, sizeof *o);
  for (a = 1; a < argc; a++) {
    int shared = bench_cli_arg(&o->cli, argc, argv, &a);
    if (shared > 0) continue;
    if (shared == 0 && strcmp(argv[a], "--quick") == 0) {
      o->quick = 1;
    } else if (strcmp(argv[a], "--n") == 0 && parse_count(argv[a + 1], 1, BENCH_MAX_N, &v) == 0) {
      o->n = (size_t)v;
      a++;
    } else if (strcmp(argv[a], "--reps") == 0 &&
               parse_count(argv[a + 1], 1, BENCH_MAX_REPS, &v) == 0) {
      o->reps = (long)v;
      a++;
    } else if (strcmp(argv[a], "--help") == 0 || strcmp(argv[a], "-h") == 0) {
      usage(stdout);
      exit(0);
    } else {
      int wants_value = shared < 0 || strcmp(argv[a], "--n") == 0 || strcmp(argv[a], "--reps") == 0;
      fprintf(stderr, "bench_table: %s '%s'\n",
              wants_value ? "bad or missing value for" : "unknown argument", argv[a]);
      usage(stderr);
      return -1;
    }
  }
  if (o->cli.smoke) o->quick = 1;
  return 0;
}

/* ---- the job every method performs ---------------------------------------------------------- */
typedef struct bench_job {
  size_t n_rows;
  float *out;                       /* n_rows x BENCH_DIM, interleaved */
  size_t out_bytes;
  const float *freq;                /* w_i in f32, as HF computes inv_freq */
  posenc_sinusoidal_params params;  /* posenc's view of the same table */
} bench_job;

/* HF/PyTorch: inv_freq = 1 / base ** (arange(0, d, 2).float() / d), all in f32. */
static void hf_frequencies(float *freq) {
  int i;
  for (i = 0; i < BENCH_NFREQ; i++)
    freq[i] = 1.0f / powf((float)BENCH_BASE, (float)(2 * i) / (float)BENCH_DIM);
}

/* ---- methods -------------------------------------------------------------------------------- */
typedef int (*bench_run_fn)(const bench_job *job); /* 0 on success */

static int run_posenc(const bench_job *job) {
  return (int)posenc_sinusoidal_table(&job->params, 0, job->n_rows, job->out, job->out_bytes);
}

/* The HF recipe: angle rounded to f32, sin over the table, then cos. Separate loops also keep
 * the compiler from merging sinf+cosf into one sincos call, which is the next method. */
static int run_libm_sinf_cosf(const bench_job *job) {
  size_t p, i;
  for (p = 0; p < job->n_rows; p++) {
    float *row = job->out + p * BENCH_DIM;
    float fp = (float)p;
    for (i = 0; i < BENCH_NFREQ; i++) row[2 * i] = sinf(fp * job->freq[i]);
    for (i = 0; i < BENCH_NFREQ; i++) row[2 * i + 1] = cosf(fp * job->freq[i]);
  }
  return 0;
}

static int run_libm_sincosf(const bench_job *job) {
  size_t p, i;
  for (p = 0; p < job->n_rows; p++) {
    float *row = job->out + p * BENCH_DIM;
    float fp = (float)p;
    for (i = 0; i < BENCH_NFREQ; i++) sincosf(fp * job->freq[i], &row[2 * i], &row[2 * i + 1]);
  }
  return 0;
}

#ifdef BENCH_HAVE_SLEEF_AVX2
static int run_sleef_u10(const bench_job *job) {
  bench_sleef_sincos_avx2(BENCH_SLEEF_U10, job->out, job->n_rows, job->freq, BENCH_NFREQ);
  return 0;
}

static int run_sleef_u35(const bench_job *job) {
  bench_sleef_sincos_avx2(BENCH_SLEEF_U35, job->out, job->n_rows, job->freq, BENCH_NFREQ);
  return 0;
}
#endif

/* The plain-store floor: the same bytes, no math. 0.5f is not a repeated byte, so the compiler
 * cannot turn the loop into a memset call. memset (rep stosb / wide stores in glibc) is the
 * second floor; it writes 0x3f bytes because zero fills can take a faster path than the nonzero
 * data every method writes (2.5x faster at 64 MiB on a Zen 4 VM). */
static int run_store_loop(const bench_job *job) {
  size_t k, count = job->out_bytes / sizeof(float);
  for (k = 0; k < count; k++) job->out[k] = 0.5f;
  return 0;
}

static int run_memset(const bench_job *job) {
  memset(job->out, 0x3f, job->out_bytes);
  return 0;
}

typedef enum bench_kind { KIND_POSENC, KIND_PEER, KIND_FLOOR } bench_kind;
typedef enum bench_baseline { BASE_NONE, BASE_U35, BASE_FLOOR } bench_baseline;

typedef struct bench_method {
  char name[24];
  const char *id;          /* the JSON backend: posenc's ISA, or the peer's id */
  bench_run_fn run;
  bench_kind kind;
  bench_baseline baseline; /* BASE_U35 / BASE_FLOOR: the reference of that ratio column */
  int isa;                 /* posenc backend selected before timing; -1 for the others */
  int needs_avx2;
} bench_method;

/* The C library's float functions: glibc's, or another's (musl's on wasm32: wasi-libc, Emscripten) */
#ifdef __GLIBC__
#  define BENCH_LIBM "glibc"
#else
#  define BENCH_LIBM "libm"
#endif
static const bench_method peer_methods[] = {
  {BENCH_LIBM " sinf+cosf", BENCH_LIBM "_sinf_cosf", run_libm_sinf_cosf, KIND_PEER, BASE_NONE, -1, 0},
  {BENCH_LIBM " sincosf", BENCH_LIBM "_sincosf", run_libm_sincosf, KIND_PEER, BASE_NONE, -1, 0},
#ifdef BENCH_HAVE_SLEEF_AVX2
  {"sleef u10 avx2", "sleef_u10_avx2", run_sleef_u10, KIND_PEER, BASE_NONE, -1, 1},
  {"sleef u35 avx2", "sleef_u35_avx2", run_sleef_u35, KIND_PEER, BASE_U35, -1, 1},
#endif
  {"floor store loop", "store_loop", run_store_loop, KIND_FLOOR, BASE_FLOOR, -1, 0},
  {"floor memset", "memset", run_memset, KIND_FLOOR, BASE_NONE, -1, 0},
};
typedef char bench_peers_fit[sizeof peer_methods / sizeof peer_methods[0] + POSENC_ISA_COUNT <= BENCH_MAX_METHODS ? 1 : -1];


/* posenc: one method per backend this build has and this CPU runs; then the peers. */
static size_t build_methods(bench_method *list) {
  size_t count = 0, k;
  int isa;
  BK_EACH_USABLE(isa) {
    bench_method *m = &list[count];
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "posenc %s", posenc_isa_name((posenc_isa)isa));
    m->id = posenc_isa_name((posenc_isa)isa);
    m->run = run_posenc;
    m->kind = KIND_POSENC;
    m->baseline = BASE_NONE;
    m->isa = isa;
    count++;
  }
  for (k = 0; k < sizeof peer_methods / sizeof peer_methods[0]; k++)
    if (!peer_methods[k].needs_avx2 || cpu_has_avx2()) list[count++] = peer_methods[k];
  return count;
}

/* ---- timing: the one helper every method goes through --------------------------------------- */
typedef struct bench_result {
  int status;        /* 0, or the method's error code */
  double best_s;     /* best of reps */
  double median_s;
  long reps;
  long done;         /* timed runs so far, in times */
  double *times;
  double max_err;    /* vs MPFR; < 0 when not measured */
  uint64_t digest;   /* of the whole table: posenc backends must agree */
} bench_result;


static double time_once(const bench_method *m, const bench_job *job, int *status) {
  double t0 = now_s();
  *status = m->run(job);
  return now_s() - t0;
}

static long reps_for(double warm_s, const bench_opts *o) {
  double k;
  if (o->reps > 0) return o->reps;
  if (o->quick) return BENCH_QUICK_REPS;
  k = ceil(BENCH_TARGET_S / (warm_s > 1e-9 ? warm_s : 1e-9));
  if (k < BENCH_MIN_REPS) return BENCH_MIN_REPS;
  return k > BENCH_MAX_REPS ? BENCH_MAX_REPS : (long)k;
}


/* Every method's K timed runs are spread over BENCH_ROUNDS rounds, the methods in turn in each (as
 * bench_rope's round-robin): a drift of the clock or of the memory bandwidth within the run then
 * falls on posenc, the peers and the floor alike, where a batch per method put it on one of them.
 * Between runs the ratios still move (the floor by 10-30% on this project's shared VM). */
#define BENCH_ROUNDS 5

/* Warm up once (page faults, caches, clocks; also sizes K); the table it leaves is the one checked. */
static void warm_method(const bench_method *m, const bench_job *job, const bench_opts *o, bench_result *r) {
  memset(r, 0, sizeof *r);
  r->max_err = -1.0;
  if (m->isa >= 0 && (r->status = (int)posenc_isa_set((posenc_isa)m->isa)) != 0) return;
  r->reps = reps_for(time_once(m, job, &r->status), o);
  if (r->status != 0) return;
  r->times = malloc((size_t)r->reps * sizeof *r->times);
  if (!r->times) { fprintf(stderr, "bench_table: out of memory\n"); exit(1); }
}

/* Round `round` of `rounds`: this method's share of its K runs. */
static void time_round(const bench_method *m, const bench_job *job, bench_result *r, long round, long rounds) {
  long k, end = r->reps * (round + 1) / rounds;
  if (r->status != 0) return;
  if (m->isa >= 0) posenc_isa_set((posenc_isa)m->isa);
  for (k = r->done; k < end && r->status == 0; k++) r->times[r->done++] = time_once(m, job, &r->status);
}

static void finish_method(bench_result *r) {
  if (r->status == 0 && r->done > 0) {
    qsort(r->times, (size_t)r->done, sizeof *r->times, cmp_double);
    r->best_s = r->times[0];
    r->median_s = r->times[r->done / 2];
  }
  free(r->times);
  r->times = NULL;
}

/* ---- accuracy: exact values on a sample of rows ---------------------------------------------- */
typedef struct bench_ref {
  size_t count;                    /* 0 without MPFR */
  size_t rows[BENCH_SAMPLE_ROWS];  /* ascending, first 0, last n-1 */
  double *val;                     /* count x BENCH_DIM, interleaved like the output */
} bench_ref;

static void ref_pick_rows(bench_ref *ref, size_t n_rows) {
  size_t k;
  ref->count = n_rows < BENCH_SAMPLE_ROWS ? n_rows : BENCH_SAMPLE_ROWS;
  for (k = 0; k < ref->count; k++)
    ref->rows[k] = ref->count == 1 ? 0 : k * (n_rows - 1) / (ref->count - 1);
}

#ifdef BENCH_HAVE_MPFR
/* sin/cos(p * base^(-2i/d)) at 256 bits, then rounded to double: the reference's own error
 * (~1e-16) is far below anything measured here. */
static void ref_compute(bench_ref *ref) {
  mpfr_t base, expo, w, x, s, c;
  size_t i, k;
  mpfr_inits2(BENCH_MPFR_BITS, base, expo, w, x, s, c, (mpfr_ptr)0);
  mpfr_set_d(base, BENCH_BASE, MPFR_RNDN);
  for (i = 0; i < BENCH_NFREQ; i++) {
    mpfr_set_si(expo, -2 * (long)i, MPFR_RNDN);
    mpfr_div_ui(expo, expo, BENCH_DIM, MPFR_RNDN);
    mpfr_pow(w, base, expo, MPFR_RNDN);
    for (k = 0; k < ref->count; k++) {
      mpfr_mul_ui(x, w, (unsigned long)ref->rows[k], MPFR_RNDN);
      mpfr_sin_cos(s, c, x, MPFR_RNDN);
      ref->val[k * BENCH_DIM + 2 * i] = mpfr_get_d(s, MPFR_RNDN);
      ref->val[k * BENCH_DIM + 2 * i + 1] = mpfr_get_d(c, MPFR_RNDN);
    }
  }
  mpfr_clears(base, expo, w, x, s, c, (mpfr_ptr)0);
  mpfr_free_cache();
}
#endif

static int ref_init(bench_ref *ref, size_t n_rows) {
  memset(ref, 0, sizeof *ref);
#ifdef BENCH_HAVE_MPFR
  ref_pick_rows(ref, n_rows);
  ref->val = malloc(ref->count * BENCH_DIM * sizeof *ref->val);
  if (!ref->val) return -1;
  ref_compute(ref);
#else
  (void)n_rows;
  (void)ref_pick_rows;
#endif
  return 0;
}

static void ref_free(bench_ref *ref) { free(ref->val); }

static double ref_max_error(const bench_ref *ref, const float *out) {
  double worst = 0.0;
  size_t k, c;
  if (ref->count == 0) return -1.0;
  for (k = 0; k < ref->count; k++)
    for (c = 0; c < BENCH_DIM; c++) {
      double e = fabs((double)out[ref->rows[k] * BENCH_DIM + c] - ref->val[k * BENCH_DIM + c]);
      if (e > worst) worst = e;
    }
  return worst;
}

/* FNV-1a over 64-bit words: enough to tell whether two tables have the same bits. */
static uint64_t table_digest(const void *data, size_t bytes) {
  const unsigned char *b = data;
  uint64_t h = 14695981039346656037u, w;
  size_t k;
  for (k = 0; k + 8 <= bytes; k += 8) {
    memcpy(&w, b + k, 8);
    h = (h ^ w) * 1099511628211u;
  }
  return h;
}

/* ---- one table size ------------------------------------------------------------------------- */
typedef struct bench_summary {
  size_t n;
  double isa_s[POSENC_ISA_COUNT]; /* each posenc backend's best time; 0 when it did not run */
  double u35_s, floor_s;          /* 0 when that method did not run */
} bench_summary;

static double baseline_time(const bench_method *m, const bench_result *r, size_t count,
                            bench_baseline which) {
  size_t k;
  for (k = 0; k < count; k++)
    if (m[k].baseline == which && r[k].status == 0) return r[k].best_s;
  return 0.0;
}

static void print_ratio(double num, double den) {
  if (num > 0.0 && den > 0.0) printf("  %7.2fx", num / den);
  else printf("  %8s", "-");
}

static void print_row(const bench_method *m, const bench_result *r, const bench_job *job,
                      double u35_s, double floor_s) {
  double pairs = (double)job->n_rows * BENCH_NFREQ;
  printf("%-18s", m->name);
  if (r->status != 0) {
    printf("  FAILED: %s\n", m->kind == KIND_POSENC ? posenc_strerror((posenc_status)r->status)
                                                    : "error");
    return;
  }
  printf("  %8.3f  %7.2f", r->best_s * 1e9 / pairs, (double)job->out_bytes / r->best_s * 1e-9);
  print_ratio(u35_s, r->best_s);
  print_ratio(r->best_s, floor_s);
  if (r->max_err >= 0.0) printf("  %9.2e", r->max_err);
  else printf("  %9s", m->kind == KIND_FLOOR ? "-" : "n/a");
  printf("  %7ld  %+6.1f%%\n", r->reps, 100.0 * (r->median_s / r->best_s - 1.0));
}

/* Posenc promises the same bits on every backend: say whether this run saw that (1: it did not). */
static int print_identity(const bench_method *m, const bench_result *r, size_t count) {
  size_t k, first = count;
  for (k = 0; k < count; k++) {
    if (m[k].kind != KIND_POSENC || r[k].status != 0) continue;
    if (first == count) first = k;
    else if (r[k].digest != r[first].digest) {
      printf("posenc backends: %s and %s DIFFER (digests %016llx, %016llx)\n", m[first].name,
             m[k].name, (unsigned long long)r[first].digest, (unsigned long long)r[k].digest);
      return 1;
    }
  }
  if (first < count) printf("posenc backends: bit-identical tables (digest %016llx)\n",
                            (unsigned long long)r[first].digest);
  return 0;
}

/* 1 if the posenc backends' tables differ. */
static int print_table(const bench_method *m, const bench_result *r, size_t count,
                       const bench_job *job) {
  double u35_s = baseline_time(m, r, count, BASE_U35);
  double floor_s = baseline_time(m, r, count, BASE_FLOOR);
  size_t k;
  printf("\nn = %zu rows x %d cols: %zu (sin,cos) pairs, %.1f MiB written per run\n", job->n_rows,
         BENCH_DIM, job->n_rows * BENCH_NFREQ, (double)job->out_bytes / (1024.0 * 1024.0));
  printf("%-18s  %8s  %7s  %8s  %8s  %9s  %7s  %7s\n", "method", "ns/pair", "GB/s", "vs u35",
         "vs floor", "max|err|", "reps", "med/min");
  for (k = 0; k < count; k++) print_row(&m[k], &r[k], job, u35_s, floor_s);
  return print_identity(m, r, count);
}

static void json_table(bench_json *j, const bench_method *m, const bench_result *r, size_t count,
                       const bench_job *job) {
  static const char *const impl[] = {"posenc", "peer", "floor"}; /* by bench_kind */
  bench_rec rec[BENCH_MAX_METHODS];
  char size[64];
  size_t k;
  for (k = 0; k < count; k++) {
    bench_rec x;
    x.kernel = "sinusoidal_f32";
    x.backend = m[k].id;
    x.impl = impl[m[k].kind];
    x.seconds = r[k].status == 0 ? r[k].best_s : 0.0;
    x.elems = (double)job->n_rows * BENCH_NFREQ;
    x.bytes = (double)job->out_bytes;
    x.reps = r[k].reps;
    rec[k] = x;
  }
  snprintf(size, sizeof size, "n=%zu,d=%d", job->n_rows, BENCH_DIM);
  bench_json_group(j, size, "pair", "best", rec, count);
}

static void summarize(const bench_method *m, const bench_result *r, size_t count, size_t n,
                      bench_summary *s) {
  size_t k;
  memset(s, 0, sizeof *s);
  s->n = n;
  s->u35_s = baseline_time(m, r, count, BASE_U35);
  s->floor_s = baseline_time(m, r, count, BASE_FLOOR);
  for (k = 0; k < count; k++)
    if (m[k].kind == KIND_POSENC && r[k].status == 0) s->isa_s[m[k].isa] = r[k].best_s;
}

/* 0 on success, 1 if a method failed, -1 if the size could not be run at all. */
static int run_size(size_t n, const float *freq, const bench_opts *o, bench_json *j,
                    bench_summary *s) {
  bench_method methods[BENCH_MAX_METHODS];
  bench_result results[BENCH_MAX_METHODS];
  size_t count = build_methods(methods), k;
  bench_job job;
  bench_ref ref;
  void *buf = NULL;
  int failed = 0;
  long round, rounds = BENCH_ROUNDS;

  job.n_rows = n;
  job.freq = freq;
  job.params = posenc_sinusoidal_default(BENCH_DIM);
  if (posenc_sinusoidal_bytes(&job.params, n, &job.out_bytes) != POSENC_OK ||
      !(buf = bench_alloc64(job.out_bytes)) || ref_init(&ref, n) != 0) {
    fprintf(stderr, "bench_table: cannot allocate the n = %zu table\n", n);
    bench_free64(buf);
    return -1;
  }
  job.out = buf;
  for (k = 0; k < count; k++) {
    warm_method(&methods[k], &job, o, &results[k]);
    if (results[k].status != 0) continue;
    if (methods[k].kind != KIND_FLOOR) results[k].max_err = ref_max_error(&ref, job.out);
    if (methods[k].kind == KIND_POSENC) results[k].digest = table_digest(job.out, job.out_bytes);
  }
  for (round = 0; round < rounds; round++)
    for (k = 0; k < count; k++) time_round(&methods[k], &job, &results[k], round, rounds);
  for (k = 0; k < count; k++) {
    finish_method(&results[k]);
    if (results[k].status != 0) failed = 1;
  }
  posenc_isa_set(POSENC_ISA_AUTO);
  failed |= print_table(methods, results, count, &job);
  json_table(j, methods, results, count, &job);
  summarize(methods, results, count, n, s);
  ref_free(&ref);
  bench_free64(buf);
  return failed;
}

/* ---- header and summary --------------------------------------------------------------------- */

static void print_header(const bench_opts *o) {
  char cpu[256];
  cpu_model(cpu, sizeof cpu);
  printf("posenc %s bench_table: sinusoidal table, d = %d, base %g, f32 interleaved, "
         "positions 0..n-1\n", POSENC_VERSION_STRING, BENCH_DIM, BENCH_BASE);
  printf("machine : %s, %ld cores online; single-threaded\n", cpu, bench_cores());
  printf("compiler: %s; build: %s (-O%s)\n", BENCH_COMPILER, BENCH_BUILD_TYPE, BENCH_OPTIMIZATION);
#ifdef __GLIBC__
  printf("glibc   : %s\n", gnu_get_libc_version());
#endif
#ifdef BENCH_HAVE_SLEEF_AVX2
  printf("sleef   : %s\n", cpu_has_avx2() ? "AVX2 peers, angles fl32(p * w) as in HF"
                                          : "built, but this CPU lacks AVX2: peers skipped");
#else
  printf("sleef   : not found at build time: SLEEF peers skipped\n");
#endif
#ifdef BENCH_HAVE_MPFR
  printf("accuracy: max |out - exact| on %d sample rows (incl. 0 and n-1), all columns; "
         "exact = MPFR %s at %d bits\n", BENCH_SAMPLE_ROWS, mpfr_get_version(), BENCH_MPFR_BITS);
#else
  printf("accuracy: MPFR not found at build time: errors not measured (n/a)\n");
#endif
  printf("timing  : CLOCK_MONOTONIC, 1 warm-up, ");
  if (o->cli.smoke) printf("K = 1 run (--smoke: timings meaningless)\n");
  else if (o->reps > 0) printf("best of K = %ld runs\n", o->reps);
  else if (o->quick) printf("K = %d run (--quick)\n", BENCH_QUICK_REPS);
  else printf("best of K runs, K >= %d with K runs >= %.0f ms\n", BENCH_MIN_REPS,
              BENCH_TARGET_S * 1e3);
  printf("          each method's runs spread over %d rounds, the methods in turn in each\n", BENCH_ROUNDS);
  printf("columns : vs u35 = sleef_u35 time / method time (speedup); vs floor = method time / "
         "store-loop time;\n          med/min = median over best time (noise within the run)\n");
}

/* Targets: at least TARGET_VS_U35 times SLEEF u35's speed at every size; at most
 * TARGET_VS_STORE times the plain store's time at n = 4096 (the table in cache). */
#define TARGET_VS_U35 3.0
#define TARGET_VS_STORE 1.5
#define TARGET_STORE_N 4096

/* One line per SIMD backend that ran (scalar has no target). */
static void print_summary_lines(const bench_summary *s) {
  int isa;
  for (isa = 1; isa < POSENC_ISA_COUNT; isa++) {
    const double t = s->isa_s[isa];
    if (t <= 0.0) continue;
    printf("n = %7zu: %-6s vs sleef_u35: ", s->n, posenc_isa_name((posenc_isa)isa));
    if (s->u35_s > 0.0)
      printf("%.2fx faster (target >= %.0fx) [%s]", s->u35_s / t, TARGET_VS_U35,
             s->u35_s / t >= TARGET_VS_U35 ? "met" : "missed");
    else printf("n/a (target >= %.0fx)", TARGET_VS_U35);
    printf("; vs plain store: ");
    if (s->floor_s > 0.0 && s->n == TARGET_STORE_N)
      printf("%.2fx (target <= %.1fx) [%s]\n", t / s->floor_s, TARGET_VS_STORE,
             t / s->floor_s <= TARGET_VS_STORE ? "met" : "missed");
    else if (s->floor_s > 0.0) printf("%.2fx (no target at this size)\n", t / s->floor_s);
    else printf("n/a\n");
  }
}

int main(int argc, char **argv) {
  static const size_t default_sizes[] = {4096, 131072};
  bench_summary summary[2];
  float freq[BENCH_NFREQ];
  bench_opts opts;
  bench_json json;
  size_t n_sizes, k;
  int rc = 0;

  if (parse_args(argc, argv, &opts) != 0) return 2;
  if (opts.cli.smoke && !opts.n) opts.n = BENCH_SMOKE_N;
  if (bench_json_open(&json, "table", &opts.cli) != 0) return 1;
  n_sizes = opts.n ? 1 : sizeof default_sizes / sizeof default_sizes[0];
  hf_frequencies(freq);
  print_header(&opts);
  for (k = 0; k < n_sizes; k++) {
    int st = run_size(opts.n ? opts.n : default_sizes[k], freq, &opts, &json, &summary[k]);
    if (st < 0) return 1;
    rc |= st;
  }
  if (!opts.cli.smoke) {
    printf("\nsummary (each SIMD backend; vs plain store = its time / store-loop time)\n");
    for (k = 0; k < n_sizes; k++) print_summary_lines(&summary[k]);
  }
  return bench_json_close(&json) != 0 || rc;
}
