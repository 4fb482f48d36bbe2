"""``cute_gemm.linear``'s autograd without a GPU: the GEMM (``plan.run``) is stubbed by a float64 matmul on
CPU tensors that records what it was handed, so the wiring is what is tested -- which GEMMs the backward
runs (only those ``needs_input_grad`` asks for), in which layout (dY row-major and W in place for dX;
dY.t() column-major and x in place for dW), in which dtypes -- against F.linear's gradients in float64,
eagerly, under ``torch.compile(fullgraph=True)`` (AOTAutograd's backward graph holds the ops
``linear_dx`` / ``linear_dw``) and under ``torch.autocast``; and the errors F.linear / autograd would give,
before any GEMM is called. The kernels' own numbers are tests/test_gpu_train.py's."""

import pytest
import torch
import torch.nn.functional as F

import cute_gemm
from cute_gemm import InputError
from cute_gemm.runtime import plan, torch_ops  # noqa: F401  (torch_ops registers the ops)


class StubGemm:
    """``plan.run``'s stand-in: C = A @ B in float64, rounded to C's type; records (A, B, phase, out_dtype)."""

    def __init__(self):
        self.calls = []

    def __call__(self, a, b, phase="5", out=None, config=None, arch=None, out_dtype=None):
        assert a.dtype == b.dtype and a.dtype in (torch.float16, torch.bfloat16), (a.dtype, b.dtype)
        assert a.is_contiguous() or a.t().is_contiguous(), "A must be row- or column-major"
        assert b.is_contiguous() or b.t().is_contiguous(), "B must be row- or column-major"
        self.calls.append((a, b, phase, out_dtype))
        return (a.double() @ b.double()).to(out_dtype or torch.float32)


@pytest.fixture
def gemm(monkeypatch):
    stub = StubGemm()
    monkeypatch.setattr(plan, "run", stub)
    return stub


