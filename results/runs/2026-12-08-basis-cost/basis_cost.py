#!/usr/bin/env python3
"""Study (issue 45 item 5): what the basis standard error of ../2026-12-08-basis-se costs, and which cheaper solver
keeps its z.

The exact fit is one QR of the token's W2 columns B_t [H, m] per token (m = 1152 of H = 2048 on qwen3.5 TP4): about
2 H m^2 flops a token, done again for every output judged (the kernel and each envelope member). The solver a C++
verdict can afford factors each expert's W2 once per case, W2_j = Q_j R_j (shared by every token and every output),
and solves the token's least squares in the orthonormal block coordinates y (c_j = R_j^-1 y_j) by conjugate
gradients on the normal equations, whose matrix has identity diagonal blocks (block-Jacobi preconditioned):
`cgN` stops after N iterations (4 H m flops each), `cg0` is the block-local fit (each block alone, no iteration);
`cgNb` fits the error with N iterations and each regressor (r_t, s_tj: in the span of its blocks up to their
rounding) block-locally, one iterated fit per token.

For each case and seed, one JSON line per solver: token_gain's and expert_partial's largest Sidak-corrected z
(as basis_se.py), the solver's seconds for the fits, and the largest |z_solver - z_exact| over the components; and
`_sf`, the same with each component's z from its sign-flip p-value (sign_flip_z) instead of the normal one: a
component that a few flipped codes make has a discrete, light-tailed null the normal z overstates. Its terms are the
error's own (c(e)_i <w_i, v> and v_h perp(e)_h, over <v, v>), which sum to the effect: the observed sign pattern is
all +, and the p-value is its rank among the 2^n patterns; and with the exact
fit `_db`, the se debiased for output-space noise: noise of variance s2 in every output element (the GEMM2's own
accumulation error, the output rounding) leaks s2 diag((B^T B)^-1) into each fitted c^2, which the plain basis se
counts as intermediate flips. s2 = |perp|^2 / (H - m), and the residual's own term is divided by (1 - m / H); and
`_t`, the normal z read as a Student t with its terms' Satterthwaite degrees of freedom (t_z): a standard error
made of few dominant terms is itself noisy, and its z's tail heavier than the normal one; and with the block
solvers `_hc3`, each intermediate term of the standard error divided by 1 - h_k, its leverage on the slope (HC3 in
the intermediate basis): a regressor made of a few large intermediates takes their flips into its own slope, and
the residual left to estimate its variance is too small; `_hc2` the same with 1 / sqrt(1 - h_k).
  basis_cost.py --kernel double|noisyX [--bug G] --seeds N [--first-seed S]
                [--solvers exact,cg0,cg5,cg10,cg20,cg10b] CASE_ID...
Run from the repository root with build/cpu/python on PYTHONPATH."""
import argparse
import json
import math
import sys
import time

from statistics import NormalDist

import numpy as np

sys.path.insert(0, "results/runs/2026-12-08-basis-se")
from basis_se import outputs, sidak_z  # noqa: E402

ND = NormalDist()


class Blocks:
    """The token's W2 blocks in orthonormal coordinates, each expert's QR computed once per case (cache)."""

    def __init__(self, cache, per_t):
        self.Q, self.R = [], []
        for j, W2, _, _ in per_t:
            key = id(W2)
            if key not in cache:
                q, r = np.linalg.qr(W2)
                cache[key] = (q, r)
            q, r = cache[key]
            self.Q.append(q)
            self.R.append(r)

    def Bt(self, x):  # Q^T x, per block
        return [q.T @ x for q in self.Q]

    def B(self, ys):  # sum_j Q_j y_j
        return sum(q @ y for q, y in zip(self.Q, ys))

    def solve(self, u, iters):
        """Least squares of u on [Q_1 .. Q_n]: CG on the normal equations from the block-local fit."""
        b = self.Bt(u)
        y = [x.copy() for x in b]  # the block-local fit: the normal matrix's diagonal blocks are identities
        if iters == 0:
            return y
        r = [bi - ai for bi, ai in zip(b, self.Bt(self.B(y)))]
        p = [x.copy() for x in r]
        rr = sum(x @ x for x in r)
        for _ in range(iters):
            if rr == 0:
                break
            ap = self.Bt(self.B(p))
            alpha = rr / sum(pi @ ai for pi, ai in zip(p, ap))
            y = [yi + alpha * pi for yi, pi in zip(y, p)]
            r = [ri - alpha * ai for ri, ai in zip(r, ap)]
            rr2 = sum(x @ x for x in r)
            p = [ri + rr2 / rr * pi for ri, pi in zip(r, p)]
            rr = rr2
        return y

    def se(self, ys, u, v, ya=None):
        """Basis se of <u, v> / <v, v> from the block coordinates ys of u's fit, its terms, NaN (no debiased
        reading), and with ya (the block coordinates of v's own fit) the HC3 and HC2 readings: each intermediate term
        divided by 1 - h_k (HC3) or sqrt(1 - h_k) (HC2), h_k = a_k <w_k, v> / <v, v> (clipped to [0, 0.9]) the
        leverage of intermediate k on the slope."""
        vv = v @ v
        perp = u - self.B(ys)
        terms, lev, lev2 = [v * perp], [v * perp], [v * perp]
        for j, (q, r, y) in enumerate(zip(self.Q, self.R, ys)):
            c = np.linalg.solve(r, y)  # R is triangular; the original W2 column coordinates
            g = r.T @ (q.T @ v)         # W2_j^T v
            terms.append(c * g)  # c_i <w_i, v>
            if ya is not None:
                h = np.clip(np.linalg.solve(r, ya[j]) * g / vv, 0.0, 0.9)
                lev.append(c * g / (1 - h))
                lev2.append(c * g / np.sqrt(1 - h))
        t = np.concatenate(terms) / vv
        if ya is None:
            return math.sqrt(float(t @ t)), t, float("nan"), (float("nan"), float("nan"))
        hc3 = math.sqrt(float(np.sum(np.concatenate(lev) ** 2))) / vv
        hc2 = math.sqrt(float(np.sum(np.concatenate(lev2) ** 2))) / vv
        return math.sqrt(float(t @ t)), t, float("nan"), (hc3, hc2)


