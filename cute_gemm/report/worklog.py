"""The worklog's own measurements (B300, tcgen05), as data, for the side-by-side figure.

Source: the worklog "Optimizing GEMMs using tcgen05 - Part 1" (Gaurav Jain, 09 Sep 2026; a blog worklog
on a B300), section 1 and its Fig. 1: TFLOP/s per phase at 4096^3 and at M=1024, N=K=4096, fp16 in,
fp32 out, B N-major, beside cuBLASLt measured on the same B300.
Phase 1 at M=1024 is given there as a range (~478-485); it is kept as one.
"""

from __future__ import annotations

GPU = "B300 (tcgen05)"
VENDOR = "cuBLASLt"

# shape -> phase -> TFLOP/s, or (low, high) where the worklog gives a range
TFLOPS = {
    "4096x4096x4096": {"0": 713, "1": 824, "2a": 959, "2b": 978, "3": 1153, "4": 1285, "5": 1451},
    "1024x4096x4096": {"0": 460, "1": (478, 485)},
}
CUBLASLT_TFLOPS = {"4096x4096x4096": 1762, "1024x4096x4096": 1400}


def pct_of_vendor(shape: str) -> dict[str, tuple[float, float, float]]:
    """phase -> (% of cuBLASLt at the middle, low, high) of the worklog's numbers at ``shape``."""
    ref = CUBLASLT_TFLOPS[shape]
    out = {}
    for phase, v in TFLOPS.get(shape, {}).items():
        lo, hi = v if isinstance(v, tuple) else (v, v)
        out[phase] = (100 * (lo + hi) / 2 / ref, 100 * lo / ref, 100 * hi / ref)
    return out
