#!/usr/bin/env bash
# Suite loading, compare and merge at scale, two builds back to back in one call (issue 23 item 4): `list` of
# generated suites of 20k, 100k and 300k cases (one sweep entry, and as many flat entries), then `compare` of two
# synthetic reports and `merge` of two shards at 20k and 100k cases. Prints wall, user seconds and peak RSS (GNU time).
#
# Usage: ci/bench/scale.sh BASE_MOE_HARNESS NEW_MOE_HARNESS WORK_DIR [SIZES...]
#   SIZES  list sizes (default 20000 100000 300000); compare and merge run at the sizes up to 100000
# Needs python3 with numpy (ci/bench/synthetic_reports.py); inputs are generated once into WORK_DIR and reused.
set -euo pipefail
base=$(realpath "$1") new=$(realpath "$2") work=$3; shift 3
sizes=("$@"); ((${#sizes[@]})) || sizes=(20000 100000 300000)
here=$(dirname "$(realpath "$0")")
py=${PYTHON:-python3}
mkdir -p "$work"
timed() {  # label command...
  local label=$1; shift
  /usr/bin/time -f "$label: %e s wall, %U s user, %M KB peak" "$@" >/dev/null 2>"$work/time.err" || true
  tail -n 1 "$work/time.err"
}
for n in "${sizes[@]}"; do
  for form in sweep flat; do
    f=$work/$form-$n.yaml
    [[ -f $f ]] || "$py" "$here/sweep_suite.py" "$n" "$f" "$form"
    for tree in base new; do
      bin=$([ $tree = base ] && echo "$base" || echo "$new")
      timed "list $form $n $tree" "$bin" list --suite "$f"
    done
  done
done
for n in "${sizes[@]}"; do
  ((n <= 100000)) || continue
  [[ -f $work/shard-$n-1.json ]] || "$py" "$here/synthetic_reports.py" "$n" "$work"
  for tree in base new; do
    bin=$([ $tree = base ] && echo "$base" || echo "$new")
    timed "compare $n $tree" "$bin" compare "$work/report-$n.json" "$work/other-$n.json" --json "$work/cmp-$tree.json"
    timed "merge $n $tree" "$bin" merge "$work/shard-$n-0.json" "$work/shard-$n-1.json" --out "$work/merged-$tree.json"
  done
  cmp -s "$work/merged-base.json" "$work/merged-new.json" && echo "merge $n: base and new outputs identical" ||
    echo "merge $n: base and new outputs DIFFER"
  cmp -s "$work/cmp-base.json" "$work/cmp-new.json" && echo "compare $n: base and new findings identical" ||
    echo "compare $n: base and new findings DIFFER"
done
