"""sm90 phase 7: stream-K, the partial last round split along K inside each cluster pair (beyond the worklog).

Compared to phase 6 (a persistent static round robin of cluster tiles over 66 clusters), the tiles of
the partial last round are split along K: the busiest cluster sets the time, and at 3072^3, 144 cluster
tiles = 2 rounds of 66 + 12, so the third round runs 12 tiles on 12 of 66 clusters (3 tile times where
144 / 66 = 2.2 would do). Here the R = tiles % 66 leftover cluster tiles become 2R units, one per
cluster (when 2R <= 66 and the k-tiles split evenly; ``phases.raster.stream_k_schedule``): unit u is
CTA tile u % 2 of leftover cluster tile u // 2, and the two CTAs of cluster u compute its k-tiles
[0, K/2) and [K/2, K) (each loads the whole B box itself, multicast to itself only: nothing is shared).
The pair then exchanges halves: each CTA ``st.async``'s the half of its fp32 partial tile that the peer
finalizes (64 KiB, 16 B per thread and store) into the peer's A/B ring, free by then, counted on the
peer's mbarrier; each adds the half it receives to its own registers and stores its 4 slabs with phase
6's TMA-store epilogue. The data-parallel rounds before are phase 6's loop, unchanged.

- Why inside a pair: the contract gives the kernel no memory besides A, B, C, so partial sums of
  different clusters would have nowhere to go and no flag to wait on (C holds one value per element and
  starts with arbitrary content). Inside a cluster the peer's smem is the workspace and its mbarriers
  the flags, and a cluster's CTAs are co-scheduled by the hardware: no wait depends on another
  cluster, whatever the occupancy. Every element is p_lo + p_hi, a sum of two fp32 terms, which
  commutes: the same bits on every run (deterministic).
- Rounds: 3072^3 3 -> 2.5 tile times + the exchange; shapes with no full round (e.g. 2048x1024x512:
  32 tiles) split every tile and run twice the clusters on half the k-tiles. 4096^3 is unchanged: its
  last round holds 58 tiles, 116 halves do not fit on 66 clusters (a perfect split would gain at most
  4 / 3.88 - 1 = 3%). 1024x4096x4096 (64 tiles) fills one round: unchanged, as phase 6.
- The schedule is runtime arithmetic on the tile counts (one compile serves every shape): the split
  happens or not per call, and without it the kernel runs exactly phase 6's loop.
- Cost: smem unchanged (the two exchange mbarriers sit in the bytes before the 1024-B aligned A ring).
- Phase 6's fused epilogue fields (``bias``, ``activation``, ``residual``) apply here too: a split tile's
  CTA applies them to its half of the slabs once the peer's partial sums are added, never to a partial.
Measured numbers: docs/results.md.

Constraints:
- N % 8 == 0 and K % 8 == 0 (16-B rows for the TMA descriptors); any M >= 1.
- Phase 6's otherwise: any operand majors and C type (C row-major), slabs of ``epi_n`` columns cycling evenly through
  ``epi_stages`` buffers -- and an even number of slabs (the pair splits them).
- bm == 128: one 64-row block per consumer warpgroup (the exchange moves that block's slabs).
- The split needs cluster_m == 2 (the pair is the workspace) and an even number of k-tiles (both CTAs
  of a pair run rings of equal length: the empty barriers count both CTAs' releases); otherwise every
  tile is data-parallel. ``cluster_n`` stays 1: the split tile belongs to the pair along M.
"""

import dataclasses

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
from cutlass._mlir.dialects import nvvm
from cutlass.cute.nvgpu import cpasync, warpgroup

from phases.cluster import require_cluster_dims
from phases.raster import ceil_div, stream_k_schedule
from phases.sm90 import common
from phases.sm90 import common_tma as ct
from phases.pdl import pdl_launch_dependents, pdl_wait
from phases.sm90.phase6_persistent import Sm90Phase6, Sm90Phase6Config


@dataclasses.dataclass(frozen=True)
class Sm90Phase7Config(Sm90Phase6Config):
    """Phase 6's fields and defaults (128x256x64, 4 stages, pairs along M, 2 C staging buffers, 132 SMs)."""


