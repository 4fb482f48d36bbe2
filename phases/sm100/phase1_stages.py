"""sm100 phase 1: an NSTAGES cp.async ring (worklog section 4; 713 -> 824 TFLOP/s at 4096^3, ~478-485 at M=1024).

Compared to phase 0 this adds: NSTAGES smem slots carved from one 1024-B aligned dynamic-smem ring
(tile t lives in slot t % NSTAGES), one mbarrier per slot, copies issued NSTAGES-1 tiles ahead, and
the MMA wait moved from "right after issue" to "right before that slot is refilled". The copy wait
becomes ``cp.async.wait_group(NSTAGES-1)``: after iteration t's commit NSTAGES+t groups exist, so
leaving NSTAGES-1 pending means groups 0..t are done = tile t has landed.

Why (worklog 4.3): the per-iteration critical path goes from issue loads + drain MMA + drain loads +
sync to issue loads + wait MMA + sync + issue MMA; the exposed load latency (the larger term) is
gone. The MMA wait stays one iteration deep for any NSTAGES: (t + NSTAGES - 1) = (t - 1) mod NSTAGES,
so the slot refilled at t is the one the MMA of t-1 read (worklog 4.4).
Numbers: 16 KB per stage (8 KB A + 8 KB B); NS=2 32 KB (6 CTAs by smem, 4 by TMEM's 512 columns at
128 each: the launch asks for 45,671 B so that smem admits 4, as in phase 0), NS=4 64 KB (3 CTAs).
Worklog sweep at 4096^3: NS=2 808.8, NS=3 801.2, NS=4 627.3; the default is its best, 2. At M=1024
(one CTA on most SMs) it does nothing: the memory wait dominates.

The carve keeps A at offset 0 and B at NSTAGES * 8 KB; every stage stride is a multiple of 1024, so
both keep their swizzle alignment (SW64: 512 B, SW128: 1024 B) in every slot. The barriers go after
the ring, never between A and B (the worklog's trap); ``_carve`` asserts it while tracing.

Over the worklog: ``fence.proxy.async.shared::cta`` after each thread's copies land (phase 0's fix).

Constraints:
- M % 128 == 0, N % 128 == 0, K % 32 == 0 (no predication; phase 2a on takes any shape); one compile
  serves all such shapes (symbolic M, N, K); K >= 32 * (NSTAGES - 1) (the prologue's tiles);
  NSTAGES in {2, 3, 4}; 4 warps.
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

SWIZZLE_ALIGN = 1024  # B's SW128 XOR key is smem address bits [9:7] (A's SW64 needs only 512)


@dataclasses.dataclass(frozen=True)
class Sm100Phase1Config(TileConfig):
    """The worklog's phase-1 kernel: BM=128 BN=128 BK=32, NSTAGES 2/3/4 (best: 2), 4 warps."""

    bm: int = 128
    bn: int = 128
    bk: int = 32
    stages: int = 2
    warps: int = 4


def _shared_storage(stages: int):
    """The barriers and the TMEM address slot, placed after the ring."""

    @cute.struct
    class SharedStorage:
        mma_mbar: cute.struct.MemRange[cutlass.Int64, 2 * stages]  # PipelineAsyncUmma: full + empty per slot
        tmem_holding_buf: cutlass.Int32  # tcgen05.alloc writes the TMEM base address here

    return SharedStorage


def _carve(stages: int, a_stage_bytes: int, b_stage_bytes: int) -> tuple[int, int]:
    """Byte offsets of A_shared and B_shared in the 1024-aligned ring, and the ring's size.

    The static check the worklog made a static_assert: B (and A) keep their swizzle alignment in
    every slot. A padded stage, an odd BK, or barriers between A and B would break B first.
    """
    b_offset = stages * a_stage_bytes
    ring_bytes = b_offset + stages * b_stage_bytes
    for slot in range(stages):
        a_slot, b_slot = slot * a_stage_bytes, b_offset + slot * b_stage_bytes
        assert a_slot % SWIZZLE_ALIGN == 0, f"A slot {slot} at byte {a_slot} breaks the swizzle alignment"
        assert b_slot % SWIZZLE_ALIGN == 0, f"B slot {slot} at byte {b_slot} breaks SW128's 1024-B alignment"
    return b_offset, ring_bytes


