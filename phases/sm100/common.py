"""Plumbing the sm100 phases share and never change: the tcgen05 tiled MMA, the smem layouts the UMMA
reads, the cp.async tiled copies that fill them (phases 0-1), TMEM allocation, and the worklog's
TMEM -> registers -> global epilogue (phases 0-4).

Names follow the worklog (BM/BN/BK, NSTAGES) and CuTe (tAgA/tAsA: a copy's view of global/smem A;
tCrA/tCtAcc: the MMA's view of A/the accumulator; tDtC/tDgC: the epilogue copy's view of TMEM/global C).

Worklog facts this module encodes (sections 2.2 and 2.5):

- A is K-major with SW64: 64-B rows (BK=32 fp16), an 8-row band every 512 B (SBO), the second K16
  MMA starts 32 B in.
- B is N-major with SW128. Phases 0-1 (cp.async) pack the BN/64 64-wide N atoms of one 8-row K band
  side by side: next N atom 1024 B away (LBO), next K band 2048 B (SBO), second K16 MMA 4096 B in.
  Phase 2 on (TMA) packs one 64-wide slab for all of BK, then the next slab (LBO 4096, SBO 1024,
  K16 2048): that is what ``cutlass.utils.blackwell_helpers.make_smem_layout_b`` builds.
- The layouts below swizzle the offset inside a stage; the UMMA (and the DSL's swizzled smem
  pointer) take the XOR key from absolute address bits (SW64: [8:7], SW128: [9:7]). The two agree
  only when every stage base is 512-B (A) / 1024-B (B) aligned (worklog 4.1).
- Epilogue: ``tcgen05.ld.32x32b``; warp w may only touch TMEM lanes 32*(w%4) .. +31, and lane = row
  of the 128-row accumulator, so each thread owns one row of C and stores it with st.global.
"""

from __future__ import annotations

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
import cutlass.utils.blackwell_helpers as sm100_utils
from cutlass._mlir.dialects import nvvm as _nvvm
from cutlass.cute.nvgpu import OperandMajorMode, cpasync, tcgen05
from cutlass.cutlass_dsl import dsl_user_op
from cutlass.memory import TmemAllocator as _DslTmemAllocator

MMA_K = 16  # K of one tcgen05.mma.kind::f16
COPY_BITS = 128  # one cp.async moves 16 B
TMEM_LANES = 128  # TMEM is 128 lanes x 512 columns of 32-bit cells
TMEM_ALLOC_BARRIER_ID = 1  # named barrier for "TMEM address is in smem" (0 is __syncthreads)
TMEM_COLUMNS = 512  # all of an SM's tensor memory: 128 lanes x 512 columns of 32 bit
SMEM_PER_SM = 228 * 1024  # sm100: 228 KiB of shared memory per SM ...
SMEM_RESERVED_PER_CTA = 1024  # ... of which the system reserves 1 KiB per resident CTA


# ------------------------------------------------------------------------------------------------
# Config guards: what a phase's config must be for the kernel to be built right
# ------------------------------------------------------------------------------------------------
class Guarded:
    """Config guards of an sm100 phase (listed before ``GemmPhase`` in its bases).

    ``config_problems()`` names every reason the phase's config cannot be built, or would build a kernel
    that computes wrong C; ``_setup_attributes`` calls ``refuse_bad_config()`` first, so such a config
    fails its compile while tracing (an AssertionError carrying every reason, as the sm90 phases' asserts
    do: ``compile_only`` and the runtime show it in one line), and ``can_implement`` names them too, so a
    GPU call is refused before anything compiles. ``tests/test_sm100_guards.py`` has one test per guard.
    """

    def config_problems(self) -> list[str]:
        return []

    def can_implement(self, m, n, k):
        return super().can_implement(m, n, k) + self.config_problems()

    def refuse_bad_config(self) -> None:
        why = self.config_problems()
        assert not why, f"{self.arch}:{self.phase}: " + "; ".join(why)


