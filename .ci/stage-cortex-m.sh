#!/usr/bin/env bash
# CI stage: posenc's test firmware on bare-metal Cortex-M4 (MPS2 AN386) and Cortex-M55 (MPS3 AN547)
# under qemu-system-arm, built with arm-none-eabi-gcc and newlib (cross/cortex-m*.ini, firmware/).
#   bash .ci/stage-cortex-m.sh RESULTS_FILE      (from the repository root)
# About 4-5 minutes on 2 cores after the install (~211 MB); bias on the M4 takes 2.5 of them.
set -euo pipefail
results=${1:?usage: $0 RESULTS_FILE}
export DEBIAN_FRONTEND=noninteractive
logs=$(mktemp -d)
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

echo "=== Cortex-M: toolchain and qemu-system-arm"
as_root apt-get install -y -q --no-install-recommends \
  meson libsimde-dev libxxhash-dev gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm >"$logs/apt.log" 2>&1 ||
  { cat "$logs/apt.log"; exit 1; }

for cpu in cortex-m4 cortex-m55; do
  dir=build-$cpu
  echo "=== Cortex-M: $cpu (qemu-system-arm, semihosting)"
  rm -rf "$dir"
  meson setup "$dir" --cross-file "cross/$cpu.ini" >"$logs/setup-$cpu.log" 2>&1 ||
    { cat "$logs/setup-$cpu.log"; exit 1; }
  meson compile -C "$dir" >"$logs/compile-$cpu.log" 2>&1 || { tail -40 "$logs/compile-$cpu.log"; exit 1; }
  meson test -C "$dir" --print-errorlogs || true   # failures are counted from the test log
  echo "meson $dir" >>"$results"
done
