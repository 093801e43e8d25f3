#!/bin/sh
# Runs a posenc test firmware on an Arm MPS board emulated by qemu-system-arm; the firmware's
# output comes over semihosting and its exit status (SYS_EXIT_EXTENDED) becomes ours.
#   cross/qemu-mps.sh MACHINE FIRMWARE.elf      MACHINE: mps2-an386 (Cortex-M4), mps3-an547 (M55)
# A firmware that never exits (a busy loop, a fault handler that spins) fails after
# POSENC_QEMU_TIMEOUT seconds (default 300) instead of blocking the test run.
set -eu
[ $# -eq 2 ] || { echo "usage: $0 MACHINE FIRMWARE.elf" >&2; exit 2; }
exec timeout "${POSENC_QEMU_TIMEOUT:-300}" qemu-system-arm -M "$1" -nographic -monitor none \
  -serial null -semihosting-config enable=on,target=native -kernel "$2"
