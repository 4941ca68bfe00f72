#!/usr/bin/env python3
"""Registers, stack, shared and local memory of every GPU function, from `cuobjdump --dump-resource-usage OBJ...`:

  cuobjdump --dump-resource-usage build/cuda/kernels/.../*.o > usage.txt
  resource_usage.py usage.txt [--line]

cuobjdump prints, per function, a line ` Function MANGLED:` and under it `REG:n STACK:n SHARED:n LOCAL:n ...`. The
table gives one row per function (names demangled by c++filt when it is on PATH), sorted by name; a function listed
twice (in two objects or architectures) keeps one row per distinct usage. A stack frame or local memory above 0 is
what to look at first: the compiler spilled registers or put an array or a call's arguments in memory. --line: one
line (functions, the most registers, how many have a stack or local memory). Exit 2, naming the file, when it lists
no function.
"""
import argparse
import re
import shutil
import subprocess
import sys

FIELDS = ("REG", "STACK", "SHARED", "LOCAL")


def parse(path):
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError as e:
        print(f"resource_usage: {path}: cannot read ({e})", file=sys.stderr)
        sys.exit(2)
    out, name = set(), None
    for line in lines:
        m = re.match(r"\s*Function (\S+):\s*$", line)
        if m:
            name = m.group(1)
            continue
        if name is not None and "REG:" in line:
            vals = dict(re.findall(r"\b([A-Z]+):(\d+)", line))
            out.add((name, *(int(vals.get(k, 0)) for k in FIELDS)))
            name = None
    if not out:
        print(f"resource_usage: {path}: no ` Function NAME:` followed by `REG:n ...`: "
              "was it `cuobjdump --dump-resource-usage`?", file=sys.stderr)
        sys.exit(2)
    return sorted(out)


def demangle(names):
    if not shutil.which("c++filt"):
        return list(names)
    r = subprocess.run(["c++filt"], input="\n".join(names) + "\n", capture_output=True, text=True)
    got = r.stdout.splitlines()
    return got if r.returncode == 0 and len(got) == len(names) else list(names)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("usage")
    ap.add_argument("--line", action="store_true")
    a = ap.parse_args()
    rows = parse(a.usage)
    if a.line:
        print(f"{len(rows)} functions, at most {max(r[1] for r in rows)} registers; "
              f"stack frame in {sum(r[2] > 0 for r in rows)}, local memory in {sum(r[4] > 0 for r in rows)}")
        return
    print("| registers | stack bytes | shared bytes | local bytes | function |\n|---|---|---|---|---|")
    for name, r in sorted(zip(demangle([r[0] for r in rows]), rows), key=lambda x: (x[0], x[1][1:])):
        print(f"| {r[1]} | {r[2]} | {r[3]} | {r[4]} | `{name}` |")


if __name__ == "__main__":
    main()
