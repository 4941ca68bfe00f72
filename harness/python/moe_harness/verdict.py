"""moe_harness.Verdict: one (case, kernel) record, the one `run` writes into report.json (reports/run_report.hpp
CaseRecord; schema reports/schema/run_report.schema.json)."""


class Verdict:
    """status ("pass", "fail", "skip", "error"), failed_check (report.json's spelling, "" on a pass), reason,
    metrics (every metric with its thresholds), token_cos / token_rel (NumPy arrays, NaN for a token with unwritten
    or non-finite elements), probes [(name, "ran" | "not run: why")], systematic (the statistics), contract (the
    rounding contract judged against: effective, source, declared, not_applied), details (the worst tokens and
    elements), variant, timing (seconds by phase), fixture_fingerprint."""

    def __init__(self, record, case):
        self._record = record
        self.case = case

    id = property(lambda self: self._record.id)
    kernel = property(lambda self: self._record.kernel)
    status = property(lambda self: self._record.status)
    failed_check = property(lambda self: self._record.failed_check)
    reason = property(lambda self: self._record.reason)
    source = property(lambda self: self._record.source)
    variant = property(lambda self: self._record.variant)
    metrics = property(lambda self: dict(self._record.metrics))
    token_cos = property(lambda self: self._record.token_cos)
    token_rel = property(lambda self: self._record.token_rel)
    probes = property(lambda self: list(self._record.probes))
    systematic = property(lambda self: self._record.systematic)
    contract = property(lambda self: self._record.contract)
    details = property(lambda self: self._record.details)
    timing = property(lambda self: self._record.timing)
    fixture_fingerprint = property(lambda self: self._record.fixture_fingerprint)

    @property
    def passed(self):
        return self.status == "pass"

    def explain(self):
        """The verdict in words: what a failing test prints."""
        lines = [f"{self.status.upper()} {self.kernel} {self.id}"]
        if self.reason:
            lines.append(f"  reason: {self.reason}")
        if self.failed_check:
            lines.append(f"  failed check: {self.failed_check}")
        m = self.metrics
        shown = [k for k in ("min_cos", "max_rel", "max_abs", "mismatch_fraction", "unwritten", "non_finite") if k in m]
        if shown:
            lines.append("  " + ", ".join(f"{k} {m[k]:.6g}" for k in shown))
        if self.source:
            lines.append(f"  case: {self.source}")
        if self.details:
            lines.extend("  " + line for line in self.details.rstrip("\n").split("\n"))
        return "\n".join(lines)

    def __repr__(self):
        return f"moe_harness.Verdict({self.status!r}, {self.id!r}, failed_check={self.failed_check!r})"
