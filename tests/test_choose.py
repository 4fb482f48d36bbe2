"""phase="best": a time model over every candidate (persistent phases 7/8, split-K phase 9, swap-AB phase 10)."""

import time

import pytest

from cute_gemm.runtime import choose
from phases.operands import Operands


def test_big_problems_take_the_persistent_tiles():
    """Full rounds of 128x256 tiles at N=4096; 128x192 ping-pong where its rounds are no longer (3072^3:
    144 cluster tiles of 128x256 = 2 rounds of 66 + 12; 8192^3: 21 x 192 < 16 x 256 rounds)."""
    assert choose.pick("sm90", 4096, 4096, 4096) == ("7", None)
    for shape in [(3072, 3072, 3072), (8192, 8192, 8192)]:
        assert choose.pick("sm90", *shape) == ("8", None), shape


@pytest.mark.parametrize("m", [1, 7, 16, 33, 64, 128])
def test_few_tokens_take_swap_ab_with_the_tokens_as_the_mma_n(m):
    """M <= 128 tokens against a 4096x4096 weight: phase 10, its token tile the smallest that holds M."""
    phase, cfg = choose.pick("sm90", m, 4096, 4096)
    assert phase == "10"
    bn = cfg.bn if cfg is not None else 16
    assert bn >= m and bn % 8 == 0 and bn == min(t for t in choose.TOKEN_TILES if t >= m)


def test_long_weights_take_128_row_tiles():
    """N = 14336: 112 tiles of 128 weight rows already fill the GPU; 256-B rows of N-major weights."""
    phase, cfg = choose.pick("sm90", 16, 14336, 4096)
    assert phase == "10" and cfg.bm == 128 and cfg.split_k == 1


def test_small_problems_take_small_tiles_with_pdl():
    """256^3 / 1024^3: 64x64 / 64x128 tiles (16 / 128 CTAs) and programmatic dependent launch."""
    phase, cfg = choose.pick("sm90", 256, 256, 256)
    assert phase == "9" and (cfg.bm, cfg.bn) == (64, 64) and cfg.use_pdl
    phase, cfg = choose.pick("sm90", 1024, 1024, 1024)
    assert phase == "9" and cfg.bm == 64 and cfg.use_pdl


def test_wave_fitted_tiles_fill_one_wave():
    """128x11008: 86 tiles of 128x128 leave 46 of 132 SMs idle; the fitted 128x96 tile makes 115, and best
    takes it. Only for M <= 128 (one row of tiles), and never a width already tried (64, 128, 256)."""
    assert choose.wave_fitted_bn(128, 11008, 128) == 96
    assert choose.wave_fitted_bn(128, 28672, 128) == 224
    assert choose.wave_fitted_bn(128, 14336, 128) is None  # 128 wide already fills 112 of 132: nothing to fit
    assert choose.wave_fitted_bn(512, 1000, 128) is None  # under 64 wide
    phase, cfg = choose.pick("sm90", 128, 11008, 4096)
    assert phase == "9" and (cfg.bm, cfg.bn, cfg.split_k) == (128, 96, 1)
    assert not any(p == "9" and c["bn"] not in (64, 128, 256) for p, c in choose.split_candidates(200, 5120, 5120))


def test_the_model_ranks_waves_and_splits():
    """More CTAs than fit: a second wave costs; a 4-way split of clusters of 4 that do not all fit costs."""
    rows = {r["label"]: r["cost"] for r in choose.explain("sm90", 1, 4096, 4096)}
    one, two, four = (rows[f"10 bn=8 split_k={s}"] if s != 2 else rows["10 bn=8"] for s in (1, 2, 4))
    assert four > two  # 256 CTAs in clusters of 4 (only 120 fit at once) against 128 in pairs
    assert all(r > 0 for r in rows.values())


def test_only_candidates_that_take_the_shape():
    assert choose.explain("sm90", 1000, 3001, 520) == []
    with pytest.raises(LookupError, match="no sm90 candidate"):
        choose.pick("sm90", 1000, 3001, 520)


def test_operands_reach_the_candidates():
    """A column-major A needs M % 8 == 0: at M=1 no candidate takes it; a transposed weight (nt) is fine."""
    assert choose.explain("sm90", 1, 4096, 4096, Operands.of("tn")) == []
    assert choose.pick("sm90", 1, 4096, 4096, Operands.of("nt", "bf16", "bf16"))[0] == "10"


def test_token_tiles_and_candidates_are_buildable():
    """Every phase-10 candidate fits the smem and register budgets its kernel asserts at compile time."""
    for m in (1, 24, 100, 200, 256):
        for phase, over in choose.split_candidates(m, 4096, 4096):
            if phase == "10":
                assert over["bn"] in choose.TOKEN_TILES and over["bn"] % over["split_k"] == 0
                assert (64 + over["bn"]) * over["bk"] * 2 * over["stages"] * over["ctas_per_sm"] <= 227 * 1024
                assert over["stages"] >= 3 and over["stages"] * over["ctas_per_sm"] >= 4


def test_a_pick_is_a_lookup_after_the_first():
    choose.pick("sm90", 48, 8192, 8192)
    t0 = time.perf_counter()
    for _ in range(1000):
        choose.pick("sm90", 48, 8192, 8192)
    assert (time.perf_counter() - t0) / 1000 < 5e-6
