"""The sm90 half of the mutation suite (tests/mutants/catalog_sm90.py, report90.py, gpu90.py), without
running it: every planted bug still applies exactly once, the catalog covers the classes it promises,
each mutant's GPU tests exist, and the report and the GPU stage's verdicts are right. Running it:
``python -m tests.mutants --ladder sm90`` (CPU), ``... --gpu`` (H200); docs/sm90_mutants.md."""

import os
import subprocess
import sys

import pytest

from mutants import __main__ as cli
from mutants.catalog_sm90 import (CLUSTER_N_GPU, MULTICAST_GPU, MUTANTS, PDL_GPU, WIDE_GPU, gpu_tests, selector,
                                  substitutions)
from mutants.gpu90 import classify
from mutants.report90 import markdown90, summarize90
from mutants.runner import REPO, Outcome, caught_by, failed_tests

REQUIRED_KINDS = [
    "fence.proxy.async (TMA store)", "fence.proxy.async (cp.async)", "wgmma wait depth", "wgmma.fence",
    "arrive count", "expect_tx bytes", "multicast mask", "cluster barrier (DSMEM)", "DSMEM reduce (ranks)",
    "K range split", "PDL order", "tile coordinate", "raster", "epilogue mapping", "stream-K exchange",
    "swap-AB relabel", "ping-pong turns", "setmaxnreg",
]


@pytest.mark.parametrize("m", MUTANTS, ids=lambda m: m.id)
def test_each_sm90_mutant_applies_exactly_once(m):
    assert m.path.startswith("phases/sm90/"), "sm90 mutants plant bugs in the sm90 kernels"
    with open(os.path.join(REPO, m.path)) as f:
        text = f.read()
    for old, new in substitutions(m):
        assert old and old != new
        assert text.count(old) == 1, f"{m.id}: {old!r} occurs {text.count(old)} times in {m.path}"
        text = text.replace(old, new)
    # its phase's checks, and for a protocol only a non-default config runs (the multicast; three consumer
    # warpgroups and uneven splits: "wide"; the accumulate epilogue's reduce-add: the machine cases of
    # tests/test_accumulate.py; the persistent phases' clusters along N: "along_n"; the fused epilogue held below
    # the slab barriers: "epi_spread", the SASS test's) those cases too
    assert m.checks[-2] == "-k" and m.checks[-1] in (selector(m.phase), f"{selector(m.phase)} or multicast",
                                                     f"{selector(m.phase)} or wide",
                                                     f"{selector(m.phase)} or machine_adds",
                                                     f"{selector(m.phase)} or along_n",
                                                     f"{selector(m.phase)} or epi_spread")


def test_sm90_catalog_covers_the_bug_classes():
    kinds = " | ".join(m.kind for m in MUTANTS)
    missing = [k for k in REQUIRED_KINDS if k not in kinds]
    assert not missing, missing
    assert len(MUTANTS) >= 20 and len({m.id for m in MUTANTS}) == len(MUTANTS)
    assert {m.phase for m in MUTANTS} >= {"1", "2b", "3", "4", "5", "6", "7", "8", "9", "10"}
    fast = [m for m in MUTANTS if m.fast]
    assert 5 <= len(fast) <= 8, "the CI subset of both ladders must stay under 3 minutes"
    for m in fast:  # the subset runs the one check that must kill each (the full run runs them all)
        assert m.fast_checks[0] in m.checks and m.fast_checks[1] == "-k" and selector(m.phase) in m.fast_checks[2]
    # the two races the independent run planted, and no GPU test caught, are in the CI subset
    assert {"store-fence-after-barrier", "release-before-wgmma-wait"} <= {m.id for m in fast}


def test_phase_selectors_pick_one_phase():
    assert selector("1") == "phase1 and not phase10 and not phase11" and selector("10") == "phase10"


