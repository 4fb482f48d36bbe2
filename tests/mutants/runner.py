"""Apply one mutant in a copy of the tree and run its checks there."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
import tempfile
import time

from .catalog import Mutant, substitutions

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COPY = ("phases", "cute_gemm", "tests", "pyproject.toml")  # what the checks need


@dataclasses.dataclass
class Outcome:
    id: str
    kind: str
    phase: str
    status: str  # "killed", "compile" (the DSL refuses it), "survived", "timeout", "invalid" (did not apply)
    seconds: float
    detail: str  # the first failing test or the reason


class NotApplicable(Exception):
    pass


def mutate_copy(m: Mutant, root: str) -> None:
    """Copy the tree under ``root`` and apply the mutant's substitution there (exactly one occurrence)."""
    for name in COPY:
        src = os.path.join(REPO, name)
        dst = os.path.join(root, name)
        if os.path.isdir(src):
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache"))
        else:
            shutil.copy2(src, dst)
    path = os.path.join(root, m.path)
    with open(path) as f:
        text = f.read()
    for old, new in substitutions(m):
        count = text.count(old)
        if count != 1:
            raise NotApplicable(f"{m.path}: the text to replace occurs {count} times (expected once)")
        text = text.replace(old, new)
    with open(path, "w") as f:
        f.write(text)


def run_mutant(m: Mutant, timeout_s: int, python: str = sys.executable) -> Outcome:
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=f"mutant-{m.id}-") as root:
        try:
            mutate_copy(m, root)
        except NotApplicable as e:
            return Outcome(m.id, m.kind, m.phase, "invalid", 0.0, str(e))
        env = dict(os.environ, PYTHONPATH=root, PYTHONDONTWRITEBYTECODE="1")
        env.pop("PYTEST_ADDOPTS", None)
        cmd = [python, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-o", "addopts=", *m.checks]
        try:
            proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return Outcome(m.id, m.kind, m.phase, "timeout", time.perf_counter() - t0,
                           f"the checks ran past {timeout_s} s")
    secs = time.perf_counter() - t0
    out = proc.stdout + proc.stderr
    if proc.returncode == 5:  # pytest: no test collected -- a selector that matches nothing is a catalog bug
        return Outcome(m.id, m.kind, m.phase, "invalid", secs, "no test selected: " + " ".join(m.checks))
    if proc.returncode == 0:
        return Outcome(m.id, m.kind, m.phase, "survived", secs, _summary(out))
    if "MLIRError" in out or "DSLRuntimeError" in out:
        # the DSL's own verification refuses to compile the mutant: caught, but not by the checks
        err = next((line.strip() for line in out.splitlines() if "error" in line and "\"" in line), "")
        return Outcome(m.id, m.kind, m.phase, "compile", secs, "the DSL does not compile it: " + err[:200])
    return Outcome(m.id, m.kind, m.phase, "killed", secs, _failure(out))


def _summary(out: str) -> str:
    lines = [line for line in out.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _failure(out: str) -> str:
    """The first failing test and the first problem it reports."""
    lines = out.splitlines()
    test = next((line.split(" - ")[0] for line in lines if line.startswith(("FAILED ", "ERROR "))), "")
    test = test.replace("FAILED ", "").replace("ERROR ", "").split("::", 1)[-1]
    errs = [line.strip()[1:].strip() for line in lines if line.startswith("E ") and line.strip()[1:].strip()]
    # the simulator's report lists its problems as "- ..." under a header: show the first problem
    reason = next((e[2:] for e in errs if e.startswith("- ")),
                  next((e for e in errs if not e.startswith(("assert", "+", "where"))), ""))
    if reason.startswith("AssertionError: "):
        reason = reason[len("AssertionError: "):]
    return f"{test}: {reason}"[:300]
