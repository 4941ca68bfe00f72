#!/usr/bin/env python3
"""A synthetic run report (schema_version 1) of any size, for the HTML report's scale test: the shape of a nightly run
on two kernels without running one. Token counts follow the nightly suite's mix (decode 1-16 tokens, prefill 128 to
8192); passing cases have the per-token cos and rel of a bf16 kernel (1 - cos about 1e-6, rel about 3e-3), failing
cases a run of bad tokens, harness errors no tokens, skips one of a few reasons and nothing measured.

Usage as a module: make_report(n_cases, seed, fail=, error=, skip=) -> dict; as a script:
synthetic_report.py N OUT.json [SCHEMA.json]  (validates the result when a schema is given).
"""
import json
import sys

import numpy as np

# (tokens, weight): the nightly suite's token counts and how often each occurs there.
TOKEN_MIX = [(1, 22), (2, 4), (3, 9), (4, 7), (5, 18), (7, 5), (8, 4), (12, 4), (15, 3), (16, 24), (128, 13),
             (512, 3), (2048, 2), (8192, 2)]
SKIP_REASONS = [
    "no GPU here: no CUDA/HIP runtime in this build (device cases skip; --require-device fails them)",
    "targets: arch gfx950 required, device is gfx942",
    "host-contract declines: 1.2e+10 FLOPs above --host-budget 4e+09",
    "targets: cu 304 required, device has 80",
]
SCHEMES = ["bf16.a16", "fp8blk.g128", "fp8ch.tok", "mxfp8.mx", "mxfp4.a16-rceil"]
KERNELS = [("host-contract", "0.1"), ("gpu-fused-moe", "0.1")]


def _metrics(cos, rel, thr_cos, thr_rel):
    return {"bit_mismatches": 0.0, "ideal_max_rel": float(rel.max()) * 1.1, "ideal_min_cos": float(cos.min()) - 1e-7,
            "kernel_us": 812.5, "linearity_mismatches": 0.0, "max_abs": float(rel.max()) * 4.0,
            "max_rel": float(rel.max()), "min_cos": float(cos.min()), "mismatch_fraction": 0.0, "non_finite": 0.0,
            "out_norm": 64.0, "ref_norm": 64.0, "rerun_mismatches": 0.0, "rerun_unwritten": 0.0,
            "threshold_max_rel": thr_rel, "threshold_min_cos": thr_cos, "unwritten": 0.0}


def _details(cos, rel):
    worst = np.argsort(-rel, kind="stable")[:5]
    s = (f"  min_cos {cos.min():.6f} (token {int(cos.argmin())}), max_rel {rel.max():.3e} (token {int(rel.argmax())}),"
         f" max_abs {rel.max() * 4:.3e}, mismatch_fraction 0.000e+00 (0 elements),\n"
         "  non_finite 0, unwritten 0, bit_mismatches 0, ||ref|| 64.00, ||out|| 64.00\n"
         "  worst tokens (token: cos, rel, experts, weights):\n")
    for t in worst:
        s += (f"    {int(t)}: cos {cos[t]:.6f}, rel {rel[t]:.3e}, experts [9, 1, 8, 10], "
              "weights [0.4008, 0.2818, 0.1870, 0.1304]\n")
    return s


