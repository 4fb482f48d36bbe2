"""Numbers for the symbolic values: how the final check evaluates a fused epilogue (phase 11) element.

What: the PTX machine runs the epilogue's fp32 arithmetic on provenance (``values.Fx`` trees over
accumulators, bias and residual elements, immediates). At the check, each leaf gets a number that is
random but fixed per coordinate (``Assignment``): the full-K accumulator of C[m, n] one fp32 value per
(m, n), bias[n] one value representable in A's dtype, residual[m, n] one in C's dtype. The tree is then
evaluated with the semantics of each PTX op on fp32 (``evaluate``; ``tanh.approx.f32`` as the exact tanh
rounded to fp32, ``cvt.rn`` to bf16 / fp16 round-to-nearest-even) and compared with the float64
reference act(acc + bias[n]) + residual[m, n], rounded to C's type (``EpilogueSpec.check``). With phase 11's
gated pairs, C's column j is act(gate + bias[2j]) * (up + bias[2j + 1]) + residual[m, j] of the GEMM's columns
2j (gate) and 2j + 1 (up).

Why numbers and not only provenance: the epilogue's bugs are arithmetic -- a wrong constant, the bias
after the activation, the wrong activation, the residual twice. A tree with the right leaves can still
compute the wrong function; evaluating it at random points cannot. The leaves are checked by name first
(the accumulator of this very (m, n) over all of K in K order, bias[n], residual[m, n]), so a wrong
coordinate names itself instead of showing up as a wrong number.

The tolerance: the kernel's fp32 operations against float64 (2^-18 of the magnitudes involved: a handful of
fp32 roundings, with room) plus half a unit in the last place of C's type (the one rounding to C). The GPU's
``tanh.approx`` error (about 2^-11 relative) is not modelled here: it is the GPU tests' to bound.
"""

from __future__ import annotations

import dataclasses
import math
import struct

import numpy as np

from ptxkit.values import ZERO, Acc, Elem, Fx, Rounded, describe, leaves

SIGNIFICAND_BITS = {"f32": 24, "bf16": 8, "f16": 11}
GELU_C = math.sqrt(2.0 / math.pi)


class EvalError(Exception):
    """A value that has no number (an operand the epilogue must not read)."""


def f32(x) -> float:
    """``x`` rounded to fp32 (round to nearest even)."""
    return float(np.float32(x))


def bits_to_f32(v: int) -> float:
    return struct.unpack("<f", struct.pack("<I", v & 0xFFFFFFFF))[0]


def round_to(x: float, dtype: str) -> float:
    """``x`` rounded to nearest even in ``dtype`` ('f32', 'bf16', 'f16'; normal range: these values are ~1)."""
    if dtype == "f32":
        return f32(x)
    if dtype == "f16":
        return float(np.float16(x))
    if x == 0 or not math.isfinite(x):
        return x
    m, e = math.frexp(x)  # x = m 2^e, 0.5 <= |m| < 1: m 2^p is exact, round() ties to even
    p = SIGNIFICAND_BITS[dtype]
    return round(m * 2 ** p) * 2.0 ** (e - p)


def half_ulp(x: float, dtype: str) -> float:
    """Half a unit in the last place of ``dtype`` at |x|."""
    _, e = math.frexp(abs(x) or 1e-30)
    return 2.0 ** (e - SIGNIFICAND_BITS[dtype] - 1)


def bits16(x: float, dtype: str) -> int:
    """The 16 bits of ``x`` (representable in ``dtype``, 'bf16' or 'f16')."""
    if dtype == "f16":
        return int(np.float16(x).view(np.uint16))
    return struct.unpack("<I", struct.pack("<f", x))[0] >> 16


def from_bits16(b: int, dtype: str) -> float:
    """cvt.f32.{bf16,f16}: the 16-bit pattern ``b`` read as ``dtype``, widened (exactly)."""
    b &= 0xFFFF
    if dtype == "f16":
        return float(np.uint16(b).view(np.float16))
    return bits_to_f32(b << 16)


_BINARY = {
    "add": lambda a, b: f32(a + b),  # a and b are fp32: their float64 sum is exact, then rounded once
    "sub": lambda a, b: f32(a - b),
    "mul": lambda a, b: f32(a * b),  # exact in float64 (24 + 24 bits), rounded once
    "max": lambda a, b: max(a, b),
    "min": lambda a, b: min(a, b),
}


def apply_op(op: str, args: list) -> float:
    """One fp32 operation on numbers (``Fx.op``, ``args`` already fp32 values)."""
    if op in _BINARY:
        return _BINARY[op](*args)
    if op == "fma":
        a, b, c = args
        return f32(a * b + c)  # a * b exact in float64; the sum rounded to float64, then fp32 (within the tolerance)
    if op == "neg":
        return -args[0]
    if op == "abs":
        return abs(args[0])
    if op == "tanh":
        return f32(math.tanh(args[0]))
    raise EvalError(f"no numeric semantics for {op}")


