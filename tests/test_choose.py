"""phase="best": a time model over every candidate (persistent phases 7/8, split-K phase 9, swap-AB phase 10)."""

import dataclasses
import time

import pytest

from cute_gemm.runtime import choose, registry
from phases.operands import Operands


def test_big_problems_take_the_persistent_tiles():
    """Full rounds of 128x256 tiles at N=4096; 128x192 ping-pong where its rounds are no longer (3072^3:
    144 cluster tiles of 128x256 = 2 rounds of 66 + 12; 8192^3: 21 x 192 < 16 x 256 rounds), with programmatic
    dependent launch."""
    def picked(shape):
        phase, cfg = choose.pick("sm90", *shape)
        return phase, cfg is not None and registry.get("sm90", phase).overrides(cfg)

    assert picked((4096, 4096, 4096)) == ("7", {"use_pdl": True})
    for shape in [(3072, 3072, 3072), (8192, 8192, 8192)]:
        assert picked(shape) == ("8", {"use_pdl": True}), shape


@pytest.mark.parametrize("m", [1, 7, 16, 33, 64, 112])
def test_few_tokens_take_swap_ab_with_the_tokens_as_the_mma_n(m):
    """M <= 112 tokens against a 4096x4096 weight: phase 10, its token tile the smallest that holds M (113-128: the deep
    pair below)."""
    phase, cfg = choose.pick("sm90", m, 4096, 4096)
    assert phase == "10"
    bn = cfg.bn if cfg is not None else 16
    assert bn >= m and bn % 8 == 0 and bn == choose.token_tiles(m)[0]


def test_token_tiles_hold_the_tokens_in_steps_of_8_and_the_multicast_width():
    """The narrowest tile that holds M tokens (steps of 8: padded rows are wgmma work), the narrowest in steps of 16 (the
    measured files' candidate), and past 64 tokens also the narrowest multiple of 32, which the token multicast over 4
    weight tiles can slice."""
    assert choose.token_tiles(1) == [8] and choose.token_tiles(40) == [40, 48] and choose.token_tiles(64) == [64]
    assert choose.token_tiles(72) == [72, 80, 96] and choose.token_tiles(112) == [112, 128]
    assert choose.token_tiles(144) == [144, 160] and choose.token_tiles(200) == [200, 208, 224]
    assert choose.token_tiles(128) == [128] and choose.token_tiles(256) == [256]
    for m in range(1, 257):
        tiles = choose.token_tiles(m)
        assert all(t >= m and t % 8 == 0 for t in tiles), m
        assert tiles[0] - m < 8 and (m <= 64 or tiles[-1] % 32 == 0), m
        assert any(t == 8 or t % 16 == 0 for t in tiles), m


def test_a_token_tile_of_8_x_odd_rows_loads_8_rows_more_than_its_mma_reads():
    """bn = 8 x an odd number past 8: the TMA box and the ring's stage hold bn + 8 token rows (the DSL's compiler aborts
    building a box of bn rows); the model's ring depth counts them, the multicast slices them, the MMA does not."""
    cfg = registry.get("sm90", "10").config_cls
    assert [choose.box_rows(b) for b in (8, 16, 24, 40, 88, 104, 184, 256)] == [8, 16, 32, 48, 96, 112, 192, 256]
    assert cfg(bm=128, bn=88, bk=64).stage_bytes() == (128 + 96) * 64 * 2
    assert choose._stages(128, 88, 64, 1) == choose._stages(128, 96, 64, 1) == 8
    narrow = registry.get("sm90", "10").make(cfg(bm=128, bn=88, bk=64, stages=7, split_k=1, cluster_m=4))
    assert narrow.can_implement(256, 5120, 4096) == []


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
    """128x11008: 86 tiles of 128x128 leave 46 of 132 SMs idle; the fitted 128x96 tile makes 115. Only for
    96 < M <= 128 (one row of tiles, 3/4 of its rows real), never a width already tried (64, 128, 256)."""
    assert choose.wave_fitted_bn(128, 11008, 128) == 96
    assert choose.wave_fitted_bn(128, 28672, 128) == 224
    assert choose.wave_fitted_bn(128, 14336, 128) is None  # 128 wide already fills 112 of 132: nothing to fit
    assert choose.wave_fitted_bn(512, 1000, 128) is None  # under 64 wide
    rows = {r["label"]: r["cost"] for r in choose.explain("sm90", 128, 11008, 4096)}
    fitted = rows["9 bn=96 stages=8 split_k=1 use_pdl=True"]  # bm=128 is phase 9's default
    # measured on the H200 (2026-12-02, cold L2): the fitted tile 28.5 us, the swapped 128x128 tile multicast over 4
    # weight tiles 28.4: best takes one of the two (the model ranks the fitted tile below the multicast one)
    phase, cfg = choose.pick("sm90", 128, 11008, 4096)
    assert (phase, cfg.bm, cfg.bn, cfg.split_k) in (("9", 128, 96, 1), ("10", 128, 128, 1))
    assert fitted < rows["9 split_k=1 use_pdl=True"]  # one wave of 115 CTAs beats 86 of 128x128
    assert not any(p == "9" and c["bn"] not in (64, 128, 256) for p, c in choose.split_candidates(200, 5120, 5120))
    # 56 rows of 128: the padded MMA work is not free (52.1 us against the vendor's 39.9): no fitted tile
    assert not any(p == "9" and c["bn"] not in (64, 128, 256) for p, c in choose.split_candidates(56, 18944, 3584))


