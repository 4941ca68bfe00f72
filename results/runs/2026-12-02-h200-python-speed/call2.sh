#!/usr/bin/env bash
# Second device call (issue 22's speed targets), from the repository root on the H200, nothing else running: the
# Python path's and the batch file path's per-case overhead against `run` with the native GPU kernel on the same
# cases in the same call (harness/bench/python_overhead.py, harness/bench/batch_judge_overhead.py; their headers
# say what is timed). The build is incremental (a full one when the machine is fresh).
R=${OUT:-/tmp/out}; O=$R/l; mkdir -p $O; T=$O/times.txt; start=$SECONDS
{ cmake --preset cuda && cmake --build --preset cuda -j16 --target moe-harness moe_python_package; } > $O/build.log 2>&1
echo "build: exit $?, $((SECONDS - start)) s" >> $T
B=$PWD/build/cuda/harness/moe-harness
export PYTHONPATH=$PWD/build/cuda/python
N=(--filter 'qwen3.5-35b-a3b/tp4/bf16.a16+sh.bf16.a16/silu/T1/decode/atomic/one_stage'
   --filter 'qwen3.5-35b-a3b/tp4/bf16.a16+sh.bf16.a16/silu/T16/decode/atomic/one_stage'
   --filter 'qwen3.5-35b-a3b/tp4/fp8ch-fnuz.tok-q240+sh.fp8ch.tok/silu/T5/decode/atomic'
   --filter 'qwen3.5-35b-a3b/tp4/mxfp4.mx8-even+sh.fp8ch.tok/silu/T5/decode/atomic')
bench() {  # name, script, args...
  local n=$1 t=$SECONDS; shift
  timeout $(( ${BUDGET:-570} - (SECONDS - start) )) python3 "$@" --json $O/$n.json > $O/$n.txt 2>&1
  echo "$n: exit $?, $((SECONDS - t)) s" >> $T
}
bench python-smoke harness/bench/python_overhead.py $B --suite smoke --kernel gpu --repeats 5
bench python-nightly4 harness/bench/python_overhead.py $B --suite nightly --kernel gpu --repeats 5 "${N[@]}"
bench batch-smoke harness/bench/batch_judge_overhead.py $B --suite smoke --kernel gpu --repeats 6
bench batch-nightly4 harness/bench/batch_judge_overhead.py $B --suite nightly --kernel gpu --repeats 3 "${N[@]}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> $T
cp $T $R/; tar czf $R/logs.tgz -C $R l && rm -rf $O
