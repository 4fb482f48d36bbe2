"""Every sm100 phase run on the CPU: its compiled PTX executed by ``ptxkit.machine`` on small problems.

What a Blackwell GPU would tell us about the kernels' data flow, without one: each run checks that
every element of C is stored once with the sum over all of K of exactly its row of A and column of B
(provenance, not numbers: a wrong tile coordinate, stage, descriptor field, swizzle, lane mapping or a
missed k-tile names itself), that nothing is stored outside C (partial tiles), and that every access
to shared memory and TMEM is ordered by the kernel's own synchronization (a missing or misplaced
wait, fence, arrival or barrier is a race or a deadlock). The shapes are ragged (M, N, K not tile
multiples) for the TMA phases; the persistent phases run with a small ``sm_count`` so that a cluster
walks several tiles (phase 6) and a stream-K split happens (phase 7), and again over several clusters (an
odd number), several raster bands and BN=128 pair tiles. Every TMA phase runs again with
other operands (a K-major bf16 B into a bf16 C; 2a and 5 an M-major A into an fp16 C): the machine lays
the tensors out as the operands say, checks that the MMAs multiply the type A and B hold, and that each
element of a 16-bit C is its accumulator rounded to C's type.

What it cannot tell: timing, the numerics of the tensor cores, anything the PTX-level model of a
unit differs from the silicon on (see ptxkit/machine.py).
"""

import copy
import dataclasses

import pytest

from cute_gemm.runtime import registry
from phases.operands import Operands
from ptxkit import harness
from ptxkit.values import Acc

# (phase, M, N, K, config overrides[, operands])
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

# The persistent phases as a GPU runs them, small: several clusters (an odd number of them), several raster
# bands (group_m smaller than the pair rows, the last band short), and non-default configs (BN=128 pair
# tiles). What only shows there: anything that depends on how many tiles a cluster has done (cluster 1 of 3
# walks tiles 1 and 4: its accumulator stages are 0, 1 where the tiles' parities are 1, 0), on the band
# arithmetic, or on which clusters split and which pairs idle.
CASES += [
    # 3 clusters x 2 pair tiles; 3 pair rows in bands of 2 and 1; 2 N tiles (the second partial)
    ("6", 600, 200, 40, {"sm_count": 6, "group_m": 2, "bn": 128}),
    # 3 clusters of 4 (6 pair slots): 8 pair tiles = one data-parallel round + tiles 6 and 7 split over
    # clusters 0 and 1 (cluster 2 only runs its round); 4 pair rows x 2 N tiles in bands of 3 and 1
    ("7", 1000, 240, 64, {"sm_count": 12, "group_m": 3, "bn": 128}),
    # 3 tiles on 3 pair slots (odd k-tiles: nothing split): 2 clusters, the second one's second pair idles
    ("7", 200, 264, 72, {"sm_count": 12, "bn": 128}),
]

# The persistent phases with programmatic dependent launch (what phase="best" runs): the machine holds every
# global access of a PDL kernel to after its thread's griddepcontrol.wait
CASES += [
    ("6", 300, 520, 72, {"sm_count": 2, "use_pdl": True}),
    ("7", 200, 520, 64, {"sm_count": 4, "use_pdl": True}),  # a round + a tile split over the pairs
]

# Other operands (phases.operands) on every TMA phase, on one partial tile (or pair tile) each, K past the
# ring: "nt bf16->bf16" is x @ W.T with a bf16 nn.Linear weight (B K-major, bf16 in, bf16 out: the MMA's
# type fields, K-major B descriptors, the rounding epilogue); "tn fp16->fp16", an M-major A (its SW128
# slabs) into an fp16 C, on the two epilogues (2a: st.global, 5: TMA store; the other phases share their
# loads and epilogue with one of them). M is a multiple of 8 (an M-major A's rows are M long).
NT_BF16, TN_FP16 = Operands.of("nt", "bf16", "bf16"), Operands.of("tn", "fp16", "fp16")
_VARIANT_SHAPES = {
    "2a": (120, 120, 104, {}), "2b": (120, 120, 104, {}), "3": (120, 136, 104, {}), "4": (200, 136, 104, {}),
    "5": (200, 136, 104, {}),
    "6": (200, 264, 104, {"sm_count": 2}),  # 2 pair tiles on one cluster: both accumulator stages, the ring wraps
    "7": (200, 136, 64, {"sm_count": 4}),  # the one tile split over the two pairs: fp32 halves, then rounded
}
CASES += [(phase, m, n, k, over, NT_BF16) for phase, (m, n, k, over) in _VARIANT_SHAPES.items()]
CASES += [(phase, m, n, k, over, TN_FP16) for phase, (m, n, k, over) in _VARIANT_SHAPES.items() if phase in ("2a", "5")]

