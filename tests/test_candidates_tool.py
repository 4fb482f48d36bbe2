"""bench/candidates.py without a GPU: what it plans to time per shape, its --config parsing, the compact
candidates file it writes from a bench document (``cute_gemm.measure.tune.compact``) (read back by bench/fit_best.py), and its refusals."""

import os
import subprocess
import sys

from bench_scripts import ROOT, load_script
from cute_gemm.measure import tune
from cute_gemm.runtime import choose
from cute_gemm.runtime.problem import Problem


cand = load_script("candidates")


def test_plan_is_the_models_cheapest_then_the_extras_once():
    shape = Problem(208, 6144, 8192)
    specs = cand.plan(shape, 4, ["10:bm=192,bn=112,bk=64,stages=5", "9:split_k=4"])
    cheapest = [cand.spec_of(r) for r in choose.explain("sm90", 208, 6144, 8192)]
    cheapest = [s for s in dict.fromkeys(cheapest) if s != "7"][:4]
    assert specs[:4] == cheapest
    # the model's first pick is already among the cheapest: the extra is not timed twice
    assert specs.count("10:bm=192,bn=112,bk=64,stages=5") == 1 and specs[-1] == "9:split_k=4"


def test_an_extra_spelled_otherwise_is_still_timed_once():
    """A --config that is one of the planned configs in other words (field order, 'true' for True) or given twice:
    one spec (two would give two rows of one key in the bench, as run_h200.sh region256 found)."""
    shape = Problem(251, 4480, 4864)
    planned = cand.plan(shape, 4, [], families=True)
    split3 = next(s for s in planned if "bn=256" in s and "split_k=3" in s and s.startswith("10:bm=128"))
    assert split3 == "10:bm=128,bn=256,bk=64,stages=4,split_k=3,evict_first_a=True"
    other = "10:split_k=3,evict_first_a=true,bm=128,bn=256,bk=64,stages=4"
    assert cand.canonical(other) == split3
    specs = cand.plan(shape, 4, [other, "9:split_k=4", "9:split_k=4"], families=True)
    assert specs == planned + ["9:split_k=4"]
    assert cand.canonical("7") == "7"


def test_families_add_each_familys_cheapest_once():
    """--families: after the model's cheapest, the cheapest candidate of every family (phase 9; phase 10 by weight-tile
    rows, split or not, multicast or not) that is not yet among them -- what a refit needs timed."""
    shape = Problem(160, 9728, 4096)
    rows = choose.explain("sm90", 160, 9728, 4096)

    def fam(r):
        return tune.family(r["phase"], r["config"])

    specs = cand.plan(shape, 2, [], families=True)
    assert specs[:2] == cand.plan(shape, 2, [])
    fams = {fam(r) for r in rows} - {None}
    by_spec = {cand.spec_of(r): fam(r) for r in rows}
    assert {by_spec[s] for s in specs} == fams  # every family is there
    first = {}
    for r in rows:  # the cheapest of each family
        first.setdefault(fam(r), cand.spec_of(r))
    assert all(first[f] in specs for f in fams if f not in {by_spec[s] for s in specs[:2]})
    assert len(specs) == len(set(specs)) and all(not s.startswith(("7", "8")) for s in specs)
    assert cand.plan(shape, 0, ["9:split_k=4"]) == ["9:split_k=4"]


def test_config_at_a_shape():
    assert cand._at("10:bm=192@208,6144,8192") == ("10:bm=192", Problem(208, 6144, 8192))
    assert cand._at("10:bm=192") == ("10:bm=192", None)


def test_compact_rows_from_a_committed_run_are_read_by_fit_best():
    fit = load_script("fit_best")
    doc = fit.read(os.path.join(ROOT, "bench", "results", "h200_2026-11-30_to_12-02_bench_docs2.tar.xz",
                                "h200_2026-12-02_wide_heldout3_bench.json"))
    out = tune.compact(doc, "a test")
    assert out["schema"] == "cute-gemm/best-candidates-v1" and out["gpu"] == "NVIDIA H200" and out["note"] == "a test"
    shapes = {(r["m"], r["n"], r["k"]) for r in out["rows"]}
    assert len(shapes) == 12 and all(r["us"] > 0 and r["vendor_us"] > 0 and r["model_us"] > 0 for r in out["rows"])
    # per shape: phase 7 and the kernel best ran, each with the faster vendor's time of that shape
    row = next(r for r in out["rows"] if (r["m"], r["n"], r["k"]) == (232, 2048, 5632) and r["phase"] == "7")
    assert 13 < row["vendor_us"] < 15  # cuBLAS 13.8 us in that run
    assert fit.rows_of(out) == out["rows"]


