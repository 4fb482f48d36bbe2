"""sm100 phase 3: BN=256 and an 8-warp epilogue (worklog: 1153 TFLOP/s at 4096^3).

Compared to phase 2b (BM=BN=128, 4 epilogue warps), the CTA tile widens to 128x256: one
``m128n256k16`` tcgen05.mma per 16 of K, a 256-column fp32 accumulator in TMEM, B loaded as
BN/64 = 4 slabs per stage, and 8 epilogue warps. The instruction descriptor's N field (bits [17:23),
N>>3) goes from 16 to 32: the PTX passes idesc 0x08410010 instead of 0x08210010 (both: fp32 D at
bit 4, B transposed = N-major at bit 16, M>>4 = 8 at bit 24). Epilogue warp w reads TMEM lanes
(w%4)*32..+31 (tcgen05.ld restricts a warp to the lane quarter of its rank mod 4) and column half
w//4, so each thread still drains 128 columns of one row. Everything else -- the TMA ring, the warp
roles, the pipelines -- is phase 2b's (now MMA warp 8, TMA warp 9).

Why: each k-block now does twice the tensor work (a 128x256x32 stage is ~260 tensor-pipe cycles
instead of ~130) for the same fixed costs: one full/empty handshake, one expect_tx, one A box, and
the same MMA issue and commit round trip. Bytes per FLOP of a stage drop by a quarter: A 8 KiB +
B 16 KiB = 24 KiB per 2*128*256*32 FLOP = 3/256 B/FLOP (vs 1/64). The cost is residency: the
accumulator takes 256 of the 512 TMEM columns, so at most 2 CTAs per SM (4 before); smem is
3 x 24 KiB = 72 KiB per CTA, which would admit 3, the third blocking in tcgen05.alloc: the launch
asks for 76,801 B (``common.smem_request``), the least that admits 2. The wider tile needs twice the
epilogue work per CTA, hence 8 epilogue warps instead of 4 (the worklog's "epilogue win").

M=1024 is not the target here: BN=256 leaves that shape 64 CTAs for 160 SMs (the worklog stops its
M=1024 column at phase 2).

Constraints:
- Operands (``phases.operands``, read from the tensors): fp16 or bf16 A and B, A K-major (the worklog's) or
  M-major, B N-major (the worklog's) or K-major (a transposed [N, K] weight), C fp32 / fp16 / bf16 row-major;
  partial tiles as in phase 2a (zero-filled boxes, predicated chunks). Any M >= 1 with N and K multiples of 8
  (16-B TMA rows) for the worklog's layouts; the contiguous extent of each operand must be a multiple of 8 (an
  M-major A: M too).
- sm_100a / sm_103a; 320 threads (epilogue warps 0-7, MMA warp 8, TMA warp 9); TMEM 256 columns; dynamic smem
  ~73 KiB.
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
class Sm100Phase3Config(TileConfig):
    """Phase 2b with the wide tile: BN=256 and 8 epilogue warps (plus the MMA and TMA warps)."""

    bn: int = 256  # m128n256k16: the accumulator fills 256 TMEM columns
    stages: int = 3  # NSTAGES: the worklog's best for the TMA kernel
    epi_warps: int = 8  # warps 0-7 drain the accumulator (lanes (w%4)*32, column half w//4); warp 8 MMA, warp 9 TMA


class Sm100Phase3(common.Guarded, GemmPhase):
    arch = "sm100"
    phase = "3"
    Config = Sm100Phase3Config
    summary = "128x256 tile (m128n256k16, TMEM 256 cols), 8 epilogue warps, warp-specialized TMA ring"
    adds = "BN=256: twice the MMA work per k-block handshake, 8 warps drain the 256 accumulator columns"
    worklog = "1153 TFLOP/s at 4096^3 (B300)"

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
