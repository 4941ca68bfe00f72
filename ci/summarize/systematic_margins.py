#!/usr/bin/env python3
"""The systematic statistics' calibration margins, from one or more `moe-harness calibrate --json` files:

  systematic_margins.py CAL.json...

One row per statistic (per statistic and limits, where the limits differ by scheme) over every file and scheme row: runs where it ran and did not, the worst tested z (channel:
the largest z, one-sided; the others: the largest |z|) beside its threshold, the worst |effect| beside its floor,
and the run closest to failing. A statistic fails a run only when its z passes the threshold AND its effect passes
the floor, so a run's closeness is the smaller of its two shares (z / threshold, |effect| / floor), and the margin
is 1 / the largest closeness (how many times further both would have to grow on that run). Each worst value names
its case and seed. Exit 2, naming the file, when a file is not a calibrate JSON with systematic tables.
"""
import json
import sys


def fail(path, problem):
    print(f"systematic_margins: {path}: {problem}", file=sys.stderr)
    sys.exit(2)


def main(paths):
    if not paths:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    stats = {}
    for path in paths:
        try:
            with open(path) as f:
                j = json.load(f)
            rows = j["schemes"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            fail(path, f"cannot read a calibrate JSON ({e!r})")
        if not any("systematic" in r for r in rows.values()):
            fail(path, "no scheme row has `systematic` (a calibrate JSON of a binary without the statistics?)")
        for row in rows.values():
            for name, s in row.get("systematic", {}).items():
                # A statistic whose limits differ by scheme (expert: 5e-3 bf16, 3e-2 quantized) gets a row per limit.
                w = stats.setdefault((name, s["z_threshold"], s["effect_floor"]),
                                     {"ran": 0, "not_run": 0, "z": None, "effect": None, "closest": None,
                                      "z_threshold": s["z_threshold"], "floor": s["effect_floor"]})
                w["ran"] += s["ran"]
                w["not_run"] += s["not_run"]
                if s["ran"] == 0:
                    continue
                for key, value, at in (("z", s["worst_tested_z"], s["worst_z_at"]),
                                       ("effect", s["worst_abs_effect"], s["worst_effect_at"]),
                                       ("closest", s["closest_share"], s["closest_at"])):
                    if w[key] is None or value > w[key][0]:
                        w[key] = (value, at)
    print("| statistic | ran | not run | worst z | z threshold | worst \\|effect\\| | floor | closest (share) | margin |")
    print("|---|---|---|---|---|---|---|---|---|")
    lines = []
    for key in sorted(stats):
        w = stats[key]
        name = key[0] if sum(k[0] == key[0] for k in stats) == 1 else f"{key[0]} (floor {key[2]:g})"
        if w["ran"] == 0:
            print(f"| {name} | 0 | {w['not_run']} | - | {w['z_threshold']:g} | - | {w['floor']:g} | - | - |")
            continue
        c = w["closest"][0]
        margin = f"{1 / c:.1f}x" if c > 0 else "inf (z never positive)"
        print(f"| {name} | {w['ran']} | {w['not_run']} | {w['z'][0]:.3g} | {w['z_threshold']:g} | {w['effect'][0]:.3e} "
              f"| {w['floor']:g} | {100 * c:.1f}% | {margin} |")
        lines.append(f"- {name}: worst z at {w['z'][1]}; worst effect at {w['effect'][1]}; closest at {w['closest'][1]}")
    print()
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:])
