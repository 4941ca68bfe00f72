#!/usr/bin/env bash
# ci/nightly end to end on the CPU (host kernel standing in for the GPU kernel, two "GPUs" from CTest's resource
# allocation): shards merged, HTML written, exit 0 against an identical baseline; exit 1 and a drift report against
# a baseline in which a case had dispatched another variant; exit 4 when the shards judged nothing (every case lists
# only the GPU kernel), although each shard alone exits 0.
# Usage: check_ci_nightly.sh MOE_ROOT WORK_DIR
set -uo pipefail
root=$1 work=$2
rm -rf "$work"
cd "$root"
run() { bash ci/nightly --preset cpu --gpus 2 --suite smoke --kernel host-contract --filter '*T3*' --out "$@" >/dev/null 2>&1; }
run "$work/a"; a=$?
[[ $a -eq 0 && -f "$work/a/merged.json" && -f "$work/a/report.html" && -f "$work/a/shards/1/shard.txt" ]] \
  || { echo "FAIL: first nightly gave $a"; ls "$work/a"; exit 1; }
run "$work/b" --baseline "$work/a/merged.json"; b=$?
[[ $b -eq 0 ]] && grep -q "No drift" "$work/b/drift.md" || { echo "FAIL: identical baseline gave $b"; exit 1; }
python3 - "$work/a/merged.json" "$work/better.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
c = r["cases"][0]
c["variant"] = "host/an-older-path"  # the baseline dispatched another variant for this case
json.dump(r, open(sys.argv[2], "w"))
PY
run "$work/c" --baseline "$work/better.json"; c=$?
[[ $c -eq 1 ]] && grep -q "variant" "$work/c/drift.md" && grep -q 'id="drift"' "$work/c/report.html" \
  || { echo "FAIL: drifted baseline gave $c"; cat "$work/c/drift.md"; exit 1; }
printf 'suite: gpu-only\ndefaults: {hidden: 256, inter: 256, experts: 16, topk: 4}\ncases:\n  - sweep: {tokens: [2, 3, 5]}\n    case: {kernels: [gpu-fused-moe]}\n' \
  >"$work/gpu-only.yaml"
bash ci/nightly --preset cpu --gpus 2 --suite "$work/gpu-only.yaml" --kernel host-contract --out "$work/e" >"$work/e.log" 2>&1; e=$?
[[ $e -eq 4 ]] && grep -q "nothing checked" "$work/e.log" || { echo "FAIL: a nightly that judged nothing gave $e"; cat "$work/e.log"; exit 1; }
bash ci/nightly --preset cpu --suite smoke >/dev/null 2>&1; d=$?
[[ $d -eq 2 ]] || { echo "FAIL: missing --gpus gave $d"; exit 1; }
echo "ci/nightly ok: 0 / 0 (no drift) / 1 (drift) / 4 (nothing judged) / 2 (usage)"
