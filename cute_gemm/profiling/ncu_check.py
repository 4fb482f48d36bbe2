"""The bench's CUDA-graph timings held against Nsight Compute's duration of one launch of the same kernels
(``cute-gemm bench --ncu-check``): the two should agree within ``NCU_AGREE``, in time or in SM cycles."""

from __future__ import annotations

from cute_gemm.profiling import ncu
from cute_gemm.runtime import registry

NCU_AGREE = 0.05  # graph-replay time per launch and ncu's kernel duration agree within 5%


def ncu_check(doc: dict, shapes, arch: str, progress=print) -> dict:
    """Hold the CUDA-graph timing against Nsight Compute's duration of one launch of the same kernels.

    For every shape in ``shapes`` that ``doc`` timed: one ncu run (``ncu.ncu_kernel_durations``), clocks and
    caches left alone, profiling each timed phase and cuBLAS once after warm-ups; per kernel the graph time
    per launch, ncu's duration, their ratio, the same ratio in SM cycles (graph time x the median SM clock
    sampled while it was timed, over ncu's duration x the clock ncu measured: the graph runs back to back
    under the power cap, a lone profiled launch may run faster), and whether either agrees within
    ``NCU_AGREE``.
    """
    out = {"tolerance": NCU_AGREE, "shapes": {}}
    for p in shapes:
        rows = {r["key"]: r for r in doc["results"] if r["shape"] == str(p) and r.get("timing")}
        phases = [registry.get(arch, r["phase"]) for k, r in rows.items() if r["kind"] == "phase" and k != "best" and not r.get("config")]
        if not rows:
            continue
        try:
            durations = ncu.ncu_kernel_durations(phases, f"{p.m},{p.n},{p.k}", peers=("cublas",), with_clock=True)
        except Exception as exc:  # reported in the document, never fatal to the bench
            out["shapes"][str(p)] = {"error": str(exc).splitlines()[0] if str(exc) else type(exc).__name__}
            continue
        per = {}
        for label, (ns, hz) in durations.items():
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
