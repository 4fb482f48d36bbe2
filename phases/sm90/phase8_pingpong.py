"""sm90 phase 8: ping-pong consumers -- each warpgroup owns a whole tile, and they take turns (beyond the worklog).

Compared to phase 6 (both consumer warpgroups on one 128x256 tile, rows 64w..64w+63 each, then both
in the epilogue while the tensor pipe idles), each consumer warpgroup now owns a whole 128x192 tile
(two m64n192k16 per k16 step, 192 fp32 accumulator registers per thread) and the CTA's tiles alternate
between them: the CTA's i-th tile goes to warpgroup i % 2. Two ordered hand-offs make them take turns:
1. mainloop order (named barriers 3 + w): warpgroup w issues its tile's wgmmas only after the other
   one has issued all of its previous tile's, so exactly one warpgroup feeds the tensor pipe at a time
   and the other runs its epilogue meanwhile: the epilogue (192 KiB of fp32 per tile through smem)
   is hidden under the other tile's MMAs instead of stopping them. The turn passes once the tile's last
   wgmmas are issued (CUTLASS's order): the next tile's queue behind them and the pipe never drains
   between tiles (``early_turn=False``, the first form, waits for them to complete before it arrives);
2. epilogue order (named barriers 5 + w): the two epilogues share the C staging buffers, so a
   warpgroup starts its stores only after the other's last stores have read them.
The ring does not change: the producer loads every tile's k-tiles in order, so warpgroup w's stages
are the ring positions of its own tiles; its read/release states skip the other warpgroup's k-tiles
(``advance(k_tiles)``), and a stage is released by the 4 warps of one warpgroup per CTA.
Everything else (persistent grouped raster over 66 pairs, B multicast in the pair, the asynchronous
TMA-store slabs, the helpers of ``common_tma``) is phase 6's; ``cute-gemm compare 6 8`` shows the step.

Why 128x192: a warpgroup's tile lives in its registers, 232 per thread at most (setmaxnreg), and
phase 6's 128x256 would need 256 for the accumulator alone. 128x192 keeps 192 + ~35 for addresses and
descriptors. Per FLOP it moves a little more than phase 6's tile: smem operand reads
2 x (64 + 192) / (128 x 192) = 0.0208 elements per MAC against (64 + 256) / (64 x 256) = 0.0195, and
with B multicast in the pair, L2 -> smem (128 + 96) / (128 x 192) = 0.0091 against 0.0078. What it
buys: the tensor pipe no longer stops for the epilogue, and a narrower tile splits N=3072, 6144 evenly
(16 and 32 tiles) with more tiles per SM (finer waves). It does not split N=4096 evenly (22 tiles,
the last one 2/3 empty), so ``phase="best"`` keeps phase 7 there; ``bn=128`` is the variant for it.
What it measured (docs/lessons.md, with what did not pay): the tensor pipe busier than in phase 6, and under a power
cap the saved cycles come back as a lower clock -- the gain is largest where K is short and the epilogue a large share.

Numbers: 4 stages x (128 + 192) x 64 x 2 B = 160 KiB + 2 C staging buffers x 16 KiB = 192 KiB (+1 KiB
barriers/alignment); 384 threads: the producer drops to 40 registers, the consumers take 232.

Constraints:
- N % 8 == 0 and K % 8 == 0 (16-B rows for the TMA descriptors); any M >= 1 (TMA bounds: zero-filled
  loads, clipped stores).
- Phase 6's otherwise: any operand majors and C type (C row-major), slabs of ``epi_n`` columns cycling evenly through
  ``epi_stages`` buffers, ``cluster_n`` 1 or 2.
"""

import dataclasses

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
from cutlass.cute.nvgpu import cpasync, warpgroup

from phases.cluster import require_cluster_dims
from phases.raster import ceil_div
from phases.sm90 import common
from phases.sm90 import common_tma as ct
from phases.pdl import pdl_launch_dependents, pdl_wait
from phases.sm90.phase6_persistent import Sm90Phase6, Sm90Phase6Config

