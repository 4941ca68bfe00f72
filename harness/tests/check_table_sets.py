#!/usr/bin/env python3
"""Table sets end to end on the host kernel (docs/tuning.md "Table sets", "Locks", "Coverage", "Merging"): a stock
table tune wrote and a hand-edited overlay over it. Each outcome asserted is the one the rules state: an overlay row
of a stock key is an override that fails until acknowledged, in check-table and in `run --dispatch-table` alike
(there exit 2 before any work); a tagged overlay row overrides nothing; the report's variant names the file:line the
rules choose; a lock fails closed on a changed table and a changed library version; coverage names each case's row
and the rows no case reaches; `tune --merge-into` refuses a merge that would drop a key and leaves the table's bytes.

Usage: check_table_sets.py MOE_HARNESS OUT_DIR
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


def write(path, rows, extra=()):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()) + [c for c in extra if c not in rows[0]])
        w.writeheader()
        w.writerows(rows)


def check(r, code, text, stream="stdout"):
    assert r.returncode == code, (r.args, r.returncode, r.stdout, r.stderr)
    assert text in getattr(r, stream), (r.args, text, r.stdout, r.stderr)


def variants(out, report):
    cases = json.load(open(f"{out}/{report}/report.json"))["cases"]
    return {next(p for p in c["id"].split("/") if p[0] == "T" and p[1:].isdigit()): c["variant"]
            for c in cases}  # by the token fragment T1, T2, ...


def hostile(exe, out, suite, stock, overlay, rows, lock):
    """Issue 48: an acknowledgement names one table (by resolved path; a file name two tables share is ambiguous),
    and what tune never writes is bad input (exit 2, before any work) in check-table and run --dispatch-table."""
    d1, d2 = f"{out}/d1/overlay.csv", f"{out}/d2/overlay.csv"
    for d in (d1, d2):
        os.makedirs(os.path.dirname(d))
        write(d, [dict(rows[1])])
    both = f"{stock}:{d1}:{d2}"
    r = run(exe, "check-table", both, "--acknowledge-override", "overlay.csv:2")
    check(r, 2, "key '--acknowledge-override': 'overlay.csv:2' is ambiguous", "stderr")
    assert d1 in r.stderr and d2 in r.stderr, r.stderr
    r = run(exe, "check-table", both, "--acknowledge-override", f"{d1}:2")
    check(r, 1, f"{d2}:2: defect: overrides {d1}:2")
    assert f"{d1}:2: override, acknowledged" in r.stdout, r.stdout
    check(run(exe, "check-table", f"{stock}::{overlay}"), 2, "key 'tables'", "stderr")
    r = run(exe, "run", "--suite", suite, "--kernel", "host", "--dispatch-table", f"{stock}:", "--report-dir",
            f"{out}/empty-element")
    check(r, 2, "key '--dispatch-table'", "stderr")
    check(run(exe, "check-table", stock, "--lock", f"{out}/both.json", "--verify-lock", lock), 2, "key '--lock'",
          "stderr")
    assert not os.path.exists(f"{out}/both.json")
    bad = f"{out}/bad.csv"
    for column, cell in (("dispatch", "grouped_mma=on,grouped_mma=off"), ("dispatch", "grouped_mma=on,"),
                         ("dispatch", "grouped_tokens_per_pass=8"), ("cu_num", " 2"), ("cu_num", str(2**64)),
                         ("token", "+3"), ("us", "0x1p4")):
        write(bad, [dict(rows[1], **{column: cell})])
        check(run(exe, "check-table", stock, bad, "--acknowledge-override", "bad.csv:2"), 2, f"key '{column}'",
              "stderr")
        r = run(exe, "run", "--suite", suite, "--kernel", "host", "--dispatch-table", f"{stock}:{bad}",
                "--acknowledge-override", "bad.csv:2", "--report-dir", f"{out}/bad-run")
        check(r, 2, f"key '{column}'", "stderr")
        assert not os.path.exists(f"{out}/bad-run/report.json")
    with open(bad, "w") as f:
        f.write(open(stock).read().replace("\n", ",_tag,_tag\n", 1))  # the header names _tag twice
    check(run(exe, "check-table", bad), 2, "key '_tag'", "stderr")
    # An AITER table (no `shape` column) whose runner-up cells the reader does not use: each is still a number or
    # empty, refused naming file:line and the column; two unnamed header columns are refused naming the header.
    aiter_header = ("gfx,cu_num,token,model_dim,inter_dim,expert,topk,act_type,dtype,q_dtype_a,q_dtype_w,q_type,"
                    "use_g1u1,doweight_stage1,block_m,ksplit,us,err,kernelName1")
    aiter_row = ("gfx942,80,16,2048,128,256,8,ActivationType.Silu,torch.bfloat16,torch.float8_e4m3fnuz,"
                 "torch.float8_e4m3fnuz,QuantType.per_Token,1,0,32,0,10,0.001,k1")
    aiter = f"{out}/aiter.csv"
    for extra, cells, key, line in ((",runner_up_us", ",date1", "runner_up_us", 2),
                                    (",runner_up_err", ",\0\0", "runner_up_err", 2), (",,", ",a,b", "header", 1)):
        with open(aiter, "w") as f:
            f.write(f"{aiter_header}{extra}\n{aiter_row}{cells}\n")
        r = run(exe, "check-table", aiter)
        check(r, 2, f"{aiter}:{line}: key '{key}'", "stderr")
        assert "Fix: " in r.stderr, r.stderr


def main():
    exe, out = sys.argv[1], sys.argv[2]
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    suite = f"{out}/sets.yaml"
    with open(suite, "w") as f:
        f.write("suite: sets\ndefaults: {hidden: 256, inter: 256, experts: 16, topk: 4}\n"
                "cases:\n  - sweep: {tokens: [1, 2, 4]}\n")
    stock = f"{out}/stock.csv"
    check(run(exe, "tune", "--suite", suite, "--kernel", "host", "--out", stock), 0, "3 row(s) written")
    rows = rows_of(stock)
    assert [int(r["token"]) for r in rows] == [1, 2, 4], rows  # lines 2, 3, 4

    # overlay.csv line 2: the stock key at T2 (an override of stock.csv:3).
    overlay = f"{out}/overlay.csv"
    write(overlay, [dict(rows[1])])
    r = run(exe, "check-table", stock, overlay)
    check(r, 1, f"{overlay}:2: defect: overrides {stock}:3")
    r = run(exe, "check-table", f"{stock}:{overlay}", "--acknowledge-override", "overlay.csv:2", "--suite", suite)
    check(r, 0, "4 row(s), 4 checked, 0 defect(s); 2 table(s), 0 tagged row(s), 1 override(s)")
    assert f"{overlay}:2: override, acknowledged: overrides {stock}:3" in r.stdout, r.stdout
    # run: an unacknowledged override is bad input before any work; acknowledged, T2 dispatches from the overlay.
    r = run(exe, "run", "--suite", suite, "--kernel", "host", "--dispatch-table", stock, "--dispatch-table", overlay,
            "--report-dir", f"{out}/refused")
    check(r, 2, "not acknowledged", "stderr")
    assert not os.path.exists(f"{out}/refused/report.json")
    r = run(exe, "run", "--suite", suite, "--kernel", "host", "--dispatch-table", f"{stock}:{overlay}",
            "--acknowledge-override", f"{overlay}:2", "--report-dir", f"{out}/acked")
    check(r, 0, "")
    v = variants(out, "acked")
    assert "[table stock.csv:2, token 1, exact]" in v["T1"], v
    assert "[table overlay.csv:2, token 2, exact]" in v["T2"], v
    assert "[table stock.csv:4, token 4, exact]" in v["T4"], v

    # --run: every dispatched row's case through the set's lookup, judged and timed (the host's times vary under
    # load: a wide factor here; a row claiming a time a million times off is drift whatever the load).
    r = run(exe, "check-table", stock, overlay, "--acknowledge-override", "overlay.csv:2", "--run", suite,
            "--drift-factor", "1000")
    check(r, 0, "3 row(s) run through the lookup, 3 passed, 0 drifted")
    assert f"{overlay}:2: run: passes in" in r.stdout and f"{stock}:3: run:" not in r.stdout, r.stdout  # overridden
    drift = f"{out}/drift.csv"
    write(drift, [dict(rows[1], us=str(float(rows[1]["us"]) * 1e6))])
    r = run(exe, "check-table", stock, drift, "--acknowledge-override", "drift.csv:2", "--run", suite,
            "--drift-factor", "1000")
    check(r, 1, f"{drift}:2: defect: drift: measured")

    # A tagged overlay row takes no part: no override, T2 from the stock row.
    tagged = f"{out}/tagged.csv"
    write(tagged, [dict(rows[1], _tag="candidate")], extra=["_tag"])
    check(run(exe, "check-table", stock, tagged, "--suite", suite), 0, "1 tagged row(s), 0 override(s)")
    r = run(exe, "run", "--suite", suite, "--kernel", "host", "--dispatch-table", f"{stock}:{tagged}",
            "--report-dir", f"{out}/tagged")
    check(r, 0, "")
    assert "[table stock.csv:3, token 2, exact]" in variants(out, "tagged")["T2"]

    # An any-CU row (cu_num 0) in a later table at T4 does not displace the exact-CU stock row; at T8, a key the
    # stock lacks, it serves (coverage below).
    anycu = f"{out}/anycu.csv"
    write(anycu, [dict(rows[2], cu_num="0"), dict(rows[2], cu_num="0", token="8",
                                                  case_id=rows[2]["case_id"].replace("/T4/", "/T8/"))])
    cover = f"{out}/cover.yaml"
    with open(cover, "w") as f:
        f.write("suite: cover\ndefaults: {hidden: 256, inter: 256, experts: 16, topk: 4}\n"
                "cases:\n  - sweep: {tokens: [3, 4, 12]}\n  - {tokens: 4, experts: 32}\n")
    r = run(exe, "check-table", stock, anycu, "--coverage", cover)
    check(r, 0, "0 override(s)")
    assert f"{stock}:3 (power of two below, token 2)" in r.stdout, r.stdout              # T3
    assert f"{stock}:4 (exact, token 4)" in r.stdout, r.stdout                           # T4: exact CU first
    assert f"{anycu}:3 (any-CU row (cu_num=0), power of two below, token 8)" in r.stdout  # T12
    assert "no row: default heuristic" in r.stdout, r.stdout                             # 32 experts
    assert f"{stock}:2: no case of suite {cover} reaches this row" in r.stdout, r.stdout
    assert f"{anycu}:2: no case" in r.stdout, r.stdout  # at T4 the exact-CU row wins

    # Locks: written for a passing set, verified, then drift in a table and in the library version fails closed.
    lock = f"{out}/lock.json"
    check(run(exe, "check-table", stock, overlay, "--acknowledge-override", "overlay.csv:2", "--lock", lock), 4,
          "locked 2 table(s) with library version 'host-contract")
    check(run(exe, "check-table", "--verify-lock", lock, "--acknowledge-override", "overlay.csv:2"), 0, "lock verified")
    edited = rows_of(overlay)
    edited[0]["us"] = str(float(edited[0]["us"]) * 2)
    write(overlay, edited)
    r = run(exe, "check-table", "--verify-lock", lock, "--acknowledge-override", "overlay.csv:2")
    check(r, 1, f"lock drift: {overlay}: sha256 locked")
    locked = json.load(open(lock))
    locked["library_version"] = "host-contract 0"
    json.dump(locked, open(lock, "w"))
    check(run(exe, "check-table", stock, overlay, "--acknowledge-override", "overlay.csv:2", "--verify-lock", lock), 1,
          "kernel library version: locked 'host-contract 0', now 'host-contract")

    hostile(exe, out, suite, stock, overlay, rows, lock)

    # tune --merge-into: a table whose T2 row has a key the new set lacks (model_dim edited) is not rewritten.
    target = f"{out}/target.csv"
    old = rows_of(stock)
    old[1]["model_dim"] = "512"
    write(target, old)
    before = open(target, "rb").read()
    r = run(exe, "tune", "--suite", suite, "--kernel", "host", "--merge-into", target)
    check(r, 1, f"merge refused: {target}:3: the row of case")
    assert open(target, "rb").read() == before
    assert os.path.exists(target + ".partial")
    # Restored, the same merge goes through, resuming from the partial output.
    write(target, rows_of(stock))
    r = run(exe, "tune", "--suite", suite, "--kernel", "host", "--merge-into", target)
    check(r, 0, "3 row(s) tuned before")
    assert not os.path.exists(target + ".partial") and len(rows_of(target)) == 3
    print("check_table_sets: overrides, tags, any-CU rows, coverage, locks and merges as the rules state")


if __name__ == "__main__":
    main()
