"""Plumbing shared by the sm90 TMA phases (2a and later); none of it changes between them.

- ``TmaConfig``: the tile/stage fields of those phases (BK=64, the grouped raster's band height).
- the TMA load atoms for A and B, C's TMA store atom (or its reduce-add: ``accumulate``, C += A @ B), and
  the shared-storage struct: full/empty mbarriers + the stage ring.
- ``cluster_tile_coord``: which (m, n) tile a CTA of a cluster computes in the grouped raster.
- the persistent phases' (6 and later) A/B ring of a cluster (``make_pair_pipeline``: B shared along M, A along
  N with ``cluster_n``) and their TMA load partitions (``tma_load_partitions``), built the same way in each of them.
- the pieces the persistent phases (6 and later) run once per tile, as ``@cute.jit`` helpers so each
  is written once: the producer's k-tile loads, the consumers' wgmma mainloop, and the epilogue (the
  views of the C staging ring, the TMA-store boxes of a tile, the store of one C slab and of a tile).

The phases take the rest from ``phases.sm90.common`` (the wgmma tiled MMA, the staged smem layouts --
with BK=64 A gets SW128: a 64-element fp16 K-row is exactly one 128-B swizzle span; N-major B is
SW128 as before -- and the register epilogue of phases 2a-4) and ``phases.raster`` (the grouped tile
order). Nothing here is a kernel; the phases' ``kernel`` bodies read top to bottom on their own.
"""

import dataclasses

import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
from cutlass.cute.nvgpu import cpasync, warpgroup

from phases.base import TileConfig
from phases.raster import ceil_div, grouped_tile_coord
from phases import epilogue
from phases.sm90 import common
from phases.sm90.common import SMEM_ALIGN


@dataclasses.dataclass(frozen=True)
class TmaConfig(TileConfig):
    """Fields of the TMA phases. BK=64 instead of the worklog's 32: see phase 2a's docstring."""

    bm: int = 128
    bn: int = 128
    bk: int = 64
    stages: int = 4
    group_m: int = 8  # raster band height in M-tiles (a multiple of cluster_m)

    def box_n(self) -> int:
        """Rows of B's TMA box and smem stage: ``bn`` (phase 9 pads some; see there)."""
        return self.bn

    def stage_bytes(self) -> int:
        """Bytes one A+B stage holds (what the full barrier's expect_tx arms, summed over the cluster)."""
        return (self.bm + self.box_n()) * self.bk * 2


def make_tma_load(gmem: cute.Tensor, smem_layout_staged, tile_mk, num_multicast: int = 1):
    """TMA load atom + TMA coordinate tensor for one operand; one ``cp.async.bulk.tensor`` per stage.

    With ``num_multicast`` > 1 the box is split across that many CTAs: each loads its slice and the
    multicast writes it into every CTA of the mask.
    """
    op = cpasync.CopyBulkTensorTileG2SOp() if num_multicast == 1 else cpasync.CopyBulkTensorTileG2SMulticastOp()
    smem_layout = cute.slice_(smem_layout_staged, (None, None, 0))
    return cpasync.make_tiled_tma_atom(op, gmem, smem_layout, tile_mk, num_multicast=num_multicast)


def make_tma_store(mC: cute.Tensor, sC_layout, box_mn, accumulate: bool = False):
    """TMA store atom + TMA coordinate tensor for C: one bulk tensor store per staging buffer (``box_mn``).

    ``accumulate`` (a config field of phases 5-8) swaps the store for the reduce-add
    (``cp.reduce.async.bulk.tensor...add``): the TMA unit adds the box into C in global memory instead of
    overwriting it, so the kernel computes C += A @ B with no load of C and no second pass. Each C element
    still has one writer (phase 7's stream-K halves meet in smem before their one store), so the sum is
    deterministic. Everything else -- staging, boxes, bulk groups, waits -- is the store's.
    """
    op = cpasync.CopyReduceBulkTensorTileS2GOp() if accumulate else cpasync.CopyBulkTensorTileS2GOp()
    return cpasync.make_tiled_tma_atom(op, mC, cute.slice_(sC_layout, (None, None, 0)), box_mn)


