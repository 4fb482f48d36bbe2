"""The bench-v2 document: what a result must carry (schema check, valid and broken variants), the
percentages against the vendor library, the end-of-run table, the plots drawn from a document, and that
old bench-v1 files are refused with a clear sentence."""

import copy
import glob
import io
import json
import os
import re

import pytest

from cute_gemm.errors import one_line
from cute_gemm.measure import results, shape
from cute_gemm.measure.progress import Progress
from cute_gemm.report import console
from synthetic_doc import ENV, PEER_TFLOPS, PHASE_TFLOPS, make_doc

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMMITTED = sorted(glob.glob(os.path.join(ROOT, "bench", "results", "*_bench.json")))


def _row(doc, key, shape="4096x4096x4096"):
    return next(r for r in doc["results"] if r["key"] == key and r["shape"] == shape)


def test_synthetic_document_is_valid():
    doc = make_doc()
    assert doc["schema"] == "cute-gemm/bench-v2" == results.SCHEMA
    assert results.validate_doc(doc) == []
    assert doc["ncu_check"] is None and doc["data"] == "randn" and doc["protocol"]["rounds"] == 7
    json.dumps(doc)  # serializable as written


def test_result_carries_timing_and_telemetry():
    r = _row(make_doc(), "sm90:3")
    t, pw = r["timing"], r["power"]
    assert r["kind"] == "phase" and r["phase"] == "3"
    assert t["ms_min"] <= t["ms_median"] <= t["ms_max"] and t["rounds"] == 5
    assert t["tflops"] == pytest.approx(PHASE_TFLOPS["3"])
    assert pw["sm_clock_mhz"] == {"median": 1507.5, "min": 1500, "max": 1515}
    assert pw["power_source"] == "energy" and pw["power_w"] == pytest.approx(700.0)
    assert pw["tflops_per_kw"] == pytest.approx(PHASE_TFLOPS["3"] / 0.7)
    assert pw["throttle_reasons"] == ["sw_power_cap"]


def test_percentages_against_the_better_vendor_library():
    doc = make_doc()
    r = _row(doc, "sm90:6")
    best = max(PEER_TFLOPS.values())
    assert r["pct_vendor"] == pytest.approx(100 * PHASE_TFLOPS["6"] / best)
    assert r["pct_cublaslt"] == pytest.approx(100 * PHASE_TFLOPS["6"] / PEER_TFLOPS["cublaslt"])
    assert r["pct_peak"] == pytest.approx(100 * PHASE_TFLOPS["6"] / 989.0)
    assert _row(doc, "peer:triton")["pct_vendor"] is None


def test_paired_ratio_pairs_rounds_not_medians():
    # the GPU slows down over the run (power, heat): every kernel's round i is slower than its round i-1.
    # Round by round this kernel is 2% slower than the faster vendor library, whichever that is.
    drift = [1.0, 1.05, 1.10, 1.15, 1.20]
    cublas = [d * 1.00 for d in drift]
    cublaslt = [d * (0.99 if i % 2 else 1.01) for i, d in enumerate(drift)]
    ours = [min(a, b) * 1.02 for a, b in zip(cublas, cublaslt)]
    x = shape.paired_ratio(ours, [cublas, cublaslt])
    assert x["median"] == pytest.approx(1 / 1.02) and x["min"] == pytest.approx(x["max"])
    assert len(x["rounds"]) == 5
    # a kernel with no vendor timing, or rounds the vendor rows do not have, gets no ratio
    assert shape.paired_ratio(ours, []) is None
    assert shape.paired_ratio(ours, [cublas[:2]])["rounds"] == pytest.approx([cublas[i] / ours[i] for i in range(2)])


def test_paired_ratio_on_bench_rows():
    doc = make_doc(sweep=False)
    x = _row(doc, "sm90:6")["x_vendor_paired"]
    assert x["median"] == pytest.approx(PHASE_TFLOPS["6"] / max(PEER_TFLOPS.values()))
    assert _row(doc, "peer:cublas")["x_vendor_paired"]["median"] == pytest.approx(1.0)
    assert _row(doc, "peer:triton")["x_vendor_paired"] is None


