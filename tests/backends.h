/* backends.h - the backends a test, fuzz target or bench runs here, and "every backend gives
 * scalar's bytes", written once. The list is the library's: ISAs 0 .. POSENC_ISA_COUNT - 1 in enum
 * order (scalar first), those posenc_isa_compiled and posenc_isa_supported; a backend appended to
 * the enum is picked up with no edit here.
 *
 *   BK_EACH_USABLE(isa)   an int isa over the backends that run here; selects nothing
 *   BK_FOR_EACH(it)       the same, each one selected (posenc_isa_set) for the body; the backend
 *                         active before the loop is selected again when it ends. `continue` is
 *                         fine; leaving the loop early (break, return) needs bk_end(&it) first.
 *   bk_compare(fn, ctx, out_bytes, scalar_out, &r)
 *                         fn on scalar, then on every other backend that runs here, each into a
 *                         fresh buffer; status and bytes must equal scalar's. r.msg names the
 *                         first backend that differs and the first differing byte.
 *   bk_compare_ok(...)    the same for a call that must succeed: 1 when scalar returned OK too
 *   bk_select(isa)        selects one backend (scalar for a reference, say); returns the one
 *                         active before, for bk_select again afterwards
 *   bk_best()             the backend the automatic choice must take (POSENC_ISA unset): the
 *                         highest priority in posenc.h's ISA table among those that run here (its
 *                         first among equals)
 *   bk_report(f)          which backends run here, and a line for each that does not, and why
 *                         (bk_report_not_run: those lines alone; bk_report_measured: an accuracy
 *                         sweep's, whose values every backend listed gave)
 *
 * A backend listed as usable that posenc_isa_set refuses is a dispatch bug (test_dispatch's
 * subject): the harness aborts rather than run the rest on the wrong backend.
 * tests/ includes this as "backends.h", fuzz/ likewise (its include path has tests/), bench/ as
 * "../tests/backends.h". */
#ifndef POSENC_TEST_BACKENDS_H
#define POSENC_TEST_BACKENDS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "posenc.h"

/* What the byte comparison writes into an output before each run, so that bytes a backend leaves
 * alone compare equal only where scalar left them alone too (testlib's TL_CANARY). */
#define BK_FILL 0xA5

static inline int bk_usable(posenc_isa isa) { return posenc_isa_compiled(isa) && posenc_isa_supported(isa); }

/* Why isa does not run here, or NULL if it does. */
static inline const char *bk_not_run_reason(posenc_isa isa) {
  if (!posenc_isa_compiled(isa)) return "not compiled in this build";
  if (!posenc_isa_supported(isa)) return "not supported by this CPU";
  return NULL;
}

/* The first backend after `after` (an ISA, or -1) that runs here; POSENC_ISA_COUNT if none. */
static inline int bk_next_usable(int after) {
  int i;
  for (i = after + 1; i < POSENC_ISA_COUNT; i++)
    if (bk_usable((posenc_isa)i)) break;
  return i;
}

#define BK_EACH_USABLE(isa) for ((isa) = bk_next_usable(-1); (isa) < POSENC_ISA_COUNT; (isa) = bk_next_usable(isa))

/* The highest-priority backend that runs here, by the ISA table's priorities (not the enum's
 * order: a backend appended to the table may rank below one before it); the first among equals. */
static inline posenc_isa bk_best(void) {
#define BK_ISA_PRIORITY(name, NAME, prio, detect, build) prio,
  static const int priority[POSENC_ISA_COUNT] = {POSENC_I_ISA_TABLE(BK_ISA_PRIORITY)};
#undef BK_ISA_PRIORITY
  int isa, best = POSENC_ISA_SCALAR;
  BK_EACH_USABLE(isa) if (priority[isa] > priority[best]) best = isa;
  return (posenc_isa)best;
}

/* isas[0 .. n-1]: the backends that run here, scalar first; returns n (>= 1). */
static inline size_t bk_list(posenc_isa isas[POSENC_ISA_COUNT]) {
  size_t n = 0;
  int i;
  BK_EACH_USABLE(i) isas[n++] = (posenc_isa)i;
  return n;
}

