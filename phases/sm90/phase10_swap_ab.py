"""sm90 phase 10: swap-AB for few tokens -- C^T = B^T A^T, the weights fill the MMA's 64 rows (beyond the worklog).

Compared to phase 9 (128x128 tiles of C, split-K where the grid is starved), the kernel computes
C^T = B^T A^T: B^T (N, K) is its A, A (M, K) its B and C^T (N, M) its C. Nothing in the kernel
changes -- the swap is a relabelling of the three views in the compile face (``swap_ab``), and
phase 9's kernel already takes an MN-major A (a row-major B seen as B^T), a K-major B (a row-major A)
and a column-major C (its reduce stores along C's contiguous mode, which for C^T is N). What changes
is the tile: 64 weight rows (``m64nNk16``, one consumer warpgroup; 128 or 192 with two or three, 256 with two of
128 rows each) by ``bn`` tokens, N = 8..256:
1. the long N (4096..28672 weight rows) becomes the grid, N/64 tiles, not one row of mostly padded M/128 tiles;
2. the MMA does no padded work: m64n16k16 for 16 tokens where the unswapped m64n128k16 would compute
   128 - 16 rows of zeros (TMA zero-fills A's rows past M);
3. the weights stream once through a deep ring (bk=128, 8 stages = 160 KiB in flight per SM): at
   M << N, K the problem is memory-bound, so what sets the time is how many bytes each SM keeps in
   flight, and phase 9's split-K fills the SMs N/64 tiles leave idle;
4. programmatic dependent launch (``use_pdl``): a launch's prologue overlaps the previous kernel's tail,
   and ``griddepcontrol.wait`` holds every thread before the first global access;
5. the weights' TMA loads may carry an L2 evict-first policy (``evict_first_a``): with every token in one
   tile each weight line is read once, and L2 evicts those lines before the tokens, read by every weight tile.

Why: a decode step multiplies a few tokens by every weight: 16x4096x4096 moves 32 MiB of weights for
0.5 GFLOP. Data-parallel 128-row tiles leave 100 of 132 SMs idle and each busy SM walks all of K
alone, so the time is one CTA's k-loop, flat in M; the swap plus split-K spreads the weights over
every SM and the time becomes bytes / bandwidth (how close it comes: docs/results.md).

How ``phase="best"`` configures it per shape (the measurements: docs/best.md, docs/lessons.md): bn = the tokens
rounded up to 8 (padded token rows are wgmma work), split_k, ctas_per_sm; for token tiles of 128 or more
``cluster_m`` (phase 9's multicast of the token tile over 2 or 4 weight tiles); 192 weight rows or a 3-way split
where 128-row tiles leave the grid short; past 256 tokens 256 weight rows (token tiles of at most 144) or the
tokens in two or three tiles; evict-first where a tile of 128 or more weight rows holds every token (default off).
A token tile of 8 x an odd number (24, 40, ..., 248) is phase 9's ``box_n``: the DSL 4.8.1 compiler aborts
building a TMA box of such a height, so the box and the ring's stage hold 8 token rows more (the next tile's,
or TMA's zeros past M) and the wgmma reads the first ``bn``.

Numbers: 64 x bn tile, one consumer warpgroup (+ the producer warpgroup), a stage is (64 + bn) x 128 x
2 B (20 KiB at bn=16); the fp32 partial tile (bn x 68 x 4 B) overlays the ring.

Constraints: phase 9's, in swapped coordinates: any M (the tokens: TMA zero-fills what is past M),
N and K as the layout needs (16-B rows); C row-major (stored as C^T column-major).
"""

import dataclasses

from phases.sm90.phase9_split_k import Sm90Phase9, Sm90Phase9Config


@dataclasses.dataclass(frozen=True)
class Sm90Phase10Config(Sm90Phase9Config):
    """Phase 9's fields; the tile is (bm weight rows) x (bn tokens) of C^T."""

    bm: int = 64  # weight rows (C's columns) per CTA: one m64 wgmma per consumer warpgroup (64, 128, 192), or 256
    bn: int = 16  # tokens (C's rows) per CTA: the MMA's N
    bk: int = 128  # 64 x 128 x 2 B = 16 KiB of weights per stage
    stages: int = 8  # 8 x 20 KiB = 160 KiB in flight per SM
    split_k: int = 2
    ctas_per_sm: int = 1
    use_pdl: bool = True  # programmatic dependent launch
    evict_first_a: bool = False  # the weights' (the kernel's A) lines evicted from L2 first (``best`` sets it; below)


class Sm90Phase10(Sm90Phase9):
    """Phase 9 on C^T = B^T A^T: 64-256 weight rows x a few tokens per tile, split-K, a deep ring."""

    phase = "10"
    Config = Sm90Phase10Config
    summary = "swap-AB: C^T = B^T A^T, 64-256 weight rows x bn tokens per tile, split-K in a cluster, deep TMA ring"
    adds = "swap-AB for few tokens: the weights fill the MMA's 64 rows, the tokens become its N; PDL"
    worklog = ""
    parent = "9"
    swap_ab = True  # the compile face passes (B^T, A, C^T): the kernel's M is the problem's N

    @staticmethod
    def problem_mnk(mA, mC):
        """(M, N, K) of the problem from the kernel's tensors B^T (N, K) and C^T (N, M)."""
        return mC.shape[1], mC.shape[0], mA.shape[1]

    def grid(self, m, n, k):
        """CTAs for an (m, n, k) problem: phase 9's grid of the swapped problem (n, m, k)."""
        return super().grid(n, m, k)

    def tiles(self, m, n, k) -> int:
        """C^T tiles of the problem (before the split)."""
        return super().tiles(n, m, k)
