"""The planted bugs of the fused epilogue (phase 11): source substitutions in ``phases/epilogue.py``, the split-K
reduce's epilogue hook (``reduce_store`` in ``phases/sm*/phase9_split_k.py``) and phase 11's own files, each with
the PTX-machine runs that should catch it (``tests/test_epilogue_sim.py``, selected by ``-k``).

Why these bugs: each is a plausible slip in code that compiles and runs and stores every element of C once
-- a constant (a sqrt forgotten, a decimal point moved), the order of the three terms (bias after the
activation, the residual before it), a term dropped or subtracted, an activation branch taken for the wrong
name, the bias seen along the wrong mode, a tile's or a vector's coordinates, the epilogue's place around
the split-K reduce (before it, on a partial sum; twice; overwritten by it), and the gated pairs' roles, their
residual's tile and the tiles counted for them. Only the check's numbers (each
element's formula evaluated at random values) and its names (which accumulator, which bias column, which
residual element) can tell them apart from the right epilogue; the data flow is the same.

``python -m tests.mutants --ladder epilogue`` runs them (``mutants_epilogue.md``); the ladder's kill rate must
be at least 90% (``--min-kill-epilogue``).
"""

from __future__ import annotations

import dataclasses

from .catalog import Mutant

SIM = "tests/test_epilogue_sim.py"
RUNS = "test_fused_epilogue_on_the_machine"
E = "phases/epilogue.py"
P9 = {"sm90": "phases/sm90/phase9_split_k.py", "sm100": "phases/sm100/phase9_split_k.py"}
P11 = {"sm90": "phases/sm90/phase11_fused_epilogue.py", "sm100": "phases/sm100/phase11_fused_epilogue.py"}


@dataclasses.dataclass(frozen=True)
class MutantEpi(Mutant):
    """An epilogue mutant: ``parts`` replaces (old, new) in order where the bug needs several substitutions;
    ``fast_checks``: the one run the CI subset (``--fast``) makes."""

    parts: tuple = ()
    ladder: str = "epilogue"
    fast_checks: tuple = ()


def selection(words: str) -> str:
    """``-k`` expression: the machine runs whose case id has every word of ``words`` (e.g. "sm90 gelu")."""
    return " and ".join([RUNS, *words.split()])


def _m(id, kind, path, old, new, runs, fast="", note="", parts=()):
    """``runs``: the words selecting the runs that must catch it; ``fast``: the CI subset's (narrower) words."""
    checks = (SIM, "-k", selection(runs))
    fast_checks = (SIM, "-k", selection(fast)) if fast else ()
    return MutantEpi(id, kind, "11", path, old, new, checks, bool(fast), note, parts, "epilogue", fast_checks)


_GELU_INNER = "        inner = x * (GELU_K0 + GELU_K0 * GELU_K1 * x * x)\n"
_BIAS_ADD = "            total[e] = total[e] + b[e].to(cutlass.Float32)\n"
_ACT = "            total[e] = activate(total[e], activation)\n"
_RESIDUAL_ADD = "            out[e] = out[e] + d[e].to(cutlass.Float32)\n"
_GATE = "            out[e] = activate(total[2 * e], activation) * total[2 * e + 1]\n"
_ADD = "add_in_rank_order(parts, idx, total)"
_APPLY = "out = epilogue.apply(total, epilogue.vector_at(gBias, idx)"
_APPLY_END = "activation, gated)\n"
HOOK_INDENT = {"sm90": 20, "sm100": 16}  # reduce_store's add and epilogue, per ladder


def _epilogue_on_rank0_partial(indent: int) -> tuple:
    """The epilogue applied to rank 0's partial sum, the other ranks' partial sums added after it."""
    sp = " " * indent
    rest = (f"{sp}if cutlass.const_expr(split_k > 1):\n"
            f"{sp}    rest = cute.make_rmem_tensor(total.layout, cutlass.Float32)\n"
            f"{sp}    add_in_rank_order(parts[1:], idx, rest)\n"
            f"{sp}    for e in cutlass.range_constexpr(4):\n"
            f"{sp}        out[e] = out[e] + rest[e]\n")
    return ((_ADD, "add_in_rank_order(parts[:1], idx, total)"), (_APPLY_END, _APPLY_END + rest))