def test_percentages_without_vendor_rows():
    rows = [{"key": "sm90:0", "timing": {"tflops": 100.0}}, {"key": "peer:cublas", "timing": None}]
    shape.add_percentages(rows, None)
    assert rows[0]["pct_vendor"] is None and rows[0]["pct_peak"] is None and rows[1]["pct_cublas"] is None
    assert rows[0]["x_vendor_paired"] is None


def test_percentages_of_two_rows_sharing_a_key():
    """Two rows of one key (one config asked for twice): each row's percentages are its own; the untimed one gets
    none (it read the other's timing before, and crashed on its own missing one)."""
    rows = [{"key": "sm90:10", "timing": {"tflops": 100.0, "ms_rounds": [1.0]}}, {"key": "sm90:10", "timing": None},
            {"key": "peer:cublas", "timing": {"tflops": 50.0, "ms_rounds": [2.0]}}]
    shape.add_percentages(rows, None)
    assert rows[0]["pct_vendor"] == pytest.approx(200.0) and rows[0]["x_vendor_paired"]["median"] == pytest.approx(2.0)
    assert rows[1]["pct_vendor"] is None and rows[1]["x_vendor_paired"] is None


def _first(doc, pred):
    return next(r for r in doc["results"] if pred(r))


BROKEN = [
    (lambda d: d.pop("gpu"), "missing 'gpu'"),
    (lambda d: d.pop("ncu_check"), "missing 'ncu_check'"),
    (lambda d: d.update(schema="x"), "schema"),
    (lambda d: d.update(data="zeros"), "data is 'zeros'"),
    (lambda d: d["protocol"].pop("rounds"), "protocol.rounds"),
    (lambda d: d.update(results=[]), "no results and no api"),
    (lambda d: _first(d, lambda r: r["status"] == "error").update(timing={"tflops": 1}), "carries a timing"),
    (lambda d: _first(d, lambda r: r["status"] == "absent").update(reason=None), "no reason"),
    (lambda d: _first(d, lambda r: r["status"] == "ok")["check"].update(passed=False), "did not pass"),
    (lambda d: _first(d, lambda r: r["status"] == "ok")["timing"].update(ms_min=1e9), "min <= median <= max"),
    (lambda d: _first(d, lambda r: r["status"] == "ok")["timing"].pop("launches_per_graph"), "launches_per_graph"),
    (lambda d: _first(d, lambda r: r["status"] == "ok")["power"].pop("throttle_reasons"), "power.throttle_reasons"),
    (lambda d: _first(d, lambda r: r["status"] == "ok").update(power=None), "power missing"),
    (lambda d: _first(d, lambda r: r["status"] == "ok").update(kind="library"), "kind is 'library'"),
    (lambda d: _first(d, lambda r: r["kind"] == "phase").pop("phase"), ".phase missing"),
    (lambda d: _first(d, lambda r: True).update(status="great"), "status is 'great'"),
    (lambda d: d["operands"].update(layout="nx"), "operands is not a layout and dtypes record"),
    (lambda d: d["operands"].update(ab="fp32"), "operands is not a layout and dtypes record"),
    (lambda d: d.update(copy_bandwidth={"tb_s": -1}), "copy_bandwidth.tb_s"),
]


@pytest.mark.parametrize("mutate,problem", BROKEN, ids=[p for _, p in BROKEN])
def test_broken_documents_are_caught(mutate, problem):
    d = copy.deepcopy(make_doc(sweep=False))
    mutate(d)
    errs = results.validate_doc(d)
    assert any(problem in e for e in errs), errs


def test_api_only_document_is_valid():
    api = {"small_shape": "256x256x256", "loop_shape": "1024x4096x4096", "calls": 10, "loop_calls": 5,
           "warmup_calls": 1, "torch_mm": {"us_per_call": 10.0, "loop_tflops": 600.0}, "phases": []}
    d = results.document([], data="randn", protocol={"rounds": None, "sustained_s": None, "cold_l2": False},
                       telemetry={"available": False, "reason": "x"}, api=api, env=ENV)
    assert results.validate_doc(d) == []


