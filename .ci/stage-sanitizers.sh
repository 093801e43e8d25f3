#!/usr/bin/env bash
# CI stage (issue 7): ThreadSanitizer and valgrind memcheck (ASan+UBSan run in .ci/run, build-asan).
#   bash .ci/stage-sanitizers.sh RESULTS_FILE
# 1. A clang -fsanitize=thread build, and its tests that start threads (suite threads: 16 threads
#    racing through first-use dispatch, then every kernel; the engine example's worker threads;
#    suite dispatch: test_dispatch's racing first use): a race needs two threads, and the other
#    tests run on one (the whole suite took 2 minutes more under TSan). The threads test runs 8
#    times more: one run catches a racy dispatch pointer only most of the time (70% measured).
# 2. valgrind memcheck (tests/meson.build's setups) on the native release build `build` (.ci/run's;
#    made here if missing): every compiled test (setup valgrind) but those of suite no-valgrind
#    (the fpenv tests: valgrind ignores FTZ/DAZ; the stack and guard-page tests) and the MPFR
#    accuracy sweeps (suite mpfr: 13 minutes in MPFR on calls the other tests make too),
#    test_dispatch's two POSENC_ISA runs (suite dispatch-env: test_dispatch's calls again) and the
#    threaded tests (suite threads, the engine example's threads too: their calls again, one
#    thread at a time under valgrind) and suite small-block (test_rope with a 1 KiB block of RoPE
#    rows), and, at the same time, the CLI's processes under tools/test_cli.py: the first case of
#    each check, and in it each run whose command line is new to the case but for its values (its
#    words and the first bytes of its files) (setup valgrindcli: about 300 runs; all 1,530 took 13
#    minutes), in two shards of every other check.
# SAN_TSAN and SAN_NATIVE name other build directories.
# About 5 minutes on 2 cores (a rehearsal: TSan's build and threaded tests 53 s, then the valgrind
# runs side by side 4 min 12 s, where they took 7 min 24 s before the CLI's runs were narrowed and
# sharded: its one run of every check's first case took 443 s).
set -euo pipefail
cd "$(dirname "$0")/.."
results=$(realpath "${1:?usage: stage-sanitizers.sh RESULTS_FILE}")
. .ci/lib.sh
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1

stage_packages gcc g++ meson ninja-build pkg-config libsimde-dev libxxhash-dev libmpfr-dev python3 python3-numpy \
  valgrind clang libclang-rt-dev

step "ThreadSanitizer (clang): the tests that start threads"
tsan=${SAN_TSAN:-build-tsan}
# -g1 (clang: -gline-tables-only): what a report's stack needs, at less compile time than -g.
# Only the programs of the suites it runs are built.
CC=clang CXX=clang++ BUILD_SUITES="threads dispatch" meson_build "$tsan" -Dbuildtype=debugoptimized \
  -Db_sanitize=thread -Db_lundef=false -Dc_args=-g1 -Dcpp_args=-g1
meson_subset "$tsan" "" --no-rebuild --suite threads --suite dispatch
repeat_threads() { local i; for i in 1 2 3 4 5 6 7 8; do "$tsan/tests/test_threads" >/dev/null; done; }
check "tsan threads x8" repeat_threads

step "valgrind memcheck"
native=${SAN_NATIVE:-build}
if [ -f "$native/build.ninja" ]; then meson compile -C "$native" >/dev/null; else meson_build "$native"; fi
# the CLI's checks beside the suite, in its two shards (tools/meson.build, POSENC_TEST_SHARD): one
# process of memcheck runs would be the stage's longest pole. Their log is
# meson-logs/testlog-cli-valgrindcli.json (meson appends the setup's name to --logbase).
rm -f "$native/meson-logs/testlog-cli-valgrindcli".* # no earlier run's log is read as this one's
meson test -C "$native" --setup valgrindcli --suite cli --no-rebuild --logbase testlog-cli --print-errorlogs \
  >"$native/valgrindcli.out" 2>&1 &
cli_job=$!
meson_tests "$native" valgrind
wait "$cli_job" || tail -60 "$native/valgrindcli.out"
echo "meson $native:cli-valgrindcli" >>"$results"
