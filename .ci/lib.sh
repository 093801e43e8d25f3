# .ci/lib.sh - what .ci/run and its stages share. Source it from the repository root with
# $results naming the results file: "meson BUILDDIR[:SETUP]" lines (every test of that meson
# test log counts) and "check OK|FAIL NAME" lines. A failed test never stops CI; the summary
# counts it. Only a broken install, setup or build does.
export DEBIAN_FRONTEND=noninteractive

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# step TITLE: a heading, with the clock time (what each stage takes, read from the log).
step() { echo; echo "=== $* [$(date +%T)]"; }

# apt_install PACKAGE...: installs those not yet installed; apt's log is shown only on failure.
apt_install() {
  local log
  dpkg -s "$@" >/dev/null 2>&1 && return 0
  log=$(mktemp)
  as_root apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "$@" >"$log" 2>&1 ||
    { cat "$log"; exit 1; }
  rm -f "$log"
}

# stage_packages PACKAGE...: what a stage needs from Debian, installed (apt_install). With
# PACKAGES_LIST=FILE set it only appends them to FILE and ends the stage: .ci/run collects every
# stage's list that way and installs them all in the background during the quick start.
stage_packages() {
  if [ -n "${PACKAGES_LIST:-}" ]; then printf '%s\n' "$@" >>"$PACKAGES_LIST"; exit 0; fi
  apt_install "$@"
}

# meson_build DIR [SETUP ARGS...]: a fresh build in DIR, compiled; the backends it got are shown.
# With BUILD_SUITES="SUITE..." only the programs those suites' tests run are built (and what they
# link; not a test's other dependencies, which the suites it is used for have none of): run them
# with meson_subset DIR SETUP --no-rebuild --suite SUITE...
meson_build() {
  local dir=$1 log programs
  shift
  log=$(mktemp)
  rm -rf "$dir"
  meson setup "$dir" "$@" >"$log" 2>&1 || { cat "$log"; exit 1; }
  grep -A1 "^  posenc" "$log" | tail -1 || true
  if [ -n "${BUILD_SUITES:-}" ]; then
    programs=$(meson introspect --tests "$dir" | python3 -c '
import json, os, sys
build, suites = os.path.realpath(sys.argv[1]), set(sys.argv[2:])
for test in json.load(sys.stdin):  # suites are named "project:suite"
    program = os.path.realpath(test["cmd"][0])
    if suites & {s.rpartition(":")[2] for s in test["suite"]} and program.startswith(build + os.sep):
        print(os.path.relpath(program, build))' "$dir" $BUILD_SUITES | sort -u)
    [ -n "$programs" ] || { echo "meson_build: no test programs in suites $BUILD_SUITES"; exit 1; }
    ninja -C "$dir" $programs >"$log" 2>&1 || { tail -40 "$log"; exit 1; }
  else
    meson compile -C "$dir" >"$log" 2>&1 || { tail -40 "$log"; exit 1; }
  fi
  rm -f "$log"
}

# meson_tests DIR [SETUP...]: DIR's tests (once per named test setup, if any), each run recorded.
meson_tests() {
  local dir=$1 setup
  shift
  if [ $# -eq 0 ]; then meson_subset "$dir" ""; fi
  for setup in "$@"; do meson_subset "$dir" "$setup"; done
}

# meson_subset DIR SETUP [SELECTION...]: DIR's tests under SETUP ("" for none), those that meson
# test's SELECTION picks (--suite S, --no-suite S; all without one), recorded as that run. For
# example a CPU model that only has to prove the dispatch (suite 'dispatch', tests/meson.build).
meson_subset() {
  local dir=$1 setup=$2
  shift 2
  meson test -C "$dir" ${setup:+--setup "$setup"} "$@" --print-errorlogs || true
  echo "meson $dir${setup:+:$setup}" >>"$results"
}

# check NAME COMMAND...: runs COMMAND with errexit on inside it (so a function's every step
# counts); its output is shown only when it fails, and then its last lines are kept in
# RESULTS.tails too, for .ci/run's summary. One result line.
check() {
  local name=$1 log rc
  shift
  log=$(mktemp)
  echo "=== $name"
  set +e
  (set -e; "$@") >"$log" 2>&1
  rc=$?
  set -e
  if [ $rc = 0 ]; then echo "check OK $name" >>"$results"
  else
    echo "check FAIL $name" >>"$results"; echo "--- $name failed:"; tail -40 "$log"
    { echo "--- $name:"; tail -15 "$log" | cut -c1-300 | sed 's/^/  /'; } 2>/dev/null >>"$results.tails" || true
  fi
  rm -f "$log"
}
