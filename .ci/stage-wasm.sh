#!/usr/bin/env bash
# CI stage: WebAssembly, every test under node against the same goldens as x86-64.
#   bash .ci/stage-wasm.sh RESULTS_FILE
#   wasm32-wasi           clang + wasi-libc (cross/wasm32-wasi.ini): the scalar build, then
#                         -msimd128 (the simd128 backend, chosen at compile time);
#   wasm32-emscripten     Debian's emcc (cross/wasm32-emscripten.ini), with -msimd128.
# No threads, CLI or MPFR there (meson.build, tests/meson.build say what is left out).
# About 3 minutes on 2 cores after the install.
set -euo pipefail
cd "$(dirname "$0")/.."
results=$(realpath "${1:?usage: stage-wasm.sh RESULTS_FILE}")
. .ci/lib.sh

stage_packages meson ninja-build libsimde-dev libxxhash-dev python3 clang lld llvm wasi-libc libclang-rt-dev-wasm32 \
  libc++-14-dev-wasm32 libc++abi-14-dev-wasm32 emscripten
command -v node >/dev/null || apt_install nodejs
# Debian's emcc runs its JavaScript optimizer with node modules from /usr/share/nodejs, which a
# node that is not Debian's own does not search.
export NODE_PATH=/usr/share/nodejs

step "wasm32-wasi (node $(node --version)), scalar"
meson_build build-wasm32-wasi --cross-file cross/wasm32-wasi.ini
meson_tests build-wasm32-wasi

step "wasm32-wasi, -msimd128"
# -Dflag_variants=false: the fast-math check builds its programs with the compiler alone (not the
# build's -msimd128), both headers, SIMD128 included: the scalar build's run was this one's again.
meson_build build-wasm32-wasi-simd128 --cross-file cross/wasm32-wasi.ini -Dc_args=-msimd128 -Dcpp_args=-msimd128 \
  -Dflag_variants=false
meson_tests build-wasm32-wasi-simd128

step "wasm32-emscripten ($(emcc --version | head -1)), -msimd128"
meson_build build-wasm32-emscripten --cross-file cross/wasm32-emscripten.ini -Dc_args=-msimd128 -Dcpp_args=-msimd128
meson_tests build-wasm32-emscripten
