/* Goldens on every backend this build has and this CPU runs, and every backend against the
 * scalar reference byte for byte. `test_golden --print` prints the scalar hashes. */
#include "golden_check.h"

static void print_goldens(void) {
  size_t i;
  posenc_isa_set(POSENC_ISA_SCALAR);
  for (i = 0; i < GOLDEN_NCASES; i++) {
    size_t bytes; posenc_status st;
    void *table = NULL, *t = golden_compute(&golden_cases[i], &bytes, &st, &table);
    printf("%-36s 0x%016llxull\n", golden_cases[i].name,
           t ? (unsigned long long)golden_hash(&golden_cases[i], table, bytes) : 0ull);
    free(t);
  }
}

int main(int argc, char **argv) {
  int isa, ran = 0;
  size_t i;
  if (argc > 1 && strcmp(argv[1], "--print") == 0) { print_goldens(); return 0; }
  for (isa = 0; isa < POSENC_ISA_COUNT; isa++) {
    if (!posenc_isa_compiled((posenc_isa)isa) || !posenc_isa_supported((posenc_isa)isa)) continue;
    CHECK(posenc_isa_set((posenc_isa)isa) == POSENC_OK, "select %s", posenc_isa_name((posenc_isa)isa));
    printf("backend %s: %d golden mismatches\n", posenc_isa_name((posenc_isa)isa), golden_check_active());
    ran++;
    if (isa == POSENC_ISA_SCALAR) continue;
    for (i = 0; i < GOLDEN_NCASES; i++) { /* byte equality with scalar, case by case */
      size_t b1 = 0, b2 = 0; posenc_status s1, s2;
      void *t1, *t2, *v1 = NULL, *v2 = NULL;
      posenc_isa_set(POSENC_ISA_SCALAR);
      t1 = golden_compute(&golden_cases[i], &b1, &s1, &v1);
      posenc_isa_set((posenc_isa)isa);
      t2 = golden_compute(&golden_cases[i], &b2, &s2, &v2);
      CHECK(t1 && t2 && b1 == b2 && memcmp(v1, v2, b1) == 0, "%s differs from scalar on '%s'",
            posenc_isa_name((posenc_isa)isa), golden_cases[i].name);
      free(t1); free(t2);
    }
  }
  CHECK(ran >= 1, "no backend ran");
  return tl_summary();
}
