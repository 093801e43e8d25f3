/* posenc.h's declarations and macros in a C++ user's file, under the warnings such files turn on
 * (the macros expand in the user's code, where -Werror makes any warning a broken build):
 * -Wold-style-cast, -Wzero-as-null-pointer-constant, -Wconversion, -Wshadow and more. */
#include "posenc.h"

#include <cstdio>

static POSENC_ROPE_STORAGE(128) rope_128;
static unsigned char rope_512[POSENC_ROPE_BYTES(512)];

int main() {
  posenc_rope_config config = posenc_rope_default(128);
  size_t bytes = 0;
  int failed = 0;
  if (posenc_rope_bytes(&config, &bytes) != POSENC_OK || bytes != POSENC_ROPE_BYTES(128)) failed |= 1;
  if (posenc_rope_init(&rope_128.rope, sizeof rope_128, &config) != POSENC_OK) failed |= 2;
  config = posenc_rope_default(512);
  if (posenc_rope_bytes(&config, &bytes) != POSENC_OK || bytes != sizeof rope_512) failed |= 4;
  std::printf("%s\n", failed ? "FAIL" : "ok");
  return failed;
}
