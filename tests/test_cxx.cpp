/* The same header-only test compiled as C++ (-std=c++11 -Wall -Wextra -Wpedantic -Werror). */
#include "test_single_file.c"
