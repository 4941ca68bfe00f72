#!/usr/bin/env python3
"""The hostile inputs of issue 35, one ITEM a ctest test, each asserting the exit code docs/reliability.md documents
("Exit codes", "Bad input": 2 for bad input or usage) and the key the message must name (`key 'KEY'`), and that the
refusal comes before any work: nothing written where the command would have written.

  output_paths      --junit, --json, --report-dir under /proc or /sys; export --out there; an existing report dir
  shard_env         GTEST_TOTAL_SHARDS / GTEST_SHARD_INDEX that are not numbers, out of range, or one without the other
  foreign_journal   run --resume and report on a journal holding a record of another kernel, another suite's case,
                    a slot that is negative, past the run, or a (case, kernel) recorded twice
  index_duplicate   judge --dir whose index.json lists a case twice
  dispatch_table    a garbage dispatch cell (run --dispatch-table and check-table), a shape key its case_id cannot
                    give, a UTF-8 BOM (before this harness's columns and before AITER's)
  case_values       `tokens:` and `tokens: null`, a sweep of quant and quant.weight, a safetensors header naming a
                    tensor twice, --seed +1
  repeat_sigterm    --gtest_repeat=-1 and past the bound; SIGTERM to a run with many repetitions ends it within
                    seconds, exit 143, its reports written
  plugin_load       a plugin whose ELF constructor calls _exit(42), raises SIGSEGV, calls exit(0) or hangs: the run goes
                    on, each of its cases an error record naming the library and what loading it did, exit 3

Usage: check_hostile_inputs.py MOE_HARNESS KERNELS_BUILD_DIR WORK_DIR ITEM
"""
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import time

TIMEOUT = 120
failures = []


def run(*args, env=None):
    try:
        return subprocess.run(list(args), capture_output=True, text=True, timeout=TIMEOUT,
                              env=None if env is None else {**os.environ, **env})
    except subprocess.TimeoutExpired:
        return None


def expect(name, r, code, key, *needles):
    """Exit `code`; stderr names `key` as `key 'KEY'` (when given) and holds every needle."""
    if r is None:
        failures.append(f"{name}: no answer within {TIMEOUT} s")
        return
    want = ([f"key '{key}'"] if key else []) + list(needles)
    missing = [n for n in want if n not in r.stderr]
    if r.returncode != code or missing:
        failures.append(f"{name}: exit {r.returncode} (want {code}); stderr lacks {missing}: "
                        f"{r.stderr.strip()[-600:]}")
    else:
        print(f"ok {name}: exit {code}: {r.stderr.strip()[-200:]}")


def absent(name, path):
    if os.path.exists(path):
        failures.append(f"{name}: {path} was written by a refused command")


def output_paths(exe, work, _):
    base = [exe, "run", "--suite", "smoke", "--kernel", "host", "--filter", "*T1/*"]
    exported = f"{work}/exported"
    r = run(exe, "export", "--suite", "smoke", "--filter", "*T1/*", "--out", exported)
    assert r is not None and r.returncode == 0, r and r.stderr[-2000:]
    for special in ("/proc", "/sys"):
        expect(f"--junit {special}", run(*base, "--report-dir", f"{work}/j", "--junit", f"{special}/fz.xml"), 2,
               "--junit")
        expect(f"--json {special}", run(*base, "--report-dir", f"{work}/k", "--json", f"{special}/fz.json"), 2,
               "--json")
        expect(f"--report-dir {special}", run(*base, "--report-dir", f"{special}/fz"), 2, "--report-dir")
        expect(f"export --out {special}", run(exe, "export", "--suite", "smoke", "--filter", "*T1/*", "--out",
                                               f"{special}/fz"), 2, "--out")
        expect(f"judge --dir --report-dir {special}", run(exe, "judge", "--dir", exported, "--report-dir",
                                                           f"{special}/fz"), 2, "--report-dir")
        expect(f"judge --dir --junit {special}", run(exe, "judge", "--dir", exported, "--report-dir", f"{work}/jj",
                                                      "--junit", f"{special}/fz.xml"), 2, "--junit")
    for d in ("j", "k", "jj"):
        absent("refused run", f"{work}/{d}")
    open(f"{work}/a-file", "w").close()
    expect("--report-dir under a file", run(*base, "--report-dir", f"{work}/a-file/sub"), 2, "--report-dir")


