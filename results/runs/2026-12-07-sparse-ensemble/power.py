#!/usr/bin/env python3
"""Power inside the sparse envelope: the CPU noise member noisyX (results/runs/2026-12-07-slot-requant/
slot_requant_member.py, declaring accum=mma14 like the GPU members) with one user bug injected into its router
weights, judged on the given cases and seeds. A line per verdict: bug, seed, case, status, the failed check, and
expert_partial's and expert's z / threshold and effect.

  power.py X FIRST_SEED SEEDS CASE_GLOB...     (repository root, a build's Python module on PYTHONPATH)

Bugs (each on the most-used local expert E of the case, the one with the most token-slots):
  none                 the member as it is (the null)
  slot5, slot10        one token-slot of E (its middle row) weighted 1.05 / 1.10
  expert_partial_gain  E's router weights 10 % too large on all its slots but the first (the catalog mutant's bug)
  expert2              E's router weights 2 % too large on all its slots"""
import sys

import numpy as np

sys.path.insert(0, "kernels/panel")
sys.path.insert(0, "results/runs/2026-12-07-slot-requant")
import moe_harness  # noqa: E402
import slot_requant_member  # noqa: E402

BUGS = ("none", "slot5", "slot10", "expert_partial_gain", "expert2")


def buggy(x, bug):
    m = slot_requant_member.noisy(x)
    m.id = f"noisy{x}-{bug}"
    rows = m.routed_rows

    def routed_rows(fx, spec):
        groups = list(rows(fx, spec))
        if bug != "none" and groups:
            top = max(range(len(groups)), key=lambda i: len(groups[i][1]))
            e, tok, j, w = groups[top]
            w = w.copy()
            if bug.startswith("slot"):
                w[len(w) // 2] *= np.float32(1 + int(bug[4:]) / 100)
            elif bug == "expert_partial_gain":
                w[1:] *= np.float32(1.10)
            else:
                w *= np.float32(1.02)
            groups[top] = (e, tok, j, w)
        yield from groups
    m.routed_rows = routed_rows
    return m


def main():
    x, first, seeds, globs = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
    for seed in range(first, first + seeds):
        suite = moe_harness.suite("nightly", filter=globs, seed=seed)
        for case in suite:
            for bug in BUGS:
                v = case.run(buggy(x, bug), kernel_id=f"noisy{x}-{bug}", token_probes=False)
                st = {s["name"]: s for s in v.systematic}
                show = " ".join(f"{n} {st[n]['z']:+.2f}/{st[n]['z_threshold']:.1f} eff {st[n]['effect']:+.2e}"
                                for n in ("expert_partial", "expert") if n in st and st[n]["z"] is not None)
                print(f"{bug} seed {seed} {v.id} {v.status} {v.failed_check or '-'} | {show}", flush=True)
            case.release()


if __name__ == "__main__":
    main()
