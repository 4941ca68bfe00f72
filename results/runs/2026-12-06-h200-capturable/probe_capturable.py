"""Why the examples' capturable layers fail clean smoke cases at seeds 1-2 on the GPU: for each seed and smoke case,
the torch example's capturable and sorted-block layers on the device (and the capturable one on the CPU), each
judged by case.judge, and the two device outputs compared element by element. One line per (seed, case, variant)
with the verdict and the band's numbers, then the details of every failing verdict.

  PYTHONPATH=build/cuda/python:kernels/external python3 probe_capturable.py --seeds 1,2 [--filter GLOB]
"""
import argparse

import moe_harness
import torch
from moe_harness.torch import to_torch
from torch_moe import TorchMoe


def output(case, fx, kernel):
    out = case.new_output()
    kernel(fx, out)
    return to_torch(out).clone().cpu()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="1,2")
    ap.add_argument("--filter", default="*")
    ap.add_argument("--cpu", action="store_true", help="also the capturable layer on the CPU")
    a = ap.parse_args()
    failing = []
    for seed in [int(s) for s in a.seeds.split(",")]:
        for case in moe_harness.suite("smoke", filter=a.filter, seed=seed):
            if case.gate(device="cuda")[0] != "run":
                continue
            fx = case.fixture()
            variants = {"capturable-cuda": TorchMoe(device="cuda", capturable=True),
                        "sorted-cuda": TorchMoe(device="cuda", capturable=False)}
            if a.cpu:
                variants["capturable-cpu"] = TorchMoe(device="cpu", capturable=True)
            outs = {}
            for name, k in variants.items():
                outs[name] = output(case, fx, k)
                v = case.judge(outs[name])
                m = v.metrics
                print(f"seed {seed} {case.id} {name}: {v.status} {v.failed_check or ''} band {m.get('band_tokens')}/"
                      f"{m.get('band_allowance')} ratio {m.get('band_max_ratio')} min_cos {m.get('min_cos')} "
                      f"mismatch {m.get('mismatch_fraction')}", flush=True)
                if v.status != "pass":
                    failing.append((seed, case.id, name, v.details))
            d = (outs["capturable-cuda"].float() - outs["sorted-cuda"].float()).abs()
            rows = (d.amax(1) > 0).nonzero().flatten().tolist()
            print(f"seed {seed} {case.id} capturable-vs-sorted: {int((d > 0).sum())} elements differ, tokens {rows}, "
                  f"max {float(d.max()):.3e}", flush=True)
    for seed, cid, name, det in failing:
        print(f"\n==== seed {seed} {cid} {name}\n{det}")


if __name__ == "__main__":
    main()
