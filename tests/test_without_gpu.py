"""The Python face on a machine without a GPU: the public names, the torch op's answer to CPU tensors, and
``cute_gemm.compile_only``, which checks a phase and config by compiling it (no GPU needed)."""

import pytest
import torch

from cute_gemm import InputError, UnsupportedError


def test_the_torch_op_refuses_cpu_tensors_with_an_input_error():
    import cute_gemm
    from cute_gemm.runtime import torch_ops  # noqa: F401  (registers torch.ops.cute_gemm.*)

    a, b = torch.randn(128, 64).half(), torch.randn(64, 128).half()
    with pytest.raises(cute_gemm.InputError, match="A must be on a CUDA device, got cpu"):
        torch.ops.cute_gemm.gemm(a, b, "5")
    with pytest.raises(cute_gemm.InputError, match="must be on a CUDA device"):
        torch.ops.cute_gemm.gemm_out(a, b, torch.empty(128, 128), "5")
    with pytest.raises(cute_gemm.InputError, match="must be on a CUDA device"):
        cute_gemm.gemm(a, b, phase="best")


def test_the_public_names():
    import cute_gemm

    assert {"gemm", "linear", "compile_only", "InputError", "UnsupportedError", "__version__"} <= set(dir(cute_gemm))
    assert cute_gemm.linear.__module__ == "cute_gemm.runtime.gemm"
    assert cute_gemm.InputError is InputError and issubclass(cute_gemm.InputError, ValueError)
    assert not hasattr(cute_gemm, "sys")
    with pytest.raises(AttributeError):
        cute_gemm.nothing_here  # noqa: B018


def test_compile_only_a_config_variant(tmp_path, monkeypatch):
    import cute_gemm

    monkeypatch.setenv("CUTE_GEMM_CACHE_DIR", str(tmp_path))
    plan = cute_gemm.compile_only("8", {"bn": 128, "stages": 6}, "sm90")
    assert plan.target == "sm_90a" and plan.kernel.cfg.bn == 128 and plan.kernel.cfg.stages == 6
    assert plan.source == "compiled" and any(tmp_path.rglob("*.o"))  # a later gemm() on an H200 loads it
    assert cute_gemm.compile_only("8", "bn=128,stages=6", "sm_90a").source == "disk"


@pytest.mark.parametrize("arch,over", [("sm90", None), ("sm100", "bias=true,activation=gelu,residual=true")])
def test_compile_only_phase_11(arch, over, tmp_path, monkeypatch):
    """Phase 11 compiles with its default config (no epilogue: phase 10's kernel) and with the epilogue on; the
    compiled function takes the epilogue's tensors the config asks for (a, b, c[, bias][, residual])."""
    import cute_gemm
    from cute_gemm.runtime.compile import epilogue_inputs

    monkeypatch.setenv("CUTE_GEMM_CACHE_DIR", str(tmp_path))
    plan = cute_gemm.compile_only("11", over, arch)
    assert plan.kernel.phase == "11" and plan.source == "compiled"
    assert tuple(epilogue_inputs(plan.kernel)) == (() if over is None else ("bias", "residual"))


@pytest.mark.parametrize("args,error,message", [
    (("8", {"tile": 3}, "sm90"), InputError, "'tile' is not a field of phase 8's config"),
    (("8", "bn=wide", "sm90"), InputError, "bn='wide' is not an integer"),
    (("12", None, "sm90"), InputError, "unknown phase '12'"),
    (("11", "activation=tanh", "sm100"), UnsupportedError, "sm100:11 with activation=tanh does not compile for "
                                                           "sm_100a: activation='tanh': one of none, relu, gelu, silu"),
    (("5", None, "sm80"), InputError, "unknown arch 'sm80'"),
    (("8", None, "sm100"), UnsupportedError, "no sm100 kernel for phase 8"),
    (("6", {"epi_stages": 1}, "sm90"), UnsupportedError, "sm90:6 with epi_stages=1 does not compile for sm_90a: "
                                                         "epi_stages=1: epi_stages >= 2"),
])
def test_compile_only_refusals(args, error, message, tmp_path, monkeypatch):
    import cute_gemm

    monkeypatch.setenv("CUTE_GEMM_NO_DISK_CACHE", "1")
    with pytest.raises(error, match=message) as exc:
        cute_gemm.compile_only(*args)
    assert "\n" not in str(exc.value)
