/* The sse2 backend: posenc_simd.h instantiated for SSE2 (compiled with that ISA's flags). */
#define POSENC_SIMD_SSE2
#include "posenc_simd.h"
