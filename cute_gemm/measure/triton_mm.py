"""A Triton matmul for the same problem, the "Triton" peer of the bench (imported only when used).

C[M,N] fp32 = A[M,K] fp16 row-major @ B[K,N] fp16 row-major, fp32 accumulate: each program computes one
BM x BN tile of C, walking K in BK steps with ``tl.dot`` (Triton pipelines the loads over ``num_stages``);
tiles are visited in groups of GROUP_M tile rows so that programs running together share B tiles in L2.
Triton's autotuner picks one of a few configs per (M, N, K) on the first call; the tiles are the usual
good ones on H100-class GPUs (128x256x64 with 8 warps first).
"""

from __future__ import annotations

import triton
import triton.language as tl

CONFIGS = [
    triton.Config({"BM": 128, "BN": 256, "BK": 64, "GROUP_M": 8}, num_stages=4, num_warps=8),
    triton.Config({"BM": 128, "BN": 256, "BK": 64, "GROUP_M": 8}, num_stages=3, num_warps=8),
    triton.Config({"BM": 256, "BN": 128, "BK": 64, "GROUP_M": 8}, num_stages=3, num_warps=8),
    triton.Config({"BM": 128, "BN": 128, "BK": 64, "GROUP_M": 8}, num_stages=4, num_warps=4),
]


@triton.autotune(configs=CONFIGS, key=["M", "N", "K"])
@triton.jit
def _matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                   BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    # grouped order: consecutive programs walk down GROUP_M tile rows before moving to the next column
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    rows = tl.minimum(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % rows
    pid_n = (pid % per_group) // rows

    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        k_left = K - k0
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < k_left) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc=acc)
        a_ptrs += BK
        b_ptrs += BK * stride_bk
    c_ptrs = c_ptr + rm[:, None] * stride_cm + rn[None, :]
    tl.store(c_ptrs, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def matmul_into(a, b, c):
    """c = a @ b (fp16 x fp16 -> fp32) on the current torch stream; returns c."""
    m, k = a.shape
    n = b.shape[1]

    def grid(meta):
        return (triton.cdiv(m, meta["BM"]) * triton.cdiv(n, meta["BN"]),)

    _matmul_kernel[grid](a, b, c, m, n, k, a.stride(0), b.stride(0), c.stride(0))
    return c
