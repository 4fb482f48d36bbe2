"""Tuning ``phase="best"`` without a GPU: the per-GPU table (keys, a stale or foreign file, CUTE_GEMM_TUNED=0), what
``choose.resolve`` takes from it, what ``tune_shape`` keeps from a run (the fastest row that passed its check, never
a failed one), the compact candidates file of a run without peers, and ``cute-gemm tune``'s refusals and its report
on a machine without a GPU. The GPU half is tests/test_gpu_tune.py."""

import json
import subprocess
import sys

import pytest

from cute_gemm.measure import tune
from cute_gemm.runtime import cache, choose, registry, tuned
from cute_gemm.runtime.problem import Problem
from phases.operands import WORKLOG, Operands

GPU = "NVIDIA H200"


@pytest.fixture
def table(tmp_path, monkeypatch):
    """An empty cache directory and fingerprint of the test's own; no table read yet."""
    monkeypatch.setenv("CUTE_GEMM_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("CUTE_GEMM_TUNED", raising=False)
    monkeypatch.setattr(cache, "fingerprint", lambda: "0123456789abcdef")
    monkeypatch.setattr(tuned, "_TABLES", {})
    return tmp_path


def test_a_stored_pick_is_found_for_its_gpu_shape_and_operands_only(table):
    path = tuned.store(GPU, "sm90", 232, 2048, 5632, WORKLOG, "9", {"bm": 64, "bn": 64}, us=15.4)
    assert path == table / "0123456789abcdef" / "tuned-nvidia-h200.json"
    assert tuned.lookup(GPU, "sm90", 232, 2048, 5632) == ("9", {"bm": 64, "bn": 64})
    assert tuned.lookup(GPU, "sm90", 232, 2048, 5640) is None
    assert tuned.lookup(GPU, "sm90", 232, 2048, 5632, Operands.of("nt")) is None
    assert tuned.lookup("NVIDIA H100 80GB HBM3", "sm90", 232, 2048, 5632) is None
    doc = json.loads(path.read_text())
    assert doc["schema"] == tuned.SCHEMA and doc["gpu"] == GPU
    assert doc["entries"]["sm90 232x2048x5632 nn fp16->fp32"]["us"] == 15.4
    tuned._TABLES.clear()  # another process reads the file
    assert tuned.lookup(GPU, "sm90", 232, 2048, 5632) == ("9", {"bm": 64, "bn": 64})
    assert tuned.forget(GPU) and not path.exists() and tuned.lookup(GPU, "sm90", 232, 2048, 5632) is None
    assert not tuned.forget(GPU)


@pytest.mark.parametrize("text", ["{not json", '{"schema": "cute-gemm/tuned-v0", "gpu": "NVIDIA H200", "entries": {}}',
                                  '{"schema": "cute-gemm/tuned-v1", "gpu": "another GPU", "entries": '
                                  '{"sm90 8x8x8 nn fp16->fp32": {"phase": "9"}}}', '[1, 2]'])
def test_a_table_that_is_broken_stale_or_foreign_reads_as_empty(table, text):
    path = tuned.path(GPU)
    path.parent.mkdir(parents=True)
    path.write_text(text)
    assert tuned.entries(GPU) == {} and tuned.lookup(GPU, "sm90", 8, 8, 8) is None
    tuned.store(GPU, "sm90", 8, 8, 8, WORKLOG, "9", {})  # and storing replaces it
    assert json.loads(path.read_text())["entries"]["sm90 8x8x8 nn fp16->fp32"]["phase"] == "9"


def test_resolve_takes_a_tuned_row_only_where_it_still_applies(table, monkeypatch):
    shape = (232, 2048, 5632)
    model = choose.pick("sm90", *shape)
    assert choose.resolve("sm90", *shape, None, GPU) == (*model, "model")
    assert choose.resolve("sm90", *shape, None, None) == (*model, "model")  # no GPU name: no table
    tuned.store(GPU, "sm90", *shape, WORKLOG, "9", {"bm": 64, "bn": 64, "use_pdl": True})
    phase, cfg, how = choose.resolve("sm90", *shape, None, GPU)
    assert (phase, how) == ("9", "tuned") and (cfg.bm, cfg.bn, cfg.use_pdl) == (64, 64, True)
    tuned.store(GPU, "sm90", *shape, WORKLOG, "7", {})  # the phase's default config: None, as pick gives it
    assert choose.resolve("sm90", *shape, None, GPU) == ("7", None, "tuned")
    monkeypatch.setenv("CUTE_GEMM_TUNED", "0")
    assert choose.resolve("sm90", *shape, None, GPU) == (*model, "model")
    monkeypatch.delenv("CUTE_GEMM_TUNED")
    # rows of an older tree: a field or phase that no longer exists, a config that cannot do the shape, a config
    # the phase's rules refuse (config_problems)
    for phase, over in (("9", {"no_such_field": 1}), ("99", {}), ("1", {}), ("9", {"split_k": 9})):
        tuned.store(GPU, "sm90", *shape, WORKLOG, phase, over)
        assert choose.resolve("sm90", *shape, None, GPU) == (*model, "model"), (phase, over)


def _doc(p: Problem, rows):
    """A bench-v2-like document of one shape: (key, phase, config, us or None for a failed check)."""
    out = []
    for key, phase, cfg, us in rows:
        r = {"kind": "peer" if key.startswith("peer:") else "phase", "key": key, "name": key.split(":")[-1],
             "phase": phase, "config": cfg, "shape": str(p), "m": p.m, "n": p.n, "k": p.k,
             "status": "ok" if us else "failed"}
        if us:
            r["timing"] = {"ms_median": us / 1e3}
        out.append(r)
    return {"date": "2026-12-02T10:00:00", "results": out}


def test_tune_shape_keeps_the_fastest_that_passed(table, monkeypatch):
    p = Problem(232, 2048, 5632)
    mnk = (p.m, p.n, p.k)
    cands = tune.candidates("sm90", p, 4)
    assert len(cands) == 4 and len({(e.phase, c) for e, c, _, _ in cands}) == 4
    assert [c[3] for c in cands] == sorted(c[3] for c in cands)  # cheapest first
    assert cands[0][:2] == (registry.get("sm90", choose.pick("sm90", *mnk)[0]),
                            choose.pick("sm90", *mnk)[1] or cands[0][0].default_config())

    def key(e, cfg):
        over = e.overrides(cfg)
        return e.key + ("" if not over else " " + " ".join(f"{k}={v}" for k, v in over.items()))

    # the second candidate failed its check though it "timed" fastest; the third is the fastest that passed
    times = [20.0, None, 15.0, 18.0]
    seen = []

    def fake(q, todo, peer_list=(), **kw):
        seen.append((q, list(todo), kw))
        rows = [(key(e, cfg), e.phase, e.overrides(cfg), us) for (e, cfg), us in zip(todo, times)]
        return _doc(q, rows + [("peer:cublas", None, None, 14.0), ("peer:cublaslt", None, None, 13.0)])

    monkeypatch.setattr(tune, "time_candidates", fake)
    t, _ = tune.tune_shape("sm90", p, top=4, gpu=GPU, rounds=3)
    assert seen[0][0] == p and seen[0][1] == [c[:2] for c in cands] and seen[0][2]["cold_l2"] is True
    assert t.fastest == cands[2][2] and t.model == cands[0][2] and t.timed[cands[1][2]] is None
    assert t.gain == pytest.approx(20.0 / 15.0) and t.vendor_us == 13.0
    e, cfg = cands[2][:2]
    assert tuned.lookup(GPU, "sm90", *mnk) == (e.phase, e.overrides(cfg))
    row = tuned.entries(GPU)[tuned.key("sm90", *mnk)]
    assert (row["us"], row["model_us"], row["vendor_us"], row["model"]) == (15.0, 20.0, 13.0, cands[0][2])
    times[:] = [None] * 4  # nothing passed: nothing is kept, the earlier row stays
    t2, _ = tune.tune_shape("sm90", p, top=4, gpu=GPU)
    assert t2.fastest is None and t2.gain is None and tuned.lookup(GPU, "sm90", *mnk) == (e.phase, e.overrides(cfg))
    # the fastest within MARGIN of the model's pick: the model's pick is kept (the table row replaced by it)
    times[:] = [15.2, 16.0, 15.0, None]
    t3, _ = tune.tune_shape("sm90", p, top=4, gpu=GPU)
    assert t3.fastest == cands[2][2] and t3.kept == t3.model == cands[0][2] and t3.gain == 1.0
    e0, cfg0 = cands[0][:2]
    assert tuned.lookup(GPU, "sm90", *mnk) == (e0.phase, e0.overrides(cfg0))
    assert tuned.entries(GPU)[tuned.key("sm90", *mnk)]["us"] == 15.2
    times[:] = [15.4, 16.0, 15.0, None]  # 2.7% faster: past the margin, the fastest is kept
    t4, _ = tune.tune_shape("sm90", p, top=4, gpu=GPU)
    assert t4.kept == t4.fastest == cands[2][2] and tuned.lookup(GPU, "sm90", *mnk) == (e.phase, e.overrides(cfg))


def test_candidates_file_of_a_run_without_peers(table):
    p = Problem(64, 4096, 4096)
    doc = _doc(p, [("sm90:10 bn=64", "10", {"bn": 64}, 12.0), ("sm90:7", "7", None, 30.0)])
    assert [r["vendor_us"] for r in tune.candidate_rows(doc)] == [None, None]
    doc.update(gpu={"name": GPU, "driver": "580"}, versions={"torch": "2.11", "nvidia_cutlass_dsl": "4.8.1"},
               data="randn", protocol={"cold_l2": True, "rounds": 5}, copy_bandwidth={"tb_s": 4.1})
    out = tune.compact(doc, "n")
    assert [r["vendor_us"] for r in out["rows"]] == [None, None] and out["rows"][0]["model_us"] > 0
    assert tune.merge([doc, None, doc])["results"] == doc["results"] * 2 and tune.merge([None]) is None


def _cli(*args, env=None):
    import os

    return subprocess.run([sys.executable, "-m", "cute_gemm", "tune", *args], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "CUDA_VISIBLE_DEVICES": "", **(env or {})})


