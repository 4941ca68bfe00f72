#!/usr/bin/env bash
# ci/hip-check-gfx942 where its ROCm root filesystem cannot be had (ci/test's case on a machine without the Debian
# mirror): with --or-not-run it says NOT RUN with ci/rocm-rootfs's reason and exits 0, without it the missing root
# filesystem fails (exit 1), and a bad argument is a usage error (exit 2). The mirror is a closed port on this machine,
# so nothing is downloaded and the machine's own root filesystem (MOE_ROCM_ROOTFS elsewhere) is never touched.
#   check_hip_check_gfx942.sh REPO_ROOT WORK_DIR
set -u
root=$1 work=$2
rm -rf "$work"; mkdir -p "$work"
export MOE_ROCM_ROOTFS=$work/rootfs MOE_DEBIAN_MIRROR=http://127.0.0.1:9/debian
fails=0
check() {  # check WHAT COND
  if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi
}

"$root/ci/hip-check-gfx942" --or-not-run --quick >"$work/not-run.out" 2>&1
rc=$?
cat "$work/not-run.out"
check "--or-not-run exits 0 (got $rc)" '((rc == 0))'
# The reason is ci/rocm-rootfs's last line: debootstrap's failed download as root, "needs root" otherwise.
not_run='^ci/hip-check-gfx942: NOT RUN: ci/rocm-rootfs could not build the ROCm root filesystem '
not_run+='\(exit [1-9][0-9]*\): .*[a-z]'
check "--or-not-run says NOT RUN with ci/rocm-rootfs's reason" 'grep -qE "$not_run" "$work/not-run.out"'
check "no complete root filesystem is left behind" '[[ ! -f $MOE_ROCM_ROOTFS/.moe-rootfs-complete ]]'
check "nothing was compiled" '! grep -q "passed in" "$work/not-run.out"'

"$root/ci/hip-check-gfx942" --quick >"$work/required.out" 2>&1
rc=$?
check "without --or-not-run a root filesystem that cannot be built fails (exit $rc)" '((rc == 1))'
check "... and does not say NOT RUN" '! grep -q "NOT RUN" "$work/required.out"'

"$root/ci/hip-check-gfx942" --if-cached >"$work/usage.out" 2>&1
rc=$?
check "an unknown option is a usage error (exit $rc)" \
  '((rc == 2)) && grep -q "usage: ci/hip-check-gfx942" "$work/usage.out"'

echo "$fails failed"
((fails == 0))
