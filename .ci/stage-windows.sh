#!/usr/bin/env bash
# CI stage: Windows x64, built here and run under Wine, against the same goldens as Linux.
#   bash .ci/stage-windows.sh RESULTS_FILE
#   MinGW-w64 (cross/x86_64-w64-mingw32.ini): everything built (library, tests, examples, benches,
#     CLI), warnings as errors, but the single-file hostile-flag variants (the native build of the
#     same GCC 12 runs them); every meson test under Wine, the CLI suite included; then the
#     dispatch suite with Wine itself under qemu-x86_64 -cpu Nehalem (no AVX: sse2 must be chosen,
#     and its self-test passes: every kernel family).
#   clang-cl in MSVC mode (cross/x86_64-windows-clang-cl.ini: _MSC_VER, no __GNUC__, so posenc's
#     cl.exe code paths), with Wine's C library: everything built but the hostile-flag variants;
#     every meson test under Wine but the CLI suite (Wine's <stdlib.h> has EXIT_FAILURE -1, the
#     suite wants exit status 1); then a header-only program built without meson (C and C++,
#     /W4 /WX, /arch:AVX2): it must choose AVX2 as /proc/cpuinfo says.
# Each build runs tests/check_detection.py: the automatic choice against /proc/cpuinfo's flags.
# The cross files' wrapper runs each program as `tests/wine_retry.py wine PROGRAM` (it reads
# POSENC_WINE_RETRY, which tests/meson.build's Windows test setups set): Wine 8 now and then fails
# a process as it exits (glibc's dl-fini assertion, or a nonzero status with no output); such a
# run is run once more and says so.
# One fresh Wine prefix in a temporary directory, its wineserver kept alive for the whole stage
# (a Wine process then starts in a few tens of milliseconds, not seconds). The stage's wall time
# is printed at its end.
set -euo pipefail
cd "$(dirname "$0")/.."
results=$(realpath "${1:?usage: stage-windows.sh RESULTS_FILE}")
. .ci/lib.sh
stage_start=$(date +%s)
since() { echo "($(( $(date +%s) - $1 )) s)"; }

t=$(date +%s)
# clang-cl comes with clang-tools-14 and llvm-lib with llvm-14 (neither with clang alone).
stage_packages meson ninja-build libsimde-dev libxxhash-dev python3-numpy gcc g++ qemu-user \
  gcc-mingw-w64-x86-64 g++-mingw-w64-x86-64 wine wine64 \
  clang-14 clang-tools-14 llvm-14 lld libwine-dev
echo "toolchains installed $(since "$t")"

step "Wine prefix"
t=$(date +%s)
wine_home=$(mktemp -d)
export WINEPREFIX=$wine_home/prefix WINEDEBUG=-all
trap 'wineserver -k 2>/dev/null || true; rm -rf "$wine_home"' EXIT
mkdir -p "$WINEPREFIX"
wineserver -p
# No Mono or Gecko to offer; the prefix's own services start here, not inside the first test
# (whose output pipe they would hold open until they exit).
WINEDLLOVERRIDES='mscoree,mshtml=' wine wineboot --init </dev/null >/dev/null 2>&1
wine cmd /c exit </dev/null >/dev/null 2>&1
echo "prefix ready $(since "$t")"

step "Windows x64, MinGW-w64: build"
t=$(date +%s)
# -Dflag_variants=false: MinGW-w64's GCC is the native build's release (12), which ran the single-file
# hostile-flag builds (contraction, -ffast-math, AVX512-FP16: 4 of the 10 whole-implementation
# compiles here); this build tests what Windows changes (C library, ABI, <windows.h>, Wine).
meson_build build-windows-mingw --cross-file cross/x86_64-w64-mingw32.ini --werror -Dflag_variants=false
echo "built $(since "$t")"

step "Windows x64, MinGW-w64: tests and the CLI suite under Wine"
t=$(date +%s)
meson_tests build-windows-mingw
echo "tests $(since "$t")"

