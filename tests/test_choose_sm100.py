"""``phase="best"`` on sm100 (issue 48): phases 6, 7, 9 and 10 ranked by sm90's time model with datasheet constants,
every row marked unfitted, no candidate the kernel's compile refuses, and one warning on first use. CPU only."""

import dataclasses
import warnings

import pytest

from cute_gemm.runtime import choose, machines, registry
from cute_gemm.runtime.compile import compile_kernel
from phases.operands import Operands


def test_the_sm100_model_is_the_datasheets_and_says_it_is_unfitted():
    mc = choose.machine("sm100")
    assert not mc.fitted and choose.machine("sm90") is choose.MACHINE and choose.MACHINE.fitted
    sheet = machines.DATASHEETS["B200"]
    assert (sheet.sms, sheet.hbm_tb_per_s, sheet.dense_fp16_tflop_per_s) == (148, 8.0, 2250.0)
    # without a GPU: a B200's 148 SMs, 8 TB/s, 2.25 PFLOP/s over its SMs per SM
    assert (mc.sms, mc.gpu, mc.hbm_bytes_per_us) == (148, "B200", 8.0e6)
    assert mc.mma_flop_per_us == pytest.approx(2250e12 / 148 / 1e6)
    assert dict(mc.clusters_that_fit)[2] == 74 and dict(mc.clusters_that_fit)[4] == 30 * 148 // 132
    # the shape of the formula stays the H200's fit
    assert (mc.overlap, mc.swap_factor, mc.launch_us) == (choose.MACHINE.overlap, choose.MACHINE.swap_factor,
                                                           choose.MACHINE.launch_us)
    for row in choose.explain("sm100", 16, 4096, 4096):
        assert row["fitted"] is False
    assert all(r["fitted"] for r in choose.explain("sm90", 16, 4096, 4096))


def test_the_device_sets_the_sm_count_and_the_clusters(monkeypatch):
    """On an sm100 GPU the SM count and the co-resident clusters are the driver's; the rate per SM the datasheet's."""
    sheet = machines.datasheet("NVIDIA B300 SXM6 AC")
    assert sheet.name == "B300" and "160" in sheet.uncertain
    assert machines.datasheet(None).name == machines.datasheet("NVIDIA H200").name == "B200"
    mc = choose.sm100_machine(sheet, 160, ((1, 160), (2, 80), (4, 36)))
    assert (mc.sms, choose.clusters_that_fit(4, mc), choose.clusters_that_fit(3, mc)) == (160, 36, 36)
    assert mc.mma_flop_per_us == pytest.approx(sheet.dense_fp16_tflop_per_s * 1e6 / sheet.sms)
    monkeypatch.setattr(machines, "sm100_device", lambda: ("NVIDIA B300", 160, ()))
    choose.machine.cache_clear()
    try:
        assert choose.machine("sm100").sms == 160 and choose.machine("sm100").gpu == "B300"
    finally:
        monkeypatch.undo()
        choose.machine.cache_clear()
    assert choose.machine("sm100").sms == 148


@pytest.mark.parametrize("shape,phases", [
    ((1, 4096, 4096), {"10"}),  # decode: the weights stream through the swapped tile
    ((16, 14336, 4096), {"10"}),
    ((4096, 4096, 4096), {"6", "7"}),  # big: the persistent pair tiles
    ((8192, 8192, 8192), {"6", "7"}),
])
def test_best_ranks_phases_6_7_9_10(shape, phases):
    rows = choose.explain("sm100", *shape)
    assert rows[0]["phase"] in phases, [(r["label"], round(r["cost"], 1)) for r in rows[:4]]
    if shape[0] <= 512:
        assert {r["phase"] for r in rows} == {"6", "7", "9", "10"}


def test_a_split_and_token_tiles_as_the_phases_take_them():
    cands = choose.sm100_split_candidates(300, 4096, 8192)
    tens = [o for p, o in cands if p == "10"]
    assert {o["bn"] for o in tens} == {160, 112}  # 300 tokens in two tiles of 160 or three of 112 (multiples of 16)
    assert {o["split_k"] for o in tens} == set(choose.SM100_SPLITS)
    nines = [o for p, o in cands if p == "9"]
    assert {o["split_k"] for o in nines} == {1, 2, 4, 8}  # 128 rows split evenly
    for p, o in cands:
        assert o["ctas_per_sm"] == 1 and o["stages"] == choose._sm100_stages(o["bn"], o["bk"], 1)
    # a k-tile per rank at least: K = 128 holds 2 k-tiles of 64, 1 of 128
    assert max(o["split_k"] for p, o in choose.sm100_split_candidates(16, 4096, 128)) == 2


@pytest.mark.parametrize("ops", [None, Operands.of("tt", "bf16", "bf16"), Operands.of("tn", "fp16", "fp16")])
@pytest.mark.parametrize("shape", [(1, 4096, 4096), (104, 8192, 2048), (240, 4096, 14336), (300, 5120, 5120),
                                   (2048, 1024, 512)])
