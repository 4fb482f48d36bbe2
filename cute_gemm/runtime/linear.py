"""``cute_gemm.linear``'s eager path: ``torch.nn.functional.linear``'s meaning on the ladder's kernels, its
two backward GEMMs, and the checks F.linear makes.

The forward, ``run``: ``linear(x, w, bias)`` is ``x @ w.T + bias`` for x [..., K] and an ``nn.Linear``
weight w [N, K]: the leading dims of x are flattened into M (a view, no copy, whenever x's layout allows
it), ``w.t()`` is B [K, N] column-major -- the "nt" layout, read in place -- and the output [..., N] is in
x's dtype unless ``out_dtype`` says otherwise. With an ``activation`` (and phase "best" or "11") the bias and the
activation run in the fused epilogue, one kernel; a bias alone with "best" too where the time model says that
pays (``fuses_bias``); otherwise the bias is added after the GEMM by one in-place torch op and an activation
applied by torch: see ``cute_gemm.linear``'s docstring for why. ``run_gated`` is
``gated_linear``'s: the weight's rows interleaved (gate, up) pairs, one kernel with the gated pairs writing [..., N/2].

The backward, for T tokens (x as [T, K]) and dY [T, N], is two more GEMMs of the same kernels, each in a
layout the ladder takes without a copy:

    dX = dY @ W      grad_input:  A = dY [T, N] row-major, B = W [N, K] row-major        ("nn")
    dW = dY^T @ X    grad_weight: A = dY.t() [N, T] column-major, B = X [T, K] row-major ("tn")

(dW's contiguous extents are N and K, so T -- the GEMM's K there -- may be anything, 1 or 1000.) The bias'
gradient is dY summed over the tokens, a torch reduction. ``cute_gemm.linear`` wires them into autograd
(``torch_ops``: an ``autograd.Function`` eagerly, the custom op's registered autograd under
``torch.compile``).

``autocast`` gives F.linear's casts under ``torch.autocast``; ``check`` is what F.linear refuses (and
what the kernels cannot take), in one line each, before anything compiles or launches -- the custom op's
fake implementation runs it too, so ``torch.compile`` refuses the same input while it traces.
"""

from __future__ import annotations

from cute_gemm.errors import InputError
from cute_gemm.runtime import plan
from cute_gemm.runtime.problem import activate, activation_name, gate_product

_IN_DTYPES: frozenset = frozenset()  # torch.float16, torch.bfloat16 once torch is loaded


def _in_dtypes() -> frozenset:
    global _IN_DTYPES
    if not _IN_DTYPES:
        import torch

        _IN_DTYPES = frozenset((torch.float16, torch.bfloat16))
    return _IN_DTYPES


def check(x, w, bias=None) -> tuple[int, int]:
    """(N, K) of ``linear(x, w, bias)``, or the ``InputError`` F.linear would raise -- shapes, x and w of one
    16-bit dtype, a bias [N] of x's dtype -- or the kernels would (fp32 x and w); the device is the GEMM's
    to check."""
    try:
        n, k = w.shape
        ok = x.shape[-1] == k
    except (AttributeError, TypeError, ValueError, IndexError):
        ok = False
    if not ok:
        raise InputError(f"linear takes x [..., K] and w [N, K] (torch tensors), got x {_shape(x)} and w {_shape(w)}")
    if x.dtype != w.dtype or x.dtype not in _in_dtypes():
        raise InputError(f"x is {x.dtype} and w is {w.dtype}: both must be torch.float16 or both torch.bfloat16, "
                         f"as F.linear takes x and w of one dtype (under torch.autocast both are cast; fp32 "
                         f"accumulate; out_dtype= sets the output's type)")
    if bias is not None:
        _check_bias(bias, n, x)
    return n, k


def fuses(phase, activation: str) -> bool:
    """Whether ``linear`` runs the bias and the activation in the kernel's epilogue: an activation, and a phase that
    has the epilogue ("best": its epilogue pick, or "11")."""
    return activation != "none" and str(phase) in ("best", "11")


