/* The library's implementation TU: the API, the scalar kernels and the dispatcher. meson adds
 * -DPOSENC_WITH_<ISA> for every per-ISA TU it builds beside this one. */
#define POSENC_IMPLEMENTATION
#include "posenc.h"
