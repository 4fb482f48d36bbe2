"""Phase 11's fused epilogue, y = act(A @ B + bias) + residual, run on the PTX machine (CPU only, both ladders).

What each run checks, beyond what every phase's run checks (each element of C stored once, nothing outside
C, no race, no deadlock): the machine executes the epilogue's own PTX -- the ``ld.global`` of the bias and
the residual (each element a tag of its coordinates; a load outside the tensors is reported), the widening
``cvt.f32.{bf16,f16}``, the fp32 adds, multiplies, FMAs, ``max`` and ``tanh.approx`` -- as a formula over the
accumulator, the bias and residual elements and the immediates. The check then reads the formula of every
stored element: its accumulator must be that element's, over all of K, reduced in K order; its bias
element bias[n], its residual element residual[m, n]; evaluated at random values (fixed per coordinate) it
must equal the float64 act(acc + bias[n]) + residual[m, n] rounded to C's type (``ptxkit.numerics``).

The cases: both ladders; every kind of epilogue (bias alone, each activation alone, the residual alone,
bias + gelu, bias + silu + residual); split_k 1, 2 and 3; fp32, bf16 and fp16 C; ragged shapes (one token,
tokens not a multiple of the token tile, weight rows not a multiple of the 64- or 128-row tile). Small tiles
and rings keep each run a few seconds. The checks' own tests below show that the check is not blind: the
same runs, checked against a wrong epilogue or handed a misplaced bias or residual, fail; and the check
itself, on hand-built values, rejects a missed, doubled, reordered or premature epilogue.
"""

import dataclasses

import pytest

from cute_gemm.runtime import registry
from phases.operands import Operands
from ptxkit import harness
from ptxkit.machine import _float_op
from ptxkit.numerics import EpilogueSpec, from_bits16, bits16, round_to
from ptxkit.values import Acc, Elem, Fx, Rounded
from sm90kit.harness90 import simulate90

NT_BF16, NT_FP16, NT_FP32 = (Operands.of("nt", "bf16", "bf16"), Operands.of("nt", "fp16", "fp16"),
                             Operands.of("nt", "bf16", "fp32"))
EPILOGUES = {
    "bias": {"bias": True},
    "relu": {"activation": "relu"},
    "gelu": {"activation": "gelu"},
    "silu": {"activation": "silu"},
    "residual": {"residual": True},
    "bias+gelu": {"bias": True, "activation": "gelu"},
    "bias+silu+residual": {"bias": True, "activation": "silu", "residual": True},
}
KINDS = set(EPILOGUES)  # each ladder runs every one of these
# gated pairs (a gated MLP's up projection: C's column j = act(gate + b) * (up + b) of GEMM columns 2j, 2j + 1)
EPILOGUES.update({
    "silu+gated": {"activation": "silu", "gated": True},  # SwiGLU
    "bias+gelu+gated+residual": {"bias": True, "activation": "gelu", "gated": True, "residual": True},  # GeGLU
})
SM90_TILE = {"bm": 64, "bn": 16, "stages": 2}  # 64 weight rows x 16 tokens, a 2-stage ring
SM100_TILE = {"bn": 16, "stages": 2}  # 128 weight rows x 16 tokens (split 3: 48 tokens, lines divisible by 3)

