"""sm90 phase 0: the serialized baseline (Hopper analog of the worklog's phase 0, 713 TFLOP/s on B300).

Two static smem stages, one warpgroup (128 threads). All 128 threads copy the next BM x BK tile of A
and BK x BN tile of B with 16-byte ``cp.async.cg`` straight into the swizzled layouts wgmma reads
(A K-major SW64, B N-major SW128); the warpgroup issues the wgmma for the current stage (m64n128k16,
two along M and two along K per BK=32), commits it and waits for it (``wait_group 0``), then waits for
its copies, then everyone meets at a block barrier. Nothing overlaps except the next tile's copies
with the current MMAs.

Numbers: A stage 128x32x2 = 8 KB, B stage 32x128x2 = 8 KB, 32 KB for both stages (static smem, under
the 48 KB static limit). One k-block moves 16 KB for 2*128*128*32 = 1 MFLOP (1/64 B per FLOP); at the
H200's ~4096 dense fp16 FLOP per SM-cycle that is ~256 cycles of tensor work per k-block, which the
per-iteration round trip (issue, wgmma drain, cp.async drain, barrier) dwarfs. 128 fp32 accumulator
registers per thread (162 in all: 3 CTAs per SM). Measured numbers: docs/results.md.

Unlike the worklog's phases 0-1, the cp.async writes (generic proxy) are ordered before the wgmma
reads (async proxy) with ``fence.proxy.async.shared::cta``: correct by guarantee, not by timing.

Constraints:
- M % BM == 0, N % BN == 0, K % BK == 0 (no predication; phase 2a on takes any shape); one compile
  serves all such shapes (symbolic M, N, K); A, B, C 16-B aligned rows.
- Exactly 2 stages; BM a multiple of 64 (wgmma M); BK a multiple of 16 (wgmma K) and BK/8 dividing
  128 copy threads; BN in {64, 128, 256} (SW128 B atoms); BM x BN <= 128 x 128 (accumulator registers).
"""

from __future__ import annotations

import dataclasses

import cutlass
import cutlass.cute as cute
from cutlass.cute.nvgpu import warpgroup

from phases.base import GemmPhase, TileConfig
from phases.sm90 import common


@dataclasses.dataclass(frozen=True)
class Phase0Config(TileConfig):
    bm: int = 128
    bn: int = 128
    bk: int = 32
    stages: int = 2  # fixed: the double buffer


