"""Phase 5's epilogue (sm100): TMEM -> swizzled staging smem -> TMA store boxes writes every C element
of the tile exactly once, with the right accumulator value, for 4 and 8 epilogue warps and for each
CTA of the 2-CTA pair. CPU only: the DSL traces a few layouts, no kernel is compiled (a few seconds).

The mapping is assembled from what the kernel uses:
- the DSL's own partitions, evaluated at trace time on identity (coordinate) tensors: the
  tcgen05.ld 32x32b.x32 thread -> (row, column) mapping of the kernel's copy atom (the same partition
  also addresses the staging tile), the kernel's chunking of the accumulator (local_tile/flat_divide),
  the EPI_BOX split of the staging tile and of the CTA's C tile, and the tiled MMA's partition_C,
  which puts CTA v of the pair on rows [128 v, 128 v + 128) of the 256x256 tile;
- ``phases.sm100.common_tma``'s ``epi_*`` functions, which the kernel calls for the staging buffer,
  the box indices and the bulk-group wait depth, and the phase's frozen config (BN, warps, stages).

``check_epilogue`` follows every accumulator value and returns a list of problems (a value stored
twice, never, or to the wrong place; two warps sharing staging rows; a buffer rewritten while its
store may still read it; a warp outside its TMEM lane quarter). Mutants of the mapping -- a box row,
box column, column part, buffer, lane slice or wait depth off by one, a missing box -- must each
produce some.
"""

import dataclasses
import types

import pytest

cutlass = pytest.importorskip("cutlass")
import cutlass.cute as cute  # noqa: E402
from cutlass.cute.nvgpu import tcgen05  # noqa: E402

from phases.sm100 import common_tma as ct  # noqa: E402
from phases.sm100.phase5_tma_store import Sm100Phase5  # noqa: E402

PHASE5 = Sm100Phase5.Config()
CONFIGS = {
    "pair-8warps": PHASE5,  # the kernel as shipped: 2-CTA pair, 256x256, 8 epilogue warps
    "pair-4warps": dataclasses.replace(PHASE5, epi_warps=4),
    "cta-4warps-bn128": dataclasses.replace(PHASE5, epi_warps=4, bn=128, cluster_m=1),
    "cta-8warps": dataclasses.replace(PHASE5, cluster_m=1),
}


def _affine_origin(t, shape, key):
    """An identity-tensor tile is affine: check its extent and unit strides, return its origin."""
    assert tuple(cute.size(t, mode=[i]) for i in range(len(shape))) == shape, (key, str(t.layout))
    origin = tuple(int(x) for x in t[(0,) * len(shape)])
    last = tuple(int(x) for x in t[tuple(s - 1 for s in shape)])
    assert last == tuple(o + s - 1 for o, s in zip(origin, shape)), (key, str(t.layout))
    return origin


