"""`pip install --no-build-isolation .`: CMake builds the target moe_main (the CLI and the native extension), and
the wheel gets the package moe_harness (harness/python/moe_harness/), its extension, and under moe_harness/_native/
the CLI binary with the suites it resolves by name, laid out as `cmake --install` does (bin/, share/moe-harness/cases/).

The build directory: $MOE_BUILD_DIR when set (an already configured build tree, e.g. ci/test's build/cpu: only what
changed is rebuilt), else build/$MOE_PRESET (default: cpu, or default where a GPU device node exists, as ci/main)
configured with that preset. setuptools' own files go under the build directory, not into the source tree.
"""
import os
import re
import shutil
import subprocess
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

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


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        if PRESET is not None:
            subprocess.run(["cmake", "--preset", PRESET], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        elif not (BUILD / "CMakeCache.txt").is_file():
            raise SystemExit(f"MOE_BUILD_DIR={BUILD}: not a configured CMake build directory (no CMakeCache.txt)")
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        subprocess.run(["cmake", "--build", str(BUILD), "--target", "moe_main", "-j", jobs], check=True)
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