def store_issuers(tidx, accumulate: bool):
    """Which threads issue C's TMA stores and own their bulk groups (commit, wait): thread 0 for the store, warp 0
    for the reduce-add (``accumulate``).

    The DSL issues a TMA *store* from every thread that reaches it, so one thread must; it wraps the *reduce-add*
    in ``elect.sync`` over the full warp itself, and an ``elect.sync`` that one lane reaches alone never
    completes (the first accumulate kernels hung on the H200 exactly so). With a warp, lane 0 is elected: its
    bulk groups hold the stores; the other lanes commit and wait on empty groups.
    """
    return tidx < 32 if accumulate else tidx == 0


def make_shared_storage(stages: int, sA_layout, sB_layout, ab_dtype=cutlass.Float16):
    """Struct of the CTA's dynamic smem: NSTAGES full + NSTAGES empty mbarriers, then the A and B rings."""

    @cute.struct
    class SharedStorage:
        # full[s]: TMA bytes of stage s landed (expect_tx); empty[s]: every consumer warp is done reading s.
        full_empty: cute.struct.MemRange[cutlass.Int64, 2 * stages]
        sA: cute.struct.Align[cute.struct.MemRange[ab_dtype, cute.cosize(sA_layout)], SMEM_ALIGN]
        sB: cute.struct.Align[cute.struct.MemRange[ab_dtype, cute.cosize(sB_layout)], SMEM_ALIGN]

    return SharedStorage


def cluster_n(cfg) -> int:
    """CTAs per cluster along N that share (multicast) the A tile: the persistent phases' ``cluster_n``, else 1."""
    return getattr(cfg, "cluster_n", 1)


def cluster_ranks(cfg: TmaConfig, cta_rank):
    """(rank along M, rank along N) of CTA ``cta_rank`` in its cluster of ``cluster_m`` x ``cluster_n``, launched as
    one row of that many CTAs: the ``cluster_m`` CTAs of one N column are consecutive ranks."""
    if cluster_n(cfg) == 1:
        return cta_rank, 0
    return cta_rank % cfg.cluster_m, cta_rank // cfg.cluster_m


def cluster_tile_coord(linear_cluster, tiles_m, tiles_n, cfg: TmaConfig, cta_rank):
    """(m, n) tile of CTA ``cta_rank`` of the ``linear_cluster``-th cluster in the grouped raster.

    The raster walks cluster tiles (``cluster_m`` M-tiles by ``cluster_n`` N-tiles); the CTAs of a cluster take
    adjacent tiles: those of one N column read the same B k-tiles, those of one M row the same A k-tiles, which is
    what lets them share B (and, with ``cluster_n`` > 1, A) by multicast.
    """
    cn = cluster_n(cfg)
    m_group, n_group = grouped_tile_coord(
        linear_cluster, ceil_div(tiles_m, cfg.cluster_m), ceil_div(tiles_n, cn) if cn > 1 else tiles_n,
        cfg.group_m // cfg.cluster_m,
    )
    rank_m, rank_n = cluster_ranks(cfg, cta_rank)
    return m_group * cfg.cluster_m + rank_m, (n_group * cn + rank_n if cn > 1 else n_group)


