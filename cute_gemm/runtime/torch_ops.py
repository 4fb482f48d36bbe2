"""The phases as torch custom ops, for ``torch.compile`` (``fullgraph=True`` too) and CUDA graphs, and
``cute_gemm.linear``'s autograd.

    torch.ops.cute_gemm.gemm(a, b, "5")                    # -> new fp32 C [M, N]
    torch.ops.cute_gemm.gemm(a, b, "5", torch.bfloat16)    # -> new bf16 C
    torch.ops.cute_gemm.gemm_out(a, b, c, "5")             # writes c in place (its dtype is C's)
    torch.ops.cute_gemm.gemm_epilogue(a, b, bias, residual, "gelu", "best", None)  # act(A @ B + bias) + residual
    torch.ops.cute_gemm.gemm_epilogue(a, b, bias, None, "silu", "best", None, True)  # gated pairs: C [M, N/2]
    torch.ops.cute_gemm.linear(x, w, bias, "best", None)   # F.linear's meaning (cute_gemm.linear), trainable
    torch.ops.cute_gemm.linear(x, w, bias, "best", None, "gelu")  # ... with the activation fused (inference)
    torch.ops.cute_gemm.linear_dx(dy, w, "best")           # its backward's dX = dY @ W
    torch.ops.cute_gemm.linear_dw(dy, x, "best")           # and dW = dY^T @ X
    torch.ops.cute_gemm.gated_linear(x, w, bias, "best", None, "silu")  # cute_gemm.gated_linear: [..., N/2]

They run the same compiled kernels as ``cute_gemm.gemm`` / ``cute_gemm.linear`` (default config, the
device's ladder, the operands read from the tensors), through the plans (``plan.run``, imported by the
first call: registering the ops costs torch's registration only). Their fake (meta) implementations only
describe the output -- shape and dtype -- so the compiler traces through them without a GPU call (the
linear op's runs ``linear.check`` too: input F.linear refuses is refused while tracing);
``cute_gemm.gemm`` and ``cute_gemm.linear`` switch to these ops while ``torch.compile`` traces them. Eager
calls skip the op boundary (it costs tens of microseconds of dispatch per call).

Autograd: one ``setup_context`` / ``backward`` pair serves both paths -- ``LinearFunction`` (a
``torch.autograd.Function``, what an eager ``cute_gemm.linear`` applies when grad is recorded) and the
linear op's ``torch.library.register_autograd`` (what AOTAutograd traces under ``torch.compile``). The
backward computes only what ``needs_input_grad`` asks: dX and dW with the kernels (the forward's
``phase``: "best" picks per shape and layout), db as dY summed over tokens; it saves x only when w needs
a gradient and w only when x does. While traced it calls ``linear_dx`` / ``linear_dw`` (the transposes
and flattening stay inside the ops, so the compiler cannot hand the kernels other strides), eagerly their
Python bodies. The gated_linear op's registered autograd recomputes z = x @ w.T + b with the linear op
(one more GEMM) and takes the pair's derivative by aten ops; ``cute_gemm.gated_linear`` itself never records the
op (under autograd it keeps z instead, as ``linear`` with an activation does). Gradient accumulation into an
existing ``w.grad`` is autograd's: dW is a new tensor that
autograd adds to ``w.grad`` (one more pass over it); an epilogue that adds into C (``C += A @ B``) is the
remaining step.

The ops take tensors of every device type, so CPU tensors get the same ``InputError`` as
``cute_gemm.gemm`` ("A must be on a CUDA device") rather than torch's dispatcher error. They are
registered when this module is imported; ``import cute_gemm`` imports it if torch is already loaded,
and ``cute_gemm.gemm`` does on first use under ``torch.compile`` or with autograd.
"""

from __future__ import annotations

from typing import Optional

import torch


def _run(a, b, phase, out=None, out_dtype=None):
    from cute_gemm.runtime import plan

    return plan.run(a, b, phase, out, None, None, out_dtype)


@torch.library.custom_op("cute_gemm::gemm", mutates_args=())
def gemm(a: torch.Tensor, b: torch.Tensor, phase: str = "5", out_dtype: Optional[torch.dtype] = None) -> torch.Tensor:
    """C = A @ B (A [M,K], B [K,N], fp16 or bf16, each row- or column-major) with one phase's kernel; C
    [M,N] in ``out_dtype`` (default fp32)."""
    return _run(a, b, phase, None, out_dtype)


