#!/usr/bin/env python3
"""Checks `moe-harness formats decode FORMAT` against decoders written here from docs/numerics.md alone.

Independent of the C++ code: plain Python arithmetic on the spec's formulas, printed with the same %.9g rule.
Usage: check_formats_decode.py MOE_HARNESS FORMAT
"""
import math
import subprocess
import sys

def minifloat(code, ebits, mbits, bias, nan_rule):
    s = (code >> (ebits + mbits)) & 1
    e = (code >> mbits) & ((1 << ebits) - 1)
    m = code & ((1 << mbits) - 1)
    emax, mmax = (1 << ebits) - 1, (1 << mbits) - 1
    if nan_rule == "fnuz" and code == 1 << (ebits + mbits):
        return math.nan
    if nan_rule == "fn" and e == emax and m == mmax:
        return math.nan
    if nan_rule == "ieee" and e == emax:
        v = math.inf if m == 0 else math.nan
        return -v if s else v
    if e == 0:
        v = (m / (1 << mbits)) * 2.0 ** (1 - bias)
    else:
        v = (1 + m / (1 << mbits)) * 2.0 ** (e - bias)
    return -v if s else v

SPECS = {
    "e4m3fn": lambda c: minifloat(c, 4, 3, 7, "fn"),
    "e4m3fnuz": lambda c: minifloat(c, 4, 3, 8, "fnuz"),
    "e5m2": lambda c: minifloat(c, 5, 2, 15, "ieee"),
    "e5m2fnuz": lambda c: minifloat(c, 5, 2, 16, "fnuz"),
    "e8m0": lambda c: math.nan if c == 0xFF else 2.0 ** (c - 127),
    "e2m1": lambda c: math.copysign([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0][c & 7], -1.0 if c & 8 else 1.0),
}

def fmt(v):
    return "nan" if math.isnan(v) else "%.9g" % v

def main():
    exe, name = sys.argv[1], sys.argv[2]
    out = subprocess.run([exe, "formats", "decode", name], capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    n = 16 if name == "e2m1" else 256
    assert len(lines) == n, f"{name}: {len(lines)} lines, want {n}"
    bad = 0
    for c, line in enumerate(lines):
        want = "0x%02x %s" % (c, fmt(SPECS[name](c)))
        if line != want:
            print(f"{name} code 0x{c:02x}: got '{line}', spec says '{want}'")
            bad += 1
    if bad:
        sys.exit(1)
    print(f"{name}: all {n} codes match the spec")

if __name__ == "__main__":
    main()