def make_pair_pipeline(storage, cfg: TmaConfig, consumer_warps: int, cta_rank, split_k: int = 1):
    """(``ab_pipeline``, ``a_mcast_mask``, ``b_mcast_mask``): the A/B ring of a cluster of ``cluster_m`` CTAs along M
    that share B by multicast (phases 6 and later), and with ``cluster_n`` > 1 (the persistent phases) of that many
    columns of them along N that share A. With ``split_k`` > 1 (phases 9 and 10) the cluster is ``cluster_m`` x
    ``split_k`` CTAs, rank m + cluster_m k: B is shared along M only, among the CTAs of one K range, and only those
    arrive on each other's empty barriers. ``a_mcast_mask`` is None where nothing shares A.

    full: 1 arrival (the producer's arrive.expect_tx) + the stage's TMA bytes (all of A's and B's slices).
    empty: ``consumer_warps`` arrivals (the warps that read a stage) from *each* CTA that multicasts into this
    one or receives from it -- this CTA's row and column of the cluster, ``cluster_m + cluster_n - 1`` CTAs: the
    peers write into this slot too. Created without defer_sync: barrier init, then a cluster-wide arrive/wait
    before any use (barriers the caller initialised before this call are published with it).
    """
    cn = cluster_n(cfg)
    assert split_k == 1 or cn == 1, "a cluster splits K or shares A, not both"
    cta_layout_vmnk = cute.make_layout((1, cfg.cluster_m, split_k * cn, 1))
    ab_pipeline = pipeline.PipelineTmaAsync.create(
        barrier_storage=storage.full_empty.data_ptr(),
        num_stages=cfg.stages,
        producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, (cfg.cluster_m + cn - 1) * consumer_warps),
        tx_count=cfg.stage_bytes(),
        cta_layout_vmnk=cta_layout_vmnk,
        # the empty arrivals go to the B partners only (mode M), not to the CTAs of other K ranges
        **({"mcast_mode_mn": (0, 1)} if split_k > 1 else {}),
    )
    coord = cta_layout_vmnk.get_flat_coord(cta_rank)
    # B's multicast mask: every CTA of this column of the cluster (mode 1 of V,M,N,L) -> 0b11 for a pair
    b_mcast_mask = cpasync.create_tma_multicast_mask(cta_layout_vmnk, coord, mcast_mode=1)
    # A's: every CTA of this row (mode 2)
    a_mcast_mask = cpasync.create_tma_multicast_mask(cta_layout_vmnk, coord, mcast_mode=2) if cn > 1 else None
    return ab_pipeline, a_mcast_mask, b_mcast_mask


def tma_load_partitions(tma_atom_a, tma_atom_b, sA, sB, mA, mB, cfg: TmaConfig, cta_rank):
    """(``tAsA``, ``tAgA``, ``tBsB``, ``tBgB``, ``k_tiles``): every tile's TMA load partitions; a loop
    over tiles only picks the tile coordinates. Of B, rank r along M of the cluster loads slice r of the box and
    multicasts it to its column; of A, rank r along N slice r to its row (with ``cluster_n`` 1 the partition is the
    whole box, this CTA's alone)."""
    rank_m, rank_n = cluster_ranks(cfg, cta_rank)
    gA = cute.local_tile(mA, (cfg.bm, cfg.bk), (None, None))  # (BM, BK, tiles_m, k_tiles)
    gB = cute.local_tile(mB, (cfg.bn, cfg.bk), (None, None))  # (BN, BK, tiles_n, k_tiles)
    tAsA, tAgA = cpasync.tma_partition(
        tma_atom_a, rank_n, cute.make_layout(cluster_n(cfg)), cute.group_modes(sA, 0, 2), cute.group_modes(gA, 0, 2)
    )
    tBsB, tBgB = cpasync.tma_partition(
        tma_atom_b, rank_m, cute.make_layout(cfg.cluster_m), cute.group_modes(sB, 0, 2), cute.group_modes(gB, 0, 2)
    )
    return tAsA, tAgA, tBsB, tBgB, cute.size(gA, mode=[3])


