"""Plans: one compiled kernel per (device, phase, config, operands), and the eager call that runs one.

A [M,K] and B [K,N] fp16 or bf16, each row- or column-major; C [M,N] fp32, fp16 or bf16, row-major. The
arch (sm90 / sm100) comes from the tensors' device, the operands (``phases.operands.Operands``: dtypes and
majors) from the tensors themselves. One compiled kernel per (device, phase, config, operands) serves
every shape ("a plan"): the first call for a plan compiles it (or loads it from the disk cache of an
earlier process, ``cute_gemm.runtime.cache``), every later call only looks the plan up, checks what the
compiled entry cannot (the shape rule of the phase, devices) and calls it.

The fast path reads a call's key in a few attribute reads -- the dtypes of A, B and C and whether A and
B are contiguous (row-major), beside the phase, config, arch and device -- and looks its plan up in one
dict (``_FAST``, filled by the checked path). The compiled entry itself checks dtypes, ranks, matching extents, strides
(contiguity) and alignment before it launches; if it refuses an argument, the call is validated again in
Python to say exactly what is wrong (``InputError``). So bad input gets a clear error before anything
launches, and good input pays no Python validation at all.

Empty problems launch nothing: M == 0 or N == 0 gives an empty C, K == 0 a C of zeros (with ``accumulate``, C as
it was).

``accumulate`` (C += A @ B into ``out``) runs the phase's config with its ``accumulate`` field on: the TMA-store
phases (sm90 5-8) add each C tile into ``out`` with the TMA's reduce-add. The field is part of the config, so such
a call has a plan (and a compile) of its own; the fast path's key carries the switch.

The fused epilogue (``gemm(..., bias=, activation=, residual=)``: C = act(A @ B + bias) + residual) has a path of its
own, ``run_epilogue``, so that a plain call pays nothing for it: the config of an epilogue phase (``EPILOGUE_PHASES``:
phase 11, the persistent sm90 6, 7 and 8, sm100 6) with the call's fields -- for "best" the model's cheapest row whose
phase takes them, ``choose.resolve_epilogue`` -- a plan per combination, a fast-path key with
(phase, (bias?, activation, residual?, gated?)) in the phase's place, and the kernel called ``fn(a, b, c[, bias][,
residual])`` -- ``compile.epilogue_inputs``' order. An empty problem launches nothing there either: K == 0 is the
epilogue of a zero accumulator, act(bias) + residual, computed by torch ops.

The gated pairs (``gemm(..., gated=True)``, ``GATED_PHASES``) are the same path with one more field: B's columns
(2j, 2j + 1) are (gate, up), C [M, N/2] is act(gate + b) * (up + b) (+ residual [M, N/2]); the fast path's key
carries the switch and checks that C is half B's width (the compiled entry holds C's columns as a symbol of
their own, so it cannot).
"""

from __future__ import annotations

import dataclasses
import threading
import time

from cute_gemm.errors import InputError, UnsupportedError
from cute_gemm.runtime import arch as _arch
from cute_gemm.runtime import cache, registry
from cute_gemm.runtime.machines import max_active_clusters
from cute_gemm.runtime.problem import (Problem, activation_name, fast_majors, overlaps, same_memory, torch_dtype,
                                       validate_call, validate_epilogue)
from phases.base import MAX_ELEMENTS
from phases.operands import WORKLOG, Operands

_PLANS: dict = {}  # (phase, config, arch, device index, operands) -> Plan
# the fast path's table: a call's cheap key -- phase, config, arch, device, the dtypes of A and B, whether
# A and B are contiguous (row-major), out_dtype, out's dtype (and M, N, K for "best") -> its Plan; filled
# by the checked path once a call with that key was valid
_FAST: dict = {}
_FAST_KEY_LEN = 11  # a fast-path key's fields ("best" keys add M, N, K)
_FAST_BEST_MAX = 8192  # "best" keys carry the shape: the table is emptied when it holds this many
_LOCK = threading.Lock()  # compiles and plan creation; the fast path takes no lock
_torch = None  # the torch module, once a call imported it