def test_cli_refusals_and_the_plan_without_a_gpu(tmp_path):
    r = _cli()
    assert r.returncode == 2 and "no shape to tune" in r.stderr
    r = _cli("--top", "0", "--shapes", "8,8,8")
    assert r.returncode == 2 and "--top must be at least 1" in r.stderr
    r = _cli("--show", "--forget")
    assert r.returncode == 2 and "give one" in r.stderr
    r = _cli("--shapes", "232,2048,5632", "--top", "3")
    assert r.returncode == 2 and "times kernels on a GPU" in r.stderr
    labels = [c[2] for c in tune.candidates("sm90", Problem(232, 2048, 5632), 3)]
    assert [line.split("us  ", 1)[1] for line in r.stdout.splitlines() if "model" in line] == labels
    r = _cli("--show", env={"CUTE_GEMM_CACHE_DIR": str(tmp_path)})
    assert r.returncode == 0 and "tuned tables for these kernel sources: none" in r.stdout


def test_families_add_the_cheapest_of_every_kind_the_top_leaves_out():
    """--families: after the model's --top cheapest, each family's cheapest (phase 9; phase 10 by weight-tile rows; split
    or not; multicast or not) modelled within FAMILY_REACH of the pick -- at 192x5120x27648 with --top 3 that is phase
    9's 64 x 128 tile without a split, which the model ranks 6th and which ran 95-96 us against the 111-116 of its
    pick of the time (192 x 96 tiles; H200, 2026-12-03)."""
    p = Problem(192, 5120, 27648)
    top = tune.candidates("sm90", p, 3)
    more = tune.candidates("sm90", p, 3, families=True)
    assert more[:3] == top and len(more) > len(top)
    fams = [tune.family(e.phase, cfg) for e, cfg, _, _ in more[3:]]
    assert len(set(fams)) == len(fams) and not set(fams) & {tune.family(e.phase, cfg) for e, cfg, _, _ in top}
    assert all(cost <= tune.FAMILY_REACH * top[0][3] for *_, cost in more)
    assert any(e.phase == "9" and (cfg.bm, cfg.bn, cfg.split_k) == (64, 128, 1) for e, cfg, _, _ in more[3:])
    # every family within reach is there: none of the rows the model ranks in reach is of a family left out
    reach = [r for r in choose.explain("sm90", p.m, p.n, p.k) if r["cost"] <= tune.FAMILY_REACH * top[0][3]]
    assert {tune.family(r["phase"], r["config"]) for r in reach} <= {tune.family(e.phase, cfg) for e, cfg, _, _ in more} | {None}
    r = _cli("--shapes", "192,5120,27648", "--families", "--top", "3")
    assert r.returncode == 2 and "every family's cheapest" in r.stderr
    assert [line.split("us  ", 1)[1] for line in r.stdout.splitlines() if "model" in line] == [c[2] for c in more]


