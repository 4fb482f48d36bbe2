"""One compile per (sm90 phase, operands, config) for all the sm90 test files of a pytest run.

The compile is the one that runs (symbolic M, N, K): the same PTX serves every shape.
"""

from functools import lru_cache

from cute_gemm.profiling.codegen import ptxas_resources
from cute_gemm.runtime import registry
from cute_gemm.runtime.compile import compile_kernel


@lru_cache(maxsize=None)
def compiled(key: str, operands=None, config=None):
    """(kernel with its attributes filled, PTX text, ptxas resources) of registered phase ``key`` ("sm90:6")."""
    entry = registry.resolve(key, "sm90")
    kernel = entry.make(config, operands)
    comp = compile_kernel(kernel, "sm_90a", keep=True)
    assert comp.ptx, f"{key} for sm_90a: no PTX"
    return kernel, comp.ptx, ptxas_resources(comp.ptxas)


@lru_cache(maxsize=None)
def compiled_cubin(key: str, operands: str, config: tuple) -> bytes:
    """The cubin of registered phase ``key`` for ``operands`` ('nt bf16 bf16': layout, A/B type, C type) and the
    config overrides ``config`` (a tuple of (field, value) items), compiled for sm_90a."""
    from phases.operands import Operands

    entry = registry.resolve(key, "sm90")
    kernel = entry.make(entry.configured(dict(config)), Operands.of(*operands.split()))
    comp = compile_kernel(kernel, "sm_90a", keep=True)
    assert comp.cubin, f"{key} for sm_90a: no cubin"
    return comp.cubin
