"""Where the cycles go, per phase, from Nsight Compute's hardware counters (``cute-gemm profile``).

One ncu process per shape runs a small driver (``python3 -m cute_gemm.profiling.driver``) that, for each
chosen phase and library peer, compiles, launches a few warm-ups, then launches once more between
cudaProfilerStart/Stop. ncu (``--profile-from-start off``, clocks and caches left alone) profiles only
those launches; its raw CSV page is parsed (``ncu_metrics``) into one column per kernel: duration, SM
clock, cycles, tensor/shared pipe use, occupancy, registers, smem, DRAM/L2 throughput, L2 hit rate,
shared-memory bank conflicts and the top three warp-stall reasons.

Also here, for the rest of the harness: ``ncu_kernel_durations`` (duration only, to cross-check the
benchmark's timing), ``profile_deltas`` (two kernels side by side, for ``compare``) and ``moved_most``
(which counter moved most at each step of the ladder). Their tables are drawn by
``cute_gemm.report.tables``.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

from cute_gemm.profiling import ncu_metrics as nm
from cute_gemm.runtime.problem import Problem

SCHEMA = "cute-gemm/profile-v1"
PEERS = {"cublas": "cuBLAS", "cublaslt": "cuBLASLt"}
PEER_KERNEL = r"nvjet|gemm|xmma"  # the GEMM kernel among whatever a library launches in its window
DRIVER_TAG = "cute-gemm profile driver:"
DRIVER_MODULE = "cute_gemm.profiling.driver"  # what ncu runs: `python -m DRIVER_MODULE --targets ...`
WARMUP = 5
TIMEOUT_S = 480
QUERY_TIMEOUT_S = 120


class NcuError(RuntimeError):
    """ncu is missing, failed, or profiled nothing; the message is one line, fit to print as is."""


# ------------------------------------------------------------------------------------------- ncu
def find_ncu() -> str:
    path = shutil.which("ncu")
    if path is None:
        raise NcuError("ncu (Nsight Compute) is not on PATH: install Nsight Compute or put its folder on PATH")
    return path


def _run(cmd: list[str], timeout: float, what: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=_driver_env())
    except subprocess.TimeoutExpired:
        raise NcuError(f"{what} did not finish within {timeout:.0f} s (killed): {shlex.join(cmd[:6])} ...") from None
    except OSError as exc:
        raise NcuError(f"{what} could not start: {exc}") from None


def _ncu_errors(proc: subprocess.CompletedProcess) -> list[str]:
    """ncu's ==ERROR== lines (e.g. ERR_NVGPUCTRPERM: no permission to read the counters), prefix dropped."""
    text = (proc.stdout or "") + "\n" + (proc.stderr or "")
    return [ln.split("==ERROR==", 1)[1].strip() for ln in text.splitlines() if "==ERROR==" in ln]


def ncu_version(ncu: str) -> str:
    proc = _run([ncu, "--version"], 30, "ncu --version")
    m = re.search(r"Version\s+(\S+)", proc.stdout or "")
    return m.group(1) if m else "unknown"


@functools.lru_cache(maxsize=None)
def available_metrics(ncu: str) -> frozenset[str]:
    """Base names of the metrics this ncu can collect on this machine's GPU (queried once per process)."""
    proc = _run([ncu, "--query-metrics"], QUERY_TIMEOUT_S, "ncu --query-metrics")
    names = nm.parse_query_metrics(proc.stdout or "")
    if proc.returncode != 0 or not names:
        errs = _ncu_errors(proc)
        why = errs[0] if errs else (proc.stderr or proc.stdout or "no output").strip().splitlines()[-1]
        raise NcuError(f"ncu --query-metrics failed (exit {proc.returncode}): {why}")
    return frozenset(names)


def split_metrics(metrics, available) -> tuple[list[str], list[str]]:
    """(metrics to ask ncu for, metrics this ncu does not have); launch statistics are neither."""
    missing = nm.missing_metrics(metrics, set(available))
    ask = [m for m in metrics if m not in missing and not nm.is_launch_stat(m)]
    return ask, missing


# --------------------------------------------------------------------------------------- targets
@dataclasses.dataclass(frozen=True)
class Target:
    """One kernel to profile: its label ('sm90:5', 'cublas') and a regex its ncu kernel name matches."""

    label: str
    pattern: str


def phase_target(entry) -> Target:
    # a CuTe DSL kernel's name embeds its class: kernel_cutlass_kernel_phasessm90phase5_..Sm90Phase5_object_at_..
    return Target(entry.key, re.escape(entry.kernel_cls.__name__) + r"(?![0-9A-Za-z])")


