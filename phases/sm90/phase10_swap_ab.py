"""sm90 phase 10: swap-AB for few tokens -- C^T = B^T A^T, the weights fill the MMA's 64 rows (beyond the worklog).

Compared to phase 9 (128x128 tiles of C, split-K where the grid is starved), the kernel computes
C^T = B^T A^T: B^T (N, K) is its A, A (M, K) its B and C^T (N, M) its C. Nothing in the kernel
changes -- the swap is a relabelling of the three views in the compile face (``swap_ab``), and
phase 9's kernel already takes an MN-major A (a row-major B seen as B^T), a K-major B (a row-major A)
and a column-major C (its reduce stores along C's contiguous mode, which for C^T is N). What changes
is the tile: 64 weight rows (``m64nNk16``, one consumer warpgroup; 128 or 192 with two or three, 256 with two of
128 rows each) by ``bn`` tokens, N = 8..256:
1. the long N (4096..28672 weight rows) becomes the grid, N/64 tiles, instead of M/128 = one row of
   tiles at M <= 128: a 16-token problem with N=4096 has 64 tiles instead of 32 128-row tiles of
   which 7/8 of every row is zero padding;
2. the MMA does no padded work: m64n16k16 for 16 tokens where the unswapped m64n128k16 would compute
   128 - 16 rows of zeros (TMA zero-fills A's rows past M);
3. the weights stream once through a deep ring (bk=128, 8 stages = 160 KiB in flight per SM): at
   M << N, K the problem is memory-bound (arithmetic intensity ~ M FLOP/byte), so what sets the time is
   how many bytes each SM keeps in flight, and phase 9's split-K fills the SMs N/64 tiles leave idle;
4. programmatic dependent launch (``use_pdl``): a launch may start while the previous kernel of the
   stream drains; its prologue (barrier init, tensor-map prefetch) overlaps that tail and
   ``griddepcontrol.wait`` holds every thread before the first global access;
5. the weights' TMA loads may carry an L2 evict-first policy (``evict_first_a``): with every token in one
   tile each weight line is read once, and L2 evicts those lines before the tokens, which every weight tile
   reads again.

Why: a decode step multiplies a few tokens by every weight: 16x4096x4096 moves 32 MiB of weights for
0.5 GFLOP. Data-parallel 128-row tiles leave 100 of 132 SMs idle and each busy SM walks all of K
alone, so the time is one CTA's k-loop, flat in M; the swap plus split-K spreads the weights over
every SM and the time becomes bytes / bandwidth.

Numbers: 64 x bn tile, one consumer warpgroup (+ the producer warpgroup), a stage is (64 + bn) x 128 x
2 B (20 KiB at bn=16); the fp32 partial tile (bn x 68 x 4 B) overlays the ring. ``phase="best"`` picks
bn (the tokens rounded up to 8: padded token rows are wgmma work -- 144 tokens in 144 rather than 160 ran 394.7
against 369.7 TFLOP/s at 144x9216x3584, 184 in 184 rather than 192 55.6 against 59.8 us at 184x10240x8192; past
64 tokens also the multiple of 32 the multicast over 4 can slice), split_k and ctas_per_sm per shape,
and for token tiles of 128 or more ``cluster_m`` (phase 9's multicast of the token tile over 2 or 4 weight
tiles: each CTA loads 1/cluster_m of it; 128x14336x4096 35.7 us for phase 9's 128x128 -> 32.3-33.0, 91-93% of the copy bandwidth; 200x11000x3000
38.8 -> 30.6). Where 128-row weight tiles leave the grid short at 120-250 tokens, 192 rows (three consumer
warpgroups, 512 threads) make other tile counts: 208x6144x8192 in 32 x 2 x 2 CTAs of 192 x 112 ran 40.2 us
against 42.6 for the best 128-row tile (cuBLASLt 37.4), 240x5120x13824 60.1 against 68.4; and a 3-way split
(clusters of 3, 39 fit) fills 108 SMs at 232x4608x9216: 36.7 us against 45.8 (cuBLAS 38.8).

Past 256 tokens (the tokens in 2-4 tiles) two more shapes of the same kernel: 256 weight rows in two warpgroups of 128
(cuBLAS's "256 x 128" arrangement), token tiles of at most 144 -- 288x14336x4096 in 2 x 56 tiles of 256 x 144 ran 56.1 us
against 78.7 for phase 9's 128 x 192 (cuBLAS 58.1); and the tokens' two halves in any of the weight-tile heights,
which the 129-256-token tiles already take -- 267x2048x4096 in 64 x 136 tiles split 2 ran 13.1 us against phase 7's 25.8
(cuBLAS 13.3), 298x14336x4096 in 128 x 152 tiles 62.8 against 73.1 for the 256-row tiles; and the tokens in three tiles
(cuBLAS's nvjet 64 x 88 and 128 x 152 there) -- 434x5120x6144 in 3 x 40 tiles of 128 x 152 ran 42.8 us against phase 8's
49.1 (cuBLAS 42.1) (H200, 2026-12-04).

A token tile of 8 x an odd number (24, 40, ..., 88, 104, ..., 248) is phase 9's ``box_n``: the DSL 4.8.1 compiler
aborts building a TMA box of such a height, so the box and the ring's stage hold 8 token rows more (the next tile's,
or TMA's zeros past M) and the wgmma reads the first ``bn``. At 241-256 tokens ``best`` takes three 88-token tiles
of 128 weight rows (cuBLAS's arrangement there), over clusters of 4 where the weight tiles fill whole clusters:
256x4608x2048 11.6 us against 13.5 for two 128-token tiles (cuBLAS 12.1), 256x5120x4096 21.0 / 25.0; elsewhere
unicast, up to K = 2048 (255x4864x2048 12.7 against 13.5).

Constraints: phase 9's, in swapped coordinates: any M (the tokens: TMA zero-fills what is past M),
N and K as the layout needs (16-B rows); C row-major (stored as C^T column-major).

The evict-first policy, on the H200 (2026-12-03, cold L2, interleaved rounds, each pick with and without it
in one run): faster where a tile of 128 or 192 weight rows holds every token -- 160x9728x4096 28.5 against
29.8 us, 200x11000x3000 30.0 / 30.9, 128x14336x4096 32.3 / 33.1 (2.1-2.5% in two more runs), 120x6144x16384
60.0 / 61.1 (4% in two more runs), 16x14336x4096 28.5 / 29.1; slower where the tokens fill two tiles, which
read each weight line twice (192x5120x27648 116.1 / 111.6), and mixed with 64-row tiles (0.5-2% faster at
4096 and 8192 weight rows, 1-4% slower in three of four runs at 128x4096x14336). So ``best`` turns it on for
weight tiles of 128 or more rows holding every token, and the default is off. Asking L2 to keep the tokens
(evict-last) changed nothing, and prefetching k-tiles past the ring into L2 (``cp.async.bulk.prefetch.tensor``)
ran 1.1-1.6x slower at every shape tried.
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
