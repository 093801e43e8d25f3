/* The avx512 backend: posenc_simd.h instantiated for AVX-512 (compiled with that ISA's flags). */
#define POSENC_SIMD_AVX512
#include "posenc_simd.h"