@dataclasses.dataclass
class Plan:
    """One compiled kernel for one device and operands, and the cheap shape test of its phase."""

    entry: registry.PhaseEntry
    kernel: object  # the phase instance
    target: str  # "sm_90a"
    device: int  # CUDA device index
    fn: object  # fn(a, b, c): the compiled TVM-FFI function
    seconds: float  # compile (or disk-load) time of the first call
    source: str  # "compiled" or "disk"
    divisibility: tuple[int, int, int]
    operands: Operands = WORKLOG
    c_dtype: object = None  # C's torch dtype (what a call without ``out`` allocates)

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
    """The registry entry of ``phase`` on ``target``'s ladder: InputError for an unknown phase id,
    UnsupportedError for another ladder or a phase this ladder lacks."""
    fam = _arch.family(target)
    if arch is not None and _arch.family(arch) != fam:
        raise UnsupportedError(
            f"asked for {_arch.family(arch)} kernels but this GPU is {target}: "
            f"run the {fam} phases instead (cute-gemm list --arch {fam})"
        )
    try:
        return registry.get(fam, phase)
    except LookupError as exc:
        raise UnsupportedError(str(exc)) from None
    except ValueError as exc:
        raise InputError(str(exc)) from None


def fitted_config(entry: registry.PhaseEntry, config, device: int):
    """The config to compile for ``device``: a persistent phase of either ladder (a config with ``sm_count``) whose
    ``sm_count`` is left at the phase's default gets ``sm_count`` = its cluster's CTAs x the clusters of that
    size the GPU holds at once (``max_active_clusters``): a B200 may hold fewer than 148 / 4 clusters of 4, an
    H200 holds 30 of 4 on its 132 SMs (clusters do not straddle GPCs), and a persistent grid larger than what
    fits runs its last clusters after others exit, a second wave. Pairs fill an H200 (66 of 2: the same config).
    Anything else -- no GPU (``device`` < 0), another phase, an ``sm_count`` the caller chose, a failed query --
    keeps ``config`` (None: the default), so the compile key (the config) changes only when the field does."""
    cfg = entry.configured(config)
    if device < 0 or not hasattr(cfg, "sm_count"):
        return config
    if cfg.sm_count != entry.default_config().sm_count:
        return config
    ctas = entry.cluster_ctas(cfg)
    fits = max_active_clusters(ctas, device)
    if not fits:
        return config
    return dataclasses.replace(cfg, sm_count=ctas * fits)


def compile_plan(entry: registry.PhaseEntry, target: str, device: int, config=None, operands=None) -> Plan:
    """Compile (or load from the disk cache) the phase's kernel for ``target`` (``device`` -1: none) and
    ``operands`` (None: the worklog's). On a GPU a persistent phase's grid is what fits
    (``fitted_config``)."""
    from cute_gemm.runtime.compile import compile_kernel

    config = fitted_config(entry, config, device)
    kernel = entry.make(config, operands)
    ops = kernel.operands
    name = cache.entry_name(entry.key, target, kernel.cfg, ops)
    t0 = time.perf_counter()
    fn = cache.load(name) if cache.enabled() else None
    source = "disk"
    if fn is None:
        fn = compile_kernel(kernel, target).fn
        source = "compiled"
        if cache.enabled():
            cache.store(name, fn)
    return Plan(entry, kernel, target, device, fn, time.perf_counter() - t0, source, kernel.divisibility(), ops,
                torch_dtype(ops.c))


def plan_for(a, phase="5", config=None, arch: str | None = None, operands: Operands = WORKLOG) -> Plan:
    """The plan for ``phase`` and ``operands`` on ``a``'s device, compiled on first use (thread-safe)."""
    dev = a.get_device()
    key = (phase, config, arch, dev, operands)
    plan = _PLANS.get(key)
    if plan is None:
        with _LOCK:
            plan = _PLANS.get(key)
            if plan is None:
                target = device_target(a.device)
                plan = compile_plan(entry_for(phase, target, arch), target, dev, config, operands)
                _PLANS[key] = plan
    return plan


def operand_refusals(kernel) -> list[str]:
    """Why ``kernel`` cannot take its operands (the phase's own ``operand_problems``; phases 0-1 take the
    worklog's only)."""
    return kernel.operand_problems(kernel.operands)


