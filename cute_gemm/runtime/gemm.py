"""What a caller imports: ``gemm`` (C = A @ B with one phase's kernel), ``linear`` (F.linear's meaning),
``gated_linear`` (a gated MLP's up projection: SwiGLU / GeGLU in one kernel), ``interleave_gate_up`` and
``compile_only``.

``gemm`` and ``linear`` run eagerly through the plans (``plan.run``, ``linear.run``; with a fused epilogue
-- bias, activation, residual -- ``plan.run_epilogue``); while
``torch.compile`` traces them, they go through the custom ops instead (``torch_ops``), whose fake
implementations give the output's shape and dtype. ``compile_only`` compiles a phase, config and operands
for a target without a GPU: a config variant or a layout can be checked on any machine before it is run on one; ``precompile`` does many at
once in worker processes, into the disk cache.
"""

from __future__ import annotations

from cute_gemm.errors import InputError, UnsupportedError, one_line
from cute_gemm.runtime import linear as _linear
from cute_gemm.runtime import plan
from cute_gemm.runtime.problem import activate, activation_name, gate_product


def gemm(a, b, phase="5", out=None, config=None, arch: str | None = None, out_dtype=None, accumulate=False, *,
         bias=None, activation=None, residual=None, gated=False):
    """C = A @ B with one phase's kernel, fp32 accumulate; with a fused epilogue C = act(A @ B + bias) + residual.

    ``a``: A [M,K], ``b``: B [K,N], both torch.float16 or both torch.bfloat16, each row-major or
    column-major (``x.t()`` of a contiguous tensor: ``gemm(x, w.t())`` is ``x @ w.T`` for an nn.Linear
    weight w [N,K], no copy). C [M,N] row-major is torch.float32 by default; ``out_dtype=torch.float16`` or
    ``torch.bfloat16`` rounds it once on the way out. ``out``: a C to write (its dtype is C's) instead of a
    new one.

    ``accumulate=True``: C += A @ B into ``out`` (required), as the epilogue of the TMA-store phases (sm90 5,
    6, 7, 8; "best" picks among those): each C tile is added into ``out`` by the TMA's reduce-add
    (``cp.reduce.async.bulk.tensor .add``) instead of being stored -- no load of C, no second pass, one add
    per element (deterministic). With a 16-bit C the tile is rounded to C's type before the add (two
    roundings). Eager only; a phase without it raises ``UnsupportedError``. It is the config field
    ``accumulate`` (a plan of its own).

    The fused epilogue (phase 11 of either ladder, the persistent sm90 phases 6, 7 and 8 and sm100 phase 6, or
    ``phase="best"``: the model's cheapest of those at the shape -- phase 11 with phase 10's tile at decode sizes, a
    persistent phase at prefill sizes): ``bias`` a contiguous [N] of A's dtype (as F.linear's), added to
    every row; ``activation`` None / "none", "relu", "gelu" (the tanh form, ``F.gelu(approximate="tanh")``) or
    "silu"; ``residual`` a row-major [M,N] of C's dtype added last (it may be ``out`` itself: each element is read
    before the same thread writes it). All in fp32, rounded to C's type once. Each is a field of those phases'
    configs (a plan of its own); the kernel is called ``fn(a, b, c[, bias][, residual])``. K == 0 computes
    act(bias) + residual with torch ops (nothing launches). Another phase id with any of them, or
    ``accumulate=True`` with them, raises ``UnsupportedError``; a bad tensor or activation name ``InputError``.
    Without them the call is the plain one (no epilogue, no cost).

    ``gated=True`` (the gated pairs: SwiGLU with "silu", GeGLU with "gelu", the plain product with None): B's
    columns are interleaved pairs -- column 2j is gate j, column 2j + 1 is up j -- and C is [M, N/2] with
    C[m, j] = act(acc[m, 2j] + bias[2j]) * (acc[m, 2j + 1] + bias[2j + 1]) (+ residual[m, j]), in fp32, rounded
    once. ``out`` and ``residual`` are [M, N/2]; ``bias`` stays [N] (interleaved like B's columns); N must be a
    multiple of 16. Phase 11 and sm90's persistent phases 6, 7 and 8 (their slabs of 32 accumulator columns staged
    and stored as 16 columns of C), or "best": the model's cheapest of those for the GEMM's (M, N, K) -- phase 11
    with phase 10's tile at decode sizes, a persistent phase at prefill sizes; another phase raises
    ``UnsupportedError``. For an ``nn.Linear``-style weight see ``gated_linear``.

    ``phase``: a phase id of the device's ladder (``cute-gemm list``; '2' means 2b), or "best" (the phase
    and config a model picks per shape and operands). ``config``: a phase config other than the default (the
    phase's frozen dataclass, or field overrides as ``compile_only`` takes them: ``{"bn": 128}``). ``arch``: 'sm90'/'sm100' to insist on a ladder (default: the
    device's). Phases 2a and later take any M, N, K whose contiguous extents are multiples of 8 (K for a
    row-major A, M for a column-major one, N always: C's rows) and every layout and dtype; phases 0-1 the
    worklog's problem only (fp16 A row-major, B row-major, fp32 C, tile multiples). Raises
    ``cute_gemm.InputError`` (dtype, device, layout, alignment, ``out``) or ``cute_gemm.UnsupportedError``
    (a shape or operands the phase cannot do, another ladder's phase) before anything compiles or launches.

    Runs on the current torch stream; under ``torch.compile`` it goes through the custom op
    ``torch.ops.cute_gemm.gemm`` (with an epilogue ``gemm_epilogue``, without ``out=``). One compile per
    (device, phase, config, layout and dtypes) serves every shape, and is kept on disk for the next process.
    Compile or warm a phase before capturing it in a CUDA graph: the first call of a plan compiles.
    """
    if gated or bias is not None or residual is not None or (activation is not None and activation != "none"):
        return _gemm_epilogue(a, b, phase, out, config, arch, out_dtype, accumulate, bias, activation, residual,
                              bool(gated))
    if _compiling():  # torch.compile: the custom op, whose fake implementation gives the output's shape
        from cute_gemm.runtime import torch_ops

        if config is not None or arch is not None or accumulate:
            raise UnsupportedError("under torch.compile gemm() takes phase, out and out_dtype; config=, arch= and "
                                   "accumulate= run eagerly only")
        return torch_ops.call(a, b, phase, out, out_dtype)
    if out is not None and (getattr(a, "requires_grad", False) or getattr(b, "requires_grad", False)):
        _refuse_out_under_autograd()
    return plan.run(a, b, phase, out, config, arch, out_dtype, accumulate)


