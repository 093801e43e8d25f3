#!/usr/bin/env python3
"""posenc's footprint on Cortex-M4 and Cortex-M55: text, data+bss and peak stack of each feature
used alone, with posenc and written plainly with newlib's libm (firmware/footprint/).

  tools/footprint.py                    builds and runs every program, prints the markdown table
  tools/footprint.py --update README.md rewrites the table between the footprint markers
  tools/footprint.py --check README.md  fails if a figure grew by more than 10% (and 32 bytes)
                                        over the README's, or a row or column is missing

Each program is one C file and firmware/footprint/fp_start.c, built with arm-none-eabi-gcc -Os
-ffunction-sections -fdata-sections -Wl,--gc-sections and newlib (--specs=nosys.specs; the
start-up calls no newlib function), linked with the test firmware's linker scripts, and run on
qemu-system-arm (cross/qemu-mps.sh): the start-up paints the stack and prints the high-water mark.
The caller's buffers live past .bss and count in no figure.
Needs arm-none-eabi-gcc, newlib and qemu-system-arm (Debian: gcc-arm-none-eabi
libnewlib-arm-none-eabi qemu-system-arm)."""
import argparse
import ast
import concurrent.futures
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "firmware", "footprint")
CC = "arm-none-eabi-gcc"
SIZE = "arm-none-eabi-size"
CPUS = [("M4", "cortex-m4"), ("M55", "cortex-m55")]
BEGIN, END = "<!-- footprint:begin -->", "<!-- footprint:end -->"
GROWTH, SLACK = 0.10, 32   # a figure fails when it exceeds the README's by both

# (row label, program stem, what it runs); {NAME} is FP_NAME from fp.h. The plain programs are
# stem_plain.c, posenc's stem_posenc.c (the self-test has no plain one, the empty program no posenc).
FEATURES = [
    ("empty program", "empty", "start-up and harness only"),
    ("sinusoidal table", "sinusoidal", "{SIN_POS} x d {SIN_DIM}, f32"),
    ("RoPE cache", "rope_cache", "head dim {ROPE_DIM}, {ROPE_POS} positions, f32 cos/sin rows"),
    ("RoPE on the fly", "rope_fly", "head dim {ROPE_DIM}, {ROPE_TOKENS} tokens, {ROPE_QHEADS} Q + {ROPE_KHEADS} K heads"),
    ("masked add", "embed", "{EMB_TOKENS} tokens x d {EMB_DIM}, sinusoidal rows, padding mask"),
    ("ALiBi tile", "alibi", "{TILE_HEADS} heads x {TILE_ROWS} x {TILE_COLS}, causal, slopes"),
    ("T5 tile", "t5", "{TILE_HEADS} heads x {TILE_ROWS} x {TILE_COLS}, {T5_BUCKETS} buckets, plan"),
    ("self-test", "selftest", "`posenc_selftest()`"),
]
FIGURES = ["text", "data+bss", "stack"]


def cross_file(cpu):
    """The -mcpu flags and the board of cross/CPU.ini (the same as the test firmware's)."""
    text = open(os.path.join(ROOT, "cross", cpu + ".ini")).read()
    flags = ast.literal_eval(re.search(r"^cpu = (\[.*\])", text, re.M).group(1))
    board = re.search(r"^posenc_board = '(.*)'", text, re.M).group(1)
    return flags, board


def programs():
    """(row key, variant, source stem) for every program, in table order."""
    out = []
    for label, stem, _ in FEATURES:
        for variant in ("posenc", "plain"):
            if stem == "empty" and variant == "posenc":
                continue
            src = "empty" if stem == "empty" else f"{stem}_{variant}"
            if os.path.exists(os.path.join(SRC, src + ".c")):
                out.append((label, "—" if stem == "empty" else variant, src))
    return out


def build_and_run(cpu, src, outdir):
    flags, board = cross_file(cpu)
    elf = os.path.join(outdir, f"{cpu}-{src}.elf")
    cmd = [CC, *flags, "-std=c99", "-Os", "-ffunction-sections", "-fdata-sections",
           "-ffp-contract=off", "-Wall", "-Wextra", "-I" + ROOT, "-I" + SRC,
           os.path.join(SRC, src + ".c"), os.path.join(SRC, "fp_start.c"),
           "-nostartfiles", "--specs=nosys.specs", "-Wl,--gc-sections",
           "-L" + os.path.join(ROOT, "firmware"), f"-T{board}.ld", "-lm", "-o", elf]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"{cpu} {src}: build failed\n{' '.join(cmd)}\n{r.stderr}")
    r = subprocess.run([SIZE, "-B", elf], capture_output=True, text=True, check=True)
    text, data, bss = (int(v) for v in r.stdout.splitlines()[1].split()[:3])
    r = subprocess.run([os.path.join(ROOT, "cross", "qemu-mps.sh"), board, elf],
                       capture_output=True, text=True, env={**os.environ, "POSENC_QEMU_TIMEOUT": "120"})
    m = re.search(r"footprint: stack (\d+)", r.stdout + r.stderr)   # semihosting: stderr
    if r.returncode or not m:
        raise RuntimeError(f"{cpu} {src}: run failed (status {r.returncode})\n{r.stdout}{r.stderr}")
    return {"text": text, "data+bss": data + bss, "stack": int(m.group(1))}