def test_no_row_is_one_the_phase_refuses(shape, ops):
    """Every row passes the phase's own checks: ``can_implement``, ``config_problems`` and the compile's asserts as
    ``sm100_build_problems`` reads them (the split of C's lines: phase 10's 3 and 6 only over token tiles of 48k)."""
    for row in choose.explain("sm100", *shape, ops):
        entry = registry.get("sm100", row["phase"])
        kern = entry.make(row["config"], ops)
        assert not kern.can_implement(*shape) and not entry.config_problems(row["config"])
        assert not choose.sm100_build_problems(kern)
        if row["phase"] == "10" and row["config"].split_k in (3, 6):
            assert row["config"].bn % 48 == 0


def _compile(phase, **over):
    entry = registry.get("sm100", phase)
    kern = entry.make(dataclasses.replace(entry.default_config(), **over))
    why = choose.sm100_build_problems(kern)
    try:
        compile_kernel(kern, "sm_100a")
        refused = None
    except AssertionError as exc:
        refused = str(exc)
    return why, refused


@pytest.mark.parametrize("bn,bk", [(16, 128), (256, 64), (208, 64)])
def test_the_build_rules_are_the_compiles_at_the_edge(bn, bk):
    """The deepest ring ``_sm100_stages`` allows compiles; one stage more is refused by the rules and the compile
    alike (smem per SM), and the rules say why in the compile's words."""
    stages = choose._sm100_stages(bn, bk, 1)
    assert _compile("9", bn=bn, bk=bk, stages=stages) == ([], None)
    why, refused = _compile("9", bn=bn, bk=bk, stages=stages + 1)
    assert why and refused and why[0].split(", not")[0] in refused


def test_the_partial_tile_rule_is_the_compiles():
    why, refused = _compile("9", bn=256, bk=64, stages=2)
    assert "partial tile" in why[0] and "partial tile must fit" in refused
    assert _compile("10", bn=48, split_k=3) == ([], None)  # 48 token lines over 3 ranks
    why = choose.sm100_build_problems(registry.get("sm100", "10").make(
        dataclasses.replace(registry.get("sm100", "10").default_config(), split_k=3)))
    assert "16 lines do not split evenly over split_k=3" in why[0]


def test_first_use_of_an_unfitted_model_warns_once():
    choose._WARNED.clear()
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        assert choose.warn_unfitted("sm100", "NVIDIA B200") is True
        assert choose.warn_unfitted("sm100", "NVIDIA B200") is False  # once
        assert choose.warn_unfitted("sm90", "NVIDIA H200") is False  # fitted: nothing to say
    assert len(got) == 1 and issubclass(got[0].category, RuntimeWarning)
    text = str(got[0].message)
    assert "unfitted" in text and "cute-gemm tune --set decode" in text and "cute-gemm tune --set prefill" in text
    choose._WARNED.clear()


def test_the_best_path_warns_through_plan(monkeypatch):
    """``plan._pick_best`` (what ``gemm(phase="best")`` calls) warns on a model pick of an unfitted arch."""
    from cute_gemm.runtime import plan
    from cute_gemm.runtime.problem import Problem

    class FakeTensor:
        device = "cuda:0"

        def get_device(self):
            return 0

    monkeypatch.setitem(plan._FAMILY, 0, ("sm100", "NVIDIA B200"))
    seen = []
    monkeypatch.setattr(choose, "warn_unfitted", lambda arch, gpu: seen.append((arch, gpu)))
    phase, cfg = plan._pick_best(FakeTensor(), None, None, Problem(16, 4096, 4096), Operands())
    assert phase == choose.pick("sm100", 16, 4096, 4096, Operands())[0] and seen == [("sm100", "NVIDIA B200")]


def test_bench_best_row_says_unfitted(monkeypatch):
    """``cute-gemm bench``'s best row: an sm100 model pick is labelled '... unfitted' and carries model='unfitted';
    sm90's fitted picks carry no such field."""
    from cute_gemm.measure import check, shape
    from cute_gemm.runtime import plan
    from cute_gemm.runtime.problem import Problem

    monkeypatch.setattr(check, "check_phase", lambda e, p, cfg=None, **kw: check.CheckResult(
        key=e.key, shape=str(p), passed=True, unwritten=0, mismatches=0, max_abs_err=0.0, rel_fro_err=0.0,
        cublaslt_rel_fro_err=0.0))
    monkeypatch.setattr(plan, "device_name", lambda device: None)
    rows = {arch: shape.check_phases([], Problem(16, 4096, 4096), best_arch=arch).rows[0] for arch in ("sm100", "sm90")}
    assert rows["sm100"]["label"].endswith(" unfitted)") and rows["sm100"]["model"] == "unfitted"
    assert "unfitted" not in rows["sm90"]["label"] and "model" not in rows["sm90"]
