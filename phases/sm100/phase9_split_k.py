"""sm100 phase 9: split-K in a cluster -- a tile's K range over split_k CTAs, partial tiles added in rank order through DSMEM (beyond the worklog).

Compared to phase 3 (one CTA per tile walks all of K), the ``split_k`` CTAs of a cluster (split_k, 1, 1)
compute the same 128 x BN tile of C, CTA r over the k-tiles [r K/S, (r+1) K/S):
1. each CTA runs phase 3's warp-specialized mainloop (TMA warp, MMA warp, 4 epilogue warps) over its K
   range only, into its own TMEM accumulator (cta_group::1: the CTAs share no MMA, no barrier);
2. once the accumulator barrier says the last MMA is done (so no TMA or MMA touches the A/B ring any
   more), the epilogue warps drain TMEM (tcgen05.ld 32x32b) into an fp32 partial tile over the ring,
   laid out like C, its lines padded by 16 B; a CTA whose K range is empty writes zeros;
3. cluster barrier (``barrier.cluster.arrive`` / ``wait``: release / acquire at cluster scope): the
   cluster's partial tiles are written and visible to every CTA of it;
4. reduce-scatter: CTA r owns lines [r L/S, (r+1) L/S) of the tile's L lines (rows of a row-major C);
   its epilogue threads read 16-B vectors of them from every CTA's partial tile, their own included
   (``mapa`` + ``ld.shared::cluster``), add them in rank order ((p0 + p1) + p2) + ..., round to C's
   type and store them along C's contiguous mode (``st.global``), predicated at C's edges;
5. a second cluster barrier: no CTA exits while a peer may still read its smem.
The order of the additions never depends on timing: every run gives the same bits. No workspace, no
atomics, no flag in global memory, no wait on a CTA that might not be resident (a cluster's CTAs are
co-scheduled).

Why: phase 7 splits only the last round of a persistent grid. A problem with fewer tiles than SMs
(512^3: 16 tiles of 128x128 for 148 SMs; 1024 x 1024 x 8192: 64) leaves SMs idle while each busy one
walks all of K alone. S-way split-K puts S CTAs on each tile, each running
1/S of the k-loop, for the price of one partial tile through smem and (S-1)/S of one over DSMEM per CTA.
``use_pdl`` (programmatic dependent launch: ``griddepcontrol.wait`` before the first global access) and
``ctas_per_sm`` (``.minnctapersm``; residency the smem and TMEM budgets must allow) are phase 10's
knobs. Nothing here is measured: no Blackwell GPU in this workplace.

Constraints:
- split_k in 1..8 (a portable cluster; 1 launches no cluster); bm == 128 (one m128nBNk16 per CTA: row r
  = TMEM lane r, as the 32x32b drain reads it); bn a multiple of 16 in 16..256; 4 epilogue warps.
- The fp32 partial tile fits in the A/B ring; the tile's lines divide by split_k; ctas_per_sm CTAs fit
  in an SM's smem and TMEM.
- Operands as phase 3 (fp16/bf16 A and B in either major, fp32/fp16/bf16 C); C row-major, or
  column-major (phase 10's C^T); any M, N, K with the operands' contiguous extents multiples of 8.
- sm_100a / sm_103a; 192 threads (epilogue warps 0-3, MMA warp 4, TMA warp 5); TMEM: bn columns.
"""

import dataclasses

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
from cutlass.cute.nvgpu import cpasync, tcgen05
from cutlass.memory import SmemAllocator
from cutlass.tensor_utils import LayoutEnum

from phases import epilogue, operands
from phases.base import GemmPhase, TileConfig
from phases.cluster import add_in_rank_order, require_cluster_dims
from phases.pdl import pdl_launch_dependents, pdl_wait
from phases.raster import ceil_div, grouped_tile_coord
from phases.sm100 import common
from phases.sm100 import common_tma as ct

VEC = 4  # fp32 per vector of the reduce: 16 B, one ld.shared::cluster.v4
PAD = 4  # fp32 appended to each line of the partial tile: consecutive lines start 16 B apart in the banks


