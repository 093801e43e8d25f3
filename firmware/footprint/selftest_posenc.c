/* posenc_selftest(): no plain counterpart. */
#define POSENC_IMPLEMENTATION
#define POSENC_NO_GETENV
#include "posenc.h"
#include "fp.h"

int main(void) { return posenc_selftest() != POSENC_OK; }
