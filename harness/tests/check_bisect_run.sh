#!/usr/bin/env bash
# ci/bisect-run answers 0 on a passing filter and 125 when everything is filtered out; a second step over the same
# filter takes its fixtures and references from the cache.
set -u
root=$1
cd "$root"
cache=$(mktemp -d)
ci/bisect-run --preset cpu --suite smoke --filter '*T3/decode/atomic' --kernel host --reference-cache "$cache" >/dev/null 2>&1; a=$?
second=$(ci/bisect-run --preset cpu --suite smoke --filter '*T3/decode/atomic' --kernel host --reference-cache "$cache" 2>&1); c=$?
ci/bisect-run --preset cpu --suite smoke --filter 'no-such-case*' --kernel host --no-reference-cache >/dev/null 2>&1; b=$?
echo "passing filter -> $a and $c (want 0), empty filter -> $b (want 125)"
echo "$second" | grep "reference cache"
rm -rf "$cache"
[[ $a -eq 0 && $c -eq 0 && $b -eq 125 ]] && echo "$second" | grep -Eq "references [1-9][0-9]* hit\(s\), 0 computed"
