"""sm100 phase 5: the epilogue through swizzled smem and TMA stores (worklog: 1451 TFLOP/s at 4096^3).

Compared to phase 4 (each epilogue thread st.global's its own row of C: 32 lanes of a warp write 32
different rows, 32 B-segments 1 KiB apart per instruction), each epilogue warp now stages its block
in shared memory and lets the TMA write it: per 32-column chunk, tcgen05.ld.32x32b.x32 gives every
thread 32 fp32 of its row (valid after ``tcgen05.wait::ld``), the thread writes them as one 128-B row of a
SW128-swizzled staging tile, ``fence.proxy.async.shared::cta`` hands the writes to the async proxy, and
after ``__syncwarp`` lane 0 issues two ``cp.async.bulk.tensor.2d.global.shared::cta`` stores of a {32 columns, 16 rows}
fp32 box (the worklog's C tensor map: box {32, 16}, SWIZZLE_128B) and commits them as one bulk group.
Staging is double-buffered per warp (``epi_stages=2``): chunk j+2 reuses chunk j's buffer after
``cp.async.bulk.wait_group.read 1``. The mainloop, pipelines and warp roles are phase 4's.

Why: the scattered row stores were the last part of the kernel not handled by an asynchronous
engine; the worklog found the epilogue hiding the MMA-side gains ("the end-to-end performance still
lingered ... because the epilogue was hiding it"). A box store writes 16 full 128-B row segments
from one instruction, the SW128 XOR makes the 32 row-writes of a warp hit all 32 banks (an unswizzled
128-B row pitch would put a whole warp's 16-B vectors in one 4-bank group), and the TMA drains the
staging buffer while the warp loads the next chunk from TMEM.

Numbers: a box is 16 x 32 x 4 B = 2 KiB; a warp stores 2 boxes per chunk, 4 chunks (128 columns);
a CTA issues 64 box stores for its 128x256 fp32 (128 KiB) block. Staging: (epi_warps/4) column parts
x epi_stages x (128 x 32 x 4 B = 16 KiB) = 64 KiB; with the 48 KiB mainloop ring that is 113 KiB per
CTA, so two CTAs still fit in an SM's 228 KiB (2 x (113 + 1 reserved) KiB), matching TMEM's limit of
two 256-column accumulators; the host asserts it.

Constraints:
- Operands (``phases.operands``, read from the tensors): fp16 or bf16 A and B, A K-major (the worklog's) or
  M-major, B N-major (the worklog's) or K-major (a transposed [N, K] weight), C fp32 / fp16 / bf16 row-major
  (a 16-bit C is rounded before the st.shared: (128, 32) staging tiles of 64-B rows, SW64, {32, 16} boxes).
  Any M >= 1 with N and K multiples of 8 (16-B TMA rows) for the worklog's layouts; the contiguous extent of
  each operand must be a multiple of 8 (an M-major A: M too).
- Partial tiles: zero-filled loads as in phase 4, and the TMA clips each store box at C's edges (a box wholly
  outside C writes nothing).
- sm_100a / sm_103a; cluster launch (2,1,1); 320 threads per CTA (epilogue warps 0-7, MMA warp 8, TMA warp 9);
  TMEM 256 columns per CTA; dynamic smem 113 KiB per CTA.
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
from phases.raster import ceil_div
from phases.sm100 import common
from phases.sm100 import common_tma as ct


@dataclasses.dataclass(frozen=True)
class Sm100Phase5Config(TileConfig):
    """Phase 4's pair and tile, with a double-buffered per-warp staging tile for the TMA-store epilogue."""

    bn: int = 256  # per CTA 128 x 256 fp32 = 256 TMEM columns; the pair's MMA is m256n256k16
    stages: int = 3  # NSTAGES: the worklog's best for the TMA kernel
    cluster_m: int = 2  # __cluster_dims__(2,1,1): the pair; tile_m() = 256 is the M divisibility unit
    epi_warps: int = 8  # warps 0-7 drain the accumulator (lanes (w%4)*32, column half w//4); warp 8 MMA, warp 9 TMA
    epi_stages: int = 2  # staging buffers per warp: the st.shared of chunk j+1 overlaps the TMA store of chunk j


