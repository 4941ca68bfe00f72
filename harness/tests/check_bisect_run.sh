#!/usr/bin/env bash
# ci/bisect-run's answers to `git bisect run` (0 good, 1 bad, 125 skip this commit, 128 or more: stop the bisect):
#   a passing filter -> 0, and a second step takes its fixtures and references from the cache;
#   configuration errors, the same at every commit -> 128: an unknown option, an unknown preset, an unreadable suite,
#     an unknown kernel, a filter that selects no case;
#   everything skipped (the only case lists another kernel) -> 125;
#   a build failure -> 125, with the build log kept and its path printed.
# Usage: check_bisect_run.sh MOE_ROOT
set -u
root=$1
cd "$root"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
want() {  # want CODE WHAT -- ARGS...: ci/bisect-run ARGS exits CODE
  local code=$1 what=$2; shift 3
  ci/bisect-run "$@" >"$work/out" 2>&1; local rc=$?
  if [[ $rc -ne $code ]]; then echo "FAIL: $what -> $rc (want $code)"; sed 's/^/  /' "$work/out"; fail=1
  else echo "ok: $what -> $rc"; fi
}
host=(--preset cpu --kernel host)

cache=$work/cache
want 0 "passing filter" -- "${host[@]}" --suite smoke --filter '*T3/decode/atomic' --reference-cache "$cache"
want 0 "passing filter, second step" -- "${host[@]}" --suite smoke --filter '*T3/decode/atomic' --reference-cache "$cache"
grep "reference cache" "$work/out"
grep -Eq "references [1-9][0-9]* hit\(s\), 0 computed" "$work/out" || { echo "FAIL: the second step computed references"; fail=1; }
log=$(sed -n 's/^bisect-run: build log: //p' "$work/out")
[[ -s "$log" ]] || { echo "FAIL: no build log printed or kept ('$log')"; fail=1; }

want 128 "filter selecting no case" -- "${host[@]}" --suite smoke --filter 'no-such-case*' --no-reference-cache
grep -q "select no case" "$work/out" || { echo "FAIL: the message does not say the filter selects nothing"; fail=1; }
want 128 "unknown option" -- "${host[@]}" --suite smoke --bogus
want 128 "unknown preset" -- --preset no-such-preset --suite smoke --kernel host
want 128 "unreadable suite" -- "${host[@]}" --suite "$work/no-such-suite.yaml" --no-reference-cache
grep -q "no-such-suite.yaml" "$work/out" || { echo "FAIL: the message does not name the suite"; fail=1; }
want 128 "unknown kernel" -- --preset cpu --kernel no-such-kernel --suite smoke --filter '*T3/decode/atomic' --no-reference-cache
grep -q "no-such-kernel" "$work/out" || { echo "FAIL: the message does not name the kernel"; fail=1; }

printf 'suite: gpu-only\ndefaults: {hidden: 256, inter: 256, experts: 16, topk: 4}\ncases:\n  - {tokens: 3, kernels: [gpu-fused-moe]}\n' \
  >"$work/gpu-only.yaml"
want 125 "everything skipped" -- "${host[@]}" --suite "$work/gpu-only.yaml" --no-reference-cache

# A commit that does not build: a cmake that fails at --build (configure and the preset list pass through).
mkdir -p "$work/shim"
real_cmake=$(command -v cmake)
printf '#!/usr/bin/env bash\nfor a in "$@"; do [[ $a == --build ]] && { echo "simulated: error: this commit does not compile" >&2; exit 1; }; done\nexec %s "$@"\n' \
  "$real_cmake" >"$work/shim/cmake"
chmod +x "$work/shim/cmake"
PATH="$work/shim:$PATH" want 125 "build failure" -- "${host[@]}" --suite smoke --filter '*T3/decode/atomic' --no-reference-cache
log=$(sed -n 's/.*build failed: cannot test this commit (see \(.*\))$/\1/p' "$work/out")
grep -q "simulated: error: this commit does not compile" "$log" 2>/dev/null \
  || { echo "FAIL: the build log ('$log') was not kept or not named"; fail=1; }
exit $fail
