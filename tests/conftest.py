"""GPU tests carry the `gpu` marker, skip cleanly without a GPU of their arch, and run under a timeout:
an mbarrier mistake hangs the GPU, and a hung test must end the process rather than CI."""

import faulthandler
import os

import pytest

GPU_TEST_TIMEOUT_S = int(os.environ.get("CUTE_GEMM_GPU_TEST_TIMEOUT", "300"))


def gpu_family():
    """'sm90' / 'sm100' for GPU 0, or None (no torch CUDA, or an arch neither ladder runs)."""
    try:
        import torch

        if not torch.cuda.is_available():
            return None
        from cute_gemm.runtime.arch import family_of_capability

        return family_of_capability(*torch.cuda.get_device_capability(0))
    except Exception:
        return None


def pytest_collection_modifyitems(config, items):
    fam = gpu_family()
    if fam is not None:
        return
    skip = pytest.mark.skip(reason="needs a Hopper (sm90) or Blackwell (sm100) CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _gpu_timeout(request):
    """Dump stacks and exit the whole process if a GPU test runs past the limit (a hang)."""
    if "gpu" not in request.keywords:
        yield
        return
    faulthandler.dump_traceback_later(GPU_TEST_TIMEOUT_S, exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()
