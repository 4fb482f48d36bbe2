"""sm90 phase 4: a cluster of 2 CTAs along M sharing the B tile through TMA multicast (the worklog's phase 4).

Compared to phase 3 (every CTA loads its own 256-column B k-tile), the two CTAs of a cluster compute
vertically adjacent 128x256 tiles, i.e. the same B k-tiles. Each CTA now loads only half of the B box
(128 of the 256 columns) with ``cp.async.bulk.tensor ... .multicast::cluster`` and mask 0b11, so the
TMA writes it into both CTAs' smem at the same offset and completes both CTAs' full barriers.
Consequences for the ring:
- full[s] still expects 48 KiB per CTA: its own A (16 KiB) + its own half of B + the peer's half.
- empty[s] must count the consumers of *both* CTAs (2 x 8 warps = 16 arrivals): the peer's next
  multicast writes into this CTA's slot s, so it may only start once this CTA's consumers are done
  with s too. Lanes 0 and 1 of each consumer warp arrive on rank 0's and rank 1's barrier.
- the barriers are initialised before a cluster-wide barrier (a peer may arrive or multicast into them
  right away), and the producer waits for every slot's last empty phase (``producer_tail``) before its
  CTA may exit: a remote arrive into the smem of an exited CTA is undefined.
The Hopper analog of the worklog's 2-SM pair: wgmma has no cta_group::2, so each CTA still runs its
own 128x256 MMA; what the pair shares is the load of B.

Why: L2 -> SM traffic per CTA per k-tile drops from 48 KiB to 32 KiB (A 16 + half of B 16), i.e.
from 1/85 to 1/128 B/FLOP, and each B k-tile is read from L2 once per pair instead of twice.

Worklog (B300, tcgen05): 1153 -> 1285 TFLOP/s at 4096^3 (2-SM pair, each CTA loads half of B).

Numbers: same 128x256x64 tile, 4 stages x 48 KiB, 384 threads; clusters of 2 along M.
On the H200 this gains little over phase 3: L2 -> SM bytes are not what limits this mainloop; smem
traffic and per-tile fixed costs are (see phase 5's docstring). Measured numbers: docs/results.md.

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
from phases.cluster import require_cluster_dims
from phases.raster import ceil_div
from phases.sm90 import common
from phases.sm90 import common_tma as ct


@dataclasses.dataclass(frozen=True)
class Sm90Phase4Config(ct.TmaConfig):
    bm: int = 128
    bn: int = 256
    bk: int = 64
    stages: int = 4  # 4 x 48 KiB = 192 KiB: one CTA per SM
    cluster_m: int = 2  # CTAs per cluster along M: they share (multicast) the B tile


class Sm90Phase4(GemmPhase):
    """Phase 3 in clusters of 2 along M: each CTA TMA-loads half of the shared B tile and multicasts it."""

    arch = "sm90"
    phase = "4"
    Config = Sm90Phase4Config
    summary = "cluster (2,1): 2 x 128x256 tiles share B, each CTA loads half and TMA-multicasts it to both"
    adds = "cluster of 2 along M with B multicast: 32 instead of 48 KiB of L2 traffic per CTA per k-tile"
    worklog = "1285 (2-SM pair)"

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

        self.kernel(tma_atom_a, tma_a, tma_atom_b, tma_b, mC, tiled_mma, sA_layout, sB_layout).launch(
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
        require_cluster_dims(self.cluster)  # PTX .reqnctapercluster 2, 1, 1: the pair is part of the kernel
        if warp_idx == 0:
            cpasync.prefetch_descriptor(tma_atom_a)
            cpasync.prefetch_descriptor(tma_atom_b)

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

            # ---- epilogue: registers -> st.global fp32 ----
            common.store_acc_to_gmem(tiled_mma, mma_tidx, acc, mC, (BM, BN), m_tile, n_tile)
