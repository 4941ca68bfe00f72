"""pytest plugin: a suite's cases as tests.

    pytest -p moe_harness.pytest_plugin --moe-suite nightly [--moe-filter GLOB]... [--moe-report DIR]
           [--moe-seed N] [--moe-kernel-id ID] [--moe-kernel-version V] [--moe-device cpu|cuda|...]
           [--moe-require-device] [--moe-shard I/N]

A test that takes the `moe_case` fixture runs once per case of the suite, the case id as its test id; the fixture
is the case with run(kernel) / judge(out) that record the verdict in the session and end the test: a skip (the
case gated away, or the kernel's supports() declined it) is pytest.skip(reason), a failed or error verdict a test
failure printing the verdict's details; a gating failure (a required GPU missing, a device that cannot be
identified) is an error of the test's setup. A filter that selects no case is a usage error (pytest exit 4). The `moe_session` fixture is the moe_harness.Session (add versions to its
.provenance). With --moe-report DIR the session's report.json, junit.xml, summary.md and report.html are written
at the end; under pytest-xdist each worker writes its own shard DIR/<worker id>/ and
`moe-harness merge DIR/gw*/report.json --out DIR/report.json` joins them (the plugin prints that command).
--moe-shard I/N keeps the suite's cases I, I+N, I+2N, ... (0 <= I < N) for processes (or machines) that split a suite
among them without xdist; their reports join the same way with `moe-harness merge`.
"""
import os

import pytest

import moe_harness
from moe_harness._errors import bad_input, check_device, check_seed, check_text


def pytest_addoption(parser):
    g = parser.getgroup("moe-harness")
    g.addoption("--moe-suite", default=None, help="suite name (smoke, nightly, ...) or YAML file for moe_case")
    g.addoption("--moe-filter", action="append", default=[], metavar="GLOB",
                help="case id glob (repeatable; a leading '-' excludes), as `run --filter`")
    g.addoption("--moe-report", default=None, metavar="DIR", help="write the reports into DIR at the end")
    g.addoption("--moe-seed", default=None, help="replace every case's seed, as `run --seed`")
    g.addoption("--moe-kernel-id", default=None,
                help="the kernel's id in the records and reports (default: the kernel's own .id, else 'python')")
    g.addoption("--moe-kernel-version", default=None,
                help="the kernel's version in the report's provenance (default: the kernel's own .version)")
    g.addoption("--moe-device", default=None,
                help="cpu (default) or a device the kernel runs on (cuda, hip, ...): gating then asks the live GPU")
    g.addoption("--moe-require-device", action="store_true", help="a missing GPU fails instead of skipping")
    g.addoption("--moe-shard", default=None, metavar="I/N",
                help="only the suite's cases I, I+N, I+2N, ... (0 <= I < N): one of N processes splitting the suite")
    g.addoption("--moe-reference-cache", default=None, metavar="DIR",
                help="keep each case's references and envelope in DIR (`run --reference-cache`): a rerun, another "
                     "kernel with the same contract or another xdist worker reads them instead of computing them")


def _worker(config):
    return getattr(config, "workerinput", {}).get("workerid")


def _xdist_controller(config):
    """The pytest-xdist process that only hands tests to workers (it judges nothing and writes no report)."""
    return bool(getattr(config.option, "numprocesses", None)) and not _worker(config)


def _decimal(text, option, what):
    """Decimal digits as an int, as the CLI reads a whole number (fixtures/strict_number.hpp): no sign, space,
    underscore or base prefix, which int() would take."""
    if not (text.isascii() and text.isdigit()):
        raise bad_input("pytest", option, f"'{text}' is not a whole number", f"write {what} as decimal digits")
    return int(text)


def _shard(text):
    """--moe-shard I/N as (I, N); (0, 1) without it."""
    if text is None:
        return 0, 1
    i, slash, n = text.partition("/")
    fix = "give I/N with 0 <= I < N (e.g. 0/4)"
    if not slash:
        raise bad_input("pytest", "--moe-shard", f"'{text}' is not I/N", fix)
    i, n = _decimal(i, "--moe-shard", "I/N"), _decimal(n, "--moe-shard", "I/N")
    if not 0 <= i < n:
        raise bad_input("pytest", "--moe-shard", f"'{text}': I must be in [0, N)", fix)
    return i, n


def _options(config):
    """Every option this plugin adds, checked as the CLI checks its own: the seed, the device, the shard, the ids and
    the report directory; moe_harness.Error (bad input) names the option."""
    seed = config.getoption("moe_seed")
    config._moe_seed = None if seed is None else check_seed(_decimal(seed, "--moe-seed", "the seed"), "pytest",
                                                            "--moe-seed")
    check_device(config.getoption("moe_device"), "pytest", "--moe-device")
    config._moe_shard = _shard(config.getoption("moe_shard"))
    for option, key in (("moe_kernel_id", "--moe-kernel-id"), ("moe_kernel_version", "--moe-kernel-version")):
        if config.getoption(option) is not None:  # None: the kernel's own id / version name it
            check_text(config.getoption(option), "pytest", key)
    for f in config.getoption("moe_filter"):
        check_text(f, "pytest", "--moe-filter")


