"""bench/sanitize.py and bench/stress.py without a GPU: report attribution on sanitizer logs built from the
documented compute-sanitizer formats (tests/fixtures/sanitizer_*_sample.log), verdicts, the run plan, the
summary table, the commands, and the stress script's schedule and memory verdicts. The GPU runs themselves
are the scripts; one small GPU test runs the stress end to end."""

import json
import os
import subprocess
import sys

import pytest

from bench_scripts import ROOT, load_script
from conftest import gpu_family
from cute_gemm.runtime import registry
from cute_gemm.cli.args import operands_of

FIX = os.path.join(ROOT, "tests", "fixtures")


san = load_script("sanitize")
stress = load_script("stress")
TORCH_FILL = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char *, 1>>"


def attribute(tool, keep=None):
    with open(os.path.join(FIX, f"sanitizer_{tool}_sample.log")) as f:
        return san.attribute_lines(f, san.our_markers(), keep)


# ------------------------------------------------------------------------------ attribution
def test_our_markers_name_every_phase_class():
    markers = san.our_markers()
    assert "kernel_cutlass_kernel_phases" in markers
    assert {e.kernel_cls.__name__ for e in registry.all_entries()} <= set(markers)


def test_initcheck_sample_attributed():
    att = attribute("initcheck")
    assert att.total == 4 and (att.ours, att.elsewhere) == (1, 3)
    assert att.elsewhere_by == {TORCH_FILL: 2, "host: API memory access": 1}
    assert att.first_ours[0] == "Uninitialized __global__ memory read of size 16 bytes"
    assert "Sm90Phase5" in att.first_ours[1] and att.first_ours[2].startswith("by thread (128,0,0)")
    assert att.notes == ["Warning: Detected overflow of tracked cuda::barrier structures. Results might be "
                         "incorrect. Try using --num-cuda-barriers to fix the issue"]


def test_racecheck_sample_attributed():
    att = attribute("racecheck")
    assert att.hazards == {"displayed": 2, "errors": 1, "warnings": 1}
    assert att.total == 2  # no ERROR SUMMARY: errors + warnings of the racecheck summary
    assert (att.ours, att.elsewhere) == (1, 1) and att.elsewhere_by == {"sumKernel": 1}
    assert att.first_ours[1].startswith("and Read access at kernel_cutlass")  # the race's other end kept with it


def test_synccheck_and_memcheck_samples_attributed():
    sync = attribute("synccheck")
    assert (sync.total, sync.ours) == (2, 0)
    assert sync.elsewhere_by == {"ThreadDivergence": 1, "host: the driver's exit status": 1}
    mem = attribute("memcheck")
    assert (mem.total, mem.ours, mem.elsewhere) == (2, 1, 1)
    assert mem.elsewhere_by == {"host: CUDA API error": 1}
    assert any("1 bytes after the nearest allocation" in ln for ln in mem.first_ours)  # indented "and ..." stays in


def test_kernel_name_forms():
    assert san.kernel_of(["Barrier error", "at unaligned_kernel():0x160 in memcheck_demo.cu:6"]) == "unaligned_kernel"
    assert san.kernel_of(["Uninitialized", "at 0x00000020 in test(int*, int*)"]) == "test"
    assert san.kernel_of(["Host API memory access error at host access to 0x7f00 of size 4 bytes"]) is None


def test_log_keeps_first_reports_and_the_summary(monkeypatch):
    monkeypatch.setattr(san, "KEEP_REPORTS", 1)
    kept = []
    att = attribute("initcheck", keep=kept.append)
    assert att.reports == 4  # all counted
    text = "\n".join(kept)
    assert "0x7f3c7ec000fc" in text and "Sm90Phase5" not in text  # only the first report kept
    assert "ERROR SUMMARY: 4 errors" in text and "3 more reports counted" in text
    assert not any(ln.startswith("#") for ln in kept)  # lines that are not the tool's are dropped


# ---------------------------------------------------------------------------------- verdicts
def _result(ok=True):
    return san.RESULT_TAG + json.dumps({"ok": ok, "mismatches": 0 if ok else 7, "nan": 0})


@pytest.mark.parametrize("tool,rc,out,status", [
    ("initcheck", 86, _result(), "ERRORS"),  # a report in ours
    ("synccheck", 86, _result(), "elsewhere only"),
    ("memcheck", None, "", "timeout"),
    ("synccheck", 1, "Traceback (most recent call last):\nRuntimeError: CUDA error", "failed"),
])
def test_verdicts_from_samples(tool, rc, out, status):
    run = san.finish(san.Run(tool, "5", "512,512,512"), attribute(tool), rc, out)
    assert run.status == status and run.bad == (status != "elsewhere only")
    if status == "failed":
        assert "RuntimeError: CUDA error" in run.reason


