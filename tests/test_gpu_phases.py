"""Every phase of the GPU's ladder, checked against cuBLASLt (the worklog's tolerance) and float64, with
fresh random inputs, NaN-poisoned output and a repeat that must be bit-identical. Marker `gpu`: skipped
without a GPU; each test runs under the conftest timeout (a hung mbarrier ends the process)."""

import pytest

from conftest import gpu_family
from cute_gemm import registry
from cute_gemm.problem import Problem

# the two headline shapes and smaller ones, non-square included; every dim a multiple of 256 so the
# 256-row pair tiles and the 256-wide tiles divide them all
SHAPES = [
    Problem(4096, 4096, 4096),
    Problem(1024, 4096, 4096),
    Problem(256, 512, 1024),
    Problem(512, 256, 768),
    Problem(2048, 1024, 512),
    Problem(768, 1536, 256),
    Problem(1536, 768, 2304),
]

FAMILY = gpu_family()
ENTRIES = registry.all_entries(FAMILY) if FAMILY else registry.all_entries("sm90")


@pytest.mark.gpu
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.key)
def test_phase_matches_cublaslt(entry, shape):
    from cute_gemm.check import check_phase

    if entry.make().can_implement(shape.m, shape.n, shape.k):
        pytest.skip(f"{entry.key} does not tile {shape}")
    res = check_phase(entry, shape)
    assert res.error is None, res.error
    assert res.unwritten == 0, res.summary()
    assert res.mismatches == 0, res.summary()
    assert res.rel_fro_err <= 1e-4, res.summary()
    assert res.repeat_identical, res.summary()
    assert res.passed


@pytest.mark.gpu
def test_gemm_api_on_torch_tensors():
    import torch

    import cute_gemm

    a = torch.randn(512, 1024, device="cuda").half()
    b = torch.randn(1024, 768, device="cuda").half()
    for phase in ("0", "2", "5"):
        c = cute_gemm.gemm(a, b, phase=phase)
        assert c.dtype == torch.float32 and c.shape == (512, 768)
        torch.testing.assert_close(c, torch.mm(a, b, out_dtype=torch.float32), atol=0.01, rtol=0.001)


@pytest.mark.gpu
def test_other_arch_is_refused_before_launch():
    import torch

    import cute_gemm
    from cute_gemm.api import UnsupportedError

    other = "sm100" if FAMILY == "sm90" else "sm90"
    a = torch.randn(256, 256, device="cuda").half()
    with pytest.raises(UnsupportedError):
        cute_gemm.gemm(a, a, arch=other)