class Sm100Phase1(common.Guarded, GemmPhase):
    """NSTAGES cp.async ring, MMA waited just before its slot is refilled (see the module docstring)."""

    arch = "sm100"
    phase = "1"
    Config = Sm100Phase1Config
    summary = "NSTAGES cp.async ring into UMMA layouts; per-slot mbarriers, MMA waited before refill"
    adds = "NSTAGES ring in 1024-aligned dynamic smem, one mbarrier per slot, wait_group(NSTAGES-1)"
    worklog = "824 TFLOP/s at 4096^3 (NS sweep 808.8/801.2/627.3 for 2/3/4), ~478-485 at M=1024 (B300)"
    ragged = False  # whole 16-B cp.async vectors and whole-tile stores: tile multiples only
    general_operands = False  # its copies and MMA are written for the worklog's fp16 A, B and fp32 C

    def config_problems(self) -> list[str]:
        c = self.cfg
        why = common.tile_problems(c, 1) + common.cpasync_problems(c)
        if c.stages not in (2, 3, 4):
            why.append(f"stages={c.stages}: NSTAGES is 2, 3 or 4 (the worklog's sweep)")
        return why

    def can_implement(self, m: int, n: int, k: int) -> list[str]:
        why = super().can_implement(m, n, k)
        c = self.cfg
        if k < c.bk * (c.stages - 1):
            why.append(f"K={k} is shorter than the prologue's NSTAGES-1 = {c.stages - 1} tiles of BK={c.bk}")
        return why

    def _setup_attributes(self):
        self.refuse_bad_config()
        c = self.cfg
        self.threads = 32 * c.warps
        self.tiled_mma, self.a_smem_layout, self.b_smem_layout = common.make_mma_and_smem_layouts(
            c.bm, c.bn, c.bk, c.stages
        )
        self.tmem_cols = common.tmem_cols_for(c.bn)
        a_stage_bytes = cute.size_in_bytes(cutlass.Float16, cute.slice_(self.a_smem_layout.outer, (None,) * 3 + (0,)))
        b_stage_bytes = cute.size_in_bytes(cutlass.Float16, cute.slice_(self.b_smem_layout.outer, (None,) * 3 + (0,)))
        self.b_offset, self.ring_bytes = _carve(c.stages, a_stage_bytes, b_stage_bytes)
        self.shared_storage = _shared_storage(c.stages)
        # the ring at the 1024-aligned base (the DSL aligns dynamic smem; no +1024 slack), then barriers
        used = self.ring_bytes + self.shared_storage.size_in_bytes()
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
            self.tiled_mma, tiled_copy_a, tiled_copy_b, mA, mB, mC, self.a_smem_layout, self.b_smem_layout,
            self.b_offset, self.ring_bytes, self.shared_storage,
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
        b_offset: cutlass.Constexpr[int],
        ring_bytes: cutlass.Constexpr[int],
        storage_cls: cutlass.Constexpr,
    ):
        c = self.cfg
        NSTAGES = c.stages
        tidx, _, _ = cute.arch.thread_idx()
        warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        bidx, bidy, _ = cute.arch.block_idx()

        # --- smem: the ring [A_shared[NSTAGES] | B_shared[NSTAGES]] at a 1024-aligned base, then barriers
        smem = SmemAllocator()
        ring = smem.allocate(ring_bytes, byte_alignment=SWIZZLE_ALIGN)
        sA = cute.make_tensor(cute.recast_ptr(ring, a_smem_layout.inner, dtype=cutlass.Float16), a_smem_layout.outer)
        sB = cute.make_tensor(
            cute.recast_ptr(ring + b_offset, b_smem_layout.inner, dtype=cutlass.Float16), b_smem_layout.outer
        )
        storage = smem.allocate(storage_cls)

        # --- TMEM: 128 lanes x BN fp32 columns ------------------------------------------------------
        tmem, tmem_ptr = common.tmem_allocate(storage.tmem_holding_buf.ptr, self.tmem_cols, self.threads)

        # The worklog's mma_mbar[NSTAGES]: the MMA thread commits slot s when it is done reading it
        # (the pipeline's "empty" barrier, tcgen05.commit), all 128 threads wait on it before
        # refilling s. "Slot full" is cp.async.wait_group + the block barrier, as in the worklog,
        # so the pipeline's full barriers stay unused.
        ring_pipe = pipeline.PipelineAsyncUmma.create(
            num_stages=NSTAGES,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, self.threads),
            consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            barrier_storage=storage.mma_mbar.data_ptr(),
        )
        # producer phase starts at 1: the first wait on a never-used slot passes at once, which is the
        # worklog's `if (tp >= NSTAGES)` ("slot has a previous occupant")
        load_state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, NSTAGES)
        mma_state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, NSTAGES)

        # --- partition ------------------------------------------------------------------------------
        # (BM, BK, k_tiles) / (BN, BK, k_tiles) / (BM, BN)
        gA = cute.local_tile(mA, (c.bm, c.bk), (bidx, None))
        gB = cute.local_tile(mB, (c.bn, c.bk), (bidy, None))
        gC = cute.local_tile(mC, (c.bm, c.bn), (bidx, bidy))
        # copies see smem as (BM, BK, slot); the MMA as ((128,16), 1, BK/16, slot)
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

        # --- prologue: tiles 0 .. NSTAGES-2 -> slots 0 .. NSTAGES-2, one commit group each ----------
        for tile in cutlass.range_constexpr(NSTAGES - 1):
            cute.copy(tiled_copy_a, tAgA[None, None, None, tile], tAsA[None, None, None, load_state.index])
            cute.copy(tiled_copy_b, tBgB[None, None, None, tile], tBsB[None, None, None, load_state.index])
            cute.arch.cp_async_commit_group()
            load_state.advance()

        # --- mainloop: tile t lives in slot t % NSTAGES -----------------------------------------------
        for k_tile in cutlass.range(k_tiles, unroll=1):
            # prefetch tile k_tile + NSTAGES - 1 into the slot the MMA of k_tile - 1 read
            tile = k_tile + NSTAGES - 1
            if tile < k_tiles:
                ring_pipe.producer_acquire(load_state)  # wait for that MMA (one iteration deep)
                cute.copy(tiled_copy_a, tAgA[None, None, None, tile], tAsA[None, None, None, load_state.index])
                cute.copy(tiled_copy_b, tBgB[None, None, None, tile], tBsB[None, None, None, load_state.index])
                load_state.advance()
            # committed even when empty, so "NSTAGES-1 pending" always means "tile k_tile landed"
            cute.arch.cp_async_commit_group()
            cute.arch.cp_async_wait_group(NSTAGES - 1)
            common.fence_cpasync_to_umma()  # the landed tile, visible to the async proxy...
            cute.arch.sync_threads()  # ...and every thread's part of it to the MMA thread

            # one thread: K[0:16] and K[16:32] of the slot, then commit it; no wait here any more
            # (warp 0 runs it; cute.gemm and the commit each elect one lane: single-thread instructions)
            if warp_idx == 0:
                for k_block in cutlass.range_constexpr(k_blocks):
                    # the first MMA of the first tile overwrites TMEM (no zero-fill needed)
                    tiled_mma.set(tcgen05.Field.ACCUMULATE, (k_tile + k_block) != 0)
                    kcoord = (None, None, k_block, mma_state.index)
                    cute.gemm(tiled_mma, tCtAcc, tCrA[kcoord], tCrB[kcoord], tCtAcc)
                ring_pipe.consumer_release(mma_state)  # tcgen05.commit -> mma_mbar[slot]
            mma_state.advance()

        # --- drain: every slot's last commit, the last MMA's included ---------------------------------
        ring_pipe.producer_tail(load_state)

        # --- epilogue: TMEM -> registers -> C ---------------------------------------------------------
        common.epilogue_tmem_to_global(tCtAcc[(None, None), 0, 0], gC, None, None, tidx, c.warps)
        common.tmem_free(tmem, tmem_ptr, self.threads)
