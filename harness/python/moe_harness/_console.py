"""The `moe-harness` console script of a pip-installed package: runs the CLI binary the wheel ships in
moe_harness/_native/bin/, which finds its suites in ../share/moe-harness/cases/ beside it (as after `cmake --install`);
`moe-harness --plugin-header` prints the path of the plugin ABI header the wheel ships in _native/include/."""
import os
import shutil
import sys


def main():
    native = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_native")
    if sys.argv[1:] == ["--plugin-header"]:  # the C ABI header a plugin kernel includes (docs/plugins.md)
        header = os.path.join(native, "include", "moe_plugin.h")
        if not os.path.isfile(header):
            sys.exit(f"moe-harness: {header}: missing; this package was not installed from a wheel (pip install .)")
        print(header)
        return
    exe = os.path.join(native, "bin", "moe-harness")
    if not os.access(exe, os.X_OK):
        sys.exit(f"moe-harness: {exe}: missing or not executable; this package was not installed from a wheel "
                 f"(pip install .); in a build tree run build/<preset>/harness/moe-harness")
    # The name the CLI prints in rerun commands: `moe-harness` when that is this script on PATH, else its path.
    script = os.path.abspath(sys.argv[0])
    on_path = shutil.which("moe-harness")
    command = "moe-harness" if on_path and os.path.realpath(on_path) == os.path.realpath(script) else script
    os.execve(exe, ["moe-harness", *sys.argv[1:]], {**os.environ, "MOE_HARNESS_COMMAND": command})