@cute.jit
def load_k_tiles(
    ab_pipeline, prod_state, tma_atom_a, tAgA, tAsA, tma_atom_b, tBgB, tBsB, m_tile, n_tile, k_first, k_count,
    b_mcast_mask, a_mcast_mask=None,
):
    """Producer: k-tiles [k_first, k_first + k_count) of tile (m_tile, n_tile) into the ring.

    ``tAgA`` / ``tBgB`` are the TMA partitions of every tile, (box, tiles, k_tiles). Each stage: wait
    until empty[s] (its last readers are done), arm full[s] with the stage's bytes, issue this CTA's slice of A's
    box (the whole box, or with ``a_mcast_mask`` a slice multicast to it) and of B's box (multicast to
    ``b_mcast_mask``). Returns the advanced ring state.
    """
    for kt in cutlass.range(k_count, unroll=1):
        ab_pipeline.producer_acquire(prod_state)  # empty wait + arrive.expect_tx on full[s]
        full = ab_pipeline.producer_get_barrier(prod_state)
        cute.copy(tma_atom_a, tAgA[(None, m_tile, k_first + kt)], tAsA[(None, prod_state.index)], tma_bar_ptr=full,
                  **({} if a_mcast_mask is None else {"mcast_mask": a_mcast_mask}))
        cute.copy(
            tma_atom_b, tBgB[(None, n_tile, k_first + kt)], tBsB[(None, prod_state.index)],
            tma_bar_ptr=full, mcast_mask=b_mcast_mask,
        )
        prod_state.advance()
    return prod_state


@cute.jit
def mma_k_tiles(ab_pipeline, read_state, release_state, tiled_mma, acc, tCrA, tCrB, k_count, issued=None):
    """Consumers: ``k_count`` stages of the ring into ``acc``, one wgmma batch in flight.

    Each stage: wait full[s], issue its BK/16 wgmma, keep that batch in flight (``wait_group 1``) and
    release the previous stage, whose batch is now done. At the end every wgmma has completed and every
    stage read is released, so the producer may refill them while the epilogue runs. Returns the two
    advanced ring states. ``issued``: a named barrier to arrive on once the last stage's wgmmas are issued, before
    waiting for them to complete (phase 8's turn: the other warpgroup's wgmmas then queue behind these in the
    tensor pipe instead of starting after they finish).
    """
    num_k_blocks = cute.size(tCrA, mode=[2])  # BK / 16
    for kt in cutlass.range(k_count, unroll=1):
        ab_pipeline.consumer_wait(read_state)  # full[s]: the stage's TMA bytes have landed
        warpgroup.fence()
        for kb in cutlass.range_constexpr(num_k_blocks):
            kc = (None, None, kb, read_state.index)
            cute.gemm(tiled_mma, acc, tCrA[kc], tCrB[kc], acc)
        warpgroup.commit_group()
        warpgroup.wait_group(1)
        if kt > 0:
            ab_pipeline.consumer_release(release_state)
            release_state.advance()
        read_state.advance()
    if cutlass.const_expr(issued is not None):
        issued.arrive()
    warpgroup.wait_group(0)
    ab_pipeline.consumer_release(release_state)  # the last stage: the producer may reuse it right away
    release_state.advance()
    return read_state, release_state


