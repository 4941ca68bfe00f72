# shellcheck shell=bash
# Sourced by the CI script checks: builds, under a work directory, the pieces of a runner that cannot install
# packages, so ci/install-deps, ci/main, ci/nightly and ci/test can be run as they would run there.
#   offline_env DIR        DIR/bin: apt-get that logs its arguments to DIR/apt.log and fails as offline apt does;
#                          sudo that refuses (a password would be needed); dpkg-query that knows no package (tools
#                          not installed as Debian packages, as on an Ubuntu GPU image with CMake from pip);
#                          DIR/hide: a Python module directory where `import jsonschema` fails (PYTHONPATH=DIR/hide)
#   path_without DIR CMD.. prints a PATH (DIR/nobin-*) holding every command of $PATH but CMD...
offline_env() {
  local dir=$1
  mkdir -p "$dir/bin" "$dir/hide"
  # As apt-get does offline: `update` warns and exits 0 (the old lists stay), `install` fails.
  cat >"$dir/bin/apt-get" <<EOF
#!/bin/sh
echo "apt-get \$*" >>"$dir/apt.log"
if [ "\$1" = update ]; then echo "W: Failed to fetch: Temporary failure resolving 'deb.debian.org'" >&2; exit 0; fi
echo "E: Unable to locate package (fake offline apt-get)" >&2
exit 100
EOF
  printf '#!/bin/sh\necho "sudo: a password is required" >&2\nexit 1\n' >"$dir/bin/sudo"
  printf '#!/bin/sh\necho "dpkg-query: no packages found matching $*" >&2\nexit 1\n' >"$dir/bin/dpkg-query"
  chmod +x "$dir/bin/apt-get" "$dir/bin/sudo" "$dir/bin/dpkg-query"
  echo 'raise ImportError("jsonschema hidden by the test (offline_env.sh)")' >"$dir/hide/jsonschema.py"
}
path_without() {
  local dir=$1 d name dirs
  shift
  local out=$dir/nobin-$(echo "$*" | tr ' ' '-')
  rm -rf "$out" && mkdir -p "$out"
  IFS=: read -ra dirs <<<"$PATH"
  for d in "${dirs[@]}"; do
    # An earlier directory wins, as on PATH: ln leaves a name that already exists alone (and says so, ignored).
    [[ -d $d ]] && find "$d" -maxdepth 1 ! -type d -perm -u+x -print0 | { xargs -0 -r ln -s -t "$out" 2>/dev/null || true; }
  done
  for name in "$@"; do rm -f "$out/$name"; done
  echo "$out"
}
