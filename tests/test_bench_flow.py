"""The bench's flow with the GPU parts replaced: how one shape's rows come out of checks, captures and
the interleaved timing (statuses, reasons, percentages, a valid document), and the CLI's GPU paths
(bench, bench --api, run) from arguments to table, JSON and plots."""

import dataclasses
import json

import pytest
import torch

from cute_gemm import cli
from cute_gemm.cli import steps
from cute_gemm.measure import bandwidth, peers, power, results, shape, suite, timing
from cute_gemm.measure.check import CheckResult
from cute_gemm.runtime.problem import Problem
from phases.operands import Operands
from synthetic_doc import ENV, make_doc


@dataclasses.dataclass
class FakeKernel:
    why: list
    operands: Operands = Operands()
    ragged: bool = True

    def can_implement(self, m, n, k):
        return self.why

    def operand_problems(self, ops):
        return []


@dataclasses.dataclass
class FakeEntry:
    phase: str
    why: list = dataclasses.field(default_factory=list)
    adds: str = "something"

    @property
    def key(self):
        return f"sm90:{self.phase}"

    def make(self, config=None, operands=None):
        return FakeKernel(self.why)


class FakeGraph:
    def __init__(self, ms):
        self.ms = ms

    def replay(self):
        pass


MS = {"sm90:1": 0.25, "sm90:3": 0.2, "peer:cublas": 0.19, "peer:cublaslt": 0.2}
CHECKED = []  # ("phase" | "peer", name, shape) in the order the fake checks ran


@pytest.fixture
def fake_gpu(monkeypatch):
    """check_phase / check_peer / inputs / capture / replays replaced; phase '2' fails its check, phase
    '4' errors, the 'quack' peer cannot be captured, 'triton' is absent, 'quack-tuned' computes wrong."""

    CHECKED.clear()

    def check_phase(entry, p, config=None, operands=None):
        CHECKED.append(("phase", entry.phase, str(p)))
        ok = entry.phase not in ("2", "4")
        return CheckResult(entry.key, str(p), ok, 0, 0 if ok else 5, 0.0, 1e-7, 1e-7, True,
                           error="RuntimeError: launch failed\nmore" if entry.phase == "4" else None)

    def check_peer(peer, p, operands=None):
        CHECKED.append(("peer", peer.name, str(p)))
        ok = peer.name != "quack-tuned"
        kernels = ["Memset (Device)", "nvjet_sm90_hss_256x128_64x4_1x2_h_bz_coopA_NNT"] if peer.name == "cublas" else None
        return {"passed": ok, "error": None, "mismatches": 0 if ok else 7, "rel_fro_err": 1e-7 if ok else 0.3,
                "kernels": kernels}

    def capture(make_launches):
        keys = make_launches()
        if keys == ["peer:quack"]:
            raise RuntimeError("operation not permitted when stream is capturing")
        return timing.Captured(FakeGraph(MS[keys[0]]), launches=10, replay_ms=MS[keys[0]] * 10, input_sets=1)

    def factory_for(key):
        return lambda a, b, c: key

    monkeypatch.setattr("cute_gemm.measure.check.check_phase", check_phase)
    monkeypatch.setattr(peers, "check_peer", check_peer)
    monkeypatch.setattr("cute_gemm.runtime.plan.launcher", lambda e, a, b, c, config=None: e.key)
    monkeypatch.setattr(shape, "timing_inputs", lambda p, data, n, operands=None: [("A", "B", "C")])
    monkeypatch.setattr("cute_gemm.measure.bandwidth.copy_bandwidth",
                        lambda: bandwidth.summarize([0.5] * 10, 2**30))  # 4.29 TB/s
    monkeypatch.setattr(timing, "capture", capture)
    monkeypatch.setattr(timing, "time_replays", lambda g, replays: g.ms * 10 * replays)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    fake_peers = {n: dataclasses.replace(pr, factory=factory_for(f"peer:{n}"),
                                         missing=(lambda: "triton is not installed") if n == "triton" else (lambda: None))
                  for n, pr in peers.PEERS.items()}
    monkeypatch.setattr(peers, "PEERS", fake_peers)
    return fake_peers


