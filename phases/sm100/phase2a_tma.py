"""sm100 phase 2a: TMA loads with an expect_tx mbarrier ring (worklog: 959 TFLOP/s at 4096^3, NS=3).

Compared to phase 1 (an NSTAGES cp.async ring filled by all 128 threads), this replaces the copies
with TMA: one thread arms the stage's full mbarrier with the stage's byte count (expect_tx) and issues
``cp.async.bulk.tensor.2d`` for A and for each 64-column slab of B; the TMA engine completes the
transaction on the mbarrier when the bytes have landed (``mbarrier::complete_tx::bytes``). The same
thread issues the two ``m128n128k16`` MMAs of the stage and commits them to the slot's empty barrier.

Why: in phase 1 all four warps spent instructions on 16-B copies, address and swizzle arithmetic and
``wait_prior`` every k-block, and a block barrier tied them together. With TMA the copy is one
instruction per box in one thread; the swizzle is done by the TMA unit (SWIZZLE_64B for A,
SWIZZLE_128B for B), and the data lands through the async proxy that the MMA reads, so the phase-0/1
generic-to-async proxy fence disappears rather than being patched in. The loop keeps phase 1's order
(refill the slot freed by MMA t-1, then wait for tile t, then issue MMA t): the worklog changed only
the copy engine here, and gives the two waits to different warps in phase 2b.

Numbers (BM=BN=128, BK=32, fp16): one stage is A 128x32 = 8 KiB + B 32x128 = 8 KiB = 16 KiB, the
expect_tx count; NSTAGES=3 is 48 KiB of smem per CTA. The fp32 accumulator is 128 lanes x 128 TMEM
columns, so TMEM (512 columns) still caps residency at 4 CTAs per SM (smem would allow 4 too).
Bytes per FLOP of a stage: 16 KiB / (2*128*128*32) = 1/64 B/FLOP.

B's slabs: the helper's N-major SW128 smem layout tiles the 64(N)x8(K) atom along K first, so each
64-column slab holds all BK rows contiguously (4 KiB) and the next slab follows: ``make_tiled_tma_atom_B``
makes a {64, BK} box with SWIZZLE_128B and one ``cute.copy`` issues BN/64 = 2 box loads per stage (plus
one {32, 128} box for A), exactly the worklog's phase-2 slab packing (B_LBO = 4096, B_SBO = 1024).

Epilogue: unchanged from phases 0/1 (tcgen05.ld 32x32b -> st.global fp32, warp w = TMEM lanes 32w..),
after the MMA warp's final commit arrives on the accumulator barrier (``PipelineUmmaAsync``).

Constraints:
- Operands (``phases.operands``, read from the tensors): fp16 or bf16 A and B, A K-major (the worklog's) or
  M-major, B N-major (the worklog's) or K-major (a transposed [N, K] weight), C fp32 / fp16 / bf16 row-major
  (a 16-bit C rounded from the fp32 accumulator before the st.global). Any M >= 1 with N and K multiples of 8
  (16-B TMA rows) for the worklog's layouts; the contiguous extent of each operand must be a multiple of 8 (an
  M-major A: M too).
- One compile serves every shape: the tile counts are runtime values, a box that sticks out of A or B is
  zero-filled by the TMA (a partial last k-tile adds zeros; expect_tx still counts the whole box), and the
  epilogue predicates each 8-column chunk of a row on its coordinates.
- sm_100a / sm_103a (tcgen05, TMA); 128 threads; TMEM 128 columns; dynamic smem ~49 KiB.
"""

import dataclasses

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
from cutlass.cute.nvgpu import cpasync, tcgen05
from cutlass.memory import SmemAllocator

from phases import operands
from phases.base import GemmPhase, TileConfig
from phases.raster import ceil_div
from phases.sm100 import common
from phases.sm100 import common_tma as ct


@dataclasses.dataclass(frozen=True)
class Sm100Phase2aConfig(TileConfig):
    """The worklog's phase-2a configuration: BM=BN=128, BK=32, NSTAGES=3, 4 warps."""

    stages: int = 3  # NSTAGES: the worklog's best for the TMA kernel
    epi_warps: int = 4  # all 4 warps drain the accumulator; warp 0 also issues TMA and MMA


