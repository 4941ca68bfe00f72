#!/usr/bin/env python3
"""`expert_partial`'s per-slot z three ways, on the CPU (issue 45: the routes this record's RUN.md names). Each routed
token-slot's gain beta = <e_t, s> / <s, s> (e_t the token's output error against the contract reference, s the
slot's bf16 contribution) over its standard error
  (a) element-wise HC0, as verdict/systematic_partial.cpp computes it (before the envelope's scale);
  (b) in the intermediate's coordinates: d = G^-1 W^T e_t (W the slot's expert's W2 [H, I], G = W^T W) and
      var = sum_i d_i^2 (W^T s)_i^2 / |s|^4, the error's own independent parts being the intermediate's elements;
  (c) as (b) on the residual: d - beta a (a = G^-1 W^T s, the slot's gain removed), each coordinate divided by
      1 - h_i, h_i = a_i (W^T s)_i / (a . W^T s) (HC3).
The contract reference is the `vllm` member (bit-identical to it on these cases); the kernels are noisyX
(slot_requant_member.py). Prints per (kernel, seed) the RMS and largest |z| of each, how many slots pass |z| = 4
(a normal's rate: 6e-5), and the median |z| of a slot made 5 % wrong (the statistic's floor, MUTANT_GAIN x s added
to its token's error) under each; then per kernel the RMS pooled over the seeds.

  slot_se.py CASE FIRST_SEED SEEDS KERNEL...   (repository root; the cpu preset's module on PYTHONPATH)
"""
import math
import sys

import numpy as np

sys.path.insert(0, "kernels/panel")
sys.path.insert(0, "results/runs/2026-12-07-slot-requant")
import moe_harness  # noqa: E402
import panel_members  # noqa: E402
from panel_formats import round_to  # noqa: E402
from panel_weights import dequantized, stored  # noqa: E402

_expert, _rr = panel_members.Member.expert, panel_members.Member.routed_rows
cap = {"rows": [], "slots": {}}
POOL = {}
MUTANT_GAIN = 0.05  # the expert_partial floor


def routed_rows(self, fx, spec):
    for e, tok, j, w in _rr(self, fx, spec):
        cap["rows"].append((e, tok, j))
        yield e, tok, j, w


def expert(self, a, fx, prefix, e, q, spec, *rest, **kw):
    y = _expert(self, a, fx, prefix, e, q, spec, *rest, **kw)
    if prefix == "":
        e0, tok, j = cap["rows"].pop(0)
        for r, (t, jj) in enumerate(zip(tok, j)):
            cap["slots"][(int(t), int(jj))] = (e0, round_to(y[r:r + 1], "bf16")[0].astype(np.float64))
    return y


panel_members.Member.expert, panel_members.Member.routed_rows = expert, routed_rows


def output(m, fx, spec):
    cap["rows"].clear(); cap["slots"].clear()
    if hasattr(m, "flavor"):
        m.flavor = spec["quant"]["flavor"]
    y = round_to(m.forward(fx, spec), spec["dtypes"]["output"]).astype(np.float64)
    return y, dict(cap["slots"])


def kernel(name, seed):
    if name.startswith("noisy"):
        import slot_requant_member
        return slot_requant_member.noisy(float(name[5:]))
    return panel_members.make(name, seed)