# named barriers (0 is __syncthreads): 1 the epilogue's slab barrier (one warpgroup at a time),
# 3 + w "warpgroup w may issue its mainloop", 5 + w "warpgroup w may run its epilogue"
EPI_SLAB_BARRIER, MMA_TURN, EPI_TURN = 1, 3, 5


@dataclasses.dataclass(frozen=True)
class Sm90Phase8Config(Sm90Phase6Config):
    """Phase 6's fields; the tile is one warpgroup's: 128x192 (192 accumulator registers per thread), so a
    stage is 40 KiB (4 = 160 KiB), and the 2 C staging buffers are shared by both warpgroups."""

    bn: int = 192
    # hand the tensor pipe to the other warpgroup once this tile's last wgmmas are issued (False: once they complete)
    early_turn: bool = True
    # with a bias (no residual): copy the tile's bias to smem as its mainloop starts; the epilogue reads it there
    bias_smem: bool = False
    # a slab's arithmetic and rounding before the wait for its buffer, while the previous slab's store reads smem
    store_overlap: bool = False

    def bias_in_smem(self) -> bool:
        """``bias_smem`` in effect: with a bias and no residual (a residual's loads are C's coordinates, slab by slab,
        and its slabs load their bias beside it); otherwise the field changes nothing."""
        return self.bias_smem and self.bias and not self.residual


