"""How well ``phase="best"``'s time model picks, against measured candidates (no GPU needed).

    python bench/fit_best.py [FILE ...] [--fit]     (default: ``DEFAULT``, the H200 candidate and tune runs)

The JSON holds, per shape, the measured time of every candidate config (phases 7/8 and the families of
phases 9/10 that ``cute_gemm.runtime.choose`` enumerates) beside cuBLAS/cuBLASLt, from one H200 run.
For each shape the model ranks the measured candidates; the report is the picked candidate's time
against the fastest measured one ("of best") and against the vendor library ("of vendor"), and at how
many shapes ``pick``'s own choice among all of its candidates is a measured row at all (where it is not,
the regret says nothing of what ``pick`` runs; ``bench/candidates.py`` measures it). With ``--fit`` it first re-fits the model's constants by coordinate descent over a grid (minimising the
geometric-mean regret plus the mean log error, plus a cost per shape whose pick no file measured), and prints
them: that is how ``choose.MACHINE`` was set.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import math
import sys
import tarfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cute_gemm.measure.tune import candidate_rows as rows_of  # noqa: E402  (a candidates file's or bench JSON's rows)
from cute_gemm.runtime import choose, registry  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
# the plain candidates files of 12-01 to 12-03 (most of them linked from docs/results.md), kept in one archive (the
# working tree travels to the GPU machine beside the DSL bundle, in a 64 MiB carry); a path through an archive reads
# as ARCHIVE.tar.xz/MEMBER
CANDIDATES = RESULTS / "h200_2026-12-01_to_03_candidates.tar.xz"
# candidate runs no document links to, kept in one archive (small files in blocks add up)
FIT_RUNS = RESULTS / "h200_2026-12-02_to_03_fit_runs.tar.xz"
# the runs of the criteria with the final model (model8) and after: three 96-token tiles over 4 (won at 4 of 10, then
# lost at fresh shapes), every family at 241-256 tokens, the reduce cap's picks beside the old ones (two samples),
# 192-row tiles with the token multicast over two token tiles
MODEL8_RUNS = RESULTS / "h200_2026-12-03_model8_runs.tar.xz"
# token tiles of 8 x an odd number: cuBLAS's arrangements beside best, the picks of tokens in steps of 8 beside the old
# ones (22 random shapes), three 88-token tiles where the weight tiles leave a cluster of 4 ragged (two runs)
TOK8_RUNS = RESULTS / "h200_2026-12-03_tok8_runs.tar.xz"
# heldout10's candidates, the one-round persistent launch's moved picks, 257-512 tokens (one-wave tiles beside best, then
# the new picks beside the old at random shapes); the archive's kinter / eager files time configs reverted since
M512_RUNS = RESULTS / "h200_2026-12-03_m512_runs.tar.xz"
# 257-512 tokens again: 256-row weight tiles beside best (design), the picks they moved beside the old ones, 289-310
# tokens at 14336 weight rows, every family at three gap shapes, phase 10's token halves' moved picks and their
# two-wave picks beside the 256-row ones
M512B_RUNS = RESULTS / "h200_2026-12-04_m512b_runs.tar.xz"
# three token tiles past 256 tokens and phase 9's deep 64 x 64 pair at 113-128 tokens: the pair beside the pick at 128
# tokens, every family at three 257-512-token gaps, three token tiles beside best, the pair at seven more shapes, the
# picks both rules moved beside the old ones
T3W64_RUNS = RESULTS / "h200_2026-12-04_t3w64_runs.tar.xz"
ARCHIVES = (CANDIDATES, FIT_RUNS, MODEL8_RUNS, TOK8_RUNS, M512_RUNS, M512B_RUNS, T3W64_RUNS)
# the first candidate sweep, the M=128 / wave-fitted / two-pick runs, the token-tile multicast runs, the 192-row tiles
# and 3-way splits with the picks they moved, the candidates after heldout3, the `cute-gemm tune` runs (a shape in
# several: the later file wins), the token tiles in steps of 16, every family's cheapest at 72-248 tokens, the picks
# the multicast / reduce refit moved, heldout6's candidates, random shapes whose pick that refit moved,
# 128 tokens in two 64-token tiles, 64-token tiles sharing the weights, the decode set tuned again, heldout3 tuned
# with every family's cheapest, the 128-token pairs' and the token-tile re-read's picks beside the old ones, that
# re-read's and the wide single-warpgroup tile's terms' picks beside the old ones, three token tiles (the arrangement
# tried, the same kernel at 200-240 tokens, its first rule's and its narrowed rule's picks beside the old ones)
DEFAULT = [CANDIDATES / "h200_2026-12-01_best_candidates.json", CANDIDATES / "h200_2026-12-01_best_candidates_wave.json",
           CANDIDATES / "h200_2026-12-01_best_candidates_mcast.json", CANDIDATES / "h200_2026-12-02_best_candidates_tokens.json",
           CANDIDATES / "h200_2026-12-02_best_candidates_wide.json", CANDIDATES / "h200_2026-12-02_best_candidates_picks.json",
           CANDIDATES / "h200_2026-12-02_best_candidates_after.json", FIT_RUNS / "h200_2026-12-02_tune_decode.json",
           FIT_RUNS / "h200_2026-12-02_tune_heldout.json", FIT_RUNS / "h200_2026-12-02_tune_heldout4.json",
           CANDIDATES / "h200_2026-12-02_best_candidates_tokens16.json",
           FIT_RUNS / "h200_2026-12-03_best_candidates_families1.json",
           FIT_RUNS / "h200_2026-12-03_best_candidates_families2.json",
           FIT_RUNS / "h200_2026-12-03_best_candidates_families3.json",
           FIT_RUNS / "h200_2026-12-03_best_candidates_model5.json",
           FIT_RUNS / "h200_2026-12-03_best_candidates_families4.json",
           CANDIDATES / "h200_2026-12-03_best_candidates_model6.json",
           FIT_RUNS / "h200_2026-12-03_best_candidates_families5.json",
           FIT_RUNS / "h200_2026-12-03_best_candidates_model6_sample.json",
           CANDIDATES / "h200_2026-12-03_best_candidates_tokens2.json",
           CANDIDATES / "h200_2026-12-03_best_candidates_wmcast.json",
           CANDIDATES / "h200_2026-12-03_tune_decode.json", CANDIDATES / "h200_2026-12-03_tune_families_heldout3.json",
           CANDIDATES / "h200_2026-12-03_best_candidates_night.json",
           CANDIDATES / "h200_2026-12-03_best_candidates_reread2.json",
           CANDIDATES / "h200_2026-12-03_best_candidates_tiles3.json", CANDIDATES / "h200_2026-12-03_best_candidates_tiles3m.json",
           CANDIDATES / "h200_2026-12-03_best_candidates_tiles3_heldout.json",
           CANDIDATES / "h200_2026-12-03_best_candidates_tiles3_80.json",
           MODEL8_RUNS / "h200_2026-12-03_best_candidates_tiles3_mc4.json",
           MODEL8_RUNS / "h200_2026-12-03_best_candidates_mc4_fresh.json",
           MODEL8_RUNS / "h200_2026-12-03_best_candidates_region256.json",
           MODEL8_RUNS / "h200_2026-12-03_best_candidates_reduce_cap.json",
           MODEL8_RUNS / "h200_2026-12-03_best_candidates_reduce_cap2.json",
           MODEL8_RUNS / "h200_2026-12-03_best_candidates_mcast192.json",
           TOK8_RUNS / "h200_2026-12-03_best_candidates_tok8.json",
           TOK8_RUNS / "h200_2026-12-03_best_candidates_tok8_moved.json",
           TOK8_RUNS / "h200_2026-12-03_best_candidates_tok8_4864.json",
           TOK8_RUNS / "h200_2026-12-03_best_candidates_tok8_ragged.json",
           M512_RUNS / "h200_2026-12-03_best_candidates_heldout10.json",
           M512_RUNS / "h200_2026-12-03_best_candidates_oneround.json", M512_RUNS / "h200_2026-12-03_best_candidates_m512.json",
           M512_RUNS / "h200_2026-12-03_best_candidates_m512_moved.json"] + [
           M512B_RUNS / f"h200_2026-12-04_best_candidates_{case}.json"
           for case in ("bm256", "bm256_moved", "bm256_tail", "gaps257", "gen512", "gen512_two_waves")] + [
           T3W64_RUNS / f"h200_2026-12-04_best_candidates_{case}.json"
           for case in ("w64pairs", "gaps512", "tiles3x", "w64more", "t3w64_moved")]
GRID = {
    "mma_flop_per_us": (5e6, 6.2e6, 7e6), "narrow_exponent": (0.0, 0.25, 0.5),
    "hbm_bytes_per_us": (4.05e6, 4.2e6, 4.35e6), "inflight_for_full_bw": (6e6, 10e6, 16e6),
    "launch_us": (1.4, 1.8, 2.2), "wave_us": (1.0, 2.0, 3.0), "overlap": (0.2, 0.4, 0.6), "swap_factor": (0.8, 0.85, 0.9, 0.95, 1.0),
    "split_us": (0.0, 0.3, 1.0), "dsmem_bytes_per_us": (1e4, 2e4, 4e4, 1e9), "no_pdl_us": (0.3, 0.6, 1.0),
    "reduce_max_bytes": (64 * 1024, 80 * 1024, 96 * 1024, float("inf")),
    "persistent_launch_us": (3.0, 4.0),
}


def read(path) -> dict:
    """A candidates or bench JSON file, or one inside a .tar.xz archive named as ARCHIVE.tar.xz/MEMBER."""
    archive, inside, member = str(path).partition(".tar.xz/")
    if not inside:
        return json.loads(Path(path).read_text())
    with tarfile.open(archive + ".tar.xz") as tar:
        return json.load(tar.extractfile(member))


def shapes_of(*docs: dict) -> dict:
    """Rows per shape; a shape measured in several files keeps the last file's rows (one run's timings
    are compared with each other only)."""
    out = {}
    for doc in docs:
        mine = {}
        for r in rows_of(doc):
            mine.setdefault((r["m"], r["n"], r["k"]), []).append(r)
        out.update(mine)
    return out


def _without_pdl(config: dict) -> dict:
    return {f: v for f, v in config.items() if f != "use_pdl"}


def kernels(shapes: dict) -> dict:
    """Each measured row's kernel instance (built once)."""
    out = {}
    for rows in shapes.values():
        for r in rows:
            entry = registry.get("sm90", r["phase"])
            cfg = dataclasses.replace(entry.default_config(), **r["config"])
            # a persistent candidate's factor whether it ran with programmatic dependent launch or (measured
            # before it was one of pick's) without
            bare = _without_pdl(r["config"])
            factor = next((f for ph, over, f in choose.PERSISTENT["sm90"]
                           if ph == r["phase"] and _without_pdl(over) == bare),
                          0.98 if r["phase"] == "8" else 1.0)  # the persistent candidates' factors, as pick uses them
            out[id(r)] = (entry.make(cfg), factor)
    return out


