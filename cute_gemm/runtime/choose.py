"""``phase="best"``: pick a phase and config per shape, as a vendor library's heuristic does.

No single kernel wins everywhere. Big problems want the persistent 128x256 / 128x192 tiles of phases 7 and 8
(fewest bytes per FLOP, epilogue hidden); a few tokens times a weight (M <= 512) want phase 10's swap-AB tiles,
which stream the weights at the memory's bandwidth; small or starved problems want phase 9's small tiles, split-K
and programmatic dependent launch (PDL). So ``pick`` enumerates candidates (phase, config) and ranks them by a
model of their time in microseconds, whose constants (``Machine``) were fitted to candidates measured on an H200:

    time = launch + (waves - 1) x wave + (max(mma, memory) + overlap x min(mma, memory)) [x factors]
           + waves x [split > 1] x (split_us + partial tile bytes / dsmem_rate)        [phases 9, 10]

- ``mma``: the busiest SM's MMA work over the wgmma rate, which drops for tiles narrower than 256 columns per
  warpgroup (x (width / 256)^0.5); ``memory``: A + B + C bytes over the HBM bandwidth, slowed when the resident
  rings hold too few bytes in flight; waves: CTAs over the co-resident CTAs (clusters of 3, 4, 8: 39, 30, 15 fit);
- the factors: phase 10 in one wave (``swap_factor``) and its token multicast (``mcast_gain``), its weights read
  again per extra token tile (``token_tile_reread``), a wide one-warpgroup tile, a split's slower k-loop;
- the persistent phases: rounds of tiles from their own ``schedule``; one round with PDL costs a plain launch.

The candidate families: phases 7 and 8 (``PERSISTENT``; 8 with 5 stages at a 16-bit C, ``RING5``); phase 9's
tiles of 64x64 to 128x256 unsplit or split 2 / 4, a 128-row tile as narrow as puts every tile in one wave (97-128
tokens), 64-token tiles in pairs sharing a weight tile, 128 x 192 past 256 tokens; phase 10's token tiles in steps
of 8 of 64-256 weight rows, one or two CTAs per SM, split 1-4, the token tile multicast over 2 or 4 weight tiles,
the tokens in two or three tiles past 128 / 232 tokens (``split_candidates``).

Why a model and not a table of measured shapes: it answers for shapes nobody measured (any M, N, K, any layout)
at one evaluation per candidate, and its constants are few and physical. ``bench/fit_best.py`` fits them and says
how well they rank the measured candidates; the evidence for other shapes is the held-out sets (shapes chosen
after each change, measured once: ``cute-gemm bench --set heldout`` ...) and the moved picks timed beside the old.
What each constant and rule rests on, the fits, the held-out sets and what did not pay: docs/best.md.

sm100 (no Blackwell GPU measured): the same formula over phases 6, 7, 9 and 10 (``sm100_split_candidates``: every
tile, split and residency their rules allow), the rates from the B200 / B300 datasheets and the device
(``machines``), every row marked ``fitted: False``; a candidate the kernel's compile would refuse is never offered.

- ``pick``: the cheapest candidate that takes (m, n, k) with the operands; cached per (shape, operands).
- ``explain``: every candidate with its modelled time, cheapest first (``cute-gemm bench`` prints the choice).
- ``resolve``: what ``phase="best"`` runs -- the config ``cute-gemm tune`` measured fastest for the shape on this
  GPU when its table (``tuned``) holds one, else ``pick``'s.
- tuning (``cute-gemm tune``, ``cute_gemm.measure.tune``): times the model's cheapest few candidates per shape on
  this GPU (``--explore``: and the untimed ``EXPLORE`` configs) and keeps the fastest in that table.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache

from cute_gemm.errors import UnsupportedError
from cute_gemm.runtime import machines, registry, tuned
from phases.operands import WORKLOG


@dataclasses.dataclass(frozen=True)
class Machine:
    """The model's constants: an H200 SXM under load, fitted to measured candidates (``bench/fit_best.py``); the
    co-resident clusters per size measured with ``cudaOccupancyMaxActiveClusters``. Evidence: docs/best.md."""

    sms: int = 132  # the H200's SMs
    mma_flop_per_us: float = 7.0e6  # one SM's wgmma rate with 256-wide tiles (1.7 GHz x 4096 FLOP/clk)
    narrow_exponent: float = 0.5  # rate x (tile width per warpgroup / 256)^this
    hbm_bytes_per_us: float = 4.35e6  # HBM bandwidth under load
    # phase 10, one wave, a >= 128-token tile multicast over cluster_m weight tiles: x (1 - this (1 - 1/cluster_m))
    mcast_gain: float = 0.08
    # ... where a token row is not whole 128-B lines (each row touches one more L2 sector; the multicast loads it once)
    mcast_gain_ragged_rows: float = 0.25
    inflight_for_full_bw: float = 16e6  # bytes the resident rings must hold to keep the HBM busy
    launch_us: float = 1.4  # launch, prologue, pipeline fill, epilogue of one CTA
    wave_us: float = 2.0  # each further wave of CTAs
    overlap: float = 0.6  # the smaller of mma/memory that does not hide under the larger
    swap_factor: float = 0.85  # phase 10's time in one wave against the model's (its deep ring overlaps more)
    # phase 10 in t > 1 token tiles: each reads the weights again, L2 catches most re-reads: memory x (1 + this (t - 1))
    token_tile_reread: float = 0.15
    wide_tile_factor: float = 1.1  # one consumer warpgroup's unsplit 64 x >= 224 tile (the model underrated it ~13%)
    split_us: float = 2.0  # a split-K reduce's fixed part per wave (cluster barriers, the partial tile through smem)
    dsmem_bytes_per_us: float = 3.0e4  # ... plus the partial tile's bytes over DSMEM
    reduce_max_bytes: float = 80 * 1024  # ... charged for at most this much (bigger tiles' reduce measured hidden)
    split_body: float = 0.05  # a split CTA's k-loop against a whole one's (see modelled_us)
    no_pdl_us: float = 0.3  # what a launch without programmatic dependent launch pays more
    persistent_launch_us: float = 4.0  # the persistent phases' fixed cost
    # ... where the schedule is one round and the launch is programmatic (PDL): a data-parallel launch's (launch_us);
    # phase 7's cost then ties phase 9's of the same tile, and the tie goes to phase 7 (``rank``)
    persistent_one_round_us: float = 1.4
    # each tile round but the last of sm90's phases 6-7, whose consumer warpgroups store their tile before the next
    # one's MMAs; phase 8's ping-pong hides it under the other warpgroup's (what K-short prefill tiles measured)
    epilogue_round_us: float = 0.8
    # ... and with a fused activation (or gated pairs) each of their rounds pays its arithmetic, which phase 8 hides
    # (``pick_epilogue`` charges it): 0 until a run on the H200 fits it (docs/best.md)
    fused_round_us: float = 0.0
    # co-resident clusters per size (GPCs of unequal size: 39 of 3, not 44): a 3-way split of 40 tiles is two waves
    clusters_that_fit: tuple = ((1, 132), (2, 66), (3, 39), (4, 30), (6, 17), (8, 15))
    fitted: bool = True  # False: constants from a datasheet, not fitted to measured candidates (``machine``)
    gpu: str = "H200"  # the GPU the constants describe


MACHINE = Machine()


def sm100_machine(sheet: machines.Datasheet, sms: int | None = None, fits: tuple = ()) -> Machine:
    """The sm100 model's constants (unfitted): the H200's fitted ones, with the rates of ``sheet`` (the MMA rate per
    SM its dense fp16/bf16 rate over its SMs, its HBM bandwidth, the bytes in flight for it scaled with the
    bandwidth), ``sms`` SMs (None: the sheet's) and ``fits`` co-resident clusters per size (empty: the H200's
    scaled, ``machines.scaled_clusters``)."""
    sms = sms or sheet.sms
    bw = sheet.hbm_tb_per_s * 1e6  # bytes per microsecond
    return dataclasses.replace(
        MACHINE, fitted=False, gpu=sheet.name, sms=sms,
        mma_flop_per_us=sheet.dense_fp16_tflop_per_s * 1e6 / sheet.sms,
        hbm_bytes_per_us=bw,
        inflight_for_full_bw=MACHINE.inflight_for_full_bw * sheet.hbm_tb_per_s / machines.H200_HBM_TB_PER_S,
        clusters_that_fit=fits or machines.scaled_clusters(MACHINE.clusters_that_fit, sms))


@lru_cache(maxsize=None)
def machine(arch: str) -> Machine:
    """The model's constants for ``arch``: sm90's fitted ``MACHINE``; sm100's from the datasheet of GPU 0 (or a
    B200's without one) and the device's SM and cluster counts where an sm100 GPU is present (``machines``)."""
    if arch != "sm100":
        return MACHINE
    name, sms, fits = machines.sm100_device()
    return sm100_machine(machines.datasheet(name), sms, fits)


def fitted(arch: str) -> bool:
    """Whether ``arch``'s model was fitted to measured candidates (sm90) or rests on datasheet values (sm100)."""
    return machine(arch).fitted


