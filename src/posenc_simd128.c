/* The simd128 backend: posenc_simd.h instantiated for WebAssembly SIMD128 (compiled with -msimd128). */
#define POSENC_SIMD_SIMD128
#include "posenc_simd.h"
