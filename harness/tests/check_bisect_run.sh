#!/usr/bin/env bash
# ci/bisect-run answers 0 on a passing filter and 125 when everything is filtered out.
set -u
root=$1
cd "$root"
ci/bisect-run --preset cpu --suite smoke --filter '*T3/decode/atomic' --kernel host >/dev/null 2>&1; a=$?
ci/bisect-run --preset cpu --suite smoke --filter 'no-such-case*' --kernel host >/dev/null 2>&1; b=$?
echo "passing filter -> $a (want 0), empty filter -> $b (want 125)"
[[ $a -eq 0 && $b -eq 125 ]]
