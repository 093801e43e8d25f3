#!/usr/bin/env bash
# CI stage: more ISAs under qemu-user, all against the same goldens as x86-64 (issue 6, item 5).
#   bash .ci/stage-more-isas.sh RESULTS_FILE
#   ppc64le   scalar backend, little-endian: every test but the guard-page sweep and the threaded
#             ones (suites guard-pages and threads), which run the same scalar code little-endian
#             on riscv64 (.ci/run) and big-endian on s390x here (about 3 of its 7.4 test-minutes);
#             the stack test runs, unasserted (each call's figure printed, tests/test_stack.c);
#   s390x     scalar backend, big-endian: the goldens hash a little-endian image of the outputs;
#   i686      -msse2 -mfpmath=sse, SSE2 and AVX2 backends dispatched at run time: the suite on
#             qemu's Haswell model (avx2 chosen; every test runs scalar, SSE2 and AVX2) but the
#             guard-page sweep and the threaded tests (tests/meson.build's i686 setups),
#             and the dispatch suite on its Nehalem model (no AVX2: sse2 must be chosen). qemu's
#             default model ('max') is Haswell's case again, so the stage skips that run.
# None runs suite small-block (tests/meson.build: the RoPE tests again with a 1 KiB block of rows,
# which the native and ARM builds run). Release builds in build-<triple>; cross builds compile
# tests lighter where emulation is slow (tests/meson.build). About 7 minutes on 2 busy cores,
# toolchain install excluded (6 min 47 s in a rehearsal, i686 2 min 47 s of it, before ppc64le and
# i686 ran the stack and FTZ tests again; 9 min 31 s with i686's guard pages and threaded tests, on
# a slower day).
set -euo pipefail
cd "$(dirname "$0")/.."
results=$(realpath "${1:?usage: stage-more-isas.sh RESULTS_FILE}")
. .ci/lib.sh

stage_packages meson ninja-build libsimde-dev libxxhash-dev qemu-user \
  gcc-powerpc64le-linux-gnu libc6-dev-ppc64el-cross \
  gcc-s390x-linux-gnu libc6-dev-s390x-cross \
  gcc-i686-linux-gnu g++-i686-linux-gnu libc6-dev-i386-cross

# Every run here leaves out suite small-block (the library again with a 1 KiB block of RoPE rows:
# tests/meson.build; i686's setups exclude it themselves).
step "cross: powerpc64le-linux-gnu (qemu-user), all but suites guard-pages, threads and small-block"
meson_build build-powerpc64le-linux-gnu --cross-file cross/powerpc64le-linux-gnu.ini
meson_subset build-powerpc64le-linux-gnu "" --no-suite guard-pages --no-suite threads --no-suite small-block
step "cross: s390x-linux-gnu (qemu-user), all but suite small-block"
meson_build build-s390x-linux-gnu --cross-file cross/s390x-linux-gnu.ini
meson_subset build-s390x-linux-gnu "" --no-suite small-block
step "cross: i686-linux-gnu (qemu-user), setup haswell"
meson_build build-i686-linux-gnu --cross-file cross/i686-linux-gnu.ini
meson_tests build-i686-linux-gnu haswell
step "i686 (qemu-user), setup nehalem: the dispatch suite"
meson_subset build-i686-linux-gnu nehalem --suite dispatch
