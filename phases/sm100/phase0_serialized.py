"""sm100 phase 0: the serialized baseline (worklog section 3; 713 TFLOP/s at 4096^3, 460 at M=1024 on B300).

What it is: two smem stages; all 128 threads copy the next BM x BK / BN x BK tile with 16-B cp.async
straight into the swizzled layouts the UMMA reads (A K-major SW64, B N-major SW128); one thread
issues the two m128n128k16 tcgen05.mma of a BK=32 stage and commits them to an mbarrier; then
everyone waits for the MMA, then for its own copies, then at a block barrier. The accumulator lives
in TMEM (128 lanes x 128 fp32 columns); the epilogue reads it with tcgen05.ld 32x32b (warp w owns
lanes 32w..32w+31 = rows of C) and writes fp32 with st.global.

Why it is slow (worklog 3.2-3.3): one iteration keeps the tensor pipe busy ~130 cycles (2 x 64-cycle
MMAs) out of ~1100: the MMA round trip (issue, execute, commit, mbarrier flip, 128 threads notice)
and the cp.async latency are both exposed, every iteration. Numbers: 8 KB of A + 8 KB of B per
stage, 32 KB in all; 128 TMEM columns, so TMEM (512 columns) caps residency at 4 CTAs per SM. 32 KB
would let 6 CTAs share an SM's 228 KB, and the 5th and 6th would start only to block in tcgen05.alloc
(holding smem and warps) until a resident CTA frees its columns: the launch asks for 45,671 B of smem
(``common.smem_request``), the least that admits no more than 4.
Bytes per FLOP: each CTA loads (BM + BN) * BK * 2 B = 16 KB per 2*BM*BN*BK = 1 MFLOP, 1/64 B/FLOP.

Over the worklog: a ``fence.proxy.async.shared::cta`` after each thread's copies land (generic proxy
writes, async proxy MMA reads); the worklog's phase 0 has none and is "correct by timing".

Constraints:
- M % 128 == 0, N % 128 == 0, K % 32 == 0 (no predication; phase 2a on takes any shape); one compile
  serves all such shapes (symbolic M, N, K); exactly 2 stages, 4 warps.
- A (M,K) K-major fp16, B (N,K) N-major fp16, C (M,N) N-major fp32, 16-B aligned.
- sm_100a / sm_103a (tcgen05).
"""

import dataclasses

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
from cutlass.cute.nvgpu import tcgen05
from cutlass.memory import SmemAllocator

from phases.base import GemmPhase, TileConfig
from phases.sm100 import common


@dataclasses.dataclass(frozen=True)
class Sm100Phase0Config(TileConfig):
    """The worklog's phase-0 kernel: BM=128 BN=128 BK=32, 2 static stages, 4 warps."""

    bm: int = 128
    bn: int = 128
    bk: int = 32
    stages: int = 2
    warps: int = 4


@cute.struct
class SharedStorage:
    mma_mbar: cute.struct.MemRange[cutlass.Int64, 2]  # PipelineUmmaAsync: full (used) + empty
    tmem_holding_buf: cutlass.Int32  # tcgen05.alloc writes the TMEM base address here


