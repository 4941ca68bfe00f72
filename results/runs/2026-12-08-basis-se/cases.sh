# The basis-se studies' cases, sourced by their sweep scripts (../2026-12-08-basis-cost/sweep.sh too): BF the
# qwen3.5 TP4 bf16 T1 / T4 / T128 case ids, FP the five fp8 case ids of ../2026-12-07-sparse-ensemble/cases.sh.
Q=qwen3.5-35b-a3b/tp4
BF=("$Q/bf16.a16+sh.bf16.a16/silu/T1/decode/atomic/one_stage" "$Q/bf16.a16+sh.bf16.a16/silu/T4/decode/atomic/one_stage"
    "$Q/bf16.a16+sh.bf16.a16/silu/T128/prefill/atomic/two_stage")
. results/runs/2026-12-07-sparse-ensemble/cases.sh  # F: the five fp8 cases as --filter pairs
FP=(); for ((i = 1; i < ${#F[@]}; i += 2)); do FP+=("${F[i]}"); done