def main():
    case_id, first, n, names = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
    for seed in range(first, first + n):
        for case in moe_harness.suite("nightly", filter=[case_id], seed=seed):
            fx, spec = case.fixture(), case.spec
            q = spec["quant"]
            ref, slots = output(panel_members.make("vllm"), fx, spec)
            w2, gram = {}, {}
            for name in names:
                out, _ = output(kernel(name, seed), fx, spec)
                err = out - ref
                za, zb, zc, zr = [], [], [], []
                for (t, j), (e, s) in slots.items():
                    ss = s @ s
                    if not ss > 0:
                        continue
                    if e not in w2:
                        w2[e] = dequantized(*stored(fx, "", "w2", e, q), "w2").astype(np.float64)  # e: local
                    W, et = w2[e], err[t]
                    beta = (et @ s) / ss
                    va = np.sum(s * s * et * et) / ss ** 2
                    # the error and the slot in the intermediate's coordinates by least squares (G = W^T W), the
                    # slot's gain removed there, each coordinate's leverage undone (HC3)
                    if e not in gram:
                        gram[e] = np.linalg.cholesky(W.T @ W)
                    L = gram[e]
                    solve = lambda v: np.linalg.solve(L.T, np.linalg.solve(L, v))  # noqa: E731
                    a_hat, ga = solve(W.T @ s), W.T @ s
                    lev = np.minimum(a_hat * ga / (a_hat @ ga), 0.99)
                    d_full = solve(W.T @ et)
                    vb = np.sum(d_full * d_full * ga ** 2) / ss ** 2
                    d = (d_full - beta * a_hat) / (1 - lev)
                    vc = np.sum(d * d * ga ** 2) / ss ** 2
                    if va > 0:
                        za.append(beta / math.sqrt(va))
                    if vb > 0 and vc > 0:
                        zb.append(beta / math.sqrt(vb))
                        zc.append(beta / math.sqrt(vc))
                    # a wrong slot: the same with MUTANT_GAIN x s added to the token's error; the intermediate
                    # coordinates' d_i from e (as above) and from the residual e - beta s (the slot's fit removed)
                    em = et + MUTANT_GAIN * s
                    bm = (em @ s) / ss
                    dm, dr = solve(W.T @ em), (solve(W.T @ em) - bm * a_hat) / (1 - lev)
                    vs = ga ** 2 / ss ** 2
                    vm_a = np.sum(s * s * em * em) / ss ** 2
                    zr.append((bm / math.sqrt(vm_a), bm / math.sqrt(np.sum(dm * dm * vs)),
                               bm / math.sqrt(np.sum(dr * dr * vs))))
                if not za:
                    print(f"{name} seed {seed}: no local token-slot", flush=True)
                    continue
                za, zb, zc, zr = np.array(za), np.array(zb), np.array(zc), np.abs(np.array(zr))
                POOL.setdefault(name, [[], [], []]); POOL[name][0] += list(za); POOL[name][1] += list(zb); POOL[name][2] += list(zc)
                print(f"{name} seed {seed}: {za.size} slots; element-wise HC0 z: RMS {np.sqrt(np.mean(za ** 2)):.2f}, "
                      f"max |z| {np.abs(za).max():.2f}, past 4: {np.sum(np.abs(za) > 4)}; intermediate coordinates: "
                      f"RMS {np.sqrt(np.mean(zb ** 2)):.2f}, max |z| {np.abs(zb).max():.2f}, past 4: "
                      f"{np.sum(np.abs(zb) > 4)}; the same on the residual: RMS {np.sqrt(np.mean(zc ** 2)):.2f}, "
                      f"max |z| {np.abs(zc).max():.2f}; a slot {MUTANT_GAIN:+.0%} wrong, median |z| element-wise "
                      f"{np.median(zr[:, 0]):.1f}, intermediate {np.median(zr[:, 1]):.1f}, intermediate on the "
                      f"residual {np.median(zr[:, 2]):.1f}", flush=True)
            case.release()
    for name, (za, zb, zc) in POOL.items():
        za, zb, zc = np.array(za), np.array(zb), np.array(zc)
        print(f"{name} pooled: {za.size} slots; element-wise HC0 RMS {np.sqrt(np.mean(za ** 2)):.2f}, past 4: "
              f"{np.sum(np.abs(za) > 4)}; intermediate coordinates RMS {np.sqrt(np.mean(zb ** 2)):.2f} (95 % under "
              f"N(0, 1): {math.sqrt(1 - 1.96 * math.sqrt(2 / zb.size)):.3f}-{math.sqrt(1 + 1.96 * math.sqrt(2 / zb.size)):.3f}), "
              f"past 4: {np.sum(np.abs(zb) > 4)}; on the residual RMS {np.sqrt(np.mean(zc ** 2)):.2f}, past 4: "
              f"{np.sum(np.abs(zc) > 4)}", flush=True)


main()