def _trace_maps(cfg, rec: dict):
    """Runs while a @cute.jit traces (plain Python loops over static layouts: nothing is staged)."""
    bm, bn, pair = cfg.bm, cfg.bn, cfg.cluster_m
    part = ct.epi_part_cols(cfg.epi_warps, bn)
    tiled_mma = ct.make_tiled_mma(bm * pair, bn, tcgen05.CtaGroup.TWO if pair == 2 else tcgen05.CtaGroup.ONE)
    cC = cute.make_identity_tensor((bm * pair, bn))
    for v in range(pair):  # CTA v's (BM, BN) of the pair's C tile: the kernel's thr_mma.partition_C
        rec[("cta", v)] = _affine_origin(tiled_mma.get_slice(v).partition_C(cC)[(None, None), 0, 0], (bm, bn), v)
    # the kernel's chunks of the accumulator: local_tile by column part, flat_divide by EPI_CHUNK
    cAcc = cute.make_identity_tensor((bm, bn))
    for p in range(bn // part):
        tAcc_epi = cute.flat_divide(cute.local_tile(cAcc, (bm, part), (0, p)), (bm, ct.EPI_CHUNK))
        for j in range(ct.epi_chunks(cfg.epi_warps, bn)):
            rec[("chunk", p, j)] = _affine_origin(tAcc_epi[None, None, 0, j], (bm, ct.EPI_CHUNK), (p, j))
    # the kernel's tcgen05.ld 32x32b.x32 copy of one chunk; its partition also addresses the staging tile
    atom = cute.make_copy_atom(tcgen05.Ld32x32bOp(tcgen05.Repetition.x32), cutlass.Float32)
    acc = tiled_mma.make_fragment_C(tiled_mma.partition_shape_C((bm * pair, bn)))[(None, None), 0, 0]
    t2r = tcgen05.make_tmem_copy(atom, cute.flat_divide(acc, (bm, ct.EPI_CHUNK))[None, None, 0, 0])
    cChunk = cute.make_identity_tensor((bm, ct.EPI_CHUNK))
    for tid in range(4 * ct.WARP_ROWS):
        d = t2r.get_slice(tid).partition_D(cChunk)
        rec[("t2r", tid)] = [tuple(int(x) for x in d[i]) for i in range(cute.size(d))]
    # EPI_BOX split of a staging tile and of the CTA's C tile (the kernel's flat_divide by EPI_BOX)
    sBox = cute.flat_divide(cChunk, ct.EPI_BOX)
    gBox = cute.flat_divide(cAcc, ct.EPI_BOX)
    for r in range(bm // ct.EPI_BOX[0]):
        rec[("sbox", r)] = _affine_origin(sBox[None, None, r, 0], ct.EPI_BOX, r)
        for c in range(bn // ct.EPI_BOX[1]):
            rec[("gbox", r, c)] = _affine_origin(gBox[None, None, r, c], ct.EPI_BOX, (r, c))


def dsl_maps(cfg) -> dict:
    """Trace (no kernel, no launch, no GPU) the DSL partitions the phase-5 epilogue uses."""
    rec: dict = {}

    @cute.jit
    def probe():
        _trace_maps(cfg, rec)

    cute.compile(probe, options="--gpu-arch sm_100a")
    return rec


def check_epilogue(cfg, dsl: dict, m=ct, inside: tuple | None = None) -> list[str]:
    """Follow every accumulator value through TMEM -> registers -> staging -> box -> C; list the problems.

    ``m`` supplies the kernel's mapping functions and constants (``common_tma`` or a mutant of it).
    ``inside`` = (rows, columns) of the (pair) tile that lie inside C, for a tile that sticks out of C
    (any M; N a multiple of 8): the TMA clips each box store at C's edges, so an element past them is
    not written, and exactly the elements inside must be, once each. None: a whole tile.
    """
    errors: list[str] = []
    bm, bn, pair, warps, stages = cfg.bm, cfg.bn, cfg.cluster_m, cfg.epi_warps, cfg.epi_stages
    box_rows, box_cols = m.EPI_BOX
    written: dict = {}  # C (row, col) of the (pair) tile -> how many box stores wrote it
    writers: dict = {}  # (cta, buffer, staging row) -> the warps that write that staging row
    for v in range(pair):
        row0 = dsl[("cta", v)][0]  # CTA v's first row in the pair tile (the MMA's partition_C)
        for w in range(warps):
            threads = [m.epi_t2r_thread(32 * w + lane) for lane in range(32)]  # how the kernel slices t2r
            if any(("t2r", t) not in dsl for t in threads):
                errors.append(f"warp {w} slices the 128-thread tcgen05.ld copy with threads {threads}")
                continue
            lanes = {row for t in threads for row, _ in dsl[("t2r", t)]}
            if {lane // 32 for lane in lanes} != {w % 4}:  # the hardware's lane-quarter rule
                errors.append(f"warp {w} reads TMEM lanes {sorted(lanes)[:2]}.., outside its quarter {w % 4}")
            in_flight: list[int] = []  # chunks whose bulk group may still be reading staging smem
            for j in range(m.epi_chunks(warps, bn)):
                buf = m.epi_staging_buffer(w, j, stages)
                if j >= stages:  # the kernel's cp.async.bulk.wait_group.read before rewriting a buffer
                    depth = m.epi_store_wait_depth(stages)
                    in_flight = in_flight[len(in_flight) - depth :] if depth else []
                if any(m.epi_staging_buffer(w, jj, stages) == buf for jj in in_flight):
                    errors.append(f"warp {w} chunk {j} rewrites buffer {buf} while its last store may read it")
                if ("chunk", m.epi_col_part(w), j) not in dsl:
                    errors.append(f"warp {w} chunk {j}: column part {m.epi_col_part(w)} is outside BN={bn}")
                    continue
                chunk0 = dsl[("chunk", m.epi_col_part(w), j)]  # the accumulator cell of the chunk's (0, 0)
                boxes = []  # (staging box origin, C box origin) of the boxes this warp stores for chunk j
                for h in range(m.BOXES_PER_WARP):
                    srow, gcol = m.epi_box_row(w, h), m.epi_box_col(w, j, warps, bn)
                    if ("sbox", srow) not in dsl or ("gbox", srow, gcol) not in dsl:
                        errors.append(f"warp {w} chunk {j} stores box ({srow}, {gcol}) outside the tile")
                        continue
                    boxes.append((dsl[("sbox", srow)], dsl[("gbox", srow, gcol)]))
                for t in threads:
                    for r, c in dsl[("t2r", t)]:  # one register: chunk cell (r, c) = staging cell (r, c)
                        acc = (chunk0[0] + r, chunk0[1] + c)  # the accumulator (TMEM lane, column) it holds
                        writers.setdefault((v, buf, r), set()).add(w)
                        dest = [
                            (row0 + go[0] + r - so[0], go[1] + c - so[1])
                            for so, go in boxes
                            if so[0] <= r < so[0] + box_rows and so[1] <= c < so[1] + box_cols
                        ]
                        if len(dest) != 1:
                            errors.append(f"cta {v} warp {w} chunk {j}: staged ({r}, {c}) is stored {len(dest)} times")
                            continue
                        if dest[0] != (row0 + acc[0], acc[1]):
                            errors.append(f"cta {v}: accumulator {acc} lands at C {dest[0]}")
                        written[dest[0]] = written.get(dest[0], 0) + 1
                in_flight.append(j)
    errors += [f"staging row {k} is written by warps {sorted(ws)}" for k, ws in writers.items() if len(ws) > 1]
    rows, cols = inside if inside is not None else (bm * pair, bn)
    clipped = [k for k in written if k[0] >= rows or k[1] >= cols]  # the TMA drops these elements
    for k in clipped:
        del written[k]
    tile = {(r, c) for r in range(min(rows, bm * pair)) for c in range(min(cols, bn))}
    missing, outside = tile - written.keys(), written.keys() - tile
    twice = [k for k, n in written.items() if n > 1]
    if missing:
        errors.append(f"{len(missing)} C elements never stored, e.g. {sorted(missing)[:3]}")
    if outside:
        errors.append(f"{len(outside)} stores outside the tile, e.g. {sorted(outside)[:3]}")
    if twice:
        errors.append(f"{len(twice)} C elements stored more than once, e.g. {sorted(twice)[:3]}")
    return errors


_DSL_CACHE: dict = {}


def _dsl(name):
    if name not in _DSL_CACHE:
        _DSL_CACHE[name] = dsl_maps(CONFIGS[name])
    return _DSL_CACHE[name]


@pytest.mark.parametrize("name", list(CONFIGS))
def test_every_c_element_stored_once(name):
    errors = check_epilogue(CONFIGS[name], _dsl(name))
    assert errors == [], "\n".join(errors[:10])


# (rows, columns) of the pair tile inside C: M or N not a multiple of the tile (phase 5 takes any shape)
PARTIAL = [(256, 200), (200, 256), (100, 8), (128, 96)]


@pytest.mark.parametrize("inside", PARTIAL, ids=lambda rc: f"{rc[0]}x{rc[1]}")
def test_partial_tile_stored_exactly_inside_c(inside):
    """A pair tile that sticks out of C: every element inside C is stored once, none outside (the TMA clips
    boxes at C's edges). With 100 or 128 rows inside, the pair's second CTA lies wholly past M."""
    errors = check_epilogue(PHASE5, _dsl("pair-8warps"), inside=inside)
    assert errors == [], "\n".join(errors[:10])


def test_partial_tile_check_is_not_vacuous():
    """The clip must not hide a misplaced box: boxes shifted down by one row of boxes push the tile's
    last rows past C's edge (clipped there) and leave its first 16 rows unwritten."""
    shifted = _mutant(epi_box_row=lambda w, h: ct.BOXES_PER_WARP * (w % 4) + h + 1)
    assert check_epilogue(PHASE5, _dsl("pair-8warps"), shifted, inside=(200, 256))


def test_pair_halves():
    """Each CTA of the pair owns 128 consecutive rows of the 256x256 tile: rank 0 the top, rank 1 the bottom."""
    dsl = _dsl("pair-8warps")
    assert dsl[("cta", 0)] == (0, 0) and dsl[("cta", 1)] == (PHASE5.bm, 0)


def _mutant(**overrides):
    """common_tma with some mapping functions replaced (what a plausible off-by-one would look like)."""
    ns = types.SimpleNamespace(**{k: getattr(ct, k) for k in dir(ct) if not k.startswith("__")})
    for k, f in overrides.items():
        setattr(ns, k, f)
    return ns


MUTANTS = {
    "box row +1": dict(epi_box_row=lambda w, h: ct.BOXES_PER_WARP * (w % 4) + h + 1),
    "box column +1": dict(epi_box_col=lambda w, j, n, bn: ct.epi_box_col(w, j, n, bn) + 1),
    "box column ignores the part": dict(epi_box_col=lambda w, j, n, bn: j),
    "one box per warp": dict(BOXES_PER_WARP=1),
    "buffer ignores the part": dict(epi_staging_buffer=lambda w, j, s: j % s),
    "wait one group too few": dict(epi_store_wait_depth=lambda s: s),
    "lane slice off by one": dict(epi_t2r_thread=lambda t: (t + 1) % 128),
    "lane slice without mod 128": dict(epi_t2r_thread=lambda t: t),
    "column part off by one": dict(epi_col_part=lambda w: (w + 1) // 4),
}
SAME_WITH_4_WARPS = {"box column ignores the part", "buffer ignores the part", "lane slice without mod 128"}


@pytest.mark.parametrize("mutant", list(MUTANTS))
@pytest.mark.parametrize("name", ["pair-8warps", "cta-4warps-bn128"])
def test_off_by_one_is_caught(name, mutant):
    if mutant in SAME_WITH_4_WARPS and CONFIGS[name].epi_warps == 4:
        pytest.skip("with 4 warps (one column part, threads < 128) this mutant is the real mapping")
    errors = check_epilogue(CONFIGS[name], _dsl(name), _mutant(**MUTANTS[mutant]))
    assert errors, f"mutant {mutant!r} of the phase-5 epilogue mapping was not caught"
