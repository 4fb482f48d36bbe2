"""The numbers a check or a timing runs on: fresh random A and B, and a C poisoned with NaN.

The check always uses standard normal inputs (``make_inputs``); timing may use another kind
(``DATA_KINDS``): the numbers in A and B move the H200's power draw, and so its clock.
"""

from __future__ import annotations

from cute_gemm.runtime.problem import Problem

# what A and B hold while kernels are timed (the check always uses randn)
DATA_KINDS = {
    "randn": "standard normal (the worklog's)",
    "ints": "integers in [-3, 3] (exact in fp16)",
    "uniform": "uniform in [-1, 1]",
}


def make_inputs(p: Problem, device="cuda", generator=None):
    """Fresh random A [M,K] and B [K,N], fp16, row-major. Never zeros: zeros hide unwritten output."""
    import torch

    a = torch.randn(p.m, p.k, device=device, dtype=torch.float32, generator=generator).to(torch.float16)
    b = torch.randn(p.k, p.n, device=device, dtype=torch.float32, generator=generator).to(torch.float16)
    return a, b


def poisoned_output(p: Problem, device="cuda"):
    """C filled with NaN, so any element the kernel did not write shows up in the check."""
    import torch

    return torch.full((p.m, p.n), float("nan"), device=device, dtype=torch.float32)



def timing_inputs(p: Problem, data: str, n_sets: int):
    """``n_sets`` input sets (A, B, C) holding ``data``; C is NaN-poisoned and shared by every kernel
    that writes into a given C."""
    import torch

    gen = torch.Generator(device="cuda")
    gen.manual_seed(torch.seed())

    def fill(rows, cols):
        if data == "randn":
            t = torch.randn(rows, cols, device="cuda", generator=gen)
        elif data == "ints":
            t = torch.randint(-3, 4, (rows, cols), device="cuda", generator=gen)
        elif data == "uniform":
            t = torch.rand(rows, cols, device="cuda", generator=gen) * 2 - 1
        else:
            raise ValueError(f"unknown data kind {data!r}: use one of {', '.join(DATA_KINDS)}")
        return t.to(torch.float16)

    return [(fill(p.m, p.k), fill(p.k, p.n), poisoned_output(p)) for _ in range(n_sets)]