# Split-K in a cluster (9) and swap-AB (10): several clusters, K not a multiple of the k-tile. Phase 9 at
# split 4 (5 k-tiles: 1, 1, 1, 2) for x @ W.T in bf16, then at split 2 with 4 k-tiles per rank on a 3-stage
# ring; phase 10 with one token (M=1) over 3 weight tiles, and 20 tokens (two token tiles) of a bf16
# x @ W.T at split 4 over 3 k-tiles (rank 0's K range is empty: it contributes zeros). The reduce's rank
# order is checked as the K order of every element's fp32 additions (at split 4: three or four non-zero
# terms).
CASES += [
    ("9", 120, 136, 264, {"split_k": 4, "stages": 3}, NT_BF16),
    ("9", 120, 264, 456, {"stages": 3}),
    ("10", 1, 264, 648, {"stages": 2}),
    ("10", 20, 120, 328, {"split_k": 4}, NT_BF16),
]

# Phase 11: phase 10 with the fused epilogue (bias, gelu, residual loaded and computed after the reduce); the check
# evaluates each element against act(acc + bias) + residual (tests/test_epilogue_sim.py runs every kind)
CASES += [("11", 20, 136, 264, {"stages": 2, "bias": True, "activation": "gelu", "residual": True}, NT_BF16)]


def _id(case):
    phase, m, n, k, over = case[:5]
    ops = case[5].label().replace(" ", "-").replace("->", "-") if len(case) > 5 else ""
    return f"phase{phase}-{m}x{n}x{k}" + "".join(f"-{k_}{v}" for k_, v in over.items()) + (f"-{ops}" if ops else "")


# The worklog's operand layouts (section 2.2), as the PTX ISA's descriptor tables decode the descriptors
# the MMAs actually used: (swizzle bytes, LBO, SBO). A K-major operand: rows of BK elements under the widest
# swizzle they fill (SW64 at BK=32 fp16, SW128 from BK=64), the next 8-row band 8 rows on (SBO 512 / 1024),
# LBO unused (1 x 16 B). An N-major (MN-major) operand in the TMA phases: one 64-column SW128 slab per 64
# rows of MN holding all of BK (LBO = BK x 128 B: 4096 at BK=32), the next 8-row K band 1024 B on. Phases
# 0-1 pack B's 64-column SW128 atoms N first instead (LBO 1024, SBO 2048). The other majors take the same
# two packings: an M-major A the N-major slabs, a K-major B the K-major rows.
B_CPASYNC = (128, 1024, 2048)
TYPE_CODE = {"fp16": 0, "bf16": 1}  # the idesc's A / B type fields (PTX ISA, kind::f16)


def _k_major(bk):
    return min(128, 2 * bk), 16, 8 * min(128, 2 * bk)