def _leaves(lead=(2, 3), k=16, n=24, dtype=torch.bfloat16, bias=True, need=(True, True, True), seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(*lead, k, generator=g).to(dtype).requires_grad_(need[0])
    w = (torch.randn(n, k, generator=g) / k**0.5).to(dtype).requires_grad_(need[1])
    b = torch.randn(n, generator=g).to(dtype).requires_grad_(need[2]) if bias else None
    return x, w, b


def _reference(x, w, b, loss):
    """F.linear's gradients in float64 of the same leaves (None where a leaf needs none)."""
    leaves = [t.detach().double().requires_grad_(t.requires_grad) if t is not None else None for t in (x, w, b)]
    loss(F.linear(*leaves)).backward()
    return [t.grad if t is not None else None for t in leaves]


def _loss(y):
    return (y.float() * torch.linspace(-1, 1, y.shape[-1])).pow(2).sum()  # a dY that is no constant


def _rel(got, ref):
    return ((got.double() - ref).norm() / ref.norm()).item()


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_gradients_match_f_linear_in_float64(gemm, dtype, bias):
    x, w, b = _leaves(dtype=dtype, bias=bias)
    y = cute_gemm.linear(x, w, b)
    assert y.grad_fn is not None and y.shape == (2, 3, 24) and y.dtype == dtype
    _loss(y).backward()
    for got, ref in zip((x.grad, w.grad, b.grad if bias else None), _reference(x, w, b, _loss)):
        if ref is None:
            assert got is None
            continue
        assert got.dtype == dtype and got.shape == ref.shape
        assert _rel(got, ref) < 1e-2  # 16-bit rounding of y, dY and the gradients
    assert len(gemm.calls) == 3 and all(c[2] == "best" for c in gemm.calls)


def test_the_backward_gemms_read_their_operands_in_place(gemm):
    """dX = dY @ W: A = dY [T, N] row-major, B = w itself; dW = dY^T @ X: A = dY.t() (column-major, the
    same memory as dX's A), B = x as [T, K] (x's memory): no copies, C in the leaves' dtype."""
    x, w, b = _leaves(lead=(5, 7), k=32, n=16)
    _loss(cute_gemm.linear(x, w, b, phase="7")).backward()
    (fa, fb, _, _), (xa, xb, xphase, xdt), (wa, wb, wphase, wdt) = gemm.calls
    assert fa.data_ptr() == x.data_ptr() and fb.data_ptr() == w.data_ptr() and fb.stride() == (1, 32)
    assert xa.shape == (35, 16) and xa.is_contiguous() and xb.data_ptr() == w.data_ptr() and xb.stride() == (32, 1)
    assert wa.shape == (16, 35) and wa.stride() == (1, 16) and wa.data_ptr() == xa.data_ptr()
    assert wb.shape == (35, 32) and wb.data_ptr() == x.data_ptr() and wb.is_contiguous()
    assert (xphase, wphase) == ("7", "7") and xdt == wdt == torch.bfloat16


@pytest.mark.parametrize("need,gemms", [((True, False, False), 1), ((False, True, False), 1),
                                        ((False, False, True), 0), ((False, True, True), 1)])
def test_only_what_needs_input_grad_asks_for(gemm, need, gemms):
    x, w, b = _leaves(need=need)
    _loss(cute_gemm.linear(x, w, b)).backward()
    assert len(gemm.calls) == 1 + gemms
    for t, asked in zip((x, w, b), need):
        assert (t.grad is not None) == asked
    if need == (False, True, False):  # the one GEMM is dW's: A is dY.t() (column-major)
        assert gemm.calls[1][0].stride()[0] == 1


def test_a_double_backward_is_refused_not_wrong(gemm):
    x, w, b = _leaves()
    y = cute_gemm.linear(x, w, b)
    (gx,) = torch.autograd.grad(_loss(y), x, create_graph=True)
    with pytest.raises(RuntimeError, match="once_differentiable"):
        gx.float().sum().backward()


def test_nothing_recorded_without_grad(gemm):
    x, w, b = _leaves()
    with torch.no_grad():
        assert cute_gemm.linear(x, w, b).grad_fn is None
    with torch.inference_mode():
        assert cute_gemm.linear(x, w, b).grad_fn is None
    assert len(gemm.calls) == 2


def test_an_expanded_gradient_and_an_fp32_output(gemm):
    """y.sum()'s dY is an expanded (stride 0) tensor: made row-major for dX; out_dtype=fp32 gives an fp32 dY,
    cast to x's dtype for the kernels, gradients in the leaves' dtypes, db summed in fp32."""
    x, w, b = _leaves(lead=(9,), k=8, n=8)
    y = cute_gemm.linear(x, w, b, out_dtype=torch.float32)
    assert y.dtype == torch.float32
    y.sum().backward()
    ref = _reference(x, w, b, lambda t: t.sum())
    assert [t.dtype for t in (x.grad, w.grad, b.grad)] == [torch.bfloat16] * 3
    assert all(_rel(g, r) < 1e-2 for g, r in zip((x.grad, w.grad, b.grad), ref))
    assert gemm.calls[1][0].dtype == torch.bfloat16 and gemm.calls[1][0].is_contiguous()


def test_an_existing_w_grad_accumulates(gemm):
    """dW is a new tensor that autograd adds into an existing w.grad (torch's accumulation)."""
    x, w, b = _leaves()
    w.grad = torch.ones_like(w)
    _loss(cute_gemm.linear(x, w, b)).backward()
    (_, ref_w, _) = _reference(x, w, b, _loss)
    assert _rel(w.grad.double() - 1, ref_w) < 2e-2


@pytest.mark.parametrize("tokens", [1, 7, 1000])
def test_ragged_token_counts(gemm, tokens):
    """M = 1, 7, 1000 tokens: dW's GEMM has K = tokens, which no operand holds contiguous."""
    x, w, b = _leaves(lead=(tokens,), k=24, n=40)
    _loss(cute_gemm.linear(x, w, b)).backward()
    for got, ref in zip((x.grad, w.grad, b.grad), _reference(x, w, b, _loss)):
        assert _rel(got, ref) < 1e-2
    assert gemm.calls[2][0].shape == (40, tokens)


def test_autocast_casts_like_f_linear_and_an_fp32_weight_gets_an_fp32_gradient(gemm):
    x = torch.randn(4, 16, requires_grad=True)
    w = torch.randn(24, 16, requires_grad=True)
    b = torch.randn(24, requires_grad=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = cute_gemm.linear(x, w, b)
        y_ref = F.linear(x, w, b)
    assert y.dtype == y_ref.dtype == torch.bfloat16
    assert gemm.calls[0][0].dtype == torch.bfloat16 and gemm.calls[0][1].dtype == torch.bfloat16
    y.float().sum().backward()
    assert (x.grad.dtype, w.grad.dtype, b.grad.dtype) == (torch.float32,) * 3
    ref = _reference(x, w, b, lambda t: t.sum())
    assert all(_rel(g, r) < 1e-2 for g, r in zip((x.grad, w.grad, b.grad), ref))


def test_bad_input_gets_f_linears_errors_before_any_gemm(gemm):
    x, w, b = _leaves()
    cases = [  # (args, message, whether F.linear refuses them too)
        ((x, w, b.float()), "bias is torch.float32 but x is torch.bfloat16: F.linear takes a bias of x's dtype", 1),
        ((x, w, b.half()), "bias is torch.float16 but x is torch.bfloat16", 1),
        ((x, w.detach().float().requires_grad_()), "x is torch.bfloat16 and w is torch.float32: both must be", 1),
        ((x, w[:, :8]), r"linear takes x \[..., K\] and w \[N, K\]", 1),
        ((x.detach().float(), w.detach().float()), "both must be torch.float16 or both torch.bfloat16", 0),
    ]
    for args, message, f_linear_refuses in cases:
        with torch.no_grad():  # refused with and without autograd recording the call
            with pytest.raises(InputError, match=message):
                cute_gemm.linear(*args)
        with pytest.raises(InputError, match=message):
            cute_gemm.linear(*args)
        if f_linear_refuses:  # F.linear does refuse them (fp32 is the kernels' refusal only)
            with pytest.raises(RuntimeError):
                F.linear(*args)
    assert gemm.calls == []


def _aot_backend(graphs):
    from functorch.compile import make_boxed_func
    from torch._dynamo.backends.common import aot_autograd

    def keep(kind):
        def compiler(gm, example_inputs):
            graphs[kind] = gm
            return make_boxed_func(gm.forward)

        return compiler

    return aot_autograd(fw_compiler=keep("fw"), bw_compiler=keep("bw"))


def test_torch_compile_fullgraph_training_step_matches_eager(gemm):
    """A two-layer step under torch.compile(fullgraph=True): the forward graph holds the linear op, the
    backward graph linear_dx / linear_dw (the registered autograd), and the gradients are eager's."""

    def step(x, w1, b1, w2):
        return _loss(cute_gemm.linear(F.silu(cute_gemm.linear(x, w1, b1)), w2))

    x, w1, b1 = _leaves(lead=(2, 5), k=16, n=32, seed=1)
    _, w2, _ = _leaves(k=32, n=16, bias=False, seed=2)
    step(x, w1, b1, w2).backward()
    eager = [t.grad.clone() for t in (x, w1, b1, w2)]
    for t in (x, w1, b1, w2):
        t.grad = None
    graphs = {}
    torch.compile(step, fullgraph=True, backend=_aot_backend(graphs))(x, w1, b1, w2).backward()
    fw = [str(n.target) for n in graphs["fw"].graph.nodes if n.op == "call_function"]
    bw = [str(n.target) for n in graphs["bw"].graph.nodes if n.op == "call_function"]
    assert fw.count("cute_gemm.linear.default") == 2
    assert bw.count("cute_gemm.linear_dx.default") == 2 and bw.count("cute_gemm.linear_dw.default") == 2
    for got, ref in zip((x.grad, w1.grad, b1.grad, w2.grad), eager):
        torch.testing.assert_close(got, ref, atol=0, rtol=0)


def test_compiled_backward_asks_only_for_what_is_needed(gemm):
    graphs = {}
    x, w, b = _leaves(need=(False, True, False))
    torch.compile(lambda x, w, b: _loss(cute_gemm.linear(x, w, b)), fullgraph=True,
                  backend=_aot_backend(graphs))(x, w, b).backward()
    bw = [str(n.target) for n in graphs["bw"].graph.nodes if n.op == "call_function"]
    assert "cute_gemm.linear_dw.default" in bw and "cute_gemm.linear_dx.default" not in bw
    assert w.grad is not None and x.grad is None and b.grad is None


def test_fake_implementations_of_the_backward_ops():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        dy = torch.empty(2, 37, 96, dtype=torch.bfloat16)
        x = torch.empty(2, 37, 64, dtype=torch.bfloat16)
        w = torch.empty(96, 64, dtype=torch.bfloat16)
        dx = torch.ops.cute_gemm.linear_dx(dy, w, "best")
        dw = torch.ops.cute_gemm.linear_dw(dy, x, "best")
        assert dx.shape == (2, 37, 64) and dx.dtype == torch.bfloat16
        assert dw.shape == (96, 64) and dw.dtype == torch.bfloat16
        with pytest.raises(InputError, match="bias is torch.float32 but x is torch.bfloat16"):
            torch.ops.cute_gemm.linear(x, w, torch.empty(96), "best", None)


def test_opcheck_of_the_linear_op(gemm):
    """torch.library.opcheck: schema, fake implementation, the registered autograd and AOT dispatch agree
    with the op's real implementation (here on the stubbed GEMM)."""
    x, w, b = _leaves(lead=(3, 5), k=16, n=24)
    torch.library.opcheck(torch.ops.cute_gemm.linear.default, (x, w, b, "best", None))
    dy = torch.randn(3, 5, 24).bfloat16()
    torch.library.opcheck(torch.ops.cute_gemm.linear_dx.default, (dy, w.detach(), "best"))
    torch.library.opcheck(torch.ops.cute_gemm.linear_dw.default, (dy, x.detach(), "best"))


def test_gemm_out_under_autograd_is_refused_as_torch_mm_refuses_it():
    """A result written into out= has no autograd history: with grad enabled and an input that requires grad, gemm
    refuses out= before anything else (torch.mm(a, b, out=c) raises too); under no_grad the call goes on to the usual
    checks (here: CPU tensors)."""
    import cute_gemm

    a = torch.randn(16, 32, dtype=torch.float16, requires_grad=True)
    b, c = torch.randn(32, 8, dtype=torch.float16), torch.empty(16, 8)
    with pytest.raises(cute_gemm.InputError, match="out= does not support automatic differentiation"):
        cute_gemm.gemm(a, b, out=c)
    with torch.no_grad(), pytest.raises(cute_gemm.InputError, match="CUDA"):
        cute_gemm.gemm(a, b, out=c)


def test_the_eager_nodes_bind_no_signature_per_call(gemm, monkeypatch):
    """``Function.apply`` of a Function that declares ``setup_context`` binds every call's arguments to ``forward``'s
    signature through ``inspect`` -- a large share of the Python a linear layer's forward and backward cost on the host,
    which a training step of small micro-batches waits for. The eager nodes (``LinearFunction`` and the
    accumulating ``LinearIntoGradFunction``) take ``ctx`` in ``forward`` instead: no ``inspect.signature`` call in
    a forward and backward, and the gradients are still F.linear's."""
    import inspect

    seen = []
    real = inspect.signature
    monkeypatch.setattr(inspect, "signature", lambda *a, **k: seen.append(a[0]) or real(*a, **k))
    for accumulate_grad in (False, True):
        x, w, b = _leaves()
        _loss(cute_gemm.linear(x, w, b, accumulate_grad=accumulate_grad)).backward()
        assert seen == [], f"accumulate_grad={accumulate_grad}: inspect.signature({seen[0]!r}) per call"
        for got, ref in zip((x.grad, w.grad, b.grad), _reference(x, w, b, _loss)):
            assert _rel(got, ref) < 1e-2