@gemm.register_fake
def _(a, b, phase="5", out_dtype=None):
    return a.new_empty((a.shape[0], b.shape[1]), dtype=out_dtype or torch.float32)


@torch.library.custom_op("cute_gemm::gemm_out", mutates_args=("out",))
def gemm_out(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, phase: str = "5") -> None:
    """``gemm`` into an existing [M,N] tensor (fp32, fp16 or bf16: C's type)."""
    _run(a, b, phase, out)


@gemm_out.register_fake
def _(a, b, out, phase="5"):
    return None


@torch.library.custom_op("cute_gemm::gemm_epilogue", mutates_args=())
def gemm_epilogue(a: torch.Tensor, b: torch.Tensor, bias: Optional[torch.Tensor] = None,
                  residual: Optional[torch.Tensor] = None, activation: str = "none", phase: str = "best",
                  out_dtype: Optional[torch.dtype] = None, gated: bool = False) -> torch.Tensor:
    """C = act(A @ B + bias) + residual (``cute_gemm.gemm``'s fused epilogue: phase 11, or "best") -> a new C [M,N]
    in ``out_dtype`` (default fp32); ``gated``: C [M, N/2] of B's (gate, up) column pairs. No autograd (as
    ``gemm``'s)."""
    from cute_gemm.runtime import plan

    return plan.run_epilogue(a, b, phase, None, None, None, out_dtype, bias, activation, residual, gated)