def peer_target(name: str) -> Target:
    if name not in PEERS:
        raise ValueError(f"unknown peer {name!r}: peers are {', '.join(PEERS)} (or 'none')")
    return Target(name, PEER_KERNEL)


def parse_peers(spec: str | None) -> list[str]:
    if not spec or spec.strip().lower() == "none":
        return []
    peers = [p.strip().lower() for p in spec.split(",") if p.strip()]
    for p in peers:
        peer_target(p)
    return peers


def assign_rows(rows: list[nm.KernelRow], targets: list[Target]):
    """Match profiled kernels to targets in launch order: each target takes the first later kernel whose
    name matches its pattern. Returns ({label: row}, [names of kernels no target took])."""
    taken: dict[str, nm.KernelRow] = {}
    used = set()
    pos = 0
    for t in targets:
        rx = re.compile(t.pattern, re.IGNORECASE)
        for i in range(pos, len(rows)):
            if rx.search(rows[i].name):
                taken[t.label] = rows[i]
                used.add(i)
                pos = i + 1
                break
    others = [r.name for i, r in enumerate(rows) if i not in used]
    return taken, others


# ------------------------------------------------------------------------------------- profiling
def _driver_env() -> dict:
    """The environment for ncu and its driver: this checkout first on PYTHONPATH, so the driver imports
    the same cute_gemm as the caller."""
    import cute_gemm

    root = os.path.dirname(os.path.dirname(os.path.abspath(cute_gemm.__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def ncu_command(ncu: str, targets: list[Target], shape: str, metrics: list[str], launch_stats: bool,
                warmup: int = WARMUP) -> list[str]:
    cmd = [ncu, "--csv", "--page", "raw", "--clock-control", "none", "--cache-control", "none",
           "--profile-from-start", "off"]
    if launch_stats:
        cmd += ["--section", "LaunchStats"]
    if metrics:
        cmd += ["--metrics", ",".join(metrics)]
    cmd += [sys.executable, "-m", DRIVER_MODULE, "--targets", ",".join(t.label for t in targets),
            "--shape", shape, "--warmup", str(warmup)]
    return cmd


@dataclasses.dataclass
class NcuRun:
    rows: dict[str, nm.KernelRow]  # label -> its profiled kernel
    not_profiled: dict[str, str]  # label -> why
    notes: list[str]  # ncu's non-fatal errors, kernels no target took
    csv: str


def run_ncu(cmd: list[str], targets: list[Target], timeout: float = TIMEOUT_S) -> NcuRun:
    """Run one ncu command over the driver and map its rows to the targets; NcuError if nothing came back."""
    proc = _run(cmd, timeout, "ncu")
    rows = nm.parse_raw_csv(proc.stdout or "")
    errors = _ncu_errors(proc)
    driver_says = [ln.split(DRIVER_TAG, 1)[1].strip() for ln in (proc.stderr or "").splitlines() if DRIVER_TAG in ln]
    if not rows:
        if errors:
            raise NcuError(f"ncu: {errors[0]}")
        if driver_says:
            raise NcuError(f"the profiled driver failed: {driver_says[0]}")
        if "No kernels were profiled" in (proc.stdout or "") + (proc.stderr or ""):
            raise NcuError("ncu profiled no kernel: none of the driver's launches ran between its profiler start/stop")
        tail = (proc.stderr or proc.stdout or "no output").strip().splitlines()[-1:] or ["no output"]
        raise NcuError(f"ncu exited with {proc.returncode} and no report: {tail[0]}")
    taken, others = assign_rows(rows, targets)
    why = {}
    for t in targets:
        if t.label not in taken:
            said = [d for d in driver_says if d.startswith(t.label + " ")]
            why[t.label] = said[0] if said else f"no profiled kernel matched /{t.pattern}/"
    notes = [f"ncu: {e}" for e in errors] + [f"also profiled (no target took it): {n}" for n in others]
    return NcuRun(taken, why, notes, proc.stdout)


def kernel_record(target: Target, row: nm.KernelRow, metrics: list[str]) -> dict:
    """What the JSON keeps of one profiled kernel: our columns, the stall ratios, the raw metrics asked for."""
    return {
        "label": target.label,
        "kernel": row.name,
        "grid": row.grid,
        "block": row.block,
        "values": nm.column_values(row),
        "stalls": nm.stall_ratios(row),
        "metrics": {m: row.value(m) for m in metrics if m in row.metrics},
    }


def _shape_arg(shape) -> str:
    p = shape if isinstance(shape, Problem) else Problem.parse(str(shape))
    return f"{p.m},{p.n},{p.k}"


def run_profile(entries, shape, peers=("cublas",), warmup: int = WARMUP, timeout: float = TIMEOUT_S,
                ncu: str | None = None, warn=None) -> dict:
    """Profile each phase entry and peer once at ``shape``; the ``cute-gemm/profile-v1`` document.

    Phases that cannot do the shape are listed under ``not_profiled`` without running. ``warn`` (a
    callable taking one line) hears about metrics this ncu lacks; they show as n/a.
    """
    from cute_gemm.measure import environment

    ncu = ncu or find_ncu()
    p = Problem.parse(_shape_arg(shape))
    wanted = nm.all_metrics()
    ask, missing = split_metrics(wanted, available_metrics(ncu))
    if missing and warn:
        warn(f"this ncu has no metric {', '.join(missing)}: shown as n/a")
    targets, skipped = [], {}
    for e in entries:
        why = e.make().can_implement(p.m, p.n, p.k)
        if why:
            skipped[e.key] = "; ".join(why)
        else:
            targets.append(phase_target(e))
    targets += [peer_target(name) for name in peers]
    doc = {"schema": SCHEMA, **environment.record(), "ncu_version": ncu_version(ncu),
           "shape": {"m": p.m, "n": p.n, "k": p.k}, "warmup": warmup,
           "columns": {k: list(c.metrics) for k, c in nm.COLUMNS.items()},
           "missing_metrics": missing, "not_reported": [], "kernels": [], "not_profiled": dict(skipped), "notes": []}
    if not targets:
        return doc
    cmd = ncu_command(ncu, targets, _shape_arg(p), ask, launch_stats=True, warmup=warmup)
    doc["ncu_command"] = shlex.join(cmd)
    run = run_ncu(cmd, targets, timeout)
    doc["kernels"] = [kernel_record(t, run.rows[t.label], wanted) for t in targets if t.label in run.rows]
    absent = {m for row in run.rows.values() for m in nm.missing_in_row(row, wanted)}
    doc["not_reported"] = [m for m in wanted if m in absent and m not in missing]
    doc["not_profiled"].update(run.not_profiled)
    doc["notes"] = run.notes
    doc["raw_csv"] = run.csv
    return doc


CLOCK_METRIC = nm.COLUMNS["sm_clock"].metrics[0]  # Hz over the kernel: to compare times taken at other clocks


def ncu_kernel_durations(phases, shape, peers=("cublas",), warmup: int = WARMUP, timeout: float = TIMEOUT_S,
                         ncu: str | None = None, with_clock: bool = False) -> dict:
    """{label: ncu's gpu__time_duration.sum in ns} for one profiled launch of each phase and peer at ``shape``.

    ``phases``: registry entries, or phase ids resolved for this GPU's arch. The same machinery as the
    profile (one ncu process, warm-ups, one launch each), collecting the duration only, so the benchmark
    can hold its CUDA-graph timing against ncu's. Phases that cannot do the shape, or that ncu did not
    see, are left out of the result.
    """
    from cute_gemm.runtime import registry

    ncu = ncu or find_ncu()
    fam = (gpu_family()[0] or "sm90") if any(isinstance(ph, (str, int)) for ph in phases) else None
    entries = [registry.resolve(str(ph), fam) if isinstance(ph, (str, int)) else ph for ph in phases]
    p = _shape_arg(shape)
    dims = [int(x) for x in p.split(",")]
    targets = [phase_target(e) for e in entries if not e.make().can_implement(*dims)]
    targets += [peer_target(name) for name in peers]
    if not targets:
        return {}
    metrics = [nm.DURATION_METRIC] + ([CLOCK_METRIC] if with_clock else [])
    cmd = ncu_command(ncu, targets, p, metrics, launch_stats=False, warmup=warmup)
    run = run_ncu(cmd, targets, timeout)
    if with_clock:  # {label: (duration ns, SM clock Hz)}
        return {label: (row.value(nm.DURATION_METRIC), row.value(CLOCK_METRIC)) for label, row in run.rows.items()
                if row.value(nm.DURATION_METRIC) is not None}
    return {label: row.value(nm.DURATION_METRIC) for label, row in run.rows.items()
            if row.value(nm.DURATION_METRIC) is not None}


def gpu_family() -> tuple[str | None, str]:
    """(the ladder GPU 0 runs, or None; and if None, why not)."""
    from cute_gemm.measure import environment
    from cute_gemm.runtime import arch

    info = environment.gpu()
    if info is None:
        return None, "no CUDA GPU is visible to torch"
    fam = arch.family_of_capability(*(int(x) for x in info["capability"].split(".")))
    return fam, f"{info['name']} (compute capability {info['capability']}) runs neither ladder"


# -------------------------------------------------------------------------------- deltas / moved
# counters that explain a step, each with a floor: a change is measured against max(|before|, floor), so
# a counter that starts near zero cannot win on noise (1e4 bank conflicts are nothing at 4096^3).
MOVERS = {"tensor_pipe": 5.0, "occupancy": 5.0, "dram": 5.0, "l2": 5.0, "l2_hit": 5.0,
          "conflicts_ld": 1e4, "conflicts_st": 1e4, **{f"stall:{r}": 0.10 for r in nm.STALL_REASONS}}


def counter_value(kernel: dict, key: str):
    """A column value, or for 'stall:<reason>' that reason's share (0..1) of all stall ratios."""
    if key.startswith("stall:"):
        shares = dict(nm.stall_shares(kernel.get("stalls") or {}))
        return shares.get(key.split(":", 1)[1]) if shares else None
    return kernel["values"].get(key)


def top_stalls(kernel: dict, n: int = 3) -> list[tuple[str, float]]:
    return nm.stall_shares(kernel.get("stalls") or {})[:n]


def relative(a, b):
    return None if a is None or b is None or a == 0 else (b - a) / abs(a)


def profile_deltas(a: dict, b: dict) -> list[tuple[str, object, object, float | None]]:
    """[(counter, a value, b value, relative change b/a - 1 or None)] for two profiled kernels: every
    column, then the stall shares of the reasons in either kernel's top three."""
    keys = list(nm.COLUMNS)
    keys += [f"stall:{r}" for r in dict.fromkeys([r for k in (a, b) for r, _ in top_stalls(k)])]
    return [(key, counter_value(a, key), counter_value(b, key), relative(counter_value(a, key), counter_value(b, key)))
            for key in keys]


def moved_most(kernels: list[dict], counters: dict[str, float] = MOVERS) -> list[dict]:
    """For each step between consecutive kernels (the ladder, in order): the counter that moved most.

    'Most' is the largest |after - before| / max(|before|, floor) among ``counters`` (counter -> floor).
    Duration is the step's effect, not its explanation, so it is reported beside the mover, not among them.
    """
    steps = []
    for a, b in zip(kernels, kernels[1:]):
        best, score = None, -1.0
        for key, floor in counters.items():
            va, vb = counter_value(a, key), counter_value(b, key)
            if va is None or vb is None:
                continue
            s = abs(vb - va) / max(abs(va), floor)
            if s > score:
                best, score = key, s
        steps.append({"from": a["label"], "to": b["label"], "counter": best,
                      "before": counter_value(a, best) if best else None,
                      "after": counter_value(b, best) if best else None,
                      "change": relative(counter_value(a, best), counter_value(b, best)) if best else None,
                      "duration_before": a["values"].get("duration"), "duration_after": b["values"].get("duration")})
    return steps


# ------------------------------------------------------------------------------------------- JSON
def save(doc: dict, path: str) -> None:
    """Write the document; the raw CSV (large) stays out of the JSON, beside it as <path>.ncu.csv."""
    raw = doc.get("raw_csv")
    with open(path, "w") as f:
        json.dump({k: v for k, v in doc.items() if k != "raw_csv"}, f, indent=1)
    if raw:
        with open(os.path.splitext(path)[0] + ".ncu.csv", "w") as f:
            f.write(raw)


def load(path: str) -> dict:
    """A profile saved by ``save``; ValueError in one sentence for anything else (the raw CSV kept beside
    it, a bench result, a binary file). OSError propagates."""
    from cute_gemm.measure.results import read_json

    if path.endswith((".ncu.csv", ".ncu.csv.gz")):
        raise ValueError(f"{path} is the raw Nsight Compute CSV kept beside a profile; --from reads the profile "
                         f"itself: {path.split('.ncu.csv')[0]}.json")
    doc = read_json(path, "a profile written by `cute-gemm profile --json`")
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        schema = doc.get("schema") if isinstance(doc, dict) else None
        raise ValueError(f"{path} is not a profile written by `cute-gemm profile --json` (schema {schema!r})")
    return doc


