"""The numbers a check or a timing runs on: fresh random A and B in the requested layout and dtype, and a
C poisoned with NaN.

The check always uses standard normal inputs (``make_inputs``); timing may use another kind
(``DATA_KINDS``): the numbers in A and B move the H200's power draw, and so its clock. The layout is the
operands' (``phases.operands.Operands``): a column-major A is the ``.t()`` of a contiguous [K, M], a
column-major B the ``.t()`` of a contiguous [N, K] -- an ``nn.Linear`` weight -- the very tensors a caller
hands ``cute_gemm.gemm``.
"""

from __future__ import annotations

from cute_gemm.runtime.problem import Problem, torch_dtype
from phases.operands import WORKLOG

# what A and B hold while kernels are timed (the check always uses randn)
DATA_KINDS = {
    "randn": "standard normal (the worklog's)",
    "ints": "integers in [-3, 3] (exact in fp16 and bf16)",
    "uniform": "uniform in [-1, 1]",
}


def _operand(rows: int, cols: int, contiguous_rows: bool, dtype, fill):
    """A [rows, cols] tensor of ``dtype`` holding ``fill(r, c)``: row-major, or the ``.t()`` of a contiguous
    [cols, rows] (column-major)."""
    if contiguous_rows:
        return fill(rows, cols).to(dtype)
    return fill(cols, rows).to(dtype).t()


def make_inputs(p: Problem, device="cuda", generator=None, operands=WORKLOG):
    """Fresh random A [M,K] and B [K,N] in ``operands``' dtype and majors. Never zeros: zeros hide
    unwritten output."""
    import torch

    dt = torch_dtype(operands.ab)

    def randn(r, c):
        return torch.randn(r, c, device=device, dtype=torch.float32, generator=generator)

    a = _operand(p.m, p.k, operands.a_major == "k", dt, randn)
    b = _operand(p.k, p.n, operands.b_major == "n", dt, randn)
    return a, b


def poisoned_output(p: Problem, device="cuda", operands=WORKLOG):
    """C [M,N] row-major of ``operands``' C type, filled with NaN, so any element the kernel did not write
    shows up in the check."""
    import torch

    return torch.full((p.m, p.n), float("nan"), device=device, dtype=torch_dtype(operands.c))


def timing_inputs(p: Problem, data: str, n_sets: int, operands=WORKLOG):
    """``n_sets`` input sets (A, B, C) holding ``data`` in ``operands``' layout and dtypes; C is
    NaN-poisoned and shared by every kernel that writes into a given C."""
    import torch

    if data not in DATA_KINDS:
        raise ValueError(f"unknown data kind {data!r}: use one of {', '.join(DATA_KINDS)}")
    gen = torch.Generator(device="cuda")
    gen.manual_seed(torch.seed())
    dt = torch_dtype(operands.ab)

    def fill(rows, cols):
        if data == "randn":
            return torch.randn(rows, cols, device="cuda", generator=gen)
        if data == "ints":
            return torch.randint(-3, 4, (rows, cols), device="cuda", generator=gen)
        return torch.rand(rows, cols, device="cuda", generator=gen) * 2 - 1

    return [(_operand(p.m, p.k, operands.a_major == "k", dt, fill),
             _operand(p.k, p.n, operands.b_major == "n", dt, fill),
             poisoned_output(p, operands=operands)) for _ in range(n_sets)]
