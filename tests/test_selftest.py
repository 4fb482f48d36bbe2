"""The selftest without a GPU: ``cute-gemm selftest``'s arguments and one-line refusals, the cases (the ladder and
every config class ``phase="best"`` can pick, on both arches), and the child-process logic (``cute_gemm.measure.
selftest``) driven by fake runners (pass, fail, hang, crash, a check that raised, a batch that hung halfway), the
JSON + markdown report and the short bench's rows."""

import json
import subprocess

import pytest

from cute_gemm import UnsupportedError, cli
from cute_gemm.measure import selftest


def _proc(stdout="", stderr="", code=0):
    return subprocess.CompletedProcess(["x"], code, stdout=stdout, stderr=stderr)


def _check(passed=True, error=None):
    return json.dumps({"key": "sm100:6", "shape": "1000x3000x520", "passed": passed, "unwritten": 0, "mismatches": 0,
                       "max_abs_err": 0.0, "rel_fro_err": 1e-7, "cublaslt_rel_fro_err": 1e-7,
                       "repeat_identical": True, "error": error})


def test_without_an_sm90_or_sm100_gpu_it_says_so_in_one_line(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert cli.main(["selftest", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("cute-gemm selftest: needs an sm90 or sm100 GPU"), err
    assert "this machine has" in err[0] and not out.exists()
    assert cli.main(["selftest", "--jobs", "0"]) == 2 and "--jobs must be at least 1" in capsys.readouterr().err


def test_another_gpu_is_refused_too(tmp_path):
    with pytest.raises(UnsupportedError, match="this machine has NVIDIA A100"):
        selftest.run(None, str(tmp_path / "r.json"), 7, "cute-gemm selftest",
                     gpu_check=lambda: (None, "NVIDIA A100 (compute capability 8.0)"))
    assert not (tmp_path / "r.json").exists()


def test_list_needs_no_gpu(capsys):
    assert cli.main(["selftest", "--list", "--phases", "0,7", "--arch", "sm100"]) == 0
    out = capsys.readouterr().out.splitlines()
    # phase 0 (aligned: tile multiples only), phase 7 as taught and as best runs it (PDL) on the ragged and the
    # stream-K shape, then best's phase 7 classes (bn=256 and bn=128 pair tiles)
    assert sum(line.startswith("sm100:0 ") and "2048x1024x512" in line for line in out) == 1
    assert sum(line.startswith("sm100:7 use_pdl=True ") for line in out) == 3
    assert sum("best's class 7" in line for line in out) == 2 and len(out) == 7
    assert not any("skip" in line for line in out)
    assert cli.main(["selftest", "--list", "--phases", "10", "--arch", "sm90"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("sm90:10 ") and sum("best's class 10" in line for line in out) >= 30


def test_the_child_checks_a_variant_config(monkeypatch, capsys):
    """``--one "sm100:7 use_pdl=True" MxNxK`` checks phase 7 with that config (what best runs on sm100)."""
    import cute_gemm.measure.check as check

    seen = []

    def fake_check(entry, p, config=None, **kw):
        seen.append((entry.key, str(p), config))
        return check.CheckResult(key=entry.key, shape=str(p), passed=True, unwritten=0, mismatches=0,
                                 max_abs_err=0.0, rel_fro_err=0.0, cublaslt_rel_fro_err=0.0)

    monkeypatch.setattr(check, "check_phase", fake_check)
    assert selftest.main([selftest.CHILD_FLAG, "sm100:7 use_pdl=True", "300x264x40"]) == 0
    assert seen[0][:2] == ("sm100:7", "300x264x40") and seen[0][2].use_pdl is True
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["passed"] is True
    assert selftest.main([selftest.CHILD_FLAG, "sm100:7", "300x264x40"]) == 0 and seen[1][2] is None


def test_the_child_needs_key_and_shape(capsys):
    assert selftest.main([selftest.CHILD_FLAG, "sm100:6"]) == 2
    assert "usage: python -m cute_gemm.measure.selftest --one KEY MxNxK" in capsys.readouterr().err


def test_cases_take_the_ragged_shape_where_the_phase_can():
    rows = {(k, str(p)) for k, p, _, skip, _ in selftest.cases(["0", "2a"], best=False) if not skip}
    assert rows == {("sm100:0", "2048x1024x512"), ("sm100:2a", "1000x3000x520")}
    skipped = [k for k, p, _, skip, _ in selftest.cases(["0"], shapes=(selftest.RAGGED,), best=False) if skip]
    assert skipped == ["sm100:0"]  # no aligned shape to fall back on: skipped with its reason


@pytest.mark.parametrize("arch", ["sm90", "sm100"])
def test_best_cases_hold_every_class_best_picks(arch):
    """The classes of best's picks at 1,200 random shapes (every operands combination) are all among the selftest's
    cases; each case's config is one ``explain`` offers at its shape with its operands; every C dtype is met."""
    import random

    from cute_gemm.runtime import choose, registry
    from test_best_picks_build import ALL_OPERANDS, _shape

    cases = selftest.best_cases(arch)
    have = set()
    for key, p, note, skip, ops_text in cases:
        entry = registry.resolve(key.split(" ")[0], arch)
        cfg = entry.configured(key.partition(" ")[2] or None)
        have.add(selftest.config_class(entry.phase, cfg))
        offered = [r["config"] for r in choose.explain(arch, p.m, p.n, p.k, selftest.operands_of(ops_text))]
        assert cfg in offered, (key, p, ops_text)
    assert len(have) == len(cases)
    assert {ops.split(":")[2] for *_, ops in cases if ops} == {"fp32", "fp16", "bf16"}
    rng = random.Random(48)
    for i in range(1200):
        ops = ALL_OPERANDS[i % len(ALL_OPERANDS)]
        m, n, k = _shape(rng, ops)
        phase, cfg = choose.pick(arch, m, n, k, ops)
        cls = selftest.config_class(phase, cfg or registry.get(arch, phase).default_config())
        assert cls in have, (m, n, k, ops.label(), phase, cfg)


@pytest.mark.parametrize("proc,status,error", [
    (_proc(stdout="compiling...\n" + _check()), "pass", None),
    (_proc(stdout=_check(passed=False)), "fail", None),
    (_proc(stdout=_check(passed=False, error="RuntimeError: launch failed")), "error", "launch failed"),
    (_proc(stderr="Traceback...\nCUDA error: an illegal memory access", code=1), "error", "illegal memory access"),
    (_proc(stdout="not json", code=0), "error", "exit status 0"),
])
def test_run_case(proc, status, error):
    seen = []

    def runner(argv, timeout):
        seen.append((argv, timeout))
        return proc

    row = selftest.run_case("sm100:6", selftest.Problem(1000, 3000, 520), 7, runner)
    assert row["status"] == status and seen == [([selftest.CHILD_FLAG, "sm100:6", "1000x3000x520"], 7)]
    assert (error is None and row["error"] is None) or error in row["error"]
    assert (row["check"] is not None) == (status in ("pass", "fail") or "launch failed" in (error or ""))


def test_a_hang_is_reported_not_waited_on():
    def runner(argv, timeout):
        raise subprocess.TimeoutExpired(argv, timeout)

    row = selftest.run_case("sm100:4", selftest.Problem(300, 264, 40), 3, runner)
    assert row["status"] == "hang" and "3 s" in row["error"]


def test_a_batch_that_hangs_halfway_keeps_what_finished():
    """A batch child killed on its timeout: the checks it printed count, the next is the hang, the rest not run."""
    def runner(argv, timeout):
        assert argv[0] == selftest.MANY_FLAG and len(argv) == 4 and argv[1] == "sm100:9|300x264x40|nt:bf16:bf16"
        raise subprocess.TimeoutExpired(argv, timeout, output=(json.dumps({"index": 0, **json.loads(_check())})
                                                               + "\n").encode())

    batch = [("sm100:9", selftest.Problem(300, 264, 40), "nt:bf16:bf16"),
             ("sm100:9 split_k=4", selftest.Problem(1000, 3000, 520), ""),
             ("sm100:9", selftest.Problem(1, 8, 8), "")]
    rows = selftest.run_batch(batch, 9, runner)
    assert [r["status"] for r in rows] == ["pass", "hang", "error"]
    assert "9 s" in rows[1]["error"] and "not run" in rows[2]["error"] and rows[0]["operands"] == "nt:bf16:bf16"


def test_a_batch_child_that_died_reports_each_check():
    rows = selftest.run_batch([("sm100:6", selftest.Problem(1, 8, 8), "")], 9,
                              lambda argv, t: _proc(stderr="Segmentation fault", code=139))
    assert rows[0]["status"] == "error" and "exit status 139: Segmentation fault" in rows[0]["error"]


def test_the_many_child_runs_each_check_and_goes_on_after_one_raised(monkeypatch, capsys):
    import cute_gemm.measure.check as check

    def fake_check(entry, p, config=None, operands=None, **kw):
        if p.m == 1:
            raise RuntimeError("CUDA error: an illegal memory access")
        return check.CheckResult(key=entry.key, shape=str(p), passed=True, unwritten=0, mismatches=0,
                                 max_abs_err=0.0, rel_fro_err=0.0, cublaslt_rel_fro_err=0.0)

    monkeypatch.setattr(check, "check_phase", fake_check)
    assert selftest.main([selftest.MANY_FLAG, "sm100:10 split_k=4|1x8x8|", "sm90:10 bn=24|13x2056x6152|nt:bf16:bf16"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert lines[0]["index"] == 0 and "illegal memory access" in lines[0]["error"]
    assert lines[1]["index"] == 1 and lines[1]["passed"] and lines[1]["key"] == "sm90:10"


def test_run_writes_the_report(tmp_path, capsys):
    out = tmp_path / "sub" / "report.json"
    seen = []

    def runner(argv, timeout):
        assert argv[0] == selftest.MANY_FLAG
        specs = [a.split("|") for a in argv[1:]]
        seen.extend(specs)
        lines = []
        for i, (key, shape, ops) in enumerate(specs):
            if key == "sm100:5" and shape == "1000x3000x520":
                raise subprocess.TimeoutExpired(argv, timeout, output="\n".join(lines))
            lines.append(json.dumps({"index": i, **json.loads(_check(passed=key != "sm100:1"))}))
        return _proc(stdout="\n".join(lines))

    def bench_runner(argv, timeout):
        assert "--best" in argv and "cublaslt" in argv and argv[argv.index("--arch") + 1] == "sm100"
        rows = [{"key": "best", "name": "best", "label": "best (10 split_k=4 unfitted)", "shape": "16x4096x4096",
                 "status": "ok", "model": "unfitted", "timing": {"ms_median": 0.01, "tflops": 50.0}},
                {"key": "peer:cublaslt", "name": "cublaslt", "label": "cuBLASLt", "shape": "16x4096x4096",
                 "status": "ok", "timing": {"ms_median": 0.012, "tflops": 42.0}},
                {"key": "sm100:7", "name": "7", "label": "phase 7", "shape": "16x4096x4096", "status": "ok"}]
        with open(argv[-1], "w") as f:
            json.dump({"results": rows}, f)
        return _proc()

    code = selftest.run(["1", "5", "9"], str(out), 300, "cute-gemm selftest --phases 1,5,9", runner=runner,
                        gpu_check=lambda: ("sm100", "NVIDIA B200 (compute capability 10.0)"), jobs=2,
                        bench_runner=bench_runner)
    assert code == 1
    rep = json.loads(out.read_text())
    by = {(r["phase"], r["shape"]): r for r in rep["results"]}
    assert by[("sm100:5", "1000x3000x520")]["status"] == "hang"
    assert by[("sm100:1", "2048x1024x512")]["status"] == "fail"
    assert by[("sm100:9", "1000x3000x520")]["status"] == "pass"
    assert any(r["note"].startswith("best's class 9") and r["status"] == "pass" for r in rep["results"])
    assert sum(rep["summary"].values()) == len(rep["results"]) == len(seen)
    assert rep["arch"] == "sm100" and rep["seconds"] is not None
    assert rep["command"].endswith("--phases 1,5,9") and rep["versions"]["cute_gemm"]
    assert [b["name"] for b in rep["bench"]["rows"]] == ["best", "cublaslt"] and rep["bench"]["status"] == "ok"
    md = (tmp_path / "sub" / "report.md").read_text()
    assert md.startswith("# cute-gemm selftest: sm100 on ") and "## Not passing" in md and "| sm100:5 | 1000x3000x520" in md
    assert "best (10 split_k=4 unfitted)" in md and "## Short bench (ok" in md
    assert "report:" in capsys.readouterr().out


# ------------------------------------------------------------------------------- phase 11: the fused epilogue
def _epilogue_cases(arch):
    return [(k, p, ops) for k, p, _, skip, ops in selftest.cases(["11"], arch=arch, best=False) if not skip]


@pytest.mark.parametrize("arch", ["sm90", "sm100"])
def test_phase_11_joins_with_one_fused_config_per_epilogue_kind(arch):
    """Phase 11's default (phase 10's kernel) and one fused config per kind -- the bias, each activation, the
    residual, gated pairs -- and bias + gelu + residual together, also as a bf16 nn.Linear layer runs them; none skipped at the ragged shape."""
    from cute_gemm.runtime import registry

    cases = _epilogue_cases(arch)
    assert len(cases) == len(selftest.cases(["11"], arch=arch, best=False)) == 2 + len(selftest.EPILOGUE_VARIANTS)
    entry = registry.get(arch, "11")
    cfgs = [(entry.configured(k.partition(" ")[2] or None), ops) for k, _, ops in cases]
    assert not cfgs[0][0].epilogue_active() and all(c.epilogue_active() for c, _ in cfgs[1:])
    assert {c.activation for c, _ in cfgs} == {"none", "relu", "gelu", "silu"}
    assert any(c.bias and c.activation == "none" and not c.residual for c, _ in cfgs)  # each term alone
    assert any(c.residual and c.activation == "none" and not c.bias for c, _ in cfgs)
    assert {ops for c, ops in cfgs if c.bias and c.residual} == {"", "nt:bf16:bf16"}
    assert [c.activation for c, _ in cfgs if c.gated] == ["silu"]  # SwiGLU's pairs: C [M, N / 2]
    shapes = {str(p) for _, p, _ in cases}
    assert shapes == {"1000x3000x520", "1000x3024x520"}  # gated: N a multiple of 16 (C has N / 2 columns)
    assert [str(p) for k, p, _ in cases if "gated" in k] == ["1000x3024x520"]


def test_a_plain_phase_with_the_fields_runs_the_full_epilogue():
    """The persistent phases whose configs carry the epilogue's fields (sm90 6, 7 and 8, sm100 6): the selftest runs
    their full epilogue; a phase without them gets nothing."""
    keys = list(dict.fromkeys(k for k, *_ in selftest.cases(["6", "7", "8", "10"], arch="sm90", best=False)))
    full = selftest.EPILOGUE_VARIANTS[-1]
    assert keys == ["sm90:6", f"sm90:6 {full}", "sm90:7", f"sm90:7 {full}", "sm90:8", f"sm90:8 {full}", "sm90:10"]
    keys = list(dict.fromkeys(k for k, *_ in selftest.cases(["6"], arch="sm100", best=False)))
    assert keys == ["sm100:6", "sm100:6 use_pdl=True", f"sm100:6 {full}"]  # besides best's PDL variant


def test_the_child_checks_an_epilogue_config_with_its_tensors(monkeypatch, capsys):
    """A key with the epilogue on goes to ``check_epilogue`` (bias and residual made and passed), one without to
    ``check_phase`` as before."""
    import cute_gemm.measure.check as check

    seen = []

    def fake(kind):
        def run(entry, p, config=None, operands=None, **kw):
            seen.append((kind, entry.key, config))
            return check.CheckResult(key=entry.key, shape=str(p), passed=True, unwritten=0, mismatches=0,
                                     max_abs_err=0.0, rel_fro_err=0.0, cublaslt_rel_fro_err=0.0)
        return run

    monkeypatch.setattr(check, "check_phase", fake("plain"))
    monkeypatch.setattr(selftest, "check_epilogue", fake("epilogue"))
    assert selftest.main([selftest.CHILD_FLAG, "sm90:11 bias=True,activation=gelu", "1000x3000x520"]) == 0
    assert selftest.main([selftest.CHILD_FLAG, "sm100:11", "1000x3000x520"]) == 0
    assert selftest.main([selftest.CHILD_FLAG, "sm100:11 split_k=4", "1000x3000x520"]) == 0
    (k1, key1, cfg1), (k2, _, cfg2), (k3, _, cfg3) = seen
    assert (k1, key1, cfg1.bias, cfg1.activation, cfg1.residual) == ("epilogue", "sm90:11", True, "gelu", False)
    assert (k2, cfg2, k3, cfg3.split_k) == ("plain", None, "plain", 4)
    assert all(json.loads(line)["passed"] for line in capsys.readouterr().out.splitlines())


def _stand_in(wrong=None):
    """A CPU stand-in for the compiled kernel: the epilogue by torch ops in fp32, rounded once -- or one mistake."""
    import torch

    def launch(a, b, c, extras):
        cfg = launch.cfg
        it = iter(extras)
        bias = next(it) if cfg.bias else None
        residual = next(it) if cfg.residual else None
        z = a.float() @ b.float()
        if wrong == "bias after the activation":
            y = selftest.epilogue_reference(z, None, cfg.activation, None) + bias.float()
            y = y + residual.float() if residual is not None else y
        elif wrong == "residual before the activation":
            y = selftest.epilogue_reference(z + residual.float(), bias, cfg.activation, None)
        elif wrong == "no activation":
            y = selftest.epilogue_reference(z, bias, "none", residual, cfg.gated)
        elif wrong == "gate and up swapped":
            y = selftest.epilogue_reference(z[:, [j ^ 1 for j in range(z.shape[1])]], bias, cfg.activation, residual,
                                            True)
        else:
            y = selftest.epilogue_reference(z, bias, cfg.activation, residual, cfg.gated)
        if wrong == "a row unwritten":
            y[-1] = float("nan")
        if wrong == "not repeatable":
            launch.calls = getattr(launch, "calls", 0) + 1
            y = y * (1 + 0.05 * (launch.calls - 1))  # the first launch right, the repeat not
        c.copy_(y.to(c.dtype))
    return launch


@pytest.mark.parametrize("over,ops", [("bias=True,activation=gelu,residual=True", ""), ("activation=silu", ""),
                                      ("activation=relu,residual=True", "nt:bf16:bf16"), ("bias=True", "tn:fp16:fp16"),
                                      ("activation=silu,gated=True", ""),
                                      ("bias=True,activation=gelu,gated=True,residual=True", "nt:fp16:fp32")])
def test_check_epilogue_passes_the_epilogue_and_fails_each_mistake(over, ops, monkeypatch):
    """``check_epilogue`` on the CPU with a stand-in launch (cuBLASLt's product replaced by torch's fp32 product):
    the right math passes with the tanh allowance; the bias after the activation, the residual before it, no
    activation, an unwritten row, a repeat that differs and (gated) swapped gate and up each fail."""
    import torch

    from cute_gemm.measure import reference
    from cute_gemm.runtime import registry
    from cute_gemm.runtime.problem import Problem

    monkeypatch.setattr(reference, "cublaslt", lambda a, b, dtype=None: (a.float() @ b.float()).to(dtype))
    entry = registry.get("sm90", "11")
    cfg = entry.configured(over)
    p = Problem(100, 264, 72)
    mistakes = ["a row unwritten", "not repeatable"]
    mistakes += ["bias after the activation"] if cfg.bias and cfg.activation != "none" and not cfg.gated else []
    mistakes += ["residual before the activation"] if cfg.residual and cfg.activation != "none" and not cfg.gated else []
    mistakes += ["no activation"] if cfg.activation != "none" else []
    mistakes += ["gate and up swapped"] if cfg.gated else []
    for wrong in [None, *mistakes]:
        launch = _stand_in(wrong)
        launch.cfg = cfg
        res = selftest.check_epilogue(entry, p, cfg, selftest.operands_of(ops), device="cpu", seed=3,
                                      launch_for=launch)
        assert res.passed == (wrong is None), (wrong, res.summary())
        if wrong != "a row unwritten":  # (NaN is never equal to itself: such a C never repeats bit for bit)
            assert res.repeat_identical == (wrong != "not repeatable")
        assert res.error is None and res.operands == selftest.operands_of(ops).label()
    assert torch.isfinite(torch.tensor(res.rel_fro_err))


def test_check_epilogue_reports_a_launch_that_raised():
    from cute_gemm.runtime import registry
    from cute_gemm.runtime.problem import Problem

    def boom(a, b, c, extras):
        raise RuntimeError("CUDA error: an illegal memory access")

    entry = registry.get("sm100", "11")
    res = selftest.check_epilogue(entry, Problem(16, 64, 64), entry.configured("bias=True"), device="cpu",
                                  launch_for=boom)
    assert not res.passed and res.error == "RuntimeError: CUDA error: an illegal memory access"


@pytest.mark.parametrize("arch", ["sm90", "sm100"])
def test_phase_11_cases_compile(arch, tmp_path, monkeypatch):
    """The compile-only part of phase 11's checks, without a GPU: every case's config and operands compile."""
    import cute_gemm

    monkeypatch.setenv("CUTE_GEMM_CACHE_DIR", str(tmp_path))
    for key, p, ops in _epilogue_cases(arch):
        plan = cute_gemm.compile_only("11", key.partition(" ")[2] or None, arch, *(ops or "nn:fp16:fp32").split(":"))
        assert plan.kernel.can_implement(p.m, p.n, p.k) == [], key


@pytest.mark.parametrize("arch", ["sm90", "sm100"])
def test_best_epilogue_cases_hold_every_class_best_picks_with_an_epilogue(arch):
    """best with a fused epilogue (phase 10's rows as phase 11, the persistent phases' with their fields): its picks
    at 600 random shapes (every operands combination) fall in the classes the selftest checks; each case's config is
    one best would run at its shape with its operands, the epilogue on; phase 11 and a persistent phase are among them."""
    import random

    from cute_gemm.runtime import choose, registry
    from test_best_picks_build import ALL_OPERANDS, _shape

    cases = selftest.best_epilogue_cases(arch)
    have = set()
    for key, p, note, skip, ops_text in cases:
        entry = registry.resolve(key.split(" ")[0], arch)
        cfg = entry.configured(key.partition(" ")[2])
        assert (cfg.bias, cfg.activation, cfg.residual) == (True, "gelu", True) and note.startswith("best's epilogue")
        have.add(selftest.config_class(entry.phase, cfg))
        ops = selftest.operands_of(ops_text)
        rows = [*choose.explain(arch, p.m, p.n, p.k, ops), *choose.phase10_rows(arch, p.m, p.n, p.k, ops)]
        runs = [choose._epilogue_row(arch, r["phase"], r["config"], p.m, p.n, p.k, ops, **selftest.BEST_EPILOGUE)
                for r in rows]
        assert (entry.phase, cfg) in runs, (key, p, ops_text)
    assert len(have) == len(cases) and {"11", {"sm90": "8", "sm100": "6"}[arch]} <= {c[0] for c in have}
    rng = random.Random(47)
    for i in range(600):
        ops = ALL_OPERANDS[i % len(ALL_OPERANDS)]
        m, n, k = _shape(rng, ops)
        phase, cfg = choose.pick_epilogue(arch, m, n, k, ops, **selftest.BEST_EPILOGUE)
        assert selftest.config_class(phase, cfg) in have, (m, n, k, ops.label(), phase, cfg)


@pytest.mark.parametrize("arch", ["sm90", "sm100"])
def test_a_sample_of_best_epilogue_cases_compiles(arch, tmp_path, monkeypatch):
    """The compile-only part of best's epilogue classes, without a GPU: one case per (phase, split) compiles with its
    operands (the whole set runs on a GPU: ``cute-gemm selftest``)."""
    import cute_gemm
    from cute_gemm.runtime import registry

    monkeypatch.setenv("CUTE_GEMM_CACHE_DIR", str(tmp_path))
    sample = {}
    for key, p, _, _, ops in selftest.best_epilogue_cases(arch):
        phase, over = key.split(" ")[0].split(":")[1], key.partition(" ")[2]
        cfg = registry.get(arch, phase).configured(over)
        sample.setdefault((phase, getattr(cfg, "split_k", None)), (phase, over, p, ops))
    assert len(sample) >= 4
    for phase, over, p, ops in sample.values():
        plan = cute_gemm.compile_only(phase, over, arch, *(ops or "nn:fp16:fp32").split(":"))
        assert plan.kernel.cfg.epilogue_active() and plan.kernel.can_implement(p.m, p.n, p.k) == []
