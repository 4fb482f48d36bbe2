"""sm90 phase 3: the wide tile, 128x256 with two consumer warpgroups (the worklog's phase 3).

Compared to phase 2b (one consumer warpgroup, 128x128), BN doubles to 256 and a second consumer
warpgroup joins: consumer warpgroup w owns rows 64w..64w+63 of the 128x256 tile and issues
``m64n256k16`` (one instruction, N=256, per k16-step instead of two m64n128k16 for one warpgroup).
384 threads: producer warpgroup + 2 consumer warpgroups. The empty barrier now waits for 8 consumer
warps. The epilogue drains 256 columns with both consumer warpgroups, 128 accumulators per thread.

Why: the fixed costs of a k-tile (full/empty barrier round trip, wgmma issue, the TMA of A) are paid
once for twice the MMA work, and the operand bytes per FLOP drop by a third: a stage is
16 KiB A + 32 KiB B = 48 KiB for 128x256x64x2 = 4.19 MFLOP, i.e. 1/85 B/FLOP (phase 2b: 32 KiB for
2.10 MFLOP, 1/64 B/FLOP). Per stage the two consumer warpgroups issue 8 m64n256k16 = 1024 tensor
cycles of the SM, against 512 in phase 2b, per barrier round trip.

Worklog (B300, tcgen05): 978 -> 1153 TFLOP/s at 4096^3 (BN=256, 8 warps).

Numbers: 4 stages x 48 KiB = 192 KiB of the 227 KiB (5 would need 240 KiB); one CTA per SM.
Registers: 128 x 40 (producer) + 256 x 232 (consumers) = 64,512 of 65,536; a consumer thread holds
64x256/128 = 128 fp32 accumulators. 4096^3 has 32 x 16 = 512 tiles: 3.9 waves on 132 SMs.
Measured numbers: docs/results.md.

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
class Sm90Phase3Config(ct.TmaConfig):
    bm: int = 128
    bn: int = 256
    bk: int = 64
    stages: int = 4  # 4 x 48 KiB = 192 KiB: one CTA per SM


class Sm90Phase3(GemmPhase):
    """Phase 2b with a 128x256 tile: producer warpgroup + two consumer warpgroups of 64x256 each."""

    arch = "sm90"
    phase = "3"
    Config = Sm90Phase3Config
    summary = "128x256x64 tile: producer warpgroup + 2 consumer warpgroups (m64n256k16 each), 384 threads"
    adds = "BN=256 and a second consumer warpgroup: twice the MMA work per k-tile's fixed cost"
    worklog = "1153 (BN=256, 8 warps)"

    consumer_warpgroups = 2  # warpgroup w owns rows 64w..64w+63
    # One CTA per SM (192 KiB of smem): 384 threads start at 65,536 / 384 -> 168 registers each; the
    # producer drops to 40 and the consumers take 232: 128 x 40 + 256 x 232 = 64,512 of 65,536.
    ctas_per_sm = 1
    producer_regs = 40
    consumer_regs = 232

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
            # .minnctapersm: fixes the entry register count (168) that setmaxnreg moves registers from
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

        # ---- consumer warpgroups: wgmma mainloop, then the epilogue ----
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