def test_verdicts_clean_wrong_c_unattributed():
    clean = san.Attribution(total=0)
    assert san.finish(san.Run("memcheck", "5", "8,8,8"), clean, 0, _result()).status == "clean"
    wrong = san.finish(san.Run("memcheck", "5", "8,8,8"), clean, 1, _result(ok=False))
    assert wrong.status == "failed" and "wrong C" in wrong.reason and wrong.bad
    lost = san.finish(san.Run("initcheck", "5", "8,8,8"), san.Attribution(total=196608), 86, _result())
    assert lost.status == "unattributed" and "196,608 errors" in lost.reason and lost.bad
    none = san.finish(san.Run("initcheck", "5", "8,8,8"), san.Attribution(), 0, _result())
    assert none.status == "failed" and "no summary" in none.reason


# ------------------------------------------------------------------------------ plan / commands
def test_plan_skips_shapes_a_phase_refuses():
    entries = registry.all_entries("sm90")
    runs = san.plan(entries, ["memcheck", "racecheck"], ["512,512,512", "1000x264x520"])
    assert len(runs) == 2 * len(entries) * 2
    assert [r.tool for r in runs[:2 * len(entries)]] == ["memcheck"] * (2 * len(entries))  # tools outermost
    for r in runs:
        why = registry.get("sm90", r.phase).make().can_implement(*map(int, r.shape.split(",")))
        assert (r.status == "skipped") == bool(why)
        if why:
            assert r.reason == "; ".join(why)
    assert runs[1].shape == "1000,264,520" and runs[1].stem == "memcheck_0_1000x264x520"


def test_plan_runs_configs_under_their_spec():
    """--config 10:...: the run is named by its spec, its stem is a plain file name, the driver gets the spec
    and a config that cannot do a shape is skipped by that config's own check (cluster_m=4 needs bn % 32)."""
    e10 = registry.get("sm90", "10")
    over = "bm=128,bn=128,bk=64,stages=7,cluster_m=4"
    runs = san.plan([], ["memcheck"], ["200,512,512", "8,8,9"], [(e10, over)])
    assert [r.phase for r in runs] == [f"10:{over}"] * 2
    assert runs[0].status == "not run" and runs[0].stem == "memcheck_10_bm_128_bn_128_bk_64_stages_7_cluster_m_4_200x512x512"
    assert runs[1].status == "skipped" and runs[1].reason == "; ".join(e10.make().can_implement(8, 8, 9))
    cmd = san.sanitizer_command("cs", runs[0], "l")
    assert cmd[cmd.index("--phase") + 1] == f"10:{over}"
    assert registry.split_spec(f"10:{over}") == ("10", over) and registry.split_spec("7") == ("7", None)


def test_plan_with_operands_takes_a_config_the_worklog_refuses_and_hands_them_to_the_driver():
    """--layout/--dtype/--out-dtype: phase 8's 5-stage ring fits only with a 16-bit C, so with the worklog's fp32 C
    every shape is skipped for the smem, and with a bf16 C it runs; the driver gets the operands as its options."""
    from phases.operands import Operands

    e8 = registry.get("sm90", "8")
    over = "stages=5,group_m=16,use_pdl=True"
    fp32 = san.plan([], ["memcheck"], ["1000,3000,520"], [(e8, over)])
    assert fp32[0].status == "skipped" and "smem" in fp32[0].reason.lower()
    ops = Operands.of("nt", "bf16", "bf16")
    bf16 = san.plan([], ["memcheck"], ["1000,3000,520"], [(e8, over)], ops)
    assert bf16[0].status == "not run" and bf16[0].operands == ("nt", "bf16", "bf16")
    cmd = san.sanitizer_command("cs", bf16[0], "l")
    assert cmd[cmd.index("--shape"):] == ["--shape", "1000,3000,520", "--layout", "nt", "--dtype", "bf16",
                                          "--out-dtype", "bf16"]
    assert "--layout" not in san.sanitizer_command("cs", fp32[0], "l")  # the worklog's: the driver's defaults
    args = san.build_parser().parse_args(["--driver", "--layout", "tn", "--dtype", "bf16", "--out-dtype", "fp16"])
    assert operands_of(args) == Operands.of("tn", "bf16", "fp16")
    assert operands_of(san.build_parser().parse_args([])).is_worklog
    # --config is checked with the run's operands (compiled on the host): refused with fp32, taken with bf16
    from cute_gemm.cli.args import UsageError
    from cute_gemm.cli.steps import buildable_variant

    assert buildable_variant(f"8:{over}", "sm90", ops) == (e8, over)
    with pytest.raises(UsageError, match="227 KiB"):
        buildable_variant(f"8:{over}", "sm90")