_WARNED: set = set()


def warn_unfitted(arch: str, gpu: str | None) -> bool:
    """Once per (arch, GPU) and process, where the model of ``arch`` is unfitted: a RuntimeWarning saying so and how
    to measure the picks on this GPU; True when it warned."""
    if fitted(arch) or (arch, gpu) in _WARNED:
        return False
    _WARNED.add((arch, gpu))
    import warnings

    warnings.warn(f'phase="best" on {gpu or arch}: the {arch} model is unfitted (its constants are {machine(arch).gpu} '
                  f"datasheet values, no {arch} GPU measured them), so its picks always run but may not be the fastest; "
                  f"`cute-gemm tune --set decode` and `cute-gemm tune --set prefill` time the candidates on this GPU "
                  f"and keep the fastest for phase=\"best\"", RuntimeWarning, stacklevel=3)
    return True

# token tiles of phase 10 (the MMA's N), in steps of 8 since padded token rows are wgmma work; a tile of 8 x an odd
# number loads a TMA box 8 rows taller than the MMA reads (``box_rows``: the DSL 4.8.1 compiler aborts building its own)
TOKEN_TILES = tuple(range(8, 257, 8))


def box_rows(bn: int) -> int:
    """The token rows phase 10's ring holds per stage for a ``bn``-token tile (its config's ``box_n``)."""
    return registry.get("sm90", "10").config_cls(bn=bn).box_n()


def token_tiles(m: int) -> list[int]:
    """The token tiles that hold ``m`` tokens in one: the narrowest (steps of 8), the narrowest in steps of 16 (what
    the tiles were before 8 x odd ones could be built: the same ring bytes and more MMA work, so never cheaper, but the
    candidate the measured files hold), and past 64 tokens also the narrowest multiple of 32 (what the multicast over 4
    weight tiles needs: 8-row slices of bn / 4; it beat the narrowest alone, docs/best.md)."""
    fine = next(t for t in TOKEN_TILES if t >= m)
    even = next(t for t in TOKEN_TILES if t >= m and (t == 8 or t % 16 == 0))
    wide = next(t for t in TOKEN_TILES if t >= m and (t <= 64 or t % 32 == 0))
    return sorted({fine, even, wide})


SMEM_BYTES = 227 * 1024 - 2048  # a CTA's ring budget (barriers and alignment aside)
# phase 10's K ranges per tile; 3 (clusters of 3) only for token tiles of 128 or more (narrower ones are memory-bound
# and lost to 2 and 4)
SPLITS = (1, 2, 3, 4)
# phase 10's token multicast only where K <= this (it won at none of the measured shapes of K >= 6144)
MCAST_MAX_K = 5120
PDL_MAX_FLOP = 40e9  # above this, programmatic dependent launch measured no better (or worse)

