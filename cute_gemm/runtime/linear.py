"""``cute_gemm.linear``'s eager path: ``torch.nn.functional.linear``'s meaning on the ladder's kernels.

``linear(x, w, bias)`` is ``x @ w.T + bias`` for x [..., K] and an ``nn.Linear`` weight w [N, K]: the
leading dims of x are flattened into M (a view, no copy, whenever x's layout allows it), ``w.t()`` is
B [K, N] column-major -- the "nt" layout, read in place -- and the output [..., N] is in x's dtype unless
``out_dtype`` says otherwise. ``run`` is the eager call (``gemm()``'s plans); the public
``cute_gemm.linear`` (``runtime.gemm.linear``) switches to the custom op ``torch.ops.cute_gemm.linear``
under ``torch.compile``, whose implementation is ``run`` again, so it is a drop-in inside a model's
forward, compiled or captured in a CUDA graph (warm it once before capturing: the first call of a plan
compiles).

The bias is added after the GEMM by one in-place torch op, not in the kernels' epilogue: see
``cute_gemm.linear``'s docstring for why.
"""

from __future__ import annotations

from cute_gemm.errors import InputError
from cute_gemm.runtime import plan

_IN_DTYPES: frozenset = frozenset()  # torch.float16, torch.bfloat16 once torch is loaded


def run(x, w, bias=None, phase="best", out_dtype=None):
    """``linear`` run eagerly (the torch op's implementation too)."""
    global _IN_DTYPES
    if not _IN_DTYPES:
        import torch

        _IN_DTYPES = frozenset((torch.float16, torch.bfloat16))
    try:
        n, k = w.shape
        ok = x.shape[-1] == k
    except (AttributeError, TypeError, ValueError, IndexError):
        ok = False
    if not ok:
        raise InputError(f"linear takes x [..., K] and w [N, K] (torch tensors), got x {_shape(x)} and w {_shape(w)}")
    if x.dtype != w.dtype or x.dtype not in _IN_DTYPES:
        raise InputError(f"x is {x.dtype} and w is {w.dtype}: both must be torch.float16 or both torch.bfloat16 "
                         f"(fp32 accumulate; out_dtype= sets the output's type)")
    if bias is not None:
        _check_bias(bias, n, x)
    lead = x.shape[:-1]
    a = x if x.dim() == 2 else x.reshape(-1, k)
    try:
        y = plan.run(a, w.t(), phase, None, None, None, x.dtype if out_dtype is None else out_dtype)
    except InputError as exc:  # said of the GEMM's A and B: name them
        raise InputError(f"linear(x, w): {exc} (A is x as [M,K] = x.reshape(-1, K), B is w.t())") from exc
    if bias is not None:
        y.add_(bias)
    return y if x.dim() == 2 else y.view(*lead, n)


def _check_bias(bias, n, x):
    import torch

    if not isinstance(bias, torch.Tensor) or tuple(bias.shape) != (n,):
        raise InputError(f"bias must be a tensor of shape ({n},) (w's N), got {_shape(bias)}")
    if bias.dtype not in (torch.float16, torch.bfloat16, torch.float32):
        raise InputError(f"bias must be torch.float16, torch.bfloat16 or torch.float32, got {bias.dtype}")
    if bias.device != x.device:
        raise InputError(f"bias is on {bias.device}, x on {x.device}")


def _shape(t) -> str:
    shape = getattr(t, "shape", None)
    return f"shape {tuple(shape)}" if shape is not None else f"a {type(t).__name__}"