def _epilogue_then_reduce(indent: int) -> tuple:
    """The epilogue on the registers before the reduce, which then overwrites them."""
    sp = " " * indent
    return ((f"{sp}{_ADD}\n", ""), (_APPLY_END, f"{_APPLY_END}{sp}{_ADD}\n"))


MUTANTS = [
    # --- constants and the formulas of the activations ------------------------------------------------
    _m("gelu-k0-no-sqrt", "activation constant", E,
       "GELU_K0 = 0.7978845608028654  # sqrt(2 / pi)", "GELU_K0 = 0.6366197723675814  # sqrt(2 / pi)", "gelu",
       note="gelu's sqrt(2/pi) written as 2/pi"),
    _m("gelu-k1-decimal", "activation constant", E, "GELU_K1 = 0.044715\n", "GELU_K1 = 0.44715\n", "gelu",
       fast="sm90 gelu split3", note="gelu's cubic coefficient with its decimal point moved"),
    _m("gelu-square-not-cube", "activation formula", E, _GELU_INNER,
       "        inner = x * (GELU_K0 + GELU_K0 * GELU_K1 * x)\n", "gelu", note="gelu's x + k x^3 as x + k x^2"),
    _m("gelu-no-half", "activation formula", E,
       "        x = half_x + half_x * cute.math.tanh(inner, fastmath=True)\n",
       "        x = x + half_x * cute.math.tanh(inner, fastmath=True)\n", "gelu", note="gelu's x/2 (1 + tanh) as x + x/2 tanh"),
    _m("silu-tanh-of-x", "activation formula", E,
       "        x = half_x + half_x * cute.math.tanh(half_x, fastmath=True)\n",
       "        x = half_x + half_x * cute.math.tanh(x, fastmath=True)\n", "silu",
       note="silu's sigmoid(x) = (1 + tanh(x/2)) / 2 written with tanh(x)"),
    # --- the activation branches --------------------------------------------------------------------
    _m("silu-takes-gelu-branch", "activation branch", E,
       'elif cutlass.const_expr(activation == "gelu"):', 'elif cutlass.const_expr(activation in ("gelu", "silu")):',
       "silu", note="silu computes gelu"),
    _m("relu-branch-misnamed", "activation branch", E,
       'if cutlass.const_expr(activation == "relu"):', 'if cutlass.const_expr(activation == "ReLU"):', "relu",
       note="no branch matches relu: the activation is skipped"),
    _m("relu-floor-minus-one", "activation formula", E,
       "cute.arch.fmax(x, cutlass.Float32(0.0))", "cute.arch.fmax(x, cutlass.Float32(-1.0))", "relu",
       note="relu clamps at -1"),
    # --- the terms and their order ------------------------------------------------------------------
    _m("bias-dropped", "term dropped", E, _BIAS_ADD, "            total[e] = total[e]\n", "bias",
       fast="sm100-bias-split2", note="the bias is loaded and not added"),
    _m("residual-dropped", "term dropped", E, _RESIDUAL_ADD, "            out[e] = out[e]\n", "residual",
       note="the residual is loaded and not added"),
    _m("residual-subtracted", "term sign", E, _RESIDUAL_ADD,
       "            out[e] = out[e] - d[e].to(cutlass.Float32)\n", "residual", note="y = act(...) - residual"),
    _m("bias-after-activation", "term order", E, "", "", "bias gelu", note="act(acc) + bias instead of act(acc + bias)",
       parts=((_BIAS_ADD, "            pass\n"),
              (_ACT, "            total[e] = activate(total[e], activation) + b[e].to(cutlass.Float32)\n"))),
    _m("residual-before-activation", "term order", E, "", "", "silu residual",
       note="act(acc + bias + residual): the skip connection through the activation",
       parts=((_ACT, "            total[e] = total[e]\n"),
              (_RESIDUAL_ADD, "            out[e] = activate(out[e] + d[e].to(cutlass.Float32), activation)\n"))),
    # --- the coordinates of the bias and residual vectors --------------------------------------------
    _m("bias-view-wrong-mode", "epilogue coordinates", E,
       "stride = (0, bias.layout.stride[0]) if n_mode == 1 else (bias.layout.stride[0], 0)",
       "stride = (bias.layout.stride[0], 0) if n_mode == 1 else (0, bias.layout.stride[0])", "bias",
       note="the bias broadcast along N, indexed by the token"),
    _m("vectors-first-weight-tile", "epilogue coordinates", E,
       "cute.local_tile(view, tile_mn, (m_tile, n_tile))", "cute.local_tile(view, tile_mn, (0, n_tile))", "bias",
       note="every tile reads the bias and residual of the first weight tile"),
    # --- gated pairs: C's column j = act(gate + b) * (up + b) of the GEMM's columns 2j, 2j + 1 --------------
    _m("gated-pair-swapped", "gated pairs", E, _GATE,
       "            out[e] = activate(total[2 * e + 1], activation) * total[2 * e]\n", "gated",
       note="the activation on the up column, the gate column multiplied"),
    _m("gated-no-activation", "gated pairs", E, _GATE, "            out[e] = total[2 * e] * total[2 * e + 1]\n",
       "gated", note="gate * up without the activation"),
    _m("sm90-gated-tiles-of-c", "gated pairs", P9["sm90"],
       "tiles_m = ceil_div(mA.shape[0] if cutlass.const_expr(self.gated()) else mC.shape[0], BM)",
       "tiles_m = ceil_div(mC.shape[0], BM)", "sm90 gated",
       note="the weight tiles counted on C^T, which gated pairs make half as tall: half the pairs never computed"),
    _m("vector-at-first", "epilogue coordinates", E,
       "return None if vectors is None else vectors[(None, idx)]",
       "return None if vectors is None else vectors[(None, 0)]", "residual",
       note="every 16-B vector of C adds the bias and residual of the tile's first vector"),
]