def test_two_ctas_per_sm_fill_one_wave_of_weight_tiles():
    """28672 / 128 = 224 weight tiles, 1.7 waves of 132 SMs; two 128 x 64 CTAs per SM (4 stages of 64 each: 128-deep
    k-tiles leave 2) hold all 224 in one wave, and best takes that at 64x28672x8192."""
    cands = choose.split_candidates(64, 28672, 8192)
    two = [c for p, c in cands if p == "10" and c["ctas_per_sm"] == 2 and c["bm"] == 128 and c["bn"] == 64]
    assert two and all(c["bk"] == 64 and c["stages"] == 4 for c in two)
    phase, cfg = choose.pick("sm90", 64, 28672, 8192)
    assert phase == "10" and (cfg.bm, cfg.bn, cfg.bk, cfg.ctas_per_sm) == (128, 64, 64, 2)


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
    multicast = set()
    for m in (1, 24, 100, 200, 256):
        for phase, over in choose.split_candidates(m, 4096, 4096):
            if phase == "10":
                # the tokens in one tile, or past 128 tokens in two (a multiple of 8 or 16 that covers half of them),
                # or at 241-256 tokens in three of 88
                one = over["bn"] in choose.token_tiles(m)
                two = m > 128 and over["bn"] % 8 == 0 and m / 2 <= over["bn"] < m
                three = 241 <= m <= 256 and over["bn"] == 88 and over["cluster_m"] in (1, 4)
                assert one or two or three, (m, over)
                # three consumer warpgroups only for token tiles of 96 or more, a 3-way split only for 128 or more
                assert over["bm"] != 192 or over["bn"] >= 96, (m, over)
                assert over["split_k"] != 3 or over["bn"] >= 128, (m, over)
                box = choose.box_rows(over["bn"])  # the ring holds the TMA box's rows
                assert (over["bm"] + box) * over["bk"] * 2 * over["stages"] * over["ctas_per_sm"] <= 227 * 1024
                assert over["stages"] >= 3 and over["stages"] * over["ctas_per_sm"] >= 4
                # the token tile's multicast: whole 8-row slices per CTA, 128 weight rows, no split
                cm = over["cluster_m"]
                assert box % (8 * cm) == 0 and (cm == 1 or (over["bm"] == 128 and over["split_k"] == 1))
                multicast.add((m, cm))
    assert {(100, 4), (200, 4), (256, 2)} <= multicast and not any(cm > 1 for m, cm in multicast if m <= 96)


def test_three_warpgroup_weight_tiles_where_the_grid_is_short():
    """192x5120x27648: 40 weight tiles of 128 rows leave a short grid and a long k-loop; 27 of 192 rows x one
    192-token tile x 4 K ranges are 108 CTAs (measured 92.8 us against 110.9 for 192 x 96 unsplit and 98.7 / 105.7
    for cuBLAS / cuBLASLt, H200, 2026-12-03). The 512 threads start with 128 registers: 192 x bn tiles up to
    bn = 192 fit, none at 2 CTAs per SM past bn = 64."""
    phase, cfg = choose.pick("sm90", 192, 5120, 27648)
    assert phase == "10" and (cfg.bm, cfg.bn, cfg.split_k) == (192, 192, 4)
    assert choose._fits_registers(192, 192, 1) and not choose._fits_registers(192, 200, 1)
    assert not choose._fits_registers(192, 96, 2)
    # few tokens: 192-row tiles leave fewer CTAs pulling the weights, and measured no faster (1x4096x14336:
    # 34.9 us against 28.1 for 64 rows): not offered below 96-token tiles
    assert not any(p == "10" and c["bm"] == 192 for p, c in choose.split_candidates(16, 4096, 14336))


def test_three_way_splits_count_the_clusters_of_three_that_fit():
    """39 clusters of 3 fit on an H200 (132 SMs, GPCs of unequal size): 36 x 3 CTAs run in one wave, 40 x 3 in
    two. 232x4608x9216 takes 36 weight tiles of 128 x 232 over 3 K ranges (128 x 240 ran 36.3-36.6 us, cuBLAS /
    cuBLASLt 36.5; 128 x 256 37.7; tokens in steps of 8 since 2026-12-03)."""
    assert dict(choose.MACHINE.clusters_that_fit)[3] == 39
    phase, cfg = choose.pick("sm90", 232, 4608, 9216)
    assert phase == "10" and (cfg.bm, cfg.bn, cfg.split_k) == (128, 232, 3)
    label = "10 bm=128 bn=256 bk=64 stages=4 split_k=3 evict_first_a=True"  # every token in the tile: evict-first
    cost = {n: next(r["cost"] for r in choose.explain("sm90", 240, n, 13824) if r["label"] == label) for n in (4992, 5120)}
    # 39 weight tiles x 3 in one wave; 40 x 3: the 40th cluster waits for a second (measured 104 us against 60.8)
    assert cost[5120] > 1.5 * cost[4992]


def test_no_token_multicast_past_k_5120():
    """The token tile's multicast over weight tiles won by a margin at four shapes of K <= 5120 (200x11000x3000 0.87x
    the best unicast) and at none of 21 with K >= 6144 (200x10240x8192 and 216x10240x8192: 72.7 / 74.9 us against
    64.5 / 64.4 for 192 x 112 tiles): not offered there."""
    assert any(c["cluster_m"] > 1 for p, c in choose.split_candidates(200, 11000, 3000) if p == "10")
    assert not any(c["cluster_m"] > 1 for p, c in choose.split_candidates(200, 10240, 8192) if p == "10")
    phase, cfg = choose.pick("sm90", 216, 10240, 8192)
    assert phase == "10" and (cfg.bm, cfg.bn, cfg.split_k, cfg.cluster_m) == (192, 112, 1, 1)


def test_a_split_costs_more_than_its_reduce():
    """64 weight rows whole against 128 rows split in two (the same CTAs, bytes and MMAs per CTA): the whole tile
    measured faster at 48 of 53 pairs (1.07x geomean; 144x6144x6144: 23.9 us against 27.4), so the model charges a split
    ``split_body`` on its k-loop besides the reduce."""
    assert choose.MACHINE.split_body > 0
    phase, cfg = choose.pick("sm90", 144, 6144, 6144)
    assert phase == "10" and (cfg.bm, cfg.bn, cfg.split_k) == (64, 144, 1)
    rows = {r["label"]: r["cost"] for r in choose.explain("sm90", 144, 6144, 6144)}
    assert rows["10 bn=144 bk=64 split_k=1"] < rows["10 bm=128 bn=144 bk=64 stages=6 evict_first_a=True"]


