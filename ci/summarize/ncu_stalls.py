#!/usr/bin/env python3
"""Where a kernel's warps wait, from Nsight Compute's raw page:

  ncu --csv --page raw --section SpeedOfLight --section WarpStateStats --section Occupancy --section InstructionStats \
      -k regex:KERNELS PROGRAM... > ncu.csv
  ncu_stalls.py ncu.csv [--top N] [--line]

One row per profiled launch: duration, DRAM and SM throughput and warps active (% of peak), instructions issued per
cycle per scheduler, warp instructions executed, registers per thread, warp cycles per issued instruction, and the N
largest stall reasons in cycles per issued instruction (smsp__average_warps_issue_stalled_<reason>_per_issue_active:
they add up to about the cycles per issued instruction). Lines before the CSV (the profiled program's own output,
ncu's notes) are skipped. Metrics a section did not collect print as "-". --line: one line (launches and the
kernels' total duration). Exit 2, naming the file, when it holds no raw-page table.
"""
import argparse
import csv
import sys

STALL_PREFIX, STALL_SUFFIX = "smsp__average_warps_issue_stalled_", "_per_issue_active.ratio"
COLUMNS = [  # (heading, the metric names it is read from, first present wins, format)
    ("DRAM %", ("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
                "dram__throughput.avg.pct_of_peak_sustained_elapsed"), ".1f"),
    ("SM %", ("sm__throughput.avg.pct_of_peak_sustained_elapsed",), ".1f"),
    ("warps active %", ("sm__warps_active.avg.pct_of_peak_sustained_active",), ".1f"),
    ("issued / cycle", ("smsp__issue_active.avg.per_cycle_active",), ".2f"),
    ("instructions", ("smsp__inst_executed.sum",), ",.0f"),
    ("registers", ("launch__registers_per_thread",), ".0f"),
    ("cycles / issued inst", ("smsp__average_warp_latency_per_inst_issued.ratio",), ".2f"),
]
TO_US = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3, "s": 1e6, "second": 1e6}


def num(x):
    try:
        return float(x.replace(",", ""))
    except (AttributeError, ValueError):
        return None


def read_table(path):
    """The header row (ID ... Kernel Name ... metric names), the units row, the data rows of one width."""
    try:
        with open(path, errors="replace", newline="") as f:
            rows = list(csv.reader(f))
    except OSError as e:
        print(f"ncu_stalls: {path}: cannot read ({e})", file=sys.stderr)
        sys.exit(2)
    for i, r in enumerate(rows):
        if "ID" in r and "Kernel Name" in r and i + 1 < len(rows):
            h = r
            return h, dict(zip(h, rows[i + 1])), [dict(zip(h, d)) for d in rows[i + 2:] if len(d) == len(h)]
    print(f"ncu_stalls: {path}: no raw-page table (a header row with `ID` and `Kernel Name`): was it "
          "`ncu --csv --page raw`, and did the kernel filter match a launch?", file=sys.stderr)
    sys.exit(2)


def short_name(name):
    for noise in ("void ", "(anonymous namespace)::", "<unnamed>::", "unnamed>::", "moe::gpu::", "(int)"):
        name = name.replace(noise, "")
    cut = name.find(">(")
    return name[:cut + 1] if cut >= 0 else name.split("(")[0]


def duration_us(d, units):
    v = num(d.get("gpu__time_duration.sum", ""))
    unit = units.get("gpu__time_duration.sum", "")
    return None if v is None or unit not in TO_US else v * TO_US[unit]


def stalls(d, top):
    st = [(num(v), k[len(STALL_PREFIX):-len(STALL_SUFFIX)]) for k, v in d.items()
          if k.startswith(STALL_PREFIX) and k.endswith(STALL_SUFFIX)]
    st = sorted(((v, k) for v, k in st if v is not None and v > 0), key=lambda x: (-x[0], x[1]))
    return "; ".join(f"{k} {v:.2f}" for v, k in st[:top]) or "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("--top", type=int, default=6)
    ap.add_argument("--line", action="store_true")
    a = ap.parse_args()
    _, units, data = read_table(a.csv)
    durs = [duration_us(d, units) for d in data]
    if a.line:
        total = sum(x for x in durs if x is not None)
        print(f"{len(data)} launches profiled, {total:.1f} us in all")
        return
    print("| kernel | grid | us | " + " | ".join(c[0] for c in COLUMNS) + " | largest stalls (cycles / issued inst) |")
    print("|---" * (len(COLUMNS) + 4) + "|")
    for d, us in zip(data, durs):
        cells = []
        for _, metrics, spec in COLUMNS:
            v = next((num(d[m]) for m in metrics if m in d and num(d[m]) is not None), None)
            cells.append("-" if v is None else format(v, spec))
        print(f"| {short_name(d.get('Kernel Name', '?'))} | {d.get('Grid Size', '')} | "
              f"{'-' if us is None else format(us, '.1f')} | " + " | ".join(cells) + f" | {stalls(d, a.top)} |")


if __name__ == "__main__":
    main()
