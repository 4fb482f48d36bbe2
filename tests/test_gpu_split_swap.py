"""Phases 9 (split-K in a cluster) and 10 (swap-AB) in the configs ``phase="best"`` picks from, on the shapes
they are for: a few tokens (M = 1, 5, 24), starved grids, K much larger than N, K not a multiple of the
k-tile, ragged M and N. Every check is the harness's (cuBLASLt and float64, NaN-poisoned C, a repeat that
must be bit-identical: the split-K reduction adds partial tiles in a fixed rank order). Marker ``gpu``."""

import dataclasses

import pytest

from conftest import gpu_family
from cute_gemm.runtime import registry
from cute_gemm.runtime.problem import Problem

FAMILY = gpu_family()

# (phase, config overrides): the families of choose.split_candidates, each split and residency
CONFIGS = [
    ("9", {"bm": 64, "bn": 64, "split_k": 1, "use_pdl": True}),
    ("9", {"bm": 64, "bn": 128, "split_k": 4, "use_pdl": True}),
    ("9", {"bm": 128, "bn": 128, "split_k": 2}),
    ("9", {"bm": 128, "bn": 256, "stages": 4, "split_k": 8}),
    ("10", {"bn": 8, "split_k": 1}),
    ("10", {"bn": 48, "split_k": 4, "ctas_per_sm": 2, "stages": 3}),
    ("10", {"bm": 128, "bn": 16, "stages": 6, "split_k": 2}),
    ("10", {"bm": 128, "bn": 8, "stages": 3, "ctas_per_sm": 2, "split_k": 1}),
    ("10", {"bn": 256, "bk": 64, "stages": 5, "split_k": 2}),
    # the token tile multicast over a cluster of weight tiles (phase 4's B multicast), 2 and 4 CTAs, alone
    # and times a split (rank m + cluster_m k), and over 2 token tiles; ragged tile counts leave a cluster a
    # tile past the edge (N=1032: 9 weight tiles)
    ("10", {"bm": 128, "bn": 112, "bk": 64, "stages": 7, "split_k": 1, "cluster_m": 2}),
    ("10", {"bm": 128, "bn": 64, "bk": 64, "stages": 8, "split_k": 1, "cluster_m": 4}),
    ("10", {"bm": 64, "bn": 128, "bk": 128, "stages": 4, "split_k": 2, "cluster_m": 2}),
    ("10", {"bm": 128, "bn": 32, "stages": 5, "split_k": 2, "cluster_m": 4}),
    ("9", {"bm": 128, "bn": 128, "split_k": 1, "cluster_m": 2, "use_pdl": True}),
    # two 128 x 64 CTAs per SM with 64-deep k-tiles (64x28672x8192's pick: 224 weight tiles in one wave)
    ("10", {"bm": 128, "bn": 64, "bk": 64, "stages": 4, "split_k": 1, "ctas_per_sm": 2}),
    ("9", {"bm": 64, "bn": 128, "split_k": 4, "cluster_m": 2, "use_pdl": True}),
    # 64-token tiles in pairs sharing the weights' tile, no split (best's candidate at 65-256 tokens)
    ("9", {"bm": 64, "bn": 128, "split_k": 1, "cluster_m": 2, "use_pdl": True}),
    # three consumer warpgroups (192 weight rows, 512 threads): split, unsplit (the register epilogue), multicast;
    # 3-way splits, whose 128 / 112 lines do not divide by 3 (the last rank reduces fewer)
    ("10", {"bm": 192, "bn": 112, "bk": 64, "stages": 5, "split_k": 2}),
    ("10", {"bm": 192, "bn": 128, "bk": 64, "stages": 5, "split_k": 1}),
    ("10", {"bm": 192, "bn": 96, "bk": 64, "stages": 6, "split_k": 4}),
    ("10", {"bm": 192, "bn": 128, "bk": 64, "stages": 5, "split_k": 1, "cluster_m": 2}),
    ("10", {"bm": 128, "bn": 256, "bk": 64, "stages": 4, "split_k": 3}),
    ("10", {"bm": 192, "bn": 112, "bk": 64, "stages": 5, "split_k": 3}),
    ("9", {"bm": 192, "bn": 128, "stages": 4, "split_k": 3, "use_pdl": True}),
    # token tiles in steps of 16 (144, 80, 240, 176: no power of two, no multiple of 32), alone, split, multicast
    ("10", {"bn": 144, "bk": 64, "split_k": 1}),
    ("10", {"bm": 128, "bn": 144, "bk": 64, "stages": 6, "split_k": 1, "cluster_m": 2}),
    ("10", {"bm": 128, "bn": 80, "stages": 4}),
    ("10", {"bm": 128, "bn": 240, "bk": 64, "stages": 4, "split_k": 3}),
    ("10", {"bm": 128, "bn": 176, "bk": 64, "stages": 5, "split_k": 4}),
    # three 80-token tiles of 128 weight rows, 8 stages of 64, no split (best's pick at 232-240 tokens, K <= 5120)
    ("10", {"bm": 128, "bn": 80, "bk": 64, "stages": 8, "split_k": 1}),
    # split big tiles, which best picks more often since the reduce's charge stops at 80 KiB: the largest partial tile
    # (192 x 192 fp32 over the ring, 4 ranks), 3 ranks over 224 token lines, 4 over 176
    ("10", {"bm": 192, "bn": 192, "bk": 64, "stages": 4, "split_k": 4}),
    ("10", {"bm": 128, "bn": 224, "bk": 64, "stages": 5, "split_k": 3}),
    ("10", {"bm": 192, "bn": 176, "bk": 64, "stages": 4, "split_k": 4}),
    # token tiles of 8 x an odd number (the TMA box and smem stage 8 rows taller than the MMA's N): multicast over 4
    # (each CTA a 24-row slice of the 96-row box), over 2 with three warpgroups, split with few tokens, 2 CTAs per SM
    ("10", {"bm": 128, "bn": 88, "bk": 64, "stages": 7, "split_k": 1, "cluster_m": 4}),
    ("10", {"bm": 192, "bn": 104, "bk": 64, "stages": 5, "split_k": 1, "cluster_m": 2}),
    ("10", {"bn": 24, "split_k": 2}),
    ("10", {"bm": 128, "bn": 72, "stages": 4, "split_k": 2}),
    ("10", {"bn": 40, "bk": 64, "stages": 4, "split_k": 1, "ctas_per_sm": 2}),
    # 192-column tiles past 256 tokens: phase 9's 128 x 192 and phase 10's 192-token tiles (two of them up to 384 tokens)
    ("9", {"bm": 128, "bn": 192, "bk": 64, "stages": 5, "split_k": 1, "use_pdl": True}),
    ("10", {"bm": 128, "bn": 192, "bk": 64, "stages": 5, "split_k": 1}),
    # 256 weight rows in two consumer warpgroups of 128 (past 256 tokens): unsplit (the register epilogue, two row
    # blocks per warpgroup), split with a token tile of 8 x odd (the box 8 rows taller), phase 9 unswapped and split
    ("10", {"bm": 256, "bn": 144, "bk": 64, "stages": 4, "split_k": 1}),
    ("10", {"bm": 256, "bn": 88, "bk": 64, "stages": 5, "split_k": 2}),
    ("9", {"bm": 256, "bn": 128, "bk": 64, "stages": 4, "split_k": 2, "use_pdl": True}),
    # phase 9's 64 x 64 tile with phase 10's 128-deep ring, unsplit (best's pick at 113-128 tokens: two token tiles)
    ("9", {"bm": 64, "bn": 64, "bk": 128, "stages": 7, "split_k": 1, "use_pdl": True}),
]
SHAPES = [
    Problem(1, 4096, 4096),  # one token
    Problem(5, 1032, 8200),  # K >> N, K not a multiple of the k-tile
    Problem(24, 264, 72),  # fewer k-tiles than CTAs of a split: some CTAs add nothing
    Problem(200, 3000, 520),  # ragged M and N
    Problem(512, 512, 4096),  # more tokens than one tile
]


