"""The capturable and the default layer of each example on the same fixture, compared bit for bit, over smoke at
SEED (one argument)."""
import sys
import torch
import moe_harness
from moe_harness.torch import to_torch
from torch_moe import TorchMoe
from triton_moe import TritonMoe

seed = int(sys.argv[1])
pairs = {"torch": (TorchMoe(capturable=True), TorchMoe()),
         "triton": (TritonMoe(device="cpu", capturable=True), TritonMoe(device="cpu"))}
for case in moe_harness.suite("smoke", seed=seed):
    fx = case.fixture()
    line = []
    for name, (cap, dyn) in pairs.items():
        outs = []
        for k in (cap, dyn):
            out = case.new_output()
            k(fx, out)
            outs.append(to_torch(out).float().clone())
        d = (outs[0] != outs[1]) & ~(outs[0].isnan() & outs[1].isnan())
        line.append(f"{name} {int(d.sum())} el differ" + (f" (max |d| {float((outs[0]-outs[1]).abs()[d].max()):.2e})" if d.any() else ""))
    print(f"{case.id}: " + "; ".join(line), flush=True)
