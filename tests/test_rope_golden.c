/* RoPE goldens on every backend this build has and this CPU runs, and every backend against the
 * scalar reference byte for byte. `test_rope_golden --print` prints the scalar hashes. */
#include "golden_rope.h"
#include "backends.h"

static void print_goldens(void) {
  size_t i;
  bk_select(POSENC_ISA_SCALAR);
  for (i = 0; i < ROPE_GOLDEN_NCASES; i++) {
    size_t bytes, elem;
    posenc_status st;
    void *t = rope_golden_compute(&rope_golden_cases[i], &bytes, &elem, &st);
    printf("%-40s 0x%016llxull%s\n", rope_golden_cases[i].name,
           t ? (unsigned long long)tl_xxh3_le(t, bytes, elem) : 0ull, t ? "" : "  (ERROR)");
    free(t);
  }
}

static int rope_golden_fn(void *gc, void *out, size_t out_bytes) {
  size_t bytes;
  return (int)rope_golden_run((const rope_golden_case *)gc, out, out_bytes, &bytes);
}

int main(int argc, char **argv) {
  int ran = 0;
  size_t i;
  if (argc > 1 && strcmp(argv[1], "--print") == 0) { print_goldens(); return 0; }
  bk_report(stdout);
  BK_FOR_EACH(it) {
    printf("backend %s: %d rope golden mismatches of %d\n", posenc_isa_name(it.isa), rope_golden_check_active(),
           (int)ROPE_GOLDEN_NCASES);
    ran++;
  }
  for (i = 0; i < ROPE_GOLDEN_NCASES; i++) { /* byte equality with scalar, case by case */
    bk_result r;
    CHECK(bk_compare_ok(rope_golden_fn, (void *)&rope_golden_cases[i], rope_golden_bytes(&rope_golden_cases[i]), NULL, &r), "'%s': %s",
          rope_golden_cases[i].name, r.msg);
  }
  CHECK(ran >= 1, "no backend ran");
  return tl_summary();
}
