#!/usr/bin/env python3
"""posenc's implementation is immune to the including file's unsafe float flags, or refuses them.

Builds tests/test_fast_math.c (posenc.h alone, and posenc_simd.h with the host's SIMD backends)
with gcc and clang under each flag set below (the SIMD header under two of them where posenc's
pragmas undo the flags: see builds), compiled and linked with it as a user's -Ofast program is,
and runs it: every build must pass its goldens and print the digest of the build
without the flags. Where no pragma can help (clang's -ffast-math on a target with FMA,
intrinsics included before posenc_simd.h), the build must stop with posenc's #error, whose text
names the fix. Every build must be free of warnings and notes (GCC's -Wpsabi note included).

The configured compiler is tested, and gcc and clang from PATH besides; one that is not
installed is named in the output and skipped (the test still passes: it checks posenc, not the
machine). With --configured-only (meson's test: each build tests its own compiler) or --run (a
cross build's runner, one --run per word: node for wasm32-wasi) only the configured compiler is
tested; with --run its programs run under that runner.

clang ignores #pragma float_control on targets without strict floating point (ARM, AArch64,
RISC-V, WebAssembly in clang 14): there -ffast-math and -ffinite-math-only must be refused.

usage: check_fast_math.py [--configured-only] [--run WORD]... SOURCE_ROOT CC [CC ARGS...]
"""
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile

UNSAFE = [
    ["-Ofast"],
    ["-O2", "-ffast-math"],
    ["-O3", "-fassociative-math", "-fno-signed-zeros", "-fno-trapping-math"],
    ["-O2", "-ffinite-math-only"],
    ["-O2", "-freciprocal-math", "-fno-signed-zeros"],
]
# The SIMD kernels' sets where posenc's pragmas undo the flags (one pragma region covers both
# headers, and posenc.h alone meets every set): -Ofast, all of them with the macros that steer
# posenc's checks, and the set no macro shows.
KERNEL_UNSAFE = [UNSAFE[0], UNSAFE[2]]
CONTRACT_MSG = "add -ffp-contract=on after -ffast-math and define POSENC_FP_CONTRACT_ON"
FIRST_MSG = "include posenc_simd.h first"
EXCESS_MSG = "posenc needs IEEE arithmetic without excess precision"
ORDER_MSG = "include posenc_simd.h before posenc.h"
TWICE_MSG = "posenc_simd.h is included twice"
SINGLE_MSG = "posenc_i_needs_64_bit_double_constants"
NO_PRAGMA_MSG = "clang ignores #pragma float_control on ARM, AArch64, RISC-V and WebAssembly"
# What runs the programs the configured compiler builds (empty: they run here); set in main.
WRAPPER = []


def defines(cc, args=()):
    run = subprocess.run(cc + list(args) + ["-dM", "-E", "-x", "c", os.devnull], capture_output=True, text=True)
    return set(re.findall(r"^#define (\w+)", run.stdout, re.M)) if run.returncode == 0 else None


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def builds(cc, family, x86, strict_fp, simd_flags, backend):
    """(name, flags, expected error message or None) for one compiler. strict_fp: the target is
    one where clang honours #pragma float_control. simd_flags: what the target's SIMD backend needs;
    backend: posenc_simd.h instantiates one with them (x86 with SSE2, NEON, WebAssembly)."""
    headers = [("posenc.h", ["-DTEST_FM_HEADER_ONLY"]), ("posenc_simd.h", simd_flags)]
    if x86 and {"avx2", "f16c"} <= cpu_flags():
        headers.append(("posenc_simd.h avx2", ["-mavx2", "-mf16c"]))
    out = []
    # Where no pragma undoes the flags (clang without float_control), each flag's own effect on the
    # kernels is what is tested: all five sets for them too.
    undone = family == "gcc" or strict_fp
    for hname, hflags in headers:
        for flags in KERNEL_UNSAFE if undone and hname != "posenc.h" else UNSAFE:
            # macros show these; no pragma undoes them where clang has no float_control
            shown = any(f in ("-Ofast", "-ffast-math", "-ffinite-math-only") for f in flags)
            out.append((f"{hname} {' '.join(flags)}", hflags + flags,
                        NO_PRAGMA_MSG if family == "clang" and not strict_fp and shown else None))
    if x86 and {"avx2", "f16c", "fma"} <= cpu_flags():
        fma = ["-mavx2", "-mf16c", "-mfma"]
        # clang's -ffast-math means -ffp-contract=fast, fused in the back end past any pragma
        out.append(("posenc_simd.h avx2+fma -O3 -ffast-math", fma + ["-O3", "-ffast-math"],
                    CONTRACT_MSG if family == "clang" else None))
        out.append(("posenc_simd.h avx2+fma -Ofast -ffp-contract=on -DPOSENC_FP_CONTRACT_ON",
                    fma + ["-Ofast", "-ffp-contract=on", "-DPOSENC_FP_CONTRACT_ON"], None))
    if x86 and family == "gcc":
        # GCC says FLT_EVAL_METHOD -1 where doubles may go through the x87: refused
        out.append(("posenc.h -O2 -mno-sse2 (x87 doubles)", ["-DTEST_FM_HEADER_ONLY", "-O2", "-mno-sse2"], EXCESS_MSG))
        out.append(("posenc.h -O2 -mfpmath=sse,387", ["-DTEST_FM_HEADER_ONLY", "-O2", "-mfpmath=sse,387"], EXCESS_MSG))
    if family == "gcc":  # double constants as float: no macro shows it, a constant expression does
        out.append(("posenc.h -O2 -fsingle-precision-constant", ["-DTEST_FM_HEADER_ONLY", "-O2",
                                                                 "-fsingle-precision-constant"], SINGLE_MSG))
    if backend:  # include order: the implementation compiled by posenc.h first knows no SIMD
        # backend; twice in one file, every kernel is defined again (without a backend, harmless)
        out.append(("posenc.h's implementation before posenc_simd.h",
                    simd_flags + ["-DPOSENC_IMPLEMENTATION", "-include", "posenc.h"], ORDER_MSG))
        out.append(("posenc_simd.h twice", simd_flags + ["-include", "posenc_simd.h"], TWICE_MSG))
    # SIMDe first: its fast-math shortcuts are set, and under clang its functions carry the flags
    out.append(("SIMDe before posenc_simd.h, -O2 -ffast-math",
                simd_flags + ["-include", "simde/x86/sse2.h", "-O2", "-ffast-math"], FIRST_MSG))
    if x86 and family == "clang":
        out.append(("<immintrin.h> before posenc_simd.h, -Ofast", ["-include", "immintrin.h", "-Ofast"], FIRST_MSG))
    return out


