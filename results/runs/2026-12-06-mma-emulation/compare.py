#!/usr/bin/env python3
"""The emulated accumulator's statistics (emu-*.jsonl from emu_mma.py) beside the GPU members' on the same case and
seeds (results/runs/2026-12-06-gpu-after-maxima/logs/z/z-<member>.jsonl): gain effect and z, rounding_bias z,
slot_direction z, expert_partial z and effect, per seed.

Usage: compare.py EMU.jsonl [GPU.jsonl...]"""
import json
import sys

COLS = ("gain", "rounding_bias", "slot_direction", "expert_partial")


def row(label, r):
    s = r["systematic"]
    cells = [f"{s['gain'][1]:+.2e}"] + [f"{s[c][0]:+.2f}" for c in COLS] + [f"{s['expert_partial'][1]:+.3f}"]
    return f"| {label} | {r['seed']} | " + " | ".join(cells) + f" | {r['status']} |"


emu = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
case, seeds = emu[0]["id"], {r["seed"] for r in emu}
print(f"case {case}")
print("| kernel | seed | gain effect | gain z | rounding_bias z | slot_direction z | expert_partial z | expert_partial effect | status |")
print("|---|---|---|---|---|---|---|---|---|")
for r in sorted(emu, key=lambda r: (r["bits"], r["seed"])):
    print(row(f"emulated, {r['bits']} bits toward zero", r))
for path in sys.argv[2:]:
    for line in open(path):
        r = json.loads(line)
        if r["id"] == case and r["seed"] in seeds:
            print(row(r["member"] + " (H100)", r))
