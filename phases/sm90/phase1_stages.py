"""sm90 phase 1: an NSTAGES cp.async ring (Hopper analog of the worklog's phase 1, 713 -> 824 TFLOP/s).

Compared to phase 0, the double buffer becomes a ring of NSTAGES slots in dynamic smem (1024-B
aligned for the SW128 B atoms), and the two drains leave the critical path:
- loads run NSTAGES-1 tiles ahead: tile t lives in slot t % NSTAGES, the prologue loads tiles
  0..NSTAGES-2, and iteration t waits only for the oldest copy group (``cp.async.wait_group
  NSTAGES-2``), which was issued NSTAGES-1 iterations earlier;
- one wgmma batch stays in flight: after issuing the wgmma of tile t the warpgroup waits with
  ``wgmma.wait_group 1``, i.e. only for the wgmma of tile t-1, and only because its slot,
  (t-1) % NSTAGES = (t+NSTAGES-1) % NSTAGES, is the one refilled next. The tensor pipe always has
  tile t queued while the threads wait, refill, and reach tile t+1 (the reorder the worklog names in
  its section 4.4 but never applied).

A wgmma is issued per warp (``.sync.aligned``), so one warp's ``wait_group 1`` says nothing about the
other three warps' share of the wgmma of tile t-1, which still reads all of B's slot. A block barrier
after the wait makes the retirement warpgroup-wide before any thread overwrites the slot.

Numbers: 16 KB per stage (A 8 KB + B 8 KB): NSTAGES=4 takes 64 KB of dynamic smem (past the 48 KB
static limit). Residency stays 3 CTAs per SM: 227 KB / 64 KB = 3, and 162 registers x 128 threads
also allow 3. The worklog's sweep on B300: NS=2 809, NS=3 801, NS=4 627 TFLOP/s (its residency was
capped by TMEM columns, which Hopper does not have). On the H200 NS=4 measured best: NS=2 is slower
than phase 0 (the refill waits for the previous wgmma, so the copies overlap less), NS=3 close to 4,
NS=5 (80 KB: 2 CTAs per SM) below it; the barrier after ``wait_group 1`` costs ~1%. Measured numbers:
docs/results.md.

Constraints:
- M % BM == 0, N % BN == 0, K % BK == 0 (no predication; phase 2a on takes any shape); one compile
  serves all such shapes (symbolic M, N, K); 16-B aligned rows.
- NSTAGES >= 2; BM a multiple of 64 (wgmma M); BK a multiple of 16 (wgmma K) and BK/8 dividing
  128 copy threads; BN in {64, 128, 256} (SW128 B atoms); BM x BN <= 128 x 128 (accumulator registers).
"""


import dataclasses

import cutlass
import cutlass.cute as cute
from cutlass.cute.nvgpu import warpgroup

from phases.base import GemmPhase, TileConfig
from phases.sm90 import common


@dataclasses.dataclass(frozen=True)
class Phase1Config(TileConfig):
    bm: int = 128
    bn: int = 128
    bk: int = 32
    stages: int = 4  # NSTAGES (H200 sweep: 2 < 3 < 4 > 5)