def make_case(rng, i, tokens, status, skip_reason=""):
    """Case i: (case i // 2, kernel i % 2), so every case id appears once per kernel."""
    kernel = KERNELS[i % len(KERNELS)][0]
    scheme = SCHEMES[(i // 2) % len(SCHEMES)]
    cid = (f"custom-h4096i1536e128k8-softmax_topk/tp1/{scheme}/silu/T{tokens}/"
           f"{'decode' if tokens <= 16 else 'prefill'}/atomic/v{i // 2}")
    c = {"id": cid, "kernel": kernel, "status": status, "reason": "", "failed_check": "",
         "source": f"cases/nightly.yaml:{10 + i // 2}", "variant": "", "metrics": {}, "token_cos": [],
         "token_rel": [], "timing": {"kernel_us": 0.0, "reference_s": 0.0}, "fixture_fingerprint": "0" * 16,
         "details": ""}
    if status == "skip":
        c["reason"] = skip_reason
        return c
    c["fixture_fingerprint"] = f"{(0x9E3779B97F4A7C15 * (i // 2 + 1)) & (2**64 - 1):016x}"
    if status == "error":
        c["failed_check"] = "harness_error"
        c["reason"] = "harness error: GPU fault: an illegal memory access was encountered (hipErrorIllegalAddress)"
        return c
    cos = 1.0 - np.abs(rng.normal(0.0, 1.5e-6, tokens))
    rel = np.abs(rng.normal(3e-3, 6e-4, tokens))
    c["variant"] = "grouped-t8/two_stage/atomic" if tokens > 16 else "grouped-t2/two_stage/atomic"
    c["timing"] = {"kernel_us": 812.5, "reference_s": 0.05}
    _measured(c, cos, rel)
    if status == "fail":
        fail_case(c, rng)
    return c


def _measured(c, cos, rel):
    c["metrics"] = _metrics(cos, rel, 0.9999, 0.012)
    c["token_cos"], c["token_rel"] = cos.tolist(), rel.tolist()
    c["details"] = _details(cos, rel)


def fail_case(c, rng):
    """Turns a measured case into a failing one: an eighth of its tokens (at least one) far off."""
    cos, rel = np.array(c["token_cos"]), np.array(c["token_rel"])
    bad = rng.integers(0, cos.size, max(1, cos.size // 8))
    cos[bad] = 0.9 + 0.05 * rng.random(bad.size)
    rel[bad] = 0.2 + 0.2 * rng.random(bad.size)
    _measured(c, cos, rel)
    c["status"], c["failed_check"] = "fail", "min_cos"
    c["reason"] = f"min_cos: {cos.min():.6f} < 0.9999 at token {int(cos.argmin())}"


_TOKEN_P = np.array([w for _, w in TOKEN_MIX], dtype=float) / sum(w for _, w in TOKEN_MIX)


def make_report(n_cases, seed=7, fail=0.03, error=0.005, skip=0.10):
    rng = np.random.default_rng(seed)
    u = rng.random(n_cases)
    tokens = rng.choice([t for t, _ in TOKEN_MIX], p=_TOKEN_P, size=(n_cases + 1) // 2)
    cases = []
    for i in range(n_cases):
        status = ("error" if u[i] < error else "fail" if u[i] < error + fail
                  else "skip" if u[i] < error + fail + skip else "pass")
        cases.append(make_case(rng, i, int(tokens[i // 2]), status, SKIP_REASONS[i % len(SKIP_REASONS)]))
    count = {s: sum(c["status"] == s for c in cases) for s in ("pass", "fail", "skip", "error")}
    return {
        "schema_version": 1,
        "provenance": {
            "harness_version": "0.1.0", "harness_commit": "0123456789ab",
            "kernels": [{"id": k, "version": v} for k, v in KERNELS],
            "device": {"name": "AMD Instinct MI300X", "vendor": "AMD", "arch": "gfx942", "compute_units": 304,
                       "driver_version": "6.8.5", "runtime_version": "6.2.41133", "message": ""},
            "suite": "nightly", "suite_file": "cases/nightly.yaml", "suite_hash": "00000000deadbeef",
            "seed": "case", "start_time": "2026-12-01T00:00:00Z", "end_time": "2026-12-01T01:00:00Z",
            "host": "synthetic"},
        "summary": {"total": len(cases), **count},
        "cases": cases,
    }


def main():
    report = make_report(int(sys.argv[1]))
    if len(sys.argv) > 3:
        import jsonschema
        jsonschema.validate(report, json.load(open(sys.argv[3])))
    json.dump(report, open(sys.argv[2], "w"))


if __name__ == "__main__":
    main()
