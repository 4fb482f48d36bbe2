"""Training with the kernels on the GPU (marker `gpu`; skipped without one; each test under the conftest's
timeout): ``cute_gemm.linear``'s gradients, ``cute_gemm.nn`` under ``torch.compile`` and in a CUDA graph.

1. Gradients of ``linear(x, w, bias)`` at ragged shapes -- M = 1, 7, 1000 tokens (1000 as [2, 500]),
   K = 200 and N = 328 (multiples of 8, of no tile) -- fp16 and bf16, with and without bias, with and
   without an existing ``w.grad``: dX, dW and db against float64 GEMMs of the same dY within the
   forward's tolerance for that output type (``measure.check.tolerance``), end to end against F.linear
   in float64 no worse than 2x F.linear's own 16-bit error (+1e-3), and an existing ``w.grad`` ends as
   exactly itself + dW (autograd's accumulation).
2. A training step (fwd + bwd + AdamW) of a small MLP with ``swap_linear`` under
   ``torch.compile(fullgraph=True)`` matches the eager step, and under ``torch.autocast`` (fp32 master
   weights) its gradients are fp32 and match nn.Linear's under the same autocast.
3. fwd + bwd captured in a CUDA graph and replayed on new input gives the eager gradients bit for bit.

    pytest -m gpu tests/test_gpu_train.py          # ~1-2 min on an H200 (compiles first)
"""

import pytest

from conftest import gpu_family
from phases.operands import Operands

FAMILY = gpu_family()


def _leaves(lead, k, n, dtype, bias, seed=0):
    import torch

    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(*lead, k, device="cuda", generator=g).to(dtype).requires_grad_()
    w = (torch.randn(n, k, device="cuda", generator=g) / k**0.5).to(dtype).requires_grad_()
    b = torch.randn(n, device="cuda", generator=g).to(dtype).requires_grad_() if bias else None
    return x, w, b


def _loss(y):
    import torch

    c = torch.linspace(-1, 1, y.shape[-1], device=y.device)
    return (y.float() * c).pow(2).sum() / y.shape[-1]


def _rel(got, ref):
    return ((got.double() - ref.double()).norm() / ref.double().norm()).item()


@pytest.mark.gpu
@pytest.mark.parametrize("dtype_name", ["fp16", "bf16"])
@pytest.mark.parametrize("lead", [(1,), (7,), (2, 500)], ids=["M1", "M7", "M1000"])
def test_gradients_at_ragged_shapes(lead, dtype_name):
    import torch
    import torch.nn.functional as F

    import cute_gemm
    from cute_gemm.measure.check import tolerance

    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}[dtype_name]
    k, n = 200, 328
    tol = tolerance(Operands.of("nn", dtype_name, dtype_name)).rel_err_limit
    for bias in (True, False):
        x, w, b = _leaves(lead, k, n, dtype, bias)
        seen = []
        y = cute_gemm.linear(x, w, b)
        y.register_hook(seen.append)  # the dY the backward got
        _loss(y).backward()
        (dy,) = seen
        d64 = dy.double().reshape(-1, n)
        x64, w64 = x.detach().double().reshape(-1, k), w.detach().double()
        assert x.grad.dtype == w.grad.dtype == dtype and x.grad.shape == x.shape
        assert _rel(x.grad.reshape(-1, k), d64 @ w64) <= tol, "dX"
        assert _rel(w.grad, d64.t() @ x64) <= tol, "dW"
        if bias:
            assert b.grad.dtype == dtype and _rel(b.grad, d64.sum(0)) <= tol, "db"
        # end to end: F.linear in float64 the reference, F.linear in 16 bits (cuBLAS) the scale
        ref = [t.detach().double().requires_grad_() if t is not None else None for t in (x, w, b)]
        _loss(F.linear(*ref)).backward()
        vendor = [t.detach().clone().requires_grad_() if t is not None else None for t in (x, w, b)]
        _loss(F.linear(*vendor)).backward()
        for name, ours, r, v in zip("xwb", (x, w, b), ref, vendor):
            if ours is not None:
                assert _rel(ours.grad, r.grad) <= 2 * _rel(v.grad, r.grad) + 1e-3, name
        # an existing w.grad: dW is added to it by autograd, exactly
        first = w.grad.clone()
        g0 = torch.randn_like(w)
        w.grad, x.grad = g0.clone(), None
        _loss(cute_gemm.linear(x, w, b)).backward()
        assert torch.equal(w.grad, g0 + first)


