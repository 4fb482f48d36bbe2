"""The main job: every phase of the GPU's arch, checked then timed beside cuBLAS and cuBLASLt.

Results are one JSON document (schema ``cute-gemm/bench-v1``): environment, protocol, and one row per
(phase, shape) with the check, the timing spread and the library timings measured in the same run.
"""

from __future__ import annotations

import dataclasses
import json
import sys

from cute_gemm import environment, registry
from cute_gemm.problem import HEADLINE, Problem

SCHEMA = "cute-gemm/bench-v1"
SWEEP = tuple(Problem(s, s, s) for s in (512, 1024, 2048, 3072, 4096, 6144, 8192))


class Progress:
    """A one-line progress bar on stderr (plain lines when stderr is not a terminal)."""

    def __init__(self, total: int, stream=sys.stderr):
        self.total, self.done, self.stream = total, 0, stream
        self.tty = hasattr(stream, "isatty") and stream.isatty()

    def step(self, label: str):
        self.done += 1
        width = 30
        fill = int(width * self.done / max(1, self.total))
        line = f"[{'#' * fill}{'.' * (width - fill)}] {self.done}/{self.total} {label}"
        if self.tty:
            self.stream.write("\r\033[K" + line)
            if self.done == self.total:
                self.stream.write("\n")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def run_bench(entries, shapes, cold_l2: bool = False, progress: bool = True) -> dict:
    """Check+time each entry at each shape; the libraries are timed once per shape, in the same run."""
    from cute_gemm.measure import library_timings, measure, peak_for

    env = environment.record()
    peak = peak_for(env["gpu"]["name"]) if env["gpu"] else None
    bar = Progress(len(shapes) * (len(entries) + 1)) if progress else None
    rows, libs_by_shape = [], {}
    for p in shapes:
        libs = library_timings(p, cold_l2)
        libs_by_shape[str(p)] = libs
        if bar:
            bar.step(f"{p} cuBLAS/cuBLASLt")
        for e in entries:
            m = None
            why = e.make().can_implement(p.m, p.n, p.k)
            if why:
                row = {"key": e.key, "phase": e.phase, "shape": str(p), "status": "skipped", "reason": "; ".join(why)}
            else:
                m = measure(e, p, cold_l2=cold_l2, libs=libs)
                row = dataclasses.asdict(m)
                row["status"] = "ok" if m.timing else ("error" if m.check.get("error") else "failed")
            row["adds"] = e.adds
            row["m"], row["n"], row["k"], row["flops"] = p.m, p.n, p.k, p.flops
            if m is not None and m.timing:
                t = m.timing["tflops"]
                row["pct_cublas"] = 100 * t / libs["cublas"]["tflops"]
                row["pct_cublaslt"] = 100 * t / libs["cublaslt"]["tflops"]
                row["pct_peak"] = 100 * t / peak if peak else None
            rows.append(row)
            if bar:
                tf = f"{row['timing']['tflops']:.0f} TFLOP/s" if row.get("timing") else row["status"]
                bar.step(f"{p} {e.key}: {tf}")
    return {
        "schema": SCHEMA,
        **env,
        "protocol": {
            "cold_l2": cold_l2,
            "warmup": 5,
            "iters": 10,
            "check": "vs cuBLASLt atol=0.01 rtol=0.001, float64 rel Frobenius <= 1e-4, no NaN, repeat identical",
        },
        "peak_tflops": peak,
        "libraries": libs_by_shape,
        "results": rows,
    }


def table(doc: dict) -> str:
    """The end-of-run table: phase, what it adds, TFLOP/s, % of cuBLAS / cuBLASLt / peak, check status."""
    lines = []
    for shape, libs in doc["libraries"].items():
        lines.append(
            f"\n{shape}   cuBLAS {libs['cublas']['tflops']:.1f} TFLOP/s   cuBLASLt {libs['cublaslt']['tflops']:.1f} TFLOP/s"
            + (f"   peak {doc['peak_tflops']:.0f}" if doc.get("peak_tflops") else "")
        )
        lines.append(f"  {'phase':<9}{'TFLOP/s':>9}{'min..max':>15}{'%cuBLAS':>9}{'%Lt':>7}{'%peak':>7}  {'check':<8} adds")
        for r in doc["results"]:
            if r["shape"] != shape:
                continue
            if r.get("timing"):
                t = r["timing"]
                spread = f"{t['tflops_worst']:.0f}..{t['tflops_best']:.0f}"
                peak = f"{r['pct_peak']:.0f}" if r.get("pct_peak") else "-"
                nums = f"{t['tflops']:>9.1f}{spread:>15}{r['pct_cublas']:>9.1f}{r['pct_cublaslt']:>7.1f}{peak:>7}"
                status = "pass"
            else:
                nums = f"{'-':>9}{'':>15}{'':>9}{'':>7}{'':>7}"
                status = r["status"]
            lines.append(f"  {r['key']:<9}{nums}  {status:<8} {r.get('adds', '')[:60]}")
    return "\n".join(lines)


def validate_doc(doc: dict) -> list[str]:
    """Schema problems of a bench JSON document ([] = valid). Used by `plot` and the tests."""
    errs = []
    for key in ("schema", "date", "command", "gpu", "versions", "protocol", "libraries", "results"):
        if key not in doc:
            errs.append(f"missing '{key}'")
    if errs:
        return errs
    if doc["schema"] != SCHEMA:
        errs.append(f"schema is {doc['schema']!r}, expected {SCHEMA!r}")
    if not doc["gpu"] or "name" not in doc["gpu"]:
        errs.append("gpu.name missing")
    for shape, libs in doc["libraries"].items():
        for lib in ("cublas", "cublaslt"):
            if lib not in libs or "tflops" not in libs[lib]:
                errs.append(f"libraries[{shape}].{lib}.tflops missing")
    for i, r in enumerate(doc["results"]):
        for key in ("key", "phase", "shape", "status"):
            if key not in r:
                errs.append(f"results[{i}].{key} missing")
        if r.get("status") == "ok":
            t = r.get("timing") or {}
            for key in ("ms_min", "ms_median", "ms_max", "tflops"):
                if key not in t:
                    errs.append(f"results[{i}].timing.{key} missing")
            if t and not (t["ms_min"] <= t["ms_median"] <= t["ms_max"]):
                errs.append(f"results[{i}]: min <= median <= max does not hold")
            if not (r.get("check") or {}).get("passed"):
                errs.append(f"results[{i}] is timed but its check did not pass")
        elif r.get("timing"):
            errs.append(f"results[{i}] has status {r.get('status')!r} but carries a timing")
    return errs


def save(doc: dict, path: str):
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=False)
        f.write("\n")


def load(path: str) -> dict:
    with open(path) as f:
        doc = json.load(f)
    errs = validate_doc(doc)
    if errs:
        raise ValueError(f"{path} is not a cute-gemm bench result: " + "; ".join(errs[:5]))
    return doc


def entries_for(arch: str, phases: str | None):
    ents = registry.all_entries(arch)
    if phases:
        want = registry.parse_phase_list(phases)
        missing = [p for p in want if p not in {e.phase for e in ents}]
        if missing:
            raise LookupError(f"no {arch} kernel for phase(s) {', '.join(missing)}")
        ents = [e for e in ents if e.phase in want]
    return ents
