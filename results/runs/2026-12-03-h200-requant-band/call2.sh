#!/usr/bin/env bash
# Device call 2 (issue 33): the panel member vllm-torch over the whole nightly, seed 0, in two shards (call 1 built
# the Python module's native part but not the package's Python files: target moe_python_package).
O=${OUT:-/tmp/out}; L=$O/l; mkdir -p $L; T=$O/times.txt; start=$SECONDS
{ cmake --preset cuda && cmake --build --preset cuda -j16 --target moe-harness moe_python_package; } > $L/build.log 2>&1
echo "build: exit $?, $((SECONDS - start)) s" >> $T
left() { echo $(( ${BUDGET:-560} - (SECONDS - start) )); }
step() {
  local n=$1 t=$SECONDS; shift
  timeout -s INT -k 20 "$(left)" "$@" > $L/$n.txt 2>&1
  echo "$n: exit $?, $((SECONDS - t)) s" >> $T
}
for s in 0 1 2; do
  PYTHONPATH=build/cuda/python step panel-vllm-torch-$s python3 kernels/panel/run_panel.py --suite nightly \
    --members vllm-torch --shard $s/3 --report-dir $L/panel-$s --verbose &
done
wait
cp $T $L/; tar czf $O/logs.tgz -C $O l && rm -rf $L
