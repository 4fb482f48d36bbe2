"""Bad input is refused on the host, before anything compiles or launches, with a message that says
what was given and what is needed. None of this needs a GPU."""

import pytest
import torch

from cute_gemm.runtime import registry
from cute_gemm import InputError, UnsupportedError
from cute_gemm.runtime.plan import Plan, entry_for
from cute_gemm.runtime.problem import Problem, validate


def test_cpu_tensors_are_refused():
    a = torch.randn(128, 64).half()
    b = torch.randn(64, 128).half()
    with pytest.raises(InputError, match="must be on a CUDA device"):
        validate(a, b)


def test_dtype_is_checked_first():
    with pytest.raises(InputError, match="A must be torch.float16, got torch.float32"):
        validate(torch.randn(128, 64), torch.randn(64, 128).half())


def test_not_2d():
    with pytest.raises(InputError, match="must be 2-D"):
        validate(torch.randn(2, 128, 64).half(), torch.randn(64, 128).half())


class FakeCuda:
    """Stand-in for CUDA tensors on a CPU machine: shape/stride/dtype/pointer checks are pure host logic."""

    def __init__(self, t, ptr=256):
        self._t, self._ptr = t, ptr
        self.shape, self.dtype, self.is_cuda, self.device = t.shape, t.dtype, True, torch.device("cuda:0")

    def dim(self):
        return self._t.dim()

    def stride(self):
        return self._t.stride()

    def data_ptr(self):
        return self._ptr


@pytest.fixture(autouse=True)
def _fake_tensor_type(monkeypatch):
    monkeypatch.setattr(torch, "Tensor", (torch.Tensor, FakeCuda))


def test_inner_dimensions():
    with pytest.raises(InputError, match="inner dimensions differ"):
        validate(FakeCuda(torch.empty(128, 64).half()), FakeCuda(torch.empty(96, 128).half()))


def test_b_must_be_row_major():
    b_col = torch.empty(128, 64).half().t()  # [64,128] but column-major
    with pytest.raises(InputError, match="B must be row-major"):
        validate(FakeCuda(torch.empty(128, 64).half()), FakeCuda(b_col))


def test_alignment():
    with pytest.raises(InputError, match="16-byte aligned"):
        validate(FakeCuda(torch.empty(128, 64).half(), ptr=258), FakeCuda(torch.empty(64, 128).half()))
    with pytest.raises(InputError, match="multiple of 8"):
        validate(FakeCuda(torch.empty(128, 60).half()), FakeCuda(torch.empty(60, 128).half()))


def test_valid_problem_and_output_checks():
    a, b = FakeCuda(torch.empty(256, 64).half()), FakeCuda(torch.empty(64, 128).half())
    assert validate(a, b) == Problem(256, 128, 64)
    with pytest.raises(InputError, match="C must be 256x128"):
        validate(a, b, FakeCuda(torch.empty(128, 128)))


def test_empty_problems_are_valid():
    """M, N or K == 0 passes validation: cute_gemm.gemm returns an empty C or zeros without a launch."""
    assert validate(FakeCuda(torch.empty(0, 64).half()), FakeCuda(torch.empty(64, 128).half())) == Problem(0, 128, 64)
    assert validate(FakeCuda(torch.empty(32, 0).half()), FakeCuda(torch.empty(0, 128).half())) == Problem(32, 128, 0)


def test_tile_phases_refuse_ragged_shapes():
    why = registry.get("sm90", "0").make().can_implement(100, 128, 64)
    assert any("M=100 is not a multiple of 128" in w for w in why), why
    assert any("phase 2a or later" in w for w in why), why
    why = registry.get("sm90", "1").make().can_implement(128, 128, 48)
    assert any("K=48 is not a multiple of BK=32" in w for w in why), why


@pytest.mark.parametrize("phase", ["2a", "2b", "3", "4", "5", "6", "7"])
def test_tma_phases_take_any_shape(phase):
    k = registry.get("sm90", phase).make()
    for m, n, kk in [(1, 8, 8), (7, 264, 72), (129, 3000, 520), (1000, 8, 4104), (3000, 3000, 4104)]:
        assert k.can_implement(m, n, kk) == [], (phase, m, n, kk)
    why = k.can_implement(1000, 3001, 520)
    assert any("N=3001 is not a multiple of 8" in w for w in why), why
    why = k.can_implement(1000, 3000, 522)
    assert any("K=522 is not a multiple of 8" in w for w in why), why
    why = k.can_implement(70000, 70000, 8)
    assert any("2^31" in w for w in why), why


def test_other_ladder_is_refused():
    with pytest.raises(UnsupportedError, match="asked for sm100 kernels but this GPU is sm_90a"):
        entry_for("5", "sm_90a", "sm100")
    assert entry_for("2", "sm_90a", None).key == "sm90:2b"
    assert entry_for("5", "sm_100a", "sm100").key == "sm100:5"


def test_plan_fast_shape_test_matches_can_implement():
    """The per-call shape test of a plan (no Python lists, a few integer ops) agrees with can_implement."""
    for phase in ("0", "1", "3", "5", "7"):
        kern = registry.get("sm90", phase).make()
        plan = Plan(None, kern, "sm_90a", 0, None, 0.0, "compiled", kern.divisibility())
        for m, n, k in [(4096, 4096, 4096), (1000, 3000, 520), (128, 128, 32), (129, 256, 64), (0, 256, 64),
                        (256, 0, 64), (256, 256, 0), (256, 260, 64), (256, 256, 36), (70000, 70000, 8)]:
            assert plan.fits(m, n, k) == (min(m, n, k) > 0 and kern.can_implement(m, n, k) == []), (phase, m, n, k)


def test_problem_parse():
    assert Problem.parse("4096") == Problem(4096, 4096, 4096)
    assert Problem.parse("1024x4096x4096") == Problem(1024, 4096, 4096)
    with pytest.raises(ValueError, match="M,N,K"):
        Problem.parse("1,2")
    with pytest.raises(ValueError):
        Problem.parse("a,b,c")

