"""sm100 phases 9 (split-K in a cluster) and 10 (swap-AB for few tokens), CPU only.

- they compile for sm_100a and sm_103a with the split's PTX: a cluster launch of split_k CTAs, phase 3's
  cta_group::1 MMA, ``barrier.cluster`` arrive/wait around the reduce, ``mapa`` + ``ld.shared::cluster``
  reading every rank's partial tile, ``st.global`` of C; phase 10 also ``griddepcontrol`` (programmatic
  dependent launch) and an m128n16 MMA whose A is the weights; split_k=1 launches no cluster;
- the host arithmetic: tiles, the grid (split_k CTAs per tile), phase 10's problem (M, N, K), grid and
  tiles in swapped coordinates, the shapes they take;
- every guard refuses, at compile time and with its reason, the config it is there for.
The PTX machine (tests/test_sm100_sim.py) runs both: split_k 2 and 4, M=1 tokens, K not a multiple of
the k-tile, ranks with an empty K range, a bf16 x @ W.T.
"""

import dataclasses
import re

import pytest

from cute_gemm.runtime import registry
from cute_gemm.runtime.compile import compile_kernel
from cute_gemm.runtime.problem import Problem
from phases.raster import ceil_div
from phases.sm100.phase9_split_k import Sm100Phase9
from phases.sm100.phase10_swap_ab import Sm100Phase10
from ptxkit.isa import decode_idesc
from sm100_compiled import compiled

TARGETS = ("sm_100a", "sm_103a")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("phase", ["9", "10"])
def test_signature(phase, target):
    kern, ptx = compiled(f"sm100:{phase}", target)
    assert ".reqnctapercluster 2, 1, 1" in ptx and kern.attributes()["cluster"] == (2, 1, 1)
    assert re.search(r"tcgen05\.mma\.cta_group::1\b", ptx) and "cta_group::2" not in ptx
    # two cluster barriers: the partial tiles are written; nobody still reads a peer's smem
    arrives, waits = (len(re.findall(rf"\bbarrier\.cluster\.{x}\b", ptx)) for x in ("arrive", "wait"))
    assert arrives == waits == 2
    assert re.search(r"\bmapa\.shared::cluster", ptx) and re.search(r"\bld\.shared::cluster\.v4\.f32", ptx)
    assert re.search(r"\bst\.global\.v4\.(?:b32|f32)", ptx) and "cp.async.bulk.tensor.2d.global" not in ptx
    pdl = ["griddepcontrol.wait", "griddepcontrol.launch_dependents"]
    assert all(x in ptx for x in pdl) == (phase == "10") and any(x in ptx for x in pdl) == (phase == "10")


def test_phase10_puts_the_tokens_on_the_mma_n():
    """Phase 10's MMA is m128n16k16 (idesc M=128, N=16) and its A the weights: a row-major B seen as B^T is
    M-major (transpose-A), the row-major A of the tokens is its K-major B."""
    kern, ptx = compiled("sm100:10")
    descs = {decode_idesc(int(v)) for v in re.findall(r"\b(\d{8,10})\b", ptx) if int(v) < 2**32}
    descs = [d for d in descs if d.reserved_ok and d.dtype == 1 and d.m == 128 and not (d.negate_a or d.negate_b)]
    assert descs and all((d.n, d.transpose_a, d.transpose_b) == (16, True, False) for d in descs), descs
    assert kern.attributes()["tmem_cols"] == 32


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


@pytest.mark.parametrize("p", PROBLEMS, ids=str)
def test_phase10_host_arithmetic(p):
    """128 weight rows (of N) x 16 tokens (of M) per tile of C^T, split_k CTAs per tile."""
    k10 = Sm100Phase10()
    assert k10.tiles(p.m, p.n, p.k) == ceil_div(p.n, 128) * ceil_div(p.m, 16)
    assert k10.grid(p.m, p.n, p.k) == (ceil_div(p.n, 128) * ceil_div(p.m, 16) * 2, 1, 1)
    assert k10.can_implement(p.m, p.n, p.k) == []


def test_phase10_problem_is_read_in_swapped_coordinates():
    """The compile face passes B^T (N, K), A (M, K) and C^T (N, M): the problem's M is C^T's columns."""
    t = lambda *shape: type("T", (), {"shape": shape})()  # noqa: E731
    assert Sm100Phase10.problem_mnk(t(4096, 520), t(4096, 7)) == (7, 4096, 520)
    assert Sm100Phase9.problem_mnk(t(7, 520), t(7, 4096)) == (7, 4096, 520)
    assert Sm100Phase10.swap_ab and not getattr(Sm100Phase9, "swap_ab", False)
    assert Sm100Phase10().can_implement(1, 4096, 4096) == []  # one token
    assert Sm100Phase10().can_implement(1, 4100, 4096), "N is C's row length: a multiple of 8"


@pytest.mark.parametrize("key,over,message", [
    ("sm100:9", {"bm": 64}, "bm is 128"),
    ("sm100:10", {"bm": 64}, "bm is 128"),
    ("sm100:9", {"bn": 136}, "bn is a multiple of 16"),
    ("sm100:10", {"bn": 8}, "bn is a multiple of 16"),
    ("sm100:10", {"bn": 272}, "bn is a multiple of 16"),
    ("sm100:9", {"split_k": 9}, r"split_k is 1\.\.8"),
    ("sm100:10", {"split_k": 0}, r"split_k is 1\.\.8"),
    ("sm100:9", {"epi_warps": 8}, "4 epilogue warps"),
    ("sm100:9", {"ctas_per_sm": 2}, r"hold 1 CTA\(s\) per SM, not ctas_per_sm=2"),
    ("sm100:9", {"stages": 2}, "the fp32 partial tile must fit in the A/B ring"),
    ("sm100:9", {"split_k": 3}, "128 lines must split evenly over split_k=3"),
    ("sm100:10", {"split_k": 3}, "16 lines must split evenly over split_k=3"),  # C^T: the token lines
])
def test_configs_a_phase_cannot_run_are_refused_at_compile(key, over, message):
    e = registry.resolve(key, "sm100")
    kern = e.make(dataclasses.replace(e.default_config(), **over))
    with pytest.raises(AssertionError, match=message):
        compile_kernel(kern, "sm_100a")
