#!/usr/bin/env python3
"""The summaries ci/device-run writes, on synthetic inputs whose figures are worked out by hand here: a report.json
with a torch baseline, an ncu raw page, an ncu source page, cuobjdump's resource usage, clang's AMDGPU resource remarks, calibrate JSONs' systematic
tables. Bad input: exit 2 naming the
file."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.dirname(HERE)
failures = []


def run(tool, *args):
    r = subprocess.run([sys.executable, os.path.join(TOOLS, tool), *args], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def check(what, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)
        if detail:
            print("     " + detail.replace("\n", "\n     "))


def write(d, name, text):
    p = os.path.join(d, name)
    with open(p, "w") as f:
        f.write(text)
    return p


def case(cid, status, tbps=None, us=None, min_cos=1.0, max_rel=1e-3):
    c = {"id": cid, "kernel": "gpu-fused-moe", "status": status, "variant": "grouped-mma-decode/atomic/x",
         "metrics": {"min_cos": min_cos, "max_rel": max_rel}, "timing": {}}
    if tbps is not None:
        c["metrics"]["achieved_tbps"] = tbps
    if us is not None:
        c["timing"]["kernel_us"] = us
    return c


def report_table(d):
    dec_a = "m/tp1/fp8blk.g128/silu/T16/decode/atomic/two_stage"
    dec_b = "m/tp1/mxfp4.a16/silu/T16/decode/atomic/two_stage"
    rep = {"schema_version": 1, "cases": [
        case(dec_a, "pass", tbps=2.0, us=100.0),
        case(dec_b, "pass", tbps=1.0, us=400.0),
        case("m/tp1/mxfp8.mx8/silu/T16/decode/atomic/two_stage", "skip"),  # no timing: never the lowest ratio
        case("m/tp1/bf16.a16/silu/T4096/prefill/atomic/two_stage", "fail", tbps=0.2, us=5000.0, min_cos=None),
        case("m/tp1/fp8ch.tok/silu/T16/decode/atomic/two_stage", "fail", tbps=0.4, us=900.0),  # a failed case's speed
    ]}
    rp = write(d, "report.json", json.dumps(rep))
    bp = write(d, "torch.json", json.dumps({"device": "GPU", "torch": "2.x", "copy_tbps": 4.0,
                                            "qwen3-30b-a3b/T16": {"us": 500.0, "weight_tbps": 1.5, "tflops": 2.25}}))
    rc, out, err = run("report_table.py", rp, "--baseline", bp, "--line")
    want = ("2 passed, 2 failed, 1 skipped, 0 errors of 5; copy 4.000 TB/s; "
            f"lowest decode ratio 0.250x ({dec_b})")  # 1.0 / 4.0; the skipped, failed and prefill cases do not count
    check("report_table --line: totals, copy, lowest decode ratio", rc == 0 and out.strip() == want, out + err)
    rc, out, err = run("report_table.py", rp, "--baseline", bp)
    rows = {line.split("`")[1]: line for line in out.splitlines() if line.startswith("| ") and "`" in line}
    check("report_table: the ratio is weight TB/s over the copy (2.0 / 4.0)",
          rc == 0 and "| 100.0 | 2.000 | 0.500 |" in rows.get(dec_a, ""), out + err)
    skipped = "m/tp1/mxfp8.mx8/silu/T16/decode/atomic/two_stage"
    check("report_table: a null min cos (non-finite) reads back as nan, a missing time as -",
          "| nan |" in rows.get("m/tp1/bf16.a16/silu/T4096/prefill/atomic/two_stage", "")
          and f"| skip | gpu-fused-moe | `{skipped}` | grouped-mma-decode/atomic/x | - | - | - |"
          in rows.get(skipped, ""),
          out)
    check("report_table: the torch pipeline is tabled", "| qwen3-30b-a3b/T16 | 500.0 | 1.500 | 2.25 |" in out, out)
    rc, out, _ = run("report_table.py", rp, "--line")
    check("report_table --line without a baseline: the totals only",
          rc == 0 and out.strip() == "2 passed, 2 failed, 1 skipped, 0 errors of 5", out)
    for name, text, needle in [("notjson.json", "{", "cannot read the report"),
                               ("nocases.json", "{}", "no `cases` list")]:
        rc, _, err = run("report_table.py", write(d, name, text))
        check(f"report_table: {name} -> exit 2 naming the file", rc == 2 and name in err and needle in err, err)
    rc, _, err = run("report_table.py", rp, "--baseline", write(d, "nocopy.json", "{}"))
    check("report_table: a baseline without copy_tbps -> exit 2", rc == 2 and "nocopy.json" in err, err)


def ncu_stalls(d):
    st = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"
    head = ["ID", "Kernel Name", "Grid Size", "gpu__time_duration.sum",
            "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "smsp__inst_executed.sum",
            st.format("long_scoreboard"), st.format("wait"), st.format("selected"), st.format("barrier")]
    units = ["", "", "", "ns", "%", "inst", "", "", "", ""]
    k1 = ["0", "void (anonymous namespace)::decode_mma_kernel<6, 1>(FusedMoeArgs, long, int)", "(45, 64, 1)",
          "226,656", "47.94", "126,256,320", "3.50", "1.25", "1.00", "0"]
    k2 = ["1", "void stage2(FusedMoeArgs)", "(23, 64, 1)", "1,500", "n/a", "10", "0.5", "0.75", "1.00", "0"]
    q = lambda r: ",".join(f'"{x}"' for x in r)
    preamble = "==PROF== Connected to process 1\n[ RUN      ] gpu-fused-moe.case\n"
    text = preamble + "\n".join(map(q, [head, units, k1, k2]))
    p = write(d, "raw.csv", text + "\n")
    rc, out, err = run("ncu_stalls.py", p)
    lines = [x for x in out.splitlines() if x.startswith("| decode") or x.startswith("| stage2")]
    check("ncu_stalls: one row per launch, the template kept, the namespace dropped",
          rc == 0 and len(lines) == 2
          and lines[0].startswith("| decode_mma_kernel<6, 1> | (45, 64, 1) | 226.7 | 47.9 |"),
          out + err)
    check("ncu_stalls: stalls largest first, zeros left out",
          lines and lines[0].endswith("| long_scoreboard 3.50; wait 1.25; selected 1.00 |"), out)
    check("ncu_stalls: a metric ncu did not give prints as -, instructions with thousands separators",
          len(lines) == 2 and "| 1.5 | - |" in lines[1] and "| 126,256,320 |" in lines[0], out)
    rc, out, _ = run("ncu_stalls.py", p, "--top", "1")
    check("ncu_stalls --top 1", "| long_scoreboard 3.50 |" in out and "wait 1.25" not in out, out)
    rc, out, _ = run("ncu_stalls.py", p, "--line")
    check("ncu_stalls --line: launches and total duration (226.656 + 1.5 us)",
          rc == 0 and out.strip() == "2 launches profiled, 228.2 us in all", out)
    rc, _, err = run("ncu_stalls.py", write(d, "empty.csv", "==PROF== No kernels were profiled.\n"))
    check("ncu_stalls: no table -> exit 2 naming the file", rc == 2 and "empty.csv" in err, err)


def ncu_source(d):
    head = ["Address", "Source", "Warp Stall Sampling (All Samples)", "Instructions Executed", "stall_long_sb",
            "stall_wait", "stall_long_sb (Not Issued)"]
    rows = [head, ["0x7f00", "  ISETP.NE.AND P3, PT, R44, RZ, PT", "80", "1,000", "70", "10", "999"],
            ["0x7f10", "  FADD R10, R10, R7", "20", "500", "0", "20", "5"]]
    name = "void moe::gpu::<unnamed>::decode_mma_kernel<(int)6, (int)1>(moe::gpu::FusedMoeArgs, long)"
    text = f'"Kernel Name","{name}"\n' + "\n".join(",".join(f'"{x}"' for x in r) for r in rows)
    p = write(d, "source.csv", text + "\n")
    rc, out, err = run("ncu_source.py", p)
    check("ncu_source: the kernel and the totals", rc == 0 and out.startswith(
        "decode_mma_kernel<6, 1>: 2 SASS instructions, 100 stall samples, 1500 warp instructions executed"), out + err)
    check("ncu_source: reasons summed over the listing, the (Not Issued) twin left out",
          "| long_sb | 70 | 70.0% |\n| wait | 30 | 30.0% |" in out and "999" not in out and "1004" not in out, out)
    check("ncu_source: the instruction holding most samples first, offset from the first address",
          "| +00000 | `ISETP.NE.AND P3, PT, R44, RZ, PT` | 80 | 80.0% | long_sb=70 wait=10 |" in out
          and out.index("+00000") < out.index("| +00010 | `FADD R10, R10, R7` | 20 | 20.0% | wait=20 |"), out)
    rc, _, err = run("ncu_source.py", write(d, "nosamples.csv", '"Address","Source","Instructions Executed"\n'))
    check("ncu_source: a listing without samples -> exit 2 naming the file and the section",
          rc == 2 and "nosamples.csv" in err and "SourceCounters" in err, err)


def resource_usage(d):
    text = ("Fatbin elf code:\n================\narch = sm_90\n\nResource usage:\n Common:\n  GLOBAL:0\n"
            " Function _Z1kPfS_:\n  REG:17 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:336 TEXTURE:0 SURFACE:0 SAMPLER:0\n"
            " Function _Z1ff:\n  REG:14 STACK:16 SHARED:512 LOCAL:12 TEXTURE:0 SURFACE:0 SAMPLER:0\n"
            " Function _Z1ff:\n  REG:14 STACK:16 SHARED:512 LOCAL:12 TEXTURE:0 SURFACE:0 SAMPLER:0\n")
    p = write(d, "usage.txt", text)
    rc, out, err = run("resource_usage.py", p, "--line")
    check("resource_usage --line: functions (a repeated one once), most registers, stack and local counts",
          rc == 0 and out.strip() == "2 functions, at most 17 registers; stack frame in 1, local memory in 1",
          out + err)
    rc, out, err = run("resource_usage.py", p)
    f_name, k_name = ("f(float)", "k(float*, float*)") if shutil.which("c++filt") else ("_Z1ff", "_Z1kPfS_")
    check("resource_usage: one row per function, demangled where c++filt is present",
          rc == 0 and f"| 14 | 16 | 512 | 12 | `{f_name}` |" in out and f"| 17 | 0 | 0 | 0 | `{k_name}` |" in out,
          out + err)
    rc, _, err = run("resource_usage.py", write(d, "nofunc.txt", "cuobjdump info: File does not contain device code\n"))
    check("resource_usage: no function -> exit 2 naming the file", rc == 2 and "nofunc.txt" in err, err)


def amdgpu_resource_usage(d):
    def fn(src, name, sgpr, vgpr, scratch, occ, lds, vspill=0):
        vals = [("Function Name", name), ("    SGPRs", sgpr), ("    VGPRs", vgpr), ("    AGPRs", 0),
                ("    ScratchSize [bytes/lane]", scratch), ("    Occupancy [waves/SIMD]", occ), ("    SGPRs Spill", 0),
                ("    VGPRs Spill", vspill), ("    LDS Size [bytes/block]", lds)]
        return "".join(f"/moe/kernels/{src}:13:1: remark: {k}: {v} [-Rpass-analysis=kernel-resource-usage]\n"
                       for k, v in vals)
    # clang 17's remark lines, as ci/hip-check-gfx942 keeps them: k twice from one source (one row), f from two.
    text = (fn("a.hip", "_Z1kPf", 14, 2, 0, 8, 0) + fn("a.hip", "_Z1kPf", 14, 2, 0, 8, 0) +
            fn("b.hip", "_Z1ff", 40, 128, 16, 3, 4096, 4) + fn("c.hip", "_Z1ff", 40, 128, 16, 3, 4096, 4))
    p = write(d, "remarks.txt", text)
    rc, out, err = run("amdgpu_resource_usage.py", p, "--line")
    check("amdgpu_resource_usage --line: functions per source, most VGPRs and SGPRs, scratch count, lowest occupancy",
          rc == 0 and out.strip() == "3 GPU functions; most VGPRs 128, most SGPRs 40; 2 use scratch; lowest occupancy "
          "3 waves/SIMD", out + err)
    rc, out, err = run("amdgpu_resource_usage.py", p)
    f_name, k_name = ("f(float)", "k(float*)") if shutil.which("c++filt") else ("_Z1ff", "_Z1kPf")
    check("amdgpu_resource_usage: one row per function and source, every field in order",
          rc == 0 and f"| `{f_name}` | b.hip | 40 | 128 | 0 | 16 | 0 | 4 | 4096 | 3 |" in out
          and f"| `{f_name}` | c.hip |" in out and out.count(f"| `{k_name}` | a.hip | 14 | 2 | 0 | 0 | 0 | 0 | 0 | 8 |") == 1,
          out + err)
    tagged = "".join("[m.hip] " + line + "\n" for line in fn("h.hpp", "_Z1ff", 41, 129, 0, 2, 0).splitlines())
    rc, out, err = run("amdgpu_resource_usage.py", write(d, "tagged.txt", tagged))
    check("amdgpu_resource_usage: a line tagged with the source compiled names the header and the source",
          rc == 0 and f"| `{f_name}` | h.hpp in m.hip | 41 | 129 |" in out, out + err)
    rc, _, err = run("amdgpu_resource_usage.py", write(d, "noremark.txt", "[1/2] Building HIP object x.o\n"))
    check("amdgpu_resource_usage: no function -> exit 2 naming the file", rc == 2 and "noremark.txt" in err, err)


def systematic_margins(d):
    def stat(ran, not_run, z, zat, eff, eat, closest, cat, zt=6.0, floor=1e-3):
        return {"ran": ran, "not_run": not_run, "worst_tested_z": z, "worst_z_at": zat, "z_threshold": zt,
                "worst_abs_effect": eff, "worst_effect_at": eat, "effect_floor": floor, "closest_share": closest,
                "closest_at": cat}
    a = {"schemes": {"k | bf16/none": {"systematic": {
             "gain": stat(10, 5, 1.5, "a, seed 1", 2e-4, "b, seed 2", 0.2, "b, seed 2"),
             "channel": stat(10, 5, -1.4, "a, seed 3", 5e-3, "a, seed 4", -0.2, "a, seed 3", 7.0, 0.02)}},
         "k | fp8/fp8": {"systematic": {
             "gain": stat(4, 0, 3.0, "c, seed 5", 1e-4, "c, seed 5", 0.25, "c, seed 6"),
             "channel": stat(0, 4, 0, "", 0, "", 0, "", 7.0, 0.02)}}}}
    b = {"schemes": {"k | mx/mx": {"systematic": {"gain": stat(1, 1, 0.5, "d, seed 1", 5e-4, "d, seed 7", 0.1, "d, seed 1")}}}}
    rc, out, err = run("systematic_margins.py", write(d, "cal-a.json", json.dumps(a)), write(d, "cal-b.json", json.dumps(b)))
    rows = {line.split(" | ")[0][2:]: line for line in out.splitlines() if line.startswith("| ") and "---" not in line}
    # gain: ran 10 + 4 + 1, not run 5 + 0 + 1; worst z 3.0 (c), worst effect 5e-4 (d), closest 0.25 -> margin 4.0x
    check("systematic_margins: counts summed, worst z, effect and closest over files and rows, margin 1/closest",
          rc == 0 and rows.get("gain") == "| gain | 15 | 6 | 3 | 6 | 5.000e-04 | 0.001 | 25.0% | 4.0x |"
          and "gain: worst z at c, seed 5; worst effect at d, seed 7; closest at c, seed 6" in out, out + err)
    check("systematic_margins: a channel z never above 0 has no finite margin; rows that did not run are left out",
          rows.get("channel") == "| channel | 10 | 9 | -1.4 | 7 | 5.000e-03 | 0.02 | -20.0% | inf (z never positive) |",
          out)
    # expert judged by 5e-3 on one scheme and 3e-2 on another: one row per floor, each margin against its own floor
    e = {"schemes": {"k | bf16/none": {"systematic": {"expert": stat(3, 0, 2.0, "e, seed 1", 2.5e-3, "e, seed 1", 0.5,
                                                                      "e, seed 1", 6.0, 5e-3)}},
                     "k | fp8/fp8": {"systematic": {"expert": stat(2, 0, 4.0, "f, seed 2", 3e-3, "f, seed 2", 0.1,
                                                                    "f, seed 2", 6.0, 3e-2)}}}}
    rc, out, err = run("systematic_margins.py", write(d, "cal-e.json", json.dumps(e)))
    rows = {line.split(" | ")[0][2:]: line for line in out.splitlines() if line.startswith("| ") and "---" not in line}
    check("systematic_margins: a statistic with a floor per scheme gets a row per floor",
          rc == 0 and rows.get("expert (floor 0.005)") == "| expert (floor 0.005) | 3 | 0 | 2 | 6 | 2.500e-03 | 0.005 | 50.0% | 2.0x |"
          and rows.get("expert (floor 0.03)") == "| expert (floor 0.03) | 2 | 0 | 4 | 6 | 3.000e-03 | 0.03 | 10.0% | 10.0x |",
          out + err)
    rc, _, err = run("systematic_margins.py", write(d, "old.json", json.dumps({"schemes": {"k | bf16/none": {}}})))
    check("systematic_margins: no systematic table -> exit 2 naming the file", rc == 2 and "old.json" in err, err)


def main():
    with tempfile.TemporaryDirectory() as d:
        report_table(d)
        ncu_stalls(d)
        ncu_source(d)
        resource_usage(d)
        amdgpu_resource_usage(d)
        systematic_margins(d)
    if failures:
        print(f"{len(failures)} check(s) failed")
        sys.exit(1)
    print("all checks passed")


if __name__ == "__main__":
    main()