def tile_problems(c, cluster_m: int) -> list[str]:
    """The guards every tcgen05 phase of this ladder shares: a 128-row tile per CTA (TMEM lane = row), an
    MMA N that tcgen05.mma has, k-tiles of whole MMAs, and the phase's own cluster along M."""
    why = []
    if c.bm != TMEM_LANES:
        why.append(f"bm={c.bm}: bm is {TMEM_LANES} (each CTA's accumulator rows are the 128 TMEM lanes, one row per "
                   f"lane: what the 32x32b tcgen05.ld drain reads; an M=64 MMA lays its accumulator out otherwise)")
    if c.bn % 16 or not 16 <= c.bn <= 256:
        why.append(f"bn={c.bn}: bn is a multiple of 16 in 16..256 (the N of an M={TMEM_LANES * cluster_m} tcgen05.mma)")
    if c.bk % MMA_K or c.bk < MMA_K:
        why.append(f"bk={c.bk}: bk is a multiple of {MMA_K} (a k-tile is whole tcgen05.mma's of K={MMA_K})")
    if c.stages < 1:
        why.append(f"stages={c.stages}: the ring needs at least one stage")
    if c.cluster_m != cluster_m:
        what = "a CTA pair (cta_group::2 MMAs)" if cluster_m == 2 else "one CTA (cta_group::1 MMAs, no cluster)"
        why.append(f"cluster_m={c.cluster_m}: this phase's tile is computed by {what}, cluster_m={cluster_m}")
    return why


def cpasync_problems(c) -> list[str]:
    """Phases 0-1: 4 warps (one per TMEM lane quarter, all of them copying), and B in whole 64-column SW128
    atoms (the cp.async packing of ``make_smem_layout_b_cpasync``)."""
    why = []
    if c.warps != 4:
        why.append(f"warps={c.warps}: phases 0-1 run 4 warps, one per TMEM lane quarter")
    if c.bn % 64:
        why.append(f"bn={c.bn}: bn is a multiple of 64 (B is copied into 64-column SW128 atoms)")
    return why


def epilogue_warp_problems(epi_warps: int) -> list[str]:
    """Epilogue warps come in whole warpgroups, one warp per TMEM lane quarter: 4 (one column part) or 8
    (two column parts, warp w draining part w // 4)."""
    if epi_warps in (4, 8):
        return []
    return [f"epi_warps={epi_warps}: the epilogue drains with 4 or 8 warps (one or two warps per TMEM lane quarter)"]


def persistent_problems(c, cluster_ctas: int, multiple: int) -> list[str]:
    """The persistent phases' schedule fields: ``sm_count`` a positive multiple of ``multiple`` SMs (at least
    one cluster of ``cluster_ctas``), raster bands of whole pair rows, at least one accumulator stage and
    one staging buffer."""
    why = []
    if c.sm_count < cluster_ctas or c.sm_count % multiple:
        why.append(f"sm_count={c.sm_count}: sm_count is a positive multiple of {multiple} SMs, at least one "
                   f"cluster of {cluster_ctas} CTAs (one CTA per SM)")
    if c.group_m < 1:
        why.append(f"group_m={c.group_m}: a raster band is at least one pair row")
    if c.acc_stages < 1:
        why.append(f"acc_stages={c.acc_stages}: at least one accumulator stage in TMEM")
    if c.epi_stages < 1:
        why.append(f"epi_stages={c.epi_stages}: at least one C staging buffer per column part")
    return why


# ------------------------------------------------------------------------------------------------
# MMA and the smem layouts it reads
# ------------------------------------------------------------------------------------------------
def make_tiled_mma(bm: int, bn: int, ab_dtype=cutlass.Float16, acc_dtype=cutlass.Float32):
    """One m{BM}n{BN}k16 tcgen05.mma (cta_group::1), A K-major, B N-major (the worklog's idesc bit 16)."""
    op = tcgen05.MmaF16BF16Op(
        ab_dtype,
        acc_dtype,
        (bm, bn, MMA_K),
        tcgen05.CtaGroup.ONE,
        tcgen05.OperandSource.SMEM,
        OperandMajorMode.K,
        OperandMajorMode.MN,
    )
    return cute.make_tiled_mma(op)


def make_smem_layout_a(tiled_mma, mma_tiler, stages: int, dtype=cutlass.Float16):
    """A (BM, BK) per stage, K-major; the helper picks SW64 for BK=32 fp16 (64-B rows, SBO 512 B)."""
    return sm100_utils.make_smem_layout_a(tiled_mma, mma_tiler, dtype, stages)


