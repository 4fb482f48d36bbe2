"""``cute-gemm report`` without a browser: the file it writes for the committed results (small, offline by
construction, every step and every pair of phases in it, the census of a real compile, the numbers of the
JSON), what it does with several result files and with a phase that has no measurement, how it reads a
ladder without the CuTe DSL, and the CLI's one-line answers to bad input. The pages themselves are
driven in a real browser by ``test_report_browser.py``."""

import itertools
import json
import os
import pathlib
import re

import pytest

from cute_gemm import cli
from cute_gemm.measure import results
from cute_gemm.report import html
from cute_gemm.runtime import registry

ROOT = pathlib.Path(__file__).resolve().parent.parent
from report_build import committed_report
from synthetic_doc import make_doc

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SWEEP = os.path.join(ROOT, html.DEFAULT_RESULTS[0])


def page_data(path: str) -> dict:
    """The JSON document the page draws itself from."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r'<script type="application/json" id="data">(.*?)</script>', text, re.S)
    return json.loads(m.group(1))


@pytest.fixture(scope="module")
def report():
    path, pages = committed_report()
    return path, pages, page_data(path)


# ------------------------------------------------------------------------------- the committed report
def test_the_report_is_small_and_loads_nothing(report):
    path, _, _ = report
    size = os.path.getsize(path)
    assert 200_000 < size <= html.MAX_BYTES, size
    with open(path, encoding="utf-8") as f:
        text = f.read()
    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', text).group(1)
    assert "default-src 'none'" in csp and "img-src data:" in csp
    assert not re.findall(r"""(?:src|href|action)\s*=\s*["'](?!#|data:image/png;base64,)""", text)
    assert "url(" not in text and "@import" not in text and "http://" not in text and "https://" not in text
    assert text.count("<script") == 2 and text.count("</script>") == 2  # the data (no '<' inside), the script
    assert text.count('src="data:image/png;base64,') == 4  # the ladder, the sweep, the worklog, the roofline


def test_every_step_and_every_pair_of_phases_is_in_it(report):
    _, pages, data = report
    expect = ["summary"]
    for fam in ("sm90", "sm100"):
        ids = [e.phase for e in registry.all_entries(fam)]
        assert data["ladders"][fam]["ids"] == ids
        expect += [f"{fam}/{a}-{b}" for a, b in steps(fam, ids)]
    assert list(pages) == data["pages"] == expect
    n = len(data["sources"])
    assert n == len(registry.all_entries()) and set(data["diffs"]) == {f"{i}-{j}" for i, j in itertools.combinations(range(n), 2)}


def test_the_census_is_a_real_compile_of_every_phase(report):
    _, _, data = report
    for key, ph in data["phases"].items():
        c = ph["census"]
        assert c, (key, ph["census_why"])
        assert c["target"] == ("sm_90a" if key.startswith("sm90:") else "sm_100a") and c["res"]["registers"] > 0
        assert c["census"].get("wgmma.mma_async" if key.startswith("sm90:") else "tcgen05.alloc", 0) > 0, key
    assert data["phases"]["sm90:5"]["census"]["census"]["bulk tensor store"] > 0
    assert "bulk tensor store" not in data["phases"]["sm90:4"]["census"]["census"]


@pytest.mark.parametrize("fam", ["sm90", "sm100"])
def test_the_step_to_phase_11_shows_the_epilogue(report, fam):
    """Phase 11's default (every epilogue field off) is phase 10's kernel; its page shows the lesson config (bias +
    gelu), compiled: the census has the SFU tanh and the bias's ld.global that phase 10 lacks, and the rest of the
    census (mainloop, DSMEM reduce, cluster) is phase 10's."""
    _, pages, data = report
    assert f"{fam}/10-11" in pages
    ten, eleven = data["phases"][f"{fam}:10"], data["phases"][f"{fam}:11"]
    assert eleven["parent"] == "10" and (eleven["config"]["bias"], eleven["config"]["activation"]) == (True, "gelu")
    assert {"tanh.approx.f32", "ld.global"} <= set(data["census_rows"])
    c10, c11 = ten["census"]["census"], eleven["census"]["census"]
    assert c11["tanh.approx.f32"] > 0 and c11["ld.global"] > 0 and "tanh.approx.f32" not in c10 and "ld.global" not in c10
    assert {k: v for k, v in c11.items() if k not in ("tanh.approx.f32", "ld.global")} == c10


