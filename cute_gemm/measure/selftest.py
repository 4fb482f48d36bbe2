"""The GPU's ladder and every config class ``phase="best"`` can pick, checked in one command (``cute-gemm selftest``).

For whoever has a Blackwell (B200 / B300, sm100) or a Hopper (H100 / H200, sm90) GPU. ``best`` on sm100 rests on
datasheet constants and on kernels no Blackwell GPU here has run; this is the path that measures itself on the
user's GPU and writes one report to attach to an issue. What it runs (``cases``):

1. every phase of the GPU's ladder (default config) on a ragged shape (M, N, K not tile multiples; phases that take
   tile multiples only on an aligned one), and the stream-K shape of phase 7; phase 11 also with one fused epilogue
   per kind (``EPILOGUE_VARIANTS``: bias, relu, gelu, silu, residual, all three), a persistent phase whose config
   takes the epilogue with all three (``variants``), each through ``check_epilogue``;
2. every config class ``best`` can pick (``best_cases``): the candidates ``choose.explain`` offers at ``PROBES``
   (ragged shapes from one token to prefill) grouped by what changes the kernel -- the phase, the split, the
   multicast (cluster_m), the tile family (rows, k-tile depth or width), CTAs per SM -- one config of each checked
   at the probe shape that offers it, the operands turning through ``OPERANDS`` (every C dtype, every layout); and
   the same for a call with a fused epilogue (``best_epilogue_cases``: phase 11 in phase 10's classes, the
   persistent phases with their fields), each with bias + gelu + residual;
3. a short bench (``cute-gemm bench --best`` on ``BENCH_SHAPES`` against cuBLASLt): best's pick and its time.

Each check is ``cute_gemm.measure.check.check_phase`` (fresh random inputs, NaN-poisoned C, against cuBLASLt and
float64, a repeat bit-identical). The checks run in child processes (``python -m cute_gemm.measure.selftest
--many ...``), a batch of at most ``BATCH`` checks each, ``jobs`` children at once (their compiles are CPU work),
each child under a timeout: an mbarrier mistake that hangs the GPU is reported as ``hang`` and the run goes on.
Statuses: ``pass``; ``fail`` (it ran, the numbers are wrong); ``hang``; ``error`` (it raised or the process died, or
its batch hung before it ran); ``skip`` (the phase cannot do the shape). The report: JSON (GPU, driver, versions,
the seconds it took, every row) and the same as markdown beside it. Meant to take under 3 minutes on one GPU
(not yet timed on one: no Blackwell GPU here). ``run`` returns 1 when any check does not pass.
"""

from __future__ import annotations

import concurrent.futures
import datetime
import json
import os
import subprocess
import sys
import time
from typing import Callable

from cute_gemm.errors import UnsupportedError
from cute_gemm.runtime.problem import Problem

# the ladder's phases: a ragged shape (phases 2a and later take it), an aligned one for the phases that take tile
# multiples only, and the shape where phase 7 splits its last round (stream-K)
RAGGED = (Problem(1000, 3000, 520), "ragged: partial tiles in M, N and K")
ALIGNED = (Problem(2048, 1024, 512), "aligned: the tile multiples phases 0-1 take")
STREAM_K = (Problem(5120, 4096, 512), "aligned; phase 7 splits its last round (stream-K)")
SHAPES = (RAGGED, ALIGNED, STREAM_K)
# phase 11's gated pairs write C with N / 2 columns, which keep C's row alignment only where N is a multiple of 16
RAGGED_GATED = (Problem(1000, 3024, 520), "ragged, N a multiple of 16 (gated: C has N / 2 columns)")
# where best's classes live: one token to prefill, N and K multiples of 8 but not of the tiles (ragged)
PROBES = ((1, 4104, 4104), (13, 2056, 6152), (40, 5128, 3080), (72, 4104, 1032), (100, 11008, 4104),
          (120, 11008, 4096), (200, 4104, 2056), (236, 5128, 5128), (250, 8200, 1032), (300, 4104, 8200),
          (480, 2056, 2056), (1000, 3000, 520), (3000, 5128, 2056), (5000, 8200, 4104), (1000, 11008, 4104),
          (1000, 5128, 4104))