@functools.lru_cache(maxsize=None)
def candidate_kernels(shape) -> tuple:
    """(kernel, factor, (phase, unstaged config)) of every candidate ``pick`` weighs for ``shape`` (built once)."""
    out = []
    for entry, cfg, factor in choose._candidates("sm90", *shape):
        kern = entry.make(cfg)
        if not kern.can_implement(*shape):
            out.append((kern, factor, (entry.phase, _unstaged(cfg))))
    return tuple(out)


def model_pick(shape, mc: choose.Machine):
    """The (phase, unstaged config) ``pick`` would run at ``shape`` with the constants ``mc``: among all of its
    candidates, measured or not."""
    return min(candidate_kernels(shape), key=lambda c: choose.rank(choose.modelled_us(c[0], *shape, c[1], mc),
                                                                   c[0].phase))[2]


def candidates(shape) -> set:
    """(phase, config without stages and PDL) of every candidate ``choose`` weighs for ``shape``: ``pick`` chooses among these
    only, so a measured row outside them (a config tried and not kept) is never picked here either."""
    return {key for _, _, key in candidate_kernels(shape)}


def _unstaged(cfg):
    """A config without its ring depth, launch mode and L2 policy: they follow the smem budget, the PDL rule and
    the evict-first rule, which an older run may have set otherwise; the tile, split, residency and cluster make
    the candidate."""
    policies = {f: False for f in ("use_pdl", "evict_first_a") if hasattr(cfg, f)}
    return dataclasses.replace(cfg, stages=0, **policies)


