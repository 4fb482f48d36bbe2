"""sm100 phase 2b: warp specialization on top of the TMA ring (worklog: 978 TFLOP/s at 4096^3).

Compared to phase 2a (one thread of warp 0 issues both the TMA loads and the MMAs, in phase 1's
order: refill the slot MMA t-1 read, then wait for tile t, then issue MMA t), this gives each
asynchronous engine its own warp, connected by the DSL's mbarrier pipelines:

- warp 5, the TMA producer: ``PipelineTmaUmma`` producer; waits on empty[s], arms full[s] with
  expect_tx(16 KiB), issues A's box and B's two slabs; runs up to NSTAGES tiles ahead;
- warp 4, the MMA issuer: waits on full[s], issues the two ``m128n128k16`` MMAs, commits them to
  empty[s] (``tcgen05.commit``), and after the last k-block commits to the accumulator barrier
  (``PipelineUmmaAsync`` producer);
- warps 0-3, the epilogue: allocate TMEM (warp 0), wait on the accumulator barrier, tcgen05.ld
  32x32b -> st.global exactly as before (warp w: TMEM lanes 32w..32w+31).

Why: phase 2a's single issuing thread serializes two waits per k-block -- the wait for MMA t-1's
commit (to refill its slot) sits in front of MMA t's issue, so the tensor pipe drains every
iteration while the commit -> mbarrier -> thread -> refill -> issue round trip (a few hundred cycles)
runs with nothing queued. With separate warps the MMA warp waits only for data and keeps MMA t
queued behind t-1; the producer waits for the empty slot on its own. The worklog measured +1.5% at
4096^3 (978 vs 959), where 4 co-resident CTAs per SM already hid most of the round trip, and about
+30% at M=1024, where most SMs hold a single block and shortening its chain is the only lever.

Numbers: unchanged from 2a -- 16 KiB per stage, NSTAGES=3 (48 KiB), 128 TMEM columns (4 CTAs/SM by
TMEM), 1/64 B/FLOP per stage; 192 threads (6 warps) instead of 128.

Constraints:
- Operands (``phases.operands``, read from the tensors): fp16 or bf16 A and B, A K-major (the worklog's) or
  M-major, B N-major (the worklog's) or K-major (a transposed [N, K] weight), C fp32 / fp16 / bf16 row-major;
  partial tiles as in phase 2a (zero-filled boxes, predicated chunks). Any M >= 1 with N and K multiples of 8
  (16-B TMA rows) for the worklog's layouts; the contiguous extent of each operand must be a multiple of 8 (an
  M-major A: M too).
- sm_100a / sm_103a; 192 threads (epilogue warps 0-3, MMA warp 4, TMA warp 5); TMEM 128 columns; dynamic smem
  ~49 KiB.
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
class Sm100Phase2bConfig(TileConfig):
    """Phase 2a's tile and ring, plus the warp roles: 4 epilogue warps, 1 MMA warp, 1 TMA warp."""

    stages: int = 3  # NSTAGES: the worklog's best for the TMA kernel
    epi_warps: int = 4  # warps 0-3 drain the accumulator; warp 4 issues MMAs, warp 5 issues TMA


class Sm100Phase2b(common.Guarded, GemmPhase):
    arch = "sm100"
    phase = "2b"
    Config = Sm100Phase2bConfig
    summary = "TMA ring + warp specialization: TMA producer warp, MMA warp, 4 epilogue warps"
    adds = "warp specialization: producer (TMA) warp, MMA warp and epilogue warps joined by mbarrier pipelines"
    worklog = "978 TFLOP/s at 4096^3 (B300); about +30% over 2a at M=1024"

    def config_problems(self) -> list[str]:
        return common.tile_problems(self.cfg, 1) + common.epilogue_warp_problems(self.cfg.epi_warps)

    def _setup_attributes(self):
        self.refuse_bad_config()
        c = self.cfg
        self.mma_tiler = (c.bm, c.bn, c.bk)
        self.threads = 32 * (c.epi_warps + 2)  # + the MMA warp and the TMA producer warp
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
        EPI_WARP0, MMA_WARP, TMA_WARP = 0, self.cfg.epi_warps, self.cfg.epi_warps + 1  # warp roles
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

        # --- TMEM: epilogue warp 0 allocates the accumulator's columns; the MMA and epilogue warps read the address ---
        tmem = common.TmemAllocator(
            storage.tmem_holding_buf.ptr,
            barrier_for_retrieve=pipeline.NamedBarrier(barrier_id=1, num_threads=32 * (self.cfg.epi_warps + 1)),
            allocator_warp_id=EPI_WARP0,
        )
        tmem.allocate(self.tmem_cols)
        tmem.relinquish_alloc_permit()  # nothing else to allocate: a co-resident CTA's alloc need not wait

        if warp_idx == TMA_WARP:
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
            consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32 * self.cfg.epi_warps),
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
                # --- MMA warp: waits only for data, never for its own MMAs (the commit frees the slot) ---
                acc_empty = acc_producer.acquire_and_advance()  # fresh barrier: passes at once
                tiled_mma.set(tcgen05.Field.ACCUMULATE, False)
                for kt in cutlass.range(k_tiles, unroll=1):
                    ab_full = ab_consumer.wait_and_advance()  # full[slot] flips when its tx count reaches 0
                    for kb in cutlass.range_constexpr(cute.size(tCrA, mode=[2])):  # BK/16 = 2 MMAs per stage
                        kcoord = (None, None, kb, ab_full.index)
                        cute.gemm(tiled_mma, tCtAcc, tCrA[kcoord], tCrB[kcoord], tCtAcc)
                        tiled_mma.set(tcgen05.Field.ACCUMULATE, True)
                    ab_full.release()  # tcgen05.commit -> empty[slot]: the producer may refill it
                acc_empty.commit()  # tcgen05.commit -> accumulator full: every MMA above has finished
            else:
                # --- epilogue warps 0..3: warp w drains TMEM lanes 32w..32w+31 ---
                acc_full = acc_consumer.wait_and_advance()
                common.epilogue_tmem_to_global(
                    tCtAcc[(None, None), 0, 0], tCgC[(None, None), 0, 0], tCcC[(None, None), 0, 0], mC.shape,
                    tidx, self.cfg.epi_warps,
                )
                common.tmem_reads_done()  # this thread's tcgen05.ld's, before the release
                acc_full.release()

                # every epilogue warp's tcgen05.ld is done before the columns are freed
                common.free_tmem(tmem, tmem_ptr, pipeline.NamedBarrier(barrier_id=2, num_threads=32 * self.cfg.epi_warps))