@gemm_epilogue.register_fake
def _(a, b, bias=None, residual=None, activation="none", phase="best", out_dtype=None, gated=False):
    _check_epilogue_meta(a, b, bias, residual, activation, out_dtype or torch.float32, gated)
    return a.new_empty((a.shape[0], b.shape[1] // 2 if gated else b.shape[1]), dtype=out_dtype or torch.float32)


def _check_epilogue_meta(a, b, bias, residual, activation, c_dtype, gated=False):
    """What the fake implementation can refuse while tracing (no data): the activation's name, the bias' and the
    residual's shapes and dtypes, N a multiple of 16 for the gated pairs (the eager checks say the rest)."""
    from cute_gemm.errors import InputError
    from cute_gemm.runtime.problem import activation_name

    activation_name(activation)
    m, n = a.shape[0], b.shape[1]
    n_c = n // 2 if gated else n
    if gated and n % 16:
        raise InputError(f"gated=True: N={n} must be a multiple of 16 (C [M, N/2] has rows of 16 bytes' multiples)")
    if bias is not None and (tuple(bias.shape) != (n,) or bias.dtype != a.dtype):
        raise InputError(f"bias must be [N] = ({n},) of A's dtype {a.dtype}, got {tuple(bias.shape)} {bias.dtype}")
    if residual is not None and (tuple(residual.shape) != (m, n_c) or residual.dtype != c_dtype):
        raise InputError(f"residual must be [M, {'N/2' if gated else 'N'}] = ({m}, {n_c}) of C's dtype {c_dtype}, "
                         f"got {tuple(residual.shape)} {residual.dtype}")


@torch.library.custom_op("cute_gemm::linear", mutates_args=())
def linear(x: torch.Tensor, w: torch.Tensor, bias: Optional[torch.Tensor] = None, phase: str = "best",
           out_dtype: Optional[torch.dtype] = None, activation: str = "none") -> torch.Tensor:
    """``cute_gemm.linear``: act(x [..., K] @ w [N, K]^T (+ bias)) -> [..., N] in ``out_dtype`` (default x's). An
    ``activation`` other than "none" is fused (phase 11); its backward then recomputes z = x @ w.T + b (one more
    GEMM) -- ``cute_gemm.linear`` under autograd calls this op without it and applies the activation by torch ops,
    which keep z instead."""
    from cute_gemm.runtime import linear as _linear

    return _linear.run(x, w, bias, phase, out_dtype, activation)  # a new tensor


@linear.register_fake
def _(x, w, bias=None, phase="best", out_dtype=None, activation="none"):
    from cute_gemm.runtime import linear as _linear
    from cute_gemm.runtime.problem import activation_name

    _linear.check(x, w, bias)  # what F.linear refuses, refused while tracing
    activation_name(activation)
    return x.new_empty((*x.shape[:-1], w.shape[0]), dtype=out_dtype or x.dtype)


@torch.library.custom_op("cute_gemm::gated_linear", mutates_args=())
def gated_linear(x: torch.Tensor, w: torch.Tensor, bias: Optional[torch.Tensor] = None, phase: str = "best",
                 out_dtype: Optional[torch.dtype] = None, activation: str = "silu") -> torch.Tensor:
    """``cute_gemm.gated_linear``: act(z[..., 0::2]) * z[..., 1::2] for z = x [..., K] @ w [N, K]^T (+ bias), w's rows
    interleaved (gate, up) -> [..., N/2] in ``out_dtype`` (default x's), one fused kernel. Its backward recomputes
    z (one more GEMM); ``cute_gemm.gated_linear`` under autograd does not call this op (it keeps z instead)."""
    from cute_gemm.runtime import linear as _linear

    return _linear.run_gated(x, w, bias, phase, out_dtype, activation)


@gated_linear.register_fake
def _(x, w, bias=None, phase="best", out_dtype=None, activation="silu"):
    from cute_gemm.runtime import linear as _linear
    from cute_gemm.runtime.problem import activation_name

    _linear.check_gated(x, w, bias)  # what F.linear refuses and an odd pair count, refused while tracing
    activation_name(activation)
    return x.new_empty((*x.shape[:-1], w.shape[0] // 2), dtype=out_dtype or x.dtype)


@torch.library.custom_op("cute_gemm::linear_dx", mutates_args=())
def linear_dx(dy: torch.Tensor, w: torch.Tensor, phase: str = "best") -> torch.Tensor:
    """``linear``'s dX = dY @ W: dy [..., N], w [N, K] -> [..., K] in w's dtype."""
    from cute_gemm.runtime import linear as _linear

    return _linear.grad_input(dy, w, phase)


@linear_dx.register_fake
def _(dy, w, phase="best"):
    return dy.new_empty((*dy.shape[:-1], w.shape[1]), dtype=w.dtype)


@torch.library.custom_op("cute_gemm::linear_dw", mutates_args=())
def linear_dw(dy: torch.Tensor, x: torch.Tensor, phase: str = "best") -> torch.Tensor:
    """``linear``'s dW = dY^T @ X: dy [..., N], x [..., K] -> [N, K] in x's dtype."""
    from cute_gemm.runtime import linear as _linear

    return _linear.grad_weight(dy, x, phase)


@linear_dw.register_fake
def _(dy, x, phase="best"):
    return x.new_empty((dy.shape[-1], x.shape[-1]), dtype=x.dtype)


# ----------------------------------------------------------------------------------- linear's autograd
def setup_context(ctx, inputs, output):
    """Save what the backward needs: x only if w needs a gradient, w only if x does."""
    x, w, bias, phase, out_dtype = inputs[:5]
    need_x, need_w = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
    ctx.n_inputs, ctx.activation = len(inputs), (inputs[5] if len(inputs) > 5 else "none")
    if ctx.activation != "none":  # the op's fused activation: the backward recomputes z from all three
        ctx.save_for_backward(x, w, bias)
    else:
        ctx.save_for_backward(x if need_w else None, w if need_x else None)
    ctx.phase, ctx.x_dtype, ctx.out_dtype = phase, x.dtype, out_dtype
    ctx.bias_dtype = None if bias is None else bias.dtype


def setup_gated_context(ctx, inputs, output):
    """The gated_linear op's: x, w and bias saved (the backward recomputes z from all three)."""
    setup_context(ctx, inputs, output)
    ctx.gated = True
    ctx.save_for_backward(*inputs[:3])


def backward(ctx, dy):
    """(dX, dW, db, None, None): the kernels' GEMMs for what ``needs_input_grad`` asks, db a torch sum."""
    x, w = ctx.saved_tensors[:2]
    need_x, need_w, need_b = (tuple(ctx.needs_input_grad) + (False,) * 3)[:3]
    if getattr(ctx, "gated", False):
        dy = _gated_backward(ctx, dy, x, w, ctx.saved_tensors[2])
    elif getattr(ctx, "activation", "none") != "none":
        dy = _activation_backward(ctx, dy, x, w, ctx.saved_tensors[2])
    db = None
    if need_b and ctx.bias_dtype is not None:
        db = dy.reshape(-1, dy.shape[-1]).sum(0).to(ctx.bias_dtype)  # in dy's type (fp32 for an fp32 y)
    g = dy if dy.dtype == ctx.x_dtype else dy.to(ctx.x_dtype)  # out_dtype= gave y (and dY) another type
    if not getattr(ctx, "eager", False) and _traced(g):  # AOTAutograd traces this: the ops, whose fakes give shapes
        dx = torch.ops.cute_gemm.linear_dx(g, w, ctx.phase) if need_x else None
        dw = torch.ops.cute_gemm.linear_dw(g, x, ctx.phase) if need_w else None
    else:
        from cute_gemm.runtime import linear as _linear

        dx = _linear.grad_input(g, w, ctx.phase) if need_x else None
        into = _grad_into(ctx) if need_w else None
        if into is not None and _linear.accumulate_grad_weight(g, x, into, ctx.phase):
            dw = None  # added into w.grad in place: autograd has nothing left to add
        else:
            dw = _linear.grad_weight(g, x, ctx.phase) if need_w else None
    return (dx, dw, db) + (None,) * (getattr(ctx, "n_inputs", 5) - 3)


def _grad_into(ctx):
    """The weight's existing ``.grad`` where the call asked for dW to be added into it (``LinearIntoGradFunction``:
    ``linear(..., accumulate_grad=True)``) and there is one; else None (the first micro-batch's dW is a new tensor)."""
    weight = getattr(ctx, "weight", None)
    return None if weight is None else weight.grad


def _activation_backward(ctx, dy, x, w, bias):
    """dZ = dY * act'(z) for the op called with a fused activation (``cute_gemm.linear`` itself never records it:
    it saves z instead): z = x @ w.T + b recomputed by the op without the activation -- one more GEMM -- and the
    derivative by aten's own backward ops (traceable)."""
    z = torch.ops.cute_gemm.linear(x, w, bias, ctx.phase, ctx.out_dtype)
    g = dy.to(z.dtype)
    if ctx.activation == "relu":
        return torch.ops.aten.threshold_backward(g, z, 0)
    if ctx.activation == "gelu":
        return torch.ops.aten.gelu_backward(g, z, approximate="tanh")
    return torch.ops.aten.silu_backward(g, z)


def _gated_backward(ctx, dy, x, w, bias):
    """dZ for the gated_linear op: z = x @ w.T + b recomputed by the linear op (one more GEMM), then for each pair
    (g, u) = (z[..., 2j], z[..., 2j + 1]): dU = dY * act(g) and dG = act'(g) * dY * u (aten's backward ops,
    traceable), interleaved back into dZ [..., N]."""
    from cute_gemm.runtime.problem import activate

    z = torch.ops.cute_gemm.linear(x, w, bias, ctx.phase, ctx.out_dtype)
    g, u = z[..., 0::2], z[..., 1::2]
    dy = dy.to(z.dtype)
    d_up, d_act = dy * activate(g, ctx.activation), dy * u
    if ctx.activation == "relu":
        d_gate = torch.ops.aten.threshold_backward(d_act, g, 0)
    elif ctx.activation == "gelu":
        d_gate = torch.ops.aten.gelu_backward(d_act, g, approximate="tanh")
    elif ctx.activation == "silu":
        d_gate = torch.ops.aten.silu_backward(d_act, g)
    else:
        d_gate = d_act
    return torch.stack((d_gate, d_up), dim=-1).reshape(z.shape)


def _traced(t) -> bool:
    """True while the compiler traces (dynamo, or AOTAutograd's fake or functional tensors)."""
    from torch._subclasses.fake_tensor import is_fake

    return torch.compiler.is_compiling() or is_fake(t)


class LinearFunction(torch.autograd.Function):
    """``cute_gemm.linear`` as an eager autograd node: the forward is ``linear.run``, the backward the
    module's ``backward`` (the same as the custom op's registered autograd).

    The forward takes ``ctx`` and saves what the backward needs itself (``setup_context`` called from it), rather
    than declaring a separate ``setup_context``: with one declared, ``Function.apply`` binds its arguments to
    ``forward``'s signature through ``inspect`` on every call, a large share of the Python a training step's linear
    layer costs on the host (tests/test_autograd.py checks it is gone), which a step of small micro-batches waits
    for."""

    @staticmethod
    def forward(ctx, x, w, bias, phase, out_dtype):
        from cute_gemm.runtime import linear as _linear

        y = _linear.run(x, w, bias, phase, out_dtype)
        setup_context(ctx, (x, w, bias, phase, out_dtype), y)
        ctx.eager = True  # its backward is never traced (the compiler traces the op): no need to ask
        return y

    # the kernels' GEMMs record no history: a double backward (create_graph=True) is refused, not wrong
    backward = staticmethod(torch.autograd.function.once_differentiable(backward))


class LinearIntoGradFunction(LinearFunction):
    """``LinearFunction`` whose backward adds dW into the weight's existing ``.grad`` in place -- the accumulate
    epilogue, ``w.grad += dY^T @ X`` in one GEMM -- instead of returning a new dW for autograd to add (one more pass
    over ``w.grad``). Opt-in (``linear(..., accumulate_grad=True)``, ``cute_gemm.nn.Linear(accumulate_grad=True)``):
    the gradient then bypasses autograd's accumulation, so hooks on the weight (DDP's among them) see no gradient
    for it and ``torch.autograd.grad`` does not return it; use it with ``loss.backward()`` over micro-batches.
    Where the kernels cannot add (sm100, a weight that is not a leaf: autocast's cast of an fp32 master weight,
    a strided ``.grad``) the backward is ``LinearFunction``'s."""

    @staticmethod
    def forward(ctx, x, w, bias, phase, out_dtype):
        y = LinearFunction.forward(ctx, x, w, bias, phase, out_dtype)
        ctx.weight = w if w.is_leaf and w.requires_grad else None  # the Parameter whose .grad the backward reads
        return y


torch.library.register_autograd("cute_gemm::linear", backward, setup_context=setup_context)
torch.library.register_autograd("cute_gemm::gated_linear", backward, setup_context=setup_gated_context)


def call(a, b, phase="5", out=None, out_dtype=None):
    """``cute_gemm.gemm`` through the ops (what it runs while torch.compile traces it)."""
    if out is None:
        return torch.ops.cute_gemm.gemm(a, b, str(phase), _dtype(out_dtype))
    if out_dtype is not None and _dtype(out_dtype) != out.dtype:
        from cute_gemm.errors import InputError

        raise InputError(f"out is {out.dtype} but out_dtype={out_dtype}: C's type is out's, give one of them")
    torch.ops.cute_gemm.gemm_out(a, b, out, str(phase))
    return out


def call_linear(x, w, bias=None, phase="best", out_dtype=None, activation="none"):
    """``cute_gemm.linear`` through the op (differentiable: its registered autograd). With an ``activation``: the op
    fuses it where autograd records nothing; where it records, the op gives z = x @ w.T + b and the activation is
    torch's (its derivative from the saved z)."""
    if activation == "none":
        return torch.ops.cute_gemm.linear(x, w, bias, str(phase), _dtype(out_dtype))
    from cute_gemm.runtime import linear as _linear
    from cute_gemm.runtime.problem import activate

    if _linear.wants_grad(x, w, bias):
        return activate(torch.ops.cute_gemm.linear(x, w, bias, str(phase), _dtype(out_dtype)), activation)
    return torch.ops.cute_gemm.linear(x, w, bias, str(phase), _dtype(out_dtype), activation)


def call_epilogue(a, b, bias=None, residual=None, activation="none", phase="best", out_dtype=None, gated=False):
    """``cute_gemm.gemm`` with a fused epilogue through the op ``gemm_epilogue`` (under torch.compile)."""
    return torch.ops.cute_gemm.gemm_epilogue(a, b, bias, residual, activation, str(phase), _dtype(out_dtype),
                                             bool(gated))


def call_gated_linear(x, w, bias=None, phase="best", out_dtype=None, activation="silu"):
    """``cute_gemm.gated_linear`` through the ops (under torch.compile): the gated_linear op where autograd records
    nothing; where it records, the linear op's z and the pair by torch ops (torch's derivative from the saved z)."""
    from cute_gemm.runtime import linear as _linear
    from cute_gemm.runtime.problem import gate_product

    if _linear.wants_grad(x, w, bias):
        return gate_product(torch.ops.cute_gemm.linear(x, w, bias, str(phase), _dtype(out_dtype)), activation)
    return torch.ops.cute_gemm.gated_linear(x, w, bias, str(phase), _dtype(out_dtype), activation)


def apply_linear(x, w, bias=None, phase="best", out_dtype=None, accumulate_grad=False):
    """``cute_gemm.linear`` eagerly with autograd recording it (``LinearFunction``; with ``accumulate_grad``
    ``LinearIntoGradFunction``: dW added into an existing ``w.grad`` in place)."""
    fn = LinearIntoGradFunction if accumulate_grad else LinearFunction
    return fn.apply(x, w, bias, str(phase), _dtype(out_dtype))


def _dtype(out_dtype):
    """A torch dtype for the op's schema from a dtype or a name ('bf16'); None stays None."""
    if out_dtype is None or isinstance(out_dtype, torch.dtype):
        return out_dtype
    from cute_gemm.runtime.problem import out_dtype_name, torch_dtype

    return torch_dtype(out_dtype_name(out_dtype))
