#!/usr/bin/env bash
# ci/install-deps on runners that cannot install packages (offline_env.sh: apt-get fails as offline apt does, sudo
# refuses, dpkg knows no package, jsonschema hidden from python3). It installs only what is missing and never calls
# apt-get when nothing is; what the build uses counts as present without dpkg (an Ubuntu GPU image whose CMake comes
# from pip); when it cannot install, it names each missing package with what it looked for and exits 0, or 1 with
# --strict; ci/test stops there naming the missing test packages, before it configures anything.
# Usage: check_install_deps.sh MOE_ROOT WORK_DIR
set -uo pipefail
root=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
source "$root/harness/tests/offline_env.sh"
offline_env "$work"
cd "$root" || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# deps ENV... -- ARGS: runs ci/install-deps ARGS under ENV; sets rc, out (stdout + stderr), apt (what apt-get got).
deps() {
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  rm -f "$work/apt.log"
  out=$(env "${envs[@]}" bash ci/install-deps "$@" 2>&1)
  rc=$?
  apt=$(cat "$work/apt.log" 2>/dev/null)
}
fake=$work/bin
build_pkgs="build-essential cmake ninja-build git python3 libeigen3-dev libfmt-dev libgtest-dev libgmock-dev
            libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libbenchmark-dev python3-dev pybind11-dev python3-numpy
            python3-pytest"

# The build set is here (this test is running from a build): apt-get is never called, whether dpkg knows the
# packages (this Debian machine) or knows none of them (presence from what the build uses alone).
mv "$fake/dpkg-query" "$work/dpkg-query.fake"
deps PATH="$fake:$PATH" -- build
[[ $rc -eq 0 && -z $apt ]] || fail "build set present, real dpkg: rc $rc, apt-get called with '$apt': $out"
mv "$work/dpkg-query.fake" "$fake/dpkg-query"
deps PATH="$fake:$PATH" -- build
[[ $rc -eq 0 && -z $apt && $out == *"all 17 packages present"* ]] \
  || fail "dpkg knows nothing, build tools present: rc $rc, apt-get called with '$apt': $out"

# A test package missing, apt offline: tried once for exactly what is missing, then named; 0, or 1 with --strict.
deps PATH="$fake:$PATH" PYTHONPATH="$work/hide" -- build test
[[ $rc -eq 0 && $out == *"python3-jsonschema: not found: Python module jsonschema"* && $out == *"apt-get could not"* ]] \
  || fail "missing test package, not strict: rc $rc: $out"
install_line=$(grep -m1 "^apt-get install" <<<"$apt")
[[ " $install_line " == *" python3-jsonschema "* ]] || fail "apt-get was not asked for python3-jsonschema: '$apt'"
for p in $build_pkgs python3-numpy python3-yaml; do
  [[ " $install_line " != *" $p "* ]] || fail "apt-get asked for $p, which is present: '$install_line'"
done
deps PATH="$fake:$PATH" PYTHONPATH="$work/hide" -- --strict test
[[ $rc -eq 1 && $out == *"python3-jsonschema: not found"* && $out == *"--strict"* ]] \
  || fail "missing test package, --strict: rc $rc: $out"

# A build package missing (git not on PATH): named, exit 0 so the build decides; 1 with --strict.
nogit=$(path_without "$work" git)
deps PATH="$fake:$nogit" -- build
[[ $rc -eq 0 && $out == *"git: not found: command git"* && $out == *"the build decides"* ]] \
  || fail "missing build package, not strict: rc $rc: $out"
deps PATH="$fake:$nogit" -- --strict build
[[ $rc -eq 1 && $out == *"git: not found: command git"* ]] || fail "missing build package, --strict: rc $rc: $out"

# No root and no password-less sudo, or no apt-get at all: apt is not tried; the reason is given.
printf '#!/bin/sh\n[ "$1" = -u ] && { echo 1000; exit 0; }\nexec /usr/bin/id "$@"\n' >"$fake/id" && chmod +x "$fake/id"
deps PATH="$fake:$PATH" PYTHONPATH="$work/hide" -- --strict test
[[ $rc -eq 1 && -z $apt && $out == *"not root, and no password-less sudo"* && $out == *python3-jsonschema* ]] \
  || fail "not root: rc $rc, apt-get called with '$apt': $out"
rm "$fake/id" "$fake/apt-get" "$fake/dpkg-query"
nodebian=$(path_without "$work" apt-get dpkg-query)
deps PATH="$fake:$nodebian" PYTHONPATH="$work/hide" -- build test
[[ $rc -eq 0 && $out == *"no apt-get here"* && $out == *python3-jsonschema* && $out != *libeigen3-dev* ]] \
  || fail "no apt-get, no dpkg: rc $rc: $out"
offline_env "$work"

# Usage: an unknown set or option is exit 2 with the usage.
deps PATH="$fake:$PATH" -- --hip
[[ $rc -eq 2 && $out == *"usage: ci/install-deps"* ]] || fail "unknown option: rc $rc: $out"

# ci/test on such a runner names the missing test package and stops before configuring (cmake --preset is refused
# by a stand-in that logs it, so a ci/test that went on fails at once instead of building).
real_cmake=$(command -v cmake)
cat >"$fake/cmake" <<EOF
#!/bin/sh
case " \$* " in *" --preset "*|*" --build "*) echo "cmake \$*" >>"$work/cmake.log"; exit 97 ;; esac
exec "$real_cmake" "\$@"
EOF
chmod +x "$fake/cmake"
out=$(PATH="$fake:$PATH" PYTHONPATH="$work/hide" bash ci/test 2>&1)
rc=$?
[[ $rc -ne 0 && $out == *"python3-jsonschema: not found"* && ! -f $work/cmake.log ]] \
  || fail "ci/test with a missing test package: rc $rc, configured: $(cat "$work/cmake.log" 2>/dev/null): $(tail -c 600 <<<"$out")"

((fails == 0)) || exit 1
echo "install-deps ok: present -> no apt-get (with and without dpkg); missing -> named, 0 / 1 --strict; no root;" \
     "no apt-get or dpkg; usage 2; ci/test stops naming python3-jsonschema"
