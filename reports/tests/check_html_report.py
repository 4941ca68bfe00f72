#!/usr/bin/env python3
"""The HTML report, rendered by Debian's headless Chromium: self-contained (no network fetch), per-token plots for
failing cases only (passing ones are rows of a closed list behind one summary plot), every plot laid out by the
browser (the page's own count, <body data-plots-drawn>, equals the number of plots), the plot colours actually
painted in a screenshot (PNG decoded here with zlib), failing cases and their worst tokens shown, and the drift
section listing what changed against the baseline.

Usage: check_html_report.py MOE_HARNESS WORK_DIR [SCREENSHOT_COPY.png]
Chromium is required (ci/install-deps installs it); its absence fails this test, never skips it.
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib

COS_RGB, REL_RGB = (0x1F, 0x5F, 0xBF), (0xE0, 0x56, 0x1A)


def chromium():
    for c in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(c)
        if p:
            return p
    sys.exit("FAIL: no chromium on PATH: run `ci/install-deps` (installs Debian's chromium)")


def decode_png(path):
    """RGB(A) 8-bit non-interlaced PNG -> (width, height, rows of bytes, channels)."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and interlace == 0, (depth, ctype, interlace)
            ch = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride, rows, prev = zlib.decompress(idat), w * ch, [], bytearray(w * ch)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - ch] if i >= ch else 0
            b, c = prev[i], prev[i - ch] if i >= ch else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, rows, ch


def count_colour(rows, ch, rgb, tol=8):
    n = 0
    for line in rows:
        for i in range(0, len(line), ch):
            if abs(line[i] - rgb[0]) <= tol and abs(line[i + 1] - rgb[1]) <= tol and abs(line[i + 2] - rgb[2]) <= tol:
                n += 1
    return n


def main():
    exe, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    base_dir = f"{work}/base"
    r = subprocess.run([exe, "run", "--suite", "smoke", "--kernel", "host", "--filter", "*T1*", "--filter", "*T16*",
                        "--filter", "*T33*", "--report-dir", base_dir], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-2000:]
    assert os.path.exists(f"{base_dir}/report.html"), "run writes report.html beside report.json"
    # A "new" run derived from the base: one case fails with a non-finite token and a worse metric.
    rep = json.load(open(f"{base_dir}/report.json"))
    bad = next(c for c in rep["cases"] if "T33" in c["id"])
    bad["status"], bad["failed_check"], bad["reason"] = "fail", "non_finite", "non_finite: 1 element(s) NaN/Inf"
    bad["token_rel"][7] = 0.25
    bad["token_cos"][7] = 0.9
    bad["metrics"]["max_rel"], bad["metrics"]["min_cos"] = 0.25, 0.9
    rep["summary"]["pass"] -= 1
    rep["summary"]["fail"] += 1
    json.dump(rep, open(f"{work}/new.json", "w"))
    html = f"{work}/report.html"
    r = subprocess.run([exe, "html", f"{work}/new.json", "--baseline", f"{base_dir}/report.json", "--out", html],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    text = open(html).read()

    # Self-contained: nothing to fetch.
    assert not re.search(r"""(src|href)\s*=\s*["'](https?:|//)""", text) and "<link" not in text and "@import" not in text
    # Per-token plots for the failing case only, plus the passing cases' one shared summary plot.
    plots = text.count('class="plot ')
    assert plots == 2 + 1, plots
    sections = re.findall(r'<details open id="[^"]*" class="detail"><summary><span class="(\w+)"', text)
    assert sections == ["fail"], sections[:3]
    # The passing cases are rows of a closed list, none with a plot of its own.
    passing = re.search(r'<details id="passing">(.*?)</details>', text, re.S).group(1)
    assert passing.count('<tr class="case">') == sum(c["status"] == "pass" for c in rep["cases"]), passing[:400]
    # The failing case, with its worst token (7) on top, and the drift listed.
    first = text.split("<details open")[1]
    assert re.search(r'<td class="num">7</td><td class="num">0\.9000000</td>', first), "worst token 7 not listed first"
    drift = text.split('<h2 id="drift">')[1].split("</table>")[0]
    assert bad["id"] in drift and ">status<" in drift and "pass -&gt; fail" in drift, drift[:600]

    # The browser lays out every plot (the page's own count) ...
    cr = chromium()
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
             "--hide-scrollbars", "--virtual-time-budget=5000"]
    dom = subprocess.run([cr, *flags, f"--user-data-dir={work}/chromium-dom", "--dump-dom",
                          f"file://{os.path.abspath(html)}"], capture_output=True, text=True, timeout=120).stdout
    m = re.search(r'data-plots-drawn="(\d+)"', dom)
    assert m and int(m.group(1)) == plots, (m and m.group(1), plots)
    # ... and paints them: both plot colours present in a screenshot of the page's per-token part.
    shot = f"{work}/report.png"
    subprocess.run([cr, *flags, f"--user-data-dir={work}/chromium-shot", "--window-size=1280,2400",
                    f"--screenshot={shot}", f"file://{os.path.abspath(html)}"],
                   capture_output=True, timeout=120, check=True)
    w, h, rows, ch = decode_png(shot)
    cos_px, rel_px = count_colour(rows, ch, COS_RGB), count_colour(rows, ch, REL_RGB)
    assert cos_px > 300 and rel_px > 300, (cos_px, rel_px)
    if len(sys.argv) > 3:
        shutil.copy(shot, sys.argv[3])
    print(f"html ok: {plots} plots drawn; screenshot {w}x{h}: {cos_px} cos-plot and {rel_px} rel-plot pixels")


if __name__ == "__main__":
    main()