/* Selects isa, which must run here; returns the backend that was active. */
static inline posenc_isa bk_select(posenc_isa isa) {
  posenc_isa was = posenc_isa_active();
  posenc_status st = posenc_isa_set(isa);
  if (st != POSENC_OK || posenc_isa_active() != isa) {
    fprintf(stderr, "backends.h: posenc_isa_set(%s): %s, active %s\n", posenc_isa_name(isa), posenc_strerror(st),
            posenc_isa_name(posenc_isa_active()));
    abort();
  }
  return was;
}

/* ---- each backend, selected ------------------------------------------------------------------ */
typedef struct bk_iter {
  posenc_isa isa;   /* the backend selected for the body */
  size_t index;     /* 0 for scalar (the first), 1, 2, ... for the others that run here */
  int next;         /* the enum value after isa; POSENC_ISA_COUNT + 1 once ended */
  posenc_isa saved; /* active before the loop, selected again at its end */
} bk_iter;

static inline bk_iter bk_begin(void) {
  bk_iter it;
  it.isa = POSENC_ISA_SCALAR;
  it.index = (size_t)-1;
  it.next = 0;
  it.saved = posenc_isa_active();
  return it;
}

/* Restores the backend active before the loop (once; bk_next calls it at the end). */
static inline void bk_end(bk_iter *it) {
  if (it->next > POSENC_ISA_COUNT) return;
  it->next = POSENC_ISA_COUNT + 1;
  bk_select(it->saved);
}

/* Selects the next backend that runs here: 1, or 0 (the one active before restored) at the end. */
static inline int bk_next(bk_iter *it) {
  int i = it->next > POSENC_ISA_COUNT ? POSENC_ISA_COUNT : bk_next_usable(it->next - 1);
  if (i >= POSENC_ISA_COUNT) {
    bk_end(it);
    return 0;
  }
  it->isa = (posenc_isa)i;
  it->index++;
  it->next = i + 1;
  bk_select(it->isa);
  return 1;
}

#define BK_FOR_EACH(it) for (bk_iter it = bk_begin(); bk_next(&it);)

/* ---- every backend against scalar, byte for byte --------------------------------------------- */
/* One run on the active backend: writes its result into out (out_bytes, BK_FILL before the call;
 * bytes it leaves alone are compared too) and returns a status (a posenc_status; 0 is OK). */
typedef int (*bk_fn)(void *ctx, void *out, size_t out_bytes);

typedef struct bk_result {
  int status;           /* scalar's */
  size_t compared;      /* backends run against scalar (0: scalar is all that runs here) */
  size_t differ;        /* of those, how many gave another status or other bytes */
  posenc_isa first_isa; /* the first that did (when differ > 0) */
  size_t at;            /* its first differing byte; SIZE_MAX when only the status differed */
  char msg[160];        /* "avx2 differs from scalar at byte 12 of 4096", "" when none did */
} bk_result;

/* n bytes at a 64-byte boundary (so that outputs of POSENC_STREAM_MIN_BYTES and more take the
 * non-temporal path); *block is what to free. */
static inline unsigned char *bk_alloc(size_t n, void **block) {
  unsigned char *p = (unsigned char *)malloc(n + 64);
  if (!p) {
    fprintf(stderr, "backends.h: out of memory (%zu bytes)\n", n);
    abort();
  }
  *block = p;
  return p + (64 - (uintptr_t)p % 64) % 64;
}

/* fn on scalar, then on every other backend that runs here, each into its own out_bytes (64-byte
 * aligned, BK_FILL before the call). Scalar's bytes go to scalar_out too unless it is NULL. The
 * backend active before is selected again. Returns r->differ: 0 when every backend gave scalar's
 * status and bytes. */