def shard_env(exe, work, _):
    base = [exe, "run", "--suite", "smoke", "--kernel", "host", "--filter", "*T1/*", "--report-dir"]
    for n, (total, index, key) in enumerate([("abc", "0", "GTEST_TOTAL_SHARDS"), ("2", "x", "GTEST_SHARD_INDEX"),
                                             ("2", "2", "GTEST_SHARD_INDEX"), ("0", "0", "GTEST_TOTAL_SHARDS"),
                                             ("-3", "0", "GTEST_TOTAL_SHARDS"), ("2", "-1", "GTEST_SHARD_INDEX")]):
        expect(f"GTEST_TOTAL_SHARDS={total} GTEST_SHARD_INDEX={index}",
               run(*base, f"{work}/s{n}", env={"GTEST_TOTAL_SHARDS": total, "GTEST_SHARD_INDEX": index}), 2, key)
        absent("refused shard", f"{work}/s{n}")
    env = {k: v for k, v in os.environ.items() if k != "GTEST_SHARD_INDEX"}
    env["GTEST_TOTAL_SHARDS"] = "2"
    r = subprocess.run([*base, f"{work}/s-one"], capture_output=True, text=True, timeout=TIMEOUT, env=env)
    expect("GTEST_TOTAL_SHARDS without GTEST_SHARD_INDEX", r, 2, "GTEST_SHARD_INDEX")


def journal_lines(d):
    return [json.loads(l) for l in open(f"{d}/journal.jsonl").read().splitlines()]


def write_journal(d, lines):
    with open(f"{d}/journal.jsonl", "w") as f:
        f.write("".join(json.dumps(l) + "\n" for l in lines))


def foreign_journal(exe, work, _):
    good = f"{work}/good"
    r = run(exe, "run", "--suite", "smoke", "--kernel", "host", "--no-timing", "--filter", "*T1/*", "--report-dir",
            good)
    assert r is not None and r.returncode == 0, r and r.stderr[-2000:]
    other = run(exe, "list", "--suite", "nightly").stdout.split()
    smoke = set(run(exe, "list", "--suite", "smoke").stdout.split())
    foreign_id = next(i for i in other if i not in smoke)

    def variant(name, edit):
        d = f"{work}/{name}"
        shutil.copytree(good, d)
        lines = journal_lines(d)
        records = [l for l in lines if l["type"] == "record"]
        lines = [l for l in lines if l["type"] != "end" and l is not records[-1]]  # a run killed before its last
        edit([l for l in lines if l["type"] == "record"])
        write_journal(d, lines)
        return d

    def kernel(rs):
        rs[0]["record"]["kernel"] = "gpu-fused-moe"

    def case(rs):
        rs[0]["record"]["id"] = foreign_id

    def negative(rs):
        rs[0]["slot"] = -1

    def past(rs):
        rs[0]["slot"] = 99999

    def twice(rs):
        rs[1]["record"] = dict(rs[0]["record"])

    for name, edit, key in [("kernel", kernel, "record.kernel"), ("case", case, "record.id"),
                            ("negative_slot", negative, "slot"), ("twice", twice, "slot")]:
        d = variant(name, edit)
        expect(f"run --resume, foreign {name}", run(exe, "run", "--resume", d), 2, key)
        expect(f"report, foreign {name}", run(exe, "report", d), 2, key)
    d = variant("past_slot", past)
    expect("run --resume, slot past the run", run(exe, "run", "--resume", d), 2, "slot", "foreign record")
    # A foreign record followed by the run's own record for the same slot (the later line replaces a slot's record):
    # refused wherever it stands (issue 48 item 2: it was dropped unchecked).
    d = f"{work}/foreign_then_own"
    shutil.copytree(good, d)
    lines = journal_lines(d)
    first = next(i for i, l in enumerate(lines) if l["type"] == "record")
    foreign = json.loads(json.dumps(lines[first]))
    foreign["record"]["kernel"] = "gpu-fused-moe"
    write_journal(d, lines[:first] + [foreign] + lines[first:])
    expect("run --resume, foreign record then own", run(exe, "run", "--resume", d), 2, "record.kernel",
           "foreign record")
    expect("report, foreign record then own", run(exe, "report", d), 2, "record.kernel", "foreign record")


def index_duplicate(exe, work, _):
    d = f"{work}/export"
    r = run(exe, "export", "--suite", "smoke", "--filter", "*T1/*", "--out", d)
    assert r is not None and r.returncode == 0, r and r.stderr[-2000:]
    index = json.load(open(f"{d}/index.json"))
    index["cases"].append(dict(index["cases"][0]))
    json.dump(index, open(f"{d}/index.json", "w"))
    n = len(index["cases"]) - 1
    expect("judge --dir, a case listed twice", run(exe, "judge", "--dir", d, "--report-dir", f"{work}/rep"), 2,
           f"cases[{n}].id", "listed twice")
    absent("refused judge", f"{work}/rep")


