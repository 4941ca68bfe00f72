#!/usr/bin/env python3
"""Every expert_partial component's own z (before the largest is taken and corrected), with the basis se's normal z
and its sign-flip z, over seeds: whether a deflated maximum comes from the correction or from the components.
  percomponent.py --kernel noisyX|double --seeds N CASE_ID     (repository root, build/cpu/python on PYTHONPATH)"""
import argparse
import sys

import numpy as np

sys.path.insert(0, "results/runs/2026-12-08-basis-cost")
sys.path.insert(0, "results/runs/2026-12-08-basis-se")
from basis_cost import components  # noqa: E402
from basis_se import outputs  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--kernel", required=True)
p.add_argument("--seeds", type=int, default=10)
p.add_argument("case")
a = p.parse_args()
zs, sfs = [], []
for seed, _, _, r, o, per, _ in outputs(a.kernel, None, a.seeds, 0, [a.case]):
    _, ep, _ = components(r, o, per, "exact", {})
    zs += [c[0] for c in ep]
    sfs += [c[2] for c in ep]
    print(seed, " ".join(f"{c[0]:+.2f}/{c[2]:+.2f}" for c in ep), flush=True)
zs, sfs = np.array(zs), np.array(sfs)
print(f"{a.kernel} {a.case}: {len(zs)} components, RMS z: normal {np.sqrt(np.mean(zs ** 2)):.3f}, "
      f"sign-flip {np.sqrt(np.mean(sfs ** 2)):.3f}")
