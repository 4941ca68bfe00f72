#!/usr/bin/env bash
# Third device call: the module exporting PyInit only, against torch in both import orders; ci/python-examples on
# the nightly (torch and Triton, 5 seeds, the defects on seed 0).
set -x
O=${OUT:-/tmp/out}; mkdir -p $O/logs
t0=$SECONDS
cmake --preset cuda > $O/logs/configure.log 2>&1
cmake --build --preset cuda -j16 --target moe-harness moe_python_package > $O/logs/build.log 2>&1; echo "build rc=$? $((SECONDS-t0)) s" >> $O/logs/times.txt
P=build/cuda/python
nm -D --defined-only $P/moe_harness/_moe_harness*.so > $O/logs/exports.txt 2>&1
for order in "import torch; import moe_harness" "import moe_harness; import torch"; do
  (PYTHONPATH=$P timeout 120 python3 -X faulthandler -c "$order; print('ok')"; echo "rc=$?") >> $O/logs/import-order.txt 2>&1
  echo "--- was: $order" >> $O/logs/import-order.txt
done
t1=$SECONDS
timeout 400 ci/python-examples --build-dir build/cuda --suite nightly --seeds 5 --parallel 10 --out $O/pyex > $O/logs/pyex.txt 2>&1
echo "pyex rc=$? $((SECONDS-t1)) s" >> $O/logs/times.txt
cd $O && tar czf all.tgz logs pyex 2>/dev/null; rm -rf logs pyex
