/* RoPE goldens on every backend this build has and this CPU runs, and every backend against the
 * scalar reference byte for byte. `test_rope_golden --print` prints the scalar hashes. */
#include "golden_rope.h"

static void print_goldens(void) {
  size_t i;
  posenc_isa_set(POSENC_ISA_SCALAR);
  for (i = 0; i < ROPE_GOLDEN_NCASES; i++) {
    size_t bytes, elem;
    posenc_status st;
    void *t = rope_golden_compute(&rope_golden_cases[i], &bytes, &elem, &st);
    printf("%-40s 0x%016llxull%s\n", rope_golden_cases[i].name,
           t ? (unsigned long long)tl_xxh3_le(t, bytes, elem) : 0ull, t ? "" : "  (ERROR)");
    free(t);
  }
}

/* Every case on the active backend; returns the number of mismatches. */
static int check_active(void) {
  size_t i;
  int bad = 0;
  for (i = 0; i < ROPE_GOLDEN_NCASES; i++) {
    size_t bytes = 0, elem = 0;
    posenc_status st;
    void *t = rope_golden_compute(&rope_golden_cases[i], &bytes, &elem, &st);
    uint64_t h = t ? tl_xxh3_le(t, bytes, elem) : 0;
    CHECK(t != NULL && h == rope_golden_cases[i].xxh3, "%s: rope golden '%s': status %s, xxh3 0x%016llx, want 0x%016llx",
          posenc_isa_name(posenc_isa_active()), rope_golden_cases[i].name, posenc_strerror(st), (unsigned long long)h,
          (unsigned long long)rope_golden_cases[i].xxh3);
    if (!t || h != rope_golden_cases[i].xxh3) bad++;
    free(t);
  }
  return bad;
}

int main(int argc, char **argv) {
  int isa, ran = 0;
  size_t i;
  if (argc > 1 && strcmp(argv[1], "--print") == 0) { print_goldens(); return 0; }
  for (isa = 0; isa < POSENC_ISA_COUNT; isa++) {
    if (!posenc_isa_compiled((posenc_isa)isa) || !posenc_isa_supported((posenc_isa)isa)) continue;
    CHECK(posenc_isa_set((posenc_isa)isa) == POSENC_OK, "select %s", posenc_isa_name((posenc_isa)isa));
    printf("backend %s: %d rope golden mismatches of %d\n", posenc_isa_name((posenc_isa)isa), check_active(),
           (int)ROPE_GOLDEN_NCASES);
    ran++;
    if (isa == POSENC_ISA_SCALAR) continue;
    for (i = 0; i < ROPE_GOLDEN_NCASES; i++) { /* byte equality with scalar, case by case */
      size_t b1 = 0, b2 = 0, e1, e2;
      posenc_status s1, s2;
      void *t1, *t2;
      posenc_isa_set(POSENC_ISA_SCALAR);
      t1 = rope_golden_compute(&rope_golden_cases[i], &b1, &e1, &s1);
      posenc_isa_set((posenc_isa)isa);
      t2 = rope_golden_compute(&rope_golden_cases[i], &b2, &e2, &s2);
      CHECK(t1 && t2 && b1 == b2 && memcmp(t1, t2, b1) == 0, "%s differs from scalar on '%s'",
            posenc_isa_name((posenc_isa)isa), rope_golden_cases[i].name);
      free(t1); free(t2);
    }
  }
  CHECK(ran >= 1, "no backend ran");
  return tl_summary();
}
