"""The fused epilogue of both ladders (phase 11): y = act(A @ B + bias) + residual, in fp32, before the rounding.

What: after a tile's accumulators are final (for a split-K tile: after the reduce has added the partial
tiles, so the epilogue runs once per element), each value passes through
1. ``+ bias[n]``: a vector over C's N (one value per output column, ``x @ W.T + b`` as ``F.linear`` adds it);
2. an activation: ``relu``, ``gelu`` (the tanh form, ``F.gelu(approximate="tanh")``) or ``silu``; or, ``gated``,
   a gated MLP's pair: C's columns 2j (gate) and 2j + 1 (up) become one column j = act(gate) * up (SwiGLU with
   silu, GeGLU with gelu), so C has half the GEMM's columns (the weight's rows interleaved: gate 0, up 0, ...);
3. ``+ residual[m, n]``: a tensor of C's shape and dtype (a transformer block's skip connection);
then it is rounded to C's type and stored, as without the epilogue.

Why in the kernel: without it, ``linear(x, w, b)`` followed by an activation is three launches, and the two
after the GEMM each read and write all of y. At decode shapes (16 x 14336) y is small but every launch and
every trip through memory is a large share of the layer's time. In the epilogue the bias and the residual are
one extra load each per stored vector, and the activation a few instructions on values already in registers.

Why before the rounding: ``gelu(round_bf16(acc + b))`` rounds twice (the unfused sequence does exactly that:
the GEMM writes bf16 y, the activation reads it); here the sum, the activation and the residual add run in
fp32 and only the result is rounded once, which is at least as accurate as the unfused sequence.

How the vectors reach the epilogue: the compile face hands the kernel ``bias`` and ``residual`` as views with
C's (kernel) shape -- the bias a broadcast view (stride 0 along M), the residual transposed with C where a
plan stores C^T (swap-AB) -- so the epilogue reads element (m, n) of each at the same coordinates as the C
element it stores, whatever the orientation, and loads them straight to registers (a 16-B C vector's bias is
one 8-B load of 16-bit values; no smem: each value is used by one thread once). sm90's ping-pong phase 8 is the
exception best makes (``cute_gemm.runtime.choose.spread_slabs``): there one warpgroup's epilogue runs beside the
other's wgmmas, which a dense burst of arithmetic slows, so a tile's bias goes to smem as its mainloop starts
(``bias_smem``) and each slab's arithmetic waits for the previous slab's barrier (``epi_spread``).

The activations use the SFU's approximate ``tanh.approx.f32`` (relative error about 2^-11, below a bf16 ulp):
gelu(x) = x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) and silu(x) = x sigmoid(x) = x/2 (1 + tanh(x/2)).
"""

from __future__ import annotations

import dataclasses

import cutlass
import cutlass.cute as cute

from phases.base import ACTIVATIONS

GELU_K0 = 0.7978845608028654  # sqrt(2 / pi)
GELU_K1 = 0.044715


@dataclasses.dataclass(frozen=True)
class EpilogueFields:
    """The epilogue's config fields (phase 11's configs carry them); all off: no epilogue, the parent's kernel."""

    bias: bool = False  # + a bias vector over N (its dtype: A's, as ``F.linear`` takes it)
    activation: str = "none"  # one of ACTIVATIONS
    residual: bool = False  # + a residual tensor of C's shape and dtype, after the activation
    gated: bool = False  # columns (2j, 2j + 1) = (gate, up) -> column j = act(gate) * up: C is N / 2 wide

    def epilogue_active(self) -> bool:
        return self.bias or self.activation != "none" or self.residual or self.gated

    def epilogue_problems(self, gated_ok: bool = True) -> list[str]:
        """What is wrong with the fields (empty: nothing); ``gated_ok``: the kernel stores half-width C tiles."""
        why = []
        if self.activation not in ACTIVATIONS:
            why.append(f"activation={self.activation!r}: one of {', '.join(ACTIVATIONS)}")
        if self.gated and not gated_ok:
            why.append("gated=True: this kernel's epilogue does not take the gated pairs (phase 11 and sm90's "
                       "persistent phases 6, 7 and 8 do)")
        return why

    def shape_problems(self, n: int, n_align: int) -> list[str]:
        """What the fields forbid of the problem's N (empty: nothing). Gated, C holds N / 2 columns, and the
        compiled code assumes C's rows a multiple of ``n_align`` as it does N's: N a multiple of twice that."""
        if self.gated and n % (2 * n_align):
            return [f"gated=True: N={n} must be a multiple of {2 * n_align}: C's N / 2 columns (one per (gate, up) "
                    f"pair) must be a multiple of {n_align}, as N is"]
        return []


