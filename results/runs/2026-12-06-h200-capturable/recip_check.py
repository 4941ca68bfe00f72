"""The torch example on the CPU with its quantizer scale divided two ways: correctly rounded (ieee: amax / qmax, the
contract) and as a CUDA device divides by a Python scalar (recip: amax times the fp32 reciprocal of qmax); smoke
seeds 1-2, one line per mode and seed with the failing cases.

  PYTHONPATH=build/cpu/python:kernels/external /usr/bin/python3 results/runs/2026-12-06-h200-capturable/recip_check.py
"""
import moe_harness, torch, torch_moe
from moe_harness.torch import to_torch
def recip(x, c):  # what a CUDA device does for x / python_scalar: x times the fp32 reciprocal
    return x * torch.tensor(1.0 / c, dtype=torch.float32)
for mode in ("ieee", "recip"):
    torch_moe._div = (lambda x, c: x / torch.full_like(x, c)) if mode == "ieee" else recip
    for seed in (1, 2):
        fails = []
        for case in moe_harness.suite("smoke", seed=seed):
            if case.gate(device="cpu")[0] != "run": continue
            fx = case.fixture(); out = case.new_output()
            torch_moe.TorchMoe(device="cpu")(fx, out)
            v = case.judge(to_torch(out).clone())
            if v.status != "pass": fails.append(case.id.split("/")[2] + "/" + case.id.split("/")[4] + " " + str(v.failed_check))
        print(mode, "seed", seed, len(fails), "fail:", fails, flush=True)
