#!/usr/bin/env python3
"""posenc's prefetches go to L1 on x86: every prefetch instruction in the library's objects is
prefetcht0. A prefetch changes no bit, so no other test sees its hint; through SIMDe's
simde_mm_prefetch(p, SIMDE_MM_HINT_T0), gcc and clang emitted prefetcht2 (SIMDe's constant is 1,
which their _mm_prefetch reads as _MM_HINT_T2: simd-everywhere/simde#1186), and a RoPE prefill
from memory took 16-33% longer than with prefetcht0 (README, "RoPE (`bench/bench_rope.c`)").

usage: check_prefetch_hint.py OBJDUMP LIBRARY
"""
import collections
import re
import subprocess
import sys


def main():
    objdump, library = sys.argv[1], sys.argv[2]
    text = subprocess.run([objdump, "-d", "--no-show-raw-insn", library], check=True, capture_output=True,
                          text=True).stdout
    seen = collections.Counter(re.findall(r"\s(prefetch\w*)\s", text))
    print("prefetch instructions in %s: %s" % (library, dict(seen) or "none"))
    others = {name: n for name, n in seen.items() if name != "prefetcht0"}
    if others:
        print("FAIL: prefetches that do not reach L1: %s" % others)
        return 1
    if not seen.get("prefetcht0"):
        print("FAIL: no prefetcht0 (the rotation's and the masked add's prefetches are missing)")
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
