"""GPU time of kernels, not of launches: CUDA-graph replays timed with CUDA events, kernels interleaved.

At 512^3-1024^3 a kernel runs a few microseconds and the host needs ~5-10 us to launch one, so timing
single launches between their own pair of events measures the launch gap. The protocol instead:

1. Each kernel's launches are captured back to back into one CUDA graph, enough of them
   (``launches_per_graph``) that one replay keeps the GPU busy for >= ``TARGET_REPLAY_MS``, estimated
   from a timed replay of a small probe graph. Time per launch = replay time / launches in the graph.
2. All kernels of one shape are timed round robin (``round_robin``): ``ROUNDS`` rounds, each replays
   every kernel's graph for >= ``TIMED_MS_PER_ROUND`` in the same order. The kernels share the power and
   thermal state and the same input tensors; a kernel's result is the median over rounds (min, max kept).
3. ``sustained_s`` > 0 keeps each kernel replaying for that long right before its timed replays in every
   round, so it is timed in the steady state of its own power draw (the H200 sits at its power cap
   under sustained fp16 GEMM load).

``input_sets`` > 1 (cold L2) captures launches that rotate through that many input sets -- together at
least ``COLD_L2_FACTOR`` (4) times the L2 -- so each launch reads A and B from HBM. What the GPU did
during each timed window is recorded by ``cute_gemm.measure.power``.
This module holds the protocol's constants; nothing else repeats them.
"""

from __future__ import annotations

import dataclasses
import math
import statistics

ROUNDS = 7
TARGET_REPLAY_MS = 2.0  # GPU time of one graph replay
TIMED_MS_PER_ROUND = 20.0  # GPU time of one kernel's timed replays in one round (a few NVML samples)
PROBE_LAUNCHES = 8  # launches in the graph whose replay estimates the time of one launch
MAX_LAUNCHES_PER_GRAPH = 2000  # bounds capture time and graph size for microsecond kernels
WARMUP_LAUNCHES = 3  # eager launches on the capture's side stream first, as torch asks before a capture


def launches_per_graph(ms_per_launch: float, target_ms: float = TARGET_REPLAY_MS,
                       cap: int = MAX_LAUNCHES_PER_GRAPH) -> int:
    """Launches to capture so that one replay runs >= ``target_ms`` (at least 1, at most ``cap``)."""
    if ms_per_launch <= 0:
        return cap
    return max(1, min(cap, math.ceil(target_ms / ms_per_launch)))


def replays_per_round(replay_ms: float, window_ms: float = TIMED_MS_PER_ROUND) -> int:
    """Timed replays of one graph per round so that they last >= ``window_ms`` (at least 1)."""
    return max(1, math.ceil(window_ms / replay_ms)) if replay_ms > 0 else 1


def sustain_replays(replay_ms: float, seconds: float) -> int:
    """Untimed replays that keep the GPU busy for ``seconds`` before a timed window (0: none)."""
    return math.ceil(seconds * 1000 / replay_ms) if seconds > 0 and replay_ms > 0 else 0


def round_robin(names: list[str], rounds: int) -> list[tuple[int, str]]:
    """The timing order: every kernel once per round, in the same order every round."""
    return [(r, name) for r in range(rounds) for name in names]


@dataclasses.dataclass
class Timing:
    """One kernel's time per launch in each round, and how it was measured."""

    ms_rounds: list[float]
    launches_per_graph: int
    replays_per_round: int
    input_sets: int

    def as_dict(self, flops: int) -> dict:
        med, lo, hi = statistics.median(self.ms_rounds), min(self.ms_rounds), max(self.ms_rounds)

        def tf(ms):
            return flops / (ms * 1e-3) / 1e12

        return {
            "ms_median": med, "ms_min": lo, "ms_max": hi,
            "tflops": tf(med), "tflops_best": tf(lo), "tflops_worst": tf(hi),
            "rounds": len(self.ms_rounds), "ms_rounds": list(self.ms_rounds),
            "launches_per_graph": self.launches_per_graph, "replays_per_round": self.replays_per_round,
            "input_sets": self.input_sets,
        }


