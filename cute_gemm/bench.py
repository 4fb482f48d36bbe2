"""The main job: every phase of the GPU's arch checked, then timed beside its peers, shape by shape.

Results are one JSON document, schema ``cute-gemm/bench-v2``: where and how it was measured
(environment, data kind, protocol, telemetry), and one row per (kernel, shape) for phases and peers
alike (``kind: phase|peer``) with the check, the time spread over the interleaved rounds, and the SM
clock, power, energy efficiency and throttle reasons recorded while it was timed. ``api`` holds the
host-overhead measurement of ``cute-gemm bench --api`` (``cute_gemm.api_bench``); ``ncu_check`` is the
place for a profiler cross-check of the timings (null until a tool fills it).
"""

from __future__ import annotations

import json

from cute_gemm import environment, registry, timing
from cute_gemm.check import REL_ERR_LIMIT
from cute_gemm.measure import DATA_KINDS, STATUSES, check_phases, measure_shape, peak_for
from cute_gemm.problem import ATOL, RTOL, Problem

SCHEMA = "cute-gemm/bench-v2"
SWEEP = tuple(Problem(s, s, s) for s in (512, 1024, 2048, 3072, 4096, 6144, 8192))
CHECK = (f"vs cuBLASLt atol={ATOL:g} rtol={RTOL:g}, vs float64 rel Frobenius <= {REL_ERR_LIMIT:g}, no NaN left, "
         f"a repeat bit-identical")


def document(results: list[dict], *, data: str, protocol: dict, telemetry: dict, api: dict | None = None,
             env: dict | None = None) -> dict:
    """A bench-v2 document around ``results``; ``env``: ``environment.record()`` taken at the start."""
    env = env or environment.record()
    return {
        "schema": SCHEMA,
        **env,
        "data": data,
        "protocol": {**protocol, "check": CHECK, "check_peers": "the same without the repeat", "check_data": "randn"},
        "telemetry": telemetry,
        "peak_tflops": peak_for(env["gpu"]["name"]) if env.get("gpu") else None,
        "ncu_check": None,
        "results": results,
        "api": api,
    }


def run_bench(entries, shapes, peer_list, *, data: str = "randn", rounds: int = timing.ROUNDS,
              sustained_s: float = 0.0, cold_l2: bool = False, progress: bool = True,
              best_arch: str | None = None, variants=()) -> dict:
    """Check every entry at every shape, then shape by shape check the peers and time everything that
    passed, interleaved -> a bench-v2 document."""
    from cute_gemm.console import Progress
    from cute_gemm.power import Telemetry

    env = environment.record()
    peak = peak_for(env["gpu"]["name"]) if env["gpu"] else None
    telemetry = Telemetry.open()
    results = []
    total = len(shapes) * (len(entries) + len(variants) + (best_arch is not None) + len(peer_list) + rounds)
    try:
        with Progress(total, enabled=progress) as bar:
            checked = [check_phases(entries, p, step=bar.step, best_arch=best_arch, variants=variants) for p in shapes]
            for p, phases in zip(shapes, checked):
                results += measure_shape(p, phases, peer_list, data=data, rounds=rounds, sustained_s=sustained_s,
                                         cold_l2=cold_l2, telemetry=telemetry, peak=peak, step=bar.step)
    finally:
        telemetry.close()
    return document(results, data=data, protocol=timing.protocol(rounds, sustained_s, cold_l2),
                    telemetry=telemetry.describe(), env=env)


def estimate_seconds(n_kernels: int, n_shapes: int, rounds: int, sustained_s: float) -> float:
    """Lower bound of the GPU time the timing takes (the checks and compiles come on top)."""
    per_window = timing.TIMED_MS_PER_ROUND / 1000 + sustained_s
    return n_kernels * n_shapes * rounds * per_window


def _validate_result(i: int, r: dict) -> list[str]:
    errs = [f"results[{i}].{key} missing" for key in ("kind", "key", "label", "shape", "status") if key not in r]
    if errs:
        return errs
    if r["kind"] not in ("phase", "peer"):
        errs.append(f"results[{i}].kind is {r['kind']!r}, expected 'phase' or 'peer'")
    if r["kind"] == "phase" and "phase" not in r:
        errs.append(f"results[{i}].phase missing")
    if r["status"] not in STATUSES:
        errs.append(f"results[{i}].status is {r['status']!r}, expected one of {', '.join(STATUSES)}")
    if r["status"] != "ok":
        if r.get("timing"):
            errs.append(f"results[{i}] has status {r['status']!r} but carries a timing")
        if not r.get("reason"):
            errs.append(f"results[{i}] has status {r['status']!r} but no reason")
        return errs
    t = r.get("timing") or {}
    for key in ("ms_min", "ms_median", "ms_max", "tflops", "rounds", "launches_per_graph"):
        if key not in t:
            errs.append(f"results[{i}].timing.{key} missing")
    if all(k in t for k in ("ms_min", "ms_median", "ms_max")) and not (t["ms_min"] <= t["ms_median"] <= t["ms_max"]):
        errs.append(f"results[{i}]: min <= median <= max does not hold")
    if not (r.get("check") or {}).get("passed"):
        errs.append(f"results[{i}] is timed but its check did not pass")
    pw = r.get("power")
    if not isinstance(pw, dict):
        errs.append(f"results[{i}].power missing")
    else:
        for key in ("sm_clock_mhz", "power_w", "tflops_per_kw", "throttle_reasons"):
            if key not in pw:
                errs.append(f"results[{i}].power.{key} missing")
    return errs


