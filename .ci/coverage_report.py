#!/usr/bin/env python3
"""Summarises a gcovr JSON report (gcovr --json): line, branch and function coverage per file and
in all, then the largest uncovered regions, i.e. runs of uncovered lines (lines that are no code,
such as comments and lone braces, neither break nor lengthen a run), with the function each
starts in. A line of `if (...) return POSENC_ERR_...;` counts as covered once its condition was
evaluated, so it lists as well the lines that return an error status and have a branch no test
took: mostly error returns that no test reaches (read from the sources, paths relative to the
current directory, as gcovr -r . writes them).

usage: coverage_report.py GCOVR_JSON [--add GCOVR_JSON]... [--regions N] [--min-lines PCT]
       --add JSON       another report whose lines count too (line by line: gcovr 5.2 cannot merge
                        two objects that define a function of one name at different lines, as an
                        instance of posenc_simd.h at another width does; its functions are listed
                        beside the first report's)
       --regions N      how many regions to list (default 20)
       --min-lines PCT  exit 1 if line coverage in all is below PCT
"""
import argparse
import json
import sys


def pct(hit, total):
    return f"{100.0 * hit / total:5.1f}% ({hit}/{total})" if total else "  n/a"


def file_figures(f):
    code = [ln for ln in f["lines"] if not ln.get("gcovr/noncode") and not ln.get("gcovr/excluded")]
    lines = (sum(1 for ln in code if ln["count"] > 0), len(code))
    branches = [b for ln in code for b in ln["branches"]]
    branches = (sum(1 for b in branches if b["count"] > 0), len(branches))
    funcs = (sum(1 for fn in f["functions"] if fn["execution_count"] > 0), len(f["functions"]))
    return lines, branches, funcs


def merge_lines(files, extra):
    """files (a report's) with extra's counts added line by line, file by file."""
    by_name = {f["file"]: f for f in files}
    for g in extra:
        f = by_name.setdefault(g["file"], {"file": g["file"], "lines": [], "functions": []})
        lines = {ln["line_number"]: ln for ln in f["lines"]}
        for ln in g["lines"]:
            mine = lines.get(ln["line_number"])
            if mine is None:
                f["lines"].append(ln)
            elif not ln.get("gcovr/noncode"):
                mine["count"] += ln["count"]
                mine.pop("gcovr/noncode", None)
        known = {(fn["name"], fn["lineno"]) for fn in f["functions"]}
        f["functions"] += [fn for fn in g["functions"] if (fn["name"], fn["lineno"]) not in known]
    return sorted(by_name.values(), key=lambda f: f["file"])


def enclosing_function(f):
    starts = sorted((fn["lineno"], fn["name"]) for fn in f["functions"])

    def enclosing(line):
        name = "(file scope)"
        for start, fname in starts:
            if start > line:
                break
            name = fname
        return name
    return enclosing


def regions(f):
    """(uncovered code lines, first line, last line, enclosing function) for each run."""
    enclosing = enclosing_function(f)
    out, run = [], None
    for ln in sorted(f["lines"], key=lambda x: x["line_number"]):
        if ln.get("gcovr/noncode") or ln.get("gcovr/excluded"):
            continue
        if ln["count"] == 0:
            if run is None:
                run = [0, ln["line_number"], ln["line_number"]]
            run[0] += 1
            run[2] = ln["line_number"]
        elif run is not None:
            out.append(run)
            run = None
    if run is not None:
        out.append(run)
    return [(n, a, b, enclosing(a)) for n, a, b in out]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--add", action="append", default=[])
    ap.add_argument("--regions", type=int, default=20)
    ap.add_argument("--min-lines", type=float)
    args = ap.parse_args()
    files = sorted(json.load(open(args.json))["files"], key=lambda f: f["file"])
    for extra in args.add:
        files = merge_lines(files, json.load(open(extra))["files"])
    if not files:
        sys.exit("no covered files in the report")

    width = max(len(f["file"]) for f in files + [{"file": "all"}])
    total = [[0, 0], [0, 0], [0, 0]]
    print(f"{'file':<{width}}  {'lines':<22} {'branches':<22} functions")
    for f in files:
        figs = file_figures(f)
        for t, (hit, n) in zip(total, figs):
            t[0] += hit
            t[1] += n
        print(f"{f['file']:<{width}}  " + " ".join(f"{pct(*x):<22}" for x in figs).rstrip())
    print(f"{'all':<{width}}  " + " ".join(f"{pct(*x):<22}" for x in total).rstrip())

    found = sorted(((n, f["file"], a, b, fn) for f in files for n, a, b, fn in regions(f)),
                   key=lambda r: (-r[0], r[1], r[2]))
    print(f"\nlargest uncovered regions ({len(found)} in all, {args.regions} at most listed):")
    for n, name, a, b, fn in found[:args.regions]:
        where = f"{name}:{a}" + (f"-{b}" if b != a else "")
        print(f"  {n:3d} line{'s' if n != 1 else ' '}  {where:<24} {fn}")

    untaken = []
    for f in files:
        enclosing = enclosing_function(f)
        try:
            src = open(f["file"], encoding="utf-8", errors="replace").read().split("\n")
        except OSError:
            continue
        for ln in f["lines"]:
            n, text = ln["line_number"], src[ln["line_number"] - 1] if ln["line_number"] <= len(src) else ""
            if ln["count"] > 0 and "return POSENC_ERR" in text and any(b["count"] == 0 for b in ln["branches"]):
                untaken.append((f["file"], n, enclosing(n), text.strip()))
    print(f"\nerror returns on lines with a branch never taken ({len(untaken)}):")
    for name, n, fn, text in sorted(untaken):
        print(f"  {name}:{n:<5} {fn:<28} {text[:100]}")

    if args.min_lines is not None:
        hit, n = total[0]
        if n == 0 or 100.0 * hit / n < args.min_lines:
            print(f"\nline coverage {100.0 * hit / max(n, 1):.1f}% is below the floor {args.min_lines}%")
            sys.exit(1)
        print(f"\nline coverage {100.0 * hit / n:.1f}% is at or above the floor {args.min_lines}%")


if __name__ == "__main__":
    main()
