"""References: cuBLAS and cuBLASLt on the very tensors a phase gets (same dtypes, same layout), and a
float64 ground truth.

The library call for a C type: fp32 C is ``torch.mm(a, b, out_dtype=torch.float32)`` (16-bit inputs, fp32
accumulate, fp32 out: one cuBLAS(Lt) GEMM); a C of the inputs' type is ``torch.mm(a, b)``; a C of the
other 16-bit type (bf16 in, fp16 out, or the reverse) has no single library call: ``torch.mm(a, b)`` then
``.to()`` (two roundings). torch passes column-major operands to cuBLAS as its transpose flags, no copy.
cuBLAS(Lt) runs with reduced-precision reductions off (``torch.backends.cuda.matmul``'s
``allow_fp16/bf16_reduced_precision_reduction``): a split-K reduction in fp32, as the phases reduce.
"""

from __future__ import annotations

import contextlib


@contextlib.contextmanager
def blas_library(name: str):
    """Run torch.mm under 'cublas' or 'cublaslt' with fp32 reductions, restoring the previous choices after."""
    import torch

    prev = torch.backends.cuda.preferred_blas_library()
    mm = torch.backends.cuda.matmul
    flags = {f: getattr(mm, f) for f in ("allow_fp16_reduced_precision_reduction",
                                         "allow_bf16_reduced_precision_reduction") if hasattr(mm, f)}
    torch.backends.cuda.preferred_blas_library(name)
    for f in flags:
        setattr(mm, f, False)
    try:
        yield
    finally:
        torch.backends.cuda.preferred_blas_library(prev)
        for f, v in flags.items():
            setattr(mm, f, v)


def mm_fp32_out(a, b):
    """fp16 x fp16 -> fp32 C, fp32 accumulate: the worklog's problem, done by the selected BLAS library."""
    import torch

    return torch.mm(a, b, out_dtype=torch.float32)


def mm_fp32_into(a, b, c):
    """The same into a given fp32 C (torch's ``mm.dtype_out``)."""
    import torch

    return torch.mm(a, b, out_dtype=torch.float32, out=c)


def mm_out(a, b, c_dtype=None):
    """A @ B with C of ``c_dtype`` (a torch dtype; None: fp32) by the selected BLAS library."""
    import torch

    c_dtype = c_dtype or torch.float32
    if c_dtype == torch.float32:
        return torch.mm(a, b, out_dtype=torch.float32)
    c = torch.mm(a, b)
    return c if c.dtype == c_dtype else c.to(c_dtype)


def mm_into(a, b, c):
    """A @ B into a given C of any of the C types (how the bench times the libraries, so that they write the
    very C buffer every other kernel of the run writes)."""
    import torch

    if c.dtype == torch.float32:
        return torch.mm(a, b, out_dtype=torch.float32, out=c)
    if c.dtype == a.dtype:
        return torch.mm(a, b, out=c)
    return c.copy_(torch.mm(a, b))


def describe(ab: str, c: str) -> str:
    """The library call for these dtypes, in words (results record it)."""
    if c == "fp32":
        return "torch.mm(a, b, out_dtype=torch.float32, out=c)"
    if c == ab:
        return "torch.mm(a, b, out=c)"
    return f"c.copy_(torch.mm(a, b)): {ab} out, then converted to {c} (no single library call for {ab} -> {c})"


def cublas(a, b, c_dtype=None):
    with blas_library("cublas"):
        return mm_out(a, b, c_dtype)


def cublaslt(a, b, c_dtype=None):
    with blas_library("cublaslt"):
        return mm_out(a, b, c_dtype)


def float64(a, b):
    """Ground truth: the product of the exact fp16/bf16 values in float64."""
    return a.double() @ b.double()


LIBRARIES = {"cublas": cublas, "cublaslt": cublaslt}