def test_one_shape_rows(fake_gpu):
    entries = [FakeEntry("0", why=["M=100 is not a multiple of 128"]), FakeEntry("1"), FakeEntry("2"),
               FakeEntry("3"), FakeEntry("4")]
    steps = []
    p = Problem(1024, 1024, 1024)
    step = lambda label, advance=1: steps.append((label, advance))  # noqa: E731
    rows = shape.measure_shape(p, shape.check_phases(entries, p, step=step), list(fake_gpu.values()), rounds=3,
                                 peak=989.0, step=step)
    by = {r["key"]: r for r in rows}
    assert [r["key"] for r in rows] == ["sm90:0", "sm90:1", "sm90:2", "sm90:3", "sm90:4", "peer:cublas",
                                        "peer:cublaslt", "peer:triton", "peer:quack", "peer:quack-tuned"]
    assert by["sm90:0"]["status"] == "skipped" and "multiple of 128" in by["sm90:0"]["reason"]
    assert by["sm90:2"]["status"] == "failed" and by["sm90:2"]["timing"] is None
    assert by["sm90:4"]["status"] == "error" and by["sm90:4"]["reason"] == "RuntimeError: launch failed"
    assert by["peer:triton"]["status"] == "absent" and by["peer:triton"]["reason"] == "triton is not installed"
    assert by["peer:quack"]["status"] == "error" and "could not capture a CUDA graph" in by["peer:quack"]["reason"]
    assert by["peer:quack-tuned"]["status"] == "failed" and "7 mismatches" in by["peer:quack-tuned"]["reason"]
    for key, ms in MS.items():
        t = by[key]["timing"]
        assert by[key]["status"] == "ok" and t["ms_median"] == pytest.approx(ms) and t["rounds"] == 3
        assert by[key]["power"]["power_w"] is None  # no telemetry given: recorded as null
    # the library kernel a peer ran is on its row (not inside its check), and the table shows it
    assert by["peer:cublas"]["library_kernels"] == ["Memset (Device)", "nvjet_sm90_hss_256x128_64x4_1x2_h_bz_coopA_NNT"]
    assert "kernels" not in by["peer:cublas"]["check"] and by["peer:cublaslt"]["library_kernels"] is None
    from cute_gemm.report.console import result_row
    assert result_row(by["peer:cublas"])[-1].startswith("nvjet_sm90_hss_256x128")
    assert by["sm90:3"]["pct_vendor"] == pytest.approx(100 * 0.19 / 0.2)
    assert by["peer:cublas"]["pct_vendor"] == pytest.approx(100.0)
    assert by["sm90:1"]["pct_peak"] == pytest.approx(100 * p.flops / 0.25e-3 / 1e12 / 989.0)
    assert len(steps) == len(entries) + len(fake_gpu) + 3 and steps[-1][0].endswith("timing round 3/3")
    doc = results.document(rows, data="randn", protocol=timing.protocol(3, 0.0, False),
                         telemetry={"available": False, "reason": "test"}, env=ENV)
    assert results.validate_doc(doc) == []


def test_config_variants_are_rows_of_their_own(fake_gpu, monkeypatch):
    """`bench --config 8:bn=128`: one more row, keyed and named by phase + overrides, checked with that config,
    timed beside the default, its config recorded; ncu_check (which profiles default configs) skips it."""
    from cute_gemm.runtime import registry
    from cute_gemm.cli.steps import parse_variant

    monkeypatch.setitem(MS, "sm90:8", 0.21)  # the fake launcher launches entry.key
    entry, cfg, label = parse_variant("8:bn=128", "sm90")
    assert entry is registry.get("sm90", "8") and cfg.bn == 128 and label == "bn=128"
    p = Problem(1024, 1024, 1024)
    rows = shape.measure_shape(p, shape.check_phases([FakeEntry("3")], p, variants=[(entry, cfg, label)]), [],
                                 rounds=2)
    by = {r["key"]: r for r in rows}
    var = by["sm90:8 bn=128"]
    assert var["name"] == "8 bn=128" and var["label"] == "phase 8 bn=128" and var["phase"] == "8"
    assert var["config"] == {"bn": 128} and by["sm90:3"]["config"] is None
    assert var["status"] == "ok" and var["timing"]["ms_median"] == pytest.approx(0.21)
    assert ("phase", "8", str(p)) in CHECKED


