"""Bad arguments to every Python entry point raise moe_harness.Error with exit_code 2 (docs/cli.md "Exit codes": bad input)
and the key of the argument, never pybind's "incompatible function arguments", a raw cast error or a bare
RuntimeError; the pytest plugin's bad options are pytest usage errors (exit 4) naming the option, before any test."""
import os
import subprocess
import sys

import pytest

import moe_harness

U64_MAX = 2**64 - 1


def bad_input(key):
    """pytest.raises for a moe_harness.Error of exit code 2 naming `key`."""
    class Match:
        def __enter__(self):
            self.ctx = pytest.raises(moe_harness.Error)
            self.info = self.ctx.__enter__()
            return self.info

        def __exit__(self, *exc):
            handled = self.ctx.__exit__(*exc)
            e = self.info.value
            assert e.exit_code == 2, (e.exit_code, str(e))
            assert e.key == key and f"key '{key}'" in str(e), (e.key, str(e))
            return handled
    return Match()


@pytest.mark.parametrize("seed", [-1, U64_MAX + 1, 2**70, 1.5, "3", True])
def test_suite_seed_outside_u64_is_bad_input(seed):
    with bad_input("seed"):
        moe_harness.suite("smoke", seed=seed)


def test_suite_seed_bounds_are_accepted():
    assert moe_harness.suite("smoke", filter="*T1/*", seed=U64_MAX).seed == U64_MAX
    assert moe_harness.suite("smoke", filter="*T1/*", seed=0).seed == 0


@pytest.mark.parametrize("filt", [3, [b"*T1*"], ["*T1*", None]])
def test_suite_filter_of_another_type_is_bad_input(filt):
    with bad_input("filter"):
        moe_harness.suite("smoke", filter=filt)


def test_suite_name_not_text_is_bad_input():
    with bad_input("name_or_path"):
        moe_harness.suite(42)
    with bad_input("name_or_path"):
        moe_harness.suite("smoke\udcff")


@pytest.mark.parametrize("where", ["/proc/moe-x", "/sys/moe-x"])
def test_session_report_dir_that_cannot_be_written_is_bad_input(where):
    with bad_input("report_dir"):
        moe_harness.Session(where, "k", "1")


def test_session_report_dir_that_is_a_file_is_bad_input(tmp_path):
    f = tmp_path / "a-file"
    f.write_text("")
    with bad_input("report_dir"):
        moe_harness.Session(f, "k", "1")
    with bad_input("report_dir"):
        moe_harness.Session(f / "sub", "k", "1")


class Contract:
    """A kernel whose rounding_contract is text that is not UTF-8 (a lone surrogate)."""
    rounding_contract = "gate_up=bf16\udcff"

    def __call__(self, fixture, out):
        pass


def test_rounding_contract_not_utf8_is_bad_input_naming_it():
    case = moe_harness.suite("smoke", filter="*T1/*")[0]
    with bad_input("rounding_contract"):
        case.run(Contract())


def test_a_scale_form_the_point_does_not_take_is_bad_input_naming_it():
    class Declares:
        rounding_contract = "token_scale_form=reciprocal"

        def __call__(self, fixture, out):
            pass
    case = moe_harness.suite("smoke", filter="*T1/*")[0]
    with bad_input("rounding_contract") as info:
        case.run(Declares())
    assert "token_scale_form does not take 'reciprocal'" in str(info.value), str(info.value)
    assert "divide, qmax_reciprocal" in str(info.value), str(info.value)


@pytest.mark.parametrize("key", ["deterministic", "rereads_expert_weights", "graph_safe"])
@pytest.mark.parametrize("value", ["yes", 1, None])
def test_a_declaration_that_is_not_a_bool_is_bad_input_naming_it(key, value):
    class Declares:
        def __call__(self, fixture, out):
            pass
    setattr(Declares, key, value)
    case = moe_harness.suite("smoke", filter="*T1/*")[0]
    with bad_input(key):
        case.run(Declares())