def evaluate(v, leaf, dtype_of) -> float:
    """The fp32 number of value ``v``: ``leaf(x)`` numbers an ``Acc`` or ``Elem`` leaf, ``dtype_of(tensor)`` is
    the element type a tensor's elements hold (for a ``cvt.f32.*`` of them)."""
    if isinstance(v, Fx):
        if v.op.startswith("cvt.f32."):
            return from_bits16(_bits16_of(v.args[0], leaf, dtype_of), v.op.split(".")[2])
        return apply_op(v.op, [evaluate(a, leaf, dtype_of) for a in v.args])
    if isinstance(v, Rounded):
        return round_to(evaluate(v.acc, leaf, dtype_of), v.dtype)
    if isinstance(v, (Acc, Elem)):
        return leaf(v)
    if v is ZERO:
        return 0.0
    if isinstance(v, bool):
        raise EvalError(f"a predicate {v!r} in fp32 arithmetic")
    if isinstance(v, int):
        return bits_to_f32(v)
    if isinstance(v, float):
        return f32(v)
    raise EvalError(f"{v!r} has no fp32 value")


def _bits16_of(v, leaf, dtype_of) -> int:
    """The 16-bit pattern a ``cvt.f32.{bf16,f16}`` widens: an element of a 16-bit tensor, a value rounded to 16
    bits, or raw bits."""
    if isinstance(v, Elem):
        dt = dtype_of(v.tensor)
        if dt not in ("bf16", "f16"):
            raise EvalError(f"widens {describe(v)}, an element of a {dt} tensor, as a 16-bit value")
        return bits16(leaf(v), dt)
    if isinstance(v, Rounded):
        return bits16(round_to(evaluate(v.acc, leaf, dtype_of), v.dtype), v.dtype)
    if isinstance(v, int) and not isinstance(v, bool):
        return v & 0xFFFF
    raise EvalError(f"widens {describe(v)}, not a 16-bit value")


def activate(x: float, activation: str) -> float:
    """The reference activation in float64: relu, the tanh-form gelu (``F.gelu(approximate="tanh")``), silu as
    x sigmoid(x) (the kernel's x/2 (1 + tanh(x/2)) is the same function)."""
    if activation == "relu":
        return max(x, 0.0)
    if activation == "gelu":
        return 0.5 * x * (1.0 + math.tanh(GELU_C * (x + 0.044715 * x ** 3)))
    if activation == "silu":
        return x / (1.0 + math.exp(-x))
    if activation == "none":
        return x
    raise ValueError(f"activation {activation!r}")


@dataclasses.dataclass
class Assignment:
    """The numbers of the leaves for a kernel C of ``shape``: ``acc`` (kernel coordinates), ``bias`` (over the
    problem's N), ``d`` (the residual, kernel coordinates); random, fixed by ``seed`` for each coordinate."""

    acc: np.ndarray
    bias: np.ndarray
    d: np.ndarray

    @classmethod
    def make(cls, shape: tuple, gemm_shape: tuple, n_mode: int, bias_dtype: str, c_dtype: str,
             seed: int = 47) -> "Assignment":
        """``shape``: C's (the residual's), ``gemm_shape``: the accumulators' (twice C's along N when gated)."""
        rng = np.random.default_rng(seed)
        acc = rng.uniform(-3.0, 3.0, gemm_shape).astype(np.float32).astype(np.float64)
        bias = np.array([round_to(x, bias_dtype) for x in rng.uniform(-1.0, 1.0, gemm_shape[n_mode])])
        d = np.array([round_to(x, c_dtype) for x in rng.uniform(-1.0, 1.0, shape).ravel()]).reshape(shape)
        return cls(acc, bias, d)