# (ladder, epilogue, split_k, operands, M (tokens), N (weight rows), K)
CASES = [
    ("sm90", "bias", 1, NT_FP32, 1, 136, 264),  # one token; 3 weight tiles, the last 8 rows
    ("sm90", "relu", 2, NT_BF16, 40, 72, 264),  # 3 token tiles, the last 8 tokens
    ("sm90", "gelu", 3, NT_FP16, 20, 136, 264),  # a 3-way split of 3 k-tiles (16 lines: 6, 6, 4)
    ("sm90", "silu", 1, NT_BF16, 20, 72, 136),  # split 1, 16-bit C: the tile through the partial tile in smem
    ("sm90", "residual", 2, NT_FP32, 20, 136, 264),
    ("sm90", "bias+gelu", 3, NT_BF16, 1, 72, 264),
    ("sm90", "bias+silu+residual", 2, NT_FP16, 40, 136, 264),
    ("sm90", "bias+silu+residual", 1, NT_FP32, 20, 72, 136),
    ("sm100", "bias", 2, NT_BF16, 20, 136, 264),  # 2 weight tiles of 128, the second 8 rows
    ("sm100", "relu", 1, NT_FP32, 1, 136, 136),
    ("sm100", "gelu", 2, NT_FP32, 20, 136, 264),
    ("sm100", "silu", 3, NT_FP16, 40, 136, 392),  # 48-token tile, 3 ranks of 16 lines, 4 k-tiles
    ("sm100", "residual", 1, NT_FP16, 20, 136, 136),
    ("sm100", "bias+gelu", 2, NT_FP16, 1, 136, 264),
    ("sm100", "bias+silu+residual", 2, NT_BF16, 40, 136, 264),
    ("sm100", "bias+silu+residual", 3, NT_FP32, 20, 136, 392),
    # gated: N = 272 GEMM columns (C^T has 136 rows); the 16-B vector of 4 partial sums stores 2 values
    ("sm90", "silu+gated", 2, NT_BF16, 20, 272, 264),
    ("sm90", "bias+gelu+gated+residual", 1, NT_FP32, 1, 272, 136),
    ("sm100", "silu+gated", 1, NT_FP16, 20, 272, 136),
    ("sm100", "bias+gelu+gated+residual", 2, NT_BF16, 40, 272, 264),
]


def case_id(case) -> str:
    ladder, epi, split, ops, m, n, k = case
    return f"{ladder}-{epi}-split{split}-{ops.c}C-{m}x{n}x{k}"


def config(ladder: str, epi: str, split: int):
    tile = dict(SM90_TILE if ladder == "sm90" else SM100_TILE)
    if ladder == "sm100" and split == 3:
        tile["bn"] = 48
    return dataclasses.replace(registry.get(ladder, "11").default_config(), split_k=split, **tile, **EPILOGUES[epi])


def run(ladder, epi, split, ops, m, n, k, **kw):
    cfg = config(ladder, epi, split)
    if ladder == "sm90":
        return simulate90("sm90:11", m, n, k, cfg, ops, **kw)
    return harness.simulate("sm100:11", m, n, k, cfg, ops, **kw)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_fused_epilogue_on_the_machine(case):
    res = run(*case)
    assert res.ok, res.report()
    assert res.clusters > 1


def test_every_epilogue_kind_split_and_c_type_has_a_run():
    for ladder in ("sm90", "sm100"):
        mine = [c for c in CASES if c[0] == ladder]
        assert {c[1] for c in mine} >= KINDS and any("gated" in c[1] for c in mine), ladder
        assert {c[2] for c in mine} == {1, 2, 3} and {c[3].c for c in mine} == {"fp32", "bf16", "fp16"}, ladder
        assert any(c[4] == 1 for c in mine) and any(c[4] % 16 for c in mine if c[4] > 1), ladder


# --- the check is not blind: the same runs with a wrong expectation or misplaced tensors ------------------
BIAS_GELU = ("sm90", "bias+gelu", 3, NT_BF16, 1, 72, 264)  # a case above: its compile is reused
FULL = ("sm90", "bias+silu+residual", 2, NT_FP16, 40, 136, 264)


@pytest.mark.parametrize("wrong", [
    {"activation": "silu"}, {"activation": "relu"}, {"activation": "none"}, {"bias": False}, {"residual": True},
], ids=lambda w: "-".join(f"{k}={v}" for k, v in w.items()))
def test_a_wrong_expected_epilogue_fails(wrong):
    """The kernel computes bias + gelu: checked against any other epilogue, its elements are wrong numbers."""
    expect = dataclasses.replace(EpilogueSpec(True, "gelu", False, "bf16", "bf16", n_mode=0), **wrong)
    res = run(*BIAS_GELU, expect=expect)
    assert not res.ok
    assert all("expected" in e for e in res.errors), res.report()