def evaluate(shapes: dict, kerns: dict, mc: choose.Machine, verbose: bool = False):
    """(picked / fastest geomean, worst, mean |log error|, vendor / picked geomean, worst, shapes judged, shapes
    whose pick among *all* candidates is no measured row). The regret is judged among the measured rows only: a
    shape in the last list is one where ``pick`` runs a config no file has timed, whatever the regret says."""
    regret, vendor, err, unmeasured = [], [], [], []
    for shape, rows in shapes.items():
        if model_pick(shape, mc) not in {(r["phase"], _unstaged(kerns[id(r)][0].cfg)) for r in rows}:
            unmeasured.append(shape)
        pred = [(choose.modelled_us(kerns[id(r)][0], *shape, kerns[id(r)][1], mc), r) for r in rows]
        allowed = candidates(shape)
        pickable = [x for x in pred if (x[1]["phase"], _unstaged(kerns[id(x[1])][0].cfg)) in allowed]
        if not pickable:
            if verbose:
                print(f"{'x'.join(map(str, shape)):>16}  no measured row is a candidate today: left out")
            continue
        pick = min(pickable, key=lambda x: choose.rank(x[0], x[1]["phase"]))[1]  # ties as ``pick`` breaks them
        fastest = min(r["us"] for r in rows)
        regret.append(pick["us"] / fastest)
        vendor.append(pick["vendor_us"] / pick["us"])
        err += [abs(math.log(p / r["us"])) for p, r in pred]
        if verbose:
            print(f"{'x'.join(map(str, shape)):>16}  picked {pick['phase']:>2} {pick['us']:8.1f} us  fastest "
                  f"{fastest:8.1f}  -> {fastest / pick['us']:.2f} of best, {pick['vendor_us'] / pick['us']:.2f} of vendor")
    geo = math.exp(sum(map(math.log, regret)) / len(regret))
    vgeo = math.exp(sum(map(math.log, vendor)) / len(vendor))
    return geo, max(regret), sum(err) / len(err), vgeo, min(vendor), len(regret), unmeasured


