"""sm90 phase 6's tile schedule (host arithmetic): every cluster tile is computed exactly once, full rounds
stay data-parallel, and the stream-K split of the partial last round happens only where it is sound."""

import dataclasses

import pytest

from cute_gemm import registry
from cute_gemm.problem import Problem


def _kernel(**over):
    e = registry.get("sm90", "6")
    return e.make(dataclasses.replace(e.default_config(), **over))


@pytest.mark.parametrize("p,expect", [
    (Problem(4096, 4096, 4096), (256, 0, 66)),   # 58 leftover tiles: 116 halves do not fit on 66 clusters
    (Problem(3072, 3072, 3072), (132, 12, 66)),  # 2 full rounds + 12 tiles split over 24 clusters
    (Problem(1024, 4096, 4096), (64, 0, 64)),    # one round, nothing left over
    (Problem(512, 256, 768), (0, 2, 4)),         # no full round: every tile split, twice the clusters
    (Problem(2048, 1024, 512), (0, 32, 64)),
])
def test_schedule(p, expect):
    assert _kernel().schedule(p.m, p.n, p.k) == expect


@pytest.mark.parametrize("m", [256, 512, 1024, 2048, 3072, 4096, 8192])
@pytest.mark.parametrize("n", [256, 768, 2048, 4096])
@pytest.mark.parametrize("k", [512, 576, 4096])
def test_schedule_invariants(m, n, k):
    kern = _kernel()
    cfg = kern.cfg
    tiles = (m // (cfg.bm * cfg.cluster_m)) * (n // cfg.bn)
    slots = cfg.sm_count // cfg.cluster_m
    dp, sk, clusters = kern.schedule(m, n, k)
    assert dp + sk == tiles  # every cluster tile once: data-parallel or split
    assert 0 < clusters <= slots  # persistent: never more clusters than the SMs hold
    if sk:
        assert dp % slots == 0  # only the partial last round is split
        assert 2 * sk <= slots and (k // cfg.bk) % 2 == 0  # halves fit; both CTAs run equal rings
        assert clusters == (slots if dp else 2 * sk)
    off = _kernel(stream_k=False).schedule(m, n, k)
    assert off == (tiles, 0, min(tiles, slots))