def validate_doc(doc) -> list[str]:
    """Schema problems of a bench-v2 document ([] = valid). Used by `plot`, `load` and the tests."""
    if not isinstance(doc, dict):
        return [f"expected a JSON object, got {type(doc).__name__}"]
    if doc.get("schema") == "cute-gemm/bench-v1":
        return ["it is a bench-v1 result (single launches timed between CUDA events, before the CUDA-graph "
                "protocol); this version reads bench-v2: measure again with `cute-gemm bench`"]
    errs = [f"missing '{key}'" for key in ("schema", "date", "command", "gpu", "versions", "data", "protocol",
                                           "telemetry", "ncu_check", "results") if key not in doc]
    if errs:
        return errs
    if doc["schema"] != SCHEMA:
        errs.append(f"schema is {doc['schema']!r}, expected {SCHEMA!r}")
    if not isinstance(doc["gpu"], dict) or "name" not in doc["gpu"]:
        errs.append("gpu.name missing")
    if doc["data"] not in DATA_KINDS:
        errs.append(f"data is {doc['data']!r}, expected one of {', '.join(DATA_KINDS)}")
    for key in ("rounds", "sustained_s", "cold_l2"):
        if key not in (doc["protocol"] or {}):
            errs.append(f"protocol.{key} missing")
    if not isinstance(doc["results"], list):
        return errs + ["results is not a list"]
    if not doc["results"] and not doc.get("api"):
        errs.append("no results and no api section")
    for i, r in enumerate(doc["results"]):
        errs += _validate_result(i, r)
    return errs


def save(doc: dict, path: str):
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=False)
        f.write("\n")


def load(path: str) -> dict:
    """Read and validate a bench-v2 JSON file; ValueError with one clear sentence otherwise.

    (OSError, e.g. a missing file, propagates for the caller to word.)
    """
    with open(path) as f:
        text = f.read()
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); "
                         f"expected a result file written by `cute-gemm bench`") from None
    errs = validate_doc(doc)
    if errs:
        more = f" (and {len(errs) - 3} more)" if len(errs) > 3 else ""
        raise ValueError(f"{path} is not a cute-gemm bench-v2 result: " + "; ".join(errs[:3]) + more)
    return doc


def entries_for(arch: str, phases: list[str] | None):
    """The registered entries of ``arch``, restricted to ``phases`` (LookupError naming a missing one)."""
    ents = registry.all_entries(arch)
    if phases:
        missing = [p for p in phases if p not in {e.phase for e in ents}]
        if missing:
            have = ", ".join(e.phase for e in ents) or "none"
            raise LookupError(f"no {arch} kernel for phase(s) {', '.join(missing)} (registered: {have})")
        ents = [e for e in ents if e.phase in phases]
    return ents


NCU_AGREE = 0.05  # graph-replay time per launch and ncu's kernel duration agree within 5%


def ncu_check(doc: dict, shapes, arch: str, progress=print) -> dict:
    """Hold the CUDA-graph timing against Nsight Compute's duration of one launch of the same kernels.

    For every shape in ``shapes`` that ``doc`` timed: one ncu run (``cute_gemm.profile``), clocks and
    caches left alone, profiling each timed phase and cuBLAS once after warm-ups; per kernel the graph time
    per launch, ncu's duration, their ratio, the same ratio in SM cycles (graph time x the median SM clock
    sampled while it was timed, over ncu's duration x the clock ncu measured: the graph runs back to back
    under the power cap, a lone profiled launch may run faster), and whether either agrees within
    ``NCU_AGREE``.
    """
    from cute_gemm import profile, registry

    out = {"tolerance": NCU_AGREE, "shapes": {}}
    for p in shapes:
        rows = {r["key"]: r for r in doc["results"] if r["shape"] == str(p) and r.get("timing")}
        phases = [registry.get(arch, r["phase"]) for k, r in rows.items() if r["kind"] == "phase" and k != "best" and not r.get("config")]
        if not rows:
            continue
        try:
            ncu = profile.ncu_kernel_durations(phases, f"{p.m},{p.n},{p.k}", peers=("cublas",), with_clock=True)
        except Exception as exc:  # reported in the document, never fatal to the bench
            out["shapes"][str(p)] = {"error": str(exc).splitlines()[0] if str(exc) else type(exc).__name__}
            continue
        per = {}
        for label, (ns, hz) in ncu.items():
            key = label if label in rows else f"peer:{label}"
            if key not in rows:
                continue
            graph_us = rows[key]["timing"]["ms_median"] * 1e3
            mhz = ((rows[key].get("power") or {}).get("sm_clock_mhz") or {}).get("median")
            ratio = graph_us / (ns / 1e3)
            # the same comparison in SM cycles: the graph ran under the power cap, the lone launch may not
            cycles = graph_us * mhz / (ns / 1e3 * hz / 1e6) if mhz and hz else None
            per[key] = {"graph_us": graph_us, "ncu_us": ns / 1e3, "ratio": ratio, "graph_mhz": mhz,
                        "ncu_mhz": hz / 1e6 if hz else None, "cycle_ratio": cycles,
                        "agree": abs(ratio - 1) <= NCU_AGREE or (cycles is not None and abs(cycles - 1) <= NCU_AGREE)}
        out["shapes"][str(p)] = per
        progress(f"ncu check {p}: " + ", ".join(f"{k} {v['ratio']:.3f}" + (f" (cycles {v['cycle_ratio']:.3f})"
                                                                           if v["cycle_ratio"] else "")
                                                 for k, v in per.items()))
    return out
