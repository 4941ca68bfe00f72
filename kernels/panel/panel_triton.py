"""The panel's own Triton GEMM (panel_torch.TritonVllmStyle, results/runs/2026-12-06-h200-accum/measure_accum.py):
C = A @ W^T with fp32 output, the accumulator carried through the K loop in `tl.dot(a, b, acc)` as vLLM's
fused_moe_kernel does on its per-tensor / per-channel fp8 path. On fp8 operands Triton's sm_90 default
(max_num_imprecise_acc = 2^30) keeps the whole K on the matrix units' accumulator; on bf16 operands it accumulates in
fp32. Operands are zero-padded to whole tiles, so the kernel needs no masks (a zero adds nothing to a dot).
"""
import torch
import triton
import triton.language as tl

BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 128


@triton.jit
def _matmul_kernel(a_ptr, w_ptr, c_ptr, K, N_PAD, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :])
        b = tl.load(w_ptr + rn[None, :] * K + (k0 + rk)[:, None])  # W is [N, K]: read as [BK, BN]
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N_PAD + rn[None, :], acc)


def _pad(x, rows, cols):
    return torch.nn.functional.pad(x, (0, cols - x.shape[1], 0, rows - x.shape[0]))


def matmul(a, w, operand_dtype):
    """a [M, K] and w [N, K] (fp32 tensors on a CUDA device, exactly representable in operand_dtype) -> a @ w^T in
    fp32, the products taken in operand_dtype (torch.float8_e4m3fn or torch.bfloat16)."""
    m, k = a.shape
    n = w.shape[0]
    mp, np_, kp = (-(-m // BLOCK_M) * BLOCK_M, -(-n // BLOCK_N) * BLOCK_N, -(-k // BLOCK_K) * BLOCK_K)
    ap = _pad(a, mp, kp).to(operand_dtype).contiguous()
    wp = _pad(w, np_, kp).to(operand_dtype).contiguous()
    c = torch.empty((mp, np_), device=a.device, dtype=torch.float32)
    _matmul_kernel[(mp // BLOCK_M, np_ // BLOCK_N)](ap, wp, c, kp, np_, BM=BLOCK_M, BN=BLOCK_N, BK=BLOCK_K)
    return c[:m, :n]


def fp8_matmul(a, w):
    return matmul(a, w, torch.float8_e4m3fn)
