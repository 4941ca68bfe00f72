# Helpers sourced by the device call scripts: W (work dir) and OUT must be set; DEADLINE (s) optional.
START=$(date +%s)
left() { echo $(( ${DEADLINE:-585} - ($(date +%s) - START) )); }
step() {
  local name=$1 max=$2; shift 2
  local l=$(left); if [ $l -lt 15 ]; then echo "SKIPPED $name (no time left)" | tee -a $OUT/summary.txt; return 99; fi
  [ $max -gt $l ] && max=$l
  local t0=$(date +%s); timeout $max "$@" > $W/$name.log 2>&1; local rc=$?
  echo "== $name rc=$rc $(( $(date +%s) - t0 )) s" | tee -a $OUT/summary.txt
  return $rc
}
finish() { tar czf $OUT/results.tgz -C $W --exclude='*.safetensors' .; }
summ() { python3 - $1 <<'PY' | tee -a $OUT/summary.txt
import json,sys
r=json.load(open(sys.argv[1]))
for c in r["cases"]:
    m=dict(c.get("metrics",{})); m.update(c.get("timing",{}))
    print(c["status"], c["id"][:62], c.get("variant","")[:50], "us=%.1f" % m.get("kernel_us",-1), "TB/s=%.3f" % m.get("achieved_tbps",-1), "max_rel=%.3g" % m.get("max_rel",-1))
PY
}
build_cuda() {
  step build 360 bash -c 'cmake --preset cuda && cmake --build --preset cuda -j16 --target moe-harness gpu_kernel_tests'
  if [ ! -x build/cuda/harness/moe-harness ]; then tail -60 $W/build.log | tee -a $OUT/summary.txt; finish; exit 1; fi
  H=build/cuda/harness/moe-harness
}
ncu_summary() { python3 - "$1" <<'PY' | tee -a $OUT/summary.txt
import csv,sys,collections
rows=list(csv.reader(open(sys.argv[1], errors="replace")))
hdr=None
for i,r in enumerate(rows):
    if "Kernel Name" in r and "Metric Name" in r: hdr=i; break
if hdr is None: print("ncu: no rows"); sys.exit()
h=rows[hdr]; k=h.index("Kernel Name"); n=h.index("Metric Name"); v=h.index("Metric Value"); u=h.index("Metric Unit")
keep=("Duration","DRAM Throughput","Memory Throughput","Compute (SM) Throughput","Registers Per Thread","Achieved Occupancy","Issued Warp Per Scheduler","No Eligible","Eligible Warps Per Scheduler","Active Warps Per Scheduler","Warp Cycles Per Issued Instruction","L1/TEX Hit Rate","L2 Hit Rate","Executed Instructions","Theoretical Occupancy")
for r in rows[hdr+1:]:
    if len(r)>max(k,n,v) and r[n] in keep: print(r[k][:60], "|", r[n], r[v], r[u])
PY
}
