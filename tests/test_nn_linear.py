"""``cute_gemm.nn`` without a GPU: ``Linear`` is an ``nn.Linear`` (parameters, state_dict both ways),
``swap_linear`` takes what the kernels take and names what it leaves (in place: the same module objects
and Parameters, so an optimizer built before the swap keeps training them), and ``Linear.forward`` picks
``cute_gemm.linear`` exactly when the kernels take the call -- checked with the GEMM stubbed by a float64
matmul and CPU tensors taken for a GPU's (``_on_gpu`` stubbed; its own test below) -- else ``F.linear``."""

import pytest
import torch
import torch.nn.functional as F

import cute_gemm
import cute_gemm.nn as cnn
from cute_gemm.runtime import plan


@pytest.fixture
def gemm(monkeypatch):
    """plan.run stubbed (float64 matmul, rounded to C's type; records its calls); CPU tensors count as on a
    GPU of a ladder."""
    calls = []

    def run(a, b, phase="5", out=None, config=None, arch=None, out_dtype=None):
        calls.append((a, b, phase))
        return (a.double() @ b.double()).to(out_dtype or torch.float32)

    monkeypatch.setattr(plan, "run", run)
    monkeypatch.setattr(cnn, "_on_gpu", lambda x: True)
    return calls


class Block(torch.nn.Module):
    def __init__(self, d=32, hidden=64, dtype=torch.bfloat16):
        super().__init__()
        self.up = torch.nn.Linear(d, hidden, dtype=dtype)
        self.down = torch.nn.Linear(hidden, d, bias=False, dtype=dtype)
        self.odd = torch.nn.Linear(d, 12, dtype=dtype)  # 12 outputs: no multiple of 8
        self.fp32 = torch.nn.Linear(d, d)
        self.mha = torch.nn.MultiheadAttention(d, 2, dtype=dtype)  # out_proj: a subclass of nn.Linear
        self.inner = torch.nn.Sequential(torch.nn.Linear(d, d, dtype=dtype), torch.nn.SiLU())

    def forward(self, x):
        h = self.down(F.silu(self.up(x)))
        return self.inner(h) + self.fp32(h.float()).to(h.dtype)


def test_linear_is_an_nn_linear_and_state_dicts_move_both_ways():
    torch.manual_seed(0)
    ref = torch.nn.Linear(64, 96, dtype=torch.bfloat16)
    ours = cnn.Linear(64, 96, dtype=torch.bfloat16)
    assert isinstance(ours, torch.nn.Linear) and ours.phase == "best"
    assert list(ours.state_dict()) == list(ref.state_dict()) == ["weight", "bias"]
    ours.load_state_dict(ref.state_dict())
    assert torch.equal(ours.weight, ref.weight) and torch.equal(ours.bias, ref.bias)
    back = torch.nn.Linear(64, 96, dtype=torch.bfloat16)
    back.load_state_dict(ours.state_dict())
    assert torch.equal(back.weight, ref.weight)
    assert repr(ours) == repr(ref)
    assert "phase='7'" in repr(cnn.Linear(8, 8, bias=False, phase="7"))


def test_swap_linear_takes_what_the_kernels_take_and_names_the_rest():
    model = Block()
    params = {n: p for n, p in model.named_parameters()}
    opt = torch.optim.AdamW(model.parameters())
    state_before = model.state_dict()
    left = dict(cnn.swap_linear(model))
    assert type(model.up) is type(model.down) is type(model.inner[0]) is cnn.Linear
    assert set(left) == {"odd", "fp32", "mha.out_proj"}, left
    assert "multiples of 8" in left["odd"] and "32 -> 12" in left["odd"]
    assert "torch.float32" in left["fp32"] and "autocast=True" in left["fp32"]
    assert "subclass of nn.Linear" in left["mha.out_proj"]
    assert type(model.odd) is type(model.fp32) is torch.nn.Linear
    # in place: the same Parameter objects (the optimizer's), the same state_dict keys and values
    assert all(p is params[n] for n, p in model.named_parameters())
    assert opt.param_groups[0]["params"][0] is model.up.weight
    after = model.state_dict()
    assert list(after) == list(state_before) and all(torch.equal(after[k], state_before[k]) for k in after)
    assert cnn.swap_linear(model) == list(left.items())  # swapping again changes nothing
    # autocast=True takes fp32 weights too; a root that is itself an nn.Linear is swapped as well
    assert dict(cnn.swap_linear(model, autocast=True)).keys() == {"odd", "mha.out_proj"}
    root = torch.nn.Linear(16, 16, dtype=torch.float16)
    assert cnn.swap_linear(root, phase="7") == [] and type(root) is cnn.Linear and root.phase == "7"