def test_token_multicast_pays_where_the_token_rows_are_not_whole_lines():
    """The token tile's multicast against its unicast twin: 1.017x at 30 pairs whose token rows are whole 128-B lines,
    1.15-1.27x at the 4 whose rows are not (K x 2 B not a multiple of 128). So at 232x11008x4096 the 192 x 128 tiles
    (39.1 us) beat 128 x 256 over 4 (45.1), while at 200x11008x3000 and 176x14336x2600 the multicast is the pick
    (30.0 / 26.8 us against 34.5 / 33.6 unicast). With tokens in steps of 8, 200 tokens take a 200-token tile, whose
    208-row box slices into 2, not 4 (200x11000x3000: 29.6 us, 0.90 of the vendor, against 30.0-30.4 over 4)."""
    assert choose.MACHINE.mcast_gain_ragged_rows > 2 * choose.MACHINE.mcast_gain
    phase, cfg = choose.pick("sm90", 232, 11008, 4096)
    assert phase == "10" and (cfg.bm, cfg.bn, cfg.cluster_m) == (192, 120, 1)  # two token tiles, in steps of 8
    for shape, cm in (((200, 11008, 3000), 2), ((176, 14336, 2600), 4)):
        phase, cfg = choose.pick("sm90", *shape)
        assert phase == "10" and cfg.cluster_m == cm, shape
    # the same tile, one K whole lines and one not: only the ragged one gains the larger share
    rows = {k: {r["label"]: r["cost"] for r in choose.explain("sm90", 200, 11008, k)} for k in (3008, 3000)}
    uni = "10 bm=128 bn=224 bk=64 stages=5 split_k=1 evict_first_a=True"
    mc4 = "10 bm=128 bn=224 bk=64 stages=5 cluster_m=4 split_k=1 evict_first_a=True"
    assert rows[3000][mc4] / rows[3000][uni] < rows[3008][mc4] / rows[3008][uni] < 1


def test_a_big_partial_tile_reduces_faster_than_the_old_rate():
    """168x5120x13824: 192 x 176 split 4 (108 CTAs) ran 46.5 / 45.6 us in two runs, the 192 x 96 split 2 the old rate
    picked 56.8 / 56.9: the reduce's fixed part is larger (2 us) and its bytes go faster (3e4 B/us) than first fitted.
    (Since tokens go in steps of 8, 168 tokens in 168.)"""
    phase, cfg = choose.pick("sm90", 168, 5120, 13824)
    assert phase == "10" and (cfg.bm, cfg.bn, cfg.split_k) == (192, 168, 4)


def test_the_reduce_is_charged_for_at_most_80_kib_of_partial_tile():
    """Split configs of big tiles ran as fast as the model without its reduce term, so the reduce's bytes stop at
    ``reduce_max_bytes``. Its moved picks beside the old ones (H200, 2026-12-03): 251x4480x4864 one 256-token tile split
    3, 23.0 us against 26.0 for two 128-token tiles; 179x4608x4096 128 x 192 split 3, 16.8 against 18.8 (2 CTAs per SM of
    64 x 192); 162x9216x12288 192 x 176 split 2, 74.1 against 86.1 for 192 x 96 unsplit."""
    mc = choose.MACHINE
    assert mc.reduce_max_bytes == 80 * 1024
    # (179 and 162 tokens in 184 and 168 since token tiles go in steps of 8)
    for shape, tile in (((251, 4480, 4864), (128, 256, 3)), ((179, 4608, 4096), (128, 184, 3)),
                        ((162, 9216, 12288), (192, 168, 2))):
        phase, cfg = choose.pick("sm90", *shape)
        assert phase == "10" and (cfg.bm, cfg.bn, cfg.split_k) == tile, shape
    p10 = registry.get("sm90", "10")
    uncapped = dataclasses.replace(mc, reduce_max_bytes=float("inf"))
    shape = (251, 4480, 4864)
    big = p10.make(p10.configured({"bm": 128, "bn": 256, "bk": 64, "stages": 4, "split_k": 3}))  # 128 KiB of partials
    small = p10.make(p10.configured({"bm": 128, "bn": 128, "bk": 64, "stages": 7, "split_k": 2}))  # 64 KiB: below it
    cut = (128 * 256 * 4 - mc.reduce_max_bytes) / mc.dsmem_bytes_per_us
    assert choose.modelled_us(big, *shape, mc=uncapped) - choose.modelled_us(big, *shape) == pytest.approx(cut)
    assert choose.modelled_us(small, *shape, mc=uncapped) == choose.modelled_us(small, *shape)


def test_token_tiles_in_pairs_may_share_the_weights():
    """Phase 9's 64-token tiles in pairs multicast the 128-wide weight tile (128x8192x8192: 35.5 us against 36.8
    unicast): a candidate where the 64-token tiles pair up, modelled below its unicast twin in one wave, and among the
    six `cute-gemm tune` times at 128x8192x8192 -- but not where a pair would need a padded token tile."""
    shared, unicast = "9 bm=64 stages=8 cluster_m=2 split_k=1 use_pdl=True", "9 bm=64 stages=8 split_k=1 use_pdl=True"
    rows = choose.explain("sm90", 128, 8192, 8192)
    cost = {r["label"]: r["cost"] for r in rows}
    assert cost[shared] < cost[unicast]
    assert shared in [r["label"] for r in rows[:6]]
    for shape in ((64, 8192, 8192), (192, 5120, 8192), (512, 8192, 8192)):  # 1 or 3 tiles; past the decode regime
        assert not any(r["phase"] == "9" and r["config"].cluster_m > 1 for r in choose.explain("sm90", *shape)), shape


