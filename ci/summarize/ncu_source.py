#!/usr/bin/env python3
"""Which instructions a kernel's warps stall on, from Nsight Compute's per-instruction samples:

  ncu --section SourceCounters --section WarpStateStats --page source --print-source sass --csv \
      -k regex:KERNEL --launch-count 1 PROGRAM... > source.csv
  ncu_source.py source.csv [--top N]

For each SASS listing in the file (a header row starting `Address`, `Source`): its kernel, the instruction count,
the stall samples in all and the warp instructions executed; the samples by stall reason (the `stall_*` columns but
their "(Not Issued)" twins), largest first; then the N instructions holding the most samples, each with its offset
from the listing's first address, its SASS, its samples (and share) and its three largest reasons. Lines before a
listing are skipped. Exit 2, naming the file, when it holds no listing or a listing lacks the sample columns.
"""
import argparse
import csv
import sys

from ncu_stalls import short_name

SAMPLES, EXECUTED = "Warp Stall Sampling (All Samples)", "Instructions Executed"


def num(x):
    try:
        return float(x.replace(",", ""))
    except (AttributeError, ValueError):
        return 0.0


def fail(path, problem):
    print(f"ncu_source: {path}: {problem}", file=sys.stderr)
    sys.exit(2)


def listings(path):
    try:
        with open(path, errors="replace", newline="") as f:
            rows = list(csv.reader(f))
    except OSError as e:
        fail(path, f"cannot read ({e})")
    heads = [i for i, r in enumerate(rows) if r[:2] == ["Address", "Source"]]
    if not heads:
        fail(path, "no SASS listing (a header row starting `Address`, `Source`): was it `ncu --page source "
                   "--print-source sass --csv`, and did the kernel filter match a launch?")
    out = []
    for n, i in enumerate(heads):
        h = rows[i]
        # ncu names the kernel in a `"Kernel Name","NAME"` row above its listing.
        names = [r[1] for r in rows[heads[n - 1] if n else 0:i] if len(r) > 1 and r[0] == "Kernel Name"]
        end = heads[n + 1] if n + 1 < len(heads) else len(rows)
        if SAMPLES not in h or EXECUTED not in h:
            fail(path, f"the listing at line {i + 1} has no `{SAMPLES}` / `{EXECUTED}` columns "
                       "(collect --section SourceCounters)")
        out.append((names[-1] if names else "?", h, [r for r in rows[i + 1:end] if len(r) == len(h)]))
    return out


def summarize(kernel, h, data, n_top):
    ix = {name: i for i, name in enumerate(h)}
    # ncu adds a "(Not Issued)" twin of some reasons (samples of warps that were not issued): they would count twice.
    reasons = [name for name in h if name.startswith("stall_") and "Not Issued" not in name]
    total = sum(num(d[ix[SAMPLES]]) for d in data)
    share = (lambda v: 100 * v / total) if total > 0 else (lambda v: 0.0)
    print(f"{short_name(kernel)}: {len(data)} SASS instructions, {total:.0f} stall samples, "
          f"{sum(num(d[ix[EXECUTED]]) for d in data):.0f} warp instructions executed\n")
    print("| stall reason | samples | share |\n|---|---|---|")
    for name, v in sorted(((r, sum(num(d[ix[r]]) for d in data)) for r in reasons), key=lambda x: (-x[1], x[0])):
        if v > 0:
            print(f"| {name[len('stall_'):]} | {v:.0f} | {share(v):.1f}% |")
    print(f"\nThe {n_top} instructions with the most samples (offset from the listing's first address):\n")
    print("| offset | SASS | samples | share | largest reasons |\n|---|---|---|---|---|")
    try:
        base = int(data[0][0], 16) if data else 0
    except ValueError:
        base = None
    for d in sorted(data, key=lambda d: -num(d[ix[SAMPLES]]))[:n_top]:
        s = num(d[ix[SAMPLES]])
        top = sorted(((num(d[ix[r]]), r[len("stall_"):]) for r in reasons), key=lambda x: (-x[0], x[1]))[:3]
        try:
            off = f"+{int(d[0], 16) - base:05x}" if base is not None else d[0]
        except ValueError:
            off = d[0]
        print(f"| {off} | `{d[1].strip()}` | {s:.0f} | {share(s):.1f}% | "
              + " ".join(f"{r}={v:.0f}" for v, r in top if v > 0) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("--top", type=int, default=25)
    a = ap.parse_args()
    for n, listing in enumerate(listings(a.csv)):
        if n:
            print()
        summarize(*listing, a.top)


if __name__ == "__main__":
    main()
