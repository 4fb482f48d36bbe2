"""sm100 phase 6: persistent pairs, a double-buffered TMEM accumulator, grouped raster (beyond the worklog).

Compared to phase 5 (one cluster of 2 CTAs per 256x256 pair tile; 512 CTAs at 4096^3, two resident
per SM), the grid is now at most one CTA per SM and each cluster walks its pair tiles itself:
1. persistent tile loop: ``min(pair tiles, sm_count // 2)`` clusters of 2 CTAs; cluster c computes pair tiles
   c, c + clusters, ... (the DSL's static round robin written out as a loop, as in sm90 phase 6); both CTAs of
   a pair walk the same list, so the cta_group::2 MMA, the leader's full barriers and the multicast commits
   work unchanged; setup (barriers, cluster sync, TMEM allocation) is paid once per CTA, not once per tile;
2. two accumulator stages in TMEM (``acc_stages=2``, a ``PipelineUmmaAsync`` from the leader's MMA warp to the
   8 epilogue warps of both CTAs): tile i accumulates into stage i % 2, so the MMA warp starts tile i+1 the
   moment tile i's last MMA is issued, while the epilogue drains tile i and releases its stage once its
   tcgen05.ld's are done (``tcgen05.wait::ld``), not when its TMA stores land;
3. the TMA producer warp's ring state runs on across tiles (the pipeline fill is paid once per CTA);
4. the TMA-store epilogue is asynchronous across tiles: the wait before a staging buffer is rewritten
   (``cp.async.bulk.wait_group.read 1``) also runs for a tile's first two chunks, whose buffers the previous
   tile's stores read; only a CTA's very last stores are waited for, before TMEM is freed;
5. grouped (L2-aware) raster: pair tiles numbered in bands of ``group_m`` pair rows with N walked inside a
   band (``grouped_pair_tile``): the 74 clusters of one round at 4096^3 cover 8 pair rows x 10 N tiles,
   36 MiB of A and B at K=4096 against 42 MiB for an M-first or N-first order (16 x 5 tiles).

Why: phase 5's per-CTA setup, pipeline fill and epilogue (128 KiB of fp32 per CTA and tile) are hidden only
when the SM's other resident CTA happens to be in its mainloop; here they run under the next tile's MMAs,
except after a CTA's last tile. Persistence removes per-tile fixed costs, not waves (256 pair tiles over 74
clusters = 3.46 rounds at 4096^3): phase 7 splits the partial last round along K. Nothing here is measured
(no Blackwell GPU in this workplace: compile-verified only; the estimates, TMEM and smem: docs/lessons.md).
``use_pdl`` (on in what ``phase="best"`` runs): programmatic dependent launch, as sm90's phases 6-8. ``sm_count``: a
config field (default 148, a B200's SMs); on a GPU a default one becomes the CTAs of what fits (``plan``).
``cluster_n=2`` (a config, as sm90 phase 6's): two pairs along N share the A tile, each multicasting half of it.

Constraints:
- Operands (``phases.operands``, read from the tensors): fp16 or bf16 A and B, A K-major (the worklog's) or
  M-major, B N-major (the worklog's) or K-major (a transposed [N, K] weight), C fp32 / fp16 / bf16 row-major
  (staged as in phase 5). Any M >= 1 with N and K multiples of 8 (16-B TMA rows) for the worklog's layouts;
  the contiguous extent of each operand must be a multiple of 8 (an M-major A: M too).
- Partial tiles as in phase 5; pair-tile and cluster counts are runtime values (``schedule``). Phase 11's
  epilogue fields (bias, activation, residual; off by default) apply to each TMEM chunk before its rounding.
- sm_100a / sm_103a; cluster launch (2 x cluster_n,1,1), grid min(cluster tiles, sm_count / its CTAs) x its CTAs;
  320 threads per CTA (epilogue warps 0-7, MMA warp 8, TMA warp 9); TMEM 512 columns, ~161 KiB smem per CTA.
- (BN / (epi_warps / 4) / 32) % epi_stages == 0: a tile's chunk j uses the same staging buffer in every tile.
"""

