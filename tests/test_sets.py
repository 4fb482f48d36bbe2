"""The named shape sets as data (``cute_gemm.measure.sets``): every set reachable from ``bench --set`` and ``tune
--set``, listed by ``--list-sets``, help that fits a screen, the prefill set's three GEMMs per layer with their own
operands, and those operands reaching every kernel of a shape -- the phases' checks, ``best``'s pick, the peers, the
timing inputs -- in a run that mixes them (the GPU parts replaced, as in test_bench_flow)."""

import pytest

from bench_scripts import load_script
from conftest import gpu_family
from cute_gemm import cli
from cute_gemm.cli import steps
from cute_gemm.measure import results, sets, suite, tune
from cute_gemm.report import console
from cute_gemm.runtime.problem import Problem
from phases.operands import Operands
from synthetic_doc import ENV, make_doc
from test_bench_flow import FakeEntry, fake_gpu  # noqa: F401  (fake_gpu: the fixture)

FWD, DX, DW = Operands.of("nt", "bf16", "bf16"), Operands.of("nn", "bf16", "bf16"), Operands.of("tn", "bf16", "fp32")


class PickEntry(FakeEntry):
    """The entry ``best`` picked (its config the default)."""

    def overrides(self, cfg):
        return {}

    def default_config(self):
        return None


def parse(*argv):
    return cli.build_parser(argv).parse_args(list(argv))


# ------------------------------------------------------------------------------------------------ the data
def test_every_set_is_in_the_data_module_with_a_description():
    assert set(sets.SETS) >= {"decode", "small", "unlisted", "heldout", "prefill", "prefill-fwd", "prefill-dx",
                              "prefill-dw", *(f"heldout{i}" for i in range(2, 13))}
    for name, s in sets.SETS.items():
        assert s.name == name and s.entries and s.description and "\n" not in s.description
        if name.startswith("heldout"):
            assert s.drawn, f"{name}: when and why it was drawn"
    # the plain views the bench scripts read
    assert suite.SETS["decode"] == tuple(e.problem for e in sets.SETS["decode"].entries) and len(suite.SETS["decode"]) == 30
    assert suite.SET_HELP["small"] == "256^3, 512^3, 1024^3, 2048^3"


def test_only_the_prefill_and_train_sets_carry_operands():
    for name, s in sets.SETS.items():
        assert s.has_operands == name.startswith(("prefill", "train-")), name


def test_the_train_step_set_is_the_training_benchmarks_gemms():
    """Each size's entries, counted as many times as their names say, are every FLOP of bench/train.py's step."""
    train = load_script("train")
    entries = sets.SETS["train-step"].entries
    assert len(entries) == 27 and {e.operands for e in entries} == {FWD, DX, sets.STEP_DW}
    for size in train.SIZES:
        mine = [e for e in entries if e.name.startswith(size.name + " ")]
        flops = sum(2 * e.problem.m * e.problem.n * e.problem.k * int(e.name.rsplit("x", 1)[1]) for e in mine)
        assert len(mine) == 9 and flops == size.gemm_flops(), size
        for e in mine:  # dW's K is the step's tokens; the forward's and dX's M is
            assert (e.problem.k if e.operands == sets.STEP_DW else e.problem.m) == size.tokens, e
    assert sets.STEP_DW.c != DW.c  # the step's bf16 weights take a bf16 dW; the prefill set's fp32


def test_the_prefill_set_is_three_gemms_per_layer():
    s = sets.SETS["prefill"]
    assert len(s.entries) == 30 >= 24
    by_ops = {}
    for e in s.entries:
        by_ops.setdefault(e.operands, []).append(e)
    assert set(by_ops) == {FWD, DX, DW} and all(len(v) == 10 for v in by_ops.values())
    tokens = {512, 1024, 2048, 4096, 8192, 16384}
    for (t, n_out, k_in, layer), fwd, dx, dw in zip(sets.PREFILL_LAYERS, by_ops[FWD], by_ops[DX], by_ops[DW]):
        assert t in tokens
        assert fwd.problem == Problem(t, n_out, k_in) and fwd.name == f"fwd {layer}"
        assert dx.problem == Problem(t, k_in, n_out) and dx.name == f"dx {layer}"
        assert dw.problem == Problem(n_out, k_in, t) and dw.name == f"dw {layer}"  # K = the tokens
    assert {t for t, *_ in sets.PREFILL_LAYERS} == tokens
    assert len({layer.split()[0] for *_, layer in sets.PREFILL_LAYERS}) >= 4  # model families
    for part, ops in (("fwd", FWD), ("dx", DX), ("dw", DW)):
        assert [e.operands for e in sets.SETS[f"prefill-{part}"].entries] == [ops] * 10
        assert set(sets.SETS[f"prefill-{part}"].entries) <= set(s.entries)