def table_header(exe, work):
    t = f"{work}/tuned.csv"
    r = run(exe, "tune", "--suite", "smoke", "--filter", "*T1/*", "--kernel", "host", "--out", t)
    assert r is not None and r.returncode == 0, r and r.stderr[-2000:]
    lines = open(t).read().splitlines()
    return lines[0].split(","), [l for l in lines[1:] if l]


def dispatch_table(exe, work, _):
    header, rows = table_header(exe, work)
    import csv
    import io
    row = next(csv.DictReader(io.StringIO("\n".join([",".join(header), rows[0]]))))

    def table(name, edit, bom=False):
        r = dict(row)
        edit(r)
        path = f"{work}/{name}.csv"
        with open(path, "w", newline="", encoding="utf-8-sig" if bom else "utf-8") as f:
            w = csv.DictWriter(f, fieldnames=header)
            w.writeheader()
            w.writerow(r)
        return path

    garbage = table("garbage_dispatch", lambda r: r.update(dispatch="grouped_mma=banana"))
    expect("run --dispatch-table, garbage dispatch",
           run(exe, "run", "--suite", "smoke", "--kernel", "host", "--dispatch-table", garbage, "--report-dir",
               f"{work}/never"), 2, "dispatch", f"{garbage}:2")
    absent("refused run", f"{work}/never")
    expect("check-table, garbage dispatch", run(exe, "check-table", garbage), 2, "dispatch")
    shape = table("shape", lambda r: r.update(shape="no-such-shape/T*/x"))
    expect("check-table, shape its case_id cannot give", run(exe, "check-table", shape), 2, "shape", f"{shape}:2")
    bom = table("bom", lambda r: None, bom=True)
    expect("check-table, UTF-8 BOM", run(exe, "check-table", bom), 2, "header", "byte order mark")
    # The same BOM before AITER's columns (read by the table-set reader, not the tuned-table one): refused alike.
    aiter = f"{work}/aiter_bom.csv"
    with open(aiter, "w", newline="", encoding="utf-8-sig") as f:
        f.write("gfx,cu_num,token,model_dim,inter_dim,expert,topk,act_type,dtype,q_dtype_a,q_dtype_w,q_type,use_g1u1,"
                "doweight_stage1,block_m,ksplit,us,err,kernelName1\n"
                "gfx942,80,16,2048,128,256,8,ActivationType.Silu,torch.bfloat16,torch.float8_e4m3fnuz,"
                "torch.float8_e4m3fnuz,QuantType.per_Token,1,0,32,0,10,0.001,k1\n")
    expect("check-table, UTF-8 BOM before AITER's columns", run(exe, "check-table", aiter), 2, "header",
           f"{aiter}:1", "byte order mark")


def suite_file(work, name, body):
    path = f"{work}/{name}.yaml"
    with open(path, "w") as f:
        f.write("suite: hostile\ndefaults: {hidden: 256, inter: 256, experts: 16, topk: 4, tokens: 2}\ncases:\n" + body)
    return path


def case_values(exe, work, _):
    for name, body in [("tokens_empty", "  - {variant: a}\n  - variant: b\n    tokens:\n"),
                       ("tokens_null", "  - {variant: a, tokens: null}\n"),
                       ("tokens_tilde", "  - {variant: a, tokens: ~}\n")]:
        expect(f"suite {name}", run(exe, "list", "--suite", suite_file(work, name, body)), 2, "tokens",
               "has no value")
    sweep = suite_file(work, "sweep", "  - sweep: {quant: [fp8], quant.weight: [fp8]}\n")
    expect("sweep of quant and quant.weight", run(exe, "list", "--suite", sweep), 2, "sweep.quant.weight", "overlaps")
    # A safetensors header naming the output tensor twice.
    case_id = run(exe, "list", "--suite", "smoke").stdout.split()[0]
    header = (b'{"out":{"dtype":"BF16","shape":[1],"data_offsets":[0,2]},'
              b'"out":{"dtype":"BF16","shape":[1],"data_offsets":[2,4]}}')
    st = f"{work}/twice.safetensors"
    with open(st, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header + b"\0" * 4)
    expect("safetensors tensor named twice", run(exe, "judge", case_id, "--output", st, "--report-dir",
                                                 f"{work}/judged"), 2, "out", "written twice")
    expect("--seed +1", run(exe, "run", "--suite", "smoke", "--kernel", "host", "--filter", "none", "--seed", "+1"),
           2, "", "--seed")


