"""A ``phase="best"`` pick must never be refused: at random shapes and every operands combination the pick exists,
passes its phase's own checks (``can_implement``, which includes the operands), and -- for a sample of the distinct
picks -- compiles for its target on this CPU. The kernel's compile-time asserts are the last word on a config; a pick
they refuse is an error a user meets at the first call of a shape (as ``gemm(a, b, phase="best")`` with a column-major
A at 360x7144x4584 once did: phase 10's 184-token tile, which only a row-major A allows)."""

import os
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


# Issue 48's property test. 20,000 random shapes x every operands combination x both arches is 960,000 picks, about
# 12 minutes on one CPU core (a pick takes 0.5-1 ms): too long for CI. So by default each of the 20,000 shapes takes
# one operands combination, drawn in turn (every combination about 833 times; ~30 s for both arches), and 10 distinct
# picks per arch compile (~20 compiles); CUTE_GEMM_LONG_TESTS=1 runs every shape with every combination and compiles
# 100 picks per arch (200 in all).
LONG = os.environ.get("CUTE_GEMM_LONG_TESTS") == "1"
PROPERTY_SHAPES = 20_000
COMPILES_PER_ARCH = 100 if LONG else 10


def _property_picks(arch: str, seed: int = 48):
    """(m, n, k, operands, phase, config) of ``PROPERTY_SHAPES`` random shapes, each with one operands combination
    (in turn) or, under CUTE_GEMM_LONG_TESTS=1, with every one."""
    rng = random.Random(seed)
    for i in range(PROPERTY_SHAPES):
        for ops in ALL_OPERANDS if LONG else (ALL_OPERANDS[i % len(ALL_OPERANDS)],):
            m, n, k = _shape(rng, ops)
            yield (m, n, k, ops, *choose.pick(arch, m, n, k, ops))


def _passes_its_phase(arch, m, n, k, ops, phase, cfg) -> list[str]:
    """Why the pick's kernel would refuse: ``can_implement`` (shape, operands), ``config_problems`` (the config rules
    before any compile) and, on sm100, the compile's asserts as ``choose.sm100_build_problems`` reads them."""
    entry = registry.get(arch, phase)
    cfg = cfg if cfg is not None else entry.default_config()
    kern = entry.make(cfg, ops)
    return kern.can_implement(m, n, k) + entry.config_problems(cfg) + choose.sm100_build_problems(kern)


_PROPERTY_PICKS: dict = {}


@pytest.mark.parametrize("arch", ["sm90", "sm100"])
def test_20000_random_shapes_pick_and_pass_their_phase_checks(arch):
    """M 1-16384, N and K multiples of 8 up to 65536 (M skewed to the few-token regime), every operands combination:
    a pick exists (no LookupError) and its phase's own checks pass. The distinct picks are kept for the compiles."""
    picks, count = {}, 0
    for m, n, k, ops, phase, cfg in _property_picks(arch):
        assert _passes_its_phase(arch, m, n, k, ops, phase, cfg) == [], (arch, m, n, k, ops.label(), phase, cfg)
        picks.setdefault((phase, cfg, ops), (m, n, k))
        count += 1
    assert count == PROPERTY_SHAPES * (len(ALL_OPERANDS) if LONG else 1)
    assert {p for p, _, _ in picks} >= ({"8", "9", "10"} if arch == "sm90" else {"6", "9", "10"})
    assert "11" not in {p for p, _, _ in picks}  # the fused epilogue's phase: an epilogue call's, never a plain pick
    _PROPERTY_PICKS[arch] = picks


def _sample(arch: str, count: int) -> list[tuple]:
    """``count`` distinct picks of the property test: one of each (phase, split) class first (the widest and the
    narrowest tile of each), then drawn at random; the 8 x odd token tiles of sm90's phase 10 where it has any."""
    picks = _PROPERTY_PICKS.get(arch)
    if not picks:  # run alone (-k): the picks of the first 2,000 shapes
        picks = {}
        for i, (m, n, k, ops, phase, cfg) in enumerate(_property_picks(arch)):
            picks.setdefault((phase, cfg, ops), (m, n, k))
            if i >= 2000:
                break
    keys = list(picks)
    by_class: dict = {}
    for phase, cfg, ops in keys:
        by_class.setdefault((phase, getattr(cfg, "split_k", None)), []).append((phase, cfg, ops))
    first = []
    for members in by_class.values():
        widths = sorted(members, key=lambda p: p[1].bn if p[1] is not None else 0)
        first += [widths[0], widths[-1]] if len(widths) > 1 else widths
    odd = [p for p in keys if arch == "sm90" and p[0] == "10" and p[1] is not None and p[1].bn % 16 and p[1].bn != 8]
    rng = random.Random(7)
    chosen = list(dict.fromkeys(odd[:2] + rng.sample(first, min(len(first), count))))[:count]
    rest = [p for p in keys if p not in chosen]
    return chosen + rng.sample(rest, max(0, min(len(rest), count - len(chosen))))


@pytest.mark.parametrize("arch", ["sm90", "sm100"])
def test_a_sample_of_the_picks_compiles(arch):
    """``COMPILES_PER_ARCH`` distinct picks of the property test (10 in CI, 100 with CUTE_GEMM_LONG_TESTS=1) compile
    for their target on this CPU: the kernels' own asserts and the DSL run while tracing, the last word on a config."""
    sample = _sample(arch, COMPILES_PER_ARCH)
    assert len(sample) == COMPILES_PER_ARCH
    for phase, cfg, ops in sample:
        compile_only(phase, cfg, arch, ops.layout, ops.ab, ops.c)  # raises UnsupportedError on a refusal
