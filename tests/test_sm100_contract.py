"""The sm100 ladder under the kernel contract (phases/base.py), on the host: which shapes each phase takes,
the launch grid of ragged shapes, and the attributes a compile fills in. CPU only.

One compile per (target, phase, config) serves every M, N, K: phases 0-1 (cp.async, unpredicated) take
tile multiples; every TMA phase takes any M with N, K multiples of 8.
"""

from functools import lru_cache

import pytest

from cute_gemm.runtime import registry
from cute_gemm.runtime.compile import compile_kernel
from cute_gemm.runtime.problem import Problem
from phases.base import ROW_ALIGN
from phases.operands import Operands

RAGGED = Problem(1000, 3000, 520)  # M, N, K none a tile multiple (N, K multiples of 8)
TINY = Problem(1, 8, 8)
ENTRIES = registry.all_entries("sm100")
TMA_PHASES = [e for e in ENTRIES if e.phase not in ("0", "1")]


def _ceil(a, b):
    return -(-a // b)


def test_the_ladder_is_registered():
    assert [e.phase for e in ENTRIES] == ["0", "1", "2a", "2b", "3", "4", "5", "6", "7", "9", "10", "11"]


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.key)
def test_shape_rule(entry):
    kern = entry.make()
    c = kern.cfg
    if entry.phase in ("0", "1"):
        assert not kern.ragged and kern.divisibility() == (c.tile_m(), c.bn, c.bk)
        why = kern.can_implement(RAGGED.m, RAGGED.n, RAGGED.k)
        assert any("M=1000 is not a multiple of 128" in w for w in why), why
        assert kern.can_implement(4096, 4096, 4096) == []
    else:
        assert kern.ragged and kern.divisibility() == (1, ROW_ALIGN, ROW_ALIGN)
        for p in (RAGGED, TINY, Problem(4096, 4096, 4096), Problem(257, 264, 40)):
            assert kern.can_implement(p.m, p.n, p.k) == [], (entry.key, p)
        assert kern.can_implement(1000, 3004, 520), "N must be a multiple of 8"
        assert kern.can_implement(1000, 3000, 524), "K must be a multiple of 8"
    assert kern.can_implement(0, 8, 8), "empty problems are the caller's"


@pytest.mark.parametrize("entry", [e for e in TMA_PHASES if e.phase in ("2a", "2b", "3", "4", "5")],
                         ids=lambda e: e.key)
@pytest.mark.parametrize("p", [RAGGED, TINY, Problem(4096, 4096, 4096), Problem(257, 264, 40)], ids=str)
def test_grid_covers_every_tile_of_a_ragged_problem(entry, p):
    """One CTA per (BM x BN) tile, partial tiles included; a pair phase launches two CTAs per 256-row pair
    tile, so the second CTA of the last pair may lie wholly past M."""
    kern = entry.make()
    c = kern.cfg
    rows = c.bm * c.cluster_m
    assert kern.grid(p.m, p.n, p.k) == (_ceil(p.m, rows) * c.cluster_m, _ceil(p.n, c.bn), 1)


@lru_cache(maxsize=None)
def _compiled(key: str, target: str):
    e = registry.resolve(key, "sm100")
    kern = e.make()
    compile_kernel(kern, target)
    return kern


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.key)
def test_attributes_after_the_compile(entry):
    """What the harness reads is filled by _setup_attributes while tracing: threads, dynamic smem, a
    3-tuple cluster and the TMEM columns (a power of two, at least 32, at most 512)."""
    kern = _compiled(entry.key, "sm_100a")
    attrs = kern.attributes()
    c = kern.cfg
    # phase 7: two pairs per cluster; phases 9-10: split_k CTAs
    ctas = c.cluster_m * getattr(c, "pairs", 1) * getattr(c, "split_k", 1)
    assert attrs["cluster"] == (entry.cluster_ctas(), 1, 1) == (ctas, 1, 1)
    assert attrs["threads"] % 32 == 0 and 128 <= attrs["threads"] <= 1024
    assert 0 < attrs["smem_bytes"] <= 227 * 1024
    cols = attrs["tmem_cols"]
    assert 32 <= cols <= 512 and cols & (cols - 1) == 0


@pytest.mark.parametrize("phase", ["0", "1"])
def test_cp_async_phases_take_the_worklog_operands_only(phase):
    """Phases 0-1 copy 16-B vectors of the worklog's layouts with cp.async and multiply fp16: other operands
    are refused, by ``can_implement`` and at compile time, with the reason."""
    kern = registry.get("sm100", phase).make(None, Operands.of("nt", "bf16", "bf16"))
    why = kern.can_implement(4096, 4096, 4096)
    assert any("worklog's operands only" in w for w in why), why
    with pytest.raises(AssertionError, match="worklog's operands only"):
        compile_kernel(kern, "sm_100a")


@pytest.mark.parametrize("entry", TMA_PHASES, ids=lambda e: e.key)
def test_tma_phases_take_any_operands(entry):
    """fp16/bf16 A and B in either major, fp32/fp16/bf16 C: the extents that are an operand's contiguous row
    must be multiples of 8 (N: C's rows; M: an M-major A's; K: a K-major A's or B's), the others are free."""
    for layout in ("nn", "nt", "tn", "tt"):
        for ab, c in (("fp16", "fp32"), ("bf16", "bf16"), ("fp16", "fp16")):
            kern = entry.make(None, Operands.of(layout, ab, c))
            assert kern.can_implement(1000, 3000, 520) == [], (layout, ab, c)
            m_free = layout[0] == "n"
            assert (kern.can_implement(1001, 3000, 520) == []) == m_free, (layout, kern.can_implement(1001, 3000, 520))
            k_free = layout == "tn"  # A M-major and B N-major: no operand has a row along K
            assert (kern.can_implement(1000, 3000, 524) == []) == k_free, layout
