"""sm90 phase 2b: warp specialization, a producer warpgroup and a consumer warpgroup (the worklog's phase 2).

Compared to phase 2a (the 128 MMA threads also refill the ring: warp 0 stalls on the empty barrier
between wgmma batches), the CTA now has two warpgroups with one job each:
- warpgroup 0, the *producer*: gives registers back (``setmaxnreg.dec`` to 40) and one thread of its
  warp 0 runs the TMA loop: wait empty[s] -> arrive.expect_tx on full[s] -> two ``cp.async.bulk.tensor``.
- warpgroup 1, the *consumer*: takes registers (``setmaxnreg.inc`` to 216: its 128 fp32 accumulators
  plus descriptors and addresses), waits full[s], issues the wgmma batch, keeps one batch in flight and
  arrives on empty[s] once the batch that read s is done, then runs the epilogue.
The producer runs up to NSTAGES k-tiles ahead of the MMA on its own, so a refill never waits behind
a wgmma wait, and the MMA warps never execute TMA/barrier bookkeeping for the loads.

Worklog (B300, tcgen05): 959 -> 978 TFLOP/s at 4096^3 (+1.5%), and +30% at M=1024 where each SM has
one CTA and shortening its dependency chain is all that helps.

Numbers: the same 128x128x64 tile, 32 KiB per stage, 8 wgmma (512 tensor cycles) per stage, and as in
2a NSTAGES=3 so two CTAs share an SM. That residency is what setmaxnreg buys here: 2 CTAs x 256
threads may start with at most 65,536 / 512 = 128 registers per thread (``.minnctapersm 2``), too few
for a thread holding 128 accumulators; after the producer warpgroup drops to 40, each consumer thread
can grow to 128 + (128 - 40) = 216. Without the reshuffle ptxas picks 232 registers per thread at
entry and the SM holds one CTA, measurably slower. On Hopper the in-line producer of 2a costs little
(its refill follows a wgmma wait the warpgroup makes anyway), so the split is worth about 1% here, like
the worklog's +1.5%. Measured numbers: docs/results.md.

Constraints:
- N % 8 == 0 and K % 8 == 0 (16-B rows for the TMA descriptors); any M >= 1: zero-filled loads past
  A's and B's edges, a predicated epilogue for tiles that stick out of C (phase 2a's docstring).
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
class Sm90Phase2bConfig(ct.TmaConfig):
    bm: int = 128
    bn: int = 128
    bk: int = 64
    stages: int = 3  # as 2a: 96 KiB, two CTAs per SM


class Sm90Phase2b(GemmPhase):
    """Phase 2a + warp specialization: producer warpgroup (TMA) and consumer warpgroup (wgmma + epilogue)."""

    arch = "sm90"
    phase = "2b"
    Config = Sm90Phase2bConfig
    summary = "TMA + warp specialization: producer warpgroup (setmaxnreg 40) + consumer warpgroup (216), 128x128x64, 2 CTAs/SM"
    adds = "a producer warpgroup issues all TMA loads; the consumer warpgroup only waits, multiplies and stores"
    worklog = "978 (TMA + WS)"

    consumer_warpgroups = 1
    # Two CTAs x 256 threads start at 65536 / 512 = 128 registers each; the producer drops to 40 and
    # the consumer takes what that frees: 128 + (128 - 40) = 216 (128 fp32 accumulators + addresses).
    ctas_per_sm = 2
    producer_regs = 40
    consumer_regs = 216

    def config_problems(self) -> list[str]:
        """``_setup_attributes``'s rules, from the config alone (``common.tile_problems``)."""
        return super().config_problems() or common.tile_problems(self.cfg, common.WGMMA_M * self.consumer_warpgroups)

    def _setup_attributes(self):
        cfg = self.cfg
        self.sA_layout, self.sB_layout = common.make_smem_layouts(cfg.bm, cfg.bn, cfg.bk, cfg.stages, self.types)
        self.shared_storage = ct.make_shared_storage(cfg.stages, self.sA_layout, self.sB_layout, self.types.ab)
        self.smem_bytes = self.shared_storage.size_in_bytes()
        self.threads = common.WARPGROUP_THREADS * (1 + self.consumer_warpgroups)  # producer + consumers
        self.cluster = (cfg.cluster_m, 1, 1)

    def grid(self, m, n, k):
        # one CTA per tile, 1-D for the raster
        return (ceil_div(m, self.cfg.tile_m()) * self.cfg.cluster_m * ceil_div(n, self.cfg.bn), 1, 1)

    @cute.jit
    def __call__(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream):
        self.types = operands.read(mA, mB, mC)  # element types and majors, as given
        self._setup_attributes()
        cfg = self.cfg
        sA_layout, sB_layout = self.sA_layout, self.sB_layout
        tiled_mma = common.make_tiled_mma(cfg.bn, self.consumer_warpgroups, self.types)
        tma_atom_a, tma_a = ct.make_tma_load(mA, sA_layout, (cfg.bm, cfg.bk))
        tma_atom_b, tma_b = ct.make_tma_load(mB, sB_layout, (cfg.bn, cfg.bk))

        self.kernel(tma_atom_a, tma_a, tma_atom_b, tma_b, mC, tiled_mma, sA_layout, sB_layout).launch(
            grid=self.grid(*self.problem_mnk(mA, mC)),
            block=[self.threads, 1, 1],
            smem=self.smem_bytes,
            # .minnctapersm: fixes the entry register count (128) that setmaxnreg moves registers from
            min_blocks_per_mp=self.ctas_per_sm,
            preferred_smem_carveout=100,  # all 228 KiB of the SM as smem
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

        warp_group_idx = cute.arch.make_warp_uniform(tidx // common.WARPGROUP_THREADS)

        # ---- producer warpgroup: one thread of warp 0 streams A/B k-tiles into the ring ----
        if warp_group_idx == 0:
            cute.arch.setmaxregister_decrease(self.producer_regs)
            if warp_idx == 0:
                prod_state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, NSTAGES)
                for _ in cutlass.range(k_tiles, unroll=1):
                    ab_pipeline.producer_acquire(prod_state)  # empty wait + arrive.expect_tx on full[s]
                    full = ab_pipeline.producer_get_barrier(prod_state)
                    cute.copy(tma_atom_a, tAgA[(None, prod_state.count)], tAsA[(None, prod_state.index)], tma_bar_ptr=full)
                    cute.copy(tma_atom_b, tBgB[(None, prod_state.count)], tBsB[(None, prod_state.index)], tma_bar_ptr=full)
                    prod_state.advance()

        # ---- consumer warpgroup: wgmma mainloop, then the epilogue ----
        if warp_group_idx > 0:
            cute.arch.setmaxregister_increase(self.consumer_regs)
            mma_tidx = tidx - common.WARPGROUP_THREADS
            thr_mma = tiled_mma.get_slice(mma_tidx)
            tCrA = tiled_mma.make_fragment_A(thr_mma.partition_A(sA))  # smem descriptors, (MMA, MMA_M, MMA_K, NSTAGES)
            tCrB = tiled_mma.make_fragment_B(thr_mma.partition_B(sB))
            acc = cute.make_rmem_tensor(thr_mma.partition_shape_C((BM, BN)), cutlass.Float32)
            acc.fill(0.0)
            tiled_mma.set(warpgroup.Field.ACCUMULATE, True)
            num_k_blocks = cute.size(tCrA, mode=[2])  # BK / 16

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
                read_state.advance()

            warpgroup.wait_group(0)
            ab_pipeline.consumer_release(release_state)

            # ---- epilogue: registers -> st.global fp32 ----
            common.store_acc_to_gmem(tiled_mma, mma_tidx, acc, mC, (BM, BN), m_tile, n_tile)