def test_token_tile_pairs_are_modelled_like_phase_10():
    """Where a pair holds every token unpadded (M = 128) it is phase 10's kernel unswapped with its 8-stage ring, so it
    takes phase 10's factor: at 128x8192x8192 it is the pick (35.4 us against 38.1 for the swapped 64 x 128 tile, H200 2026-12-03), and the
    factor is what moved it (without it the pair is modelled a tenth slower than the swapped tile)."""
    phase, cfg = choose.pick("sm90", 128, 8192, 8192)
    assert phase == "9" and (cfg.bm, cfg.bn, cfg.cluster_m, cfg.split_k) == (64, 128, 2, 1)
    plain = dataclasses.replace(choose.MACHINE, swap_factor=1.0)
    pair = registry.get("sm90", "9").make(cfg)
    assert choose.modelled_us(pair, 128, 8192, 8192) < 0.9 * choose.modelled_us(pair, 128, 8192, 8192, mc=plain)
    # padded token rows (104, 112, 240 tokens) or two pairs per weight tile (256): no factor, the swapped picks stay
    # (they ran 1.02-1.07x faster than the pairs there)
    for shape in ((104, 7680, 7680), (112, 6912, 2560), (240, 3072, 3072), (256, 3072, 3072)):
        assert choose.modelled_us(pair, *shape) == choose.modelled_us(pair, *shape, mc=plain), shape
        assert choose.pick("sm90", *shape)[0] == "10", shape


def test_each_token_tile_reads_the_weights_and_wide_single_warpgroup_tiles_cost_more():
    """Two terms fitted together, their picks timed beside the old ones at 21 shapes (11 named, 10 random; H200,
    2026-12-03, run_h200.sh reread2: 1.047x, faster at 17): phase 10's memory x (1 + 0.15 (t - 1)) for t token tiles,
    and one warpgroup's unsplit 64 x >= 224 tile x 1.1. 232x2048x5632 took one 240-token tile in 3 K ranges (14.5 us
    against 16.7 for two 128-token tiles) and 256x8192x8192 two 128-token tiles of 128 weight rows over one 64 x 256
    tile (53.7 / 53.0: the one that moved the wrong way, by 1.3%). With token tiles in steps of 8, 232x2048x5632 takes two
    120-token tiles split 2 by 0.03 us of model over one 232-token tile split 3: 15.4 us against 14.5 (tok8-4864), the one
    named shape measured moving the wrong way."""
    mc = choose.MACHINE
    assert mc.token_tile_reread == pytest.approx(0.15) and mc.wide_tile_factor == pytest.approx(1.1)
    phase, cfg = choose.pick("sm90", 232, 2048, 5632)
    assert phase == "10" and (cfg.bm, cfg.bn, cfg.split_k) == (64, 120, 2)
    phase, cfg = choose.pick("sm90", 256, 8192, 8192)
    assert phase == "10" and (cfg.bm, cfg.bn, cfg.split_k) == (128, 128, 1)
    p10 = registry.get("sm90", "10")
    flat = dataclasses.replace(mc, token_tile_reread=0.0, wide_tile_factor=1.0)
    two = p10.make(p10.configured({"bm": 64, "bn": 128, "bk": 64, "split_k": 2}))  # 232 tokens: 2 token tiles
    one = p10.make(p10.configured({"bm": 64, "bn": 240, "bk": 64, "stages": 5, "split_k": 3}))  # 1 token tile
    assert choose.modelled_us(two, 232, 2048, 5632) > choose.modelled_us(two, 232, 2048, 5632, mc=flat)
    assert choose.modelled_us(one, 232, 2048, 5632) == choose.modelled_us(one, 232, 2048, 5632, mc=flat)
    wide = p10.make(p10.configured({"bm": 64, "bn": 256, "bk": 64, "stages": 5, "split_k": 1}))
    shape = (256, 8192, 8192)  # 128 CTAs, one wave: swap_factor 0 leaves the launch and nothing of the body
    fixed = choose.modelled_us(wide, *shape, mc=dataclasses.replace(flat, swap_factor=0.0))
    body, flat_body = choose.modelled_us(wide, *shape) - fixed, choose.modelled_us(wide, *shape, mc=flat) - fixed
    assert fixed > 0 and body == pytest.approx(1.1 * flat_body)


def test_three_80_token_tiles_at_232_to_240_tokens_and_short_k():
    """232-240 tokens, K <= 5120: also three 80-token tiles of 128 weight rows (cuBLAS's arrangement; 1.14x over the old
    picks at 9 of 9 shapes chosen after the rule, H200 2026-12-03). Not with K >= 6144, more than 8 padded rows, or
    48- / 64-token tiles (136-192 tokens), where it measured slower."""
    for shape in ((232, 5120, 5120), (240, 4608, 4096), (236, 5632, 2048)):
        phase, cfg = choose.pick("sm90", *shape)
        assert phase == "10" and (cfg.bm, cfg.bn, cfg.split_k, cfg.cluster_m) == (128, 80, 1, 1), shape
        assert not cfg.evict_first_a  # three token tiles read each weight line three times
    for shape in ((236, 5120, 8192), (200, 5120, 5120), (224, 5120, 5120), (184, 4608, 3584), (144, 5120, 5120)):
        assert not any(r["phase"] == "10" and r["config"].bm == 128 and 3 * r["config"].bn >= shape[0] > 2 * r["config"].bn
                       for r in choose.explain("sm90", *shape)), shape


def test_three_88_token_tiles_at_241_to_256_tokens():
    """241-256 tokens, K <= 5120: three 88-token tiles of 128 weight rows (cuBLAS's arrangement), over clusters of 4 where
    the weight tiles fill whole clusters (1.067x over the old picks at 10 fresh shapes), unicast where they do not and
    K <= 2048 (1.055-1.063x at 3 shapes; mixed past it). A 88-token tile loads a 96-row box."""
    for shape in ((256, 4608, 2048), (254, 5120, 2560), (250, 5120, 5120), (256, 5120, 4096)):
        phase, cfg = choose.pick("sm90", *shape)
        assert phase == "10" and (cfg.bm, cfg.bn, cfg.split_k, cfg.cluster_m) == (128, 88, 1, 4), shape
        assert cfg.box_n() == 96 and not cfg.evict_first_a  # three token tiles read each weight line three times
    phase, cfg = choose.pick("sm90", 255, 4864, 2048)  # 38 weight tiles: no whole clusters of 4
    assert phase == "10" and (cfg.bm, cfg.bn, cfg.cluster_m) == (128, 88, 1)
    for shape in ((252, 4864, 3072), (252, 4352, 4096), (250, 5120, 8192), (240, 5120, 4096)):
        assert not any(r["config"].bn == 88 and r["config"].bm == 128 and r["phase"] == "10"
                       for r in choose.explain("sm90", *shape)), shape