@dataclasses.dataclass
class Captured:
    """A kernel's CUDA graph, ready to replay."""

    graph: object
    launches: int
    replay_ms: float  # estimated GPU time of one replay
    input_sets: int

    @property
    def replays(self) -> int:
        return replays_per_round(self.replay_ms)


def _capture(make_launches, n: int):
    """A CUDA graph of ``n`` back-to-back launches. ``make_launches()`` returns one zero-argument launch
    per input set and is called inside the capture, so every launch goes to the capture stream."""
    import torch

    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        launches = make_launches()
        for i in range(n):
            launches[i % len(launches)]()
    return graph, len(launches)


def time_replays(graph, replays: int) -> float:
    """GPU milliseconds of ``replays`` back-to-back replays, between one pair of CUDA events."""
    import torch

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(replays):
        graph.replay()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def capture(make_launches) -> Captured:
    """Warm the kernel up, estimate one launch from a probe graph, and capture the graph to time."""
    import torch

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        launches = make_launches()
        for i in range(WARMUP_LAUNCHES):
            launches[i % len(launches)]()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    probe, sets = _capture(make_launches, PROBE_LAUNCHES)
    probe.replay()  # the first replay uploads the graph
    per_launch = time_replays(probe, 1) / PROBE_LAUNCHES
    n = launches_per_graph(per_launch)
    if n == PROBE_LAUNCHES:
        return Captured(probe, n, per_launch * n, sets)
    del probe
    graph, sets = _capture(make_launches, n)
    graph.replay()
    return Captured(graph, n, time_replays(graph, 1), sets)


def interleave(captured: dict[str, Captured], rounds: int = ROUNDS, sustained_s: float = 0.0,
               telemetry=None, on_round=None) -> dict[str, tuple[Timing, list]]:
    """Time every captured kernel round robin; name -> (Timing, the telemetry windows of its rounds).

    ``on_round(round_index)`` is called after each complete round (progress reporting).
    """
    import torch

    from cute_gemm.measure.power import Telemetry

    telemetry = telemetry or Telemetry(reason="not recorded")
    ms = {name: [] for name in captured}
    windows = {name: [] for name in captured}
    last = list(captured)[-1] if captured else None
    for r, name in round_robin(list(captured), rounds):
        c = captured[name]
        for _ in range(sustain_replays(c.replay_ms, sustained_s)):
            c.graph.replay()
        torch.cuda.synchronize()
        with telemetry.window() as w:
            elapsed = time_replays(c.graph, c.replays)
        ms[name].append(elapsed / (c.replays * c.launches))
        windows[name].append(w)
        if on_round and name == last:
            on_round(r)
    return {name: (Timing(ms[name], c.launches, c.replays, c.input_sets), windows[name])
            for name, c in captured.items()}


COLD_L2_FACTOR = 4  # cold L2: the input sets a graph rotates through hold at least this many L2s


def input_sets_needed(bytes_per_set: int, cold_l2: bool, l2_bytes: int | None = None) -> int:
    """1 for the L2-resident protocol; for cold-L2 timing enough sets (at least 2) that together they hold
    ``COLD_L2_FACTOR`` times the L2 (50 MB on an H200): a set is long evicted when its turn comes again.
    ``l2_bytes``: the L2's size (default: GPU 0's)."""
    if not cold_l2:
        return 1
    if l2_bytes is None:
        import torch

        l2_bytes = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 50 * 2**20)
    return max(2, -(-COLD_L2_FACTOR * l2_bytes // bytes_per_set))


def protocol(rounds: int, sustained_s: float, cold_l2: bool) -> dict:
    """The protocol as a result document records it."""
    return {
        "timer": "CUDA graph of back-to-back launches, replays timed with CUDA events",
        "order": "round robin: every kernel of a shape once per round, same order, same inputs",
        "rounds": rounds,
        "sustained_s": sustained_s,
        "target_replay_ms": TARGET_REPLAY_MS,
        "timed_ms_per_round": TIMED_MS_PER_ROUND,
        "max_launches_per_graph": MAX_LAUNCHES_PER_GRAPH,
        "cold_l2": cold_l2,
        "cold_l2_sets_hold": f">= {COLD_L2_FACTOR} x the L2" if cold_l2 else None,
        "statistic": "median over rounds (min, max kept)",
    }
