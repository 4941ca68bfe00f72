#!/usr/bin/env python3
"""Both sides of the floor cap on an fp8 case whose kernel declares accum=mma14: the panel's `vllm` member
(kernels/panel/panel_members.py, correct) declaring accum=mma14 as the GPU members do, its output x (1 + g) for
g = 0 (correct), 0.3 %, 0.5 % and 1 % (a gain bug), on the nightly's Qwen3.5 TP4 fp8 per-tensor T128 prefill case
at seeds 0-2, envelope always. One JSON line per verdict: status, failed check, the gain statistic's z, effect and
floor. Run with the module of the tree to judge (PYTHONPATH).

Usage: power_gain.py [SEEDS]"""
import json
import sys

import numpy as np

sys.path.insert(0, "kernels/panel")
import moe_harness  # noqa: E402
from panel_members import VllmStyle  # noqa: E402

CASE = "qwen3.5-35b-a3b/tp4/fp8pt.tok+sh.fp8ch.tok/silu/T128/prefill/atomic"


class Gained(VllmStyle):
    id = "vllm-mma14-gain"

    def __init__(self, g):
        super().__init__()
        self.g = g

    def rounding_contract(self, case):
        return super().rounding_contract(case) + ",accum=mma14"

    def forward(self, fx, spec):
        return super().forward(fx, spec) * np.float32(1 + self.g)


for seed in range(int(sys.argv[1]) if len(sys.argv) > 1 else 3):
    suite = moe_harness.suite("nightly", filter=CASE, seed=seed)
    for g in (0.0, 0.003, 0.005, 0.01):
        for case in suite:
            v = case.run(Gained(g), kernel_id=f"vllm-mma14-gain{g}", envelope="always", token_probes=False)
            s = next(x for x in v.systematic if x["name"] == "gain")
            print(json.dumps({"seed": seed, "g": g, "status": v.status, "failed_check": v.failed_check,
                              "gain": {k: s[k] for k in ("z", "effect", "effect_floor", "z_threshold")}}), flush=True)
            case.release()