def _gemm_epilogue(a, b, phase, out, config, arch, out_dtype, accumulate, bias, activation, residual, gated=False):
    """``gemm`` with a fused epilogue: refusals first (activation name, accumulate), then eagerly ``plan.run_epilogue``
    or, under ``torch.compile``, the op ``torch.ops.cute_gemm.gemm_epilogue``."""
    act = activation_name(activation)
    if accumulate:
        raise UnsupportedError("accumulate=True (C += A @ B) and a fused epilogue (bias=, activation=, residual=) do "
                               "not go together: the reduce-add epilogue of phases 5-8 adds the raw product; add "
                               "act(A @ B + bias) into C with residual=out (phase 11) instead")
    if _compiling():
        from cute_gemm.runtime import torch_ops

        if config is not None or arch is not None or out is not None:
            raise UnsupportedError("under torch.compile gemm() with bias=, activation= or residual= takes phase and "
                                   "out_dtype; out=, config= and arch= run eagerly only")
        return torch_ops.call_epilogue(a, b, bias, residual, act, phase, out_dtype, gated)
    if out is not None and (getattr(a, "requires_grad", False) or getattr(b, "requires_grad", False)):
        _refuse_out_under_autograd()
    return plan.run_epilogue(a, b, phase, out, config, arch, out_dtype, bias, act, residual, gated)


