#!/bin/bash
# job.sh SEED, from the repository root: the `aiter-source` panel member (docs/judging.md "The independent panel")
# over the whole nightly at one seed, token probes off; run as
#   seq 0 19 | xargs -P 2 -L 1 bash results/runs/2026-12-07-aiter-source-nightly/job.sh
s=$1; d=results/runs/2026-12-07-aiter-source-nightly/logs; tag=nightly-seed$s
PYTHONPATH=build/cpu/python OMP_NUM_THREADS=1 /usr/bin/python3 kernels/panel/run_panel.py --suite nightly \
  --members aiter-source --seeds 1 --first-seed $s --no-token-probes --verbose \
  --jsonl $d/$tag.jsonl > $d/$tag.txt 2>&1
echo "$tag exit $? $(date +%T)" >> $d/done.txt
