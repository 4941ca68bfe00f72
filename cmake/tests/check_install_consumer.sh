#!/usr/bin/env bash
# `cmake --install` into a fresh prefix, then an outside project (kernels/plugin/example/consumer) finds it with
# find_package(MoeHarness), builds its kernel as a plugin and runs the tests moe_harness_add_kernel_test registered.
# The installed executable resolves suites from the installed share/ directory, not the source tree. Then a program
# built against the installed C++ API (cmake/tests/api_consumer: MoeHarness::api) runs the host kernel on the smoke
# suite's first case: it must pass, named by the id the installed `moe-harness list` prints first.
# Usage: check_install_consumer.sh MOE_ROOT BUILD_DIR WORK_DIR
set -euo pipefail
root=$1 build=$2 work=$3
rm -rf "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
for f in bin/moe-harness include/moe-harness/kernels/plugin/moe_plugin.h share/moe-harness/cases/smoke.yaml \
         include/moe_harness/moe_harness.hpp lib/libmoe_harness_api.so lib/cmake/MoeHarness/MoeHarnessTargets.cmake \
         lib/cmake/MoeHarness/MoeHarnessConfig.cmake lib/cmake/MoeHarness/MoeHarnessConfigVersion.cmake; do
  [[ -e "$work/prefix/$f" ]] || { echo "FAIL: install lacks $f"; exit 1; }
done
listing=$(env -u MOE_CASES_DIR "$work/prefix/bin/moe-harness" list --suite smoke 2>&1 >/dev/null)
[[ "$listing" == *"$work/prefix/share/moe-harness/cases/smoke.yaml"* ]] || { echo "FAIL: installed binary used $listing"; exit 1; }
cmake -S "$root/kernels/plugin/example/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/consumer" >/dev/null
ctest --test-dir "$work/consumer" --output-on-failure | tail -4
grep -q '"pass": [1-9]' "$work/consumer/acme_moe.smoke-report/report.json"
cmake -S "$root/cmake/tests/api_consumer" -B "$work/api-consumer" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/api-consumer" >/dev/null
first=$(env -u MOE_CASES_DIR "$work/prefix/bin/moe-harness" list --suite smoke 2>/dev/null | head -1)
verdict=$(env -u MOE_CASES_DIR "$work/api-consumer/api_consumer")
echo "api consumer: $verdict"
[[ -n "$first" && "$verdict" == "$first pass failed_check= "* ]] || { echo "FAIL: expected '$first pass', got '$verdict'"; exit 1; }
# A version the install cannot satisfy is refused by find_package.
mkdir -p "$work/v9" && cat >"$work/v9/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.25)
project(v9 NONE)
find_package(MoeHarness 9.0 REQUIRED)
CM
if cmake -S "$work/v9" -B "$work/v9/b" -DCMAKE_PREFIX_PATH="$work/prefix" >"$work/v9/log" 2>&1; then
  echo "FAIL: find_package(MoeHarness 9.0) accepted version 0.1"; exit 1
fi
grep -q "compatible with requested version \"9.0\"" "$work/v9/log"
echo "install + find_package consumer ok"
