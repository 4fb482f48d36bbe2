"""phase="best": the per-shape choice is the wave arithmetic of each candidate's own schedule."""

import pytest

from cute_gemm.runtime import choose


def test_wide_tile_where_its_rounds_are_full():
    """N = 4096 splits into 16 tiles of 256 but 21.3 of 192: phase 7's 128x256 tile there."""
    for shape in [(4096, 4096, 4096), (1024, 4096, 4096), (2048, 2048, 2048)]:
        phase, config = choose.pick("sm90", *shape)
        assert (phase, config) == ("7", None), shape  # the default 128x256 tile


def test_ping_pong_where_its_rounds_are_no_longer():
    """3072^3: 144 cluster tiles of 128x256 = 2 rounds of 66 + 12 (2.5 tile times with stream-K); phase 8's
    128x192 tiles: 192 = 3 rounds of 3/4-size tiles (2.25), its epilogue hidden (x0.98). 6144^3 ties on
    rounds (12 x 192 = 9 x 256) and 8192^3 is 21 x 192 < 16 x 256: phase 8 too."""
    rows = choose.explain("sm90", 3072, 3072, 3072)
    assert [r["label"] for r in rows] == ["8", "7 bn=192", "7 bn=128 stages=6", "7"]
    assert rows[0]["cost"] == pytest.approx(3 * 192 * 0.98) and rows[1]["cost"] == pytest.approx(3 * 192 * 1.03)
    assert rows[3]["cost"] == pytest.approx(2.5 * 256)
    for shape in [(3072, 3072, 3072), (6144, 6144, 6144), (8192, 8192, 8192)]:
        assert choose.pick("sm90", *shape) == ("8", None), shape


def test_only_candidates_that_take_the_shape():
    assert choose.explain("sm90", 1000, 3001, 520) == []
    with pytest.raises(LookupError, match="no sm90 candidate"):
        choose.pick("sm90", 1000, 3001, 520)


def test_small_problems_take_the_narrowest_tile():
    """1024^3: 16 cluster tiles of 128x256 leave most SMs idle; 128x128 tiles with the K split fill 128."""
    phase, config = choose.pick("sm90", 1024, 1024, 1024)
    assert phase == "7" and config.bn == 128