static inline size_t bk_compare(bk_fn fn, void *ctx, size_t out_bytes, void *scalar_out, bk_result *r) {
  void *block[2];
  unsigned char *ref = bk_alloc(out_bytes, &block[0]), *got = bk_alloc(out_bytes, &block[1]);
  memset(r, 0, sizeof *r);
  r->first_isa = POSENC_ISA_SCALAR;
  r->at = SIZE_MAX;
  BK_FOR_EACH(it) {
    unsigned char *out = it.index == 0 ? ref : got;
    size_t at = SIZE_MAX, k;
    int st;
    memset(out, BK_FILL, out_bytes);
    st = fn(ctx, out, out_bytes);
    if (it.index == 0) {
      r->status = st;
      continue;
    }
    r->compared++;
    for (k = 0; k < out_bytes && at == SIZE_MAX; k++)
      if (got[k] != ref[k]) at = k;
    if (st == r->status && at == SIZE_MAX) continue;
    if (r->differ++ > 0) continue;
    r->first_isa = it.isa;
    r->at = at;
    if (st != r->status)
      snprintf(r->msg, sizeof r->msg, "%s returns %d (%s), scalar %d (%s)", posenc_isa_name(it.isa), st,
               posenc_strerror((posenc_status)st), r->status, posenc_strerror((posenc_status)r->status));
    else
      snprintf(r->msg, sizeof r->msg, "%s differs from scalar at byte %zu of %zu", posenc_isa_name(it.isa), at,
               out_bytes);
  }
  if (scalar_out) memcpy(scalar_out, ref, out_bytes);
  free(block[0]);
  free(block[1]);
  return r->differ;
}

/* bk_compare for a call that must succeed: 1 when scalar returned 0 (OK) and every other backend
 * gave its status and bytes; else 0, and r->msg says what went wrong. */
static inline int bk_compare_ok(bk_fn fn, void *ctx, size_t out_bytes, void *scalar_out, bk_result *r) {
  if (bk_compare(fn, ctx, out_bytes, scalar_out, r) != 0) return 0;
  if (r->status == 0) return 1;
  snprintf(r->msg, sizeof r->msg, "scalar returns %d (%s)", r->status, posenc_strerror((posenc_status)r->status));
  return 0;
}

/* ---- what runs here -------------------------------------------------------------------------- */
/* "  neon: not run here (not compiled in this build)" for each backend that does not run here;
 * returns how many. */
static inline int bk_report_not_run(FILE *f) {
  int i, skipped = 0;
  for (i = 0; i < POSENC_ISA_COUNT; i++) {
    const char *why = bk_not_run_reason((posenc_isa)i);
    if (!why) continue;
    fprintf(f, "  %s: not run here (%s)\n", posenc_isa_name((posenc_isa)i), why);
    skipped++;
  }
  return skipped;
}

/* heading, the backends that run here ("scalar sse2 avx2"), then bk_report_not_run. */
static inline int bk_report_under(FILE *f, const char *heading) {
  int i;
  fprintf(f, "%s", heading);
  BK_EACH_USABLE(i) fprintf(f, " %s", posenc_isa_name((posenc_isa)i));
  fprintf(f, "\n");
  return bk_report_not_run(f);
}

/* "backends run here: scalar sse2 avx2", then bk_report_not_run. */
static inline int bk_report(FILE *f) { return bk_report_under(f, "backends run here:"); }

/* 0 if this is x86-64 and SSE2 does not run here. SSE2 is part of x86-64: a build or detection
 * fault that left it out would leave an accuracy sweep measuring scalar alone, unnoticed. */
static inline int bk_baseline_runs(void) {
#if defined(__x86_64__) || defined(_M_X64)
  return bk_usable(POSENC_ISA_SSE2);
#else
  return 1;
#endif
}

/* An accuracy sweep's last lines: it measured scalar's values after bk_compare found every backend
 * that runs here giving the same bytes. */
static inline int bk_report_measured(FILE *f) {
  return bk_report_under(f, "measured: scalar's values, the same bytes on every backend run here:");
}

#endif
