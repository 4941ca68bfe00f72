#!/usr/bin/env python3
"""systematic_defects on the smoke suite: the clean host kernel fails nothing, per token or systematically; a gain of
3 % and of 0.3 % and truncation toward zero at the output, which the per-token checks pass on most or all cases,
are caught on every case by the systematic statistics; a dead channel fails every case one way or the other.

Usage: check_systematic_defects.py SYSTEMATIC_DEFECTS
"""
import subprocess
import sys


def main():
    r = subprocess.run([sys.argv[1], "--suite", "smoke"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    rows = {}
    for line in r.stdout.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 7 and cells[1].isdigit():
            rows[cells[0]] = {"cases": int(cells[1]), "per_token_failed": int(cells[2]), "per_token_passed": int(cells[3]),
                              "still_passing": int(cells[5]), "any": cells[6]}
    assert set(rows) == {"clean", "dead_channel", "gain_1.03", "gain_1.003", "truncation", "skipped_requant"}, rows
    assert rows["clean"]["cases"] >= 25 and rows["clean"]["per_token_failed"] == 0, rows["clean"]
    assert rows["clean"]["any"] == "none", rows["clean"]  # no systematic false alarm on the correct kernel
    for d in ("dead_channel", "gain_1.03", "gain_1.003", "truncation"):
        assert rows[d]["cases"] >= 25 and rows[d]["still_passing"] == 0, (d, rows[d])
    assert rows["gain_1.003"]["per_token_passed"] == rows["gain_1.003"]["cases"], rows["gain_1.003"]  # per token: blind
    print("ok:", rows)


if __name__ == "__main__":
    main()