def test_192_column_tiles_past_256_tokens():
    """257-512 tokens: phase 9's 128 x 192 tile, and up to 384 tokens phase 10's two 192-token tiles of 128 weight rows
    (both build within the smem budget); the swap is picked where two token tiles of 64 weight tiles fill one wave
    (384x8192x8192: 128 CTAs, where 128 x 256 tiles make 96)."""
    def kinds(m, n, k):
        return {(p, c["bm"], c["bn"]) for p, c in choose.split_candidates(m, n, k) if c["bn"] == 192}

    assert kinds(300, 8192, 4096) == {("9", 128, 192), ("10", 128, 192)}
    assert kinds(400, 8192, 4096) == {("9", 128, 192)} and kinds(256, 8192, 4096) == set()
    assert kinds(513, 8192, 4096) == set()
    for m in (257, 384, 512):
        for phase, over in choose.split_candidates(m, 8192, 4096):
            if over["bn"] == 192:  # (384 tokens: also the token halves, some two CTAs per SM)
                cfg = dataclasses.replace(registry.get("sm90", phase).default_config(), **over)
                ctas = over.get("ctas_per_sm", 1)
                assert cfg.stage_bytes() * over["stages"] * ctas <= 227 * 1024 and over["stages"] * ctas >= 4
                assert registry.get("sm90", phase).make(cfg).can_implement(m, 8192, 4096) == []
    phase, cfg = choose.pick("sm90", 384, 8192, 8192)
    assert (phase, cfg.bm, cfg.bn) == ("10", 128, 192)


def test_weight_tiles_of_256_rows_past_256_tokens():
    """257-512 tokens: phase 10's 256 weight rows (two consumer warpgroups of 128) x 2, 3 or 4 token tiles of at most
    144 tokens (the accumulators: 144 per thread + 24 fit the 168 registers a thread of 384 starts with; 152 do not),
    split 1 or 2; four tiles of 128 (481-512 tokens) are left out (they lost to phase 7). The pick at 288x14336x4096
    (2 x 56 tiles of 256 x 144: 56.1 us against 78.7 for phase 9's 128 x 192, H200, 2026-12-04), and not at
    298x14336x4096 (152 tokens a half: 128-row tiles, 62.8 against 73.1 for 4 x 56 of 256 x 80), 384x8192x8192 (where
    128-row tiles make 128 CTAs) nor 512x8192x8192 (four tiles of 128 are left out)."""
    def tiles(m, n=8192, k=4096):
        return {(c["bn"], c["split_k"]) for p, c in choose.split_candidates(m, n, k) if p == "10" and c["bm"] == 256}

    assert tiles(288) == {(144, 1), (144, 2), (96, 1), (96, 2), (72, 1), (72, 2)}
    assert tiles(300) == {(104, 1), (104, 2), (80, 1), (80, 2)}  # 152 tokens in two tiles: past the registers
    assert tiles(480) == {(120, 1), (120, 2)} and tiles(512) == set() and tiles(256) == set() and tiles(513) == set()
    assert choose._fits_registers(256, 144, 1) and not choose._fits_registers(256, 152, 1)
    for m in (257, 300, 433, 480):
        for phase, over in choose.split_candidates(m, 8192, 4096):
            if phase == "10" and over["bm"] == 256:
                cfg = dataclasses.replace(registry.get("sm90", phase).default_config(), **over)
                assert cfg.stage_bytes() * over["stages"] <= 227 * 1024 and over["stages"] >= 4
                assert registry.get("sm90", phase).make(cfg).can_implement(m, 8192, 4096) == []
    phase, cfg = choose.pick("sm90", 288, 14336, 4096)
    assert (phase, cfg.bm, cfg.bn, cfg.split_k) == ("10", 256, 144, 1)
    phase, cfg = choose.pick("sm90", 298, 14336, 4096)
    assert (phase, cfg.bm, cfg.bn, cfg.split_k) == ("10", 128, 152, 1)
    assert choose.pick("sm90", 384, 8192, 8192)[1].bm == 128
    phase, cfg = choose.pick("sm90", 512, 8192, 8192)  # the token halves in 128 x 256 tiles: 95.8 us, phase 7 96.4
    assert (phase, cfg.bm, cfg.bn) == ("10", 128, 256)


def test_a_persistent_kernel_of_one_round_launches_like_a_data_parallel_one():
    """With programmatic dependent launch and a one-round schedule, phase 7's launch is charged as phase 9's, so at
    1024x4096x4096 (64 cluster tiles for 66 clusters) the tie with phase 9's 128 x 256 tile goes to phase 7; two rounds
    (2048x4096x4096) or no PDL keep the persistent launch's charge."""
    mc = choose.MACHINE
    p7 = registry.get("sm90", "7")
    pdl, plain = p7.make(p7.configured({"use_pdl": True})), p7.make(p7.default_config())
    assert choose.modelled_us(plain, 1024, 4096, 4096) - choose.modelled_us(pdl, 1024, 4096, 4096) == pytest.approx(
        mc.persistent_launch_us + mc.no_pdl_us - mc.persistent_one_round_us)
    p9 = registry.get("sm90", "9")
    tile = p9.make(p9.configured({"bn": 256, "stages": 4, "split_k": 1, "use_pdl": True}))
    assert choose.modelled_us(pdl, 1024, 4096, 4096) == pytest.approx(choose.modelled_us(tile, 1024, 4096, 4096))
    assert choose.pick("sm90", 1024, 4096, 4096)[0] == "7"
    other = dataclasses.replace(mc, persistent_one_round_us=mc.persistent_one_round_us + 5.0)
    for shape, rounds in (((1024, 4096, 4096), 1), ((2048, 4096, 4096), 2)):
        moved = choose.modelled_us(pdl, *shape, mc=other) - choose.modelled_us(pdl, *shape)
        assert moved == pytest.approx(5.0 if rounds == 1 else 0.0), shape
        assert choose.modelled_us(plain, *shape, mc=other) == pytest.approx(choose.modelled_us(plain, *shape)), shape


