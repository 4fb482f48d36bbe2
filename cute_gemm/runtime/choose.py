"""``phase="best"``: pick a phase and config per shape, as a vendor library's heuristic does.

No single kernel wins everywhere. Big problems want the persistent 128x256 / 128x192 tiles of phases 7
and 8 (fewest bytes per FLOP, epilogue hidden); a few tokens times a weight (M <= 512) want phase 10's
swap-AB tiles (64, 128, 192 or 256 weight rows x the tokens, in 1-4 token tiles), which stream the weights at the
memory's bandwidth;
small or starved problems want phase 9's small tiles, split-K and programmatic dependent launch. So
``pick`` enumerates candidates (phase, config) and ranks them by a model of their time, in
microseconds, with constants fitted to measurements on the H200 (``MACHINE``; the measured candidates
are ``bench/results/h200_*_best_candidates*.json``, the fit and its report ``bench/fit_best.py``):

    time = launch + (waves - 1) x wave + (max(mma, memory) + overlap x min(mma, memory)) [x swap_factor]
           [x (1 + split_body) for a split]
           + waves x [split > 1] x (split_us + partial tile bytes / dsmem_rate)   [phases 9, 10]

(``swap_factor``: phase 10 in one wave; the fits found the model 5-15% slow on it; ``split_body``: a split
CTA's k-loop runs slower than a whole one's; ``mcast_gain``: phase 10's
token tile multicast over ``cluster_m`` weight tiles, one wave, every token in the shared tile, x (1 - g (1 -
1/cluster_m)), g = 0.08, or 0.25 where the token rows are not whole 128-B lines; phase 9's weight tile shared by two
64-token tiles, in one wave, x (1 - 0.08 / 2), and x ``swap_factor`` where the pair holds every token unpadded (M = 128):
phase 10's kernel unswapped, with its deep ring; phase 10's memory term x (1 + 0.15 (t - 1)) where the tokens take t
token tiles, each streaming the weights again, and one warpgroup's unsplit 64 x >= 224 tile x 1.1.) Besides
the fixed tile families, phase 9 gets a **wave-fitted** tile at 96 < M <= 128: 128 rows by the narrowest
width that puts all tiles in one wave of the GPU (``wave_fitted_bn``), and at 65-256 tokens in an even number of
64-token tiles those tiles in pairs multicasting the 128-wide weight tile (``cluster_m=2``); phase 10's token tiles hold the tokens
in steps of 8 (``token_tiles``: and past 64 tokens also in a multiple of 32), with a second token tile
past 128 tokens, the multicast over 2 or 4 weight tiles for token tiles of 128 or more (K <= ``MCAST_MAX_K``), two CTAs per
SM with 64-deep k-tiles where 128-deep ones leave too short a ring, 192-row weight tiles (three consumer
warpgroups) for token tiles of 96 or more, 3-way splits for token tiles of 128 or more, and at 232-240 tokens with
K <= 5120 three 80-token tiles of 128 weight rows, at 241-256 three 88-token tiles (cuBLAS's arrangements there; over
clusters of 4 where the weight tiles fill whole clusters, else unicast up to K = 2048). Past 256 tokens (up to 512)
tiles of 192 columns: phase 9's 128 x 192, and up to 384 tokens phase 10's two 192-token tiles. A persistent phase
whose schedule is one round, with PDL, is charged a data-parallel launch (``persistent_one_round_us``). Phase 10's
weight tiles of 128 or 192 rows whose token tile holds every token load the weights evict-first in L2
(``evict_first_a``: each weight line is read once; 1.02x at 12 random shapes, H200): a policy, not a term of the cost.

The model was checked on shapes chosen *after* each fit and measured once (``cute-gemm bench --set
heldout`` ... ``heldout10``), and where a refit moved picks, old and new were timed side by side, also at random
shapes (``bench/run_h200.sh model6-sample``): that, not the fit, is the evidence for shapes nobody listed.
``bench/candidates.py`` measures the cheapest candidates of any shapes side by side (what a refit reads).

- ``mma``: the busiest SM's MMA work, waves x (CTAs sharing an SM) x one CTA's padded FLOPs / rate; a
  CTA whose tile is narrower than 256 columns per warpgroup issues smaller wgmma and runs slower
  (x (width / 256)^0.5);
- ``memory``: A + B + C bytes over the HBM bandwidth, slowed when the resident CTAs' rings hold fewer
  bytes in flight than the memory needs to stay busy;
- waves: CTAs over the co-resident CTAs (clusters of 4 and 8 fit only 30 and 15 per GPU on an H200);
- a split's reduce: a fixed part plus the partial tile's bytes over DSMEM, at most ``reduce_max_bytes`` of them;
- the persistent phases: rounds of tiles from their own ``schedule`` (stream-K halves the last one).
Why a model and not a table of measured shapes: it answers for shapes nobody measured (any M, N, K,
any layout), costs one evaluation per candidate once per shape, and its constants are few and physical;
a wrong pick shows up in ``cute-gemm bench --best`` beside the other candidates.

``pick`` caches its answer per (shape, operands): after the first call of a shape it is a dict lookup.
``resolve`` is what ``phase="best"`` runs: the config ``cute-gemm tune`` measured fastest for the shape on this
GPU when its table holds one (``tuned``), else ``pick``'s.
``explain`` gives every candidate with its modelled time (``cute-gemm bench`` prints which config
"best" chose).
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache

from cute_gemm.runtime import registry, tuned


@dataclasses.dataclass(frozen=True)
class Machine:
    """The model's constants (H200 SXM under load, fitted to the 2026-12-01 measurements; the co-resident
    clusters per size measured on 2026-12-02 with ``cudaOccupancyMaxActiveClusters``)."""

    sms: int = 132
    mma_flop_per_us: float = 7.0e6  # one SM's wgmma rate with 256-wide tiles (1.7 GHz x 4096 FLOP/clk)
    narrow_exponent: float = 0.5  # rate x (tile width per warpgroup / 256)^this
    hbm_bytes_per_us: float = 4.35e6
    # phase 10, one wave, a >= 128-token tile multicast over cluster_m weight tiles: x (1 - this (1 - 1/cluster_m)).
    # Against its unicast twin (same tile, H200, 2026-12-01/03): 1.017x geomean at 30 pairs whose token rows are whole
    # 128-B lines (0.91-1.09 but one; 232x11008x4096's pick over 4 ran 45.1 us, 192 x 128 tiles unicast 39.1), 1.15-1.27x
    # at all 4 whose rows are not (K x 2 B not a multiple of 128: every row of the token box touches one more L2
    # sector, and the multicast loads the box once, not cluster_m times: 200x11000x3000 30.4 us against 38.8,
    # 200x11008x3000 30.0 / 34.5, 176x14336x2600 26.8 / 33.6)
    mcast_gain: float = 0.08
    mcast_gain_ragged_rows: float = 0.25
    inflight_for_full_bw: float = 16e6  # bytes the resident rings must hold to keep the HBM busy
    launch_us: float = 1.4  # launch, prologue, pipeline fill, epilogue of one CTA
    wave_us: float = 2.0  # each further wave of CTAs
    overlap: float = 0.6  # the smaller of mma/memory that does not hide under the larger
    # phase 10's time against the model's (its deep ring overlaps more): 0.95 fitted on 2026-12-01/02; 0.85 is the refit
    # to those files alone, which picked better at 40 shapes of 72-248 tokens measured after them (2026-12-03)
    swap_factor: float = 0.85
    # phase 10 with the tokens in t > 1 token tiles: each token tile streams the weights again, and L2 catches most but
    # not all of the re-reads: memory x (1 + this (t - 1)); and one consumer warpgroup's unsplit 64 x >= 224 tile, whose
    # time the model underrated by about 13% across every measured file: x wide_tile_factor. Fitted together after
    # run_h200.sh reread (fit_best 0.9885 -> 0.9912 over 196 shapes); their picks, timed beside the old ones at 11 named
    # and 10 random shapes not in the fit (run_h200.sh reread2, H200, 2026-12-03): 1.047x, faster at 17 of 21
    token_tile_reread: float = 0.15
    wide_tile_factor: float = 1.1
    # a split-K reduction, per wave: a fixed part (cluster barriers, the partial tile's trip through smem) and the partial
    # tile's bytes over DSMEM. 0.3 us + 2e4 B/us overcharged big tiles (refit 2026-12-03 with 168x5120x13824: 192 x 176
    # split 4 ran 46.5 us, the model said 57.0 and picked 192 x 96 split 2, 56.8)
    # The reduce is charged for at most reduce_max_bytes of partial tile: split configs of tiles past that (128 x 256,
    # 192 x 128 and larger) measured as fast as the model without its reduce term (measured / that model: 0.99 over 133
    # rows; a cheaper reduce for every tile moved picks at 1-150 tokens the wrong way). With the cap, the picks that
    # moved, timed beside the old ones at shapes never measured (drawn from 4000 random ones of 1-256 tokens, 74 moved;
    # three more of 241-256 tokens): 1.056x at 19 (faster at 14, 0.957-1.162; over the vendor 0.941 -> 0.993), and
    # 1.058x at 14 more (faster at 13, 0.974-1.155; 0.952 -> 1.007) (run_h200.sh region256, reduce-cap, reduce-cap2;
    # H200, 2026-12-03)
    split_us: float = 2.0
    dsmem_bytes_per_us: float = 3.0e4
    reduce_max_bytes: float = 80 * 1024
    split_body: float = 0.05  # a split CTA's k-loop against a whole one's (see modelled_us)
    no_pdl_us: float = 0.3  # what a launch without programmatic dependent launch pays more
    persistent_launch_us: float = 4.0  # the persistent phases' fixed cost
    # ... where the schedule is one round and the launch is programmatic (PDL): a data-parallel launch's (launch_us).
    # Phase 7's body is then phase 9's of the same tile, so the two costs tie and the tie goes to phase 7 (``rank``;
    # it adds the pairs' B multicast and the TMA-store epilogue). Phase 7 ran fastest at all five one-round
    # shapes where both were measured (1024x4096x4096 48.3 us against 49.2, 512x8192x8192 95.2 / 96.2, 2048^3 26.7 /
    # 27.5, 512x4096x4096 26.7 / 27.0, 512x4096x14336 86.6 / 86.9); the 10 picks this moved, beside the old ones, cold
    # L2: 1.013x, faster at 7, within 1% at the rest (H200, 2026-12-03, run_h200.sh oneround)
    persistent_one_round_us: float = 1.4
    # co-resident clusters per size (GPCs of unequal size: 39 of 3, not 44): a 3-way split of 40 tiles is two waves
    clusters_that_fit: tuple = ((1, 132), (2, 66), (3, 39), (4, 30), (6, 17), (8, 15))


MACHINE = Machine()

# token tiles of phase 10 (the MMA's N), in steps of 8: a tile of 8 x an odd number (24, 40, ..., 88, 104, ...) loads a
# TMA box 8 rows taller than the MMA reads (``box_rows``; the DSL 4.8.1 compiler aborts building its own box), so its
# ring holds those rows and its MMA does not. Phase 10's token tile is K-major (the rows of A), so its swizzle does not
# depend on the width: the 32-step of phase 9's N-major bn does not apply. Padded token rows are wgmma work: 144 rows
# in 144 against 160 measured 394.7 against 369.7 TFLOP/s at 144x9216x3584, 454.4 against 406.1 at 144x6144x6144,
# 421.1 against 380.7 at 136x8192x3072, 240 in 3 K ranges against two 128-token tiles 370.3 against 322.3 at
# 232x2048x5632; 184 in 184 against 192 (192 weight rows, split 2) 55.6 against 59.8 us at 184x10240x8192, three
# 88-token tiles against three of 96 21.0 against 21.9 us at 256x5120x4096 (H200, same runs)
TOKEN_TILES = tuple(range(8, 257, 8))


def box_rows(bn: int) -> int:
    """The token rows phase 10's ring holds per stage for a ``bn``-token tile (its config's ``box_n``)."""
    return registry.get("sm90", "10").config_cls(bn=bn).box_n()


def token_tiles(m: int) -> list[int]:
    """The token tiles that hold ``m`` tokens in one: the narrowest (steps of 8), the narrowest in steps of 16 (what
    the tiles were before 8 x odd ones could be built: the same ring bytes and more MMA work, so never cheaper, but the
    candidate the measured files hold), and past 64 tokens also the narrowest multiple of 32 (what the multicast over 4
    weight tiles needs: 8-row slices of bn / 4; 200x11000x3000 in 128 x 224 over 4 ran 431.8 TFLOP/s, 128 x 208 over 2
    428.7, the narrowest alone lost to both)."""
    fine = next(t for t in TOKEN_TILES if t >= m)
    even = next(t for t in TOKEN_TILES if t >= m and (t == 8 or t % 16 == 0))
    wide = next(t for t in TOKEN_TILES if t >= m and (t <= 64 or t % 32 == 0))
    return sorted({fine, even, wide})


SMEM_BYTES = 227 * 1024 - 2048  # a CTA's ring budget (barriers and alignment aside)
# phase 10's K ranges per tile. 3 (clusters of 3: 39 fit on an H200) only for token tiles of 128 or more, where
# it measured faster (232x4608x9216: 36 x 3 CTAs of 128 x 256, 36.9 us against 48.2 for the best without it);
# with narrower token tiles (memory-bound) it lost to the 2- and 4-way splits (1x4096x14336: 32.0 against 28.1)
SPLITS = (1, 2, 3, 4)
# phase 10's token multicast only where K <= this: it won by a margin at 4 shapes of K <= 5120 (200x11000x3000: 0.87x
# the best unicast) and at none of 21 with K >= 6144 (216x10240x8192: 74.9 us against 64.4 for 192 x 112 tiles)
MCAST_MAX_K = 5120
PDL_MAX_FLOP = 40e9  # above this, programmatic dependent launch measured no better (or worse)

# the persistent phases' candidates: (phase, config overrides, time factor); phase 8's epilogue hides
# under the other warpgroup's MMAs (Nsight Compute, 8192^3: tensor pipe busy 96% vs 92%). sm90's run with
# programmatic dependent launch: the next launch takes each SM as this one's CTA leaves it (1024x4096x4096
# sustained: phase 7 610 TFLOP/s against 600 without, cuBLAS 603, cuBLASLt 614; 3072^3 phase 8 706 against 699;
# 8192^3 within the noise either way); sm100's persistent phases take it the same way (compile- and
# machine-checked only: no Blackwell GPU measured it)
_PDL = {"use_pdl": True}
PERSISTENT = {
    "sm90": (("7", _PDL, 1.0), ("7", {"bn": 192, **_PDL}, 1.03), ("7", {"bn": 128, "stages": 6, **_PDL}, 1.08),
             ("8", _PDL, 0.98)),
    "sm100": (("7", _PDL, 1.0),),
}
_PERSISTENT_PHASES = frozenset(phase for cands in PERSISTENT.values() for phase, _, _ in cands)


def clusters_that_fit(size: int, mc: Machine = MACHINE) -> int:
    """Co-resident clusters of ``size`` CTAs: the measured count, or for a size not measured (5, 7: a config given
    by hand) the count of the next larger measured size (as many clusters at least fit as of bigger ones)."""
    return next(count for s, count in sorted(mc.clusters_that_fit) if s >= size)


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _stages(bm: int, bn: int, bk: int, ctas: int, cap: int = 8) -> int:
    return min(cap, (SMEM_BYTES // ctas) // ((bm + box_rows(bn)) * bk * 2))


def _deep_pair(m: int, bm: int, bn: int, bk: int, cm: int, split: int) -> bool:
    """Phase 9's 64 x 64 tile with 128-deep k-tiles holding 113-128 tokens in two token tiles, unicast and unsplit (at
    most 15 of the 128 token rows padding): a weight tile read by two neighbouring CTAs (``modelled_us`` prices it so)."""
    return (bm, bn, bk, cm, split) == (64, 64, 128, 1, 1) and 112 < m <= 128


def _fits_registers(bm: int, bn: int, ctas: int) -> bool:
    """A ``bm`` x ``bn`` tile's accumulators fit the registers its threads start with at ``ctas`` CTAs per SM: the
    rule phase 9's kernel asserts (its config's ``accumulators_fit``)."""
    return registry.get("sm90", "10").config_cls(bm=bm, bn=bn, ctas_per_sm=ctas).accumulators_fit()


def wave_fitted_bn(rows: int, cols: int, bm: int, sms: int = 132, step: int = 32) -> int | None:
    """The narrowest tile width (a multiple of ``step``, 64..256) that puts all of ``rows`` x ``cols`` in one
    wave of ``sms`` CTAs with ``bm``-row tiles, when that is not a power of two already tried; else None.
    (128x11008x4096: 86 tiles of 128x128 leave 46 SMs idle, 115 of 128x96 leave 17: 407 TFLOP/s against
    376 on the H200, the vendor's 430. N-major B wants the step of 32: a 112-wide tile falls to a 32-byte
    swizzle, and measured 39.5 us against 35.7 for 128 at 128x14336x4096.)"""
    per_row = sms // _ceil(rows, bm)
    if per_row < 1:
        return None
    bn = _ceil(_ceil(cols, per_row), step) * step
    return bn if 64 <= bn <= 256 and bn not in (64, 128, 256) else None


def split_candidates(m: int, n: int, k: int) -> list[tuple[str, dict]]:
    """Phases 9 (small tiles, split-K) and 10 (swap-AB: M <= 256 tokens) configs worth modelling."""
    out = []
    pdl = 2.0 * m * n * k <= PDL_MAX_FLOP
    tiles = [(64, 64, 64, 8), (64, 128, 64, 8), (128, 128, 64, 6), (128, 256, 64, 4)]
    # 96 < M <= 128 only: the tile's 128 rows at least 3/4 real (56x18944x3584 in 128 x 160 tiles, 56 rows real,
    # ran 52.1 us against 39.9 for cuBLAS's swapped 192x56: the padded MMA work is not free)
    fitted = wave_fitted_bn(m, n, 128) if 96 < m <= 128 else None
    if fitted:  # one wave of 128 x fitted tiles, the ring as deep as the smem holds (measured at M <= 128 only:
        # 200x5120x5120 in 2 x 54 tiles of 128 x 96 ran 275 TFLOP/s, phase 7's 128 x 192 340)
        tiles.append((128, fitted, 64, _stages(128, fitted, 64, 1)))
    for bm, bn, bk, stages in tiles:
        for split in (1, 2, 4):
            out.append(("9", {"bm": bm, "bn": bn, "bk": bk, "stages": stages, "split_k": split, "use_pdl": pdl}))
    if 256 < m <= 512:
        # past 256 tokens, tiles of 192 columns: phase 9's 128 x 192, and (up to 384 tokens) phase 10's 128 weight rows x
        # 192 tokens in two token tiles, 128 CTAs at N = 8192 where 128 x 256 tiles leave 36 SMs idle. Beside the old
        # picks, cold L2: 384x8192x8192 73.6 us against 91.2 (cuBLAS 75.1), 320x8192x4096 39.6 / 48.2, 304x8192x3072
        # 31.9 / 36.4, 288x14336x4096 77.5 / 96.5 (phase 9's 128 x 192). Phase 10 with three token tiles (past 384
        # tokens) lost: 480x5120x5120 47.2 against phase 8's 42.8. Phase 9's 192 x 128 (three consumer warpgroups, with
        # or without the B multicast) is left out: where it won, phase 10 ran within 4% of it, and it lost 1.24x to
        # 128 x 192 at 288x14336x4096 (H200, 2026-12-03, run_h200.sh m512)
        tile = {"bm": 128, "bn": 192, "bk": 64, "stages": _stages(128, 192, 64, 1), "split_k": 1}
        out.append(("9", {**tile, "use_pdl": pdl}))
        if m <= 384:
            out.append(("10", {**tile, "ctas_per_sm": 1, "cluster_m": 1, "evict_first_a": False}))
        # 256 weight rows (two consumer warpgroups of 128) x 2-4 token tiles of at most 144 (the accumulators'
        # registers), split in two where the tiles leave SMs idle: cuBLAS's 256 x 128 arrangement. Beside best at 11
        # shapes, cold L2: 288x14336x4096 56.1 us against 78.7 (cuBLAS 58.1), 272x11008x4096 42.4 / 51.9, 352x4096x14336
        # 69.2 / 79.5, 320x8192x4096 36.0 / 39.9; it lost where 128-row tiles fill the SMs (384x8192x8192 78.1 / 74.5)
        # and the model ranked it so at 9 of the 11 (run_h200.sh bm256). Four token tiles of 128 (481-512 tokens) never
        # won: 512x8192x8192 97.3 against phase 7's 94.8, 496x3584x8192 48.9 / 49.2, 512x14336x4096 100.2 / 93.9.
        # The picks this moved, beside the old ones at 14 random shapes of 257-480 tokens: 1.15x, faster at 12
        # (398x14336x14336 267.7 us against 383.2, 269x8192x4096 38.8 / 49.0; slower at 265x3072x8192, 39.5 / 32.9, and
        # 384x11008x8192, 100.5 / 97.4) (run_h200.sh bm256-moved); at 289-310 tokens and 14336 weight rows, where two
        # token tiles would need 152, four of 80 (two waves) beat phase 9's 128 x 192: 298x14336x4096 72.9 / 77.2,
        # 305x14336x4096 72.3 / 79.2, 290x14336x8192 146.5 / 148.4 (bm256-tail) -- and the token halves below beat
        # both there (298x14336x4096 in 128 x 152 tiles 62.8, 290x14336x8192 116.8; gen512-checks; H200, 2026-12-04)
        for tiles_of_tokens in (2, 3, 4):
            bn = _ceil(_ceil(m, tiles_of_tokens), 8) * 8
            if _fits_registers(256, bn, 1) and not (tiles_of_tokens == 4 and bn == 128):
                for split in (1, 2):
                    out.append(("10", {"bm": 256, "bn": bn, "bk": 64, "stages": _stages(256, bn, 64, 1),
                                       "split_k": split, "ctas_per_sm": 1, "cluster_m": 1, "evict_first_a": False}))
    if 64 < m <= 256 and _ceil(m, 64) % 2 == 0:
        # 64-token tiles in pairs sharing the weights' 128-wide tile (the multicast of B over 2 token tiles: each CTA
        # loads 64 weight columns, whole 128-B lines, for both): 128x8192x8192 35.5 us against 36.8 unicast (the picked
        # swapped tile 38.4), 128x14336x4096 34.6 / 35.5, 256x4096x14336 48.5 / 48.8; 64-wide weight tiles (32 columns
        # each, 64-B rows) lost: 0.94-0.97x (H200, 2026-12-03, h200_2026-12-03_best_candidates_wmcast.json in
        # h200_2026-12-01_to_03_candidates.tar.xz)
        out.append(("9", {"bm": 64, "bn": 128, "bk": 64, "stages": 8, "split_k": 1, "use_pdl": pdl, "cluster_m": 2}))
    if _deep_pair(m, 64, 64, 128, 1, 1):
        # the two 64-token tiles of 113-128 tokens over a 64-wide weight tile, unicast, with phase 10's 128-deep ring:
        # the two CTAs of a weight tile are neighbours in the grid and meet in L2 (see modelled_us)
        out.append(("9", {"bm": 64, "bn": 64, "bk": 128, "stages": 7, "split_k": 1, "use_pdl": pdl}))
    if m <= 512:
        # the tokens in one tile, or (past 128 tokens) in two: twice the weight reads, but twice the CTAs. Past 256
        # tokens only the halves (up to 256 each), with every weight-tile height and split below: beside the old picks
        # at the 8 named-set shapes this moved and 12 random shapes of 257-512 tokens, 1.177x, faster at 16 of 20
        # (267x2048x4096 13.1 us against 25.8, 259x2560x7168 23.0 / 36.7, 386x4096x5120 27.2 / 38.2; within 2.6% slower
        # at the other 4: 512x4096x4096 27.7 / 27.3, 408x6144x2048 21.1 / 20.5); best / vendor there 0.839 -> 0.988
        # (run_h200.sh gen512); where the model's picks were two waves of 128-row tiles never measured, beside the
        # 256-row picks: 298x14336x4096 62.8 / 73.1, 290x14336x8192 116.8 / 146.7, 269x8192x4096 30.2 / 34.2
        # (gen512-checks; H200, 2026-12-04)
        tiles_of_tokens = [(bn, None) for bn in token_tiles(m)] if m <= 256 else []
        if m > 128:
            # each half in steps of 8, and of 16: 192-row weight tiles take token tiles of 96 or more only (below), and
            # 169 tokens lost their 192 x 96 tiles to halves of 88 (169x2560x5120: 21.4 us against 16.5; run_h200.sh
            # tok8-moved)
            tiles_of_tokens += [(half, 64) for half in sorted({_ceil(_ceil(m, 2), 8) * 8, _ceil(_ceil(m, 2), 16) * 16})]
        if m > 256:
            # past 256 tokens also the tokens in three tiles (cuBLAS's arrangements there: nvjet 64 x 88 at
            # 259x2560x7168, 128 x 152 at 434x5120x6144). Beside best, cold L2: 259x2560x7168 in 64 x 88 tiles 21.5 us
            # against 23.3 (cuBLAS 18.0), 434x5120x6144 in 128 x 152 42.5 against phase 8's 50.3 (cuBLAS 41.7),
            # 480x5120x5120 in 128 x 160 37.6 / 44.1 (cuBLASLt 37.2); the model ranked them below the pick where they
            # lost (300x4096x4096, 384x4096x8192, 322x3072x8192) -- and at 259x2560x7168 too (24.7 against 24.2), which
            # keeps its pick. Their token tile multicast over 4 weight tiles ran within 1% at two shapes and 4% slower
            # at the third: not offered. The picks this moved, beside the old ones: 434x5120x6144 42.8 / 49.1,
            # 512x5120x2048 18.9 / 20.4, 404x5120x10240 63.2 / 64.6, 384x5120x2048-8192 0.994-1.015x (run_h200.sh
            # tiles3x, t3w64-moved; H200, 2026-12-04)
            tiles_of_tokens.append((_ceil(_ceil(m, 3), 8) * 8, 64))
        if 232 <= m <= 256:
            # three token tiles of 128 weight rows, cuBLAS's arrangements there (8 x odd tiles allow the second): 80 tokens
            # each at 232-240, 88 at 241-256 (the next multiple of 8 past a third).
            # 80: K <= 5120, unicast, 8 stages of 64 (120 CTAs at N = 5120), at most 8 rows of the last one padding:
            # 232x5120x5120 25.6 us against 29.5 for two 128-token tiles; beside the old picks at 9 shapes chosen after
            # the rule, 1.138x, faster at 9 of 9 (tiles3-80). Three token tiles lost elsewhere: with K >= 6144
            # (0.92-0.95x), at 136-192 tokens (tiles of 48 or 64: 0.77-0.94x; tiles3-heldout), and with more padding --
            # the same kernel ran 30.0 us at 200 tokens, 25.2 at 240 (tiles3m), which the model does not see.
            # 88: the token tile multicast over 4 (clusters of 4) where the weight tiles fill whole clusters, K <= 5120.
            # Beside best (two 128-token tiles) at the four shapes of 241-256 tokens furthest below the vendor:
            # 256x4608x2048 11.6 us against 13.5 (cuBLAS 12.1), 254x5120x2560 14.4 / 16.3, 250x5120x5120 25.6 / 32.2,
            # 256x5120x4096 21.0 / 25.0; beside the old picks at 10 shapes never measured, 1.067x, faster at 9
            # (tok8-moved). Not over 4 where the tiles leave a cluster ragged: at 252x4864x3072 (38 tiles) it ran 20.1 us
            # (0.82 of the vendor; heldout9), and the 96-token version over 4 had lost 0.74-0.79x at 4864 and 4736
            # weight rows (mc4-fresh). There unicast and only up to K = 2048: against the old picks 1.055-1.063x at all
            # three shapes of K = 2048, mixed past it (252x4864x3072 17.4 us against 18.9, 249x5248x3072 18.9 / 18.3,
            # 252x4352x4096 22.0 / 20.8; tok8-4864, tok8-ragged) (H200, 2026-12-03, run_h200.sh)
            third = _ceil(_ceil(m, 3), 8) * 8
            whole_clusters = _ceil(n, 128) % 4 == 0
            cm = 4 if third == 88 and whole_clusters else 1
            if k <= (MCAST_MAX_K if third == 80 or whole_clusters else 2048):
                out.append(("10", {"bm": 128, "bn": third, "bk": 64, "stages": _stages(128, third, 64, 1),
                                   "split_k": 1, "ctas_per_sm": 1, "cluster_m": cm, "evict_first_a": False}))
        for bn, bk_fixed in tiles_of_tokens:
            for bm in (64, 128, 192):
                # 192 rows (three consumer warpgroups) only for token tiles of 96 or more: fewer CTAs pull the
                # weights, which at few tokens is what sets the time (1x4096x14336: 34.9 us against 28.1 for 64
                # rows); with 96-128 tokens they measured 0.93-0.95 of the vendor where 128 rows gave 0.73-0.82
                if bm == 192 and bn < 96:
                    continue
                for ctas in (1, 2):
                    # 128-deep k-tiles where a ring of 3 of them per CTA, 4 per SM, fits, else 64 (bm=128 bn=128:
                    # 7 stages of 64; two CTAs of 128 x 64 per SM: 4 stages of 64 each, where 128 left 2 and no candidate)
                    deep = _stages(bm, bn, 128, ctas)
                    bk = bk_fixed or (128 if bn <= 128 and deep >= 3 and deep * ctas >= 4 else 64)
                    stages = _stages(bm, bn, bk, ctas)
                    # a ring under 4 stages per SM leaves the weight stream latency-bound (measured: 128x14336x4096,
                    # bm=128 bn=128 with 3 stages 38.3 us against 34.2 for phase 9's 128x128 tile)
                    if stages < 3 or stages * ctas < 4 or not _fits_registers(bm, bn, ctas):
                        continue
                    for split in SPLITS:
                        if split == 3 and bn < 128:  # see SPLITS
                            continue
                        # the token tile multicast over cluster_m weight tiles, each CTA loading 1/cluster_m of it:
                        # measured to pay with 128 weight rows and >= 128 tokens per tile only (200x11000x3000,
                        # 128x224: 38.8 -> 32.4 / 30.6 us at cluster_m 2 / 4; 128x112: 25.3 -> 26.8 at 200x5120^2;
                        # h200_2026-12-01_best_candidates_mcast.json in h200_2026-12-01_to_03_candidates.tar.xz)
                        # and without a split (the two together run correctly and were not measured faster)
                        # (not over three token tiles: see above)
                        mcast = bm == 128 and bn >= 128 and 2 * bn >= m and split == 1 and k <= MCAST_MAX_K
                        for cm in (1, 2, 4) if mcast else (1,):
                            if box_rows(bn) % (8 * cm):
                                continue
                            # the weights evict-first in L2 where a tile of >= 128 weight rows holds every token
                            # (read once; 2-4% faster at 120-200 tokens; see phase 10): a policy, not in the cost
                            out.append(("10", {"bm": bm, "bn": bn, "bk": bk, "stages": stages, "split_k": split,
                                               "ctas_per_sm": ctas, "cluster_m": cm,
                                               "evict_first_a": bm >= 128 and bn >= m}))
    return out


def modelled_us(kernel, m: int, n: int, k: int, factor: float = 1.0, mc: Machine = MACHINE) -> float:
    """The model's time of ``kernel`` (a phase instance with its config) on (m, n, k), in microseconds."""
    cfg = kernel.cfg
    c_bytes = 4 if kernel.operands.c == "fp32" else 2
    memory_bytes = 2 * (m * k + k * n) + c_bytes * m * n
    if kernel.phase in ("9", "10"):
        rows, cols = (n, m) if getattr(kernel, "swap_ab", False) else (m, n)
        bm, bn, split, ctas, cm = cfg.bm, cfg.bn, cfg.split_k, cfg.ctas_per_sm, cfg.cluster_m
        ctas_total = _ceil(_ceil(rows, bm), cm) * cm * _ceil(cols, bn) * split
        slots = clusters_that_fit(split * cm, mc) * split * cm * ctas
        waves = _ceil(ctas_total, slots)
        cta_flop = 2 * bm * bn * _ceil(_ceil(k, cfg.bk), split) * cfg.bk
        deep_pair = (kernel.phase == "9" and not getattr(kernel, "swap_ab", False)
                     and _deep_pair(m, bm, bn, cfg.bk, cm, split))
        width = bn * (bm // 64) * (2 if deep_pair else 1)  # a deep pair runs at the rate of its 128 tokens (below)
        rate = mc.mma_flop_per_us * min(1.0, width / 256) ** mc.narrow_exponent
        mma = waves * min(ctas, _ceil(ctas_total, mc.sms)) * cta_flop / rate
        inflight = min(ctas_total, slots) * cfg.stages * (bm + cfg.box_n()) * cfg.bk * 2
        memory = memory_bytes / (mc.hbm_bytes_per_us * min(1.0, inflight / mc.inflight_for_full_bw))
        if kernel.phase == "10":
            memory *= 1 + mc.token_tile_reread * (_ceil(cols, bn) - 1)
        reduce = waves * (split > 1) * (mc.split_us + min(bm * bn * 4, mc.reduce_max_bytes) / mc.dsmem_bytes_per_us)
        fixed = mc.launch_us + (waves - 1) * mc.wave_us + (not cfg.use_pdl) * mc.no_pdl_us
        body = max(mma, memory) + mc.overlap * min(mma, memory)
        if kernel.phase == "10":
            # the multicast measured a gain only with every token in the one tile it shares (232x4608x9216 in
            # 2 x 36 tiles of 128 x 128 over 4: 48.2 us, unicast 3-way split of 128 x 256 36.9)
            # the token rows (A's K-major rows, or its M-major columns) in whole 128-B lines or not (see Machine)
            row_bytes = (k if kernel.operands.a_major == "k" else m) * 2  # fp16 / bf16
            per_cm = mc.mcast_gain_ragged_rows if row_bytes % 128 else mc.mcast_gain
            gain = per_cm * (1 - 1 / cm) if bn >= m else 0.0
            body *= (mc.swap_factor * (1 - gain)) if waves == 1 else 1.0
            body *= mc.wide_tile_factor if bm == 64 and bn >= 224 and split == 1 else 1.0
        elif deep_pair and waves == 1:
            # phase 9's 64 x 64 tile with phase 10's 128-deep ring at 113-128 tokens: each 64-wide weight tile is read by
            # the two token tiles' CTAs, neighbours in the grid, whose reads meet in L2 -- phase 10's 64 x 128 tile
            # unsplit, cut along the tokens instead of K into twice the CTAs. Priced so: at the MMA rate of the pair's
            # 128 tokens and with phase 10's factor (the plain model ran 1.3-1.6x slow at K >= 4096). Beside the pick
            # (H200, cold L2): 128x4096x4096 11.7 us against 13.2, 128x4096x2048 7.4 / 8.4, 128x4096x6144 15.7 / 17.1,
            # 128x3584x8192 19.1 / 20.6, 120x4096x4096 12.1 / 12.8, 128x4096x11008 26.1 / 26.9, 128x4096x14336 33.5 /
            # 34.1 (the model so priced ranks all of them, and 128x2048x8192 where it lost, 15.6 / 14.1, as measured);
            # at 96 tokens, the second tile half padding, it lost (15.3 / 12.3) and is not offered (run_h200.sh
            # w64pairs, w64more). The picks this moved, beside the old ones at 13 shapes of 113-128 tokens: faster at 10
            # (128x3072x4096 10.3 us against 12.4, 128x2816x5120 11.8 / 13.9), slower at 116x4096x8192 (0.994x),
            # 128x2048x5120 (0.979x, 64 CTAs) and 118x3840x11008 (0.913x: at long K the old 120-token tile's 6% less MMA
            # work tells) (t3w64-moved; H200, 2026-12-04)
            body *= mc.swap_factor
        elif cm > 1 and waves == 1:
            # phase 9's 64-token tiles in pairs sharing the weights' tile (the multicast's gain); where the pair holds
            # every token with no row padded (M = 128) it is phase 10's kernel unswapped with its deep ring, and takes
            # phase 10's factor: faster than the swapped pick at all 7 such shapes whose pick that moved (128x8192x8192
            # 35.2 us against 37.6, 128x6144x14336 47.2 / 53.0; H200, 2026-12-03, run_h200.sh p9pairs), and at 12 of 12
            # shapes of 128 tokens chosen after the rule (1.094x; p9pairs-128); with padded token rows (104, 112, 240
            # tokens) or two pairs per weight tile (256 tokens) it ran 0.94-1.02x the pick
            whole = m == cm * bm
            body *= (mc.swap_factor if whole else 1.0) * (1 - mc.mcast_gain * (1 - 1 / cm))
        # a split costs more than its reduce: 64 weight rows whole against 128 split in two (the same CTAs, bytes
        # and MMAs per CTA) measured 1.07x faster (geomean of 53 pairs, faster at 48)
        body *= 1 + mc.split_body * (split > 1)
        return fixed + body + reduce
    # the persistent phases: tile rounds of the busiest cluster (a split last round counts half)
    sched = kernel.schedule(m, n, k)
    if len(sched) == 3:  # stream-K: data-parallel tiles, split tiles, clusters launched
        dp, sk, clusters = sched
    else:  # plain persistent: tiles, clusters launched
        (dp, clusters), sk = sched, 0
    rounds = _ceil(dp, clusters) + (0.5 if sk else 0.0)
    mma = rounds * 2 * cfg.bm * cfg.bn * k / mc.mma_flop_per_us * factor
    memory = memory_bytes / mc.hbm_bytes_per_us
    pdl = getattr(cfg, "use_pdl", False)
    launch = mc.persistent_one_round_us if rounds == 1 and pdl else mc.persistent_launch_us  # see Machine
    return launch + (not pdl) * mc.no_pdl_us + max(mma, memory) + mc.overlap * min(mma, memory)


def _candidates(arch: str, m: int, n: int, k: int):
    """(entry, config, factor) of every candidate of ``arch`` for (m, n, k)."""
    out = list(PERSISTENT[arch])
    if arch == "sm90":
        out += [(phase, over, 1.0) for phase, over in split_candidates(m, n, k)]
    for phase, over, factor in out:
        entry = registry.get(arch, phase)
        yield entry, dataclasses.replace(entry.default_config(), **over), factor


def explain(arch: str, m: int, n: int, k: int, operands=None) -> list[dict]:
    """Every candidate that takes (m, n, k) with ``operands`` (None: the worklog's) with its modelled
    time in microseconds (``cost``), cheapest first."""
    rows = []
    for entry, cfg, factor in _candidates(arch, m, n, k):
        kern = entry.make(cfg, operands)
        if kern.can_implement(m, n, k):
            continue
        rows.append({"phase": entry.phase, "config": cfg, "label": label(entry.phase, entry.overrides(cfg)),
                     "cost": modelled_us(kern, m, n, k, factor)})
    return sorted(rows, key=lambda r: rank(r["cost"], r["phase"]))


def rank(cost: float, phase: str) -> tuple:
    """The order of two candidates: the cheaper first; on a tie (the model is symmetric under the swap) the swapped
    tile (measured faster at M <= 128), then a persistent phase (a one-round schedule with PDL costs what phase 9's
    same tile does, and adds the B multicast and the TMA-store epilogue; see ``Machine.persistent_one_round_us``)."""
    return round(cost, 3), phase != "10", phase not in _PERSISTENT_PHASES


def label(phase: str, over: dict) -> str:
    """'10 bm=128 bn=64': a candidate's phase and config overrides."""
    return " ".join(filter(None, [phase, registry.overrides_label(over)]))


@lru_cache(maxsize=4096)
def pick(arch: str, m: int, n: int, k: int, operands=None):
    """(phase, config) that ``phase="best"`` runs for (m, n, k) with ``operands`` (None: the worklog's)
    on ``arch``; LookupError if none can."""
    rows = explain(arch, m, n, k, operands)
    if not rows:
        raise LookupError(f"no {arch} candidate of phase 'best' takes {m}x{n}x{k}")
    best = rows[0]
    default = registry.get(arch, best["phase"]).default_config()
    return best["phase"], (None if best["config"] == default else best["config"])


def resolve(arch: str, m: int, n: int, k: int, operands=None, gpu: str | None = None):
    """(phase, config or None for the default, "tuned" or "model"): what ``phase="best"`` runs for (m, n, k) with
    ``operands`` on the GPU named ``gpu`` -- the tuned pick when that GPU's table holds one that still takes the
    shape, else ``pick``'s; LookupError if none can."""
    hit = tuned.lookup(gpu, arch, m, n, k, operands) if gpu else None
    if hit:
        try:
            entry = registry.get(arch, hit[0])
            cfg = entry.configured(hit[1])
            if not entry.make(cfg, operands).can_implement(m, n, k):
                return entry.phase, (None if cfg == entry.default_config() else cfg), "tuned"
        except (LookupError, ValueError):  # a table row naming a phase or field that no longer exists: the model
            pass
    return (*pick(arch, m, n, k, operands), "model")
