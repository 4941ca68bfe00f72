#!/usr/bin/env python3
"""A run that checked nothing is never green (docs/cli.md "Exit codes"):

- filters (ours or --gtest_filter) that select no case, and a run in which every (case, kernel) was skipped, exit 4
  and say so on stderr; a report is still written; `list` whose filters select no case exits 4 too;
- --gtest arguments GoogleTest does not know are usage errors (exit 2), and nothing is written;
- GoogleTest test names hold neither '-' nor ':' (the filter syntax's negative-pattern start and separator): the
  docs/cli.md's mapping replaces each by '_', `list --gtest` prints the names, each name given to --gtest_filter
  selects exactly its test, and two ids that would share a name are refused (exit 2);
- a GoogleTest shard whose share of a non-empty selection is empty exits 0 and says so (the merged report is the
  verdict), while filters that select nothing exit 4 in every shard;
- `--gtest --gtest_list_tests` lists the names and exits 0 without a report.

Usage: check_nothing_checked.py MOE_HARNESS WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys

T1 = "*T1/*"  # the smoke suite's one-token cases


def run(exe, *args, env=None):
    return subprocess.run([exe, *args], capture_output=True, text=True, env=env)


def expect(r, code, needle, what):
    assert r.returncode == code and needle in r.stderr, \
        f"{what}: exit {r.returncode} (want {code}), stderr wants {needle!r}:\n{r.stderr[-2500:]}\n{r.stdout[-1500:]}"


def report(d):
    return json.load(open(f"{d}/report.json"))


def gtest_name(s):
    # The mapping docs/cli.md states: '-' and ':' become '_'; nothing else changes.
    return s.replace("-", "_").replace(":", "_")


def main():
    exe, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    smoke_ids = run(exe, "list", "--suite", "smoke").stdout.split()
    t1_ids = run(exe, "list", "--suite", "smoke", "--filter", T1).stdout.split()
    assert len(smoke_ids) > 20 and 2 <= len(t1_ids) < len(smoke_ids), (len(smoke_ids), t1_ids)

    # Our filters select nothing: exit 4, said on stderr, an empty report beside it.
    r = run(exe, "run", "--suite", "smoke", "--kernel", "host", "--filter", "no-such-case*", "--report-dir", f"{work}/f0")
    expect(r, 4, "nothing checked", "--filter selecting no case")
    assert "selected no case" in r.stderr, r.stderr
    assert report(f"{work}/f0")["cases"] == []

    # `list` whose filters select nothing is "nothing checked" as well (exit 4), as `run` with them would end.
    r = run(exe, "list", "--suite", "smoke", "--filter", "zzz*")
    expect(r, 4, "nothing checked", "list --filter selecting no case")
    assert r.stdout == "", r.stdout

    # --gtest_filter selects nothing: exit 4 too; the hint names the mapping of '-' (the pattern as users write it).
    r = run(exe, "run", "--suite", "smoke", "--kernel", "host", "--filter", T1, "--report-dir", f"{work}/g0",
            "--gtest", "--gtest_filter=host-contract.*")
    expect(r, 4, "nothing checked", "--gtest_filter 'host-contract.*' (a negative pattern: selects nothing)")
    assert "moe-harness list --gtest" in r.stderr, r.stderr

    # Every (case, kernel) skipped (a budget below every case: the host kernel declines each): exit 4, all in the report.
    r = run(exe, "run", "--suite", "smoke", "--kernel", "host", "--filter", T1, "--host-budget", "1",
            "--report-dir", f"{work}/skip")
    expect(r, 4, "nothing checked", "every case skipped")
    cases = report(f"{work}/skip")["cases"]
    assert len(cases) == len(t1_ids) and all(c["status"] == "skip" for c in cases), [c["status"] for c in cases]

    # Arguments GoogleTest does not know: usage errors, no report directory.
    for bad in ["--gtest_filtr=host_contract.*", "--bogus", "--gtest_output=xml:x.xml"]:
        d = f"{work}/bad{len(bad)}"
        r = run(exe, "run", "--suite", "smoke", "--kernel", "host", "--filter", T1, "--report-dir", d, "--gtest", bad)
        expect(r, 2, bad.split("=")[0], f"--gtest {bad}")
        assert not os.path.exists(d), f"--gtest {bad} wrote {d}"

    # The names: `list --gtest` prints KERNEL.CASE mapped, for the host kernel here.
    r = run(exe, "list", "--suite", "smoke", "--filter", T1, "--gtest", "--kernel", "host")
    assert r.returncode == 0, r.stderr
    names = r.stdout.split()
    assert names == [gtest_name(f"host-contract.{i}") for i in t1_ids], (names, t1_ids)
    assert all("-" not in n and ":" not in n for n in names)
    # Each name as --gtest_filter runs exactly that test and judges it (exit 0).
    for i, (name, cid) in enumerate(zip(names, t1_ids)):
        d = f"{work}/name{i}"
        r = run(exe, "run", "--suite", "smoke", "--kernel", "host", "--report-dir", d, "--no-timing", "--gtest",
                f"--gtest_filter={name}")
        assert r.returncode == 0, (name, r.returncode, r.stderr[-2000:])
        assert [(c["kernel"], c["id"], c["status"]) for c in report(d)["cases"]] == [("host-contract", cid, "pass")]
    # A glob over the mapped suite name selects the whole selection.
    r = run(exe, "run", "--suite", "smoke", "--kernel", "host", "--filter", T1, "--report-dir", f"{work}/glob",
            "--no-timing", "--gtest", "--gtest_filter=host_contract.*")
    assert r.returncode == 0 and len(report(f"{work}/glob")["cases"]) == len(t1_ids), r.stderr[-2000:]

    # Two cases whose ids differ only in '-' against '_' would share a name: refused before anything is written.
    open(f"{work}/collide.yaml", "w").write(
        "suite: collide\ndefaults: {hidden: 256, inter: 256, experts: 16, topk: 4}\n"
        "cases:\n  - {tokens: 3, variant: x-y}\n  - {tokens: 3, variant: x_y}\n")
    r = run(exe, "run", "--suite", f"{work}/collide.yaml", "--kernel", "host", "--report-dir", f"{work}/collide")
    expect(r, 2, "have the same GoogleTest name", "ids colliding in their GoogleTest names")
    assert not os.path.exists(f"{work}/collide")

    # Sharding: more shards than selected tests; the empty shards exit 0 saying so, the shards cover the selection.
    shards, covered = 8, []
    for i in range(shards):
        env = dict(os.environ, GTEST_TOTAL_SHARDS=str(shards), GTEST_SHARD_INDEX=str(i))
        d = f"{work}/shard{i}"
        r = run(exe, "run", "--suite", "smoke", "--kernel", "host", "--filter", T1, "--report-dir", d, "--no-timing",
                env=env)
        got = [c["id"] for c in report(d)["cases"]]
        assert r.returncode == 0, (i, r.returncode, r.stderr[-2000:])
        if not got:
            assert "shard" in r.stderr and "judged nothing" in r.stderr, r.stderr[-2000:]
        covered += got
    assert sorted(covered) == sorted(t1_ids), (covered, t1_ids)
    env = dict(os.environ, GTEST_TOTAL_SHARDS="2", GTEST_SHARD_INDEX="0")
    r = run(exe, "run", "--suite", "smoke", "--kernel", "host", "--filter", "no-such-case*", "--report-dir",
            f"{work}/shard-none", env=env)
    expect(r, 4, "nothing checked", "a shard of a selection of nothing")

    # --gtest_list_tests: the names, exit 0, no report directory.
    r = run(exe, "run", "--suite", "smoke", "--kernel", "host", "--filter", T1, "--report-dir", f"{work}/lt",
            "--gtest", "--gtest_list_tests")
    assert r.returncode == 0 and not os.path.exists(f"{work}/lt"), (r.returncode, r.stderr[-1500:])
    assert "host_contract." in r.stdout and all(gtest_name(i) in r.stdout for i in t1_ids), r.stdout[-1500:]
    print(f"nothing checked -> 4; unknown gtest args -> 2; {len(names)} gtest names each select their test; "
          f"{shards} shards cover {len(t1_ids)} tests")


if __name__ == "__main__":
    main()
