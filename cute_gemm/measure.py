"""Check, then time, a phase beside cuBLAS and cuBLASLt on the same inputs in the same run."""

from __future__ import annotations

import dataclasses

from cute_gemm import reference
from cute_gemm.check import check_phase
from cute_gemm.problem import Problem, make_inputs, poisoned_output
from cute_gemm.timing import input_sets_needed, time_launches

# dense fp16 tensor peak (datasheet, TFLOP/s) by device-name fragment; used for "% of peak"
PEAK_TFLOPS = {"H200": 989.0, "H100": 989.0, "B200": 2250.0, "B300": 2500.0}


def peak_for(device_name: str) -> float | None:
    for frag, tf in PEAK_TFLOPS.items():
        if frag in device_name:
            return tf
    return None


def _input_sets(p: Problem, cold_l2: bool):
    import torch

    gen = torch.Generator(device="cuda")
    gen.manual_seed(torch.seed())
    sets = []
    for _ in range(input_sets_needed(p.bytes_per_set, cold_l2)):
        a, b = make_inputs(p, "cuda", gen)
        sets.append((a, b, poisoned_output(p)))
    return sets


def time_library(name: str, p: Problem, sets, cold_l2: bool):
    with reference.blas_library(name):
        # torch.mm(..., out_dtype=fp32) allocates C from torch's caching allocator: no device time
        launches = [lambda a=a, b=b: reference.mm_fp32_out(a, b) for a, b, _ in sets]
        return time_launches(launches, cold_l2=cold_l2)


def time_phase(entry, p: Problem, sets, cold_l2: bool, config=None):
    from cute_gemm.api import launcher

    launches = [launcher(entry, a, b, c, config) for a, b, c in sets]
    return time_launches(launches, cold_l2=cold_l2)


@dataclasses.dataclass
class Measurement:
    key: str
    phase: str
    shape: str
    check: dict
    timing: dict | None  # None when the check failed: a wrong kernel is never timed
    cublas: dict
    cublaslt: dict

    @property
    def tflops(self) -> float | None:
        return self.timing["tflops"] if self.timing else None


def measure(entry, p: Problem, cold_l2: bool = False, config=None, libs: dict | None = None) -> Measurement:
    """Check the phase (fresh inputs, poisoned C), and only if it passes time it; time both libraries.

    ``libs`` may carry the library timings already measured for this shape in the same run.
    """
    res = check_phase(entry, p, config)
    sets = _input_sets(p, cold_l2)
    if libs is None:
        libs = library_timings(p, cold_l2, sets)
    timing = time_phase(entry, p, sets, cold_l2, config).as_dict(p.flops) if res.passed else None
    return Measurement(entry.key, entry.phase, str(p), dataclasses.asdict(res), timing, libs["cublas"], libs["cublaslt"])


def library_timings(p: Problem, cold_l2: bool = False, sets=None) -> dict:
    sets = sets if sets is not None else _input_sets(p, cold_l2)
    return {name: time_library(name, p, sets, cold_l2).as_dict(p.flops) for name in reference.LIBRARIES}
