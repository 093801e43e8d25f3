#!/usr/bin/env bash
# CI stage: every libFuzzer target of fuzz/ (clang, ASan + UBSan, every backend against scalar) for
# FUZZ_SECONDS (default 180) at most each, over a copy of its committed corpus (fuzz/corpus/TARGET, never
# written to). A crash, leak, timeout or out-of-memory fails that target's check; its log tail and
# the crashing input (base64) are shown. Executions and coverage are printed for every target.
#   bash .ci/stage-fuzz.sh RESULTS_FILE
# Each target runs a fixed number of inputs (below; 30-75 s each beside another on 2 cores) from
# a fixed seed (FUZZ_SEED, default 1), FUZZ_SECONDS (180) at most: a run that
# finishes its inputs within that is repeated exactly by the same build and corpus on a CPU with
# the same backends. On one with others (CI's machines differ) the coverage, and so the inputs the
# seed leads to, may differ: a finding prints its input (base64). Fuzz with other seeds locally and
# merge what they find into the corpus. About 2 min, two targets at a time, and 1 to build. The
# corpus replay (suite fuzz-corpus) needs nothing here: it runs in every meson build's tests, cross
# ones and x86-64's Nehalem run included.
set -euo pipefail
cd "$(dirname "$0")/.."
results=$(realpath "${1:?usage: stage-fuzz.sh RESULTS_FILE}")
. .ci/lib.sh
seconds=${FUZZ_SECONDS:-180} # two at a time, fuzz_tables ran into a 90 s cap (56,785 inputs then)
seed=${FUZZ_SEED:-1}
dir=${FUZZ_BUILD:-build-fuzz}  # FUZZ_BUILD: another build directory
targets="fuzz_tables fuzz_rope fuzz_bias fuzz_embed fuzz_npy"  # the longest first
# (fuzz_rope's former 150000 ran into a 90 s cap in a rehearsal: a time-capped run is not
# reproducible.)
# Two thirds of the former counts (60000, 30000, 2.5 million): the last third had added 0.5-1% of
# coverage (tables 2858 -> 2871 edges, rope 2646 -> 2666, bias 1921 -> 1937, embed 3749 -> 3785,
# npy 336 either way) for a third of the stage's fuzzing minutes.
declare -A runs_of=([fuzz_tables]=40000 [fuzz_rope]=40000 [fuzz_embed]=40000 [fuzz_bias]=20000
                    [fuzz_npy]=1600000)

stage_packages clang libclang-rt-dev meson ninja-build libsimde-dev libxxhash-dev python3-numpy libmpfr-dev
work=$(mktemp -d)

step "fuzz build (clang, -Dfuzz=true): only the fuzz targets"
rm -rf "$dir"
# -g1 (clang: -gline-tables-only): a finding's stack has its lines; -g cost a third more compile time
CC=clang CXX=clang++ meson setup "$dir" -Dfuzz=true -Dbuildtype=debugoptimized -Db_lundef=false -Dc_args=-g1 -Dcpp_args=-g1 \
  >"$work/setup.log" 2>&1 || { cat "$work/setup.log"; exit 1; }
meson compile -C "$dir" $(for t in $targets; do echo "fuzz/$t"; done) >"$work/build.log" 2>&1 ||
  { tail -40 "$work/build.log"; exit 1; }

# fuzz_one TARGET: fuzzes a scratch copy of the corpus; fails on any finding.
fuzz_one() {
  local t=$1
  rm -rf "${work:?}/$t" && cp -r "fuzz/corpus/$t" "$work/$t"
  "$dir/fuzz/$t" -seed="$seed" -runs="${runs_of[$t]}" -max_total_time="$seconds" -rss_limit_mb=2048 -malloc_limit_mb=512 -timeout=20 \
    -print_final_stats=1 -artifact_prefix="$work/$t-" "$work/$t" >"$work/$t.log" 2>&1 || {
    tail -60 "$work/$t.log"
    return 1
  }
}
# Two targets at a time, one per core (a target is one process), each core taking the next target
# as soon as its last one ends (the longest first: pairs that waited for each other idled a core
# for a third of the stage). A target's inputs are the same whatever runs beside it (a fixed
# count from a fixed seed).
# fuzz_start TARGET: fuzz_one in the background (errexit on inside it, as check gives), its output
# and exit status kept for fuzz_result.
fuzz_start() {
  (set +e; (set -e; fuzz_one "$1"); echo $? >"$work/$1.status") >"$work/$1.out" 2>&1 &
}
fuzz_result() { cat "$work/$1.out"; return "$(cat "$work/$1.status")"; }
running=0
for t in $targets; do
  if [ $running -ge 2 ]; then wait -n || true; running=$((running - 1)); fi
  fuzz_start "$t"
  running=$((running + 1))
done
wait
for t in $targets; do
  check "fuzz $t (${runs_of[$t]} inputs, seed $seed)" fuzz_result "$t"
  runs=$(grep -h -m1 -o 'stat::number_of_executed_units: [0-9]*' "$work/$t.log" | cut -d' ' -f2) || true
  if [ -n "$runs" ] && [ "$runs" != "${runs_of[$t]}" ]; then
    echo "warning: $t stopped at the $seconds s cap after $runs of its ${runs_of[$t]} inputs (not reproducible)"
  fi
  echo "$t: $runs executions," \
    "corpus $(ls "fuzz/corpus/$t" | wc -l) -> $(ls "$work/$t" | wc -l) inputs," \
    "$(grep -o 'cov: [0-9]*' "$work/$t.log" | tail -1)"
done
rm -rf "$work"
