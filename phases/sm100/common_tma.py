"""Plumbing shared by the TMA phases of the sm100 ladder (2a and later).

What never changes between those phases lives here once, so that ``diff phaseN phaseN+1`` shows only
the optimization:

- host side: the tcgen05 tiled MMA for the element types and majors a phase reads from its tensors
  (``phases.operands``; the worklog's: fp16, A K-major, B N-major), the staged smem layouts, the A/B TMA
  atoms, and the expect_tx byte count of one stage;
- device side: the shared-storage struct (full/empty/accumulator mbarriers, the TMEM address slot);
  the cluster-shape marker of the 2-CTA phases is ``phases.cluster``'s, shared with sm90;
- phase 5's epilogue mapping (warp -> TMEM lanes/columns -> staging tile -> TMA store boxes) as plain
  functions that the kernel and ``tests/test_sm100_epilogue_coverage.py`` both evaluate;
- what the persistent phases (6, 7) run once per tile, as ``@cute.jit`` helpers: the producer's
  k-tile loads, the MMA warp's k-tile loop, the epilogue's per-chunk load and store.

The TMEM -> registers -> st.global epilogue of phases 2a-4 is ``phases.sm100.common``'s (shared with
phases 0-1).

B's TMA slabs (worklog sections 2.2 and 2.4). B is N-major and the helpers pick SW128 for it. A SW128
row is 128 B = 64 fp16, so one TMA box can cover at most 64 columns of N; the smem layout the helper
builds tiles the 64x8 SW128 atom along K first (``order=(2, 1, 3)``), i.e. one 64-wide slab holds all
BK rows (BK x 128 B = 4 KiB at BK=32) and the next slab follows. ``make_tiled_tma_atom_B`` turns that
into a box of {64 (N), BK (K)} with SWIZZLE_128B, and one ``cute.copy`` of a stage issues BN/64
``cp.async.bulk.tensor.2d`` instructions, one per slab, to consecutive 4 KiB smem slabs: exactly the
worklog's ``B_LBO = 4096`` (next slab), ``B_SBO = 1024`` (next 8-row K band) packing. A is K-major
SW64 (BK = 32 fp16 = 64 B per row) and moves as one {32 (K), 128 (M)} box per stage.

Other operands (``phases.operands``) take the same roads: an M-major A is packed as B is (SW128 slabs
of 64 rows, LBO 4096, SBO 1024), a K-major B as A is (SW64 rows of BK, SBO 512), and bf16 differs from
fp16 only in the idesc's A/B type fields (bits 7-12) and the tensor maps' element type. A 16-bit C is
rounded from the fp32 accumulator on its way out (``common.to_c_type``); everything up to that point
(TMEM, the stream-K partial sums) stays fp32.
"""

import cutlass
import cutlass.cute as cute
import cutlass.utils.blackwell_helpers as sm100_utils
from cutlass.cute.nvgpu import OperandMajorMode, cpasync, tcgen05

from phases import epilogue
from phases.sm100.common import MMA_K, to_c_type

AB_DTYPE = cutlass.Float16
ACC_DTYPE = cutlass.Float32
SMEM_ALIGN = 1024  # SW128 keys its XOR off address bits [9:7]: stage bases must be 1024-B aligned


# ------------------------------------------------------------------------------------------------
# Phase 5's epilogue mapping: TMEM -> staging smem -> TMA store boxes
#
# Plain arithmetic on the warp index (a Python int in the tests, a DSL Int32 in the kernel), so the
# kernel and tests/test_sm100_epilogue_coverage.py evaluate the same functions.
# ------------------------------------------------------------------------------------------------

EPI_CHUNK = 32  # accumulator columns per tcgen05.ld.32x32b.x32 = one staging tile's width
EPI_BOX = (16, 32)  # TMA store box (rows, fp32 columns): the worklog's {32, 16} box; 32 x 4 B = SW128's 128 B
WARP_ROWS = 32  # tcgen05.ld 32x32b: a warp reads 32 TMEM lanes = 32 accumulator rows, one per thread
BOXES_PER_WARP = WARP_ROWS // EPI_BOX[0]  # 2 boxes cover a warp's 32 rows of one chunk


def epi_t2r_thread(tidx):
    """The thread index that slices the tcgen05.ld 32x32b copy (built for one warpgroup: thread t <->
    TMEM lane t). Taken mod 128, so epilogue warp w reads lanes 32*(w%4)..+31: tcgen05.ld lets a warp
    touch only the lane quarter of its rank mod 4, and epilogue warps beyond 4 split the columns
    instead (``epi_col_part``)."""
    return tidx % (4 * WARP_ROWS)


