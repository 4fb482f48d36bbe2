"""The phases as torch custom ops, for ``torch.compile`` (``fullgraph=True`` too) and CUDA graphs.

    torch.ops.cute_gemm.gemm(a, b, "5")                    # -> new fp32 C [M, N]
    torch.ops.cute_gemm.gemm(a, b, "5", torch.bfloat16)    # -> new bf16 C
    torch.ops.cute_gemm.gemm_out(a, b, c, "5")             # writes c in place (its dtype is C's)
    torch.ops.cute_gemm.linear(x, w, bias, "best", None)   # F.linear's meaning (cute_gemm.linear)

They run the same compiled kernels as ``cute_gemm.gemm`` / ``cute_gemm.linear`` (default config, the
device's ladder, the operands read from the tensors), through the plans (``plan.run``, imported by the
first call: registering the ops costs torch's registration only). Their fake (meta) implementations only
describe the output -- shape and dtype -- so the compiler traces through them without a GPU call;
``cute_gemm.gemm`` and ``cute_gemm.linear`` switch to these ops while ``torch.compile`` traces them. Eager
calls skip the op boundary (it costs tens of microseconds of dispatch per call).

The ops take tensors of every device type, so CPU tensors get the same ``InputError`` as
``cute_gemm.gemm`` ("A must be on a CUDA device") rather than torch's dispatcher error. They are
registered when this module is imported; ``import cute_gemm`` imports it if torch is already loaded,
and ``cute_gemm.gemm`` does on first use under ``torch.compile``.
"""

from __future__ import annotations

from typing import Optional

import torch


def _run(a, b, phase, out=None, out_dtype=None):
    from cute_gemm.runtime import plan

    return plan.run(a, b, phase, out, None, None, out_dtype)


@torch.library.custom_op("cute_gemm::gemm", mutates_args=())
def gemm(a: torch.Tensor, b: torch.Tensor, phase: str = "5", out_dtype: Optional[torch.dtype] = None) -> torch.Tensor:
    """C = A @ B (A [M,K], B [K,N], fp16 or bf16, each row- or column-major) with one phase's kernel; C
    [M,N] in ``out_dtype`` (default fp32)."""
    return _run(a, b, phase, None, out_dtype)


@gemm.register_fake
def _(a, b, phase="5", out_dtype=None):
    return a.new_empty((a.shape[0], b.shape[1]), dtype=out_dtype or torch.float32)


@torch.library.custom_op("cute_gemm::gemm_out", mutates_args=("out",))
def gemm_out(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, phase: str = "5") -> None:
    """``gemm`` into an existing [M,N] tensor (fp32, fp16 or bf16: C's type)."""
    _run(a, b, phase, out)


@gemm_out.register_fake
def _(a, b, out, phase="5"):
    return None


@torch.library.custom_op("cute_gemm::linear", mutates_args=())
def linear(x: torch.Tensor, w: torch.Tensor, bias: Optional[torch.Tensor] = None, phase: str = "best",
           out_dtype: Optional[torch.dtype] = None) -> torch.Tensor:
    """``cute_gemm.linear``: x [..., K] @ w [N, K]^T (+ bias) -> [..., N] in ``out_dtype`` (default x's)."""
    from cute_gemm.runtime import linear as _linear

    return _linear.run(x, w, bias, phase, out_dtype)  # a new tensor: the GEMM's output, bias added in place


@linear.register_fake
def _(x, w, bias=None, phase="best", out_dtype=None):
    return x.new_empty((*x.shape[:-1], w.shape[0]), dtype=out_dtype or x.dtype)


def call(a, b, phase="5", out=None, out_dtype=None):
    """``cute_gemm.gemm`` through the ops (what it runs while torch.compile traces it)."""
    if out is None:
        return torch.ops.cute_gemm.gemm(a, b, str(phase), _dtype(out_dtype))
    if out_dtype is not None and _dtype(out_dtype) != out.dtype:
        from cute_gemm.errors import InputError

        raise InputError(f"out is {out.dtype} but out_dtype={out_dtype}: C's type is out's, give one of them")
    torch.ops.cute_gemm.gemm_out(a, b, out, str(phase))
    return out


def call_linear(x, w, bias=None, phase="best", out_dtype=None):
    """``cute_gemm.linear`` through the op."""
    return torch.ops.cute_gemm.linear(x, w, bias, str(phase), _dtype(out_dtype))


def _dtype(out_dtype):
    """A torch dtype for the op's schema from a dtype or a name ('bf16'); None stays None."""
    if out_dtype is None or isinstance(out_dtype, torch.dtype):
        return out_dtype
    from cute_gemm.runtime.problem import out_dtype_name, torch_dtype

    return torch_dtype(out_dtype_name(out_dtype))
