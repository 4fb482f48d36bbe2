"""Plumbing the sm90 phases share: the wgmma tiled MMA and its swizzled smem layouts, the cp.async
copies that fill those layouts (phases 0-1), and the register epilogue (phases 0 to 4).

Everything here is static structure built at trace time; none of it changes between phases 0 and 1,
so the diff between the two phase files shows only the pipeline.

The worklog's problem is A (M, K) fp16 K-major, B seen as (N, K) fp16 N-major ("MN-major" for wgmma),
C (M, N) fp32 row-major; the TMA phases (2a and later) build the same pieces for the element types and
majors they read from their tensors (``types``, ``phases.operands.Types``; None = the worklog's).
"""

from __future__ import annotations

import cutlass
import cutlass.cute as cute
import cutlass.utils.hopper_helpers as sm90_utils
from cutlass._mlir.dialects import llvm
from cutlass.cute.nvgpu import OperandMajorMode, cpasync
from cutlass.cutlass_dsl import T, dsl_user_op
from cutlass.tensor_utils import LayoutEnum

WARPGROUP_THREADS = 128  # one warpgroup: the unit that issues a wgmma
WARPS_PER_WARPGROUP = 4
WGMMA_M = 64  # a wgmma instruction covers 64 rows; BM=128 is two of them along M
COPY_BITS = 128  # one cp.async.cg moves 16 B = 8 fp16, the widest cp.async
SMEM_ALIGN = 1024  # SW128 repeats every 8 rows x 128 B: the stage base must be 1024-B aligned


def make_tiled_mma(bn: int, consumer_warpgroups: int = 1, types=None) -> cute.TiledMma:
    """wgmma ``m64n{bn}k16`` (fp16 x fp16 -> fp32, A and B read from smem descriptors) for 1, 2 or 3 warpgroups.

    The worklog's A is K-major, its B MN-major (row-major B: the transpose bit of the instruction); with
    ``types`` the element type (fp16/bf16) and both majors are those of the kernel's tensors. The
    atom covers 64 rows. With one warpgroup and BM=128 the warpgroup issues it twice per k16 step (rows
    0-63 and 64-127, 2 x 64 fp32 accumulator registers per thread); with two (or three) consumer warpgroups,
    warpgroup w owns rows 64w..64w+63.
    """
    ab = cutlass.Float16 if types is None else types.ab
    a_major = OperandMajorMode.K if types is None else types.a.sm90_mma_major_mode()
    b_major = OperandMajorMode.MN if types is None else types.b.sm90_mma_major_mode()
    return sm90_utils.make_trivial_tiled_mma(
        ab,
        ab,
        a_major,
        b_major,
        cutlass.Float32,
        atom_layout_mnk=(consumer_warpgroups, 1, 1),
        tiler_mn=(WGMMA_M, bn),
    )


def make_smem_layouts(bm: int, bn: int, bk: int, stages: int, types=None):
    """The swizzled smem layouts wgmma reads, staged: sA (bm, bk, stages), sB (bn, bk, stages).

    For BK=32 fp16 the K-major A atom is SW64 (a 64-B row of K), and for BN=128 the MN-major B atom is
    SW128 (a 128-B row of N) -- the worklog's choices (``types`` None); other majors get the swizzle
    that fits their contiguous mode. Each is a ComposedLayout (swizzle o layout);
    the swizzle goes on the smem pointer (``.inner``) and the layout (``.outer``) on the tensor, so
    the XOR keys come from address bits and the stage base must be 1024-B aligned.
    """
    tile = (bm, bn, bk)
    if types is None:
        ab, a_layout, b_layout = cutlass.Float16, LayoutEnum.ROW_MAJOR, LayoutEnum.COL_MAJOR
    else:
        ab, a_layout, b_layout = types.ab, types.a, types.b
    sA_layout = sm90_utils.make_smem_layout_a(a_layout, tile, ab, stages)
    sB_layout = sm90_utils.make_smem_layout_b(b_layout, tile, ab, stages)
    return sA_layout, sB_layout


def _g2s_atom() -> cute.CopyAtom:
    # cp.async.cg: 16 B, bypasses L1 (the tile is used once per CTA), lands in smem via the generic proxy
    return cute.make_copy_atom(
        cpasync.CopyG2SOp(cache_mode=cpasync.LoadCacheMode.GLOBAL),
        cutlass.Float16,
        num_bits_per_copy=COPY_BITS,
    )