def epi_col_part(warp):
    """Column part (of ``num_epi_warps // 4``) that epilogue warp ``warp`` drains."""
    return warp // 4


def epi_part_cols(num_epi_warps: int, bn: int) -> int:
    """Columns one epilogue warp drains: BN split over ``num_epi_warps // 4`` column parts."""
    assert num_epi_warps % 4 == 0, "epilogue warps come in groups of 4 (one per TMEM lane quarter)"
    width = bn // (num_epi_warps // 4)
    assert width % EPI_CHUNK == 0, f"BN={bn} over {num_epi_warps // 4} parts is not a multiple of {EPI_CHUNK}"
    return width


def epi_chunks(num_epi_warps: int, bn: int) -> int:
    """tcgen05.ld chunks (= staging tiles = box columns) per warp."""
    return epi_part_cols(num_epi_warps, bn) // EPI_CHUNK


def epi_staging_buffer(warp, chunk: int, epi_stages: int):
    """Staging buffer of (warp, chunk): one (128, 32) tile per column part and stage.

    The 4 warps of a column part share a buffer, each writing its own 32 rows (WARP_ROWS-aligned, so
    never another warp's); chunk j reuses the buffer of chunk j - epi_stages.
    """
    return epi_col_part(warp) * epi_stages + chunk % epi_stages


def epi_box_row(warp, half: int):
    """Box row (in EPI_BOX[0]=16-row units) of a warp's ``half``-th box: the same index in the
    staging tile and in the CTA's C tile, since both keep the accumulator's row order."""
    return BOXES_PER_WARP * (warp % 4) + half


def epi_box_col(warp, chunk: int, num_epi_warps: int, bn: int):
    """Box column (in EPI_BOX[1]=32-column units) of the CTA's C tile that chunk ``chunk`` lands in."""
    return epi_col_part(warp) * epi_chunks(num_epi_warps, bn) + chunk


def epi_store_wait_depth(epi_stages: int) -> int:
    """Bulk groups a warp may leave in flight before rewriting a staging buffer.

    Each chunk commits one group; chunk j's buffer was last read by chunk j - epi_stages's group,
    which is complete once at most epi_stages - 1 newer groups are pending.
    """
    return epi_stages - 1


# ------------------------------------------------------------------------------------------------
# Host side: tiled MMA, smem layouts, TMA atoms
# ------------------------------------------------------------------------------------------------


def make_tiled_mma(mma_m: int, bn: int, cta_group: tcgen05.CtaGroup, types=None) -> cute.TiledMma:
    """tcgen05 ``m{mma_m}n{bn}k16`` (kind::f16) -> f32 accumulator, A and B read from smem descriptors.

    ``types`` None: the worklog's fp16 operands, A K-major, B N-major (the idesc's transpose-B bit 16).
    Otherwise (``phases.operands.Types``, read from the kernel's tensors): fp16 or bf16 (the idesc's A/B
    type fields) and each operand's major as its tensor has it (a K-major B: a transposed [N, K] weight;
    an M-major A: a column-major A; the transpose-A bit 15).
    """
    ab = AB_DTYPE if types is None else types.ab
    a_major = OperandMajorMode.K if types is None else types.a.mma_major_mode()
    b_major = OperandMajorMode.MN if types is None else types.b.mma_major_mode()
    op = tcgen05.MmaF16BF16Op(
        ab,
        ACC_DTYPE,
        (mma_m, bn, MMA_K),
        cta_group,
        tcgen05.OperandSource.SMEM,
        a_major,
        b_major,
    )
    return cute.make_tiled_mma(op)


def make_ab_smem_layouts(tiled_mma: cute.TiledMma, mma_tiler_mnk, stages: int, ab_dtype=AB_DTYPE):
    """Staged smem layouts of A and B in the majors of ``tiled_mma``: the worklog's A K-major (SW64 at
    BK=32 fp16) and B N-major (SW128 slabs of 64 columns); an M-major A takes SW128 slabs of 64 rows, a
    K-major B the K-major atom A has (the helpers pick the widest swizzle a row of the major mode fills)."""
    a_layout = sm100_utils.make_smem_layout_a(tiled_mma, mma_tiler_mnk, ab_dtype, stages)
    b_layout = sm100_utils.make_smem_layout_b(tiled_mma, mma_tiler_mnk, ab_dtype, stages)
    return a_layout, b_layout


