"""The fused epilogue on the persistent phases (sm90 6, 7 and 8, sm100 6: prefill's picks), run on the PTX machine.

These phases apply ``phases.epilogue.apply_at`` to each accumulator register at its C coordinates before the slab
(sm90) or the TMEM chunk (sm100) is rounded, staged in smem and stored by the TMA; the bias and the residual are
read at the clamped coordinate (a register past C's edge reads the nearest element inside, and the TMA store
clips it). The machine checks what ``tests/test_epilogue_sim.py`` checks for phase 11: every stored element's
formula has its own accumulator over all of K, bias[n] and residual[m, n], and evaluates to the float64
act(acc + bias[n]) + residual[m, n] rounded to C's type; no load outside the tensors, no race, no deadlock.

The shapes are ragged (M, N not tile multiples, so partial tiles clamp) and small: one cluster walks 2 or 3
tiles (phase 8: both warpgroups' turns), so a tile's coordinates come from the loop, not from the first tile.
"""

import dataclasses

import pytest

from cute_gemm.runtime import registry
from phases.operands import Operands
from ptxkit import harness
from ptxkit.numerics import EpilogueSpec
from sm90kit.harness90 import simulate90

NT_BF16, NN_FP16, NT_FP32 = (Operands.of("nt", "bf16", "bf16"), Operands.of("nn", "fp16", "fp16"),
                             Operands.of("nt", "bf16", "fp32"))

# (ladder, phase, epilogue fields, operands, M, N, K, tile overrides)
CASES = [
    ("sm90", "6", {"bias": True, "activation": "gelu", "residual": True}, NT_BF16, 300, 120, 72,
     {"bn": 128, "stages": 2, "sm_count": 2}),  # one cluster walks 2 cluster tiles; the second ragged in M and N
    # phase 7: 3 cluster tiles on 2 clusters -- 2 data-parallel, the third split along K in the pair, each CTA
    # applying the epilogue to its half of the slabs after the exchange (ragged in M and N; N = 376 leaves both
    # halves of the split tile's columns inside C)
    ("sm90", "7", {"bias": True, "activation": "gelu", "residual": True}, NT_BF16, 200, 376, 200,
     {"bn": 128, "sm_count": 4}),
    ("sm90", "8", {"activation": "silu"}, NT_FP32, 520, 120, 72, {"bn": 128, "sm_count": 2}),  # 3 tiles: both turns
    ("sm90", "8", {"bias": True, "activation": "relu", "residual": True}, NN_FP16, 200, 136, 72,
     {"bn": 128, "sm_count": 2}),
    # the gated pairs (SwiGLU / GeGLU): a slab of 32 accumulator columns is 16 columns of C, staged (BM, 16); N = 272
    # GEMM columns = 136 of C; phase 7's split tile applies them after the exchange (N = 368: 2 tiles + 1 split)
    ("sm90", "6", {"bias": True, "activation": "gelu", "gated": True, "residual": True}, NT_BF16, 300, 272, 72,
     {"bn": 128, "stages": 2, "sm_count": 2}),
    ("sm90", "7", {"activation": "silu", "gated": True}, NT_FP32, 200, 368, 200, {"bn": 128, "sm_count": 4}),
    ("sm90", "8", {"bias": True, "activation": "silu", "gated": True, "residual": True}, NN_FP16, 200, 272, 72,
     {"bn": 128, "sm_count": 2}),
    # without a residual the sm90 tiles load their bias once, before the slabs (``common_tma.epilogue_args``): phase 7's
    # data-parallel tiles so, its split tile's slabs each their own; phase 8's before its epilogue turn, gated too
    ("sm90", "7", {"bias": True, "activation": "gelu"}, NT_BF16, 200, 376, 200, {"bn": 128, "sm_count": 4}),
    ("sm90", "8", {"bias": True, "activation": "silu", "gated": True}, NT_BF16, 520, 272, 72,
     {"bn": 128, "sm_count": 2}),
    # epi_spread: each slab's arithmetic below the previous slab's barrier.red (its 0 added to the slab's preloaded
    # bias values, or with a residual to each register); phase 7's split tile stores its slabs without it
    ("sm90", "7", {"bias": True, "activation": "gelu", "epi_spread": True}, NT_BF16, 200, 376, 200,
     {"bn": 128, "sm_count": 4}),
    ("sm90", "6", {"bias": True, "activation": "gelu", "residual": True, "epi_spread": True}, NT_BF16, 300, 120, 72,
     {"bn": 128, "stages": 2, "sm_count": 2}),
    # best's phase 8 with a fused epilogue (``choose.spread_slabs``): the spread in 16-column slabs, 4 buffers (8
    # slabs of a 128-wide tile), the tile's bias through smem; the gated pairs keep 32-column slabs (16 columns of C);
    # in 16-column ones (the 176-wide fitted tile's) their slab is 8 columns of C, (BM, 8) staged; with a residual
    # the bias comes slab by slab beside it (bias_smem inert)
    ("sm90", "8", {"bias": True, "activation": "gelu", "epi_spread": True, "epi_n": 16, "epi_stages": 4,
                   "bias_smem": True}, NT_BF16, 520, 120, 72, {"bn": 128, "sm_count": 2}),
    ("sm90", "8", {"bias": True, "activation": "silu", "gated": True, "epi_spread": True, "bias_smem": True},
     NT_BF16, 520, 272, 72, {"bn": 128, "sm_count": 2}),
    ("sm90", "8", {"bias": True, "activation": "silu", "gated": True, "epi_spread": True, "epi_n": 16,
                   "epi_stages": 4, "bias_smem": True}, NT_BF16, 520, 272, 72, {"bn": 128, "sm_count": 2}),
    ("sm90", "8", {"bias": True, "activation": "relu", "residual": True, "epi_spread": True, "epi_n": 16,
                   "epi_stages": 4, "bias_smem": True}, NN_FP16, 200, 136, 72, {"bn": 128, "sm_count": 2}),
    ("sm100", "6", {"bias": True, "activation": "gelu", "residual": True}, NT_BF16, 300, 136, 72,
     {"bn": 128, "stages": 2, "sm_count": 2, "epi_warps": 4}),
    ("sm100", "6", {"activation": "silu", "residual": True}, NT_FP32, 260, 72, 72,
     {"bn": 64, "stages": 2, "sm_count": 2, "epi_warps": 4}),
]


