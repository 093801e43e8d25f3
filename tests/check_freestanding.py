#!/usr/bin/env python3
"""posenc's core is freestanding: posenc.h's implementation compiles with -ffreestanding -nostdinc
(the compiler's own headers plus tests/freestanding/string.h, nothing of the C library), and the
objects of the core and of every SIMD backend need no symbol beyond <string.h>'s and the compiler
runtime's: no libm, no malloc, no stdio, no getenv.

usage: check_freestanding.py NM SOURCE_ROOT BACKENDS CC [CC ARGS...]
       BACKENDS is a comma-separated list like "sse2:-msse2,avx2:-mavx2 -mf16c" (may be empty).
"""
import os
import re
import subprocess
import sys
import tempfile

STRING_H = {"memcpy", "memmove", "memset", "memcmp", "strcmp", "strlen"}
# x86 __builtin_cpu_supports data, position-independent code, stack protector
COMPILER_RUNTIME = {"__cpu_model", "__cpu_indicator_init", "_GLOBAL_OFFSET_TABLE_", "__stack_chk_fail",
                    "__stack_chk_guard"}


# libgcc's 64/128-bit integer division on 32-bit targets, and ARM's run-time ABI (which includes
# soft-float double arithmetic on single-precision FPUs such as the Cortex-M4's)
LIBGCC = re.compile(r"^(__u?(div|mod|divmod)[dt]i[34]|__aeabi_\w+)$")


def allowed(symbol):
    return (symbol in STRING_H or symbol in COMPILER_RUNTIME or LIBGCC.match(symbol) is not None
            or symbol.startswith("posenc_"))


def compiler_include_dir(cc):
    for flag in ("-print-file-name=include", "-print-resource-dir"):
        out = subprocess.run(cc + [flag], capture_output=True, text=True).stdout.strip()
        path = out if flag.endswith("include") else os.path.join(out, "include")
        if os.path.isfile(os.path.join(path, "stddef.h")):
            return path
    sys.exit("cannot find the compiler's own include directory")


def compile_and_check(cc, nm, name, args, source, tmp):
    # The source lives in tmp so that "posenc.h" is found through -I only.
    src, obj = os.path.join(tmp, name + ".c"), os.path.join(tmp, name + ".o")
    with open(src, "w") as f:
        f.write(source)
    cmd = cc + ["-std=c99", "-O2", "-Wall", "-Wextra", "-Wpedantic", "-Werror", "-ffreestanding",
                "-c", src, "-o", obj] + args
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        print(f"FAIL {name}: does not compile freestanding\n  {' '.join(cmd)}\n{run.stderr}")
        return False
    listing = subprocess.run([nm, "-u", obj], capture_output=True, text=True, check=True).stdout
    undefined = sorted({line.split()[-1] for line in listing.splitlines() if line.strip()})
    bad = [s for s in undefined if not allowed(s)]
    if bad:
        print(f"FAIL {name}: needs {', '.join(bad)}")
        return False
    print(f"ok   {name}: undefined symbols {', '.join(undefined) or '(none)'}")
    return True


def main():
    nm, root, backends, cc = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    backend_flags = dict(b.split(":", 1) for b in backends.split(",") if b)
    core_defs = [f"-DPOSENC_WITH_{isa.upper()}" for isa in backend_flags]
    strict = ["-nostdinc", "-isystem", compiler_include_dir(cc),
              "-I", os.path.join(root, "tests", "freestanding"), "-I", root]
    checks = [("core", strict + core_defs, '#define POSENC_IMPLEMENTATION\n#include "posenc.h"\n')]
    # The SIMD backends include the compiler's intrinsics headers (x86's pull in <stdlib.h> for
    # _mm_malloc), so they get the ordinary include path; their objects are what must stay clean.
    for isa, flags in backend_flags.items():
        checks.append((isa, flags.split() + ["-I", root],
                       f'#define POSENC_SIMD_{isa.upper()}\n#include "posenc_simd.h"\n'))
    with tempfile.TemporaryDirectory() as tmp:
        results = [compile_and_check(cc, nm, name, args, src, tmp) for name, args, src in checks]
    failed = results.count(False)
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
