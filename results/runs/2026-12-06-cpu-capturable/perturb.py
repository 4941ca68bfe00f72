"""The torch example's layer (kernels/external/torch_moe.py) over smoke at the given seeds with its GEMMs or its
activation computed another way, to see which arithmetic moves the verdicts the capturable layers failed on the GPU.

Usage: perturb.py SEEDS VARIANT, SEEDS as 1,2; VARIANT names the layer (capturable or blocks) and one GEMM or
activation change, e.g. capturable-gemmseq. The GEMM changes (both stages, routed and shared experts):
  gemm64      fp64 products and sums, rounded to fp32 once (the most exact fp32 result)
  gemmseq     fp32, one product and one sum rounded per k, k in order (a naive loop, no FMA)
  gemmtf32    operands rounded to TF32 (10 mantissa bits, nearest, ties away: cvt.rna.tf32.f32), exact sums
  gemmtf32rz  operands truncated to TF32
  gemmf16     operands rounded to fp16, exact sums
  gemmbf16    operands rounded to bf16, exact sums; gemmbf16a / gemmbf16w only the activations / only the weights
The activation changes: act64 (the activation in fp64, rounded once), sigfp32 (sigmoid as 1 / (1 + exp(-x)) in fp32)."""
import sys
import time

import torch

import moe_harness
import torch_moe
from torch_moe import TorchMoe


def tf32(x, truncate=False):
    b = x.contiguous().view(torch.int32)
    return ((b if truncate else b + 0x1000) & ~0x1FFF).view(torch.float32)


def gemmseq(a, w):
    acc = torch.zeros((a.shape[0], w.shape[0]), dtype=torch.float32)
    for k in range(a.shape[1]):
        acc = acc + a[:, k:k + 1] * w[:, k]
    return acc


def exact(ra, rw):
    return lambda a, w: (ra(a).double() @ rw(w).double().T).float()


same = lambda x: x
bf16 = lambda x: x.bfloat16()
GEMMS = {"gemm64": exact(same, same), "gemmseq": gemmseq, "gemmtf32": exact(tf32, tf32),
         "gemmtf32rz": exact(lambda x: tf32(x, True), lambda x: tf32(x, True)),
         "gemmf16": exact(lambda x: x.half(), lambda x: x.half()), "gemmbf16": exact(bf16, bf16),
         "gemmbf16a": exact(bf16, same), "gemmbf16w": exact(same, bf16)}
orig_activation = torch_moe._activation


def expert_with(gemm):
    """torch_moe.expert with its two GEMMs replaced."""
    def expert(a, fx, prefix, e, q, spec, clamp, device, bug):
        h = gemm(a, torch_moe.dequantize(fx, prefix, "w13", e, q, device, bug))
        if prefix + "w13_bias" in fx:
            h = h + torch_moe._to(fx[prefix + "w13_bias"], device)[e]
        g, u = torch_moe._gate_up(h, spec["activation"]["layout"], bug)
        z = torch_moe.fake_quantize(torch_moe._round_to(torch_moe._activation(g, u, spec["activation"], clamp),
                                                        spec["dtypes"]["intermediate"]), q)
        y = gemm(z, torch_moe.dequantize(fx, prefix, "w2", e, q, device, bug))
        if prefix + "w2_bias" in fx:
            y = y + torch_moe._to(fx[prefix + "w2_bias"], device)[e]
        return y
    return expert


seeds, variant = [int(s) for s in sys.argv[1].split(",")], sys.argv[2]
parts = variant.split("-")
for p in parts[1:]:
    if p in GEMMS:
        torch_moe.expert = expert_with(GEMMS[p])
    elif p == "act64":
        torch_moe._activation = lambda g, u, act, clamp: orig_activation(g.double(), u.double(), act, clamp).float()
    elif p == "sigfp32":
        torch.sigmoid = lambda x: 1.0 / (1.0 + torch.exp(-x))
    else:
        sys.exit(f"unknown change {p!r}")
for seed in seeds:
    t = time.time()
    vs = [c.run(TorchMoe(capturable=parts[0] == "capturable")) for c in moe_harness.suite("smoke", seed=seed)]
    bad = [v for v in vs if not v.passed]
    print(f"seed {seed} {variant}: {len(vs) - len(bad)}/{len(vs)} pass ({time.time() - t:.0f} s)", flush=True)
    for v in bad:
        m = v.metrics
        print(f"   {v.status} {v.id}: {v.reason[:240]} | band {m.get('band_tokens')}/{m.get('band_allowance')}",
              flush=True)
