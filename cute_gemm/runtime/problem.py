"""The problem: C[M,N] = A[M,K] @ B[K,N], and what a call's tensors say about it.

A and B are fp16 or bf16 (one type for both), each row-major or column-major; C is fp32 (the
default), fp16 or bf16, row-major; the accumulation is fp32. ``validate_call`` reads the problem and its
``Operands`` (``phases.operands``: dtypes and majors) from torch tensors and refuses, with one
``InputError`` naming what was given and what is needed, everything a kernel cannot take.

The majors, in BLAS letters (``Operands.layout``): A [M,K] row-major is "n" (K contiguous), column-major
"t" (``x.t()`` of a contiguous [K,M]); B [K,N] row-major is "n" (N contiguous, the worklog's), column-major
"t" -- ``w.t()`` of an ``nn.Linear`` weight w [N,K]. A tensor with an extent of 1 (or none) is both: the
call takes whichever major makes it legal, the worklog's first.
"""

from __future__ import annotations

import dataclasses

from cute_gemm.errors import InputError
from phases.base import ACTIVATIONS, row_alignment
from phases.operands import AB_DTYPES, C_DTYPES, WORKLOG, Operands

# torch dtype name -> the Operands name
_NAMES = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32"}
_ALIASES = {"fp16": "fp16", "half": "fp16", "float16": "fp16", "bf16": "bf16", "bfloat16": "bf16",
            "fp32": "fp32", "float": "fp32", "float32": "fp32"}
_BYTES = {"fp16": 2, "bf16": 2, "fp32": 4}


@dataclasses.dataclass(frozen=True)
class Problem:
    m: int
    n: int
    k: int

    @property
    def flops(self) -> int:
        return 2 * self.m * self.n * self.k

    def bytes(self, operands: Operands = WORKLOG) -> int:
        """Bytes of A, B and C once each: what the GEMM must at least move (the bandwidth column's bytes)."""
        ab, c = _BYTES[operands.ab], _BYTES[operands.c]
        return ab * (self.m * self.k + self.k * self.n) + c * self.m * self.n

    @property
    def bytes_per_set(self) -> int:
        """Bytes of one input set plus its output with the worklog's operands (A, B fp16 and C fp32)."""
        return self.bytes(WORKLOG)

    def __str__(self) -> str:
        return f"{self.m}x{self.n}x{self.k}"

    @classmethod
    def parse(cls, text: str) -> "Problem":
        """'4096,4096,4096' or '4096x4096x4096' or a single '4096' (square)."""
        parts = [p for p in text.replace("x", ",").replace("X", ",").split(",") if p.strip()]
        try:
            dims = [int(p) for p in parts]
        except ValueError:
            raise ValueError(f"shape {text!r}: expected M,N,K integers, e.g. 4096,4096,4096") from None
        if len(dims) == 1:
            dims *= 3
        if len(dims) != 3 or min(dims) <= 0:
            raise ValueError(f"shape {text!r}: expected three positive integers M,N,K")
        return cls(*dims)


# ------------------------------------------------------------------------------------------ dtypes
def dtype_name(dtype) -> str | None:
    """'fp16' / 'bf16' / 'fp32' for a torch dtype or one of those names (also 'float16', 'half', ...);
    None for anything else."""
    if isinstance(dtype, str):
        return _ALIASES.get(dtype.strip().lower())
    return _NAMES.get(str(dtype).rpartition(".")[2]) if type(dtype).__name__ == "dtype" else None