def fuses_bias(a, w, bias, phase, dtype, activation: str) -> bool:
    """Whether ``linear`` adds a bias alone (no activation) in the kernel's epilogue: with "best" where the model says
    the fused pick is no slower than the plain pick and the add after it (``plan.bias_fuses``)."""
    return bias is not None and activation == "none" and str(phase) == "best" and plan.bias_fuses(a, w.t(), dtype)


def run(x, w, bias=None, phase="best", out_dtype=None, activation="none"):
    """``linear`` run eagerly, forward only (the torch op's implementation too): act(x @ w.T + bias). With an
    activation and a phase that has the fused epilogue (``fuses``) one kernel, phase 11, adds the bias and applies
    the activation before the rounding; else the GEMM's output gets the bias by one in-place add and the
    activation by torch ops. A bias alone with "best" is fused where the model says it pays (``fuses_bias``)."""
    activation = "none" if activation is None else activation_name(activation)
    n, k = check(x, w, bias)
    lead = x.shape[:-1]
    a = x if x.dim() == 2 else x.reshape(-1, k)
    dtype = x.dtype if out_dtype is None else out_dtype
    try:
        if fuses(phase, activation) or fuses_bias(a, w, bias, phase, dtype, activation):
            y = plan.run_epilogue(a, w.t(), phase, None, None, None, dtype, bias, activation, None)
            bias = None  # added by the kernel
        else:
            y = plan.run(a, w.t(), phase, None, None, None, dtype)
    except InputError as exc:  # said of the GEMM's A and B: name them
        raise InputError(f"linear(x, w): {exc} (A is x as [M,K] = x.reshape(-1, K), B is w.t())") from exc
    if bias is not None:
        y.add_(bias)
    if activation != "none" and not fuses(phase, activation):
        y = activate(y, activation)
    return y if x.dim() == 2 else y.view(*lead, n)


def check_gated(x, w, bias=None) -> tuple[int, int]:
    """``check`` for ``gated_linear``: (N, K) with N = 2 * N_out, and N a multiple of 16 (N/2 output columns in
    16-byte rows); InputError otherwise."""
    n, k = check(x, w, bias)
    if n % 16:
        raise InputError(f"gated_linear: w_gate_up has {n} rows = 2 x {n / 2:g} (interleaved gate, up pairs); that "
                         f"must be a multiple of 16 (the output's {n / 2:g} columns are 16-byte rows of 8)")
    return n, k