def test_load_refuses_non_json_and_v1(tmp_path):
    bad = tmp_path / "garbage.json"
    bad.write_text("garbage\n")
    with pytest.raises(ValueError, match="is not JSON"):
        results.load(str(bad))
    v1 = tmp_path / "old.json"
    v1.write_text(json.dumps({"schema": "cute-gemm/bench-v1", "results": []}))
    with pytest.raises(ValueError, match="bench-v1 result .* measure again"):
        results.load(str(v1))
    good = tmp_path / "good.json"
    results.save(make_doc(), str(good))
    assert results.load(str(good))["results"]


@pytest.mark.parametrize("path", COMMITTED, ids=os.path.basename)
def test_committed_results_load_or_are_refused_clearly(path):
    """Files under bench/results/ are either valid bench-v2 documents, or bench-v1 ones refused in one sentence."""
    with open(path) as f:
        schema = json.load(f).get("schema")
    if schema == results.SCHEMA:
        doc = results.load(path)
        assert doc["gpu"]["name"] and any(r["status"] == "ok" for r in doc["results"])
    else:
        with pytest.raises(ValueError, match="bench-v1"):
            results.load(path)


def _render(doc) -> str:
    from rich.console import Console

    buf = io.StringIO()
    console.render(doc, Console(file=buf, width=console.LOG_WIDTH, color_system=None))
    return buf.getvalue()


def test_table_rows_and_rendering():
    doc = make_doc(sweep=False)
    r5 = _row(doc, "sm90:5")
    row = dict(zip(console.COLUMNS, console.result_row(r5)))
    assert row["kernel"] == "phase 5" and row["TFLOP/s"] == "712.0" and row["SM MHz"] == "1508" and row["W"] == "700"
    assert row["x vendor per round"] == f"{712 / 736:.3f} ({712 / 736:.2f}..{712 / 736:.2f})"  # same every round
    assert row["TFLOP/s/kW"] == f"{712 / 0.7:.0f}" and row["throttle"] == "sw_power_cap" and row["status"] == "pass"
    # bandwidth: A + B fp16 and C fp32 once each over the median time, and % of the run's copy bandwidth
    tb_s = (2 * 2 * 4096 * 4096 + 4 * 4096 * 4096) / (r5["timing"]["ms_median"] * 1e-3) / 1e12
    assert r5["tb_s"] == pytest.approx(tb_s) and row["TB/s"] == f"{tb_s:.2f}"
    assert row["% copy BW"] == f"{100 * tb_s / doc['copy_bandwidth']['tb_s']:.0f}"
    absent = console.result_row(_row(doc, "peer:triton"))
    assert absent[1:12] == ("-",) * 11 and absent[12] == "absent" and absent[13] == "triton is not installed"
    assert len(console.result_row(r5)) == len(absent) == len(console.COLUMNS)
    text = _render(doc)
    assert "4096x4096x4096" in text and "1024x4096x4096" in text and "data randn" in text
    assert "nn fp16->fp32" in text and "device copy 4.29 TB/s" in text
    assert "median of 7 interleaved rounds" in text and "1 s sustained" in text
    for col in console.COLUMNS:
        assert col in text
    assert "no clock/power telemetry" not in text
    assert "no clock/power telemetry: pynvml is not installed" in _render(make_doc(sweep=False, telemetry=False))


