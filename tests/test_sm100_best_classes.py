"""Every config class ``phase="best"`` can pick on sm100, run on the PTX machine before any GPU runs it (issue 48).

``choose.explain("sm100", ...)`` offers phases 6 and 7 (persistent pair tiles, clusters of 2 and 4) and phases 9
and 10 (one 128-row tcgen05 tile per CTA, split-K in a cluster of split_k CTAs, phase 10 on C^T = B^T A^T with the
tokens as the MMA's N). A class is what changes the kernel's code or its data flow: the phase, the split (the
cluster and the reduce's lines per rank), the k-tile depth (phase 10's 128-deep ring up to 96-token tiles, 64 past
them), and the persistent tile width. Each case below takes the config ``explain`` offers at a ragged shape (M, N, K
not tile multiples, K not a multiple of the k-tile, at least one k-tile per rank) -- the very config, ring depth
included -- and runs it on ``ptxkit.machine`` (tests/test_sm100_sim.py says what a run checks); phase 10 at the
narrowest and widest token tiles of every split (3 and 6 split only tiles of a multiple of 48), phase 9 at its
narrowest and widest tiles, 16-bit C and the other operand layouts spread over the cases. The persistent phases'
classes run in tests/test_sm100_sim.py (6 and 7 with PDL, 7 with bn=128); phase 7 bn=128 with PDL runs here.

``test_every_class_best_picks_has_a_case`` keeps the list honest: the classes of the picks at 2,400 random shapes
(every operands combination) are all among the cases'. Multicast: sm100's phases 9 and 10 have none (cluster_m is 1,
``config_problems``); the clusters of 2 and 4 best picks are phase 6's pair and phase 7's two pairs. docs/sm100.md
lists the classes with their case ids.
"""

import dataclasses
import random

import pytest

from cute_gemm.runtime import choose, registry
from phases.operands import Operands
from ptxkit import harness

NT_BF16 = Operands.of("nt", "bf16", "bf16")  # x @ W.T with a bf16 nn.Linear weight, bf16 out
NN_FP16 = Operands.of("nn", "fp16", "fp16")
TN_FP32 = Operands.of("tn", "bf16", "fp32")  # an M-major A: phase 10's kernel B is N-major (SW over the tokens)

# (phase, split_k, token / tile width bn, M, N, K, operands[, the shape best offers the config at]): M, N, K ragged,
# K past split_k k-tiles
CASES = [
    # phase 10: the narrowest token tile (16, bk=128) and the widest (256, bk=64) of each split
    ("10", 1, 16, 13, 264, 1032, None),
    ("10", 1, 256, 250, 72, 328, NT_BF16),
    ("10", 2, 16, 9, 136, 648, NN_FP16),
    ("10", 2, 256, 244, 72, 200, None),
    ("10", 3, 48, 40, 136, 520, NT_BF16),  # 3 and 6: token tiles of a multiple of 48 (the lines split evenly)
    ("10", 3, 240, 232, 72, 264, None),
    ("10", 4, 16, 8, 136, 1032, TN_FP32),  # an M-major A: M a multiple of 8
    ("10", 4, 256, 248, 72, 328, NN_FP16),
    ("10", 6, 48, 33, 136, 1032, None),
    ("10", 6, 240, 236, 72, 456, NT_BF16),
    ("10", 8, 16, 1, 136, 1096, NT_BF16),
    ("10", 8, 256, 241, 72, 520, None),
    # phase 10's middle: a 112-token tile, the first with 64-deep k-tiles
    ("10", 2, 112, 104, 136, 200, TN_FP32),
    # phase 9: 128 rows x its narrowest (64) and widest (256) tiles, and a width fitted to one wave (96)
    ("9", 1, 64, 120, 200, 200, NT_BF16),
    ("9", 2, 256, 120, 200, 200, None),
    ("9", 4, 64, 100, 136, 328, NN_FP16),
    ("9", 8, 256, 72, 200, 520, NT_BF16),
    ("9", 8, 64, 40, 72, 520, None),
    # a width fitted to one wave (96: 115 tiles of 128 x 96 at 120 x 11008), offered at that shape, run at a small one
    ("9", 1, 96, 120, 200, 136, TN_FP32, (120, 11008, 4096)),
]


