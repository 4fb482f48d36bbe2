"""Plans: one compiled kernel per (device, phase, config), and the eager call that runs one.

A [M,K] fp16 row-major, B [K,N] fp16 row-major, C [M,N] fp32. The arch (sm90 / sm100) comes from the
tensors' device. One compiled kernel per (device, phase, config) serves every shape ("a plan"): the
first call for a plan compiles it (or loads it from the disk cache of an earlier process,
``cute_gemm.runtime.cache``), every later call only looks the plan up, checks what the compiled entry cannot
(the shape rule of the phase, devices) and calls it. The compiled entry itself checks dtypes, ranks,
matching extents, strides and alignment before it launches; if it refuses an argument, the call is
validated again in Python to say exactly what is wrong (``InputError``). So bad input gets a clear
error before anything launches, and good input pays no Python validation at all.

Empty problems launch nothing: M == 0 or N == 0 gives an empty C, K == 0 a C of zeros.
"""

from __future__ import annotations

import dataclasses
import threading
import time

from cute_gemm.errors import InputError, UnsupportedError
from cute_gemm.runtime import arch as _arch
from cute_gemm.runtime import cache, registry
from cute_gemm.runtime.problem import Problem, validate
from phases.base import MAX_ELEMENTS

_PLANS: dict = {}  # (phase, config, arch, device index) -> Plan
_LOCK = threading.Lock()  # compiles and plan creation; the fast path takes no lock


@dataclasses.dataclass
class Plan:
    """One compiled kernel for one device, and the cheap shape test of its phase."""

    entry: registry.PhaseEntry
    kernel: object  # the phase instance
    target: str  # "sm_90a"
    device: int  # CUDA device index
    fn: object  # fn(a, b, c): the compiled TVM-FFI function
    seconds: float  # compile (or disk-load) time of the first call
    source: str  # "compiled" or "disk"
    divisibility: tuple[int, int, int]

    def fits(self, m: int, n: int, k: int) -> bool:
        """True when the phase takes (m, n, k) as is (no empty dimension, divisibility, 32-bit limits)."""
        dm, dn, dk = self.divisibility
        return (
            m > 0 and n > 0 and k > 0
            and not (m % dm or n % dn or k % dk)
            and m * k < MAX_ELEMENTS and k * n < MAX_ELEMENTS and m * n < MAX_ELEMENTS
        )


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


def entry_for(phase, target: str, arch: str | None) -> registry.PhaseEntry:
    fam = _arch.family(target)
    if arch is not None and _arch.family(arch) != fam:
        raise UnsupportedError(
            f"asked for {_arch.family(arch)} kernels but this GPU is {target}: "
            f"run the {fam} phases instead (cute-gemm list --arch {fam})"
        )
    return registry.get(fam, phase)


def compile_plan(entry: registry.PhaseEntry, target: str, device: int, config=None) -> Plan:
    """Compile (or load from the disk cache) the phase's kernel for ``target`` (``device`` -1: none)."""
    from cute_gemm.runtime.compile import compile_kernel

    kernel = entry.make(config)
    name = cache.entry_name(entry.key, target, kernel.cfg)
    t0 = time.perf_counter()
    fn = cache.load(name) if cache.enabled() else None
    source = "disk"
    if fn is None:
        fn = compile_kernel(kernel, target).fn
        source = "compiled"
        if cache.enabled():
            cache.store(name, fn)
    return Plan(entry, kernel, target, device, fn, time.perf_counter() - t0, source, kernel.divisibility())


def plan_for(a, phase="5", config=None, arch: str | None = None) -> Plan:
    """The plan for ``phase`` on ``a``'s device, compiled on first use (thread-safe)."""
    dev = a.get_device()
    key = (phase, config, arch, dev)
    plan = _PLANS.get(key)
    if plan is None:
        with _LOCK:
            plan = _PLANS.get(key)
            if plan is None:
                target = device_target(a.device)
                plan = compile_plan(entry_for(phase, target, arch), target, dev, config)
                _PLANS[key] = plan
    return plan


def checked(a, b, out, phase, config, arch) -> tuple[Plan, Problem]:
    """Everything checked in Python with clear messages: the slow path, and the plan it needs."""
    p = validate(a, b, out)
    plan = plan_for(a, phase, config, arch)
    if min(p.m, p.n, p.k) > 0:
        why = plan.kernel.can_implement(p.m, p.n, p.k)
        if why:
            raise UnsupportedError(f"{plan.entry.key} cannot do {p}: " + "; ".join(why))
    return plan, p


def _run_checked(a, b, phase, out, config, arch):
    import torch

    plan, p = checked(a, b, out, phase, config, arch)
    c = out if out is not None else torch.empty((p.m, p.n), device=a.device, dtype=torch.float32)
    if p.k == 0:
        return c.zero_()
    if p.m and p.n:
        with torch.cuda.device(a.device):
            plan.fn(a, b, c)
    return c


def run(a, b, phase="5", out=None, config=None, arch: str | None = None):
    """``cute_gemm.gemm`` run eagerly (its arguments and errors): the plan looked up and called; the
    first call of a plan, or any call its cheap test does not take, goes through the checked path."""
    if phase == "best":
        phase, config = _pick_best(a, b, out, config, arch)
    try:
        plan = _PLANS[(phase, config, arch, a.get_device())]
        m, k = a.shape
        n = b.shape[1]
    except Exception:  # no plan yet, or not a pair of 2-D tensors: the checked path says which
        return _run_checked(a, b, phase, out, config, arch)
    if not plan.fits(m, n, k) or b.get_device() != plan.device:
        return _run_checked(a, b, phase, out, config, arch)
    if out is None:
        import torch

        out = torch.empty((m, n), device=a.device, dtype=torch.float32)
    elif out.get_device() != plan.device:
        return _run_checked(a, b, phase, out, config, arch)
    try:
        plan.fn(a, b, out)
    except Exception as exc:  # the compiled entry refused an argument before launching: say what
        checked(a, b, out, phase, config, arch)
        raise InputError(f"{plan.entry.key}: {exc}") from exc
    return out


_FAMILY: dict = {}  # device index -> "sm90" / "sm100"


def _pick_best(a, b, out, config, arch):
    """(phase, config) of ``phase="best"`` for this call's shape (``choose``; cached per shape)."""
    from cute_gemm.runtime import choose

    if config is not None:
        raise UnsupportedError('phase="best" picks its own config; pass a phase id to run a config of yours')
    try:
        dev = a.get_device()
        fam = _FAMILY.get(dev)
        if fam is None:
            fam = _FAMILY[dev] = _arch.family(device_target(a.device))
        m, k = a.shape
        return choose.pick(arch and _arch.family(arch) or fam, m, b.shape[1], k)
    except (UnsupportedError, InputError):
        raise
    except Exception as exc:  # bad input or a shape no candidate takes: say which
        validate(a, b, out)
        raise UnsupportedError(f"phase 'best': {exc}") from exc


def launcher(entry: registry.PhaseEntry, a, b, c, config=None):
    """A zero-argument function that launches ``entry`` on (a, b) -> c on the current stream.

    Everything is checked once, here; each call of the result is one call of the compiled kernel.
    """
    plan, p = checked(a, b, c, entry.phase, config, entry.arch)  # another ladder's phase: UnsupportedError
    if min(p.m, p.n, p.k) == 0:
        raise UnsupportedError(f"{entry.key}: nothing to launch for the empty problem {p}")
    fn = plan.fn

    def launch():
        fn(a, b, c)

    return launch


__all__ = ["Plan", "run", "launcher", "plan_for", "compile_plan", "device_target", "entry_for", "checked"]