# Without AVX2 only the dispatch has something left to prove: SSE2 chosen, and no AVX instruction on
# its way (suite 'dispatch'). The whole suite ran just above with every backend, SSE2's included.
step "Windows x64, MinGW-w64: Wine under qemu-x86_64 -cpu Nehalem, the dispatch suite"
t=$(date +%s)
meson_subset build-windows-mingw nehalem --suite dispatch
echo "tests $(since "$t")"

# In /tmp: clang-cl reads an absolute path as an option where its start is one (/work/... is /wo
# with "rk/...", /opt/... is /o), and meson's configure checks compile files under the build
# directory by absolute path (the build itself uses relative ones).
clang_cl_build=/tmp/posenc-build-windows-clang-cl
step "Windows x64, clang-cl (MSVC mode): build"
t=$(date +%s)
# (-Dflag_variants=false: clang-cl ignores GCC's -ffast-math, so that variant was a plain build;
# the AVX512-FP16 compile, which clang-cl accepts, is the native clang build's too.)
meson_build "$clang_cl_build" --cross-file cross/x86_64-windows-clang-cl.ini -Dflag_variants=false
echo "built $(since "$t")"

step "Windows x64, clang-cl (MSVC mode): tests under Wine"
t=$(date +%s)
meson test -C "$clang_cl_build" --no-suite cli --print-errorlogs || true
echo "meson $clang_cl_build" >>"$results"
echo "tests $(since "$t")"

# The MSVC-mode predefined macros (what makes this build take cl.exe's code paths), then
# tests/test_single_file.c and tests/test_cxx.cpp compiled as a user's header-only program is,
# without meson, by the cross file's compiler command and link options.
clang_cl_mode() {
  local macros
  macros=$(echo 'int x;' | /usr/lib/llvm-14/bin/clang-cl --target=x86_64-pc-windows-msvc /E /clang:-dM /Tc - 2>/dev/null ||
           true)
  grep -q '^#define _MSC_VER ' <<<"$macros"
  ! grep -q '^#define __GNUC__ ' <<<"$macros"
}
header_only_clang_cl() {
  local dir wine_sdk=/usr/include/wine/wine wine_lib=/usr/lib/x86_64-linux-gnu/wine/x86_64-windows
  local cl=(/usr/lib/llvm-14/bin/clang-cl --target=x86_64-pc-windows-msvc -fuse-ld=lld /nologo
            /imsvc "$wine_sdk/msvcrt" /imsvc "$wine_sdk/windows" /imsvc /usr/include
            /D_InterlockedCompareExchange128=wine_InterlockedCompareExchange128 /GS-
            /O2 /W4 /WX /arch:AVX2 /I . /I tests)
  local link=(/link /nodefaultlib /entry:mainCRTStartup "/libpath:$wine_lib" libwinecrt0.a libucrtbase.a libkernel32.a)
  dir=$(mktemp -d)
  "${cl[@]}" /Tc tests/test_single_file.c "/Fe$dir/single_file_c.exe" "/Fo$dir/c.obj" "${link[@]}"
  "${cl[@]}" /std:c++14 /Tp tests/test_cxx.cpp "/Fe$dir/single_file_cxx.exe" "/Fo$dir/cxx.obj" "${link[@]}"
  for exe in single_file_c single_file_cxx; do
    tests/wine_retry.py wine "$dir/$exe.exe" | tr -d '\r' | tee "$dir/$exe.txt"
    grep -qx 'single-file backend: avx2' "$dir/$exe.txt"
    grep -qx '[0-9]* passed, 0 failed' "$dir/$exe.txt"
  done
  MESON_EXE_WRAPPER='tests/wine_retry.py wine' python3 tests/check_detection.py posenc.h "$dir/single_file_c.exe" "$dir/single_file_cxx.exe"
  rm -rf "$dir"
}
check "clang-cl defines _MSC_VER and not __GNUC__" clang_cl_mode
check "clang-cl header-only /arch:AVX2 (C and C++, /W4 /WX) chooses avx2 under Wine" header_only_clang_cl

step "Windows stage: $(since "$stage_start")"
