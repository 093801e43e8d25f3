/* Header-only use, no library: this file is the implementation and instantiates the one SIMD
 * backend its compiler flags allow. meson builds it twice: with the default flags, and with
 * -std=gnu11 -mavx2 -mfma -ffp-contract=fast, where only posenc's own pragmas keep the compiler
 * from fusing multiply-adds. Both must reproduce the goldens. */
#define POSENC_IMPLEMENTATION
#include "posenc_simd.h"
#include "golden_check.h"

int main(void) {
  posenc_isa isa = posenc_isa_active();
  printf("single-file backend: %s\n", posenc_isa_name(isa));
#if defined(__AVX2__)
  CHECK(isa == POSENC_ISA_AVX2 || !posenc_isa_supported(POSENC_ISA_AVX2), "static AVX2 backend not active");
#elif defined(__SSE2__) || defined(__ARM_NEON)
  CHECK(isa != POSENC_ISA_SCALAR, "static SIMD backend not active");
#endif
  CHECK(posenc_selftest() == POSENC_OK, "selftest");
  golden_check_active();
  return tl_summary();
}