def _mn_major(bk, mn=128):
    """``mn``: the operand's extent in this CTA's smem; one 64-element slab (a pair's half of a BN=128 B)
    has no next slab: LBO 0."""
    return 128, 128 * bk if mn > 64 else 0, 1024


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_simulation(case):
    phase, m, n, k, over = case[:5]
    ops = case[5] if len(case) > 5 else None
    entry = registry.get("sm100", phase)
    cfg = dataclasses.replace(entry.default_config(), **over) if over else entry.default_config()
    result = harness.simulate(entry.key, m, n, k, cfg if over else None, ops)
    assert result.ok, result.report()
    # the descriptors, decoded with the PTX ISA's field tables (ptxkit/isa.py), in the kernel's own views
    ops = ops or Operands()
    kops = ops.swapped() if getattr(entry.kernel_cls, "swap_ab", False) else ops
    a_fields = _k_major(cfg.bk) if kops.a_major == "k" else _mn_major(cfg.bk)
    b_fields = (_k_major(cfg.bk) if kops.b_major == "k" else B_CPASYNC if phase in ("0", "1")
                else _mn_major(cfg.bk, cfg.bn // cfg.cluster_m))
    mma_m, mma_n = cfg.bm * cfg.cluster_m, cfg.bn
    for idesc, adesc, bdesc, two in result.mma_kinds:
        assert (idesc.m, idesc.n, two) == (mma_m, mma_n, mma_m == 256), (phase, idesc)
        assert (idesc.dtype, idesc.atype, idesc.btype) == (1, TYPE_CODE[ops.ab], TYPE_CODE[ops.ab]), idesc
        assert (idesc.transpose_a, idesc.transpose_b) == (kops.a_major == "m", kops.b_major == "n"), idesc
        swizzle = {0: None, 2: 128, 4: 64, 6: 32}
        assert (swizzle[adesc.swizzle_mode], adesc.lbo, adesc.sbo) == a_fields, adesc
        assert (swizzle[bdesc.swizzle_mode], bdesc.lbo, bdesc.sbo) == b_fields, bdesc
        assert adesc.version == bdesc.version == 1 and adesc.base_offset == bdesc.base_offset == 0
    assert result.mma_kinds


# phase 6 with two pairs along N sharing the A tile (``cluster_n=2``, clusters of 4): each pair loads half of each CTA's
# A box and multicasts it to the same rank of the other pair; both pairs' MMA commits release a slot. Ragged in M, N and
# K (a cluster's second pair past N), an M-major A, two clusters at bn=256 (ids without "phase6": the phase's own
# mutants do not pay for these runs; the cluster_n mutants select them)
CLUSTER_N = [
    ("6", 300, 1032, 136, {"sm_count": 4, "cluster_n": 2, "bn": 128, "stages": 2}),
    ("6", 296, 1032, 136, {"sm_count": 4, "cluster_n": 2, "bn": 128, "stages": 2}, Operands.of("tn", "bf16", "fp32")),
    ("6", 300, 1032, 136, {"sm_count": 8, "cluster_n": 2, "stages": 2}, Operands.of("nt", "fp16", "fp16")),
]


@pytest.mark.parametrize("case", CLUSTER_N, ids=lambda c: _id(c).replace("phase6", "p6"))
def test_pairs_along_n_share_a(case):
    test_simulation(case)


def test_pairs_along_n_are_1_or_2_in_whole_clusters():
    """cluster_n is 1 or 2; with 2 the cluster is 4 CTAs, so sm_count is a multiple of 4 (as phase 7's clusters), and
    ``cute-gemm list`` counts the 4 without compiling."""
    e6 = registry.get("sm100", "6")
    two = dataclasses.replace(e6.default_config(), cluster_n=2)
    assert e6.config_problems(two) == [] and e6.cluster_ctas(two) == 4
    assert e6.make(two).schedule(4096, 4096, 4096) == (128, 37) and e6.make(two).grid(4096, 4096, 4096) == (148, 1, 1)
    assert any("cluster_n=3: 1, or 2" in w for w in e6.config_problems(dataclasses.replace(two, cluster_n=3)))
    assert any("multiple of 4 SMs" in w for w in e6.config_problems(dataclasses.replace(two, sm_count=146)))


def test_every_phase_has_a_run():
    assert {case[0] for case in CASES} == {e.phase for e in registry.all_entries("sm100")}


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


def test_simulation_checks_the_operand_types():
    """The machine computes with the operand types: a kernel compiled for bf16 A, B and C, run on fp16
    tensors, multiplies them as bf16 (the idesc's type fields), reads them through bf16 tensor maps and
    rounds C to bf16 -- each reported."""
    kernel, pk, maps = harness.compile_for_sim("sm100:2a", None, Operands.of("nn", "bf16", "bf16"))
    relabelled = copy.copy(kernel)
    relabelled.operands = Operands.of("nn", "fp16", "fp16")
    harness._COMPILED[("sm100:2a-types", None)] = (relabelled, pk, maps)
    try:
        result = harness.simulate("sm100:2a-types", 128, 128, 64)
    finally:
        del harness._COMPILED[("sm100:2a-types", None)]
    text = "\n".join(result.errors)
    assert "multiplies A as type 1 and B as type 1 (0 f16, 1 bf16), but A holds f16" in text, text[:2000]
    assert "encodes bf16 (2 B) elements, A holds f16" in text
    assert "not an accumulator rounded to f16" in text


def test_partial_sums_in_k_order():
    """The final check's order rule: fp32 additions outside the MMAs must be the left fold in K order,
    ((p0 + p1) + p2) + p3 (addition commutes, so p1 + p0 is the same value; it does not associate)."""
    p = [Acc(0, 0, ((32 * i, 32 * i + 32),)) for i in range(4)]
    assert (((p[0] + p[1]) + p[2]) + p[3]).in_k_order()
    assert (p[3] + (p[2] + (p[1] + p[0]))).in_k_order()  # the same additions, operands commuted
    assert (p[1] + p[0]).in_k_order()
    assert not (((p[1] + p[2]) + p[3]) + p[0]).in_k_order()  # starting at another rank
    assert not ((p[0] + p[1]) + (p[2] + p[3])).in_k_order()  # a tree: deterministic, but another value
    problems = harness.check_c({(0, 0): [((p[0] + p[2]) + p[1]) + p[3]]}, 1, 1, 128)
    assert any("another order than K's" in x for x in problems), problems
    assert harness.check_c({(0, 0): [((p[0] + p[1]) + p[2]) + p[3]]}, 1, 1, 128) == []
