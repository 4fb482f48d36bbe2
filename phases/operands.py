"""What the three tensors of a GEMM hold: element types and majors.

Two views of the same thing:
- ``Operands``, the host's spec (plain strings, no DSL import): part of a plan's key and a compiled
  kernel's cache name; the compile face builds its fake tensors from it, and ``can_implement`` refuses
  the specs a phase does not take.
- ``Types``, what a kernel reads from the tensors it is traced with (``read(mA, mB, mC)``): the CuTe
  element types and ``LayoutEnum`` majors its smem layouts, tiled MMA and epilogue are built from.

The names follow the BLAS letters of a row-major caller: layout ``"nn"`` is the worklog's problem (A
[M,K] row-major, B [K,N] row-major); a second ``t`` means B is given transposed -- a ``torch.nn.Linear``
weight W [N,K] row-major, used as ``x @ W.T`` -- and a first ``t`` means A is column-major ([K,M]
row-major, transposed).
"""

from __future__ import annotations

import dataclasses

AB_DTYPES = ("fp16", "bf16")  # A and B share one 16-bit type (wgmma / tcgen05 kind::f16)
C_DTYPES = ("fp32", "fp16", "bf16")  # accumulate in fp32, store C in any of these
LAYOUTS = ("nn", "nt", "tn", "tt")


@dataclasses.dataclass(frozen=True)
class Operands:
    """The spec of one compiled kernel's tensors (the worklog's problem by default).

    Majors name the contiguous mode: ``a_major`` of A [M,K] ("k": row-major), ``b_major`` of B [K,N]
    ("n": row-major, the worklog's; "k": column-major = a transposed [N,K] weight), ``c_major`` of C
    [M,N] ("n": row-major; "m" only inside a plan, as swap-AB's C^T).
    """

    ab: str = "fp16"
    c: str = "fp32"
    a_major: str = "k"
    b_major: str = "n"
    c_major: str = "n"

    def __post_init__(self):
        for name, value, allowed in (("ab", self.ab, AB_DTYPES), ("c", self.c, C_DTYPES),
                                     ("a_major", self.a_major, ("k", "m")), ("b_major", self.b_major, ("n", "k")),
                                     ("c_major", self.c_major, ("n", "m"))):
            if value not in allowed:
                raise ValueError(f"{name}={value!r}: expected one of {', '.join(allowed)}")

    @classmethod
    def of(cls, layout: str = "nn", ab: str = "fp16", c: str = "fp32") -> "Operands":
        """From BLAS letters: ``of("nt", "bf16", "bf16")`` is x @ W.T with a bf16 nn.Linear weight."""
        if layout not in LAYOUTS:
            raise ValueError(f"layout {layout!r}: expected one of {', '.join(LAYOUTS)}")
        return cls(ab=ab, c=c, a_major="k" if layout[0] == "n" else "m", b_major="n" if layout[1] == "n" else "k")

    @property
    def layout(self) -> str:
        return ("n" if self.a_major == "k" else "t") + ("n" if self.b_major == "n" else "t")

    @property
    def is_worklog(self) -> bool:
        return self == Operands()

    def swapped(self) -> "Operands":
        """The spec of C^T = B^T A^T: B^T [N,K] is the kernel's A, A^T [K,M] its B, C^T [N,M] its C."""
        return dataclasses.replace(
            self,
            a_major="m" if self.b_major == "n" else "k",  # B [K,N] N-contiguous -> B^T (N,K) N-contiguous
            b_major="k" if self.a_major == "k" else "n",  # A (M,K) K-contiguous -> A^T [K,M] seen as (M,K)
            c_major="m" if self.c_major == "n" else "n",
        )

    def label(self) -> str:
        """'nn fp16->fp32' (what a table or an error message shows)."""
        return f"{self.layout} {self.ab}->{self.c}" + (" C^T" if self.c_major == "m" else "")


WORKLOG = Operands()


@dataclasses.dataclass(frozen=True)
class Types:
    """The trace-time view: CuTe element types, and the majors as ``LayoutEnum`` of the kernel's tensors
    mA (M,K), mB (N,K), mC (M,N) -- ROW_MAJOR means mode 1 is contiguous (K for A and B, N for C)."""

    ab: type
    c: type
    a: object
    b: object
    c_layout: object


def read(mA, mB, mC) -> Types:
    """The element types and majors of the kernel's three tensors, as the phases build on them."""
    from cutlass.tensor_utils import LayoutEnum

    assert mA.element_type == mB.element_type, "A and B must share one element type"
    return Types(mA.element_type, mC.element_type, LayoutEnum.from_tensor(mA), LayoutEnum.from_tensor(mB),
                 LayoutEnum.from_tensor(mC))


def dtype(name: str):
    """'fp16' -> cutlass.Float16, ..."""
    import cutlass

    return {"fp16": cutlass.Float16, "bf16": cutlass.BFloat16, "fp32": cutlass.Float32}[name]
