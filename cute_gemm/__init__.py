"""cute-gemm: the tcgen05 GEMM worklog's phases as CuTe DSL kernels, with a shared harness.

    import torch, cute_gemm
    c = cute_gemm.gemm(a, b, phase="5")   # a [M,K] fp16, b [K,N] fp16 (row-major), c [M,N] fp32

Heavy imports (torch, cutlass) happen on first use, so ``cute-gemm --help`` stays fast.
"""

__version__ = "0.1.0"


def gemm(a, b, phase="5", out=None, config=None, arch=None):
    """C = A @ B with one phase's kernel; see :func:`cute_gemm.api.gemm` for the arguments."""
    from cute_gemm.api import gemm as _gemm

    return _gemm(a, b, phase=phase, out=out, config=config, arch=arch)
