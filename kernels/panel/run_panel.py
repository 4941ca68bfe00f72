#!/usr/bin/env python3
"""Judges the independent panel (kernels/panel/panel_members.py) through moe_harness: every member on every case of a
suite, over seeds, with its declared rounding contract, and reports the false alarms (docs/judging.md "The
independent panel").

  run_panel.py --suite smoke [--filter GLOB]... [--members vllm,aiter,splitk,finalize] [--seeds N]
               [--first-seed S] [--envelope on_failure|always] [--no-token-probes]
               [--shard I/N] [--reference-cache DIR] [--report-dir DIR] [--jsonl FILE] [--quiet]

Every member is correct by construction, so any case that does not pass is a false alarm of the harness (or a bug
of the member, which the failure's details show). Prints one line per member and each false alarm with the check
that fired and its metrics; with --report-dir, one report directory per member and seed (report.json, summary.md);
with --reference-cache, the members declaring the same contract share each case's references and envelope (computed
once, `moe_harness.suite(reference_cache=...)`); with --jsonl, a JSON line per judged case (member, seed, id, status, failed check, every systematic statistic's z
and effect, the envelope's z scales: with --envelope always, on passing cases too).
Exit: 0 every judged case passed, 1 a false alarm, 2 bad arguments, 4 nothing was judged.
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import moe_harness  # noqa: E402
from panel_members import MEMBERS, make  # noqa: E402


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--suite", required=True)
    p.add_argument("--filter", action="append", default=[])
    p.add_argument("--members", default=",".join(MEMBERS[:4]), help="default: the four NumPy members; vllm-torch, "
                   "vllm-fastaccum and vllm-triton run their fp8 GEMMs on a CUDA GPU's fp8 matrix units")
    p.add_argument("--seeds", type=int, default=1, help="seeds 0..N-1 replace each case's seed (default: its own)")
    p.add_argument("--first-seed", type=int, default=0, help="with --seeds N: seeds S..S+N-1 instead of 0..N-1")
    p.add_argument("--shard", default="0/1", help="I/N: the suite's cases I, I + N, ... (file order)")
    p.add_argument("--envelope", choices=("on_failure", "always"), default="on_failure",
                   help="always: simulate the envelope for every output (its figures in every record)")
    p.add_argument("--no-token-probes", action="store_true", help="as run --no-token-probes")
    p.add_argument("--reference-cache", metavar="DIR", help="keep each case's references and envelope in DIR: "
                   "members with the same contract, later seeds' reruns and later processes reuse them")
    p.add_argument("--report-dir")
    p.add_argument("--jsonl", help="append a JSON line per judged case to this file")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--verbose", action="store_true", help="a line per judged case (what a run cut short still shows)")
    a = p.parse_args()
    members = a.members.split(",")
    bad = [m for m in members if m not in MEMBERS]
    if bad or not members:
        p.error(f"--members: unknown {', '.join(bad)}; choose from {', '.join(MEMBERS)}")
    if a.seeds < 1 or a.seeds > 1000:
        p.error("--seeds takes 1 to 1000")
    if a.first_seed < 0 or a.first_seed > 2**32:
        p.error("--first-seed takes 0 to 2^32")
    try:
        i, n = (int(x) for x in a.shard.split("/"))
        if not 0 <= i < n:
            raise ValueError
    except ValueError:
        p.error(f"--shard: '{a.shard}' is not I/N with 0 <= I < N")
    a.shard = (i, n)
    return a, members


def main():
    a, members = parse()
    judged = alarms = 0
    worst = {}
    explicit = a.seeds > 1 or a.first_seed > 0
    jsonl = open(a.jsonl, "a") if a.jsonl else None
    for seed in range(a.first_seed, a.first_seed + a.seeds):
        suite = moe_harness.suite(a.suite, filter=a.filter or None, seed=seed if explicit else None,
                                  reference_cache=a.reference_cache)
        for name in members:
            member = make(name, seed)
            session = None
            if a.report_dir:
                shard = f"-shard{a.shard[0]}of{a.shard[1]}" if a.shard[1] > 1 else ""
                session = moe_harness.Session(os.path.join(a.report_dir, f"{name}-seed{seed}{shard}"), member.id,
                                              member.version, suite=suite)
            counts = {"pass": 0, "fail": 0, "error": 0, "skip": 0}
            metamorphic = {"token_permutation": 0, "expert_relabeling": 0}  # cases on which each probe ran
            t0 = time.time()
            for index, case in enumerate(suite):
                if index % a.shard[1] != a.shard[0]:
                    continue
                v = case.run(member, kernel_id=member.id, device="cuda" if getattr(member, "needs_device", False) else None,
                             envelope=a.envelope, token_probes=not a.no_token_probes)
                if jsonl and v.status in ("pass", "fail"):
                    jsonl.write(json.dumps({
                        "member": name, "seed": seed, "id": v.id, "status": v.status, "failed_check": v.failed_check,
                        "systematic": {s["name"]: [s["z"], s["effect"], s["z_threshold"]] for s in v.systematic},
                        "z_scale": {k[len("envelope_z_scale_"):]: x for k, x in v.metrics.items()
                                    if k.startswith("envelope_z_scale_")},
                        "se_floor": {k[len("envelope_se_floor_"):]: x for k, x in v.metrics.items()
                                     if k.startswith("envelope_se_floor_")},
                        "envelope_members": v.metrics.get("envelope_members", 0)}) + "\n")
                    jsonl.flush()
                if session:
                    session.add(v)
                counts[v.status] += 1
                for probe, status in v.probes:
                    if probe in metamorphic and status == "ran":
                        metamorphic[probe] += 1
                case.release()
                if v.status in ("fail", "error"):
                    alarms += 1
                    print(f"FALSE ALARM {member.id} seed {seed}: {v.explain()}", flush=True)
                if v.status in ("pass", "fail"):
                    judged += 1
                    m = v.metrics
                    if a.verbose:
                        print(f"{v.status} {member.id} seed {seed} {v.id} min_cos {m['min_cos']:.7f} "
                              f"max_rel {m['max_rel']:.3e}", flush=True)
                    w = worst.setdefault(name, [2.0, None, -1.0, None])  # the first judged case sets both
                    if m.get("min_cos", 1.0) < w[0]:
                        w[0], w[1] = m["min_cos"], f"{v.id} seed {seed}"
                    if m.get("max_rel", 0.0) > w[2]:
                        w[2], w[3] = m["max_rel"], f"{v.id} seed {seed}"
            if session:
                session.write()
            if not a.quiet:
                print(f"{member.id} seed {seed}: {counts['pass']} pass, {counts['fail']} fail, {counts['error']} error, "
                      f"{counts['skip']} skip ({time.time() - t0:.1f} s); token_permutation ran on "
                      f"{metamorphic['token_permutation']}, expert_relabeling on {metamorphic['expert_relabeling']}",
                      flush=True)
        # A suite keeps the expert weights its cases share (several GB on the nightly): let this seed's go (its
        # cases, the last verdict) before the next seed's is loaded, or both are resident at once.
        suite = case = v = session = member = None
    for name, (c, cw, r, rw) in worst.items():
        print(f"panel-{name}: worst min_cos {c:.7f} ({cw}); worst max_rel {r:.3e} ({rw})")
    print(f"{judged - alarms} passed, {alarms} failed")
    if judged == 0:
        print("run_panel: nothing was judged", file=sys.stderr)
        return 4
    return 1 if alarms else 0


if __name__ == "__main__":
    sys.exit(main())