def test_nothing_to_time_still_completes_the_progress(fake_gpu):
    steps = []
    p = Problem(256, 256, 256)
    rows = shape.measure_shape(p, shape.check_phases([FakeEntry("2")], p), [], rounds=4,
                                 step=lambda label, advance=1: steps.append(advance))
    assert rows[0]["status"] == "failed" and sum(steps) == 4


class CappedReader:
    """NVML as under load: 1450 MHz at the power cap, 14 J per reading of the energy counter."""

    energy = 0

    def sample(self):
        return power.Sample(1450, 700_000, 0x4)

    def energy_mj(self):
        self.energy += 14_000
        return self.energy

    def describe(self):
        return {"nvml_device": "fake H200", "power_limit_w": 700.0}


def test_run_bench_document(fake_gpu, monkeypatch):
    monkeypatch.setattr("cute_gemm.measure.environment.record", lambda: ENV)
    monkeypatch.setattr(power.Telemetry, "open", classmethod(lambda cls: cls(CappedReader(), interval_s=1)))
    doc = suite.run_bench([FakeEntry("1"), FakeEntry("3")], [Problem(512, 512, 512), Problem(1024, 512, 256)],
                          [fake_gpu["cublas"], fake_gpu["triton"]], data="ints", rounds=2, sustained_s=0.0,
                          progress=False)
    assert results.validate_doc(doc) == []
    assert doc["data"] == "ints" and doc["protocol"]["rounds"] == 2 and doc["peak_tflops"] == 989.0
    assert len(doc["results"]) == 8 and doc["telemetry"]["available"] and doc["telemetry"]["power_limit_w"] == 700
    timed = [r for r in doc["results"] if r["timing"]]
    assert len(timed) == 6
    for r in timed:
        assert r["power"]["sm_clock_mhz"]["median"] == 1450 and r["power"]["throttle_reasons"] == ["sw_power_cap"]
        assert r["power"]["energy_j"] == pytest.approx(2 * 14.0)
    # every phase at every shape is checked (compiled) before the first peer runs
    kinds = [kind for kind, _, _ in CHECKED]
    assert kinds == ["phase"] * 4 + ["peer"] * 2
    # the run's copy bandwidth, and each timed row's bytes, TB/s and % of it
    assert doc["copy_bandwidth"]["tb_s"] == pytest.approx(2 * 2**30 / 0.5e-3 / 1e12)
    assert doc["operands"] == {"layout": "nn", "ab": "fp16", "c": "fp32", "label": "nn fp16->fp32"}
    r = next(r for r in timed if r["key"] == "sm90:3" and r["shape"] == "512x512x512")
    assert r["bytes"] == 2 * 2 * 512 * 512 + 4 * 512 * 512
    assert r["tb_s"] == pytest.approx(r["bytes"] / (MS["sm90:3"] * 1e-3) / 1e12)
    assert r["pct_copy_bw"] == pytest.approx(100 * r["tb_s"] / doc["copy_bandwidth"]["tb_s"])
    assert all(r["tb_s"] is None and r["pct_copy_bw"] is None for r in doc["results"] if not r["timing"])


def test_a_run_in_another_layout_and_dtypes(fake_gpu, monkeypatch):
    """--layout nt --dtype bf16 --out-dtype bf16: the phases are made and checked with those operands (phase
    0, whose copies are the worklog's, is skipped saying why), cuBLAS runs them, the Triton and quack peers
    (written for the worklog's problem) are skipped saying why, and the document records the operands; the
    bytes count a 16-bit C."""
    monkeypatch.setattr("cute_gemm.measure.environment.record", lambda: ENV)
    made, checked = [], []

    class Entry(FakeEntry):
        def make(self, config=None, operands=None):
            made.append(operands)
            return FakeKernel([])

    import cute_gemm.measure.check as check_mod

    fake = check_mod.check_phase  # the fixture's
    monkeypatch.setattr(check_mod, "check_phase", lambda e, p, cfg=None, operands=None: checked.append(operands)
                        or fake(e, p, cfg, operands))
    ops = Operands.of("nt", "bf16", "bf16")
    from cute_gemm.runtime import registry

    doc = suite.run_bench([registry.get("sm90", "0"), Entry("3")], [Problem(128, 512, 256)], list(fake_gpu.values()),
                          rounds=2, progress=False, operands=ops)
    assert results.validate_doc(doc) == [] and results.operands_of(doc) == ops
    assert made == [ops] and checked == [ops]
    by = {r["key"]: r for r in doc["results"]}
    assert by["sm90:0"]["status"] == "skipped" and "sm90:0 takes the worklog's operands only" in by["sm90:0"]["reason"]
    assert by["peer:cublas"]["status"] == "ok" and "torch.mm(a, b, out=c)" in by["peer:cublas"]["detail"]
    for name in ("triton", "quack", "quack-tuned"):
        assert by[f"peer:{name}"]["status"] == ("absent" if name == "triton" else "skipped")
    assert "takes the worklog's operands only (nn fp16->fp32), not nt bf16->bf16" in by["peer:quack"]["reason"]
    assert by["sm90:3"]["bytes"] == 2 * (128 * 256 + 256 * 512) + 2 * 128 * 512
    assert doc["protocol"]["check"] == results.check_text(ops) and "rtol=0.00881" in doc["protocol"]["check"]