def test_gated_pairs_checked_as_pairs():
    """The kernel computes silu(gate) * up: checked against gelu(gate) * up, or with the pair's roles swapped (its
    odd columns as the gates: the same leaves, another function), its elements are wrong numbers."""
    case = ("sm90", "silu+gated", 2, NT_BF16, 20, 272, 264)
    expect = EpilogueSpec(False, "gelu", False, "bf16", "bf16", n_mode=0, gated=True)
    res = run(*case, expect=expect)
    assert not res.ok and all("expected" in e for e in res.errors), res.report()
    spec = EpilogueSpec(False, "silu", False, "bf16", "bf16", n_mode=1, gated=True)
    gate, up = Acc(0, 0, ((0, K),)), Acc(0, 1, ((0, K),))
    silu = lambda x: Fx("fma", (Fx("mul", (x, 0.5)), Fx("tanh", (Fx("mul", (x, 0.5)),)), Fx("mul", (x, 0.5))))
    good = harness.check_c({(0, 0): [Rounded(Fx("mul", (silu(gate), up)), "bf16")]}, 1, 1, K, 32, "bf16", spec)
    swapped = harness.check_c({(0, 0): [Rounded(Fx("mul", (silu(up), gate)), "bf16")]}, 1, 1, K, 32, "bf16", spec)
    assert good == [] and swapped and "expected" in swapped[0]


def test_a_bias_shifted_by_one_column_fails():
    """The kernel handed bias + 1 element: every element adds the next column's bias, the last reads past N."""
    res = run(*FULL, shift={"bias": 1})
    text = "\n".join(res.errors)
    assert "adds bias[1], not bias[0]" in text, res.report()
    assert "outside every tensor" in text


def test_a_residual_of_the_wrong_element_fails():
    """The residual handed one element on (C^T is column-major: the next weight row's): caught by name."""
    res = run(*FULL, shift={"D": 1})
    assert any("adds residual[1, 0], not residual[0, 0]" in e for e in res.errors), res.report()


# --- the check on hand-built values ------------------------------------------------------------------
K = 64
P0, P1 = Acc(2, 3, ((0, 32),)), Acc(2, 3, ((32, 64),))
FULL_ACC = P0 + P1
SPEC = EpilogueSpec(True, "gelu", True, "bf16", "bf16")


def _gelu_tree(x):
    """The kernel's gelu: x/2 + x/2 tanh(x (k0 + k0 k1 x^2)), as phases/epilogue.py writes it."""
    k0, k1 = 0.7978845608028654, 0.044715
    inner = Fx("mul", (x, Fx("fma", (Fx("mul", (x, k0 * k1)), x, k0))))
    half = Fx("mul", (x, 0.5))
    return Fx("fma", (half, Fx("tanh", (inner,)), half))


def _epilogue(acc, bias_col=3, d=(2, 3), act=_gelu_tree, bias_twice=False):
    x = Fx("add", (acc, Fx("cvt.f32.bf16", (Elem("bias", 0, bias_col),))))
    if bias_twice:
        x = Fx("add", (x, Fx("cvt.f32.bf16", (Elem("bias", 0, bias_col),))))
    return Rounded(Fx("add", (act(x), Fx("cvt.f32.bf16", (Elem("D", *d),)))), "bf16")


def _check(v, spec=SPEC, act=_gelu_tree):
    """check_c on a 4 x 8 C whose every element holds the right formula but C[2, 3], which holds ``v``."""
    c_out = {(r, c): [_epilogue(Acc(r, c, ((0, K),)), c, (r, c), act)] for r in range(4) for c in range(8)}
    c_out[(2, 3)] = [v]
    return harness.check_c(c_out, 4, 8, K, k_step=32, dtype="bf16", epilogue=spec)


def test_the_check_accepts_the_right_formula():
    assert _check(_epilogue(FULL_ACC)) == []
    # silu as the kernel writes it (x/2 + x/2 tanh(x/2)) against the reference's x sigmoid(x)
    silu = lambda x: Fx("fma", (Fx("mul", (x, 0.5)), Fx("tanh", (Fx("mul", (x, 0.5)),)), Fx("mul", (x, 0.5))))
    assert _check(_epilogue(FULL_ACC, act=silu), dataclasses.replace(SPEC, activation="silu"), silu) == []