def test_cluster_sizes_not_measured_count_as_the_next_larger():
    """A config given by hand may ask for clusters of 5 or 7 (split_k=5): the model counts them as the next measured
    size (17 of 6, 15 of 8), never a KeyError; measured sizes keep their counts."""
    assert [choose.clusters_that_fit(s) for s in range(1, 9)] == [132, 66, 39, 30, 17, 17, 15, 15]
    kern = registry.get("sm90", "10").make(registry.get("sm90", "10").configured(
        {"bm": 192, "bn": 128, "bk": 64, "stages": 5, "split_k": 5}))
    assert choose.modelled_us(kern, 128, 4096, 14336) > 0


def test_weights_evict_first_where_one_tile_of_128_or_more_rows_holds_every_token():
    """Phase 10's weights evict-first in L2 (a policy the cost leaves alone): on where a weight tile of >= 128 rows
    holds every token (160x9728x4096 28.5 against 29.8 us, 120x6144x16384 60.0 / 61.1; 192x5120x27648's 192-token
    tile), off where two token tiles read each weight line twice (192x5120x27648 in 192 x 96 tiles 116.1 / 111.6;
    256x8192x8192's 128 x 128 tiles) and for 64-row tiles (128x4096x14336: slower in three of four runs; 112 tokens
    here, 128 take phase 9's deep pair); the PTX has the policy's operand only where it is on."""
    for shape in ((160, 9728, 4096), (120, 6144, 16384), (128, 14336, 4096), (200, 11000, 3000), (16, 14336, 4096),
                  (192, 5120, 27648)):
        phase, cfg = choose.pick("sm90", *shape)
        assert phase == "10" and cfg.bm >= 128 and cfg.bn >= shape[0] and cfg.evict_first_a, shape
    for shape in ((256, 8192, 8192), (112, 4096, 14336), (16, 4096, 4096)):
        phase, cfg = choose.pick("sm90", *shape)  # None: phase 10's defaults (16 tokens, 64 rows, split 2)
        assert phase == "10" and not (cfg or registry.get("sm90", "10").default_config()).evict_first_a, shape
    for r in choose.explain("sm90", 232, 11008, 4096):
        if r["phase"] == "10":
            assert r["config"].evict_first_a == (r["config"].bm >= 128 and r["config"].bn >= 232), r["label"]
            twin = dataclasses.replace(r["config"], evict_first_a=not r["config"].evict_first_a)
            assert choose.modelled_us(registry.get("sm90", "10").make(twin), 232, 11008, 4096) == pytest.approx(r["cost"])


def test_a_pick_is_a_lookup_after_the_first():
    choose.pick("sm90", 48, 8192, 8192)
    t0 = time.perf_counter()
    for _ in range(1000):
        choose.pick("sm90", 48, 8192, 8192)
    assert (time.perf_counter() - t0) / 1000 < 5e-6


def test_token_halves_past_256_tokens():
    """257-512 tokens: phase 10's two token halves (steps of 8 and 16, at most 256 each) with every weight-tile height,
    split and residency the 129-256-token tiles take -- the one-tile widths stop at 256 tokens. At 267x2048x4096 one
    weight row of 64 x 136 tiles in two halves, split 2 (13.1 us against phase 7's 25.8, cuBLAS 13.3; H200, 2026-12-04)."""
    def widths(m):
        return {c["bn"] for p, c in choose.split_candidates(m, 4096, 4096) if p == "10" and c["bm"] in (64, 128, 192)}

    # the halves, phase 10's 128 x 192 of the 192-column rule, and the thirds (the test below): 104, 96, 176
    assert widths(300) == {104, 152, 160, 192}
    assert widths(267) == {96, 136, 144, 192} and widths(512) == {176, 256} and widths(513) == set()
    assert max(widths(257) - {192}) <= 144 and 256 in {c["bn"] for p, c in choose.split_candidates(256, 4096, 4096)}
    phase, cfg = choose.pick("sm90", 267, 2048, 4096)
    assert (phase, cfg.bm, cfg.bn, cfg.split_k) == ("10", 64, 136, 2)


def _picked(shape):
    phase, cfg = choose.pick("sm90", *shape)
    return phase, cfg is not None and registry.get("sm90", phase).overrides(cfg)


def test_the_deep_pair_at_113_to_128_tokens():
    """113-128 tokens in two 64-token tiles of phase 9 with 128-deep k-tiles, unsplit, where its CTAs fill the SMs (the
    model prices the pair at the MMA rate of its 128 tokens, with phase 10's factor); not at 96 tokens (the second tile
    half padding: it lost, 15.3 us against 12.3) nor at 128x2048x8192 (64 CTAs: it lost, 15.6 against 14.1)."""
    deep = {"bm": 64, "bn": 64, "bk": 128, "stages": 7, "split_k": 1, "use_pdl": True}
    for shape in [(128, 4096, 4096), (128, 4096, 14336), (120, 2560, 8192), (113, 4096, 5120), (128, 3072, 4096)]:
        assert _picked(shape) == ("9", deep), shape
    for shape in [(96, 4096, 4096), (112, 4096, 4096), (128, 2048, 8192)]:
        assert _picked(shape) != ("9", deep), shape
    # the pair's price is its own: the same tile with 64-deep k-tiles, a split or a multicast, or past 128 tokens, is
    # priced by the plain terms (the pair at 128x4096x4096: 12.0 us modelled, 16.0 plain; measured 11.7)
    entry = registry.get("sm90", "9")

    def modelled(over, m=128):
        return choose.modelled_us(entry.make(entry.configured({**deep, **over})), m, 4096, 4096)

    assert modelled({}) < 0.8 * modelled({"bk": 64, "stages": 8})
    assert not any(choose._deep_pair(128, 64, 64, 128, cm, split) for cm, split in ((2, 1), (1, 2)))
    assert not choose._deep_pair(129, 64, 64, 128, 1, 1) and choose._deep_pair(113, 64, 64, 128, 1, 1)


