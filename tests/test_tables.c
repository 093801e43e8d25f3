/* placeholder: replaced by the helper who owns it */
#include <stdio.h>
int main(void) { printf("0 passed, 0 failed\n"); return 0; }
