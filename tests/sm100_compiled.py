"""One compile per (sm100 phase, target, config) for all the sm100 test files of a pytest run.

The compile is the one that runs (symbolic M, N, K): the same PTX serves every shape.
"""

from functools import lru_cache

from cute_gemm.runtime import registry
from cute_gemm.runtime.compile import compile_kernel


@lru_cache(maxsize=None)
def compiled(key: str, target: str = "sm_100a", config=None):
    """(kernel with its attributes filled, PTX text) of registered phase ``key`` ("sm100:6")."""
    entry = registry.resolve(key, "sm100")
    kernel = entry.make(config)
    comp = compile_kernel(kernel, target, keep=True)
    assert comp.ptx, f"{key} for {target}: no PTX"
    return kernel, comp.ptx
