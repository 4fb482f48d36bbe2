"""sm100 phase 7: stream-K, the partial last round split along K inside each cluster (beyond the worklog).

Compared to phase 6 (a persistent static round robin of 256x256 pair tiles over sm_count / 2 pairs),
the tiles of the partial last round are split along K. The busiest pair sets the time: at 4096^3 on
148 SMs, 256 pair tiles = 3 rounds of 74 + 34, so 34 pairs run a fourth tile while 40 idle (4 tile times
where 256 / 74 = 3.46 would do). Here the R = tiles % 74 leftover tiles become 2R halves when 2R <= 74
and the k-tiles split evenly (``phases.raster.stream_k_schedule``, the one sm90 phase 7 uses): leftover
tile u is computed by cluster u, its first pair over k-tiles [0, K/2) and its second pair over
[K/2, K), and the two partial sums meet in the cluster's shared memory (at 4096^3: 3.5 tile times + the
exchange instead of 4; at 1024x4096x4096 and 3072^3 nothing is split, since 2R > 74).

The design, and why (in full, with the handshake's phases: docs/lessons.md):
- Where the halves meet: the contract gives the kernel no memory besides A, B, C, and a wait on another
  cluster could deadlock when clusters are not co-resident. Inside a cluster the peer's smem is the
  workspace, its mbarriers are the flags, and the hardware co-schedules the CTAs. So the cluster grows to
  two pairs: cluster (4,1,1), CTAs 2q, 2q+1 form pair q, and the two pairs compute a split tile's halves.
  (Not inside one pair: all tcgen05 instructions of a kernel must use the same cta_group.)
- Everything else is phase 6 per pair: its own TMA loads (B not multicast across the pairs), its own
  barriers (commit masks 0b0011 / 0b1100), its own TMEM; data-parallel tiles run on pair slots bidx / 2.
- The exchange: pair q finalizes column part q of the tile; in each CTA the 4 warps of the other part send
  their partial sums (st.async into the peer's A/B ring, free once the peer's last MMA of the unit is done),
  and the 4 warps of part q add what they receive and store with phase 6's TMA-store epilogue. Each element
  is a sum of two fp32 terms, which commutes: the same bits on every run (deterministic).
- The handshake, on two mbarriers per CTA (``free``, ``full``), makes a CTA write into its peer's ring only
  once that ring is idle, and exit only once its stores into the peer have landed.
- The schedule is runtime arithmetic (one compile serves every shape): without a split the kernel runs
  phase 6's loop. Cost: a cluster of 4 must find 4 free SMs in one GPC, so fewer may fit (an H200 holds 30
  of 4, not 33); at plan time a default ``sm_count`` becomes 4 x the clusters of 4 the device holds at once.
Nothing here is measured: no Blackwell GPU in this workplace (compile-verified; the CPU simulator in
tests/ptxkit runs it on small problems, stream-K units included).

Constraints:
- Operands (``phases.operands``): fp16 or bf16 A and B, A K-major or M-major, B N-major or K-major, C fp32 /
  fp16 / bf16 row-major (the partial sums cross in fp32; a 16-bit C is rounded after the addition); N and K
  multiples of 8 (16-B TMA rows), the contiguous extent of each operand too (an M-major A: M); else any M >= 1.
- Partial tiles as in phase 5 (zero-filled loads, clipped stores).
- sm_100a / sm_103a; cluster launch (4,1,1); 320 threads per CTA (epilogue warps 0-7, MMA warp 8, TMA warp 9);
  TMEM 512 columns per CTA (one CTA per SM); dynamic smem ~161 KiB per CTA.
- sm_count % 4 == 0; the split needs an even number of k-tiles (``stream_k_schedule``); otherwise every tile
  is data-parallel, as in phase 6.
"""

import dataclasses

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
import cutlass.utils.blackwell_helpers as sm100_utils
from cutlass.cute.nvgpu import cpasync, tcgen05
from cutlass.memory import SmemAllocator
from cutlass.tensor_utils import LayoutEnum

