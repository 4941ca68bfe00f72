#!/usr/bin/env bash
# ci/nightly and ci/main end to end on the CPU (host kernel standing in for the GPU kernel, two "GPUs" from CTest's
# resource allocation): shards merged, HTML written, exit 0 against an identical baseline; exit 1 and a drift report
# against a baseline in which a case had dispatched another variant. Both jobs run on a runner that cannot install
# packages (offline_env.sh: apt-get fails as offline apt does, dpkg knows no package as on an Ubuntu GPU image whose
# CMake comes from pip, a test package (jsonschema) missing): they need only the build packages, all here, so they
# run and never call apt-get; nor do they where dpkg knows every package. ci/nightly exits 4 when the shards judged
# nothing (every case lists only the GPU kernel), although each shard alone exits 0. With --suite nightly the call
# sequence runs after the shards, its 5 steps in its own report.
# Usage: check_ci_nightly.sh MOE_ROOT WORK_DIR
set -uo pipefail
root=$1 work=$2
rm -rf "$work"
mkdir -p "$work"
source "$root/harness/tests/offline_env.sh"
offline_env "$work/env"
offline=(env PATH="$work/env/bin:$PATH" PYTHONPATH="$work/env/hide")
mkdir -p "$work/env/real-dpkg" && cp "$work/env/bin/apt-get" "$work/env/real-dpkg/"
present=(env PATH="$work/env/real-dpkg:$PATH")
cd "$root" || exit 1
run() { "${how[@]}" bash ci/nightly --preset cpu --gpus 2 --suite smoke --kernel host-contract --filter '*T3*' --out "$@" >"$work/nightly.log" 2>&1; }
how=("${offline[@]}")
run "$work/a"; a=$?
[[ $a -eq 0 && -f "$work/a/merged.json" && -f "$work/a/report.html" && -f "$work/a/shards/1/shard.txt" ]] \
  || { echo "FAIL: first nightly (offline runner) gave $a"; tail -5 "$work/nightly.log"; ls "$work/a"; exit 1; }
how=("${present[@]}")
run "$work/b" --baseline "$work/a/merged.json"; b=$?
[[ $b -eq 0 ]] && grep -q "No drift" "$work/b/drift.md" || { echo "FAIL: identical baseline gave $b"; exit 1; }
python3 - "$work/a/merged.json" "$work/better.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
c = r["cases"][0]
c["variant"] = "host/an-older-path"  # the baseline dispatched another variant for this case
json.dump(r, open(sys.argv[2], "w"))
PY
how=()
run "$work/c" --baseline "$work/better.json"; c=$?
[[ $c -eq 1 ]] && grep -q "variant" "$work/c/drift.md" && grep -q 'id="drift"' "$work/c/report.html" \
  || { echo "FAIL: drifted baseline gave $c"; cat "$work/c/drift.md"; exit 1; }
# --suite nightly ends with the call sequence (cases/sequence.yaml), one unsharded run after the shards.
bash ci/nightly --preset cpu --gpus 1 --suite nightly --kernel host-contract --filter 'qwen3.5-35b-a3b/tp4/bf16.a16+sh.bf16.a16/silu/T1/decode/atomic/one_stage' \
  --out "$work/s" >"$work/s.log" 2>&1; s=$?
[[ $s -eq 0 ]] && grep -q "call sequence passed" "$work/s.log" \
  && python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(not (len(r["cases"]) == 5 and all(c["status"] == "pass" for c in r["cases"])))' "$work/s/sequence/report.json" \
  || { echo "FAIL: the nightly's call sequence gave $s"; tail -8 "$work/s.log"; exit 1; }
printf 'suite: gpu-only\ndefaults: {hidden: 256, inter: 256, experts: 16, topk: 4}\ncases:\n  - sweep: {tokens: [2, 3, 5]}\n    case: {kernels: [gpu-fused-moe]}\n' \
  >"$work/gpu-only.yaml"
bash ci/nightly --preset cpu --gpus 2 --suite "$work/gpu-only.yaml" --kernel host-contract --out "$work/e" >"$work/e.log" 2>&1; e=$?
[[ $e -eq 4 ]] && grep -q "nothing checked" "$work/e.log" || { echo "FAIL: a nightly that judged nothing gave $e"; cat "$work/e.log"; exit 1; }
bash ci/nightly --preset cpu --suite smoke >/dev/null 2>&1; d=$?
[[ $d -eq 2 ]] || { echo "FAIL: missing --gpus gave $d"; exit 1; }
# A configure that fails (an unknown preset here; a missing package on a runner) shows CMake's own words, exit 1.
err=$(bash ci/nightly --preset no-such-preset --gpus 1 --out "$work/e" 2>&1 >/dev/null); e=$?
[[ $e -eq 1 && $err == *"no-such-preset"* && $err == *"the configure failed"* ]] \
  || { echo "FAIL: failed configure gave $e: $err"; exit 1; }
# ci/main on the offline runner: builds and runs the smoke suite, exit 0, a report written.
"${offline[@]}" MOE_PRESET=cpu MOE_REPORT_DIR="$work/main" bash ci/main >"$work/main.log" 2>&1; m=$?
[[ $m -eq 0 && -f "$work/main/report.json" && -f "$work/main/summary.md" ]] \
  || { echo "FAIL: ci/main on the offline runner gave $m"; tail -5 "$work/main.log"; exit 1; }
[[ ! -f "$work/env/apt.log" ]] || { echo "FAIL: apt-get called with nothing of the build set missing:"; cat "$work/env/apt.log"; exit 1; }
# The two lines ci/main ends with (README: "the two lines that use the module"), run as printed: the import names the
# smoke suite's cases, the pytest line over the example passes them all (pytest is in the build set; its cache is
# turned off, so that nothing is written into the source tree).
mapfile -t printed < <(sed -n '/^The Python module (docs\/python.md), from this build:$/,$ s/^  //p' "$work/main.log")
[[ ${#printed[@]} -eq 2 ]] || { echo "FAIL: ci/main printed ${#printed[@]} module lines, not 2"; tail -5 "$work/main.log"; exit 1; }
n=$(bash -c "${printed[0]}" 2>&1) && [[ $n =~ \ 29\ smoke\ cases$ ]] || { echo "FAIL: \`${printed[0]}\` printed: $n"; exit 1; }
out=$(bash -c "${printed[1]} -p no:cacheprovider" 2>&1) && [[ $out =~ \ 29\ passed\  && $out != *failed* ]] \
  || { echo "FAIL: \`${printed[1]}\`: $(tail -5 <<<"$out")"; exit 1; }
echo "ci/nightly ok: 0 / 0 (no drift) / 1 (drift) / 0 with the call sequence / 4 (nothing judged) / 2 (usage); ci/main 0 and its two module lines work; offline runner: no apt-get call"
