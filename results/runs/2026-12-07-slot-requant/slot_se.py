#!/usr/bin/env python3
"""`expert_partial`'s per-slot z three ways, on the CPU (issue 45: the routes this record's RUN.md names). Each routed
token-slot's gain beta = <e_t, s> / <s, s> (e_t the token's output error against the contract reference, s the
slot's bf16 contribution) over its standard error
  (a) element-wise HC0, as verdict/systematic_partial.cpp computes it (before the envelope's scale);
  (b) in the intermediate's coordinates: d = G^-1 W^T e_t (W the slot's expert's W2 [H, I], G = W^T W) and
      var = sum_i d_i^2 (W^T s)_i^2 / |s|^4, the error's own independent parts being the intermediate's elements;
  (d) as (b) with each element's variance r x its fp8 step^POW (environment POW, default 2), r pooled over all the case's slots (one wrong slot
      hardly moves it);
  (c) as (b) on the residual: d - beta a (a = G^-1 W^T s, the slot's gain removed), each coordinate divided by
      1 - h_i, h_i = a_i (W^T s)_i / (a . W^T s) (HC3).
The contract reference is the `vllm` member (bit-identical to it on these cases); the kernels are noisyX
(slot_requant_member.py). Prints per (kernel, seed) the RMS and largest |z| of each, how many slots pass |z| = 4
(a normal's rate: 6e-5), and the median |z| of a slot made 5 % wrong (the statistic's floor, MUTANT_GAIN x s added
to its token's error) under each; then per kernel the RMS pooled over the seeds.

  slot_se.py CASE FIRST_SEED SEEDS KERNEL...   (repository root; the cpu preset's module on PYTHONPATH)
"""
import math
import os
import sys

import numpy as np

sys.path.insert(0, "kernels/panel")
sys.path.insert(0, "results/runs/2026-12-07-slot-requant")
import moe_harness  # noqa: E402
import panel_members  # noqa: E402
import panel_quant  # noqa: E402
from panel_formats import E4M3  # noqa: E402
from panel_formats import round_to  # noqa: E402
from panel_weights import dequantized, stored  # noqa: E402

_expert, _rr, _gemm = panel_members.Member.expert, panel_members.Member.routed_rows, panel_members.Member.gemm
cap = {"rows": [], "slots": {}}
POOL = {}
MUTANT_GAIN = 0.05  # the expert_partial floor
POW = float(os.environ.get("POW", "2"))  # (d): each element's variance the pooled rate x its fp8 step^POW


def routed_rows(self, fx, spec):
    for e, tok, j, w in _rr(self, fx, spec):
        cap["rows"].append((e, tok, j))
        yield e, tok, j, w


def gemm(self, a, q, vals, scale, name):
    if name == "w2":
        cap["q"] = panel_quant.quantize(a, q, self.formula)
    return _gemm(self, a, q, vals, scale, name)


def steps(qa, flavor):
    """Each element's fp8 step at its code (the spacing above |v|, the largest code's below), times its scale."""
    grid = np.unique(np.abs(E4M3["e4m3fnuz" if flavor == "fnuz" else "e4m3fn"]))
    grid = grid[np.isfinite(grid)]
    v = np.abs(qa.v)
    i = np.clip(np.searchsorted(grid, v, side="right"), 1, grid.size - 1)
    return (grid[i] - grid[i - 1]) * np.repeat(qa.s, qa.group, axis=1)[:, :v.shape[1]]


def expert(self, a, fx, prefix, e, q, spec, *rest, **kw):
    cap["q"] = None
    y = _expert(self, a, fx, prefix, e, q, spec, *rest, **kw)
    if prefix == "":
        e0, tok, j = cap["rows"].pop(0)
        st = None if cap["q"] is None else steps(cap["q"], q["flavor"])
        for r, (t, jj) in enumerate(zip(tok, j)):
            cap["slots"][(int(t), int(jj))] = (e0, round_to(y[r:r + 1], "bf16")[0].astype(np.float64),
                                               None if st is None else st[r].astype(np.float64))
    return y


panel_members.Member.expert, panel_members.Member.routed_rows, panel_members.Member.gemm = expert, routed_rows, gemm


def output(m, fx, spec):
    cap["rows"].clear(); cap["slots"].clear()
    if hasattr(m, "flavor"):
        m.flavor = spec["quant"]["flavor"]
    y = round_to(m.forward(fx, spec), spec["dtypes"]["output"]).astype(np.float64)
    return y, dict(cap["slots"])


def expert_w2(fx, spec, e, w2, gram):
    if e not in w2:
        w2[e] = dequantized(*stored(fx, "", "w2", e, spec["quant"]), "w2").astype(np.float64)  # e: local
        gram[e] = np.linalg.cholesky(w2[e].T @ w2[e])
    return w2[e], gram[e]


