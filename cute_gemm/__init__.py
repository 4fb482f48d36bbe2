"""cute-gemm: the tcgen05 GEMM worklog's phases as CuTe DSL kernels, with a shared harness.

    import torch, cute_gemm
    c = cute_gemm.gemm(a, b, phase="5")   # a [M,K], b [K,N]: fp16 or bf16, either major; c [M,N] fp32
    y = cute_gemm.linear(x, w, bias)      # F.linear's meaning: x [..., K], an nn.Linear weight w [N, K]
    y = cute_gemm.gemm(a, b, phase="best", bias=bias, activation="gelu", residual=r)  # one fused kernel
    w13 = cute_gemm.interleave_gate_up(w_gate, w_up)   # once: rows gate 0, up 0, gate 1, up 1, ...
    h = cute_gemm.gated_linear(x, w13)                # SwiGLU: silu(x @ w_gate.T) * (x @ w_up.T), one kernel
    skipped = cute_gemm.nn.swap_linear(model)   # a model's nn.Linear layers on the kernels, trainable

The names a caller needs are here: ``gemm``, ``linear`` (autograd included), ``gated_linear`` and
``interleave_gate_up`` (a gated MLP's SwiGLU / GeGLU projection, fused), ``compile_only`` (a phase,
config and layout compiled without a GPU), ``nn`` (``Linear``, an ``nn.Linear`` on the kernels, and
``swap_linear``), ``InputError`` and ``UnsupportedError``. Importing the package loads only the standard
library: ``gemm``, ``linear``, ``compile_only`` and ``nn`` load the runtime (``cute_gemm.runtime``) on
first use, torch and the DSL load when a kernel is first compiled or run. The torch custom ops
``torch.ops.cute_gemm.gemm``, ``gemm_out``, ``gemm_epilogue``, ``linear``, ``gated_linear``, ``linear_dx`` and
``linear_dw`` are registered on import when torch is already loaded.

The package's layers, each importing only those before it: ``errors`` -> ``runtime`` (what ``gemm()``
runs) -> ``measure`` (check and time on a GPU) -> ``profiling`` (generated code, Nsight Compute) ->
``report`` (tables and plots) -> ``cli`` (the ``cute-gemm`` command); ``nn`` (torch modules) sits on
the runtime.
"""

import sys as _sys

from cute_gemm.errors import InputError, UnsupportedError

__version__ = "0.2.0"
__all__ = ["gemm", "linear", "gated_linear", "interleave_gate_up", "compile_only", "nn", "InputError",
           "UnsupportedError", "__version__"]

_LAZY = {name: "cute_gemm.runtime.gemm" for name in ("gemm", "linear", "gated_linear", "interleave_gate_up",
                                                      "compile_only")}


def __getattr__(name):
    """``cute_gemm.gemm`` / ``linear`` / ``gated_linear`` / ``interleave_gate_up`` / ``compile_only`` / ``nn``: the runtime (or the torch modules) is
    imported on first use, not by ``import cute_gemm``."""
    if name == "nn":
        import importlib

        return importlib.import_module("cute_gemm.nn")  # the submodule sets itself as the attribute
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'cute_gemm' has no attribute {name!r}")


def __dir__():
    return sorted({*globals(), *_LAZY, "nn"})


if "torch" in _sys.modules:  # register torch.ops.cute_gemm.* now, so they exist right after `import cute_gemm`
    from cute_gemm.runtime import torch_ops as _torch_ops  # noqa: F401
