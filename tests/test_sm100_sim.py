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

from cute_gemm.runtime import registry
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


# The worklog's operand layouts (section 2.2), as the PTX ISA's descriptor tables decode the descriptors
# the MMAs actually used: (swizzle bytes, LBO, SBO) of A (K-major) and of B (N-major), and the MMA's M x N.
# Phases 0-1 pack B's 64-column SW128 atoms N first (LBO 1024, SBO 2048); the TMA phases K first (one
# 4 KiB slab per 64 columns: LBO 4096, SBO 1024). A's LBO is unused by a swizzled K-major layout (1 x 16 B).
A_SW64 = (64, 16, 512)
B_CPASYNC, B_TMA = (128, 1024, 2048), (128, 4096, 1024)
DESCRIPTORS = {"0": (B_CPASYNC, 128, 128), "1": (B_CPASYNC, 128, 128), "2a": (B_TMA, 128, 128),
               "2b": (B_TMA, 128, 128), "3": (B_TMA, 128, 256), "4": (B_TMA, 256, 256), "5": (B_TMA, 256, 256),
               "6": (B_TMA, 256, 256), "7": (B_TMA, 256, 256)}


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_simulation(case):
    phase, m, n, k, over = case
    entry = registry.get("sm100", phase)
    cfg = dataclasses.replace(entry.default_config(), **over) if over else None
    result = harness.simulate(entry.key, m, n, k, cfg)
    assert result.ok, result.report()
    # the descriptors, decoded with the PTX ISA's field tables (ptxkit/isa.py)
    b_fields, mma_m, mma_n = DESCRIPTORS[phase]
    for idesc, adesc, bdesc, two in result.mma_kinds:
        assert (idesc.m, idesc.n, two) == (mma_m, mma_n, mma_m == 256), (phase, idesc)
        assert (idesc.dtype, idesc.atype, idesc.btype) == (1, 0, 0), "f16 x f16 -> f32"
        assert not idesc.transpose_a and idesc.transpose_b, "A K-major, B N-major (the worklog's idesc bit 16)"
        swizzle = {0: None, 2: 128, 4: 64, 6: 32}
        assert (swizzle[adesc.swizzle_mode], adesc.lbo, adesc.sbo) == A_SW64, adesc
        assert (swizzle[bdesc.swizzle_mode], bdesc.lbo, bdesc.sbo) == b_fields, bdesc
        assert adesc.version == bdesc.version == 1 and adesc.base_offset == bdesc.base_offset == 0
    assert result.mma_kinds


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
