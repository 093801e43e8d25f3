/* The avx2 backend: posenc_simd.h instantiated for AVX2 (compiled with that ISA's flags). */
#define POSENC_SIMD_AVX2
#include "posenc_simd.h"
