/* Header-only use, no library: this file is the implementation and instantiates the one SIMD
 * backend its compiler flags allow. meson builds it with the default flags, and with
 * -std=gnu11 -mavx2 -mfma and fused-contraction flags where only posenc's own pragmas keep the
 * compiler from fusing multiply-adds: those must reproduce the goldens.
 * Built with -ffast-math too, which posenc's pragmas keep out of its arithmetic: the goldens hold.
 * Built with POSENC_TEST_EXPECT_SELFTEST_FAIL (clang's -ffp-contract=fast, which no pragma
 * overrides), the self-test must report that the build changes results.
 * Built with -mavx2 and POSENC_I_VBITS=512, the AVX2 backend is instantiated at 512 bits through
 * SIMDe's emulation: the 512-bit kernel source against the goldens on a CPU without AVX-512.
 * Built with TEST_THREAD_KIB (POSIX threads), the checks run on a thread of that much stack: the
 * -O0 builds, a debug build's stack, where every inlined copy of a helper keeps its own locals. */
#if defined(TEST_WINDOWS_H_FIRST)
/* A Windows program's usual first include: near and far (minwindef.h), small (rpcndr.h), min and
 * max are macros from here on */
#  include <windows.h>
#endif
#define POSENC_IMPLEMENTATION
#include "posenc_simd.h"
#include "golden_check.h"

#if defined(TEST_THREAD_KIB)
#  include <limits.h> /* PTHREAD_STACK_MIN */
#  include <pthread.h>
#endif

static int run_checks(void) {
  posenc_isa isa = posenc_isa_active();
  int k;
  printf("single-file backend: %s\n", posenc_isa_name(isa));
  /* what tests/check_detection.py compares with the CPU's flags */
  for (k = 0; k < POSENC_ISA_COUNT; k++)
    printf("%-6s compiled %d supported %d\n", posenc_isa_name((posenc_isa)k), posenc_isa_compiled((posenc_isa)k),
           posenc_isa_supported((posenc_isa)k));
#if defined(POSENC_I_SIMD_ISA) /* the backend posenc_simd.h instantiated for this file's flags */
  CHECK(isa == POSENC_I_SIMD_ISA || !posenc_isa_supported(POSENC_I_SIMD_ISA), "the static %s backend is not active",
        posenc_isa_name(POSENC_I_SIMD_ISA));
#endif
#if defined(POSENC_TEST_EXPECT_SELFTEST_FAIL)
  CHECK(posenc_selftest() == POSENC_ERR_SELFTEST, "selftest accepted a build that changes results");
#else
  CHECK(posenc_selftest() == POSENC_OK, "selftest");
  golden_check_active();
#endif
  return tl_summary();
}

#if defined(TEST_THREAD_KIB)
static void *checks_thread(void *result) {
  *(int *)result = run_checks();
  return NULL;
}

int main(void) {
  pthread_attr_t attr;
  pthread_t thread;
  size_t bytes = (size_t)TEST_THREAD_KIB * 1024;
  int result = 1;
#if defined(PTHREAD_STACK_MIN)
  if (bytes < (size_t)PTHREAD_STACK_MIN) bytes = (size_t)PTHREAD_STACK_MIN; /* aarch64's glibc: 128 KiB */
#endif
  printf("on a thread of %zu KiB of stack\n", bytes / 1024);
  if (pthread_attr_init(&attr) != 0 || pthread_attr_setstacksize(&attr, bytes) != 0 ||
      pthread_create(&thread, &attr, checks_thread, &result) != 0 || pthread_join(thread, NULL) != 0) {
    printf("cannot run a thread of %zu KiB\n", bytes / 1024);
    return 1;
  }
  return result;
}
#else
int main(void) { return run_checks(); }
#endif
