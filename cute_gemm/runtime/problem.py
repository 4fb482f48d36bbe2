"""The worklog's problem: C[M,N] (fp32) = A[M,K] (fp16, row-major) @ B[K,N] (fp16, row-major = N-major).

The problem's shape and the host-side validation of a call's operands (``InputError``).
"""

from __future__ import annotations

import dataclasses

from cute_gemm.errors import InputError


@dataclasses.dataclass(frozen=True)
class Problem:
    m: int
    n: int
    k: int

    @property
    def flops(self) -> int:
        return 2 * self.m * self.n * self.k

    @property
    def bytes_per_set(self) -> int:
        """Bytes of one input set plus its output (A, B fp16 and C fp32)."""
        return 2 * (self.m * self.k + self.k * self.n) + 4 * self.m * self.n

    def __str__(self) -> str:
        return f"{self.m}x{self.n}x{self.k}"

    @classmethod
    def parse(cls, text: str) -> "Problem":
        """'4096,4096,4096' or '4096x4096x4096' or a single '4096' (square)."""
        parts = [p for p in text.replace("x", ",").replace("X", ",").split(",") if p.strip()]
        try:
            dims = [int(p) for p in parts]
        except ValueError:
            raise ValueError(f"shape {text!r}: expected M,N,K integers, e.g. 4096,4096,4096") from None
        if len(dims) == 1:
            dims *= 3
        if len(dims) != 3 or min(dims) <= 0:
            raise ValueError(f"shape {text!r}: expected three positive integers M,N,K")
        return cls(*dims)


def _row_major(t) -> bool:
    """Rows contiguous, one after the other. Strides of an extent of 1 do not matter (torch normalises
    them freely, and the compiled entry skips them too), nor any stride of an empty tensor."""
    rows, cols = t.shape
    s0, s1 = t.stride()
    return rows * cols == 0 or ((cols <= 1 or s1 == 1) and (rows <= 1 or s0 == cols))


def validate(a, b, c=None) -> Problem:
    """Check dtypes, device, layouts and alignment of torch operands; return the problem they pose."""
    import torch

    def need(cond, msg):
        if not cond:
            raise InputError(msg)

    for name, t in (("A", a), ("B", b)):
        need(isinstance(t, torch.Tensor), f"{name} must be a torch.Tensor, got {type(t).__name__}")
        need(t.dim() == 2, f"{name} must be 2-D, got shape {tuple(t.shape)}")
        need(t.dtype == torch.float16, f"{name} must be torch.float16, got {t.dtype}")
        need(t.is_cuda, f"{name} must be on a CUDA device, got {t.device}")
    need(a.device == b.device, f"A and B are on different devices ({a.device}, {b.device})")
    m, k = a.shape
    k2, n = b.shape
    need(k == k2, f"inner dimensions differ: A is {m}x{k}, B is {k2}x{n}")
    need(_row_major(a), f"A must be row-major contiguous [M,K] (stride ({k}, 1)), got stride {a.stride()}")
    need(_row_major(b), f"B must be row-major contiguous [K,N] (stride ({n}, 1)), got stride {b.stride()}")
    # TMA and 16-byte cp.async need 16-byte aligned bases and rows
    for name, t, row in (("A", a, k), ("B", b, n)):
        need(t.data_ptr() % 16 == 0, f"{name}'s data pointer must be 16-byte aligned")
        need(row % 8 == 0, f"{name}'s rows must be a multiple of 8 fp16 (16 bytes), got {row}")
    if c is not None:
        need(isinstance(c, torch.Tensor) and c.dtype == torch.float32, "C must be a torch.float32 tensor")
        need(tuple(c.shape) == (m, n), f"C must be {m}x{n}, got {tuple(c.shape)}")
        need(c.device == a.device, f"C is on {c.device}, A on {a.device}")
        need(_row_major(c), f"C must be row-major contiguous, got stride {c.stride()}")
        need(c.data_ptr() % 16 == 0, "C's data pointer must be 16-byte aligned")
    return Problem(m, n, k)
