#!/usr/bin/env python3
"""`moe-harness --version` and every report name the source tree the binary was built from.

The expectation comes from git itself (an independent source): the checkout's commit, `git rev-parse --short=12
HEAD`; and, when `git status --porcelain` lists a tracked change or an untracked, not-ignored file, the suffix
"+dirty." and 12 hex digits. Where the source root is not the top of a git checkout, "unknown". CMake writes the stamp at every build, so a build from this checkout must carry it
(a test run after further edits, without rebuilding, fails here: the binary no longer is the tree).
A report written by `run`, and the JSON tables of `calibrate` and `selftest`, must carry the same stamp.

Usage: check_build_stamp.py MOE_HARNESS SOURCE_ROOT OUT_DIR [SELFTEST_JSON]
       check_build_stamp.py --foreign-repo CMAKE SOURCE_ROOT OUT_DIR

--foreign-repo: the sources copied into a directory inside another, unrelated git repository (a vendored copy) are
not that repository's tree, so the stamp must not name its commit: configuring the copy and building only the stamp
target must write "unknown". Made a git repository of its own and committed, the same copy is stamped with its own
commit (as git states it), so the check does not merely refuse every nested tree.

SELFTEST_JSON: the table a full `MOE_HARNESS selftest --json` of this build wrote (the ctest fixture cli.selftest_host):
checked instead of running a selftest here, which would judge every mutant once more for the same field.
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys


def built_stamp(cmake: str, src: str, build: str) -> str:
    """Configure `src` into `build` and build only the stamp target; the stamp the header then holds."""
    for cmd in ([cmake, "-S", src, "-B", build, "-DMOE_GPU=OFF"], [cmake, "--build", build, "--target", "moe_build_stamp"]):
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} exited {r.returncode}: {r.stdout[-2000:]}{r.stderr[-2000:]}")
    with open(os.path.join(build, "generated", "moe_build_stamp.hpp")) as f:
        m = re.search(r'#define MOE_BUILD_COMMIT "([^"]*)"', f.read())
    return m.group(1) if m else "(no MOE_BUILD_COMMIT)"


def foreign_repo(cmake: str, root: str, out: str) -> int:
    shutil.rmtree(out, ignore_errors=True)
    outer = os.path.join(out, "outer")
    os.makedirs(outer)
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.com")

    def git(cwd, *args):
        return subprocess.run(["git", "-C", cwd, *args], capture_output=True, text=True, env=env, check=True).stdout.strip()
    git(outer, "init", "-q")
    with open(os.path.join(outer, "README"), "w") as f:
        f.write("an unrelated project that vendors moe-harness\n")
    git(outer, "add", "README")
    git(outer, "commit", "-q", "-m", "unrelated")
    outer_head = git(outer, "rev-parse", "--short=12", "HEAD")
    copy = os.path.join(outer, "vendor", "moe-harness")
    # The source tree without its git metadata and build trees.
    shutil.copytree(root, copy, ignore=lambda d, names: [n for n in names if os.path.samefile(d, root) and
                                                         (n == ".git" or n.startswith("build"))])
    stamp = built_stamp(cmake, copy, os.path.join(out, "build-vendored"))
    if stamp != "unknown":
        print(f"a copy inside another repository (HEAD {outer_head}) was stamped {stamp!r}; want 'unknown'")
        return 1
    git(copy, "init", "-q")
    git(copy, "add", "-A")
    git(copy, "commit", "-q", "-m", "own")
    own_head = git(copy, "rev-parse", "--short=12", "HEAD")
    stamp_own = built_stamp(cmake, copy, os.path.join(out, "build-own"))
    if stamp_own != own_head:
        print(f"the copy as its own checkout (HEAD {own_head}) was stamped {stamp_own!r}")
        return 1
    # An untracked, not-ignored environment (a venv's lib64 is a link to the folder lib): the link is stamped by its
    # target, the file by its content, as cmake/build_stamp.cmake documents; reading the link as a file failed the build.
    env_dir = os.path.join(copy, "tools-env")
    os.makedirs(os.path.join(env_dir, "lib"))
    with open(os.path.join(env_dir, "lib", "site.txt"), "wb") as f:
        f.write(b"x\n")
    os.symlink("lib", os.path.join(env_dir, "lib64"))
    content_hash = hashlib.sha256(b"x\n").hexdigest()
    listed = f"untracked tools-env/lib/site.txt {content_hash}\nuntracked tools-env/lib64 -> lib\n"
    want = f"{own_head}+dirty.{hashlib.sha256(listed.encode()).hexdigest()[:12]}"
    stamp_env = built_stamp(cmake, copy, os.path.join(out, "build-own"))
    if stamp_env != want:
        print(f"the checkout with an untracked environment holding a link to a folder was stamped {stamp_env!r}; want {want!r}")
        return 1
    print(f"vendored copy inside {outer_head}: 'unknown'; as its own checkout: {own_head}; with an untracked link: {want}")
    return 0


def main() -> int:
    if sys.argv[1] == "--foreign-repo":
        return foreign_repo(sys.argv[2], sys.argv[3], sys.argv[4])
    harness, root, out = sys.argv[1], sys.argv[2], sys.argv[3]
    selftest_json = sys.argv[4] if len(sys.argv) > 4 else None

    def git(*args: str):
        try:
            r = subprocess.run(["git", "-C", root, *args], capture_output=True, text=True)
        except FileNotFoundError:  # no git at all
            return None
        return r.stdout if r.returncode == 0 else None

    top = git("rev-parse", "--show-toplevel")
    own = top is not None and os.path.realpath(top.strip()) == os.path.realpath(root)
    head = git("rev-parse", "--short=12", "HEAD") if own else None
    if head is None:  # not a git checkout of its own (a tarball, a copy inside another repository): the stamp says so
        commit, dirty, pattern = "no git checkout", False, "unknown"
    else:
        commit = head.strip()
        dirty = git("status", "--porcelain", "--untracked-files=all").strip() != ""
        pattern = re.escape(commit) + (r"\+dirty\.[0-9a-f]{12}" if dirty else "")

    v = subprocess.run([harness, "--version"], capture_output=True, text=True)
    if v.returncode != 0:
        print(f"--version exited {v.returncode}: {v.stderr}")
        return 1
    m = re.fullmatch(r"moe-harness (\S+) \((\S+)\)", v.stdout.strip())
    if not m or not re.fullmatch(pattern, m.group(2)):
        print(f"--version printed {v.stdout.strip()!r}; git says the tree is {commit}{' (dirty)' if dirty else ''}")
        return 1
    stamp = m.group(2)

    shutil.rmtree(out, ignore_errors=True)
    r = subprocess.run([harness, "run", "--suite", "smoke", "--kernel", "host", "--filter", "*T1/*",
                        "--report-dir", out], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"run exited {r.returncode}: {r.stdout[-2000:]}{r.stderr[-2000:]}")
        return 1
    with open(f"{out}/report.json") as f:
        prov = json.load(f)["provenance"]
    if prov["harness_commit"] != stamp or prov["harness_version"] != m.group(1):
        print(f"report provenance {prov['harness_version']} ({prov['harness_commit']}); --version {v.stdout.strip()}")
        return 1
    # calibrate's and selftest's JSON tables (committed under results/calibration/ and in run logs) carry it too.
    tables = [["calibrate", "--suite", "smoke", "--filter", "*T1/decode/atomic", "--seeds", "1"]]
    if selftest_json is None:
        tables.append(["selftest", "--seeds", "1"])
    for cmd in tables:
        j = f"{out}/{cmd[0]}.json"
        r = subprocess.run([harness, *cmd, "--json", j], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"{cmd[0]} exited {r.returncode}: {r.stdout[-2000:]}{r.stderr[-2000:]}")
            return 1
        with open(j) as f:
            got = json.load(f).get("harness_commit")
        if got != stamp:
            print(f"{cmd[0]} --json wrote harness_commit {got!r}; --version says {stamp}")
            return 1
    if selftest_json is not None:
        if not os.path.isfile(selftest_json):
            print(f"{selftest_json}: no selftest table (the fixture test cli.selftest_host writes it)")
            return 1
        with open(selftest_json) as f:
            got = json.load(f).get("harness_commit")
        if got != stamp:
            print(f"selftest --json ({selftest_json}) wrote harness_commit {got!r}; --version says {stamp}")
            return 1
    print(f"build stamp {stamp} (git: {commit}{', dirty' if dirty else ''}) in --version, the report, calibrate and selftest")
    return 0


if __name__ == "__main__":
    sys.exit(main())
