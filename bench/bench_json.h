/* bench_json.h - the benches' shared options (--smoke, --json, --label) and their machine-readable
 * results: JSON Lines, one object per kernel x backend x size, which bench/render.py joins across
 * machines. Include after posenc.h and bench_util.h.
 *
 * A line (schema 1; keys in this order, one line each):
 *   {"schema":1, "key":"table/sinusoidal_f32/n=4096,d=128/avx2", "case":"table/sinusoidal_f32/n=4096,d=128",
 *    "bench":"table", "kernel":"sinusoidal_f32", "backend":"avx2", "impl":"posenc",
 *    "size":{"n":4096,"d":128}, "elem":"pair", "stat":"best", "reps":K, "ns_per_elem":..,
 *    "gbps":.., "ratio_vs":{"scalar":..,"floor":..}, "smoke":false, "machine":{...}}
 *   key     stable across machines and runs: bench/kernel/size/backend; with machine.label it names
 *           one result. case (the key without the backend) is a row of the comparison table.
 *   impl    posenc (backend = the ISA), or the peer, plain loop or memory floor the bench runs
 *           beside it (backend = its id)
 *   ratio_vs.scalar  posenc scalar's time / this time, same kernel and run (> 1: faster)
 *   ratio_vs.floor   this GB/s / the fastest floor's GB/s in the same table of the run
 *   smoke   true for --smoke runs: tiny sizes, one repetition, timings meaningless (emulators)
 */
#ifndef POSENC_BENCH_JSON_H
#define POSENC_BENCH_JSON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../tests/backends.h" /* BK_EACH_USABLE, bk_report */

#ifndef BENCH_FLAGS /* the flags posenc was built with (bench/meson.build passes them) */
#  define BENCH_FLAGS "?"
#endif

/* ---- options every bench takes -------------------------------------------------------------- */
typedef struct bench_cli {
  int smoke;          /* tiny sizes, one repetition: checks bits, times nothing that means anything */
  const char *json;   /* JSON Lines output file, or NULL */
  const char *label;  /* machine.label; default "<cpu> (<arch>)" */
} bench_cli;

#define BENCH_CLI_USAGE                                                                            \
  "  --smoke        tiny sizes, one repetition (CI, emulators): checks bits, timings meaningless\n" \
  "  --json FILE    also write the results as JSON Lines to FILE\n"                                \
  "  --label NAME   the machine's name in the JSON (default: CPU model and arch)\n"

/* Takes argv[*a] if it is a shared option (and its value): 1 taken, 0 not ours, -1 value missing. */
static int bench_cli_arg(bench_cli *c, int argc, char **argv, int *a) {
  const char **val = strcmp(argv[*a], "--json") == 0 ? &c->json
                   : strcmp(argv[*a], "--label") == 0 ? &c->label : NULL;
  if (strcmp(argv[*a], "--smoke") == 0) { c->smoke = 1; return 1; }
  if (!val) return 0;
  if (*a + 1 >= argc || !argv[*a + 1][0]) return -1;
  *val = argv[++*a];
  return 1;
}

/* The command line of a bench taking "[rounds]" and the shared options: 0, or 2 after printing
 * the usage. rounds: at least 3, and 1 under --smoke. (inline, as bench_banner: bench_table and
 * bench_rope parse their own, and an unused inline function draws no warning.) */
static inline int bench_rounds_args(const char *name, int argc, char **argv, bench_cli *c, int *rounds) {
  int a;
  memset(c, 0, sizeof *c);
  for (a = 1; a < argc; a++) {
    int shared = bench_cli_arg(c, argc, argv, &a);
    if (shared < 0 || (shared == 0 && (*rounds = atoi(argv[a])) < 1)) {
      fprintf(stderr, "usage: %s [rounds] [--smoke] [--json FILE] [--label NAME]\n" BENCH_CLI_USAGE, name);
      return 2;
    }
  }
  if (*rounds < 3) *rounds = 3;
  if (c->smoke) *rounds = 1;
  return 0;
}

