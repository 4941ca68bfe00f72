#!/usr/bin/env python3
"""The cases, one seed, one member (a panel member or noisyX), envelope always: the verdict's details (every
statistic with its shown component, the envelope line). Run from the repository root with a build's Python module
on PYTHONPATH.   diag.py MEMBER SEED CASE_ID...  (a noisyX member's draws run on
from case to case, so give the cases the sweep ran, in its order)"""
import sys

sys.path.insert(0, "kernels/panel")
sys.path.insert(0, "results/runs/2026-12-07-slot-requant")
import moe_harness  # noqa: E402
import panel_members  # noqa: E402
import slot_requant_member  # noqa: E402

name, seed, case_ids = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
member = slot_requant_member.noisy(float(name[5:])) if name.startswith("noisy") else panel_members.make(name, seed)
for case in moe_harness.suite("nightly", filter=case_ids, seed=seed):
    v = case.run(member, kernel_id=member.id, envelope="always", token_probes=False)
    print(v.status, v.id)
    print(v.explain() if hasattr(v, "explain") else v)
    print(v.details if hasattr(v, "details") else "")
