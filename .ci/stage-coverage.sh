#!/usr/bin/env bash
# CI stage: line, branch and function coverage of posenc.h and posenc_simd.h by the whole meson
# test suite, measured with gcovr, and the largest uncovered regions (README, "Coverage").
#   bash .ci/stage-coverage.sh RESULTS_FILE
# A gcc debug build (-O0: one branch per source condition; the SSE2 and AVX2 backends are both
# compiled, and gcovr adds up posenc_simd.h's two instances line by line) with -Db_coverage=true
# and -fprofile-update=atomic (the threads test races on the counters otherwise: gcov then reads
# negative counts). Every test runs but suites cli, host-script, docs and bench-render: the CLI's
# 1300 processes (1.5 minutes here) reach one branch of the headers that the C tests do not, and
# the others run no posenc code; nor suite memory-sweeps (the guard-page and stack tests: 2.7 of the
# tests' 5.7 CPU-minutes at -O0; no line of the headers that the other tests do not reach, and 4
# of their 4,274 branches). Suite small-block runs (test_rope with a 1 KiB block of RoPE rows): the
# fused rotation (rope_fly) runs only with a block under 4 KiB. Coverage is read from every object
# but the two hostile-FMA single-file tests, which meson builds at -O2 and -O3 whatever the
# buildtype: their line tables differ from -O0's, and merged with them they make declarations look
# like uncovered code.
# C++ exception edges (test_cxx.cpp's calls) are not counted as branches.
# Prints the figures per file and per backend, the largest uncovered regions (.ci/coverage_report.py)
# and the error returns with a branch never taken; records the test run and a check that line
# coverage stays at or above COV_MIN_LINES (default 99.0; measured 99.5%). posenc_simd.h's
# branch figure is low by construction: at -O0, SIMDe's emulation macros expanded on its lines
# (a switch over the immediate, per-lane loops) count as its branches. Read its line figure.
# COV_BUILD names another build directory. About 2 minutes on 2 cores (2 min 1 s in a rehearsal:
# build and tests; 3 min 48 s before the guard-page and stack tests were left out).
set -euo pipefail
cd "$(dirname "$0")/.."
results=$(realpath "${1:?usage: stage-coverage.sh RESULTS_FILE}")
. .ci/lib.sh
dir=${COV_BUILD:-build-cov}
floor=${COV_MIN_LINES:-99.0}
start=$SECONDS

stage_packages gcc g++ gcovr meson ninja-build pkg-config libsimde-dev libxxhash-dev libmpfr-dev python3 python3-numpy

step "coverage build (gcc -O0, -Db_coverage=true) and its tests"
meson_build "$dir" -Dbuildtype=debug -Db_coverage=true \
  -Dc_args=-fprofile-update=atomic -Dcpp_args=-fprofile-update=atomic
meson_subset "$dir" "" --no-suite cli --no-suite host-script --no-suite docs --no-suite bench-render \
  --no-suite memory-sweeps

step "coverage of posenc.h and posenc_simd.h"
gcovr_args=(-r . --filter '^posenc\.h$' --filter '^posenc_simd\.h$' --exclude-throw-branches
            --exclude-directories '.*_fma_O[23]\.p$')
report() {
  gcovr "${gcovr_args[@]}" --json "$dir/coverage.json" "$dir"
  python3 .ci/coverage_report.py "$dir/coverage.json" --regions 25
}
check "coverage report (gcovr)" report
[ -f "$dir/coverage.json" ] && python3 .ci/coverage_report.py "$dir/coverage.json" --regions 25
for b in sse2 avx2; do
  [ -d "$dir/libposenc_$b.a.p" ] || continue
  echo "posenc_simd.h, $b backend alone: $(gcovr -r . --filter '^posenc_simd\.h$' --exclude-throw-branches \
    -s "$dir/libposenc_$b.a.p" 2>/dev/null | grep '^lines' || echo 'no data')"
done
check "line coverage of posenc.h + posenc_simd.h >= $floor%" \
  python3 .ci/coverage_report.py "$dir/coverage.json" --regions 0 --min-lines "$floor"
echo "stage-coverage: $((SECONDS - start)) s"
