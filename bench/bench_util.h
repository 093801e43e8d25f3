/* Helpers shared by posenc's benchmarks: a monotonic clock, qsort's double comparison, the CPU's
 * model name and AVX2 support. */
#ifndef POSENC_BENCH_UTIL_H
#define POSENC_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int cpu_has_avx2(void) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  return __builtin_cpu_supports("avx2") ? 1 : 0;
#else
  return 0;
#endif
}

static void cpu_model(char *buf, size_t size) {
  char line[512];
  FILE *f = fopen("/proc/cpuinfo", "r");
  snprintf(buf, size, "unknown CPU");
  if (!f) return;
  while (fgets(line, sizeof line, f)) {
    char *colon = strchr(line, ':');
    if (strncmp(line, "model name", 10) != 0 || !colon) continue;
    colon += strspn(colon + 1, " \t") + 1;
    colon[strcspn(colon, "\n")] = '\0';
    snprintf(buf, size, "%s", colon);
    break;
  }
  fclose(f);
}

#endif