def build_and_run(cc, root, tmp, tag, flags, want_error):
    exe = os.path.join(tmp, re.sub(r"\W+", "_", tag))
    cmd = cc + ["-std=c99", "-Wall", "-Wextra", "-I" + os.path.join(root, "tests"), "-I" + root] + flags + \
        [os.path.join(root, "tests", "test_fast_math.c"), "-o", exe]
    comp = subprocess.run(cmd, capture_output=True, text=True)
    if want_error is not None:
        if comp.returncode != 0 and want_error in comp.stderr:
            return True, "refused with posenc's #error", None
        return False, f"expected the #error naming '{want_error}'\n  {' '.join(cmd)}\n{comp.stderr[-2000:]}", None
    if comp.returncode != 0:
        return False, f"does not compile\n  {' '.join(cmd)}\n{comp.stderr[-2000:]}", None
    if comp.stderr.strip():
        return False, f"warnings or notes\n  {' '.join(cmd)}\n{comp.stderr[-2000:]}", None
    run = subprocess.run(WRAPPER + [exe], capture_output=True, text=True)
    digest = re.search(r"^digest: (0x[0-9a-f]+)$", run.stdout, re.M)
    if run.returncode != 0 or not digest:
        fails = [l for l in run.stdout.splitlines() if l.startswith("FAIL")]
        more = f"\n  ... {len(fails) - 4} more" if len(fails) > 4 else ""
        return False, f"wrong results (exit {run.returncode})\n  {' '.join(cmd)}\n  " + "\n  ".join(fails[:4]) + more, None
    return True, "exact", digest.group(1)


def main():
    args = sys.argv[1:]
    configured_only = False
    while args[:1] == ["--configured-only"] or (args[:1] == ["--run"] and len(args) >= 2):
        if args[0] == "--run":
            WRAPPER.append(args[1])
            args = args[2:]
        else:
            configured_only, args = True, args[1:]
    if len(args) < 2:
        sys.exit(__doc__)
    root, configured = args[0], args[1:]
    compilers, seen = [], set()
    others = [] if WRAPPER or configured_only else [("gcc", ["gcc"]), ("clang", ["clang"])]
    for name, cc in [("configured", configured)] + others:
        if name != "configured" and not shutil.which(cc[0]):
            print(f"note: {cc[0]} is not installed: its fast-math builds are not tested here")
            continue
        d = defines(cc)
        if d is None:
            print(f"note: {' '.join(cc)} does not run: skipped")
            continue
        family = "clang" if "__clang__" in d else "gcc" if "__GNUC__" in d else None
        if family is None:
            print(f"note: {' '.join(cc)} is neither gcc nor clang: skipped")
            continue
        version = subprocess.run(cc + ["--version"], capture_output=True, text=True).stdout.splitlines()[0]
        same = re.sub(r"^\S+ (?=\()", "", version)  # "cc (Debian 12.2.0-14) 12.2.0" is gcc's
        if same in seen:
            continue
        seen.add(same)
        x86 = "__x86_64__" in d or "__i386__" in d
        strict_fp = x86 or bool({"__powerpc__", "__s390x__"} & d)
        simd_flags = ["-msimd128"] if "__wasm__" in d else []
        backend = bool({"__SSE2__", "__ARM_NEON", "__ARM_NEON__", "__wasm__"} & d)
        compilers.append((cc, family, version, x86, strict_fp, simd_flags, backend))
    ok = bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        # the reference: the first compiler, no unsafe flag
        cc0 = compilers[0][0]
        good, msg, reference = build_and_run(cc0, root, tmp, "reference", ["-O2", "-DTEST_FM_HEADER_ONLY"], None)
        if not good:
            print(f"FAIL reference build ({' '.join(cc0)} -O2): {msg}")
            print("0 passed, 1 failed")
            return 1
        print(f"reference digest {reference} ({compilers[0][2]}, -O2, posenc.h)")
        jobs = []
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            for cc, family, version, x86, strict_fp, simd_flags, backend in compilers:
                for tag, flags, want_error in builds(cc, family, x86, strict_fp, simd_flags, backend):
                    label = f"{family} {tag}"
                    jobs.append((label, pool.submit(build_and_run, cc, root, tmp, f"{family}_{tag}", flags,
                                                    want_error)))
            for label, job in jobs:
                good, msg, digest = job.result()
                if good and digest is not None and digest != reference:
                    good, msg = False, f"digest {digest}, want {reference}"
                print(f"{'ok  ' if good else 'FAIL'} {label}: {msg}")
                ok, bad = ok + good, bad + (not good)
    for cc, family, version, *_ in compilers:
        print(f"tested: {version}")
    print(f"{ok} passed, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