class Sm100Phase0(common.Guarded, GemmPhase):
    """cp.async double buffer, wait for every MMA (see the module docstring)."""

    arch = "sm100"
    phase = "0"
    Config = Sm100Phase0Config
    summary = "cp.async double buffer into UMMA layouts; tcgen05.mma x2 per BK, waited every iteration"
    adds = "baseline: 128 threads cp.async, one thread issues tcgen05.mma + commit, TMEM accumulator"
    worklog = "713 TFLOP/s at 4096^3, 460 at M=1024 (B300)"
    ragged = False  # whole 16-B cp.async vectors and whole-tile stores: tile multiples only
    general_operands = False  # its copies and MMA are written for the worklog's fp16 A, B and fp32 C

    def config_problems(self) -> list[str]:
        c = self.cfg
        why = common.tile_problems(c, 1) + common.cpasync_problems(c)
        if c.stages != 2:
            why.append(f"stages={c.stages}: phase 0 has exactly 2 static stages (phase 1 makes NSTAGES configurable)")
        return why

    def _setup_attributes(self):
        self.refuse_bad_config()
        c = self.cfg
        self.threads = 32 * c.warps
        self.tiled_mma, self.a_smem_layout, self.b_smem_layout = common.make_mma_and_smem_layouts(
            c.bm, c.bn, c.bk, c.stages
        )
        self.tmem_cols = common.tmem_cols_for(c.bn)
        a_bytes = cute.size_in_bytes(cutlass.Float16, self.a_smem_layout.outer)
        b_bytes = cute.size_in_bytes(cutlass.Float16, self.b_smem_layout.outer)
        # sA and sB, each 1024-aligned (B's SW128 key is address bits [9:7]), then the barriers
        used = a_bytes + b_bytes + SharedStorage.size_in_bytes()
        # asked for: what the kernel uses, raised so that smem admits no more CTAs per SM than TMEM holds
        self.smem_bytes = common.smem_request(used, self.tmem_cols)
        self.cluster = (1, 1, 1)

    def grid(self, m, n, k):
        return (m // self.cfg.bm, n // self.cfg.bn, 1)  # one CTA per tile (tile multiples only)

    @cute.jit
    def __call__(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream):
        why = self.operand_problems(self.operands)
        assert not why, "; ".join(why)
        self._setup_attributes()
        c = self.cfg
        tiled_copy_a = common.make_cpasync_copy_a(self.threads, c.bk)
        tiled_copy_b = common.make_cpasync_copy_b(self.threads, c.bn)
        self.kernel(
            self.tiled_mma, tiled_copy_a, tiled_copy_b, mA, mB, mC, self.a_smem_layout, self.b_smem_layout
        ).launch(
            grid=self.grid(*self.problem_mnk(mA, mC)), block=(self.threads, 1, 1), smem=self.smem_bytes,
            stream=stream,
        )

    @cute.kernel
    def kernel(
        self,
        tiled_mma: cute.TiledMma,
        tiled_copy_a: cute.TiledCopy,
        tiled_copy_b: cute.TiledCopy,
        mA: cute.Tensor,
        mB: cute.Tensor,
        mC: cute.Tensor,
        a_smem_layout: cute.ComposedLayout,
        b_smem_layout: cute.ComposedLayout,
    ):
        c = self.cfg
        tidx, _, _ = cute.arch.thread_idx()
        warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        bidx, bidy, _ = cute.arch.block_idx()

        # --- smem: A_shared[2][BM][BK], B_shared[2][BK][BN] (1024-aligned), then barriers ------------
        smem = SmemAllocator()
        sA = smem.allocate_tensor(
            cutlass.Float16, a_smem_layout.outer, byte_alignment=1024, swizzle=a_smem_layout.inner
        )
        sB = smem.allocate_tensor(
            cutlass.Float16, b_smem_layout.outer, byte_alignment=1024, swizzle=b_smem_layout.inner
        )
        storage = smem.allocate(SharedStorage)

        # --- TMEM: 128 lanes x BN fp32 columns ------------------------------------------------------
        tmem, tmem_ptr = common.tmem_allocate(storage.tmem_holding_buf.ptr, self.tmem_cols, self.threads)

        # The worklog's mma_mbar: the MMA thread commits (tcgen05.commit arrives once when both MMAs
        # are done), all 128 threads wait on it. Only the full barrier is used: the block barrier at
        # the end of every iteration already tells the MMA thread that the stage may be read.
        mma_done = pipeline.PipelineUmmaAsync.create(
            num_stages=1,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, self.threads),
            barrier_storage=storage.mma_mbar.data_ptr(),
        )
        mma_commit_state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, 1)
        mma_wait_state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, 1)

        # --- partition ------------------------------------------------------------------------------
        # (BM, BK, k_tiles) / (BN, BK, k_tiles) / (BM, BN)
        gA = cute.local_tile(mA, (c.bm, c.bk), (bidx, None))
        gB = cute.local_tile(mB, (c.bn, c.bk), (bidy, None))
        gC = cute.local_tile(mC, (c.bm, c.bn), (bidx, bidy))
        # copies see smem as (BM, BK, stage); the MMA as ((128,16), 1, BK/16, stage)
        thr_copy_a = tiled_copy_a.get_slice(tidx)
        thr_copy_b = tiled_copy_b.get_slice(tidx)
        tAgA = thr_copy_a.partition_S(gA)
        tAsA = thr_copy_a.partition_D(cute.make_tensor(sA.iterator, common.mma_to_copy_view(sA.layout)))
        tBgB = thr_copy_b.partition_S(gB)
        tBsB = thr_copy_b.partition_D(cute.make_tensor(sB.iterator, common.mma_to_copy_view(sB.layout)))
        tCrA = tiled_mma.make_fragment_A(sA)  # smem descriptors
        tCrB = tiled_mma.make_fragment_B(sB)
        acc_layout = tiled_mma.make_fragment_C(tiled_mma.partition_shape_C((c.bm, c.bn))).layout
        tCtAcc = cute.make_tensor(tmem_ptr, acc_layout)  # (128 lanes, BN columns) fp32
        k_tiles = cute.size(gA, mode=[2])
        k_blocks = cute.size(tCrA, mode=[2])  # BK / 16 = 2 MMAs per stage

        # --- prologue: tile 0 -> stage 0 ------------------------------------------------------------
        cute.copy(tiled_copy_a, tAgA[None, None, None, 0], tAsA[None, None, None, 0])
        cute.copy(tiled_copy_b, tBgB[None, None, None, 0], tBsB[None, None, None, 0])
        cute.arch.cp_async_commit_group()
        cute.arch.cp_async_wait_group(0)
        common.fence_cpasync_to_umma()
        cute.arch.sync_threads()

        # --- mainloop -------------------------------------------------------------------------------
        for k_tile in cutlass.range(k_tiles, unroll=1):
            stage = k_tile % 2
            # all 128 threads: 4 cp.async for A, 4 for B, into the other stage
            if k_tile + 1 < k_tiles:
                cute.copy(tiled_copy_a, tAgA[None, None, None, k_tile + 1], tAsA[None, None, None, 1 - stage])
                cute.copy(tiled_copy_b, tBgB[None, None, None, k_tile + 1], tBsB[None, None, None, 1 - stage])
            cute.arch.cp_async_commit_group()

            # one thread: K[0:16] and K[16:32], then commit both to mma_mbar
            # (warp 0 runs it; cute.gemm and the commit each elect one lane: single-thread instructions)
            if warp_idx == 0:
                for k_block in cutlass.range_constexpr(k_blocks):
                    # the first MMA of the first tile overwrites TMEM (no zero-fill needed)
                    tiled_mma.set(tcgen05.Field.ACCUMULATE, (k_tile + k_block) != 0)
                    kcoord = (None, None, k_block, stage)
                    cute.gemm(tiled_mma, tCtAcc, tCrA[kcoord], tCrB[kcoord], tCtAcc)
                mma_done.producer_commit(mma_commit_state)
            mma_commit_state.advance()

            mma_done.consumer_wait(mma_wait_state)  # everyone waits for the MMA pair...
            mma_wait_state.advance()
            cute.arch.cp_async_wait_group(0)  # ...then for the copies issued above...
            common.fence_cpasync_to_umma()  # ...makes them visible to the next MMA...
            cute.arch.sync_threads()  # ...and to the MMA thread

        # --- epilogue: TMEM -> registers -> C ---------------------------------------------------------
        # the last iteration already waited for the last commit
        common.epilogue_tmem_to_global(tCtAcc[(None, None), 0, 0], gC, None, None, tidx, c.warps)
        common.tmem_free(tmem, tmem_ptr, self.threads)
