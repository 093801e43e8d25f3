/* posenc.h's declarations and macros in a C++ user's file, under the warnings such files turn on
 * (the macros expand in the user's code, where -Werror makes any warning a broken build):
 * -Wold-style-cast, -Wzero-as-null-pointer-constant, -Wconversion, -Wsign-conversion, -Wshadow
 * -Wuseless-cast and more. POSENC_ROPE_BYTES is given a literal, a run-time int and a run-time
 * size_t (a config's head_dim), as callers do. */
#include "posenc.h"

#include <cstdio>

static POSENC_ROPE_STORAGE(128) rope_128;
static POSENC_ROPE_STORAGE(512) rope_512;

int main(int argc, char **argv) {
  posenc_rope_config config = posenc_rope_default(128);
  const int dim = 400 + argc; /* a run-time int, 401 + arguments */
  size_t bytes = 0;
  int failed = 0;
  (void)argv;
  if (posenc_rope_bytes(&config, &bytes) != POSENC_OK || bytes != POSENC_ROPE_BYTES(128)) failed |= 1;
  if (posenc_rope_init(&rope_128.rope, sizeof rope_128, &config) != POSENC_OK) failed |= 2;
  config = posenc_rope_default(512);
  if (posenc_rope_bytes(&config, &bytes) != POSENC_OK || bytes != POSENC_ROPE_BYTES(512)) failed |= 4;
  if (posenc_rope_init(&rope_512.rope, sizeof rope_512, &config) != POSENC_OK) failed |= 8;
  config = posenc_rope_default(static_cast<size_t>(dim - 1) / 2 * 2);
  if (posenc_rope_bytes(&config, &bytes) != POSENC_OK || bytes != POSENC_ROPE_BYTES(dim - 1)) failed |= 16;
  if (bytes != POSENC_ROPE_BYTES(config.head_dim)) failed |= 32; /* a size_t */
  std::printf("%s\n", failed ? "FAIL" : "ok");
  return failed;
}
