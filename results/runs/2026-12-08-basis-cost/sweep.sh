#!/usr/bin/env bash
# The study's sweeps (RUN.md): two chains at once on the 2-core VM, one thread each. From the repository root.
D=results/runs/2026-12-08-basis-cost; S=$D/basis_cost.py; export PYTHONPATH=build/cpu/python OMP_NUM_THREADS=1
. results/runs/2026-12-08-basis-se/cases.sh  # BF, FP
run() { local out=$1; shift; /usr/bin/python3 $S "$@" >> $D/cpu/$out.jsonl; }
case $1 in
a) run double --kernel double --seeds 20 "${BF[0]}" "${BF[1]}"
   run double --kernel double --seeds 6 --first-seed 3 --solvers exact,cg0,cg20 "${BF[2]}" ;;
b) run noisy0.2 --kernel noisy0.2 --seeds 10 "${FP[0]}" "${FP[3]}" "${FP[4]}"
   run noisy0.2 --kernel noisy0.2 --seeds 4 --solvers exact,cg0,cg20 "${FP[1]}" ;;
esac
# the sign-flip z (sign_flip_z) beside the normal one, exact fit: run after a and b
case $1 in
c) run sf-double --kernel double --seeds 20 --solvers exact,cg10b "${BF[0]}" "${BF[1]}" ;;
d) run sf-noisy0.2 --kernel noisy0.2 --seeds 10 --solvers exact,cg10b "${FP[0]}" "${FP[3]}" "${FP[4]}" ;;
esac
# the Student-t reading (t_z) beside the normal z, with the iterated fit cg10b: after the others
case $1 in
e) run t-double --kernel double --seeds 9 --solvers cg10b "${BF[2]}"
   run t-double --kernel double --seeds 20 --solvers cg10b "${BF[0]}" "${BF[1]}" ;;
f) run t-noisy0.2 --kernel noisy0.2 --seeds 10 --solvers cg10b "${FP[0]}" "${FP[3]}" "${FP[4]}"
   run t-noisy0.2 --kernel noisy0.2 --seeds 4 --solvers cg10b "${FP[1]}" ;;
esac
# the HC3 reading (Blocks.se with the regressor's own fit), cg10b: after the others
case $1 in
g) run hc-double --kernel double --seeds 9 --solvers cg10b "${BF[2]}"
   run hc-double --kernel double --seeds 20 --solvers cg10b "${BF[0]}" "${BF[1]}" ;;
h) run hc-noisy0.2 --kernel noisy0.2 --seeds 10 --solvers cg10b "${FP[0]}" "${FP[3]}" "${FP[4]}" ;;
esac
# power of the readings on one token-slot scaled (basis_se.member's bug), cg10b
case $1 in
i) run hc-double-bug --kernel double --bug 1.10 --seeds 10 --solvers cg10b "${BF[0]}" "${BF[1]}"
   run hc-double-bug --kernel double --bug 1.05 --seeds 10 --solvers cg10b "${BF[0]}" "${BF[1]}" ;;
j) run hc-noisy0.2-bug --kernel noisy0.2 --bug 1.10 --seeds 10 --solvers cg10b "${FP[0]}" "${FP[3]}" "${FP[4]}"
   run hc-noisy0.2-bug --kernel noisy0.2 --bug 1.05 --seeds 10 --solvers cg10b "${FP[0]}" "${FP[3]}" "${FP[4]}" ;;
esac
