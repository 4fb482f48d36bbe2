"""sm100 phase 9 (split-K in a cluster), CPU only.

- it compiles for sm_100a and sm_103a with the split's PTX: a cluster launch of split_k CTAs, phase 3's
  cta_group::1 MMA, ``barrier.cluster`` arrive/wait around the reduce, ``mapa`` + ``ld.shared::cluster``
  reading every rank's partial tile, ``st.global`` of C; split_k=1 launches no cluster;
- the host arithmetic: tiles, the grid (split_k CTAs per tile), the shapes it takes;
- every guard refuses, at compile time and with its reason, the config it is there for.
The PTX machine (tests/test_sm100_sim.py) runs it at split_k 2 and 4 over several clusters, K not a
multiple of the k-tile, a bf16 x @ W.T.
"""

import dataclasses
import re

import pytest

from cute_gemm.runtime import registry
from cute_gemm.runtime.compile import compile_kernel
from cute_gemm.runtime.problem import Problem
from phases.raster import ceil_div
from phases.sm100.phase9_split_k import Sm100Phase9
from sm100_compiled import compiled

TARGETS = ("sm_100a", "sm_103a")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("phase", ["9"])
def test_signature(phase, target):
    kern, ptx = compiled(f"sm100:{phase}", target)
    assert ".reqnctapercluster 2, 1, 1" in ptx and kern.attributes()["cluster"] == (2, 1, 1)
    assert re.search(r"tcgen05\.mma\.cta_group::1\b", ptx) and "cta_group::2" not in ptx
    # two cluster barriers: the partial tiles are written; nobody still reads a peer's smem
    arrives, waits = (len(re.findall(rf"\bbarrier\.cluster\.{x}\b", ptx)) for x in ("arrive", "wait"))
    assert arrives == waits == 2
    assert re.search(r"\bmapa\.shared::cluster", ptx) and re.search(r"\bld\.shared::cluster\.v4\.f32", ptx)
    assert re.search(r"\bst\.global\.v4\.(?:b32|f32)", ptx) and "cp.async.bulk.tensor.2d.global" not in ptx
    assert "griddepcontrol" not in ptx  # use_pdl is off by default


@pytest.mark.parametrize("split_k", [1, 4])
def test_split_k_is_the_cluster(split_k):
    """split_k=1 is a plain launch (no cluster directive) through the same reduce; split_k=4 a cluster of 4."""
    cfg = dataclasses.replace(Sm100Phase9.Config(), split_k=split_k)
    kern, ptx = compiled("sm100:9", "sm_100a", cfg)
    assert kern.attributes()["cluster"] == (split_k, 1, 1)
    assert (".reqnctapercluster" in ptx) == (split_k > 1)
    assert registry.get("sm100", "9").cluster_ctas(cfg) == split_k


PROBLEMS = [Problem(4096, 4096, 4096), Problem(1000, 264, 520), Problem(1, 8, 8), Problem(512, 512, 512),
            Problem(16, 4096, 4096), Problem(200, 136, 64)]


@pytest.mark.parametrize("p", PROBLEMS, ids=str)
def test_phase9_host_arithmetic(p):
    k9 = Sm100Phase9()
    assert k9.tiles(p.m, p.n, p.k) == ceil_div(p.m, 128) * ceil_div(p.n, 128)
    assert k9.grid(p.m, p.n, p.k) == (k9.tiles(p.m, p.n, p.k) * 2, 1, 1)
    assert k9.can_implement(p.m, p.n, p.k) == []


@pytest.mark.parametrize("key,over,message", [
    ("sm100:9", {"bm": 64}, "bm is 128"),
    ("sm100:9", {"bn": 136}, "bn is a multiple of 16"),
    ("sm100:9", {"bn": 272}, "bn is a multiple of 16"),
    ("sm100:9", {"split_k": 9}, r"split_k is 1\.\.8"),
    ("sm100:9", {"split_k": 0}, r"split_k is 1\.\.8"),
    ("sm100:9", {"epi_warps": 8}, "4 epilogue warps"),
    ("sm100:9", {"ctas_per_sm": 2}, r"hold 1 CTA\(s\) per SM, not ctas_per_sm=2"),
    ("sm100:9", {"stages": 2}, "the fp32 partial tile must fit in the A/B ring"),
    ("sm100:9", {"split_k": 3}, "128 lines must split evenly over split_k=3"),
])
def test_configs_a_phase_cannot_run_are_refused_at_compile(key, over, message):
    e = registry.resolve(key, "sm100")
    kern = e.make(dataclasses.replace(e.default_config(), **over))
    with pytest.raises(AssertionError, match=message):
        compile_kernel(kern, "sm_100a")
