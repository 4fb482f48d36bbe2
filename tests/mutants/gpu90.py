"""``python -m tests.mutants --ladder sm90 --gpu``: the sm90 mutants against the H200 GPU tests.

Each mutant is applied in its own copy of the tree (``runner.mutate_copy``; the checkout is never
touched). Two stages:

1. compile, on all CPU cores at once: each copy compiles its phase (``cute_gemm.compile_only``) into
   its own disk cache (``CUTE_GEMM_CACHE_DIR`` inside the copy), so the GPU stage only loads kernels;
   a mutant the DSL refuses to compile is recorded as ``compile``;
2. test, ``--gpu-jobs`` copies at once on the one GPU: ``pytest -m gpu -x`` on a few aligned and ragged
   shapes of the phase (``catalog_sm90.gpu_tests``: ``test_phase_matches_cublaslt`` and
   ``test_ragged_shapes`` of ``tests/test_gpu_phases.py``, each checked against cuBLASLt and float64,
   NaN-poisoned, repeated bit-identically). A failing check kills the mutant; a hang (the conftest's
   per-test timeout, ``CUTE_GEMM_GPU_TEST_TIMEOUT``, or the run's ``--timeout``) kills it too.

The unmutated tree runs the same tests first (the control): a failing control makes the run invalid.
The result, ``mutants_sm90_gpu.json``, and the report merged with the CPU run's ``mutants_sm90.json``
(when ``--out`` holds one), ``mutants_sm90.md``, go to ``--out``.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import os
import shutil
import subprocess
import sys
import tempfile
import time

from .catalog_sm90 import gpu_tests
from .runner import NotApplicable, copy_env, mutate_copy


@dataclasses.dataclass(frozen=True)
class _Control:
    """The unmutated tree: mutate_copy with nothing to substitute."""

    id: str
    phase: str
    gpu: tuple = ()  # the GPU tests it runs, as a mutant of its group would (``Mutant90.gpu``)


def _copy(m, root: str) -> None:
    if isinstance(m, _Control):
        from .runner import COPY, REPO

        for name in COPY:
            src, dst = os.path.join(REPO, name), os.path.join(root, name)
            if os.path.isdir(src):
                shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache"))
            else:
                shutil.copy2(src, dst)
        return
    mutate_copy(m, root)


def _env(root: str, test_timeout: int) -> dict:
    env = copy_env(root, CUTE_GEMM_CACHE_DIR=os.path.join(root, ".cute-gemm-cache"),
                   CUTE_GEMM_GPU_TEST_TIMEOUT=str(test_timeout))
    env.pop("CUTE_GEMM_NO_DISK_CACHE", None)
    return env


def prepare(m, python: str, test_timeout: int, compile_timeout: int = 300) -> dict:
    """Copy, mutate and compile; {"id", "root", "status" ("ready", "invalid", "compile"), "detail", "seconds"}."""
    t0 = time.perf_counter()
    root = tempfile.mkdtemp(prefix=f"mutant-gpu-{m.id}-")
    try:
        _copy(m, root)
    except NotApplicable as e:
        return {"id": m.id, "root": root, "status": "invalid", "detail": str(e), "seconds": 0.0}
    code = f"import cute_gemm; cute_gemm.compile_only({m.phase!r}, None, 'sm90')"
    try:
        proc = subprocess.run([python, "-c", code], cwd=root, env=_env(root, test_timeout), capture_output=True,
                              text=True, timeout=compile_timeout)
    except subprocess.TimeoutExpired:
        return {"id": m.id, "root": root, "status": "compile", "detail": f"the compile ran past {compile_timeout} s",
                "seconds": time.perf_counter() - t0}
    if proc.returncode:
        last = [line for line in (proc.stderr or proc.stdout).splitlines() if line.strip()]
        return {"id": m.id, "root": root, "status": "compile", "detail": (last[-1] if last else "")[:200],
                "seconds": time.perf_counter() - t0}
    return {"id": m.id, "root": root, "status": "ready", "detail": "", "seconds": time.perf_counter() - t0}


def gpu_verdict(m, root: str, python: str, timeout_s: int, test_timeout: int) -> dict:
    """Run the phase's GPU tests in the mutated copy; {"status": "killed" | "hang" | "survived" | "invalid", ...}."""
    t0 = time.perf_counter()
    cmd = [python, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-o", "addopts=", "-m", "gpu",
           *(m.gpu or gpu_tests(m.phase))]
    try:
        proc = subprocess.run(cmd, cwd=root, env=_env(root, test_timeout), capture_output=True, text=True,
                              timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {"status": "hang", "detail": f"the GPU tests ran past {timeout_s} s", "seconds": time.perf_counter() - t0}
    seconds = time.perf_counter() - t0
    r = classify(proc.returncode, proc.stdout + proc.stderr, test_timeout, seconds)
    r["seconds"] = seconds
    return r


def classify(returncode: int, out: str, test_timeout: int = 40, seconds: float | None = None) -> dict:
    """The verdict of one GPU pytest run: {"status": "killed" | "hang" | "survived" | "invalid", "detail"}.

    A hang shows as the conftest's faulthandler dump ("Timeout (...)"), or -- when pytest's fd capture
    swallowed that dump as the faulthandler ended the process -- as a run that printed no result, failed,
    and lasted past the per-test timeout (``seconds``)."""
    ran = " passed" in out or " failed" in out or "FAILED " in out or "Timeout (" in out
    if not ran and returncode not in (0, 5) and seconds is not None and seconds >= test_timeout:
        return {"status": "hang", "detail": f"a GPU test ran past {test_timeout} s (no result printed; the "
                                            f"per-test timeout ended the run after {seconds:.0f} s)"}
    if returncode == 5 or not ran:
        return {"status": "invalid", "detail": "no GPU test ran (no sm90 GPU, or the node ids are stale)"}
    if "Timeout (" in out:  # the conftest's faulthandler: a test ran past CUTE_GEMM_GPU_TEST_TIMEOUT
        return {"status": "hang", "detail": f"a GPU test ran past {test_timeout} s"}
    if returncode == 0:
        return {"status": "survived", "detail": ""}
    failed = next((line[7:].split(" - ")[0] for line in out.splitlines() if line.startswith("FAILED ")), "")
    reason = next((line.strip()[1:].strip() for line in out.splitlines() if line.startswith("E ")), "")
    return {"status": "killed", "detail": f"{failed.split('::')[-1]}: {reason}"[:200]}


def run_gpu(mutants: list, *, jobs: int, gpu_jobs: int, timeout_s: int, test_timeout: int,
            python: str = sys.executable, log=print) -> dict:
    """{"control": {phase: result}, "mutants": {id: result}} for the sm90 ``mutants`` on this machine's GPU."""
    # one control per set of GPU tests the mutants run (a phase's own, or a mutant group's ``gpu``)
    groups = sorted({(m.phase, m.gpu) for m in mutants}, key=str)
    controls = [_Control(f"control-{p}" + ("-" + gpu[-1].split()[-1] if gpu else ""), p, gpu) for p, gpu in groups]
    everything = controls + list(mutants)
    t0 = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        prepared = dict(zip([m.id for m in everything],
                            pool.map(lambda m: prepare(m, python, test_timeout), everything)))
    log(f"compiled {len(everything)} trees in {time.perf_counter() - t0:.0f} s "
        f"({sum(p['status'] == 'compile' for p in prepared.values())} refused by the DSL)")
    results: dict = {}
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, gpu_jobs)) as pool:
            futures = {}
            for m in everything:
                p = prepared[m.id]
                if p["status"] != "ready":
                    results[m.id] = {"status": p["status"], "detail": p["detail"], "seconds": p["seconds"]}
                    continue
                futures[pool.submit(gpu_verdict, m, p["root"], python, timeout_s, test_timeout)] = m
            for fut in concurrent.futures.as_completed(futures):
                m = futures[fut]
                r = fut.result()
                r["seconds"] = round(r["seconds"] + prepared[m.id]["seconds"], 1)
                results[m.id] = r
                log(f"[{len(results)}/{len(everything)}] {m.id}: {r['status']} ({r['seconds']:.0f} s) {r['detail'][:100]}")
    finally:
        for p in prepared.values():
            shutil.rmtree(p["root"], ignore_errors=True)
    return {"control": {c.id[len("control-"):]: results[c.id] for c in controls},
            "mutants": {m.id: results[m.id] for m in mutants},
            "seconds": round(time.perf_counter() - t0, 1)}
