#!/usr/bin/env python3
"""The README's pip route run verbatim, as a new user runs it: in a fresh clone of this checkout (its uncommitted
edits and untracked files carried over), the commands of the README block that follows "Into a Python environment
instead" run line by line in the clone's root, so the venv sits inside the tree, with a fresh Debian's python3 first
on PATH and no build directory given (setup.py configures build/cpu itself). Then:
  - `venv/bin/moe-harness --version` (a README line) names the version of CMakeLists.txt;
  - the pip install ran on a terminal (script(1) gives it one) and showed CMake's build lines there, not only pip's
    "still running...";
  - the README's pytest command (the block after "Judge a kernel from pytest") passes in the clone, on the module the
    pip route's build left in build/cpu/python;
  - an interpreter without the `wheel` module (a venv without system site packages: pip and setuptools 66 only) is
    told in one line what to install, instead of pip's "invalid command 'bdist_wheel'".
A full build of the CLI and the module at the machine's core count: about 5 minutes on 2 cores.

Usage: check_readme_pip.py MOE_ROOT WORK_DIR"""
import os
import re
import shutil
import subprocess
import sys

root, work = (os.path.abspath(a) for a in sys.argv[1:3])
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
clone = os.path.join(work, "clone")


def check(ok, what, out=""):
    if not ok:
        sys.exit(f"FAIL: {what}\n{out[-4000:]}")


def git(*args, cwd=root, **kw):
    return subprocess.run(["git", "-C", cwd, *args], check=True, capture_output=True, **kw).stdout


# The clone: HEAD, then the working tree's edits and untracked (not ignored) files, as the developer has them.
subprocess.run(["git", "clone", "-q", "--no-hardlinks", root, clone], check=True)
diff = git("diff", "HEAD", "--binary")
if diff:
    subprocess.run(["git", "-C", clone, "apply", "--whitespace=nowarn"], input=diff, check=True)
for f in git("ls-files", "-z", "--others", "--exclude-standard").split(b"\0"):
    if f and os.path.isfile(os.path.join(root, os.fsdecode(f))):
        dest = os.path.join(clone, os.fsdecode(f))
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copy2(os.path.join(root, os.fsdecode(f)), dest)


def readme_block(after: str) -> list:
    """The command lines of the first ```sh block after the line containing `after`, comments stripped."""
    text = open(os.path.join(clone, "README.md")).read()
    at = text.index(after)
    block = re.search(r"```sh\n(.*?)```", text[at:], re.S)[1]
    lines, cur = [], ""
    for raw in block.splitlines():
        if raw.lstrip().startswith("#") and not cur:
            continue
        line = re.sub(r"\s+#\s.*$", "", raw).rstrip()
        cur += line[:-1] + " " if line.endswith("\\") else line
        if not line.endswith("\\"):
            if cur.strip():
                lines.append(cur.strip())
            cur = ""
    return lines


# A fresh Debian 12: its python3 first on PATH (this machine's own may be a pyenv shim); no build directory, no
# package index (nothing is downloaded), no PYTHONPATH.
env = {k: v for k, v in os.environ.items()
       if k not in ("PYTHONPATH", "MOE_BUILD_DIR", "MOE_PRESET", "MOE_CASES_DIR", "MOE_HARNESS_BIN", "VIRTUAL_ENV")}
env.update(PATH="/usr/bin:/bin:" + os.environ.get("PATH", ""), PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")

pip_lines = readme_block("Into a Python environment instead")
check(any("pip install" in l for l in pip_lines) and any("moe-harness --version" in l for l in pip_lines),
      f"the README's pip block lost its pip install or --version line: {pip_lines}")
version = re.search(r"project\(moe_harness VERSION ([0-9.]+)", open(os.path.join(clone, "CMakeLists.txt")).read())[1]
for line in pip_lines:
    # script(1): the command on a pseudo-terminal, as typed by a person; its output also kept in the typescript.
    typescript = os.path.join(work, "typescript")
    r = subprocess.run(["script", "-qefc", line, typescript], cwd=clone, env=env, capture_output=True, text=True,
                       stdin=subprocess.DEVNULL)
    out = open(typescript, errors="replace").read()
    check(r.returncode == 0, f"README line `{line}` exited {r.returncode}", out)
    if "pip install" in line:
        steps = re.findall(r"\[\d+/\d+\] (?:Building|Linking) CXX", out)
        check(len(steps) > 10, f"`{line}` showed {len(steps)} CMake build lines on the terminal", out)
        print(f"pip install: {len(steps)} CMake build lines shown on the terminal")
    if "--version" in line:
        check(re.search(rf"^moe-harness {re.escape(version)} ", out, re.M) is not None,
              f"`{line}` did not name version {version}", out)

pytest_lines = readme_block("Judge a kernel from pytest")
check(len(pytest_lines) == 1 and "pytest" in pytest_lines[0], f"the README's pytest block: {pytest_lines}")
r = subprocess.run(["bash", "-c", pytest_lines[0]], cwd=clone, env=env, capture_output=True, text=True)
out = r.stdout + r.stderr
passed = re.search(r"\b(\d+) passed", out)
check(r.returncode == 0 and passed and " failed" not in out, f"`{pytest_lines[0]}` exited {r.returncode}", out)
print(f"README pytest line: {passed[1]} passed")

# An interpreter without `wheel`: the one line that names it and what to install.
bare = os.path.join(work, "bare")
subprocess.run(["/usr/bin/python3", "-m", "venv", bare], check=True, env=env)
has_wheel = subprocess.run([os.path.join(bare, "bin", "python"), "-c", "import wheel"], capture_output=True).returncode
check(has_wheel != 0, "a venv without system site packages has `wheel` here: no interpreter without it to check")
r = subprocess.run([os.path.join(bare, "bin", "pip"), "install", "--no-build-isolation", "."], cwd=clone, env=env,
                   capture_output=True, text=True)
out = r.stdout + r.stderr
check(r.returncode != 0 and "has no `wheel` module" in out and "python3-wheel" in out,
      f"pip install from an interpreter without wheel gave {r.returncode} without naming python3-wheel", out)
print("an interpreter without wheel: told to install python3-wheel")
print(f"README pip route ok in a fresh clone (venv inside the tree): moe-harness {version}")