def test_every_gpu_test_of_the_catalog_exists():
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                          "tests/test_gpu_phases.py"], cwd=REPO, capture_output=True, text=True).stdout
    collected = {line.strip() for line in out.splitlines()}
    wanted = {t for m in MUTANTS if not m.gpu for t in gpu_tests(m.phase)}
    assert wanted and wanted <= collected, sorted(wanted - collected)[:5]


def test_multicast_mutants_run_the_multicast_configs_on_the_gpu():
    """Phase 10's default cluster_m=1 leaves the multicast lines inert: those mutants' GPU tests are the split/swap
    file's cluster_m configs, and that selection names tests that exist (both phases, 2 and 4 CTAs, with a split)."""
    mc = [m for m in MUTANTS if m.gpu and m.gpu[0] == "tests/test_gpu_split_swap.py"]
    assert len(mc) >= 6 and all(m.gpu in (MULTICAST_GPU, WIDE_GPU) for m in mc)
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *mc[0].gpu],
                         cwd=REPO, capture_output=True, text=True).stdout
    ids = [line for line in out.splitlines() if "::" in line]
    assert len(ids) >= 20 and all("cluster_m" in i for i in ids)
    assert any("cluster_m4" in i and "split_k2" in i for i in ids) and any("[9-" in i for i in ids)


def test_cluster_n_mutants_run_the_clusters_along_n():
    """cluster_n's default 1 leaves its lines inert: those mutants' checks select the machine's cluster_n cases, and
    their GPU tests are the persistent prefill configs with cluster_n=2 (1 x 2 and 2 x 2, phases 6 and 8)."""
    cn = [m for m in MUTANTS if m.id.startswith("clustern-")]
    assert len(cn) >= 5 and all(m.gpu == CLUSTER_N_GPU and m.checks[-1].endswith(" or along_n") for m in cn)
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                          *CLUSTER_N_GPU], cwd=REPO, capture_output=True, text=True).stdout
    ids = [line for line in out.splitlines() if "::" in line]
    assert len(ids) >= 9 and all("cluster_n2" in i for i in ids)
    assert any("[6-" in i for i in ids) and any("[8-" in i for i in ids) and any("cluster_m1" in i for i in ids)
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                          "tests/test_sm90_sim.py", "-k", "along_n"], cwd=REPO, capture_output=True, text=True).stdout
    assert len([line for line in out.splitlines() if "::" in line]) >= 5


def test_pdl_mutants_run_the_chained_launch_test_on_the_gpu():
    """The persistent phases' PDL mutants run the chained-launch test, which exists for phases 6, 7 and 8."""
    pdl = [m for m in MUTANTS if m.gpu == PDL_GPU]
    assert {m.phase for m in pdl} == {"6", "7"}
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *PDL_GPU],
                         cwd=REPO, capture_output=True, text=True).stdout
    assert len([line for line in out.splitlines() if "::" in line]) == 3


def test_caught_by_names_the_kinds_of_check():
    out = ("FAILED tests/test_sm90_sim.py::test_simulation[phase6-x] - AssertionError: ...\n"
           "FAILED tests/test_sm90_ptx_static.py::test_wgmma_fence_before_accumulating[phase6-nn] - ...\n"
           "ERROR tests/test_compile_signatures.py::test_signature_and_resources[sm90:6-sm_90a] - ...\n")
    assert caught_by(out) == ["CPU rule", "PTX machine", "existing CPU test"]
    assert caught_by("1 passed") == []
    assert failed_tests(out) == ["test_simulation", "test_wgmma_fence_before_accumulating", "test_signature_and_resources"]