def _offered(phase: str, split: int, bn: int, m: int, n: int, k: int, ops):
    """The config ``explain`` offers at (m, n, k) with ``ops`` for (phase, split_k, bn): the cheapest such row's
    (the ring depth and k-tile are the candidate generator's); None when it offers none."""
    for row in choose.explain("sm100", m, n, k, ops):
        cfg = row["config"]
        if row["phase"] == phase and cfg.split_k == split and cfg.bn == bn:
            return cfg
    return None


def _id(case):
    phase, split, bn, m, n, k, ops = case[:7]
    return f"phase{phase}-split{split}-bn{bn}-{m}x{n}x{k}" + (f"-{ops.layout}-{ops.ab}-{ops.c}" if ops else "")


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_best_class_runs_on_the_ptx_machine(case):
    phase, split, bn, m, n, k, ops = case[:7]
    at = case[7] if len(case) > 7 else (m, n, k)  # where best offers the config (the run's shape by default)
    cfg = _offered(phase, split, bn, *at, ops)
    assert cfg is not None, f"best offers no phase {phase} split_k={split} bn={bn} config at {at}"
    assert max(m % 16, n % 128, k % cfg.bk) > 0 and -(-k // cfg.bk) >= split, "the case is ragged, a k-tile per rank"
    result = harness.simulate(f"sm100:{phase}", m, n, k, cfg, ops)
    assert result.ok, result.report()
    assert result.mma_kinds


def test_phase7_pair_tile_of_128_with_pdl_runs_on_the_ptx_machine():
    """Best's phase 7 with 128-wide pair tiles and PDL (``choose.PERSISTENT``) on one cluster of two pairs (a small
    ``sm_count`` in place of the GPU's): 3 pair tiles at 200 x 264, a round of two and the third split over the pairs."""
    over = next(o for p, o, _ in choose.PERSISTENT["sm100"] if p == "7" and o.get("bn") == 128)
    entry = registry.get("sm100", "7")
    cfg = dataclasses.replace(entry.default_config(), **over, sm_count=4)
    assert entry.make(cfg).schedule(200, 264, 64) == (2, 1, 2)  # 2 data-parallel tiles, 1 split, 2 pair slots
    result = harness.simulate(entry.key, 200, 264, 64, cfg, NT_BF16)
    assert result.ok, result.report()


def _class(phase: str, cfg) -> tuple:
    """A pick's class: the phase, its split, its k-tile depth (phase 10) or tile width (phases 6-7)."""
    if phase in ("9", "10"):
        return phase, cfg.split_k, cfg.bk if phase == "10" else None
    return phase, None, cfg.bn


def _case_classes() -> set:
    out = set()
    for phase, split, bn, *_ in CASES:
        out.add((phase, split, (128 if bn <= 96 else 64) if phase == "10" else None))
    # tests/test_sm100_sim.py runs phase 6 (bn 256) and 7 (bn 256) with PDL; phase 7 bn=128 runs above
    return out | {("6", None, 256), ("7", None, 256), ("7", None, 128)}


def test_every_class_best_picks_has_a_case():
    """The picks at 100 random shapes x every operands combination (the property test's distribution) fall in the
    classes the cases run; and phase 10's narrowest and widest token tiles run at every split it offers."""
    from test_best_picks_build import ALL_OPERANDS, _shape

    rng, covered, seen = random.Random(48), _case_classes(), set()
    for _ in range(100):
        for ops in ALL_OPERANDS:
            m, n, k = _shape(rng, ops)
            phase, cfg = choose.pick("sm100", m, n, k, ops)
            cfg = cfg or registry.get("sm100", phase).default_config()
            seen.add(_class(phase, cfg))
            assert _class(phase, cfg) in covered, (m, n, k, ops.label(), phase, cfg)
    assert {c[0] for c in seen} >= {"6", "9", "10"}, seen
    for split in choose.SM100_SPLITS:
        tiles = sorted(bn for p, s, bn, *_ in CASES if p == "10" and s == split)
        assert tiles and tiles[0] <= 48 and tiles[-1] >= 240, (split, tiles)
