/* The avx512bf16 backend: the AVX-512 instantiation with VCVTNEPS2BF16 for f32 -> bf16. */
#define POSENC_SIMD_AVX512BF16
#include "posenc_simd.h"
