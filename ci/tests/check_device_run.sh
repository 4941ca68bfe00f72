#!/usr/bin/env bash
# ci/device-run on the CPU: usage errors exit 2; --dry-run prints the commands and writes nothing; a step whose GPU
# build is missing says so; and every step end to end against a fake build (moe-harness, gpu_kernel_tests), fake
# cmake, torch baseline, ncu and cuobjdump that record the arguments and environment they were given.
#   check_device_run.sh REPO_ROOT WORK_DIR
# expect evaluates its condition string, so variables it reads look unused and single quotes look unexpanded:
# shellcheck disable=SC2016,SC2034
set -u
root=$1 work=$2
rm -rf "$work"; mkdir -p "$work/bin" "$work/fake/harness"
dr=$root/ci/device-run
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }
expect() {  # expect WHAT COND
  if eval "$2"; then ok "$1"; else bad "$1"; fi
}
has() { grep -qxF -- "$2" "$1"; }     # has FILE LINE: that exact line
has_re() { grep -qE -- "$2" "$1"; }   # has_re FILE REGEX
real_py=$(command -v python3)

# The fakes. Each call of the fake harness appends its arguments and MOE_* and CUDA_* environment to $work/calls.
cat >"$work/fake/harness/moe-harness" <<'EOF'
#!/usr/bin/env bash
{ echo "moe-harness $*"; env | grep -E '^(MOE|CUDA)_' | sort; } >>"$FAKE_CALLS"
sub=$1; shift
dir='' json=''
while (($#)); do case $1 in --report-dir) dir=$2; shift 2 ;; --json) json=$2; shift 2 ;; *) shift ;; esac; done
[[ -n ${FAKE_SLEEP:-} ]] && exec sleep "$FAKE_SLEEP"
case $sub in
  --version) echo "moe-harness 0.1.0 (fake build)" ;;
  run)
    st=pass; [[ -n ${FAKE_FAIL:-} ]] && st=fail
    mkdir -p "$dir"
    cat >"$dir/report.json" <<JSON
{"schema_version": 1, "cases": [
 {"id": "m/tp1/fp8blk.g128/silu/T16/decode/atomic/two_stage", "kernel": "gpu-fused-moe", "status": "$st",
  "variant": "grouped-mma-decode/atomic/fp8_block", "metrics": {"achieved_tbps": 2.0, "min_cos": 1.0, "max_rel": 1e-3},
  "timing": {"kernel_us": 100.0}},
 {"id": "m/tp1/bf16.a16/silu/T4096/prefill/atomic/two_stage", "kernel": "gpu-fused-moe", "status": "pass",
  "variant": "grouped-mma/atomic/bf16", "metrics": {"achieved_tbps": 0.4, "min_cos": 1.0, "max_rel": 1e-3},
  "timing": {"kernel_us": 5000.0}}]}
JSON
    echo "moe-harness: done"
    [[ $st == pass ]] ;;
  selftest) echo '{}' >"$json"; echo "selftest: PASS (22 mutants, 281 clean runs over 20 seeds, 9 s)" ;;
  calibrate) echo '{}' >"$json"; echo "calibrate: PASS (0 clean failures; suite nightly, 20 seeds)" ;;
esac
EOF
cat >"$work/fake/harness/gpu_kernel_tests" <<'EOF'
#!/usr/bin/env bash
echo "gpu_kernel_tests" >>"$FAKE_CALLS"
echo "[==========] 6 tests from 3 test suites ran. (1878 ms total)"; echo "[  PASSED  ] 6 tests."
EOF
cat >"$work/bin/cmake" <<'EOF'
#!/usr/bin/env bash
echo "cmake $*" >>"$FAKE_CALLS"
[[ -z ${FAKE_BUILD_FAIL:-} ]] || { echo "CMake Error: no CUDA compiler"; exit 1; }
EOF
cat >"$work/bin/python3" <<EOF
#!/usr/bin/env bash
if [[ \$1 == kernels/bench/torch_grouped_mm_baseline.py ]]; then
  echo "torch_baseline" >>"\$FAKE_CALLS"
  [[ -z \${FAKE_TORCH_FAIL:-} ]] || { echo "ModuleNotFoundError: No module named 'torch'" >&2; exit 1; }
  echo '{"device": "FakeGPU", "torch": "0", "copy_tbps": 4.0}'; exit 0
