#!/usr/bin/env bash
# The GPU members' nightly jobs of results/runs/2026-12-06-gpu-nightly-seeds/call.sh with REFCACHE=1: the three
# members of a job share each case's references and envelope (--reference-cache, a folder per job: one contract).
#   [SELFTEST=1] [P=15] [BUDGET=540] [MINJOB=150] bash results/runs/2026-12-07-gpu-nightly-final/call.sh JOBS_FILE
REFCACHE=1 exec bash "$(dirname "$0")/../2026-12-06-gpu-nightly-seeds/call.sh" "$@"