/* The first line of a bench's output: what ran, where and how it was built. */
static inline void bench_banner(const char *name, const bench_cli *c) {
  char cpu[256];
  cpu_model(cpu, sizeof cpu);
  printf("%s: posenc %s, %s (AVX2 %s), %s build (-O%s), %s, one thread%s\n", name, POSENC_VERSION_STRING, cpu,
         cpu_has_avx2() ? "yes" : "no", BENCH_BUILD_TYPE, BENCH_OPTIMIZATION, BENCH_COMPILER,
         c->smoke ? "; --smoke: timings meaningless" : "");
  bk_report(stdout);
}

/* ---- the writer ----------------------------------------------------------------------------- */
typedef struct bench_rec {
  const char *kernel;   /* what is computed, e.g. "sinusoidal_f32"; NULL: row not written */
  const char *backend;  /* posenc: the ISA; otherwise the method's id, e.g. "glibc_sincosf" */
  const char *impl;     /* "posenc", "peer", "loop" or "floor" */
  double seconds;       /* per call (the group's stat), > 0 */
  double elems;         /* per call: what ns_per_elem counts */
  double bytes;         /* per call, moved to or from memory; 0: no gbps */
  long reps;            /* timed repetitions behind seconds */
} bench_rec;

typedef struct bench_json {
  FILE *f;              /* NULL: no JSON wanted; every call is then a no-op */
  int smoke;
  const char *bench;
  /* the machine object's facts, read once, written on every line */
  const char *label;    /* --label, or NULL: "<cpu> (<arch>)" */
  char cpu[256], sys[128], release[128], arch[128], date[32];
  long cores;
} bench_json;

static void bench_json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
    else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
    else fputc(ch, f);
  }
  fputc('"', f);
}

/* A finite number, or null (JSON has no inf/nan). */
static void bench_json_num(FILE *f, double v) {
  if (v == v && v - v == 0.0) fprintf(f, "%.6g", v);
  else fputs("null", f);
}