from phases import operands
from phases.base import GemmPhase, TileConfig
from phases.cluster import require_cluster_dims
from phases.pdl import pdl_launch_dependents, pdl_wait
from phases.raster import ceil_div, stream_k_schedule
from phases.raster import grouped_tile_coord as grouped_pair_tile  # tiles_m = pair rows
from phases.sm100 import common
from phases.sm100 import common_tma as ct

SMEM_OPT_IN_MAX = 227 * 1024  # the most dynamic smem one CTA may ask for on sm100


@dataclasses.dataclass(frozen=True)
class Sm100Phase7Config(TileConfig):
    """Phase 6's persistent pairs, two per cluster: the halves of a split tile meet in the cluster."""

    bn: int = 256  # per CTA and accumulator stage 128 x 256 fp32 = 256 TMEM columns; the pair's MMA is m256n256k16
    stages: int = 6  # NSTAGES: phase 5's 2 resident CTAs x 3 stages per SM, now in the SM's one CTA
    cluster_m: int = 2  # __cluster_dims__(2,1,1): the pair; tile_m() = 256 is the M divisibility unit
    epi_warps: int = 8  # warps 0-7 drain the accumulator (lanes (w%4)*32, column half w//4); warp 8 MMA, warp 9 TMA
    epi_stages: int = 2  # staging buffers per warp: the st.shared of chunk j+1 overlaps the TMA store of chunk j
    acc_stages: int = 2  # TMEM accumulators: the MMA fills one while the epilogue drains the other (2 x 256 columns)
    group_m: int = 8  # raster band height in pair tiles (8 x 256 = 2048 rows of C)
    sm_count: int = 148  # SMs the persistent grid fills without a GPU (a B200); on a GPU: 4 x the clusters that fit
    pairs: int = 2  # pairs per cluster: a split tile's two halves, one per pair
    use_pdl: bool = False  # programmatic dependent launch (off as taught; phase="best"'s candidates turn it on)