def sign_flip_z(effect, terms, top=10):
    """The z of `effect` under the sign-flip null of its terms (each c_i <w_i, v> and v_h perp_h, over <v, v>, is
    +-itself with probability 1/2, independently): the `top` largest terms' 2^top sign patterns enumerated, the
    rest as a normal of their variance. Two-sided p, returned as a signed normal z (p's log kept: no underflow)."""
    a = np.abs(terms)
    idx = np.argsort(a)[::-1]
    big, rest = a[idx[:top]], a[idx[top:]]
    sd = math.sqrt(float(rest @ rest))
    n = len(big)
    signs = 1 - 2 * ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1)
    x = signs @ big
    s = abs(effect)
    if sd == 0:
        p = float(np.mean(np.abs(x) >= s * (1 - 1e-12)))
        logp = math.log(p) if p > 0 else -745.0
    else:
        # log P(|x + sd N| >= s) per pattern: log(Q((s - x) / sd) + Q((s + x) / sd)), then the mean
        lq = np.logaddexp(log_q((s - x) / sd), log_q((s + x) / sd))
        logp = float(np.logaddexp.reduce(lq) - n * math.log(2))
    logp = min(logp, 0.0)
    if logp > -690:
        z = -ND.inv_cdf(max(math.exp(logp) / 2, 1e-300))
    else:  # log Q(z) = -z^2 / 2 - log(z sqrt(2 pi)) = logp - log 2, by fixed point
        z = math.sqrt(-2 * logp)
        for _ in range(3):
            z = math.sqrt(max(0.0, -2 * (logp - math.log(2) + math.log(z * math.sqrt(2 * math.pi)))))
    return z if effect >= 0 else -z


def t_z(z, terms):
    """The normal z of a studentized z whose variance estimate has few effective terms: Student t with the
    Satterthwaite degrees of freedom (sum t^2)^2 / sum t^4 of its terms, two-sided p, back to a signed normal z."""
    t2 = terms * terms
    df = float(t2.sum() ** 2 / (t2 * t2).sum()) if t2.sum() > 0 else 1.0
    if not math.isfinite(z) or df > 1e6:
        return z
    p = inc_beta(df / 2, 0.5, df / (df + z * z))
    return math.copysign(-ND.inv_cdf(max(p / 2, 1e-300)), z)


def inc_beta(a, b, x):
    """The regularized incomplete beta function I_x(a, b), by its continued fraction (Lentz)."""
    if x <= 0 or x >= 1:
        return 0.0 if x <= 0 else 1.0
    if x > (a + 1) / (a + b + 2):
        return 1.0 - inc_beta(b, a, 1 - x)
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)) / a
    f, c, d = 1.0, 1.0, 0.0
    for i in range(400):
        m = i // 2
        if i == 0:
            num = 1.0
        elif i % 2 == 0:
            num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        else:
            num = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        d = 1 + num * d
        d = 1 / (d if abs(d) > 1e-300 else 1e-300)
        c = 1 + num / c
        c = c if abs(c) > 1e-300 else 1e-300
        f *= c * d
        if abs(1 - c * d) < 1e-14:
            break
    return front * (f - 1)


def log_q(x):
    """log of the normal upper tail, per element, without underflow."""
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    small = x < 5
    out[small] = np.log(0.5 * np.array([math.erfc(v / math.sqrt(2)) for v in x[small]]))
    xl = x[~small]
    out[~small] = -0.5 * xl * xl - np.log(xl * math.sqrt(2 * math.pi)) + np.log1p(-1 / (xl * xl))
    return out


# Each reading's key suffix and its index in a component's tuple (components()): normal, sign-flip, Student t,
# debiased (exact fit only), HC3 and HC2 (block solvers only).
READINGS = (("", 0), ("_sf", 2), ("_t", 4), ("_db", 3), ("_hc3", 5), ("_hc2", 6))


