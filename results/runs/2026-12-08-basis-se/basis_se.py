#!/usr/bin/env python3
"""Study (issue 45 item 5): the maxima's standard error in the intermediate basis.

A correct kernel's output error on token t is mostly e_t = sum_i delta_i w_i + eps: flips of the intermediate
elements i (every local slot's and the shared expert's), each along its W2 column w_i, plus the output rounding eps.
The element-wise HC0 standard error of a projection <e, v> treats e's H elements as independent; the basis one
treats the intermediate elements as the independent draws: c = least squares of the residual u on the columns B_t
of the token's experts' W2, se^2 = (sum_k (c_k <b_k, v>)^2 + sum_h v_h^2 (u - B c)_h^2) / <v, v>^2. It needs no
envelope scale: a kernel with few flips has a small se and one with many a large one.

For each case and seed: a reference R (the GPU members' vLLM pipeline on the CPU, exact fp8 products, act(g) not
rounded before u: one rounding) and a kernel K (noisyX: fp8 GEMM outputs + X 2^-14 ||a|| ||w|| N(0,1); or `double`:
act(g) rounded to bf16 before u, vLLM's silu_and_mul; optionally one slot's contribution scaled by `--bug G`).
Prints one JSON line per case and seed: token_gain's and expert_partial's largest corrected z (Sidak over the
components) with the element-wise and the basis standard error, and the shown component's effect; the same
without the components whose requantization scale the kernel stepped (`_nostep`: an oracle standing for the
verdict's step explanation), and how many stepped.

  basis_se.py --kernel noisy0.2|double [--bug 1.10] --seeds N [--first-seed S] CASE_ID...
Run from the repository root with build/cpu/python on PYTHONPATH."""
import argparse
import json
import math
import sys
import time
from statistics import NormalDist

import numpy as np

sys.path.insert(0, "kernels/panel")
sys.path.insert(0, "results/runs/2026-12-07-slot-requant")
import moe_harness  # noqa: E402
import panel_torch  # noqa: E402
from panel_formats import round_to  # noqa: E402
from panel_quant import quantize  # noqa: E402
from panel_weights import dequantized, stored  # noqa: E402
from slot_requant_member import noisy  # noqa: E402

ND = NormalDist()


def member(noise, act_gate, record, bug=None, seed=0):
    """record: keep each expert's dequantized W2 and output rows (rec); every member keeps each W2 GEMM's activation
    scales (scales), in call order, so that a token-slot whose requantization scale differs from R's is known."""
    class M(type(noisy(noise))):  # the fp8 GEMMs' noise model of slot_requant_member.noisy, not restated here
        id = "study"

        def __init__(self):
            super().__init__()
            self.rng, self.rec, self.bug_done, self.scales = np.random.default_rng(seed), [], False, []

        def gemm(self, a, q, vals, scale, name):
            if name == "w2":
                qa = quantize(a, q, self.formula) if a is not None else None
                self.scales.append(None if qa is None or not hasattr(qa, "s") else np.array(qa.s, copy=True))
            return super().gemm(a, q, vals, scale, name)

        def act_gate(self, spec):
            return act_gate

        def expert(self, a, fx, prefix, e, q, spec, clamp, gate_up_dt, weight_scale=None):
            y = super().expert(a, fx, prefix, e, q, spec, clamp, gate_up_dt, weight_scale)
            if bug is not None and prefix == "" and not self.bug_done:
                y = y.copy()
                y[0] *= np.float32(bug)  # the first routed expert's first token-slot
                self.bug_done = True
            if record:
                v2, s2 = stored(fx, prefix, "w2", e, q)
                self.rec.append((prefix, e, dequantized(v2, s2, "w2").astype(np.float64), y))
            return y
    return M()


def sidak_z(z, m):
    """|z| of one of m two-sided tests as the z of the largest of m (docs/judging.md)."""
    if not np.isfinite(z):
        return z
    p = math.erfc(abs(z) / math.sqrt(2))
    pm = -math.expm1(m * math.log1p(-p)) if p < 1 else 1.0
    if pm >= 1:
        return 0.0
    return -ND.inv_cdf(max(pm / 2, 1e-300)) * (1 if z >= 0 else -1)


def slots_of(fx, spec, rec, rs, ks):
    """Per token: [(slot j or -1 shared, W2 [H, I], contribution s [H], stepped)]: stepped where the kernel's W2
    activation scale of that row differs from R's (rs, ks: the two members' scales in call order)."""
    T = spec["shape"]["tokens"]
    per = [[] for _ in range(T)]
    it = iter(rec)
    sc = iter(zip(rs, ks))

    def stepped(row):
        a, b = cur
        return a is not None and b is not None and not np.array_equal(a[row], b[row])
    m = panel_torch.TorchVllmStyle.__new__(panel_torch.TorchVllmStyle)
    for e, tok, j, w in panel_torch.TorchVllmStyle.routed_rows(m, fx, spec):
        prefix, e2, W2, y = next(it)
        cur = next(sc)
        assert prefix == "" and e2 == e
        s = round_to(y, "bf16").astype(np.float64)
        for row, (t, jj) in enumerate(zip(tok, j)):
            per[t].append((int(jj), W2, s[row], stepped(row)))
    for prefix, e, W2, y in it:
        cur = next(sc)
        assert prefix == "shared_"
        s = round_to(y, "bf16").astype(np.float64)
        for t in range(T):
            per[t].append((-1, W2, s[t], stepped(t)))
    return per


