"""sm100 phase 7 (phase 6 + stream-K across the two pairs of a 4-CTA cluster), CPU only.

- it compiles for sm_100a and sm_103a with everything of phase 6's PTX plus the exchange: a 4-CTA
  cluster, st.async into the other pair's smem counted on its mbarrier, remote mbarrier arrivals;
- the schedule: every pair tile is computed once, data-parallel or as two K halves in one cluster,
  and only the partial last round is split, when its halves fit on the pair slots;
- the exchange's mailbox fits in the A/B ring and the launch grid is whole clusters.
The simulator (tests/test_sm100_sim.py) runs the kernel, split tiles included.
"""

import dataclasses
import re

import pytest

from cute_gemm.runtime.problem import Problem
from phases.raster import ceil_div
from phases.raster import grouped_tile_coord as grouped_pair_tile
from phases.sm100.phase6_persistent import Sm100Phase6
from phases.sm100.phase7_stream_k import Sm100Phase7
from sm100_compiled import compiled

TARGETS = ("sm_100a", "sm_103a")
CFG = Sm100Phase7.Config()


@pytest.mark.parametrize("target", TARGETS)
def test_signature(target):
    kern, ptx = compiled("sm100:7", target)
    _, ptx6 = compiled("sm100:6", target)
    assert ".reqnctapercluster 4, 1, 1" in ptx and ".reqnctapercluster 2, 1, 1" in ptx6
    for rx in (r"tcgen05\.mma\.cta_group::2", r"tcgen05\.commit\.cta_group::2[^;]*multicast::cluster",
               r"cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global",
               r"cp\.async\.bulk\.tensor\.2d\.global\.shared::cta", r"tcgen05\.ld\.sync\.aligned\.32x32b\.x32"):
        assert re.search(rx, ptx) and re.search(rx, ptx6), rx
    # the split: st.async into the peer pair's smem, completing on its mbarrier; remote arrivals
    assert re.search(r"st\.async\.shared::cluster\.mbarrier::complete_tx::bytes\.v4\.b32", ptx)
    assert re.search(r"mbarrier\.arrive\.release\.cluster\.shared::cluster\.b64", ptx)  # remote, cluster scope
    assert "st.async" not in ptx6
    assert kern.attributes()["cluster"] == (4, 1, 1)
    assert kern.attributes()["tmem_cols"] == 512


@pytest.mark.parametrize("p,expect", [
    (Problem(4096, 4096, 4096), (222, 34, 74)),  # 3 rounds + 34 tiles split over 68 pairs
    (Problem(1024, 4096, 4096), (64, 0, 64)),  # one partial round: 128 halves do not fit on 74 pairs
    (Problem(3072, 3072, 3072), (144, 0, 74)),  # 70 leftover tiles: 140 halves do not fit
    (Problem(512, 256, 768), (0, 2, 4)),  # no full round: every tile split, twice the pairs
    (Problem(1000, 3000, 520), (48, 0, 48)),  # ragged: partial tiles count as tiles
    (Problem(5120, 4096, 512), (296, 24, 74)),  # 320 tiles: 4 rounds + 24 split
    (Problem(5120, 4096, 520), (320, 0, 74)),  # 17 k-tiles: odd, so nothing is split
], ids=str)
def test_schedule(p, expect):
    kern = Sm100Phase7()
    dp, sk, slots = kern.schedule(p.m, p.n, p.k)
    assert (dp, sk, slots) == expect
    assert kern.grid(p.m, p.n, p.k) == (ceil_div(slots, CFG.pairs) * 4, 1, 1)


