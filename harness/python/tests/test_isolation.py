"""The module binds nothing of torch's and torch nothing of its (harness/python/CMakeLists.txt): it exports its init
function only, so the import order of moe_harness and torch cannot matter."""
import subprocess
import sys

import moe_harness


def test_torch_imports_after_the_module_in_a_fresh_interpreter():
    r = subprocess.run([sys.executable, "-c", "import moe_harness, torch; torch.zeros(2).sum(); print('ok')"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "ok", (r.returncode, r.stdout, r.stderr[-2000:])


def test_the_extension_exports_its_init_function_only():
    import shutil
    nm = shutil.which("nm")
    assert nm, "binutils' nm (installed with g++) reads the module's dynamic symbol table"
    so = moe_harness._moe_harness.__file__
    out = subprocess.run([nm, "-D", "--defined-only", so], capture_output=True, text=True, check=True).stdout
    exported = sorted(line.split()[-1] for line in out.splitlines() if line.strip())
    assert exported == ["PyInit__moe_harness"], exported[:20]
