#!/usr/bin/env python3
"""Render posenc bench results (JSON Lines, bench/bench_json.h) from several machines side by side.

    python3 bench/render.py A.jsonl B.jsonl ... [-o table.md] [--png chart.png]
                            [--all] [--match REGEX] [--allow-smoke]

One markdown table: a row per case (bench, kernel, size), per machine a column per backend
(ns per element; posenc's backends, or with --all also the peers, loops and floors each bench
runs beside them), that machine's best posenc backend against its posenc scalar, and, with two
machines or more, each machine's best posenc time against the first machine's. The PNG shows
the same times as bars, on a log scale.

Results from --smoke runs (tiny sizes, one repetition, often under an emulator) carry no timing
information: they are refused unless --allow-smoke is given, and then marked "smoke" wherever
they appear. A machine is its machine.label; a result is (label, key); a repeated one keeps the
last line read.
"""
import argparse
import json
import math
import re
import sys

IMPL_ORDER = {"posenc": 0, "peer": 1, "loop": 2, "floor": 3}


def load(paths):
    """(machines, results): machines in first-seen order, label -> machine object;
    results: (label, key) -> record."""
    machines, results = {}, {}
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    r = json.loads(line)
                except json.JSONDecodeError as e:
                    raise SystemExit(f"{path}:{n}: not JSON: {e}")
                if r.get("schema") != 1:
                    raise SystemExit(f"{path}:{n}: unknown schema {r.get('schema')!r}")
                label = r["machine"]["label"]
                machines.setdefault(label, r["machine"])
                results[(label, r["key"])] = r
    return machines, results


def fmt(v):
    """Three significant digits, no exponent for the usual range."""
    if v is None or not math.isfinite(v):
        return ""
    if v >= 100:
        return f"{v:.0f}"
    return f"{v:.3g}"


def size_text(size):
    return ", ".join(f"{k}={v}" for k, v in size.items())


def build(machines, results, show_all, match):
    """The table as (columns, rows): columns are (label, backend), machine by machine; rows are
    (a record of the case, {(label, backend): record})."""
    cases, cells = {}, {}
    for (label, _), r in results.items():
        if not show_all and r["impl"] != "posenc":
            continue
        if match and not re.search(match, r["case"]):
            continue
        cases.setdefault(r["case"], r)
        cells.setdefault(r["case"], {})[(label, r["backend"])] = r
    backends = {label: {} for label in machines}
    for row in cells.values():
        for (label, backend), r in row.items():
            isas = machines[label].get("backends", [])  # posenc's, in dispatch order
            rank = isas.index(backend) if r["impl"] == "posenc" and backend in isas else len(isas)
            backends[label][backend] = (IMPL_ORDER.get(r["impl"], 9), rank, backend)
    columns = []
    for label in machines:
        for backend in sorted(backends[label], key=lambda b: backends[label][b]):
            columns.append((label, backend))
    return columns, [(cases[c], cells[c]) for c in cases]  # rows in the order the benches wrote them


def best_posenc(row, label):
    """(ns, record) of the machine's fastest posenc backend on this row, or (None, None)."""
    best = None
    for (lab, _), r in row.items():
        if lab == label and r["impl"] == "posenc" and r["ns_per_elem"] is not None:
            if best is None or r["ns_per_elem"] < best["ns_per_elem"]:
                best = r
    return (best["ns_per_elem"], best) if best else (None, None)


