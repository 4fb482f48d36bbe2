"""What a caller imports: ``gemm`` (C = A @ B with one phase's kernel) and ``compile_only``.

``gemm`` runs eagerly through the plans (``plan.run``); while ``torch.compile`` traces it, it goes
through the custom op instead (``torch_ops``), whose fake implementation gives the output's shape.
``compile_only`` compiles a phase and config for a target without a GPU: a config variant can be
checked on any machine before it is run on one.
"""

from __future__ import annotations

from cute_gemm.errors import InputError, UnsupportedError, one_line
from cute_gemm.runtime import plan


def gemm(a, b, phase="5", out=None, config=None, arch: str | None = None):
    """C = A @ B with one phase's kernel: A [M,K] fp16, B [K,N] fp16 (both row-major), C [M,N] fp32.

    ``phase``: a phase id of the device's ladder (``cute-gemm list``; '2' means 2b), or "best" (the phase
    and config a heuristic picks per shape). ``out``: an fp32 [M,N] row-major tensor to write (else a new
    one). ``config``: a phase config (the phase's frozen dataclass) other than the default. ``arch``:
    'sm90'/'sm100' to insist on a ladder (default: the device's). Any M, N, K with N, K multiples of 8 for
    phases 2a and later; phases 0-1 need tile multiples. Raises ``cute_gemm.InputError`` (dtype, device,
    layout, alignment) or ``cute_gemm.UnsupportedError`` (a shape the phase cannot do, another ladder's
    phase) before anything launches.

    Runs on the current torch stream; under ``torch.compile`` it goes through the custom op
    ``torch.ops.cute_gemm.gemm``. One compile per (device, phase, config) serves every shape, and is kept
    on disk for the next process. Compile or warm a phase before capturing it in a CUDA graph: the first
    call of a plan compiles.
    """
    if _compiling():  # torch.compile: the custom op, whose fake implementation gives the output's shape
        from cute_gemm.runtime import torch_ops

        return torch_ops.call(a, b, phase, out)
    return plan.run(a, b, phase, out, config, arch)


def _compiling() -> bool:
    import torch

    return torch.compiler.is_compiling()


def compile_only(phase="5", config=None, arch: str = "sm90"):
    """Compile one phase with one config for ``arch`` without a GPU, and return the plan (``fn``,
    ``kernel``, ``target``, ``seconds``, ``source``: 'compiled', or 'disk' when the compile cache had it).

    ``config``: None (the phase's default), the phase's config object, or field overrides as a dict
    (``{"bn": 128, "stages": 6}``) or a string (``"bn=128,stages=6"``). ``arch``: 'sm90', 'sm100', or an
    exact target ('sm_103a'). The compiled kernel goes into the disk cache, so a later ``gemm()`` with the
    same config on a GPU of that target loads it instead of compiling. Raises ``InputError`` for an
    unknown phase, field or value, and ``UnsupportedError`` when the phase cannot be built with that
    config (the DSL's or the phase's refusal, in one line).
    """
    from cute_gemm.runtime import arch as _arch
    from cute_gemm.runtime import registry

    try:
        target = _arch.target(arch)
        entry = registry.get(_arch.family(target), phase)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    except LookupError as exc:
        raise UnsupportedError(str(exc)) from None
    cfg = entry.configured(config)
    try:
        return plan.compile_plan(entry, target, -1, cfg)
    except Exception as exc:  # the DSL or the phase refused the config while tracing
        over = entry.overrides(cfg)
        what = " ".join(f"{k}={v}" for k, v in over.items()) or "its default config"
        raise UnsupportedError(f"{entry.key} with {what} does not compile for {target}: {one_line(exc)}") from exc
