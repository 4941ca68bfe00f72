#!/bin/bash
# Call 3 (seventh session): the ring with fp8/MXFP8 chunks 64 columns apart (whole sectors per copy); A/B of ring
# depth (3, 4) x B copied through L1 or not, on five decode shapes; nightly; ncu stall reasons.
set -u
cd "$(dirname "$0")/.."
W=/tmp/work3; mkdir -p $W
source reports/runs/2026-12-01-h200-decode-ring/device-lib.sh
build_cuda
step gpu_kernel_tests 90 build/cuda/harness/gpu_kernel_tests; ok1=$?
tail -1 $W/gpu_kernel_tests.log | tee -a $OUT/summary.txt; grep -E "FAILED|Failure" -A8 $W/gpu_kernel_tests.log | head -30 | cut -c1-300 | tee -a $OUT/summary.txt
RC="--reference-cache $W/refcache"
for cfg in "3 0" "3 1" "4 0" "4 1"; do set -- $cfg
  echo "-- stages=$1 b_l1=$2" | tee -a $OUT/summary.txt
  step bench-s$1-l$2 90 env MOE_DECODE_STAGES=$1 MOE_DECODE_B_L1=$2 $H run --suite reports/runs/2026-12-01-h200-decode-ring/bench-extra.yaml --kernel gpu --require-device $RC --report-dir $W/bench-s$1-l$2
  summ $W/bench-s$1-l$2/report.json
done
step nightly 150 $H run --suite nightly --kernel gpu --require-device --no-timing --report-dir $W/nightly; ok2=$?
grep -E "^moe-harness:" $W/nightly.log | tee -a $OUT/summary.txt; grep -E "^\| (fail|error)" $W/nightly.log | head -8 | cut -c1-300 | tee -a $OUT/summary.txt
step ncu_raw 150 ncu --clock-control none --csv --page raw --section SpeedOfLight --section WarpStateStats --section Occupancy -k regex:decode_mma --launch-count 4 $H run --suite bench --filter '*fp8blk*' --filter '*mxfp4*' --kernel gpu --no-timing $RC --report-dir $W/ncu_run
python3 - $W/ncu_raw.log <<'PY' | tee -a $OUT/summary.txt
import csv,sys
rows=list(csv.reader(open(sys.argv[1], errors="replace")))
for i,r in enumerate(rows):
    if "Kernel Name" in r: h=r; data=rows[i+2:]; break
else: print("no raw"); sys.exit()
def num(x):
    try: return float(x.replace(',',''))
    except: return None
for d in data:
    if len(d)!=len(h): continue
    kn=d[h.index("Kernel Name")][:48]
    st=sorted(((num(d[j]),h[j]) for j in range(len(h)) if "issue_stalled" in h[j] and "per_issue_active" in h[j] and num(d[j]) is not None), reverse=True)[:6]
    ex=[(h[j],d[j]) for j in range(len(h)) if h[j] in ("gpu__time_duration.sum","dram__throughput.avg.pct_of_peak_sustained_elapsed","smsp__issue_active.avg.pct_of_peak_sustained_active","sm__warps_active.avg.pct_of_peak_sustained_active")]
    print(kn, " ".join("%s=%s"%(a.split('.')[0].split('__')[1],b) for a,b in ex))
    print("   ", "; ".join("%s=%.2f" % (n.split("stalled_")[1].split("_per")[0], v) for v,n in st))
PY
finish