def repeat_sigterm(exe, work, _):
    base = [exe, "run", "--suite", "smoke", "--kernel", "host", "--no-timing", "--filter", "*T1/*"]
    for n, v in enumerate(("-1", "0", "1001")):
        expect(f"--gtest_repeat={v}", run(*base, "--report-dir", f"{work}/r{n}", "--gtest", f"--gtest_repeat={v}"),
               2, "--gtest", "--gtest_repeat")
        absent("refused repeat", f"{work}/r{n}")
    # The bound's worst on the whole smoke suite: the signal cuts the repetitions left (runner.cpp StopRepetitions,
    # which keeps GoogleTest from running each one only to skip its tests); the run ends within seconds.
    rep = f"{work}/term"
    whole = [exe, "run", "--suite", "smoke", "--kernel", "host", "--no-timing"]
    p = subprocess.Popen([*whole, "--report-dir", rep, "--gtest", "--gtest_repeat=1000"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and not (os.path.exists(f"{rep}/journal.jsonl") and
                                           '"type":"record"' in open(f"{rep}/journal.jsonl").read()):
        time.sleep(0.05)
    p.send_signal(signal.SIGTERM)
    t0 = time.time()
    try:
        _, err = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        failures.append("SIGTERM: the run with --gtest_repeat=1000 was still going 30 s after SIGTERM")
        return
    took = time.time() - t0
    if p.returncode != 128 + signal.SIGTERM or not os.path.exists(f"{rep}/report.json"):
        failures.append(f"SIGTERM: exit {p.returncode} (want 143), report.json written: "
                        f"{os.path.exists(f'{rep}/report.json')}: {err[-600:]}")
    else:
        report = json.load(open(f"{rep}/report.json"))
        print(f"ok SIGTERM: exit 143 {took:.1f} s after the signal, {len(report['cases'])} record(s), "
              f"incomplete={report['provenance'].get('incomplete')}")


def plugin_load(exe, work, kernels):
    """Load-time code that exits (42, or 0), faults or hangs: loaded in a probe process only; the run goes on with the
    host kernel, each case of the plugin is an error record naming the library and what loading it did, exit 3."""
    for kind, check, needle in (("exit42", "crash", "exited the process with status 42"),
                                ("segv", "crash", "killed the process with signal 11 (SIGSEGV"),
                                ("exit0", "crash", "exited the process with status 0 before dlopen returned"),
                                ("hang", "timeout", "did not return within 2 s")):
        lib = f"{kernels}/libmoe_test_plugin_load_{kind}.so"
        rep = f"{work}/p-{kind}"
        t0 = time.time()
        r = run(exe, "run", "--suite", "smoke", "--kernel", "host", "--plugin", lib, "--filter", "*T1/*", "--no-timing",
                "--report-dir", rep, env={"MOE_PLUGIN_LOAD_TIMEOUT": "2"})
        name = f"plugin constructor {kind}"
        if r is None or r.returncode != 3 or not os.path.exists(f"{rep}/report.json"):
            failures.append(f"{name}: exit {r and r.returncode} (want 3, a report): {r and r.stderr[-600:]}")
            continue
        cases = json.load(open(f"{rep}/report.json"))["cases"]
        mine = [c for c in cases if c["kernel"].startswith("plugin-not-loaded:")]
        host = [c for c in cases if c["kernel"] == "host-contract"]
        bad = [c for c in mine if c["status"] != "error" or c["failed_check"] != check or lib not in c["reason"]
               or needle not in c["reason"]]
        if not mine or len(mine) != len(host) or bad or not all(c["status"] == "pass" for c in host) \
                or needle not in r.stderr:
            failures.append(f"{name}: {len(mine)} plugin record(s), {len(host)} host record(s); bad: {bad[:1]}; "
                            f"stderr: {r.stderr[-400:]}")
        else:
            print(f"ok {name}: exit 3 in {time.time() - t0:.1f} s, {len(mine)} error record(s) "
                  f"({check}), {len(host)} host pass(es): {mine[0]['reason'][:160]}")
    expect("MOE_PLUGIN_LOAD_TIMEOUT=0", run(exe, "run", "--suite", "smoke", "--kernel", "host", "--plugin",
                                            f"{kernels}/libmoe_test_plugin_load_hang.so", "--report-dir",
                                            f"{work}/p-t0", env={"MOE_PLUGIN_LOAD_TIMEOUT": "0"}),
           2, "MOE_PLUGIN_LOAD_TIMEOUT")
    absent("refused timeout", f"{work}/p-t0")


ITEMS = {f.__name__: f for f in (output_paths, shard_env, foreign_journal, index_duplicate, dispatch_table,
                                 case_values, repeat_sigterm, plugin_load)}


def main():
    exe, kernels, work, item = sys.argv[1:5]
    work = os.path.join(work, item)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    ITEMS[item](exe, work, kernels)
    for f in failures:
        print("FAIL", f)
    print(f"{item}: {len(failures)} failure(s)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
