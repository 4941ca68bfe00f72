#!/usr/bin/env python3
"""The HTML report of a 10,000-case run (synthetic, synthetic_report.py: the nightly suite's token mix on two kernels,
3 % failing, 0.5 % harness errors, 10 % skipped for one of four reasons) against a baseline that differs from it the
ways a night does: the file stays under 20 MB, `moe-harness html` writes it in bounded memory, and Debian's headless
Chromium loads it and lays out every plot; the same with every case failing. The page's order is checked on the
file: failing cases first, every one with its per-token plots; identical skips one row per reason; passing cases
collapsed with no per-case plot; drift ranked with the new failures first.

The times (`moe-harness html`, the page's clock until every plot is laid out, the Chromium process) are printed, not
asserted: on a shared 2-core runner they move with its load (the all-failing page laid out in 10.1 s alone and in
17.5 s beside the rest of `ctest -j2`), so a time limit here would fail correct code. The 2026-12-01 figures and
their machine load are in results/runs/2026-12-01-cpu-html-report/RUN.md.

Usage: check_html_scale.py MOE_HARNESS SCHEMA WORK_DIR
Chromium is required (ci/install-deps installs it); its absence fails this test, never skips it.
"""
import copy
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time

import jsonschema
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import synthetic_report  # noqa: E402

N_CASES = 10_000
MAX_BYTES = 20_000_000
MAX_HTML_RSS_MB = 1500


def chromium():
    for c in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(c)
        if p:
            return p
    sys.exit("FAIL: no chromium on PATH: run `ci/install-deps` (installs Debian's chromium)")


def derive_new(base, rng):
    """The next night: 50 passing cases fail (late in the report), 20 earlier ones dispatch another variant, one
    skipped case is gone, five cases are added."""
    new = copy.deepcopy(base)
    passing = [i for i, c in enumerate(new["cases"]) if c["status"] == "pass"]
    newly_failing = passing[-50:]
    for i in newly_failing:
        synthetic_report.fail_case(new["cases"][i], rng)
    for i in passing[:20]:
        new["cases"][i]["variant"] = "two_stage/atomic"
    gone = next(i for i, c in enumerate(new["cases"]) if c["status"] == "skip")
    gone_id = new["cases"].pop(gone)["id"]
    for k in range(5):
        extra = copy.deepcopy(new["cases"][passing[k]])
        extra["id"] += "/added"
        new["cases"].append(extra)
    new["summary"] = {"total": len(new["cases"]),
                      **{s: sum(c["status"] == s for c in new["cases"]) for s in ("pass", "fail", "skip", "error")}}
    return new, {base["cases"][i]["id"] for i in newly_failing}, gone_id


def between(text, start, end):
    a = text.index(start)
    return text[a:text.index(end, a)]