# the persistent phases' candidates: (phase, config overrides, time factor); phase 8's epilogue hides under the other
# warpgroup's MMAs (hence 0.98). All run with PDL: the next launch takes each SM as this one's CTA leaves it (sm100's
# the same way, compile-checked only: no Blackwell GPU measured it). Phase 8 first with a 5-stage ring (RING5): where C
# is 16-bit it fits (an fp32 C's staging leaves room for 4 stages, and the row is refused), and at the cost of the
# default it comes first in the sort, so it replaces phase 8's default without moving a pick between phases. Up to
# WIDE_BAND_MAX_K its raster bands are 16 M-tiles (8 pairs) high, not 8: a wave then reads each B tile once per 2048
# rows of A, not per 1024 (at 4096x8192x1024, 42 MB from DRAM instead of 64); past it A's band (16 x 128 rows x K x 2 B,
# 16 MiB at K = 4096) crowds L2 and the wider band measured slower (the dW GEMMs at K = 8192)
_PDL = {"use_pdl": True}
RING5 = {"stages": 5, **_PDL}
WIDE_BAND, WIDE_BAND_MAX_K = {"group_m": 16}, 4096
# phase 8's factor against phase 7 (its two warpgroups keep the tensor pipe busier: best.md)
PHASE8_FACTOR = 0.98
PERSISTENT = {
    "sm90": (("7", _PDL, 1.0), ("7", {"bn": 192, **_PDL}, 1.03), ("7", {"bn": 128, "stages": 6, **_PDL}, 1.08),
             ("8", RING5, PHASE8_FACTOR), ("8", _PDL, PHASE8_FACTOR)),
    # sm100 (unfitted): phase 6 (clusters of 2: more fit than phase 7's of 4), phase 7, and phase 7's 128-wide pair
    # tile with sm90's factor for it
    "sm100": (("7", _PDL, 1.0), ("6", _PDL, 1.0), ("7", {"bn": 128, **_PDL}, 1.08)),
}
_PERSISTENT_PHASES = frozenset(phase for cands in PERSISTENT.values() for phase, _, _ in cands)
# configs built and checked on the PTX machine but not ranked by the model (never timed on a GPU, or timed at a few
# shapes and not yet through the GPU checks a pick needs): never ``pick``'s, offered to ``cute-gemm tune --explore``,
# which checks and times them beside the model's candidates and keeps the fastest. sm90: 64-column C slabs (16-bit C);
# cuBLAS's prefill arrangement, 256 x 128 tiles of two warpgroups in clusters of 1 x 2 sharing A; 2 x 2 clusters
# sharing both operands; phase 8 128 wide in a 6-stage ring, where N = 2048 splits into whole tiles (it passed the GPU
# checks, and ran ahead of phase 7 on the H200 and behind it on an H100: docs/results.md); per shape, phase 8 in the
# width that fills its rounds (``fitted_width``); phase 7 with 4 C staging buffers (16-bit C), so a
# slab's barrier waits for the store three slabs back, not the one before (its epilogue is exposed each round).
# sm100: two pairs along N sharing A
EXPLORE = {
    "sm90": (("7", {"epi_n": 64, **_PDL}), ("8", {"epi_n": 64, "epi_stages": 3, **_PDL}),
             ("6", {"bm": 256, "bn": 128, "cluster_m": 1, "cluster_n": 2, **_PDL}),
             ("6", {"bm": 256, "bn": 128, "stages": 3, "cluster_m": 1, "cluster_n": 2, "epi_n": 64, **_PDL}),
             ("6", {"cluster_n": 2, **_PDL}), ("8", {"cluster_n": 2, **_PDL}), ("8", {"bn": 128, "stages": 6, **_PDL}),
             ("7", {"epi_stages": 4, **_PDL})),
    "sm100": (("6", {"cluster_n": 2, **_PDL}),),
}


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
    # 96 < M <= 128 only: the tile's 128 rows at least 3/4 real (the padded MMA work is not free)
    fitted = wave_fitted_bn(m, n, 128) if 96 < m <= 128 else None
    if fitted:  # one wave of 128 x fitted tiles, the ring as deep as the smem holds
        tiles.append((128, fitted, 64, _stages(128, fitted, 64, 1)))
    for bm, bn, bk, stages in tiles:
        for split in (1, 2, 4):
            if m > 512 and _ceil(m, bm) * _ceil(n, bn) * split > clusters_that_fit(split) * split:
                continue  # past 512 rows, data-parallel tiles of more than one wave: the persistent phases' work
            out.append(("9", {"bm": bm, "bn": bn, "bk": bk, "stages": stages, "split_k": split, "use_pdl": pdl}))
    if 256 < m <= 512:
        # past 256 tokens, tiles of 192 columns: phase 9's 128 x 192, and (up to 384 tokens) phase 10's 128 weight rows x
        # 192 tokens in two token tiles (128 CTAs at N = 8192, where 128 x 256 tiles leave 36 SMs idle)
        tile = {"bm": 128, "bn": 192, "bk": 64, "stages": _stages(128, 192, 64, 1), "split_k": 1}
        out.append(("9", {**tile, "use_pdl": pdl}))
        if m <= 384:
            out.append(("10", {**tile, "ctas_per_sm": 1, "cluster_m": 1, "evict_first_a": False}))
        # 256 weight rows (two consumer warpgroups of 128) x 2-4 token tiles of at most 144 (the accumulators'
        # registers), split in two where the tiles leave SMs idle: cuBLAS's 256 x 128 arrangement; four token tiles
        # of 128 (481-512 tokens) never won
        for tiles_of_tokens in (2, 3, 4):
            bn = _ceil(_ceil(m, tiles_of_tokens), 8) * 8
            if _fits_registers(256, bn, 1) and not (tiles_of_tokens == 4 and bn == 128):
                for split in (1, 2):
                    out.append(("10", {"bm": 256, "bn": bn, "bk": 64, "stages": _stages(256, bn, 64, 1),
                                       "split_k": split, "ctas_per_sm": 1, "cluster_m": 1, "evict_first_a": False}))
    if 64 < m <= 256 and _ceil(m, 64) % 2 == 0:
        # 64-token tiles in pairs sharing the weights' 128-wide tile (the multicast of B over 2 token tiles: each CTA
        # loads 64 weight columns, whole 128-B lines, for both; 64-wide weight tiles, 64-B rows, lost)
        out.append(("9", {"bm": 64, "bn": 128, "bk": 64, "stages": 8, "split_k": 1, "use_pdl": pdl, "cluster_m": 2}))
    if _deep_pair(m, 64, 64, 128, 1, 1):
        # the two 64-token tiles of 113-128 tokens over a 64-wide weight tile, unicast, with phase 10's 128-deep ring:
        # the two CTAs of a weight tile are neighbours in the grid and meet in L2 (see modelled_us)
        out.append(("9", {"bm": 64, "bn": 64, "bk": 128, "stages": 7, "split_k": 1, "use_pdl": pdl}))
    if m <= 512:
        # the tokens in one tile, or (past 128 tokens) in two: twice the weight reads, but twice the CTAs. Past 256
        # tokens only the halves (up to 256 each), with every weight-tile height and split below
        tiles_of_tokens = [(bn, None) for bn in token_tiles(m)] if m <= 256 else []
        if m > 128:
            # each half in steps of 8, and of 16 (192-row weight tiles take token tiles of 96 or more only, below)
            tiles_of_tokens += [(half, 64) for half in sorted({_ceil(_ceil(m, 2), 8) * 8, _ceil(_ceil(m, 2), 16) * 16})]
        if m > 256:
            # past 256 tokens also the tokens in three tiles (cuBLAS's arrangements there: nvjet 64 x 88 at
            # 259x2560x7168, 128 x 152 at 434x5120x6144); unicast (their multicast over 4 did not pay)
            tiles_of_tokens.append((_ceil(_ceil(m, 3), 8) * 8, 64))
        if 232 <= m <= 256:
            # three token tiles of 128 weight rows, cuBLAS's arrangements there (8 x odd tiles allow the second): 80 tokens
            # each at 232-240 (K <= 5120, unicast), 88 at 241-256 (the next multiple of 8 past a third), over clusters
            # of 4 where the weight tiles fill whole clusters (K <= 5120), else unicast and only up to K = 2048
            # (a ragged cluster measured slower; the model does not see the padding that made them lose elsewhere)
            third = _ceil(_ceil(m, 3), 8) * 8
            whole_clusters = _ceil(n, 128) % 4 == 0
            cm = 4 if third == 88 and whole_clusters else 1
            if k <= (MCAST_MAX_K if third == 80 or whole_clusters else 2048):
                out.append(("10", {"bm": 128, "bn": third, "bk": 64, "stages": _stages(128, third, 64, 1),
                                   "split_k": 1, "ctas_per_sm": 1, "cluster_m": cm, "evict_first_a": False}))
        for bn, bk_fixed in tiles_of_tokens:
            for bm in (64, 128, 192):
                # 192 rows (three consumer warpgroups) only for token tiles of 96 or more: fewer CTAs pull the
                # weights, which at few tokens is what sets the time
                if bm == 192 and bn < 96:
                    continue
                for ctas in (1, 2):
                    # 128-deep k-tiles where a ring of 3 of them per CTA, 4 per SM, fits, else 64 (two CTAs of
                    # 128 x 64 per SM: 4 stages of 64 each, where 128 left 2 and no candidate)
                    deep = _stages(bm, bn, 128, ctas)
                    bk = bk_fixed or (128 if bn <= 128 and deep >= 3 and deep * ctas >= 4 else 64)
                    stages = _stages(bm, bn, bk, ctas)
                    # a ring under 4 stages per SM leaves the weight stream latency-bound
                    if stages < 3 or stages * ctas < 4 or not _fits_registers(bm, bn, ctas):
                        continue
                    for split in SPLITS:
                        if split == 3 and bn < 128:  # see SPLITS
                            continue
                        # the token tile multicast over cluster_m weight tiles, each CTA loading 1/cluster_m of it:
                        # measured to pay with 128 weight rows and >= 128 tokens per tile only, and without a split
                        # (the two together run correctly and were not measured faster; not over three token tiles)
                        mcast = bm == 128 and bn >= 128 and 2 * bn >= m and split == 1 and k <= MCAST_MAX_K
                        for cm in (1, 2, 4) if mcast else (1,):
                            if box_rows(bn) % (8 * cm):
                                continue
                            # the weights evict-first in L2 where a tile of >= 128 weight rows holds every token
                            # (each line is read once): a policy, not in the cost
                            out.append(("10", {"bm": bm, "bn": bn, "bk": bk, "stages": stages, "split_k": split,
                                               "ctas_per_sm": ctas, "cluster_m": cm,
                                               "evict_first_a": bm >= 128 and bn >= m}))
    return out