def case_id(case) -> str:
    ladder, phase, epi, ops, m, n, k, _ = case
    def word(a, v):  # a switch by its name, an activation by its own, a number with its field's name
        return a if v is True else v if isinstance(v, str) else f"{a}={v}"
    return f"{ladder}-{phase}-{'+'.join(word(a, v) for a, v in epi.items())}-{ops.c}C-{m}x{n}x{k}"


def run(ladder, phase, epi, ops, m, n, k, tile, **kw):
    cfg = dataclasses.replace(registry.get(ladder, phase).default_config(), **tile, **epi)
    if ladder == "sm90":
        return simulate90(f"sm90:{phase}", m, n, k, cfg, ops, **kw)
    return harness.simulate(f"sm100:{phase}", m, n, k, cfg, ops, **kw)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_persistent_fused_epilogue_on_the_machine(case):
    res = run(*case)
    assert res.ok, res.report()


def test_the_persistent_check_is_not_blind():
    """sm90 phase 8 computes silu: checked against gelu, or without the activation, its elements are wrong numbers."""
    case = CASES[2]
    for wrong in ("gelu", "none"):
        res = run(*case, expect=EpilogueSpec(False, wrong, False, "bf16", "f32"))
        assert not res.ok and all("expected" in e for e in res.errors), res.report()


def test_the_persistent_gated_check_is_not_blind():
    """sm90 phase 6 computes GeGLU pairs: checked as SwiGLU, or as gelu of the pair's columns one by one, wrong."""
    case = next(c for c in CASES if c[:2] == ("sm90", "6") and c[2].get("gated"))
    for wrong in (EpilogueSpec(True, "silu", True, "bf16", "bf16", gated=True),
                  EpilogueSpec(True, "gelu", True, "bf16", "bf16", gated=False)):
        res = run(*case, expect=wrong)
        assert not res.ok, res.report()


def test_every_persistent_epilogue_phase_has_a_run():
    from cute_gemm.runtime.choose import EPILOGUE_PERSISTENT

    assert {(c[0], c[1]) for c in CASES} == {(arch, p) for arch, ps in EPILOGUE_PERSISTENT.items() for p in ps}
