#!/usr/bin/env python3
"""A run's report.json as a Markdown table: status, kernel, case, variant, kernel_us, weight TB/s, its ratio to the
copy bandwidth, TFLOP/s, min cos, max rel; the totals above it.

  report_table.py REPORT.json [--baseline TORCH.json] [--line]

--baseline: the JSON that kernels/bench/torch_grouped_mm_baseline.py printed in the same call: its copy_tbps (read +
write traffic of a device-to-device copy) is the ceiling the ratios are taken against, the issue's "x copy" (weight
bytes read per second over it), and its torch._grouped_mm pipeline timings are tabled below the cases.
--line: one line instead (the totals; with a baseline, the copy bandwidth and the lowest ratio of a passing decode
case), for a summary file. Exit 2, naming the file, when a file is not a readable report or baseline.
"""
import argparse
import json
import math
import sys


def fail(path, problem):
    print(f"report_table: {path}: {problem}", file=sys.stderr)
    sys.exit(2)


def load(path, what):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail(path, f"cannot read the {what} ({e})")


def num(v):
    """A number of the report, None where missing; JSON null (a non-finite value) reads back as NaN."""
    if v is None:
        return math.nan
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def fmt(v, spec):
    if v is None:
        return "-"
    return "nan" if math.isnan(v) else format(v, spec)


def case_rows(report, path):
    cases = report.get("cases") if isinstance(report, dict) else None
    if not isinstance(cases, list):
        fail(path, "no `cases` list: not a moe-harness report.json")
    rows = []
    for c in cases:
        m = dict(c.get("metrics") or {})
        m.update(c.get("timing") or {})
        row = {k: str(c.get(k, "")) for k in ("status", "kernel", "id", "variant")}
        row.update({k: num(m[k]) if k in m else None
                    for k in ("kernel_us", "achieved_tbps", "achieved_tflops", "min_cos", "max_rel")})
        rows.append(row)
    return rows


def totals(rows):
    n = {s: sum(r["status"] == s for r in rows) for s in ("pass", "fail", "skip", "error")}
    return (f"{n['pass']} passed, {n['fail']} failed, {n['skip']} skipped, {n['error']} errors of {len(rows)}")


def ratio(r, copy):
    tbps = r["achieved_tbps"]
    if copy is None or tbps is None or math.isnan(tbps) or tbps <= 0:
        return None
    return tbps / copy


def lowest_decode(rows, copy):
    """The passing decode case (bandwidth-bound by design) furthest below the copy bandwidth."""
    cands = [(ratio(r, copy), r["id"]) for r in rows if "/decode/" in r["id"] and r["status"] == "pass"]
    cands = [c for c in cands if c[0] is not None]
    return min(cands) if cands else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report")
    ap.add_argument("--baseline")
    ap.add_argument("--line", action="store_true")
    a = ap.parse_args()
    rows = case_rows(load(a.report, "report"), a.report)
    base, copy = None, None
    if a.baseline:
        base = load(a.baseline, "torch baseline")
        copy = num(base.get("copy_tbps")) if isinstance(base, dict) else None
        if copy is None or math.isnan(copy) or copy <= 0:
            fail(a.baseline, "no positive `copy_tbps`: not the output of kernels/bench/torch_grouped_mm_baseline.py")
    low = lowest_decode(rows, copy)
    if a.line:
        line = totals(rows)
        if copy is not None:
            line += f"; copy {copy:.3f} TB/s"
            if low:
                line += f"; lowest decode ratio {low[0]:.3f}x ({low[1]})"
        print(line)
        return
    print(f"{a.report}: {totals(rows)}\n")
    if copy is not None:
        print(f"Copy bandwidth (same call, {base.get('device', '?')}, torch {base.get('torch', '?')}): "
              f"{copy:.3f} TB/s; x copy = weight TB/s over it.\n")
    print("| status | kernel | case | variant | kernel_us | TB/s | x copy | TFLOP/s | min cos | max rel |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['status']} | {r['kernel']} | `{r['id']}` | {r['variant']} | {fmt(r['kernel_us'], '.1f')} | "
              f"{fmt(r['achieved_tbps'], '.3f')} | {fmt(ratio(r, copy), '.3f')} | {fmt(r['achieved_tflops'], '.2f')} | "
              f"{fmt(r['min_cos'], '.7f')} | {fmt(r['max_rel'], '.3g')} |")
    if low:
        print(f"\nLowest decode ratio: {low[0]:.3f}x ({low[1]}).")
    pipes = {k: v for k, v in (base or {}).items() if isinstance(v, dict) and "us" in v}
    if pipes:
        print("\ntorch._grouped_mm pipeline (same call):\n\n| shape | us | weight TB/s | TFLOP/s |\n|---|---|---|---|")
        for k, v in pipes.items():
            print(f"| {k} | {fmt(num(v.get('us')), '.1f')} | {fmt(num(v.get('weight_tbps')), '.3f')} | "
                  f"{fmt(num(v.get('tflops')), '.2f')} |")


if __name__ == "__main__":
    main()
