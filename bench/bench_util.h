/* Helpers shared by posenc's benchmarks: a monotonic clock, aligned memory, qsort's double
 * comparison, the CPU's model name and AVX2 support, the system's name and core count.
 * POSIX (a bench defines _POSIX_C_SOURCE or _GNU_SOURCE first) or Windows. */
#ifndef POSENC_BENCH_UTIL_H
#define POSENC_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(_WIN32)
#  define WIN32_LEAN_AND_MEAN
#  include <windows.h>
#  include <malloc.h>
#else
#  include <sys/utsname.h>
#  include <unistd.h>
#endif

/* What built the benchmark (bench/meson.build passes the build type and optimization). */
#ifndef BENCH_BUILD_TYPE
#  define BENCH_BUILD_TYPE "unknown"
#endif
#ifndef BENCH_OPTIMIZATION
#  define BENCH_OPTIMIZATION "?"
#endif

#if defined(__clang__)
#  define BENCH_COMPILER __VERSION__ /* clang's already names itself: "Debian Clang 14.0.6" */
#elif defined(__GNUC__)
#  define BENCH_COMPILER "gcc " __VERSION__
#elif defined(__VERSION__)
#  define BENCH_COMPILER __VERSION__
#else
#  define BENCH_COMPILER "unknown compiler"
#endif


static double now_s(void) {
#if defined(_WIN32)
  LARGE_INTEGER t, f;
  QueryPerformanceCounter(&t);
  QueryPerformanceFrequency(&f);
  return (double)t.QuadPart / (double)f.QuadPart;
#else
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
#endif
}

/* bytes at a 64-byte boundary (a cache line: a timing does not depend on where malloc put the
 * buffer), released with bench_free64; NULL when out of memory. Windows' CRT has no
 * posix_memalign: _aligned_malloc's blocks need _aligned_free. */
static inline void *bench_alloc64(size_t bytes) {
#if defined(_WIN32)
  return _aligned_malloc(bytes ? bytes : 1, 64);
#else
  void *p = NULL;
  return posix_memalign(&p, 64, bytes ? bytes : 1) == 0 ? p : NULL;
#endif
}

static inline void bench_free64(void *p) {
#if defined(_WIN32)
  _aligned_free(p);
#else
  free(p);
#endif
}

/* The processors online (sysconf; Windows: GetSystemInfo). */
static inline long bench_cores(void) {
#if defined(_WIN32)
  SYSTEM_INFO si;
  GetSystemInfo(&si);
  return (long)si.dwNumberOfProcessors;
#else
  return sysconf(_SC_NPROCESSORS_ONLN);
#endif
}

/* The system's name, release and machine, as uname(1) prints them ("Linux", "6.1.0-13-amd64",
 * "x86_64"). Windows has no uname: "Windows", no release, and the machine this program was
 * compiled for, named as Linux names it. */
static inline void bench_uname(char *sys, char *release, char *machine, size_t size) {
#if defined(_WIN32)
  snprintf(sys, size, "Windows");
  snprintf(release, size, "%s", "");
#  if defined(_M_ARM64) || defined(__aarch64__)
  snprintf(machine, size, "aarch64");
#  elif defined(_M_X64) || defined(__x86_64__)
  snprintf(machine, size, "x86_64");
#  else
  snprintf(machine, size, "i686");
#  endif
#else
  struct utsname u;
  if (uname(&u) != 0) {
    snprintf(sys, size, "unknown");
    snprintf(release, size, "%s", "");
    snprintf(machine, size, "unknown");
    return;
  }
  snprintf(sys, size, "%s", u.sysname);
  snprintf(release, size, "%s", u.release);
  snprintf(machine, size, "%s", u.machine);
#endif
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Round-robin timing of n methods: `rounds` samples of each, a sample being prepare(ctx, i) (select
 * the backend, reset the inputs), one warm call of run(ctx, i), then `reps` timed calls; med[i] is
 * method i's median seconds per call. 1 if out of memory. */
typedef struct bench_rr {
  void *ctx;
  void (*prepare)(void *ctx, size_t i);
  void (*run)(void *ctx, size_t i);
} bench_rr;

static inline int bench_round_robin(const bench_rr *b, size_t n, int rounds, long reps, double *med) {
  double *samples = (double *)malloc(n * (size_t)rounds * sizeof(double));
  size_t i;
  int r;
  if (!samples) return 1;
  for (r = 0; r < rounds; r++)
    for (i = 0; i < n; i++) {
      long k;
      double t0;
      b->prepare(b->ctx, i);
      b->run(b->ctx, i); /* warm */
      t0 = now_s();
      for (k = 0; k < reps; k++) b->run(b->ctx, i);
      samples[i * (size_t)rounds + (size_t)r] = (now_s() - t0) / (double)reps;
    }
  for (i = 0; i < n; i++) {
    qsort(samples + i * (size_t)rounds, (size_t)rounds, sizeof(double), cmp_double);
    med[i] = samples[i * (size_t)rounds + (size_t)rounds / 2];
  }
  free(samples);
  return 0;
}

static int cpu_has_avx2(void) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  return __builtin_cpu_supports("avx2") ? 1 : 0;
#else
  return 0;
#endif
}