def test_set_cases_keep_the_sets_operands_unless_the_run_gives_its_own():
    cases = suite.set_cases("prefill")
    assert len(cases) == 30 and all(isinstance(c, tuple) for c in cases)
    assert (Problem(2048, 4096, 4096), FWD) in cases and (Problem(2048, 4096, 4096), DX) in cases
    # an option given replaces that part in every shape, the rest stays the set's
    fp16 = suite.set_cases("prefill", ab="fp16")
    assert {ops.ab for _, ops in fp16} == {"fp16"} and {ops.layout for _, ops in fp16} == {"nt", "nn", "tn"}
    one = suite.set_cases("prefill", "nn", "fp16", "fp32")
    assert {ops for _, ops in one} == {Operands()} and len(one) == 28  # fwd and dX of a square layer coincide
    assert suite.set_cases("decode") == list(suite.SETS["decode"])  # plain: the run's operands
    with pytest.raises(LookupError, match="--list-sets"):
        sets.get("prefil")


# ------------------------------------------------------------------------------------------------ the CLI
@pytest.mark.parametrize("cmd", ["bench", "tune"])
def test_every_set_name_parses(cmd):
    for name in sets.SETS:
        assert parse(cmd, "--set", name).set == name


@pytest.mark.parametrize("cmd", ["bench", "tune"])
def test_an_unknown_set_is_one_line_naming_list_sets(cmd, capsys):
    rc = cli.main([cmd, "--set", "heldout99"])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "--list-sets" in err and "heldout99" in err


@pytest.mark.parametrize("cmd", ["bench", "tune"])
def test_list_sets_prints_every_set_a_line_each(cmd, capsys, monkeypatch):
    monkeypatch.setattr(steps, "gpu_target", lambda: pytest.fail("--list-sets needs no GPU"))
    rc = cli.main([cmd, "--list-sets"])
    out = capsys.readouterr().out
    lines = out.strip().splitlines()
    assert rc == 0 and len(lines) == len(sets.SETS)
    for line, (name, s) in zip(lines, sets.SETS.items()):
        assert line.split()[0] == name and f"{len(s.entries)} shapes" in line
    assert "tn bf16->fp32" in next(line for line in lines if line.startswith("prefill "))