for _lad in ("sm90", "sm100"):
    _ind = HOOK_INDENT[_lad]
    MUTANTS += [
        # --- where the epilogue sits around the split-K reduce ---------------------------------------
        _m(f"{_lad}-epilogue-on-a-partial", "epilogue vs the reduce", P9[_lad], "", "", f"{_lad} split2",
           fast="sm90 split2 bias" if _lad == "sm90" else "", parts=_epilogue_on_rank0_partial(_ind),
           note="the epilogue applied to rank 0's partial sum, the other ranks' added after it"),
        _m(f"{_lad}-epilogue-twice", "epilogue vs the reduce", P9[_lad], _APPLY,
           "out = epilogue.apply(epilogue.apply(total, epilogue.vector_at(gBias, idx), epilogue.vector_at(gD, idx), "
           "activation, gated), epilogue.vector_at(gBias, idx)", _lad,
           note="the epilogue applied twice to the reduced sum"),
        _m(f"{_lad}-epilogue-overwritten", "epilogue vs the reduce", P9[_lad], "", "", _lad,
           parts=_epilogue_then_reduce(_ind), note="the epilogue runs before the reduce, which overwrites it"),
        _m(f"{_lad}-gated-predicate-gemm-tile", "gated pairs", P9[_lad],
           "cute.local_tile(cute.make_identity_tensor(mC.shape), out_tile, (m_tile, n_tile))",
           "cute.local_tile(cute.make_identity_tensor(mC.shape), tile_mn, (m_tile, n_tile))", f"{_lad} gated",
           note="gated: the store's edge test reads the GEMM tile's coordinates, not C's half-width tile's"),
        # --- phase 11's own hooks --------------------------------------------------------------------
        _m(f"{_lad}-bias-view-n-mode", "epilogue coordinates", P11[_lad], "n_mode=0", "n_mode=1", f"{_lad} bias",
           note="the swapped kernel's bias seen along C^T's token mode"),
        _m(f"{_lad}-activation-not-passed", "activation branch", P11[_lad],
           "    def activation(self) -> str:\n        return self.cfg.activation\n",
           "    def activation(self) -> str:\n        return \"none\"\n", _lad,
           note="phase 11 hands phase 9's reduce no activation"),
    ]

MUTANTS.append(
    _m("sm90-register-epilogue-kept", "epilogue vs the reduce", P11["sm90"],
       "return super().register_epilogue() and not self.cfg.epilogue_active()",
       "return super().register_epilogue()", "sm90 split1 fp32C",
       note="split 1, fp32 C: phase 9's register epilogue stores the accumulators, the fused epilogue never runs"))

