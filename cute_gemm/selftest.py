"""``python -m cute_gemm.selftest [--out report.json]``: the sm100 ladder checked on a Blackwell GPU, in one command.

For whoever has a B200 / B300 (compute capability 10.0 / 10.3): every sm100 phase is checked with
``cute_gemm.check.check_phase`` (fresh random inputs, NaN-poisoned C, against cuBLASLt and float64, a
repeat bit-identical) on aligned shapes and on ragged ones (M, N, K not tile multiples: phases 2a and
later take them), plus a shape where phase 7 splits its last round (stream-K). Each check runs in its
own subprocess under a timeout, so an mbarrier mistake that hangs the GPU is reported as ``hang`` and
the run goes on; the report (JSON: GPU, driver, versions, and per phase x shape the status and the
check's numbers) is meant to be shared as is.

Statuses: ``pass``; ``fail`` (it ran, the numbers are wrong); ``hang`` (no result within the timeout);
``error`` (it raised or the process died: the message says why); ``skip`` (the phase cannot do the
shape, e.g. phases 0-1 on ragged shapes).

Without a Blackwell GPU it prints one line saying so and exits with status 2. Exit status 1 when any
check does not pass. ``cute-gemm selftest`` runs the same ``main``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import time
from typing import Callable

from cute_gemm.problem import Problem

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
    from cute_gemm.arch import family_of_capability

    return family_of_capability(major, minor) == "sm100", f"{name} (compute capability {major}.{minor})"


def cases(phases: list[str] | None = None, shapes=SHAPES) -> list[tuple]:
    """(entry key, shape, note, reason to skip or None) for every sm100 phase and shape."""
    from cute_gemm import registry

    out = []
    for e in registry.all_entries("sm100"):
        if phases and e.phase not in phases:
            continue
        kernel = e.make()
        for p, note in shapes:
            why = kernel.can_implement(p.m, p.n, p.k)
            out.append((e.key, p, note, "; ".join(why) if why else None))
    return out


# ------------------------------------------------------------------------------------------------
# one check, in a child process
# ------------------------------------------------------------------------------------------------
def child(key: str, shape: str) -> int:
    """Run one check and print its result as one JSON line (the parent reads the last line)."""
    import dataclasses

    from cute_gemm import registry
    from cute_gemm.check import check_phase

    entry = registry.resolve(key, "sm100")
    res = check_phase(entry, Problem.parse(shape))
    print(json.dumps(dataclasses.asdict(res)), flush=True)
    return 0


Runner = Callable[[list, int], "subprocess.CompletedProcess"]


def subprocess_runner(argv: list, timeout_s: int) -> subprocess.CompletedProcess:
    """Run ``python -m cute_gemm.selftest --one ...``; raises subprocess.TimeoutExpired on a hang."""
    return subprocess.run([sys.executable, "-m", "cute_gemm.selftest", *argv], capture_output=True, text=True,
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
def parse_args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m cute_gemm.selftest", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="selftest-sm100.json", help="where to write the JSON report")
    ap.add_argument("--phases", default="", help="phase list, e.g. '0-3,7' (default: all sm100 phases)")
    ap.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT_S, help="seconds per check before it counts "
                    f"as a hang (default {DEFAULT_TIMEOUT_S})")
    ap.add_argument("--list", action="store_true", help="list the checks and exit (no GPU needed)")
    args = ap.parse_args(argv)
    args.argv = list(argv) if argv is not None else sys.argv[1:]
    if args.timeout < 1:
        ap.error("--timeout must be at least 1 second")
    return args


def report(rows: list, gpu: str, timeout_s: int, argv: list) -> dict:
    from cute_gemm import environment

    counts: dict = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join(["python -m cute_gemm.selftest", *argv]),
        "gpu": environment.gpu() or {"name": gpu},
        "versions": environment.versions(),
        "timeout_s": timeout_s,
        "summary": counts,
        "results": rows,
    }


def run(args, runner: Runner = subprocess_runner, gpu_check=gpu_description, out=None) -> int:
    from cute_gemm.registry import parse_phase_list

    out = out or sys.stdout
    phases = parse_phase_list(args.phases) if args.phases else None
    todo = cases(phases)
    if args.list:
        for key, p, note, skip in todo:
            print(f"{key:10s} {str(p):16s} {note}{'  [skip: ' + skip + ']' if skip else ''}", file=out)
        return 0
    ok, gpu = gpu_check()
    if not ok:
        print(f"cute_gemm.selftest needs an sm100 GPU (B200/B300, compute capability 10.0 or 10.3); "
              f"this machine has {gpu}", file=sys.stderr)
        return 2
    rows = []
    for i, (key, p, note, skip) in enumerate(todo, 1):
        if skip:
            row = {"phase": key, "shape": str(p), "status": "skip", "seconds": 0.0, "check": None, "error": skip}
        else:
            row = run_case(key, p, args.timeout, runner)
        row["note"] = note
        rows.append(row)
        print(f"[{i}/{len(todo)}] {key} {p}: {row['status']}"
              + (f" ({row['error']})" if row["status"] not in ("pass", "skip") and row["error"] else ""),
              file=out, flush=True)
    rep = report(rows, gpu, args.timeout, args.argv)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(rep, f, indent=2)
    bad = [r for r in rows if r["status"] not in ("pass", "skip")]
    print(f"{len(rows) - len(bad)} of {len(rows)} checks pass or skip; report: {args.out}", file=out)
    return 1 if bad else 0


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == [CHILD_FLAG]:
        if len(argv) != 3:
            print(f"usage: python -m cute_gemm.selftest {CHILD_FLAG} KEY MxNxK", file=sys.stderr)
            return 2
        return child(argv[1], argv[2])
    return run(parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
