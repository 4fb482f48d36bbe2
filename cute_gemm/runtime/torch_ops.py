"""The phases as torch custom ops, for ``torch.compile`` (``fullgraph=True`` too) and CUDA graphs.

    torch.ops.cute_gemm.gemm(a, b, "5")          # -> new fp32 C [M, N]
    torch.ops.cute_gemm.gemm_out(a, b, c, "5")   # writes c in place

Both run the same compiled kernels as ``cute_gemm.gemm`` (default config, the device's ladder), through
the plans (``plan.run``, imported by the first call: registering the ops costs torch's registration only). Their fake (meta) implementations only describe the output, so the compiler
traces through them without a GPU call; ``cute_gemm.gemm`` itself switches to these ops while
``torch.compile`` traces it. Eager calls of ``cute_gemm.gemm`` skip the op boundary (it costs tens of
microseconds of dispatch per call).

The ops take tensors of every device type, so CPU tensors get the same ``InputError`` as
``cute_gemm.gemm`` ("A must be on a CUDA device") rather than torch's dispatcher error. They are
registered when this module is imported; ``import cute_gemm`` imports it if torch is already loaded,
and ``cute_gemm.gemm`` does on first use under ``torch.compile``.
"""

from __future__ import annotations

import torch


def _run(a, b, phase, out=None):
    from cute_gemm.runtime import plan

    return plan.run(a, b, phase, out)


@torch.library.custom_op("cute_gemm::gemm", mutates_args=())
def gemm(a: torch.Tensor, b: torch.Tensor, phase: str = "5") -> torch.Tensor:
    """C = A @ B (A [M,K] fp16, B [K,N] fp16, row-major) with one phase's kernel; C fp32 [M,N]."""
    return _run(a, b, phase)


@gemm.register_fake
def _(a, b, phase="5"):
    return a.new_empty((a.shape[0], b.shape[1]), dtype=torch.float32)


@torch.library.custom_op("cute_gemm::gemm_out", mutates_args=("out",))
def gemm_out(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, phase: str = "5") -> None:
    """``gemm`` into an existing fp32 [M,N] tensor."""
    _run(a, b, phase, out)


@gemm_out.register_fake
def _(a, b, out, phase="5"):
    return None


def call(a, b, phase="5", out=None):
    """``cute_gemm.gemm`` through the ops (what it runs while torch.compile traces it)."""
    if out is None:
        return torch.ops.cute_gemm.gemm(a, b, str(phase))
    torch.ops.cute_gemm.gemm_out(a, b, out, str(phase))
    return out
