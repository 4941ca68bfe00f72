"""For the GPU machine (not run here): is what failed smoke at seeds 1-2 the capturable layers, the GPU arithmetic, or
the host's reference? From the repository root, with a GPU build's module (cuda preset):

    PYTHONPATH=build/cuda/python:kernels/external python3 results/runs/2026-12-06-cpu-capturable/gpu_check.py [SEEDS]

1. The torch example on the host CPU (TorchMoe(), device cpu: the layer that passes smoke at seeds 0-4 on the CPU VM,
   whose reference is built without AVX-512) judged against this host's reference: a failure here is the host's
   reference or envelope (-march=native on this host's CPU), not a GPU kernel.
2. Each example on cuda with capturable=True and False, the outputs compared bit for bit on the same fixture, and each
   judged (case.judge: the verdict without the probes): the Triton layers run the same GEMM programs on the same
   blocks, so they are expected identical; a verdict that fails with both is not the capturable layer's.
"""
import sys

import torch

import moe_harness
from moe_harness.torch import to_torch
from torch_moe import TorchMoe
from triton_moe import TritonMoe

seeds = [int(s) for s in (sys.argv[1] if len(sys.argv) > 1 else "1,2").split(",")]


def verdict(v):
    m = v.metrics
    return (f"{v.status}" + ("" if v.passed else f" ({v.reason[:160]})") +
            f" band {m.get('band_tokens')}/{m.get('band_allowance')}")


for seed in seeds:
    cases = list(moe_harness.suite("smoke", seed=seed))
    bad = [(c.id, v) for c in cases for v in [c.run(TorchMoe())] if not v.passed]
    print(f"seed {seed} step 1, TorchMoe() on the host CPU: {len(cases) - len(bad)}/{len(cases)} pass", flush=True)
    for cid, v in bad:
        print(f"   {cid}: {verdict(v)}", flush=True)
    for case in cases:
        fx = case.fixture()
        line = []
        for name, make in (("torch", TorchMoe), ("triton", TritonMoe)):
            outs, verdicts = [], []
            for capturable in (True, False):
                out = case.new_output()
                make(device="cuda", capturable=capturable)(fx, out)
                outs.append(to_torch(out).float().clone())
                verdicts.append(case.judge(out))
            differ = int(((outs[0] != outs[1]) & ~(outs[0].isnan() & outs[1].isnan())).sum())
            if differ or not all(v.passed for v in verdicts):
                line.append(f"{name}: {differ} elements differ; capturable {verdict(verdicts[0])}; "
                            f"default {verdict(verdicts[1])}")
        if line:
            print(f"seed {seed} step 2, {case.id}:\n   " + "\n   ".join(line), flush=True)
    print(f"seed {seed} step 2 done (cases not listed: both layers identical and passing)", flush=True)
