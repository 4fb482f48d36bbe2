"""A bench-v2 document as the bench would write it, without a GPU: rows built by the bench's own code
(``shape._row``, ``timing.Timing``, ``power.summarize``, ``shape.add_percentages``, ``shape.add_bandwidth``,
``bandwidth.summarize``, ``results.document``) from made-up times, copies and NVML samples. Shared by the
schema, table, plot and CLI tests."""

import dataclasses

from cute_gemm.measure import bandwidth, power, results, shape, timing
from cute_gemm.measure.check import CheckResult
from cute_gemm.runtime.problem import Problem

ENV = {
    "date": "2026-11-30T12:00:00+00:00", "command": "python3 -m cute_gemm bench --sweep", "host": "test",
    "gpu": {"name": "NVIDIA H200", "capability": "9.0", "sm_count": 132, "driver": "580.159.04"},
    "versions": {"torch": "2.11.0+cu130", "nvidia_cutlass_dsl": "4.8.1", "triton": "3.6.0", "quack": "0.6.5"},
}
PHASE_TFLOPS = {"0": 420.0, "1": 560.0, "2a": 650.0, "2b": 655.0, "3": 700.0, "4": 705.0, "5": 712.0, "6": 728.0}
PEER_TFLOPS = {"cublas": 736.0, "cublaslt": 733.0}
SQUARE = (512, 1024, 2048, 4096)
COPY = bandwidth.summarize([0.52, 0.5, 0.51, 0.5, 0.5], 2**30)  # a device copy of 1 GiB: 4.29 TB/s


def _timed(row, p, tflops, mhz=1500, watts=700.0, reasons=0x4):
    ms = p.flops / (tflops * 1e9)
    t = timing.Timing([ms * 1.02, ms, ms * 0.99, ms * 1.01, ms], launches_per_graph=8, replays_per_round=10,
                      input_sets=1)
    row["timing"] = t.as_dict(p.flops)
    window = power.Window(seconds=0.25, energy_mj=int(watts * 250),
                          samples=[power.Sample(mhz, int(watts * 1000), reasons), power.Sample(mhz + 15, None, reasons)])
    row["power"] = power.summarize([window] * 5, row["timing"]["tflops"])
    row["check"] = dataclasses.asdict(CheckResult(row["key"], str(p), True, unwritten=0, mismatches=0,
                                                  max_abs_err=2e-3, rel_fro_err=3e-7, cublaslt_rel_fro_err=3e-7,
                                                  repeat_identical=True))


def shape_rows(p: Problem) -> list[dict]:
    rows = []
    for phase, tf in PHASE_TFLOPS.items():
        row = shape._row("phase", f"sm90:{phase}", phase, f"phase {phase}", p, phase=phase,
                           adds=f"what phase {phase} adds over the one before")
        if phase == "4" and p.m == 512:
            row.update(status="failed", reason="sm90:4 512x512x512: FAIL (3 mismatches)",
                       check={"passed": False, "error": None, "mismatches": 3})
        elif phase == "5" and p.m == 512:
            row.update(status="skipped", reason="M=512 is not a multiple of 1024")
        else:
            _timed(row, p, tf * (0.6 if p.m == 512 else 1.0))
        rows.append(row)
    for name, tf in PEER_TFLOPS.items():
        row = shape._row("peer", f"peer:{name}", name, {"cublas": "cuBLAS", "cublaslt": "cuBLASLt"}[name], p)
        _timed(row, p, tf, mhz=1480)
        rows.append(row)
    rows.append(shape._row("peer", "peer:triton", "triton", "Triton", p))
    rows[-1].update(status="absent", reason="triton is not installed")
    rows.append(shape._row("peer", "peer:quack", "quack", "quack gemm", p))
    rows[-1].update(status="error", reason="RuntimeError: no sm90 config")
    shape.add_percentages(rows, 989.0)
    shape.add_bandwidth(rows, p, copy_tb_s=COPY["tb_s"])
    return rows


def make_doc(sweep: bool = True, data: str = "randn", telemetry: bool = True) -> dict:
    shapes = [Problem(4096, 4096, 4096), Problem(1024, 4096, 4096)]
    if sweep:
        shapes += [Problem(s, s, s) for s in SQUARE if s != 4096]
    rows = [r for p in shapes for r in shape_rows(p)]
    tel = ({"available": True, "reason": None, "sample_interval_ms": 5.0, "power_limit_w": 700.0} if telemetry
           else {"available": False, "reason": "pynvml is not installed"})
    return results.document(rows, data=data, protocol=timing.protocol(7, 1.0, False), telemetry=tel, env=ENV,
                            copy_bandwidth=COPY)
