"""Host overhead of the Python calling face, measured by ``cute-gemm bench --api``.

All wall clock, back to back, after warm-up, synchronized once at the end:

- per call at ``SMALL`` (256^3: the kernel takes a few microseconds, so the host cost shows):
  ``torch.mm(a, b, out_dtype=torch.float32)``, ``cute_gemm.gemm(a, b, phase=p, out=c)`` and the compiled
  kernel alone (the zero-argument callable of ``cute_gemm.runtime.plan.launcher``);
- TFLOP/s of a loop of calls at ``LOOP`` (1024x4096x4096: the kernel dominates), the same three;
- the first ``gemm()`` call of each phase in this process, before anything else compiled it: what a user
  waits for the first time (compile + launch);
- ``cold_start``: the same in fresh processes, twice per phase, sharing one new compile-cache directory:
  the first process compiles (and exports the kernel to the cache), the second loads it from disk. Each
  reports its import time (torch + cute_gemm) and its first call (import of the DSL included).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

from cute_gemm.runtime.problem import Problem

SMALL = Problem(256, 256, 256)
LOOP = Problem(1024, 4096, 4096)
CALLS = 2000  # per-call overhead: calls timed at SMALL
LOOP_CALLS = 200  # calls timed at LOOP
WARMUP_CALLS = 50


def wall_per_call_s(fn, calls: int, warmup: int = WARMUP_CALLS) -> float:
    """Seconds per call of ``fn`` over ``calls`` back-to-back calls after ``warmup`` (GPU drained at both
    ends, so queued kernels count)."""
    import torch

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / calls


def _operands(p: Problem):
    from cute_gemm.measure.inputs import make_inputs, poisoned_output

    return (*make_inputs(p, "cuda"), poisoned_output(p))


def _measure(fn, small_args, loop_args) -> dict:
    """us per call at SMALL and TFLOP/s at LOOP of ``fn(a, b, c)``."""
    return {
        "us_per_call": 1e6 * wall_per_call_s(fn(*small_args), CALLS),
        "loop_tflops": LOOP.flops / wall_per_call_s(fn(*loop_args), LOOP_CALLS) / 1e12,
    }


def run_api(entries) -> dict:
    """The ``api`` section of a bench document for the phases ``entries`` of the GPU's arch."""
    import cutlass.cute  # noqa: F401  (the DSL's import is a one-time cost, not a phase's first call)
    import torch

    import cute_gemm
    from cute_gemm.errors import one_line
    from cute_gemm.measure import reference
    from cute_gemm.runtime.plan import launcher

    small, loop = _operands(SMALL), _operands(LOOP)
    torch.cuda.synchronize()
    out = {
        "small_shape": str(SMALL), "loop_shape": str(LOOP), "calls": CALLS, "loop_calls": LOOP_CALLS,
        "warmup_calls": WARMUP_CALLS,
        "first_call_note": "compile + launch of the phase's first gemm() in this process; the first phase measured "
                           "also pays the DSL runtime's one-time set-up",
        "torch_mm": _measure(lambda a, b, c: lambda: reference.mm_fp32_out(a, b), small, loop),
        "phases": [],
    }
    for e in entries:
        row = {"key": e.key, "phase": e.phase, "first_call_s": None, "gemm": None, "launcher": None, "reason": None}
        why = [f"{p}: {w}" for p in (SMALL, LOOP) for w in e.make().can_implement(p.m, p.n, p.k)]
        if why:
            row["reason"] = "; ".join(why)
            out["phases"].append(row)
            continue
        try:
            a, b, c = small
            t0 = time.perf_counter()
            cute_gemm.gemm(a, b, phase=e.phase, out=c)
            torch.cuda.synchronize()
            row["first_call_s"] = time.perf_counter() - t0
            row["gemm"] = _measure(lambda a, b, c, e=e: lambda: cute_gemm.gemm(a, b, phase=e.phase, out=c),
                                   small, loop)
            row["launcher"] = _measure(lambda a, b, c, e=e: launcher(e, a, b, c), small, loop)
        except Exception as exc:  # reported in the section; the other phases are still measured
            row["reason"] = one_line(exc)
        out["phases"].append(row)
    out["cold_start"] = [cold_start(e.phase) for e in entries if not e.make().can_implement(SMALL.m, SMALL.n, SMALL.k)]
    return out


_COLD = """
import json, time
t0 = time.perf_counter()
import torch, cute_gemm
a = torch.randn(256, 256, device="cuda").half(); torch.cuda.synchronize()
t1 = time.perf_counter()
cute_gemm.gemm(a, a, phase=PHASE); torch.cuda.synchronize()
t2 = time.perf_counter()
from cute_gemm.runtime import plan
print(json.dumps({"import_s": t1 - t0, "first_call_s": t2 - t1, "source": [p.source for p in plan._PLANS.values()][0]}))
"""


def cold_start(phase: str, timeout: float = 300) -> dict:
    """First call of ``phase`` in a fresh process: compiling (empty cache), then loading from the disk cache."""
    with tempfile.TemporaryDirectory(prefix="cute-gemm-cold-") as cache:
        env = {**os.environ, "CUTE_GEMM_CACHE_DIR": cache}
        env.pop("CUTE_GEMM_NO_DISK_CACHE", None)
        runs = []
        for _ in range(2):
            proc = subprocess.run([sys.executable, "-c", _COLD.replace("PHASE", repr(phase))], env=env,
                                  capture_output=True, text=True, timeout=timeout)
            lines = proc.stdout.strip().splitlines()
            runs.append(json.loads(lines[-1]) if proc.returncode == 0 and lines else
                        {"error": (proc.stderr.strip().splitlines() or ["no output"])[-1]})
    return {"phase": phase, "compile": runs[0], "from_disk": runs[1]}
