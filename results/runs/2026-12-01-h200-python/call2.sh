#!/usr/bin/env bash
# Second device call: the Python module against torch in both import orders, then ci/python-examples on the nightly.
set -x
O=${OUT:-/tmp/out}; mkdir -p $O/logs
t0=$SECONDS
cmake --preset cuda > $O/logs/configure.log 2>&1
cmake --build --preset cuda -j16 --target moe-harness moe_python_package > $O/logs/build.log 2>&1; echo "build rc=$? $((SECONDS-t0)) s" >> $O/logs/times.txt
P=build/cuda/python
(python3 -m pybind11 --version; python3 -c 'import torch; print(torch._C._PYBIND11_COMPILER_TYPE, torch._C._PYBIND11_STDLIB, torch._C._PYBIND11_BUILD_ABI)') > $O/logs/pybind11.txt 2>&1
for order in "import torch; import moe_harness" "import moe_harness; import torch"; do
  (PYTHONPATH=$P timeout 120 python3 -X faulthandler -c "$order; print('ok')"; echo "rc=$?") >> $O/logs/import-order.txt 2>&1
  echo "--- was: $order" >> $O/logs/import-order.txt
done
t1=$SECONDS
timeout 420 ci/python-examples --build-dir build/cuda --suite nightly --seeds 5 --parallel 10 --out $O/pyex > $O/logs/pyex.txt 2>&1
echo "pyex rc=$? $((SECONDS-t1)) s" >> $O/logs/times.txt
cd $O && tar czf all.tgz logs pyex 2>/dev/null; rm -rf logs pyex
