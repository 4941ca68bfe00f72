#!/usr/bin/env python3
"""Which token-slots' intermediate is requantized with another scale by a panel member than by the contract
reference, and whether `expert_partial`'s shown (largest-z) token-slot is one of them (issue 45: the GPU members'
maxima at fp8 T128). Per (member, seed): the verdict's `expert_partial` z, effect and threshold, the token-slot it
shows, and, against the `vllm` member (bit-identical to the contract reference on these cases, docs/judging.md "The
independent panel"), how many of the routed experts' GEMM2 input rows (one per token-slot, per-token fp8 scale)
have another scale, whether the shown one does, and how many fp8 codes differ in its row and in a row (median).

  slot_requant.py CASE FIRST_SEED SEEDS MEMBER...   (repository root; the module of a build on PYTHONPATH)

MEMBER: a run_panel member (vllm-torch, vllm-fastaccum, vllm-triton need the GPU), or noisyX (CPU, slot_requant_member.py): the GPU
members' pipeline (panel_torch.TorchVllmStyle) with its fp8 GEMMs as an fp64 product plus X * 2^-14 ||a|| ||w||
times a standard normal per output element (X = 0.2: about the H100's mean fast-accumulation error at these K,
results/runs/2026-12-07-t1-mismatch)."""
import re
import sys

import numpy as np

sys.path.insert(0, "kernels/panel")
sys.path.insert(0, "results/runs/2026-12-07-slot-requant")
import moe_harness  # noqa: E402
import panel_members  # noqa: E402
import panel_quant  # noqa: E402

rows = []  # per routed GEMM2 call: (expert, token indices, per-row scales)
_routed, _cur = [], [None]
_gemm, _expert, _rr = panel_members.Member.gemm, panel_members.Member.expert, panel_members.Member.routed_rows


def gemm(self, a, q, vals, scale, name):
    if name == "w2" and _cur[0] is not None:
        qa = panel_quant.quantize(a, q, self.formula)
        e, tok = _cur[0]
        rows.append((e, tok, None if qa is None else (np.asarray(qa.s)[:, 0].copy(), np.asarray(qa.v).copy())))
    return _gemm(self, a, q, vals, scale, name)


def expert(self, a, fx, prefix, e, q, spec, *rest, **kw):
    _cur[0] = (e + spec["shape"]["first_local_expert"], _routed.pop(0)) if prefix == "" else None
    try:
        return _expert(self, a, fx, prefix, e, q, spec, *rest, **kw)
    finally:
        _cur[0] = None


def routed_rows(self, fx, spec):
    for e, tok, j, w in _rr(self, fx, spec):
        _routed.append(tok)
        yield e, tok, j, w


panel_members.Member.gemm, panel_members.Member.expert, panel_members.Member.routed_rows = gemm, expert, routed_rows


def member(name):
    if not name.startswith("noisy"):
        return panel_members.make(name)
    import slot_requant_member
    return slot_requant_member.noisy(float(name[5:]))


def run(case, m):
    rows.clear(); _routed.clear()
    v = case.run(m, kernel_id=m.id, token_probes=False, envelope="always")
    return v, {(e, int(t)): (sc[0][i], sc[1][i]) for e, tok, sc in rows if sc is not None for i, t in enumerate(tok)}


def main():
    case_id, first, n, names = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
    for seed in range(first, first + n):
        for case in moe_harness.suite("nightly", filter=[case_id], seed=seed):
            _, ref = run(case, panel_members.make("vllm"))
            for name in names:
                v, got = run(case, member(name))
                ep = {s["name"]: s for s in v.systematic}["expert_partial"]
                diff = {k for k in ref if k in got and ref[k][0] != got[k][0]}
                flips = {k: int(np.sum(ref[k][1] != got[k][1])) for k in ref if k in got}
                m = re.match(r"expert (\d+), token (\d+)", ep.get("at", ""))
                shown = (int(m[1]), int(m[2])) if m else None
                print(f"{name} seed {seed} {v.status}{' (' + v.failed_check + ')' if v.status != 'pass' else ''}: expert_partial z {ep['z']:+.2f} effect {ep['effect']:+.2e} "
                      f"threshold {ep['z_threshold']:.1f} at {ep.get('at', '')}; token-slot rows with another "
                      f"requantization scale: {len(diff)} of {len(ref)}; the shown one: "
                      f"{'yes' if shown in diff else 'no'}; fp8 codes that differ in the shown row: "
                      f"{flips.get(shown, -1)} of {ref[shown][1].size if shown in ref else -1}, in a row: median "
                      f"{np.median(list(flips.values())):.0f}, rows with none {sum(f == 0 for f in flips.values())}", flush=True)
            case.release()


main()
