"""The persistent and stream-K schedules (host arithmetic, the same code the kernels run on runtime tile
counts): every cluster tile is computed exactly once, full rounds stay data-parallel, and the split of the
partial last round happens only where it is sound; the grouped raster visits every tile once."""

import dataclasses

import pytest

from cute_gemm.runtime import registry
from cute_gemm.runtime.problem import Problem
from phases.raster import grouped_tile_coord, stream_k_schedule


def _kernel(phase="7", **over):
    e = registry.get("sm90", phase)
    return e.make(dataclasses.replace(e.default_config(), **over))


@pytest.mark.parametrize("p,expect", [
    (Problem(4096, 4096, 4096), (256, 0, 66)),   # 58 leftover tiles: 116 halves do not fit on 66 clusters
    (Problem(3072, 3072, 3072), (132, 12, 66)),  # 2 full rounds + 12 tiles split over 24 clusters
    (Problem(1024, 4096, 4096), (64, 0, 64)),    # one round, nothing left over
    (Problem(512, 256, 768), (0, 2, 4)),         # no full round: every tile split, twice the clusters
    (Problem(2048, 1024, 512), (0, 32, 64)),
    (Problem(3000, 3000, 520), (132, 12, 66)),   # ragged: 12 x 12 partial tiles, 9 k-tiles (odd) -> ...
])
def test_schedule(p, expect):
    k_tiles = -(-p.k // 64)
    if k_tiles % 2:  # an odd number of k-tiles cannot be halved: nothing is split
        expect = (expect[0] + expect[1], 0, min(expect[0] + expect[1], 66))
    assert _kernel().schedule(p.m, p.n, p.k) == expect


@pytest.mark.parametrize("m", [1, 256, 1000, 2048, 3072, 4096, 8192])
@pytest.mark.parametrize("n", [8, 256, 768, 3000, 4096])
@pytest.mark.parametrize("k", [8, 512, 576, 4104])
def test_schedule_invariants(m, n, k):
    kern = _kernel()
    cfg = kern.cfg
    tiles = -(-m // (cfg.bm * cfg.cluster_m)) * -(-n // cfg.bn)
    slots = cfg.sm_count // cfg.cluster_m
    dp, sk, clusters = kern.schedule(m, n, k)
    assert dp + sk == tiles  # every cluster tile once: data-parallel or split
    assert 0 < clusters <= slots  # persistent: never more clusters than the SMs hold
    if sk:
        assert dp % slots == 0  # only the partial last round is split
        assert 2 * sk <= slots and -(-k // cfg.bk) % 2 == 0  # halves fit; both CTAs run equal rings
        assert clusters == (slots if dp else 2 * sk)
    else:
        assert clusters == min(tiles, slots)
    # phase 6 (no split) runs the same data-parallel loop over all tiles
    assert _kernel("6").schedule(m, n, k) == (tiles, min(tiles, slots))


def test_no_pair_no_split():
    assert stream_k_schedule(144, 132, 48, 1 << 30) == (144, 0, 132)


@pytest.mark.parametrize("tiles_m,tiles_n,group_m", [(16, 16, 8), (12, 12, 4), (5, 7, 8), (1, 3, 8), (9, 2, 4)])
def test_grouped_raster_is_a_permutation(tiles_m, tiles_n, group_m):
    seen = [grouped_tile_coord(i, tiles_m, tiles_n, group_m) for i in range(tiles_m * tiles_n)]
    assert sorted(seen) == [(m, n) for m in range(tiles_m) for n in range(tiles_n)]
    # inside a full band, consecutive ids walk M first: group_m rows share each B column window
    if tiles_m >= group_m:
        assert [s[0] for s in seen[:group_m]] == list(range(group_m))