/* Arm's cores by "CPU part" (implementer 0x41): aarch64 Linux names no model. */
static const char *arm_core_name(const char *part) {
  static const char *const parts[][2] = {
    {"0xd03", "Cortex-A53"}, {"0xd05", "Cortex-A55"}, {"0xd08", "Cortex-A72"}, {"0xd0b", "Cortex-A76"},
    {"0xd0c", "Neoverse N1"}, {"0xd40", "Neoverse V1"}, {"0xd41", "Cortex-A78"}, {"0xd44", "Cortex-X1"},
    {"0xd46", "Cortex-A510"}, {"0xd47", "Cortex-A710"}, {"0xd49", "Neoverse N2"}, {"0xd4f", "Neoverse V2"}};
  size_t k;
  for (k = 0; k < sizeof parts / sizeof parts[0]; k++)
    if (strcmp(part, parts[k][0]) == 0) return parts[k][1];
  return NULL;
}

/* The CPU's name from /proc/cpuinfo: a board's "Model" (Raspberry Pi), x86's "model name", else
 * Arm's core from its part number. A non-x86 build that finds x86 fields runs under qemu-user,
 * which shows the host's file: say so rather than name the host's CPU. */
static void cpu_model(char *buf, size_t size) {
  static const char *const keys[] = {"Model", "model name", "uarch", "cpu model", "cpu"};
  char line[512], found[sizeof keys / sizeof keys[0]][160], part[64] = "", impl[64] = "";
  size_t k;
  int x86_fields = 0;
  FILE *f = fopen("/proc/cpuinfo", "r");
  snprintf(buf, size, "unknown CPU");
  if (!f) return;
  memset(found, 0, sizeof found);
  while (fgets(line, sizeof line, f)) {
    char *colon = strchr(line, ':'), *val;
    size_t klen;
    if (!colon) continue;
    val = colon + 1 + strspn(colon + 1, " \t");
    val[strcspn(val, "\n")] = '\0';
    for (klen = (size_t)(colon - line); klen > 0 && (line[klen - 1] == ' ' || line[klen - 1] == '\t'); klen--) {}
    line[klen] = '\0';
    if (strcmp(line, "vendor_id") == 0) x86_fields = 1;
    if (strcmp(line, "CPU implementer") == 0) snprintf(impl, sizeof impl, "%s", val);
    if (strcmp(line, "CPU part") == 0) snprintf(part, sizeof part, "%s", val);
    for (k = 0; k < sizeof keys / sizeof keys[0]; k++)
      if (!found[k][0] && strcmp(line, keys[k]) == 0) snprintf(found[k], sizeof found[k], "%s", val);
  }
  fclose(f);
#if defined(__wasm__)
  /* a WebAssembly engine runs on the host's CPU, whose file it read */
  for (k = 0; k < sizeof keys / sizeof keys[0]; k++)
    if (found[k][0]) { snprintf(buf, size, "wasm32 on %s", found[k]); return; }
  (void)x86_fields;
#elif !defined(__x86_64__) && !defined(__i386__)
  if (x86_fields) { snprintf(buf, size, "emulated (qemu-user)"); return; }
#else
  (void)x86_fields;
#endif
  for (k = 0; k < sizeof keys / sizeof keys[0]; k++)
    if (found[k][0]) { snprintf(buf, size, "%s", found[k]); return; }
  if (strcmp(impl, "0x41") == 0 && arm_core_name(part)) snprintf(buf, size, "Arm %s", arm_core_name(part));
  else if (impl[0]) snprintf(buf, size, "Arm implementer %s part %s", impl, part[0] ? part : "?");
}

#endif