def test_sm90_report():
    outs = [Outcome("a", "k1", "6", "killed", 3.0, "rule", "sm90", ["CPU rule", "PTX machine"],
                    ["test_wgmma_fence_before_accumulating", "test_simulation"]),
            Outcome("b", "k1", "6", "killed", 3.0, "sim", "sm90", ["PTX machine"]),
            Outcome("c", "k2", "9", "survived", 3.0, "5 passed", "sm90", []),
            Outcome("d", "k2", "9", "survived", 3.0, "5 passed", "sm90", []),
            Outcome("e", "k2", "9", "invalid", 0.0, "occurs 0 times", "sm90", [])]
    s = summarize90(outs)
    assert (s["killed"], s["total"], s["need_gpu"], s["invalid"]) == (2, 4, ["c", "d"], ["e"])
    assert s["by_check"] == {"CPU rule": 1, "PTX machine": 2, "existing CPU test": 0}
    assert s["only_by_check"]["PTX machine"] == 1
    md = markdown90(s, outs[:4], False, {"c": "only a GPU shows it"})
    assert "**CPU checks: 2 of 4 killed** (50%)" in md and "only a GPU shows it" in md
    assert s["by_rule"]["(h) wgmma.fence"] == ["a"] and "| (h) wgmma.fence | `a` |" in md
    assert "| `a` | k1 | 6 | killed | (h) wgmma.fence, PTX machine |" in md
    gpu = {"a": {"status": "killed", "detail": "x"}, "c": {"status": "hang", "detail": "y"},
           "d": {"status": "survived", "detail": ""}}
    s = summarize90(outs, gpu)
    assert s["gpu"]["cpu_and_gpu_killed"] == 3 and s["gpu"]["survivors"] == ["d"]
    assert s["gpu"]["killed_cpu_survivors"] == 1
    md = markdown90(s, outs[:4], False, {}, gpu)
    assert "**CPU and GPU together: 3 of 4** (75%)" in md and "| hang: y |" in md


def test_gpu_verdicts():
    assert classify(0, "8 passed in 9.1s")["status"] == "survived"
    assert classify(1, "FAILED tests/test_gpu_phases.py::test_ragged_shapes[sm90:6-7x264x72] - x\nE   AssertionError: "
                       "12 mismatches\n")["status"] == "killed"
    assert classify(1, "Timeout (0:00:40)!\nThread 0x1 (most recent call first):")["status"] == "hang"
    assert classify(0, "8 skipped in 1.0s")["status"] == "invalid"
    assert classify(5, "no tests ran")["status"] == "invalid"
    # the faulthandler's dump lost to pytest's capture: no result line, rc 1, past the per-test timeout
    assert classify(1, "", 40, 41.0)["status"] == "hang"
    assert classify(1, "", 40, 3.0)["status"] == "invalid"
    assert classify(5, "", 40, 41.0)["status"] == "invalid"


def test_mutant_copies_keep_the_environments_pythonpath(monkeypatch):
    """The H200 carries the DSL on PYTHONPATH: a copy's checks put the copy first and keep the rest."""
    from mutants.runner import copy_env

    monkeypatch.setenv("PYTHONPATH", "/dsl/site")
    monkeypatch.setenv("PYTEST_ADDOPTS", "-x")
    env = copy_env("/tmp/copy", CUTE_GEMM_GPU_TEST_TIMEOUT="40")
    assert env["PYTHONPATH"].split(os.pathsep) == ["/tmp/copy", "/dsl/site"]
    assert "PYTEST_ADDOPTS" not in env and env["CUTE_GEMM_GPU_TEST_TIMEOUT"] == "40"
    monkeypatch.delenv("PYTHONPATH")
    assert copy_env("/tmp/copy")["PYTHONPATH"] == "/tmp/copy"


def test_ladder_arguments():
    assert {m.id for m in cli.select(cli.parse_args(["--ladder", "sm90", "--fast"]))} == \
        {m.id for m in MUTANTS if m.fast}
    both = cli.select(cli.parse_args(["--fast"]))
    assert {getattr(m, "ladder", "sm100") for m in both} == {"sm100", "sm90", "epilogue"}
    assert [m.id for m in cli.select(cli.parse_args(["--ladder", "sm100", "--only", "a-coord-m-zero"]))] == \
        ["a-coord-m-zero"]
    with pytest.raises(SystemExit, match="unknown mutant"):
        cli.select(cli.parse_args(["--ladder", "sm100", "--only", "store-fence-after-barrier"]))
