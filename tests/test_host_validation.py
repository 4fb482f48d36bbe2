"""Bad input is refused on the host, before anything compiles or launches, with a message that says
what was given and what is needed. None of this needs a GPU."""

import pytest
import torch

from cute_gemm import registry
from cute_gemm.api import UnsupportedError, prepare
from cute_gemm.problem import InputError, Problem, validate


def _meta(shape, dtype=torch.float16):
    return torch.empty(shape, dtype=dtype, device="meta")


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


def test_shape_a_phase_cannot_do():
    e = registry.get("sm90", "0")
    with pytest.raises(UnsupportedError, match="M=100 is not a multiple of 128"):
        prepare(e, Problem(100, 128, 64), "sm_90a")
    with pytest.raises(UnsupportedError, match="K=48 is not a multiple of BK=32"):
        prepare(e, Problem(128, 128, 48), "sm_90a")


def test_pair_phases_need_m_multiple_of_256():
    for fam in ("sm90", "sm100"):
        e = registry.get(fam, "4")
        with pytest.raises(UnsupportedError, match="M=384"):
            prepare(e, Problem(384, 512, 1024), "sm_90a" if fam == "sm90" else "sm_100a")


def test_sm100_phase_on_sm90_gpu():
    e = registry.get("sm100", "0")
    with pytest.raises(UnsupportedError, match="sm100 kernel and this GPU is sm_90a"):
        prepare(e, Problem(4096, 4096, 4096), "sm_90a")


def test_problem_parse():
    assert Problem.parse("4096") == Problem(4096, 4096, 4096)
    assert Problem.parse("1024x4096x4096") == Problem(1024, 4096, 4096)
    with pytest.raises(ValueError, match="M,N,K"):
        Problem.parse("1,2")
    with pytest.raises(ValueError):
        Problem.parse("a,b,c")
