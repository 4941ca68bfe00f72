"""The pytest plugin, run as a kernel team runs it: a ten-line test file under `pytest -p moe_harness.pytest_plugin`."""
import json
import subprocess
import sys

import moe_harness

TEST_FILE = '''
import moe_harness

KERNEL = moe_harness.native_kernel("{kernel}")


def test_kernel(moe_case, moe_session):
    moe_session.provenance["example"] = "1"
    moe_case.run(KERNEL)
'''
FILTER = "*/T3/*"


def pytest_run(tmp_path, *args, kernel="host"):
    (tmp_path / "test_kernel.py").write_text(TEST_FILE.format(kernel=kernel))
    cmd = [sys.executable, "-m", "pytest", "-p", "moe_harness.pytest_plugin", "-p", "no:cacheprovider",
           "--rootdir", str(tmp_path), str(tmp_path / "test_kernel.py"), "--moe-suite", "smoke", *args]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path)


def t3_ids():
    return [c.id for c in moe_harness.suite("smoke", filter=FILTER)]


def test_cases_are_tests_named_by_case_id(tmp_path):
    r = pytest_run(tmp_path, "--moe-filter", FILTER, "--collect-only", "-q")
    assert r.returncode == 0, r.stdout + r.stderr
    listed = [line for line in r.stdout.splitlines() if "::test_kernel[" in line]
    assert listed == [f"test_kernel.py::test_kernel[{i}]" for i in t3_ids()]


def test_passing_kernel_passes_and_writes_the_reports(tmp_path):
    r = pytest_run(tmp_path, "--moe-filter", FILTER, "--moe-report", str(tmp_path / "rep"),
                   "--moe-kernel-id", "host-contract", "--moe-kernel-version", "7")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"{len(t3_ids())} passed" in r.stdout
    report = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert [c["id"] for c in report["cases"]] == t3_ids()
    assert {c["status"] for c in report["cases"]} == {"pass"}
    assert report["provenance"]["kernels"][:2] == [{"id": "host-contract", "version": "7"},
                                                   {"id": "example", "version": "1"}]
    for f in ("junit.xml", "summary.md", "report.html"):
        assert (tmp_path / "rep" / f).is_file()


def test_failing_kernel_fails_each_case_printing_the_verdict(tmp_path):
    r = pytest_run(tmp_path, "--moe-filter", FILTER, kernel="host-contract~gate_up_swapped")
    assert r.returncode == 1
    assert f"{len(t3_ids())} failed" in r.stdout
    own_id = moe_harness.native_kernel("host-contract~gate_up_swapped").id  # no --moe-kernel-id: the kernel's own
    assert f"FAIL {own_id}" in r.stdout and "worst tokens" in r.stdout and "min_cos" in r.stdout


PYTHON_KERNEL_FILE = '''
import moe_harness

HOST = moe_harness.native_kernel("host")


class MyKernel:
    id = "my-numpy-moe"
    version = "3.1"

    def __call__(self, fixture, out):
        HOST(fixture, out)


def test_kernel(moe_case):
    moe_case.run(MyKernel())
'''