import dataclasses

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
import cutlass.utils.blackwell_helpers as sm100_utils
from cutlass.cute.nvgpu import cpasync, tcgen05
from cutlass.memory import SmemAllocator
from cutlass.tensor_utils import LayoutEnum

from phases import epilogue, operands
from phases.base import GemmPhase, TileConfig
from phases.cluster import require_cluster_dims
from phases.pdl import pdl_launch_dependents, pdl_wait
from phases.raster import ceil_div, persistent_clusters
from phases.raster import grouped_tile_coord as grouped_pair_tile  # tiles_m = pair rows
from phases.sm100 import common
from phases.sm100 import common_tma as ct

SMEM_OPT_IN_MAX = 227 * 1024  # the most dynamic smem one CTA may ask for on sm100


@dataclasses.dataclass(frozen=True)
class Sm100Phase6Config(TileConfig, epilogue.EpilogueFields):
    """Phase 5's pair and tile, persistent: 2 TMEM accumulator stages, a deeper ring, a grouped raster."""

    bn: int = 256  # per CTA and accumulator stage 128 x 256 fp32 = 256 TMEM columns; the pair's MMA is m256n256k16
    stages: int = 6  # NSTAGES: phase 5's 2 resident CTAs x 3 stages per SM, now in the SM's one CTA
    cluster_m: int = 2  # __cluster_dims__(2,1,1): the pair; tile_m() = 256 is the M divisibility unit
    cluster_n: int = 1  # pairs per cluster along N: 2 share (multicast) the A tile, sm90 phase 6's cluster_n
    epi_warps: int = 8  # warps 0-7 drain the accumulator (lanes (w%4)*32, column half w//4); warp 8 MMA, warp 9 TMA
    epi_stages: int = 2  # staging buffers per warp: the st.shared of chunk j+1 overlaps the TMA store of chunk j
    acc_stages: int = 2  # TMEM accumulators: the MMA fills one while the epilogue drains the other (2 x 256 columns)
    group_m: int = 8  # raster band height in pair tiles (8 x 256 = 2048 rows of C)
    sm_count: int = 148  # SMs the persistent grid fills without a GPU (a B200); on a GPU: what fits (module docstring)
    use_pdl: bool = False  # programmatic dependent launch (off as taught; phase="best"'s candidates turn it on)