def torch_dtype(name: str):
    """'fp16' -> torch.float16, 'bf16' -> torch.bfloat16, 'fp32' -> torch.float32."""
    import torch

    return {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[name]


def out_dtype_name(out_dtype) -> str:
    """The C type an ``out_dtype=`` asks for (None: fp32); InputError for anything but fp32/fp16/bf16."""
    if out_dtype is None:
        return "fp32"
    name = dtype_name(out_dtype)
    if name not in C_DTYPES:
        raise InputError(f"out_dtype={out_dtype!r}: C is torch.float32 (the default), torch.float16 or "
                         f"torch.bfloat16 (fp32 accumulate, rounded once on the way out)")
    return name


# ------------------------------------------------------------------------------------------ layouts
def _row_major(t) -> bool:
    """Rows contiguous, one after the other. Strides of an extent of 1 do not matter (torch normalises
    them freely, and the compiled entry skips them too), nor any stride of an empty tensor."""
    rows, cols = t.shape
    s0, s1 = t.stride()
    return rows * cols == 0 or ((cols <= 1 or s1 == 1) and (rows <= 1 or s0 == cols))


def _col_major(t) -> bool:
    """Columns contiguous, one after the other (the transpose of a contiguous tensor)."""
    rows, cols = t.shape
    s0, s1 = t.stride()
    return rows * cols == 0 or ((rows <= 1 or s0 == 1) and (cols <= 1 or s1 == rows))


def fast_majors(a, b) -> tuple[str, str]:
    """The majors a call's cheap key stands for (``plan.run``'s fast path): A "k" when it is contiguous
    (row-major; torch ignores the strides of an extent of 1, as ``_row_major`` does), else "m"; B "n" when
    it is contiguous, else "k". The compiled entry checks the rest (that the other major really is
    contiguous); ``validate_call`` decides a tensor that is both."""
    return ("k" if a.is_contiguous() else "m"), ("n" if b.is_contiguous() else "k")


_WHAT = {("A", "k"): "row-major [M,K] (K contiguous)",
         ("A", "m"): "column-major [M,K] (M contiguous, x.t() of a [K,M])",
         ("B", "n"): "row-major [K,N] (N contiguous)",
         ("B", "k"): "column-major [K,N] (K contiguous, w.t() of a [N,K] weight)"}


def misaligned(p: "Problem", ops: Operands) -> list[str]:
    """Each extent that must be a multiple of 8 and is not, with the tensors whose rows it is."""
    owners = {"M": [], "N": [], "K": []}
    owners[ops.a_major.upper()].append(f"A, {_WHAT[('A', ops.a_major)]}")
    owners[ops.b_major.upper()].append(f"B, {_WHAT[('B', ops.b_major)]}")
    owners["N"].append("C, row-major [M,N]")
    why = []
    for name, v, d in zip("MNK", (p.m, p.n, p.k), row_alignment(ops)):
        if v % d:
            why.append(f"{name}={v} must be a multiple of {d}: it is the contiguous extent of "
                       f"{' and of '.join(owners[name])}, whose rows TMA moves in 16-byte units (8 elements of a "
                       f"16-bit type{'; an fp32 C is held to the same 8' if name == 'N' and ops.c == 'fp32' else ''})")
    return why


def validate_call(a, b, c=None, out_dtype=None, gated=False) -> tuple[Problem, Operands]:
    """Check the tensors of a call -- types, dtypes, device, shapes, majors, alignment, ``out`` -- and return
    the problem and the operands they pose; one ``InputError`` for the first thing wrong. ``gated``: the gated
    pairs' call, whose C is [M, N/2] (``out`` that shape, N a multiple of 16 so that C's rows are 16-byte rows)."""
    import torch

    def need(cond, msg):
        if not cond:
            raise InputError(msg)

    for name, t in (("A", a), ("B", b)):
        need(isinstance(t, torch.Tensor), f"{name} must be a torch.Tensor, got {type(t).__name__}")
        need(t.dim() == 2, f"{name} must be 2-D, got shape {tuple(t.shape)}")
        need(dtype_name(t.dtype) in AB_DTYPES,
             f"{name} must be torch.float16 or torch.bfloat16, got {t.dtype} (A and B are 16-bit, the accumulation "
             f"fp32; convert with .half() or .bfloat16())")
    need(a.dtype == b.dtype, f"A is {a.dtype} and B is {b.dtype}: A and B must share one dtype (fp16 or bf16)")
    for name, t in (("A", a), ("B", b)):
        need(t.is_cuda, f"{name} must be on a CUDA device, got {t.device}")
    need(a.device == b.device, f"A and B are on different devices ({a.device}, {b.device})")
    m, k = a.shape
    k2, n = b.shape
    need(k == k2, f"inner dimensions differ: A is {m}x{k}, B is {k2}x{n}")
    p = Problem(m, n, k)
    n_c = n // 2 if gated else n  # C's columns
    if gated:
        need(n % 16 == 0, f"gated=True: N={n} must be a multiple of 16 -- B's columns are (gate, up) pairs and C "
                          f"[M, N/2] = [{m}, {n / 2:g}] has rows of N/2 elements, which TMA and the 16-byte vectors "
                          f"move in units of 8")

    # C: its type from out, or out_dtype, or fp32
    if c is not None:
        need(isinstance(c, torch.Tensor), f"out must be a torch.Tensor, got {type(c).__name__}")
        c_name = dtype_name(c.dtype)
        need(c_name in C_DTYPES, f"out (C) must be torch.float32, torch.float16 or torch.bfloat16, got {c.dtype}")
        if out_dtype is not None:
            need(dtype_name(out_dtype) == c_name,
                 f"out is {c.dtype} but out_dtype={out_dtype}: C's type is out's, give one of them")
        half = " (gated=True: C [M, N/2], one column per (gate, up) pair of B)" if gated else ""
        need(c.dim() == 2 and tuple(c.shape) == (m, n_c), f"out (C) must be {m}x{n_c}{half}, got {tuple(c.shape)}")
        need(c.device == a.device, f"out (C) is on {c.device}, A on {a.device}")
        need(_row_major(c), f"out (C) must be row-major contiguous [M,N] (stride ({n_c}, 1)), got stride {c.stride()}")
    else:
        c_name = out_dtype_name(out_dtype)

    # the majors: a tensor with an extent of 1 is both; take the first pair that makes the call legal
    majors_a = [mj for mj, ok in (("k", _row_major(a)), ("m", _col_major(a))) if ok]
    majors_b = [mj for mj, ok in (("n", _row_major(b)), ("k", _col_major(b))) if ok]
    need(majors_a, f"A [M,K] must be row-major (stride ({k}, 1)) or column-major (stride (1, {m}), the .t() of a "
                   f"contiguous [K,M]), got stride {a.stride()}: .contiguous() makes it row-major")
    need(majors_b, f"B [K,N] must be row-major (stride ({n}, 1)) or column-major (stride (1, {k}), the .t() of a "
                   f"contiguous [N,K] such as an nn.Linear weight), got stride {b.stride()}: .contiguous() makes it "
                   f"row-major")
    pairs = [Operands(dtype_name(a.dtype), c_name, ma, mb) for ma in majors_a for mb in majors_b]
    ops = next((o for o in pairs if not misaligned(p, o)), pairs[0])
    why = misaligned(p, ops)
    need(not why, f"{ops.label()}: " + "; ".join(why))
    for name, t in (("A", a), ("B", b), ("out (C)", c)):
        need(t is None or t.data_ptr() % 16 == 0, f"{name}'s data pointer must be 16-byte aligned (TMA)")
    if c is not None:
        for name, t in (("A", a), ("B", b)):
            need(not overlaps(c, t), f"out (C) overlaps {name} in memory: the kernel reads {name} while it writes C, "
                                     f"so C = A @ B cannot be computed in place; give out a tensor of its own")
    return p, ops


def overlaps(x, y) -> bool:
    """Whether two dense tensors (row- or column-major, as ``validate_call`` admits) share any byte."""
    x0, y0 = x.data_ptr(), y.data_ptr()
    return x0 < y0 + y.numel() * y.element_size() and y0 < x0 + x.numel() * x.element_size() and x.numel() * y.numel() > 0


def validate(a, b, c=None, out_dtype=None) -> Problem:
    """``validate_call``'s problem alone."""
    return validate_call(a, b, c, out_dtype)[0]


# ------------------------------------------------------------------------------------------ the fused epilogue


def activation_name(activation) -> str:
    """'none', 'relu', 'gelu' or 'silu' for an ``activation=`` argument (None: 'none'); InputError for anything
    else, listing the names."""
    if activation is None:
        return "none"
    if isinstance(activation, str) and activation in ACTIVATIONS:
        return activation
    raise InputError(f"activation={activation!r}: one of None or 'none' (no activation), 'relu', 'gelu' (the "
                     f"tanh form, F.gelu(approximate='tanh')), 'silu'")


def same_memory(x, y) -> bool:
    """Whether two tensors are one view of the same memory (pointer, dtype, shape and strides): ``residual=out``."""
    return (x is y or (x.data_ptr() == y.data_ptr() and x.dtype == y.dtype and tuple(x.shape) == tuple(y.shape)
                       and x.stride() == y.stride()))


def validate_epilogue(p: Problem, ops: Operands, a, b, out, bias=None, residual=None, gated=False) -> None:
    """Check a fused epilogue's tensors against a call ``validate_call`` passed: ``bias`` a contiguous [N] of A's
    dtype, ``residual`` a row-major [M, N] of C's dtype ([M, N/2] with ``gated``: C's shape) -- each on A's device,
    16-byte aligned -- the residual ``out`` itself or apart from out, A and B, and out apart from the bias (the
    kernel reads them while it writes C); one ``InputError`` for the first thing wrong."""
    import torch

    def need(cond, msg):
        if not cond:
            raise InputError(msg)

    if bias is not None:
        need(isinstance(bias, torch.Tensor), f"bias must be a torch.Tensor, got {type(bias).__name__}")
        need(bias.dim() == 1 and bias.shape[0] == p.n, f"bias must be 1-D [N] = ({p.n},), got shape "
                                                       f"{tuple(bias.shape)}")
        need(bias.dtype == a.dtype, f"bias is {bias.dtype} but A is {a.dtype}: the bias takes A's dtype (as "
                                    f"F.linear's takes x's); cast it: bias.to({a.dtype})")
        need(bias.device == a.device, f"bias is on {bias.device}, A on {a.device}")
        need(p.n <= 1 or bias.stride(0) == 1, f"bias must be contiguous (stride (1,)), got stride {bias.stride()}")
        need(bias.data_ptr() % 16 == 0, "bias's data pointer must be 16-byte aligned (the epilogue loads 16-byte "
                                        "C vectors' bias in one load)")
        need(out is None or not overlaps(out, bias),
             "out (C) overlaps bias in memory: the kernel reads the bias while it writes C; give out a tensor of "
             "its own")
    if residual is not None:
        c_dtype = torch_dtype(ops.c)
        need(isinstance(residual, torch.Tensor), f"residual must be a torch.Tensor, got {type(residual).__name__}")
        n_c = p.n // 2 if gated else p.n
        need(residual.dim() == 2 and tuple(residual.shape) == (p.m, n_c),
             f"residual must be [M, {'N/2' if gated else 'N'}] = ({p.m}, {n_c}) as C is, got shape "
             f"{tuple(residual.shape)}")
        need(residual.dtype == c_dtype, f"residual is {residual.dtype} but C is {c_dtype}: the residual takes C's "
                                        f"dtype (out's, or out_dtype, default torch.float32)")
        need(residual.device == a.device, f"residual is on {residual.device}, A on {a.device}")
        need(_row_major(residual), f"residual must be row-major contiguous [M,N] (stride ({n_c}, 1)) as C is, got "
                                   f"stride {residual.stride()}")
        need(residual.data_ptr() % 16 == 0, "residual's data pointer must be 16-byte aligned (16-byte vectors)")
        if out is not None and not same_memory(residual, out):
            need(not overlaps(residual, out), "residual overlaps out (C) in part: give out itself (each element "
                                              "is read before it is written, by the same thread) or a tensor apart")
        for name, t in (("A", a), ("B", b)):
            need(not overlaps(residual, t), f"residual overlaps {name} in memory: give a tensor of its own")


def activate(y, activation: str):
    """``activation`` of a tensor by torch ops, the epilogue's math: relu, gelu's tanh form
    (``F.gelu(approximate="tanh")``), silu (x sigmoid(x), which the kernel computes as x/2 (1 + tanh(x/2)));
    'none' returns ``y``. Differentiable (``linear``'s autograd records it)."""
    if activation == "none":
        return y
    import torch.nn.functional as F

    if activation == "relu":
        return F.relu(y)
    if activation == "gelu":
        return F.gelu(y, approximate="tanh")
    if activation == "silu":
        return F.silu(y)
    raise InputError(activation_name(activation))  # an unknown name: activation_name says which


def gate_product(z, activation: str):
    """The gated pairs by torch ops: ``act(z[..., 0::2]) * z[..., 1::2]`` -- z's columns interleaved (gate 0, up 0,
    gate 1, up 1, ...), the result half as wide (SwiGLU with silu, GeGLU with gelu, the plain product with 'none').
    Differentiable (``gated_linear``'s autograd records it)."""
    return activate(z[..., 0::2], activation) * z[..., 1::2]