def sizes_from_header():
    text = open(os.path.join(SRC, "fp.h")).read()
    return {k: v for k, v in re.findall(r"^#define FP_(\w+) (\d+)", text, re.M)}


def compiler_version():
    first = subprocess.run([CC, "--version"], capture_output=True, text=True, check=True).stdout.splitlines()[0]
    newlib = ""
    r = subprocess.run([CC, "-dM", "-E", "-include", "newlib.h", "-x", "c", os.devnull],
                       capture_output=True, text=True)
    m = re.search(r'#define _NEWLIB_VERSION "([^"]+)"', r.stdout)
    if m:
        newlib = f", newlib {m.group(1)}"
    return first + newlib


def measure(jobs, outdir):
    os.makedirs(outdir, exist_ok=True)
    progs = programs()
    tasks = [(cpu, key, variant, src) for key, variant, src in progs for _, cpu in CPUS]
    # the slowest first (the self-test's qemu run), so that two workers finish together
    tasks.sort(key=lambda t: "selftest" not in t[3])
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futs = {pool.submit(build_and_run, cpu, src, outdir): (cpu, key, variant)
                for cpu, key, variant, src in tasks}
        for fut in concurrent.futures.as_completed(futs):
            results[futs[fut]] = fut.result()
    rows = []
    for key, variant, _ in progs:
        rows.append(((key, variant), [results[(cpu, key, variant)][f] for _, cpu in CPUS for f in FIGURES]))
    return rows


def columns():
    return [f"{name} {f}" for name, _ in CPUS for f in FIGURES]


def render(rows, compiler):
    sizes = sizes_from_header()
    what = {label: desc.format(**sizes) for label, _, desc in FEATURES}
    lines = [BEGIN,
             f"Bytes; `{compiler}`; `-Os -ffunction-sections -fdata-sections -Wl,--gc-sections`, "
             "whole programs (subtract the first row for a feature's own cost); data+bss excludes "
             "the caller's buffers; stack is the painted high-water mark under qemu-system-arm.",
             "",
             "| feature | variant | " + " | ".join(columns()) + " |",
             "| --- | --- | " + " | ".join("---:" for _ in columns()) + " |"]
    for (key, variant), figures in rows:
        label = f"{key} ({what[key]})" if what.get(key) else key
        lines.append(f"| {label} | {variant} | " + " | ".join(str(v) for v in figures) + " |")
    lines += ["", END]
    return "\n".join(lines)


def parse_readme(path):
    text = open(path, encoding="utf-8").read()
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{path}: no {BEGIN} ... {END} markers")
    block = text[text.index(BEGIN):text.index(END)]
    header, rows, caption = None, {}, block
    for line in block.splitlines():
        if not line.startswith("|") or line.startswith("| ---"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
            continue
        key = re.sub(r" \(.*\)$", "", cells[0])
        rows[(key, cells[1])] = dict(zip(header[2:], cells[2:]))
    return text, rows, caption


def check(path, rows, compiler):
    _, readme, caption = parse_readme(path)
    failures = []
    if compiler not in caption:
        print(f"note: {path}'s table was not made with {compiler}; figures may differ by compiler")
    for (key, variant), figures in rows:
        have = readme.get((key, variant))
        if have is None:
            failures.append(f"row missing: {key} / {variant}")
            continue
        for col, measured in zip(columns(), figures):
            try:
                listed = int(have[col])
            except (KeyError, ValueError):
                failures.append(f"{key} / {variant}: column {col} missing or not a number")
                continue
            if measured > listed * (1 + GROWTH) and measured - listed > SLACK:
                failures.append(f"{key} / {variant}, {col}: {measured} > {listed} + 10%")
            elif measured < listed * (1 - GROWTH) and listed - measured > SLACK:
                print(f"note: {key} / {variant}, {col}: {measured}, down from {listed}: update the table")
    for f in failures:
        print("FAIL " + f)
    if not failures:
        print(f"footprint: every figure within 10% of {os.path.relpath(path, ROOT)}'s table")
    if failures:
        print(f"{len(failures)} figure(s) grew by more than 10% or are missing: if that is intended, "
              f"run tools/footprint.py --update {os.path.relpath(path, ROOT)} and commit the table")
    return not failures


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--check", metavar="README", help="fail on a figure grown by more than 10%%")
    g.add_argument("--update", metavar="README", help="rewrite the table between the markers")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="parallel builds and runs (2)")
    ap.add_argument("--builddir", default=os.path.join(ROOT, "build-footprint"))
    args = ap.parse_args()
    t0 = time.monotonic()
    try:
        compiler = compiler_version()
        rows = measure(args.jobs, args.builddir)
    except (RuntimeError, OSError, subprocess.CalledProcessError) as e:
        print(f"footprint: {e}", file=sys.stderr)
        return 1
    table = render(rows, compiler)
    print(table, flush=True)
    print(f"({time.monotonic() - t0:.0f} s)", file=sys.stderr)
    if args.update:
        text, _, _ = parse_readme(args.update)
        text = text[:text.index(BEGIN)] + table + text[text.index(END) + len(END):]
        with open(args.update, "w", encoding="utf-8") as f:
            f.write(text)
    if args.check:
        return 0 if check(args.check, rows, compiler) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
