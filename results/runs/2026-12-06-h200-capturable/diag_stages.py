"""Where the torch example's device output leaves its CPU output on one case: each expert call's stages (stage-1
GEMM h, the activation before and after the intermediate's rounding, its quantization zq, stage-2 GEMM y) recorded
on the CPU and on the device, and the largest difference of each stage, relative to the stage's largest magnitude.

  PYTHONPATH=build/cuda/python:kernels/external python3 diag_stages.py --seed 2 --filter 'GLOB'
"""
import argparse

import moe_harness
import torch
import torch_moe
from moe_harness.torch import to_torch

STAGES = {}


def recording(device_tag):
    real_fake_quantize, real_round_to, real_activation = (torch_moe.fake_quantize, torch_moe._round_to,
                                                          torch_moe._activation)

    def expert(a, fx, prefix, e, q, spec, clamp, device, bug):
        rec = STAGES.setdefault((device_tag, prefix, e), {})
        rec["a"] = a.detach().double().cpu()
        h = a @ torch_moe.dequantize(fx, prefix, "w13", e, q, device, bug).T
        if prefix + "w13_bias" in fx:
            h = h + torch_moe._to(fx[prefix + "w13_bias"], device)[e]
        rec["h"] = h.double().cpu()
        g, u = torch_moe._gate_up(h, spec["activation"]["layout"], bug)
        act = real_activation(g, u, spec["activation"], clamp)
        rec["act"] = act.double().cpu()
        z = real_round_to(act, spec["dtypes"]["intermediate"])
        rec["z"] = z.double().cpu()
        zq = real_fake_quantize(z, q)
        rec["zq"] = zq.double().cpu()
        y = zq @ torch_moe.dequantize(fx, prefix, "w2", e, q, device, bug).T
        if prefix + "w2_bias" in fx:
            y = y + torch_moe._to(fx[prefix + "w2_bias"], device)[e]
        rec["y"] = y.double().cpu()
        return y
    return expert


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=2)
    ap.add_argument("--filter", action="append", required=True)
    a = ap.parse_args()
    real_expert = torch_moe.expert
    for case in moe_harness.suite("smoke", filter=a.filter, seed=a.seed):
        fx = case.fixture()
        STAGES.clear()
        for dev in ("cpu", "cuda"):
            torch_moe.expert = recording(dev)
            out = case.new_output()
            torch_moe.TorchMoe(device=dev, capturable=True)(fx, out)
            v = case.judge(to_torch(out).clone())
            print(f"{case.id} {dev}: {v.status} {v.failed_check or ''} min_cos {v.metrics.get('min_cos')}")
        torch_moe.expert = real_expert
        worst = {}
        for (dev, prefix, e), rec in STAGES.items():
            if dev != "cpu" or ("cuda", prefix, e) not in STAGES:
                continue
            other = STAGES[("cuda", prefix, e)]
            for k, v in rec.items():
                d = (v - other[k]).abs().max().item() / max(v.abs().max().item(), 1e-30)
                n = int((v != other[k]).sum())
                if k not in worst or d > worst[k][0]:
                    worst[k] = (d, n, f"{prefix}expert {e}")
        for k in ("a", "h", "act", "z", "zq", "y"):
            if k in worst:
                d, n, where = worst[k]
                print(f"  {k:4s} max |cpu - cuda| / max|cpu| = {d:.3e} ({n} elements differ, {where})")


if __name__ == "__main__":
    main()
