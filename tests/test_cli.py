"""The CLI on a CPU-only machine: help everywhere, list, inspect's census, bench's compile-only fallback,
compare without timings, and plot from a bench document."""

import json
import os
import subprocess
import sys

import pytest

from conftest import gpu_family

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cli(*args, check=True):
    proc = subprocess.run([sys.executable, "-m", "cute_gemm", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    if check:
        assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


@pytest.mark.parametrize("cmd", ["list", "inspect", "run", "bench", "compare", "plot"])
def test_every_command_has_help(cmd):
    out = cli(cmd, "--help").stdout
    assert "usage: cute-gemm " + cmd in out and len(out) > 200


def test_list_shows_both_ladders():
    out = cli("list").stdout
    assert "sm90" in out and "sm100" in out and "adds:" in out
    assert out.count("adds:") == 16  # 8 phases on each ladder (0, 1, 2a, 2b, 3, 4, 5, 6)


def test_inspect_sm100_phase0_census(tmp_path):
    proc = cli("inspect", "--arch", "sm100", "--phase", "0", "--dump", str(tmp_path))
    out = proc.stdout
    assert "sm100:0" in out
    for row in ("tcgen05.mma cta_group::1", "cp.async.cg (16 B)", "fence.proxy.async.shared::cta", "registers",
                "smem_bytes", "tmem_cols"):
        assert row in out, row
    assert "bulk tensor load" not in out  # the census only prints rows some phase has
    assert (tmp_path / "sm100_phase0.ptx").stat().st_size > 1000
    assert (tmp_path / "sm100_phase0.cubin").stat().st_size > 1000


def test_inspect_json_and_bad_phase():
    doc = json.loads(cli("inspect", "--arch", "sm90", "--phase", "2b", "--json").stdout)
    (ins,) = doc["sm_90a"]
    assert ins["key"] == "sm90:2b" and ins["census"]["setmaxnreg"] > 0
    bad = cli("inspect", "--arch", "sm90", "--phase", "9", check=False)
    assert bad.returncode == 2 and "unknown phase" in bad.stderr


@pytest.mark.skipif(gpu_family() is not None, reason="CPU-only behaviour")
def test_bench_without_gpu_falls_back_to_compile_report():
    proc = cli("bench", "--arch", "sm100", "--phases", "0,4")
    assert "No GPU to benchmark on" in proc.stderr
    assert "sm100:0" in proc.stdout and "sm100:4" in proc.stdout and "tcgen05.mma cta_group::2" in proc.stdout


@pytest.mark.skipif(gpu_family() is not None, reason="CPU-only behaviour")
def test_run_without_gpu_says_why():
    proc = cli("run", "--phase", "0", check=False)
    assert proc.returncode == 2 and "needs a Hopper (sm90) or Blackwell (sm100) GPU" in proc.stderr


def test_compare_without_gpu():
    out = cli("compare", "sm90:4", "sm90:5", "--shape", "1024,4096,4096").stdout
    assert "config differences" in out and "bulk tensor store" in out and "st.shared" in out
    out = cli("compare", "sm90:3", "sm100:3").stdout
    assert "wgmma.mma_async" in out and "tcgen05.mma cta_group::1" in out
