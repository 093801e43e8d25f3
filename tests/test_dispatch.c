/* Backend selection: what is compiled, supported and active; POSENC_ISA; forcing by API; the
 * self-test on every backend; first use from many threads at once.
 * POSENC_EXPECT_ISA=<name> makes the test require that backend to be the one chosen
 * (the Nehalem setup uses it: AVX2 must not be picked on a CPU without it). With --env-set,
 * POSENC_ISA must be in the environment: a runner that does not pass it on fails the test.
 * TEST_DISPATCH_RACE_RUNS=N: N forked runs of the set-versus-first-use race instead of 200 (the
 * valgrind setup: memcheck runs a process's threads one at a time, so there is no race to find,
 * and 200 forks of a memchecked process took 27 of the test's 28 s); not a positive number: 200. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include "posenc.h"
#include "backends.h"
#include "testlib.h"
#include "testthreads.h"

enum { NTHREADS = 8, D = 64, N = 40 };
static float thread_out[NTHREADS][N * D];
static posenc_isa thread_isa[NTHREADS];

static void *first_use(void *arg) {
  int k = (int)(size_t)arg;
  posenc_sinusoidal_params p = posenc_sinusoidal_default(D);
  thread_isa[k] = posenc_isa_active();
  if (posenc_sinusoidal_table(&p, 12345, N, thread_out[k], sizeof thread_out[k]) != POSENC_OK)
    thread_out[k][0] = -9.0f;
  return NULL;
}

#if (defined(__unix__) || defined(__APPLE__)) && !defined(__wasi__) && !defined(__EMSCRIPTEN__)
#  include <sys/wait.h>
#  include <unistd.h>
#  define HAVE_FORK 1

static void *just_active(void *arg) {
  (void)arg;
  posenc_isa_active();
  return NULL;
}

/* posenc_isa_set while two other threads make their first calls: the set must hold, whichever
 * thread selects first (a first use that read no backend yet once overwrote it). Each run is a
 * fresh process, so that its first use is still to come; returns the runs that lost the set, or
 * -1 where fork fails (not run). */
static int set_races(int runs) {
  int r, lost = 0;
  for (r = 0; r < runs; r++) {
    pid_t pid = fork();
    int st = 0;
    if (pid < 0) return -1;
    if (pid == 0) {
      tl_thread t2[2];
      int i, ok;
      for (i = 0; i < 2; i++) tl_thread_start(&t2[i], just_active, NULL);
      ok = posenc_isa_set(POSENC_ISA_SCALAR) == POSENC_OK;
      for (i = 0; i < 2; i++) tl_thread_join(t2[i]);
      _exit(ok && posenc_isa_active() == POSENC_ISA_SCALAR ? 0 : 7);
    }
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) lost++;
  }
  return lost;
}
#endif

int main(int argc, char **argv) {
  tl_thread th[NTHREADS];
  const char *expect = getenv("POSENC_EXPECT_ISA"), *env = getenv("POSENC_ISA");
  posenc_isa isa, req, best;
  int k, state;

  if (argc > 1 && strcmp(argv[1], "--env-set") == 0)
    CHECK(env != NULL, "POSENC_ISA is not in this program's environment: the runner did not pass it on");

#ifdef HAVE_FORK
  { /* before this process's own first use: each run forks it */
    const char *runs_env = getenv("TEST_DISPATCH_RACE_RUNS");
    int runs = runs_env && atoi(runs_env) > 0 ? atoi(runs_env) : 200, lost = set_races(runs);
    if (lost < 0) printf("posenc_isa_set racing a first use: not run (fork failed)\n");
    else CHECK(lost == 0, "posenc_isa_set(scalar) was undone by another thread's first use in %d of %d runs", lost, runs);
  }
#endif
  /* first use happens in the threads, all at once */
  for (k = 0; k < NTHREADS; k++) CHECK(tl_thread_start(&th[k], first_use, (void *)(size_t)k) == 0, "thread %d", k);
  for (k = 0; k < NTHREADS; k++) tl_thread_join(th[k]);
  for (k = 1; k < NTHREADS; k++) {
    CHECK(thread_isa[k] == thread_isa[0], "threads saw different backends");
    CHECK(memcmp(thread_out[k], thread_out[0], sizeof thread_out[0]) == 0, "thread %d output differs", k);
  }
  isa = posenc_isa_active();
  printf("active backend: %s\n", posenc_isa_name(isa));
  CHECK(posenc_isa_compiled(isa) && posenc_isa_supported(isa), "active backend not runnable");
  if (expect) CHECK(strcmp(posenc_isa_name(isa), expect) == 0, "active %s, expected %s", posenc_isa_name(isa), expect);

  state = posenc_isa_requested(&req);
  if (!env || !*env) CHECK(state == 0, "no POSENC_ISA, but requested state %d", state);
  else if (posenc_isa_from_name(env, &req) != POSENC_OK) CHECK(state == -1, "unknown POSENC_ISA=%s: state %d", env, state);
  else {
    CHECK(state == 1, "POSENC_ISA=%s: state %d", env, state);
    if (req != POSENC_ISA_AUTO && posenc_isa_compiled(req) && posenc_isa_supported(req))
      CHECK(isa == req, "POSENC_ISA=%s not honoured (%s)", env, posenc_isa_name(isa));
  }

  CHECK(posenc_isa_from_name("avx2", &req) == POSENC_OK && req == POSENC_ISA_AVX2, "name avx2");
  CHECK(posenc_isa_from_name("AVX3", &req) == POSENC_ERR_ISA, "bad name");
  CHECK(posenc_isa_from_name(NULL, &req) == POSENC_ERR_NULL, "null name");
  CHECK(posenc_isa_set((posenc_isa)42) == POSENC_ERR_ISA, "bad isa");
  CHECK(posenc_isa_supported(POSENC_ISA_SCALAR) && posenc_isa_compiled(POSENC_ISA_SCALAR), "scalar always");
  for (k = 0; k < POSENC_ISA_COUNT; k++) {
    int usable = posenc_isa_compiled((posenc_isa)k) && posenc_isa_supported((posenc_isa)k);
    posenc_status st = posenc_isa_set((posenc_isa)k);
    printf("%-6s compiled %d supported %d\n", posenc_isa_name((posenc_isa)k),
           posenc_isa_compiled((posenc_isa)k), posenc_isa_supported((posenc_isa)k));
    CHECK(usable ? st == POSENC_OK : st == POSENC_ERR_ISA, "set %s -> %d", posenc_isa_name((posenc_isa)k), st);
    if (!usable) continue;
    CHECK(posenc_isa_active() == (posenc_isa)k, "set did not take");
    CHECK(posenc_selftest() == POSENC_OK, "selftest on %s", posenc_isa_name((posenc_isa)k));
  }
  best = bk_best();
  CHECK(posenc_isa_set(POSENC_ISA_AUTO) == POSENC_OK && posenc_isa_active() == best, "auto picks the best");
  if (!env && !expect) CHECK(isa == best, "first use picked %s, best is %s", posenc_isa_name(isa), posenc_isa_name(best));
  return tl_summary();
}
