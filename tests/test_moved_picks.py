"""bench/moved_picks.py without a GPU: which picks a change of the model moves, and the command that times them."""

import subprocess
import types

import pytest

from bench_scripts import ROOT, load_script
from cute_gemm.runtime import choose


mp = load_script("moved_picks")
SHAPES = [(1, 4096, 4096), (128, 8192, 8192), (232, 11008, 4096), (168, 5120, 13824)]


def test_the_same_model_moves_nothing():
    assert mp.moved(choose, choose, SHAPES + SHAPES) == []


def test_a_moved_pick_is_timed_old_beside_new():
    """A model whose cheapest row at 232x11008x4096 is another config: that shape moves, and the command times the
    old config there (``--config``) beside ``best``; the shapes where both agree are not in it."""
    other = choose.explain("sm90", 232, 11008, 4096)[1]

    def explain(arch, m, n, k, operands=None):
        rows = choose.explain(arch, m, n, k, operands)
        return [other] if (m, n, k) == (232, 11008, 4096) else rows

    rows = mp.moved(types.SimpleNamespace(explain=explain), choose, SHAPES)
    assert [shape for shape, _, _ in rows] == [(232, 11008, 4096)]
    cmd = mp.command(rows)
    assert "--shapes 232,11008,4096 " in cmd and "--top 0" in cmd
    assert f"--config {mp.spec_of(other)}@232,11008,4096" in cmd
    assert "128,8192,8192" not in cmd


def test_random_shapes_are_reproducible_from_the_seed():
    a, b = mp.random_shapes(50, 7), mp.random_shapes(50, 7)
    assert a == b and a != mp.random_shapes(50, 8)
    assert all(m in mp.TOKENS and n in mp.N_WIDTHS and k in mp.K_WIDTHS for m, n, k in a)


def test_the_model_at_a_revision_loads_beside_todays():
    """choose.py as committed at HEAD, loaded as a module of its own: a model of the same interface (its picks are
    today's unless the working tree changed the model)."""
    if subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True).returncode:
        pytest.skip("not a git checkout")
    old = mp.load_at("HEAD")
    assert old is not choose and old.explain("sm90", 1, 4096, 4096)[0]["phase"] in ("9", "10")