@dataclasses.dataclass(frozen=True)
class Sm100Phase9Config(TileConfig):
    """Phase 3's CTA on a 128 x 128 tile with a deep ring, split_k CTAs per tile."""

    bn: int = 128  # m128n128k16: 128 TMEM columns
    bk: int = 64  # a stage is (128 + 128) x 64 x 2 B = 32 KiB
    stages: int = 6  # 6 x 32 KiB = 192 KiB: one CTA per SM
    epi_warps: int = 4  # warps 0-3 drain the accumulator and reduce; warp 4 MMA, warp 5 TMA
    group_m: int = 8  # raster band height in tiles
    split_k: int = 2  # CTAs per cluster, one K range each
    ctas_per_sm: int = 1  # residency the smem and TMEM budgets must allow (.minnctapersm)
    use_pdl: bool = False  # programmatic dependent launch (phase 10 turns it on)


class Sm100Phase9(GemmPhase):
    arch = "sm100"
    phase = "9"
    Config = Sm100Phase9Config
    summary = "split-K in a cluster: split_k CTAs share a tile's k-loop, partial tiles added in rank order via DSMEM"
    adds = "split-K: a starved grid gets split_k CTAs per tile, partial sums reduced through DSMEM (deterministic)"
    worklog = ""
    parent = "3"
    c_majors = ("n", "m")  # the reduce stores along C's contiguous mode, either one

    def config_problems(self) -> list[str]:
        """``_setup_attributes``'s asserts that read the config alone: the tcgen05 tile of one CTA
        (``common.tile_problems``), a portable cluster of split_k CTAs, 4 epilogue warps; residency, the partial
        tile and the split of its lines depend on sizes the compile computes and on C's major: asserted there."""
        why = super().config_problems()
        if why:
            return why
        c = self.cfg
        why = common.tile_problems(c, 1)
        if c.split_k > 8:
            why.append(f"split_k={c.split_k}: split_k is 1..8 (a portable cluster)")
        if c.epi_warps != 4:
            why.append(f"epi_warps={c.epi_warps}: 4 epilogue warps, one per TMEM lane quarter")
        return why

    def _setup_attributes(self):
        c = self.cfg
        assert c.bm == 128, "bm is 128: one m128 MMA per CTA, row r = TMEM lane r (what the 32x32b drain reads)"
        assert c.bn % 16 == 0 and 16 <= c.bn <= 256, f"bn={c.bn}: bn is a multiple of 16 in 16..256 (an M=128 MMA)"
        assert 1 <= c.split_k <= 8, "split_k is 1..8: a portable cluster"
        assert c.epi_warps == 4, "4 epilogue warps: one per TMEM lane quarter"
        self.mma_tiler = (c.bm, c.bn, c.bk)
        self.threads = 32 * (c.epi_warps + 2)  # + the MMA warp and the TMA producer warp
        self.tmem_cols = common.tmem_cols_for(c.bn)
        self.cluster = (c.split_k, 1, 1)
        self.tiled_mma = ct.make_tiled_mma(c.bm, c.bn, tcgen05.CtaGroup.ONE, self.types)
        self.a_smem_layout, self.b_smem_layout = ct.make_ab_smem_layouts(
            self.tiled_mma, self.mma_tiler, c.stages, self.types.ab
        )
        a_bytes, b_bytes = ct.stage_bytes(self.a_smem_layout, self.b_smem_layout, self.types.ab)
        self.tx_bytes = a_bytes + b_bytes  # what expect_tx arms per stage: A's box + B's boxes
        self.shared_storage = ct.make_shared_storage(c.stages)
        used = ct.smem_bytes_of(self.shared_storage, a_bytes * c.stages, b_bytes * c.stages)
        # asked for: what the kernel uses, raised so that smem admits no more CTAs per SM than TMEM holds
        self.smem_bytes = common.smem_request(used, self.tmem_cols)
        held = min(common.residency(self.smem_bytes, self.tmem_cols))
        assert held >= c.ctas_per_sm, (
            f"{self.smem_bytes} B of smem and {self.tmem_cols} TMEM columns per CTA hold {held} CTA(s) per SM, "
            f"not ctas_per_sm={c.ctas_per_sm}: fewer stages or a smaller tile"
        )
        assert cute.cosize(self.partial_layout()) * 4 <= (a_bytes + b_bytes) * c.stages, (
            "the fp32 partial tile must fit in the A/B ring: more stages or a smaller tile"
        )
        lines = c.bm if self.types.c_layout == LayoutEnum.ROW_MAJOR else c.bn
        assert lines % c.split_k == 0, f"the tile's {lines} lines must split evenly over split_k={c.split_k} CTAs"

    def activation(self) -> str:
        """The fused epilogue's activation: none here (phase 11 has the field)."""
        return "none"

    def gated(self) -> bool:
        """Phase 11's gated pairs: C is half the GEMM's width (its tiles are counted on the kernel's A, below)."""
        return False

    def partial_layout(self) -> cute.Layout:
        """The fp32 partial tile, laid out like C: its contiguous mode contiguous, each line padded by PAD."""
        bm, bn = self.cfg.bm, self.cfg.bn
        row_major = self.types.c_layout == LayoutEnum.ROW_MAJOR
        return cute.make_layout((bm, bn), stride=(bn + PAD, 1) if row_major else (1, bm + PAD))

    def tiles(self, m, n, k):
        """C tiles of the problem (before the split)."""
        return ceil_div(m, self.cfg.bm) * ceil_div(n, self.cfg.bn)

    def grid(self, m, n, k):
        # split_k consecutive CTAs per tile: one cluster each, 1-D for the raster
        return (ceil_div(m, self.cfg.bm) * ceil_div(n, self.cfg.bn) * self.cfg.split_k, 1, 1)

    @cute.jit
    def __call__(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream, mBias=None, mD=None):
        self.types = operands.read(mA, mB, mC)  # element types and majors, as given
        self._setup_attributes()
        c = self.cfg
        tma_op = cpasync.CopyBulkTensorTileG2SOp(tcgen05.CtaGroup.ONE)
        tma_atom_a, mA_tma, tma_atom_b, mB_tma = ct.make_ab_tma_atoms(
            tma_op, mA, mB, self.a_smem_layout, self.b_smem_layout, self.mma_tiler, self.tiled_mma
        )
        split = {"cluster": self.cluster} if c.split_k > 1 else {}  # no split: a plain launch
        self.kernel(
            self.tiled_mma, tma_atom_a, mA_tma, tma_atom_b, mB_tma, mC, self.a_smem_layout, self.b_smem_layout, mBias, mD
        ).launch(grid=self.grid(*self.problem_mnk(mA, mC)), block=(self.threads, 1, 1), **split,
                 smem=self.smem_bytes, min_blocks_per_mp=c.ctas_per_sm, use_pdl=c.use_pdl, stream=stream)

    @cute.kernel
    def kernel(
        self,
        tiled_mma: cute.TiledMma,
        tma_atom_a: cute.CopyAtom,
        mA_tma: cute.Tensor,
        tma_atom_b: cute.CopyAtom,
        mB_tma: cute.Tensor,
        mC: cute.Tensor,
        a_smem_layout: cute.ComposedLayout,
        b_smem_layout: cute.ComposedLayout,
        mBias,
        mD,
    ):
        c = self.cfg
        S = c.split_k
        MMA_WARP, TMA_WARP = c.epi_warps, c.epi_warps + 1  # warp roles; warps 0-3 drain and reduce
        tidx, _, _ = cute.arch.thread_idx()
        warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        bidx, _, _ = cute.arch.block_idx()
        if cutlass.const_expr(S > 1):
            require_cluster_dims(self.cluster)  # PTX .reqnctapercluster S, 1, 1: the split is part of the kernel

        # this cluster's tile, and this CTA's K range: k-tiles [rank K/S, (rank + 1) K/S) (empty when K is short)
        # a partial last tile counts; the GEMM's M is C's, or A's rows where phase 11's gated pairs halve C's
        tiles_m = ceil_div(mA_tma.shape[0] if cutlass.const_expr(self.gated()) else mC.shape[0], c.bm)
        tiles_n = ceil_div(mC.shape[1], c.bn)
        m_tile, n_tile = grouped_tile_coord(bidx // S, tiles_m, tiles_n, c.group_m)
        rank = cute.arch.make_warp_uniform(cute.arch.block_idx_in_cluster())
        k_tiles = ceil_div(mA_tma.shape[1], c.bk)
        k_first = rank * k_tiles // S
        k_count = (rank + 1) * k_tiles // S - k_first

        # --- smem: barriers, then the A and B rings as one region (the partial tile overlays it later) ---
        smem = SmemAllocator()
        storage = smem.allocate(self.shared_storage)
        ring, sA, sB = ct.allocate_ab_ring(smem, a_smem_layout, b_smem_layout, self.types.ab)

        # --- TMEM: epilogue warp 0 allocates the accumulator's columns; the MMA and epilogue warps read the address ---
        tmem = common.TmemAllocator(
            storage.tmem_holding_buf.ptr,
            barrier_for_retrieve=pipeline.NamedBarrier(barrier_id=1, num_threads=32 * (c.epi_warps + 1)),
            allocator_warp_id=0,
        )
        tmem.allocate(self.tmem_cols)
        tmem.relinquish_alloc_permit()  # nothing else to allocate: a co-resident CTA's alloc need not wait

        if warp_idx == TMA_WARP:
            cpasync.prefetch_descriptor(tma_atom_a)
            cpasync.prefetch_descriptor(tma_atom_b)

        # the CTA's own ring and accumulator: CTA-local barriers, as in phase 3 (nothing is shared in the cluster
        # before the reduce)
        ab_producer, ab_consumer = pipeline.PipelineTmaUmma.create(
            num_stages=c.stages,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            tx_count=self.tx_bytes,
            barrier_storage=storage.ab_mbar.data_ptr(),
        ).make_participants()
        acc_producer, acc_consumer = pipeline.PipelineUmmaAsync.create(
            num_stages=1,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32 * c.epi_warps),
            barrier_storage=storage.acc_mbar.data_ptr(),
        ).make_participants()

        # --- partition: the tile's (BM, BK, k) A, (BN, BK, k) B, and the (BM, BN) accumulator ---
        mma_coord = (m_tile, n_tile, None)
        gA = cute.local_tile(mA_tma, self.mma_tiler, mma_coord, proj=(1, None, 1))
        gB = cute.local_tile(mB_tma, self.mma_tiler, mma_coord, proj=(None, 1, 1))
        thr_mma = tiled_mma.get_slice(0)
        tCgA = thr_mma.partition_A(gA)
        tCgB = thr_mma.partition_B(gB)
        tCrA = tiled_mma.make_fragment_A(sA)  # smem descriptors, (MMA, MMA_M, MMA_K, NSTAGES)
        tCrB = tiled_mma.make_fragment_B(sB)
        tCtAcc_fake = tiled_mma.make_fragment_C(tiled_mma.partition_shape_C(self.mma_tiler[:2]))
        tAsA, tAgA = cpasync.tma_partition(
            tma_atom_a, 0, cute.make_layout(1), cute.group_modes(sA, 0, 3), cute.group_modes(tCgA, 0, 3)
        )
        tBsB, tBgB = cpasync.tma_partition(
            tma_atom_b, 0, cute.make_layout(1), cute.group_modes(sB, 0, 3), cute.group_modes(tCgB, 0, 3)
        )

        # launched early (programmatic dependent launch, ``use_pdl``): the prologue above overlapped the previous
        # kernel's tail; no thread touches global memory before that kernel has finished and flushed
        pdl_wait(c)

        if warp_idx == TMA_WARP:
            # --- producer warp: this CTA's k-tiles only ---
            for kt in cutlass.range(k_count, unroll=1):
                ab_empty = ab_producer.acquire_and_advance()
                k = k_first + kt
                cute.copy(tma_atom_a, tAgA[(None, k)], tAsA[(None, ab_empty.index)], tma_bar_ptr=ab_empty.barrier)
                cute.copy(tma_atom_b, tBgB[(None, k)], tBsB[(None, ab_empty.index)], tma_bar_ptr=ab_empty.barrier)
            ab_producer.tail()  # wait for the last empty arrivals so no commit lands after this CTA exits
        else:
            tmem.wait_for_alloc()
            tmem_ptr = tmem.retrieve_ptr(ct.ACC_DTYPE)
            tCtAcc = cute.make_tensor(tmem_ptr, tCtAcc_fake.layout)
            if warp_idx == MMA_WARP:
                # --- MMA warp: this CTA's K range into its own accumulator ---
                acc_empty = acc_producer.acquire_and_advance()  # fresh barrier: passes at once
                tiled_mma.set(tcgen05.Field.ACCUMULATE, False)
                for kt in cutlass.range(k_count, unroll=1):
                    ab_full = ab_consumer.wait_and_advance()
                    for kb in cutlass.range_constexpr(cute.size(tCrA, mode=[2])):  # BK/16 MMAs per stage
                        kcoord = (None, None, kb, ab_full.index)
                        cute.gemm(tiled_mma, tCtAcc, tCrA[kcoord], tCrB[kcoord], tCtAcc)
                        tiled_mma.set(tcgen05.Field.ACCUMULATE, True)
                    ab_full.release()
                acc_empty.commit()  # every MMA above has finished: the accumulator, and the ring, are done
            else:
                # --- epilogue warps 0..3: the accumulator (warp w: TMEM lanes 32w..) -> the partial tile ---
                acc_full = acc_consumer.wait_and_advance()  # the last MMA is done: no TMA or MMA uses the ring
                common.tmem_acquired()  # the tcgen05.ld's below read what the MMAs wrote
                sP = cute.make_tensor(cute.recast_ptr(ring, dtype=cutlass.Float32), self.partial_layout())
                write_partial(tCtAcc[(None, None), 0, 0], sP, tidx, k_count > 0, c.epi_warps)
                common.tmem_reads_done()  # this thread's tcgen05.ld's, before the release
                acc_full.release()
                common.free_tmem(tmem, tmem_ptr, pipeline.NamedBarrier(barrier_id=2, num_threads=32 * c.epi_warps))

        pdl_launch_dependents(c)  # this CTA's mainloop is done: the next kernel may start
        # --- every partial tile of the cluster is in smem and visible (release / acquire at cluster scope) ---
        cute.arch.cluster_arrive()
        cute.arch.cluster_wait()
        if warp_idx < c.epi_warps:
            sP = cute.make_tensor(cute.recast_ptr(ring, dtype=cutlass.Float32), self.partial_layout())
            reduce_store(sP, mC, m_tile, n_tile, rank, tidx, (c.bm, c.bn), S, 32 * c.epi_warps, mBias, mD,
                         self.activation(), self.gated())
        # --- no CTA leaves (with its smem) while a peer may still read its partial tile ---
        cute.arch.cluster_arrive()
        cute.arch.cluster_wait()