fi
exec "$real_py" "\$@"
EOF
cat >"$work/bin/ncu" <<'EOF'
#!/usr/bin/env bash
echo "ncu $*" >>"$FAKE_CALLS"
echo "==PROF== Connected to process 1"
if [[ " $* " == *" --page source "* ]]; then
  printf '"Kernel Name","void k<1>(int)"\n"Address","Source","Warp Stall Sampling (All Samples)",'
  printf '"Instructions Executed",'
  printf '"stall_wait"\n"0x10","  FADD R1, R1, R2","5","7","5"\n'
else printf '"ID","Kernel Name","gpu__time_duration.sum"\n"","","ns"\n"0","void k<1>(int)","2,000"\n'; fi
EOF
cat >"$work/bin/cuobjdump" <<'EOF'
#!/usr/bin/env bash
echo "cuobjdump $*" >>"$FAKE_CALLS"
if [[ $1 == --dump-resource-usage ]]; then printf ' Function _Z1kv:\n  REG:40 STACK:8 SHARED:0 LOCAL:0\n'
else echo "code for sm_90"; fi
EOF
mkdir -p "$work/fake/reference"
cat >"$work/fake/reference/reference_bench" <<'EOF'
#!/usr/bin/env bash
{ echo "reference_bench $*"; echo "OMP_NUM_THREADS=${OMP_NUM_THREADS:-}"; } >>"$FAKE_CALLS"
o=${1#--benchmark_out=}
b() { printf '{"name": "moe::BM_%s/real_time", "GFLOPs": %s, "bytes_per_s": %s, "weight_bytes_per_s": %s, "threads": 16}' "$@"; }
printf '{"context": {"host_name": "fake", "num_cpus": 16, "mhz_per_cpu": 2000, "date": "today"}, "benchmarks": [%s, %s, %s, %s, %s, %s, %s]}\n' \
  "$(b Prefill_DenseSgemm 1000 0 0)" "$(b Prefill_Reference 800 0 0)" "$(b Prefill_Reference_Cold 700 0 0)" \
  "$(b Prefill_NaiveOneThread 1 0 0)" "$(b MemcpyBandwidth 0 1e11 0)" "$(b Decode_Reference_Bf16 0 0 6e10)" \
  "$(b Decode_Reference_Fp8Channel 0 0 5e10)" >"$o"
EOF
chmod +x "$work"/bin/* "$work"/fake/harness/* "$work"/fake/reference/*
objdir=$work/fake/kernels/CMakeFiles/moe_gpu.dir/moe
mkdir -p "$objdir"; : >"$objdir/mma_decode.hip.o"
export PATH="$work/bin:$PATH" FAKE_CALLS=$work/calls
unset OUT MOE_NCU

# Usage errors: exit 2, naming what is wrong, nothing written.
for args in "frob" "--bogus tests" "" "--preset rocm tests" "--env CUDA_LAUNCH_BLOCKING tests" "--seeds 0 selftest" \
            "--filter"; do
  # shellcheck disable=SC2086
  err=$("$dr" --out "$work/usage" $args 2>&1 >/dev/null); rc=$?
  expect "usage error [$args] -> exit 2 ($rc: ${err%%$'\n'*})" '[[ $rc -eq 2 && -n $err && ! -e $work/usage ]]'
done
err=$("$dr" frob 2>&1)
expect "an unknown step is named, with the steps there are" '[[ $err == *"unknown step '\''frob'\''"*nightly*bench* ]]'

# --dry-run: the commands, nothing run, nothing written.
: >"$FAKE_CALLS"
"$dr" --dry-run --out "$work/dry" nightly bench >"$work/dry.txt"; rc=$?
expect "--dry-run nightly bench -> exit 0, writes nothing, runs nothing" \
  '[[ $rc -eq 0 && ! -e $work/dry && ! -s $FAKE_CALLS ]]'
expect "--dry-run shows the build" 'has "$work/dry.txt" "cmake --preset cuda"'
want="build/cuda/harness/moe-harness run --suite nightly --kernel gpu --require-device --no-timing"
expect "--dry-run shows the nightly run" 'has "$work/dry.txt" "$want --report-dir $work/dry/nightly"'
want="build/cuda/harness/moe-harness run --suite bench --kernel gpu --require-device --report-dir $work/dry/bench"
expect "--dry-run shows bench and the torch baseline in the same call" \
  'has "$work/dry.txt" "$want" &&
   has "$work/dry.txt" "python3 kernels/bench/torch_grouped_mm_baseline.py > $work/dry/bench/torch_baseline.json"'
dry=$("$dr" --dry-run --no-build --preset hip --out "$work/dry" --env CUDA_LAUNCH_BLOCKING=1 --dispatch decode_mma=off --filter '*T16*' smoke \
      -- --seed 3)
want="env CUDA_LAUNCH_BLOCKING=1 build/hip/harness/moe-harness run --suite smoke --kernel gpu --require-device --no-timing \
--filter \\*T16\\* --dispatch decode_mma=off --report-dir $work/dry/smoke --seed 3"
expect "--dry-run: hip build dir, --env, filters, --dispatch and run args in the command" '[[ $dry == "$want" ]]' || echo "$dry"

dry=$("$dr" --dry-run --no-build --out "$work/dry" --suite selftest run)
want="build/cuda/harness/moe-harness run --suite selftest --kernel gpu --require-device --no-timing"
expect "--dry-run: the run step takes --suite" '[[ $dry == "$want --report-dir $work/dry/run" ]]' || echo "$dry"
dry=$("$dr" --dry-run --no-build --out "$work/dry" --suite selftest --seeds 3 selftest)
want="build/cuda/harness/moe-harness selftest --kernel gpu --seeds 3 --suite selftest"
expect "--dry-run: selftest takes --seeds and --suite" '[[ $dry == "$want --json $work/dry/selftest/selftest.json" ]]' \
  || echo "$dry"

# ab-nightly: the base build's run, then this build's, then compare; it needs --base-build.
err=$("$dr" --dry-run --out "$work/dry" ab-nightly 2>&1); rc=$?
expect "ab-nightly without --base-build -> exit 2 naming it" '[[ $rc -eq 2 && $err == *"--base-build DIR"* ]]'
dry=$("$dr" --dry-run --no-build --out "$work/dry" --base-build /base/build ab-nightly)
want="/base/build/harness/moe-harness run --suite nightly --kernel gpu --require-device --no-timing --report-dir $work/dry/ab-nightly/base
build/cuda/harness/moe-harness run --suite nightly --kernel gpu --require-device --no-timing --report-dir $work/dry/ab-nightly/new
build/cuda/harness/moe-harness compare $work/dry/ab-nightly/base/report.json $work/dry/ab-nightly/new/report.json --markdown $work/dry/ab-nightly/compare.md"
expect "--dry-run: ab-nightly runs base then new with the same arguments, then compares" '[[ $dry == "$want" ]]' || echo "$dry"
dry=$("$dr" --dry-run --no-build --out "$work/dry" --threads 8 reference-bench)
want="env OMP_NUM_THREADS=8 build/cuda/reference/reference_bench --benchmark_out=$work/dry/reference-bench/bench.json"
expect "--dry-run: reference-bench on --threads OpenMP threads" '[[ $dry == "$want --benchmark_out_format=json" ]]' || echo "$dry"

# Paths given from another directory are the caller's.
: >"$work/my.yaml"
(cd "$work" && "$dr" --dry-run --no-build --out rel --build-dir fake --suite my.yaml smoke run) >"$work/dry-rel.txt"
want="$work/fake/harness/moe-harness run --suite smoke --kernel gpu --require-device --no-timing"
expect "--out, --build-dir and a --suite file are taken from the caller's directory" \
  'has "$work/dry-rel.txt" "$want --report-dir $work/rel/smoke" &&
   grep -qF -- "run --suite $work/my.yaml --kernel gpu" "$work/dry-rel.txt"'

# A missing GPU build: each step says so; exit 1.
"$dr" --no-build --build-dir "$work/nobuild" --out "$work/o1" tests smoke >/dev/null 2>&1; rc=$?
expect "missing build -> exit 1" '[[ $rc -eq 1 ]]'
want="tests: NOT RUN $work/nobuild/harness/gpu_kernel_tests not found: build the cuda preset"
want+=" (ci/device-run without --no-build, or --build-dir)"
expect "missing build: the step names the binary and the fix" \
  'has "$work/o1/summary.txt" "$want" && has_re "$work/o1/summary.txt" "^smoke: NOT RUN .*/nobuild/harness/moe-harness"'

# Every step against the fake build, with the build (fake cmake), A/B env, filters and run arguments.
: >"$FAKE_CALLS"
out=$("$dr" --build-dir "$work/fake" --out "$work/o2" --env CUDA_LAUNCH_BLOCKING=1 --dispatch decode_mma=off --filter '*T16*' \
      tests smoke bench selftest calibrate ncu ncu-source resources -- --seed 3 2>&1); rc=$?
s=$work/o2/summary.txt c=$FAKE_CALLS H=$work/fake/harness/moe-harness
expect "all steps ok -> exit 0" '[[ $rc -eq 0 ]]' || echo "$out"
expect "build: configure and build of the preset, then the version" \
  'has "$c" "cmake --preset cuda" &&
   has_re "$c" "^cmake --build --preset cuda -j [0-9]+ --target moe-harness gpu_kernel_tests$" &&
   has "$s" "build: ok moe-harness 0.1.0 (fake build)"'
expect "summary header: the command and the tree" \
  'has_re "$s" "^# .* ci/device-run --build-dir " && has_re "$s" "^# tree "'
expect "tests: gtest's verdict line" 'has "$s" "tests: ok [  PASSED  ] 6 tests."'
expect "smoke: the report's totals" 'has "$s" "smoke: ok 2 passed, 0 failed, 0 skipped, 0 errors of 2"'
want="moe-harness run --suite smoke --kernel gpu --require-device --no-timing --filter *T16*"
want+=" --dispatch decode_mma=off --report-dir $work/o2/smoke"
expect "smoke: filters, run args and env reach moe-harness" \
  'has "$c" "$want --seed 3" && [[ $(grep -c "^CUDA_LAUNCH_BLOCKING=1$" "$c") -eq 4 ]]'  # smoke, bench, selftest, calibrate
want="bench: ok 2 passed, 0 failed, 0 skipped, 0 errors of 2; copy 4.000 TB/s;"
want+=" lowest decode ratio 0.500x (m/tp1/fp8blk.g128/silu/T16/decode/atomic/two_stage)"
expect "bench: totals, the copy bandwidth and the decode ratio (2.0 / 4.0)" \
  'has "$s" "$want" && grep -qF "| 100.0 | 2.000 | 0.500 |" "$work/o2/bench/table.md"'
expect "selftest: its verdict, with --seeds 20" \
  'has "$s" "selftest: ok selftest: PASS (22 mutants, 281 clean runs over 20 seeds, 9 s)" &&
   has "$c" "moe-harness selftest --kernel gpu --seeds 20 --json $work/o2/selftest/selftest.json"'
expect "calibrate: nightly with the filters" \
  'has_re "$s" "^calibrate: ok calibrate: PASS" &&
   has_re "$c" "^moe-harness calibrate --suite nightly --filter \*T16\* --dispatch decode_mma=off --kernel gpu --seeds 20 --json "'
want=" -k regex:decode_mma --launch-count 4 $H run --suite bench --filter *T16* --dispatch decode_mma=off --kernel gpu --no-timing"
expect "ncu: the profiled run of the bench suite and the stall table" \
  'has "$s" "ncu: ok 1 launches profiled, 2.0 us in all; ncu/stalls.md" &&
   grep -F -- "$want" "$c" | grep -q "^ncu --clock-control none --csv --page raw " &&
   grep -qF "| k<1> |" "$work/o2/ncu/stalls.md"'
want="ncu-source: ok k<1>: 1 SASS instructions, 5 stall samples, 7 warp instructions executed; ncu-source/source.md"
expect "ncu-source: the first launch's per-instruction samples" \
  'has "$s" "$want" &&
   has_re "$c" "^ncu .*--section SourceCounters .*--page source --print-source sass .*--launch-count 1 "'
want="resources: ok 1 functions, at most 40 registers; stack frame in 1, local memory in 0; resources/resources.md"
expect "resources: cuobjdump's table of the GPU objects" \
  'has "$s" "$want" && [[ -s $work/o2/resources/mma_decode.hip.sass ]]'
expect "each step keeps its log" '[[ -s $work/o2/smoke/log.txt && -s $work/o2/bench/torch_baseline.log ]]'

# ab-nightly and reference-bench against the fake builds (the base is the same fake).
: >"$FAKE_CALLS"
"$dr" --no-build --build-dir "$work/fake" --base-build "$work/fake" --out "$work/o8" ab-nightly reference-bench \
  >/dev/null 2>&1; rc=$?
s8=$work/o8/summary.txt
expect "ab-nightly: both wall times, their ratio, compare's verdict and the new totals; exit 0" \
  '[[ $rc -eq 0 ]] && has_re "$s8" "^ab-nightly: ok base [0-9.]+ s \(exit 0\), new [0-9.]+ s \(exit 0\): base/new ([0-9.]+x|n/a); compare no drift; new: 2 passed, 0 failed" &&
   [[ $(grep -c "^moe-harness run --suite nightly --kernel gpu" "$FAKE_CALLS") -eq 2 ]] &&
   has_re "$FAKE_CALLS" "^moe-harness compare $work/o8/ab-nightly/base/report.json $work/o8/ab-nightly/new/report.json"'
expect "reference-bench: 16 threads by default, the ratios of summarize.py" \
  'has "$FAKE_CALLS" "OMP_NUM_THREADS=16" &&
   has "$s8" "reference-bench: ok 16 threads: prefill 0.80x dense sgemm (target 0.7), decode bf16 0.60x, fp8 0.50x memcpy (target 0.5); reference-bench/summary.md"'
FAKE_FAIL=1 "$dr" --no-build --build-dir "$work/fake" --base-build "$work/fake" --out "$work/o9" ab-nightly >/dev/null 2>&1; rc=$?
expect "ab-nightly with failing cases -> FAIL, exit 1" '[[ $rc -eq 1 ]] && has_re "$work/o9/summary.txt" "^ab-nightly: FAIL \(exit 1\)"'

# jobs-nightly: --jobs 1, then each of --jobs, each compared against --jobs 1; the line gives every wall time.
dry=$("$dr" --dry-run --no-build --out "$work/dry" --jobs 4,8 jobs-nightly)
want="build/cuda/harness/moe-harness run --suite nightly --kernel gpu --require-device --no-timing --jobs 1 --report-dir $work/dry/jobs-nightly/jobs1
build/cuda/harness/moe-harness run --suite nightly --kernel gpu --require-device --no-timing --jobs 4 --report-dir $work/dry/jobs-nightly/jobs4
build/cuda/harness/moe-harness compare $work/dry/jobs-nightly/jobs1/report.json $work/dry/jobs-nightly/jobs4/report.json --markdown $work/dry/jobs-nightly/compare-jobs4.md
build/cuda/harness/moe-harness run --suite nightly --kernel gpu --require-device --no-timing --jobs 8 --report-dir $work/dry/jobs-nightly/jobs8
build/cuda/harness/moe-harness compare $work/dry/jobs-nightly/jobs1/report.json $work/dry/jobs-nightly/jobs8/report.json --markdown $work/dry/jobs-nightly/compare-jobs8.md"
expect "--dry-run: jobs-nightly runs --jobs 1, 4 and 8 and compares 4 and 8 against 1" '[[ $dry == "$want" ]]' || echo "$dry"
err=$("$dr" --dry-run --jobs 4,x jobs-nightly 2>&1); rc=$?
expect "jobs-nightly --jobs 4,x -> exit 2 naming it" '[[ $rc -eq 2 && $err == *"--jobs 4,x"* ]]'
: >"$FAKE_CALLS"
"$dr" --no-build --build-dir "$work/fake" --out "$work/o10" --jobs 2 jobs-nightly >/dev/null 2>&1; rc=$?
expect "jobs-nightly: each wall time, its ratio to --jobs 1, compare's verdict; exit 0" \
  '[[ $rc -eq 0 ]] && has_re "$work/o10/summary.txt" "^jobs-nightly: ok jobs 1 [0-9.]+ s \(exit 0\); jobs 2 [0-9.]+ s \(exit 0(, [0-9.]+x)?\); compare no drift; jobs1: 2 passed" &&
   [[ $(grep -c "^moe-harness run --suite nightly --kernel gpu" "$FAKE_CALLS") -eq 2 ]]'

# The same output directory again: a tag, then a folder that exists gets -2; the summary is appended to.
"$dr" --no-build --build-dir "$work/fake" --out "$work/o2" --tag nodmma smoke >/dev/null 2>&1
"$dr" --no-build --build-dir "$work/fake" --out "$work/o2" smoke >/dev/null 2>&1
expect "tagged and repeated steps get their own folders" \
  '[[ -f $work/o2/smoke-nodmma/report.json && -f $work/o2/smoke-2/report.json ]] &&
   has_re "$s" "^smoke-nodmma: ok" && has_re "$s" "^smoke-2: ok" && [[ $(grep -c "^# tree " "$s") -eq 3 ]]'

# Failures: a failing case, a time limit, a failed torch baseline, no ncu, a hip build asked to profile, a failed build.
FAKE_FAIL=1 "$dr" --no-build --build-dir "$work/fake" --out "$work/o3" smoke >/dev/null 2>&1; rc=$?
expect "a failing case -> FAIL with the totals, exit 1" \
  '[[ $rc -eq 1 ]] && has "$work/o3/summary.txt" "smoke: FAIL (exit 1) 1 passed, 1 failed, 0 skipped, 0 errors of 2"'
t0=$(date +%s)
FAKE_SLEEP=60 "$dr" --no-build --build-dir "$work/fake" --out "$work/o4" --limit 1 nightly >/dev/null 2>&1; rc=$?
expect "a step past its limit -> TIMEOUT, exit 1, killed at the limit" \
  '[[ $rc -eq 1 && $(( $(date +%s) - t0 )) -lt 30 ]] && has_re "$work/o4/summary.txt" "^nightly: TIMEOUT \(limit 1 s\)"'
FAKE_TORCH_FAIL=1 "$dr" --no-build --build-dir "$work/fake" --out "$work/o5" bench >/dev/null 2>&1; rc=$?
want="; torch baseline failed (exit 1, bench/torch_baseline.log): no copy bandwidth"
expect "bench without a torch baseline -> FAIL naming it, exit 1" \
  '[[ $rc -eq 1 ]] && grep -F -- "$want" "$work/o5/summary.txt" | grep -q "^bench: FAIL (exit 1) 2 passed"'
"$dr" --no-build --build-dir "$work/fake" --out "$work/o5" --no-torch bench >/dev/null 2>&1; rc=$?
expect "--no-torch: bench alone passes" \
  '[[ $rc -eq 0 ]] && has "$work/o5/summary.txt" "bench-2: ok 2 passed, 0 failed, 0 skipped, 0 errors of 2"'
MOE_NCU=$work/no-such-ncu "$dr" --no-build --build-dir "$work/fake" --out "$work/o6" ncu >/dev/null 2>&1; rc=$?
expect "no ncu -> NOT RUN saying so, exit 1" \
  '[[ $rc -eq 1 ]] && has "$work/o6/summary.txt" "ncu: NOT RUN $work/no-such-ncu not found on PATH: nothing profiled"'
"$dr" --no-build --preset hip --build-dir "$work/fake" --out "$work/o6" resources >/dev/null 2>&1; rc=$?
expect "a hip build asked for resources -> NOT RUN, exit 1" \
  '[[ $rc -eq 1 ]] && has_re "$work/o6/summary.txt" "^resources: NOT RUN resources profiles CUDA builds only"'
err=$(FAKE_BUILD_FAIL=1 "$dr" --build-dir "$work/fake" --out "$work/o7" smoke 2>&1 >/dev/null); rc=$?
expect "a failed build -> exit 1, its log's end shown, no step run" \
  '[[ $rc -eq 1 && $err == *"no CUDA compiler"* ]] && has_re "$work/o7/summary.txt" "^build: FAIL \(exit 1\)" &&
   ! has_re "$work/o7/summary.txt" "^smoke"'

if command -v shellcheck >/dev/null; then
  expect "ci/device-run is shellcheck-clean" 'shellcheck "$dr"'
else
  echo "note: shellcheck is not installed here; ci/device-run was not linted"
fi
echo "$fails check(s) failed"
((fails == 0))