@pytest.mark.parametrize("key", ["deterministic", "rereads_expert_weights", "graph_safe"])
def test_a_numpy_bool_declaration_is_taken(key):
    np = pytest.importorskip("numpy")
    seen = []

    class Declares:
        def __call__(self, fixture, out):
            seen.append(1)
    setattr(Declares, key, np.bool_(False))
    case = moe_harness.suite("smoke", filter="*T1/*")[0]
    v = case.run(Declares())
    assert seen and v.status == "fail", (v.status, v.reason)  # judged (it writes nothing), not refused
    assert v.failed_check == "unwritten", v.failed_check


def pytest_run(tmp_path, *args):
    (tmp_path / "test_k.py").write_text("def test_k(moe_case):\n    pass\n")
    cmd = [sys.executable, "-m", "pytest", "-p", "moe_harness.pytest_plugin", "-p", "no:cacheprovider",
           "--rootdir", str(tmp_path), str(tmp_path / "test_k.py"), "--moe-suite", "smoke", "--moe-filter", "*T1/*",
           *args]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path)


@pytest.mark.parametrize("seed", ["-1", str(U64_MAX + 1)])
def test_pytest_seed_out_of_range_is_a_usage_error(tmp_path, seed):
    r = pytest_run(tmp_path, "--moe-seed", seed)
    assert r.returncode == 4, r.stdout[-2000:] + r.stderr[-2000:]  # pytest's usage error
    assert "key '--moe-seed'" in r.stderr and "INTERNALERROR" not in r.stdout + r.stderr, r.stderr


def test_pytest_report_dir_that_cannot_be_written_is_a_usage_error(tmp_path):
    r = pytest_run(tmp_path, "--moe-report", "/proc/moe-x")
    assert r.returncode == 4, r.stdout[-2000:] + r.stderr[-2000:]
    assert "key '--moe-report'" in r.stderr and "passed" not in r.stdout, r.stdout + r.stderr
    assert not os.path.exists("/proc/moe-x")


def test_kernel_ids_and_outputs_of_another_type_are_bad_input():
    case = moe_harness.suite("smoke", filter="*T1/*")[0]
    with bad_input("id"):
        moe_harness.native_kernel(7)
    with bad_input("kernel_id"):
        case.judge(case.new_output(), kernel_id=3)
    with bad_input("kernel_version"):
        case.run(moe_harness.native_kernel("host"), kernel_version="v\udcff")


def test_session_write_over_its_suite_file_is_bad_input(tmp_path):
    """No output may destroy an input (docs/reliability.md "Bad input"): report.json of Session.write() is not
    written over the suite file its verdicts come from."""
    import shutil
    d = tmp_path / "r"
    d.mkdir()
    suite_file = d / "report.json"
    shutil.copy(os.path.join(os.path.dirname(__file__), "../../../cases/smoke.yaml"), suite_file)
    session = moe_harness.Session(d, "k", "1", suite=moe_harness.suite(str(suite_file), filter="*T1/*"))
    before = suite_file.read_bytes()
    with bad_input("dir") as e:
        session.write()
    assert "(suite)" in str(e.value), str(e.value)
    assert suite_file.read_bytes() == before


# Issue 48: numbers, devices, kernels and paths refused as the CLI refuses them (one set of rules), each naming its key.
@pytest.mark.parametrize("budget", [float("nan"), float("inf"), -5, 2e30, True, "4e9"])
def test_native_kernel_host_budget_outside_its_range_is_bad_input(budget):
    with bad_input("host_budget"):
        moe_harness.native_kernel("host", host_budget=budget)


def test_native_kernel_host_budget_bounds_and_default_are_accepted():
    for budget in (0, 0.0, 1e30, 4e9, 1):
        assert moe_harness.native_kernel("host", host_budget=budget).id
    np = pytest.importorskip("numpy")
    assert moe_harness.native_kernel("host", host_budget=np.float32(4e9)).id
    with bad_input("host_budget"):
        moe_harness.native_kernel("host", host_budget=np.float64("nan"))


@pytest.mark.parametrize("device", [7, "bogus", "CUDA", "cuda:", "cuda:x", "cpu:0", b"cuda"])
def test_an_unknown_device_is_bad_input(device):
    case = moe_harness.suite("smoke", filter="*T1/*")[0]
    with bad_input("device"):
        case.gate(device=device)
    with bad_input("device"):
        case.run(moe_harness.native_kernel("host"), device=device)


