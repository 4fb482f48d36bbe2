"""The sm100 ladder checked on a Blackwell GPU, in one command (``cute-gemm selftest``).

For whoever has a B200 / B300 (compute capability 10.0 / 10.3): every sm100 phase is checked with
``cute_gemm.measure.check.check_phase`` (fresh random inputs, NaN-poisoned C, against cuBLASLt and
float64, a repeat bit-identical) on aligned shapes and on ragged ones (M, N, K not tile multiples: phases
2a and later take them), plus a shape where phase 7 splits its last round (stream-K). Each check runs in
its own subprocess (``python -m cute_gemm.measure.selftest --one KEY MxNxK``) under a timeout, so an
mbarrier mistake that hangs the GPU is reported as ``hang`` and the run goes on; the report (JSON: GPU,
driver, versions, and per phase x shape the status and the check's numbers) is meant to be shared as is.

Statuses: ``pass``; ``fail`` (it ran, the numbers are wrong); ``hang`` (no result within the timeout);
``error`` (it raised or the process died: the message says why); ``skip`` (the phase cannot do the
shape, e.g. phases 0-1 on ragged shapes).

Without a Blackwell GPU ``run`` raises ``UnsupportedError`` saying what this machine has. ``run`` returns
exit status 1 when any check does not pass.
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import time
from typing import Callable

from cute_gemm.errors import UnsupportedError
from cute_gemm.runtime.problem import Problem

# (shape, why it is there). Phases 0-1 take only the tile multiples; the others take all of them.
SHAPES = (
    (Problem(2048, 2048, 2048), "aligned"),
    (Problem(1024, 4096, 4096), "aligned, the worklog's skinny shape"),
    (Problem(1000, 3000, 520), "ragged: partial tiles in M, N and K"),
    (Problem(300, 264, 40), "ragged, small: the last pair's second CTA lies past M"),
    (Problem(1, 8, 8), "the smallest problem"),
    (Problem(5120, 4096, 512), "aligned; phase 7 splits its last round (stream-K)"),
)
DEFAULT_TIMEOUT_S = 300  # per check: a compile, two launches and the references
CHILD_FLAG = "--one"
MODULE = "cute_gemm.measure.selftest"  # the child process runs `python -m MODULE --one KEY MxNxK`


def gpu_description() -> tuple[bool, str]:
    """(is an sm100 GPU, what GPU 0 is) without launching anything on it."""
    try:
        import torch
    except ImportError:
        return False, "no torch"
    try:
        if not torch.cuda.is_available():
            return False, "no CUDA GPU (torch sees none)"
        major, minor = torch.cuda.get_device_capability(0)
        name = torch.cuda.get_device_name(0)
    except Exception as exc:  # a broken driver is a machine without a usable GPU
        return False, f"no usable CUDA GPU ({type(exc).__name__}: {exc})"
    from cute_gemm.runtime.arch import family_of_capability

    return family_of_capability(major, minor) == "sm100", f"{name} (compute capability {major}.{minor})"


# the configs besides each phase's default that a check runs: what ``phase="best"`` runs on sm100 (the
# persistent phases with programmatic dependent launch); a case's key is then "sm100:7 use_pdl=True"
VARIANTS = {"6": ("use_pdl=True",), "7": ("use_pdl=True",)}


def cases(phases: list[str] | None = None, shapes=SHAPES) -> list[tuple]:
    """(entry key [+ " " + config overrides], shape, note, reason to skip or None) for every sm100 phase (or
    those of ``phases``), each in its default config and in ``VARIANTS``, and shape; LookupError naming a
    phase the sm100 ladder does not have."""
    from cute_gemm.measure.suite import entries_for

    out = []
    for e in entries_for("sm100", phases):
        for over in ("", *VARIANTS.get(e.phase, ())):
            kernel = e.make(e.configured(over) if over else None)
            for p, note in shapes:
                why = kernel.can_implement(p.m, p.n, p.k)
                out.append((f"{e.key} {over}".strip(), p, note, "; ".join(why) if why else None))
    return out


# ------------------------------------------------------------------------------------------------
# one check, in a child process
# ------------------------------------------------------------------------------------------------
def child(key: str, shape: str) -> int:
    """Run one check and print its result as one JSON line (the parent reads the last line)."""
    import dataclasses

    from cute_gemm.measure.check import check_phase
    from cute_gemm.runtime import registry

    key, _, over = key.partition(" ")  # "sm100:7 use_pdl=True": the phase, then its config overrides
    entry = registry.resolve(key, "sm100")
    res = check_phase(entry, Problem.parse(shape), config=entry.configured(over) if over else None)
    print(json.dumps(dataclasses.asdict(res)), flush=True)
    return 0


Runner = Callable[[list, int], "subprocess.CompletedProcess"]


def subprocess_runner(argv: list, timeout_s: int) -> subprocess.CompletedProcess:
    """Run ``python -m cute_gemm.measure.selftest --one ...``; raises subprocess.TimeoutExpired on a hang."""
    return subprocess.run([sys.executable, "-m", MODULE, *argv], capture_output=True, text=True,
                          timeout=timeout_s)


def run_case(key: str, p: Problem, timeout_s: int, runner: Runner = subprocess_runner) -> dict:
    """One check under a timeout: a dict with status, seconds, the check's numbers or the error."""
    t0 = time.perf_counter()
    row = {"phase": key, "shape": str(p), "status": "error", "seconds": None, "check": None, "error": None}
    try:
        proc = runner([CHILD_FLAG, key, str(p)], timeout_s)
    except subprocess.TimeoutExpired:
        row.update(status="hang", error=f"no result within {timeout_s} s (the process was killed)")
        row["seconds"] = round(time.perf_counter() - t0, 1)
        return row
    row["seconds"] = round(time.perf_counter() - t0, 1)
    lines = [line for line in (proc.stdout or "").splitlines() if line.strip()]
    check = None
    if lines:
        try:
            check = json.loads(lines[-1])
        except json.JSONDecodeError:
            check = None
    if proc.returncode != 0 or not isinstance(check, dict):
        tail = (proc.stderr or proc.stdout or "").strip().splitlines()
        row["error"] = f"exit status {proc.returncode}: " + (tail[-1] if tail else "no output")
        return row
    row["check"] = check
    if check.get("error"):
        row.update(status="error", error=check["error"])
    else:
        row["status"] = "pass" if check.get("passed") else "fail"
    return row