def components(r, o, per, solver, cache):
    """token_gain's and expert_partial's (z, effect) per component; the fits' seconds."""
    T, H = r.shape
    e = o - r
    tg, ep, secs = [], [], 0.0
    if solver != "exact":  # each expert's QR once, before the tokens (setup_secs)
        for t in range(T):
            Blocks(cache, per[t])
    for t in range(T):
        t0 = time.perf_counter()
        if solver == "exact":
            B = np.hstack([W2 for _, W2, _, _ in per[t]])
            Qf, Rf = np.linalg.qr(B)
            fit = lambda u: np.linalg.solve(Rf, Qf.T @ u)  # noqa: E731
            Rinv = np.linalg.solve(Rf, np.eye(Rf.shape[0]))
            ginv = np.sum(Rinv * Rinv, axis=1)  # diag (B^T B)^-1
            H_, m_ = B.shape

            def se(c, u, v):
                perp = u - B @ c
                g = B.T @ v
                t = np.concatenate([c * g, v * perp]) / (v @ v)
                # debiased: output-space noise of variance s2 (from the residual) leaks s2 diag(G^-1) into each c^2
                s2 = float(perp @ perp) / (H_ - m_)
                var = float(np.sum(g * g * c * c) - s2 * np.sum(g * g * ginv)
                            + np.sum(v * v * perp * perp) / (1 - m_ / H_))
                return math.sqrt(float(t @ t)), t, math.sqrt(max(var, 0.0)) / (v @ v), (float("nan"), float("nan"))
        else:
            blk = Blocks(cache, per[t])
            it = int(solver[2:].rstrip("b"))
            fit = lambda u: blk.solve(u, it)  # noqa: E731
            se = blk.se
        rt, et = r[t], e[t]
        # c(e - beta v) = c(e) - beta c(v): one fit of e per token, one of each regressor
        ce = fit(et)
        if solver.endswith("b"):  # a regressor lies in its blocks' span (up to its rounding): its block-local fit
            fit = lambda u: blk.solve(u, 0)  # noqa: E731
        sub = (lambda a, b, s: a - s * b) if solver == "exact" else (lambda a, b, s: [x - s * y for x, y in zip(a, b)])
        if rt @ rt > 0:
            b = (et @ rt) / (rt @ rt)
            av = fit(rt)
            s_, terms, sd, s3 = se(sub(ce, av, b), et - b * rt, rt, *([] if solver == "exact" else [av]))
            z = b / s_ if s_ > 0 else 0.0
            tg.append((z, b, sign_flip_z(b, se(ce, et, rt)[1]), b / sd if sd > 0 else float("nan"), t_z(z, terms),
                       b / s3[0] if s3[0] > 0 else float("nan"),
                       b / s3[1] if s3[1] > 0 else float("nan")))
        for j, _, s, _ in per[t]:
            if j < 0 or s @ s == 0:
                continue
            beta = (et @ s) / (s @ s)
            av = fit(s)
            s_, terms, sd, s3 = se(sub(ce, av, beta), et - beta * s, s, *([] if solver == "exact" else [av]))
            z = beta / s_ if s_ > 0 else 0.0
            ep.append((z, beta, sign_flip_z(beta, se(ce, et, s)[1]), beta / sd if sd > 0 else float("nan"),
                       t_z(z, terms), beta / s3[0] if s3[0] > 0 else float("nan"),
                       beta / s3[1] if s3[1] > 0 else float("nan")))
        secs += time.perf_counter() - t0
    return tg, ep, secs


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--kernel", required=True)
    p.add_argument("--bug", type=float, help="scale the first routed token-slot's contribution (basis_se.member)")
    p.add_argument("--seeds", type=int, default=1)
    p.add_argument("--first-seed", type=int, default=0)
    p.add_argument("--solvers", default="exact,cg0,cg5,cg10,cg20")
    p.add_argument("cases", nargs="+")
    a = p.parse_args()
    for seed, cid, spec, r, o, per, _ in outputs(a.kernel, a.bug, a.seeds, a.first_seed, a.cases):
        exact = None
        for solver in a.solvers.split(","):
            cache = {}
            t0 = time.perf_counter()
            tg, ep, secs = components(r, o, per, solver, cache)
            qr_secs = time.perf_counter() - t0 - secs
            res = {"kernel": a.kernel, "bug": a.bug, "seed": seed, "id": cid, "T": spec["shape"]["tokens"],
                   "solver": solver, "fit_secs": round(secs, 3), "setup_secs": round(qr_secs, 3),
                   "experts_factored": len(cache)}
            for name, comp in (("token_gain", tg), ("expert_partial", ep)):
                if not comp:
                    continue
                for suffix, k in READINGS:
                    if suffix in ("_hc3", "_hc2") and solver == "exact" or suffix == "_db" and solver != "exact":
                        continue
                    i = max(range(len(comp)), key=lambda n: abs(comp[n][k]) if math.isfinite(comp[n][k]) else 0)
                    res[name + suffix] = [sidak_z(comp[i][k], len(comp)), comp[i][1], len(comp)]
                if exact is not None:
                    res[name + "_maxdiff"] = max(abs(x[0] - y[0]) for x, y in zip(comp, exact[name]))
            if solver == "exact":
                exact = {"token_gain": tg, "expert_partial": ep}
            print(json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