def make_smem_layout_b_cpasync(tiled_mma, mma_tiler, stages: int, dtype=cutlass.Float16):
    """B (BN, BK) per stage, N-major SW128, packed the worklog's phase 0-1 way.

    Same atom as ``make_smem_layout_b`` (64 N x 8 K, SW128) but tiled N first: the BN/64 atoms of an
    8-row K band sit side by side (LBO = 1024 B), K bands follow (SBO = 2048 B), and the second K16
    MMA starts 4096 B in. ``make_smem_layout_b`` tiles K first, which is the phase-2 TMA slab packing.
    """
    bn, bk = mma_tiler[1], mma_tiler[2]
    kind = sm100_utils.get_smem_layout_atom_ab(OperandMajorMode.MN, dtype, (bn, bk))
    atom = tcgen05.make_smem_layout_atom(kind, dtype)
    # ((MMA_N, MMA_K_inst), 1, BK/16, STAGES); order (1,2,3) = N atoms first, then K bands
    shape = cute.append(tiled_mma.partition_shape_B(cute.dice(mma_tiler, (None, 1, 1))), stages)
    return tcgen05.tile_to_mma_shape(atom, shape, order=(1, 2, 3))


def make_mma_and_smem_layouts(bm: int, bn: int, bk: int, stages: int):
    """The tiled MMA and the staged smem layouts (A SW64 K-major, B SW128 N-major) of phases 0-1.

    Returns (tiled_mma, a_smem_layout, b_smem_layout); the layouts are ComposedLayouts whose
    ``inner`` swizzle the kernel puts on the smem pointer (it acts on byte addresses).
    """
    mma_tiler = (bm, bn, bk)
    tiled_mma = make_tiled_mma(bm, bn)
    a_smem_layout = make_smem_layout_a(tiled_mma, mma_tiler, stages)
    b_smem_layout = make_smem_layout_b_cpasync(tiled_mma, mma_tiler, stages)
    return tiled_mma, a_smem_layout, b_smem_layout


def mma_to_copy_view(layout):
    """The (MN, K, STAGES) view of an MMA-partitioned smem layout ((MN_i, K_i), MMA_MN, MMA_K, STAGES).

    The copy addresses smem by tile coordinate; the MMA by (instruction, repeat) modes. Composing
    the MMA layout with this re-indexing gives the copy exactly the offsets the descriptors read.
    """
    shape = layout.shape
    a = cute.size(shape[0][0])  # MN per instruction
    b = cute.size(shape[0][1])  # K per instruction (16)
    c, d, s = shape[1], shape[2], shape[3]
    # colex index into ((a, b), c, d, s) of (mn = i + a*p, k = j + b*q, stage)
    view = cute.make_layout(((a, c), (b, d), s), stride=((1, a * b), (a, a * b * c), a * b * c * d))
    return cute.composition(layout, view)


# ------------------------------------------------------------------------------------------------
# cp.async: all threads copy 16-B vectors into the UMMA layouts (phases 0-1)
# ------------------------------------------------------------------------------------------------
def _cpasync_atom(dtype):
    # .cg: 16-B copies bypass L1, which the smem-only consumer never reads
    op = cpasync.CopyG2SOp(cache_mode=cpasync.LoadCacheMode.GLOBAL)
    return cute.make_copy_atom(op, dtype, num_bits_per_copy=COPY_BITS)


