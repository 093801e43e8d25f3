#!/usr/bin/env bash
# CI stage: posenc's test firmware on bare-metal Cortex-M4 (MPS2 AN386) and Cortex-M55 (MPS3 AN547)
# under qemu-system-arm, built with arm-none-eabi-gcc and newlib (cross/cortex-m*.ini, firmware/).
#   bash .ci/stage-cortex-m.sh RESULTS_FILE      (from the repository root)
# About 3.5 minutes on 2 cores after the install (~211 MB; 3 min 19 s in a rehearsal, bias on the
# M4 96 s of it, beside its other tests on the other core).
# Then the README's footprint table is checked (tools/footprint.py, about 30 s).
set -euo pipefail
cd "$(dirname "$0")/.."
results=$(realpath "${1:?usage: stage-cortex-m.sh RESULTS_FILE}")
. .ci/lib.sh

step "Cortex-M: toolchain and qemu-system-arm"
stage_packages meson libsimde-dev libxxhash-dev gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm

for cpu in cortex-m4 cortex-m55; do
  step "Cortex-M: $cpu (qemu-system-arm, semihosting)"
  meson_build "build-$cpu" --cross-file "cross/$cpu.ini"
  meson_tests "build-$cpu"
done

step "Cortex-M: footprint table (README, tools/footprint.py)"
check "Cortex-M footprint within 10% of the README's table" python3 tools/footprint.py --check README.md
