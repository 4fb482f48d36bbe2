"""cute-gemm: the tcgen05 GEMM worklog's phases as CuTe DSL kernels, with a shared harness.

    import torch, cute_gemm
    c = cute_gemm.gemm(a, b, phase="5")   # a [M,K] fp16, b [K,N] fp16 (row-major), c [M,N] fp32

``cute_gemm.gemm`` is :func:`cute_gemm.api.gemm`; the torch custom ops ``torch.ops.cute_gemm.gemm``
and ``gemm_out`` (``cute_gemm.ops``) are registered on import when torch is already loaded. Heavy
imports (torch, cutlass) otherwise happen on first use, so ``cute-gemm --help`` stays fast.
"""

import sys

__version__ = "0.2.0"


def gemm(a, b, phase="5", out=None, config=None, arch=None):
    from cute_gemm.api import gemm as _gemm

    return _gemm(a, b, phase=phase, out=out, config=config, arch=arch)


def _adopt_docstring():
    # help(cute_gemm.gemm) shows the real documentation without importing torch/cutlass up front
    gemm.__doc__ = (
        "C = A @ B with one phase's kernel: A [M,K] fp16, B [K,N] fp16 (both row-major), C [M,N] fp32.\n\n"
        "phase: a phase id of the device's ladder ('cute-gemm list'; '2' means 2b). out: an fp32 [M,N]\n"
        "row-major tensor to write (else a new one). config: a phase config other than the default.\n"
        "arch: 'sm90'/'sm100' to insist on a ladder (default: the device's).\n"
        "Any M, N, K with N, K multiples of 8 for phases 2a and later; phases 0-1 need tile multiples.\n"
        "Raises cute_gemm.problem.InputError / cute_gemm.api.UnsupportedError before anything launches.\n"
        "See cute_gemm.api.gemm for the details (plans, compile cache, torch.compile, CUDA graphs)."
    )


_adopt_docstring()

if "torch" in sys.modules:  # register torch.ops.cute_gemm.* now, so they exist right after `import cute_gemm`
    try:
        from cute_gemm import ops as _ops  # noqa: F401
    except ImportError:  # the DSL is not installed: the ops come with first use, or not at all
        pass