def test_measured_numbers_are_the_jsons(report):
    _, _, data = report
    doc = results.load(SWEEP)
    seen = 0
    for r in doc["results"]:
        if r["kind"] == "phase" and r["name"] != "best" and r.get("timing"):
            m = data["phases"][r["key"]]["measured"][r["shape"]]
            assert m["tflops"] == f"{r['timing']['tflops']:.1f}" and m["file"] == 0, (r["key"], r["shape"])
            assert m["pct"].startswith(f"{r['pct_vendor']:.0f}% of cuBLAS")
            seen += 1
    assert seen == 10 * 8  # phases 0, 1, 2a, 2b, 3-8 at 8 shapes
    for key in ("sm90:9", "sm90:10", "sm90:11"):  # no committed results yet
        assert data["phases"][key]["measured"] == {}
    assert all(not p["measured"] for k, p in data["phases"].items() if k.startswith("sm100:"))
    assert data["ladders"]["sm90"]["measured"] and not data["ladders"]["sm100"]["measured"]
    assert [w["tflops"] for w in data["phases"]["sm90:5"]["wl"]] == ["1451"]


def test_the_highlighted_lines_are_the_source(report):
    _, _, data = report
    for ph in data["phases"].values():
        with open(os.path.join(ROOT, ph["file"]), encoding="utf-8") as f:
            lines = f.read().splitlines()
        drawn = data["sources"][ph["src"]]
        text = ["".join(p if isinstance(p, str) else p[1] for p in ([ln] if isinstance(ln, str) else ln)) for ln in drawn]
        assert text == lines, ph["file"]
        assert any(not isinstance(ln, str) and any(isinstance(p, list) and p[0] == "k" for p in ln) for ln in drawn)


# -------------------------------------------------------------------------------- parts, with doubles
def test_a_step_follows_a_declared_parent():
    ph = [html.Phase("sm90", pid, None, "", parent=parent) for pid, parent in
          (("5", None), ("6", None), ("7", None), ("8", "6"), ("9", "3"))]
    st = [(a.id, b.id, how) for a, b, how in html.steps(ph)]
    assert st == [("5", "6", "previous"), ("6", "7", "previous"), ("6", "8", "declared"), ("8", "9", "previous")]


def test_the_first_file_with_a_shape_wins_and_the_next_fill_gaps():
    first, second = make_doc(sweep=False), make_doc(sweep=True)
    for r in second["results"]:
        if r.get("timing"):
            r["timing"]["tflops"] += 1000.0
    bench = [html.Doc("a.json", first, "a.json"), html.Doc("b.json", second, "b.json")]
    m = html.measurements("sm90:5", bench)
    assert list(m)[:2] == ["4096x4096x4096", "1024x4096x4096"]  # the worklog's shapes first, then by size
    assert m["4096x4096x4096"]["file"] == 0 and float(m["4096x4096x4096"]["tflops"]) < 1000
    assert m["2048x2048x2048"]["file"] == 1 and float(m["2048x2048x2048"]["tflops"]) > 1000
    assert m["512x512x512"] == {"file": 1, "status": "skipped", "reason": "M=512 is not a multiple of 1024"}
    assert html.measurements("sm90:9", bench) == {}


def test_without_the_dsl_the_report_still_renders(monkeypatch):
    def no_dsl(fam=None):
        raise ImportError("No module named 'cutlass'")

    monkeypatch.setattr(registry, "all_entries", no_dsl)
    text, pages = html.build(["sm90"], html.load_inputs([SWEEP]), census=True)
    data = page_data_from_text(text)
    assert pages == ["summary"] + [f"sm90/{a}-{b}" for a, b in steps("sm90", data["ladders"]["sm90"]["ids"])]
    assert data["ladders"]["sm90"]["ids"] == registry.phase_ids("sm90")
    assert "the sm90 kernels could not be loaded (ImportError: No module named &#x27;cutlass&#x27;)" in text
    p6 = data["phases"]["sm90:6"]
    assert p6["census"] is None and "could not load" in p6["census_why"]
    assert p6["summary"].startswith("phase 5 persistent") and "Constraints" in p6["doc"]
    assert p6["measured"]["4096x4096x4096"]["tflops"]