class Sm90Phase8(Sm90Phase6):
    """Phase 6 with ping-pong consumers: each warpgroup owns a whole tile; mainloops and epilogues alternate."""

    phase = "8"
    Config = Sm90Phase8Config
    summary = "phase 6 ping-pong: each consumer warpgroup owns a 128x192 tile; one runs its MMAs while the other stores"
    adds = "ping-pong consumers: tiles alternate between the warpgroups, ordered by named barriers; the epilogue hides under MMAs"
    worklog = ""
    parent = "6"

    consumer_warpgroups = 2  # warpgroup w takes the CTA's tiles i with i % 2 == w
    # phase 6's registers (128 x 40 + 256 x 232 = 64,512 of 65,536), smem struct, schedule and launch

    def config_problems(self) -> list[str]:
        """Phase 6's rules, and bm == 128: a warpgroup's tile is two wgmma row blocks."""
        why = super().config_problems()
        if self.cfg.bm != 2 * common.WGMMA_M:
            why.append(f"bm={self.cfg.bm}: phase 8 needs bm == {2 * common.WGMMA_M} (a warpgroup's tile is two wgmma "
                       f"row blocks)")
        return why

    def _setup_attributes(self):
        assert self.cfg.bm == 2 * common.WGMMA_M, "a warpgroup's tile is two wgmma row blocks"
        super()._setup_attributes()

    def bias_smem_elems(self) -> int:
        """``bias_smem``: one tile's bias per consumer warpgroup (2 x bn values)."""
        return 2 * self.cfg.bn if self.cfg.bias_in_smem() else 0

    def make_tiled_mma(self):
        """One warpgroup per tile: it issues m64n192k16 twice per k16 step (BM=128)."""
        return common.make_tiled_mma(self.cfg.bn, types=self.types)

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
        mBias,
        mD,
    ):
        cfg = self.cfg
        BM, BN, NSTAGES = cfg.bm, cfg.bn, cfg.stages
        EPI_STAGES, SLABS = cfg.epi_stages, BN // self.epi_n
        PAIR = self.c_per_acc()  # accumulator columns per C column (2: the gated pairs)
        tidx, _, _ = cute.arch.thread_idx()
        warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        bidx, _, _ = cute.arch.block_idx()
        require_cluster_dims(self.cluster)  # PTX .reqnctapercluster 2, 1, 1: the pair is part of the kernel
        if warp_idx == 0:
            cpasync.prefetch_descriptor(tma_atom_a)
            cpasync.prefetch_descriptor(tma_atom_b)
            cpasync.prefetch_descriptor(tma_atom_c)

        # the persistent schedule: cluster c takes cluster tiles c, c + clusters, c + 2 clusters, ...
        # (both CTAs of a pair walk the same list: their multicasts and empty arrivals stay matched)
        M, N, K = mC.shape[0], self.gemm_n(mC), mA.shape[1]
        tiles_m, tiles_n = ceil_div(M, BM), ceil_div(N, BN)  # a partial last tile counts
        cluster_tiles, clusters = self.schedule(M, N, K)
        cta_rank = cute.arch.make_warp_uniform(cute.arch.block_idx_in_cluster())
        cluster_id = bidx // self.cluster_ctas

        # ---- smem: barriers + A/B rings + C staging buffers ----
        smem = cutlass.memory.SmemAllocator()
        storage = smem.allocate(self.shared_storage)
        sA = storage.sA.get_tensor(sA_layout.outer, swizzle=sA_layout.inner)  # (BM, BK, NSTAGES)
        sB = storage.sB.get_tensor(sB_layout.outer, swizzle=sB_layout.inner)  # (BN, BK, NSTAGES)
        sC = storage.sC.get_tensor(sC_layout.outer, swizzle=sC_layout.inner)  # (BM, 32, EPI_STAGES)
        sBias = None
        if cutlass.const_expr(cfg.bias_in_smem()):
            sBias = storage.sBias.get_tensor(cute.make_layout((BN, 2)))  # one tile's bias per consumer warpgroup

        # the A/B ring, its full/empty mbarriers cluster-wide (empty: one warpgroup reads a stage: its warps, in both CTAs),
        # and B's multicast mask
        ab_pipeline, a_mcast_mask, b_mcast_mask = ct.make_pair_pipeline(storage, cfg, common.WARPS_PER_WARPGROUP, cta_rank)

        # ---- every tile's TMA partitions (the loop below only picks the tile coordinates) ----
        tAsA, tAgA, tBsB, tBgB, k_tiles = ct.tma_load_partitions(
            tma_atom_a, tma_atom_b, sA, sB, mA, mB, cfg, cta_rank
        )
        gC = cute.local_tile(mC, (BM, BN // PAIR), (None, None))  # (BM, BN, tiles_m, tiles_n); BN / 2 gated
        pdl_wait(cfg)

        warp_group_idx = cute.arch.make_warp_uniform(tidx // common.WARPGROUP_THREADS)

        # ---- producer warpgroup: one thread of warp 0 streams A/B k-tiles of all its tiles into the ring ----
        if warp_group_idx == 0:
            cute.arch.setmaxregister_decrease(self.producer_regs)
            if warp_idx == 0:
                prod_state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, NSTAGES)
                for tile in cutlass.range(cluster_id, cluster_tiles, clusters, unroll=1):
                    m_tile, n_tile = ct.cluster_tile_coord(tile, tiles_m, tiles_n, cfg, cta_rank)
                    # the same order as phase 6: the ring holds tile i's k-tiles, then tile i+1's; tile i
                    # is read by warpgroup i % 2
                    prod_state = ct.load_k_tiles(
                        ab_pipeline, prod_state, tma_atom_a, tAgA, tAsA, tma_atom_b, tBgB, tBsB,
                        m_tile, n_tile, 0, k_tiles, b_mcast_mask, a_mcast_mask,
                    )
                # do not exit while the peer may still arrive on this CTA's empty barriers
                ab_pipeline.producer_tail(prod_state)

        # ---- consumer warpgroups: warpgroup w runs the CTA's tiles w, w + 2, w + 4, ..., each whole ----
        if warp_group_idx > 0:
            cute.arch.setmaxregister_increase(self.consumer_regs)
            wg = warp_group_idx - 1
            wg_tidx = tidx % common.WARPGROUP_THREADS
            thr_mma = tiled_mma.get_slice(wg_tidx)
            tCrA = tiled_mma.make_fragment_A(thr_mma.partition_A(sA))  # smem descriptors, (MMA, MMA_M, MMA_K, NSTAGES)
            tCrB = tiled_mma.make_fragment_B(thr_mma.partition_B(sB))
            acc = cute.make_rmem_tensor(thr_mma.partition_shape_C((BM, BN)), cutlass.Float32)  # ((2,2,BN/8), 2, 1)
            tiled_mma.set(warpgroup.Field.ACCUMULATE, True)

            # the turns: warpgroup w waits on barrier X + w (with the other's 128 arrivals), and hands the
            # turn on by arriving on X + 1 - w; warpgroup 1 starts by giving warpgroup 0 both turns
            pair_threads = 2 * common.WARPGROUP_THREADS
            my_mma_turn = pipeline.NamedBarrier(barrier_id=MMA_TURN + wg, num_threads=pair_threads)
            next_mma_turn = pipeline.NamedBarrier(barrier_id=MMA_TURN + 1 - wg, num_threads=pair_threads)
            my_epi_turn = pipeline.NamedBarrier(barrier_id=EPI_TURN + wg, num_threads=pair_threads)
            next_epi_turn = pipeline.NamedBarrier(barrier_id=EPI_TURN + 1 - wg, num_threads=pair_threads)
            if wg == 1:
                next_mma_turn.arrive()
                next_epi_turn.arrive()
            # early_turn: the turn is handed on inside mma_k_tiles, as soon as the tile's last wgmmas are issued
            turn_on_issue = next_mma_turn if cfg.early_turn else None

            # ---- epilogue views (tile-independent), phase 6's for one warpgroup's (BM, BN) tile ----
            # only one warpgroup is in its epilogue at a time: one slab barrier of 128 threads serves both
            epi_barrier = pipeline.NamedBarrier(barrier_id=EPI_SLAB_BARRIER, num_threads=common.WARPGROUP_THREADS)
            # slab j of this thread's values (N-blocks 4j..4j+3 of both 64-row blocks) and its smem place
            acc_slabs, tCsC_slabs = ct.epilogue_slab_views(thr_mma, sC, sC_layout, acc, self.epi_n, SLABS, EPI_STAGES,
                                                           PAIR)
            store_thread = ct.store_issuers(wg_tidx, cfg.accumulate)

            # this warpgroup's ring positions: its tiles' k-tiles; warpgroup 1's start after tile 0's
            read_state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, NSTAGES)
            release_state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, NSTAGES)
            read_state.advance(wg * k_tiles)
            release_state.advance(wg * k_tiles)
            for tile in cutlass.range(cluster_id + wg * clusters, cluster_tiles, 2 * clusters, unroll=1):
                m_tile, n_tile = ct.cluster_tile_coord(tile, tiles_m, tiles_n, cfg, cta_rank)
                my_bias = None
                if cutlass.const_expr(cfg.bias_in_smem()):  # its loads fly under the mainloop
                    my_bias = sBias[None, wg]
                    ct.bias_to_smem(mBias, my_bias, n_tile, BN, wg_tidx)
                acc.fill(0.0)
                my_mma_turn.arrive_and_wait()
                read_state, release_state = ct.mma_k_tiles(
                    ab_pipeline, read_state, release_state, tiled_mma, acc, tCrA, tCrB, k_tiles, turn_on_issue
                )
                if cutlass.const_expr(not cfg.early_turn):
                    next_mma_turn.arrive()  # the other warpgroup's tile may take the tensor pipe
                read_state.advance(k_tiles)  # skip the other warpgroup's next tile in the ring
                release_state.advance(k_tiles)

                # ---- epilogue: registers -> smem slab buffers -> asynchronous TMA stores ----
                # (the fused epilogue's bias loads are issued first: they fly while the other warpgroup's epilogue ends)
                epi = ct.epilogue_args(cfg, thr_mma, (M, N), mBias, mD, m_tile, n_tile, (BM, BN), self.epi_n,
                                       sBias=my_bias)
                if cutlass.const_expr(cfg.bias_in_smem()):
                    cute.arch.cp_async_wait_group(0)  # this thread's bias copy landed; the barrier shows it to all
                my_epi_turn.arrive_and_wait()
                bSG_sC, bSG_gC = ct.tma_store_boxes(tma_atom_c, sC, gC, m_tile, n_tile, BM, self.epi_n // PAIR)
                ct.store_tile(acc_slabs, tCsC_slabs, bSG_sC, bSG_gC, tma_atom_c, epi_barrier, store_thread,
                              SLABS, EPI_STAGES, epi, cfg.store_overlap)
                # the other warpgroup's epilogue rewrites the staging buffers: they must have been read
                if store_thread:
                    cute.arch.cp_async_bulk_wait_group(0, read=True)
                next_epi_turn.arrive()
            pdl_launch_dependents(cfg)