# the operands the classes turn through: every C dtype, every layout (x @ W.T in bf16 among them)
OPERANDS = ("nn:fp16:fp32", "nt:bf16:bf16", "tn:fp16:fp16", "tt:bf16:fp32", "nt:fp16:fp16", "nn:bf16:bf16")
BENCH_SHAPES = ("16,4096,4096", "128,11008,4096", "4096,4096,4096")  # decode, a fitted tile width, big
BATCH = 6  # checks per child process
DEFAULT_TIMEOUT_S = 300  # per child: its compiles, the launches and the references
DEFAULT_JOBS = 4  # child processes at once
CHILD_FLAG = "--one"
MANY_FLAG = "--many"
MODULE = "cute_gemm.measure.selftest"  # the child process runs `python -m MODULE --one KEY MxNxK [OPERANDS]`
ARCHES = ("sm90", "sm100")


def gpu_description() -> tuple[str | None, str]:
    """(the GPU's ladder, sm90 or sm100, or None; what GPU 0 is) without launching anything on it."""
    try:
        import torch
    except ImportError:
        return None, "no torch"
    try:
        if not torch.cuda.is_available():
            return None, "no CUDA GPU (torch sees none)"
        major, minor = torch.cuda.get_device_capability(0)
        name = torch.cuda.get_device_name(0)
    except Exception as exc:  # a broken driver is a machine without a usable GPU
        return None, f"no usable CUDA GPU ({type(exc).__name__}: {exc})"
    from cute_gemm.runtime.arch import family_of_capability

    fam = family_of_capability(major, minor)
    return (fam if fam in ARCHES else None), f"{name} (compute capability {major}.{minor})"


def operands_of(text: str | None):
    """'nt:bf16:bf16' -> Operands (None or '': the worklog's)."""
    from phases.operands import WORKLOG, Operands

    if not text:
        return WORKLOG
    layout, ab, c = text.split(":")
    return Operands.of(layout, ab, c)


def _ops_text(ops) -> str:
    return f"{ops.layout}:{ops.ab}:{ops.c}"


# phase 11's fused configs: one per epilogue kind (the bias, each activation, the residual, SwiGLU's gated pairs) and
# bias + gelu + residual together (the last: "the full epilogue");
# another phase whose config has the fields too (the persistent ones) runs the last one
EPILOGUE_VARIANTS = ("bias=True", "activation=relu", "activation=gelu", "activation=silu", "residual=True",
                     "activation=silu,gated=True", "bias=True,activation=gelu,residual=True")
EPILOGUE_LINEAR = "nt:bf16:bf16"  # the operands of a bf16 nn.Linear layer (x @ W.T), phase 11's full epilogue's too
# the configs besides each phase's default the ladder checks run: best's persistent phases with programmatic
# dependent launch, phase 11's epilogues; a case's key is then "sm100:7 use_pdl=True"
VARIANTS = {"sm100": {"6": ("use_pdl=True",), "7": ("use_pdl=True",), "11": EPILOGUE_VARIANTS},
            "sm90": {"11": EPILOGUE_VARIANTS}}


def variants(arch: str, entry) -> tuple[str, ...]:
    """The configs of ``entry`` the ladder checks run besides its default: ``VARIANTS``, and for a phase whose config
    carries the fused epilogue's fields without being phase 11 the full epilogue, where its rules take it."""
    out = VARIANTS.get(arch, {}).get(entry.phase, ())
    full = EPILOGUE_VARIANTS[-1]
    if full not in out and hasattr(entry.default_config(), "activation"):
        out += () if entry.config_problems(entry.configured(full, check=False)) else (full,)
    return out


def config_class(phase: str, cfg) -> tuple:
    """What of a config changes the kernel: the phase, its split, multicast (cluster_m), tile rows, k-tile depth
    (phases 9-10) or width (the persistent phases), CTAs per SM."""
    return (phase, getattr(cfg, "split_k", None), cfg.cluster_m, cfg.bm,
            cfg.bk if phase in ("9", "10", "11") else cfg.bn, getattr(cfg, "ctas_per_sm", None))