@pytest.mark.parametrize("cmd", ["bench", "tune"])
def test_help_fits_a_screen(cmd, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    rc = cli.main([cmd, "--help"])
    out = capsys.readouterr().out
    assert rc == 0 and len(out.splitlines()) <= 60, len(out.splitlines())
    assert "see --list-sets" in out and "heldout" not in out


@pytest.fixture
def on_h200(monkeypatch):
    monkeypatch.setattr(steps, "gpu_target", lambda: "sm_90a")
    calls = []

    def run_bench(entries, shapes, peer_list, **kw):
        calls.append((shapes, kw))
        return make_doc(sweep=False, data=kw["data"])

    monkeypatch.setattr(suite, "run_bench", run_bench)
    return calls


def test_bench_prefill_passes_each_shape_its_operands(on_h200, tmp_path):
    out = str(tmp_path / "p.json")
    assert cli.main(["bench", "--set", "prefill", "--best", "--quiet", "--no-plot", "--out", out]) == 0
    shapes, kw = on_h200[0]
    assert shapes == suite.set_cases("prefill") and kw["best_arch"] == "sm90"
    # the run's --dtype replaces the set's in every shape; the layouts stay the set's
    assert cli.main(["bench", "--set", "prefill-dw", "--dtype", "fp16", "--quiet", "--no-plot", "--out", out]) == 0
    assert {ops for _, ops in on_h200[1][0]} == {Operands.of("tn", "fp16", "fp32")}


def test_tune_prefill_tunes_each_shape_with_its_operands(monkeypatch, capsys):
    monkeypatch.setattr(steps, "gpu_target", lambda: "sm_90a")
    monkeypatch.setattr("cute_gemm.runtime.plan.device_name", lambda i=0: "NVIDIA H200")
    seen = []

    def tune_shape(arch, p, *, operands, **kw):
        seen.append((p, operands))
        return tune.Tuned(p, {}, "", None, operands=operands), {}

    monkeypatch.setattr(tune, "tune_shape", tune_shape)
    monkeypatch.setattr("cute_gemm.runtime.tuned.path", lambda gpu: "table.json")
    cli.main(["tune", "--set", "prefill-fwd", "--quiet"])
    assert seen == [(e.problem, FWD) for e in sets.SETS["prefill-fwd"].entries]
    assert "nt bf16->bf16" in capsys.readouterr().out


@pytest.mark.skipif(gpu_family() is not None, reason="CPU-only behaviour (on a GPU, tune times and stores)")
def test_tune_without_a_gpu_names_each_shapes_operands(capsys):
    rc = cli.main(["tune", "--shapes", "512,512,512", "--set", "prefill-dw", "--top", "1"])
    out = capsys.readouterr().out
    assert rc == 2 and "\n512x512x512\n" in out and "\n6144x4096x512 tn bf16->fp32\n" in out


# ------------------------------------------------------------------------------ a run of mixed operands
def test_a_run_of_per_shape_operands(fake_gpu, monkeypatch):  # noqa: F811
    """One shape in two operands and a third in another: every kernel of a shape -- the phase's make and check,
    best's pick, the peers' checks, the timing inputs -- gets that shape's operands; each row records them, the
    document's are null, the table has a title per (shape, operands)."""
    import cute_gemm.measure.check as check_mod
    from cute_gemm.measure import peers, shape
    from cute_gemm.runtime import choose, registry

    monkeypatch.setattr("cute_gemm.measure.environment.record", lambda: ENV)
    seen = []
    fake = check_mod.check_phase
    monkeypatch.setattr(check_mod, "check_phase", lambda e, p, cfg=None, operands=None:
                        seen.append(("check", str(p), operands)) or fake(e, p, cfg, operands))
    fake_peer = peers.check_peer
    monkeypatch.setattr(peers, "check_peer", lambda peer, p, operands=None:
                        seen.append(("peer", str(p), operands)) or fake_peer(peer, p, operands))
    monkeypatch.setattr(shape, "timing_inputs", lambda p, data, n, operands=None:
                        seen.append(("inputs", str(p), operands)) or [("A", "B", "C")])
    monkeypatch.setattr(choose, "resolve", lambda arch, m, n, k, operands, gpu:
                        seen.append(("best", f"{m}x{n}x{k}", operands)) or ("3", None, "model"))
    monkeypatch.setattr(choose, "close_calls", lambda arch, m, n, k, operands: [])
    monkeypatch.setattr("cute_gemm.runtime.plan.device_name", lambda i=0: "NVIDIA H200")
    monkeypatch.setattr(registry, "get", lambda arch, phase: PickEntry(phase))

    square = Problem(512, 512, 512)
    cases = [(square, FWD), (square, DX), (Problem(256, 512, 1024), DW)]
    doc = suite.run_bench([FakeEntry("3")], cases, [fake_gpu["cublas"]], rounds=2, progress=False, best_arch="sm90")
    assert results.validate_doc(doc) == [], results.validate_doc(doc)
    for what in ("check", "peer", "inputs", "best"):
        assert [(s, o) for w, s, o in seen if w == what] == [(str(p), ops) for p, ops in cases
                                                          for _ in range(2 if what == "check" else 1)], what
    assert doc["operands"] is None and results.operands_of(doc) is None
    assert [(r["shape"], r["operands"]["label"]) for r in doc["results"] if r["key"] == "peer:cublas"] == [
        ("512x512x512", "nt bf16->bf16"), ("512x512x512", "nn bf16->bf16"), ("256x512x1024", "tn bf16->fp32")]
    row = next(r for r in doc["results"] if r["key"] == "sm90:3" and r["operands"]["label"] == "tn bf16->fp32")
    assert results.operands_of(doc, row) == DW and row["bytes"] == 2 * (256 * 1024 + 1024 * 512) + 4 * 256 * 512
    assert "bf16->fp32" in doc["protocol"]["check"] and "bf16->bf16" in doc["protocol"]["check"]
    assert console.cases(doc) == [("512x512x512", "nt bf16->bf16"), ("512x512x512", "nn bf16->bf16"),
                                  ("256x512x1024", "tn bf16->fp32")]
    # the table: one per (shape, operands), each with its own rows
    from rich.console import Console

    out = Console(width=400, record=True, file=open("/dev/null", "w"))
    console.render(doc, out)
    text = out.export_text()
    assert "512x512x512  nt bf16->bf16  (operands per shape" in text and "512x512x512  nn bf16->bf16" in text
    assert sum(1 for line in text.splitlines() if line.lstrip().startswith("cuBLAS ")) == 3
    # candidates rows keep each shape's vendor apart, and say their operands
    rows = tune.candidate_rows(doc)
    assert {r["operands"] for r in rows} == {"nt bf16->bf16", "nn bf16->bf16", "tn bf16->fp32"}
    # a run of one operands keeps its top-level record (old tools read it)
    one = suite.run_bench([FakeEntry("3")], [square], [fake_gpu["cublas"]], rounds=2, progress=False, operands=FWD)
    assert one["operands"]["label"] == "nt bf16->bf16" and results.operands_of(one) == FWD
    assert not console.per_shape_operands(one) and console.cases(one) == [("512x512x512", None)]


def test_a_per_row_document_is_validated_row_by_row(fake_gpu, monkeypatch):  # noqa: F811
    monkeypatch.setattr("cute_gemm.measure.environment.record", lambda: ENV)
    doc = suite.run_bench([FakeEntry("3")], [(Problem(512, 512, 512), FWD), (Problem(512, 512, 512), DX)],
                          [fake_gpu["cublas"]], rounds=2, progress=False)
    assert results.validate_doc(doc) == []
    doc["results"][0]["operands"] = {"layout": "xx", "ab": "bf16", "c": "bf16"}
    del doc["results"][1]["operands"]
    errs = results.validate_doc(doc)
    assert any("results[0].operands" in e for e in errs) and any("results[1].operands" in e for e in errs)


def test_plots_of_a_per_row_document(fake_gpu, monkeypatch, tmp_path):  # noqa: F811
    """The ladder takes one operands per shape, the roofline each row's bytes."""
    pytest.importorskip("matplotlib")
    from cute_gemm.report import plot

    monkeypatch.setattr("cute_gemm.measure.environment.record", lambda: ENV)
    square = Problem(512, 512, 512)
    doc = suite.run_bench([FakeEntry("3")], [(square, FWD), (square, DW)], [fake_gpu["cublas"]], rounds=2,
                          progress=False)
    assert [r["operands"]["label"] for r in plot._rows(doc, "512x512x512", "phase")] == ["nt bf16->bf16"]
    points = plot.roofline_points(doc)["sm90:3"][1]
    assert [round(ai, 3) for ai, *_ in points] == [round(square.flops / square.bytes(ops), 3) for ops in (FWD, DW)]
    assert len(plot.plot_all(doc, str(tmp_path / "mixed"))) >= 2


# ------------------------------------------------------------------------------------------ on the GPU
@pytest.mark.gpu
def test_a_mixed_operands_bench_on_the_gpu():
    """Two shapes of the prefill set's kind (nt bf16->bf16 and tn bf16->fp32) with best and the vendor peers, through
    the real checks, graphs and telemetry."""
    from conftest import gpu_family
    from cute_gemm.measure import peers
    from cute_gemm.runtime import registry

    fam = gpu_family()
    entries = [e for e in registry.all_entries(fam) if e.phase == "7"]
    cases = [(Problem(512, 1024, 2048), FWD), (Problem(1024, 512, 512), DW)]
    doc = suite.run_bench(entries, cases, [peers.PEERS[n] for n in peers.VENDOR], rounds=3, progress=False,
                          best_arch=fam)
    assert results.validate_doc(doc) == [], results.validate_doc(doc)
    assert doc["operands"] is None
    for r in doc["results"]:
        assert r["status"] == "ok", (r["key"], r["shape"], r["reason"])
    assert {(r["shape"], r["operands"]["label"]) for r in doc["results"]} == {("512x1024x2048", "nt bf16->bf16"),
                                                                              ("1024x512x512", "tn bf16->fp32")}