def refusals(kernel, m: int, n: int, k: int) -> list[str]:
    """Why ``kernel`` cannot compute (m, n, k) with its operands (``can_implement`` includes the operands)."""
    return kernel.can_implement(m, n, k)


ACCUMULATE_PHASES = "sm90 phases 5, 6, 7, 8"  # those whose config has ``accumulate`` (the TMA-store epilogue)


def accumulating(entry: registry.PhaseEntry, config):
    """``config`` (None, a config or overrides) of ``entry`` with ``accumulate`` on; UnsupportedError for a phase
    whose epilogue cannot add into C."""
    cfg = entry.configured(config)
    if not hasattr(cfg, "accumulate"):
        raise UnsupportedError(f"{entry.key} cannot accumulate (C += A @ B): it is an epilogue of the TMA-store "
                               f"phases, {ACCUMULATE_PHASES}")
    return dataclasses.replace(cfg, accumulate=True)


def checked(a, b, out, phase, config, arch, out_dtype=None, accumulate=False, epilogue=False,
            gated=False) -> tuple[Plan, Problem]:
    """Everything checked in Python with clear messages -- the tensors, then whether the phase takes this
    shape and these operands (and, with ``accumulate``, can add into ``out``) -- before anything compiles;
    then the plan (the slow path). ``epilogue``: the call passes the fused epilogue's tensors (checked by
    ``checked_epilogue``); without it a config that reads a bias or a residual is refused. ``gated``: the call
    asked for the gated pairs (C [M, N/2]); a config whose ``gated`` field says otherwise is refused."""
    p, ops = validate_call(a, b, out, out_dtype, gated)
    target = device_target(a.device)
    entry = entry_for(phase, target, arch)
    if accumulate:
        config = accumulating(entry, config)
    elif config is not None:  # the phase's config, or field overrides as compile_only takes them
        config = entry.configured(config)
    if out is None and getattr(config, "accumulate", False):
        raise InputError("accumulate (C += A @ B) adds into out=: give the C to add to")
    if not epilogue and (getattr(config, "bias", False) or getattr(config, "residual", False)):
        raise InputError(f"{entry.key}'s config reads a bias or a residual (bias=True / residual=True): pass the "
                         f"tensors as gemm(..., bias=, residual=), which sets those fields")
    if getattr(config, "gated", False) != gated:
        raise InputError(f"{entry.key}'s config has gated=True: C is then [M, N/2] (gated pairs), so the call says "
                         f"so itself -- gemm(..., gated=True), which sets that field")
    kern = entry.make(config, ops)
    why = refusals(kern, p.m, p.n, p.k) if min(p.m, p.n, p.k) > 0 else operand_refusals(kern)
    if why:
        raise UnsupportedError(f"{entry.key} cannot do {p} with {ops.label()}: " + "; ".join(why))
    return plan_for(a, phase, config, arch, ops), p


def _key(a, b, phase, out, config, arch, out_dtype, accumulate=False):
    """The fast path's key of a call (``run`` builds the same tuple inline)."""
    return (phase, config, arch, a.get_device(), a.dtype, b.dtype, a.is_contiguous(), b.is_contiguous(), out_dtype,
            None if out is None else out.dtype, accumulate)


def _remember(key, plan, a, b):
    """Later calls with ``key`` take the fast path to ``plan`` -- when the cheap majors of the key are the ones
    the checked path chose (a tensor with an extent of 1 may have needed the other: it stays checked)."""
    if fast_majors(a, b) == (plan.operands.a_major, plan.operands.b_major):
        if len(key) > _FAST_KEY_LEN and len(_FAST) >= _FAST_BEST_MAX:
            _FAST.clear()
        try:
            _FAST[key] = plan
        except TypeError:  # a config given as a dict: such calls stay on the checked path
            pass


