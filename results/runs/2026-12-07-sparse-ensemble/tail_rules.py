#!/usr/bin/env python3
"""Offline: which members' maxima should set a maximum's scale. Reads the envelopes a sweep kept in its reference
cache (`run_panel.py --reference-cache DIR`: the `moe.envelope` metadata of each safetensors file) and the sweep's
JSON lines, recovers each kernel verdict's raw shown `expert_partial` component z (its corrected z un-corrected for
m components, times the scale it was divided by), and re-derives the scale under several rules, each as
verdict/envelope.cpp's tail_scale does it (the smallest scale at or above the RMS scale at which the chosen members'
corrected maxima have an RMS of 1), then the kernel's corrected z under each. The RMS scale (the larger of the
rounding and the sparse members' RMS spread) is read back from the record: the rules differ only in the tail.

  tail_rules.py M CACHE_DIR JSONL [CASE_SUBSTRING]      (M: the kernel's components, 1024 on the T128 cases)"""
import glob
import json
import math
import struct
import sys


def sf2(z):
    return math.erfc(abs(z) / math.sqrt(2))


def inv2(p):  # the z whose two-sided tail is p
    lo, hi = 0.0, 40.0
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if sf2(mid) > p else (lo, mid)
    return lo


def corr(z, m):  # Sidak: the z of 1 - (1 - p)^m
    p = sf2(z)
    return inv2(-math.expm1(m * math.log1p(-p)) if p < 1 else 1.0)


def uncorr(c, m):  # the single z whose corrected z is c
    lo, hi = 0.0, 60.0
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if corr(mid, m) < c else (lo, mid)
    return lo


def tail_scale(zm, scale):
    rms = lambda s: math.sqrt(sum(corr(z / s, m) ** 2 for z, m in zm) / len(zm))
    if not zm or rms(scale) <= 1:
        return scale
    lo, hi = scale, 2 * scale
    while rms(hi) > 1:
        lo, hi = hi, 2 * hi
    for _ in range(50):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if rms(mid) > 1 else (lo, mid)
    return hi


def maxima(ms):
    return [(s[5], s[6]) for m in ms for s in m["stats"] if s[0] == "expert_partial" and s[5] is not None]


def main():
    M, cache, jsonl, sub = int(sys.argv[1]), sys.argv[2], sys.argv[3], (sys.argv[4] if len(sys.argv) > 4 else "T128")
    envs = []
    for f in glob.glob(cache + "/*.safetensors"):
        raw = open(f, "rb").read()
        n = struct.unpack("<Q", raw[:8])[0]
        md = json.loads(raw[8:8 + n]).get("__metadata__", {})
        if sub in md.get("moe.reference_cache_key", "") and "moe.envelope" in md:
            e = json.loads(md["moe.envelope"])
            if e.get("sparse"):
                envs.append(e)
    rules = {"sparse (the code)": lambda e: maxima(e["sparse"]),
             "sparse + accumulation": lambda e: maxima(e["sparse"]) + maxima(e["members"]),
             "all three": lambda e: maxima(e["sparse"]) + maxima(e["members"]) + maxima(e["rounding"])}
    z = {r: [] for r in rules}
    for line in open(jsonl):
        rec = json.loads(line)
        if sub not in rec["id"]:
            continue
        zk, scale = rec["systematic"]["expert_partial"][0], rec["z_scale"]["expert_partial"]
        # The envelope of this verdict: the one whose sparse rule gives the recorded scale.
        match = [e for e in envs if any(abs(tail_scale(maxima(e["sparse"]), s0) - scale) < 1e-6 * scale
                                        for s0 in [scale] + [x for x in (scale,)])]
        raw = uncorr(abs(zk), M) * scale
        base = None
        for e in envs:
            # the RMS scale of this envelope: the record's scale where the sparse rule did not raise it
            sp = [m for m in e["sparse"]]
            ss = [s[4] for m in sp for s in m["stats"] if s[0] == "expert_partial"]
            rr = [s[4] for m in e["rounding"] for s in m["stats"] if s[0] == "expert_partial"]
            s0 = max(1.0, math.sqrt(sum(x * x for x in rr) / len(rr)), math.sqrt(sum(x * x for x in ss) / len(ss)))
            if abs(tail_scale(maxima(e["sparse"]), s0) - scale) < 1e-6 * scale:
                base = (e, s0)
                break
        if base is None:
            print("no envelope for", rec["seed"], rec["id"])
            continue
        e, s0 = base
        line_out = [f"seed {rec['seed']} z {zk:+.2f} raw {raw:.1f}"]
        for r, f in rules.items():
            s = tail_scale(f(e), s0)
            z[r].append(corr(raw / s, M))
            line_out.append(f"{r}: scale {s:.2f} z {z[r][-1]:.2f}")
        print(" | ".join(line_out))
    for r, v in z.items():
        print(f"{r}: n {len(v)} RMS {math.sqrt(sum(x * x for x in v) / len(v)):.2f} max {max(v):.2f}")


if __name__ == "__main__":
    main()
