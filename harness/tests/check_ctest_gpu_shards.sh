#!/usr/bin/env bash
# CTest resource allocation for one-GPU shards: with ci/resources/gpus-2.json and -j 2, each shard runs on its own
# GPU id (which ci/gpu-shard makes the runtime's one visible device: check_gpu_shard_env.sh), the shards cover the
# suite once, and the merge passes.
# Without a resource spec the shards refuse to run rather than share a GPU.
# Usage: check_ctest_gpu_shards.sh MOE_ROOT MOE_HARNESS WORK_DIR
set -euo pipefail
root=$1 exe=$2 work=$3
rm -rf "$work"
cmake -S "$root/ci/shards" -B "$work" -DMOE_ROOT="$root" -DMOE_HARNESS="$exe" -DSHARDS=2 -DSUITE=smoke \
      -DKERNEL=host-contract "-DFILTERS=*decode*" -DOUT="$work/out" >/dev/null
ctest --test-dir "$work" -L gpu-shards --resource-spec-file "$root/ci/resources/gpus-2.json" -j 2 --output-on-failure | tail -5
a=$(cat "$work/out/0/shard.txt") b=$(cat "$work/out/1/shard.txt")
echo "$a / $b"
gpu_of() { sed -n 's|^shard [0-9]*/[0-9]* on GPU \([0-9]*\) .*|\1|p' <<<"$1"; }
[[ "$a" == "shard 0/2 on GPU "* && "$b" == "shard 1/2 on GPU "* && -n "$(gpu_of "$a")" && "$(gpu_of "$a")" != "$(gpu_of "$b")" ]] \
  || { echo "FAIL: shards did not get distinct GPUs"; exit 1; }
python3 - "$work/out/merged.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ids = [c["id"] for c in r["cases"]]
assert len(ids) == len(set(ids)) and len(ids) > 10 and all("decode" in i for i in ids), len(ids)
print(f"merged: {len(ids)} cases, each once")
PY
# Without the allocation, a shard refuses (exit 2) instead of running on whatever GPU is visible.
set +e
out=$(env -u CTEST_RESOURCE_GROUP_0_GPUS bash "$root/ci/gpu-shard" "$exe" 0 2 "$work/noalloc" -- --suite smoke --kernel host 2>&1)
rc=$?
set -e
[[ $rc -eq 2 && "$out" == *"no GPU allocated by CTest"* ]] || { echo "FAIL: unallocated shard gave $rc: $out"; exit 1; }
echo "ctest gpu shards ok"
