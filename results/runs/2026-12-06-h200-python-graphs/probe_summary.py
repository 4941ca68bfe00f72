"""Every report.json under the given directories: the verdicts by status, and per device probe (stream_order,
graph_replay) how many records say ran and each not-run reason, by report directory (a kernel and seed)."""
import collections
import json
import pathlib
import sys

for root in sys.argv[1:]:
    for report in sorted(pathlib.Path(root).glob("*/report.json")):
        cases = json.loads(report.read_text())["cases"]
        status = collections.Counter(c["status"] for c in cases)
        failed = collections.Counter(c["failed_check"] for c in cases if c["status"] == "fail")
        print(f"{report.parent.name}: {len(cases)} records, {dict(status)}, failed checks {dict(failed)}")
        for probe in ("stream_order", "graph_replay"):
            seen = collections.Counter(c.get("probes", {}).get(probe, "<absent>") for c in cases
                                       if c["status"] in ("pass", "fail"))
            print(f"  {probe}: {dict(seen)}")
