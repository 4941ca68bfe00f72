#!/usr/bin/env python3
"""The distribution of mismatch_fraction at one token under a noise model of the fp8 GEMMs, on the CPU: the GPU
members' pipeline (panel_torch.TorchVllmStyle, its fp8 GEMMs on the fn grid replaced by an fp64 product of the same
operands plus a draw of accumulation error per output element, in units of ||a_i|| ||w_j||), judged by the case
(case.run, its declared accum=mma14, no token probes, the envelope always simulated: its limits in every
verdict) DRAWS times per case and seed.

  count_dist.py MODEL SEED DRAWS [CAPTURE_DIR]     (repository root; the cpu preset's module on PYTHONPATH)

MODEL: env14  the envelope's accumulation model (reference/moe/ensemble.cpp) at 14 bits: 2^-14 (xi - sign v), xi
              uniform with unit variance;
       boot   each element's error drawn from the hardware's measured errors of the GEMM of the same K
              (capture.py's gemm-*.npz under CAPTURE_DIR, every member with fast accumulation, every seed).
Prints, per case, the draws' mismatch fractions over every token: mean, quantiles, largest, and how often 2 x the
largest of 8 draws (the envelope's limit rule) is exceeded by a further draw; then the verdicts, the largest mismatch
fraction they judged (strict_mismatch_fraction: the requantization band's tokens excluded), and how many draws the
check before the band would have failed (every token's elements beyond the envelope's limit).
"""
import glob
import os
import sys

import numpy as np

sys.path.insert(0, "kernels/panel")
import moe_harness  # noqa: E402
import panel_torch  # noqa: E402

CASES = ("qwen3.5-35b-a3b/tp4/fp8ch-fnuz.tok-q224+sh.fp8ch.tok/silu/T1/decode/atomic",
         "qwen3.5-35b-a3b/tp4/mxfp4.a16-rceil+sh.fp8ch.tok/silu/T1/decode/atomic")


class Noisy(panel_torch.TorchVllmStyle):
    id = "noisy-fp8-gemm"

    def __init__(self, model, rng, boot):
        super().__init__("cpu")
        self.fp8_units, self.model, self.rng, self.boot = True, model, rng, boot

    def _fp8_dot(self, a, w):
        a64, w64 = a.astype(np.float64), w.astype(np.float64)
        exact = a64 @ w64.T
        norm = np.linalg.norm(a64, axis=1)[:, None] * np.linalg.norm(w64, axis=1)[None, :]
        if self.model == "env14":
            xi = self.rng.uniform(-np.sqrt(3), np.sqrt(3), exact.shape)
            e = 2.0 ** -14 * (xi - np.sign(exact))
        else:
            pool = self.boot[a.shape[1]]
            e = pool[self.rng.integers(0, pool.size, exact.shape)]
        return (exact + e * norm).astype(np.float32)

    def deterministic(self, case):
        return False  # each call draws new errors: no bit-exact rerun


def main():
    model, seed, draws = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    boot = {}
    if model == "boot":
        for f in glob.glob(os.path.join(sys.argv[4], "gemm-*.npz")):
            z = np.load(f)
            for key in z.files:
                if key.endswith("/err") and not key.startswith("vllm-torch|"):
                    boot.setdefault(int(z[key[:-4] + "/k"]), []).append(z[key].ravel().astype(np.float64))
        boot = {k: np.concatenate(v) for k, v in boot.items()}
    rng = np.random.default_rng(seed)
    for case in moe_harness.suite("nightly", filter=list(CASES), seed=seed):
        m = Noisy(model, rng, boot)
        x, strict, failed, over = [], [], [], 0
        for _ in range(draws):
            v = case.run(m, kernel_id=m.id, token_probes=False, envelope="always")
            x.append(v.metrics["mismatch_fraction"])
            strict.append(v.metrics.get("strict_mismatch_fraction", x[-1]))
            over += x[-1] > v.metrics["threshold_mismatch_fraction"]  # the check before the band: every token
            if v.status != "pass":
                failed.append(v.failed_check)
                if os.environ.get("EXPLAIN"):
                    print(v.explain(), flush=True)
        x = np.array(x)
        lim = 2 * np.array([x[i:i + 8].max() for i in range(0, draws - 8, 9)])
        nxt = x[8::9][:lim.size]
        print(f"{case.id} seed {seed} {model}: {draws} draws, mismatch mean {x.mean():.3e}, median "
              f"{np.median(x):.3e}, p90 {np.percentile(x, 90):.3e}, max {x.max():.3e} ({x.max() * 2048:.0f} of 2048); "
              f"a draw beyond 2 x the largest of the 8 before it: {np.mean(nxt > lim):.3f} of {lim.size}", flush=True)
        print(f"  verdicts: {draws - len(failed)} pass, {len(failed)} not ({', '.join(sorted(set(failed)))}); the judged "
              f"(strict) mismatch fraction: max {max(strict):.3e}; over every token, beyond the case's limit: {over}",
              flush=True)
        print("  elements outside the tolerance, sorted: " + " ".join(str(int(round(v * 2048))) for v in np.sort(x)),
              flush=True)
        case.release()


main()