def test_explore_adds_the_untimed_configs_that_take_the_shape_and_best_never_picks_them():
    """--explore: after the model's candidates, every ``choose.EXPLORE`` config that takes the shape and its operands
    -- at a bf16-out prefill GEMM all eight (64-column slabs, 256 x 128 in 1 x 2, 2 x 2 on phases 6 and 8, phase 8 128
    wide, phase 7 with 4 staging buffers), then phase 8 in the width that fills its rounds where one does
    (``choose.fitted_width``: 176 at 2048 x 4096); with an fp32 C (dW) those a 16-bit C needs (epi_n=64, 256 x 128 at
    4 stages, 4 staging buffers) are left out. The model's own pick never is one."""
    bf16, fp32 = Operands.of("nt", "bf16", "bf16"), Operands.of("tn", "bf16", "fp32")
    p = Problem(2048, 4096, 4096)
    top = tune.candidates("sm90", p, 2, bf16)
    more = tune.candidates("sm90", p, 2, bf16, explore=True)
    assert more[:2] == top
    explored = [(e.phase, cfg) for e, cfg, _, _ in more[2:]]
    untimed = {(ph, registry.get("sm90", ph).configured(over)) for ph, over in choose.EXPLORE["sm90"]}
    fitted = ("8", registry.get("sm90", "8").configured(choose.fitted_width("sm90", p.m, p.n, p.k, bf16)))
    assert fitted[1].bn == 176 and len(explored) == len(untimed) + 1 == 9 and set(explored) == untimed | {fitted}
    assert all(e.make(cfg, bf16).can_implement(p.m, p.n, p.k) == [] for e, cfg, _, _ in more)
    dw = [cfg for e, cfg, _, _ in tune.candidates("sm90", Problem(4096, 4096, 2048), 2, fp32, explore=True)[2:]]
    assert dw and all(cfg.epi_n == 32 and cfg.bm == 128 and cfg.epi_stages == 2 for cfg in dw)
    for shape, ops in ((p, bf16), (Problem(4096, 4096, 2048), fp32), (Problem(1024, 11008, 4096), bf16)):
        row = choose.explain("sm90", shape.m, shape.n, shape.k, ops)[0]
        assert (row["phase"], row["config"]) not in untimed
    r = _cli("--shapes", "2048,4096,4096", "--layout", "nt", "--dtype", "bf16", "--out-dtype", "bf16", "--explore",
             "--top", "2")
    assert r.returncode == 2 and "the untimed configs" in r.stderr
    assert [line.split("us  ", 1)[1] for line in r.stdout.splitlines() if "model" in line] == [c[2] for c in more]