def make_ab_tma_atoms(op, mA, mB, a_smem_layout, b_smem_layout, mma_tiler_mnk, tiled_mma, cluster_vmnk=None,
                      a_op=None):
    """TMA load atoms (and TMA coordinate tensors) for one stage of A and of B; ``a_op``: A's own copy operation
    (the multicast one where pairs along N share A; None: ``op``)."""
    a_stage = cute.select(a_smem_layout, mode=[0, 1, 2])
    b_stage = cute.select(b_smem_layout, mode=[0, 1, 2])
    tma_atom_a, mA_tma = cute.nvgpu.make_tiled_tma_atom_A(a_op or op, mA, a_stage, mma_tiler_mnk, tiled_mma,
                                                          cluster_vmnk)
    tma_atom_b, mB_tma = cute.nvgpu.make_tiled_tma_atom_B(op, mB, b_stage, mma_tiler_mnk, tiled_mma, cluster_vmnk)
    return tma_atom_a, mA_tma, tma_atom_b, mB_tma


def stage_bytes(a_smem_layout, b_smem_layout, ab_dtype=AB_DTYPE) -> tuple[int, int]:
    """Bytes of one stage of A and of B in this CTA's smem (what one CTA's TMA writes per stage)."""
    a = cute.size_in_bytes(ab_dtype, cute.select(a_smem_layout, mode=[0, 1, 2]))
    b = cute.size_in_bytes(ab_dtype, cute.select(b_smem_layout, mode=[0, 1, 2]))
    return int(a), int(b)


def make_shared_storage(stages: int, acc_stages: int = 1, exchange_mbars: int = 0):
    """The mbarriers and the TMEM address slot (the operand tiles follow it, 1024-B aligned).

    ``exchange_mbars``: phase 7's stream-K exchange barriers (free, full); no other phase has any.
    """

    @cute.struct
    class SharedStorage:
        # full[s] (TMA bytes landed, expect_tx) then empty[s] (the MMA that read slot s is done)
        ab_mbar: cute.struct.MemRange[cutlass.Int64, 2 * stages]
        # accumulator full (MMA -> epilogue) then empty (epilogue -> MMA)
        acc_mbar: cute.struct.MemRange[cutlass.Int64, 2 * acc_stages]
        # 2-CTA TMEM dealloc handshake (unused by the 1-CTA phases)
        tmem_dealloc_mbar: cutlass.Int64
        exchange_mbar: cute.struct.MemRange[cutlass.Int64, exchange_mbars]
        tmem_holding_buf: cutlass.Int32

    return SharedStorage


