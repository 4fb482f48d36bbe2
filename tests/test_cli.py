"""The CLI as a new user meets it on a CPU-only machine: help and --version, list, inspect's census, bench's
compile-only fallback, compare without timings, plot from a bench document; and every bad argument or
file answered by ONE line on stderr and a non-zero exit, never a traceback, checked before any GPU is
looked for. Most run in-process (``cli.main``); a few through ``python -m cute_gemm``, including a stdout
closed early."""

import json
import os
import subprocess
import sys

import pytest

from conftest import gpu_family
from cute_gemm import cli
from cute_gemm.measure import results
from synthetic_doc import make_doc

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NO_GPU = pytest.mark.skipif(gpu_family() is not None, reason="CPU-only behaviour")


def cli_proc(*args, check=True, **kw):
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, "-m", "cute_gemm", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600, env=env, **kw)
    if check:
        assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


def run_main(capsys, *args):
    rc = cli.main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


# --------------------------------------------------------------------------------------- the happy paths
@pytest.mark.parametrize("cmd", ["list", "inspect", "run", "bench", "compare", "plot"])
def test_every_command_has_help(cmd, capsys):
    rc, out, _ = run_main(capsys, cmd, "--help")
    assert rc == 0 and "usage: cute-gemm " + cmd in out and len(out) > 200
    assert "{phase_ids" not in out


def test_top_level_help_lists_registered_phases(capsys):
    from cute_gemm.runtime import registry

    rc, out, _ = run_main(capsys, "--help")
    assert rc == 0 and "sm90 only so far" not in out
    for fam in ("sm90", "sm100"):
        ids = " ".join(e.phase for e in registry.all_entries(fam))
        assert f"{fam + ':':<7} {ids}" in out


def test_version(capsys):
    from cute_gemm import __version__

    rc, out, _ = run_main(capsys, "--version")
    assert rc == 0 and out.strip() == f"cute-gemm {__version__}"


def test_list_shows_both_ladders(capsys):
    from cute_gemm.runtime import registry

    rc, out, _ = run_main(capsys, "list")
    assert rc == 0 and "sm90" in out and "sm100" in out
    assert out.count("adds:") == len(registry.all_entries())
    # the tile column never runs into the summary; the cluster is the one the kernel launches (inspect's)
    tiles = {}
    for e in registry.all_entries():
        line = next(ln for ln in out.splitlines() if ln.startswith(f"  {e.phase:<3} ") and ln.endswith(e.summary))
        tiles[e.key] = line[6: -len(e.summary)]
        assert tiles[e.key].endswith("  "), line
        assert (f"cluster {e.cluster_ctas()}" in tiles[e.key]) == (e.cluster_ctas() > 1), line
    assert tiles["sm100:7"].strip() == "256x256x32 NS=6 cluster 4" and "cluster 2" in tiles["sm90:8"]