def test_forward_takes_the_kernels_only_where_they_take_the_call(gemm):
    layer = cnn.Linear(32, 64, dtype=torch.bfloat16)
    x = torch.randn(3, 32).bfloat16()
    y = layer(x)  # "on a GPU", bf16, aligned: the kernels
    assert len(gemm) == 1 and y.shape == (3, 64)
    assert cnn.takes(x, layer.weight, layer.bias) and cnn.takes(x, layer.weight)
    assert not cnn.takes(x.t().contiguous().t(), layer.weight)  # x's last dim strided
    assert not cnn.takes(x.half(), layer.weight, layer.bias)  # x fp16, weight bf16
    assert not cnn.takes(x.float(), layer.weight.float())  # fp32 without autocast
    assert not cnn.takes(x, layer.weight, layer.bias.float())  # a bias of another dtype
    assert not cnn.takes(x[:, :12], torch.randn(16, 12).bfloat16())  # 12 in-features
    assert not cnn.takes(x, torch.randn(12, 32).bfloat16())  # 12 out-features
    assert not cnn.takes(x, layer.weight.to("meta"))  # w on another device
    # autocast of x's device type (CPU here, standing for CUDA): fp32 everything under bf16 is taken
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert cnn.takes(x.float(), layer.weight.float(), layer.bias.float())
        assert not cnn.takes(x.double(), layer.weight.double())  # autocast leaves fp64 as it is
    with torch.autocast("cpu", dtype=torch.float16):
        assert cnn.takes(x, layer.weight, layer.bias)  # cast to fp16 on the way in
    assert len(gemm) == 1


def test_on_gpu_asks_for_a_ladders_gpu(monkeypatch):
    """CPU tensors are not on a GPU; a CUDA tensor is when its device runs a ladder (asked once, kept)."""

    class OnCuda(torch.Tensor):
        is_cuda = property(lambda self: True)

        def get_device(self):
            return 0

    x = torch.randn(3, 8).as_subclass(OnCuda)
    assert not cnn._on_gpu(torch.randn(3, 8))
    for capability, ok in (((9, 0), True), ((10, 0), True), ((8, 0), False)):
        monkeypatch.setattr(cnn, "_ARCH_OK", {})
        monkeypatch.setattr(torch.cuda, "get_device_capability", lambda dev, c=capability: c)
        assert cnn._on_gpu(x) is ok and cnn._ARCH_OK == {0: ok}


def test_fp32_input_under_a_bf16_weight_falls_back_to_f_linear_and_its_error(gemm):
    layer = cnn.Linear(32, 64, dtype=torch.bfloat16)
    with pytest.raises(RuntimeError, match="dtype"):
        layer(torch.randn(3, 32))
    assert gemm == []


def test_a_swapped_model_trains_like_the_original(gemm):
    """One AdamW step of a model and its swapped copy (same weights, same input): the swapped layers ran the
    (stubbed) kernels forward and backward, and the gradients and updated weights agree with nn.Linear's."""
    torch.manual_seed(0)
    ref = torch.nn.Sequential(torch.nn.Linear(32, 64, dtype=torch.bfloat16), torch.nn.SiLU(),
                              torch.nn.Linear(64, 32, dtype=torch.bfloat16))
    ours = torch.nn.Sequential(torch.nn.Linear(32, 64, dtype=torch.bfloat16), torch.nn.SiLU(),
                               torch.nn.Linear(64, 32, dtype=torch.bfloat16))
    ours.load_state_dict(ref.state_dict())
    assert cnn.swap_linear(ours) == []
    x = torch.randn(4, 9, 32).bfloat16()
    for model, inp in ((ref, x), (ours, x)):
        opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
        model(inp).float().pow(2).mean().backward()
        opt.step()
    assert len(gemm) == 2 + 2 * 2 - 1  # 2 forward GEMMs; dW of both layers, dX of the second only
    for (name, p), q in zip(ref.named_parameters(), ours.parameters()):
        torch.testing.assert_close(q.grad.float(), p.grad.float(), atol=2e-2, rtol=2e-2, msg=name)
        torch.testing.assert_close(q.float(), p.float(), atol=2e-2, rtol=0, msg=name)


def test_cute_gemm_nn_is_a_lazy_attribute():
    assert "nn" in dir(cute_gemm) and cute_gemm.nn is cnn