# ------------------------------------------------------------------------------------ the CLI on a "GPU"
@pytest.fixture
def on_h200(monkeypatch):
    monkeypatch.setattr(steps, "gpu_target", lambda: "sm_90a")
    calls = []

    def run_bench(entries, shapes, peer_list, **kw):
        calls.append((entries, shapes, peer_list, kw))
        return make_doc(sweep=False, data=kw["data"])

    monkeypatch.setattr(suite, "run_bench", run_bench)
    return calls


def test_bench_on_gpu_writes_json_and_plots(on_h200, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out = tmp_path / "r" / "bench.json"
    rc = cli.main(["bench", "--phases", "3-5", "--shapes", "2048", "--sweep", "--data", "ints", "--sustained", "1",
                   "--peers", "cublas,triton", "--rounds", "3", "--quiet", "--out", str(out)])
    stdout, err = capsys.readouterr()
    assert rc == 0, err
    (entries, shapes, peer_list, kw) = on_h200[0]
    assert [e.phase for e in entries] == ["3", "4", "5"]
    assert [str(s) for s in shapes] == ["2048x2048x2048"] + [str(s) for s in suite.SWEEP if s.m != 2048]
    assert [pr.name for pr in peer_list] == ["cublas", "triton"]
    assert kw == {"data": "ints", "rounds": 3, "sustained_s": 1.0, "cold_l2": False, "progress": False,
                  "best_arch": None, "variants": [], "operands": Operands()}
    assert results.load(str(out))["data"] == "ints"
    assert "4096x4096x4096" in stdout and "phase 6" in stdout and "sw_power_cap" in stdout
    for name in ("bench_ladder.png", "bench_worklog.png"):
        assert (tmp_path / "r" / name).exists()
    assert "at least ~2 min of GPU time" in err  # 5 kernels x 7 shapes x 3 rounds x 1.02 s


def test_bench_layout_dtypes_and_a_named_set(on_h200, tmp_path, capsys):
    out = tmp_path / "decode.json"
    rc = cli.main(["bench", "--set", "decode", "--layout", "nt", "--dtype", "bf16", "--out-dtype", "bf16", "--quiet",
                   "--no-plot", "--out", str(out)])
    assert rc == 0, capsys.readouterr().err
    (entries, shapes, peer_list, kw) = on_h200[0]
    assert kw["operands"] == Operands.of("nt", "bf16", "bf16")
    assert shapes == list(suite.SETS["decode"]) and len(shapes) == 30
    assert {p.m for p in shapes} == {1, 16, 64, 128, 256, 512}
    assert {(p.n, p.k) for p in shapes} == {(4096, 4096), (14336, 4096), (4096, 14336), (8192, 8192), (28672, 8192)}
    rc = cli.main(["bench", "--set", "small", "--shapes", "4096", "--quiet", "--no-plot", "--out", str(out)])
    assert rc == 0 and [str(p) for p in on_h200[1][1]] == ["4096x4096x4096", "256x256x256", "512x512x512",
                                                           "1024x1024x1024", "2048x2048x2048"]
    assert on_h200[1][3]["operands"] == Operands()


def test_run_with_a_layout_reports_it(on_h200, capsys):
    rc = cli.main(["run", "--phase", "7", "--shape", "4096", "--layout", "tt", "--out-dtype", "fp16"])
    assert rc == 0
    assert on_h200[0][3]["operands"] == Operands.of("tt", "fp16", "fp16")


def test_bench_on_gpu_refuses_the_other_arch(on_h200, capsys):
    rc = cli.main(["bench", "--arch", "sm100"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "this GPU is sm_90a" in err and not on_h200


def test_bench_api_on_gpu(on_h200, tmp_path, capsys, monkeypatch):
    api = {"small_shape": "256x256x256", "loop_shape": "1024x4096x4096", "calls": 2000, "loop_calls": 200,
           "warmup_calls": 50, "torch_mm": {"us_per_call": 10.7, "loop_tflops": 690.0},
           "phases": [{"key": "sm90:5", "phase": "5", "first_call_s": 0.75, "reason": None,
                       "gemm": {"us_per_call": 6.1, "loop_tflops": 695.0},
                       "launcher": {"us_per_call": 4.3, "loop_tflops": 697.0}},
                      {"key": "sm90:0", "phase": "0", "first_call_s": None, "gemm": None, "launcher": None,
                       "reason": "256x256x256: too small"}]}
    seen = []
    monkeypatch.setattr("cute_gemm.measure.host_overhead.run_api", lambda entries: seen.append(entries) or api)
    monkeypatch.setattr("cute_gemm.measure.environment.record", lambda: ENV)
    out = tmp_path / "api.json"
    rc = cli.main(["bench", "--api", "--phases", "0,5", "--out", str(out)])
    stdout, err = capsys.readouterr()
    assert rc == 0, err
    assert [e.phase for e in seen[0]] == ["0", "5"] and not on_h200
    doc = json.loads(out.read_text())
    assert results.validate_doc(doc) == [] and doc["api"] == api and doc["results"] == []
    assert "torch.mm" in stdout and "4.3" in stdout and "0.75" in stdout and "too small" in stdout


def test_run_on_gpu(on_h200, tmp_path, capsys):
    out = tmp_path / "run.json"
    rc = cli.main(["run", "--phase", "5", "--shape", "4096", "--json", str(out)])
    stdout, err = capsys.readouterr()
    assert rc == 0, err
    entries, shapes, peer_list, kw = on_h200[0]
    assert [e.key for e in entries] == ["sm90:5"] and [p.name for p in peer_list] == list(peers.VENDOR)
    assert "check PASS" in stdout and results.load(str(out))


# ------------------------------------------------------------------------------------- on a real GPU
@pytest.mark.gpu
def test_bench_on_the_gpu_end_to_end():
    """Two phases and the vendor peers at a small shape, through the real checks, graphs and telemetry."""
    from conftest import gpu_family
    from cute_gemm.runtime import registry

    fam = gpu_family()
    entries = [e for e in registry.all_entries(fam) if e.phase in ("2a", "5")]
    doc = suite.run_bench(entries, [Problem(1024, 1024, 1024)], [peers.PEERS[n] for n in peers.VENDOR],
                          data="ints", rounds=3, sustained_s=0.05, progress=False)
    assert results.validate_doc(doc) == [], results.validate_doc(doc)
    for r in doc["results"]:
        assert r["status"] == "ok", r["reason"]
        assert r["timing"]["launches_per_graph"] > 1  # a ~5 us kernel: many launches per graph replay
        assert 0.001 < r["timing"]["ms_median"] < 1.0
    if doc["telemetry"]["available"]:
        assert all(r["power"]["sm_clock_mhz"]["median"] > 500 for r in doc["results"])


@pytest.mark.gpu
def test_api_overhead_on_the_gpu(monkeypatch):
    from conftest import gpu_family
    from cute_gemm.measure import host_overhead as api_bench
    from cute_gemm.runtime import registry

    monkeypatch.setattr(api_bench, "CALLS", 50)
    monkeypatch.setattr(api_bench, "LOOP_CALLS", 5)
    api = api_bench.run_api([registry.get(gpu_family(), "5")])
    (row,) = api["phases"]
    assert row["reason"] is None and row["first_call_s"] > 0
    assert row["launcher"]["us_per_call"] > 0 and row["gemm"]["loop_tflops"] > 10
    assert api["torch_mm"]["us_per_call"] > 0