def _over_id(over) -> str:
    """A config's overrides in a test id: bm64-bn64-bk128-... (a phase id passes through)."""
    return "-".join(f"{k}{v}" for k, v in over.items()) if isinstance(over, dict) else over


def _cases():
    for phase, over in CONFIGS:
        for shape in SHAPES:
            yield pytest.param(phase, over, shape, id=f"{phase}-{_over_id(over)}-{shape}")


@pytest.mark.gpu
@pytest.mark.skipif(FAMILY not in (None, "sm90"), reason="phases 9 and 10 are checked on sm90 GPUs here")
@pytest.mark.parametrize("phase,over,shape", list(_cases()))
def test_split_and_swap_configs(phase, over, shape):
    from cute_gemm.measure.check import check_phase

    entry = registry.get("sm90", phase)
    cfg = dataclasses.replace(entry.default_config(), **over)
    assert entry.make(cfg).can_implement(shape.m, shape.n, shape.k) == []
    res = check_phase(entry, shape, config=cfg)
    assert res.error is None, res.error
    assert res.unwritten == 0 and res.mismatches == 0, res.summary()
    assert res.rel_fro_err <= 1e-4 and res.repeat_identical, res.summary()


@pytest.mark.gpu
@pytest.mark.skipif(FAMILY not in (None, "sm90"), reason="phases 9 and 10 are checked on sm90 GPUs here")
@pytest.mark.parametrize("ops", ["nt bf16 bf16", "tn fp16 fp16", "nn fp16 fp32"])
@pytest.mark.parametrize("phase,over", [("9", {"bm": 128, "bn": 256, "stages": 4, "split_k": 1, "use_pdl": True}),
                                        ("10", {"bn": 8, "split_k": 1}), ("10", {"bm": 128, "bn": 64, "split_k": 1,
                                                                                "stages": 4}),
                                        ("10", {"bm": 128, "bn": 112, "bk": 64, "stages": 7, "split_k": 1,
                                                "cluster_m": 2}),
                                        ("10", {"bm": 64, "bn": 128, "bk": 128, "stages": 4, "split_k": 2,
                                                "cluster_m": 2}),
                                        ("9", {"bm": 64, "bn": 128, "split_k": 1, "cluster_m": 2, "use_pdl": True}),
                                        ("10", {"bm": 256, "bn": 144, "bk": 64, "stages": 4, "split_k": 1})])