def epilogue_label(cfg) -> str:
    """'bias+gelu+residual', 'silu', '' (no epilogue): how a table names a config's epilogue."""
    parts = (["bias"] if cfg.bias else []) + ([cfg.activation] if cfg.activation != "none" else [])
    parts += ["gated"] if getattr(cfg, "gated", False) else []
    return "+".join(parts + (["residual"] if cfg.residual else []))


def bias_view(bias: cute.Tensor, c: cute.Tensor, n_mode: int, shape=None) -> cute.Tensor:
    """``bias`` (a vector over N) seen with C's shape (or ``shape``: the GEMM's, where ``gated`` halves C): stride 0
    along the other mode, so element (m, n) of the view is bias[n]. ``n_mode``: the mode that runs over the
    problem's N (1 for C, 0 for swap-AB's C^T)."""
    stride = (0, bias.layout.stride[0]) if n_mode == 1 else (bias.layout.stride[0], 0)
    return cute.make_tensor(bias.iterator, cute.make_layout(c.shape if shape is None else shape, stride=stride))


def tile_vectors(view, tile_mn, m_tile, n_tile, vec_tiler):
    """The split-K reduce's 16-B vectors of an epilogue view's (m_tile, n_tile) tile, indexed as C's are
    (``((vec), (lines, vecs))``); None (no such term) stays None."""
    if view is None:
        return None
    return cute.zipped_divide(cute.local_tile(view, tile_mn, (m_tile, n_tile)), vec_tiler)


def vector_at(vectors, idx):
    """Vector ``idx`` of ``tile_vectors``' result, or None."""
    return None if vectors is None else vectors[(None, idx)]


@cute.jit
def activate(x, activation: cutlass.Constexpr):
    """One fp32 value through the activation (a Python-time choice: no branch in the kernel)."""
    if cutlass.const_expr(activation == "relu"):
        x = cute.arch.fmax(x, cutlass.Float32(0.0))
    elif cutlass.const_expr(activation == "gelu"):
        inner = x * (GELU_K0 + GELU_K0 * GELU_K1 * x * x)
        half_x = x * 0.5
        x = half_x + half_x * cute.math.tanh(inner, fastmath=True)
    elif cutlass.const_expr(activation == "silu"):
        half_x = x * 0.5
        x = half_x + half_x * cute.math.tanh(half_x, fastmath=True)
    return x