def test_known_devices_gate_as_documented():
    case = moe_harness.suite("smoke", filter="*T1/*")[0]
    assert case.gate(device="cpu") == ("run", "")
    assert case.gate(device="cuda:1")[0] == "skip"  # a device kernel on this CPU build: no GPU, a skip
    assert case.gate(device="hip", require_device=True)[0] == "fail"


@pytest.mark.parametrize("kernel", [None, 42, "host"])
def test_running_something_that_is_not_a_kernel_is_bad_input(kernel):
    case = moe_harness.suite("smoke", filter="*T1/*")[0]
    with bad_input("kernel"):
        case.run(kernel)


def test_a_rounding_contract_property_that_raises_is_an_error_naming_it():
    class Raises:
        @property
        def rounding_contract(self):
            raise RuntimeError("contract table not loaded")

        def __call__(self, fixture, out):
            pass
    case = moe_harness.suite("smoke", filter="*T1/*")[0]
    with pytest.raises(moe_harness.Error) as info:
        case.run(Raises())
    assert "kernel.rounding_contract raised" in str(info.value) and "contract table not loaded" in str(info.value)
    assert info.value.exit_code == 3, info.value.exit_code


def test_a_session_without_report_dir_names_it_on_write():
    s = moe_harness.Session("", "k", "1")
    with bad_input("report_dir"):
        s.write()


def test_a_path_with_a_nul_byte_is_named_whole():
    from pathlib import Path
    with bad_input("name_or_path") as info:
        moe_harness.suite(Path("a\0b.yaml"))
    assert "a\\x00b.yaml" in str(info.value), str(info.value)


@pytest.mark.parametrize("option,value", [("--moe-device", "bogus"), ("--moe-device", "7"), ("--moe-seed", "+3"),
                                          ("--moe-seed", " 3"), ("--moe-seed", "1_000"), ("--moe-shard", "+0/2"),
                                          ("--moe-shard", "2/2"), ("--moe-shard", "0")])
def test_pytest_options_are_usage_errors_at_configure_time(tmp_path, option, value):
    r = pytest_run(tmp_path, option, value)
    assert r.returncode == 4, (r.returncode, r.stdout[-2000:], r.stderr[-2000:])  # pytest's usage error
    assert f"key '{option}'" in r.stderr and "passed" not in r.stdout and "skipped" not in r.stdout, r.stderr


def test_a_floor_that_zeroes_the_contract_reference_is_bad_input_naming_the_floor(tmp_path):
    """quant.amax_floor 9e29 (inside the documented [1e-30, 1e30]) or a kernel's token_floor=1e29 makes every scale
    the floor and the contract reference all zeros: case.run raises moe_harness.Error, exit_code 2, naming the floor's
    key and a fix that is not the seed (issue 48); the documented bound 1e30 loads."""
    f = tmp_path / "floor.yaml"
    f.write_text("suite: floor\ndefaults: {hidden: 64, inter: 64, experts: 8, topk: 2, tokens: 2}\ncases:\n"
                 "  - {quant: {weight: fp8_channel, act: fp8_token, amax_floor: 9e29}}\n"
                 "  - {quant: {weight: fp8_channel, act: fp8_token}}\n"
                 "  - {quant: {weight: fp8_channel, act: fp8_token, amax_floor: 1e30}}\n")
    floored, plain, bound = moe_harness.suite(f)
    assert "-fl1e+30" in bound.id, bound.id  # the documented bound loads (float(1e30) > 1e30 was refused)
    for case in (floored, bound):
        with bad_input("quant.amax_floor") as info:
            case.run(moe_harness.native_kernel("host"))
        assert "seed" not in str(info.value).split("Fix:")[-1], str(info.value)

    class Declares:
        rounding_contract = "token_floor=1e29"

        def __call__(self, fixture, out):
            pass
    with bad_input("rounding_contract") as info:
        plain.run(Declares())
    assert "token_floor=" in str(info.value), str(info.value)
    assert plain.run(moe_harness.native_kernel("host")).status == "pass"
