"""Why TritonMoe fails nightly cases on the H200 that TorchMoe passes: the grouped GEMM program's precision against
float64 beside torch's fp32 matmul, then each failing verdict of one seed (until a deadline) with the Triton output's
distance from the torch output on the same fixture.  python3 triton_diag.py SECONDS"""
import sys
import time

import torch

import moe_harness
from moe_harness.torch import to_torch
from torch_moe import TorchMoe
from triton_moe import TritonMoe, grouped_gemm

torch.manual_seed(0)
a = torch.randn(64, 2048, device="cuda")
b = torch.randn(1, 256, 2048, device="cuda")
ids = torch.arange(64, dtype=torch.int32, device="cuda")
c = grouped_gemm(a, b, None, torch.ones(64, device="cuda"), ids, torch.zeros(4, dtype=torch.int32, device="cuda"),
                 64, 1, 0)
ref = a.double() @ b[0].double().T
for name, y in (("triton grouped_gemm", c), ("torch fp32 matmul", a @ b[0].T)):
    print(f"{name}: max |y - ref| / max |ref| = {((y.double() - ref).abs().max() / ref.abs().max()).item():.3e}")
sys.stdout.flush()

deadline = time.time() + float(sys.argv[1])
n = bad = 0
for case in moe_harness.suite("nightly", seed=1):
    if time.time() > deadline:
        break
    n += 1
    v = case.run(TritonMoe(device="cuda"))
    if v.passed or v.status == "skip":
        continue
    bad += 1
    fx = case.fixture()
    o1, o2 = case.new_output(), case.new_output()
    TorchMoe(device="cuda")(fx, o1)
    TritonMoe(device="cuda")(fx, o2)
    t1, t2 = to_torch(o1).float(), to_torch(o2).float()
    print(f"--- {case.id}: triton vs torch max abs {(t1 - t2).abs().max().item():.3e}, "
          f"torch max {t1.abs().max().item():.3e}; torch verdict {case.judge(o1).status}")
    print(v.explain()[:1200])
    sys.stdout.flush()
    case.release()
print(f"{n} cases, {bad} failed")