# --- the persistent phases' form (``apply_at``: sm90 6, 7 and 8, sm100 6; tests/test_epilogue_sim_persistent.py) ---
PSIM = "tests/test_epilogue_sim_persistent.py"
PRUNS = "test_persistent_fused_epilogue_on_the_machine"
CT90, CT100 = "phases/sm90/common_tma.py", "phases/sm100/common_tma.py"
P6 = {"sm90": "phases/sm90/phase6_persistent.py", "sm100": "phases/sm100/phase6_persistent.py"}
P7 = "phases/sm90/phase7_stream_k.py"
P8 = "phases/sm90/phase8_pingpong.py"


def _p(id, kind, phase, path, old, new, runs, note=""):
    """A persistent phase's epilogue mutant: ``runs`` the words selecting the persistent machine runs that catch it."""
    return MutantEpi(id, kind, phase, path, old, new, (PSIM, "-k", " and ".join([PRUNS, *runs.split()])), False,
                     note, (), "epilogue", ())


MUTANTS += [
    _p("apply-at-bias-after-activation", "term order", "6", E,
       "            if cutlass.const_expr(b is not None):\n                x = x + b[e].to(cutlass.Float32)\n"
       "            x = activate(x, activation)\n",
       "            x = activate(x, activation)\n            if cutlass.const_expr(b is not None):\n"
       "                x = x + b[e].to(cutlass.Float32)\n", "gelu",
       note="the persistent form adds the bias after the activation"),
    _p("apply-at-rows-not-clamped", "epilogue coordinates", "6", E,
       "return cutlass.min(m, c_shape[0] - 1), cutlass.min(n, c_shape[1] - group)",
       "return m, cutlass.min(n, c_shape[1] - group)", "residual",
       note="a partial tile's rows past M read the residual past its last row"),
    _p("apply-at-next-group", "epilogue coordinates", "6", E,
       "(coord[0], coord[1] >> (group.bit_length() - 1)))", "(coord[0], (coord[1] >> (group.bit_length() - 1)) + 1))",
       "bias",
       note="each register group adds the bias and residual of the next group of columns"),
    _p("apply-at-row-clamped-to-n", "epilogue coordinates", "6", E,
       "return cutlass.min(m, c_shape[0] - 1), cutlass.min(n, c_shape[1] - group)",
       "return cutlass.min(m, c_shape[1] - 1), cutlass.min(n, c_shape[1] - group)", "residual",
       note="rows clamped to N instead of M: rows past N read the residual of row N - 1"),
    _p("sm90-slab-coordinates-of-slab-0", "epilogue coordinates", "6", CT90,
       "epi.at(epi.coords[(None, j), None, 0],", "epi.at(epi.coords[(None, 0), None, 0],", "sm90",
       note="every 32-column slab applies the bias and residual of the tile's first slab"),
    # the bias loaded once per tile (sm90, no residual): each register pair must find its own columns' values
    _p("sm90-preloaded-bias-of-slab-0", "epilogue coordinates", "7", CT90,
       "None if epi.bias_groups is None else epi.bias_groups[j])", "None if epi.bias_groups is None else epi.bias_groups[0])",
       "sm90 bias", note="every slab adds the bias its tile loaded for the first slab"),
    _p("sm90-bias-pair-column-per-pair", "epilogue coordinates", "8", CT90,
       "return lambda g: (g // 2) % (epi_n // 8)", "return lambda g: g % (epi_n // 8)", "sm90 bias",
       note="the bias keyed by the register pair's index, not its N-block: the second 8-row half's pairs read the "
            "next N-block's bias"),
    _p("sm90-persistent-bias-along-m", "epilogue coordinates", "6", P6["sm90"],
       "epilogue.bias_view(mBias, mC, n_mode=1, shape=(m, n))", "epilogue.bias_view(mBias, mC, n_mode=0, shape=(m, n))",
       "sm90 bias",
       note="the persistent kernel's bias seen along C's rows"),
    _p("sm90-stream-k-half-of-rank-0", "epilogue coordinates", "7", P7,
       "epi.at(epi.coords[(None, keep_first + jj), 0, 0])", "epi.at(epi.coords[(None, jj), 0, 0])", "sm90-7",
       note="both CTAs of a split pair apply the coordinates of the tile's first half of slabs"),
    _p("sm90-stream-k-split-tile-unfused", "term dropped", "7", P7,
       "None if cutlass.const_expr(epi is None) else epi.at(epi.coords[(None, keep_first + jj), 0, 0]),", "None,",
       "sm90-7", note="the tile split along K is stored without the epilogue (the data-parallel tiles have it)"),
    _p("sm90-stream-k-data-parallel-unfused", "term dropped", "7", P7,
       "SLABS, EPI_STAGES, epi)", "SLABS, EPI_STAGES)", "sm90-7",
       note="phase 7's data-parallel tiles are stored without the epilogue (the split one has it)"),
    _p("sm90-pingpong-tile-swapped", "epilogue coordinates", "8", P8,
       "ct.epilogue_args(cfg, thr_mma, (M, N), mBias, mD, m_tile, n_tile,",
       "ct.epilogue_args(cfg, thr_mma, (M, N), mBias, mD, n_tile, m_tile,", "sm90-8",
       note="phase 8's epilogue reads the coordinates of the transposed tile"),
    # the gated pairs on sm90's persistent phases: both registers of a pair carry the value, one staging element each
    _p("sm90-gated-up-register-left", "gated pairs", "6", E,
       "        frag[g * 2] = y\n        frag[g * 2 + 1] = y\n", "        frag[g * 2] = y\n", "sm90 gated",
       note="only the gate's register gets the pair's value: the up's raw sum is staged on the same element after it"),
    _p("sm90-gated-gate-up-swapped", "gated pairs", "6", E,
       "        y = activate(gate, activation) * up\n", "        y = activate(up, activation) * gate\n", "sm90 gated",
       note="the activation applied to the up column and the gate multiplied"),
    _p("sm90-gated-residual-at-gemm-column", "gated pairs", "6", E,
       "d = _group_at(mD, (inside[0], inside[1] // 2), 1)", "d = _group_at(mD, (inside[0], inside[1]), 1)",
       "sm90 gated residual", note="the residual read at the GEMM's column n instead of C's n / 2"),
    _p("sm90-gated-staging-modes-swapped", "gated pairs", "6", CT90,
       "    cols = (pair, slab.shape[1]) if pair > 1 else slab.shape[1]\n"
       "    col_stride = (0, slab.stride[1]) if pair > 1 else slab.stride[1]\n",
       "    cols = (slab.shape[1], pair) if pair > 1 else slab.shape[1]\n"
       "    col_stride = (slab.stride[1], 0) if pair > 1 else slab.stride[1]\n", "sm90 gated",
       note="the staging view's pair mode taken as the outer one: 16 pairs share an element, not a pair's two registers"),
    _p("sm90-gated-full-width-c-tiles", "gated pairs", "8", P8,
       "gC = cute.local_tile(mC, (BM, BN // PAIR), (None, None))", "gC = cute.local_tile(mC, (BM, BN), (None, None))",
       "sm90-8 gated", note="phase 8 cuts C into full-width tiles: tile n stores at twice its columns"),
    _p("sm100-chunk-row-without-warp", "epilogue coordinates", "6", CT100,
       "row = WARP_ROWS * (warp_idx % 4) + cute.arch.lane_idx()", "row = cute.arch.lane_idx()", "sm100",
       note="every epilogue warp reads the coordinates of the tile's first 32 rows"),
    _p("sm100-chunk-first-column", "epilogue coordinates", "6", CT100,
       "(row, epi_box_col(warp_idx, j, epi_warps, bn))", "(row, epi_box_col(warp_idx, 0, epi_warps, bn))", "sm100",
       note="every TMEM chunk applies the bias and residual of the warp's first chunk of columns"),
    _p("sm100-persistent-activation-dropped", "activation branch", "6", P6["sm100"],
       "mBias, mD,\n                                                    c.activation)",
       "mBias, mD,\n                                                    \"none\")", "sm100",
       note="sm100 phase 6 hands its epilogue no activation"),
]
