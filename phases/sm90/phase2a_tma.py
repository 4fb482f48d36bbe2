"""sm90 phase 2a: TMA loads into an mbarrier pipeline (Hopper analog of the worklog's phase 2, first half).

Compared to phase 1 (an NSTAGES ring filled by 128 threads' 16-B cp.async), one thread now fills a
stage with two ``cp.async.bulk.tensor`` loads (one box of A, one of B), and the stage's *full* mbarrier
completes when the TMA unit has written all its bytes (``expect_tx``). The ring becomes the DSL's
``PipelineTmaAsync``: per stage a full barrier (producer -> consumers) and an *empty* barrier
(each of the 4 consumer warps arrives once it no longer reads the stage -> producer may refill it).
The same 128 threads still do everything: warp 0 refills the slot the previous wgmma batch just
released, right after ``wait_group(1)`` proved that batch done, so one batch stays in flight.

Worklog (B300, tcgen05): 824 -> 959 TFLOP/s at 4096^3 (TMA, NS=3).

Numbers: BM=BN=128, BK=64 -> a stage is 16 KiB of A + 16 KiB of B = 32 KiB; 4 wgmma k16-steps x 2
m64n128k16 (the warpgroup walks BM=128 in two 64-row halves) = 8 wgmma = 512 tensor-core cycles per
stage on one SM (4096 dense fp16 FLOP/clk/SM: 989 TFLOP/s = 132 SMs x 1.83 GHz), i.e. 64 B of L2
traffic per cycle, 1/64 B per FLOP.
BK=64 rather than the worklog's 32: a 64-element fp16 K-row is exactly one 128-B swizzle span, so A
gets the SW128 atom (wgmma's conflict-free read pattern, one full-width TMA box row), and each stage
carries twice the MMA work per full/empty barrier round trip. TMA computes the swizzled addresses
itself: no software swizzle, no per-thread address math.
NSTAGES=3, the worklog's choice for this step: 96 KiB + barriers, so two CTAs share an SM (2 x 97 KiB
of 228 KiB; 154 registers x 128 threads) and one CTA's pipeline fill and epilogue overlap the other's
mainloop. On the H200 that beat NS=4 (one CTA per SM, ~10% slower) and NS=6. Measured numbers:
docs/results.md.

Any shape: the tile counts are runtime values (one compile serves every M, N, K); a box that sticks
out of A or B is zero-filled by the TMA (a partial last k-tile adds zeros), and the epilogue stores a
partial tile of C element by element, predicated on the coordinates (whole tiles keep vector stores).

Constraints:
- N % 8 == 0 and K % 8 == 0 (16-B rows for the TMA descriptors); any M >= 1.
- A K-major, B N-major (MN-major wgmma operand), C fp32 row-major, 16-B aligned rows.
"""


import dataclasses

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
from cutlass.cute.nvgpu import cpasync, warpgroup

from phases import operands
from phases.base import GemmPhase
from phases.raster import ceil_div, grouped_tile_coord
from phases.sm90 import common
from phases.sm90 import common_tma as ct


@dataclasses.dataclass(frozen=True)
class Sm90Phase2aConfig(ct.TmaConfig):
    bm: int = 128
    bn: int = 128
    bk: int = 64
    stages: int = 3  # the worklog's NS=3; 96 KiB lets two CTAs share an SM