@cute.jit
def apply(total: cute.Tensor, bias_vec, residual_vec, activation: cutlass.Constexpr, gated: cutlass.Constexpr = False):
    """The values to round and store: act(``total`` + bias) + residual, or with ``gated`` the half as many
    act(gate + bias) * (up + bias) + residual of ``total``'s (gate, up) pairs (a new fragment); ``total``: fp32
    registers, a vector along C's contiguous mode (where the pairs are interleaved).

    ``bias_vec`` / ``residual_vec``: the same elements of the bias and residual views (``bias_view``; the
    residual's are C's, half as many as ``total`` with ``gated``), or None where the config has no such term
    (nothing is loaded or traced for it).
    """
    n = cute.size(total)
    if cutlass.const_expr(bias_vec is not None):
        b = cute.make_rmem_tensor(cute.make_layout(n), bias_vec.element_type)
        cute.autovec_copy(bias_vec, b)
        for e in cutlass.range_constexpr(n):
            total[e] = total[e] + b[e].to(cutlass.Float32)
    out = total
    if cutlass.const_expr(gated):
        out = cute.make_rmem_tensor(cute.make_layout(n // 2), cutlass.Float32)
        for e in cutlass.range_constexpr(n // 2):
            out[e] = activate(total[2 * e], activation) * total[2 * e + 1]
    elif cutlass.const_expr(activation != "none"):
        for e in cutlass.range_constexpr(n):
            total[e] = activate(total[e], activation)
    if cutlass.const_expr(residual_vec is not None):
        d = cute.make_rmem_tensor(cute.make_layout(cute.size(out)), residual_vec.element_type)
        cute.autovec_copy(residual_vec, d)
        for e in cutlass.range_constexpr(cute.size(out)):
            out[e] = out[e] + d[e].to(cutlass.Float32)
    return out


class EpilogueArgs:
    """What a persistent phase's fused epilogue needs for one tile, passed down as one argument: the (M, N)
    coordinates of this thread's accumulator registers (``coords``, laid out like them), the GEMM's (M, N)
    (``c_shape``: C's, or with ``gated`` twice C's columns), the bias and residual views (or None), the activation
    (a trace-time string) and whether the registers hold gated pairs. ``bias_groups``: the bias values of
    ``coords``' groups already in registers (``load_bias``; a tile's: one list per slab), or None (``apply_at``
    loads them). ``spread``: sm90's slabs each run their arithmetic after the previous slab's barrier
    (``phases.sm90.common_tma.store_tile``) rather than where ptxas puts it."""

    def __init__(self, coords, c_shape, bias, residual, activation, gated=False, bias_groups=None, spread=False):
        self.coords, self.c_shape, self.bias, self.residual, self.activation = coords, c_shape, bias, residual, activation
        self.gated, self.bias_groups, self.spread = gated, bias_groups, spread

    def at(self, coords, bias_groups=None):
        """The same arguments for a part of the registers (a slab, a chunk): ``coords`` of that part, and that
        part's preloaded bias values, if any."""
        return EpilogueArgs(coords, self.c_shape, self.bias, self.residual, self.activation, self.gated, bias_groups,
                            self.spread)


def load_bias(view, coords, c_shape, group: int, column_of) -> list:
    """The bias values of every ``group`` of ``coords``' registers, loaded into registers now: a list, one per group,
    where the groups of one column group share one vector load.

    Why: a bias value depends only on its column, and a thread's fragment holds each column group in several rows
    (sm90's pairs: 4 rows of a 128-row tile). Loaded where ``apply_at`` uses them, each slab's loads would wait a
    whole memory latency after the previous slab's store, once per slab; issued together at the start of the
    tile's epilogue (or before the wait for its turn), the tile waits once. ``column_of(g)``: group g's column key,
    the same for the groups of one column group (``phases.sm90.common_tma.pair_column``).
    """
    loaded = {}
    for g in range(cute.size(coords) // group):
        if column_of(g) not in loaded:
            loaded[column_of(g)] = _group_at(view, _inside(coords[g * group], c_shape, group), group)
    return [loaded[column_of(g)] for g in range(cute.size(coords) // group)]


@cute.jit
def apply_at(frag: cute.Tensor, coords: cute.Tensor, c_shape, mBias, mD, activation: cutlass.Constexpr, fence=None,
             group: cutlass.Constexpr = 1, gated: cutlass.Constexpr = False, bias_groups=None):
    """The persistent phases' form: ``frag`` (fp32 registers of an MMA fragment) = act(frag + bias) + residual, at
    the C coordinates ``coords`` (the same partition of an identity tensor), ``group`` registers at a time.

    ``group``: how many consecutive registers hold consecutive columns of one row (sm90's wgmma fragment: a column
    pair, 2; sm100's TMEM chunk: a row, 8 of its 32 here): the bias and residual values of a group are one vector
    load (4 or 16 B) instead of ``group`` scalar ones. ``mBias`` / ``mD``: views with C's shape (``bias_view``) or
    None. A group past C's edges (a partial tile) reads the nearest group inside C instead -- the row clamped to
    M - 1, the column to N - group (N is a multiple of 8, so a group is wholly inside or outside C) -- a valid
    address, no branch; its values are clipped by the TMA store like every value of the tile. ``fence``: a
    function every register goes through before the arithmetic reads it (sm90: ``fence_register``, so nothing
    is scheduled above the wgmma wait).

    ``gated`` (sm90's column pairs, ``group`` 2): each pair is (gate, up) of one C column n / 2; both registers
    become act(gate + b) * (up + b') + residual[m, n / 2] -- the same value, so the pair's two stores to the one
    staging element (``phases.sm90.common_tma.epilogue_slab_views``) agree. ``c_shape`` is then the GEMM's (M, N).

    ``bias_groups`` (``load_bias``' list, one entry per group): the bias values loaded earlier; None: each group's
    are loaded here, just before its arithmetic.
    """
    if cutlass.const_expr(gated):
        assert group == 2, "the gated pairs are a wgmma fragment's column pairs"
        _apply_gated_at(frag, coords, c_shape, mBias, mD, activation, fence, bias_groups)
        return
    for g in cutlass.range_constexpr(cute.size(frag) // group):
        inside = _inside(coords[g * group], c_shape, group)
        b = _group_at(mBias, inside, group) if cutlass.const_expr(bias_groups is None) else bias_groups[g]
        d = _group_at(mD, inside, group)
        for e in cutlass.range_constexpr(group):
            x = frag[g * group + e] if cutlass.const_expr(fence is None) else fence(frag[g * group + e])
            if cutlass.const_expr(b is not None):
                x = x + b[e].to(cutlass.Float32)
            x = activate(x, activation)
            if cutlass.const_expr(d is not None):
                x = x + d[e].to(cutlass.Float32)
            frag[g * group + e] = x


@cute.jit
def _apply_gated_at(frag: cute.Tensor, coords: cute.Tensor, c_shape, mBias, mD, activation: cutlass.Constexpr, fence,
                    bias_groups):
    """``apply_at`` with ``gated``: each register pair (gate, up) -> act(gate + b) * (up + b') + residual, into both."""
    for g in cutlass.range_constexpr(cute.size(frag) // 2):
        inside = _inside(coords[g * 2], c_shape, 2)
        b = _group_at(mBias, inside, 2) if cutlass.const_expr(bias_groups is None) else bias_groups[g]
        d = _group_at(mD, (inside[0], inside[1] // 2), 1)  # C's column n / 2
        gate = frag[g * 2] if cutlass.const_expr(fence is None) else fence(frag[g * 2])
        up = frag[g * 2 + 1] if cutlass.const_expr(fence is None) else fence(frag[g * 2 + 1])
        if cutlass.const_expr(b is not None):
            gate = gate + b[0].to(cutlass.Float32)
            up = up + b[1].to(cutlass.Float32)
        y = activate(gate, activation) * up
        if cutlass.const_expr(d is not None):
            y = y + d[0].to(cutlass.Float32)
        frag[g * 2] = y
        frag[g * 2 + 1] = y


def _inside(coord, c_shape, group: int):
    """The nearest group inside C to the group at ``coord`` (``apply_at``: the row clamped to M - 1, the column to
    N - ``group``)."""
    m, n = coord
    return cutlass.min(m, c_shape[0] - 1), cutlass.min(n, c_shape[1] - group)


@cute.jit
def _group_at(view, coord, group: cutlass.Constexpr):
    """``group`` consecutive elements of row ``coord[0]`` of ``view`` from column ``coord[1]`` into registers (one
    vector load: the views are contiguous along N), or None for no view."""
    if cutlass.const_expr(view is None):
        return None
    # the (1, group) tile at (row, column / group): its offset is a multiple of ``group`` elements along N (the
    # column is one of a group's) and of the row stride, so the load can be one aligned vector. The groups are powers
    # of two, so column / group is a shift: the same floor, one instruction where ``//`` (signed floor division) takes
    # six per load, and a tile's bias loads are dozens per thread
    assert group & (group - 1) == 0, f"a group of {group} columns: powers of two only"
    src = cute.local_tile(view, (1, group), (coord[0], coord[1] >> (group.bit_length() - 1)))
    out = cute.make_rmem_tensor(src.layout, view.element_type)
    cute.autovec_copy(src, out)
    return out