def _run_checked(a, b, phase, out, config, arch, out_dtype, accumulate=False):
    import torch

    if accumulate and out is None:
        raise InputError("accumulate=True adds A @ B into out= (C += A @ B): give out")
    key = None
    if phase == "best":
        p, ops = validate_call(a, b, out, out_dtype)
        if min(p.m, p.n, p.k) == 0:
            c = out if out is not None else torch.empty((p.m, p.n), device=a.device, dtype=torch_dtype(ops.c))
            return c.zero_() if p.k == 0 and not accumulate else c
        key = (*_key(a, b, phase, out, config, arch, out_dtype, accumulate), p.m, p.n, p.k)
        phase, config = _pick_best(a, config, arch, p, ops, accumulate)
        accumulate = False  # the pick's config has the field on
    plan, p = checked(a, b, out, phase, config, arch, out_dtype, accumulate)
    _remember(key or _key(a, b, phase, out, config, arch, out_dtype, accumulate), plan, a, b)
    c = out if out is not None else torch.empty((p.m, p.n), device=a.device, dtype=plan.c_dtype)
    if p.k == 0:  # C = 0, or with accumulate C += 0: C as it was
        return c if getattr(plan.kernel.cfg, "accumulate", False) else c.zero_()
    if p.m and p.n:
        with torch.cuda.device(a.device):
            plan.fn(a, b, c)
    return c


def run(a, b, phase="5", out=None, config=None, arch: str | None = None, out_dtype=None, accumulate=False):
    """``cute_gemm.gemm`` run eagerly (its arguments and errors): the plan of the call's key looked up and
    called; the first call of a key, or any call the cheap tests do not take, goes through the checked
    path, which reads the operands from the tensors."""
    global _torch
    try:
        m, k = a.shape
        n = b.shape[1]
        dev = a.get_device()
        key = (phase, config, arch, dev, a.dtype, b.dtype, a.is_contiguous(), b.is_contiguous(), out_dtype,
               None if out is None else out.dtype, accumulate)
        plan = _FAST[key if phase != "best" else (*key, m, n, k)]
    except Exception:  # a new key, or not a pair of 2-D tensors: the checked path says which
        return _run_checked(a, b, phase, out, config, arch, out_dtype, accumulate)
    if not plan.fits(m, n, k) or b.get_device() != dev:
        return _run_checked(a, b, phase, out, config, arch, out_dtype, accumulate)
    if out is None:
        if _torch is None:
            import torch as _torch
        out = _torch.empty((m, n), device=a.device, dtype=plan.c_dtype)
    elif out.get_device() != dev or overlaps(out, a) or overlaps(out, b):  # the checked path says what is wrong
        return _run_checked(a, b, phase, out, config, arch, out_dtype, accumulate)
    try:
        plan.fn(a, b, out)
    except Exception as exc:  # the compiled entry refused an argument before launching: say what
        cfg = plan.kernel.cfg if phase == "best" and plan.kernel.cfg != plan.entry.default_config() else None
        checked(a, b, out, plan.entry.phase, config if phase != "best" else cfg, arch, out_dtype,
                accumulate and phase != "best")
        raise InputError(f"{plan.entry.key}: {exc}") from exc
    return out


# ------------------------------------------------------------------------------------------ the fused epilogue
EPILOGUE_PHASE = "11"  # the phase whose lesson is the fused epilogue (both ladders)
# every phase whose config takes the epilogue fields: phase 11, and the persistent phases that carry the same switch
EPILOGUE_PHASES = {"sm90": ("6", "7", "8", "11"), "sm100": ("6", "11")}
# those of them that also take the gated pairs (C [M, N/2]): sm100's persistent phase does not (its TMEM chunks)
GATED_PHASES = {"sm90": ("6", "7", "8", "11"), "sm100": ("11",)}


def epilogue_config(entry: registry.PhaseEntry, config, bias: bool, activation: str, residual: bool,
                    gated: bool = False):
    """``config`` (None, a config or overrides) of an epilogue phase (``EPILOGUE_PHASES``) with the call's epilogue
    fields set (what the call's tensors say, whatever the config had), then checked (``PhaseEntry.configured``);
    UnsupportedError naming those phases for any other phase, and naming ``GATED_PHASES`` for ``gated`` on any
    other phase."""
    if gated and entry.phase not in GATED_PHASES.get(entry.arch, ()):
        has = ", ".join(GATED_PHASES.get(entry.arch, ()))
        raise UnsupportedError(f"{entry.key} has no gated pairs (gated=True: C [M, N/2] = act(gate) * up): {entry.arch} "
                               f"phases {has} have them, and phase=\"best\" picks among them")
    if entry.phase not in EPILOGUE_PHASES.get(entry.arch, ()):
        has = ", ".join(EPILOGUE_PHASES.get(entry.arch, ()))
        raise UnsupportedError(f"{entry.key} has no fused epilogue (bias=, activation=, residual=): {entry.arch} "
                               f"phases {has} have it (phase 11 has it), and phase=\"best\" picks among them")
    # checked with the epilogue's fields set: the gated pairs halve a slab's C staging, a bias may take smem
    return entry.configured(dataclasses.replace(entry.configured(config, check=False), bias=bias,
                                                activation=activation, residual=residual, gated=gated))