class Sm90Phase2a(GemmPhase):
    """TMA loads + PipelineTmaAsync full/empty barriers, one warpgroup, one wgmma batch in flight."""

    arch = "sm90"
    phase = "2a"
    Config = Sm90Phase2aConfig
    summary = "TMA loads (cp.async.bulk.tensor) into an NSTAGES mbarrier ring; 1 warpgroup, 128x128x64"
    adds = "TMA replaces cp.async: one thread loads a stage, full/empty mbarriers track it"
    worklog = "959 (TMA, NS=3)"

    consumer_warpgroups = 1

    def config_problems(self) -> list[str]:
        """``_setup_attributes``'s rules, from the config alone (``common.tile_problems``)."""
        return super().config_problems() or common.tile_problems(self.cfg, common.WGMMA_M * self.consumer_warpgroups)

    def _setup_attributes(self):
        cfg = self.cfg
        self.sA_layout, self.sB_layout = common.make_smem_layouts(cfg.bm, cfg.bn, cfg.bk, cfg.stages, self.types)
        self.shared_storage = ct.make_shared_storage(cfg.stages, self.sA_layout, self.sB_layout, self.types.ab)
        self.smem_bytes = self.shared_storage.size_in_bytes()
        self.threads = common.WARPGROUP_THREADS * self.consumer_warpgroups
        self.cluster = (1, 1, 1)

    def grid(self, m, n, k):
        return (ceil_div(m, self.cfg.bm) * ceil_div(n, self.cfg.bn), 1, 1)  # one CTA per tile, 1-D for the raster

    @cute.jit
    def __call__(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream):
        self.types = operands.read(mA, mB, mC)  # element types and majors, as given
        self._setup_attributes()
        cfg = self.cfg
        tiled_mma = common.make_tiled_mma(cfg.bn, self.consumer_warpgroups, self.types)
        tma_atom_a, tma_a = ct.make_tma_load(mA, self.sA_layout, (cfg.bm, cfg.bk))
        tma_atom_b, tma_b = ct.make_tma_load(mB, self.sB_layout, (cfg.bn, cfg.bk))

        self.kernel(tma_atom_a, tma_a, tma_atom_b, tma_b, mC, tiled_mma, self.sA_layout, self.sB_layout).launch(
            grid=self.grid(*self.problem_mnk(mA, mC)),
            block=[self.threads, 1, 1],
            smem=self.smem_bytes,
            stream=stream,
        )

    @cute.kernel
    def kernel(
        self,
        tma_atom_a: cute.CopyAtom,
        mA: cute.Tensor,
        tma_atom_b: cute.CopyAtom,
        mB: cute.Tensor,
        mC: cute.Tensor,
        tiled_mma: cute.TiledMma,
        sA_layout: cute.ComposedLayout,
        sB_layout: cute.ComposedLayout,
    ):
        cfg = self.cfg
        BM, BN, BK, NSTAGES = cfg.bm, cfg.bn, cfg.bk, cfg.stages
        tidx, _, _ = cute.arch.thread_idx()
        warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        bidx, _, _ = cute.arch.block_idx()
        if warp_idx == 0:
            cpasync.prefetch_descriptor(tma_atom_a)
            cpasync.prefetch_descriptor(tma_atom_b)

        tiles_m, tiles_n = ceil_div(mC.shape[0], BM), ceil_div(mC.shape[1], BN)  # a partial last tile counts
        m_tile, n_tile = grouped_tile_coord(bidx, tiles_m, tiles_n, cfg.group_m)

        # ---- smem: barriers + A/B rings ----
        smem = cutlass.memory.SmemAllocator()
        storage = smem.allocate(self.shared_storage)
        sA = storage.sA.get_tensor(sA_layout.outer, swizzle=sA_layout.inner)  # (BM, BK, NSTAGES)
        sB = storage.sB.get_tensor(sB_layout.outer, swizzle=sB_layout.inner)  # (BN, BK, NSTAGES)

        # full: 1 arrival (the producer's arrive.expect_tx) + the stage's TMA bytes.
        # empty: one arrival per consumer warp (lane 0 of each), after its wgmma reading the stage is done.
        ab_pipeline = pipeline.PipelineTmaAsync.create(
            barrier_storage=storage.full_empty.data_ptr(),
            num_stages=NSTAGES,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            consumer_group=pipeline.CooperativeGroup(
                pipeline.Agent.Thread, self.consumer_warpgroups * common.WARPS_PER_WARPGROUP
            ),
            tx_count=cfg.stage_bytes(),
            cta_layout_vmnk=cute.make_layout((1, 1, 1, 1)),
        )

        # ---- this CTA's tiles and their TMA / MMA partitions ----
        gA = cute.local_tile(mA, (BM, BK), (m_tile, None))  # (BM, BK, k_tiles)
        gB = cute.local_tile(mB, (BN, BK), (n_tile, None))  # (BN, BK, k_tiles)
        # one CTA, no multicast: the TMA partition is the whole box
        tAsA, tAgA = cpasync.tma_partition(
            tma_atom_a, 0, cute.make_layout(1), cute.group_modes(sA, 0, 2), cute.group_modes(gA, 0, 2)
        )
        tBsB, tBgB = cpasync.tma_partition(
            tma_atom_b, 0, cute.make_layout(1), cute.group_modes(sB, 0, 2), cute.group_modes(gB, 0, 2)
        )
        k_tiles = cute.size(gA, mode=[2])

        thr_mma = tiled_mma.get_slice(tidx)
        tCrA = tiled_mma.make_fragment_A(thr_mma.partition_A(sA))  # smem descriptors, (MMA, MMA_M, MMA_K, NSTAGES)
        tCrB = tiled_mma.make_fragment_B(thr_mma.partition_B(sB))
        acc = cute.make_rmem_tensor(thr_mma.partition_shape_C((BM, BN)), cutlass.Float32)
        acc.fill(0.0)
        tiled_mma.set(warpgroup.Field.ACCUMULATE, True)
        num_k_blocks = cute.size(tCrA, mode=[2])  # BK / 16

        # ---- prologue: the producer fills the whole ring ----
        prod_state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, NSTAGES)
        if warp_idx == 0:
            for _ in cutlass.range(cutlass.min(NSTAGES, k_tiles), unroll=1):
                ab_pipeline.producer_acquire(prod_state)  # empty wait (passes on a fresh ring) + arrive.expect_tx
                full = ab_pipeline.producer_get_barrier(prod_state)
                cute.copy(tma_atom_a, tAgA[(None, prod_state.count)], tAsA[(None, prod_state.index)], tma_bar_ptr=full)
                cute.copy(tma_atom_b, tBgB[(None, prod_state.count)], tBsB[(None, prod_state.index)], tma_bar_ptr=full)
                prod_state.advance()

        # ---- mainloop ----
        read_state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, NSTAGES)
        release_state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, NSTAGES)
        for k_tile in cutlass.range(k_tiles, unroll=1):
            ab_pipeline.consumer_wait(read_state)  # full[s]: the stage's TMA bytes have landed
            warpgroup.fence()
            for kb in cutlass.range_constexpr(num_k_blocks):
                kc = (None, None, kb, read_state.index)
                cute.gemm(tiled_mma, acc, tCrA[kc], tCrB[kc], acc)
            warpgroup.commit_group()
            # keep this batch in flight; the previous one is now done, so its stage may be refilled
            warpgroup.wait_group(1)
            if k_tile > 0:
                ab_pipeline.consumer_release(release_state)
                release_state.advance()
                # warp 0 refills the stage just released with k-tile k_tile-1+NSTAGES. Only after a
                # release: at k_tile 0 the ring is full, and waiting there for a release that this
                # warp itself only makes in the next iteration would deadlock.
                if warp_idx == 0 and prod_state.count < k_tiles:
                    ab_pipeline.producer_acquire(prod_state)  # waits for all 4 warps' empty arrivals
                    full = ab_pipeline.producer_get_barrier(prod_state)
                    cute.copy(tma_atom_a, tAgA[(None, prod_state.count)], tAsA[(None, prod_state.index)], tma_bar_ptr=full)
                    cute.copy(tma_atom_b, tBgB[(None, prod_state.count)], tBsB[(None, prod_state.index)], tma_bar_ptr=full)
                    prod_state.advance()
            read_state.advance()

        warpgroup.wait_group(0)
        ab_pipeline.consumer_release(release_state)

        # ---- epilogue: registers -> st.global fp32 ----
        common.store_acc_to_gmem(tiled_mma, tidx, acc, mC, (BM, BN), m_tile, n_tile)
