"""A ``phase="best"`` pick must never be refused: at random shapes and every operands combination the pick exists,
passes its phase's own checks (``can_implement``, which includes the operands), and -- for a sample of the distinct
picks -- compiles for its target on this CPU. The kernel's compile-time asserts are the last word on a config; a pick
they refuse is an error a user meets at the first call of a shape (as ``gemm(a, b, phase="best")`` with a column-major
A at 360x7144x4584 once did: phase 10's 184-token tile, which only a row-major A allows)."""

import random

import pytest

from cute_gemm.runtime import choose, registry
from cute_gemm.runtime.gemm import compile_only
from phases.base import MAX_ELEMENTS, row_alignment
from phases.operands import AB_DTYPES, C_DTYPES, LAYOUTS, Operands

ALL_OPERANDS = [Operands.of(layout, ab, c) for layout in LAYOUTS for ab in AB_DTYPES for c in C_DTYPES]


def _shape(rng: random.Random, ops: Operands) -> tuple[int, int, int]:
    """A random (M, N, K) the operands allow: M 1-16384 (skewed to the few-token regime, where the most candidates
    are), N and K multiples of 8 up to 65536, each operand under 2^31 elements."""
    while True:
        m = rng.choice((rng.randint(1, 512), rng.randint(1, 16384)))
        n, k = 8 * rng.randint(1, 8192), 8 * rng.randint(1, rng.choice((1024, 8192)))
        dm, dn, dk = row_alignment(ops)
        m = -(-m // dm) * dm
        if max(m * k, k * n, m * n) < MAX_ELEMENTS and n % dn == 0 and k % dk == 0:
            return m, n, k


def _picks(arch: str, count: int, seed: int):
    """(m, n, k, operands, phase, config) of ``count`` random shapes x every operands combination."""
    rng = random.Random(seed)
    for _ in range(count):
        for ops in ALL_OPERANDS:
            m, n, k = _shape(rng, ops)
            phase, cfg = choose.pick(arch, m, n, k, ops)
            yield m, n, k, ops, phase, cfg


@pytest.mark.parametrize("arch", ["sm90", "sm100"])
def test_every_pick_exists_and_passes_its_phase_checks(arch):
    """600 random shapes x 24 operands combinations per arch: a pick, and its kernel takes the shape and operands."""
    seen = 0
    for m, n, k, ops, phase, cfg in _picks(arch, 600, seed=20261204):
        entry = registry.get(arch, phase)
        kern = entry.make(cfg if cfg is not None else entry.default_config(), ops)
        assert kern.can_implement(m, n, k) == [], (arch, m, n, k, ops.label(), phase, cfg)
        seen += 1
    assert seen == 600 * len(ALL_OPERANDS)


def test_a_token_tile_of_8_x_odd_rows_is_refused_with_a_column_major_a():
    """Phase 10's kernel B is the problem's A: a 184-token tile's 8 extra box rows need it K-major (row-major A).
    The refusal is a reason of ``can_implement`` (so ``best`` never offers it), not the compiler's assert."""
    entry = registry.get("sm90", "10")
    cfg = entry.configured({"bm": 128, "bn": 184, "bk": 64, "stages": 5, "split_k": 1})
    for layout, refused in (("nn", False), ("nt", False), ("tn", True), ("tt", True)):
        why = entry.make(cfg, Operands.of(layout, "bf16", "fp16")).can_implement(360, 7144, 4584)
        assert bool(why) == refused, (layout, why)
        assert not refused or "bn=184" in why[0]
    # the shape that found it: best's pick with a column-major A is a tile the kernel builds
    phase, cfg = choose.pick("sm90", 360, 7144, 4584, Operands.of("tn", "bf16", "fp16"))
    if phase == "10" and cfg is not None:
        assert cfg.box_n() == cfg.bn, cfg


def _distinct_picks(arch: str, count: int, seed: int) -> list[tuple]:
    picks = {}
    for _, _, _, ops, phase, cfg in _picks(arch, count, seed):
        picks.setdefault((phase, cfg, ops), None)
    return list(picks)


@pytest.mark.parametrize("arch", ["sm90", "sm100"])
def test_a_sample_of_the_picks_compiles(arch):
    """12 distinct picks drawn from 40 random shapes x every operands combination compile (the kernels' own asserts and
    the DSL run while tracing); the 8 x odd token tiles are in the sample where the picks hold any."""
    picks = _distinct_picks(arch, 40, seed=4)
    rng = random.Random(7)
    odd = [p for p in picks if p[0] == "10" and p[1] is not None and p[1].bn % 16 and p[1].bn != 8]
    sample = odd[:3] + rng.sample([p for p in picks if p not in odd[:3]], 12 - len(odd[:3]))
    for phase, cfg, ops in sample:
        compile_only(phase, cfg, arch, ops.layout, ops.ab, ops.c)  # raises UnsupportedError on a refusal
