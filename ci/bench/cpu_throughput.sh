#!/usr/bin/env bash
# The host nightly and the cpu ctest of two builds (a base and a new tree), back to back in one call, so both see
# the same machine and much the same load: base nightly, new nightly, base ctest, new ctest. Prints wall, user and
# system seconds per step (GNU time) and writes each step's output under OUT_DIR.
#
# Usage: ci/bench/cpu_throughput.sh BASE_SRC NEW_SRC OUT_DIR [JOBS]
#   BASE_SRC, NEW_SRC  source trees, each built with the cpu preset (build/cpu)
#   JOBS               ctest -j (default 2)
set -euo pipefail
base=$(realpath "$1") new=$(realpath "$2") out=$3 jobs=${4:-2}
mkdir -p "$out"
out=$(realpath "$out")
step() {  # name dir command...
  local name=$1 dir=$2; shift 2
  echo "== $name ($(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg))"
  (cd "$dir" && /usr/bin/time -f "$name: %e s wall, %U s user, %S s sys, %M KB peak" "$@") >"$out/$name.log" 2>&1 || true
  tail -n 1 "$out/$name.log"
}
for tree in base new; do
  src=$([ $tree = base ] && echo "$base" || echo "$new")
  rm -rf "$out/nightly-$tree"
  step "nightly-$tree" "$src" build/cpu/harness/moe-harness run --suite nightly --kernel host --report-dir "$out/nightly-$tree"
done
for tree in base new; do
  src=$([ $tree = base ] && echo "$base" || echo "$new")
  step "ctest-$tree" "$src" ctest --preset cpu -j"$jobs"
  grep -E "tests passed|tests failed" "$out/ctest-$tree.log" || true
done