class Sm90Phase0(GemmPhase):
    """cp.async double buffer into wgmma layouts; every k-block waits for its wgmma, its copies, a barrier."""

    arch = "sm90"
    phase = "0"
    Config = Phase0Config
    summary = "cp.async 2-stage double buffer, one warpgroup, wgmma waited (wait_group 0) every k-block"
    adds = "baseline: cp.async 16 B into swizzled smem, wgmma m64n128k16 x2, register epilogue"
    worklog = "713 TFLOP/s at 4096^3, 460 at M=1024 (B300, tcgen05)"
    ragged = False  # whole 16-B cp.async vectors and whole-tile stores: tile multiples only
    general_operands = False  # its copies and MMA are written for the worklog's fp16 A, B and fp32 C

    def can_implement(self, m: int, n: int, k: int) -> list[str]:
        return super().can_implement(m, n, k) + self.config_problems()

    def config_problems(self) -> list[str]:
        why = super().config_problems()
        if why:  # a field below 1: the rules below would divide by it
            return why
        c = self.cfg
        if c.stages != 2:
            why.append(f"stages={c.stages}: phase 0 is a fixed double buffer (2); phase 1 takes NSTAGES")
        if c.bm % common.WGMMA_M:
            why.append(f"BM={c.bm} is not a multiple of the wgmma M ({common.WGMMA_M})")
        if c.bn not in (64, 128, 256):
            why.append(f"BN={c.bn}: needs 64, 128 or 256 (SW128 B atoms of 64 columns, BN/8 dividing 128 threads)")
        if c.bm * c.bn > 128 * common.WARPGROUP_THREADS:
            why.append(f"BM x BN = {c.bm}x{c.bn}: one warpgroup holds BM*BN/128 fp32 accumulators per "
                       f"thread, at most 128 without spilling (phase 3 adds a second consumer warpgroup)")
        if c.bk % 16 or common.WARPGROUP_THREADS % (c.bk // 8):
            why.append(f"BK={c.bk}: needs a multiple of 16 whose 16-B vectors per row divide 128 threads")
        return why

    def _setup_attributes(self):
        self.threads = common.WARPGROUP_THREADS
        self.smem_bytes = 0  # both stages are static smem (32 KB at the defaults)
        self.cluster = (1, 1, 1)

    def grid(self, m, n, k):
        return (m // self.cfg.bm, n // self.cfg.bn, 1)  # one CTA per tile (tile multiples only)

    @cute.jit
    def __call__(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream):
        self._setup_attributes()
        c = self.cfg
        tiled_mma = common.make_tiled_mma(c.bn)
        sA_layout, sB_layout = common.make_smem_layouts(c.bm, c.bn, c.bk, 2)
        g2s_A = common.make_g2s_copy_a(c.bk)
        g2s_B = common.make_g2s_copy_b(c.bn)

        self.kernel(mA, mB, mC, tiled_mma, g2s_A, g2s_B, sA_layout, sB_layout).launch(
            grid=self.grid(*self.problem_mnk(mA, mC)), block=[self.threads, 1, 1], stream=stream
        )

    @cute.kernel
    def kernel(
        self,
        mA: cute.Tensor,
        mB: cute.Tensor,
        mC: cute.Tensor,
        tiled_mma: cute.TiledMma,
        g2s_A: cute.TiledCopy,
        g2s_B: cute.TiledCopy,
        sA_layout: cute.ComposedLayout,
        sB_layout: cute.ComposedLayout,
    ):
        BM, BN, BK = self.cfg.bm, self.cfg.bn, self.cfg.bk
        tidx, _, _ = cute.arch.thread_idx()
        bidx, bidy, _ = cute.arch.block_idx()

        # Static smem, 1024-B aligned: the swizzle lives on the pointer, keyed by address bits.
        sA_ptr = cute.arch.alloc_smem(cutlass.Float16, cute.cosize(sA_layout.outer), common.SMEM_ALIGN)
        sB_ptr = cute.arch.alloc_smem(cutlass.Float16, cute.cosize(sB_layout.outer), common.SMEM_ALIGN)
        sA = cute.make_tensor(cute.recast_ptr(sA_ptr, sA_layout.inner), sA_layout.outer)  # (BM, BK, 2)
        sB = cute.make_tensor(cute.recast_ptr(sB_ptr, sB_layout.inner), sB_layout.outer)  # (BN, BK, 2)

        gA = cute.local_tile(mA, (BM, BK), (bidx, None))  # (BM, BK, k_tiles)
        gB = cute.local_tile(mB, (BN, BK), (bidy, None))  # (BN, BK, k_tiles)

        # cp.async partitions: (CPY, CPY_M|N, CPY_K, k_tiles) in gmem, (CPY, CPY_M|N, CPY_K, stage) in smem
        thr_g2s_A = g2s_A.get_slice(tidx)
        tAgA = thr_g2s_A.partition_S(gA)
        tAsA = thr_g2s_A.partition_D(sA)
        thr_g2s_B = g2s_B.get_slice(tidx)
        tBgB = thr_g2s_B.partition_S(gB)
        tBsB = thr_g2s_B.partition_D(sB)

        # wgmma partitions: smem descriptors per (MMA, MMA_M|N, MMA_K, stage), fp32 accumulators in registers
        thr_mma = tiled_mma.get_slice(tidx)
        tCrA = tiled_mma.make_fragment_A(thr_mma.partition_A(sA))
        tCrB = tiled_mma.make_fragment_B(thr_mma.partition_B(sB))
        acc = cute.make_rmem_tensor(thr_mma.partition_shape_C((BM, BN)), cutlass.Float32)
        acc.fill(0.0)
        tiled_mma.set(warpgroup.Field.ACCUMULATE, True)
        num_k_blocks = cute.size(tCrA, mode=[2])  # BK / 16 wgmma K steps per stage

        k_tiles = cute.size(gA, mode=[2])

        # Prologue: tile 0 into stage 0, landed, visible to the async proxy, and seen by everyone.
        cute.copy(g2s_A, tAgA[None, None, None, 0], tAsA[None, None, None, 0])
        cute.copy(g2s_B, tBgB[None, None, None, 0], tBsB[None, None, None, 0])
        cute.arch.cp_async_commit_group()
        cute.arch.cp_async_wait_group(0)
        cute.arch.fence_proxy("async.shared", space="cta")
        cute.arch.sync_threads()

        for k_tile in cutlass.range(k_tiles, unroll=1):
            stage = k_tile % 2
            # The other stage was last read by the previous wgmma, which finished before the barrier.
            if k_tile + 1 < k_tiles:
                cute.copy(g2s_A, tAgA[None, None, None, k_tile + 1], tAsA[None, None, None, 1 - stage])
                cute.copy(g2s_B, tBgB[None, None, None, k_tile + 1], tBsB[None, None, None, 1 - stage])
            cute.arch.cp_async_commit_group()

            warpgroup.fence()  # order earlier accumulator register accesses before the wgmma
            for kb in cutlass.range_constexpr(num_k_blocks):
                cute.gemm(tiled_mma, acc, tCrA[None, None, kb, stage], tCrB[None, None, kb, stage], acc)
            warpgroup.commit_group()
            warpgroup.wait_group(0)  # serialized: this k-block's wgmma drains before anything else

            # Next tile landed (this thread's copies), then made visible to the async proxy (wgmma
            # reads smem through it, cp.async wrote through the generic proxy), then everyone's.
            cute.arch.cp_async_wait_group(0)
            cute.arch.fence_proxy("async.shared", space="cta")
            cute.arch.sync_threads()

        common.store_acc_to_gmem(tiled_mma, tidx, acc, mC, (BM, BN), bidx, bidy)
