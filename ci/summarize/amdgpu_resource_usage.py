#!/usr/bin/env python3
"""Registers, scratch, LDS and occupancy of every AMD GPU function, from clang's
`-Rpass-analysis=kernel-resource-usage` remarks (ci/hip-check-gfx942 builds with it and keeps the remark lines):

  amdgpu_resource_usage.py remarks.txt [--line]

clang prints per function a remark `Function Name: MANGLED`, then one remark per value: `SGPRs: n`, `VGPRs: n`,
`AGPRs: n`, `ScratchSize [bytes/lane]: n`, `Occupancy [waves/SIMD]: n`, `SGPRs Spill: n`, `VGPRs Spill: n`,
`LDS Size [bytes/block]: n`. The table has one row per function (names demangled by c++filt when it is on PATH),
sorted by name, with the file that defines it and, when a line starts with "[SOURCE] " (ci/hip-check-gfx942 tags
each with the source compiled) and that differs, the source: "rowwise_stages.hpp in fused_moe_mutants.hip"
(fused_moe_mutants.hip compiles fused_moe.hip's kernels again with the mutant hooks). A function reported twice with
the same usage keeps one row. Scratch or a
spill above 0 is what to look at first (registers spilled, or an array the compiler put in memory); occupancy is
waves per SIMD (at most 8 on gfx942). --line: one line (functions, the most VGPRs, how many use scratch, the lowest
occupancy). Exit 2, naming the file, when it lists no function.
"""
import argparse
import re
import shutil
import subprocess
import sys

FIELDS = (("SGPRs", "SGPRs"), ("VGPRs", "VGPRs"), ("AGPRs", "AGPRs"), ("ScratchSize [bytes/lane]", "scratch B/lane"),
          ("SGPRs Spill", "SGPR spill"), ("VGPRs Spill", "VGPR spill"), ("LDS Size [bytes/block]", "LDS B/block"),
          ("Occupancy [waves/SIMD]", "occupancy waves/SIMD"))


def parse(path):
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError as e:
        print(f"amdgpu_resource_usage: {path}: cannot read ({e})", file=sys.stderr)
        sys.exit(2)
    rows, cur = set(), None

    def flush():
        if cur is not None:
            rows.add((cur["name"], cur["source"], *(cur.get(k, -1) for k, _ in FIELDS)))

    for line in lines:
        m = re.search(r"^(?:\[(\S+)\] )?(?:.*/)?([^/:]+):\d+:\d+: remark:\s*Function Name: (\S+)", line)
        if m:
            flush()
            src = m.group(2) if not m.group(1) or m.group(1) == m.group(2) else f"{m.group(2)} in {m.group(1)}"
            cur = {"source": src, "name": m.group(3)}
            continue
        m = re.search(r"remark:\s*([A-Za-z][A-Za-z /\[\]]*?):\s*(\d+)\b", line)
        if m and cur is not None and m.group(1) in dict(FIELDS):
            cur[m.group(1)] = int(m.group(2))
    flush()
    if not rows:
        print(f"amdgpu_resource_usage: {path}: no 'Function Name' remark (was it built with "
              "-Rpass-analysis=kernel-resource-usage?)", file=sys.stderr)
        sys.exit(2)
    return sorted(rows)


def demangle(names):
    if not shutil.which("c++filt"):
        return {n: n for n in names}
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True).stdout.splitlines()
    return dict(zip(names, out)) if len(out) == len(names) else {n: n for n in names}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("remarks")
    ap.add_argument("--line", action="store_true")
    a = ap.parse_args()
    rows = parse(a.remarks)
    idx = {k: i + 2 for i, (k, _) in enumerate(FIELDS)}
    if a.line:
        scratch = sum(1 for r in rows if r[idx["ScratchSize [bytes/lane]"]] > 0)
        print(f"{len(rows)} GPU functions; most VGPRs {max(r[idx['VGPRs']] for r in rows)}, most SGPRs "
              f"{max(r[idx['SGPRs']] for r in rows)}; {scratch} use scratch; lowest occupancy "
              f"{min(r[idx['Occupancy [waves/SIMD]']] for r in rows)} waves/SIMD")
        return
    names = demangle(sorted({r[0] for r in rows}))
    print("| function | source | " + " | ".join(h for _, h in FIELDS) + " |")
    print("|---|---|" + "---:|" * len(FIELDS))
    for r in rows:
        name = names[r[0]].replace("|", "\\|")
        print(f"| `{name}` | {r[1]} | " + " | ".join("?" if v < 0 else str(v) for v in r[2:]) + " |")


if __name__ == "__main__":
    main()
