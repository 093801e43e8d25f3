/* The only <string.h> a freestanding posenc build may rely on (tests/check_freestanding.py
 * compiles posenc.h with -nostdinc: the compiler's own headers, and this file). */
#ifndef POSENC_TEST_FREESTANDING_STRING_H
#define POSENC_TEST_FREESTANDING_STRING_H
#include <stddef.h>
void *memcpy(void *restrict dst, const void *restrict src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
int strcmp(const char *a, const char *b);
size_t strlen(const char *s);
#endif