@dataclasses.dataclass(frozen=True)
class EpilogueSpec:
    """What the check expects a fused epilogue to compute: y = act(acc + bias[n]) + residual[m, n], rounded
    once to ``c_dtype``. ``n_mode``: the kernel C's mode that runs over the problem's N (1; 0 for a swap-AB
    kernel, which stores C^T: its element (r, c) takes bias[r]). ``gated``: C's element j along N is
    act(gate + bias[2j]) * (up + bias[2j + 1]) + residual of the GEMM's elements 2j and 2j + 1 along N."""

    bias: bool
    activation: str
    residual: bool
    bias_dtype: str  # A's dtype: 'bf16' / 'f16'
    c_dtype: str  # 'f32' / 'bf16' / 'f16'
    n_mode: int = 1
    seed: int = 47
    gated: bool = False

    @classmethod
    def of(cls, kernel, ab: str, c: str) -> "EpilogueSpec | None":
        """The spec of a kernel's config (phase 11's fields), None when it has no fused epilogue."""
        cfg = kernel.cfg
        if not (hasattr(cfg, "epilogue_active") and cfg.epilogue_active()):
            return None
        return cls(cfg.bias, cfg.activation, cfg.residual, ab, c, 0 if getattr(kernel, "swap_ab", False) else 1,
                   gated=bool(getattr(cfg, "gated", False)))

    def assignment(self, shape: tuple) -> Assignment:
        gemm = tuple(2 * x if i == self.n_mode and self.gated else x for i, x in enumerate(shape))
        return Assignment.make(shape, gemm, self.n_mode, self.bias_dtype, self.c_dtype, self.seed)

    def gemm_columns(self, r: int, c: int) -> tuple:
        """The GEMM elements kernel C element (r, c) is made of: itself, or its (gate, up) pair."""
        if not self.gated:
            return ((r, c),)
        return ((2 * r, c), (2 * r + 1, c)) if self.n_mode == 0 else ((r, 2 * c), (r, 2 * c + 1))

    def reference(self, a: Assignment, r: int, c: int) -> tuple[float, float]:
        """(float64 act(acc + bias) + residual of kernel C element (r, c) -- gated: act(gate + bias) * (up + bias)
        + residual --, the magnitude its fp32 error scales with)."""
        terms = []
        for rr, cc in self.gemm_columns(r, c):
            b = a.bias[rr if self.n_mode == 0 else cc] if self.bias else 0.0
            terms.append((a.acc[rr, cc] + b, 1.0 + abs(a.acc[rr, cc]) + abs(b)))
        d = a.d[r, c] if self.residual else 0.0
        (x, sx), *up = terms
        if not up:
            return activate(x, self.activation) + d, sx + abs(d)
        (u, su), = up
        return activate(x, self.activation) * u + d, sx * su + abs(d)

    def check(self, a: Assignment, stored, r: int, c: int, k: int, k_step: int) -> str | None:
        """None if ``stored`` (what C[r, c] received, rounded where C is 16-bit) is this element's epilogue; else
        what is wrong: a leaf of the wrong coordinate, a partial K range, a wrong number."""
        gemm = self.gemm_columns(r, c)
        ns = [rc[0] if self.n_mode == 0 else rc[1] for rc in gemm]
        n = ns[0]
        accs = 0
        for x in leaves(stored):
            if isinstance(x, Acc):
                accs += 1
                if (x.m, x.n) not in gemm:
                    return f"C[{r}, {c}] computes with the accumulator of C[{x.m}, {x.n}]: {describe(stored)}"
                if len(x.ks) != 1 or x.ks[0][0] != 0 or not k <= x.ks[0][1] < k + k_step:
                    return (f"C[{r}, {c}]'s epilogue reads an accumulator over K ranges {x.ks}, not [0, {k}) (an "
                            f"epilogue applied to a partial sum?): {describe(stored)}")
                if not x.in_k_order():
                    return f"C[{r}, {c}] adds its partial sums in another order than K's: {x.terms}"
            elif isinstance(x, Elem):
                if x.tensor == "bias" and (x.row, x.col) not in [(0, j) for j in ns]:
                    want = " or ".join(f"bias[{j}]" for j in ns)
                    return f"C[{r}, {c}] adds bias[{x.col}], not {want}: {describe(stored)}"
                if x.tensor == "D" and (x.row, x.col) != (r, c):
                    return f"C[{r}, {c}] adds residual[{x.row}, {x.col}], not residual[{r}, {c}]: {describe(stored)}"
                if x.tensor not in ("bias", "D"):
                    return f"C[{r}, {c}]'s epilogue computes with {describe(x)}: {describe(stored)}"
        if accs == 0:
            return f"C[{r}, {c}] receives {describe(stored)}, without its accumulator"

        def leaf(x):
            if isinstance(x, Acc):
                return float(a.acc[x.m, x.n])
            return float(a.bias[x.col]) if x.tensor == "bias" else float(a.d[x.row, x.col])

        dtypes = {"bias": self.bias_dtype, "D": self.c_dtype}
        try:
            got = evaluate(stored, leaf, dtypes.get)
        except EvalError as e:
            return f"C[{r}, {c}]: {e}"
        ref, scale = self.reference(a, r, c)
        tol32 = 2.0 ** -18 * scale
        allowed = half_ulp(abs(ref) + tol32, self.c_dtype) + tol32
        if not abs(got - ref) <= allowed:
            accs_, biases = ", ".join(f"{a.acc[rc]:.6g}" for rc in gemm), ", ".join(f"{a.bias[j]:.6g}" for j in ns)
            return (f"C[{r}, {c}] = {got!r}, expected {round_to(ref, self.c_dtype)!r} = {self.label()} (acc "
                    f"{accs_}, bias {biases}, residual {a.d[r, c]:.6g}): {describe(stored)}")
        return None

    def label(self) -> str:
        b = " + bias" if self.bias else ""
        x = ("gate" if self.gated else "acc") + b
        x = f"{self.activation}({x})" if self.activation != "none" else x
        x = f"{x} * (up{b})" if self.gated else x
        return x + (" + residual" if self.residual else "")