class Sm100Phase5(common.Guarded, GemmPhase):
    arch = "sm100"
    phase = "5"
    Config = Sm100Phase5Config
    summary = "2-SM pair + epilogue through a swizzled smem staging tile and TMA stores ({32,16} fp32 boxes)"
    adds = "TMA-store epilogue: TMEM -> SW128 staging smem -> cp.async.bulk.tensor stores, per warp"
    worklog = "1451 TFLOP/s at 4096^3 (B300)"

    def config_problems(self) -> list[str]:
        return common.tile_problems(self.cfg, 2) + common.epilogue_warp_problems(self.cfg.epi_warps)

    def _setup_attributes(self):
        self.refuse_bad_config()
        c = self.cfg
        self.mma_tiler = (c.bm * c.cluster_m, c.bn, c.bk)  # the pair's 256x256 tile, one m256n256k16 per 16 of K
        self.threads = 32 * (c.epi_warps + 2)  # + the MMA warp and the TMA producer warp
        self.tmem_cols = common.tmem_cols_for(c.bn)  # per CTA: its 128 rows of the pair's accumulator
        self.cluster = (c.cluster_m, 1, 1)
        self.tiled_mma = ct.make_tiled_mma(c.bm * c.cluster_m, c.bn, tcgen05.CtaGroup.TWO, self.types)
        # (V, M, N, K) cluster layout: V = the 2 CTAs of one MMA, no further multicast along M or N
        self.cluster_vmnk = cute.tiled_divide(cute.make_layout((c.cluster_m, 1, 1)), (self.tiled_mma.thr_id,))
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
        epi_bytes = int(cute.size_in_bytes(self.types.c, self.epi_smem_layout))
        self.shared_storage = ct.make_shared_storage(c.stages)
        used = ct.smem_bytes_of(self.shared_storage, a_bytes * c.stages, b_bytes * c.stages, epi_bytes)
        # asked for: what the kernel uses, raised so that smem admits no more CTAs per SM than TMEM holds
        self.smem_bytes = common.smem_request(used, self.tmem_cols)
        # TMEM (256 of 512 columns) allows 2 CTAs per SM; the staging tiles must not make smem the limit
        assert 2 * (self.smem_bytes + common.SMEM_RESERVED_PER_CTA) <= common.SMEM_PER_SM, (
            f"{self.smem_bytes} B of smem per CTA would leave one CTA per SM; lower epi_stages or stages"
        )

    def grid(self, m, n, k):
        # one cluster of 2 CTAs per 256-row pair tile; the second CTA of the last pair may lie entirely past
        # M (its loads are zero-filled, its stores clipped)
        return (ceil_div(m, self.cfg.tile_m()) * self.cfg.cluster_m, ceil_div(n, self.cfg.bn), 1)

    @cute.jit
    def __call__(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream):
        self.types = operands.read(mA, mB, mC)  # element types and majors, as given
        self._setup_attributes()
        tma_op = cpasync.CopyBulkTensorTileG2SOp(tcgen05.CtaGroup.TWO)
        tma_atom_a, mA_tma, tma_atom_b, mB_tma = ct.make_ab_tma_atoms(
            tma_op, mA, mB, self.a_smem_layout, self.b_smem_layout, self.mma_tiler, self.tiled_mma,
            self.cluster_vmnk.shape,
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
                 smem=self.smem_bytes, stream=stream)

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
        NSTAGES = self.cfg.stages
        EPI_WARP0, MMA_WARP, TMA_WARP = 0, self.cfg.epi_warps, self.cfg.epi_warps + 1  # warp roles
        tidx, _, _ = cute.arch.thread_idx()
        warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        bidx, bidy, _ = cute.arch.block_idx()
        require_cluster_dims((self.cfg.cluster_m, 1, 1))  # PTX .reqnctapercluster 2, 1, 1
        mma_v = bidx % self.cfg.cluster_m  # rank of this CTA in the pair (cluster (2,1,1) along M)
        is_leader_cta = mma_v == 0  # rank 0 issues the pair's MMAs and owns the full barriers

        # --- smem: barriers, the A and B rings (1024-B aligned for SW64/SW128), the C staging tiles ---
        smem = SmemAllocator()
        storage = smem.allocate(self.shared_storage)
        sA = smem.allocate_tensor(
            self.types.ab, a_smem_layout.outer, byte_alignment=ct.SMEM_ALIGN, swizzle=a_smem_layout.inner
        )
        sB = smem.allocate_tensor(
            self.types.ab, b_smem_layout.outer, byte_alignment=ct.SMEM_ALIGN, swizzle=b_smem_layout.inner
        )
        sC = smem.allocate_tensor(
            self.types.c, epi_smem_layout.outer, byte_alignment=ct.SMEM_ALIGN, swizzle=epi_smem_layout.inner
        )

        # --- TMEM: epilogue warp 0 allocates the accumulator's columns; the MMA and epilogue warps read the address ---
        # (constructed here so that its 2-CTA dealloc mbarrier is initialised before the pipelines' cluster
        # sync below publishes it to the peer; the columns are allocated after that sync)
        tmem = common.TmemAllocator(
            storage.tmem_holding_buf.ptr,
            barrier_for_retrieve=pipeline.NamedBarrier(barrier_id=1, num_threads=32 * (self.cfg.epi_warps + 1)),
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
        # pair's MMAs that read slot s have finished, so each CTA's producer may refill its half.
        ab_producer, ab_consumer = common.cluster_scoped(pipeline.PipelineTmaUmma.create(
            num_stages=NSTAGES,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            tx_count=self.tx_bytes,
            barrier_storage=storage.ab_mbar.data_ptr(),
            cta_layout_vmnk=cluster_vmnk,
        )).make_participants()
        # accumulator ready: the last commit multicasts to both CTAs; every epilogue thread of the pair
        # waits on its own CTA's barrier and releases to the leader's (hence 2 x the epilogue threads)
        acc_producer, acc_consumer = common.cluster_scoped(pipeline.PipelineUmmaAsync.create(
            num_stages=1,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            consumer_group=pipeline.CooperativeGroup(
                pipeline.Agent.Thread, self.cfg.cluster_m * 32 * self.cfg.epi_warps
            ),
            barrier_storage=storage.acc_mbar.data_ptr(),
            cta_layout_vmnk=cluster_vmnk,
        )).make_participants()
        # TMEM columns, allocated only after the pipelines' cluster-wide arrive/wait: a cta_group::2 alloc is
        # performed by a warp of each CTA of the pair together, and the PTX ISA requires the issuing warp to
        # know that the peer CTA has launched and is still running
        tmem.allocate(self.tmem_cols)
        tmem.relinquish_alloc_permit()  # nothing else to allocate: a co-resident CTA's alloc need not wait

        # --- partition: the pair's (2*BM, BK, k) A, (BN, BK, k) B and (2*BM, BN) C tiles; the MMA
        # slice of rank v selects this CTA's 128 rows of A and C and its half (128 columns) of B ---
        mma_coord = (bidx // self.cfg.cluster_m, bidy, None)
        gA = cute.local_tile(mA_tma, self.mma_tiler, mma_coord, proj=(1, None, 1))
        gB = cute.local_tile(mB_tma, self.mma_tiler, mma_coord, proj=(None, 1, 1))
        gC = cute.local_tile(mC_tma, self.mma_tiler, mma_coord, proj=(1, 1, None))  # TMA coordinates of C
        thr_mma = tiled_mma.get_slice(mma_v)
        tCgA = thr_mma.partition_A(gA)
        tCgB = thr_mma.partition_B(gB)
        tCgC = thr_mma.partition_C(gC)
        tCrA = tiled_mma.make_fragment_A(sA)  # smem descriptors, (MMA, MMA_M, MMA_K, NSTAGES)
        tCrB = tiled_mma.make_fragment_B(sB)
        tCtAcc_fake = tiled_mma.make_fragment_C(tiled_mma.partition_shape_C(self.mma_tiler[:2]))
        # one TMA copy per stage and operand: A is one box, this CTA's half of B is (BN/2)/64 = 2 slab boxes
        tAsA, tAgA = cpasync.tma_partition(
            tma_atom_a, 0, cute.make_layout(1), cute.group_modes(sA, 0, 3), cute.group_modes(tCgA, 0, 3)
        )
        tBsB, tBgB = cpasync.tma_partition(
            tma_atom_b, 0, cute.make_layout(1), cute.group_modes(sB, 0, 3), cute.group_modes(tCgB, 0, 3)
        )

        k_tiles = cute.size(gA, mode=[2])
        if warp_idx == TMA_WARP:
            # --- producer warp: runs up to NSTAGES tiles ahead, throttled only by the empty barriers ---
            for kt in cutlass.range(k_tiles, unroll=1):
                # acquire waits on empty[slot] (the MMA that last read it), then arms full[slot] with expect_tx
                ab_empty = ab_producer.acquire_and_advance()
                cute.copy(tma_atom_a, tAgA[(None, kt)], tAsA[(None, ab_empty.index)], tma_bar_ptr=ab_empty.barrier)
                cute.copy(tma_atom_b, tBgB[(None, kt)], tBsB[(None, ab_empty.index)], tma_bar_ptr=ab_empty.barrier)
            ab_producer.tail()  # wait for the last empty arrivals so no commit lands after this CTA exits
        else:
            tmem.wait_for_alloc()
            tmem_ptr = tmem.retrieve_ptr(ct.ACC_DTYPE)
            tCtAcc = cute.make_tensor(tmem_ptr, tCtAcc_fake.layout)

            if warp_idx == MMA_WARP:
                # --- MMA warp of the leader: one thread issues the pair's m256n256k16 MMAs, which read
                # A and B from both CTAs' smem and write both CTAs' TMEM; the peer's MMA warp idles ---
                if is_leader_cta:
                    acc_empty = acc_producer.acquire_and_advance()  # fresh barrier: passes at once
                    tiled_mma.set(tcgen05.Field.ACCUMULATE, False)
                    for kt in cutlass.range(k_tiles, unroll=1):
                        ab_full = ab_consumer.wait_and_advance()  # both CTAs' bytes of this stage landed
                        for kb in cutlass.range_constexpr(cute.size(tCrA, mode=[2])):  # BK/16 = 2 MMAs per stage
                            kcoord = (None, None, kb, ab_full.index)
                            cute.gemm(tiled_mma, tCtAcc, tCrA[kcoord], tCrB[kcoord], tCtAcc)
                            tiled_mma.set(tcgen05.Field.ACCUMULATE, True)
                        ab_full.release()  # commit multicast -> empty[slot] in both CTAs
                    acc_empty.commit()  # commit multicast -> accumulator full in both CTAs
                    acc_producer.tail()  # wait for both CTAs' epilogue releases: no arrival after exit
            else:
                # --- epilogue warps 0..7: warp w drains TMEM lanes (w%4)*32.. of column half w//4 ---
                acc_full = acc_consumer.wait_and_advance()
                common.tmem_acquired()  # the tcgen05.ld's below read what the MMAs wrote
                self.epilogue_tma_store(tma_atom_c, tCtAcc, tCgC, sC, warp_idx, tidx)
                common.tmem_reads_done()  # this thread's tcgen05.ld's, before the release
                acc_full.release()

                # every epilogue warp's tcgen05.ld is done before the columns are freed
                common.free_tmem(tmem, tmem_ptr, pipeline.NamedBarrier(barrier_id=2, num_threads=32 * self.cfg.epi_warps))

    @cute.jit
    def epilogue_tma_store(self, tma_atom_c, tCtAcc, tCgC, sC, warp_idx, tidx):
        """TMEM -> registers -> swizzled staging smem -> TMA store, per warp and 32-column chunk.

        Warp w owns accumulator rows 32*(w%4)..+31 (its TMEM lane quarter) of column part w//4. Per
        chunk: tcgen05.ld.32x32b.x32 hands each thread 32 fp32 of its row (tcgen05.wait::ld before they
        are read); the thread writes them as one 128-B row of the staging tile (the SW128 XOR spreads
        the 32 rows over all banks); a proxy fence makes those generic-proxy writes visible to the TMA
        unit; after __syncwarp lane 0 issues the two {32, 16} box stores that cover the warp's 32 rows
        and commits them as a bulk group. The mapping is ``common_tma``'s ``epi_*`` functions (checked
        by the coverage test).
        """
        c = self.cfg
        acc = tCtAcc[(None, None), 0, 0]  # (BM, BN) fp32 in TMEM, lane = row
        part = ct.epi_part_cols(c.epi_warps, c.bn)
        # (BM, EPI_CHUNK, 1, chunks): this warp's column part, one tcgen05.ld chunk per staging tile
        tAcc_part = cute.local_tile(acc, (c.bm, part), (0, ct.epi_col_part(warp_idx)))
        tAcc_epi = cute.flat_divide(tAcc_part, (c.bm, ct.EPI_CHUNK))
        atom_t2r = cute.make_copy_atom(tcgen05.Ld32x32bOp(tcgen05.Repetition.x32), ct.ACC_DTYPE)
        tiled_t2r = tcgen05.make_tmem_copy(atom_t2r, tAcc_epi[None, None, 0, 0])
        thr_t2r = tiled_t2r.get_slice(ct.epi_t2r_thread(tidx))  # thread -> its TMEM lane (= row)
        tTR_tAcc = thr_t2r.partition_S(tAcc_epi)  # (T2R, T2R_M, T2R_N, 1, chunks)
        tTR_sC = thr_t2r.partition_D(sC)  # (T2R, T2R_M, T2R_N, buffers): this thread's row of each staging tile
        tTR_rAcc = cute.make_rmem_tensor(tTR_sC[None, None, None, 0].shape, ct.ACC_DTYPE)

        # TMA boxes: staging (16, 32, BM/16, 1, buffers) and this CTA's C tile (16, 32, BM/16, BN/32)
        sC_box = cute.flat_divide(sC, ct.EPI_BOX)
        gC_box = cute.flat_divide(tCgC[(None, None), 0, 0], ct.EPI_BOX)
        tCsC, tCgC_box = cpasync.tma_partition(
            tma_atom_c, 0, cute.make_layout(1), cute.group_modes(sC_box, 0, 2), cute.group_modes(gC_box, 0, 2)
        )

        for j in cutlass.range_constexpr(ct.epi_chunks(c.epi_warps, c.bn)):
            buf = ct.epi_staging_buffer(warp_idx, j, c.epi_stages)
            cute.copy(tiled_t2r, tTR_tAcc[None, None, None, 0, j], tTR_rAcc)  # tcgen05.ld: 32 fp32 of my row
            cute.arch.fence_view_async_tmem_load()  # tcgen05.wait::ld: the registers hold the values only now
            if j >= c.epi_stages:
                # the buffer's previous stores (chunk j - epi_stages) must have finished reading it; only
                # the storing thread has bulk groups to wait for, the others pass at once and meet it
                # at the warp barrier
                cute.arch.cp_async_bulk_wait_group(ct.epi_store_wait_depth(c.epi_stages), read=True)
                cute.arch.sync_warp()
            # st.shared: one swizzled row of the staging tile (128 B of fp32; a 16-bit C rounded first, 64 B)
            cute.autovec_copy(common.to_c_type(tTR_rAcc, tTR_sC.element_type), tTR_sC[None, None, None, buf])
            cute.arch.fence_proxy("async.shared", space="cta")  # generic-proxy writes -> visible to the TMA
            cute.arch.sync_warp()  # all 32 rows are written before one thread stores them
            # one thread issues the warp's box stores and later waits for them: bulk async-groups belong to
            # the thread that commits them, so it must be the same lane every time (lane 0, not elect.sync)
            if cute.arch.lane_idx() == 0:
                box_col = ct.epi_box_col(warp_idx, j, c.epi_warps, c.bn)
                for h in cutlass.range_constexpr(ct.BOXES_PER_WARP):
                    box = ct.epi_box_row(warp_idx, h)
                    cute.copy(tma_atom_c, tCsC[None, box, 0, buf], tCgC_box[None, box, box_col])
                cute.arch.cp_async_bulk_commit_group()  # this chunk's boxes form one bulk group
        cute.arch.cp_async_bulk_wait_group(0, read=True)  # the staging smem must outlive the TMA's reads