def test_an_explored_phase_6_config_is_timed_kept_and_an_untimed_one_says_why(table, monkeypatch):
    """The H200's first --explore (2026-12-05) printed "failed its check" for every phase 6 cluster config at every
    shape: their rows passed and were timed, but the candidates were read from phases 7-10 only, so none could be
    kept. Now phase 6's rows count, and a candidate without a time says why: its check failed, or the run's status
    and reason (an error, a skip) -- "not timed"."""
    ops = Operands.of("nt", "bf16", "bf16")
    p = Problem(2048, 4096, 4096)
    cands = tune.candidates("sm90", p, 2, ops, explore=True)
    six = [i for i, (e, _, _, _) in enumerate(cands) if e.phase == "6"]
    assert six, "the explore list has phase 6 cluster configs"
    times = [20.0] * len(cands)
    times[six[0]] = 15.0  # the fastest, past the margin: kept
    status = {six[-1]: ("failed", "wrong result: 3 mismatches"), 0: ("error", "could not capture a CUDA graph: x")}

    def fake(q, todo, peer_list=(), **kw):
        out = []
        for i, (e, cfg) in enumerate(todo):
            st, reason = status.get(i, ("ok", None))
            r = {"kind": "phase", "key": e.key, "name": e.key, "phase": e.phase, "config": e.overrides(cfg),
                 "shape": str(q), "m": q.m, "n": q.n, "k": q.k, "status": st, "reason": reason,
                 "operands": {"label": ops.label()}}
            if st == "ok":
                r["timing"] = {"ms_median": times[i] / 1e3}
            out.append(r)
        return {"date": "2026-12-05T12:00:00", "results": out}

    monkeypatch.setattr(tune, "time_candidates", fake)
    t, _ = tune.tune_shape("sm90", p, top=2, gpu=GPU, operands=ops, explore=True)
    e6, cfg6, label6, _ = cands[six[0]]
    assert t.kept == t.fastest == label6 and t.timed[label6] == 15.0
    assert tuned.lookup(GPU, "sm90", p.m, p.n, p.k, ops) == ("6", e6.overrides(cfg6))
    assert t.why == {cands[six[-1]][2]: "failed its check",
                     cands[0][2]: "not timed (error: could not capture a CUDA graph: x)"}
    assert tune.untimed_reason({"results": []}, "7", {}) == "not timed (no row in the run)"