def steps(fam: str, ids: list[str]) -> list[tuple[str, str]]:
    """(from, to) per phase after the first: its declared parent (8 <- 6, 9 <- 3, 10 <- 9), else the
    previous id; read from the phase files, as the report does without the DSL."""
    parents = {}
    for path in pathlib.Path(ROOT, "phases", fam).glob("phase*.py"):
        pid = re.search(r'^    phase = "(\w+)"', path.read_text(), re.M)
        par = re.search(r'^    parent = "(\w+)"', path.read_text(), re.M)
        if pid and par:
            parents[pid.group(1)] = par.group(1)
    return [(parents.get(b, a), b) for a, b in zip(ids, ids[1:])]


def page_data_from_text(text: str) -> dict:
    return json.loads(re.search(r'<script type="application/json" id="data">(.*?)</script>', text, re.S).group(1))


def test_a_census_that_cannot_be_made_is_said():
    cen = html.Census(enabled=False)
    ph = html.Phase("sm90", "5", None, "")
    assert cen.of(ph) is None and cen.why[ph.key] == "not computed in this run (--no-census)"


# ------------------------------------------------------------------------------------------- the CLI
def run_main(capsys, *args):
    rc = cli.main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def test_report_help(capsys):
    rc, out, _ = run_main(capsys, "report", "--help")
    assert rc == 0 and "usage: cute-gemm report" in out and "--results" in out and "compile-verified" in out


def test_the_command_writes_a_report(tmp_path, capsys):
    out_file = tmp_path / "r" / "sm100.html"
    rc, out, err = run_main(capsys, "report", "--arch", "sm100", "--no-census", "--out", str(out_file))
    assert rc == 0, err
    assert out.startswith(f"wrote {out_file} (")
    n = len(registry.phase_ids("sm100"))
    assert f"{n} pages: the summary and {n - 1} steps of sm100" in out
    text = out_file.read_text()
    assert "Compile-verified only" in text and "not computed in this run (--no-census)" in text


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bad")
    (tmp / "garbage.json").write_text("garbage\n")
    (tmp / "v1.json").write_text(json.dumps({"schema": "cute-gemm/bench-v1", "results": []}))
    (tmp / "broken.json").write_text(json.dumps({"schema": results.SCHEMA, "results": [{"kind": "phase"}]}))
    return tmp


BAD = {
    "missing file": (["--results", "{tmp}/missing.json", "--out", "{tmp}/r.html"], "no such file"),
    "a directory as results": (["--results", "{tmp}", "--out", "{tmp}/r.html"], "is a directory"),
    "not JSON": (["--results", "{tmp}/garbage.json", "--out", "{tmp}/r.html"], "is not JSON"),
    "another schema": (["--results", "{tmp}/v1.json", "--out", "{tmp}/r.html"], "is neither a bench result"),
    "a broken bench result": (["--results", "{tmp}/broken.json", "--out", "{tmp}/r.html"], "not a cute-gemm bench-v2"),
    "out is a directory": (["--out", "{tmp}"], "is a directory"),
    "out is not html": (["--out", "{tmp}/r.txt"], "ending in .html"),
    "out unwritable": (["--out", "/proc/nope/r.html"], "cannot create directory"),
    "no out": ([], "--out"),
    "unknown arch": (["--arch", "sm80", "--out", "{tmp}/r.html"], "unknown arch 'sm80'"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_is_one_line(case, bad_files, capsys):
    argv, expect = BAD[case]
    rc, out, err = run_main(capsys, "report", *(a.format(tmp=bad_files) for a in argv))
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1, (rc, err)
    assert lines[0].startswith("cute-gemm") and expect in lines[0], lines[0]
    assert "Traceback" not in out + err and not (bad_files / "r.html").exists()