def _mlp(dtype):
    import torch

    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(256, 704, dtype=dtype), torch.nn.SiLU(),
                               torch.nn.Linear(704, 256, bias=False, dtype=dtype)).cuda()


def _step(model, opt, x):
    opt.zero_grad(set_to_none=True)
    loss = _loss(model(x))
    loss.backward()
    opt.step()
    return loss.detach()


@pytest.mark.gpu
def test_torch_compile_fullgraph_training_step_matches_eager():
    import copy

    import torch

    import cute_gemm.nn

    eager = _mlp(torch.bfloat16)
    assert cute_gemm.nn.swap_linear(eager) == []
    compiled_model = copy.deepcopy(eager)
    compiled = torch.compile(compiled_model, fullgraph=True)
    x = torch.randn(3, 37, 256, device="cuda", dtype=torch.bfloat16)
    opts = [torch.optim.AdamW(m.parameters(), lr=1e-3) for m in (eager, compiled_model)]
    for _ in range(3):
        le = _step(eager, opts[0], x)
        lc = _step(compiled, opts[1], x)
        torch.testing.assert_close(lc, le, atol=1e-3, rtol=1e-2)
    for (name, p), q in zip(eager.named_parameters(), compiled_model.parameters()):
        torch.testing.assert_close(q.grad.float(), p.grad.float(), atol=1e-3, rtol=2e-2, msg=name)
        torch.testing.assert_close(q.float(), p.float(), atol=1e-3, rtol=1e-2, msg=name)


@pytest.mark.gpu
def test_autocast_with_fp32_master_weights():
    import copy

    import torch

    import cute_gemm.nn

    ref = _mlp(torch.float32)
    ours = copy.deepcopy(ref)
    assert cute_gemm.nn.swap_linear(ours, autocast=True) == []
    x = torch.randn(64, 256, device="cuda")
    for model in (ref, ours):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            y = model(x)
        assert y.dtype == torch.bfloat16
        _loss(y).backward()
    for (name, p), q in zip(ref.named_parameters(), ours.parameters()):
        assert q.grad.dtype == torch.float32
        assert _rel(q.grad, p.grad) < 2e-2, name


@pytest.mark.gpu
def test_forward_and_backward_in_a_cuda_graph():
    import torch

    import cute_gemm.nn

    model = _mlp(torch.bfloat16)
    cute_gemm.nn.swap_linear(model)
    static_x = torch.randn(2, 37, 256, device="cuda", dtype=torch.bfloat16)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm every plan (forward and backward) before capturing
        for _ in range(2):
            model.zero_grad(set_to_none=True)
            _loss(model(static_x)).backward()
    torch.cuda.current_stream().wait_stream(side)
    model.zero_grad(set_to_none=True)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_loss = _loss(model(static_x))
        static_loss.backward()
    x = torch.randn_like(static_x)
    static_x.copy_(x)
    for p in model.parameters():
        p.grad.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    captured = [p.grad.clone() for p in model.parameters()]
    loss = static_loss.clone()
    model.zero_grad(set_to_none=True)
    eager_loss = _loss(model(x))
    eager_loss.backward()
    assert torch.equal(loss, eager_loss.detach())
    for got, p in zip(captured, model.parameters()):
        assert not torch.isnan(got).any() and torch.equal(got, p.grad)


@pytest.mark.gpu
def test_bad_input_is_refused_before_launch():
    import torch

    import cute_gemm
    from cute_gemm import InputError

    x, w, b = _leaves((4,), 64, 64, torch.bfloat16, True)
    with pytest.raises(InputError, match="bias is torch.float32 but x is torch.bfloat16"):
        cute_gemm.linear(x, w, b.detach().float())
    with pytest.raises(InputError, match="x is torch.bfloat16 and w is torch.float32"):
        cute_gemm.linear(x, w.detach().float().requires_grad_())
