"""`cute-gemm profile` without a GPU: the recorded H200 ncu outputs parsed (raw CSV page of one cuBLAS kernel
at 1024^3, `ncu --query-metrics --chip gh100`), the metric-existence check, the error paths (no ncu, no GPU,
ncu failing, ncu hanging), the table, deltas, the 'moved most' logic and the JSON round trip. A fake `ncu`
(a shell script replaying the recorded outputs) stands in for the real one. One GPU test runs the real thing."""

import copy
import gzip
import json
import os
import shutil
import stat
import subprocess
import sys

import pytest

from conftest import gpu_family
from cute_gemm.profiling import ncu_metrics as nm
from cute_gemm.profiling import ncu as pr
from cute_gemm.report import tables
from cute_gemm.runtime import registry

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(ROOT, "tests", "fixtures")
RAW_CSV = os.path.join(FIX, "ncu_raw_h200_cublas_1024.csv.gz")
QUERY = os.path.join(FIX, "ncu_query_gh100.txt.gz")
BANK_CONFLICTS = ["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                  "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"]


def recorded_csv() -> str:
    with gzip.open(RAW_CSV, "rt") as f:
        return f.read()


def recorded_query() -> set:
    with gzip.open(QUERY, "rt") as f:
        return nm.parse_query_metrics(f.read())


@pytest.fixture(scope="module")
def cublas_row():
    (row,) = nm.parse_raw_csv(recorded_csv())
    return row


@pytest.fixture
def cublas_kernel(cublas_row):
    return pr.kernel_record(pr.peer_target("cublas"), cublas_row, nm.all_metrics())


# ------------------------------------------------------------------------------- recorded CSV
def test_recorded_csv_identity_and_columns(cublas_row):
    assert cublas_row.id == 0
    assert cublas_row.name == "nvjet_sm90_hss_128x64_64x8_1x2_h_bz_NNT"
    assert (cublas_row.block, cublas_row.grid) == ("(384, 1, 1)", "(2, 64, 1)")
    v = nm.column_values(cublas_row)
    assert v["duration"] == 7712.0  # "7,712" ns: thousands separator removed
    assert v["registers"] == 168
    assert v["cycles"] == 13760
    assert v["sm_clock"] == pytest.approx(1.77582015041e9)
    assert v["tensor_pipe"] == 29.0 and v["shared_pipe"] == 29.0
    assert v["gmma_issue"] == 5.24
    assert v["occupancy"] == 13.54
    assert v["smem"] == 213284 + 0  # dynamic + static
    assert (v["dram"], v["l2"], v["l2_hit"]) == (11.45, 32.89, 75.79)


def test_recorded_csv_stalls(cublas_row):
    ratios = nm.stall_ratios(cublas_row)
    assert set(ratios) == set(nm.STALL_REASONS)
    shares = nm.stall_shares(ratios)
    assert [r for r, _ in shares[:3]] == ["long_scoreboard", "wait", "no_instruction"]
    assert shares[0][1] == pytest.approx(5.40 / sum(ratios.values()))
    assert sum(s for _, s in shares) == pytest.approx(1.0)


def test_bank_conflicts_absent_from_recording_are_named_and_shown_na(cublas_row, cublas_kernel):
    # the recording used sections without the shared-memory tables: only the two bank-conflict counters lack
    assert nm.missing_in_row(cublas_row, nm.all_metrics()) == BANK_CONFLICTS
    assert cublas_kernel["values"]["conflicts_ld"] is None and cublas_kernel["values"]["conflicts_st"] is None
    table = tables.render_table([cublas_kernel])
    # the shared pipe row equals the tensor pipe row here, and the table says why
    assert cublas_kernel["values"]["shared_pipe"] == cublas_kernel["values"]["tensor_pipe"]
    assert "shared pipe: the pipe FP16 and tensor instructions share" in table
    assert [ln.split()[-1] for ln in table.splitlines() if ln.startswith("smem bank conflicts")] == ["n/a", "n/a"]


def test_csv_preamble_trailing_lines_and_scaled_units():
    text = "\n".join([
        "==PROF== Connected to process 1 (/usr/bin/python3)",
        "some application output",
        '"ID","Kernel Name","Block Size","Grid Size","gpu__time_duration.sum","gpc__cycles_elapsed.avg.per_second",'
        '"launch__shared_mem_per_block_dynamic","lts__throughput.avg.pct_of_peak_sustained_elapsed"',
        '"","","","","us","Ghz","Kbyte/block","%"',
        '"3","k_b","(128, 1, 1)","(4, 1, 1)","1,234.5","1.50","2.5","n/a"',
        '"1","k_a","(128, 1, 1)","(4, 1, 1)","7.712","1.98","200","50"',
        "==PROF== Disconnected from process 1",
    ])
    a, b = nm.parse_raw_csv(text)
    assert (a.id, a.name, b.id, b.name) == (1, "k_a", 3, "k_b")  # ordered by ID
    assert b.value("gpu__time_duration.sum") == pytest.approx(1234500.0)  # us -> ns
    assert b.value("gpc__cycles_elapsed.avg.per_second") == pytest.approx(1.5e9)  # Ghz -> hz
    assert b.metrics["launch__shared_mem_per_block_dynamic"] == (2500.0, "byte/block")
    assert b.value("lts__throughput.avg.pct_of_peak_sustained_elapsed") is None  # "n/a"
    assert nm.parse_raw_csv("==PROF== nothing here\n") == []


def test_to_base_units():
    assert nm.to_base(2.0, "msecond") == (2e6, "ns")
    assert nm.to_base(3.0, "cycle/nsecond") == (3e9, "hz")
    assert nm.to_base(4.0, "Mbyte/s") == (4e6, "byte/s")
    assert nm.to_base(5.0, "register/thread") == (5.0, "register/thread")


# ------------------------------------------------------------------------------- metric check
def test_every_metric_exists_in_recorded_query_and_made_up_is_named():
    avail = recorded_query()
    assert {"gpu__time_duration", "gpc__cycles_elapsed", "lts__throughput", "gpu__dram_throughput",
            "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active"} <= avail
    assert "CTC.TriageCompute.ctc__rx_bytes" not in avail and "ctc__rx_bytes" in avail  # prefix dropped
    assert nm.missing_metrics(nm.all_metrics(), avail) == []
    made_up = "sm__pipe_imaginary_cycles_active.avg.pct_of_peak_sustained_elapsed"
    assert nm.missing_metrics([*nm.all_metrics(), made_up], avail) == [made_up]


def test_split_metrics_leaves_launch_stats_to_their_section():
    ask, missing = pr.split_metrics(["launch__registers_per_thread", "gpu__time_duration.sum", "foo__bar.sum"],
                                    recorded_query())
    assert ask == ["gpu__time_duration.sum"] and missing == ["foo__bar.sum"]


def test_ncu_command_leaves_clocks_and_caches_alone():
    cmd = pr.ncu_command("ncu", [pr.peer_target("cublas")], "512,512,512", ["gpu__time_duration.sum"],
                         launch_stats=True, warmup=3)
    joined = " ".join(cmd)
    for flag in ("--csv --page raw", "--clock-control none", "--cache-control none", "--profile-from-start off",
                 "--section LaunchStats", "--metrics gpu__time_duration.sum", "-m cute_gemm.profiling.driver",
                 "--targets cublas", "--shape 512,512,512", "--warmup 3"):
        assert flag in joined, flag


# ----------------------------------------------------------------------------- row assignment
def _row(i, name):
    return nm.KernelRow(i, name, "", "", {"gpu__time_duration.sum": (float(i + 1), "ns")})


def test_assign_rows_in_launch_order():
    p5, p6 = registry.get("sm90", "5"), registry.get("sm90", "6")
    rows = [_row(0, "distribution_elementwise_grid_stride_kernel"),
            _row(1, "kernel_cutlass_kernel_phasessm90phase5_tma_storeSm90Phase5_object_at__x_0"),
            _row(2, "nvjet_sm90_hss_128x64_64x8_1x2_h_bz_NNT"),
            _row(3, "splitKreduce_kernel")]
    targets = [pr.phase_target(p5), pr.phase_target(p6), pr.peer_target("cublas")]
    taken, others = pr.assign_rows(rows, targets)
    assert taken["sm90:5"].id == 1 and taken["cublas"].id == 2 and "sm90:6" not in taken
    assert others == ["distribution_elementwise_grid_stride_kernel", "splitKreduce_kernel"]
    # a phase's pattern does not take a longer class name (Sm90Phase2 is not Sm90Phase2a's)
    assert not pr.assign_rows([_row(0, "xSm90Phase2a_object")], [pr.Target("x", r"Sm90Phase2(?![0-9A-Za-z])")])[0]


def test_phase_targets_match_their_own_kernel_names_only():
    names = {e.key: f"kernel_cutlass_kernel_phases{e.kernel_cls.__name__}_object_at__0"
             for e in registry.all_entries("sm90")}
    for e in registry.all_entries("sm90"):
        rows = [_row(i, n) for i, n in enumerate(names.values())]
        taken, _ = pr.assign_rows(rows, [pr.phase_target(e)])
        assert taken[e.key].name == names[e.key]


# ------------------------------------------------------------------------------- fake ncu / CLI
def fake_ncu(tmp_path, profile_script: str) -> str:
    """A directory holding an `ncu` that answers --version and --query-metrics from the recordings and
    runs ``profile_script`` (shell) for anything else."""
    d = tmp_path / "bin"
    d.mkdir(parents=True)
    (tmp_path / "raw.csv").write_text(recorded_csv())
    ncu = d / "ncu"
    ncu.write_text(f"""#!/bin/sh
case "$*" in
  *--version*) echo "NVIDIA (R) Nsight Compute Command Line Profiler"; echo "Version 2025.3.1.0 (build 1) (public-release)";;
  *--query-metrics*) gzip -dc '{QUERY}';;
  *) {profile_script};;
esac
""")
    ncu.chmod(ncu.stat().st_mode | stat.S_IEXEC)
    return str(d)


def run_module(*args, path):
    env = dict(os.environ, PATH=path, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-m", "cute_gemm", "profile", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def test_no_ncu_on_path_is_one_line_and_nonzero(tmp_path):
    proc = run_module("--phase", "5", path=str(tmp_path))
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert "ncu (Nsight Compute) is not on PATH" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.skipif(gpu_family() is not None, reason="CPU-only behaviour")
def test_ncu_but_no_gpu_is_one_line_and_nonzero(tmp_path):
    d = fake_ncu(tmp_path, "exit 0")
    proc = run_module("--phase", "5", path=d + os.pathsep + "/usr/bin:/bin")
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert "needs a Hopper (sm90) or Blackwell (sm100) GPU" in proc.stderr


def test_ncu_permission_error_is_one_line(tmp_path):
    d = fake_ncu(tmp_path, 'echo "==PROF== Connected to process 9"; echo "==ERROR== ERR_NVGPUCTRPERM - The user does '
                           'not have permission to access NVIDIA GPU Performance Counters on the target device 0." >&2;'
                           ' exit 1')
    cmd = pr.ncu_command(os.path.join(d, "ncu"), [pr.peer_target("cublas")], "512,512,512", [], launch_stats=True)
    with pytest.raises(pr.NcuError) as exc:
        pr.run_ncu(cmd, [pr.peer_target("cublas")], timeout=60)
    msg = str(exc.value)
    assert msg.startswith("ncu: ERR_NVGPUCTRPERM") and "\n" not in msg


def test_ncu_profiling_nothing_and_driver_failure_and_hang(tmp_path):
    t = [pr.peer_target("cublas")]
    d = fake_ncu(tmp_path, 'echo "==WARNING== No kernels were profiled."')
    with pytest.raises(pr.NcuError, match="profiled no kernel"):
        pr.run_ncu(pr.ncu_command(os.path.join(d, "ncu"), t, "8,8,8", [], False), t, timeout=60)
    d2 = fake_ncu(tmp_path / "b", f'echo "{pr.DRIVER_TAG} cublas failed: RuntimeError: CUDA error" >&2; exit 1')
    with pytest.raises(pr.NcuError, match="driver failed: cublas failed: RuntimeError"):
        pr.run_ncu(pr.ncu_command(os.path.join(d2, "ncu"), t, "8,8,8", [], False), t, timeout=60)
    d3 = fake_ncu(tmp_path / "c", "sleep 30")
    with pytest.raises(pr.NcuError, match="did not finish within 1 s"):
        pr.run_ncu(pr.ncu_command(os.path.join(d3, "ncu"), t, "8,8,8", [], False), t, timeout=1)


def test_query_failure_is_one_line(tmp_path):
    d = tmp_path / "q"
    d.mkdir()
    (d / "ncu").write_text('#!/bin/sh\necho "==ERROR== the query needs a supported GPU" >&2\nexit 1\n')
    (d / "ncu").chmod(0o755)
    with pytest.raises(pr.NcuError, match=r"query-metrics failed \(exit 1\): the query needs a supported GPU"):
        pr.available_metrics(str(d / "ncu"))


@pytest.fixture
def recorded_doc(tmp_path):
    """run_profile end to end over the fake ncu replaying the recorded cuBLAS kernel."""
    d = fake_ncu(tmp_path, f"cat '{tmp_path / 'raw.csv'}'")
    entries = [registry.get("sm90", "5"), registry.get("sm90", "6")]
    warned = []
    doc = pr.run_profile(entries, "1024,1024,1024", peers=("cublas",), ncu=os.path.join(d, "ncu"), warn=warned.append)
    return doc, warned


def test_run_profile_over_recorded_output(recorded_doc):
    doc, warned = recorded_doc
    assert doc["schema"] == pr.SCHEMA and doc["ncu_version"] == "2025.3.1.0"
    assert doc["shape"] == {"m": 1024, "n": 1024, "k": 1024} and warned == [] and doc["missing_metrics"] == []
    (k,) = doc["kernels"]
    assert k["label"] == "cublas" and k["values"]["duration"] == 7712.0
    assert k["metrics"]["launch__registers_per_thread"] == 168
    # phases 5 and 6 were asked for, but the replayed report holds only cuBLAS's kernel
    assert set(doc["not_profiled"]) == {"sm90:5", "sm90:6"}
    assert "Sm90Phase5" in doc["not_profiled"]["sm90:5"]
    assert "--metrics" in doc["ncu_command"] and "launch__registers_per_thread" not in doc["ncu_command"]
    # asked for, in this ncu's list, yet not in the replayed report: named, and n/a in the table
    assert doc["not_reported"] == BANK_CONFLICTS
    assert f"not in ncu's report (n/a above): {', '.join(BANK_CONFLICTS)}" in tables.render_doc(doc)


def test_run_profile_skips_shapes_a_phase_cannot_do(tmp_path):
    d = fake_ncu(tmp_path, f"cat '{tmp_path / 'raw.csv'}'")
    doc = pr.run_profile([registry.get("sm90", "5")], "1000,3001,520", peers=(), ncu=os.path.join(d, "ncu"))
    assert doc["kernels"] == [] and "ncu_command" not in doc  # nothing to run: ncu never profiled
    assert "not a multiple" in doc["not_profiled"]["sm90:5"]


def test_json_round_trip_through_from(recorded_doc, tmp_path):
    doc, _ = recorded_doc
    path = tmp_path / "prof.json"
    pr.save(doc, str(path))
    saved = json.loads(path.read_text())
    assert "raw_csv" not in saved and (tmp_path / "prof.ncu.csv").read_text().startswith("==WARNING==")
    assert pr.load(str(path))["kernels"] == json.loads(json.dumps(doc["kernels"]))
    proc = run_module("--from", str(path), "--markdown", path=str(tmp_path))  # no ncu on PATH: not needed
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "Nsight Compute 2025.3.1.0" in out and "1024x1024x1024" in out
    assert "duration (us)" in out and "7.71" in out and "long_scoreboard 45%" in out and "168" in out
    assert "not profiled: sm90:5" in out
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schema": "cute-gemm/run-v1"}))
    proc = run_module("--from", str(bad), path=str(tmp_path))
    assert proc.returncode == 2 and "not a profile" in proc.stderr
    proc = run_module("--from", str(tmp_path / "missing.json"), path=str(tmp_path))
    assert proc.returncode == 2 and proc.stderr.strip().count("\n") == 0 and "cannot read" in proc.stderr


def test_profile_arguments():
    import argparse

    from cute_gemm.cli.commands import profile as profile_command

    ap = argparse.ArgumentParser(prog="cute-gemm")
    profile_command.add_arguments(ap.add_subparsers(dest="cmd").add_parser("profile"))
    args = ap.parse_args(["profile", "--phase", "0-2b", "--shape", "512,512,512", "--peers", "none", "--json", "x.json"])
    assert str(args.shape) == "512x512x512" and args.phase == ["0", "1", "2a", "2b"] and args.json == "x.json"
    assert args.peers == [] and pr.parse_peers("cublas,cuBLASLt") == ["cublas", "cublaslt"]
    with pytest.raises(ValueError, match="unknown peer"):
        pr.parse_peers("rocblas")


# --------------------------------------------------------------------------- deltas / moved most
def _kernel(base, label, **changes):
    k = copy.deepcopy(base)
    k["label"] = label
    for key, v in changes.items():
        if key in nm.STALL_REASONS:
            k["stalls"][key] = v
        else:
            k["values"][key] = v
    return k


def test_profile_deltas(cublas_kernel):
    a = _kernel(cublas_kernel, "sm90:4", duration=8000.0, tensor_pipe=40.0)
    b = _kernel(cublas_kernel, "sm90:5", duration=6000.0, tensor_pipe=60.0, long_scoreboard=0.0)
    d = {key: (va, vb, ch) for key, va, vb, ch in pr.profile_deltas(a, b)}
    assert d["duration"] == (8000.0, 6000.0, pytest.approx(-0.25))
    assert d["tensor_pipe"][2] == pytest.approx(0.5)
    assert d["conflicts_ld"] == (None, None, None)
    assert d["stall:long_scoreboard"][1] == 0.0 and d["stall:long_scoreboard"][2] == pytest.approx(-1.0)
    assert "stall:wait" in d  # in b's top three now that long_scoreboard is gone
    text = tables.render_deltas(a, b)
    assert "phase 4" in text.splitlines()[0] and "-25.0%" in text and "+50.0%" in text


def test_moved_most_and_its_floors(cublas_kernel):
    base = _kernel(cublas_kernel, "x", conflicts_ld=0.0, conflicts_st=0.0)
    k0 = _kernel(base, "sm90:0", tensor_pipe=40.0)
    k1 = _kernel(base, "sm90:1", tensor_pipe=60.0, conflicts_ld=4000.0)  # tensor +50% beats 0 -> 4,000 (0.4 of floor 1e4)
    k2 = _kernel(k1, "sm90:2a", long_scoreboard=0.5)  # long_scoreboard share 45% -> 7%
    k3 = _kernel(k2, "sm90:2b", dram=2.0)  # 11.45 -> 2: -83%, the largest move of this step
    steps = pr.moved_most([k0, k1, k2, k3])
    assert [s["counter"] for s in steps] == ["tensor_pipe", "stall:long_scoreboard", "dram"]
    assert steps[0]["before"] == 40.0 and steps[0]["after"] == 60.0 and steps[0]["change"] == pytest.approx(0.5)
    assert steps[2]["change"] == pytest.approx(2.0 / 11.45 - 1)
    md = tables.render_moved_markdown([k0, k1, k2, k3, _kernel(k3, "cublas")])
    lines = md.splitlines()
    assert lines[0].startswith("| step |") and len(lines) == 2 + 3  # header, rule, one row per step; cuBLAS left out
    assert "| 0 → 1 |" in lines[2] and "tensor pipe (% elapsed): 40.0 → 60.0 (+50%)" in lines[2]
    assert "stall share, long_scoreboard: 45% → 7% (-84%)" in lines[3]


@pytest.mark.gpu
@pytest.mark.skipif(shutil.which("ncu") is None, reason="needs ncu on PATH")
def test_profile_phase5_and_cublas_on_gpu(tmp_path):
    fam = gpu_family()
    doc = pr.run_profile([registry.get(fam, "5")], "1024,1024,1024", peers=("cublas",))
    labels = [k["label"] for k in doc["kernels"]]
    assert labels == [f"{fam}:5", "cublas"], doc["not_profiled"]
    for k in doc["kernels"]:
        assert k["values"]["duration"] > 0 and k["values"]["registers"] > 0 and len(pr.top_stalls(k)) == 3
    durations = pr.ncu_kernel_durations(["5"], "1024,1024,1024")
    assert set(durations) == {f"{fam}:5", "cublas"} and all(v > 0 for v in durations.values())
