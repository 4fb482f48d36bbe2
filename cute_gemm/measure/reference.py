"""References: cuBLAS and cuBLASLt (fp16 in, fp32 out, as the problem says) and a float64 ground truth."""

from __future__ import annotations

import contextlib


@contextlib.contextmanager
def blas_library(name: str):
    """Run torch.mm under 'cublas' or 'cublaslt', restoring the previous choice afterwards."""
    import torch

    prev = torch.backends.cuda.preferred_blas_library()
    torch.backends.cuda.preferred_blas_library(name)
    try:
        yield
    finally:
        torch.backends.cuda.preferred_blas_library(prev)


def mm_fp32_out(a, b):
    """fp16 x fp16 -> fp32 C, fp32 accumulate: the problem itself, done by the selected BLAS library."""
    import torch

    return torch.mm(a, b, out_dtype=torch.float32)


def mm_fp32_into(a, b, c):
    """The same into a given fp32 C (torch's ``mm.dtype_out``): how the bench times the libraries, so that
    they write the very C buffer every other kernel of the run writes."""
    import torch

    return torch.mm(a, b, out_dtype=torch.float32, out=c)


def cublas(a, b):
    with blas_library("cublas"):
        return mm_fp32_out(a, b)


def cublaslt(a, b):
    with blas_library("cublaslt"):
        return mm_fp32_out(a, b)


def float64(a, b):
    """Ground truth: the product of the exact fp16 values in float64."""
    return a.double() @ b.double()


LIBRARIES = {"cublas": cublas, "cublaslt": cublaslt}
