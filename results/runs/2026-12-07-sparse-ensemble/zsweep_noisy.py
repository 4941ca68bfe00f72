#!/usr/bin/env python3
"""kernels/panel/run_panel.py with the CPU noise members of results/runs/2026-12-07-slot-requant added: `noisyX`
is the GPU members' pipeline (panel_torch.TorchVllmStyle) with its fp8 GEMMs as an fp64 product plus
X * 2^-14 ||a|| ||w|| times a standard normal per output element (X = 0.2: about the H100's mean fast-accumulation
error at the nightly's K). Every run_panel argument applies; --members may name noisyX next to the panel's members.

  zsweep_noisy.py --suite nightly --filter CASE... --members noisy0.2 --seeds 10 --envelope always --jsonl F

Run from the repository root with a build's Python module on PYTHONPATH (as slot_requant.py)."""
import sys

sys.path.insert(0, "kernels/panel")
sys.path.insert(0, "results/runs/2026-12-07-slot-requant")
import panel_members  # noqa: E402
import run_panel  # noqa: E402
import slot_requant_member  # noqa: E402

names = [m for a in sys.argv for m in a.split(",") if m.startswith("noisy")]
_make = panel_members.make


def make(name, seed=0):
    return slot_requant_member.noisy(float(name[5:])) if name.startswith("noisy") else _make(name, seed)


run_panel.MEMBERS = tuple(panel_members.MEMBERS) + tuple(n for n in names if n not in panel_members.MEMBERS)
run_panel.make = make
sys.exit(run_panel.main())