# ------------------------------------------------------------------------------------------------
# the run
# ------------------------------------------------------------------------------------------------
def report(rows: list, gpu: str, timeout_s: int, command: str) -> dict:
    from cute_gemm.measure import environment

    counts: dict = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": command,
        "gpu": environment.gpu() or {"name": gpu},
        "versions": environment.versions(),
        "timeout_s": timeout_s,
        "summary": counts,
        "results": rows,
    }


def list_cases(phases: list[str] | None = None, out=None) -> None:
    """One line per check: phase, shape, why the shape is there, and why it is skipped (no GPU needed)."""
    for key, p, note, skip in cases(phases):
        print(f"{key:23s} {str(p):16s} {note}{'  [skip: ' + skip + ']' if skip else ''}", file=out or sys.stdout)


def run(phases: list[str] | None, out_path: str, timeout_s: int, command: str, runner: Runner = subprocess_runner,
        gpu_check=gpu_description, out=None) -> int:
    """Every check of ``phases`` (default: all sm100 phases) under ``timeout_s`` each, the report written to
    ``out_path``; exit status 1 when any check does not pass. UnsupportedError without an sm100 GPU."""
    out = out or sys.stdout
    todo = cases(phases)
    ok, gpu = gpu_check()
    if not ok:
        raise UnsupportedError(f"needs an sm100 GPU (B200/B300, compute capability 10.0 or 10.3); this machine has {gpu}")
    rows = []
    for i, (key, p, note, skip) in enumerate(todo, 1):
        if skip:
            row = {"phase": key, "shape": str(p), "status": "skip", "seconds": 0.0, "check": None, "error": skip}
        else:
            row = run_case(key, p, timeout_s, runner)
        row["note"] = note
        rows.append(row)
        print(f"[{i}/{len(todo)}] {key} {p}: {row['status']}"
              + (f" ({row['error']})" if row["status"] not in ("pass", "skip") and row["error"] else ""),
              file=out, flush=True)
    rep = report(rows, gpu, timeout_s, command)
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    with open(out_path, "w") as f:
        json.dump(rep, f, indent=2)
    bad = [r for r in rows if r["status"] not in ("pass", "skip")]
    print(f"{len(rows) - len(bad)} of {len(rows)} checks pass or skip; report: {out_path}", file=out)
    return 1 if bad else 0


def main(argv=None) -> int:
    """The child process of one check: ``python -m cute_gemm.measure.selftest --one KEY MxNxK``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) != 3 or argv[0] != CHILD_FLAG:
        print(f"usage: python -m {MODULE} {CHILD_FLAG} KEY MxNxK (the run itself: cute-gemm selftest)",
              file=sys.stderr)
        return 2
    return child(argv[1], argv[2])


if __name__ == "__main__":
    sys.exit(main())