def pooled_rate(slots, err, fx, spec, w2, gram):
    """(d): the error's mean square in the intermediate's coordinates per squared fp8 step, over every slot."""
    num = den = 0.0
    for (t, j), (e, s, ulp) in slots.items():
        W, L = expert_w2(fx, spec, e, w2, gram)
        d = np.linalg.solve(L.T, np.linalg.solve(L, W.T @ err[t]))
        num += d @ d
        den += np.sum(ulp ** POW)
    return num / den if den > 0 else float("nan")


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
                za, zb, zc, zd, zr, betas = [], [], [], [], [], []
                pooled = pooled_rate(slots, err, fx, spec, w2, gram)
                for (t, j), (e, s, ulp) in slots.items():
                    ss = s @ s
                    if not ss > 0:
                        continue
                    W, L = expert_w2(fx, spec, e, w2, gram)
                    et = err[t]
                    beta = (et @ s) / ss
                    va = np.sum(s * s * et * et) / ss ** 2
                    # the error and the slot in the intermediate's coordinates by least squares (G = W^T W), the
                    # slot's gain removed there, each coordinate's leverage undone (HC3)
                    solve = lambda v: np.linalg.solve(L.T, np.linalg.solve(L, v))  # noqa: E731
                    a_hat, ga = solve(W.T @ s), W.T @ s
                    lev = np.minimum(a_hat * ga / (a_hat @ ga), 0.99)
                    d_full = solve(W.T @ et)
                    vb = np.sum(d_full * d_full * ga ** 2) / ss ** 2
                    d = (d_full - beta * a_hat) / (1 - lev)
                    vc = np.sum(d * d * ga ** 2) / ss ** 2
                    if va > 0:
                        za.append(beta / math.sqrt(va))
                    vd = pooled * np.sum(ulp ** POW * ga ** 2) / ss ** 2
                    betas.append(beta)
                    if vb > 0 and vc > 0:
                        zb.append(beta / math.sqrt(vb))
                        zc.append(beta / math.sqrt(vc))
                        zd.append(beta / math.sqrt(vd))
                    # a wrong slot: the same with MUTANT_GAIN x s added to the token's error; the intermediate
                    # coordinates' d_i from e (as above) and from the residual e - beta s (the slot's fit removed)
                    em = et + MUTANT_GAIN * s
                    bm = (em @ s) / ss
                    dm, dr = solve(W.T @ em), (solve(W.T @ em) - bm * a_hat) / (1 - lev)
                    vs = ga ** 2 / ss ** 2
                    vm_a = np.sum(s * s * em * em) / ss ** 2
                    zr.append((bm / math.sqrt(vm_a), bm / math.sqrt(np.sum(dm * dm * vs)),
                               bm / math.sqrt(np.sum(dr * dr * vs)), bm / math.sqrt(vd)))
                if not za:
                    print(f"{name} seed {seed}: no local token-slot", flush=True)
                    continue
                za, zb, zc, zd, zr = np.array(za), np.array(zb), np.array(zc), np.array(zd), np.abs(np.array(zr))
                POOL.setdefault(name, [[], [], [], []])
                for i, z in enumerate((za, zb, zc, zd)):
                    POOL[name][i] += list(z)
                print(f"{name} seed {seed}: {za.size} slots; element-wise HC0 z: RMS {np.sqrt(np.mean(za ** 2)):.2f}, "
                      f"max |z| {np.abs(za).max():.2f}, past 4: {np.sum(np.abs(za) > 4)}; intermediate coordinates: "
                      f"RMS {np.sqrt(np.mean(zb ** 2)):.2f}, max |z| {np.abs(zb).max():.2f}, past 4: "
                      f"{np.sum(np.abs(zb) > 4)}; the same on the residual: RMS {np.sqrt(np.mean(zc ** 2)):.2f}, "
                      f"max |z| {np.abs(zc).max():.2f}; pooled rate {pooled:.3g}: RMS {np.sqrt(np.mean(zd ** 2)):.2f}, "
                      f"max |z| {np.abs(zd).max():.2f}, past 4: {np.sum(np.abs(zd) > 4)}; a slot {MUTANT_GAIN:+.0%} wrong, median |z| element-wise "
                      f"{np.median(zr[:, 0]):.1f}, intermediate {np.median(zr[:, 1]):.1f}, intermediate on the "
                      f"residual {np.median(zr[:, 2]):.1f}, pooled rate {np.median(zr[:, 3]):.1f}; the slots' gains: RMS "
                      f"{np.sqrt(np.mean(np.square(betas))):.2e}", flush=True)
            case.release()
    for name, (za, zb, zc, zd) in POOL.items():
        za, zb, zc, zd = np.array(za), np.array(zb), np.array(zc), np.array(zd)
        print(f"{name} pooled: {za.size} slots; element-wise HC0 RMS {np.sqrt(np.mean(za ** 2)):.2f}, past 4: "
              f"{np.sum(np.abs(za) > 4)}; intermediate coordinates RMS {np.sqrt(np.mean(zb ** 2)):.2f} (95 % under "
              f"N(0, 1): {math.sqrt(1 - 1.96 * math.sqrt(2 / zb.size)):.3f}-{math.sqrt(1 + 1.96 * math.sqrt(2 / zb.size)):.3f}), "
              f"past 4: {np.sum(np.abs(zb) > 4)}; on the residual RMS {np.sqrt(np.mean(zc ** 2)):.2f}, past 4: "
              f"{np.sum(np.abs(zc) > 4)}; pooled rate RMS {np.sqrt(np.mean(zd ** 2)):.2f}, past 4: "
              f"{np.sum(np.abs(zd) > 4)}", flush=True)


main()