def _epilogue_key(a, b, phase, out, config, arch, out_dtype, epi):
    """The fast path's key of an epilogue call: a plain call's, with (phase, (bias?, activation, residual?, gated?))
    in the phase's place (``run_epilogue`` builds the same tuple inline)."""
    return ((phase, epi), config, arch, a.get_device(), a.dtype, b.dtype, a.is_contiguous(), b.is_contiguous(),
            out_dtype, None if out is None else out.dtype, False)


def _host_epilogue(a, p: Problem, ops: Operands, out, bias, activation, residual, gated=False):
    """An empty problem with an epilogue, on the host side (nothing launches): M == 0 or N == 0 an empty C; K == 0
    the epilogue of a zero accumulator, act(bias) + residual in fp32 by torch ops (gated: act(b_gate) * b_up +
    residual), rounded once to C's type."""
    import torch

    from cute_gemm.runtime.problem import activate, gate_product

    n_c = p.n // 2 if gated else p.n
    c = out if out is not None else torch.empty((p.m, n_c), device=a.device, dtype=torch_dtype(ops.c))
    if p.m and n_c:
        y = c.new_zeros((p.m, p.n), dtype=torch.float32)
        if bias is not None:
            y += bias.float()
        y = gate_product(y, activation) if gated else activate(y, activation)
        if residual is not None:
            y += residual.float()
        c.copy_(y)
    return c


def checked_epilogue(a, b, out, phase, config, arch, out_dtype, bias, activation, residual, gated=False):
    """The slow path of an epilogue call: the tensors (``validate_call``, ``validate_epilogue``), the phase's config
    with the epilogue fields (``epilogue_config``; "best": its pick), then the plan; (None, problem, operands) for an empty problem, which launches nothing."""
    p, ops = validate_call(a, b, out, out_dtype, gated)
    validate_epilogue(p, ops, a, b, out, bias, residual, gated)
    epi = (bias is not None, activation, residual is not None, gated)
    if phase == "best":
        if config is not None:
            raise UnsupportedError('phase="best" picks its own config; pass phase="11" to run a config of yours')
        if min(p.m, p.n, p.k) == 0:
            return None, p, ops
        phase, config = _pick_best(a, None, arch, p, ops, epilogue=epi)
    else:
        entry = entry_for(phase, device_target(a.device), arch)
        config = epilogue_config(entry, config, *epi)
        if min(p.m, p.n, p.k) == 0:
            why = operand_refusals(entry.make(config, ops))
            if why:
                raise UnsupportedError(f"{entry.key} cannot do {p} with {ops.label()}: " + "; ".join(why))
            return None, p, ops
    return checked(a, b, out, phase, config, arch, out_dtype, epilogue=True, gated=gated)[0], p, ops


def _run_checked_epilogue(a, b, phase, out, config, arch, out_dtype, bias, activation, residual, gated=False):
    import torch

    plan, p, ops = checked_epilogue(a, b, out, phase, config, arch, out_dtype, bias, activation, residual, gated)
    if plan is None:
        return _host_epilogue(a, p, ops, out, bias, activation, residual, gated)
    epi = (bias is not None, activation, residual is not None, gated)
    key = _epilogue_key(a, b, phase, out, config, arch, out_dtype, epi)
    _remember(key if phase != "best" else (*key, p.m, p.n, p.k), plan, a, b)
    n_c = p.n // 2 if gated else p.n
    c = out if out is not None else torch.empty((p.m, n_c), device=a.device, dtype=plan.c_dtype)
    with torch.cuda.device(a.device):
        plan.fn(a, b, c, *[t for t in (bias, residual) if t is not None])
    return c


