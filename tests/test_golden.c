/* Goldens on every backend this build has and this CPU runs, and every backend against the
 * scalar reference byte for byte. `test_golden --print` prints the scalar hashes. */
#include "golden_check.h"
#include "backends.h"

static void print_goldens(void) {
  size_t i;
  bk_select(POSENC_ISA_SCALAR);
  for (i = 0; i < GOLDEN_NCASES; i++) {
    size_t bytes; posenc_status st;
    void *table = NULL, *t = golden_compute(&golden_cases[i], &bytes, &st, &table);
    printf("%-36s 0x%016llxull\n", golden_cases[i].name,
           t ? (unsigned long long)golden_hash(&golden_cases[i], table, bytes) : 0ull);
    free(t);
  }
}

static int golden_fn(void *gc, void *out, size_t out_bytes) {
  size_t bytes;
  return (int)golden_run((const golden_case *)gc, out, out_bytes, &bytes);
}

int main(int argc, char **argv) {
  int ran = 0;
  size_t i;
  if (argc > 1 && strcmp(argv[1], "--print") == 0) { print_goldens(); return 0; }
  bk_report(stdout);
  BK_FOR_EACH(it) {
    printf("backend %s: %d golden mismatches\n", posenc_isa_name(it.isa), golden_check_active());
    ran++;
  }
  for (i = 0; i < GOLDEN_NCASES; i++) { /* byte equality with scalar, case by case */
    bk_result r;
    CHECK(bk_compare_ok(golden_fn, (void *)&golden_cases[i], golden_bytes(&golden_cases[i]), NULL, &r), "'%s': %s",
          golden_cases[i].name, r.msg);
  }
  CHECK(ran >= 1, "no backend ran");
  return tl_summary();
}
