"""sm100 phase 10: swap-AB for few tokens -- C^T = B^T A^T, the weights fill the MMA's 128 rows (beyond the worklog).

Compared to phase 9 (128 x 128 tiles of C, split-K in a cluster), the kernel computes C^T = B^T A^T:
B^T (N, K) is its A, A (M, K) its B and C^T (N, M) its C. Nothing in the kernel changes -- the swap is
a relabelling of the three views in the compile face (``swap_ab``), and phase 9's kernel already takes
an M-major A (a row-major B seen as B^T), a K-major B (a row-major A) and a column-major C (its reduce
stores along C's contiguous mode, which for C^T is N). What changes is the tile: 128 weight rows
(``m128nBNk16``, rows = TMEM lanes) by ``bn`` tokens, bn = 16..256 in steps of 16:
1. the long N (the weight rows) becomes the grid, N/128 tiles, instead of M/128 = one row of tiles at
   M <= 128: 16 tokens x N=4096 is 32 tiles whose MMAs do no padded work (m128n16k16), where the
   unswapped m128n128k16 would compute 112 rows of zeros (TMA zero-fills what is past M);
2. the accumulator is bn fp32 columns of TMEM (32 at bn=16), and the weights stream through a deep ring
   (bk=128: 5 stages of (128 + bn) x 128 x 2 B = 180 KiB in flight per SM at bn=16): at M << N, K the
   problem is memory-bound (about M FLOP per byte), so what sets the time is the bytes each SM keeps in
   flight, and phase 9's split-K fills the SMs that N/128 tiles leave idle;
3. programmatic dependent launch (``use_pdl``): a launch may start while the previous kernel of the stream
   drains; its prologue (barrier init, TMEM allocation, tensor-map prefetch) overlaps that tail and
   ``griddepcontrol.wait`` holds every thread before its first global access.
Why: a decode step multiplies a few tokens by every weight: 16 x 4096 x 4096 moves 32 MiB of weights for
0.5 GFLOP; data-parallel 128-row tiles of C leave most SMs idle with each busy one walking all of K.
Nothing here is measured: no Blackwell GPU in this workplace.

Constraints: phase 9's, in swapped coordinates: any M (the tokens: TMA zero-fills what is past M); N and
K as the operands' contiguous extents need (16-B rows); C row-major (stored as C^T, column-major);
bn a multiple of 16 (an M=128 MMA's N; a tile of 8 tokens would need an M=64 MMA, whose accumulator is
not the one row per TMEM lane this epilogue drains); the bn token lines of a tile divide by split_k.
"""

import dataclasses

from phases.sm100.phase9_split_k import Sm100Phase9, Sm100Phase9Config


@dataclasses.dataclass(frozen=True)
class Sm100Phase10Config(Sm100Phase9Config):
    """Phase 9's fields; the tile is (128 weight rows) x (bn tokens) of C^T."""

    bn: int = 16  # tokens (C's rows) per CTA: the MMA's N
    bk: int = 128  # 128 x 128 x 2 B = 32 KiB of weights per stage
    stages: int = 5  # 5 x 36 KiB = 180 KiB in flight per SM
    split_k: int = 2
    use_pdl: bool = True  # programmatic dependent launch


class Sm100Phase10(Sm100Phase9):
    """Phase 9 on C^T = B^T A^T: 128 weight rows x a few tokens per tile, split-K, a deep ring, PDL."""

    phase = "10"
    Config = Sm100Phase10Config
    summary = "swap-AB: C^T = B^T A^T, 128 weight rows x bn tokens per tile, split-K in a cluster, deep TMA ring"
    adds = "swap-AB for few tokens: the weights fill the MMA's 128 rows, the tokens become its N; PDL"
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

    def tiles(self, m, n, k):
        """C^T tiles of the problem (before the split)."""
        return super().tiles(n, m, k)