def main():
    exe, schema_path, work = sys.argv[1], sys.argv[2], sys.argv[3]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    rng = np.random.default_rng(11)
    base = synthetic_report.make_report(N_CASES, seed=7)
    new, newly_failing, gone_id = derive_new(base, rng)
    # Schema-valid: every status's shape, validated on a sample (the whole file takes a quarter of a minute).
    schema = json.load(open(schema_path))
    for r in (base, new):
        jsonschema.validate(dict(r, cases=r["cases"][::40] + r["cases"][-5:]), schema)
    json.dump(base, open(f"{work}/base.json", "w"))
    json.dump(new, open(f"{work}/new.json", "w"))
    tokens = sum(len(c["token_cos"]) for c in new["cases"])
    cases = new["cases"]
    by = {s: [c for c in cases if c["status"] == s] for s in ("pass", "fail", "skip", "error")}
    print(f"synthetic report: {len(cases)} cases ({', '.join(f'{len(v)} {k}' for k, v in by.items())}), "
          f"{tokens} tokens, {os.path.getsize(f'{work}/new.json') / 1e6:.1f} MB of JSON")

    html = f"{work}/report.html"
    t0 = time.monotonic()
    r = subprocess.run([exe, "html", f"{work}/new.json", "--baseline", f"{work}/base.json", "--out", html],
                       capture_output=True, text=True)
    html_s = time.monotonic() - t0
    rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    assert r.returncode == 0, r.stderr
    size = os.path.getsize(html)
    print(f"moe-harness html: {html_s:.2f} s, peak RSS {rss_mb:.0f} MB; report.html {size / 1e6:.2f} MB")
    assert size < MAX_BYTES, f"report.html is {size} bytes, over {MAX_BYTES}"
    assert rss_mb < MAX_HTML_RSS_MB, (html_s, rss_mb)
    text = open(html).read()
    assert not re.search(r"""(src|href)\s*=\s*["'](https?:|//)""", text) and "<link" not in text

    # Failing first: the failing table holds exactly the failures and errors, errors first, then the skips, then
    # the passing cases, collapsed.
    failing = between(text, 'id="failing"', "</table>")
    rows = re.findall(r'<tr class="case"><td class="(\w+)">', failing)
    assert len(rows) == len(by["fail"]) + len(by["error"]), (len(rows), len(by["fail"]), len(by["error"]))
    assert rows == ["error"] * len(by["error"]) + ["fail"] * len(by["fail"]), rows[:10]
    assert text.index('id="failing"') < text.index('id="skipped"') < text.index('id="passing"')
    # Identical skips grouped: one row per reason, its count, the larger groups first.
    skips = between(text, 'id="skipped"', "</table>")
    groups = [int(n) for n in re.findall(r'<tr class="skip-group" data-count="(\d+)"', skips)]
    reasons = {c["reason"] for c in by["skip"]}
    assert len(groups) == len(reasons) and sum(groups) == len(by["skip"]), (groups, len(reasons))
    assert groups == sorted(groups, reverse=True), groups
    # Passing cases collapsed: a closed <details> with one row each and no per-case plot.
    opening = re.search(r'<details([^>]*) id="passing"', text)
    assert opening and "open" not in opening.group(1), opening
    passing = text[text.index('id="passing"'):]
    assert passing.count('<tr class="case">') == len(by["pass"]), (passing.count('<tr class="case">'), len(by["pass"]))
    sections = re.findall(r'<details open id="case-[^"]*" class="detail"><summary><span class="(\w+)"', text)
    measured_failing = [c for c in by["error"] + by["fail"] if c["token_cos"]]
    assert len(sections) == len(measured_failing) and "pass" not in sections, (len(sections), len(measured_failing))
    plots = text.count('<svg class="plot ')
    assert plots == 2 * len(sections) + 1, (plots, len(sections))  # + the passing cases' shared summary plot
    # Drift ranked: the 50 new failures first, then the other regressions, the added cases and the gone skip last.
    drift = between(text, 'id="drift-table"', "</table>")
    kinds = re.findall(r'<tr class="drift" data-kind="(\w+)"', drift)
    ids = re.findall(r'<tr class="drift" data-kind="\w+"><td[^>]*>[^<]*</td><td[^>]*>[^<]*</td><td><code>([^<]*)</code>', drift)
    assert kinds[:50] == ["status"] * 50 and set(ids[:50]) == newly_failing, (kinds[:55], len(set(ids[:50]) & newly_failing))
    assert kinds.count("variant") == 20 and kinds[-6:] == ["new"] * 5 + ["missing_skipped"], kinds[-8:]
    assert ids[-1] == gone_id

    render(html, plots, work, "nightly-like", screenshot=True)

    # The worst case: every case failed (a broken kernel). Every one is a row of the failing table; the first
    # 1000 (--detail-limit) have plots, sharing the point budget; the file stays under the limit.
    worst = synthetic_report.make_report(N_CASES, seed=3, fail=1.0, error=0.0, skip=0.0)
    json.dump(worst, open(f"{work}/all-failing.json", "w"))
    html = f"{work}/all-failing.html"
    r = subprocess.run([exe, "html", f"{work}/all-failing.json", "--out", html], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    size = os.path.getsize(html)
    text = open(html).read()
    print(f"all {N_CASES} cases failing: report.html {size / 1e6:.2f} MB")
    assert size < MAX_BYTES, f"report.html is {size} bytes, over {MAX_BYTES}"
    assert between(text, 'id="failing"', "</table>").count('<tr class="case">') == N_CASES
    assert text.count('<svg class="plot ') == 2 * 1000 and f"{N_CASES - 1000} more failing case(s)" in text
    render(html, 2000, work, "all-failing")


def render(html, plots, work, name, screenshot=False):
    """Headless Chromium: parse, lay out and count every visible plot. Returns the page's clock (s) at that point."""
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
             "--hide-scrollbars"]
    url = f"file://{os.path.abspath(html)}"
    t0 = time.monotonic()
    dom = subprocess.run([chromium(), *flags, f"--user-data-dir={work}/chromium-{name}", "--dump-dom", url],
                         capture_output=True, text=True, timeout=300).stdout
    dom_s = time.monotonic() - t0
    drawn, render_ms = re.search(r'data-plots-drawn="(\d+)"', dom), re.search(r'data-render-ms="(\d+)"', dom)
    assert drawn and render_ms, "the page's load script did not run"
    assert int(drawn.group(1)) == plots, (drawn.group(1), plots)
    line = (f"chromium ({name}): every plot laid out after {int(render_ms.group(1)) / 1000:.2f} s (page clock); "
            f"--dump-dom {dom_s:.2f} s (whole process)")
    if screenshot:
        t0 = time.monotonic()
        subprocess.run([chromium(), *flags, f"--user-data-dir={work}/chromium-{name}-shot", "--window-size=1280,2000",
                        f"--screenshot={work}/{name}.png", url], capture_output=True, timeout=300, check=True)
        shot_s = time.monotonic() - t0
        line += f", --screenshot {shot_s:.2f} s"
    print(line)
    return int(render_ms.group(1)) / 1000


if __name__ == "__main__":
    main()
