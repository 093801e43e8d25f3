/* The program every consumer build in consumers/ compiles (see .ci/stage-consumers.sh). It
 * passes only if posenc was found, links, and computes posenc's bits: the self-test checks each
 * backend that runs here against embedded goldens.
 * -DCONSUMER_HEADER_ONLY: this file is the implementation (header-only use, one SIMD backend);
 * otherwise it links the prebuilt libposenc.a, which must hold every backend of its ISA. */
#ifdef CONSUMER_HEADER_ONLY
#  define POSENC_IMPLEMENTATION
#  include "posenc_simd.h"
#else
#  include "posenc.h"
#endif
#include <stdio.h>

int main(void) {
  float pe[2];
  posenc_sinusoidal_params prm = posenc_sinusoidal_default(2);  /* [sin(p), cos(p)] */
  posenc_status st = posenc_sinusoidal_table(&prm, 1, 1, pe, sizeof pe);
  int isa, failed = 0;

  printf("posenc %s, %s:", POSENC_VERSION_STRING,
#ifdef CONSUMER_HEADER_ONLY
         "header-only"
#else
         "libposenc"
#endif
  );
  /* correctly rounded sin(1), cos(1) */
  if (st != POSENC_OK || pe[0] != (float)0.8414709848078965 || pe[1] != (float)0.5403023058681398) {
    printf(" table at p = 1: %s, %.9g %.9g: FAIL\n", posenc_strerror(st), pe[0], pe[1]);
    return 1;
  }
  for (isa = 0; isa < POSENC_ISA_COUNT; isa++) {
    if (!posenc_isa_compiled((posenc_isa)isa) || !posenc_isa_supported((posenc_isa)isa)) continue;
    st = posenc_isa_set((posenc_isa)isa);
    if (st == POSENC_OK) st = posenc_selftest();
    printf(" %s %s", posenc_isa_name((posenc_isa)isa), st == POSENC_OK ? "ok" : posenc_strerror(st));
    failed |= st != POSENC_OK;
  }
#if !defined(CONSUMER_HEADER_ONLY) && (defined(__x86_64__) || defined(_M_X64))
  /* a library that lost its per-ISA objects still runs (scalar): catch it */
  if (!posenc_isa_compiled(POSENC_ISA_SSE2) || !posenc_isa_compiled(POSENC_ISA_AVX2)) {
    printf(" (SSE2/AVX2 backends missing)");
    failed = 1;
  }
#endif
  printf("\n");
  return failed;
}
