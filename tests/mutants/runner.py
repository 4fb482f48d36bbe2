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
from .catalog_sm90 import CATEGORIES as SM90_CATEGORIES

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
    ladder: str = "sm100"
    caught_by: list = dataclasses.field(default_factory=list)  # sm90: "CPU rule", "PTX machine", ... that failed
    failed: list = dataclasses.field(default_factory=list)  # the failing tests' names (without parameters)


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
    for old, new in (list(m.parts) if getattr(m, "parts", ()) else substitutions(m)):
        count = text.count(old)
        if count != 1:
            raise NotApplicable(f"{m.path}: the text to replace occurs {count} times (expected once)")
        text = text.replace(old, new)
    with open(path, "w") as f:
        f.write(text)


def copy_env(root: str, **extra: str) -> dict:
    """The environment for checks run in the mutated copy at ``root``: the copy first on PYTHONPATH, before
    whatever the environment has there (on a machine where the DSL itself comes through PYTHONPATH, dropping
    that makes every check fail at import), no bytecode, none of the caller's pytest options."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, (root, os.environ.get("PYTHONPATH")))),
               PYTHONDONTWRITEBYTECODE="1", **extra)
    env.pop("PYTEST_ADDOPTS", None)
    return env


def run_mutant(m: Mutant, timeout_s: int, python: str = sys.executable, first_failure: bool = True,
               fast: bool = False) -> Outcome:
    """Apply ``m`` in a copy of the tree and run its checks; ``first_failure``: stop at the first failing
    test (pytest -x), else run them all and record which kinds of check failed (sm90's ``caught_by``);
    ``fast``: the CI subset, which runs a mutant's ``fast_checks`` where it has them."""
    t0 = time.perf_counter()
    ladder = getattr(m, "ladder", "sm100")
    with tempfile.TemporaryDirectory(prefix=f"mutant-{m.id}-") as root:
        try:
            mutate_copy(m, root)
        except NotApplicable as e:
            return Outcome(m.id, m.kind, m.phase, "invalid", 0.0, str(e), ladder)
        env = copy_env(root)
        checks = (getattr(m, "fast_checks", ()) if fast else ()) or m.checks
        cmd = [python, "-m", "pytest", *(["-x"] if first_failure else []), "-q", "-p", "no:cacheprovider",
               "-o", "addopts=", *checks]
        try:
            proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return Outcome(m.id, m.kind, m.phase, "timeout", time.perf_counter() - t0,
                           f"the checks ran past {timeout_s} s", ladder)
    secs = time.perf_counter() - t0
    out = proc.stdout + proc.stderr
    if proc.returncode == 5:  # pytest: no test collected -- a selector that matches nothing is a catalog bug
        return Outcome(m.id, m.kind, m.phase, "invalid", secs, "no test selected: " + " ".join(checks), ladder)
    if proc.returncode == 0:
        return Outcome(m.id, m.kind, m.phase, "survived", secs, _summary(out), ladder)
    missing = next((line.strip() for line in out.splitlines() if "ModuleNotFoundError: No module named" in line), "")
    if missing:  # the environment, not the mutant: a check that cannot import did not catch anything
        return Outcome(m.id, m.kind, m.phase, "invalid", secs, "the checks cannot import: " + missing[:160], ladder)
    if "MLIRError" in out or "DSLRuntimeError" in out:
        # the DSL's own verification refuses to compile the mutant: caught, but not by the checks
        err = next((line.strip() for line in out.splitlines() if "error" in line and "\"" in line), "")
        return Outcome(m.id, m.kind, m.phase, "compile", secs, "the DSL does not compile it: " + err[:200], ladder,
                       ["compile"])
    return Outcome(m.id, m.kind, m.phase, "killed", secs, _failure(out), ladder, caught_by(out), failed_tests(out))


def failed_tests(out: str) -> list:
    """The names of the failing tests (pytest's FAILED/ERROR lines, parameters dropped), in order."""
    names = []
    for line in out.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            name = line.split(" ", 1)[1].split(" - ")[0].split("::")[-1].split("[")[0].strip()
            if name not in names:
                names.append(name)
    return names


def caught_by(out: str) -> list:
    """The kinds of check that failed (pytest's FAILED/ERROR lines): "CPU rule" (the sm90 PTX rules),
    "PTX machine" (the sm90 simulation), "existing CPU test" (any other file), in that order."""
    kinds = set()
    for line in out.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            path = line.split(" ", 1)[1].split("::", 1)[0].strip()
            kinds.add(SM90_CATEGORIES.get(path, "existing CPU test"))
    order = ["CPU rule", "PTX machine", "existing CPU test"]
    return [k for k in order if k in kinds]


def _summary(out: str) -> str:
    lines = [line for line in out.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _failure(out: str) -> str:
    """The first failing test and the first problem it reports."""
    lines = out.splitlines()
    test = next((line.split(" - ")[0] for line in lines if line.startswith(("FAILED ", "ERROR "))), "")
    test = test.replace("FAILED ", "").replace("ERROR ", "").split("::", 1)[-1]
    # the first failure's own block of the report (without -x several follow: "____ test_x[...] ____")
    heads = [i for i, line in enumerate(lines) if line.startswith("____") and line.rstrip().endswith("____")]
    if len(heads) > 1:
        lines = lines[heads[0]:heads[1]]
    errs = [line.strip()[1:].strip() for line in lines if line.startswith("E ") and line.strip()[1:].strip()]
    # the simulator's report lists its problems as "- ..." under a header: show the first problem
    reason = next((e[2:] for e in errs if e.startswith("- ")),
                  next((e for e in errs if not e.startswith(("assert", "+", "where"))), ""))
    if reason.startswith("AssertionError: "):
        reason = reason[len("AssertionError: "):]
    return f"{test}: {reason}"[:300]
