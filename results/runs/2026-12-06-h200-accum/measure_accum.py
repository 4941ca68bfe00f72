#!/usr/bin/env python3
"""How precisely the GPU's matrix units accumulate (issue 45 item 3; docs/numerics.md "Where production pipelines
round"): for e4m3 operands A [M, K], W [N, K] drawn from normal(0, 1) and rounded to e4m3fn, every product-sum
C = A @ W^T of

  scaled_mm        torch._scaled_mm, unit scales, fp32 out, use_fast_accum=False (cuBLASLt promotes into fp32)
  scaled_mm_fast   the same with use_fast_accum=True
  triton_fp8       kernels/panel/panel_triton.py on fp8 operands (Triton's default accumulation: on sm_90 no
                   promotion, max_num_imprecise_acc = 2^30)
  triton_bf16      the same kernel on the same values in bf16 (fp32 accumulation)
  torch_bf16       torch.matmul in bf16 (bf16 out: its one output rounding included)
  torch_fp32       torch.matmul in fp32, TF32 off

against an fp64 GEMM of the same decoded values, per output element as a fraction of ||a_i|| * ||w_j||: mean, sd,
max, at K = 128, 512, 2048, 7168. Then the fit: the same operands through a simulated accumulator that adds each
32-wide K slice's exact dot (one wgmma k-step for fp8) and keeps N significant bits, rounding to nearest even
(rne) or toward zero (rz), for N = 8..24; per fp8 method and K, the N whose mean error is nearest (in log) the
measured one. A method whose error is the fp32 accumulator's (N = 24) is accum=f32; one with N < 24 is
accum=mmaN.

  measure_accum.py [--m 256] [--n 256] [--seed 0] [--json FILE]

Exit 0 measured, 2 bad arguments, 3 no CUDA device.
"""
import argparse
import json
import math
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "kernels", "panel"))

KS = (128, 512, 2048, 7168)
FP8_METHODS = ("scaled_mm", "scaled_mm_fast", "triton_fp8")
SLICE = 32


def operands(m, n, k, seed, dev):
    g = torch.Generator(device=dev).manual_seed(seed * 1000 + k)
    a = torch.randn(m, k, generator=g, device=dev).to(torch.float8_e4m3fn).float()
    w = torch.randn(n, k, generator=g, device=dev).to(torch.float8_e4m3fn).float()
    return a, w


def products(a, w):
    from panel_triton import matmul
    one = torch.ones((), device=a.device, dtype=torch.float32)
    a8, w8 = a.to(torch.float8_e4m3fn), w.to(torch.float8_e4m3fn)

    def scaled(fast):
        return torch._scaled_mm(a8, w8.t(), scale_a=one, scale_b=one, out_dtype=torch.float32, use_fast_accum=fast)

    torch.backends.cuda.matmul.allow_tf32 = False
    return {
        "scaled_mm": scaled(False),
        "scaled_mm_fast": scaled(True),
        "triton_fp8": matmul(a, w, torch.float8_e4m3fn),
        "triton_bf16": matmul(a, w, torch.bfloat16),
        "torch_bf16": (a.bfloat16() @ w.bfloat16().t()).float(),
        "torch_fp32": a @ w.t(),
    }


def stats(err):
    return {"mean": err.mean().item(), "sd": err.std().item(), "max": err.max().item()}


def keep_bits(x, bits, mode):
    """x (fp64) with `bits` significant bits: to nearest even (rne) or toward zero (rz)."""
    m, e = torch.frexp(x)  # x = m * 2^e, 0.5 <= |m| < 1
    s = torch.ldexp(m, torch.full_like(e, bits))
    s = torch.round(s) if mode == "rne" else torch.trunc(s)
    return torch.ldexp(s, e - bits)


def simulated_errors(a, w, ref, norm):
    """{(mode, bits): mean error} of the simulated limited-precision accumulator on these operands."""
    a64, w64 = a.double(), w.double()
    k = a.shape[1]
    slices = [a64[:, s:s + SLICE] @ w64[:, s:s + SLICE].t() for s in range(0, k, SLICE)]  # exact in fp64
    out = {}
    for mode in ("rne", "rz"):
        for bits in range(8, 25):
            acc = torch.zeros_like(ref)
            for p in slices:
                acc = keep_bits(acc + p, bits, mode)
            out[(mode, bits)] = ((acc - ref).abs() / norm).mean().item()
    return out


def fit(measured_mean, sim, mode):
    best = min(range(8, 25), key=lambda b: abs(math.log(max(sim[(mode, b)], 1e-300)) - math.log(max(measured_mean,
                                                                                                   1e-300))))
    return best, sim[(mode, best)]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--m", type=int, default=256)
    p.add_argument("--n", type=int, default=256)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json")
    a = p.parse_args()
    if a.m < 16 or a.n < 16 or a.m % 16 or a.n % 16:
        p.error("--m and --n take multiples of 16 (torch._scaled_mm's operands)")
    if not torch.cuda.is_available():
        print("measure_accum: no CUDA device", file=sys.stderr)
        return 3
    dev = "cuda"
    print(f"device {torch.cuda.get_device_name(0)}, torch {torch.__version__}, M {a.m}, N {a.n}, seed {a.seed}")
    report = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "m": a.m, "n": a.n,
              "seed": a.seed, "k": {}}
    for k in KS:
        x, w = operands(a.m, a.n, k, a.seed, dev)
        ref = x.double() @ w.double().t()
        norm = x.double().norm(dim=1)[:, None] * w.double().norm(dim=1)[None, :]
        row = {name: stats((c.double() - ref).abs() / norm) for name, c in products(x, w).items()}
        sim = simulated_errors(x, w, ref, norm)
        for name in FP8_METHODS:
            for mode in ("rne", "rz"):
                bits, mean = fit(row[name]["mean"], sim, mode)
                row[name][f"fit_{mode}"] = {"bits": bits, "simulated_mean": mean}
        row["simulated_mean"] = {f"{mode}{b}": v for (mode, b), v in sim.items()}
        report["k"][str(k)] = row
        for name in row:
            if name == "simulated_mean":
                continue
            r = row[name]
            fits = "".join(f"  fit {mode} N {r[f'fit_{mode}']['bits']}" for mode in ("rne", "rz") if f"fit_{mode}" in r)
            print(f"K {k:5d} {name:15s} mean {r['mean']:.3e} sd {r['sd']:.3e} max {r['max']:.3e}{fits}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
