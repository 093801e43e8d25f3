#!/usr/bin/env bash
# CI stage: the benches' smoke runs as JSON, natively and on aarch64 under qemu, rendered side by
# side by bench/render.py (markdown and PNG), and render.py's own test with the PNG part.
#   bash .ci/stage-bench-smoke.sh RESULTS_FILE
# Needs the native build `build` and the cross build `build-aarch64-linux-gnu` (.ci/run makes both
# before this stage; BENCH_NATIVE and BENCH_AARCH64 name others). Runs the bench binaries directly
# (meson test would replace those builds' test logs). Leaves its JSON, markdown and PNG in
# <native build>/bench-smoke/. About 15 s.
set -euo pipefail
cd "$(dirname "$0")/.."
results=$(realpath "${1:?usage: stage-bench-smoke.sh RESULTS_FILE}")
native=${BENCH_NATIVE:-build}
aarch64=${BENCH_AARCH64:-build-aarch64-linux-gnu}
out=$native/bench-smoke
. .ci/lib.sh
py=/usr/bin/python3  # Debian's, with python3-matplotlib (not a pyenv or venv one on PATH)

stage_packages python3 python3-matplotlib qemu-user
for b in "$native" "$aarch64"; do
  [ -x "$b/bench/bench_table" ] || { echo "stage-bench-smoke: $b/bench is not built"; exit 1; }
done
rm -rf "$out" && mkdir -p "$out"

# Every bench --smoke, JSON per machine: exit status 0 means every backend's bits matched.
smoke() { # NAME BUILDDIR [WRAPPER...]
  local name=$1 dir=$2 b
  shift 2
  for b in table rope embed bias; do
    "$@" "$dir/bench/bench_$b" --smoke --label "$name" --json "$out/$name-$b.jsonl" >"$out/$name-$b.txt" ||
      { echo "bench_$b --smoke failed:"; tail -20 "$out/$name-$b.txt"; return 1; }
  done
  cat "$out/$name"-{table,rope,embed,bias}.jsonl >"$out/$name.jsonl"
}
check bench-smoke-native smoke native "$native"
check bench-smoke-aarch64 smoke aarch64 "$aarch64" qemu-aarch64 -L /usr/aarch64-linux-gnu

# The JSON: every backend each machine has, in every bench; then the comparison, md and PNG.
check bench-smoke-json "$py" - "$out/native.jsonl" "$out/aarch64.jsonl" <<'PY'
import json, sys
for path in sys.argv[1:]:
    recs = [json.loads(l) for l in open(path)]
    assert recs and all(r["smoke"] is True for r in recs), path
    isas = recs[0]["machine"]["backends"]
    for bench in ("table", "rope", "embed", "bias"):
        got = {r["backend"] for r in recs if r["bench"] == bench and r["impl"] == "posenc"}
        assert got == set(isas), (path, bench, got, isas)
    keys = [r["key"] for r in recs]
    assert len(keys) == len(set(keys)), (path, "duplicate keys")
    print(path, len(recs), "results, backends", isas)
assert "neon" in json.loads(open(sys.argv[2]).readline())["machine"]["backends"]
PY
render_checked() { # (set -e does not hold inside `if`: every step is chained)
  ! "$py" bench/render.py "$out/native.jsonl" "$out/aarch64.jsonl" &&  # smoke refused
  "$py" bench/render.py --allow-smoke -o "$out/compare.md" --png "$out/compare.png" \
    "$out/native.jsonl" "$out/aarch64.jsonl" &&
  grep -q '| kernel | size | elem | A scalar (smoke) |.* B neon (smoke) | B best/scalar | B/A |' "$out/compare.md" &&
  grep -q '^| rope/rope_prefill_neox_f32 | tokens=24, heads=32, d=128 | element |' "$out/compare.md" &&
  [ "$(head -c 8 "$out/compare.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]
}
check bench-render-compare render_checked
check bench-render-test "$py" bench/test_render.py bench/render.py bench/samples/x86-64-avx2.jsonl \
  bench/samples/aarch64-neon.jsonl --png
