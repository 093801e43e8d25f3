/* The board's floating point against what posenc's goldens assume, and the one known exception.
 * Scalar FPU (Cortex-M4 and M55): IEEE binary32 with subnormals; FPSCR.FZ is 0 after reset and
 * nothing sets it, so posenc's bits match the desktop's. MVE (M55's vector unit): floating-point
 * arithmetic flushes subnormal inputs and results to zero whatever FPSCR.FZ says, so float code
 * that gcc auto-vectorizes for MVE could differ from the goldens: posenc is built with
 * -mcpu=cortex-m55+nomve.fp. Built with MVE float enabled (meson does, on M55), this test
 * asserts that flushing, so that the documented exception stays true. */
#include <stdint.h>
#include <string.h>
#include "posenc.h"
#include "testlib.h"
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
#  include <arm_mve.h>
#endif

static uint32_t fbits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

int main(void) {
  volatile float tiny = 0x1p-126f, half = 0.5f;   /* volatile: computed at run time, on the FPU */
  uint32_t fpscr;
  __asm__ volatile("vmrs %0, fpscr" : "=r"(fpscr));
  CHECK((fpscr & (1u << 24)) == 0, "FPSCR.FZ set: 0x%08lx", (unsigned long)fpscr);
  CHECK((fpscr & (3u << 22)) == 0, "FPSCR rounding mode not nearest: 0x%08lx", (unsigned long)fpscr);
  CHECK(fbits(tiny * half) == 0x00400000u, "scalar FPU: 2^-126 * 0.5 = 0x%08lx, want the subnormal 2^-127",
        (unsigned long)fbits(tiny * half));
  CHECK(fbits(tiny * half * 4.0f) == fbits(0x1p-125f), "scalar FPU flushed a subnormal operand");
  CHECK(posenc_f32_to_f16(0x1p-20f) == 0x0010 && posenc_f16_to_f32(0x0001) == 0x1p-24f &&
        posenc_f32_to_bf16(0x1p-130f) == 0x0008, "posenc's conversions lose subnormals");
  CHECK(posenc_selftest() == POSENC_OK, "posenc_selftest");
  /* FZ set by the application changes posenc's bits on subnormal data only: the self-test must say
   * so, and that normal values stay exact (FZ flushes operands and results: FTZ and DAZ) */
  __asm__ volatile("vmsr fpscr, %0" : : "r"(fpscr | (1u << 24)));
  {
    posenc_selftest_result r;
    CHECK(posenc_selftest_report(&r) == POSENC_ERR_SUBNORMAL && r.normal_exact == 1 &&
          r.failed == (POSENC_SELFTEST_SUBNORMALS | POSENC_SELFTEST_FTZ | POSENC_SELFTEST_DAZ),
          "posenc_selftest_report with FPSCR.FZ set: status %d, failed 0x%x, normal_exact %d", (int)r.status,
          r.failed, r.normal_exact);
  }
  __asm__ volatile("vmsr fpscr, %0" : : "r"(fpscr));
  CHECK(posenc_selftest() == POSENC_OK, "posenc_selftest once FPSCR.FZ is cleared");
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
  {
    float32x4_t v = vmulq_n_f32(vdupq_n_f32(tiny), half);
    float32x4_t w = vmulq_n_f32(vdupq_n_f32(0x1p-127f), 4.0f);
    CHECK(fbits(vgetq_lane_f32(v, 0)) == 0, "MVE: 2^-126 * 0.5 = 0x%08lx, documented as flushed to +0",
          (unsigned long)fbits(vgetq_lane_f32(v, 0)));
    CHECK(fbits(vgetq_lane_f32(w, 0)) == 0, "MVE: subnormal operand * 4 = 0x%08lx, documented as flushed to +0",
          (unsigned long)fbits(vgetq_lane_f32(w, 0)));
    printf("MVE float arithmetic flushes subnormals to zero (documented exception)\n");
  }
#endif
  return tl_summary();
}
