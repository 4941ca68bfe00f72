#!/usr/bin/env bash
# Issue 22's speed targets on the H200 (after call3.sh, on its build): the Python path and the batch file path
# against `run` with the native GPU kernel on the smoke suite, alternating, in this call.
O=${OUT:-/tmp/out}
export PYTHONPATH=$PWD/build/cuda/python
timeout 70 python3 harness/bench/python_overhead.py build/cuda/harness/moe-harness --suite smoke --kernel gpu --repeats 2 > $O/python_overhead.txt 2>&1
echo "python_overhead exit $?" >> $O/python_overhead.txt
timeout 70 python3 harness/bench/batch_judge_overhead.py build/cuda/harness/moe-harness --suite smoke --kernel gpu --repeats 2 > $O/batch_judge_overhead.txt 2>&1
echo "batch_judge_overhead exit $?" >> $O/batch_judge_overhead.txt