class Sm100Phase6(common.Guarded, GemmPhase):
    arch = "sm100"
    phase = "6"
    Config = Sm100Phase6Config
    summary = "phase 5 persistent: <= 1 CTA per SM, pairs loop over a grouped raster, 2 TMEM accumulator stages"
    adds = "persistent grouped-raster tile loop; 2 TMEM accumulators: tile i's epilogue overlaps tile i+1's MMAs"
    worklog = ""

    def config_problems(self) -> list[str]:
        c = self.cfg
        why = [] if c.cluster_n in (1, 2) else [f"cluster_n={c.cluster_n}: 1, or 2 (two pairs along N sharing A)"]
        return (common.tile_problems(c, 2) + common.epilogue_warp_problems(c.epi_warps) + why
                + common.persistent_problems(c, self.cluster_ctas, self.cluster_ctas)
                + c.epilogue_problems(gated_ok=False))

    @property
    def cluster_ctas(self) -> int:
        """CTAs per cluster: the pair (``cluster_m`` 2) x ``cluster_n`` pairs along N, launched as one row."""
        return self.cfg.cluster_m * self.cfg.cluster_n

    def _setup_attributes(self):
        self.refuse_bad_config()
        c = self.cfg
        self.mma_tiler = (c.bm * c.cluster_m, c.bn, c.bk)  # the pair's 256x256 tile, one m256n256k16 per 16 of K
        self.threads = 32 * (c.epi_warps + 2)  # + the MMA warp and the TMA producer warp
        # per CTA: its 128 rows of the pair's accumulator, once per stage (2 x 256 = all 512 columns)
        self.tmem_cols = common.tmem_cols_for(c.bn * c.acc_stages)
        assert self.tmem_cols <= common.TMEM_COLUMNS, (
            f"acc_stages={c.acc_stages} accumulators of bn={c.bn} columns take {self.tmem_cols} TMEM columns, more "
            f"than the {common.TMEM_COLUMNS} an SM has"
        )
        self.cluster = (self.cluster_ctas, 1, 1)
        self.tiled_mma = ct.make_tiled_mma(c.bm * c.cluster_m, c.bn, tcgen05.CtaGroup.TWO, self.types)
        # (V, M, N, K) cluster layout: V = the 2 CTAs of one MMA; with cluster_n 2, N = the pairs that share A by
        # multicast (rank = v + 2 n: the cluster launched as one row of CTAs)
        self.cluster_vmnk = cute.tiled_divide(cute.make_layout((c.cluster_m, c.cluster_n, 1)), (self.tiled_mma.thr_id,))
        self.a_smem_layout, self.b_smem_layout = ct.make_ab_smem_layouts(
            self.tiled_mma, self.mma_tiler, c.stages, self.types.ab
        )
        # this CTA's A rows and half of B
        a_bytes, b_bytes = ct.stage_bytes(self.a_smem_layout, self.b_smem_layout, self.types.ab)
        # the leader's full barrier counts both CTAs' bytes: each CTA's TMA completes on rank 0's barrier
        self.tx_bytes = (a_bytes + b_bytes) * c.cluster_m
        # C staging: per column part and stage one (128, 32) fp32 tile, SW128 (8-row atoms of 128 B, rows
        # in order, so a warp's 32 rows and each 16-row box are contiguous and 1024-B aligned)
        epi_buffers = (c.epi_warps // 4) * c.epi_stages
        self.epi_smem_layout = sm100_utils.make_smem_layout_epi(
            self.types.c, LayoutEnum.ROW_MAJOR, (c.bm, ct.EPI_CHUNK), epi_buffers
        )
        # chunk j of every tile must land in the same buffer, so the wait before reusing one is static
        assert ct.epi_chunks(c.epi_warps, c.bn) % c.epi_stages == 0, "chunks per warp must be a multiple of epi_stages"
        epi_bytes = int(cute.size_in_bytes(self.types.c, self.epi_smem_layout))
        self.shared_storage = ct.make_shared_storage(c.stages, c.acc_stages)
        used = ct.smem_bytes_of(self.shared_storage, a_bytes * c.stages, b_bytes * c.stages, epi_bytes)
        # asked for: what the kernel uses, raised so that smem admits no more CTAs per SM than TMEM holds
        self.smem_bytes = common.smem_request(used, self.tmem_cols)
        # TMEM (all 512 columns) already limits the SM to this one CTA: smem may use what a CTA can ask for
        assert self.smem_bytes <= SMEM_OPT_IN_MAX, f"{self.smem_bytes} B of smem per CTA: lower stages or epi_stages"

    def schedule(self, m, n, k):
        """(pair tiles, clusters launched) for an (m, n, k) problem: one cluster per SM pair, never more than
        the pair tiles. Python or DSL integers (the kernel runs the same arithmetic on its runtime extents)."""
        c = self.cfg
        tiles = ceil_div(m, c.tile_m()) * ceil_div(n, c.bn * c.cluster_n)
        return tiles, persistent_clusters(tiles, c.sm_count // self.cluster_ctas)

    def grid(self, m, n, k):
        return (self.schedule(m, n, k)[1] * self.cluster_ctas, 1, 1)

    def pair_tile(self, tile, pair_tiles_m, tiles_n, groups_n, pair_n):
        """(pair row, N tile) of pair ``pair_n`` of the cluster in cluster tile ``tile`` of the grouped raster: the
        raster walks cluster tiles, one pair row by ``cluster_n`` N tiles (``groups_n`` of them per row)."""
        c = self.cfg
        if c.cluster_n == 1:
            return grouped_pair_tile(tile, pair_tiles_m, tiles_n, c.group_m)
        m_pair, n_group = grouped_pair_tile(tile, pair_tiles_m, groups_n, c.group_m)
        return m_pair, n_group * c.cluster_n + pair_n

    @cute.jit
    def __call__(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream, mBias=None, mD=None):
        self.types = operands.read(mA, mB, mC)  # element types and majors, as given
        self._setup_attributes()
        tma_op = cpasync.CopyBulkTensorTileG2SOp(tcgen05.CtaGroup.TWO)
        # A multicast to the pairs along N (cluster_n 2): each loads 1/cluster_n of its A box, for every pair
        a_op = cpasync.CopyBulkTensorTileG2SMulticastOp(tcgen05.CtaGroup.TWO) if self.cfg.cluster_n > 1 else tma_op
        tma_atom_a, mA_tma, tma_atom_b, mB_tma = ct.make_ab_tma_atoms(
            tma_op, mA, mB, self.a_smem_layout, self.b_smem_layout, self.mma_tiler, self.tiled_mma,
            self.cluster_vmnk.shape, a_op=a_op,
        )
        # the TMA store atom: one {32 columns, 16 rows} box of the staging tile, SWIZZLE_128B; boxes that
        # stick out of C are clipped by the TMA unit
        box_smem_layout = sm100_utils.make_smem_layout_epi(self.types.c, LayoutEnum.ROW_MAJOR, ct.EPI_BOX, 1)
        tma_atom_c, mC_tma = cpasync.make_tiled_tma_atom(
            cpasync.CopyBulkTensorTileS2GOp(), mC, cute.select(box_smem_layout, mode=[0, 1]), ct.EPI_BOX
        )
        # phase 11's fused epilogue on this kernel (``cfg.bias`` etc.): the bias seen with C's shape
        bias = epilogue.bias_view(mBias, mC, n_mode=1) if cutlass.const_expr(mBias is not None) else None
        self.kernel(
            self.tiled_mma, tma_atom_a, mA_tma, tma_atom_b, mB_tma, tma_atom_c, mC_tma,
            self.a_smem_layout, self.b_smem_layout, self.epi_smem_layout, self.cluster_vmnk, bias, mD,
        ).launch(grid=self.grid(*self.problem_mnk(mA, mC)), block=(self.threads, 1, 1), cluster=self.cluster,
                 smem=self.smem_bytes, use_pdl=self.cfg.use_pdl, stream=stream)

    @cute.kernel
    def kernel(
        self,
        tiled_mma: cute.TiledMma,
        tma_atom_a: cute.CopyAtom,
        mA_tma: cute.Tensor,
        tma_atom_b: cute.CopyAtom,
        mB_tma: cute.Tensor,
        tma_atom_c: cute.CopyAtom,
        mC_tma: cute.Tensor,
        a_smem_layout: cute.ComposedLayout,
        b_smem_layout: cute.ComposedLayout,
        epi_smem_layout: cute.ComposedLayout,
        cluster_vmnk: cute.Layout,
        mBias,
        mD,
    ):
        c = self.cfg
        NSTAGES = c.stages
        EPI_WARP0, MMA_WARP, TMA_WARP = 0, c.epi_warps, c.epi_warps + 1  # warp roles
        tidx, _, _ = cute.arch.thread_idx()
        warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        bidx, _, _ = cute.arch.block_idx()
        require_cluster_dims(self.cluster)  # PTX .reqnctapercluster 2, 1, 1 (4 with cluster_n 2)
        mma_v = bidx % c.cluster_m  # rank of this CTA in the pair (cluster (2,1,1) along M)
        pair_n = (bidx // c.cluster_m) % c.cluster_n if c.cluster_n > 1 else 0  # the cluster's pair along N
        is_leader_cta = mma_v == 0  # rank 0 issues the pair's MMAs and owns the full barriers

        # the persistent schedule: the pair in slot s (here: cluster s) takes pair tiles s, s + clusters,
        # s + 2 clusters, ...; both CTAs of the pair walk the same list, so their TMA bytes, MMAs and
        # arrivals stay matched
        slot = bidx // self.cluster_ctas
        pair_tiles_m = ceil_div(mC_tma.shape[0], self.mma_tiler[0])  # a partial last tile counts
        tiles_n = ceil_div(mC_tma.shape[1], self.mma_tiler[1])
        groups_n = ceil_div(tiles_n, c.cluster_n) if c.cluster_n > 1 else tiles_n  # the raster's cluster columns
        pair_tiles, clusters = self.schedule(mC_tma.shape[0], mC_tma.shape[1], mA_tma.shape[1])

        # --- smem: barriers, the A and B rings (1024-B aligned for SW64/SW128), the C staging tiles ---
        smem = SmemAllocator()
        storage = smem.allocate(self.shared_storage)
        _, sA, sB = ct.allocate_ab_ring(smem, a_smem_layout, b_smem_layout, self.types.ab)
        sC = smem.allocate_tensor(
            self.types.c, epi_smem_layout.outer, byte_alignment=ct.SMEM_ALIGN, swizzle=epi_smem_layout.inner
        )

        # --- TMEM: epilogue warp 0 allocates both accumulator stages; the MMA and epilogue warps read the address ---
        # (constructed here so that its 2-CTA dealloc mbarrier is initialised before the pipelines' cluster
        # sync below publishes it to the peer; the columns are allocated after that sync)
        tmem = common.TmemAllocator(
            storage.tmem_holding_buf.ptr,
            barrier_for_retrieve=pipeline.NamedBarrier(barrier_id=1, num_threads=32 * (c.epi_warps + 1)),
            allocator_warp_id=EPI_WARP0,
            is_two_cta=True,  # tcgen05.alloc/dealloc.cta_group::2: both CTAs allocate the same columns
            two_cta_tmem_dealloc_mbar_ptr=storage.tmem_dealloc_mbar.ptr,
        )

        if warp_idx == TMA_WARP:
            cpasync.prefetch_descriptor(tma_atom_a)
            cpasync.prefetch_descriptor(tma_atom_b)
            cpasync.prefetch_descriptor(tma_atom_c)

        # full[s]: armed with expect_tx(tx_bytes) by the leader's producer, completed by both CTAs' TMA bytes.
        # empty[s]: arrived in both CTAs by one tcgen05.commit.multicast::cluster (mask 0b11) once the
        # pair's MMAs that read slot s have finished, so each CTA's producer may refill its half; with cluster_n 2
        # by each pair's commit (mask 0b1111): a CTA's A slice lands in both pairs, so both must be done with it
        ab_producer, ab_consumer = common.cluster_scoped(pipeline.PipelineTmaUmma.create(
            num_stages=NSTAGES,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, c.cluster_n),
            tx_count=self.tx_bytes,
            barrier_storage=storage.ab_mbar.data_ptr(),
            cta_layout_vmnk=cluster_vmnk,
        )).make_participants()
        # accumulator stage s full: the tile's last commit multicasts to both CTAs' acc full[s]; every
        # epilogue thread of the pair waits on its own CTA's barrier and releases stage s to the leader's
        # acc empty[s] (hence 2 x the epilogue threads), which the MMA warp acquires two tiles later
        acc_producer, acc_consumer = common.cluster_scoped(pipeline.PipelineUmmaAsync.create(
            num_stages=c.acc_stages,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            consumer_group=pipeline.CooperativeGroup(
                pipeline.Agent.Thread, c.cluster_m * 32 * c.epi_warps
            ),
            barrier_storage=storage.acc_mbar.data_ptr(),
            cta_layout_vmnk=cluster_vmnk,
        )).make_participants()
        # TMEM columns, allocated only after the pipelines' cluster-wide arrive/wait: a cta_group::2 alloc is
        # performed by a warp of each CTA of the pair together, and the PTX ISA requires the issuing warp to
        # know that the peer CTA has launched and is still running
        tmem.allocate(self.tmem_cols)
        tmem.relinquish_alloc_permit()  # nothing else to allocate: a co-resident CTA's alloc need not wait

        # --- partition every tile: the (2*BM, BK, pair rows, k) A, (BN, BK, N tiles, k) B and
        # (2*BM, BN, pair rows, N tiles) C views; the MMA slice of rank v selects this CTA's 128 rows
        # of A and C and its half (128 columns) of B; the tile loop below only picks coordinates ---
        gA = cute.local_tile(mA_tma, self.mma_tiler, (None, None, None), proj=(1, None, 1))
        gB = cute.local_tile(mB_tma, self.mma_tiler, (None, None, None), proj=(None, 1, 1))
        gC = cute.local_tile(mC_tma, self.mma_tiler, (None, None, None), proj=(1, 1, None))  # TMA coordinates of C
        thr_mma = tiled_mma.get_slice(mma_v)
        tCgA = thr_mma.partition_A(gA)  # (MMA, MMA_M, MMA_K, pair rows, k_tiles)
        tCgB = thr_mma.partition_B(gB)  # (MMA, MMA_N, MMA_K, N tiles, k_tiles)
        tCgC = thr_mma.partition_C(gC)  # (MMA, MMA_M, MMA_N, pair rows, N tiles)
        # the fused epilogue's C coordinates, partitioned as C is (only where the config has the epilogue)
        if cutlass.const_expr(c.epilogue_active()):
            cC = cute.local_tile(cute.make_identity_tensor(mC_tma.shape), self.mma_tiler, (None, None, None),
                                 proj=(1, 1, None))
            tCcC = thr_mma.partition_C(cC)
        tCrA = tiled_mma.make_fragment_A(sA)  # smem descriptors, (MMA, MMA_M, MMA_K, NSTAGES)
        tCrB = tiled_mma.make_fragment_B(sB)
        # (MMA, MMA_M, MMA_N, ACC_STAGES): stage s is 256 TMEM columns after stage s-1
        acc_shape = tiled_mma.partition_shape_C(self.mma_tiler[:2])
        tCtAcc_fake = tiled_mma.make_fragment_C(cute.append(acc_shape, c.acc_stages))
        # one TMA copy per stage and operand: A is one box (with cluster_n 2, pair n loads slice n of it and
        # multicasts it to the same rank of both pairs), this CTA's half of B is (BN/2)/64 = 2 slab boxes
        tAsA, tAgA = cpasync.tma_partition(
            tma_atom_a, pair_n, cute.make_layout(c.cluster_n), cute.group_modes(sA, 0, 3), cute.group_modes(tCgA, 0, 3)
        )
        a_mcast_mask = None
        if cutlass.const_expr(c.cluster_n > 1):
            a_mcast_mask = cpasync.create_tma_multicast_mask(
                cluster_vmnk, cluster_vmnk.get_flat_coord(bidx % self.cluster_ctas), mcast_mode=2
            )
        tBsB, tBgB = cpasync.tma_partition(
            tma_atom_b, 0, cute.make_layout(1), cute.group_modes(sB, 0, 3), cute.group_modes(tCgB, 0, 3)
        )

        pdl_wait(c)  # launched early (use_pdl): no global access before the previous kernel has finished

        k_tiles = cute.size(gA, mode=[3])
        if warp_idx == TMA_WARP:
            # --- producer warp: runs up to NSTAGES k-tiles ahead, across tile boundaries too ---
            for tile in cutlass.range(slot, pair_tiles, clusters, unroll=1):
                m_pair, n_tile = self.pair_tile(tile, pair_tiles_m, tiles_n, groups_n, pair_n)
                ab_producer = ct.load_k_tiles(
                    ab_producer, tma_atom_a, tAgA, tAsA, tma_atom_b, tBgB, tBsB, m_pair, n_tile, 0, k_tiles,
                    a_mcast_mask,
                )
            ab_producer.tail()  # wait for the last empty arrivals so no commit lands after this CTA exits
        else:
            tmem.wait_for_alloc()
            tmem_ptr = tmem.retrieve_ptr(ct.ACC_DTYPE)
            tCtAcc_base = cute.make_tensor(tmem_ptr, tCtAcc_fake.layout)

            if warp_idx == MMA_WARP:
                # --- MMA warp of the leader: one thread issues the pair's m256n256k16 MMAs, which read
                # A and B from both CTAs' smem and write both CTAs' TMEM; the peer's MMA warp idles ---
                if is_leader_cta:
                    for tile in cutlass.range(slot, pair_tiles, clusters, unroll=1):
                        # stage tile % 2 is free once both CTAs' epilogues of the tile two back released it
                        acc_empty = acc_producer.acquire_and_advance()
                        common.tmem_acquired()  # the MMAs below overwrite what both epilogues read
                        ab_consumer, tiled_mma = ct.mma_k_tiles(
                            ab_consumer, tiled_mma, tCtAcc_base[(None, None, None, acc_empty.index)], tCrA, tCrB,
                            k_tiles,
                        )
                        acc_empty.commit()  # commit multicast -> acc full[stage] in both CTAs; next tile starts at once
                    acc_producer.tail()  # wait for both CTAs' last epilogue releases: no arrival after exit
            else:
                # --- epilogue warps 0..7: per tile, warp w drains TMEM lanes (w%4)*32.. of column half w//4,
                # chunk by chunk: TMEM -> registers -> staging smem -> TMA store (the stores drain behind) ---
                for tile in cutlass.range(slot, pair_tiles, clusters, unroll=1):
                    m_pair, n_tile = self.pair_tile(tile, pair_tiles_m, tiles_n, groups_n, pair_n)
                    acc_full = acc_consumer.wait_and_advance()
                    common.tmem_acquired()  # the tcgen05.ld's below read what the MMAs wrote
                    tiled_t2r, tTR_tAcc, tTR_sC, tCsC, tCgC_box = ct.epi_views(
                        tCtAcc_base[(None, None, None, acc_full.index)], tCgC[(None, None, None, m_pair, n_tile)],
                        sC, tma_atom_c, warp_idx, tidx, c.bm, c.bn, c.epi_warps,
                    )
                    tTR_rAcc = cute.make_rmem_tensor(tTR_sC[None, None, None, 0].shape, ct.ACC_DTYPE)
                    epi = None
                    if cutlass.const_expr(c.epilogue_active()):
                        epi = epilogue.EpilogueArgs(tCcC[(None, None), 0, 0, m_pair, n_tile], mC_tma.shape, mBias, mD,
                                                    c.activation)
                    for j in cutlass.range_constexpr(ct.epi_chunks(c.epi_warps, c.bn)):
                        ct.load_chunk(tiled_t2r, tTR_tAcc, tTR_rAcc, j)
                        ct.store_chunk(tTR_rAcc, tTR_sC, tCsC, tCgC_box, tma_atom_c, warp_idx, j, c.epi_warps, c.bn,
                                       c.epi_stages, epi)
                    common.tmem_reads_done()  # this thread's tcgen05.ld's of the stage, before the release
                    acc_full.release()  # the MMA may refill the stage
                # the staging smem must outlive the TMA's reads of the CTA's last stores
                cute.arch.cp_async_bulk_wait_group(0, read=True)

                # every epilogue warp's tcgen05.ld is done before the columns are freed
                common.free_tmem(tmem, tmem_ptr, pipeline.NamedBarrier(barrier_id=2, num_threads=32 * c.epi_warps))
                pdl_launch_dependents(c)  # this CTA's tiles are stored: the next kernel may start
