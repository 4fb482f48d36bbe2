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
    ``m`` / ``n`` None: rows or columns the MMA read as zero-filled padding only."""

    m: int | None
    n: int | None
    ks: tuple

    def __add__(self, other):
        if not isinstance(other, Acc):
            return NotImplemented
        if (self.m, self.n) != (other.m, other.n):
            raise SimValueError(f"adds C{(self.m, self.n)} to C{(other.m, other.n)}")
        return Acc(self.m, self.n, merge_ranges(self.ks + other.ks))


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