def test_unsplit_tiles_in_every_c_type(phase, over, ops):
    """Without a split, fp32 C goes straight from the accumulators; a 16-bit C goes through the smem tile
    (rounded there, not in the accumulator registers)."""
    from cute_gemm.measure.check import check_phase
    from phases.operands import Operands

    layout, ab, c = ops.split()
    operands = Operands.of(layout, ab, c)
    entry = registry.get("sm90", phase)
    cfg = dataclasses.replace(entry.default_config(), **over)
    for shape in (Problem(8, 4096, 1032), Problem(200, 3000, 520)):
        res = check_phase(entry, shape, config=cfg, operands=operands)
        assert res.error is None, res.error
        assert res.passed and res.repeat_identical, res.summary()


@pytest.mark.gpu
@pytest.mark.skipif(FAMILY not in (None, "sm90"), reason="phases 9 and 10 are checked on sm90 GPUs here")
@pytest.mark.parametrize("phase,over", [("9", {"bm": 128, "bn": 192, "bk": 64, "stages": 5, "split_k": 1, "use_pdl": True}),
                                        ("10", {"bm": 128, "bn": 192, "bk": 64, "stages": 5, "split_k": 1}),
                                        ("10", {"bm": 256, "bn": 80, "bk": 64, "stages": 5, "split_k": 1}),
                                        ("10", {"bm": 256, "bn": 112, "bk": 64, "stages": 4, "split_k": 2}),
                                        # two token halves: one warpgroup's 64 x 232, three warpgroups split 4 ways
                                        # (8 x odd: the box 8 rows taller), 128 x 160, 64 x 136 split 2
                                        ("10", {"bm": 64, "bn": 232, "bk": 64, "stages": 5, "split_k": 1}),
                                        ("10", {"bm": 192, "bn": 136, "bk": 64, "stages": 5, "split_k": 4}),
                                        ("10", {"bm": 128, "bn": 160, "bk": 64, "stages": 6, "split_k": 1}),
                                        ("10", {"bn": 136, "bk": 64}),
                                        # three token tiles: 128 x 152 (8 x odd: the box 8 rows taller), 64 x 88
                                        ("10", {"bm": 128, "bn": 152, "bk": 64, "stages": 6, "split_k": 1}),
                                        ("10", {"bm": 64, "bn": 88, "bk": 64, "stages": 8, "split_k": 1})],
                         ids=_over_id)
@pytest.mark.parametrize("shape", [Problem(317, 3000, 1032), Problem(384, 1032, 4104)], ids=str)
def test_tiles_of_192_columns_past_256_tokens(phase, over, shape):
    """best's candidates at 257-512 tokens (192-column tiles, 256 weight rows in 4 token tiles of 80 or 112, the token
    halves, three token tiles), where the second token tile (phase 10) or the third row of tiles (phase 9)
    is ragged, N is not a multiple of the tile and K not a multiple of the k-tile."""
    from cute_gemm.measure.check import check_phase

    entry = registry.get("sm90", phase)
    cfg = dataclasses.replace(entry.default_config(), **over)
    assert entry.make(cfg).can_implement(shape.m, shape.n, shape.k) == []
    res = check_phase(entry, shape, config=cfg)
    assert res.error is None, res.error
    assert res.passed and res.repeat_identical and res.unwritten == 0, res.summary()
