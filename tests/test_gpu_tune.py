"""Tuning on the GPU: ``tune_shape`` times the model's cheapest candidates and keeps the fastest, and
``gemm(phase="best")`` then runs that config for the shape, correctly; ``cute-gemm tune`` end to end (its table, its
candidates file, ``--show``). Marker ``gpu``; the CPU half is tests/test_tune.py."""

import json
import os
import subprocess
import sys

import pytest

from conftest import gpu_family

FAMILY = gpu_family()
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(FAMILY not in (None, "sm90"), reason="the sm90 ladder's tuning")]


def test_best_runs_what_tune_kept(tmp_path, monkeypatch):
    import torch

    import cute_gemm
    from cute_gemm.measure import tune
    from cute_gemm.runtime import plan, registry, tuned
    from cute_gemm.runtime.problem import Problem
    from phases.operands import WORKLOG

    monkeypatch.setattr(tuned, "path", lambda gpu: tmp_path / "tuned.json")
    monkeypatch.setattr(tuned, "_TABLES", {})
    monkeypatch.setattr(plan, "_FAST", {})
    gpu = torch.cuda.get_device_name(0)
    p = Problem(200, 2048, 4104)  # ragged: K not a multiple of any k-tile, M not of a token tile
    t, doc = tune.tune_shape("sm90", p, top=3, rounds=2, gpu=gpu)
    assert t.fastest and len(t.timed) == 3 and all(us and us > 0 for us in t.timed.values())
    assert all(r["check"]["passed"] for r in doc["results"] if r["kind"] == "phase")
    phase, over = tuned.lookup(gpu, "sm90", p.m, p.n, p.k)
    assert t.timed[t.fastest] == min(t.timed.values()) and (phase, over) == (t.phase, t.config)
    entry = registry.get("sm90", phase)
    cfg = entry.configured(over)
    g = torch.Generator(device="cuda").manual_seed(7)
    a = torch.randn(p.m, p.k, device="cuda", generator=g).half()
    b = torch.randn(p.k, p.n, device="cuda", generator=g).half()
    c = cute_gemm.gemm(a, b, phase="best")
    ref = a.double() @ b.double()
    assert c.dtype == torch.float32 and torch.linalg.norm(c.double() - ref) / torch.linalg.norm(ref) < 1e-5
    assert (phase, None if cfg == entry.default_config() else cfg, None, 0, WORKLOG) in plan._PLANS


def test_cli_tune_writes_its_table_and_candidates(tmp_path):
    env = {**os.environ, "CUTE_GEMM_CACHE_DIR": str(tmp_path / "cache")}
    out = tmp_path / "cand.json"
    r = subprocess.run([sys.executable, "-m", "cute_gemm", "tune", "--shapes", "64,4096,4096", "--top", "2",
                        "--rounds", "2", "--out", str(out), "--quiet"], capture_output=True, text=True, env=env,
                       timeout=280)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "<- kept" in r.stdout and "x vendor" in r.stdout
    doc = json.loads(out.read_text())
    assert doc["schema"] == "cute-gemm/best-candidates-v1" and len(doc["rows"]) == 2
    assert all(row["vendor_us"] > 0 for row in doc["rows"])
    show = subprocess.run([sys.executable, "-m", "cute_gemm", "tune", "--show"], capture_output=True, text=True,
                          env=env, timeout=120)
    assert show.returncode == 0 and "sm90 64x4096x4096 nn fp16->fp32" in show.stdout