def make_shared_storage(stages: int, sA_layout, sB_layout, sC_layout, types):
    """Phase 6's smem struct + two mbarriers for the stream-K exchange (free, full); they fit in the
    bytes before the 1024-B aligned A ring, so the struct's size does not change."""

    @cute.struct
    class SharedStorage:
        full_empty: cute.struct.MemRange[cutlass.Int64, 2 * stages]
        xchg: cute.struct.MemRange[cutlass.Int64, 2]  # [0] free: the peer's ring may take my half; [1] full
        sA: cute.struct.Align[cute.struct.MemRange[types.ab, cute.cosize(sA_layout)], common.SMEM_ALIGN]
        sB: cute.struct.Align[cute.struct.MemRange[types.ab, cute.cosize(sB_layout)], common.SMEM_ALIGN]
        sC: cute.struct.Align[cute.struct.MemRange[types.c, cute.cosize(sC_layout)], common.SMEM_ALIGN]

    return SharedStorage


class Sm90Phase7(Sm90Phase6):
    """Phase 6 + stream-K: the partial last round's tiles split along K inside each cluster pair."""

    phase = "7"
    Config = Sm90Phase7Config
    summary = "phase 6 + stream-K: the partial last round split along K inside each pair, halves exchanged via DSMEM"
    adds = "stream-K: the partial last round's tiles split along K in the pair, partial sums exchanged through DSMEM"
    worklog = ""
    storage_struct = staticmethod(make_shared_storage)  # phase 6's + the two exchange mbarriers

    def config_problems(self) -> list[str]:
        """Phase 6's rules, bm == 64 x the consumer warpgroups (the exchange sends one 64-row block per
        warpgroup) and the exchange's mailbox (half a tile's slabs, 16 KiB each) within B's ring."""
        why = super().config_problems()
        c = self.cfg
        rows = common.WGMMA_M * self.consumer_warpgroups
        if c.cluster_n != 1:
            why.append(f"cluster_n={c.cluster_n}: phase 7 splits a tile inside a pair along M (cluster_n=1); a cluster "
                       f"along N is phase 6's or 8's")
        if c.bm != rows:
            why.append(f"bm={c.bm}: phase 7 needs bm == {rows} (one 64-row block per consumer warpgroup)")
        elif c.bn % self.epi_n == 0 and (c.bn // self.epi_n) % 2:
            why.append(f"epi_n={c.epi_n}: the {c.bn // self.epi_n} slabs of bn={c.bn} must split evenly between the "
                       f"pair's two CTAs (an even number of slabs)")
        elif not why and (c.bn // self.epi_n // 2) * (self.epi_n // 2) * 4 * 256 > c.stages * c.bn * c.bk * 2:
            why.append(f"stages={c.stages}: the stream-K mailbox (half of bn={c.bn}'s slabs) must fit in B's ring: "
                       f"stages x bk >= 128")
        return why

    def _setup_attributes(self):
        super()._setup_attributes()
        # the exchange sends each thread's slab values of its one 64-row block (the fragment's MMA_M
        # mode is 1); a taller tile would give each warpgroup several blocks and leave all but the first
        # unexchanged (measured: bm=256 summed only half of each split tile)
        rows = 64 * self.consumer_warpgroups
        assert self.cfg.cluster_n == 1, "phase 7's split tile is shared by a pair along M only"
        assert self.cfg.bm == rows, f"phase 7 needs bm == {rows} (one 64-row block per consumer warpgroup)"

    def schedule(self, m, n, k):
        """(data-parallel cluster tiles, split cluster tiles, clusters launched) for an (m, n, k) problem.

        ``phases.raster.stream_k_schedule`` with a split in two: unit u (= cluster u) is CTA tile u % 2
        of cluster tile dp + u // 2, each CTA of the cluster computes half of its k-tiles.
        """
        cfg = self.cfg
        tiles = ceil_div(m, cfg.tile_m()) * ceil_div(n, cfg.bn)
        split = 2 if cfg.cluster_m == 2 else 1 << 30  # no pair, no workspace: a split never fits
        return stream_k_schedule(tiles, cfg.sm_count // cfg.cluster_m, ceil_div(k, cfg.bk), split)

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
        BM, BN, BK, NSTAGES = cfg.bm, cfg.bn, cfg.bk, cfg.stages
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
        dp_tiles, sk_tiles, clusters = self.schedule(M, N, K)
        cta_rank = cute.arch.make_warp_uniform(cute.arch.block_idx_in_cluster())
        cluster_id = bidx // cfg.cluster_m
        sk_units = sk_tiles * cfg.cluster_m  # stream-K units: one per cluster 0 .. sk_units-1, after its tiles

        # ---- smem: barriers + A/B rings + C staging buffers ----
        smem = cutlass.memory.SmemAllocator()
        storage = smem.allocate(self.shared_storage)
        sA = storage.sA.get_tensor(sA_layout.outer, swizzle=sA_layout.inner)  # (BM, BK, NSTAGES)
        sB = storage.sB.get_tensor(sB_layout.outer, swizzle=sB_layout.inner)  # (BN, BK, NSTAGES)
        sC = storage.sC.get_tensor(sC_layout.outer, swizzle=sC_layout.inner)  # (BM, 32, EPI_STAGES)
        # the stream-K exchange's mbarriers, initialised before the pipeline's fence.mbarrier_init and
        # cluster sync below, which publish them to the peer CTA too (it arrives on them remotely).
        # free: one arrival per phase from the peer's store thread (phase 0: its ring may be
        # overwritten with my half; phase 1: it has received my half). full: my own arrive.expect_tx
        # plus the bytes of the peer's st.async stores.
        xchg_free = storage.xchg.data_ptr()
        xchg_full = xchg_free + 1
        if warp_idx == 0:
            with cute.arch.elect_one():
                cute.arch.mbarrier_init(xchg_free, 1)
                cute.arch.mbarrier_init(xchg_full, 1)

        # the A/B ring, its full/empty mbarriers cluster-wide (empty: every consumer warp of both CTAs),
        # and B's multicast mask
        ab_pipeline, a_mcast_mask, b_mcast_mask = ct.make_pair_pipeline(
            storage, cfg, self.consumer_warpgroups * common.WARPS_PER_WARPGROUP, cta_rank
        )

        # ---- every tile's TMA partitions (the loop below only picks the tile coordinates) ----
        tAsA, tAgA, tBsB, tBgB, k_tiles = ct.tma_load_partitions(
            tma_atom_a, tma_atom_b, sA, sB, mA, mB, cfg, cta_rank
        )
        gC = cute.local_tile(mC, (BM, BN // PAIR), (None, None))  # (BM, BN, tiles_m, tiles_n); BN / 2 gated
        # the stream-K unit's B loads: rank r's slice of the box, to this CTA only (mode 0 of V,M,N,L
        # has one CTA: the mask is this CTA's bit)
        gB = cute.local_tile(mB, (BN, BK), (None, None))  # (BN, BK, tiles_n, k_tiles)
        tBsB_0, tBgB_0 = cpasync.tma_partition(
            tma_atom_b, 0, cute.make_layout(cfg.cluster_m), cute.group_modes(sB, 0, 2), cute.group_modes(gB, 0, 2)
        )
        tBsB_1, tBgB_1 = cpasync.tma_partition(
            tma_atom_b, 1, cute.make_layout(cfg.cluster_m), cute.group_modes(sB, 0, 2), cute.group_modes(gB, 0, 2)
        )
        cta_layout_vmnk = cute.make_layout((1, cfg.cluster_m, 1, 1))
        self_mask = cpasync.create_tma_multicast_mask(
            cta_layout_vmnk, cta_layout_vmnk.get_flat_coord(cta_rank), mcast_mode=0
        )
        k_split = k_tiles // cfg.cluster_m  # k-tiles per CTA in a stream-K unit
        pdl_wait(cfg)

        warp_group_idx = cute.arch.make_warp_uniform(tidx // common.WARPGROUP_THREADS)

        # ---- producer warpgroup: one thread of warp 0 streams A/B k-tiles of all its tiles into the ring ----
        if warp_group_idx == 0:
            cute.arch.setmaxregister_decrease(self.producer_regs)
            if warp_idx == 0:
                prod_state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, NSTAGES)
                for tile in cutlass.range(cluster_id, dp_tiles, clusters, unroll=1):
                    m_tile, n_tile = ct.cluster_tile_coord(tile, tiles_m, tiles_n, cfg, cta_rank)
                    # no drain at the tile boundary: the ring state runs on, so these loads fill the
                    # slots the consumers free while they are still in the previous tile's epilogue
                    prod_state = ct.load_k_tiles(
                        ab_pipeline, prod_state, tma_atom_a, tAgA, tAsA, tma_atom_b, tBgB, tBsB,
                        m_tile, n_tile, 0, k_tiles, b_mcast_mask, a_mcast_mask,
                    )
                if cluster_id < sk_units:
                    # stream-K unit: both CTAs of the pair compute the same CTA tile, this one over
                    # k-tiles [rank * k_split, (rank + 1) * k_split). No operand is shared, so each CTA
                    # loads the whole B box itself: both ranks' slices, each multicast to this CTA only
                    # (same bytes per stage as before: the full barrier's tx count holds). Both CTAs
                    # load k_split stages here after the same data-parallel tiles, so the two rings
                    # stay in step and the cluster-wide empty barriers count as before.
                    m_tile, n_tile = ct.cluster_tile_coord(
                        dp_tiles + cluster_id // cfg.cluster_m, tiles_m, tiles_n, cfg, cluster_id % cfg.cluster_m
                    )
                    k_first = cta_rank * k_split
                    for kt in cutlass.range(k_split, unroll=1):
                        ab_pipeline.producer_acquire(prod_state)
                        full = ab_pipeline.producer_get_barrier(prod_state)
                        s = prod_state.index
                        cute.copy(tma_atom_a, tAgA[(None, m_tile, k_first + kt)], tAsA[(None, s)], tma_bar_ptr=full)
                        cute.copy(
                            tma_atom_b, tBgB_0[(None, n_tile, k_first + kt)], tBsB_0[(None, s)],
                            tma_bar_ptr=full, mcast_mask=self_mask,
                        )
                        cute.copy(
                            tma_atom_b, tBgB_1[(None, n_tile, k_first + kt)], tBsB_1[(None, s)],
                            tma_bar_ptr=full, mcast_mask=self_mask,
                        )
                        prod_state.advance()
                # do not exit while the peer may still arrive on this CTA's empty barriers
                ab_pipeline.producer_tail(prod_state)

        # ---- consumer warpgroups: per tile, the wgmma mainloop, then the epilogue ----
        if warp_group_idx > 0:
            cute.arch.setmaxregister_increase(self.consumer_regs)
            mma_tidx = tidx - common.WARPGROUP_THREADS
            thr_mma = tiled_mma.get_slice(mma_tidx)
            tCrA = tiled_mma.make_fragment_A(thr_mma.partition_A(sA))  # smem descriptors, (MMA, MMA_M, MMA_K, NSTAGES)
            tCrB = tiled_mma.make_fragment_B(thr_mma.partition_B(sB))
            acc = cute.make_rmem_tensor(thr_mma.partition_shape_C((BM, BN)), cutlass.Float32)
            tiled_mma.set(warpgroup.Field.ACCUMULATE, True)

            # ---- epilogue views (tile-independent) ----
            epi_barrier = pipeline.NamedBarrier(
                barrier_id=1, num_threads=self.consumer_warpgroups * common.WARPGROUP_THREADS
            )
            # slab j of this thread's values and its place in the staging ring (slab j -> buffer j % EPI_STAGES)
            acc_slabs, tCsC_slabs = ct.epilogue_slab_views(thr_mma, sC, sC_layout, acc, self.epi_n, SLABS, EPI_STAGES,
                                                           PAIR)
            # one thread issues (and waits for) the stores: unlike TMA loads, the DSL does not elect a
            # lane for a TMA store, and bulk groups are per thread (warp 0 for the reduce-add: the DSL elects)
            store_thread = ct.store_issuers(mma_tidx, cfg.accumulate)
            xchg_thread = mma_tidx == 0  # one thread arrives on the exchange's barriers
            # stream-K exchange views. Both CTAs of the pair hold the same tile with the same thread ->
            # fragment map, so thread t's value i of slab j means the same C element in both. Mailbox
            # (in the B ring, free by then): fp32 [slab jj][quad q][thread t][4], i.e. value i of slab jj
            # of thread t at ((jj * VALS/4 + i // 4) * 256 + t) * 4 + i % 4.
            MMA_THREADS = self.consumer_warpgroups * common.WARPGROUP_THREADS
            HALF = SLABS // 2
            slab_frag = cute.make_rmem_tensor(acc_slabs[(None, 0), 0, 0].shape, cutlass.Float32)
            recv_frag = cute.make_rmem_tensor(acc_slabs[(None, 0), 0, 0].shape, cutlass.Float32)
            VALS = cute.size(slab_frag)  # values of one slab per thread (16)
            assert slab_frag.shape == ((2, 2, VALS // 4),), "a thread's slab: 2 x 2 x (VALS / 4) values"
            # flat order i = a + 2b + 4c of ((2, 2, VALS/4)) -> mailbox offset a + 2b + 4*256*c
            mbox_slab = cute.make_layout(slab_frag.shape, stride=((1, 2, 4 * MMA_THREADS),))
            XCHG_BYTES = HALF * VALS * 4 * MMA_THREADS  # the peer's half, received into my ring
            assert XCHG_BYTES <= cute.cosize(sB_layout) * 2, "the mailbox must fit in the B ring"
            mbox_ptr = cute.recast_ptr(storage.sB.data_ptr(), dtype=cutlass.Float32)

            read_state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, NSTAGES)
            release_state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, NSTAGES)
            for tile in cutlass.range(cluster_id, dp_tiles, clusters, unroll=1):
                m_tile, n_tile = ct.cluster_tile_coord(tile, tiles_m, tiles_n, cfg, cta_rank)
                acc.fill(0.0)
                read_state, release_state = ct.mma_k_tiles(
                    ab_pipeline, read_state, release_state, tiled_mma, acc, tCrA, tCrB, k_tiles
                )

                # ---- epilogue: registers -> smem slab buffers -> asynchronous TMA stores (phase 6's) ----
                bSG_sC, bSG_gC = ct.tma_store_boxes(tma_atom_c, sC, gC, m_tile, n_tile, BM, self.epi_n // PAIR)
                epi = ct.epilogue_args(cfg, thr_mma, (M, N), mBias, mD, m_tile, n_tile, (BM, BN), self.epi_n)
                ct.store_tile(acc_slabs, tCsC_slabs, bSG_sC, bSG_gC, tma_atom_c, epi_barrier, store_thread,
                              SLABS, EPI_STAGES, epi)

            if cluster_id < sk_units:
                # ---- stream-K unit: this CTA's half of the k-tiles of the pair's common CTA tile ----
                m_tile, n_tile = ct.cluster_tile_coord(
                    dp_tiles + cluster_id // cfg.cluster_m, tiles_m, tiles_n, cfg, cluster_id % cfg.cluster_m
                )
                acc.fill(0.0)
                read_state, release_state = ct.mma_k_tiles(
                    ab_pipeline, read_state, release_state, tiled_mma, acc, tCrA, tCrB, k_split
                )

                # ---- exchange: rank 0 finalizes slabs 0..HALF-1, rank 1 slabs HALF..SLABS-1; each sends
                # the other's half of its partial sums (registers -> st.async into the peer's ring,
                # counted on the peer's full barrier) and adds the half it receives to its own.
                # Element e of C is always p_lo(e) + p_hi(e) (fp32 addition of two terms commutes), so
                # the result is the same bits on every run.
                peer = cta_rank ^ 1
                # both warpgroups' wgmma have completed: this CTA's ring is read by nobody any more
                # (every stage it will ever receive has landed and been consumed), so the peer may
                # overwrite it with its half
                epi_barrier.arrive_and_wait()
                if xchg_thread:
                    cute.arch.mbarrier_arrive_and_expect_tx(xchg_full, XCHG_BYTES)
                    cute.arch.mbarrier_arrive(xchg_free, peer, scope=nvvm.MemScopeKind.CLUSTER)
                cute.arch.mbarrier_wait(xchg_free, 0)  # phase 0: the peer's ring is free for my half
                is_rank0 = cute.full(slab_frag.shape, cta_rank == 0, cutlass.Boolean)
                for jj in cutlass.range_constexpr(HALF):
                    lo = acc_slabs[(None, jj), 0, 0].load()
                    hi = acc_slabs[(None, jj + HALF), 0, 0].load()
                    slab_frag.store(cute.where(is_rank0, hi, lo))  # the peer's slab jj of its half
                    for q in cutlass.range_constexpr(VALS // 4):
                        # 16 B per thread and quad, a warp's 32 quads contiguous (512 B)
                        cute.arch.store_async_dsmem(
                            mbox_ptr + cute.assume(((jj * (VALS // 4) + q) * MMA_THREADS + mma_tidx) * 4, divby=4),
                            (
                                slab_frag[4 * q].bitcast(cutlass.Int32),
                                slab_frag[4 * q + 1].bitcast(cutlass.Int32),
                                slab_frag[4 * q + 2].bitcast(cutlass.Int32),
                                slab_frag[4 * q + 3].bitcast(cutlass.Int32),
                            ),
                            xchg_full,
                            peer,
                        )
                # keep the wait below after this thread's remote stores
                cute.arch.fence_acq_rel_cta()
                cute.arch.mbarrier_wait(xchg_full, 0)  # the peer's half of my slabs has landed
                if xchg_thread:
                    # phase 1 of the peer's free barrier: its stores into this CTA are complete
                    cute.arch.mbarrier_arrive(xchg_free, peer, scope=nvvm.MemScopeKind.CLUSTER)

                # ---- epilogue of my half: slabs keep_first + jj through buffers jj % EPI_STAGES; the fused
                # epilogue (phase 6's) applies to the sum of both halves, at slab keep_first + jj's coordinates
                # (a slab index known only at run time, from the rank: each slab loads its own bias)
                bSG_sC, bSG_gC = ct.tma_store_boxes(tma_atom_c, sC, gC, m_tile, n_tile, BM, self.epi_n // PAIR)
                epi = ct.epilogue_args(cfg, thr_mma, (M, N), mBias, mD, m_tile, n_tile, (BM, BN), self.epi_n,
                                       preload_bias=False)
                keep_first = cta_rank * HALF
                for jj in cutlass.range_constexpr(HALF):
                    lo = acc_slabs[(None, jj), 0, 0].load()
                    hi = acc_slabs[(None, jj + HALF), 0, 0].load()
                    recv = cute.make_tensor(
                        mbox_ptr + cute.assume((jj * (VALS // 4) * MMA_THREADS + mma_tidx) * 4, divby=4), mbox_slab
                    )
                    cute.autovec_copy(recv, recv_frag)
                    slab_frag.store(cute.where(is_rank0, lo, hi) + recv_frag.load())
                    ct.store_slab(
                        slab_frag, tCsC_slabs[(None, jj), 0, 0], bSG_sC[(None, jj % EPI_STAGES)],
                        bSG_gC[(None, (0, keep_first + jj))], tma_atom_c, epi_barrier, store_thread, EPI_STAGES,
                        None if cutlass.const_expr(epi is None) else epi.at(epi.coords[(None, keep_first + jj), 0, 0]),
                    )
                # phase 1 of my free barrier: the peer has received my half, so no st.async of mine is
                # still in flight and the peer no longer touches this CTA's smem: safe to exit
                cute.arch.mbarrier_wait(xchg_free, 1)

            pdl_launch_dependents(cfg)
            if store_thread:
                cute.arch.cp_async_bulk_wait_group(0, read=True)  # smem must outlive the stores' reads