@cute.jit
def store_slab(src, tCsC_slab, bSG_sC_buf, bSG_gC_box, tma_atom_c, epi_barrier, store_thread,
               epi_stages: cutlass.Constexpr, epi=None, after=None, hand_on: cutlass.Constexpr = False,
               overlap: cutlass.Constexpr = False):
    """One C slab: registers -> its smem staging buffer -> an asynchronous TMA store.

    Every consumer thread writes its values of the slab (``src`` -> ``tCsC_slab``, st.shared; rounded to
    a 16-bit C's type first) and makes
    them visible to the TMA's async proxy; the store thread first lets at most ``epi_stages - 2`` of its
    earlier stores still be reading smem, so the buffer the *next* slab overwrites is free once all
    threads pass the named barrier; then it issues this slab's store as its own bulk group. Nobody waits
    for a store to reach global memory (the caller waits, read-side, before smem may be released).
    ``epi``: the fused epilogue (``phases.epilogue.EpilogueArgs``) applied to ``src`` first, or None.
    ``after``: the previous slab's barrier value (0.0, ``epi.spread``), added to the slab's preloaded bias values (or,
    without those, to every register) before the epilogue's arithmetic reads them, so that arithmetic stays below
    that barrier. ``hand_on``: this slab's barrier returns such a value (``common.barrier_zero``) for the next slab;
    otherwise it returns None.
    ``overlap`` (phase 8's ``store_overlap``): the slab's values are computed and rounded first, while the previous
    slab's store still reads smem; then the store thread waits only for the store ``epi_stages`` slabs back (the one
    that read this slab's buffer) and a first barrier tells every thread the buffer is free. Without it the wait comes
    after the write, for the previous slab's store: each slab then waits out the latency of the store just issued.
    """
    if cutlass.const_expr(epi is not None):
        fence, bias_groups = common.fence_register, epi.bias_groups
        if cutlass.const_expr(after is not None and bias_groups is not None):
            bias_groups = plus_zero(bias_groups, after)  # the slab's few bias values carry it: every sum reads one
        elif cutlass.const_expr(after is not None):
            fence = lambda x: common.fence_register(x) + after  # noqa: E731
        # a wgmma fragment's registers come in column pairs of one row: the bias and residual load a pair at a time
        epilogue.apply_at(src, epi.coords, epi.c_shape, epi.bias, epi.residual, epi.activation,
                          fence=fence, group=2, gated=epi.gated, bias_groups=bias_groups)
    values = common.to_c_type(src, tCsC_slab.element_type)
    if cutlass.const_expr(overlap):
        if store_thread:  # the store epi_stages slabs back read this buffer; the later ones may still be reading
            cute.arch.cp_async_bulk_wait_group(epi_stages - 1, read=True)
        epi_barrier.arrive_and_wait()  # this slab's buffer is free
    cute.autovec_copy(values, tCsC_slab)
    cute.arch.fence_proxy("async.shared", space="cta")  # st.shared -> visible to the TMA (async proxy)
    if cutlass.const_expr(not overlap):
        if store_thread:
            cute.arch.cp_async_bulk_wait_group(epi_stages - 2, read=True)
    zero = None
    if cutlass.const_expr(hand_on):
        zero = common.barrier_zero(epi_barrier.barrier_id, epi_barrier.num_threads)
    else:
        epi_barrier.arrive_and_wait()  # the slab is in smem, and the next slab's buffer is free
    if store_thread:
        cute.copy(tma_atom_c, bSG_sC_buf, bSG_gC_box)
        cute.arch.cp_async_bulk_commit_group()
    return zero


def plus_zero(bias_groups: list, zero) -> list:
    """``bias_groups`` (a slab's part of ``phases.epilogue.load_bias``' list) in fp32 plus ``zero``: each distinct
    vector once (the groups of one column group share it), so a 192-wide tile's slab adds 8 values, not 32."""
    done = {}
    for v in bias_groups:
        if id(v) not in done:
            w = cute.make_rmem_tensor(cute.make_layout(cute.size(v)), cutlass.Float32)
            for e in range(cute.size(v)):
                w[e] = v[e].to(cutlass.Float32) + zero
            done[id(v)] = w
    return [done[id(v)] for v in bias_groups]