def smem_bytes_of(storage_cls, *tile_bytes: int) -> int:
    """Dynamic smem the launch asks for: the barrier struct, then each operand region 1024-B aligned.

    Mirrors ``SmemAllocator``: allocations are packed in order, each rounded up to its alignment.
    """
    offset = int(storage_cls.size_in_bytes())
    for nbytes in tile_bytes:
        offset = -(-offset // SMEM_ALIGN) * SMEM_ALIGN + int(nbytes)
    return offset


# ------------------------------------------------------------------------------------------------
# The persistent phases (6, 7): what they run once per tile, written once
#
# @cute.jit helpers, inlined where they are called: the producer's k-tile loads, the MMA warp's
# k-tile loop, and the epilogue's per-chunk steps. ``diff phase6 phase7`` then shows stream-K only.
# ------------------------------------------------------------------------------------------------


def allocate_ab_ring(smem, a_smem_layout, b_smem_layout, ab_dtype=AB_DTYPE):
    """The A and B rings as one 1024-B aligned region (A's stages, then B's): (region, sA, sB).

    One region rather than two allocations so that its bytes are known to be contiguous: phase 7 reuses
    the whole ring as the mailbox of its stream-K exchange once the last MMA has read it.
    """
    a_bytes = cute.size_in_bytes(ab_dtype, a_smem_layout.outer)
    b_bytes = cute.size_in_bytes(ab_dtype, b_smem_layout.outer)
    assert a_bytes % SMEM_ALIGN == 0, "B's ring must start 1024-B aligned after A's"
    region = smem.allocate(a_bytes + b_bytes, byte_alignment=SMEM_ALIGN)
    sA = cute.make_tensor(cute.recast_ptr(region, a_smem_layout.inner, dtype=ab_dtype), a_smem_layout.outer)
    sB = cute.make_tensor(cute.recast_ptr(region + a_bytes, b_smem_layout.inner, dtype=ab_dtype), b_smem_layout.outer)
    return region, sA, sB


@cute.jit
def load_k_tiles(ab_producer, tma_atom_a, tAgA, tAsA, tma_atom_b, tBgB, tBsB, m_pair, n_tile, k_first, k_count,
                 a_mcast_mask=None):
    """TMA producer: k-tiles [k_first, k_first + k_count) of pair tile (m_pair, n_tile) into the ring.

    ``tAgA`` / ``tBgB`` are the TMA partitions of every tile, (box, tiles, k_tiles). Per k-tile: wait
    until the slot is empty (the MMAs that last read it committed), the leader arms the slot's full
    barrier with the pair's bytes (expect_tx), then this CTA's A box (or with ``a_mcast_mask`` its slice of it,
    multicast to the CTAs of that mask: the pairs along N) and B slabs. Returns the producer.
    """
    for kt in cutlass.range(k_count, unroll=1):
        ab_empty = ab_producer.acquire_and_advance()
        k = k_first + kt
        cute.copy(tma_atom_a, tAgA[(None, m_pair, k)], tAsA[(None, ab_empty.index)], tma_bar_ptr=ab_empty.barrier,
                  **({} if a_mcast_mask is None else {"mcast_mask": a_mcast_mask}))
        cute.copy(tma_atom_b, tBgB[(None, n_tile, k)], tBsB[(None, ab_empty.index)], tma_bar_ptr=ab_empty.barrier)
    return ab_producer


@cute.jit
def mma_k_tiles(ab_consumer, tiled_mma, tCtAcc, tCrA, tCrB, k_count):
    """The leader's MMA thread: ``k_count`` landed k-tiles of the ring into the accumulator ``tCtAcc``.

    The first MMA overwrites the accumulator (a fresh tile); each k-tile is BK/16 MMAs, then a commit
    that multicasts its completion to the slot's empty barrier in both CTAs. Returns the consumer and
    the tiled MMA (its accumulate flag is state the caller rebinds, so that it is carried across the
    caller's loops and branches).
    """
    tiled_mma.set(tcgen05.Field.ACCUMULATE, False)
    for kt in cutlass.range(k_count, unroll=1):
        ab_full = ab_consumer.wait_and_advance()  # both CTAs' bytes of this k-tile have landed
        for kb in cutlass.range_constexpr(cute.size(tCrA, mode=[2])):  # BK/16 MMAs per k-tile
            kcoord = (None, None, kb, ab_full.index)
            cute.gemm(tiled_mma, tCtAcc, tCrA[kcoord], tCrB[kcoord], tCtAcc)
            tiled_mma.set(tcgen05.Field.ACCUMULATE, True)
        ab_full.release()  # tcgen05.commit multicast -> empty[slot] in both CTAs
    return ab_consumer, tiled_mma


@cute.jit
def epi_views(tCtAcc, tCgC, sC, tma_atom_c, warp_idx, tidx, bm: cutlass.Constexpr, bn: cutlass.Constexpr,
              epi_warps: cutlass.Constexpr):
    """This epilogue thread's views of one tile: (tiled_t2r, tTR_tAcc, tTR_sC, tCsC, tCgC_box).

    Warp w owns accumulator rows 32*(w%4)..+31 (its TMEM lane quarter) of column part w//4, chunk by
    chunk of EPI_CHUNK columns: ``tTR_tAcc[None, None, None, 0, j]`` is the TMEM source of chunk j
    (tcgen05.ld.32x32b.x32: one row of 32 fp32 per thread), ``tTR_sC`` the thread's row of each
    staging buffer, and ``tCsC`` / ``tCgC_box`` the TMA store boxes of the staging buffers and of the
    tile of C. The mapping is the ``epi_*`` functions above (checked by the coverage tests).
    """
    acc = tCtAcc[(None, None), 0, 0]  # (BM, BN) fp32 in TMEM, lane = row
    part = epi_part_cols(epi_warps, bn)
    # (BM, EPI_CHUNK, 1, chunks): this warp's column part, one tcgen05.ld chunk per staging tile
    tAcc_epi = cute.flat_divide(cute.local_tile(acc, (bm, part), (0, epi_col_part(warp_idx))), (bm, EPI_CHUNK))
    atom_t2r = cute.make_copy_atom(tcgen05.Ld32x32bOp(tcgen05.Repetition.x32), ACC_DTYPE)
    tiled_t2r = tcgen05.make_tmem_copy(atom_t2r, tAcc_epi[None, None, 0, 0])
    thr_t2r = tiled_t2r.get_slice(epi_t2r_thread(tidx))  # thread -> its TMEM lane (= row)
    tTR_tAcc = thr_t2r.partition_S(tAcc_epi)  # (T2R, T2R_M, T2R_N, 1, chunks)
    tTR_sC = thr_t2r.partition_D(sC)  # (T2R, T2R_M, T2R_N, buffers): this thread's row of each staging tile
    # TMA boxes: staging (16, 32, BM/16, 1, buffers) and the tile of C (16, 32, BM/16, BN/32)
    sC_box = cute.flat_divide(sC, EPI_BOX)
    gC_box = cute.flat_divide(tCgC[(None, None), 0, 0], EPI_BOX)
    tCsC, tCgC_box = cpasync.tma_partition(
        tma_atom_c, 0, cute.make_layout(1), cute.group_modes(sC_box, 0, 2), cute.group_modes(gC_box, 0, 2)
    )
    return tiled_t2r, tTR_tAcc, tTR_sC, tCsC, tCgC_box


@cute.jit
def load_chunk(tiled_t2r, tTR_tAcc, tTR_rAcc, j: cutlass.Constexpr):
    """TMEM -> registers: chunk j of this thread's row (tcgen05.ld, then tcgen05.wait::ld: the registers
    hold the values only once the wait has returned)."""
    cute.copy(tiled_t2r, tTR_tAcc[None, None, None, 0, j], tTR_rAcc)
    cute.arch.fence_view_async_tmem_load()


@cute.jit
def store_chunk(tTR_rAcc, tTR_sC, tCsC, tCgC_box, tma_atom_c, warp_idx, j: cutlass.Constexpr,
                epi_warps: cutlass.Constexpr, bn: cutlass.Constexpr, epi_stages: cutlass.Constexpr, epi=None):
    """Registers -> swizzled staging smem -> TMA store: chunk j of the warp's 32 rows.

    Chunk j goes to staging buffer j % epi_stages of the warp's column part. Its previous stores (chunk
    j - epi_stages, of this tile or, for the first chunks of a tile, of the one before) must have read
    it: lane 0 waits until at most ``epi_store_wait_depth`` of its bulk groups are pending, and the warp
    meets it at __syncwarp. Every thread writes its row (st.shared), makes the writes visible to the
    TMA's async proxy (fence.proxy.async), __syncwarp, then lane 0 issues the two {32, 16} box stores
    of the warp's rows and commits them as one bulk group. Nobody waits for the stores to finish here.
    Lane 0, not elect.sync: a bulk group belongs to the thread that committed it, so the thread that
    waits must be the one that issued, every time. ``epi``: the fused epilogue (``phases.epilogue.EpilogueArgs``
    whose ``coords`` are the CTA's (BM, BN) tile of C coordinates), applied to the chunk's registers first.
    """
    if cutlass.const_expr(epi is not None):
        # this thread's row of the chunk: TMEM lane = row, 32 consecutive columns from the chunk's box column
        row = WARP_ROWS * (warp_idx % 4) + cute.arch.lane_idx()
        chunk = cute.local_tile(epi.coords, (1, EPI_CHUNK), (row, epi_box_col(warp_idx, j, epi_warps, bn)))
        epilogue.apply_at(tTR_rAcc, chunk, epi.c_shape, epi.bias, epi.residual, epi.activation, group=8)
    buf = epi_staging_buffer(warp_idx, j, epi_stages)
    cute.arch.cp_async_bulk_wait_group(epi_store_wait_depth(epi_stages), read=True)
    cute.arch.sync_warp()
    # st.shared: one swizzled row of the staging tile (128 B of fp32; a 16-bit C rounded first, 64 B)
    cute.autovec_copy(to_c_type(tTR_rAcc, tTR_sC.element_type), tTR_sC[None, None, None, buf])
    cute.arch.fence_proxy("async.shared", space="cta")  # generic-proxy writes -> visible to the TMA
    cute.arch.sync_warp()  # all 32 rows are written before lane 0 stores them
    if cute.arch.lane_idx() == 0:
        box_col = epi_box_col(warp_idx, j, epi_warps, bn)
        for h in cutlass.range_constexpr(BOXES_PER_WARP):
            box = epi_box_row(warp_idx, h)
            cute.copy(tma_atom_c, tCsC[None, box, 0, buf], tCgC_box[None, box, box_col])
        cute.arch.cp_async_bulk_commit_group()  # this chunk's boxes form one bulk group
