"""The bench JSON schema: what a result file must carry, that timed rows passed their check, and that
the committed H200 results are valid documents that plot."""

import copy
import glob
import os

import pytest

from cute_gemm import bench

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMMITTED = sorted(glob.glob(os.path.join(ROOT, "bench", "results", "*_bench.json")))


def _doc():
    t = {"ms_min": 0.19, "ms_median": 0.2, "ms_max": 0.21, "iters": 10, "cold_l2": False,
         "tflops": 687.2, "tflops_best": 723.4, "tflops_worst": 654.5}
    chk = {"passed": True, "mismatches": 0, "unwritten": 0, "error": None}
    return {
        "schema": bench.SCHEMA, "date": "2026-11-29T00:00:00+00:00", "command": "cute-gemm bench",
        "gpu": {"name": "NVIDIA H200", "sm_count": 132}, "versions": {"torch": "2.11"},
        "protocol": {"cold_l2": False}, "peak_tflops": 989.0,
        "libraries": {"4096x4096x4096": {"cublas": dict(t), "cublaslt": dict(t)}},
        "results": [
            {"key": "sm90:0", "phase": "0", "shape": "4096x4096x4096", "status": "ok", "check": chk, "timing": dict(t),
             "m": 4096, "n": 4096, "k": 4096, "pct_cublas": 100.0, "pct_cublaslt": 100.0, "pct_peak": 69.5},
            {"key": "sm90:1", "phase": "1", "shape": "4096x4096x4096", "status": "failed",
             "check": {"passed": False}, "timing": None, "m": 4096, "n": 4096, "k": 4096},
        ],
    }


def test_valid_document():
    assert bench.validate_doc(_doc()) == []


@pytest.mark.parametrize("mutate,problem", [
    (lambda d: d.pop("gpu"), "missing 'gpu'"),
    (lambda d: d.update(schema="x"), "schema"),
    (lambda d: d["results"][1].update(timing={"tflops": 1}), "carries a timing"),
    (lambda d: d["results"][0]["check"].update(passed=False), "did not pass"),
    (lambda d: d["results"][0]["timing"].update(ms_min=1.0), "min <= median <= max"),
    (lambda d: d["libraries"]["4096x4096x4096"].pop("cublaslt"), "cublaslt"),
])
def test_invalid_documents_are_caught(mutate, problem):
    d = copy.deepcopy(_doc())
    mutate(d)
    errs = bench.validate_doc(d)
    assert any(problem in e for e in errs), errs


def test_table_and_plot(tmp_path):
    pytest.importorskip("matplotlib")
    from cute_gemm.plot import plot_all

    text = bench.table(_doc())
    assert "sm90:0" in text and "687.2" in text and "failed" in text
    paths = plot_all(_doc(), str(tmp_path / "x"))
    assert paths and all(os.path.getsize(p) > 10_000 for p in paths)


@pytest.mark.parametrize("path", COMMITTED, ids=os.path.basename)
def test_committed_results_are_valid(path):
    doc = bench.load(path)
    assert doc["gpu"]["name"] and doc["versions"]["nvidia_cutlass_dsl"]
    assert any(r["status"] == "ok" for r in doc["results"])
