#!/usr/bin/env bash
# CI stage: every way a project consumes posenc, each built and run from a clean copy of the tree
# (tracked files plus untracked, not ignored ones), so that a broken install path fails here:
#   meson install -> pkg-config (make), CMake find_package (header-only + libposenc.a),
#                    CMake pkg_check_modules, the C++ game-engine example (strict flags);
#   cmake --install -> CMake find_package (header-only; the dispatch component must be refused);
#   CMake add_subdirectory (also for i686, run under qemu-i386);
#   meson subproject (dependency('posenc'); posenc must build its library only).
# Usage: bash .ci/stage-consumers.sh RESULTS_FILE   (appends "check OK|FAIL NAME" lines)
# Wall time: about 1 minute on 2 busy cores (55 s in a rehearsal; the two library builds dominate).
set -euo pipefail
results=$(realpath "$1")
cd "$(dirname "$0")/.."
. .ci/lib.sh

# posenc's own meson setup also configures its tests and tool (xxhash, MPFR, NumPy).
stage_packages gcc g++ make cmake pkg-config meson ninja-build python3 python3-numpy \
  libsimde-dev libxxhash-dev libmpfr-dev gcc-i686-linux-gnu libc6-dev-i386-cross qemu-user
work=$(mktemp -d)

# A clean copy: what git tracks and what it would track (so that uncommitted work is tested too).
src=$work/posenc
mkdir -p "$src"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git ls-files -co --exclude-standard -z | tar --null --ignore-failed-read -T - -cf - | tar -xf - -C "$src"
else
  tar --exclude='./build*' -cf - . | tar -xf - -C "$src"
fi

# meson install into a prefix, building only what is installed (not the tests and benches).
prefix=$work/prefix
meson_install() {
  meson setup "$work/build-install" "$src" --prefix "$prefix"
  meson introspect --targets "$work/build-install" | python3 -c '
import json, os, sys
for t in json.load(sys.stdin):
    if t["installed"]:
        d = os.path.relpath(os.path.dirname(t["defined_in"]), sys.argv[1])
        print(("" if d == "." else d + "/") + t["name"] + ":" + t["type"].replace(" ", "_"))' "$src" |
    xargs meson compile -C "$work/build-install"
  meson install -C "$work/build-install" --no-rebuild
  ls -R "$prefix"
}
check consumers/meson-install meson_install
pcdir=$(dirname "$(find "$prefix" -name posenc.pc | head -1)")

from_pkg_config() {
  PKG_CONFIG_PATH=$pcdir make -C "$src/consumers/pkg-config"
  "$src/consumers/pkg-config/consumer"
}
check consumers/pkg-config from_pkg_config

cmake_consumer() {  # DIR BUILD CMAKE_ARGS...: configure, build, run each consumer* (under $RUNNER)
  local dir=$1 build=$2 exe
  shift 2
  cmake -S "$src/consumers/$dir" -B "$build" "$@"
  cmake --build "$build"
  for exe in "$build"/consumer*; do ${RUNNER:-} "$exe"; done
}
check consumers/cmake-find-package-meson-install \
  cmake_consumer cmake-find-package "$work/cmake-find-meson" -DCMAKE_PREFIX_PATH="$prefix" -DWITH_DISPATCH=ON
check consumers/cmake-pkg-config cmake_consumer cmake-pkg-config "$work/cmake-pc" -DCMAKE_PREFIX_PATH="$prefix"
check consumers/cmake-add-subdirectory cmake_consumer cmake-subdir "$work/cmake-subdir"
# x86-32: posenc::posenc must bring -msse2 -mfpmath=sse (posenc.h refuses x87 arithmetic).
cmake_i686() {
  RUNNER="qemu-i386 -L /usr/i686-linux-gnu" cmake_consumer cmake-subdir "$work/cmake-subdir-i686" \
    -DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR=i686 -DCMAKE_C_COMPILER=i686-linux-gnu-gcc
}
check consumers/cmake-add-subdirectory-i686 cmake_i686

cmake_install() {
  cmake -S "$src" -B "$work/build-cmake-install"
  cmake --install "$work/build-cmake-install" --prefix "$work/prefix-cmake"
  cmake_consumer cmake-find-package "$work/cmake-find-cmake" -DCMAKE_PREFIX_PATH="$work/prefix-cmake"
  # CMake installs no libposenc.a: asking for it must fail at configure time
  ! cmake -S "$src/consumers/cmake-find-package" -B "$work/cmake-find-cmake-dispatch" \
    -DCMAKE_PREFIX_PATH="$work/prefix-cmake" -DWITH_DISPATCH=ON
}
check consumers/cmake-find-package-cmake-install cmake_install

# The consumer project in a directory of its own, posenc copied into its subprojects/.
meson_subproject() {
  local proj=$work/meson-consumer
  mkdir -p "$proj/meson-subproject/subprojects"
  cp "$src/consumers/consumer.c" "$proj/"
  cp "$src/consumers/meson-subproject/meson.build" "$proj/meson-subproject/"
  cp -R "$src" "$proj/meson-subproject/subprojects/posenc"
  meson setup "$work/build-subproject" "$proj/meson-subproject" --force-fallback-for=posenc
  meson compile -C "$work/build-subproject"
  "$work/build-subproject/consumer"
  # as a subproject, posenc builds its library and nothing else
  [ ! -e "$work/build-subproject/subprojects/posenc/tests" ] && [ ! -e "$work/build-subproject/subprojects/posenc/tools" ]
}
check consumers/meson-subproject meson_subproject

# The game-engine example against the installed headers, as an engine's build would compile it.
game_engine() {
  local cxx=$1
  "$cxx" -std=c++17 -O2 -fno-exceptions -fno-rtti -Wall -Wextra -Wpedantic -Werror \
    $(PKG_CONFIG_PATH=$pcdir pkg-config --cflags posenc) "$src/examples/game_engine.cpp" -o "$work/game_engine-$cxx"
  "$work/game_engine-$cxx"
}
check consumers/game-engine-g++ game_engine g++
if command -v clang++ >/dev/null; then check consumers/game-engine-clang++ game_engine clang++; fi

rm -rf "$work"