def test_the_run_summary_is_each_phases_geomean_over_the_vendor():
    """After the tables: per phase timed beside the vendor at two or more shapes, the geomean of its speed over the
    faster of cuBLAS and cuBLASLt and its lowest shape -- what a set's run is judged by, without a script."""
    import math

    doc = make_doc(sweep=False)
    rows = [r for r in doc["results"] if r["key"] == "sm90:5"]
    assert len(rows) == 2 and all(r["pct_vendor"] for r in rows)
    ratios = [r["pct_vendor"] / 100 for r in rows]
    summary = {name: rest for name, *rest in console.vendor_summary(doc)}
    n, geo, low, where = summary["phase 5"]
    assert n == 2 and geo == pytest.approx(math.sqrt(ratios[0] * ratios[1])) and low == min(ratios)
    assert where in {r["shape"] for r, x in zip(rows, ratios) if x == low}
    assert not any(name.startswith(("cuBLAS", "cuBLASLt")) for name in summary)  # the vendor is the yardstick
    text = _render(doc)
    assert "speed over the faster of cuBLAS and cuBLASLt" in text
    assert re.search(rf"phase 5 +{geo:.3f}  {low:.3f} at {where}  \(2 shapes\)", text)
    one = make_doc(sweep=False)
    one["results"] = [r for r in one["results"] if r["shape"] == rows[0]["shape"]]
    assert console.vendor_summary(one) == [] and "speed over the faster" not in _render(one)


def test_plots_from_a_document(tmp_path):
    pytest.importorskip("matplotlib")
    from PIL import Image

    from cute_gemm.report.plot import plot_all

    paths = plot_all(make_doc(data="ints"), str(tmp_path / "run"))
    names = sorted(os.path.basename(p) for p in paths)
    assert names == ["run_ladder.png", "run_roofline.png", "run_sweep.png", "run_worklog.png"]
    for p in paths:
        assert os.path.getsize(p) > 10_000
        with Image.open(p) as im:
            assert im.size[0] > 800 and im.size[1] > 400
    # without square sizes beyond the headline ones there is no sweep figure; without a copy bandwidth no roofline
    doc = make_doc(sweep=False)
    doc["copy_bandwidth"] = None
    assert len(plot_all(doc, str(tmp_path / "nosweep"))) == 2


def test_worklog_figure_shows_both_ladders(tmp_path, monkeypatch):
    """The side-by-side figure puts the worklog's % of cuBLASLt and this run's % of vendor on every phase."""
    pytest.importorskip("matplotlib")
    import matplotlib.axes

    from cute_gemm.report import plot, worklog

    bars = []
    real_bar = matplotlib.axes.Axes.bar

    def spy(self, x, height, *a, **k):
        bars.append((k.get("label"), list(height)))
        return real_bar(self, x, height, *a, **k)

    monkeypatch.setattr(matplotlib.axes.Axes, "bar", spy)
    plot.worklog_figure(make_doc(sweep=False), str(tmp_path / "w.png"))
    b300_4096, h200_4096 = bars[0][1], bars[1][1]
    phases = sorted(PHASE_TFLOPS, key=plot.phase_order)
    assert b300_4096[phases.index("5")] == pytest.approx(100 * 1451 / 1762)
    assert b300_4096[phases.index("6")] == 0  # beyond the worklog: no B300 number
    assert h200_4096[phases.index("5")] == pytest.approx(100 * 712 / 736)
    assert "cuBLASLt" in bars[0][0] and worklog.GPU in bars[0][0]


def test_progress_in_a_log_is_one_line_per_step(capsys):
    with Progress(5) as bar:
        bar.step("4096x4096x4096 check sm90:0: ok")
        bar.step("4096x4096x4096: nothing to time", advance=4)
    with Progress(3, enabled=False) as bar:
        bar.step("silent")
    assert capsys.readouterr().err == "[1/5] 4096x4096x4096 check sm90:0: ok\n[5/5] 4096x4096x4096: nothing to time\n"


def test_one_line_errors():
    assert one_line(RuntimeError("launch failed\nat line 3")) == "RuntimeError: launch failed"
    assert one_line(KeyboardInterrupt()) == "KeyboardInterrupt"


# ------------------------------------------------------------------------------------------ plot details
def _with_best(doc, picks: dict) -> dict:
    """``doc`` plus a 'best' row per shape in ``picks`` (shape -> phase picked), copied from that phase's row."""
    doc = copy.deepcopy(doc)
    for shape_, phase in picks.items():
        row = copy.deepcopy(next(r for r in doc["results"] if r["shape"] == shape_ and r["name"] == phase))
        row.update(key="best", name="best", label=f"best ({phase})", phase="best")
        doc["results"].append(row)
    return doc