def markdown(machines, columns, rows):
    labels = list(machines)
    letter = {label: chr(ord("A") + i) if i < 26 else f"M{i}" for i, label in enumerate(labels)}
    smoke = {label: any(r["smoke"] for _, row in rows for (lab, _), r in row.items() if lab == label)
             for label in labels}
    out = ["Machines:", ""]
    for label in labels:
        m = machines[label]
        out.append(f"- **{letter[label]}**: {label}; {m.get('arch', '?')}, {m.get('compiler', '?')}, "
                   f"{m.get('build', '?')} `{m.get('flags', '')}`, posenc {m.get('posenc', '?')}, "
                   f"{m.get('date', '?')}" +
                   (" — **smoke run: timings meaningless**" if smoke[label] else ""))
    out += ["", "Times are ns per element (elem: what one element is); `best/scalar` is the "
            "machine's fastest posenc backend against its posenc scalar (× faster); `X/A` is "
            "machine X's fastest posenc time against machine A's (× faster).", ""]
    head = ["kernel", "size", "elem"]
    for label in labels:
        mark = " (smoke)" if smoke[label] else ""
        head += [f"{letter[label]} {b}{mark}" for lab, b in columns if lab == label]
        head.append(f"{letter[label]} best/scalar")
    head += [f"{letter[label]}/{letter[labels[0]]}" for label in labels[1:]]
    out.append("| " + " | ".join(head) + " |")
    out.append("| " + " | ".join(["---"] * 3 + ["---:"] * (len(head) - 3)) + " |")
    for case, row in rows:
        cells = [f"{case['bench']}/{case['kernel']}", size_text(case["size"]), case["elem"]]
        for label in labels:
            cells += [fmt(row[(label, b)]["ns_per_elem"]) if (label, b) in row else ""
                      for lab, b in columns if lab == label]
            ns, best = best_posenc(row, label)
            speed = best["ratio_vs"].get("scalar") if best else None
            cells.append(f"{fmt(speed)}× ({best['backend']})" if speed else "")
        base, _ = best_posenc(row, labels[0])
        for label in labels[1:]:
            ns, _ = best_posenc(row, label)
            cells.append(f"{fmt(base / ns)}×" if base and ns else "")
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def chart(machines, columns, rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = list(machines)
    letter = {label: chr(ord("A") + i) if i < 26 else f"M{i}" for i, label in enumerate(labels)}
    n = len(columns)
    height = 0.8 / max(n, 1)
    fig, ax = plt.subplots(figsize=(10, 1.0 + 0.22 * len(rows) * max(n, 1) ** 0.5 + 0.3 * n))
    cmap = plt.get_cmap("tab20")
    for j, (label, backend) in enumerate(columns):
        ys, xs = [], []
        for i, (_, row) in enumerate(rows):
            r = row.get((label, backend))
            if r and r["ns_per_elem"]:
                ys.append(i + (j - (n - 1) / 2) * height)
                xs.append(r["ns_per_elem"])
        smoke = any(row.get((label, backend), {}).get("smoke") for _, row in rows)
        ax.barh(ys, xs, height=height, color=cmap(j % 20),
                label=f"{letter[label]} {backend}" + (" (smoke)" if smoke else ""))
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"{c['bench']}/{c['kernel']} {size_text(c['size'])}" for c, _ in rows],
                       fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("ns per element (log scale; shorter is faster)")
    smoke = any(r["smoke"] for _, row in rows for r in row.values())
    ax.set_title(("SMOKE RESULTS, TIMINGS MEANINGLESS\n" if smoke else "") + "posenc: " +
                 "; ".join(f"{letter[l]} = {l}" for l in labels), fontsize=8)
    ax.legend(fontsize=7, loc="best")
    ax.grid(axis="x", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", help="JSON Lines files written by the benches' --json")
    ap.add_argument("-o", "--output", help="markdown file (default: stdout)")
    ap.add_argument("--png", help="also draw the chart into this PNG (needs matplotlib)")
    ap.add_argument("--all", action="store_true",
                    help="also the peers, plain loops and memory floors, not only posenc's backends")
    ap.add_argument("--match", metavar="REGEX", help="only the cases (bench/kernel/size) matching")
    ap.add_argument("--allow-smoke", action="store_true",
                    help="accept --smoke results (marked as such; their timings mean nothing)")
    a = ap.parse_args(argv)

    machines, results = load(a.files)
    smoke = sorted({label for (label, _), r in results.items() if r["smoke"]})
    if smoke and not a.allow_smoke:
        sys.stderr.write("render.py: smoke results (timings meaningless) from: " + ", ".join(smoke) +
                         "\n  run the benches without --smoke, or pass --allow-smoke to render "
                         "them anyway (marked)\n")
        return 2
    columns, rows = build(machines, results, a.all, a.match)
    if not rows:
        sys.stderr.write("render.py: no results to show\n")
        return 1
    text = markdown(machines, columns, rows)
    if a.output:
        with open(a.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    if a.png:
        chart(machines, columns, rows, a.png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
