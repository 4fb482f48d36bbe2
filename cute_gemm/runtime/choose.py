"""``phase="best"``: pick a phase and config per shape, as a vendor library's heuristic does.

No single tile wins everywhere: the persistent grid runs whole rounds of tiles over the SMs, and the
busiest cluster sets the time. A 128x256 tile is the most efficient per FLOP (fewest bytes moved per
MMA), but at 3072^3 its 144 cluster tiles are 2 rounds of 66 + 12 (phase 7 halves that last round;
still 2.5 tile times where 2.2 would do), while 128x192 tiles make 192 = 2.9 rounds of a tile 3/4 the
size: 2.25 tile times. The model below is that arithmetic: time ~ (tile rounds of the busiest cluster)
x (work per tile), with a small penalty for the narrower tile's extra A traffic per FLOP. It uses each
candidate kernel's own ``schedule`` (the host arithmetic the kernel runs), so it knows about stream-K.

Candidates per ladder are (phase, config overrides). ``pick`` caches its answer per shape; ``explain``
gives the numbers behind a pick (``cute-gemm bench`` prints which config "best" chose).
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache

from cute_gemm.runtime import registry

# (phase, config overrides, relative cost per unit of tile width): a narrower tile reads A once per 192
# or 128 instead of 256 columns of B, i.e. more smem/L2 bytes per FLOP (the penalties are that, roughly);
# the 128-wide tile keeps 6 stages in the same smem
CANDIDATES = {
    # phase 8 (ping-pong, 128x192) at 0.98: its epilogue hides under the other warpgroup's MMAs (Nsight
    # Compute, 8192^3: tensor pipe 96% of the cycles against 92% for phase 6, 4% fewer cycles), which pays
    # back its narrower tile; where the rounds tie (6144^3: 12 x 192 = 9 x 256) it wins
    "sm90": (("7", {}, 1.0), ("7", {"bn": 192}, 1.03), ("7", {"bn": 128, "stages": 6}, 1.08), ("8", {}, 0.98)),
    "sm100": (("7", {}, 1.0),),
}


@lru_cache(maxsize=None)
def _candidates(arch: str):
    out = []
    for phase, over, penalty in CANDIDATES[arch]:
        entry = registry.get(arch, phase)
        cfg = dataclasses.replace(entry.default_config(), **over)
        out.append((entry, cfg, penalty))
    return tuple(out)


def cost(kernel, m: int, n: int, k: int, penalty: float = 1.0) -> float:
    """Relative time of a persistent ``kernel`` on (m, n, k): the busiest cluster's tile rounds (a split
    last round of stream-K counts half) x tile width x penalty."""
    sched = kernel.schedule(m, n, k)
    if len(sched) == 3:  # stream-K: data-parallel tiles, split tiles, clusters launched
        dp, sk, clusters = sched
    else:  # plain persistent: tiles, clusters launched
        (dp, clusters), sk = sched, 0
    rounds = -(-dp // clusters) + (0.5 if sk else 0.0)
    return rounds * kernel.cfg.bn * penalty


def explain(arch: str, m: int, n: int, k: int, operands=None) -> list[dict]:
    """Every candidate that takes (m, n, k) with ``operands`` (None: the worklog's) with its modelled
    cost, cheapest first."""
    rows = []
    for entry, cfg, penalty in _candidates(arch):
        kern = entry.make(cfg, operands)
        if kern.can_implement(m, n, k):
            continue
        rows.append({"phase": entry.phase, "config": cfg, "label": label(entry.phase, entry.overrides(cfg)),
                     "cost": cost(kern, m, n, k, penalty)})
    return sorted(rows, key=lambda r: r["cost"])


def label(phase: str, over: dict) -> str:
    return phase + "".join(f" {k}={v}" for k, v in over.items())


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