@pytest.mark.parametrize("bad, message", [
    (Rounded(FULL_ACC, "bf16"), "expected"),  # no epilogue at all
    (_epilogue(FULL_ACC, act=lambda x: x), "expected"),  # the activation missed
    (_epilogue(FULL_ACC, bias_twice=True), "expected"),  # the bias added twice
    (_epilogue(FULL_ACC, bias_col=4), "adds bias[4], not bias[3]"),
    (_epilogue(FULL_ACC, d=(3, 2)), "adds residual[3, 2], not residual[2, 3]"),
    (_epilogue(P0 + Acc(2, 3, ((32, 48),))), "not [0, 64)"),  # a k-tile missed
    # the epilogue applied to each partial sum, then the two added: a premature (and doubled) epilogue
    (Rounded(Fx("add", (_epilogue(P0).acc, _epilogue(P1).acc)), "bf16"), "partial sum"),
    # the bias after the activation
    (Rounded(Fx("add", (Fx("add", (_gelu_tree(FULL_ACC), Fx("cvt.f32.bf16", (Elem("bias", 0, 3),)))),
                        Fx("cvt.f32.bf16", (Elem("D", 2, 3),)))), "bf16"), "expected"),
    (Rounded(_epilogue(FULL_ACC).acc, "f16"), "not an accumulator rounded to bf16"),  # C's type wrong
], ids=["none", "no-activation", "bias-twice", "bias-column", "residual-element", "k-tile-missed",
        "before-the-reduce", "bias-after-activation", "wrong-rounding"])
def test_the_check_rejects(bad, message):
    problems = _check(bad)
    assert problems and message in problems[0], problems


def test_a_gelu_constant_typo_fails_at_fp32():
    """fp32 C: a constant with a digit dropped (0.04715 for 0.044715: gelu off by about 1e-3) is a wrong number,
    not rounding (the fp32 tolerance is 2^-18 of the magnitudes)."""
    def off(x):
        inner = Fx("mul", (x, Fx("fma", (Fx("mul", (x, 0.7978845608 * 0.04715)), x, 0.7978845608))))
        half = Fx("mul", (x, 0.5))
        return Fx("fma", (half, Fx("tanh", (inner,)), half))
    spec = EpilogueSpec(False, "gelu", False, "bf16", "f32")
    ok = harness.check_c({(r, c): [_gelu_tree(Acc(r, c, ((0, 64),)))] for r in range(8) for c in range(8)},
                         8, 8, K, 32, "f32", spec)
    bad = harness.check_c({(r, c): [off(Acc(r, c, ((0, 64),)))] for r in range(8) for c in range(8)},
                          8, 8, K, 32, "f32", spec)
    assert ok == [] and bad and "expected" in bad[0]


# --- the machine's fp32 values ------------------------------------------------------------------------
def test_float_ops_build_formulas_and_keep_the_reduce():
    assert _float_op("add.f32", [P0, P1]) == FULL_ACC  # the split-K reduce stays Acc + Acc
    assert _float_op("add.f32", [P0, 0]) == P0 and _float_op("add.f32", [0.0, P0]) == P0
    assert _float_op("mul.f32", [P0, 0.5]) == Fx("mul", (P0, 0.5))
    assert _float_op("mul.f32", [0.5, 3.0]) == 1.5  # immediates fold
    assert _float_op("fma.rn.f32", [2.0, 3.0, 1.0]) == 7.0
    e = Elem("bias", 0, 5)
    # sm_100's mixed add: add.rn.f32.bf16 d, a (16-bit), c (fp32)
    assert _float_op("add.rn.f32.bf16", [e, P0]) == Fx("add", (Fx("cvt.f32.bf16", (e,)), P0))
    assert _float_op("tanh.approx.f32", [P0]) == Fx("tanh", (P0,))


def test_roundings_and_bit_patterns():
    assert round_to(1 + 2 ** -8, "bf16") == 1.0  # a tie: to even
    assert round_to(1 + 3 * 2 ** -8, "bf16") == 1 + 2 ** -6
    assert round_to(1 + 2 ** -11, "f16") == 1.0 and round_to(1 + 3 * 2 ** -11, "f16") == 1 + 2 ** -9
    assert round_to(1 + 2 ** -24, "f32") == 1.0
    for x, dt in ((1.5, "bf16"), (-0.375, "f16"), (0.0078125, "bf16")):
        assert from_bits16(bits16(x, dt), dt) == x
    assert from_bits16(0x3F80, "bf16") == 1.0 and from_bits16(0x3C00, "f16") == 1.0