# sm100 phases 9 and 10 (one tcgen05 CTA of 128 rows per tile, cta_group::1, no multicast): the splits (a portable
# cluster of 1-8; the tile's lines of C, 128 rows or bn columns, divide by the split) and the tile widths of phase 9
SM100_SPLITS = (1, 2, 3, 4, 6, 8)
SM100_TILES = (64, 128, 192, 256)
SM100_SMEM_PER_SM = 228 * 1024  # phases/sm100/common.py's SMEM_PER_SM, SMEM_RESERVED_PER_CTA, TMEM_COLUMNS
SM100_SMEM_RESERVED = 1024
SM100_TMEM_COLUMNS = 512


def _tmem_cols(bn: int) -> int:
    """TMEM columns of a 128 x bn fp32 accumulator, rounded to the allocator's power of two (at least 32)."""
    return max(32, 1 << (bn - 1).bit_length())


def sm100_build_problems(kernel) -> list[str]:
    """What sm100 phase 9's ``_setup_attributes`` (phase 10's too) asserts beyond ``config_problems``, from the config
    and the operands without compiling: the smem and TMEM of ``ctas_per_sm`` CTAs fit an SM, the fp32 partial tile
    fits in the A/B ring, the tile's lines of C (rows of a row-major C as the kernel sees it, C^T for phase 10)
    divide by split_k. The same arithmetic as the kernel's (``common.smem_request`` / ``residency``); the tests hold
    it against the compile at the edges. [] for a phase without a split (6, 7) or with none of these problems."""
    c = kernel.cfg
    if kernel.arch != "sm100" or not hasattr(c, "split_k"):
        return []
    ops = kernel.operands.swapped() if getattr(kernel, "swap_ab", False) else kernel.operands
    row_major = ops.c_major == "n"
    ring = c.stages * (c.bm + c.bn) * c.bk * 2
    barriers = 8 * (2 * c.stages + 2) + 8 + 4  # ab and acc mbarriers, the dealloc mbarrier, the TMEM address
    used = _ceil(barriers, 1024) * 1024 + ring
    cols = _tmem_cols(c.bn)
    by_tmem = SM100_TMEM_COLUMNS // cols
    request = max(used, SM100_SMEM_PER_SM // (by_tmem + 1) + 1 - SM100_SMEM_RESERVED)
    held = min(SM100_SMEM_PER_SM // (request + SM100_SMEM_RESERVED), by_tmem)
    why = []
    if held < c.ctas_per_sm:
        why.append(f"{request} B of smem and {cols} TMEM columns per CTA hold {held} CTA(s) per SM, not "
                   f"ctas_per_sm={c.ctas_per_sm}")
    lines, width = (c.bm, c.bn) if row_major else (c.bn, c.bm)
    if ((lines - 1) * (width + 4) + width) * 4 > ring:
        why.append("the fp32 partial tile does not fit in the A/B ring")
    if lines % c.split_k:
        why.append(f"the tile's {lines} lines do not split evenly over split_k={c.split_k} CTAs")
    return why


@lru_cache(maxsize=None)
def _sm100_stages(bn: int, bk: int, ctas: int, cap: int = 8) -> int:
    """The deepest ring (at most ``cap`` stages) of a 128 x bn x bk stage that ``ctas`` CTAs per SM hold."""
    entry = registry.get("sm100", "9")
    for stages in range(cap, 0, -1):
        cfg = dataclasses.replace(entry.default_config(), bn=bn, bk=bk, stages=stages, ctas_per_sm=ctas, split_k=1)
        if not sm100_build_problems(entry.make(cfg)):
            return stages
    return 0


def sm100_split_candidates(m: int, n: int, k: int, mc: Machine | None = None) -> list[tuple[str, dict]]:
    """sm100 phases 9 (128-row tiles of C, split-K) and 10 (swap-AB: 128 weight rows x a token tile, M <= 512)
    configs worth modelling, from what the phases take: phase 9's tiles 128 x 64..256 (and, at 97-128 rows, the
    width that puts every tile in one wave), phase 10's token tiles (multiples of 16) holding the tokens in one, two
    (past 128) or three (past 256) tiles; each the deepest ring one CTA per SM holds (128-deep k-tiles for phase 10
    where 4 of them fit) and every split of ``SM100_SPLITS`` up to the k-tiles. A config the operands make the kernel
    refuse (``sm100_build_problems``: C's lines and the split) is dropped in ``explain``. One CTA per SM only: the
    DSL 4.8.1 reads the device's smem per SM to compile ``ctas_per_sm`` > 1 without a smem carve-out, so such a
    config neither compiles on a CPU nor runs on the PTX machine (docs/sm100.md)."""
    mc = mc or machine("sm100")
    out = []
    pdl = 2.0 * m * n * k <= PDL_MAX_FLOP

    def add(phase, bn, bk, ctas):
        stages = _sm100_stages(bn, bk, ctas)
        if stages < 2 or stages * ctas < 3:  # a ring too shallow to stream (what sm90's candidates keep out too)
            return
        for split in SM100_SPLITS:
            if split > max(1, _ceil(k, bk)) or (phase == "9" and 128 % split):
                continue  # a rank with no k-tile; phase 9's 128 rows (a row-major C's lines) in uneven parts
            if phase == "9" and m > 512 and _ceil(m, 128) * _ceil(n, bn) * split > clusters_that_fit(split, mc) * split:
                continue  # past 512 rows, data-parallel tiles of more than one wave: the persistent phases' work
            out.append((phase, {"bn": bn, "bk": bk, "stages": stages, "split_k": split, "ctas_per_sm": ctas,
                                "use_pdl": pdl}))

    tiles = list(SM100_TILES)
    fitted = wave_fitted_bn(m, n, 128, mc.sms) if 96 < m <= 128 else None
    if fitted:
        tiles.append(fitted)
    for bn in tiles:
        add("9", bn, 64, 1)
    if m <= 512:
        token_tiles16 = {_ceil(_ceil(m, parts), 16) * 16 for parts in (1, 2, 3) if _ceil(m, parts) <= 256
                         and (parts == 1 or m > 128 * (parts - 1))}
        for bn in sorted(token_tiles16):
            add("10", bn, 128 if bn <= 128 and _sm100_stages(bn, 128, 1) >= 4 else 64, 1)
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
        box = cfg.box_n() if hasattr(cfg, "box_n") else bn  # sm100: the ring holds the tile's bn rows
        inflight = min(ctas_total, slots) * cfg.stages * (bm + box) * cfg.bk * 2
        memory = memory_bytes / (mc.hbm_bytes_per_us * min(1.0, inflight / mc.inflight_for_full_bw))
        if kernel.phase == "10":
            memory *= 1 + mc.token_tile_reread * (_ceil(cols, bn) - 1)
        reduce = waves * (split > 1) * (mc.split_us + min(bm * bn * 4, mc.reduce_max_bytes) / mc.dsmem_bytes_per_us)
        fixed = mc.launch_us + (waves - 1) * mc.wave_us + (not cfg.use_pdl) * mc.no_pdl_us
        body = max(mma, memory) + mc.overlap * min(mma, memory)
        if kernel.phase == "10":
            # the multicast measured a gain only with every token in the one tile it shares
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
            # 128 tokens and with phase 10's factor (the plain model ran 1.3-1.6x slow at K >= 4096)
            body *= mc.swap_factor
        elif cm > 1 and waves == 1:
            # phase 9's 64-token tiles in pairs sharing the weights' tile (the multicast's gain); where the pair holds
            # every token with no row padded (M = 128) it is phase 10's kernel unswapped with its deep ring, and takes
            # phase 10's factor (with padded token rows it measured no faster than the pick)
            whole = m == cm * bm
            body *= (mc.swap_factor if whole else 1.0) * (1 - mc.mcast_gain * (1 - 1 / cm))
        # a split costs more than its reduce: a split CTA's k-loop runs slower than a whole one's (Machine.split_body)
        body *= 1 + mc.split_body * (split > 1)
        return fixed + body + reduce
    rounds = tile_rounds(kernel, m, n, k)
    mma = rounds * 2 * cfg.bm * cfg.bn * k / mc.mma_flop_per_us * factor
    memory = memory_bytes / mc.hbm_bytes_per_us
    pdl = getattr(cfg, "use_pdl", False)
    launch = mc.persistent_one_round_us if rounds == 1 and pdl else mc.persistent_launch_us  # see Machine
    exposed = (rounds - 1) * mc.epilogue_round_us if kernel.arch == "sm90" and kernel.phase in ("6", "7") else 0.0
    return launch + (not pdl) * mc.no_pdl_us + max(mma, memory) + mc.overlap * min(mma, memory) + exposed


def tile_rounds(kernel, m: int, n: int, k: int) -> float:
    """A persistent phase's tile rounds at (m, n, k): those of its busiest cluster (a split last round counts half)."""
    sched = kernel.schedule(m, n, k)
    if len(sched) == 3:  # stream-K: data-parallel tiles, split tiles, clusters launched
        dp, sk, clusters = sched
    else:  # plain persistent: tiles, clusters launched
        (dp, clusters), sk = sched, 0
    return _ceil(dp, clusters) + (0.5 if sk else 0.0)


def _candidates(arch: str, m: int, n: int, k: int, accumulate: bool = False):
    """(entry, config, factor) of every candidate of ``arch`` for (m, n, k). With ``accumulate`` (C += A @ B,
    ``gemm(..., accumulate=True)``): the candidates whose config has that field (the TMA-store epilogue: sm90's
    persistent ones), with it on; the same costs (unmeasured: the reduce-add also reads C)."""
    out = list(PERSISTENT[arch])
    if arch == "sm90" and not accumulate:  # phases 9 and 10 store C with st.global: they cannot add into it
        out += [(phase, over, 1.0) for phase, over in split_candidates(m, n, k)]
    elif arch == "sm100" and not accumulate:
        out += [(phase, over, 1.0) for phase, over in sm100_split_candidates(m, n, k)]
    for phase, over, factor in out:
        entry = registry.get(arch, phase)
        if over is RING5 and k <= WIDE_BAND_MAX_K:
            over = {**over, **WIDE_BAND}
        cfg = dataclasses.replace(entry.default_config(), **over)
        if accumulate:
            if not hasattr(cfg, "accumulate"):
                continue
            cfg = dataclasses.replace(cfg, accumulate=True)
        yield entry, cfg, factor


def refused(entry, cfg, kern, m: int, n: int, k: int) -> bool:
    """True where ``kern`` (``entry`` built with ``cfg``) cannot run (m, n, k): the shape or operands, the config's
    own rules, or (sm100) what its build would refuse -- the one test every candidate passes."""
    return bool(kern.can_implement(m, n, k) or entry.config_problems(cfg) or sm100_build_problems(kern))


def explain(arch: str, m: int, n: int, k: int, operands=None, accumulate: bool = False) -> list[dict]:
    """Every candidate that takes (m, n, k) with ``operands`` (None: the worklog's) with its modelled
    time in microseconds (``cost``), cheapest first; ``accumulate``: those that can add into C. Phase 8 in its
    ``fitted_width`` is one of them where ``fitted_row`` says so."""
    rows = _rows(arch, _candidates(arch, m, n, k, accumulate), m, n, k, operands)
    fitted = fitted_row(arch, rows, m, n, k, operands, accumulate)
    return [fitted] + rows if fitted else rows


def fitted_factor(bn: int) -> float:
    """Phase 8's time factor at width ``bn``: ``PHASE8_FACTOR`` times the shared-memory operand bytes a MAC reads at
    ``bn`` over those at its default 192. Each k-step's wgmmas read the tile's 128 rows of A and ``bn`` of B, so a MAC
    reads (1/bn + 1/128) of an element: 8% more at 160 than at 192, 4% more at 176. The tensor pipe waits on those
    reads (the shared pipe is nearly always busy in these kernels), so a narrower tile runs slower per MAC. Where
    the rounds set the time a width that fills them still wins; at long K the reads do (docs/best.md, "Phase 8 in
    the width that fills its rounds")."""
    default = registry.get("sm90", "8").default_config()

    def reads(width: int) -> float:  # smem operand elements a MAC reads: A's tile rows and B's per k-step
        return 1 / width + 1 / default.bm

    return PHASE8_FACTOR * reads(bn) / reads(default.bn)


def fitted_row(arch: str, rows: list[dict], m: int, n: int, k: int, operands=None, accumulate: bool = False):
    """``explain``'s row of phase 8 in the ``fitted_width`` of (m, n), priced with ``fitted_factor``, where that width
    is one of ``PICKED_WIDTHS`` and its cost is ``CLOSE_CALL`` below the cheapest of ``rows`` (the other candidates):
    where the model ranks it ahead by more than it can resolve. None elsewhere (``explore`` offers it to
    ``cute-gemm tune --explore``)."""
    fitted = fitted_width(arch, m, n, k, operands)
    if not fitted or fitted["bn"] not in PICKED_WIDTHS or not rows:
        return None
    entry = registry.get(arch, "8")
    cfg = dataclasses.replace(entry.default_config(), **fitted, **({"accumulate": True} if accumulate else {}))
    row = _rows(arch, [(entry, cfg, fitted_factor(cfg.bn))], m, n, k, operands)
    return row[0] if row and row[0]["cost"] <= rows[0]["cost"] * (1 - CLOSE_CALL) else None


def explore(arch: str, m: int, n: int, k: int, operands=None) -> list[dict]:
    """``explain``'s rows of the ``EXPLORE`` configs, and of phase 8 in the ``fitted_width`` of (m, n), that take
    (m, n, k) with ``operands``: their ``cost`` is the formula's, which no measurement of theirs has tested
    (``cute-gemm tune --explore`` times them)."""
    entries = [(registry.get(arch, phase), over) for phase, over in EXPLORE[arch]]
    fitted = fitted_width(arch, m, n, k, operands)
    picked = fitted_row(arch, _rows(arch, _candidates(arch, m, n, k), m, n, k, operands), m, n, k, operands)
    entries += [(registry.get(arch, "8"), fitted)] if fitted and not picked else []
    return _rows(arch, [(e, dataclasses.replace(e.default_config(), **over), 1.0) for e, over in entries], m, n, k,
                 operands)


# phase 8's tile widths besides its 192 (at most 192 accumulators per thread): multiples of 16 whose count of tiles may
# fill the persistent grid's last round where 192 leaves it part-empty; those not a multiple of 32 stored in 16-column
# slabs, each slab its own staging buffer. Only with B K-major (a weight as nn.Linear holds it): a B tile N-major is
# swizzled in 64-column atoms, which 144 and 176 do not fill (on an H100 they ran 0.56-0.75 of 192 in dX's nn and
# dW's tn layouts, against up to 1.07 of it in the forward's nt: docs/results.md)
FITTED_WIDTHS = (144, 160, 176)
FITTED_GAIN = 0.04  # offered where the busiest SM's work (tile rounds x width) is at least this much below 192's
# the widths best may pick (``fitted_row``): 144 ran slowest wherever it was offered (H100, 2026-12-05: 0.93 of 192
# at 4096x8192x1024), and has not been through the GPU checks a pick needs
PICKED_WIDTHS = (160, 176)


def fitted_width(arch: str, m: int, n: int, k: int, operands=None) -> dict | None:
    """Phase 8's config overrides at the width of ``FITTED_WIDTHS`` that gives the busiest SM the least work -- its
    rounds of cluster tiles times the tile's width -- where that is ``FITTED_GAIN`` below the default width's; None
    elsewhere, on sm100 and where B is not K-major (``operands``; None: the worklog's, N-major). 1024 x 11008: 192 wide
    is 464 tiles in 3.5 rounds of 132 SMs (4 x 192 columns of work), 176 wide 504 in 4 (4 x 176, 8% less); cuBLAS runs
    168 x 128 tiles there, 4 full rounds."""
    if arch != "sm90" or (operands or WORKLOG).b_major != "k":
        return None
    entry, mc = registry.get(arch, "8"), machine(arch)

    def work(over: dict) -> int:
        cfg = dataclasses.replace(entry.default_config(), **over)
        tiles, clusters = entry.make(dataclasses.replace(cfg, sm_count=kern_slots(entry, cfg, mc))).schedule(m, n, k)
        return _ceil(tiles, clusters) * cfg.bn

    works = {bn: work({"bn": bn}) for bn in FITTED_WIDTHS}
    best = min(FITTED_WIDTHS, key=lambda bn: (works[bn], -bn))
    return None if works[best] > work({}) * (1 - FITTED_GAIN) else fitted_overrides(best)


def fitted_overrides(bn: int) -> dict:
    """Phase 8's overrides at width ``bn`` of ``FITTED_WIDTHS``: 32-column slabs where they divide it, else 16, and
    one staging buffer per slab (slab j in buffer j in every tile)."""
    epi_n = 32 if bn % 32 == 0 else 16
    return {"bn": bn, "epi_n": epi_n, "epi_stages": bn // epi_n, **_PDL}


def _rows(arch: str, cands, m: int, n: int, k: int, operands) -> list[dict]:
    """``explain``'s rows of ``cands`` ((entry, config, factor) each), those that take (m, n, k), cheapest first."""
    rows, mc = [], machine(arch)
    for entry, cfg, factor in cands:
        kern = entry.make(cfg, operands)
        if refused(entry, cfg, kern, m, n, k):
            continue
        if hasattr(cfg, "sm_count"):  # a persistent grid: as many clusters as the machine holds (plan does so)
            kern = entry.make(dataclasses.replace(cfg, sm_count=kern_slots(entry, cfg, mc)), operands)
        rows.append({"phase": entry.phase, "config": cfg, "label": label(entry.phase, entry.overrides(cfg)),
                     "cost": modelled_us(kern, m, n, k, factor, mc), "fitted": mc.fitted})
    return sorted(rows, key=lambda r: rank(r["cost"], r["phase"]))


def kern_slots(entry, cfg, mc: Machine) -> int:
    """A persistent phase's ``sm_count`` on ``mc``: its cluster's CTAs x the clusters of that size that fit
    (what ``plan.fitted_config`` compiles on a GPU)."""
    ctas = entry.cluster_ctas(cfg)
    return ctas * clusters_that_fit(ctas, mc)


# how close two phases' modelled times must be for the model to say it cannot rank them: the spread of one kernel's time
# between runs under the power cap (2-4% at prefill shapes on the H200), which a fit cannot resolve either
CLOSE_CALL = 0.03


def close_calls(arch: str, m: int, n: int, k: int, operands=None) -> list[str]:
    """The cheapest candidate of every other phase within ``CLOSE_CALL`` of the pick's modelled time: the families
    the model cannot rank at (m, n, k), which ``cute-gemm tune`` settles by timing them on the user's GPU."""
    rows = explain(arch, m, n, k, operands)
    if not rows:
        return []
    seen, out = {rows[0]["phase"]}, []
    for r in rows[1:]:
        if r["phase"] not in seen and r["cost"] <= rows[0]["cost"] * (1 + CLOSE_CALL):
            out.append(r["label"])
        seen.add(r["phase"])
    return out


def rank(cost: float, phase: str) -> tuple:
    """The order of two candidates: the cheaper first; on a tie (the model is symmetric under the swap) the swapped
    tile (measured faster at M <= 128), then a persistent phase (a one-round schedule with PDL costs what phase 9's
    same tile does, and adds the B multicast and the TMA-store epilogue; see ``Machine.persistent_one_round_us``)."""
    return round(cost, 3), phase != "10", phase not in _PERSISTENT_PHASES


def label(phase: str, over: dict) -> str:
    """'10 bm=128 bn=64': a candidate's phase and config overrides."""
    return " ".join(filter(None, [phase, registry.overrides_label(over)]))


def pick_label(arch: str, phase: str, cfg, how: str, drop=()) -> str:
    """A ``resolve`` / ``resolve_epilogue`` answer as a table names it: ``label`` of its config's overrides (less the
    fields in ``drop``), then ' tuned' (``cute-gemm tune`` picked it) or ' unfitted' (the model rests on datasheet
    constants: sm100)."""
    entry = registry.get(arch, phase)
    over = {k: v for k, v in entry.overrides(cfg or entry.default_config()).items() if k not in drop}
    return label(phase, over) + (" tuned" if how == "tuned" else " unfitted" if not fitted(arch) else "")


@lru_cache(maxsize=4096)
def pick(arch: str, m: int, n: int, k: int, operands=None, accumulate: bool = False):
    """(phase, config) that ``phase="best"`` runs for (m, n, k) with ``operands`` (None: the worklog's)
    on ``arch`` (``accumulate``: C += A @ B); LookupError if none can."""
    rows = explain(arch, m, n, k, operands, accumulate)
    if not rows:
        what = " with accumulate (C += A @ B)" if accumulate else ""
        raise LookupError(f"no {arch} candidate of phase 'best' takes {m}x{n}x{k}{what}")
    best = rows[0]
    default = registry.get(arch, best["phase"]).default_config()
    return best["phase"], (None if best["config"] == default else best["config"])


def resolve(arch: str, m: int, n: int, k: int, operands=None, gpu: str | None = None, accumulate: bool = False):
    """(phase, config or None for the default, "tuned" or "model"): what ``phase="best"`` runs for (m, n, k) with
    ``operands`` on the GPU named ``gpu`` -- the tuned pick when that GPU's table holds one that still takes the
    shape, else ``pick``'s; LookupError if none can. ``accumulate`` (C += A @ B): a tuned pick only if its phase
    can add into C (with the field on), else ``pick``'s among those that can."""
    hit = tuned.lookup(gpu, arch, m, n, k, operands) if gpu else None
    if hit:
        try:
            entry = registry.get(arch, hit[0])
            cfg = entry.configured(hit[1])
            if accumulate:
                cfg = dataclasses.replace(cfg, accumulate=True)  # TypeError: a phase without the field
            kern = entry.make(cfg, operands)
            if not kern.can_implement(m, n, k) and not sm100_build_problems(kern):
                return entry.phase, (None if cfg == entry.default_config() else cfg), "tuned"
        except (LookupError, ValueError, TypeError, UnsupportedError):  # a row naming a phase or field that no
            pass  # longer exists, a config the phase's rules refuse, a phase that cannot accumulate: the model
    return (*(pick(arch, m, n, k, operands, True) if accumulate else pick(arch, m, n, k, operands)), "model")


# ------------------------------------------------------------------------------------------ the fused epilogue
EPILOGUE_PHASE = "11"  # the phase with the fused epilogue (both ladders): phase 10 + bias, activation, residual
# the persistent phases whose configs carry the same epilogue fields (the prefill shapes' picks): a pick of theirs
# takes the epilogue as it is; a pick of phase 10 becomes phase 11 (phase 10 + the epilogue)
EPILOGUE_PERSISTENT = {"sm90": ("6", "7", "8"), "sm100": ("6",)}


def _phase10_fallback(arch: str, m: int, n: int, k: int) -> list[tuple[str, dict]]:
    """Phase 10 configs for a shape ``split_candidates`` / ``sm100_split_candidates`` offers none (past 512 tokens):
    128 or 256 weight rows x the widest token tiles their accumulators allow, unsplit, the deepest ring -- the
    phase's large-M shapes, for the fused epilogue only (plain calls there go to the persistent phases)."""
    out = []
    if arch == "sm90":
        for bm, bn in ((128, 256), (128, 192), (128, 128), (256, 128)):
            stages = _stages(bm, bn, 64, 1)
            if stages >= 3 and _fits_registers(bm, bn, 1):
                out.append(("10", {"bm": bm, "bn": bn, "bk": 64, "stages": stages, "split_k": 1, "ctas_per_sm": 1,
                                   "cluster_m": 1, "evict_first_a": False}))
    else:
        for bn in (256, 192, 128):
            stages = _sm100_stages(bn, 64, 1)
            if stages >= 2:
                out.append(("10", {"bn": bn, "bk": 64, "stages": stages, "split_k": 1, "ctas_per_sm": 1,
                                   "use_pdl": 2.0 * m * n * k <= PDL_MAX_FLOP}))
    return out


def phase10_rows(arch: str, m: int, n: int, k: int, operands=None) -> list[dict]:
    """``explain``'s phase 10 rows (cheapest first); where it has none (M past phase 10's candidates), the rows of
    ``_phase10_fallback`` under the same filters and the same model."""
    rows = [r for r in explain(arch, m, n, k, operands) if r["phase"] == "10"]
    if rows:
        return rows
    mc, entry = machine(arch), registry.get(arch, "10")
    for phase, over in _phase10_fallback(arch, m, n, k):
        cfg = dataclasses.replace(entry.default_config(), **over)
        kern = entry.make(cfg, operands)
        if refused(entry, cfg, kern, m, n, k):
            continue
        rows.append({"phase": phase, "config": cfg, "label": label(phase, entry.overrides(cfg)),
                     "cost": modelled_us(kern, m, n, k, 1.0, mc), "fitted": mc.fitted})
    return sorted(rows, key=lambda r: r["cost"])


def with_epilogue(arch: str, config, bias: bool, activation: str, residual: bool, gated: bool = False):
    """Phase 11's config of a phase 10 (or 11) config (None: phase 10's default) with the epilogue fields set --
    ``gated`` the call's too, whatever a phase 11 config had."""
    entry = registry.get(arch, EPILOGUE_PHASE)
    base = dataclasses.asdict(config if config is not None else registry.get(arch, "10").default_config())
    ten = {f.name for f in dataclasses.fields(registry.get(arch, "10").config_cls)}
    for name in [n for n in base if n not in ten]:
        base.pop(name, None)
    return entry.config_cls(**base, bias=bias, activation=activation, residual=residual, gated=gated)


def _epilogue_fits(arch: str, cfg, m: int, n: int, k: int, operands, phase: str = EPILOGUE_PHASE) -> bool:
    entry = registry.get(arch, phase)
    return not refused(entry, cfg, entry.make(cfg, operands), m, n, k)


def _epilogue_row(arch: str, phase: str, config, m, n, k, operands, bias, activation, residual, gated=False):
    """(phase, config) that runs a model row ``(phase, config)`` with the epilogue -- phase 10's as phase 11, a
    persistent phase's (``EPILOGUE_PERSISTENT``) with its own fields set (``gated`` too: sm90's take the gated
    pairs, sm100's refuses them) -- or None where that phase cannot."""
    if phase in ("10", EPILOGUE_PHASE):
        cfg = with_epilogue(arch, config, bias, activation, residual, gated)
        return (EPILOGUE_PHASE, cfg) if _epilogue_fits(arch, cfg, m, n, k, operands) else None
    if phase in EPILOGUE_PERSISTENT.get(arch, ()):
        cfg = dataclasses.replace(config, bias=bias, activation=activation, residual=residual, gated=gated)
        if (arch, phase) == ("sm90", "8") and cfg.epilogue_active():
            spread = spread_slabs(cfg)
            if _epilogue_fits(arch, spread, m, n, k, operands, phase):
                return phase, spread
        return (phase, cfg) if _epilogue_fits(arch, cfg, m, n, k, operands, phase) else None
    return None


def spread_slabs(cfg):
    """Phase 8's config for a fused epilogue: its arithmetic spread over half-width slabs, each slab's after the
    previous slab's barrier (``epi_spread``, ``epi_n`` 32 -> 16 with twice the buffers: the same staging bytes), and
    the tile's bias read from smem (``bias_smem``: one copy a tile as its mainloop starts; inert with a residual).

    Why: a ping-pong warpgroup's epilogue runs while the other warpgroup's wgmmas run, on the same SM sub-partitions.
    Left where ptxas puts it, the whole tile's arithmetic is one dense burst right when the other warpgroup starts its
    tile, and that warpgroup's tensor pipe idles beside it. The same instructions in short bursts (twelve at 192 wide)
    between the slab stores, the bias reads pinned below each slab's barrier, leave it nearly as busy as with none
    (docs/lessons.md, "The pieces together"). The gated pairs keep their 32-column slabs: a slab's C is half its
    accumulator columns, and six stores of 16 C columns (32-B rows) cost less than twelve of 8; the spread alone
    thins their burst (the same section). Configs already in 16-column slabs get the rest; 64-column slabs (a config
    ``cute-gemm tune --explore`` may have kept) stay as they are, the form no GPU has run spread."""
    if cfg.epi_n not in (16, 32):
        return cfg
    over = {"epi_spread": True, "bias_smem": True}
    slabs = cfg.bn // 16 if cfg.bn % 16 == 0 else 0
    if cfg.epi_n == 32 and not cfg.gated and slabs and slabs % (2 * cfg.epi_stages) == 0:
        over.update(epi_n=16, epi_stages=2 * cfg.epi_stages)
    return dataclasses.replace(cfg, **over)


def _epilogue_pick_row(arch: str, m, n, k, operands, bias, activation, residual, gated, rows=None):
    """(phase, config, modelled us) of ``pick_epilogue``, or None where no row takes the epilogue; ``rows``:
    ``explain``'s rows of the shape where the caller has them. With an activation or the gated pairs, the rows of
    sm90's phases 6-7 pay ``Machine.fused_round_us`` each tile round (their epilogue's arithmetic is exposed) and the
    rows are ranked again; phase 10's large-M rows stay the fallback."""
    rows = explain(arch, m, n, k, operands) if rows is None else rows
    arithmetic = (activation != "none" or gated) and machine(arch).fused_round_us > 0
    ranked = []
    for row in rows:
        pick = _epilogue_row(arch, row["phase"], row["config"], m, n, k, operands, bias, activation, residual, gated)
        if pick is not None:
            ranked.append((*pick, row["cost"] + (_fused_rounds_us(arch, row, m, n, k, operands) if arithmetic else 0)))
    if ranked:
        return min(ranked, key=lambda r: rank(r[2], r[0]))
    for row in phase10_rows(arch, m, n, k, operands):
        pick = _epilogue_row(arch, row["phase"], row["config"], m, n, k, operands, bias, activation, residual, gated)
        if pick is not None:
            return (*pick, row["cost"])
    return None


def _fused_rounds_us(arch: str, row: dict, m: int, n: int, k: int, operands) -> float:
    """What a fused activation adds to ``row``'s modelled time: ``Machine.fused_round_us`` per tile round for sm90's
    phases 6-7, whose consumer warpgroups run it while the tensor pipe waits; nothing for the others."""
    if arch != "sm90" or row["phase"] not in ("6", "7"):
        return 0.0
    mc, entry = machine(arch), registry.get(arch, row["phase"])
    cfg = dataclasses.replace(row["config"], sm_count=kern_slots(entry, row["config"], mc))
    return tile_rounds(entry.make(cfg, operands), m, n, k) * mc.fused_round_us


@lru_cache(maxsize=4096)
def fusing_pays(arch: str, m: int, n: int, k: int, operands=None, bias: bool = False, activation: str = "none",
                residual: bool = False) -> bool:
    """Whether best's fused pick (``pick_epilogue``) is modelled no slower than best's plain pick followed by the
    one pass a torch op makes over C (a launch, C read and written): what ``linear`` asks before it fuses a bias
    alone, where the unfused sequence is that one in-place add. At decode sizes the two picks share phase 10's
    tile (the fused one is phase 11); at prefill sizes the plain pick may be a phase without the epilogue (7's
    stream-K, 9's split-K tiles) that is faster by more than the pass costs."""
    rows = explain(arch, m, n, k, operands)
    fused = _epilogue_pick_row(arch, m, n, k, operands, bias, activation, residual, False, rows)
    if fused is None:
        return False
    if not rows:
        return True
    mc = machine(arch)
    c_bytes = 4 if operands is None or operands.c == "fp32" else 2
    one_pass = mc.launch_us + 2 * m * n * c_bytes / mc.hbm_bytes_per_us
    return fused[2] <= rows[0]["cost"] + one_pass


@lru_cache(maxsize=4096)
def pick_epilogue(arch: str, m: int, n: int, k: int, operands=None, bias: bool = False, activation: str = "none",
                  residual: bool = False, gated: bool = False):
    """(phase, config): what ``phase="best"`` runs for a call with a fused epilogue -- the model's cheapest row at
    (m, n, k) with ``operands`` whose phase takes the epilogue (``_epilogue_row``: phase 10's as phase 11, the
    persistent phases' with their fields; phase 7's stream-K and phase 9's unswapped tiles do not), else the
    cheapest of ``phase10_rows`` (phase 10's large-M fallback) as phase 11; LookupError if none. The epilogue is
    not in the cost (a few loads and FMAs per stored value), but for ``Machine.fused_round_us``. ``gated`` (the
    gated pairs, (m, n, k) the GEMM's: n counts gate and up): the same rows, where their phase takes the pairs
    (sm90's persistent phases and 11)."""
    row = _epilogue_pick_row(arch, m, n, k, operands, bias, activation, residual, gated)
    if row is not None:
        return row[:2]
    phases = (EPILOGUE_PHASE,) if gated else EPILOGUE_PERSISTENT.get(arch, ()) + (EPILOGUE_PHASE,)
    raise LookupError(f"no {arch} config takes {m}x{n}x{k} with a fused epilogue{' (gated)' if gated else ''} "
                      f"(phases {', '.join(phases)})")


def resolve_epilogue(arch: str, m: int, n: int, k: int, operands=None, gpu: str | None = None, bias: bool = False,
                     activation: str = "none", residual: bool = False, gated: bool = False):
    """(phase, config, "tuned" or "model"): ``resolve`` for a call with a fused epilogue. The tuned pick of the shape
    when its phase takes the epilogue (``_epilogue_row``); any other
    tuned pick falls back to ``pick_epilogue``."""
    hit = tuned.lookup(gpu, arch, m, n, k, operands) if gpu else None
    if hit:
        try:
            pick = _epilogue_row(arch, hit[0], registry.get(arch, hit[0]).configured(hit[1]), m, n, k, operands, bias,
                                 activation, residual, gated)
            if pick is not None:
                return (*pick, "tuned")
        except (LookupError, ValueError, TypeError, UnsupportedError):  # a row the phase no longer takes: the model
            pass
    return (*pick_epilogue(arch, m, n, k, operands, bias, activation, residual, gated), "model")