def _refuse_out_under_autograd():
    """torch.mm's rule: a result written into ``out`` has no autograd history, so with grad enabled and an input
    that requires grad, ``out=`` is refused (as torch refuses it) rather than silently cut from the graph."""
    import torch

    if torch.is_grad_enabled():
        raise InputError("gemm(): out= does not support automatic differentiation, but A or B requires grad: "
                         "drop out=, or call it under torch.no_grad()")


def linear(x, w, bias=None, phase="best", out_dtype=None, activation=None, accumulate_grad=False):
    """y = act(x @ w.T (+ bias)), as ``torch.nn.functional.linear`` then the activation, forward and backward:
    x [..., K] fp16 or bf16, w [N, K] of the same dtype (an ``nn.Linear`` weight), bias [N] of that dtype or None;
    y [..., N] in x's dtype, or ``out_dtype`` (torch.float32, torch.float16 or torch.bfloat16; fp32 accumulate
    either way).

    ``phase``: "best" (default: the phase and config a model picks per shape, layout and dtypes) or a phase
    id of the device's ladder (2a or later: phases 0-1 take only the worklog's layout). K must be a multiple
    of 8 (the rows of x and of w are 16-byte TMA rows), and so must N (the rows of y). Leading dims are
    flattened without a copy when x's layout allows it (``reshape``); w is read in place as ``w.t()``.

    Training: when autograd records the call (grad mode, and x, w or bias requiring grad) the backward runs
    the same kernels -- dX = dY @ W ("nn") and dW = dY^T @ X ("tn", any number of tokens) with ``phase`` --
    and db = dY summed over tokens, each only if asked for. Eagerly that is an ``autograd.Function``; under
    ``torch.compile`` (``fullgraph=True`` too) the custom op ``torch.ops.cute_gemm.linear`` with its
    registered autograd, the backward's GEMMs the ops ``linear_dx`` / ``linear_dw``. Under
    ``torch.autocast`` (fp16 or bf16) x, w and bias are cast to the autocast dtype first, as F.linear's are,
    so an fp32 master weight gets an fp32 gradient through the cast. In a CUDA graph: warm every plan once
    before capturing (the first call of a plan compiles), the backward's too. dW is a new tensor that autograd
    adds into an existing ``w.grad`` (one more pass over it) unless ``accumulate_grad=True`` (eager, opt-in):
    then, where ``w`` is a leaf whose ``.grad`` exists, the backward adds dW into it in place with the
    accumulate epilogue (``gemm(..., out=w.grad, accumulate=True)``, sm90) and returns no dW -- gradient
    accumulation over micro-batches without the extra pass; hooks on ``w`` (DDP's) then see no gradient, so
    use it with ``loss.backward()`` only. Elsewhere (sm100, autocast's cast weight, the first micro-batch) dW is
    returned as usual.

    ``activation``: None / "none", "relu", "gelu" (tanh form) or "silu". Inference (nothing recorded) with
    ``phase`` "best" or "11": one kernel with the fused epilogue -- the bias added and the activation applied
    in fp32 before the one rounding (``gemm(..., bias=, activation=)``; "best" picks among the phases that
    have it). With another phase id the activation runs after the GEMM by torch ops. Under autograd the
    forward is z = x @ w.T + b (the op or ``autograd.Function`` below) and y = act(z) by torch ops, so the
    backward is torch's derivative of act from the saved z (recompute-free; z is kept, one [..., N] tensor).

    A bias without an activation (and z under autograd) with "best": added in the kernel's epilogue where the
    time model says the fused pick is no slower than the plain pick plus one pass over y (at decode sizes the
    two are one tile; at some prefill sizes the plain pick is a phase without the epilogue, stream-K or
    split-K tiles, faster by more than the pass), else by one in-place torch op after the plain pick
    (``y.add_(bias)``). Fused, y is rounded once, as F.linear on cuBLASLt does; added after, a 16-bit y is
    rounded twice -- which can flip the sign of a z near zero, and so relu's mask.

    Raises ``cute_gemm.InputError`` for what F.linear refuses (shapes; x and w of two dtypes, e.g. an fp32
    weight under a 16-bit x outside autocast; a bias of another dtype) or the kernels cannot take (fp32 x and
    w, alignment), ``UnsupportedError`` for a phase that cannot take the problem -- before anything compiles
    or launches.
    """
    x, w, bias = _linear.autocast(x, w, bias)
    act = "none" if activation is None else activation_name(activation)
    if _compiling():  # torch.compile: the custom op (differentiable), whose fake implementation gives the output
        from cute_gemm.runtime import torch_ops

        return torch_ops.call_linear(x, w, bias, phase, out_dtype, act)
    if _linear.wants_grad(x, w, bias):
        from cute_gemm.runtime import torch_ops

        return activate(torch_ops.apply_linear(x, w, bias, phase, out_dtype, accumulate_grad), act)
    return _linear.run(x, w, bias, phase, out_dtype, act)