def run_gated(x, w, bias=None, phase="best", out_dtype=None, activation="silu"):
    """``gated_linear`` run eagerly, forward only (the op's implementation too): act(z[..., 0::2]) * z[..., 1::2] for
    z = x @ w.T + bias, w's rows interleaved (gate, up). With phase "best" or "11" one kernel with the gated
    pairs (z never leaves the registers); another phase: ``run`` (z in the output's dtype), then the pair by torch
    ops."""
    activation = "none" if activation is None else activation_name(activation)
    n, k = check_gated(x, w, bias)
    if str(phase) not in ("best", plan.EPILOGUE_PHASE):
        return gate_product(run(x, w, bias, phase, out_dtype), activation)
    lead = x.shape[:-1]
    a = x if x.dim() == 2 else x.reshape(-1, k)
    dtype = x.dtype if out_dtype is None else out_dtype
    try:
        y = plan.run_epilogue(a, w.t(), phase, None, None, None, dtype, bias, activation, None, True)
    except InputError as exc:  # said of the GEMM's A and B: name them
        raise InputError(f"gated_linear(x, w_gate_up): {exc} (A is x as [M,K] = x.reshape(-1, K), B is "
                         f"w_gate_up.t())") from exc
    return y if x.dim() == 2 else y.view(*lead, n // 2)


def grad_input(dy, w, phase="best"):
    """dX = dY @ W: dy [..., N] (x's dtype), w [N, K] -> [..., K] in w's dtype (the "nn" GEMM; dy is made
    row-major only if it is not: autograd may hand an expanded or strided gradient)."""
    n, k = w.shape
    lead = dy.shape[:-1]
    d = _rows(dy, n)
    try:
        g = plan.run(d, w, phase, None, None, None, w.dtype)
    except InputError as exc:
        raise InputError(f"linear backward dX = dY @ W: {exc}") from exc
    return g.view(*lead, k)


def grad_weight(dy, x, phase="best"):
    """dW = dY^T @ X: dy [..., N], x [..., K] (one dtype) -> [N, K] in x's dtype (the "tn" GEMM: A =
    dY.t() column-major, B = x as [T, K] row-major, both read in place)."""
    try:
        return plan.run(*_dw_operands(dy, x), phase, None, None, None, x.dtype)
    except InputError as exc:
        raise InputError(f"linear backward dW = dY^T @ X: {exc}") from exc


def accumulate_grad_weight(dy, x, grad, phase="best") -> bool:
    """``grad`` += dY^T @ X in place (the "tn" GEMM with the accumulate epilogue: ``gemm(..., out=grad,
    accumulate=True)``, the TMA's reduce-add, one pass over ``grad``), True when done; False when the kernels cannot
    add into this ``grad`` (another shape or a strided one, a ladder without the accumulate epilogue -- sm100 -- a
    phase without it): the caller then computes dW as usual and autograd adds it."""
    from cute_gemm.errors import UnsupportedError

    if tuple(grad.shape) != (dy.shape[-1], x.shape[-1]) or not grad.is_contiguous() or grad.device != x.device:
        return False
    try:
        plan.run(*_dw_operands(dy, x), phase, grad, None, None, None, True)
    except (InputError, UnsupportedError):
        return False
    return True


def _dw_operands(dy, x):
    """(A, B) of dW = dY^T @ X: dY.t() column-major ([N, T], dy made row-major first only if it is not) and x as a
    row-major [T, K] -- both read in place."""
    k = x.shape[-1]
    return _rows(dy, dy.shape[-1]).t(), (x if x.dim() == 2 else x.reshape(-1, k))


def _rows(dy, n):
    """dy as a row-major [T, N] (a view when it is one already)."""
    d = dy.reshape(-1, n)
    return d if d.is_contiguous() else d.contiguous()


def autocast(x, w, bias=None):
    """(x, w, bias) as F.linear sees them under ``torch.autocast`` of x's device type: each floating tensor
    cast to the autocast dtype when that is fp16 or bf16 (the casts are autograd's, so an fp32 master
    weight gets its fp32 gradient); unchanged outside autocast."""
    import torch

    dev = getattr(x, "device", None)
    if dev is None or not isinstance(w, torch.Tensor) or not torch.is_autocast_enabled(dev.type):
        return x, w, bias
    dt = torch.get_autocast_dtype(dev.type)
    if dt not in _in_dtypes():
        return x, w, bias

    def cast(t):
        return t.to(dt) if isinstance(t, torch.Tensor) and t.dtype in (torch.float32, torch.float16,
                                                                          torch.bfloat16) else t

    return cast(x), cast(w), cast(bias)


def wants_grad(x, w, bias=None) -> bool:
    """True when autograd records the call: grad mode on and any of x, w, bias requiring grad."""
    import torch

    return torch.is_grad_enabled() and any(isinstance(t, torch.Tensor) and t.requires_grad for t in (x, w, bias))


def _check_bias(bias, n, x):
    import torch

    if not isinstance(bias, torch.Tensor) or tuple(bias.shape) != (n,):
        raise InputError(f"bias must be a tensor of shape ({n},) (w's N), got {_shape(bias)}")
    if bias.dtype != x.dtype:
        raise InputError(f"bias is {bias.dtype} but x is {x.dtype}: F.linear takes a bias of x's dtype "
                         f"(cast it: bias.to({x.dtype}))")
    if bias.device != x.device:
        raise InputError(f"bias is on {bias.device}, x on {x.device}")


def _shape(t) -> str:
    shape = getattr(t, "shape", None)
    return f"shape {tuple(shape)}" if shape is not None else f"a {type(t).__name__}"