def se_pair(u, v, B=None, Q=None, R=None):
    """Element-wise HC0 and basis standard errors of <u, v> / <v, v>."""
    vv = v @ v
    hc0 = math.sqrt(np.sum(v * v * u * u)) / vv
    if B is None:
        return hc0, float("nan")
    c = np.linalg.solve(R, Q.T @ u)
    perp = u - B @ c
    g = B.T @ v
    return hc0, math.sqrt(np.sum((c * g) ** 2) + np.sum(v * v * perp * perp)) / vv


def stats(r, o, per):
    T, H = r.shape
    e = o - r
    tg, ep = [], []  # (z_hc0, z_basis, effect, stepped)
    fallback = 0
    for t in range(T):
        cols = [W2 for _, W2, _, _ in per[t]]
        B = np.hstack(cols) if cols else None
        Q = Rm = None
        if B is not None and B.shape[1] < H:
            Q, Rm = np.linalg.qr(B)
        else:
            fallback += 1
            B = None
        rt, et = r[t], e[t]
        if rt @ rt > 0:
            b = (et @ rt) / (rt @ rt)
            h, bs = se_pair(et - b * rt, rt, B, Q, Rm)
            tg.append((b / h if h > 0 else 0.0, b / bs if bs > 0 else 0.0, b, any(x[3] for x in per[t])))
        for j, _, s, st in per[t]:
            if j < 0 or s @ s == 0:
                continue
            beta = (et @ s) / (s @ s)
            h, bs = se_pair(et - beta * s, s, B, Q, Rm)
            ep.append((beta / h if h > 0 else 0.0, beta / bs if bs > 0 else 0.0, beta, st))
    out = {"fallback_tokens": fallback}
    for name, comp in (("token_gain", tg), ("expert_partial", ep)):
        if not comp:
            continue
        m = len(comp)
        out[f"{name}_stepped"] = sum(c[3] for c in comp)
        for k, label in ((0, "hc0"), (1, "basis")):
            i = max(range(m), key=lambda n: abs(comp[n][k]))
            out[f"{name}_{label}"] = [sidak_z(comp[i][k], m), comp[i][2], m]
            # an oracle explanation: the components whose requantization scale stepped left out (still m tests)
            rest = [n for n in range(m) if not comp[n][3]]
            if rest:
                i = max(rest, key=lambda n: abs(comp[n][k]))
                out[f"{name}_{label}_nostep"] = [sidak_z(comp[i][k], m), comp[i][2], m]
    return out


def outputs(kernel, bug, seeds, first_seed, cases):
    """Per seed and case of the nightly: (seed, case id, spec, R's output, the kernel's output, slots_of's slots,
    time.time() at the case's start), both outputs rounded to the output dtype in float64. kernel: noisyX or double;
    bug: basis_se.member's. The case's fixture is released after its tuple is used."""
    noise = float(kernel[5:]) if kernel.startswith("noisy") else 0.0
    for seed in range(first_seed, first_seed + seeds):
        for case in moe_harness.suite("nightly", filter=cases, seed=seed):
            t0 = time.time()
            fx = case.fixture()
            spec = fx.spec
            ref = member(0.0, "f32", True)
            r = round_to(ref.forward(fx, spec), spec["dtypes"]["output"]).astype(np.float64)
            ker = member(noise, "bf16" if kernel == "double" else "f32", False, bug, seed + 1000)
            o = round_to(ker.forward(fx, spec), spec["dtypes"]["output"]).astype(np.float64)
            yield seed, case.id, spec, r, o, slots_of(fx, spec, ref.rec, ref.scales, ker.scales), t0
            case.release()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--kernel", required=True)
    p.add_argument("--bug", type=float)
    p.add_argument("--seeds", type=int, default=1)
    p.add_argument("--first-seed", type=int, default=0)
    p.add_argument("cases", nargs="+")
    a = p.parse_args()
    for seed, cid, spec, r, o, per, t0 in outputs(a.kernel, a.bug, a.seeds, a.first_seed, a.cases):
        res = stats(r, o, per)
        res.update({"kernel": a.kernel, "bug": a.bug, "seed": seed, "id": cid,
                    "T": spec["shape"]["tokens"], "secs": round(time.time() - t0, 1)})
        print(json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
