#!/usr/bin/env python3
"""Ratios for RESULTS.md from one reference_bench JSON run (all figures from the same process and threads).

Usage: summarize.py bench.json
"""
import json
import sys

def main():
    data = json.load(open(sys.argv[1]))
    by = {}
    for b in data["benchmarks"]:
        by[b["name"].split("/")[0].replace("moe::BM_", "")] = b
    ctx = data["context"]
    print(f"machine: {ctx.get('host_name', '?')}, {ctx['num_cpus']} CPUs at {ctx['mhz_per_cpu']} MHz, date {ctx['date']}")
    dense = by["Prefill_DenseSgemm"]["GFLOPs"]
    warm = by["Prefill_Reference"]["GFLOPs"]
    cold = by["Prefill_Reference_Cold"]["GFLOPs"]
    naive = by["Prefill_NaiveOneThread"]["GFLOPs"]
    copy = by["MemcpyBandwidth"]["bytes_per_s"]
    threads = int(by["Prefill_Reference"]["threads"])
    print(f"threads: {threads} (OpenMP) for reference, dense sgemm and memcpy; naive: 1")
    print(f"prefill DeepSeek-V3 T=4096 H=7168 I=256 E=256 k=8 fp8 block:")
    print(f"  reference warm {warm:.1f} GFLOP/s, cold first call {cold:.1f} GFLOP/s")
    print(f"  dense sgemm same FLOPs {dense:.1f} GFLOP/s -> warm ratio {warm / dense:.2f} (target >= 0.70), cold {cold / dense:.2f}")
    print(f"  naive fp64, 1 thread {naive:.3f} GFLOP/s -> ratio {warm / naive:.0f}x (target >= 20x)")
    print(f"decode Qwen3-30B-A3B T=16, weight bytes of the experts hit per second; memcpy {copy / 1e9:.1f} GB/s:")
    for k in ("Decode_Reference_Bf16", "Decode_Reference_Fp8Channel"):
        bw = by[k]["weight_bytes_per_s"]
        print(f"  {k}: {bw / 1e9:.1f} GB/s -> ratio {bw / copy:.2f} (target >= 0.50)")

if __name__ == "__main__":
    main()
