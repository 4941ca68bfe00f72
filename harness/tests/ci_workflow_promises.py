"""What the CI workflow examples promise, checked (called by check_ci_workflows.py):

- nightly-amd.yml compares each architecture with its own baseline, the artifact baseline-<arch> that only
  promote-baseline-amd.yml makes, found by artifact name among that workflow's runs. A baseline taken from the last
  successful nightly run never moves after one drift (every later night fails) and, the conclusion being the whole
  run's, one architecture's failure blocks the other's.
- promote-baseline-amd.yml takes the night's artifact of the architecture asked for, from the run asked for, checks
  it with ci/promote-baseline and uploads it as that architecture's baseline; ci/promote-baseline accepts a passing
  report of that architecture and refuses another architecture's, a failing one, and one that checked nothing.
- pr-cpu.yml (a debian:12 container that installs no nvcc) says that the sm_90 check runs only where nvcc is.
"""
import copy
import json
import os
import subprocess
import sys
import tempfile

import yaml

ARCH_MATRIX = "${{ matrix.arch }}"
ARCH_INPUT = "${{ inputs.arch }}"


def load(root, name):
    path = f"{root}/ci/workflows/{name}"
    assert os.path.isfile(path), f"{path} is missing"
    wf = yaml.safe_load(open(path))
    wf["on"] = wf.get("on", wf.get(True))  # YAML 1.1 reads the key `on` as true
    return wf, open(path).read()


def steps_using(wf, action):
    return [st for job in wf["jobs"].values() for st in job["steps"] if str(st.get("uses", "")).startswith(action)]


def check_nightly(root):
    wf, _ = load(root, "nightly-amd.yml")
    job = wf["jobs"]["nightly"]
    archs = job["strategy"]["matrix"]["arch"]
    assert job["strategy"].get("fail-fast") is False, "one architecture's failure must not cancel the other"
    downloads = steps_using(wf, "dawidd6/action-download-artifact") + steps_using(wf, "actions/download-artifact")
    assert len(downloads) == 1, f"nightly-amd.yml: one baseline download expected, got {len(downloads)}"
    w = downloads[0]["with"]
    assert w.get("workflow") == "promote-baseline-amd.yml", \
        f"nightly-amd.yml takes its baseline from '{w.get('workflow')}', not from promote-baseline-amd.yml: a " \
        "baseline from the last successful night never moves after a drift"
    assert w.get("name") == f"baseline-{ARCH_MATRIX}", f"baseline artifact '{w.get('name')}' is not per architecture"
    assert w.get("search_artifacts") is True, "the promote run holding this architecture's artifact must be searched"
    assert w.get("if_no_artifact_found") in ("warn", "ignore"), "the first night (no baseline yet) must still run"
    uploads = [st["with"]["name"] for st in steps_using(wf, "actions/upload-artifact")]
    assert uploads == [f"nightly-{ARCH_MATRIX}"], f"nightly-amd.yml uploads {uploads}: a night never writes a baseline"
    run = "\n".join(st.get("run", "") for st in job["steps"])
    assert "--baseline baseline/merged.json" in run and "::warning::" in run, \
        "a night without a baseline must say it checked no drift"
    return archs


def check_promote(root, archs):
    wf, _ = load(root, "promote-baseline-amd.yml")
    inputs = wf["on"]["workflow_dispatch"]["inputs"]
    assert inputs["run_id"]["required"] and inputs["arch"]["required"], inputs
    assert inputs["arch"]["options"] == archs, f"promote archs {inputs['arch']['options']} != nightly's {archs}"
    (down,) = steps_using(wf, "actions/download-artifact")
    assert down["with"]["name"] == f"nightly-{ARCH_INPUT}", down["with"]
    assert down["with"]["run-id"] == "${{ inputs.run_id }}", down["with"]
    (up,) = steps_using(wf, "actions/upload-artifact")
    assert up["with"]["name"] == f"baseline-{ARCH_INPUT}", up["with"]
    runs = "\n".join(st.get("run", "") for st in wf["jobs"]["promote"]["steps"])
    assert "ci/promote-baseline" in runs and f'--arch "{ARCH_INPUT}"' in runs and "--out baseline" in runs, runs
    assert up["with"]["path"].rstrip("/") == "baseline", up["with"]


def promote(root, report, arch, out):
    return subprocess.run([sys.executable, f"{root}/ci/promote-baseline", report, "--arch", arch, "--out", out,
                           "--suite", "smoke"], capture_output=True, text=True)


def check_promote_script(root, exe):
    with tempfile.TemporaryDirectory() as d:
        run = subprocess.run([exe, "run", "--suite", "smoke", "--filter", "*T3*", "--kernel", "host",
                              "--no-timing", "--report-dir", f"{d}/night"], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        r = json.load(open(f"{d}/night/report.json"))
        r["provenance"]["device"]["arch"] = "gfx942"  # the night of a gfx942 runner
        good = f"{d}/gfx942.json"
        json.dump(r, open(good, "w"))
        p = promote(root, good, "gfx942", f"{d}/ok")
        assert p.returncode == 0, p.stderr
        assert open(f"{d}/ok/merged.json", "rb").read() == open(good, "rb").read(), "the baseline is the report"
        assert "gfx942" in open(f"{d}/ok/PROMOTED.md").read()
        p = promote(root, good, "gfx950", f"{d}/other")
        assert p.returncode == 1 and "not gfx950" in p.stderr and not os.path.exists(f"{d}/other"), p.stderr
        failed = copy.deepcopy(r)
        failed["cases"][0]["status"] = "fail"
        json.dump(failed, open(f"{d}/failed.json", "w"))
        p = promote(root, f"{d}/failed.json", "gfx942", f"{d}/f")
        assert p.returncode == 1 and "did not pass" in p.stderr and not os.path.exists(f"{d}/f"), p.stderr
        empty = copy.deepcopy(r)
        for c in empty["cases"]:
            c["status"] = "skip"
        json.dump(empty, open(f"{d}/empty.json", "w"))
        p = promote(root, f"{d}/empty.json", "gfx942", f"{d}/e")
        assert p.returncode == 1 and "checked nothing" in p.stderr, p.stderr
        open(f"{d}/junk.json", "w").write("{not json")
        p = promote(root, f"{d}/junk.json", "gfx942", f"{d}/j")
        assert p.returncode == 2 and "not a run report" in p.stderr, p.stderr


def check_pr_cpu(root):
    wf, text = load(root, "pr-cpu.yml")
    job = wf["jobs"]["cpu"]
    installs_nvcc = any("nvcc" in st.get("run", "") or "cuda" in str(st.get("uses", "")) for st in job["steps"])
    if job.get("container", "").startswith("debian") and not installs_nvcc:
        claims = [line for line in text.splitlines() if "sm_90" in line]
        assert claims, "pr-cpu.yml should say what becomes of ci/test's sm_90 compile check"
        said = " ".join(text.splitlines())
        assert "sm_90 compile" in said and "runs only where nvcc is present" in said, \
            f"pr-cpu.yml claims an sm_90 check its container (no nvcc) cannot run: {claims}"


def check(root, exe):
    archs = check_nightly(root)
    check_promote(root, archs)
    check_promote_script(root, exe)
    check_pr_cpu(root)
    print(f"workflow promises ok: baselines per architecture ({', '.join(archs)}) moved only by promotion; "
          "ci/promote-baseline accepts a passing night of its arch, refuses another arch, a failure, an empty run; "
          "pr-cpu says where the sm_90 check runs")