def gated_linear(x, w_gate_up, bias=None, activation="silu", phase="best", out_dtype=None):
    """A gated MLP's up projection in one kernel: y = act(x @ w_gate.T + b_gate) * (x @ w_up.T + b_up).

    THE WEIGHT'S ROWS ARE INTERLEAVED: ``w_gate_up`` [2 * N_out, K] holds gate row j at row 2j and up row j at
    row 2j + 1 (gate 0, up 0, gate 1, up 1, ...), and ``bias`` [2 * N_out] likewise -- NOT the halves [gate; up]
    that most checkpoints concatenate. Convert once with ``interleave_gate_up(w_gate, w_up)`` (two Linear layers)
    or ``interleave_gate_up(w_gate_up)`` (concatenated halves); a weight in the wrong order runs without an error
    and gives wrong numbers.

    x [..., K] fp16 or bf16, the weight of the same dtype; y [..., N_out] in x's dtype or ``out_dtype`` (fp32,
    fp16, bf16). ``activation``: "silu" (SwiGLU, the default), "gelu" (GeGLU, tanh form), "relu" (ReGLU) or None
    / "none" (the plain product gate * up). 2 * N_out must be a multiple of 16 and K of 8.

    Inference (nothing recorded) with ``phase`` "best" (the model's pick among the phases with the pairs: phase 11
    with phase 10's tile at decode sizes, sm90's persistent phases at prefill sizes) or "11": one kernel --
    ``gemm(x, w_gate_up.t(), bias=, activation=, gated=True)``: both products, the bias, the activation and the
    product of the pair in fp32 in the epilogue, rounded once; the [..., 2 * N_out] pre-activation is never
    written. Another phase id: the GEMM, then the pair by torch ops. Under autograd (grad mode and x, the weight
    or the bias requiring grad) the forward is ``linear``'s unfused z = x @ w_gate_up.T + b (its kernels, its
    backward), then y = act(z[..., 0::2]) * z[..., 1::2] by torch ops, so the backward is torch's derivative of
    the pair from the saved z ([..., 2 * N_out], kept until the backward). Under ``torch.compile`` the op
    ``torch.ops.cute_gemm.gated_linear`` (fake: [..., N_out]) where nothing is recorded, else the linear op and
    torch ops as eagerly. Raises ``InputError`` / ``UnsupportedError`` as ``linear`` does, before anything compiles.
    """
    from cute_gemm.runtime import torch_ops  # the ops and linear's autograd (torch is loaded: x is a tensor)

    x, w_gate_up, bias = _linear.autocast(x, w_gate_up, bias)
    act = "none" if activation is None else activation_name(activation)
    _linear.check_gated(x, w_gate_up, bias)
    if _compiling():
        return torch_ops.call_gated_linear(x, w_gate_up, bias, phase, out_dtype, act)
    if _linear.wants_grad(x, w_gate_up, bias):
        return gate_product(torch_ops.apply_linear(x, w_gate_up, bias, phase, out_dtype), act)
    return _linear.run_gated(x, w_gate_up, bias, phase, out_dtype, act)