/* The machine's facts, once (every line repeats them). */
static void bench_json_machine(bench_json *j, const char *label) {
  time_t t = time(NULL);
  j->label = label;
  cpu_model(j->cpu, sizeof j->cpu);
  bench_uname(j->sys, j->release, j->arch, sizeof j->arch);
  j->cores = bench_cores();
  strftime(j->date, sizeof j->date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
}

/* The machine object: what a reader needs to tell two machines' rows apart and judge them. */
static void bench_json_write_machine(const bench_json *j) {
  FILE *m = j->f;
  int isa, first = 1;
  fputs("{\"label\":", m);
  if (j->label) bench_json_str(m, j->label);
  else { char def[400]; snprintf(def, sizeof def, "%s (%s)", j->cpu, j->arch); bench_json_str(m, def); }
  fputs(",\"cpu\":", m); bench_json_str(m, j->cpu);
  fputs(",\"arch\":", m); bench_json_str(m, j->arch);
  fputs(",\"os\":", m); bench_json_str(m, j->sys);
  fputs(",\"os_release\":", m); bench_json_str(m, j->release);
  fprintf(m, ",\"cores\":%ld,\"backends\":[", j->cores);
  BK_EACH_USABLE(isa) {
    if (!first) fputc(',', m);
    bench_json_str(m, posenc_isa_name((posenc_isa)isa));
    first = 0;
  }
  fputs("],\"compiler\":", m); bench_json_str(m, BENCH_COMPILER);
  fputs(",\"build\":", m); bench_json_str(m, BENCH_BUILD_TYPE);
  fputs(",\"flags\":", m); bench_json_str(m, BENCH_FLAGS);
  fprintf(m, ",\"posenc\":\"%s\",\"date\":\"%s\"}", POSENC_VERSION_STRING, j->date);
}

/* Opens (truncates) c->json when given; 0 on success. */
static int bench_json_open(bench_json *j, const char *bench, const bench_cli *c) {
  memset(j, 0, sizeof *j);
  j->bench = bench;
  j->smoke = c->smoke;
  if (!c->json) return 0;
  if (!(j->f = fopen(c->json, "w"))) {
    fprintf(stderr, "bench_%s: cannot write %s\n", bench, c->json);
    return -1;
  }
  bench_json_machine(j, c->label);
  return 0;
}

/* 0 on success, -1 if a line was lost (disk full, ...). */
static int bench_json_close(bench_json *j) {
  int bad = j->f && (ferror(j->f) | fclose(j->f)) != 0;
  j->f = NULL;
  if (bad) fprintf(stderr, "bench_%s: writing the JSON failed\n", j->bench);
  return bad ? -1 : 0;
}

/* size "n=4096,d=128" (it is part of the key) as an object; numbers stay numbers. */
static void bench_json_size(FILE *f, const char *size) {
  const char *p = size;
  fputc('{', f);
  while (*p) {
    size_t kl = strcspn(p, "="), vl;
    const char *v = p + kl + (p[kl] == '=');
    vl = strcspn(v, ",");
    fprintf(f, "%s\"%.*s\":", p == size ? "" : ",", (int)kl, p);
    if (vl > 0 && strspn(v, "0123456789") >= vl) fprintf(f, "%.*s", (int)vl, v);
    else fprintf(f, "\"%.*s\"", (int)vl, v);
    p = v + vl + (v[vl] == ',');
  }
  fputc('}', f);
}

/* One table of a run: every row of it, all of one size, timed with one statistic ("best",
 * "median"). Ratios are taken within the group (see the top of this file). */
static void bench_json_group(bench_json *j, const char *size, const char *elem, const char *stat,
                             const bench_rec *r, size_t n) {
  size_t i, k;
  double floor_gbps = 0.0;
  if (!j->f) return;
  for (i = 0; i < n; i++)
    if (r[i].kernel && strcmp(r[i].impl, "floor") == 0 && r[i].bytes > 0 &&
        r[i].bytes / r[i].seconds > floor_gbps)
      floor_gbps = r[i].bytes / r[i].seconds;
  for (i = 0; i < n; i++) {
    double scalar_s = 0.0;
    if (!r[i].kernel || !(r[i].seconds > 0.0)) continue;
    for (k = 0; k < n; k++)
      if (r[k].kernel && strcmp(r[k].kernel, r[i].kernel) == 0 && strcmp(r[k].impl, "posenc") == 0 &&
          strcmp(r[k].backend, "scalar") == 0)
        scalar_s = r[k].seconds;
    fprintf(j->f, "{\"schema\":1,\"key\":\"%s/%s/%s/%s\",\"case\":\"%s/%s/%s\",\"bench\":\"%s\","
                  "\"kernel\":\"%s\",\"backend\":\"%s\",\"impl\":\"%s\",\"size\":",
            j->bench, r[i].kernel, size, r[i].backend, j->bench, r[i].kernel, size, j->bench,
            r[i].kernel, r[i].backend, r[i].impl);
    bench_json_size(j->f, size);
    fprintf(j->f, ",\"elem\":\"%s\",\"stat\":\"%s\",\"reps\":%ld,\"ns_per_elem\":", elem, stat,
            r[i].reps);
    bench_json_num(j->f, r[i].seconds * 1e9 / r[i].elems);
    fputs(",\"gbps\":", j->f);
    if (r[i].bytes > 0) bench_json_num(j->f, r[i].bytes / r[i].seconds * 1e-9);
    else fputs("null", j->f);
    fputs(",\"ratio_vs\":{", j->f);
    if (scalar_s > 0.0) { fputs("\"scalar\":", j->f); bench_json_num(j->f, scalar_s / r[i].seconds); }
    if (floor_gbps > 0.0 && r[i].bytes > 0) {
      fputs(scalar_s > 0.0 ? ",\"floor\":" : "\"floor\":", j->f);
      bench_json_num(j->f, r[i].bytes / r[i].seconds / floor_gbps);
    }
    fprintf(j->f, "},\"smoke\":%s,\"machine\":", j->smoke ? "true" : "false");
    bench_json_write_machine(j);
    fputs("}\n", j->f);
  }
}

#endif
