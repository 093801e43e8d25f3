/* Hostile floating-point environments (issue 7, item 4): a process that runs with flush-to-zero
 * (FTZ) or denormals-are-zero (DAZ) set gets different bits from posenc's kernels wherever a
 * value is subnormal, so posenc_selftest() must say so there, on every backend, and pass again
 * once the mode is cleared. It says only that: ERR_SUBNORMAL, and a report naming the mode and
 * the subnormal checks alone, while the tables, caches and rotations of normal values (the
 * sinusoidal and RoPE goldens) keep their bits.
 *
 * Built twice: plainly (the modes are set and cleared here), and linked with -ffast-math
 * (-DTEST_FPENV_FAST_MATH_LINK): GCC's and clang's start-up code (crtfastmath.o) then sets
 * FTZ/DAZ before main, although posenc itself was compiled normally. */
#include <fenv.h>
#include "posenc.h"
#include "golden_check.h"
#include "golden_rope.h"
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
#  define FPENV_NAME ((const char *)0) /* riscv64, ppc64le, s390x, wasm32: no flush mode to set */
enum { MODE_FTZ = 0, MODE_DAZ = 0 };
static unsigned flush_modes(void) { return 0; }
static void set_flush_modes(unsigned m) { (void)m; }
#endif

/* The report bits a flush mode must give: x86's FTZ and DAZ are separate bits; ARM's FZ flushes
 * operands and results alike, so it is both. */
static unsigned report_bits(unsigned modes) {
  unsigned r = POSENC_SELFTEST_SUBNORMALS;
  if (modes & MODE_FTZ) r |= POSENC_SELFTEST_FTZ;
  if ((modes & MODE_DAZ) || ((modes & MODE_FTZ) && MODE_DAZ == 0)) r |= POSENC_SELFTEST_DAZ;
  return r;
}

/* The self-test on every backend this CPU runs, in the environment as it is now: want its status,
 * and want_failed the report's bits (the mode's, with POSENC_SELFTEST_SUBNORMALS). Under a flush
 * mode, the goldens of normal values must hold all the same.
 *
 * The report may add POSENC_SELFTEST_F16 under a flush mode, on a backend whose f16 conversions
 * are the CPU's: real x86 F16C ignores FTZ and DAZ, but qemu 7.2's emulation of it (CI's i686
 * stage) flushes subnormal halves. Then the f16 goldens, whose tables hold such halves, are not
 * checked; every other golden is. Where F16 is not reported, every golden must hold. */
static void selftest_each_backend(posenc_status want, unsigned want_failed, const char *env) {
  BK_FOR_EACH(it) {
    posenc_selftest_result r;
    posenc_status got = posenc_selftest();
    unsigned f16 = 0;
    CHECK(got == want, "%s, backend %s: posenc_selftest() = %d (%s), want %d", env, posenc_isa_name(it.isa), (int)got,
          posenc_strerror(got), (int)want);
    if (posenc_selftest_report(&r) == want && want_failed && it.isa != POSENC_ISA_SCALAR) f16 = r.failed & POSENC_SELFTEST_F16;
    CHECK(r.status == want && r.failed == (want_failed | f16) && r.normal_exact == 1 && r.isa == it.isa,
          "%s, backend %s: report status %d, failed 0x%x (want 0x%x), normal_exact %d", env, posenc_isa_name(it.isa),
          (int)r.status, r.failed, want_failed, r.normal_exact);
    if (f16) printf("%s, backend %s: its f16 conversions flush subnormal halves here (emulated?)\n", env,
                    posenc_isa_name(it.isa));
    if (want_failed) { /* caches and rotations of normal values keep their bits */
      golden_check_active_but(f16 ? (int)POSENC_DTYPE_F16 : -1);
      rope_golden_check_active_but(f16 ? (int)POSENC_DTYPE_F16 : -1);
    }
  }
}

/* Rounding toward -inf changes results of normal values: ERR_SELFTEST on every backend, with the
 * ROUNDING and VALUES bits and normal_exact 0, and no contraction or reassociation reported. */
static void round_down_each_backend(void) {
#if defined(FE_DOWNWARD)
  volatile float one = 1.0f, three = 3.0f;
  if (fesetround(FE_DOWNWARD) != 0 || one / three == 0x1.555556p-2f) { /* 1/3 rounded up: nearest */
    /* WebAssembly rounds to nearest only: Emscripten's fesetround accepts the mode and ignores it */
    fesetround(FE_TONEAREST);
    printf("FE_DOWNWARD cannot be set here: the rounding check is skipped\n");
    return;
  }
  BK_FOR_EACH(it) {
    posenc_selftest_result r;
    posenc_status st = posenc_selftest_report(&r);
    CHECK(st == POSENC_ERR_SELFTEST && r.normal_exact == 0 &&
          (r.failed & (POSENC_SELFTEST_ROUNDING | POSENC_SELFTEST_VALUES)) ==
              (POSENC_SELFTEST_ROUNDING | POSENC_SELFTEST_VALUES) &&
          !(r.failed & (POSENC_SELFTEST_CONTRACT | POSENC_SELFTEST_REASSOC | POSENC_SELFTEST_FTZ | POSENC_SELFTEST_DAZ)),
          "rounding down, backend %s: status %d, failed 0x%x, normal_exact %d", posenc_isa_name(it.isa), (int)st,
          r.failed, r.normal_exact);
  }
  fesetround(FE_TONEAREST);
#else
  printf("no FE_DOWNWARD here: the rounding check is skipped\n");
#endif
}

int main(void) {
  unsigned at_start = flush_modes();
  bk_report(stdout);
  if (!FPENV_NAME) {
    printf("no flush-to-zero control on this ISA: the self-test must pass in the only environment there is\n");
    selftest_each_backend(POSENC_OK, 0, "default environment");
    round_down_each_backend();
    return tl_summary();
  }
#ifdef TEST_FPENV_FAST_MATH_LINK
  /* crtfastmath.o sets FTZ (and DAZ on x86) before main */
  printf("%s at start: 0x%x\n", FPENV_NAME, at_start);
  CHECK(at_start & MODE_FTZ, "linked with -ffast-math, yet FTZ is off at start (no crtfastmath.o?)");
  selftest_each_backend(POSENC_ERR_SUBNORMAL, report_bits(at_start), "-ffast-math start-up modes");
  set_flush_modes(0);
  selftest_each_backend(POSENC_OK, 0, "modes cleared");
#else
  CHECK(at_start == 0, "%s: a flush mode is set at start (0x%x)", FPENV_NAME, at_start);
  selftest_each_backend(POSENC_OK, 0, "default environment");
  set_flush_modes(MODE_FTZ);
  CHECK(flush_modes() == MODE_FTZ, "FTZ did not stick");
  selftest_each_backend(POSENC_ERR_SUBNORMAL, report_bits(MODE_FTZ), "FTZ");
  if (MODE_DAZ) {
    set_flush_modes(MODE_DAZ);
    CHECK(flush_modes() == MODE_DAZ, "DAZ did not stick");
    selftest_each_backend(POSENC_ERR_SUBNORMAL, report_bits(MODE_DAZ), "DAZ");
  }
  set_flush_modes(0);
  selftest_each_backend(POSENC_OK, 0, "modes cleared");
#endif
  round_down_each_backend();
  return tl_summary();
}
