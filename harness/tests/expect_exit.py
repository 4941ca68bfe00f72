#!/usr/bin/env python3
"""Runs a command and checks its documented exit code and that stderr names the problem.

Usage: expect_exit.py CODE NEEDLE -- COMMAND...   (NEEDLE: a substring stderr must contain; '' for none)
"""
import subprocess
import sys

def main():
    code, needle = int(sys.argv[1]), sys.argv[2]
    cmd = sys.argv[sys.argv.index("--") + 1:]
    p = subprocess.run(cmd, capture_output=True, text=True)
    ok = p.returncode == code and needle in p.stderr
    if not ok:
        print(f"command: {' '.join(cmd)}\nexit {p.returncode} (want {code})\nstderr:\n{p.stderr}\nstdout:\n{p.stdout[-2000:]}")
        sys.exit(1)
    print(f"exit {code} as documented; stderr: {p.stderr.strip()[:300]}")

if __name__ == "__main__":
    main()
