#!/usr/bin/env bash
# First device call: build, the Python module's import order against torch, the examples on smoke, the decode table.
set -x
O=${OUT:-/tmp/out}; mkdir -p $O/logs
t0=$SECONDS
cmake --preset cuda > $O/logs/configure.log 2>&1
cmake --build --preset cuda -j16 --target moe-harness moe_python_package > $O/logs/build.log 2>&1; echo "build rc=$? $((SECONDS-t0)) s" >> $O/logs/times.txt
P=build/cuda/python
python3 -c 'import torch, triton; print(torch.__version__, torch.__file__, triton.__version__)' > $O/logs/versions.txt 2>&1
for order in "import torch; import moe_harness" "import moe_harness; import torch"; do
  (PYTHONPATH=$P timeout 120 python3 -X faulthandler -c "$order; print('ok')"; echo "rc=$?") >> $O/logs/import-order.txt 2>&1
  echo "--- was: $order" >> $O/logs/import-order.txt
done
ldd $P/moe_harness/_moe_harness*.so > $O/logs/ldd.txt 2>&1
ls $(python3 -c 'import torch,os;print(os.path.dirname(torch.__file__))')/lib >> $O/logs/ldd.txt 2>&1
t1=$SECONDS
timeout 200 ci/python-examples --build-dir build/cuda --suite smoke --seeds 1 --parallel 2 --out $O/pyex-smoke > $O/logs/pyex-smoke.txt 2>&1
echo "pyex-smoke rc=$? $((SECONDS-t1)) s" >> $O/logs/times.txt
B=build/cuda/harness/moe-harness; t1=$SECONDS
timeout 240 $B tune --suite nightly --filter '*decode*' --kernel gpu --out $O/nightly-decode.csv > $O/logs/tune.log 2>&1
echo "tune rc=$? $((SECONDS-t1)) s" >> $O/logs/times.txt; t1=$SECONDS
timeout 150 $B check-table $O/nightly-decode.csv --suite nightly --require-device > $O/logs/check-table.log 2>&1
echo "check-table rc=$? $((SECONDS-t1)) s" >> $O/logs/times.txt; t1=$SECONDS
timeout 90 $B run --suite nightly --kernel gpu --require-device --no-timing --jobs 4 --dispatch-table $O/nightly-decode.csv --report-dir $O/table-run > $O/logs/table-run.log 2>&1
echo "table-run rc=$? $((SECONDS-t1)) s" >> $O/logs/times.txt
cd $O && tar czf all.tgz logs pyex-smoke nightly-decode.csv table-run 2>/dev/null; rm -rf logs pyex-smoke table-run