def best_cases(arch: str, phases: list[str] | None = None) -> list[tuple]:
    """(key with config overrides, shape, note, None, operands text) of one config per class ``best`` can pick on
    ``arch`` (every candidate ``choose.explain`` offers at ``PROBES``, by ``config_class``), each at the probe
    shape that offers it; the operands turn through ``OPERANDS`` so that each phase meets every C dtype."""
    from cute_gemm.runtime import choose, registry

    seen: dict = {}
    turn = 0
    for m, n, k in PROBES:
        for ops_text in OPERANDS:
            for row in choose.explain(arch, m, n, k, operands_of(ops_text)):
                cls = config_class(row["phase"], row["config"])
                if cls in seen or (phases and row["phase"] not in phases):
                    continue
                seen[cls] = (row, Problem(m, n, k), ops_text, OPERANDS[turn % len(OPERANDS)])
                turn += 1
    out = []
    for cls, (row, p, offered, ops_text) in seen.items():
        entry = registry.get(arch, row["phase"])
        if not _offered_with(arch, entry, row["config"], p, ops_text, epilogue=False):
            ops_text = offered  # the turn's operands do not take it: those it was offered with
        over = registry.overrides_label(entry.overrides(row["config"])).replace(" ", ",")
        out.append((f"{entry.key} {over}".strip(), p, f"best's class {row['label']}", None, ops_text))
    return out


def _offered_with(arch: str, entry, cfg, p, ops_text: str, epilogue: bool) -> bool:
    """Whether ``best`` may run ``entry`` with ``cfg`` at ``p`` with the operands ``ops_text``: the kernel takes them,
    and the model offers that config with them (phase 8's fitted width only with B K-major): ``explain``'s rows, with
    ``epilogue`` those that run ``BEST_EPILOGUE`` (``choose._epilogue_row``, phase 10's large-M rows too)."""
    from cute_gemm.runtime import choose

    ops = operands_of(ops_text)
    kern = entry.make(cfg, ops)
    if kern.can_implement(p.m, p.n, p.k) or choose.sm100_build_problems(kern):
        return False
    rows = choose.explain(arch, p.m, p.n, p.k, ops)
    if not epilogue:
        return any(r["phase"] == entry.phase and r["config"] == cfg for r in rows)
    rows += choose.phase10_rows(arch, p.m, p.n, p.k, ops)
    return (entry.phase, cfg) in [choose._epilogue_row(arch, r["phase"], r["config"], p.m, p.n, p.k, ops,
                                                       **BEST_EPILOGUE) for r in rows]


# the epilogue best's classes are checked with: the fullest kind (a class is the tile, split and cluster it runs in)
BEST_EPILOGUE = {"bias": True, "activation": "gelu", "residual": True}


def best_epilogue_cases(arch: str, phases: list[str] | None = None) -> list[tuple]:
    """``best_cases`` for a call with a fused epilogue (``gemm(..., bias=, activation=, residual=)``): every model row
    at ``PROBES`` that ``phase="best"`` can run with the epilogue (``choose._epilogue_row``: phase 10's rows as phase
    11, the persistent phases' with their fields; past phase 10's token counts its large-M tiles,
    ``choose.phase10_rows``), one config of each class, with ``BEST_EPILOGUE``, the operands turning as there."""
    from cute_gemm.runtime import choose, registry

    seen: dict = {}
    turn = 0
    for m, n, k in PROBES:
        for ops_text in OPERANDS:
            ops = operands_of(ops_text)
            for row in [*choose.explain(arch, m, n, k, ops), *choose.phase10_rows(arch, m, n, k, ops)]:
                pick = choose._epilogue_row(arch, row["phase"], row["config"], m, n, k, ops, **BEST_EPILOGUE)
                if pick is None or (phases and pick[0] not in phases):
                    continue
                cls = config_class(*pick)
                if cls not in seen:
                    seen[cls] = (pick, row["label"], Problem(m, n, k), ops_text, OPERANDS[turn % len(OPERANDS)])
                    turn += 1
    out = []
    for (phase, cfg), label, p, offered, ops_text in seen.values():
        entry = registry.get(arch, phase)
        if not _offered_with(arch, entry, cfg, p, ops_text, epilogue=True):
            ops_text = offered
        over = registry.overrides_label(entry.overrides(cfg)).replace(" ", ",")
        out.append((f"{entry.key} {over}", p, f"best's epilogue class {label}", None, ops_text))
    return out