def test_stress_targets_and_tolerance_follow_the_operands():
    """stress --out-dtype bf16: a target is refused what its operands cannot take (phase 8's 5 stages with an fp32
    C), and a 16-bit C is compared within the check's tolerance for its type, not the fp32 one."""
    from cute_gemm.measure.check import tolerance
    from cute_gemm.runtime.problem import Problem
    from phases.operands import Operands

    e8 = registry.get("sm90", "8")
    ops = Operands.of("nt", "bf16", "bf16")
    over = "stages=5,group_m=16,use_pdl=True"
    assert stress.Target(e8, over).cannot(Problem(1000, 3000, 520))
    assert not stress.Target(e8, over, ops).cannot(Problem(1000, 3000, 520))
    assert tolerance(ops, 520).rtol > tolerance(Operands(), 520).rtol
    args = stress.build_parser().parse_args(["--layout", "nt", "--dtype", "bf16", "--out-dtype", "bf16"])
    assert operands_of(args) == ops


def test_sanitizer_command():
    run = san.Run("memcheck", "5", "512,512,512")
    cmd = san.sanitizer_command("/x/compute-sanitizer", run, "/o/l.log")
    j = " ".join(cmd)
    for part in ("--tool memcheck", "--log-file /o/l.log", "--print-limit 0", "--show-backtrace no", "--padding 4096",
                 "--driver --phase 5 --shape 512,512,512"):
        assert part in j, part
    assert "--kernel-name" not in j
    race = san.sanitizer_command("cs", san.Run("racecheck", "2b", "8,8,8"), "l", only_ours="Sm90Phase2b")
    assert race[race.index("--kernel-name") + 1] == "kns=Sm90Phase2b" and "--racecheck-report" in race


def test_summary_markdown():
    runs = san.plan([registry.get("sm90", "5")], ["initcheck", "racecheck"], ["512,512,512", "1000,3001,520"])
    san.finish(runs[0], attribute("initcheck"), 86, _result())
    san.finish(runs[2], attribute("racecheck"), 0, _result())
    md = san.summary_markdown(runs, "header line")
    lines = md.splitlines()
    assert lines[0] == "header line"
    assert "| phase | shape | initcheck | racecheck |" in lines
    assert "| 5 | 512x512x512 | 1 / 3 | 1 / 1 |" in lines
    assert "| 5 | 1000x3001x520 | skipped | skipped |" in lines
    assert f"  - elsewhere 2 x {TORCH_FILL}" in lines
    assert any(ln.startswith("  - first report in ours: Uninitialized __global__ memory read") for ln in lines)
    assert sum(ln.startswith("- skipped: phase 5 at 1000x3001x520: N=3001 is not a multiple") for ln in lines) == 1
    runs[1].status = "not run"
    assert "- not run: 1 runs (the --deadline came first)" in san.summary_markdown(runs)


