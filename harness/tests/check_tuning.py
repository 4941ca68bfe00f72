#!/usr/bin/env python3
"""`moe-harness tune` and `check-table` end to end on the host kernel (one dispatch variant): tune writes a row per
statistical smoke case that check-table accepts against the suite; planted defects in copies of it (a placeholder
time, a duplicated key, a row of another device, a stale kernel version, an error above the case's max_rel) are each
refused with their message; `run --dispatch-table` names the row each case used.

Usage: check_tuning.py MOE_HARNESS OUT_DIR
"""
import csv
import json
import os
import shutil
import subprocess
import sys


def run(exe, *args):
    return subprocess.run([exe, *args], capture_output=True, text=True)


def rows_of(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def write(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)


def expect(exe, table, code, text, *extra):
    r = run(exe, "check-table", table, *extra)
    assert r.returncode == code, (table, extra, r.returncode, r.stdout, r.stderr)
    assert text in r.stdout, (table, text, r.stdout)


def main():
    exe, out = sys.argv[1], sys.argv[2]
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    table = f"{out}/host.csv"
    r = run(exe, "tune", "--suite", "smoke", "--kernel", "host", "--out", table)
    assert r.returncode == 0, (r.stdout, r.stderr)
    ids = run(exe, "list", "--suite", "smoke").stdout.split()
    statistical = [i for i in ids if not i.endswith("/exact")]
    rows = rows_of(table)
    assert sorted(row["case_id"] for row in rows) == sorted(statistical), "one row per statistical smoke case"
    for row in rows:
        assert row["gfx"] == "host" and int(row["cu_num"]) == os.cpu_count(), row
        assert float(row["us"]) > 0 and row["kernel_name"].startswith("host/") and row["dispatch"] == "", row
        assert row["runner_up"] == "", "the host kernel has one variant"
    expect(exe, table, 0, f"check-table: {len(rows)} row(s), {len(rows)} checked, 0 defect(s)", "--suite", "smoke")
    expect(exe, table, 4, "0 checked", )  # without the suite nothing is reproduced: never green

    planted = {
        "zero_time": (lambda rs: rs[0].update(us="0"), "us is zero or missing"),
        "nan_time": (lambda rs: rs[0].update(us="nan"), "us nan is not finite"),
        "duplicate": (lambda rs: rs.append(dict(rs[0])), "duplicates the key of line 2"),
        "stale": (lambda rs: rs[0].update(kernel_version="0"), "made by host-contract version '0'"),
        "err_above": (lambda rs: rs[0].update(err="0.5"), "err 0.5 is above the case's max_rel"),
    }
    for name, (edit, text) in planted.items():
        rs = rows_of(table)
        edit(rs)
        write(f"{out}/{name}.csv", rs)
        expect(exe, f"{out}/{name}.csv", 1, "defect: " + text, "--suite", "smoke")
    rs = rows_of(table)
    rs[0].update(gfx="gfx942", cu_num="304")
    write(f"{out}/other_device.csv", rs)
    expect(exe, f"{out}/other_device.csv", 0, "not checked: the row is for gfx942 with 304 compute units", "--suite",
           "smoke")
    expect(exe, f"{out}/other_device.csv", 1, "defect: not checked: the row is for gfx942", "--suite", "smoke",
           "--require-device")

    # Token keys the lookup never reaches: of 4, 5 and 8 tokens of one shape, 5 is shadowed (at 6 and 7 the power
    # of two below, 4, wins), so tune writes rows at 4 and 8 only and judges the row at 4's choice at 5 tokens.
    suite = f"{out}/between.yaml"
    with open(suite, "w") as f:
        f.write("suite: between\ndefaults: {hidden: 256, inter: 256, experts: 16, topk: 4}\n"
                "cases:\n  - sweep: {tokens: [4, 5, 8]}\n")
    between = f"{out}/between.csv"
    r = run(exe, "tune", "--suite", suite, "--kernel", "host", "--out", between)
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert sorted(int(row["token"]) for row in rows_of(between)) == [4, 8], rows_of(between)
    assert "token 5 is no key the lookup reaches (no row written); it dispatches from the row at token 4 (power of " \
           "two below), whose choice host/" in r.stdout and " passes here in " in r.stdout, r.stdout
    expect(exe, between, 0, "check-table: 2 row(s), 2 checked, 0 defect(s)", "--suite", suite)
    rs = rows_of(between)
    five = dict(rs[0], token="5", case_id=rs[0]["case_id"].replace("/T4/", "/T5/"))
    write(f"{out}/shadowed.csv", [rs[0], five, rs[1]])
    expect(exe, f"{out}/shadowed.csv", 1, "defect: token key 5 is reached only at exactly 5", "--suite", suite)

    r = run(exe, "run", "--suite", "smoke", "--kernel", "host", "--dispatch-table", table, "--report-dir",
            f"{out}/run")
    assert r.returncode == 0, (r.stdout, r.stderr)
    cases = json.load(open(f"{out}/run/report.json"))["cases"]
    ran = [c for c in cases if c["status"] == "pass"]
    assert ran and all(("[table host.csv:" in c["variant"]) == (not c["id"].endswith("/exact")) for c in ran), \
        [c["variant"] for c in ran]
    assert all("[table: no row of this shape" in c["variant"] for c in ran if c["id"].endswith("/exact"))
    print(f"check_tuning: {len(rows)} rows, {len(planted) + 2} planted defects refused, shadowed key not written, "
          "--dispatch-table ok")


if __name__ == "__main__":
    main()
