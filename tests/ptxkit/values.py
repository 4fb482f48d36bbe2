"""What the simulated GEMM moves around instead of numbers: where each value came from.

A and B elements are tags naming their global coordinates; the accumulator holds, per element, which
(row, column) it is and which K range it has summed. A wrong coordinate, a stale stage, a missed
k-tile or a value stored to the wrong place then shows up by name in the final check, not as a
rounding difference.

The fused epilogue (phase 11) computes with those values: its fp32 arithmetic builds ``Fx`` trees over
accumulators, elements of the bias and residual tensors (``Elem`` tags of "bias" and "D", loaded by
``ld.global``) and immediates. The tree keeps the provenance (which accumulator, which bias column,
which residual element) and the order of the operations; the final check gives every leaf a number and
evaluates it (``ptxkit.numerics``).
"""

from __future__ import annotations

import dataclasses

ZERO = None  # an element the TMA zero-filled (outside A or B)


@dataclasses.dataclass(frozen=True)
class Elem:
    """Element (row, col) of operand ``tensor`` ('A': [M, K], 'B': seen as [N, K])."""

    tensor: str
    row: int
    col: int


@dataclasses.dataclass(frozen=True)
class Acc:
    """An accumulator value: C[m, n] summed over the K ranges in ``ks`` (disjoint [lo, hi) pairs).
    ``m`` / ``n`` None: rows or columns the MMA read as zero-filled padding only.

    ``terms``: how it was summed, for the fp32 additions outside the MMA (a split-K reduce, stream-K's
    halves): None for one MMA chain (its K ranges in ``ks``), else the two addends as a frozenset (fp32
    addition commutes, so a + b and b + a are the same value; it does not associate, so (a + b) + c and
    a + (b + c) are not). ``in_k_order`` says whether the additions are the left fold in K order a
    deterministic reduce documents: ((p0 + p1) + p2) + ... with p_i the partial sum over the i-th K range.
    """

    m: int | None
    n: int | None
    ks: tuple
    terms: frozenset | None = None

    def __add__(self, other):
        if not isinstance(other, Acc):
            return NotImplemented
        if (self.m, self.n) != (other.m, other.n):
            raise SimValueError(f"adds C{(self.m, self.n)} to C{(other.m, other.n)}")
        return Acc(self.m, self.n, merge_ranges(self.ks + other.ks), frozenset((self, other)))

    def in_k_order(self) -> bool:
        """The fp32 additions form ((p0 + p1) + p2) + ... over ascending K ranges (one MMA chain: True)."""
        if self.terms is None:
            return True
        a, b = tuple(self.terms) if len(self.terms) == 2 else (next(iter(self.terms)),) * 2
        return any(x.in_k_order() and y.terms is None and x.ks[-1][1] <= y.ks[0][0] for x, y in ((a, b), (b, a)))


@dataclasses.dataclass(frozen=True)
class Rounded:
    """An accumulator value rounded to a 16-bit C element (``dtype`` 'f16' or 'bf16': cvt.rn.*.f32)."""

    acc: object
    dtype: str


@dataclasses.dataclass(frozen=True)
class Fx:
    """An fp32 value computed outside the MMAs from non-integer operands: ``op`` applied to ``args``.

    ``op``: "add", "sub", "mul", "fma" (a * b + c, rounded once), "max", "min", "neg", "abs", "tanh"
    (``tanh.approx.f32``), or "cvt.f32.bf16" / "cvt.f32.f16" (a 16-bit value widened, exactly).
    ``args``: ``Acc``, ``Elem``, ``Rounded``, ``Fx``, Python floats (immediates) or ints (raw bits of a
    register). Nothing is computed while the kernel runs; ``ptxkit.numerics.evaluate`` does it at the check.
    The adds of two accumulators stay ``Acc + Acc`` (the split-K reduce, whose K order the check reads).
    """

    op: str
    args: tuple


def leaves(v):
    """The ``Acc`` / ``Elem`` / number leaves of a value (an ``Fx`` or ``Rounded`` tree), in order."""
    if isinstance(v, Fx):
        for a in v.args:
            yield from leaves(a)
    elif isinstance(v, Rounded):
        yield from leaves(v.acc)
    else:
        yield v


def describe(v, depth: int = 0) -> str:
    """A short formula of a value for a report: ``tanh(mul(add(acc(3,5,K), bias[5]), 0.5))``."""
    if depth > 6:
        return "..."
    if isinstance(v, Fx):
        return f"{v.op}({', '.join(describe(a, depth + 1) for a in v.args)})"
    if isinstance(v, Rounded):
        return f"round_{v.dtype}({describe(v.acc, depth + 1)})"
    if isinstance(v, Acc):
        return f"acc({v.m},{v.n},K{list(v.ks)})"
    if isinstance(v, Elem):
        return f"{v.tensor}[{v.row},{v.col}]" if v.tensor != "bias" else f"bias[{v.col}]"
    return repr(v)


class SimValueError(Exception):
    """A value combined or stored where it cannot belong."""


def merge_ranges(ranges) -> tuple:
    """Sorted union of [lo, hi) ranges; overlapping ranges (a K range summed twice) raise."""
    out = []
    for lo, hi in sorted(ranges):
        if out and lo < out[-1][1]:
            raise SimValueError(f"K range [{lo}, {hi}) summed twice (already {out})")
        if out and lo == out[-1][1]:
            out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return tuple(out)