class Sm100Phase2a(common.Guarded, GemmPhase):
    arch = "sm100"
    phase = "2a"
    Config = Sm100Phase2aConfig
    summary = "TMA loads (expect_tx mbarrier ring, NSTAGES=3), one thread issues TMA and MMA, st.global epilogue"
    adds = "TMA 2-D loads (A box + BN/64 B slabs) completing on expect_tx mbarriers instead of cp.async"
    worklog = "959 TFLOP/s at 4096^3 (B300, NS=3)"

    def config_problems(self) -> list[str]:
        return common.tile_problems(self.cfg, 1) + common.epilogue_warp_problems(self.cfg.epi_warps)

    def _setup_attributes(self):
        self.refuse_bad_config()
        c = self.cfg
        self.mma_tiler = (c.bm, c.bn, c.bk)
        self.threads = 32 * c.epi_warps
        self.tmem_cols = common.tmem_cols_for(c.bn)
        self.cluster = (1, 1, 1)
        self.tiled_mma = ct.make_tiled_mma(c.bm, c.bn, tcgen05.CtaGroup.ONE, self.types)
        self.a_smem_layout, self.b_smem_layout = ct.make_ab_smem_layouts(
            self.tiled_mma, self.mma_tiler, c.stages, self.types.ab
        )
        a_bytes, b_bytes = ct.stage_bytes(self.a_smem_layout, self.b_smem_layout, self.types.ab)
        self.tx_bytes = a_bytes + b_bytes  # what expect_tx arms per stage: A's box + B's slabs
        self.shared_storage = ct.make_shared_storage(c.stages)
        used = ct.smem_bytes_of(self.shared_storage, a_bytes * c.stages, b_bytes * c.stages)
        # asked for: what the kernel uses, raised so that smem admits no more CTAs per SM than TMEM holds
        self.smem_bytes = common.smem_request(used, self.tmem_cols)

    def grid(self, m, n, k):
        return (ceil_div(m, self.cfg.bm), ceil_div(n, self.cfg.bn), 1)  # one CTA per tile, partial ones included

    @cute.jit
    def __call__(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream):
        self.types = operands.read(mA, mB, mC)  # element types and majors, as given
        self._setup_attributes()
        tma_op = cpasync.CopyBulkTensorTileG2SOp(tcgen05.CtaGroup.ONE)
        tma_atom_a, mA_tma, tma_atom_b, mB_tma = ct.make_ab_tma_atoms(
            tma_op, mA, mB, self.a_smem_layout, self.b_smem_layout, self.mma_tiler, self.tiled_mma
        )
        self.kernel(
            self.tiled_mma, tma_atom_a, mA_tma, tma_atom_b, mB_tma, mC, self.a_smem_layout, self.b_smem_layout
        ).launch(grid=self.grid(*self.problem_mnk(mA, mC)), block=(self.threads, 1, 1), smem=self.smem_bytes,
                 stream=stream)

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
    ):
        NSTAGES = self.cfg.stages
        tidx, _, _ = cute.arch.thread_idx()
        warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        bidx, bidy, _ = cute.arch.block_idx()

        # --- smem: barriers, then the A and B rings (1024-B aligned for SW64/SW128) ---
        smem = SmemAllocator()
        storage = smem.allocate(self.shared_storage)
        sA = smem.allocate_tensor(
            self.types.ab, a_smem_layout.outer, byte_alignment=ct.SMEM_ALIGN, swizzle=a_smem_layout.inner
        )
        sB = smem.allocate_tensor(
            self.types.ab, b_smem_layout.outer, byte_alignment=ct.SMEM_ALIGN, swizzle=b_smem_layout.inner
        )

        # --- TMEM: warp 0 allocates the accumulator's columns; everyone reads the address after the barrier ---
        tmem = common.TmemAllocator(
            storage.tmem_holding_buf.ptr,
            barrier_for_retrieve=pipeline.NamedBarrier(barrier_id=1, num_threads=self.threads),
        )
        tmem.allocate(self.tmem_cols)
        tmem.relinquish_alloc_permit()  # nothing else to allocate: a co-resident CTA's alloc need not wait

        if warp_idx == 0:
            cpasync.prefetch_descriptor(tma_atom_a)
            cpasync.prefetch_descriptor(tma_atom_b)

        # full[s]: armed with expect_tx(tx_bytes) by the issuing thread, completed by the TMA bytes.
        # empty[s]: arrived by tcgen05.commit once the MMAs that read slot s have finished.
        ab_producer, ab_consumer = pipeline.PipelineTmaUmma.create(
            num_stages=NSTAGES,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            tx_count=self.tx_bytes,
            barrier_storage=storage.ab_mbar.data_ptr(),
        ).make_participants()
        # accumulator ready: the last commit arrives once; every epilogue thread waits on it
        acc_producer, acc_consumer = pipeline.PipelineUmmaAsync.create(
            num_stages=1,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, self.threads),
            barrier_storage=storage.acc_mbar.data_ptr(),
        ).make_participants()

        # --- partition: this CTA's (BM, BK, k) A tiles, (BN, BK, k) B tiles, (BM, BN) C tile ---
        mma_coord = (bidx, bidy, None)
        gA = cute.local_tile(mA_tma, self.mma_tiler, mma_coord, proj=(1, None, 1))
        gB = cute.local_tile(mB_tma, self.mma_tiler, mma_coord, proj=(None, 1, 1))
        gC = cute.local_tile(mC, self.mma_tiler, mma_coord, proj=(1, 1, None))
        cC = cute.local_tile(cute.make_identity_tensor(mC.shape), self.mma_tiler, mma_coord, proj=(1, 1, None))
        thr_mma = tiled_mma.get_slice(0)
        tCgA = thr_mma.partition_A(gA)
        tCgB = thr_mma.partition_B(gB)
        tCgC = thr_mma.partition_C(gC)
        tCcC = thr_mma.partition_C(cC)  # (row, column) of each element of tCgC: the epilogue's predicate
        tCrA = tiled_mma.make_fragment_A(sA)  # smem descriptors, (MMA, MMA_M, MMA_K, NSTAGES)
        tCrB = tiled_mma.make_fragment_B(sB)
        tCtAcc_fake = tiled_mma.make_fragment_C(tiled_mma.partition_shape_C(self.mma_tiler[:2]))
        # one TMA copy per stage and operand: A is one box, B is BN/64 slab boxes
        tAsA, tAgA = cpasync.tma_partition(
            tma_atom_a, 0, cute.make_layout(1), cute.group_modes(sA, 0, 3), cute.group_modes(tCgA, 0, 3)
        )
        tBsB, tBgB = cpasync.tma_partition(
            tma_atom_b, 0, cute.make_layout(1), cute.group_modes(sB, 0, 3), cute.group_modes(tCgB, 0, 3)
        )

        tmem.wait_for_alloc()
        tmem_ptr = tmem.retrieve_ptr(ct.ACC_DTYPE)
        tCtAcc = cute.make_tensor(tmem_ptr, tCtAcc_fake.layout)

        # --- mainloop: warp 0 issues TMA and MMA (the DSL elects one thread for each) ---
        # Tile t lives in slot t % NSTAGES. The prologue loads tiles 0..NSTAGES-2; iteration t first
        # refills tile t+NSTAGES-1 into the slot MMA t-1 read, then consumes tile t (phase 1's order).
        k_tiles = cute.size(gA, mode=[2])
        prologue = cutlass.min(NSTAGES - 1, k_tiles)
        if warp_idx == 0:
            acc_empty = acc_producer.acquire_and_advance()  # fresh barrier: passes at once
            tiled_mma.set(tcgen05.Field.ACCUMULATE, False)
            for kt in cutlass.range(prologue, unroll=1):  # slots start empty: acquire does not wait
                ab_empty = ab_producer.acquire_and_advance()  # + mbarrier.arrive.expect_tx(full[slot])
                cute.copy(tma_atom_a, tAgA[(None, kt)], tAsA[(None, ab_empty.index)], tma_bar_ptr=ab_empty.barrier)
                cute.copy(tma_atom_b, tBgB[(None, kt)], tBsB[(None, ab_empty.index)], tma_bar_ptr=ab_empty.barrier)
            for kt in cutlass.range(k_tiles, unroll=1):
                if kt + prologue < k_tiles:
                    # acquire waits on empty[slot]: the commit of MMA kt-1, the last reader of this slot
                    ab_empty = ab_producer.acquire_and_advance()
                    kp = kt + prologue
                    cute.copy(tma_atom_a, tAgA[(None, kp)], tAsA[(None, ab_empty.index)], tma_bar_ptr=ab_empty.barrier)
                    cute.copy(tma_atom_b, tBgB[(None, kp)], tBsB[(None, ab_empty.index)], tma_bar_ptr=ab_empty.barrier)
                ab_full = ab_consumer.wait_and_advance()  # full[slot] flips when its tx count reaches 0
                for kb in cutlass.range_constexpr(cute.size(tCrA, mode=[2])):  # BK/16 = 2 MMAs per stage
                    kcoord = (None, None, kb, ab_full.index)
                    cute.gemm(tiled_mma, tCtAcc, tCrA[kcoord], tCrB[kcoord], tCtAcc)
                    tiled_mma.set(tcgen05.Field.ACCUMULATE, True)
                ab_full.release()  # tcgen05.commit -> empty[slot]: the slot may be refilled
            acc_empty.commit()  # tcgen05.commit -> accumulator full: every MMA above has finished

        # --- epilogue: all 4 warps, warp w drains TMEM lanes 32w..32w+31 ---
        acc_full = acc_consumer.wait_and_advance()
        common.epilogue_tmem_to_global(
            tCtAcc[(None, None), 0, 0], tCgC[(None, None), 0, 0], tCcC[(None, None), 0, 0], mC.shape, tidx,
            self.cfg.epi_warps,
        )
        common.tmem_reads_done()  # this thread's tcgen05.ld's, before the release
        acc_full.release()

        # every warp's tcgen05.ld is done before the columns are freed
        common.free_tmem(tmem, tmem_ptr, pipeline.NamedBarrier(barrier_id=1, num_threads=self.threads))
