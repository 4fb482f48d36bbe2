"""Calling a phase on torch tensors: ``cute_gemm.gemm(a, b, phase=3)``.

The arch (sm90 / sm100) comes from the tensors' device; everything that could fail is checked on the
host before anything compiles or launches. Compiled kernels are cached per (target, phase, config, shape).
"""

from __future__ import annotations

import dataclasses

from cute_gemm import arch as _arch
from cute_gemm import registry
from cute_gemm.compile import compile_kernel
from cute_gemm.problem import InputError, Problem, poisoned_output, to_cute, validate

_CACHE: dict = {}


class UnsupportedError(RuntimeError):
    """The phase cannot run here: wrong GPU architecture, or a shape it cannot do."""


def device_target(device) -> str:
    """'sm_90a' / 'sm_100a' / 'sm_103a' for a CUDA device, or UnsupportedError."""
    import torch

    major, minor = torch.cuda.get_device_capability(device)
    tgt = _arch.target_of_capability(major, minor)
    if tgt is None:
        name = torch.cuda.get_device_name(device)
        raise UnsupportedError(
            f"{name} is compute capability {major}.{minor}; cute-gemm kernels need 9.0 (Hopper, sm90 phases) "
            f"or 10.0/10.3 (Blackwell, sm100 phases)"
        )
    return tgt


def prepare(entry: registry.PhaseEntry, p: Problem, target: str, config=None):
    """The phase instance for this problem, after checking the arch and the shape (no compile yet)."""
    fam = _arch.family(target)
    if entry.arch != fam:
        raise UnsupportedError(
            f"{entry.key} is a {entry.arch} kernel and this GPU is {target}; "
            f"run the {fam} phases instead (cute-gemm list --arch {fam})"
        )
    kernel = entry.make(config)
    why = kernel.can_implement(p.m, p.n, p.k)
    if why:
        raise UnsupportedError(f"{entry.key} cannot do {p}: " + "; ".join(why))
    return kernel


def compiled_for(entry: registry.PhaseEntry, p: Problem, target: str, a, b, c, stream, config=None):
    """The compiled kernel for (target, phase, config, shape), compiling on first use."""
    kernel = prepare(entry, p, target, config)
    key = (target, entry.key, dataclasses.astuple(kernel.cfg), p)
    hit = _CACHE.get(key)
    if hit is None:
        hit = compile_kernel(kernel, target, *to_cute(a, b, c), stream)
        _CACHE[key] = hit
    return hit


def current_stream():
    """The torch stream as the CUstream the DSL launches on, so CUDA events time the right stream."""
    import torch
    from cuda.bindings.driver import CUstream

    return CUstream(torch.cuda.current_stream().cuda_stream)


def launcher(entry: registry.PhaseEntry, a, b, c, config=None):
    """A zero-argument function that launches the phase on (a, b) -> c on the current stream."""
    p = validate(a, b, c)
    target = device_target(a.device)
    stream = current_stream()
    comp = compiled_for(entry, p, target, a, b, c, stream, config)
    args = (*to_cute(a, b, c), stream)
    fn = comp.fn

    def launch():
        fn(*args)

    return launch


def gemm(a, b, phase="5", out=None, config=None, arch: str | None = None):
    """C = A @ B with one phase's kernel. A [M,K] fp16 row-major, B [K,N] fp16 row-major, C fp32.

    ``phase``: '0', '1', '2a', '2b' (or '2'), '3', '4', '5'. ``out``: an fp32 [M,N] tensor to write
    (a fresh one, NaN-poisoned, otherwise). ``arch`` forces 'sm90'/'sm100' (default: the device's).
    """
    import torch

    p = validate(a, b, out)
    target = device_target(a.device)
    if arch is not None and _arch.family(arch) != _arch.family(target):
        raise UnsupportedError(f"asked for {arch} kernels but {a.device} is {target}")
    entry = registry.get(_arch.family(target), phase)
    c = out if out is not None else poisoned_output(p, a.device)
    with torch.cuda.device(a.device):
        launcher(entry, a, b, c, config)()
    return c


__all__ = ["gemm", "launcher", "device_target", "UnsupportedError", "InputError"]
