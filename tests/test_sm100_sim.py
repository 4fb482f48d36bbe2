"""Every sm100 phase run on the CPU: its compiled PTX executed by ``ptxkit.machine`` on small problems.

What a Blackwell GPU would tell us about the kernels' data flow, without one: each run checks that
every element of C is stored once with the sum over all of K of exactly its row of A and column of B
(provenance, not numbers: a wrong tile coordinate, stage, descriptor field, swizzle, lane mapping or a
missed k-tile names itself), that nothing is stored outside C (partial tiles), and that every access
to shared memory and TMEM is ordered by the kernel's own synchronization (a missing or misplaced
wait, fence, arrival or barrier is a race or a deadlock). The shapes are ragged (M, N, K not tile
multiples) for the TMA phases; the persistent phases run with a small ``sm_count`` so that a cluster
walks several tiles (phase 6) and a stream-K split happens (phase 7).

What it cannot tell: timing, the numerics of the tensor cores, anything the PTX-level model of a
unit differs from the silicon on (see ptxkit/machine.py).
"""

import dataclasses

import pytest

from cute_gemm import registry
from ptxkit import harness

# (phase, M, N, K, config overrides)
# K spans more k-tiles than the ring has stages, so every slot is refilled at least once
CASES = [
    ("0", 256, 256, 128, {}),
    ("1", 256, 256, 128, {}),
    ("2a", 200, 136, 168, {}),  # 2 x 2 CTAs, every tile partial but one; 5.25 k-tiles on 3 stages
    ("2b", 200, 136, 168, {}),
    ("3", 200, 264, 168, {}),
    ("4", 300, 264, 168, {}),  # the last pair's second CTA lies wholly past M
    ("5", 300, 264, 168, {}),
    ("6", 300, 520, 72, {"sm_count": 2}),  # one cluster walks all 6 pair tiles: stages and buffers reused
    ("7", 200, 520, 64, {"sm_count": 4}),  # 2 pair slots, 3 tiles: one round + a tile split over the pairs
    ("7", 300, 520, 72, {"sm_count": 4}),  # 6 tiles, 3 rounds, nothing split (odd k-tiles)
]


def _id(case):
    phase, m, n, k, over = case
    return f"phase{phase}-{m}x{n}x{k}" + "".join(f"-{k_}{v}" for k_, v in over.items())


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_simulation(case):
    phase, m, n, k, over = case
    entry = registry.get("sm100", phase)
    cfg = dataclasses.replace(entry.default_config(), **over) if over else None
    result = harness.simulate(entry.key, m, n, k, cfg)
    assert result.ok, result.report()


def test_simulation_catches_a_wrong_swizzle():
    """The machine is not blind: with A's tensor map claiming a 128-B swizzle the kernel does not use,
    the MMA reads A's elements from the wrong places and the run reports it."""
    kernel, pk, maps = harness.compile_for_sim("sm100:2a")
    wrong = dict(maps, A=dataclasses.replace(maps["A"], swizzle=128))
    harness._COMPILED[("sm100:2a-wrong", None)] = (kernel, pk, wrong)
    try:
        result = harness.simulate("sm100:2a-wrong", 128, 128, 64)
    finally:
        del harness._COMPILED[("sm100:2a-wrong", None)]
    assert not result.ok