def _spy(monkeypatch, method):
    import matplotlib.axes

    calls = []
    real = getattr(matplotlib.axes.Axes, method)

    def spy(self, *a, **k):
        calls.append((a, k))
        return real(self, *a, **k)

    monkeypatch.setattr(matplotlib.axes.Axes, method, spy)
    return calls


def test_sweep_series_have_distinct_styles_and_best_names_every_pick(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from cute_gemm.report import plot

    squares = [f"{s}x{s}x{s}" for s in (512, 1024, 2048, 4096)]
    doc = _with_best(make_doc(), {sq: ("5" if sq == "4096x4096x4096" else "6") for sq in squares})
    calls = _spy(monkeypatch, "plot")
    plot.sweep_figure(doc, str(tmp_path / "s.png"))
    series = {k["label"]: (k["color"], k["marker"], k["ls"]) for _, k in calls}
    assert len(set(series.values())) == len(series) >= len(PHASE_TFLOPS) + 3  # no two series look alike
    for label, (color, marker, ls) in series.items():
        if label.startswith("phase"):
            assert (marker, ls) == ("o", "-"), label
        elif not label.startswith("best"):
            assert ls == "--" and marker != "o", label  # a peer
    assert len({c for lab, (c, _, _) in series.items() if lab.startswith("phase")}) == len(PHASE_TFLOPS)
    (best,) = [lab for lab in series if lab.startswith("best")]
    assert best == "best (per shape: 6, 5)"  # every pick, not the first row's


def test_ladder_gain_is_against_the_phase_before_it(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from cute_gemm.report import plot

    doc = make_doc(sweep=False)
    doc["results"] = [r for r in doc["results"] if r["kind"] == "peer" or r["name"] in ("0", "5", "6")]
    doc = _with_best(doc, {"4096x4096x4096": "6", "1024x4096x4096": "6"})
    calls = _spy(monkeypatch, "text")
    plot.ladder_figure(doc, str(tmp_path / "l.png"))
    texts = [a[2] for a, _ in calls[: len(calls) // 2]]  # the first panel's
    assert "420" in texts  # phase 0: no phase before it
    assert "712" in texts  # phase 5: phase 4 is not in this file, so no gain against phase 0
    assert f"728\n{(728 / 712 - 1) * 100:+.0f}%" in texts  # phase 6 against phase 5
    assert "728\n(6)" in texts  # best names its pick; it is not a step of the ladder


def test_ladder_leaves_the_peak_out_and_no_label_overlaps(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    import matplotlib.figure

    from cute_gemm.report import plot

    figs = []
    real = matplotlib.figure.Figure.savefig
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", lambda self, *a, **k: figs.append(self) or real(self, *a, **k))
    plot.ladder_figure(_with_best(make_doc(sweep=False), {"4096x4096x4096": "6"}), str(tmp_path / "l.png"))
    (fig,) = figs
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig).draw()  # the figure was closed: lay it out again to measure its labels
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        assert ax.get_ylim()[1] < 989 and "989" in ax.get_title()  # named, not drawn
        assert all(989 not in line.get_ydata() for line in ax.get_lines())
        boxes = [t.get_window_extent(renderer) for t in ax.texts if t.get_text()]
        boxes += [ax.get_legend().get_window_extent(renderer)]
        for i, a in enumerate(boxes):
            for b in boxes[i + 1:]:
                assert not a.overlaps(b), (a, b)


def test_worklog_figure_needs_a_phase_on_both_sides(tmp_path):
    pytest.importorskip("matplotlib")
    from cute_gemm.report import plot

    doc = make_doc()
    doc["results"] = [r for r in doc["results"] if r["kind"] == "peer" or r["name"] == "6"]  # beyond the worklog
    assert plot.worklog_figure(doc, str(tmp_path / "w.png")) is None
    names = sorted(os.path.basename(p) for p in plot.plot_all(doc, str(tmp_path / "run")))
    assert names == ["run_ladder.png", "run_roofline.png", "run_sweep.png"] and not (tmp_path / "w.png").exists()


def test_roofline_from_a_document(tmp_path, monkeypatch):
    """Each timed kernel at each shape against min(peak, copy bandwidth x intensity): the points, the roof and
    the % of it, from the synthetic document's numbers; no figure without the run's copy bandwidth."""
    pytest.importorskip("matplotlib")
    from cute_gemm.report import plot
    from cute_gemm.runtime.problem import Problem

    doc = make_doc()
    points = plot.roofline_points(doc)
    bw, peak = doc["copy_bandwidth"]["tb_s"], doc["peak_tflops"]
    (row, pts) = points["sm90:5"]
    p = Problem(4096, 4096, 4096)
    ai = p.flops / (2 * 2 * 4096 * 4096 + 4 * 4096 * 4096)
    (pt,) = [t for t in pts if t[2] == "4096x4096x4096"]
    assert pt[0] == pytest.approx(ai) and pt[1] == pytest.approx(PHASE_TFLOPS["5"])
    assert pt[3] == pytest.approx(100 * PHASE_TFLOPS["5"] / min(peak, bw * ai))
    assert plot.roof(10.0, peak, bw) == pytest.approx(10 * bw) and plot.roof(1e4, peak, bw) == peak
    assert "peer:triton" not in points and "sm90:4" in points  # untimed rows have no point
    assert len(pts) == len([r for r in doc["results"] if r["key"] == "sm90:5" and r.get("timing")])
    calls = _spy(monkeypatch, "plot")
    assert plot.roofline_figure(doc, str(tmp_path / "r.png")) and (tmp_path / "r.png").stat().st_size > 10_000
    roof_line = calls[0]
    xs, ys = roof_line[0][0], roof_line[0][1]
    assert all(y == pytest.approx(min(peak, bw * x)) for x, y in zip(xs, ys))
    assert "device copy" in roof_line[1]["label"] and len(calls) == 1 + len(points)
    doc["copy_bandwidth"] = None
    assert plot.roofline_figure(doc, str(tmp_path / "none.png")) is None


def test_copy_bandwidth_record_and_documents_without_operands():
    from cute_gemm.measure import bandwidth
    from phases.operands import Operands

    rec = bandwidth.summarize([0.6, 0.5, 0.55], 2**30)
    assert rec["tb_s"] == pytest.approx(2 * 2**30 / 0.55e-3 / 1e12) and rec["tb_s_best"] == pytest.approx(
        2 * 2**30 / 0.5e-3 / 1e12)
    assert rec["copies"] == 3 and "read + write" in rec["method"]
    doc = make_doc(sweep=False)
    assert results.operands_of(doc) == Operands()
    del doc["operands"], doc["copy_bandwidth"]  # a document written before they were recorded
    assert results.validate_doc(doc) == [] and results.operands_of(doc) == Operands()
    assert console.operands_label(doc) == "nn fp16->fp32" and "device copy" not in console.caption(doc)


def test_a_run_in_another_layout_is_not_set_beside_the_worklog(tmp_path):
    """The worklog measured its problem only (nn fp16 -> fp32): a run of other operands gets no side-by-side
    figure, and its captions name its operands."""
    pytest.importorskip("matplotlib")
    from cute_gemm.report import plot
    from phases.operands import Operands

    doc = make_doc()
    doc["operands"] = results.operands_record(Operands.of("nt", "bf16", "bf16"))
    assert plot.worklog_figure(doc, str(tmp_path / "w.png")) is None
    names = sorted(os.path.basename(p) for p in plot.plot_all(doc, str(tmp_path / "run")))
    assert names == ["run_ladder.png", "run_roofline.png", "run_sweep.png"]
    assert console.caption(doc).startswith("nt bf16->bf16, data randn")
