"""Timing with CUDA events on the launch stream.

Default protocol (the worklog's): the same inputs every iteration (L2-resident), 5 warm-ups, then 10
timed launches, each between its own pair of events; we keep min/median/max, not only the median.
``cold_l2``: rotate through enough input sets that their total exceeds twice the L2, so every launch
reads A and B from HBM.
"""

from __future__ import annotations

import dataclasses
import statistics

WARMUP, ITERS = 5, 10


@dataclasses.dataclass
class Timing:
    ms_min: float
    ms_median: float
    ms_max: float
    iters: int
    cold_l2: bool

    def tflops(self, flops: int, which: str = "median") -> float:
        ms = {"median": self.ms_median, "min": self.ms_min, "max": self.ms_max}[which]
        return flops / (ms * 1e-3) / 1e12

    def as_dict(self, flops: int) -> dict:
        d = dataclasses.asdict(self)
        d["tflops"] = self.tflops(flops)
        d["tflops_best"] = self.tflops(flops, "min")
        d["tflops_worst"] = self.tflops(flops, "max")
        return d


def time_launches(launches, warmup: int = WARMUP, iters: int = ITERS, cold_l2: bool = False) -> Timing:
    """Time a list of zero-argument launch functions (one per input set), rotating through them."""
    import torch

    stream = torch.cuda.current_stream()
    n = len(launches)
    for i in range(warmup):
        launches[i % n]()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    for i in range(iters):
        starts[i].record(stream)
        launches[(warmup + i) % n]()
        ends[i].record(stream)
    torch.cuda.synchronize()
    ms = [s.elapsed_time(e) for s, e in zip(starts, ends)]
    return Timing(min(ms), statistics.median(ms), max(ms), iters, cold_l2)


def input_sets_needed(bytes_per_set: int, cold_l2: bool) -> int:
    """1 for the L2-resident protocol; enough sets to exceed twice the L2 for cold-L2 timing."""
    if not cold_l2:
        return 1
    import torch

    l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 50 * 2**20)
    return max(2, -(-2 * l2 // bytes_per_set) + 1)
