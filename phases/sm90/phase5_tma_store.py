"""sm90 phase 5: the epilogue goes registers -> smem -> TMA store (the worklog's phase 5).

Compared to phase 4 (each consumer thread writes its 128 accumulators to C with 64 scattered
``st.global.v2.f32``), the consumers now stage the 128x256 fp32 tile in shared memory and one thread
writes it to C with bulk tensor stores (``cp.async.bulk.tensor.2d.global.shared::cta``), one per
128x32 column slab (a 32-fp32 row is one 128-B swizzle span, the widest SW128 TMA box):
1. both consumer warpgroups finish their last wgmma, then meet at a named barrier: the staging tile
   overlays the B ring (128x256x4 B = 128 KiB = 4 stages x 32 KiB), which no one reads any more,
   and the last multicast into it has landed (every full barrier was waited on);
2. per slab: each thread writes its part of the slab to smem in the SW128 layout the TMA box reads,
   ``fence.proxy.async.shared::cta`` (generic-proxy writes -> visible to the TMA's async proxy),
   named barrier of the 256 consumer threads, then one thread issues the slab's TMA store and moves
   on: slab j's store overlaps the register -> smem writes of slab j+1 (each slab has its own buffer,
   so nothing waits for a store to finish reading);
3. the issuing thread waits for the stores to have *read* smem (``cp.async.bulk.wait_group.read 0``)
   before the CTA may exit and free it.
One bulk store stream of full 128-B lines per slab instead of 16,384 8-byte stores per tile.

stmatrix, the natural Hopper instruction for the register -> smem step, moves 8x8 matrices of 16-bit elements:
a wgmma fp32 fragment's column pairs would land as columns {0,2,4,6} of a 16-B row, an order no TMA box can write
back. So for fp32 C this does what CUTLASS's DSL and quack's sm90 GEMM do: ``st.shared.v2.f32`` of each lane's
column pair (stmatrix would appear with a 16-bit C; the full argument: docs/lessons.md).

Worklog (B300, tcgen05): 1285 -> 1451 TFLOP/s at 4096^3 (staged epilogue + TMA store).

Numbers: tile, ring and cluster as phase 4 (4 stages x 48 KiB = 192 KiB, 384 threads, pairs along M);
the epilogue adds no smem (it reuses the B ring) and 8 TMA stores of 16 KiB per tile.
Measured numbers: docs/results.md (``cute-gemm profile`` shows where the cycles go).
Where the time goes at 4096^3 (an estimate, docs/lessons.md): the mainloop runs at the smem bandwidth ceiling,
and per-tile fixed costs (launch, setup, pipeline fill, the 128 KiB fp32 epilogue) stay exposed with one CTA per
SM; the TMA store only reshapes the epilogue. Hiding them needs a persistent kernel (phase 6).

Constraints:
- N % 8 == 0 and K % 8 == 0 (16-B rows for the TMA descriptors); any M >= 1: TMA loads zero-fill what
  sticks out of A and B, the TMA stores clip at C's edges (a pair whose second tile is past M still
  runs both CTAs: the multicast needs both).
- A K-major, B N-major (MN-major wgmma operand), C fp32 row-major, 16-B aligned rows.
- ``accumulate`` (a config switch, off by default; 6-8 too): the slabs' TMA stores become TMA reduce-adds
  (``cp.reduce.async.bulk.tensor...add``): C += A @ B with no load of C (``gemm(..., accumulate=True)``).
"""

import dataclasses

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
import cutlass.utils.hopper_helpers as sm90_utils
from cutlass.cute.nvgpu import cpasync, warpgroup
from cutlass.tensor_utils import LayoutEnum

from phases import operands
from phases.base import GemmPhase
from phases.cluster import require_cluster_dims
from phases.raster import ceil_div
from phases.sm90 import common
from phases.sm90 import common_tma as ct