def pytest_configure(config):
    # The options as usage errors before any test runs (pytest exit 4), with or without --moe-suite; the report
    # directory too (a test run that passes and then cannot write its reports would end in sessionfinish).
    try:
        _options(config)
        if config.getoption("moe_suite") is None:
            return
        report = config.getoption("moe_report")
        if report and _worker(config):
            report = os.path.join(report, _worker(config))
        if report:
            moe_harness._moe_harness.check_report_dir(report, "--moe-report")
        kernel_id, kernel_version = config.getoption("moe_kernel_id"), config.getoption("moe_kernel_version")
        config._moe_session = moe_harness.Session(report or "", "python" if kernel_id is None else kernel_id,
                                                  "" if kernel_version is None else kernel_version)
    except moe_harness.Error as e:
        raise pytest.UsageError(str(e)) from None
    _suite(config)  # here, so that a bad suite or an empty selection is a usage error before collection


def _suite(config):
    if not hasattr(config, "_moe_suite"):
        name = config.getoption("moe_suite")
        if name is None:
            raise pytest.UsageError("a test takes the moe_case fixture: pass --moe-suite NAME|FILE")
        try:
            config._moe_suite = moe_harness.suite(name, filter=config.getoption("moe_filter") or None,
                                                  seed=config._moe_seed,
                                                  reference_cache=config.getoption("moe_reference_cache"))
        except moe_harness.Error as e:
            raise pytest.UsageError(f"--moe-suite {name}: {e}") from None
        if len(config._moe_suite) == 0:  # nothing checked is never green (docs/cli.md "Exit codes")
            raise pytest.UsageError(f"--moe-filter selected no case of suite {name} ({config._moe_suite.file}); "
                                    f"`moe-harness list --suite {name} --filter GLOB` shows what a filter selects")
        i, n = config._moe_shard
        config._moe_cases = [c for k, c in enumerate(config._moe_suite) if k % n == i]
        if not config._moe_cases:
            raise pytest.UsageError(f"--moe-shard {i}/{n}: the selection has {len(config._moe_suite)} case(s), none "
                                    f"in this shard")
        config._moe_session.suite = config._moe_suite
    return config._moe_suite


def pytest_generate_tests(metafunc):
    if "moe_case" in metafunc.fixturenames:
        _suite(metafunc.config)
        cases = metafunc.config._moe_cases
        metafunc.parametrize("moe_case", cases, ids=[c.id for c in cases], indirect=True)


def _conclude(verdict):
    if verdict.status == "skip":
        pytest.skip(verdict.reason)
    if verdict.status != "pass":
        pytest.fail(verdict.explain(), pytrace=False)
    return verdict


def _gated_away(fixture, out):
    """The kernel of a case gating keeps from running: the pipeline decides before any call."""
    raise AssertionError("moe_harness.pytest_plugin: a case gated away was run")


class PluginCase:
    """The case of one test: run() and judge() record the verdict and end the test unless it passed."""

    def __init__(self, case, config):
        self.case = case
        self._config = config

    def __getattr__(self, name):
        return getattr(self.case, name)

    def run(self, kernel, **kwargs):
        kwargs.setdefault("device", self._config.getoption("moe_device"))
        kwargs.setdefault("require_device", self._config.getoption("moe_require_device"))
        # Without --moe-kernel-id / --moe-kernel-version the kernel's own id and version name it, as case.run()
        # does, in the records and in the report's provenance.
        session = self._config._moe_session
        if self._config.getoption("moe_kernel_id") is None:
            session.kernel_id = kwargs.setdefault("kernel_id", getattr(kernel, "id", None) or "python")
        if self._config.getoption("moe_kernel_version") is None:
            session.kernel_version = kwargs.setdefault("kernel_version", str(getattr(kernel, "version", "")))
        return _conclude(session.run(self.case, kernel, **kwargs))

    def judge(self, out):
        return _conclude(self._config._moe_session.judge(self.case, out))


@pytest.fixture
def moe_case(request):
    config, case = request.config, request.param
    device, required = config.getoption("moe_device"), config.getoption("moe_require_device")
    decision, _ = case.gate(device=device, kernel_id=config.getoption("moe_kernel_id"), require_device=required)
    if decision != "run":
        # The pipeline gates before it touches the kernel, so this records the skip (or failure) as `run` would.
        _conclude(config._moe_session.run(case, _gated_away, device=device, require_device=required))
    yield PluginCase(case, config)
    case.release()


@pytest.fixture(scope="session")
def moe_session(request):
    if not hasattr(request.config, "_moe_session"):
        raise pytest.UsageError("moe_session needs --moe-suite")
    return request.config._moe_session


def pytest_sessionfinish(session):
    s = getattr(session.config, "_moe_session", None)
    if s is None or not s.report_dir or s.suite is None or _xdist_controller(session.config):
        return
    s.write()


def pytest_terminal_summary(terminalreporter, config):
    s = getattr(config, "_moe_session", None)
    report = config.getoption("moe_report", None)
    if s is None or not report:
        return
    if _xdist_controller(config):
        terminalreporter.write_line(f"moe-harness: shard reports in {report}/gw*/; join them with "
                                    f"`moe-harness merge {report}/gw*/report.json --out {report}/report.json`")
    elif s.suite is not None:
        terminalreporter.write_line(f"moe-harness: {len(s.verdicts)} verdicts, reports in {s.report_dir} "
                                    f"({s.report_dir}/report.html)")