@cute.jit
def write_partial(tAcc: cute.Tensor, sP: cute.Tensor, tidx, has_k, epi_warps: cutlass.Constexpr):
    """The (128, BN) fp32 accumulator in TMEM -> this CTA's partial tile ``sP`` (smem, laid out like C).

    Warp w reads TMEM lanes 32w..32w+31 (rows) 8 columns at a time (tcgen05.ld.32x32b.x8, then
    tcgen05.wait::ld) and writes them to its rows of ``sP``: 16-B vectors along a row-major C's rows, single
    fp32 along a column-major C's columns. ``has_k`` false (this CTA's K range is empty: no MMA wrote
    the accumulator) writes zeros instead.
    """
    tmem_copy = common.make_epilogue_tmem_copy(tAcc, epi_warps)
    tDtC, tDsP = common.partition_epilogue(tmem_copy, tAcc, sP, tidx, epi_warps)
    tDrC = cute.make_rmem_tensor(tDsP[None, None, 0].shape, cutlass.Float32)
    if has_k:
        for i in cutlass.range_constexpr(cute.size(tDtC, mode=[2])):
            cute.copy(tmem_copy, tDtC[None, None, i], tDrC)
            cute.arch.fence_view_async_tmem_load()  # tcgen05.wait::ld before the registers are read
            cute.autovec_copy(tDrC, tDsP[None, None, i])
    else:
        tDrC.fill(0.0)
        for i in cutlass.range_constexpr(cute.size(tDtC, mode=[2])):
            cute.autovec_copy(tDrC, tDsP[None, None, i])