def cases(phases: list[str] | None = None, shapes=SHAPES, arch: str = "sm100", best: bool = True) -> list[tuple]:
    """(entry key [+ " " + config overrides], shape, note, reason to skip or None, operands text) of every check:
    each phase of ``arch``'s ladder (or of ``phases``) in its default config and ``VARIANTS`` on the ragged shape
    (the aligned one where it takes tile multiples only; phase 7 also the stream-K shape), then ``best_cases``;
    LookupError naming a phase the ladder does not have."""
    from cute_gemm.measure.suite import entries_for

    ragged, aligned, stream_k = (shapes + (None, None, None))[:3]
    out = []
    for e in entries_for(arch, phases):
        runs = [("", "")] + [(over, "") for over in variants(arch, e)]
        if e.phase == "11":  # the full epilogue also as a bf16 nn.Linear layer runs it: x @ W.T into a bf16 C
            runs.append((EPILOGUE_VARIANTS[-1], EPILOGUE_LINEAR))
        for over, ops_text in runs:
            kernel = e.make(e.configured(over) if over else None, operands_of(ops_text))
            key = f"{e.key} {over}".strip()
            first = RAGGED_GATED if ragged and getattr(kernel.cfg, "gated", False) else ragged
            todo = [first] + ([stream_k] if e.phase == "7" and stream_k else [])
            for p, note in todo:
                why = kernel.can_implement(p.m, p.n, p.k)
                if why and aligned and not kernel.can_implement(aligned[0].m, aligned[0].n, aligned[0].k):
                    p, note, why = aligned[0], aligned[1], []
                out.append((key, p, note, "; ".join(why) if why else None, ops_text))
    if best:
        out += best_cases(arch, phases) + best_epilogue_cases(arch, phases)
    return out


# ------------------------------------------------------------------------------------------------
# the checks, in child processes
# ------------------------------------------------------------------------------------------------
def _check_one(arch: str, key: str, shape: str, ops_text: str = "") -> dict:
    import dataclasses

    from cute_gemm.measure.check import check_phase
    from cute_gemm.runtime import registry

    key, _, over = key.partition(" ")  # "sm100:7 use_pdl=True": the phase, then its config overrides
    entry = registry.resolve(key, arch)
    config = entry.configured(over) if over else None
    if hasattr(config, "epilogue_active") and config.epilogue_active():  # phase 11's bias / activation / residual
        res = check_epilogue(entry, Problem.parse(shape), config, operands=operands_of(ops_text))
    else:
        res = check_phase(entry, Problem.parse(shape), config=config, operands=operands_of(ops_text))
    return dataclasses.asdict(res)


TANH_APPROX = 2.0**-11  # tanh.approx.f32's relative error (PTX ISA), which gelu and silu carry times |x| / 2


def epilogue_reference(z, bias, activation: str, residual, gated: bool = False):
    """act(z + bias) + residual in z's dtype (fp32 from cuBLASLt's product, or float64), the epilogue's math by
    torch ops: relu, gelu's tanh form, silu; ``gated``: columns (2j, 2j + 1) of z + bias are (gate, up) and column j
    of the result is act(gate) * up (+ residual [M, N / 2])."""
    import torch.nn.functional as F

    y = z + bias.to(z.dtype) if bias is not None else z
    act = {"none": lambda t: t, "relu": F.relu, "gelu": lambda t: F.gelu(t, approximate="tanh"),
           "silu": F.silu}[activation]
    y = act(y[:, 0::2]) * y[:, 1::2] if gated else act(y)
    return y + residual.to(z.dtype) if residual is not None else y