def interleave_gate_up(gate, up=None):
    """The gated pairs' interleaved order from a model's own: ``interleave_gate_up(w_gate, w_up)`` for two weights
    [N_out, K] (or two biases [N_out]) -> [2 * N_out, K] (or [2 * N_out]) with gate row j at 2j and up row j at
    2j + 1; ``interleave_gate_up(w)`` for one tensor whose first half is gate and second half up ([gate; up], as a
    fused ``gate_up_proj`` is stored) -> the same. A new contiguous tensor (a one-time weight conversion: keep the
    result, not the inputs); ``gated_linear`` and ``gemm(..., gated=True)`` take it. InputError for tensors that
    do not pair up."""
    import torch

    if up is None:
        if not isinstance(gate, torch.Tensor) or gate.dim() not in (1, 2) or gate.shape[0] % 2:
            raise InputError(f"interleave_gate_up(w): w must be a [2 * N_out, K] weight or a [2 * N_out] bias whose "
                             f"first half is gate and second up, got {_shape_of(gate)}")
        gate, up = gate.chunk(2, dim=0)
    if not (isinstance(gate, torch.Tensor) and isinstance(up, torch.Tensor)) or gate.dim() not in (1, 2) \
            or gate.shape != up.shape or gate.dtype != up.dtype or gate.device != up.device:
        raise InputError(f"interleave_gate_up(gate, up): two weights [N_out, K] or two biases [N_out] of one shape, "
                         f"dtype and device, got {_shape_of(gate)} and {_shape_of(up)}")
    return torch.stack((gate, up), dim=1).reshape(2 * gate.shape[0], *gate.shape[1:]).contiguous()


def _shape_of(t) -> str:
    shape = getattr(t, "shape", None)
    return f"shape {tuple(shape)} {t.dtype}" if shape is not None else f"a {type(t).__name__}"


def _compiling() -> bool:
    import torch

    return torch.compiler.is_compiling()


def operands(layout="nn", dtype="fp16", out_dtype="fp32"):
    """The ``Operands`` of BLAS letters and dtypes (torch dtypes or 'fp16'/'bf16'/'fp32'); InputError."""
    from cute_gemm.runtime.problem import dtype_name
    from phases.operands import AB_DTYPES, C_DTYPES, LAYOUTS, Operands

    ab, c = dtype_name(dtype), dtype_name(out_dtype)
    if layout not in LAYOUTS:
        raise InputError(f"layout {layout!r}: one of {', '.join(LAYOUTS)} (first letter A, second B; t = transposed)")
    if ab not in AB_DTYPES:
        raise InputError(f"dtype {dtype!r}: A and B are fp16 or bf16")
    if c not in C_DTYPES:
        raise InputError(f"out_dtype {out_dtype!r}: C is fp32, fp16 or bf16")
    return Operands.of(layout, ab, c)