@cute.jit
def reduce_store(sP: cute.Tensor, mC: cute.Tensor, m_tile, n_tile, rank, tidx, tile_mn: cutlass.Constexpr,
                 split_k: cutlass.Constexpr, threads: cutlass.Constexpr, mBias=None, mD=None,
                 activation: cutlass.Constexpr = "none", gated: cutlass.Constexpr = False):
    """Reduce-scatter of the cluster's ``split_k`` partial tiles (``sP`` in every CTA) into C's tile.

    CTA ``rank`` owns lines [rank L/S, (rank + 1) L/S) of the tile's L lines of C's other mode (rows for a
    row-major C). Thread ``tidx`` of ``threads`` takes 16-B vectors of them along C's contiguous mode,
    reads each from the partial tile of CTA 0, 1, ..., S-1 (``mapa`` + ``ld.shared::cluster``), adds them
    in that order (the same bits on every run), rounds to C's type and stores it; a vector past C's edges
    is skipped (C's contiguous extent is a multiple of 8: a vector is in or out whole). Phase 11's fused
    epilogue (``mBias``, ``mD``: views with C's shape; ``activation``) applies to the sum before the rounding:
    once per element, after the reduce (``phases.epilogue.apply``); with ``gated`` C is half the tile's width
    along its contiguous mode, each vector's (gate, up) pairs storing one value each.
    """
    BM, BN = tile_mn
    row_major = sP.layout.stride[1] == 1
    vec_tiler = (1, VEC) if row_major else (VEC, 1)
    half = 2 if cutlass.const_expr(gated) else 1  # C's values per vector of the partial tile
    out_tile = (BM, BN // half) if row_major else (BM // half, BN)
    out_vec = (1, VEC // half) if row_major else (VEC // half, 1)
    lines = BM if row_major else BN
    per_line = (BN if row_major else BM) // VEC  # vectors along the contiguous mode
    my_lines = lines // split_k
    vecs = per_line * my_lines
    gC = cute.zipped_divide(cute.local_tile(mC, out_tile, (m_tile, n_tile)), out_vec)  # ((vec), (lines, vecs))
    cC = cute.zipped_divide(cute.local_tile(cute.make_identity_tensor(mC.shape), out_tile, (m_tile, n_tile)), out_vec)
    parts = [cute.zipped_divide(cute.make_tensor(cute.arch.map_dsmem_ptr(sP.iterator, r), sP.layout), vec_tiler)
             for r in range(split_k)]
    gBias = epilogue.tile_vectors(mBias, tile_mn, m_tile, n_tile, vec_tiler)
    gD = epilogue.tile_vectors(mD, out_tile, m_tile, n_tile, out_vec)
    total = cute.make_rmem_tensor(gC[(None, 0)].layout if cutlass.const_expr(half == 1) else cute.make_layout(VEC),
                                  cutlass.Float32)
    for i in cutlass.range_constexpr((vecs + threads - 1) // threads):
        v = tidx + i * threads
        line = rank * my_lines + v // per_line
        idx = (line, v % per_line) if row_major else (v % per_line, line)
        if v < vecs:
            if cute.elem_less(cC[(0, idx)], mC.shape):
                add_in_rank_order(parts, idx, total)
                out = total
                if cutlass.const_expr(mBias is not None or mD is not None or activation != "none" or gated):
                    out = epilogue.apply(total, epilogue.vector_at(gBias, idx), epilogue.vector_at(gD, idx),
                                         activation, gated)
                cute.autovec_copy(common.to_c_type(out, mC.element_type), gC[(None, idx)])
