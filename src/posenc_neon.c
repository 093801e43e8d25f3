/* The neon backend: posenc_simd.h instantiated for NEON (compiled with that ISA's flags). */
#define POSENC_SIMD_NEON
#include "posenc_simd.h"
