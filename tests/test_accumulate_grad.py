"""``linear(..., accumulate_grad=True)`` (and ``cute_gemm.nn.Linear(accumulate_grad=True)``) without a GPU: the
backward adds dW into the weight's existing ``.grad`` in place with the accumulate epilogue -- one GEMM
``gemm(dY^T, X, out=w.grad, accumulate=True)`` -- instead of returning a new dW for autograd to add. ``plan.run``
is stubbed by a float64 matmul on CPU tensors that honours ``out`` and ``accumulate`` and records its calls;
the kernels' own accumulate is tests/test_accumulate.py's (PTX machine) and tests/test_gpu_train.py's (GPU).

What is checked: over micro-batches the accumulated gradient equals F.linear's summed in float64; the first
micro-batch (no ``.grad`` yet) returns dW as usual; later ones call the GEMM with ``out`` = the weight's own
``.grad`` (the same memory) and ``accumulate=True``; where the kernels cannot add (the stub refuses, as sm100
would) the backward falls back to a new dW that autograd adds; a weight that is not a leaf (autocast's cast)
is never written into; without the flag nothing changes.
"""

import pytest
import torch
import torch.nn.functional as F

import cute_gemm
import cute_gemm.nn
from cute_gemm import UnsupportedError
from cute_gemm.runtime import plan, torch_ops  # noqa: F401  (torch_ops registers the ops)


class StubGemm:
    """``plan.run``'s stand-in: C = A @ B (or C += A @ B into ``out``) in float64, rounded to C's type."""

    def __init__(self, refuse_accumulate=False):
        self.calls, self.refuse = [], refuse_accumulate

    def __call__(self, a, b, phase="5", out=None, config=None, arch=None, out_dtype=None, accumulate=False):
        self.calls.append({"a": a, "b": b, "out": out, "accumulate": accumulate})
        prod = a.double() @ b.double()
        if accumulate:
            if self.refuse:
                raise UnsupportedError("sm100:best cannot accumulate (C += A @ B)")
            out.copy_((out.double() + prod).to(out.dtype))
            return out
        c = prod.to(out_dtype or torch.float32)
        return c if out is None else out.copy_(c)


@pytest.fixture
def stub(monkeypatch):
    s = StubGemm()
    monkeypatch.setattr(plan, "run", s)
    return s


def _batches(n_batches=3, t=6, k=16, n=24, dtype=torch.bfloat16, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(t, k, generator=g).to(dtype) for _ in range(n_batches)], \
        (torch.randn(n, k, generator=g) / k**0.5).to(dtype)


def _loss(y):
    return (y.float() * torch.linspace(-1, 1, y.shape[-1])).pow(2).sum()


def _reference_grad(xs, w):
    w64 = w.detach().double().requires_grad_(True)
    for x in xs:
        _loss(F.linear(x.double(), w64)).backward()
    return w64.grad


def test_micro_batches_accumulate_in_place(stub):
    xs, w0 = _batches()
    w_half = w0.clone().requires_grad_(True)
    for x in xs:
        _loss(cute_gemm.linear(x, w_half, accumulate_grad=True)).backward()
    first = w_half.grad
    dw_calls = [c for c in stub.calls if c["a"].shape == (24, 6)]
    assert len(dw_calls) == 3
    assert dw_calls[0]["out"] is None and not dw_calls[0]["accumulate"]  # no .grad yet: a new dW
    for c in dw_calls[1:]:  # then into the weight's own .grad, with the reduce-add
        assert c["accumulate"] and c["out"].data_ptr() == first.data_ptr()
    assert w_half.grad.data_ptr() == first.data_ptr()  # never replaced
    ref = _reference_grad(xs, w0)
    assert ((w_half.grad.double() - ref).norm() / ref.norm()).item() < 2e-2  # bf16 grads


def test_without_the_flag_autograd_adds(stub):
    xs, w0 = _batches()
    w = w0.clone().requires_grad_(True)
    for x in xs:
        _loss(cute_gemm.linear(x, w)).backward()
    assert not any(c["accumulate"] for c in stub.calls)


def test_a_ladder_without_the_epilogue_falls_back(monkeypatch):
    s = StubGemm(refuse_accumulate=True)
    monkeypatch.setattr(plan, "run", s)
    xs, w0 = _batches()
    w = w0.clone().requires_grad_(True)
    for x in xs:
        _loss(cute_gemm.linear(x, w, accumulate_grad=True)).backward()
    ref = _reference_grad(xs, w0)
    assert ((w.grad.double() - ref).norm() / ref.norm()).item() < 2e-2  # autograd added the new dWs
    assert sum(c["accumulate"] for c in s.calls) == 2  # tried on the 2nd and 3rd micro-batch, refused


def test_a_strided_grad_is_not_written_into(stub):
    xs, w0 = _batches(n_batches=2)
    w = w0.clone().requires_grad_(True)
    w.grad = torch.zeros(24, 32, dtype=w.dtype)[:, ::2]  # the right shape, not row-major
    _loss(cute_gemm.linear(xs[0], w, accumulate_grad=True)).backward()
    assert not any(c["accumulate"] for c in stub.calls)


def test_autocast_cast_weight_is_not_a_leaf(stub, monkeypatch):
    """Under autocast the Function sees the cast copy of an fp32 master weight: not a leaf, no .grad to add into;
    the master weight's gradient flows back through the cast as usual."""
    from cute_gemm.runtime import torch_ops as ops

    xs, w0 = _batches(n_batches=2)
    master = w0.clone().float().requires_grad_(True)
    cast = master.to(torch.bfloat16)  # what autocast hands the Function
    for x in xs:
        _loss(ops.apply_linear(x, cast if x is xs[0] else master.to(torch.bfloat16), accumulate_grad=True)).backward()
    assert not any(c["accumulate"] for c in stub.calls)
    assert master.grad is not None and master.grad.dtype == torch.float32


def test_nn_linear_takes_the_flag(stub, monkeypatch):
    monkeypatch.setattr(cute_gemm.nn, "takes", lambda *a: True)
    layer = cute_gemm.nn.Linear(16, 24, bias=False, dtype=torch.bfloat16, accumulate_grad=True)
    plain = cute_gemm.nn.Linear(16, 24, bias=False, dtype=torch.bfloat16)
    assert layer.accumulate_grad and not plain.accumulate_grad
    assert layer.state_dict().keys() == plain.state_dict().keys()
    xs, _ = _batches()
    for x in xs:
        _loss(layer(x)).backward()
    assert sum(c["accumulate"] for c in stub.calls) == 2
