"""The sm100 selftest without a Blackwell GPU: ``cute-gemm selftest``'s arguments and one-line refusals,
and the per-check subprocess logic (``cute_gemm.measure.selftest``) driven by a fake runner (pass, fail,
hang, crash, a check that raised)."""

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


def test_without_an_sm100_gpu_it_says_so_in_one_line(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert cli.main(["selftest", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("cute-gemm selftest: needs an sm100 GPU") and "this machine has" in err[0]
    assert not out.exists()


def test_a_hopper_is_refused_too(tmp_path):
    with pytest.raises(UnsupportedError, match="this machine has NVIDIA H200"):
        selftest.run(None, str(tmp_path / "r.json"), 7, "cute-gemm selftest",
                     gpu_check=lambda: (False, "NVIDIA H200 (compute capability 9.0)"))
    assert not (tmp_path / "r.json").exists()


def test_list_needs_no_gpu(capsys):
    assert cli.main(["selftest", "--list", "--phases", "0,7"]) == 0
    out = capsys.readouterr().out.splitlines()
    # phase 0, and phase 7 as taught and as phase="best" runs it (with programmatic dependent launch)
    assert len(out) == 3 * len(selftest.SHAPES)
    assert sum(line.startswith("sm100:7 use_pdl=True ") for line in out) == len(selftest.SHAPES)
    assert any(line.startswith("sm100:0") and "skip" in line and "1000x3000x520" in line for line in out)
    assert not any(line.startswith("sm100:7") and "skip" in line for line in out)


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


def test_cases_skip_what_a_phase_cannot_do():
    rows = selftest.cases(["0", "2a"])
    skips = {(k, str(p)) for k, p, _, skip in rows if skip}
    assert ("sm100:0", "1000x3000x520") in skips and ("sm100:0", "2048x2048x2048") not in skips
    assert not any(k == "sm100:2a" for k, _ in skips)


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


def test_run_writes_the_report(tmp_path, capsys):
    out = tmp_path / "sub" / "report.json"
    def runner(argv, timeout):
        if argv[1] == "sm100:5" and argv[2] == "300x264x40":
            raise subprocess.TimeoutExpired(argv, timeout)
        return _proc(stdout=_check(passed=argv[1] != "sm100:1"))

    code = selftest.run(["1", "5"], str(out), 300, "cute-gemm selftest --phases 1,5", runner=runner,
                        gpu_check=lambda: (True, "NVIDIA B200 (compute capability 10.0)"))
    assert code == 1
    rep = json.loads(out.read_text())
    by = {(r["phase"], r["shape"]): r for r in rep["results"]}
    assert by[("sm100:5", "300x264x40")]["status"] == "hang"
    assert by[("sm100:5", "1000x3000x520")]["status"] == "pass"
    assert by[("sm100:1", "1000x3000x520")]["status"] == "skip"
    assert by[("sm100:1", "2048x2048x2048")]["status"] == "fail"
    assert sum(rep["summary"].values()) == len(rep["results"]) == 2 * len(selftest.SHAPES)
    assert rep["command"].endswith("--phases 1,5") and rep["versions"]["cute_gemm"]
    assert "report:" in capsys.readouterr().out
