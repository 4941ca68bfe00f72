#!/usr/bin/env python3
"""Every expert_partial component's own z (before the largest is taken and corrected), with the basis se's normal z
and its sign-flip z, over seeds: whether a deflated maximum comes from the correction or from the components.
  percomponent.py --kernel noisyX|double --seeds N CASE_ID     (repository root, build/cpu/python on PYTHONPATH)"""
import argparse
import sys

import numpy as np

sys.path.insert(0, "results/runs/2026-12-08-basis-cost")
sys.path.insert(0, "results/runs/2026-12-08-basis-se")
import moe_harness  # noqa: E402
from basis_cost import components  # noqa: E402
from basis_se import member, slots_of  # noqa: E402
from panel_formats import round_to  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--kernel", required=True)
p.add_argument("--seeds", type=int, default=10)
p.add_argument("case")
a = p.parse_args()
noise = float(a.kernel[5:]) if a.kernel.startswith("noisy") else 0.0
zs, sfs = [], []
for seed in range(a.seeds):
    for case in moe_harness.suite("nightly", filter=[a.case], seed=seed):
        fx = case.fixture()
        spec = fx.spec
        out = spec["dtypes"]["output"]
        ref = member(0.0, "f32", True)
        r = round_to(ref.forward(fx, spec), out).astype(np.float64)
        ker = member(noise, "bf16" if a.kernel == "double" else "f32", False, None, seed + 1000)
        o = round_to(ker.forward(fx, spec), out).astype(np.float64)
        _, ep, _ = components(r, o, slots_of(fx, spec, ref.rec, ref.scales, ker.scales), "exact", {})
        zs += [c[0] for c in ep]
        sfs += [c[2] for c in ep]
        print(seed, " ".join(f"{c[0]:+.2f}/{c[2]:+.2f}" for c in ep), flush=True)
        case.release()
zs, sfs = np.array(zs), np.array(sfs)
print(f"{a.kernel} {a.case}: {len(zs)} components, RMS z: normal {np.sqrt(np.mean(zs ** 2)):.3f}, "
      f"sign-flip {np.sqrt(np.mean(sfs ** 2)):.3f}")