class Sm100Phase7(common.Guarded, GemmPhase):
    arch = "sm100"
    phase = "7"
    Config = Sm100Phase7Config
    summary = "phase 6 + stream-K: the partial last round split along K between the two pairs of a 4-CTA cluster"
    adds = "stream-K: the partial last round split along K across a cluster's two pairs, halves summed via DSMEM"
    worklog = ""

    def config_problems(self) -> list[str]:
        c = self.cfg
        why = common.tile_problems(c, 2) + common.epilogue_warp_problems(c.epi_warps)
        if c.pairs != 2:
            why.append(f"pairs={c.pairs}: a split tile's two K halves meet in a cluster of two pairs (the exchange "
                       f"pairs CTA r with CTA r ^ 2)")
        # clusters of 4, and a multiple of 4 SMs: sm_count / 2 pair slots must be even, or the last cluster's
        # second pair would take the round robin's slot sm_count / 2 and compute slot 0's tiles again
        return why + common.persistent_problems(c, c.cluster_m * c.pairs, c.cluster_m * c.pairs)

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
        self.cluster = (c.cluster_m * c.pairs, 1, 1)
        self.tiled_mma = ct.make_tiled_mma(c.bm * c.cluster_m, c.bn, tcgen05.CtaGroup.TWO, self.types)
        # (V, M, N, K) layouts: the TMA atoms see one pair (V = the 2 CTAs of one MMA, nothing multicast
        # across the pairs); the pipelines see the cluster, V x (M = the pairs), and signal within a pair
        self.pair_vmnk = cute.tiled_divide(cute.make_layout((c.cluster_m, 1, 1)), (self.tiled_mma.thr_id,))
        self.cluster_vmnk = cute.tiled_divide(cute.make_layout(self.cluster), (self.tiled_mma.thr_id,))
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
        self.shared_storage = ct.make_shared_storage(c.stages, c.acc_stages, exchange_mbars=2)
        # the stream-K mailbox: one column part (BN / 2 columns) of the CTA's 128 rows, in the A/B ring
        self.mailbox_bytes = c.bm * ct.epi_part_cols(c.epi_warps, c.bn) * 4
        assert self.mailbox_bytes <= (a_bytes + b_bytes) * c.stages, "the mailbox must fit in the A/B ring"
        used = ct.smem_bytes_of(self.shared_storage, a_bytes * c.stages, b_bytes * c.stages, epi_bytes)
        # asked for: what the kernel uses, raised so that smem admits no more CTAs per SM than TMEM holds
        self.smem_bytes = common.smem_request(used, self.tmem_cols)
        # TMEM (all 512 columns) already limits the SM to this one CTA: smem may use what a CTA can ask for
        assert self.smem_bytes <= SMEM_OPT_IN_MAX, f"{self.smem_bytes} B of smem per CTA: lower stages or epi_stages"

    def schedule(self, m, n, k):
        """(data-parallel pair tiles, split pair tiles, pair slots used) for an (m, n, k) problem.

        ``phases.raster.stream_k_schedule`` over sm_count / 2 pair slots with a split in two: split tile
        u goes to cluster u, its pair q computing k-tiles [q K/2, (q + 1) K/2). Python or DSL integers
        (the kernel runs the same arithmetic on its runtime extents).
        """
        c = self.cfg
        tiles = ceil_div(m, c.tile_m()) * ceil_div(n, c.bn)
        return stream_k_schedule(tiles, c.sm_count // c.cluster_m, ceil_div(k, c.bk), c.pairs)

    def grid(self, m, n, k):
        # clusters of two pairs; with an odd number of slots used (no split) the last pair idles
        c = self.cfg
        return (ceil_div(self.schedule(m, n, k)[2], c.pairs) * c.cluster_m * c.pairs, 1, 1)

    @cute.jit
    def __call__(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream):
        self.types = operands.read(mA, mB, mC)  # element types and majors, as given
        self._setup_attributes()
        tma_op = cpasync.CopyBulkTensorTileG2SOp(tcgen05.CtaGroup.TWO)
        tma_atom_a, mA_tma, tma_atom_b, mB_tma = ct.make_ab_tma_atoms(
            tma_op, mA, mB, self.a_smem_layout, self.b_smem_layout, self.mma_tiler, self.tiled_mma,
            self.pair_vmnk.shape,
        )
        # the TMA store atom: one {32 columns, 16 rows} box of the staging tile, SWIZZLE_128B; boxes that
        # stick out of C are clipped by the TMA unit
        box_smem_layout = sm100_utils.make_smem_layout_epi(self.types.c, LayoutEnum.ROW_MAJOR, ct.EPI_BOX, 1)
        tma_atom_c, mC_tma = cpasync.make_tiled_tma_atom(
            cpasync.CopyBulkTensorTileS2GOp(), mC, cute.select(box_smem_layout, mode=[0, 1]), ct.EPI_BOX
        )
        self.kernel(
            self.tiled_mma, tma_atom_a, mA_tma, tma_atom_b, mB_tma, tma_atom_c, mC_tma,
            self.a_smem_layout, self.b_smem_layout, self.epi_smem_layout, self.cluster_vmnk,
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
    ):
        c = self.cfg
        NSTAGES = c.stages
        EPI_WARP0, MMA_WARP, TMA_WARP = 0, c.epi_warps, c.epi_warps + 1  # warp roles
        tidx, _, _ = cute.arch.thread_idx()
        warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        bidx, _, _ = cute.arch.block_idx()
        require_cluster_dims(self.cluster)  # PTX .reqnctapercluster 4, 1, 1
        mma_v = bidx % c.cluster_m  # rank of this CTA in its pair (pairs: cluster ranks 0-1 and 2-3)
        is_leader_cta = mma_v == 0  # the pair's even CTA issues the pair's MMAs and owns the full barriers

        # the persistent schedule: the pair in slot s takes pair tiles s, s + slots, s + 2 slots, ... of
        # the data-parallel tiles; both CTAs of the pair walk the same list, so their TMA bytes, MMAs and
        # arrivals stay matched. Then cluster u < sk_tiles computes split tile u: pair q its K half q.
        slot = bidx // c.cluster_m
        cluster_id = bidx // self.cluster[0]
        pair_q = slot % c.pairs
        pair_tiles_m = ceil_div(mC_tma.shape[0], self.mma_tiler[0])  # a partial last tile counts
        tiles_n = ceil_div(mC_tma.shape[1], self.mma_tiler[1])
        dp_tiles, sk_tiles, slots = self.schedule(mC_tma.shape[0], mC_tma.shape[1], mA_tma.shape[1])

        # --- smem: barriers, the A and B rings (1024-B aligned for SW64/SW128), the C staging tiles ---
        smem = SmemAllocator()
        storage = smem.allocate(self.shared_storage)
        ring, sA, sB = ct.allocate_ab_ring(smem, a_smem_layout, b_smem_layout, self.types.ab)
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

        # the stream-K exchange's mbarriers, initialised before the pipelines' fence.mbarrier_init and
        # cluster sync, which publish them to the other pair (it arrives on them remotely). free: one
        # arrival per phase from the peer's designated thread (phase 0: my ring may take the peer's
        # partial sums; phase 1: the peer has received mine). full: my own arrive.expect_tx plus the bytes
        # of the peer's st.async stores.
        xchg_free = storage.exchange_mbar.data_ptr()
        xchg_full = xchg_free + 1
        if warp_idx == 0:
            with cute.arch.elect_one():
                cute.arch.mbarrier_init(xchg_free, 1)
                cute.arch.mbarrier_init(xchg_full, 1)

        if warp_idx == TMA_WARP:
            cpasync.prefetch_descriptor(tma_atom_a)
            cpasync.prefetch_descriptor(tma_atom_b)
            cpasync.prefetch_descriptor(tma_atom_c)

        # full[s]: armed with expect_tx(tx_bytes) by the leader's producer, completed by both CTAs' TMA bytes.
        # empty[s]: arrived in both CTAs by one tcgen05.commit.multicast::cluster (mask 0b11) once the
        # pair's MMAs that read slot s have finished, so each CTA's producer may refill its half.
        ab_producer, ab_consumer = common.cluster_scoped(pipeline.PipelineTmaUmma.create(
            num_stages=NSTAGES,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            tx_count=self.tx_bytes,
            barrier_storage=storage.ab_mbar.data_ptr(),
            cta_layout_vmnk=cluster_vmnk,
            mcast_mode_mn=(1, 0),  # commits to the pair only (mode N has one CTA): masks 0b0011 / 0b1100
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
        tCrA = tiled_mma.make_fragment_A(sA)  # smem descriptors, (MMA, MMA_M, MMA_K, NSTAGES)
        tCrB = tiled_mma.make_fragment_B(sB)
        # (MMA, MMA_M, MMA_N, ACC_STAGES): stage s is 256 TMEM columns after stage s-1
        acc_shape = tiled_mma.partition_shape_C(self.mma_tiler[:2])
        tCtAcc_fake = tiled_mma.make_fragment_C(cute.append(acc_shape, c.acc_stages))
        # one TMA copy per stage and operand: A is one box, this CTA's half of B is (BN/2)/64 = 2 slab boxes
        tAsA, tAgA = cpasync.tma_partition(
            tma_atom_a, 0, cute.make_layout(1), cute.group_modes(sA, 0, 3), cute.group_modes(tCgA, 0, 3)
        )
        tBsB, tBgB = cpasync.tma_partition(
            tma_atom_b, 0, cute.make_layout(1), cute.group_modes(sB, 0, 3), cute.group_modes(tCgB, 0, 3)
        )

        pdl_wait(c)  # launched early (use_pdl): no global access before the previous kernel has finished

        k_tiles = cute.size(gA, mode=[3])
        k_half = k_tiles // c.pairs  # k-tiles of one half of a split tile
        if warp_idx == TMA_WARP:
            # --- producer warp: runs up to NSTAGES k-tiles ahead, across tile boundaries too ---
            for tile in cutlass.range(slot, dp_tiles, slots, unroll=1):
                m_pair, n_tile = grouped_pair_tile(tile, pair_tiles_m, tiles_n, c.group_m)
                ab_producer = ct.load_k_tiles(
                    ab_producer, tma_atom_a, tAgA, tAsA, tma_atom_b, tBgB, tBsB, m_pair, n_tile, 0, k_tiles
                )
            if cluster_id < sk_tiles:
                # this pair's half of split tile cluster_id: k-tiles [pair_q * k_half, (pair_q + 1) * k_half)
                m_pair, n_tile = grouped_pair_tile(dp_tiles + cluster_id, pair_tiles_m, tiles_n, c.group_m)
                ab_producer = ct.load_k_tiles(
                    ab_producer, tma_atom_a, tAgA, tAsA, tma_atom_b, tBgB, tBsB, m_pair, n_tile, pair_q * k_half,
                    k_half,
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
                    for tile in cutlass.range(slot, dp_tiles, slots, unroll=1):
                        # stage tile % 2 is free once both CTAs' epilogues of the tile two back released it
                        acc_empty = acc_producer.acquire_and_advance()
                        common.tmem_acquired()  # the MMAs below overwrite what both epilogues read
                        ab_consumer, tiled_mma = ct.mma_k_tiles(
                            ab_consumer, tiled_mma, tCtAcc_base[(None, None, None, acc_empty.index)], tCrA, tCrB,
                            k_tiles,
                        )
                        acc_empty.commit()  # commit multicast -> acc full[stage] in both CTAs; next tile starts at once
                    if cluster_id < sk_tiles:
                        acc_empty = acc_producer.acquire_and_advance()
                        common.tmem_acquired()  # the MMAs below overwrite what both epilogues read
                        ab_consumer, tiled_mma = ct.mma_k_tiles(
                            ab_consumer, tiled_mma, tCtAcc_base[(None, None, None, acc_empty.index)], tCrA, tCrB,
                            k_half,
                        )
                        acc_empty.commit()
                    acc_producer.tail()  # wait for both CTAs' last epilogue releases: no arrival after exit
            else:
                # --- epilogue warps 0..7: per tile, warp w drains TMEM lanes (w%4)*32.. of column half w//4,
                # chunk by chunk: TMEM -> registers -> staging smem -> TMA store (the stores drain behind) ---
                for tile in cutlass.range(slot, dp_tiles, slots, unroll=1):
                    m_pair, n_tile = grouped_pair_tile(tile, pair_tiles_m, tiles_n, c.group_m)
                    acc_full = acc_consumer.wait_and_advance()
                    common.tmem_acquired()  # the tcgen05.ld's below read what the MMAs wrote
                    tiled_t2r, tTR_tAcc, tTR_sC, tCsC, tCgC_box = ct.epi_views(
                        tCtAcc_base[(None, None, None, acc_full.index)], tCgC[(None, None, None, m_pair, n_tile)],
                        sC, tma_atom_c, warp_idx, tidx, c.bm, c.bn, c.epi_warps,
                    )
                    tTR_rAcc = cute.make_rmem_tensor(tTR_sC[None, None, None, 0].shape, ct.ACC_DTYPE)
                    for j in cutlass.range_constexpr(ct.epi_chunks(c.epi_warps, c.bn)):
                        ct.load_chunk(tiled_t2r, tTR_tAcc, tTR_rAcc, j)
                        ct.store_chunk(tTR_rAcc, tTR_sC, tCsC, tCgC_box, tma_atom_c, warp_idx, j, c.epi_warps, c.bn,
                                       c.epi_stages)
                    common.tmem_reads_done()  # this thread's tcgen05.ld's of the stage, before the release
                    acc_full.release()  # the MMA may refill the stage

                if cluster_id < sk_tiles:
                    # ---- split tile: my pair's half of K is in TMEM; pair q finalizes column part q ----
                    m_pair, n_tile = grouped_pair_tile(dp_tiles + cluster_id, pair_tiles_m, tiles_n, c.group_m)
                    acc_full = acc_consumer.wait_and_advance()  # no MMA reads this CTA's ring any more
                    common.tmem_acquired()
                    tiled_t2r, tTR_tAcc, tTR_sC, tCsC, tCgC_box = ct.epi_views(
                        tCtAcc_base[(None, None, None, acc_full.index)], tCgC[(None, None, None, m_pair, n_tile)],
                        sC, tma_atom_c, warp_idx, tidx, c.bm, c.bn, c.epi_warps,
                    )
                    tTR_rAcc = cute.make_rmem_tensor(tTR_sC[None, None, None, 0].shape, ct.ACC_DTYPE)
                    peer = cute.arch.block_idx_in_cluster() ^ c.cluster_m  # same rows, the other pair
                    # mailbox, fp32 [chunk j][quad i][thread t][4]: value 4 i + a of chunk j of thread t (its
                    # row 32 (w % 4) + lane) at ((j * QUADS + i) * 128 + t) * 4 + a; a warp's 32 lanes write
                    # 512 contiguous bytes per quad
                    QUADS = ct.EPI_CHUNK // 4
                    t = ct.epi_t2r_thread(tidx)
                    mbox = cute.recast_ptr(ring, dtype=ct.ACC_DTYPE)
                    if ct.epi_col_part(warp_idx) == pair_q:
                        # the warps of my part: arm my full barrier, tell the peer my ring is free, receive
                        designated = warp_idx == 4 * pair_q and cute.arch.lane_idx() == 0
                        if designated:
                            cute.arch.mbarrier_arrive_and_expect_tx(xchg_full, self.mailbox_bytes)
                            common.mbarrier_arrive_cluster(xchg_free, peer)
                        # the peer's partial sums of my part have landed (its st.async complete on my barrier)
                        common.mbarrier_wait_cluster(xchg_full, 0)
                        common.tmem_acquired()
                        if designated:
                            common.mbarrier_arrive_cluster(xchg_free, peer)  # phase 1: received, the peer may exit
                        recv = cute.make_rmem_tensor(((4, QUADS),), ct.ACC_DTYPE)
                        for j in cutlass.range_constexpr(ct.epi_chunks(c.epi_warps, c.bn)):
                            ct.load_chunk(tiled_t2r, tTR_tAcc, tTR_rAcc, j)
                            mailbox = cute.make_tensor(
                                mbox + cute.assume((j * QUADS * 128 + t) * 4, divby=4),
                                cute.make_layout(((4, QUADS),), stride=((1, 4 * 128),)),
                            )
                            cute.autovec_copy(mailbox, recv)
                            for v in cutlass.range_constexpr(ct.EPI_CHUNK):
                                tTR_rAcc[v] = tTR_rAcc[v] + recv[v]  # p(K half 0) + p(K half 1): commutes
                            ct.store_chunk(tTR_rAcc, tTR_sC, tCsC, tCgC_box, tma_atom_c, warp_idx, j, c.epi_warps,
                                           c.bn, c.epi_stages)
                    else:
                        # the warps of the other part: send my partial sums of it into the peer's ring
                        common.mbarrier_wait_cluster(xchg_free, 0)  # the peer's ring is free for them
                        common.tmem_acquired()
                        for j in cutlass.range_constexpr(ct.epi_chunks(c.epi_warps, c.bn)):
                            ct.load_chunk(tiled_t2r, tTR_tAcc, tTR_rAcc, j)
                            for i in cutlass.range_constexpr(QUADS):
                                cute.arch.store_async_dsmem(
                                    mbox + cute.assume(((j * QUADS + i) * 128 + t) * 4, divby=4),
                                    (
                                        tTR_rAcc[4 * i].bitcast(cutlass.Int32),
                                        tTR_rAcc[4 * i + 1].bitcast(cutlass.Int32),
                                        tTR_rAcc[4 * i + 2].bitcast(cutlass.Int32),
                                        tTR_rAcc[4 * i + 3].bitcast(cutlass.Int32),
                                    ),
                                    xchg_full,
                                    peer,
                                )
                        # phase 1 of my free barrier: the peer has received them, so none of my stores into
                        # its smem is still in flight when this CTA exits
                        common.mbarrier_wait_cluster(xchg_free, 1)
                    common.tmem_reads_done()
                    acc_full.release()
                # the staging smem must outlive the TMA's reads of the CTA's last stores
                cute.arch.cp_async_bulk_wait_group(0, read=True)

                # every epilogue warp's tcgen05.ld is done before the columns are freed
                common.free_tmem(tmem, tmem_ptr, pipeline.NamedBarrier(barrier_id=2, num_threads=32 * c.epi_warps))
                pdl_launch_dependents(c)  # this CTA's tiles are stored: the next kernel may start