def test_sanitize_refuses_a_config_its_phase_cannot_build(tmp_path):
    """A --config the phase rejects is said before the sanitizer or a GPU is looked for."""
    env = dict(os.environ, PATH="/nonexistent")
    proc = subprocess.run([sys.executable, "bench/sanitize.py", "--out", str(tmp_path / "o"), "--phases", "none",
                           "--config", "10:bn=48,cluster_m=4"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.startswith("sanitize: --config 10:bn=48,cluster_m=4: ")
    assert "bn=48: bn must split into 4 slices" in proc.stderr and "compute-sanitizer" not in proc.stderr


def test_sanitize_without_compute_sanitizer_is_one_line(tmp_path):
    env = dict(os.environ, PATH=str(tmp_path), PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, "bench/sanitize.py", "--out", str(tmp_path / "o")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.strip() == \
        "sanitize: compute-sanitizer is not on PATH (it ships with the CUDA toolkit)"
    bad = subprocess.run([sys.executable, "bench/sanitize.py", "--tools", "memcheck,leakcheck"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "unknown tool leakcheck" in bad.stderr


# ------------------------------------------------------------------------------------ stress
def test_schedule_alternates_streams_and_covers_shapes():
    shapes = ["A", "B", "C"]
    plan = stress.schedule(12, shapes)
    assert [s for s, _ in plan] == [0, 1] * 6
    assert {p for s, p in plan if s == 0} == set(shapes) == {p for s, p in plan if s == 1}
    assert all(plan[i] != plan[i + 1] for i in range(len(plan) - 1))


def test_checked_calls():
    assert [i for i in range(25) if stress.checked(i, 10, 25)] == [0, 10, 20, 24]
    assert all(stress.checked(i, 1, 5) for i in range(5))


def test_memory_problems():
    before = {"allocated": 1000, "device_used_mib": 2000.0, "device_source": "nvml"}
    assert stress.memory_problems(before, dict(before)) == []
    grew = stress.memory_problems(before, {"allocated": 1000 + (2 << 20), "device_used_mib": 2100.0,
                                           "device_source": "nvml"})
    assert grew == ["torch allocated memory grew by 2,097,152 bytes (tolerance 1,048,576)",
                    "device used memory grew by 100 MiB beyond torch's reserved pool (which grew by 0 MiB; "
                    "tolerance 64 MiB, nvml)"]
    # the concurrent streams' blocks in torch's reserved pool are torch's, not a leak; growth beyond them is
    pooled = {"allocated": 1000, "reserved": 200 << 20, "device_used_mib": 2000.0, "device_source": "nvml"}
    assert stress.memory_problems(pooled, {**pooled, "reserved": 300 << 20, "device_used_mib": 2106.0}) == []
    leak = stress.memory_problems(pooled, {**pooled, "reserved": 300 << 20, "device_used_mib": 2170.0})
    assert leak == ["device used memory grew by 70 MiB beyond torch's reserved pool (which grew by 100 MiB; "
                    "tolerance 64 MiB, nvml)"]
    assert stress.memory_problems({"allocated": 0, "device_used_mib": None}, {"allocated": 0, "device_used_mib": 5.0}) == []


def test_stress_defaults():
    args = stress.build_parser().parse_args(["--out", "x"])
    assert (args.calls, args.thread_calls, args.check_every) == (1000, 1000, 1)
    assert "1000,264,520" in args.shapes and len(args.shapes) == 4


@pytest.mark.skipif(gpu_family() is not None, reason="CPU-only behaviour")
def test_stress_without_gpu_exits_2(tmp_path):
    proc = subprocess.run([sys.executable, "bench/stress.py", "--out", str(tmp_path)], cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=ROOT), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "stress: needs an sm90 (Hopper) GPU, found none" in proc.stdout
    assert "needs an sm90" in (tmp_path / "stress.log").read_text()


def test_stress_targets_name_their_config():
    """A --config target is keyed by its spec, calls gemm with the config's own object and is refused a shape by
    that config's shape check."""
    e10 = registry.get("sm90", "10")
    plain, cm = stress.Target(e10), stress.Target(e10, "bm=128,bn=128,bk=64,stages=7,cluster_m=4")
    assert plain.key == "sm90:10" and plain.config is None
    assert cm.key == "sm90:10:bm=128,bn=128,bk=64,stages=7,cluster_m=4"
    assert (cm.config.cluster_m, cm.config.bm, cm.config.stages) == (4, 128, 7)
    from cute_gemm.runtime.problem import Problem
    assert cm.cannot(Problem(8, 8, 9)) == e10.make().can_implement(8, 8, 9) != []


def test_stress_refuses_a_config_its_phase_cannot_build(tmp_path):
    """A bad --config is said (exit 2) before a GPU is looked for."""
    proc = subprocess.run([sys.executable, "bench/stress.py", "--out", str(tmp_path), "--phases", "none",
                           "--config", "10:bn=48,cluster_m=4"], cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stdout.startswith("stress: --config 10:bn=48,cluster_m=4: ")
    assert "bn=48: bn must split into 4 slices" in proc.stdout and "GPU" not in proc.stdout


@pytest.mark.gpu
@pytest.mark.skipif(gpu_family() != "sm90", reason="needs an sm90 GPU")
def test_stress_small_run_on_gpu(tmp_path):
    rc = stress.main(["--out", str(tmp_path), "--phases", "5", "--calls", "24", "--thread-calls", "12",
                      "--shapes", "512,512,512", "1024,512,256", "--timeout", "120"])
    doc = json.loads((tmp_path / "stress.json").read_text())
    assert rc == 0, doc["problems"]
    assert doc["streams"][0]["checked"] == 24 and all(t["checked"] == 12 for t in doc["threads"]["threads"])