def fit(shapes: dict, kerns: dict, mc: choose.Machine) -> choose.Machine:
    def score(m):
        # a fit that moves picks to configs nobody measured has not shown they are better: each such shape costs
        geo, worst, err, *_, unmeasured = evaluate(shapes, kerns, m)
        return geo + 0.3 * err + 0.2 * (worst - 1) + 0.1 * len(unmeasured) / len(shapes)

    best = (score(mc), mc)
    for _ in range(4):
        for name, values in GRID.items():
            for v in values:
                cand = dataclasses.replace(best[1], **{name: v})
                s = score(cand)
                if s < best[0]:
                    best = (s, cand)
    return best[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="*", default=[str(p) for p in DEFAULT],
                    help="candidates JSON or bench JSON files (or ARCHIVE.tar.xz/MEMBER); a shape in several keeps the last "
                         "file's rows")
    ap.add_argument("--fit", action="store_true", help="re-fit the model's constants first")
    args = ap.parse_args()
    shapes = shapes_of(*(read(p) for p in args.results))
    kerns = kernels(shapes)
    mc = fit(shapes, kerns, choose.MACHINE) if args.fit else choose.MACHINE
    if args.fit:
        print(mc)
    geo, worst, err, vgeo, vmin, n, unmeasured = evaluate(shapes, kerns, mc, verbose=True)
    print(f"{n} of {len(shapes)} shapes: picked / fastest measured geomean {1 / geo:.3f} (worst {1 / worst:.2f}); "
          f"vendor / picked geomean {vgeo:.3f} (worst {vmin:.2f}); mean |log error| {err:.3f}")
    print(f"pick's own choice among all candidates is a measured row at {len(shapes) - len(unmeasured)} of {len(shapes)} "
          f"shapes" + (f"; not measured: {', '.join('x'.join(map(str, s)) for s in unmeasured)}" if unmeasured else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