def test_three_token_tiles_past_256_tokens():
    """Past 256 tokens the tokens may sit in three tiles of phase 10 (cuBLAS's arrangements there), unicast: 434x5120x6144
    in 3 x 40 tiles of 128 x 152 (42.8 us against phase 8's 49.1); 300x4096x4096, where three tiles of 104 lost, keeps
    its two halves."""
    assert _picked((434, 5120, 6144)) == ("10", {"bm": 128, "bn": 152, "bk": 64, "stages": 6, "split_k": 1})
    assert _picked((300, 4096, 4096))[1]["bn"] == 152
    for m, n, k in [(434, 5120, 6144), (480, 5120, 5120), (259, 2560, 7168), (300, 4096, 4096)]:
        third = choose._ceil(choose._ceil(m, 3), 8) * 8
        thirds = [c for p, c in choose.split_candidates(m, n, k) if p == "10" and c["bn"] == third]
        assert thirds and all(c["cluster_m"] == 1 for c in thirds), (m, n, k)


def test_prefill_shapes_take_the_persistent_phases_and_short_k_the_ping_pong():
    """Past 512 rows phase 9's data-parallel tiles are offered only where they fit one wave (its 128 x 256 tile in two
    waves ran 3-7% behind phase 7's at 2048x4096x4096 and 8192x1024x4096, H200); phases 6-7 pay each tile round's
    exposed epilogue, which phase 8's ping-pong hides, so at short K (few k-tiles per tile) phase 8 wins."""
    bf = Operands.of("nt", "bf16", "bf16")
    assert choose.pick("sm90", 2048, 4096, 4096, bf)[0] == "7"
    assert choose.pick("sm90", 8192, 1024, 4096, Operands.of("tn", "bf16", "fp32"))[0] == "7"
    for shape, ops in (((4096, 8192, 1024), bf), ((8192, 5632, 2048), bf),
                       ((11008, 4096, 1024), Operands.of("tn", "bf16", "fp32"))):
        assert choose.pick("sm90", *shape, ops)[0] == "8", shape
    for m in (1024, 4096):
        for phase, over in choose.split_candidates(m, 4096, 4096):
            if phase == "9":
                tiles = -(-m // over["bm"]) * -(-4096 // over["bn"]) * over["split_k"]
                assert tiles <= choose.clusters_that_fit(over["split_k"]) * over["split_k"], (m, over)
    # the term itself: one more round of phase 7 costs the epilogue, phase 8's cost has none
    p7, p8 = (registry.get("sm90", p).make(registry.get("sm90", p).configured({"use_pdl": True}), bf) for p in "78")
    short = choose.modelled_us(p7, 4096, 8192, 1024) - choose.modelled_us(
        p7, 4096, 8192, 1024, mc=dataclasses.replace(choose.MACHINE, epilogue_round_us=0.0))
    assert short > 3.0
    assert choose.modelled_us(p8, 4096, 8192, 1024) == choose.modelled_us(
        p8, 4096, 8192, 1024, mc=dataclasses.replace(choose.MACHINE, epilogue_round_us=0.0))


def test_phase_8_takes_the_deeper_ring_where_c_is_16_bit_and_wide_bands_up_to_k_4096(monkeypatch):
    """RING5: best's phase 8 with a 16-bit C has 5 stages (an fp32 C's staging leaves room for 4: the row is refused)
    in raster bands of 16 M-tiles up to K = 4096 (8 past it); priced as the default, it moves no pick between
    phases -- the picked phase at every shape of a grid is the one picked without it."""
    bf, tn32 = Operands.of("nt", "bf16", "bf16"), Operands.of("tn", "bf16", "fp32")
    for (m, n, k), band in (((4096, 8192, 1024), 16), ((8192, 5632, 2048), 16), ((512, 6144, 4096), 16),
                            ((5632, 2048, 8192), 8), ((2048, 5632, 8192), 8)):
        phase, cfg = choose.pick("sm90", m, n, k, Operands.of("tn" if k == 8192 else "nt", "bf16", "bf16"))
        assert (phase, cfg.stages, cfg.group_m, cfg.use_pdl) == ("8", 5, band, True), (m, n, k)
    phase, cfg = choose.pick("sm90", 11008, 4096, 1024, tn32)
    assert (phase, cfg.stages, cfg.group_m) == ("8", 4, 8)
    grid = [(m, n, k) for m in (512, 2048, 8192) for n in (2048, 5632, 11008) for k in (1024, 4096, 8192)]
    with_ring5 = {s: choose.pick("sm90", *s, bf)[0] for s in grid}
    monkeypatch.setitem(choose.PERSISTENT, "sm90", tuple(c for c in choose.PERSISTENT["sm90"] if c[1] is not choose.RING5))
    choose.pick.cache_clear()
    try:
        assert {s: choose.pick("sm90", *s, bf)[0] for s in grid} == with_ring5
        assert "8" in with_ring5.values() and "7" in with_ring5.values()
    finally:
        choose.pick.cache_clear()


def test_the_model_says_where_it_cannot_rank_two_phases():
    """Phases whose cheapest candidates lie within CLOSE_CALL of the pick are named (``cute-gemm tune`` settles them);
    a clear pick names none, and the pick itself is never among them."""
    bf = Operands.of("nt", "bf16", "bf16")
    for shape in ((1024, 11008, 4096), (1024, 4096, 4096), (2048, 4096, 4096), (16, 4096, 4096), (4096, 8192, 1024)):
        rows = choose.explain("sm90", *shape, bf)
        close = choose.close_calls("sm90", *shape, bf)
        assert rows[0]["label"] not in close
        cheapest = {}
        for r in rows:
            cheapest.setdefault(r["phase"], r)
        expect = [r["label"] for p, r in cheapest.items()
                  if p != rows[0]["phase"] and r["cost"] <= rows[0]["cost"] * (1 + choose.CLOSE_CALL)]
        assert sorted(close) == sorted(expect), shape
    assert choose.close_calls("sm90", 1024, 4096, 4096, bf) == ["9 bn=256 stages=4 split_k=1 use_pdl=True"]
    assert choose.close_calls("sm90", 2048, 4096, 4096, bf) == []
    # phase 8 in its fitted width is picked only where it is CLOSE_CALL ahead: nothing is close to it
    assert choose.close_calls("sm90", 1024, 11008, 4096, bf) == []


def test_fitted_width_is_phase_8_where_its_rounds_hold_less_work():
    """``fitted_width``: phase 8 in the width of FITTED_WIDTHS whose rounds of tiles give the busiest SM the least work,
    where that is FITTED_GAIN below 192's. 1024 x 11008 (the prefill set's lowest shape, 0.89-0.92 of cuBLAS): 464 tiles
    of 192 in 4 rounds (the last half empty) against 504 of 176 in 4 full ones; 8192 x 18944 (48 full rounds of 192)
    keeps 192. Only with B K-major (the forward's nt): an N-major B tile of 144 or 176 columns does not fill its
    64-column swizzle atoms, and ran 0.56-0.75 of 192 in dX's nn and dW's tn (H100). Each width's config passes phase 8's
    rules (the PTX machine runs them: test_sm90_sim's 16-column slabs)."""
    e8 = registry.get("sm90", "8")
    nt = Operands.of("nt", "bf16", "bf16")
    fitted = choose.fitted_width("sm90", 1024, 11008, 4096, nt)
    assert fitted == {"bn": 176, "epi_n": 16, "epi_stages": 11, "use_pdl": True}
    assert choose.fitted_width("sm90", 8192, 18944, 3584, nt) is None
    assert choose.fitted_width("sm100", 1024, 11008, 4096, nt) is None
    assert choose.fitted_width("sm90", 2048, 3584, 18944, nt)["bn"] == 160
    for layout in ("nn", "tn"):  # B N-major: dX's and dW's layouts, and the worklog's (operands None)
        assert choose.fitted_width("sm90", 1024, 11008, 4096, Operands.of(layout, "bf16", "bf16")) is None
    assert choose.fitted_width("sm90", 1024, 11008, 4096) is None
    for bn in choose.FITTED_WIDTHS:
        assert not e8.config_problems(e8.configured(choose.fitted_overrides(bn)))


def test_a_fitted_width_is_priced_by_the_smem_bytes_its_macs_read():
    """``fitted_factor``: phase 8's factor at its 192, and above it by the ratio of (1/bn + 1/128), the smem operand
    elements a MAC reads: 8% at 160, 4% at 176. The narrower the tile, the more it reads per MAC."""
    assert choose.fitted_factor(192) == pytest.approx(choose.PHASE8_FACTOR)
    assert choose.fitted_factor(160) == pytest.approx(choose.PHASE8_FACTOR * 1.08)
    assert choose.fitted_factor(176) == pytest.approx(choose.PHASE8_FACTOR * (1 / 176 + 1 / 128) / (1 / 192 + 1 / 128))
    assert choose.fitted_factor(144) > choose.fitted_factor(160) > choose.fitted_factor(176) > choose.fitted_factor(192)


def test_best_picks_a_fitted_width_only_where_the_model_ranks_it_ahead_beyond_its_resolution():
    """``fitted_row``: phase 8 in its fitted width joins ``explain`` (and so ``pick``) where the width is 160 or 176
    and its modelled cost, with ``fitted_factor``, is CLOSE_CALL below every other candidate's. On an H100 that holds
    at 1024x11008x4096 (176: 0.96-0.97 of the vendor against 0.92 for phases 7 and 8 at their defaults). At
    2048x3584x18944 (K long) 160 ran 0.93 and phase 7's 128x256 0.98: the narrower tile's smem reads price it out, and
    best picks phase 7. Nowhere it ran slower is it picked (2048x4096x4096, 16384x1280x8192, 144 wide at
    4096x8192x1024). Elsewhere the width stays ``explore``'s, and the pick is the other candidates' cheapest."""
    nt = Operands.of("nt", "bf16", "bf16")
    picks = {shape: choose.pick("sm90", *shape, nt) for shape in
             [(1024, 11008, 4096), (2048, 3584, 18944), (2048, 4096, 4096), (16384, 1280, 8192), (4096, 8192, 1024)]}
    assert picks[(1024, 11008, 4096)][0] == "8" and picks[(1024, 11008, 4096)][1].bn == 176
    assert picks[(2048, 3584, 18944)][0] == "7"
    for shape in [(2048, 3584, 18944), (2048, 4096, 4096), (16384, 1280, 8192), (4096, 8192, 1024)]:
        cfg = picks[shape][1]
        assert cfg is None or cfg.bn not in choose.FITTED_WIDTHS, shape
        assert choose.fitted_width("sm90", *shape, nt) is not None, shape  # offered, not picked
    # offered to `cute-gemm tune --explore` where it is not picked
    assert 160 in {r["config"].bn for r in choose.explore("sm90", 2048, 3584, 18944, nt) if r["phase"] == "8"}
    shape = (1024, 11008, 4096)
    rows = choose.explain("sm90", *shape, nt)
    assert rows[0]["config"].bn == 176 and rows[0]["cost"] <= rows[1]["cost"] * (1 - choose.CLOSE_CALL)
    assert 176 not in {r["config"].bn for r in choose.explore("sm90", *shape, nt) if r["phase"] == "8"}
    assert choose.fitted_row("sm90", rows[1:], *shape, nt)["config"] == rows[0]["config"]
    # B N-major (dX's nn) and sm100: no fitted row; with accumulate (C += A @ B) the fitted pick keeps it on
    assert choose.pick("sm90", 1024, 11008, 4096, Operands.of("nn", "bf16", "bf16"))[1].bn not in choose.FITTED_WIDTHS
    acc = choose.pick("sm90", 1024, 11008, 4096, nt, accumulate=True)[1]
    assert acc.bn == 176 and acc.accumulate
