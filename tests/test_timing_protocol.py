"""The timing protocol's host-side logic: launches per graph, replays per round, sustained replays, the
round-robin order, and ``interleave`` driving fake graphs (the CUDA parts are replaced by counters)."""

import pytest

from cute_gemm.measure import power, timing


@pytest.mark.parametrize("ms,expected", [
    (0.005, 400),  # a 5 us kernel at 512^3: 400 launches make a 2 ms replay
    (0.0004, timing.MAX_LAUNCHES_PER_GRAPH),  # capped
    (0.19, 11),  # 4096^3 at ~720 TFLOP/s
    (2.0, 1), (5.0, 1),  # one launch already exceeds the target
    (0.0, timing.MAX_LAUNCHES_PER_GRAPH),
])
def test_launches_per_graph(ms, expected):
    assert timing.launches_per_graph(ms) == expected


def test_launches_per_graph_reaches_the_target():
    for ms in (0.003, 0.017, 0.4, 1.3):
        n = timing.launches_per_graph(ms)
        assert n * ms >= timing.TARGET_REPLAY_MS and (n - 1) * ms < timing.TARGET_REPLAY_MS


def test_replays_and_sustain():
    assert timing.replays_per_round(2.0) == 10 and timing.replays_per_round(25.0) == 1
    assert timing.replays_per_round(0.0) == 1
    assert timing.sustain_replays(2.0, 0.0) == 0
    assert timing.sustain_replays(2.0, 1.0) == 500
    assert timing.sustain_replays(3.0, 0.5) == 167


def test_round_robin_same_order_every_round():
    order = timing.round_robin(["a", "b", "c"], 3)
    assert order == [(0, "a"), (0, "b"), (0, "c"), (1, "a"), (1, "b"), (1, "c"), (2, "a"), (2, "b"), (2, "c")]
    assert timing.round_robin([], 5) == []


def test_timing_as_dict():
    t = timing.Timing([0.3, 0.1, 0.2], launches_per_graph=7, replays_per_round=3, input_sets=1)
    d = t.as_dict(flops=2 * 10**9)
    assert (d["ms_min"], d["ms_median"], d["ms_max"]) == (0.1, 0.2, 0.3)
    assert d["tflops"] == pytest.approx(10.0) and d["tflops_best"] == pytest.approx(20.0)
    assert d["rounds"] == 3 and d["launches_per_graph"] == 7 and d["ms_rounds"] == [0.3, 0.1, 0.2]


class FakeGraph:
    def __init__(self, name, log):
        self.name, self.log = name, log

    def replay(self):
        self.log.append(self.name)


def test_interleave_order_sustain_and_per_launch_time(monkeypatch):
    import torch

    log = []
    ms_per_replay = {"x": 2.0, "y": 4.0}
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: log.append("sync"))

    def fake_time_replays(graph, replays):
        for _ in range(replays):
            graph.replay()
        log.append(f"timed {graph.name} x{replays}")
        return replays * ms_per_replay[graph.name]

    monkeypatch.setattr(timing, "time_replays", fake_time_replays)
    captured = {n: timing.Captured(FakeGraph(n, log), launches=4, replay_ms=ms_per_replay[n], input_sets=1)
                for n in ("x", "y")}
    rounds_seen = []
    out = timing.interleave(captured, rounds=2, sustained_s=0.01, on_round=rounds_seen.append)
    assert rounds_seen == [0, 1]
    timed = [e for e in log if e.startswith("timed")]
    assert timed == ["timed x x10", "timed y x5"] * 2  # round robin, >= 20 ms of replays each
    # sustained: 10 ms of untimed replays (5 of x, 3 of y), then a sync, then the timed window
    assert log[:17] == ["x"] * 5 + ["sync"] + ["x"] * 10 + ["timed x x10"]
    assert log[17:22] == ["y"] * 3 + ["sync"] + ["y"]
    tx, windows = out["x"]
    assert tx.ms_rounds == [0.5, 0.5]  # 2 ms per replay / 4 launches per graph
    assert out["y"][0].ms_rounds == [1.0, 1.0] and out["y"][0].replays_per_round == 5
    assert len(windows) == 2 and all(isinstance(w, power.Window) for w in windows)


def test_protocol_record():
    p = timing.protocol(rounds=5, sustained_s=1.5, cold_l2=True)
    assert p["rounds"] == 5 and p["sustained_s"] == 1.5 and p["cold_l2"] is True
    assert p["target_replay_ms"] == timing.TARGET_REPLAY_MS and "CUDA graph" in p["timer"]


def test_cold_l2_sets_hold_four_l2s():
    l2 = 50 * 2**20  # an H200's
    assert timing.input_sets_needed(10 * 2**20, False, l2) == 1
    assert timing.input_sets_needed(10 * 2**20, True, l2) == 20  # 20 x 10 MiB = 4 x 50 MiB
    assert timing.input_sets_needed(10 * 2**20 + 1, True, l2) == 20  # 20 sets still hold >= 4 L2s
    assert timing.input_sets_needed(512 * 2**20, True, l2) == 2  # never fewer than 2: a set is evicted by the other
    for size in (2**20, 3 * 2**20 + 7, 60 * 2**20):
        assert timing.input_sets_needed(size, True, l2) * size >= timing.COLD_L2_FACTOR * l2
    assert timing.protocol(3, 0.0, True)["cold_l2_sets_hold"] == ">= 4 x the L2"
