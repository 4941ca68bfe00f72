#!/usr/bin/env python3
"""The fp8 GEMMs of the GPU panel members at one token, measured inside the nightly's T1 fp8 decode cases (issue 45:
the seed-10 mismatch_fraction false alarms of results/runs/2026-12-07-gpu-nightly-seeds).

  capture.py OUT_DIR SEED [SEED...]      (repository root; the cuda preset's module on PYTHONPATH, a CUDA device)

For every T1 decode case of the nightly with an fp8 scheme, every GPU member (vllm-torch, vllm-fastaccum,
vllm-triton) and seed, the case is judged (envelope always, no token probes) and every fp8 GEMM the member's first
call makes is recorded: its error against an fp64 product of the same fp8 operands, per output element, as a
fraction of ||a_i|| ||w_j|| (the unit of the envelope's accumulation model, reference/moe/ensemble.cpp), beside the
exact value in the same unit. Writes OUT_DIR/gemm-SEED.npz (arrays "i/err", "i/exact", "i/k") and
OUT_DIR/verdicts-SEED.jsonl (one line per judged case: member, seed, id, status, failed check, mismatch fraction,
envelope's largest member and the limit, the GEMMs' indices and shapes). At seed 10 the two false-alarm cases' GEMMs
are also kept whole (OUT_DIR/full-10.npz: operands as fp16, exact for e4m3 values, and the fp32 results), and the
members' outputs (OUT_DIR/out-SEED.npz), so that the CPU can replay the hardware's GEMMs in the NumPy member.
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, "kernels/panel")
import moe_harness  # noqa: E402
import panel_torch  # noqa: E402
from panel_members import make  # noqa: E402

FA = ("qwen3.5-35b-a3b/tp4/fp8ch-fnuz.tok-q224+sh.fp8ch.tok/silu/T1/decode/atomic",
      "qwen3.5-35b-a3b/tp4/mxfp4.a16-rceil+sh.fp8ch.tok/silu/T1/decode/atomic")
MEMBERS = ("vllm-torch", "vllm-fastaccum", "vllm-triton")
calls = []  # (a, w, out) of the member's current call; None while not recording
recording = [False]


def recorder(dot):
    def wrapped(self, a, w):
        out = dot(self, a, w)
        if recording[0]:
            calls.append((np.array(a, np.float32), np.array(w, np.float32), np.array(out, np.float32)))
        return out
    return wrapped


for cls in (panel_torch.TorchVllmStyle, panel_torch.TritonVllmStyle):
    cls._fp8_dot = recorder(cls.__dict__["_fp8_dot"])


class FirstCall:
    """The member, recording the fp8 GEMMs of its first call only (a later call is a probe's)."""

    def __init__(self, member):
        self.m, self.n, self.out = member, 0, None
        self.id, self.version, self.needs_device = member.id, member.version, member.needs_device

    def contract_points(self, spec):
        return self.m.contract_points(spec)

    def __getattr__(self, name):
        return getattr(self.m, name)

    def __call__(self, fx, out):
        self.n += 1
        recording[0] = self.n == 1
        try:
            r = self.m(fx, out)
        finally:
            recording[0] = False
        if self.n == 1:
            self.out = np.array(np.asarray(out)).copy()
        return r


def main():
    out_dir, seeds = sys.argv[1], [int(s) for s in sys.argv[2:]]
    os.makedirs(out_dir, exist_ok=True)
    for seed in seeds:
        gemm, full, outs = {}, {}, {}
        lines = open(os.path.join(out_dir, f"verdicts-{seed}.jsonl"), "w")
        suite = moe_harness.suite("nightly", filter=["*/T1/decode/*"], seed=seed)
        for case in suite:
            if "fp8" not in case.id:
                continue
            for name in MEMBERS:
                calls.clear()
                k = FirstCall(make(name, seed))
                v = case.run(k, kernel_id=k.id, device="cuda" if k.needs_device else None, envelope="always", token_probes=False)
                x = v.metrics
                keys = []
                for g, (a, w, o) in enumerate(calls):
                    exact = a.astype(np.float64) @ w.astype(np.float64).T
                    norm = np.linalg.norm(a.astype(np.float64), axis=1)[:, None] * \
                        np.linalg.norm(w.astype(np.float64), axis=1)[None, :]
                    norm[norm == 0] = 1
                    key = f"{name}|{case.id}|{g}"
                    gemm[key + "/err"] = ((o - exact) / norm).astype(np.float32)
                    gemm[key + "/exact"] = (exact / norm).astype(np.float32)
                    gemm[key + "/k"] = np.array(a.shape[1])
                    keys.append([g, list(a.shape), list(w.shape)])
                    if seed == 10 and case.id in FA:
                        full[key + "/a"], full[key + "/w"] = a.astype(np.float16), w.astype(np.float16)
                        full[key + "/out"] = o
                if k.out is not None:
                    outs[f"{name}|{case.id}"] = k.out
                lines.write(json.dumps({
                    "member": name, "seed": seed, "id": case.id, "status": v.status, "failed_check": v.failed_check,
                    "mismatch_fraction": x.get("mismatch_fraction"), "envelope_max": x.get("envelope_max_mismatch"),
                    "limit": x.get("threshold_mismatch_fraction"), "min_cos": x.get("min_cos"),
                    "max_rel": x.get("max_rel"), "gemms": keys}) + "\n")
                lines.flush()
            case.release()
        np.savez_compressed(os.path.join(out_dir, f"gemm-{seed}.npz"), **gemm)
        np.savez_compressed(os.path.join(out_dir, f"out-{seed}.npz"), **outs)
        if full:
            np.savez_compressed(os.path.join(out_dir, f"full-{seed}.npz"), **full)
        print(f"seed {seed}: done", flush=True)


main()