@dataclasses.dataclass(frozen=True)
class Sm90Phase5Config(ct.TmaConfig):
    bm: int = 128
    bn: int = 256
    bk: int = 64
    stages: int = 4  # 4 x 48 KiB = 192 KiB: one CTA per SM
    cluster_m: int = 2  # CTAs per cluster along M: they share (multicast) the B tile
    accumulate: bool = False  # C += A @ B: the TMA store becomes a reduce-add (``gemm(..., accumulate=True)``)


class Sm90Phase5(GemmPhase):
    """Phase 4 with a staged epilogue: registers -> swizzled smem slabs -> TMA stores."""

    arch = "sm90"
    phase = "5"
    Config = Sm90Phase5Config
    summary = "phase 4 + epilogue through smem: 128x32 fp32 slabs (SW128) written by TMA stores"
    adds = "TMA-store epilogue: registers -> swizzled smem -> cp.async.bulk.tensor store, one per 128x32 slab"
    worklog = "1451 (TMA store)"

    consumer_warpgroups = 2  # warpgroup w owns rows 64w..64w+63
    epi_n = 32  # columns per TMA-store slab: 32 fp32 = 128 B, the SW128 box width
    # One CTA per SM (192 KiB of smem): 384 threads start at 65,536 / 384 -> 168 registers each; the
    # producer drops to 40 and the consumers take 232: 128 x 40 + 256 x 232 = 64,512 of 65,536.
    ctas_per_sm = 1
    producer_regs = 40
    consumer_regs = 232

    def config_problems(self) -> list[str]:
        """``_setup_attributes``'s rules, from the config alone: the tile (``common.tile_problems``), C stored in whole
        slabs of ``epi_n`` columns, and C's tile staged in B's ring (its assert, at the smallest C: 16-bit)."""
        why = super().config_problems()
        if why:
            return why
        c = self.cfg
        why = common.store_tile_problems(c, common.WGMMA_M * self.consumer_warpgroups, self.epi_n)
        if c.bm > c.stages * c.bk:
            why.append(f"bm={c.bm}: C's bm x bn tile is staged in B's ring (stages x bn x bk): bm <= stages x bk = "
                       f"{c.stages * c.bk} (half that with fp32 C)")
        return why

    def _setup_attributes(self):
        cfg = self.cfg
        self.sA_layout, self.sB_layout = common.make_smem_layouts(cfg.bm, cfg.bn, cfg.bk, cfg.stages, self.types)
        self.shared_storage = ct.make_shared_storage(cfg.stages, self.sA_layout, self.sB_layout, self.types.ab)
        self.smem_bytes = self.shared_storage.size_in_bytes()
        self.threads = common.WARPGROUP_THREADS * (1 + self.consumer_warpgroups)  # producer + consumers
        self.cluster = (cfg.cluster_m, 1, 1)

    def grid(self, m, n, k):
        # one CTA per tile, 1-D for the raster; clusters of cluster_m CTAs cover cluster_m tiles along M
        return (ceil_div(m, self.cfg.tile_m()) * self.cfg.cluster_m * ceil_div(n, self.cfg.bn), 1, 1)

    @cute.jit
    def __call__(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream):
        self.types = operands.read(mA, mB, mC)  # element types and majors, as given
        self._setup_attributes()
        cfg = self.cfg
        sA_layout, sB_layout = self.sA_layout, self.sB_layout
        tiled_mma = common.make_tiled_mma(cfg.bn, self.consumer_warpgroups, self.types)
        tma_atom_a, tma_a = ct.make_tma_load(mA, sA_layout, (cfg.bm, cfg.bk))
        # B: each CTA of the pair loads 1/cluster_m of the box and multicasts it to the whole pair
        tma_atom_b, tma_b = ct.make_tma_load(mB, sB_layout, (cfg.bn, cfg.bk), num_multicast=cfg.cluster_m)
        # C staging: BN/32 slabs of (BM, 32) C elements (fp32: SW128-swizzled), stored by one TMA box each
        sC_layout = sm90_utils.make_smem_layout_epi(
            self.types.c, LayoutEnum.ROW_MAJOR, (cfg.bm, self.epi_n), cfg.bn // self.epi_n
        )
        assert cute.cosize(sC_layout) * self.types.c.width <= cute.cosize(sB_layout) * self.types.ab.width, \
            "the C staging tile must fit in the B ring"
        # C's TMA store, or with ``accumulate`` its reduce-add (C += the tile)
        tma_atom_c, tma_c = ct.make_tma_store(mC, sC_layout, (cfg.bm, self.epi_n), cfg.accumulate)

        self.kernel(
            tma_atom_a, tma_a, tma_atom_b, tma_b, tma_atom_c, tma_c, tiled_mma, sA_layout, sB_layout, sC_layout
        ).launch(
            grid=self.grid(*self.problem_mnk(mA, mC)),
            block=[self.threads, 1, 1],
            cluster=[cfg.cluster_m, 1, 1],  # consecutive block ids pair up
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
        tma_atom_c: cute.CopyAtom,
        mC: cute.Tensor,
        tiled_mma: cute.TiledMma,
        sA_layout: cute.ComposedLayout,
        sB_layout: cute.ComposedLayout,
        sC_layout: cute.ComposedLayout,
    ):
        cfg = self.cfg
        BM, BN, BK, NSTAGES = cfg.bm, cfg.bn, cfg.bk, cfg.stages
        tidx, _, _ = cute.arch.thread_idx()
        warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        bidx, _, _ = cute.arch.block_idx()
        require_cluster_dims(self.cluster)  # PTX .reqnctapercluster 2, 1, 1: the pair is part of the kernel
        if warp_idx == 0:
            cpasync.prefetch_descriptor(tma_atom_a)
            cpasync.prefetch_descriptor(tma_atom_b)
            cpasync.prefetch_descriptor(tma_atom_c)

        tiles_m, tiles_n = ceil_div(mC.shape[0], BM), ceil_div(mC.shape[1], BN)  # a partial last tile counts
        # raster over clusters; the pair's CTAs take adjacent M tiles of the same N tile (same B)
        cta_rank = cute.arch.make_warp_uniform(cute.arch.block_idx_in_cluster())
        m_tile, n_tile = ct.cluster_tile_coord(bidx // cfg.cluster_m, tiles_m, tiles_n, cfg, cta_rank)

        # ---- smem: barriers + A/B rings ----
        smem = cutlass.memory.SmemAllocator()
        storage = smem.allocate(self.shared_storage)
        sA = storage.sA.get_tensor(sA_layout.outer, swizzle=sA_layout.inner)  # (BM, BK, NSTAGES)
        sB = storage.sB.get_tensor(sB_layout.outer, swizzle=sB_layout.inner)  # (BN, BK, NSTAGES)

        # full: 1 arrival (the producer's arrive.expect_tx) + the stage's TMA bytes (own A, both B halves).
        # empty: one arrival per consumer warp of *both* CTAs (the peer multicasts into this slot too).
        # Created without defer_sync: barrier init, then a cluster-wide arrive/wait before any use.
        cta_layout_vmnk = cute.make_layout((1, cfg.cluster_m, 1, 1))
        ab_pipeline = pipeline.PipelineTmaAsync.create(
            barrier_storage=storage.full_empty.data_ptr(),
            num_stages=NSTAGES,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            consumer_group=pipeline.CooperativeGroup(
                pipeline.Agent.Thread, cfg.cluster_m * self.consumer_warpgroups * common.WARPS_PER_WARPGROUP
            ),
            tx_count=cfg.stage_bytes(),
            cta_layout_vmnk=cta_layout_vmnk,
        )
        # B's multicast mask: every CTA of the cluster along M (mode 1 of V,M,N,L) -> 0b11
        b_mcast_mask = cpasync.create_tma_multicast_mask(
            cta_layout_vmnk, cta_layout_vmnk.get_flat_coord(cta_rank), mcast_mode=1
        )

        # ---- this CTA's tiles and their TMA / MMA partitions ----
        gA = cute.local_tile(mA, (BM, BK), (m_tile, None))  # (BM, BK, k_tiles)
        gB = cute.local_tile(mB, (BN, BK), (n_tile, None))  # (BN, BK, k_tiles)
        gC = cute.local_tile(mC, (BM, BN), (m_tile, n_tile))  # (BM, BN): TMA coordinates, clipped at C's edges
        # A is this CTA's alone: the TMA partition is the whole box
        tAsA, tAgA = cpasync.tma_partition(
            tma_atom_a, 0, cute.make_layout(1), cute.group_modes(sA, 0, 2), cute.group_modes(gA, 0, 2)
        )
        # B: rank r of the pair loads slice r of the box (and writes it into both CTAs)
        tBsB, tBgB = cpasync.tma_partition(
            tma_atom_b, cta_rank, cute.make_layout(cfg.cluster_m), cute.group_modes(sB, 0, 2), cute.group_modes(gB, 0, 2)
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
                    cute.copy(
                        tma_atom_b, tBgB[(None, prod_state.count)], tBsB[(None, prod_state.index)],
                        tma_bar_ptr=full, mcast_mask=b_mcast_mask,
                    )
                    prod_state.advance()
                # do not exit while the peer may still arrive on this CTA's empty barriers
                ab_pipeline.producer_tail(prod_state)

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

            # ---- epilogue: registers -> smem (SW128 slabs over the B ring) -> TMA store ----
            epi_barrier = pipeline.NamedBarrier(
                barrier_id=1, num_threads=self.consumer_warpgroups * common.WARPGROUP_THREADS
            )
            epi_barrier.arrive_and_wait()  # both warpgroups' last wgmma (the last readers of sB) are done
            sC = cute.make_tensor(
                cute.recast_ptr(sB.iterator, sC_layout.inner, dtype=self.types.c), sC_layout.outer
            )  # (BM, 32, BN/32)
            # the MMA's view of the staging tile: (BM, (32, BN/32)) is the (BM, BN) tile, column = c + 32 j
            tCsC = thr_mma.partition_C(cute.group_modes(sC, 1, 3))
            # this thread's values of slab j: the wgmma fragment is ((2, 2, BN/8), 1, 1), 8 columns per
            # N-block, so slab j is N-blocks 4j..4j+3: split that mode into (4, BN/32) and slice
            acc_slabs = cute.logical_divide(acc, (cute.make_layout((2, 2, self.epi_n // 8)),))
            tCsC_slabs = cute.logical_divide(tCsC, (cute.make_layout((2, 2, self.epi_n // 8)),))
            # TMA store partition: box j = slab j of smem -> columns 32j.. of this CTA's C tile
            bSG_sC, bSG_gC = cpasync.tma_partition(
                tma_atom_c, 0, cute.make_layout(1), cute.group_modes(sC, 0, 2), cute.zipped_divide(gC, (BM, self.epi_n))
            )
            # one thread issues (and later waits for) the stores: unlike TMA loads, the DSL does not
            # elect a lane for a TMA store, and bulk groups are per thread (warp 0 for the reduce-add: the DSL elects)
            store_thread = ct.store_issuers(mma_tidx, cfg.accumulate)
            for j in cutlass.range_constexpr(BN // self.epi_n):
                cute.autovec_copy(common.to_c_type(acc_slabs[(None, j), 0, 0], self.types.c), tCsC_slabs[(None, j), 0, 0])
                cute.arch.fence_proxy("async.shared", space="cta")  # st.shared -> visible to the TMA (async proxy)
                epi_barrier.arrive_and_wait()  # all 256 threads' parts of slab j are in smem
                if store_thread:
                    cute.copy(tma_atom_c, bSG_sC[(None, j)], bSG_gC[(None, (0, j))])
                    cute.arch.cp_async_bulk_commit_group()
            if store_thread:
                cute.arch.cp_async_bulk_wait_group(0, read=True)  # smem must outlive the stores' reads