def make_g2s_copy_a(bk: int, threads: int = WARPGROUP_THREADS) -> cute.TiledCopy:
    """cp.async tiled copy for a (BM, BK) tile of K-major A: each thread moves 8 contiguous K values.

    BK/8 threads cover one row (4 for BK=32, a 64-B row), ``threads`` of them cover threads*8/BK rows
    per pass (32 rows); the copy repeats along M to cover BM (4 passes for BM=128).
    """
    vec = COPY_BITS // cutlass.Float16.width
    thr_k = bk // vec
    thr_layout = cute.make_layout((threads // thr_k, thr_k), stride=(thr_k, 1))  # K fastest
    return cute.make_tiled_copy_tv(_g2s_atom(), thr_layout, cute.make_layout((1, vec)))


def make_g2s_copy_b(bn: int, threads: int = WARPGROUP_THREADS) -> cute.TiledCopy:
    """cp.async tiled copy for a (BN, BK) tile of N-major B: each thread moves 8 contiguous N values.

    BN/8 threads cover one K row of the tile (16 for BN=128, 256 B), ``threads`` of them cover
    threads*8/BN K rows per pass (8); the copy repeats along K to cover BK (4 passes for BK=32).
    """
    vec = COPY_BITS // cutlass.Float16.width
    thr_n = bn // vec
    thr_layout = cute.make_layout((thr_n, threads // thr_n), stride=(1, thr_n))  # N fastest
    return cute.make_tiled_copy_tv(_g2s_atom(), thr_layout, cute.make_layout((vec, 1)))


@cute.jit
def store_acc_to_gmem(
    tiled_mma: cute.TiledMma,
    tidx,
    acc: cute.Tensor,
    mC: cute.Tensor,
    tile_mn: cutlass.Constexpr,
    m_tile,
    n_tile,
):
    """Epilogue: write the fp32 accumulator registers straight to C with st.global.

    - ``tiled_mma``: the tiled MMA that produced ``acc`` (e.g. ``make_tiled_mma(bn)``).
    - ``tidx``: this thread's index inside that tiled MMA's threads (``thread_idx`` for one
      warpgroup; for several consumer warpgroups, the index relative to the first consumer thread).
    - ``acc``: the accumulator fragment, ``make_rmem_tensor(thr_mma.partition_shape_C(tile), Float32)``.
    - ``mC``: all of C (fp32, N contiguous, symbolic extents); ``tile_mn`` = (BM, BN); this CTA's tile
      is (``m_tile``, ``n_tile``).

    wgmma leaves each thread pairs of adjacent columns, so the stores are 8-B ``st.global.v2.f32``:
    scattered, but each warp's stores to one row cover full 32-B sectors. A tile that sticks out of C
    (M or N not a multiple of the tile) stores element by element, each predicated on its coordinate
    (an identity tensor partitioned like C); whole tiles, all of them for tile-multiple shapes, keep
    the unpredicated vector stores. The caller must have waited for every wgmma writing ``acc``
    (``warpgroup.wait_group(0)``).
    """
    thr_mma = tiled_mma.get_slice(tidx)
    tCgC = thr_mma.partition_C(cute.local_tile(mC, tile_mn, (m_tile, n_tile)))
    acc = to_c_type(acc, mC.element_type)
    m_end = (m_tile + 1) * tile_mn[0]
    n_end = (n_tile + 1) * tile_mn[1]
    if m_end <= mC.shape[0] and n_end <= mC.shape[1]:
        cute.autovec_copy(acc, tCgC)
    else:
        cC = cute.local_tile(cute.make_identity_tensor(mC.shape), tile_mn, (m_tile, n_tile))
        tCcC = thr_mma.partition_C(cC)  # (m, n) of each accumulator element
        for i in cutlass.range(cute.size(acc), unroll_full=True):
            if cute.elem_less(tCcC[i], mC.shape):
                tCgC[i] = acc[i]


def to_c_type(acc: cute.Tensor, c_dtype) -> cute.Tensor:
    """``acc`` (fp32 registers) as C's element type: itself for fp32 C, a rounded copy for fp16/bf16.

    The rounding reads the accumulator registers with plain arithmetic, which the compiler may schedule
    anywhere after the last write it knows of -- and it does not know that a ``wgmma.wait_group`` is
    what completes the wgmma's writes: without a fence it hoisted the bf16 rounding of phases 2a-4 above
    the wait (a read of in-flight accumulators, undefined in PTX; ptxas then serialized every wgmma of
    the kernel, remark C7514). Each register passes through ``fence_register`` first (the ``+f``
    operand fence of CUTLASS's ``warpgroup_fence_operand``): the rounding stays after the wait.
    """
    if c_dtype == cutlass.Float32:
        return acc
    for i in range(cute.size(acc)):  # a static fragment: unrolled at trace time
        acc[i] = fence_register(acc[i])
    out = cute.make_fragment_like(acc, c_dtype)
    out.store(acc.load().to(c_dtype))
    return out


@dsl_user_op
def fence_register(x, *, loc=None, ip=None):
    """``x`` unchanged, through an empty volatile inline asm that reads and writes it (``"+f"``): no
    instruction that uses the result can be scheduled above the side effects before it (a
    ``wgmma.wait_group``). Emits no instruction."""
    res = llvm.inline_asm(T.f32(), [x.ir_value(loc=loc, ip=ip)], "", "=f,0", has_side_effects=True, loc=loc, ip=ip)
    return cutlass.Float32(res)


@dsl_user_op
def barrier_zero(barrier_id: int, num_threads: int, *, loc=None, ip=None):
    """Named barrier ``barrier_id`` of ``num_threads`` threads (``NamedBarrier.arrive_and_wait``'s wait) that also
    returns 0.0: a ``barrier.red.popc`` of a predicate no thread sets. ptxas cannot know the result before the
    barrier, so arithmetic that adds it stays below the barrier -- ``fence_register`` orders nothing in the SASS
    (its asm is empty), and ptxas hoists register-only arithmetic above a ``bar.sync`` freely."""
    asm = ("{ .reg .pred p; .reg .u32 z; setp.ne.u32 p, $1, $1; "
           f"barrier.red.popc.u32 z, {barrier_id}, {num_threads}, p; mov.b32 $0, z; }}")
    res = llvm.inline_asm(T.f32(), [cutlass.Int32(barrier_id).ir_value(loc=loc, ip=ip)], asm, "=f,r",
                          has_side_effects=True, loc=loc, ip=ip)
    return cutlass.Float32(res)


# ------------------------------------------------------------------------------------------------
# Config rules: what a phase's config must be for the DSL to build it (``GemmPhase.config_problems``)
# ------------------------------------------------------------------------------------------------
SMEM_MAX = 232_448  # 227 KiB: the most dynamic smem one CTA may ask for on sm90


def tile_problems(c, rows: int = WGMMA_M, box_n: int | None = None) -> list[str]:
    """The tile rules of the TMA phases (2a and later), from the config alone: ``bm`` whole blocks of ``rows``
    (64 per consumer warpgroup: the rows of its wgmma), ``bn`` a wgmma N, ``bk`` whole k16 wgmmas, and the
    A/B ring within a CTA's smem (``ring_problems``)."""
    why = []
    if c.bm % rows:
        why.append(f"bm={c.bm}: bm is a multiple of {rows} ({rows // WGMMA_M} consumer warpgroup(s) of "
                   f"{WGMMA_M}-row wgmmas)")
    if c.bn % 8 or not 8 <= c.bn <= 256:
        why.append(f"bn={c.bn}: bn is a multiple of 8 in 8..256 (the N of a wgmma)")
    if c.bk % 16:
        why.append(f"bk={c.bk}: bk is a multiple of 16 (a k-tile is whole k16 wgmmas)")
    if getattr(c, "group_m", c.cluster_m) < c.cluster_m:
        why.append(f"group_m={c.group_m}: a raster band is at least one cluster (group_m >= cluster_m={c.cluster_m})")
    return why + ring_problems(c, box_n)


def store_tile_problems(c, rows: int, epi_n: int) -> list[str]:
    """``tile_problems`` of a TMA-store epilogue's phase (5 and later): and ``bn`` whole slabs of ``epi_n`` columns,
    the unit C is staged and stored in."""
    why = tile_problems(c, rows)
    if c.bn % epi_n:
        why.append(f"bn={c.bn}: bn is a multiple of {epi_n} (C is stored in slabs of {epi_n} columns)")
    return why


def ring_problems(c, box_n: int | None = None, extra: int = 0, ctas: int = 1) -> list[str]:
    """The A/B ring -- ``stages`` x (bm + box_n) x bk 16-bit values, plus ``extra`` bytes -- times ``ctas`` per
    SM within the smem a CTA may have (a lower bound of what the kernel asks for: barriers and alignment come on
    top, and the compile's assert has the last word)."""
    ring = c.stages * (c.bm + (box_n or c.bn)) * c.bk * 2 + extra
    if ring * ctas <= SMEM_MAX:
        return []
    per = f" x {ctas} CTAs per SM" if ctas > 1 else ""
    return [f"stages={c.stages}: {ring // 1024} KiB of A/B ring{per} (stages x (bm + bn) x bk x 2 B"
            f"{' + C staging' if extra else ''}) is over the {SMEM_MAX // 1024} KiB of smem an SM gives: fewer "
            f"stages or a smaller tile"]
