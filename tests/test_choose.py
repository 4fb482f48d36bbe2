"""phase="best": the per-shape choice is the wave arithmetic of each candidate's own schedule."""

import pytest

from cute_gemm import choose


def test_wide_tile_where_its_rounds_are_full():
    for shape in [(4096, 4096, 4096), (1024, 4096, 4096), (8192, 8192, 8192), (6144, 6144, 6144)]:
        phase, config = choose.pick("sm90", *shape)
        assert (phase, config) == ("7", None), shape  # the default 128x256 tile


def test_narrower_tile_where_the_last_round_is_mostly_empty():
    """3072^3: 144 cluster tiles of 128x256 = 2 rounds of 66 + 12 (2.5 tile times with stream-K);
    128x192 tiles: 192 = 3 rounds of 3/4-size tiles (2.25)."""
    rows = choose.explain("sm90", 3072, 3072, 3072)
    assert [r["label"] for r in rows] == ["7 bn=192", "7 bn=128 stages=6", "7"]
    assert rows[0]["cost"] == pytest.approx(3 * 192 * 1.03) and rows[2]["cost"] == pytest.approx(2.5 * 256)
    phase, config = choose.pick("sm90", 3072, 3072, 3072)
    assert phase == "7" and config.bn == 192


def test_only_candidates_that_take_the_shape():
    assert choose.explain("sm90", 1000, 3001, 520) == []
    with pytest.raises(LookupError, match="no sm90 candidate"):
        choose.pick("sm90", 1000, 3001, 520)


def test_small_problems_take_the_narrowest_tile():
    """1024^3: 16 cluster tiles of 128x256 leave most SMs idle; 128x128 tiles with the K split fill 128."""
    phase, config = choose.pick("sm90", 1024, 1024, 1024)
    assert phase == "7" and config.bn == 128
