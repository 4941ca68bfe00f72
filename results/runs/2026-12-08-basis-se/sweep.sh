#!/usr/bin/env bash
# The study's sweeps (RUN.md): two chains at once on the 2-core VM, one thread each. From the repository root.
D=results/runs/2026-12-08-basis-se; S=$D/basis_se.py; export PYTHONPATH=build/cpu/python OMP_NUM_THREADS=1
. results/runs/2026-12-08-basis-se/cases.sh  # BF, FP
run() { local out=$1; shift; /usr/bin/python3 $S "$@" >> $D/cpu/$out.jsonl; }
case $1 in
a) run double --kernel double --seeds 40 "${BF[0]}" "${BF[1]}"
   run double-bug --kernel double --bug 1.05 --seeds 10 "${BF[0]}" "${BF[1]}"
   run double-bug --kernel double --bug 1.10 --seeds 10 "${BF[0]}" "${BF[1]}"
   run double --kernel double --seeds 6 "${BF[2]}" ;;
b) run noisy0.2 --kernel noisy0.2 --seeds 20 "${FP[0]}" "${FP[3]}" "${FP[4]}"
   run noisy0.2-bug --kernel noisy0.2 --bug 1.05 --seeds 10 "${FP[0]}" "${FP[3]}" "${FP[4]}"
   run noisy0.2-bug --kernel noisy0.2 --bug 1.10 --seeds 10 "${FP[0]}" "${FP[3]}" "${FP[4]}"
   run noisy0.2 --kernel noisy0.2 --seeds 4 "${FP[1]}"
   run noisy0.2-bug --kernel noisy0.2 --bug 1.10 --seeds 2 "${FP[1]}" ;;
esac
