"""`pip install --no-build-isolation .`: CMake builds the target moe_main (the CLI and the native extension), and
the wheel gets the package moe_harness (harness/python/moe_harness/), its extension, and under moe_harness/_native/
the CLI binary with the suites it resolves by name, laid out as `cmake --install` does (bin/, share/moe-harness/cases/),
and the plugin ABI header include/moe_plugin.h.

The build directory: $MOE_BUILD_DIR when set (an already configured build tree, e.g. ci/test's build/cpu: only what
changed is rebuilt), else build/$MOE_PRESET (default: cpu, or default where a GPU device node exists, as ci/main)
configured with that preset. setuptools' own files go under the build directory, not into the source tree.
"""
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


def _require_bdist_wheel():
    """pip builds a wheel: setuptools 70.1 and later carry bdist_wheel, older ones need the `wheel` package, which
    --no-build-isolation does not install (pip's own message is "invalid command 'bdist_wheel'")."""
    for module in ("setuptools.command.bdist_wheel", "wheel.bdist_wheel"):
        try:
            __import__(module)
            return
        except ImportError:
            pass
    raise SystemExit(f"moe-harness setup.py: {sys.executable} has no `wheel` module (its setuptools is older than "
                     f"70.1): install it (Debian: apt-get install python3-wheel; pyenv or another Python: "
                     f"{sys.executable} -m pip install wheel), or make the venv from /usr/bin/python3")


_require_bdist_wheel()

ROOT = Path(__file__).resolve().parent


def _project_version():
    text = (ROOT / "CMakeLists.txt").read_text()
    return re.search(r"project\(moe_harness VERSION ([0-9.]+)", text).group(1)


def _build_dir():
    if os.environ.get("MOE_BUILD_DIR"):
        return Path(os.environ["MOE_BUILD_DIR"]).resolve(), None
    preset = os.environ.get("MOE_PRESET") or ("default" if any(os.path.exists(d) for d in ("/dev/kfd", "/dev/nvidia0"))
                                              else "cpu")
    return ROOT / "build" / preset, preset


BUILD, PRESET = _build_dir()


def _run_showing_progress(cmd):
    """Runs the build with its lines on this process's output (pip keeps that for -v and for a failure) and on the
    terminal when there is one: pip shows a build backend's output only with -v, so a plain `pip install` would
    otherwise print nothing but "still running..." for minutes."""
    try:
        tty = open("/dev/tty", "w")
    except OSError:
        tty = None
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace") as p:
        for line in p.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
            if tty is not None:
                tty.write(line)
                tty.flush()
    if tty is not None:
        tty.close()
    if p.returncode != 0:
        raise SystemExit(f"moe-harness setup.py: {' '.join(cmd)} exited {p.returncode} (its output is above)")


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        if PRESET is not None:
            subprocess.run(["cmake", "--preset", PRESET], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        elif not (BUILD / "CMakeCache.txt").is_file():
            raise SystemExit(f"MOE_BUILD_DIR={BUILD}: not a configured CMake build directory (no CMakeCache.txt)")
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        _run_showing_progress(["cmake", "--build", str(BUILD), "--target", "moe_main", "-j", jobs])
        # The extension must be the one this interpreter loads: same ABI tag (a build for another Python is refused).
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = BUILD / "python" / "moe_harness" / f"_moe_harness{suffix}"
        if not built.is_file():
            found = sorted(p.name for p in (BUILD / "python" / "moe_harness").glob("_moe_harness*"))
            raise SystemExit(f"{built}: not built (found {found or 'no extension'}): the build's Python differs from "
                             f"this one, or its configure found no Python headers / pybind11 (see its "
                             f"'moe_harness Python module:' line)")
        dest = Path(self.get_ext_fullpath(ext.name))
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built, dest)
        native = dest.parent / "_native"
        shutil.rmtree(native, ignore_errors=True)
        (native / "bin").mkdir(parents=True)
        shutil.copy2(BUILD / "harness" / "moe-harness", native / "bin" / "moe-harness")
        shutil.copytree(ROOT / "cases", native / "share" / "moe-harness" / "cases")
        # The C ABI a plugin kernel implements (docs/plugins.md): `moe-harness --plugin-header` prints its path.
        (native / "include").mkdir()
        shutil.copy2(ROOT / "kernels" / "plugin" / "moe_plugin.h", native / "include" / "moe_plugin.h")


(BUILD / "setuptools").mkdir(parents=True, exist_ok=True)
setup(
    version=_project_version(),
    packages=["moe_harness"],
    package_dir={"": "harness/python"},
    ext_modules=[Extension("moe_harness._moe_harness", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": str(BUILD / "setuptools")},
             "egg_info": {"egg_base": str(BUILD / "setuptools")}},
    zip_safe=False,
)