def epilogue_slab_views(thr_mma, sC, sC_layout, acc, epi_n: int, slabs: int, epi_stages: int, pair: int = 1):
    """(``acc_slabs``, ``tCsC_slabs``): slab j of this thread's accumulator and where it goes in smem.

    The MMA's view of the staging ring as the (BM, BN) tile: column c + 32 j (slab j) lives in buffer
    j % epi_stages, i.e. the slab mode is (epi_stages, slabs / epi_stages) with stride (one buffer, 0);
    same swizzle as ``sC``, so each thread writes where the TMA box reads. The wgmma fragment is
    ((2, 2, BN/8), MMA_M, 1), 8 columns per N-block, so slab j is N-blocks 4j..4j+3: both views split
    that mode into (4, BN/32), and ``[(None, j), None, 0]`` is slab j of every 64-row block.

    ``pair`` = 2 (the gated pairs): a slab's ``epi_n`` accumulator columns are ``epi_n`` / 2 columns of C, so a
    buffer is (BM, epi_n / 2) and the view's column mode is (2, epi_n / 2) with stride (0, one column) -- the
    gate's and the up's register of a pair land on the same element (``epilogue.apply_at`` gives both the pair's
    value).
    """
    slab = cute.slice_(sC_layout.outer, (None, None, 0))  # (BM, epi_n), or (BM, epi_n / 2) with the gated pairs
    cols = (pair, slab.shape[1]) if pair > 1 else slab.shape[1]
    col_stride = (0, slab.stride[1]) if pair > 1 else slab.stride[1]
    ring = cute.make_layout(
        (slab.shape[0], cols, (epi_stages, slabs // epi_stages)),
        stride=(slab.stride[0], col_stride, (cute.cosize(slab), 0)),
    )
    sC_tile = cute.make_tensor(sC.iterator, ring)  # (BM, 32, SLABS) aliasing the epi_stages buffers
    tCsC = thr_mma.partition_C(cute.group_modes(sC_tile, 1, 3))
    n_blocks = cute.make_layout((2, 2, epi_n // 8))
    return cute.logical_divide(acc, (n_blocks,)), cute.logical_divide(tCsC, (n_blocks,))


def tma_store_boxes(tma_atom_c, sC, gC, m_tile, n_tile, bm: int, epi_n: int):
    """TMA-store partition of one tile: buffer b of the staging ring -> box j (columns 32 j..) of C's
    tile (m_tile, n_tile); ``(bSG_sC[(None, b)], bSG_gC[(None, (0, j))])``."""
    return cpasync.tma_partition(
        tma_atom_c, 0, cute.make_layout(1), cute.group_modes(sC, 0, 2),
        cute.zipped_divide(gC[(None, None, m_tile, n_tile)], (bm, epi_n)),
    )


@cute.jit
def store_tile(acc_slabs, tCsC_slabs, bSG_sC, bSG_gC, tma_atom_c, epi_barrier, store_thread,
               slabs: cutlass.Constexpr, epi_stages: cutlass.Constexpr, epi=None, overlap: cutlass.Constexpr = False):
    """The epilogue of one tile: every slab j through buffer j % epi_stages (``store_slab``). Nobody
    waits for the last stores: they drain while the next tile's mainloop runs. ``epi``: the fused epilogue's
    arguments for this tile (``epilogue_args``: its ``coords`` and bias values sliced per slab here), or None.
    ``overlap``: each slab's arithmetic runs while the previous slab's store reads smem (``store_slab``)."""
    after = None  # with ``epi.spread``: the previous slab's barrier value, which the next slab's arithmetic waits for
    for j in cutlass.range_constexpr(slabs):
        after = store_slab(
            acc_slabs[(None, j), None, 0], tCsC_slabs[(None, j), None, 0], bSG_sC[(None, j % epi_stages)],
            bSG_gC[(None, (0, j))], tma_atom_c, epi_barrier, store_thread, epi_stages, slab_epilogue(epi, j), after,
            epi is not None and epi.spread and j < slabs - 1, overlap,
        )


def slab_epilogue(epi, j: int):
    """Slab j's part of a tile's ``epilogue_args``: its coordinates and its preloaded bias values (None: None)."""
    if epi is None:
        return None
    return epi.at(epi.coords[(None, j), None, 0], None if epi.bias_groups is None else epi.bias_groups[j])


@cute.jit
def bias_to_smem(mBias, sBias, n_tile, bn: cutlass.Constexpr, tidx):
    """Tile column ``n_tile``'s ``bn`` bias values -> ``sBias`` (phase 8's ``bias_smem``), asynchronously: threads
    0 .. bn / 8 - 1 each issue one 16-B ``cp.async`` (8 values) and go on without waiting; the epilogue waits for it
    (``cp_async_wait_group``) before the barrier that opens it. Called as the tile's mainloop starts, so the loads'
    latency passes under the tile's MMAs instead of at the epilogue's start, and no register holds a value meanwhile.
    ``mBias``: the bias seen with C's shape (``phases.epilogue.bias_view``); a chunk past N (a partial tile) copies
    the last whole chunk instead (N is a multiple of 8): its values reach only columns the TMA store clips."""
    row = mBias[0, None]  # the bias vector (stride 0 along M)
    atom = cute.make_copy_atom(cpasync.CopyG2SOp(cache_mode=cpasync.LoadCacheMode.GLOBAL), row.element_type,
                               num_bits_per_copy=128)
    if tidx < bn // 8:
        chunk = cutlass.min(n_tile * (bn // 8) + tidx, row.shape[0] // 8 - 1)
        cute.copy(atom, cute.local_tile(row, (8,), (chunk,)), cute.local_tile(sBias, (8,), (tidx,)))
    cute.arch.cp_async_commit_group()


def epilogue_args(cfg, thr_mma, mn, mBias, mD, m_tile, n_tile, tile_mn, epi_n: int, preload_bias: bool = True,
                  sBias=None):
    """The persistent phases' ``phases.epilogue.EpilogueArgs`` of tile (m_tile, n_tile), or None when the config has no fused
    epilogue (nothing is traced for it). The coordinates are the MMA's partition of an identity tensor over the
    GEMM's (M, N) ``mn`` (C's shape, or with the gated pairs twice its columns), divided into slabs as
    ``epilogue_slab_views`` divides the accumulators.

    The tile's bias values are loaded here, every slab's at once (``phases.epilogue.load_bias``: one load per
    column pair, one memory latency for the tile): call it before the epilogue's waits, so the loads fly meanwhile.
    Not with a residual: its loads are one per register pair, slab by slab, and the tile's bias registers (24 at 192
    wide) held across them spill (ptxas, phase 8); there each slab loads its own bias beside its residual. Nor with
    ``preload_bias=False``: a caller that picks its slabs by a run-time index (phase 7's split tile) cannot index the
    preloaded list, and its slabs load their own.

    ``sBias`` (phase 8's ``bias_smem``): the tile's bias is in smem (``bias_to_smem``), and each slab reads its values
    there (``ld.shared``, after the previous slab's barrier): the coordinates are then the tile's own, (0, 0) at its
    corner, and C's shape the tile's."""
    if not cfg.epilogue_active():
        return None
    spread = getattr(cfg, "epi_spread", False)
    if sBias is not None:  # the tile's own coordinates
        c_tile = cute.make_identity_tensor(tile_mn)
    else:
        c_tile = cute.local_tile(cute.make_identity_tensor(mn), tile_mn, (m_tile, n_tile))
    coords = cute.logical_divide(thr_mma.partition_C(c_tile), (cute.make_layout((2, 2, epi_n // 8)),))
    if sBias is not None:
        view = cute.make_tensor(sBias.iterator, cute.make_layout(tile_mn, stride=(0, 1)))
        return epilogue.EpilogueArgs(coords, tile_mn, view, None, cfg.activation, cfg.gated, None, spread)
    bias = None
    if preload_bias and mBias is not None and mD is None:
        bias = [epilogue.load_bias(mBias, coords[(None, j), None, 0], mn, 2, pair_column(epi_n))
                for j in range(tile_mn[1] // epi_n)]
    return epilogue.EpilogueArgs(coords, mn, mBias, mD, cfg.activation, cfg.gated, bias, spread)


def pair_column(epi_n: int):
    """A slab fragment's register pair g -> its column pair's key. The fragment is ((2, 2, epi_n / 8), 64-row
    blocks): registers (column in the pair, 8-row half, N-block), so pair g sits in N-block (g // 2) % (epi_n / 8)
    of its slab, the same columns in each half and each 64-row block."""
    return lambda g: (g // 2) % (epi_n // 8)
