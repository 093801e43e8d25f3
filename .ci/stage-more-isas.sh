#!/usr/bin/env bash
# CI stage: more ISAs under qemu-user, all against the same goldens as x86-64 (issue 6, item 5).
#   bash .ci/stage-more-isas.sh RESULTS_FILE
#   ppc64le   scalar backend, little-endian;
#   s390x     scalar backend, big-endian: the goldens hash a little-endian image of the outputs;
#   i686      -msse2 -mfpmath=sse, SSE2 and AVX2 backends dispatched at run time, tested on two
#             qemu CPU models: Nehalem (no AVX2: sse2 must be chosen) and Haswell (avx2). qemu's
#             default model ('max') is Haswell's case again, so the stage skips that run.
# Release builds in build-<triple>; cross builds compile tests lighter where emulation is slow
# (tests/meson.build). About 6.5 minutes on 2 busy cores, toolchain install excluded.
set -euo pipefail
cd "$(dirname "$0")/.."
results=$(realpath "${1:?usage: stage-more-isas.sh RESULTS_FILE}")
log=$(mktemp)
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

packages=(meson ninja-build libsimde-dev libxxhash-dev qemu-user
  gcc-powerpc64le-linux-gnu libc6-dev-ppc64el-cross
  gcc-s390x-linux-gnu libc6-dev-s390x-cross
  gcc-i686-linux-gnu g++-i686-linux-gnu libc6-dev-i386-cross)
export DEBIAN_FRONTEND=noninteractive
if ! dpkg -s "${packages[@]}" >/dev/null 2>&1; then
  as_root apt-get install -y -q --no-install-recommends "${packages[@]}" >"$log" 2>&1 || { cat "$log"; exit 1; }
fi

# cross TRIPLE [SETUP...]: set up and build build-TRIPLE, run its tests (the default run, or one
# run per named test setup) and record each run; a failed test does not stop the stage.
cross() {
  local target=$1 dir=build-$1 setup
  shift
  echo; echo "=== cross: $target (qemu-user)${*:+, setups: $*}"
  rm -rf "$dir"
  meson setup "$dir" --cross-file "cross/$target.ini" -Dbuildtype=release >"$log" 2>&1 || { cat "$log"; exit 1; }
  grep -A1 "^  posenc" "$log" | tail -1 || true
  meson compile -C "$dir" >"$log" 2>&1 || { tail -40 "$log"; exit 1; }
  if [ $# -eq 0 ]; then
    meson test -C "$dir" --print-errorlogs || true
    echo "meson $dir" >>"$results"
  fi
  for setup in "$@"; do
    meson test -C "$dir" --setup "$setup" --print-errorlogs || true
    echo "meson $dir:$setup" >>"$results"
  done
}

cross powerpc64le-linux-gnu
cross s390x-linux-gnu
cross i686-linux-gnu nehalem haswell
