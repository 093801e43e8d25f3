#!/usr/bin/env python3
"""Test of bench/render.py (a meson test): renders two sample files and checks the table.

    python3 test_render.py RENDER_PY A.jsonl B.jsonl [--png]

The samples are real --smoke outputs (x86-64 native, aarch64 under qemu), cut to a few cases.
Every expectation is computed here from the JSON itself, not copied from a rendering.
"""
import json
import os
import subprocess
import sys
import tempfile

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def render(render_py, *args):
    p = subprocess.run([sys.executable, render_py, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def table(md):
    """The markdown table: (header cells, [row cells])."""
    lines = [l for l in md.splitlines() if l.startswith("|")]
    split = lambda l: [c.strip() for c in l.strip("|").split("|")]
    return split(lines[0]), [split(l) for l in lines[2:]]


def read(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(l) for l in f if l.strip()]


def check(cond, what):
    if not cond:
        raise SystemExit(f"FAIL: {what}")
    print(f"ok: {what}")


def main():
    render_py, a_path, b_path = sys.argv[1:4]
    want_png = "--png" in sys.argv[4:]
    a, b = read(a_path), read(b_path)
    la, lb = a[0]["machine"]["label"], b[0]["machine"]["label"]
    check(la != lb, "the samples are two machines")

    rc, out, err = render(render_py, a_path, b_path)
    check(rc == 2 and "smoke" in err and out == "", "smoke results are refused without --allow-smoke")

    with tempfile.TemporaryDirectory() as tmp:
        md_path = os.path.join(tmp, "t.md")
        rc, _, err = render(render_py, "--allow-smoke", "-o", md_path, a_path, b_path)
        check(rc == 0, f"--allow-smoke renders ({err.strip()})")
        with open(md_path, encoding="utf-8") as f:
            md = f.read()
        head, rows = table(md)
        cols = lambda recs, letter: [f"{letter} {isa} (smoke)" for isa in recs[0]["machine"]["backends"]]
        want = (["kernel", "size", "elem"] + cols(a, "A") + ["A best/scalar"] + cols(b, "B") +
                ["B best/scalar", "B/A"])
        check(head == want, f"columns: machine x posenc backend, ratios: {head}")
        check(f"**A**: {la}" in md and f"**B**: {lb}" in md and "smoke run: timings meaningless" in md,
              "legend names both machines and marks the smoke runs")

        cases = []
        for r in a + b:
            if r["impl"] == "posenc" and r["case"] not in cases:
                cases.append(r["case"])
        got = [f"{r[0]}/" + r[1].replace(", ", ",") for r in rows]
        check(got == cases, f"one row per case, in the files' order ({len(cases)} rows)")

        # a cell, and the cross-machine ratio, recomputed from the JSON
        def best(recs, case):
            return min(r["ns_per_elem"] for r in recs if r["case"] == case and r["impl"] == "posenc")
        i = cases.index(next(r["case"] for r in a if r["bench"] == "table"))
        scalar = next(r for r in a if r["case"] == cases[i] and r["backend"] == "scalar")
        check(rows[i][head.index("A scalar (smoke)")] == f"{scalar['ns_per_elem']:.3g}",
              "a cell is that backend's ns per element")
        ratio = float(rows[i][head.index("B/A")].rstrip("×"))
        expect = best(a, cases[i]) / best(b, cases[i])
        check(abs(ratio / expect - 1) < 0.01, f"B/A = A's best time / B's ({ratio} vs {expect:.4g})")

        # the same results claimed as real timings: rendered without marks
        clean = []
        for path, recs in (("a", a), ("b", b)):
            clean.append(os.path.join(tmp, path + ".jsonl"))
            with open(clean[-1], "w", encoding="utf-8") as f:
                f.writelines(json.dumps(dict(r, smoke=False)) + "\n" for r in recs)
        rc, out, _ = render(render_py, *clean)
        check(rc == 0 and "smoke" not in out, "timing results render without --allow-smoke, unmarked")

        rc, out, _ = render(render_py, "--all", *clean)
        head_all, _ = table(out)
        check(rc == 0 and "A glibc_sincosf" in head_all and "B store_loop" in head_all,
              "--all adds the peers and floors")
        rc, out, _ = render(render_py, "--match", "^table/", *clean)
        check(rc == 0 and len(table(out)[1]) == 1, "--match keeps the matching cases")

        if want_png:
            png = os.path.join(tmp, "t.png")
            rc, _, err = render(render_py, "--allow-smoke", "-o", md_path, "--png", png, a_path, b_path)
            with open(png, "rb") as f:
                data = f.read()
            check(rc == 0 and len(data) > 1000 and data.startswith(PNG_SIGNATURE),
                  f"PNG written ({len(data)} bytes) {err.strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
