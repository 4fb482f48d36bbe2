"""The contract every phase kernel follows (sm90 and sm100 alike).

A phase is a class with static configuration only (a frozen dataclass, the worklog's defaults) and a
``@cute.jit __call__(mA, mB, mC, stream)`` that builds its atoms and launches. The tensors it receives
are always the same three views of the worklog's problem:

- ``mA``: (M, K) fp16, K contiguous (A row-major, "K-major"), stride (K, 1)
- ``mB``: (N, K) fp16, N contiguous (B row-major [K, N] seen as (N, K), "N-major" / MN-major), stride (1, N)
- ``mC``: (M, N) fp32, N contiguous (C row-major), stride (N, 1)

Nothing here imports ``cute_gemm``: the harness knows a phase only through these attributes.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar


@dataclasses.dataclass(frozen=True)
class TileConfig:
    """Fields every phase has. Phases extend this with their own frozen dataclass."""

    bm: int = 128  # rows of C per CTA
    bn: int = 128  # columns of C per CTA
    bk: int = 32  # K per pipeline stage
    stages: int = 2  # smem stages (the worklog's NSTAGES)
    cluster_m: int = 1  # CTAs per cluster along M

    def tile_m(self) -> int:
        """Rows of C one cluster covers (the divisibility unit for M)."""
        return self.bm * self.cluster_m


class GemmPhase:
    """Base class of every phase kernel.

    Subclasses set the class attributes and implement ``__call__`` as a ``@cute.jit`` method.
    ``can_implement`` returns the list of reasons a problem cannot run (empty = it can).
    """

    arch: ClassVar[str]  # "sm90" or "sm100"
    phase: ClassVar[str]  # "0", "1", "2a", "2b", "3", "4", "5", "6"
    Config: ClassVar[type] = TileConfig
    summary: ClassVar[str] = ""  # one line: what this kernel is
    adds: ClassVar[str] = ""  # one line: what it adds over the previous phase
    worklog: ClassVar[str] = ""  # the worklog's number for this phase (B300), or "" if none

    def __init__(self, config: TileConfig | None = None):
        self.cfg = config if config is not None else self.Config()

    def can_implement(self, m: int, n: int, k: int) -> list[str]:
        """Reasons this kernel cannot compute an (m, n, k) problem; [] if it can."""
        c = self.cfg
        why = []
        if m % c.tile_m():
            why.append(f"M={m} is not a multiple of {c.tile_m()} (BM={c.bm} x cluster {c.cluster_m})")
        if n % c.bn:
            why.append(f"N={n} is not a multiple of BN={c.bn}")
        if k % c.bk:
            why.append(f"K={k} is not a multiple of BK={c.bk}")
        if k < c.bk * max(1, c.stages - 1):
            why.append(f"K={k} is shorter than the pipeline prologue ({c.stages - 1} stages of BK={c.bk})")
        return why
