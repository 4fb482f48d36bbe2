"""sm100 phase 4: a 2-SM pair, tcgen05.mma.cta_group::2 (worklog: 1285 TFLOP/s at 4096^3).

Compared to phase 3 (one CTA computes a 128x256 tile), two CTAs of a cluster (2,1,1) compute one
256x256 tile with ``m256n256k16`` MMAs (``CtaGroup.TWO``; idesc M>>4 = 16: 0x10410010). Each CTA loads
its own 128 rows of A and **half of B** (128 of the 256 columns, two 64-column slabs) with
``CopyBulkTensorTileG2SOp(CtaGroup.TWO)``: the ``.cta_group::2`` TMA completes its bytes on the full
barrier of rank 0 (the leader), whose producer arms it with expect_tx of both CTAs' bytes (32 KiB).
Only the leader's MMA warp issues; each MMA reads A and B from both CTAs' smem and writes each CTA's
own 128 TMEM lanes x 256 columns. The MMA's commits multicast to both CTAs
(``tcgen05.commit.cta_group::2 ... .multicast::cluster``, mask 0b11): to the empty barriers, so each
CTA's producer may refill its half of the slot, and to the accumulator barriers, so each CTA's 8
epilogue warps drain their own 128 rows exactly as in phase 3. TMEM is allocated and freed with
``cta_group::2`` by both CTAs (the allocator's dealloc mbarrier keeps one CTA from freeing columns
the pair still uses); the producer and the MMA warp run pipeline tails so no remote arrival lands in
a CTA that has exited.

Why: for the same 256-column accumulator per CTA (TMEM still allows 2 CTAs per SM), each CTA's smem
stage shrinks from 24 KiB (A 8 + B 16) to 16 KiB (A 8 + B 8), because the B tile is shared by the
pair instead of loaded twice. Per stage the pair moves 32 KiB for 2*256*256*32 FLOP = 1/128 B/FLOP
(phase 3: 3/256; phase 2: 1/64), so L2 -> smem traffic per FLOP falls by a third, and the tensor
work per handshake doubles again (one m256n256k16 keeps both SMs' tensor pipes busy ~128 cycles).
NSTAGES=3 is 48 KiB per CTA; the launch asks for 76,801 B so that smem, like TMEM, admits 2 CTAs per
SM (48 KiB would admit 4, two of them only to block in tcgen05.alloc).

Constraints:
- Operands (``phases.operands``, read from the tensors): fp16 or bf16 A and B, A K-major (the worklog's) or
  M-major, B N-major (the worklog's) or K-major (a transposed [N, K] weight), C fp32 / fp16 / bf16 row-major.
  Any M >= 1 with N and K multiples of 8 (16-B TMA rows) for the worklog's layouts; the contiguous extent of
  each operand must be a multiple of 8 (an M-major A: M too).
- The grid has ceil(M / 256) pairs: the second CTA of the last pair may lie entirely past M (its A boxes are
  zero-filled, every chunk of its epilogue is predicated off), which keeps the pair's MMA and barriers the
  same for every pair.
- sm_100a / sm_103a; cluster launch (2,1,1); 320 threads per CTA (epilogue warps 0-7, MMA warp 8, TMA warp 9);
  TMEM 256 columns per CTA; dynamic smem ~49 KiB per CTA.
"""

import dataclasses

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
from cutlass.cute.nvgpu import cpasync, tcgen05
from cutlass.memory import SmemAllocator

from phases import operands
from phases.base import GemmPhase, TileConfig
from phases.cluster import require_cluster_dims
from phases.raster import ceil_div
from phases.sm100 import common
from phases.sm100 import common_tma as ct


@dataclasses.dataclass(frozen=True)
class Sm100Phase4Config(TileConfig):
    """Phase 3's CTA (BM=128 rows, BN=256, 8 epilogue warps) paired along M: a 256x256 tile per cluster."""

    bn: int = 256  # per CTA 128 x 256 fp32 = 256 TMEM columns; the pair's MMA is m256n256k16
    stages: int = 3  # NSTAGES: the worklog's best for the TMA kernel
    cluster_m: int = 2  # __cluster_dims__(2,1,1): the pair; tile_m() = 256 is the M divisibility unit
    epi_warps: int = 8  # warps 0-7 drain the accumulator (lanes (w%4)*32, column half w//4); warp 8 MMA, warp 9 TMA


class Sm100Phase4(common.Guarded, GemmPhase):
    arch = "sm100"
    phase = "4"
    Config = Sm100Phase4Config
    summary = "2-SM pair: cluster (2,1,1), tcgen05.mma.cta_group::2 on a 256x256 tile, each CTA loads half of B"
    adds = "cta_group::2 MMA across a CTA pair: B shared by the pair, commits multicast to both CTAs"
    worklog = "1285 TFLOP/s at 4096^3 (B300)"

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
        self.shared_storage = ct.make_shared_storage(c.stages)
        used = ct.smem_bytes_of(self.shared_storage, a_bytes * c.stages, b_bytes * c.stages)
        # asked for: what the kernel uses, raised so that smem admits no more CTAs per SM than TMEM holds
        self.smem_bytes = common.smem_request(used, self.tmem_cols)

    def grid(self, m, n, k):
        # one cluster of 2 CTAs per 256-row pair tile; the second CTA of the last pair may lie entirely past
        # M (its loads are zero-filled, its stores predicated off)
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
        self.kernel(
            self.tiled_mma, tma_atom_a, mA_tma, tma_atom_b, mB_tma, mC, self.a_smem_layout, self.b_smem_layout,
            self.cluster_vmnk,
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
        mC: cute.Tensor,
        a_smem_layout: cute.ComposedLayout,
        b_smem_layout: cute.ComposedLayout,
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

        # --- smem: barriers, then the A and B rings (1024-B aligned for SW64/SW128) ---
        smem = SmemAllocator()
        storage = smem.allocate(self.shared_storage)
        sA = smem.allocate_tensor(
            self.types.ab, a_smem_layout.outer, byte_alignment=ct.SMEM_ALIGN, swizzle=a_smem_layout.inner
        )
        sB = smem.allocate_tensor(
            self.types.ab, b_smem_layout.outer, byte_alignment=ct.SMEM_ALIGN, swizzle=b_smem_layout.inner
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
        gC = cute.local_tile(mC, self.mma_tiler, mma_coord, proj=(1, 1, None))
        cC = cute.local_tile(cute.make_identity_tensor(mC.shape), self.mma_tiler, mma_coord, proj=(1, 1, None))
        thr_mma = tiled_mma.get_slice(mma_v)
        tCgA = thr_mma.partition_A(gA)
        tCgB = thr_mma.partition_B(gB)
        tCgC = thr_mma.partition_C(gC)
        tCcC = thr_mma.partition_C(cC)  # (row, column) of each element of tCgC: the epilogue's predicate
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
                common.epilogue_tmem_to_global(
                    tCtAcc[(None, None), 0, 0], tCgC[(None, None), 0, 0], tCcC[(None, None), 0, 0], mC.shape,
                    tidx, self.cfg.epi_warps,
                )
                common.tmem_reads_done()  # this thread's tcgen05.ld's, before the release
                acc_full.release()

                # every epilogue warp's tcgen05.ld is done before the columns are freed
                common.free_tmem(tmem, tmem_ptr, pipeline.NamedBarrier(barrier_id=2, num_threads=32 * self.cfg.epi_warps))