class Sm90Phase1(GemmPhase):
    """NSTAGES cp.async ring; one wgmma batch in flight, waited only before its slot is refilled."""

    arch = "sm90"
    phase = "1"
    Config = Phase1Config
    summary = "cp.async NSTAGES ring in dynamic smem, one warpgroup, one wgmma batch in flight (wait_group 1)"
    adds = "loads NSTAGES-1 tiles ahead; the wgmma wait moves to just before its slot is refilled"
    worklog = "824 TFLOP/s at 4096^3 (NS=2 809, NS=3 801), ~478 at M=1024 (B300, tcgen05)"
    ragged = False  # whole 16-B cp.async vectors and whole-tile stores: tile multiples only
    general_operands = False  # its copies and MMA are written for the worklog's fp16 A, B and fp32 C

    def can_implement(self, m: int, n: int, k: int) -> list[str]:
        return super().can_implement(m, n, k) + self.config_problems()

    def config_problems(self) -> list[str]:
        why = super().config_problems()
        if why:  # a field below 1: the rules below would divide by it
            return why
        c = self.cfg
        if c.stages < 2:
            why.append(f"stages={c.stages}: the ring needs NSTAGES >= 2")
        if c.bm % common.WGMMA_M:
            why.append(f"BM={c.bm} is not a multiple of the wgmma M ({common.WGMMA_M})")
        if c.bn not in (64, 128, 256):
            why.append(f"BN={c.bn}: needs 64, 128 or 256 (SW128 B atoms of 64 columns, BN/8 dividing 128 threads)")
        if c.bm * c.bn > 128 * common.WARPGROUP_THREADS:
            why.append(f"BM x BN = {c.bm}x{c.bn}: one warpgroup holds BM*BN/128 fp32 accumulators per "
                       f"thread, at most 128 without spilling (phase 3 adds a second consumer warpgroup)")
        if c.bk % 16 or common.WARPGROUP_THREADS % (c.bk // 8):
            why.append(f"BK={c.bk}: needs a multiple of 16 whose 16-B vectors per row divide 128 threads")
        return why + common.ring_problems(c)

    def _setup_attributes(self):
        c = self.cfg
        sA_layout, sB_layout = common.make_smem_layouts(c.bm, c.bn, c.bk, c.stages)
        self.sA_layout, self.sB_layout = sA_layout, sB_layout

        # Dynamic smem: both rings 1024-B aligned, so every slot of each is too (16 KB-multiple strides).
        @cute.struct
        class SharedStorage:
            sA: cute.struct.Align[
                cute.struct.MemRange[cutlass.Float16, cute.cosize(sA_layout)], common.SMEM_ALIGN
            ]
            sB: cute.struct.Align[
                cute.struct.MemRange[cutlass.Float16, cute.cosize(sB_layout)], common.SMEM_ALIGN
            ]

        self.shared_storage = SharedStorage
        self.threads = common.WARPGROUP_THREADS
        self.smem_bytes = SharedStorage.size_in_bytes()
        self.cluster = (1, 1, 1)

    def grid(self, m, n, k):
        return (m // self.cfg.bm, n // self.cfg.bn, 1)  # one CTA per tile (tile multiples only)

    @cute.jit
    def __call__(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream):
        self._setup_attributes()
        c = self.cfg
        tiled_mma = common.make_tiled_mma(c.bn)
        g2s_A = common.make_g2s_copy_a(c.bk)
        g2s_B = common.make_g2s_copy_b(c.bn)
        self.kernel(mA, mB, mC, tiled_mma, g2s_A, g2s_B, self.sA_layout, self.sB_layout).launch(
            grid=self.grid(*self.problem_mnk(mA, mC)), block=[self.threads, 1, 1], smem=self.smem_bytes,
            stream=stream,
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
        NSTAGES = self.cfg.stages
        tidx, _, _ = cute.arch.thread_idx()
        bidx, bidy, _ = cute.arch.block_idx()

        # Dynamic smem, 1024-B aligned: the swizzle lives on the pointer, keyed by address bits.
        storage = cutlass.memory.SmemAllocator().allocate(self.shared_storage, common.SMEM_ALIGN)
        sA = storage.sA.get_tensor(sA_layout.outer, swizzle=sA_layout.inner)  # (BM, BK, NSTAGES)
        sB = storage.sB.get_tensor(sB_layout.outer, swizzle=sB_layout.inner)  # (BN, BK, NSTAGES)

        gA = cute.local_tile(mA, (BM, BK), (bidx, None))  # (BM, BK, k_tiles)
        gB = cute.local_tile(mB, (BN, BK), (bidy, None))  # (BN, BK, k_tiles)

        # cp.async partitions: (CPY, CPY_M|N, CPY_K, k_tiles) in gmem, (CPY, CPY_M|N, CPY_K, slot) in smem
        thr_g2s_A = g2s_A.get_slice(tidx)
        tAgA = thr_g2s_A.partition_S(gA)
        tAsA = thr_g2s_A.partition_D(sA)
        thr_g2s_B = g2s_B.get_slice(tidx)
        tBgB = thr_g2s_B.partition_S(gB)
        tBsB = thr_g2s_B.partition_D(sB)

        # wgmma partitions: smem descriptors per (MMA, MMA_M|N, MMA_K, slot), fp32 accumulators in registers
        thr_mma = tiled_mma.get_slice(tidx)
        tCrA = tiled_mma.make_fragment_A(thr_mma.partition_A(sA))
        tCrB = tiled_mma.make_fragment_B(thr_mma.partition_B(sB))
        acc = cute.make_rmem_tensor(thr_mma.partition_shape_C((BM, BN)), cutlass.Float32)
        acc.fill(0.0)
        tiled_mma.set(warpgroup.Field.ACCUMULATE, True)
        num_k_blocks = cute.size(tCrA, mode=[2])  # BK / 16 wgmma K steps per stage

        k_tiles = cute.size(gA, mode=[2])

        # Prologue: tiles 0..NSTAGES-2 into slots 0..NSTAGES-2, one cp.async group per tile (an empty
        # group past the last tile, so group j stays tile j for any K).
        for t in cutlass.range_constexpr(NSTAGES - 1):
            if t < k_tiles:
                cute.copy(g2s_A, tAgA[None, None, None, t], tAsA[None, None, None, t])
                cute.copy(g2s_B, tBgB[None, None, None, t], tBsB[None, None, None, t])
            cute.arch.cp_async_commit_group()

        for k_tile in cutlass.range(k_tiles, unroll=1):
            slot = k_tile % NSTAGES
            # NSTAGES-1 + k_tile groups are committed and group j holds tile j: leaving NSTAGES-2
            # pending means tile k_tile has landed (this thread's copies). The fence makes them
            # visible to the async proxy wgmma reads through; the barrier, everyone's.
            cute.arch.cp_async_wait_group(NSTAGES - 2)
            cute.arch.fence_proxy("async.shared", space="cta")
            cute.arch.sync_threads()

            warpgroup.fence()  # order earlier accumulator register accesses before the wgmma
            for kb in cutlass.range_constexpr(num_k_blocks):
                cute.gemm(tiled_mma, acc, tCrA[None, None, kb, slot], tCrB[None, None, kb, slot], acc)
            warpgroup.commit_group()
            # Keep tile k_tile's wgmma in flight; wait only for tile k_tile-1's, whose slot is refilled
            # below. The barrier turns each warp's retirement into the warpgroup's.
            warpgroup.wait_group(1)
            cute.arch.sync_threads()

            refill = k_tile + NSTAGES - 1  # lands in slot (k_tile - 1) % NSTAGES
            if refill < k_tiles:
                cute.copy(g2s_A, tAgA[None, None, None, refill], tAsA[None, None, None, refill % NSTAGES])
                cute.copy(g2s_B, tBgB[None, None, None, refill], tBsB[None, None, None, refill % NSTAGES])
            cute.arch.cp_async_commit_group()  # even when empty, so group j stays tile j

        warpgroup.wait_group(0)  # the last wgmma wrote acc
        common.store_acc_to_gmem(tiled_mma, tidx, acc, mC, (BM, BN), bidx, bidy)
