"""moe_harness.Session: verdicts collected into the report files `run` writes (report.json, junit.xml, summary.md,
report.html: moe::api::write_reports), with provenance (this build, the kernel, the device, the suite, the seed, and
whatever versions the caller adds)."""

from moe_harness import _moe_harness as _native
from moe_harness._errors import bad_input, check_path, check_text


class Session:
    """Session(report_dir, kernel_id, kernel_version, provenance={"torch": torch.__version__}) collects Verdicts
    (add(), or run() / judge() that add what they return) and write()s the reports into report_dir; as a context
    manager it writes on exit. provenance's (name, version) pairs join report.json's provenance.kernels after the
    kernel's own. One session holds the verdicts of one suite file and seed (report.json names one)."""

    def __init__(self, report_dir, kernel_id, kernel_version, provenance=None, suite=None):
        where = "moe_harness.Session()"
        self.report_dir = check_path(report_dir, where, "report_dir")
        if self.report_dir:  # the output location is checked before any work ("" writes nothing: write() refuses it)
            _native.check_report_dir(self.report_dir, "report_dir")
        check_text(kernel_id, where, "kernel_id")
        self.kernel_id = kernel_id
        self.kernel_version = str(kernel_version)
        self.provenance = dict(provenance or {})
        self.suite = suite
        self.verdicts = []
        self.start_time = _native.utc_now()

    def add(self, verdict):
        if self.suite is None:
            self.suite = verdict.case.suite
        elif (verdict.case.suite.file, verdict.case.suite.seed) != (self.suite.file, self.suite.seed):
            raise ValueError(f"moe_harness.Session: verdict of {verdict.id!r} is from suite {verdict.case.suite.file}, "
                             f"the Session's is {self.suite.file}: use one Session per suite")
        self.verdicts.append(verdict)
        return verdict

    def run(self, case, kernel, **kwargs):
        """case.run(kernel) under the Session's kernel id and version; the verdict is added and returned."""
        kwargs.setdefault("kernel_id", self.kernel_id)
        kwargs.setdefault("kernel_version", self.kernel_version)
        return self.add(case.run(kernel, **kwargs))

    def judge(self, case, out):
        """case.judge(out) under the Session's kernel id; the verdict is added and returned."""
        return self.add(case.judge(out, kernel_id=self.kernel_id))

    def count(self, status):
        return sum(v.status == status for v in self.verdicts)

    def write(self):
        """Writes the report files; returns their paths {"json", "junit", "markdown", "html"}."""
        if not self.report_dir:
            raise bad_input("moe_harness.Session.write()", "report_dir", "is empty: the Session has no directory to "
                            "write the reports into", "pass Session(report_dir=DIR, ...)")
        if self.suite is None:
            raise ValueError("moe_harness.Session.write(): no verdict and no suite: nothing says what was run; "
                             "pass suite= or add a verdict")
        kernels = [(self.kernel_id, self.kernel_version)] + [(str(k), str(v)) for k, v in self.provenance.items()]
        for name, version in kernels:
            check_text(name, "moe_harness.Session.write()", "provenance")
            check_text(version, "moe_harness.Session.write()", "provenance")
        _native.check_report_dir(self.report_dir, "report_dir")
        return _native.write_reports([v._record for v in self.verdicts], self.suite._native, kernels,
                                     self.start_time, self.report_dir)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.write()
        return False
