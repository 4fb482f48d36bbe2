"""One compile per (sm100 phase, target, config, operands) for all the sm100 test files of a pytest run.

The compile is the one that runs (symbolic M, N, K): the same PTX serves every shape. For sm_100a it is
the PTX machine's compile (``ptxkit.harness``), so the PTX rules, the signatures and the simulation of
a phase share one.
"""

from functools import lru_cache

from cute_gemm.profiling.codegen import ptxas_resources
from cute_gemm.runtime import registry
from cute_gemm.runtime.compile import compile_kernel
from ptxkit import harness

_PTXAS: dict = {}


@lru_cache(maxsize=None)
def compiled(key: str, target: str = "sm_100a", config=None, operands=None):
    """(kernel with its attributes filled, PTX text) of registered phase ``key`` ("sm100:6") for
    ``operands`` (``phases.operands.Operands``; None: the worklog's)."""
    if target == "sm_100a":
        kernel, ptx, remarks = harness.compiled_ptx(key, config, operands)
    else:
        kernel = registry.resolve(key, "sm100").make(config, operands)
        comp = compile_kernel(kernel, target, keep=True)
        ptx, remarks = comp.ptx, comp.ptxas
    assert ptx, f"{key} for {target}: no PTX"
    _PTXAS[(key, target, config, operands)] = remarks
    return kernel, ptx


def resources(key: str, target: str = "sm_100a", config=None, operands=None) -> dict:
    """ptxas's registers / spills / stack of that compile (``cute_gemm.profiling.codegen.ptxas_resources``)."""
    compiled(key, target, config, operands)
    return ptxas_resources(_PTXAS[(key, target, config, operands)])