@pytest.mark.parametrize("m", [256, 1000, 2048, 4096, 8192])
@pytest.mark.parametrize("n", [256, 1280, 4096])
@pytest.mark.parametrize("k", [64, 72, 4096])
def test_every_tile_once_and_every_k_tile_once(m, n, k):
    """Follow the kernel's schedule on the host: data-parallel tiles go round-robin over the pair slots,
    split tile u to cluster u, pair q doing k-tiles [q K/2, (q+1) K/2). Every pair tile's every k-tile is
    computed exactly once, by one pair, and the two halves of a split tile share a cluster."""
    kern = Sm100Phase7()
    c = kern.cfg
    tiles = ceil_div(m, 256) * ceil_div(n, 256)
    k_tiles = ceil_div(k, c.bk)
    dp, sk, slots = kern.schedule(m, n, k)
    clusters = kern.grid(m, n, k)[0] // 4
    assert dp + sk == tiles and 0 < slots <= c.sm_count // 2 and clusters * 4 <= c.sm_count
    done = {}
    for cluster in range(clusters):
        for q in range(c.pairs):
            slot = cluster * c.pairs + q
            for t in range(slot, dp, slots):  # the kernel's data-parallel loop
                for kt in range(k_tiles):
                    done.setdefault((t, kt), []).append((cluster, q))
            if cluster < sk:
                half = k_tiles // c.pairs
                for kt in range(q * half, (q + 1) * half):
                    done.setdefault((dp + cluster, kt), []).append((cluster, q))
    assert set(done) == {(t, kt) for t in range(tiles) for kt in range(k_tiles)}
    assert all(len(v) == 1 for v in done.values())
    if sk:
        assert dp % slots == 0, "only the partial last round is split"
        assert 2 * sk <= slots and k_tiles % 2 == 0


def test_split_shortens_the_busiest_pair():
    """At 4096^3 on 148 SMs phase 6's busiest pair runs 4 tiles; phase 7's runs 3 tiles + one half."""
    p = Problem(4096, 4096, 4096)
    tiles, clusters6 = Sm100Phase6().schedule(p.m, p.n, p.k)
    assert -(-tiles // clusters6) == 4
    dp, sk, slots = Sm100Phase7().schedule(p.m, p.n, p.k)
    assert dp // slots == 3 and sk > 0


def test_mailbox_and_config():
    kern, _ = compiled("sm100:7")
    assert kern.mailbox_bytes == 128 * 128 * 4  # one column part of the CTA's 128 rows, fp32
    assert kern.can_implement(4096, 4096, 4096) == [] and kern.can_implement(1, 8, 8) == []
    odd = Sm100Phase7(dataclasses.replace(CFG, sm_count=150))
    assert any("multiple of 4" in w for w in odd.can_implement(4096, 4096, 4096))


SHAPES = [(256, 256), (1000, 264), (2048, 1280), (3000, 3000), (4096, 4096), (8192, 1024), (1, 8)]


@pytest.mark.parametrize("sm_count", range(4, 201, 4), ids=lambda s: f"sm{s}")
def test_every_tile_and_k_tile_once_over_sm_counts(sm_count):
    """The schedule as the launched grid runs it, for every SM count a GPU may give (4 x the clusters of 4
    that fit: an odd number of clusters too, and a B200's 148, a B300's 160), group_m 1, 3 and 8: every
    cluster of the grid, both pairs, the idle second pair of the last cluster when an odd number of pair
    slots is used. Every pair tile's every k-tile is computed exactly once, by a pair of a launched
    cluster, never by a pair beyond the slots, and the grid is whole clusters on at most sm_count SMs."""
    for group_m in (1, 3, 8):
        kern = Sm100Phase7(dataclasses.replace(CFG, sm_count=sm_count, group_m=group_m))
        assert kern.config_problems() == []
        for m, n in SHAPES:
            for k in (64, 96):  # 2 k-tiles (the partial round may split) and 3 (it may not)
                tiles_m, tiles_n = ceil_div(m, 256), ceil_div(n, 256)
                k_tiles = ceil_div(k, CFG.bk)
                dp, sk, slots = kern.schedule(m, n, k)
                grid = kern.grid(m, n, k)[0]
                assert grid % 4 == 0 and 0 < grid <= sm_count, (m, n, k, grid)
                done = {}
                for cluster in range(grid // 4):
                    for q in range(2):
                        slot = 2 * cluster + q
                        for t in range(slot, dp, slots):  # the kernel's data-parallel loop
                            assert slot < slots, f"pair slot {slot} of {slots} takes tile {t}"
                            for kt in range(k_tiles):
                                done.setdefault((grouped_pair_tile(t, tiles_m, tiles_n, group_m), kt), []).append(slot)
                        if cluster < sk:  # split tile dp + cluster: pair q its K half q
                            tile = grouped_pair_tile(dp + cluster, tiles_m, tiles_n, group_m)
                            for kt in range(q * (k_tiles // 2), (q + 1) * (k_tiles // 2)):
                                done.setdefault((tile, kt), []).append(slot)
                want = {((mp, nt), kt) for mp in range(tiles_m) for nt in range(tiles_n) for kt in range(k_tiles)}
                assert set(done) == want, (m, n, k)
                assert all(len(v) == 1 for v in done.values()), (m, n, k)
