"""sm100 phase 6 (persistent pairs, double-buffered TMEM accumulator, grouped raster), CPU only.

- it compiles for sm_100a and sm_103a with everything phase 5's PTX shows (cta_group::2 MMA, multicast
  commits, bulk tensor loads and stores, cluster launch), no spills, smem <= 227 KiB;
- it is persistent: grid_ctas <= sm_count < pair tiles at 4096^3, and the PTX computes the cluster
  count at run time as min(pair tiles, sm_count / 2) (one compile serves every shape);
- TMEM holds 2 accumulator stages of 256 columns each (all 512), as the DSL's own fragment says;
- the grouped raster visits every pair tile exactly once over clusters x rounds;
- the epilogue still stores every C element of a tile exactly once (phase 5's coverage check on this
  config), and the staging buffers are never rewritten while a previous tile's store may read them.
"""

import dataclasses
import re
from functools import lru_cache

import pytest

cutlass = pytest.importorskip("cutlass")
import cutlass.cute as cute  # noqa: E402
from cutlass.cute.nvgpu import tcgen05  # noqa: E402

from cute_gemm.runtime import registry  # noqa: E402
from cute_gemm.profiling.codegen import inspect_phase  # noqa: E402
from cute_gemm.runtime.problem import Problem  # noqa: E402
from phases.sm100 import common  # noqa: E402
from phases.sm100 import common_tma as ct  # noqa: E402
from phases.raster import ceil_div, persistent_clusters  # noqa: E402
from phases.raster import grouped_tile_coord as grouped_pair_tile  # noqa: E402
from phases.sm100.phase6_persistent import Sm100Phase6  # noqa: E402

# phase 5's coverage check (tests/ is on sys.path under pytest: it is not a package)
from test_sm100_epilogue_coverage import check_epilogue, dsl_maps  # noqa: E402

TARGETS = ("sm_100a", "sm_103a")
BIG, SKINNY, SMALL = Problem(4096, 4096, 4096), Problem(1024, 4096, 4096), Problem(512, 256, 768)
RAGGED = Problem(1000, 3000, 520)
SMEM_LIMIT = 227 * 1024
CFG = Sm100Phase6.Config()

# phase 5's signature (tests/test_compile_signatures.py) plus nothing it lacks
PRESENT = ["bulk tensor load", "mbarrier complete_tx", "tcgen05.mma cta_group::2", "tcgen05.commit multicast",
           "multicast::cluster", "cluster launch", "bulk tensor store", "fence.proxy.async.shared::cta", "tcgen05.ld"]
ABSENT = ["cp.async.cg (16 B)", "tcgen05.mma cta_group::1", "wgmma.mma_async"]


@lru_cache(maxsize=None)
def _inspect(target, shape):
    return inspect_phase(registry.get("sm100", "6"), target, shape)


@pytest.mark.parametrize("target", TARGETS)
def test_signature_and_resources(target):
    ins = _inspect(target, BIG)
    for name in PRESENT:
        assert ins.census[name] > 0, f"sm100:6 for {target}: expected {name} in the PTX"
    for name in ABSENT:
        assert ins.census[name] == 0, f"sm100:6 for {target}: {name} must not appear"
    assert ins.spill_bytes == 0 and ins.stack_bytes == 0, f"spills/stack {ins.spill_bytes}/{ins.stack_bytes}"
    assert ins.registers is not None and ins.registers <= 255
    assert 0 < ins.smem_bytes <= SMEM_LIMIT, f"smem {ins.smem_bytes}"
    assert ins.threads == 32 * (CFG.epi_warps + 2)
    assert ins.cluster == 2