def test_refusals_before_any_gpu_work():
    script = os.path.join(ROOT, "bench", "candidates.py")
    bad = subprocess.run([sys.executable, script, "--shapes", "208,6144,8192", "--config", "10:bogus=1"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "bogus" in bad.stderr
    bad_at = subprocess.run([sys.executable, script, "--shapes", "208,6144,8192", "--config", "10:bm=192@1,2"],
                            capture_output=True, text=True, timeout=120)
    assert bad_at.returncode == 2 and "M,N,K" in bad_at.stderr


def test_fit_best_reads_every_default_file_plain_or_in_its_archive():
    """Candidate runs sit in archives (the tree travels to the GPU machine: small files in blocks add up); fit_best
    reads them through one as ARCHIVE.tar.xz/MEMBER, like the plain files."""
    fit = load_script("fit_best")
    inside = [p for p in fit.DEFAULT if ".tar.xz/" in str(p)]
    archives = tuple(str(a) + "/" for a in fit.ARCHIVES)
    assert inside and all(str(p).startswith(archives) for p in inside)
    assert {a for a in archives if any(str(p).startswith(a) for p in inside)} == set(archives)
    for path in fit.DEFAULT:
        doc = fit.read(path)
        assert "NVIDIA H200" in str(doc["gpu"]) and fit.rows_of(doc), path  # older files: a dict with the name


def test_fit_best_says_where_picks_own_choice_was_never_measured():
    """``pick``'s choice among all of a shape's candidates, and whether a candidates file timed it: the regret is
    judged among measured rows only, so a refit moving picks to untimed configs must show."""
    fit = load_script("fit_best")
    from cute_gemm.runtime import registry

    shape = (208, 6144, 8192)
    phase, cfg = choose.pick("sm90", *shape)
    cfg = cfg or registry.get("sm90", phase).default_config()
    assert fit.model_pick(shape, choose.MACHINE) == (phase, fit._unstaged(cfg))
    rows = {shape: [{"m": 208, "n": 6144, "k": 8192, "phase": "7", "config": {}, "us": 50.0, "vendor_us": 40.0}]}
    kerns = fit.kernels(rows)
    *_, judged, unmeasured = fit.evaluate(rows, kerns, choose.MACHINE)
    assert judged == 1 and unmeasured == [shape]  # only phase 7 was timed; pick runs phase 10


def test_twin_sets_the_fields_where_the_phase_has_them():
    """--twin FIELD=V: each planned config with one switch flipped, timed beside it -- not for a phase without the
    field, nor where the config already has that value (nothing to compare)."""
    off, on = {"evict_first_a": False}, {"evict_first_a": True}
    # what best runs where a 128-row weight tile holds every token
    pick = "10:bm=128,bn=128,bk=64,stages=7,evict_first_a=True"
    assert cand.twin_of(pick, off) == "10:bm=128,bn=128,bk=64,stages=7,evict_first_a=False"
    assert cand.twin_of("10:bn=128,stages=4", on) == "10:bn=128,stages=4,evict_first_a=True"
    assert cand.twin_of("10", off) is None  # phase 10's default is already off
    assert cand.twin_of("9:bm=64", off) is None  # and phase 9's
    assert cand.twin_of("7", on) is None  # phase 7 has no such field
    assert cand.twin_of("10:bn=128", {}) is None
    script = os.path.join(ROOT, "bench", "candidates.py")
    bad = subprocess.run([sys.executable, script, "--shapes", "208,6144,8192", "--twin", "evict_first_a"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "FIELD=VALUE" in bad.stderr


def test_the_table_names_what_was_not_timed(capsys):
    """A kernel whose check failed is in the table with its reason, not left out of it."""
    rows = [{"kind": "peer", "label": "cuBLAS", "timing": {"ms_median": 0.0921}},
            {"kind": "phase", "phase": "10", "label": "phase 10 bn=96", "status": "failed",
             "reason": "max rel err 3e-2 > 1e-2"}]
    cand._table(Problem(192, 5120, 27648), rows)
    out = capsys.readouterr().out
    assert "92.1 us" in out and "cuBLAS" in out
    assert "not timed" in out and "failed" in out and "phase 10 bn=96: max rel err 3e-2 > 1e-2" in out
