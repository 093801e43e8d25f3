/* Hostile floating-point environments (issue 7, item 4): a process that runs with flush-to-zero
 * (FTZ) or denormals-are-zero (DAZ) set gets different bits from posenc's kernels wherever a
 * value is subnormal, so posenc_selftest() must fail there, on every backend, and pass again once
 * the mode is cleared.
 *
 * Built twice: plainly (the modes are set and cleared here), and linked with -ffast-math
 * (-DTEST_FPENV_FAST_MATH_LINK): GCC's and clang's start-up code (crtfastmath.o) then sets
 * FTZ/DAZ before main, although posenc itself was compiled normally. */
#include "posenc.h"
#include "testlib.h"
#include "backends.h"

/* flush_modes(): the bits of this ISA's FTZ/DAZ controls that are set now; set_flush_modes(m). */
#if defined(__x86_64__) || defined(_M_X64) || (defined(__i386__) && defined(__SSE2__))
#  include <xmmintrin.h>
#  define FPENV_NAME "x86 MXCSR"
enum { MODE_FTZ = 0x8000, MODE_DAZ = 0x0040 };
static unsigned flush_modes(void) { return _mm_getcsr() & (MODE_FTZ | MODE_DAZ); }
static void set_flush_modes(unsigned m) { _mm_setcsr((_mm_getcsr() & ~(unsigned)(MODE_FTZ | MODE_DAZ)) | m); }
#elif defined(__aarch64__)
#  define FPENV_NAME "aarch64 FPCR.FZ"
enum { MODE_FTZ = 1 << 24, MODE_DAZ = 0 }; /* FZ flushes inputs and results alike */
static unsigned flush_modes(void) {
  uint64_t r;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(r));
  return (unsigned)r & MODE_FTZ;
}
static void set_flush_modes(unsigned m) {
  uint64_t r;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(r));
  r = (r & ~(uint64_t)MODE_FTZ) | m;
  __asm__ __volatile__("msr fpcr, %0" : : "r"(r));
}
#elif defined(__arm__) && defined(__ARM_FP)
#  define FPENV_NAME "arm FPSCR.FZ"
enum { MODE_FTZ = 1 << 24, MODE_DAZ = 0 };
static unsigned flush_modes(void) {
  unsigned r;
  __asm__ __volatile__("vmrs %0, fpscr" : "=r"(r));
  return r & MODE_FTZ;
}
static void set_flush_modes(unsigned m) {
  unsigned r;
  __asm__ __volatile__("vmrs %0, fpscr" : "=r"(r));
  r = (r & ~(unsigned)MODE_FTZ) | m;
  __asm__ __volatile__("vmsr fpscr, %0" : : "r"(r));
}
#else
#  define FPENV_NAME NULL /* riscv64, ppc64le, s390x: no flush mode to set */
enum { MODE_FTZ = 0, MODE_DAZ = 0 };
static unsigned flush_modes(void) { return 0; }
static void set_flush_modes(unsigned m) { (void)m; }
#endif

/* The self-test on every backend this CPU runs, in the environment as it is now. */
static void selftest_each_backend(posenc_status want, const char *env) {
  BK_FOR_EACH(it) {
    posenc_status got = posenc_selftest();
    CHECK(got == want, "%s, backend %s: posenc_selftest() = %d (%s), want %d", env, posenc_isa_name(it.isa), (int)got,
          posenc_strerror(got), (int)want);
  }
}

int main(void) {
  unsigned at_start = flush_modes();
  bk_report(stdout);
  if (!FPENV_NAME) {
    printf("no flush-to-zero control on this ISA: the self-test must pass in the only environment there is\n");
    selftest_each_backend(POSENC_OK, "default environment");
    return tl_summary();
  }
#ifdef TEST_FPENV_FAST_MATH_LINK
  /* crtfastmath.o sets FTZ (and DAZ on x86) before main */
  printf("%s at start: 0x%x\n", FPENV_NAME, at_start);
  CHECK(at_start & MODE_FTZ, "linked with -ffast-math, yet FTZ is off at start (no crtfastmath.o?)");
  selftest_each_backend(POSENC_ERR_SELFTEST, "-ffast-math start-up modes");
  set_flush_modes(0);
  selftest_each_backend(POSENC_OK, "modes cleared");
#else
  CHECK(at_start == 0, "%s: a flush mode is set at start (0x%x)", FPENV_NAME, at_start);
  selftest_each_backend(POSENC_OK, "default environment");
  set_flush_modes(MODE_FTZ);
  CHECK(flush_modes() == MODE_FTZ, "FTZ did not stick");
  selftest_each_backend(POSENC_ERR_SELFTEST, "FTZ");
  if (MODE_DAZ) {
    set_flush_modes(MODE_DAZ);
    CHECK(flush_modes() == MODE_DAZ, "DAZ did not stick");
    selftest_each_backend(POSENC_ERR_SELFTEST, "DAZ");
  }
  set_flush_modes(0);
  selftest_each_backend(POSENC_OK, "modes cleared");
#endif
  return tl_summary();
}