def run_epilogue(a, b, phase="best", out=None, config=None, arch: str | None = None, out_dtype=None, bias=None,
                 activation=None, residual=None, gated=False):
    """``cute_gemm.gemm`` with a fused epilogue, run eagerly: C = act(A @ B + bias) + residual by an epilogue phase
    (``EPILOGUE_PHASES``; "best": ``choose.resolve_epilogue``'s pick); ``gated``: C [M, N/2] = act(gate + b) * (up + b) + residual of B's
    column pairs (phase 11). As ``run``: a key's plan looked up and called as ``fn(a, b, c[, bias][, residual])``
    after the cheap tests (devices, overlaps, C half B's width when gated; the compiled entry checks the rest),
    the checked path for a new key or anything the cheap tests do not take."""
    global _torch
    activation = activation_name(activation)  # InputError before anything else
    gated = bool(gated)
    try:
        m, k = a.shape
        n = b.shape[1]
        dev = a.get_device()
        key = ((phase, (bias is not None, activation, residual is not None, gated)), config, arch, dev, a.dtype,
               b.dtype, a.is_contiguous(), b.is_contiguous(), out_dtype, None if out is None else out.dtype, False)
        plan = _FAST[key if phase != "best" else (*key, m, n, k)]
        ok = plan.fits(m, n, k) and b.get_device() == dev and _apart(a, b, out, bias, residual, dev)
        if gated:  # C's columns are a symbol of their own in the compiled entry: N = 2 x C's is checked here
            ok = ok and n % 16 == 0 and (out is None or out.shape[1] * 2 == n)
    except Exception:  # a new key, or not a pair of 2-D tensors: the checked path says which
        ok = False
    if not ok:
        return _run_checked_epilogue(a, b, phase, out, config, arch, out_dtype, bias, activation, residual, gated)
    if out is None:
        if _torch is None:
            import torch as _torch
        out = _torch.empty((m, n // 2 if gated else n), device=a.device, dtype=plan.c_dtype)
    try:
        if bias is None:
            plan.fn(a, b, out) if residual is None else plan.fn(a, b, out, residual)
        else:
            plan.fn(a, b, out, bias) if residual is None else plan.fn(a, b, out, bias, residual)
    except Exception as exc:  # the compiled entry refused an argument before launching: say what
        checked_epilogue(a, b, out, phase, config, arch, out_dtype, bias, activation, residual, gated)
        raise InputError(f"{plan.entry.key}: {exc}") from exc
    return out


_BIAS_FUSES: dict = {}  # (device, dtypes, contiguity, out dtype, M, N, K) -> whether a bias alone is fused


def bias_fuses(a, b, out_dtype=None) -> bool:
    """phase="best": whether a bias alone (``linear(x, w, bias)``) is added in the kernel's epilogue -- one rounding,
    no pass over C -- rather than by one in-place add after the plain pick: where the model says the fused pick is
    no slower than the plain one plus that pass (``choose.fusing_pays``), once per shape and operands. False where
    the tensors are not a GEMM's (the plain path then says what is wrong)."""
    from cute_gemm.runtime import choose

    try:
        key = (a.get_device(), a.dtype, b.dtype, a.is_contiguous(), b.is_contiguous(), out_dtype, *a.shape, b.shape[1])
    except Exception:  # noqa: BLE001 -- not a pair of 2-D tensors
        return False
    hit = _BIAS_FUSES.get(key)
    if hit is None:
        try:
            p, ops = validate_call(a, b, None, out_dtype)
            hit = min(p.m, p.n, p.k) > 0 and choose.fusing_pays(_family_of(a)[0], p.m, p.n, p.k, ops, bias=True)
        except (InputError, UnsupportedError, LookupError, ValueError):
            hit = False
        if len(_BIAS_FUSES) >= _FAST_BEST_MAX:  # bounded as the fast path's "best" keys are
            _BIAS_FUSES.clear()
        _BIAS_FUSES[key] = hit
    return hit


def _apart(a, b, out, bias, residual, dev) -> bool:
    """The epilogue call's cheap tests: the tensors on A's device, out apart from A, B and the bias, the residual out
    itself or apart from out, A and B (what the compiled entry does not check)."""
    if out is not None and (out.get_device() != dev or overlaps(out, a) or overlaps(out, b)
                            or (bias is not None and overlaps(out, bias))):
        return False
    if bias is not None and bias.get_device() != dev:
        return False
    if residual is not None:
        if residual.get_device() != dev or overlaps(residual, a) or overlaps(residual, b):
            return False
        if out is not None and not same_memory(residual, out) and overlaps(residual, out):
            return False
    return True


_FAMILY: dict = {}  # device index -> ("sm90" / "sm100", the GPU's name: whose tuned table "best" reads)


def _family_of(a) -> tuple[str, str | None]:
    """(ladder, GPU name) of ``a``'s device, asked once per device (``_FAMILY``)."""
    dev = a.get_device()
    if dev not in _FAMILY:
        _FAMILY[dev] = (_arch.family(device_target(a.device)), device_name(dev))
    return _FAMILY[dev]


def device_name(dev: int) -> str | None:
    """The name of CUDA device ``dev`` ('NVIDIA H200'): whose tuned table ``best`` reads; None if torch cannot say."""
    try:
        import torch

        return torch.cuda.get_device_name(dev)
    except Exception:  # noqa: BLE001 -- no name, no table: the model picks
        return None


def _pick_best(a, config, arch, p: Problem, ops: Operands, accumulate=False, epilogue=None):
    """(phase, config) of ``phase="best"`` for a shape and operands (``choose.resolve``: the GPU's tuned pick, else
    the model's ``choose.pick``; with ``accumulate`` among the phases that can add into C, the field on; with
    ``epilogue`` -- (bias?, activation, residual?, gated?) -- the model's cheapest row whose phase takes it,
    ``choose.resolve_epilogue``);
    UnsupportedError for a config of the caller's or a shape no candidate takes."""
    from cute_gemm.runtime import choose

    if config is not None:
        raise UnsupportedError('phase="best" picks its own config; pass a phase id to run a config of yours')
    family, gpu = _family_of(a)
    try:
        fam = _arch.family(arch) if arch else family
        if epilogue:
            phase, cfg, how = choose.resolve_epilogue(fam, p.m, p.n, p.k, ops, gpu, *epilogue)
        else:
            phase, cfg, how = (choose.resolve(fam, p.m, p.n, p.k, ops, gpu, accumulate=True) if accumulate
                               else choose.resolve(fam, p.m, p.n, p.k, ops, gpu))
        if how == "model":
            choose.warn_unfitted(fam, gpu)  # once: datasheet constants (sm100), and how to measure the picks here
        return phase, cfg
    except LookupError as exc:
        why = (f" (accumulate: {ACCUMULATE_PHASES})" if accumulate else " (gated pairs: phase 11)"
               if epilogue and epilogue[3:] == (True,) else " (fused epilogue: phase 11)" if epilogue else "")
        raise UnsupportedError(f"phase 'best': {exc} with {ops.label()}{why}") from exc
    except ValueError as exc:  # an unknown arch name
        raise InputError(str(exc)) from None


def launcher(entry: registry.PhaseEntry, a, b, c, config=None):
    """A zero-argument function that launches ``entry`` on (a, b) -> c on the current stream; the operands
    are those of the tensors (c's dtype is C's).

    Everything is checked once, here; each call of the result is one call of the compiled kernel.
    """
    plan, p = checked(a, b, c, entry.phase, config, entry.arch)  # another ladder's phase: UnsupportedError
    if min(p.m, p.n, p.k) == 0:
        raise UnsupportedError(f"{entry.key}: nothing to launch for the empty problem {p}")
    fn = plan.fn

    def launch():
        fn(a, b, c)

    return launch


__all__ = ["Plan", "run", "launcher", "plan_for", "compile_plan", "device_target", "entry_for", "checked", "refusals",
           "operand_refusals", "max_active_clusters", "fitted_config", "accumulating", "ACCUMULATE_PHASES",
           "run_epilogue", "checked_epilogue", "epilogue_config", "EPILOGUE_PHASE"]