def test_python_kernel_is_reported_by_its_own_id_and_version(tmp_path):
    (tmp_path / "test_kernel.py").write_text(PYTHON_KERNEL_FILE)
    cmd = [sys.executable, "-m", "pytest", "-p", "moe_harness.pytest_plugin", "-p", "no:cacheprovider",
           "--rootdir", str(tmp_path), str(tmp_path / "test_kernel.py"), "--moe-suite", "smoke",
           "--moe-filter", FILTER, "--moe-report", str(tmp_path / "rep")]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    report = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert report["provenance"]["kernels"][0] == {"id": "my-numpy-moe", "version": "3.1"}
    assert {c["kernel"] for c in report["cases"]} == {"my-numpy-moe"}
    # --moe-kernel-id and --moe-kernel-version still name it when given.
    cmd[cmd.index(str(tmp_path / "rep"))] = str(tmp_path / "rep2")
    r = subprocess.run(cmd + ["--moe-kernel-id", "team-moe", "--moe-kernel-version", "9"], capture_output=True,
                       text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    report = json.loads((tmp_path / "rep2" / "report.json").read_text())
    assert report["provenance"]["kernels"][0] == {"id": "team-moe", "version": "9"}
    assert {c["kernel"] for c in report["cases"]} == {"team-moe"}


def test_gated_cases_are_skips_with_the_reason(tmp_path):
    r = pytest_run(tmp_path, "--moe-filter", FILTER, "--moe-device", "cuda", "-rs", "--moe-report", str(tmp_path / "rep"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"{len(t3_ids())} skipped" in r.stdout and "no GPU" in r.stdout
    report = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert {c["status"] for c in report["cases"]} == {"skip"}
    r = pytest_run(tmp_path, "--moe-filter", FILTER, "--moe-device", "cuda", "--moe-require-device")
    assert r.returncode == 1 and f"{len(t3_ids())} errors" in r.stdout and "--require-device" in r.stdout


def test_empty_selection_and_bad_suite_are_usage_errors(tmp_path):
    r = pytest_run(tmp_path, "--moe-filter", "no-such-case")
    assert r.returncode == 4 and "selected no case" in r.stderr  # pytest's usage error
    (tmp_path / "x.yaml").write_text("suite: x\ncases: [{tokens: -1}]\n")
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "moe_harness.pytest_plugin", "-p", "no:cacheprovider",
                        str(tmp_path / "test_kernel.py"), "--moe-suite", str(tmp_path / "x.yaml")],
                       capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 4 and "x.yaml" in r.stderr  # pytest: usage error, naming the file


def test_xdist_shards_merge_into_the_whole_run(tmp_path, cli):
    r = pytest_run(tmp_path, "--moe-filter", FILTER, "-n", "2", "--moe-report", str(tmp_path / "rep"),
                   "--moe-kernel-id", "host-contract")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "moe-harness merge" in r.stdout
    shards = sorted((tmp_path / "rep").glob("gw*/report.json"))
    assert len(shards) == 2 and not (tmp_path / "rep" / "report.json").exists()  # the controller judged nothing
    merged = tmp_path / "merged.json"
    subprocess.run([cli, "merge", *map(str, shards), "--out", str(merged), "--expect-suite", "smoke", "--filter", FILTER,
                    "--kernel", "host-contract"], check=True, capture_output=True)
    assert sorted(c["id"] for c in json.loads(merged.read_text())["cases"]) == sorted(t3_ids())


def test_moe_shard_splits_the_selection_by_position(tmp_path):
    ids = t3_ids()
    assert len(ids) >= 2
    for i in range(2):
        r = pytest_run(tmp_path, "--moe-filter", FILTER, "--moe-shard", f"{i}/2", "--collect-only", "-q")
        assert r.returncode == 0, r.stdout + r.stderr
        listed = [line for line in r.stdout.splitlines() if "::test_kernel[" in line]
        assert listed == [f"test_kernel.py::test_kernel[{c}]" for c in ids[i::2]]
    for bad in ("2/2", "x", "1/0"):
        r = pytest_run(tmp_path, "--moe-filter", FILTER, "--moe-shard", bad)
        assert r.returncode == 4 and "--moe-shard" in r.stderr, (bad, r.stderr)


def test_reference_cache_keeps_each_cases_references_for_the_next_run(tmp_path):
    # --moe-reference-cache DIR: one entry per case judged; a second session over it passes the same cases and
    # writes none (every entry read back; rewritten only when missing or stored without a needed envelope).
    cache = tmp_path / "refs"
    r = pytest_run(tmp_path, "--moe-filter", FILTER, "--moe-reference-cache", str(cache))
    assert r.returncode == 0, r.stdout + r.stderr
    entries = {f.name: f.stat().st_mtime_ns for f in cache.iterdir()}
    assert len(entries) == len(t3_ids())
    r = pytest_run(tmp_path, "--moe-filter", FILTER, "--moe-reference-cache", str(cache))
    assert r.returncode == 0 and f"{len(t3_ids())} passed" in r.stdout, r.stdout + r.stderr
    assert {f.name: f.stat().st_mtime_ns for f in cache.iterdir()} == entries
