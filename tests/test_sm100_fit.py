"""Phase 7's (and 6's) cluster count comes from what fits: at plan time on a GPU, the persistent phases'
(sm100's, and sm90's: the last test) ``sm_count`` left at its default becomes the cluster's CTAs x
``cudaOccupancyMaxActiveClusters`` (``plan.max_active_clusters``, the DSL's ``HardwareInfo``); compiled without a
GPU the documented default
stays (148: a B200's SMs, 74 pairs / 37 clusters of 4, an upper bound). No GPU here: the query is
mocked, and what is checked is the plan's arithmetic and that the compile key (the config) changes only
when the field does."""

import dataclasses

import pytest

from cute_gemm.runtime import cache, plan, registry


def _query(answers: dict, calls: list):
    def query(cluster_ctas, device):
        calls.append((cluster_ctas, device))
        return answers.get(cluster_ctas)
    return query


@pytest.fixture
def gpu(monkeypatch):
    """A mocked GPU: clusters of 2 and 4 that fit (a B200-like 74 pairs, 34 clusters of 4)."""
    calls: list = []
    monkeypatch.setattr(plan, "max_active_clusters", _query({2: 74, 4: 34}, calls))
    return calls


def test_the_persistent_grids_fill_what_fits(gpu):
    e6, e7 = registry.get("sm100", "6"), registry.get("sm100", "7")
    assert plan.fitted_config(e7, None, 0).sm_count == 4 * 34  # 34 clusters of 4, not 37
    assert plan.fitted_config(e6, None, 0).sm_count == 148  # 74 pairs fit: the same config as compiled without one
    assert gpu == [(4, 0), (2, 0)]
    fitted = registry.get("sm100", "7").make(plan.fitted_config(e7, None, 0))
    assert fitted.grid(4096, 4096, 4096) == (136, 1, 1) and fitted.config_problems() == []


def test_without_a_gpu_the_documented_default_stays(gpu):
    e7 = registry.get("sm100", "7")
    assert e7.default_config().sm_count == 148 and registry.get("sm100", "6").default_config().sm_count == 148
    assert plan.fitted_config(e7, None, -1) is None
    assert gpu == [], "no query without a GPU"


def test_a_chosen_sm_count_other_phases_and_a_failed_query_are_kept(monkeypatch, gpu):
    e7 = registry.get("sm100", "7")
    mine = dataclasses.replace(e7.default_config(), sm_count=96)
    assert plan.fitted_config(e7, mine, 0) is mine
    for key in ("sm100:5", "sm100:9", "sm90:5", "sm90:9"):  # no persistent grid: nothing to fit
        e = registry.resolve(key, "sm100")
        assert plan.fitted_config(e, None, 0) is None, key
    assert gpu == []
    monkeypatch.setattr(plan, "max_active_clusters", lambda ctas, device: None)
    assert plan.fitted_config(e7, None, 0) is None


def test_the_compile_key_changes_only_with_the_field(monkeypatch, gpu):
    """compile_plan on a GPU compiles (and caches) the fitted config: the disk-cache name is that of the
    config, so it equals compile_only's (no GPU) exactly when the GPU holds all 148 SMs' clusters."""
    compiled = []

    class Fake:
        fn = object()

    def fake_compile(kernel, target, **kw):
        compiled.append(kernel.cfg)
        return Fake()

    monkeypatch.setattr("cute_gemm.runtime.compile.compile_kernel", fake_compile)
    monkeypatch.setattr(cache, "enabled", lambda: False)
    e6, e7 = registry.get("sm100", "6"), registry.get("sm100", "7")
    p7 = plan.compile_plan(e7, "sm_100a", 0)
    p6 = plan.compile_plan(e6, "sm_100a", 0)
    assert [c.sm_count for c in compiled] == [136, 148]
    assert p7.kernel.cfg.sm_count == 136 and p6.kernel.cfg == e6.default_config()
    name = lambda e, cfg: cache.entry_name(e.key, "sm_100a", cfg)  # noqa: E731
    assert name(e6, p6.kernel.cfg) == name(e6, e6.default_config())
    assert name(e7, p7.kernel.cfg) != name(e7, e7.default_config())
    plan.compile_plan(e7, "sm_100a", -1)
    assert compiled[-1] == e7.default_config()


def test_the_query_is_the_dsl_hardware_info(monkeypatch):
    """The real query, on a stand-in for the DSL's HardwareInfo: clusters of the asked size on the asked
    device; a failure keeps the default (None) with a warning."""
    import cutlass.utils

    asked = []

    class Info:
        def __init__(self, device):
            asked.append(device)

        def get_max_active_clusters(self, size):
            return {2: 74, 4: 35}[size]

    class Device:
        def __init__(self, device):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.cuda, "device", Device)
    monkeypatch.setattr(cutlass.utils, "HardwareInfo", Info)
    plan.max_active_clusters.cache_clear()
    try:
        assert plan.max_active_clusters(4, 3) == 35 and asked == [3]
        monkeypatch.setattr(cutlass.utils, "HardwareInfo", None)
        with pytest.warns(RuntimeWarning, match="keeps its default sm_count"):
            assert plan.max_active_clusters(2, 1) is None
    finally:
        plan.max_active_clusters.cache_clear()


def test_sm90_persistent_grids_fit_the_h200_too(monkeypatch):
    """sm90's persistent phases the same way, with the H200's answers (66 pairs, 30 clusters of 4, measured with the
    same query): pairs fill its 132 SMs, so the default config is compiled unchanged; a 2 x 2 cluster (cluster_n=2)
    gets 4 x 30 = 120, where 132 / 4 = 33 clusters would leave 3 for a second wave."""
    calls: list = []
    monkeypatch.setattr(plan, "max_active_clusters", _query({2: 66, 4: 30}, calls))
    e6, e7 = registry.get("sm90", "6"), registry.get("sm90", "7")
    assert plan.fitted_config(e7, None, 0) == e7.default_config()
    two_by_two = dataclasses.replace(e6.default_config(), cluster_n=2)
    fitted = plan.fitted_config(e6, two_by_two, 0)
    assert fitted.sm_count == 120 and e6.config_problems(fitted) == []
    assert e6.make(fitted).schedule(4096, 4096, 4096)[1] == 30 and calls == [(2, 0), (4, 0)]
