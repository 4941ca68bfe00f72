#!/bin/bash
# job.sh SEED SHARD, from the repository root: the four NumPy members over the nightly's shard (I/N) at one seed;
# run as `xargs -P 2 -L 1 bash results/runs/2026-12-06-cpu-nightly-20seeds/job.sh < .../jobs.txt`.
s=$1; sh=$2; d=results/runs/2026-12-06-cpu-nightly-20seeds/logs; tag=nightly-shard${sh/\//of}-seed$s
PYTHONPATH=build/cpu/python OMP_NUM_THREADS=1 python3 kernels/panel/run_panel.py --suite nightly \
  --members vllm,aiter,finalize,splitk --seeds 1 --first-seed $s --shard $sh --no-token-probes --verbose \
  --jsonl $d/$tag.jsonl > $d/$tag.txt 2>&1
echo "$tag exit $? $(date +%T)" >> $d/done.txt