@pytest.mark.parametrize("target", TARGETS)
def test_persistent_grid(target):
    """At 4096^3 there are more pair tiles than SMs: the grid stops at sm_count. The kernel computes the
    same cluster count from its runtime extents: min(pair tiles, sm_count / 2) is in the PTX."""
    ins = _inspect(target, BIG)
    pair_tiles = (BIG.m // 256) * (BIG.n // 256)
    sm_count = ins.config["sm_count"]
    assert ins.grid_ctas <= sm_count < pair_tiles
    assert ins.grid_ctas == min(pair_tiles, sm_count // 2) * 2 and ins.grid_ctas % ins.cluster == 0
    assert re.search(rf"min\.s32\s+%r\d+, %r\d+, {sm_count // 2};", ins.ptx), "no runtime cluster count"


@pytest.mark.parametrize("shape,pairs", [(SKINNY, 64), (SMALL, 2), (RAGGED, 4 * 12), (Problem(1, 8, 8), 1)], ids=str)
def test_grid_of_small_and_ragged_problems(shape, pairs):
    """Fewer pair tiles than SM pairs: one cluster per pair tile, a partial tile counted as a tile."""
    kern = Sm100Phase6()
    assert kern.can_implement(shape.m, shape.n, shape.k) == []
    assert kern.grid(shape.m, shape.n, shape.k) == (2 * pairs, 1, 1)


@pytest.mark.parametrize("target", TARGETS)
def test_two_accumulator_stages(target):
    ins = _inspect(target, BIG)
    assert ins.config["acc_stages"] >= 2, "the epilogue of tile i must overlap the MMAs of tile i+1"
    assert ins.tmem_cols == ins.config["acc_stages"] * common.tmem_cols_for(ins.config["bn"]) == 512


def _acc_fragment_probe(cfg, rec):
    tiled_mma = ct.make_tiled_mma(cfg.bm * cfg.cluster_m, cfg.bn, tcgen05.CtaGroup.TWO)
    shape = tiled_mma.partition_shape_C((cfg.bm * cfg.cluster_m, cfg.bn))
    staged = tiled_mma.make_fragment_C(cute.append(shape, cfg.acc_stages))
    rec["stage_stride"] = staged.layout.stride[-1]
    rec["cols"] = cutlass.memory.get_num_tmem_alloc_cols(staged)


def test_accumulator_stage_is_256_columns():
    """The kernel's staged accumulator fragment: stage s starts 256 TMEM columns after stage s-1 (the
    CTA's 128 rows x BN=256 fp32 of the pair's tile), and the DSL sizes both stages at 512 columns."""
    rec = {}

    @cute.jit
    def probe():
        _acc_fragment_probe(CFG, rec)

    cute.compile(probe, options="--gpu-arch sm_100a")
    assert rec["stage_stride"] == CFG.bn == 256
    assert rec["cols"] == 512


@pytest.mark.parametrize("m,n", [(4096, 4096), (1024, 4096), (512, 256), (3072, 1280), (8192, 2048), (1000, 3000)])
def test_grouped_raster_covers_every_tile_once(m, n):
    pair_tiles_m, tiles_n = ceil_div(m, 256), ceil_div(n, 256)
    pair_tiles, clusters = Sm100Phase6().schedule(m, n, 64)
    seen = {}
    for cluster in range(clusters):
        for tile in range(cluster, pair_tiles, clusters):  # the kernel's persistent loop
            coord = grouped_pair_tile(tile, pair_tiles_m, tiles_n, CFG.group_m)
            assert 0 <= coord[0] < pair_tiles_m and 0 <= coord[1] < tiles_n, coord
            seen[coord] = seen.get(coord, 0) + 1
    assert len(seen) == pair_tiles and set(seen.values()) == {1}


def test_first_round_footprint():
    """The docstring's raster numbers at 4096^3: the 74 clusters of one round cover 8 pair rows x 10 N
    tiles (phase 5's M-first order would be 16 x 5)."""
    _, clusters = Sm100Phase6().schedule(4096, 4096, 4096)
    first = {grouped_pair_tile(t, 16, 16, CFG.group_m) for t in range(clusters)}
    assert clusters == 74 == persistent_clusters(256, CFG.sm_count // 2)
    assert len({mp for mp, _ in first}) == 8 and len({nt for _, nt in first}) == 10


def test_epilogue_stores_every_c_element_once():
    """One tile's epilogue mapping is phase 5's (the same ``epi_*`` functions): check it on this config."""
    errors = check_epilogue(CFG, dsl_maps(CFG))
    assert errors == [], "\n".join(errors[:10])


def staging_hazards(cfg, tiles: int, wait_every_chunk: bool = True) -> list[str]:
    """Follow one warp's staging buffers over ``tiles`` consecutive tiles: before each chunk's st.shared
    the kernel waits until at most ``epi_store_wait_depth`` bulk groups are pending (phase 6: at every
    chunk; phase 5: only from chunk ``epi_stages`` on, which is enough for a single tile)."""
    errors = []
    chunks, stages = ct.epi_chunks(cfg.epi_warps, cfg.bn), cfg.epi_stages
    depth = ct.epi_store_wait_depth(stages)
    for w in range(cfg.epi_warps):
        in_flight: list[int] = []  # buffers whose bulk group may still be reading
        for t in range(tiles):
            for j in range(chunks):
                if wait_every_chunk or j >= stages:
                    in_flight = in_flight[len(in_flight) - depth :] if depth else []
                buf = ct.epi_staging_buffer(w, j, stages)
                if buf in in_flight:
                    errors.append(f"warp {w} tile {t} chunk {j} rewrites buffer {buf} while a store may read it")
                in_flight.append(buf)
    return errors


def test_staging_buffers_safe_across_tiles():
    assert ct.epi_chunks(CFG.epi_warps, CFG.bn) % CFG.epi_stages == 0, "chunk j must use the same buffer every tile"
    assert staging_hazards(CFG, tiles=4) == []
    # phase 5's wait rule (none for the first epi_stages chunks) is safe for one tile but not across tiles
    assert staging_hazards(CFG, tiles=1, wait_every_chunk=False) == []
    assert staging_hazards(CFG, tiles=2, wait_every_chunk=False), "the cross-tile hazard was not detected"


def test_can_implement():
    k = Sm100Phase6()
    for shape in (BIG, SMALL, RAGGED, Problem(128, 256, 256), Problem(256, 128, 8)):
        assert k.can_implement(shape.m, shape.n, shape.k) == [], shape
    assert k.can_implement(256, 260, 256), "N must be a multiple of 8 (16-B TMA rows)"
    assert k.can_implement(256, 256, 12), "K must be a multiple of 8 (16-B TMA rows)"
    assert k.schedule(4096, 4096, 4096) == (256, 74)
    assert Sm100Phase6(dataclasses.replace(CFG, sm_count=160)).schedule(4096, 4096, 4096) == (256, 80)  # B300


@pytest.mark.parametrize("sm_count", range(2, 201, 2), ids=lambda s: f"sm{s}")
def test_every_tile_once_over_sm_counts(sm_count):
    """Phase 6's persistent loop for every SM count a GPU may give (2 x the pairs that fit: odd numbers of
    clusters included), group_m 1, 3 and 8, as the launched grid runs it: every pair tile exactly once, by a
    cluster of the grid, and the grid is whole pairs on at most sm_count SMs."""
    for group_m in (1, 3, 8):
        kern = Sm100Phase6(dataclasses.replace(CFG, sm_count=sm_count, group_m=group_m))
        assert kern.config_problems() == []
        for m, n in [(256, 256), (1000, 264), (2048, 1280), (3000, 3000), (4096, 4096), (8192, 1024), (1, 8)]:
            pair_tiles_m, tiles_n = ceil_div(m, 256), ceil_div(n, 256)
            pair_tiles, clusters = kern.schedule(m, n, 64)
            assert kern.grid(m, n, 64) == (2 * clusters, 1, 1) and 0 < 2 * clusters <= sm_count
            seen = {}
            for cluster in range(clusters):
                for tile in range(cluster, pair_tiles, clusters):
                    coord = grouped_pair_tile(tile, pair_tiles_m, tiles_n, group_m)
                    seen[coord] = seen.get(coord, 0) + 1
            assert set(seen) == {(mp, nt) for mp in range(pair_tiles_m) for nt in range(tiles_n)}
            assert set(seen.values()) == {1}