def test_plot_into_a_directory(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    path = tmp_path / "run.json"
    results.save(make_doc(), str(path))
    for out in (str(tmp_path / "new") + "/", str(tmp_path)):
        rc, stdout, _ = run_main(capsys, "plot", str(path), "--out", out)
        assert rc == 0 and not any(os.path.basename(p).startswith("_") for p in stdout.split())
        for name in ("run_ladder.png", "run_sweep.png"):
            assert os.path.isfile(os.path.join(out, name)), name


def test_inspect_sm100_phase0_census(tmp_path, capsys):
    rc, out, err = run_main(capsys, "inspect", "--arch", "sm100", "--phase", "0", "--dump", str(tmp_path / "d"))
    assert rc == 0 and "sm100:0" in out
    for row in ("tcgen05.mma cta_group::1", "cp.async.cg (16 B)", "fence.proxy.async.shared::cta", "registers",
                "smem_bytes", "tmem_cols"):
        assert row in out, row
    assert "bulk tensor load" not in out  # the census only prints rows some phase has
    assert (tmp_path / "d" / "sm100_phase0.ptx").stat().st_size > 1000
    assert (tmp_path / "d" / "sm100_phase0.cubin").stat().st_size > 1000


def test_inspect_a_config_variant(capsys):
    """A variant compiled without a GPU, beside its phase's default (the column names its overrides)."""
    rc, out, _ = run_main(capsys, "inspect", "--config", "8:bn=128,stages=6")
    head = next(line for line in out.splitlines() if "sm90:8" in line).split()
    assert rc == 0 and head == ["sm90:8", "sm90:8", "bn=128", "stages=6"], head
    assert "sm100:" not in out


def test_inspect_a_config_the_phase_rules_refuse(capsys):
    """The phase's rules (``config_problems``) refuse the config in one line before anything compiles."""
    rc, out, err = run_main(capsys, "inspect", "--phase", "6", "--arch", "sm90", "--config", "6:epi_stages=1")
    assert rc == 2 and out == "" and _one_line(err) == (
        "cute-gemm inspect: --config '6:epi_stages=1': sm90:6 cannot be built with epi_stages=1: epi_stages=1: "
        "epi_stages >= 2 (a slab's buffer is freed while the next one is written)")


def test_inspect_a_config_only_the_compile_refuses(capsys):
    """A config the rules pass but the kernel's compile-time asserts refuse (sm100 phase 6's smem, which only
    the compile knows): the default compiles, the variant is reported as FAILED, exit 1."""
    rc, out, err = run_main(capsys, "inspect", "--phase", "6", "--arch", "sm100", "--config", "6:stages=12")
    assert rc == 1 and "sm100:6" in out
    assert "FAILED to compile sm100:6 stages=12 for sm_100a" in err and "B of smem per CTA" in err


@pytest.mark.parametrize("config,message", [
    ("8:bn=100", "sm90:8 cannot be built with bn=100: bn=100: bn is a multiple of 8 in 8..256"),
    ("7:sm_count=0", "sm90:7 cannot be built with sm_count=0: sm_count=0: a positive integer"),
    ("8:bn=-64", "sm90:8 cannot be built with bn=-64: bn=-64: a positive integer"),
    ("10:bm=256,bn=256", "256 accumulator registers per thread do not fit"),
])
def test_config_values_are_checked_before_the_compiler(config, message, capsys):
    """Issue 49: these reached the compiler (an AssertionError, an empty MLIRError, a DSL ValueError)."""
    rc, out, err = run_main(capsys, "bench", "--arch", "sm90", "--config", config)
    assert rc == 2 and message in _one_line(err) and "Traceback" not in out + err


def test_a_phase_of_one_ladder_without_arch(capsys):
    """`--phase 8` without --arch takes the ladder that has phase 8 (sm90), not the first that lacks it."""
    rc, out, err = run_main(capsys, "inspect", "--phase", "8", "--shape", "256,1024,1024")
    assert rc == 0 and "sm90:8" in out and "sm100:" not in out and "no sm100 kernel" not in err


@NO_GPU
def test_bench_a_phase_of_one_ladder_without_arch(capsys):
    rc, out, err = run_main(capsys, "bench", "--phases", "8", "--shapes", "256,1024,1024")
    assert rc == 0 and "sm90:8" in out and "sm100:" not in out


def test_inspect_other_operands(capsys):
    """Issue 48: inspect compiles the layout and dtypes asked for (an sm100 phase on a CPU too)."""
    rc, out, err = run_main(capsys, "inspect", "--arch", "sm100", "--phase", "5,10", "--layout", "nt", "--dtype",
                            "bf16", "--out-dtype", "bf16", "--json")
    doc = json.loads(out)
    assert rc == 0 and [i["key"] for i in doc["sm_100a"]] == ["sm100:5", "sm100:10"]
    assert {i["operands"] for i in doc["sm_100a"]} == {"nt bf16->bf16"}


def test_compare_other_operands(capsys):
    rc, out, _ = run_main(capsys, "compare", "5", "7", "--layout", "nt", "--dtype", "bf16", "--shape", "1024,4096,4096")
    assert rc == 0 and "generated code at 1024x4096x4096 with nt bf16->fp32 (compile-only):" in out


def test_inspect_other_operands_sm90_table(capsys):
    rc, out, err = run_main(capsys, "inspect", "--arch", "sm90", "--phase", "5", "--layout", "tn", "--dtype", "bf16")
    assert rc == 0 and "== sm_90a at 4096x4096x4096, tn bf16->fp32 (compile-only" in out


def test_list_fields(capsys):
    """Each phase's config fields, default and what its rules allow (probed through ``config_problems``)."""
    import dataclasses

    from cute_gemm.runtime import registry
    from phases.epilogue import EpilogueFields

    rc, out, _ = run_main(capsys, "list", "--fields")
    assert rc == 0
    for e in registry.all_entries():
        assert f"  {e.key}\n" in out
    block = out.split("  sm90:9\n")[1].split("  sm90:10\n")[0]
    rows = {line.split()[0]: line.split(None, 2)[2] for line in block.splitlines() if line.strip()}
    assert rows["split_k"] == "1..8" and rows["cluster_m"] == "1, 2, 4" and rows["use_pdl"] == "true, false"
    block = out.split("  sm90:8\n")[1].split("  sm90:9\n")[0]
    assert "bn                192   64, 128, 192, 256" in block and "bm                128   128" in block
    for fam in ("sm90", "sm100"):  # phase 11: phase 10's fields and the epilogue's, its word field with its words
        block = out.split(f"  {fam}:11\n")[1].split("\n\n")[0]
        rows = {line.split()[0]: line.split(None, 2)[1:] for line in block.splitlines() if line.strip()}
        assert rows["activation"] == ["none", "none, relu, gelu, silu"], block
        assert rows["bias"] == rows["residual"] == ["false", "true, false"], block
        ten = out.split(f"  {fam}:10\n")[1].split(f"  {fam}:11\n")[0]
        epilogue = {f.name for f in dataclasses.fields(EpilogueFields)}
        assert {line.split()[0] for line in ten.splitlines() if line.strip()} == set(rows) - epilogue
        assert rows["gated"] == ["false", "true, false"], block
    # a switch shows the values the rules pass: sm90's persistent phases take the gated pairs, sm100's refuses them
    block7 = out.split("  sm90:7\n")[1].split("  sm90:8\n")[0]
    rows7 = {line.split()[0]: line.split(None, 2)[2] for line in block7.splitlines() if line.strip()}
    assert (rows7["bias"], rows7["gated"], rows7["use_pdl"]) == ("true, false", "true, false", "true, false"), block7
    assert rows7["activation"] == "none, relu, gelu, silu", block7
    block6 = out.split("  sm90:6\n")[1].split("  sm90:7\n")[0]
    rows6 = {line.split()[0]: line.split(None, 2)[2] for line in block6.splitlines() if line.strip()}
    assert (rows6["bias"], rows6["gated"]) == ("true, false", "true, false"), block6
    block100 = out.split("  sm100:6\n")[1].split("  sm100:7\n")[0]
    rows100 = {line.split()[0]: line.split(None, 2)[2] for line in block100.splitlines() if line.strip()}
    assert (rows100["bias"], rows100["gated"]) == ("true, false", "false"), block100


@NO_GPU
def test_bench_without_gpu_compiles_config_variants(capsys):
    rc, out, _ = run_main(capsys, "bench", "--arch", "sm90", "--phases", "8", "--config", "8:bn=128")
    assert rc == 0 and "sm90:8 bn=128" in out


def test_inspect_json(capsys):
    rc, out, _ = run_main(capsys, "inspect", "--arch", "sm90", "--phase", "2b", "--json")
    (ins,) = json.loads(out)["sm_90a"]
    assert rc == 0 and ins["key"] == "sm90:2b" and ins["census"]["setmaxnreg"] > 0


@NO_GPU
def test_bench_without_gpu_falls_back_to_compile_report(capsys):
    rc, out, err = run_main(capsys, "bench", "--arch", "sm100", "--phases", "0,4")
    assert rc == 0 and out.startswith("No GPU to benchmark on (")  # the reason first, with the report
    assert "sm100:0" in out and "sm100:4" in out and "tcgen05.mma cta_group::2" in out
    # it ends with how to read the table and where to go next
    tail = out.rstrip().splitlines()[-6:]
    assert tail[0].startswith("How to read it:") and "spill_bytes" in " ".join(tail)
    assert all(f"cute-gemm {c}" in tail[-2] + tail[-1] for c in ("inspect", "compare", "report"))


@pytest.mark.parametrize("argv,option", [
    (["report", "--out", "/proc/nope.html", "--no-census"], "--out"),
    (["bench", "--arch", "sm90", "--phases", "0", "--out", "/proc/nope.json"], "--out"),
    (["profile", "--json", "/proc/nope.json"], "--json"),
    (["selftest", "--out", "/proc/nope.json"], "--out"),
])
def test_an_unwritable_output_is_refused_before_the_work(argv, option, capsys, monkeypatch):
    """Issue 49: /proc passes a permission check (as root) but takes no new file; found after the work before."""
    from cute_gemm.runtime import compile as compile_mod

    monkeypatch.setattr(compile_mod, "compile_kernel", lambda *a, **k: pytest.fail("compiled first"))
    rc, out, err = run_main(capsys, *argv)
    assert rc == 2 and f"{option}: directory /proc is not writable" in _one_line(err)


@NO_GPU
def test_bench_without_gpu_writes_the_compile_report_to_out(tmp_path, capsys):
    out_path = tmp_path / "sub" / "report.json"
    rc, out, err = run_main(capsys, "bench", "--arch", "sm90", "--phases", "2b", "--shapes", "1024,2048,512",
                            "--out", str(out_path))
    assert rc == 0 and f"wrote {out_path}" in err
    doc = json.loads(out_path.read_text())
    assert doc["schema"] == "cute-gemm/inspect-v1" and doc["shapes"] == ["1024x2048x512"]
    (report,) = doc["reports"]
    assert report["target"] == "sm_90a" and [i["key"] for i in report["phases"]] == ["sm90:2b"]


def test_compare_without_gpu(capsys):
    rc, out, _ = run_main(capsys, "compare", "sm90:4", "sm90:5", "--shape", "1024,4096,4096")
    assert rc == 0 and "config differences" in out and "bulk tensor store" in out and "st.shared" in out
    if gpu_family() is None:
        assert "(no timing: no CUDA GPU is visible to torch)" in out


@pytest.mark.parametrize("fam", ["sm90", "sm100"])
def test_compare_10_11_shows_the_epilogue(fam, capsys):
    """Phase 11's default (no epilogue) is phase 10's kernel; compare compiles its lesson config (bias + gelu), so
    the step shows what it adds: the new fields, the SFU tanh and the bias vector's load, the same mainloop."""
    import dataclasses

    from cute_gemm.runtime import registry
    from phases.epilogue import EpilogueFields

    rc, out, _ = run_main(capsys, "compare", f"{fam}:10", f"{fam}:11", "--shape", "16,4096,4096")
    assert rc == 0
    cfg = out.split("config differences:\n")[1].split("\n\n")[0]
    rows = {line.split()[0]: line.split()[1:] for line in cfg.splitlines()}
    lesson = registry.get(fam, "11").lesson_config()
    assert rows == {f.name: ["-", "->", str(getattr(lesson, f.name))] for f in dataclasses.fields(EpilogueFields)}
    assert rows["bias"][-1] == "True" and rows["activation"][-1] == "gelu"
    table = out.split("(compile-only):\n")[1]
    assert f"{fam}:11 bias=True activation=gelu" in table.splitlines()[0]
    cells = {line.split()[0]: line.split()[-2:] for line in table.splitlines()[1:] if line.strip()}
    assert cells["tanh.approx.f32"][0] == "." and int(cells["tanh.approx.f32"][1]) > 0
    assert cells["ld.global"][0] == "." and int(cells["ld.global"][1]) > 0  # the bias vector, straight to registers
    mma = "wgmma.mma_async" if fam == "sm90" else "tcgen05.mma"
    for row in (mma, "ld.shared::cluster", "cluster", "smem_bytes"):  # the same mainloop, reduce and smem
        assert cells[row][0] == cells[row][1], row


def test_compare_on_a_gpu_says_phase_11_is_timed_without_its_epilogue(capsys, monkeypatch):
    """The timing runs phases as gemm() does by default; where compare compiled a lesson config (phase 11's bias +
    gelu) it says that the timed kernel is the default one and where the epilogue's timing is (a stand-in GPU)."""
    from cute_gemm.cli import steps
    from cute_gemm.cli.commands import compare
    from cute_gemm.report import console

    timed = []

    def fake_time(entries, shapes, args, peers):
        timed.append([e.key for e in entries])
        return {"results": []}

    monkeypatch.setattr(steps, "gpu_target", lambda: "sm_90a")
    monkeypatch.setattr(compare, "time_shapes", fake_time)
    monkeypatch.setattr(console, "render", lambda doc: None)
    rc, out, _ = run_main(capsys, "compare", "10", "11", "--shape", "16,4096,4096", "--no-profile")
    assert rc == 0 and timed == [["sm90:10", "sm90:11"]]
    assert "(timed in the default config: sm90:11 without the config compiled above" in out
    rc, out, _ = run_main(capsys, "compare", "9", "10", "--shape", "16,4096,4096", "--no-profile")
    assert rc == 0 and "timed in the default config" not in out


def test_plot_from_a_bench_document(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    path = tmp_path / "run.json"
    results.save(make_doc(), str(path))
    rc, out, _ = run_main(capsys, "plot", str(path), "--out", str(tmp_path / "figs" / "x"))
    assert rc == 0
    for name in ("x_ladder.png", "x_worklog.png", "x_sweep.png"):
        assert (tmp_path / "figs" / name).stat().st_size > 10_000 and name in out


# ------------------------------------------------------------------------------------------ bad inputs
# id -> (argv, what the one line must say); {tmp} is a directory holding the files the fixture writes
BAD = {
    "plot missing file": (["plot", "{tmp}/missing.json"], "no such file"),
    "plot a directory": (["plot", "{tmp}"], "is a directory"),
    "plot garbage": (["plot", "{tmp}/garbage.json"], "is not JSON"),
    "plot bench-v1": (["plot", "{tmp}/v1.json"], "bench-v1"),
    "plot nothing timed": (["plot", "{tmp}/api.json"], "no timed results"),
    "dump unwritable": (["inspect", "--arch", "sm100", "--phase", "4", "--dump", "/proc/nope"], "--dump"),
    "inspect target vs arch": (["inspect", "--arch", "sm100", "--target", "sm_90a"], "--target sm_90a"),
    "inspect bad target": (["inspect", "--target", "sm_80"], "unknown arch"),
    "inspect config unknown field": (["inspect", "--config", "8:tile=3"], "'tile' is not a field"),
    "inspect config not an int": (["inspect", "--config", "8:bn=wide"], "is not an integer"),
    "inspect ragged phase 0": (["inspect", "--arch", "sm90", "--phase", "0", "--shape", "1000,1024,1024"],
                               "sm90:0 cannot do 1000x1024x1024"),
    "bench shape not numbers": (["bench", "--shapes", "4096,abc"], "4096,abc"),
    "bench shape not positive": (["bench", "--shapes", "0,1,2"], "positive"),
    "bench N not multiple of 8": (["bench", "--shapes", "4096,4100,4096"], "multiples of 8"),
    "bench unknown arch": (["bench", "--arch", "sm80"], "unknown arch 'sm80'"),
    "bench unknown phase": (["bench", "--phases", "0,12"], "unknown phase '12'"),
    "bench rounds 0": (["bench", "--rounds", "0"], "at least 1"),
    "bench rounds text": (["bench", "--rounds", "many"], "whole number"),
    "bench sustained negative": (["bench", "--sustained", "-1"], ">= 0"),
    "bench unknown peer": (["bench", "--peers", "cublas,mkl"], "unknown peer 'mkl'"),
    "bench unknown data": (["bench", "--data", "zeros"], "invalid choice"),
    "bench out is a directory": (["bench", "--out", "{tmp}"], "is a directory"),
    "bench out unwritable": (["bench", "--out", "/proc/nope/x.json"], "cannot create directory"),
    "bench api with sweep": (["bench", "--api", "--sweep"], "drop --sweep"),
    "bench config no fields": (["bench", "--arch", "sm90", "--config", "8"], "expected PHASE:FIELD=VALUE"),
    "bench config unknown field": (["bench", "--arch", "sm90", "--config", "8:tile=3"], "'tile' is not a field"),
    "bench config not an int": (["bench", "--arch", "sm90", "--config", "8:bn=wide"], "is not an integer"),
    "bench config unknown phase": (["bench", "--arch", "sm90", "--config", "12:bn=128"], "unknown phase '12'"),
    "bench config unknown activation": (["bench", "--arch", "sm90", "--config", "11:activation=tanh"],
                                        "sm90:11 cannot be built with activation=tanh: activation='tanh': one of "
                                        "none, relu, gelu, silu"),
    "inspect config unknown activation": (["inspect", "--arch", "sm100", "--config", "11:activation=tanh"],
                                          "sm100:11 cannot be built with activation=tanh"),
    "bench config activation a number": (["bench", "--arch", "sm90", "--config", "11:activation=3"],
                                         "activation=3 is not one of none, relu, gelu, silu"),
    "bench config bias a word": (["bench", "--arch", "sm90", "--config", "11:bias=gelu"],
                                 "bias='gelu' is not a boolean"),
    "bench config phase not on arch": (["bench", "--arch", "sm100", "--config", "8:bn=128"], "no sm100 kernel for phase 8"),
    "run unknown phase": (["run", "--phase", "12"], "unknown phase '12'"),
    "run bad shape": (["run", "--phase", "0", "--shape", "4096,abc"], "4096,abc"),
    "run unknown arch": (["run", "--phase", "0", "--arch", "sm80"], "unknown arch 'sm80'"),
    "run ragged phase 0": (["run", "--phase", "0", "--arch", "sm90", "--shape", "1000,1024,1024"],
                           "sm90:0 cannot do 1000x1024x1024: M=1000"),
    "run json unwritable": (["run", "--phase", "0", "--json", "/proc/nope/r.json"], "--json"),
    "compare unknown phase": (["compare", "2a", "12"], "unknown phase '12'"),
    "compare bad shape": (["compare", "2a", "2b", "--shape", "-5"], "positive"),
    "selftest unknown phase": (["selftest", "--phases", "bogus"], "unknown phase 'bogus'"),
    "selftest phase sm100 lacks": (["selftest", "--phases", "8", "--list"], "no sm100 kernel for phase(s) 8"),
    "selftest negative timeout": (["selftest", "--timeout", "-5"], "the timeout must be at least 1 second, got -5"),
    "profile from the raw ncu csv": (["profile", "--from", "{results}/h200_2026-11-30_profile_4096.ncu.csv.gz"],
                                     "raw Nsight Compute CSV kept beside a profile"),
    "profile from a png": (["profile", "--from", "{results}/h200_2026-11-30_sweep8_bench_ladder.png"],
                           "is a PNG image, not JSON"),
    "profile from a bench result": (["profile", "--from", "{results}/h200_2026-11-30_sweep8_bench.json"],
                                    "is not a profile written by `cute-gemm profile --json`"),
    "profile bad shape": (["profile", "--shape", "1,2,3"], "multiples of 8"),
    "profile unknown phase": (["profile", "--phase", "12"], "unknown phase '12'"),
    "profile unknown peer": (["profile", "--peers", "rocblas"], "unknown peer 'rocblas'"),
    "plot a png": (["plot", "{results}/h200_2026-11-30_sweep8_bench_ladder.png"], "is a PNG image, not JSON"),
    "plot a gzip file": (["plot", "{results}/h200_2026-11-30_profile_4096.ncu.csv.gz"], "is gzip-compressed"),
    "compare a phase with itself": (["compare", "6", "6"], "both sm90:6: name two different phases"),
    "bench unknown layout": (["bench", "--layout", "nx"], "invalid choice: 'nx'"),
    "bench fp32 inputs": (["bench", "--dtype", "fp32"], "invalid choice: 'fp32'"),
    "bench int8 out": (["bench", "--out-dtype", "int8"], "invalid choice: 'int8'"),
    "bench unknown set": (["bench", "--set", "huge"], "no shape set 'huge' (--list-sets lists them)"),
    "bench api with layout": (["bench", "--api", "--layout", "nt"], "drop --layout"),
    "bench api with set": (["bench", "--api", "--set", "small"], "drop --set"),
    "run layout a phase cannot take": (["run", "--phase", "5", "--arch", "sm90", "--layout", "tn", "--shape",
                                        "1,4096,4096"], "sm90:5 cannot do 1x4096x4096 with tn fp16->fp32: M=1"),
    "compare layout a phase cannot take": (["compare", "5", "7", "--layout", "tt", "--shape", "12,4096,4096"],
                                           "cannot do 12x4096x4096 with tt fp16->fp32: M=12"),
    "compare 2 with 2b": (["compare", "2", "2b"], "both sm90:2b"),
    "unknown command": (["frobnicate"], "invalid choice"),
    "unknown option": (["list", "--fast"], "unrecognized arguments: --fast"),
}


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bad")
    (tmp / "garbage.json").write_text("garbage\n")
    (tmp / "v1.json").write_text(json.dumps({"schema": "cute-gemm/bench-v1", "results": []}))
    doc = make_doc()
    doc["results"], doc["api"] = [], {"phases": []}
    results.save(doc, str(tmp / "api.json"))
    return tmp


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_is_one_line(case, bad_files, capsys):
    argv, expect = BAD[case]
    results_dir = os.path.join(ROOT, "bench", "results")
    rc, out, err = run_main(capsys, *(a.format(tmp=bad_files, results=results_dir) for a in argv))
    line = _one_line(err)
    assert rc == 2, (rc, err)
    assert line.startswith("cute-gemm") and expect in line, line
    assert "Traceback" not in out + err


@NO_GPU
@pytest.mark.parametrize("argv,expect", [
    (["bench", "--out", "X.json", "--sweep"], "--sweep applies only to timing on a GPU"),
    (["bench", "--data", "ints", "--rounds", "3"], "--data, --rounds apply only to timing on a GPU"),
    (["bench", "--api"], "--api applies only to timing on a GPU"),
    (["bench", "--layout", "nt", "--dtype", "bf16"], "--layout, --dtype apply only to timing on a GPU"),
    (["bench", "--set", "decode"], "--set applies only to timing on a GPU"),
    (["run", "--phase", "0"], "needs a Hopper (sm90) or Blackwell (sm100) GPU"),
])
def test_gpu_only_requests_refused_without_gpu(argv, expect, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, out, err = run_main(capsys, *argv)
    assert rc == 2 and expect in _one_line(err) and "Traceback" not in out + err
    assert not (tmp_path / "X.json").exists()


def test_unexpected_error_is_one_line_unless_debug(capsys, monkeypatch):
    def boom(args):
        raise RuntimeError("something broke\nsecond line")

    from cute_gemm.cli.commands import list as list_command

    monkeypatch.setattr(list_command, "run", boom)
    rc, out, err = run_main(capsys, "list")
    assert rc == 1 and "Traceback" not in err
    assert _one_line(err) == ("cute-gemm list: unexpected RuntimeError: something broke "
                              "(--debug or CUTE_GEMM_DEBUG=1 shows the traceback)")
    with pytest.raises(RuntimeError):
        cli.main(["list", "--debug"])
    monkeypatch.setenv("CUTE_GEMM_DEBUG", "1")
    with pytest.raises(RuntimeError):
        cli.main(["list"])


def test_a_command_is_one_line_in_COMMANDS(capsys, monkeypatch):
    """The extension point: a module with DESCRIPTION, add_arguments and run, one entry in cli.COMMANDS."""
    import types

    from cute_gemm.cli.args import shape_arg

    hello = types.ModuleType("hello_command")
    hello.DESCRIPTION = "Say hello."
    hello.add_arguments = lambda p: p.add_argument("--shape", type=shape_arg, default="64,64,64")
    hello.run = lambda args: print(f"hello {args.shape}") or 0
    monkeypatch.setitem(sys.modules, "hello_command", hello)
    monkeypatch.setattr(cli, "COMMANDS", (*cli.COMMANDS, cli.Command("hello", "say hello", "hello_command")))
    assert run_main(capsys, "hello")[:2] == (0, "hello 64x64x64\n")
    rc, _, err = run_main(capsys, "hello", "--shape", "64,60,64")
    assert rc == 2 and "multiples of 8" in _one_line(err)


# --------------------------------------------------------------------------------- through a subprocess
def test_subprocess_bad_file_and_version():
    proc = cli_proc("plot", "missing.json", check=False)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == "cute-gemm plot: missing.json: no such file\n"
    assert cli_proc("--version").stdout.startswith("cute-gemm ")


def test_closed_stdout_is_quiet():
    """`cute-gemm list | head -1`: the reader goes away before the output is written."""
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen([sys.executable, "-m", "cute_gemm", "list"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # closed before the interpreter has even started: every write hits a closed pipe
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) in (0, 141)
    assert err == ""


def test_pipe_into_head():
    proc = subprocess.run(f"{sys.executable} -m cute_gemm list | head -1", shell=True, cwd=ROOT, text=True,
                          capture_output=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")})
    assert proc.returncode == 0 and proc.stdout.startswith("sm90 (") and proc.stdout.count("\n") == 1
    assert "Traceback" not in proc.stderr and "Error" not in proc.stderr
