#!/usr/bin/env bash
# The environment ci/gpu-shard gives a shard, on CUDA and ROCm hosts, read back from a stand-in harness that prints
# it. The expected values are the runtimes' rules: CUDA counts CUDA_VISIBLE_DEVICES over the host's GPUs; on ROCm,
# ROCR_VISIBLE_DEVICES selects among the host's GPUs and HIP_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES (HIP's alias of
# it) and GPU_DEVICE_ORDINAL are indices among what ROCr left visible, so a shard of an 8-GPU host given GPU 5 needs
# ROCR_VISIBLE_DEVICES=5 and none of the others (HIP_VISIBLE_DEVICES=5 there would leave it no GPU). An inherited
# list is the job's GPUs: CTest's id is a position in it.
# Usage: check_gpu_shard_env.sh MOE_ROOT WORK_DIR
set -uo pipefail
root=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
fake=$work/fake-harness
cat >"$fake" <<'SH'
#!/bin/sh
for v in ROCR_VISIBLE_DEVICES HIP_VISIBLE_DEVICES CUDA_VISIBLE_DEVICES GPU_DEVICE_ORDINAL; do
  eval "set_=\${$v+set}"; eval "val=\${$v-}"
  if [ -n "$set_" ]; then echo "$v=$val"; else echo "$v unset"; fi
done
echo "shards $GTEST_SHARD_INDEX/$GTEST_TOTAL_SHARDS"
echo "args $*"
SH
chmod +x "$fake"
fails=0
# shard GPU_ID ENV... : runs shard 3 of 8 with CTest's allocation of GPU_ID and ENV; sets rc and out.
shard() {
  local gpu=$1
  shift
  out=$(env -u ROCR_VISIBLE_DEVICES -u HIP_VISIBLE_DEVICES -u CUDA_VISIBLE_DEVICES -u GPU_DEVICE_ORDINAL \
            CTEST_RESOURCE_GROUP_0_GPUS="id:$gpu,slots:1" "$@" \
            bash "$root/ci/gpu-shard" "$fake" 3 8 "$work/s" -- --suite nightly --kernel gpu 2>&1)
  rc=$?
}
# expect NAME LINE... : every LINE is in the child's output, and the shard ran.
expect() {
  local name=$1 l
  shift
  [[ $rc -eq 0 ]] || { echo "FAIL: $name: exit $rc: $out"; fails=$((fails + 1)); return; }
  for l in "$@" "shards 3/8" "args run --report-dir $work/s --suite nightly --kernel gpu"; do
    grep -qxF -- "$l" <<<"$out" || { echo "FAIL: $name: no '$l' in:"; echo "$out"; fails=$((fails + 1)); return; }
  done
}
refused() {
  local name=$1 needle=$2
  [[ $rc -eq 2 && $out == *"$needle"* ]] || { echo "FAIL: $name: exit $rc (2 expected), '$needle' not in: $out"; fails=$((fails + 1)); }
}
unset_others="HIP_VISIBLE_DEVICES unset|CUDA_VISIBLE_DEVICES unset|GPU_DEVICE_ORDINAL unset"
IFS='|' read -ra rocm_only <<<"$unset_others"

shard 5 MOE_GPU_PLATFORM=rocm
expect "ROCm, GPU 5 of the host" "ROCR_VISIBLE_DEVICES=5" "${rocm_only[@]}"
shard 0 MOE_GPU_PLATFORM=rocm
expect "ROCm, GPU 0 of the host" "ROCR_VISIBLE_DEVICES=0" "${rocm_only[@]}"
shard 5 MOE_GPU_PLATFORM=rocm HIP_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
expect "ROCm, runner exports every HIP index" "ROCR_VISIBLE_DEVICES=5" "${rocm_only[@]}"
shard 1 MOE_GPU_PLATFORM=rocm ROCR_VISIBLE_DEVICES=4,5,6,7
expect "ROCm, job given GPUs 4-7 by ROCR_VISIBLE_DEVICES" "ROCR_VISIBLE_DEVICES=5" "${rocm_only[@]}"
shard 1 MOE_GPU_PLATFORM=rocm ROCR_VISIBLE_DEVICES=GPU-aa11,GPU-bb22
expect "ROCm, job given GPUs by UUID" "ROCR_VISIBLE_DEVICES=GPU-bb22" "${rocm_only[@]}"
shard 1 MOE_GPU_PLATFORM=rocm ROCR_VISIBLE_DEVICES=4,5,6,7 HIP_VISIBLE_DEVICES=2,3
expect "ROCm, HIP indices within ROCr's list (4,5,6,7)[(2,3)[1]]" "ROCR_VISIBLE_DEVICES=7" "${rocm_only[@]}"
shard 4 MOE_GPU_PLATFORM=rocm ROCR_VISIBLE_DEVICES=4,5,6,7
refused "ROCm, id past the job's GPUs" "leaves this job 4 GPU(s)"

shard 5 MOE_GPU_PLATFORM=cuda
expect "CUDA, GPU 5 of the host" "CUDA_VISIBLE_DEVICES=5" "ROCR_VISIBLE_DEVICES unset" "HIP_VISIBLE_DEVICES unset"
shard 1 MOE_GPU_PLATFORM=cuda CUDA_VISIBLE_DEVICES=2,3
expect "CUDA, job given GPUs 2 and 3" "CUDA_VISIBLE_DEVICES=3"
shard 1 MOE_GPU_PLATFORM=cuda CUDA_VISIBLE_DEVICES=GPU-0a,GPU-1b
expect "CUDA, job given GPUs by UUID" "CUDA_VISIBLE_DEVICES=GPU-1b"
shard 2 MOE_GPU_PLATFORM=cuda CUDA_VISIBLE_DEVICES=2,3
refused "CUDA, id past the job's GPUs" "leaves this job 2 GPU(s)"

shard 1 MOE_GPU_PLATFORM=none
expect "no GPU driver" "ROCR_VISIBLE_DEVICES unset" "CUDA_VISIBLE_DEVICES unset" "HIP_VISIBLE_DEVICES unset"
shard 1 MOE_GPU_PLATFORM=opencl
refused "unknown platform" "is not one of rocm, cuda, none"
shard "x" MOE_GPU_PLATFORM=cuda
refused "unreadable allocation" "cannot read a GPU id"
out=$(env -u CTEST_RESOURCE_GROUP_0_GPUS bash "$root/ci/gpu-shard" "$fake" 0 2 "$work/n" -- --suite smoke 2>&1)
rc=$?
refused "no allocation" "no GPU allocated by CTest"

((fails == 0)) || exit 1
echo "gpu-shard environment ok: ROCm (host, inherited HIP / ROCR / UUID lists), CUDA (host, inherited list), none;" \
     "refusals exit 2"