def make_cpasync_copy_a(threads: int, bk: int, dtype=cutlass.Float16):
    """A is K-contiguous: BK/8 threads cover one 64-B row, the rest stack along M.

    BM=128, BK=32, 128 threads: (32 rows x 4 vectors) per pass, 4 passes = the worklog's 4 cp.async.
    """
    vec = COPY_BITS // dtype.width
    thr_k = bk // vec
    thr_layout = cute.make_layout((threads // thr_k, thr_k), stride=(thr_k, 1))
    return cute.make_tiled_copy_tv(_cpasync_atom(dtype), thr_layout, cute.make_layout((1, vec)))


def make_cpasync_copy_b(threads: int, bn: int, dtype=cutlass.Float16):
    """B is N-contiguous ((N, K) view): BN/8 threads cover one 256-B K row, the rest stack along K.

    BN=128, BK=32, 128 threads: (16 vectors x 8 K rows) per pass, 4 passes.
    """
    vec = COPY_BITS // dtype.width
    thr_n = bn // vec
    thr_layout = cute.make_layout((thr_n, threads // thr_n), stride=(1, thr_n))
    return cute.make_tiled_copy_tv(_cpasync_atom(dtype), thr_layout, cute.make_layout((vec, 1)))


def fence_cpasync_to_umma():
    """Make this thread's landed cp.async writes (generic proxy) visible to tcgen05.mma (async proxy).

    Every copying thread runs it after ``cp.async.wait_group`` and before the block barrier that
    releases the MMA thread. The worklog's phases 0-1 lacked it ("correct by timing").
    """
    cute.arch.fence_proxy("async.shared", space="cta")


# ------------------------------------------------------------------------------------------------
# TMEM
# ------------------------------------------------------------------------------------------------
def tmem_cols_for(bn: int, acc_dtype=cutlass.Float32) -> int:
    """TMEM columns an (128 x BN) fp32 accumulator takes, rounded to the allocator's power of two."""
    cols = bn * acc_dtype.width // 32
    alloc = 32
    while alloc < cols:
        alloc *= 2
    return alloc


def residency(smem_bytes: int, tmem_cols: int) -> tuple[int, int]:
    """CTAs one SM can hold (by shared memory, by TMEM columns) for a kernel asking for this much of each."""
    return SMEM_PER_SM // (smem_bytes + SMEM_RESERVED_PER_CTA), TMEM_COLUMNS // tmem_cols


def smem_request(smem_bytes: int, tmem_cols: int) -> int:
    """Dynamic smem to ask for: ``smem_bytes``, raised until smem admits no more CTAs per SM than TMEM.

    A CTA that shared memory admits but TMEM cannot hold does not wait in the block scheduler: it
    starts, and its allocating warp blocks inside ``tcgen05.alloc`` until a resident CTA frees its
    columns, holding its smem, warps and registers all the while (and, with cta_group::2, its pair).
    Asking for more smem than the kernel uses keeps such CTAs from being scheduled at all.
    """
    by_tmem = TMEM_COLUMNS // tmem_cols
    # floor(SMEM_PER_SM / (s + reserved)) <= by_tmem  <=>  s + reserved > SMEM_PER_SM / (by_tmem + 1)
    least = SMEM_PER_SM // (by_tmem + 1) + 1 - SMEM_RESERVED_PER_CTA
    return max(smem_bytes, least)


def tmem_allocate(holding_buf_ptr, num_cols: int, threads: int):
    """Warp 0 allocates ``num_cols`` TMEM columns (tcgen05.alloc) and gives up the permit at once
    (tcgen05.relinquish_alloc_permit: this CTA allocates nothing else, so a co-resident CTA need
    not wait for it); everyone waits on a named barrier and reads the base address from smem.

    Returns (allocator, fp32 TMEM pointer). Free with ``tmem_free``.
    """
    allocator = TmemAllocator(
        holding_buf_ptr,
        barrier_for_retrieve=pipeline.NamedBarrier(barrier_id=TMEM_ALLOC_BARRIER_ID, num_threads=threads),
    )
    allocator.allocate(num_cols)
    allocator.relinquish_alloc_permit()
    allocator.wait_for_alloc()
    return allocator, allocator.retrieve_ptr(cutlass.Float32)


def tmem_free(allocator, tmem_ptr, threads: int):
    """Every warp has finished its tcgen05.ld (wait::ld) before warp 0 deallocates (``free_tmem``)."""
    free_tmem(allocator, tmem_ptr, pipeline.NamedBarrier(barrier_id=TMEM_ALLOC_BARRIER_ID, num_threads=threads))


# ------------------------------------------------------------------------------------------------
# The PTX memory model at the hand-offs: tcgen05 thread-sync fences, cluster-scope signals
#
# tcgen05.ld and tcgen05.mma are asynchronous: a thread synchronization (an mbarrier arrive/wait, a
# barrier) orders them across threads only with a tcgen05.fence on both sides (PTX ISA, "Memory
# consistency model for 5th generation TensorCore operations"): the thread whose TMEM accesses come
# first runs ``tcgen05.fence::before_thread_sync`` after them (a tcgen05.ld: after its tcgen05.wait::ld)
# and before the arrive; the thread whose accesses come second runs ``tcgen05.fence::after_thread_sync``
# after the wait and before them. tcgen05.commit's mbarrier arrive has the first fence built in; the
# waiter of a commit still needs the second. So: the MMA -> epilogue hand-off (accumulator full), the
# epilogue -> MMA hand-off (accumulator empty: the next tile's MMAs overwrite what was read) and the
# dealloc after every warp's reads.
#
# A signal from another CTA (a remote mbarrier arrive, a multicast tcgen05.commit, a peer's TMA or
# st.async completing on this CTA's barrier) synchronizes with the waiting thread only when both sides
# act at cluster scope: remote arrives are ``.release.cluster`` and the waits on barriers another CTA
# signals are ``mbarrier.try_wait.parity.acquire.cluster`` (the default is ``.acquire.cta``).
# ------------------------------------------------------------------------------------------------
@dsl_user_op
def tmem_reads_done(*, loc=None, ip=None) -> None:
    """``tcgen05.fence::before_thread_sync``: this thread's TMEM accesses so far (tcgen05.ld's already
    waited with tcgen05.wait::ld) are ordered before its next thread synchronization (the release of an
    accumulator stage, the barrier before the dealloc)."""
    _nvvm.tcgen05_fence(_nvvm.Tcgen05FenceKind.BEFORE_THREAD_SYNC, loc=loc, ip=ip)


@dsl_user_op
def tmem_acquired(*, loc=None, ip=None) -> None:
    """``tcgen05.fence::after_thread_sync``: this thread's next TMEM accesses (tcgen05.ld, tcgen05.mma,
    tcgen05.dealloc) are ordered after the thread synchronization it just waited on (an accumulator
    stage full or empty, the barrier before the dealloc)."""
    _nvvm.tcgen05_fence(_nvvm.Tcgen05FenceKind.AFTER_THREAD_SYNC, loc=loc, ip=ip)


@dsl_user_op
def mbarrier_try_wait_cluster(mbar_ptr, phase, *, loc=None, ip=None) -> cutlass.Boolean:
    """``mbarrier.try_wait.parity.acquire.cluster``: True once ``phase`` of the mbarrier completed, and
    then what every CTA of the cluster released into that phase is visible to this thread."""
    return cutlass.Boolean(
        _nvvm.mbarrier_wait_parity(
            mbar_ptr.to_llvm_ptr(loc=loc, ip=ip),
            cutlass.Int32(phase).ir_value(loc=loc, ip=ip),
            _nvvm.MBarrierWaitKind.TRY,
            scope=_nvvm.MemScopeKind.CLUSTER,
            order=_nvvm.MemOrderKind.ACQUIRE,
            loc=loc,
            ip=ip,
        )
    )


@cute.jit
def mbarrier_wait_cluster(mbar_ptr, phase):
    """Wait (a try_wait loop) for ``phase`` of an mbarrier that another CTA of the cluster signals, with
    cluster-scope acquire semantics."""
    done = cutlass.Boolean(False)
    while not done:
        done = mbarrier_try_wait_cluster(mbar_ptr, phase)


def mbarrier_arrive_cluster(mbar_ptr, cta_rank=None):
    """An arrive (``.release.cluster``) on this CTA's mbarrier or, with ``cta_rank``, on the same mbarrier
    of that CTA of the cluster."""
    cute.arch.mbarrier_arrive(mbar_ptr, cta_rank, scope=_nvvm.MemScopeKind.CLUSTER)


class ClusterMbarrierArray(pipeline.MbarrierArray):
    """A pipeline's mbarrier array whose waits acquire, and whose remote arrives release, at cluster
    scope (``cluster_scoped``). Everything else is the DSL's ``MbarrierArray``."""

    @dsl_user_op
    def try_wait(self, index, phase, *, loc=None, ip=None):
        return mbarrier_try_wait_cluster(self.get_barrier(index, loc=loc, ip=ip), phase, loc=loc, ip=ip)

    def wait(self, index, phase, *, loc=None, ip=None):
        mbarrier_wait_cluster(self.get_barrier(index), phase)

    def arrive_mbarrier(self, index, dst_rank=None, *, loc=None, ip=None):
        mbarrier_arrive_cluster(self.get_barrier(index), dst_rank)

    def recast_to_new_op_type(self, new_op_type):
        out = super().recast_to_new_op_type(new_op_type)
        out.__class__ = ClusterMbarrierArray
        return out

    def __new_from_mlir_values__(self, values):
        out = super().__new_from_mlir_values__(values)
        out.__class__ = ClusterMbarrierArray
        return out


def cluster_scoped(pipe):
    """``pipe`` (a DSL pipeline of a cluster kernel: another CTA signals its barriers) with its mbarrier
    arrays made ``ClusterMbarrierArray``: its waits acquire at cluster scope, its remote arrives release
    at cluster scope. Returns ``pipe``."""
    for name in ("sync_object_full", "sync_object_empty"):
        obj = getattr(pipe, name, None)
        if type(obj) is pipeline.MbarrierArray:
            obj.__class__ = ClusterMbarrierArray
    return pipe


class TmemAllocator(_DslTmemAllocator):
    """The DSL's TMEM allocator, whose ``free`` follows the PTX memory model: the allocator warp runs
    ``tcgen05.fence::after_thread_sync`` right before ``tcgen05.dealloc`` (after the barrier every warp
    reached with its reads fenced, ``free_tmem``), and a cta_group::2 pair's dealloc handshake arrives
    and waits at cluster scope."""

    @cute.jit
    def free(self, tmem_ptr, num_columns: int = 0):
        warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        cols = self._num_allocated_columns if num_columns == 0 else num_columns
        if warp_idx == self._allocator_warp_id:
            if cutlass.const_expr(self._is_two_cta):
                # both CTAs of the pair dealloc together: each tells the peer it is done, waits for the peer
                peer = cute.arch.make_warp_uniform(cute.arch.block_idx_in_cluster()) ^ 1
                mbarrier_arrive_cluster(self._two_cta_tmem_dealloc_mbar_ptr, peer)
                mbarrier_wait_cluster(self._two_cta_tmem_dealloc_mbar_ptr, 0)
            tmem_acquired()
            cute.arch.dealloc_tmem(tmem_ptr, cols, is_two_cta=self._is_two_cta, arch=self._arch)


def free_tmem(tmem, tmem_ptr, barrier) -> None:
    """The end of a kernel's TMEM: every thread that read TMEM fences its reads (before_thread_sync) and
    meets the others at ``barrier``; the allocator warp then frees the columns (``TmemAllocator.free``:
    after_thread_sync, then tcgen05.dealloc)."""
    tmem_reads_done()
    barrier.arrive_and_wait()
    tmem.free(tmem_ptr)


# ------------------------------------------------------------------------------------------------
# Epilogue: TMEM -> registers (tcgen05.ld 32x32b) -> global (st.global, C's type), phases 0-4
# ------------------------------------------------------------------------------------------------
def make_epilogue_tmem_copy(tAcc, num_warps: int, cols_per_load: int = 8):
    """The tcgen05.ld 32x32b tiled copy of one warpgroup-wide chunk (128 lanes x ``cols_per_load``).

    ``tAcc`` is the (BM=128, BN) TMEM accumulator. With ``cols_per_load`` = 8 one instruction hands
    each thread 8 consecutive fp32 of its row (``.x8``, the worklog's choice).
    """
    _check_epilogue(tAcc, num_warps, cols_per_load)
    cols = cute.size(tAcc, mode=[1]) // (num_warps // 4)
    chunks = cute.zipped_divide(cute.local_tile(tAcc, (TMEM_LANES, cols), (0, 0)), (TMEM_LANES, cols_per_load))
    atom = cute.make_copy_atom(tcgen05.Ld32x32bOp(tcgen05.Repetition(cols_per_load)), cutlass.Float32)
    return tcgen05.make_tmem_copy(atom, chunks[None, 0])


def partition_epilogue(tmem_copy, tAcc, gC, tidx, num_warps: int, cols_per_load: int = 8):
    """Each thread's view of the accumulator (TMEM) and of C (global), chunk by chunk.

    Warp w reads TMEM lanes 32*(w%4) .. +31 (the only lanes its quarter may touch) = rows of C, and
    with 8 warps the column half w//4 (phase 3's BN=256 is drained by two warpgroups).

    Returns (tDtC, tDgC), each (CPY, CPY_MN, (1, chunks)): chunk i covers ``cols_per_load`` columns.
    ``tAcc`` and ``gC`` are (128, BN) tensors; any tensor of that shape works (the tests pass
    coordinate tensors to read the mapping back).
    """
    warpgroups = num_warps // 4
    cols = cute.size(gC, mode=[1]) // warpgroups
    half = tidx // (TMEM_LANES)  # warpgroup = column slice this thread drains
    tiler = (TMEM_LANES, cols_per_load)
    acc_half = cute.zipped_divide(cute.local_tile(tAcc, (TMEM_LANES, cols), (0, half)), tiler)
    gC_half = cute.zipped_divide(cute.local_tile(gC, (TMEM_LANES, cols), (0, half)), tiler)
    thr_copy = tmem_copy.get_slice(tidx % TMEM_LANES)
    return thr_copy.partition_S(acc_half), thr_copy.partition_D(gC_half)


@cute.jit
def epilogue_tmem_to_global(
    tAcc: cute.Tensor,
    gC: cute.Tensor,
    cC,
    mn_limit,
    tidx: cutlass.Int32,
    num_warps: cutlass.Constexpr[int],
    cols_per_load: cutlass.Constexpr[int] = 8,
):
    """Drain the (128, BN) fp32 accumulator in TMEM into the (128, BN) tile ``gC`` of C.

    Per chunk: tcgen05.ld.32x32b.x{cols_per_load} (warp-collective), tcgen05.wait::ld, then each
    thread stores its row segment with vectorized st.global (two v4 stores for x8 fp32; one for a 16-bit
    C, rounded first: ``to_c_type``). Rows differ per
    thread, so the stores are scattered (one 32-B segment per row): the worklog's "crude" epilogue
    that phase 5 replaces. The caller must have waited for the last MMA's commit.

    Partial tiles: ``cC`` is the identity (coordinate) tensor of the same tile and ``mn_limit`` C's
    (M, N); a chunk is stored only if its first element lies inside C. A chunk is one row and
    ``cols_per_load`` (8) consecutive columns starting at a multiple of 8, and N is a multiple of 8,
    so a chunk is inside C or outside it as a whole: one predicate per chunk, and the stores stay
    vectors. ``cC = None`` (phases 0-1: tile multiples only) stores unpredicated.

    ``num_warps``: 4 (BN=128, warp w -> lanes 32w) or 8 (warp w -> lanes (w%4)*32, column half w//4).
    ``tidx`` is the thread's index in the CTA: the draining warps must be warps 0 .. num_warps-1.
    """
    tmem_copy = make_epilogue_tmem_copy(tAcc, num_warps, cols_per_load)
    tDtC, tDgC = partition_epilogue(tmem_copy, tAcc, gC, tidx, num_warps, cols_per_load)
    tDrC = cute.make_rmem_tensor(tDgC[None, None, 0].shape, cutlass.Float32)
    tmem_acquired()  # the tcgen05.ld's below come after the wait that saw the last MMA's commit
    if cutlass.const_expr(cC is None):
        for i in cutlass.range_constexpr(cute.size(tDtC, mode=[2])):
            cute.copy(tmem_copy, tDtC[None, None, i], tDrC)
            cute.arch.fence_view_async_tmem_load()  # tcgen05.wait::ld before the registers are read
            cute.autovec_copy(tDrC, tDgC[None, None, i])
    else:
        _, tDcC = partition_epilogue(tmem_copy, tAcc, cC, tidx, num_warps, cols_per_load)
        for i in cutlass.range_constexpr(cute.size(tDtC, mode=[2])):
            cute.copy(tmem_copy, tDtC[None, None, i], tDrC)
            cute.arch.fence_view_async_tmem_load()  # tcgen05.wait::ld before the registers are read
            if cute.elem_less(tDcC[None, None, i][0], mn_limit):  # the chunk's (row, first column) is in C
                cute.autovec_copy(to_c_type(tDrC, gC.element_type), tDgC[None, None, i])


def to_c_type(acc: cute.Tensor, c_dtype) -> cute.Tensor:
    """``acc`` (fp32 registers) as C's element type: itself for fp32 C, a copy rounded to nearest for a
    16-bit C (fp16 / bf16: the fp32 accumulator is rounded once, on the way out)."""
    if c_dtype == cutlass.Float32:
        return acc
    out = cute.make_rmem_tensor(acc.layout, c_dtype)
    out.store(acc.load().to(c_dtype))
    return out


def _check_epilogue(tAcc, num_warps: int, cols_per_load: int):
    if num_warps not in (4, 8):
        raise ValueError(f"the epilogue drains with 4 or 8 warps, got {num_warps}")
    if cute.size(tAcc, mode=[0]) != TMEM_LANES:
        raise ValueError(f"the accumulator must have {TMEM_LANES} rows (lanes), got {cute.size(tAcc, mode=[0])}")
    cols = cute.size(tAcc, mode=[1]) // (num_warps // 4)
    if cols % cols_per_load:
        raise ValueError(f"{cols} columns per warpgroup is not a multiple of {cols_per_load} per tcgen05.ld")