def check_epilogue(entry, p: Problem, config, operands=None, device: str = "cuda", seed: int | None = None,
                   launch_for=None):
    """``check_phase`` for a config with the fused epilogue on: fresh A, B, a bias [N] of A's dtype and a residual
    [M, N] of C's dtype as the config reads them, NaN-poisoned C, one launch ``fn(a, b, c[, bias][, residual])``,
    against cuBLASLt's fp32 product through the epilogue by torch ops (rounded once to C's type) and against float64
    through the same; a repeat bit-identical. ``gated``: C and the residual [M, N / 2] (SwiGLU's pairs). The tolerances are ``check.tolerance``'s, and for gelu and silu the
    SFU's tanh: |x| / 2 x 2^-11 more per element, 2^-11 more on the float64 error. ``launch_for(a, b, c, extras)``
    (the tests' stand-in): what launches; by default the phase's compiled plan on ``a``'s GPU."""
    import torch

    from cute_gemm.measure import check, reference
    from cute_gemm.measure.inputs import make_inputs, poisoned_output
    from phases.operands import WORKLOG

    operands = operands or WORKLOG
    gated = getattr(config, "gated", False)
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else torch.seed())
    a, b = make_inputs(p, device, gen, operands)
    c = poisoned_output(Problem(p.m, p.n // 2, p.k) if gated else p, device, operands)  # gated: N / 2 columns
    bias = (torch.randn(p.n, device=device, generator=gen).to(a.dtype) if config.bias else None)
    residual = (torch.randn(*c.shape, device=device, generator=gen).to(c.dtype) if config.residual else None)
    extras = [t for t in (bias, residual) if t is not None]
    ran = operands.label()

    def failed(why: str):
        return check.CheckResult(entry.key, str(p), False, -1, -1, float("nan"), float("nan"), float("nan"),
                                 error=why, operands=ran)

    try:
        if launch_for is None:
            from cute_gemm.runtime import plan as _plan

            why = _plan.refusals(entry.make(config, operands), p.m, p.n, p.k)
            if why:
                return failed(f"UnsupportedError: {entry.key} cannot do {p}: " + "; ".join(why))
            compiled = _plan.compile_plan(entry, _plan.device_target(a.device), a.get_device(), config, operands)
            launch = lambda: compiled.fn(a, b, c, *extras)  # noqa: E731
        else:
            launch = lambda: launch_for(a, b, c, extras)  # noqa: E731
        launch()
        if device == "cuda":
            torch.cuda.synchronize()
    except Exception as exc:  # data, as check_phase reports it
        return failed(f"{type(exc).__name__}: {exc}")
    z = reference.cublaslt(a, b, torch.float32)
    ref = epilogue_reference(z, bias, config.activation, residual, gated).to(c.dtype)
    rows = None
    if p.flops > check.FLOAT64_FULL_FLOPS:
        rows = torch.randperm(p.m, device=device, generator=gen)[:check.FLOAT64_SAMPLE_ROWS]
        rows = torch.cat([rows, torch.tensor([0, p.m - 1], device=device)]).unique()
    pick = (lambda t: t) if rows is None else (lambda t: None if t is None else t[rows])
    y64 = epilogue_reference(reference.float64(pick(a), b), bias, config.activation, pick(residual), gated)
    tol = check.tolerance(operands, p.k)
    tanh = TANH_APPROX if config.activation in ("gelu", "silu") else 0.0
    big = float(z.abs().max()) + (float(bias.abs().max()) if bias is not None else 0.0)
    # act(x)'s error is at most |x| / 2 x 2^-11; gated, times |up|; and gated doubles the product's relative error
    tol = check.Tolerance(tol.atol + tanh / 2 * big * (big if gated else 1.0), tol.rtol * (2 if gated else 1),
                          tol.rel_err_limit + tanh)
    nums = check.compare(c, ref, y64, rows, tol)
    first = c.clone()
    c.fill_(float("nan"))
    launch()
    if device == "cuda":
        torch.cuda.synchronize()
    identical = bool(torch.equal(first, c))
    return check.CheckResult(entry.key, str(p), check.passes(nums, tol) and identical, repeat_identical=identical,
                             float64_rows=None if rows is None else int(rows.numel()), operands=ran, **nums)


def child(key: str, shape: str, ops_text: str = "") -> int:
    """Run one check and print its result as one JSON line (the parent reads the last line)."""
    arch = key.split(":", 1)[0]
    print(json.dumps(_check_one(arch, key, shape, ops_text)), flush=True)
    return 0


def child_many(specs: list[str]) -> int:
    """Run the checks ``KEY|MxNxK|OPERANDS`` in order, one JSON line each (``{"index": i, ...}``), flushed as each
    ends: a parent that kills this process on a hang keeps what finished before."""
    for i, spec in enumerate(specs):
        key, shape, ops_text = spec.split("|")
        try:
            row = _check_one(key.split(":", 1)[0], key, shape, ops_text)
        except Exception as exc:  # noqa: BLE001 -- a check that raised: its error, and the next check
            row = {"error": f"{type(exc).__name__}: {exc}".splitlines()[0], "passed": False}
        print(json.dumps({"index": i, **row}), flush=True)
    return 0


Runner = Callable[[list, int], "subprocess.CompletedProcess"]


def subprocess_runner(argv: list, timeout_s: int) -> subprocess.CompletedProcess:
    """Run ``python -m cute_gemm.measure.selftest ARGV``; raises subprocess.TimeoutExpired on a hang."""
    return subprocess.run([sys.executable, "-m", MODULE, *argv], capture_output=True, text=True,
                          timeout=timeout_s)


def _status(check: dict) -> str:
    return "error" if check.get("error") else "pass" if check.get("passed") else "fail"


def run_case(key: str, p: Problem, timeout_s: int, runner: Runner = subprocess_runner, ops_text: str = "") -> dict:
    """One check in its own child under a timeout: a dict with status, seconds, the check's numbers or the error."""
    t0 = time.perf_counter()
    row = {"phase": key, "shape": str(p), "operands": ops_text or None, "status": "error", "seconds": None,
           "check": None, "error": None}
    try:
        proc = runner([CHILD_FLAG, key, str(p)] + ([ops_text] if ops_text else []), timeout_s)
    except subprocess.TimeoutExpired:
        row.update(status="hang", error=f"no result within {timeout_s} s (the process was killed)")
        row["seconds"] = round(time.perf_counter() - t0, 1)
        return row
    row["seconds"] = round(time.perf_counter() - t0, 1)
    check = _last_json(proc.stdout)
    if proc.returncode != 0 or not isinstance(check, dict):
        tail = (proc.stderr or proc.stdout or "").strip().splitlines()
        row["error"] = f"exit status {proc.returncode}: " + (tail[-1] if tail else "no output")
        return row
    row.update(check=check, status=_status(check), error=check.get("error"))
    return row


def _last_json(text) -> dict | None:
    lines = [line for line in _text(text).splitlines() if line.strip()]
    try:
        return json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        return None


def _text(out) -> str:
    """A child's output as text (``TimeoutExpired.stdout`` is bytes even under text=True)."""
    if out is None:
        return ""
    return out.decode(errors="replace") if isinstance(out, bytes) else out


def run_batch(batch: list[tuple], timeout_s: int, runner: Runner = subprocess_runner) -> list[dict]:
    """Checks ``(key, shape, ops_text)`` in one child under ``timeout_s``: a row per check. On a hang the first check
    without a result is ``hang`` and the ones after it ``error`` (not run); a child that died: the same, ``error``."""
    t0 = time.perf_counter()
    argv = [MANY_FLAG] + [f"{key}|{p}|{ops}" for key, p, ops in batch]
    hung, err = False, None
    try:
        proc = runner(argv, timeout_s)
        out = _text(proc.stdout)
        if proc.returncode != 0:
            tail = (_text(proc.stderr) or out).strip().splitlines()
            err = f"exit status {proc.returncode}: " + (tail[-1] if tail else "no output")
    except subprocess.TimeoutExpired as exc:
        out, hung = _text(exc.stdout), True
    done = {}
    for line in out.splitlines():
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(item, dict) and "index" in item:
            done[item.pop("index")] = item
    seconds = round(time.perf_counter() - t0, 1)
    rows, first_missing = [], True
    for i, (key, p, ops) in enumerate(batch):
        row = {"phase": key, "shape": str(p), "operands": ops or None, "status": "error", "seconds": None,
               "check": None, "error": None}
        if i in done:
            check = done[i]
            row.update(check=check if "key" in check else None, status=_status(check), error=check.get("error"))
        elif hung and first_missing:
            row.update(status="hang", error=f"no result within the batch's {timeout_s} s (the process was killed)")
        else:
            row["error"] = ("not run: an earlier check of its batch hung" if hung
                            else err or "no result from the child process")
        first_missing = first_missing and i in done
        row["seconds"] = seconds  # the batch's
        rows.append(row)
    return rows


# ------------------------------------------------------------------------------------------------
# the short bench
# ------------------------------------------------------------------------------------------------
def bench_argv(arch: str, out_json: str) -> list[str]:
    """``cute-gemm bench`` timing best's pick beside cuBLASLt at ``BENCH_SHAPES`` (3 rounds, no plots)."""
    return ["-c", "import sys; from cute_gemm import cli; sys.exit(cli.main(sys.argv[1:]))", "bench", "--arch", arch,
            "--phases", "7", "--best", "--peers", "cublaslt", "--rounds", "3", "--no-plot", "--quiet",
            "--shapes", *BENCH_SHAPES, "--out", out_json]


def run_bench(arch: str, out_json: str, timeout_s: int, bench_runner=None) -> dict:
    """The short bench in a child: {"status", "seconds", "rows": [best and cuBLASLt per shape], "error"}."""
    t0 = time.perf_counter()
    res = {"status": "error", "seconds": None, "rows": [], "error": None}
    try:
        if bench_runner:
            proc = bench_runner(bench_argv(arch, out_json), timeout_s)
        else:
            proc = subprocess.run([sys.executable, *bench_argv(arch, out_json)], capture_output=True, text=True,
                                  timeout=timeout_s)
        with open(out_json) as f:
            doc = json.load(f)
        for r in doc.get("results", []):
            if r.get("name") in ("best", "cublaslt") or r.get("key") in ("best", "peer:cublaslt"):
                t = r.get("timing") or {}
                res["rows"].append({"name": r.get("name"), "label": r.get("label"), "shape": r.get("shape"),
                                    "status": r.get("status"), "ms_median": t.get("ms_median"),
                                    "tflops": t.get("tflops"), "model": r.get("model")})
        res["status"] = "ok" if proc.returncode == 0 else "error"
        if proc.returncode:
            res["error"] = f"exit status {proc.returncode}"
    except subprocess.TimeoutExpired:
        res.update(status="hang", error=f"no result within {timeout_s} s")
    except (OSError, ValueError) as exc:
        res["error"] = f"{type(exc).__name__}: {exc}".splitlines()[0]
    res["seconds"] = round(time.perf_counter() - t0, 1)
    return res


# ------------------------------------------------------------------------------------------------
# the run
# ------------------------------------------------------------------------------------------------
def report(rows: list, gpu: str, timeout_s: int, command: str, arch: str = "sm100", seconds: float | None = None,
           bench: dict | None = None) -> dict:
    from cute_gemm.measure import environment

    counts: dict = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": command,
        "arch": arch,
        "gpu": environment.gpu() or {"name": gpu},
        "versions": environment.versions(),
        "timeout_s": timeout_s,
        "seconds": seconds,
        "summary": counts,
        "results": rows,
        "bench": bench,
    }


def _num(x, fmt="{:.1e}") -> str:
    return fmt.format(x) if isinstance(x, (int, float)) else "-"


def markdown(rep: dict) -> str:
    """The report as markdown: what ran where, the summary, what did not pass, every check, the bench."""
    gpu = rep["gpu"].get("name") if isinstance(rep.get("gpu"), dict) else rep.get("gpu")
    lines = [f"# cute-gemm selftest: {rep['arch']} on {gpu}", "",
             f"- date: {rep['date']}", f"- command: `{rep['command']}`",
             f"- took: {_num(rep.get('seconds'), '{:.0f}')} s; timeout per child process: {rep['timeout_s']} s",
             "- versions: " + ", ".join(f"{k} {v}" for k, v in (rep.get("versions") or {}).items()),
             "- summary: " + ", ".join(f"{n} {s}" for s, n in sorted(rep["summary"].items())), ""]
    bad = [r for r in rep["results"] if r["status"] not in ("pass", "skip")]
    if bad:
        lines += ["## Not passing", "", "| check | shape | operands | status | why |", "|---|---|---|---|---|"]
        lines += [f"| {r['phase']} | {r['shape']} | {r.get('operands') or 'nn:fp16:fp32'} | {r['status']} | "
                  f"{(r.get('error') or '').replace('|', '/')} |" for r in bad]
        lines.append("")
    lines += ["## Checks (against float64 and cuBLASLt, a repeat bit-identical)", "",
              "| check | shape | operands | status | rel. error vs float64 | vs cuBLASLt's | s | why |",
              "|---|---|---|---|---|---|---|---|"]
    for r in rep["results"]:
        c = r.get("check") or {}
        lines.append(f"| {r['phase']} | {r['shape']} | {r.get('operands') or 'nn:fp16:fp32'} | {r['status']} | "
                     f"{_num(c.get('rel_fro_err'))} | {_num(c.get('cublaslt_rel_fro_err'))} | "
                     f"{_num(r.get('seconds'), '{:.1f}')} | {r.get('note', '')} |")
    bench = rep.get("bench")
    if bench:
        lines += ["", f"## Short bench ({bench['status']}, {_num(bench.get('seconds'), '{:.0f}')} s)", "",
                  "| row | shape | ms (median) | TFLOP/s |", "|---|---|---|---|"]
        lines += [f"| {b['label'] or b['name']} | {b['shape']} | {_num(b['ms_median'], '{:.4f}')} | "
                  f"{_num(b['tflops'], '{:.1f}')} |" for b in bench["rows"]]
        if bench.get("error"):
            lines += ["", f"bench: {bench['error']}"]
    return "\n".join(lines) + "\n"


def list_cases(phases: list[str] | None = None, out=None, arch: str = "sm100") -> None:
    """One line per check: phase [config], shape, operands, why it is there, why skipped (no GPU needed)."""
    for key, p, note, skip, ops in cases(phases, arch=arch):
        print(f"{key:50s} {str(p):16s} {ops or 'nn:fp16:fp32':13s} {note}{'  [skip: ' + skip + ']' if skip else ''}",
              file=out or sys.stdout)


def run(phases: list[str] | None, out_path: str, timeout_s: int, command: str, runner: Runner = subprocess_runner,
        gpu_check=gpu_description, out=None, jobs: int = DEFAULT_JOBS, bench: bool = True, bench_runner=None) -> int:
    """Every check of the GPU's ladder (or of ``phases``) and of best's classes, ``jobs`` children at once, each
    under ``timeout_s``; then the short bench; the report written to ``out_path`` (JSON) and beside it as markdown
    (.md); exit status 1 when any check does not pass. UnsupportedError without an sm90 or sm100 GPU."""
    out = out or sys.stdout
    arch, gpu = gpu_check()
    if arch not in ARCHES:
        raise UnsupportedError(f"needs an sm90 or sm100 GPU (H100/H200, B200/B300: compute capability 9.0, 10.0 or "
                               f"10.3); this machine has {gpu}")
    t0 = time.perf_counter()
    todo = cases(phases, arch=arch)
    rows: list = [None] * len(todo)
    batches: dict = {}
    for i, (key, p, note, skip, ops) in enumerate(todo):
        if skip:
            rows[i] = {"phase": key, "shape": str(p), "operands": ops or None, "status": "skip", "seconds": 0.0,
                       "check": None, "error": skip}
        else:
            group = batches.setdefault(key.split(" ")[0], [[]])
            if len(group[-1]) == BATCH:
                group.append([])
            group[-1].append(i)
    work = [b for group in batches.values() for b in group]
    done = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {pool.submit(run_batch, [(todo[i][0], todo[i][1], todo[i][4]) for i in b], timeout_s, runner): b
                   for b in work}
        for fut in concurrent.futures.as_completed(futures):
            for i, row in zip(futures[fut], fut.result()):
                rows[i] = row
                done += 1
                print(f"[{done}/{len(todo)}] {row['phase']} {row['shape']} {row['operands'] or ''}: {row['status']}"
                      + (f" ({row['error']})" if row["status"] not in ("pass", "skip") and row["error"] else ""),
                      file=out, flush=True)
    for row, (_, _, note, _, _) in zip(rows, todo):
        row["note"] = note
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    bench_res = run_bench(arch, os.path.splitext(os.path.abspath(out_path))[0] + "-bench.json", 120,
                          bench_runner) if bench else None
    rep = report(rows, gpu, timeout_s, command, arch, round(time.perf_counter() - t0, 1), bench_res)
    with open(out_path, "w") as f:
        json.dump(rep, f, indent=2)
    md_path = os.path.splitext(out_path)[0] + ".md"
    with open(md_path, "w") as f:
        f.write(markdown(rep))
    bad = [r for r in rows if r["status"] not in ("pass", "skip")]
    print(f"{len(rows) - len(bad)} of {len(rows)} checks pass or skip in {rep['seconds']} s; report: {out_path} "
          f"and {md_path}", file=out)
    return 1 if bad else 0


def main(argv=None) -> int:
    """The child process: ``--one KEY MxNxK [OPERANDS]`` (one check) or ``--many KEY|MxNxK|OPERANDS ...``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) >= 2 and argv[0] == MANY_FLAG:
        return child_many(argv[1:])
    if len(argv) not in (3, 4) or argv[0] != CHILD_FLAG:
        print(f"usage: python -m {MODULE} {CHILD_FLAG} KEY MxNxK [OPERANDS] | {MANY_FLAG} KEY|MxNxK|OPERANDS ... "
              f"(the run itself: cute-gemm selftest)", file=sys.stderr)
        return 2
    return child(*argv[1:])


if __name__ == "__main__":
    sys.exit(main())
