"""What the simulated GEMM moves around instead of numbers: where each value came from.

A and B elements are tags naming their global coordinates; the accumulator holds, per element, which
(row, column) it is and which K range it has summed. A wrong coordinate, a stale stage, a missed
k-tile or a value stored to the wrong place then shows up by name in the final check, not as a
rounding difference.
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