def compile_only(phase="5", config=None, arch: str = "sm90", layout="nn", dtype="fp16", out_dtype="fp32"):
    """Compile one phase with one config and operands for ``arch`` without a GPU, and return the plan
    (``fn``, ``kernel``, ``target``, ``seconds``, ``source``: 'compiled', or 'disk' when the compile cache
    had it).

    ``config``: None (the phase's default), the phase's config object, or field overrides as a dict
    (``{"bn": 128, "stages": 6}``) or a string (``"bn=128,stages=6"``). ``arch``: 'sm90', 'sm100', or an
    exact target ('sm_103a'). ``layout`` ('nn', 'nt', 'tn', 'tt': A then B, t = column-major), ``dtype``
    (A and B: fp16, bf16) and ``out_dtype`` (C: fp32, fp16, bf16) are the operands, as strings or torch
    dtypes. The compiled kernel goes into the disk cache, so a later ``gemm()`` with the same config and
    operands on a GPU of that target loads it instead of compiling. Raises ``InputError`` for an unknown
    arch, phase, field, value, layout or dtype, and ``UnsupportedError`` when the phase cannot take the operands
    or cannot be built with that config -- the phase's rules (``PhaseEntry.config_problems``) before anything
    compiles, else the DSL's or the phase's refusal while tracing -- in one line.
    """
    from cute_gemm.runtime import arch as _arch
    from cute_gemm.runtime import registry

    if not isinstance(arch, str):
        raise InputError(f"arch {arch!r}: give one of {', '.join([*_arch.TARGETS, *sum(_arch.TARGETS.values(), ())])}")
    try:
        target = _arch.target(arch)
        entry = registry.get(_arch.family(target), phase)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    except LookupError as exc:
        raise UnsupportedError(str(exc)) from None
    cfg = entry.configured(config, check=False)
    ops = operands(layout, dtype, out_dtype)

    def refused(why: str) -> UnsupportedError:
        what = entry.overrides_label(cfg) or "its default config"
        what += "" if ops.is_worklog else f" and {ops.label()}"
        return UnsupportedError(f"{entry.key} with {what} does not compile for {target}: {why}")

    problems = entry.config_problems(cfg)
    if problems:
        raise refused("; ".join(problems))
    why = plan.operand_refusals(entry.make(cfg, ops))
    if why:
        raise UnsupportedError("; ".join(why))
    try:
        return plan.compile_plan(entry, target, -1, cfg, ops)
    except Exception as exc:  # the DSL or the phase refused the config while tracing
        raise refused(one_line(exc)) from exc


def _compile_job(job) -> dict:
    """One ``precompile`` job in a worker process: (phase, config, arch, layout, dtype, out_dtype)."""
    import time

    t0 = time.perf_counter()
    try:
        p = compile_only(*job)
        return {"job": job, "source": p.source, "seconds": time.perf_counter() - t0, "error": None}
    except Exception as exc:  # reported per job; the others go on
        return {"job": job, "source": None, "seconds": time.perf_counter() - t0, "error": one_line(exc)}


def precompile(jobs, workers: int = 8, timeout: float = 600.0) -> list[dict]:
    """Compile ``jobs`` -- tuples of ``compile_only``'s arguments (phase, config, arch, layout, dtype,
    out_dtype) -- in ``workers`` fresh processes into the disk cache, so that the first call of each in this
    process loads it instead of compiling. Returns one dict per job, in order (``source``: 'compiled' or
    'disk', ``seconds``, ``error``: None or one line); a job not done within ``timeout`` seconds of the start
    is reported as such, and every worker is stopped on the way out. Needs the disk cache."""
    import multiprocessing
    import time

    from cute_gemm.runtime import cache

    if not cache.enabled():
        raise UnsupportedError("precompile fills the disk cache, which CUTE_GEMM_NO_DISK_CACHE turns off")
    jobs = [tuple(j) for j in jobs]
    out = []
    deadline = time.monotonic() + timeout
    # spawn: a worker must not inherit this process's CUDA context or torch's threads
    with multiprocessing.get_context("spawn").Pool(max(1, min(workers, len(jobs) or 1))) as pool:
        pending = [pool.apply_async(_compile_job, (job,)) for job in jobs]
        for job, res in zip(jobs, pending):
            try:
                out.append(res.get(max(0.0, deadline - time.monotonic())))
            except multiprocessing.TimeoutError:
                out.append({"job": job, "source": None, "seconds": None, "error": f"not done within {timeout:g} s"})
            except Exception as exc:  # a worker that died or a result that did not come back
                out.append({"job": job, "source": None, "seconds": None, "error": one_line(exc)})
    return out  # leaving the with block terminated the workers (a hung compile does not outlive this call)
